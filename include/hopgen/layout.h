/* hopgen layout algebra — CuTe's hierarchical layouts in C, with CuTe's exact semantics.
 *
 * Nothing here knows about GPUs. All types are fixed-capacity values: copy them by
 * assignment, no malloc, no free. Integers are int64_t so that overflow is detected
 * instead of wrapping; tensor coordinates narrow to int32 only at the hardware layers.
 *
 * Notation (see tests/vectors/README.md): an integer `8`; a tuple `(4,8)`, nested
 * `((2,4),8)`; a rank-1 tuple keeps its parentheses `(4)`; a layout `shape:stride`; a
 * tiler is a layout or a by-mode list `[4:1,_,(2,2):(1,4)]`, possibly nested
 * `[[2:1,3:1],4:1]` (a tuple of sizes `((2,3),4)` is the same); a swizzled (composed)
 * layout `Sw<3,4,3> o 0 o (8,64):(64,1)`. The parser also accepts CuTe's printed forms
 * (`_4` static integers, spaces). */
#ifndef HOPGEN_LAYOUT_H
#define HOPGEN_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hopgen/status.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: what libhopgen.so exports */

/* ---------------------------------------------------------------- int tuples */

/* Nodes (integers plus tuples) a tuple can hold; CuTe layouts in practice need < 32. */
#define HG_TUPLE_MAX 64
/* arity[] value of an integer node. */
#define HG_LEAF (-1)
/* The wildcard `_` in a coordinate or tiler slot (a leaf with this value). */
#define HG_UNDERSCORE INT64_MIN

/* Semantics follow NVIDIA's pycute (the golden vectors were computed with it): results
 * carry its exact mode structure, and inputs it rejects with an assertion return an
 * error here. Operations pycute lacks (blocked/raked products, flat_*, local_tile,
 * local_partition, upcast/downcast, max_common_*) follow CuTe's C++ headers (CUTLASS 4.2),
 * built on this library's (pycute's) divide and composition. */

/* A hierarchical integer tuple stored in preorder: node 0 is the root. A node is either
 * an integer (arity HG_LEAF, value in v[]) or a tuple of arity[] children that follow it
 * in preorder. An integer at the root is a plain int (rank 1, depth 0). */
typedef struct hg_tuple {
  int16_t n;                  /* nodes in use (>= 1 for a valid tuple) */
  int8_t arity[HG_TUPLE_MAX]; /* HG_LEAF or number of children */
  int64_t v[HG_TUPLE_MAX];    /* integer value of a leaf */
} hg_tuple_t;

hg_tuple_t hg_int(int64_t v);                                                   /* the integer v */
hg_status_t hg_tuple_make(hg_tuple_t *out, int count, const hg_tuple_t *elems); /* (e0,...) */
hg_status_t hg_tuple_ints(hg_tuple_t *out, int count, const int64_t *vals);     /* flat (v0,...) */
bool hg_is_int(const hg_tuple_t *t);
int hg_tuple_rank(const hg_tuple_t *t);   /* 1 for an integer, else number of children */
int hg_tuple_depth(const hg_tuple_t *t);  /* 0 for an integer */
int hg_tuple_leaves(const hg_tuple_t *t); /* number of integers */
hg_status_t hg_tuple_get(const hg_tuple_t *t, int i,
                         hg_tuple_t *out); /* mode i (t itself if int and i==0) */
hg_status_t hg_tuple_product(const hg_tuple_t *t, int64_t *out);    /* product of all leaves */
hg_status_t hg_tuple_flatten(const hg_tuple_t *t, hg_tuple_t *out); /* flat tuple of the leaves */
hg_status_t hg_tuple_append(hg_tuple_t *t, const hg_tuple_t *elem); /* int becomes (int,elem) */
bool hg_tuple_equal(const hg_tuple_t *a, const hg_tuple_t *b);
bool hg_tuple_congruent(const hg_tuple_t *a, const hg_tuple_t *b); /* same tree structure */
/* Leaf values in preorder into vals (at most cap); returns how many were stored. */
int hg_tuple_leaf_values(const hg_tuple_t *t, int64_t *vals, int cap);

hg_status_t hg_tuple_parse(const char *text, hg_tuple_t *out);
/* Canonical text into buf; returns the length it needs (like snprintf). */
int hg_tuple_print(const hg_tuple_t *t, char *buf, size_t size);

/* ---------------------------------------------------------------- layouts */

