/* The stage ring (builders.h): shared-memory buffers in stages, a full and an empty mbarrier
 * per stage, and the run-time position (stage, phase) each side keeps; plus the 2-D cluster
 * whose CTAs fill each other's stages by multicast and release them back.
 *
 * The protocol (PTX ISA "mbarrier"): a full barrier completes a phase when its producer
 * arrivals AND the transaction bytes announced with expect_tx have all come in (TMA
 * completion subtracts the bytes); the consumer waits on it with the phase parity it is
 * in. An empty barrier completes when every consumer warp that reads the stage, in every
 * CTA the producer's multicasts write, has released it; the producer waits on the
 * previous phase (parity ^ 1), so the first pass through the ring does not wait. */
#include <string.h>

#include "hopgen/builders.h"

static hg_val_t i32(hg_builder_t *b, int32_t v) {
  return hg_b_i32(b, v);
}

/* ---------------------------------------------------------------- clusters */

hg_status_t hg_cluster2d_make(hg_builder_t *b, int m, int n, hg_cluster2d_t *out) {
  if (m < 1 || n < 1 || m * n > 16)
    return hg_error(HG_ERR_INVALID,
                    "cluster %dx%d: each side at least 1 and at most 16 CTAs in all (the "
                    "multicast mask has 16 bits)",
                    m, n);
  memset(out, 0, sizeof *out);
  out->m = m;
  out->n = n;
  const int cs = m * n;
  if (cs > 1) {
    hg_b_set_cluster(b, cs, 1, 1);
    out->rank = hg_b_sreg(b, HG_CLUSTER_CTARANK);
    out->rm = hg_b_bin(b, HG_REM_U, out->rank, i32(b, m));
    out->rn = hg_b_bin(b, HG_DIV_U, out->rank, i32(b, m));
    /* The grid is 1-D and a multiple of the cluster size: cluster c holds CTAs c * cs ... */
    out->id = hg_b_bin(b, HG_DIV_U, hg_b_sreg(b, HG_CTAID_X), i32(b, cs));
    out->count = hg_b_bin(b, HG_DIV_U, hg_b_sreg(b, HG_NCTAID_X), i32(b, cs));
  } else {
    out->rank = out->rm = out->rn = i32(b, 0);
    out->id = hg_b_sreg(b, HG_CTAID_X);
    out->count = hg_b_sreg(b, HG_NCTAID_X);
  }
  return hg_ok();
}

hg_val_t hg_cluster2d_row_mask(hg_builder_t *b, const hg_cluster2d_t *c) {
  int32_t pattern = 0;
  for (int j = 0; j < c->n; j++) pattern |= 1 << (j * c->m);
  return hg_b_bin(b, HG_SHL, i32(b, pattern), c->rm);
}

hg_val_t hg_cluster2d_col_mask(hg_builder_t *b, const hg_cluster2d_t *c) {
  return hg_b_bin(b, HG_SHL, i32(b, (1 << c->m) - 1), hg_b_bin(b, HG_MUL, c->rn, i32(b, c->m)));
}

int hg_cluster2d_peers(const hg_cluster2d_t *c) {
  return c->m + c->n - 1;
}

void hg_cluster2d_sync(hg_builder_t *b, const hg_cluster2d_t *c) {
  if (c && c->m * c->n > 1) {
    hg_b_cluster_arrive(b, false);
    hg_b_cluster_wait(b);
  } else {
    hg_b_bar_sync(b, 0, 0);
  }
}

/* ---------------------------------------------------------------- rings */

hg_status_t hg_smem_ring_make(hg_builder_t *b, uint32_t stage_bytes, uint32_t align, int stages,
                              hg_smem_ring_t *out) {
  if (stages < 1 || stages > 32)
    return hg_error(HG_ERR_INVALID, "a ring of %d stages: give 1..32", stages);
  if (align < 16 || (align & (align - 1)) || align > 1024)
    return hg_error(HG_ERR_INVALID, "ring alignment %u B: a power of two from 16 to 1024", align);
  memset(out, 0, sizeof *out);
  out->stage_bytes = (stage_bytes + align - 1) / align * align;
  out->align = align;
  out->stages = stages;
  out->offset = hg_b_smem_reserve(b, out->stage_bytes * (uint32_t)stages, align);
  return hg_builder_status(b);
}

hg_val_t hg_smem_ring_addr(hg_builder_t *b, const hg_smem_ring_t *r, hg_val_t s) {
  return hg_b_mad(b, s, i32(b, (int32_t)r->stage_bytes), hg_b_smem_addr(b, r->offset));
}

