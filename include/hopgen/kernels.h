/* hopgen kernel generators — TMA copy kernels and GEMMs, driven through the builder
 * (emit.h) from plans (sm90.h), plus the drivers that run, check and time them on the
 * GPU (runtime.h).
 *
 * Generation is pure: a spec in, PTX (or MLIR-lowered PTX) out, no GPU needed; every
 * variant is checked with ptxas in CI. The run/check/bench drivers load the result
 * through the runtime. */
#ifndef HOPGEN_KERNELS_H
#define HOPGEN_KERNELS_H

#include <stdbool.h>
#include <stdint.h>

#include "hopgen/builders.h"
#include "hopgen/emit.h"
#include "hopgen/runtime.h"
#include "hopgen/sm90.h"
#include "hopgen/status.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: what libhopgen.so exports */

/* ---------------------------------------------------------------- generated kernels */

/* A generated kernel: its code and what a launch needs besides the grid. */
typedef struct hg_kernel {
  hg_text_t ptx;       /* PTX for the driver (from either backend) */
  hg_text_t mlir;      /* the MLIR module when the MLIR backend made it, else empty */
  char name[128];      /* entry point */
  uint32_t threads;    /* per CTA, 1-D */
  uint32_t smem_bytes; /* dynamic shared memory */
  uint32_t cluster[3]; /* required cluster shape ({1,1,1}: none) */
  double gen_ms;       /* spec -> PTX, including MLIR lowering */
} hg_kernel_t;

void hg_kernel_free(hg_kernel_t *k);
/* Print the builder's program through a backend into k (the common tail of generators). */
hg_status_t hg_kernel_finish(hg_builder_t *b, hg_backend_t be, hg_kernel_t *k);
/* A second kernel in k's module: more's PTX from its first `.visible .entry` on appended to
 * k's (the module-level lines, PTX version, target and the dynamic shared memory's
 * declaration, must be the same in both: kernels of one generator). Refused with a sentence
 * when more's PTX has no entry. */
hg_status_t hg_kernel_append_entry(hg_kernel_t *k, const hg_kernel_t *more);

/* ---------------------------------------------------------------- utility kernels */

/* Fresh random data, never zeros: hg_fill_random_<dtype>(ptr, count, seed) writes count
 * elements, uniform in [-1, 1) for 16/32-bit floats, finite fp8 of magnitude < 2 with a
 * random sign, random bits for integers. 256 threads, any grid (grid-stride loop). */
hg_status_t hg_gen_fill_random(hg_dtype_t dtype, hg_backend_t be, hg_kernel_t *k);
/* dst(r,c,z) = src(r,c,z) for elements of esize (1, 2, 4) bytes, with independent leading
 * dimensions and batch strides, and dst(r,c,z) = 0 for cols <= c < ld_dst: copies an operand
 * TMA cannot address (leading dimension or base not a multiple of 16 bytes) into packed rows
 * of 16-byte multiples. Bandwidth-bound (repack.c): aligned 16-byte loads of the source
 * blocks, funnel shifts, 16-byte stores. The source needs only its elements aligned; dst,
 * ld_dst * esize and batch_stride_dst * esize must be multiples of 16 bytes. Parameters
 * (dst, src, rows, cols, batch, ld_dst, ld_src, batch_stride_dst, batch_stride_src: I64;
 * lanes_log2: I32) and grid as hg_repack_geometry says; hg_repack_launch does both. */
hg_status_t hg_gen_repack(int esize, hg_backend_t be, hg_kernel_t *k);
/* The repack's body into a builder made by the caller (what hg_gen_repack prints; tests run
 * it on the CPU with an IR interpreter). */
hg_status_t hg_repack_build(hg_builder_t *b, int esize);
typedef struct hg_repack_args {
  hg_devptr_t dst, src;
  int64_t rows, cols, batch; /* elements; cols contiguous */
  int64_t ld_dst, ld_src;    /* elements between rows */
  int64_t bs_dst, bs_src;    /* elements between batches */
} hg_repack_args_t;
/* The repack's grid and block (the stream left 0) and its lanes_log2 parameter: 2^lanes_log2
 * threads per row (up to a warp), 256 / 2^lanes_log2 rows per CTA along x, the batch along z
 * (up to 65535 CTAs; the kernel loops over the rest). Refuses, with the rule, what the kernel
 * cannot do (see hg_gen_repack). */
hg_status_t hg_repack_geometry(const hg_repack_args_t *x, int esize, hg_launch_t *l,
                               int32_t *lanes_log2);
/* Launch a loaded hg_gen_repack kernel of esize-byte elements on x (nothing for an empty
 * operand). */
hg_status_t hg_repack_launch(hg_rt_t *rt, hg_function_t *fn, int esize, const hg_repack_args_t *x,
                             hg_stream_t stream);
/* Both operands of a GEMM in one launch (one host launch fewer per run when both are
 * repacked): CTAs [0, ctas_a) along x copy a, the rest b, each as hg_gen_repack would with its
 * own rows, columns, leading dimensions, batch strides and lanes_log2; the batch (equal for
 * both) along z. Parameters: a's (dst, src, rows, cols, ld_dst, ld_src, batch_stride_dst,
 * batch_stride_src: I64; lanes_log2: I32), then b's, then batch: I64, ctas_a: I32. */
hg_status_t hg_gen_repack_pair(int esize, hg_backend_t be, hg_kernel_t *k);
hg_status_t hg_repack_pair_build(hg_builder_t *b, int esize);
/* The pair's grid (x: a's CTAs then b's; an operand with nothing to copy gets none), each
 * operand's lanes_log2 and ctas_a, with each operand's rules checked as hg_repack_geometry
 * does and the batches equal. */
hg_status_t hg_repack_pair_geometry(const hg_repack_args_t *a, const hg_repack_args_t *b, int esize,
                                    hg_launch_t *l, int32_t lanes_log2[2], int32_t *ctas_a);
/* Launch a loaded hg_gen_repack_pair kernel on a and b (nothing when both are empty). */
hg_status_t hg_repack_pair_launch(hg_rt_t *rt, hg_function_t *fn, int esize,
                                  const hg_repack_args_t *a, const hg_repack_args_t *b,
                                  hg_stream_t stream);
/* The repack alone against the driver's device-to-device copy, in the same process (hopgen
 * bench repack): rows x cols (x batch) of type, rows ld_src elements apart (0: cols), the
 * source `offset` elements past a 256-byte boundary; fresh random data, every destination
 * byte verified (padding zero), then the median of interleaved (repack, D2D copy of the
 * packed bytes) pairs. GB/s counts read + write: the tensor's bytes plus the packed bytes
 * for the repack, twice the packed bytes for the copy. With pair_rows > 0, a second operand
 * (B: pair_rows rows of the same columns, ld_src, offset and batch, as a GEMM's K-major B) is
 * copied with the first by the pair kernel in one launch (hg_gen_repack_pair; both verified),
 * and the two one-operand launches it replaces are timed beside it. */
typedef struct hg_repack_bench {
  hg_dtype_t type;
  int64_t rows, cols, batch, ld_src;
  int64_t pair_rows; /* 0: one operand */
  int offset;
  int warmup, runs; /* 0: 5 and 30 */
  uint64_t seed;    /* 0: a fresh one */
} hg_repack_bench_t;
typedef struct hg_repack_bench_result {
  char device[128];
  char kernel[64];
  hg_repack_args_t args;   /* as launched */
  hg_repack_args_t args_b; /* pair_rows > 0: B's */
  int esize;
  int32_t lanes_log2, lanes_log2_b;
  uint64_t ctas;
  uint64_t bytes_read, bytes_written;
  bool verified;
  double repack_ms, repack_min_ms, d2d_ms; /* medians (and the repack's fastest run) */
  double two_ms;                           /* pair_rows > 0: the two one-operand launches */
  double repack_gbs, d2d_gbs, ratio;       /* ratio = repack_gbs / d2d_gbs */
} hg_repack_bench_result_t;
/* The description's problems, as a sentence (hg_repack_bench_run calls it). */
hg_status_t hg_repack_bench_validate(const hg_repack_bench_t *bench);
hg_status_t hg_repack_bench_run(hg_rt_t *rt, const hg_repack_bench_t *bench, hg_backend_t be,
                                hg_repack_bench_result_t *out);

/* ---------------------------------------------------------------- TMA copy kernels */
/* (owned by the TMA kernels work: specs, generators, run/check drivers, streaming copy)
 *
 * The kernels of the classic CuTe TMA tutorial, generated from a spec: each CTA moves one
 * tile of a global tensor between global and shared memory with TMA, one elected thread
 * issuing the boxes of the plan (hg_tma_plan_make) and an mbarrier counting the bytes.
 *   load       one CTA per tile: poison the stage buffer, TMA-load the tile, wait on the
 *              mbarrier, dump the whole stage buffer to global memory for the host to
 *              compare byte by byte with hg_model_tma_load.
 *   prefetch   the same, with an L2 prefetch (cp.async.bulk.prefetch.tensor) of every box
 *              before the load.
 *   multicast  a load with cluster > 1: the C CTAs of a cluster share one tile, each issues
 *              its slice of the boxes with .multicast::cluster to all C, and every CTA
 *              dumps the whole tile.
 *   store, reduce-*  each CTA fills its stage buffer from a global image, then TMA-stores
 *              (or reduces) the tile; the host compares the whole output allocation with
 *              hg_model_tma_store (out-of-bounds elements skipped, the rest untouched). */

/* One TMA copy kernel. Modes are in the order the user names them (a row-major [N, K]
 * matrix is shape {N, K}, strides {K, 1}); tiles cover the grid with mode 0 varying
 * fastest: tile t = (t0, t1, ...) starts at origin + (t0 * tile[0], t1 * tile[1], ...). */
