/* The producer warpgroup of a warp-specialized GEMM-like kernel (builders.h, hg_producer_*):
 * it walks the consumers' unit sequence and, per k-block, acquires a free stage of the ring,
 * fills it with the tiles of two operands and commits it to the stage's full barrier.
 *
 * Each operand comes by TMA (boxes issued by one elected thread, multicast to the cluster's
 * CTAs that share it: A along a cluster row, B along a column) or, where TMA cannot address
 * it, by cp.async or register copies from all 128 threads. The mix decides who announces the
 * TMA bytes and how many arrivals complete a stage (hg_producer_full_arrivals). */
#include "hopgen/builders.h"
#include "hopgen/dlayout.h"

/* Whether some operand is copied through registers (st.shared), or with cp.async. */
static bool stores_arrive(const hg_cp_async_copy_t *a, const hg_cp_async_copy_t *b) {
  return (a && !a->async) || (b && !b->async);
}
static bool async_arrive(const hg_cp_async_copy_t *a, const hg_cp_async_copy_t *b) {
  return (a && a->async) || (b && b->async);
}

int hg_producer_full_arrivals(const hg_cp_async_copy_t *a, const hg_cp_async_copy_t *b) {
  return a || b ? 128 * (stores_arrive(a, b) + async_arrive(a, b)) : 1;
}

/* Where a copy of operand i finds unit w's k-block at k0: the view (rows, cols):(ld, 1) of the
 * operand at the unit's batch, from its base, the tile's origin and the view's extents. */
typedef struct operand_view {
  hg_val_t base, row0, col0, rows, cols;
} operand_view_t;

static bool operand_view(hg_builder_t *b, const hg_operand_copy_t *o, const hg_sched_work_t *w,
                         hg_val_t mn0, hg_val_t k0, operand_view_t *v) {
  const bool kmaj = o->k_major;
  hg_val_t ext = o->mn;
  hg_dtensor_t view;
  hg_status_t st =
      hg_dt_matrix(hg_dint_val(o->ptr), hg_dtype_bytes(o->dtype), hg_dint_val(kmaj ? ext : o->k),
                   hg_dint_val(kmaj ? o->k : ext), hg_dint_val(o->batches), hg_dint_val(o->ld),
                   hg_dint_val(o->batch_stride), &view);
  if (hg_is_ok(&st)) st = hg_dt_batch(b, &view, hg_dint_val(w->batch), &view);
  if (hg_is_ok(&st)) st = hg_dint_emit(b, view.base, HG_T_I64, &v->base);
  if (!hg_is_ok(&st)) {
    hg_builder_fail(b, st);
    return false;
  }
  v->row0 = kmaj ? mn0 : k0;
  v->col0 = kmaj ? k0 : mn0;
  v->rows = kmaj ? ext : o->k;
  v->cols = kmaj ? o->k : ext;
  return true;
}

/* Operand i (0: A, shared along a cluster row; 1: B, along a column) of unit w's k-block at
 * k0 into the stage at pos (a staged copy: from its staging slot `slot`). */
static void fill_operand(hg_builder_t *b, const hg_producer_t *p, int i, const hg_sched_work_t *w,
                         hg_val_t k0, hg_pipe_pos_t pos, hg_val_t slot) {
  const hg_operand_copy_t *o = &p->op[i];
  const bool a = i == 0;
  const hg_cluster2d_t *cl = p->cluster;
  hg_val_t dst = hg_smem_ring_addr(b, p->ring[i], pos.stage);
  hg_val_t mn0 = a ? w->m0 : w->n0;
  if (o->plan) {
    /* A is shared by the CTAs of a cluster row (member rn), B by those of a column (rm). */
    hg_val_t origin[3] = {mn0, k0, o->batch_zero ? hg_b_i32(b, 0) : w->batch};
    hg_tma_copy_load(b, o->plan, o->tmap, dst, hg_pipe_full_bar(b, p->pipe, pos.stage), origin,
                     a ? cl->rn : cl->rm,
                     a ? hg_cluster2d_row_mask(b, cl) : hg_cluster2d_col_mask(b, cl), HG_NONE);
    return;
  }
  operand_view_t v;
  if (!operand_view(b, o, w, mn0, k0, &v)) return;
  if (o->cp->staged)
    hg_cp_async_stage_shift(b, o->cp, hg_smem_ring_addr(b, p->staging[i], slot), dst, v.base, o->ld,
                            v.row0, v.col0, v.rows, v.cols, p->roles->wg_tid);
  else
    hg_cp_async_copy_issue(b, o->cp, dst, v.base, o->ld, v.row0, v.col0, v.rows, v.cols,
                           p->roles->wg_tid);
}

