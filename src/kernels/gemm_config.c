/* GEMM problems and configurations: normalisation, validation with sentences, the
 * heuristic that picks a configuration from the problem and the device, and the text form
 * of a configuration ("128x256x64,c2x1,s4,coop,m8,e64") used by the CLI and the tuner. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hopgen/kernels.h"
#include "kernels/gemm_internal.h"

/* The most dynamic shared memory one CTA may use on sm_90 (227 KB). */
#define SMEM_LIMIT 232448u
/* Worst-case alignment slack the builder adds for the 1024-byte aligned base. */
#define SMEM_SLACK 1024u
/* Accumulators a consumer thread may hold in two sets (fp8's promotion) without spilling
 * under setmaxnreg's 232 registers: ptxas -v over the tiles (tests/kernels/test_gemm.c). */
#define PROMOTE_ACC_MAX 192
/* fp8 row-wise scales add two staged vectors to the epilogue: the MLIR backend's code spilled
 * 56 B at 2 x 96 (128x192 coop), none at 2 x 88 (128x176) */
#define PROMOTE_ACC_MAX_ROW 176

static bool is16(hg_dtype_t t) {
  return t == HG_BF16 || t == HG_F16;
}
static bool is8(hg_dtype_t t) {
  return t == HG_E4M3 || t == HG_E5M2;
}

static const char *const act_names[HG_ACT_COUNT] = {"none", "relu",    "gelu", "gelu_tanh",
                                                    "silu", "sigmoid", "clamp"};

const char *hg_gemm_act_name(hg_gemm_act_t a) {
  return (int)a >= 0 && a < HG_ACT_COUNT ? act_names[a] : "?";
}

hg_status_t hg_gemm_act_parse(const char *text, hg_gemm_act_t *act, float *lo, float *hi) {
  *lo = *hi = 0;
  for (int a = 0; a < HG_ACT_COUNT; a++)
    if (a != HG_ACT_CLAMP && !strcmp(text, act_names[a])) {
      *act = (hg_gemm_act_t)a;
      return hg_ok();
    }
  if (!strncmp(text, "clamp:", 6)) {
    char *end;
    const double l = strtod(text + 6, &end);
    if (*end == ':') {
      const char *h = end + 1;
      const double u = strtod(h, &end);
      if (end != h && *end == '\0' && isfinite(l) && isfinite(u) && l <= u && fabs(l) <= 3.4e38 &&
          fabs(u) <= 3.4e38) {
        *act = HG_ACT_CLAMP;
        *lo = (float)l;
        *hi = (float)u;
        return hg_ok();
      }
    }
    return hg_error(HG_ERR_PARSE,
                    "activation '%s': clamp takes clamp:LO:HI with finite LO <= HI (e.g. "
                    "clamp:-1:1)",
                    text);
  }
  return hg_error(HG_ERR_PARSE,
                  "activation '%s' is not one of none, relu, gelu, gelu_tanh, silu, sigmoid, "
                  "clamp:LO:HI",
                  text);
}

hg_status_t hg_gemm_epilogue_parse(const char *text, hg_gemm_problem_t *p) {
  char buf[128];
  if (strlen(text) >= sizeof buf)
    return hg_error(HG_ERR_PARSE, "epilogue '%.40s...' is too long", text);
  strcpy(buf, text);
  hg_gemm_bias_t bias = HG_BIAS_NONE;
  hg_gemm_act_t act = HG_ACT_NONE;
  float lo = 0, hi = 0;
  bool rows = false, cols = false, res = false;
  /* the steps' ranks in the chain: each step must rank above the one before it */
  int last = -1;
  for (char *tok = buf, *next; tok; tok = next) {
    next = strchr(tok, ',');
    if (next) *next++ = '\0';
    const int rank = !strcmp(tok, "rowscale")                         ? 0
                     : !strcmp(tok, "colscale")                       ? 1
                     : !strcmp(tok, "bias") || !strcmp(tok, "bias_m") ? 2
                     : !strcmp(tok, "residual")                       ? 4
                                                                      : 3;
    if (rank <= last)
      return hg_error(HG_ERR_PARSE,
                      "epilogue '%s': '%s' out of place - the chain runs rowscale, colscale, "
                      "bias or bias_m, one activation, residual, each at most once",
                      text, tok);
    last = rank;
    if (rank == 0 || rank == 1) {
      *(rank ? &cols : &rows) = true;
      continue;
    }
    if (rank == 4) {
      res = true;
      continue;
    }
    if (rank == 2) {
      bias = tok[4] ? HG_BIAS_M : HG_BIAS_N;
      continue;
    }
    hg_status_t s = hg_gemm_act_parse(tok, &act, &lo, &hi);
    if (!hg_is_ok(&s))
      return hg_status_wrap(s, "epilogue '%s' (steps: bias, bias_m, then an activation): ", text);
    if (act == HG_ACT_NONE && (bias != HG_BIAS_NONE || next || rows || cols))
      return hg_error(HG_ERR_PARSE, "epilogue '%s': 'none' stands alone", text);
  }
  p->rowscale = rows;
  p->colscale = cols;
  p->residual = res;
  p->bias = bias;
  p->act = act;
  p->act_lo = lo;
  p->act_hi = hi;
  return hg_ok();
}

double hg_gemm_act_ref(hg_gemm_act_t a, double x, double lo, double hi) {
  switch (a) {
  case HG_ACT_RELU:
    return x > 0 ? x : 0;
  case HG_ACT_GELU:
    return 0.5 * x * (1 + erf(x / sqrt(2.0)));
  case HG_ACT_GELU_TANH:
    return 0.5 * x * (1 + tanh(0.79788456080286536 * (x + 0.044715 * x * x * x)));
  case HG_ACT_SILU:
    return x / (1 + exp(-x));
  case HG_ACT_SIGMOID:
    return 1 / (1 + exp(-x));
  case HG_ACT_CLAMP:
    return x < lo ? lo : x > hi ? hi : x;
  default:
    return x;
  }
}

/* What a grouped problem takes (kernels.h, hg_gemm_group_t): the plain GEMM with TMA-addressable
 * K-major A, no C and no epilogue vectors; the rest is refused with a sentence. */
static hg_status_t group_check(const hg_gemm_problem_t *p) {
  if ((int)p->group < HG_GROUP_NONE || p->group > HG_GROUP_MASKED)
    return hg_error(HG_ERR_INVALID, "group layout %d is not known (hg_gemm_group_t)",
                    (int)p->group);
  if (p->group == HG_GROUP_NONE) return hg_ok();
  const char *what = p->group == HG_GROUP_CONTIGUOUS ? "contiguous" : "masked";
  /* row-wise scales are the epilogue's vectors (rowscale, colscale below); block-wise ones
   * are read per k-block from each group's tables (kernels.h, HG_GROUPED_SCALE_BLOCK) */
  if (p->scale == HG_SCALE_ROW)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "a %s grouped GEMM takes row-wise fp8 scales as its rowscale and colscale "
                    "vectors (hg_grouped_gemm_problem, HG_GROUPED_SCALE_ROW), not scale = row",
                    what);
  if (p->scale == HG_SCALE_BLOCK && (p->rowscale || p->colscale))
    return hg_error(HG_ERR_UNSUPPORTED,
                    "a %s grouped GEMM with block-wise fp8 scales takes no row or column scale "
                    "vectors besides",
                    what);
  if (p->batch > HG_GROUPED_MAX_GROUPS)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "%d groups: a grouped GEMM takes at most %d (its per-group tables live in "
                    "shared memory)",
                    p->batch, HG_GROUPED_MAX_GROUPS);
  if (!p->a_k_major)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "a %s grouped GEMM takes A K-major (each token's row contiguous)", what);
  if (p->beta != 0 || p->bias != HG_BIAS_NONE || p->residual || p->act != HG_ACT_NONE)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "a grouped GEMM computes D = alpha * A x B (with fp8 scales): beta * C, bias, "
                    "activations and residuals are not supported yet");
  if ((p->rowscale || p->colscale) && !(p->rowscale && p->colscale))
    return hg_error(HG_ERR_UNSUPPORTED,
                    "a grouped GEMM scales row-wise with both vectors (a scale per row of A and "
                    "one per column of each group's B) or neither");
  if (p->batch_invariant)
    return hg_error(HG_ERR_UNSUPPORTED, "a grouped GEMM is not offered batch-invariant");
  const int e = hg_dtype_bytes(p->a_type), eb = hg_dtype_bytes(p->b_type);
  if ((p->lda * e) % 16 || (p->ldb * eb) % 16 || (p->batch_stride_b * eb) % 16 ||
      (p->group == HG_GROUP_MASKED && (p->batch_stride_a * e) % 16) ||
      (p->a_align && p->a_align < 16) || (p->b_align && p->b_align < 16))
    return hg_error(HG_ERR_UNSUPPORTED,
                    "a grouped GEMM reads A and B with TMA: their leading dimensions, batch "
                    "strides and bases must be multiples of 16 bytes (lda = %" PRId64
                    ", ldb = %" PRId64 " elements of %d and %d bytes)",
                    p->lda, p->ldb, e, eb);
  return hg_ok();
}

const char *hg_gemm_fp8_accum_name(hg_gemm_fp8_accum_t a) {
  return a == HG_FP8_ACCUM_ACCURATE ? "accurate" : a == HG_FP8_ACCUM_FAST ? "fast" : "?";
}

hg_status_t hg_gemm_fp8_accum_parse(const char *text, hg_gemm_fp8_accum_t *out) {
  if (!strcmp(text, "accurate"))
    *out = HG_FP8_ACCUM_ACCURATE;
  else if (!strcmp(text, "fast"))
    *out = HG_FP8_ACCUM_FAST;
  else
    return hg_error(HG_ERR_PARSE, "fp8 accumulation '%s' is not one of accurate, fast", text);
  return hg_ok();
}

static const char *const scale_names[] = {"tensor", "row", "block"};

const char *hg_gemm_scale_name(hg_gemm_scale_t s) {
  return (int)s >= 0 && s <= HG_SCALE_BLOCK ? scale_names[s] : "?";
}

hg_status_t hg_gemm_scale_parse(const char *text, hg_gemm_scale_t *out) {
  for (int i = 0; i <= HG_SCALE_BLOCK; i++)
    if (!strcmp(text, scale_names[i])) {
      *out = (hg_gemm_scale_t)i;
      return hg_ok();
    }
  return hg_error(HG_ERR_PARSE, "fp8 scaling '%s' is not one of tensor, row, block", text);
}

/* The most accumulators a consumer thread may hold with two sets. */
static int promote_acc_max(const hg_gemm_problem_t *p) {
  return p->scale == HG_SCALE_ROW ? PROMOTE_ACC_MAX_ROW : PROMOTE_ACC_MAX;
}

int hg_gemm_promote(const hg_gemm_problem_t *p) {
  return is8(p->a_type) && p->fp8_accum == HG_FP8_ACCUM_ACCURATE
             ? (p->fp8_promote > 0 ? p->fp8_promote : HG_FP8_PROMOTE_DEFAULT)
             : 0;
}

int hg_gemm_acc_sets(const hg_gemm_problem_t *p, const hg_gemm_config_t *c) {
  return !hg_gemm_promote(p) ? 1 : c->promote_overlap & HG_PROMOTE_DOUBLE ? 3 : 2;
}

/* Accumulators one consumer thread holds: its share of the tile (a warpgroup's 128 threads
 * per consumer region), once per set. */
static int acc_per_thread(const hg_gemm_problem_t *p, const hg_gemm_config_t *c) {
  const int consumers = c->schedule == HG_SCHED_PINGPONG ? 1 : (c->tile_m >= 128 ? 2 : 1);
  const int64_t one = (int64_t)c->tile_m * c->tile_n / (128 * consumers);
  return (int)(hg_gemm_acc_sets(p, c) * one);
}

/* Two consumer warpgroups share each tile (cooperative, 128 rows or more). */
static bool two_consumers(const hg_gemm_config_t *c) {
  return c->schedule != HG_SCHED_PINGPONG && c->tile_m >= 128;
}

