/* The GEMM generator: a warp-specialized, persistent kernel for sm_90a composed from the
 * builders (builders.h) over the plan gemm_plan.c computed.
 *
 *   - warpgroup 0 is the producer: it walks the same tile sequence as the consumers and,
 *     per k-block, acquires a free stage, fills it (TMA boxes issued by one elected thread,
 *     multicasting the operand CTAs of the cluster share; or cp.async chunks from all 128
 *     threads for operands TMA cannot address) and commits it to the full barrier;
 *   - warpgroups 1.. are consumers: the main loop over the stage ring (wgmma SS, wgmma RS
 *     with A through ldmatrix, or mma.sync), then the epilogue (alpha and scales, beta * C,
 *     then TMA stores through stmatrix and swizzled shared memory, or direct stores);
 *   - setmaxnreg moves registers from the producer to the consumers;
 *   - the grid is persistent (hg_sched_*), tiles rasterized for L2;
 *   - cooperative: the consumers split each tile along M; ping-pong: they take alternate
 *     tiles, so one's epilogue overlaps the other's main loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hopgen/dlayout.h"
#include "hopgen/kernels.h"
#include "kernels/gemm_internal.h"

/* Registers per thread after setmaxnreg (PTX ISA: 24..256, multiples of 8): the producer
 * keeps few, consumers get what the register file leaves (40 x 128 + 232 x 256 = 64512).
 * cp.async producers compute an address for every chunk, and LLVM (the MLIR backend) hoists
 * them: they keep more (56 x 128 + 224 x 256 = 64512; with one consumer 112 + 240). */
#define PRODUCER_REGS 40
#define CONSUMER_REGS_2WG 232
#define CONSUMER_REGS_1WG 240
#define PRODUCER_REGS_CPASYNC_2WG 56
#define CONSUMER_REGS_CPASYNC_2WG 224
#define PRODUCER_REGS_CPASYNC_1WG 112

typedef struct gemm_gen {
  hg_builder_t *b;
  const hg_gemm_kernel_t *k;
  const gemm_plan_t *g;
  hg_roles_t roles;
  hg_cluster2d_t cl;
  hg_smem_ring_t ring_a, ring_b;
  hg_pipe_t pipe;
  hg_sched_t sched;
  hg_splitk_t splitk; /* when config.splits > 1 */
  bool reduce;        /* building split-K's reduction pass, not the GEMM */
  hg_epilogue_t epi;
  /* grouped with a TMA epilogue: the same chain storing element by element, for the tiles
   * that end past their group's rows */
  hg_epilogue_t epi_direct;
  /* run-time values */
  hg_val_t tmap_a, tmap_b, a_ptr, b_ptr, lda, ldb, bsa, bsb, M, N, K, batch, scale;
  /* grouped: the groups' device array, fp8's per-group B scales (I64, 0: all 1) and the
   * epilogue's scale step pointing at the unit's group's (a variable set per unit) */
  hg_val_t groups, scale_b, scale_b_at;
  /* grouped row-wise scales: the parameters and the steps' per-unit pointers (the group's
   * row of column scales; a masked group's batch of row scales) */
  hg_val_t vec[2], vec_at[2];
  /* fp8 block scaling: A's scale pointer and both scale leading dimensions */
  hg_val_t scale_a, scale_lda, scale_ldb;
} gemm_gen_t;

static bool grouped(const gemm_gen_t *x) {
  return x->k->problem.group != HG_GROUP_NONE;
}

/* The batch coordinate of A and D for a unit: a contiguous grouped GEMM's A and D are one
 * matrix (its rows are the groups'); everywhere else the unit's batch (a masked group's). */
static hg_val_t ad_batch(gemm_gen_t *x, const hg_sched_work_t *w) {
  return x->k->problem.group == HG_GROUP_CONTIGUOUS ? hg_b_i32(x->b, 0) : w->batch;
}

/* fp8 block scaling in the main loop: the unit's origin and first k-block, and the thread's
 * first row within the tile (its consumer's slot, then wgmma's fragment: warp w's 16 rows,
 * lane / 4 within them). */
typedef struct block_scales {
  gemm_gen_t *x;
  hg_val_t m0, n0, k_first, row0;
  int atoms_m;
} block_scales_t;

/* The k-block's factors sa(row, kb) sb(n0 / 128, kb) for the thread's rows (mma.c's order:
 * f[2 im + half], row = row0 + 64 im + 8 half). Rows past M read row M - 1 (their results
 * are never stored), so the loads need no branch and stay in flight across the stage wait
 * and the MMAs (hg_mainloop_t.kblock_scales is called first in the k-block). */
static void load_block_scales(hg_builder_t *b, void *v, hg_val_t kb, hg_val_t *f) {
  const block_scales_t *s = v;
  const gemm_gen_t *x = s->x;
  hg_val_t k = hg_b_sext(b, hg_b_bin(b, HG_ADD, s->k_first, kb));
  hg_val_t jb = hg_b_sext(b, hg_b_bin(b, HG_SHR_U, s->n0, hg_b_i32(b, 7)));
  hg_val_t four = hg_b_i64(b, 4), sb;
  hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 1,
            hg_b_mad(b, hg_b_mad(b, jb, x->scale_ldb, k), four, x->scale_b), &sb);
  hg_val_t last = hg_b_bin(b, HG_SUB, x->M, hg_b_i32(b, 1));
  /* the k-block's column of A's scales: scale_a + 4 k lda */
  hg_val_t col = hg_b_mad(b, hg_b_bin(b, HG_MUL, k, x->scale_lda), four, x->scale_a);
  for (int im = 0; im < s->atoms_m; im++)
    for (int half = 0; half < 2; half++) {
      hg_val_t row =
          hg_b_bin(b, HG_ADD, s->m0, hg_b_bin(b, HG_ADD, s->row0, hg_b_i32(b, 64 * im + 8 * half)));
      row = hg_b_bin(b, HG_MIN_S, row, last);
      hg_val_t sa;
      hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 1, hg_b_mad(b, hg_b_sext(b, row), four, col), &sa);
      f[2 * im + half] = hg_b_bin(b, HG_FMUL, sa, sb);
    }
}

