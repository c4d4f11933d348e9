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

/* Operand i (0: A, shared along a cluster row; 1: B, along a column) of unit w's k-block at
 * k0 into the stage at pos. */
static void fill_operand(hg_builder_t *b, const hg_producer_t *p, int i, const hg_sched_work_t *w,
                         hg_val_t k0, hg_pipe_pos_t pos) {
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
  const bool kmaj = o->k_major;
  hg_val_t ext = o->mn, base;
  /* The view (rows, cols, batch):(ld, 1, batch stride) of the operand, at the unit's batch. */
  hg_dtensor_t view;
  hg_status_t st =
      hg_dt_matrix(hg_dint_val(o->ptr), hg_dtype_bytes(o->dtype), hg_dint_val(kmaj ? ext : o->k),
                   hg_dint_val(kmaj ? o->k : ext), hg_dint_val(o->batches), hg_dint_val(o->ld),
                   hg_dint_val(o->batch_stride), &view);
  if (hg_is_ok(&st)) st = hg_dt_batch(b, &view, hg_dint_val(w->batch), &view);
  if (hg_is_ok(&st)) st = hg_dint_emit(b, view.base, HG_T_I64, &base);
  if (!hg_is_ok(&st)) {
    hg_builder_fail(b, st);
    return;
  }
  hg_cp_async_copy_issue(b, o->cp, dst, base, o->ld, kmaj ? mn0 : k0, kmaj ? k0 : mn0,
                         kmaj ? ext : o->k, kmaj ? o->k : ext, p->roles->wg_tid);
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
  hg_b_comment(b, tma_only ? "producer: one elected thread issues TMA loads into the stage ring"
                           : "producer: 128 threads copy with cp.async into the stage ring");
  if (tma_only) hg_elect_begin(b, hg_b_cmp(b, HG_EQ, p->roles->warp, hg_b_i32(b, 0)));
  hg_pipe_pos_t pos = hg_pipe_start(b);
  const uint32_t tx =
      (tma[0] ? p->op[0].plan->expect_tx_bytes : 0) + (tma[1] ? p->op[1].plan->expect_tx_bytes : 0);
  hg_val_t t = hg_sched_begin(b, p->sched);
  {
    hg_sched_work_t w;
    hg_sched_work(b, p->sched, t, &w);
    hg_val_t kb = hg_b_for(b, w.k_first, hg_b_bin(b, HG_ADD, w.k_first, w.k_count), hg_b_i32(b, 1));
    {
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
        if (tma[i]) fill_operand(b, p, i, &w, k0, pos);
      if (!tma_only && tx) hg_b_endif(b);
      for (int i = 0; i < 2; i++)
        if (!tma[i]) fill_operand(b, p, i, &w, k0, pos);
      /* Each kind of copy commits on its own: register copies fence and arrive, cp.async
       * arrives once its copies have landed (an operand of each: two arrivals a thread). */
      if (stores_arrive(cp_a, cp_b)) hg_pipe_commit_stores(b, p->pipe, pos);
      if (async_arrive(cp_a, cp_b)) hg_pipe_commit_cp_async(b, p->pipe, pos);
      hg_pipe_advance(b, p->pipe, pos);
    }
    hg_b_endfor(b);
  }
  hg_sched_end(b, p->sched);
  if (tma_only) hg_elect_end(b);
}
