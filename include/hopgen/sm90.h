/* hopgen Hopper facts — element types, wgmma atoms and TiledMma, GMMA shared-memory
 * layouts and descriptors, TMA tensor-map parameters and TiledCopy plans.
 *
 * Pure computation: integers in, integers out. No driver, no GPU. Every plan is
 * validated against the documented hardware rules and a failure names the rule. */
#ifndef HOPGEN_SM90_H
#define HOPGEN_SM90_H

#include <stdbool.h>
#include <stdint.h>

#include "hopgen/layout.h"
#include "hopgen/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- element types */

typedef enum hg_dtype {
  HG_U8,
  HG_S8,
  HG_E4M3, /* fp8 e4m3 */
  HG_E5M2, /* fp8 e5m2 */
  HG_U16,
  HG_F16,
  HG_BF16,
  HG_U32,
  HG_S32,
  HG_F32,
  HG_TF32, /* stored as 32 bits; wgmma reads the top 19 */
  HG_U64,
  HG_F64,
  HG_DTYPE_COUNT
} hg_dtype_t;

int hg_dtype_bytes(hg_dtype_t t);
int hg_dtype_bits(hg_dtype_t t);
bool hg_dtype_is_float(hg_dtype_t t);
const char *hg_dtype_name(hg_dtype_t t); /* "bf16", "e4m3", ... */
hg_status_t hg_dtype_parse(const char *name, hg_dtype_t *out);

/* ---------------------------------------------------------------- TMA tensor maps */

/* Swizzle modes numbered as CUtensorMapSwizzle (1 = 32B ... 3 = 128B). The wgmma
 * descriptor numbers them the other way round; convert with hg_gmma_layout_type. */
typedef enum hg_swizzle_mode {
  HG_SWIZZLE_NONE = 0,
  HG_SWIZZLE_32B = 1,
  HG_SWIZZLE_64B = 2,
  HG_SWIZZLE_128B = 3,
} hg_swizzle_mode_t;

int hg_swizzle_mode_bytes(hg_swizzle_mode_t m); /* 0, 32, 64, 128 */

#define HG_TMA_MAX_RANK 5

/* Everything cuTensorMapEncodeTiled takes besides the global address. Dimension 0 is
 * the innermost (stride-1) one, as the driver wants it. */
typedef struct hg_tensormap_params {
  hg_dtype_t dtype;
  int rank;                                          /* 1..5 */
  uint64_t global_dim[HG_TMA_MAX_RANK];              /* elements */
  uint64_t global_stride_bytes[HG_TMA_MAX_RANK - 1]; /* of dims 1..rank-1 */
  uint32_t box_dim[HG_TMA_MAX_RANK];                 /* elements, 1..256 */
  uint32_t element_strides[HG_TMA_MAX_RANK];         /* 1..8 */
  int interleave;                                    /* CUtensorMapInterleave; hopgen uses 0 */
  hg_swizzle_mode_t swizzle;
  int l2_promotion; /* CUtensorMapL2promotion: 0 none..3 256B */
  bool oob_nan;     /* NaN instead of zero fill (float types) */
} hg_tensormap_params_t;

/* Every documented rule of tiled tensor maps, checked before any driver call; the
 * failure names the field, its value and the rule (global_address may be 0 to skip
 * the address check when it is not known yet). */
hg_status_t hg_tensormap_validate(const hg_tensormap_params_t *p, uint64_t global_address);

#ifdef __cplusplus
}
#endif
#endif
