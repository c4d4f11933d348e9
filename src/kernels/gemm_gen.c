/* The GEMM generator: a warp-specialized, persistent TMA + wgmma kernel for sm_90a.
 *
 * Design (the CUTLASS sm90 warp-specialized design, derived here from hopgen's plans):
 *   - warpgroup 0 is the producer: one elected thread of its first warp walks the same
 *     tile sequence as the consumers and, per k-block, waits for a free stage (empty
 *     mbarrier), announces the stage's bytes (arrive.expect_tx on the full mbarrier) and
 *     issues the TMA boxes of A and B that the sm90 planner computed, multicasting the
 *     operand that CTAs of the cluster share;
 *   - warpgroups 1.. are consumers: per k-block they wait for a full stage, issue the
 *     wgmma instructions of the TiledMma with descriptors advanced per k-block and atom,
 *     keep one k-block of MMAs in flight (wait_group 1) and release the previous stage to
 *     every CTA that writes into it;
 *   - setmaxnreg moves registers from the producer to the consumers;
 *   - the grid is persistent: each cluster walks tiles t = cluster_id, + num_clusters, ...
 *     in a rasterized order that keeps concurrently running tiles close in L2;
 *   - the epilogue converts accumulators, writes 64-row sub-tiles into swizzled shared
 *     memory with stmatrix (16-bit outputs) and stores them with TMA (which clips the
 *     M/N edges), while the producer is already loading the next tile; when D cannot be
 *     addressed by TMA (leading dimension not a multiple of 16 bytes, unaligned base) the
 *     epilogue stores with predicated global stores instead;
 *   - cooperative: the consumer warpgroups split each tile along M; ping-pong: they take
 *     alternate tiles, so one's epilogue overlaps the other's main loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hopgen/kernels.h"
#include "kernels/kernels_internal.h"

/* Registers per thread after setmaxnreg (PTX ISA: 24..256, multiples of 8). The producer
 * keeps few; consumers get what the register file leaves: 40 x 128 + 232 x 256 = 64512. */
#define PRODUCER_REGS 40
#define CONSUMER_REGS_2WG 232
#define CONSUMER_REGS_1WG 240

/* Named barriers: 0 is bar.sync of the whole CTA; 1 + w belongs to consumer warpgroup w;
 * 3 + w tells ping-pong consumer w that the other has issued its previous main loop. */
#define BAR_CONSUMER_BASE 1
#define BAR_ORDER_BASE 3

typedef struct gemm_ctx {
  const hg_gemm_problem_t *p;
  const hg_gemm_config_t *c;
  hg_gemm_kernel_t *out;
  hg_builder_t *b;
  hg_tiled_mma_t tm; /* one consumer warpgroup's share (pingpong) or all consumers' tile */
  int consumers;     /* consumer warpgroups */
  int cs;            /* CTAs per cluster = cluster_m * cluster_n */
  int peers;         /* CTAs writing into a CTA's stage: cluster_m + cluster_n - 1 */
  uint32_t a_stage, b_stage, off_a, off_b, off_full, off_empty, off_epi, epi_bytes;
  int epi_rows, epi_n, epi_buffers;
  /* run-time values */
  hg_val_t tmap_a, tmap_b, tmap_d, d_ptr, c_ptr, M, N, K, batch, ldc, ldd, bsc, bsd;
  hg_val_t alpha, beta, scale_a, scale_b;
  hg_val_t tid, warp, lane, rank, rm, rn, cluster_id, num_clusters;
  hg_val_t tiles_m, tiles_n, tiles_per_batch, total_tiles, kblocks;
} gemm_ctx_t;

static hg_val_t i32(gemm_ctx_t *g, int32_t v) {
  return hg_b_i32(g->b, v);
}
static hg_val_t add(gemm_ctx_t *g, hg_val_t x, hg_val_t y) {
  return hg_b_bin(g->b, HG_ADD, x, y);
}
static hg_val_t mul(gemm_ctx_t *g, hg_val_t x, hg_val_t y) {
  return hg_b_bin(g->b, HG_MUL, x, y);
}
static hg_val_t addc(gemm_ctx_t *g, hg_val_t x, int32_t c) {
  return c ? add(g, x, i32(g, c)) : x;
}

/* ceil(x / d) for positive I32 x and constant d. */
static hg_val_t ceil_div(gemm_ctx_t *g, hg_val_t x, int d) {
  return hg_b_bin(g->b, HG_DIV_U, addc(g, x, d - 1), i32(g, d));
}

/* ------------------------------------------------------------------ tile scheduling */

/* Tile t of the persistent loop -> batch index and the CTA's tile origin (m0, n0). Tiles
 * are cluster tiles (cluster_m x cluster_n CTA tiles); consecutive t walk a band of
 * raster_group cluster tiles along one dimension before moving along the other, so the
 * ~SM-count tiles in flight share A rows and B columns in L2. */
static void emit_tile_coords(gemm_ctx_t *g, hg_val_t t, hg_val_t *bidx, hg_val_t *m0,
                             hg_val_t *n0) {
  hg_builder_t *b = g->b;
  const hg_gemm_config_t *c = g->c;
  *bidx = hg_b_bin(b, HG_DIV_U, t, g->tiles_per_batch);
  hg_val_t tt = hg_b_bin(b, HG_REM_U, t, g->tiles_per_batch);
  const bool along_m = c->raster == HG_RASTER_M;
  hg_val_t inner = along_m ? g->tiles_m : g->tiles_n; /* walked fastest */
  hg_val_t outer = along_m ? g->tiles_n : g->tiles_m; /* banded */
  hg_val_t grp = i32(g, c->raster_group > 0 ? c->raster_group : 1);
  hg_val_t band_tiles = mul(g, grp, inner);
  hg_val_t band = hg_b_bin(b, HG_DIV_U, tt, band_tiles);
  hg_val_t in_band = hg_b_bin(b, HG_REM_U, tt, band_tiles);
  hg_val_t band_start = mul(g, band, grp);
  hg_val_t band_w = hg_b_bin(b, HG_MIN_S, grp, hg_b_bin(b, HG_SUB, outer, band_start));
  hg_val_t o = add(g, band_start, hg_b_bin(b, HG_REM_U, in_band, band_w));
  hg_val_t i = hg_b_bin(b, HG_DIV_U, in_band, band_w);
  hg_val_t tm_ = along_m ? i : o, tn_ = along_m ? o : i;
  *m0 = mul(g, hg_b_mad(b, tm_, i32(g, c->cluster_m), g->rm), i32(g, c->tile_m));
  *n0 = mul(g, hg_b_mad(b, tn_, i32(g, c->cluster_n), g->rn), i32(g, c->tile_n));
}

/* ------------------------------------------------------------------ shared memory */

static hg_val_t stage_addr(gemm_ctx_t *g, uint32_t base, uint32_t stride, hg_val_t s) {
  return hg_b_mad(g->b, s, i32(g, (int32_t)stride), hg_b_smem_addr(g->b, base));
}
static hg_val_t full_bar(gemm_ctx_t *g, hg_val_t s) {
  return stage_addr(g, g->off_full, 8, s);
}
static hg_val_t empty_bar(gemm_ctx_t *g, hg_val_t s) {
  return stage_addr(g, g->off_empty, 8, s);
}

