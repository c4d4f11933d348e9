/* The on-disk cache of compiled modules (cubins), separate from the driver so that it can be
 * tested on a machine without a GPU.
 *
 * An entry is one file, <dir>/<32 hex digits of the key's hash>.cubin, in the format every
 * checked hopgen cache shares (cachefile.h: a header line, the whole key, the cubin). It is
 * written to a temporary file in the same directory and renamed into place, so that a reader
 * sees either no entry or a complete one, whatever other processes do at the same time. A
 * lookup compares the stored key with the one asked for byte for byte (so that a hash
 * collision can never load another kernel's cubin); an entry that fails any check is
 * deleted and reported, so that the caller recompiles. */
#ifndef HOPGEN_RUNTIME_CACHE_H
#define HOPGEN_RUNTIME_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cachefile.h"
#include "hopgen/status.h"

/* Bumped whenever the entry layout or what goes into a key changes: old entries then
 * simply stop matching (and their files are never read again). 2: the whole key is stored
 * in the entry. */
#define HG_CACHE_FORMAT_VERSION 2
#define HG_CACHE_MAGIC "hopgen-cubin"
#define HG_CACHE_MAX_ENTRY_BYTES ((size_t)1 << 30) /* larger files are not entries */

/* The cache key of a module: the PTX text (borrowed: it must outlive the key), and
 * everything else that changes the cubin the driver would produce from it (driver version,
 * device name and compute capability, the cache format version). */
hg_cache_key_t hg_cache_key(const char *ptx, size_t ptx_len, int driver_version,
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
void hg_cache_path(const hg_cache_t *c, const hg_cache_key_t *key, char *buf, size_t size);

/* Look the key up: HG_CACHE_HIT puts the cubin in *data (malloc'd, the caller frees it).
 * why (may be NULL) receives a sentence for a miss by error and for CORRUPT. */
hg_cache_result_t hg_cache_lookup(const hg_cache_t *c, const hg_cache_key_t *key, void **data,
                                  size_t *size, char *why, size_t why_size);

/* Write an entry atomically (temporary file + rename in the same directory), creating the
 * directory if needed. HG_ERR_IO with a sentence when the directory or file cannot be
 * written; nothing is left behind in that case. A disabled cache stores nothing and
 * succeeds. */
hg_status_t hg_cache_store(const hg_cache_t *c, const hg_cache_key_t *key, const void *data,
                           size_t size);

/* Delete an entry (a cubin the driver refused to load). Absent is not an error. */
void hg_cache_remove(const hg_cache_t *c, const hg_cache_key_t *key);

#endif
