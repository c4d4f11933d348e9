/* The GEMM check and bench driver behind `hopgen gemm --check/--bench` and `hopgen bench
 * gemm` (kernels.h): fresh random operands, D poisoned first, hopgen against an
 * f32-accumulating reference and against cuBLASLt on the same data in the same process,
 * timed side by side. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hopgen/kernels.h"
#include "kernels/gemm_internal.h"

/* Bytes spanned by an operand of rows x cols (cols contiguous, leading dimension ld). */
static size_t span_bytes(int64_t rows, int64_t ld, int batch, int64_t bs, int e) {
  return (size_t)(((int64_t)(batch - 1) * bs + (rows - 1) * ld) + ld) * (size_t)e;
}

/* An fp8 byte's value: e4m3 (bias 7, no infinities, S.1111.111 NaN) or e5m2 (bias 15,
 * IEEE-like). */
static double fp8_value(hg_dtype_t t, uint8_t u) {
  const int sign = u >> 7;
  double v;
  if (t == HG_E4M3) {
    const int ex = (u >> 3) & 15, fr = u & 7;
    if (ex == 15 && fr == 7) return NAN;
    v = ex == 0 ? ldexp(fr, -9) : ldexp(8 + fr, ex - 10);
  } else {
    const int ex = (u >> 2) & 31, fr = u & 3;
    if (ex == 31) return fr ? NAN : sign ? -INFINITY : INFINITY;
    v = ex == 0 ? ldexp(fr, -16) : ldexp(4 + fr, ex - 17);
  }
  return sign ? -v : v;
}

/* x converted to fp8 as cvt.rn.satfinite does it: the nearest value (ties to the even
 * code), anything beyond the largest finite value (infinities too) that value with x's
 * sign, NaN kept. Non-negative codes 0..max order like their values, so a binary search over
 * the codes finds the neighbours. */
static double fp8_round(hg_dtype_t t, double x, bool *saturated) {
  if (isnan(x)) return x;
  const int max_code = t == HG_E4M3 ? 0x7E : 0x7B; /* 448, 57344 */
  const double ax = fabs(x), top = fp8_value(t, (uint8_t)max_code);
  double r;
  if (ax >= top) {
    r = top;
    if (saturated && ax > top) *saturated = true;
  } else {
    int lo = 0, hi = max_code; /* value(lo) <= ax < value(hi) */
    while (hi - lo > 1) {
      const int mid = (lo + hi) / 2;
      if (fp8_value(t, (uint8_t)mid) <= ax)
        lo = mid;
      else
        hi = mid;
    }
    const double a = fp8_value(t, (uint8_t)lo), b = fp8_value(t, (uint8_t)hi);
    r = ax - a < b - ax ? a : ax - a > b - ax ? b : (lo % 2 == 0 ? a : b);
  }
  return x < 0 ? -r : r;
}

double hg_gemm_host_elem(hg_dtype_t t, const uint8_t *p) {
  if (t == HG_E4M3 || t == HG_E5M2) return fp8_value(t, p[0]);
  if (t == HG_F32) {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  memcpy(&h, p, 2);
  if (t == HG_BF16) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  /* IEEE half: sign, 5-bit exponent (bias 15), 10-bit fraction. */
  const int sign = h >> 15, ex = (h >> 10) & 31, fr = h & 1023;
  double v;
  if (ex == 0)
    v = ldexp(fr, -24);
  else if (ex == 31)
    v = fr ? NAN : INFINITY;
  else
    v = ldexp(1024 + fr, ex - 25);
  return sign ? -v : v;
}

/* Device buffers of one run: operands with fresh random data, poisoned outputs. */
typedef struct bufs {
  hg_devptr_t a, b, c, d, dref, dblas, scale_a, scale_b, bias, rowscale, colscale, residual;
  hg_devptr_t scale_d, amax, aux, aux_blas; /* aux_blas: cuBLASLt GELU_AUX_BIAS's own aux */
  size_t a_bytes, b_bytes, c_bytes, d_bytes, ref_bytes, res_bytes, aux_bytes;
  float scale_d_host; /* fp8 D's output scale */
  /* the epilogue vectors' values (exact in their types), for the check */
  float *bias_host, *rowscale_host, *colscale_host;
  /* ws_op's workspace (ws_bytes), zeroed once: its runs say it is zero where it must be (as
   * a caller keeping one per stream would), and the check reads back that every run left
   * it so */
  hg_devptr_t ws;
  size_t ws_bytes;
  const hg_gemm_op_t *ws_op;
} bufs_t;

/* One run of op on the buffers (the bias too, when the problem has one). */
static hg_status_t op_run(hg_gemm_op_t *op, const bufs_t *b) {
  const hg_gemm_args_t x = {.a = b->a,
                            .b = b->b,
                            .c = b->c,
                            .d = b->d,
                            .scale_a = b->scale_a,
                            .scale_b = b->scale_b,
                            .bias = b->bias,
                            .rowscale = b->rowscale,
                            .colscale = b->colscale,
                            .residual = b->residual,
                            .scale_d = b->scale_d,
                            .amax = b->amax,
                            .aux = b->aux,
                            .workspace = b->ws_op == op ? b->ws : 0,
                            .workspace_bytes = b->ws_op == op ? b->ws_bytes : 0,
                            .workspace_zeroed = b->ws_op == op};
  return hg_gemm_op_run_args(op, &x, NULL);
}

void hg_gemm_kits_free(hg_rt_t *rt, hg_gemm_kits_t *k) {
  for (int i = 0; i < HG_GEMM_FILL_SLOTS; i++) {
    if (k->fill_mod[i]) hg_rt_module_unload(rt, k->fill_mod[i]);
    hg_kernel_free(&k->fill[i]);
  }
  if (k->ref_mod) hg_rt_module_unload(rt, k->ref_mod);
  hg_kernel_free(&k->ref);
}

static void bufs_free(hg_rt_t *rt, bufs_t *b) {
  hg_devptr_t *all[] = {&b->a,        &b->b,        &b->c,       &b->d,    &b->dref,
                        &b->dblas,    &b->scale_a,  &b->scale_b, &b->bias, &b->rowscale,
                        &b->colscale, &b->residual, &b->scale_d, &b->amax, &b->aux,
                        &b->aux_blas, &b->ws};
  free(b->bias_host);
  free(b->rowscale_host);
  free(b->colscale_host);
  b->bias_host = b->rowscale_host = b->colscale_host = NULL;
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (*all[i]) hg_rt_free(rt, *all[i]);
}

hg_status_t hg_gemm_kits_fill(hg_rt_t *rt, hg_gemm_kits_t *k, int slot, hg_dtype_t t, hg_devptr_t p,
                              size_t bytes, uint64_t seed) {
  if (slot < 0 || slot >= HG_GEMM_FILL_SLOTS)
    return hg_error(HG_ERR_INVALID, "fill slot %d: the kits hold %d (0..%d)", slot,
                    HG_GEMM_FILL_SLOTS, HG_GEMM_FILL_SLOTS - 1);
  if (!k->fill_fn[slot]) {
    HG_TRY(hg_gen_fill_random(t, HG_BACKEND_PTX, &k->fill[slot]));
    HG_TRY(hg_kernels_load(rt, &k->fill[slot], &k->fill_mod[slot], &k->fill_fn[slot], NULL));
  }
  int64_t count = (int64_t)(bytes / (size_t)hg_dtype_bytes(t));
  void *args[] = {&p, &count, &seed};
  hg_launch_t l = {.grid = {1024, 1, 1}, .block = {256, 1, 1}};
  return hg_rt_launch(rt, k->fill_fn[slot], &l, args);
}

hg_status_t hg_gemm_kits_reference(hg_rt_t *rt, hg_gemm_kits_t *k, const hg_gemm_problem_t *p,
                                   const hg_gemm_ref_args_t *a) {
  if (!k->ref_fn) {
    HG_TRY(hg_gen_gemm_reference(p, HG_BACKEND_PTX, &k->ref));
    HG_TRY(hg_kernels_load(rt, &k->ref, &k->ref_mod, &k->ref_fn, NULL));
  }
  hg_gemm_ref_args_t x = *a;
  void *args[] = {&x.a,    &x.b,       &x.c,       &x.d,         &x.m,        &x.n,  &x.k,
                  &x.lda,  &x.ldb,     &x.ldc,     &x.sa,        &x.sb,       &x.sc, &x.alpha,
                  &x.beta, &x.scale_a, &x.scale_b, &x.scale_lda, &x.scale_ldb};
  hg_launch_t l = {
      .grid = {(uint32_t)((x.n + 15) / 16), (uint32_t)((x.m + 15) / 16), (uint32_t)x.batch},
      .block = {256, 1, 1},
      .smem_bytes = k->ref.smem_bytes};
  return hg_rt_launch(rt, k->ref_fn, &l, args);
}

static hg_status_t run_reference(hg_rt_t *rt, hg_gemm_kits_t *k, const hg_gemm_problem_t *p,
                                 const bufs_t *b, float alpha_eff) {
  const hg_gemm_ref_args_t x = {.a = b->a,
                                .b = b->b,
                                .c = b->c ? b->c : b->d,
                                .d = b->dref,
                                .m = (int32_t)p->m,
                                .n = (int32_t)p->n,
                                .k = (int32_t)p->k,
                                .batch = (int32_t)p->batch,
                                .lda = p->lda,
                                .ldb = p->ldb,
                                .ldc = p->ldc,
                                .sa = p->batch_stride_a,
                                .sb = p->batch_stride_b,
                                .sc = p->batch_stride_c,
                                .alpha = alpha_eff,
                                .beta = p->beta,
                                .scale_a = b->scale_a,
                                .scale_b = b->scale_b,
                                .scale_lda = p->scale_lda,
                                .scale_ldb = p->scale_ldb};
  return hg_gemm_kits_reference(rt, k, p, &x);
}

/* What the main check compares besides D: the aux output, the amax, fp8 saturation. */
typedef struct extra_check {
  double rel_aux;
  int64_t saturated;
  bool amax_checked, amax_equal;
  float amax, amax_ref;
} extra_check_t;

static bool is_fp8(hg_dtype_t t) {
  return t == HG_E4M3 || t == HG_E5M2;
}

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* The index of D's element (batch bt, row i, column j) as stored (a host copy's element). */
static size_t d_index(const hg_gemm_problem_t *p, int64_t bt, int64_t i, int64_t j) {
  return (size_t)bt * (size_t)p->batch_stride_d + (size_t)i * (size_t)p->ldd + (size_t)j;
}

