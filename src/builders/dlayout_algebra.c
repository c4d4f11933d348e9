/* The algebra on dynamic layouts: coalesce, complement (of a static layout within a
 * dynamic bound), composition with a static right side, the divides by static (nested)
 * tilers, local_tile and local_partition. Each step is the static algebra's
 * (src/layout/algebra.c, divide.c), on hg_dint_t: what is static folds, what is provable
 * about monomials decides structure, and a divisibility condition that cannot be decided
 * before run time is refused with a sentence (see include/hopgen/dlayout.h). */
#include <string.h>

#include "builders/dlayout_internal.h"

/* ---------------------------------------------------------------- coalesce */

/* Merge adjacent leaves (s0:d0, s1:d1) when d1 == s0 * d0 is provable; drop static
 * size-1 leaves. */
static hg_status_t coalesce_flat(hg_builder_t *b, int n, const hg_dint_t *shape,
                                 const hg_dint_t *stride, hg_dlayout_t *out) {
  hg_dint_t rs[HG_TUPLE_MAX + 1], rd[HG_TUPLE_MAX + 1], span;
  int m = 1;
  rs[0] = hg_dint(1);
  rd[0] = hg_dint(0);
  for (int i = 0; i < n; i++) {
    if (hg_dint_is(shape[i], 1)) continue;
    if (hg_dint_is(rs[m - 1], 1)) {
      rs[m - 1] = shape[i];
      rd[m - 1] = stride[i];
      continue;
    }
    /* A static product that overflows cannot equal a stride: no merge (as the static
     * coalesce), so a failure of this multiplication is not an error. */
    hg_status_t s = hg_dint_mul(b, rs[m - 1], rd[m - 1], &span);
    if (hg_is_ok(&s) && hgd_equal(span, stride[i]) == HGD_YES) {
      HG_TRY(hg_dint_mul(b, rs[m - 1], shape[i], &rs[m - 1]));
    } else {
      rs[m] = shape[i];
      rd[m] = stride[i];
      m++;
    }
  }
  return hgd_from_flat(m, rs, rd, out);
}

hg_status_t hgd_coalesce(hg_builder_t *b, const hg_dlayout_t *l, hg_dlayout_t *out) {
  hg_dint_t s[HG_TUPLE_MAX], d[HG_TUPLE_MAX];
  int n = hgd_flat(l, s, d);
  return coalesce_flat(b, n, s, d, out);
}

hg_status_t hg_dl_coalesce(hg_builder_t *b, const hg_dlayout_t *l, hg_dlayout_t *out) {
  HG_TRY(hgd_check(l, "coalesce"));
  hg_status_t s = hgd_coalesce(b, l, out);
  if (!hg_is_ok(&s)) {
    char a[256];
    return hg_status_wrap(s, "coalesce %s: ", hgd_lstr(l, a, sizeof a));
  }
  return hgd_builder_ok(b);
}

/* ---------------------------------------------------------------- complement */

static hg_status_t complement(hg_builder_t *b, const hg_layout_t *l, hg_dint_t bound,
                              hg_dlayout_t *out) {
  int64_t rs[HG_TUPLE_MAX + 1], rd[HG_TUPLE_MAX + 1], cur;
  int m;
  HG_TRY(hgl_complement_modes(l, rs, rd, &m, &cur));
  hg_dint_t s[HG_TUPLE_MAX + 1], d[HG_TUPLE_MAX + 1];
  for (int i = 0; i < m; i++) {
    s[i] = hg_dint(rs[i]);
    d[i] = hg_dint(rd[i]);
  }
  /* The last mode covers the bound: ceil(bound / cur), pycute's (bound + cur - 1) // cur. */
  HG_TRY(hg_dint_ceil_div(b, bound, hg_dint(cur), &s[m]));
  d[m] = hg_dint(cur);
  return coalesce_flat(b, m + 1, s, d, out);
}

hg_status_t hg_dl_complement(hg_builder_t *b, const hg_layout_t *l, hg_dint_t bound,
                             hg_dlayout_t *out) {
  HG_TRY(hgl_check_layout(l, "complement"));
  char x[256];
  if (bound.n == 0 && bound.c < 0)
    return hg_error(HG_ERR_INVALID, "complement of %s: the cosize bound %lld is negative",
                    hgl_lstr(l, x, sizeof x), (long long)bound.c);
  hg_status_t s = complement(b, l, bound, out);
  if (!hg_is_ok(&s)) return hg_status_wrap(s, "complement of %s: ", hgl_lstr(l, x, sizeof x));
  return hgd_builder_ok(b);
}