static hg_val_t i32(gemm_gen_t *x, int32_t v) {
  return hg_b_i32(x->b, v);
}

/* Whether some operand is copied through registers (st.shared), or with cp.async. */
static bool stores_arrive(const hg_gemm_kernel_t *k, const gemm_plan_t *g) {
  return (!k->a_tma && !g->cp_a.async) || (!k->b_tma && !g->cp_b.async);
}
static bool async_arrive(const hg_gemm_kernel_t *k, const gemm_plan_t *g) {
  return (!k->a_tma && g->cp_a.async) || (!k->b_tma && g->cp_b.async);
}

/* Operand `a` (or B) of the tile at (mn0, k0, batch) into the stage at pos. */
static void fill_operand(gemm_gen_t *x, bool a, const hg_sched_work_t *w, hg_val_t k0,
                         hg_pipe_pos_t pos) {
  hg_builder_t *b = x->b;
  const hg_gemm_problem_t *p = &x->k->problem;
  hg_val_t dst = hg_smem_ring_addr(b, a ? &x->ring_a : &x->ring_b, pos.stage);
  hg_val_t mn0 = a ? w->m0 : w->n0;
  if (a ? x->k->a_tma : x->k->b_tma) {
    /* A is shared by the CTAs of a cluster row (member rn), B by those of a column (rm). */
    hg_val_t origin[3] = {mn0, k0, a ? ad_batch(x, w) : w->batch};
    hg_tma_copy_load(b, a ? &x->k->plan_a : &x->k->plan_b, a ? x->tmap_a : x->tmap_b, dst,
                     hg_pipe_full_bar(b, &x->pipe, pos.stage), origin, a ? x->cl.rn : x->cl.rm,
                     a ? hg_cluster2d_row_mask(b, &x->cl) : hg_cluster2d_col_mask(b, &x->cl),
                     HG_NONE);
    return;
  }
  const bool kmaj = a ? p->a_k_major : p->b_k_major;
  const hg_dtype_t t = a ? p->a_type : p->b_type;
  hg_val_t ext = a ? x->M : x->N, base;
  /* The view (rows, cols, batch):(ld, 1, batch stride) of the operand, at the unit's batch. */
  hg_dtensor_t view;
  hg_status_t st = hg_dt_matrix(hg_dint_val(a ? x->a_ptr : x->b_ptr), hg_dtype_bytes(t),
                                hg_dint_val(kmaj ? ext : x->K), hg_dint_val(kmaj ? x->K : ext),
                                hg_dint_val(x->batch), hg_dint_val(a ? x->lda : x->ldb),
                                hg_dint_val(a ? x->bsa : x->bsb), &view);
  if (hg_is_ok(&st)) st = hg_dt_batch(b, &view, hg_dint_val(w->batch), &view);
  if (hg_is_ok(&st)) st = hg_dint_emit(b, view.base, HG_T_I64, &base);
  if (!hg_is_ok(&st)) {
    hg_builder_fail(b, st);
    return;
  }
  hg_cp_async_copy_issue(b, a ? &x->g->cp_a : &x->g->cp_b, dst, base, a ? x->lda : x->ldb,
                         kmaj ? mn0 : k0, kmaj ? k0 : mn0, kmaj ? ext : x->K, kmaj ? x->K : ext,
                         x->roles.wg_tid);
}

static void emit_producer(gemm_gen_t *x) {
  hg_builder_t *b = x->b;
  const hg_gemm_kernel_t *k = x->k;
  const bool tma_only = k->a_tma && k->b_tma;
  hg_b_comment(b, tma_only ? "producer: one elected thread issues TMA loads into the stage ring"
                           : "producer: 128 threads copy with cp.async into the stage ring");
  if (tma_only) hg_elect_begin(b, hg_b_cmp(b, HG_EQ, x->roles.warp, i32(x, 0)));
  hg_pipe_pos_t pos = hg_pipe_start(b);
  const uint32_t tx =
      (k->a_tma ? k->plan_a.expect_tx_bytes : 0) + (k->b_tma ? k->plan_b.expect_tx_bytes : 0);
  hg_val_t t = hg_sched_begin(b, &x->sched);
  {
    hg_sched_work_t w;
    hg_sched_work(b, &x->sched, t, &w);
    hg_val_t kb = hg_b_for(b, w.k_first, hg_b_bin(b, HG_ADD, w.k_first, w.k_count), i32(x, 1));
    {
      hg_pipe_acquire(b, &x->pipe, pos);
      hg_val_t k0 = hg_b_bin(b, HG_MUL, kb, i32(x, k->config.tile_k));
      /* The stage's TMA bytes are announced by one thread before its boxes are issued: the
       * elected producer, whose arrival completes the barrier with them; or thread 0 of the
       * cp.async producers, whose arrival is its cp.async one (expect_tx without arriving). */
      if (!tma_only && tx) {
        hg_b_if(b, hg_b_cmp(b, HG_EQ, x->roles.wg_tid, i32(x, 0)));
        hg_pipe_add_tx(b, &x->pipe, pos, tx);
      } else if (tx) {
        hg_pipe_expect_tx(b, &x->pipe, pos, tx);
      }
      if (k->a_tma) fill_operand(x, true, &w, k0, pos);
      if (k->b_tma) fill_operand(x, false, &w, k0, pos);
      if (!tma_only && tx) hg_b_endif(b);
      if (!k->a_tma) fill_operand(x, true, &w, k0, pos);
      if (!k->b_tma) fill_operand(x, false, &w, k0, pos);
      /* Each kind of copy commits on its own: register copies fence and arrive, cp.async
       * arrives once its copies have landed (an operand of each: two arrivals a thread). */
      if (stores_arrive(k, x->g)) hg_pipe_commit_stores(b, &x->pipe, pos);
      if (async_arrive(k, x->g)) hg_pipe_commit_cp_async(b, &x->pipe, pos);
      hg_pipe_advance(b, &x->pipe, pos);
    }
    hg_b_endfor(b);
  }
  hg_sched_end(b, &x->sched);
  if (tma_only) hg_elect_end(b);
}