/* s, phase <- the next stage of the ring. */
static void advance_stage(gemm_ctx_t *g, hg_val_t s, hg_val_t phase) {
  hg_builder_t *b = g->b;
  hg_val_t s1 = addc(g, s, 1);
  hg_val_t wrap = hg_b_cmp(b, HG_EQ, s1, i32(g, g->c->stages));
  hg_b_assign(b, s, hg_b_select(b, wrap, i32(g, 0), s1));
  hg_b_assign(b, phase, hg_b_bin(b, HG_XOR, phase, hg_b_select(b, wrap, i32(g, 1), i32(g, 0))));
}

/* s, phase <- n stages further (n >= 0 at run time): a ping-pong consumer skipping the
 * other's tile keeps its ring position in step with the producer. */
static void skip_stages(gemm_ctx_t *g, hg_val_t s, hg_val_t phase, hg_val_t n) {
  hg_builder_t *b = g->b;
  hg_val_t tot = add(g, s, n);
  hg_val_t S = i32(g, g->c->stages);
  hg_b_assign(
      b, phase,
      hg_b_bin(b, HG_XOR, phase, hg_b_bin(b, HG_AND, hg_b_bin(b, HG_DIV_U, tot, S), i32(g, 1))));
  hg_b_assign(b, s, hg_b_bin(b, HG_REM_U, tot, S));
}

/* ------------------------------------------------------------------ producer */

/* Issue CTA slice `slice` of an operand's boxes into stage buffer dst, completing on bar;
 * origin is per tensor mode. */
static void issue_slice(gemm_ctx_t *g, const hg_tma_plan_t *pl, hg_val_t tmap, hg_val_t dst,
                        hg_val_t bar, const hg_val_t *origin, int slice, hg_val_t mask,
                        hg_val_t hint) {
  hg_builder_t *b = g->b;
  const int first = pl->cluster > 1 ? pl->cta_first_box[slice] : 0;
  const int count = pl->cluster > 1 ? pl->boxes_per_cta : pl->num_boxes;
  for (int i = first; i < first + count; i++) {
    hg_val_t crd[HG_TMA_MAX_RANK];
    for (int d = 0; d < pl->map.rank; d++)
      crd[d] = addc(g, origin[pl->tmap_mode[d]], pl->box[i].coord[d]);
    hg_val_t at = addc(g, dst, (int32_t)pl->box[i].smem_offset);
    hg_b_tma_load(b, tmap, at, bar, pl->map.rank, crd, mask, hint);
  }
}

/* The operand's share for this CTA: one branch per slice index (a cluster has at most 16
 * CTAs, so this stays small), each issuing its boxes with the group's multicast mask. */
static void issue_operand(gemm_ctx_t *g, const hg_tma_plan_t *pl, hg_val_t tmap, hg_val_t dst,
                          hg_val_t bar, const hg_val_t *origin, hg_val_t slice, int groups,
                          hg_val_t mask) {
  hg_builder_t *b = g->b;
  if (groups <= 1) {
    issue_slice(g, pl, tmap, dst, bar, origin, 0, HG_NONE, HG_NONE);
    return;
  }
  for (int j = 0; j < groups; j++) {
    hg_b_if(b, hg_b_cmp(b, HG_EQ, slice, i32(g, j)));
    issue_slice(g, pl, tmap, dst, bar, origin, j, mask, HG_NONE);
    hg_b_endif(b);
  }
}

static void emit_producer(gemm_ctx_t *g) {
  hg_builder_t *b = g->b;
  const hg_gemm_config_t *c = g->c;
  const hg_gemm_kernel_t *k = g->out;
  hg_b_comment(b, "producer: one elected thread issues TMA loads into the stage ring");
  hg_val_t s = hg_b_var(b, HG_T_I32, i32(g, 0)), phase = hg_b_var(b, HG_T_I32, i32(g, 0));
  /* Multicast masks over the 1-D cluster rank r = rm + rn * cluster_m: A is shared by the
   * CTAs of a row (same rm), B by the CTAs of a column (same rn). */
  int32_t a_pattern = 0;
  for (int j = 0; j < c->cluster_n; j++) a_pattern |= 1 << (j * c->cluster_m);
  hg_val_t a_mask = hg_b_bin(b, HG_SHL, i32(g, a_pattern), g->rm);
  hg_val_t b_mask =
      hg_b_bin(b, HG_SHL, i32(g, (1 << c->cluster_m) - 1), mul(g, g->rn, i32(g, c->cluster_m)));
  const int32_t stage_tx = (int32_t)(k->plan_a.expect_tx_bytes + k->plan_b.expect_tx_bytes);
  hg_val_t t = hg_b_for(b, g->cluster_id, g->total_tiles, g->num_clusters);
  {
    hg_val_t bidx, m0, n0;
    emit_tile_coords(g, t, &bidx, &m0, &n0);
    hg_val_t kb = hg_b_for(b, i32(g, 0), g->kblocks, i32(g, 1));
    {
      hg_val_t fb = full_bar(g, s);
      hg_b_mbar_wait(b, empty_bar(g, s), hg_b_bin(b, HG_XOR, phase, i32(g, 1)));
      hg_b_mbar_arrive_expect_tx(b, fb, i32(g, stage_tx));
      hg_val_t k0 = mul(g, kb, i32(g, c->tile_k));
      /* Tensor modes: A (M, K, batch) or (K, M, batch) stored M-major; B likewise. The
       * planner mapped them to tensor-map dimensions; origins are per tensor mode. */
      hg_val_t oa[3] = {m0, k0, bidx}, ob[3] = {n0, k0, bidx};
      issue_operand(g, &k->plan_a, g->tmap_a, stage_addr(g, g->off_a, g->a_stage, s), fb, oa, g->rn,
                    c->cluster_n, a_mask);
      issue_operand(g, &k->plan_b, g->tmap_b, stage_addr(g, g->off_b, g->b_stage, s), fb, ob, g->rm,
                    c->cluster_m, b_mask);
      advance_stage(g, s, phase);
    }
    hg_b_endfor(b);
  }
  hg_b_endfor(b);
}

/* ------------------------------------------------------------------ consumers */

/* bar.sync of consumer warpgroup wc alone (128 threads). Named barrier ids are
 * immediates here, so each consumer takes its own branch; the condition is uniform per
 * warpgroup. */
static void consumer_bar_sync(gemm_ctx_t *g, hg_val_t wc) {
  if (g->consumers == 1) {
    hg_b_bar_sync(g->b, BAR_CONSUMER_BASE, 128);
    return;
  }
  for (int w = 0; w < g->consumers; w++) {
    hg_b_if(g->b, hg_b_cmp(g->b, HG_EQ, wc, i32(g, w)));
    hg_b_bar_sync(g->b, BAR_CONSUMER_BASE + w, 128);
    hg_b_endif(g->b);
  }
}

/* Release stage s: lane i < peers of every consumer warp arrives on the empty barrier of
 * the i-th CTA that writes into this CTA's stage (the CTAs sharing its A row and its B
 * column, itself included), so each producer learns when all its receivers are done. */