hg_status_t hg_gemm_problem_normalize(hg_gemm_problem_t *p) {
  if (p->m < 1 || p->n < 1 || p->k < 1)
    return hg_error(HG_ERR_INVALID,
                    "GEMM sizes must be at least 1: M = %" PRId64 ", N = %" PRId64 ", K = %" PRId64,
                    p->m, p->n, p->k);
  if (p->m > INT32_MAX || p->n > INT32_MAX || p->k > INT32_MAX)
    return hg_error(HG_ERR_INVALID,
                    "M, N and K must fit int32 (TMA coordinates are signed 32-bit): M = %" PRId64
                    ", N = %" PRId64 ", K = %" PRId64,
                    p->m, p->n, p->k);
  if (p->batch == 0) p->batch = 1;
  if (p->batch < 1) return hg_error(HG_ERR_INVALID, "batch = %d is not positive", p->batch);
  if ((int)p->act < 0 || p->act >= HG_ACT_COUNT)
    return hg_error(HG_ERR_INVALID, "activation %d is not known (hg_gemm_act_t)", (int)p->act);
  if (p->act == HG_ACT_CLAMP &&
      !(isfinite(p->act_lo) && isfinite(p->act_hi) && p->act_lo <= p->act_hi))
    return hg_error(HG_ERR_INVALID, "clamp to [%g, %g]: the bounds must be finite, lo <= hi",
                    (double)p->act_lo, (double)p->act_hi);
  if (p->act != HG_ACT_CLAMP) p->act_lo = p->act_hi = 0; /* one problem, one key */
  if ((int)p->bias < HG_BIAS_NONE || p->bias > HG_BIAS_M)
    return hg_error(HG_ERR_INVALID, "bias %d is not known (hg_gemm_bias_t)", (int)p->bias);
  if (p->bias != HG_BIAS_NONE && p->bias_type != HG_BF16 && p->bias_type != HG_F16 &&
      p->bias_type != HG_F32)
    return hg_error(HG_ERR_UNSUPPORTED, "a bias vector of %s: hopgen adds bf16, f16 or f32 biases",
                    hg_dtype_name(p->bias_type));
  if (p->bias == HG_BIAS_NONE) p->bias_type = (hg_dtype_t)0;
  const bool ab16 = is16(p->a_type) && is16(p->b_type);
  const bool ab8 = is8(p->a_type) && is8(p->b_type);
  if (!ab16 && !ab8)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "A %s x B %s: hopgen's GEMM takes bf16/f16 (both the same) or fp8 e4m3/e5m2 "
                    "(any mix) operands",
                    hg_dtype_name(p->a_type), hg_dtype_name(p->b_type));
  if (ab16 && p->a_type != p->b_type)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "A %s x B %s: wgmma takes two 16-bit operands of the same type",
                    hg_dtype_name(p->a_type), hg_dtype_name(p->b_type));
  const bool d8 = is8(p->d_type);
  if (p->d_type != HG_BF16 && p->d_type != HG_F16 && p->d_type != HG_F32 && !d8)
    return hg_error(HG_ERR_UNSUPPORTED, "output type %s: D may be bf16, f16, f32, e4m3 or e5m2",
                    hg_dtype_name(p->d_type));
  /* C (and the residual) default to D's type; an fp8 D's to bf16 (C is read, not written) */
  if (p->c_type == HG_U8) p->c_type = d8 ? HG_BF16 : p->d_type;
  if (p->c_type != HG_BF16 && p->c_type != HG_F16 && p->c_type != HG_F32)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "C of %s: C (and the residual, which has C's type) may be bf16, f16 or f32",
                    hg_dtype_name(p->c_type));
  if (p->aux && p->act == HG_ACT_NONE)
    return hg_error(HG_ERR_INVALID,
                    "an aux output stores the values before the activation, and this epilogue "
                    "has no activation: add one (relu, gelu, ...) or drop aux");
  if (!p->aux) {
    p->aux_type = (hg_dtype_t)0; /* one problem, one key */
    p->ldaux = p->batch_stride_aux = 0;
  } else {
    if (p->aux_type == HG_U8) p->aux_type = d8 ? HG_BF16 : p->d_type;
    if (p->aux_type != HG_BF16 && p->aux_type != HG_F16 && p->aux_type != HG_F32)
      return hg_error(HG_ERR_UNSUPPORTED, "an aux output of %s: aux may be bf16, f16 or f32",
                      hg_dtype_name(p->aux_type));
    if (p->ldaux == 0) p->ldaux = p->n;
    if (p->ldaux < p->n)
      return hg_error(HG_ERR_INVALID, "ldaux = %" PRId64 " is below N = %" PRId64, p->ldaux, p->n);
  }
  if (ab8 && (!p->a_k_major || !p->b_k_major))
    return hg_error(HG_ERR_INVALID,
                    "fp8 operands must both be K-major (A row-major, B column-major): wgmma reads "
                    "8-bit operands from shared memory K-major only (PTX ISA wgmma.mma_async, "
                    "imm-trans is for 16-bit types); here A is %s-major and B is %s-major",
                    p->a_k_major ? "K" : "M", p->b_k_major ? "K" : "N");
  if ((int)p->scale < 0 || p->scale > HG_SCALE_BLOCK)
    return hg_error(HG_ERR_INVALID, "fp8 scaling %d is not known (hg_gemm_scale_t)", (int)p->scale);
  if (p->scale != HG_SCALE_TENSOR && !ab8)
    return hg_error(HG_ERR_INVALID,
                    "%s-wise scales are for fp8 operands; this GEMM is %s x %s (16-bit operands "
                    "take row and column scales through the epilogue: rowscale, colscale)",
                    hg_gemm_scale_name(p->scale), hg_dtype_name(p->a_type),
                    hg_dtype_name(p->b_type));
  if (p->scale == HG_SCALE_BLOCK) {
    /* each k-block's partial sums are scaled and added in f32: a promotion every k-block */
    if (p->fp8_accum == HG_FP8_ACCUM_FAST)
      return hg_error(HG_ERR_INVALID,
                      "block-wise scales are applied to each k-block's partial sums as they are "
                      "added in f32: fp8 accumulation 'fast' (the whole K in wgmma's "
                      "accumulator) cannot apply them");
    if (p->fp8_promote > 1)
      return hg_error(HG_ERR_INVALID,
                      "block-wise scaling promotes every k-block (its scales change with each); "
                      "fp8_promote %d does not apply",
                      p->fp8_promote);
    p->fp8_promote = 1;
    const int64_t kb = (p->k + 127) / 128;
    if (p->scale_lda == 0) p->scale_lda = p->m;
    if (p->scale_ldb == 0) p->scale_ldb = kb;
    if (p->scale_lda < p->m || p->scale_ldb < kb)
      return hg_error(HG_ERR_INVALID,
                      "block-wise scale leading dimensions: scale_lda = %" PRId64
                      " must be at least M = %" PRId64 " (A's scales are M-major) and scale_ldb "
                      "= %" PRId64 " at least ceil(K / 128) = %" PRId64,
                      p->scale_lda, p->m, p->scale_ldb, kb);
    /* the tables in bytes fit 64 bits (every group's, one after the other: a masked GEMM's
     * A's too), as the operands' offsets do */
    const int64_t groups = p->batch > 1 ? p->batch : 1, nb = (p->n + 127) / 128;
    const int64_t max = INT64_MAX / 4 / groups;
    if (p->scale_lda > max / kb || p->scale_ldb > max / nb)
      return hg_error(HG_ERR_OVERFLOW,
                      "block-wise scale tables: scale_lda = %" PRId64 " x %" PRId64
                      " k-blocks or scale_ldb = %" PRId64 " x %" PRId64
                      " column blocks, of 4 bytes, x %" PRId64 " overflows 64 bits of bytes",
                      p->scale_lda, kb, p->scale_ldb, nb, groups);
  } else {
    p->scale_lda = p->scale_ldb = 0;
  }
  if (!ab8) {
    p->fp8_accum = HG_FP8_ACCUM_ACCURATE;
    p->fp8_promote = 0;
  } else if ((int)p->fp8_accum < 0 || p->fp8_accum > HG_FP8_ACCUM_FAST) {
    return hg_error(HG_ERR_INVALID, "fp8 accumulation %d is not known (hg_gemm_fp8_accum_t)",
                    (int)p->fp8_accum);
  } else if (p->fp8_accum == HG_FP8_ACCUM_FAST) {
    p->fp8_promote = 0;
  } else {
    if (p->fp8_promote == 0) p->fp8_promote = HG_FP8_PROMOTE_DEFAULT;
    if (p->fp8_promote < 1 || p->fp8_promote > HG_FP8_PROMOTE_MAX)
      return hg_error(HG_ERR_INVALID,
                      "fp8 promotion every %d k-blocks: 1..%d (0 for the default, %d)",
                      p->fp8_promote, HG_FP8_PROMOTE_MAX, HG_FP8_PROMOTE_DEFAULT);
  }
  const int64_t a_rows = p->a_k_major ? p->m : p->k, a_cols = p->a_k_major ? p->k : p->m;
  const int64_t b_rows = p->b_k_major ? p->n : p->k, b_cols = p->b_k_major ? p->k : p->n;
  if (p->lda == 0) p->lda = a_cols;
  if (p->ldb == 0) p->ldb = b_cols;
  if (p->ldd == 0) p->ldd = p->n;
  if (p->ldc == 0) p->ldc = p->ldd;
  if (p->lda < a_cols)
    return hg_error(HG_ERR_INVALID, "lda = %" PRId64 " is below %s = %" PRId64 " (A is %s-major)",
                    p->lda, p->a_k_major ? "K" : "M", a_cols, p->a_k_major ? "K" : "M");
  if (p->ldb < b_cols)
    return hg_error(HG_ERR_INVALID, "ldb = %" PRId64 " is below %s = %" PRId64 " (B is %s-major)",
                    p->ldb, p->b_k_major ? "K" : "N", b_cols, p->b_k_major ? "K" : "N");
  if (p->ldd < p->n)
    return hg_error(HG_ERR_INVALID, "ldd = %" PRId64 " is below N = %" PRId64, p->ldd, p->n);
  if (p->ldc < p->n)
    return hg_error(HG_ERR_INVALID, "ldc = %" PRId64 " is below N = %" PRId64, p->ldc, p->n);
  /* Offsets are int64 in bytes (the kernels and the plans scale element offsets by the
   * element's size): a matrix (ld x rows) and the last batch's start must fit, in bytes. */
  const struct {
    const char *name;
    int64_t ld, rows, *stride;
    hg_dtype_t type;
  } mats[] = {{"A", p->lda, a_rows, &p->batch_stride_a, p->a_type},
              {"B", p->ldb, b_rows, &p->batch_stride_b, p->b_type},
              {"C", p->ldc, p->m, &p->batch_stride_c, p->c_type},
              {"D", p->ldd, p->m, &p->batch_stride_d, p->d_type},
              {"aux", p->aux ? p->ldaux : 1, p->m, &p->batch_stride_aux, p->aux_type}};
  for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++) {
    if (i == 4 && !p->aux) continue;
    const int64_t ld = mats[i].ld, rows = mats[i].rows, stride = *mats[i].stride;
    const int64_t max = INT64_MAX / hg_dtype_bytes(mats[i].type); /* elements */
    if (ld > max / rows)
      return hg_error(HG_ERR_OVERFLOW,
                      "%s: leading dimension %" PRId64 " x %" PRId64 " rows of %d-byte elements "
                      "overflows 64 bits of bytes",
                      mats[i].name, ld, rows, hg_dtype_bytes(mats[i].type));
    if (stride < 0)
      return hg_error(HG_ERR_INVALID, "%s: batch stride %" PRId64 " is negative", mats[i].name,
                      stride);
    if (stride == 0) *mats[i].stride = ld * rows;
    if (p->batch > 1 && *mats[i].stride > (max - ld * rows) / (p->batch - 1))
      return hg_error(HG_ERR_OVERFLOW,
                      "%s: batch stride %" PRId64 " x %d batches of %d-byte elements overflows "
                      "64 bits of bytes",
                      mats[i].name, *mats[i].stride, p->batch, hg_dtype_bytes(mats[i].type));
  }
  return group_check(p);
}

int hg_gemm_epi_n(const hg_gemm_problem_t *p, const hg_gemm_config_t *c) {
  if (c->epi_n > 0) return c->epi_n;
  const int ed = hg_dtype_bytes(p->d_type), q = ed == 2 ? 16 : 8;
  /* Sub-tiles whose rows are exactly one swizzle span (TMA pads a swizzled box's rows to the
   * span) keep stmatrix free of bank conflicts: 128- or 64-byte rows when they divide the
   * tile. Otherwise the whole tile width in one unswizzled sub-tile (a TMA box of up to 256
   * elements): one store per 64 rows instead of many 32-byte ones, for a 2-way conflict. */
  /* fp8 D: 64-byte rows, 64 elements as for bf16 (the chain runs per sub-tile, and its
   * temporaries for 128 columns spilled a bias + GELU on 128x256 tiles) */
  for (int bytes = ed == 1 ? 64 : 128; bytes >= 64; bytes /= 2) {
    const int w = bytes / ed;
    if (w % q == 0 && c->tile_n % w == 0) return w;
  }
  if (c->tile_n % q == 0 && c->tile_n <= 256) return c->tile_n;
  const int w = 32 / ed;
  if (w % q == 0 && c->tile_n % w == 0) return w;
  return 0;
}

bool hg_gemm_epi_swizzled(const hg_gemm_problem_t *p, int epi_n) {
  const int rb = epi_n * hg_dtype_bytes(p->d_type);
  return rb == 32 || rb == 64 || rb == 128;
}

int hg_gemm_epi_buffers(const hg_gemm_problem_t *p, const hg_gemm_config_t *c) {
  /* Two buffers let one sub-tile's store drain while the next is written; a full-width
   * unswizzled sub-tile is the only one of its 64 rows, so one buffer (drained long before
   * the next tile's epilogue) keeps the shared memory for pipeline stages. */
  const int w = hg_gemm_epi_n(p, c);
  return w > 0 && !hg_gemm_epi_swizzled(p, w) ? 1 : 2;
}

/* The staging slots of an operand read in place from rows only 1- or 2-byte aligned (a staged
 * window copy, copy_cpasync.c), 16-byte rounded; 0 for other operands. */
static uint32_t staging_bytes(const hg_gemm_problem_t *p, const hg_gemm_config_t *c, int operand) {
  const bool a = operand == 0;
  const int e = hg_dtype_bytes(a ? p->a_type : p->b_type);
  if (e >= 4 || hg_gemm_operand_align(p, operand) >= 4) return 0;
  const bool kmaj = a ? p->a_k_major : p->b_k_major;
  const int mn = a ? c->tile_m : c->tile_n;
  const uint32_t s =
      hg_cp_async_staging_bytes(kmaj ? mn : c->tile_k, (kmaj ? c->tile_k : mn) * e, 128);
  return (s + 15) / 16 * 16 * HG_CP_ASYNC_STAGING_DEPTH;
}

bool hg_gemm_sched_prepared(const hg_gemm_problem_t *p, const hg_gemm_config_t *c) {
  return p->group == HG_GROUP_NONE && c->schedule != HG_SCHED_PINGPONG;
}

/* Shared memory of the stage ring and the epilogue's buffers, in bytes, as the generator lays
 * them out. */
static uint64_t smem_base(const hg_gemm_problem_t *p, const hg_gemm_config_t *c, int stages) {
  const int ea = hg_dtype_bytes(p->a_type), eb = hg_dtype_bytes(p->b_type);
  const int ed = hg_dtype_bytes(p->d_type);
  const uint32_t a = (uint32_t)((c->tile_m * c->tile_k * ea + 1023) / 1024 * 1024);
  const uint32_t b = (uint32_t)((c->tile_n * c->tile_k * eb + 1023) / 1024 * 1024);
  const int consumers = c->schedule == HG_SCHED_PINGPONG ? 2 : (c->tile_m >= 128 ? 2 : 1);
  const int epi_n = hg_gemm_epi_n(p, c);
  /* none with A and B swapped: D goes element by element */
  const uint32_t epi = c->swap_ab ? 0
                                  : (uint32_t)consumers * (uint32_t)hg_gemm_epi_buffers(p, c) *
                                        (uint32_t)((64 * epi_n * ed + 1023) / 1024 * 1024);
  /* a grouped GEMM keeps its groups' tables too */
  const uint32_t tables = p->group != HG_GROUP_NONE ? hg_sched_grouped_smem_bytes(p->batch) : 0;
  /* the rings, their barriers (16 bytes a stage), then the epilogue buffers from the next
   * 1024-byte boundary (their swizzle's alignment): up to 1008 bytes of padding between */
  /* staged block scales: tile_m A scales and B's in every stage, the ring on a 128-byte
   * boundary (up to 112 bytes before it) */
  const bool sc_on = c->block_scales == HG_BLOCK_SCALES_SMEM;
  const uint32_t sc = sc_on ? hg_block_scales_stage_bytes(hg_block_scales_a_rows(
                                  c->tile_m, p->group == HG_GROUP_CONTIGUOUS))
                            : 0;
  uint64_t rings = (uint64_t)stages * (a + b + sc + 16u) + (sc_on ? 112u : 0u) +
                   staging_bytes(p, c, 0) + staging_bytes(p, c, 1);
  if (epi) rings = (rings + 1023) / 1024 * 1024;
  /* the amax's meeting words, 16 bytes per consumer (epilogue.c's amax_publish) */
  const uint32_t amax = p->amax ? 16u * (uint32_t)consumers : 0;
  /* the scheduler's prepared divisors, a copy per consumer (gemm_gen.c, hg_sched_prepare) */
  const uint32_t prep =
      hg_gemm_sched_prepared(p, c) ? HG_SCHED_PREPARED_BYTES * (uint32_t)consumers : 0;
  return rings + epi + tables + amax + prep + SMEM_SLACK; /* any stage count */
}

