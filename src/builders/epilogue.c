/* The epilogue (builders.h): a consumer's accumulators through a chain of elementwise steps
 * into D, stored either through shared memory and TMA or directly.
 *
 * Which accumulator value sits where comes from the TiledMma's accumulator layout (the acc
 * map), never from a restated fragment formula, so every MMA kind whose accumulators follow
 * that layout gets the same epilogue. Elementwise steps that read memory (beta * C) and the
 * direct store visit the thread's elements row by row: one 64-bit row pointer and a row
 * predicate per distinct row, each element then an immediate offset from it, which keeps
 * the epilogue within the consumers' registers next to up to 240 accumulators. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hopgen/builders.h"
#include "hopgen/dlayout.h"

/* rows or columns of a consumer's region, the most a bias or scale vector spans */
#define HG_EPI_MAX_LINES 256
/* vector elements loaded together before they are applied */
#define LINE_BATCH 16

static hg_val_t i32(hg_builder_t *b, int32_t v) {
  return hg_b_i32(b, v);
}
static hg_val_t addc(hg_builder_t *b, hg_val_t x, int32_t c) {
  return c ? hg_b_bin(b, HG_ADD, x, i32(b, c)) : x;
}

/* ---------------------------------------------------------------- the accumulator map */

hg_status_t hg_acc_map_make(const hg_tiled_mma_t *tm, int rows, hg_acc_map_t *am) {
  memset(am, 0, sizeof *am);
  if (rows < 1 || rows > tm->tile_m)
    return hg_error(HG_ERR_INVALID, "an accumulator region of %d rows in a tile of %d", rows,
                    tm->tile_m);
  am->rows = rows;
  am->cols = tm->tile_n;
  am->v = malloc(sizeof(int) * (size_t)am->rows * (size_t)am->cols);
  if (!am->v) return hg_error(HG_ERR_NOMEM, "out of memory building the accumulator map");
  for (int i = 0; i < am->rows * am->cols; i++) am->v[i] = -1;
  for (int v = 0; v < tm->acc_values; v++) {
    int m, n;
    hg_status_t s = hg_tiled_mma_acc_coord(tm, 0, v, &m, &n);
    if (hg_is_ok(&s) && (m >= am->rows || n >= am->cols))
      s = hg_error(HG_ERR_INVALID,
                   "accumulator value %d of thread 0 lies at (%d,%d), outside the consumer's "
                   "%dx%d region",
                   v, m, n, am->rows, am->cols);
    if (!hg_is_ok(&s)) {
      hg_acc_map_free(am);
      return s;
    }
    am->v[m * am->cols + n] = v;
  }
  return hg_ok();
}

int hg_acc_map_at(const hg_acc_map_t *am, int dm, int dn) {
  if (dm < 0 || dn < 0 || dm >= am->rows || dn >= am->cols) return -1;
  return am->v[dm * am->cols + dn];
}

void hg_acc_map_free(hg_acc_map_t *am) {
  if (!am) return;
  free(am->v);
  am->v = NULL;
}

hg_status_t hg_acc_thread_origin(hg_builder_t *b, const hg_tiled_mma_t *tm, hg_val_t thread,
                                 hg_val_t *row, hg_val_t *col) {
  hg_layout_t thr_mode;
  HG_TRY(hg_layout_mode(&tm->acc_tv, 0, &thr_mode));
  const hg_dlayout_t thr = hg_dlayout_static(&thr_mode);
  hg_dint_t first;
  hg_dtuple_t tile, crd;
  HG_TRY(hg_dl_eval(b, &thr, hg_dint_val_nonneg(thread), HG_DL_IN_DOMAIN, &first));
  HG_TRY(hg_dtuple_make(2, (hg_dint_t[2]){hg_dint(tm->tile_m), hg_dint(tm->tile_n)}, &tile));
  HG_TRY(hg_dl_idx2crd(b, &tile, NULL, first, HG_DL_IN_DOMAIN, &crd));
  HG_TRY(hg_dint_emit(b, crd.d[1], HG_T_I32, row));
  return hg_dint_emit(b, crd.d[2], HG_T_I32, col);
}

/* ---------------------------------------------------------------- element visits */

/* A row-major matrix of the epilogue (C, D, the residual, aux): (m, n, batches):(ld, 1,
 * batch_stride) in elements of dtype (esize bytes) at ptr (I64). */
typedef struct gmatrix {
  hg_val_t ptr, ld, batch_stride;
  int esize;
  hg_dtype_t dtype;
} gmatrix_t;

/* A sub-tile in flight through a consumer's buffer: which one, and where it goes. */
typedef struct sub_tile {
  const hg_acc_map_t *am; /* the consumer's whole region */
  int im, j;              /* rows im * 64.., columns j * epi_n.. of the region */
  hg_val_t m_base, n0, batch;
  hg_val_t buf_sel, my_bufs, is_first;
  const hg_roles_t *r;
  /* steps tail.. of the chain run inside D's write, 16 columns at a time (-1: none): see
   * store_buffered; row0, col0: the thread's first element of the region */
  int tail;
  hg_val_t row0, col0;
  /* Every sub-tile of the region has a buffer of its own (sub-tile im * subs_n + j): the
   * buffers are freed and the threads met once before the writes, and fenced, met and
   * stored once after them (store_buffered), instead of twice a sub-tile */
  bool batched;
  int subs_n;
} sub_tile_t;

/* Where a staged sub-tile goes: a TMA store (plan, tmap), or rows copied out by the
 * consumer's threads into g. */
typedef struct sub_target {
  hg_dtype_t dtype;
  int w, c0;       /* columns c0 .. c0 + w of the sub-tile, rows of w elements in the buffer */
  hg_swizzle_t sw; /* the buffer's swizzle for those rows */
  bool tail;       /* D: the chain's tail (sub_tile_t.tail) is applied as the sub-tile is written */
  const hg_tma_plan_t *plan; /* NULL: copied out */
  hg_val_t tmap;
  gmatrix_t g;
} sub_target_t;

typedef struct epi_ctx {
  hg_builder_t *b;
  const hg_epilogue_t *e;
  const hg_val_t *acc;
  const hg_acc_map_t *am;
  const hg_epi_step_t *step; /* the step being applied (element functions) */
  const gmatrix_t *g;        /* the matrix being visited (element functions) */
  hg_val_t consumer;         /* the calling thread's consumer index */
  const sub_tile_t *sub;     /* the sub-tile in flight through the buffers (per-sub chains) */
} epi_ctx_t;

typedef void (*elem_fn)(epi_ctx_t *x, int v, hg_val_t addr);

static hg_status_t stage_sub(epi_ctx_t *x, const sub_tile_t *s, const sub_target_t *t);
static hg_status_t apply_steps(epi_ctx_t *x, hg_val_t row0, hg_val_t col0, hg_val_t batch, int from,
                               int to);

static gmatrix_t gmatrix(hg_val_t ptr, hg_val_t ld, hg_val_t batch_stride, hg_dtype_t t) {
  return (gmatrix_t){
      .ptr = ptr, .ld = ld, .batch_stride = batch_stride, .esize = hg_dtype_bytes(t), .dtype = t};
}

/* The matrix's batch `batch`: the slice (_, _, batch), (m, n):(ld, 1), or (m, n):(1, ld) when
 * the epilogue stores transposed. */
static hg_status_t batch_slice(hg_builder_t *b, const hg_epilogue_t *e, const gmatrix_t *g,
                               hg_val_t batch, hg_dtensor_t *out) {
  hg_dtensor_t t;
  /* batches HG_NONE: one batch (a kernel without a batch mode) */
  const hg_dint_t nb = hg_val_is_none(e->batches) ? hg_dint(1) : hg_dint_val(e->batches);
  HG_TRY((e->trans ? hg_dt_matrix_cm : hg_dt_matrix)(
      hg_dint_val(g->ptr), g->esize, hg_dint_val(e->m), hg_dint_val(e->n), nb, hg_dint_val(g->ld),
      hg_dint_val(g->batch_stride), &t));
  return hg_dt_batch(b, &t, hg_dint_val(batch), out);
}

/* The address of element (row, col) of t (I64), and t moved there (*at, when not NULL). */
static hg_status_t elem_addr(hg_builder_t *b, const hg_dtensor_t *t, hg_dint_t row, hg_dint_t col,
                             hg_val_t *addr, hg_dtensor_t *at) {
  hg_dtuple_t crd;
  hg_dint_t a;
  HG_TRY(hg_dtuple_make(2, (hg_dint_t[2]){row, col}, &crd));
  HG_TRY(hg_dt_addr(b, t, &crd, 0, &a));
  HG_TRY(hg_dint_emit(b, a, HG_T_I64, addr));
  if (at) {
    *at = *t;
    at->base = hg_dint_val(*addr);
  }
  return hg_ok();
}

/* For each element of the thread (row0 + dm, col0 + dn) inside M x N of batch `batch`:
 * fn(value, its address in g). The thread's first element and each row's first are 64-bit
 * values; each element an immediate offset from its row's. */
