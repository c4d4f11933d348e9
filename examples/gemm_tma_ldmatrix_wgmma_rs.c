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
 * = 1000 with alpha = 0.5, beta = -1 and checks D against a double-precision reference. */
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
   * atoms); only the way A reaches the instruction changes with the kind. */
  const hg_tiled_mma_spec_t ms = {.a = HG_BF16,
                                  .b = HG_BF16,
                                  .acc = HG_F32,
                                  .tile_m = TILE_M,
                                  .tile_n = TILE_N,
                                  .tile_k = TILE_K,
                                  .wg_m = CONSUMERS,
                                  .wg_n = 1,
                                  .a_major = HG_MAJOR_MN,
                                  .b_major = HG_MAJOR_K,
                                  .auto_swizzle = true};
  HG_TRY(hg_mma_builder_make(HG_MMA_WGMMA_RS, &ms, &p->mma));
  const hg_tma_options_t load = hg_tma_options_default(HG_TMA_LOAD);
  const hg_tma_tensor_t ta = ex_tma_operand(a, false), tb = ex_tma_operand(b, true);
  HG_TRY(hg_tma_plan_make(&ta, &p->mma.tm.a_op.layout, &load, &p->a));
  return hg_tma_plan_make(&tb, &p->mma.tm.b_op.layout, &load, &p->b);
}

static hg_status_t build(hg_builder_t *b, const void *plans, int *threads) {
  const plans_t *p = plans;
  /* Producer warpgroup + two consumer warpgroups of 64 rows each. */
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

  /* Parameters: A and B as tensor maps, C and D as pointers with leading dimensions. */
  hg_val_t tmap_a = hg_b_param_tmap(b, "tmap_a"), tmap_b = hg_b_param_tmap(b, "tmap_b");
  hg_epilogue_t epi = {.d_type = HG_BF16, .tma = false, .nsteps = 2};
  epi.d_ptr = hg_b_param(b, HG_T_I64, "d");
  epi.ldd = hg_b_param(b, HG_T_I64, "ldd");
  epi.batch_stride_d = hg_b_i64(b, 0);
  hg_epi_step_t *beta_c = &epi.steps[1];
  *beta_c = (hg_epi_step_t){.kind = HG_EPI_BETA_C, .batch_stride = hg_b_i64(b, 0)};
  beta_c->ptr = hg_b_param(b, HG_T_I64, "c");
  beta_c->ld = hg_b_param(b, HG_T_I64, "ldc");
  epi.m = hg_b_param(b, HG_T_I32, "m");
  epi.n = hg_b_param(b, HG_T_I32, "n");
  hg_val_t k = hg_b_param(b, HG_T_I32, "k");
  epi.steps[0] = (hg_epi_step_t){.kind = HG_EPI_SCALE, .value = hg_b_param(b, HG_T_F32, "alpha")};
  beta_c->value = hg_b_param(b, HG_T_F32, "beta");

  /* One tile per CTA: the persistent scheduler launched with as many CTAs as tiles. */
  hg_sched_t sched;
  const hg_sched_spec_t ss = {.kind = HG_SCHED_PERSISTENT,
                              .tile_m = TILE_M,
                              .tile_n = TILE_N,
                              .cluster_m = 1,
                              .cluster_n = 1,
                              .raster = HG_RASTER_N,
                              .raster_group = 1};
  hg_val_t kblocks = hg_b_bin(b, HG_DIV_U, hg_b_bin(b, HG_ADD, k, hg_b_i32(b, TILE_K - 1)),
                              hg_b_i32(b, TILE_K));
  HG_TRY(hg_sched_make(b, &ss, &cl, epi.m, epi.n, hg_b_i32(b, 1), kblocks, &sched));
  hg_sched_work_t w;

  hg_b_if(b, hg_b_cmp(b, HG_EQ, r.tid, hg_b_i32(b, 0)));
  hg_pipe_init(b, &pipe);
  hg_b_fence_proxy_async(b);
  hg_b_endif(b);
  hg_cluster2d_sync(b, &cl);

  /* Producer: as in gemm_tma_wgmma.c, one elected thread fills the ring with TMA. A's boxes
   * are 64 M x 64 K here (M contiguous), B's 64 K x 128 N. */
  hg_roles_producer(b, &r);
  hg_elect_begin(b, hg_b_cmp(b, HG_EQ, r.warp, hg_b_i32(b, 0)));
  hg_pipe_pos_t fill = hg_pipe_start(b);
  hg_sched_work(b, &sched, hg_sched_begin(b, &sched), &w);
  hg_val_t kb = hg_b_for(b, w.k_first, hg_b_bin(b, HG_ADD, w.k_first, w.k_count), hg_b_i32(b, 1));
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

  /* Consumers: per k-block each warp loads its 16 rows of A with ldmatrix.trans, then the
   * warpgroup issues 4 wgmma RS; the epilogue scales by alpha, adds beta * C (read only when
   * beta != 0) and stores every element of D inside M x N. */
  hg_roles_consumer(b, &r);
  hg_val_t acc[TILE_M / CONSUMERS * TILE_N / 128];
  for (int i = 0; i < p->mma.acc_count; i++) acc[i] = hg_b_var(b, HG_T_F32, HG_NONE);
  hg_val_t row, col;
  HG_TRY(ex_acc_origin(b, &p->mma.tm, hg_b_mad(b, r.consumer, hg_b_i32(b, 128), r.wg_tid), &row,
                       &col));
  hg_acc_map_t am;
  HG_TRY(hg_acc_map_make(&p->mma.tm, TILE_M / CONSUMERS, &am));
  const hg_mainloop_t ml = {.mma = &p->mma, .pipe = &pipe, .ring_a = &ring_a, .ring_b = &ring_b};
  hg_pipe_pos_t use = hg_pipe_start(b);
  hg_sched_work(b, &sched, hg_sched_begin(b, &sched), &w);
  hg_mainloop_emit(b, &ml, acc, use, w.k_count, r.consumer, &r);
  hg_val_t m_base = hg_b_mad(b, r.consumer, hg_b_i32(b, TILE_M / CONSUMERS), w.m0);
  hg_status_t s = hg_epilogue_emit(b, &epi, acc, &am, hg_b_bin(b, HG_ADD, w.m0, row),
                                   hg_b_bin(b, HG_ADD, w.n0, col), m_base, w.n0, w.batch, &r);
  hg_sched_end(b, &sched);
  hg_roles_end(b, &r);
  hg_acc_map_free(&am);
  return s;
}

