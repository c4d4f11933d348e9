/* Layouts: construction, modes, size/cosize, coordinate <-> index, slicing. */
#include <string.h>

#include "layout_internal.h"

/* ---------------------------------------------------------------- internal helpers */

hg_status_t hgl_check_layout(const hg_layout_t *l, const char *what) {
  if (!l) return hg_error(HG_ERR_INVALID, "%s: NULL layout", what);
  if (!hgl_tuple_valid(&l->shape) || !hgl_tuple_valid(&l->stride))
    return hg_error(HG_ERR_INVALID,
                    "%s: malformed layout (each tuple needs 1..%d nodes with consistent "
                    "preorder arities)",
                    what, HG_TUPLE_MAX);
  if (!hg_tuple_congruent(&l->shape, &l->stride)) {
    char a[256], b[256];
    return hg_error(HG_ERR_INVALID, "%s: shape %s and stride %s are not congruent (same nesting)",
                    what, hgl_tstr(&l->shape, a, sizeof a), hgl_tstr(&l->stride, b, sizeof b));
  }
  for (int i = 0; i < l->shape.n; i++) {
    if (l->shape.arity[i] == 0)
      return hg_error(HG_ERR_INVALID, "%s: a layout cannot hold an empty tuple ()", what);
    if (l->shape.arity[i] != HG_LEAF) continue;
    if (l->shape.v[i] == HG_UNDERSCORE || l->stride.v[i] == HG_UNDERSCORE)
      return hg_error(HG_ERR_INVALID, "%s: a layout cannot hold '_'", what);
    if (l->shape.v[i] < 0) {
      char a[256];
      return hg_error(HG_ERR_INVALID, "%s: layout %s has the negative shape %lld (shapes are >= 0)",
                      what, hgl_lstr(l, a, sizeof a), (long long)l->shape.v[i]);
    }
  }
  return hg_ok();
}

void hgl_layout_empty(hg_layout_t *l) {
  hgl_empty(&l->shape);
  hgl_empty(&l->stride);
}

hg_status_t hgl_layout_push(hg_layout_t *l, const hg_layout_t *mode) {
  HG_TRY(hgl_push(&l->shape, &mode->shape));
  return hgl_push(&l->stride, &mode->stride);
}

int hgl_rank(const hg_layout_t *l) {
  return l->shape.arity[0] == HG_LEAF ? 1 : l->shape.arity[0];
}

void hgl_mode(const hg_layout_t *l, int i, hg_layout_t *out) {
  if (l->shape.arity[0] == HG_LEAF) {
    *out = *l;
    return;
  }
  int c = hgl_child(&l->shape, 0, i);
  hgl_subtree(&l->shape, c, &out->shape);
  hgl_subtree(&l->stride, c, &out->stride);
}

int hgl_flat(const hg_layout_t *l, int64_t *shape, int64_t *stride) {
  int n = 0;
  for (int i = 0; i < l->shape.n; i++)
    if (l->shape.arity[i] == HG_LEAF) {
      shape[n] = l->shape.v[i];
      stride[n] = l->stride.v[i];
      n++;
    }
  return n;
}

hg_status_t hgl_from_flat(int n, const int64_t *shape, const int64_t *stride, hg_layout_t *out) {
  if (n == 1) {
    *out = hg_layout_1d(shape[0], stride[0]);
    return hg_ok();
  }
  hg_layout_t r;
  hgl_layout_empty(&r);
  for (int i = 0; i < n; i++) {
    HG_TRY(hgl_push_int(&r.shape, shape[i]));
    HG_TRY(hgl_push_int(&r.stride, stride[i]));
  }
  *out = r;
  return hg_ok();
}

hg_status_t hgl_size(const hg_layout_t *l, int64_t *out) {
  int64_t p = 1;
  for (int i = 0; i < l->shape.n; i++)
    if (l->shape.arity[i] == HG_LEAF) {
      hg_status_t s = hgl_mul(p, l->shape.v[i], &p);
      if (!hg_is_ok(&s)) {
        char a[256];
        return hg_status_wrap(s, "size of %s: ", hgl_lstr(l, a, sizeof a));
      }
    }
  *out = p;
  return hg_ok();
}

/* Subtree i of tuple t as text (into buf, 256 bytes), for a sentence. */
static const char *subtree_str(const hg_tuple_t *t, int i, char *buf) {
  hg_tuple_t sub;
  hgl_subtree(t, i, &sub);
  return hgl_tstr(&sub, buf, 256);
}

