/* The GEMM kernel's parameters (gemm_internal.h, hg_gemm_params_*): declared in the order
 * hg_gemm_op_run passes them (kernels.h), and the epilogue chain they feed - alpha, fp8's
 * scales, beta * C, the row and column scales, bias, aux, activation, residual, fp8 D's
 * scale - built from the problem. The GEMM and its split-K reduction pass take the same
 * list. */
#include <stdlib.h>

#include "hopgen/kernels.h"
#include "kernels/gemm_internal.h"

static hg_val_t param64(hg_builder_t *b, const char *name) {
  return hg_b_param(b, HG_T_I64, name);
}

static void add_step(hg_epilogue_t *e, hg_epi_step_t st) {
  e->steps[e->nsteps++] = st;
}

/* A vector step of f32 factors along M (A's rows) or N (multiply: scales, not a bias). */
static hg_epi_step_t scale_vector(hg_val_t ptr, bool along_n) {
  return (hg_epi_step_t){
      .kind = HG_EPI_BIAS, .ptr = ptr, .dtype = HG_F32, .along_n = along_n, .multiply = true};
}

hg_status_t hg_gemm_acc_vars(hg_builder_t *b, const hg_gemm_kernel_t *k, const gemm_plan_t *g,
                             hg_val_t **acc, hg_val_t **partial) {
  /* fp8's promotion: its partial sets after the f32 one */
  const int sets = hg_gemm_acc_sets(&k->problem, &k->config);
  const int n = g->mma.acc_count;
  *acc = malloc(sizeof(hg_val_t) * (size_t)(n * sets));
  if (!*acc) return hg_error(HG_ERR_NOMEM, "out of memory for %d accumulators", n * sets);
  for (int i = 0; i < n * sets; i++) (*acc)[i] = hg_b_var(b, HG_T_F32, HG_NONE);
  *partial = sets > 1 ? *acc + n : NULL;
  return hg_ok();
}