/* max |D| over rows [0, M) of every batch of a host copy of D, as stored (NaN when D holds
 * one): what the kernel's amax must be, bit for bit (every stored value is exact in f32, so
 * the f32 of the double is the value itself, and its bits are what the kernel's reduction
 * must have produced) */
static float host_amax(const hg_gemm_problem_t *p, const uint8_t *x) {
  const size_t e = (size_t)hg_dtype_bytes(p->d_type);
  double most = 0;
  for (int bt = 0; bt < p->batch; bt++)
    for (int64_t i = 0; i < p->m; i++)
      for (int64_t j = 0; j < p->n; j++) {
        const size_t at = d_index(p, bt, i, j) * e;
        const double v = hg_gemm_host_elem(p->d_type, x + at);
        if (isnan(v)) return NAN;
        if (fabs(v) > most) most = fabs(v);
      }
  return (float)most;
}

/* The kernel's amax against the host's max |D|, bit for bit (both NaN counts as equal). */
static bool amax_same(float got, float want) {
  return isnan(want) ? isnan(got) : f32_bits(got) == f32_bits(want);
}

/* Relative Frobenius error of D against the f32 reference (double on the host); any NaN
 * or infinity in D (an unwritten, poisoned element) makes it infinite. fp8 D: against the
 * reference times scale_d converted to fp8 on the host. With x (the main check): the aux
 * output against the chain's pre-activation values, and the amax against the host's
 * reduction over D as downloaded. */
static hg_status_t compare(hg_rt_t *rt, const hg_gemm_problem_t *p, const bufs_t *epi,
                           hg_devptr_t d, hg_devptr_t ref, double *rel, int64_t *bad,
                           int64_t *first_bad, char *where, size_t where_size, extra_check_t *x) {
  const int e = hg_dtype_bytes(p->d_type), ec = hg_dtype_bytes(p->c_type);
  const size_t d_bytes = span_bytes(p->m, p->ldd, p->batch, p->batch_stride_d, e);
  const size_t res_bytes = span_bytes(p->m, p->ldd, p->batch, p->batch_stride_d, ec);
  const size_t r_bytes = (size_t)(p->m * p->n * p->batch) * 4;
  const bool fp8 = is_fp8(p->d_type);
  const double scale_d = epi && fp8 ? (double)epi->scale_d_host : 1.0;
  uint8_t *hd = malloc(d_bytes);
  float *hr = malloc(r_bytes);
  if (!hd || !hr) {
    free(hd);
    free(hr);
    return hg_error(HG_ERR_NOMEM, "out of host memory for the comparison (%zu B)",
                    d_bytes + r_bytes);
  }
  hg_status_t s = hg_rt_download(rt, hd, d, d_bytes);
  if (hg_is_ok(&s)) s = hg_rt_download(rt, hr, ref, r_bytes);
  /* the residual, laid out as D in C's type */
  uint8_t *hres = epi && epi->residual ? malloc(res_bytes) : NULL;
  if (epi && epi->residual && !hres && hg_is_ok(&s))
    s = hg_error(HG_ERR_NOMEM, "out of host memory for the residual (%zu B)", res_bytes);
  if (hres && hg_is_ok(&s)) s = hg_rt_download(rt, hres, epi->residual, res_bytes);
  /* the aux output and the amax */
  const bool want_aux = x && epi && epi->aux && p->aux;
  uint8_t *haux = want_aux ? malloc(epi->aux_bytes) : NULL;
  if (want_aux && !haux && hg_is_ok(&s))
    s = hg_error(HG_ERR_NOMEM, "out of host memory for the aux output (%zu B)", epi->aux_bytes);
  if (haux && hg_is_ok(&s)) s = hg_rt_download(rt, haux, epi->aux, epi->aux_bytes);
  const int eaux = p->aux ? hg_dtype_bytes(p->aux_type) : 0;
  double anum = 0, aden = 0;
  if (x) {
    memset(x, 0, sizeof *x);
    x->rel_aux = NAN;
  }
  if (x && epi && p->amax && epi->amax && hg_is_ok(&s)) {
    s = hg_rt_download(rt, &x->amax, epi->amax, 4);
    x->amax_checked = hg_is_ok(&s);
  }
  const float *bias = epi ? epi->bias_host : NULL;
  const float *rs = epi ? epi->rowscale_host : NULL, *cs = epi ? epi->colscale_host : NULL;
  double num = 0, den = 0;
  *bad = 0;
  *first_bad = -1;
  /* Where the error sits, to tell a wrong tile, block or edge from rounding: the relative
   * error of each 64x64 block of D (batches folded), of which the worst is reported. */
  const int64_t bm = (p->m + 63) / 64, bn = (p->n + 63) / 64;
  double *bnum = calloc((size_t)(bm * bn), sizeof *bnum);
  double *bden = calloc((size_t)(bm * bn), sizeof *bden);
  if (hg_is_ok(&s))
    for (int64_t z = 0; z < p->batch; z++)
      for (int64_t i = 0; i < p->m; i++)
        for (int64_t j = 0; j < p->n; j++) {
          const size_t at = d_index(p, z, i, j);
          const double x_d = hg_gemm_host_elem(p->d_type, hd + at * (size_t)e);
          /* the reference is alpha A B + beta C in f32; the epilogue chain (scales, bias,
           * activation, residual) is applied here */
          double acc = hr[(z * p->m + i) * p->n + j];
          if (rs) acc *= rs[i];
          if (cs) acc *= cs[j];
          if (bias) acc += bias[p->bias == HG_BIAS_N ? j : i];
          if (haux) {
            const double ax = hg_gemm_host_elem(
                p->aux_type,
                haux + (size_t)(z * p->batch_stride_aux + i * p->ldaux + j) * (size_t)eaux);
            anum += isfinite(ax) ? (ax - acc) * (ax - acc) : INFINITY;
            aden += acc * acc;
          }
          double y = hg_gemm_act_ref(p->act, acc, p->act_lo, p->act_hi);
          if (hres) y += hg_gemm_host_elem(p->c_type, hres + at * (size_t)ec);
          if (fp8) {
            bool sat = false;
            y = fp8_round(p->d_type, y * scale_d, &sat);
            if (sat && x) x->saturated++;
          }
          if (!isfinite(x_d)) {
            if ((*bad)++ == 0) *first_bad = (z * p->m + i) * p->n + j;
            continue;
          }
          num += (x_d - y) * (x_d - y);
          den += y * y;
          if (bnum && bden) {
            bnum[(i / 64) * bn + j / 64] += (x_d - y) * (x_d - y);
            bden[(i / 64) * bn + j / 64] += y * y;
          }
        }
  if (where && where_size) where[0] = '\0';
  if (bnum && bden && where && where_size) {
    int64_t worst = 0, over = 0;
    double wv = -1;
    for (int64_t q = 0; q < bm * bn; q++) {
      const double v = bden[q] > 0 ? sqrt(bnum[q] / bden[q]) : sqrt(bnum[q]);
      if (v > wv) {
        wv = v;
        worst = q;
      }
      if (v > 0.05) over++;
    }
    snprintf(where, where_size,
             "worst 64x64 block of D at row %" PRId64 ", column %" PRId64
             " (relative error %.3g); %" PRId64 " of %" PRId64 " blocks above 5%%",
             (worst / bn) * 64, (worst % bn) * 64, wv, over, bm * bn);
  }
  free(bnum);
  free(bden);
  if (x && p->amax && hg_is_ok(&s)) {
    x->amax_ref = host_amax(p, hd);
    if (x->amax_checked) x->amax_equal = amax_same(x->amax, x->amax_ref);
  }
  free(hd);
  free(hr);
  free(hres);
  free(haux);
  if (x && hg_is_ok(&s)) {
    if (want_aux) x->rel_aux = aden > 0 ? sqrt(anum / aden) : sqrt(anum);
  }
  *rel = *bad ? INFINITY : (den > 0 ? sqrt(num / den) : sqrt(num));
  return s;
}

