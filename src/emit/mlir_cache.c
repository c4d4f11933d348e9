/* The on-disk cache of MLIR lowerings (see mlir_cache.h) and hg_mlir_to_ptx, the lowering
 * that consults it. Keys and the entry format are this cache's; the hash, the directory and
 * the atomic write are every cache's (cachefile.c). Plain POSIX file calls. */
#include "emit/mlir_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emit/ir.h"
#include "emit/mlir.h"

/* ---------------------------------------------------------------- keys */

#define SEED_TEXT UINT64_C(0x6D6C69722D747874) /* "mlir-txt" */
#define SEED_KEY UINT64_C(0x6D6C69722D6B6579)  /* "mlir-key" */
#define SEED_SUM UINT64_C(0x6D6C69722D73756D)  /* "mlir-sum" */

hg_mlir_key_t hg_mlir_cache_key(const char *mlir, size_t len) {
  const hg_mlir_key_t text = hg_hash128_two_lane(mlir, len, SEED_TEXT);
  /* Everything besides the text that changes the PTX it lowers to, then the text's digest. */
  char meta[1024];
  const int n = snprintf(meta, sizeof meta, "hopgen-mlir-ptx|format=%d|lower=%s|pipeline=%s|",
                         HG_MLIR_CACHE_FORMAT, hg_mlir_lower_version(), hg_mlir_pipeline());
  return hg_hash128_two_lane(meta, hg_cache_key_append(meta, sizeof meta, n, text), SEED_KEY);
}

static uint64_t checksum(const char *data, size_t len) {
  return hg_hash128_two_lane(data, len, SEED_SUM).lo;
}

/* ---------------------------------------------------------------- locations */

void hg_mlir_cache_at(hg_mlir_cache_t *c, const char *dir) {
  hg_cache_dir_at(c, dir);
}

/* The runtime's cubins live in the same directory, so carrying it carries both. */
void hg_mlir_cache_from_env(hg_mlir_cache_t *c) {
  hg_cache_dir_from_env(c);
}

void hg_mlir_cache_path(const hg_mlir_cache_t *c, hg_mlir_key_t key, char *buf, size_t size) {
  snprintf(buf, size, "%s/mlir-%016" PRIx64 "%016" PRIx64 ".ptx", c->dir, key.hi, key.lo);
}

/* ---------------------------------------------------------------- entries */

/* The header line up to and including "bytes=": everything a reader can predict. */
static int header_prefix(char *buf, size_t size, hg_mlir_key_t key) {
  return snprintf(buf, size, "hopgen-mlir-ptx %d lower=%s key=%016" PRIx64 "%016" PRIx64 " bytes=",
                  HG_MLIR_CACHE_FORMAT, hg_mlir_lower_version(), key.hi, key.lo);
}

hg_status_t hg_mlir_cache_store(const hg_mlir_cache_t *c, hg_mlir_key_t key, const char *ptx,
                                size_t len) {
  if (!c->enabled) return hg_ok();
  if (!ptx) return hg_error(HG_ERR_INVALID, "hg_mlir_cache_store: ptx is NULL");
  char path[600], tmp_prefix[64], header[256];
  hg_mlir_cache_path(c, key, path, sizeof path);
  snprintf(tmp_prefix, sizeof tmp_prefix, ".mlir-%016" PRIx64 "%016" PRIx64 ".tmp-", key.hi,
           key.lo);
  int h = header_prefix(header, sizeof header, key);
  h += snprintf(header + h, sizeof header - (size_t)h, "%zu sum=%016" PRIx64 "\n", len,
                checksum(ptx, len));
  return hg_cache_write_atomic(c->dir, path, tmp_prefix, header, (size_t)h, ptx, len);
}

static void say(char *why, size_t why_size, const char *fmt, const char *path, const char *what) {
  if (why && why_size) snprintf(why, why_size, fmt, path, what);
}

/* Parse "<digits> sum=<16 hex>\n" at p (the header after "bytes="); the end of the header
 * line on success, NULL when it is malformed. */
static const char *parse_tail(const char *p, const char *end, uint64_t *len, uint64_t *sum) {
  uint64_t v = 0;
  int digits = 0;
  for (; p < end && *p >= '0' && *p <= '9' && digits < 19; p++, digits++)
    v = v * 10 + (uint64_t)(*p - '0');
  if (!digits || end - p < 22 || memcmp(p, " sum=", 5) != 0) return NULL;
  p += 5;
  uint64_t s = 0;
  for (int i = 0; i < 16; i++, p++) {
    const char ch = *p;
    const int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
    if (d < 0) return NULL;
    s = s << 4 | (uint64_t)d;
  }
  if (*p != '\n') return NULL;
  *len = v;
  *sum = s;
  return p + 1;
}

