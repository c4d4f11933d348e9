/* The on-disk cache mechanics shared by every hopgen cache (the runtime's cubins, emit's MLIR
 * lowerings, the GEMM tuner's file): hashing, where the cache directory is, mkdir -p and
 * atomic writes. Below every layer, like status.c, so that no layer depends on another for
 * them; each cache keeps its own entry format and its own checked reading. Internal. */
#ifndef HOPGEN_CACHEFILE_H
#define HOPGEN_CACHEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "hopgen/status.h"

/* ---------------------------------------------------------------- hashing */

/* A 128-bit non-cryptographic hash. Keys are not adversarial; 128 bits make an accidental
 * collision between two entries negligible. Host byte order: an entry only has to match on
 * a machine of the byte order that wrote it (every machine hopgen targets is little-endian
 * x86-64 or aarch64). */
typedef struct hg_hash128 {
  uint64_t lo, hi;
} hg_hash128_t;

/* Four 64-bit multiply-rotate lanes, 32 bytes a step, avalanche at the end (xxhash-like):
 * the runtime's cubin keys and payload checksums. */
hg_hash128_t hg_hash128(const void *data, size_t len, uint64_t seed);

/* Two multiply-rotate lanes, 16 bytes a step, splitmix64's finaliser: the MLIR lowering
 * cache's keys and checksums. A second algorithm only because the MLIR cache's file names
 * were made with it: computing them with hg_hash128 would orphan every lowering already
 * carried to a machine without the MLIR tools. It can go at the next HG_MLIR_CACHE_FORMAT
 * bump, which renames every entry anyway. */
hg_hash128_t hg_hash128_two_lane(const void *data, size_t len, uint64_t seed);

/* Keys are hashed from "meta, then a digest": meta (everything besides a text that changes
 * what is cached from it) as snprintf wrote it into buf and returned n (negative on error,
 * size or more when cut short), then the text's 16-byte digest, so that a key costs one pass
 * over a long text. Appends the digest after as much of meta as leaves room for it; returns
 * the length to hash. */
size_t hg_cache_key_append(char *buf, size_t size, int n, hg_hash128_t digest);

/* ---------------------------------------------------------------- the directory */

#define HG_CACHE_DIR_BYTES 480

typedef struct hg_cache_dir {
  bool enabled;
  char dir[HG_CACHE_DIR_BYTES];
  char why_disabled[160]; /* "" when enabled */
} hg_cache_dir_t;

/* The one cache directory, from the environment: $HOPGEN_CACHE_DIR ("off" disables every
 * cache; empty counts as unset), else $XDG_CACHE_HOME/hopgen (only when absolute: the XDG
 * Base Directory spec says a relative one is invalid and must be ignored), else
 * $HOME/.cache/hopgen. Never fails and creates nothing: without a usable location the
 * result is disabled and why_disabled says why. */
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

/* Delete path, a damaged entry that was opened and fstat'ed as seen, unless another process
 * has meanwhile renamed a fresh entry into its place (another inode, which is left alone). */
void hg_cache_unlink_if_same(const char *path, const struct stat *seen);

#endif