/* The epilogue's vector steps staged in shared memory (gemm_gen.c): f32 per row or column of
 * the tile, as many lines per vector as the longest of them; a copy per tile in flight (per
 * consumer in ping-pong). */
static uint32_t vec_bytes(const hg_gemm_problem_t *p, const hg_gemm_config_t *c) {
  const int copies = c->schedule == HG_SCHED_PINGPONG ? 2 : 1;
  /* fp8's row-wise scales are two more vectors (gemm_gen.c) */
  const bool row = p->scale == HG_SCALE_ROW;
  const int vectors = p->rowscale + p->colscale + (p->bias != HG_BIAS_NONE) + 2 * row;
  const int lines_n = p->colscale || p->bias == HG_BIAS_N || row ? c->tile_n : 0;
  const int lines_m = p->rowscale || p->bias == HG_BIAS_M || row ? c->tile_m : 0;
  return (uint32_t)(copies * vectors * 4 * (lines_n > lines_m ? lines_n : lines_m));
}

bool hg_gemm_vectors_staged(const hg_gemm_problem_t *p, const hg_gemm_config_t *c) {
  const uint32_t v = vec_bytes(p, c);
  return v > 0 && smem_base(p, c, c->stages) + v <= SMEM_LIMIT;
}

/* What a configuration needs: the vectors' staging only where it fits (else the epilogue
 * reads them from global memory). */
static uint64_t smem_need(const hg_gemm_problem_t *p, const hg_gemm_config_t *c, int stages) {
  const uint64_t base = smem_base(p, c, stages), v = vec_bytes(p, c);
  return base + v <= SMEM_LIMIT ? base + v : base;
}

/* The most stages with the vectors staged (they hide the epilogue's vector loads), or without
 * when that leaves fewer than two, on the problem the kernel runs (the swapped one with
 * swap_ab). */
static int max_stages_kernel(const hg_gemm_problem_t *p, const hg_gemm_config_t *c) {
  const uint32_t v = vec_bytes(p, c);
  int s = 1;
  while (s < 16 && smem_base(p, c, s + 1) + v <= SMEM_LIMIT) s++;
  if (s < 2)
    while (s < 16 && smem_base(p, c, s + 1) <= SMEM_LIMIT) s++;
  return s;
}

int hg_gemm_max_stages(const hg_gemm_problem_t *p, const hg_gemm_config_t *c) {
  if (!c->swap_ab) return max_stages_kernel(p, c);
  const hg_gemm_problem_t s = hg_gemm_problem_swapped(p);
  return max_stages_kernel(&s, c);
}

hg_gemm_problem_t hg_gemm_problem_swapped(const hg_gemm_problem_t *p) {
  hg_gemm_problem_t s = *p;
  s.m = p->n, s.n = p->m;
  s.a_type = p->b_type, s.b_type = p->a_type;
  s.a_k_major = p->b_k_major, s.b_k_major = p->a_k_major;
  s.lda = p->ldb, s.ldb = p->lda;
  s.batch_stride_a = p->batch_stride_b, s.batch_stride_b = p->batch_stride_a;
  s.a_align = p->b_align, s.b_align = p->a_align;
  s.rowscale = p->colscale, s.colscale = p->rowscale;
  s.bias = p->bias == HG_BIAS_N ? HG_BIAS_M : p->bias == HG_BIAS_M ? HG_BIAS_N : p->bias;
  return s;
}

static hg_status_t config_check_kernel(const hg_gemm_problem_t *p, const hg_gemm_config_t *c);

hg_status_t hg_gemm_config_check(const hg_gemm_problem_t *p, const hg_gemm_config_t *c) {
  if (c->swap_ab != 0 && c->swap_ab != 1)
    return hg_error(HG_ERR_INVALID, "swap_ab = %d: 0 (off) or 1 (A and B swapped, sw)", c->swap_ab);
  if (!c->swap_ab) return config_check_kernel(p, c);
  /* what a swap cannot carry over: block scales' tables are A's 1x128 and B's 128x128, not
   * each other's; a grouped GEMM's groups are rows of A; batch invariance fixes M's tiles; the
   * decode kernel streams the long operand as B */
  if (p->scale == HG_SCALE_BLOCK || p->group != HG_GROUP_NONE || p->batch_invariant ||
      hg_gemm_mainloop_resolve(p, c->mainloop) == HG_MAINLOOP_LDG_MMASYNC)
    return hg_error(HG_ERR_UNSUPPORTED, "A and B swapped (,sw) with %s: not built",
                    p->scale == HG_SCALE_BLOCK  ? "fp8 block-wise scales (A's 1x128 blocks and "
                                                  "B's 128x128 ones do not trade places)"
                    : p->group != HG_GROUP_NONE ? "a grouped GEMM"
                    : p->batch_invariant        ? "a batch-invariant problem (its M tiles are "
                                                  "fixed)"
                                                : "the decode kernel (ldg-mmasync)");
  const hg_gemm_problem_t s = hg_gemm_problem_swapped(p);
  return hg_status_wrap(config_check_kernel(&s, c), "with A and B swapped (,sw; the tile's M is "
                                                    "the problem's N): ");
}

/* c on the problem the kernel runs (p itself, or the swapped problem with swap_ab) */
static hg_status_t config_check_kernel(const hg_gemm_problem_t *p, const hg_gemm_config_t *c) {
  /* 64-bit products: the fields may hold anything until they are checked. */
  const int64_t k_bytes = (int64_t)c->tile_k * hg_dtype_bytes(p->a_type);
  if ((int)c->mainloop < 0 || c->mainloop >= HG_MAINLOOP_COUNT)
    return hg_error(HG_ERR_INVALID, "mainloop %d is not known", (int)c->mainloop);
  const hg_gemm_mainloop_t ml = hg_gemm_mainloop_resolve(p, c->mainloop);
  if (ml == HG_MAINLOOP_LDG_MMASYNC) return hg_gemm_decode_check(p, c);
  if ((ml == HG_MAINLOOP_TMA_MMASYNC || ml == HG_MAINLOOP_TMA_LDMATRIX_WGMMA_RS) &&
      hg_dtype_bits(p->a_type) != 16)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "mainloop %s takes bf16/f16 operands, not %s: ldmatrix moves 16-bit "
                    "elements (use tma-wgmma or cpasync-wgmma for fp8)",
                    hg_gemm_mainloop_name(ml), hg_dtype_name(p->a_type));
  const bool cp = ml == HG_MAINLOOP_CPASYNC_WGMMA || hg_gemm_operand_align(p, 0) != 16 ||
                  hg_gemm_operand_align(p, 1) != 16;
  if (cp && (int64_t)c->cluster_m * c->cluster_n > 1)
    return hg_error(HG_ERR_INVALID,
                    "cluster %dx%d with operands read by cp.async (%s): cp.async cannot "
                    "multicast, so every CTA would load the shared operand itself; use c1x1",
                    c->cluster_m, c->cluster_n,
                    ml == HG_MAINLOOP_CPASYNC_WGMMA
                        ? "cpasync-wgmma"
                        : "an operand TMA cannot address: leading dimension, batch stride or base "
                          "not a multiple of 16 bytes");
  if (c->tile_m != 64 && c->tile_m != 128 && c->tile_m != 256)
    return hg_error(HG_ERR_INVALID, "tile M = %d: the generator takes 64, 128 or 256", c->tile_m);
  if (c->schedule == HG_SCHED_PINGPONG && c->tile_m == 256)
    return hg_error(HG_ERR_INVALID,
                    "a ping-pong tile of 256 rows would give each consumer warpgroup %d "
                    "accumulators per thread; use 128 or 64",
                    256 * c->tile_n / 128);
  if (c->tile_n < 16 || c->tile_n > 256 || c->tile_n % 16 != 0)
    return hg_error(HG_ERR_INVALID, "tile N = %d: the generator takes multiples of 16 up to 256",
                    c->tile_n);
  /* Two swizzle spans a stage row: 16-bit K-major operands that TMA loads, tile K 128. The
   * layout algebra lays the stage out as two 128-byte swizzle atoms along K (each operand's
   * TMA plan then loads two boxes a stage, and the wgmma descriptors step from the first atom
   * to the second), so a stage moves 256 contiguous bytes of each row: longer runs of DRAM
   * for weights streamed at small M, and half the barriers a K. Other paths keep one span a
   * row (cp.async's copies, ldmatrix's fragments and MN-major atoms assume it). */
  const bool two_spans = k_bytes == 256 && hg_dtype_bits(p->a_type) == 16 &&
                         hg_dtype_bits(p->b_type) == 16 && p->a_k_major && p->b_k_major &&
                         ml == HG_MAINLOOP_TMA_WGMMA && !cp;
  if (k_bytes == 256 && !two_spans) {
    const char *why = hg_dtype_bits(p->a_type) != 16 || hg_dtype_bits(p->b_type) != 16
                          ? "8-bit operands"
                      : !p->a_k_major || !p->b_k_major ? "an MN-major operand"
                      : cp                             ? "an operand by cp.async"
                                                       : "mainloop not tma-wgmma";
    return hg_error(HG_ERR_UNSUPPORTED,
                    "tile K = %d elements is 256 B: two swizzle spans a stage row are taken for "
                    "16-bit K-major A and B that TMA loads on tma-wgmma only (this problem: %s)",
                    c->tile_k, why);
  }
  if (k_bytes != 32 && k_bytes != 64 && k_bytes != 128 && !two_spans)
    return hg_error(HG_ERR_INVALID,
                    "tile K = %d elements is %" PRId64
                    " B; K-blocks of 32, 64 or 128 bytes keep each stage row one swizzle span (64 "
                    "for 16-bit types, 128 for fp8), or 256 B (two spans: tile K 128) for 16-bit "
                    "K-major operands by TMA",
                    c->tile_k, k_bytes);
  if (c->cluster_m < 1 || c->cluster_n < 1 || c->cluster_m > 16 || c->cluster_n > 16 ||
      c->cluster_m * c->cluster_n > 16)
    return hg_error(HG_ERR_INVALID,
                    "cluster %dx%d: each side at least 1 and at most 16 CTAs in all", c->cluster_m,
                    c->cluster_n);
  if (c->stages < 2)
    return hg_error(HG_ERR_INVALID, "stages = %d: the pipeline needs at least 2", c->stages);
  /* Tiles of 192 or 256 columns span two of B's 128-column scale blocks: each 64-column run
   * of the accumulators takes its block's factor (hg_block_scales_runs; a tile of 192 starts
   * at a multiple of 64, so no run straddles a block). */
  if (p->scale == HG_SCALE_BLOCK &&
      (c->tile_k != 128 || (128 % c->tile_n != 0 && c->tile_n != 192 && c->tile_n != 256)))
    return hg_error(HG_ERR_UNSUPPORTED,
                    "a %dx%dx%d tile with block-wise scales: tile K must be 128 (one scale of A "
                    "per row and k-block) and tile N must divide 128 (one scale of B per tile "
                    "and k-block: 16, 32, 64 or 128) or be 192 or 256 (two, by 64-column runs)",
                    c->tile_m, c->tile_n, c->tile_k);
  if (c->block_scales != HG_BLOCK_SCALES_GLOBAL && c->block_scales != HG_BLOCK_SCALES_SMEM)
    return hg_error(HG_ERR_INVALID,
                    "block-scale path %d is not known (HG_BLOCK_SCALES_GLOBAL 0 or "
                    "HG_BLOCK_SCALES_SMEM 1)",
                    c->block_scales);
  if (c->block_scales == HG_BLOCK_SCALES_SMEM && p->scale != HG_SCALE_BLOCK)
    return hg_error(HG_ERR_INVALID,
                    "staged block scales (bs) stage fp8 block-wise scales in shared memory, and "
                    "this GEMM's scaling is %s",
                    hg_gemm_scale_name(p->scale));
  if (c->block_scales == HG_BLOCK_SCALES_SMEM && cp)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "staged block scales (bs) are copied by the producer's second warp beside "
                    "TMA loads, and this configuration reads an operand with cp.async (%s); "
                    "drop bs or use tma-wgmma on 16-byte aligned operands",
                    ml == HG_MAINLOOP_CPASYNC_WGMMA ? "cpasync-wgmma"
                                                    : "leading dimension, batch stride or base "
                                                      "not a multiple of 16 bytes");
  if (c->gelu < 0 || c->gelu >= HG_GELU_ALG_COUNT)
    return hg_error(HG_ERR_INVALID,
                    "erf GELU formula %d is not known (HG_GELU_POLY7 0, HG_GELU_AS 1, "
                    "HG_GELU_POLY5 2 or HG_GELU_TANH5 3)",
                    c->gelu);
  if (c->gelu != HG_GELU_POLY7 && p->act != HG_ACT_GELU)
    return hg_error(HG_ERR_INVALID,
                    "the erf GELU's formula (%s) applies to an epilogue with the erf GELU, and "
                    "this GEMM's activation is %s",
                    c->gelu == HG_GELU_AS      ? "gas"
                    : c->gelu == HG_GELU_POLY5 ? "gp5"
                                               : "gt5",
                    hg_gemm_act_name(p->act));
  if (c->epi_direct != 0 && c->epi_direct != 1)
    return hg_error(HG_ERR_INVALID, "epi_direct = %d: 0 (off) or 1 (direct stores, ds)",
                    c->epi_direct);
  if (c->promote_overlap < 0 || c->promote_overlap > (HG_PROMOTE_STAGGER | HG_PROMOTE_DOUBLE |
                                                      HG_PROMOTE_TURNS | HG_PROMOTE_AHEAD))
    return hg_error(HG_ERR_INVALID,
                    "promotion overlap %d is not known (0, HG_PROMOTE_STAGGER 1, "
                    "HG_PROMOTE_DOUBLE 2 or HG_PROMOTE_TURNS 4, and HG_PROMOTE_AHEAD 8)",
                    c->promote_overlap);
  if ((c->promote_overlap & HG_PROMOTE_AHEAD) &&
      (c->promote_overlap & (HG_PROMOTE_STAGGER | HG_PROMOTE_TURNS)))
    return hg_error(HG_ERR_INVALID,
                    "a k-block issued ahead (pa) combines with two partial sets (pd) or nothing: "
                    "staggered promotions (ps) and MMA turns (pt) pace the consumers by k-block "
                    "counts it would shift");
  if ((c->promote_overlap & HG_PROMOTE_AHEAD) &&
      (c->schedule != HG_SCHED_COOPERATIVE || c->splits > 1 || c->stream_k ||
       p->group != HG_GROUP_NONE))
    return hg_error(
        HG_ERR_INVALID,
        "a k-block issued ahead (pa) needs cooperative tiles whose epilogue is the "
        "unit's own: not ping-pong, split-K, stream-K or a grouped GEMM (this is %s%s%s%s)",
        c->schedule != HG_SCHED_COOPERATIVE ? " ping-pong" : "", c->splits > 1 ? " split-K" : "",
        c->stream_k ? " stream-K" : "", p->group != HG_GROUP_NONE ? " grouped" : "");
  if ((c->promote_overlap & HG_PROMOTE_TURNS) &&
      (c->promote_overlap & ~HG_PROMOTE_AHEAD) != HG_PROMOTE_TURNS)
    return hg_error(HG_ERR_INVALID,
                    "MMA turns (pt) do not combine with staggered promotions (ps) or two partial "
                    "sets (pd): turns order one set's MMAs between two consumers in step");
  if ((c->promote_overlap & HG_PROMOTE_TURNS) && hg_gemm_promote(p) && !two_consumers(c))
    return hg_error(HG_ERR_INVALID,
                    "MMA turns (pt) alternate two consumer warpgroups on one tile (a cooperative "
                    "tile of 128 rows or more); this %dx%d %s tile has %s",
                    c->tile_m, c->tile_n, c->schedule == HG_SCHED_PINGPONG ? "ping-pong" : "coop",
                    c->schedule == HG_SCHED_PINGPONG ? "one per tile" : "one");
  if (c->promote_overlap == (HG_PROMOTE_STAGGER | HG_PROMOTE_DOUBLE))
    return hg_error(HG_ERR_INVALID,
                    "staggered promotions (ps) and two partial sets (pd) do not combine: the "
                    "unrolled bodies of pd put every group boundary at the same k-block for "
                    "both consumers");
  if (c->promote_overlap && !hg_gemm_promote(p))
    return hg_error(
        HG_ERR_INVALID,
        "a promotion overlap (ps, pd, pt, pa) applies to fp8's accurate accumulation, and "
        "this GEMM promotes nothing (%s)",
        is8(p->a_type) ? "--fp8-accum fast" : "16-bit operands");
  if ((c->promote_overlap & HG_PROMOTE_STAGGER) && !two_consumers(c))
    return hg_error(HG_ERR_INVALID,
                    "staggered promotions (ps) need two consumer warpgroups on one tile (a "
                    "cooperative tile of 128 rows or more); this %dx%d %s tile has one",
                    c->tile_m, c->tile_n, c->schedule == HG_SCHED_PINGPONG ? "ping-pong" : "coop");
  if ((c->promote_overlap & HG_PROMOTE_STAGGER) && hg_gemm_promote(p) < 2)
    return hg_error(HG_ERR_INVALID,
                    "staggered promotions (ps) offset the second warpgroup by half a group, and a "
                    "promotion every k-block (fp8_promote 1%s) has no half",
                    p->scale == HG_SCALE_BLOCK ? ", block-wise scales" : "");
  if ((c->promote_overlap & HG_PROMOTE_DOUBLE) &&
      hg_mainloop_unroll(hg_gemm_promote(p)) > HG_MAINLOOP_MAX_UNROLL)
    return hg_error(HG_ERR_INVALID,
                    "two partial sets (pd) unroll the k-loop by two groups: fp8_promote %d "
                    "would be %d k-blocks, over the %d the builder unrolls (fp8_promote 1..%d)",
                    hg_gemm_promote(p), hg_mainloop_unroll(hg_gemm_promote(p)),
                    HG_MAINLOOP_MAX_UNROLL, HG_MAINLOOP_MAX_UNROLL / 2);
  if (hg_gemm_promote(p) && acc_per_thread(p, c) > promote_acc_max(p)) {
    const int sets = hg_gemm_acc_sets(p, c);
    return hg_error(HG_ERR_UNSUPPORTED,
                    "a %dx%d %s tile with fp8's accurate accumulation holds %s accumulator sets "
                    "of %d registers a consumer thread, over the %d that fit without spilling; "
                    "use a narrower tile (e.g. 128x128 coop or 64-row ping-pong)%s or "
                    "--fp8-accum fast",
                    c->tile_m, c->tile_n, c->schedule == HG_SCHED_PINGPONG ? "ping-pong" : "coop",
                    sets == 3 ? "three (two partial sets: pd)" : "two", acc_per_thread(p, c) / sets,
                    promote_acc_max(p), sets == 3 ? ", one partial set (no pd)" : "");
  }
  const int ed = hg_dtype_bytes(p->d_type);
  if (c->epi_n < 0 ||
      (c->epi_n != 0 && (c->tile_n % c->epi_n != 0 || c->epi_n % (ed == 2 ? 16 : 8) != 0 ||
                         (!hg_gemm_epi_swizzled(p, c->epi_n) && c->epi_n != c->tile_n))))
    return hg_error(HG_ERR_INVALID,
                    "epilogue width %d: it must divide tile N = %d, be a multiple of %d, and "
                    "either make rows of 32, 64 or 128 B of %s (one swizzle span) or be the whole "
                    "tile width",
                    c->epi_n, c->tile_n, ed == 2 ? 16 : 8, hg_dtype_name(p->d_type));
  const uint64_t need = smem_need(p, c, c->stages);
  if (need > SMEM_LIMIT)
    return hg_error(HG_ERR_INVALID,
                    "%d stages of a %dx%dx%d tile need %" PRIu64 " B of shared memory, over the %u "
                    "B a CTA may use; at most %d stages fit",
                    c->stages, c->tile_m, c->tile_n, c->tile_k, need, SMEM_LIMIT,
                    max_stages_kernel(p, c));
  if (c->raster_group < 1)
    return hg_error(HG_ERR_INVALID, "raster group = %d is not positive", c->raster_group);
  if (p->group != HG_GROUP_NONE && c->splits > 1)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "split-K (%d) in a grouped GEMM: its scheduler does not split K", c->splits);
  if (p->group != HG_GROUP_NONE && ml != HG_MAINLOOP_TMA_WGMMA)
    return hg_error(HG_ERR_UNSUPPORTED, "mainloop %s in a grouped GEMM: it runs tma-wgmma",
                    hg_gemm_mainloop_name(ml));
  if (c->splits < 0 || c->splits > HG_SCHED_MAX_SPLITS)
    return hg_error(HG_ERR_INVALID,
                    "split-K into %d ranges: 0 or 1 (no split) up to %d (each tile's K in that "
                    "many ranges, at most one per k-block)",
                    c->splits, HG_SCHED_MAX_SPLITS);
  if (c->split_atomic != 0 && c->split_atomic != 1)
    return hg_error(HG_ERR_INVALID, "split_atomic = %d: 0 (reduction pass) or 1 (atomic adds)",
                    c->split_atomic);
  if (c->split_atomic && (p->deterministic || p->batch_invariant))
    return hg_error(HG_ERR_INVALID,
                    "split-K by atomic adds (,k%da) for a %s problem: the splits' partial sums "
                    "are added in the order they finish, so D's bits vary run to run; use ,k%d "
                    "(the reduction pass sums them in split order)",
                    c->splits, p->batch_invariant ? "batch-invariant" : "deterministic", c->splits);
  if (c->split_scatter != 0 && c->split_scatter != 1)
    return hg_error(HG_ERR_INVALID, "split_scatter = %d: 0 (reduction pass) or 1 (in the GEMM)",
                    c->split_scatter);
  if (c->split_scatter && c->split_atomic)
    return hg_error(HG_ERR_INVALID,
                    "split-K both by atomic adds and reduced in the GEMM: give one of ,k%da and "
                    ",k%dr",
                    c->splits, c->splits);
  /* either way of reducing in one launch (,kSa or ,kSr) names the split it reduces */
  if ((c->split_atomic || c->split_scatter) && c->splits < 2)
    return hg_error(HG_ERR_INVALID,
                    "split-K %s without a split (splits = %d): give ,kS%c with S of 2..%d",
                    c->split_atomic ? "by atomic adds" : "reduced in the GEMM", c->splits,
                    c->split_atomic ? 'a' : 'r', HG_SCHED_MAX_SPLITS);
  if (c->split_scatter && c->schedule == HG_SCHED_PINGPONG)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "split-K reduced in the GEMM (,k%dr) with ping-pong consumers: each consumer "
                    "holds a unit of its own, and the splits of a tile wait for each other; use "
                    "coop",
                    c->splits);
  if (c->split_scatter && ml != HG_MAINLOOP_TMA_WGMMA && ml != HG_MAINLOOP_CPASYNC_WGMMA)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "split-K reduced in the GEMM (,k%dr) with mainloop %s: it is built for the "
                    "wgmma mainloops; use ,k%d (the reduction pass) or ,k%da",
                    c->splits, hg_gemm_mainloop_name(ml), c->splits, c->splits);
  if (c->stream_k != 0 && c->stream_k != 1)
    return hg_error(HG_ERR_INVALID, "stream_k = %d: 0 (off) or 1 (on)", c->stream_k);
  if (c->stream_k && c->splits > 1)
    return hg_error(HG_ERR_INVALID,
                    "stream-K with split-K (%d): stream-K already shares each tile's k-blocks "
                    "between CTAs; give one of ,sk and ,k%d",
                    c->splits, c->splits);
  if (c->stream_k && p->group != HG_GROUP_NONE)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "stream-K in a grouped GEMM: the grouped scheduler's tiles are known only on "
                    "the device");
  if (c->stream_k && p->batch_invariant)
    return hg_error(HG_ERR_INVALID,
                    "stream-K for a batch-invariant problem: which tiles share their k-blocks, "
                    "and so the order of each row's sums, depends on M; drop ,sk or "
                    "--batch-invariant");
  return hg_ok();
}

