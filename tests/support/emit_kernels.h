/* The kernels that the PTX-backend tests (tests/emit/test_ptx_*.c) and the MLIR-backend
 * tests (tests/emit/test_mlir_*.c) both build: one builder function per kernel, so that
 * the two backends are checked on the very same hg_b_* sequence. Each test checks the
 * result its own way (PTX: the text and ptxas; MLIR: the lowering, ptxas and the MLIR).
 *
 * Every emit_kernel_* creates the kernel under its fixed name into *out (NULL when the
 * creation fails, and then nothing is built) and returns hg_builder_create's status,
 * which the caller checks with CHECK_OK; the caller destroys the builder. Where the two
 * files build slightly different kernels, a bool says which (the MLIR tests ask for the
 * extra ops their checks need). */
#ifndef HG_TEST_EMIT_KERNELS_H
#define HG_TEST_EMIT_KERNELS_H

#include <stdbool.h>
#include <stddef.h>

#include "hopgen/emit.h"

/* Keep a value alive: store it (a predicate as 0/1) to 8-byte slot `slot` of the global
 * buffer `out`, so that neither ptxas nor LLVM can drop the computation. */
void emit_sink(hg_builder_t *b, hg_val_t out, int slot, hg_val_t v);

/* ---------------------------------------------------------------- non-TMA families */

/* "arith": every binop, cmp, select and conversion on i32/i64/f32/pred. mlir_extras adds
 * a separate fmul + fadd after the ffma (must not be contracted) and, at the end, three
 * shifts by constant amounts at and past the width. */
hg_status_t emit_kernel_arith(bool mlir_extras, hg_builder_t **out);

/* "pack": f32x2 -> bf16x2 / f16x2 and back (bf16, f16, e4m3, e5m2). */
typedef struct emit_pack_vals {
  hg_val_t lo, hi, bf, h; /* the two f32 parameters and the two packed values */
  hg_val_t e4, e5;        /* the fp8 packs (satfinite) */
} emit_pack_vals_t;
hg_status_t emit_kernel_pack(emit_pack_vals_t *vals, hg_builder_t **out);

/* "sregs": every special register and %clock64, in a 2x2x1 cluster. */
hg_status_t emit_kernel_sregs(hg_builder_t **out);

/* "memory": loads and stores of every type, width and space (global, shared, a peer's
 * shared memory through mapa), 8/16-bit ones, streaming (.cs) global stores of a u32
 * vector, an f32 and a u64, and a global f32 atomic add. With
 * store_elsewhere each store goes 64 (sub-word: 128) bytes past the load's address, so
 * that LLVM cannot drop a store of what was just loaded from the same place. */
hg_status_t emit_kernel_memory(bool store_elsewhere, hg_builder_t **out);

/* "reductions": one hg_b_red of every (op, element type) pair cp.reduce.async.bulk.tensor
 * has into 8-byte slot i of parameter g (operand loaded from slot 64 + i, so nothing
 * folds), then the same pairs again inside a loop and an if, so that the 16-bit float
 * min/max CAS loops appear several times and at depth (2 x 4 of them). */
hg_status_t emit_kernel_reductions(hg_builder_t **out);

/* "sync": elect, mbarrier init/arrive (local, remote, expect_tx)/try_wait/wait, fences,
 * named barriers, cluster arrive (relaxed and not) and wait, in a 4x1x1 cluster. */
hg_status_t emit_kernel_sync(hg_builder_t **out);

/* "flow": comments (one multi-line, one with a tab and UTF-8), variables of every type, a
 * loop with break_if and nested if/else, a for loop, an early return. */
hg_status_t emit_kernel_flow(hg_builder_t **out);

/* "directives": an empty kernel of 256 threads with .minnctapersm 2; with cluster also a
 * 2x1x1 cluster. */
hg_status_t emit_kernel_directives(bool cluster, hg_builder_t **out);

/* ---------------------------------------------------------------- TMA family */