/* The tolerance of a relative Frobenius error: the output's rounding (half an ulp relative,
 * about 2^-9 for bf16, 2^-12 for f16) with headroom, or accumulation-order noise for f32.
 * fp8 operands: Hopper's fp8 MMA accumulates with fewer bits than f32 (seen on an H200:
 * 2.2e-4 relative at K = 127 with f32 output, growing with K), so f16/f32 outputs get
 * 5e-3, fp8's own tolerance; bf16 output stays at its rounding's 1e-2. */
static double tolerance(hg_dtype_t ab, hg_dtype_t d) {
  /* fp8 D against the reference converted the same way: only values within the kernel's
   * rounding of a conversion boundary may land one fp8 step away (1/8 relative for e4m3, 1/4
   * for e5m2), a small share of them */
  if (d == HG_E4M3 || d == HG_E5M2) return d == HG_E4M3 ? 3e-2 : 6e-2;
  if (hg_dtype_bits(ab) == 8) return d == HG_BF16 ? 1e-2 : 5e-3;
  return d == HG_BF16 ? 1e-2 : d == HG_F16 ? 2e-3 : 1e-4;
}

static int cmp_float(const void *a, const void *b) {
  const float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

/* Median milliseconds of one call of fn, over iters timed samples after warmup untimed calls.
 * A sample times `reps` calls back to back between two events and divides: a kernel of 15 us
 * timed alone also measured the host's launch of it (the stream is idle when e0 is recorded),
 * and that host time varied 10-20% between calls. reps is as many calls as fill 0.25 ms
 * (at most 64), from one call timed alone after the warmup. */
hg_status_t hg_gemm_time_median(hg_rt_t *rt, hg_gemm_run_fn fn, void *ctx, int warmup, int iters,
                                float *ms) {
  hg_event_t e0, e1;
  HG_TRY(hg_rt_event_create(rt, &e0));
  hg_status_t s = hg_rt_event_create(rt, &e1);
  float *t = calloc((size_t)iters, sizeof *t);
  if (!t) s = hg_error(HG_ERR_NOMEM, "out of memory for timings");
  for (int i = 0; i < warmup && hg_is_ok(&s); i++) s = fn(ctx);
  int reps = 1;
  for (int i = -1; i < iters && hg_is_ok(&s); i++) {
    s = hg_rt_event_record(rt, e0, NULL);
    for (int j = 0; j < reps && hg_is_ok(&s); j++) s = fn(ctx);
    if (hg_is_ok(&s)) s = hg_rt_event_record(rt, e1, NULL);
    if (hg_is_ok(&s)) s = hg_rt_sync(rt, NULL);
    float one = 0;
    if (hg_is_ok(&s)) s = hg_rt_event_elapsed_ms(rt, e0, e1, &one);
    if (!hg_is_ok(&s)) break;
    if (i < 0) {
      /* the sizing call */
      reps = one > 0 ? (int)ceil(0.25 / one) : 64;
      reps = reps < 1 ? 1 : reps > 64 ? 64 : reps;
      continue;
    }
    t[i] = one / (float)reps;
  }
  if (hg_is_ok(&s)) {
    qsort(t, (size_t)iters, sizeof *t, cmp_float);
    *ms = t[iters / 2];
  }
  free(t);
  hg_rt_event_destroy(rt, e0);
  hg_rt_event_destroy(rt, e1);
  return s;
}

/* Operands smaller than the L2 cache, timed on one buffer, stay in it from call to call and
 * the run measures the cache (a decode step's 29 MB weight fits the H100's 50 MB L2; in a
 * model the other layers' weights evict it). The timed runs rotate among ROT_MAX sets of A
 * and B that together hold at least twice the L2: set 0 is the checked one, the others the
 * same sizes with other random values. */
enum { ROT_MAX = 8 };
typedef struct rot {
  int n, cur_h, cur_b;
  hg_devptr_t a[ROT_MAX], b[ROT_MAX];
} rot_t;

typedef struct run_ctx {
  hg_gemm_op_t *op;
  hg_blas_t *blas;
  hg_blas_gemm_args_t blas_args[ROT_MAX];
  bufs_t *b;
  rot_t rot;
} run_ctx_t;

/* The operand set a cursor is at, the cursor moved on to the next (round-robin). */
static int rot_next(const rot_t *r, int *cur) {
  const int i = *cur;
  *cur = (i + 1) % r->n;
  return i;
}

static hg_status_t run_hopgen(void *v) {
  run_ctx_t *c = v;
  bufs_t x = *c->b;
  const int i = rot_next(&c->rot, &c->rot.cur_h);
  x.a = c->rot.a[i];
  x.b = c->rot.b[i];
  return op_run(c->op, &x);
}
static hg_status_t run_blas(void *v) {
  run_ctx_t *c = v;
  return hg_blas_gemm(c->blas, &c->blas_args[rot_next(&c->rot, &c->rot.cur_b)]);
}

/* How many operand sets the timed runs rotate among (rot_t), and the extra sets' buffers. */
static hg_status_t rot_setup(hg_rt_t *rt, hg_gemm_kits_t *k, const hg_gemm_problem_t *p,
                             const bufs_t *b, uint64_t seed, rot_t *r) {
  memset(r, 0, sizeof *r);
  r->n = 1;
  r->a[0] = b->a;
  r->b[0] = b->b;
  const hg_device_info_t *dev = hg_rt_device(rt);
  const size_t l2 = dev && dev->l2_bytes > 0 ? (size_t)dev->l2_bytes : (size_t)64 << 20;
  const size_t one = b->a_bytes + b->b_bytes;
  if (one == 0 || one >= 2 * l2) return hg_ok();
  size_t n = (2 * l2 + one - 1) / one;
  if (n > ROT_MAX) n = ROT_MAX;
  for (size_t i = 1; i < n; i++) {
    HG_TRY(hg_rt_alloc(rt, b->a_bytes, &r->a[i]));
    r->n = (int)i + 1;
    HG_TRY(hg_rt_alloc(rt, b->b_bytes, &r->b[i]));
    HG_TRY(hg_gemm_kits_fill(rt, k, 0, p->a_type, r->a[i], b->a_bytes, seed * 3 + 1 + 17 * i));
    HG_TRY(hg_gemm_kits_fill(rt, k, 1, p->b_type, r->b[i], b->b_bytes, seed * 3 + 2 + 17 * i));
  }
  return hg_rt_sync(rt, NULL);
}

static void rot_free(hg_rt_t *rt, rot_t *r) {
  for (int i = 1; i < r->n; i++) {
    if (r->a[i]) hg_rt_free(rt, r->a[i]);
    if (r->b[i]) hg_rt_free(rt, r->b[i]);
  }
  r->n = 0;
}

typedef struct d2d_ctx {
  hg_rt_t *rt;
  hg_devptr_t dst, src;
  size_t bytes;
} d2d_ctx_t;

static hg_status_t run_d2d(void *v) {
  d2d_ctx_t *c = v;
  return hg_rt_copy_d2d(c->rt, c->dst, c->src, c->bytes, NULL);
}

/* The driver's device-to-device copy of 256 MiB (far past the L2), bytes read and written
 * over its median time: what "at memory bandwidth" is measured against. */
static hg_status_t d2d_gbs(hg_rt_t *rt, const hg_gemm_run_options_t *o, double *gbs) {
  d2d_ctx_t c = {.rt = rt, .bytes = (size_t)256 << 20};
  HG_TRY(hg_rt_alloc(rt, c.bytes, &c.src));
  hg_status_t s = hg_rt_alloc(rt, c.bytes, &c.dst);
  float ms = 0;
  if (hg_is_ok(&s)) s = hg_rt_memset8(rt, c.src, 0, c.bytes, NULL);
  if (hg_is_ok(&s)) s = hg_gemm_time_median(rt, run_d2d, &c, o->warmup, o->iters, &ms);
  if (hg_is_ok(&s)) *gbs = ms > 0 ? 2.0 * (double)c.bytes / (ms * 1e6) : 0;
  if (c.dst) hg_rt_free(rt, c.dst);
  hg_rt_free(rt, c.src);
  return s;
}

hg_gemm_run_options_t hg_gemm_run_options_default(void) {
  hg_gemm_run_options_t o = {.backend = HG_BACKEND_PTX, .warmup = 5, .iters = 30, .seed = 0};
  return o;
}

/* Allocate and fill the buffers of p with fresh random data (seed), scales 1.25 and 0.75
 * for fp8 so that they are really applied. */
static hg_status_t setup_buffers(hg_rt_t *rt, hg_gemm_kits_t *k, const hg_gemm_problem_t *p,
                                 bool need_ref, bool need_blas, uint64_t seed, float scale_d,
                                 bufs_t *b) {
  memset(b, 0, sizeof *b);
  const int ea = hg_dtype_bytes(p->a_type), eb = hg_dtype_bytes(p->b_type);
  const int ed = hg_dtype_bytes(p->d_type), ec = hg_dtype_bytes(p->c_type);
  b->a_bytes = span_bytes(p->a_k_major ? p->m : p->k, p->lda, p->batch, p->batch_stride_a, ea);
  b->b_bytes = span_bytes(p->b_k_major ? p->n : p->k, p->ldb, p->batch, p->batch_stride_b, eb);
  b->d_bytes = span_bytes(p->m, p->ldd, p->batch, p->batch_stride_d, ed);
  b->c_bytes = span_bytes(p->m, p->ldc, p->batch, p->batch_stride_c, ec);
  b->res_bytes = span_bytes(p->m, p->ldd, p->batch, p->batch_stride_d, ec);
  b->ref_bytes = (size_t)(p->m * p->n * p->batch) * 4;
  HG_TRY(hg_rt_alloc(rt, b->a_bytes, &b->a));
  HG_TRY(hg_rt_alloc(rt, b->b_bytes, &b->b));
  HG_TRY(hg_rt_alloc(rt, b->d_bytes, &b->d));
  if (p->beta != 0) HG_TRY(hg_rt_alloc(rt, b->c_bytes, &b->c));
  if (need_ref) HG_TRY(hg_rt_alloc(rt, b->ref_bytes, &b->dref));
  if (need_blas) HG_TRY(hg_rt_alloc(rt, b->d_bytes, &b->dblas));
  HG_TRY(hg_gemm_kits_fill(rt, k, 0, p->a_type, b->a, b->a_bytes, seed * 3 + 1));
  HG_TRY(hg_gemm_kits_fill(rt, k, 1, p->b_type, b->b, b->b_bytes, seed * 3 + 2));
  if (b->c) HG_TRY(hg_gemm_kits_fill(rt, k, 2, p->c_type, b->c, b->c_bytes, seed * 3 + 3));
  /* fp8 D: its output scale; the amax (poisoned: the run must zero it); the aux (poisoned) */
  if (is_fp8(p->d_type)) {
    b->scale_d_host = scale_d != 0 ? scale_d : 1.0f;
    HG_TRY(hg_rt_alloc(rt, 4, &b->scale_d));
    HG_TRY(hg_rt_upload(rt, b->scale_d, &b->scale_d_host, 4));
  }
  if (p->amax) {
    HG_TRY(hg_rt_alloc(rt, 4, &b->amax));
    HG_TRY(hg_rt_memset8(rt, b->amax, 0x7F, 4, NULL));
  }
  if (p->aux) {
    b->aux_bytes =
        span_bytes(p->m, p->ldaux, p->batch, p->batch_stride_aux, hg_dtype_bytes(p->aux_type));
    HG_TRY(hg_rt_alloc(rt, b->aux_bytes, &b->aux));
    HG_TRY(hg_rt_memset8(rt, b->aux, 0xFF, b->aux_bytes, NULL));
    if (need_blas) HG_TRY(hg_rt_alloc(rt, b->aux_bytes, &b->aux_blas));
  }
  if (hg_dtype_bits(p->a_type) == 8 && p->scale == HG_SCALE_TENSOR) {
    const float sa = 1.25f, sb = 0.75f;
    HG_TRY(hg_rt_alloc(rt, 4, &b->scale_a));
    HG_TRY(hg_rt_alloc(rt, 4, &b->scale_b));
    HG_TRY(hg_rt_upload(rt, b->scale_a, &sa, 4));
    HG_TRY(hg_rt_upload(rt, b->scale_b, &sb, 4));
  } else if (hg_dtype_bits(p->a_type) == 8) {
    /* row- or block-wise scales: random powers of two times 1, 1.25, 1.5 or 1.75 in [1/8, 8),
     * a different one for every row, column or block (the reference applies them in f32) */
    const int64_t kb = (p->k + 127) / 128, nb = (p->n + 127) / 128;
    const int64_t len[2] = {p->scale == HG_SCALE_ROW ? p->m : p->scale_lda * kb,
                            p->scale == HG_SCALE_ROW ? p->n : nb * p->scale_ldb};
    for (int i = 0; i < 2; i++) {
      float *h = malloc(sizeof(float) * (size_t)len[i]);
      if (!h) return hg_error(HG_ERR_NOMEM, "out of host memory for %" PRId64 " scales", len[i]);
      uint64_t x = seed * 11 + 7 + (uint64_t)i;
      for (int64_t j = 0; j < len[i]; j++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        h[j] = ldexpf(1.0f + (float)((x >> 40) % 4) / 4.0f, (int)((x >> 33) % 7) - 3);
      }
      hg_devptr_t *dp = i ? &b->scale_b : &b->scale_a;
      hg_status_t st = hg_rt_alloc(rt, sizeof(float) * (size_t)len[i], dp);
      if (hg_is_ok(&st)) st = hg_rt_upload(rt, *dp, h, sizeof(float) * (size_t)len[i]);
      free(h);
      HG_TRY(st);
    }
  }
  if (p->bias != HG_BIAS_NONE) {
    /* values k/8, k in -8..8: exact in bf16, f16 and f32 */
    const int64_t len = p->bias == HG_BIAS_N ? p->n : p->m;
    const int eb16 = hg_dtype_bytes(p->bias_type);
    b->bias_host = malloc(sizeof(float) * (size_t)len);
    uint8_t *raw = malloc((size_t)(len * eb16));
    if (!b->bias_host || !raw) {
      free(raw);
      return hg_error(HG_ERR_NOMEM, "out of host memory for a bias of %" PRId64, len);
    }
    uint64_t x = seed * 7 + 5;
    for (int64_t i = 0; i < len; i++) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      const float v = (float)((int)((x >> 33) % 17) - 8) / 8.0f;
      b->bias_host[i] = v;
      uint32_t bits;
      memcpy(&bits, &v, 4);
      if (p->bias_type == HG_F32) {
        memcpy(raw + 4 * i, &bits, 4);
      } else {
        uint16_t h = (uint16_t)(bits >> 16); /* bf16: exact for these values */
        if (p->bias_type == HG_F16) {
          /* f16 of k/8: sign, exponent rebiased 127 -> 15, the top 10 mantissa bits */
          const uint32_t e = (bits >> 23) & 0xFF;
          h = (uint16_t)(((bits >> 16) & 0x8000) |
                         (e ? ((e - 127 + 15) << 10) | ((bits >> 13) & 0x3FF) : 0));
        }
        memcpy(raw + 2 * i, &h, 2);
      }
    }
    hg_status_t s = hg_rt_alloc(rt, (size_t)(len * eb16), &b->bias);
    if (hg_is_ok(&s)) s = hg_rt_upload(rt, b->bias, raw, (size_t)(len * eb16));
    free(raw);
    HG_TRY(s);
  }
  /* scale vectors: f32 values 4/8 .. 12/8 */
  for (int i = 0; i < 2; i++) {
    if (!(i ? p->colscale : p->rowscale)) continue;
    const int64_t len = i ? p->n : p->m;
    float *h = malloc(sizeof(float) * (size_t)len);
    if (!h) return hg_error(HG_ERR_NOMEM, "out of host memory for a scale vector of %" PRId64, len);
    *(i ? &b->colscale_host : &b->rowscale_host) = h;
    uint64_t x = seed * 11 + 3 + (uint64_t)i;
    for (int64_t j = 0; j < len; j++) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      h[j] = (float)(4 + (int)((x >> 33) % 9)) / 8.0f;
    }
    hg_devptr_t *dp = i ? &b->colscale : &b->rowscale;
    HG_TRY(hg_rt_alloc(rt, sizeof(float) * (size_t)len, dp));
    HG_TRY(hg_rt_upload(rt, *dp, h, sizeof(float) * (size_t)len));
  }
  /* the residual: D's layout in C's type, random like C */
  if (p->residual) {
    HG_TRY(hg_rt_alloc(rt, b->res_bytes, &b->residual));
    HG_TRY(hg_gemm_kits_fill(rt, k, 2, p->c_type, b->residual, b->res_bytes, seed * 3 + 4));
  }
  return hg_rt_sync(rt, NULL);
}

