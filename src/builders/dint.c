/* Dynamic integers: monomials c * f0 * f1 * ... of run-time builder values, with the
 * static algebra's integer semantics (Python's floor division and modulo, checked int64
 * for the static parts). Static operands fold here; what stays dynamic is emitted through
 * the builder, and products stay symbolic until a value is needed, so that equal extents
 * and exact divisions are recognised without emitting anything. */
#include <stdio.h>
#include <string.h>

#include "builders/dlayout_internal.h"

/* ---------------------------------------------------------------- construction */

static int8_t const_sign(int64_t v) {
  return v >= 1 ? HG_DINT_POS : v == 0 ? HG_DINT_NONNEG : HG_DINT_ANY;
}

hg_dint_t hg_dint(int64_t v) {
  hg_dint_t x;
  memset(&x, 0, sizeof x);
  x.c = v;
  x.sign = v == HG_UNDERSCORE ? HG_DINT_ANY : const_sign(v);
  return x;
}

hg_dint_t hg_dint_val_sign(hg_val_t v, hg_dint_sign_t sign) {
  hg_dint_t x = hg_dint(1);
  x.n = 1;
  x.f[0] = v;
  x.sign = (int8_t)sign;
  return x;
}

hg_dint_t hg_dint_val(hg_val_t v) {
  return hg_dint_val_sign(v, HG_DINT_ANY);
}

hg_dint_t hg_dint_val_nonneg(hg_val_t v) {
  return hg_dint_val_sign(v, HG_DINT_NONNEG);
}

bool hg_dint_is_static(hg_dint_t x) {
  return x.n == 0;
}

bool hg_dint_is(hg_dint_t x, int64_t v) {
  return x.n == 0 && x.c == v;
}

bool hgd_pos(hg_dint_t x) {
  return x.sign == HG_DINT_POS;
}

static bool nonneg(hg_dint_t x) {
  return x.sign >= HG_DINT_NONNEG;
}

/* The weaker of two sign facts (what holds for both). */
static int8_t weaker(int8_t a, int8_t b) {
  return a < b ? a : b;
}

int hg_dint_print(hg_dint_t x, char *buf, size_t size) {
  char tmp[160];
  int k = 0;
  if (x.n == 0)
    k = x.c == HG_UNDERSCORE ? snprintf(tmp, sizeof tmp, "_")
                             : snprintf(tmp, sizeof tmp, "%lld", (long long)x.c);
  else if (x.c != 1)
    k = snprintf(tmp, sizeof tmp, "%lld*", (long long)x.c);
  for (int i = 0; i < x.n && k < (int)sizeof tmp; i++)
    k += snprintf(tmp + k, sizeof tmp - (size_t)k, i ? "*%%%d" : "%%%d", (int)x.f[i].id);
  return snprintf(buf, size, "%s", tmp);
}

/* ---------------------------------------------------------------- reasoning */

static bool same_factors(hg_dint_t x, hg_dint_t y) {
  if (x.n != y.n) return false;
  /* the capacity bound too: gcc -O3 otherwise imagines f[n] read past it (a false
   * maybe-uninitialized) */
  for (int i = 0; i < x.n && i < HG_DINT_FACTORS; i++)
    if (x.f[i].id != y.f[i].id) return false;
  return true;
}

/* y's factors with x's removed (a multiset difference); false if x has one y lacks. */
static bool factors_minus(hg_dint_t y, hg_dint_t x, hg_dint_t *rest) {
  *rest = y;
  for (int i = 0; i < x.n; i++) {
    int k = 0;
    while (k < rest->n && rest->f[k].id != x.f[i].id) k++;
    if (k == rest->n) return false;
    memmove(rest->f + k, rest->f + k + 1, (size_t)(rest->n - k - 1) * sizeof rest->f[0]);
    rest->n--;
  }
  return true;
}

