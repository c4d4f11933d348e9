/* libFuzzer target: hg_tensormap_validate on arbitrary cuTensorMapEncodeTiled parameters,
 * and the TMA planner (hg_tma_smem_layout, hg_tma_plan_make, hg_tma_box_coords,
 * hg_tma_box_issuable) on arbitrary tensors, tiles, swizzles, clusters and origins. Every
 * call returns a status with a sentence on failure; a plan that is made must be consistent
 * (its tensor map valid, its boxes inside the stage buffer). */
#include <stdint.h>
#include <string.h>

#include "fuzz_input.h"
#include "hopgen/sm90.h"

static void check(int cond) {
  if (!cond) __builtin_trap();
}

static void ok_or_sentence(hg_status_t s) {
  check(s.code == HG_OK || s.msg[0] != '\0');
}

static hg_tma_plan_t plan; /* large: off the stack */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 512) return 0;
  fz_t f = {data, size};
  /* 1. The validator on raw parameters. */
  hg_tensormap_params_t p;
  memset(&p, 0, sizeof p);
  p.dtype = (hg_dtype_t)fz_pick(&f, HG_DTYPE_COUNT);
  p.rank = (int)fz_int(&f, 6);
  for (int d = 0; d < HG_TMA_MAX_RANK; d++) {
    p.global_dim[d] = (uint64_t)fz_int(&f, 1 << 20);
    if (d < HG_TMA_MAX_RANK - 1) p.global_stride_bytes[d] = (uint64_t)fz_int(&f, 1 << 24);
    p.box_dim[d] = (uint32_t)fz_int(&f, 300);
    p.element_strides[d] = (uint32_t)fz_int(&f, 9);
  }
  p.interleave = fz_pick(&f, 3);
  p.swizzle = (hg_swizzle_mode_t)fz_pick(&f, 4);
  p.l2_promotion = fz_pick(&f, 4);
  p.oob_nan = fz_bool(&f);
  ok_or_sentence(hg_tensormap_validate(&p, (uint64_t)fz_int(&f, 4096)));

  /* 2. The planner on a tensor, a tile and options. */
  hg_tma_tensor_t g;
  memset(&g, 0, sizeof g);
  g.dtype = (hg_dtype_t)fz_pick(&f, HG_DTYPE_COUNT);
  g.rank = (int)fz_int(&f, 6);
  int tile[HG_TMA_MAX_RANK];
  for (int m = 0; m < HG_TMA_MAX_RANK; m++) {
    g.shape[m] = fz_int(&f, 5000);
    g.stride[m] = fz_int(&f, 1 << 16);
    tile[m] = (int)fz_int(&f, 300);
  }
  /* Often make it a plausible row-major tensor, so that the planner gets past the basics. */
  if (fz_bool(&f) && g.rank >= 1 && g.rank <= HG_TMA_MAX_RANK) {
    int64_t st = 1;
    for (int m = g.rank - 1; m >= 0; m--) {
      g.stride[m] = st;
      st *= g.shape[m] > 0 && g.shape[m] < 5000 ? g.shape[m] : 1;
    }
  }
  g.base_align_bytes = (uint64_t)fz_int(&f, 1024);
  hg_tma_options_t o = hg_tma_options_default((hg_tma_op_t)fz_pick(&f, HG_TMA_OP_COUNT));
  o.cluster = (int)fz_int(&f, 20);
  o.mcast_rank_stride = (int)fz_int(&f, 4);
  /* -1..3 mostly; a wild value stays wild (the subtraction must not overflow: found by a
   * 30-minute run) */
  o.l2_promotion = (int)(uint32_t)((uint64_t)fz_int(&f, 4) - 1u);
  o.oob_nan = fz_bool(&f);
  o.origin_known = fz_bool(&f);
  for (int m = 0; m < HG_TMA_MAX_RANK; m++) o.origin[m] = (int32_t)fz_int(&f, 512);
  hg_composed_t smem;
  hg_status_t s = hg_tma_smem_layout(&g, tile, (hg_swizzle_mode_t)fz_pick(&f, 4), &smem);
  ok_or_sentence(s);
  if (s.code != HG_OK) return 0;
  s = hg_tma_plan_make(&g, &smem, &o, &plan);
  ok_or_sentence(s);
  if (s.code != HG_OK) return 0;
  check(hg_tensormap_validate(&plan.map, 0).code == HG_OK);
  check(plan.num_boxes >= 1 && plan.num_boxes <= HG_TMA_MAX_BOXES);
  for (int b = 0; b < plan.num_boxes; b++) {
    check(plan.box[b].smem_offset < plan.smem_bytes);
    int32_t coords[HG_TMA_MAX_RANK];
    s = hg_tma_box_coords(&plan, b, o.origin, coords);
    ok_or_sentence(s);
    if (s.code == HG_OK) ok_or_sentence(hg_tma_box_issuable(&plan, b, coords));
  }
  return 0;
}
