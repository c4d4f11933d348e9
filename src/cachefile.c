/* The mechanics every on-disk cache shares (see cachefile.h): hashes, the cache directory,
 * mkdir -p, atomic writes. Plain POSIX file calls. */
#include "cachefile.h"

#include <errno.h>
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

/* hg_hash128_two_lane's odd constants ("nothing up the sleeve": the fractional digits of
 * the golden ratio, pi and e), odd so that multiplying by one is a bijection of 64-bit
 * words; the finaliser's two are splitmix64's. */
#define M_GOLD UINT64_C(0x9E3779B97F4A7C15)
#define M_PI64 UINT64_C(0x243F6A8885A308D3)
#define M_E64 UINT64_C(0xB7E151628AED2A6B)

static inline uint64_t finalise(uint64_t x) {
  x ^= x >> 30;
  x *= UINT64_C(0xBF58476D1CE4E5B9);
  x ^= x >> 27;
  x *= UINT64_C(0x94D049BB133111EB);
  x ^= x >> 31;
  return x;
}

/* One 16-byte block into the two lanes. For a fixed state, each lane's update is a
 * bijection of its input word (multiply by an odd constant, xor, rotate, multiply), and
 * the cross-additions are invertible: two blocks that differ anywhere leave different
 * states, and no state information is lost between blocks. */
static inline void absorb(uint64_t *a, uint64_t *b, uint64_t x, uint64_t y) {
  *a = rotl64(*a ^ (x * M_GOLD), 31) * M_PI64;
  *b = rotl64(*b ^ (y * M_PI64), 27) * M_E64;
  *a += *b;
  *b += *a;
}

hg_hash128_t hg_hash128_two_lane(const void *data, size_t len, uint64_t seed) {
  const uint8_t *p = (const uint8_t *)data;
  uint64_t a = seed ^ M_PI64, b = rotl64(seed, 32) ^ M_E64;
  size_t n = len;
  for (; n >= 16; n -= 16, p += 16) absorb(&a, &b, read64(p), read64(p + 8));
  /* The last 0..15 bytes, zero-padded; the length below tells "ab" from "ab\0". */
  uint8_t tail[16] = {0};
  if (n) memcpy(tail, p, n);
  absorb(&a, &b, read64(tail), read64(tail + 8));
  a ^= (uint64_t)len * M_GOLD;
  b ^= rotl64((uint64_t)len, 17);
  a = finalise(a + rotl64(b, 23));
  b = finalise(b ^ a * M_E64);
  return (hg_hash128_t){.lo = a ^ rotl64(b, 41), .hi = b};
}

size_t hg_cache_key_append(char *buf, size_t size, int n, hg_hash128_t digest) {
  size_t at = n < 0 ? 0 : (size_t)n;
  if (at > size - 16) at = size - 16;
  memcpy(buf + at, &digest.lo, 8);
  memcpy(buf + at + 8, &digest.hi, 8);
  return at + 16;
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

void hg_cache_dir_from_env(hg_cache_dir_t *d) {
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