/* ---------------------------------------------------------------- composition */

static hg_status_t undecidable(const hg_dlayout_t *a, const char *what_x, hg_dint_t x,
                               const char *what_y, hg_dint_t y) {
  char l[256], xs[160], ys[160];
  hg_dint_print(x, xs, sizeof xs);
  hg_dint_print(y, ys, sizeof ys);
  return hg_error(HG_ERR_UNSUPPORTED,
                  "composition %s o B: the %s %s of the coalesced left layout and the %s %s of B "
                  "must divide one another (CuTe's divisibility condition), and that cannot be "
                  "decided before run time (it can when both are static, or one is a factor of "
                  "the other: 64 and 64*M; tile dynamic modes by mode instead)",
                  hgd_lstr(a, l, sizeof l), what_x, xs, what_y, ys);
}

static hg_status_t not_dividing(const hg_dlayout_t *a, const char *what_x, hg_dint_t x,
                                const char *what_y, hg_dint_t y) {
  char l[256];
  return hg_error(HG_ERR_INVALID,
                  "composition %s o B: the %s %lld of the coalesced left layout and the %s %lld "
                  "of the right layout do not divide one another (CuTe's divisibility condition)",
                  hgd_lstr(a, l, sizeof l), what_x, (long long)x.c, what_y, (long long)y.c);
}

/* A o (bs:bd) for an integer-shaped right side with a static stride: walk the coalesced
 * modes of A, peeling bd off each and fitting bs into what is left (pycute's
 * composition), with each divisibility either decided or refused. */
static hg_status_t compose_1d(hg_builder_t *b, const hg_dlayout_t *a, hg_dint_t bs, hg_dint_t bd,
                              hg_dlayout_t *out) {
  if (hg_dint_is(bd, 0)) return hgd_from_flat(1, &bs, &bd, out);
  if (!hg_dint_is_static(bd))
    return hg_error(HG_ERR_UNSUPPORTED, "composition needs a static right side: its stride is "
                                        "dynamic (CuTe's divisibility condition must be decided)");
  hg_dlayout_t fa;
  HG_TRY(hgd_coalesce(b, a, &fa));
  hg_dint_t as[HG_TUPLE_MAX], ad[HG_TUPLE_MAX], rs[HG_TUPLE_MAX], rd[HG_TUPLE_MAX];
  int n = hgd_flat(&fa, as, ad), m = 0;
  /* With a dynamic leaf in A, its modes may merge at run time where they could not here,
   * so every step must be exact for the result not to depend on that (below). */
  bool dynamic_a = false;
  for (int i = 0; i < n; i++) dynamic_a = dynamic_a || as[i].n > 0 || ad[i].n > 0;
  hg_dint_t rest_shape = bs, rest_stride = bd, ns, next, q;
  for (int i = 0; i + 1 < n; i++) {
    hg_dint_t cs = as[i], cd = ad[i];
    if (!dynamic_a) {
      /* pycute's step, exactly: A and so B's remaining stride are static (only B's size may
       * be dynamic, inside a divide); static operands fold, errors are the static ones. */
      int64_t r1, r2 = 0;
      HG_TRY(hgl_mod(cs.c, rest_stride.c, &r1));
      if (r1 != 0) HG_TRY(hgl_mod(rest_stride.c, cs.c, &r2));
      if (r1 != 0 && r2 != 0)
        return not_dividing(a, "mode of shape", cs, "remaining stride", rest_stride);
      HG_TRY(hg_dint_div(b, cs, rest_stride, &q));
      HG_TRY(hg_dint_max(b, hg_dint(1), q, &q));
      HG_TRY(hg_dint_min(b, q, rest_shape, &ns));
      HG_TRY(hg_dint_ceil_div(b, rest_stride, cs, &next));
    } else {
      /* A dynamic step must be exact: B's stride and the mode divide one another, and the
       * extent taken from the mode and B's remaining size too (CuTe's divisibility
       * conditions, which it checks only for static values). */
      if (!hgd_pos(cs) || !hgd_pos(rest_stride) || !hgd_pos(rest_shape))
        return undecidable(a, "mode of extent", cs, "remaining stride", rest_stride);
      if (hgd_divides(rest_stride, cs) == HGD_YES) {
        HG_TRY(hg_dint_div(b, cs, rest_stride, &q));
        if (hgd_divides(rest_shape, q) == HGD_YES)
          ns = rest_shape; /* the mode holds all of B */
        else if (hgd_divides(q, rest_shape) == HGD_YES)
          ns = q;
        else
          return undecidable(a, "extent", q, "remaining size", rest_shape);
        next = hg_dint(1);
      } else if (hgd_divides(cs, rest_stride) == HGD_YES) {
        ns = hg_dint(1); /* B steps over this mode entirely */
        HG_TRY(hg_dint_div(b, rest_stride, cs, &next));
      } else {
        return undecidable(a, "mode of extent", cs, "remaining stride", rest_stride);
      }
    }
    if (!hg_dint_is(ns, 1)) { /* a dynamic extent that may be 1 is kept (CuTe's rule) */
      rs[m] = ns;
      HG_TRY(hg_dint_mul(b, rest_stride, cd, &rd[m]));
      m++;
    }
    HG_TRY(hg_dint_div(b, rest_shape, ns, &rest_shape));
    rest_stride = next;
  }
  if (!hg_dint_is(rest_shape, 1) || m == 0) {
    rs[m] = rest_shape;
    HG_TRY(hg_dint_mul(b, rest_stride, ad[n - 1], &rd[m]));
    m++;
  }
  return hgd_from_flat(m, rs, rd, out);
}

