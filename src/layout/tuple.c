/* Integer tuples: checked Python-style arithmetic, the preorder tree helpers, and the
 * public hg_tuple_* functions. */
#include <string.h>

#include "layout_internal.h"

/* ---------------------------------------------------------------- arithmetic */

hg_status_t hgl_mul(int64_t a, int64_t b, int64_t *out) {
  if (__builtin_mul_overflow(a, b, out))
    return hg_error(HG_ERR_OVERFLOW, "%lld * %lld overflows int64", (long long)a, (long long)b);
  return hg_ok();
}

hg_status_t hgl_add(int64_t a, int64_t b, int64_t *out) {
  if (__builtin_add_overflow(a, b, out))
    return hg_error(HG_ERR_OVERFLOW, "%lld + %lld overflows int64", (long long)a, (long long)b);
  return hg_ok();
}

hg_status_t hgl_sub(int64_t a, int64_t b, int64_t *out) {
  if (__builtin_sub_overflow(a, b, out))
    return hg_error(HG_ERR_OVERFLOW, "%lld - %lld overflows int64", (long long)a, (long long)b);
  return hg_ok();
}

hg_status_t hgl_floordiv(int64_t a, int64_t b, int64_t *out) {
  if (b == 0) return hg_error(HG_ERR_INVALID, "%lld // 0 divides by zero", (long long)a);
  if (a == INT64_MIN && b == -1)
    return hg_error(HG_ERR_OVERFLOW, "%lld // -1 overflows int64", (long long)a);
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) q--;
  *out = q;
  return hg_ok();
}

hg_status_t hgl_mod(int64_t a, int64_t b, int64_t *out) {
  if (b == 0) return hg_error(HG_ERR_INVALID, "%lld %% 0 divides by zero", (long long)a);
  if (b == -1) {
    *out = 0;
    return hg_ok();
  }
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  *out = r;
  return hg_ok();
}

hg_status_t hgl_ceildiv(int64_t a, int64_t b, int64_t *out) {
  if (a == INT64_MIN) return hg_error(HG_ERR_OVERFLOW, "-(%lld) overflows int64", (long long)a);
  int64_t q = 0;
  HG_TRY(hgl_floordiv(-a, b, &q));
  if (q == INT64_MIN)
    return hg_error(HG_ERR_OVERFLOW, "ceil(%lld / %lld) overflows int64", (long long)a,
                    (long long)b);
  *out = -q;
  return hg_ok();
}

/* ---------------------------------------------------------------- tree helpers */

int hgl_end(const hg_tuple_t *t, int i) {
  int need = 1;
  while (need > 0 && i < t->n) {
    need--;
    if (t->arity[i] > 0) need += t->arity[i];
    i++;
  }
  return i;
}

bool hgl_tuple_valid(const hg_tuple_t *t) {
  if (!t || t->n < 1 || t->n > HG_TUPLE_MAX) return false;
  int need = 1, i = 0;
  while (need > 0) {
    if (i >= t->n) return false;
    if (t->arity[i] < HG_LEAF) return false;
    need--;
    if (t->arity[i] > 0) need += t->arity[i];
    i++;
  }
  return i == t->n;
}

int hgl_child(const hg_tuple_t *t, int i, int k) {
  int c = i + 1;
  for (int j = 0; j < k; j++) c = hgl_end(t, c);
  return c;
}

void hgl_subtree(const hg_tuple_t *t, int i, hg_tuple_t *out) {
  int e = hgl_end(t, i);
  out->n = (int16_t)(e - i);
  memcpy(out->arity, t->arity + i, (size_t)(e - i) * sizeof t->arity[0]);
  memcpy(out->v, t->v + i, (size_t)(e - i) * sizeof t->v[0]);
}

void hgl_empty(hg_tuple_t *t) {
  t->n = 1;
  t->arity[0] = 0;
  t->v[0] = 0;
}

hg_status_t hgl_push(hg_tuple_t *t, const hg_tuple_t *e) {
  if (t->n + e->n > HG_TUPLE_MAX)
    return hg_error(HG_ERR_CAPACITY,
                    "a tuple would need %d nodes, more than HG_TUPLE_MAX = %d (integers plus "
                    "parenthesised groups)",
                    t->n + e->n, HG_TUPLE_MAX);
  if (t->arity[0] >= 127)
    return hg_error(HG_ERR_CAPACITY, "a tuple would have more than 127 elements");
  memcpy(t->arity + t->n, e->arity, (size_t)e->n * sizeof t->arity[0]);
  memcpy(t->v + t->n, e->v, (size_t)e->n * sizeof t->v[0]);
  t->n = (int16_t)(t->n + e->n);
  t->arity[0]++;
  return hg_ok();
}

hg_status_t hgl_push_int(hg_tuple_t *t, int64_t v) {
  hg_tuple_t e = hg_int(v);
  return hgl_push(t, &e);
}

/* ---------------------------------------------------------------- public tuples */

hg_tuple_t hg_int(int64_t v) {
  hg_tuple_t t;
  t.n = 1;
  t.arity[0] = HG_LEAF;
  t.v[0] = v;
  return t;
}

static hg_status_t check_tuple(const hg_tuple_t *t, const char *what) {
  if (!hgl_tuple_valid(t))
    return hg_error(HG_ERR_INVALID,
                    "%s is not a well-formed tuple (node count 1..%d and preorder arities)", what,
                    HG_TUPLE_MAX);
  return hg_ok();
}

