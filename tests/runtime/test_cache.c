/* The on-disk module cache without a GPU: hashing, keys, the entry format, damage
 * detection, concurrent writers and readers, and where the cache lives. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hg_test.h"
#include "hopgen/runtime.h"
#include "runtime/cache.h"

/* A fresh directory for one test (removed by rm_tree at the end). */
static void make_tmpdir(char *buf, size_t size) {
  const char *base = getenv("TMPDIR");
  snprintf(buf, size, "%s/hopgen-cache-test-XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(buf)) {
    HG_FAIL("mkdtemp(%s): %s", buf, strerror(errno));
    buf[0] = '\0';
  }
}

static void rm_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  char path[1024];
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
      rm_tree(path);
    else
      unlink(path);
  }
  closedir(d);
  rmdir(dir);
}

static int count_files(const char *dir, const char *prefix) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) n++;
  closedir(d);
  return n;
}

/* ptx is borrowed by the key: string literals here. */
static hg_cache_key_t key_of(const char *ptx) {
  return hg_cache_key(ptx, strlen(ptx), 13000, "NVIDIA H100 80GB HBM3", 9, 0);
}

static bool same_key(hg_hash128_t a, hg_hash128_t b) {
  return a.lo == b.lo && a.hi == b.hi;
}

/* ---------------------------------------------------------------- hashing and keys */

static void test_hash_properties(void) {
  uint8_t buf[1000];
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)(i * 131 + 7);
  hg_hash128_t h = hg_hash128(buf, sizeof buf, 1);
  hg_hash128_t again = hg_hash128(buf, sizeof buf, 1);
  CHECK(same_key(h, again));
  CHECK(!same_key(h, hg_hash128(buf, sizeof buf, 2))); /* the seed matters */
  /* Every single-bit flip, at every position, changes both halves. */
  int unchanged = 0;
  for (size_t i = 0; i < sizeof buf; i++) {
    for (int bit = 0; bit < 8; bit++) {
      buf[i] ^= (uint8_t)(1u << bit);
      hg_hash128_t f = hg_hash128(buf, sizeof buf, 1);
      if (f.lo == h.lo || f.hi == h.hi) unchanged++;
      buf[i] ^= (uint8_t)(1u << bit);
    }
  }
  CHECK_EQ(unchanged, 0);
  /* Every prefix length hashes differently (including trailing zero bytes). */
  uint8_t zeros[70] = {0};
  hg_hash128_t seen[71];
  int collisions = 0;
  for (size_t n = 0; n <= sizeof zeros; n++) {
    seen[n] = hg_hash128(zeros, n, 0);
    for (size_t m = 0; m < n; m++) collisions += same_key(seen[m], seen[n]);
  }
  CHECK_EQ(collisions, 0);
  /* Avalanche: a one-bit change flips about half of the 128 output bits. */
  long flipped = 0;
  int trials = 0;
  for (size_t i = 0; i < 64; i++, trials++) {
    buf[i] ^= 1;
    hg_hash128_t f = hg_hash128(buf, 64, 9);
    buf[i] ^= 1;
    hg_hash128_t g = hg_hash128(buf, 64, 9);
    flipped += __builtin_popcountll(f.lo ^ g.lo) + __builtin_popcountll(f.hi ^ g.hi);
  }
  const double mean = (double)flipped / trials;
  if (mean < 54 || mean > 74) HG_FAIL("mean flipped bits %.1f, expected about 64", mean);
}

static void test_key_inputs(void) {
  const char *ptx = ".version 8.0\n.target sm_90a\n.entry k() { ret; }\n";
  const size_t n = strlen(ptx);
  const hg_hash128_t k = hg_cache_key(ptx, n, 13000, "NVIDIA H100 80GB HBM3", 9, 0).hash;
  CHECK(same_key(k, hg_cache_key(ptx, n, 13000, "NVIDIA H100 80GB HBM3", 9, 0).hash));
  CHECK(!same_key(k, hg_cache_key(".version 8.0\n.target sm_90a\n.entry j() { ret; }\n", n, 13000,
                                  "NVIDIA H100 80GB HBM3", 9, 0)
                         .hash));
  CHECK(!same_key(k, hg_cache_key(ptx, n - 1, 13000, "NVIDIA H100 80GB HBM3", 9, 0).hash));
  CHECK(!same_key(k, hg_cache_key(ptx, n, 12080, "NVIDIA H100 80GB HBM3", 9, 0).hash)); /* driver */
  CHECK(!same_key(k, hg_cache_key(ptx, n, 13000, "NVIDIA H200", 9, 0).hash));           /* device */
  CHECK(!same_key(k, hg_cache_key(ptx, n, 13000, "NVIDIA H100 80GB HBM3", 10, 0).hash)); /* cc */
  CHECK(!same_key(k, hg_cache_key(ptx, n, 13000, "NVIDIA H100 80GB HBM3", 9, 1).hash));
  /* The key holds everything but the PTX, and borrows the PTX. */
  const hg_cache_key_t full = hg_cache_key(ptx, n, 13000, "NVIDIA H100 80GB HBM3", 9, 0);
  CHECK(full.usable && full.text == ptx && full.text_len == n);
  CHECK(strstr(full.meta, "driver=13000") && strstr(full.meta, "device=NVIDIA H100 80GB HBM3"));
  /* This module's entry name since format 2: a different value orphans every cached cubin,
   * so it may only change together with HG_CACHE_FORMAT_VERSION. */
  CHECK(k.hi == UINT64_C(0x8a308a931d03efb6) && k.lo == UINT64_C(0x2bb9687d93272f84));
}

