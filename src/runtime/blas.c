/* cuBLASLt, loaded with dlopen: the side-by-side reference GEMM for checks and benchmarks.
 *
 * Types, enum values and signatures are declared here from the cuBLAS documentation
 * ("cuBLASLt API Reference": cublasLtMatmul, cublasLtMatmulDescAttributes_t,
 * cublasLtMatrixLayoutAttribute_t, cublasLtMatmulPreferenceAttributes_t) and
 * library_types.h (cudaDataType), so hopgen needs neither the headers nor a link.
 *
 * Mapping hopgen's row-major problem onto cuBLASLt's column-major one
 * -----------------------------------------------------------------
 * hopgen: D (M x N, row-major, ld ldd) = alpha * A (M x K) * B (K x N) + beta * C.
 * A row-major M x N matrix with leading dimension ld is, byte for byte, the column-major
 * N x M matrix D^T with the same ld. So hopgen asks cuBLASLt for
 *
 *     D^T (N x M) = B^T (N x K) * A^T (K x M)
 *
 * i.e. cuBLASLt's m = N, n = M, k = K, its "A" operand is hopgen's B and its "B" operand
 * is hopgen's A; C and D are described as column-major N x M with ldc / ldd.
 *   hopgen B, K-major (column-major K x N, each of the N columns contiguous in K): element
 *     (k, n) at n * ldb + k. cuBLASLt needs op(A') = B^T (N x K), element (n, k) at
 *     n * ldb + k: stored column-major K x N (rows K, cols N, ld ldb) and transposed:
 *     transa = T.
 *   hopgen B, N-major (row-major K x N): element (k, n) at k * ldb + n = B^T stored
 *     column-major N x K (rows N, cols K, ld ldb): transa = N.
 *   hopgen A, K-major (row-major M x K): element (m, k) at m * lda + k = A^T stored
 *     column-major K x M (rows K, cols M, ld lda): transb = N.
 *   hopgen A, M-major (column-major M x K): stored column-major M x K (rows M, cols K,
 *     ld lda), transposed: transb = T.
 * cuBLASLt runs fp8 only in the "TN" form (transa = T, transb = N), which is exactly
 * "both hopgen operands K-major"; other fp8 layouts are refused with a sentence. The
 * per-tensor scales swap with the operands: cuBLASLt's A scale is hopgen's scale_b. */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"

/* ---------------------------------------------------------------- declarations */

typedef int cublasStatus_t; /* CUBLAS_STATUS_SUCCESS = 0 */
typedef struct hg_lt_handle_ *cublasLtHandle_t;
typedef struct hg_lt_desc_ *cublasLtMatmulDesc_t;
typedef struct hg_lt_layout_ *cublasLtMatrixLayout_t;
typedef struct hg_lt_pref_ *cublasLtMatmulPreference_t;
typedef struct cublasLtMatmulAlgo {
  uint64_t data[8];
} cublasLtMatmulAlgo_t;
typedef struct cublasLtMatmulHeuristicResult {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
} cublasLtMatmulHeuristicResult_t;
_Static_assert(sizeof(cublasLtMatmulHeuristicResult_t) == 96, "cublasLtMatmulHeuristicResult_t");

enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_NOT_SUPPORTED = 15 };
/* cudaDataType_t (library_types.h) */
enum {
  CUDA_R_32F = 0,
  CUDA_R_16F = 2,
  CUDA_R_16BF = 14,
  CUDA_R_8F_E4M3 = 28,
  CUDA_R_8F_E5M2 = 29,
};
/* cublasComputeType_t */
enum { CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_FAST_TF32 = 77 };
/* cublasOperation_t */
enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };
/* cublasLtMatmulDescAttributes_t */
enum {
  CUBLASLT_MATMUL_DESC_TRANSA = 3,           /* int32_t */
  CUBLASLT_MATMUL_DESC_TRANSB = 4,           /* int32_t */
  CUBLASLT_MATMUL_DESC_A_SCALE_POINTER = 17, /* const void *, device, f32 */
  CUBLASLT_MATMUL_DESC_B_SCALE_POINTER = 18,
  CUBLASLT_MATMUL_DESC_EPILOGUE = 7,                /* uint32_t, cublasLtEpilogue_t */
  CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8,            /* const void *, device */
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER = 11,   /* void *, device */
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD = 12,        /* int64_t, elements */
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE = 22, /* int32_t, cudaDataType_t */
  CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26,         /* int32_t, cudaDataType_t */
  CUBLASLT_MATMUL_DESC_FAST_ACCUM = 25,             /* int8_t */
  CUBLASLT_MATMUL_DESC_A_SCALE_MODE = 31,           /* int32_t, cublasLtMatmulMatrixScale_t */
  CUBLASLT_MATMUL_DESC_B_SCALE_MODE = 32,
};
/* cublasLtEpilogue_t, by hg_blas_epilogue_t */
static const uint32_t lt_epilogue[] = {1, 4, 6, 36, 164};
/* cublasLtMatrixLayoutAttribute_t */
enum {
  CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,          /* int32_t */
  CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6, /* int64_t, elements */
};
/* cublasLtMatmulPreferenceAttributes_t */
enum {
  CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,   /* uint64_t */
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5, /* uint32_t, default 256 */
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES = 6,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES = 7,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES = 8,
};

