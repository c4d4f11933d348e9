/* Dynamic layouts: tuples and layouts with hg_dint_t leaves, their construction and text,
 * and the index operations (size, cosize, crd2idx, idx2crd, slice) with the static
 * algebra's semantics (src/layout/layout.c), emitting only what the dynamic leaves need. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "builders/dlayout_internal.h"

/* ---------------------------------------------------------------- trees */

void hgd_subtree(const hg_dtuple_t *t, int i, hg_dtuple_t *out) {
  hgl_subtree(&t->t, i, &out->t);
  memcpy(out->d, t->d + i, (size_t)out->t.n * sizeof t->d[0]);
}

void hgd_empty(hg_dtuple_t *t) {
  hgl_empty(&t->t);
  t->d[0] = hg_dint(0);
}

hg_status_t hgd_push(hg_dtuple_t *t, const hg_dtuple_t *e) {
  int at = t->t.n;
  HG_TRY(hgl_push(&t->t, &e->t));
  memcpy(t->d + at, e->d, (size_t)e->t.n * sizeof t->d[0]);
  return hg_ok();
}

void hgd_layout_empty(hg_dlayout_t *l) {
  hgd_empty(&l->shape);
  hgd_empty(&l->stride);
}

hg_status_t hgd_layout_push(hg_dlayout_t *l, const hg_dlayout_t *mode) {
  HG_TRY(hgd_push(&l->shape, &mode->shape));
  return hgd_push(&l->stride, &mode->stride);
}

int hgd_rank(const hg_dlayout_t *l) {
  return l->shape.t.arity[0] == HG_LEAF ? 1 : l->shape.t.arity[0];
}

void hgd_mode(const hg_dlayout_t *l, int i, hg_dlayout_t *out) {
  if (l->shape.t.arity[0] == HG_LEAF) {
    *out = *l;
    return;
  }
  int c = hgl_child(&l->shape.t, 0, i);
  hgd_subtree(&l->shape, c, &out->shape);
  hgd_subtree(&l->stride, c, &out->stride);
}

int hgd_flat(const hg_dlayout_t *l, hg_dint_t *shape, hg_dint_t *stride) {
  int n = 0;
  for (int i = 0; i < l->shape.t.n; i++)
    if (l->shape.t.arity[i] == HG_LEAF) {
      shape[n] = l->shape.d[i];
      stride[n] = l->stride.d[i];
      n++;
    }
  return n;
}

static void set_leaf(hg_dtuple_t *t, int i, hg_dint_t v) {
  t->d[i] = v;
  t->t.v[i] = v.c;
}

static hg_dtuple_t dint_leaf(hg_dint_t v) {
  hg_dtuple_t t;
  t.t = hg_int(v.c);
  t.d[0] = v;
  return t;
}

hg_status_t hgd_from_flat(int n, const hg_dint_t *shape, const hg_dint_t *stride,
                          hg_dlayout_t *out) {
  hg_dlayout_t r;
  if (n == 1) {
    r.shape = dint_leaf(shape[0]);
    r.stride = dint_leaf(stride[0]);
    *out = r;
    return hg_ok();
  }
  hgd_layout_empty(&r);
  for (int i = 0; i < n; i++) {
    hg_dtuple_t s = dint_leaf(shape[i]), d = dint_leaf(stride[i]);
    HG_TRY(hgd_push(&r.shape, &s));
    HG_TRY(hgd_push(&r.stride, &d));
  }
  *out = r;
  return hg_ok();
}

hg_status_t hgd_subsize(hg_builder_t *b, const hg_dtuple_t *shape, int si, hg_dint_t *out) {
  hg_dint_t p = hg_dint(1);
  for (int q = si, e = hgl_end(&shape->t, si); q < e; q++)
    if (shape->t.arity[q] == HG_LEAF) HG_TRY(hg_dint_mul(b, p, shape->d[q], &p));
  *out = p;
  return hg_ok();
}

/* ---------------------------------------------------------------- text */

