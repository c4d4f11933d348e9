/* The on-disk module cache (see cache.h): keys and where entries go. The hash, the
 * directory, the checked entry format and the atomic write are every cache's (cachefile.c).
 * Plain POSIX file calls; no driver. */
#include "runtime/cache.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hopgen/runtime.h"

#define SEED_PTX UINT64_C(0x686F7067656E2D31)     /* "hopgen-1" */
#define SEED_KEY UINT64_C(0x6B65792D6D617465)     /* "key-mate" */
#define SEED_PAYLOAD UINT64_C(0x7061796C6F616421) /* "payload!" */

static const hg_cache_format_t format = {HG_CACHE_MAGIC, HG_CACHE_FORMAT_VERSION, SEED_PAYLOAD,
                                         HG_CACHE_MAX_ENTRY_BYTES};

hg_cache_key_t hg_cache_key(const char *ptx, size_t ptx_len, int driver_version,
                            const char *device_name, int cc_major, int cc_minor) {
  /* Everything besides the PTX that changes the cubin, then the PTX. */
  return hg_cache_key_make(
      SEED_PTX, SEED_KEY, ptx, ptx_len, "hopgen-cache-v%d|driver=%d|device=%s|sm=%d.%d|",
      HG_CACHE_FORMAT_VERSION, driver_version, device_name ? device_name : "", cc_major, cc_minor);
}

void hg_cache_at(hg_cache_t *c, const char *dir) {
  hg_cache_dir_at(c, dir);
}

void hg_cache_from_env(hg_cache_t *c) {
  hg_cache_dir_from_env(c);
}

void hg_cache_path(const hg_cache_t *c, const hg_cache_key_t *key, char *buf, size_t size) {
  hg_cache_entry_path(c, "", key, ".cubin", buf, size);
}

hg_status_t hg_cache_store(const hg_cache_t *c, const hg_cache_key_t *key, const void *data,
                           size_t size) {
  char path[600];
  hg_cache_path(c, key, path, sizeof path);
  return hg_cache_entry_store(c, path, &format, key, data, size);
}

hg_cache_result_t hg_cache_lookup(const hg_cache_t *c, const hg_cache_key_t *key, void **data,
                                  size_t *size, char *why, size_t why_size) {
  char path[600], *payload = NULL;
  hg_cache_path(c, key, path, sizeof path);
  const hg_cache_result_t r =
      hg_cache_entry_load(c, path, &format, key, &payload, size, why, why_size);
  *data = payload;
  return r;
}

void hg_cache_remove(const hg_cache_t *c, const hg_cache_key_t *key) {
  if (!c->enabled) return;
  char path[600];
  hg_cache_path(c, key, path, sizeof path);
  unlink(path);
}

hg_status_t hg_cache_dir(char *buf, size_t size) {
  hg_cache_dir_t d;
  hg_cache_dir_from_env(&d);
  if (buf && size) snprintf(buf, size, "%s", d.enabled ? d.dir : "");
  if (d.unusable) return hg_error(HG_ERR_IO, "%s", d.why_disabled);
  return hg_ok();
}