hgd_truth_t hgd_equal(hg_dint_t x, hg_dint_t y) {
  if (x.n == 0 && y.n == 0) return x.c == y.c ? HGD_YES : HGD_NO;
  if (!same_factors(x, y)) return HGD_UNKNOWN;
  if (x.c == y.c) return HGD_YES;
  /* c1 * F == c2 * F only when F == 0, which a value known to be >= 1 rules out. */
  return hgd_pos(x) || hgd_pos(y) ? HGD_NO : HGD_UNKNOWN;
}

hgd_truth_t hgd_divides(hg_dint_t x, hg_dint_t y) {
  if (x.n == 0 && y.n == 0) return x.c != 0 && y.c % x.c == 0 ? HGD_YES : HGD_NO;
  if (x.n == 0 && (x.c == 1 || x.c == -1)) return HGD_YES;
  if (y.n == 0 && y.c == 0) return HGD_YES;
  hg_dint_t rest;
  if (x.c != 0 && y.c % x.c == 0 && factors_minus(y, x, &rest)) return HGD_YES;
  return HGD_UNKNOWN;
}

/* ---------------------------------------------------------------- emission */

static bool fits32(int64_t v) {
  return v >= INT32_MIN && v <= INT32_MAX;
}

hg_status_t hgd_builder_ok(hg_builder_t *b) {
  hg_status_t s = hg_builder_status(b);
  if (hg_is_ok(&s)) return s;
  return hg_status_wrap(s, "the builder failed while emitting layout arithmetic: ");
}

static const char *type_name(hg_type_t t) {
  static const char *const names[] = {
      "no value of this builder", "PRED", "I32", "I64", "F32", "TMAP"};
  return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "an unknown type";
}

/* I64 when a factor is I64 or c needs 64 bits; factors must be integer values. */
static hg_status_t natural_type(hg_builder_t *b, hg_dint_t x, hg_type_t *out) {
  hg_type_t t = *out = fits32(x.c) ? HG_T_I32 : HG_T_I64; /* set on error too: gcc -O3 */
  for (int i = 0; i < x.n; i++) {
    hg_type_t ft = hg_val_type(b, x.f[i]);
    if (ft != HG_T_I32 && ft != HG_T_I64)
      return hg_error(HG_ERR_INVALID,
                      "a dynamic layout value (%%%d) is %s; extents, strides and coordinates are "
                      "I32 or I64 builder values",
                      (int)x.f[i].id, type_name(ft));
    if (ft == HG_T_I64) t = HG_T_I64;
  }
  *out = t;
  return hg_ok();
}

static hg_val_t konst(hg_builder_t *b, int64_t v, hg_type_t t) {
  return t == HG_T_I32 ? hg_b_i32(b, (int32_t)v) : hg_b_i64(b, v);
}

static hg_val_t widen(hg_builder_t *b, hg_val_t v, hg_type_t t) {
  return t == HG_T_I64 && hg_val_type(b, v) == HG_T_I32 ? hg_b_sext(b, v) : v;
}

static hg_val_t emit_at(hg_builder_t *b, hg_dint_t x, hg_type_t t) {
  if (x.n == 0) return konst(b, x.c, t);
  hg_val_t v = widen(b, x.f[0], t);
  for (int i = 1; i < x.n; i++) v = hg_b_bin(b, HG_MUL, v, widen(b, x.f[i], t));
  if (x.c == -1) return hg_b_bin(b, HG_SUB, konst(b, 0, t), v);
  if (x.c != 1) v = hg_b_bin(b, HG_MUL, v, konst(b, x.c, t));
  return v;
}