hg_mlir_cache_result_t hg_mlir_cache_lookup(const hg_mlir_cache_t *c, hg_mlir_key_t key,
                                            hg_text_t *ptx, char *why, size_t why_size) {
  *ptx = (hg_text_t){0};
  if (why && why_size) why[0] = '\0';
  if (!c->enabled) return HG_MLIR_CACHE_MISS;
  char path[600];
  hg_mlir_cache_path(c, key, path, sizeof path);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT)
      say(why, why_size, "cannot open the cache entry %s: %s", path, strerror(errno));
    return HG_MLIR_CACHE_MISS;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    say(why, why_size, "cannot stat the cache entry %s: %s", path, strerror(errno));
    close(fd);
    return HG_MLIR_CACHE_MISS;
  }
  const char *damage = NULL;
  char *file = NULL;
  size_t size = (size_t)st.st_size, got = 0;
  if (!S_ISREG(st.st_mode) || st.st_size < 0 || size > HG_MLIR_CACHE_MAX_ENTRY_BYTES) {
    damage = "it is not a regular file of a plausible size";
  } else {
    file = malloc(size + 1);
    if (!file) {
      say(why, why_size, "cannot allocate memory for the cache entry %s%s", path, "");
      close(fd);
      return HG_MLIR_CACHE_MISS;
    }
    while (got < size) {
      ssize_t r = read(fd, file + got, size - got);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        say(why, why_size, "cannot read the cache entry %s: %s", path, strerror(errno));
        free(file);
        close(fd);
        return HG_MLIR_CACHE_MISS;
      }
      if (r == 0) break; /* shrank under us: the length check below says so */
      got += (size_t)r;
    }
    file[got] = '\0';
  }
  close(fd);

  size_t at = 0;
  uint64_t want_len = 0, want_sum = 0;
  if (!damage) {
    char prefix[256];
    const int n = header_prefix(prefix, sizeof prefix, key);
    const char *magic = "hopgen-mlir-ptx ";
    const char *body = NULL;
    if (got < strlen(magic) || memcmp(file, magic, strlen(magic)) != 0)
      damage = "it does not start with the entry magic";
    else if (got < (size_t)n || memcmp(file, prefix, (size_t)n) != 0)
      damage = "its header names another format, lowering version or key";
    else if (!(body = parse_tail(file + n, file + got, &want_len, &want_sum)))
      damage = "its header is malformed or cut short (truncated)";
    else {
      at = (size_t)(body - file);
      if (want_len != got - at)
        damage = "its length does not match its header (truncated or extended)";
      else if (checksum(file + at, got - at) != want_sum)
        damage = "its checksum does not match its contents";
      else if (strlen(file + at) != got - at)
        damage = "its PTX holds a NUL byte";
    }
  }
  if (damage) {
    free(file);
    hg_cache_unlink_if_same(path, &st);
    say(why, why_size, "the cache entry %s was damaged and has been deleted: %s", path, damage);
    return HG_MLIR_CACHE_CORRUPT;
  }
  /* Hand back the PTX in the file's own buffer, moved to its start. */
  memmove(file, file + at, got - at + 1);
  ptx->data = file;
  ptx->len = got - at;
  return HG_MLIR_CACHE_HIT;
}

void hg_mlir_cache_remove(const hg_mlir_cache_t *c, hg_mlir_key_t key) {
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
    hg_mlir_cache_path(&c, key, path, sizeof path);
    const hg_mlir_cache_result_t r = hg_mlir_cache_lookup(&c, key, ptx, why, sizeof why);
    if (r == HG_MLIR_CACHE_HIT && strstr(ptx->data, entry)) return hg_ok();
    if (r == HG_MLIR_CACHE_HIT) {
      /* whole and checksummed, yet not this kernel's PTX: a key collision or a hand-made
       * file; either way not to be used, and the store below replaces it */
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
  hg_status_t w = hg_mlir_cache_store(&c, key, ptx->data, ptx->len);
  if (!hg_is_ok(&w)) {
    char first[700];
    snprintf(first, sizeof first, "%s", cache_note);
    snprintf(cache_note, sizeof cache_note, "%s%sthe lowering of '%s' was not cached: %s", first,
             first[0] ? "; " : "", name, w.msg);
  }
  return hg_ok();
}