static void release_stage(gemm_ctx_t *g, hg_val_t s) {
  hg_builder_t *b = g->b;
  const hg_gemm_config_t *c = g->c;
  hg_val_t bar = empty_bar(g, s);
  if (g->cs == 1) {
    hg_b_if(b, hg_b_cmp(b, HG_EQ, g->lane, i32(g, 0)));
    hg_b_mbar_arrive(b, bar);
    hg_b_endif(b);
    return;
  }
  hg_b_if(b, hg_b_cmp(b, HG_LT_U, g->lane, i32(g, g->peers)));
  {
    /* lane < cluster_n: the CTA (rm, lane); else the CTA (i, rn), i = lane - cluster_n
     * skipping rm (already counted). */
    hg_val_t row_peer = hg_b_mad(b, g->lane, i32(g, c->cluster_m), g->rm);
    hg_val_t i = hg_b_bin(b, HG_SUB, g->lane, i32(g, c->cluster_n));
    hg_val_t i2 = add(g, i, hg_b_select(b, hg_b_cmp(b, HG_GE_S, i, g->rm), i32(g, 1), i32(g, 0)));
    hg_val_t col_peer = hg_b_mad(b, g->rn, i32(g, c->cluster_m), i2);
    hg_val_t peer =
        hg_b_select(b, hg_b_cmp(b, HG_LT_U, g->lane, i32(g, c->cluster_n)), row_peer, col_peer);
    hg_b_mbar_arrive_cluster(b, bar, peer);
  }
  hg_b_endif(b);
}

/* desc(stage s) = desc of instruction (0,0) at address 0 with the stage's address in the
 * start-address field (bits 0-13 hold address >> 4). The field must be masked: in a cluster
 * launch the shared-memory window address of a CTA carries its rank in bits 24 and up
 * (sm_90a SASS: base = SR_CgaCtaId << 24 | offset), and address >> 4 would otherwise spill
 * rank bits into the leading-byte-offset field (bits 16-29) - harmless for swizzled K-major
 * operands, which ignore LBO, but it moved every MN-major operand block after the first in
 * the CTAs of rank >= 1 (seen on an H200). */
static hg_val_t stage_desc(gemm_ctx_t *g, const hg_gmma_operand_t *op, uint32_t base,
                           uint32_t stride, hg_val_t s) {
  uint64_t d0;
  hg_gmma_desc_fields_t f = op->desc;
  f.start_address = 0;
  hg_status_t st = hg_gmma_desc_encode(&f, &d0);
  if (!hg_is_ok(&st)) d0 = 0; /* cannot happen: the planner encoded the same fields */
  hg_val_t addr = stage_addr(g, base, stride, s);
  hg_val_t field = hg_b_zext(
      g->b, hg_b_bin(g->b, HG_AND, hg_b_bin(g->b, HG_SHR_U, addr, i32(g, 4)), i32(g, 0x3FFF)));
  return hg_b_bin(g->b, HG_OR, hg_b_i64(g->b, (int64_t)d0), field);
}

static hg_val_t desc_plus(gemm_ctx_t *g, hg_val_t d, uint32_t bytes) {
  return bytes ? hg_b_bin(g->b, HG_ADD, d, hg_b_i64(g->b, bytes >> 4)) : d;
}

/* The main loop of one tile: accumulate A(m0.., :) x B(n0.., :) into acc. wm is the
 * consumer's M slot within the tile (cooperative) or 0 (ping-pong). */
static void emit_mainloop(gemm_ctx_t *g, hg_val_t *acc, hg_val_t wm, hg_val_t s, hg_val_t phase) {
  hg_builder_t *b = g->b;
  const hg_tiled_mma_t *tm = &g->tm;
  const hg_wgmma_atom_t *at = &tm->atom;
  hg_wgmma_op_t op = {.n = at->n,
                      .a = at->a,
                      .b = at->b,
                      .acc = at->acc,
                      .a_regs = false,
                      .trans_a = at->trans_a,
                      .trans_b = at->trans_b};
  hg_val_t sd = hg_b_var(b, HG_T_PRED, hg_b_pred(b, false));
  hg_val_t prev = hg_b_var(b, HG_T_I32, i32(g, 0));
  /* A's MN atoms of this consumer: rows wm * atoms_m * 64 ...: the advance of its first
   * atom is a run-time choice between the planner's per-atom offsets. */
  hg_val_t a_wg_off = i32(g, 0);
  for (int w = 1; w < tm->wg_m; w++)
    a_wg_off =
        hg_b_select(b, hg_b_cmp(b, HG_EQ, wm, i32(g, w)),
                    i32(g, (int32_t)tm->a_op.mn_atom_offset_bytes[w * tm->atoms_m]), a_wg_off);
  hg_val_t true_ = hg_b_pred(b, true);
  hg_val_t kb = hg_b_for(b, i32(g, 0), g->kblocks, i32(g, 1));
  {
    hg_b_mbar_wait(b, full_bar(g, s), phase);
    hg_val_t da = stage_desc(g, &tm->a_op, g->off_a, g->a_stage, s);
    da = hg_b_bin(b, HG_ADD, da, hg_b_zext(b, hg_b_bin(b, HG_SHR_U, a_wg_off, i32(g, 4))));
    hg_val_t db = stage_desc(g, &tm->b_op, g->off_b, g->b_stage, s);
    hg_b_wgmma_fence(b);
    for (int kk = 0; kk < tm->atoms_k; kk++)
      for (int in = 0; in < tm->atoms_n; in++)
        for (int im = 0; im < tm->atoms_m; im++) {
          const int first = (im + tm->atoms_m * in) * at->acc_regs;
          hg_val_t a =
              desc_plus(g, da,
                        tm->a_op.mn_atom_offset_bytes[im] - tm->a_op.mn_atom_offset_bytes[0] +
                            tm->a_op.kblock_offset_bytes[kk]);
          hg_val_t bd = desc_plus(
              g, db, tm->b_op.mn_atom_offset_bytes[in] + tm->b_op.kblock_offset_bytes[kk]);
          hg_b_wgmma(b, &op, acc + first, &a, bd, kk == 0 ? sd : true_);
        }
    hg_b_wgmma_commit(b);
    hg_b_assign(b, sd, true_);
    /* Keep this k-block's MMAs in flight; the previous k-block's are done reading. */
    hg_b_wgmma_wait(b, 1);
    hg_b_if(b, hg_b_cmp(b, HG_GT_S, kb, i32(g, 0)));
    release_stage(g, prev);
    hg_b_endif(b);
    hg_b_assign(b, prev, s);
    advance_stage(g, s, phase);
  }
  hg_b_endfor(b);
  hg_b_wgmma_wait(b, 0);
  release_stage(g, prev);
}

/* Value index of the accumulator element at (dm, dn) relative to the thread's first one,
 * from the TiledMma's accumulator layout (-1 if none). */
typedef struct acc_map {
  int rows, cols; /* the consumer's accumulator region relative to its first element */
  int *v;         /* v[dm * cols + dn] */
} acc_map_t;

