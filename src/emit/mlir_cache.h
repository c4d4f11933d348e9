/* hopgen emit layer: the on-disk cache of MLIR lowerings (mlir_cache.c), private.
 *
 * Lowering (mlir_lower.c) is a pure function of the MLIR text and the pass pipeline, and
 * the machines that run kernels have no MLIR tools: so hg_mlir_to_ptx (emit.h) looks the
 * text up here first and runs mlir-opt-22 only on a miss. An entry is one file,
 *   <dir>/mlir-<32 hex digits of the key's hash>.ptx
 * in the format every checked hopgen cache shares (cachefile.h): a header line
 *   hopgen-mlir-ptx 2 key=<32 hex> keybytes=<k> bytes=<n> sum=<16 hex>\n
 * then the whole key (the format, lowering version and pipeline, then the MLIR text), then
 * the n bytes of PTX. A lookup checks every field, compares the stored key with the one
 * asked for byte for byte (a hash collision can never hand back another kernel's PTX), and
 * deletes an entry that fails; it is then lowered again. Entries are written to a temporary
 * file in the same directory and renamed into place: a reader sees no entry or a whole one,
 * whatever other processes write at the same time.
 *
 * The directory is the one every hopgen cache shares (src/cachefile.c: $HOPGEN_CACHE_DIR,
 * "off" disables; else $XDG_CACHE_HOME/hopgen when absolute; else $HOME/.cache/hopgen), the
 * runtime's cubins included: copying it to another machine carries the lowerings with it.
 *
 * What the key does not hold: the MLIR tool's own version. The key cannot ask the tool
 * (the point is to need none), so a changed LLVM whose PTX differs is not noticed;
 * bump HG_MLIR_LOWER_VERSION (mlir_lower.c) when the pipeline, the PTX extraction or the
 * supported MLIR release changes. */
#ifndef HOPGEN_EMIT_MLIR_CACHE_H
#define HOPGEN_EMIT_MLIR_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cachefile.h"
#include "hopgen/emit.h"

/* The entry layout and key contents; bump when they change (2: the whole key is stored). */
#define HG_MLIR_CACHE_FORMAT 2
#define HG_MLIR_CACHE_MAX_ENTRY_BYTES ((size_t)256 << 20) /* larger files are not entries */

/* A key: the MLIR text (borrowed), the lowering version and the pass pipeline. */
typedef hg_cache_key_t hg_mlir_key_t;

/* The key of a lowering of the MLIR text mlir (which must outlive the key). */
hg_mlir_key_t hg_mlir_cache_key(const char *mlir, size_t len);

/* A lowering cache is its directory, the one every hopgen cache shares. */
typedef hg_cache_dir_t hg_mlir_cache_t;

/* The directory from the environment (hg_cache_dir_from_env, see above). Never fails:
 * without a usable location the cache is disabled and why_disabled says why. Nothing is
 * created before a store. */
void hg_mlir_cache_from_env(hg_mlir_cache_t *c);
/* An explicit directory (tests). */
void hg_mlir_cache_at(hg_mlir_cache_t *c, const char *dir);

/* The entry's file name for key. */
void hg_mlir_cache_path(const hg_mlir_cache_t *c, const hg_mlir_key_t *key, char *buf, size_t size);

/* Look key up: HG_CACHE_HIT puts the PTX in *ptx (the caller frees it). why (may be NULL)
 * receives a sentence for a miss by error and for CORRUPT, "" otherwise. */
hg_cache_result_t hg_mlir_cache_lookup(const hg_mlir_cache_t *c, const hg_mlir_key_t *key,
                                       hg_text_t *ptx, char *why, size_t why_size);

/* Write an entry atomically, creating the directory if needed. HG_ERR_IO with a sentence
 * when that fails (nothing is left behind); a disabled cache stores nothing and succeeds. */
hg_status_t hg_mlir_cache_store(const hg_mlir_cache_t *c, const hg_mlir_key_t *key, const char *ptx,
                                size_t len);

/* Delete an entry whose PTX turned out unusable. Absent is not an error. */
void hg_mlir_cache_remove(const hg_mlir_cache_t *c, const hg_mlir_key_t *key);

/* The name of the kernel of an MLIR module: the first llvm.func marked nvvm.kernel (what
 * hg_emit_mlir prints) or gpu.func marked kernel. False when there is none. */
bool hg_mlir_kernel_name(const char *mlir, char *name, size_t size);

#endif