static hg_status_t for_each_elem(epi_ctx_t *x, const gmatrix_t *g, hg_val_t row0, hg_val_t col0,
                                 hg_val_t batch, elem_fn fn) {
  hg_builder_t *b = x->b;
  const hg_acc_map_t *am = x->am;
  hg_dtensor_t mat, thr, row;
  hg_val_t v;
  x->g = g;
  HG_TRY(batch_slice(b, x->e, g, batch, &mat));
  HG_TRY(elem_addr(b, &mat, hg_dint_val(row0), hg_dint_val(col0), &v, &thr));
  for (int dm = 0; dm < am->rows; dm++) {
    bool any = false;
    for (int dn = 0; dn < am->cols && !any; dn++) any = hg_acc_map_at(am, dm, dn) >= 0;
    if (!any) continue;
    hg_b_if(b, hg_b_cmp(b, HG_LT_S, addc(b, row0, dm), x->e->m));
    HG_TRY(elem_addr(b, &thr, hg_dint(dm), hg_dint(0), &v, &row));
    for (int dn = 0; dn < am->cols; dn++) {
      const int vi = hg_acc_map_at(am, dm, dn);
      if (vi < 0) continue;
      hg_b_if(b, hg_b_cmp(b, HG_LT_S, addc(b, col0, dn), x->e->n));
      HG_TRY(elem_addr(b, &row, hg_dint(0), hg_dint(dn), &v, NULL));
      fn(x, vi, v);
      hg_b_endif(b);
    }
    hg_b_endif(b);
  }
  return hg_ok();
}

static hg_val_t load_elem(epi_ctx_t *x, hg_val_t addr) {
  hg_val_t v;
  if (x->g->dtype == HG_F32) {
    hg_b_load(x->b, HG_GLOBAL, HG_T_F32, 0, 1, addr, &v);
    return v;
  }
  hg_b_load(x->b, HG_GLOBAL, HG_T_I32, 8 * x->g->esize, 1, addr, &v);
  return hg_b_unpack_f32(x->b, x->g->dtype, v);
}

static void add_beta_c(epi_ctx_t *x, int v, hg_val_t addr) {
  hg_b_assign(x->b, x->acc[v], hg_b_ffma(x->b, x->step->value, load_elem(x, addr), x->acc[v]));
}

/* The running amax of the thread: max(amax, |v| as u32 bits). Rounding to D's type (round to
 * nearest, saturating or not) is monotonic and symmetric, so the largest |value| rounded at
 * the end (hg_epilogue_drain) is the largest |stored value|: one AND and one MAX a value. */
static void amax_track(hg_builder_t *b, const hg_epilogue_t *e, hg_val_t v) {
  hg_val_t bits = hg_b_bin(b, HG_AND, hg_b_bitcast(b, HG_T_I32, v), i32(b, 0x7FFFFFFF));
  hg_b_assign(b, e->amax_var, hg_b_bin(b, HG_MAX_U, e->amax_var, bits));
}

/* One element into the visited matrix, converted to its type (fp8: saturating). */
static void store_elem(epi_ctx_t *x, int v, hg_val_t addr) {
  hg_builder_t *b = x->b;
  if (x->g->dtype == HG_F32) {
    hg_b_store(b, HG_GLOBAL, 0, 1, addr, &x->acc[v]);
  } else {
    hg_val_t pk = hg_b_pack_f32x2(b, x->g->dtype, x->acc[v], x->acc[v]);
    hg_b_store(b, HG_GLOBAL, 8 * x->g->esize, 1, addr, &pk);
  }
}

/* An element of D: stored, and counted in the amax. */
static void store_d_elem(epi_ctx_t *x, int v, hg_val_t addr) {
  store_elem(x, v, addr);
  if (!hg_val_is_none(x->e->amax_ptr)) amax_track(x->b, x->e, x->acc[v]);
}

/* ---------------------------------------------------------------- the steps */

/* A scale step's factor: its value, or the f32 its pointer names (1 for a null pointer). */
static hg_val_t scale_factor(hg_builder_t *b, const hg_epi_step_t *st) {
  if (st->kind == HG_EPI_SCALE) return st->value;
  hg_val_t f = hg_b_var(b, HG_T_F32, hg_b_f32(b, 1.0f));
  hg_b_if(b, hg_b_cmp(b, HG_NE, st->ptr, hg_b_i64(b, 0)));
  hg_val_t v;
  hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 1, st->ptr, &v);
  hg_b_assign(b, f, v);
  hg_b_endif(b);
  return f;
}

static hg_val_t f32c(hg_builder_t *b, float v) {
  return hg_b_f32(b, v);
}

/* 1 / (1 + e^-x): e^-x = 2^(-x log2 e), then an IEEE reciprocal (1 + inf -> 0 for x very
 * negative, 1 + 0 -> 1 for x very positive: no NaN at either end). */
static hg_val_t sigmoid(hg_builder_t *b, hg_val_t x) {
  hg_val_t e = hg_b_funary(b, HG_FEX2, hg_b_bin(b, HG_FMUL, x, f32c(b, -1.44269504088896341f)));
  return hg_b_funary(b, HG_FRCP, hg_b_bin(b, HG_FADD, f32c(b, 1.0f), e));
}

/* GELU(x) = x Phi(x), Phi the normal CDF, through erfc by Abramowitz-Stegun 7.1.26
 * (absolute error <= 1.5e-7): for a = |x| / sqrt(2), t = 1 / (1 + p a), q = erfc(a) / 2 =
 * t (a1 + t (a2 + ... + t a5)) / 2 e^(-a^2), and Phi(x) = q for x < 0, 1 - q otherwise. The
 * halves and 1/sqrt(2) are folded into the constants: 15 instructions a value (2 of them MUFU),
 * against 18 through erf (1 + erf(x / sqrt(2))) / 2. */
static const float gelu_as_c[5] = {0.254829592f, -0.284496736f, 1.421413741f, -1.453152027f,
                                   1.061405429f};
static hg_val_t gelu_as(hg_builder_t *b, hg_val_t x) {
  const float *c = gelu_as_c;
  hg_val_t t = hg_b_funary(b, HG_FRCP,
                           hg_b_ffma(b, hg_b_funary(b, HG_FABS, x),
                                     f32c(b, 0.3275911f * 0.70710678118654752f), f32c(b, 1.0f)));
  hg_val_t poly = f32c(b, 0.5f * c[4]);
  for (int i = 3; i >= 0; i--) poly = hg_b_ffma(b, poly, t, f32c(b, 0.5f * c[i]));
  hg_val_t e = hg_b_funary(
      b, HG_FEX2,
      hg_b_bin(b, HG_FMUL, hg_b_bin(b, HG_FMUL, x, x), f32c(b, -0.5f * 1.44269504088896341f)));
  hg_val_t q = hg_b_bin(b, HG_FMUL, hg_b_bin(b, HG_FMUL, poly, t), e);
  hg_val_t phi = hg_b_select(b, hg_b_cmp(b, HG_FLT, x, f32c(b, 0.0f)), q,
                             hg_b_bin(b, HG_FSUB, f32c(b, 1.0f), q));
  return hg_b_bin(b, HG_FMUL, x, phi);
}

/* Phi(x) = 1 / (1 + 2^p(x)), p(x) = -log2(e) logit(Phi(x)) ~ x (c0 + c1 x^2 + ...): logit(Phi)
 * is odd and smooth, and an error d in it moves Phi by only Phi (1 - Phi) d, so a short odd
 * polynomial fitted with that weight (iterated weighted least squares towards minimax on
 * [0, 6]) gives Phi to a few 1e-7 everywhere. The polynomial is monotone with the right
 * sign at both ends, so large |x| saturates by itself (2^p -> 0 or inf, Phi -> 1 or 0); no
 * branch, no clamp: x^2, the Horner chain, x p, ex2, 1 + e, rcp, x Phi. poly7: 12
 * instructions a value (max |gelu - x Phi(x)| / |x| = 2.0e-7 in f32); poly5: 10 (1.6e-6). */
static const float gelu_poly7_c[7] = {-2.302209377e+00f, -1.048351228e-01f, 9.404882439e-05f,
                                      1.595801295e-04f,  -1.143987265e-05f, 3.816346918e-07f,
                                      -5.067340325e-09f};
static const float gelu_poly5_c[5] = {-2.302164793e+00f, -1.050074473e-01f, 2.545432071e-04f,
                                      1.056063411e-04f, -4.093077678e-06f};
static hg_val_t gelu_poly(hg_builder_t *b, const float *c, int n, hg_val_t x) {
  hg_val_t x2 = hg_b_bin(b, HG_FMUL, x, x), p = f32c(b, c[n - 1]);
  for (int i = n - 2; i >= 0; i--) p = hg_b_ffma(b, p, x2, f32c(b, c[i]));
  hg_val_t e = hg_b_funary(b, HG_FEX2, hg_b_bin(b, HG_FMUL, p, x));
  hg_val_t phi = hg_b_funary(b, HG_FRCP, hg_b_bin(b, HG_FADD, f32c(b, 1.0f), e));
  return hg_b_bin(b, HG_FMUL, x, phi);
}

static const char *const gelu_alg_names[HG_GELU_ALG_COUNT] = {"poly7", "as", "poly5", "poly5t"};