hg_status_t hg_gemm_params_declare(hg_builder_t *b, const hg_gemm_kernel_t *k, gemm_params_t *x,
                                   hg_epilogue_t *e) {
  const hg_gemm_problem_t *p = &k->problem;
  const bool grouped = p->group != HG_GROUP_NONE;
  *x = (gemm_params_t){0};
  x->tmap_aux = x->tmap_sa = x->tmap_sb = HG_NONE;
  e->d_type = p->d_type;
  e->amax_ptr = e->amax_state = e->amax_var = HG_NONE;
  for (int i = 0; i < 2; i++) {
    const bool a = i == 0;
    if (a ? k->a_tma : k->b_tma) {
      *(a ? &x->tmap_a : &x->tmap_b) = hg_b_param_tmap(b, a ? "tmap_a" : "tmap_b");
    } else {
      *(a ? &x->a_ptr : &x->b_ptr) = param64(b, a ? "a" : "b");
      *(a ? &x->lda : &x->ldb) = param64(b, a ? "lda" : "ldb");
      *(a ? &x->bsa : &x->bsb) = param64(b, a ? "batch_stride_a" : "batch_stride_b");
    }
  }
  if (k->tma_store) {
    hg_val_t tmap_d = hg_b_param_tmap(b, "tmap_d");
    if (e->tma) e->tmap_d = tmap_d;
  }
  if (k->aux_tma) x->tmap_aux = hg_b_param_tmap(b, "tmap_aux");
  if (k->scales_tma) {
    x->tmap_sa = hg_b_param_tmap(b, "tmap_scale_a");
    x->tmap_sb = hg_b_param_tmap(b, "tmap_scale_b");
    x->scale_rank_a = k->map_scale_a.rank;
    x->scale_rank_b = k->map_scale_b.rank;
  }
  x->scale_a_pad =
      hg_block_scales_a_rows(k->config.tile_m, p->group == HG_GROUP_CONTIGUOUS) - k->config.tile_m;
  e->d_ptr = param64(b, "d");
  /* A and B swapped: the kernel's rows are D's columns (and C's, the residual's, aux's) */
  e->trans = k->swapped;
  hg_val_t c_ptr = param64(b, "c");
  x->M = e->m = hg_b_param(b, HG_T_I32, "m");
  x->N = e->n = hg_b_param(b, HG_T_I32, "n");
  x->K = hg_b_param(b, HG_T_I32, "k");
  x->batch = e->batches = hg_b_param(b, HG_T_I32, "batch");
  hg_val_t ldc = param64(b, "ldc");
  e->ldd = param64(b, "ldd");
  hg_val_t bsc = param64(b, "batch_stride_c");
  e->batch_stride_d = param64(b, "batch_stride_d");
  hg_val_t alpha = hg_b_param(b, HG_T_F32, "alpha");
  hg_val_t beta = hg_b_param(b, HG_T_F32, "beta");
  /* D = alpha (* scale_a * scale_b for fp8: device pointers, null meaning 1) * A x B + beta C */
  add_step(e, (hg_epi_step_t){.kind = HG_EPI_SCALE, .value = alpha});
  if (hg_dtype_bits(p->a_type) == 8)
    for (int i = 0; i < 2; i++) {
      hg_val_t ptr = param64(b, i ? "scale_b" : "scale_a");
      *(i ? &x->scale_b : &x->scale_a) = ptr;
      /* grouped: one B scale per group: the step reads the unit's group's, set per unit */
      if (i && grouped && p->scale == HG_SCALE_TENSOR)
        ptr = x->scale_b_at = hg_b_var(b, HG_T_I64, ptr);
      /* per tensor: one factor; row-wise: vectors along M (A's) and N (B's), staged like the
       * chain's; block-wise: applied in the main loop */
      if (p->scale == HG_SCALE_TENSOR)
        add_step(e, (hg_epi_step_t){.kind = HG_EPI_SCALE_PTR, .ptr = ptr});
      else if (p->scale == HG_SCALE_ROW)
        add_step(e, scale_vector(ptr, i == 1));
    }
  add_step(e, (hg_epi_step_t){.kind = HG_EPI_BETA_C,
                              .value = beta,
                              .ptr = c_ptr,
                              .ld = ldc,
                              .batch_stride = bsc,
                              .dtype = p->c_type});
  /* the epilogue chain (kernels.h): row and column scales, bias, activation, residual */
  for (int i = 0; i < 2; i++)
    if (i ? p->colscale : p->rowscale) {
      hg_val_t ptr = x->vec[i] = param64(b, i ? "colscale" : "rowscale");
      /* grouped: column scales are per group (groups x N), and a masked GEMM's row scales
       * per group's batch (groups x M): the step reads the unit's group's, set per unit */
      if (grouped && (i == 1 || p->group == HG_GROUP_MASKED))
        ptr = x->vec_at[i] = hg_b_var(b, HG_T_I64, ptr);
      add_step(e, scale_vector(ptr, i == 1));
    }
  if (p->bias != HG_BIAS_NONE)
    add_step(e, (hg_epi_step_t){.kind = HG_EPI_BIAS,
                                .ptr = param64(b, "bias"),
                                .dtype = p->bias_type,
                                .along_n = p->bias == HG_BIAS_N});
  /* the aux output (the values the activation takes) is stored as the chain reaches it, but
   * its parameters come after the residual's: see below */
  int aux_step = -1;
  if (p->aux) {
    aux_step = e->nsteps;
    add_step(e, (hg_epi_step_t){.kind = HG_EPI_AUX, .dtype = p->aux_type});
  }
  if (p->act != HG_ACT_NONE)
    add_step(e, (hg_epi_step_t){.kind = HG_EPI_ACT,
                                .act = p->act,
                                .lo = p->act_lo,
                                .hi = p->act_hi,
                                .gelu = (hg_gelu_alg_t)k->config.gelu});
  /* the residual: + 1 x R, R of C's type laid out as D */
  if (p->residual)
    add_step(e, (hg_epi_step_t){.kind = HG_EPI_BETA_C,
                                .value = hg_b_f32(b, 1.0f),
                                .ptr = param64(b, "residual"),
                                .ld = e->ldd,
                                .batch_stride = e->batch_stride_d,
                                .dtype = p->c_type});
  /* fp8 D: its output scale (a device pointer, null meaning 1) last, before the saturating
   * conversion */
  if (hg_dtype_bits(p->d_type) == 8)
    add_step(e, (hg_epi_step_t){.kind = HG_EPI_SCALE_PTR, .ptr = param64(b, "scale_d")});
  if (aux_step >= 0) {
    hg_epi_step_t *st = &e->steps[aux_step];
    st->ptr = param64(b, "aux");
    st->ld = param64(b, "ldaux");
    st->batch_stride = param64(b, "batch_stride_aux");
    /* through D's buffers where the epilogue has them (not split-K's reduction pass) */
    st->buffered = (k->aux_tma && e->tma) || (k->aux_staged && (e->tma || e->staged));
    st->plan = k->aux_tma && e->tma ? &k->plan_aux : NULL;
    st->sub_n = k->aux_n;
    st->sw = k->aux_sw;
    st->tmap = x->tmap_aux;
  }
  /* the amax and its state (hg_epilogue_t: a running max and an arrival count, zero before
   * the launch and left so; gemm_op.c keeps them zeroed in the workspace) */
  if (p->amax) {
    e->amax_ptr = param64(b, "amax");
    e->amax_state = param64(b, "amax_state");
  }
  if (grouped) {
    /* the groups' rows on the device (gemm_op.c passes it after the epilogue's pointers); D's
     * row bound becomes the unit's group's end */
    x->groups = param64(b, "groups");
    e->m = hg_b_var(b, HG_T_I32, x->M);
  }
  if (k->config.splits > 1 || k->config.stream_k) x->workspace = param64(b, "workspace");
  /* fp8 block scaling's leading dimensions, the last parameters */
  if (p->scale == HG_SCALE_BLOCK) {
    x->scale_lda = param64(b, "scale_lda");
    x->scale_ldb = param64(b, "scale_ldb");
    /* grouped: each group's B scales are a ceil(N / 128) x scale_ldb table, one after the
     * other; a masked GEMM's A scales a ceil(K / 128) x scale_lda one per group's batch (a
     * contiguous GEMM's A scales are one table over all the rows) */
    if (grouped) {
      hg_val_t kb =
          hg_b_bin(b, HG_SHR_U, hg_b_bin(b, HG_ADD, x->K, hg_b_i32(b, 127)), hg_b_i32(b, 7));
      hg_val_t nb =
          hg_b_bin(b, HG_SHR_U, hg_b_bin(b, HG_ADD, x->N, hg_b_i32(b, 127)), hg_b_i32(b, 7));
      x->scale_group_b = hg_b_bin(b, HG_MUL, hg_b_sext(b, nb), x->scale_ldb);
      if (p->group == HG_GROUP_MASKED)
        x->scale_group_a = hg_b_bin(b, HG_MUL, hg_b_sext(b, kb), x->scale_lda);
    }
  }
  return hg_builder_status(b);
}