static bool staged(const hg_producer_t *p, int i) {
  return !p->op[i].plan && p->op[i].cp && p->op[i].cp->staged;
}

/* The staged operands' blocks of unit w's k-block kb into the staging slot `slot` (I32),
 * then a cp.async group, empty where kb is past the unit's k-blocks: one group per k-block
 * keeps cp.async.wait_group's count uniform. */
static void stage_issue(hg_builder_t *b, const hg_producer_t *p, const hg_sched_work_t *w,
                        hg_val_t kb, hg_val_t slot) {
  hg_b_if(b, hg_b_cmp(b, HG_LT_S, kb, hg_b_bin(b, HG_ADD, w->k_first, w->k_count)));
  for (int i = 0; i < 2; i++) {
    if (!staged(p, i)) continue;
    const hg_operand_copy_t *o = &p->op[i];
    operand_view_t v;
    hg_val_t k0 = hg_b_bin(b, HG_MUL, kb, hg_b_i32(b, p->tile_k));
    if (!operand_view(b, o, w, i == 0 ? w->m0 : w->n0, k0, &v)) break;
    hg_cp_async_stage_issue(b, o->cp, hg_smem_ring_addr(b, p->staging[i], slot), v.base, o->ld,
                            v.row0, v.col0, v.rows, v.cols, p->roles->wg_tid);
  }
  hg_b_endif(b);
  hg_b_cp_async_commit(b);
}

/* The side copy by warp 1 of the producer warpgroup: its own walk over the units and k-blocks
 * (the same sequence as the operands'), a stage of its ring per stage of the pipe. */
static void side_emit(hg_builder_t *b, const hg_producer_t *p) {
  const hg_side_copy_t *sc = p->side;
  const bool tma = sc->tma_bytes > 0;
  hg_b_comment(b, tma ? "producer warp 1: the side copy into each stage by TMA from lane 0"
                      : "producer warp 1: the side copy into each stage by cp.async, one "
                        "arrival a lane");
  hg_b_if(b, hg_b_cmp(b, HG_EQ, p->roles->warp, hg_b_i32(b, 1)));
  hg_pipe_pos_t pos = hg_pipe_start(b);
  hg_val_t t = hg_sched_begin(b, p->sched);
  {
    hg_sched_work_t w;
    hg_sched_work(b, p->sched, t, &w);
    hg_val_t kb = hg_b_for(b, w.k_first, hg_b_bin(b, HG_ADD, w.k_first, w.k_count), hg_b_i32(b, 1));
    {
      hg_pipe_acquire(b, p->pipe, pos);
      hg_val_t full = hg_pipe_full_bar(b, p->pipe, pos.stage);
      hg_val_t dst = hg_smem_ring_addr(b, sc->ring, pos.stage);
      if (tma) {
        /* the bytes are announced before the loads can complete them */
        hg_b_if(b, hg_b_cmp(b, HG_EQ, p->roles->lane, hg_b_i32(b, 0)));
        hg_b_mbar_arrive_expect_tx(b, full, hg_b_i32(b, (int32_t)sc->tma_bytes));
        sc->copy(b, sc->ctx, &w, kb, p->roles->lane, dst, full);
        hg_b_endif(b);
      } else {
        sc->copy(b, sc->ctx, &w, kb, p->roles->lane, dst, full);
        hg_b_cp_async_mbar_arrive(b, full);
      }
      hg_pipe_advance(b, p->pipe, pos);
    }
    hg_b_endfor(b);
  }
  hg_sched_end(b, p->sched);
  /* no copy outlives its thread (the consumers wait for TMA's, on the full barriers) */
  if (!tma) hg_b_cp_async_wait(b, 0);
  hg_b_endif(b);
}