hg_status_t hg_dint_emit(hg_builder_t *b, hg_dint_t x, hg_type_t type, hg_val_t *out) {
  if (!b) return hg_error(HG_ERR_INVALID, "hg_dint_emit: the builder is NULL");
  if (x.n == 0 && x.c == HG_UNDERSCORE)
    return hg_error(HG_ERR_INVALID, "hg_dint_emit: '_' (a slice marker) has no value");
  hg_type_t nat;
  HG_TRY(natural_type(b, x, &nat));
  if (type == HG_T_NONE) type = nat;
  if (type != HG_T_I32 && type != HG_T_I64)
    return hg_error(HG_ERR_INVALID, "hg_dint_emit: a layout value is I32 or I64, not %s",
                    type_name(type));
  if (type == HG_T_I32 && nat == HG_T_I64) {
    char v[160];
    hg_dint_print(x, v, sizeof v);
    return hg_error(HG_ERR_OVERFLOW,
                    "hg_dint_emit: %s needs 64 bits (an I64 factor or a constant beyond 32 "
                    "bits) but I32 was asked for",
                    v);
  }
  hg_val_t v = emit_at(b, x, type);
  if (hg_val_is_none(v)) return hgd_builder_ok(b);
  *out = v;
  return hg_ok();
}

/* Both operands at their common (wider) type. */
static hg_status_t emit2(hg_builder_t *b, hg_dint_t x, hg_dint_t y, hg_type_t *t, hg_val_t *vx,
                         hg_val_t *vy) {
  hg_type_t tx, ty;
  HG_TRY(natural_type(b, x, &tx));
  HG_TRY(natural_type(b, y, &ty));
  *t = tx == HG_T_I64 || ty == HG_T_I64 ? HG_T_I64 : HG_T_I32;
  *vx = emit_at(b, x, *t);
  *vy = emit_at(b, y, *t);
  return hg_ok();
}

/* A fresh run-time value as a dynamic integer (a builder failure becomes the status). */
static hg_status_t atom(hg_builder_t *b, hg_val_t v, int8_t sign, hg_dint_t *out) {
  if (hg_val_is_none(v)) return hgd_builder_ok(b);
  *out = hg_dint_val_sign(v, (hg_dint_sign_t)sign);
  return hg_ok();
}

static int log2_exact(int64_t v) {
  if (v <= 0 || (v & (v - 1)) != 0) return -1;
  int k = 0;
  while ((INT64_C(1) << k) != v) k++;
  return k;
}

/* r != 0 and r, y of opposite signs: where truncating division and floor division differ
 * for a divisor of unknown sign. */
static hg_val_t floor_fixup(hg_builder_t *b, hg_type_t t, hg_val_t r, hg_val_t vy) {
  hg_val_t nz = hg_b_cmp(b, HG_NE, r, konst(b, 0, t));
  hg_val_t opp = hg_b_cmp(b, HG_LT_S, hg_b_bin(b, HG_XOR, r, vy), konst(b, 0, t));
  return hg_b_bin(b, HG_AND, nz, opp);
}

/* floor(x / y) (mod: x - floor(x / y) * y) of two values of which at least one is dynamic,
 * with the cheapest exact instruction sequence the known signs allow. */