static hg_status_t build_acc_map(const hg_tiled_mma_t *tm, int consumer_rows, acc_map_t *am) {
  am->rows = consumer_rows;
  am->cols = tm->tile_n;
  am->v = malloc(sizeof(int) * (size_t)am->rows * (size_t)am->cols);
  if (!am->v) return hg_error(HG_ERR_NOMEM, "out of memory building the accumulator map");
  for (int i = 0; i < am->rows * am->cols; i++) am->v[i] = -1;
  for (int v = 0; v < tm->acc_values; v++) {
    int m, n;
    HG_TRY(hg_tiled_mma_acc_coord(tm, 0, v, &m, &n));
    if (m >= am->rows || n >= am->cols)
      return hg_error(HG_ERR_INVALID,
                      "accumulator value %d of thread 0 lies at (%d,%d), outside "
                      "the consumer's %dx%d region",
                      v, m, n, am->rows, am->cols);
    am->v[m * am->cols + n] = v;
  }
  return hg_ok();
}

static int acc_at(const acc_map_t *am, int dm, int dn) {
  if (dm < 0 || dn < 0 || dm >= am->rows || dn >= am->cols) return -1;
  return am->v[dm * am->cols + dn];
}

/* Visit the accumulator elements of a thread row by row: for each distinct row offset dm,
 * one row pointer base + (row0 + dm) * ld * e and a row predicate; each element then sits at
 * an immediate offset dn * e from it. Few live 64-bit values, so the epilogue stays within
 * the consumers' registers next to 128 accumulators. */
typedef void (*elem_fn)(gemm_ctx_t *g, hg_val_t *acc, int v, hg_val_t addr, void *arg);

static void for_each_elem(gemm_ctx_t *g, hg_val_t *acc, const acc_map_t *am, hg_val_t base,
                          hg_val_t ld, hg_val_t row0, hg_val_t col0, elem_fn fn, void *arg) {
  hg_builder_t *b = g->b;
  const int e = hg_dtype_bytes(g->p->d_type);
  hg_val_t thr = hg_b_bin(
      b, HG_ADD, base,
      hg_b_bin(b, HG_MUL, hg_b_mad(b, hg_b_sext(b, row0), ld, hg_b_sext(b, col0)), hg_b_i64(b, e)));
  hg_val_t row_bytes = hg_b_bin(b, HG_MUL, ld, hg_b_i64(b, e));
  for (int dm = 0; dm < am->rows; dm++) {
    bool any = false;
    for (int dn = 0; dn < am->cols && !any; dn++) any = acc_at(am, dm, dn) >= 0;
    if (!any) continue;
    hg_b_if(b, hg_b_cmp(b, HG_LT_S, addc(g, row0, dm), g->M));
    hg_val_t rowp = hg_b_mad(b, hg_b_i64(b, dm), row_bytes, thr);
    for (int dn = 0; dn < am->cols; dn++) {
      const int v = acc_at(am, dm, dn);
      if (v < 0) continue;
      hg_b_if(b, hg_b_cmp(b, HG_LT_S, addc(g, col0, dn), g->N));
      fn(g, acc, v, hg_b_bin(b, HG_ADD, rowp, hg_b_i64(b, (int64_t)dn * e)), arg);
      hg_b_endif(b);
    }
    hg_b_endif(b);
  }
}

static hg_val_t load_d_type(gemm_ctx_t *g, hg_val_t addr) {
  hg_val_t x;
  if (g->p->d_type == HG_F32) {
    hg_b_load(g->b, HG_GLOBAL, HG_T_F32, 0, 1, addr, &x);
    return x;
  }
  hg_b_load(g->b, HG_GLOBAL, HG_T_I32, 16, 1, addr, &x);
  return hg_b_unpack_f32(g->b, g->p->d_type, x);
}

/* acc += beta * C(element) (acc already scaled). */
static void add_beta_c(gemm_ctx_t *g, hg_val_t *acc, int v, hg_val_t addr, void *arg) {
  (void)arg;
  hg_b_assign(g->b, acc[v], hg_b_ffma(g->b, g->beta, load_d_type(g, addr), acc[v]));
}

static void store_elem(gemm_ctx_t *g, hg_val_t *acc, int v, hg_val_t addr, void *arg) {
  (void)arg;
  if (g->p->d_type == HG_F32) {
    hg_b_store(g->b, HG_GLOBAL, 0, 1, addr, &acc[v]);
  } else {
    hg_val_t pk = hg_b_pack_f32x2(g->b, g->p->d_type, acc[v], acc[v]);
    hg_b_store(g->b, HG_GLOBAL, 16, 1, addr, &pk);
  }
}

static hg_val_t batch_base(gemm_ctx_t *g, hg_val_t ptr, hg_val_t bidx, hg_val_t stride) {
  const int e = hg_dtype_bytes(g->p->d_type);
  return hg_b_bin(g->b, HG_ADD, ptr,
                  hg_b_bin(g->b, HG_MUL, hg_b_zext(g->b, bidx),
                           hg_b_bin(g->b, HG_MUL, stride, hg_b_i64(g->b, e))));
}

/* out = acc * scale (+ beta * C) in place; C is read only when beta != 0 (a uniform run-time
 * branch), element by element inside D's bounds. row0/col0: the thread's first element. */
static void emit_scale_and_c(gemm_ctx_t *g, hg_val_t *acc, int nacc, const acc_map_t *am,
                             hg_val_t row0, hg_val_t col0, hg_val_t bidx, hg_val_t scale) {
  hg_builder_t *b = g->b;
  for (int v = 0; v < nacc; v++) hg_b_assign(b, acc[v], hg_b_bin(b, HG_FMUL, acc[v], scale));
  hg_b_if(b, hg_b_cmp(b, HG_FEQ, g->beta, hg_b_f32(b, 0.0f)));
  hg_b_else(b);
  for_each_elem(g, acc, am, batch_base(g, g->c_ptr, bidx, g->bsc), g->ldc, row0, col0, add_beta_c,
                NULL);
  hg_b_endif(b);
}

/* Direct epilogue: every element stored with a bounds predicate (any ldd, any alignment). */
static void emit_store_direct(gemm_ctx_t *g, hg_val_t *acc, const acc_map_t *am, hg_val_t row0,
                              hg_val_t col0, hg_val_t bidx) {
  for_each_elem(g, acc, am, batch_base(g, g->d_ptr, bidx, g->bsd), g->ldd, row0, col0, store_elem,
                NULL);
}

/* TMA epilogue: for each 64-row x epi_n-column sub-tile of the consumer's region, write it
 * into one of two swizzled shared-memory buffers (stmatrix for 16-bit outputs, vector
 * stores for f32), fence the async proxy, and let the warpgroup's first thread store it
 * with TMA. A buffer is rewritten only after the store that read it has finished reading
 * (bulk wait_group.read 1 leaves just the other buffer's store in flight). */