/* ---------------------------------------------------------------- entries */

static void test_roundtrip(void) {
  char dir[512];
  make_tmpdir(dir, sizeof dir);
  char sub[600];
  snprintf(sub, sizeof sub, "%s/a/b/c", dir); /* created on the first store */
  hg_cache_t c;
  hg_cache_at(&c, sub);
  CHECK(c.enabled);
  hg_cache_key_t key = key_of("roundtrip");
  void *data = NULL;
  size_t size = 0;
  char why[512];
  CHECK_EQ(hg_cache_lookup(&c, &key, &data, &size, why, sizeof why), HG_CACHE_MISS);
  CHECK_STR(why, ""); /* absent is not an error */
  const char payload[] = "\x7f"
                         "ELF pretend cubin \0 with a NUL inside";
  CHECK_OK(hg_cache_store(&c, &key, payload, sizeof payload));
  CHECK_EQ(hg_cache_lookup(&c, &key, &data, &size, why, sizeof why), HG_CACHE_HIT);
  CHECK_EQ(size, sizeof payload);
  CHECK(data && memcmp(data, payload, sizeof payload) == 0);
  free(data);
  /* Another key is another entry. */
  const hg_cache_key_t other = key_of("other");
  CHECK_EQ(hg_cache_lookup(&c, &other, &data, &size, NULL, 0), HG_CACHE_MISS);
  /* Overwriting replaces atomically; an empty payload is legal. */
  CHECK_OK(hg_cache_store(&c, &key, "", 0));
  CHECK_EQ(hg_cache_lookup(&c, &key, &data, &size, NULL, 0), HG_CACHE_HIT);
  CHECK_EQ(size, 0);
  free(data);
  CHECK_EQ(count_files(sub, ""), 3); /* ".", ".." and the entry: no temporary file */
  char path[700];
  hg_cache_path(&c, &key, path, sizeof path);
  CHECK(strstr(path, sub) == path);
  CHECK(strstr(path, ".cubin") != NULL);
  hg_cache_remove(&c, &key);
  CHECK_EQ(hg_cache_lookup(&c, &key, &data, &size, NULL, 0), HG_CACHE_MISS);
  rm_tree(dir);
}

/* Store, damage the file with `damage`, and expect CORRUPT (entry deleted) then MISS. */
static void expect_corrupt(const char *what, void (*damage)(const char *path, size_t total),
                           const char *fragment) {
  char dir[512];
  make_tmpdir(dir, sizeof dir);
  hg_cache_t c;
  hg_cache_at(&c, dir);
  hg_cache_key_t key = key_of(what);
  uint8_t payload[300];
  for (size_t i = 0; i < sizeof payload; i++) payload[i] = (uint8_t)(i ^ 0x5a);
  CHECK_OK(hg_cache_store(&c, &key, payload, sizeof payload));
  char path[700];
  hg_cache_path(&c, &key, path, sizeof path);
  struct stat st;
  CHECK(stat(path, &st) == 0);
  damage(path, (size_t)st.st_size);
  void *data = (void *)1;
  size_t size = 1;
  char why[512] = "";
  hg_cache_result_t r = hg_cache_lookup(&c, &key, &data, &size, why, sizeof why);
  if (r != HG_CACHE_CORRUPT) HG_FAIL("%s: lookup returned %d, expected CORRUPT", what, (int)r);
  CHECK(data == NULL);
  CHECK_EQ(size, 0);
  if (!strstr(why, fragment) || !strstr(why, "deleted"))
    HG_FAIL("%s: the sentence \"%s\" lacks \"%s\"", what, why, fragment);
  CHECK(access(path, F_OK) != 0); /* deleted */
  CHECK_EQ(hg_cache_lookup(&c, &key, &data, &size, NULL, 0), HG_CACHE_MISS);
  /* And the slot works again. */
  CHECK_OK(hg_cache_store(&c, &key, payload, sizeof payload));
  CHECK_EQ(hg_cache_lookup(&c, &key, &data, &size, NULL, 0), HG_CACHE_HIT);
  free(data);
  rm_tree(dir);
}

