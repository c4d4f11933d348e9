/* hopgen runtime — the CUDA driver loaded with dlopen("libcuda.so.1"), modules JIT-compiled
 * from PTX with an on-disk cache, tensor maps, cluster launch, timing.
 *
 * No link-time CUDA dependency: on a machine without the driver, hg_rt_open returns
 * HG_ERR_NO_DRIVER with a sentence, and everything else in hopgen still works. */
#ifndef HOPGEN_RUNTIME_H
#define HOPGEN_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hopgen/sm90.h"
#include "hopgen/status.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: what libhopgen.so exports */

typedef struct hg_rt hg_rt_t;             /* driver, context and device; one per process */
typedef struct hg_module hg_module_t;     /* a loaded module */
typedef struct hg_function hg_function_t; /* a kernel of a module (owned by the module) */
typedef uint64_t hg_devptr_t;             /* CUdeviceptr */
typedef void *hg_stream_t;                /* CUstream; NULL = the context's default stream */
typedef void *hg_event_t;                 /* CUevent */

typedef struct hg_device_info {
  char name[128];
  int ordinal;
  int cc_major, cc_minor;
  int sm_count;
  int max_smem_per_block_optin; /* bytes a block may use after raising its limit */
  int max_smem_per_sm;
  int l2_bytes;
  int clock_khz;
  int mem_clock_khz;
  int mem_bus_bits;
  int driver_version; /* cuDriverGetVersion, e.g. 13000 */
  uint64_t total_mem_bytes;
} hg_device_info_t;

/* Load the driver (libcuda.so.1, or the path in $HOPGEN_LIBCUDA), pick device `ordinal`,
 * retain its primary context. Fails with HG_ERR_NO_DRIVER (no libcuda.so.1, cuInit failed,
 * a driver older than CUDA 12.0) or HG_ERR_NO_DEVICE (no device, ordinal out of range, not
 * sm_90). Every call binds the context to the calling thread, so any thread may use rt. */
hg_status_t hg_rt_open(int ordinal, hg_rt_t **out);
void hg_rt_close(hg_rt_t *rt);
const hg_device_info_t *hg_rt_device(const hg_rt_t *rt);

/* ---------------------------------------------------------------- memory and streams */

/* Device memory (256-byte aligned); 0 bytes gives the null pointer, which free accepts. */
hg_status_t hg_rt_alloc(hg_rt_t *rt, size_t bytes, hg_devptr_t *out);
void hg_rt_free(hg_rt_t *rt, hg_devptr_t p);
/* Synchronous copies (they wait for work on the default stream and on streams made by
 * hg_rt_stream_create, which are blocking streams). */
hg_status_t hg_rt_upload(hg_rt_t *rt, hg_devptr_t dst, const void *src, size_t bytes);
hg_status_t hg_rt_download(hg_rt_t *rt, void *dst, hg_devptr_t src, size_t bytes);
hg_status_t hg_rt_copy_d2d(hg_rt_t *rt, hg_devptr_t dst, hg_devptr_t src, size_t bytes,
                           hg_stream_t stream);
hg_status_t hg_rt_memset8(hg_rt_t *rt, hg_devptr_t dst, uint8_t value, size_t bytes,
                          hg_stream_t stream);
hg_status_t hg_rt_stream_create(hg_rt_t *rt, hg_stream_t *out);
void hg_rt_stream_destroy(hg_rt_t *rt, hg_stream_t s);
/* Wait for a stream; a kernel's fault is reported here with a hint (an illegal instruction
 * from TMA, say), after which the context is lost for the whole process. */
hg_status_t hg_rt_sync(hg_rt_t *rt, hg_stream_t s);
/* The id of the CUDA-graph capture under way on stream s (unique in the process, never 0), or
 * 0 when s is not capturing. Callers that keep state per capture (a workspace that must start
 * at zero, made zero once for every replay of the graph) key it by this id. An invalidated
 * capture is refused with a sentence. */
hg_status_t hg_rt_stream_capture_id(hg_rt_t *rt, hg_stream_t s, uint64_t *id);
hg_status_t hg_rt_event_create(hg_rt_t *rt, hg_event_t *out);
void hg_rt_event_destroy(hg_rt_t *rt, hg_event_t e);
hg_status_t hg_rt_event_record(hg_rt_t *rt, hg_event_t e, hg_stream_t s);
/* Waits for `end`, then the time between the two events. */
hg_status_t hg_rt_event_elapsed_ms(hg_rt_t *rt, hg_event_t start, hg_event_t end, float *ms);

/* ---------------------------------------------------------------- modules */