/* poly5t: Phi(x) = 1 / (1 + 2^(x p)) = 1/2 + tanh(-x p ln2 / 2) / 2, so gelu = h + h tanh(x q)
 * with h = x / 2 and q = -(ln2 / 2) p(x^2), p poly5's: one MUFU operation (tanh.approx)
 * where poly5 and poly7 take two (ex2, rcp), and 8 FMA-pipe instructions. The epilogue's
 * erf GELU is bound by the MUFU pipe (16 a clock per SM against 128 FMAs): bias + GELU at
 * 4096^3 bf16 on the H100 ran 0.1822-0.1840 ms against poly7's 0.1852-0.1858 (plain GEMM
 * 0.1753), e4m3 D + amax 0.1335 against 0.1407 (bench/RESULTS.md). tanh.approx.f32's
 * error (PTX ISA: about 2^-11) bounds the result's. */
static hg_val_t gelu_tanh5(hg_builder_t *b, hg_val_t x) {
  const float k = -0.34657359027997264f; /* -ln2 / 2 */
  hg_val_t x2 = hg_b_bin(b, HG_FMUL, x, x), q = f32c(b, k * gelu_poly5_c[4]);
  for (int i = 3; i >= 0; i--) q = hg_b_ffma(b, q, x2, f32c(b, k * gelu_poly5_c[i]));
  hg_val_t t = hg_b_funary(b, HG_FTANH, hg_b_bin(b, HG_FMUL, x, q));
  hg_val_t h = hg_b_bin(b, HG_FMUL, x, f32c(b, 0.5f));
  return hg_b_ffma(b, h, t, h);
}

const char *hg_gelu_alg_name(hg_gelu_alg_t a) {
  return (int)a >= 0 && a < HG_GELU_ALG_COUNT ? gelu_alg_names[a] : "?";
}

float hg_gelu_model(hg_gelu_alg_t a, float x) {
  if (a == HG_GELU_AS) {
    const float *c = gelu_as_c;
    float t = 1.0f / fmaf(fabsf(x), 0.3275911f * 0.70710678118654752f, 1.0f);
    float poly = 0.5f * c[4];
    for (int i = 3; i >= 0; i--) poly = fmaf(poly, t, 0.5f * c[i]);
    float q = poly * t * exp2f(x * x * (-0.5f * 1.44269504088896341f));
    return x * (x < 0.0f ? q : 1.0f - q);
  }
  if (a == HG_GELU_TANH5) { /* tanh exact here; the device's tanh.approx adds its error */
    const float k = -0.34657359027997264f;
    float q = k * gelu_poly5_c[4];
    for (int i = 3; i >= 0; i--) q = fmaf(q, x * x, k * gelu_poly5_c[i]);
    const float h = 0.5f * x;
    return fmaf(h, tanhf(x * q), h);
  }
  const float *c = a == HG_GELU_POLY5 ? gelu_poly5_c : gelu_poly7_c;
  const int n = a == HG_GELU_POLY5 ? 5 : 7;
  float x2 = x * x, p = c[n - 1];
  for (int i = n - 2; i >= 0; i--) p = fmaf(p, x2, c[i]);
  return x * (1.0f / (1.0f + exp2f(p * x)));
}

static hg_val_t gelu_erf(hg_builder_t *b, hg_gelu_alg_t alg, hg_val_t x) {
  switch (alg) {
  case HG_GELU_AS:
    return gelu_as(b, x);
  case HG_GELU_POLY5:
    return gelu_poly(b, gelu_poly5_c, 5, x);
  case HG_GELU_TANH5:
    return gelu_tanh5(b, x);
  default:
    return gelu_poly(b, gelu_poly7_c, 7, x);
  }
}

static hg_val_t activation(hg_builder_t *b, const hg_epi_step_t *st, hg_val_t x) {
  return hg_act_emit(b, st->act, st->gelu, st->lo, st->hi, x);
}

hg_val_t hg_act_emit(hg_builder_t *b, hg_act_t act, hg_gelu_alg_t gelu, float lo, float hi,
                     hg_val_t x) {
  switch (act) {
  case HG_ACT_RELU:
    return hg_b_bin(b, HG_FMAX, x, f32c(b, 0.0f));
  case HG_ACT_GELU:
    return gelu_erf(b, gelu, x);
  case HG_ACT_GELU_TANH: {
    hg_val_t x3 = hg_b_bin(b, HG_FMUL, hg_b_bin(b, HG_FMUL, x, x), x);
    hg_val_t in = hg_b_bin(b, HG_FMUL, hg_b_ffma(b, x3, f32c(b, 0.044715f), x),
                           f32c(b, 0.79788456080286536f));
    hg_val_t h = hg_b_bin(b, HG_FMUL, x, f32c(b, 0.5f));
    return hg_b_ffma(b, h, hg_b_funary(b, HG_FTANH, in), h);
  }
  case HG_ACT_SILU:
    return hg_b_bin(b, HG_FMUL, x, sigmoid(b, x));
  case HG_ACT_SIGMOID:
    return sigmoid(b, x);
  case HG_ACT_CLAMP:
    return hg_b_bin(b, HG_FMIN, hg_b_bin(b, HG_FMAX, x, f32c(b, lo)), f32c(b, hi));
  case HG_ACT_NONE:
  case HG_ACT_COUNT:
    break;
  }
  return x;
}

/* acc += vec[col] (or vec[row]): each of the thread's columns (rows) loads its value once,
 * inside D's extent (0 outside, where nothing is stored), and adds it to every accumulator
 * of that column (row). */
/* Which vector step st is (0, 1, ... among the chain's HG_EPI_BIAS steps). */
static int vec_index(const hg_epilogue_t *e, const hg_epi_step_t *st) {
  int k = 0;
  for (const hg_epi_step_t *s = e->steps; s < st; s++) k += s->kind == HG_EPI_BIAS;
  return k;
}

/* The shared-memory address of the slot for vector step st of the calling thread's tile. */
static hg_val_t vec_slot_at(hg_builder_t *b, const hg_epilogue_t *e, const hg_epi_step_t *st,
                            hg_val_t consumer) {
  const int32_t bytes = 4 * e->vec_lines;
  hg_val_t index = i32(b, vec_index(e, st));
  if (e->vec_per_consumer) index = hg_b_mad(b, consumer, i32(b, e->vectors), index);
  return hg_b_mad(b, index, i32(b, bytes), hg_b_smem_addr(b, e->vec_offset));
}

static hg_val_t vec_slot(epi_ctx_t *x, const hg_epi_step_t *st) {
  return vec_slot_at(x->b, x->e, st, x->consumer);
}

/* The thread's index among those holding its tile. */
static hg_val_t tile_thread(hg_builder_t *b, const hg_epilogue_t *e, const hg_roles_t *r) {
  return e->vec_per_consumer || e->vec_threads == 128
             ? r->wg_tid
             : hg_b_mad(b, r->consumer, i32(b, 128), r->wg_tid);
}

/* The barrier of the threads holding one tile. */
static void tile_sync(hg_builder_t *b, const hg_epilogue_t *e, const hg_roles_t *r) {
  if (e->vec_per_consumer)
    hg_roles_consumer_sync(b, r);
  else
    hg_b_bar_sync(b, HG_BAR_CONSUMERS, e->vec_threads);
}

hg_status_t hg_epilogue_prefetch(hg_builder_t *b, const hg_epilogue_t *e, hg_val_t m0, hg_val_t n0,
                                 const hg_roles_t *r, hg_epi_prefetch_t *out) {
  memset(out, 0, sizeof *out);
  out->m0 = m0;
  out->n0 = n0;
  if (e->vec_lines < 1 || e->vec_lines > HG_EPI_MAX_LINES || e->vec_threads < 128 ||
      e->vec_lines > 2 * e->vec_threads)
    return hg_error(HG_ERR_INVALID,
                    "vector prefetch over %d lines by %d threads: 1..%d lines, at most two a "
                    "thread",
                    e->vec_lines, e->vec_threads, HG_EPI_MAX_LINES);
  hg_val_t t = tile_thread(b, e, r);
  for (int i = 0; i < e->nsteps; i++) {
    const hg_epi_step_t *st = &e->steps[i];
    if (st->kind != HG_EPI_BIAS) continue;
    const int es = hg_dtype_bytes(st->dtype);
    hg_val_t origin = st->along_n ? n0 : m0, extent = st->along_n ? e->n : e->m;
    for (int j = 0; j < 2 && j * e->vec_threads < e->vec_lines; j++) {
      hg_val_t line = addc(b, t, e->vec_threads * j), at = hg_b_bin(b, HG_ADD, origin, line);
      hg_val_t v = hg_b_var(b, HG_T_F32, f32c(b, 0.0f));
      hg_b_if(b, hg_b_bin(b, HG_AND, hg_b_cmp(b, HG_LT_S, line, i32(b, e->vec_lines)),
                          hg_b_cmp(b, HG_LT_S, at, extent)));
      {
        hg_val_t addr = hg_b_mad(b, hg_b_sext(b, at), hg_b_i64(b, es), st->ptr), raw;
        if (st->dtype == HG_F32) {
          hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 1, addr, &raw);
        } else {
          hg_b_load(b, HG_GLOBAL, HG_T_I32, 16, 1, addr, &raw);
          raw = hg_b_unpack_f32(b, st->dtype, raw);
        }
        hg_b_assign(b, v, raw);
      }
      hg_b_endif(b);
      out->v[i][j] = v;
    }
  }
  return hg_builder_status(b);
}