int hg_gemm_config_print(const hg_gemm_config_t *c, char *buf, size_t size) {
  char split[16] = "";
  if (c->splits > 1)
    snprintf(split, sizeof split, ",k%d%s", c->splits,
             c->split_atomic    ? "a"
             : c->split_scatter ? "r"
                                : "");
  /* both when both are set (a configuration the check refuses, printed as it is) */
  if (c->stream_k) snprintf(split + strlen(split), sizeof split - strlen(split), ",sk");
  const int ov = c->promote_overlap & ~HG_PROMOTE_AHEAD;
  return snprintf(buf, size, "%dx%dx%d,c%dx%d,s%d,%s,%c%d,e%d%s%s%s%s%s%s%s%s%s", c->tile_m,
                  c->tile_n, c->tile_k, c->cluster_m, c->cluster_n, c->stages,
                  c->schedule == HG_SCHED_PINGPONG ? "pp" : "coop",
                  c->raster == HG_RASTER_M ? 'm' : 'n', c->raster_group, c->epi_n, split,
                  ov == HG_PROMOTE_STAGGER  ? ",ps"
                  : ov == HG_PROMOTE_DOUBLE ? ",pd"
                  : ov == HG_PROMOTE_TURNS  ? ",pt"
                  : ov                      ? ",p?"
                                            : "",
                  c->promote_overlap & HG_PROMOTE_AHEAD ? ",pa" : "",
                  c->block_scales == HG_BLOCK_SCALES_SMEM ? ",bs"
                  : c->block_scales                       ? ",b?"
                                                          : "",
                  c->gelu == HG_GELU_AS      ? ",gas"
                  : c->gelu == HG_GELU_POLY5 ? ",gp5"
                  : c->gelu == HG_GELU_TANH5 ? ",gt5"
                  : c->gelu                  ? ",g?"
                                             : "",
                  c->epi_direct ? ",ds" : "", c->swap_ab ? ",sw" : "",
                  c->mainloop == HG_MAINLOOP_AUTO ? "" : ",",
                  c->mainloop == HG_MAINLOOP_AUTO ? "" : hg_gemm_mainloop_name(c->mainloop));
}

/* n decimal integers joined by 'x' ("128x256x64"): digits only, each at most 65536; false
 * on anything else (a sign, a space, an overflow, trailing characters). */
static bool parse_ints(const char *s, int *v, int n) {
  for (int i = 0; i < n; i++) {
    if (!(*s >= '0' && *s <= '9')) return false;
    int x = 0;
    for (; *s >= '0' && *s <= '9'; s++)
      if ((x = x * 10 + (*s - '0')) > 65536) return false;
    v[i] = x;
    if (i + 1 < n && *s++ != 'x') return false;
  }
  return *s == '\0';
}

/* "Sa" (split-K by atomic adds) or "Sr" (reduced in the GEMM): S as parse_ints takes it, then
 * the letter. */
static bool split_atomic_tok(const char *s, int *splits) {
  char digits[8];
  const size_t n = strlen(s) - 1;
  if (n == 0 || n >= sizeof digits) return false;
  memcpy(digits, s, n);
  digits[n] = '\0';
  return parse_ints(digits, splits, 1);
}