/* A layout: congruent shape and stride tuples. The function it denotes maps a
 * coordinate (natural, partially flattened, or a 1-D index) to sum(coord_i * stride_i). */
typedef struct hg_layout {
  hg_tuple_t shape;
  hg_tuple_t stride;
} hg_layout_t;

hg_status_t hg_make_layout(const hg_tuple_t *shape, const hg_tuple_t *stride, hg_layout_t *out);
hg_layout_t hg_layout_1d(int64_t shape, int64_t stride); /* shape:stride */
/* Compact strides: column-major (CuTe LayoutLeft, the default), row-major (LayoutRight),
 * or ordered (mode with the smallest order value gets stride 1, like make_ordered_layout). */
hg_status_t hg_make_layout_col_major(const hg_tuple_t *shape, hg_layout_t *out);
hg_status_t hg_make_layout_row_major(const hg_tuple_t *shape, hg_layout_t *out);
hg_status_t hg_make_ordered_layout(const hg_tuple_t *shape, const hg_tuple_t *order,
                                   hg_layout_t *out);
/* Concatenate layouts as modes: make_layout(L0, L1, ...) = (L0.shape,L1.shape,...):(...). */
hg_status_t hg_layout_concat(int count, const hg_layout_t *modes, hg_layout_t *out);
hg_status_t hg_layout_append(const hg_layout_t *a, const hg_layout_t *mode, hg_layout_t *out);

int hg_layout_rank(const hg_layout_t *l);
int hg_layout_depth(const hg_layout_t *l);
hg_status_t hg_layout_mode(const hg_layout_t *l, int i, hg_layout_t *out); /* layout<i> */
hg_status_t hg_size(const hg_layout_t *l, int64_t *out);                   /* size of the domain */
hg_status_t hg_cosize(const hg_layout_t *l, int64_t *out);                 /* L(size-1)+1 */
/* Coordinate -> index. crd may be an integer (1-D index), congruent to the shape, or
 * partially flattened (an integer where the shape has a sub-tuple). */
hg_status_t hg_crd2idx(const hg_layout_t *l, const hg_tuple_t *crd, int64_t *out);
hg_status_t hg_layout_eval(const hg_layout_t *l, int64_t i, int64_t *out); /* L(i), 1-D */
/* Index -> natural coordinate congruent to shape (colexicographic, CuTe's order). */
hg_status_t hg_idx2crd(const hg_tuple_t *shape, int64_t idx, hg_tuple_t *out);

/* Slicing with HG_UNDERSCORE in crd: the sub-layout of the `_` modes and the offset
 * contributed by the fixed ones (CuTe's slice and slice_and_offset). The kept modes are
 * concatenated into a tuple, so (4,8):(1,4) at (_,3) is the rank-1 (4):(1) at offset 12;
 * with no `_` at all the layout is 1:0. out or offset may be NULL. */
hg_status_t hg_slice(const hg_layout_t *l, const hg_tuple_t *crd, hg_layout_t *out,
                     int64_t *offset);

/* ---------------------------------------------------------------- algebra */

hg_status_t hg_coalesce(const hg_layout_t *l, hg_layout_t *out);
/* Coalesce within each mode of profile (a tuple; the leaves of profile say "coalesce
 * this mode of l"), keeping the outer mode structure. */
hg_status_t hg_coalesce_profile(const hg_layout_t *l, const hg_tuple_t *profile, hg_layout_t *out);
hg_status_t hg_filter(const hg_layout_t *l, hg_layout_t *out); /* drop stride-0 and size-1 */
hg_status_t hg_composition(const hg_layout_t *a, const hg_layout_t *b, hg_layout_t *out);
/* complement(l, cosize_bound): the layout of the "rest" of [0, cosize_bound). pycute's
 * version: modes sorted by stride must not overlap (its in-bound assertion), and the
 * result may contain size-0 modes where a stride is below the span already covered. */
hg_status_t hg_complement(const hg_layout_t *l, int64_t cosize_bound, hg_layout_t *out);
hg_status_t hg_right_inverse(const hg_layout_t *l, hg_layout_t *out);
hg_status_t hg_left_inverse(const hg_layout_t *l, hg_layout_t *out);

/* A tiler: one layout, or a by-mode list whose slots are `_` (leave that mode alone), a
 * layout, or again a by-mode list (a nested tiler, applied to the sub-modes of that mode,
 * pycute's recursion: [[2:1,3:1],4:1] tiles the two sub-modes of mode 0 by 2:1 and 3:1).
 * Slot i of a list applies to mode i of the target. Slots are stored in preorder: a list
 * slot (sub > 0) is followed by its sub slots, so a flat list of n slots is nodes 0..n-1
 * with sub all 0. Zero-initialise a tiler built by hand ({0}) before setting rank/mode. */