static hg_status_t emit_floor(hg_builder_t *b, hg_dint_t x, hg_dint_t y, bool mod, hg_dint_t *out) {
  hg_type_t t;
  hg_val_t vx, vy, r;
  int k = y.n == 0 ? log2_exact(y.c) : -1;
  HG_TRY(emit2(b, x, y, &t, &vx, &vy));
  int8_t sign = HG_DINT_ANY;
  if (k >= 0) { /* arithmetic shift and mask are floor division and modulo by 2^k */
    r = mod ? hg_b_bin(b, HG_AND, vx, konst(b, y.c - 1, t))
            : hg_b_bin(b, HG_SHR_S, vx, konst(b, k, t));
    sign = mod ? HG_DINT_NONNEG : (nonneg(x) ? HG_DINT_NONNEG : HG_DINT_ANY);
  } else if (nonneg(x) && hgd_pos(y)) {
    r = hg_b_bin(b, mod ? HG_REM_U : HG_DIV_U, vx, vy);
    sign = HG_DINT_NONNEG;
  } else if (hgd_pos(y)) {
    /* A negative remainder of the truncating division moves the result down by one
     * (quotient) or up by y (remainder): r >> (bits - 1) is -1 exactly then. */
    hg_val_t shift = konst(b, t == HG_T_I32 ? 31 : 63, t);
    hg_val_t rem = hg_b_bin(b, HG_REM_S, vx, vy);
    hg_val_t neg = hg_b_bin(b, HG_SHR_S, rem, shift);
    r = mod ? hg_b_bin(b, HG_ADD, rem, hg_b_bin(b, HG_AND, neg, vy))
            : hg_b_bin(b, HG_ADD, hg_b_bin(b, HG_DIV_S, vx, vy), neg);
    if (mod) sign = HG_DINT_NONNEG;
  } else {
    hg_val_t rem = hg_b_bin(b, HG_REM_S, vx, vy);
    hg_val_t fix = floor_fixup(b, t, rem, vy);
    if (mod) {
      r = hg_b_select(b, fix, hg_b_bin(b, HG_ADD, rem, vy), rem);
    } else {
      hg_val_t q = hg_b_bin(b, HG_DIV_S, vx, vy);
      r = hg_b_select(b, fix, hg_b_bin(b, HG_SUB, q, konst(b, 1, t)), q);
    }
  }
  return atom(b, r, sign, out);
}

/* ---------------------------------------------------------------- arithmetic */

static hg_dint_t normalized(hg_dint_t x) {
  if (x.c == 0 || x.n == 0) return hg_dint(x.c);
  return x;
}

hg_status_t hg_dint_mul(hg_builder_t *b, hg_dint_t x, hg_dint_t y, hg_dint_t *out) {
  if (hg_dint_is(x, 0) || hg_dint_is(y, 0)) {
    *out = hg_dint(0);
    return hg_ok();
  }
  int64_t c;
  HG_TRY(hgl_mul(x.c, y.c, &c));
  /* Too many factors: multiply one side's out into a single run-time value. */
  while (x.n + y.n > HG_DINT_FACTORS) {
    hg_dint_t *big = x.n >= y.n ? &x : &y, f = *big;
    hg_type_t ft;
    f.c = 1;
    HG_TRY(natural_type(b, f, &ft));
    HG_TRY(atom(b, emit_at(b, f, ft), f.sign, &f));
    f.c = big->c;
    *big = f;
  }
  hg_dint_t r = hg_dint(c);
  int i = 0, j = 0;
  while (i < x.n || j < y.n) {
    bool take_x = j >= y.n || (i < x.n && x.f[i].id <= y.f[j].id);
    r.f[r.n++] = take_x ? x.f[i++] : y.f[j++];
  }
  r = normalized(r);
  if (r.n > 0) {
    int8_t s = weaker(x.sign, y.sign);
    r.sign = s >= HG_DINT_NONNEG ? s : HG_DINT_ANY;
  }
  *out = r;
  return hg_ok();
}

