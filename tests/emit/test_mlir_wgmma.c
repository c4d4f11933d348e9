/* MLIR backend, warpgroup family: the kernels of test_ptx_wgmma.c (every wgmma type
 * family, a spread of N, A from a descriptor and from registers, every transpose the types
 * allow, every N of each family, setmaxnreg honoured, stmatrix x1/x2/x4 (.trans), a
 * warp-specialized TMA + mbarrier + wgmma pipeline) printed as MLIR, lowered and assembled;
 * and the promotion check: 128 f32 accumulator variables carried around a loop of wgmmas
 * (with a constant and with a run-time scale-d) lower without local memory. */
#include "test_mlir_util.h"

typedef struct family {
  hg_dtype_t a, b, acc;
} family_t;

static const family_t families[] = {
    {HG_F16, HG_F16, HG_F16},   {HG_F16, HG_F16, HG_F32},   {HG_BF16, HG_BF16, HG_F32},
    {HG_TF32, HG_TF32, HG_F32}, {HG_E4M3, HG_E4M3, HG_F32}, {HG_E4M3, HG_E5M2, HG_F16},
    {HG_E5M2, HG_E4M3, HG_F32}, {HG_E5M2, HG_E5M2, HG_F16}, {HG_E4M3, HG_E4M3, HG_F16},
    {HG_E5M2, HG_E5M2, HG_F32}, {HG_S8, HG_S8, HG_S32},     {HG_S8, HG_U8, HG_S32},
    {HG_U8, HG_S8, HG_S32},     {HG_U8, HG_U8, HG_S32},
};

typedef struct mma_kernel {
  hg_builder_t *b;
  hg_val_t acc[128], a_desc, a_regs[4], b_desc, scale_d;
} mma_kernel_t;

static mma_kernel_t mma_kernel(const char *name, hg_dtype_t acc) {
  mma_kernel_t k;
  CHECK_OK(hg_builder_create(name, &k.b));
  hg_builder_t *b = k.b;
  hg_b_set_threads(b, 128);
  hg_val_t base = hg_b_param(b, HG_T_I64, "desc");
  for (int i = 0; i < 128; i++)
    k.acc[i] = hg_b_var(b, acc == HG_F32 ? HG_T_F32 : HG_T_I32, HG_NONE);
  k.a_desc = base;
  k.b_desc = hg_b_bin(b, HG_ADD, base, hg_b_i64(b, 64));
  hg_val_t tid = hg_b_sreg(b, HG_TID_X);
  for (int i = 0; i < 4; i++) k.a_regs[i] = hg_b_bin(b, HG_MUL, tid, hg_b_i32(b, i + 1));
  k.scale_d = hg_b_cmp(b, HG_NE, tid, hg_b_i32(b, 0));
  return k;
}

static void mma(mma_kernel_t *k, hg_wgmma_op_t op, hg_val_t scale_d) {
  hg_b_wgmma(k->b, &op, k->acc, op.a_regs ? k->a_regs : &k->a_desc, k->b_desc, scale_d);
}

static void finish(mma_kernel_t *k) {
  hg_builder_t *b = k->b;
  hg_b_wgmma_commit(b);
  hg_b_wgmma_wait(b, 0);
  hg_val_t out = hg_b_param(b, HG_T_I64, "out");
  for (int i = 0; i < 128; i += 4) {
    hg_val_t v[4] = {k->acc[i], k->acc[i + 1], k->acc[i + 2], k->acc[i + 3]};
    hg_b_store(b, HG_GLOBAL, 0, 4, hg_b_bin(b, HG_ADD, out, hg_b_i64(b, 4 * i)), v);
  }
}

static bool sixteen_bit(hg_dtype_t t) {
  return t == HG_F16 || t == HG_BF16;
}

/* Every family, five N, A from a descriptor (nvvm.wgmma.mma_async with a constant scale-d,
 * then inline assembly with the run-time one) and from registers (inline assembly), every
 * transpose combination. */