/* The thread's first accumulator element (row, col) in the tile: the thread part of the
 * accumulator layout (thread -> offset in the column-major tile_m x tile_n tile) at the
 * thread's index, split by the tile's shape. */
static hg_status_t first_element(hg_builder_t *b, const hg_tiled_mma_t *tm, hg_val_t thread,
                                 hg_val_t *row, hg_val_t *col) {
  hg_layout_t thr_mode;
  HG_TRY(hg_layout_mode(&tm->acc_tv, 0, &thr_mode));
  const hg_dlayout_t thr = hg_dlayout_static(&thr_mode);
  hg_dint_t first;
  hg_dtuple_t tile, crd;
  HG_TRY(hg_dl_eval(b, &thr, hg_dint_val_nonneg(thread), HG_DL_IN_DOMAIN, &first));
  HG_TRY(hg_dtuple_make(2, (hg_dint_t[2]){hg_dint(tm->tile_m), hg_dint(tm->tile_n)}, &tile));
  HG_TRY(hg_dl_idx2crd(b, &tile, NULL, first, HG_DL_IN_DOMAIN, &crd));
  HG_TRY(hg_dint_emit(b, crd.d[1], HG_T_I32, row));
  return hg_dint_emit(b, crd.d[2], HG_T_I32, col);
}

/* Chunk c of a consumer thread's accumulators (acc[4c..4c+3], one 16-byte split-K store)
 * holds a row of D when its first row, the thread's first row + the chunk's smallest row
 * offset in the map, is one (rows_left = M - the thread's first row): -> PRED. Rows past D
 * (63 of 64 for the M = 1 of a decode step) are neither stored nor read back. Columns are
 * not tested: a predicate per chunk on both spilled on 128-row mma.sync tiles, and a tile
 * has few columns past N. */
static hg_val_t chunk_keep(gemm_gen_t *x, const hg_acc_map_t *am, hg_val_t rows_left, int c) {
  hg_builder_t *b = x->b;
  int dm = -1;
  for (int i = 0; i < am->rows && dm < 0; i++)
    for (int j = 0; j < am->cols; j++) {
      const int v = hg_acc_map_at(am, i, j);
      if (v >= 4 * c && v < 4 * c + 4) dm = i;
    }
  if (dm < 0) {
    hg_builder_fail(b,
                    hg_error(HG_ERR_INVALID, "accumulator chunk %d has no place in the %dx%d map",
                             c, am->rows, am->cols));
    return hg_b_pred(b, false);
  }
  return hg_b_cmp(b, HG_LT_S, i32(x, dm), rows_left);
}

/* The CTA-tile grid the split-K slots are indexed over: the cluster tiles' CTAs along M and N. */
static void cta_tiles(gemm_gen_t *x, hg_val_t *tiles_m, hg_val_t *tiles_n) {
  hg_builder_t *b = x->b;
  const hg_gemm_config_t *c = &x->k->config;
  for (int i = 0; i < 2; i++) {
    const int span = i ? c->tile_n * c->cluster_n : c->tile_m * c->cluster_m;
    hg_val_t ext = i ? x->N : x->M;
    hg_val_t t = hg_b_bin(b, HG_DIV_U, hg_b_bin(b, HG_ADD, ext, i32(x, span - 1)), i32(x, span));
    *(i ? tiles_n : tiles_m) = hg_b_bin(b, HG_MUL, t, i32(x, i ? c->cluster_n : c->cluster_m));
  }
}

static hg_status_t store_partial(gemm_gen_t *x, const hg_acc_map_t *am, const hg_sched_work_t *w,
                                 hg_val_t row0, hg_val_t thread, const hg_val_t *acc) {
  hg_builder_t *b = x->b;
  hg_val_t tm, tn;
  cta_tiles(x, &tm, &tn);
  hg_val_t tile =
      hg_splitk_tile(b, w->batch, w->m0, w->n0, x->k->config.tile_m, x->k->config.tile_n, tm, tn);
  hg_b_comment(b, "split-K: this split's partial tile to its slot");
  hg_val_t at = hg_splitk_slot(b, &x->splitk, tile, w->split, thread);
  hg_val_t rows_left = hg_b_bin(b, HG_SUB, x->M, row0);
  for (int c = 0; c < x->splitk.acc_count / 4; c++) {
    hg_b_if(b, chunk_keep(x, am, rows_left, c));
    hg_splitk_store(b, &x->splitk, at, c, &acc[4 * c]);
    hg_b_endif(b);
  }
  return hg_builder_status(b);
}

/* Chunks a CTA of the reduction pass sums: one, or enough that a tile takes at most 16
 * CTAs (each group is a copy of the sum and the epilogue in the code). */
static int reduce_chunks(int acc_count) {
  const int chunks = acc_count / 4;
  int q = 1;
  while (chunks / q > 16 && chunks % (2 * q) == 0) q *= 2;
  return q;
}

static int reduce_groups(int acc_count) {
  return acc_count / 4 / reduce_chunks(acc_count);
}

/* Split-K's reduction pass: CTA (tile, group) of a grid (CTA tiles, groups) sums the tile's
 * partials for its group of accumulator chunks, in split order, and runs the epilogue on
 * them. Its threads stand for the GEMM's consumer threads one to one (the slots' order), so
 * the accumulator map and the epilogue are the GEMM's, cropped to the group's values. */
