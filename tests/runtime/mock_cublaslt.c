/* A mock cuBLASLt for test_mock.c, compiled by that test at run time against the toolkit's
 * real <cublasLt.h> (every function is defined with NVIDIA's prototype, every attribute is
 * read by its real enum name) and loaded by hopgen through HOPGEN_LIBCUBLASLT.
 *
 * It computes cublasLtMatmul on the host with cuBLASLt's documented meaning, column-major
 * throughout: D (m x n) = alpha * scaleA * scaleB * op(A) (m x k) * op(B) (k x n) + beta * C,
 * op(X) = X for CUBLAS_OP_N and X^T for CUBLAS_OP_T, element (r, c) of a layout at
 * r + c * ld, batch b at b * stride; the fp8 "TN only" rule; the alignment promised by the
 * preference. So hopgen's row-major-to-column-major mapping (blas.c) is checked for real,
 * without a GPU. Memory is the mock driver's (host memory), range-checked through it. */
#include <cublasLt.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock_api.h"
#include "numeric.h"

static mock_blas_state_t state;

mock_blas_state_t *mock_blas_state(void) {
  return &state;
}

static mock_cuda_range_ok_fn range_ok;

static int in_range(const void *p, size_t bytes) {
  if (!range_ok) {
    /* The mock driver hopgen already loaded (RTLD_NOLOAD: never a second copy). */
    const char *path = getenv("HOPGEN_LIBCUDA");
    void *h = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    if (h) *(void **)&range_ok = dlsym(h, "mock_cuda_range_ok");
    if (!range_ok) return 1;
  }
  return range_ok((uint64_t)(uintptr_t)p, bytes);
}

struct desc {
  cublasComputeType_t compute;
  cudaDataType_t scale;
  int32_t transa, transb;
  const void *scale_a, *scale_b;
  uint32_t epilogue; /* cublasLtEpilogue_t; 0 = unset (DEFAULT) */
  const void *bias;
  void *aux;
  int64_t aux_ld;
  int32_t bias_type, aux_type;
  int8_t fast_accum;
  int32_t scale_mode_a, scale_mode_b; /* cublasLtMatmulMatrixScale_t */
};

struct layout {
  cudaDataType_t type;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch;
  int64_t stride;
};

struct pref {
  uint64_t workspace;
  int workspace_set;
  uint32_t align[4];
};

