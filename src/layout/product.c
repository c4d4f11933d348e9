/* Products (logical, zipped, tiled, flat, blocked, raked), tile_to_shape, local_partition,
 * the common vector of two layouts, and recasting between element widths.
 *
 * pycute has no blocked/raked products, tile_to_shape, upcast/downcast or max_common_*;
 * those follow CuTe's C++ (include/cute/layout.hpp, tensor_impl.hpp) with its static-layout
 * checks turned into errors. */
#include <inttypes.h>
#include <string.h>

#include "layout_internal.h"

HGL_TILER_API(hg_logical_product, HGL_OP_LOGICAL_PRODUCT)
HGL_TILER_API(hg_zipped_product, HGL_OP_ZIPPED_PRODUCT)
HGL_TILER_API(hg_tiled_product, HGL_OP_TILED_PRODUCT)
HGL_TILER_API(hg_flat_product, HGL_OP_FLAT_PRODUCT)

/* ---------------------------------------------------------------- blocked / raked */

/* CuTe's append<R>: pad with 1:0 modes up to rank R (an integer layout becomes a tuple). */
static hg_status_t pad_rank(const hg_layout_t *l, int r, hg_layout_t *out) {
  if (hgl_rank(l) >= r) {
    *out = *l;
    return hg_ok();
  }
  hg_layout_t p, one = hg_layout_1d(1, 0);
  if (hg_is_int(&l->shape)) {
    hgl_layout_empty(&p);
    HG_TRY(hgl_layout_push(&p, l));
  } else {
    p = *l;
  }
  while (hgl_rank(&p) < r) HG_TRY(hgl_layout_push(&p, &one));
  *out = p;
  return hg_ok();
}

/* logical_product of the padded layouts, then mode i of the result is the pair
 * (block_i, tiler_i) for blocked_product, (tiler_i, block_i) for raked_product: CuTe's
 * zip of the two halves (CUTLASS 4.2 no longer coalesces the pairs). */
static hg_status_t rank_product(const char *name, bool raked, const hg_layout_t *block,
                                const hg_layout_t *tiler, hg_layout_t *out) {
  HG_TRY(hgl_check_layout(block, name));
  HG_TRY(hgl_check_layout(tiler, name));
  int rb = hgl_rank(block), rt = hgl_rank(tiler), r = rb > rt ? rb : rt;
  hg_layout_t pb, pt, prod, h0, h1, m0, m1, pair, res;
  hg_status_t s = pad_rank(block, r, &pb);
  if (hg_is_ok(&s)) s = pad_rank(tiler, r, &pt);
  if (hg_is_ok(&s)) s = hgl_logical_product(&pb, &pt, &prod);
  if (hg_is_ok(&s)) {
    hgl_mode(&prod, 0, &h0);
    hgl_mode(&prod, 1, &h1);
    hgl_layout_empty(&res);
    for (int i = 0; i < r && hg_is_ok(&s); i++) {
      /* zip takes mode i of each half, unless its first argument has an integer shape
       * (rank 1): CuTe's zip then pairs the two halves whole. */
      const hg_layout_t *first = raked ? &h1 : &h0, *second = raked ? &h0 : &h1;
      bool tuples = !hg_is_int(&first->shape);
      if (tuples)
        hgl_mode(first, i, &m0);
      else
        m0 = *first;
      if (tuples && !hg_is_int(&second->shape))
        hgl_mode(second, i, &m1);
      else
        m1 = *second;
      hgl_layout_empty(&pair);
      s = hgl_layout_push(&pair, &m0);
      if (hg_is_ok(&s)) s = hgl_layout_push(&pair, &m1);
      if (hg_is_ok(&s)) s = hgl_layout_push(&res, &pair);
    }
  }
  if (!hg_is_ok(&s)) {
    char x[256], y[256];
    return hg_status_wrap(s, "%s of %s and %s: ", name, hgl_lstr(block, x, sizeof x),
                          hgl_lstr(tiler, y, sizeof y));
  }
  *out = res;
  return hg_ok();
}

hg_status_t hg_blocked_product(const hg_layout_t *l, const hg_layout_t *b, hg_layout_t *out) {
  return rank_product("blocked_product", false, l, b, out);
}

hg_status_t hg_raked_product(const hg_layout_t *l, const hg_layout_t *b, hg_layout_t *out) {
  return rank_product("raked_product", true, l, b, out);
}

/* ---------------------------------------------------------------- tile_to_shape */