typedef struct hg_tma_spec {
  hg_tma_op_t op;                  /* HG_TMA_LOAD (multicast when cluster > 1), _PREFETCH,
                                      _STORE, _REDUCE_* */
  hg_dtype_t dtype;                /* an 8, 16 or 32-bit type */
  int rank;                        /* 1..5 */
  int64_t shape[HG_TMA_MAX_RANK];  /* global extent per mode */
  int64_t stride[HG_TMA_MAX_RANK]; /* elements; all 0: packed row-major (last mode contiguous) */
  int tile[HG_TMA_MAX_RANK];       /* the CTA tile per mode (the planner picks the boxes) */
  int grid[HG_TMA_MAX_RANK];       /* tiles along each mode; 0: enough to reach the end of the
                                      tensor from the origin. The grid has prod(grid) tiles */
  int32_t origin[HG_TMA_MAX_RANK]; /* where tile (0,...,0) starts: signed, may be negative;
                                      along the unit-stride mode a multiple of 16 bytes */
  int cluster;                     /* loads: CTAs sharing each tile by multicast; 0 or 1: none */
  hg_swizzle_mode_t swizzle;       /* of the stage buffer (and the tensor map) */
  bool oob_nan;                    /* loads of float types: NaN instead of zero fill */
} hg_tma_spec_t;

/* The tutorial's defaults: a 256 x 256 row-major f16 matrix, one 64 x 64 tile at (0, 0),
 * 128B swizzle, no cluster (a multicast load is op HG_TMA_LOAD with cluster > 1). */
hg_tma_spec_t hg_tma_spec_default(hg_tma_op_t op);
/* Check a spec (types, ranks, extents, cluster, reduce op vs type, int32 range of every
 * tile's coordinates), fill packed strides and automatic grid extents; the sentence names
 * the field. hg_tma_generate and hg_tma_run call it. */
hg_status_t hg_tma_spec_normalize(hg_tma_spec_t *spec);
/* The TMA plan of a normalized spec: the stage layout hg_tma_smem_layout gives the tile,
 * planned with hg_tma_plan_make (which refuses an innermost origin that is not a multiple
 * of 16 bytes: the GPU raises an illegal instruction on such a coordinate). */
hg_status_t hg_tma_spec_plan(const hg_tma_spec_t *spec, hg_tma_plan_t *plan);
/* Tiles in the grid, CTAs launched (tiles x cluster) and the tensor's extent in bytes
 * (from element 0 to one past the last element) of a normalized spec. */
int64_t hg_tma_spec_tiles(const hg_tma_spec_t *spec);
uint64_t hg_tma_spec_tensor_bytes(const hg_tma_spec_t *spec);
/* The boxes a store or reduce kernel for the normalized spec s (plan p) writes without TMA,
 * over all its tiles: those with a negative coordinate (hg_tma_box_issuable). 0 for loads
 * and prefetches, which TMA takes at any coordinate. Counted per box and mode, not per
 * tile, so it is cheap for any grid. */
int64_t hg_tma_spec_fallback_boxes(const hg_tma_spec_t *s, const hg_tma_plan_t *p);
/* "load f16 [256,256] tile [64,64] grid [1,1] origin [0,0] 128B" for logs. */
int hg_tma_spec_print(const hg_tma_spec_t *spec, char *buf, size_t size);

/* Generate the kernel (128 threads, 1-D grid of hg_tma_spec_tiles x cluster CTAs, cluster
 * (cluster,1,1) when > 1) and its plan (plan may be NULL). Pure: no GPU. Parameters, in
 * order: the tensor map; an I64 global pointer (loads: the smem dump, one plan.smem_bytes
 * image per CTA; stores: the stage images, one per CTA); an I64 pointer to one u32 status
 * word per CTA (low byte 1: finished, 2: the mbarrier wait timed out, after about 5 s;
 * stores and reductions put above it, shifted by 8, how many of their boxes they wrote
 * without TMA); per mode the I32 origin; per mode the I32 tile count (grid); stores and
 * reductions only: the tensor's I64 base address, per mode its I64 extent, per mode its
 * I64 stride in bytes. CTA c moves tile c (c / cluster with multicast), mode 0 fastest.
 * Coordinates stay signed 32-bit from these parameters to the cp.async.bulk.tensor
 * operands. A store or reduction box with a negative coordinate never reaches TMA (an
 * H200 raises an illegal instruction: hg_tma_box_issuable): the kernel decides per box at
 * run time, and all 128 threads write such a box's in-bounds elements with ordinary
 * stores (hg_b_store) or reductions (hg_b_red), reading each where the plan's stage
 * layout puts it. The result is the same either way: out-of-bounds elements skipped. */
hg_status_t hg_tma_generate(const hg_tma_spec_t *spec, hg_backend_t be, hg_kernel_t *k,
                            hg_tma_plan_t *plan);

/* The byte the load kernels write into every shared-memory byte before the TMA load, so a
 * byte TMA never wrote shows up (the model's simulated shared memory starts the same). */
#define HG_TMA_POISON 0xAB
#define HG_TMA_MAX_REPORT 16

typedef struct hg_tma_run_options {
  int runs;       /* the whole path (generate .. check) this many times; run 1 is the cold
                     path, the last one the warm path (cache hit). 0 means 2. */
  int max_report; /* mismatches described, up to HG_TMA_MAX_REPORT (0 means 8) */
  uint64_t seed;  /* data seed; 0: derived from the clock (fresh data every run) */
  hg_stream_t stream;
} hg_tma_run_options_t;

/* Host-side times of one pass through the path, milliseconds (hg_now_ms). */
typedef struct hg_tma_timing {
  double gen_ms;       /* spec -> PTX (generator + backend) */
  double jit_ms;       /* hg_rt_module_load: JIT + load, or cache lookup + load */
  double function_ms;  /* hg_rt_function (kernel handle, shared-memory opt-in) */
  double encode_ms;    /* hg_rt_tensormap_encode */
  double launch_ms;    /* hg_rt_launch returning */
  double sync_ms;      /* the kernel running to completion (hg_rt_sync) */
  double to_launch_ms; /* spec -> launched kernel: gen + jit + function + encode + launch */
  double to_finish_ms; /* ... + sync: spec -> finished kernel */
  hg_jit_info_t jit;
} hg_tma_timing_t;

/* One differing byte, described for a person. */
typedef struct hg_tma_mismatch {
  int64_t cta;     /* loads: the CTA whose shared memory differs; stores: -1 */
  uint64_t offset; /* loads: byte in the stage buffer; stores: byte of the output allocation,
                      whose tensor starts 256 bytes in (guard bytes before and after it) */
  uint8_t expected, got;
  char where[200]; /* "CTA 3 (tile (1,0), cluster rank 1), smem byte 130: box 2 element
                      (1,1) = tensor (63,-8), out of bounds" */
} hg_tma_mismatch_t;

typedef struct hg_tma_result {
  hg_tma_spec_t spec; /* normalized */
  hg_tma_plan_t plan;
  char kernel[64];
  uint32_t ctas, threads, smem_bytes, cluster;
  char device[128];
  int runs;                   /* passes made */
  hg_tma_timing_t cold, warm; /* first and last pass (the same when runs == 1) */
  uint64_t bytes_compared;    /* per pass */
  uint64_t mismatches;        /* differing bytes, over all passes */
  uint64_t poison_left;       /* loads: differing bytes that still hold HG_TMA_POISON */
  uint64_t untouched;         /* stores: differing bytes where the output kept its old value */
  int64_t ctas_unfinished;    /* CTAs whose status word was not written (never ran to the end) */
  int64_t ctas_timed_out;     /* CTAs whose mbarrier wait gave up (the phase never completed) */
  int64_t first_bad_cta;      /* the first of those, or -1 */
  /* Stores and reductions: the boxes written element by element because TMA cannot take
   * their negative coordinates (hg_tma_spec_fallback_boxes), and how many the CTAs said
   * they wrote so (their status words, the last pass); the CTAs whose word disagrees with
   * their tile's count, and the first of them (-1: none) with its figures. */
  int64_t fallback_boxes, fallback_reported;
  int64_t ctas_fallback_wrong, first_fallback_cta;
  int first_fallback_got, first_fallback_want;
  int reported; /* entries of first[] */
  hg_tma_mismatch_t first[HG_TMA_MAX_REPORT];
} hg_tma_result_t;

/* Generate -> JIT (cache) -> encode -> launch -> download -> compare every byte with the
 * CPU model, opts->runs times. Needs the runtime (the kernels layer calls the driver only
 * in these run/check/bench drivers). HG_ERR_MISMATCH (result filled, first[] describing
 * the first differences) when the GPU and the model disagree. */
hg_status_t hg_tma_run(hg_rt_t *rt, const hg_tma_spec_t *spec, hg_backend_t be,
                       const hg_tma_run_options_t *opts, hg_tma_result_t *result);

/* ---- the streaming copy (bench): a persistent grid of TMA load -> store rings */

/* Which boxes a copy CTA takes, of n boxes on a grid of G CTAs. */
typedef enum hg_copy_order {
  HG_COPY_INTERLEAVED, /* CTA c: boxes c, c + G, c + 2G, ... (the default) */
  HG_COPY_CONTIGUOUS,  /* CTA c: one run of consecutive boxes, n split evenly over the grid */
} hg_copy_order_t;

const char *hg_copy_order_name(hg_copy_order_t o); /* "interleaved", "contiguous"; "?" */
hg_status_t hg_copy_order_parse(const char *text, hg_copy_order_t *out);