static void test_wgmma_type_matrix(void) {
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
    const family_t *fa = &families[f];
    char name[64];
    snprintf(name, sizeof name, "mma_%s_%s_%s", hg_dtype_name(fa->a), hg_dtype_name(fa->b),
             hg_dtype_name(fa->acc));
    mma_kernel_t k = mma_kernel(name, fa->acc);
    bool integer = fa->acc == HG_S32;
    static const int ns_float[] = {8, 24, 64, 136, 256};
    static const int ns_int[] = {8, 24, 48, 144, 256};
    const int *ns = integer ? ns_int : ns_float;
    hg_val_t one = hg_b_pred(k.b, true), zero = hg_b_pred(k.b, false);
    int ops = 0, asms = 0;
    hg_b_wgmma_fence(k.b);
    for (int i = 0; i < 5; i++) {
      for (int regs = 0; regs <= 1; regs++) {
        int tmax = sixteen_bit(fa->a) ? (regs ? 1 : 3) : 0;
        for (int t = 0; t <= tmax; t++) {
          hg_wgmma_op_t op = {.n = ns[i], .a = fa->a, .b = fa->b, .acc = fa->acc};
          op.a_regs = regs;
          op.trans_b = t & 1;
          op.trans_a = regs ? false : (t >> 1) & 1;
          if (regs) {
            mma(&k, op, k.scale_d);
            asms++;
          } else {
            mma(&k, op, t & 1 ? zero : one);
            mma(&k, op, k.scale_d);
            ops++;
            asms++;
          }
        }
      }
    }
    finish(&k);
    hg_text_t mlir, ptx;
    if (mlir_lower_and_assemble(k.b, &mlir, &ptx, NULL)) {
      CHECK_EQ(mlir_count(mlir.data, "nvvm.wgmma.mma_async "), ops);
      CHECK_EQ(mlir_count(mlir.data, "wgmma.mma_async.sync.aligned.m64n"), asms);
      int kk = (fa->a == HG_TF32) ? 8 : sixteen_bit(fa->a) ? 16 : 32;
      char want[160];
      snprintf(want, sizeof want, "wgmma.mma_async.sync.aligned.m64n%dk%d.%s.%s.%s {", ns[4], kk,
               hg_dtype_name(fa->acc), hg_dtype_name(fa->a), hg_dtype_name(fa->b));
      CHECK(mlir_has(ptx.data, want));
      bool mixed_int = integer && fa->a != fa->b;
      CHECK(mlir_has(ptx.data, mixed_int ? ".version 8.4\n" : ".version 8.0\n"));
      CHECK_EQ(mlir_count(ptx.data, "wgmma.mma_async.sync.aligned"), ops + asms);
    }
    hg_text_free(&mlir);
    hg_text_free(&ptx);
    hg_builder_destroy(k.b);
  }
}

static void test_wgmma_every_n(void) {
  static const family_t reps[] = {{HG_BF16, HG_BF16, HG_F32},
                                  {HG_F16, HG_F16, HG_F16},
                                  {HG_TF32, HG_TF32, HG_F32},
                                  {HG_E4M3, HG_E5M2, HG_F32},
                                  {HG_U8, HG_S8, HG_S32}};
  for (size_t f = 0; f < sizeof reps / sizeof reps[0]; f++) {
    char name[64];
    snprintf(name, sizeof name, "mma_all_n_%zu", f);
    mma_kernel_t k = mma_kernel(name, reps[f].acc);
    int count = 0;
    hg_val_t one = hg_b_pred(k.b, true);
    hg_b_wgmma_fence(k.b);
    for (int n = 8; n <= 256; n += 8) {
      hg_wgmma_op_t op = {.n = n, .a = reps[f].a, .b = reps[f].b, .acc = reps[f].acc};
      if (hg_ir_wgmma_validate(&op).code == HG_OK) {
        mma(&k, op, one);
        count++;
      }
    }
    CHECK_EQ(count, reps[f].acc == HG_S32 ? 18 : 32);
    finish(&k);
    CHECK(mlir_assemble_ok(k.b));
    hg_builder_destroy(k.b);
  }
}