hg_status_t hg_dint_add(hg_builder_t *b, hg_dint_t x, hg_dint_t y, hg_dint_t *out) {
  if (hg_dint_is(x, 0) || hg_dint_is(y, 0)) {
    *out = hg_dint_is(x, 0) ? y : x;
    return hg_ok();
  }
  int8_t sign = nonneg(x) && nonneg(y) ? (hgd_pos(x) || hgd_pos(y) ? HG_DINT_POS : HG_DINT_NONNEG)
                                       : HG_DINT_ANY;
  if (same_factors(x, y)) { /* c1 * F + c2 * F: still a monomial */
    hg_dint_t r = x;
    HG_TRY(hgl_add(x.c, y.c, &r.c));
    r = normalized(r);
    if (r.n > 0) r.sign = sign;
    *out = r;
    return hg_ok();
  }
  /* A scaled or multi-factor term goes into a mad: x = f0 * (rest of x), + y. */
  if (!(x.n >= 2 || (x.n == 1 && x.c != 1))) {
    hg_dint_t t = x;
    x = y;
    y = t;
  }
  hg_type_t t;
  hg_val_t vx, vy, v;
  if (x.n >= 2 || (x.n == 1 && x.c != 1)) {
    hg_dint_t rest = x;
    rest.n--;
    memmove(rest.f, rest.f + 1, (size_t)rest.n * sizeof rest.f[0]);
    hg_dint_t f0 = hg_dint_val(x.f[0]);
    hg_type_t tf, tr, ty;
    HG_TRY(natural_type(b, f0, &tf));
    HG_TRY(natural_type(b, rest, &tr));
    HG_TRY(natural_type(b, y, &ty));
    t = tf == HG_T_I64 || tr == HG_T_I64 || ty == HG_T_I64 ? HG_T_I64 : HG_T_I32;
    v = hg_b_mad(b, emit_at(b, f0, t), emit_at(b, rest, t), emit_at(b, y, t));
  } else {
    HG_TRY(emit2(b, x, y, &t, &vx, &vy));
    v = hg_b_bin(b, HG_ADD, vx, vy);
  }
  return atom(b, v, sign, out);
}

hg_status_t hg_dint_sub(hg_builder_t *b, hg_dint_t x, hg_dint_t y, hg_dint_t *out) {
  if (hg_dint_is(y, 0)) {
    *out = x;
    return hg_ok();
  }
  if (same_factors(x, y)) {
    hg_dint_t r = x;
    HG_TRY(hgl_sub(x.c, y.c, &r.c));
    r = normalized(r);
    if (r.n > 0) r.sign = HG_DINT_ANY;
    *out = r;
    return hg_ok();
  }
  if (y.n == 0 && y.c != INT64_MIN) return hg_dint_add(b, x, hg_dint(-y.c), out);
  hg_type_t t;
  hg_val_t vx, vy;
  HG_TRY(emit2(b, x, y, &t, &vx, &vy));
  return atom(b, hg_b_bin(b, HG_SUB, vx, vy), HG_DINT_ANY, out);
}

/* x / y exactly as a monomial (y's factors are among x's, its c divides x's). */
static bool exact_quotient(hg_dint_t x, hg_dint_t y, hg_dint_t *q) {
  if (y.c == 0 || x.c % y.c != 0) return false;
  hg_dint_t r;
  if (!factors_minus(x, y, &r)) return false;
  if (y.c == -1 && x.c == INT64_MIN) return false;
  r.c = x.c / y.c;
  r = normalized(r);
  if (r.n > 0) r.sign = nonneg(x) && hgd_pos(y) ? x.sign : HG_DINT_ANY;
  *q = r;
  return true;
}

static hg_status_t zero_divisor(hg_dint_t x, const char *op) {
  char v[160];
  hg_dint_print(x, v, sizeof v);
  return hg_error(HG_ERR_INVALID, "%s %s 0 divides by zero", v, op);
}

typedef hg_status_t (*static_div_fn)(int64_t a, int64_t b, int64_t *out);

/* What floor division, modulo and ceil_div share: both static (fn), a static zero divisor,
 * a zero dividend, an exact monomial quotient (its value, or 0 for the modulo). *done
 * tells whether *out holds the answer. */
static hg_status_t div_common(hg_dint_t x, hg_dint_t y, static_div_fn fn, const char *op, bool mod,
                              hg_dint_t *out, bool *done) {
  *done = true;
  if (x.n == 0 && y.n == 0) {
    int64_t r;
    HG_TRY(fn(x.c, y.c, &r));
    *out = hg_dint(r);
    return hg_ok();
  }
  if (hg_dint_is(y, 0)) return zero_divisor(x, op);
  hg_dint_t q;
  if (hg_dint_is(x, 0) || exact_quotient(x, y, &q)) {
    *out = mod || hg_dint_is(x, 0) ? hg_dint(0) : q;
    return hg_ok();
  }
  *done = false;
  return hg_ok();
}