/* ---------------------------------------------------------------- barriers */

hg_status_t hg_pipe_make(hg_builder_t *b, const hg_pipe_spec_t *spec, hg_pipe_t *out) {
  if (spec->stages < 1 || spec->stages > 32)
    return hg_error(HG_ERR_INVALID, "a pipeline of %d stages: give 1..32", spec->stages);
  if (spec->full_arrivals < 1 || spec->empty_arrivals < 0)
    return hg_error(HG_ERR_INVALID,
                    "pipeline arrivals: full %d (>= 1: the producer's arrive completes a phase), "
                    "empty %d (>= 0)",
                    spec->full_arrivals, spec->empty_arrivals);
  /* PTX ISA mbarrier: the expected arrival count is 1..2^20 - 1. */
  if (spec->full_arrivals >= (1 << 20) || spec->empty_arrivals >= (1 << 20))
    return hg_error(HG_ERR_INVALID, "pipeline arrivals %d / %d exceed an mbarrier's 2^20 - 1",
                    spec->full_arrivals, spec->empty_arrivals);
  memset(out, 0, sizeof *out);
  out->spec = *spec;
  out->full_offset = hg_b_smem_reserve(b, 8u * (uint32_t)spec->stages, 8);
  if (spec->empty_arrivals)
    out->empty_offset = hg_b_smem_reserve(b, 8u * (uint32_t)spec->stages, 8);
  return hg_builder_status(b);
}

void hg_pipe_init(hg_builder_t *b, const hg_pipe_t *p) {
  for (int s = 0; s < p->spec.stages; s++) {
    hg_b_mbar_init(b, hg_b_smem_addr(b, p->full_offset + 8u * (uint32_t)s),
                   i32(b, p->spec.full_arrivals));
    if (p->spec.empty_arrivals)
      hg_b_mbar_init(b, hg_b_smem_addr(b, p->empty_offset + 8u * (uint32_t)s),
                     i32(b, p->spec.empty_arrivals));
  }
}

void hg_pipe_init_cluster(hg_builder_t *b, const hg_pipe_t *p, const hg_cluster2d_t *cl,
                          hg_val_t tid, const hg_val_t *tmaps, int ntmaps) {
  hg_b_if(b, hg_b_cmp(b, HG_EQ, tid, i32(b, 0)));
  for (int i = 0; i < ntmaps; i++)
    if (!hg_val_is_none(tmaps[i])) hg_b_tmap_prefetch(b, tmaps[i]);
  hg_pipe_init(b, p);
  if (cl->m * cl->n > 1) hg_b_fence_mbarrier_init(b);
  hg_b_fence_proxy_async(b);
  hg_b_endif(b);
  hg_cluster2d_sync(b, cl);
}

hg_pipe_pos_t hg_pipe_start(hg_builder_t *b) {
  hg_pipe_pos_t pos = {hg_b_var(b, HG_T_I32, i32(b, 0)), hg_b_var(b, HG_T_I32, i32(b, 0))};
  return pos;
}

static hg_val_t bar_at(hg_builder_t *b, uint32_t base, hg_val_t s) {
  return hg_b_mad(b, s, i32(b, 8), hg_b_smem_addr(b, base));
}

hg_val_t hg_pipe_full_bar(hg_builder_t *b, const hg_pipe_t *p, hg_val_t stage) {
  return bar_at(b, p->full_offset, stage);
}

static bool has_empty(hg_builder_t *b, const hg_pipe_t *p, const char *api) {
  if (p->spec.empty_arrivals) return true;
  hg_builder_fail(b, hg_error(HG_ERR_INVALID,
                              "%s: this pipeline has no empty barriers (empty_arrivals = 0)", api));
  return false;
}

hg_val_t hg_pipe_empty_bar(hg_builder_t *b, const hg_pipe_t *p, hg_val_t stage) {
  if (!has_empty(b, p, "hg_pipe_empty_bar")) return HG_NONE;
  return bar_at(b, p->empty_offset, stage);
}

void hg_pipe_acquire(hg_builder_t *b, const hg_pipe_t *p, hg_pipe_pos_t pos) {
  if (!has_empty(b, p, "hg_pipe_acquire")) return;
  hg_b_mbar_wait(b, hg_pipe_empty_bar(b, p, pos.stage), hg_b_bin(b, HG_XOR, pos.phase, i32(b, 1)));
}

