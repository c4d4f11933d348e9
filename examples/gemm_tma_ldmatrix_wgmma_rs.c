/* A Hopper GEMM from the builder API with A in registers: TMA loads, ldmatrix of A from
 * shared memory into wgmma's register fragment, wgmma RS (A from registers, B through a
 * descriptor): the "tma-ldmatrix-wgmma-rs" combination, D = alpha * A x B^T + beta * C.
 *
 * A is stored M-major (column-major, M contiguous). wgmma cannot take an M-major A from
 * registers, but it need not: ldmatrix .trans reads the M-major stage and hands every lane
 * the K-major fragment (the builder picks .trans from the stage layout's majorness).
 *
 *   CUTLASS / CuTe                                   hopgen builders
 *   TiledMma: make_tiled_mma(SM90_64x128x16_F32      hg_mma_builder_make(HG_MMA_WGMMA_RS, ..):
 *     BF16BF16_RS<Major::MN,..>, Layout<_2,_1>)        per k-block, ldmatrix.x4.trans of each
 *                                                      warp's 16 rows, then wgmma RS
 *   SmemCopyAtom SM75_U16x8_LDSM_T (ldmatrix.trans)  hg_ldmatrix_a16x16 (inside the builder)
 *   make_tma_copy(SM90_TMA_LOAD, gA, sA), M-major    hg_tma_plan_make on the M-major view
 *   epilogue LinearCombination (alpha, beta)         hg_epilogue_t steps HG_EPI_SCALE and
 *                                                      HG_EPI_BETA_C, predicated stores of D
 *
 * Without a GPU it prints the key instructions and ptxas's report; with one it runs M = N = K
 * = 1000 with alpha = 0.5, beta = -1 and checks D against a double-precision reference.
 * Options as in gemm_tma_wgmma.c (--mlir, --emit FILE). */
#include "example_util.h"

enum { M = 1000, N = 1000, K = 1000 };
enum { TILE_M = 128, TILE_N = 128, TILE_K = 64, STAGES = 4, CONSUMERS = 2 };
static const float ALPHA = 0.5f, BETA = -1.0f;

typedef struct plans {
  hg_mma_builder_t mma;
  hg_tma_plan_t a, b;
} plans_t;

static hg_status_t make_plans(const ex_matrix_t *a, const ex_matrix_t *b, plans_t *p) {
  /* The TiledMma's tiling and stage layouts are wgmma's (A's stage: 128-byte swizzled M-major
   * atoms, 64 M x 8 K each); only the way A reaches the instruction changes with the kind. */
  const hg_tiled_mma_spec_t ms =
      ex_mma_spec(TILE_M, TILE_N, TILE_K, CONSUMERS, HG_MAJOR_MN, HG_MAJOR_K);
  HG_TRY(hg_mma_builder_make(HG_MMA_WGMMA_RS, &ms, &p->mma));
  /* A's boxes are 64 M x 64 K (M contiguous: two per stage), B's 64 K x 128 N. */
  HG_TRY(ex_tma_load_plan(a, false, &p->mma.tm.a_op, &p->a));
  return ex_tma_load_plan(b, true, &p->mma.tm.b_op, &p->b);
}

