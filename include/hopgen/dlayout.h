/* hopgen dynamic layouts — CuTe's layout algebra on extents and strides known only at run
 * time, emitting builder arithmetic for what is dynamic and folding the rest.
 *
 * A dynamic layout is hg_layout_t's tree with leaves that are either integers or run-time
 * values of one hg_builder_t (I32 or I64 kernel parameters, special registers, anything
 * the kernel computed): what CuTe writes as Layout<Shape<int,_8>, Stride<_1,int>>. The
 * operations take the builder and emit hg_b_* instructions at its current position, only
 * for the dynamic parts: a static part is computed here in C (no multiplication by 1, no
 * addition of 0, no constant arithmetic left to the compiler). A fully static layout gives
 * exactly what the static algebra (hopgen/layout.h, pycute's semantics) gives.
 *
 * Dynamic integers (hg_dint_t) are monomials c * v1 * v2 * ... of run-time factors, so
 * products of extents and strides stay symbolic until an instruction needs their value:
 * 64 * ld, or M * N, compare equal and divide exactly without emitting anything.
 *
 * When static reasoning is required — CuTe's rules, applied to what is known here:
 *  - Extents (shape leaves) are >= 1. CuTe assumes non-empty dynamic shapes; a zero extent
 *    at run time gives unspecified results where the static algebra reports an error.
 *  - A mode is dropped (a size-1 mode) or two modes merge (coalesce: s0 * d0 == d1) only
 *    when that is provable here: both static, or equal as monomials (M * 1 and M). CuTe
 *    keeps a dynamic mode that might be 1 and does not merge dynamic modes that might be
 *    contiguous; so does this layer. The result then computes the same function as the
 *    static algebra on the run-time values, possibly with more modes (a mode of run-time
 *    size 1, or two modes the static coalesce would merge).
 *  - composition A o B needs each mode of coalesce(A) it walks and the remaining stride of
 *    B to divide one another (CuTe's divisibility condition). It must be decidable: both
 *    static, or one a monomial factor of the other (128 divides 128 * M; 1 divides M).
 *    Otherwise the operation is refused with a sentence naming the rule (CuTe checks it
 *    only for static values and silently assumes it for dynamic ones; hopgen does not
 *    guess). The right side B is static (its shapes may be dynamic inside a divide, where
 *    the complement's last mode depends on the extent).
 *  - complement, and so the divides, takes a static layout (the tiler) and a dynamic
 *    bound: sorting modes by stride and CuTe's in-bound condition need static strides.
 *    Products, right_inverse and left_inverse need the complement of the dynamic layout
 *    itself and are not offered.
 *  - Division and modulo follow Python's floor semantics, as the static algebra does, so a
 *    negative coordinate or index maps exactly as there. A value known to be >= 0 (see
 *    hg_dint_val_nonneg) by a positive divisor uses unsigned division (cheaper); a static
 *    power-of-two divisor uses a shift and a mask (exact for negative values too).
 *  - Arithmetic runs in the widest type of its operands: I32 values and constants that fit
 *    32 bits give I32 instructions (which wrap, as hand-written index math does), an I64
 *    operand or a constant beyond 32 bits gives I64, and an I32 is sign-extended to meet
 *    an I64 (signed coordinates stay signed). Pass I64 values where products may exceed
 *    2^31.
 *  - A value emitted inside an if/loop body may be used only inside that body (the
 *    builder's rule): run the operations where their results are needed, or at the top.
 */
#ifndef HOPGEN_DLAYOUT_H
#define HOPGEN_DLAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hopgen/emit.h"
#include "hopgen/layout.h"
#include "hopgen/status.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: what libhopgen.so exports */

/* ---------------------------------------------------------------- dynamic integers */

/* Run-time factors one monomial holds before the excess is multiplied out (emitted). */
#define HG_DINT_FACTORS 4

/* What is known of a value's sign (the arithmetic picks cheaper instructions with it). */
typedef enum hg_dint_sign {
  HG_DINT_ANY = 0,
  HG_DINT_NONNEG, /* >= 0 */
  HG_DINT_POS,    /* >= 1 */
} hg_dint_sign_t;