static int db_tuple(hgl_sbuf_t *b, const hg_dtuple_t *t, int i) {
  if (t->t.arity[i] == HG_LEAF) {
    char tmp[160];
    hg_dint_print(t->d[i], tmp, sizeof tmp);
    hgl_sb_puts(b, tmp);
    return i + 1;
  }
  int k = t->t.arity[i];
  hgl_sb_puts(b, "(");
  i++;
  for (int j = 0; j < k; j++) {
    if (j) hgl_sb_puts(b, ",");
    i = db_tuple(b, t, i);
  }
  hgl_sb_puts(b, ")");
  return i;
}

int hg_dlayout_print(const hg_dlayout_t *l, char *buf, size_t size) {
  hgl_sbuf_t b = {buf, size, 0};
  if (size > 0) buf[0] = '\0';
  if (!hgl_tuple_valid(&l->shape.t) || !hgl_tuple_valid(&l->stride.t)) {
    hgl_sb_puts(&b, "<invalid layout>");
  } else {
    db_tuple(&b, &l->shape, 0);
    hgl_sb_puts(&b, ":");
    db_tuple(&b, &l->stride, 0);
  }
  return b.len > (size_t)INT32_MAX ? INT32_MAX : (int)b.len;
}

const char *hgd_lstr(const hg_dlayout_t *l, char *buf, size_t size) {
  size_t n = (size_t)hg_dlayout_print(l, buf, size);
  if (n >= size && size > 4) memcpy(buf + size - 4, "...", 4);
  return buf;
}

/* Names are replaced by INT64_MAX - k (k = the name's slot) before the static parser
 * runs, then the marked leaves take the named values (scaled by a "k*" prefix). */
#define NAME_MARK (INT64_MAX - 256)

static hg_status_t mark_leaves(hg_dtuple_t *t, const hg_dint_t *slot_val, int nslots) {
  for (int i = 0; i < t->t.n; i++) {
    if (t->t.arity[i] != HG_LEAF) continue;
    int64_t v = t->t.v[i];
    if (v > NAME_MARK) {
      int k = (int)(INT64_MAX - v);
      if (k >= nslots) return hg_error(HG_ERR_PARSE, "hg_dlayout_parse: a literal is too large");
      set_leaf(t, i, slot_val[k]);
    } else {
      set_leaf(t, i, hg_dint(v));
    }
  }
  return hg_ok();
}

hg_status_t hg_dlayout_parse(const char *text, int count, const char *const *names,
                             const hg_dint_t *vals, hg_dlayout_t *out) {
  if (!text) return hg_error(HG_ERR_PARSE, "cannot parse a NULL layout text");
  char marked[2048];
  hg_dint_t slot_val[HG_TUPLE_MAX * 2];
  int nslots = 0;
  size_t o = 0;
  for (const char *p = text; *p;) {
    if (!isalpha((unsigned char)*p)) {
      if (o + 1 >= sizeof marked)
        return hg_error(HG_ERR_CAPACITY, "hg_dlayout_parse: text too long");
      marked[o++] = *p++;
      continue;
    }
    const char *start = p;
    while (isalnum((unsigned char)*p) || *p == '_') p++;
    int len = (int)(p - start), k = 0;
    while (k < count &&
           !(strlen(names[k]) == (size_t)len && !strncmp(names[k], start, (size_t)len)))
      k++;
    if (k == count)
      return hg_error(HG_ERR_PARSE,
                      "cannot parse \"%.200s\": '%.*s' at column %ld is not a given name", text,
                      len, start, (long)(start - text) + 1);
    if (nslots >= HG_TUPLE_MAX * 2)
      return hg_error(HG_ERR_CAPACITY, "hg_dlayout_parse: more than %d named leaves",
                      HG_TUPLE_MAX * 2);
    hg_dint_t v = vals[k];
    /* "k*name": take the integer before '*' out of the text as the scale. */
    if (o > 0 && marked[o - 1] == '*') {
      size_t e = o - 1, s = e;
      while (s > 0 && isdigit((unsigned char)marked[s - 1])) s--;
      if (s > 0 && marked[s - 1] == '-') s--;
      if (s == e)
        return hg_error(HG_ERR_PARSE, "cannot parse \"%.200s\": '*' needs an integer before it",
                        text);
      marked[e] = '\0';
      int64_t scale;
      hgl_cursor_t c = {marked + s, marked + s};
      HG_TRY(hgl_parse_int(&c, &scale));
      HG_TRY(hg_dint_mul(NULL, hg_dint(scale), v, &v));
      o = s;
    }
    slot_val[nslots] = v;
    o += (size_t)snprintf(marked + o, sizeof marked - o, "%lld", (long long)(INT64_MAX - nslots));
    nslots++;
    if (o >= sizeof marked) return hg_error(HG_ERR_CAPACITY, "hg_dlayout_parse: text too long");
  }
  marked[o] = '\0';
  hg_layout_t l;
  hg_status_t s = hg_layout_parse(marked, &l);
  if (!hg_is_ok(&s)) return hg_status_wrap(s, "parsing \"%.200s\": ", text);
  hg_dlayout_t r;
  r.shape.t = l.shape;
  r.stride.t = l.stride;
  HG_TRY(mark_leaves(&r.shape, slot_val, nslots));
  HG_TRY(mark_leaves(&r.stride, slot_val, nslots));
  return hg_dlayout_make(&r.shape, &r.stride, out);
}