static hg_status_t emit_reduce(gemm_gen_t *x) {
  hg_builder_t *b = x->b;
  const hg_gemm_config_t *c = &x->k->config;
  const hg_tiled_mma_t *tm = &x->g->mma.tm;
  const hg_roles_t *r = &x->roles;
  const bool pp = x->g->pingpong;
  const int rows = pp ? c->tile_m : c->tile_m / x->g->consumers;
  const int chunks = x->splitk.acc_count / 4, q = reduce_chunks(x->splitk.acc_count);
  hg_b_comment(b, "split-K reduction pass: one group of accumulator chunks of one tile");
  /* launched as the GEMM's programmatic dependent: its partials are complete and visible
   * only past this wait */
  hg_b_griddep_wait(b);
  hg_acc_map_t am, crop = {0};
  HG_TRY(hg_acc_map_make(tm, rows, &am));
  hg_val_t thread = pp ? r->wg_tid : hg_b_mad(b, r->consumer, i32(x, 128), r->wg_tid);
  hg_val_t t_row, t_col;
  hg_status_t st = first_element(b, tm, thread, &t_row, &t_col);
  crop.rows = am.rows;
  crop.cols = am.cols;
  crop.v = malloc(sizeof(int) * (size_t)am.rows * (size_t)am.cols);
  hg_val_t *keep = malloc(sizeof(hg_val_t) * (size_t)q);
  hg_val_t *sum = malloc(sizeof(hg_val_t) * 4 * (size_t)q);
  if (hg_is_ok(&st) && (!crop.v || !keep || !sum))
    st = hg_error(HG_ERR_NOMEM, "out of memory for the split-K reduction pass");
  if (hg_is_ok(&st)) {
    hg_val_t tiles_m, tiles_n;
    cta_tiles(x, &tiles_m, &tiles_n);
    /* blockIdx.x -> (batch, CTA tile along M, along N), row-major as hg_splitk_tile counts */
    hg_val_t tile32 = hg_b_sreg(b, HG_CTAID_X), group = hg_b_sreg(b, HG_CTAID_Y);
    hg_val_t tn = hg_b_bin(b, HG_REM_U, tile32, tiles_n);
    hg_val_t rest = hg_b_bin(b, HG_DIV_U, tile32, tiles_n);
    hg_val_t tmi = hg_b_bin(b, HG_REM_U, rest, tiles_m);
    hg_val_t batch = hg_b_bin(b, HG_DIV_U, rest, tiles_m);
    hg_val_t m0 = hg_b_bin(b, HG_MUL, tmi, i32(x, c->tile_m));
    hg_val_t n0 = hg_b_bin(b, HG_MUL, tn, i32(x, c->tile_n));
    hg_val_t tile = hg_b_sext(b, tile32);
    hg_val_t kblocks =
        hg_b_bin(b, HG_DIV_U, hg_b_bin(b, HG_ADD, x->K, i32(x, c->tile_k - 1)), i32(x, c->tile_k));
    hg_val_t splits = hg_b_bin(b, HG_MIN_S, i32(x, c->splits), kblocks);
    hg_val_t wm = pp ? i32(x, 0) : r->consumer;
    hg_val_t row0 = hg_b_bin(b, HG_ADD, m0, t_row), col0 = hg_b_bin(b, HG_ADD, n0, t_col);
    hg_val_t m_base = hg_b_bin(b, HG_ADD, m0, hg_b_bin(b, HG_MUL, wm, i32(x, rows)));
    hg_epilogue_begin(b, &x->epi);
    /* CTA tiles past D (a cluster's CTAs beyond M or N) have nothing to sum */
    hg_b_if(b, hg_b_bin(b, HG_AND, hg_b_cmp(b, HG_LT_S, m0, x->M), hg_b_cmp(b, HG_LT_S, n0, x->N)));
    hg_val_t rows_left = hg_b_bin(b, HG_SUB, x->M, row0);
    for (int gi = 0; gi * q < chunks && hg_is_ok(&st); gi++) {
      hg_b_if(b, hg_b_cmp(b, HG_EQ, group, i32(x, gi)));
      for (int i = 0; i < 4 * q; i++) sum[i] = hg_b_var(b, HG_T_F32, HG_NONE);
      for (int i = 0; i < q; i++) keep[i] = chunk_keep(x, &am, rows_left, gi * q + i);
      hg_splitk_sum(b, &x->splitk, tile, splits, thread, gi * q, q, keep, sum);
      /* the map cropped to the group's values, renumbered from 0 */
      for (int i = 0; i < am.rows * am.cols; i++) {
        const int v = am.v[i];
        crop.v[i] = v >= 4 * gi * q && v < 4 * (gi + 1) * q ? v - 4 * gi * q : -1;
      }
      st = hg_epilogue_emit(b, &x->epi, sum, &crop, row0, col0, m_base, n0, batch, r);
      hg_b_endif(b);
    }
    hg_b_endif(b);
    /* every thread: the amax's warp reductions need whole warps */
    hg_epilogue_drain(b, &x->epi, r);
  }
  free(crop.v);
  free(keep);
  free(sum);
  hg_acc_map_free(&am);
  return hg_is_ok(&st) ? hg_builder_status(b) : st;
}