hg_status_t hg_dint_div(hg_builder_t *b, hg_dint_t x, hg_dint_t y, hg_dint_t *out) {
  bool done;
  HG_TRY(div_common(x, y, hgl_floordiv, "//", false, out, &done));
  return done ? hg_ok() : emit_floor(b, x, y, false, out);
}

hg_status_t hg_dint_mod(hg_builder_t *b, hg_dint_t x, hg_dint_t y, hg_dint_t *out) {
  bool done;
  HG_TRY(div_common(x, y, hgl_mod, "%", true, out, &done));
  return done ? hg_ok() : emit_floor(b, x, y, true, out);
}

hg_status_t hg_dint_ceil_div(hg_builder_t *b, hg_dint_t x, hg_dint_t y, hg_dint_t *out) {
  bool done;
  HG_TRY(div_common(x, y, hgl_ceildiv, "ceil_div", false, out, &done));
  if (done) return hg_ok();
  /* 0 < x <= y with x dividing y: one (partial) tile. */
  if (hgd_pos(x) && hgd_pos(y) && hgd_divides(x, y) == HGD_YES) {
    *out = hg_dint(1);
    return hg_ok();
  }
  hg_dint_t t;
  if (nonneg(x) && hgd_pos(y)) { /* (x + y - 1) // y */
    hg_dint_t y1;
    HG_TRY(hg_dint_sub(b, y, hg_dint(1), &y1));
    HG_TRY(hg_dint_add(b, x, y1, &t));
    if (t.n > 0) t.sign = HG_DINT_NONNEG; /* x >= 0 and y >= 1 */
    HG_TRY(hg_dint_div(b, t, y, out));
    if (!hg_dint_is_static(*out)) out->sign = x.sign;
    return hg_ok();
  }
  /* -((-x) // y), pycute's ceil_div. */
  HG_TRY(hg_dint_sub(b, hg_dint(0), x, &t));
  HG_TRY(hg_dint_div(b, t, y, &t));
  return hg_dint_sub(b, hg_dint(0), t, out);
}

/* min (is_min) or max of x and y: folded when both are static, equal, or when a static
 * side is below (min) / at or below (max) what x's sign guarantees. */
static hg_status_t min_max(hg_builder_t *b, hg_dint_t x, hg_dint_t y, bool is_min, hg_dint_t *out) {
  if (x.n == 0 && y.n == 0) {
    *out = hg_dint(is_min ? (x.c < y.c ? x.c : y.c) : (x.c > y.c ? x.c : y.c));
    return hg_ok();
  }
  if (hgd_equal(x, y) == HGD_YES) {
    *out = x;
    return hg_ok();
  }
  for (int k = 0; k < 2; k++) {
    hg_dint_t d = k ? y : x, s = k ? x : y; /* d dynamic, s static */
    if (d.n == 0 || s.n != 0) continue;
    int64_t floor_of_d = hgd_pos(d) ? 1 : nonneg(d) ? 0 : INT64_MIN;
    if (floor_of_d != INT64_MIN && s.c <= floor_of_d) {
      *out = is_min ? s : d;
      return hg_ok();
    }
  }
  hg_type_t t;
  hg_val_t vx, vy;
  HG_TRY(emit2(b, x, y, &t, &vx, &vy));
  int8_t sign = is_min ? weaker(x.sign, y.sign) : (x.sign > y.sign ? x.sign : y.sign);
  return atom(b, hg_b_bin(b, is_min ? HG_MIN_S : HG_MAX_S, vx, vy), sign, out);
}

hg_status_t hg_dint_min(hg_builder_t *b, hg_dint_t x, hg_dint_t y, hg_dint_t *out) {
  return min_max(b, x, y, true, out);
}

hg_status_t hg_dint_max(hg_builder_t *b, hg_dint_t x, hg_dint_t y, hg_dint_t *out) {
  return min_max(b, x, y, false, out);
}
