/* A Hopper GEMM from the builder API: TMA loads + wgmma with both operands in shared memory
 * (the "tma-wgmma" combination), D = A x B^T in bf16 with f32 accumulation.
 *
 * The kernel is CUTLASS's warp-specialized cooperative kernel, one builder call per piece:
 *
 *   CUTLASS / CuTe                                   hopgen builders
 *   TiledMma: make_tiled_mma(SM90_64x128x16_F32      hg_mma_builder_make(HG_MMA_WGMMA_SS, ..)
 *     BF16BF16_SS, Layout<Shape<_2,_1>>)               two warpgroups along M
 *   TiledCopy: make_tma_copy(SM90_TMA_LOAD, gA, sA)  hg_tma_plan_make (host) and
 *                                                      hg_tma_copy_load (device)
 *   KernelTmaWarpSpecializedCooperative              hg_roles_make: producer warpgroup +
 *                                                      2 consumers, setmaxnreg
 *   SharedStorage + PipelineTmaAsync                 hg_smem_ring_make, hg_pipe_make:
 *                                                      stages with full/empty mbarriers
 *   PersistentTileSchedulerSm90                      hg_sched_make / begin / work / end
 *   CollectiveMma::load / ::mma                      the producer loop / hg_mainloop_emit
 *   CollectiveEpilogue (TMA store)                   hg_epilogue_emit: stmatrix into swizzled
 *                                                      shared memory, then TMA stores
 *
 * Without a GPU it prints the kernel's key instructions and ptxas's report; with one it runs
 * D = A x B^T for M = N = K = 1000 (tiles hang over every edge) and checks D against a
 * double-precision reference. Options: --mlir generates through the MLIR backend instead
 * of the PTX printer, --emit FILE writes the whole PTX. */
#include "example_util.h"

enum { M = 1000, N = 1000, K = 1000 };
enum { TILE_M = 128, TILE_N = 128, TILE_K = 64, STAGES = 4, CONSUMERS = 2, EPI_N = 64 };

/* What the host computes before the first instruction: the TiledMma and three TMA plans. */
typedef struct plans {
  hg_mma_builder_t mma;
  hg_tma_plan_t a, b, d;
} plans_t;

static hg_status_t make_plans(const ex_matrix_t *a, const ex_matrix_t *b, const ex_matrix_t *d,
                              plans_t *p) {
  /* Each consumer warpgroup owns 64 rows of the 128 x 128 tile: per k-block of 64 it issues
   * four m64n128k16 wgmma reading A and B through shared-memory descriptors. The stage
   * layouts are GMMA's canonical 128-byte swizzled K-major atoms tiled over 128 x 64. */
  const hg_tiled_mma_spec_t ms =
      ex_mma_spec(TILE_M, TILE_N, TILE_K, CONSUMERS, HG_MAJOR_K, HG_MAJOR_K);
  HG_TRY(hg_mma_builder_make(HG_MMA_WGMMA_SS, &ms, &p->mma));
  /* The TMA plans fill exactly the stage layouts the TiledMma reads: one box of 64 K x 128
   * rows per operand and stage. */
  HG_TRY(ex_tma_load_plan(a, true, &p->mma.tm.a_op, &p->a));
  HG_TRY(ex_tma_load_plan(b, true, &p->mma.tm.b_op, &p->b));
  /* D leaves in 64 x 64 sub-tiles: rows of 128 bytes, swizzled so that stmatrix's eight rows
   * hit eight different bank groups, and TMA stores them (boxes clipped at M and N). */
  hg_composed_t sub;
  HG_TRY(hg_composed_parse("Sw<3,3,3> o 0 o (64,64):(64,1)", &sub));
  const hg_tma_tensor_t td = ex_tma_operand(d, true);
  const hg_tma_options_t store = hg_tma_options_default(HG_TMA_STORE);
  return hg_tma_plan_make(&td, &sub, &store, &p->d);
}