void hg_pipe_expect_tx(hg_builder_t *b, const hg_pipe_t *p, hg_pipe_pos_t pos, uint32_t bytes) {
  hg_b_mbar_arrive_expect_tx(b, hg_pipe_full_bar(b, p, pos.stage), i32(b, (int32_t)bytes));
}

void hg_pipe_add_tx(hg_builder_t *b, const hg_pipe_t *p, hg_pipe_pos_t pos, uint32_t bytes) {
  hg_b_mbar_expect_tx(b, hg_pipe_full_bar(b, p, pos.stage), i32(b, (int32_t)bytes));
}

void hg_pipe_commit_stores(hg_builder_t *b, const hg_pipe_t *p, hg_pipe_pos_t pos) {
  /* PTX ISA "Proxies": st.shared is a generic-proxy write; wgmma reads through the async
   * proxy. Each writing thread fences before the arrive that publishes its writes. */
  hg_b_fence_proxy_async(b);
  hg_b_mbar_arrive(b, hg_pipe_full_bar(b, p, pos.stage));
}

void hg_pipe_commit_cp_async(hg_builder_t *b, const hg_pipe_t *p, hg_pipe_pos_t pos) {
  hg_b_cp_async_mbar_arrive(b, hg_pipe_full_bar(b, p, pos.stage));
}

void hg_pipe_wait(hg_builder_t *b, const hg_pipe_t *p, hg_pipe_pos_t pos) {
  hg_b_mbar_wait(b, hg_pipe_full_bar(b, p, pos.stage), pos.phase);
}

void hg_pipe_release(hg_builder_t *b, const hg_pipe_t *p, hg_val_t stage, const hg_cluster2d_t *c,
                     hg_val_t lane) {
  if (!has_empty(b, p, "hg_pipe_release")) return;
  hg_val_t bar = hg_pipe_empty_bar(b, p, stage);
  if (!c || c->m * c->n == 1) {
    hg_b_if(b, hg_b_cmp(b, HG_EQ, lane, i32(b, 0)));
    hg_b_mbar_arrive(b, bar);
    hg_b_endif(b);
    return;
  }
  hg_b_if(b, hg_b_cmp(b, HG_LT_U, lane, i32(b, hg_cluster2d_peers(c))));
  {
    /* lane < n: the CTA (rm, lane) of this CTA's row; else the CTA (i, rn) of its column,
     * i = lane - n skipping rm (already counted in the row). */
    hg_val_t row_peer = hg_b_mad(b, lane, i32(b, c->m), c->rm);
    hg_val_t i = hg_b_bin(b, HG_SUB, lane, i32(b, c->n));
    hg_val_t i2 = hg_b_bin(b, HG_ADD, i,
                           hg_b_select(b, hg_b_cmp(b, HG_GE_S, i, c->rm), i32(b, 1), i32(b, 0)));
    hg_val_t col_peer = hg_b_mad(b, c->rn, i32(b, c->m), i2);
    hg_val_t peer = hg_b_select(b, hg_b_cmp(b, HG_LT_U, lane, i32(b, c->n)), row_peer, col_peer);
    hg_b_mbar_arrive_cluster(b, bar, peer);
  }
  hg_b_endif(b);
}

void hg_pipe_advance(hg_builder_t *b, const hg_pipe_t *p, hg_pipe_pos_t pos) {
  hg_val_t s1 = hg_b_bin(b, HG_ADD, pos.stage, i32(b, 1));
  hg_val_t wrap = hg_b_cmp(b, HG_EQ, s1, i32(b, p->spec.stages));
  hg_b_assign(b, pos.stage, hg_b_select(b, wrap, i32(b, 0), s1));
  hg_b_assign(b, pos.phase,
              hg_b_bin(b, HG_XOR, pos.phase, hg_b_select(b, wrap, i32(b, 1), i32(b, 0))));
}

void hg_pipe_skip(hg_builder_t *b, const hg_pipe_t *p, hg_pipe_pos_t pos, hg_val_t n) {
  hg_val_t tot = hg_b_bin(b, HG_ADD, pos.stage, n);
  hg_val_t S = i32(b, p->spec.stages);
  hg_b_assign(b, pos.phase,
              hg_b_bin(b, HG_XOR, pos.phase,
                       hg_b_bin(b, HG_AND, hg_b_bin(b, HG_DIV_U, tot, S), i32(b, 1))));
  hg_b_assign(b, pos.stage, hg_b_bin(b, HG_REM_U, tot, S));
}
