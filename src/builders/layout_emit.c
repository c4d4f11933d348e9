/* Layouts evaluated by generated code (builders.h): the builder calls that compute, at run
 * time, what hg_layout/hg_composed_eval compute on the host, so that every generator takes
 * its address arithmetic from the layouts its plans computed instead of restating it. Both
 * are dynamic layouts (dlayout.h) whose only run-time part is the index: the static algebra
 * folds, the index is split by constants. */
#include "hopgen/builders.h"
#include "hopgen/dlayout.h"

hg_status_t hg_layout_emit(hg_builder_t *b, const hg_layout_t *l, hg_val_t idx, hg_val_t *out) {
  const hg_dlayout_t d = hg_dlayout_static(l);
  hg_dint_t v;
  HG_TRY(hg_dl_eval(b, &d, hg_dint_val_nonneg(idx), HG_DL_IN_DOMAIN, &v));
  return hg_dint_emit(b, v, HG_T_I32, out);
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
  if (r < 1 || r >= HG_TUPLE_MAX)
    return hg_error(HG_ERR_INVALID, "hg_composed_emit: a layout of rank %d", r);
  hg_dint_t idx[HG_TUPLE_MAX], v;
  for (int m = 0; m < r; m++) idx[m] = hg_dint_val_nonneg(crd[m]);
  hg_dtuple_t coord;
  const hg_dlayout_t d = hg_dlayout_static(&c->layout);
  if (d.shape.t.arity[0] == HG_LEAF) { /* an integer layout: its one mode is itself */
    HG_TRY(hg_dl_eval(b, &d, idx[0], HG_DL_IN_DOMAIN, &v));
  } else {
    HG_TRY(hg_dtuple_make(r, idx, &coord));
    HG_TRY(hg_dl_crd2idx(b, &d, &coord, HG_DL_IN_DOMAIN, &v));
  }
  HG_TRY(hg_dint_add(b, v, hg_dint(c->offset), &v));
  hg_val_t off;
  HG_TRY(hg_dint_emit(b, v, HG_T_I32, &off));
  *out = hg_swizzle_emit_bytes(b, c->sw, 1, off);
  return hg_ok();
}