static hg_status_t crd2idx_int(int64_t crd, const hg_tuple_t *shape, const hg_tuple_t *stride,
                               int si, int64_t *out) {
  if (shape->arity[si] == HG_LEAF) return hgl_mul(crd, stride->v[si], out);
  int k = shape->arity[si];
  int64_t acc = 0;
  int c = si + 1;
  for (int j = 0; j < k; j++) {
    int64_t part;
    if (j + 1 < k) {
      /* Every mode but the last takes crd modulo its size; the last takes the rest, so a
       * 1-D index past the end extends the last mode (pycute's crd2idx). */
      int e = hgl_end(shape, c);
      int64_t p = 1, m;
      for (int q = c; q < e; q++)
        if (shape->arity[q] == HG_LEAF) HG_TRY(hgl_mul(p, shape->v[q], &p));
      HG_TRY(hgl_mod(crd, p, &m));
      HG_TRY(crd2idx_int(m, shape, stride, c, &part));
      HG_TRY(hgl_floordiv(crd, p, &crd));
      c = e;
    } else {
      HG_TRY(crd2idx_int(crd, shape, stride, c, &part));
    }
    HG_TRY(hgl_add(acc, part, &acc));
  }
  *out = acc;
  return hg_ok();
}

hg_status_t hgl_crd2idx(const hg_tuple_t *crd, int ci, const hg_tuple_t *shape,
                        const hg_tuple_t *stride, int si, int64_t *out) {
  if (crd->arity[ci] == HG_LEAF) {
    int64_t v = crd->v[ci] == HG_UNDERSCORE ? 0 : crd->v[ci]; /* `_` contributes nothing */
    return crd2idx_int(v, shape, stride, si, out);
  }
  char a[256], b[256];
  if (shape->arity[si] == HG_LEAF)
    return hg_error(HG_ERR_INVALID,
                    "coordinate %s is a tuple where the shape has the integer %s (a coordinate "
                    "must be congruent to the shape, or flatter)",
                    subtree_str(crd, ci, a), subtree_str(shape, si, b));
  if (crd->arity[ci] != shape->arity[si])
    return hg_error(
        HG_ERR_INVALID, "coordinate %s has rank %d but the shape %s has rank %d (ranks must match)",
        subtree_str(crd, ci, a), crd->arity[ci], subtree_str(shape, si, b), shape->arity[si]);
  int64_t acc = 0;
  int c = ci + 1, s = si + 1;
  for (int j = 0; j < crd->arity[ci]; j++) {
    int64_t part;
    HG_TRY(hgl_crd2idx(crd, c, shape, stride, s, &part));
    HG_TRY(hgl_add(acc, part, &acc));
    c = hgl_end(crd, c);
    s = hgl_end(shape, s);
  }
  *out = acc;
  return hg_ok();
}

hg_status_t hgl_cosize(const hg_layout_t *l, int64_t *out) {
  int64_t n, v;
  HG_TRY(hgl_size(l, &n));
  HG_TRY(crd2idx_int(n - 1, &l->shape, &l->stride, 0, &v));
  return hgl_add(v, 1, out);
}

/* Exclusive prefix products over the leaves (pycute's default strides). A product that
 * overflows matters only if a later leaf needs it, as Python has no overflow. */
static hg_status_t prefix_strides(const hg_tuple_t *shape, hg_tuple_t *stride) {
  *stride = *shape;
  int64_t run = 1;
  bool over = false;
  for (int i = 0; i < shape->n; i++) {
    if (shape->arity[i] != HG_LEAF) continue;
    if (over) {
      char a[256];
      return hg_error(HG_ERR_OVERFLOW, "compact strides of shape %s overflow int64",
                      hgl_tstr(shape, a, sizeof a));
    }
    stride->v[i] = run;
    if (shape->v[i] == 0)
      run = 0;
    else if (__builtin_mul_overflow(run, shape->v[i], &run))
      over = true;
  }
  return hg_ok();
}