static hg_status_t emit_consumer(gemm_gen_t *x, hg_val_t *acc, const hg_val_t *partial) {
  hg_builder_t *b = x->b;
  const hg_gemm_config_t *c = &x->k->config;
  const hg_tiled_mma_t *tm = &x->g->mma.tm;
  const hg_roles_t *r = &x->roles;
  const bool pp = x->g->pingpong;
  hg_b_comment(b, "consumers: main loop over the stage ring, then the epilogue");
  const int rows = pp ? c->tile_m : c->tile_m / x->g->consumers; /* the consumer's region */
  hg_acc_map_t am;
  HG_TRY(hg_acc_map_make(tm, rows, &am));
  hg_val_t wm = pp ? i32(x, 0) : r->consumer;
  hg_val_t t_row, t_col;
  hg_status_t st = first_element(
      b, tm, pp ? r->wg_tid : hg_b_mad(b, r->consumer, i32(x, 128), r->wg_tid), &t_row, &t_col);
  if (!hg_is_ok(&st)) {
    hg_acc_map_free(&am);
    return st;
  }
  hg_val_t slot_row0 = hg_b_bin(b, HG_MUL, wm, i32(x, rows));
  /* fp8 block scaling: the thread's first row of the tile in wgmma's fragment */
  block_scales_t bs = {
      .x = x,
      .row0 = hg_b_bin(b, HG_ADD, slot_row0,
                       hg_b_bin(b, HG_ADD, hg_b_bin(b, HG_SHL, r->warp_in_wg, i32(x, 4)),
                                hg_b_bin(b, HG_SHR_U, r->lane, i32(x, 2)))),
      .atoms_m = tm->atoms_m};
  const bool block = x->k->problem.scale == HG_SCALE_BLOCK;
  const hg_mainloop_t ml = {.mma = &x->g->mma,
                            .pipe = &x->pipe,
                            .ring_a = &x->ring_a,
                            .ring_b = &x->ring_b,
                            .cluster = &x->cl,
                            .fence_proxy = !x->k->a_tma || !x->k->b_tma,
                            .promote = hg_gemm_promote(&x->k->problem),
                            .partial = partial,
                            .kblock_scales = block ? load_block_scales : NULL,
                            .scales_ctx = &bs};
  hg_pipe_pos_t pos = hg_pipe_start(b);
  hg_val_t iter = hg_b_var(b, HG_T_I32, i32(x, 0));
  hg_epilogue_begin(b, &x->epi);
  const bool split = x->k->config.splits > 1;
  hg_val_t t = hg_sched_begin(b, &x->sched);
  {
    hg_sched_work_t w;
    hg_sched_work(b, &x->sched, t, &w);
    hg_val_t mine = hg_b_pred(b, true);
    if (pp) {
      /* Units alternate between the two consumers; the other's only moves the ring. */
      mine = hg_b_cmp(b, HG_EQ, hg_b_bin(b, HG_AND, iter, i32(x, 1)), r->consumer);
      hg_b_if(b, hg_b_not(b, mine));
      hg_pipe_skip(b, &x->pipe, pos, w.k_count);
      hg_b_endif(b);
    }
    hg_b_if(b, mine);
    {
      if (pp) {
        /* An mbarrier wait sees only the parity of a phase: the consumer that skipped the
         * other's tile would otherwise wait on stage phases a whole tile ahead and be
         * released by an earlier phase of the same parity. It starts its main loop only once
         * the other has issued the previous tile's. */
        hg_b_if(b, hg_b_cmp(b, HG_GT_S, iter, i32(x, 0)));
        hg_roles_order_wait(b, r);
        hg_b_endif(b);
      }
      if (grouped(x)) {
        /* D's rows end with the unit's group; fp8 B's scale is the group's */
        hg_b_assign(b, x->epi.m, w.m_end);
        if (!hg_val_is_none(x->scale_b_at))
          hg_b_assign(b, x->scale_b_at,
                      hg_b_select(b, hg_b_cmp(b, HG_EQ, x->scale_b, hg_b_i64(b, 0)), x->scale_b,
                                  hg_b_mad(b, hg_b_sext(b, w.batch), hg_b_i64(b, 4), x->scale_b)));
        /* row-wise: the group's vector, (group x extent) f32 in */
        for (int i = 0; i < 2; i++)
          if (!hg_val_is_none(x->vec_at[i]))
            hg_b_assign(b, x->vec_at[i],
                        hg_b_mad(b, hg_b_sext(b, hg_b_bin(b, HG_MUL, w.batch, i ? x->N : x->M)),
                                 hg_b_i64(b, 4), x->vec[i]));
      }
      hg_epi_prefetch_t pf;
      if (x->epi.vectors) {
        st = hg_epilogue_prefetch(b, &x->epi, w.m0, w.n0, r, &pf);
        x->epi.prefetch = x->epi_direct.prefetch = &pf;
      }
      bs.m0 = w.m0;
      bs.n0 = w.n0;
      bs.k_first = w.k_first;
      hg_mainloop_emit(b, &ml, acc, pos, w.k_count, wm, r);
      if (pp) {
        hg_b_if(b, hg_sched_has_next(b, &x->sched, t));
        hg_roles_order_signal(b, r);
        hg_b_endif(b);
      }
      /* grouped: TMA stores only for a tile whose rows all lie in its group (a uniform
       * branch: the tile's origin and its group's end are the CTA's) */
      const bool two = grouped(x) && x->epi.tma;
      if (split) {
        /* split-K: the partial tile to the workspace; the reduction pass runs the epilogue */
        st = store_partial(x, &am, &w, hg_b_bin(b, HG_ADD, w.m0, t_row),
                           pp ? r->wg_tid : hg_b_mad(b, r->consumer, i32(x, 128), r->wg_tid), acc);
      } else {
        if (two)
          hg_b_if(b, hg_b_cmp(b, HG_LE_S, hg_b_bin(b, HG_ADD, w.m0, i32(x, x->k->config.tile_m)),
                              w.m_end));
        st = hg_epilogue_emit(b, &x->epi, acc, &am, hg_b_bin(b, HG_ADD, w.m0, t_row),
                              hg_b_bin(b, HG_ADD, w.n0, t_col),
                              hg_b_bin(b, HG_ADD, w.m0, slot_row0), w.n0, ad_batch(x, &w), r);
        if (two) {
          hg_b_else(b);
          if (hg_is_ok(&st))
            st = hg_epilogue_emit(b, &x->epi_direct, acc, &am, hg_b_bin(b, HG_ADD, w.m0, t_row),
                                  hg_b_bin(b, HG_ADD, w.n0, t_col),
                                  hg_b_bin(b, HG_ADD, w.m0, slot_row0), w.n0, ad_batch(x, &w), r);
          hg_b_endif(b);
        }
      }
      x->epi.prefetch = x->epi_direct.prefetch = NULL;
    }
    hg_b_endif(b);
    hg_b_assign(b, iter, hg_b_bin(b, HG_ADD, iter, i32(x, 1)));
  }
  hg_sched_end(b, &x->sched);
  hg_epilogue_drain(b, &x->epi, r);
  hg_acc_map_free(&am);
  return st;
}

/* The cluster, the stage rings of A and B and their barriers (the GEMM's, not the reduction
 * pass's). */
