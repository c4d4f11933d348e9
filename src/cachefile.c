/* The mechanics every on-disk cache shares (see cachefile.h): hashes, the cache directory,
 * mkdir -p, atomic writes. Plain POSIX file calls. */
#include "cachefile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- hashing */

static inline uint64_t rotl64(uint64_t x, int r) {
  return (x << r) | (x >> (64 - r));
}

/* Host byte order (see cachefile.h). */
static inline uint64_t read64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

/* hg_hash128's odd 64-bit constants with well-spread bits (the usual golden-ratio-derived
 * primes): odd so that multiplying by them is a bijection on 64-bit words. */
#define K1 UINT64_C(0x9E3779B185EBCA87)
#define K2 UINT64_C(0xC2B2AE3D27D4EB4F)
#define K3 UINT64_C(0x165667B19E3779F9)
#define K4 UINT64_C(0x85EBCA77C2B2AE63)
#define K5 UINT64_C(0x27D4EB2F165667C5)

/* One lane step: for a fixed accumulator it is a bijection of the input word, so two
 * inputs differing in one word always leave the lane in different states. */
static inline uint64_t lane_step(uint64_t acc, uint64_t word) {
  acc += word * K2;
  acc = rotl64(acc, 31);
  return acc * K1;
}

/* Full avalanche of a 64-bit word (every input bit flips each output bit with p ~ 1/2). */
static inline uint64_t avalanche(uint64_t h) {
  h ^= h >> 33;
  h *= UINT64_C(0xFF51AFD7ED558CCD);
  h ^= h >> 33;
  h *= UINT64_C(0xC4CEB9FE1A85EC53);
  h ^= h >> 33;
  return h;
}

hg_hash128_t hg_hash128(const void *data, size_t len, uint64_t seed) {
  const uint8_t *p = (const uint8_t *)data;
  const uint8_t *end = p + len;
  uint64_t v[4] = {seed + K1 + K2, seed + K2, seed, seed - K1};
  while (end - p >= 32) {
    v[0] = lane_step(v[0], read64(p));
    v[1] = lane_step(v[1], read64(p + 8));
    v[2] = lane_step(v[2], read64(p + 16));
    v[3] = lane_step(v[3], read64(p + 24));
    p += 32;
  }
  int i = 0;
  while (end - p >= 8) {
    v[i] = lane_step(v[i], read64(p));
    i = (i + 1) & 3;
    p += 8;
  }
  /* The last 0..7 bytes, zero-padded, with their count in the top byte so that trailing
   * zero bytes are not lost. */
  uint64_t last = 0;
  const size_t rem = (size_t)(end - p);
  if (rem) memcpy(&last, p, rem);
  last ^= (uint64_t)rem << 56;
  v[i] = lane_step(v[i], last);

  const uint64_t n = (uint64_t)len;
  uint64_t a = rotl64(v[0], 1) + rotl64(v[1], 7) + rotl64(v[2], 12) + rotl64(v[3], 18) + n * K5;
  uint64_t b = v[0] ^ rotl64(v[1], 29) ^ rotl64(v[2], 41) ^ rotl64(v[3], 53) ^ (n * K3);
  a = avalanche(a ^ avalanche(b + K4));
  b = avalanche(b ^ rotl64(a, 17) ^ K1);
  hg_hash128_t h = {a, b};
  return h;
}

/* ---------------------------------------------------------------- keys */

hg_cache_key_t hg_cache_key_make(uint64_t seed_text, uint64_t seed_key, const char *text,
                                 size_t text_len, const char *meta_fmt, ...) {
  hg_cache_key_t k;
  memset(&k, 0, sizeof k);
  k.text = text ? text : "";
  k.text_len = text ? text_len : 0;
  va_list ap;
  va_start(ap, meta_fmt);
  const int n = vsnprintf(k.meta, sizeof k.meta, meta_fmt, ap);
  va_end(ap);
  k.usable = n >= 0 && (size_t)n < sizeof k.meta;
  k.meta_len = k.usable ? (size_t)n : 0;
  /* meta, then the text's digest: one pass over a long text; a key's hash only names its
   * file (the whole key is compared on lookup). */
  const hg_hash128_t digest = hg_hash128(k.text, k.text_len, seed_text);
  char buf[HG_CACHE_META_BYTES + 16];
  memcpy(buf, k.meta, k.meta_len);
  memcpy(buf + k.meta_len, &digest.lo, 8);
  memcpy(buf + k.meta_len + 8, &digest.hi, 8);
  k.hash = hg_hash128(buf, k.meta_len + 16, seed_key);
  return k;
}

