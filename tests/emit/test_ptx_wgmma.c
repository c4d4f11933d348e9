/* PTX backend, warpgroup family: wgmma for every type family (f16, bf16, tf32, the four
 * fp8 mixes with both accumulators, the four s8/u8 mixes), a spread of N, A from a
 * descriptor and from registers, every transpose variant the type allows, and every N
 * of each family; setmaxnreg with no "ignored" note from ptxas; stmatrix x1/x2/x4
 * (.trans); and a warp-specialized TMA + mbarrier + wgmma pipeline, all through ptxas. */
#include "emit/ir.h"
#include "emit_test_util.h"

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

/* A warpgroup kernel with 128 accumulator variables of the family's type, one A
 * descriptor, four A fragment registers and a B descriptor. */
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

static void mma(mma_kernel_t *k, hg_wgmma_op_t op) {
  hg_b_wgmma(k->b, &op, k->acc, op.a_regs ? k->a_regs : &k->a_desc, k->b_desc, k->scale_d);
}

/* Keep accumulators alive past the wgmmas so that ptxas cannot drop them. */
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
    hg_b_wgmma_fence(k.b);
    for (int i = 0; i < 5; i++) {
      for (int regs = 0; regs <= 1; regs++) {
        int tmax = sixteen_bit(fa->a) ? (regs ? 1 : 3) : 0; /* transpose combinations */
        for (int t = 0; t <= tmax; t++) {
          hg_wgmma_op_t op = {.n = ns[i], .a = fa->a, .b = fa->b, .acc = fa->acc};
          op.a_regs = regs;
          op.trans_b = regs ? (t & 1) : (t & 1);
          op.trans_a = regs ? false : (t >> 1) & 1;
          mma(&k, op);
        }
      }
    }
    finish(&k);
    hg_text_t ptx;
    if (emit_and_assemble(k.b, &ptx, NULL)) {
      int kk = (fa->a == HG_TF32) ? 8 : sixteen_bit(fa->a) ? 16 : 32;
      char want[160];
      snprintf(want, sizeof want, "wgmma.mma_async.sync.aligned.m64n%dk%d.%s.%s.%s {", ns[4], kk,
               hg_dtype_name(fa->acc), hg_dtype_name(fa->a), hg_dtype_name(fa->b));
      CHECK(strstr(ptx.data, want) != NULL);
      bool mixed_int = integer && fa->a != fa->b;
      /* mixed-signedness integer wgmma needs PTX ISA 8.4; everything else 8.0 */
      CHECK(strstr(ptx.data, mixed_int ? ".version 8.4\n" : ".version 8.0\n") != NULL);
      if (sixteen_bit(fa->a)) CHECK(strstr(ptx.data, ", 1, 1, 1, 1;") != NULL);
      if (integer) CHECK(strstr(ptx.data, ", 1, 1;") == NULL); /* no scale immediates */
    }
    hg_text_free(&ptx);
    hg_builder_destroy(k.b);
  }
}

/* Every N each family offers (with A from a descriptor), one kernel per family. */
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
    hg_b_wgmma_fence(k.b);
    for (int n = 8; n <= 256; n += 8) {
      hg_wgmma_op_t op = {.n = n, .a = reps[f].a, .b = reps[f].b, .acc = reps[f].acc};
      if (hg_ir_wgmma_validate(&op).code == HG_OK) {
        mma(&k, op);
        count++;
      }
    }
    CHECK_EQ(count, reps[f].acc == HG_S32 ? 18 : 32);
    finish(&k);
    CHECK(assemble_ok(k.b));
    hg_builder_destroy(k.b);
  }
}

/* Warp specialization: warpgroup 0 gives registers away, the others take them. With a
 * thread count and min CTAs per SM = 1, ptxas knows the register count at entry and
 * honours setmaxnreg: no C7508 "'setmaxnreg' ignored" note. Without .minnctapersm the
 * same PTX draws that note, which shows that the check can see it. */
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
  if (emit_and_assemble(b, &ptx, &rep)) {
    CHECK(strstr(ptx.data, ".reqntid 384, 1, 1\n.minnctapersm 1\n") != NULL);
    CHECK(strstr(ptx.data, "setmaxnreg.dec.sync.aligned.u32 40;") != NULL);
    CHECK(strstr(ptx.data, "setmaxnreg.inc.sync.aligned.u32 232;") != NULL);
    CHECK_EQ(rep.setmaxnreg_ignored, 0);
    CHECK(strstr(rep.notes, "setmaxnreg") == NULL);
    if (rep.notes[0]) fprintf(stderr, "  ptxas notes: %s\n", rep.notes);

    /* the same PTX without .minnctapersm: ptxas ignores setmaxnreg and says so */
    char *copy = strdup(ptx.data);
    char *m = copy ? strstr(copy, ".minnctapersm 1\n") : NULL;
    CHECK(m != NULL);
    if (m) {
      memmove(m, m + strlen(".minnctapersm 1\n"), strlen(m + strlen(".minnctapersm 1\n")) + 1);
      hg_ptxas_report_t rep2;
      CHECK_OK(hg_ptxas_check(copy, &rep2));
      CHECK_EQ(rep2.setmaxnreg_ignored, 1);
      CHECK(strstr(rep2.notes, "setmaxnreg") != NULL);
    }
    free(copy);
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
  if (emit_and_assemble(b, &ptx, NULL)) {
    const char *expect[] = {"stmatrix.sync.aligned.m8n8.x1.shared.b16 [",
                            "stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [",
                            "stmatrix.sync.aligned.m8n8.x2.shared.b16 [",
                            "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [",
                            "stmatrix.sync.aligned.m8n8.x4.shared.b16 [",
                            "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 ["};
    for (size_t k = 0; k < sizeof expect / sizeof expect[0]; k++)
      CHECK(strstr(ptx.data, expect[k]) != NULL);
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

/* A warp-specialized, cluster-multicast TMA + wgmma main loop, the shape a GEMM
 * generator drives: producer warpgroup issues TMA loads into a 2-stage ring, consumers
 * wait on full barriers, run wgmma from descriptors, release stages; epilogue packs to
 * bf16, stmatrix into shared memory, one thread stores with TMA. */
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

  hg_b_comment(b, "barrier setup by one thread, made visible to the cluster");
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
      /* descriptors: start address >> 4 in bits 0..13, 128B swizzle (1 << 62) */
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
  hg_b_comment(b, "epilogue: bf16 pairs through stmatrix, then one TMA store");
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
  if (emit_and_assemble(b, &ptx, &rep)) {
    CHECK_EQ(rep.setmaxnreg_ignored, 0);
    CHECK_EQ(rep.spill_store_bytes, 0);
    CHECK(rep.registers <= 168);
    if (rep.notes[0]) fprintf(stderr, "  ptxas notes: %s\n", rep.notes);
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

int main(void) {
  emit_test_require_ptxas();
  HG_RUN(test_wgmma_type_matrix);
  HG_RUN(test_wgmma_every_n);
  HG_RUN(test_setmaxnreg_not_ignored);
  HG_RUN(test_stmatrix_variants);
  HG_RUN(test_pipeline_kernel);
  return hg_test_finish();
}