/* CuTe keeps tile_to_shape with the layout (layout.hpp): a blocked product of the atom with
 * the layout of its repetitions, coalesced within each mode so that mode i of the result
 * is mode i of the target shape. The atom's swizzle and offset carry over unchanged. */
hg_status_t hg_tile_to_shape_ordered(const hg_composed_t *atom, const hg_tuple_t *shape,
                                     const hg_tuple_t *order, hg_composed_t *out) {
  const int r = hg_layout_rank(&atom->layout);
  if (hg_tuple_rank(shape) != r)
    return hg_error(HG_ERR_INVALID, "tile_to_shape: the target has %d modes but the atom %d",
                    hg_tuple_rank(shape), r);
  int64_t rest[8];
  if (r > 8) return hg_error(HG_ERR_CAPACITY, "tile_to_shape: %d modes is over 8", r);
  for (int i = 0; i < r; i++) {
    hg_layout_t am;
    hg_tuple_t tm;
    int64_t a, target;
    HG_TRY(hg_layout_mode(&atom->layout, i, &am));
    HG_TRY(hg_size(&am, &a));
    if (r == 1 && hg_is_int(shape))
      tm = *shape;
    else
      HG_TRY(hg_tuple_get(shape, i, &tm));
    HG_TRY(hg_tuple_product(&tm, &target));
    if (target <= 0 || target % a != 0)
      return hg_error(HG_ERR_INVALID,
                      "tile_to_shape: mode %d of the tile (%" PRId64
                      ") is not a multiple of the atom's %" PRId64,
                      i, target, a);
    rest[i] = target / a;
  }
  hg_tuple_t rest_shape;
  hg_layout_t rest_layout, prod, co;
  HG_TRY(hg_tuple_ints(&rest_shape, r, rest));
  if (order)
    HG_TRY(hg_make_ordered_layout(&rest_shape, order, &rest_layout));
  else
    HG_TRY(hg_make_layout_col_major(&rest_shape, &rest_layout));
  HG_TRY(hg_blocked_product(&atom->layout, &rest_layout, &prod));
  HG_TRY(hg_coalesce_profile(&prod, &rest_shape, &co));
  out->sw = atom->sw;
  out->offset = atom->offset;
  out->layout = co;
  return hg_ok();
}

hg_status_t hg_tile_to_shape(const hg_composed_t *atom, const hg_tuple_t *shape,
                             hg_composed_t *out) {
  return hg_tile_to_shape_ordered(atom, shape, NULL, out);
}

/* ---------------------------------------------------------------- local_partition */

