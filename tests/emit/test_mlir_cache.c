/* The on-disk cache of MLIR lowerings (src/emit/mlir_cache.c, hg_mlir_to_ptx): keys, the
 * entry format and its damage checks, concurrent writers, and the lowering order (a hit
 * runs no tool: proved by pointing HOPGEN_MLIR_OPT at a path that does not exist). The
 * parts that need mlir-opt-22 are skipped (exit 77 at the end) where it is missing; the
 * others run everywhere. Every case works in a fresh temporary HOPGEN_CACHE_DIR. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emit/mlir.h"
#include "emit/mlir_cache.h"
#include "emit_test_util.h"
#include "hopgen/kernels.h"

#define NO_TOOL "/nonexistent-hopgen-dir/mlir-opt-22"
#define CARRY                                                                                      \
  "lower it on a machine with mlir-22-tools with the same HOPGEN_CACHE_DIR and carry the "         \
  "directory"

static char root[512]; /* this run's scratch directory; each case makes its own inside */
static int case_no;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void rm_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    chmod(path, 0755);
    DIR *d = opendir(path);
    if (d) {
      struct dirent *e;
      while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        rm_tree(sub);
      }
      closedir(d);
    }
    rmdir(path);
  } else {
    unlink(path);
  }
}

/* A fresh cache directory for one case, made the current HOPGEN_CACHE_DIR. */
static const char *fresh_dir(char *buf, size_t size) {
  snprintf(buf, size, "%s/case%d", root, ++case_no);
  mkdir(buf, 0755);
  setenv("HOPGEN_CACHE_DIR", buf, 1);
  return buf;
}

/* Files in dir whose names start with prefix. */
static int count_files(const char *dir, const char *prefix) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (!strncmp(e->d_name, prefix, strlen(prefix))) n++;
  closedir(d);
  return n;
}

/* A small kernel whose MLIR depends on c (a constant it stores). */
static hg_builder_t *kernel(const char *name, int c) {
  hg_builder_t *b = NULL;
  if (hg_builder_create(name, &b).code != HG_OK) return NULL;
  hg_b_set_threads(b, 32);
  hg_val_t out = hg_b_param(b, HG_T_I64, "out");
  hg_val_t tid = hg_b_sreg(b, HG_TID_X);
  hg_val_t v = hg_b_bin(b, HG_ADD, tid, hg_b_i32(b, c));
  hg_val_t addr = hg_b_bin(b, HG_ADD, out, hg_b_bin(b, HG_MUL, hg_b_zext(b, tid), hg_b_i64(b, 4)));
  hg_b_store(b, HG_GLOBAL, 0, 1, addr, &v);
  return b;
}

static char *mlir_of(const char *name, int c) {
  hg_builder_t *b = kernel(name, c);
  hg_text_t t = {0};
  hg_status_t s = b ? hg_emit_mlir(b, &t) : hg_error(HG_ERR_NOMEM, "no builder");
  if (s.code != HG_OK) HG_FAIL("hg_emit_mlir: %s", s.msg);
  hg_builder_destroy(b);
  return t.data;
}

static void entry_path(const char *mlir, char *buf, size_t size) {
  hg_mlir_cache_t c;
  hg_mlir_cache_from_env(&c);
  const hg_mlir_key_t key = hg_mlir_cache_key(mlir, strlen(mlir));
  hg_mlir_cache_path(&c, &key, buf, size);
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *d = malloc((size_t)n + 1);
  size_t got = d ? fread(d, 1, (size_t)n, f) : 0;
  fclose(f);
  if (d) d[got] = '\0';
  *len = got;
  return d;
}

static void spill(const char *path, const char *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return;
  fwrite(data, 1, len, f);
  fclose(f);
}

static void set_tool(const char *tool) {
  if (tool)
    setenv("HOPGEN_MLIR_OPT", tool, 1);
  else
    unsetenv("HOPGEN_MLIR_OPT");
}
static char *saved_tool; /* HOPGEN_MLIR_OPT as the test started */

/* ---------------------------------------------------------------- without the tool */

