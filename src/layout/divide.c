/* Divides: logical, zipped, tiled and flat, plus local_tile (an inner partition).
 *
 * Shared machinery for products too: a "splitter" (logical_divide or logical_product of
 * a layout by a layout) applied by mode, and pycute's hier_unzip, which gathers the
 * first halves of each mode's split into one mode and the second halves (plus modes the
 * tiler does not reach) into another. */
#include <string.h>

#include "layout_internal.h"

hg_status_t hgl_logical_divide(const hg_layout_t *a, const hg_layout_t *b, hg_layout_t *out) {
  int64_t n;
  hg_layout_t c, bc;
  HG_TRY(hgl_size(a, &n));
  HG_TRY(hgl_complement(b, n, &c));
  hgl_layout_empty(&bc);
  HG_TRY(hgl_layout_push(&bc, b));
  HG_TRY(hgl_layout_push(&bc, &c));
  return hgl_composition(a, &bc, out);
}

hg_status_t hgl_logical_product(const hg_layout_t *a, const hg_layout_t *b, hg_layout_t *out) {
  int64_t n, m;
  hg_layout_t c, cb, r;
  HG_TRY(hgl_size(a, &n));
  HG_TRY(hgl_cosize(b, &m));
  HG_TRY(hgl_mul(n, m, &n));
  HG_TRY(hgl_complement(a, n, &c));
  HG_TRY(hgl_composition(&c, b, &cb));
  hgl_layout_empty(&r);
  HG_TRY(hgl_layout_push(&r, a));
  HG_TRY(hgl_layout_push(&r, &cb));
  *out = r;
  return hg_ok();
}

static hg_status_t split(hgl_splitter_t f, const hg_layout_t *a, const hg_layout_t *b,
                         hg_layout_t *out) {
  if (f == HGL_COMPOSE) return hgl_composition(a, b, out);
  return f == HGL_DIVIDE ? hgl_logical_divide(a, b, out) : hgl_logical_product(a, b, out);
}

/* pycute's logical_divide / logical_product / composition of a tuple. */
hg_status_t hgl_by_mode(hgl_splitter_t f, const hg_layout_t *a, const hg_tiler_t *t, int first,
                        int count, hg_layout_t *out) {
  HG_TRY(hgl_check_by_mode_rank(a, count));
  hg_layout_t r, am, sm;
  hgl_layout_empty(&r);
  for (int i = 0, node = first; i < hgl_rank(a); i++) {
    hgl_mode(a, i, &am);
    if (i >= count || t->skip[node])
      sm = am;
    else if (t->sub[node] > 0)
      HG_TRY(hgl_by_mode(f, &am, t, node + 1, t->sub[node], &sm));
    else
      HG_TRY(split(f, &am, &t->mode[node], &sm));
    HG_TRY(hgl_layout_push(&r, &sm));
    if (i < count) node = hgl_tiler_end(t, node);
  }
  *out = r;
  return hg_ok();
}

static hg_status_t apply_logical(hgl_splitter_t f, const hg_layout_t *a, const hg_tiler_t *t,
                                 hg_layout_t *out) {
  if (t->rank == 0) return split(f, a, &t->mode[0], out);
  return hgl_by_mode(f, a, t, 0, t->rank, out);
}

/* pycute's hier_unzip of a by-mode list: each slot splits its mode into (tile, rest) (a
 * nested list recursively, a `_` into (1:0, mode)); the tiles gather into mode 0 and the
 * rests, followed by the modes past the list, into mode 1. */
static hg_status_t unzip_list(hgl_splitter_t f, const hg_layout_t *a, const hg_tiler_t *t,
                              int first, int count, hg_layout_t *out) {
  HG_TRY(hgl_check_by_mode_rank(a, count));
  hg_layout_t tiles, rests, am, sm, half, r;
  hgl_layout_empty(&tiles);
  hgl_layout_empty(&rests);
  for (int i = 0, node = first; i < hgl_rank(a); i++) {
    hgl_mode(a, i, &am);
    if (i >= count) {
      HG_TRY(hgl_layout_push(&rests, &am));
      continue;
    }
    if (t->skip[node]) {
      half = hg_layout_1d(1, 0);
      HG_TRY(hgl_layout_push(&tiles, &half));
      HG_TRY(hgl_layout_push(&rests, &am));
    } else {
      if (t->sub[node] > 0)
        HG_TRY(unzip_list(f, &am, t, node + 1, t->sub[node], &sm));
      else
        HG_TRY(split(f, &am, &t->mode[node], &sm));
      hgl_mode(&sm, 0, &half);
      HG_TRY(hgl_layout_push(&tiles, &half));
      hgl_mode(&sm, 1, &half);
      HG_TRY(hgl_layout_push(&rests, &half));
    }
    node = hgl_tiler_end(t, node);
  }
  hgl_layout_empty(&r);
  HG_TRY(hgl_layout_push(&r, &tiles));
  HG_TRY(hgl_layout_push(&r, &rests));
  *out = r;
  return hg_ok();
}

static hg_status_t zipped(hgl_splitter_t f, const hg_layout_t *a, const hg_tiler_t *t,
                          hg_layout_t *out) {
  if (t->rank == 0) return split(f, a, &t->mode[0], out);
  return unzip_list(f, a, t, 0, t->rank, out);
}

static hg_status_t tiled(const hg_layout_t *z, hg_layout_t *out) {
  hg_layout_t r, m0, m1, x;
  hgl_layout_empty(&r);
  hgl_mode(z, 0, &m0);
  hgl_mode(z, 1, &m1);
  HG_TRY(hgl_layout_push(&r, &m0));
  for (int i = 0; i < hgl_rank(&m1); i++) {
    hgl_mode(&m1, i, &x);
    HG_TRY(hgl_layout_push(&r, &x));
  }
  *out = r;
  return hg_ok();
}