hg_status_t hgd_composition(hg_builder_t *b, const hg_dlayout_t *a, const hg_dlayout_t *bl,
                            hg_dlayout_t *out) {
  if (bl->shape.t.arity[0] == HG_LEAF)
    return compose_1d(b, a, bl->shape.d[0], bl->stride.d[0], out);
  hg_dlayout_t r, bm, cm;
  hgd_layout_empty(&r);
  for (int i = 0; i < bl->shape.t.arity[0]; i++) {
    hgd_mode(bl, i, &bm);
    HG_TRY(hgd_composition(b, a, &bm, &cm));
    HG_TRY(hgd_layout_push(&r, &cm));
  }
  *out = r;
  return hg_ok();
}

hg_status_t hg_dl_composition(hg_builder_t *b, const hg_dlayout_t *a, const hg_layout_t *bl,
                              hg_dlayout_t *out) {
  HG_TRY(hgd_check(a, "composition: left layout"));
  HG_TRY(hgl_check_layout(bl, "composition: right layout"));
  hg_dlayout_t db = hg_dlayout_static(bl);
  hg_status_t s = hgd_composition(b, a, &db, out);
  if (!hg_is_ok(&s) && strncmp(s.msg, "composition", 11) != 0) {
    char x[256], y[256];
    return hg_status_wrap(s, "composition %s o %s: ", hgd_lstr(a, x, sizeof x),
                          hgl_lstr(bl, y, sizeof y));
  }
  HG_TRY(s);
  return hgd_builder_ok(b);
}

/* ---------------------------------------------------------------- by-mode tilers */

static hg_status_t check_by_mode_rank(const hg_dlayout_t *a, int count) {
  if (count > hgd_rank(a)) {
    char x[256];
    return hg_error(HG_ERR_INVALID,
                    "the tiler has %d modes but the layout %s only %d (a by-mode tiler may not "
                    "have more modes than the layout)",
                    count, hgd_lstr(a, x, sizeof x), hgd_rank(a));
  }
  return hg_ok();
}

/* logical_divide(A, B) = A o (B, complement(B, size(A))) for a static B. */
static hg_status_t divide(hg_builder_t *b, const hg_dlayout_t *a, const hg_layout_t *t,
                          hg_dlayout_t *out) {
  hg_dint_t n;
  hg_dlayout_t c, bc, tb = hg_dlayout_static(t);
  HG_TRY(hgd_subsize(b, &a->shape, 0, &n));
  HG_TRY(complement(b, t, n, &c));
  hgd_layout_empty(&bc);
  HG_TRY(hgd_layout_push(&bc, &tb));
  HG_TRY(hgd_layout_push(&bc, &c));
  return hgd_composition(b, a, &bc, out);
}