typedef struct hg_copy_config {
  int stages;             /* shared-memory ring depth per CTA (2..16); 0: 6 */
  int box_rows;           /* rows of 256 u32 (1 KiB) per box, 1..256; 0: 32 (a 32 KiB box) */
  int ctas_per_sm;        /* persistent CTAs per SM; 0: 1 */
  bool evict_first;       /* L2::evict_first cache hint on the loads (the data is read once) */
  bool store_evict_first; /* L2::evict_first cache hint on the stores too */
  bool split_roles;       /* two issuing threads (warps 0 and 1): one loads, one stores, the
                           * stages handed back through an empty mbarrier each */
  hg_copy_order_t order;  /* 0: interleaved */
  /* The threads' copies (appended; all off by default): */
  bool store_threads; /* TMA loads into the ring, but store_warps warps of threads store
                       * each stage (ld.shared.v4 -> st.global.v4) and hand it back through
                       * an empty mbarrier; one elected thread of warp 0 loads */
  bool ldg;           /* no TMA and no ring: every thread copies 16-byte vectors
                       * (ld.global.v4 -> st.global.v4), unroll of them in flight, in a
                       * grid-stride loop; stages and box_rows stay 0 */
  bool store_cs;      /* the threads' stores with the .cs (streaming) cache operator
                       * (store_threads or ldg) */
  int store_warps;    /* store_threads: warps that store, 1..8; 0: 4 */
  int unroll;         /* ldg: 16-byte vectors a thread loads before it stores them, 1..16;
                       * 0: 8 */
  int ldg_threads;    /* ldg: threads per CTA, a multiple of 32 in 32..1024; 0: 256 */
} hg_copy_config_t;

/* The copy kernel. The TMA forms: parameters (src map, dst map: both the [rows, 256] u32
 * view of the buffers with box {256, box_rows}; I32 number of boxes), 32 threads (64 with
 * split_roles), any grid. CTA c copies boxes c, c + nctaid, ... (or its contiguous run)
 * through its ring (see copy.c). With store_threads: parameters (src map; I64 dst pointer;
 * I32 boxes; I32 rows), 32 x (1 + store_warps) threads. With ldg: parameters (I64 src and
 * dst pointers, I64 bytes: a multiple of 16), ldg_threads threads, any grid. Each option is
 * in the kernel's name. */
hg_status_t hg_gen_copy(const hg_copy_config_t *cfg, hg_backend_t be, hg_kernel_t *k);

typedef struct hg_copy_bench {
  uint64_t bytes;   /* buffer size, a multiple of 1 KiB */
  int warmup, runs; /* per side; 0: 3 and 25 */
  hg_copy_config_t config;
  uint64_t seed; /* 0: from the clock */
} hg_copy_bench_t;

typedef struct hg_copy_bench_result {
  char device[128];
  uint64_t bytes;
  uint32_t ctas, threads, smem_bytes;
  hg_copy_config_t config; /* with defaults filled */
  /* Medians over runs of the kernel time (events) and the bandwidth, counting read + write
   * (2 x bytes) for both. */
  double copy_ms, copy_gbs, d2d_ms, d2d_gbs;
  double copy_min_ms, copy_max_ms, d2d_min_ms, d2d_max_ms;
  double ratio;         /* copy_gbs / d2d_gbs */
  bool verified;        /* the copy's output equals its input, byte for byte */
  hg_tma_timing_t path; /* spec -> launched copy kernel */
} hg_copy_bench_result_t;

/* Check a benchmark description (size, configuration) without a GPU; the sentence names
 * what is wrong. hg_copy_bench_run calls it. */
hg_status_t hg_copy_bench_validate(const hg_copy_bench_t *bench);
/* Fill a fresh buffer with random data, copy it with the copy kernel, verify every byte,
 * then time both the kernel and hg_rt_copy_d2d of the same bytes in this process,
 * interleaved. HG_ERR_MISMATCH when the copy is not exact. */
hg_status_t hg_copy_bench_run(hg_rt_t *rt, const hg_copy_bench_t *bench, hg_backend_t be,
                              hg_copy_bench_result_t *out);

/* ---------------------------------------------------------------- GEMM */

typedef enum hg_gemm_schedule {
  HG_SCHED_COOPERATIVE, /* consumer warpgroups split one tile along M */
  HG_SCHED_PINGPONG,    /* consumer warpgroups alternate tiles; one's epilogue overlaps the
                           other's main loop */
} hg_gemm_schedule_t;

/* hg_raster_t (the tile order) is the tile scheduler's: builders.h. */

/* D = alpha * A x B + beta * C, row-major D and C (MxN, leading dimensions ldd/ldc).
 * A is MxK: K-major (row-major, lda >= K) or M-major (column-major, lda >= M). B is KxN:
 * K-major (each of the N columns contiguous in K, ldb >= K) or N-major (row-major, ldb >=
 * N). Leading dimensions and batch strides of 0 mean "packed". fp8 operands carry
 * per-tensor scales, applied with alpha in the epilogue. Any leading dimension and any
 * element-aligned base works: operands TMA cannot address (a leading dimension, batch
 * stride or base that is not a multiple of 16 bytes) are read with cp.async. */
/* The activation applied to alpha * A x B + beta * C before D is stored (hg_act_t,
 * builders.h: issue 12's first epilogue operations; bias, scale vectors and residuals are to
 * come). */
typedef hg_act_t hg_gemm_act_t;

/* A bias vector added before the activation: one value per column of D (along N, length N)
 * or per row (along M, length M), in bf16, f16 or f32, the same vector for every batch. */
typedef enum hg_gemm_bias {
  HG_BIAS_NONE = 0,
  HG_BIAS_N, /* D(i, j) += bias[j] */
  HG_BIAS_M, /* D(i, j) += bias[i] */
} hg_gemm_bias_t;
const char *hg_gemm_act_name(hg_gemm_act_t a); /* "relu", "gelu", ...; "none" */
/* "none", "relu", "gelu", "gelu_tanh", "silu", "sigmoid", or "clamp:LO:HI". */
hg_status_t hg_gemm_act_parse(const char *text, hg_gemm_act_t *act, float *lo, float *hi);
/* The activation on the host, in double (the check's reference). */
double hg_gemm_act_ref(hg_gemm_act_t a, double x, double lo, double hi);

/* Grouped GEMM (mixture of experts): `batch` groups (experts) g, each D_g = A_g x B_g with
 * B_g one matrix of the batch (B is G x N x K, or G x K x N), and each group's rows given on
 * the device at run time (hg_grouped_gemm_* below; no host synchronisation):
 *   CONTIGUOUS  A is (m, K) and D (m, N), unbatched, m the rows of both; group g's rows are
 *               [offs[g-1], offs[g]) (offs[-1] = 0), offs an int32 device array of the groups'
 *               cumulative end rows (torch._grouped_mm's `offs`);
 *   MASKED      A is G x m x K and D G x m x N (m the capacity per group); group g's rows are
 *               [0, counts[g]), counts an int32 device array.
 * Values are clamped to [0, m] (a decreasing offset gives an empty group); D's rows outside
 * every group are never written. */
typedef enum hg_gemm_group {
  HG_GROUP_NONE = 0,
  HG_GROUP_CONTIGUOUS,
  HG_GROUP_MASKED,
} hg_gemm_group_t;
/* The most groups one grouped GEMM takes (its tables live in shared memory: 16 B a group). */
#define HG_GROUPED_MAX_GROUPS 1024
/* How fp8 products are summed over K. wgmma's fp8 accumulator keeps fewer bits than f32
 * (docs/hardware-notes.md), so its error grows with K. ACCURATE (the default, as in
 * torch._scaled_mm and cuBLASLt) sums each group of fp8_promote k-blocks of 128 in it, from
 * zero, and adds the group into f32 accumulators; FAST keeps the whole K in it (cuBLASLt's
 * FAST_ACCUM). Two accumulator sets: the tiles that fit are fewer (hg_gemm_config_check). */
typedef enum hg_gemm_fp8_accum {
  HG_FP8_ACCUM_ACCURATE = 0,
  HG_FP8_ACCUM_FAST,
} hg_gemm_fp8_accum_t;
/* k-blocks per promotion when fp8_promote is 0: every 512 of K (tile K = 128) */
#define HG_FP8_PROMOTE_DEFAULT 4
#define HG_FP8_PROMOTE_MAX 16
const char *hg_gemm_fp8_accum_name(hg_gemm_fp8_accum_t a); /* "accurate", "fast" */
hg_status_t hg_gemm_fp8_accum_parse(const char *text, hg_gemm_fp8_accum_t *out);

/* How fp8 operands are scaled (scale_a / scale_b of hg_gemm_args_t, f32 in device memory):
 *   TENSOR  one f32 each (0 = 1.0): D = alpha sa sb A B + beta C (the epilogue);
 *   ROW     sa[i] per row of A (length M), sb[j] per column of B (length N): D(i, j) = alpha
 *           sa[i] sb[j] (A B)(i, j) + beta C (the epilogue); torch._scaled_mm's RowWise
 *           (scale_a [M, 1], scale_b [1, N]) and cuBLASLt's OUTER_VEC_32F as stored;
 *   BLOCK   DeepSeek-V3's: A scaled per row and 128-wide k-block (1x128), B per 128x128 block,
 *           applied per k-block in the main loop: D(i, j) = alpha sum_kb sa(i, kb) sb(j / 128,
 *           kb) (A B over k-block kb)(i, j) + beta C, kb = k / 128 (the last k-block may be
 *           partial), with sa(i, kb) = scale_a[kb * scale_lda + i] (M-major, scale_lda >= M,
 *           0: M) and sb(jb, kb) = scale_b[jb * scale_ldb + kb] (scale_ldb >= ceil(K / 128),
 *           0: ceil(K / 128)). These are torch._scaled_mm's BlockWise1x128 scale_a (shape [M,
 *           ceil(K/128)], strides (1, M)) and BlockWise128x128 scale_b.t() (shape [ceil(N/128),
 *           ceil(K/128)], row-major), and what cuBLASLt's VEC128_32F (hopgen's A is its B) and
 *           BLK128x128_32F (hopgen's B is its A) take as stored (docs/fp8.md). Tile K must be
 *           128 and tile N must divide 128; the partial sums are promoted every k-block
 *           (fp8_accum FAST is refused). */
typedef enum hg_gemm_scale {
  HG_SCALE_TENSOR = 0,
  HG_SCALE_ROW,
  HG_SCALE_BLOCK,
} hg_gemm_scale_t;
const char *hg_gemm_scale_name(hg_gemm_scale_t s); /* "tensor", "row", "block" */
hg_status_t hg_gemm_scale_parse(const char *text, hg_gemm_scale_t *out);

