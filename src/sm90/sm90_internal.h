/* Helpers shared by the files of the Hopper layer (not public). */
#ifndef HOPGEN_SM90_INTERNAL_H
#define HOPGEN_SM90_INTERNAL_H

#include "hopgen/sm90.h"

/* The layout ((sh0...),(sh1...)):((st0...),(st1...)): two modes, each a flat tuple. */
hg_status_t hg_sm90_layout2(int n0, const int64_t *sh0, const int64_t *st0, int n1,
                            const int64_t *sh1, const int64_t *st1, hg_layout_t *out);

/* log2 of a power of two, -1 otherwise. */
int hg_sm90_log2(int64_t v);

/* The TMA/GMMA swizzle mode a composed layout's swizzle denotes for elements of esize
 * bytes (Swizzle<B, 4 - log2(esize), 3>, B = 0..3), or an error naming the swizzle. */
hg_status_t hg_sm90_swizzle_of(hg_swizzle_t sw, int esize, hg_swizzle_mode_t *out);

/* The tensor-map rules of the global tensor alone (type, rank, interleave, address, dims,
 * strides), the first part of hg_tensormap_validate; the box's rules come after. */
hg_status_t hg_sm90_tensormap_validate_tensor(const hg_tensormap_params_t *p,
                                              uint64_t global_address);

/* The composed swizzle for mode m and elements of esize bytes. */
hg_swizzle_t hg_sm90_swizzle_for(hg_swizzle_mode_t m, int esize);

/* Per-mode offsets of a rank-r layout: tab[m][i] = layout<m>(i) for i < size<m>; a rank-r
 * layout maps coordinate c to sum_m tab[m][c_m]. tab[m] must hold size<m> entries. */
hg_status_t hg_sm90_mode_table(const hg_layout_t *l, int m, int64_t *tab, int64_t cap,
                               int64_t *size);

/* The model's addresses of a whole operand: addrs[mn * K + k] for mn < rows (model.c). */
hg_status_t hg_sm90_wgmma_addrs(uint64_t desc, hg_dtype_t t, hg_major_t major, int rows,
                                uint32_t *addrs);

#endif