hg_status_t hg_local_partition(const hg_layout_t *l, const hg_layout_t *thr, int64_t idx,
                               hg_layout_t *out, int64_t *offset) {
  HG_TRY(hgl_check_layout(l, "local_partition"));
  HG_TRY(hgl_check_layout(thr, "local_partition: thread layout"));
  char x[256], y[256];
  int64_t nthr;
  HG_TRY(hgl_size(thr, &nthr));
  if (idx < 0 || idx >= nthr)
    return hg_error(HG_ERR_INVALID,
                    "local_partition: thread index %lld is outside the thread layout %s "
                    "(0 <= index < %lld)",
                    (long long)idx, hgl_lstr(thr, x, sizeof x), (long long)nthr);
  /* The tiler is the size of each thread mode (CuTe's product_each(shape(thr))). */
  hg_tiler_t t;
  memset(&t, 0, sizeof t);
  int r = hgl_rank(thr);
  hg_layout_t tm;
  if (hg_is_int(&thr->shape)) {
    t.mode[0] = hg_layout_1d(thr->shape.v[0], 1);
  } else {
    if (r > HG_TILER_MAX)
      return hg_error(HG_ERR_CAPACITY,
                      "local_partition: thread layout %s has %d modes, more than "
                      "HG_TILER_MAX = %d",
                      hgl_lstr(thr, x, sizeof x), r, HG_TILER_MAX);
    t.rank = r;
    for (int i = 0; i < r; i++) {
      int64_t n;
      hgl_mode(thr, i, &tm);
      HG_TRY(hgl_size(&tm, &n));
      t.mode[i] = hg_layout_1d(n, 1);
    }
  }
  /* Thread index -> coordinate in thr: per leaf (idx // stride) % shape, CuTe's
   * get_hier_coord, which inverts a compact layout; then each top-level mode's
   * coordinate becomes 1-D within that mode (get_flat_coord). */
  hg_tuple_t coord;
  hgl_empty(&coord);
  for (int i = 0; i < r; i++) {
    hgl_mode(thr, i, &tm);
    int64_t s[HG_TUPLE_MAX], d[HG_TUPLE_MAX], c1 = 0, run = 1;
    int n = hgl_flat(&tm, s, d);
    for (int k = 0; k < n; k++) {
      int64_t q, c, p;
      if (d[k] == 0 && s[k] != 1)
        return hg_error(HG_ERR_INVALID,
                        "local_partition: thread layout %s has a mode %lld:0; a stride-0 mode "
                        "cannot map a thread index back to a coordinate",
                        hgl_lstr(thr, x, sizeof x), (long long)s[k]);
      if (d[k] == 0) {
        c = 0;
      } else {
        HG_TRY(hgl_floordiv(idx, d[k], &q));
        HG_TRY(hgl_mod(q, s[k], &c));
      }
      HG_TRY(hgl_mul(c, run, &p));
      HG_TRY(hgl_add(c1, p, &c1));
      HG_TRY(hgl_mul(run, s[k], &run));
    }
    HG_TRY(hgl_push_int(&coord, c1));
  }
  if (hg_is_int(&thr->shape)) coord = hg_int(coord.v[1]);
  hg_layout_t z, m1;
  HG_TRY(hgl_tiler_op(HGL_OP_ZIPPED_DIVIDE, "local_partition", l, &t, &z));
  /* Slice (coord, (_,...,_)): fix the position inside the tile, keep every tile. */
  hgl_mode(&z, 1, &m1);
  int r1 = hgl_rank(&m1);
  hg_tuple_t crd, rest;
  hgl_empty(&crd);
  HG_TRY(hgl_push(&crd, &coord));
  if (r1 == 1) { /* repeat<1>(_) is a bare `_`, keeping a rank-1 rest mode whole */
    rest = hg_int(HG_UNDERSCORE);
  } else {
    hgl_empty(&rest);
    for (int i = 0; i < r1; i++) HG_TRY(hgl_push_int(&rest, HG_UNDERSCORE));
  }
  HG_TRY(hgl_push(&crd, &rest));
  hg_status_t s = hg_slice(&z, &crd, out, offset);
  if (!hg_is_ok(&s))
    return hg_status_wrap(s,
                          "local_partition of %s by thread %lld of %s: ", hgl_lstr(l, x, sizeof x),
                          (long long)idx, hgl_lstr(thr, y, sizeof y));
  return s;
}

/* ---------------------------------------------------------------- common vector */

/* common = coalesce(a o right_inverse(b)); its first mode is the shared contiguous run
 * when that mode has stride 1. */
static hg_status_t common_of(const hg_layout_t *a, const hg_layout_t *b, hg_layout_t *inv_b,
                             hg_layout_t *first, bool *contiguous) {
  hg_layout_t comp, common;
  HG_TRY(hgl_right_inverse(b, inv_b));
  HG_TRY(hgl_composition(a, inv_b, &comp));
  HG_TRY(hgl_coalesce(&comp, &common));
  hgl_mode(&common, 0, first);
  *contiguous = hg_is_int(&first->stride) && first->stride.v[0] == 1;
  return hg_ok();
}

/* max_common_vector (layout false: the run's length into *len) or max_common_layout (its
 * layout into *out: right_inverse(b) o the run, 1:0 when there is none). */
static hg_status_t max_common(const hg_layout_t *a, const hg_layout_t *b, bool layout, int64_t *len,
                              hg_layout_t *out) {
  const char *name = layout ? "max_common_layout" : "max_common_vector";
  HG_TRY(hgl_check_layout(a, name));
  HG_TRY(hgl_check_layout(b, name));
  hg_layout_t inv, first;
  bool contiguous;
  hg_status_t s = common_of(a, b, &inv, &first, &contiguous);
  if (hg_is_ok(&s) && !layout) *len = contiguous ? first.shape.v[0] : 1;
  if (hg_is_ok(&s) && layout && !contiguous) *out = hg_layout_1d(1, 0);
  if (hg_is_ok(&s) && layout && contiguous) s = hgl_composition(&inv, &first, out);
  return hgl_wrap(s, layout ? "max_common_layout of" : "max_common_vector of", a, b);
}

hg_status_t hg_max_common_vector(const hg_layout_t *a, const hg_layout_t *b, int64_t *out) {
  return max_common(a, b, false, out, NULL);
}

hg_status_t hg_max_common_layout(const hg_layout_t *a, const hg_layout_t *b, hg_layout_t *out) {
  return max_common(a, b, true, NULL, out);
}

/* ---------------------------------------------------------------- recast */

