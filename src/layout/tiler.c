/* Tilers: the preorder tree of by-mode lists (nested as pycute nests tuples of tilers),
 * their validation, and the constructors. */
#include <string.h>

#include "layout_internal.h"

int hgl_tiler_end(const hg_tiler_t *t, int i) {
  int need = 1;
  while (need > 0 && i < HG_TILER_MAX) {
    need--;
    need += t->sub[i];
    i++;
  }
  return i;
}

int hgl_tiler_nodes(const hg_tiler_t *t) {
  int n = 0;
  for (int k = 0; k < t->rank; k++) n = hgl_tiler_end(t, n);
  return t->rank == 0 ? 1 : n;
}

hg_status_t hgl_tiler_add(hg_tiler_t *t, int *n, const hg_layout_t *l, bool skip) {
  if (*n >= HG_TILER_MAX)
    return hg_error(HG_ERR_CAPACITY,
                    "a tiler holds at most HG_TILER_MAX = %d nodes (layouts, '_' and nested "
                    "lists together)",
                    HG_TILER_MAX);
  t->skip[*n] = skip;
  t->sub[*n] = 0;
  t->mode[*n] = l ? *l : hg_layout_1d(1, 0);
  (*n)++;
  return hg_ok();
}

hg_status_t hgl_check_by_mode_rank(const hg_layout_t *a, int count) {
  int ra = hgl_rank(a);
  if (count > ra) {
    char x[256];
    return hg_error(HG_ERR_INVALID,
                    "the tiler has %d modes but the layout %s only %d (a by-mode tiler may not "
                    "have more modes than the layout)",
                    count, hgl_lstr(a, x, sizeof x), ra);
  }
  return hg_ok();
}

/* The list (first, count) and everything below it fits the node array, and each node is
 * one of layout, `_` or a non-empty list; *end is one past the list's last node. */
static hg_status_t check_list(const hg_tiler_t *t, int first, int count, int depth,
                              const char *what, int *end) {
  int i = first;
  for (int k = 0; k < count; k++) {
    if (i >= HG_TILER_MAX)
      return hg_error(HG_ERR_CAPACITY,
                      "%s: the tiler's lists need more than HG_TILER_MAX = %d nodes", what,
                      HG_TILER_MAX);
    if (t->sub[i] < 0 || (t->sub[i] > 0 && t->skip[i]))
      return hg_error(HG_ERR_INVALID, "%s: tiler node %d is malformed (sub = %d, skip = %d)", what,
                      i, t->sub[i], (int)t->skip[i]);
    if (t->sub[i] > 0) {
      if (depth >= HG_TILER_MAX)
        return hg_error(HG_ERR_INVALID, "%s: the tiler nests too deeply", what);
      HG_TRY(check_list(t, i + 1, t->sub[i], depth + 1, what, &i));
      continue;
    }
    if (!t->skip[i]) HG_TRY(hgl_check_layout(&t->mode[i], what));
    i++;
  }
  *end = i;
  return hg_ok();
}

hg_status_t hgl_check_tiler(const hg_tiler_t *t, const char *what) {
  if (!t) return hg_error(HG_ERR_INVALID, "%s: NULL tiler", what);
  if (t->rank < 0 || t->rank > HG_TILER_MAX)
    return hg_error(HG_ERR_CAPACITY,
                    "%s: a tiler has 0 (one layout) to HG_TILER_MAX = %d slots, "
                    "not %d",
                    what, HG_TILER_MAX, t->rank);
  if (t->rank == 0) return hgl_check_layout(&t->mode[0], what);
  int end;
  return check_list(t, 0, t->rank, 0, what, &end);
}

hg_tiler_t hg_tiler_layout(const hg_layout_t *l) {
  hg_tiler_t t;
  memset(&t, 0, sizeof t);
  t.mode[0] = *l;
  return t;
}

static hg_status_t shape_list(const hg_tuple_t *shape, int si, hg_tiler_t *t, int *n);

/* Shape node si as one tiler slot: an integer v is v:1, `_` a skip, a tuple a nested list. */
static hg_status_t shape_slot(const hg_tuple_t *shape, int si, hg_tiler_t *t, int *n) {
  if (shape->arity[si] != HG_LEAF) {
    int me = *n;
    HG_TRY(hgl_tiler_add(t, n, NULL, false));
    t->sub[me] = shape->arity[si];
    return shape_list(shape, si, t, n);
  }
  int64_t v = shape->v[si];
  if (v == HG_UNDERSCORE) return hgl_tiler_add(t, n, NULL, true);
  if (v < 0) return hg_error(HG_ERR_INVALID, "tiler: the size %lld is negative", (long long)v);
  hg_layout_t l = hg_layout_1d(v, 1);
  return hgl_tiler_add(t, n, &l, false);
}

/* The children of tuple node si, as the slots of one by-mode list. */
static hg_status_t shape_list(const hg_tuple_t *shape, int si, hg_tiler_t *t, int *n) {
  if (shape->arity[si] == 0) return hg_error(HG_ERR_INVALID, "tiler: a shape cannot hold ()");
  for (int k = 0, c = si + 1; k < shape->arity[si]; k++, c = hgl_end(shape, c))
    HG_TRY(shape_slot(shape, c, t, n));
  return hg_ok();
}

hg_status_t hg_tiler_shape(const hg_tuple_t *shape, hg_tiler_t *out) {
  if (!hgl_tuple_valid(shape)) return hg_error(HG_ERR_INVALID, "tiler: malformed shape");
  hg_tiler_t t;
  memset(&t, 0, sizeof t);
  if (hg_is_int(shape)) {
    char x[256];
    if (shape->v[0] < 0 || shape->v[0] == HG_UNDERSCORE)
      return hg_error(HG_ERR_INVALID, "tiler: the size %s is not an integer >= 0",
                      hgl_tstr(shape, x, sizeof x));
    t.mode[0] = hg_layout_1d(shape->v[0], 1);
    *out = t;
    return hg_ok();
  }
  int n = 0;
  t.rank = shape->arity[0];
  HG_TRY(shape_list(shape, 0, &t, &n));
  *out = t;
  return hg_ok();
}