/* The prefetched values into the tile's shared-memory slots, between two barriers of the
 * tile's threads: the first keeps them from overwriting what a slower thread still reads of
 * the previous tile, the second makes them visible to every thread of the tile. */
static void store_prefetched(hg_builder_t *b, const hg_epilogue_t *e, const hg_roles_t *r) {
  tile_sync(b, e, r);
  hg_val_t t = tile_thread(b, e, r);
  for (int i = 0; i < e->nsteps; i++) {
    const hg_epi_step_t *st = &e->steps[i];
    if (st->kind != HG_EPI_BIAS) continue;
    hg_val_t slot = vec_slot_at(b, e, st, r->consumer);
    for (int j = 0; j < 2 && j * e->vec_threads < e->vec_lines; j++) {
      hg_val_t line = addc(b, t, e->vec_threads * j);
      hg_b_if(b, hg_b_cmp(b, HG_LT_S, line, i32(b, e->vec_lines)));
      hg_b_store(b, HG_SHARED, 0, 1, hg_b_mad(b, line, i32(b, 4), slot), &e->prefetch->v[i][j]);
      hg_b_endif(b);
    }
  }
  tile_sync(b, e, r);
}

static hg_status_t add_bias(epi_ctx_t *x, hg_val_t row0, hg_val_t col0) {
  hg_builder_t *b = x->b;
  const hg_epi_step_t *st = x->step;
  const hg_acc_map_t *am = x->am;
  const int e = hg_dtype_bytes(st->dtype);
  const int lines = st->along_n ? am->cols : am->rows, across = st->along_n ? am->rows : am->cols;
  hg_val_t first = st->along_n ? col0 : row0, extent = st->along_n ? x->e->n : x->e->m;
  if (lines > HG_EPI_MAX_LINES)
    return hg_error(HG_ERR_INVALID, "a vector step over %d lines of one consumer; at most %d",
                    lines, HG_EPI_MAX_LINES);
  const hg_epi_prefetch_t *pf = x->e->prefetch;
  hg_val_t base = HG_NONE, sbase = HG_NONE;
  if (pf) {
    /* prefetched into shared memory: the thread's lines relative to the region or tile */
    hg_val_t origin = st->along_n ? pf->n0 : pf->m0;
    sbase = hg_b_mad(b, hg_b_bin(b, HG_SUB, first, origin), i32(b, 4), vec_slot(x, st));
  } else {
    base = hg_b_mad(b, hg_b_sext(b, first), hg_b_i64(b, e), st->ptr);
  }
  /* The loads of a batch of lines first (each behind its bounds branch; 0 past the extent),
   * then their arithmetic: the batch's loads are in flight together (loading and adding line
   * by line exposed each load's latency: a bias cost 5% of a 4096^3 GEMM). A batch, not every
   * line at once: the branches keep ptxas from hoisting the next batch's loads, and all lines'
   * values live at once spilled two vectors over a 128-column region. */
  hg_val_t v[HG_EPI_MAX_LINES];
  for (int l0 = 0; l0 < lines; l0 += LINE_BATCH) {
    const int l1 = l0 + LINE_BATCH < lines ? l0 + LINE_BATCH : lines;
    for (int l = l0; l < l1; l++) {
      v[l] = HG_NONE;
      bool any = false;
      for (int a = 0; a < across && !any; a++)
        any = (st->along_n ? hg_acc_map_at(am, a, l) : hg_acc_map_at(am, l, a)) >= 0;
      if (!any) continue;
      if (pf) {
        hg_b_load(b, HG_SHARED, HG_T_F32, 0, 1, addc(b, sbase, 4 * l), &v[l]);
        continue;
      }
      v[l] = hg_b_var(b, HG_T_F32, f32c(b, 0.0f));
      hg_b_if(b, hg_b_cmp(b, HG_LT_S, addc(b, first, l), extent));
      {
        hg_val_t addr = hg_b_bin(b, HG_ADD, base, hg_b_i64(b, (int64_t)l * e)), raw;
        if (st->dtype == HG_F32) {
          hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 1, addr, &raw);
        } else {
          hg_b_load(b, HG_GLOBAL, HG_T_I32, 16, 1, addr, &raw);
          raw = hg_b_unpack_f32(b, st->dtype, raw);
        }
        hg_b_assign(b, v[l], raw);
      }
      hg_b_endif(b);
    }
    for (int l = l0; l < l1; l++) {
      if (hg_val_is_none(v[l])) continue;
      for (int a = 0; a < across; a++) {
        const int vi = st->along_n ? hg_acc_map_at(am, a, l) : hg_acc_map_at(am, l, a);
        if (vi >= 0)
          hg_b_assign(b, x->acc[vi],
                      hg_b_bin(b, st->multiply ? HG_FMUL : HG_FADD, x->acc[vi], v[l]));
      }
    }
  }
  return hg_ok();
}

/* The chain on the accumulators of x->am (the whole region, or one sub-tile of it whose first
 * element is (row0, col0)). */
static hg_status_t apply_steps(epi_ctx_t *x, hg_val_t row0, hg_val_t col0, hg_val_t batch, int from,
                               int to) {
  hg_builder_t *b = x->b;
  const hg_acc_map_t *am = x->am;
  const int cells = am->rows * am->cols;
  for (int i = from; i < to; i++) {
    const hg_epi_step_t *st = &x->e->steps[i];
    x->step = st;
    switch (st->kind) {
    case HG_EPI_SCALE:
    case HG_EPI_SCALE_PTR: {
      /* a run of scale steps: one factor, one multiply per accumulator */
      hg_val_t f = scale_factor(b, st);
      while (i + 1 < to && (x->e->steps[i + 1].kind == HG_EPI_SCALE ||
                            x->e->steps[i + 1].kind == HG_EPI_SCALE_PTR))
        f = hg_b_bin(b, HG_FMUL, f, scale_factor(b, &x->e->steps[++i]));
      for (int i = 0; i < cells; i++)
        if (am->v[i] >= 0)
          hg_b_assign(b, x->acc[am->v[i]], hg_b_bin(b, HG_FMUL, x->acc[am->v[i]], f));
      break;
    }
    case HG_EPI_BETA_C: {
      /* C is read only when beta != 0: a uniform run-time branch. */
      const gmatrix_t c =
          gmatrix(st->ptr, st->ld, st->batch_stride, st->dtype == HG_U8 ? x->e->d_type : st->dtype);
      hg_b_if(b, hg_b_cmp(b, HG_FEQ, st->value, hg_b_f32(b, 0.0f)));
      hg_b_else(b);
      HG_TRY(for_each_elem(x, &c, row0, col0, batch, add_beta_c));
      hg_b_endif(b);
      break;
    }
    case HG_EPI_ACT:
      for (int i = 0; i < cells; i++)
        if (am->v[i] >= 0) hg_b_assign(b, x->acc[am->v[i]], activation(b, st, x->acc[am->v[i]]));
      break;
    case HG_EPI_BIAS:
      HG_TRY(add_bias(x, row0, col0));
      break;
    case HG_EPI_AUX: {
      const gmatrix_t a = gmatrix(st->ptr, st->ld, st->batch_stride, st->dtype);
      if (st->buffered && x->sub) {
        /* through the sub-tile buffers D uses next, in pieces of sub_n columns that fit them
         * (an aux of a larger element size than D's takes several) */
        for (int c = 0; c < x->e->epi_n; c += st->sub_n) {
          const sub_target_t t = {.dtype = st->dtype,
                                  .w = st->sub_n,
                                  .c0 = c,
                                  .sw = st->sw,
                                  .plan = st->plan,
                                  .tmap = st->tmap,
                                  .g = a};
          HG_TRY(stage_sub(x, x->sub, &t));
        }
      } else {
        HG_TRY(for_each_elem(x, &a, row0, col0, batch, store_elem));
      }
      break;
    }
    }
  }
  return hg_ok();
}

static bool is_cd_type(hg_dtype_t t) {
  return t == HG_F32 || t == HG_BF16 || t == HG_F16;
}

