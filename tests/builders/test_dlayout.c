/* Dynamic layouts against the static algebra, with the CPU oracle: random layouts whose
 * leaves are partly kernel parameters, every supported operation emitted through a
 * builder, the emitted arithmetic interpreted with the parameter values substituted
 * (tests/support/ir_eval.c), and the result compared with src/layout on the same values.
 * A fully static input must give the static result exactly and emit nothing. A dynamic
 * one gives it exactly unless a run-time value makes a mode 1 or two modes contiguous that
 * could not be known before (CuTe keeps such modes): then the same function, mode by mode.
 * Hand-derived cases check folding, the emitted instruction mix of the GEMM's index math,
 * signed coordinates, and the refusals. */
#include <string.h>

#include "hopgen/dlayout.h"
#include "layout/layout_test_util.h"
#include "hopgen/builders.h"
#include "layout/layout_internal.h"
#include "support/ir_eval.h"

#define MAX_PARAMS 60 /* below the builder's 64 */

/* ---------------------------------------------------------------- random numbers */

static uint64_t rng = 0x2545f4914f6cdd1dull;
static int rnd(int n) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (int)(rng % (uint64_t)n);
}

/* ---------------------------------------------------------------- one case */

typedef struct dcase {
  hg_builder_t *b;
  int np;
  int64_t pv[MAX_PARAMS];
  ir_eval_t ev;
  bool ran;
  hg_status_t run_status;
} dcase_t;

static void case_begin(dcase_t *c) {
  memset(c, 0, sizeof *c);
  CHECK_OK(hg_builder_create("dl", &c->b));
}

static void case_end(dcase_t *c) {
  if (c->ran) ir_eval_free(&c->ev);
  hg_builder_destroy(c->b);
}

/* A kernel parameter holding value (I32 or I64 at random). */
static hg_val_t param(dcase_t *c, int64_t value) {
  char name[16];
  snprintf(name, sizeof name, "p%d", c->np);
  c->pv[c->np++] = value;
  return hg_b_param(c->b, rnd(3) ? HG_T_I32 : HG_T_I64, name);
}

/* A dynamic integer whose run-time value is v: a parameter, or k * parameter for a
 * divisor k of v (so monomial reasoning gets exercised), signed as v allows. */
static hg_dint_t dyn(dcase_t *c, int64_t v) {
  if (c->np >= MAX_PARAMS) return hg_dint(v);
  int64_t k = 1;
  if (v != 0 && rnd(3) == 0) {
    int64_t cand[] = {2, 3, 4, -1};
    k = cand[rnd(4)];
    if (v % k != 0) k = 1;
  }
  hg_dint_sign_t s = v >= 1 && rnd(2)   ? HG_DINT_POS
                     : v >= 0 && rnd(2) ? HG_DINT_NONNEG
                                        : HG_DINT_ANY;
  hg_dint_t x = hg_dint_val_sign(param(c, v / k), v / k >= 0 ? s : HG_DINT_ANY);
  hg_dint_t r;
  CHECK_OK(hg_dint_mul(c->b, hg_dint(k), x, &r));
  return r;
}

/* l with each leaf made dynamic with probability pct/100 (shapes keep their value >= 1). */
static hg_dlayout_t dynamize(dcase_t *c, const hg_layout_t *l, int pct, bool *any) {
  hg_dlayout_t d = hg_dlayout_static(l), r;
  for (int i = 0; i < l->shape.n; i++) {
    if (l->shape.arity[i] != HG_LEAF) continue;
    /* A run-time extent of 1 is legal, but then the static algebra drops the mode and
     * extends the layout past its end differently; in the domain both agree (see
     * test_extent_one), past it they need not, and divides reach past it. */
    if (rnd(100) < pct && l->shape.v[i] >= 2) {
      d.shape.d[i] = dyn(c, l->shape.v[i]);
      *any = true;
    }
    if (rnd(100) < pct) {
      d.stride.d[i] = dyn(c, l->stride.v[i]);
      *any = true;
    }
  }
  CHECK_OK(hg_dlayout_make(&d.shape, &d.stride, &r));
  return r;
}

static hg_status_t value_of(void *ctx, hg_val_t v, int64_t *out) {
  dcase_t *c = ctx;
  if (!c->ran) {
    c->run_status = ir_eval_run(c->b, c->pv, NULL, &c->ev);
    c->ran = true;
  }
  if (!hg_is_ok(&c->run_status)) return c->run_status;
  *out = ir_eval_get(&c->ev, v);
  return hg_ok();
}

/* The value of x at run time, through hg_dint_emit and the interpreter (so emission is
 * checked too), cross-checked with the monomial evaluated factor by factor. */
static bool dval(dcase_t *c, hg_dint_t x, int64_t *out) {
  if (hg_dint_is_static(x)) {
    *out = x.c;
    return true;
  }
  hg_val_t v;
  hg_status_t s = hg_dint_emit(c->b, x, HG_T_I64, &v);
  if (!hg_is_ok(&s)) {
    HG_FAIL("hg_dint_emit: %s", s.msg);
    return false;
  }
  if (c->ran) { /* the interpreter ran before this emission: run it again */
    ir_eval_free(&c->ev);
    c->ran = false;
  }
  int64_t got = 0, f = 0, prod = x.c;
  s = value_of(c, v, &got);
  if (!hg_is_ok(&s)) {
    HG_FAIL("ir_eval: %s", s.msg);
    return false;
  }
  for (int i = 0; i < x.n; i++) {
    value_of(c, x.f[i], &f);
    prod *= f;
  }
  CHECK_EQ(got, prod);
  *out = got;
  return true;
}

static bool subst(dcase_t *c, const hg_dlayout_t *d, hg_layout_t *out) {
  if (c->ran) {
    ir_eval_free(&c->ev);
    c->ran = false;
  }
  hg_status_t s = hg_dlayout_subst(d, value_of, c, out);
  if (!hg_is_ok(&s)) HG_FAIL("subst: %s", s.msg);
  return hg_is_ok(&s);
}

/* ---------------------------------------------------------------- comparing results */

/* Same size, same function on the whole domain, and mode by mode wherever both are tuples
 * of one rank (the modes a caller indexes). */
static bool same_function(const hg_layout_t *x, const hg_layout_t *y) {
  int64_t nx, ny, a, b;
  hg_status_t sx = hg_size(x, &nx), sy = hg_size(y, &ny);
  if (!hg_is_ok(&sx) || !hg_is_ok(&sy) || nx != ny) return false;
  for (int64_t i = 0; i < nx && i < 2048; i++) {
    hg_status_t s1 = hg_layout_eval(x, i, &a), s2 = hg_layout_eval(y, i, &b);
    if (!hg_is_ok(&s1) || !hg_is_ok(&s2) || a != b) return false;
  }
  if (hg_is_int(&x->shape) || hg_is_int(&y->shape) || hg_layout_rank(x) != hg_layout_rank(y))
    return true;
  for (int m = 0; m < hg_layout_rank(x); m++) {
    hg_layout_t mx, my;
    hg_layout_mode(x, m, &mx);
    hg_layout_mode(y, m, &my);
    if (!same_function(&mx, &my)) return false;
  }
  return true;
}