static hg_status_t build(hg_builder_t *b, const void *plans, int *threads) {
  const plans_t *p = plans;
  /* Producer warpgroup + two consumer warpgroups of 64 rows each, a ring of STAGES. */
  hg_roles_t r;
  const hg_roles_spec_t rs = {
      .producers = 1, .consumers = CONSUMERS, .producer_regs = 40, .consumer_regs = 232};
  HG_TRY(hg_roles_make(b, &rs, &r));
  *threads = r.threads;
  hg_cluster2d_t cl;
  HG_TRY(hg_cluster2d_make(b, 1, 1, &cl));
  hg_smem_ring_t ring_a, ring_b;
  HG_TRY(hg_smem_ring_make(b, p->a.smem_bytes, p->a.smem_align_bytes, STAGES, &ring_a));
  HG_TRY(hg_smem_ring_make(b, p->b.smem_bytes, p->b.smem_align_bytes, STAGES, &ring_b));
  hg_pipe_t pipe;
  const hg_pipe_spec_t ps = {.stages = STAGES, .full_arrivals = 1, .empty_arrivals = 4 * CONSUMERS};
  HG_TRY(hg_pipe_make(b, &ps, &pipe));

  /* Parameters, and the epilogue they feed: D = alpha * acc + beta * C, predicated stores. */
  hg_val_t tmap_a = hg_b_param_tmap(b, "tmap_a"), tmap_b = hg_b_param_tmap(b, "tmap_b");
  hg_epilogue_t epi = {.d_type = HG_BF16, .tma = false, .nsteps = 2};
  hg_epi_step_t *scale = &epi.steps[0], *beta_c = &epi.steps[1];
  *scale = (hg_epi_step_t){.kind = HG_EPI_SCALE, .value = hg_b_param(b, HG_T_F32, "alpha")};
  *beta_c = (hg_epi_step_t){.kind = HG_EPI_BETA_C, .value = hg_b_param(b, HG_T_F32, "beta")};
  beta_c->ptr = hg_b_param(b, HG_T_I64, "c");
  beta_c->ld = hg_b_param(b, HG_T_I64, "ldc");
  beta_c->batch_stride = hg_b_i64(b, 0);
  epi.d_ptr = hg_b_param(b, HG_T_I64, "d");
  epi.ldd = hg_b_param(b, HG_T_I64, "ldd");
  epi.batch_stride_d = hg_b_i64(b, 0);
  epi.m = hg_b_param(b, HG_T_I32, "m");
  epi.n = hg_b_param(b, HG_T_I32, "n");
  hg_val_t k = hg_b_param(b, HG_T_I32, "k");

  /* One tile per CTA: the persistent scheduler launched with as many CTAs as tiles. */
  hg_sched_t sched;
  const hg_sched_spec_t ss = ex_sched_spec(TILE_M, TILE_N, 1);
  HG_TRY(
      hg_sched_make(b, &ss, &cl, epi.m, epi.n, hg_b_i32(b, 1), ex_ceil_div(b, k, TILE_K), &sched));
  hg_pipe_init_cluster(b, &pipe, &cl, r.tid, NULL, 0);
  hg_sched_work_t w;

  /* Producer: as in gemm_tma_wgmma.c, one elected thread fills the ring with TMA. */
  hg_roles_producer(b, &r);
  hg_elect_begin(b, hg_b_cmp(b, HG_EQ, r.warp, hg_b_i32(b, 0)));
  hg_pipe_pos_t fill = hg_pipe_start(b);
  hg_sched_work(b, &sched, hg_sched_begin(b, &sched), &w);
  hg_val_t kb = hg_b_for(b, w.k_first, ex_add(b, w.k_first, w.k_count), hg_b_i32(b, 1));
  hg_val_t k0 = hg_b_bin(b, HG_MUL, kb, hg_b_i32(b, TILE_K));
  hg_val_t origin_a[2] = {w.m0, k0}, origin_b[2] = {w.n0, k0};
  hg_pipe_acquire(b, &pipe, fill);
  hg_pipe_expect_tx(b, &pipe, fill, p->a.expect_tx_bytes + p->b.expect_tx_bytes);
  hg_val_t full = hg_pipe_full_bar(b, &pipe, fill.stage);
  hg_tma_copy_load(b, &p->a, tmap_a, hg_smem_ring_addr(b, &ring_a, fill.stage), full, origin_a,
                   HG_NONE, HG_NONE, HG_NONE);
  hg_tma_copy_load(b, &p->b, tmap_b, hg_smem_ring_addr(b, &ring_b, fill.stage), full, origin_b,
                   HG_NONE, HG_NONE, HG_NONE);
  hg_pipe_advance(b, &pipe, fill);
  hg_b_endfor(b);
  hg_sched_end(b, &sched);
  hg_elect_end(b);

  /* Consumers: per k-block each warp loads its 16 rows of A with ldmatrix.x4.trans (one per
   * K atom), one wgmma.fence orders those registers before the 4 wgmma RS; the epilogue
   * scales by alpha, adds beta * C (C is read only when beta != 0) and stores every element
   * of D inside M x N. */
  hg_roles_consumer(b, &r);
  ex_frag_c_t c;
  HG_TRY(ex_frag_c_make(b, &p->mma, &r, &c));
  const hg_mainloop_t ml = {.mma = &p->mma, .pipe = &pipe, .ring_a = &ring_a, .ring_b = &ring_b};
  hg_pipe_pos_t use = hg_pipe_start(b);
  hg_sched_work(b, &sched, hg_sched_begin(b, &sched), &w);
  hg_mainloop_emit(b, &ml, c.acc, use, w.k_count, c.slot, &r);
  hg_val_t m_base = ex_add(b, w.m0, c.region_row);
  hg_status_t s = hg_epilogue_emit(b, &epi, c.acc, &c.map, ex_add(b, w.m0, c.row),
                                   ex_add(b, w.n0, c.col), m_base, w.n0, w.batch, &r);
  hg_sched_end(b, &sched);
  hg_roles_end(b, &r);
  hg_acc_map_free(&c.map);
  return s;
}