static hg_status_t check_epilogue(const hg_epilogue_t *e) {
  const bool fp8 = e->d_type == HG_E4M3 || e->d_type == HG_E5M2;
  if (!is_cd_type(e->d_type) && !fp8)
    return hg_error(HG_ERR_UNSUPPORTED, "the epilogue stores bf16, f16, f32, e4m3 or e5m2, not %s",
                    hg_dtype_name(e->d_type));
  if (!hg_val_is_none(e->amax_ptr) && hg_val_is_none(e->amax_var))
    return hg_error(HG_ERR_INVALID,
                    "an epilogue with an amax needs hg_epilogue_begin before its first tile");
  if (e->trans && (e->tma || e->staged))
    return hg_error(HG_ERR_UNSUPPORTED,
                    "an epilogue storing transposed goes element by element: not through %s",
                    e->tma ? "TMA" : "staged buffers");
  /* stmatrix writes the buffers under e->sw and the TMA store reads them under the plan's:
   * a mismatch scrambles every sub-tile (the builder example did, leaving sw zero) */
  if (e->tma && e->plan_d &&
      (e->sw.b != e->plan_d->smem.sw.b || e->sw.m != e->plan_d->smem.sw.m ||
       e->sw.s != e->plan_d->smem.sw.s))
    return hg_error(HG_ERR_INVALID,
                    "a TMA epilogue writes its buffers under Sw<%d,%d,%d> and its plan stores them "
                    "from Sw<%d,%d,%d>: take the plan's (hg_epilogue_reserve_tma sets it)",
                    e->sw.b, e->sw.m, e->sw.s, e->plan_d->smem.sw.b, e->plan_d->smem.sw.m,
                    e->plan_d->smem.sw.s);
  if (e->nsteps < 0 || e->nsteps > HG_EPI_MAX_STEPS)
    return hg_error(HG_ERR_INVALID, "an epilogue of %d steps (at most %d)", e->nsteps,
                    HG_EPI_MAX_STEPS);
  for (int i = 0; i < e->nsteps; i++) {
    const hg_epi_step_t *st = &e->steps[i];
    if (st->kind != HG_EPI_SCALE && st->kind != HG_EPI_SCALE_PTR && st->kind != HG_EPI_BETA_C &&
        st->kind != HG_EPI_ACT && st->kind != HG_EPI_BIAS && st->kind != HG_EPI_AUX)
      return hg_error(HG_ERR_INVALID, "epilogue step %d has unknown kind %d", i, (int)st->kind);
    if (st->kind == HG_EPI_ACT && ((int)st->act <= HG_ACT_NONE || st->act >= HG_ACT_COUNT))
      return hg_error(HG_ERR_INVALID, "epilogue step %d: activation %d is not known", i,
                      (int)st->act);
    if (st->kind == HG_EPI_ACT && ((int)st->gelu < 0 || st->gelu >= HG_GELU_ALG_COUNT))
      return hg_error(HG_ERR_INVALID,
                      "epilogue step %d: erf GELU formula %d is not known (poly7 0, as 1, poly5 2)",
                      i, (int)st->gelu);
    if (st->kind == HG_EPI_BIAS && st->dtype != HG_BF16 && st->dtype != HG_F16 &&
        st->dtype != HG_F32)
      return hg_error(HG_ERR_UNSUPPORTED, "epilogue step %d: a bias of %s (bf16, f16 or f32)", i,
                      hg_dtype_name(st->dtype));
    if ((st->kind == HG_EPI_AUX || (st->kind == HG_EPI_BETA_C && st->dtype != HG_U8)) &&
        !is_cd_type(st->dtype))
      return hg_error(HG_ERR_UNSUPPORTED, "epilogue step %d: %s matrix of %s (bf16, f16 or f32)", i,
                      st->kind == HG_EPI_AUX ? "an aux" : "a C", hg_dtype_name(st->dtype));
    if (st->kind == HG_EPI_ACT && st->act == HG_ACT_CLAMP && !(st->lo <= st->hi))
      return hg_error(HG_ERR_INVALID, "epilogue step %d: clamp to [%g, %g] is empty", i,
                      (double)st->lo, (double)st->hi);
  }
  if (e->tma && e->staged)
    return hg_error(HG_ERR_INVALID, "an epilogue stores D with TMA or stages it, not both");
  if ((e->tma && !e->plan_d) || ((e->tma || e->staged) && (e->epi_n < 8 || e->epi_n > 256 ||
                                                           e->buffers < 1 || e->buffers > 2)))
    return hg_error(HG_ERR_INVALID,
                    "a TMA or staged epilogue needs D's plan (TMA), a sub-tile width of 8 to 256 "
                    "and 1 or 2 buffers (width %d, %d buffers)",
                    e->epi_n, e->buffers);
  for (int i = 0; i < e->nsteps; i++) {
    const hg_epi_step_t *st = &e->steps[i];
    if (st->kind != HG_EPI_AUX || !st->buffered) continue;
    const int es = hg_dtype_bytes(st->dtype);
    if (!(e->tma || e->staged) || (st->plan && !e->tma) || st->sub_n < 8 || e->epi_n % st->sub_n ||
        st->sub_n % (es == 2 ? 16 : 8) || (uint32_t)(64 * st->sub_n * es) > e->buf_bytes ||
        (e->buffers == 1 && st->sub_n != e->epi_n))
      return hg_error(HG_ERR_INVALID,
                      "epilogue step %d: an aux of %s through D's buffers needs a TMA or staged "
                      "epilogue (TMA for an aux plan) and pieces of 8 or more columns (16 for "
                      "16-bit aux) that divide the %d-column sub-tile and fit its %u-byte buffer, "
                      "one piece with one buffer (%d columns)",
                      i, hg_dtype_name(st->dtype), e->epi_n, e->buf_bytes, st->sub_n);
  }
  return hg_ok();
}

/* ---------------------------------------------------------------- the TMA store */

/* The part of am in rows [r0, r0 + rows) and columns [c0, c0 + cols), relative to the
 * sub-tile's first element. */
static hg_status_t sub_map(const hg_acc_map_t *am, int r0, int rows, int c0, int cols,
                           hg_acc_map_t *out) {
  out->rows = rows;
  out->cols = cols;
  out->v = malloc(sizeof(int) * (size_t)rows * (size_t)cols);
  if (!out->v) return hg_error(HG_ERR_NOMEM, "out of memory building an epilogue sub-tile map");
  for (int dm = 0; dm < rows; dm++)
    for (int dn = 0; dn < cols; dn++) out->v[dm * cols + dn] = hg_acc_map_at(am, r0 + dm, c0 + dn);
  return hg_ok();
}

/* The amax over the thread's values in rows [r0, r0 + rows) x columns [c0, c0 + cols) of am
 * (offsets from the thread's first element row0, col0): those outside D's extent are computed
 * (from TMA's zero fill, through the chain) but never stored, so they count as 0. */
static void amax_track_sub(epi_ctx_t *x, int r0, int rows, int c0, int cols, hg_val_t row0,
                           hg_val_t col0) {
  hg_builder_t *b = x->b;
  const hg_acc_map_t *am = x->am;
  hg_val_t zero = hg_b_f32(b, 0.0f);
  hg_val_t *row_ok = calloc((size_t)rows, sizeof *row_ok),
           *col_ok = calloc((size_t)cols, sizeof *col_ok);
  if (!row_ok || !col_ok) {
    hg_builder_fail(b, hg_error(HG_ERR_NOMEM, "out of memory tracking an epilogue's amax"));
    free(row_ok);
    free(col_ok);
    return;
  }
  for (int dm = 0; dm < rows; dm++)
    for (int dn = 0; dn < cols; dn++) {
      const int v = hg_acc_map_at(am, r0 + dm, c0 + dn);
      if (v < 0) continue;
      if (hg_val_is_none(row_ok[dm]))
        row_ok[dm] = hg_b_cmp(b, HG_LT_S, addc(b, row0, r0 + dm), x->e->m);
      if (hg_val_is_none(col_ok[dn]))
        col_ok[dn] = hg_b_cmp(b, HG_LT_S, addc(b, col0, c0 + dn), x->e->n);
      amax_track(b, x->e,
                 hg_b_select(b, hg_b_bin(b, HG_AND, row_ok[dm], col_ok[dn]), x->acc[v], zero));
    }
  free(row_ok);
  free(col_ok);
}

/* With t->tail, first the chain's tail on the sub-tile's columns [c, c + w) (then their amax):
 * one slice's temporaries live at a time, right before the slice is written, instead of the
 * whole sub-tile's before the barrier (a GELU on 128x192 ping-pong tiles spilled so). */
static hg_status_t tail_slice(epi_ctx_t *x, const sub_tile_t *s, const sub_target_t *t, int c,
                              int w) {
  if (!t->tail || s->tail < 0) return hg_ok();
  hg_builder_t *b = x->b;
  const int r0 = s->im * 64, c0 = s->j * x->e->epi_n + c;
  hg_acc_map_t slice;
  HG_TRY(sub_map(s->am, r0, 64, c0, w, &slice));
  epi_ctx_t xs = *x;
  xs.am = &slice;
  hg_status_t st =
      apply_steps(&xs, addc(b, s->row0, r0), addc(b, s->col0, c0), s->batch, s->tail, x->e->nsteps);
  hg_acc_map_free(&slice);
  HG_TRY(st);
  if (!hg_val_is_none(x->e->amax_ptr)) {
    epi_ctx_t xa = *x;
    xa.am = s->am;
    amax_track_sub(&xa, r0, 64, c0, w, s->row0, s->col0);
  }
  return hg_ok();
}

/* The sub-tile's accumulators, converted to dtype, into buf under e->sw: stmatrix for 16-bit
 * elements, byte pairs (fp8) or 8-byte vectors (f32) otherwise. */