#define HG_TILER_MAX 16 /* nodes: layouts, `_` and nested lists together */
typedef struct hg_tiler {
  int rank;                /* 0: a single layout in mode[0]; else top-level slots */
  bool skip[HG_TILER_MAX]; /* node is `_` */
  hg_layout_t mode[HG_TILER_MAX];
  int8_t sub[HG_TILER_MAX]; /* > 0: node is a nested list of sub[i] slots (mode[i] unused) */
} hg_tiler_t;

hg_tiler_t hg_tiler_layout(const hg_layout_t *l);
/* By-mode tiler of shapes: (128,64) -> [128:1,64:1], as CuTe treats a Shape tiler; a
 * nested shape nests the tiler: ((2,2),8) -> [[2:1,2:1],8:1]. */
hg_status_t hg_tiler_shape(const hg_tuple_t *shape, hg_tiler_t *out);
hg_status_t hg_tiler_parse(const char *text, hg_tiler_t *out);
int hg_tiler_print(const hg_tiler_t *t, char *buf, size_t size);

/* Composition with a tiler: by-mode when it is a list (CuTe's composition with a tuple). */
hg_status_t hg_composition_tiler(const hg_layout_t *a, const hg_tiler_t *t, hg_layout_t *out);

hg_status_t hg_logical_divide(const hg_layout_t *l, const hg_tiler_t *t, hg_layout_t *out);
hg_status_t hg_zipped_divide(const hg_layout_t *l, const hg_tiler_t *t, hg_layout_t *out);
hg_status_t hg_tiled_divide(const hg_layout_t *l, const hg_tiler_t *t, hg_layout_t *out);
hg_status_t hg_flat_divide(const hg_layout_t *l, const hg_tiler_t *t, hg_layout_t *out);

hg_status_t hg_logical_product(const hg_layout_t *l, const hg_tiler_t *t, hg_layout_t *out);
hg_status_t hg_zipped_product(const hg_layout_t *l, const hg_tiler_t *t, hg_layout_t *out);
hg_status_t hg_tiled_product(const hg_layout_t *l, const hg_tiler_t *t, hg_layout_t *out);
hg_status_t hg_flat_product(const hg_layout_t *l, const hg_tiler_t *t, hg_layout_t *out);
/* Rank-preserving products: mode i is (block_i, tiler_i) (blocked) or (tiler_i, block_i)
 * (raked) after padding both to the larger rank with 1:0; the pairs are not coalesced. */
hg_status_t hg_blocked_product(const hg_layout_t *l, const hg_layout_t *b, hg_layout_t *out);
hg_status_t hg_raked_product(const hg_layout_t *l, const hg_layout_t *b, hg_layout_t *out);

/* local_tile(l, tiler, coord): the tile at tile-coordinate coord of zipped_divide(l, tiler),
 * as a layout plus the offset of its first element (CuTe's local_tile on a tensor whose
 * layout is l). coord may hold HG_UNDERSCORE to keep a tile mode. */
hg_status_t hg_local_tile(const hg_layout_t *l, const hg_tiler_t *t, const hg_tuple_t *coord,
                          hg_layout_t *out, int64_t *offset);
/* local_partition(l, thr, idx): the elements of l that thread idx of thread layout thr
 * owns (CuTe's outer-partition convention), plus the offset of its first element. idx is
 * an index in thr's codomain, mapped back to a coordinate through thr's strides (CuTe's
 * get_flat_coord), so (2,16):(16,1) numbers threads row-major. */
hg_status_t hg_local_partition(const hg_layout_t *l, const hg_layout_t *thr, int64_t idx,
                               hg_layout_t *out, int64_t *offset);

/* The largest n such that a and b agree on [0, n) and both map it contiguously
 * (max_common_vector), and the layout of that common part (max_common_layout). */
hg_status_t hg_max_common_vector(const hg_layout_t *a, const hg_layout_t *b, int64_t *out);
hg_status_t hg_max_common_layout(const hg_layout_t *a, const hg_layout_t *b, hg_layout_t *out);

/* Recast a layout of elements to a layout of n-times wider (upcast) or narrower
 * (downcast) elements; recast_layout from old to new element bits (CuTe's C++ versions:
 * upcast needs each non-zero stride and n to divide one another, downcast needs a
 * stride-1 mode; a ratio like 24 -> 16 bits is upcast<2> then downcast<3>). */