static void emit_store_tma(gemm_ctx_t *g, hg_val_t *acc, const acc_map_t *am, hg_val_t wc,
                           hg_val_t wg_tid, hg_val_t warp_in_wg, hg_val_t m_base, hg_val_t n0,
                           hg_val_t bidx) {
  hg_builder_t *b = g->b;
  const hg_tma_plan_t *pd = &g->out->plan_d;
  const int e = hg_dtype_bytes(g->p->d_type);
  const int epi_n = g->epi_n;
  hg_val_t is_first = hg_b_cmp(b, HG_EQ, wg_tid, i32(g, 0));
  hg_val_t buf_sel = hg_b_var(b, HG_T_I32, i32(g, 0));
  /* This warpgroup's pair of buffers. */
  hg_val_t my_bufs = hg_b_mad(b, wc, i32(g, (int32_t)(g->epi_bytes * g->epi_buffers)),
                              hg_b_smem_addr(b, g->off_epi));
  hg_val_t lane = g->lane;
  const int sub_rows = 64;
  for (int im = 0; im < am->rows / sub_rows; im++)
    for (int j = 0; j < am->cols / epi_n; j++) {
      hg_val_t buf = hg_b_mad(b, buf_sel, i32(g, (int32_t)g->epi_bytes), my_bufs);
      /* The buffer is free once at most one store (the other buffer's) is still reading. */
      hg_b_if(b, is_first);
      hg_b_bulk_wait(b, g->epi_buffers - 1, true);
      hg_b_endif(b);
      consumer_bar_sync(g, wc);
      if (e == 2) {
        /* stmatrix x4: 16 rows x 16 columns per warp; lane l addresses row l % 8 of
         * matrix l / 8, matrices ordered (rows 0-7, cols 0-7), (rows 8-15, cols 0-7),
         * (rows 0-7, cols 8-15), (rows 8-15, cols 8-15) - the accumulator fragment's order. */
        hg_val_t q = hg_b_bin(b, HG_SHR_U, lane, i32(g, 3));
        hg_val_t row = add(g, hg_b_bin(b, HG_SHL, warp_in_wg, i32(g, 4)),
                           add(g, hg_b_bin(b, HG_SHL, hg_b_bin(b, HG_AND, q, i32(g, 1)), i32(g, 3)),
                               hg_b_bin(b, HG_AND, lane, i32(g, 7))));
        hg_val_t colq = hg_b_bin(b, HG_SHL, hg_b_bin(b, HG_SHR_U, q, i32(g, 1)), i32(g, 3));
        for (int cg = 0; cg < epi_n; cg += 16) {
          hg_val_t regs[4];
          for (int mtx = 0; mtx < 4; mtx++) {
            const int dm = im * sub_rows + (mtx & 1) * 8, dn = j * epi_n + cg + (mtx >> 1) * 8;
            const int v0 = acc_at(am, dm, dn), v1 = acc_at(am, dm, dn + 1);
            regs[mtx] =
                hg_b_pack_f32x2(b, g->p->d_type, acc[v0 < 0 ? 0 : v0], acc[v1 < 0 ? 0 : v1]);
          }
          hg_val_t col = addc(g, colq, cg);
          hg_val_t off = hg_b_mad(b, row, i32(g, epi_n * e), hg_b_bin(b, HG_SHL, col, i32(g, 1)));
          off = hg_kernels_swizzle_bytes(g->b, pd->smem.sw, e, off);
          hg_b_stmatrix(b, 4, false, add(g, buf, off), regs);
        }
      } else {
        /* f32: each thread stores its pairs (row, 2q..2q+1) as 8-byte vectors. */
        hg_val_t row_t = add(g, hg_b_bin(b, HG_SHL, warp_in_wg, i32(g, 4)),
                             hg_b_bin(b, HG_SHR_U, lane, i32(g, 2)));
        hg_val_t col_t = hg_b_bin(b, HG_SHL, hg_b_bin(b, HG_AND, lane, i32(g, 3)), i32(g, 1));
        for (int dm = 0; dm < sub_rows; dm += 8)
          for (int dn = 0; dn < epi_n; dn += 8) {
            const int v0 = acc_at(am, im * sub_rows + dm, j * epi_n + dn);
            const int v1 = acc_at(am, im * sub_rows + dm, j * epi_n + dn + 1);
            if (v0 < 0 || v1 < 0) continue;
            hg_val_t off = hg_b_mad(b, addc(g, row_t, dm), i32(g, epi_n * e),
                                    hg_b_bin(b, HG_SHL, addc(g, col_t, dn), i32(g, 2)));
            off = hg_kernels_swizzle_bytes(g->b, pd->smem.sw, e, off);
            hg_val_t pair[2] = {acc[v0], acc[v1]};
            hg_b_store(b, HG_SHARED, 0, 2, add(g, buf, off), pair);
          }
      }
      hg_b_fence_proxy_async(b);
      consumer_bar_sync(g, wc);
      hg_b_if(b, is_first);
      {
        hg_val_t crd_mode[3] = {addc(g, m_base, im * sub_rows), addc(g, n0, j * epi_n), bidx};
        for (int i = 0; i < pd->num_boxes; i++) {
          hg_val_t crd[HG_TMA_MAX_RANK];
          for (int d = 0; d < pd->map.rank; d++)
            crd[d] = addc(g, crd_mode[pd->tmap_mode[d]], pd->box[i].coord[d]);
          hg_b_tma_store(b, g->tmap_d, addc(g, buf, (int32_t)pd->box[i].smem_offset), pd->map.rank,
                         crd);
        }
        hg_b_bulk_commit(b);
      }
      hg_b_endif(b);
      hg_b_assign(b, buf_sel, hg_b_bin(b, HG_XOR, buf_sel, i32(g, g->epi_buffers > 1 ? 1 : 0)));
    }
}

