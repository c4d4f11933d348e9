/* A GEMM from the builder API with the pre-Hopper MMA fed by TMA: TMA loads into swizzled
 * shared memory, ldmatrix into registers, mma.sync.m16n8k16 (the "tma-mmasync" combination).
 * D = A x B with A row-major (K-major) and B row-major (N-major: the plain math layout),
 * accumulated and stored in f32.
 *
 * mma.sync is a warp instruction (16 x 8 x 16); the builder keeps the wgmma TiledMma's tiling,
 * so each of the consumer warpgroup's four warps computes 16 rows of the 64-row tile as 16
 * n8-blocks, and its accumulators sit in wgmma's register order: the epilogue cannot tell
 * which MMA ran.
 *
 *   CUTLASS / CuTe                                   hopgen builders
 *   TiledMma: make_tiled_mma(SM80_16x8x16_F32        hg_mma_builder_make(HG_MMA_SYNC, ..)
 *     BF16BF16F32_TN, Layout<_4,_1>)
 *   SmemCopyAtom SM75_U32x4_LDSM_N (A: ldmatrix)     hg_ldmatrix_a16x16 / hg_ldmatrix_b16x16
 *     and SM75_U16x8_LDSM_T (B, N-major: .trans)       (inside the builder)
 *   make_tma_copy(SM90_TMA_LOAD, ..) for both        hg_tma_plan_make / hg_tma_copy_load
 *   epilogue: predicated f32 stores of D             hg_epilogue_emit, direct stores
 *
 * One consumer warpgroup on 64 x 128 tiles: 64 accumulators a thread (the library's GEMM
 * heuristic keeps mma.sync at 96 or fewer, beyond which ptxas spills). Without a GPU it prints
 * the key instructions and ptxas's report; with one it runs M = N = K = 1000 and checks D.
 * Options as in gemm_tma_wgmma.c (--mlir, --emit FILE). */
#include "example_util.h"

enum { M = 1000, N = 1000, K = 1000 };
enum { TILE_M = 64, TILE_N = 128, TILE_K = 64, STAGES = 4 };

typedef struct plans {
  hg_mma_builder_t mma;
  hg_tma_plan_t a, b;
} plans_t;

static hg_status_t make_plans(const ex_matrix_t *a, const ex_matrix_t *b, plans_t *p) {
  const hg_tiled_mma_spec_t ms = ex_mma_spec(TILE_M, TILE_N, TILE_K, 1, HG_MAJOR_K, HG_MAJOR_MN);
  HG_TRY(hg_mma_builder_make(HG_MMA_SYNC, &ms, &p->mma));
  /* B's stage holds N-contiguous rows of 64 (128-byte swizzle): two boxes of 64 N x 64 K. */
  HG_TRY(ex_tma_load_plan(a, true, &p->mma.tm.a_op, &p->a));
  return ex_tma_load_plan(b, false, &p->mma.tm.b_op, &p->b);
}

