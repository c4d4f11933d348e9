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

#include "hopgen/kernels.h"
#include "kernels/gemm_internal.h"

typedef struct gemm_gen {
  hg_builder_t *b;
  const hg_gemm_kernel_t *k;
  const gemm_plan_t *g;
  hg_roles_t roles;
  gemm_ring_t rg; /* the cluster, the stage rings and their barriers */
  hg_sched_t sched;
  hg_splitk_t splitk;   /* when config.splits > 1 */
  hg_streamk_t streamk; /* when config.stream_k */
  bool reduce;          /* building split-K's reduction pass, not the GEMM */
  hg_epilogue_t epi;
  /* grouped with a TMA epilogue: the same chain storing element by element, for the tiles
   * that end past their group's rows */
  hg_epilogue_t epi_direct;
  gemm_params_t prm;
} gemm_gen_t;

static bool grouped(const gemm_gen_t *x) {
  return x->k->problem.group != HG_GROUP_NONE;
}

/* Split-K summed by a second kernel, the reduction pass, which runs the epilogue: the GEMM
 * only stores partial tiles (not by atomic adds, not reduced in the GEMM). */
static bool reduction_pass(const hg_gemm_config_t *c) {
  return c->splits > 1 && !c->split_atomic && !c->split_scatter;
}

static hg_val_t i32(gemm_gen_t *x, int32_t v) {
  return hg_b_i32(x->b, v);
}

/* The calling consumer thread's index among the threads holding its tile. */
static hg_val_t tile_thread(gemm_gen_t *x) {
  const hg_roles_t *r = &x->roles;
  return x->g->pingpong ? r->wg_tid : hg_b_mad(x->b, r->consumer, i32(x, 128), r->wg_tid);
}

static bool staged_scales(const gemm_gen_t *x) {
  return x->k->config.block_scales == HG_BLOCK_SCALES_SMEM;
}

static void emit_producer(gemm_gen_t *x) {
  hg_producer_t pr = {.sched = &x->sched,
                      .pipe = &x->rg.pipe,
                      .cluster = &x->rg.cl,
                      .roles = &x->roles,
                      .ring = {&x->rg.a, &x->rg.b},
                      .staging = {&x->rg.stg_a, &x->rg.stg_b},
                      .tile_k = x->k->config.tile_k};
  for (int i = 0; i < 2; i++) pr.op[i] = hg_gemm_params_operand(x->k, x->g, &x->prm, i);
  /* staged block scales: the producer's second warp copies each k-block's into its stage */
  hg_block_scales_t bs = hg_gemm_params_block_scales(&x->prm, HG_NONE, 0);
  bs.tile_m = x->k->config.tile_m;
  bs.tile_n = x->k->config.tile_n;
  const hg_side_copy_t side = hg_block_scales_side(&bs, &x->rg.s);
  if (staged_scales(x)) pr.side = &side;
  hg_producer_emit(x->b, &pr);
}

/* The unit's tile through epilogue e (the accumulators' rows from the thread's first). The
 * batch of D: a contiguous grouped GEMM's D is one matrix (its rows are the groups'). */
static hg_status_t emit_tile(gemm_gen_t *x, const hg_epilogue_t *e, const hg_val_t *acc,
                             const hg_acc_map_t *am, const hg_sched_work_t *w, hg_val_t t_row,
                             hg_val_t t_col, hg_val_t slot_row0) {
  hg_builder_t *b = x->b;
  return hg_epilogue_emit(b, e, acc, am, hg_b_bin(b, HG_ADD, w->m0, t_row),
                          hg_b_bin(b, HG_ADD, w->n0, t_col), hg_b_bin(b, HG_ADD, w->m0, slot_row0),
                          w->n0, x->k->problem.group == HG_GROUP_CONTIGUOUS ? i32(x, 0) : w->batch,
                          &x->roles);
}

/* Split-K in the GEMM (config.split_scatter; builders.h, hg_splitk_scatter_*): arrive, then
 * group g of the thread's accumulator chunks summed over every split's slot and through the
 * epilogue by split g mod splits, the map cropped to the group's values as the reduction
 * pass does. */
