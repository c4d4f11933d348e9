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

#include "hopgen/emit.h"
#include "hopgen/runtime.h"
#include "hopgen/sm90.h"
#include "hopgen/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- generated kernels */

/* A generated kernel: its code and what a launch needs besides the grid. */
typedef struct hg_kernel {
  hg_text_t ptx;       /* PTX for the driver (from either backend) */
  hg_text_t mlir;      /* the MLIR module when the MLIR backend made it, else empty */
  char name[64];       /* entry point */
  uint32_t threads;    /* per CTA, 1-D */
  uint32_t smem_bytes; /* dynamic shared memory */
  uint32_t cluster[3]; /* required cluster shape ({1,1,1}: none) */
  double gen_ms;       /* spec -> PTX, including MLIR lowering */
} hg_kernel_t;

void hg_kernel_free(hg_kernel_t *k);
/* Print the builder's program through a backend into k (the common tail of generators). */
hg_status_t hg_kernel_finish(hg_builder_t *b, hg_backend_t be, hg_kernel_t *k);

/* ---------------------------------------------------------------- utility kernels */

/* Fresh random data, never zeros: hg_fill_random_<dtype>(ptr, count, seed) writes count
 * elements, uniform in [-1, 1) for 16/32-bit floats, finite fp8 of magnitude < 2 with a
 * random sign, random bits for integers. 256 threads, any grid (grid-stride loop). */
hg_status_t hg_gen_fill_random(hg_dtype_t dtype, hg_backend_t be, hg_kernel_t *k);
/* dst(r,c,z) = src(r,c,z) for elements of esize bytes, with independent leading
 * dimensions and batch strides: copies an operand TMA cannot address (leading dimension
 * not a multiple of 16 bytes) into an aligned scratch buffer. */
hg_status_t hg_gen_repack(int esize, hg_backend_t be, hg_kernel_t *k);

/* ---------------------------------------------------------------- TMA copy kernels */
/* (owned by the TMA kernels work: specs, generators, run/check drivers, streaming copy) */

/* ---------------------------------------------------------------- GEMM */

typedef enum hg_gemm_schedule {
  HG_SCHED_COOPERATIVE, /* consumer warpgroups split one tile along M */
  HG_SCHED_PINGPONG,    /* consumer warpgroups alternate tiles; one's epilogue overlaps the
                           other's main loop */
} hg_gemm_schedule_t;

typedef enum hg_raster {
  HG_RASTER_M, /* consecutive tiles walk down M within a group of raster_group N-tiles */
  HG_RASTER_N, /* consecutive tiles walk along N within a group of raster_group M-tiles */
} hg_raster_t;

/* D = alpha * A x B + beta * C, row-major D and C (MxN, leading dimensions ldd/ldc).
 * A is MxK: K-major (row-major, lda >= K) or M-major (column-major, lda >= M). B is KxN:
 * K-major (each of the N columns contiguous in K, ldb >= K) or N-major (row-major, ldb >=
 * N). Leading dimensions and batch strides of 0 mean "packed". fp8 operands carry
 * per-tensor scales, applied with alpha in the epilogue. */
typedef struct hg_gemm_problem {
  int64_t m, n, k;
  int batch;
  hg_dtype_t a_type, b_type, d_type; /* C has d_type */
  bool a_k_major, b_k_major;
  int64_t lda, ldb, ldc, ldd;
  int64_t batch_stride_a, batch_stride_b, batch_stride_c, batch_stride_d;
  float alpha, beta;
} hg_gemm_problem_t;

/* Fill 0 leading dimensions and batch strides with the packed values and check the
 * problem (types, majorness, sizes); the sentence names what is wrong. */
hg_status_t hg_gemm_problem_normalize(hg_gemm_problem_t *p);

typedef struct hg_gemm_config {
  int tile_m, tile_n, tile_k; /* CTA tile */
  int cluster_m, cluster_n;   /* CTAs per cluster along M (share B) and N (share A) */
  int stages;                 /* shared-memory pipeline depth */
  hg_gemm_schedule_t schedule;
  hg_raster_t raster;
  int raster_group; /* tiles per rasterization group (L2 reuse), >= 1 */
  int epi_n;        /* columns per epilogue sub-tile */
} hg_gemm_config_t;

/* The f32-accumulating reference: dref (packed f32, batch x M x N) = alpha * A x B + beta *
 * C, one thread per output through 16x16 shared-memory tiles; grid (ceil(N/16),
 * ceil(M/16), batch), 256 threads. Parameters: a, b, c, dref, m, n, k, lda, ldb, ldc,
 * batch_stride_a/b/c, alpha, beta. */
hg_status_t hg_gen_gemm_reference(const hg_gemm_problem_t *p, hg_backend_t be, hg_kernel_t *k);

int hg_gemm_config_print(const hg_gemm_config_t *c, char *buf, size_t size);
hg_status_t hg_gemm_config_parse(const char *text, hg_gemm_config_t *out);

#ifdef __cplusplus
}
#endif
#endif