static void flip_byte_at(const char *path, long offset) {
  int fd = open(path, O_RDWR);
  uint8_t b = 0;
  if (fd < 0 || pread(fd, &b, 1, offset) != 1) HG_FAIL("cannot read %s", path);
  b ^= 0x01;
  if (fd >= 0 && pwrite(fd, &b, 1, offset) != 1) HG_FAIL("cannot write %s", path);
  if (fd >= 0) close(fd);
}

static void damage_payload(const char *path, size_t total) {
  flip_byte_at(path, (long)total - 7);
}
static void damage_magic(const char *path, size_t total) {
  (void)total;
  flip_byte_at(path, 0);
}
/* The header line is "hopgen-cubin 2 key=<32 hex> ...": offsets 13 and 20 are in the
 * version and the key's hash; the stored key (meta, then the PTX) follows the line. */
static void damage_key(const char *path, size_t total) {
  (void)total;
  flip_byte_at(path, 20);
}
static void damage_version(const char *path, size_t total) {
  (void)total;
  flip_byte_at(path, 13);
}
static void damage_stored_key(const char *path, size_t total) {
  (void)total;
  FILE *f = fopen(path, "rb");
  char line[256] = "";
  if (!f || !fgets(line, sizeof line, f)) HG_FAIL("cannot read %s", path);
  if (f) fclose(f);
  flip_byte_at(path, (long)strlen(line) + 3); /* inside "hopgen-cache-v2|..." */
}
static void truncate_payload(const char *path, size_t total) {
  if (truncate(path, (off_t)total - 10) != 0) HG_FAIL("truncate %s", path);
}
static void truncate_header(const char *path, size_t total) {
  (void)total;
  if (truncate(path, 20) != 0) HG_FAIL("truncate %s", path);
}
static void truncate_empty(const char *path, size_t total) {
  (void)total;
  if (truncate(path, 0) != 0) HG_FAIL("truncate %s", path);
}
static void extend(const char *path, size_t total) {
  if (truncate(path, (off_t)total + 5) != 0) HG_FAIL("extend %s", path);
}

static void test_corrupt_entries(void) {
  expect_corrupt("payload byte", damage_payload, "checksum");
  expect_corrupt("magic", damage_magic, "magic");
  expect_corrupt("key", damage_key, "another format version or key");
  expect_corrupt("version", damage_version, "another format version");
  expect_corrupt("stored key", damage_stored_key, "collision");
  expect_corrupt("truncated payload", truncate_payload, "truncated");
  expect_corrupt("truncated header", truncate_header, "truncated");
  expect_corrupt("empty file", truncate_empty, "truncated");
  expect_corrupt("extended", extend, "length");
}

/* ---------------------------------------------------------------- concurrency */

/* Writer w's payload: its length and every byte derive from w, so a reader can tell a
 * complete payload of one writer from a mixture of two. */
static size_t writer_payload(int w, int round, uint8_t *buf) {
  const size_t n = 2000 + (size_t)w * 977 + (size_t)(round % 3) * 4099;
  for (size_t i = 0; i < n; i++) buf[i] = (uint8_t)(w * 31 + (int)(i % 251));
  buf[0] = (uint8_t)w;
  return n;
}

static bool payload_is_whole(const uint8_t *p, size_t n) {
  if (n < 2000) return false;
  const int w = p[0];
  uint8_t expect[20000];
  for (int round = 0; round < 3; round++) {
    size_t m = writer_payload(w, round, expect);
    if (m == n && memcmp(expect, p, n) == 0) return true;
  }
  return false;
}