static hg_status_t emit_consumer(gemm_ctx_t *g) {
  hg_builder_t *b = g->b;
  const hg_gemm_config_t *c = g->c;
  const hg_tiled_mma_t *tm = &g->tm;
  const bool pingpong = c->schedule == HG_SCHED_PINGPONG;
  hg_b_comment(b, "consumers: wgmma main loop and epilogue");
  hg_val_t wc = addc(g, hg_b_bin(b, HG_SHR_U, g->tid, i32(g, 7)), -1); /* consumer index */
  hg_val_t wg_tid = hg_b_bin(b, HG_AND, g->tid, i32(g, 127));
  hg_val_t warp_in_wg = hg_b_bin(b, HG_AND, g->warp, i32(g, 3));
  const int nacc = tm->atoms_m * tm->atoms_n * tm->atom.acc_regs;
  hg_val_t *acc = malloc(sizeof(hg_val_t) * (size_t)nacc);
  if (!acc) return hg_error(HG_ERR_NOMEM, "out of memory for %d accumulators", nacc);
  for (int i = 0; i < nacc; i++) acc[i] = hg_b_var(b, HG_T_F32, HG_NONE);
  /* Rows this consumer owns inside the tile, and its thread's first element there. */
  const int consumer_rows = pingpong ? c->tile_m : c->tile_m / g->consumers;
  acc_map_t am;
  hg_status_t st = build_acc_map(tm, consumer_rows, &am);
  if (!hg_is_ok(&st)) {
    free(acc);
    free(am.v);
    return st;
  }
  hg_val_t wm = pingpong ? i32(g, 0) : wc;
  /* The thread's first accumulator element: the thread part of the TiledMma's layout,
   * evaluated for this thread's index within its consumer slot. */
  hg_layout_t thr_mode;
  st = hg_layout_mode(&tm->acc_tv, 0, &thr_mode);
  hg_val_t first_idx = HG_NONE;
  if (hg_is_ok(&st)) {
    hg_val_t t_in_mma = pingpong ? wg_tid : add(g, mul(g, wc, i32(g, 128)), wg_tid);
    st = hg_kernels_layout_eval(g->b, &thr_mode, t_in_mma, &first_idx);
  }
  if (!hg_is_ok(&st)) {
    free(acc);
    free(am.v);
    return st;
  }
  hg_val_t t_row = hg_b_bin(b, HG_REM_U, first_idx, i32(g, tm->tile_m));
  hg_val_t t_col = hg_b_bin(b, HG_DIV_U, first_idx, i32(g, tm->tile_m));
  /* The thread's row relative to its consumer's 64-row sub-tiles is t_row - slot start. */
  hg_val_t slot_row0 = mul(g, wm, i32(g, consumer_rows));

  hg_val_t scale = g->alpha;
  if (!hg_val_is_none(g->scale_a)) {
    /* fp8: D = alpha * scale_a * scale_b * (A x B) + beta * C; a null pointer means 1. */
    for (int i = 0; i < 2; i++) {
      hg_val_t ptr = i == 0 ? g->scale_a : g->scale_b;
      hg_val_t sv = hg_b_var(b, HG_T_F32, hg_b_f32(b, 1.0f));
      hg_b_if(b, hg_b_cmp(b, HG_NE, ptr, hg_b_i64(b, 0)));
      hg_val_t x;
      hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 1, ptr, &x);
      hg_b_assign(b, sv, x);
      hg_b_endif(b);
      scale = hg_b_bin(b, HG_FMUL, scale, sv);
    }
  }

  hg_val_t s = hg_b_var(b, HG_T_I32, i32(g, 0)), phase = hg_b_var(b, HG_T_I32, i32(g, 0));
  hg_val_t iter = hg_b_var(b, HG_T_I32, i32(g, 0));
  hg_val_t t = hg_b_for(b, g->cluster_id, g->total_tiles, g->num_clusters);
  {
    hg_val_t mine = hg_b_pred(b, true);
    if (pingpong) {
      /* Tiles alternate between the two consumers; the other's tile only moves the ring. */
      mine = hg_b_cmp(b, HG_EQ, hg_b_bin(b, HG_AND, iter, i32(g, 1)), wc);
      hg_b_if(b, hg_b_not(b, mine));
      skip_stages(g, s, phase, g->kblocks);
      hg_b_endif(b);
    }
    hg_b_if(b, mine);
    {
      hg_val_t bidx, m0, n0;
      emit_tile_coords(g, t, &bidx, &m0, &n0);
      if (pingpong) {
        /* An mbarrier wait only sees the parity of a phase. The consumer that skipped the
         * other's tile would otherwise wait on stage phases a whole tile ahead and be
         * released by an earlier phase of the same parity; it starts its main loop only
         * once the other has issued the previous tile's (named barrier, both warpgroups). */
        hg_b_if(b, hg_b_cmp(b, HG_GT_S, iter, i32(g, 0)));
        for (int w = 0; w < 2; w++) {
          hg_b_if(b, hg_b_cmp(b, HG_EQ, wc, i32(g, w)));
          hg_b_bar_sync(b, BAR_ORDER_BASE + w, 256);
          hg_b_endif(b);
        }
        hg_b_endif(b);
      }
      emit_mainloop(g, acc, wm, s, phase);
      if (pingpong) {
        /* Let the other consumer start its tile, if the loop gives it one. */
        hg_b_if(b, hg_b_cmp(b, HG_LT_S, add(g, t, g->num_clusters), g->total_tiles));
        for (int w = 0; w < 2; w++) {
          hg_b_if(b, hg_b_cmp(b, HG_EQ, wc, i32(g, w)));
          hg_b_bar_arrive(b, BAR_ORDER_BASE + 1 - w, 256);
          hg_b_endif(b);
        }
        hg_b_endif(b);
      }
      hg_val_t m_base = add(g, m0, slot_row0);
      hg_val_t row0 = add(g, m0, t_row), col0 = add(g, n0, t_col);
      emit_scale_and_c(g, acc, nacc, &am, row0, col0, bidx, scale);
      if (g->out->tma_store)
        emit_store_tma(g, acc, &am, wc, wg_tid, warp_in_wg, m_base, n0, bidx);
      else
        emit_store_direct(g, acc, &am, row0, col0, bidx);
    }
    hg_b_endif(b);
    hg_b_assign(b, iter, addc(g, iter, 1));
  }
  hg_b_endfor(b);
  if (g->out->tma_store) {
    /* Shared memory must outlive the stores that read it. */
    hg_b_if(b, hg_b_cmp(b, HG_EQ, wg_tid, i32(g, 0)));
    hg_b_bulk_wait(b, 0, false);
    hg_b_endif(b);
  }
  free(acc);
  free(am.v);
  return hg_ok();
}

/* ------------------------------------------------------------------ the kernel */

/* A's descriptor advance for warpgroup slot w and atom im is taken as the slot's first atom
 * plus the atom's offset within a slot: true when the planner's per-atom offsets are
 * affine, which the canonical stage buffers are. Refuse anything else rather than guess. */
static hg_status_t check_affine_atoms(const hg_tiled_mma_t *tm) {
  const uint32_t *o = tm->a_op.mn_atom_offset_bytes;
  for (int w = 0; w < tm->wg_m; w++)
    for (int im = 0; im < tm->atoms_m; im++)
      if (o[w * tm->atoms_m + im] != o[w * tm->atoms_m] + o[im] - o[0])
        return hg_error(HG_ERR_UNSUPPORTED,
                        "A's M atoms are not evenly spaced in shared memory (atom %d at %u B): "
                        "the generator advances descriptors by a per-warpgroup offset",
                        w * tm->atoms_m + im, o[w * tm->atoms_m + im]);
  return hg_ok();
}

/* The operand tensors as TMA sees them, modes (MN, K, batch). A batch of one still gets a
 * third mode (TMA then reads only index 0) whose stride must be TMA-legal. */
static void operand_tensor(hg_dtype_t t, bool k_major, int64_t mn, int64_t k, int64_t ld, int batch,
                           int64_t batch_stride, hg_tma_tensor_t *out) {
  memset(out, 0, sizeof *out);
  out->dtype = t;
  out->rank = 3;
  out->shape[0] = mn;
  out->shape[1] = k;
  out->shape[2] = batch;
  out->stride[0] = k_major ? ld : 1;
  out->stride[1] = k_major ? 1 : ld;
  const int64_t q = 16 / hg_dtype_bytes(t);
  out->stride[2] = batch > 1 ? batch_stride : ((ld * (k_major ? mn : k) + q - 1) / q) * q;
  out->base_align_bytes = 16;
}

