/* Small helpers of the Hopper layer built on the layout algebra. */
#include <inttypes.h>

#include "sm90_internal.h"

hg_status_t hg_sm90_layout2(int n0, const int64_t *sh0, const int64_t *st0, int n1,
                            const int64_t *sh1, const int64_t *st1, hg_layout_t *out) {
  hg_tuple_t shape[2], stride[2], sh, st;
  HG_TRY(hg_tuple_ints(&shape[0], n0, sh0));
  HG_TRY(hg_tuple_ints(&shape[1], n1, sh1));
  HG_TRY(hg_tuple_ints(&stride[0], n0, st0));
  HG_TRY(hg_tuple_ints(&stride[1], n1, st1));
  HG_TRY(hg_tuple_make(&sh, 2, shape));
  HG_TRY(hg_tuple_make(&st, 2, stride));
  return hg_make_layout(&sh, &st, out);
}

int hg_sm90_log2(int64_t v) {
  if (v <= 0 || (v & (v - 1))) return -1;
  int l = 0;
  while ((INT64_C(1) << l) < v) l++;
  return l;
}

hg_swizzle_t hg_sm90_swizzle_for(hg_swizzle_mode_t m, int esize) {
  hg_swizzle_t sw;
  sw.b = m == HG_SWIZZLE_32B ? 1 : m == HG_SWIZZLE_64B ? 2 : m == HG_SWIZZLE_128B ? 3 : 0;
  sw.m = 4 - hg_sm90_log2(esize);
  sw.s = 3;
  return sw;
}

hg_status_t hg_sm90_swizzle_of(hg_swizzle_t sw, int esize, hg_swizzle_mode_t *out) {
  if (sw.b == 0) {
    *out = HG_SWIZZLE_NONE;
    return hg_ok();
  }
  const int m = 4 - hg_sm90_log2(esize);
  if (sw.b < 0 || sw.b > 3 || sw.m != m || sw.s != 3)
    return hg_error(HG_ERR_INVALID,
                    "Sw<%d,%d,%d> is not a TMA/GMMA swizzle for %d-byte elements: the hardware "
                    "XORs 16-byte chunk bits with address bits 7.., i.e. Sw<B,%d,3> in elements "
                    "(B = 1, 2, 3 for 32B, 64B, 128B)",
                    sw.b, sw.m, sw.s, esize, m);
  *out = (hg_swizzle_mode_t)sw.b; /* B = 1, 2, 3 is CUtensorMapSwizzle 32B, 64B, 128B */
  return hg_ok();
}

hg_status_t hg_sm90_mode_table(const hg_layout_t *l, int m, int64_t *tab, int64_t cap,
                               int64_t *size) {
  hg_layout_t mode;
  HG_TRY(hg_layout_mode(l, m, &mode));
  int64_t n;
  HG_TRY(hg_size(&mode, &n));
  if (n > cap)
    return hg_error(HG_ERR_CAPACITY,
                    "mode %d of the layout has %" PRId64 " elements, over %" PRId64, m, n, cap);
  for (int64_t i = 0; i < n; i++) HG_TRY(hg_layout_eval(&mode, i, &tab[i]));
  *size = n;
  return hg_ok();
}