typedef struct hg_gemm_problem {
  int64_t m, n, k;
  int batch;
  hg_dtype_t a_type, b_type, d_type; /* D: bf16, f16, f32, or e4m3/e5m2 (c_type below) */
  bool a_k_major, b_k_major;
  int64_t lda, ldb, ldc, ldd;
  int64_t batch_stride_a, batch_stride_b, batch_stride_c, batch_stride_d;
  float alpha, beta;
  bool d_no_tma; /* force the direct-store epilogue (D's base is not 16-byte aligned) */
  /* What the base addresses of A and B are known to be multiples of, in bytes (0: 16, what
   * cudaMalloc and torch's allocator give). Less than 16 sends the operand through cp.async
   * with chunks that fit the alignment; hg_gemm_op_run refuses a pointer less aligned. */
  int a_align, b_align;
  /* D = act(alpha * A x B + beta * C + bias); clamp's bounds (lo <= hi, finite); the bias'
   * type is bf16, f16 or f32 (its pointer is hg_gemm_args_t.bias) */
  hg_gemm_act_t act;
  float act_lo, act_hi;
  hg_gemm_bias_t bias;
  hg_dtype_t bias_type;
  /* D(i, j) = act(rowscale[i] colscale[j] (alpha A B + beta C)(i, j) + bias) + R(i, j): f32
   * scale vectors (length M, N; one for every batch) and a residual R of D's type, shape,
   * leading dimension and batch stride (hg_gemm_args_t's pointers) */
  bool rowscale, colscale, residual;
  /* Batch invariance: each row of D has the same bits whatever M is. The configuration is then
   * chosen as for M = 4096, never split along K and never from the tuner's table (which are
   * what depend on M); a configuration given explicitly is M-independent already. */
  bool batch_invariant;
  /* A grouped GEMM (batch = the groups); see hg_gemm_group_t. fp8's scale_b is then a device
   * array of one f32 per group (0: all 1). */
  hg_gemm_group_t group;
  /* C's type, and the residual's: bf16, f16 or f32. 0 (HG_U8, never a C type) means D's type,
   * or bf16 when D is fp8; hg_gemm_problem_normalize fills it in. */
  hg_dtype_t c_type;
  /* fp8 D (d_type e4m3 or e5m2): D = saturate(x * scale_d), x the chain's result and scale_d
   * the f32 at hg_gemm_args_t.scale_d (0: 1.0); cvt.rn.satfinite: values beyond the largest
   * finite fp8 (448 for e4m3, 57344 for e5m2), infinities included, become it with their sign;
   * a NaN stays NaN. fp8 D goes through TMA stores when its rows are 16-byte multiples. */
  /* amax: the kernel also writes max |D(i, j)| over D as stored (decoded from d_type) into
   * the f32 at hg_gemm_args_t.amax (whatever it held before). Its running maxima and an
   * arrival count lie at the workspace's start (HG_AMAX_STATE_BYTES, within
   * hg_gemm_op_workspace_zero_bytes), zero before a launch and left zero by it, so no memset
   * launch precedes a run. A NaN in D makes it a NaN. Any D type. */
  bool amax;
  /* aux: the chain's values just before the activation (after the scales, beta * C and the
   * bias; what cuBLASLt's GELU_AUX stores for the backward pass) also stored into an aux
   * matrix of aux_type (bf16, f16, f32; 0: D's type, or bf16 when D is fp8), MxN with leading
   * dimension ldaux and batch stride batch_stride_aux (0: packed), at hg_gemm_args_t.aux.
   * Needs an activation. */
  bool aux;
  hg_dtype_t aux_type;
  int64_t ldaux, batch_stride_aux;
  /* fp8 operands: the accumulation (ACCURATE by default) and, for ACCURATE, the k-blocks per
   * promotion, 1..HG_FP8_PROMOTE_MAX (0: HG_FP8_PROMOTE_DEFAULT). Normalisation clears both
   * for 16-bit operands and fp8_promote for FAST (one problem, one key). */
  hg_gemm_fp8_accum_t fp8_accum;
  int fp8_promote;
  /* fp8 operands: how scale_a / scale_b scale them (above); BLOCK's scale leading dimensions
   * (0: the packed ones; normalisation fills them, and clears them for the other modes) */
  hg_gemm_scale_t scale;
  int64_t scale_lda, scale_ldb;
  /* Determinism: D has the same bits run to run on the same data. Configurations whose sums'
   * order depends on timing (split-K by atomic adds, ",kSa") are then refused, and the
   * heuristic splits K with the reduction pass (fixed order). */
  bool deterministic;
} hg_gemm_problem_t;

/* An epilogue chain "rowscale,bias,gelu,residual" into p (its epilogue fields; the bias' type
 * is left to the caller): comma-separated steps in the order they run - rowscale, colscale,
 * bias (along N) or bias_m (along M), one activation, residual - each at most once; "none"
 * alone is the plain GEMM. */
hg_status_t hg_gemm_epilogue_parse(const char *text, hg_gemm_problem_t *p);

/* Fill 0 leading dimensions and batch strides with the packed values and check the
 * problem (types, majorness, sizes); the sentence names what is wrong. */
hg_status_t hg_gemm_problem_normalize(hg_gemm_problem_t *p);

/* How operands reach the MMA and which MMA instruction computes (the four combinations of
 * the builders layer). The operand path and the MMA are independent: in every mainloop but
 * cpasync-wgmma, an operand goes through TMA when TMA can address it (leading dimension,
 * batch stride and base multiples of 16 bytes) and through cp.async otherwise (the kernel's
 * a_tma/b_tma say which, and its name carries _cpa/_cpb with the chunk bytes);
 * cpasync-wgmma takes both operands through cp.async. AUTO in a configuration given to
 * hg_gemm_generate: tma-wgmma when TMA can address both operands, else cpasync-wgmma with
 * cp.async only for those it cannot. AUTO given to hg_gemm_build (the operation's and the
 * CLI's default) instead repacks the operands TMA cannot address into packed 16-byte rows on
 * every run (scratch the operation allocates at creation, one copy kernel per operand) and
 * runs tma-wgmma on them: measured faster than reading them in place wherever their rows are
 * below 16-byte alignment (bench/RESULTS.md); naming a mainloop reads them in place. */
typedef enum hg_gemm_mainloop {
  HG_MAINLOOP_AUTO = 0,
  HG_MAINLOOP_TMA_WGMMA,             /* TMA + wgmma, both operands from shared memory */
  HG_MAINLOOP_CPASYNC_WGMMA,         /* cp.async (any alignment, no repack) + wgmma SS */
  HG_MAINLOOP_TMA_MMASYNC,           /* TMA + ldmatrix + mma.sync m16n8k16 (16-bit types) */
  HG_MAINLOOP_TMA_LDMATRIX_WGMMA_RS, /* TMA + ldmatrix A into registers + wgmma RS (16-bit) */
  /* Decode (M <= 16, K-major A and B, bf16/f16 or fp8 without block-wise scales, batch 1): the
   * weights B streamed with ld.global straight into mma.sync m16n8k16 (fp8: m16n8k32)
   * fragments (D^T = B A^T), any alignment, no
   * shared-memory stages; tile 16 x tile_n (16, 32, 64 rows of B a CTA) x tile_k (the k a warp
   * loads per iteration); split-K by atomic adds only (,kSa). src/kernels/gemm_decode.c. */
  HG_MAINLOOP_LDG_MMASYNC,
  HG_MAINLOOP_COUNT
} hg_gemm_mainloop_t;

/* "auto", "tma-wgmma", "cpasync-wgmma", "tma-mmasync", "tma-ldmatrix-wgmma-rs", "ldg-mmasync". */
const char *hg_gemm_mainloop_name(hg_gemm_mainloop_t m);
hg_status_t hg_gemm_mainloop_parse(const char *name, hg_gemm_mainloop_t *out);

typedef struct hg_gemm_config {
  int tile_m, tile_n, tile_k; /* CTA tile */
  int cluster_m, cluster_n;   /* CTAs per cluster along M (share B) and N (share A) */
  int stages;                 /* shared-memory pipeline depth */
  hg_gemm_schedule_t schedule;
  hg_raster_t raster;
  int raster_group; /* tiles per rasterization group (L2 reuse), >= 1 */
  int epi_n;        /* columns per epilogue sub-tile */
  hg_gemm_mainloop_t mainloop;
  /* Split-K: each output tile's K in up to `splits` ranges computed by different CTAs, whose
   * f32 partials (in the operation's workspace) a second kernel sums in split order
   * (deterministic) before the epilogue; 0 or 1: none, 2..64 (text ",kS"). */
  int splits;
  /* fp8's accurate accumulation: how promotions overlap the MMAs (HG_PROMOTE_* flags; 0: each
   * consumer waits for its group's MMAs, then adds them, both consumers in step). Text ",ps"
   * (stagger), ",pd" (double) or ",pt" (turns), and ",pa" (ahead) beside none or ",pd";
   * printed only when not 0. */
  int promote_overlap;
  /* Stream-K (text ",sk"): the persistent grid's clusters share the k-blocks of the tiles
   * that would leave the last wave partial, each shared tile fixed up in the same kernel by
   * the cluster holding its k-block 0, which adds the others' partials (from the workspace)
   * in cluster order: deterministic for a given grid (builders.h, hg_streamk_*). Not with
   * split-K, in a grouped GEMM or for a batch-invariant problem (which tiles share K depends
   * on M). 0 or 1. */
  int stream_k;
  /* fp8 block-wise scales: where the consumers read each k-block's scales (HG_BLOCK_SCALES_*;
   * 0: from global memory). Text ",bs" (staged); printed only when not 0. */
  int block_scales;
  /* Split-K's partials added by atomics into one f32 tile per output tile, the split that
   * arrives last running the epilogue (builders.h, hg_splitk_add_tile): one launch and one
   * tile of traffic per split instead of the reduction pass, but the additions' order is the
   * order of arrival, so D is not bitwise reproducible run to run. Text ",kSa". 0 or 1;
   * needs splits > 1. */
  int split_atomic;
  /* Split-K reduced inside the GEMM: every split stores its partial tile to its own slot (as
   * for the reduction pass), counts its arrival on the tile's counter and waits for the
   * others; then each split sums its share of the tile's accumulator chunks over every slot in
   * split order and runs the epilogue on that share (builders.h, hg_splitk_scatter_*). One
   * launch, the reduction pass's bits (the same order), no second kernel's launch and drain.
   * Every split of a tile waits for the others, so every unit must be resident at once: the
   * operation refuses a grid that would queue units. Text ",kSr". 0 or 1; needs splits > 1,
   * not with split_atomic, cooperative tiles, tma-wgmma or cpasync-wgmma. */
  int split_scatter;
  /* The erf GELU's formula (hg_gelu_alg_t, builders.h) where the epilogue has an erf GELU:
   * HG_GELU_POLY7 (0, the default, not printed), HG_GELU_AS (text ",gas") or HG_GELU_POLY5
   * (",gp5"; ",gp7" names the default). Measured alternatives, not tuner candidates:
   * docs/epilogue.md. */
  int gelu;
  /* D and aux stored element by element (text ",ds": direct stores) wherever the default
   * would stage them through shared memory or store them by TMA, except D by TMA: the path
   * before staged stores, kept for A/B measurement. 0 or 1. */
  int epi_direct;
  /* A and B swapped (text ",sw"): the kernel computes D^T = B A^T, its M the problem's N and
   * its N the problem's M (the tile's sizes are the kernel's: 128 rows of N by tile_n columns of
   * M), and stores D (C, the residual, aux) transposed back, element by element. A small or
   * ragged M then takes wgmma's N, any multiple of 16, instead of 64-row steps. Row and column
   * vectors (bias, scales, fp8 row-wise scales) trade places with the operands. Not with fp8
   * block-wise scales, a grouped or batch-invariant problem, or the decode kernel. Opt-in:
   * the heuristic does not take it yet (bench/RESULTS.md, thirteenth session). 0 or 1. */
  int swap_ab;
} hg_gemm_config_t;
/* Cooperative tiles (two consumer warpgroups): the second promotes half a group after the
 * first (its first group is promote - promote / 2 k-blocks), so one warpgroup's MMAs keep the
 * tensor cores busy while the other waits and adds. Needs fp8_promote >= 2. Changes which
 * k-blocks share a group for the second warpgroup's rows; results stay bitwise repeatable.
 */