int main(int argc, char **argv) {
  ex_matrix_t a, bm, c, d;
  ex_matrix_make(&a, HG_BF16, K, M, M, true, 1);  /* A: M x K stored column-major (K x M) */
  ex_matrix_make(&bm, HG_BF16, N, K, K, true, 2); /* B: N x K, row-major */
  ex_matrix_make(&c, HG_BF16, M, N, N, true, 3);  /* C: M x N, row-major */
  ex_matrix_make(&d, HG_BF16, M, N, N, false, 0); /* D: M x N, NaN until written */
  static plans_t p;
  EX_CHECK(make_plans(&a, &bm, &p));
  hg_kernel_t k;
  EX_CHECK(ex_generate("example_gemm_tma_ldmatrix_wgmma_rs", build, &p, ex_backend(argc, argv),
                       &k));
  static const char *const key[] = {"cp.async.bulk.tensor.2d.shared",
                                    "ldmatrix.sync.aligned.m8n8.x4.trans",
                                    "wgmma.fence",
                                    "wgmma.mma_async",
                                    "fma.rn.f32",
                                    "st.global",
                                    NULL};
  if (!ex_show(&k, key)) return 1;

  int rc;
  hg_rt_t *rt = ex_gpu_open(&rc);
  if (rt) {
    ex_matrix_t *all[] = {&a, &bm, &c, &d};
    for (int i = 0; i < 4; i++) EX_CHECK(ex_matrix_upload(rt, all[i]));
    hg_tensormap_t ta, tb;
    EX_CHECK(hg_rt_tensormap_encode(rt, &p.a.map, a.dev, &ta));
    EX_CHECK(hg_rt_tensormap_encode(rt, &p.b.map, bm.dev, &tb));
    int64_t ldd = d.ld, ldc = c.ld;
    int32_t m = M, n = N, kk = K;
    float alpha = ALPHA, beta = BETA;
    void *args[] = {&ta, &tb, &d.dev, &ldd, &c.dev, &ldc, &m, &n, &kk, &alpha, &beta};
    const int64_t tiles = ((M + TILE_M - 1) / TILE_M) * ((N + TILE_N - 1) / TILE_N);
    EX_CHECK(ex_launch(rt, &k, (uint32_t)tiles, args));
    rc = ex_check(rt, &a, false, &bm, true, K, ALPHA, BETA, &c, &d, 1e-2) ? 0 : 1;
  }
  ex_matrix_free(rt, &a);
  ex_matrix_free(rt, &bm);
  ex_matrix_free(rt, &c);
  ex_matrix_free(rt, &d);
  hg_kernel_free(&k);
  if (rt) hg_rt_close(rt);
  return rc;
}