static void test_concurrent_writers_and_readers(void) {
  char dir[512];
  make_tmpdir(dir, sizeof dir);
  hg_cache_t c;
  hg_cache_at(&c, dir);
  const hg_cache_key_t key = key_of("contended");
  enum { WRITERS = 8, READERS = 4, ROUNDS = 150 };
  pid_t pids[WRITERS + READERS];
  for (int i = 0; i < WRITERS + READERS; i++) {
    pid_t pid = fork();
    if (pid < 0) {
      HG_FAIL("fork: %s", strerror(errno));
      pids[i] = -1;
      continue;
    }
    if (pid == 0) {
      /* Child: exit status 0 = fine, 1 = a store failed, 2 = a torn or damaged read. */
      int status = 0;
      uint8_t buf[20000];
      for (int round = 0; round < ROUNDS && status == 0; round++) {
        if (i < WRITERS) {
          size_t n = writer_payload(i, round, buf);
          hg_status_t s = hg_cache_store(&c, &key, buf, n);
          if (!hg_is_ok(&s)) status = 1;
        } else {
          void *data = NULL;
          size_t size = 0;
          hg_cache_result_t r = hg_cache_lookup(&c, &key, &data, &size, NULL, 0);
          if (r == HG_CACHE_CORRUPT) status = 2;
          if (r == HG_CACHE_HIT && !payload_is_whole((const uint8_t *)data, size)) status = 2;
          free(data);
        }
      }
      _exit(status);
    }
    pids[i] = pid;
  }
  int failures = 0;
  for (int i = 0; i < WRITERS + READERS; i++) {
    int st = 0;
    if (pids[i] > 0 && waitpid(pids[i], &st, 0) == pids[i]) {
      if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        failures++;
        HG_FAIL("process %d (%s) ended with status %d", i, i < WRITERS ? "writer" : "reader",
                WIFEXITED(st) ? WEXITSTATUS(st) : -1);
      }
    }
  }
  CHECK_EQ(failures, 0);
  /* The survivor is one writer's complete payload, and no temporary file is left. */
  void *data = NULL;
  size_t size = 0;
  CHECK_EQ(hg_cache_lookup(&c, &key, &data, &size, NULL, 0), HG_CACHE_HIT);
  CHECK(data && payload_is_whole((const uint8_t *)data, size));
  free(data);
  CHECK_EQ(count_files(dir, "."), 2); /* "." and "..": no temporary file */
  rm_tree(dir);
}

/* ---------------------------------------------------------------- locations */

static void restore_env(const char *name, const char *saved) {
  if (saved)
    setenv(name, saved, 1);
  else
    unsetenv(name);
}

/* The cubin cache's directory is every cache's (hg_cache_dir_from_env, tested in
 * tests/common/test_cachefile.c); here: that it is that one, and what a disabled or
 * unusable one does. */
static void test_locations(void) {
  char *s_dir = getenv("HOPGEN_CACHE_DIR") ? strdup(getenv("HOPGEN_CACHE_DIR")) : NULL;
  char *s_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
  hg_cache_t c;
  const hg_cache_key_t x = key_of("x");

  setenv("HOPGEN_CACHE_DIR", "off", 1);
  hg_cache_from_env(&c);
  CHECK(!c.enabled && !c.unusable);
  CHECK_STR(c.why_disabled, "HOPGEN_CACHE_DIR=off");
  /* A disabled cache finds nothing and stores nothing, successfully. */
  void *data = NULL;
  size_t size = 0;
  CHECK_EQ(hg_cache_lookup(&c, &x, &data, &size, NULL, 0), HG_CACHE_MISS);
  CHECK_OK(hg_cache_store(&c, &x, "abc", 3));
  char buf[600];
  CHECK_OK(hg_cache_dir(buf, sizeof buf));
  CHECK_STR(buf, "");

  char dir[512];
  make_tmpdir(dir, sizeof dir);
  setenv("HOPGEN_CACHE_DIR", dir, 1);
  hg_cache_from_env(&c);
  CHECK(c.enabled);
  CHECK_STR(c.dir, dir);
  CHECK_OK(hg_cache_dir(buf, sizeof buf));
  CHECK_STR(buf, dir);

  /* A home that does not exist: no cache, a sentence, and nothing created there. */
  char home[600];
  snprintf(home, sizeof home, "%s/no-such-home", dir);
  unsetenv("HOPGEN_CACHE_DIR");
  setenv("HOME", home, 1);
  const char *xdg = getenv("XDG_CACHE_HOME");
  char *s_xdg = xdg ? strdup(xdg) : NULL;
  unsetenv("XDG_CACHE_HOME");
  hg_cache_from_env(&c);
  CHECK(!c.enabled && c.unusable && strstr(c.why_disabled, home));
  CHECK_ERR(hg_cache_dir(buf, sizeof buf), HG_ERR_IO, "is not an existing directory");
  CHECK_OK(hg_cache_store(&c, &x, "abc", 3));
  CHECK(access(home, F_OK) != 0);
  restore_env("XDG_CACHE_HOME", s_xdg);
  free(s_xdg);

  char longdir[600];
  memset(longdir, 'x', sizeof longdir - 1);
  longdir[0] = '/';
  longdir[sizeof longdir - 1] = '\0';
  setenv("HOPGEN_CACHE_DIR", longdir, 1);
  hg_cache_from_env(&c);
  CHECK(!c.enabled);
  CHECK(strstr(c.why_disabled, "longer") != NULL);

  restore_env("HOPGEN_CACHE_DIR", s_dir);
  restore_env("HOME", s_home);
  free(s_dir);
  free(s_home);
  rm_tree(dir);
}