/* ---------------------------------------------------------------- construction */

hg_dtuple_t hg_dtuple_static(const hg_tuple_t *t) {
  hg_dtuple_t r;
  r.t = *t;
  for (int i = 0; i < t->n && i < HG_TUPLE_MAX; i++) r.d[i] = hg_dint(t->v[i]);
  return r;
}

hg_status_t hg_dtuple_make(int count, const hg_dint_t *vals, hg_dtuple_t *out) {
  if (count < 1 || count >= HG_TUPLE_MAX)
    return hg_error(HG_ERR_CAPACITY, "hg_dtuple_make: %d elements (1 to %d)", count,
                    HG_TUPLE_MAX - 1);
  hg_dtuple_t r;
  hgd_empty(&r);
  for (int i = 0; i < count; i++) {
    hg_dtuple_t e = dint_leaf(vals[i]);
    HG_TRY(hgd_push(&r, &e));
  }
  *out = r;
  return hg_ok();
}

hg_dlayout_t hg_dlayout_static(const hg_layout_t *l) {
  hg_dlayout_t r;
  r.shape = hg_dtuple_static(&l->shape);
  r.stride = hg_dtuple_static(&l->stride);
  return r;
}

hg_status_t hgd_check(const hg_dlayout_t *l, const char *what) {
  if (!l) return hg_error(HG_ERR_INVALID, "%s: NULL layout", what);
  const hg_tuple_t *s = &l->shape.t, *d = &l->stride.t;
  if (!hgl_tuple_valid(s) || !hgl_tuple_valid(d))
    return hg_error(HG_ERR_INVALID,
                    "%s: malformed dynamic layout (each tuple needs 1..%d nodes "
                    "with consistent preorder arities)",
                    what, HG_TUPLE_MAX);
  if (!hg_tuple_congruent(s, d))
    return hg_error(HG_ERR_INVALID, "%s: shape and stride are not congruent (same nesting)", what);
  for (int i = 0; i < s->n; i++) {
    if (s->arity[i] == 0)
      return hg_error(HG_ERR_INVALID, "%s: a layout cannot hold an empty tuple ()", what);
    if (s->arity[i] != HG_LEAF) continue;
    const hg_dint_t *x[2] = {&l->shape.d[i], &l->stride.d[i]};
    for (int k = 0; k < 2; k++) {
      if (x[k]->n < 0 || x[k]->n > HG_DINT_FACTORS)
        return hg_error(HG_ERR_INVALID, "%s: a leaf has %d run-time factors (0..%d)", what, x[k]->n,
                        HG_DINT_FACTORS);
      if (x[k]->c == HG_UNDERSCORE)
        return hg_error(HG_ERR_INVALID, "%s: a layout cannot hold '_'", what);
      for (int f = 0; f < x[k]->n; f++)
        if (x[k]->f[f].id <= 0)
          return hg_error(HG_ERR_INVALID, "%s: a dynamic leaf holds the value HG_NONE", what);
    }
    if (x[0]->n == 0 && x[0]->c < 0) {
      char a[256];
      return hg_error(HG_ERR_INVALID, "%s: layout %s has the negative shape %lld (shapes are >= 0)",
                      what, hgd_lstr(l, a, sizeof a), (long long)x[0]->c);
    }
  }
  return hg_ok();
}