/* c * f[0] * ... * f[n-1]: a static integer c when n == 0. Factors are I32/I64 values of
 * the builder the operations run on, sorted by id. c is HG_UNDERSCORE for a `_` leaf of a
 * coordinate. */
typedef struct hg_dint {
  int64_t c;
  int8_t n;
  int8_t sign; /* hg_dint_sign_t */
  hg_val_t f[HG_DINT_FACTORS];
} hg_dint_t;

hg_dint_t hg_dint(int64_t v);             /* the static integer v */
hg_dint_t hg_dint_val(hg_val_t v);        /* a run-time I32/I64, any sign */
hg_dint_t hg_dint_val_nonneg(hg_val_t v); /* ... known to be >= 0 */
hg_dint_t hg_dint_val_sign(hg_val_t v, hg_dint_sign_t sign);
bool hg_dint_is_static(hg_dint_t x);
bool hg_dint_is(hg_dint_t x, int64_t v); /* static and equal to v */
/* The value as one builder value: the factors multiplied out, then by c. type HG_T_NONE
 * gives its natural type (I64 if a factor is I64 or c needs 64 bits, else I32); HG_T_I64
 * widens (sign-extending); HG_T_I32 is refused for a value that needs 64 bits. */
hg_status_t hg_dint_emit(hg_builder_t *b, hg_dint_t x, hg_type_t type, hg_val_t *out);
/* Text for messages: "8", "%12", "64*%12*%15" (%N is the builder value id). */
int hg_dint_print(hg_dint_t x, char *buf, size_t size);

/* Arithmetic with folding (the static algebra's integer semantics: floor division, modulo
 * with the divisor's sign, errors on overflow of static parts and on a static zero
 * divisor). Each emits at most what its dynamic operands need. */
hg_status_t hg_dint_add(hg_builder_t *b, hg_dint_t x, hg_dint_t y, hg_dint_t *out);
hg_status_t hg_dint_sub(hg_builder_t *b, hg_dint_t x, hg_dint_t y, hg_dint_t *out);
hg_status_t hg_dint_mul(hg_builder_t *b, hg_dint_t x, hg_dint_t y, hg_dint_t *out);
hg_status_t hg_dint_div(hg_builder_t *b, hg_dint_t x, hg_dint_t y, hg_dint_t *out); /* floor */
hg_status_t hg_dint_mod(hg_builder_t *b, hg_dint_t x, hg_dint_t y, hg_dint_t *out);
hg_status_t hg_dint_ceil_div(hg_builder_t *b, hg_dint_t x, hg_dint_t y, hg_dint_t *out);
hg_status_t hg_dint_min(hg_builder_t *b, hg_dint_t x, hg_dint_t y, hg_dint_t *out);
hg_status_t hg_dint_max(hg_builder_t *b, hg_dint_t x, hg_dint_t y, hg_dint_t *out);

/* ---------------------------------------------------------------- dynamic tuples, layouts */

/* An int tuple whose leaves are hg_dint_t: t is the tree (preorder, as hg_tuple_t) and a
 * leaf's t.v[i] mirrors d[i].c. */
typedef struct hg_dtuple {
  hg_tuple_t t;
  hg_dint_t d[HG_TUPLE_MAX];
} hg_dtuple_t;

/* Congruent shape and stride: CuTe's Layout with dynamic leaves. */
typedef struct hg_dlayout {
  hg_dtuple_t shape;
  hg_dtuple_t stride;
} hg_dlayout_t;

hg_dtuple_t hg_dtuple_static(const hg_tuple_t *t);
/* A flat tuple (v0, ..., v(count-1)) (count >= 1; one value still makes a rank-1 tuple). */
hg_status_t hg_dtuple_make(int count, const hg_dint_t *vals, hg_dtuple_t *out);
hg_dlayout_t hg_dlayout_static(const hg_layout_t *l);
/* Shape and stride must be congruent; dynamic shape leaves are marked >= 1 (see above). */
hg_status_t hg_dlayout_make(const hg_dtuple_t *shape, const hg_dtuple_t *stride, hg_dlayout_t *out);
/* Compact strides for a dynamic shape, as hg_make_layout_col_major / _row_major. The
 * strides are symbolic products: nothing is emitted unless a stride has more than
 * HG_DINT_FACTORS run-time factors. */
