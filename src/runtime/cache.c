/* The on-disk module cache (see cache.h): hashing, the entry format, atomic stores and
 * checked lookups. Plain POSIX file calls; no driver. */
#include "runtime/cache.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- hashing */

/* Odd 64-bit constants with well-spread bits (the usual golden-ratio-derived primes): odd
 * so that multiplying by them is a bijection on 64-bit words. */
#define K1 UINT64_C(0x9E3779B185EBCA87)
#define K2 UINT64_C(0xC2B2AE3D27D4EB4F)
#define K3 UINT64_C(0x165667B19E3779F9)
#define K4 UINT64_C(0x85EBCA77C2B2AE63)
#define K5 UINT64_C(0x27D4EB2F165667C5)

static inline uint64_t rotl64(uint64_t x, int r) {
  return (x << r) | (x >> (64 - r));
}

/* Host byte order: a cache entry only ever has to match on the machine that wrote it. */
static inline uint64_t read64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

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

#define SEED_PTX UINT64_C(0x686F7067656E2D31)     /* "hopgen-1" */
#define SEED_KEY UINT64_C(0x6B65792D6D617465)     /* "key-mate" */
#define SEED_PAYLOAD UINT64_C(0x7061796C6F616421) /* "payload!" */

hg_hash128_t hg_cache_key(const char *ptx, size_t ptx_len, int driver_version,
                          const char *device_name, int cc_major, int cc_minor) {
  const hg_hash128_t text = hg_hash128(ptx, ptx_len, SEED_PTX);
  /* Everything besides the PTX that changes the cubin, then the PTX digest. */
  char meta[512];
  int n = snprintf(meta, sizeof meta, "hopgen-cache-v%d|driver=%d|device=%s|sm=%d.%d|",
                   HG_CACHE_FORMAT_VERSION, driver_version, device_name ? device_name : "",
                   cc_major, cc_minor);
  if (n < 0) n = 0;
  if ((size_t)n > sizeof meta - 16) n = (int)(sizeof meta - 16);
  memcpy(meta + n, &text.lo, 8);
  memcpy(meta + n + 8, &text.hi, 8);
  return hg_hash128(meta, (size_t)n + 16, SEED_KEY);
}

static uint64_t payload_checksum(const void *data, size_t size) {
  return hg_hash128(data, size, SEED_PAYLOAD).lo;
}

/* ---------------------------------------------------------------- locations */

static void set_dir(hg_cache_t *c, const char *a, const char *b) {
  int n = snprintf(c->dir, sizeof c->dir, "%s%s", a, b);
  if (n < 0 || (size_t)n >= sizeof c->dir) {
    c->enabled = false;
    c->dir[0] = '\0';
    snprintf(c->why_disabled, sizeof c->why_disabled,
             "the cache directory path is longer than %zu bytes", sizeof c->dir - 1);
    return;
  }
  c->enabled = true;
  c->why_disabled[0] = '\0';
}

void hg_cache_at(hg_cache_t *c, const char *dir) {
  memset(c, 0, sizeof *c);
  set_dir(c, dir, "");
}

void hg_cache_from_env(hg_cache_t *c) {
  memset(c, 0, sizeof *c);
  const char *env = getenv("HOPGEN_CACHE_DIR");
  if (env && *env) {
    if (strcmp(env, "off") == 0) {
      snprintf(c->why_disabled, sizeof c->why_disabled, "HOPGEN_CACHE_DIR=off");
      return;
    }
    set_dir(c, env, "");
    return;
  }
  /* XDG Base Directory: a relative $XDG_CACHE_HOME is invalid and must be ignored. */
  const char *xdg = getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/') {
    set_dir(c, xdg, "/hopgen");
    return;
  }
  const char *home = getenv("HOME");
  if (home && *home) {
    set_dir(c, home, "/.cache/hopgen");
    return;
  }
  snprintf(c->why_disabled, sizeof c->why_disabled,
           "neither HOPGEN_CACHE_DIR, XDG_CACHE_HOME nor HOME is set");
}

void hg_cache_path(const hg_cache_t *c, hg_hash128_t key, char *buf, size_t size) {
  snprintf(buf, size, "%s/%016" PRIx64 "%016" PRIx64 ".cubin", c->dir, key.hi, key.lo);
}