/* ---------------------------------------------------------------- the directory */

static void set_dir(hg_cache_dir_t *d, const char *a, const char *b) {
  int n = snprintf(d->dir, sizeof d->dir, "%s%s", a, b);
  if (n < 0 || (size_t)n >= sizeof d->dir) {
    d->enabled = false;
    d->dir[0] = '\0';
    snprintf(d->why_disabled, sizeof d->why_disabled,
             "the cache directory path is longer than %zu bytes", sizeof d->dir - 1);
    return;
  }
  d->enabled = true;
  d->why_disabled[0] = '\0';
}

void hg_cache_dir_at(hg_cache_dir_t *d, const char *dir) {
  memset(d, 0, sizeof *d);
  set_dir(d, dir, "");
}

void hg_cache_dir_resolve(hg_cache_dir_t *d) {
  memset(d, 0, sizeof *d);
  const char *env = getenv("HOPGEN_CACHE_DIR");
  if (env && *env) {
    if (strcmp(env, "off") == 0) {
      snprintf(d->why_disabled, sizeof d->why_disabled, "HOPGEN_CACHE_DIR=off");
      return;
    }
    set_dir(d, env, "");
    return;
  }
  const char *xdg = getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/') {
    set_dir(d, xdg, "/hopgen");
    return;
  }
  const char *home = getenv("HOME");
  if (home && *home) {
    set_dir(d, home, "/.cache/hopgen");
    return;
  }
  snprintf(d->why_disabled, sizeof d->why_disabled,
           "neither HOPGEN_CACHE_DIR, XDG_CACHE_HOME nor HOME is set");
}

static void unusable(hg_cache_dir_t *d, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void unusable(hg_cache_dir_t *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->why_disabled, sizeof d->why_disabled, fmt, ap); /* may name d->dir */
  va_end(ap);
  d->enabled = false;
  d->unusable = true;
  d->dir[0] = '\0';
}

/* The variable the directory came from, for sentences. */
static const char *source_of(void) {
  const char *env = getenv("HOPGEN_CACHE_DIR");
  if (env && *env) return "HOPGEN_CACHE_DIR";
  const char *xdg = getenv("XDG_CACHE_HOME");
  return xdg && xdg[0] == '/' ? "XDG_CACHE_HOME" : "HOME";
}

void hg_cache_dir_from_env(hg_cache_dir_t *d) {
  hg_cache_dir_resolve(d);
  if (!d->enabled) {
    /* Off by request is not a problem; no location at all, or one too long, is. */
    d->unusable = strcmp(d->why_disabled, "HOPGEN_CACHE_DIR=off") != 0;
    return;
  }
  const char *src = source_of();
  struct stat st;
  if (!strcmp(src, "HOME")) {
    /* A home that does not exist (HOME=/nonexistent for a service account) gets nothing
     * created under it, even where the process could. */
    const char *home = getenv("HOME");
    if (stat(home, &st) != 0 || !S_ISDIR(st.st_mode)) {
      unusable(d,
               "HOME=%s is not an existing directory, and nothing is created under a home that "
               "does not exist (HOPGEN_CACHE_DIR can name a cache directory)",
               home);
      return;
    }
  }
  /* The deepest existing directory at or above dir must be writable: that is where the
   * first store creates what is missing. */
  char path[HG_CACHE_DIR_BYTES];
  snprintf(path, sizeof path, "%s", d->dir);
  while (stat(path, &st) != 0) {
    const int err = errno;
    const bool top = !strcmp(path, ".") || !strcmp(path, "/");
    if (top || (err != ENOENT && err != ENOTDIR)) {
      unusable(d, "the cache directory %s (from %s) cannot be used: %s: %s", d->dir, src, path,
               strerror(err));
      return;
    }
    char *slash = strrchr(path, '/');
    if (!slash)
      snprintf(path, sizeof path, "."); /* a relative path: below the current directory */
    else if (slash == path)
      path[1] = '\0';
    else
      *slash = '\0';
  }
  if (!S_ISDIR(st.st_mode)) {
    unusable(d, "the cache directory %s (from %s) cannot be used: %s is not a directory", d->dir,
             src, path);
    return;
  }
  if (access(path, W_OK | X_OK) != 0) {
    unusable(d, "the cache directory %s (from %s) cannot be used: %s is not writable (%s)", d->dir,
             src, path, strerror(errno));
    return;
  }
}