/* A kernel skeleton (128 threads) with one tensor map "map", a 1024-aligned 8 KiB tile and
 * an mbarrier. */
typedef struct emit_tma_kernel {
  hg_builder_t *b;
  hg_val_t map, tile, bar;
} emit_tma_kernel_t;
hg_status_t emit_tma_kernel(const char *name, emit_tma_kernel_t *k);

/* "tma_load_<rank>d": in a 2x1x1 cluster, five loads of rank `rank` (1..5): plain,
 * multicast, evict_first hint, multicast + evict_last hint, evict_normal hint. */
hg_status_t emit_kernel_tma_load(int rank, hg_builder_t **out);

/* The reduce ops emit_kernel_tma_out issues, in order, and their PTX names. */
#define EMIT_TMA_NREDS 8
extern const hg_reduce_op_t emit_tma_reds[EMIT_TMA_NREDS];
extern const char *const emit_tma_red_names[EMIT_TMA_NREDS];

/* "tma_out_<rank>d": tensor-map prefetch, a TMA prefetch, a store, a store with an
 * evict_first cache hint and one reduce of each op in emit_tma_reds, then a bulk commit and
 * waits (read 1, then 0). */
hg_status_t emit_kernel_tma_out(int rank, hg_builder_t **out);

/* "negative_coord": a 1-D load at coordinate ctaid.x * 64 - 3 (-3 for CTA 0), a value
 * named "coord", returned in *coord. */
hg_status_t emit_kernel_negative_coord(hg_val_t *coord, hg_builder_t **out);

/* "coords_from_params": in a loop, 2-D and 5-D loads and a 5-D store at coordinates from a
 * parameter, the loop counter, constants (-1, INT32_MIN) and a difference. With
 * hint_and_prefetch also an evict_first policy (made before the loop), a 5-D load with it
 * and a 5-D prefetch, after the plain loads. */
hg_status_t emit_kernel_coords_from_params(bool hint_and_prefetch, hg_builder_t **out);

/* ---------------------------------------------------------------- warpgroup family */

typedef struct emit_wgmma_family {
  hg_dtype_t a, b, acc;
} emit_wgmma_family_t;

/* Every wgmma type family: f16, bf16, tf32, the fp8 mixes with both accumulators, s8/u8. */
#define EMIT_WGMMA_NFAMILIES 14
extern const emit_wgmma_family_t emit_wgmma_families[EMIT_WGMMA_NFAMILIES];

bool emit_sixteen_bit(hg_dtype_t t); /* f16 or bf16 */

/* What both backends' PTX must hold for family fa: the m64n<n> instruction's text up to its
 * operands, and the .version line (mixed-signedness integer wgmma needs PTX ISA 8.4,
 * everything else 8.0). */
void emit_wgmma_mnemonic(const emit_wgmma_family_t *fa, int n, char *buf, size_t cap);
const char *emit_wgmma_version(const emit_wgmma_family_t *fa);

/* What emit_kernel_wgmma_matrix issued. */
typedef struct emit_wgmma_matrix {
  const int *ns; /* the five N, smallest first (ns[4] is 256) */
  int n_const;   /* wgmmas with a constant scale-d (A from a descriptor) */
  int n_runtime; /* wgmmas with the run-time scale-d */
} emit_wgmma_matrix_t;

/* "mma_<a>_<b>_<acc>": five N, A from a descriptor and from registers, every transpose
 * combination the types allow, each with the run-time scale-d; with const_scale_too each
 * A-from-descriptor wgmma is preceded by the same one with a constant scale-d (true, or
 * false for the odd transpose combinations). Then commit, wait and the accumulators
 * stored. */
hg_status_t emit_kernel_wgmma_matrix(const emit_wgmma_family_t *fa, bool const_scale_too,
                                     emit_wgmma_matrix_t *info, hg_builder_t **out);

/* One family of each kind for emit_kernel_wgmma_every_n. */
#define EMIT_WGMMA_NREPS 5
extern const emit_wgmma_family_t emit_wgmma_reps[EMIT_WGMMA_NREPS];