/* The static algebra's by-mode recursion (src/layout/divide.c) on a dynamic layout:
 * compose (composition), split (logical_divide), or unzip (zipped: tiles, rests). */
typedef enum by_mode { BY_COMPOSE, BY_DIVIDE, BY_UNZIP } by_mode_t;

static hg_status_t by_list(hg_builder_t *b, by_mode_t how, const hg_dlayout_t *a,
                           const hg_tiler_t *t, int first, int count, hg_dlayout_t *out) {
  HG_TRY(check_by_mode_rank(a, count));
  hg_dlayout_t r, tiles, rests, am, sm, half;
  hgd_layout_empty(&r);
  hgd_layout_empty(&tiles);
  hgd_layout_empty(&rests);
  for (int i = 0, node = first; i < hgd_rank(a); i++) {
    hgd_mode(a, i, &am);
    bool keep = i >= count || t->skip[node];
    if (keep) {
      sm = am;
    } else if (t->sub[node] > 0) {
      HG_TRY(by_list(b, how, &am, t, node + 1, t->sub[node], &sm));
    } else if (how == BY_COMPOSE) {
      hg_dlayout_t tb = hg_dlayout_static(&t->mode[node]);
      HG_TRY(hgd_composition(b, &am, &tb, &sm));
    } else {
      HG_TRY(divide(b, &am, &t->mode[node], &sm));
    }
    if (i < count) node = hgl_tiler_end(t, node);
    if (how != BY_UNZIP) {
      HG_TRY(hgd_layout_push(&r, &sm));
      continue;
    }
    /* hier_unzip: past the list a mode is all rest; a `_` slot tiles it by 1:0. */
    if (i >= count) {
      HG_TRY(hgd_layout_push(&rests, &am));
      continue;
    }
    if (keep) {
      hg_dint_t one = hg_dint(1), zero = hg_dint(0);
      HG_TRY(hgd_from_flat(1, &one, &zero, &half));
      HG_TRY(hgd_layout_push(&tiles, &half));
      HG_TRY(hgd_layout_push(&rests, &am));
      continue;
    }
    hgd_mode(&sm, 0, &half);
    HG_TRY(hgd_layout_push(&tiles, &half));
    hgd_mode(&sm, 1, &half);
    HG_TRY(hgd_layout_push(&rests, &half));
  }
  if (how == BY_UNZIP) {
    HG_TRY(hgd_layout_push(&r, &tiles));
    HG_TRY(hgd_layout_push(&r, &rests));
  }
  *out = r;
  return hg_ok();
}

static hg_status_t by_tiler(hg_builder_t *b, by_mode_t how, const hg_dlayout_t *a,
                            const hg_tiler_t *t, hg_dlayout_t *out) {
  if (t->rank > 0) return by_list(b, how, a, t, 0, t->rank, out);
  if (how == BY_COMPOSE) {
    hg_dlayout_t tb = hg_dlayout_static(&t->mode[0]);
    return hgd_composition(b, a, &tb, out);
  }
  return divide(b, a, &t->mode[0], out);
}

/* Reshape a zipped (tiles, rests) result: tiled keeps the tiles and unpacks the rests;
 * flat unpacks both, but keeps a rank-1 half whole (CuTe's repeat<1>(_) is a bare `_`). */
static hg_status_t unpack(const hg_dlayout_t *z, bool flat, hg_dlayout_t *out) {
  hg_dlayout_t r, m, x;
  hgd_layout_empty(&r);
  for (int h = 0; h < 2; h++) {
    hgd_mode(z, h, &m);
    if ((h == 0 && !flat) || (flat && hgd_rank(&m) == 1)) {
      HG_TRY(hgd_layout_push(&r, &m));
      continue;
    }
    for (int i = 0; i < hgd_rank(&m); i++) {
      hgd_mode(&m, i, &x);
      HG_TRY(hgd_layout_push(&r, &x));
    }
  }
  *out = r;
  return hg_ok();
}

typedef enum tiler_op { OP_COMPOSE, OP_LOGICAL, OP_ZIPPED, OP_TILED, OP_FLAT } tiler_op_t;

