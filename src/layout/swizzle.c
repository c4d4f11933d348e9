/* Swizzle<B,M,S> and composed (swizzled) layouts. */
#include <string.h>

#include "layout_internal.h"

/* Masks stay inside bits [0, 62] so that every shift and XOR on an int64 is defined. */
#define HGL_SWIZZLE_TOP_BIT 62

hg_status_t hg_swizzle_make(int b, int m, int s, hg_swizzle_t *out) {
  if (b < 0 || m < 0)
    return hg_error(HG_ERR_INVALID, "Swizzle<%d,%d,%d>: bits and base must be >= 0", b, m, s);
  int as = s < 0 ? -s : s;
  if (as < b)
    return hg_error(HG_ERR_INVALID,
                    "Swizzle<%d,%d,%d>: |shift| = %d is smaller than bits = %d (the XORed bit "
                    "ranges would overlap)",
                    b, m, s, as, b);
  if ((int64_t)b + m + as > HGL_SWIZZLE_TOP_BIT)
    return hg_error(HG_ERR_INVALID,
                    "Swizzle<%d,%d,%d>: bits + base + |shift| = %lld exceeds %d (the masks must "
                    "fit an int64 offset)",
                    b, m, s, (long long)b + m + as, HGL_SWIZZLE_TOP_BIT);
  out->b = b;
  out->m = m;
  out->s = s;
  return hg_ok();
}

int64_t hg_swizzle_apply(hg_swizzle_t sw, int64_t offset) {
  hg_swizzle_t ok;
  hg_status_t st = hg_swizzle_make(sw.b, sw.m, sw.s, &ok);
  if (!hg_is_ok(&st) || sw.b == 0) return offset; /* an invalid swizzle is never applied */
  /* The B bits at [M + max(0,S), ...) move by S and XOR into the bits at [M - min(0,S), ...). */
  uint64_t bits = (((uint64_t)1 << sw.b) - 1);
  int ysh = sw.m + (sw.s > 0 ? sw.s : 0);
  uint64_t ymask = bits << ysh;
  uint64_t y = (uint64_t)offset & ymask;
  uint64_t moved = sw.s >= 0 ? y >> sw.s : y << -sw.s;
  return (int64_t)((uint64_t)offset ^ moved);
}

hg_composed_t hg_composed_from_layout(const hg_layout_t *l) {
  hg_composed_t c;
  memset(&c, 0, sizeof c);
  c.layout = *l;
  return c;
}

static hg_status_t check_composed(const hg_composed_t *c, const char *what) {
  if (!c) return hg_error(HG_ERR_INVALID, "%s: NULL composed layout", what);
  hg_swizzle_t sw;
  HG_TRY(hg_swizzle_make(c->sw.b, c->sw.m, c->sw.s, &sw));
  return hgl_check_layout(&c->layout, what);
}

hg_status_t hg_composed_eval(const hg_composed_t *c, const hg_tuple_t *crd, int64_t *out) {
  HG_TRY(check_composed(c, "composed layout"));
  int64_t v;
  HG_TRY(hg_crd2idx(&c->layout, crd, &v));
  hg_status_t s = hgl_add(c->offset, v, &v);
  if (!hg_is_ok(&s)) return hg_status_wrap(s, "composed layout offset: ");
  *out = hg_swizzle_apply(c->sw, v);
  return hg_ok();
}

hg_status_t hg_composed_composition(const hg_composed_t *c, const hg_layout_t *b,
                                    hg_composed_t *out) {
  HG_TRY(check_composed(c, "composition: swizzled layout"));
  hg_composed_t r = *c;
  HG_TRY(hg_composition(&c->layout, b, &r.layout));
  *out = r;
  return hg_ok();
}