static hg_blas_gemm_args_t blas_args_for(const hg_gemm_problem_t *p, const bufs_t *b,
                                         hg_devptr_t d) {
  hg_blas_gemm_args_t a = {.m = p->m,
                           .n = p->n,
                           .k = p->k,
                           .batch = p->batch,
                           .a_type = p->a_type,
                           .b_type = p->b_type,
                           .cd_type = p->d_type,
                           .a_k_major = p->a_k_major,
                           .b_k_major = p->b_k_major,
                           .lda = p->lda,
                           .ldb = p->ldb,
                           .ldc = p->ldc,
                           .ldd = p->ldd,
                           .batch_stride_a = p->batch_stride_a,
                           .batch_stride_b = p->batch_stride_b,
                           .batch_stride_c = p->batch_stride_c,
                           .batch_stride_d = p->batch_stride_d,
                           .alpha = p->alpha,
                           .beta = p->beta,
                           .a = b->a,
                           .b = b->b,
                           .c = b->c ? b->c : d,
                           .d = d,
                           .scale_a = b->scale_a,
                           .scale_b = b->scale_b,
                           /* the same accumulation as hopgen's */
                           .fast_accum =
                               hg_dtype_bits(p->a_type) == 8 && p->fp8_accum == HG_FP8_ACCUM_FAST,
                           .scale = hg_dtype_bits(p->a_type) == 8 ? p->scale : HG_SCALE_TENSOR,
                           .scale_lda = p->scale_lda,
                           .scale_ldb = p->scale_ldb};
  return a;
}