typedef struct stats {
  const char *name;
  int cases, statics, exact, same, refused, both_err;
} stats_t;

/* One layout result: the dynamic operation's (status, result) against the static one's. */
static void compare_layout(dcase_t *c, stats_t *st, const char *input, bool any_dyn, hg_status_t sd,
                           const hg_dlayout_t *rd, hg_status_t ss, const hg_layout_t *rs) {
  st->cases++;
  st->statics += !any_dyn;
  if (!hg_is_ok(&sd)) {
    if (sd.code == HG_ERR_UNSUPPORTED && any_dyn) {
      st->refused++;
      CHECK(strstr(sd.msg, "CuTe") != NULL); /* the sentence names the rule */
      return;
    }
    if (!hg_is_ok(&ss)) {
      st->both_err++;
      return;
    }
    HG_FAIL("%s %s: dynamic failed (%s), static gives %s", st->name, input, sd.msg, P(rs));
    return;
  }
  if (!hg_is_ok(&ss)) {
    char d[1024];
    hg_dlayout_print(rd, d, sizeof d);
    HG_FAIL("%s %s: dynamic gives %s, static fails (%s)", st->name, input, d, ss.msg);
    return;
  }
  if (!any_dyn) CHECK_EQ(ir_eval_op_count(c->b), 0); /* static parts fold: nothing emitted */
  hg_layout_t got;
  if (!subst(c, rd, &got)) return;
  if (!strcmp(P(&got), P(rs))) {
    st->exact++;
  } else if (any_dyn && same_function(&got, rs)) {
    st->same++;
  } else {
    char d[1024];
    hg_dlayout_print(rd, d, sizeof d);
    HG_FAIL("%s %s: dynamic %s = %s at run time, static %s", st->name, input, d, P(&got), P(rs));
  }
}

static void compare_int(dcase_t *c, stats_t *st, const char *input, bool any_dyn, hg_status_t sd,
                        hg_dint_t xd, hg_status_t ss, int64_t xs) {
  st->cases++;
  st->statics += !any_dyn;
  if (!hg_is_ok(&sd) && sd.code == HG_ERR_UNSUPPORTED && any_dyn) {
    st->refused++;
    return;
  }
  if (!hg_is_ok(&sd) || !hg_is_ok(&ss)) {
    if (!hg_is_ok(&sd) && !hg_is_ok(&ss)) {
      st->both_err++;
      return;
    }
    HG_FAIL("%s %s: dynamic %s, static %s", st->name, input, hg_is_ok(&sd) ? "ok" : sd.msg,
            hg_is_ok(&ss) ? "ok" : ss.msg);
    return;
  }
  if (!any_dyn) {
    CHECK(hg_dint_is_static(xd));
    CHECK_EQ(ir_eval_op_count(c->b), 0);
  }
  int64_t got;
  if (!dval(c, xd, &got)) return;
  if (got == xs) {
    st->exact++;
  } else {
    char d[160];
    hg_dint_print(xd, d, sizeof d);
    HG_FAIL("%s %s: dynamic %s = %lld at run time, static %lld", st->name, input, d, (long long)got,
            (long long)xs);
  }
}

/* ---------------------------------------------------------------- random inputs */

static const int sizes[] = {1, 2, 2, 3, 4, 4, 6, 8, 8, 16};

static void rand_shape_text(char **p, int depth) {
  if (depth > 0 && rnd(3) == 0) {
    int k = 1 + rnd(3);
    *p += sprintf(*p, "(");
    for (int j = 0; j < k; j++) {
      if (j) *p += sprintf(*p, ",");
      rand_shape_text(p, depth - 1);
    }
    *p += sprintf(*p, ")");
  } else {
    *p += sprintf(*p, "%d", sizes[rnd(10)]);
  }
}

static hg_tuple_t rand_shape(void) {
  char text[512], *p = text;
  if (rnd(5) == 0) {
    rand_shape_text(&p, 2);
  } else {
    int r = 1 + rnd(3);
    p += sprintf(p, "(");
    for (int i = 0; i < r; i++) {
      if (i) p += sprintf(p, ",");
      rand_shape_text(&p, 1);
    }
    sprintf(p, ")");
  }
  hg_tuple_t t;
  CHECK_OK(hg_tuple_parse(text, &t));
  return t;
}

static hg_layout_t rand_layout(void) {
  hg_tuple_t s = rand_shape();
  hg_layout_t l;
  int kind = rnd(10);
  if (kind < 4) {
    CHECK_OK(hg_make_layout_col_major(&s, &l));
  } else if (kind < 6) {
    CHECK_OK(hg_make_layout_row_major(&s, &l));
  } else {
    static const int strides[] = {0, 1, 1, 2, 3, 4, 8, 16, 32, -1, -2};
    l.shape = s;
    l.stride = s;
    for (int i = 0; i < s.n; i++)
      if (s.arity[i] == HG_LEAF) l.stride.v[i] = strides[rnd(11)];
  }
  return l;
}

/* A static tiler for l: one small layout, or by mode (nested for tuple modes). */
static void rand_slot(char **p, const hg_layout_t *m, int depth) {
  int k = rnd(10);
  if (!hg_is_int(&m->shape) && depth < 2 && k < 4) {
    int r = 1 + rnd(hg_layout_rank(m));
    *p += sprintf(*p, "[");
    for (int j = 0; j < r; j++) {
      hg_layout_t sm;
      hg_layout_mode(m, j, &sm);
      if (j) *p += sprintf(*p, ",");
      rand_slot(p, &sm, depth + 1);
    }
    *p += sprintf(*p, "]");
  } else if (k < 5) {
    *p += sprintf(*p, "_");
  } else if (k < 8) {
    *p += sprintf(*p, "%d", 1 + rnd(4));
  } else {
    static const char *small[] = {"2:2", "(2,2):(1,4)", "(2,3):(3,1)", "4:2", "3:1", "(2,2):(2,1)"};
    *p += sprintf(*p, "%s", small[rnd(6)]);
  }
}

static hg_tiler_t rand_tiler(const hg_layout_t *l, char *text) {
  char *p = text;
  if (rnd(4) == 0) {
    static const char *whole[] = {"4:1", "2:1", "(2,2):(1,4)", "8:2", "3:1", "(4,2):(2,1)"};
    sprintf(p, "%s", whole[rnd(6)]);
  } else {
    int r = 1 + rnd(hg_layout_rank(l));
    p += sprintf(p, "[");
    for (int i = 0; i < r; i++) {
      hg_layout_t m;
      hg_layout_mode(l, i, &m);
      if (i) p += sprintf(p, ",");
      rand_slot(&p, &m, 0);
    }
    sprintf(p, "]");
  }
  hg_tiler_t t = {0};
  CHECK_OK(hg_tiler_parse(text, &t));
  return t;
}

/* A coordinate for shape node si: a 1-D integer or a tuple, sometimes `_` (slices), values
 * around the domain (negative and past-the-end ones too, unless in_range). */
