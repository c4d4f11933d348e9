/* A Hopper GEMM from the builder API for operands TMA cannot address: cp.async into the same
 * swizzled stage layouts TMA would fill, then wgmma with both operands in shared memory (the
 * "cpasync-wgmma" combination), D = A x B^T in bf16.
 *
 * TMA needs every row of a tensor to start on a 16-byte boundary. Here A and B are M x K and
 * N x K with K = 999 inside rows of 1004 elements (2008 bytes: 8-byte aligned), and D's rows
 * are 1001 elements apart (2-byte aligned). Instead of repacking the operands, the producer
 * warpgroup's 128 threads copy 8-byte chunks with cp.async, whose src-size operand zero-fills
 * what lies past K, M or N; D leaves through predicated stores.
 *
 *   CUTLASS / CuTe                                   hopgen builders
 *   make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_         hg_cp_async_copy_make: 128 threads, a
 *     CACHEGLOBAL_ZFILL<uint64_t>, bf16>, ..)          chunk of 8 bytes, into the GMMA stage
 *                                                      layout (checked chunk by chunk)
 *   copy(tiled_copy, gA(_,_,k), sA(_,_,stage))       hg_cp_async_copy_issue (zero fill)
 *   cp_async_mbarrier_arrive (PipelineAsync)         hg_cp_async_copy_commit: one arrival a
 *                                                      thread once its chunks have landed
 *   fence.proxy.async before wgmma reads them        hg_mainloop_t.fence_proxy
 *   SM90 TiledMma, SS                                hg_mma_builder_make(HG_MMA_WGMMA_SS, ..)
 *
 * Without a GPU it prints the key instructions and ptxas's report; with one it runs M = N =
 * 1000, K = 999 and checks D against a double-precision reference.
 * Options as in gemm_tma_wgmma.c (--mlir, --emit FILE). */
#include "example_util.h"

enum { M = 1000, N = 1000, K = 999, LDA = 1004, LDB = 1004, LDD = 1001 };
enum { TILE_M = 128, TILE_N = 128, TILE_K = 64, STAGES = 4, CONSUMERS = 2 };

typedef struct plans {
  hg_mma_builder_t mma;
  hg_cp_async_copy_t a, b;
} plans_t;

/* The widest chunk every row of a row pitch starts aligned to: 16, 8 or 4 bytes go through
 * cp.async, 2 or 1 through registers (ld.global + st.shared). */
static int chunk_bytes(int64_t pitch_bytes) {
  int v = 16;
  while (pitch_bytes % v) v /= 2;
  return v;
}

static hg_status_t make_plans(plans_t *p) {
  const hg_tiled_mma_spec_t ms =
      ex_mma_spec(TILE_M, TILE_N, TILE_K, CONSUMERS, HG_MAJOR_K, HG_MAJOR_K);
  HG_TRY(hg_mma_builder_make(HG_MMA_WGMMA_SS, &ms, &p->mma));
  /* Each operand tile is a 128-row x 64-column view of its row-major matrix (K contiguous),
   * copied by the producer's 128 threads into the stage layout the TiledMma reads. */
  const hg_gmma_operand_t *op[2] = {&p->mma.tm.a_op, &p->mma.tm.b_op};
  const int64_t ld[2] = {LDA, LDB};
  hg_cp_async_copy_t *cp[2] = {&p->a, &p->b};
  for (int i = 0; i < 2; i++) {
    const hg_cp_async_spec_t cs = {.dtype = HG_BF16,
                                   .rows = op[i]->mn,
                                   .cols = op[i]->k,
                                   .smem = op[i]->layout,
                                   .transposed = false,
                                   .vec_bytes = chunk_bytes(ld[i] * 2),
                                   .threads = 128};
    HG_TRY(hg_cp_async_copy_make(&cs, cp[i]));
  }
  /* One commit per producer thread and stage covers both operands when they are copied the
   * same way; a stage filled partly by cp.async and partly by register copies takes both
   * commits and twice the arrivals (gemm_gen.c does that). */
  if (p->a.async != p->b.async)
    return hg_error(HG_ERR_UNSUPPORTED, "this example copies A and B the same way (%d, %d B)",
                    p->a.spec.vec_bytes, p->b.spec.vec_bytes);
  return hg_ok();
}