static hg_status_t write_sub(epi_ctx_t *x, const sub_tile_t *s, const sub_target_t *t,
                             hg_val_t buf) {
  hg_builder_t *b = x->b;
  const hg_epilogue_t *e = x->e;
  const hg_acc_map_t *am = s->am;
  const hg_roles_t *r = s->r;
  const hg_dtype_t dtype = t->dtype;
  const int es = hg_dtype_bytes(dtype), epi_n = t->w, sub_rows = 64;
  const int im = s->im, col0 = s->j * e->epi_n + t->c0;
  hg_val_t lane = r->lane;
  if (es == 2) {
    /* stmatrix x4: 16 rows x 16 columns per warp; lane l addresses row l % 8 of matrix
     * l / 8, matrices ordered (rows 0-7, cols 0-7), (rows 8-15, cols 0-7), (rows 0-7,
     * cols 8-15), (rows 8-15, cols 8-15) - the accumulator fragment's order. */
    hg_val_t q = hg_b_bin(b, HG_SHR_U, lane, i32(b, 3));
    hg_val_t row = hg_b_bin(
        b, HG_ADD, hg_b_bin(b, HG_SHL, r->warp_in_wg, i32(b, 4)),
        hg_b_bin(b, HG_ADD, hg_b_bin(b, HG_SHL, hg_b_bin(b, HG_AND, q, i32(b, 1)), i32(b, 3)),
                 hg_b_bin(b, HG_AND, lane, i32(b, 7))));
    hg_val_t colq = hg_b_bin(b, HG_SHL, hg_b_bin(b, HG_SHR_U, q, i32(b, 1)), i32(b, 3));
    /* Group cg's address from the first's: a swizzled row is one swizzle span, and cg * 2
     * bytes (a multiple of 32) sets only chunk bits that the lane's column (0 or 16 bytes)
     * leaves clear and the row bits do not reach, so it XORs through the swizzle; unswizzled,
     * it adds. Derived from the buffer (which alternates), the addresses are not loop
     * invariants that ptxas would keep in registers across the main loop (8 of them on
     * 128x192 ping-pong tiles, spilling). The buffer is 1024-byte aligned. */
    const bool derive = t->tail && s->tail >= 0;
    hg_val_t at0 = HG_NONE;
    for (int cg = 0; cg < epi_n; cg += 16) {
      HG_TRY(tail_slice(x, s, t, cg, 16));
      hg_val_t regs[4];
      for (int mtx = 0; mtx < 4; mtx++) {
        const int dm = im * sub_rows + (mtx & 1) * 8, dn = col0 + cg + (mtx >> 1) * 8;
        const int v0 = hg_acc_map_at(am, dm, dn), v1 = hg_acc_map_at(am, dm, dn + 1);
        regs[mtx] = hg_b_pack_f32x2(b, dtype, x->acc[v0 < 0 ? 0 : v0], x->acc[v1 < 0 ? 0 : v1]);
      }
      if (derive && !cg)
        at0 = hg_b_bin(b, HG_ADD, buf,
                       hg_swizzle_emit_bytes(b, t->sw, es,
                                             hg_b_mad(b, row, i32(b, epi_n * es),
                                                      hg_b_bin(b, HG_SHL, colq, i32(b, 1)))));
      hg_val_t at;
      if (!derive) {
        hg_val_t col = addc(b, colq, cg);
        hg_val_t off = hg_b_mad(b, row, i32(b, epi_n * es), hg_b_bin(b, HG_SHL, col, i32(b, 1)));
        off = hg_swizzle_emit_bytes(b, t->sw, es, off);
        at = hg_b_bin(b, HG_ADD, buf, off);
      } else {
        at = !cg       ? at0
             : t->sw.b ? hg_b_bin(b, HG_XOR, at0, i32(b, cg * es))
                       : addc(b, at0, cg * es);
      }
      hg_b_stmatrix(b, 4, false, at, regs);
    }
    return hg_ok();
  }
  /* fp8 (stmatrix moves 16-bit elements only) and f32: each thread stores its pairs
   * (row, 2q..2q+1). fp8 converts a pair with one saturating cvt and stores the two bytes
   * with one 16-bit st.shared (a warp's 32 stores of 2 bytes cover 8 rows x 8 bytes, in
   * distinct banks under the swizzle: the 16-byte chunk index XORs with the row); f32
   * stores it as an 8-byte vector. */
  hg_val_t row_t = hg_b_bin(b, HG_ADD, hg_b_bin(b, HG_SHL, r->warp_in_wg, i32(b, 4)),
                            hg_b_bin(b, HG_SHR_U, lane, i32(b, 2)));
  hg_val_t col_t = hg_b_bin(b, HG_SHL, hg_b_bin(b, HG_AND, lane, i32(b, 3)), i32(b, 1));
  /* with the chain's tail, 16 columns at a time; else the whole sub-tile, row by row */
  const int slice = t->tail && s->tail >= 0 ? 16 : epi_n;
  for (int c16 = 0; c16 < epi_n; c16 += slice) {
    HG_TRY(tail_slice(x, s, t, c16, epi_n - c16 < slice ? epi_n - c16 : slice));
    for (int dm = 0; dm < sub_rows; dm += 8)
      for (int dn = c16; dn < epi_n && dn < c16 + slice; dn += 8) {
        const int v0 = hg_acc_map_at(am, im * sub_rows + dm, col0 + dn);
        const int v1 = hg_acc_map_at(am, im * sub_rows + dm, col0 + dn + 1);
        if (v0 < 0 || v1 < 0) continue;
        hg_val_t off = es == 1 ? hg_b_mad(b, addc(b, row_t, dm), i32(b, epi_n), addc(b, col_t, dn))
                               : hg_b_mad(b, addc(b, row_t, dm), i32(b, epi_n * es),
                                          hg_b_bin(b, HG_SHL, addc(b, col_t, dn), i32(b, 2)));
        off = hg_swizzle_emit_bytes(b, t->sw, es, off);
        if (es == 1) {
          hg_val_t pk = hg_b_pack_f32x2(b, dtype, x->acc[v0], x->acc[v1]);
          hg_b_store(b, HG_SHARED, 16, 1, hg_b_bin(b, HG_ADD, buf, off), &pk);
        } else {
          hg_val_t pair[2] = {x->acc[v0], x->acc[v1]};
          hg_b_store(b, HG_SHARED, 0, 2, hg_b_bin(b, HG_ADD, buf, off), pair);
        }
      }
  }
  return hg_ok();
}

/* The staged sub-tile in buf out to t->g, row by row: warp w of the consumer takes rows w,
 * w + 4, ..., its lanes consecutive elements of the row, so that each store instruction
 * writes 32 consecutive elements (64 bytes of 2-byte D: two full sectors and at most one
 * partial one at each end, whatever the row's alignment) instead of the accumulator
 * fragment's 8 rows x 4 scattered elements. Elements past M or N are not written. */
static hg_status_t copy_rows(epi_ctx_t *x, const sub_tile_t *s, const sub_target_t *t,
                             hg_val_t buf) {
  hg_builder_t *b = x->b;
  const hg_epilogue_t *e = x->e;
  const hg_roles_t *r = s->r;
  const int es = hg_dtype_bytes(t->dtype), epi_n = t->w, chunks = (epi_n + 31) / 32;
  hg_val_t row_w = hg_b_bin(b, HG_ADD, addc(b, s->m_base, s->im * 64), r->warp_in_wg);
  hg_val_t col_l = hg_b_bin(b, HG_ADD, addc(b, s->n0, s->j * e->epi_n + t->c0), r->lane);
  hg_val_t col_ok[8], lane_off = hg_b_mad(b, r->warp_in_wg, i32(b, epi_n * es),
                                          hg_b_bin(b, HG_MUL, r->lane, i32(b, es)));
  if (chunks > 8)
    return hg_error(HG_ERR_INVALID, "a staged sub-tile of %d columns (at most 256)", epi_n);
  for (int k = 0; k < chunks; k++) {
    col_ok[k] = hg_b_cmp(b, HG_LT_S, addc(b, col_l, 32 * k), e->n);
    if (epi_n % 32)
      col_ok[k] =
          hg_b_bin(b, HG_AND, col_ok[k], hg_b_cmp(b, HG_LT_S, r->lane, i32(b, epi_n - 32 * k)));
  }
  /* A run-time loop over the warp's 16 rows, one 64-bit row pointer stepped by 4 rows: the
   * unrolled rows' addresses and shared-memory offsets, computed ahead by the compilers,
   * spilled on 128x192 ping-pong tiles (ptxas) and beside a staged aux (LLVM). */
  hg_dtensor_t mat;
  hg_val_t first;
  HG_TRY(batch_slice(b, e, &t->g, s->batch, &mat));
  HG_TRY(elem_addr(b, &mat, hg_dint_val(row_w), hg_dint_val(col_l), &first, NULL));
  hg_val_t rowp = hg_b_var(b, HG_T_I64, first);
  hg_val_t step = hg_b_bin(b, HG_MUL, t->g.ld, hg_b_i64(b, 4 * es));
  hg_val_t i = hg_b_for(b, i32(b, 0), i32(b, 64 / 4), i32(b, 1));
  {
    hg_val_t row_ok = hg_b_cmp(b, HG_LT_S, hg_b_mad(b, i, i32(b, 4), row_w), e->m);
    hg_val_t row_off = hg_b_mad(b, i, i32(b, 4 * epi_n * es), lane_off);
    for (int k = 0; k < chunks; k++) {
      hg_val_t off = hg_swizzle_emit_bytes(b, t->sw, es, addc(b, row_off, 32 * k * es));
      hg_val_t at = hg_b_bin(b, HG_ADD, buf, off), val;
      if (es == 4)
        hg_b_load(b, HG_SHARED, HG_T_F32, 0, 1, at, &val);
      else
        hg_b_load(b, HG_SHARED, HG_T_I32, 8 * es, 1, at, &val);
      hg_b_if(b, hg_b_bin(b, HG_AND, row_ok, col_ok[k]));
      hg_val_t addr = k ? hg_b_bin(b, HG_ADD, rowp, hg_b_i64(b, 32 * k * es)) : rowp;
      hg_b_store(b, HG_GLOBAL, es == 4 ? 0 : 8 * es, 1, addr, &val);
      hg_b_endif(b);
    }
    hg_b_assign(b, rowp, hg_b_bin(b, HG_ADD, rowp, step));
  }
  hg_b_endfor(b);
  return hg_ok();
}