static void rand_coord_text(char **p, const hg_tuple_t *sh, int si, bool under, bool in_range) {
  int e = hgl_end(sh, si);
  int64_t size = 1;
  for (int q = si; q < e; q++)
    if (sh->arity[q] == HG_LEAF) size *= sh->v[q];
  if (under && rnd(4) == 0) {
    *p += sprintf(*p, "_");
  } else if (sh->arity[si] == HG_LEAF || rnd(3) == 0) {
    int64_t v = in_range ? rnd((int)size) : rnd((int)size + 3) - 1;
    *p += sprintf(*p, "%lld", (long long)v);
  } else {
    *p += sprintf(*p, "(");
    for (int j = 0, ch = si + 1; j < sh->arity[si]; j++, ch = hgl_end(sh, ch)) {
      if (j) *p += sprintf(*p, ",");
      rand_coord_text(p, sh, ch, under, in_range);
    }
    *p += sprintf(*p, ")");
  }
}

static hg_tuple_t rand_coord(const hg_tuple_t *shape, bool under, bool in_range) {
  char text[512], *p = text;
  rand_coord_text(&p, shape, 0, under, in_range);
  hg_tuple_t t;
  CHECK_OK(hg_tuple_parse(text, &t));
  return t;
}

/* t with each integer leaf made dynamic with probability pct/100. */
static hg_dtuple_t dyn_tuple(dcase_t *c, const hg_tuple_t *t, int pct, bool *any) {
  hg_dtuple_t d = hg_dtuple_static(t);
  for (int i = 0; i < t->n; i++)
    if (t->arity[i] == HG_LEAF && t->v[i] != HG_UNDERSCORE && rnd(100) < pct) {
      d.d[i] = dyn(c, t->v[i]);
      d.t.v[i] = d.d[i].c;
      *any = true;
    }
  return d;
}

/* ---------------------------------------------------------------- the random oracle */

enum {
  R_SIZE,
  R_COSIZE,
  R_COALESCE,
  R_COMPOSITION,
  R_COMPOSITION_TILER,
  R_LOGICAL_DIVIDE,
  R_ZIPPED_DIVIDE,
  R_TILED_DIVIDE,
  R_FLAT_DIVIDE,
  R_CRD2IDX,
  R_EVAL_IN_DOMAIN,
  R_IDX2CRD,
  R_SLICE,
  R_LOCAL_TILE,
  R_LOCAL_PARTITION,
  R_COMPLEMENT,
  R_COUNT
};

static stats_t stats[R_COUNT] = {
    {"size", 0, 0, 0, 0, 0, 0},
    {"cosize", 0, 0, 0, 0, 0, 0},
    {"coalesce", 0, 0, 0, 0, 0, 0},
    {"composition", 0, 0, 0, 0, 0, 0},
    {"composition_tiler", 0, 0, 0, 0, 0, 0},
    {"logical_divide", 0, 0, 0, 0, 0, 0},
    {"zipped_divide", 0, 0, 0, 0, 0, 0},
    {"tiled_divide", 0, 0, 0, 0, 0, 0},
    {"flat_divide", 0, 0, 0, 0, 0, 0},
    {"crd2idx", 0, 0, 0, 0, 0, 0},
    {"eval (in domain)", 0, 0, 0, 0, 0, 0},
    {"idx2crd", 0, 0, 0, 0, 0, 0},
    {"slice", 0, 0, 0, 0, 0, 0},
    {"local_tile", 0, 0, 0, 0, 0, 0},
    {"local_partition", 0, 0, 0, 0, 0, 0},
    {"complement", 0, 0, 0, 0, 0, 0},
};

typedef hg_status_t (*dyn_tiler_fn)(hg_builder_t *, const hg_dlayout_t *, const hg_tiler_t *,
                                    hg_dlayout_t *);
typedef hg_status_t (*static_tiler_fn)(const hg_layout_t *, const hg_tiler_t *, hg_layout_t *);