#define HG_PROMOTE_STAGGER 1
/* A second partial set: the k-loop runs bodies of two groups or more (4 k-blocks for a
 * promotion every k-block, i.e. block scales; 2 x fp8_promote otherwise, so fp8_promote <= 4)
 * whose groups alternate between the sets, each added while the next group's MMAs run;
 * one drain (wgmma.wait_group 0) per body instead of one per group. Three accumulator sets
 * (hg_gemm_config_check refuses tiles that would spill). The same sums in the same order.
 * Not with STAGGER. */
#define HG_PROMOTE_DOUBLE 2
/* MMA turns: the two consumer warpgroups of a cooperative tile issue each k-block's MMAs in
 * turn (named barriers: a consumer waits for its turn, issues, commits and hands the turn
 * over before it waits for its MMAs), so one's MMAs are queued behind the other's and run
 * while the other drains and promotes, instead of both draining at once. No register cost;
 * the same sums in the same order. Not with STAGGER or DOUBLE. */
#define HG_PROMOTE_TURNS 4
/* The next unit's first k-block issued ahead, before this unit's epilogue (text ",pa"): a
 * promoting main loop's MMAs write the partial set, not the sums the epilogue reads, so the
 * tensor cores run that k-block while the epilogue converts and stores, and it lands in the
 * sums afterwards (hg_mainloop_issue_ahead). Its promotion group is the k-block alone, and
 * the unit's groups of fp8_promote k-blocks start at k-block 1 (fp8_promote > 1: other
 * groups, so other bits, than without it).
 * Cooperative tiles without split-K, stream-K or groups; alone or with DOUBLE. */
#define HG_PROMOTE_AHEAD 8
/* Each consumer thread loads its rows' A scales and the tile's B scale from global memory
 * before each k-block's stage wait. */
#define HG_BLOCK_SCALES_GLOBAL 0
/* The producer's second warp copies each k-block's tile_m A scales and its B scale into the
 * stage (ld.global, st.shared, one arrival a lane on the stage's full barrier, loads issued
 * before it acquires the stage) and the consumers read them from shared memory after the
 * stage wait: no global latency in the consumers' k-block. Both operands by TMA. */
#define HG_BLOCK_SCALES_SMEM 1

/* The f32-accumulating reference: dref (packed f32, batch x M x N) = alpha * A x B + beta *
 * C, one thread per output through 16x16 shared-memory tiles; grid (ceil(N/16),
 * ceil(M/16), batch), 256 threads. Parameters: a, b, c, dref, m, n, k, lda, ldb, ldc,
 * batch_stride_a/b/c, alpha, beta; with fp8 row- or block-wise scales (p->scale) also
 * scale_a, scale_b, scale_lda, scale_ldb (I64), applied in f32 as kernels.h defines them. */
hg_status_t hg_gen_gemm_reference(const hg_gemm_problem_t *p, hg_backend_t be, hg_kernel_t *k);
/* The elementwise tail of p's epilogue as its own kernel, for timing the unfused sequence:
 * D(i, j) = act(D(i, j) + bias) in place (p's bias and activation, an erf GELU by formula
 * gelu, as the fused kernel's configuration has it; scales and residual are not part of it),
 * 16 bytes a thread where D's rows allow. Grid (m, ceil(n / (256 x
 * hg_gen_bias_act_chunk(p))), batch), 256 threads; parameters d, bias, m, n, batch, ldd,
 * batch_stride_d (I64). */
hg_status_t hg_gen_bias_act(const hg_gemm_problem_t *p, hg_gelu_alg_t gelu, hg_backend_t be,
                            hg_kernel_t *k);
int hg_gen_bias_act_chunk(const hg_gemm_problem_t *p);

/* Text form "128x256x64,c2x1,s4,coop,m8,e64,k4,ps,tma-wgmma": tile, cluster, stages, schedule
 * (coop|pp), raster (m|n) and group, epilogue width (0 = automatic), split-K (printed only
 * when > 1) or stream-K ("sk"), promotion overlap (ps, pd or pt), staged block scales (bs),
 * the erf GELU's formula (gas or gp5), direct stores (ds), mainloop (printed only when not
 * auto); the flags are printed only when set. Fields after the tile may be omitted (defaults:
 * c1x1,s4,coop,m8,e0,k1,gp7,auto). docs/gemm-config.md lists the tokens. */
int hg_gemm_config_print(const hg_gemm_config_t *c, char *buf, size_t size);
hg_status_t hg_gemm_config_parse(const char *text, hg_gemm_config_t *out);
/* Whether the generator can build c for p; the sentence names the rule that fails. */
hg_status_t hg_gemm_config_check(const hg_gemm_problem_t *p, const hg_gemm_config_t *c);
/* The epilogue sub-tile width c uses: its epi_n, or 128/64-byte swizzled rows that divide
 * tile N (64-byte ones first for fp8 D: 64 columns), else the whole tile width unswizzled, else
 * 32-byte rows; 0 when none fits (then D is stored directly). */
int hg_gemm_epi_n(const hg_gemm_problem_t *p, const hg_gemm_config_t *c);
/* Whether a sub-tile of that width has swizzled rows (rows of exactly 32, 64 or 128 B). */
bool hg_gemm_epi_swizzled(const hg_gemm_problem_t *p, int epi_n);
/* Epilogue buffers per consumer warpgroup: 2 (double-buffered), 1 for a full-width
 * unswizzled sub-tile. */
int hg_gemm_epi_buffers(const hg_gemm_problem_t *p, const hg_gemm_config_t *c);
/* The most pipeline stages that fit in shared memory for c's tile (with swap_ab, on the
 * swapped problem the kernel runs). */
int hg_gemm_max_stages(const hg_gemm_problem_t *p, const hg_gemm_config_t *c);
/* The GEMM shape sets of `hopgen bench gemm --set NAME` and `python -m hopgen.bench`, as
 * (M, N, K) triples: "llm" (13 LLM training and inference shapes), "decode" (M of 1-48 against
 * weight matrices), "splitk" (few output tiles, long K), "odd" (sizes TMA cannot address),
 * "waves" (a few waves of tiles), "unaligned" (K or N not a multiple of 8: cp.async against
 * the repack path), "fp8block" and "fp8row" (DeepSeek-V3's projections and the anchors,
 * which hopgen bench gemm runs with block-wise and row-wise fp8 scales). HG_ERR_INVALID names the
 * sets for an unknown name. */
#define HG_GEMM_SET_MAX 32
hg_status_t hg_gemm_shape_set(const char *name, int64_t (*shapes)[3], int *count);
/* The names above, NULL-terminated; "all" is every set in turn. */
const char *const *hg_gemm_shape_set_names(void);

/* The configurations hg_gemm_tune times for p (those hg_gemm_config_check accepts and the
 * generator can hold in registers), at most cap of them into out; returns how many. */
#define HG_GEMM_TUNE_MAX 128
int hg_gemm_tune_space(const hg_gemm_problem_t *p, hg_gemm_config_t *out, int cap);
/* A configuration chosen from the problem's shape and the device's SM count (0 or less: an
 * H100's 132; over HG_GEMM_MAX_SMS refused). */
#define HG_GEMM_MAX_SMS 4096
hg_status_t hg_gemm_heuristic(const hg_gemm_problem_t *p, int sm_count, hg_gemm_config_t *out);
/* The heuristic's A/B switches, kept for measurement: rules off by default turned on, and
 * ("no...") rules on by default turned off (all zero: the defaults, what hg_gemm_heuristic
 * uses). Text form (hopgen gemm --heuristic RULES): "sk",
 * "pp" or "pp128", "nobs", "pt", "dv", "nocw", "nokcol", separated by commas; "default" changes
 * nothing.
 * docs/gemm-config.md. */