static hg_status_t check_shape(const hg_tuple_t *shape, const char *what) {
  if (!hgl_tuple_valid(shape)) return hg_error(HG_ERR_INVALID, "%s: malformed shape tuple", what);
  for (int i = 0; i < shape->n; i++)
    if (shape->arity[i] == 0)
      return hg_error(HG_ERR_INVALID, "%s: a shape cannot hold an empty tuple ()", what);
  for (int i = 0; i < shape->n; i++)
    if (shape->arity[i] == HG_LEAF && (shape->v[i] < 0 || shape->v[i] == HG_UNDERSCORE)) {
      char a[256];
      return hg_error(HG_ERR_INVALID, "%s: shape %s holds %s (shapes are integers >= 0)", what,
                      hgl_tstr(shape, a, sizeof a), shape->v[i] < 0 ? "a negative value" : "'_'");
    }
  return hg_ok();
}

/* ---------------------------------------------------------------- construction */

hg_status_t hg_make_layout(const hg_tuple_t *shape, const hg_tuple_t *stride, hg_layout_t *out) {
  hg_layout_t l;
  if (!shape || !stride) return hg_error(HG_ERR_INVALID, "make_layout: NULL shape or stride");
  l.shape = *shape;
  l.stride = *stride;
  HG_TRY(hgl_check_layout(&l, "make_layout"));
  *out = l;
  return hg_ok();
}

hg_layout_t hg_layout_1d(int64_t shape, int64_t stride) {
  hg_layout_t l;
  l.shape = hg_int(shape);
  l.stride = hg_int(stride);
  return l;
}

hg_status_t hg_make_layout_col_major(const hg_tuple_t *shape, hg_layout_t *out) {
  HG_TRY(check_shape(shape, "make_layout (column-major)"));
  hg_layout_t l;
  l.shape = *shape;
  HG_TRY(prefix_strides(shape, &l.stride));
  *out = l;
  return hg_ok();
}

/* LayoutRight: the last mode is fastest at every level of the hierarchy. As in
 * prefix_strides, an overflowing product is an error only if a stride needs it. */
static void row_major_at(const hg_tuple_t *shape, int i, int64_t *run, bool *over, bool *bad,
                         hg_tuple_t *stride) {
  if (shape->arity[i] == HG_LEAF) {
    if (*over) *bad = true;
    stride->v[i] = *run;
    if (shape->v[i] == 0) {
      *run = 0;
      *over = false;
    } else if (__builtin_mul_overflow(*run, shape->v[i], run)) {
      *over = true;
    }
    return;
  }
  int kids[128];
  int k = shape->arity[i], c = i + 1;
  for (int j = 0; j < k; j++) {
    kids[j] = c;
    c = hgl_end(shape, c);
  }
  for (int j = k - 1; j >= 0; j--) row_major_at(shape, kids[j], run, over, bad, stride);
}

hg_status_t hg_make_layout_row_major(const hg_tuple_t *shape, hg_layout_t *out) {
  HG_TRY(check_shape(shape, "make_layout (row-major)"));
  hg_layout_t l;
  l.shape = *shape;
  l.stride = *shape;
  int64_t run = 1;
  bool over = false, bad = false;
  row_major_at(shape, 0, &run, &over, &bad, &l.stride);
  if (bad) {
    char a[256];
    return hg_error(HG_ERR_OVERFLOW, "row-major strides of shape %s overflow int64",
                    hgl_tstr(shape, a, sizeof a));
  }
  *out = l;
  return hg_ok();
}

/* Pair each leaf of order with the sub-shape it covers (order is congruent to the shape
 * or a profile of it). */
static hg_status_t order_walk(const hg_tuple_t *order, int oi, const hg_tuple_t *shape, int si,
                              int *m, int *oleaf, int *snode) {
  if (order->arity[oi] == HG_LEAF) {
    if (order->v[oi] == HG_UNDERSCORE)
      return hg_error(HG_ERR_INVALID, "make_ordered_layout: order cannot hold '_'");
    oleaf[*m] = oi;
    snode[*m] = si;
    (*m)++;
    return hg_ok();
  }
  if (shape->arity[si] != order->arity[oi]) {
    char a[256], b[256];
    return hg_error(HG_ERR_INVALID,
                    "make_ordered_layout: order %s does not match the modes of shape %s (it "
                    "must be congruent to the shape or a profile of it)",
                    hgl_tstr(order, a, sizeof a), hgl_tstr(shape, b, sizeof b));
  }
  int oc = oi + 1, sc = si + 1;
  for (int j = 0; j < order->arity[oi]; j++) {
    HG_TRY(order_walk(order, oc, shape, sc, m, oleaf, snode));
    oc = hgl_end(order, oc);
    sc = hgl_end(shape, sc);
  }
  return hg_ok();
}