/* 128 f32 accumulators (m64n256) carried around a K loop: a wgmma per iteration from
 * descriptors that advance with the counter, scale-d false on the first iteration (both
 * as a run-time predicate and, in the second kernel, as constants in a peeled first
 * step), then the epilogue. The variables' slots must all be promoted: no local memory,
 * no stack frame, no spills. */
static void accumulator_loop(bool runtime_scale, bool a_regs) {
  char name[64];
  snprintf(name, sizeof name, "acc128_loop%s%s", runtime_scale ? "_scale" : "",
           a_regs ? "_aregs" : "");
  hg_builder_t *b;
  CHECK_OK(hg_builder_create(name, &b));
  hg_b_set_threads(b, 128);
  hg_val_t desc = hg_b_param(b, HG_T_I64, "desc");
  hg_val_t ktiles = hg_b_param(b, HG_T_I32, "k_tiles");
  hg_val_t out = hg_b_param(b, HG_T_I64, "out");
  hg_val_t acc[128];
  for (int i = 0; i < 128; i++) acc[i] = hg_b_var(b, HG_T_F32, HG_NONE);
  hg_wgmma_op_t op = {.n = 256, .a = HG_BF16, .b = HG_BF16, .acc = HG_F32, .a_regs = a_regs};
  hg_val_t tid = hg_b_sreg(b, HG_TID_X);
  hg_val_t aregs[4];
  for (int r = 0; r < 4; r++) aregs[r] = hg_b_bin(b, HG_ADD, tid, hg_b_i32(b, r));
  hg_val_t start = hg_b_i32(b, 0);
  if (!runtime_scale) { /* peeled first step: D = A * B */
    hg_b_wgmma_fence(b);
    hg_val_t a = desc;
    hg_b_wgmma(b, &op, acc, a_regs ? aregs : &a, desc, hg_b_pred(b, false));
    hg_b_wgmma_commit(b);
    start = hg_b_i32(b, 1);
  }
  hg_val_t kt = hg_b_for(b, start, ktiles, hg_b_i32(b, 1));
  hg_val_t step = hg_b_bin(b, HG_SHL, hg_b_zext(b, kt), hg_b_i64(b, 1));
  hg_val_t da = hg_b_bin(b, HG_ADD, desc, step);
  hg_val_t db = hg_b_bin(b, HG_ADD, da, hg_b_i64(b, 1 << 10));
  hg_val_t scale = runtime_scale ? hg_b_cmp(b, HG_GT_S, kt, hg_b_i32(b, 0)) : hg_b_pred(b, true);
  hg_b_wgmma_fence(b);
  hg_b_wgmma(b, &op, acc, a_regs ? aregs : &da, db, scale);
  hg_b_wgmma_commit(b);
  hg_b_wgmma_wait(b, 0);
  hg_b_endfor(b);
  hg_b_wgmma_wait(b, 0);
  for (int i = 0; i < 128; i += 4) {
    hg_val_t v[4] = {acc[i], acc[i + 1], acc[i + 2], acc[i + 3]};
    hg_b_store(b, HG_GLOBAL, 0, 4, hg_b_bin(b, HG_ADD, out, hg_b_i64(b, 4 * i)), v);
  }
  hg_text_t mlir, ptx;
  hg_ptxas_report_t rep;
  if (mlir_lower_and_assemble(b, &mlir, &ptx, &rep)) {
    CHECK_EQ(mlir_count(mlir.data, "llvm.alloca"), 129); /* 128 accumulators + the counter */
    CHECK(mlir_no_local_memory(ptx.data, &rep));
    CHECK(strstr(ptx.data, "ld.local") == NULL && strstr(ptx.data, "st.local") == NULL);
    CHECK(strstr(rep.notes, "serialized") == NULL);
    CHECK(mlir_has(ptx.data, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"));
    if (rep.notes[0]) fprintf(stderr, "  ptxas notes: %s\n", rep.notes);
  }
  hg_text_free(&mlir);
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

static void test_accumulators_in_a_loop_without_local_memory(void) {
  accumulator_loop(false, false); /* nvvm.wgmma.mma_async */
  accumulator_loop(true, false);  /* inline assembly: run-time scale-d */
  accumulator_loop(true, true);   /* inline assembly: A from registers */
}

static void test_setmaxnreg_not_ignored(void) {
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("warp_specialized", &b));
  hg_b_set_threads(b, 384);
  hg_b_set_min_ctas(b, 1);
  hg_val_t wg = hg_b_bin(b, HG_SHR_U, hg_b_sreg(b, HG_TID_X), hg_b_i32(b, 7));
  hg_b_if(b, hg_b_cmp(b, HG_EQ, wg, hg_b_i32(b, 0)));
  hg_b_comment(b, "producer warpgroup: few registers");
  hg_b_setmaxnreg(b, false, 40);
  hg_b_else(b);
  hg_b_comment(b, "consumer warpgroups: many registers");
  hg_b_setmaxnreg(b, true, 232);
  hg_b_endif(b);
  hg_text_t ptx;
  hg_ptxas_report_t rep;
  if (mlir_lower_and_assemble(b, NULL, &ptx, &rep)) {
    CHECK(mlir_has(ptx.data, ".reqntid 384, 1, 1\n.minnctapersm 1\n"));
    CHECK(mlir_has(ptx.data, "setmaxnreg.dec.sync.aligned.u32 \t40;"));
    CHECK(mlir_has(ptx.data, "setmaxnreg.inc.sync.aligned.u32 \t232;"));
    CHECK_EQ(rep.setmaxnreg_ignored, 0);
    CHECK(strstr(rep.notes, "setmaxnreg") == NULL);
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

static void test_stmatrix_variants(void) {
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("stmatrix", &b));
  hg_b_set_threads(b, 128);
  hg_val_t smem = hg_b_smem_addr(b, hg_b_smem_reserve(b, 4096, 128));
  hg_val_t lane = hg_b_sreg(b, HG_LANEID);
  hg_val_t addr = hg_b_bin(b, HG_ADD, smem, hg_b_bin(b, HG_SHL, lane, hg_b_i32(b, 4)));
  hg_val_t f = hg_b_i2f(b, lane);
  hg_val_t r[4];
  for (int i = 0; i < 4; i++)
    r[i] = hg_b_pack_f32x2(b, HG_BF16, f, hg_b_bin(b, HG_FADD, f, hg_b_f32(b, (float)i)));
  for (int num = 1; num <= 4; num *= 2)
    for (int trans = 0; trans <= 1; trans++) hg_b_stmatrix(b, num, trans, addr, r);
  hg_text_t ptx;
  if (mlir_lower_and_assemble(b, NULL, &ptx, NULL)) {
    const char *expect[] = {"stmatrix.sync.aligned.m8n8.x1.shared.b16 [",
                            "stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [",
                            "stmatrix.sync.aligned.m8n8.x2.shared.b16 [",
                            "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [",
                            "stmatrix.sync.aligned.m8n8.x4.shared.b16 [",
                            "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 ["};
    for (size_t k = 0; k < sizeof expect / sizeof expect[0]; k++)
      CHECK(mlir_has(ptx.data, expect[k]));
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

/* The warp-specialized, cluster-multicast TMA + wgmma main loop of test_ptx_wgmma.c. */
static void test_pipeline_kernel(void) {
  enum { STAGES = 2, N = 128 };
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("gemm_like", &b));
  hg_b_set_threads(b, 384);
  hg_b_set_min_ctas(b, 1);
  hg_b_set_cluster(b, 2, 1, 1);
  hg_val_t map_a = hg_b_param_tmap(b, "A");
  hg_val_t map_b = hg_b_param_tmap(b, "B");
  hg_val_t map_c = hg_b_param_tmap(b, "C");
  hg_val_t ktiles = hg_b_param(b, HG_T_I32, "k_tiles");
  uint32_t a_off[STAGES], b_off[STAGES], full_off[STAGES], empty_off[STAGES];
  for (int s = 0; s < STAGES; s++) {
    a_off[s] = hg_b_smem_reserve(b, 64 * 64 * 2, 1024);
    b_off[s] = hg_b_smem_reserve(b, N * 64 * 2, 1024);
  }
  for (int s = 0; s < STAGES; s++) {
    full_off[s] = hg_b_smem_reserve(b, 8, 8);
    empty_off[s] = hg_b_smem_reserve(b, 8, 8);
  }
  uint32_t c_off = hg_b_smem_reserve(b, 64 * N * 2, 1024);
  hg_val_t tid = hg_b_sreg(b, HG_TID_X);
  hg_val_t wg = hg_b_bin(b, HG_SHR_U, tid, hg_b_i32(b, 7));
  hg_val_t rank = hg_b_sreg(b, HG_CLUSTER_CTARANK);
  hg_val_t m0 = hg_b_bin(b, HG_MUL, hg_b_sreg(b, HG_CTAID_X), hg_b_i32(b, 64));
  hg_val_t n0 = hg_b_bin(b, HG_MUL, hg_b_sreg(b, HG_CTAID_Y), hg_b_i32(b, N));

  hg_b_if(b, hg_b_cmp(b, HG_EQ, tid, hg_b_i32(b, 0)));
  for (int s = 0; s < STAGES; s++) {
    hg_b_mbar_init(b, hg_b_smem_addr(b, full_off[s]), hg_b_i32(b, 1));
    hg_b_mbar_init(b, hg_b_smem_addr(b, empty_off[s]), hg_b_i32(b, 2 * 2));
  }
  hg_b_fence_mbarrier_init(b);
  hg_b_endif(b);
  hg_b_cluster_arrive(b, true);
  hg_b_cluster_wait(b);

  hg_b_if(b, hg_b_cmp(b, HG_EQ, wg, hg_b_i32(b, 0)));
  hg_b_setmaxnreg(b, false, 40);
  hg_b_if(b, hg_b_cmp(b, HG_EQ, tid, hg_b_i32(b, 0)));
  hg_b_tmap_prefetch(b, map_a);
  hg_b_tmap_prefetch(b, map_b);
  hg_val_t policy = hg_b_cache_policy(b, HG_EVICT_LAST);
  hg_val_t kt = hg_b_for(b, hg_b_i32(b, 0), ktiles, hg_b_i32(b, 1));
  hg_val_t stage = hg_b_bin(b, HG_AND, kt, hg_b_i32(b, STAGES - 1));
  hg_val_t phase = hg_b_bin(b, HG_AND, hg_b_bin(b, HG_SHR_U, kt, hg_b_i32(b, 1)), hg_b_i32(b, 1));
  hg_val_t k0 = hg_b_bin(b, HG_MUL, kt, hg_b_i32(b, 64));
  for (int s = 0; s < STAGES; s++) {
    hg_b_if(b, hg_b_cmp(b, HG_EQ, stage, hg_b_i32(b, s)));
    hg_val_t full = hg_b_smem_addr(b, full_off[s]);
    hg_b_mbar_wait(b, hg_b_smem_addr(b, empty_off[s]), hg_b_bin(b, HG_XOR, phase, hg_b_i32(b, 1)));
    hg_b_mbar_arrive_expect_tx(b, full, hg_b_i32(b, (64 + N) * 64 * 2));
    hg_val_t ca[2] = {k0, m0}, cb[2] = {k0, n0};
    hg_b_tma_load(b, map_a, hg_b_smem_addr(b, a_off[s]), full, 2, ca, HG_NONE, policy);
    hg_b_tma_load(b, map_b, hg_b_smem_addr(b, b_off[s]), full, 2, cb,
                  hg_b_bin(b, HG_SHL, hg_b_i32(b, 1), rank), HG_NONE);
    hg_b_endif(b);
  }
  hg_b_endfor(b);
  hg_b_endif(b);
  hg_b_else(b);
  hg_b_setmaxnreg(b, true, 232);
  hg_val_t acc[N / 2];
  for (int i = 0; i < N / 2; i++) acc[i] = hg_b_var(b, HG_T_F32, hg_b_f32(b, 0));
  hg_val_t kt2 = hg_b_for(b, hg_b_i32(b, 0), ktiles, hg_b_i32(b, 1));
  hg_val_t stage2 = hg_b_bin(b, HG_AND, kt2, hg_b_i32(b, STAGES - 1));
  hg_val_t phase2 = hg_b_bin(b, HG_AND, hg_b_bin(b, HG_SHR_U, kt2, hg_b_i32(b, 1)), hg_b_i32(b, 1));
  for (int s = 0; s < STAGES; s++) {
    hg_b_if(b, hg_b_cmp(b, HG_EQ, stage2, hg_b_i32(b, s)));
    hg_b_mbar_wait(b, hg_b_smem_addr(b, full_off[s]), phase2);
    hg_b_wgmma_fence(b);
    for (int kk = 0; kk < 4; kk++) {
      hg_val_t da = hg_b_zext(
          b, hg_b_bin(b, HG_SHR_U, hg_b_smem_addr(b, a_off[s] + 32 * kk), hg_b_i32(b, 4)));
      hg_val_t db = hg_b_zext(
          b, hg_b_bin(b, HG_SHR_U, hg_b_smem_addr(b, b_off[s] + 32 * kk), hg_b_i32(b, 4)));
      hg_val_t sw = hg_b_i64(b, (int64_t)1 << 62);
      da = hg_b_bin(b, HG_OR, da, sw);
      db = hg_b_bin(b, HG_OR, db, sw);
      hg_wgmma_op_t op = {.n = N, .a = HG_BF16, .b = HG_BF16, .acc = HG_F32};
      hg_b_wgmma(b, &op, acc, &da, db, hg_b_pred(b, true));
    }
    hg_b_wgmma_commit(b);
    hg_b_wgmma_wait(b, 0);
    hg_b_mbar_arrive_cluster(b, hg_b_smem_addr(b, empty_off[s]), hg_b_i32(b, 0));
    hg_b_mbar_arrive_cluster(b, hg_b_smem_addr(b, empty_off[s]), hg_b_i32(b, 1));
    hg_b_endif(b);
  }
  hg_b_endfor(b);
  hg_val_t lane = hg_b_sreg(b, HG_LANEID);
  hg_val_t base =
      hg_b_bin(b, HG_ADD, hg_b_smem_addr(b, c_off), hg_b_bin(b, HG_SHL, lane, hg_b_i32(b, 4)));
  for (int i = 0; i < N / 2; i += 8) {
    hg_val_t r[4];
    for (int j = 0; j < 4; j++)
      r[j] = hg_b_pack_f32x2(b, HG_BF16, acc[i + 2 * j], acc[i + 2 * j + 1]);
    hg_b_stmatrix(b, 4, false, hg_b_bin(b, HG_ADD, base, hg_b_i32(b, 64 * i)), r);
  }
  hg_b_fence_proxy_async(b);
  hg_b_bar_sync(b, 1, 256);
  hg_b_if(b, hg_b_cmp(b, HG_EQ, tid, hg_b_i32(b, 128)));
  hg_val_t cc[2] = {n0, m0};
  hg_b_tma_store(b, map_c, hg_b_smem_addr(b, c_off), 2, cc);
  hg_b_bulk_commit(b);
  hg_b_bulk_wait(b, 0, true);
  hg_b_endif(b);
  hg_b_endif(b);
  hg_b_cluster_arrive(b, false);
  hg_b_cluster_wait(b);

  hg_text_t ptx;
  hg_ptxas_report_t rep;
  if (mlir_lower_and_assemble(b, NULL, &ptx, &rep)) {
    CHECK_EQ(rep.setmaxnreg_ignored, 0);
    CHECK(mlir_no_local_memory(ptx.data, &rep));
    CHECK(strstr(rep.notes, "serialized") == NULL);
    CHECK(rep.registers <= 168);
    if (rep.notes[0]) fprintf(stderr, "  ptxas notes: %s\n", rep.notes);
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

int main(void) {
  mlir_test_require_tools();
  HG_RUN(test_accumulators_in_a_loop_without_local_memory);
  HG_RUN(test_wgmma_type_matrix);
  HG_RUN(test_wgmma_every_n);
  HG_RUN(test_setmaxnreg_not_ignored);
  HG_RUN(test_stmatrix_variants);
  HG_RUN(test_pipeline_kernel);
  mlir_test_report_times();
  return hg_test_finish();
}