static hg_status_t build_ring(gemm_gen_t *x) {
  hg_builder_t *b = x->b;
  const hg_gemm_kernel_t *k = x->k;
  const hg_gemm_config_t *c = &k->config;
  const gemm_plan_t *g = x->g;
  const bool cpasync = !k->a_tma || !k->b_tma;
  HG_TRY(hg_cluster2d_make(b, c->cluster_m, c->cluster_n, &x->cl));
  /* Shared memory: the stage rings of A and B, the barriers. */
  const hg_gmma_operand_t *oa = &g->mma.tm.a_op, *ob = &g->mma.tm.b_op;
  HG_TRY(hg_smem_ring_make(b, k->a_tma ? k->plan_a.smem_bytes : oa->stage_bytes,
                           k->a_tma ? k->plan_a.smem_align_bytes : oa->align_bytes, c->stages,
                           &x->ring_a));
  HG_TRY(hg_smem_ring_make(b, k->b_tma ? k->plan_b.smem_bytes : ob->stage_bytes,
                           k->b_tma ? k->plan_b.smem_align_bytes : ob->align_bytes, c->stages,
                           &x->ring_b));
  /* full[s]: the producer's arrival(s) plus the TMA bytes; empty[s]: one arrival per
   * consumer warp of every CTA that receives this CTA's multicasts. */
  const hg_pipe_spec_t ps = {
      .stages = c->stages,
      .full_arrivals = cpasync ? 128 * (stores_arrive(k, g) + async_arrive(k, g)) : 1,
      .empty_arrivals = 4 * (g->pingpong ? 1 : g->consumers) * hg_cluster2d_peers(&x->cl)};
  HG_TRY(hg_pipe_make(b, &ps, &x->pipe));
  return hg_ok();
}

