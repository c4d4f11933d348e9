/* The GEMM operation object (kernels.h): a kernel from hg_gemm_build, JIT-compiled through
 * the on-disk cache, sized as a persistent grid, and launched with the tensor maps of each
 * run's pointers. Launching allocates nothing and never synchronises, so it can be captured
 * in a CUDA graph.
 *
 * The kernels layer calls the runtime here and in the other drivers (gemm_bench.c,
 * tma_run.c, copy.c): generation stays pure in gemm_plan.c and gemm_gen.c. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hopgen/kernels.h"
#include "kernels/gemm_internal.h"

struct hg_gemm_op {
  hg_rt_t *rt;
  /* the caller's problem, normalised (the kernel's may be packed), A and B swapped as the
   * kernel's are (config.swap_ab) */
  hg_gemm_problem_t user;
  hg_gemm_kernel_t gk;
  /* operands repacked before each run (gk.repack_a/b): copy kernels, and where each packed
   * copy lies in a run's workspace (ws_at[i] bytes in; ws_bytes in all). scratch: the
   * workspace hg_gemm_op_run allocates on its first call (hg_gemm_op_run_workspace takes
   * the caller's instead). The copy kernels' PTX is the process's (hg_repack_kernel). Both
   * operands repacked: rp_pair, one launch of the pair kernel (rp_fn[0]) copies both, as each
   * cuLaunchKernelEx costs about 3 us of host time (issue 10: <= 5 us a run); else one copy
   * kernel per repacked operand. */
  hg_module_t *rp_mod[2];
  hg_function_t *rp_fn[2];
  bool rp_pair;
  size_t ws_at[2], ws_bytes;
  /* split-K (config.splits > 1): the partial tiles after the amax's state (amax_bytes in:
   * at the workspace's start without an amax), split_bytes in all, and the reduction pass
   * (gk.reduce_name, in the GEMM's module) over cta_tiles; by atomic adds (config.split_atomic) a
   * slot and counter per tile, no pass, and all of it flag_bytes (below: zero before a launch);
   * reduced in the GEMM (config.split_scatter) a counter per tile (the first flag_bytes) and the
   * pass's slots, no pass */
  size_t split_bytes;
  int64_t cta_tiles;
  /* stream-K (config.stream_k): its flags and slots after the amax's state, stream_k_bytes
   * in all, the first flag_bytes of them flags; flag_bytes must be zero before a launch: the
   * operation's own workspace is zeroed once when allocated (each launch leaves its flags
   * zero), a caller's before every run unless hg_gemm_args_t.workspace_zeroed (it may have
   * held anything since) */
  size_t stream_k_bytes, flag_bytes;
  /* an amax (problem.amax): its state (hg_epilogue_t.amax_state: running maxima and an
   * arrival count) in the workspace's first amax_bytes, zero before a launch as each launch
   * leaves it, then the split-K or stream-K part, then the repacked operands (ws_at);
   * zero_bytes: the leading bytes that must be zero before a launch (the state, then
   * flag_bytes, which the split-K or stream-K part starts with) */
  size_t amax_bytes, zero_bytes;
  hg_function_t *red_fn;
  hg_devptr_t scratch;
  /* The tensor maps of the last run (A, B, D) and the addresses they were encoded for: a run
   * with the same pointers reuses them (encoding is most of a launch's host time). */
  hg_tensormap_t map[6]; /* A, B, D, aux, A's and B's block scales */
  hg_devptr_t map_at[6];
  bool map_ok[6];
  hg_module_t *mod;
  hg_function_t *fn;
  hg_jit_info_t jit;
  int grid; /* CTAs of the persistent grid */
  double create_ms;
};

hg_status_t hg_kernels_load(hg_rt_t *rt, const hg_kernel_t *k, hg_module_t **mod,
                            hg_function_t **fn, hg_jit_info_t *info) {
  hg_jit_info_t local;
  HG_TRY(hg_rt_module_load(rt, k->ptx.data, mod, info ? info : &local));
  hg_status_t s = hg_rt_function(rt, *mod, k->name, k->smem_bytes, fn);
  if (!hg_is_ok(&s)) {
    hg_rt_module_unload(rt, *mod);
    *mod = NULL;
  }
  return s;
}

