/* Running a whole TMA plan on the CPU model: the loop a generated kernel performs (each
 * multicast member issues its own slice of the boxes), for comparing GPU results with the
 * model. Kept apart from model.c, which must not depend on plans. */
#include <inttypes.h>

#include "hopgen/sm90.h"

hg_status_t hg_model_tma_run(const hg_tma_plan_t *p, void *gmem, size_t gmem_bytes,
                             const int32_t *origin, uint8_t *const *cta_smem, size_t smem_bytes,
                             uint32_t smem_base, uint32_t *tx_bytes) {
  if (smem_base % p->smem_align_bytes != 0)
    return hg_error(HG_ERR_INVALID,
                    "the stage buffer at shared-memory address 0x%" PRIx32
                    " is not a multiple of %u B",
                    smem_base, p->smem_align_bytes);
  const int members = p->op == HG_TMA_LOAD && p->cluster > 1 ? p->cluster : 1;
  if (tx_bytes)
    for (int i = 0; i < members; i++) tx_bytes[i] = 0;
  for (int i = 0; i < members; i++) {
    const int first = members > 1 ? p->cta_first_box[i] : 0;
    const int count = members > 1 ? p->boxes_per_cta : p->num_boxes;
    for (int b = first; b < first + count; b++) {
      int32_t c[HG_TMA_MAX_RANK];
      HG_TRY(hg_tma_box_coords(p, b, origin, c));
      const uint32_t addr = smem_base + p->box[b].smem_offset;
      switch (p->op) {
      case HG_TMA_LOAD:
        HG_TRY(hg_model_tma_load_multicast(&p->map, gmem, gmem_bytes, c, cta_smem, members,
                                           smem_bytes, addr, (uint16_t)((1u << members) - 1u),
                                           tx_bytes));
        break;
      case HG_TMA_PREFETCH:
        break;
      default:
        HG_TRY(
            hg_model_tma_store(&p->map, p->op, gmem, gmem_bytes, c, cta_smem[0], smem_bytes, addr));
      }
    }
  }
  return hg_ok();
}