hg_status_t hg_tuple_make(hg_tuple_t *out, int count, const hg_tuple_t *elems) {
  if (count < 1)
    return hg_error(HG_ERR_INVALID, "a tuple needs at least one element, got %d", count);
  hg_tuple_t r;
  hgl_empty(&r);
  for (int i = 0; i < count; i++) {
    HG_TRY(check_tuple(&elems[i], "tuple element"));
    HG_TRY(hgl_push(&r, &elems[i]));
  }
  *out = r;
  return hg_ok();
}

hg_status_t hg_tuple_ints(hg_tuple_t *out, int count, const int64_t *vals) {
  if (count < 1)
    return hg_error(HG_ERR_INVALID, "a tuple needs at least one element, got %d", count);
  hg_tuple_t r;
  hgl_empty(&r);
  for (int i = 0; i < count; i++) HG_TRY(hgl_push_int(&r, vals[i]));
  *out = r;
  return hg_ok();
}

bool hg_is_int(const hg_tuple_t *t) {
  return t->n >= 1 && t->arity[0] == HG_LEAF;
}

/* The queries below answer 0 (or false) for a malformed tuple rather than read past it. */
int hg_tuple_rank(const hg_tuple_t *t) {
  if (!hgl_tuple_valid(t)) return 0;
  return t->arity[0] == HG_LEAF ? 1 : t->arity[0];
}

static int depth_at(const hg_tuple_t *t, int i) {
  if (t->arity[i] == HG_LEAF) return 0;
  int d = 0, c = i + 1;
  for (int k = 0; k < t->arity[i]; k++) {
    int dc = depth_at(t, c);
    if (dc > d) d = dc;
    c = hgl_end(t, c);
  }
  return d + 1;
}

int hg_tuple_depth(const hg_tuple_t *t) {
  if (!hgl_tuple_valid(t)) return 0;
  return depth_at(t, 0);
}

int hg_tuple_leaves(const hg_tuple_t *t) {
  if (!hgl_tuple_valid(t)) return 0;
  int n = 0;
  for (int i = 0; i < t->n; i++) n += t->arity[i] == HG_LEAF;
  return n;
}

hg_status_t hg_tuple_get(const hg_tuple_t *t, int i, hg_tuple_t *out) {
  HG_TRY(check_tuple(t, "tuple"));
  int r = hg_tuple_rank(t);
  if (i < 0 || i >= r)
    return hg_error(HG_ERR_INVALID, "mode %d of a rank-%d tuple does not exist", i, r);
  if (hg_is_int(t)) {
    *out = *t;
    return hg_ok();
  }
  hgl_subtree(t, hgl_child(t, 0, i), out);
  return hg_ok();
}

hg_status_t hg_tuple_product(const hg_tuple_t *t, int64_t *out) {
  HG_TRY(check_tuple(t, "tuple"));
  int64_t p = 1;
  for (int i = 0; i < t->n; i++)
    if (t->arity[i] == HG_LEAF) HG_TRY(hgl_mul(p, t->v[i], &p));
  *out = p;
  return hg_ok();
}

hg_status_t hg_tuple_flatten(const hg_tuple_t *t, hg_tuple_t *out) {
  HG_TRY(check_tuple(t, "tuple"));
  if (hg_is_int(t)) {
    *out = *t;
    return hg_ok();
  }
  hg_tuple_t r;
  hgl_empty(&r);
  for (int i = 0; i < t->n; i++)
    if (t->arity[i] == HG_LEAF) HG_TRY(hgl_push_int(&r, t->v[i]));
  *out = r;
  return hg_ok();
}

hg_status_t hg_tuple_append(hg_tuple_t *t, const hg_tuple_t *elem) {
  HG_TRY(check_tuple(t, "tuple"));
  HG_TRY(check_tuple(elem, "appended element"));
  hg_tuple_t r;
  if (hg_is_int(t)) {
    hgl_empty(&r);
    HG_TRY(hgl_push(&r, t));
  } else {
    r = *t;
  }
  HG_TRY(hgl_push(&r, elem));
  *t = r;
  return hg_ok();
}

bool hg_tuple_equal(const hg_tuple_t *a, const hg_tuple_t *b) {
  if (!hgl_tuple_valid(a) || !hgl_tuple_valid(b) || a->n != b->n) return false;
  for (int i = 0; i < a->n; i++) {
    if (a->arity[i] != b->arity[i]) return false;
    if (a->arity[i] == HG_LEAF && a->v[i] != b->v[i]) return false;
  }
  return true;
}

bool hg_tuple_congruent(const hg_tuple_t *a, const hg_tuple_t *b) {
  if (!hgl_tuple_valid(a) || !hgl_tuple_valid(b) || a->n != b->n) return false;
  return memcmp(a->arity, b->arity, (size_t)a->n * sizeof a->arity[0]) == 0;
}

int hg_tuple_leaf_values(const hg_tuple_t *t, int64_t *vals, int cap) {
  if (!hgl_tuple_valid(t)) return 0;
  int n = 0;
  for (int i = 0; i < t->n; i++)
    if (t->arity[i] == HG_LEAF) {
      if (n < cap) vals[n] = t->v[i];
      n++;
    }
  return n < cap ? n : cap;
}