static hg_status_t build(hg_builder_t *b, const void *plans, int *threads) {
  const plans_t *p = plans;
  /* Roles: warpgroup 0 produces, warpgroups 1 and 2 consume; setmaxnreg moves registers
   * from the producer (40) to the consumers (232). No cluster. */
  hg_roles_t r;
  const hg_roles_spec_t rs = {
      .producers = 1, .consumers = CONSUMERS, .producer_regs = 40, .consumer_regs = 232};
  HG_TRY(hg_roles_make(b, &rs, &r));
  *threads = r.threads;
  hg_cluster2d_t cl;
  HG_TRY(hg_cluster2d_make(b, 1, 1, &cl));

  /* Shared memory: STAGES buffers of A and of B, a full and an empty mbarrier per stage (full:
   * one producer arrival plus the stage's TMA bytes; empty: one arrival per consumer warp),
   * and two 64 x 64 epilogue buffers per consumer. */
  hg_smem_ring_t ring_a, ring_b;
  HG_TRY(hg_smem_ring_make(b, p->a.smem_bytes, p->a.smem_align_bytes, STAGES, &ring_a));
  HG_TRY(hg_smem_ring_make(b, p->b.smem_bytes, p->b.smem_align_bytes, STAGES, &ring_b));
  hg_pipe_t pipe;
  const hg_pipe_spec_t ps = {.stages = STAGES, .full_arrivals = 1, .empty_arrivals = 4 * CONSUMERS};
  HG_TRY(hg_pipe_make(b, &ps, &pipe));
  hg_epilogue_t epi = {.d_type = HG_BF16};
  hg_epilogue_reserve_tma(b, &epi, &p->d, EPI_N, 2, (p->d.smem_bytes + 1023) / 1024 * 1024,
                          CONSUMERS);

  /* Parameters: the three tensor maps and the extents. */
  hg_val_t tmap_a = hg_b_param_tmap(b, "tmap_a"), tmap_b = hg_b_param_tmap(b, "tmap_b");
  epi.tmap_d = hg_b_param_tmap(b, "tmap_d");
  epi.m = hg_b_param(b, HG_T_I32, "m");
  epi.n = hg_b_param(b, HG_T_I32, "n");
  hg_val_t k = hg_b_param(b, HG_T_I32, "k");

  /* The persistent scheduler: CTA c computes tiles c, c + grid, ... in bands of 8 M-tiles. */
  hg_sched_t sched;
  const hg_sched_spec_t ss = ex_sched_spec(TILE_M, TILE_N, 8);
  HG_TRY(
      hg_sched_make(b, &ss, &cl, epi.m, epi.n, hg_b_i32(b, 1), ex_ceil_div(b, k, TILE_K), &sched));
  hg_pipe_init_cluster(b, &pipe, &cl, r.tid, NULL, 0);

  /* Producer (CollectiveMma::load): one elected thread walks the same tiles as the consumers;
   * per k-block it waits for a free stage, tells the full barrier how many bytes will land,
   * and issues the TMA boxes of the A and B tiles at (m0, k0) and (n0, k0). */
  hg_roles_producer(b, &r);
  hg_elect_begin(b, hg_b_cmp(b, HG_EQ, r.warp, hg_b_i32(b, 0)));
  {
    hg_pipe_pos_t pos = hg_pipe_start(b);
    hg_sched_work_t w;
    hg_sched_work(b, &sched, hg_sched_begin(b, &sched), &w);
    hg_val_t kb = hg_b_for(b, w.k_first, ex_add(b, w.k_first, w.k_count), hg_b_i32(b, 1));
    {
      hg_val_t k0 = hg_b_bin(b, HG_MUL, kb, hg_b_i32(b, TILE_K));
      hg_val_t bar = hg_pipe_full_bar(b, &pipe, pos.stage);
      hg_val_t origin_a[2] = {w.m0, k0}, origin_b[2] = {w.n0, k0};
      hg_pipe_acquire(b, &pipe, pos);
      hg_pipe_expect_tx(b, &pipe, pos, p->a.expect_tx_bytes + p->b.expect_tx_bytes);
      hg_tma_copy_load(b, &p->a, tmap_a, hg_smem_ring_addr(b, &ring_a, pos.stage), bar, origin_a,
                       HG_NONE, HG_NONE, HG_NONE);
      hg_tma_copy_load(b, &p->b, tmap_b, hg_smem_ring_addr(b, &ring_b, pos.stage), bar, origin_b,
                       HG_NONE, HG_NONE, HG_NONE);
      hg_pipe_advance(b, &pipe, pos);
    }
    hg_b_endfor(b);
    hg_sched_end(b, &sched);
  }
  hg_elect_end(b);

  /* Consumers (CollectiveMma::mma + CollectiveEpilogue): per tile, the main loop over the
   * stage ring (wait, 4 wgmma, release the stage once they are done), then the epilogue:
   * stmatrix of bf16 pairs into the swizzled buffers, TMA stores by the consumer's first
   * thread. */
  hg_roles_consumer(b, &r);
  ex_frag_c_t c;
  HG_TRY(ex_frag_c_make(b, &p->mma, &r, &c));
  const hg_mainloop_t ml = {.mma = &p->mma, .pipe = &pipe, .ring_a = &ring_a, .ring_b = &ring_b};
  hg_pipe_pos_t pos = hg_pipe_start(b);
  hg_sched_work_t w;
  hg_sched_work(b, &sched, hg_sched_begin(b, &sched), &w);
  hg_mainloop_emit(b, &ml, c.acc, pos, w.k_count, c.slot, &r);
  hg_status_t s =
      hg_epilogue_emit(b, &epi, c.acc, &c.map, ex_add(b, w.m0, c.row), ex_add(b, w.n0, c.col),
                       ex_add(b, w.m0, c.region_row), w.n0, w.batch, &r);
  hg_sched_end(b, &sched);
  hg_epilogue_drain(b, &epi, &r);
  hg_roles_end(b, &r);
  hg_acc_map_free(&c.map);
  return s;
}