hg_status_t hg_dlayout_make(const hg_dtuple_t *shape, const hg_dtuple_t *stride,
                            hg_dlayout_t *out) {
  if (!shape || !stride) return hg_error(HG_ERR_INVALID, "hg_dlayout_make: NULL shape or stride");
  hg_dlayout_t l;
  l.shape = *shape;
  l.stride = *stride;
  HG_TRY(hgd_check(&l, "hg_dlayout_make"));
  for (int i = 0; i < l.shape.t.n; i++) {
    if (l.shape.t.arity[i] != HG_LEAF) continue;
    l.shape.t.v[i] = l.shape.d[i].c;
    l.stride.t.v[i] = l.stride.d[i].c;
    if (l.shape.d[i].n > 0 && l.shape.d[i].c > 0) l.shape.d[i].sign = HG_DINT_POS;
  }
  *out = l;
  return hg_ok();
}

/* Compact strides: the running product of the extents, leaf by leaf in `order` (preorder
 * leaves for column-major, reversed at every level for row-major). */
static hg_status_t compact(hg_builder_t *b, const hg_dtuple_t *shape, int i, bool row,
                           hg_dint_t *run, hg_dtuple_t *stride) {
  if (shape->t.arity[i] == HG_LEAF) {
    set_leaf(stride, i, *run);
    return hg_dint_mul(b, *run, shape->d[i], run);
  }
  int kids[128], k = shape->t.arity[i];
  for (int j = 0, c = i + 1; j < k; j++, c = hgl_end(&shape->t, c)) kids[j] = c;
  for (int j = 0; j < k; j++)
    HG_TRY(compact(b, shape, kids[row ? k - 1 - j : j], row, run, stride));
  return hg_ok();
}

static hg_status_t make_compact(hg_builder_t *b, const hg_dtuple_t *shape, bool row,
                                hg_dlayout_t *out) {
  if (!shape || !hgl_tuple_valid(&shape->t))
    return hg_error(HG_ERR_INVALID, "hg_dlayout_%s_major: malformed shape", row ? "row" : "col");
  hg_dtuple_t stride = *shape;
  hg_dint_t run = hg_dint(1);
  HG_TRY(compact(b, shape, 0, row, &run, &stride));
  return hg_dlayout_make(shape, &stride, out);
}

hg_status_t hg_dlayout_col_major(hg_builder_t *b, const hg_dtuple_t *shape, hg_dlayout_t *out) {
  return make_compact(b, shape, false, out);
}

hg_status_t hg_dlayout_row_major(hg_builder_t *b, const hg_dtuple_t *shape, hg_dlayout_t *out) {
  return make_compact(b, shape, true, out);
}

bool hg_dlayout_is_static(const hg_dlayout_t *l, hg_layout_t *out) {
  for (int i = 0; i < l->shape.t.n; i++)
    if (l->shape.t.arity[i] == HG_LEAF && (l->shape.d[i].n || l->stride.d[i].n)) return false;
  if (out) {
    out->shape = l->shape.t;
    out->stride = l->stride.t;
  }
  return true;
}

