/* Validation of tiled tensor-map parameters against the rules documented for
 * cuTensorMapEncodeTiled (CUDA Driver API, "Tensor Map Object Management"), so that a
 * user reads which rule broke instead of the driver's bare CUDA_ERROR_INVALID_VALUE. */
#include <inttypes.h>

#include "sm90_internal.h"

/* The rules of the tensor itself (type, rank, address, extents, strides), checked before
 * the box's: they hold whatever box and stage layout a plan chooses, so a request that
 * breaks both is told about the tensor. */
hg_status_t hg_sm90_tensormap_validate_tensor(const hg_tensormap_params_t *p,
                                              uint64_t global_address) {
  if ((int)p->dtype < 0 || p->dtype >= HG_DTYPE_COUNT)
    return hg_error(HG_ERR_INVALID, "tensor map element type %d is not a known type",
                    (int)p->dtype);
  if (p->rank < 1 || p->rank > HG_TMA_MAX_RANK)
    return hg_error(HG_ERR_INVALID, "tensorRank = %d is outside 1..5", p->rank);
  if (p->interleave != 0)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "interleave = %d: hopgen builds non-interleaved tensor maps only",
                    p->interleave);
  if (global_address % 16 != 0)
    return hg_error(HG_ERR_INVALID,
                    "globalAddress = 0x%" PRIx64 " is not 16-byte aligned (TMA needs 16 B)",
                    global_address);
  for (int i = 0; i < p->rank; i++)
    if (p->global_dim[i] == 0 || p->global_dim[i] > (UINT64_C(1) << 32))
      return hg_error(HG_ERR_INVALID, "globalDim[%d] = %" PRIu64 " is outside 1..2^32", i,
                      p->global_dim[i]);
  for (int i = 0; i + 1 < p->rank; i++) {
    const uint64_t s = p->global_stride_bytes[i];
    if (s % 16 != 0)
      return hg_error(HG_ERR_INVALID, "globalStrides[%d] = %" PRIu64 " B is not a multiple of 16 B",
                      i, s);
    if (s >= (UINT64_C(1) << 40))
      return hg_error(HG_ERR_INVALID, "globalStrides[%d] = %" PRIu64 " B is not below 2^40 B", i,
                      s);
  }
  return hg_ok();
}

hg_status_t hg_tensormap_validate(const hg_tensormap_params_t *p, uint64_t global_address) {
  HG_TRY(hg_sm90_tensormap_validate_tensor(p, global_address));
  const int esize = hg_dtype_bytes(p->dtype);
  for (int i = 0; i < p->rank; i++) {
    if (p->box_dim[i] == 0 || p->box_dim[i] > 256)
      return hg_error(HG_ERR_INVALID, "boxDim[%d] = %u is outside 1..256", i, p->box_dim[i]);
    if (p->element_strides[i] == 0 || p->element_strides[i] > 8)
      return hg_error(HG_ERR_INVALID, "elementStrides[%d] = %u is outside 1..8", i,
                      p->element_strides[i]);
  }
  const uint64_t inner_bytes = (uint64_t)p->box_dim[0] * (uint64_t)esize;
  if (inner_bytes % 16 != 0)
    return hg_error(HG_ERR_INVALID,
                    "boxDim[0] = %u elements of %d B is %" PRIu64
                    " B, not a multiple of 16 B (the inner box must be)",
                    p->box_dim[0], esize, inner_bytes);
  const int span = hg_swizzle_mode_bytes(p->swizzle);
  if ((int)p->swizzle < 0 || (int)p->swizzle > 3)
    return hg_error(HG_ERR_INVALID, "swizzle = %d is not a tensor-map swizzle mode (0..3)",
                    (int)p->swizzle);
  if (span && inner_bytes > (uint64_t)span)
    return hg_error(HG_ERR_INVALID,
                    "the inner box is %" PRIu64
                    " B (boxDim[0] = %u x %d B) but a %d B swizzle allows at most %d B",
                    inner_bytes, p->box_dim[0], esize, span, span);
  if (p->l2_promotion < 0 || p->l2_promotion > 3)
    return hg_error(HG_ERR_INVALID, "l2Promotion = %d is outside 0..3", p->l2_promotion);
  if (p->oob_nan && !hg_dtype_is_float(p->dtype))
    return hg_error(HG_ERR_INVALID,
                    "NaN out-of-bounds fill needs a floating-point element type, not %s",
                    hg_dtype_name(p->dtype));
  if (p->oob_nan && (p->dtype == HG_E4M3 || p->dtype == HG_E5M2))
    return hg_error(HG_ERR_INVALID,
                    "NaN out-of-bounds fill is not available for %s: the tensor map carries "
                    "fp8 as UINT8",
                    hg_dtype_name(p->dtype));
  return hg_ok();
}