static void one_case(int op, int pct) {
  dcase_t c;
  case_begin(&c);
  bool any = false;
  hg_layout_t L = rand_layout(), rs, bl;
  hg_dlayout_t D = dynamize(&c, &L, pct, &any), rd;
  hg_dint_t xd = hg_dint(0), offd = hg_dint(0);
  int64_t xs = 0, offs = 0;
  hg_status_t sd = hg_ok(), ss = hg_ok();
  char input[1536], tt[512];
  int n = hg_layout_print(&L, input, 512);
  stats_t *st = &stats[op];
  switch (op) {
  case R_SIZE:
  case R_COSIZE:
    sd = op == R_SIZE ? hg_dl_size(c.b, &D, &xd) : hg_dl_cosize(c.b, &D, &xd);
    ss = op == R_SIZE ? hg_size(&L, &xs) : hg_cosize(&L, &xs);
    compare_int(&c, st, input, any, sd, xd, ss, xs);
    break;
  case R_COALESCE:
    sd = hg_dl_coalesce(c.b, &D, &rd);
    ss = hg_coalesce(&L, &rs);
    compare_layout(&c, st, input, any, sd, &rd, ss, &rs);
    break;
  case R_COMPOSITION: {
    static const char *bs[] = {"4:1",         "2:2", "(2,2):(1,2)", "3:1",
                               "(2,4):(4,1)", "8:2", "6:1",         "2:4"};
    bl = hg_layout_1d(1, 0);
    CHECK_OK(hg_layout_parse(bs[rnd(8)], &bl));
    snprintf(input + n, sizeof input - (size_t)n, " o %s", P(&bl));
    sd = hg_dl_composition(c.b, &D, &bl, &rd);
    ss = hg_composition(&L, &bl, &rs);
    compare_layout(&c, st, input, any, sd, &rd, ss, &rs);
    break;
  }
  case R_COMPOSITION_TILER:
  case R_LOGICAL_DIVIDE:
  case R_ZIPPED_DIVIDE:
  case R_TILED_DIVIDE:
  case R_FLAT_DIVIDE: {
    static const dyn_tiler_fn dfn[] = {hg_dl_composition_tiler, hg_dl_logical_divide,
                                       hg_dl_zipped_divide, hg_dl_tiled_divide, hg_dl_flat_divide};
    static const static_tiler_fn sfn[] = {hg_composition_tiler, hg_logical_divide, hg_zipped_divide,
                                          hg_tiled_divide, hg_flat_divide};
    hg_tiler_t t = rand_tiler(&L, tt);
    snprintf(input + n, sizeof input - (size_t)n, " by %s", tt);
    sd = dfn[op - R_COMPOSITION_TILER](c.b, &D, &t, &rd);
    ss = sfn[op - R_COMPOSITION_TILER](&L, &t, &rs);
    compare_layout(&c, st, input, any, sd, &rd, ss, &rs);
    break;
  }
  case R_CRD2IDX:
  case R_SLICE: {
    hg_tuple_t crd = rand_coord(&L.shape, op == R_SLICE, false);
    hg_dtuple_t dc = dyn_tuple(&c, &crd, pct, &any);
    hg_tuple_print(&crd, tt, sizeof tt);
    snprintf(input + n, sizeof input - (size_t)n, " at %s", tt);
    if (op == R_CRD2IDX) {
      sd = hg_dl_crd2idx(c.b, &D, &dc, 0, &xd);
      ss = hg_crd2idx(&L, &crd, &xs);
      compare_int(&c, st, input, any, sd, xd, ss, xs);
      break;
    }
    sd = hg_dl_slice(c.b, &D, &dc, &rd, &offd);
    ss = hg_slice(&L, &crd, &rs, &offs);
    compare_layout(&c, st, input, any, sd, &rd, ss, &rs);
    compare_int(&c, st, input, any, sd, offd, ss, offs);
    break;
  }
  case R_EVAL_IN_DOMAIN: {
    int64_t size;
    CHECK_OK(hg_size(&L, &size));
    int64_t i = rnd((int)size);
    hg_dint_t di = any || rnd(2) ? hg_dint_val_nonneg(param(&c, i)) : hg_dint(i);
    any = any || !hg_dint_is_static(di);
    snprintf(input + n, sizeof input - (size_t)n, " at index %lld", (long long)i);
    sd = hg_dl_eval(c.b, &D, di, HG_DL_IN_DOMAIN, &xd);
    ss = hg_layout_eval(&L, i, &xs);
    compare_int(&c, st, input, any, sd, xd, ss, xs);
    break;
  }
  case R_IDX2CRD: {
    /* A compact layout in some mode order (or none: column-major), any index, or an index
     * in the domain with HG_DL_IN_DOMAIN. */
    hg_layout_t cl;
    hg_tuple_t order = L.shape, crd = L.shape;
    for (int i = 0; i < order.n; i++)
      if (order.arity[i] == HG_LEAF) order.v[i] = rnd(8);
    CHECK_OK(hg_make_ordered_layout(&L.shape, &order, &cl));
    bool strided = rnd(2), in_dom = rnd(2);
    hg_dlayout_t DC = dynamize(&c, &cl, pct, &any);
    int64_t size;
    CHECK_OK(hg_size(&cl, &size));
    int64_t i = in_dom ? rnd((int)size) : rnd((int)(3 * size)) - size;
    hg_dint_t di = pct && rnd(4)
                       ? (i >= 0 ? hg_dint_val_nonneg(param(&c, i)) : hg_dint_val(param(&c, i)))
                       : hg_dint(i);
    any = any || !hg_dint_is_static(di);
    snprintf(input, sizeof input, "idx2crd %lld in %s%s", (long long)i, P(&cl),
             strided ? "" : " (column-major)");
    hg_dtuple_t out;
    sd = hg_dl_idx2crd(c.b, &DC.shape, strided ? &DC.stride : NULL, di,
                       in_dom ? HG_DL_IN_DOMAIN : 0, &out);
    if (!strided) {
      ss = hg_idx2crd(&cl.shape, i, &crd);
    } else {
      for (int k = 0; k < crd.n; k++)
        if (crd.arity[k] == HG_LEAF) {
          int64_t q;
          ss = hgl_floordiv(i, cl.stride.v[k], &q);
          if (hg_is_ok(&ss)) ss = hgl_mod(q, cl.shape.v[k], &crd.v[k]);
        }
    }
    for (int k = 0; k < crd.n; k++)
      if (crd.arity[k] == HG_LEAF) compare_int(&c, st, input, any, sd, out.d[k], ss, crd.v[k]);
    break;
  }
  case R_LOCAL_TILE: {
    hg_tiler_t t = rand_tiler(&L, tt);
    hg_layout_t z, m1;
    ss = hg_zipped_divide(&L, &t, &z);
    if (!hg_is_ok(&ss)) break;
    CHECK_OK(hg_layout_mode(&z, 1, &m1));
    hg_tuple_t crd;
    if (hg_is_int(&m1.shape) || rnd(3) == 0) {
      int64_t size;
      CHECK_OK(hg_size(&m1, &size));
      crd = hg_int(rnd((int)size));
    } else {
      int r = 1 + rnd(hg_layout_rank(&m1));
      int64_t v[8];
      for (int i = 0; i < r; i++) {
        hg_layout_t mm;
        int64_t size;
        CHECK_OK(hg_layout_mode(&m1, i, &mm));
        CHECK_OK(hg_size(&mm, &size));
        v[i] = rnd((int)size);
      }
      CHECK_OK(hg_tuple_ints(&crd, r, v));
    }
    hg_dtuple_t dc = dyn_tuple(&c, &crd, pct, &any);
    char cs[256];
    hg_tuple_print(&crd, cs, sizeof cs);
    snprintf(input + n, sizeof input - (size_t)n, " by %s at %s", tt, cs);
    sd = hg_dl_local_tile(c.b, &D, &t, &dc, &rd, &offd);
    ss = hg_local_tile(&L, &t, &crd, &rs, &offs);
    compare_layout(&c, st, input, any, sd, &rd, ss, &rs);
    compare_int(&c, st, input, any, sd, offd, ss, offs);
    break;
  }
  case R_LOCAL_PARTITION: {
    static const char *thrs[] = {"4:1",
                                 "(2,4):(1,2)",
                                 "(2,4):(4,1)",
                                 "(4,2):(2,1)",
                                 "(2,(2,2)):(4,(1,2))",
                                 "(2,2,2):(1,2,4)",
                                 "8:1",
                                 "2:1"};
    hg_layout_t thr;
    do CHECK_OK(hg_layout_parse(thrs[rnd(8)], &thr));
    while (hg_layout_rank(&thr) > hg_layout_rank(&L));
    int64_t nthr;
    CHECK_OK(hg_size(&thr, &nthr));
    int64_t i = rnd((int)nthr);
    hg_dint_t di = pct ? hg_dint_val_nonneg(param(&c, i)) : hg_dint(i);
    any = any || !hg_dint_is_static(di);
    snprintf(input + n, sizeof input - (size_t)n, " thread %lld of %s", (long long)i, P(&thr));
    sd = hg_dl_local_partition(c.b, &D, &thr, di, &rd, &offd);
    ss = hg_local_partition(&L, &thr, i, &rs, &offs);
    compare_layout(&c, st, input, any, sd, &rd, ss, &rs);
    compare_int(&c, st, input, any, sd, offd, ss, offs);
    break;
  }
  case R_COMPLEMENT: {
    /* A static injective layout (a compact one with some modes left out) and a bound. */
    hg_layout_t cl, pick;
    CHECK_OK(hg_make_layout_col_major(&L.shape, &cl));
    pick = cl;
    if (!hg_is_int(&cl.shape)) CHECK_OK(hg_layout_mode(&cl, rnd(hg_layout_rank(&cl)), &pick));
    int64_t cos;
    CHECK_OK(hg_cosize(&cl, &cos));
    int64_t bound = 1 + rnd((int)(2 * cos));
    hg_dint_t db = pct ? dyn(&c, bound) : hg_dint(bound);
    any = !hg_dint_is_static(db);
    snprintf(input, sizeof input, "complement of %s in %lld", P(&pick), (long long)bound);
    sd = hg_dl_complement(c.b, &pick, db, &rd);
    ss = hg_complement(&pick, bound, &rs);
    compare_layout(&c, st, input, any, sd, &rd, ss, &rs);
    break;
  }
  }
  case_end(&c);
}