static hg_status_t tiler_op(hg_builder_t *b, tiler_op_t op, const char *name, const hg_dlayout_t *l,
                            const hg_tiler_t *t, hg_dlayout_t *out) {
  HG_TRY(hgd_check(l, name));
  HG_TRY(hgl_check_tiler(t, name));
  hg_dlayout_t z;
  hg_status_t s;
  switch (op) {
  case OP_COMPOSE:
    s = by_tiler(b, BY_COMPOSE, l, t, out);
    break;
  case OP_LOGICAL:
    s = by_tiler(b, BY_DIVIDE, l, t, out);
    break;
  case OP_ZIPPED:
    s = by_tiler(b, BY_UNZIP, l, t, out);
    break;
  default:
    s = by_tiler(b, BY_UNZIP, l, t, &z);
    if (hg_is_ok(&s)) s = unpack(&z, op == OP_FLAT, out);
    break;
  }
  if (!hg_is_ok(&s)) {
    char x[256], y[512];
    hg_tiler_print(t, y, sizeof y);
    return hg_status_wrap(s, "%s of %s by %s: ", name, hgd_lstr(l, x, sizeof x), y);
  }
  return hgd_builder_ok(b);
}

/* Each public tiler operation is tiler_op under its CuTe name (for messages). */
#define DL_TILER_API(name, op, cute)                                                               \
  hg_status_t name(hg_builder_t *b, const hg_dlayout_t *l, const hg_tiler_t *t,                    \
                   hg_dlayout_t *out) {                                                            \
    return tiler_op(b, op, cute, l, t, out);                                                       \
  }
DL_TILER_API(hg_dl_composition_tiler, OP_COMPOSE, "composition")
DL_TILER_API(hg_dl_logical_divide, OP_LOGICAL, "logical_divide")
DL_TILER_API(hg_dl_zipped_divide, OP_ZIPPED, "zipped_divide")
DL_TILER_API(hg_dl_tiled_divide, OP_TILED, "tiled_divide")
DL_TILER_API(hg_dl_flat_divide, OP_FLAT, "flat_divide")

/* ---------------------------------------------------------------- local_tile, partition */

/* `_` repeated over a mode of rank r, or a bare `_` for rank 1 (CuTe's repeat<1>(_)). */
static hg_status_t all_kept(int r, hg_dtuple_t *out) {
  hg_dtuple_t u;
  u.t = hg_int(HG_UNDERSCORE);
  u.d[0] = hg_dint(HG_UNDERSCORE);
  if (r == 1) {
    *out = u;
    return hg_ok();
  }
  hgd_empty(out);
  for (int i = 0; i < r; i++) HG_TRY(hgd_push(out, &u));
  return hg_ok();
}

hg_status_t hg_dl_local_tile(hg_builder_t *b, const hg_dlayout_t *l, const hg_tiler_t *t,
                             const hg_dtuple_t *coord, hg_dlayout_t *out, hg_dint_t *offset) {
  hg_dlayout_t z, m0, m1;
  HG_TRY(tiler_op(b, OP_ZIPPED, "local_tile", l, t, &z));
  if (!coord || !hgl_tuple_valid(&coord->t))
    return hg_error(HG_ERR_INVALID, "local_tile: malformed coordinate");
  hgd_mode(&z, 0, &m0);
  hgd_mode(&z, 1, &m1);
  int r1 = hgd_rank(&m1), rc = hg_tuple_rank(&coord->t);
  hg_dtuple_t crd, part, rest;
  hgd_empty(&crd);
  HG_TRY(all_kept(hgd_rank(&m0), &part));
  HG_TRY(hgd_push(&crd, &part));
  /* The coordinate indexes the grid of tiles, padded with `_` to its rank. */
  if (coord->t.arity[0] == HG_LEAF) {
    HG_TRY(hgd_push(&crd, coord));
  } else if (m1.shape.t.arity[0] == HG_LEAF || rc > r1) {
    char x[256];
    return hg_error(HG_ERR_INVALID,
                    "local_tile: coordinate %s has %d modes but the grid of tiles only %d",
                    hgl_tstr(&coord->t, x, sizeof x), rc, r1);
  } else {
    rest = *coord;
    hg_dtuple_t u;
    HG_TRY(all_kept(1, &u));
    for (int i = rc; i < r1; i++) HG_TRY(hgd_push(&rest, &u));
    HG_TRY(hgd_push(&crd, &rest));
  }
  return hg_dl_slice(b, &z, &crd, out, offset);
}