hg_status_t hg_dlayout_col_major(hg_builder_t *b, const hg_dtuple_t *shape, hg_dlayout_t *out);
hg_status_t hg_dlayout_row_major(hg_builder_t *b, const hg_dtuple_t *shape, hg_dlayout_t *out);
/* The layout notation with names for dynamic leaves: "(M,(8,T)):(1,(ld,8*ld))" with names
 * {"M","T","ld"} and their values. A name is [A-Za-z][A-Za-z0-9_]*; "k*name" scales it. */
hg_status_t hg_dlayout_parse(const char *text, int count, const char *const *names,
                             const hg_dint_t *vals, hg_dlayout_t *out);
/* Text for messages, dynamic leaves as hg_dint_print writes them. */
int hg_dlayout_print(const hg_dlayout_t *l, char *buf, size_t size);
/* True when every leaf is static; then *out (if not NULL) is the static layout. */
bool hg_dlayout_is_static(const hg_dlayout_t *l, hg_layout_t *out);
int hg_dlayout_rank(const hg_dlayout_t *l);
hg_status_t hg_dlayout_mode(const hg_dlayout_t *l, int i, hg_dlayout_t *out);
/* The static layout this one is for given run-time values (value(ctx, v) gives v's value):
 * what tests and diagnostics compare with the static algebra. */
hg_status_t hg_dlayout_subst(const hg_dlayout_t *l,
                             hg_status_t (*value)(void *ctx, hg_val_t v, int64_t *out), void *ctx,
                             hg_layout_t *out);

/* ---------------------------------------------------------------- operations */

/* Flags for the index operations. HG_DL_IN_DOMAIN: the caller guarantees 0 <= index <
 * size, so the outermost modulo (which only matters past the end) is left out, as
 * hand-written index math does. */
#define HG_DL_IN_DOMAIN 1u

hg_status_t hg_dl_size(hg_builder_t *b, const hg_dlayout_t *l, hg_dint_t *out);
hg_status_t hg_dl_cosize(hg_builder_t *b, const hg_dlayout_t *l, hg_dint_t *out);
/* Coordinate -> index, as hg_crd2idx: crd is a 1-D index, congruent to the shape, or
 * partially flattened; its leaves may be dynamic. */
hg_status_t hg_dl_crd2idx(hg_builder_t *b, const hg_dlayout_t *l, const hg_dtuple_t *crd,
                          unsigned flags, hg_dint_t *out);
/* L(idx) for a 1-D index: what hg_layout_eval computes, at run time. */
hg_status_t hg_dl_eval(hg_builder_t *b, const hg_dlayout_t *l, hg_dint_t idx, unsigned flags,
                       hg_dint_t *out);
/* Index -> coordinate congruent to shape: (idx // stride_i) % shape_i per leaf (CuTe's
 * idx2crd with strides); stride NULL means compact column-major (hg_idx2crd). Leaves
 * whose stride is the previous leaf's stride times its extent reuse its quotient (one
 * division chain for a compact layout, however its modes are ordered); with
 * HG_DL_IN_DOMAIN the leaf of the largest stride of such a chain takes no modulo. */
hg_status_t hg_dl_idx2crd(hg_builder_t *b, const hg_dtuple_t *shape, const hg_dtuple_t *stride,
                          hg_dint_t idx, unsigned flags, hg_dtuple_t *out);
/* Slice with `_` in crd (hg_slice): the kept modes and the (dynamic) offset. */
hg_status_t hg_dl_slice(hg_builder_t *b, const hg_dlayout_t *l, const hg_dtuple_t *crd,
                        hg_dlayout_t *out, hg_dint_t *offset);

/* Merge provably contiguous modes, drop static size-1 modes (see the rules above). */
hg_status_t hg_dl_coalesce(hg_builder_t *b, const hg_dlayout_t *l, hg_dlayout_t *out);
/* complement(l, bound) of a static layout within a dynamic bound. */
hg_status_t hg_dl_complement(hg_builder_t *b, const hg_layout_t *l, hg_dint_t bound,
                             hg_dlayout_t *out);