hg_status_t hg_gemm_config_parse(const char *text, hg_gemm_config_t *out) {
  hg_gemm_config_t c = {.cluster_m = 1,
                        .cluster_n = 1,
                        .stages = 4,
                        .schedule = HG_SCHED_COOPERATIVE,
                        .raster = HG_RASTER_M,
                        .raster_group = 8};
  char buf[128];
  if (strlen(text) >= sizeof buf)
    return hg_error(HG_ERR_PARSE, "configuration '%.40s...' is too long", text);
  if (!text[0]) return hg_error(HG_ERR_PARSE, "configuration is empty");
  strcpy(buf, text);
  /* Each field once: a second one would silently win. */
  enum {
    TILE,
    CLUSTER,
    STAGES,
    SCHEDULE,
    RASTER,
    EPI,
    MAINLOOP,
    SPLITS,
    OVERLAP,
    AHEAD,
    STREAMK,
    BSCALES,
    GELU,
    DIRECT,
    SWAP
  };
  static const char *const what[] = {
      "tile",           "cluster",          "stage count",   "schedule",          "raster",
      "epilogue width", "mainloop",         "split-K count", "promotion overlap", "k-block ahead",
      "stream-K",       "block-scale path", "GELU formula",  "direct stores",     "operand swap"};
  unsigned seen = 0;
  char *tok = buf;
  for (int field = 0; tok; field++) {
    char *comma = strchr(tok, ',');
    if (comma) *comma = '\0';
    int kind, v[3];
    if (field == 0) {
      kind = TILE;
      if (!parse_ints(tok, v, 3))
        return hg_error(HG_ERR_PARSE,
                        "configuration '%s': '%s' is not a tile MxNxK (e.g. 128x256x64)", text,
                        tok);
      c.tile_m = v[0], c.tile_n = v[1], c.tile_k = v[2];
    } else if (!strcmp(tok, "coop") || !strcmp(tok, "pp")) {
      kind = SCHEDULE;
      c.schedule = tok[0] == 'p' ? HG_SCHED_PINGPONG : HG_SCHED_COOPERATIVE;
    } else if (!strcmp(tok, "sk")) {
      kind = STREAMK;
      c.stream_k = 1;
    } else if (!strcmp(tok, "bs")) {
      kind = BSCALES;
      c.block_scales = HG_BLOCK_SCALES_SMEM;
    } else if (!strcmp(tok, "gp7") || !strcmp(tok, "gas") || !strcmp(tok, "gp5") ||
               !strcmp(tok, "gt5")) {
      kind = GELU;
      c.gelu = tok[1] == 'a'   ? HG_GELU_AS
               : tok[1] == 't' ? HG_GELU_TANH5
               : tok[2] == '5' ? HG_GELU_POLY5
                               : HG_GELU_POLY7;
    } else if (!strcmp(tok, "ds")) {
      kind = DIRECT;
      c.epi_direct = 1;
    } else if (!strcmp(tok, "sw")) {
      kind = SWAP;
      c.swap_ab = 1;
    } else if (tok[0] == 's') {
      kind = STAGES;
      if (!parse_ints(tok + 1, &c.stages, 1))
        return hg_error(HG_ERR_PARSE, "configuration '%s': '%s' is not a stage count sN", text,
                        tok);
    } else if (strchr(tok, '-') || !strcmp(tok, "auto")) {
      /* a mainloop name (they all have a dash; "auto" has none) */
      kind = MAINLOOP;
      hg_status_t s = hg_gemm_mainloop_parse(tok, &c.mainloop);
      if (!hg_is_ok(&s)) return hg_status_wrap(s, "configuration '%s': ", text);
    } else if (tok[0] == 'c') {
      kind = CLUSTER;
      if (!parse_ints(tok + 1, v, 2))
        return hg_error(HG_ERR_PARSE, "configuration '%s': '%s' is not a cluster cMxN (e.g. c2x1)",
                        text, tok);
      c.cluster_m = v[0], c.cluster_n = v[1];
    } else if ((tok[0] == 'm' || tok[0] == 'n') && parse_ints(tok + 1, &c.raster_group, 1)) {
      kind = RASTER;
      c.raster = tok[0] == 'm' ? HG_RASTER_M : HG_RASTER_N;
    } else if (tok[0] == 'e' && parse_ints(tok + 1, &c.epi_n, 1)) {
      kind = EPI;
    } else if (tok[0] == 'k' && tok[1] &&
               (parse_ints(tok + 1, &c.splits, 1) ||
                ((tok[strlen(tok) - 1] == 'a' || tok[strlen(tok) - 1] == 'r') && strlen(tok) < 8 &&
                 split_atomic_tok(tok + 1, &c.splits)))) {
      kind = SPLITS;
      c.split_atomic = tok[strlen(tok) - 1] == 'a';
      c.split_scatter = tok[strlen(tok) - 1] == 'r';
    } else if (!strcmp(tok, "ps") || !strcmp(tok, "pd") || !strcmp(tok, "pt")) {
      kind = OVERLAP;
      c.promote_overlap |= tok[1] == 's'   ? HG_PROMOTE_STAGGER
                           : tok[1] == 'd' ? HG_PROMOTE_DOUBLE
                                           : HG_PROMOTE_TURNS;
    } else if (!strcmp(tok, "pa")) {
      kind = AHEAD;
      c.promote_overlap |= HG_PROMOTE_AHEAD;
    } else {
      return hg_error(
          HG_ERR_PARSE,
          "configuration '%s': unknown field '%s' (expected MxNxK, cMxN, sN, coop|pp, "
          "mG|nG, eN, kS, sk, bs, pt, ps|pd, pa, gp7|gas|gp5, ds, sw or a mainloop such as "
          "tma-wgmma, separated by single commas)",
          text, tok);
    }
    if (seen & (1u << kind))
      return hg_error(HG_ERR_PARSE, "configuration '%s' gives the %s twice", text, what[kind]);
    seen |= 1u << kind;
    tok = comma ? comma + 1 : NULL;
  }
  *out = c;
  return hg_ok();
}

/* Estimated time of a configuration, in arbitrary units: the persistent grid runs waves of
 * cluster tiles (as many clusters at once as the SMs hold, one CTA per SM), so a tile
 * count just above a multiple of the resident clusters wastes most of a wave; within a
 * tile, the MMA issues at an efficiency that falls for narrow N and 64-row tiles (one
 * consumer warpgroup), and the epilogue costs about as much as 256 more K. Only the
 * ranking matters; --tune measures the real thing. */
/* The cluster tiles of c over p's output, every batch. */
static int64_t cluster_tiles(const hg_gemm_problem_t *p, const hg_gemm_config_t *c) {
  const int64_t ctm = (p->m + c->tile_m * c->cluster_m - 1) / (c->tile_m * c->cluster_m);
  const int64_t ctn = (p->n + c->tile_n * c->cluster_n - 1) / (c->tile_n * c->cluster_n);
  return ctm * ctn * p->batch;
}

static double estimate(const hg_gemm_problem_t *p, const hg_gemm_config_t *c, int sms) {
  const double tm = c->tile_m, tn = c->tile_n;
  const int cs = c->cluster_m * c->cluster_n;
  const int64_t ctiles = cluster_tiles(p, c);
  const int64_t resident = sms / cs > 0 ? sms / cs : 1;
  const double waves = (double)((ctiles + resident - 1) / resident);
  double eff = tn / (tn + 16.0);
  if (tm < 128) eff *= 0.55;
  const double work = tm * tn * ((double)p->k + 256.0);
  return waves * work / eff;
}

/* Stream-K's rule, off by default (the rule "sk" of hg_gemm_rules_t, hopgen gemm --heuristic sk,
 * so that scripts/gpu-check.sh sk2 compares the heuristic with and without it in one call;
 * bench/RESULTS.md: it chose no better kernels).
 * The estimate() of c (t_dp: whole waves) with stream-K instead: the same work spread evenly
 * (tiles / resident clusters waves, not rounded up) plus SK_FIXUP_WAVES for the partial
 * tiles' stores, flag waits and reads; infinite where stream-K is not a candidate: split or
 * 64-row tiles, no more tiles than clusters (split-K's case), fewer than 8 k-blocks a tile
 * (a tile's fix-up would cost about its main loop), batch-invariant or grouped problems. */
#define SK_FIXUP_WAVES 0.15
static double stream_k_estimate(const hg_gemm_problem_t *p, const hg_gemm_config_t *c, int sms,
                                double t_dp) {
  if (c->splits > 1 || c->tile_m < 128 || p->batch_invariant || p->group != HG_GROUP_NONE)
    return INFINITY;
  const int cs = c->cluster_m * c->cluster_n;
  const double resident = sms / cs > 0 ? sms / cs : 1;
  const hg_sched_spec_t ss = hg_gemm_sched_spec(c);
  const double tiles = (double)hg_sched_units(&ss, p->m, p->n, p->batch);
  if (tiles <= resident || (p->k + c->tile_k - 1) / c->tile_k < 8) return INFINITY;
  return t_dp * (tiles / resident + SK_FIXUP_WAVES) / ceil(tiles / resident);
}

/* c with the most stages that fit (at most 8), appended to out[n] when the generator can
 * build it; the new count (it keeps counting past cap). */
static int add_fitting(const hg_gemm_problem_t *p, hg_gemm_config_t c, hg_gemm_config_t *out,
                       int cap, int n) {
  c.stages = hg_gemm_max_stages(p, &c);
  if (c.stages > 8) c.stages = 8;
  hg_status_t ok = hg_gemm_config_check(p, &c);
  if (!hg_is_ok(&ok)) return n;
  if (n < cap) out[n] = c;
  return n + 1;
}

/* Past split-K's few tiles (below): outputs that the chosen tiles cover in one wave over a
 * long K, where those tiles are 64-row ones (one consumer warpgroup streaming all of K:
 * 200x2000x16384 took 128 tiles of 64 x 64) or, for 16-bit operands, leave a quarter of the
 * SMs idle or more. Wide tiles (128 x 256, else 128 x 192, else 128 x 128) instead, at least
 * two along both M and N (split-major units, sched.c), split to fill the wave with 1024 of K
 * or more a split, where that cuts the operand bytes a CTA loads (tile_m + tile_n per k,
 * times its K) to 0.6 of the chosen tiles' or less. H100, same call (bench/RESULTS.md,
 * twelfth session), ms before -> after: bf16 200x2000x16384 (64x64 -> 128x256 k8) 0.0759
 * -> 0.0431, e4m3 (128x192 k6) 0.0401 -> 0.0272, bf16 300x3000x8192 (128x96, 96 tiles ->
 * k3) 0.0666 -> 0.0415, 768x768x12288 (128x64, 72 tiles -> k7) 0.0479 -> 0.0342, 384x1536x
 * 8192 (72 tiles -> k7) 0.0306 -> 0.0284. Where it lost, it is not taken: a full wave of
 * 128 x 64 tiles (1024x1024x8192 0.0352 -> 0.0368, 512x2048x8192 0.0350 -> 0.0388), fp8 on
 * 128-row tiles (e4m3 384x1536x8192 0.0166 -> 0.0195, 768x768x12288 level: two accumulator
 * sets on 128 x 192), one row of 128-row tiles (M = 128: tile-major units, 128x4096x8192
 * 0.0301 -> 0.0412, 128x7168x16384 0.0865 -> 0.1011). M of 64 or less keeps its rules
 * (decode, stream_w). */
static void split_k_wide(const hg_gemm_problem_t *p, int sm_count, const hg_gemm_rules_t *r,
                         hg_gemm_config_t *c) {
  if (p->m <= 64 || p->k < 4096) return;
  const int64_t ctas = cluster_tiles(p, c) * c->cluster_m * c->cluster_n;
  if (ctas > sm_count) return; /* more than one wave: the wave model's */
  if (c->tile_m != 64 && (is8(p->a_type) || 4 * ctas > 3 * (int64_t)sm_count)) return;
  const double load = (double)(c->tile_m + c->tile_n) * (double)p->k;
  /* the widths in order; one column of tiles too (unless the rule nokcol), the narrowest
   * width that covers N first: bf16 3000x200x16384 ran 128x224 in 5 splits 1.78x (H100) and
   * 1.82x (H200) faster than the wave model's 128x64 (same call, bench/RESULTS.md, thirteenth
   * session); fp8 with its promotion has no width past 192 for N up to 256, and keeps its
   * 128x64 (one wave of 128-row tiles, below) */
  int tns[4], widths = 0;
  if (!r->no_split_column && p->n <= 256) {
    static const int cover[] = {128, 160, 176, 192, 224, 256};
    size_t i = 0;
    while (cover[i] < p->n) i++;
    tns[widths++] = cover[i];
  }
  tns[widths++] = 256;
  tns[widths++] = 192;
  tns[widths++] = 128;
  for (int i = 0; i < widths; i++) {
    hg_gemm_config_t s = *c;
    s.tile_m = 128;
    s.tile_n = tns[i];
    s.cluster_m = s.cluster_n = 1;
    s.epi_n = 0;
    s.stream_k = 0;
    s.split_atomic = 0;
    /* fp8's promotion: two accumulator sets, 192 columns at most (as the wave model) */
    if (hg_gemm_promote(p) && s.tile_n > 192) continue;
    const int64_t tm = (p->m + s.tile_m - 1) / s.tile_m, tn = (p->n + s.tile_n - 1) / s.tile_n;
    if (tm < 2 || (tn < 2 && r->no_split_column)) continue;
    int64_t splits = sm_count / (tm * tn * p->batch);
    if (splits > HG_SCHED_MAX_SPLITS) splits = HG_SCHED_MAX_SPLITS;
    if (splits > p->k / 1024) splits = p->k / 1024;
    if (splits < 2) continue;
    s.splits = (int)splits;
    const double split_load = (double)(s.tile_m + s.tile_n) * (double)(p->k / splits);
    if (split_load > 0.6 * load) continue;
    if (add_fitting(p, s, c, 1, 0) > 0) return;
  }
}

/* Split-K when the output has too few tiles to fill a quarter of the GPU and K is long: tiles
 * of 64 x 128 (M up to 256) or 128 x 128, or 64 x 64 where those would make short splits or
 * waste area (below), no cluster, and the most splits that keep all units in one wave with at
 * least 512 of K each. Measured on the H100 over tile x cluster x splits
 * (scripts/gemm-splitk.sh sweep and sweep2, bench/RESULTS.md): the best or within 5% of it on
 * the splitk set and on decode shapes; past one wave the units queue (512x512x16384 at 16
 * splits: 1.2x the time of 8). */