typedef struct hg_gemm_rules {
  /* "sk": stream-K where the wave model says it saves 5% or more (measured: no better) */
  bool stream_k;
  /* "pp" 192 / "pp128" 128: chains with an erf or tanh GELU, SiLU or sigmoid on cooperative
   * 128-row tiles take ping-pong tiles up to that many columns (measured slower); 0: off */
  int epi_pingpong;
  /* "nobs": fp8 block-wise scales read from global memory, not staged (bs, the default) */
  bool global_scales;
  /* "pt": fp8 block-wise scales with MMA turns (measured 2-4% slower) */
  bool mma_turns;
  /* "dv": decode shapes (M <= 16, K-major operands of one 16-bit type or fp8, batch 1) with the
   * AUTO mainloop run ldg-mmasync on the operands in place (no repack); not measured yet */
  bool decode;
  /* "nocw": 2-CTA clusters only where the tiles fill every SM, not for a wave of 128 x 128
   * tiles covering 0.9 of them (the default since the thirteenth session: 400x4000x4096 and
   * 1000x2000x6000 11-28% faster on both cards) */
  bool no_cluster_wave;
  /* "nokcol": split-K past few tiles (gemm_config.c, split_k_wide) only with two or more
   * columns of tiles, not for one column at the narrowest width that covers N (the default
   * since the thirteenth session: bf16 3000x200x16384 1.8x faster on both cards) */
  bool no_split_column;
} hg_gemm_rules_t;
hg_status_t hg_gemm_rules_parse(const char *text, hg_gemm_rules_t *out);
int hg_gemm_rules_print(const hg_gemm_rules_t *r, char *buf, size_t size);
/* The heuristic under rules (NULL: the defaults). */
hg_status_t hg_gemm_heuristic_rules(const hg_gemm_problem_t *p, int sm_count,
                                    const hg_gemm_rules_t *rules, hg_gemm_config_t *out);

/* A generated GEMM kernel and what running it needs. Each operand reaches shared memory
 * through TMA (its plan's tensor map is encoded per run) or cp.async (chunks of a_vec/b_vec
 * bytes read straight from the pointer). Parameters in order: A (tmap_a, or a, lda,
 * batch_stride_a as I64), B likewise, [tmap_d if tma_store], [tmap_aux if aux_tma],
 * [tmap_scale_a, tmap_scale_b if scales_tma], d, c, m, n, k,
 * batch (I32), ldc, ldd, batch_stride_c, batch_stride_d (I64), alpha, beta (F32), [scale_a, scale_b
 * (I64 device pointers to one f32 each, 0 = 1.0; vectors for ROW and BLOCK scaling) for fp8], then
 * the epilogue's I64s: [rowscale], [colscale], [bias], [residual], [scale_d for fp8 D], [aux,
 * ldaux, batch_stride_aux], [amax, amax_state (HG_AMAX_STATE_BYTES, 4-byte aligned, zero
 * before the launch, left zero)],
 * [groups for a grouped GEMM], [workspace for split-K or stream-K],
 * [scale_lda, scale_ldb for BLOCK scaling]. Grid: 1-D, a multiple of the cluster size; any
 * size (the kernel is persistent). */
typedef struct hg_gemm_kernel {
  hg_kernel_t k;
  hg_gemm_problem_t problem; /* normalised */
  hg_gemm_config_t config;   /* mainloop resolved (never AUTO) */
  bool tma_store;
  /* D's rows TMA cannot store (ldd, N or the batch stride not a multiple of 16 bytes, or
   * d_no_tma): D's sub-tiles still go through shared memory and are copied out row by row,
   * consecutive lanes on consecutive elements (coalesced), instead of element by element
   * from the accumulator fragment. Not in split-K or grouped GEMMs (direct stores there). */
  bool staged_store;
  /* The aux output (problem.aux) through D's sub-tile buffers: TMA-stored
   * with plan_aux (aux_tma: ldaux and its batch stride multiples of 16 bytes, a 16-byte
   * aligned base at run time, D through TMA), or copied out row by row (aux_staged). Else
   * aux is stored element by element. */
  bool aux_tma, aux_staged;
  /* aux_tma or aux_staged: aux's piece of a D sub-tile, aux_n columns (D's epi_n when aux has
   * D's element size or a smaller one; epi_n x D's size / aux's for a larger one, so that a
   * piece fits D's buffer) in rows swizzled by aux_sw; a sub-tile's aux goes in epi_n / aux_n
   * pieces, each through the next buffer */
  int aux_n;
  hg_swizzle_t aux_sw;
  bool a_tma, b_tma; /* operand through TMA (plan_a/plan_b), else cp.async */
  int a_vec, b_vec;  /* cp.async chunk bytes (16, 8, 4; 2 or 1: register copies) */
  /* hg_gemm_build with AUTO: the caller's operand is repacked into the packed rows of
   * `problem` (lda/ldb, batch strides) before each run; hg_gemm_op does it. */
  bool repack_a, repack_b;
  hg_tma_plan_t plan_a, plan_b, plan_d, plan_aux;
  /* fp8 block scales staged in shared memory (config.block_scales SMEM) by TMA: the tensor
   * maps of A's and B's scale tables (hg_block_scales_t), encoded per run at scale_a and
   * scale_b, which must then be 16-byte aligned. Where the tables' leading dimensions are not
   * multiples of 4 (16 bytes), or for a contiguous grouped GEMM's 256-row tiles, the
   * producer's side warp copies them with cp.async instead (gemm_plan.c, scales_plan). */
  bool scales_tma;
  hg_tensormap_params_t map_scale_a, map_scale_b;
  /* hg_gemm_build found it in the kernel cache by specification (planning and generation
   * skipped; k.gen_ms is then the lookup's time) */
  bool from_cache;
  /* Split-K (config.splits > 1): the kernel stores each split's partial tile to the
   * workspace, and a second entry of the same module, reduce_name, sums them in split order
   * and runs the epilogue: launched after it on the same stream with the same parameters,
   * grid (CTA tiles, reduce_groups) (CTA tiles: ceil(M / (tile_m x cluster_m)) x cluster_m x
   * ceil(N / (tile_n x cluster_n)) x cluster_n x batch), reduce_threads threads and
   * reduce_smem bytes of dynamic shared memory, no cluster. */
  char reduce_name[64];
  uint32_t reduce_threads, reduce_smem;
  int reduce_groups;
  /* config.swap_ab: `problem` is the swapped one (hg_gemm_problem_swapped); hg_gemm_op passes
   * the caller's B as the kernel's A (and scale_b, colscale as scale_a, rowscale), and the
   * epilogue stores transposed */
  bool swapped;
} hg_gemm_kernel_t;

/* How kernel k's epilogue stores D (and aux, when it has one), for reports: "TMA-store",
 * "staged-store" (rows copied out of shared memory) or "direct-store", then e.g. ", aux by
 * TMA". A static string. */
const char *hg_gemm_store_name(const hg_gemm_kernel_t *k);

/* Generate the kernel for p with configuration c through backend be. The code depends on
 * the types, majorness, D's TMA-ability and c, not on M, N, K, batch or the leading
 * dimensions (those are parameters and tensor-map fields), so one compiled kernel serves
 * every shape of its kind. */
hg_status_t hg_gemm_generate(const hg_gemm_problem_t *p, const hg_gemm_config_t *c, hg_backend_t be,
                             hg_gemm_kernel_t *out);
void hg_gemm_kernel_free(hg_gemm_kernel_t *k);

/* The bytes an operand's chunks may move: 16 when TMA can address it as stored, else the
 * largest of 16, 8, 4, 2, 1 that divides its leading dimension, batch stride and base
 * alignment (in bytes). operand 0 = A, 1 = B; p normalised. */
int hg_gemm_operand_align(const hg_gemm_problem_t *p, int operand);
/* The L2 promotion (CUtensorMapL2promotion: 2 = 128 B, 3 = 256 B) of operand's tensor map
 * (0 = A, 1 = B) when p runs with c: 256 B where each of its bytes is read once (the other
 * extent fits one tile, or one cluster's multicast of it: decode and skinny shapes' weights),
 * 128 B where tiles along the other extent read it again and a unit's K (K over the
 * splits) is below HG_GEMM_L2_128B_MAX_K (split-K, waves, mid-size shapes); the large-K
 * shapes and grouped GEMMs keep 256 B. A run-time choice (the operation's and the exported
 * launcher's encode) so that the kernel and its tensor-map constants stay independent of the sizes.
 */
#define HG_GEMM_L2_128B_MAX_K 8192
int hg_gemm_operand_l2_promotion(const hg_gemm_problem_t *p, const hg_gemm_config_t *c,
                                 int operand);
/* The mainloop AUTO stands for on p (tma-wgmma, or cpasync-wgmma when an operand is not
 * TMA-addressable); other values pass through. */
hg_gemm_mainloop_t hg_gemm_mainloop_resolve(const hg_gemm_problem_t *p, hg_gemm_mainloop_t m);

/* The library's one step from a problem to a kernel, used by hg_gemm_op_create and the CLI:
 * the configuration c (or, when c is NULL, the tuner's stored winner for the device, else
 * the heuristic's choice for the device's SM count; dev NULL: no device, the heuristic for
 * 132 SMs, an H100/H200 SXM), with mainloop (when not AUTO) overriding the configuration's,
 * then generation. With AUTO everywhere, operands TMA cannot address are repacked (the
 * kernel's repack_a/repack_b, its problem the packed one) where hg_gemm_repack_rule says so,
 * else read in place (cp.async or 16-byte window copies). */
hg_status_t hg_gemm_build(const hg_gemm_problem_t *p, const hg_gemm_config_t *c,
                          hg_gemm_mainloop_t mainloop, const hg_device_info_t *dev, hg_backend_t be,
                          hg_gemm_kernel_t *out);
/* The configuration hg_gemm_build takes for p with no configuration given (the tuned store's
 * winner for dev, else the heuristic), with the heuristic under rules (NULL: the defaults):
 * what hopgen gemm --heuristic RULES runs. With mainloop AUTO the result's mainloop may be
 * named (a tuned entry's): set it back to AUTO to keep AUTO's repacking. */