int hg_dlayout_rank(const hg_dlayout_t *l) {
  return hgd_rank(l);
}

hg_status_t hg_dlayout_mode(const hg_dlayout_t *l, int i, hg_dlayout_t *out) {
  HG_TRY(hgd_check(l, "layout mode"));
  if (i < 0 || i >= hgd_rank(l)) {
    char a[256];
    return hg_error(HG_ERR_INVALID, "mode %d of the rank-%d layout %s does not exist", i,
                    hgd_rank(l), hgd_lstr(l, a, sizeof a));
  }
  hgd_mode(l, i, out);
  return hg_ok();
}

static hg_status_t subst_tuple(const hg_dtuple_t *t,
                               hg_status_t (*value)(void *ctx, hg_val_t v, int64_t *out), void *ctx,
                               hg_tuple_t *out) {
  *out = t->t;
  for (int i = 0; i < t->t.n; i++) {
    if (t->t.arity[i] != HG_LEAF) continue;
    int64_t acc = t->d[i].c, v;
    for (int f = 0; f < t->d[i].n; f++) {
      HG_TRY(value(ctx, t->d[i].f[f], &v));
      HG_TRY(hgl_mul(acc, v, &acc));
    }
    out->v[i] = acc;
  }
  return hg_ok();
}

hg_status_t hg_dlayout_subst(const hg_dlayout_t *l,
                             hg_status_t (*value)(void *ctx, hg_val_t v, int64_t *out), void *ctx,
                             hg_layout_t *out) {
  HG_TRY(hgd_check(l, "hg_dlayout_subst"));
  HG_TRY(subst_tuple(&l->shape, value, ctx, &out->shape));
  return subst_tuple(&l->stride, value, ctx, &out->stride);
}

/* ---------------------------------------------------------------- size, cosize */

hg_status_t hg_dl_size(hg_builder_t *b, const hg_dlayout_t *l, hg_dint_t *out) {
  HG_TRY(hgd_check(l, "size"));
  HG_TRY(hgd_subsize(b, &l->shape, 0, out));
  return hgd_builder_ok(b);
}

hg_status_t hg_dl_cosize(hg_builder_t *b, const hg_dlayout_t *l, hg_dint_t *out) {
  HG_TRY(hgd_check(l, "cosize"));
  hg_dint_t s[HG_TUPLE_MAX], d[HG_TUPLE_MAX], acc = hg_dint(1), t;
  int n = hgd_flat(l, s, d);
  bool pos = true;
  for (int i = 0; i < n; i++) pos = pos && hgd_pos(s[i]);
  if (pos) { /* L(size - 1) is every coordinate at its largest: sum (s_i - 1) * d_i */
    for (int i = 0; i < n; i++) {
      HG_TRY(hg_dint_sub(b, s[i], hg_dint(1), &t));
      HG_TRY(hg_dint_mul(b, t, d[i], &t));
      HG_TRY(hg_dint_add(b, acc, t, &acc));
    }
  } else {
    hg_dint_t size;
    HG_TRY(hgd_subsize(b, &l->shape, 0, &size));
    HG_TRY(hg_dint_sub(b, size, hg_dint(1), &t));
    hg_dtuple_t crd = dint_leaf(t);
    HG_TRY(hgd_crd2idx(b, &crd, 0, l, 0, 0, &t));
    HG_TRY(hg_dint_add(b, t, hg_dint(1), &acc));
  }
  *out = acc;
  return hgd_builder_ok(b);
}

/* ---------------------------------------------------------------- crd2idx */

/* A 1-D coordinate as base // pend: consecutive divisions by extents accumulate in pend
 * and are emitted as one division when a mode needs the value (static extents multiply
 * here; a chain of dynamic ones divides quotient by quotient). */
typedef struct chain {
  hg_dint_t base, pend;
} chain_t;

static hg_status_t chain_value(hg_builder_t *b, chain_t *c, hg_dint_t *out) {
  if (!hg_dint_is(c->pend, 1)) {
    HG_TRY(hg_dint_div(b, c->base, c->pend, &c->base));
    c->pend = hg_dint(1);
  }
  *out = c->base;
  return hg_ok();
}