static void split_k(const hg_gemm_problem_t *p, int sm_count, const hg_gemm_rules_t *r,
                    hg_gemm_config_t *c) {
  hg_gemm_config_t s = *c;
  s.tile_m = p->m <= 256 ? 64 : 128;
  s.tile_n = 128;
  s.cluster_m = s.cluster_n = 1;
  s.epi_n = 0;
  int64_t tiles = (p->m + s.tile_m - 1) / s.tile_m * ((p->n + s.tile_n - 1) / s.tile_n) * p->batch;
  if (tiles * 4 > sm_count) {
    split_k_wide(p, sm_count, r, c);
    return;
  }
  /* Past one 64-row tile, 128-row tiles (two consumer warpgroups) read less of A and B again
   * per MMA: H100, operands from memory, 192x320x40000 0.0287 ms at 128x128 k22 against
   * 0.0318 at 64x128 k14, 96x768x32768 0.0295 against 0.0362, 384x640x12288 0.0235 against
   * 0.0266 (gemm-splitk.sh clusters); unless that leaves under half the SMs a unit
   * (128x128x32768 is one such tile). Such units keep 1024 of K or more: 256x256x16384 ran
   * 0.0160 ms in 33 splits of 512, 0.0151 in 16. */
  int64_t kmin = 512;
  if (s.tile_m == 64 && p->m > 64) {
    const int64_t t128 = (p->m + 127) / 128 * ((p->n + s.tile_n - 1) / s.tile_n) * p->batch;
    int64_t per = sm_count / t128;
    if (per > p->k / 1024) per = p->k / 1024;
    if (per > HG_SCHED_MAX_SPLITS) per = HG_SCHED_MAX_SPLITS;
    if (2 * t128 * per >= sm_count) {
      s.tile_m = 128;
      tiles = t128;
      kmin = 1024;
    }
  }
  /* as many splits as fill one wave (not only powers of two: 192x320x40000 ran 25% faster at
   * 14 splits of its 9 tiles than at 8, H100), each with 512 of K or more */
  int64_t splits = sm_count / tiles;
  if (splits > HG_SCHED_MAX_SPLITS) splits = HG_SCHED_MAX_SPLITS;
  if (splits > p->k / kmin) splits = p->k / kmin;
  if (splits < 2) return;
  /* Short splits (1024 of K or less) where 64 x 64 tiles alone give a third of the SMs a
   * tile: those tiles, unsplit. A split's fixed costs (its partial tile's atomic adds or
   * store, the arrival, the last split's epilogue) then outweigh what the extra CTAs
   * stream. Same call (bench/RESULTS.md, 2026-11-27 seventh session), ms of the split
   * (64x128 k4a) -> 64 x 64 unsplit, M = 24 / 32 / 48 / 64: e4m3 Mx4096x4096 H100 0.0124 /
   * 0.0124 / 0.0131 / 0.0140 -> 0.0093 / 0.0092 / 0.0090 / 0.0090, H200 0.0108 / 0.0109 /
   * 0.0114 / 0.0123 -> 0.0086 / 0.0084 / 0.0077 / 0.0077; bf16 H100 0.0182 / 0.0183 / 0.0191
   * / 0.0202 -> 0.0163 / 0.0159 / 0.0150 / 0.0151, H200 0.0148 / 0.0148 / 0.0157 / 0.0164 ->
   * 0.0153 / 0.0142 / 0.0124 / 0.0124; H200 32x4096x2048 e4m3 0.0089 -> 0.0054, bf16 0.0108
   * -> 0.0082, 32x3584x4096 e4m3 0.0103 -> 0.0082, bf16 0.0143 -> 0.0135, 32x3072x4096
   * e4m3 0.0095 -> 0.0077. Longer splits keep them (32x4096x8192 level, x14336 0.0211 ->
   * 0.0241 e4m3); so do fewer 64 x 64 tiles (Mx2048x7168: 32 of them, 64x64 k4a 0.0095-0.0105
   * against 0.0102-0.0111 unsplit) and M <= 16 (bf16 16x3584x4096 0.0135 -> 0.0150). Only
   * for operands TMA reads (measured there; the in-place cp.async path keeps its split). */
  if (p->m > 16 && p->m <= 64 && p->k / splits <= 1024 && hg_gemm_operand_align(p, 0) == 16 &&
      hg_gemm_operand_align(p, 1) == 16) {
    const int64_t t64 = (p->m + 63) / 64 * ((p->n + 63) / 64) * p->batch;
    if (3 * t64 >= sm_count) {
      hg_gemm_config_t u = s;
      u.tile_m = u.tile_n = 64;
      u.stream_k = 0;
      add_fitting(p, u, c, 1, 0);
      return;
    }
  }
  s.splits = (int)splits;
  /* Split-K by atomic adds (one launch; the last split runs the epilogue) where it measured
   * faster than the reduction pass: M up to 64 (the rows past M add nothing), or 64-row tiles
   * in 32 splits and more (the pass's sum over a tile's slots is serial). H100, same call
   * (bench/RESULTS.md): faster at 128x128x32768 k64 (14-16%), 64x512x32768, 48x1536x16384,
   * 64x1024x65536 and decode Mx2048x7168 (2-8%); slower on 128-row tiles at any split count
   * (128x384x24576 k24 16-20%, 100x300x30000 k29 9-17%, 512x512x16384 k8 4-7%; 192x320x40000
   * k22 was 2% faster) and at 256x256x16384 k16 (7%). Never for a deterministic or
   * batch-invariant problem (the additions' order is the order of arrival). */
  s.split_atomic =
      !p->deterministic && !p->batch_invariant && (p->m <= 64 || (s.tile_m == 64 && splits >= 32));
  /* Splits of 1024 of K or less keep each unit short of work next to its fixed costs (the
   * pipeline's fill, the partial tile's store or addition): 64 x 64 tiles instead (more
   * tiles, fewer and longer splits) where they keep at least 0.9 of the units and make at
   * most 32 tiles (as measured: more 64 x 64 tiles read A and B again more often). H100, same
   * call (bench/RESULTS.md), bf16 / e4m3: 128x128x32768 64x128 k64a 0.0140 / 0.0112 ms against
   * 64x64 k33a 0.0125 / 0.0095, 64x512x32768 0.0205 / 0.0142 against 0.0182 / 0.0120,
   * 64x256x65536 0.0219 / 0.0145 against 0.0201 / 0.0130, 256x256x16384 (64x128 k16) 0.0150
   * / 0.0112 against 0.0142 / 0.0102, 128x384x24576 (128x128 k24) 0.0173 / 0.0128 against
   * 0.0170 / 0.0115; with longer splits 64 x 64 loses (96x200x50000, 128x128 k48 of 1042:
   * 0.0200 / 0.0141 against 0.0219 / 0.0158). Also where 64 x 64 tiles cover M x N with 0.7
   * of the chosen tiles' area or less (192x320x40000: 128x128 tiles compute 256x384).
   * Not for decode steps (M <= 16): the weights' bytes bound them whatever the tile. Nor for
   * a deterministic problem: by the reduction pass, 64 x 64 measured 2-6% slower at
   * 256x256x16384 and 128x384x24576 (it keeps the tiles above). */
  const int64_t ku = p->k / splits;
  /* the MMA rows x columns of 64 x 64 tiles against the chosen tiles' (past M and N: waste) */
  const int64_t area64 = (p->m + 63) / 64 * 64 * ((p->n + 63) / 64 * 64);
  const int64_t area =
      (p->m + s.tile_m - 1) / s.tile_m * s.tile_m * ((p->n + s.tile_n - 1) / s.tile_n * s.tile_n);
  if (p->m > 16 && !p->deterministic && (ku <= 1024 || 10 * area64 <= 7 * area)) {
    const int64_t t64 = (p->m + 63) / 64 * ((p->n + 63) / 64) * p->batch;
    int64_t s64 = sm_count / t64;
    if (s64 > HG_SCHED_MAX_SPLITS) s64 = HG_SCHED_MAX_SPLITS;
    if (s64 > p->k / 512) s64 = p->k / 512;
    if (t64 <= 32 && s64 >= 2 && 10 * t64 * s64 >= 9 * tiles * splits) {
      s.tile_m = s.tile_n = 64;
      s.splits = (int)s64;
      s.split_atomic = true; /* as measured above */
    }
  }
  add_fitting(p, s, c, 1, 0);
}

hg_status_t hg_gemm_heuristic(const hg_gemm_problem_t *p, int sm_count, hg_gemm_config_t *out) {
  return hg_gemm_heuristic_for(p, HG_MAINLOOP_AUTO, sm_count, NULL, out);
}

hg_status_t hg_gemm_heuristic_rules(const hg_gemm_problem_t *p, int sm_count,
                                    const hg_gemm_rules_t *rules, hg_gemm_config_t *out) {
  return hg_gemm_heuristic_for(p, HG_MAINLOOP_AUTO, sm_count, rules, out);
}

hg_status_t hg_gemm_rules_parse(const char *text, hg_gemm_rules_t *out) {
  hg_gemm_rules_t r = {0};
  char buf[128];
  if (strlen(text) >= sizeof buf)
    return hg_error(HG_ERR_PARSE, "heuristic rules '%.40s...' are too long", text);
  strcpy(buf, text);
  unsigned seen = 0;
  for (char *tok = buf, *comma; tok; tok = comma ? comma + 1 : NULL) {
    comma = strchr(tok, ',');
    if (comma) *comma = '\0';
    unsigned bit;
    if (!strcmp(tok, "default")) {
      bit = 1; /* no rule changed: the same as "" */
    } else if (!strcmp(tok, "sk")) {
      bit = 2, r.stream_k = true;
    } else if (!strcmp(tok, "pp") || !strcmp(tok, "pp128")) {
      bit = 4, r.epi_pingpong = tok[2] ? 128 : 192;
    } else if (!strcmp(tok, "nobs")) {
      bit = 8, r.global_scales = true;
    } else if (!strcmp(tok, "pt")) {
      bit = 16, r.mma_turns = true;
    } else if (!strcmp(tok, "dv")) {
      bit = 32, r.decode = true;
    } else if (!strcmp(tok, "nocw")) {
      bit = 64, r.no_cluster_wave = true;
    } else if (!strcmp(tok, "nokcol")) {
      bit = 128, r.no_split_column = true;
    } else {
      return hg_error(HG_ERR_PARSE,
                      "heuristic rules '%s': unknown rule '%s' (expected default, sk, pp, pp128, "
                      "nobs, pt, dv, nocw or nokcol, separated by single commas)",
                      text, tok);
    }
    if (seen & bit)
      return hg_error(HG_ERR_PARSE, "heuristic rules '%s' name '%s' twice (pp and pp128 are one)",
                      text, tok);
    seen |= bit;
  }
  *out = r;
  return hg_ok();
}

int hg_gemm_rules_print(const hg_gemm_rules_t *r, char *buf, size_t size) {
  char t[64] = "";
  if (r->stream_k) strcat(t, ",sk");
  if (r->epi_pingpong) strcat(t, r->epi_pingpong == 128 ? ",pp128" : ",pp");
  if (r->global_scales) strcat(t, ",nobs");
  if (r->mma_turns) strcat(t, ",pt");
  if (r->decode) strcat(t, ",dv");
  if (r->no_cluster_wave) strcat(t, ",nocw");
  if (r->no_split_column) strcat(t, ",nokcol");
  return snprintf(buf, size, "%s", t[0] ? t + 1 : "default");
}

/* The share of the waves' CTA slots (one CTA an SM) that hold one of the tiles. */
static double wave_fill(int64_t tiles, int sms) {
  return (double)tiles / (double)((tiles + sms - 1) / sms * sms);
}

/* Block-wise scales on 128 x 192 tiles (two scale blocks a tile, no pd: three accumulator
 * sets do not fit) where they fill the last wave clearly better than 128 x 128: the share of
 * the waves' CTA slots that hold a tile, 5% more. Measured with the scales staged by TMA,
 * same call, ms 128x128 (heuristic) -> 128x192: H100 4096x2112x7168 0.1231 -> 0.1068 (544
 * tiles: 82% of 5 waves, against 352: 89% of 3), 1000x3000x700 0.0155 -> 0.0118 (73% of 2
 * waves against 97% of 1); where the waves fill alike 192 loses: 4096x7168x16384 0.784 ->
 * 0.806-0.845 (97% against 92%), 8192^3 0.894 -> 0.904 (97% / 99%), 128x7168x2048 on 64-row
 * tiles 0.0085 -> 0.0108 (bench/RESULTS.md, eighth session). Not beside an amax or row and
 * column scales (192 spills there, see above), nor split or stream-K tiles. */
static void block_wide_rule(const hg_gemm_problem_t *p, int sms, hg_gemm_config_t *c) {
  if (p->scale != HG_SCALE_BLOCK || p->group != HG_GROUP_NONE || c->tile_m != 128 ||
      c->tile_n != 128 || c->splits > 1 || c->stream_k || p->amax || p->rowscale || p->colscale)
    return;
  const int64_t tm = (p->m + 127) / 128 * p->batch;
  const int64_t t192 = tm * ((p->n + 191) / 192);
  if (wave_fill(t192, sms) < 1.05 * wave_fill(tm * ((p->n + 127) / 128), sms)) return;
  hg_gemm_config_t w = *c;
  w.tile_n = 192;
  w.cluster_m = tm >= 2 && t192 >= sms && c->cluster_m * c->cluster_n > 1 ? 2 : 1;
  w.cluster_n = 1;
  w.promote_overlap = 0;
  w.epi_n = 0;
  w.stages = hg_gemm_max_stages(p, &w);
  if (w.stages > 8) w.stages = 8;
  hg_status_t ok = hg_gemm_config_check(p, &w);
  if (hg_is_ok(&ok)) *c = w;
}

/* Whether the epilogue stores a consumer's whole region through buffers of its own, one per
 * 64-row x epi_n sub-tile (epilogue.c, store_buffered: one barrier pair a tile). */
static bool epilogue_batched(const hg_gemm_problem_t *p, const hg_gemm_config_t *c) {
  const int w = hg_gemm_epi_n(p, c);
  if (w <= 0) return false;
  const int rows = two_consumers(c) ? c->tile_m / 2 : c->tile_m;
  return (rows / 64) * (c->tile_n / w) <= hg_gemm_epi_buffers(p, c);
}

/* fp8 block scales' paths. Measured on an H100 (bench/RESULTS.md, 128x128 cooperative tiles,
 * against the global scale loads in one call): staged scales (bs) 5-9% faster on the large
 * block-wise shapes (4096x7168x16384 918 -> 1002 TFLOP/s) and level on 128x7168x2048; MMA
 * turns (pt) 2-4% slower alone and no better than bs beside it. So the heuristic stages the
 * scales where the configuration allows (both operands by TMA) and takes no turns. The rules
 * nobs (global loads) and pt (turns as well) change it for A/B runs, as scripts/gpu-check.sh
 * bs2sets does. A stage holds hg_block_scales_stage_bytes more with staged scales: where the
 * stages no longer fit, the epilogue narrows to 32 columns, else the ring loses stages. */
static void block_scale_rule(const hg_gemm_problem_t *p, const hg_gemm_rules_t *r,
                             hg_gemm_config_t *c) {
  if (p->scale != HG_SCALE_BLOCK) return;
  hg_gemm_config_t t = *c;
  if (r->mma_turns && two_consumers(&t) && !t.promote_overlap) t.promote_overlap = HG_PROMOTE_TURNS;
  if (!r->global_scales) {
    t.block_scales = HG_BLOCK_SCALES_SMEM;
    hg_status_t ok = hg_gemm_config_check(p, &t);
    /* A stage less where the epilogue then stores its region at once (a buffer per
     * sub-tile: epilogue.c's batched stores): H100, 128x128 block-wise tiles, s5 with 64
     * columns against s6 with 32, 4096x24576x1536 0.2698 against 0.2782 ms, 4096x7168x16384
     * level (bench/RESULTS.md, tenth session). */
    if (!hg_is_ok(&ok)) {
      hg_gemm_config_t f = t;
      f.stages = hg_gemm_max_stages(p, &t);
      hg_status_t okf = hg_gemm_config_check(p, &f);
      if (f.stages >= 4 && epilogue_batched(p, &f) && hg_is_ok(&okf)) {
        t = f;
        ok = okf;
      }
    }
    if (!hg_is_ok(&ok)) {
      hg_gemm_config_t e = t;
      e.epi_n = 32;
      ok = hg_gemm_config_check(p, &e);
      if (hg_is_ok(&ok))
        t = e;
      else if (hg_gemm_max_stages(p, &t) < t.stages)
        t.stages = hg_gemm_max_stages(p, &t);
    }
  }
  hg_status_t ok = hg_gemm_config_check(p, &t);
  if (hg_is_ok(&ok)) *c = t;
  /* Two partial sets (pd) beside staged scales (not on 192-column tiles: three sets do not
   * fit): each k-block's promotion overlaps the next one's MMAs. Once the side copy stopped
   * holding the consumers at the full barrier, pd was 2-4% faster on the large shapes (H100,
   * 4096x4096x7168 0.2358 -> 0.2304 ms, 8192^3 1.075 -> 1.035; bench/RESULTS.md 2026-11-27
   * third session); before, level. */
  if (c->block_scales == HG_BLOCK_SCALES_SMEM && !c->promote_overlap && !r->mma_turns) {
    t = *c;
    t.promote_overlap = HG_PROMOTE_DOUBLE;
    ok = hg_gemm_config_check(p, &t);
    if (hg_is_ok(&ok)) *c = t;
  }
}