/* ceil(a / b) for a >= 0, b >= 1, as CuTe's ceil_div: (a + b - 1) / b. */
static hg_status_t ceil_div_pos(int64_t a, int64_t b, int64_t *out) {
  int64_t t;
  HG_TRY(hgl_add(a, b - 1, &t));
  *out = t / b;
  return hg_ok();
}

hg_status_t hg_upcast(const hg_layout_t *l, int64_t n, hg_layout_t *out) {
  HG_TRY(hgl_check_layout(l, "upcast"));
  char x[256], what[320];
  snprintf(what, sizeof what, "upcast<%lld> of %s", (long long)n, hgl_lstr(l, x, sizeof x));
  if (n < 1) return hg_error(HG_ERR_INVALID, "%s: the factor must be >= 1", what);
  hg_layout_t r = *l;
  for (int i = 0; i < l->shape.n; i++) {
    if (l->shape.arity[i] != HG_LEAF) continue;
    int64_t s = l->shape.v[i], d = l->stride.v[i], k;
    if (d == 0) continue; /* a broadcast mode stays as it is */
    if (d == INT64_MIN) return hg_error(HG_ERR_OVERFLOW, "%s: |stride| overflows int64", what);
    int64_t ad = d < 0 ? -d : d;
    if (ad % n != 0 && n % ad != 0)
      return hg_error(HG_ERR_INVALID,
                      "%s: stride %lld and the factor %lld do not divide one another (CuTe's "
                      "divisibility condition for upcast)",
                      what, (long long)d, (long long)n);
    /* A stride below n packs n/|d| elements of this mode into one (rounding the count of
     * packed elements up); larger strides just shrink by n. */
    HG_TRY(ceil_div_pos(n, ad, &k));
    HG_TRY(ceil_div_pos(s, k, &r.shape.v[i]));
    HG_TRY(ceil_div_pos(ad, n, &r.stride.v[i]));
    if (d < 0) r.stride.v[i] = -r.stride.v[i];
  }
  *out = r;
  return hg_ok();
}

hg_status_t hg_downcast(const hg_layout_t *l, int64_t n, hg_layout_t *out) {
  HG_TRY(hgl_check_layout(l, "downcast"));
  char x[256];
  if (n < 1)
    return hg_error(HG_ERR_INVALID, "downcast<%lld> of %s: the factor must be >= 1", (long long)n,
                    hgl_lstr(l, x, sizeof x));
  bool has1 = false;
  for (int i = 0; i < l->shape.n; i++)
    if (l->shape.arity[i] == HG_LEAF && l->stride.v[i] == 1) has1 = true;
  if (!has1)
    return hg_error(HG_ERR_INVALID,
                    "downcast<%lld> of %s: no mode has stride 1 (downcast requires adjacent "
                    "elements)",
                    (long long)n, hgl_lstr(l, x, sizeof x));
  hg_layout_t r = *l;
  for (int i = 0; i < l->shape.n; i++) {
    if (l->shape.arity[i] != HG_LEAF) continue;
    hg_status_t s;
    if (l->stride.v[i] == 1 || l->stride.v[i] == -1)
      s = hgl_mul(l->shape.v[i], n, &r.shape.v[i]);
    else
      s = hgl_mul(l->stride.v[i], n, &r.stride.v[i]);
    if (!hg_is_ok(&s))
      return hg_status_wrap(s, "downcast<%lld> of %s: ", (long long)n, hgl_lstr(l, x, sizeof x));
  }
  *out = r;
  return hg_ok();
}

static int gcd_int(int a, int b) {
  while (b) {
    int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

hg_status_t hg_recast_layout(const hg_layout_t *l, int old_bits, int new_bits, hg_layout_t *out) {
  HG_TRY(hgl_check_layout(l, "recast_layout"));
  if (old_bits < 1 || new_bits < 1)
    return hg_error(HG_ERR_INVALID, "recast_layout from %d to %d bits: element widths must be >= 1",
                    old_bits, new_bits);
  int g = gcd_int(old_bits, new_bits), num = new_bits / g, den = old_bits / g;
  if (num == 1 && den == 1) {
    *out = *l;
    return hg_ok();
  }
  if (num == 1) return hg_downcast(l, den, out);
  if (den == 1) return hg_upcast(l, num, out);
  /* A ratio like 2/3: up to the common multiple, then down (CuTe's recast_layout). */
  hg_layout_t up;
  HG_TRY(hg_upcast(l, num, &up));
  return hg_downcast(&up, den, out);
}