/* Whether the subtree si can contribute to an index: some leaf has a stride that is not
 * a static 0 and (for an in-domain coordinate) an extent that is not a static 1. */
static bool contributes(const hg_dlayout_t *l, int si, bool in_domain) {
  for (int q = si, e = hgl_end(&l->shape.t, si); q < e; q++)
    if (l->shape.t.arity[q] == HG_LEAF && !hg_dint_is(l->stride.d[q], 0) &&
        !(in_domain && hg_dint_is(l->shape.d[q], 1)))
      return true;
  return false;
}

/* pycute's crd2idx of a 1-D coordinate in the subtree si: every mode but the last takes
 * the coordinate modulo its size (so inside it the coordinate is in its domain), the last
 * takes the rest. */
static hg_status_t crd2idx_1d(hg_builder_t *b, chain_t *c, const hg_dlayout_t *l, int si,
                              bool in_domain, hg_dint_t *acc) {
  if (l->shape.t.arity[si] == HG_LEAF) {
    if (!contributes(l, si, in_domain)) return hg_ok();
    hg_dint_t v, term;
    HG_TRY(chain_value(b, c, &v));
    HG_TRY(hg_dint_mul(b, v, l->stride.d[si], &term));
    return hg_dint_add(b, *acc, term, acc);
  }
  int k = l->shape.t.arity[si], ch = si + 1;
  for (int j = 0; j < k; j++, ch = hgl_end(&l->shape.t, ch)) {
    if (j + 1 == k) return crd2idx_1d(b, c, l, ch, in_domain, acc);
    hg_dint_t p;
    HG_TRY(hgd_subsize(b, &l->shape, ch, &p));
    if (contributes(l, ch, true)) {
      hg_dint_t v;
      HG_TRY(chain_value(b, c, &v));
      chain_t sub = {hg_dint(0), hg_dint(1)};
      HG_TRY(hg_dint_mod(b, v, p, &sub.base));
      HG_TRY(crd2idx_1d(b, &sub, l, ch, true, acc));
    }
    HG_TRY(hg_dint_mul(b, c->pend, p, &c->pend));
  }
  return hg_ok();
}

hg_status_t hgd_crd2idx(hg_builder_t *b, const hg_dtuple_t *crd, int ci, const hg_dlayout_t *l,
                        int si, unsigned flags, hg_dint_t *out) {
  if (crd->t.arity[ci] == HG_LEAF) {
    hg_dint_t v = crd->d[ci];
    if (v.n == 0 && v.c == HG_UNDERSCORE) v = hg_dint(0); /* `_` contributes nothing */
    chain_t c = {v, hg_dint(1)};
    hg_dint_t acc = hg_dint(0);
    HG_TRY(crd2idx_1d(b, &c, l, si, (flags & HG_DL_IN_DOMAIN) != 0, &acc));
    *out = acc;
    return hg_ok();
  }
  if (l->shape.t.arity[si] == HG_LEAF || crd->t.arity[ci] != l->shape.t.arity[si]) {
    hg_tuple_t sub, ssub;
    char a[256], s[256];
    hgl_subtree(&crd->t, ci, &sub);
    hgl_subtree(&l->shape.t, si, &ssub);
    return hg_error(HG_ERR_INVALID,
                    "coordinate %s does not match the shape %s (a coordinate must be congruent "
                    "to the shape, or flatter, with the same rank at every tuple)",
                    hgl_tstr(&sub, a, sizeof a), hgl_tstr(&ssub, s, sizeof s));
  }
  hg_dint_t acc = hg_dint(0), part;
  int c = ci + 1, s = si + 1;
  for (int j = 0; j < crd->t.arity[ci]; j++) {
    HG_TRY(hgd_crd2idx(b, crd, c, l, s, flags, &part));
    HG_TRY(hg_dint_add(b, acc, part, &acc));
    c = hgl_end(&crd->t, c);
    s = hgl_end(&l->shape.t, s);
  }
  *out = acc;
  return hg_ok();
}