/* The composed layout `l` with a third mode of one element, for the (MN, K, batch) tensor. */
static hg_status_t with_batch_mode(const hg_composed_t *l, hg_composed_t *out) {
  *out = *l;
  hg_layout_t one = hg_layout_1d(1, 0);
  return hg_layout_append(&l->layout, &one, &out->layout);
}

/* The epilogue's shared-memory sub-tile: 64 rows x epi_n columns of D, row-major, rows of
 * the swizzle span so that stmatrix's eight rows land in eight different 16-byte chunks. */
static hg_status_t epilogue_layout(int esize, int epi_n, hg_composed_t *out) {
  const int row_bytes = epi_n * esize;
  const int b = row_bytes == 128 ? 3 : row_bytes == 64 ? 2 : row_bytes == 32 ? 1 : 0;
  int lg = 0;
  while ((1 << lg) < esize) lg++;
  hg_swizzle_t sw;
  HG_TRY(hg_swizzle_make(b, 4 - lg, 3, &sw));
  const int64_t sh[3] = {64, epi_n, 1}, st[3] = {epi_n, 1, 0};
  hg_tuple_t shape, stride;
  HG_TRY(hg_tuple_ints(&shape, 3, sh));
  HG_TRY(hg_tuple_ints(&stride, 3, st));
  out->sw = sw;
  out->offset = 0;
  return hg_make_layout(&shape, &stride, &out->layout);
}

static uint32_t align_up(uint32_t x, uint32_t a) {
  return (x + a - 1) / a * a;
}

