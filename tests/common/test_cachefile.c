/* The on-disk cache mechanics every cache shares (src/cachefile.c): pinned hash values,
 * where the cache directory is, mkdir -p, atomic writes and the guarded delete. */
#define _XOPEN_SOURCE 700 /* nftw's FTW_DEPTH | FTW_PHYS, to remove the scratch trees */
#include <errno.h>
#include <ftw.h>
#include <glob.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cachefile.h"
#include "hg_test.h"

/* Every test works below one scratch directory, made by main and removed at the end. */
static char root[512];

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

static void touch(const char *path) {
  FILE *f = fopen(path, "w");
  if (f) fclose(f);
}

/* How many files match a shell pattern (dot files only when the pattern names the dot). */
static size_t matching(const char *pattern) {
  glob_t g;
  const size_t n = glob(pattern, 0, NULL, &g) == 0 ? g.gl_pathc : 0;
  globfree(&g);
  return n;
}

static char *read_whole(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = malloc(4096);
  *len = buf ? fread(buf, 1, 4096, f) : 0;
  fclose(f);
  return buf;
}

/* ---------------------------------------------------------------- hashing */

/* hg_hash128's values as it has always given them (recorded from src/runtime/cache.c's
 * own copy before it moved here). Every cache entry's file name is made from it: a
 * different value orphans every entry already on disk or carried to another machine. */
static void test_hash_values_pinned(void) {
  static const char ptx[] = ".version 8.0\n.target sm_90a\n.entry k() { ret; }\n";
  static const char text42[] = "0123456789abcdef0123456789abcdef0123456789";
  const struct {
    const char *data;
    size_t len;
    uint64_t seed;
    uint64_t hi, lo;
  } cases[] = {
      {"", 0, 0, UINT64_C(0x045eeb1bf1850a2f), UINT64_C(0xa902d45cd80c37ed)},
      {"ab\0", 3, 1, UINT64_C(0xdff27573209334c7), UINT64_C(0x6bce010c4dae1e55)},
      /* the runtime's PTX seed ("hopgen-1"), more than one 32-byte step */
      {text42, 42, UINT64_C(0x686F7067656E2D31), UINT64_C(0xd946363b80358b69),
       UINT64_C(0x4047e98782395119)},
      /* the MLIR cache's text seed ("mlir-txt") */
      {ptx, 45, UINT64_C(0x6D6C69722D747874), UINT64_C(0xffa921e299cd5760),
       UINT64_C(0xfe5a1c6bfbfe367e)},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const hg_hash128_t h = hg_hash128(cases[i].data, cases[i].len, cases[i].seed);
    if (h.hi != cases[i].hi || h.lo != cases[i].lo)
      HG_FAIL("hg_hash128 case %zu: %016" PRIx64 "%016" PRIx64 ", pinned %016" PRIx64 "%016" PRIx64,
              i, h.hi, h.lo, cases[i].hi, cases[i].lo);
    hg_test_checks++;
  }
}

static bool same_hash(hg_hash128_t a, hg_hash128_t b) {
  return a.lo == b.lo && a.hi == b.hi;
}

/* A key holds its meta and borrows its text; the hash covers both; a meta too long to hold
 * makes the key unusable rather than cut. */
static void test_key_make(void) {
  const char *text = "module { }";
  hg_cache_key_t k = hg_cache_key_make(1, 2, text, strlen(text), "m|%d|%s|", 7, "x");
  CHECK(k.usable);
  CHECK_EQ(k.meta_len, 6);
  CHECK(!memcmp(k.meta, "m|7|x|", 6));
  CHECK(k.text == text && k.text_len == strlen(text));
  const hg_cache_key_t same = hg_cache_key_make(1, 2, text, strlen(text), "m|7|x|");
  CHECK(same_hash(k.hash, same.hash));
  CHECK(!same_hash(k.hash, hg_cache_key_make(1, 2, text, strlen(text), "m|8|x|").hash));
  CHECK(!same_hash(k.hash, hg_cache_key_make(1, 2, text, 9, "m|7|x|").hash));
  CHECK(!same_hash(k.hash, hg_cache_key_make(3, 2, text, strlen(text), "m|7|x|").hash));
  CHECK(!same_hash(k.hash, hg_cache_key_make(1, 3, text, strlen(text), "m|7|x|").hash));
  /* "ab" + "c" and "a" + "bc" are different keys */
  CHECK(!same_hash(hg_cache_key_make(1, 2, "c", 1, "ab").hash,
                   hg_cache_key_make(1, 2, "bc", 2, "a").hash));
  char longmeta[HG_CACHE_META_BYTES + 10];
  memset(longmeta, 'm', sizeof longmeta - 1);
  longmeta[sizeof longmeta - 1] = '\0';
  CHECK(!hg_cache_key_make(1, 2, text, 1, "%s", longmeta).usable);
  CHECK(hg_cache_key_make(1, 2, NULL, 0, "m").usable); /* no text: an empty one */
}