/* cuBLASLt's fused epilogue for the problem's chain, where it has one: a bias along N
 * alone, before ReLU, or before GELU (cuBLASLt's is the tanh form: it stands in for the erf
 * form too, named so in the report). NONE when the chain is not one of those. */
static hg_blas_epilogue_t blas_epilogue_for(const hg_gemm_problem_t *p) {
  if (p->bias != HG_BIAS_N || p->rowscale || p->colscale || p->residual || p->batch > 1)
    return HG_BLAS_EPI_NONE;
  /* an aux output: GELU_AUX_BIAS (its aux in D's type) */
  if (p->aux)
    return (p->act == HG_ACT_GELU || p->act == HG_ACT_GELU_TANH) && p->aux_type == p->d_type
               ? HG_BLAS_EPI_GELU_AUX_BIAS
               : HG_BLAS_EPI_NONE;
  switch (p->act) {
  case HG_ACT_NONE:
    return HG_BLAS_EPI_BIAS;
  case HG_ACT_RELU:
    return HG_BLAS_EPI_RELU_BIAS;
  case HG_ACT_GELU:
  case HG_ACT_GELU_TANH:
    return HG_BLAS_EPI_GELU_BIAS;
  default:
    return HG_BLAS_EPI_NONE;
  }
}

static const char *blas_epilogue_name(hg_blas_epilogue_t e) {
  static const char *const names[] = {"", "BIAS", "RELU_BIAS", "GELU_BIAS", "GELU_AUX_BIAS"};
  return names[e];
}

/* ---- the other path around operands TMA cannot address, for comparison */

typedef struct alt_ctx {
  hg_gemm_op_t *op;
  bufs_t *b;
} alt_ctx_t;

static hg_status_t run_alt(void *v) {
  alt_ctx_t *x = v;
  return op_run(x->op, x->b);
}

/* The run repacked such operands: time reading them in place (tma-wgmma names the mainloop,
 * so they go through cp.async); it read them in place: time the repack of every one of them
 * (AUTO's path where hg_gemm_repack_rule says repack). *ms 0: neither applies (every operand
 * TMA-addressable). */
static hg_status_t time_other_path(hg_rt_t *rt, const hg_gemm_problem_t *p,
                                   const hg_gemm_kernel_t *main, const hg_gemm_run_options_t *o,
                                   bufs_t *b, bool *repacked, float *ms) {
  *ms = 0;
  const bool repack_run = main->repack_a || main->repack_b;
  const bool in_place = !main->a_tma || !main->b_tma;
  if (!repack_run && !in_place) return hg_ok();
  /* In place, the heuristic's own configuration for that path: the repacked run's tile may
   * not leave room for the staging slots of the copies, and cp.async operands cannot be
   * multicast. */
  hg_gemm_config_t c;
  if (repack_run) HG_TRY(hg_gemm_config_choose(p, HG_MAINLOOP_TMA_WGMMA, NULL, NULL, &c));
  alt_ctx_t x = {.op = NULL, .b = b};
  HG_TRY(hg_gemm_op_create_repack(rt, p, repack_run ? &c : NULL, o->backend, !repack_run, &x.op));
  *repacked = !repack_run;
  hg_status_t s = hg_gemm_time_median(rt, run_alt, &x, o->warmup, o->iters, ms);
  hg_gemm_op_destroy(x.op);
  return s;
}

/* The unfused sequence: the plain GEMM (the heuristic's kernel for the problem without its
 * chain), then the chain's bias and activation as a separate elementwise kernel over D. */
typedef struct unfused_ctx {
  hg_rt_t *rt;
  hg_gemm_op_t *op;
  hg_function_t *fn;
  bufs_t *b;
  const hg_gemm_problem_t *p;
  const rot_t *rot; /* the operand sets the fused runs rotate among */
  int cur;
} unfused_ctx_t;

/* One run of the plain GEMM op (no chain) on b's operands, or rot's next set when rot has
 * several (as the fused runs it is set beside: the same share of the operands in L2), into
 * d. */
static hg_status_t run_plain_op(hg_gemm_op_t *op, const bufs_t *b, const rot_t *rot, int *cur,
                                hg_devptr_t d) {
  hg_gemm_args_t x = {
      .a = b->a, .b = b->b, .c = b->c, .d = d, .scale_a = b->scale_a, .scale_b = b->scale_b};
  if (rot && rot->n > 1) {
    const int i = rot_next(rot, cur);
    x.a = rot->a[i];
    x.b = rot->b[i];
  }
  return hg_gemm_op_run_args(op, &x, NULL);
}

static hg_status_t run_unfused(void *v) {
  unfused_ctx_t *u = v;
  HG_TRY(run_plain_op(u->op, u->b, u->rot, &u->cur, u->b->d));
  hg_devptr_t d = u->b->d, bias = u->b->bias;
  int64_t m = u->p->m, n = u->p->n, batch = u->p->batch, ldd = u->p->ldd,
          bsd = u->p->batch_stride_d;
  void *args[] = {&d, &bias, &m, &n, &batch, &ldd, &bsd};
  const int64_t per_cta = 256 * (int64_t)hg_gen_bias_act_chunk(u->p);
  hg_launch_t l = {.grid = {(uint32_t)m, (uint32_t)((n + per_cta - 1) / per_cta), (uint32_t)batch},
                   .block = {256, 1, 1}};
  return hg_rt_launch(u->rt, u->fn, &l, args);
}

/* Only chains of a bias and/or an activation have an unfused form here; *ms 0 otherwise.
 * Timed on rot's operand sets, then run once more on the first set for the check. */
static hg_status_t time_unfused(hg_rt_t *rt, const hg_gemm_problem_t *p,
                                const hg_gemm_run_options_t *o, bufs_t *b, const rot_t *rot,
                                float *ms) {
  *ms = 0;
  if ((p->bias == HG_BIAS_NONE && p->act == HG_ACT_NONE) || p->rowscale || p->colscale ||
      p->residual || is_fp8(p->d_type) || p->amax || p->aux)
    return hg_ok();
  hg_gemm_problem_t plain = *p;
  plain.bias = HG_BIAS_NONE;
  plain.act = HG_ACT_NONE;
  hg_kernel_t k;
  /* the fused kernel's GELU formula (its configuration's; the heuristic's is the default) */
  const hg_gelu_alg_t gelu = o->config ? (hg_gelu_alg_t)o->config->gelu : HG_GELU_POLY7;
  HG_TRY(hg_gen_bias_act(p, gelu, HG_BACKEND_PTX, &k));
  unfused_ctx_t u = {.rt = rt, .b = b, .p = p, .rot = rot};
  hg_module_t *mod = NULL;
  hg_status_t s = hg_kernels_load(rt, &k, &mod, &u.fn, NULL);
  if (hg_is_ok(&s)) s = hg_gemm_op_create(rt, &plain, NULL, o->backend, &u.op);
  if (hg_is_ok(&s)) s = hg_gemm_time_median(rt, run_unfused, &u, o->warmup, o->iters, ms);
  /* what was timed computes the chain: D after a run on the first set against the reference */
  u.rot = NULL;
  if (hg_is_ok(&s) && b->dref) s = run_unfused(&u);
  if (hg_is_ok(&s) && b->dref) {
    double rel = 0;
    int64_t bad = 0, first_bad = 0;
    s = hg_rt_sync(rt, NULL);
    if (hg_is_ok(&s)) s = compare(rt, p, b, b->d, b->dref, &rel, &bad, &first_bad, NULL, 0, NULL);
    if (hg_is_ok(&s) && !(rel <= tolerance(p->a_type, p->d_type)))
      s = hg_error(HG_ERR_MISMATCH,
                   "the unfused sequence (plain GEMM + bias/activation kernel) is off the "
                   "reference by %.3g",
                   rel);
  }
  if (u.op) hg_gemm_op_destroy(u.op);
  if (mod) hg_rt_module_unload(rt, mod);
  hg_kernel_free(&k);
  return s;
}

/* The plain GEMM of the same shape with bf16 D and no chain (the heuristic's kernel), the
 * baseline an epilogue chain, an fp8 D with amax, or an aux output, is measured over: timed in
 * the same rounds as hopgen's and cuBLASLt's runs (a clock change between separate blocks
 * moved the difference by up to 10% at 8192^3), on the same rotated operand sets (on one set
 * that stays in L2 the plain GEMM of a memory-bound shape ran up to 1.6x faster than the
 * rotated chain it was set against: bench/RESULTS.md). */