typedef cublasStatus_t (*PFN_cublasLtCreate)(cublasLtHandle_t *handle);
typedef cublasStatus_t (*PFN_cublasLtDestroy)(cublasLtHandle_t handle);
typedef size_t (*PFN_cublasLtGetVersion)(void);
typedef const char *(*PFN_cublasLtGetStatusName)(cublasStatus_t status);
typedef const char *(*PFN_cublasLtGetStatusString)(cublasStatus_t status);
typedef cublasStatus_t (*PFN_cublasLtMatmulDescCreate)(cublasLtMatmulDesc_t *desc, int computeType,
                                                       int scaleType);
typedef cublasStatus_t (*PFN_cublasLtMatmulDescDestroy)(cublasLtMatmulDesc_t desc);
typedef cublasStatus_t (*PFN_cublasLtMatmulDescSetAttribute)(cublasLtMatmulDesc_t desc, int attr,
                                                             const void *buf, size_t size);
typedef cublasStatus_t (*PFN_cublasLtMatrixLayoutCreate)(cublasLtMatrixLayout_t *layout, int type,
                                                         uint64_t rows, uint64_t cols, int64_t ld);
typedef cublasStatus_t (*PFN_cublasLtMatrixLayoutDestroy)(cublasLtMatrixLayout_t layout);
typedef cublasStatus_t (*PFN_cublasLtMatrixLayoutSetAttribute)(cublasLtMatrixLayout_t layout,
                                                               int attr, const void *buf,
                                                               size_t size);
typedef cublasStatus_t (*PFN_cublasLtMatmulPreferenceCreate)(cublasLtMatmulPreference_t *pref);
typedef cublasStatus_t (*PFN_cublasLtMatmulPreferenceDestroy)(cublasLtMatmulPreference_t pref);
typedef cublasStatus_t (*PFN_cublasLtMatmulPreferenceSetAttribute)(cublasLtMatmulPreference_t pref,
                                                                   int attr, const void *buf,
                                                                   size_t size);
typedef cublasStatus_t (*PFN_cublasLtMatmulAlgoGetHeuristic)(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
    cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
    cublasLtMatmulPreference_t pref, int requested, cublasLtMatmulHeuristicResult_t *results,
    int *returned);
typedef cublasStatus_t (*PFN_cublasLtMatmul)(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void *alpha, const void *a,
    cublasLtMatrixLayout_t adesc, const void *b, cublasLtMatrixLayout_t bdesc, const void *beta,
    const void *c, cublasLtMatrixLayout_t cdesc, void *d, cublasLtMatrixLayout_t ddesc,
    const cublasLtMatmulAlgo_t *algo, void *workspace, size_t workspace_bytes, CUstream stream);

/* X(name, required) */
#define HG_LT_SYMBOLS(X)                                                                           \
  X(cublasLtCreate, true)                                                                          \
  X(cublasLtDestroy, true)                                                                         \
  X(cublasLtGetVersion, true)                                                                      \
  X(cublasLtGetStatusName, false)                                                                  \
  X(cublasLtGetStatusString, false)                                                                \
  X(cublasLtMatmulDescCreate, true)                                                                \
  X(cublasLtMatmulDescDestroy, true)                                                               \
  X(cublasLtMatmulDescSetAttribute, true)                                                          \
  X(cublasLtMatrixLayoutCreate, true)                                                              \
  X(cublasLtMatrixLayoutDestroy, true)                                                             \
  X(cublasLtMatrixLayoutSetAttribute, true)                                                        \
  X(cublasLtMatmulPreferenceCreate, true)                                                          \
  X(cublasLtMatmulPreferenceDestroy, true)                                                         \
  X(cublasLtMatmulPreferenceSetAttribute, true)                                                    \
  X(cublasLtMatmulAlgoGetHeuristic, true)                                                          \
  X(cublasLtMatmul, true)

/* ---------------------------------------------------------------- state */

#define HG_BLAS_WORKSPACE_BYTES ((size_t)32 << 20)
#define HG_BLAS_PLANS 32

/* Everything that decides cuBLASLt's descriptors and algorithm (not the pointers' values,
 * only their alignment). Compared with memcmp, so always zeroed before filling. */