hg_status_t hg_upcast(const hg_layout_t *l, int64_t n, hg_layout_t *out);
hg_status_t hg_downcast(const hg_layout_t *l, int64_t n, hg_layout_t *out);
hg_status_t hg_recast_layout(const hg_layout_t *l, int old_bits, int new_bits, hg_layout_t *out);

/* ---------------------------------------------------------------- swizzles */

/* Swizzle<B,M,S>: XOR the B bits at [M+S, M+S+B) of an offset into the bits at [M, M+B)
 * (S may be negative: then the bits move the other way). B = 0 is the identity. */
typedef struct hg_swizzle {
  int b, m, s;
} hg_swizzle_t;

hg_status_t hg_swizzle_make(int b, int m, int s, hg_swizzle_t *out); /* checks ranges */
int64_t hg_swizzle_apply(hg_swizzle_t sw, int64_t offset);

/* A composed layout: f(c) = swizzle(offset + layout(c)) (CuTe ComposedLayout<Swizzle,
 * offset, Layout>). A plain layout is a composed layout with Swizzle<0,..> and offset 0. */
typedef struct hg_composed {
  hg_swizzle_t sw;
  int64_t offset;
  hg_layout_t layout;
} hg_composed_t;

hg_composed_t hg_composed_from_layout(const hg_layout_t *l);
hg_status_t hg_composed_eval(const hg_composed_t *c, const hg_tuple_t *crd, int64_t *out);
/* (swizzle o offset o A) o B = swizzle o offset o (A o B). */
hg_status_t hg_composed_composition(const hg_composed_t *c, const hg_layout_t *b,
                                    hg_composed_t *out);
hg_status_t hg_composed_parse(const char *text, hg_composed_t *out); /* also plain layouts */
int hg_composed_print(const hg_composed_t *c, char *buf, size_t size);

/* CuTe's tile_to_shape: repeat atom (column-major order of the repetitions) until it
 * covers shape (a tuple of rank(atom) integers, each a multiple of the atom's extent);
 * the atom's swizzle and offset carry over. */
hg_status_t hg_tile_to_shape(const hg_composed_t *atom, const hg_tuple_t *shape,
                             hg_composed_t *out);
/* The same with CuTe's order argument: the repetitions of mode i vary with rank order[i]
 * (0 fastest), as make_ordered_layout. hopgen's TMA stage buffers repeat the atom along the
 * strided ("row") modes first and along the contiguous mode last, so that rows continue
 * from one atom into the next and one TMA box covers as much of the tile as it can. */
hg_status_t hg_tile_to_shape_ordered(const hg_composed_t *atom, const hg_tuple_t *shape,
                                     const hg_tuple_t *order, hg_composed_t *out);

/* ---------------------------------------------------------------- text and pictures */

hg_status_t hg_layout_parse(const char *text, hg_layout_t *out);
int hg_layout_print(const hg_layout_t *l, char *buf, size_t size);

/* Print the layout as a 2-D table of indices like cute::print_layout (a rank-1 layout is
 * shown as one row; modes beyond the second are folded into the columns). At most 65,536
 * cells. */
hg_status_t hg_layout_show(const hg_composed_t *l, FILE *out);
/* An SVG picture: cells coloured by value; with tv non-NULL (a (thread,value) -> index
 * layout into l's domain), cells are labelled T<thread>V<value>. */
hg_status_t hg_layout_svg(const hg_composed_t *l, const hg_layout_t *tv, FILE *out);

/* ---------------------------------------------------------------- operations by name */

/* One operation, named like its CuTe function ("composition", "logical_divide", ...). */
typedef struct hg_layout_op_info {
  const char *name;
  int min_args, max_args;
  const char *usage;   /* argument synopsis, e.g. "LAYOUT TILER" */
  const char *summary; /* one line */
} hg_layout_op_info_t;

/* The i-th operation hg_layout_op knows (i = 0, 1, ... until NULL). */
const hg_layout_op_info_t *hg_layout_op_info(int i);
/* Run an operation on arguments in the notation and write its result in canonical
 * notation into buf: what `hopgen layout OP ARGS...` and `hopgen layout eval` (the golden
 * vector format, where "_" marks an unused optional argument) print. Slices print
 * "LAYOUT offset N". */
hg_status_t hg_layout_op(const char *op, int argc, const char *const *argv, char *buf, size_t size);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
