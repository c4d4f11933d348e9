/* The core algebra: coalesce, filter, composition, complement, right and left inverse.
 *
 * Each follows pycute (NVIDIA CUTLASS's Python reference) step by step, because the mode
 * structure of a result is part of the contract, and so are its failures: where pycute
 * trips an assertion (a divisibility or in-bound condition) we return an error. */
#include <string.h>

#include "layout_internal.h"

/* ---------------------------------------------------------------- coalesce */

/* Merge adjacent leaves (s0:d0, s1:d1) when d1 == s0*d0; drop size-1 leaves. The result
 * is an integer layout when one mode remains, else a flat tuple. */
static hg_status_t coalesce_flat(int n, const int64_t *shape, const int64_t *stride,
                                 hg_layout_t *out) {
  int64_t rs[HG_TUPLE_MAX], rd[HG_TUPLE_MAX];
  int m = 1;
  rs[0] = 1;
  rd[0] = 0;
  for (int i = 0; i < n; i++) {
    int64_t s = shape[i], d = stride[i], span;
    if (s == 1) continue;
    if (rs[m - 1] == 1) {
      rs[m - 1] = s;
      rd[m - 1] = d;
    } else if (!__builtin_mul_overflow(rs[m - 1], rd[m - 1], &span) && span == d) {
      HG_TRY(hgl_mul(rs[m - 1], s, &rs[m - 1]));
    } else {
      rs[m] = s;
      rd[m] = d;
      m++;
    }
  }
  return hgl_from_flat(m, rs, rd, out);
}

hg_status_t hgl_coalesce(const hg_layout_t *l, hg_layout_t *out) {
  int64_t s[HG_TUPLE_MAX], d[HG_TUPLE_MAX];
  int n = hgl_flat(l, s, d);
  return coalesce_flat(n, s, d, out);
}

hg_status_t hg_coalesce(const hg_layout_t *l, hg_layout_t *out) {
  HG_TRY(hgl_check_layout(l, "coalesce"));
  return hgl_wrap(hgl_coalesce(l, out), "coalesce", l, NULL);
}

/* By-mode coalesce: a tuple profile recurses into the first len(profile) modes and keeps
 * the rest as they are; an integer profile coalesces the whole (sub)layout. */
static hg_status_t coalesce_by(const hg_layout_t *l, const hg_tuple_t *p, int pi,
                               hg_layout_t *out) {
  if (p->arity[pi] == HG_LEAF) return hgl_coalesce(l, out);
  int pr = p->arity[pi], lr = hgl_rank(l);
  if (lr < pr) {
    char a[256];
    return hg_error(HG_ERR_INVALID,
                    "coalesce: the profile has %d modes but the layout %s only %d (a profile "
                    "may not have more modes than the layout)",
                    pr, hgl_lstr(l, a, sizeof a), lr);
  }
  hg_layout_t r, mode, sub;
  hgl_layout_empty(&r);
  int c = pi + 1;
  for (int i = 0; i < lr; i++) {
    hgl_mode(l, i, &mode);
    if (i < pr) {
      HG_TRY(coalesce_by(&mode, p, c, &sub));
      c = hgl_end(p, c);
      HG_TRY(hgl_layout_push(&r, &sub));
    } else {
      HG_TRY(hgl_layout_push(&r, &mode));
    }
  }
  *out = r;
  return hg_ok();
}

hg_status_t hg_coalesce_profile(const hg_layout_t *l, const hg_tuple_t *profile, hg_layout_t *out) {
  HG_TRY(hgl_check_layout(l, "coalesce"));
  if (!hgl_tuple_valid(profile)) return hg_error(HG_ERR_INVALID, "coalesce: malformed profile");
  return coalesce_by(l, profile, 0, out);
}

hg_status_t hg_filter(const hg_layout_t *l, hg_layout_t *out) {
  HG_TRY(hgl_check_layout(l, "filter"));
  int64_t s[HG_TUPLE_MAX], d[HG_TUPLE_MAX], ks[HG_TUPLE_MAX], kd[HG_TUPLE_MAX];
  int n = hgl_flat(l, s, d), m = 0;
  for (int i = 0; i < n; i++)
    if (!(s[i] == 1 || d[i] == 0)) {
      ks[m] = s[i];
      kd[m] = d[i];
      m++;
    }
  if (m == 0) {
    *out = hg_layout_1d(1, 0);
    return hg_ok();
  }
  return coalesce_flat(m, ks, kd, out);
}

/* ---------------------------------------------------------------- composition */

/* A o B for an integer-shaped B: walk the coalesced modes of A, peeling B's stride off
 * each mode and fitting B's shape into what is left (pycute's composition). */