static hg_status_t check_dtuple(const hg_dtuple_t *t, const char *what) {
  if (!t || !hgl_tuple_valid(&t->t))
    return hg_error(HG_ERR_INVALID, "%s: malformed coordinate", what);
  for (int i = 0; i < t->t.n; i++)
    if (t->t.arity[i] == HG_LEAF && (t->d[i].n < 0 || t->d[i].n > HG_DINT_FACTORS))
      return hg_error(HG_ERR_INVALID, "%s: malformed coordinate leaf", what);
  return hg_ok();
}

hg_status_t hg_dl_crd2idx(hg_builder_t *b, const hg_dlayout_t *l, const hg_dtuple_t *crd,
                          unsigned flags, hg_dint_t *out) {
  HG_TRY(hgd_check(l, "crd2idx"));
  HG_TRY(check_dtuple(crd, "crd2idx"));
  hg_status_t s = hgd_crd2idx(b, crd, 0, l, 0, flags, out);
  if (!hg_is_ok(&s)) {
    char a[256];
    return hg_status_wrap(s, "crd2idx of %s: ", hgd_lstr(l, a, sizeof a));
  }
  return hgd_builder_ok(b);
}

hg_status_t hg_dl_eval(hg_builder_t *b, const hg_dlayout_t *l, hg_dint_t idx, unsigned flags,
                       hg_dint_t *out) {
  hg_dtuple_t crd = dint_leaf(idx);
  return hg_dl_crd2idx(b, l, &crd, flags, out);
}

/* ---------------------------------------------------------------- idx2crd */

typedef struct idx2crd_ctx {
  hg_builder_t *b;
  hg_dint_t idx, s[HG_TUPLE_MAX], d[HG_TUPLE_MAX], q[HG_TUPLE_MAX];
  int n;
  int8_t state[HG_TUPLE_MAX]; /* 0 not computed, 1 in progress, 2 done */
} idx2crd_ctx_t;

/* q_i = idx // d_i, from a leaf j with d_j * s_j == d_i when there is one (q_j // s_j:
 * floor of a floor, exact for positive d_j and s_j), else by its own division. */
static hg_status_t quotient(idx2crd_ctx_t *x, int i) {
  if (x->state[i] == 2) return hg_ok();
  x->state[i] = 1;
  if (hg_dint_is(x->d[i], 1)) {
    x->q[i] = x->idx;
    x->state[i] = 2;
    return hg_ok();
  }
  for (int j = 0; j < x->n; j++) {
    if (x->state[j] == 1 || !hgd_pos(x->d[j]) || !hgd_pos(x->s[j])) continue;
    hg_dint_t span;
    HG_TRY(hg_dint_mul(x->b, x->d[j], x->s[j], &span));
    if (hgd_equal(span, x->d[i]) != HGD_YES) continue;
    HG_TRY(quotient(x, j));
    HG_TRY(hg_dint_div(x->b, x->q[j], x->s[j], &x->q[i]));
    x->state[i] = 2;
    return hg_ok();
  }
  HG_TRY(hg_dint_div(x->b, x->idx, x->d[i], &x->q[i]));
  x->state[i] = 2;
  return hg_ok();
}