int main(int argc, char **argv) {
  const ex_options_t o = ex_options(argc, argv);
  ex_matrix_t a, bm, c, d;
  ex_matrix_make(&a, HG_BF16, K, M, M, true, 1);  /* A: M x K stored column-major (K x M) */
  ex_matrix_make(&bm, HG_BF16, N, K, K, true, 2); /* B: N x K, row-major */
  ex_matrix_make(&c, HG_BF16, M, N, N, true, 3);  /* C: M x N, row-major */
  ex_matrix_make(&d, HG_BF16, M, N, N, false, 0); /* D: M x N, NaN until written */
  ex_matrix_t *const all[] = {&a, &bm, &c, &d, NULL};
  static plans_t p;
  EX_CHECK(make_plans(&a, &bm, &p));
  hg_kernel_t k;
  EX_CHECK(ex_generate("example_gemm_tma_ldmatrix_wgmma_rs", build, &p, o.backend, &k));
  static const char *const key[] = {"cp.async.bulk.tensor.2d.shared",
                                    "ldmatrix.sync.aligned.m8n8.x4.trans",
                                    "wgmma.fence",
                                    "wgmma.mma_async",
                                    "fma.rn.f32",
                                    "st.global",
                                    NULL};
  if (!ex_show(&k, key, &o)) return 1;

  int rc;
  hg_rt_t *rt = ex_gpu_open(&rc);
  if (rt) {
    EX_CHECK(ex_upload(rt, all));
    hg_tensormap_t ta, tb;
    EX_CHECK(hg_rt_tensormap_encode(rt, &p.a.map, a.dev, &ta));
    EX_CHECK(hg_rt_tensormap_encode(rt, &p.b.map, bm.dev, &tb));
    float alpha = ALPHA, beta = BETA;
    int64_t ldc = c.ld, ldd = d.ld;
    int32_t m = M, n = N, kk = K;
    void *args[] = {&ta, &tb, &alpha, &beta, &c.dev, &ldc, &d.dev, &ldd, &m, &n, &kk};
    const hg_sched_spec_t ss = ex_sched_spec(TILE_M, TILE_N, 1);
    EX_CHECK(ex_launch(rt, &k, (uint32_t)hg_sched_units(&ss, M, N, 1), args));
    rc = ex_check(rt, &a, false, &bm, true, K, ALPHA, BETA, &c, &d, 1e-2) ? 0 : 1;
  }
  ex_cleanup(rt, all, &k);
  return rc;
}