/* The rule pp (an A/B switch for measurement, off by default: measured slower): a chain with an
 * expensive activation (erf or tanh GELU, SiLU, sigmoid: 10-15 instructions a value) on a
 * cooperative 128-row tile without split-K or stream-K becomes a ping-pong tile, so that one
 * consumer's epilogue overlaps the other's main loop: 128 x 192 (192 accumulators a thread)
 * where its epilogue compiles without spills - 16-bit D, bias and activation only, a 1x2 or
 * one-CTA cluster (ptxas spilled 8-16 bytes on 2x1 clusters, 8 with row scales, 64 with f32
 * D, 150 with fp8 D, 24-48 with aux) - else 128 x 128 (no spills with any chain tried);
 * pp128 always 128 x 128. */
static void epi_schedule_rule(const hg_gemm_problem_t *p, const hg_gemm_rules_t *r,
                              hg_gemm_config_t *c) {
  const bool costly = p->act == HG_ACT_GELU || p->act == HG_ACT_GELU_TANH ||
                      p->act == HG_ACT_SILU || p->act == HG_ACT_SIGMOID;
  const int widest = r->epi_pingpong;
  if (!widest || !costly || c->schedule != HG_SCHED_COOPERATIVE || c->tile_m != 128 ||
      c->splits > 1 || c->stream_k || p->group != HG_GROUP_NONE)
    return;
  const bool wide_ok = widest == 192 && hg_dtype_bytes(p->d_type) == 2 && !p->aux && !p->rowscale &&
                       !p->colscale && !p->residual && p->beta == 0.0f;
  for (int wide = wide_ok ? 1 : 0; wide >= 0; wide--) {
    hg_gemm_config_t t = *c;
    t.schedule = HG_SCHED_PINGPONG;
    if (t.tile_n > (wide ? 192 : 128)) t.tile_n = wide ? 192 : 128;
    if (wide && t.cluster_m > 1) t.cluster_m = 1, t.cluster_n = 2;
    t.epi_n = 0;
    t.stages = hg_gemm_max_stages(p, &t);
    if (t.stages > 8) t.stages = 8;
    hg_status_t ok = hg_gemm_config_check(p, &t);
    if (hg_is_ok(&ok)) {
      *c = t;
      return;
    }
  }
}

hg_status_t hg_gemm_heuristic_for(const hg_gemm_problem_t *p_in, hg_gemm_mainloop_t mainloop,
                                  int sm_count, const hg_gemm_rules_t *rules,
                                  hg_gemm_config_t *out) {
  static const hg_gemm_rules_t defaults = {0};
  const hg_gemm_rules_t *r = rules ? rules : &defaults;
  if (r->epi_pingpong != 0 && r->epi_pingpong != 128 && r->epi_pingpong != 192)
    return hg_error(HG_ERR_INVALID,
                    "heuristic rule epi_pingpong = %d: 0 (off), 128 (pp128) or 192 (pp)",
                    r->epi_pingpong);
  hg_gemm_problem_t p = *p_in, asked = *p_in;
  HG_TRY(hg_gemm_problem_normalize(&p));
  HG_TRY(hg_gemm_problem_normalize(&asked));
  /* batch invariance: the choice for a fixed M (the checks below still see the real one) */
  if (p.batch_invariant) p.m = 4096;
  /* grouped: plan for the mean group (contiguous rows are every group's; masked ones each
   * group's capacity) */
  if (p.group == HG_GROUP_CONTIGUOUS) p.m = p.m / p.batch > 0 ? p.m / p.batch : 1;
  /* cp.async cannot multicast: no clusters on that path. */
  const hg_gemm_mainloop_t ml = hg_gemm_mainloop_resolve(&p, mainloop);
  /* decode shapes whose rows TMA cannot address (any, under the rule dv): the decode kernel,
   * operands read in place (no repack) */
  if (ml == HG_MAINLOOP_LDG_MMASYNC ||
      (mainloop == HG_MAINLOOP_AUTO && hg_gemm_decode_rule(&asked, r)))
    return hg_gemm_decode_heuristic(&asked, sm_count, out);
  const bool no_cluster = ml == HG_MAINLOOP_CPASYNC_WGMMA || hg_gemm_operand_align(&p, 0) != 16 ||
                          hg_gemm_operand_align(&p, 1) != 16;
  /* mma.sync keeps B fragments, and wgmma RS a k-block of A fragments, next to the
   * accumulators: more than 96 (mma.sync) or 128 (RS) accumulators per thread spill (ptxas,
   * 232 registers). */
  const int max_acc = ml == HG_MAINLOOP_TMA_MMASYNC             ? 96
                      : ml == HG_MAINLOOP_TMA_LDMATRIX_WGMMA_RS ? 128
                                                                : 240;
  if (sm_count <= 0) sm_count = 132;
  /* the wave model's products (tiles x SMs, splits x SMs) are kept in 64 bits, but counts past
   * any GPU's are refused rather than reasoned about */
  if (sm_count > HG_GEMM_MAX_SMS)
    return hg_error(HG_ERR_INVALID, "an SM count of %d: give 1..%d (0 or less: an H100's 132)",
                    sm_count, HG_GEMM_MAX_SMS);
  const bool fp8 = is8(p.a_type);
  const int tile_k = fp8 ? 128 : 64;
  static const int tms[] = {128, 256, 64};
  static const int tns[] = {256, 224, 192, 176, 160, 128, 112, 96, 64};
  /* One 64-row tile of a long K (the weights streamed): 64 x 128 tiles without a cluster
   * against the 64 x 64 ones in 1x2 clusters the wave model took. Same call
   * (bench/RESULTS.md, 2026-11-27 sixth session), ms 64x64 c1x2 -> 64x128 c1x1: H100 bf16
   * 64x7168x16384 0.0839 -> 0.0833, 48x8192x8192 0.0492 -> 0.0489, 32x7168x8192 0.0447 ->
   * 0.0434; e4m3 64x7168x16384 level, 48x8192x8192 0.0273 -> 0.0270, 32x7168x8192 0.0285 ->
   * 0.0240; H200 64x7168x16384 bf16 0.0661 -> 0.0633, e4m3 0.0357 -> 0.0336. 64 x 128 in a
   * 1x2 cluster ran 1-4% slower than without (H100, same shapes). Block-wise scales keep the
   * model's choice (not measured). */
  const bool stream_w = p.m <= 64 && p.n >= 2048 && p.k >= 8192 && p.scale != HG_SCALE_BLOCK;
  hg_gemm_config_t best = {0};
  hg_status_t why = hg_ok(); /* the first refusal: why nothing fits, if nothing does */
  double best_t = 0;
  for (size_t i = 0; i < sizeof tms / sizeof tms[0]; i++)
    for (size_t j = 0; j < sizeof tns / sizeof tns[0]; j++) {
      hg_gemm_config_t c = {.tile_m = tms[i],
                            .tile_n = tns[j],
                            .tile_k = tile_k,
                            .cluster_m = 1,
                            .cluster_n = 1,
                            .stages = 2,
                            .schedule = HG_SCHED_COOPERATIVE,
                            .raster = HG_RASTER_M,
                            .raster_group = 8,
                            .epi_n = 0,
                            .mainloop = mainloop};
      /* Two consumer warpgroups hold tile_m x tile_n f32 accumulators: at most 240 each
       * (two sets of at most 192 in all with fp8's promotion). */
      if (acc_per_thread(&p, &c) > (hg_gemm_promote(&p) ? promote_acc_max(&p) : max_acc)) continue;
      /* fp8 with promotion: 128 x 176 and 128 x 192 tiles (two sets of 88-96 accumulators a
       * thread) beside 128 x 128, chosen by the wave model like any other width. H100,
       * accurate e4m3, same call (bench/RESULTS.md, 2026-11-27 fifth session), TFLOP/s of
       * the 128 x 128 heuristic -> 128 x 176 / 192 in 2x1 clusters: 4096x2112x7168 1092 ->
       * 1327 / 1282, 16384^3 1182 -> 1230 / 1282, 8192x8192x28672 1201 -> 1336 / 1337, 4096^3
       * 1252 -> 1286 / 1223, 8192^3 1362 -> 1387 / 1428, 4096x7168x16384 1368 -> 1410 /
       * 1351, 3000x5000x4000 950 -> 1057 / 1185, 8192x28672x8192 1228 -> 1398 / 1325; 2048^3
       * 967 -> 806 / 804 (one and a bit waves: the model keeps 128 x 128 there). The earlier
       * measurement that excluded them (953-1060 against 1202-1243) predates the wgmma
       * register fix. Other widths (160, 224, 256) stay out: unmeasured, or over the two
       * sets' 192 accumulators; block-wise scales keep 128 x 128 (a tile's columns lie in one
       * 128-wide scale block); 192 not beside an amax (fp8 D's reduction spilled 56-60 bytes
       * there, ptxas). Grouped GEMMs the same (per tensor, E x tokens x 4096 x 7168,
       * TFLOP/s of 128 x 128 -> 128 x 176 / 192 in 2x1 clusters: 8 x 4096 1183-1213 ->
       * 1226-1314 / 1345, 16 x 2048 1171-1187 -> 1297-1300 / 1334-1339, 32 x 512 1208 ->
       * 1232-1235 / 1268-1269, 64 x 256 1102 -> 1104-1106 / 1134-1137; row-wise 128 x 176
       * 4-10% faster; row and column scale vectors keep to 176 as row-wise scales do:
       * PROMOTE_ACC_MAX_ROW). */
      if (hg_gemm_promote(&p) && c.tile_m >= 128 && c.tile_n > 128 &&
          ((c.tile_n != 176 && c.tile_n != 192) || p.scale == HG_SCALE_BLOCK ||
           (c.tile_n == 192 && (p.amax || p.rowscale || p.colscale))))
        continue;
      /* ... and narrower ones only where 128-column tiles would not fill the GPU (4096x2112x
       * 7168: 823 TFLOP/s at 128x64, 1013 at 128x128; 128x7168x2048 keeps 128x64) */
      if (hg_gemm_promote(&p) && c.tile_m >= 128 && c.tile_n < 128 && p.m > 128 &&
          (p.m + 127) / 128 * ((p.n + 127) / 128) * p.batch >= sm_count)
        continue;
      /* 112 columns only on 64-row tiles, and only with fp8's promotion: half of the 224 that
       * two accumulator sets cannot hold, for weights whose 128-column tiles leave a partial
       * wave (e4m3 Mx28672x4096: 224 tiles of 128 on 132 SMs, 256 of 112). H200, same call
       * (bench/RESULTS.md, 2026-11-27 sixth session), ms at 64x128 -> 64x112: M = 1 0.0356 ->
       * 0.0334, M = 8 0.0359 -> 0.0337; 16-bit operands take 224 there (one wave). */
      if (c.tile_n == 112 && (c.tile_m != 64 || !hg_gemm_promote(&p))) continue;
      /* Decode (M <= 32 against a wide weight matrix): tiles under 128 columns lose - bf16
       * Mx7168x2048 on the H100 at 200 iterations ran 6-17% faster at 64x128 than at 64x64
       * for M = 1-24 (at M = 48 64x64 still won); fp8 keeps its choice (1.04-1.13x cuBLASLt
       * at 64x64). */
      if (!fp8 && p.m <= 32 && p.n >= 2048 && c.tile_n < 128) continue;
      /* ... and at any type for one 64-row tile of a long K (stream_w, above) */
      if (stream_w && c.tile_n < 128) continue;
      /* Share the operand that many tiles read: B across M when there are several M tiles,
       * A across N when M fits one tile. */
      const int64_t tiles_m = (p.m + c.tile_m - 1) / c.tile_m;
      const int64_t tiles_n = (p.n + c.tile_n - 1) / c.tile_n;
      /* When M fits one tile, sharing A across an N-pair pays only for long K: at K = 2048 the
       * cluster's coupling cost more than it saved (H200: 128x7168x2048 ran 0.90x cuBLASLt
       * with a 1x2 cluster, 1.12x without; 64x7168x16384 gained from it). */
      /* fp8 with promotion on 128x128 tiles shares A across an N-pair instead: H100, same call
       * (bench/RESULTS.md, 2026-11-27 third session), block-wise 3-5% faster on every
       * M = 4096 shape and 8192^3; per-tensor accurate 7-23% faster from 48 N-tiles up
       * (8192^3, 8192x8192x28672, 16384^3, 4096x7168x16384, 4096x24576x1536) but 2-5% slower
       * below (2048^3, 4096x2112x7168, 3000x5000x4000); fast accumulation (128x256) loses. */
      const bool share_a = hg_gemm_promote(&p) && c.tile_m == 128 && c.tile_n == 128 &&
                           p.group == HG_GROUP_NONE && (p.scale == HG_SCALE_BLOCK || tiles_n >= 48);
      /* No cluster for a short K (8 k-blocks of bf16, 4 of fp8, or fewer): the cluster's
       * launch and barriers are not paid back. H100, same call, ms with / without a 2x1
       * cluster: 4096x4096x512 bf16 0.0314 / 0.0300 (128x256), e4m3 0.0237 / 0.0221
       * (128x128); 16896x256x512 bf16 0.0126 / 0.0119, e4m3 0.0100 / 0.0087; 8192x8192x512
       * bf16 level, e4m3 0.0784 / 0.0756. At K = 1024 the clusters win again (8192^2 x 1024
       * e4m3 0.1235 with one against 0.1261 without). Not for block-wise scales: 4096x32768x512
       * ran 0.1654 ms in a 1x2 cluster against 0.1779 without (same call). */
      /* A grouped GEMM's tiles are every group's: clusters pay where all of them fill the GPU
       * (H100, bf16 128x256, same call, TFLOP/s without / with a 2x1 cluster: 64 experts x
       * 256 tokens x 4096 x 7168 374-383 / 646-650, 32 x 512 694-702 / 768, 16 x 2048 706-776 /
       * 787; 8 x 4096, which had one already, 758 / 699-740, and x 2048 765-784 / 787-805) */
      const int64_t all_tiles = tiles_m * tiles_n * (p.group != HG_GROUP_NONE ? p.batch : 1);
      /* A wave of 128 x 128 tiles covering 0.9 of the SMs or more counts as full where the
       * cluster's pairs still fit one wave (unless the rule nocw). Same call, bench/RESULTS.md
       * (thirteenth session), H100 / H200: 400x4000x4096 bf16 +17% / +13%, e4m3 +12% / +15%,
       * 1000x2000x6000 bf16 +19% / +17%, e4m3 +29% / +27%, fp8 row-wise +21-27% and block-wise
       * +11-24% (H200). Not wider tiles: 2048^3's 128 tiles of 128x256 ran 6% slower in 2x1
       * clusters (H100), nor narrower: 1024x1024x8192's 128x64 5-13% slower, 128x4096x8192's
       * 64x64 2-4% slower. */
      int64_t full = sm_count;
      if (!r->no_cluster_wave && c.tile_m == 128 && c.tile_n == 128 && all_tiles < sm_count) {
        const int64_t pairs =
            share_a ? tiles_m * ((tiles_n + 1) / 2 * 2) : (tiles_m + 1) / 2 * 2 * tiles_n;
        if (pairs <= sm_count) full = (9 * (int64_t)sm_count + 9) / 10;
      }
      if (no_cluster || (p.k <= 512 && p.scale != HG_SCALE_BLOCK))
        ;
      else if (tiles_m >= 2 && all_tiles >= full && share_a)
        c.cluster_n = 2;
      else if (tiles_m >= 2 && all_tiles >= full)
        c.cluster_m = 2;
      else if (tiles_m == 1 && tiles_n >= 2 && p.k >= 8192 && !(stream_w && c.tile_m == 64))
        c.cluster_n = 2;
      c.stages = hg_gemm_max_stages(&p, &c);
      if (c.stages > 8) c.stages = 8;
      hg_status_t ok = hg_gemm_config_check(&p, &c);
      if (hg_is_ok(&ok)) ok = hg_gemm_config_check(&asked, &c);
      if (!hg_is_ok(&ok)) {
        if (hg_is_ok(&why)) why = ok;
        continue;
      }
      double t = estimate(&p, &c, sm_count);
      /* stream-K where the model says it saves 5% or more (a partial last wave of few
       * waves): past that its fix-up's cost is not known well enough to bet on */
      const double t_sk = r->stream_k ? stream_k_estimate(&p, &c, sm_count, t) : INFINITY;
      if (t_sk < 0.95 * t) c.stream_k = 1, t = t_sk;
      /* Earlier candidates are the better-trodden shapes: a later one must win clearly. */
      if (best.tile_m == 0 || t < best_t * 0.97) {
        best = c;
        best_t = t;
      }
    }
  if (best.tile_m == 0)
    return hg_is_ok(&why) ? hg_error(HG_ERR_INVALID, "no GEMM configuration fits this problem")
                          : hg_status_wrap(why, "no GEMM configuration fits this problem: ");
  /* a grouped GEMM's scheduler does not split K */
  if (!p.batch_invariant && p.group == HG_GROUP_NONE) split_k(&p, sm_count, r, &best);
  if (best.splits > 1) best.stream_k = 0; /* split-K's few tiles: its own rule */
  /* No promotion overlap by default: measured on the H100 (gemm-fp8.sh overlap, same call),
   * staggered promotions (ps) ran 2-30% slower than none on 128x176/192 tiles and within 3%
   * either way on 128x128 ones, two partial sets (pd) 2-6x slower under block scales on
   * 128-row tiles (175 against 914 TFLOP/s at 4096x7168x16384) and 47-58% slower per tensor.
   * The tuner still tries both. */
  block_wide_rule(&p, sm_count, &best);
  block_scale_rule(&p, r, &best);
  epi_schedule_rule(&asked, r, &best);
  /* The erf GELU through tanh.approx (poly5t, gt5: one MUFU operation a value, not two)
   * where D cannot show its error (about 3e-4 |x|: under half an ulp of bf16, f16 and fp8);
   * f32 D keeps poly7 (2e-7 |x|). H100, same call (bench/RESULTS.md): bias + GELU over the
   * plain GEMM +2.6-4.0% against poly7's +4.6-6.8% at 4096^3, +0.4-1.2% against +4.2-4.9% at
   * 8192x28672x8192; --check's error the same as poly7's for bf16 and f16 D (alpha 0.05:
   * values where GELU bends), 3.2e-6 against 2.4e-7 for f32 D. */
  if (p.act == HG_ACT_GELU && p.d_type != HG_F32) best.gelu = HG_GELU_TANH5;
  *out = best;
  return hg_ok();
}