typedef struct hg_jit_info {
  bool cache_hit;       /* loaded from the on-disk cache, no JIT */
  double compile_ms;    /* JIT time (0 on a hit) */
  double load_ms;       /* module load time (on a hit: the whole warm path, lookup included) */
  char cache_path[512]; /* the entry's file ("" when the cache is off) */
  /* Why the cache was bypassed or an entry replaced: "HOPGEN_CACHE_DIR=off", an unwritable
   * directory, a damaged entry that was deleted and recompiled. "" when the cache simply
   * worked. The cache never makes a load fail: it is an optimisation. */
  char cache_note[256];
} hg_jit_info_t;

/* Compile PTX with the driver's JIT (the log goes into a failure's sentence) or load the
 * compiled image from the cache ($HOPGEN_CACHE_DIR, else $XDG_CACHE_HOME/hopgen, else
 * ~/.cache/hopgen; HOPGEN_CACHE_DIR=off disables it). Entries are keyed by the PTX, driver
 * version and device, and a hit compares the whole stored key, not only its hash; written
 * atomically; a corrupt entry is recompiled. */
hg_status_t hg_rt_module_load(hg_rt_t *rt, const char *ptx, hg_module_t **out, hg_jit_info_t *info);

/* The directory every hopgen cache uses (compiled modules, MLIR lowerings, tuned GEMM
 * configurations): $HOPGEN_CACHE_DIR ("off" disables caching), else $XDG_CACHE_HOME/hopgen,
 * else $HOME/.cache/hopgen. HG_OK with the path in buf ("" when off); HG_ERR_IO with a
 * sentence when the location cannot be used (a home that does not exist, a file in the way,
 * a directory that is not writable): every cache is then off and nothing is created. Looks
 * at the file system, creates nothing. */
hg_status_t hg_cache_dir(char *buf, size_t size);
void hg_rt_module_unload(hg_rt_t *rt, hg_module_t *m);
/* The kernel `name`; dynamic shared memory above 48 KB is enabled here when smem_bytes
 * asks for it (and refused with a sentence above the device's opt-in limit). Asking twice
 * gives the same handle. A module and its kernels are not for concurrent use from several
 * threads. */
hg_status_t hg_rt_function(hg_rt_t *rt, hg_module_t *m, const char *name, uint32_t smem_bytes,
                           hg_function_t **out);

/* ---------------------------------------------------------------- tensor maps */

/* An encoded CUtensorMap, passed by value as a kernel parameter. */
typedef struct hg_tensormap {
#ifdef __cplusplus
  alignas(64) uint64_t opaque[16]; /* C++ spells C11's _Alignas this way */
#else
  _Alignas(64) uint64_t opaque[16];
#endif
} hg_tensormap_t;

/* Validate with hg_tensormap_validate (so the reason reaches the user), then encode with
 * cuTensorMapEncodeTiled at global address base. */
hg_status_t hg_rt_tensormap_encode(hg_rt_t *rt, const hg_tensormap_params_t *p, hg_devptr_t base,
                                   hg_tensormap_t *out);
/* Point an encoded map at another global address, every other field kept
 * (cuTensorMapReplaceAddress: cheaper than encoding again, for runs whose pointers change).
 * The address must be non-zero and 16-byte aligned (what an encode with this map's other
 * fields needs, interleave none); refused with a sentence otherwise. */
hg_status_t hg_rt_tensormap_replace_address(hg_rt_t *rt, hg_tensormap_t *map, hg_devptr_t base);

/* ---------------------------------------------------------------- launch */

typedef struct hg_launch {
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t cluster[3]; /* {0,0,0} or {1,1,1}: no cluster */
  uint32_t smem_bytes; /* dynamic shared memory */
  hg_stream_t stream;
  /* Programmatic dependent launch: the kernel may be scheduled before the previous kernel on
   * the stream has finished (it must execute griddepcontrol.wait, hg_b_griddep_wait, before
   * it touches that kernel's results). */
  bool pdl;
  /* A cooperative launch (cuLaunchCooperativeKernel's guarantee): every CTA of the grid is
   * resident at once, or the launch fails with a sentence. For kernels whose CTAs wait for
   * each other (stream-K, split-K reduced in the GEMM): without it, two such grids on
   * concurrent streams may each hold SMs the other's waiting CTAs need. */
  bool cooperative;
} hg_launch_t;

/* Launch with cuLaunchKernelEx. args[i] points at the value of parameter i (an
 * hg_tensormap_t for a tensor-map parameter). The grid must be a multiple of the cluster;
 * clusters above 8 CTAs (up to 16) are allowed as non-portable sizes; a cluster shape the
 * device cannot co-schedule (cuOccupancyMaxActiveClusters = 0) is refused with a sentence
 * before launch. smem_bytes above the kernel's current limit raises it as hg_rt_function
 * does. */
hg_status_t hg_rt_launch(hg_rt_t *rt, hg_function_t *f, const hg_launch_t *l, void **args);