static hg_status_t build(gemm_gen_t *x, hg_val_t **acc) {
  hg_builder_t *b = x->b;
  const hg_gemm_kernel_t *k = x->k;
  const hg_gemm_problem_t *p = &k->problem;
  const hg_gemm_config_t *c = &k->config;
  const gemm_plan_t *g = x->g;
  const bool cpasync = !k->a_tma || !k->b_tma;
  const bool one = g->consumers == 1;
  const bool split = c->splits > 1;
  /* the reduction pass: the consumer warpgroups that hold one tile, no producer */
  const hg_roles_spec_t rs_reduce = {.producers = 0, .consumers = g->pingpong ? 1 : g->consumers};
  const hg_roles_spec_t rs =
      x->reduce ? rs_reduce
                : (hg_roles_spec_t){.producers = 1,
                                    .consumers = g->consumers,
                                    .producer_regs = !cpasync ? PRODUCER_REGS
                                                     : one    ? PRODUCER_REGS_CPASYNC_1WG
                                                              : PRODUCER_REGS_CPASYNC_2WG,
                                    .consumer_regs = one       ? CONSUMER_REGS_1WG
                                                     : cpasync ? CONSUMER_REGS_CPASYNC_2WG
                                                               : CONSUMER_REGS_2WG};
  HG_TRY(hg_roles_make(b, &rs, &x->roles));
  /* split-K: the reduction pass may be scheduled now, to start as this grid's CTAs leave (it
   * waits for the whole grid before it reads a partial) */
  if (split && !x->reduce) hg_b_griddep_launch_dependents(b);
  hg_epilogue_t *e = &x->epi;
  if (!x->reduce) HG_TRY(build_ring(x));
  e->d_type = p->d_type;
  e->amax_ptr = e->amax_var = HG_NONE;
  /* split-K's GEMM stores partial tiles and its reduction pass stores D directly */
  e->tma = k->tma_store && !split;
  if (e->tma) {
    e->plan_d = &k->plan_d;
    e->epi_n = g->epi_n;
    e->buffers = g->epi_buffers;
    e->buf_bytes = g->epi_bytes;
    e->buf_offset =
        hg_b_smem_reserve(b, g->epi_bytes * (uint32_t)(g->epi_buffers * g->consumers), 1024);
  }
  /* Parameters, in the order hg_gemm_op_run passes them (kernels.h). */
  for (int i = 0; i < 2; i++) {
    const bool a = i == 0;
    if (a ? k->a_tma : k->b_tma) {
      *(a ? &x->tmap_a : &x->tmap_b) = hg_b_param_tmap(b, a ? "tmap_a" : "tmap_b");
    } else {
      *(a ? &x->a_ptr : &x->b_ptr) = hg_b_param(b, HG_T_I64, a ? "a" : "b");
      *(a ? &x->lda : &x->ldb) = hg_b_param(b, HG_T_I64, a ? "lda" : "ldb");
      *(a ? &x->bsa : &x->bsb) = hg_b_param(b, HG_T_I64, a ? "batch_stride_a" : "batch_stride_b");
    }
  }
  if (k->tma_store) {
    hg_val_t tmap_d = hg_b_param_tmap(b, "tmap_d");
    if (e->tma) e->tmap_d = tmap_d;
  }
  e->d_ptr = hg_b_param(b, HG_T_I64, "d");
  hg_val_t c_ptr = hg_b_param(b, HG_T_I64, "c");
  x->M = e->m = hg_b_param(b, HG_T_I32, "m");
  x->N = e->n = hg_b_param(b, HG_T_I32, "n");
  x->K = hg_b_param(b, HG_T_I32, "k");
  hg_val_t batch = x->batch = e->batches = hg_b_param(b, HG_T_I32, "batch");
  hg_val_t ldc = hg_b_param(b, HG_T_I64, "ldc");
  e->ldd = hg_b_param(b, HG_T_I64, "ldd");
  hg_val_t bsc = hg_b_param(b, HG_T_I64, "batch_stride_c");
  e->batch_stride_d = hg_b_param(b, HG_T_I64, "batch_stride_d");
  hg_val_t alpha = hg_b_param(b, HG_T_F32, "alpha");
  hg_val_t beta = hg_b_param(b, HG_T_F32, "beta");
  /* D = alpha (* scale_a * scale_b for fp8: device pointers, null meaning 1) * A x B + beta C */
  e->steps[e->nsteps++] = (hg_epi_step_t){.kind = HG_EPI_SCALE, .value = alpha};
  if (hg_dtype_bits(p->a_type) == 8)
    for (int i = 0; i < 2; i++) {
      hg_val_t ptr = hg_b_param(b, HG_T_I64, i ? "scale_b" : "scale_a");
      *(i ? &x->scale_b : &x->scale_a) = ptr;
      /* grouped: one B scale per group: the step reads the unit's group's, set per unit */
      if (i && grouped(x)) ptr = x->scale_b_at = hg_b_var(b, HG_T_I64, ptr);
      /* per tensor: one factor; row-wise: vectors along M (A's) and N (B's), staged like the
       * chain's; block-wise: applied in the main loop */
      if (p->scale == HG_SCALE_TENSOR)
        e->steps[e->nsteps++] = (hg_epi_step_t){.kind = HG_EPI_SCALE_PTR, .ptr = ptr};
      else if (p->scale == HG_SCALE_ROW)
        e->steps[e->nsteps++] = (hg_epi_step_t){
            .kind = HG_EPI_BIAS, .ptr = ptr, .dtype = HG_F32, .along_n = i == 1, .multiply = true};
    }
  e->steps[e->nsteps++] = (hg_epi_step_t){.kind = HG_EPI_BETA_C,
                                          .value = beta,
                                          .ptr = c_ptr,
                                          .ld = ldc,
                                          .batch_stride = bsc,
                                          .dtype = p->c_type};
  /* the epilogue chain (kernels.h): row and column scales, bias, activation, residual */
  for (int i = 0; i < 2; i++)
    if (i ? p->colscale : p->rowscale) {
      hg_val_t ptr = x->vec[i] = hg_b_param(b, HG_T_I64, i ? "colscale" : "rowscale");
      /* grouped: column scales are per group (groups x N), and a masked GEMM's row scales
       * per group's batch (groups x M): the step reads the unit's group's, set per unit */
      if (grouped(x) && (i == 1 || p->group == HG_GROUP_MASKED))
        ptr = x->vec_at[i] = hg_b_var(b, HG_T_I64, ptr);
      e->steps[e->nsteps++] = (hg_epi_step_t){
          .kind = HG_EPI_BIAS, .ptr = ptr, .dtype = HG_F32, .along_n = i == 1, .multiply = true};
    }
  if (p->bias != HG_BIAS_NONE)
    e->steps[e->nsteps++] = (hg_epi_step_t){.kind = HG_EPI_BIAS,
                                            .ptr = hg_b_param(b, HG_T_I64, "bias"),
                                            .dtype = p->bias_type,
                                            .along_n = p->bias == HG_BIAS_N};
  /* the aux output (the values the activation takes) is stored as the chain reaches it, but
   * its parameters come after the residual's: see below */
  int aux_step = -1;
  if (p->aux) {
    aux_step = e->nsteps;
    e->steps[e->nsteps++] = (hg_epi_step_t){.kind = HG_EPI_AUX, .dtype = p->aux_type};
  }
  if (p->act != HG_ACT_NONE)
    e->steps[e->nsteps++] =
        (hg_epi_step_t){.kind = HG_EPI_ACT, .act = p->act, .lo = p->act_lo, .hi = p->act_hi};
  /* the residual: + 1 x R, R of C's type laid out as D */
  if (p->residual)
    e->steps[e->nsteps++] = (hg_epi_step_t){.kind = HG_EPI_BETA_C,
                                            .value = hg_b_f32(b, 1.0f),
                                            .ptr = hg_b_param(b, HG_T_I64, "residual"),
                                            .ld = e->ldd,
                                            .batch_stride = e->batch_stride_d,
                                            .dtype = p->c_type};
  /* fp8 D: its output scale (a device pointer, null meaning 1) last, before the saturating
   * conversion */
  if (hg_dtype_bits(p->d_type) == 8)
    e->steps[e->nsteps++] =
        (hg_epi_step_t){.kind = HG_EPI_SCALE_PTR, .ptr = hg_b_param(b, HG_T_I64, "scale_d")};
  if (aux_step >= 0) {
    hg_epi_step_t *st = &e->steps[aux_step];
    st->ptr = hg_b_param(b, HG_T_I64, "aux");
    st->ld = hg_b_param(b, HG_T_I64, "ldaux");
    st->batch_stride = hg_b_param(b, HG_T_I64, "batch_stride_aux");
  }
  if (p->amax) e->amax_ptr = hg_b_param(b, HG_T_I64, "amax");
  /* vector steps' values staged in shared memory, loaded before the main loop */
  for (int i = 0; i < e->nsteps; i++) {
    const int lines = e->steps[i].along_n ? c->tile_n : c->tile_m;
    if (e->steps[i].kind != HG_EPI_BIAS) continue;
    e->vectors++;
    if (lines > e->vec_lines) e->vec_lines = lines;
  }
  if (!hg_gemm_vectors_staged(p, c) || split) e->vectors = e->vec_lines = 0;
  if (e->vectors) {
    /* ping-pong: a tile per consumer in flight, each with its own slots */
    e->vec_per_consumer = g->pingpong;
    e->vec_threads = g->pingpong ? 128 : 128 * g->consumers;
    e->vec_offset = hg_b_smem_reserve(
        b, (uint32_t)(4 * e->vec_lines * e->vectors * (g->pingpong ? g->consumers : 1)), 16);
  }
  if (grouped(x)) {
    /* the groups' rows on the device (gemm_op.c passes it after the epilogue's pointers); D's
     * row bound becomes the unit's group's end */
    x->groups = hg_b_param(b, HG_T_I64, "groups");
    e->m = hg_b_var(b, HG_T_I32, x->M);
  }
  /* split-K's workspace */
  if (c->splits > 1)
    HG_TRY(hg_splitk_make(b, c->splits, g->mma.acc_count, g->pingpong ? 128 : 128 * g->consumers,
                          hg_b_param(b, HG_T_I64, "workspace"), &x->splitk));
  /* fp8 block scaling's leading dimensions, the last parameters (of the reduction pass too,
   * which takes the same list) */
  if (p->scale == HG_SCALE_BLOCK) {
    x->scale_lda = hg_b_param(b, HG_T_I64, "scale_lda");
    x->scale_ldb = hg_b_param(b, HG_T_I64, "scale_ldb");
  }
  if (x->reduce) return emit_reduce(x);
  const hg_sched_spec_t ss = hg_gemm_sched_spec(c);
  hg_val_t kblocks =
      hg_b_bin(b, HG_DIV_U, hg_b_bin(b, HG_ADD, x->K, i32(x, c->tile_k - 1)), i32(x, c->tile_k));
  if (grouped(x)) {
    hg_sched_spec_t gs = ss;
    gs.kind = HG_SCHED_GROUPED;
    gs.contiguous = p->group == HG_GROUP_CONTIGUOUS;
    HG_TRY(hg_sched_make_grouped(b, &gs, &x->cl, x->M, x->N, batch, p->batch, x->groups, kblocks,
                                 x->roles.tid, x->roles.threads, &x->sched));
  } else {
    HG_TRY(hg_sched_make(b, &ss, &x->cl, x->M, x->N, batch, kblocks, &x->sched));
  }

  /* Barriers initialised, visible to the cluster, before any peer multicasts into them. */
  hg_b_if(b, hg_b_cmp(b, HG_EQ, x->roles.tid, i32(x, 0)));
  if (k->a_tma) hg_b_tmap_prefetch(b, x->tmap_a);
  if (k->b_tma) hg_b_tmap_prefetch(b, x->tmap_b);
  if (e->tma) hg_b_tmap_prefetch(b, e->tmap_d);
  hg_pipe_init(b, &x->pipe);
  if (x->cl.m * x->cl.n > 1) hg_b_fence_mbarrier_init(b);
  hg_b_fence_proxy_async(b);
  hg_b_endif(b);
  hg_cluster2d_sync(b, &x->cl);

  hg_roles_producer(b, &x->roles);
  emit_producer(x);
  hg_roles_consumer(b, &x->roles);
  /* fp8's promotion: a second set for the partial sums, after the f32 ones */
  const int sets = hg_gemm_promote(p) ? 2 : 1, n = g->mma.acc_count;
  *acc = malloc(sizeof(hg_val_t) * (size_t)(n * sets));
  if (!*acc) return hg_error(HG_ERR_NOMEM, "out of memory for %d accumulators", n * sets);
  for (int i = 0; i < n * sets; i++) (*acc)[i] = hg_b_var(b, HG_T_F32, HG_NONE);
  x->epi_direct = x->epi;
  x->epi_direct.tma = false;
  HG_TRY(emit_consumer(x, *acc, sets > 1 ? *acc + n : NULL));
  hg_roles_end(b, &x->roles);
  /* No CTA may leave while a peer can still multicast into it or arrive on its barriers. */
  if (x->cl.m * x->cl.n > 1) hg_cluster2d_sync(b, &x->cl);
  return hg_ok();
}