static void test_random_oracle(void) {
  const int per_op = 600;
  for (int it = 0; it < per_op; it++)
    for (int op = 0; op < R_COUNT; op++) one_case(op, it % 5 == 0 ? 0 : 25 + rnd(70));
  int total = 0;
  for (int op = 0; op < R_COUNT; op++) {
    stats_t *s = &stats[op];
    fprintf(stderr,
            "  %-18s %4d cases (%3d static): %4d exact, %3d same function, %3d refused, %3d "
            "errors in both\n",
            s->name, s->cases, s->statics, s->exact, s->same, s->refused, s->both_err);
    total += s->cases;
    CHECK(s->exact > s->cases / 2);   /* most agree to the mode structure */
    CHECK(s->refused < s->cases / 2); /* refusals: the undecidable corner (a 1-D B over
                                       * several dynamic modes, mostly) */
  }
  fprintf(stderr, "  %d comparisons\n", total);
  CHECK(stats[R_COMPOSITION].refused > 0); /* the rule does fire */
}

/* ---------------------------------------------------------------- hand-derived cases */

/* How many ops of the builder (from op index `from`) are integer ops of code `bin` (or of
 * any BIN/MAD when bin < 0). */
static int count_bin(const hg_builder_t *b, int from, int bin) {
  return ir_eval_count_bin(b, from, bin);
}

static const char *DL(const hg_dlayout_t *l) {
  static char bufs[4][1024];
  static int k;
  char *b = bufs[k++ & 3];
  hg_dlayout_print(l, b, 1024);
  return b;
}

static const char *DI(hg_dint_t x) {
  static char bufs[4][160];
  static int k;
  char *b = bufs[k++ & 3];
  hg_dint_print(x, b, 160);
  return b;
}

static void test_fold_and_text(void) {
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("fold", &b));
  hg_val_t m = hg_b_param(b, HG_T_I32, "M"), ld = hg_b_param(b, HG_T_I64, "ld");
  hg_dint_t vals[2] = {hg_dint_val(m), hg_dint_val(ld)};
  const char *names[2] = {"M", "ld"};
  hg_dlayout_t l, r;
  /* (M,8):(1,M): M * 1 == M, so the modes merge into (8*M):1 without an instruction; the
   * extent M is marked >= 1 by hg_dlayout_make. */
  CHECK_OK(hg_dlayout_parse("(M,8):(1,M)", 2, names, vals, &l));
  CHECK_STR(DL(&l), "(%1,8):(1,%1)");
  CHECK_EQ(l.shape.d[1].sign, HG_DINT_POS);
  CHECK_OK(hg_dl_coalesce(b, &l, &r));
  CHECK_STR(DL(&r), "8*%1:1");
  /* Strides as scaled names; 64*ld stays symbolic, and so does the size 128*M. */
  CHECK_OK(hg_dlayout_parse("((64,M),2):((ld,64*ld),1)", 2, names, vals, &l));
  CHECK_STR(DL(&l), "((64,%1),2):((%2,64*%2),1)");
  hg_dint_t v;
  CHECK_OK(hg_dl_size(b, &l, &v));
  CHECK_STR(DI(v), "128*%1");
  CHECK_EQ(ir_eval_op_count(b), 0);
  /* A static layout folds completely: 13 in ((4,8),2):((2,16),1) is ((1,3),0) -> 50. */
  hg_layout_t sl;
  CHECK_OK(hg_layout_parse("((4,8),2):((2,16),1)", &sl));
  hg_dlayout_t sd = hg_dlayout_static(&sl);
  CHECK_OK(hg_dl_eval(b, &sd, hg_dint(13), 0, &v));
  CHECK(hg_dint_is(v, 50));
  CHECK_EQ(ir_eval_op_count(b), 0);
  /* logical_divide of M:1 by 128:1: (128, ceil(M/128)):(1,128); the ceiling is the only
   * instruction work, (M + 127) >> 7 (M >= 1, a power-of-two divisor). */
  CHECK_OK(hg_dlayout_parse("M:1", 2, names, vals, &l));
  hg_tiler_t t = {0};
  CHECK_OK(hg_tiler_parse("128:1", &t));
  CHECK_OK(hg_dl_logical_divide(b, &l, &t, &r));
  CHECK(!strncmp(DL(&r), "(128,%", 6) && strstr(DL(&r), "):(1,128)"));
  CHECK_EQ(count_bin(b, 0, -1), 2);
  CHECK_EQ(count_bin(b, 0, HG_SHR_S), 1);
  CHECK_ERR(hg_dlayout_parse("(M,K):(1,M)", 2, names, vals, &l), HG_ERR_PARSE, "'K'");
  hg_builder_destroy(b);
}

/* The GEMM's index math (issue 15 item 2) through dynamic layouts: tiles of D from a
 * linear tile index through a rasterised layout with run-time extents, and the element
 * offset of (row, col, batch) in a row-major D with run-time ld and batch stride. */
