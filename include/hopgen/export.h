/* hopgen ahead-of-time export: a generated kernel written out as files a C or C++ program
 * builds and ships with only the CUDA driver (libcuda) at run time, no hopgen.
 *
 * For a GEMM, hg_export_gemm writes into dir:
 *   NAME.ptx     the kernel's PTX (sm_90a)
 *   NAME.cubin   the same assembled with `ptxas -arch=sm_90a` (when opts->cubin)
 *   NAME.h       the launch API: NAME_load(), NAME_launch(&args, stream), NAME_error(),
 *                NAME_unload(), and the NAME_args_t struct (pointers, sizes, leading
 *                dimensions, batch strides, alpha, beta, fp8 scales, and the epilogue's
 *                pointers: bias, rowscale, colscale, residual, fp8 D's scale_d, amax with its
 *                amax_state - HG_AMAX_STATE_BYTES the caller zeroes once, each launch
 *                leaves them zero -
 *                and aux with ldaux)
 *   NAME.c       the image (cubin, or PTX the driver JIT-compiles) as a byte array and the
 *                launcher: it checks the arguments against the kernel's rules, encodes the
 *                tensor maps with cuTensorMapEncodeTiled from the pointers and sizes, sizes
 *                the persistent grid with cuOccupancyMaxActiveClusters and launches with
 *                cuLaunchKernelEx.
 * The launcher includes <cuda.h> (CUDA 12.0 or later) and links directly against libcuda
 * (-lcuda; the toolkit's stubs/libcuda.so at build time); it compiles as C99 and C++. One
 * kernel serves every M, N, K, batch and leading dimension of its kind (the types,
 * majorness, D's TMA store and the configuration are fixed; hg_gemm_generate). */
#ifndef HOPGEN_EXPORT_H
#define HOPGEN_EXPORT_H

#include <stdbool.h>

#include "hopgen/kernels.h"
#include "hopgen/status.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: what libhopgen.so exports */

typedef struct hg_export_options {
  const char *dir;  /* an existing directory */
  const char *name; /* a C identifier: the files' stem and the functions' prefix */
  bool cubin;       /* assemble with ptxas and embed the cubin; false: embed the PTX */
} hg_export_options_t;

#define HG_EXPORT_MAX_FILES 4

typedef struct hg_export_result {
  int count;                            /* files written */
  char files[HG_EXPORT_MAX_FILES][512]; /* their paths */
  bool has_cubin;                       /* the launcher embeds a cubin (else PTX) */
  char note[256];                       /* the kernel, configuration and what D needs */
} hg_export_result_t;

/* Generate the GEMM for p (c NULL: the heuristic's configuration for 132 SMs) through
 * backend be and write the files above. The kernel takes every problem that differs from p
 * only in M, N, K, batch, leading dimensions and batch strides and that TMA can address (the
 * launcher refuses the others with CUDA_ERROR_INVALID_VALUE and a sentence in NAME_error());
 * D is stored with TMA when p allows it, so an exported kernel made from a problem with
 * d_no_tma = true takes any D. HG_ERR_TOOL when opts->cubin is set and ptxas (CUDA toolkit)
 * cannot be found or run: export with cubin = false to embed the PTX instead. Split-K
 * configurations are refused (the launcher allocates no workspace). */
hg_status_t hg_export_gemm(const hg_gemm_problem_t *p, const hg_gemm_config_t *c, hg_backend_t be,
                           const hg_export_options_t *opts, hg_export_result_t *out);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