static hg_status_t emit_scatter(gemm_gen_t *x, const hg_acc_map_t *am, const hg_sched_work_t *w,
                                hg_val_t t_row, hg_val_t t_col, hg_val_t slot_row0,
                                const hg_val_t *acc) {
  hg_builder_t *b = x->b;
  const hg_splitk_t *s = &x->splitk;
  hg_val_t row0 = hg_b_bin(b, HG_ADD, w->m0, t_row);
  hg_val_t splits = x->sched.splits;
  hg_splitk_t slots;
  hg_val_t tile = hg_splitk_scatter_arrive(b, s, am, w, x->prm.M, x->prm.N, x->prm.batch, splits,
                                           row0, &x->roles, acc, &slots);
  const int chunks = s->acc_count / 4;
  const int q = hg_splitk_scatter_group_chunks(s->acc_count, s->splits);
  hg_val_t thread = tile_thread(x);
  hg_val_t rows_left = hg_b_bin(b, HG_SUB, x->prm.M, row0);
  hg_acc_map_t crop = {.rows = am->rows, .cols = am->cols};
  crop.v = malloc(sizeof(int) * (size_t)am->rows * (size_t)am->cols);
  if (!crop.v) return hg_error(HG_ERR_NOMEM, "out of memory for split-K in the GEMM");
  hg_status_t st = hg_ok();
  hg_b_comment(b, "split-K in the GEMM: this split's share of the tile, summed in split order");
  for (int gi = 0; gi * q < chunks && hg_is_ok(&st); gi++) {
    hg_b_if(b, hg_b_cmp(b, HG_EQ, hg_b_bin(b, HG_REM_U, i32(x, gi), splits), w->split));
    hg_val_t keep[4], sum[16];
    for (int i = 0; i < 4 * q; i++) sum[i] = hg_b_var(b, HG_T_F32, HG_NONE);
    for (int i = 0; i < q; i++) keep[i] = hg_splitk_chunk_keep(b, am, rows_left, gi * q + i);
    hg_splitk_sum(b, &slots, tile, splits, thread, gi * q, q, keep, sum);
    for (int i = 0; i < am->rows * am->cols; i++) {
      const int v = am->v[i];
      crop.v[i] = v >= 4 * gi * q && v < 4 * (gi + 1) * q ? v - 4 * gi * q : -1;
    }
    st = emit_tile(x, &x->epi, sum, &crop, w, t_row, t_col, slot_row0);
    hg_b_endif(b);
  }
  free(crop.v);
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
  hg_status_t st = hg_acc_thread_origin(b, tm, tile_thread(x), &t_row, &t_col);
  if (!hg_is_ok(&st)) {
    hg_acc_map_free(&am);
    return st;
  }
  hg_val_t slot_row0 = hg_b_bin(b, HG_MUL, wm, i32(x, rows));
  hg_block_scales_t bs =
      hg_gemm_params_block_scales(&x->prm, hg_block_scales_row0(b, r, slot_row0), tm->atoms_m);
  bs.tile_m = c->tile_m;
  bs.tile_n = c->tile_n;
  const bool block = x->k->problem.scale == HG_SCALE_BLOCK, staged = staged_scales(x);
  hg_mainloop_t ml = hg_gemm_params_mainloop(b, x->k, x->g, &x->rg, r, partial, &bs);
  /* ,pa: the next unit's first k-block issued before this unit's epilogue (its stage and
   * factors kept in variables across the epilogue, landed in acc after it) */
  const bool ahead = c->promote_overlap & HG_PROMOTE_AHEAD;
  hg_val_t ahead_stage = HG_NONE, ahead_f[HG_BLOCK_SCALES_MAX_F];
  if (ahead) {
    ml.ahead = hg_b_var(b, HG_T_PRED, hg_b_pred(b, false));
    ahead_stage = hg_b_var(b, HG_T_I32, i32(x, 0));
    for (int i = 0; i < HG_BLOCK_SCALES_MAX_F; i++)
      ahead_f[i] = hg_b_var(b, HG_T_F32, hg_b_f32(b, 0.0f));
  }
  hg_pipe_pos_t pos = hg_pipe_start(b);
  hg_val_t iter = hg_b_var(b, HG_T_I32, i32(x, 0));
  /* split-K by the reduction pass: this kernel stores partial tiles and the pass runs the
   * epilogue, its amax included; no running amax here (drain then publishes nothing) */
  if (!reduction_pass(c)) hg_epilogue_begin(b, &x->epi);
  /* the consumers' own scheduler, its divisors prepared here (where hg_gemm_sched_prepared
   * says, and the grid walks enough units) while they wait for the first stage, a copy in
   * shared memory per consumer warpgroup (its first thread writes it, its barrier publishes
   * it): each tile's coordinates without run-time divisions between its epilogue and its next
   * main loop (the producer runs ahead and keeps the plain form) */
  hg_sched_t sched = x->sched;
  if (hg_gemm_sched_prepared(&x->k->problem, c)) {
    const uint32_t off =
        hg_b_smem_reserve(b, HG_SCHED_PREPARED_BYTES * (uint32_t)x->g->consumers, 16);
    hg_val_t slot =
        hg_b_mad(b, r->consumer, i32(x, HG_SCHED_PREPARED_BYTES), hg_b_smem_addr(b, off));
    hg_sched_prepare(b, &sched, slot, hg_b_cmp(b, HG_EQ, r->wg_tid, i32(x, 0)));
    hg_roles_consumer_sync(b, r);
  }
  hg_val_t t = hg_sched_begin(b, &sched);
  {
    hg_sched_work_t w;
    hg_sched_work(b, &sched, t, &w);
    hg_roles_turn_begin(b, r, pp, &x->rg.pipe, pos, iter, w.k_count);
    if (grouped(x)) hg_gemm_params_unit(b, &x->prm, &x->epi, &w);
    hg_epi_prefetch_t pf;
    if (x->epi.vectors) {
      st = hg_epilogue_prefetch(b, &x->epi, w.m0, w.n0, r, &pf);
      x->epi.prefetch = x->epi_direct.prefetch = &pf;
    }
    bs.m0 = w.m0;
    bs.n0 = w.n0;
    bs.k_first = w.k_first;
    /* grouped block scales: the unit's group's tables, read directly by the main loop */
    if (block && !staged && grouped(x)) {
      bs.scale_a = hg_block_scales_group_ptr(b, x->prm.scale_a, bs.group_a, w.batch);
      bs.scale_b = hg_block_scales_group_ptr(b, x->prm.scale_b, bs.group_b, w.batch);
    }
    hg_mainloop_emit(b, &ml, acc, pos, w.k_count, wm, r);
    if (pp) hg_roles_turn_handover(b, r, hg_sched_has_next(b, &sched, t));
    if (ahead) {
      /* the next unit's first k-block into the partial sums while this one's epilogue runs
       * (acc holds this unit's sums until then); the scales' context moves to that unit */
      hg_b_assign(b, ml.ahead, hg_b_pred(b, false));
      hg_b_if(b, hg_sched_has_next(b, &sched, t));
      hg_sched_work_t w2;
      hg_sched_work(b, &sched, hg_sched_next(b, &sched, t), &w2);
      bs.m0 = w2.m0;
      bs.n0 = w2.n0;
      bs.k_first = w2.k_first;
      hg_mainloop_issue_ahead(b, &ml, pos, wm, r, ahead_f, ahead_stage);
      hg_b_assign(b, ml.ahead, hg_b_pred(b, true));
      hg_b_endif(b);
    }
    /* grouped: TMA stores only for a tile whose rows all lie in its group (a uniform
     * branch: the tile's origin and its group's end are the CTA's) */
    const bool two = grouped(x) && x->epi.tma;
    if (c->splits > 1 && c->split_atomic) {
      /* split-K by atomics: added into the tile's sums; the last split runs the epilogue */
      hg_b_if(b, hg_splitk_add_tile(b, &x->splitk, &am, &w, x->prm.M, x->prm.N, sched.splits,
                                    hg_b_bin(b, HG_ADD, w.m0, t_row), r, acc));
      st = emit_tile(x, &x->epi, acc, &am, &w, t_row, t_col, slot_row0);
      hg_b_endif(b);
    } else if (c->splits > 1 && c->split_scatter) {
      /* split-K in the GEMM: the partial tile to its slot, then, once every split of the
       * tile has stored, this split's share of the tile summed in split order through the
       * epilogue */
      if (hg_is_ok(&st)) st = emit_scatter(x, &am, &w, t_row, t_col, slot_row0, acc);
    } else if (c->splits > 1) {
      /* split-K: the partial tile to the workspace; the reduction pass runs the epilogue */
      st = hg_splitk_store_tile(b, &x->splitk, &am, &w, x->prm.M, x->prm.N,
                                hg_b_bin(b, HG_ADD, w.m0, t_row), tile_thread(x), acc);
    } else if (c->stream_k) {
      /* stream-K: a unit past the tile's k-block 0 publishes its partial; the one holding
       * k-block 0 adds the later clusters' and runs the epilogue, once per tile */
      hg_val_t row0 = hg_b_bin(b, HG_ADD, w.m0, t_row);
      hg_b_if(b, hg_b_cmp(b, HG_GT_S, w.k_first, i32(x, 0)));
      hg_streamk_publish(b, &x->streamk, &am, r, x->prm.M, row0, acc);
      hg_b_else(b);
      hg_streamk_fixup(b, &x->streamk, &sched, &w, &am, r, x->prm.M, row0, acc);
      st = emit_tile(x, &x->epi, acc, &am, &w, t_row, t_col, slot_row0);
      hg_b_endif(b);
    } else {
      if (two)
        hg_b_if(b, hg_b_cmp(b, HG_LE_S, hg_b_bin(b, HG_ADD, w.m0, i32(x, c->tile_m)), w.m_end));
      st = emit_tile(x, &x->epi, acc, &am, &w, t_row, t_col, slot_row0);
      if (two) {
        hg_b_else(b);
        if (hg_is_ok(&st)) st = emit_tile(x, &x->epi_direct, acc, &am, &w, t_row, t_col, slot_row0);
        hg_b_endif(b);
      }
    }
    if (ahead) {
      /* the epilogue has read acc: the k-block issued ahead lands there */
      hg_mainloop_land_ahead(b, &ml, acc, ahead_f, ahead_stage, r);
    }
    x->epi.prefetch = x->epi_direct.prefetch = NULL;
    hg_b_endif(b);
    hg_b_assign(b, iter, hg_b_bin(b, HG_ADD, iter, i32(x, 1)));
  }
  hg_sched_end(b, &sched);
  if (!hg_val_is_none(ml.turns)) hg_roles_mma_turns_end(b, r, ml.turns);
  hg_epilogue_drain(b, &x->epi, r);
  hg_acc_map_free(&am);
  return st;
}