static void test_gemm_index_math(void) {
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("gemm", &b));
  hg_val_t pm = hg_b_param(b, HG_T_I32, "M"), pn = hg_b_param(b, HG_T_I32, "N"),
           pl = hg_b_param(b, HG_T_I32, "L"), pld = hg_b_param(b, HG_T_I64, "ld"),
           pbs = hg_b_param(b, HG_T_I64, "bs"), pidx = hg_b_param(b, HG_T_I32, "tile");
  hg_dint_t M = hg_dint_val(pm), N = hg_dint_val(pn), Lb = hg_dint_val_sign(pl, HG_DINT_POS), tm,
            tn;
  M.sign = N.sign = HG_DINT_POS;
  CHECK_OK(hg_dint_ceil_div(b, M, hg_dint(128), &tm));
  CHECK_OK(hg_dint_ceil_div(b, N, hg_dint(256), &tn));
  int before = ir_eval_op_count(b);
  /* Raster along N: tiles (tm, tn, L) with strides (tn, 1, tm*tn); in the domain the
   * coordinate is idx % tn, (idx / tn) % tm, idx / (tn*tm): two divisions and two
   * remainders sharing their quotients, no multiplication. */
  hg_dint_t ext[3] = {tm, tn, Lb}, str[3] = {tn, hg_dint(1), hg_dint(0)};
  CHECK_OK(hg_dint_mul(b, tm, tn, &str[2]));
  hg_dtuple_t shape, stride, crd;
  CHECK_OK(hg_dtuple_make(3, ext, &shape));
  CHECK_OK(hg_dtuple_make(3, str, &stride));
  CHECK_OK(hg_dl_idx2crd(b, &shape, &stride, hg_dint_val_nonneg(pidx), HG_DL_IN_DOMAIN, &crd));
  CHECK_EQ(count_bin(b, before, HG_DIV_U), 2);
  CHECK_EQ(count_bin(b, before, HG_REM_U), 2);
  CHECK_EQ(count_bin(b, before, -1), 4);
  /* D = (M,N,L):(ld,1,bs); the tile at (m, n, l) of local_tile by [128,256]. */
  hg_dint_t dext[3] = {M, N, Lb}, dstr[3] = {hg_dint_val(pld), hg_dint(1), hg_dint_val(pbs)};
  hg_dtuple_t dshape, dstride;
  hg_dlayout_t D, tile;
  CHECK_OK(hg_dtuple_make(3, dext, &dshape));
  CHECK_OK(hg_dtuple_make(3, dstr, &dstride));
  CHECK_OK(hg_dlayout_make(&dshape, &dstride, &D));
  hg_tiler_t t = {0};
  CHECK_OK(hg_tiler_parse("[128,256]", &t));
  hg_dint_t off;
  CHECK_OK(hg_dl_local_tile(b, &D, &t, &crd, &tile, &off));
  CHECK_STR(DL(&tile), "(128,256):(%4,1)");
  /* The element (r, c) of the tile, for r, c from the thread: */
  hg_val_t pr = hg_b_param(b, HG_T_I32, "r"), pc = hg_b_param(b, HG_T_I32, "c");
  hg_dint_t rc[2] = {hg_dint_val(pr), hg_dint_val(pc)}, eoff, total;
  hg_dtuple_t ecrd;
  CHECK_OK(hg_dtuple_make(2, rc, &ecrd));
  CHECK_OK(hg_dl_crd2idx(b, &tile, &ecrd, 0, &eoff));
  CHECK_OK(hg_dint_add(b, off, eoff, &total));
  hg_val_t tv;
  CHECK_OK(hg_dint_emit(b, total, HG_T_I64, &tv));
  /* Against the formula for a few run-time values, r negative too. */
  static const int64_t cases[][8] = {{1000, 3000, 4, 3008, 3000 * 1000, 0, 5, 7},
                                     {1000, 3000, 4, 3008, 3000 * 1000, 37, -3, 255},
                                     {128, 256, 1, 256, 0, 0, 127, 0},
                                     {1, 1, 7, 1, 1, 6, 0, 0},
                                     {4097, 513, 3, 520, 4097 * 520, 200, 64, 100}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const int64_t *p = cases[k];
    int64_t ntm = (p[0] + 127) / 128, ntn = (p[1] + 255) / 256, idx = p[5];
    int64_t n_t = idx % ntn, m_t = (idx / ntn) % ntm, l_t = idx / (ntn * ntm);
    int64_t want = (m_t * 128 + p[6]) * p[3] + n_t * 256 + p[7] + l_t * p[4];
    ir_eval_t ev;
    CHECK_OK(ir_eval_run(b, p, NULL, &ev));
    CHECK_EQ(ir_eval_get(&ev, tv), want);
    ir_eval_free(&ev);
  }
  CHECK_OK(hg_builder_status(b));
  hg_builder_destroy(b);
}

/* The hand-written evaluation hg_layout_emit was before it went through hg_dl_eval: per leaf
 * (idx / (product of the earlier extents)) % extent * stride, the last leaf without the
 * modulo. The yardstick for "no more instructions". */
static hg_val_t handwritten_layout_emit(hg_builder_t *b, const hg_layout_t *l, hg_val_t idx) {
  int64_t shp[HG_TUPLE_MAX], str[HG_TUPLE_MAX];
  const int n = hg_tuple_leaf_values(&l->shape, shp, HG_TUPLE_MAX);
  hg_tuple_leaf_values(&l->stride, str, HG_TUPLE_MAX);
  hg_val_t acc = hg_b_i32(b, 0);
  int64_t div = 1;
  for (int i = 0; i < n; i++) {
    if (shp[i] > 1 && str[i] != 0) {
      hg_val_t c = div > 1 ? hg_b_bin(b, HG_DIV_U, idx, hg_b_i32(b, (int32_t)div)) : idx;
      if (i + 1 < n) c = hg_b_bin(b, HG_REM_U, c, hg_b_i32(b, (int32_t)shp[i]));
      acc = hg_b_mad(b, c, hg_b_i32(b, (int32_t)str[i]), acc);
    }
    div *= shp[i];
  }
  return acc;
}

/* hg_dl_eval of a static layout at a run-time index in its domain (what hg_layout_emit now
 * is) emits no more integer ops than the hand-written evaluation it replaced, and both give
 * hg_layout_eval. */
static void test_static_eval_no_worse(void) {
  int compared = 0;
  for (int it = 0; it < 300; it++) {
    hg_layout_t l = rand_layout();
    int64_t size;
    CHECK_OK(hg_size(&l, &size));
    bool neg = false;
    for (int i = 0; i < l.stride.n; i++)
      neg = neg || (l.stride.arity[i] == HG_LEAF && l.stride.v[i] < 0);
    if (size > 4096 || neg) continue; /* layout_eval's unsigned math wants strides >= 0 */
    hg_builder_t *b1, *b2;
    CHECK_OK(hg_builder_create("mine", &b1));
    CHECK_OK(hg_builder_create("theirs", &b2));
    hg_val_t i1 = hg_b_param(b1, HG_T_I32, "i"), i2 = hg_b_param(b2, HG_T_I32, "i"), v2;
    hg_dlayout_t d = hg_dlayout_static(&l);
    hg_dint_t v1;
    hg_val_t e1;
    CHECK_OK(hg_dl_eval(b1, &d, hg_dint_val_nonneg(i1), HG_DL_IN_DOMAIN, &v1));
    CHECK_OK(hg_dint_emit(b1, v1, HG_T_I32, &e1));
    v2 = handwritten_layout_emit(b2, &l, i2);
    CHECK(count_bin(b1, 0, -1) <= count_bin(b2, 0, -1));
    /* hg_layout_emit is that evaluation, instruction for instruction. */
    const int before = ir_eval_op_count(b1);
    hg_val_t e3;
    CHECK_OK(hg_layout_emit(b1, &l, i1, &e3));
    CHECK_EQ(count_bin(b1, before, -1), count_bin(b1, 0, -1) - count_bin(b1, before, -1));
    for (int64_t i = 0; i < size; i += 1 + size / 64) {
      ir_eval_t ev;
      int64_t want;
      CHECK_OK(hg_layout_eval(&l, i, &want));
      CHECK_OK(ir_eval_run(b1, &i, NULL, &ev));
      CHECK_EQ(ir_eval_get(&ev, e1), want);
      CHECK_EQ(ir_eval_get(&ev, e3), want);
      ir_eval_free(&ev);
      CHECK_OK(ir_eval_run(b2, &i, NULL, &ev));
      CHECK_EQ(ir_eval_get(&ev, v2), want);
      ir_eval_free(&ev);
    }
    compared++;
    hg_builder_destroy(b1);
    hg_builder_destroy(b2);
  }
  CHECK(compared > 100);
}

