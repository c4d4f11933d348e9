/* The on-disk module cache (see cache.h): keys, the entry format and checked lookups; the
 * hash, the directory and the atomic write are every cache's (cachefile.c). Plain POSIX
 * file calls; no driver. */
#include "runtime/cache.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- keys */

#define SEED_PTX UINT64_C(0x686F7067656E2D31)     /* "hopgen-1" */
#define SEED_KEY UINT64_C(0x6B65792D6D617465)     /* "key-mate" */
#define SEED_PAYLOAD UINT64_C(0x7061796C6F616421) /* "payload!" */

hg_hash128_t hg_cache_key(const char *ptx, size_t ptx_len, int driver_version,
                          const char *device_name, int cc_major, int cc_minor) {
  const hg_hash128_t text = hg_hash128(ptx, ptx_len, SEED_PTX);
  /* Everything besides the PTX that changes the cubin, then the PTX digest. */
  char meta[512];
  const int n = snprintf(meta, sizeof meta, "hopgen-cache-v%d|driver=%d|device=%s|sm=%d.%d|",
                         HG_CACHE_FORMAT_VERSION, driver_version, device_name ? device_name : "",
                         cc_major, cc_minor);
  return hg_hash128(meta, hg_cache_key_append(meta, sizeof meta, n, text), SEED_KEY);
}

static uint64_t payload_checksum(const void *data, size_t size) {
  return hg_hash128(data, size, SEED_PAYLOAD).lo;
}

/* ---------------------------------------------------------------- locations */

void hg_cache_at(hg_cache_t *c, const char *dir) {
  hg_cache_dir_at(c, dir);
}

void hg_cache_from_env(hg_cache_t *c) {
  hg_cache_dir_from_env(c);
}

void hg_cache_path(const hg_cache_t *c, hg_hash128_t key, char *buf, size_t size) {
  snprintf(buf, size, "%s/%016" PRIx64 "%016" PRIx64 ".cubin", c->dir, key.hi, key.lo);
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
  char path[600], tmp_prefix[32];
  hg_cache_path(c, key, path, sizeof path);
  snprintf(tmp_prefix, sizeof tmp_prefix, ".tmp-%016" PRIx64 "-", key.lo);
  uint8_t header[HG_CACHE_HEADER_BYTES];
  header_write(header, key, (uint64_t)size, payload_checksum(data, size));
  return hg_cache_write_atomic(c->dir, path, tmp_prefix, header, sizeof header, data, size);
}

static void say(char *why, size_t why_size, const char *fmt, const char *path, const char *what) {
  if (why && why_size) snprintf(why, why_size, fmt, path, what);
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
    hg_cache_unlink_if_same(path, &st);
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