static hg_status_t build(hg_builder_t *b, const void *plans, int *threads) {
  const plans_t *p = plans;
  /* cp.async producers compute an address per chunk: they keep 56 registers, the two consumers
   * 224 (56 x 128 + 2 x 224 x 128 = 64512 of the SM's 65536). */
  hg_roles_t r;
  const hg_roles_spec_t rs = {
      .producers = 1, .consumers = CONSUMERS, .producer_regs = 56, .consumer_regs = 224};
  HG_TRY(hg_roles_make(b, &rs, &r));
  *threads = r.threads;
  hg_cluster2d_t cl;
  HG_TRY(hg_cluster2d_make(b, 1, 1, &cl));
  /* The stage buffers are the TiledMma's own layouts; a full barrier completes when all 128
   * producer threads' copies of the stage have landed. */
  const hg_gmma_operand_t *oa = &p->mma.tm.a_op, *ob = &p->mma.tm.b_op;
  hg_smem_ring_t ring_a, ring_b;
  HG_TRY(hg_smem_ring_make(b, oa->stage_bytes, oa->align_bytes, STAGES, &ring_a));
  HG_TRY(hg_smem_ring_make(b, ob->stage_bytes, ob->align_bytes, STAGES, &ring_b));
  hg_pipe_t pipe;
  const hg_pipe_spec_t ps = {
      .stages = STAGES, .full_arrivals = 128, .empty_arrivals = 4 * CONSUMERS};
  HG_TRY(hg_pipe_make(b, &ps, &pipe));

  /* Parameters: plain pointers and row pitches (elements), the extents. */
  hg_val_t a_ptr = hg_b_param(b, HG_T_I64, "a"), lda = hg_b_param(b, HG_T_I64, "lda");
  hg_val_t b_ptr = hg_b_param(b, HG_T_I64, "b"), ldb = hg_b_param(b, HG_T_I64, "ldb");
  hg_epilogue_t epi = {.d_type = HG_BF16, .tma = false, .nsteps = 0};
  epi.d_ptr = hg_b_param(b, HG_T_I64, "d");
  epi.ldd = hg_b_param(b, HG_T_I64, "ldd");
  epi.batch_stride_d = hg_b_i64(b, 0);
  epi.m = hg_b_param(b, HG_T_I32, "m");
  epi.n = hg_b_param(b, HG_T_I32, "n");
  hg_val_t k = hg_b_param(b, HG_T_I32, "k");
  hg_sched_t sched;
  const hg_sched_spec_t ss = ex_sched_spec(TILE_M, TILE_N, 8);
  HG_TRY(
      hg_sched_make(b, &ss, &cl, epi.m, epi.n, hg_b_i32(b, 1), ex_ceil_div(b, k, TILE_K), &sched));
  hg_pipe_init_cluster(b, &pipe, &cl, r.tid, NULL, 0);

  /* Producer: all 128 threads. Per k-block each waits for the stage to be free, issues its
   * 16 chunks of A's 128 x 64 tile and 16 of B's (8 bytes each, zero-filled past M, N or K)
   * and arrives on the full barrier once they land. No elected thread, no transaction
   * bytes: the arrivals count the copies. */
  hg_roles_producer(b, &r);
  {
    hg_pipe_pos_t pos = hg_pipe_start(b);
    hg_sched_work_t w;
    hg_sched_work(b, &sched, hg_sched_begin(b, &sched), &w);
    hg_val_t kb = hg_b_for(b, w.k_first, ex_add(b, w.k_first, w.k_count), hg_b_i32(b, 1));
    hg_val_t k0 = hg_b_bin(b, HG_MUL, kb, hg_b_i32(b, TILE_K));
    hg_pipe_acquire(b, &pipe, pos);
    hg_cp_async_copy_issue(b, &p->a, hg_smem_ring_addr(b, &ring_a, pos.stage), a_ptr, lda, w.m0, k0,
                           epi.m, k, r.wg_tid);
    hg_cp_async_copy_issue(b, &p->b, hg_smem_ring_addr(b, &ring_b, pos.stage), b_ptr, ldb, w.n0, k0,
                           epi.n, k, r.wg_tid);
    hg_cp_async_copy_commit(b, &p->a, &pipe, pos);
    hg_pipe_advance(b, &pipe, pos);
    hg_b_endfor(b);
    hg_sched_end(b, &sched);
  }

  /* Consumers: the main loop of gemm_tma_wgmma.c, with one difference: the stages were
   * written through the generic proxy (cp.async) and wgmma reads them through the async
   * proxy, so the waiting thread fences between the two. Then predicated bf16 stores. */
  hg_roles_consumer(b, &r);
  ex_frag_c_t c;
  HG_TRY(ex_frag_c_make(b, &p->mma, &r, &c));
  const hg_mainloop_t ml = {
      .mma = &p->mma, .pipe = &pipe, .ring_a = &ring_a, .ring_b = &ring_b, .fence_proxy = true};
  hg_pipe_pos_t pos = hg_pipe_start(b);
  hg_sched_work_t w;
  hg_sched_work(b, &sched, hg_sched_begin(b, &sched), &w);
  hg_mainloop_emit(b, &ml, c.acc, pos, w.k_count, c.slot, &r);
  hg_val_t row0 = ex_add(b, w.m0, c.row), col0 = ex_add(b, w.n0, c.col);
  hg_status_t s = hg_epilogue_emit(b, &epi, c.acc, &c.map, row0, col0,
                                   ex_add(b, w.m0, c.region_row), w.n0, w.batch, &r);
  hg_sched_end(b, &sched);
  hg_roles_end(b, &r);
  hg_acc_map_free(&c.map);
  return s;
}

