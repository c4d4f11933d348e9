/* Shared by the kernel generators (gemm_gen.c, tma.c): builder code that evaluates a
 * layout at run time, so that every generator takes its address arithmetic from the
 * layouts its plans computed instead of restating it. Not public API. */
#ifndef HOPGEN_KERNELS_KERNELS_INTERNAL_H
#define HOPGEN_KERNELS_KERNELS_INTERNAL_H

#include "hopgen/emit.h"
#include "hopgen/layout.h"

/* The offset layout l gives a 1-D index known only at run time (an I32 in [0, size(l))):
 * the index is split colexicographically over the layout's leaves (CuTe's idx2crd) and
 * dotted with the strides. Constant shapes, so ptxas turns the divisions into shifts (or
 * multiplications). Refused when l has more leaves than a tuple holds. */
hg_status_t hg_kernels_layout_eval(hg_builder_t *b, const hg_layout_t *l, hg_val_t idx,
                                   hg_val_t *out);
/* Swizzle an I32 byte offset as Swizzle<B,M,S> does to an offset in elements of esize
 * bytes (a composed layout's swizzle): in bytes it is Swizzle<B, M + log2(esize), S>. */
hg_val_t hg_kernels_swizzle_bytes(hg_builder_t *b, hg_swizzle_t sw, int esize, hg_val_t off_bytes);
/* c(crd): a composed layout (swizzle o offset o layout) at a run-time coordinate given as
 * one I32 per top-level mode of c->layout, each a 1-D index into that mode (CuTe's
 * hierarchical coordinate, flattened per mode). The result is the element offset (I32),
 * offset and swizzle applied, exactly what hg_composed_eval computes on the host. */
hg_status_t hg_kernels_composed_eval(hg_builder_t *b, const hg_composed_t *c, const hg_val_t *crd,
                                     hg_val_t *out);

#endif