static void test_hash_and_key(void) {
  const char *t = "gpu.module @hopgen { llvm.func @k() attributes {nvvm.kernel} }";
  hg_mlir_key_t a = hg_mlir_cache_key(t, strlen(t)), b = hg_mlir_cache_key(t, strlen(t));
  CHECK(a.hash.lo == b.hash.lo && a.hash.hi == b.hash.hi);
  CHECK(a.usable && a.text == t && strstr(a.meta, "pipeline=") != NULL);
  /* one byte, anywhere, changes the key; so does the length alone */
  char u[128];
  for (size_t i = 0; i < strlen(t); i++) {
    snprintf(u, sizeof u, "%s", t);
    u[i] ^= 1;
    hg_mlir_key_t c = hg_mlir_cache_key(u, strlen(u));
    if (c.hash.lo == a.hash.lo || c.hash.hi == a.hash.hi)
      HG_FAIL("flipping byte %zu left half the key unchanged", i);
  }
  /* Entry names as format 2 with lower=mlir22-1 made them: a different value orphans every
   * carried lowering, so it may only change with HG_MLIR_CACHE_FORMAT, the lowering version
   * or the pipeline (then update these). */
  const hg_mlir_key_t k1 = hg_mlir_cache_key("text", 4), k2 = hg_mlir_cache_key("module {}", 9);
  CHECK(k1.hash.hi == UINT64_C(0x75fb51b248ab1e8c) && k1.hash.lo == UINT64_C(0x909c48f0882b6842));
  CHECK(k2.hash.hi == UINT64_C(0xe93178f91ab366af) && k2.hash.lo == UINT64_C(0x68c94b6c57e4cb8b));
  /* 20000 near-identical texts: no two keys share either half */
  enum { N = 20000 };
  uint64_t *lo = malloc(N * sizeof *lo);
  for (int i = 0; i < N && lo; i++) {
    snprintf(u, sizeof u, "kernel %d", i);
    lo[i] = hg_mlir_cache_key(u, strlen(u)).hash.lo;
  }
  int dups = 0;
  for (int i = 0; i < N && lo; i++)
    for (int j = i + 1; j < N; j++) dups += lo[i] == lo[j];
  CHECK_EQ(dups, 0);
  free(lo);
  /* the file name: mlir-<32 hex>.ptx in the chosen directory */
  hg_mlir_cache_t c;
  hg_mlir_cache_at(&c, "/some/dir");
  char path[600];
  hg_mlir_cache_path(&c, &a, path, sizeof path);
  CHECK(strncmp(path, "/some/dir/mlir-", 15) == 0 && strlen(path) == 15 + 32 + 4);
  CHECK(strcmp(path + strlen(path) - 4, ".ptx") == 0);
}

/* The lowering cache's directory is every cache's (hg_cache_dir_from_env, tested in
 * tests/common/test_cachefile.c): the same answer, off included. */
static void test_directory_resolution(void) {
  const char *d = getenv("HOPGEN_CACHE_DIR");
  char *saved = d ? strdup(d) : NULL;
  hg_mlir_cache_t c;
  hg_cache_dir_t every;
  setenv("HOPGEN_CACHE_DIR", "off", 1);
  hg_mlir_cache_from_env(&c);
  CHECK(!c.enabled && strstr(c.why_disabled, "HOPGEN_CACHE_DIR=off"));
  setenv("HOPGEN_CACHE_DIR", root, 1);
  hg_mlir_cache_from_env(&c);
  hg_cache_dir_from_env(&every);
  CHECK(c.enabled && every.enabled && !strcmp(c.dir, every.dir) && !strcmp(c.dir, root));
  if (saved)
    setenv("HOPGEN_CACHE_DIR", saved, 1);
  else
    unsetenv("HOPGEN_CACHE_DIR");
  free(saved);
}

