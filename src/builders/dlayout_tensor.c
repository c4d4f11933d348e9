/* Dynamic tensors: a byte address and a dynamic layout of elements (dlayout.h), so that the
 * addresses generated code reads and writes come from the tensor's layout - slices for a
 * batch, crd2idx for an element - with the scaling by the element size folded into the
 * layout arithmetic (one multiply-add onto the base). */
#include "builders/dlayout_internal.h"

static hg_status_t check(const hg_dtensor_t *t, const char *what) {
  if (!t) return hg_error(HG_ERR_INVALID, "%s: NULL tensor", what);
  if (t->esize < 1)
    return hg_error(HG_ERR_INVALID, "%s: elements of %d bytes (at least 1)", what, t->esize);
  return hgd_check(&t->layout, what);
}

/* base + esize * off */
static hg_status_t advance(hg_builder_t *b, const hg_dtensor_t *t, hg_dint_t off, hg_dint_t *out) {
  HG_TRY(hg_dint_mul(b, off, hg_dint(t->esize), &off));
  return hg_dint_add(b, t->base, off, out);
}

hg_status_t hg_dt_slice(hg_builder_t *b, const hg_dtensor_t *t, const hg_dtuple_t *crd,
                        hg_dtensor_t *out) {
  HG_TRY(check(t, "tensor slice"));
  hg_dtensor_t r = *t;
  hg_dint_t off;
  HG_TRY(hg_dl_slice(b, &t->layout, crd, &r.layout, &off));
  HG_TRY(advance(b, t, off, &r.base));
  *out = r;
  return hgd_builder_ok(b);
}

static hg_status_t matrix(hg_dint_t base, int esize, hg_dint_t rows, hg_dint_t cols,
                          hg_dint_t batches, hg_dint_t row_stride, hg_dint_t col_stride,
                          hg_dint_t batch_stride, const char *api, hg_dtensor_t *out) {
  hg_dtensor_t t = {.base = base, .esize = esize};
  hg_dtuple_t shape, stride;
  HG_TRY(hg_dtuple_make(3, (hg_dint_t[3]){rows, cols, batches}, &shape));
  HG_TRY(hg_dtuple_make(3, (hg_dint_t[3]){row_stride, col_stride, batch_stride}, &stride));
  HG_TRY(hg_dlayout_make(&shape, &stride, &t.layout));
  HG_TRY(check(&t, api));
  *out = t;
  return hg_ok();
}

hg_status_t hg_dt_matrix(hg_dint_t base, int esize, hg_dint_t rows, hg_dint_t cols,
                         hg_dint_t batches, hg_dint_t ld, hg_dint_t batch_stride,
                         hg_dtensor_t *out) {
  return matrix(base, esize, rows, cols, batches, ld, hg_dint(1), batch_stride, "hg_dt_matrix",
                out);
}

hg_status_t hg_dt_matrix_cm(hg_dint_t base, int esize, hg_dint_t rows, hg_dint_t cols,
                            hg_dint_t batches, hg_dint_t ld, hg_dint_t batch_stride,
                            hg_dtensor_t *out) {
  return matrix(base, esize, rows, cols, batches, hg_dint(1), ld, batch_stride, "hg_dt_matrix_cm",
                out);
}

hg_status_t hg_dt_batch(hg_builder_t *b, const hg_dtensor_t *t, hg_dint_t batch,
                        hg_dtensor_t *out) {
  HG_TRY(check(t, "tensor batch"));
  const int r = hgd_rank(&t->layout);
  if (r < 2)
    return hg_error(HG_ERR_INVALID,
                    "tensor batch: a rank-%d tensor has no batch mode besides "
                    "its data",
                    r);
  hg_dint_t c[HG_TUPLE_MAX];
  for (int i = 0; i + 1 < r; i++) c[i] = hg_dint(HG_UNDERSCORE);
  c[r - 1] = batch;
  hg_dtuple_t crd;
  HG_TRY(hg_dtuple_make(r, c, &crd));
  return hg_dt_slice(b, t, &crd, out);
}

hg_status_t hg_dt_addr(hg_builder_t *b, const hg_dtensor_t *t, const hg_dtuple_t *crd,
                       unsigned flags, hg_dint_t *out) {
  HG_TRY(check(t, "tensor address"));
  hg_dint_t off;
  HG_TRY(hg_dl_crd2idx(b, &t->layout, crd, flags, &off));
  HG_TRY(advance(b, t, off, out));
  return hgd_builder_ok(b);
}