/* Like CuTe's make_ordered_layout: the mode with the smallest order value gets stride 1,
 * the next one the size of the first, and so on (ties go to the earlier mode); inside a
 * mode covered by one order value, the sub-shape is column-major. */
hg_status_t hg_make_ordered_layout(const hg_tuple_t *shape, const hg_tuple_t *order,
                                   hg_layout_t *out) {
  HG_TRY(check_shape(shape, "make_ordered_layout"));
  if (!hgl_tuple_valid(order))
    return hg_error(HG_ERR_INVALID, "make_ordered_layout: malformed order tuple");
  int oleaf[HG_TUPLE_MAX], snode[HG_TUPLE_MAX], m = 0;
  int64_t msize[HG_TUPLE_MAX];
  HG_TRY(order_walk(order, 0, shape, 0, &m, oleaf, snode));
  for (int a = 0; a < m; a++) {
    int e = hgl_end(shape, snode[a]);
    int64_t p = 1;
    for (int q = snode[a]; q < e; q++)
      if (shape->arity[q] == HG_LEAF) HG_TRY(hgl_mul(p, shape->v[q], &p));
    msize[a] = p;
  }
  hg_layout_t l;
  l.shape = *shape;
  l.stride = *shape;
  for (int a = 0; a < m; a++) {
    int64_t start = 1;
    for (int b = 0; b < m; b++) {
      int64_t oa = order->v[oleaf[a]], ob = order->v[oleaf[b]];
      if (ob < oa || (ob == oa && b < a)) HG_TRY(hgl_mul(start, msize[b], &start));
    }
    int e = hgl_end(shape, snode[a]);
    for (int q = snode[a]; q < e; q++)
      if (shape->arity[q] == HG_LEAF) {
        l.stride.v[q] = start;
        int64_t next;
        if (q + 1 < e && !__builtin_mul_overflow(start, shape->v[q], &next))
          start = next;
        else if (q + 1 < e)
          return hg_error(HG_ERR_OVERFLOW, "make_ordered_layout: strides overflow int64");
      }
  }
  *out = l;
  return hg_ok();
}

hg_status_t hg_layout_concat(int count, const hg_layout_t *modes, hg_layout_t *out) {
  if (count < 1) return hg_error(HG_ERR_INVALID, "make_layout needs at least one mode");
  hg_layout_t r;
  hgl_layout_empty(&r);
  for (int i = 0; i < count; i++) {
    HG_TRY(hgl_check_layout(&modes[i], "make_layout"));
    HG_TRY(hgl_layout_push(&r, &modes[i]));
  }
  *out = r;
  return hg_ok();
}

hg_status_t hg_layout_append(const hg_layout_t *a, const hg_layout_t *mode, hg_layout_t *out) {
  HG_TRY(hgl_check_layout(a, "append"));
  HG_TRY(hgl_check_layout(mode, "append"));
  hg_layout_t r;
  if (hg_is_int(&a->shape)) {
    hgl_layout_empty(&r);
    HG_TRY(hgl_layout_push(&r, a));
  } else {
    r = *a;
  }
  HG_TRY(hgl_layout_push(&r, mode));
  *out = r;
  return hg_ok();
}

/* ---------------------------------------------------------------- queries */

int hg_layout_rank(const hg_layout_t *l) {
  return hg_tuple_rank(&l->shape);
}

int hg_layout_depth(const hg_layout_t *l) {
  return hg_tuple_depth(&l->shape);
}

hg_status_t hg_layout_mode(const hg_layout_t *l, int i, hg_layout_t *out) {
  HG_TRY(hgl_check_layout(l, "layout mode"));
  int r = hgl_rank(l);
  if (i < 0 || i >= r) {
    char a[256];
    return hg_error(HG_ERR_INVALID, "mode %d of the rank-%d layout %s does not exist", i, r,
                    hgl_lstr(l, a, sizeof a));
  }
  hgl_mode(l, i, out);
  return hg_ok();
}

hg_status_t hg_size(const hg_layout_t *l, int64_t *out) {
  HG_TRY(hgl_check_layout(l, "size"));
  return hgl_size(l, out);
}

hg_status_t hg_cosize(const hg_layout_t *l, int64_t *out) {
  HG_TRY(hgl_check_layout(l, "cosize"));
  return hgl_wrap(hgl_cosize(l, out), "cosize of", l, NULL);
}