/* The thread's coordinate in thr: per leaf (idx // stride) % shape, CuTe's get_hier_coord
 * (exact for the compact thread layouts it is meant for), each top-level mode's part made
 * 1-D within the mode (get_flat_coord). */
static hg_status_t thread_coord(hg_builder_t *b, const hg_layout_t *thr, hg_dint_t idx,
                                hg_dtuple_t *coord) {
  hgd_empty(coord);
  int r = hgl_rank(thr);
  for (int i = 0; i < r; i++) {
    hg_layout_t tm;
    hgl_mode(thr, i, &tm);
    int64_t s[HG_TUPLE_MAX], d[HG_TUPLE_MAX], run = 1;
    int n = hgl_flat(&tm, s, d);
    hg_dint_t c1 = hg_dint(0), c;
    for (int k = 0; k < n; k++) {
      if (d[k] == 0 && s[k] != 1) {
        char x[256];
        return hg_error(HG_ERR_INVALID,
                        "local_partition: thread layout %s has a mode %lld:0; a stride-0 mode "
                        "cannot map a thread index back to a coordinate",
                        hgl_lstr(thr, x, sizeof x), (long long)s[k]);
      }
      if (d[k] != 0 && s[k] != 1) {
        HG_TRY(hg_dint_div(b, idx, hg_dint(d[k]), &c));
        HG_TRY(hg_dint_mod(b, c, hg_dint(s[k]), &c));
        HG_TRY(hg_dint_mul(b, c, hg_dint(run), &c));
        HG_TRY(hg_dint_add(b, c1, c, &c1));
      }
      HG_TRY(hgl_mul(run, s[k], &run));
    }
    hg_dtuple_t leaf;
    leaf.t = hg_int(c1.c);
    leaf.d[0] = c1;
    if (hg_is_int(&thr->shape)) {
      *coord = leaf;
      return hg_ok();
    }
    HG_TRY(hgd_push(coord, &leaf));
  }
  return hg_ok();
}

hg_status_t hg_dl_local_partition(hg_builder_t *b, const hg_dlayout_t *l, const hg_layout_t *thr,
                                  hg_dint_t idx, hg_dlayout_t *out, hg_dint_t *offset) {
  HG_TRY(hgd_check(l, "local_partition"));
  HG_TRY(hgl_check_layout(thr, "local_partition: thread layout"));
  char x[256];
  int64_t nthr;
  HG_TRY(hgl_size(thr, &nthr));
  if (idx.n == 0 && (idx.c < 0 || idx.c >= nthr))
    return hg_error(HG_ERR_INVALID,
                    "local_partition: thread index %lld is outside the thread layout %s (0 <= "
                    "index < %lld)",
                    (long long)idx.c, hgl_lstr(thr, x, sizeof x), (long long)nthr);
  /* The tiler is the size of each thread mode (CuTe's product_each(shape(thr))). */
  hg_tiler_t t;
  if (hg_is_int(&thr->shape)) {
    hg_layout_t whole = hg_layout_1d(nthr, 1);
    t = hg_tiler_layout(&whole);
  } else {
    hg_tuple_t sizes;
    hgl_empty(&sizes);
    for (int i = 0; i < hgl_rank(thr); i++) {
      hg_layout_t tm;
      int64_t n;
      hgl_mode(thr, i, &tm);
      HG_TRY(hgl_size(&tm, &n));
      HG_TRY(hgl_push_int(&sizes, n));
    }
    HG_TRY(hg_tiler_shape(&sizes, &t));
  }
  hg_dtuple_t coord, crd, rest;
  HG_TRY(thread_coord(b, thr, idx, &coord));
  hg_dlayout_t z, m1;
  HG_TRY(tiler_op(b, OP_ZIPPED, "local_partition", l, &t, &z));
  hgd_mode(&z, 1, &m1);
  hgd_empty(&crd);
  HG_TRY(hgd_push(&crd, &coord));
  HG_TRY(all_kept(hgd_rank(&m1), &rest));
  HG_TRY(hgd_push(&crd, &rest));
  return hg_dl_slice(b, &z, &crd, out, offset);
}