int main(int argc, char **argv) {
  const ex_options_t o = ex_options(argc, argv);
  ex_matrix_t a, bm, d;
  ex_matrix_make(&a, HG_BF16, M, K, LDA, true, 1);  /* A: M x K in rows of LDA */
  ex_matrix_make(&bm, HG_BF16, N, K, LDB, true, 2); /* B: N x K in rows of LDB */
  ex_matrix_make(&d, HG_BF16, M, N, LDD, false, 0); /* D: M x N in rows of LDD, NaN */
  ex_matrix_t *const all[] = {&a, &bm, &d, NULL};
  static plans_t p;
  EX_CHECK(make_plans(&p));
  printf("A and B: rows of %d and %d bytes -> cp.async chunks of %d and %d bytes\n", LDA * 2,
         LDB * 2, p.a.spec.vec_bytes, p.b.spec.vec_bytes);
  hg_kernel_t k;
  EX_CHECK(ex_generate("example_gemm_cpasync_wgmma", build, &p, o.backend, &k));
  static const char *const key[] = {"cp.async.ca.shared.global",
                                    "cp.async.mbarrier.arrive.noinc",
                                    "fence.proxy.async",
                                    "wgmma.mma_async",
                                    "st.global",
                                    NULL};
  if (!ex_show(&k, key, &o)) return 1;
  if (strstr(k.ptx.data, "cp.async.bulk.tensor"))
    return fprintf(stderr, "the cp.async kernel holds a TMA load\n"), 1;

  int rc;
  hg_rt_t *rt = ex_gpu_open(&rc);
  if (rt) {
    EX_CHECK(ex_upload(rt, all));
    int64_t lda = LDA, ldb = LDB, ldd = LDD;
    int32_t m = M, n = N, kk = K;
    void *args[] = {&a.dev, &lda, &bm.dev, &ldb, &d.dev, &ldd, &m, &n, &kk};
    const hg_sched_spec_t ss = ex_sched_spec(TILE_M, TILE_N, 8);
    EX_CHECK(ex_launch(rt, &k, (uint32_t)hg_sched_units(&ss, M, N, 1), args));
    rc = ex_check(rt, &a, true, &bm, true, K, 1.0f, 0.0f, NULL, &d, 1e-2) ? 0 : 1;
  }
  ex_cleanup(rt, all, &k);
  return rc;
}