/* ---------------------------------------------------------------- the directory */

static void set_or_unset(const char *name, const char *value) {
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
}

static void test_dir_resolution(void) {
  static const char *names[] = {"HOPGEN_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  char *saved[3];
  for (int i = 0; i < 3; i++) saved[i] = getenv(names[i]) ? strdup(getenv(names[i])) : NULL;
  /* Too long by itself, and (476 bytes) too long once "/hopgen" is appended. */
  char too_long[HG_CACHE_DIR_BYTES + 8], long_xdg[HG_CACHE_DIR_BYTES - 3];
  memset(too_long, 'x', sizeof too_long);
  too_long[0] = '/';
  too_long[sizeof too_long - 1] = '\0';
  memcpy(long_xdg, too_long, sizeof long_xdg - 1);
  long_xdg[sizeof long_xdg - 1] = '\0';
  const char *none = "neither HOPGEN_CACHE_DIR, XDG_CACHE_HOME nor HOME is set";
  /* NULL: the variable is unset; want_dir NULL: disabled, why_disabled containing why. */
  const struct {
    const char *env[3];
    const char *want_dir, *why;
  } cases[] = {
      {{"/explicit/dir", "/xdg", "/home/u"}, "/explicit/dir", NULL},
      {{"relative/dir", NULL, "/home/u"}, "relative/dir", NULL}, /* taken as given */
      {{"off", "/xdg", "/home/u"}, NULL, "HOPGEN_CACHE_DIR=off"},
      {{"", "/xdg", "/home/u"}, "/xdg/hopgen", NULL}, /* empty counts as unset */
      {{NULL, "/xdg", "/home/u"}, "/xdg/hopgen", NULL},
      /* a relative $XDG_CACHE_HOME is invalid per the XDG spec: ignored */
      {{NULL, "relative/cache", "/home/u"}, "/home/u/.cache/hopgen", NULL},
      {{NULL, "", "/home/u"}, "/home/u/.cache/hopgen", NULL},
      {{NULL, NULL, "/home/u"}, "/home/u/.cache/hopgen", NULL},
      {{NULL, NULL, NULL}, NULL, none},
      {{NULL, "relative", ""}, NULL, none},
      {{too_long, "/xdg", "/home/u"}, NULL, "longer than 479 bytes"},
      {{NULL, long_xdg, "/home/u"}, NULL, "longer than 479 bytes"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    for (int v = 0; v < 3; v++) set_or_unset(names[v], cases[i].env[v]);
    hg_cache_dir_t d;
    hg_cache_dir_resolve(&d);
    hg_test_checks++;
    if (cases[i].want_dir && (!d.enabled || strcmp(d.dir, cases[i].want_dir) || d.why_disabled[0]))
      HG_FAIL("case %zu: enabled=%d dir \"%s\" why \"%s\", expected the directory %s", i, d.enabled,
              d.dir, d.why_disabled, cases[i].want_dir);
    if (!cases[i].want_dir && (d.enabled || d.dir[0] || !strstr(d.why_disabled, cases[i].why)))
      HG_FAIL("case %zu: enabled=%d dir \"%s\" why \"%s\", expected disabled because %s", i,
              d.enabled, d.dir, d.why_disabled, cases[i].why);
  }
  for (int v = 0; v < 3; v++) {
    set_or_unset(names[v], saved[v]);
    free(saved[v]);
  }

  hg_cache_dir_t given;
  hg_cache_dir_at(&given, "/given");
  CHECK(given.enabled);
  CHECK_STR(given.dir, "/given");
  hg_cache_dir_at(&given, too_long);
  CHECK(!given.enabled && strstr(given.why_disabled, "longer") != NULL);
}

/* ---------------------------------------------------------------- files */

static void test_mkdir_p(void) {
  char deep[700], file[600], below[700];
  snprintf(deep, sizeof deep, "%s/a/b/c", root);
  CHECK_OK(hg_cache_mkdir_p(deep));
  struct stat st;
  CHECK(stat(deep, &st) == 0 && S_ISDIR(st.st_mode));
  CHECK_OK(hg_cache_mkdir_p(deep));               /* already there */
  snprintf(deep, sizeof deep, "%s/a/b/c/", root); /* a trailing slash */
  CHECK_OK(hg_cache_mkdir_p(deep));

  /* Several processes making one deep path at once: every one succeeds. */
  snprintf(deep, sizeof deep, "%s/race/1/2/3/4/5/6/7/8", root);
  enum { KIDS = 8 };
  pid_t kids[KIDS];
  for (int i = 0; i < KIDS; i++) {
    kids[i] = fork();
    if (kids[i] == 0) _exit(hg_cache_mkdir_p(deep).code == HG_OK ? 0 : 1);
  }
  for (int i = 0; i < KIDS; i++) {
    int status = 0;
    CHECK(kids[i] > 0 && waitpid(kids[i], &status, 0) == kids[i]);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  CHECK(stat(deep, &st) == 0 && S_ISDIR(st.st_mode));

  /* A component that is a regular file: a sentence naming the directory and the reason. */
  snprintf(file, sizeof file, "%s/plain", root);
  touch(file);
  CHECK_ERR(hg_cache_mkdir_p(file), HG_ERR_IO, "Not a directory");
  snprintf(below, sizeof below, "%s/sub", file);
  CHECK_ERR(hg_cache_mkdir_p(below), HG_ERR_IO, "cannot create the cache directory");
  CHECK_ERR(hg_cache_mkdir_p(below), HG_ERR_IO, below);
}

static void test_write_atomic(void) {
  char sub[600], path[700], temps[700];
  snprintf(sub, sizeof sub, "%s/not/yet", root);
  snprintf(path, sizeof path, "%s/entry.bin", sub);
  snprintf(temps, sizeof temps, "%s/.tmp-entry-*", sub);
  CHECK_OK(hg_cache_write_atomic(sub, path, ".tmp-entry-", "head|", 5, "body\0tail", 9));
  size_t len = 0;
  char *got = read_whole(path, &len);
  CHECK(got && len == 14 && memcmp(got, "head|body\0tail", 14) == 0);
  free(got);
  struct stat st;
  CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644); /* readable by others */
  CHECK_EQ(matching(temps), 0);

  /* A second write replaces the file whole. */
  CHECK_OK(hg_cache_write_atomic(sub, path, ".tmp-entry-", "", 0, "new", 3));
  got = read_whole(path, &len);
  CHECK(got && len == 3 && memcmp(got, "new", 3) == 0);
  free(got);

  /* The rename fails (no such directory for the target): an error, no temporary file. */
  char nowhere[700];
  snprintf(nowhere, sizeof nowhere, "%s/missing/entry.bin", sub);
  CHECK_ERR(hg_cache_write_atomic(sub, nowhere, ".tmp-entry-", "h", 1, "b", 1), HG_ERR_IO,
            "cannot write the cache entry");
  CHECK_EQ(matching(temps), 0);

  /* A read-only directory (skipped as root, who may write anyway). */
  if (geteuid() != 0) {
    char ro[600], ro_path[700], ro_all[700];
    snprintf(ro, sizeof ro, "%s/readonly", root);
    mkdir(ro, 0555);
    snprintf(ro_path, sizeof ro_path, "%s/entry.bin", ro);
    snprintf(ro_all, sizeof ro_all, "%s/.tmp*", ro);
    CHECK_ERR(hg_cache_write_atomic(ro, ro_path, ".tmp-entry-", "h", 1, "b", 1), HG_ERR_IO,
              "cannot create a temporary file in the cache directory");
    CHECK_EQ(matching(ro_all), 0);
    chmod(ro, 0755);
  }
}

static void test_unlink_if_same(void) {
  char path[600], fresh[600];
  snprintf(path, sizeof path, "%s/entry", root);
  snprintf(fresh, sizeof fresh, "%s/fresh", root);
  touch(path);
  struct stat seen, now;
  CHECK(stat(path, &seen) == 0);
  /* Another writer renames a fresh entry into place: that one stays. */
  touch(fresh);
  CHECK(rename(fresh, path) == 0);
  hg_cache_unlink_if_same(path, &seen);
  CHECK(stat(path, &now) == 0);
  /* The file that was seen: deleted. */
  hg_cache_unlink_if_same(path, &now);
  CHECK(stat(path, &now) != 0 && errno == ENOENT);
}

/* Where the cache may go, checked on the file system (below the scratch root): nothing is
 * created by the check, and a location that cannot be used says why and is flagged. */
static void test_dir_usable(void) {
  static const char *names[] = {"HOPGEN_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  char *saved[3];
  for (int i = 0; i < 3; i++) saved[i] = getenv(names[i]) ? strdup(getenv(names[i])) : NULL;
  char home[600], missing_home[600], file[600], below_file[700], fresh[700], cache[700];
  snprintf(home, sizeof home, "%s/home", root);
  mkdir(home, 0755);
  snprintf(missing_home, sizeof missing_home, "%s/no-such-home", root);
  snprintf(file, sizeof file, "%s/a-file", root);
  touch(file);
  snprintf(below_file, sizeof below_file, "%s/cache", file);
  snprintf(fresh, sizeof fresh, "%s/never-made/yet/there", root);
  snprintf(cache, sizeof cache, "%s/.cache/hopgen", home);
  const struct {
    const char *env[3];
    const char *want_dir; /* NULL: disabled */
    bool unusable;
    const char *why;
  } cases[] = {
      {{NULL, NULL, home}, cache, false, NULL},        /* created on the first store */
      {{fresh, NULL, home}, fresh, false, NULL},       /* the same */
      {{root, NULL, missing_home}, root, false, NULL}, /* HOME does not matter then */
      {{"off", NULL, home}, NULL, false, "HOPGEN_CACHE_DIR=off"},
      {{NULL, NULL, missing_home}, NULL, true, "is not an existing directory"},
      {{NULL, NULL, file}, NULL, true, "is not an existing directory"},
      {{below_file, NULL, home}, NULL, true, "is not a directory"},
      {{file, NULL, home}, NULL, true, "is not a directory"},
      {{NULL, NULL, NULL}, NULL, true, "nor HOME is set"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    for (int v = 0; v < 3; v++) set_or_unset(names[v], cases[i].env[v]);
    hg_cache_dir_t d;
    hg_cache_dir_from_env(&d);
    hg_test_checks++;
    if (cases[i].want_dir && (!d.enabled || d.unusable || strcmp(d.dir, cases[i].want_dir)))
      HG_FAIL("case %zu: enabled=%d unusable=%d dir \"%s\" why \"%s\", expected %s", i, d.enabled,
              d.unusable, d.dir, d.why_disabled, cases[i].want_dir);
    if (!cases[i].want_dir &&
        (d.enabled || d.unusable != cases[i].unusable || !strstr(d.why_disabled, cases[i].why)))
      HG_FAIL("case %zu: enabled=%d unusable=%d why \"%s\", expected disabled because %s", i,
              d.enabled, d.unusable, d.why_disabled, cases[i].why);
  }
  /* The checks created nothing. */
  struct stat st;
  CHECK(stat(missing_home, &st) != 0 && errno == ENOENT);
  CHECK(stat(cache, &st) != 0);
  snprintf(fresh, sizeof fresh, "%s/never-made", root);
  CHECK(stat(fresh, &st) != 0);
  if (geteuid() != 0) { /* permissions bind only a non-root user */
    char ro[700], below_ro[800];
    snprintf(ro, sizeof ro, "%s/read-only", root);
    mkdir(ro, 0555);
    snprintf(below_ro, sizeof below_ro, "%s/cache", ro);
    set_or_unset("HOPGEN_CACHE_DIR", below_ro);
    hg_cache_dir_t d;
    hg_cache_dir_from_env(&d);
    CHECK(!d.enabled && d.unusable && strstr(d.why_disabled, "is not writable"));
    chmod(ro, 0755);
  }
  for (int v = 0; v < 3; v++) {
    set_or_unset(names[v], saved[v]);
    free(saved[v]);
  }
}

/* ---------------------------------------------------------------- entries */

static const hg_cache_format_t test_format = {"hopgen-test", 3, 99, 1 << 20};

/* An entry holds its whole key; another key whose hash is the same (made by hand here: a
 * real collision is not to be found) is refused and the entry deleted, never returned. */
static void test_entry_full_key(void) {
  hg_cache_dir_t d;
  char dir[600], path[800];
  snprintf(dir, sizeof dir, "%s/entries", root);
  hg_cache_dir_at(&d, dir);
  const char *text = "the text that is cached from";
  hg_cache_key_t key = hg_cache_key_make(5, 6, text, strlen(text), "meta|v=1|");
  hg_cache_entry_path(&d, "t-", &key, ".bin", path, sizeof path);
  char *payload = NULL;
  size_t size = 0;
  char why[800];
  CHECK_EQ(hg_cache_entry_load(&d, path, &test_format, &key, &payload, &size, why, sizeof why),
           HG_CACHE_MISS);
  CHECK_OK(hg_cache_entry_store(&d, path, &test_format, &key, "PAYLOAD\0x", 9));
  size_t len = 0;
  char *file = read_whole(path, &len);
  /* the header line, then the whole key, then the payload */
  CHECK(file && !strncmp(file, "hopgen-test 3 key=", 18));
  const char *nl = file ? memchr(file, '\n', len) : NULL;
  CHECK(nl && !memcmp(nl + 1, "meta|v=1|", 9) && !memcmp(nl + 10, text, strlen(text)));
  CHECK(nl && !memcmp(nl + 10 + strlen(text), "PAYLOAD\0x", 9));
  free(file);
  CHECK_EQ(hg_cache_entry_load(&d, path, &test_format, &key, &payload, &size, why, sizeof why),
           HG_CACHE_HIT);
  CHECK(payload && size == 9 && !memcmp(payload, "PAYLOAD\0x", 9) && payload[9] == '\0');
  free(payload);
  /* the same hash, another text of the same length; and another meta */
  hg_cache_key_t twin = key;
  twin.text = "the text that is cached frog";
  CHECK_EQ(hg_cache_entry_load(&d, path, &test_format, &twin, &payload, &size, why, sizeof why),
           HG_CACHE_CORRUPT);
  CHECK(payload == NULL && strstr(why, "collision") && strstr(why, "deleted"));
  CHECK(access(path, F_OK) != 0);
  CHECK_OK(hg_cache_entry_store(&d, path, &test_format, &key, "P", 1));
  twin = key;
  twin.meta[5] = 'w';
  CHECK_EQ(hg_cache_entry_load(&d, path, &test_format, &twin, &payload, &size, why, sizeof why),
           HG_CACHE_CORRUPT);
  CHECK(strstr(why, "collision") != NULL);
  /* a longer text under the same hash: the lengths differ */
  CHECK_OK(hg_cache_entry_store(&d, path, &test_format, &key, "P", 1));
  twin = key;
  twin.text_len -= 1;
  CHECK_EQ(hg_cache_entry_load(&d, path, &test_format, &twin, &payload, &size, why, sizeof why),
           HG_CACHE_CORRUPT);
  /* an unusable key is never stored or found */
  CHECK_OK(hg_cache_entry_store(&d, path, &test_format, &key, "P", 1));
  twin = key;
  twin.usable = false;
  CHECK_EQ(hg_cache_entry_load(&d, path, &test_format, &twin, &payload, &size, why, sizeof why),
           HG_CACHE_MISS);
  CHECK_EQ(hg_cache_entry_load(&d, path, &test_format, &key, &payload, &size, why, sizeof why),
           HG_CACHE_HIT);
  free(payload);
  /* a file that is not an entry at all (a directory in its place) */
  unlink(path);
  mkdir(path, 0755);
  CHECK_EQ(hg_cache_entry_load(&d, path, &test_format, &key, &payload, &size, why, sizeof why),
           HG_CACHE_CORRUPT);
  CHECK(payload == NULL && strstr(why, "not a regular file"));
  rmdir(path);
}

int main(void) {
  HG_RUN(test_hash_values_pinned);
  HG_RUN(test_key_make);
  HG_RUN(test_dir_resolution);
  const char *tmp = getenv("TMPDIR");
  snprintf(root, sizeof root, "%s/hopgen-cachefile-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(root)) {
    fprintf(stderr, "cannot make a scratch directory %s: %s\n", root, strerror(errno));
    return 1;
  }
  HG_RUN(test_mkdir_p);
  HG_RUN(test_write_atomic);
  HG_RUN(test_unlink_if_same);
  HG_RUN(test_dir_usable);
  HG_RUN(test_entry_full_key);
  nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
  return hg_test_finish();
}