void hg_gemm_params_unit(hg_builder_t *b, const gemm_params_t *x, hg_epilogue_t *e,
                         const hg_sched_work_t *w) {
  /* D's rows end with the unit's group; fp8 B's scale is the group's */
  hg_b_assign(b, e->m, w->m_end);
  if (!hg_val_is_none(x->scale_b_at))
    hg_b_assign(b, x->scale_b_at,
                hg_b_select(b, hg_b_cmp(b, HG_EQ, x->scale_b, hg_b_i64(b, 0)), x->scale_b,
                            hg_b_mad(b, hg_b_sext(b, w->batch), hg_b_i64(b, 4), x->scale_b)));
  /* row-wise: the group's vector, (group x extent) f32 in */
  for (int i = 0; i < 2; i++)
    if (!hg_val_is_none(x->vec_at[i]))
      hg_b_assign(b, x->vec_at[i],
                  hg_b_mad(b, hg_b_sext(b, hg_b_bin(b, HG_MUL, w->batch, i ? x->N : x->M)),
                           hg_b_i64(b, 4), x->vec[i]));
}

hg_operand_copy_t hg_gemm_params_operand(const hg_gemm_kernel_t *k, const gemm_plan_t *g,
                                         const gemm_params_t *x, int i) {
  const hg_gemm_problem_t *p = &k->problem;
  const bool a = i == 0;
  return (hg_operand_copy_t){.plan = !(a ? k->a_tma : k->b_tma) ? NULL
                                     : a                        ? &k->plan_a
                                                                : &k->plan_b,
                             .tmap = a ? x->tmap_a : x->tmap_b,
                             /* a contiguous grouped GEMM's A is one matrix */
                             .batch_zero = a && p->group == HG_GROUP_CONTIGUOUS,
                             .cp = a ? &g->cp_a : &g->cp_b,
                             .ptr = a ? x->a_ptr : x->b_ptr,
                             .ld = a ? x->lda : x->ldb,
                             .batch_stride = a ? x->bsa : x->bsb,
                             .mn = a ? x->M : x->N,
                             .k = x->K,
                             .batches = x->batch,
                             .dtype = a ? p->a_type : p->b_type,
                             .k_major = a ? p->a_k_major : p->b_k_major};
}