/* A batched sub-tile's own buffer. */
static hg_val_t sub_buffer(hg_builder_t *b, const hg_epilogue_t *e, const sub_tile_t *s) {
  return addc(b, s->my_bufs, (s->im * s->subs_n + s->j) * (int32_t)e->buf_bytes);
}

/* The TMA store of a sub-tile from buf, by the consumer's first thread (the caller's if). */
static void store_sub(hg_builder_t *b, const hg_epilogue_t *e, const sub_tile_t *s,
                      const sub_target_t *t, hg_val_t buf) {
  hg_val_t origin[3] = {addc(b, s->m_base, s->im * 64), addc(b, s->n0, s->j * e->epi_n + t->c0),
                        s->batch};
  hg_tma_copy_store(b, t->plan, t->tmap, buf, origin, NULL);
}

/* One sub-tile through the next of the consumer's buffers to t. A buffer is rewritten only
 * after the TMA store that read it has finished reading (bulk wait_group.read buffers-1
 * leaves just the other buffer's store in flight) and after every thread copied out of it
 * (the barrier before the write). */
static hg_status_t stage_sub(epi_ctx_t *x, const sub_tile_t *s, const sub_target_t *t) {
  hg_builder_t *b = x->b;
  const hg_epilogue_t *e = x->e;
  const hg_roles_t *r = s->r;
  if (s->batched) /* the buffer is free and the store comes after every sub-tile's write */
    return write_sub(x, s, t, sub_buffer(b, e, s));
  hg_val_t buf = hg_b_mad(b, s->buf_sel, i32(b, (int32_t)e->buf_bytes), s->my_bufs);
  if (e->tma) {
    hg_b_if(b, s->is_first);
    hg_b_bulk_wait(b, e->buffers - 1, true);
    hg_b_endif(b);
  }
  hg_roles_consumer_sync(b, r);
  HG_TRY(write_sub(x, s, t, buf));
  if (t->plan) {
    hg_b_fence_proxy_async(b);
    hg_roles_consumer_sync(b, r);
    hg_b_if(b, s->is_first);
    store_sub(b, e, s, t, buf);
    hg_b_bulk_commit(b);
    hg_b_endif(b);
  } else {
    hg_roles_consumer_sync(b, r);
    HG_TRY(copy_rows(x, s, t, buf));
  }
  hg_b_assign(b, s->buf_sel, hg_b_bin(b, HG_XOR, s->buf_sel, i32(b, e->buffers > 1 ? 1 : 0)));
  return hg_ok();
}

/* For each 64-row x epi_n-column sub-tile of the consumer's region: with per_sub, run the
 * chain on its accumulators (one sub-tile's temporaries live at a time: a 64x256 region's
 * chain with SiLU spilled when applied all at once; an aux step on the way goes through the
 * buffers too), then D through the next buffer: stored with TMA, or copied out row by row
 * (e->staged: D's rows TMA cannot store). */
static hg_status_t store_buffered(epi_ctx_t *x, bool per_sub, hg_val_t row0, hg_val_t col0,
                                  hg_val_t m_base, hg_val_t n0, hg_val_t batch,
                                  const hg_roles_t *r) {
  hg_builder_t *b = x->b;
  const hg_epilogue_t *e = x->e;
  const hg_acc_map_t *am = x->am;
  const int epi_n = e->epi_n, sub_rows = 64;
  sub_tile_t s = {.am = am,
                  .m_base = m_base,
                  .n0 = n0,
                  .batch = batch,
                  .buf_sel = hg_b_var(b, HG_T_I32, i32(b, 0)),
                  .my_bufs = hg_b_mad(b, r->consumer,
                                      i32(b, (int32_t)(e->buf_bytes * (uint32_t)e->buffers)),
                                      hg_b_smem_addr(b, e->buf_offset)),
                  .is_first = hg_b_cmp(b, HG_EQ, r->wg_tid, i32(b, 0)),
                  .r = r,
                  .tail = -1,
                  .row0 = row0,
                  .col0 = col0};
  /* The chain from its activation on runs inside D's write, 16 columns at a time (after the
   * barrier that frees the buffer): an expensive activation's temporaries for a whole 64x64
   * sub-tile, next to 192 accumulators of a 128x192 ping-pong tile, spilled. */
  if (per_sub && e->act_in_write)
    for (int i = 0; i < e->nsteps; i++) {
      if (e->steps[i].kind == HG_EPI_ACT && s.tail < 0) s.tail = i;
      if (e->steps[i].kind == HG_EPI_AUX) s.tail = -1;
      /* a residual's loads per 16 columns spilled more than per sub-tile */
      if (e->steps[i].kind == HG_EPI_BETA_C && s.tail >= 0) {
        s.tail = -1;
        break;
      }
    }
  const sub_target_t d = {.dtype = e->d_type,
                          .w = e->epi_n,
                          .sw = e->sw,
                          .tail = true,
                          .plan = e->tma ? e->plan_d : NULL,
                          .tmap = e->tmap_d,
                          .g = gmatrix(e->d_ptr, e->ldd, e->batch_stride_d, e->d_type)};
  /* D alone through the buffers by TMA, a buffer for each sub-tile: batched (sub_tile_t) */
  bool aux = false;
  for (int i = 0; i < e->nsteps; i++) aux = aux || e->steps[i].kind == HG_EPI_AUX;
  s.subs_n = am->cols / epi_n;
  s.batched = e->tma && !aux && (am->rows / sub_rows) * s.subs_n <= e->buffers;
  if (s.batched) {
    /* the last tile's stores have read every buffer; then the threads meet, so that none
     * writes a buffer before that */
    hg_b_if(b, s.is_first);
    hg_b_bulk_wait(b, 0, true);
    hg_b_endif(b);
    hg_roles_consumer_sync(b, r);
  }
  for (int im = 0; im < am->rows / sub_rows; im++)
    for (int j = 0; j < s.subs_n; j++) {
      s.im = im;
      s.j = j;
      if (per_sub) {
        hg_acc_map_t sub;
        HG_TRY(sub_map(am, im * sub_rows, sub_rows, j * epi_n, epi_n, &sub));
        epi_ctx_t xs = *x;
        xs.am = &sub;
        xs.sub = &s;
        hg_status_t st = apply_steps(&xs, addc(b, row0, im * sub_rows), addc(b, col0, j * epi_n),
                                     batch, 0, s.tail < 0 ? e->nsteps : s.tail);
        hg_acc_map_free(&sub);
        HG_TRY(st);
      }
      if (!hg_val_is_none(e->amax_ptr) && s.tail < 0)
        amax_track_sub(x, im * sub_rows, sub_rows, j * epi_n, epi_n, row0, col0);
      HG_TRY(stage_sub(x, &s, &d));
    }
  if (s.batched) {
    hg_b_fence_proxy_async(b);
    hg_roles_consumer_sync(b, r);
    hg_b_if(b, s.is_first);
    for (s.im = 0; s.im < am->rows / sub_rows; s.im++)
      for (s.j = 0; s.j < s.subs_n; s.j++) store_sub(b, e, &s, &d, sub_buffer(b, e, &s));
    hg_b_bulk_commit(b);
    hg_b_endif(b);
  }
  return hg_ok();
}

hg_status_t hg_epilogue_emit(hg_builder_t *b, const hg_epilogue_t *e, const hg_val_t *acc,
                             const hg_acc_map_t *am, hg_val_t row0, hg_val_t col0, hg_val_t m_base,
                             hg_val_t n0, hg_val_t batch, const hg_roles_t *r) {
  HG_TRY(check_epilogue(e));
  epi_ctx_t x = {.b = b, .e = e, .acc = acc, .am = am, .step = NULL, .consumer = r->consumer};
  if (e->prefetch) store_prefetched(b, e, r);
  if (e->tma || e->staged) {
    if (am->rows % 64 || am->cols % e->epi_n)
      return hg_error(HG_ERR_INVALID,
                      "the consumer's %dx%d region is not whole 64-row x %d-column sub-tiles",
                      am->rows, am->cols, e->epi_n);
    /* An activation runs per sub-tile (its temporaries for 128-256 accumulators at once do
     * not fit); a chain without one runs on the whole region first (beta * C's row pointers
     * then serve every sub-tile: per sub-tile they spilled on 128x192 ping-pong tiles). */
    bool per_sub = false;
    for (int i = 0; i < e->nsteps; i++) per_sub = per_sub || e->steps[i].kind == HG_EPI_ACT;
    if (!per_sub) HG_TRY(apply_steps(&x, row0, col0, batch, 0, e->nsteps));
    HG_TRY(store_buffered(&x, per_sub, row0, col0, m_base, n0, batch, r));
  } else {
    HG_TRY(apply_steps(&x, row0, col0, batch, 0, e->nsteps));
    const gmatrix_t d = gmatrix(e->d_ptr, e->ldd, e->batch_stride_d, e->d_type);
    HG_TRY(for_each_elem(&x, &d, row0, col0, batch, store_d_elem));
  }
  return hg_builder_status(b);
}