hg_status_t hg_gemm_config_choose(const hg_gemm_problem_t *p, hg_gemm_mainloop_t mainloop,
                                  const hg_device_info_t *dev, const hg_gemm_rules_t *rules,
                                  hg_gemm_config_t *out);

/* AUTO's choice for operand (0 A, 1 B) of p when TMA cannot address it: true, repack it into
 * packed rows before each run (then TMA with multicast reads it); false, read it in place.
 * False also for an operand TMA can address. The rule and its thresholds: gemm_plan.c. */
bool hg_gemm_repack_rule(const hg_gemm_problem_t *p, int operand);
/* AUTO's choice of the decode kernel (mainloop ldg-mmasync) for p (normalised), with no device
 * known: a shape it runs (M <= 16, K-major bf16/f16 or fp8 operands, batch 1) whose A or B TMA
 * cannot address, aligned weights of up to 64 MB at small M, fp8 weights of N <= 4096 up to
 * M = 8, or any shape it runs under the rule dv (rules may be NULL); never a batch-invariant
 * problem. hg_gemm_build and hg_gemm_config_choose also weigh the device's memory bandwidth
 * (larger weights on H200-class memory). The rule and its measurements: gemm_plan.c. */
bool hg_gemm_decode_rule(const hg_gemm_problem_t *p, const hg_gemm_rules_t *rules);

/* A GEMM ready to run on the GPU: generated (hg_gemm_build), JIT-compiled (through the
 * on-disk cache) and sized (a persistent grid of as many clusters as the device runs at
 * once). Launching it never synchronises and, but for the case below, allocates nothing
 * (CUDA-graph safe). The amax's state (problem.amax), split-K partial tiles (config.splits >
 * 1), stream-K's flags and partial tiles (config.stream_k; the state and the flags must start
 * at zero and each launch leaves them zero: the operation's own workspace is zeroed once when
 * allocated, a caller's on the stream before each run unless hg_gemm_args_t.workspace_zeroed,
 * its first hg_gemm_op_workspace_zero_bytes) and operands it repacks
 * (hg_gemm_build's AUTO for rows TMA cannot address) go through a workspace of
 * hg_gemm_op_workspace_bytes:
 * hg_gemm_op_run_workspace takes the caller's (allocates nothing; one workspace per stream running
 * at once), hg_gemm_op_run allocates one on its first call and keeps it (then one run at a time per
 * operation, and that first call not under stream capture). */
typedef struct hg_gemm_op hg_gemm_op_t;

/* c = NULL: the configuration the tuner stored for this problem, else the heuristic's. */
hg_status_t hg_gemm_op_create(hg_rt_t *rt, const hg_gemm_problem_t *p, const hg_gemm_config_t *c,
                              hg_backend_t be, hg_gemm_op_t **out);
/* Encode the tensor maps for these pointers and launch on stream (asynchronous). c may be 0
 * when beta is 0; scale_a/scale_b: device pointers to one f32 each for fp8 (0 = 1.0). */
hg_status_t hg_gemm_op_run(hg_gemm_op_t *op, hg_devptr_t a, hg_devptr_t b, hg_devptr_t c,
                           hg_devptr_t d, hg_devptr_t scale_a, hg_devptr_t scale_b,
                           hg_stream_t stream);
void hg_gemm_op_destroy(hg_gemm_op_t *op);
const hg_gemm_kernel_t *hg_gemm_op_kernel(const hg_gemm_op_t *op);
const hg_jit_info_t *hg_gemm_op_jit(const hg_gemm_op_t *op);
int hg_gemm_op_grid(const hg_gemm_op_t *op);
/* Bytes of workspace a run needs (0: the operation has no amax, neither splits K, nor runs
 * stream-K, nor repacks). */
size_t hg_gemm_op_workspace_bytes(const hg_gemm_op_t *op);
/* The workspace's leading bytes that must be zero before a run, as every run leaves them (the
 * amax's state, split-K's sums and counters, stream-K's flags); 0: none. */
size_t hg_gemm_op_workspace_zero_bytes(const hg_gemm_op_t *op);
/* Everything one run takes: the operands, fp8 scales, the epilogue's vectors and matrices
 * (problem.bias, ...), fp8 D's scale, the amax and aux outputs, and the workspace (0:
 * hg_gemm_op_run's own, allocated on the first call). With problem.amax the kernel writes
 * max |D| into *amax (its running state lies in the workspace). */
typedef struct hg_gemm_args {
  hg_devptr_t a, b, c, d, scale_a, scale_b, bias, rowscale, colscale, residual;
  /* fp8 D's output scale (one f32; 0 = 1.0), the amax's f32 (problem.amax; written by the
   * kernel), the aux matrix (problem.aux) */
  hg_devptr_t scale_d, amax, aux;
  hg_devptr_t workspace;
  size_t workspace_bytes;
  /* The caller's workspace is zero where this operation needs zeros (its amax's state, its
   * split-K sums and counters, its stream-K flags; hg_gemm_op_workspace_zero_bytes): freshly
   * zeroed, or left so by this operation's last run on the same stream, as every run leaves
   * them. The run then skips zeroing them (one memset launch fewer); false: it zeroes them
   * first. */
  bool workspace_zeroed;
} hg_gemm_args_t;
hg_status_t hg_gemm_op_run_args(hg_gemm_op_t *op, const hg_gemm_args_t *args, hg_stream_t stream);
/* hg_gemm_op_run with the caller's workspace (16-byte aligned, at least
 * hg_gemm_op_workspace_bytes; may be 0 when that is 0), ordered on stream like the run. */
hg_status_t hg_gemm_op_run_workspace(hg_gemm_op_t *op, hg_devptr_t a, hg_devptr_t b, hg_devptr_t c,
                                     hg_devptr_t d, hg_devptr_t scale_a, hg_devptr_t scale_b,
                                     hg_devptr_t workspace, size_t workspace_bytes,
                                     hg_stream_t stream);

/* D = alpha * A x B + beta * C in one call (create, run, synchronise, destroy): the
 * library's GEMM entry point. */
hg_status_t hg_gemm(hg_rt_t *rt, const hg_gemm_problem_t *p, const hg_gemm_config_t *c,
                    hg_devptr_t a, hg_devptr_t b, hg_devptr_t cm, hg_devptr_t d,
                    hg_devptr_t scale_a, hg_devptr_t scale_b, hg_stream_t stream);

/* Run, check and time one problem on fresh random data (the driver of `hopgen gemm`). */
typedef struct hg_gemm_run_options {
  hg_backend_t backend;
  const hg_gemm_config_t *config; /* NULL: tuned or heuristic */
  bool check;                     /* compare with the f32 reference (and cuBLASLt) */
  bool bench;                     /* time hopgen and cuBLASLt side by side */
  /* With bench, when an operand is not TMA-addressable: also time the other path around it
   * (repack into packed rows before every tma-wgmma run: repack_ms; or reading it in place
   * with cp.async: cpasync_ms). */
  bool compare_repack;
  int warmup, iters;
  uint64_t seed; /* 0: a fresh seed from the clock */
  /* fp8 D: the output scale the driver uploads to args.scale_d (0: 1.0); a large one makes
   * values saturate */
  float scale_d;
  /* check: launches after the first whose D is compared bit for bit with its D (0: 2) */
  int repeat_runs;
} hg_gemm_run_options_t;

hg_gemm_run_options_t hg_gemm_run_options_default(void);

typedef struct hg_gemm_report {
  hg_gemm_config_t config;
  char kernel[128];
  bool tma_store;
  char store[32];              /* hg_gemm_store_name */
  bool cp_async_a, cp_async_b; /* operand read with cp.async (not TMA) */
  bool repacked_a, repacked_b; /* operand repacked before each run (AUTO's path) */
  int a_vec, b_vec;            /* their chunk bytes */
  int grid;
  uint64_t seed;
  double gen_ms;       /* spec -> PTX */
  hg_jit_info_t jit;   /* JIT or cache hit, module load */
  double first_run_ms; /* spec -> first launch finished (create + run + sync) */
  bool checked;
  double rel_err;      /* ||D - ref|| / ||ref||, ref the f32-accumulating GPU reference */
  double rel_err_blas; /* the same for cuBLASLt's D (NaN when not run) */
  double tolerance;
  int64_t bad, first_bad; /* non-finite elements of D (unwritten) and the first one */
  char where[160];        /* where the error sits: the worst 64x64 block of D */
  bool benched;
  double ms, tflops, blas_ms, blas_tflops, ratio; /* ratio = cuBLASLt time / hopgen time */
  double repack_ms;  /* compare_repack, run read in place: repack + tma-wgmma per call */
  double unfused_ms; /* a bias/activation chain: the plain GEMM, then a kernel applying it */
  double cpasync_ms; /* compare_repack, run repacked: reading in place with cp.async */
  /* bench: host time of one hg_gemm_op_run with the same pointers (median of 101 calls made
   * back to back, launches included), the same with each call made after a synchronise
   * (run_host_idle_us: the GPU idle, but the thread woken from its wait, which costs up to
   * tens of us after a long kernel), and of a second hg_gemm_op_create of the same problem
   * (warm: the kernel cache by specification and the cubin cache) */
  double run_host_us, run_host_idle_us, warm_create_ms;
  /* check: D of `repeat_runs` more launches compared bit for bit with the first (every
   * hopgen kernel reduces in a fixed order, split-K included); for a batch-invariant problem,
   * the rows of a second operation with M = batch_m (fewer rows, the same operands) compared
   * bit for bit with D's */
  int repeat_runs;
  bool repeat_identical;
  /* split-K by atomic adds: bits may differ between launches; each repeat's D is instead
   * compared with the first's (relative Frobenius difference, the largest over the repeats),
   * which a workspace not left zeroed would fail */
  bool repeat_atomic;
  double repeat_rel_diff;
  /* bench: the cuBLASLt fused epilogue timed (and the ratio taken) against, "" for its plain
   * GEMM: "BIAS", "RELU_BIAS", "GELU_BIAS" (" (tanh form)" when the chain's GELU is erf's) */
  char blas_epilogue[32];
  int64_t batch_m;
  bool batch_identical;
  char note[256];
  /* check, fp8 D: D is compared with the reference converted on the host (x scale_d,
   * saturated to the largest finite value, round to nearest even); d_saturated: elements of
   * the reference that saturated. aux: its relative error against the reference's
   * pre-activation values. amax: the kernel's against the host's max |D| over D as
   * downloaded, bit for bit (both NaN also counts as equal) */
  int64_t d_saturated;
  double rel_err_aux;
  bool amax_checked, amax_equal;
  float amax, amax_ref;
  /* check: each repeat's amax (poisoned before its launch) bit for bit the host's max |D|
   * over that launch's D (the first's amax, but for split-K by atomic adds, whose D may
   * differ between launches), else the first that differed and its reference; the
   * workspace's hg_gemm_op_workspace_zero_bytes (state_bytes) all zero after the launches,
   * else the first nonzero byte */
  bool repeat_amax_equal, state_zero;
  float repeat_amax, repeat_amax_ref;
  int64_t state_bytes, state_first_nonzero;
  /* bench with an epilogue chain (a bias, an activation, row or column scales, a residual),
   * fp8 D, amax or aux: the plain GEMM of the same shape with bf16 D and no chain, timed
   * alongside (plain_ms); over_plain = ms / plain_ms - 1 */
  double plain_ms, over_plain;
  /* bench: bytes of A, B, D (and C) over hopgen's time, the driver's device-to-device copy
   * of 256 MiB in the same run (bytes read and written over its time), their ratio; and how
   * many operand sets the timed runs rotated among (more than one when A and B fit twice in
   * the L2 cache: a run on one buffer would time the cache) */
  double gbs, d2d_gbs, bw_frac;
  int rotated;
} hg_gemm_report_t;