/* Split-K's reduction pass, a second entry of the GEMM's module: its PTX from the first
 * `.visible .entry` on is appended to the GEMM's (the module-level lines, the PTX version and
 * target and the dynamic shared memory's declaration, are the same in both). */
static hg_status_t generate_reduce(hg_gemm_kernel_t *out, const gemm_plan_t *g, hg_backend_t be) {
  /* "hg_gemm_..." -> "hg_gred_...", no longer than the GEMM's name */
  snprintf(out->reduce_name, sizeof out->reduce_name, "hg_gred_%s", out->k.name + 8);
  hg_builder_t *b = NULL;
  HG_TRY(hg_builder_create(out->reduce_name, &b));
  gemm_gen_t x = {.b = b, .k = out, .g = g, .reduce = true};
  hg_kernel_t rk = {0};
  hg_status_t st = build(&x, NULL);
  if (hg_is_ok(&st)) st = hg_kernel_finish(b, be, &rk);
  hg_builder_destroy(b);
  const char *entry = hg_is_ok(&st) ? strstr(rk.ptx.data, "\n.visible .entry") : NULL;
  if (hg_is_ok(&st) && !entry)
    st = hg_error(HG_ERR_INVALID, "the split-K reduction pass's PTX has no .visible .entry");
  if (hg_is_ok(&st)) {
    const size_t add = rk.ptx.len - (size_t)(entry - rk.ptx.data);
    char *grown = realloc(out->k.ptx.data, out->k.ptx.len + add + 1);
    if (!grown) {
      st = hg_error(HG_ERR_NOMEM, "out of memory joining the split-K reduction pass's PTX");
    } else {
      memcpy(grown + out->k.ptx.len, entry, add + 1);
      out->k.ptx.data = grown;
      out->k.ptx.len += add;
      out->reduce_threads = (uint32_t)x.roles.threads;
      out->reduce_smem = rk.smem_bytes;
      out->reduce_groups = reduce_groups(g->mma.acc_count);
      out->k.gen_ms += rk.gen_ms;
    }
  }
  hg_kernel_free(&rk);
  return st;
}

hg_status_t hg_gemm_generate(const hg_gemm_problem_t *p, const hg_gemm_config_t *c, hg_backend_t be,
                             hg_gemm_kernel_t *out) {
  const double t0 = hg_now_ms();
  gemm_plan_t *g = malloc(sizeof *g);
  if (!g) return hg_error(HG_ERR_NOMEM, "out of memory planning a GEMM");
  hg_status_t st = hg_gemm_plan_make(p, c, out, g);
  hg_builder_t *b = NULL;
  if (hg_is_ok(&st)) {
    hg_gemm_kernel_name(out, out->k.name, sizeof out->k.name);
    st = hg_builder_create(out->k.name, &b);
  }
  hg_val_t *acc = NULL;
  if (hg_is_ok(&st)) {
    gemm_gen_t x = {.b = b, .k = out, .g = g};
    st = build(&x, &acc);
    out->k.threads = (uint32_t)x.roles.threads;
    out->k.cluster[0] = (uint32_t)(c->cluster_m * c->cluster_n);
    out->k.cluster[1] = out->k.cluster[2] = 1;
  }
  if (hg_is_ok(&st)) st = hg_kernel_finish(b, be, &out->k);
  if (hg_is_ok(&st) && c->splits > 1) st = generate_reduce(out, g, be);
  free(acc);
  free(g);
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