hg_status_t hg_gemm_generate(const hg_gemm_problem_t *p_in, const hg_gemm_config_t *c,
                             hg_backend_t be, hg_gemm_kernel_t *out) {
  const double t0 = hg_now_ms();
  memset(out, 0, sizeof *out);
  hg_gemm_problem_t p = *p_in;
  HG_TRY(hg_gemm_problem_normalize(&p));
  HG_TRY(hg_gemm_config_check(&p, c));
  out->problem = p;
  out->config = *c;
  gemm_ctx_t g;
  memset(&g, 0, sizeof g);
  g.p = &out->problem;
  g.c = &out->config;
  g.out = out;
  const bool pingpong = c->schedule == HG_SCHED_PINGPONG;
  g.consumers = pingpong ? 2 : (c->tile_m >= 128 ? 2 : 1);
  g.cs = c->cluster_m * c->cluster_n;
  g.peers = c->cluster_m + c->cluster_n - 1;

  hg_tiled_mma_spec_t ms = {.a = p.a_type,
                            .b = p.b_type,
                            .acc = HG_F32,
                            .tile_m = c->tile_m,
                            .tile_n = c->tile_n,
                            .tile_k = c->tile_k,
                            .wg_m = pingpong ? 1 : g.consumers,
                            .wg_n = 1,
                            .a_major = p.a_k_major ? HG_MAJOR_K : HG_MAJOR_MN,
                            .b_major = p.b_k_major ? HG_MAJOR_K : HG_MAJOR_MN,
                            .auto_swizzle = true};
  HG_TRY(hg_status_wrap(hg_tiled_mma_make(&ms, &g.tm), "GEMM tile %dx%dx%d: ", c->tile_m, c->tile_n,
                        c->tile_k));
  HG_TRY(check_affine_atoms(&g.tm));

  /* TMA plans for one stage of A and B, multicast across the CTAs that share them. */
  hg_tma_tensor_t ta, tb, td;
  operand_tensor(p.a_type, p.a_k_major, p.m, p.k, p.lda, p.batch, p.batch_stride_a, &ta);
  operand_tensor(p.b_type, p.b_k_major, p.n, p.k, p.ldb, p.batch, p.batch_stride_b, &tb);
  hg_composed_t sa, sb;
  HG_TRY(with_batch_mode(&g.tm.a_op.layout, &sa));
  HG_TRY(with_batch_mode(&g.tm.b_op.layout, &sb));
  hg_tma_options_t oa = hg_tma_options_default(HG_TMA_LOAD);
  oa.cluster = c->cluster_n;
  hg_tma_options_t ob = hg_tma_options_default(HG_TMA_LOAD);
  ob.cluster = c->cluster_m;
  HG_TRY(hg_status_wrap(hg_tma_plan_make(&ta, &sa, &oa, &out->plan_a), "loading A: "));
  HG_TRY(hg_status_wrap(hg_tma_plan_make(&tb, &sb, &ob, &out->plan_b), "loading B: "));

  /* The epilogue goes through TMA when D allows it (leading dimension and batch stride
   * multiples of 16 bytes, 16-byte aligned base) and the tile splits into sub-tiles. */
  const int ed = hg_dtype_bytes(p.d_type);
  g.epi_n = hg_gemm_epi_n(&p, c);
  /* and rows of N ending on a 16-byte boundary: a TMA store clips dimension 0 at 16-byte
   * granularity, so a tile past N would also write D's row padding up to the boundary (seen
   * on an H200; docs/hardware-notes.md). */
  const bool d_ok = !p.d_no_tma && (p.ldd * ed) % 16 == 0 && (p.n * ed) % 16 == 0 &&
                    (p.batch == 1 || (p.batch_stride_d * ed) % 16 == 0);
  out->tma_store = d_ok && g.epi_n > 0;
  if (out->tma_store) {
    memset(&td, 0, sizeof td);
    td.dtype = p.d_type;
    td.rank = 3;
    td.shape[0] = p.m;
    td.shape[1] = p.n;
    td.shape[2] = p.batch;
    td.stride[0] = p.ldd;
    td.stride[1] = 1;
    const int64_t q = 16 / ed;
    td.stride[2] = p.batch > 1 ? p.batch_stride_d : ((p.ldd * p.m + q - 1) / q) * q;
    td.base_align_bytes = 16;
    hg_composed_t se;
    HG_TRY(epilogue_layout(ed, g.epi_n, &se));
    hg_tma_options_t od = hg_tma_options_default(HG_TMA_STORE);
    HG_TRY(hg_status_wrap(hg_tma_plan_make(&td, &se, &od, &out->plan_d), "storing D: "));
    g.epi_rows = 64;
    g.epi_buffers = hg_gemm_epi_buffers(&p, c);
    g.epi_bytes = align_up(out->plan_d.smem_bytes, 1024);
  }

  /* Shared memory: the stage ring of A and B, the barriers, the epilogue buffers. */
  hg_builder_t *b;
  char name[64];
  snprintf(name, sizeof name, "hg_gemm_%s%s_%s_%c%c_%dx%dx%d_c%dx%d_s%d_%s",
           hg_dtype_name(p.a_type), p.a_type == p.b_type ? "" : hg_dtype_name(p.b_type),
           hg_dtype_name(p.d_type), p.a_k_major ? 't' : 'n', p.b_k_major ? 'n' : 't', c->tile_m,
           c->tile_n, c->tile_k, c->cluster_m, c->cluster_n, c->stages, pingpong ? "pp" : "coop");
  HG_TRY(hg_builder_create(name, &b));
  g.b = b;
  snprintf(out->k.name, sizeof out->k.name, "%s", name);
  const int threads = 128 * (1 + g.consumers);
  out->k.threads = (uint32_t)threads;
  out->k.cluster[0] = (uint32_t)g.cs;
  out->k.cluster[1] = out->k.cluster[2] = 1;
  hg_b_set_threads(b, threads);
  hg_b_set_min_ctas(b, 1);
  if (g.cs > 1) hg_b_set_cluster(b, g.cs, 1, 1);

  g.a_stage = align_up(out->plan_a.smem_bytes, out->plan_a.smem_align_bytes);
  g.b_stage = align_up(out->plan_b.smem_bytes, out->plan_b.smem_align_bytes);
  g.off_a = hg_b_smem_reserve(b, g.a_stage * (uint32_t)c->stages, out->plan_a.smem_align_bytes);
  g.off_b = hg_b_smem_reserve(b, g.b_stage * (uint32_t)c->stages, out->plan_b.smem_align_bytes);
  g.off_full = hg_b_smem_reserve(b, 8u * (uint32_t)c->stages, 8);
  g.off_empty = hg_b_smem_reserve(b, 8u * (uint32_t)c->stages, 8);
  if (out->tma_store)
    g.off_epi = hg_b_smem_reserve(b, g.epi_bytes * (uint32_t)(g.epi_buffers * g.consumers), 1024);

  /* Parameters, in the order hg_gemm_run passes them. */
  g.tmap_a = hg_b_param_tmap(b, "tmap_a");
  g.tmap_b = hg_b_param_tmap(b, "tmap_b");
  if (out->tma_store) g.tmap_d = hg_b_param_tmap(b, "tmap_d");
  g.d_ptr = hg_b_param(b, HG_T_I64, "d");
  g.c_ptr = hg_b_param(b, HG_T_I64, "c");
  g.M = hg_b_param(b, HG_T_I32, "m");
  g.N = hg_b_param(b, HG_T_I32, "n");
  g.K = hg_b_param(b, HG_T_I32, "k");
  g.batch = hg_b_param(b, HG_T_I32, "batch");
  g.ldc = hg_b_param(b, HG_T_I64, "ldc");
  g.ldd = hg_b_param(b, HG_T_I64, "ldd");
  g.bsc = hg_b_param(b, HG_T_I64, "batch_stride_c");
  g.bsd = hg_b_param(b, HG_T_I64, "batch_stride_d");
  g.alpha = hg_b_param(b, HG_T_F32, "alpha");
  g.beta = hg_b_param(b, HG_T_F32, "beta");
  const bool fp8 = hg_dtype_bits(p.a_type) == 8;
  if (fp8) {
    g.scale_a = hg_b_param(b, HG_T_I64, "scale_a");
    g.scale_b = hg_b_param(b, HG_T_I64, "scale_b");
  }

  /* Who am I: thread, warp, lane; CTA rank in the 1-D cluster and its (rm, rn). */
  g.tid = hg_b_sreg(b, HG_TID_X);
  g.warp = hg_b_bin(b, HG_SHR_U, g.tid, i32(&g, 5));
  g.lane = hg_b_sreg(b, HG_LANEID);
  if (g.cs > 1) {
    g.rank = hg_b_sreg(b, HG_CLUSTER_CTARANK);
    g.rm = hg_b_bin(b, HG_REM_U, g.rank, i32(&g, c->cluster_m));
    g.rn = hg_b_bin(b, HG_DIV_U, g.rank, i32(&g, c->cluster_m));
    g.cluster_id = hg_b_bin(b, HG_DIV_U, hg_b_sreg(b, HG_CTAID_X), i32(&g, g.cs));
    g.num_clusters = hg_b_bin(b, HG_DIV_U, hg_b_sreg(b, HG_NCTAID_X), i32(&g, g.cs));
  } else {
    g.rank = g.rm = g.rn = i32(&g, 0);
    g.cluster_id = hg_b_sreg(b, HG_CTAID_X);
    g.num_clusters = hg_b_sreg(b, HG_NCTAID_X);
  }
  g.tiles_m = ceil_div(&g, g.M, c->tile_m * c->cluster_m);
  g.tiles_n = ceil_div(&g, g.N, c->tile_n * c->cluster_n);
  g.tiles_per_batch = mul(&g, g.tiles_m, g.tiles_n);
  g.total_tiles = mul(&g, g.tiles_per_batch, g.batch);
  g.kblocks = ceil_div(&g, g.K, c->tile_k);

  /* Barriers: full[s] completes on the producer's arrive plus the stage's bytes; empty[s]
   * on one arrival per consumer warp of every CTA that receives this CTA's multicasts. */
  const int consumer_warps = 4 * (pingpong ? 1 : g.consumers);
  hg_b_if(b, hg_b_cmp(b, HG_EQ, g.tid, i32(&g, 0)));
  {
    hg_b_tmap_prefetch(b, g.tmap_a);
    hg_b_tmap_prefetch(b, g.tmap_b);
    if (out->tma_store) hg_b_tmap_prefetch(b, g.tmap_d);
    for (int s = 0; s < c->stages; s++) {
      hg_b_mbar_init(b, hg_b_smem_addr(b, g.off_full + 8u * (uint32_t)s), i32(&g, 1));
      hg_b_mbar_init(b, hg_b_smem_addr(b, g.off_empty + 8u * (uint32_t)s),
                     i32(&g, consumer_warps * g.peers));
    }
    if (g.cs > 1) hg_b_fence_mbarrier_init(b);
    hg_b_fence_proxy_async(b);
  }
  hg_b_endif(b);
  if (g.cs > 1) {
    /* Every CTA's barriers must be initialised before any peer multicasts into it. */
    hg_b_cluster_arrive(b, false);
    hg_b_cluster_wait(b);
  } else {
    hg_b_bar_sync(b, 0, 0);
  }

  hg_status_t st = hg_ok();
  hg_b_if(b, hg_b_cmp(b, HG_LT_U, g.tid, i32(&g, 128)));
  {
    hg_b_setmaxnreg(b, false, PRODUCER_REGS);
    hg_b_if(b, hg_b_cmp(b, HG_EQ, g.warp, i32(&g, 0)));
    hg_b_if(b, hg_b_elect_sync(b));
    emit_producer(&g);
    hg_b_endif(b);
    hg_b_endif(b);
  }
  hg_b_else(b);
  {
    hg_b_setmaxnreg(b, true, g.consumers == 1 ? CONSUMER_REGS_1WG : CONSUMER_REGS_2WG);
    st = emit_consumer(&g);
  }
  hg_b_endif(b);
  if (g.cs > 1) {
    /* No CTA may leave while a peer can still multicast into it or arrive on its barriers. */
    hg_b_cluster_arrive(b, false);
    hg_b_cluster_wait(b);
  }
  if (hg_is_ok(&st)) {
    out->k.gen_ms = 0;
    st = hg_kernel_finish(b, be, &out->k);
  }
  hg_builder_destroy(b);
  if (!hg_is_ok(&st)) {
    hg_kernel_free(&out->k);
    return st;
  }
  out->k.gen_ms = hg_now_ms() - t0;
  return hg_ok();
}

void hg_gemm_kernel_free(hg_gemm_kernel_t *k) {
  if (k) hg_kernel_free(&k->k);
}