typedef struct plan_key {
  int64_t m, n, k, lda, ldb, ldc, ldd;
  int64_t stride_a, stride_b, stride_c, stride_d;
  int32_t batch, a_type, b_type, cd_type;
  int32_t a_k_major, b_k_major, scaled;
  uint32_t align[4];
  int32_t epilogue, bias_type;
  int64_t ld_aux;
  int32_t fast_accum, scale;
} plan_key_t;

typedef struct plan {
  bool used;
  plan_key_t key;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t layout[4]; /* cuBLASLt's A (hopgen B), B (hopgen A), C, D */
  cublasLtMatmulAlgo_t algo;
} plan_t;

#define HG_LT_FIELD_(name, required) PFN_##name name;

struct hg_blas {
  void *lib;
  char lib_path[256];
  HG_LT_SYMBOLS(HG_LT_FIELD_)
  size_t version;
  hg_rt_t *rt;
  cublasLtHandle_t handle;
  hg_devptr_t workspace;
  plan_t plans[HG_BLAS_PLANS];
  int next_victim;
};

static hg_status_t lt_fail(const hg_blas_t *b, cublasStatus_t st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static hg_status_t lt_fail(const hg_blas_t *b, cublasStatus_t st, const char *fmt, ...) {
  char call[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(call, sizeof call, fmt, ap);
  va_end(ap);
  const char *name = b->cublasLtGetStatusName ? b->cublasLtGetStatusName(st) : NULL;
  const char *text = b->cublasLtGetStatusString ? b->cublasLtGetStatusString(st) : NULL;
  return hg_error(HG_ERR_CUDA, "%s failed: %s%s%s%s (cuBLASLt status %d)", call,
                  name ? name : "cuBLAS error", text ? " (" : "", text ? text : "", text ? ")" : "",
                  (int)st);
}

/* ---------------------------------------------------------------- open and close */

static hg_status_t load_lt(hg_blas_t *b) {
  const char *env = getenv("HOPGEN_LIBCUBLASLT");
  const char *names[] = {"libcublasLt.so.13", "libcublasLt.so.12"};
  char tried[700] = "";
  size_t used = 0;
  if (env && *env) {
    b->lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    if (!b->lib) {
      const char *e = dlerror();
      return hg_error(HG_ERR_TOOL,
                      "cuBLASLt could not be loaded from %s (from HOPGEN_LIBCUBLASLT): %s; the "
                      "cuBLAS reference needs the CUDA toolkit's libcublasLt",
                      env, e ? e : "unknown error");
    }
    snprintf(b->lib_path, sizeof b->lib_path, "%s", env);
  } else {
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !b->lib; i++) {
      b->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
      if (b->lib) {
        snprintf(b->lib_path, sizeof b->lib_path, "%s", names[i]);
      } else if (used < sizeof tried) {
        const char *e = dlerror();
        used += (size_t)snprintf(tried + used, sizeof tried - used, "%s%s", used ? "; " : "",
                                 e ? e : names[i]);
      }
    }
    if (!b->lib)
      return hg_error(HG_ERR_TOOL,
                      "cuBLASLt could not be loaded (%s): install the CUDA toolkit's cuBLAS "
                      "(libcublasLt.so.13 or .12) or set HOPGEN_LIBCUBLASLT",
                      tried);
  }
#define HG_LT_RESOLVE_(name, required)                                                             \
  {                                                                                                \
    void *p_ = dlsym(b->lib, #name);                                                               \
    if (!p_ && required)                                                                           \
      return hg_error(HG_ERR_TOOL, "%s is not a usable cuBLASLt: it lacks %s", b->lib_path,        \
                      #name);                                                                      \
    memcpy(&b->name, &p_, sizeof p_);                                                              \
  }
  HG_LT_SYMBOLS(HG_LT_RESOLVE_)
#undef HG_LT_RESOLVE_
  b->version = b->cublasLtGetVersion();
  return hg_ok();
}

void hg_blas_close(hg_blas_t *b) {
  if (!b) return;
  if (b->rt) {
    hg_status_t s = hg_rt_bind(b->rt);
    (void)s;
  }
  for (int i = 0; i < HG_BLAS_PLANS; i++) {
    plan_t *p = &b->plans[i];
    if (!p->used) continue;
    for (int j = 0; j < 4; j++)
      if (p->layout[j]) b->cublasLtMatrixLayoutDestroy(p->layout[j]);
    if (p->desc) b->cublasLtMatmulDescDestroy(p->desc);
  }
  if (b->handle) b->cublasLtDestroy(b->handle);
  if (b->workspace) hg_rt_free(b->rt, b->workspace);
  /* The library stays mapped: it carries its own CUDA runtime, whose exit-time handlers
   * must still find their code when the process ends. */
  free(b);
}

hg_status_t hg_blas_open(hg_rt_t *rt, hg_blas_t **out) {
  if (!out) return hg_error(HG_ERR_INVALID, "hg_blas_open needs somewhere to put the handle");
  *out = NULL;
  hg_blas_t *b = (hg_blas_t *)calloc(1, sizeof *b);
  if (!b) return hg_error(HG_ERR_NOMEM, "cannot allocate the cuBLASLt state");
  /* The library first, so that a machine without cuBLAS says so even without a GPU. */
  hg_status_t s = load_lt(b);
  if (hg_is_ok(&s) && !rt)
    s = hg_error(HG_ERR_INVALID, "hg_blas_open needs an open runtime (hg_rt_open)");
  if (hg_is_ok(&s)) {
    b->rt = rt;
    s = hg_rt_bind(rt);
  }
  if (hg_is_ok(&s)) {
    cublasStatus_t st = b->cublasLtCreate(&b->handle);
    if (st != CUBLAS_STATUS_SUCCESS) {
      b->handle = NULL;
      s = lt_fail(b, st, "cublasLtCreate (%s)", b->lib_path);
    }
  }
  if (hg_is_ok(&s))
    s = hg_status_wrap(hg_rt_alloc(rt, HG_BLAS_WORKSPACE_BYTES, &b->workspace),
                       "allocating cuBLASLt's %zu MiB workspace: ", HG_BLAS_WORKSPACE_BYTES >> 20);
  if (!hg_is_ok(&s)) {
    hg_blas_close(b);
    return s;
  }
  *out = b;
  return hg_ok();
}

/* ---------------------------------------------------------------- GEMM */

static bool is_fp8(hg_dtype_t t) {
  return t == HG_E4M3 || t == HG_E5M2;
}

static int lt_type(hg_dtype_t t) {
  switch (t) {
  case HG_F16:
    return CUDA_R_16F;
  case HG_BF16:
    return CUDA_R_16BF;
  case HG_E4M3:
    return CUDA_R_8F_E4M3;
  case HG_E5M2:
    return CUDA_R_8F_E5M2;
  case HG_F32:
  case HG_TF32:
    return CUDA_R_32F; /* tf32 is f32 storage with a tf32 compute type */
  default:
    return -1;
  }
}

/* The type combinations cuBLASLt runs with f32 accumulation (cublasLtMatmul, "Datatypes
 * Supported"): 16-bit inputs of one kind with that kind or f32 out; f32 (optionally as
 * tf32); fp8 inputs, not both e5m2, with bf16/f16/f32 out. */
static hg_status_t check_types(const hg_blas_gemm_args_t *g) {
  const char *an = hg_dtype_name(g->a_type), *bn = hg_dtype_name(g->b_type),
             *cn = hg_dtype_name(g->cd_type);
  if (is_fp8(g->a_type) || is_fp8(g->b_type)) {
    if (!is_fp8(g->a_type) || !is_fp8(g->b_type))
      return hg_error(HG_ERR_UNSUPPORTED, "cuBLASLt GEMM of %s x %s: fp8 needs both operands fp8",
                      an, bn);
    if (g->a_type == HG_E5M2 && g->b_type == HG_E5M2)
      return hg_error(HG_ERR_UNSUPPORTED,
                      "cuBLASLt GEMM of e5m2 x e5m2 is not supported (one operand must be e4m3)");
    if (g->cd_type != HG_BF16 && g->cd_type != HG_F16 && g->cd_type != HG_F32)
      return hg_error(HG_ERR_UNSUPPORTED,
                      "cuBLASLt fp8 GEMM output %s: hopgen's reference writes bf16, f16 or f32",
                      cn);
    if (!g->a_k_major || !g->b_k_major)
      return hg_error(HG_ERR_UNSUPPORTED,
                      "cuBLASLt runs fp8 GEMMs only in the TN form: A (%s) and B (%s) must both "
                      "be K-major, but A is %s and B is %s",
                      an, bn, g->a_k_major ? "K-major" : "M-major",
                      g->b_k_major ? "K-major" : "N-major");
    return hg_ok();
  }
  if (g->scale_a || g->scale_b)
    return hg_error(HG_ERR_INVALID, "per-tensor scales are for fp8 operands; this GEMM is %s x %s",
                    an, bn);
  if (g->a_type != g->b_type)
    return hg_error(HG_ERR_UNSUPPORTED, "cuBLASLt GEMM of %s x %s: both operands need one type", an,
                    bn);
  switch (g->a_type) {
  case HG_F16:
  case HG_BF16:
    if (g->cd_type != g->a_type && g->cd_type != HG_F32)
      return hg_error(HG_ERR_UNSUPPORTED, "cuBLASLt GEMM of %s inputs writes %s or f32, not %s", an,
                      an, cn);
    return hg_ok();
  case HG_F32:
  case HG_TF32:
    if (g->cd_type != HG_F32)
      return hg_error(HG_ERR_UNSUPPORTED, "cuBLASLt GEMM of %s inputs writes f32, not %s", an, cn);
    return hg_ok();
  default:
    return hg_error(HG_ERR_UNSUPPORTED,
                    "cuBLASLt GEMM of %s inputs: hopgen's reference covers f16, bf16, f32, tf32 "
                    "and fp8",
                    an);
  }
}

/* The largest power of two (up to 256, cuBLASLt's default assumption) dividing the
 * address: algorithms needing more are excluded instead of faulting. */
static uint32_t alignment(hg_devptr_t p) {
  uint32_t a = 256;
  while (a > 1 && (p % a) != 0) a >>= 1;
  return a;
}

static void destroy_plan(hg_blas_t *b, plan_t *p) {
  for (int j = 0; j < 4; j++)
    if (p->layout[j]) b->cublasLtMatrixLayoutDestroy(p->layout[j]);
  if (p->desc) b->cublasLtMatmulDescDestroy(p->desc);
  memset(p, 0, sizeof *p);
}

#define LT_TRY(call, ...)                                                                          \
  do {                                                                                             \
    cublasStatus_t st_ = (call);                                                                   \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                                            \
      s = lt_fail(b, st_, __VA_ARGS__);                                                            \
      goto fail;                                                                                   \
    }                                                                                              \
  } while (0)

/* One attribute of the descriptor p->desc from the lvalue v; a failure names the attribute. */
#define DESC_SET(attr, v)                                                                          \
  LT_TRY(b->cublasLtMatmulDescSetAttribute(p->desc, attr, &(v), sizeof(v)), "setting " #attr)

static hg_status_t set_scales(hg_blas_t *b, plan_t *p, const hg_blas_gemm_args_t *g);

static hg_status_t build_plan(hg_blas_t *b, const plan_key_t *k, const hg_blas_gemm_args_t *g,
                              plan_t *p) {
  hg_status_t s = hg_ok();
  memset(p, 0, sizeof *p);
  p->key = *k;
  const int compute = k->a_type == HG_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  LT_TRY(b->cublasLtMatmulDescCreate(&p->desc, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
  /* See the mapping at the top of the file. */
  const int32_t transa = k->b_k_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int32_t transb = k->a_k_major ? CUBLAS_OP_N : CUBLAS_OP_T;
  DESC_SET(CUBLASLT_MATMUL_DESC_TRANSA, transa);
  DESC_SET(CUBLASLT_MATMUL_DESC_TRANSB, transb);
  if (k->epilogue != HG_BLAS_EPI_NONE) {
    /* cuBLASLt computes D^T (N x M, column-major): its bias runs along its rows, hopgen's N */
    const uint32_t epi = lt_epilogue[k->epilogue];
    DESC_SET(CUBLASLT_MATMUL_DESC_EPILOGUE, epi);
    const int32_t bt = lt_type((hg_dtype_t)k->bias_type);
    DESC_SET(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, bt);
    if (k->epilogue == HG_BLAS_EPI_GELU_AUX_BIAS) {
      const int32_t at = lt_type((hg_dtype_t)k->cd_type);
      DESC_SET(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, at);
      DESC_SET(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, k->ld_aux);
    }
  }
  if (k->scale) {
    /* cuBLASLt's A is hopgen's B (the scales swap, set_scales): outer vectors on both, or B's
     * 128x128 blocks on its A and A's 1x128 blocks on its B */
    const int32_t sa = k->scale == 1 ? 3 : 5, sb = k->scale == 1 ? 3 : 4;
    DESC_SET(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, sa);
    DESC_SET(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, sb);
    /* The scale vectors' pointers before the heuristic, as torch's scaled_gemm does: a vector
     * or block scale mode with no pointer yet is a descriptor cuBLASLt may reject
     * (AlgoGetHeuristic's CUBLAS_STATUS_INVALID_VALUE on an H100, cuBLASLt 13, when they
     * were set only before each cublasLtMatmul). Each run sets them again. */
    s = set_scales(b, p, g);
    if (!hg_is_ok(&s)) goto fail;
  }
  if (k->fast_accum) {
    const int8_t on = 1;
    DESC_SET(CUBLASLT_MATMUL_DESC_FAST_ACCUM, on);
  }
  const uint64_t a_rows = k->b_k_major ? (uint64_t)k->k : (uint64_t)k->n;
  const uint64_t a_cols = k->b_k_major ? (uint64_t)k->n : (uint64_t)k->k;
  const uint64_t b_rows = k->a_k_major ? (uint64_t)k->k : (uint64_t)k->m;
  const uint64_t b_cols = k->a_k_major ? (uint64_t)k->m : (uint64_t)k->k;
  struct {
    int type;
    uint64_t rows, cols;
    int64_t ld, stride;
    const char *what;
  } L[4] = {
      {lt_type((hg_dtype_t)k->b_type), a_rows, a_cols, k->ldb, k->stride_b, "B"},
      {lt_type((hg_dtype_t)k->a_type), b_rows, b_cols, k->lda, k->stride_a, "A"},
      {lt_type((hg_dtype_t)k->cd_type), (uint64_t)k->n, (uint64_t)k->m, k->ldc, k->stride_c, "C"},
      {lt_type((hg_dtype_t)k->cd_type), (uint64_t)k->n, (uint64_t)k->m, k->ldd, k->stride_d, "D"},
  };
  for (int j = 0; j < 4; j++) {
    LT_TRY(b->cublasLtMatrixLayoutCreate(&p->layout[j], L[j].type, L[j].rows, L[j].cols, L[j].ld),
           "cublasLtMatrixLayoutCreate(%s: %" PRIu64 " x %" PRIu64 ", ld %" PRId64 ")", L[j].what,
           L[j].rows, L[j].cols, L[j].ld);
    if (k->batch > 1) {
      const int32_t count = k->batch;
      LT_TRY(b->cublasLtMatrixLayoutSetAttribute(p->layout[j], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                 &count, sizeof count),
             "setting CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT of %s", L[j].what);
      const int64_t stride = L[j].stride;
      LT_TRY(b->cublasLtMatrixLayoutSetAttribute(
                 p->layout[j], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
             "setting CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET of %s", L[j].what);
    }
  }

  cublasLtMatmulPreference_t pref = NULL;
  LT_TRY(b->cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  {
    const uint64_t ws = HG_BLAS_WORKSPACE_BYTES;
    cublasStatus_t st = b->cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    /* cuBLASLt's A/B are hopgen's B/A. */
    const uint32_t al[4] = {k->align[1], k->align[0], k->align[2], k->align[3]};
    const int attr[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int j = 0; j < 4 && st == CUBLAS_STATUS_SUCCESS; j++)
      st = b->cublasLtMatmulPreferenceSetAttribute(pref, attr[j], &al[j], sizeof al[j]);
    cublasLtMatmulHeuristicResult_t result;
    memset(&result, 0, sizeof result);
    int found = 0;
    if (st == CUBLAS_STATUS_SUCCESS)
      st = b->cublasLtMatmulAlgoGetHeuristic(b->handle, p->desc, p->layout[0], p->layout[1],
                                             p->layout[2], p->layout[3], pref, 1, &result, &found);
    b->cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS || found < 1) {
      if (st != CUBLAS_STATUS_SUCCESS && st != CUBLAS_STATUS_NOT_SUPPORTED) {
        s = lt_fail(b, st, "cublasLtMatmulAlgoGetHeuristic");
      } else {
        s = hg_error(HG_ERR_UNSUPPORTED,
                     "cuBLASLt %zu has no algorithm for a %s x %s -> %s GEMM of M = %" PRId64
                     ", N = %" PRId64 ", K = %" PRId64 " (A %s, lda %" PRId64 "; B %s, ldb %" PRId64
                     "; ldd %" PRId64 "; batch %d; operand alignment %u/%u/%u/%u B)",
                     b->version, hg_dtype_name((hg_dtype_t)k->a_type),
                     hg_dtype_name((hg_dtype_t)k->b_type), hg_dtype_name((hg_dtype_t)k->cd_type),
                     k->m, k->n, k->k, k->a_k_major ? "K-major" : "M-major", k->lda,
                     k->b_k_major ? "K-major" : "N-major", k->ldb, k->ldd, k->batch, k->align[0],
                     k->align[1], k->align[2], k->align[3]);
      }
      goto fail;
    }
    p->algo = result.algo;
  }
  p->used = true;
  return hg_ok();
fail:
  destroy_plan(b, p);
  return s;
}

static hg_status_t check_shape(const hg_blas_gemm_args_t *g, hg_blas_gemm_args_t *n) {
  *n = *g;
  if (g->m < 1 || g->n < 1 || g->k < 1)
    return hg_error(HG_ERR_INVALID,
                    "GEMM shape M = %" PRId64 ", N = %" PRId64 ", K = %" PRId64
                    ": every extent must be at least 1",
                    g->m, g->n, g->k);
  if (g->m > INT32_MAX || g->n > INT32_MAX || g->k > INT32_MAX)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "GEMM shape M = %" PRId64 ", N = %" PRId64 ", K = %" PRId64
                    ": cuBLASLt takes extents up to 2^31 - 1",
                    g->m, g->n, g->k);
  if (g->batch < 0) return hg_error(HG_ERR_INVALID, "GEMM batch = %d is negative", g->batch);
  if (n->batch == 0) n->batch = 1;
  if (!g->a || !g->b || !g->d)
    return hg_error(HG_ERR_INVALID, "GEMM operands: A, B and D need device pointers");
  /* 0 = tight leading dimension. */
  const int64_t lda_min = g->a_k_major ? g->k : g->m;
  const int64_t ldb_min = g->b_k_major ? g->k : g->n;
  if (n->lda == 0) n->lda = lda_min;
  if (n->ldb == 0) n->ldb = ldb_min;
  if (n->ldd == 0) n->ldd = g->n;
  if (!g->c) { /* no C: D stands in (it is only read when beta != 0) */
    n->c = g->d;
    n->ldc = n->ldd;
    n->batch_stride_c = g->batch_stride_d;
  } else if (n->ldc == 0) {
    n->ldc = g->n;
  }
  if (n->lda < lda_min)
    return hg_error(
        HG_ERR_INVALID, "lda = %" PRId64 " is below %" PRId64 " (A is %s, %s = %" PRId64 ")",
        n->lda, lda_min, g->a_k_major ? "K-major" : "M-major", g->a_k_major ? "K" : "M", lda_min);
  if (n->ldb < ldb_min)
    return hg_error(
        HG_ERR_INVALID, "ldb = %" PRId64 " is below %" PRId64 " (B is %s, %s = %" PRId64 ")",
        n->ldb, ldb_min, g->b_k_major ? "K-major" : "N-major", g->b_k_major ? "K" : "N", ldb_min);
  if (n->ldc < g->n || n->ldd < g->n)
    return hg_error(HG_ERR_INVALID,
                    "ldc = %" PRId64 " / ldd = %" PRId64 " is below N = %" PRId64
                    " (C and D are row-major M x N)",
                    n->ldc, n->ldd, g->n);
  if (n->batch > 1 && (g->batch_stride_a < 0 || g->batch_stride_b < 0 || n->batch_stride_c < 0 ||
                       g->batch_stride_d < 0))
    return hg_error(HG_ERR_INVALID, "GEMM batch strides must not be negative");
  return hg_ok();
}

/* Per-call scale pointers: they change from call to call and the attribute holds the
 * pointer itself (NULL = 1.0). cuBLASLt's A is hopgen's B, so the scales swap. */
static hg_status_t set_scales(hg_blas_t *b, plan_t *p, const hg_blas_gemm_args_t *g) {
  hg_status_t s = hg_ok();
  const void *sa = (const void *)(uintptr_t)g->scale_b;
  const void *sb = (const void *)(uintptr_t)g->scale_a;
  DESC_SET(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, sa);
  DESC_SET(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, sb);
fail:
  return s;
}

/* Per-call epilogue pointers (the bias, the aux output). */
static hg_status_t set_epilogue_pointers(hg_blas_t *b, plan_t *p, const hg_blas_gemm_args_t *g) {
  hg_status_t s = hg_ok();
  const void *bias = (const void *)(uintptr_t)g->bias;
  void *aux = (void *)(uintptr_t)g->aux;
  DESC_SET(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
  if (g->epilogue == HG_BLAS_EPI_GELU_AUX_BIAS)
    DESC_SET(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, aux);
fail:
  return s;
}

hg_status_t hg_blas_gemm(hg_blas_t *b, const hg_blas_gemm_args_t *args) {
  if (!b || !args) return hg_error(HG_ERR_INVALID, "hg_blas_gemm needs a handle and arguments");
  hg_blas_gemm_args_t g;
  HG_TRY(check_shape(args, &g));
  HG_TRY(check_types(&g));
  HG_TRY(hg_rt_bind(b->rt));

  plan_key_t key;
  memset(&key, 0, sizeof key);
  key.m = g.m;
  key.n = g.n;
  key.k = g.k;
  key.lda = g.lda;
  key.ldb = g.ldb;
  key.ldc = g.ldc;
  key.ldd = g.ldd;
  if (g.batch > 1) {
    key.stride_a = g.batch_stride_a;
    key.stride_b = g.batch_stride_b;
    key.stride_c = g.batch_stride_c;
    key.stride_d = g.batch_stride_d;
  }
  key.batch = g.batch;
  key.a_type = (int32_t)g.a_type;
  key.b_type = (int32_t)g.b_type;
  key.cd_type = (int32_t)g.cd_type;
  key.a_k_major = g.a_k_major;
  key.b_k_major = g.b_k_major;
  key.scaled = is_fp8(g.a_type);
  key.align[0] = alignment(g.a);
  key.align[1] = alignment(g.b);
  key.align[2] = alignment(g.c);
  key.align[3] = alignment(g.d);
  if ((int)g.epilogue < 0 || g.epilogue > HG_BLAS_EPI_GELU_AUX_BIAS)
    return hg_error(HG_ERR_INVALID, "cuBLASLt epilogue %d is not one hopgen knows",
                    (int)g.epilogue);
  if (g.epilogue != HG_BLAS_EPI_NONE && !g.bias)
    return hg_error(HG_ERR_INVALID, "cuBLASLt's fused bias epilogue needs the bias pointer");
  if (g.epilogue == HG_BLAS_EPI_GELU_AUX_BIAS && (!g.aux || g.ld_aux < g.n))
    return hg_error(HG_ERR_INVALID,
                    "GELU_AUX_BIAS needs the aux pointer and a leading dimension >= N (%" PRId64
                    "), not %" PRId64,
                    g.n, g.ld_aux);
  key.epilogue = (int32_t)g.epilogue;
  key.bias_type = (int32_t)(g.bias_type ? g.bias_type : g.cd_type);
  key.ld_aux = g.epilogue == HG_BLAS_EPI_GELU_AUX_BIAS ? g.ld_aux : 0;
  if (g.fast_accum && !key.scaled)
    return hg_error(HG_ERR_INVALID, "fast accumulation is for fp8 operands; this GEMM is %s x %s",
                    hg_dtype_name(g.a_type), hg_dtype_name(g.b_type));
  key.fast_accum = g.fast_accum;
  if (g.scale < 0 || g.scale > 2)
    return hg_error(HG_ERR_INVALID, "fp8 scaling %d is not known (hg_gemm_scale_t)", g.scale);
  if (g.scale && !key.scaled)
    return hg_error(HG_ERR_INVALID, "row- and block-wise scales are for fp8 operands");
  /* cuBLAS "128-element 1D and 128x128 2D Block Scaling": the 1x128 scales (its B's, hopgen's
   * A's) are M-major and packed; the 128x128 ones (its A's, hopgen's B's) K-major with a
   * column stride that is a multiple of 4 (ceil(K / 128) rounded up to 4: hopgen's
   * scale_ldb); M and N multiples of 4; scale pointers 16-byte aligned. */
  const int64_t l4 = ((g.k + 127) / 128 + 3) / 4 * 4;
  if (g.scale == 2 && (g.scale_lda != g.m || g.scale_ldb != l4))
    return hg_error(HG_ERR_UNSUPPORTED,
                    "cuBLASLt takes 1x128 block scales packed (scale_lda = M = %" PRId64
                    ") and 128x128 ones with a row stride of ceil(K / 128) rounded up to 4 "
                    "(scale_ldb = %" PRId64 "), not %" PRId64 " and %" PRId64,
                    g.m, l4, g.scale_lda, g.scale_ldb);
  if (g.scale == 2 && (g.m % 4 || g.n % 4))
    return hg_error(HG_ERR_UNSUPPORTED,
                    "cuBLASLt's block scaling needs M and N multiples of 4 (M = %" PRId64
                    ", N = %" PRId64 ")",
                    g.m, g.n);
  if (g.scale && ((g.scale_a % 16) || (g.scale_b % 16)))
    return hg_error(
        HG_ERR_UNSUPPORTED,
        "cuBLASLt's vector and block scales start 16-byte aligned (scale_a at 0x%" PRIx64
        ", scale_b at 0x%" PRIx64 ")",
        (uint64_t)g.scale_a, (uint64_t)g.scale_b);
  if (g.scale && (!g.scale_a || !g.scale_b))
    return hg_error(HG_ERR_INVALID, "%s-wise fp8 scales need both scale pointers",
                    g.scale == 1 ? "row" : "block");
  key.scale = g.scale;

  plan_t *p = NULL;
  for (int i = 0; i < HG_BLAS_PLANS; i++)
    if (b->plans[i].used && memcmp(&b->plans[i].key, &key, sizeof key) == 0) p = &b->plans[i];
  if (!p) {
    /* Round-robin replacement: benchmarks cycle through a handful of shapes. */
    p = &b->plans[b->next_victim];
    b->next_victim = (b->next_victim + 1) % HG_BLAS_PLANS;
    if (p->used) destroy_plan(b, p);
    HG_TRY(build_plan(b, &key, &g, p));
  }
  if (key.scaled) HG_TRY(set_scales(b, p, &g));
  if (key.epilogue != HG_BLAS_EPI_NONE) HG_TRY(set_epilogue_pointers(b, p, &g));
  const float alpha = g.alpha, beta = g.beta;
  cublasStatus_t st = b->cublasLtMatmul(
      b->handle, p->desc, &alpha, (const void *)(uintptr_t)g.b, p->layout[0],
      (const void *)(uintptr_t)g.a, p->layout[1], &beta, (const void *)(uintptr_t)g.c, p->layout[2],
      (void *)(uintptr_t)g.d, p->layout[3], &p->algo, (void *)(uintptr_t)b->workspace,
      HG_BLAS_WORKSPACE_BYTES, (CUstream)g.stream);
  if (st != CUBLAS_STATUS_SUCCESS)
    return lt_fail(b, st,
                   "cublasLtMatmul (%s x %s -> %s, M = %" PRId64 ", N = %" PRId64 ", K = %" PRId64
                   ", batch %d)",
                   hg_dtype_name(g.a_type), hg_dtype_name(g.b_type), hg_dtype_name(g.cd_type), g.m,
                   g.n, g.k, g.batch);
  return hg_ok();
}