static hg_status_t compose_1d(const hg_layout_t *a, int64_t bshape, int64_t bstride,
                              hg_layout_t *out) {
  if (bstride == 0) {
    *out = hg_layout_1d(bshape, 0);
    return hg_ok();
  }
  hg_layout_t fa;
  HG_TRY(hgl_coalesce(a, &fa));
  int64_t as[HG_TUPLE_MAX], ad[HG_TUPLE_MAX], rs[HG_TUPLE_MAX], rd[HG_TUPLE_MAX];
  int n = hgl_flat(&fa, as, ad), m = 0;
  int64_t rest_shape = bshape, rest_stride = bstride;
  for (int i = 0; i + 1 < n; i++) {
    int64_t cs = as[i], cd = ad[i], r1, r2;
    HG_TRY(hgl_mod(cs, rest_stride, &r1));
    if (r1 != 0) {
      HG_TRY(hgl_mod(rest_stride, cs, &r2));
      if (r2 != 0) {
        char x[256];
        return hg_error(HG_ERR_INVALID,
                        "composition %s o %lld:%lld: the mode of shape %lld (stride %lld) of the "
                        "coalesced left layout and the remaining stride %lld of the right layout "
                        "do not divide one another (CuTe's divisibility condition)",
                        hgl_lstr(a, x, sizeof x), (long long)bshape, (long long)bstride,
                        (long long)cs, (long long)cd, (long long)rest_stride);
      }
    }
    int64_t q, ns;
    HG_TRY(hgl_floordiv(cs, rest_stride, &q));
    ns = q > 1 ? q : 1;
    if (rest_shape < ns) ns = rest_shape;
    if (ns != 1) {
      rs[m] = ns;
      HG_TRY(hgl_mul(rest_stride, cd, &rd[m]));
      m++;
    }
    HG_TRY(hgl_floordiv(rest_shape, ns, &rest_shape));
    HG_TRY(hgl_ceildiv(rest_stride, cs, &rest_stride));
  }
  if (rest_shape != 1 || m == 0) {
    rs[m] = rest_shape;
    HG_TRY(hgl_mul(rest_stride, ad[n - 1], &rd[m]));
    m++;
  }
  return hgl_from_flat(m, rs, rd, out);
}

/* A o B: B's modes compose one by one (keeping B's nesting), integer modes by compose_1d. */
hg_status_t hgl_composition(const hg_layout_t *a, const hg_layout_t *b, hg_layout_t *out) {
  if (b->shape.arity[0] == HG_LEAF) return compose_1d(a, b->shape.v[0], b->stride.v[0], out);
  hg_layout_t r, bm, cm;
  hgl_layout_empty(&r);
  int k = b->shape.arity[0];
  for (int i = 0; i < k; i++) {
    hgl_mode(b, i, &bm);
    HG_TRY(hgl_composition(a, &bm, &cm));
    HG_TRY(hgl_layout_push(&r, &cm));
  }
  *out = r;
  return hg_ok();
}

hg_status_t hg_composition(const hg_layout_t *a, const hg_layout_t *b, hg_layout_t *out) {
  HG_TRY(hgl_check_layout(a, "composition: left layout"));
  HG_TRY(hgl_check_layout(b, "composition: right layout"));
  hg_status_t s = hgl_composition(a, b, out);
  if (!hg_is_ok(&s) && strncmp(s.msg, "composition", 11) != 0) {
    char x[256], y[256];
    return hg_status_wrap(s, "composition %s o %s: ", hgl_lstr(a, x, sizeof x),
                          hgl_lstr(b, y, sizeof y));
  }
  return s;
}

hg_status_t hg_composition_tiler(const hg_layout_t *a, const hg_tiler_t *t, hg_layout_t *out) {
  HG_TRY(hgl_check_layout(a, "composition: left layout"));
  HG_TRY(hgl_check_tiler(t, "composition: tiler"));
  if (t->rank == 0) return hg_composition(a, &t->mode[0], out);
  hg_status_t s = hgl_by_mode(HGL_COMPOSE, a, t, 0, t->rank, out);
  if (!hg_is_ok(&s)) {
    char x[256], y[512];
    hg_tiler_print(t, y, sizeof y);
    return hg_status_wrap(s, "composition %s o %s: ", hgl_lstr(a, x, sizeof x), y);
  }
  return s;
}

/* ---------------------------------------------------------------- complement */

/* Sort (key0, key1, key2) triples lexicographically, like Python's sorted() on tuples. */
static void sort3(int n, int64_t (*k)[3]) {
  for (int i = 1; i < n; i++) {
    int64_t t[3] = {k[i][0], k[i][1], k[i][2]};
    int j = i;
    while (j > 0 && (k[j - 1][0] > t[0] || (k[j - 1][0] == t[0] && k[j - 1][1] > t[1]) ||
                     (k[j - 1][0] == t[0] && k[j - 1][1] == t[1] && k[j - 1][2] > t[2]))) {
      memcpy(k[j], k[j - 1], sizeof k[j]);
      j--;
    }
    memcpy(k[j], t, sizeof t);
  }
}