hg_status_t hg_dl_idx2crd(hg_builder_t *b, const hg_dtuple_t *shape, const hg_dtuple_t *stride,
                          hg_dint_t idx, unsigned flags, hg_dtuple_t *out) {
  HG_TRY(check_dtuple(shape, "idx2crd"));
  hg_dlayout_t l;
  if (stride) {
    HG_TRY(check_dtuple(stride, "idx2crd"));
    HG_TRY(hg_dlayout_make(shape, stride, &l));
  } else {
    HG_TRY(hg_dlayout_col_major(b, shape, &l));
  }
  if (idx.n == 0 && idx.c == HG_UNDERSCORE)
    return hg_error(HG_ERR_INVALID, "idx2crd: the index cannot be '_'");
  static const idx2crd_ctx_t zero;
  idx2crd_ctx_t x = zero;
  x.b = b;
  x.idx = idx;
  x.n = hgd_flat(&l, x.s, x.d);
  hg_dint_t size, span;
  HG_TRY(hgd_subsize(b, &l.shape, 0, &size));
  hg_dtuple_t r = l.shape;
  for (int i = 0, leaf = 0; i < r.t.n; i++) {
    if (r.t.arity[i] != HG_LEAF) continue;
    hg_dint_t c;
    if (hg_dint_is(x.s[leaf], 1)) {
      c = hg_dint(0);
    } else {
      HG_TRY(quotient(&x, leaf));
      HG_TRY(hg_dint_mul(b, x.d[leaf], x.s[leaf], &span));
      /* In the domain, idx // d_i < s_i when d_i * s_i covers the whole size. */
      if ((flags & HG_DL_IN_DOMAIN) && hgd_equal(span, size) == HGD_YES)
        c = x.q[leaf];
      else
        HG_TRY(hg_dint_mod(b, x.q[leaf], x.s[leaf], &c));
    }
    set_leaf(&r, i, c);
    leaf++;
  }
  *out = r;
  return hgd_builder_ok(b);
}

/* ---------------------------------------------------------------- slice */

/* pycute's slice_: `_` keeps its subtree, an integer drops it, a tuple recurses. */
static hg_status_t slice_into(const hg_dtuple_t *crd, int ci, const hg_dtuple_t *trg, int ti,
                              hg_dtuple_t *out) {
  if (crd->t.arity[ci] == HG_LEAF) {
    if (!(crd->d[ci].n == 0 && crd->d[ci].c == HG_UNDERSCORE)) return hg_ok();
    hg_dtuple_t sub;
    hgd_subtree(trg, ti, &sub);
    return hgd_push(out, &sub);
  }
  if (trg->t.arity[ti] == HG_LEAF || trg->t.arity[ti] != crd->t.arity[ci])
    return hg_error(HG_ERR_INVALID, "slice: the coordinate does not match the shape (a tuple "
                                    "coordinate needs a tuple of the same rank)");
  int c = ci + 1, t = ti + 1;
  for (int j = 0; j < crd->t.arity[ci]; j++) {
    HG_TRY(slice_into(crd, c, trg, t, out));
    c = hgl_end(&crd->t, c);
    t = hgl_end(&trg->t, t);
  }
  return hg_ok();
}

hg_status_t hg_dl_slice(hg_builder_t *b, const hg_dlayout_t *l, const hg_dtuple_t *crd,
                        hg_dlayout_t *out, hg_dint_t *offset) {
  HG_TRY(hgd_check(l, "slice"));
  HG_TRY(check_dtuple(crd, "slice"));
  hg_dlayout_t r;
  hgd_layout_empty(&r);
  hg_dint_t off = hg_dint(0);
  hg_status_t s = slice_into(crd, 0, &l->shape, 0, &r.shape);
  if (hg_is_ok(&s)) s = slice_into(crd, 0, &l->stride, 0, &r.stride);
  if (hg_is_ok(&s)) s = hgd_crd2idx(b, crd, 0, l, 0, 0, &off);
  if (!hg_is_ok(&s)) {
    char a[256], c[256];
    return hg_status_wrap(s, "slicing %s at %s: ", hgd_lstr(l, a, sizeof a),
                          hgl_tstr(&crd->t, c, sizeof c));
  }
  if (r.shape.t.arity[0] == 0) { /* no `_`: the scalar layout 1:0 */
    r.shape = dint_leaf(hg_dint(1));
    r.stride = dint_leaf(hg_dint(0));
  }
  if (out) *out = r;
  if (offset) *offset = off;
  return hgd_builder_ok(b);
}