/* A o B for a static B, and by a (nested) tiler. */
hg_status_t hg_dl_composition(hg_builder_t *b, const hg_dlayout_t *a, const hg_layout_t *bl,
                              hg_dlayout_t *out);
hg_status_t hg_dl_composition_tiler(hg_builder_t *b, const hg_dlayout_t *a, const hg_tiler_t *t,
                                    hg_dlayout_t *out);
/* The divides by a static (nested) tiler, with the static algebra's mode structure. */
hg_status_t hg_dl_logical_divide(hg_builder_t *b, const hg_dlayout_t *l, const hg_tiler_t *t,
                                 hg_dlayout_t *out);
hg_status_t hg_dl_zipped_divide(hg_builder_t *b, const hg_dlayout_t *l, const hg_tiler_t *t,
                                hg_dlayout_t *out);
hg_status_t hg_dl_tiled_divide(hg_builder_t *b, const hg_dlayout_t *l, const hg_tiler_t *t,
                               hg_dlayout_t *out);
hg_status_t hg_dl_flat_divide(hg_builder_t *b, const hg_dlayout_t *l, const hg_tiler_t *t,
                              hg_dlayout_t *out);
/* local_tile (hg_local_tile) at a dynamic tile coordinate: the tile and its offset. */
hg_status_t hg_dl_local_tile(hg_builder_t *b, const hg_dlayout_t *l, const hg_tiler_t *t,
                             const hg_dtuple_t *coord, hg_dlayout_t *out, hg_dint_t *offset);
/* local_partition (hg_local_partition) for a dynamic thread index of a static thread
 * layout: what that thread owns and the offset of its first element. */
hg_status_t hg_dl_local_partition(hg_builder_t *b, const hg_dlayout_t *l, const hg_layout_t *thr,
                                  hg_dint_t idx, hg_dlayout_t *out, hg_dint_t *offset);

/* ---------------------------------------------------------------- tensors */

/* Memory seen through a dynamic layout (CuTe's Tensor of a pointer and a layout): element
 * crd is at the byte address base + esize * layout(crd). base is a byte address (an I64
 * value, or static); the layout counts elements. */
typedef struct hg_dtensor {
  hg_dint_t base;
  int esize;
  hg_dlayout_t layout;
} hg_dtensor_t;

/* The sub-tensor at crd, `_` leaves kept (hg_dl_slice): the kept modes, the base moved to the
 * first element. The batch of a batched matrix is the slice (_, _, batch). */
hg_status_t hg_dt_slice(hg_builder_t *b, const hg_dtensor_t *t, const hg_dtuple_t *crd,
                        hg_dtensor_t *out);
/* A batched row-major matrix: (rows, cols, batches):(ld, 1, batch_stride) elements of esize
 * bytes at base (extents are >= 1, as for any dynamic shape). */
hg_status_t hg_dt_matrix(hg_dint_t base, int esize, hg_dint_t rows, hg_dint_t cols,
                         hg_dint_t batches, hg_dint_t ld, hg_dint_t batch_stride,
                         hg_dtensor_t *out);
/* The same, column-major: (rows, cols, batches):(1, ld, batch_stride). */
hg_status_t hg_dt_matrix_cm(hg_dint_t base, int esize, hg_dint_t rows, hg_dint_t cols,
                            hg_dint_t batches, hg_dint_t ld, hg_dint_t batch_stride,
                            hg_dtensor_t *out);
/* One batch of a tensor whose last mode is the batch: the slice (_, ..., _, batch). */
hg_status_t hg_dt_batch(hg_builder_t *b, const hg_dtensor_t *t, hg_dint_t batch, hg_dtensor_t *out);
/* The byte address of element crd (hg_dl_crd2idx with flags), folded as far as it goes. */
hg_status_t hg_dt_addr(hg_builder_t *b, const hg_dtensor_t *t, const hg_dtuple_t *crd,
                       unsigned flags, hg_dint_t *out);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