/* "mma_all_n_<rep>": every N that emit_wgmma_reps[rep] offers (A from a descriptor), their
 * number in *count; scale-d the run-time predicate, or with const_scale the constant
 * true. */
hg_status_t emit_kernel_wgmma_every_n(size_t rep, bool const_scale, int *count, hg_builder_t **out);

/* "warp_specialized": 384 threads, .minnctapersm 1; warpgroup 0 setmaxnreg.dec 40, the
 * others setmaxnreg.inc 232. */
hg_status_t emit_kernel_warp_specialized(hg_builder_t **out);

/* "stmatrix": x1/x2/x4, each plain and .trans, of bf16 pairs. */
hg_status_t emit_kernel_stmatrix(hg_builder_t **out);

/* "gemm_like": a warp-specialized, cluster-multicast TMA + wgmma main loop (2-stage ring,
 * m64n128 bf16 -> f32), epilogue through stmatrix and one TMA store. comments adds two
 * hg_b_comment lines (barrier setup, epilogue). */
hg_status_t emit_kernel_gemm_like(bool comments, hg_builder_t **out);

/* ---------------------------------------------------------------- sm_80 family */

/* "cp_async": cp.async of 16 bytes (.cg) and of 8 and 4 (.ca), each without a source size,
 * with a run-time one (tid < n ? bytes : 0) and with the constant 0 (zero fill); the
 * 16-byte ones again in a 3-stage loop with commit and wait_group 1; wait_group 0; then a
 * barrier fed by cp.async.mbarrier.arrive.noinc and waited on. */
hg_status_t emit_kernel_cp_async(hg_builder_t **out);

/* What both backends' PTX of emit_kernel_cp_async must hold: each size with (", n, ") and
 * without ("], n;") a source size, commit, wait_group and the .noinc barrier arrival (ptx.c
 * says .shared::cta, NVPTX .shared: the same state space). */
#define EMIT_CP_ASYNC_NEXPECT 11
extern const char *const emit_cp_async_expect[EMIT_CP_ASYNC_NEXPECT];

/* "zero_fill": one 16-byte cp.async whose source size is the constant 0 (*zero), into the
 * shared-memory address *dst, then commit and wait_group 0. */
hg_status_t emit_kernel_zero_fill(hg_val_t *dst, hg_val_t *zero, hg_builder_t **out);

/* "ldmatrix": x1/x2/x4, each plain and .trans, from lane-dependent addresses; every result
 * stored to global memory. */
hg_status_t emit_kernel_ldmatrix(hg_builder_t **out);
/* Its six instructions (x1, x2, x4, each plain and .trans) up to the result list. */
#define EMIT_LDMATRIX_NEXPECT 6
extern const char *const emit_ldmatrix_expect[EMIT_LDMATRIX_NEXPECT];

/* "mma_sync_<t>[_bt]": an ldmatrix + mma.sync loop over k_tiles (t = bf16 or f16): A by
 * ldmatrix x4, B by ldmatrix x2 (.trans when b_trans), one m16n8k16 per iteration into 4
 * f32 accumulator variables, stored at the end. */
hg_status_t emit_kernel_mma_sync(hg_dtype_t t, bool b_trans, hg_builder_t **out);
/* "mma.sync.aligned.m16n8k16.row.col.f32.<t>.<t>.f32": the instruction both backends print. */
void emit_mma_sync_mnemonic(hg_dtype_t t, char *buf, size_t cap);

/* "cp_async_mma": the shape of a cp.async + ldmatrix + mma.sync GEMM main loop: a 2-stage
 * ring of 16x16 A and 16x8 B tiles filled by cp.async (zero fill past k_tiles), each stage
 * waited on with wait_group, read by ldmatrix and multiplied with 4 m16n8k16 bf16 per
 * stage into 16 accumulator variables, then the epilogue. */
hg_status_t emit_kernel_cp_async_mma(hg_builder_t **out);

#endif
