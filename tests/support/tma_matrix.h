/* The TMA kernel variant matrix that CI assembles: through the PTX backend in
 * tests/kernels/test_tma_kernels.c and through the MLIR backend in
 * tests/emit/test_mlir_kernels.c. One enumeration, so the two cannot drift apart. */
#ifndef HG_TEST_TMA_MATRIX_H
#define HG_TEST_TMA_MATRIX_H

#include "hopgen/kernels.h"

/* Calls fn once per variant: element types of 1, 2 and 4 bytes x the four swizzles x four
 * tile shapes (one swizzle atom, 64 rows of two spans, a 3-D tile, a 1-D tile) x every
 * operation the type allows, loads also multicast over clusters of 2 and 4 (after the
 * cluster-1 load). Every tile overhangs the tensor and starts at a negative origin in every
 * mode (16 bytes before the start along the contiguous mode). Returns how many. */
typedef void (*tma_matrix_fn)(const hg_tma_spec_t *s, void *ctx);
int tma_matrix_for_each(tma_matrix_fn fn, void *ctx);

/* The types and swizzles it covers (for per-type expectations). */
extern const hg_dtype_t tma_matrix_types[8];
extern const hg_swizzle_mode_t tma_matrix_swizzles[4];

#endif