/* Signed coordinates: an I32 row of -3 against an I64 ld is sign-extended (the offset is
 * negative, not 2^32 - 3 rows down), and a negative index splits with floor semantics as
 * hg_idx2crd does. */
static void test_signed(void) {
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("signed", &b));
  hg_val_t row = hg_b_param(b, HG_T_I32, "row"), ld = hg_b_param(b, HG_T_I64, "ld"),
           idx = hg_b_param(b, HG_T_I32, "idx");
  const char *names[1] = {"ld"};
  hg_dint_t vals[1] = {hg_dint_val(ld)}, off, c;
  hg_dlayout_t l;
  CHECK_OK(hg_dlayout_parse("(64,32):(ld,1)", 1, names, vals, &l));
  hg_dint_t rc[2] = {hg_dint_val(row), hg_dint(5)};
  hg_dtuple_t crd, out;
  CHECK_OK(hg_dtuple_make(2, rc, &crd));
  CHECK_OK(hg_dl_crd2idx(b, &l, &crd, 0, &off));
  hg_val_t v;
  CHECK_OK(hg_dint_emit(b, off, HG_T_NONE, &v));
  CHECK_EQ(hg_val_type(b, v), HG_T_I64);
  /* -7 in (4,3): floor(-7 / 4) = -2, -7 mod 4 = 1; -2 mod 3 = 1: (1,1). */
  hg_tuple_t shape;
  CHECK_OK(hg_tuple_parse("(4,3)", &shape));
  hg_dtuple_t dshape = hg_dtuple_static(&shape);
  CHECK_OK(hg_dl_idx2crd(b, &dshape, NULL, hg_dint_val(idx), 0, &out));
  hg_val_t c0, c1;
  CHECK_OK(hg_dint_emit(b, out.d[1], HG_T_NONE, &c0));
  CHECK_OK(hg_dint_emit(b, out.d[2], HG_T_NONE, &c1));
  int64_t params[3] = {-3, 1000, -7};
  ir_eval_t ev;
  CHECK_OK(ir_eval_run(b, params, NULL, &ev));
  CHECK_EQ(ir_eval_get(&ev, v), -3 * 1000 + 5);
  CHECK_EQ(ir_eval_get(&ev, c0), 1);
  CHECK_EQ(ir_eval_get(&ev, c1), 1);
  ir_eval_free(&ev);
  /* An I64 value cannot be emitted as I32. */
  CHECK_ERR(hg_dint_emit(b, off, HG_T_I32, &v), HG_ERR_OVERFLOW, "needs 64 bits");
  (void)c;
  hg_builder_destroy(b);
}

/* Dynamic tensors: a batched row-major matrix (rows, cols, batches):(ld, 1, bs) at a run-time
 * base, one batch sliced off, an element's byte address - against base + esize * (row * ld +
 * col + batch * bs) with rows negative too (signed coordinates) and pitches past 2^31; a
 * static tensor folds to a constant; the refusals. */
static void test_tensors(void) {
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("tensor", &b));
  hg_val_t base = hg_b_param(b, HG_T_I64, "base"), ld = hg_b_param(b, HG_T_I64, "ld");
  hg_val_t bs = hg_b_param(b, HG_T_I64, "bs"), m = hg_b_param(b, HG_T_I32, "m");
  hg_val_t n = hg_b_param(b, HG_T_I32, "n"), l = hg_b_param(b, HG_T_I32, "l");
  hg_val_t row = hg_b_param(b, HG_T_I32, "row"), col = hg_b_param(b, HG_T_I32, "col");
  hg_val_t batch = hg_b_param(b, HG_T_I32, "batch");
  hg_dtensor_t t, one;
  CHECK_OK(hg_dt_matrix(hg_dint_val(base), 2, hg_dint_val(m), hg_dint_val(n), hg_dint_val(l),
                        hg_dint_val(ld), hg_dint_val(bs), &t));
  CHECK_OK(hg_dt_batch(b, &t, hg_dint_val(batch), &one));
  CHECK_EQ(hg_dlayout_rank(&one.layout), 2);
  hg_dtuple_t crd;
  hg_dint_t a;
  hg_val_t av;
  CHECK_OK(hg_dtuple_make(2, (hg_dint_t[2]){hg_dint_val(row), hg_dint_val(col)}, &crd));
  CHECK_OK(hg_dt_addr(b, &one, &crd, 0, &a));
  CHECK_OK(hg_dint_emit(b, a, HG_T_NONE, &av));
  CHECK_EQ(hg_val_type(b, av), HG_T_I64);
  for (int it = 0; it < 200; it++) {
    const int64_t ldv = 1 + rnd(5000) + (rnd(4) == 0 ? INT64_C(1) << 31 : 0);
    const int64_t p[9] = {INT64_C(1) << 40, ldv,          ldv * (1 + rnd(100)),
                          1 + rnd(100),     1 + rnd(100), 1 + rnd(9),
                          rnd(300) - 100,   rnd(5000),    rnd(9)};
    ir_eval_t ev;
    CHECK_OK(ir_eval_run(b, p, NULL, &ev));
    CHECK_EQ(ir_eval_get(&ev, av), p[0] + 2 * (p[6] * p[1] + p[7] + p[8] * p[2]));
    ir_eval_free(&ev);
  }
  /* Static all the way: an address with no instruction. */
  const int ops = ir_eval_op_count(b);
  CHECK_OK(hg_dt_matrix(hg_dint(4096), 4, hg_dint(64), hg_dint(32), hg_dint(3), hg_dint(40),
                        hg_dint(64 * 40), &t));
  CHECK_OK(hg_dt_batch(b, &t, hg_dint(2), &one));
  CHECK_OK(hg_dtuple_make(2, (hg_dint_t[2]){hg_dint(5), hg_dint(7)}, &crd));
  CHECK_OK(hg_dt_addr(b, &one, &crd, 0, &a));
  CHECK(hg_dint_is(a, 4096 + 4 * (5 * 40 + 7 + 2 * 64 * 40)));
  CHECK_EQ(ir_eval_op_count(b), ops);
  /* Refusals. */
  t.esize = 0;
  CHECK_ERR(hg_dt_addr(b, &t, &crd, 0, &a), HG_ERR_INVALID, "elements of 0 bytes");
  CHECK_ERR(
      hg_dt_matrix(hg_dint(0), 2, hg_dint(4), hg_dint(-1), hg_dint(1), hg_dint(4), hg_dint(16), &t),
      HG_ERR_INVALID, "negative shape -1");
  hg_layout_t vec;
  CHECK_OK(hg_layout_parse("8:1", &vec));
  t = (hg_dtensor_t){.base = hg_dint(0), .esize = 4, .layout = hg_dlayout_static(&vec)};
  CHECK_ERR(hg_dt_batch(b, &t, hg_dint(1), &one), HG_ERR_INVALID, "has no batch mode");
  hg_builder_destroy(b);
}

