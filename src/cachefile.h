/* The on-disk cache mechanics shared by every hopgen cache (the runtime's cubins, emit's MLIR
 * lowerings, the GEMM tuner's file): hashing, keys, where the cache directory is, mkdir -p,
 * atomic writes, and the checked entry format of the cubin and MLIR caches. Below every
 * layer, like status.c, so that no layer depends on another for them. Internal. */
#ifndef HOPGEN_CACHEFILE_H
#define HOPGEN_CACHEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "hopgen/status.h"

/* ---------------------------------------------------------------- hashing */

/* A 128-bit non-cryptographic hash. Keys are not adversarial, and a hash only names an
 * entry's file: every lookup compares the entry's whole key (hg_cache_key_t), so that even
 * a collision never loads the wrong payload. Host byte order: an entry only has to match
 * on a machine of the byte order that wrote it (every machine hopgen targets is
 * little-endian x86-64 or aarch64). */
typedef struct hg_hash128 {
  uint64_t lo, hi;
} hg_hash128_t;

/* Four 64-bit multiply-rotate lanes, 32 bytes a step, avalanche at the end (xxhash-like):
 * every cache's key hashes and payload checksums. */
hg_hash128_t hg_hash128(const void *data, size_t len, uint64_t seed);

/* ---------------------------------------------------------------- keys */

#define HG_CACHE_META_BYTES 512

/* What an entry is stored under, in full: meta (everything besides the big text that
 * changes what is cached: format, tool and driver versions, device) then text (the PTX or
 * MLIR, borrowed: it must outlive the key). hash, over meta then the text's digest (one
 * pass over a long text), names the entry's file; meta and text are written into the entry
 * and compared byte for byte on every lookup. */
typedef struct hg_cache_key {
  hg_hash128_t hash;
  bool usable; /* false when meta did not fit HG_CACHE_META_BYTES: never stored or found */
  size_t meta_len;
  char meta[HG_CACHE_META_BYTES];
  const char *text;
  size_t text_len;
} hg_cache_key_t;

/* The key of text under meta (printf-formatted); seed_text and seed_key tell one cache's
 * hashes from another's. */
hg_cache_key_t hg_cache_key_make(uint64_t seed_text, uint64_t seed_key, const char *text,
                                 size_t text_len, const char *meta_fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* ---------------------------------------------------------------- the directory */

#define HG_CACHE_DIR_BYTES 480

typedef struct hg_cache_dir {
  bool enabled;
  /* A location was configured (or none could be found) but cannot be used: every cache is
   * off, and a front end should say so. False when enabled or off by HOPGEN_CACHE_DIR=off. */
  bool unusable;
  char dir[HG_CACHE_DIR_BYTES];
  char why_disabled[320]; /* "" when enabled */
} hg_cache_dir_t;

/* Where the cache directory is, by the environment alone: $HOPGEN_CACHE_DIR ("off"
 * disables every cache; empty counts as unset), else $XDG_CACHE_HOME/hopgen (only when
 * absolute: the XDG Base Directory spec says a relative one is invalid and must be
 * ignored), else $HOME/.cache/hopgen. Looks at no file. */
void hg_cache_dir_resolve(hg_cache_dir_t *d);
/* The one cache directory: hg_cache_dir_resolve, then checked without creating anything.
 * Disabled and unusable (why_disabled says why) when $HOME is not an existing directory
 * (nothing is ever created under a home that does not exist), when the directory exists
 * but is not a writable directory, or when it does not exist and the deepest existing
 * directory above it is not writable. Never fails. */
void hg_cache_dir_from_env(hg_cache_dir_t *d);
/* An explicit directory (tests, tools); disabled only when the path is too long. */
void hg_cache_dir_at(hg_cache_dir_t *d, const char *dir);

/* ---------------------------------------------------------------- files */

/* mkdir -p dir (mode 0755), tolerating components that other processes create at the same
 * time. HG_ERR_IO with a sentence naming the directory and the reason when it cannot be
 * created or is not a directory. */
hg_status_t hg_cache_mkdir_p(const char *dir);

/* Write head then body as the file path, atomically: a temporary file
 * <dir>/<tmp_prefix>XXXXXX (mode 0644) renamed onto path, so that a reader sees no file or
 * a whole one whatever other writers do. path must lie in dir, which is created first if
 * need be. HG_ERR_IO with a sentence when any step fails; the temporary file is then gone. */
hg_status_t hg_cache_write_atomic(const char *dir, const char *path, const char *tmp_prefix,
                                  const void *head, size_t head_size, const void *body,
                                  size_t body_size);

/* Keep the entries <dir>/<prefix>*<suffix> within max_bytes and max_files: when either is
 * passed, the oldest (by modification time) are deleted until both are below three quarters
 * of their bounds. For caches whose keys change with every build of the library (old builds'
 * entries are never asked for again). Returns how many entries it deleted; failures to read
 * the directory or delete a file only leave more behind. */
int hg_cache_prune(const char *dir, const char *prefix, const char *suffix, uint64_t max_bytes,
                   int max_files);

/* Delete path, a damaged entry that was opened and fstat'ed as seen, unless another process
 * has meanwhile renamed a fresh entry into its place (another inode, which is left alone). */
void hg_cache_unlink_if_same(const char *path, const struct stat *seen);

/* ---------------------------------------------------------------- entries */

/* The entry format of the cubin and MLIR caches, one file per key:
 *   <magic> <format> key=<32 hex> keybytes=<k> bytes=<n> sum=<16 hex>\n
 *   <k bytes: the key's meta then its text><n bytes: the payload>
 * sum is a checksum of the payload. A lookup checks every field, compares the stored key
 * with the one asked for byte for byte, and deletes an entry that fails (it is then made
 * again). Written with hg_cache_write_atomic: a reader sees no entry or a whole one. */
typedef struct hg_cache_format {
  const char *magic; /* no spaces: "hopgen-cubin" */
  int version;       /* bumped when the layout or the key's contents change */
  uint64_t seed_sum; /* the payload checksum's hash seed */
  size_t max_bytes;  /* larger files are not entries */
} hg_cache_format_t;

typedef enum hg_cache_result {
  HG_CACHE_MISS,    /* no entry, a disabled cache, or an unreadable entry (why says) */
  HG_CACHE_HIT,     /* the payload was found under exactly this key */
  HG_CACHE_CORRUPT, /* there was an entry but it was damaged or another key's: deleted */
} hg_cache_result_t;

/* The entry's file name: <dir>/<prefix><32 hex digits of the hash><suffix>. */
void hg_cache_entry_path(const hg_cache_dir_t *d, const char *prefix, const hg_cache_key_t *key,
                         const char *suffix, char *buf, size_t size);

/* Store payload under key at path (from hg_cache_entry_path), creating the directory if
 * need be. A disabled cache, or a key that is not usable, stores nothing and succeeds;
 * HG_ERR_IO with a sentence when writing fails (nothing is left behind). */
hg_status_t hg_cache_entry_store(const hg_cache_dir_t *d, const char *path,
                                 const hg_cache_format_t *f, const hg_cache_key_t *key,
                                 const void *payload, size_t size);

/* Look key up at path. On a hit *payload (malloc'd, NUL-terminated after its *size bytes;
 * the caller frees it) holds the payload. why (may be NULL) receives a sentence for a miss
 * by error and for CORRUPT, "" otherwise. */
hg_cache_result_t hg_cache_entry_load(const hg_cache_dir_t *d, const char *path,
                                      const hg_cache_format_t *f, const hg_cache_key_t *key,
                                      char **payload, size_t *size, char *why, size_t why_size);

#endif
