/* The on-disk cache of MLIR lowerings (see mlir_cache.h) and hg_mlir_to_ptx, the lowering
 * that consults it. Keys and where entries go are this cache's; the hash, the directory, the
 * checked entry format and the atomic write are every cache's (cachefile.c). */
#include "emit/mlir_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emit/ir.h"
#include "emit/mlir.h"

/* ---------------------------------------------------------------- keys */

#define SEED_TEXT UINT64_C(0x6D6C69722D747874) /* "mlir-txt" */
#define SEED_KEY UINT64_C(0x6D6C69722D6B6579)  /* "mlir-key" */
#define SEED_SUM UINT64_C(0x6D6C69722D73756D)  /* "mlir-sum" */

static const hg_cache_format_t format = {"hopgen-mlir-ptx", HG_MLIR_CACHE_FORMAT, SEED_SUM,
                                         HG_MLIR_CACHE_MAX_ENTRY_BYTES};

hg_mlir_key_t hg_mlir_cache_key(const char *mlir, size_t len) {
  /* Everything besides the text that changes the PTX it lowers to, then the text. */
  return hg_cache_key_make(SEED_TEXT, SEED_KEY, mlir, len,
                           "hopgen-mlir-ptx|format=%d|lower=%s|pipeline=%s|", HG_MLIR_CACHE_FORMAT,
                           hg_mlir_lower_version(), hg_mlir_pipeline());
}

/* ---------------------------------------------------------------- locations */

void hg_mlir_cache_at(hg_mlir_cache_t *c, const char *dir) {
  hg_cache_dir_at(c, dir);
}

/* The runtime's cubins live in the same directory, so carrying it carries both. */
void hg_mlir_cache_from_env(hg_mlir_cache_t *c) {
  hg_cache_dir_from_env(c);
}

void hg_mlir_cache_path(const hg_mlir_cache_t *c, const hg_mlir_key_t *key, char *buf,
                        size_t size) {
  hg_cache_entry_path(c, "mlir-", key, ".ptx", buf, size);
}

/* ---------------------------------------------------------------- entries */

hg_status_t hg_mlir_cache_store(const hg_mlir_cache_t *c, const hg_mlir_key_t *key, const char *ptx,
                                size_t len) {
  if (!c->enabled) return hg_ok();
  if (!ptx) return hg_error(HG_ERR_INVALID, "hg_mlir_cache_store: ptx is NULL");
  char path[600];
  hg_mlir_cache_path(c, key, path, sizeof path);
  return hg_cache_entry_store(c, path, &format, key, ptx, len);
}

hg_cache_result_t hg_mlir_cache_lookup(const hg_mlir_cache_t *c, const hg_mlir_key_t *key,
                                       hg_text_t *ptx, char *why, size_t why_size) {
  *ptx = (hg_text_t){0};
  char path[600], *data = NULL;
  size_t len = 0;
  hg_mlir_cache_path(c, key, path, sizeof path);
  hg_cache_result_t r = hg_cache_entry_load(c, path, &format, key, &data, &len, why, why_size);
  if (r == HG_CACHE_HIT && strlen(data) != len) {
    /* whole and under this key, yet not text: no PTX has a NUL byte */
    free(data);
    unlink(path);
    if (why && why_size)
      snprintf(why, why_size,
               "the cache entry %s was damaged and has been deleted: its PTX "
               "holds a NUL byte",
               path);
    return HG_CACHE_CORRUPT;
  }
  ptx->data = data;
  ptx->len = len;
  return r;
}

void hg_mlir_cache_remove(const hg_mlir_cache_t *c, const hg_mlir_key_t *key) {
  if (!c->enabled) return;
  char path[600];
  hg_mlir_cache_path(c, key, path, sizeof path);
  unlink(path);
}

/* ---------------------------------------------------------------- the kernel's name */

static bool name_char(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
         ch == '_' || ch == '$' || ch == '.';
}

/* After "@name": skip the balanced argument list; true when the function is a kernel (an
 * `attributes {...}` dictionary naming nvvm.kernel, or gpu.func's `kernel` keyword). */
static bool is_kernel_signature(const char *p) {
  while (*p == ' ') p++;
  if (*p != '(') return false;
  int depth = 0;
  for (; *p; p++) {
    if (*p == '(') depth++;
    if (*p == ')' && --depth == 0) break;
  }
  if (!*p) return false;
  p++;
  while (*p == ' ' || *p == '\n' || *p == '\t') p++;
  if (!strncmp(p, "kernel", 6) && !name_char(p[6])) return true;
  if (strncmp(p, "attributes", 10) != 0) return false;
  p += 10;
  while (*p == ' ' || *p == '\n' || *p == '\t') p++;
  if (*p != '{') return false;
  const char *end = strchr(p, '}');
  const char *k = strstr(p, "nvvm.kernel");
  return k && end && k < end;
}

