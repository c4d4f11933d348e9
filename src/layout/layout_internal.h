/* Helpers shared by the files of the layout layer (src/layout/). Not installed.
 *
 * Arithmetic follows Python's integer semantics (floor division, modulo with the sign of
 * the divisor) because the reference (pycute) is Python: results must match it bit for
 * bit, negative operands included. Every operation that can overflow int64 or divide by
 * zero is checked and reports an error instead. */
#ifndef HOPGEN_LAYOUT_INTERNAL_H
#define HOPGEN_LAYOUT_INTERNAL_H

#include "hopgen/layout.h"

/* ---------------------------------------------------------------- arithmetic */

hg_status_t hgl_mul(int64_t a, int64_t b, int64_t *out);
hg_status_t hgl_add(int64_t a, int64_t b, int64_t *out);
hg_status_t hgl_sub(int64_t a, int64_t b, int64_t *out);
hg_status_t hgl_floordiv(int64_t a, int64_t b, int64_t *out); /* Python a // b */
hg_status_t hgl_mod(int64_t a, int64_t b, int64_t *out);      /* Python a % b */
hg_status_t hgl_ceildiv(int64_t a, int64_t b, int64_t *out);  /* -((-a) // b) */

/* ---------------------------------------------------------------- tuple trees */

/* Structural validity of a tuple handed in by a caller (node count, preorder arities). */
bool hgl_tuple_valid(const hg_tuple_t *t);
/* Index one past the subtree rooted at node i. */
int hgl_end(const hg_tuple_t *t, int i);
/* Node index of child k of the tuple node i. */
int hgl_child(const hg_tuple_t *t, int i, int k);
/* Copy the subtree rooted at node i into out. */
void hgl_subtree(const hg_tuple_t *t, int i, hg_tuple_t *out);
/* The empty tuple (), used as the start of a tuple built child by child. */
void hgl_empty(hg_tuple_t *t);
/* Append e as the last child of t's root (which must be a tuple node). */
hg_status_t hgl_push(hg_tuple_t *t, const hg_tuple_t *e);
hg_status_t hgl_push_int(hg_tuple_t *t, int64_t v);

/* ---------------------------------------------------------------- layouts */

/* Check a caller's layout: valid trees, congruent shape and stride, no `_`, shapes >= 0.
 * `what` names the argument in the message ("composition: A"). */
hg_status_t hgl_check_layout(const hg_layout_t *l, const char *what);
/* The empty layout ():(), start of a layout built mode by mode (pycute make_layout). */
void hgl_layout_empty(hg_layout_t *l);
hg_status_t hgl_layout_push(hg_layout_t *l, const hg_layout_t *mode);
/* pycute len(L): 1 for an integer shape, else the number of top-level modes. */
int hgl_rank(const hg_layout_t *l);
/* pycute L[i]: mode i, or L itself for an integer shape and i == 0 (caller checks i). */
void hgl_mode(const hg_layout_t *l, int i, hg_layout_t *out);
/* Leaves of shape and stride in preorder (capacity HG_TUPLE_MAX); returns the count. */
int hgl_flat(const hg_layout_t *l, int64_t *shape, int64_t *stride);
/* An integer layout for n == 1, else a flat tuple layout (pycute's result convention). */
hg_status_t hgl_from_flat(int n, const int64_t *shape, const int64_t *stride, hg_layout_t *out);
hg_status_t hgl_size(const hg_layout_t *l, int64_t *out);
hg_status_t hgl_cosize(const hg_layout_t *l, int64_t *out);
/* Text of a layout or tuple for error messages (truncated to fit buf). */
const char *hgl_lstr(const hg_layout_t *l, char *buf, size_t size);
/* A public operation's failure s prefixed with what it was doing: "<what> <l>: " (and " and
 * <b>" after l when b is not NULL); s itself when it is a success. */
hg_status_t hgl_wrap(hg_status_t s, const char *what, const hg_layout_t *l, const hg_layout_t *b);
const char *hgl_tstr(const hg_tuple_t *t, char *buf, size_t size);

/* Unchecked algebra used between the public entry points (inputs already validated). */
hg_status_t hgl_coalesce(const hg_layout_t *l, hg_layout_t *out);
hg_status_t hgl_composition(const hg_layout_t *a, const hg_layout_t *b, hg_layout_t *out);
hg_status_t hgl_complement(const hg_layout_t *l, int64_t bound, hg_layout_t *out);
/* complement's modes before its last one (whose shape depends on the bound): the gaps
 * between l's modes sorted by stride, m of them, and cur, the stride of the last mode. */
