/* The on-disk cache of compiled modules (cubins), separate from the driver so that it can be
 * tested on a machine without a GPU.
 *
 * An entry is one file, <dir>/<32 hex digits of the key>.cubin, holding a fixed header
 * (magic, format version, key, payload length, payload checksum) followed by the cubin. It
 * is written to a temporary file in the same directory and renamed into place, so that a
 * reader sees either no entry or a complete one, whatever other processes do at the same
 * time. A lookup that finds a damaged entry (bad magic, version, key, length or checksum)
 * deletes it and reports it, so that the caller recompiles. */
#ifndef HOPGEN_RUNTIME_CACHE_H
#define HOPGEN_RUNTIME_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cachefile.h"
#include "hopgen/status.h"

/* Bumped whenever the entry layout or what goes into a key changes: old entries then
 * simply stop matching (and their files are never read again). */
#define HG_CACHE_FORMAT_VERSION 1
#define HG_CACHE_MAGIC "HGCUBIN\x1a" /* 8 bytes; \x1a stops `type`/`cat` on the binary */
#define HG_CACHE_HEADER_BYTES 48

/* The cache key of a module (hg_hash128): the PTX text, and everything else that changes the
 * cubin the driver would produce from it (driver version, device name and compute
 * capability, the cache format version). */
hg_hash128_t hg_cache_key(const char *ptx, size_t ptx_len, int driver_version,
                          const char *device_name, int cc_major, int cc_minor);

/* A cubin cache is its directory: the one every hopgen cache shares (cachefile.h). */
typedef hg_cache_dir_t hg_cache_t;

/* The directory from the environment, as every hopgen cache resolves it
 * (hg_cache_dir_from_env): never fails, creates nothing before the first store, and says
 * in why_disabled why there is no cache. */
void hg_cache_from_env(hg_cache_t *c);
/* An explicit directory (tests, tools). */
void hg_cache_at(hg_cache_t *c, const char *dir);

/* The entry's file name for key. */
void hg_cache_path(const hg_cache_t *c, hg_hash128_t key, char *buf, size_t size);

typedef enum hg_cache_result {
  HG_CACHE_MISS,    /* no entry (or the cache is disabled, or the entry is unreadable) */
  HG_CACHE_HIT,     /* *data (malloc'd, the caller frees it) holds the payload */
  HG_CACHE_CORRUPT, /* there was an entry but it was damaged: it has been deleted */
} hg_cache_result_t;

/* Look the key up; why (may be NULL) receives a sentence for MISS-by-error and CORRUPT. */
hg_cache_result_t hg_cache_lookup(const hg_cache_t *c, hg_hash128_t key, void **data, size_t *size,
                                  char *why, size_t why_size);

/* Write an entry atomically (temporary file + rename in the same directory), creating the
 * directory if needed. HG_ERR_IO with a sentence when the directory or file cannot be
 * written; nothing is left behind in that case. A disabled cache stores nothing and
 * succeeds. */
hg_status_t hg_cache_store(const hg_cache_t *c, hg_hash128_t key, const void *data, size_t size);

/* Delete an entry (a cubin the driver refused to load). Absent is not an error. */
void hg_cache_remove(const hg_cache_t *c, hg_hash128_t key);

#endif