void hg_gemm_op_destroy(hg_gemm_op_t *op) {
  if (!op) return;
  for (int i = 0; i < 2; i++) {
    if (op->rp_mod[i]) hg_rt_module_unload(op->rt, op->rp_mod[i]);
  }
  if (op->scratch) hg_rt_free(op->rt, op->scratch);
  if (op->mod) hg_rt_module_unload(op->rt, op->mod);
  hg_gemm_kernel_free(&op->gk);
  free(op);
}

/* The persistent grid: as many clusters as run at once, no more than there are tiles. */
static hg_status_t size_grid(hg_gemm_op_t *op) {
  const hg_gemm_config_t *k = &op->gk.config;
  const hg_gemm_problem_t *p = &op->gk.problem;
  const int cs = k->cluster_m * k->cluster_n;
  hg_launch_t l = {.grid = {(uint32_t)cs, 1, 1},
                   .block = {op->gk.k.threads, 1, 1},
                   .cluster = {(uint32_t)cs, 1, 1},
                   .smem_bytes = op->gk.k.smem_bytes};
  int active = 0;
  HG_TRY(hg_rt_max_active_clusters(op->rt, op->fn, &l, &active));
  if (active < 1)
    return hg_error(HG_ERR_INVALID,
                    "the device cannot run even one %d-CTA cluster of %s (%u B shared memory, %u "
                    "threads per CTA)",
                    cs, op->gk.k.name, op->gk.k.smem_bytes, op->gk.k.threads);
  const hg_sched_spec_t ss = hg_gemm_sched_spec(k);
  /* a grouped GEMM's units depend on the groups' rows, known only on the device: every
   * cluster that fits (those without a unit leave at once) */
  const int64_t units =
      p->group != HG_GROUP_NONE ? active : hg_sched_units(&ss, p->m, p->n, p->batch);
  op->grid = (int)(units < active ? units : active) * cs;
  if (k->stream_k) {
    /* every cluster resident (one waits for another's partials), each with k-blocks */
    const int64_t kb = (p->k + k->tile_k - 1) / k->tile_k;
    op->grid = (int)hg_sched_streamk_clusters(&ss, p->m, p->n, p->batch, kb, active) * cs;
    op->flag_bytes = hg_streamk_flag_bytes(op->grid);
    op->stream_k_bytes =
        (hg_streamk_workspace_bytes(op->grid, (int64_t)k->tile_m * k->tile_n) + 255) & ~(size_t)255;
  }
  return hg_ok();
}

hg_status_t hg_gemm_op_create(hg_rt_t *rt, const hg_gemm_problem_t *p, const hg_gemm_config_t *c,
                              hg_backend_t be, hg_gemm_op_t **out) {
  return hg_gemm_op_create_repack(rt, p, c, be, false, out);
}