hg_status_t hg_crd2idx(const hg_layout_t *l, const hg_tuple_t *crd, int64_t *out) {
  HG_TRY(hgl_check_layout(l, "crd2idx"));
  if (!hgl_tuple_valid(crd)) return hg_error(HG_ERR_INVALID, "crd2idx: malformed coordinate");
  hg_status_t s = hgl_crd2idx(crd, 0, &l->shape, &l->stride, 0, out);
  if (!hg_is_ok(&s)) {
    char a[256], b[256];
    return hg_status_wrap(s, "crd2idx of %s at %s: ", hgl_lstr(l, a, sizeof a),
                          hgl_tstr(crd, b, sizeof b));
  }
  return s;
}

hg_status_t hg_layout_eval(const hg_layout_t *l, int64_t i, int64_t *out) {
  hg_tuple_t c = hg_int(i);
  return hg_crd2idx(l, &c, out);
}

hg_status_t hg_idx2crd(const hg_tuple_t *shape, int64_t idx, hg_tuple_t *out) {
  HG_TRY(check_shape(shape, "idx2crd"));
  if (idx == HG_UNDERSCORE) return hg_error(HG_ERR_INVALID, "idx2crd: the index cannot be '_'");
  hg_tuple_t d;
  HG_TRY(prefix_strides(shape, &d));
  hg_tuple_t r = *shape;
  for (int i = 0; i < shape->n; i++) {
    if (shape->arity[i] != HG_LEAF) continue;
    int64_t q;
    hg_status_t s = hgl_floordiv(idx, d.v[i], &q);
    if (hg_is_ok(&s)) s = hgl_mod(q, shape->v[i], &r.v[i]);
    if (!hg_is_ok(&s)) {
      char a[256];
      return hg_status_wrap(s, "idx2crd of %lld in shape %s: ", (long long)idx,
                            hgl_tstr(shape, a, sizeof a));
    }
  }
  *out = r;
  return hg_ok();
}

/* pycute's slice_: a `_` keeps its subtree as one element, an integer drops it, and a
 * tuple concatenates what its children keep. Appends the kept subtrees to out's root. */
static hg_status_t slice_into(const hg_tuple_t *crd, int ci, const hg_tuple_t *trg, int ti,
                              hg_tuple_t *out) {
  if (crd->arity[ci] == HG_LEAF) {
    if (crd->v[ci] != HG_UNDERSCORE) return hg_ok();
    hg_tuple_t sub;
    hgl_subtree(trg, ti, &sub);
    return hgl_push(out, &sub);
  }
  if (trg->arity[ti] == HG_LEAF || trg->arity[ti] != crd->arity[ci]) {
    char a[256], b[256];
    return hg_error(HG_ERR_INVALID,
                    "slice: coordinate %s does not match the shape %s (a tuple coordinate needs a "
                    "tuple of the same rank)",
                    subtree_str(crd, ci, a), subtree_str(trg, ti, b));
  }
  int c = ci + 1, t = ti + 1;
  for (int j = 0; j < crd->arity[ci]; j++) {
    HG_TRY(slice_into(crd, c, trg, t, out));
    c = hgl_end(crd, c);
    t = hgl_end(trg, t);
  }
  return hg_ok();
}

hg_status_t hg_slice(const hg_layout_t *l, const hg_tuple_t *crd, hg_layout_t *out,
                     int64_t *offset) {
  HG_TRY(hgl_check_layout(l, "slice"));
  if (!hgl_tuple_valid(crd)) return hg_error(HG_ERR_INVALID, "slice: malformed coordinate");
  hg_layout_t r;
  hgl_layout_empty(&r);
  char a[256], b[256];
  hg_status_t s = slice_into(crd, 0, &l->shape, 0, &r.shape);
  if (hg_is_ok(&s)) s = slice_into(crd, 0, &l->stride, 0, &r.stride);
  int64_t off = 0;
  if (hg_is_ok(&s)) s = hgl_crd2idx(crd, 0, &l->shape, &l->stride, 0, &off);
  if (!hg_is_ok(&s))
    return hg_status_wrap(s, "slicing %s at %s: ", hgl_lstr(l, a, sizeof a),
                          hgl_tstr(crd, b, sizeof b));
  /* No `_` at all: nothing is kept; the result is the scalar layout 1:0 plus the offset. */
  if (r.shape.arity[0] == 0) r = hg_layout_1d(1, 0);
  if (out) *out = r;
  if (offset) *offset = off;
  return hg_ok();
}