/* ---------------------------------------------------------------- files */

hg_status_t hg_cache_mkdir_p(const char *dir) {
  char path[HG_CACHE_DIR_BYTES];
  const size_t n = strlen(dir);
  int err = 0;
  if (n == 0 || n >= sizeof path) {
    err = ENAMETOOLONG;
  } else {
    memcpy(path, dir, n + 1);
    /* Every prefix ending before a '/' (and the whole path), shortest first; EEXIST is
     * success, whoever made it. */
    for (size_t i = 1; i <= n && !err; i++) {
      if (path[i] != '/' && path[i] != '\0') continue;
      const char saved = path[i];
      path[i] = '\0';
      if (mkdir(path, 0755) != 0 && errno != EEXIST) err = errno;
      path[i] = saved;
    }
  }
  struct stat st;
  if (!err && stat(dir, &st) != 0) err = errno;
  if (!err && !S_ISDIR(st.st_mode)) err = ENOTDIR;
  if (err)
    return hg_error(HG_ERR_IO, "cannot create the cache directory %s: %s", dir, strerror(err));
  return hg_ok();
}

static int write_all(int fd, const void *data, size_t size) {
  const uint8_t *p = (const uint8_t *)data;
  while (size > 0) {
    ssize_t w = write(fd, p, size);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += w;
    size -= (size_t)w;
  }
  return 0;
}

hg_status_t hg_cache_write_atomic(const char *dir, const char *path, const char *tmp_prefix,
                                  const void *head, size_t head_size, const void *body,
                                  size_t body_size) {
  HG_TRY(hg_cache_mkdir_p(dir));
  /* In the entry's own directory, so that rename() is atomic (one filesystem); a unique
   * name per writer, so that concurrent writers of one entry never share a file. */
  char tmp[640];
  const int t = snprintf(tmp, sizeof tmp, "%s/%sXXXXXX", dir, tmp_prefix);
  int fd = -1;
  if (t < 0 || (size_t)t >= sizeof tmp)
    errno = ENAMETOOLONG;
  else
    fd = mkstemp(tmp);
  if (fd < 0)
    return hg_error(HG_ERR_IO, "cannot create a temporary file in the cache directory %s: %s", dir,
                    strerror(errno));
  (void)fchmod(fd, 0644); /* mkstemp makes 0600; a shared cache directory wants readers */
  /* No fsync: after a crash an entry may be empty or short, which every cache's checked
   * lookup deletes and rebuilds; a cache is not worth a disk flush per store. */
  int err = 0;
  if (write_all(fd, head, head_size) != 0 || write_all(fd, body, body_size) != 0) err = errno;
  if (close(fd) != 0 && !err) err = errno;
  if (!err && rename(tmp, path) != 0) err = errno;
  if (err) {
    unlink(tmp);
    return hg_error(HG_ERR_IO, "cannot write the cache entry %s: %s", path, strerror(err));
  }
  return hg_ok();
}

void hg_cache_unlink_if_same(const char *path, const struct stat *seen) {
  struct stat now;
  if (stat(path, &now) == 0 && now.st_ino == seen->st_ino && now.st_dev == seen->st_dev)
    unlink(path);
}

/* ---------------------------------------------------------------- entries */

void hg_cache_entry_path(const hg_cache_dir_t *d, const char *prefix, const hg_cache_key_t *key,
                         const char *suffix, char *buf, size_t size) {
  snprintf(buf, size, "%s/%s%016" PRIx64 "%016" PRIx64 "%s", d->dir, prefix, key->hash.hi,
           key->hash.lo, suffix);
}