static void test_kernel_name(void) {
  char name[HG_IR_MAX_NAME];
  char *m = mlir_of("named_kernel_1", 1);
  CHECK(m && hg_mlir_kernel_name(m, name, sizeof name) && !strcmp(name, "named_kernel_1"));
  free(m);
  CHECK(hg_mlir_kernel_name("gpu.module @m {\n  gpu.func @g(%a: i32) kernel {\n  }\n}", name,
                            sizeof name) &&
        !strcmp(name, "g"));
  /* a helper before the kernel is skipped: only the one marked kernel counts */
  CHECK(hg_mlir_kernel_name("llvm.func @helper(%a: i32) {\n}\nllvm.func @main_k(%b: "
                            "!llvm.ptr)\n    attributes {nvvm.kernel, nvvm.reqntid = "
                            "array<i32: 32, 1, 1>} {\n}",
                            name, sizeof name) &&
        !strcmp(name, "main_k"));
  CHECK(!hg_mlir_kernel_name("module { llvm.func @f() { } }", name, sizeof name));
  hg_text_t t = {0};
  CHECK_ERR(hg_mlir_to_ptx("module {}\n", &t), HG_ERR_INVALID, "has no kernel");
  CHECK_ERR(hg_mlir_to_ptx(NULL, &t), HG_ERR_INVALID, "NULL");
  CHECK_ERR(hg_mlir_to_ptx("x", NULL), HG_ERR_INVALID, "NULL");
}

/* The entry format through store/lookup, and every kind of damage: detected, deleted. */
static void test_entry_damage(void) {
  char dir[600], path[700];
  fresh_dir(dir, sizeof dir);
  hg_mlir_cache_t c;
  hg_mlir_cache_at(&c, dir);
  const char *ptx = "//\n.version 8.0\n.target sm_90a\n.visible .entry k()\n{\n\tret;\n}\n";
  hg_mlir_key_t key = hg_mlir_cache_key("text", 4), other = hg_mlir_cache_key("text2", 5);
  hg_mlir_cache_path(&c, &key, path, sizeof path);
  hg_text_t got = {0};
  char why[800];
  CHECK_EQ(hg_mlir_cache_lookup(&c, &key, &got, why, sizeof why), HG_CACHE_MISS);
  CHECK_STR(why, "");
  CHECK_OK(hg_mlir_cache_store(&c, &key, ptx, strlen(ptx)));
  CHECK_EQ(hg_mlir_cache_lookup(&c, &key, &got, why, sizeof why), HG_CACHE_HIT);
  CHECK(got.data && !strcmp(got.data, ptx) && got.len == strlen(ptx));
  hg_text_free(&got);
  /* one header line, the whole key (meta, then the MLIR text), then exactly the PTX */
  size_t len = 0;
  char *file = slurp(path, &len);
  CHECK(file && !strncmp(file, "hopgen-mlir-ptx 2 key=", 22));
  const char *nl = file ? strchr(file, '\n') : NULL;
  CHECK(nl && !strncmp(nl + 1, key.meta, key.meta_len));
  CHECK(nl && !strncmp(nl + 1 + key.meta_len, "text", 4));
  CHECK(nl && !strcmp(nl + 1 + key.meta_len + 4, ptx));
  CHECK_EQ(count_files(dir, ".mlir-"), 0); /* no temporary file left */

  struct {
    const char *what, *expect;
  } cases[] = {
      {"truncated by one byte", "length does not match"},
      {"truncated inside the header", "truncated"},
      {"extended by one byte", "length does not match"},
      {"one PTX byte flipped", "checksum"},
      {"another magic", "magic"},
      {"empty", "empty"},
      {"another key's entry", "another format version or key"},
      {"a bad length field", "malformed"},
  };
  for (size_t i = 0; file && nl && i < sizeof cases / sizeof cases[0]; i++) {
    char *d = malloc(len + 2);
    memcpy(d, file, len + 1);
    size_t n = len;
    hg_mlir_key_t lkey = key; /* where the damaged copy goes and is looked up */
    char lpath[700];
    snprintf(lpath, sizeof lpath, "%s", path);
    switch (i) {
    case 0:
      n = len - 1;
      break;
    case 1:
      n = (size_t)(nl - file) - 5;
      break;
    case 2:
      d[len] = '\n', n = len + 1;
      break;
    case 3:
      d[len - 3] ^= 0x20;
      break;
    case 4:
      d[0] = 'H';
      break;
    case 5:
      n = 0;
      break;
    case 6:
      lkey = other; /* a whole entry, renamed to another key's file */
      hg_mlir_cache_path(&c, &other, lpath, sizeof lpath);
      break;
    case 7: {
      char *f = strstr(d, " bytes=");
      if (f) f[7] = 'x';
      break;
    }
    }
    spill(lpath, d, n);
    free(d);
    hg_cache_result_t r = hg_mlir_cache_lookup(&c, &lkey, &got, why, sizeof why);
    if (r != HG_CACHE_CORRUPT) HG_FAIL("%s: lookup returned %d, not CORRUPT", cases[i].what, r);
    if (!strstr(why, "damaged and has been deleted") || !strstr(why, cases[i].expect))
      HG_FAIL("%s: the sentence \"%s\" lacks \"%s\"", cases[i].what, why, cases[i].expect);
    CHECK(got.data == NULL);
    struct stat st;
    if (stat(lpath, &st) == 0) HG_FAIL("%s: the damaged entry was not deleted", cases[i].what);
  }
  free(file);
  /* a disabled cache: lookups miss, stores succeed without writing */
  hg_mlir_cache_t off = {0};
  CHECK_OK(hg_mlir_cache_store(&off, &key, ptx, strlen(ptx)));
  CHECK_EQ(hg_mlir_cache_lookup(&off, &key, &got, why, sizeof why), HG_CACHE_MISS);
}