/* How many clusters of l->cluster (CTAs of l->block threads with l->smem_bytes of dynamic
 * shared memory) the device can run at once (cuOccupancyMaxActiveClusters): the size of a
 * persistent grid, in clusters. */
hg_status_t hg_rt_max_active_clusters(hg_rt_t *rt, hg_function_t *f, const hg_launch_t *l,
                                      int *out);

/* Milliseconds since an arbitrary epoch, monotonic (for host-side cold/warm timings). */
double hg_now_ms(void);

/* ---------------------------------------------------------------- cuBLAS reference */

/* cuBLASLt loaded with dlopen (libcublasLt.so.13, else .12; $HOPGEN_LIBCUBLASLT overrides):
 * the side-by-side reference for GEMM checks and benchmarks. HG_ERR_TOOL with a sentence
 * when the library is absent (checked before the runtime, so it is reported even without
 * a GPU). Not for concurrent use from several threads. */
typedef struct hg_blas hg_blas_t;

/* D(MxN, row-major, ld ldd) = alpha * A(MxK) * B(KxN) + beta * C (same layout as D).
 * A is K-major (row-major MxK, ld lda) when a_k_major, else M-major (column-major, ld
 * lda). B is K-major (column-major KxN, each of the N columns contiguous in K, ld ldb)
 * when b_k_major, else N-major (row-major KxN). Batches are strided by the *_batch
 * strides (elements). fp8 takes per-tensor scales as device pointers to one f32 each
 * (0 = 1.0); cuBLASLt requires K-major fp8 operands.
 * Conveniences: a leading dimension of 0 is the tight one; batch 0 is 1; c = 0 lets D
 * stand in for C (read only when beta != 0).
 * Types (f32 accumulation): f16 x f16 and bf16 x bf16 -> the same type or f32; f32 or tf32
 * -> f32; e4m3/e5m2 x e4m3/e5m2 (not e5m2 x e5m2) -> bf16, f16 or f32. */
/* cuBLASLt's fused epilogues hopgen compares with (cublasLtEpilogue_t). */
typedef enum hg_blas_epilogue {
  HG_BLAS_EPI_NONE = 0,
  HG_BLAS_EPI_BIAS,
  HG_BLAS_EPI_RELU_BIAS,
  HG_BLAS_EPI_GELU_BIAS,     /* tanh-form GELU */
  HG_BLAS_EPI_GELU_AUX_BIAS, /* and the pre-activation into aux */
} hg_blas_epilogue_t;

typedef struct hg_blas_gemm_args {
  int64_t m, n, k;
  int batch;
  hg_dtype_t a_type, b_type, cd_type;
  bool a_k_major, b_k_major;
  int64_t lda, ldb, ldc, ldd;
  int64_t batch_stride_a, batch_stride_b, batch_stride_c, batch_stride_d;
  float alpha, beta;
  hg_devptr_t a, b, c, d;
  hg_devptr_t scale_a, scale_b;
  hg_stream_t stream;
  /* cuBLASLt's fused epilogue (its GELU is the tanh form): bias is a vector along N of
   * bias_type (0: D's type); aux, for GELU_AUX_BIAS, the pre-activation in D's type, row-major
   * M x N at leading dimension ld_aux. */
  hg_blas_epilogue_t epilogue;
  hg_devptr_t bias, aux;
  hg_dtype_t bias_type;
  int64_t ld_aux;
  /* fp8: CUBLASLT_MATMUL_DESC_FAST_ACCUM (the whole K in the MMA's accumulator, as hopgen's
   * HG_FP8_ACCUM_FAST); false is cuBLASLt's default, periodic promotion to f32 */
  bool fast_accum;
  /* fp8 scaling, with hopgen's meaning and layouts (hg_gemm_scale_t, kernels.h: the same
   * values): per tensor; row-wise (scale_a M values, scale_b N: cuBLASLt's OUTER_VEC_32F);
   * block-wise (scale_a 1x128 M-major, scale_b 128x128: cuBLASLt's VEC128_32F and
   * BLK128x128_32F, which take scale_lda = M and scale_ldb = ceil(K / 128) rounded up to 4,
   * with M and N multiples of 4 and 16-byte aligned scale pointers) */
  int scale;
  int64_t scale_lda, scale_ldb;
} hg_blas_gemm_args_t;

hg_status_t hg_blas_open(hg_rt_t *rt, hg_blas_t **out);
void hg_blas_close(hg_blas_t *blas);
/* Run one GEMM with cuBLASLt (heuristic algorithm, 32 MiB workspace; the same call is
 * what benchmarks time). The first call for a shape picks and caches the algorithm. */
hg_status_t hg_blas_gemm(hg_blas_t *blas, const hg_blas_gemm_args_t *args);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