static hg_status_t build(gemm_gen_t *x, hg_val_t **acc) {
  hg_builder_t *b = x->b;
  const hg_gemm_kernel_t *k = x->k;
  const hg_gemm_problem_t *p = &k->problem;
  const hg_gemm_config_t *c = &k->config;
  const gemm_plan_t *g = x->g;
  /* split: the partial tiles go through the workspace and D is stored element by element
   * (the reduction pass, or split-K in the GEMM: not split-K by atomics); pass: a second
   * kernel sums them */
  const bool split = c->splits > 1 && !c->split_atomic;
  const bool pass = reduction_pass(c);
  const hg_roles_spec_t rs = hg_gemm_roles_spec(k, g, x->reduce);
  HG_TRY(hg_roles_make(b, &rs, &x->roles));
  /* split-K: the reduction pass may be scheduled now, to start as this grid's CTAs leave (it
   * waits for the whole grid before it reads a partial) */
  if (pass && !x->reduce) hg_b_griddep_launch_dependents(b);
  hg_epilogue_t *e = &x->epi;
  if (!x->reduce) HG_TRY(hg_gemm_ring_make(b, k, g, &x->rg));
  /* split-K's GEMM stores partial tiles and its reduction pass stores D directly */
  if (k->tma_store && !split)
    hg_epilogue_reserve_tma(b, e, &k->plan_d, g->epi_n, g->epi_buffers, g->epi_bytes, g->consumers);
  else if (k->staged_store && !x->reduce)
    hg_epilogue_reserve_staged(b, e, g->epi_sw, g->epi_n, g->epi_buffers, g->epi_bytes,
                               g->consumers);
  HG_TRY(hg_gemm_params_declare(b, k, &x->prm, e));
  /* ping-pong: a consumer holds a whole 128-row tile (up to 192 accumulators a thread), and an
   * activation's temporaries for a whole sub-tile spilled beside them; an aux of another
   * element size than D's (its pieces' writes beside them: bf16 aux beside e5m2 D spilled 68
   * bytes on 128x256 cooperative tiles otherwise) */
  e->act_in_write =
      g->pingpong || (p->aux && hg_dtype_bytes(p->aux_type) != hg_dtype_bytes(p->d_type));
  /* vector steps' values staged in shared memory, loaded before the main loop */
  if (hg_gemm_vectors_staged(p, c) && !split)
    hg_epilogue_reserve_vectors(b, e, c->tile_m, c->tile_n, g->consumers, g->pingpong);
  const hg_splitk_spec_t sk = hg_gemm_splitk_spec(k, g, x->prm.workspace);
  if (c->splits > 1) HG_TRY(hg_splitk_make(b, &sk, &x->splitk));
  const hg_streamk_spec_t ks = {g->mma.acc_count, g->consumers, g->pingpong, x->prm.workspace};
  if (c->stream_k) HG_TRY(hg_streamk_make(b, &ks, &x->streamk));
  if (x->reduce)
    return hg_splitk_reduce_emit(b, &x->splitk, &g->mma.tm, e, &x->roles, x->prm.M, x->prm.N,
                                 x->prm.K);
  /* Launched as a programmatic dependent: the set-up overlaps the previous kernel; every
   * input read and output write comes after the wait (PTX ISA "griddepcontrol"), the grouped
   * scheduler's reads of the groups' rows (made with it) too. */
  if (grouped(x)) hg_b_griddep_wait(b);
  HG_TRY(hg_gemm_params_sched(b, k, &x->prm, &x->rg.cl, &x->roles, &x->sched));
  const hg_val_t tmaps[6] = {k->a_tma ? x->prm.tmap_a : HG_NONE,
                             k->b_tma ? x->prm.tmap_b : HG_NONE,
                             e->tma ? e->tmap_d : HG_NONE,
                             x->prm.tmap_aux,
                             x->prm.tmap_sa,
                             x->prm.tmap_sb};
  hg_pipe_init_cluster(b, &x->rg.pipe, &x->rg.cl, x->roles.tid, tmaps, 6);
  if (!grouped(x)) hg_b_griddep_wait(b);
  if (!pass) hg_b_griddep_launch_dependents(b);

  hg_roles_producer(b, &x->roles);
  emit_producer(x);
  hg_roles_consumer(b, &x->roles);
  hg_val_t *partial;
  HG_TRY(hg_gemm_acc_vars(b, k, g, acc, &partial));
  x->epi_direct = hg_epilogue_direct(&x->epi);
  HG_TRY(emit_consumer(x, *acc, partial));
  hg_roles_end(b, &x->roles);
  /* No CTA may leave while a peer can still multicast into it or arrive on its barriers. */
  if (x->rg.cl.m * x->rg.cl.n > 1) hg_cluster2d_sync(b, &x->rg.cl);
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
  snprintf(rk.name, sizeof rk.name, "%s", out->reduce_name);
  hg_status_t st = build(&x, NULL);
  if (hg_is_ok(&st)) st = hg_kernel_finish(b, be, &rk);
  hg_builder_destroy(b);
  if (hg_is_ok(&st)) st = hg_kernel_append_entry(&out->k, &rk);
  out->reduce_threads = (uint32_t)x.roles.threads;
  out->reduce_smem = rk.smem_bytes;
  out->reduce_groups = hg_splitk_reduce_groups(g->mma.acc_count);
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
  if (hg_is_ok(&st) && out->config.mainloop == HG_MAINLOOP_LDG_MMASYNC)
    st = hg_gemm_decode_build(b, out); /* a kernel of its own orchestration: gemm_decode.c */
  else if (hg_is_ok(&st)) {
    gemm_gen_t x = {.b = b, .k = out, .g = g};
    st = build(&x, &acc);
    out->k.threads = (uint32_t)x.roles.threads;
    out->k.cluster[0] = (uint32_t)(c->cluster_m * c->cluster_n);
    out->k.cluster[1] = out->k.cluster[2] = 1;
  }
  if (hg_is_ok(&st)) st = hg_kernel_finish(b, be, &out->k);
  if (hg_is_ok(&st) && reduction_pass(c)) st = generate_reduce(out, g, be);
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