hg_status_t hgl_complement_modes(const hg_layout_t *l, int64_t *rs, int64_t *rd, int *m,
                                 int64_t *cur) {
  int64_t s[HG_TUPLE_MAX], d[HG_TUPLE_MAX], k[HG_TUPLE_MAX][3];
  int n = hgl_flat(l, s, d);
  for (int i = 0; i < n; i++) {
    k[i][0] = d[i];
    k[i][1] = s[i];
    k[i][2] = 0;
  }
  sort3(n, k);
  *m = 0;
  *cur = 1;
  for (int i = 0; i < n; i++) {
    int64_t stride = k[i][0], shape = k[i][1], span;
    if (stride == 0 || shape == 1) continue;
    HG_TRY(hgl_mul(shape, stride, &span));
    if (*cur > span) {
      char x[256];
      return hg_error(HG_ERR_INVALID,
                      "complement of %s: the mode %lld:%lld ends at %lld, below %lld already "
                      "covered by the modes of smaller stride (the modes overlap; CuTe's "
                      "in-bound condition)",
                      hgl_lstr(l, x, sizeof x), (long long)shape, (long long)stride,
                      (long long)span, (long long)*cur);
    }
    HG_TRY(hgl_floordiv(stride, *cur, &rs[*m]));
    rd[*m] = *cur;
    (*m)++;
    *cur = span;
  }
  return hg_ok();
}

hg_status_t hgl_complement(const hg_layout_t *l, int64_t bound, hg_layout_t *out) {
  int64_t rs[HG_TUPLE_MAX + 1], rd[HG_TUPLE_MAX + 1], cur, t;
  int m;
  HG_TRY(hgl_complement_modes(l, rs, rd, &m, &cur));
  HG_TRY(hgl_add(bound, cur, &t));
  HG_TRY(hgl_sub(t, 1, &t));
  HG_TRY(hgl_floordiv(t, cur, &rs[m]));
  rd[m] = cur;
  m++;
  /* pycute coalesces a tuple layout here, so even one mode goes through coalesce. */
  return coalesce_flat(m, rs, rd, out);
}

hg_status_t hg_complement(const hg_layout_t *l, int64_t cosize_bound, hg_layout_t *out) {
  HG_TRY(hgl_check_layout(l, "complement"));
  char x[256];
  if (cosize_bound < 0 || cosize_bound == HG_UNDERSCORE)
    return hg_error(HG_ERR_INVALID, "complement of %s: the cosize bound %lld is negative",
                    hgl_lstr(l, x, sizeof x), (long long)cosize_bound);
  hg_status_t s = hgl_complement(l, cosize_bound, out);
  if (!hg_is_ok(&s) && strncmp(s.msg, "complement", 10) != 0)
    return hg_status_wrap(s, "complement of %s with bound %lld: ", hgl_lstr(l, x, sizeof x),
                          (long long)cosize_bound);
  return s;
}

/* ---------------------------------------------------------------- inverses */

hg_status_t hgl_right_inverse(const hg_layout_t *l, hg_layout_t *out) {
  int64_t s[HG_TUPLE_MAX], d[HG_TUPLE_MAX], k[HG_TUPLE_MAX][3];
  int n = hgl_flat(l, s, d);
  /* Column-major strides of the flat shape, the inverse's strides; one that overflows is
   * marked INT64_MAX and is an error only if the inverse needs it. */
  int64_t run = 1;
  bool o = false;
  for (int i = 0; i < n; i++) {
    k[i][0] = d[i];
    k[i][1] = s[i];
    k[i][2] = o ? INT64_MAX : run;
    if (s[i] == 0) {
      run = 0;
      o = false;
    } else if (!o && __builtin_mul_overflow(run, s[i], &run)) {
      o = true;
    }
  }
  sort3(n, k);
  int64_t rs[HG_TUPLE_MAX], rd[HG_TUPLE_MAX], cur = 1;
  int m = 0;
  for (int i = 0; i < n; i++) {
    int64_t stride = k[i][0], shape = k[i][1];
    if (shape == 1) continue;
    if (cur != stride) break;
    if (k[i][2] == INT64_MAX)
      return hg_error(HG_ERR_OVERFLOW, "right_inverse: a stride of the inverse overflows int64");
    rs[m] = shape;
    rd[m] = k[i][2];
    m++;
    HG_TRY(hgl_mul(shape, stride, &cur));
  }
  if (m == 0) {
    *out = hg_layout_1d(1, 0);
    return hg_ok();
  }
  return coalesce_flat(m, rs, rd, out);
}

hg_status_t hg_right_inverse(const hg_layout_t *l, hg_layout_t *out) {
  HG_TRY(hgl_check_layout(l, "right_inverse"));
  return hgl_wrap(hgl_right_inverse(l, out), "right_inverse of", l, NULL);
}

hg_status_t hg_left_inverse(const hg_layout_t *l, hg_layout_t *out) {
  HG_TRY(hgl_check_layout(l, "left_inverse"));
  char x[256];
  hg_layout_t c, both;
  hg_status_t s = hgl_complement(l, 1, &c);
  if (hg_is_ok(&s)) {
    hgl_layout_empty(&both);
    s = hgl_layout_push(&both, l);
    if (hg_is_ok(&s)) s = hgl_layout_push(&both, &c);
  }
  if (hg_is_ok(&s)) s = hgl_right_inverse(&both, out);
  if (!hg_is_ok(&s))
    return hg_status_wrap(
        s, "left_inverse of %s (right_inverse of (L, complement(L))): ", hgl_lstr(l, x, sizeof x));
  return s;
}