/* Writers racing on one key (each with its own payload, so that a mix of two would show)
 * while readers look it up: a reader sees no entry or one writer's whole payload, never a
 * torn or mixed one. */
static void test_concurrent_writers(void) {
  char dir[600];
  fresh_dir(dir, sizeof dir);
  hg_mlir_cache_t c;
  hg_mlir_cache_at(&c, dir);
  const hg_mlir_key_t key = hg_mlir_cache_key("race", 4);
  enum { WRITERS = 4, READERS = 3, ROUNDS = 150, BYTES = 256 * 1024 };
  pid_t pids[WRITERS + READERS];
  for (int w = 0; w < WRITERS + READERS; w++) {
    pids[w] = fork();
    if (pids[w] != 0) continue;
    if (w < WRITERS) {
      char *p = malloc(BYTES + 1);
      if (!p) _exit(2);
      memset(p, 'a' + w, BYTES);
      p[BYTES] = '\0';
      for (int r = 0; r < ROUNDS; r++)
        if (hg_mlir_cache_store(&c, &key, p, BYTES).code != HG_OK) _exit(3);
      _exit(0);
    }
    int bad = 0;
    for (int r = 0; r < ROUNDS * 4 && !bad; r++) {
      hg_text_t t = {0};
      char why[800];
      hg_cache_result_t res = hg_mlir_cache_lookup(&c, &key, &t, why, sizeof why);
      if (res == HG_CACHE_CORRUPT) {
        fprintf(stderr, "  reader: %s\n", why);
        bad = 1;
      }
      if (res == HG_CACHE_HIT) {
        if (t.len != BYTES) bad = 1;
        for (size_t i = 1; i < t.len && !bad; i++) bad = t.data[i] != t.data[0];
        if (bad) fprintf(stderr, "  reader: a mixed payload\n");
      }
      hg_text_free(&t);
    }
    _exit(bad ? 1 : 0);
  }
  for (int w = 0; w < WRITERS + READERS; w++) {
    int status = 0;
    if (pids[w] < 0) {
      HG_FAIL("fork failed");
      continue;
    }
    waitpid(pids[w], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      HG_FAIL("%s %d ended with status %d", w < WRITERS ? "writer" : "reader", w, status);
  }
  hg_text_t t = {0};
  CHECK_EQ(hg_mlir_cache_lookup(&c, &key, &t, NULL, 0), HG_CACHE_HIT);
  CHECK_EQ(t.len, BYTES);
  hg_text_free(&t);
  CHECK_EQ(count_files(dir, "mlir-"), 1);
  CHECK_EQ(count_files(dir, ".mlir-"), 0);
}

/* No tool and no entry: the sentence says both, and where a lowering could come from. */
static void test_tool_missing_and_miss(void) {
  char dir[600];
  fresh_dir(dir, sizeof dir);
  char *m = mlir_of("never_lowered", 5);
  set_tool(NO_TOOL);
  hg_text_t t = {0};
  hg_status_t s = hg_mlir_to_ptx(m, &t);
  CHECK_EQ(s.code, HG_ERR_TOOL);
  CHECK(strstr(s.msg, NO_TOOL " not found") != NULL);
  CHECK(strstr(s.msg, "no cached lowering for this kernel ('never_lowered'") != NULL);
  CHECK(strstr(s.msg, dir) != NULL);
  CHECK(strstr(s.msg, CARRY) != NULL);
  CHECK(t.data == NULL);
  fprintf(stderr, "  (no tool, no entry: %s)\n", s.msg);
  setenv("HOPGEN_CACHE_DIR", "off", 1);
  s = hg_mlir_to_ptx(m, &t);
  CHECK_EQ(s.code, HG_ERR_TOOL);
  CHECK(strstr(s.msg, "the lowering cache is off: HOPGEN_CACHE_DIR=off") != NULL);
  CHECK(strstr(s.msg, CARRY) != NULL);
  set_tool(saved_tool);
  free(m);
}

/* ---------------------------------------------------------------- with the tool */

static double ms_miss, ms_hit;

static void test_miss_then_hit(void) {
  char dir[600], path[700];
  fresh_dir(dir, sizeof dir);
  char *m = mlir_of("cached_kernel", 1);
  entry_path(m, path, sizeof path);
  hg_text_t first = {0}, second = {0}, direct = {0};
  double t0 = now_ms();
  CHECK_OK(hg_mlir_to_ptx(m, &first));
  ms_miss = now_ms() - t0;
  CHECK_STR(hg_mlir_cache_note(), "");
  struct stat st;
  CHECK(stat(path, &st) == 0);
  CHECK_EQ(count_files(dir, "mlir-"), 1);
  /* the lowering is the tool's, unchanged */
  CHECK_OK(hg_mlir_lower(m, "cached_kernel", &direct));
  CHECK(first.data && direct.data && !strcmp(first.data, direct.data));
  /* the second lowering runs no tool: there is none */
  set_tool(NO_TOOL);
  t0 = now_ms();
  CHECK_OK(hg_mlir_to_ptx(m, &second));
  ms_hit = now_ms() - t0;
  CHECK_STR(hg_mlir_cache_note(), "");
  CHECK(first.data && second.data && first.len == second.len && !strcmp(first.data, second.data));
  /* hg_emit's MLIR path goes through the cache too */
  hg_builder_t *b = kernel("cached_kernel", 1);
  hg_text_t e = {0};
  CHECK_OK(hg_emit(b, HG_BACKEND_MLIR, &e));
  CHECK(e.data && first.data && !strcmp(e.data, first.data));
  hg_text_free(&e);
  set_tool(saved_tool);
  fprintf(stderr, "  (small kernel: miss %.1f ms with mlir-opt-22, hit %.3f ms)\n", ms_miss,
          ms_hit);
  hg_builder_destroy(b);
  hg_text_free(&first);
  hg_text_free(&second);
  hg_text_free(&direct);
  free(m);
}

static void test_key_follows_text(void) {
  char dir[600], p1[700], p2[700];
  fresh_dir(dir, sizeof dir);
  char *m1 = mlir_of("keyed", 1), *m2 = mlir_of("keyed", 2);
  entry_path(m1, p1, sizeof p1);
  entry_path(m2, p2, sizeof p2);
  CHECK(strcmp(p1, p2) != 0);
  hg_text_t a = {0}, b = {0};
  CHECK_OK(hg_mlir_to_ptx(m1, &a));
  CHECK_OK(hg_mlir_to_ptx(m2, &b));
  CHECK_EQ(count_files(dir, "mlir-"), 2);
  CHECK(a.data && b.data && strcmp(a.data, b.data) != 0); /* each text its own PTX */
  /* and with no tool each text still gets its own */
  set_tool(NO_TOOL);
  hg_text_t a2 = {0}, b2 = {0};
  CHECK_OK(hg_mlir_to_ptx(m1, &a2));
  CHECK_OK(hg_mlir_to_ptx(m2, &b2));
  CHECK(a.data && a2.data && !strcmp(a.data, a2.data));
  CHECK(b.data && b2.data && !strcmp(b.data, b2.data));
  set_tool(saved_tool);
  hg_text_free(&a);
  hg_text_free(&b);
  hg_text_free(&a2);
  hg_text_free(&b2);
  free(m1);
  free(m2);
}

/* A damaged entry is never used: lowered again (and replaced) when the tool is here, a
 * failure naming the damage when it is not. */
static void test_damaged_entry_relowered(void) {
  char dir[600], path[700];
  fresh_dir(dir, sizeof dir);
  char *m = mlir_of("damaged", 3);
  entry_path(m, path, sizeof path);
  hg_text_t good = {0}, again = {0};
  CHECK_OK(hg_mlir_to_ptx(m, &good));
  size_t len = 0;
  char *file = slurp(path, &len);
  CHECK(file && len > 100);
  if (!file || len <= 100 || !good.data) {
    free(file);
    free(m);
    hg_text_free(&good);
    return;
  }
  /* truncated: relowered with the tool, the entry whole again */
  spill(path, file, len - 40);
  CHECK_OK(hg_mlir_to_ptx(m, &again));
  CHECK(again.data && !strcmp(again.data, good.data));
  CHECK(strstr(hg_mlir_cache_note(), "damaged and has been deleted") != NULL);
  CHECK(strstr(hg_mlir_cache_note(), "truncated") != NULL);
  hg_text_free(&again);
  size_t len2 = 0;
  char *file2 = slurp(path, &len2);
  CHECK(file2 && len2 == len && !memcmp(file, file2, len));
  free(file2);
  /* a flipped byte in the PTX, and no tool: a failure, not the damaged PTX */
  file[len - 2] ^= 0x01;
  spill(path, file, len);
  set_tool(NO_TOOL);
  hg_status_t s = hg_mlir_to_ptx(m, &again);
  CHECK_EQ(s.code, HG_ERR_TOOL);
  CHECK(strstr(s.msg, "checksum") && strstr(s.msg, "damaged and has been deleted"));
  CHECK(strstr(s.msg, CARRY) != NULL);
  CHECK(again.data == NULL);
  struct stat st;
  CHECK(stat(path, &st) != 0);
  set_tool(saved_tool);
  free(file);
  hg_text_free(&good);
  free(m);
}

static void test_cache_off(void) {
  char dir[600];
  fresh_dir(dir, sizeof dir);
  setenv("HOPGEN_CACHE_DIR", "off", 1);
  char *m = mlir_of("uncached", 4);
  hg_text_t t = {0};
  CHECK_OK(hg_mlir_to_ptx(m, &t));
  CHECK(t.data && strstr(t.data, ".entry uncached("));
  CHECK(strstr(hg_mlir_cache_note(), "cache is off: HOPGEN_CACHE_DIR=off") != NULL);
  CHECK_EQ(count_files(dir, "mlir-"), 0);
  hg_text_free(&t);
  free(m);
}

/* A directory that cannot be made or written: the lowering still succeeds, the note says
 * why nothing was cached. */
static void test_unwritable_dir(void) {
  char dir[600], file[700], sub[800];
  fresh_dir(dir, sizeof dir);
  snprintf(file, sizeof file, "%s/a-file", dir);
  spill(file, "x", 1);
  snprintf(sub, sizeof sub, "%s/cache", file); /* under a regular file: ENOTDIR, even as root */
  setenv("HOPGEN_CACHE_DIR", sub, 1);
  char *m = mlir_of("unwritable", 6);
  hg_text_t t = {0};
  CHECK_OK(hg_mlir_to_ptx(m, &t));
  CHECK(t.data && strstr(t.data, ".entry unwritable("));
  /* the directory is checked before use: the cache is off, and the note says why */
  CHECK(strstr(hg_mlir_cache_note(), "the MLIR lowering cache is off") != NULL);
  CHECK(strstr(hg_mlir_cache_note(), "is not a directory") != NULL);
  fprintf(stderr, "  (note: %s)\n", hg_mlir_cache_note());
  hg_text_free(&t);
  if (geteuid() != 0) { /* permissions bind only a non-root user */
    char ro[700];
    snprintf(ro, sizeof ro, "%s/read-only", dir);
    mkdir(ro, 0555);
    setenv("HOPGEN_CACHE_DIR", ro, 1);
    CHECK_OK(hg_mlir_to_ptx(m, &t));
    CHECK(strstr(hg_mlir_cache_note(), "cache is off") != NULL);
    CHECK(strstr(hg_mlir_cache_note(), "is not writable") != NULL);
    CHECK_EQ(count_files(ro, ""), 2); /* "." and "..": nothing left behind */
    hg_text_free(&t);
    chmod(ro, 0755);
  }
  free(m);
}

/* Processes lowering the same kernel into one directory at once (what parallel builds or
 * batch runs do): all succeed, one whole entry, no temporary files. */
static void test_concurrent_lowering(void) {
  char dir[600], path[700];
  fresh_dir(dir, sizeof dir);
  char *m = mlir_of("raced", 7);
  entry_path(m, path, sizeof path);
  enum { PROCS = 4 };
  pid_t pids[PROCS];
  for (int i = 0; i < PROCS; i++) {
    pids[i] = fork();
    if (pids[i] != 0) continue;
    hg_text_t t = {0};
    hg_status_t s = hg_mlir_to_ptx(m, &t);
    if (s.code != HG_OK) fprintf(stderr, "  child %d: %s\n", i, s.msg);
    _exit(s.code == HG_OK && t.data && strstr(t.data, ".entry raced(") ? 0 : 1);
  }
  for (int i = 0; i < PROCS; i++) {
    int status = 0;
    if (pids[i] < 0) {
      HG_FAIL("fork failed");
      continue;
    }
    waitpid(pids[i], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) HG_FAIL("lowering process %d failed", i);
  }
  CHECK_EQ(count_files(dir, "mlir-"), 1);
  CHECK_EQ(count_files(dir, ".mlir-"), 0);
  set_tool(NO_TOOL);
  hg_text_t t = {0};
  CHECK_OK(hg_mlir_to_ptx(m, &t));
  CHECK_STR(hg_mlir_cache_note(), "");
  set_tool(saved_tool);
  hg_text_free(&t);
  free(m);
}

/* hg_kernel_finish prints the MLIR once into k->mlir and lowers that very text. */
static void test_kernel_finish(void) {
  char dir[600];
  fresh_dir(dir, sizeof dir);
  hg_builder_t *b = kernel("finished", 8);
  hg_kernel_t k;
  memset(&k, 0, sizeof k);
  CHECK_OK(hg_kernel_finish(b, HG_BACKEND_MLIR, &k));
  CHECK(k.mlir.data && k.ptx.data);
  hg_text_t t = {0};
  set_tool(NO_TOOL); /* so the PTX below can only come from k->mlir's cache entry */
  CHECK_OK(hg_mlir_to_ptx(k.mlir.data, &t));
  set_tool(saved_tool);
  CHECK(t.data && k.ptx.data && !strcmp(t.data, k.ptx.data));
  CHECK_EQ(count_files(dir, "mlir-"), 1);
  hg_text_free(&t);
  hg_kernel_free(&k);
  hg_builder_destroy(b);
}

int main(void) {
  const char *tool = getenv("HOPGEN_MLIR_OPT");
  saved_tool = tool && *tool ? strdup(tool) : NULL;
  const char *tmp = getenv("TMPDIR");
  snprintf(root, sizeof root, "%s/hopgen-mlir-cache-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(root)) {
    fprintf(stderr, "cannot create a scratch directory %s\n", root);
    return 1;
  }
  HG_RUN(test_hash_and_key);
  HG_RUN(test_directory_resolution);
  HG_RUN(test_kernel_name);
  HG_RUN(test_entry_damage);
  HG_RUN(test_concurrent_writers);
  HG_RUN(test_tool_missing_and_miss);

  const char *argv[] = {saved_tool ? saved_tool : "mlir-opt-22", "--version", NULL};
  hg_text_t out = {0}, err = {0};
  hg_status_t s = hg_tool_run(argv, NULL, &out, &err);
  hg_text_free(&out);
  hg_text_free(&err);
  bool have_tool = !(s.code == HG_ERR_TOOL && strstr(s.msg, "not found"));
  if (have_tool) {
    HG_RUN(test_miss_then_hit);
    HG_RUN(test_key_follows_text);
    HG_RUN(test_damaged_entry_relowered);
    HG_RUN(test_cache_off);
    HG_RUN(test_unwritable_dir);
    HG_RUN(test_concurrent_lowering);
    HG_RUN(test_kernel_finish);
  }
  rm_tree(root);
  free(saved_tool);
  int rc = hg_test_finish();
  if (rc == 0 && !have_tool) {
    fprintf(stderr, "SKIP (the rest): %s\n", s.msg);
    return 77;
  }
  return rc;
}