void hg_producer_emit(hg_builder_t *b, const hg_producer_t *p) {
  const bool tma[2] = {p->op[0].plan != NULL, p->op[1].plan != NULL};
  const bool tma_only = tma[0] && tma[1];
  const hg_cp_async_copy_t *cp_a = tma[0] ? NULL : p->op[0].cp, *cp_b = tma[1] ? NULL : p->op[1].cp;
  if ((!tma[0] && !cp_a) || (!tma[1] && !cp_b)) {
    hg_builder_fail(b, hg_error(HG_ERR_INVALID,
                                "hg_producer_emit: operand %s has neither a TMA plan nor a "
                                "cp.async copy",
                                !tma[0] && !cp_a ? "A" : "B"));
    return;
  }
  if (p->side && (!tma_only || !p->side->ring || !p->side->copy)) {
    hg_builder_fail(b, hg_error(HG_ERR_INVALID,
                                "hg_producer_emit: a side copy needs both operands by TMA (its "
                                "warp is one the cp.async copies use), a ring and a copy"));
    return;
  }
  hg_b_comment(b, tma_only ? "producer: one elected thread issues TMA loads into the stage ring"
                           : "producer: 128 threads copy with cp.async into the stage ring");
  if (tma_only) hg_elect_begin(b, hg_b_cmp(b, HG_EQ, p->roles->warp, hg_b_i32(b, 0)));
  hg_pipe_pos_t pos = hg_pipe_start(b);
  const uint32_t tx =
      (tma[0] ? p->op[0].plan->expect_tx_bytes : 0) + (tma[1] ? p->op[1].plan->expect_tx_bytes : 0);
  /* Staged window copies run D = HG_CP_ASYNC_STAGING_DEPTH k-blocks ahead of the stages in
   * D staging slots: a unit starts with the blocks of its first D k-blocks in flight, and
   * each k-block waits for its own group, shifts its slot into the stage and refills the slot
   * with the k-block D on. Within a unit only: the next unit's first blocks go at its start. */
  const int D = HG_CP_ASYNC_STAGING_DEPTH;
  const bool any_staged = staged(p, 0) || staged(p, 1);
  hg_val_t slot = any_staged ? hg_b_var(b, HG_T_I32, hg_b_i32(b, 0)) : HG_NONE;
  hg_val_t t = hg_sched_begin(b, p->sched);
  {
    hg_sched_work_t w;
    hg_sched_work(b, p->sched, t, &w);
    if (any_staged)
      for (int d = 0; d < D; d++) {
        hg_val_t sd = hg_b_bin(b, HG_ADD, slot, hg_b_i32(b, d));
        sd = hg_b_select(b, hg_b_cmp(b, HG_GE_S, sd, hg_b_i32(b, D)),
                         hg_b_bin(b, HG_SUB, sd, hg_b_i32(b, D)), sd);
        stage_issue(b, p, &w, hg_b_bin(b, HG_ADD, w.k_first, hg_b_i32(b, d)), sd);
      }
    hg_val_t kb = hg_b_for(b, w.k_first, hg_b_bin(b, HG_ADD, w.k_first, w.k_count), hg_b_i32(b, 1));
    {
      /* this k-block's staged blocks: all groups but the D - 1 newest have landed */
      if (any_staged) hg_b_cp_async_wait(b, D - 1);
      hg_pipe_acquire(b, p->pipe, pos);
      hg_val_t k0 = hg_b_bin(b, HG_MUL, kb, hg_b_i32(b, p->tile_k));
      /* The stage's TMA bytes are announced by one thread before its boxes are issued: the
       * elected producer, whose arrival completes the barrier with them; or thread 0 of the
       * cp.async producers, whose arrival is its cp.async one (expect_tx without arriving). */
      if (!tma_only && tx) {
        hg_b_if(b, hg_b_cmp(b, HG_EQ, p->roles->wg_tid, hg_b_i32(b, 0)));
        hg_pipe_add_tx(b, p->pipe, pos, tx);
      } else if (tx) {
        hg_pipe_expect_tx(b, p->pipe, pos, tx);
      }
      for (int i = 0; i < 2; i++)
        if (tma[i]) fill_operand(b, p, i, &w, k0, pos, slot);
      if (!tma_only && tx) hg_b_endif(b);
      for (int i = 0; i < 2; i++)
        if (!tma[i]) fill_operand(b, p, i, &w, k0, pos, slot);
      /* Each kind of copy commits on its own: register copies fence and arrive, cp.async
       * arrives once its copies have landed (an operand of each: two arrivals a thread). */
      if (stores_arrive(cp_a, cp_b)) hg_pipe_commit_stores(b, p->pipe, pos);
      if (async_arrive(cp_a, cp_b)) hg_pipe_commit_cp_async(b, p->pipe, pos);
      if (any_staged) {
        stage_issue(b, p, &w, hg_b_bin(b, HG_ADD, kb, hg_b_i32(b, D)), slot);
        hg_val_t s1 = hg_b_bin(b, HG_ADD, slot, hg_b_i32(b, 1));
        hg_b_assign(b, slot,
                    hg_b_select(b, hg_b_cmp(b, HG_EQ, s1, hg_b_i32(b, D)), hg_b_i32(b, 0), s1));
      }
      hg_pipe_advance(b, p->pipe, pos);
    }
    hg_b_endfor(b);
  }
  hg_sched_end(b, p->sched);
  if (tma_only) hg_elect_end(b);
  if (p->side) side_emit(b, p);
}