cublasStatus_t CUBLASWINAPI cublasLtCreate(cublasLtHandle_t *h) {
  *h = (cublasLtHandle_t)malloc(16);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtDestroy(cublasLtHandle_t h) {
  free(h);
  return CUBLAS_STATUS_SUCCESS;
}

const char *CUBLASWINAPI cublasLtGetStatusName(cublasStatus_t s) {
  switch (s) {
  case CUBLAS_STATUS_SUCCESS:
    return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  default:
    return "CUBLAS_STATUS_INTERNAL_ERROR";
  }
}

const char *CUBLASWINAPI cublasLtGetStatusString(cublasStatus_t s) {
  return s == CUBLAS_STATUS_SUCCESS ? "success" : "the mock refused";
}

size_t CUBLASWINAPI cublasLtGetVersion(void) {
  return 130000;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d,
                                                     cublasComputeType_t compute,
                                                     cudaDataType_t scale) {
  struct desc *x = calloc(1, sizeof *x);
  x->compute = compute;
  x->scale = scale;
  *d = (cublasLtMatmulDesc_t)x;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) {
  free(d);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                                           cublasLtMatmulDescAttributes_t attr,
                                                           const void *buf, size_t size) {
  struct desc *x = (struct desc *)d;
  switch (attr) {
  case CUBLASLT_MATMUL_DESC_TRANSA:
    if (size != sizeof(int32_t)) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&x->transa, buf, 4);
    return CUBLAS_STATUS_SUCCESS;
  case CUBLASLT_MATMUL_DESC_TRANSB:
    if (size != sizeof(int32_t)) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&x->transb, buf, 4);
    return CUBLAS_STATUS_SUCCESS;
  case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER:
    if (size != sizeof(void *)) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&x->scale_a, buf, sizeof(void *));
    return CUBLAS_STATUS_SUCCESS;
  case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER:
    if (size != sizeof(void *)) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&x->scale_b, buf, sizeof(void *));
    return CUBLAS_STATUS_SUCCESS;
  case CUBLASLT_MATMUL_DESC_EPILOGUE: {
    uint32_t e;
    if (size != sizeof e) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&e, buf, sizeof e);
    /* the ones hopgen uses: DEFAULT, BIAS, RELU_BIAS, GELU_BIAS, GELU_AUX_BIAS */
    if (e != CUBLASLT_EPILOGUE_DEFAULT && e != CUBLASLT_EPILOGUE_BIAS &&
        e != CUBLASLT_EPILOGUE_RELU_BIAS && e != CUBLASLT_EPILOGUE_GELU_BIAS &&
        e != CUBLASLT_EPILOGUE_GELU_AUX_BIAS)
      return CUBLAS_STATUS_NOT_SUPPORTED;
    x->epilogue = e;
    return CUBLAS_STATUS_SUCCESS;
  }
  case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
    if (size != sizeof(void *)) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&x->bias, buf, sizeof(void *));
    return CUBLAS_STATUS_SUCCESS;
  case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER:
    if (size != sizeof(void *)) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&x->aux, buf, sizeof(void *));
    return CUBLAS_STATUS_SUCCESS;
  case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD:
    if (size != sizeof(int64_t)) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&x->aux_ld, buf, sizeof(int64_t));
    return CUBLAS_STATUS_SUCCESS;
  case CUBLASLT_MATMUL_DESC_A_SCALE_MODE:
  case CUBLASLT_MATMUL_DESC_B_SCALE_MODE: {
    int32_t v;
    if (size != sizeof v) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&v, buf, 4);
    /* the ones hopgen uses: scalar, outer vectors, 1x128 and 128x128 blocks */
    if (v != CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F &&
        v != CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F &&
        v != CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F &&
        v != CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F)
      return CUBLAS_STATUS_NOT_SUPPORTED;
    *(attr == CUBLASLT_MATMUL_DESC_A_SCALE_MODE ? &x->scale_mode_a : &x->scale_mode_b) = v;
    return CUBLAS_STATUS_SUCCESS;
  }
  case CUBLASLT_MATMUL_DESC_FAST_ACCUM:
    /* the host computes exactly either way; the flag is recorded for the test */
    if (size != sizeof(int8_t)) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&x->fast_accum, buf, 1);
    return CUBLAS_STATUS_SUCCESS;
  case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
  case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE:
    if (size != sizeof(int32_t)) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(attr == CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE ? &x->bias_type : &x->aux_type, buf, 4);
    return CUBLAS_STATUS_SUCCESS;
  default:
    return CUBLAS_STATUS_INVALID_VALUE;
  }
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type,
                                                       uint64_t rows, uint64_t cols, int64_t ld) {
  if (ld < 0 || (uint64_t)ld < rows) return CUBLAS_STATUS_INVALID_VALUE; /* documented */
  struct layout *x = calloc(1, sizeof *x);
  x->type = type;
  x->rows = rows;
  x->cols = cols;
  x->ld = ld;
  x->batch = 1;
  *l = (cublasLtMatrixLayout_t)x;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) {
  free(l);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
                                                             cublasLtMatrixLayoutAttribute_t attr,
                                                             const void *buf, size_t size) {
  struct layout *x = (struct layout *)l;
  switch (attr) {
  case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
    if (size != sizeof(int32_t)) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&x->batch, buf, 4);
    return CUBLAS_STATUS_SUCCESS;
  case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
    if (size != sizeof(int64_t)) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&x->stride, buf, 8);
    return CUBLAS_STATUS_SUCCESS;
  default:
    return CUBLAS_STATUS_INVALID_VALUE;
  }
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p) {
  struct pref *x = calloc(1, sizeof *x);
  for (int i = 0; i < 4; i++) x->align[i] = 256; /* documented default */
  *p = (cublasLtMatmulPreference_t)x;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) {
  free(p);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceSetAttribute(
    cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
    size_t size) {
  struct pref *x = (struct pref *)p;
  switch (attr) {
  case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
    if (size != sizeof(uint64_t)) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&x->workspace, buf, 8);
    x->workspace_set = 1;
    return CUBLAS_STATUS_SUCCESS;
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES:
    if (size != sizeof(uint32_t)) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&x->align[attr - CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES], buf, 4);
    return CUBLAS_STATUS_SUCCESS;
  default:
    return CUBLAS_STATUS_INVALID_VALUE;
  }
}

static int is_fp8(cudaDataType t) {
  return t == CUDA_R_8F_E4M3 || t == CUDA_R_8F_E5M2;
}