hg_epilogue_t hg_epilogue_direct(const hg_epilogue_t *e) {
  hg_epilogue_t d = *e;
  d.tma = d.staged = false;
  for (int i = 0; i < d.nsteps; i++) d.steps[i].buffered = false;
  return d;
}

/* The amax through its state (hg_epilogue_t.amax_state; HG_AMAX_STATE_* in builders.h).
 * Same-address atomics serialise in L2, about 3 ns each on an H200: one red.max per warp cost
 * a 2048^3 GEMM about 3 us (+14%, bench/RESULTS.md), so the warpgroup's four warps meet in
 * shared memory first and one thread per warpgroup goes to global memory, its max into one
 * of HG_AMAX_STATE_SLOTS words on their own 128-byte lines (spread by CTA). Then it counts
 * the warpgroup (the fence orders the max before the count: the last arrival's acquire sees
 * every max); the grid's last warpgroup reads the slots, stores their max into *amax and
 * leaves the state zero for the next launch. Nothing else touches the state in this launch,
 * and a later launch's first access comes after this grid completes (stream order; a
 * programmatic dependent's after its griddepcontrol.wait). */
static void amax_publish(hg_builder_t *b, const hg_epilogue_t *e, const hg_roles_t *r, hg_val_t m) {
  const int consumers = r->spec.consumers;
  hg_val_t ours =
      hg_b_bin(b, HG_ADD, hg_b_smem_addr(b, hg_b_smem_reserve(b, 16u * (uint32_t)consumers, 16)),
               hg_b_bin(b, HG_MUL, r->consumer, i32(b, 16)));
  hg_val_t mine = hg_b_bin(b, HG_ADD, ours, hg_b_bin(b, HG_MUL, r->warp_in_wg, i32(b, 4)));
  hg_b_if(b, hg_b_cmp(b, HG_EQ, r->lane, i32(b, 0)));
  hg_b_store(b, HG_SHARED, 32, 1, mine, &m);
  hg_b_endif(b);
  hg_roles_consumer_sync(b, r);
  hg_b_if(b, hg_b_cmp(b, HG_EQ, r->wg_tid, i32(b, 0)));
  {
    hg_val_t four[4];
    hg_b_load(b, HG_SHARED, HG_T_I32, 0, 4, ours, four);
    hg_val_t wg = hg_b_bin(b, HG_MAX_U, hg_b_bin(b, HG_MAX_U, four[0], four[1]),
                           hg_b_bin(b, HG_MAX_U, four[2], four[3]));
    hg_val_t ctas =
        hg_b_bin(b, HG_MUL, hg_b_sreg(b, HG_NCTAID_X),
                 hg_b_bin(b, HG_MUL, hg_b_sreg(b, HG_NCTAID_Y), hg_b_sreg(b, HG_NCTAID_Z)));
    hg_val_t slot =
        hg_b_bin(b, HG_REM_U, hg_b_bin(b, HG_ADD, hg_b_sreg(b, HG_CTAID_X), r->consumer),
                 i32(b, HG_AMAX_STATE_SLOTS));
    hg_val_t at = hg_b_bin(
        b, HG_ADD, e->amax_state,
        hg_b_sext(b, hg_b_bin(b, HG_MUL, hg_b_bin(b, HG_ADD, slot, i32(b, 1)), i32(b, 128))));
    hg_b_red(b, HG_RED_MAX, HG_U32, at, wg);
    hg_b_fence_gpu(b);
    hg_val_t old = hg_b_atomic_add_u32(b, e->amax_state, i32(b, 1));
    hg_val_t last = hg_b_bin(b, HG_SUB, hg_b_bin(b, HG_MUL, ctas, i32(b, consumers)), i32(b, 1));
    hg_b_if(b, hg_b_cmp(b, HG_EQ, old, last));
    {
      hg_b_fence_gpu(b);
      hg_val_t all = i32(b, 0), zero = i32(b, 0);
      for (int j = 0; j < HG_AMAX_STATE_SLOTS; j++) {
        hg_val_t sj = hg_b_bin(b, HG_ADD, e->amax_state, hg_b_i64(b, 128 * (j + 1)));
        all = hg_b_bin(b, HG_MAX_U, all, hg_b_atomic_add_u32(b, sj, zero));
        hg_b_store(b, HG_GLOBAL, 32, 1, sj, &zero);
      }
      hg_b_store(b, HG_GLOBAL, 32, 1, e->amax_state, &zero);
      hg_b_store(b, HG_GLOBAL, 32, 1, e->amax_ptr, &all);
    }
    hg_b_endif(b);
  }
  hg_b_endif(b);
}

void hg_epilogue_begin(hg_builder_t *b, hg_epilogue_t *e) {
  if (!hg_val_is_none(e->amax_ptr)) e->amax_var = hg_b_var(b, HG_T_I32, i32(b, 0));
}

void hg_epilogue_drain(hg_builder_t *b, const hg_epilogue_t *e, const hg_roles_t *r) {
  if (!hg_val_is_none(e->amax_ptr) && !hg_val_is_none(e->amax_var)) {
    /* The thread's largest |value| rounded to D's type and read back (the largest stored
     * |value|; a NaN stays a NaN), over the warp, then one reduction per warp: the f32's
     * bits order like u32 (non-negative), so red.max.u32 is a float max. */
    hg_val_t m = e->amax_var;
    if (e->d_type != HG_F32) {
      hg_val_t f = hg_b_bitcast(b, HG_T_F32, m);
      hg_val_t back = hg_b_unpack_f32(b, e->d_type, hg_b_pack_f32x2(b, e->d_type, f, f));
      m = hg_b_bin(b, HG_AND, hg_b_bitcast(b, HG_T_I32, back), i32(b, 0x7FFFFFFF));
    }
    m = hg_b_redux_sync(b, HG_RED_MAX, m);
    if (hg_val_is_none(e->amax_state)) {
      hg_b_if(b, hg_b_cmp(b, HG_EQ, r->lane, i32(b, 0)));
      hg_b_red(b, HG_RED_MAX, HG_U32, e->amax_ptr, m);
      hg_b_endif(b);
    } else {
      amax_publish(b, e, r, m);
    }
  }
  if (!e->tma) return;
  /* Shared memory must outlive the stores that read it. */
  hg_b_if(b, hg_b_cmp(b, HG_EQ, r->wg_tid, i32(b, 0)));
  hg_b_bulk_wait(b, 0, false);
  hg_b_endif(b);
}

void hg_epilogue_reserve_tma(hg_builder_t *b, hg_epilogue_t *e, const hg_tma_plan_t *plan_d,
                             int epi_n, int buffers, uint32_t buf_bytes, int consumers) {
  e->tma = true;
  e->plan_d = plan_d;
  e->sw = plan_d->smem.sw;
  e->epi_n = epi_n;
  e->buffers = buffers;
  e->buf_bytes = buf_bytes;
  e->buf_offset = hg_b_smem_reserve(b, buf_bytes * (uint32_t)(buffers * consumers), 1024);
}

void hg_epilogue_reserve_staged(hg_builder_t *b, hg_epilogue_t *e, hg_swizzle_t sw, int epi_n,
                                int buffers, uint32_t buf_bytes, int consumers) {
  e->staged = true;
  e->sw = sw;
  e->epi_n = epi_n;
  e->buffers = buffers;
  e->buf_bytes = buf_bytes;
  e->buf_offset = hg_b_smem_reserve(b, buf_bytes * (uint32_t)(buffers * consumers), 1024);
}

void hg_epilogue_reserve_vectors(hg_builder_t *b, hg_epilogue_t *e, int tile_m, int tile_n,
                                 int consumers, bool pingpong) {
  e->vectors = e->vec_lines = 0;
  for (int i = 0; i < e->nsteps; i++) {
    const int lines = e->steps[i].along_n ? tile_n : tile_m;
    if (e->steps[i].kind != HG_EPI_BIAS) continue;
    e->vectors++;
    if (lines > e->vec_lines) e->vec_lines = lines;
  }
  if (!e->vectors) return;
  /* ping-pong: a tile per consumer in flight, each with its own slots */
  e->vec_per_consumer = pingpong;
  e->vec_threads = pingpong ? 128 : 128 * consumers;
  e->vec_offset = hg_b_smem_reserve(
      b, (uint32_t)(4 * e->vec_lines * e->vectors * (pingpong ? consumers : 1)), 16);
}