hg_status_t hgl_complement_modes(const hg_layout_t *l, int64_t *rs, int64_t *rd, int *m,
                                 int64_t *cur);
hg_status_t hgl_right_inverse(const hg_layout_t *l, hg_layout_t *out);
hg_status_t hgl_logical_divide(const hg_layout_t *a, const hg_layout_t *b, hg_layout_t *out);
hg_status_t hgl_logical_product(const hg_layout_t *a, const hg_layout_t *b, hg_layout_t *out);
hg_status_t hgl_crd2idx(const hg_tuple_t *crd, int ci, const hg_tuple_t *shape,
                        const hg_tuple_t *stride, int si, int64_t *out);
hg_status_t hgl_check_tiler(const hg_tiler_t *t, const char *what);

/* Tiler trees (hg_tiler_t's preorder nodes). A by-mode list is `count` slots whose first is
 * node `first`: the whole tiler's top level is (0, rank), a nested list node i holds
 * (i + 1, sub[i]). */
int hgl_tiler_end(const hg_tiler_t *t, int i); /* one past the subtree of node i */
int hgl_tiler_nodes(const hg_tiler_t *t);      /* nodes in use (rank 0: 1) */
/* Check that a layout has at least `count` modes for a by-mode list of that many slots. */
hg_status_t hgl_check_by_mode_rank(const hg_layout_t *a, int count);
/* Append node *n while building a tiler (then *n is one past it): a layout l, a `_`
 * (skip), or with l NULL and !skip a list opening whose slots follow (the caller sets its
 * sub[] once they are added). */
hg_status_t hgl_tiler_add(hg_tiler_t *t, int *n, const hg_layout_t *l, bool skip);

/* Divides and products share one driver: the splitter is logical_divide or
 * logical_product of a layout by a layout; the op picks how the halves are arranged. */
typedef enum hgl_splitter { HGL_DIVIDE, HGL_PRODUCT, HGL_COMPOSE } hgl_splitter_t;
typedef enum hgl_tiler_op {
  HGL_OP_LOGICAL_DIVIDE,
  HGL_OP_ZIPPED_DIVIDE,
  HGL_OP_TILED_DIVIDE,
  HGL_OP_FLAT_DIVIDE,
  HGL_OP_LOGICAL_PRODUCT, /* products after divides: op >= this means the product splitter */
  HGL_OP_ZIPPED_PRODUCT,
  HGL_OP_TILED_PRODUCT,
  HGL_OP_FLAT_PRODUCT,
} hgl_tiler_op_t;

/* The public entry point `name` (hg_logical_divide, ...) of tiler operation op: every one is
 * hgl_tiler_op under the CuTe name (`name` without "hg_", for messages). */
#define HGL_TILER_API(name, op)                                                                    \
  hg_status_t name(const hg_layout_t *l, const hg_tiler_t *t, hg_layout_t *out) {                  \
    return hgl_tiler_op(op, &(#name)[3], l, t, out);                                               \
  }
/* The by-mode list (first, count) of t applied mode by mode with the splitter (or, for
 * HGL_COMPOSE, composition), recursing into nested lists; modes past the list stay. */
hg_status_t hgl_by_mode(hgl_splitter_t f, const hg_layout_t *a, const hg_tiler_t *t, int first,
                        int count, hg_layout_t *out);
/* Validate, run op, and prefix a failure with "<name> of L by T: ". */
hg_status_t hgl_tiler_op(hgl_tiler_op_t op, const char *name, const hg_layout_t *l,
                         const hg_tiler_t *t, hg_layout_t *out);

/* A bounded text writer (snprintf-like: len is the length the full text needs). */
typedef struct hgl_sbuf {
  char *buf;
  size_t size;
  size_t len;
} hgl_sbuf_t;
void hgl_sb_puts(hgl_sbuf_t *b, const char *s);

/* Text cursor shared by the parsers. */
typedef struct hgl_cursor {
  const char *text; /* whole input, for the position in messages */
  const char *p;
} hgl_cursor_t;
void hgl_skip_ws(hgl_cursor_t *c);
hg_status_t hgl_parse_tuple(hgl_cursor_t *c, hg_tuple_t *out);
hg_status_t hgl_parse_layout(hgl_cursor_t *c, hg_layout_t *out);
hg_status_t hgl_parse_int(hgl_cursor_t *c, int64_t *out);
/* "at column N" message helper. */
hg_status_t hgl_parse_error(const hgl_cursor_t *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