static size_t esize(cudaDataType t) {
  switch (t) {
  case CUDA_R_32F:
    return 4;
  case CUDA_R_16F:
  case CUDA_R_16BF:
    return 2;
  case CUDA_R_8F_E4M3:
  case CUDA_R_8F_E5M2:
    return 1;
  default:
    return 0;
  }
}

/* The shapes of cublasLtMatmul: op(A) m x k, op(B) k x n, C and D m x n. */
static cublasStatus_t check(const struct desc *d, const struct layout *a, const struct layout *b,
                            const struct layout *c, const struct layout *o, uint64_t *mnk) {
  if (d->compute != CUBLAS_COMPUTE_32F && d->compute != CUBLAS_COMPUTE_32F_FAST_TF32)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  if (d->scale != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
  const uint64_t m = o->rows, n = o->cols;
  const uint64_t am = d->transa == CUBLAS_OP_N ? a->rows : a->cols;
  const uint64_t ak = d->transa == CUBLAS_OP_N ? a->cols : a->rows;
  const uint64_t bk = d->transb == CUBLAS_OP_N ? b->rows : b->cols;
  const uint64_t bn = d->transb == CUBLAS_OP_N ? b->cols : b->rows;
  if (am != m || bn != n || ak != bk || c->rows != m || c->cols != n)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (a->batch != o->batch || b->batch != o->batch || c->batch != o->batch)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (c->type != o->type || !esize(a->type) || !esize(b->type) || !esize(o->type))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  if (is_fp8(a->type) || is_fp8(b->type)) {
    if (!is_fp8(a->type) || !is_fp8(b->type)) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (a->type == CUDA_R_8F_E5M2 && b->type == CUDA_R_8F_E5M2) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (d->transa != CUBLAS_OP_T || d->transb != CUBLAS_OP_N) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (o->type != CUDA_R_16BF && o->type != CUDA_R_16F && o->type != CUDA_R_32F)
      return CUBLAS_STATUS_NOT_SUPPORTED;
  } else {
    if (a->type != b->type) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (o->type != a->type && o->type != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (d->scale_a || d->scale_b) return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  mnk[0] = m;
  mnk[1] = n;
  mnk[2] = ak;
  return CUBLAS_STATUS_SUCCESS;
}

/* Vector and block scale modes as cuBLAS documents them for sm90 ("Outer Vector Scaling",
 * "128-element 1D and 128x128 2D Block Scaling"): OUTER_VEC on both, or 1x128 / 128x128 on
 * either side but not 128x128 on both; block modes need m and n multiples of 4; scale pointers
 * 16-byte aligned. And, as the H100 run showed (AlgoGetHeuristic: INVALID_VALUE while hopgen
 * set the pointers only before cublasLtMatmul), a vector or block mode needs its pointers on
 * the descriptor when the heuristic runs. */
static cublasStatus_t check_scale_modes(const struct desc *d, const uint64_t *mnk) {
  const int ma = d->scale_mode_a, mb = d->scale_mode_b;
  if (!ma && !mb) return CUBLAS_STATUS_SUCCESS;
  const int outer = ma == CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F &&
                    mb == CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
  const int blk_a = ma == CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F ||
                    ma == CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
  const int blk_b = mb == CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F ||
                    mb == CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
  if (!outer && !(blk_a && blk_b)) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (ma == CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F &&
      mb == CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  if (!outer && (mnk[0] % 4 || mnk[1] % 4)) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (!d->scale_a || !d->scale_b) return CUBLAS_STATUS_INVALID_VALUE;
  if ((uintptr_t)d->scale_a % 16 || (uintptr_t)d->scale_b % 16) return CUBLAS_STATUS_INVALID_VALUE;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t h, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t A,
    cublasLtMatrixLayout_t B, cublasLtMatrixLayout_t C, cublasLtMatrixLayout_t D,
    cublasLtMatmulPreference_t pref, int requested, cublasLtMatmulHeuristicResult_t results[],
    int *returned) {
  (void)h;
  state.heuristics++;
  *returned = 0;
  if (requested < 1) return CUBLAS_STATUS_INVALID_VALUE;
  const struct pref *p = (const struct pref *)pref;
  if (!p->workspace_set) state.workspace_missing++;
  uint64_t mnk[3];
  cublasStatus_t s =
      check((const struct desc *)desc, (const struct layout *)A, (const struct layout *)B,
            (const struct layout *)C, (const struct layout *)D, mnk);
  if (s == CUBLAS_STATUS_SUCCESS) s = check_scale_modes((const struct desc *)desc, mnk);
  if (s != CUBLAS_STATUS_SUCCESS) {
    if (s == CUBLAS_STATUS_INVALID_VALUE) state.scale_rejected++;
    return s;
  }
  memset(&results[0], 0, sizeof results[0]);
  results[0].algo.data[0] = 0x4D4F434B;
  for (int i = 0; i < 4; i++) results[0].algo.data[1 + i] = p->align[i];
  results[0].state = CUBLAS_STATUS_SUCCESS;
  results[0].wavesCount = 1.0f;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

static double load(const void *base, cudaDataType t, int64_t i) {
  const uint8_t *p = (const uint8_t *)base;
  switch (t) {
  case CUDA_R_32F: {
    float f;
    memcpy(&f, p + 4 * i, 4);
    return f;
  }
  case CUDA_R_16F: {
    uint16_t h;
    memcpy(&h, p + 2 * i, 2);
    return hgt_f16_to_f32(h);
  }
  case CUDA_R_16BF: {
    uint16_t h;
    memcpy(&h, p + 2 * i, 2);
    return hgt_bf16_to_f32(h);
  }
  case CUDA_R_8F_E4M3:
    return hgt_e4m3_to_f32(p[i]);
  case CUDA_R_8F_E5M2:
    return hgt_e5m2_to_f32(p[i]);
  default:
    return 0;
  }
}

static void store(void *base, cudaDataType t, int64_t i, double v) {
  uint8_t *p = (uint8_t *)base;
  if (t == CUDA_R_32F) {
    float f = (float)v;
    memcpy(p + 4 * i, &f, 4);
  } else if (t == CUDA_R_16F) {
    uint16_t h = hgt_f32_to_f16((float)v);
    memcpy(p + 2 * i, &h, 2);
  } else if (t == CUDA_R_16BF) {
    uint16_t h = hgt_f32_to_bf16((float)v);
    memcpy(p + 2 * i, &h, 2);
  }
}

/* The bytes an operand spans, from its first to its last element over the batch. */
static size_t footprint(const struct layout *l) {
  const int64_t last =
      (int64_t)(l->batch - 1) * l->stride + (int64_t)(l->cols - 1) * l->ld + (int64_t)(l->rows - 1);
  return (size_t)(last + 1) * esize(l->type);
}

static int aligned(const void *p, uint64_t a) {
  return a == 0 || (uintptr_t)p % a == 0;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc,
                                           const void *alpha, const void *A,
                                           cublasLtMatrixLayout_t Adesc, const void *B,
                                           cublasLtMatrixLayout_t Bdesc, const void *beta,
                                           const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                                           cublasLtMatrixLayout_t Ddesc,
                                           const cublasLtMatmulAlgo_t *algo, void *workspace,
                                           size_t workspace_bytes, cudaStream_t stream) {
  (void)h;
  (void)stream;
  const struct desc *d = (const struct desc *)desc;
  const struct layout *a = (const struct layout *)Adesc, *b = (const struct layout *)Bdesc,
                      *c = (const struct layout *)Cdesc, *o = (const struct layout *)Ddesc;
  uint64_t mnk[3];
  cublasStatus_t s = check(d, a, b, c, o, mnk);
  if (s != CUBLAS_STATUS_SUCCESS) return s;
  if (!algo || algo->data[0] != 0x4D4F434B) return CUBLAS_STATUS_INVALID_VALUE;
  if (!aligned(A, algo->data[1]) || !aligned(B, algo->data[2]) || !aligned(C, algo->data[3]) ||
      !aligned(D, algo->data[4])) {
    state.bad_alignment++;
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  const float fbeta = *(const float *)beta;
  if (!in_range(A, footprint(a)) || !in_range(B, footprint(b)) || !in_range(D, footprint(o)) ||
      (fbeta != 0.0f && !in_range(C, footprint(c))) ||
      (workspace_bytes && !in_range(workspace, workspace_bytes))) {
    state.out_of_range++;
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  double sa = 1.0, sb = 1.0;
  /* Scale modes (cuBLASLt's documented meaning, op(A) m x k, op(B) k x n): OUTER_VEC on both,
   * vectors of m and n; BLK128x128 on A with VEC128 on B: A's scale of block (i / 128, kb) at
   * sA[(i / 128) * L4 + kb] (K-major, L4 = ceil(k / 128) rounded up to 4), B's of (kb, j) at
   * sB[kb * n + j], each k-block's product scaled by both. Other mixes are not modelled. */
  const int ma = d->scale_mode_a, mb = d->scale_mode_b;
  const int outer = ma == CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F &&
                    mb == CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
  const int block = ma == CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F &&
                    mb == CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
  if ((ma || mb) && !outer && !block) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (check_scale_modes(d, mnk) != CUBLAS_STATUS_SUCCESS) return CUBLAS_STATUS_INVALID_VALUE;
  const uint64_t l4 = ((mnk[2] + 127) / 128 + 3) / 4 * 4;
  const float *va = NULL, *vb = NULL;
  if (outer || block) {
    const uint64_t kb = (mnk[2] + 127) / 128;
    const size_t na = outer ? mnk[0] : ((mnk[0] + 127) / 128 - 1) * l4 + kb,
                 nb = outer ? mnk[1] : kb * mnk[1];
    if (!d->scale_a || !d->scale_b || !in_range(d->scale_a, 4 * na) ||
        !in_range(d->scale_b, 4 * nb)) {
      state.out_of_range++;
      return CUBLAS_STATUS_INVALID_VALUE;
    }
    va = (const float *)d->scale_a;
    vb = (const float *)d->scale_b;
  } else if (d->scale_a) {
    if (!in_range(d->scale_a, 4)) return CUBLAS_STATUS_INVALID_VALUE;
    sa = *(const float *)d->scale_a;
  }
  if (d->scale_b && !vb) { /* a scalar (the vector modes read theirs above) */
    if (!in_range(d->scale_b, 4)) return CUBLAS_STATUS_INVALID_VALUE;
    sb = *(const float *)d->scale_b;
  }
  state.matmuls++;
  state.last_transa = d->transa;
  state.last_transb = d->transb;
  state.last_compute = d->compute;
  state.last_fast_accum = d->fast_accum;
  state.last_scale_mode_a = ma;
  state.last_scale_mode_b = mb;
  const double fa = *(const float *)alpha * sa * sb;
  const uint64_t m = mnk[0], n = mnk[1], k = mnk[2];
  for (int32_t bt = 0; bt < o->batch; bt++) {
    const uint8_t *ab = (const uint8_t *)A + (size_t)(bt * a->stride) * esize(a->type);
    const uint8_t *bb = (const uint8_t *)B + (size_t)(bt * b->stride) * esize(b->type);
    const uint8_t *cb = (const uint8_t *)C + (size_t)(bt * c->stride) * esize(c->type);
    uint8_t *db = (uint8_t *)D + (size_t)(bt * o->stride) * esize(o->type);
    for (uint64_t i = 0; i < m; i++) {
      for (uint64_t j = 0; j < n; j++) {
        double acc = 0, part = 0;
        const uint64_t kbs = (k + 127) / 128;
        for (uint64_t p = 0; p < k; p++) {
          const int64_t ia =
              d->transa == CUBLAS_OP_N ? (int64_t)(i + p * a->ld) : (int64_t)(p + i * a->ld);
          const int64_t ib =
              d->transb == CUBLAS_OP_N ? (int64_t)(p + j * b->ld) : (int64_t)(j + p * b->ld);
          part += load(ab, a->type, ia) * load(bb, b->type, ib);
          if (block && (p % 128 == 127 || p + 1 == k)) {
            const uint64_t q = p / 128;
            part *= (double)va[(i / 128) * l4 + q] * vb[q * n + j];
          }
          if (!block || p % 128 == 127 || p + 1 == k) {
            acc += part;
            part = 0;
          }
        }
        if (outer) acc *= (double)va[i] * vb[j];
        double v = fa * acc;
        if (fbeta != 0.0f) v += fbeta * load(cb, c->type, (int64_t)(i + j * c->ld));
        /* the fused epilogue: bias along the rows, the pre-activation to aux, then ReLU or
         * the tanh-form GELU */
        if (d->epilogue > CUBLASLT_EPILOGUE_DEFAULT) {
          v += load(d->bias, (cudaDataType)d->bias_type, (int64_t)i);
          if (d->epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS)
            store(d->aux, (cudaDataType)d->aux_type, (int64_t)(i + j * d->aux_ld), v);
          if (d->epilogue == CUBLASLT_EPILOGUE_RELU_BIAS) v = v > 0 ? v : 0;
          if (d->epilogue == CUBLASLT_EPILOGUE_GELU_BIAS ||
              d->epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS)
            v = 0.5 * v * (1 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
        }
        store(db, o->type, (int64_t)(i + j * o->ld), v);
      }
    }
  }
  return CUBLAS_STATUS_SUCCESS;
}
