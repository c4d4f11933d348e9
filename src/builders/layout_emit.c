/* Layouts evaluated by generated code (builders.h): the builder calls that compute, at run
 * time, what hg_layout/hg_composed_eval compute on the host, so that every generator takes
 * its address arithmetic from the layouts its plans computed instead of restating it. */
#include "hopgen/builders.h"

hg_status_t hg_layout_emit(hg_builder_t *b, const hg_layout_t *l, hg_val_t idx, hg_val_t *out) {
  int64_t shp[HG_TUPLE_MAX], str[HG_TUPLE_MAX];
  const int n = hg_tuple_leaf_values(&l->shape, shp, HG_TUPLE_MAX);
  if (n > HG_TUPLE_MAX || hg_tuple_leaf_values(&l->stride, str, HG_TUPLE_MAX) != n)
    return hg_error(HG_ERR_INVALID, "layout shape and stride are not congruent");
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
  *out = acc;
  return hg_ok();
}

hg_val_t hg_swizzle_emit_bytes(hg_builder_t *b, hg_swizzle_t sw, int esize, hg_val_t off_bytes) {
  if (sw.b == 0) return off_bytes;
  int lg = 0;
  while ((1 << lg) < esize) lg++;
  const int m = sw.m + lg;
  /* The B bits at [M + max(0, S), ...) move by S into the bits at [M - min(0, S), ...), as
   * hg_swizzle_apply does (S is 3 for every TMA and GMMA swizzle). */
  if (sw.s >= 0) {
    const int32_t mask = ((1 << sw.b) - 1) << (m + sw.s);
    hg_val_t hi = hg_b_bin(b, HG_AND, off_bytes, hg_b_i32(b, mask));
    hg_val_t moved = hg_b_bin(b, HG_SHR_U, hi, hg_b_i32(b, sw.s));
    return hg_b_bin(b, HG_XOR, off_bytes, moved);
  }
  const int32_t mask = ((1 << sw.b) - 1) << m;
  hg_val_t lo = hg_b_bin(b, HG_AND, off_bytes, hg_b_i32(b, mask));
  hg_val_t moved = hg_b_bin(b, HG_SHL, lo, hg_b_i32(b, -sw.s));
  return hg_b_bin(b, HG_XOR, off_bytes, moved);
}

hg_status_t hg_composed_emit(hg_builder_t *b, const hg_composed_t *c, const hg_val_t *crd,
                             hg_val_t *out) {
  const int r = hg_layout_rank(&c->layout);
  if (c->offset < INT32_MIN || c->offset > INT32_MAX)
    return hg_error(HG_ERR_OVERFLOW, "the layout's offset %lld does not fit 32 bits",
                    (long long)c->offset);
  hg_val_t acc = HG_NONE;
  for (int m = 0; m < r; m++) {
    hg_layout_t mode;
    HG_TRY(hg_layout_mode(&c->layout, m, &mode));
    hg_val_t v;
    HG_TRY(hg_layout_emit(b, &mode, crd[m], &v));
    acc = m ? hg_b_bin(b, HG_ADD, acc, v) : v;
  }
  if (hg_val_is_none(acc)) acc = hg_b_i32(b, 0);
  if (c->offset) acc = hg_b_bin(b, HG_ADD, acc, hg_b_i32(b, (int32_t)c->offset));
  *out = hg_swizzle_emit_bytes(b, c->sw, 1, acc);
  return hg_ok();
}