hg_status_t hg_gemm_op_create_repack(hg_rt_t *rt, const hg_gemm_problem_t *p,
                                     const hg_gemm_config_t *c, hg_backend_t be, bool force_repack,
                                     hg_gemm_op_t **out) {
  const double t0 = hg_now_ms();
  *out = NULL;
  hg_gemm_op_t *op = calloc(1, sizeof *op);
  if (!op) return hg_error(HG_ERR_NOMEM, "out of memory for a GEMM operation");
  op->rt = rt;
  op->user = *p;
  hg_status_t s = hg_gemm_problem_normalize(&op->user);
  if (hg_is_ok(&s))
    s = hg_gemm_build_repack(p, c, c ? c->mainloop : HG_MAINLOOP_AUTO, hg_rt_device(rt), be,
                             force_repack, &op->gk);
  if (hg_is_ok(&s) && op->gk.swapped) op->user = hg_gemm_problem_swapped(&op->user);
  if (hg_is_ok(&s)) s = hg_kernels_load(rt, &op->gk.k, &op->mod, &op->fn, &op->jit);
  if (hg_is_ok(&s)) s = size_grid(op);
  op->amax_bytes = op->gk.problem.amax ? (HG_AMAX_STATE_BYTES + 255) & ~(size_t)255 : 0;
  /* Split-K: a partial tile per split (hg_splitk_*), in the workspace after the amax's state,
   * and the reduction pass's entry. */
  if (hg_is_ok(&s) && op->gk.config.splits > 1) {
    const hg_gemm_config_t *k = &op->gk.config;
    hg_sched_spec_t tiles = hg_gemm_sched_spec(k);
    tiles.splits = 0;
    const int64_t ctas =
        hg_sched_units(&tiles, op->gk.problem.m, op->gk.problem.n, op->gk.problem.batch) *
        k->cluster_m * k->cluster_n;
    op->cta_tiles = ctas;
    const int64_t elems = (int64_t)k->tile_m * k->tile_n;
    if (k->split_atomic) {
      /* one slot and counter per tile, all zero before a launch, as each launch leaves
       * them: zeroed like stream-K's flags */
      op->split_bytes = (hg_splitk_atomic_workspace_bytes(ctas, elems) + 255) & ~(size_t)255;
      op->flag_bytes = op->split_bytes;
    } else if (k->split_scatter) {
      /* a counter per tile (zero before a launch, as each launch leaves it), then a slot per
       * split; the splits of a tile wait for each other, so every unit needs its own
       * resident CTA */
      op->flag_bytes = hg_splitk_scatter_counter_bytes(ctas);
      op->split_bytes = op->flag_bytes +
                        ((hg_splitk_workspace_bytes(k->splits, ctas, elems) + 255) & ~(size_t)255);
      hg_sched_spec_t ss = hg_gemm_sched_spec(k);
      const int64_t units =
          hg_sched_units(&ss, op->gk.problem.m, op->gk.problem.n, op->gk.problem.batch) *
          k->cluster_m * k->cluster_n;
      if (units > op->grid)
        s = hg_error(HG_ERR_UNSUPPORTED,
                     "split-K reduced in the GEMM (,k%dr) needs every unit resident at once (the "
                     "splits of a tile wait for each other): %" PRId64
                     " CTAs, but only %d of %s fit on this device; use fewer splits or ,k%d "
                     "(the reduction pass)",
                     k->splits, units, op->grid, op->gk.k.name, k->splits);
    } else {
      s = hg_rt_function(rt, op->mod, op->gk.reduce_name, op->gk.reduce_smem, &op->red_fn);
      op->split_bytes = (hg_splitk_workspace_bytes(k->splits, ctas, elems) + 255) & ~(size_t)255;
    }
  }
  op->ws_bytes = op->amax_bytes + (op->split_bytes ? op->split_bytes : op->stream_k_bytes);
  op->zero_bytes = op->flag_bytes ? op->amax_bytes + op->flag_bytes : op->amax_bytes;
  /* Repacked operands: the copy kernel, loaded here (one pair kernel for both where both
   * are repacked: their elements have one size in every GEMM hopgen builds, 16-bit operands
   * being of one type and fp8 ones of one byte; two kernels otherwise), and the packed copy's
   * place in the workspace (256-byte aligned parts: TMA needs 16). */
  if (hg_is_ok(&s))
    op->rp_pair = op->gk.repack_a && op->gk.repack_b &&
                  hg_dtype_bytes(op->gk.problem.a_type) == hg_dtype_bytes(op->gk.problem.b_type);
  for (int i = 0; i < 2 && hg_is_ok(&s); i++) {
    if (!(i ? op->gk.repack_b : op->gk.repack_a)) continue;
    const hg_gemm_problem_t *k = &op->gk.problem;
    const int e = hg_dtype_bytes(i ? k->b_type : k->a_type);
    const int64_t bs = i ? k->batch_stride_b : k->batch_stride_a;
    const hg_kernel_t *rk = NULL;
    if (!(op->rp_pair && i == 1)) {
      s = hg_repack_kernel(e, op->rp_pair, &rk);
      if (hg_is_ok(&s)) s = hg_kernels_load(rt, rk, &op->rp_mod[i], &op->rp_fn[i], NULL);
    }
    op->ws_at[i] = op->ws_bytes;
    op->ws_bytes += ((size_t)(bs * k->batch) * (size_t)e + 255) & ~(size_t)255;
  }
  if (!hg_is_ok(&s)) {
    hg_gemm_op_destroy(op);
    return s;
  }
  op->create_ms = hg_now_ms() - t0;
  *out = op;
  return hg_ok();
}

const hg_gemm_kernel_t *hg_gemm_op_kernel(const hg_gemm_op_t *op) {
  return &op->gk;
}
const hg_jit_info_t *hg_gemm_op_jit(const hg_gemm_op_t *op) {
  return &op->jit;
}
int hg_gemm_op_grid(const hg_gemm_op_t *op) {
  return op->grid;
}
size_t hg_gemm_op_workspace_bytes(const hg_gemm_op_t *op) {
  return op->ws_bytes;
}
size_t hg_gemm_op_workspace_zero_bytes(const hg_gemm_op_t *op) {
  return op->zero_bytes;
}

