/* Helpers shared by the dynamic-layout files of the builders layer (dint.c, dlayout.c,
 * dlayout_algebra.c). Not installed. The tuple-tree helpers and checked integer
 * arithmetic come from the layout layer's internal header, so both layers walk trees and
 * round divisions the same way. */
#ifndef HOPGEN_BUILDERS_DLAYOUT_INTERNAL_H
#define HOPGEN_BUILDERS_DLAYOUT_INTERNAL_H

#include "hopgen/dlayout.h"
#include "layout/layout_internal.h"

/* Three-valued answers of the static reasoning. */
typedef enum hgd_truth { HGD_NO, HGD_YES, HGD_UNKNOWN } hgd_truth_t;

/* x == y, and x divides y (y % x == 0), as far as the monomials tell. */
hgd_truth_t hgd_equal(hg_dint_t x, hg_dint_t y);
hgd_truth_t hgd_divides(hg_dint_t x, hg_dint_t y);
bool hgd_pos(hg_dint_t x); /* known >= 1 */

/* Leaves of a dynamic layout in preorder (capacity HG_TUPLE_MAX); returns the count. */
int hgd_flat(const hg_dlayout_t *l, hg_dint_t *shape, hg_dint_t *stride);
/* The integer layout for n == 1, else a flat tuple layout (as hgl_from_flat). */
hg_status_t hgd_from_flat(int n, const hg_dint_t *shape, const hg_dint_t *stride,
                          hg_dlayout_t *out);
/* Subtree of node i, and the tuple building blocks (as hgl_subtree / hgl_empty /
 * hgl_push for hg_dtuple_t). */
void hgd_subtree(const hg_dtuple_t *t, int i, hg_dtuple_t *out);
void hgd_empty(hg_dtuple_t *t);
hg_status_t hgd_push(hg_dtuple_t *t, const hg_dtuple_t *e);
void hgd_layout_empty(hg_dlayout_t *l);
hg_status_t hgd_layout_push(hg_dlayout_t *l, const hg_dlayout_t *mode);
int hgd_rank(const hg_dlayout_t *l);                            /* pycute len(L) */
void hgd_mode(const hg_dlayout_t *l, int i, hg_dlayout_t *out); /* pycute L[i] */
/* size of the subtree of shape node si. */
hg_status_t hgd_subsize(hg_builder_t *b, const hg_dtuple_t *shape, int si, hg_dint_t *out);
/* Structural check of a caller's dynamic layout (trees, congruence, no `_`, leaves). */
hg_status_t hgd_check(const hg_dlayout_t *l, const char *what);
/* Text of a dynamic layout for messages (truncated to fit buf). */
const char *hgd_lstr(const hg_dlayout_t *l, char *buf, size_t size);
/* The builder's sticky failure, if any, as the status of an operation. */
hg_status_t hgd_builder_ok(hg_builder_t *b);

/* The unchecked algebra between the public entry points. */
hg_status_t hgd_coalesce(hg_builder_t *b, const hg_dlayout_t *l, hg_dlayout_t *out);
hg_status_t hgd_composition(hg_builder_t *b, const hg_dlayout_t *a, const hg_dlayout_t *bl,
                            hg_dlayout_t *out);
hg_status_t hgd_crd2idx(hg_builder_t *b, const hg_dtuple_t *crd, int ci, const hg_dlayout_t *l,
                        int si, unsigned flags, hg_dint_t *out);

#endif