hg_block_scales_t hg_gemm_params_block_scales(const gemm_params_t *x, hg_val_t row0, int atoms_m) {
  return (hg_block_scales_t){.scale_a = x->scale_a,
                             .scale_b = x->scale_b,
                             .lda = x->scale_lda,
                             .ldb = x->scale_ldb,
                             .m = x->M,
                             .n = x->N,
                             .row0 = row0,
                             .atoms_m = atoms_m,
                             .group_a = x->scale_group_a,
                             .group_b = x->scale_group_b,
                             .tmap_a = x->tmap_sa,
                             .tmap_b = x->tmap_sb,
                             .rank_a = x->scale_rank_a,
                             .rank_b = x->scale_rank_b,
                             .a_pad = x->scale_a_pad};
}

hg_status_t hg_gemm_params_sched(hg_builder_t *b, const hg_gemm_kernel_t *k, const gemm_params_t *x,
                                 const hg_cluster2d_t *cl, const hg_roles_t *roles,
                                 hg_sched_t *out) {
  const hg_gemm_problem_t *p = &k->problem;
  const hg_gemm_config_t *c = &k->config;
  hg_sched_spec_t ss = hg_gemm_sched_spec(c);
  hg_val_t kblocks = hg_b_bin(b, HG_DIV_U, hg_b_bin(b, HG_ADD, x->K, hg_b_i32(b, c->tile_k - 1)),
                              hg_b_i32(b, c->tile_k));
  if (p->group == HG_GROUP_NONE)
    return hg_sched_make(b, &ss, cl, x->M, x->N, x->batch, kblocks, out);
  ss.kind = HG_SCHED_GROUPED;
  ss.contiguous = p->group == HG_GROUP_CONTIGUOUS;
  return hg_sched_make_grouped(b, &ss, cl, x->M, x->N, x->batch, p->batch, x->groups, kblocks,
                               roles->tid, roles->threads, out);
}