/* The alignment a pointer has: its lowest set bit, at most 16 (0: 16, the null pointer). */
static int ptr_align(hg_devptr_t p) {
  for (int a = 1; a < 16; a *= 2)
    if (p & (hg_devptr_t)a) return a;
  return 16;
}

/* The base alignment an operand's path needs: TMA's 16 bytes, or the cp.async chunk. */
static hg_status_t check_base(const char *what, hg_devptr_t ptr, bool tma, int vec) {
  const int need = tma ? 16 : vec;
  if (ptr % (hg_devptr_t)need == 0) return hg_ok();
  return hg_error(HG_ERR_INVALID,
                  "%s at 0x%" PRIx64 " is not %d-byte aligned, which this operation's %s path "
                  "needs; create the operation with problem.%s_align = %d (or less)",
                  what, (uint64_t)ptr, need, tma ? "TMA" : "cp.async", what[0] == 'A' ? "a" : "b",
                  ptr_align(ptr));
}

/* The copy of operand i from the caller's rows into the packed scratch (hg_gen_repack). */
static hg_repack_args_t repack_args(const hg_gemm_op_t *op, int i, hg_devptr_t src,
                                    hg_devptr_t dst) {
  const hg_gemm_problem_t *u = &op->user, *k = &op->gk.problem;
  const bool am = i == 0;
  const bool kmaj = am ? u->a_k_major : u->b_k_major;
  return (hg_repack_args_t){
      .dst = dst,
      .src = src,
      .rows = am ? (kmaj ? u->m : u->k) : (kmaj ? u->n : u->k),
      .cols = am ? (kmaj ? u->k : u->m) : (kmaj ? u->k : u->n),
      .batch = u->batch,
      .ld_dst = am ? k->lda : k->ldb,
      .ld_src = am ? u->lda : u->ldb,
      .bs_dst = am ? k->batch_stride_a : k->batch_stride_b,
      .bs_src = am ? u->batch_stride_a : u->batch_stride_b,
  };
}

/* The repacked operands' copies: one launch for both (rp_pair), else one per operand. */
static hg_status_t repack(hg_gemm_op_t *op, hg_devptr_t a, hg_devptr_t b, hg_devptr_t workspace,
                          hg_stream_t stream) {
  const hg_gemm_kernel_t *gk = &op->gk;
  const hg_repack_args_t xa = repack_args(op, 0, a, workspace + op->ws_at[0]);
  const hg_repack_args_t xb = repack_args(op, 1, b, workspace + op->ws_at[1]);
  const int ea = hg_dtype_bytes(gk->problem.a_type), eb = hg_dtype_bytes(gk->problem.b_type);
  if (op->rp_pair) return hg_repack_pair_launch(op->rt, op->rp_fn[0], ea, &xa, &xb, stream);
  if (gk->repack_a) HG_TRY(hg_repack_launch(op->rt, op->rp_fn[0], ea, &xa, stream));
  if (gk->repack_b) HG_TRY(hg_repack_launch(op->rt, op->rp_fn[1], eb, &xb, stream));
  return hg_ok();
}

/* Tensor map i for address at: the last one when the address repeats, the last one pointed at
 * the new address when it does not (every other field is the operation's), encoded only on
 * the first run. A's and B's (i 0, 1) with the problem's L2 promotion
 * (hg_gemm_operand_l2_promotion), not the plan's. */
static hg_status_t encode(hg_gemm_op_t *op, int i, const hg_tensormap_params_t *params,
                          hg_devptr_t at, const char *what) {
  if (op->map_ok[i] && op->map_at[i] == at) return hg_ok();
  hg_tensormap_params_t m = *params;
  if (i < 2) m.l2_promotion = hg_gemm_operand_l2_promotion(&op->gk.problem, &op->gk.config, i);
  const hg_status_t s = op->map_ok[i] ? hg_rt_tensormap_replace_address(op->rt, &op->map[i], at)
                                      : hg_rt_tensormap_encode(op->rt, &m, at, &op->map[i]);
  op->map_ok[i] = hg_is_ok(&s);
  HG_TRY(hg_status_wrap(s, "%s", what));
  op->map_at[i] = at;
  return hg_ok();
}