hg_status_t hg_gemm_run(hg_rt_t *rt, const hg_gemm_problem_t *p, const hg_gemm_run_options_t *o,
                        hg_gemm_report_t *r);
/* Time the heuristic's configuration and every one of a small search space that fits the
 * problem (hg_gemm_tune_space), keep the fastest in the cache directory (gemm-tuned.txt),
 * return it and its report. */
hg_status_t hg_gemm_tune(hg_rt_t *rt, const hg_gemm_problem_t *p, const hg_gemm_run_options_t *o,
                         hg_gemm_config_t *best, hg_gemm_report_t *best_report);
/* Keep c as the configuration for problems like p on device (what hg_gemm_tune does with its
 * winner; also a way to pin one): a line appended to gemm-tuned.txt in the cache directory,
 * the last line for a problem winning. Nothing is written when the cache is off. */
hg_status_t hg_gemm_tuned_record(const hg_gemm_problem_t *p, const char *device,
                                 const hg_gemm_config_t *c);
/* The stored winner for this problem on this device, if any. */
bool hg_gemm_tuned_lookup(const hg_gemm_problem_t *p, const char *device, hg_gemm_config_t *out);

/* ---------------------------------------------------------------- grouped GEMM (MoE) */

/* A grouped GEMM for mixture-of-experts layers (hg_gemm_group_t has the layouts): D_g = alpha
 * (* scale_a * scale_b[g] for fp8) * A_g x B_g for every group g in one persistent launch, the
 * groups' rows read on the device (CUDA-graph safe, no host synchronisation; empty groups
 * allowed). B is groups x N x K (b_k_major, torch's b.transpose(-2, -1) of an (E, K, N) b) or
 * groups x K x N; A is K-major, D row-major with packed rows. */
/* How fp8 operands of a grouped GEMM are scaled (the run's scale_a and scale_b):
 *   TENSOR  scale_a one f32, scale_b one f32 per group;
 *   ROW     scale_a one f32 per row of A (contiguous: rows; masked: groups x rows), scale_b one
 *           f32 per column of each group's B (groups x N): D_g(i, j) = scale_a[i] scale_b[g][j]
 *           (A_g x B_g)(i, j), as torch._scaled_grouped_mm's row-wise scales;
 *   BLOCK   the dense GEMM's block-wise scales (HG_SCALE_BLOCK: 1x128 for A, 128x128 for B,
 *           applied per k-block in the main loop, K of any length the dense GEMM takes), in
 *           the dense layouts, so that DeepGEMM-style torch tensors pass as stored:
 *           scale_a: contiguous: one table for A's rows, sa(i, kb) = scale_a[kb * scale_lda
 *             + i] over all rows i (scale_lda >= rows, 0: rows), i.e. shape [rows,
 *             ceil(K/128)] with strides (1, scale_lda); masked: one such table per group,
 *             scale_a[g * ceil(K/128) * scale_lda + kb * scale_lda + i] (scale_lda >= the
 *             capacity rows, 0: rows), shape [G, rows, ceil(K/128)], strides
 *             (ceil(K/128) scale_lda, 1, scale_lda);
 *           scale_b: one table per group, sb(g, jb, kb) = scale_b[g * ceil(N/128) * scale_ldb
 *             + jb * scale_ldb + kb] (scale_ldb >= ceil(K/128), 0: ceil(K/128)), shape [G,
 *             ceil(N/128), ceil(K/128)] row-major when scale_ldb = ceil(K/128);
 *           D_g(i, j) = alpha sum_kb sa(i, kb) sb(g, j / 128, kb) (A_g x B_g over k-block kb).
 *           Tile K 128, tile N dividing 128, fp8_accum ACCURATE (FAST is refused), as dense. */
typedef enum hg_grouped_scale {
  HG_GROUPED_SCALE_TENSOR = 0,
  HG_GROUPED_SCALE_ROW,
  HG_GROUPED_SCALE_BLOCK,
} hg_grouped_scale_t;

typedef struct hg_grouped_gemm_problem {
  hg_gemm_group_t layout; /* HG_GROUP_CONTIGUOUS or HG_GROUP_MASKED */
  int groups;             /* experts, 1..HG_GROUPED_MAX_GROUPS */
  /* contiguous: the rows of A and D (every group's); masked: the rows per group (capacity) */
  int64_t rows;
  int64_t n, k;
  hg_dtype_t a_type, b_type, d_type; /* bf16/f16, or fp8 (e4m3/e5m2) with bf16/f16/f32 D */
  bool b_k_major;
  float alpha; /* 0 means 1 */
  /* rows per group the configuration is chosen for (0: rows / groups for contiguous, rows
   * for masked) */
  int64_t expected_rows;
  hg_grouped_scale_t scale;      /* fp8 only for ROW and BLOCK */
  hg_gemm_fp8_accum_t fp8_accum; /* fp8: ACCURATE (the default) or FAST, as the dense GEMM's */
  int64_t scale_lda, scale_ldb;  /* BLOCK: the tables' leading dimensions (0: packed; above) */
} hg_grouped_gemm_problem_t;

/* The GEMM problem a grouped one is (hg_gemm_problem_t.group set), normalised. */
hg_status_t hg_grouped_gemm_problem(const hg_grouped_gemm_problem_t *g, hg_gemm_problem_t *out);

typedef struct hg_grouped_gemm_op hg_grouped_gemm_op_t;
/* c = NULL: the heuristic's configuration for expected_rows per group on this device. */
hg_status_t hg_grouped_gemm_op_create(hg_rt_t *rt, const hg_grouped_gemm_problem_t *p,
                                      const hg_gemm_config_t *c, hg_backend_t be,
                                      hg_grouped_gemm_op_t **out);
/* Launch on stream (asynchronous). groups: the device int32 array (offs or counts, as the
 * layout says); scale_a, scale_b: fp8's scales as problem.scale says (TENSOR: 0 = 1.0; ROW
 * and BLOCK: both required, 4-byte aligned f32). */
hg_status_t hg_grouped_gemm_op_run(hg_grouped_gemm_op_t *op, hg_devptr_t a, hg_devptr_t b,
                                   hg_devptr_t d, hg_devptr_t groups, hg_devptr_t scale_a,
                                   hg_devptr_t scale_b, hg_stream_t stream);
void hg_grouped_gemm_op_destroy(hg_grouped_gemm_op_t *op);
const hg_gemm_kernel_t *hg_grouped_gemm_op_kernel(const hg_grouped_gemm_op_t *op);
int hg_grouped_gemm_op_grid(const hg_grouped_gemm_op_t *op);

/* Row counts of `groups` groups for a check or bench: `tokens` each when seed is 0, else
 * uneven - drawn from seed around `tokens`, some groups empty, one far above the rest - with
 * the same total (groups x tokens). */
void hg_grouped_gemm_counts(int groups, int64_t tokens, uint64_t seed, int64_t *counts);

/* Run, check and time a grouped GEMM (`hopgen grouped-gemm`): counts[g] rows per group (host
 * values, uploaded; masked: each <= p->rows). check: D poisoned (NaN) first, an
 * f32-accumulating reference per group, and every row outside the groups still poisoned.
 * bench: hopgen against cuBLASLt on the same data, one cuBLASLt GEMM per non-empty group on
 * one stream (the loaded cuBLASLt's grouped matmul is not used; the report says so). */
typedef struct hg_grouped_gemm_report {
  hg_gemm_config_t config;
  char kernel[64];
  int grid;
  uint64_t seed;
  int64_t total_rows; /* rows computed: the sum of the counts */
  bool checked;
  double rel_err, rel_err_blas, tolerance;
  int64_t bad;     /* non-finite elements inside the groups (unwritten) */
  int64_t touched; /* elements outside every group that were written */
  char where[160];
  bool benched;
  double ms, tflops, blas_ms, blas_tflops, ratio; /* ratio = cuBLASLt time / hopgen time */
  char note[160];
} hg_grouped_gemm_report_t;

hg_status_t hg_grouped_gemm_run(hg_rt_t *rt, const hg_grouped_gemm_problem_t *p,
                                const int64_t *counts, const hg_gemm_config_t *c,
                                const hg_gemm_run_options_t *o, hg_grouped_gemm_report_t *r);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