/* The header line up to and including "bytes=": everything a reader can predict. */
static int header_prefix(char *buf, size_t size, const hg_cache_format_t *f,
                         const hg_cache_key_t *key) {
  return snprintf(buf, size, "%s %d key=%016" PRIx64 "%016" PRIx64 " keybytes=%zu bytes=", f->magic,
                  f->version, key->hash.hi, key->hash.lo, key->meta_len + key->text_len);
}

static uint64_t payload_sum(const hg_cache_format_t *f, const void *data, size_t size) {
  return hg_hash128(data, size, f->seed_sum).lo;
}

hg_status_t hg_cache_entry_store(const hg_cache_dir_t *d, const char *path,
                                 const hg_cache_format_t *f, const hg_cache_key_t *key,
                                 const void *payload, size_t size) {
  if (!d->enabled || !key->usable) return hg_ok();
  if (!payload && size) return hg_error(HG_ERR_INVALID, "a cache entry's payload is NULL");
  /* One buffer for the header and the whole key, so that the write is two calls. */
  const size_t key_bytes = key->meta_len + key->text_len;
  const size_t line_cap = 256 + strlen(f->magic);
  char *head = malloc(line_cap + key_bytes);
  if (!head) return hg_error(HG_ERR_NOMEM, "no memory for the cache entry %s", path);
  int h = header_prefix(head, line_cap, f, key);
  h += snprintf(head + h, line_cap - (size_t)h, "%zu sum=%016" PRIx64 "\n", size,
                payload_sum(f, payload, size));
  memcpy(head + h, key->meta, key->meta_len);
  memcpy(head + (size_t)h + key->meta_len, key->text, key->text_len);
  /* The temporary file: the entry's name with a leading dot and a unique tail. */
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  char tmp_prefix[160];
  snprintf(tmp_prefix, sizeof tmp_prefix, ".%.120s.tmp-", base);
  hg_status_t s = hg_cache_write_atomic(d->dir, path, tmp_prefix, head, (size_t)h + key_bytes,
                                        payload ? payload : "", size);
  free(head);
  return s;
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
    const int x = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
    if (x < 0) return NULL;
    s = s << 4 | (uint64_t)x;
  }
  if (*p != '\n') return NULL;
  *len = v;
  *sum = s;
  return p + 1;
}

/* The whole file at path into a malloc'd, NUL-terminated buffer; NULL with why on a miss by
 * error, *damage set when the file cannot be an entry. */
static char *read_entry(int fd, const char *path, const struct stat *st, size_t max_bytes,
                        size_t *got, const char **damage, char *why, size_t why_size) {
  const size_t size = (size_t)st->st_size;
  if (!S_ISREG(st->st_mode) || st->st_size < 0 || size > max_bytes) {
    *damage = "it is not a regular file of a plausible size";
    return NULL;
  }
  char *file = malloc(size + 1);
  if (!file) {
    say(why, why_size, "cannot allocate memory for the cache entry %s%s", path, "");
    return NULL;
  }
  size_t n = 0;
  while (n < size) {
    const ssize_t r = read(fd, file + n, size - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      say(why, why_size, "cannot read the cache entry %s: %s", path, strerror(errno));
      free(file);
      return NULL;
    }
    if (r == 0) break; /* shrank under us: the length check says so */
    n += (size_t)r;
  }
  file[n] = '\0';
  *got = n;
  return file;
}