hg_status_t hg_gemm_ring_make(hg_builder_t *b, const hg_gemm_kernel_t *k, const gemm_plan_t *g,
                              gemm_ring_t *out) {
  const hg_gemm_config_t *c = &k->config;
  const bool staged_scales = c->block_scales == HG_BLOCK_SCALES_SMEM;
  HG_TRY(hg_cluster2d_make(b, c->cluster_m, c->cluster_n, &out->cl));
  const hg_gmma_operand_t *oa = &g->mma.tm.a_op, *ob = &g->mma.tm.b_op;
  HG_TRY(hg_smem_ring_make(b, k->a_tma ? k->plan_a.smem_bytes : oa->stage_bytes,
                           k->a_tma ? k->plan_a.smem_align_bytes : oa->align_bytes, c->stages,
                           &out->a));
  HG_TRY(hg_smem_ring_make(b, k->b_tma ? k->plan_b.smem_bytes : ob->stage_bytes,
                           k->b_tma ? k->plan_b.smem_align_bytes : ob->align_bytes, c->stages,
                           &out->b));
  HG_TRY(hg_cp_async_staging_make(b, k->a_tma ? NULL : &g->cp_a, &out->stg_a));
  HG_TRY(hg_cp_async_staging_make(b, k->b_tma ? NULL : &g->cp_b, &out->stg_b));
  if (staged_scales)
    HG_TRY(hg_smem_ring_make(b,
                             hg_block_scales_stage_bytes(hg_block_scales_a_rows(
                                 c->tile_m, k->problem.group == HG_GROUP_CONTIGUOUS)),
                             HG_BLOCK_SCALES_STAGE_ALIGN, c->stages, &out->s));
  /* full[s]: the producer's arrival(s) plus the TMA bytes (and the side copy's lanes);
   * empty[s]: one arrival per consumer warp of every CTA that receives this CTA's
   * multicasts. */
  const hg_pipe_spec_t ps = {
      .stages = c->stages,
      .full_arrivals =
          hg_producer_full_arrivals(k->a_tma ? NULL : &g->cp_a, k->b_tma ? NULL : &g->cp_b) +
          (!staged_scales  ? 0
           : k->scales_tma ? HG_SIDE_COPY_TMA_ARRIVALS
                           : HG_SIDE_COPY_ARRIVALS),
      .empty_arrivals = 4 * (g->pingpong ? 1 : g->consumers) * hg_cluster2d_peers(&out->cl)};
  return hg_pipe_make(b, &ps, &out->pipe);
}

hg_mainloop_t hg_gemm_params_mainloop(hg_builder_t *b, const hg_gemm_kernel_t *k,
                                      const gemm_plan_t *g, const gemm_ring_t *rg,
                                      const hg_roles_t *r, const hg_val_t *partial,
                                      hg_block_scales_t *bs) {
  const hg_gemm_config_t *c = &k->config;
  const bool block = k->problem.scale == HG_SCALE_BLOCK,
             staged = c->block_scales == HG_BLOCK_SCALES_SMEM;
  /* staggered promotions: the second consumer's first group is half a group short */
  const int promote = hg_gemm_promote(&k->problem);
  const hg_val_t phase = c->promote_overlap & HG_PROMOTE_STAGGER
                             ? hg_b_select(b, hg_b_cmp(b, HG_EQ, r->consumer, hg_b_i32(b, 1)),
                                           hg_b_i32(b, promote / 2), hg_b_i32(b, 0))
                             : HG_NONE;
  return (hg_mainloop_t){
      .mma = &g->mma,
      .pipe = &rg->pipe,
      .ring_a = &rg->a,
      .ring_b = &rg->b,
      .cluster = &rg->cl,
      .fence_proxy = !k->a_tma || !k->b_tma,
      .promote = promote,
      .partial = partial,
      .kblock_scales = block && !staged ? hg_block_scales_load : NULL,
      .kblock_scales_staged = block && staged ? hg_block_scales_load_staged : NULL,
      .ring_s = staged ? &rg->s : NULL,
      .scales_ctx = bs,
      .scale_runs = block ? hg_block_scales_runs(c->tile_n) : 0,
      .phase = phase,
      .partial2 = c->promote_overlap & HG_PROMOTE_DOUBLE ? partial + g->mma.acc_count : NULL,
      /* MMA turns: whether consumer 0 has taken its first, across the units */
      .turns = c->promote_overlap & HG_PROMOTE_TURNS ? hg_b_var(b, HG_T_PRED, hg_b_pred(b, false))
                                                     : HG_NONE};
}