static hg_status_t run(hg_gemm_op_t *op, const hg_gemm_args_t *x, bool caller_ws,
                       hg_devptr_t groups, hg_stream_t stream);

hg_status_t hg_gemm_op_run(hg_gemm_op_t *op, hg_devptr_t a, hg_devptr_t b, hg_devptr_t c,
                           hg_devptr_t d, hg_devptr_t scale_a, hg_devptr_t scale_b,
                           hg_stream_t stream) {
  const hg_gemm_args_t x = {.a = a, .b = b, .c = c, .d = d, .scale_a = scale_a, .scale_b = scale_b};
  return hg_gemm_op_run_args(op, &x, stream);
}

hg_status_t hg_gemm_op_run_workspace(hg_gemm_op_t *op, hg_devptr_t a, hg_devptr_t b, hg_devptr_t c,
                                     hg_devptr_t d, hg_devptr_t scale_a, hg_devptr_t scale_b,
                                     hg_devptr_t workspace, size_t workspace_bytes,
                                     hg_stream_t stream) {
  const hg_gemm_args_t x = {.a = a,
                            .b = b,
                            .c = c,
                            .d = d,
                            .scale_a = scale_a,
                            .scale_b = scale_b,
                            .workspace = workspace,
                            .workspace_bytes = workspace_bytes};
  return run(op, &x, true, 0, stream);
}

hg_status_t hg_gemm_op_run_args(hg_gemm_op_t *op, const hg_gemm_args_t *args, hg_stream_t stream) {
  if (!args) return hg_error(HG_ERR_INVALID, "hg_gemm_op_run_args: args is NULL");
  return run(op, args, args->workspace != 0, 0, stream);
}

hg_status_t hg_gemm_op_run_grouped(hg_gemm_op_t *op, const hg_gemm_args_t *args, hg_devptr_t groups,
                                   hg_stream_t stream) {
  if (!args) return hg_error(HG_ERR_INVALID, "hg_gemm_op_run_grouped: args is NULL");
  return run(op, args, args->workspace != 0, groups, stream);
}

/* One run. caller_ws: the workspace is the caller's (checked); else the operation's own,
 * allocated on the first run that needs one. */