/* What is refused, with the rule named. */
static void test_refusals(void) {
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("refuse", &b));
  hg_val_t m = hg_b_param(b, HG_T_I32, "M"), ld = hg_b_param(b, HG_T_I32, "ld");
  const char *names[2] = {"M", "ld"};
  hg_dint_t vals[2] = {hg_dint_val(m), hg_dint_val(ld)};
  hg_dlayout_t l, r;
  hg_layout_t bl;
  /* (M,N):(1,ld) o 3:2: does the stride 2 divide M, or M divide 2? Unknowable. */
  CHECK_OK(hg_dlayout_parse("(M,16):(1,ld)", 2, names, vals, &l));
  CHECK_OK(hg_layout_parse("3:2", &bl));
  CHECK_ERR(hg_dl_composition(b, &l, &bl, &r), HG_ERR_UNSUPPORTED,
            "must divide one another (CuTe's divisibility condition)");
  /* ... but with the extent a multiple of the stride and of the tile it is decided:
   * (6M,16):(1,ld) o 3:2 takes 3 of the 3M steps of stride 2. (2M would not do: for M = 1
   * the tile would run into the next mode.) */
  CHECK_OK(hg_dlayout_parse("(6*M,16):(1,ld)", 2, names, vals, &l));
  CHECK_OK(hg_dl_composition(b, &l, &bl, &r));
  CHECK_STR(DL(&r), "3:2");
  /* A 1-D tile over several dynamic modes needs the extent taken to divide the tile. */
  hg_tiler_t t = {0};
  CHECK_OK(hg_tiler_parse("128:1", &t));
  CHECK_OK(hg_dlayout_parse("(M,16):(1,ld)", 2, names, vals, &l));
  CHECK_ERR(hg_dl_logical_divide(b, &l, &t, &r), HG_ERR_UNSUPPORTED, "remaining size 128");
  /* By mode it is fine: [128:1,_]. */
  CHECK_OK(hg_tiler_parse("[128:1,_]", &t));
  CHECK_OK(hg_dl_logical_divide(b, &l, &t, &r));
  CHECK(!strncmp(DL(&r), "((128,%", 7) && strstr(DL(&r), "),16):((1,128),%2)"));
  /* A static violation of the rule on a static layout is the static algebra's error. */
  hg_layout_t sl;
  CHECK_OK(hg_layout_parse("(4,3):(3,1)", &sl));
  hg_dlayout_t sd = hg_dlayout_static(&sl);
  CHECK_OK(hg_layout_parse("3:3", &bl));
  CHECK_ERR(hg_dl_composition(b, &sd, &bl, &r), HG_ERR_INVALID, "do not divide one another");
  hg_builder_destroy(b);
}

/* A run-time extent of 1 (a GEMV's M): the mode stays, and in the domain every element
 * is where the static algebra puts it. */
static void test_extent_one(void) {
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("one", &b));
  hg_val_t m = hg_b_param(b, HG_T_I32, "M"), ld = hg_b_param(b, HG_T_I32, "ld"),
           i = hg_b_param(b, HG_T_I32, "i");
  const char *names[2] = {"M", "ld"};
  hg_dint_t vals[2] = {hg_dint_val(m), hg_dint_val(ld)}, v;
  hg_dlayout_t l, r;
  CHECK_OK(hg_dlayout_parse("(M,48):(ld,1)", 2, names, vals, &l));
  hg_tiler_t t = {0};
  CHECK_OK(hg_tiler_parse("[16,16]", &t));
  CHECK_OK(hg_dl_zipped_divide(b, &l, &t, &r));
  CHECK_OK(hg_dl_eval(b, &r, hg_dint_val_nonneg(i), 0, &v));
  hg_val_t e;
  CHECK_OK(hg_dint_emit(b, v, HG_T_NONE, &e));
  hg_layout_t sl, sr;
  CHECK_OK(hg_layout_parse("(1,48):(64,1)", &sl));
  hg_tiler_t st = {0};
  CHECK_OK(hg_tiler_parse("[16,16]", &st));
  CHECK_OK(hg_zipped_divide(&sl, &st, &sr));
  int checked = 0;
  for (int64_t k = 0; k < 16 * 48; k++) {
    /* k = ((r0, c0), (r1, c1)) in the zipped layout; in the domain when the row is 0. */
    int64_t r0 = k % 16, rest = k / 256, r1 = rest % 1;
    if (r0 != 0 || r1 != 0) continue;
    int64_t p[3] = {1, 64, k}, want;
    ir_eval_t ev;
    CHECK_OK(hg_layout_eval(&sr, k, &want));
    CHECK_OK(ir_eval_run(b, p, NULL, &ev));
    CHECK_EQ(ir_eval_get(&ev, e), want);
    ir_eval_free(&ev);
    checked++;
  }
  CHECK(checked >= 48);
  hg_builder_destroy(b);
}

/* The interpreter itself: control flow, variables, width semantics and its errors. */
static void test_ir_eval(void) {
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("interp", &b));
  hg_val_t n = hg_b_param(b, HG_T_I32, "n");
  hg_val_t acc = hg_b_var(b, HG_T_I32, hg_b_i32(b, 0));
  hg_val_t i = hg_b_for(b, hg_b_i32(b, 0), n, hg_b_i32(b, 1));
  hg_b_if(b, hg_b_cmp(b, HG_EQ, hg_b_bin(b, HG_AND, i, hg_b_i32(b, 1)), hg_b_i32(b, 0)));
  hg_b_assign(b, acc, hg_b_bin(b, HG_ADD, acc, i));
  hg_b_else(b);
  hg_b_assign(b, acc, hg_b_bin(b, HG_SUB, acc, hg_b_i32(b, 1)));
  hg_b_endif(b);
  hg_b_endfor(b);
  hg_val_t big = hg_b_bin(b, HG_MUL, hg_b_i32(b, 65536), hg_b_i32(b, 65536)); /* wraps to 0 */
  hg_val_t sh = hg_b_bin(b, HG_SHR_S, hg_b_i32(b, -8), hg_b_i32(b, 40));      /* saturates */
  hg_val_t q = hg_b_bin(b, HG_DIV_S, hg_b_i32(b, 7), n);
  int64_t p = 6;
  ir_eval_t ev;
  CHECK_OK(ir_eval_run(b, &p, NULL, &ev));
  CHECK_EQ(ir_eval_get(&ev, acc), 0 + 2 + 4 - 3); /* evens added, odds subtract 1 */
  CHECK_EQ(ir_eval_get(&ev, big), 0);
  CHECK_EQ(ir_eval_get(&ev, sh), -1);
  CHECK_EQ(ir_eval_get(&ev, q), 1);
  ir_eval_free(&ev);
  p = 0;
  CHECK_ERR(ir_eval_run(b, &p, NULL, &ev), HG_ERR_INVALID, "divides 7 by 0");
  hg_builder_destroy(b);
}

int main(void) {
  HG_RUN(test_ir_eval);
  HG_RUN(test_fold_and_text);
  HG_RUN(test_gemm_index_math);
  HG_RUN(test_static_eval_no_worse);
  HG_RUN(test_signed);
  HG_RUN(test_tensors);
  HG_RUN(test_refusals);
  HG_RUN(test_extent_one);
  HG_RUN(test_random_oracle);
  return hg_test_finish();
}