static hg_status_t build(hg_builder_t *b, const void *plans, int *threads) {
  const plans_t *p = plans;
  /* One producer and one consumer warpgroup; the consumer's four warps each release a stage
   * (one arrival on its empty barrier) as soon as their ldmatrix have read it. */
  hg_roles_t r;
  const hg_roles_spec_t rs = {
      .producers = 1, .consumers = 1, .producer_regs = 40, .consumer_regs = 240};
  HG_TRY(hg_roles_make(b, &rs, &r));
  *threads = r.threads;
  hg_cluster2d_t cl;
  HG_TRY(hg_cluster2d_make(b, 1, 1, &cl));
  const hg_tma_plan_t *plan[2] = {&p->a, &p->b};
  hg_smem_ring_t ring[2];
  for (int i = 0; i < 2; i++)
    HG_TRY(hg_smem_ring_make(b, plan[i]->smem_bytes, plan[i]->smem_align_bytes, STAGES, &ring[i]));
  hg_pipe_t pipe;
  const hg_pipe_spec_t ps = {.stages = STAGES, .full_arrivals = 1, .empty_arrivals = 4};
  HG_TRY(hg_pipe_make(b, &ps, &pipe));

  hg_val_t tmap[2];
  tmap[0] = hg_b_param_tmap(b, "tmap_a");
  tmap[1] = hg_b_param_tmap(b, "tmap_b");
  hg_epilogue_t epi = {.d_type = HG_F32, .tma = false, .nsteps = 0};
  epi.d_ptr = hg_b_param(b, HG_T_I64, "d");
  epi.ldd = hg_b_param(b, HG_T_I64, "ldd");
  epi.batch_stride_d = hg_b_i64(b, 0);
  epi.m = hg_b_param(b, HG_T_I32, "m");
  epi.n = hg_b_param(b, HG_T_I32, "n");
  hg_val_t k = hg_b_param(b, HG_T_I32, "k");
  hg_sched_t sched;
  const hg_sched_spec_t ss = ex_sched_spec(TILE_M, TILE_N, 4);
  HG_TRY(
      hg_sched_make(b, &ss, &cl, epi.m, epi.n, hg_b_i32(b, 1), ex_ceil_div(b, k, TILE_K), &sched));
  hg_pipe_init_cluster(b, &pipe, &cl, r.tid, NULL, 0);

  /* Producer: the TMA loop of gemm_tma_wgmma.c, written over the two operands. */
  hg_roles_producer(b, &r);
  hg_elect_begin(b, hg_b_cmp(b, HG_EQ, r.warp, hg_b_i32(b, 0)));
  {
    hg_pipe_pos_t pos = hg_pipe_start(b);
    hg_sched_work_t w;
    hg_sched_work(b, &sched, hg_sched_begin(b, &sched), &w);
    hg_val_t kb = hg_b_for(b, w.k_first, ex_add(b, w.k_first, w.k_count), hg_b_i32(b, 1));
    hg_pipe_acquire(b, &pipe, pos);
    hg_pipe_expect_tx(b, &pipe, pos, p->a.expect_tx_bytes + p->b.expect_tx_bytes);
    hg_val_t k0 = hg_b_bin(b, HG_MUL, kb, hg_b_i32(b, TILE_K));
    for (int i = 0; i < 2; i++) {
      hg_val_t origin[2] = {i == 0 ? w.m0 : w.n0, k0};
      hg_tma_copy_load(b, plan[i], tmap[i], hg_smem_ring_addr(b, &ring[i], pos.stage),
                       hg_pipe_full_bar(b, &pipe, pos.stage), origin, HG_NONE, HG_NONE, HG_NONE);
    }
    hg_pipe_advance(b, &pipe, pos);
    hg_b_endfor(b);
    hg_sched_end(b, &sched);
  }
  hg_elect_end(b);

  /* Consumer: the main loop zeroes the accumulators (mma.sync always adds), then per K atom
   * of 16: ldmatrix.x4 of each warp's 16 x 16 block of A, ldmatrix.x4.trans of two n8
   * blocks of B at a time, 16 mma.sync; then f32 stores of every element inside M x N. */
  hg_roles_consumer(b, &r);
  ex_frag_c_t c;
  HG_TRY(ex_frag_c_make(b, &p->mma, &r, &c));
  const hg_mainloop_t ml = {.mma = &p->mma, .pipe = &pipe, .ring_a = &ring[0], .ring_b = &ring[1]};
  hg_pipe_pos_t pos = hg_pipe_start(b);
  hg_sched_work_t w;
  hg_sched_work(b, &sched, hg_sched_begin(b, &sched), &w);
  hg_mainloop_emit(b, &ml, c.acc, pos, w.k_count, c.slot, &r);
  hg_status_t s = hg_epilogue_emit(b, &epi, c.acc, &c.map, ex_add(b, w.m0, c.row),
                                   ex_add(b, w.n0, c.col), w.m0, w.n0, w.batch, &r);
  hg_sched_end(b, &sched);
  hg_roles_end(b, &r);
  hg_acc_map_free(&c.map);
  return s;
}

int main(int argc, char **argv) {
  const ex_options_t o = ex_options(argc, argv);
  ex_matrix_t a, bm, d;
  ex_matrix_make(&a, HG_BF16, M, K, K, true, 1);  /* A: M x K, row-major */
  ex_matrix_make(&bm, HG_BF16, K, N, N, true, 2); /* B: K x N, row-major */
  ex_matrix_make(&d, HG_F32, M, N, N, false, 0);  /* D: M x N f32, NaN until written */
  ex_matrix_t *const all[] = {&a, &bm, &d, NULL};
  static plans_t p;
  EX_CHECK(make_plans(&a, &bm, &p));
  hg_kernel_t k;
  EX_CHECK(ex_generate("example_gemm_tma_mmasync", build, &p, o.backend, &k));
  static const char *const key[] = {"cp.async.bulk.tensor.2d.shared",
                                    "ldmatrix.sync.aligned.m8n8.x4.shared",
                                    "ldmatrix.sync.aligned.m8n8.x4.trans",
                                    "mma.sync.aligned.m16n8k16",
                                    "st.global",
                                    NULL};
  if (!ex_show(&k, key, &o)) return 1;
  if (strstr(k.ptx.data, "wgmma")) return fprintf(stderr, "mma.sync kernel holds a wgmma\n"), 1;

  int rc;
  hg_rt_t *rt = ex_gpu_open(&rc);
  if (rt) {
    EX_CHECK(ex_upload(rt, all));
    hg_tensormap_t ta, tb;
    EX_CHECK(hg_rt_tensormap_encode(rt, &p.a.map, a.dev, &ta));
    EX_CHECK(hg_rt_tensormap_encode(rt, &p.b.map, bm.dev, &tb));
    int64_t ldd = d.ld;
    int32_t m = M, n = N, kk = K;
    void *args[] = {&ta, &tb, &d.dev, &ldd, &m, &n, &kk};
    const hg_sched_spec_t ss = ex_sched_spec(TILE_M, TILE_N, 4);
    EX_CHECK(ex_launch(rt, &k, (uint32_t)hg_sched_units(&ss, M, N, 1), args));
    rc = ex_check(rt, &a, true, &bm, false, K, 1.0f, 0.0f, NULL, &d, 1e-4) ? 0 : 1;
  }
  ex_cleanup(rt, all, &k);
  return rc;
}