static hg_status_t run(hg_gemm_op_t *op, const hg_gemm_args_t *x, bool caller_ws,
                       hg_devptr_t groups, hg_stream_t stream) {
  /* A and B swapped (config.swap_ab): the kernel's A is the caller's B, its row scales the
   * caller's column scales */
  const bool sw = op->gk.swapped;
  hg_devptr_t a = sw ? x->b : x->a, b = sw ? x->a : x->b, c = x->c, d = x->d;
  hg_devptr_t scale_a = sw ? x->scale_b : x->scale_a, scale_b = sw ? x->scale_a : x->scale_b;
  hg_devptr_t workspace = x->workspace, bias = x->bias;
  hg_devptr_t rowscale = sw ? x->colscale : x->rowscale, colscale = sw ? x->rowscale : x->colscale;
  hg_devptr_t residual = x->residual;
  hg_devptr_t scale_d = x->scale_d, amax = x->amax, aux = x->aux;
  size_t workspace_bytes = x->workspace_bytes;
  if (!caller_ws && op->ws_bytes) {
    if (!op->scratch) {
      HG_TRY(hg_status_wrap(hg_rt_alloc(op->rt, op->ws_bytes, &op->scratch),
                            "the workspace of this operation's amax state, split-K partials, "
                            "stream-K flags or repacked operands (%zu bytes; "
                            "hg_gemm_op_run_workspace takes the caller's): ",
                            op->ws_bytes));
      if (op->zero_bytes)
        HG_TRY(hg_status_wrap(hg_rt_memset8(op->rt, op->scratch, 0, op->zero_bytes, stream),
                              "zeroing the amax's state, the stream-K flags or split-K sums: "));
    }
    workspace = op->scratch;
    workspace_bytes = op->ws_bytes;
  }
  const hg_gemm_kernel_t *gk = &op->gk;
  const hg_gemm_problem_t *k = &gk->problem;
  if (gk->tma_store && d % 16 != 0)
    return hg_error(HG_ERR_INVALID,
                    "D at 0x%" PRIx64 " is not 16-byte aligned, which the TMA epilogue needs; "
                    "create the operation with problem.d_no_tma = true",
                    (uint64_t)d);
  if (gk->aux_tma && aux % 16 != 0)
    return hg_error(HG_ERR_INVALID,
                    "aux at 0x%" PRIx64 " is not 16-byte aligned, which its TMA store needs; "
                    "create the operation with problem.d_no_tma = true",
                    (uint64_t)aux);
  /* A repacked operand needs only its elements aligned (the copy kernel reads the aligned
   * 16-byte blocks around its rows); the others what their path needs. */
  const int ea = hg_dtype_bytes(k->a_type), eb = hg_dtype_bytes(k->b_type);
  HG_TRY(check_base(sw ? "B" : "A", a, gk->a_tma && !gk->repack_a, gk->repack_a ? ea : gk->a_vec));
  HG_TRY(check_base(sw ? "A" : "B", b, gk->b_tma && !gk->repack_b, gk->repack_b ? eb : gk->b_vec));
  if (k->group != HG_GROUP_NONE && (!groups || groups % 4 != 0))
    return hg_error(HG_ERR_INVALID,
                    "this grouped GEMM needs its groups' %s: a 4-byte aligned device array of %d "
                    "int32, given at 0x%" PRIx64,
                    k->group == HG_GROUP_CONTIGUOUS ? "cumulative end rows (offs)" : "row counts",
                    k->batch, (uint64_t)groups);
  if (k->group == HG_GROUP_NONE && groups)
    return hg_error(HG_ERR_INVALID, "groups given to a GEMM that is not grouped");
  if (k->beta != 0 && !c)
    return hg_error(HG_ERR_INVALID, "beta = %g but C is a null pointer", (double)k->beta);
  if (k->bias != HG_BIAS_NONE && !bias)
    return hg_error(HG_ERR_INVALID,
                    "this operation adds a %s bias along %c but no bias was given: pass its "
                    "device pointer in hg_gemm_args_t.bias (hg_gemm_op_run_args)",
                    hg_dtype_name(k->bias_type), (k->bias == HG_BIAS_N) != sw ? 'N' : 'M');
  if (bias % (hg_devptr_t)(k->bias_type == HG_F32 ? 4 : 2) != 0)
    return hg_error(HG_ERR_INVALID, "the bias at 0x%" PRIx64 " is not aligned to its elements",
                    (uint64_t)bias);
  const struct {
    bool on;
    hg_devptr_t ptr;
    const char *what, *field;
    int align;
  } vec[6] = {
      {k->rowscale, rowscale, sw ? "a colscale" : "a rowscale", sw ? "colscale" : "rowscale", 4},
      {k->colscale, colscale, sw ? "a rowscale" : "a colscale", sw ? "rowscale" : "colscale", 4},
      {k->residual, residual, "a residual", "residual", hg_dtype_bytes(k->c_type)},
      {k->amax, amax, "an amax", "amax", 4},
      {k->aux, aux, "an aux output", "aux", hg_dtype_bytes(k->aux_type)},
      {false, scale_d, "fp8 D's scale", "scale_d", 4}};
  for (int i = 0; i < 6; i++) {
    if (vec[i].on && !vec[i].ptr)
      return hg_error(HG_ERR_INVALID,
                      "this operation's epilogue has %s but none was given: pass its device "
                      "pointer in hg_gemm_args_t.%s (hg_gemm_op_run_args)",
                      vec[i].what, vec[i].field);
    if (vec[i].ptr % (hg_devptr_t)vec[i].align != 0)
      return hg_error(HG_ERR_INVALID,
                      "hg_gemm_args_t.%s at 0x%" PRIx64 " is not aligned to its elements",
                      vec[i].field, (uint64_t)vec[i].ptr);
  }
  /* fp8 row- and block-wise scales are vectors and tables: both are needed */
  if (k->scale != HG_SCALE_TENSOR && (!scale_a || !scale_b || scale_a % 4 || scale_b % 4))
    return hg_error(HG_ERR_INVALID,
                    "this operation scales fp8 operands %s-wise: scale_a (0x%" PRIx64
                    ") and scale_b (0x%" PRIx64 ") must both be device pointers to f32 %s, "
                    "4-byte aligned",
                    hg_gemm_scale_name(k->scale), (uint64_t)x->scale_a, (uint64_t)x->scale_b,
                    k->scale == HG_SCALE_ROW ? "vectors of M and N values"
                                             : "tables of 1x128 and 128x128 block scales");
  if (gk->scales_tma && (scale_a % 16 || scale_b % 16))
    return hg_error(HG_ERR_INVALID,
                    "this operation stages the block scales by TMA (their leading dimensions "
                    "are multiples of 4): scale_a (0x%" PRIx64 ") and scale_b (0x%" PRIx64
                    ") must be 16-byte aligned; create the operation with a scale_lda or "
                    "scale_ldb that is not a multiple of 4 for tables at any 4-byte address",
                    (uint64_t)scale_a, (uint64_t)scale_b);
  if (op->ws_bytes && (!workspace || workspace_bytes < op->ws_bytes || workspace % 16 != 0))
    return hg_error(HG_ERR_INVALID,
                    "this operation needs a workspace of %zu bytes, 16-byte aligned (%s%s%s%s%s); "
                    "it was given %zu bytes at 0x%" PRIx64,
                    op->ws_bytes, op->amax_bytes ? "the amax's state" : "",
                    op->amax_bytes && (op->split_bytes || op->stream_k_bytes) ? ", " : "",
                    op->split_bytes      ? "split-K partial tiles"
                    : op->stream_k_bytes ? "stream-K flags and partial tiles"
                                         : "",
                    (op->amax_bytes || op->split_bytes || op->stream_k_bytes) &&
                            (gk->repack_a || gk->repack_b)
                        ? ", "
                        : "",
                    gk->repack_a && gk->repack_b ? "A and B repacked"
                    : gk->repack_a               ? "A repacked"
                    : gk->repack_b               ? "B repacked"
                                                 : "",
                    workspace_bytes, (uint64_t)workspace);
  /* a caller's workspace may hold anything: the amax's state and the stream-K flags start at
   * zero (unless the caller says they are) */
  if (caller_ws && op->zero_bytes && !x->workspace_zeroed)
    HG_TRY(hg_status_wrap(hg_rt_memset8(op->rt, workspace, 0, op->zero_bytes, stream),
                          "zeroing the amax's state, the stream-K flags or split-K sums in the "
                          "caller's workspace: "));
  if (gk->repack_a || gk->repack_b) HG_TRY(repack(op, a, b, workspace, stream));
  if (gk->repack_a) a = workspace + op->ws_at[0];
  if (gk->repack_b) b = workspace + op->ws_at[1];
  if (gk->a_tma) HG_TRY(encode(op, 0, &gk->plan_a.map, a, "A: "));
  if (gk->b_tma) HG_TRY(encode(op, 1, &gk->plan_b.map, b, "B: "));
  if (gk->tma_store) HG_TRY(encode(op, 2, &gk->plan_d.map, d, "D: "));
  if (gk->aux_tma) HG_TRY(encode(op, 3, &gk->plan_aux.map, aux, "aux: "));
  if (gk->scales_tma) {
    HG_TRY(encode(op, 4, &gk->map_scale_a, scale_a, "A's block scales: "));
    HG_TRY(encode(op, 5, &gk->map_scale_b, scale_b, "B's block scales: "));
  }
  hg_tensormap_t *ma = &op->map[0], *mb = &op->map[1], *md = &op->map[2], *mx = &op->map[3];
  int32_t m = (int32_t)k->m, n = (int32_t)k->n, kk = (int32_t)k->k, batch = k->batch;
  int64_t lda = k->lda, ldb = k->ldb, bsa = k->batch_stride_a, bsb = k->batch_stride_b;
  int64_t ldc = k->ldc, ldd = k->ldd, bsc = k->batch_stride_c, bsd = k->batch_stride_d;
  float alpha = k->alpha, beta = k->beta;
  hg_devptr_t cc = c ? c : d;
  void *args[32];
  int n_args = 0;
  if (gk->a_tma) {
    args[n_args++] = ma;
  } else {
    args[n_args++] = &a;
    args[n_args++] = &lda;
    args[n_args++] = &bsa;
  }
  if (gk->b_tma) {
    args[n_args++] = mb;
  } else {
    args[n_args++] = &b;
    args[n_args++] = &ldb;
    args[n_args++] = &bsb;
  }
  if (gk->tma_store) args[n_args++] = md;
  if (gk->aux_tma) args[n_args++] = mx;
  if (gk->scales_tma) {
    args[n_args++] = &op->map[4];
    args[n_args++] = &op->map[5];
  }
  void *rest[] = {&d, &cc, &m, &n, &kk, &batch, &ldc, &ldd, &bsc, &bsd, &alpha, &beta};
  for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++) args[n_args++] = rest[i];
  if (hg_dtype_bits(k->a_type) == 8) {
    args[n_args++] = &scale_a;
    args[n_args++] = &scale_b;
  }
  /* the epilogue's pointers in the generator's order (gemm_gen.c), then the workspace */
  if (k->rowscale) args[n_args++] = &rowscale;
  if (k->colscale) args[n_args++] = &colscale;
  if (k->bias != HG_BIAS_NONE) args[n_args++] = &bias;
  if (k->residual) args[n_args++] = &residual;
  if (hg_dtype_bits(k->d_type) == 8) args[n_args++] = &scale_d;
  int64_t ldaux = k->ldaux, bsaux = k->batch_stride_aux;
  if (k->aux) {
    args[n_args++] = &aux;
    args[n_args++] = &ldaux;
    args[n_args++] = &bsaux;
  }
  /* the amax's state at the workspace's start, split-K's or stream-K's part after it */
  hg_devptr_t amax_state = workspace, split_ws = workspace + op->amax_bytes;
  if (k->amax) {
    args[n_args++] = &amax;
    args[n_args++] = &amax_state;
  }
  if (k->group != HG_GROUP_NONE) args[n_args++] = &groups;
  if (op->split_bytes || op->stream_k_bytes) args[n_args++] = &split_ws;
  int64_t scale_lda = k->scale_lda, scale_ldb = k->scale_ldb;
  if (k->scale == HG_SCALE_BLOCK) {
    args[n_args++] = &scale_lda;
    args[n_args++] = &scale_ldb;
  }
  const uint32_t cs = gk->k.cluster[0];
  hg_launch_t l = {.grid = {(uint32_t)op->grid, 1, 1},
                   .block = {gk->k.threads, 1, 1},
                   .cluster = {cs, 1, 1},
                   .smem_bytes = gk->k.smem_bytes,
                   .stream = stream,
                   .pdl = true,
                   /* CTAs that wait for each other's partial tiles: all resident at once, or
                    * no launch (two such grids on concurrent streams could otherwise each
                    * hold the SMs the other's waiting CTAs need) */
                   .cooperative = gk->config.stream_k || gk->config.split_scatter};
  HG_TRY(hg_rt_launch(op->rt, op->fn, &l, args));
  if (!op->split_bytes || gk->config.split_atomic || gk->config.split_scatter) return hg_ok();
  /* split-K: the reduction pass, same parameters, after the GEMM on the stream */
  hg_launch_t lr = {.grid = {(uint32_t)op->cta_tiles, (uint32_t)gk->reduce_groups, 1},
                    .block = {gk->reduce_threads, 1, 1},
                    .cluster = {1, 1, 1},
                    .smem_bytes = gk->reduce_smem,
                    .stream = stream,
                    .pdl = true};
  return hg_rt_launch(op->rt, op->red_fn, &lr, args);
}

hg_status_t hg_gemm(hg_rt_t *rt, const hg_gemm_problem_t *p, const hg_gemm_config_t *c,
                    hg_devptr_t a, hg_devptr_t b, hg_devptr_t cm, hg_devptr_t d,
                    hg_devptr_t scale_a, hg_devptr_t scale_b, hg_stream_t stream) {
  hg_gemm_problem_t q = *p;
  if (d % 16 != 0) q.d_no_tma = true;
  /* The pointers are known here: let the planner fit the operand paths to them. */
  if (!q.a_align) q.a_align = ptr_align(a);
  if (!q.b_align) q.b_align = ptr_align(b);
  hg_gemm_op_t *op;
  HG_TRY(hg_gemm_op_create(rt, &q, c, HG_BACKEND_PTX, &op));
  hg_status_t s = hg_gemm_op_run(op, a, b, cm, d, scale_a, scale_b, stream);
  if (hg_is_ok(&s)) s = hg_rt_sync(rt, stream);
  hg_gemm_op_destroy(op);
  return s;
}
