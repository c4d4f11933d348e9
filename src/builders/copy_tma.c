/* TiledCopy through TMA (builders.h): the one place that turns a plan's boxes into
 * cp.async.bulk.tensor instructions. The plan (hg_tma_plan_make) says which boxes fill the
 * tile, where each lands in the stage buffer and how a multicast group slices them; a box's
 * run-time coordinates are the tile origin of the tensor mode each tensor-map dimension
 * holds plus the box's constant offset, all signed 32-bit. */
#include "hopgen/builders.h"

void hg_tma_copy_coords(hg_builder_t *b, const hg_tma_plan_t *p, int box, const hg_val_t *origin,
                        hg_val_t *coords) {
  for (int d = 0; d < p->map.rank; d++) {
    const hg_val_t o = origin[p->tmap_mode[d]];
    const int32_t c = p->box[box].coord[d];
    coords[d] = c ? hg_b_bin(b, HG_ADD, o, hg_b_i32(b, c)) : o;
  }
}

static hg_val_t at(hg_builder_t *b, hg_val_t base, uint32_t offset) {
  return offset ? hg_b_bin(b, HG_ADD, base, hg_b_i32(b, (int32_t)offset)) : base;
}

/* Boxes [first, first + count) with the given multicast mask (HG_NONE: none). */
static void load_boxes(hg_builder_t *b, const hg_tma_plan_t *p, hg_val_t tmap, hg_val_t dst,
                       hg_val_t bar, const hg_val_t *origin, int first, int count, hg_val_t mask,
                       hg_val_t hint) {
  for (int i = first; i < first + count; i++) {
    hg_val_t c[HG_TMA_MAX_RANK];
    hg_tma_copy_coords(b, p, i, origin, c);
    hg_b_tma_load(b, tmap, at(b, dst, p->box[i].smem_offset), bar, p->map.rank, c, mask, hint);
  }
}

void hg_tma_copy_load(hg_builder_t *b, const hg_tma_plan_t *p, hg_val_t tmap, hg_val_t dst,
                      hg_val_t bar, const hg_val_t *origin, hg_val_t member, hg_val_t mask,
                      hg_val_t hint) {
  if (p->op != HG_TMA_LOAD) {
    hg_builder_fail(b, hg_error(HG_ERR_INVALID, "hg_tma_copy_load: the plan is a %s plan",
                                hg_tma_op_name(p->op)));
    return;
  }
  if (p->cluster <= 1) {
    load_boxes(b, p, tmap, dst, bar, origin, 0, p->num_boxes, HG_NONE, hint);
    return;
  }
  if (hg_val_is_none(member) || hg_val_is_none(mask)) {
    hg_builder_fail(b, hg_error(HG_ERR_INVALID,
                                "hg_tma_copy_load: a multicast plan (%d CTAs) needs the CTA's "
                                "member index and the group's mask",
                                p->cluster));
    return;
  }
  /* One branch per member of the group (at most 16): each issues its own slice. */
  for (int j = 0; j < p->cluster; j++) {
    hg_b_if(b, hg_b_cmp(b, HG_EQ, member, hg_b_i32(b, j)));
    load_boxes(b, p, tmap, dst, bar, origin, p->cta_first_box[j], p->boxes_per_cta, mask, hint);
    hg_b_endif(b);
  }
}

void hg_tma_copy_prefetch(hg_builder_t *b, const hg_tma_plan_t *p, hg_val_t tmap,
                          const hg_val_t *origin) {
  for (int i = 0; i < p->num_boxes; i++) {
    hg_val_t c[HG_TMA_MAX_RANK];
    hg_tma_copy_coords(b, p, i, origin, c);
    hg_b_tma_prefetch(b, tmap, p->map.rank, c);
  }
}

void hg_tma_copy_store(hg_builder_t *b, const hg_tma_plan_t *p, hg_val_t tmap, hg_val_t src,
                       const hg_val_t *origin, const hg_val_t *ok) {
  const bool reduce = hg_tma_op_is_reduce(p->op);
  if (p->op != HG_TMA_STORE && !reduce) {
    hg_builder_fail(b, hg_error(HG_ERR_INVALID, "hg_tma_copy_store: the plan is a %s plan",
                                hg_tma_op_name(p->op)));
    return;
  }
  for (int i = 0; i < p->num_boxes; i++) {
    hg_val_t c[HG_TMA_MAX_RANK];
    hg_tma_copy_coords(b, p, i, origin, c);
    if (ok) hg_b_if(b, ok[i]);
    hg_val_t from = at(b, src, p->box[i].smem_offset);
    if (reduce)
      hg_b_tma_reduce(b, (hg_reduce_op_t)(p->op - HG_TMA_REDUCE_ADD), tmap, from, p->map.rank, c);
    else
      hg_b_tma_store(b, tmap, from, p->map.rank, c);
    if (ok) hg_b_endif(b);
  }
}