typedef struct plain_ctx {
  hg_gemm_op_t *op;
  bufs_t *b;
  hg_devptr_t d;
  const rot_t *rot;
  int cur;
} plain_ctx_t;

static hg_status_t run_plain(void *v) {
  plain_ctx_t *x = v;
  return run_plain_op(x->op, x->b, x->rot, &x->cur, x->d);
}

/* The plain GEMM's operation and D for p, when p has a chain or outputs to measure over it
 * (x->op stays NULL otherwise). */
static hg_status_t plain_open(hg_rt_t *rt, const hg_gemm_problem_t *p,
                              const hg_gemm_run_options_t *o, bufs_t *b, const rot_t *rot,
                              plain_ctx_t *x) {
  *x = (plain_ctx_t){.op = NULL, .b = b, .d = 0, .rot = rot};
  if (!is_fp8(p->d_type) && !p->amax && !p->aux && p->act == HG_ACT_NONE &&
      p->bias == HG_BIAS_NONE && !p->rowscale && !p->colscale && !p->residual)
    return hg_ok();
  hg_gemm_problem_t q = *p;
  q.d_type = HG_BF16;
  q.c_type = (hg_dtype_t)0;
  q.beta = 0;
  q.ldc = q.batch_stride_c = 0;
  q.act = HG_ACT_NONE;
  q.bias = HG_BIAS_NONE;
  q.rowscale = q.colscale = q.residual = q.amax = q.aux = false;
  HG_TRY(hg_gemm_problem_normalize(&q));
  HG_TRY(hg_rt_alloc(rt, span_bytes(q.m, q.ldd, q.batch, q.batch_stride_d, 2), &x->d));
  return hg_gemm_op_create(rt, &q, NULL, o->backend, &x->op);
}

static void plain_close(hg_rt_t *rt, plain_ctx_t *x) {
  if (x->op) hg_gemm_op_destroy(x->op);
  if (x->d) hg_rt_free(rt, x->d);
  x->op = NULL;
  x->d = 0;
}