/* A tile the tuner may time: its accumulators fit a thread (at most 240, two sets of at most
 * promote_acc_max with fp8's promotion), and it is not a block-scaled tile over 192 columns:
 * 256 has not been checked on a GPU (192 has: scripts/gpu-check.sh bs192 on both cards, with
 * the scales by cp.async and by TMA), and the tuner times candidates without checking them. */
static bool tune_tile_ok(const hg_gemm_problem_t *p, const hg_gemm_config_t *c) {
  return acc_per_thread(p, c) <= (hg_gemm_promote(p) ? promote_acc_max(p) : 240) &&
         !(p->scale == HG_SCALE_BLOCK && c->tile_n > 192);
}

int hg_gemm_tune_space(const hg_gemm_problem_t *p_in, hg_gemm_config_t *out, int cap) {
  hg_gemm_problem_t p = *p_in;
  hg_status_t s = hg_gemm_problem_normalize(&p);
  if (!hg_is_ok(&s)) return 0;
  const bool fp8 = is8(p.a_type);
  /* Decode shapes: the decode kernel's candidates first (the space is cut at cap) */
  int n = hg_gemm_decode_tune_space(&p, out, cap);
  /* Tiles of both consumer shapes, the widths the heuristic's wave model likes (176, 192),
   * clusters along either operand, both schedules, the most stages that fit. */
  static const int tiles[][2] = {{128, 256}, {256, 128}, {128, 192}, {128, 176},
                                 {128, 128}, {128, 64},  {64, 256},  {64, 128}};
  static const int clusters[][2] = {{1, 1}, {2, 1}, {1, 2}};
  for (size_t ti = 0; ti < sizeof tiles / sizeof tiles[0]; ti++)
    for (size_t ci = 0; ci < sizeof clusters / sizeof clusters[0]; ci++)
      for (int sched = 0; sched < 2; sched++) {
        hg_gemm_config_t c = {.tile_m = tiles[ti][0],
                              .tile_n = tiles[ti][1],
                              .tile_k = fp8 ? 128 : 64,
                              .cluster_m = clusters[ci][0],
                              .cluster_n = clusters[ci][1],
                              .stages = 2,
                              .schedule = sched ? HG_SCHED_PINGPONG : HG_SCHED_COOPERATIVE,
                              .raster = HG_RASTER_M,
                              .raster_group = 8};
        if (!tune_tile_ok(&p, &c)) continue;
        n = add_fitting(&p, c, out, cap, n);
        /* fp8's accurate accumulation: each promotion overlap too, where it applies (the
         * check refuses the rest) */
        for (int ov = HG_PROMOTE_STAGGER; hg_gemm_promote(&p) && ov <= HG_PROMOTE_DOUBLE; ov++) {
          c.promote_overlap = ov;
          n = add_fitting(&p, c, out, cap, n);
        }
        c.promote_overlap = 0;
        /* block-wise scales (a drain every k-block): the scales staged in shared memory,
         * with and without MMA turns (pt alone is left to --config: the space stays within
         * HG_GEMM_TUNE_MAX with stream-K's and split-K's entries) */
        if (p.scale == HG_SCALE_BLOCK) {
          static const int variants[][2] = {{0, HG_BLOCK_SCALES_SMEM},
                                            {HG_PROMOTE_TURNS, HG_BLOCK_SCALES_SMEM}};
          for (int v = 0; v < 2; v++) {
            c.promote_overlap = variants[v][0];
            c.block_scales = variants[v][1];
            n = add_fitting(&p, c, out, cap, n);
          }
          c.promote_overlap = 0;
          c.block_scales = HG_BLOCK_SCALES_GLOBAL;
        }
      }
  /* Stream-K on one-CTA clusters of 128-row tiles and more, both schedules: the grid's CTAs
   * share the last partial wave's k-blocks (the check refuses it for batch-invariant and
   * grouped problems). */
  for (size_t ti = 0; ti < sizeof tiles / sizeof tiles[0]; ti++)
    for (int sched = 0; sched < 2 && tiles[ti][0] >= 128; sched++) {
      hg_gemm_config_t c = {.tile_m = tiles[ti][0],
                            .tile_n = tiles[ti][1],
                            .tile_k = fp8 ? 128 : 64,
                            .cluster_m = 1,
                            .cluster_n = 1,
                            .schedule = sched ? HG_SCHED_PINGPONG : HG_SCHED_COOPERATIVE,
                            .raster = HG_RASTER_M,
                            .raster_group = 8,
                            .stream_k = 1};
      if (!tune_tile_ok(&p, &c)) continue;
      n = add_fitting(&p, c, out, cap, n);
    }
  /* Split-K on the split heuristic's tiles, when the output has few tiles (at most 33 of
   * 64 x 128: a quarter of 132 SMs) and each split keeps 256 of K or more; 64 x 64 tiles
   * unsplit too (the heuristic's answer to short splits, not among the tiles above). */
  static const int split_tiles[][2] = {{64, 64}, {64, 128}, {128, 128}};
  for (size_t ti = 0; ti < sizeof split_tiles / sizeof split_tiles[0]; ti++) {
    hg_gemm_config_t c = {.tile_m = split_tiles[ti][0],
                          .tile_n = split_tiles[ti][1],
                          .tile_k = fp8 ? 128 : 64,
                          .cluster_m = 1,
                          .cluster_n = 1,
                          .schedule = HG_SCHED_COOPERATIVE,
                          .raster = HG_RASTER_M,
                          .raster_group = 8};
    /* (64 x 64 counted as 64 x 128 tiles: the output's size, not this tiling's) */
    const int64_t tiles = (p.m + c.tile_m - 1) / c.tile_m * ((p.n + 127) / 128) * p.batch;
    if (tiles > 33) continue;
    if (c.tile_n == 64) n = add_fitting(&p, c, out, cap, n);
    for (int splits = 2; splits <= HG_SCHED_MAX_SPLITS && p.k / splits >= 256; splits *= 2) {
      c.splits = splits;
      c.split_atomic = 0;
      n = add_fitting(&p, c, out, cap, n);
      /* and by atomic adds, where the problem allows them */
      if (!p.deterministic && !p.batch_invariant) {
        c.split_atomic = 1;
        n = add_fitting(&p, c, out, cap, n);
      }
    }
    c.split_atomic = 0;
  }
  return n < cap ? n : cap;
}

/* ------------------------------------------------------------------ shape sets */

typedef struct shape_set {
  const char *name;
  int count;
  int64_t shapes[HG_GEMM_SET_MAX][3];
} shape_set_t;

/* What users run: the LLM training/inference shapes; decode steps (M of 1-48) against the
 * weights of a 7B-70B model; outputs of few tiles with long K (split-K's case); sizes TMA
 * cannot address; a few waves of tiles on 132 SMs; and rows that are not 16-byte multiples. */
static const shape_set_t sets[] = {
    {"llm",
     13,
     {{2048, 2048, 2048},
      {4096, 4096, 4096},
      {8192, 8192, 8192},
      {16384, 16384, 16384},
      {8192, 28672, 8192},
      {8192, 8192, 28672},
      {4096, 7168, 2048},
      {4096, 2112, 7168},
      {4096, 24576, 1536},
      {4096, 7168, 16384},
      {128, 7168, 2048},
      {128, 24576, 1536},
      {64, 7168, 16384}}},
    {"decode", 20, {{1, 7168, 2048},  {2, 7168, 2048},   {8, 7168, 2048},   {24, 7168, 2048},
                    {48, 7168, 2048}, {1, 2048, 7168},   {2, 2048, 7168},   {8, 2048, 7168},
                    {24, 2048, 7168}, {48, 2048, 7168},  {1, 28672, 4096},  {2, 28672, 4096},
                    {8, 28672, 4096}, {24, 28672, 4096}, {48, 28672, 4096}, {1, 4096, 28672},
                    {2, 4096, 28672}, {8, 4096, 28672},  {24, 4096, 28672}, {48, 4096, 28672}}},
    {"splitk", 4, {{128, 128, 32768}, {512, 512, 16384}, {64, 1024, 65536}, {192, 320, 40000}}},
    {"odd",
     5,
     {{1001, 999, 4097}, {4095, 4097, 127}, {333, 7777, 2222}, {1, 12345, 678}, {5000, 3, 4096}}},
    {"waves",
     4,
     {{2500, 3500, 1000}, {1536, 6000, 900}, {3300, 3300, 3300}, {132 * 128, 256, 512}}},
    /* between split-K's few tiles and the waves: one wave or less of tiles over a long K,
     * shapes off the other sets that ran at 0.52-0.91 of cuBLASLt when screened (H100,
     * bench/RESULTS.md, twelfth session), and some the split_k_wide rule was cut on */
    {"mid",
     14,
     {{200, 2000, 16384},
      {400, 4000, 4096},
      {3000, 200, 16384},
      {1000, 2000, 6000},
      {600, 2400, 12000},
      {250, 5000, 8192},
      {384, 1536, 8192},
      {300, 3000, 8192},
      {768, 768, 12288},
      {1024, 1024, 8192},
      {256, 512, 24576},
      {640, 256, 30000},
      {128, 4096, 8192},
      {2304, 2304, 2304}}},
    {"unaligned",
     6,
     {{2048, 2048, 2049},
      {4096, 4096, 4097},
      {8192, 8192, 8191},
      {4096, 4099, 4096},
      {1000, 1000, 1003},
      {4096, 7168, 2050}}},
    /* fp8 with block-wise (DeepSeek-V3) or row-wise scales: its projections at M = 64, 128,
     * 4096, and the issue's anchor shapes (hopgen bench gemm sets the scaling by the name) */
    {"fp8block",
     22,
     {{64, 2112, 7168},   {128, 2112, 7168},   {4096, 2112, 7168}, {64, 24576, 1536},
      {128, 24576, 1536}, {4096, 24576, 1536}, {64, 32768, 512},   {128, 32768, 512},
      {4096, 32768, 512}, {64, 7168, 16384},   {128, 7168, 16384}, {4096, 7168, 16384},
      {64, 4096, 7168},   {128, 4096, 7168},   {4096, 4096, 7168}, {64, 7168, 2048},
      {128, 7168, 2048},  {4096, 7168, 2048},  {8192, 8192, 8192}, {128, 7168, 2048},
      {4096, 2112, 7168}, {4096, 7168, 16384}}},
    {"fp8row",
     8,
     {{4096, 7168, 16384},
      {4096, 2112, 7168},
      {8192, 8192, 8192},
      {128, 7168, 2048},
      {64, 7168, 16384},
      {4096, 24576, 1536},
      {4096, 4096, 4096},
      {8192, 28672, 8192}}},
};

static const char *const set_names[] = {"llm", "decode",    "splitk",   "odd",    "waves",
                                        "mid", "unaligned", "fp8block", "fp8row", NULL};

const char *const *hg_gemm_shape_set_names(void) {
  return set_names;
}

hg_status_t hg_gemm_shape_set(const char *name, int64_t (*shapes)[3], int *count) {
  for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
    if (name && !strcmp(name, sets[i].name)) {
      memcpy(shapes, sets[i].shapes, sizeof(int64_t) * 3 * (size_t)sets[i].count);
      *count = sets[i].count;
      return hg_ok();
    }
  return hg_error(HG_ERR_INVALID,
                  "shape set '%s' is not one of llm, decode, splitk, odd, waves, mid, unaligned, "
                  "fp8block, fp8row (or all)",
                  name ? name : "(null)");
}