bool hg_mlir_kernel_name(const char *mlir, char *name, size_t size) {
  for (const char *p = mlir; (p = strstr(p, "func @")) != NULL; p += 6) {
    const bool llvm = p - mlir >= 5 && !strncmp(p - 5, "llvm.", 5);
    const bool gpu = p - mlir >= 4 && !strncmp(p - 4, "gpu.", 4);
    if (!llvm && !gpu) continue;
    const char *s = p + 6, *e = s;
    while (name_char(*e)) e++;
    if (e == s || (size_t)(e - s) >= size || !is_kernel_signature(e)) continue;
    memcpy(name, s, (size_t)(e - s));
    name[e - s] = '\0';
    return true;
  }
  return false;
}

/* ---------------------------------------------------------------- hg_mlir_to_ptx */

/* Per thread, so that concurrent lowerings (a threaded caller) never see each other's note;
 * fixed size, so that reading it needs no ownership rules. */
static _Thread_local char cache_note[768];

const char *hg_mlir_cache_note(void) {
  return cache_note;
}

static void note(const char *fmt, const char *a, const char *b) {
  snprintf(cache_note, sizeof cache_note, fmt, a, b);
}

hg_status_t hg_mlir_to_ptx(const char *mlir, hg_text_t *ptx) {
  cache_note[0] = '\0';
  if (!ptx) return hg_error(HG_ERR_INVALID, "hg_mlir_to_ptx: ptx is NULL");
  *ptx = (hg_text_t){0};
  if (!mlir) return hg_error(HG_ERR_INVALID, "hg_mlir_to_ptx: the MLIR text is NULL");
  char name[HG_IR_MAX_NAME];
  if (!hg_mlir_kernel_name(mlir, name, sizeof name))
    return hg_error(HG_ERR_INVALID,
                    "hg_mlir_to_ptx: the MLIR text has no kernel (an llvm.func with "
                    "attributes {nvvm.kernel}, as hg_emit_mlir prints, or a gpu.func ... kernel)");
  char entry[HG_IR_MAX_NAME + 16];
  snprintf(entry, sizeof entry, ".entry %s(", name);

  hg_mlir_cache_t c;
  hg_mlir_cache_from_env(&c);
  const hg_mlir_key_t key = hg_mlir_cache_key(mlir, strlen(mlir));
  char path[600] = "", why[700] = "";
  if (c.enabled) {
    hg_mlir_cache_path(&c, &key, path, sizeof path);
    const hg_cache_result_t r = hg_mlir_cache_lookup(&c, &key, ptx, why, sizeof why);
    if (r == HG_CACHE_HIT && strstr(ptx->data, entry)) return hg_ok();
    if (r == HG_CACHE_HIT) {
      /* under this very key, yet not this kernel's PTX: a hand-made file; not to be used,
       * and the store below replaces it */
      hg_text_free(ptx);
      snprintf(why, sizeof why, "the cache entry %s holds no '%s' and has been replaced", path,
               entry);
    }
    if (why[0]) note("%s%s", why, "");
  } else {
    note("the MLIR lowering cache is off: %s%s", c.why_disabled, "");
  }

  bool tool_missing = false;
  hg_status_t s = hg_mlir_lower_run(mlir, name, ptx, &tool_missing);
  if (tool_missing) {
    /* Say both: no tool here, and no lowering carried over from a machine that has one. */
    char where[800];
    if (!c.enabled)
      snprintf(where, sizeof where, "the lowering cache is off: %s", c.why_disabled);
    else if (why[0])
      snprintf(where, sizeof where, "%s", why);
    else
      snprintf(where, sizeof where, "no %s", path);
    return hg_error(HG_ERR_TOOL,
                    "%s; and there is no cached lowering for this kernel ('%s'; %s): lower it on "
                    "a machine with mlir-22-tools with the same HOPGEN_CACHE_DIR and carry the "
                    "directory",
                    s.msg, name, where);
  }
  if (!hg_is_ok(&s) || !c.enabled) return s;
  hg_status_t w = hg_mlir_cache_store(&c, &key, ptx->data, ptx->len);
  if (!hg_is_ok(&w)) {
    char first[700];
    snprintf(first, sizeof first, "%s", cache_note);
    snprintf(cache_note, sizeof cache_note, "%s%sthe lowering of '%s' was not cached: %s", first,
             first[0] ? "; " : "", name, w.msg);
  }
  return hg_ok();
}