/* Policy: a cache directory that cannot be written is not a failure of module loading
 * (jit.c records the sentence in hg_jit_info_t.cache_note and goes on without the cache);
 * at this level the store says HG_ERR_IO with the path and the reason, and lookups miss. */
static void test_unwritable_directory(void) {
  char dir[512];
  make_tmpdir(dir, sizeof dir);
  /* A path below a regular file can never be created, even by root. */
  char file[600], below[700];
  snprintf(file, sizeof file, "%s/plain-file", dir);
  FILE *f = fopen(file, "w");
  if (f) fclose(f);
  snprintf(below, sizeof below, "%s/cache", file);
  hg_cache_t c;
  hg_cache_at(&c, below);
  hg_cache_key_t key = key_of("unwritable");
  CHECK_ERR(hg_cache_store(&c, &key, "abc", 3), HG_ERR_IO, "cannot create the cache directory");
  CHECK_ERR(hg_cache_store(&c, &key, "abc", 3), HG_ERR_IO, below);
  void *data = NULL;
  size_t size = 0;
  CHECK_EQ(hg_cache_lookup(&c, &key, &data, &size, NULL, 0), HG_CACHE_MISS);

  /* The directory itself being a file. */
  hg_cache_at(&c, file);
  CHECK_ERR(hg_cache_store(&c, &key, "abc", 3), HG_ERR_IO, "Not a directory");

  /* A read-only directory (skipped as root, who may write anyway). */
  if (geteuid() != 0) {
    char ro[600];
    snprintf(ro, sizeof ro, "%s/readonly", dir);
    mkdir(ro, 0555);
    hg_cache_at(&c, ro);
    CHECK_ERR(hg_cache_store(&c, &key, "abc", 3), HG_ERR_IO, "temporary file");
    CHECK_EQ(count_files(ro, "."), 2);
    chmod(ro, 0755);
  }
  rm_tree(dir);
}

/* hg_cache_prune: over either bound, the oldest matching entries go until both are under
 * three quarters; other files in the directory are never touched. */
static void test_prune(void) {
  char dir[] = "/tmp/hopgen-prune-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[256];
  for (int i = 0; i < 10; i++) {
    snprintf(path, sizeof path, "%s/gemm-%02d.kernel", dir, i);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    for (int j = 0; j < 100; j++) fputc('x', f);
    fclose(f);
    /* entry i is i seconds newer than entry 0 */
    const struct timespec t[2] = {{1000000 + i, 0}, {1000000 + i, 0}};
    CHECK_EQ(utimensat(AT_FDCWD, path, t, 0), 0);
  }
  snprintf(path, sizeof path, "%s/other.cubin", dir);
  FILE *f = fopen(path, "wb");
  if (f) fclose(f);
  CHECK_EQ(hg_cache_prune(dir, "gemm-", ".kernel", 1000, 10), 0); /* at the bounds: kept */
  CHECK_EQ(hg_cache_prune(dir, "gemm-", ".kernel", 1000, 8), 4);  /* 10 > 8: down to 6 */
  for (int i = 0; i < 10; i++) {
    snprintf(path, sizeof path, "%s/gemm-%02d.kernel", dir, i);
    CHECK_EQ(access(path, F_OK) == 0, i >= 4); /* the oldest four are gone */
  }
  CHECK_EQ(hg_cache_prune(dir, "gemm-", ".kernel", 500, 100), 3); /* 600 B > 500: to 300 */
  snprintf(path, sizeof path, "%s/other.cubin", dir);
  CHECK_EQ(access(path, F_OK), 0);
  CHECK_EQ(hg_cache_prune("/nonexistent-hopgen-dir", "gemm-", ".kernel", 1, 1), 0);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK_EQ(system(cmd), 0);
}

int main(void) {
  HG_RUN(test_hash_properties);
  HG_RUN(test_key_inputs);
  HG_RUN(test_roundtrip);
  HG_RUN(test_corrupt_entries);
  HG_RUN(test_concurrent_writers_and_readers);
  HG_RUN(test_locations);
  HG_RUN(test_unwritable_directory);
  HG_RUN(test_prune);
  return hg_test_finish();
}