/* mkdir -p: every missing component, tolerating ones that appear concurrently. */
static int make_dirs(const char *dir) {
  char path[sizeof(((hg_cache_t *)0)->dir)];
  size_t n = strlen(dir);
  if (n == 0 || n >= sizeof path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(path, dir, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (path[i] != '/' && path[i] != '\0') continue;
    const char saved = path[i];
    path[i] = '\0';
    if (mkdir(path, 0755) != 0 && errno != EEXIST) return -1;
    path[i] = saved;
  }
  struct stat st;
  if (stat(dir, &st) != 0) return -1;
  if (!S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
    return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------- entries */

/* The header, serialised field by field at fixed offsets (no struct padding questions):
 *   0  magic[8]   8 format version (u32)  12 header bytes (u32)
 *   16 key.lo     24 key.hi                32 payload bytes (u64)  40 payload checksum (u64) */
static void header_write(uint8_t h[HG_CACHE_HEADER_BYTES], hg_hash128_t key, uint64_t size,
                         uint64_t sum) {
  const uint32_t version = HG_CACHE_FORMAT_VERSION, hbytes = HG_CACHE_HEADER_BYTES;
  memcpy(h, HG_CACHE_MAGIC, 8);
  memcpy(h + 8, &version, 4);
  memcpy(h + 12, &hbytes, 4);
  memcpy(h + 16, &key.lo, 8);
  memcpy(h + 24, &key.hi, 8);
  memcpy(h + 32, &size, 8);
  memcpy(h + 40, &sum, 8);
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

static int read_all(int fd, void *data, size_t size, size_t *got) {
  uint8_t *p = (uint8_t *)data;
  size_t done = 0;
  while (done < size) {
    ssize_t r = read(fd, p + done, size - done);
    if (r < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (r == 0) break;
    done += (size_t)r;
  }
  *got = done;
  return 0;
}

hg_status_t hg_cache_store(const hg_cache_t *c, hg_hash128_t key, const void *data, size_t size) {
  if (!c->enabled) return hg_ok();
  if (make_dirs(c->dir) != 0)
    return hg_error(HG_ERR_IO, "cannot create the cache directory %s: %s", c->dir, strerror(errno));
  char path[600], tmp[640];
  hg_cache_path(c, key, path, sizeof path);
  /* Same directory as the entry, so that rename() is atomic (same filesystem). */
  snprintf(tmp, sizeof tmp, "%s/.tmp-%016" PRIx64 "-XXXXXX", c->dir, key.lo);
  int fd = mkstemp(tmp);
  if (fd < 0)
    return hg_error(HG_ERR_IO, "cannot create a temporary file in the cache directory %s: %s",
                    c->dir, strerror(errno));
  uint8_t header[HG_CACHE_HEADER_BYTES];
  header_write(header, key, (uint64_t)size, payload_checksum(data, size));
  (void)fchmod(fd, 0644); /* mkstemp makes 0600; a shared cache directory wants readers */
  int err = 0;
  if (write_all(fd, header, sizeof header) != 0 || write_all(fd, data, size) != 0) err = errno;
  if (close(fd) != 0 && !err) err = errno;
  if (!err && rename(tmp, path) != 0) err = errno;
  if (err) {
    unlink(tmp);
    return hg_error(HG_ERR_IO, "cannot write the cache entry %s: %s", path, strerror(err));
  }
  return hg_ok();
}

static void say(char *why, size_t why_size, const char *fmt, const char *path, const char *what) {
  if (why && why_size) snprintf(why, why_size, fmt, path, what);
}

/* Delete a damaged entry, unless another process has meanwhile renamed a fresh entry into
 * its place (then the path names a different inode, which is left alone). */
static void remove_if_same(const char *path, const struct stat *seen) {
  struct stat now;
  if (stat(path, &now) == 0 && now.st_ino == seen->st_ino && now.st_dev == seen->st_dev)
    unlink(path);
}

hg_cache_result_t hg_cache_lookup(const hg_cache_t *c, hg_hash128_t key, void **data, size_t *size,
                                  char *why, size_t why_size) {
  *data = NULL;
  *size = 0;
  if (why && why_size) why[0] = '\0';
  if (!c->enabled) return HG_CACHE_MISS;
  char path[600];
  hg_cache_path(c, key, path, sizeof path);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
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
  uint8_t h[HG_CACHE_HEADER_BYTES];
  size_t got = 0;
  uint8_t *payload = NULL;
  uint64_t psize = 0, psum = 0;
  if (read_all(fd, h, sizeof h, &got) != 0) {
    say(why, why_size, "cannot read the cache entry %s: %s", path, strerror(errno));
    close(fd);
    return HG_CACHE_MISS;
  }
  if (got < sizeof h) {
    damage = "it is shorter than its header (truncated)";
  } else {
    uint32_t version, hbytes;
    hg_hash128_t k;
    memcpy(&version, h + 8, 4);
    memcpy(&hbytes, h + 12, 4);
    memcpy(&k.lo, h + 16, 8);
    memcpy(&k.hi, h + 24, 8);
    memcpy(&psize, h + 32, 8);
    memcpy(&psum, h + 40, 8);
    if (memcmp(h, HG_CACHE_MAGIC, 8) != 0)
      damage = "its magic number is wrong";
    else if (version != HG_CACHE_FORMAT_VERSION || hbytes != HG_CACHE_HEADER_BYTES)
      damage = "it has another format version";
    else if (k.lo != key.lo || k.hi != key.hi)
      damage = "its header names another key";
    else if ((uint64_t)st.st_size != HG_CACHE_HEADER_BYTES + psize)
      damage = "its length does not match its header (truncated or extended)";
  }
  if (!damage) {
    payload = (uint8_t *)malloc(psize ? (size_t)psize : 1);
    if (!payload) {
      say(why, why_size, "cannot allocate memory for the cache entry %s%s", path, "");
      close(fd);
      return HG_CACHE_MISS;
    }
    if (read_all(fd, payload, (size_t)psize, &got) != 0) {
      say(why, why_size, "cannot read the cache entry %s: %s", path, strerror(errno));
      free(payload);
      close(fd);
      return HG_CACHE_MISS;
    }
    if (got != psize)
      damage = "it is shorter than its header says (truncated)";
    else if (payload_checksum(payload, (size_t)psize) != psum)
      damage = "its checksum does not match its contents";
  }
  close(fd);
  if (damage) {
    free(payload);
    remove_if_same(path, &st);
    say(why, why_size, "the cache entry %s was damaged and has been deleted: %s", path, damage);
    return HG_CACHE_CORRUPT;
  }
  *data = payload;
  *size = (size_t)psize;
  return HG_CACHE_HIT;
}

void hg_cache_remove(const hg_cache_t *c, hg_hash128_t key) {
  if (!c->enabled) return;
  char path[600];
  hg_cache_path(c, key, path, sizeof path);
  unlink(path);
}