/* CuTe's result(repeat<R0>(_), repeat<R1>(_)): each half is unpacked into its modes, but
 * a rank-1 half stays whole, because repeat<1>(_) is a bare `_`. */
static hg_status_t flat_modes(const hg_layout_t *z, hg_layout_t *out) {
  hg_layout_t r, m, x;
  hgl_layout_empty(&r);
  for (int h = 0; h < 2; h++) {
    hgl_mode(z, h, &m);
    if (hgl_rank(&m) == 1) {
      HG_TRY(hgl_layout_push(&r, &m));
      continue;
    }
    for (int i = 0; i < hgl_rank(&m); i++) {
      hgl_mode(&m, i, &x);
      HG_TRY(hgl_layout_push(&r, &x));
    }
  }
  *out = r;
  return hg_ok();
}

hg_status_t hgl_tiler_op(hgl_tiler_op_t op, const char *name, const hg_layout_t *l,
                         const hg_tiler_t *t, hg_layout_t *out) {
  char x[256], y[512];
  hg_status_t s = hgl_check_layout(l, name);
  if (hg_is_ok(&s)) s = hgl_check_tiler(t, name);
  if (!hg_is_ok(&s)) return s;
  hgl_splitter_t f = op >= HGL_OP_LOGICAL_PRODUCT ? HGL_PRODUCT : HGL_DIVIDE;
  hg_layout_t z;
  switch (op) {
  case HGL_OP_LOGICAL_DIVIDE:
  case HGL_OP_LOGICAL_PRODUCT:
    s = apply_logical(f, l, t, out);
    break;
  case HGL_OP_ZIPPED_DIVIDE:
  case HGL_OP_ZIPPED_PRODUCT:
    s = zipped(f, l, t, out);
    break;
  case HGL_OP_TILED_DIVIDE:
  case HGL_OP_TILED_PRODUCT:
    s = zipped(f, l, t, &z);
    if (hg_is_ok(&s)) s = tiled(&z, out);
    break;
  case HGL_OP_FLAT_DIVIDE:
  case HGL_OP_FLAT_PRODUCT:
    s = zipped(f, l, t, &z);
    if (hg_is_ok(&s)) s = flat_modes(&z, out);
    break;
  }
  if (!hg_is_ok(&s)) {
    hg_tiler_print(t, y, sizeof y);
    return hg_status_wrap(s, "%s of %s by %s: ", name, hgl_lstr(l, x, sizeof x), y);
  }
  return s;
}

HGL_TILER_API(hg_logical_divide, HGL_OP_LOGICAL_DIVIDE)
HGL_TILER_API(hg_zipped_divide, HGL_OP_ZIPPED_DIVIDE)
HGL_TILER_API(hg_tiled_divide, HGL_OP_TILED_DIVIDE)
HGL_TILER_API(hg_flat_divide, HGL_OP_FLAT_DIVIDE)

/* ---------------------------------------------------------------- local_tile */

hg_status_t hg_local_tile(const hg_layout_t *l, const hg_tiler_t *t, const hg_tuple_t *coord,
                          hg_layout_t *out, int64_t *offset) {
  hg_layout_t z;
  HG_TRY(hgl_tiler_op(HGL_OP_ZIPPED_DIVIDE, "local_tile", l, t, &z));
  if (!hgl_tuple_valid(coord)) return hg_error(HG_ERR_INVALID, "local_tile: malformed coordinate");
  /* Slice ((_,...,_), coord) into the zipped layout: keep the whole tile mode, index the
   * rest mode with coord (padded with `_` to its rank, as CuTe's inner_partition does). */
  hg_layout_t m0, m1;
  hgl_mode(&z, 0, &m0);
  hgl_mode(&z, 1, &m1);
  int r0 = hgl_rank(&m0), r1 = hgl_rank(&m1);
  hg_tuple_t crd, part;
  hgl_empty(&crd);
  if (r0 == 1) { /* CuTe's repeat<1>(_) is a bare `_`: it keeps a rank-1 tile mode whole */
    part = hg_int(HG_UNDERSCORE);
  } else {
    hgl_empty(&part);
    for (int i = 0; i < r0; i++) HG_TRY(hgl_push_int(&part, HG_UNDERSCORE));
  }
  HG_TRY(hgl_push(&crd, &part));
  char x[256], y[256];
  if (hg_is_int(coord)) {
    HG_TRY(hgl_push(&crd, coord));
  } else if (hg_is_int(&m1.shape)) {
    if (coord->arity[0] != 1)
      return hg_error(HG_ERR_INVALID,
                      "local_tile: coordinate %s has %d modes but the grid of tiles %s has one",
                      hgl_tstr(coord, x, sizeof x), coord->arity[0], hgl_lstr(&m1, y, sizeof y));
    hgl_subtree(coord, 1, &part);
    HG_TRY(hgl_push(&crd, &part));
  } else {
    if (coord->arity[0] > r1)
      return hg_error(
          HG_ERR_INVALID, "local_tile: coordinate %s has %d modes but the grid of tiles %s only %d",
          hgl_tstr(coord, x, sizeof x), coord->arity[0], hgl_lstr(&m1, y, sizeof y), r1);
    part = *coord;
    for (int i = coord->arity[0]; i < r1; i++) HG_TRY(hgl_push_int(&part, HG_UNDERSCORE));
    HG_TRY(hgl_push(&crd, &part));
  }
  hg_status_t s = hg_slice(&z, &crd, out, offset);
  if (!hg_is_ok(&s)) return hg_status_wrap(s, "local_tile at %s: ", hgl_tstr(coord, x, sizeof x));
  return s;
}