hg_cache_result_t hg_cache_entry_load(const hg_cache_dir_t *d, const char *path,
                                      const hg_cache_format_t *f, const hg_cache_key_t *key,
                                      char **payload, size_t *size, char *why, size_t why_size) {
  *payload = NULL;
  *size = 0;
  if (why && why_size) why[0] = '\0';
  if (!d->enabled || !key->usable) return HG_CACHE_MISS;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT)
      say(why, why_size, "cannot open the cache entry %s: %s", path, strerror(errno));
    return HG_CACHE_MISS;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    say(why, why_size, "cannot stat the cache entry %s: %s", path, strerror(errno));
    close(fd);
    return HG_CACHE_MISS;
  }
  const char *damage = NULL;
  bool collision = false;
  size_t got = 0;
  char *file = read_entry(fd, path, &st, f->max_bytes, &got, &damage, why, why_size);
  close(fd);
  if (!file && !damage) return HG_CACHE_MISS;

  size_t at = 0;
  uint64_t want_len = 0, want_sum = 0;
  if (!damage) {
    char prefix[256];
    const int n = header_prefix(prefix, sizeof prefix, f, key);
    const size_t magic_len = strlen(f->magic);
    const size_t key_bytes = key->meta_len + key->text_len;
    const char *body = NULL;
    if (got == 0)
      damage = "it is empty (truncated)";
    else if (memcmp(file, f->magic, got < magic_len ? got : magic_len) != 0 ||
             (got > magic_len && file[magic_len] != ' '))
      damage = "it does not start with the entry magic";
    else if (got < (size_t)n && !memcmp(file, prefix, got))
      damage = "its header is cut short (truncated)";
    else if (got < (size_t)n || memcmp(file, prefix, (size_t)n) != 0)
      damage = "its header names another format version or key";
    else if (!(body = parse_tail(file + n, file + got, &want_len, &want_sum)))
      damage = "its header is malformed or cut short (truncated)";
    else if ((size_t)(file + got - body) < key_bytes ||
             want_len != (size_t)(file + got - body) - key_bytes)
      damage = "its length does not match its header (truncated or extended)";
    else if (memcmp(body, key->meta, key->meta_len) != 0 ||
             memcmp(body + key->meta_len, key->text, key->text_len) != 0)
      collision = true; /* or damage inside the key: either way not this key's entry */
    else {
      at = (size_t)(body - file) + key_bytes;
      if (payload_sum(f, file + at, got - at) != want_sum)
        damage = "its checksum does not match its contents";
    }
  }
  if (damage || collision) {
    free(file);
    hg_cache_unlink_if_same(path, &st);
    if (collision)
      damage = "the key stored in it is not the one asked for (damage there, or another key "
               "with the same hash: a collision)";
    say(why, why_size, "the cache entry %s was damaged and has been deleted: %s", path, damage);
    return HG_CACHE_CORRUPT;
  }
  /* Hand back the payload in the file's own buffer, moved to its start. */
  memmove(file, file + at, got - at + 1);
  *payload = file;
  *size = got - at;
  return HG_CACHE_HIT;
}

/* ---------------------------------------------------------------- pruning */

typedef struct prune_entry {
  char name[256];
  uint64_t bytes;
  int64_t mtime_ns;
} prune_entry_t;

static int older_first(const void *x, const void *y) {
  const prune_entry_t *a = x, *b = y;
  return (a->mtime_ns > b->mtime_ns) - (a->mtime_ns < b->mtime_ns);
}

int hg_cache_prune(const char *dir, const char *prefix, const char *suffix, uint64_t max_bytes,
                   int max_files) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  const size_t lp = strlen(prefix), ls = strlen(suffix);
  prune_entry_t *v = NULL;
  int n = 0, cap = 0;
  uint64_t total = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    const size_t len = strlen(e->d_name);
    if (len < lp + ls || len >= sizeof v->name || strncmp(e->d_name, prefix, lp) != 0 ||
        strcmp(e->d_name + len - ls, suffix) != 0)
      continue;
    char path[HG_CACHE_DIR_BYTES + 300];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 256;
      prune_entry_t *w = realloc(v, sizeof *v * (size_t)cap);
      if (!w) break;
      v = w;
    }
    memcpy(v[n].name, e->d_name, len + 1);
    v[n].bytes = (uint64_t)st.st_size;
    v[n].mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    total += v[n].bytes;
    n++;
  }
  closedir(d);
  int deleted = 0;
  if (v && (total > max_bytes || n > max_files)) {
    qsort(v, (size_t)n, sizeof *v, older_first);
    const uint64_t keep_bytes = max_bytes / 4 * 3;
    const int keep_files = max_files / 4 * 3;
    for (int i = 0; i < n && (total > keep_bytes || n - deleted > keep_files); i++) {
      char path[HG_CACHE_DIR_BYTES + 300];
      snprintf(path, sizeof path, "%s/%s", dir, v[i].name);
      if (unlink(path) == 0) {
        total -= v[i].bytes;
        deleted++;
      }
    }
  }
  free(v);
  return deleted;
}