static int cmp_double(const void *x, const void *y) {
  const double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* The host's share of a call (issue 10: launch cost): hg_gemm_op_run with the pointers of
 * the last run (tensor maps reused), each call timed alone, back to back, the median; the
 * same with a synchronise before each call; then a warm
 * hg_gemm_op_create of the same problem (a new operation: the kernel from the cache by
 * specification, the module from the cubin cache). */
static hg_status_t host_times(hg_rt_t *rt, const hg_gemm_problem_t *p,
                              const hg_gemm_run_options_t *o, run_ctx_t *ctx, hg_gemm_report_t *r) {
  enum { CALLS = 101 };
  double us[CALLS];
  for (int idle = 1; idle >= 0; idle--) {
    for (int i = 0; i < CALLS; i++) {
      if (idle) HG_TRY(hg_rt_sync(rt, NULL));
      const double t0 = hg_now_ms();
      HG_TRY(run_hopgen(ctx));
      us[i] = (hg_now_ms() - t0) * 1e3;
    }
    HG_TRY(hg_rt_sync(rt, NULL));
    qsort(us, CALLS, sizeof us[0], cmp_double);
    *(idle ? &r->run_host_idle_us : &r->run_host_us) = us[CALLS / 2];
  }
  hg_gemm_op_t *again = NULL;
  const double t0 = hg_now_ms();
  HG_TRY(hg_gemm_op_create(rt, p, o->config, o->backend, &again));
  r->warm_create_ms = hg_now_ms() - t0;
  hg_gemm_op_destroy(again);
  return hg_ok();
}

/* D's bytes into a host copy. */
static hg_status_t download_d(hg_rt_t *rt, hg_devptr_t d, size_t bytes, uint8_t **out) {
  *out = malloc(bytes ? bytes : 1);
  if (!*out) return hg_error(HG_ERR_NOMEM, "out of memory for a %zu-byte copy of D", bytes);
  return hg_rt_download(rt, *out, d, bytes);
}

/* Whether rows [0, m) of every batch of two host copies of D have the same bits. */
static bool same_rows(const hg_gemm_problem_t *p, int64_t m, const uint8_t *x, const uint8_t *y) {
  const size_t e = (size_t)hg_dtype_bytes(p->d_type);
  for (int bt = 0; bt < p->batch; bt++)
    for (int64_t i = 0; i < m; i++) {
      const size_t at = d_index(p, bt, i, 0) * e;
      if (memcmp(x + at, y + at, (size_t)p->n * e) != 0) return false;
    }
  return true;
}

/* The relative Frobenius difference of two host copies of D over rows [0, M) of every batch
 * (NaN when either has a NaN). */
static double rows_rel_diff(const hg_gemm_problem_t *p, const uint8_t *x, const uint8_t *y) {
  const size_t e = (size_t)hg_dtype_bytes(p->d_type);
  double num = 0, den = 0;
  for (int bt = 0; bt < p->batch; bt++)
    for (int64_t i = 0; i < p->m; i++)
      for (int64_t j = 0; j < p->n; j++) {
        const size_t at = d_index(p, bt, i, j) * e;
        const double u = hg_gemm_host_elem(p->d_type, x + at);
        const double v = hg_gemm_host_elem(p->d_type, y + at);
        num += (u - v) * (u - v);
        den += u * u;
      }
  return den > 0 ? sqrt(num / den) : num > 0 ? INFINITY : num;
}

/* Determinism: more launches into poisoned D, each compared bit for bit with the first's D
 * (split-K by atomic adds: within a relative difference, see hg_gemm_report_t).
 * Batch invariance: the same operands through an operation for fewer rows. */
static hg_status_t check_bits(hg_rt_t *rt, const hg_gemm_problem_t *p,
                              const hg_gemm_run_options_t *o, hg_gemm_op_t *op, const bufs_t *b,
                              hg_gemm_report_t *r) {
  uint8_t *first = NULL, *again = NULL;
  hg_status_t s = download_d(rt, b->d, b->d_bytes, &first);
  r->repeat_runs = o->repeat_runs > 0 ? o->repeat_runs : 2;
  r->repeat_identical = true;
  r->repeat_atomic = hg_gemm_op_kernel(op)->config.split_atomic != 0;
  r->repeat_rel_diff = 0;
  r->repeat_amax_equal = true;
  for (int i = 0; i < r->repeat_runs && hg_is_ok(&s); i++) {
    s = hg_rt_memset8(rt, b->d, 0xFF, b->d_bytes, NULL);
    /* the amax poisoned again: each launch writes it from a state the last one left zero */
    if (hg_is_ok(&s) && p->amax) s = hg_rt_memset8(rt, b->amax, 0x7F, 4, NULL);
    if (hg_is_ok(&s)) s = op_run(op, b);
    if (hg_is_ok(&s)) s = hg_rt_sync(rt, NULL);
    float amax = 0;
    if (hg_is_ok(&s) && p->amax) s = hg_rt_download(rt, &amax, b->amax, 4);
    free(again);
    again = NULL;
    if (hg_is_ok(&s)) s = download_d(rt, b->d, b->d_bytes, &again);
    /* against this launch's own D, not the first's amax: split-K by atomic adds sums in
     * arrival order, so its D, and with it the amax, may differ between launches */
    if (hg_is_ok(&s) && p->amax && r->repeat_amax_equal) {
      const float want = host_amax(p, again);
      if (!amax_same(amax, want)) {
        r->repeat_amax_equal = false;
        r->repeat_amax = amax;
        r->repeat_amax_ref = want;
      }
    }
    if (hg_is_ok(&s) && !same_rows(p, p->m, first, again)) r->repeat_identical = false;
    if (hg_is_ok(&s) && r->repeat_atomic) {
      const double d = rows_rel_diff(p, first, again);
      if (!(d <= r->repeat_rel_diff)) r->repeat_rel_diff = d; /* NaN sticks */
    }
  }
  /* every launch leaves the workspace's leading bytes zero (the amax's state, split-K's sums
   * and counters, stream-K's flags): the next one starts from them */
  const size_t zb = hg_gemm_op_workspace_zero_bytes(op);
  r->state_zero = true;
  if (hg_is_ok(&s) && zb && b->ws_op == op) {
    uint8_t *z = malloc(zb);
    if (!z) s = hg_error(HG_ERR_NOMEM, "out of memory reading back a workspace");
    if (hg_is_ok(&s)) s = hg_rt_download(rt, z, b->ws, zb);
    for (size_t i = 0; hg_is_ok(&s) && i < zb; i++)
      if (z[i]) {
        r->state_zero = false;
        r->state_first_nonzero = (int64_t)i;
        break;
      }
    r->state_bytes = (int64_t)zb;
    free(z);
  }
  if (hg_is_ok(&s) && p->batch_invariant && p->m > 1) {
    /* the first rows again, as a problem of fewer rows: M-major A keeps its leading
     * dimension, so its first rows are the same memory either way */
    hg_gemm_problem_t q = *p;
    q.m = p->m > 8 ? 7 : p->m - 1;
    r->batch_m = q.m;
    hg_gemm_op_t *op2 = NULL;
    s = hg_gemm_op_create(rt, &q, o->config, o->backend, &op2);
    if (hg_is_ok(&s)) s = hg_rt_memset8(rt, b->d, 0xFF, b->d_bytes, NULL);
    if (hg_is_ok(&s)) s = op_run(op2, b);
    if (hg_is_ok(&s)) s = hg_rt_sync(rt, NULL);
    free(again);
    again = NULL;
    if (hg_is_ok(&s)) s = download_d(rt, b->d, b->d_bytes, &again);
    if (hg_is_ok(&s)) r->batch_identical = same_rows(p, q.m, first, again);
    if (op2) hg_gemm_op_destroy(op2);
  }
  free(first);
  free(again);
  return s;
}

hg_status_t hg_gemm_run(hg_rt_t *rt, const hg_gemm_problem_t *p_in, const hg_gemm_run_options_t *o,
                        hg_gemm_report_t *r) {
  memset(r, 0, sizeof *r);
  r->rel_err = r->rel_err_blas = NAN;
  hg_gemm_problem_t p = *p_in;
  /* Block scales of B as cuBLASLt's BLK128x128_32F takes them: a row stride of ceil(K / 128)
   * rounded up to 4 (cuBLAS "Scaling factors layouts"); hopgen reads any scale_ldb. */
  if (p.scale == HG_SCALE_BLOCK && p.scale_ldb == 0) p.scale_ldb = ((p.k + 127) / 128 + 3) / 4 * 4;
  HG_TRY(hg_gemm_problem_normalize(&p));
  const uint64_t seed = o->seed ? o->seed : (uint64_t)time(NULL) ^ (uint64_t)(hg_now_ms() * 1000);
  r->seed = seed;
  hg_gemm_kits_t kits;
  memset(&kits, 0, sizeof kits);
  bufs_t b;
  hg_blas_t *blas = NULL;
  hg_gemm_op_t *op = NULL;
  hg_status_t s = hg_ok();
  if (o->check || o->bench) {
    hg_status_t bs = hg_blas_open(rt, &blas);
    if (!hg_is_ok(&bs)) {
      blas = NULL;
      snprintf(r->note, sizeof r->note, "cuBLASLt unavailable: %.200s", bs.msg);
    }
  }
  /* cuBLASLt computes D and C of one type, bf16/f16/f32, no amax or fp8 D here, and an aux
   * output only as GELU_AUX_BIAS's: other problems are checked against the reference alone */
  const bool blas_like = !is_fp8(p.d_type) && p.c_type == p.d_type && !p.amax &&
                         (!p.aux || blas_epilogue_for(&p) == HG_BLAS_EPI_GELU_AUX_BIAS);
  if (blas && !blas_like) {
    hg_blas_close(blas);
    blas = NULL;
    snprintf(r->note, sizeof r->note, "cuBLASLt not run: it has no %s here",
             is_fp8(p.d_type)       ? "fp8 D"
             : p.c_type != p.d_type ? "C of another type than D"
             : p.amax               ? "amax"
                      : "aux output but GELU_AUX_BIAS's (bias, GELU, aux of D's type)");
  }
  s = setup_buffers(rt, &kits, &p, o->check, blas != NULL, seed, o->scale_d, &b);

  const double t0 = hg_now_ms();
  if (hg_is_ok(&s)) s = hg_gemm_op_create(rt, &p, o->config, o->backend, &op);
  if (hg_is_ok(&s)) {
    const hg_gemm_kernel_t *gk = hg_gemm_op_kernel(op);
    r->config = gk->config;
    r->tma_store = gk->tma_store;
    snprintf(r->store, sizeof r->store, "%s", hg_gemm_store_name(gk));
    /* the caller's A and B (the kernel's B and A when it swapped them) */
    const bool sw = gk->swapped;
    r->cp_async_a = !(sw ? gk->b_tma : gk->a_tma);
    r->cp_async_b = !(sw ? gk->a_tma : gk->b_tma);
    r->repacked_a = sw ? gk->repack_b : gk->repack_a;
    r->repacked_b = sw ? gk->repack_a : gk->repack_b;
    r->a_vec = sw ? gk->b_vec : gk->a_vec;
    r->b_vec = sw ? gk->a_vec : gk->b_vec;
    r->gen_ms = gk->k.gen_ms;
    r->jit = *hg_gemm_op_jit(op);
    r->grid = hg_gemm_op_grid(op);
    snprintf(r->kernel, sizeof r->kernel, "%s", gk->k.name);
    b.ws_bytes = hg_gemm_op_workspace_bytes(op);
    if (b.ws_bytes) {
      s = hg_rt_alloc(rt, b.ws_bytes, &b.ws);
      if (hg_is_ok(&s)) s = hg_rt_memset8(rt, b.ws, 0, b.ws_bytes, NULL);
      b.ws_op = op;
    }
    /* First launch: poisoned D (0xFF bytes are NaN in bf16, f16 and f32). */
    if (hg_is_ok(&s)) s = hg_rt_memset8(rt, b.d, 0xFF, b.d_bytes, NULL);
    if (hg_is_ok(&s)) s = op_run(op, &b);
    if (hg_is_ok(&s)) s = hg_rt_sync(rt, NULL);
    r->first_run_ms = hg_now_ms() - t0;
  }
  /* per-tensor fp8 scales fold into alpha; row- and block-wise ones the reference applies */
  const float alpha_eff =
      p.alpha * (hg_dtype_bits(p.a_type) == 8 && p.scale == HG_SCALE_TENSOR ? 1.25f * 0.75f : 1.0f);
  if (hg_is_ok(&s) && o->check) {
    s = run_reference(rt, &kits, &p, &b, alpha_eff);
    if (hg_is_ok(&s)) s = hg_rt_sync(rt, NULL);
    extra_check_t ex;
    if (hg_is_ok(&s))
      s = compare(rt, &p, &b, b.d, b.dref, &r->rel_err, &r->bad, &r->first_bad, r->where,
                  sizeof r->where, &ex);
    r->tolerance = tolerance(p.a_type, p.d_type);
    r->checked = hg_is_ok(&s);
    if (hg_is_ok(&s)) {
      r->d_saturated = ex.saturated;
      r->rel_err_aux = ex.rel_aux;
      r->amax_checked = ex.amax_checked;
      r->amax_equal = ex.amax_equal;
      r->amax = ex.amax;
      r->amax_ref = ex.amax_ref;
    }
    const bool fused =
        p.act != HG_ACT_NONE || p.bias != HG_BIAS_NONE || p.rowscale || p.colscale || p.residual;
    /* cuBLASLt's fused epilogue computes the same chain for a bias with no activation, ReLU
     * or the tanh-form GELU: then its D is compared with the chain's reference too */
    const hg_blas_epilogue_t be = blas_epilogue_for(&p);
    const bool same = !fused || (be != HG_BLAS_EPI_NONE && p.act != HG_ACT_GELU);
    if (hg_is_ok(&s) && blas && !same)
      snprintf(r->note, sizeof r->note,
               "cuBLASLt not compared: it has no fused epilogue for this chain");
    if (hg_is_ok(&s) && blas && same) {
      /* cuBLASLt's own distance to the reference, for scale. It declines some problems
       * (no fp8 kernel for tiny or odd shapes, no bf16 -> f16): that is a note, not a
       * failure of hopgen's check. */
      hg_blas_gemm_args_t ba = blas_args_for(&p, &b, b.dblas);
      if (fused) {
        ba.epilogue = be;
        ba.bias = b.bias;
        ba.bias_type = p.bias_type;
        ba.aux = b.aux_blas;
        ba.ld_aux = p.ldaux;
      }
      s = hg_rt_memset8(rt, b.dblas, 0xFF, b.d_bytes, NULL);
      hg_status_t bs = hg_ok();
      if (hg_is_ok(&s)) bs = hg_blas_gemm(blas, &ba);
      if (hg_is_ok(&s) && hg_is_ok(&bs)) s = hg_rt_sync(rt, NULL);
      int64_t bad2, fb2;
      if (hg_is_ok(&s) && hg_is_ok(&bs))
        s = compare(rt, &p, fused ? &b : NULL, b.dblas, b.dref, &r->rel_err_blas, &bad2, &fb2, NULL,
                    0, NULL);
      if (!hg_is_ok(&bs)) snprintf(r->note, sizeof r->note, "cuBLASLt declined: %.200s", bs.msg);
    }
  }
  if (hg_is_ok(&s) && o->check) s = check_bits(rt, &p, o, op, &b, r);
  if (hg_is_ok(&s) && o->bench) {
    run_ctx_t ctx = {.op = op, .blas = blas, .b = &b};
    s = rot_setup(rt, &kits, &p, &b, seed, &ctx.rot);
    const double flops = 2.0 * (double)p.m * (double)p.n * (double)p.k * p.batch;
    /* cuBLASLt has no algorithm for some problems (fp8 with odd K, say): that is a note and
     * no ratio, not a failure of hopgen's run. */
    bool blas_ok = blas != NULL && hg_is_ok(&s);
    if (blas_ok) {
      /* the same fused epilogue where cuBLASLt has it, so the ratio compares like with like */
      const hg_blas_epilogue_t be = blas_epilogue_for(&p);
      for (int i = 0; i < ctx.rot.n; i++) {
        bufs_t x = b;
        x.a = ctx.rot.a[i];
        x.b = ctx.rot.b[i];
        hg_blas_gemm_args_t *ba = &ctx.blas_args[i];
        *ba = blas_args_for(&p, &x, b.dblas ? b.dblas : b.d);
        if (be != HG_BLAS_EPI_NONE) {
          ba->epilogue = be;
          ba->bias = b.bias;
          ba->bias_type = p.bias_type;
          ba->aux = b.aux_blas;
          ba->ld_aux = p.ldaux;
        }
      }
      if (be != HG_BLAS_EPI_NONE)
        snprintf(r->blas_epilogue, sizeof r->blas_epilogue, "%s%s", blas_epilogue_name(be),
                 p.act == HG_ACT_GELU ? " (tanh form)" : "");
      hg_status_t bs = hg_blas_gemm(blas, &ctx.blas_args[0]);
      if (hg_is_ok(&bs)) bs = hg_rt_sync(rt, NULL);
      if (!hg_is_ok(&bs)) {
        blas_ok = false;
        snprintf(r->note, sizeof r->note, "cuBLASLt declined: %.200s", bs.msg);
      }
    }
    /* Interleave them: a block of hopgen, a block of cuBLASLt (and one of the plain GEMM),
     * twice, and keep the best median of each, so that a clock change during the run hits
     * all alike. */
    plain_ctx_t plain = {0};
    if (hg_is_ok(&s)) s = plain_open(rt, &p, o, &b, &ctx.rot, &plain);
    for (int round = 0; round < 2 && hg_is_ok(&s); round++) {
      float ms;
      s = hg_gemm_time_median(rt, run_hopgen, &ctx, o->warmup, o->iters, &ms);
      if (hg_is_ok(&s) && (r->ms == 0 || ms < r->ms)) r->ms = ms;
      if (hg_is_ok(&s) && blas_ok) {
        s = hg_gemm_time_median(rt, run_blas, &ctx, o->warmup, o->iters, &ms);
        if (hg_is_ok(&s) && (r->blas_ms == 0 || ms < r->blas_ms)) r->blas_ms = ms;
      }
      if (hg_is_ok(&s) && plain.op) {
        s = hg_gemm_time_median(rt, run_plain, &plain, o->warmup, o->iters, &ms);
        if (hg_is_ok(&s) && (r->plain_ms == 0 || ms < r->plain_ms)) r->plain_ms = ms;
      }
    }
    plain_close(rt, &plain);
    if (hg_is_ok(&s) && r->plain_ms > 0) r->over_plain = r->ms / r->plain_ms - 1;
    if (hg_is_ok(&s)) {
      float ums = 0;
      s = time_unfused(rt, &p, o, &b, &ctx.rot, &ums);
      r->unfused_ms = ums;
    }
    r->rotated = ctx.rot.n;
    rot_free(rt, &ctx.rot);
    ctx.rot.n = 1; /* the host times and the paths below run on set 0 */
    ctx.rot.cur_h = ctx.rot.cur_b = 0;
    if (hg_is_ok(&s)) s = host_times(rt, &p, o, &ctx, r);
    if (hg_is_ok(&s)) s = d2d_gbs(rt, o, &r->d2d_gbs);
    if (hg_is_ok(&s) && o->compare_repack) {
      float ms = 0;
      bool repacked = false;
      s = time_other_path(rt, &p, hg_gemm_op_kernel(op), o, &b, &repacked, &ms);
      if (hg_is_ok(&s)) *(repacked ? &r->repack_ms : &r->cpasync_ms) = ms;
    }
    if (hg_is_ok(&s)) {
      r->tflops = flops / (r->ms * 1e-3) / 1e12;
      const double bytes =
          (double)(b.a_bytes + b.b_bytes + b.d_bytes + (p.beta != 0 ? b.c_bytes : 0));
      r->gbs = bytes / (r->ms * 1e6);
      if (r->d2d_gbs > 0) r->bw_frac = r->gbs / r->d2d_gbs;
      if (blas && r->blas_ms > 0) {
        r->blas_tflops = flops / (r->blas_ms * 1e-3) / 1e12;
        r->ratio = r->blas_ms / r->ms;
      }
      r->benched = true;
    }
  }
  if (op) hg_gemm_op_destroy(op);
  if (blas) hg_blas_close(blas);
  bufs_free(rt, &b);
  hg_gemm_kits_free(rt, &kits);
  if (hg_is_ok(&s) && o->check && !(r->rel_err <= r->tolerance))
    return hg_error(HG_ERR_MISMATCH,
                    "GEMM %" PRId64 "x%" PRId64 "x%" PRId64 " (%s): relative error %.3g against "
                    "the f32 reference exceeds %.3g%s (seed %" PRIu64 "); %s",
                    p.m, p.n, p.k, r->kernel, r->rel_err, r->tolerance,
                    r->bad ? ", with non-finite (unwritten) elements" : "", seed, r->where);
  if (hg_is_ok(&s) && o->check && p.aux && !(r->rel_err_aux <= tolerance(p.a_type, p.aux_type)))
    return hg_error(HG_ERR_MISMATCH,
                    "GEMM %" PRId64 "x%" PRId64 "x%" PRId64 " (%s): the aux output's relative "
                    "error %.3g against the reference's pre-activation values exceeds %.3g (seed "
                    "%" PRIu64 ")",
                    p.m, p.n, p.k, r->kernel, r->rel_err_aux, tolerance(p.a_type, p.aux_type),
                    seed);
  if (hg_is_ok(&s) && o->check && p.amax && !r->amax_equal)
    return hg_error(HG_ERR_MISMATCH,
                    "GEMM %" PRId64 "x%" PRId64 "x%" PRId64 " (%s): amax %.9g (0x%08" PRIx32
                    ") differs from the host's max |D| over the stored D, %.9g (0x%08" PRIx32
                    ")%s (seed %" PRIu64 ")",
                    p.m, p.n, p.k, r->kernel, (double)r->amax, f32_bits(r->amax),
                    (double)r->amax_ref, f32_bits(r->amax_ref),
                    r->amax_checked ? "" : "; it was not read back", seed);
  if (hg_is_ok(&s) && o->check && p.amax && !r->repeat_amax_equal)
    return hg_error(HG_ERR_MISMATCH,
                    "GEMM %" PRId64 "x%" PRId64 "x%" PRId64 " (%s): a later launch's amax %.9g "
                    "(0x%08" PRIx32 ") differs from the host's max |D| over that launch's D, "
                    "%.9g (0x%08" PRIx32 "): the amax's state was not left zero by the launch "
                    "before (seed %" PRIu64 ")",
                    p.m, p.n, p.k, r->kernel, (double)r->repeat_amax, f32_bits(r->repeat_amax),
                    (double)r->repeat_amax_ref, f32_bits(r->repeat_amax_ref), seed);
  if (hg_is_ok(&s) && o->check && !r->state_zero)
    return hg_error(HG_ERR_MISMATCH,
                    "GEMM %" PRId64 "x%" PRId64 "x%" PRId64 " (%s): after its launches the "
                    "workspace's first %" PRId64 " bytes, which must be left zero for the next "
                    "launch (the amax's state, split-K's sums and counters, stream-K's flags), "
                    "hold a nonzero byte at %" PRId64 " (seed %" PRIu64 ")",
                    p.m, p.n, p.k, r->kernel, r->state_bytes, r->state_first_nonzero, seed);
  if (hg_is_ok(&s) && o->check && r->repeat_atomic && !(r->repeat_rel_diff <= r->tolerance))
    return hg_error(HG_ERR_MISMATCH,
                    "GEMM %" PRId64 "x%" PRId64 "x%" PRId64 " (%s): split-K by atomic adds, and "
                    "a later launch's D differs from the first's by %.3g (relative), more than "
                    "%.3g: the workspace was not left zeroed (seed %" PRIu64 ")",
                    p.m, p.n, p.k, r->kernel, r->repeat_rel_diff, r->tolerance, seed);
  if (hg_is_ok(&s) && o->check && !r->repeat_atomic && !r->repeat_identical)
    return hg_error(HG_ERR_MISMATCH,
                    "GEMM %" PRId64 "x%" PRId64 "x%" PRId64 " (%s): D differs bit for bit between "
                    "launches on the same data (seed %" PRIu64 ")",
                    p.m, p.n, p.k, r->kernel, seed);
  if (hg_is_ok(&s) && o->check && p.batch_invariant && p.m > 1 && !r->batch_identical)
    return hg_error(HG_ERR_MISMATCH,
                    "GEMM %" PRId64 "x%" PRId64 "x%" PRId64 " (%s): batch-invariant, yet its first "
                    "%" PRId64 " rows computed with M = %" PRId64
                    " differ bit for bit (seed %" PRIu64 ")",
                    p.m, p.n, p.k, r->kernel, r->batch_m, r->batch_m, seed);
  return s;
}