int main(int argc, char **argv) {
  const ex_options_t o = ex_options(argc, argv);
  ex_matrix_t a, bm, d;
  ex_matrix_make(&a, HG_BF16, M, K, K, true, 1);  /* A: M x K, row-major */
  ex_matrix_make(&bm, HG_BF16, N, K, K, true, 2); /* B: N x K, row-major (B^T's columns) */
  ex_matrix_make(&d, HG_BF16, M, N, N, false, 0); /* D: M x N, row-major, NaN until written */
  ex_matrix_t *const all[] = {&a, &bm, &d, NULL};
  static plans_t p;
  EX_CHECK(make_plans(&a, &bm, &d, &p));
  hg_kernel_t k;
  EX_CHECK(ex_generate("example_gemm_tma_wgmma", build, &p, o.backend, &k));
  static const char *const key[] = {"mbarrier.init",
                                    "mbarrier.try_wait",
                                    "setmaxnreg",
                                    "elect.sync",
                                    "cp.async.bulk.tensor.2d.shared",
                                    "wgmma.mma_async",
                                    "wgmma.wait_group",
                                    "stmatrix",
                                    "cp.async.bulk.tensor.2d.global",
                                    NULL};
  if (!ex_show(&k, key, &o)) return 1;

  int rc;
  hg_rt_t *rt = ex_gpu_open(&rc);
  if (rt) {
    EX_CHECK(ex_upload(rt, all));
    hg_tensormap_t ta, tb, td;
    EX_CHECK(hg_rt_tensormap_encode(rt, &p.a.map, a.dev, &ta));
    EX_CHECK(hg_rt_tensormap_encode(rt, &p.b.map, bm.dev, &tb));
    EX_CHECK(hg_rt_tensormap_encode(rt, &p.d.map, d.dev, &td));
    int32_t m = M, n = N, kk = K;
    void *args[] = {&ta, &tb, &td, &m, &n, &kk};
    /* Persistent: one CTA per SM at most (64 tiles here: fewer than an H100's SMs). */
    const hg_sched_spec_t ss = ex_sched_spec(TILE_M, TILE_N, 8);
    const int64_t tiles = hg_sched_units(&ss, M, N, 1), sms = hg_rt_device(rt)->sm_count;
    EX_CHECK(ex_launch(rt, &k, (uint32_t)(tiles < sms ? tiles : sms), args));
    rc = ex_check(rt, &a, true, &bm, true, K, 1.0f, 0.0f, NULL, &d, 1e-2) ? 0 : 1;
  }
  ex_cleanup(rt, all, &k);
  return rc;
}
