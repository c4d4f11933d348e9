/* MLIR backend, non-TMA families: the kernels of test_ptx_ops.c printed as MLIR, lowered
 * with mlir-opt-22 and assembled by ptxas, with checks on the MLIR where the op choice
 * carries meaning (signedness, NaN behaviour, rounding) and on the PTX where the lowering
 * must produce a particular instruction (no fma contraction, saturating f2i, pack operand
 * order, kernel directives). Plus the backend's failure sentences: incomplete kernel,
 * missing mlir-opt-22, a tool failure with its diagnostics and the kept input. */
#include <sys/stat.h>
#include <unistd.h>

#include "test_mlir_util.h"

static hg_builder_t *kernel(const char *name) {
  hg_builder_t *b = NULL;
  CHECK_OK(hg_builder_create(name, &b));
  hg_b_set_threads(b, 128);
  return b;
}

/* Keep a value alive: store it to global memory so that nothing drops the computation. */
static void sink(hg_builder_t *b, hg_val_t out, int slot, hg_val_t v) {
  hg_type_t t = hg_val_type(b, v);
  if (t == HG_T_PRED) v = hg_b_select(b, v, hg_b_i32(b, 1), hg_b_i32(b, 0));
  hg_val_t addr = hg_b_bin(b, HG_ADD, out, hg_b_i64(b, 8 * slot));
  hg_b_store(b, HG_GLOBAL, 0, 1, addr, &v);
}

static void test_integer_and_float_arithmetic(void) {
  hg_builder_t *b = kernel("arith");
  hg_val_t out = hg_b_param(b, HG_T_I64, "out");
  hg_val_t n = hg_b_param(b, HG_T_I32, "n");
  hg_val_t f = hg_b_param(b, HG_T_F32, "f");
  hg_val_t tid = hg_b_sreg(b, HG_TID_X);
  hg_val_t x32 = hg_b_bin(b, HG_SUB, tid, n);
  hg_val_t y32 = hg_b_bin(b, HG_ADD, n, hg_b_i32(b, 7));
  hg_val_t x64 = hg_b_sext(b, x32), y64 = hg_b_zext(b, y32);
  int slot = 0;
  for (int op = HG_ADD; op <= HG_SHR_U; op++) {
    sink(b, out, slot++, hg_b_bin(b, (hg_binop_t)op, x32, y32));
    sink(b, out, slot++, hg_b_bin(b, (hg_binop_t)op, x64, y64));
  }
  hg_val_t g = hg_b_i2f(b, x32);
  for (int op = HG_FADD; op <= HG_FMAX; op++) sink(b, out, slot++, hg_b_bin(b, op, f, g));
  hg_val_t p = hg_b_cmp(b, HG_LT_S, x32, y32), q = hg_b_cmp(b, HG_GE_U, x64, y64);
  sink(b, out, slot++, hg_b_bin(b, HG_AND, p, q));
  sink(b, out, slot++, hg_b_bin(b, HG_OR, p, q));
  sink(b, out, slot++, hg_b_bin(b, HG_XOR, p, q));
  sink(b, out, slot++, hg_b_not(b, p));
  sink(b, out, slot++, hg_b_not(b, x32));
  sink(b, out, slot++, hg_b_not(b, x64));
  sink(b, out, slot++, hg_b_mad(b, x32, y32, n));
  sink(b, out, slot++, hg_b_mad(b, x64, y64, x64));
  sink(b, out, slot++, hg_b_ffma(b, f, g, f));
  /* a separate multiply and add must stay two rounded steps (no contraction) */
  sink(b, out, slot++, hg_b_bin(b, HG_FADD, hg_b_bin(b, HG_FMUL, f, g), f));
  for (int c = HG_EQ; c <= HG_GE_U; c++) {
    sink(b, out, slot++, hg_b_cmp(b, (hg_cmp_t)c, x32, y32));
    sink(b, out, slot++, hg_b_cmp(b, (hg_cmp_t)c, x64, y64));
  }
  for (int c = HG_FLT; c <= HG_FEQ; c++) sink(b, out, slot++, hg_b_cmp(b, (hg_cmp_t)c, f, g));
  sink(b, out, slot++, hg_b_select(b, p, x32, y32));
  sink(b, out, slot++, hg_b_select(b, p, x64, y64));
  sink(b, out, slot++, hg_b_select(b, p, f, g));
  sink(b, out, slot++, hg_b_select(b, p, q, hg_b_pred(b, true)));
  sink(b, out, slot++, hg_b_trunc(b, x64));
  sink(b, out, slot++, hg_b_f2i(b, f));
  sink(b, out, slot++, hg_b_bitcast(b, HG_T_I32, f));
  sink(b, out, slot++, hg_b_bitcast(b, HG_T_F32, x32));
  sink(b, out, slot++, hg_b_i64(b, INT64_MIN));
  sink(b, out, slot++, hg_b_i64(b, -5));
  sink(b, out, slot++, hg_b_f32(b, -0.0f));
  sink(b, out, slot++, hg_b_f32(b, 1.5f));
  /* shifts by constant amounts at and past the width: PTX clamps, and so must we */
  sink(b, out, slot++, hg_b_bin(b, HG_SHL, x32, hg_b_i32(b, 40)));
  sink(b, out, slot++, hg_b_bin(b, HG_SHR_S, x32, hg_b_i32(b, 32)));
  sink(b, out, slot++, hg_b_bin(b, HG_SHR_U, x64, hg_b_i64(b, 64)));
  hg_text_t mlir, ptx;
  if (mlir_lower_and_assemble(b, &mlir, &ptx, NULL)) {
    const char *expect_mlir[] = {"arith.divsi",
                                 "arith.divui",
                                 "arith.remsi",
                                 "arith.remui",
                                 "arith.minsi",
                                 "arith.maxui",
                                 "arith.shrsi",
                                 "arith.shrui",
                                 "arith.shli",
                                 "arith.cmpi slt",
                                 "arith.cmpi uge",
                                 "arith.cmpi ule",
                                 "arith.cmpf ogt",
                                 "arith.cmpf oeq",
                                 "arith.minnumf",
                                 "arith.maxnumf",
                                 "arith.extsi",
                                 "arith.extui",
                                 "arith.trunci",
                                 "arith.sitofp",
                                 "llvm.fptosi.sat.i32.f32",
                                 "llvm.intr.fma",
                                 "arith.constant -9223372036854775808 : i64",
                                 "arith.constant 0x80000000 : f32",
                                 "arith.constant 0x3FC00000 : f32"};
    for (size_t k = 0; k < sizeof expect_mlir / sizeof expect_mlir[0]; k++)
      CHECK(mlir_has(mlir.data, expect_mlir[k]));
    CHECK(strstr(mlir.data, "index_castui") == NULL);
    /* (LLVM computes x % y as x - (x / y) * y next to the division: no rem in the PTX) */
    const char *expect_ptx[] = {"div.s32",         "div.u32",        "div.s64",      "div.u64",
                                "min.s32",         "max.u32",        "mul.rn.f32",   "add.rn.f32",
                                "sub.rn.f32",      "fma.rn.f32",     "min.f32",      "max.f32",
                                "cvt.rzi.s32.f32", "cvt.rn.f32.s32", "setp.nan.f32", "cvt.s64.s32"};
    for (size_t k = 0; k < sizeof expect_ptx / sizeof expect_ptx[0]; k++)
      CHECK(mlir_has(ptx.data, expect_ptx[k]));
    /* only the explicit hg_b_ffma is fused: mul + add stayed two instructions */
    CHECK_EQ(mlir_count(ptx.data, "fma.rn.f32"), 1);
  }
  hg_text_free(&mlir);
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

/* PTX's semantics survive where arith/LLVM differ: shift amounts at or past the width
 * clamp (shl/shr.u give 0, shr.s the sign fill), a 64-bit shift reads its amount as u32,
 * and f2i saturates (NaN -> 0). On constants LLVM folds all of it, so the stored
 * immediates show the semantics the lowering kept. */
static void test_semantics_on_constants(void) {
  hg_builder_t *b = kernel("constants");
  hg_val_t out = hg_b_param(b, HG_T_I64, "out");
  /* shl.b64 3, (u32)0x100000005 = 5 -> 96 */
  sink(b, out, 0, hg_b_bin(b, HG_SHL, hg_b_i64(b, 3), hg_b_i64(b, 0x100000005ll)));
  /* shr.s32 -8, 32 -> -1 (sign fill) */
  sink(b, out, 1, hg_b_bin(b, HG_SHR_S, hg_b_i32(b, -8), hg_b_i32(b, 32)));
  /* shl.b32 7, 40 -> 0 and shr.u64 -1, 64 -> 0: stored as a plain 0 */
  sink(b, out, 2, hg_b_bin(b, HG_SHL, hg_b_i32(b, 7), hg_b_i32(b, 40)));
  sink(b, out, 3, hg_b_bin(b, HG_SHR_U, hg_b_i64(b, -1), hg_b_i64(b, 64)));
  /* in range: shr.s64 -4096, 2 -> -1024; shr.u32 0xfffffff8, 29 -> 7 */
  sink(b, out, 4, hg_b_bin(b, HG_SHR_S, hg_b_i64(b, -4096), hg_b_i64(b, 2)));
  sink(b, out, 5, hg_b_bin(b, HG_SHR_U, hg_b_i32(b, -8), hg_b_i32(b, 29)));
  /* cvt.rzi.s32.f32 saturates and gives 0 for NaN */
  sink(b, out, 6, hg_b_f2i(b, hg_b_f32(b, 1e10f)));
  sink(b, out, 7, hg_b_f2i(b, hg_b_f32(b, -1e10f)));
  sink(b, out, 8, hg_b_f2i(b, hg_b_bitcast(b, HG_T_F32, hg_b_i32(b, 0x7fc00000))));
  hg_text_t ptx;
  if (mlir_lower_and_assemble(b, NULL, &ptx, NULL)) {
    CHECK(mlir_has(ptx.data, "], 96;"));
    CHECK(mlir_has(ptx.data, "], -1;"));
    CHECK(mlir_has(ptx.data, "], -1024;"));
    CHECK(mlir_has(ptx.data, "], 7;"));
    CHECK(mlir_has(ptx.data, "], 2147483647;"));
    CHECK(mlir_has(ptx.data, "], -2147483648;"));
    CHECK_EQ(mlir_count(ptx.data, "], 0;"), 3);
    CHECK(strstr(ptx.data, "shl.") == NULL && strstr(ptx.data, "shr.") == NULL);
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

static void test_pack_unpack(void) {
  hg_builder_t *b = kernel("pack");
  hg_val_t out = hg_b_param(b, HG_T_I64, "out");
  hg_val_t lo = hg_b_param(b, HG_T_F32, "lo");
  hg_val_t hi = hg_b_param(b, HG_T_F32, "hi");
  hg_val_t bf = hg_b_pack_f32x2(b, HG_BF16, lo, hi);
  hg_val_t h = hg_b_pack_f32x2(b, HG_F16, lo, hi);
  sink(b, out, 0, bf);
  sink(b, out, 1, h);
  sink(b, out, 2, hg_b_unpack_f32(b, HG_BF16, bf));
  sink(b, out, 3, hg_b_unpack_f32(b, HG_F16, h));
  sink(b, out, 4, hg_b_unpack_f32(b, HG_E4M3, h));
  sink(b, out, 5, hg_b_unpack_f32(b, HG_E5M2, h));
  hg_text_t mlir, ptx;
  if (mlir_lower_and_assemble(b, &mlir, &ptx, NULL)) {
    /* cvt.rn.bf16x2.f32 d, a, b puts a in the upper half: hi must come first */
    char want[160];
    snprintf(want, sizeof want, "nvvm.convert.f32x2.to.bf16x2 %%v%d_hi, %%v%d_lo", hi.id, lo.id);
    CHECK(mlir_has(mlir.data, want));
    snprintf(want, sizeof want, "nvvm.convert.f32x2.to.f16x2 %%v%d_hi, %%v%d_lo", hi.id, lo.id);
    CHECK(mlir_has(mlir.data, want));
    CHECK(mlir_has(ptx.data, "cvt.rn.bf16x2.f32"));
    CHECK(mlir_has(ptx.data, "cvt.rn.f16x2.f32"));
    CHECK(mlir_has(ptx.data, "cvt.rn.f16x2.e4m3x2"));
    CHECK(mlir_has(ptx.data, "cvt.rn.f16x2.e5m2x2"));
    CHECK(mlir_has(ptx.data, "cvt.f32.f16"));
    /* the PTX operand order: the register loaded from parameter `hi` comes first */
    const char *cvt = strstr(ptx.data, "cvt.rn.bf16x2.f32");
    char ra[32] = "", rb[32] = "";
    if (cvt) sscanf(cvt, "cvt.rn.bf16x2.f32 %*[^,], %31[^,], %31[^;];", ra, rb);
    char lhi[64], llo[64];
    snprintf(lhi, sizeof lhi, "ld.param.b32 \t%s, [pack_param_2];", ra);
    snprintf(llo, sizeof llo, "ld.param.b32 \t%s, [pack_param_1];", rb);
    CHECK(mlir_has(ptx.data, lhi));
    CHECK(mlir_has(ptx.data, llo));
  }
  hg_text_free(&mlir);
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

static void test_special_registers_and_clock(void) {
  hg_builder_t *b = kernel("sregs");
  hg_b_set_cluster(b, 2, 2, 1);
  hg_val_t out = hg_b_param(b, HG_T_I64, "out");
  for (int r = HG_TID_X; r <= HG_SMID; r++) sink(b, out, r, hg_b_sreg(b, (hg_sreg_t)r));
  sink(b, out, 40, hg_b_clock64(b));
  hg_text_t ptx;
  if (mlir_lower_and_assemble(b, NULL, &ptx, NULL)) {
    const char *expect[] = {"%tid.x",
                            "%ntid.x",
                            "%nctaid.z",
                            "%laneid",
                            "%cluster_ctarank",
                            "%cluster_nctarank",
                            "%cluster_ctaid.y",
                            "%clusterid.z",
                            "%nclusterid.x",
                            "%smid",
                            "%clock64",
                            ".explicitcluster",
                            ".reqnctapercluster 2, 2, 1"};
    for (size_t k = 0; k < sizeof expect / sizeof expect[0]; k++)
      CHECK(mlir_has(ptx.data, expect[k]));
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

static void test_loads_stores_atomics(void) {
  hg_builder_t *b = kernel("memory");
  hg_b_set_cluster(b, 2, 1, 1);
  hg_val_t g = hg_b_param(b, HG_T_I64, "g");
  uint32_t off = hg_b_smem_reserve(b, 256, 16);
  hg_val_t s = hg_b_smem_addr(b, off);
  hg_val_t rank = hg_b_sreg(b, HG_CLUSTER_CTARANK);
  hg_val_t remote = hg_b_mapa(b, s, hg_b_bin(b, HG_XOR, rank, hg_b_i32(b, 1)));
  hg_val_t addrs[3] = {g, s, remote};
  hg_space_t spaces[3] = {HG_GLOBAL, HG_SHARED, HG_SHARED_CLUSTER};
  static const hg_type_t types[3] = {HG_T_I32, HG_T_I64, HG_T_F32};
  for (int sp = 0; sp < 3; sp++) {
    for (int t = 0; t < 3; t++)
      for (int n = 1; n <= 4; n *= 2) {
        if (types[t] == HG_T_I64 && n == 4) continue;
        hg_val_t v[4];
        hg_b_load(b, spaces[sp], types[t], 0, n, addrs[sp], v);
        /* stored elsewhere, so that the load is not a no-op to drop */
        hg_val_t dst = sp == 0 ? hg_b_bin(b, HG_ADD, addrs[sp], hg_b_i64(b, 64))
                               : hg_b_bin(b, HG_ADD, addrs[sp], hg_b_i32(b, 64));
        hg_b_store(b, spaces[sp], 0, n, dst, v);
      }
    for (int bits = 8; bits <= 16; bits *= 2) {
      hg_val_t v[1];
      hg_b_load(b, spaces[sp], HG_T_I32, bits, 1, addrs[sp], v);
      hg_val_t dst = sp == 0 ? hg_b_bin(b, HG_ADD, addrs[sp], hg_b_i64(b, 128))
                             : hg_b_bin(b, HG_ADD, addrs[sp], hg_b_i32(b, 128));
      hg_b_store(b, spaces[sp], bits, 1, dst, v);
    }
  }
  hg_b_atomic_add_f32(b, g, hg_b_f32(b, 1.0f));
  hg_text_t ptx;
  if (mlir_lower_and_assemble(b, NULL, &ptx, NULL)) {
    const char *expect[] = {
        "ld.global.v4.b32",      "ld.global.v2.b64",     "st.global.v4.b32",
        "ld.shared.v2.b32",      "st.shared.b64",        "ld.shared::cluster.v4.b32",
        "st.shared::cluster.b8", "ld.global.b16",        "st.shared.b16",
        "cvta.to.global.u64",    "mapa.shared::cluster", "add.f32"};
    for (size_t k = 0; k < sizeof expect / sizeof expect[0]; k++)
      CHECK(mlir_has(ptx.data, expect[k]));
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

/* Every pair hg_b_red takes, lowered: llvm.atomicrmw with the matching binop (NVPTX
 * prints atom.global.<op>: the same reduction, the old value unused), uinc_wrap/udec_wrap
 * for PTX's inc/dec, and ptx.c's own 16-bit CAS loop as inline assembly for 16-bit float
 * min/max, several times in one function (its label is local to its { } block). */
static void test_global_reductions(void) {
  hg_builder_t *b = kernel("reductions");
  hg_val_t g = hg_b_param(b, HG_T_I64, "g");
  emit_test_reductions(b, g);
  hg_text_t mlir, ptx;
  if (mlir_lower_and_assemble(b, &mlir, &ptx, NULL)) {
    const char *in_mlir[] = {"llvm.atomicrmw uinc_wrap",
                             "llvm.atomicrmw udec_wrap",
                             "llvm.atomicrmw umin",
                             "llvm.atomicrmw max",
                             "llvm.atomicrmw fadd",
                             "llvm.atomicrmw _xor",
                             "monotonic : !llvm.ptr<1>, bf16",
                             "llvm.inline_asm has_side_effects \"{\\n.reg .b64 %hg_a;"};
    for (size_t k = 0; k < sizeof in_mlir / sizeof in_mlir[0]; k++)
      CHECK(mlir_has(mlir.data, in_mlir[k]));
    const char *in_ptx[] = {"atom.global.inc.u32",       "atom.global.dec.u32",
                            "atom.global.add.noftz.f16", "atom.global.add.noftz.bf16",
                            "atom.global.add.f32",       "atom.global.add.u64",
                            "atom.global.min.u32",       "atom.global.min.s32",
                            "atom.global.max.u32",       "atom.global.max.s32",
                            "atom.global.and.b32",       "atom.global.or.b64",
                            "atom.global.xor.b64",       "atom.global.cas.b16 %hg_seen",
                            "min.f16 %hg_new",           "max.bf16 %hg_new"};
    for (size_t k = 0; k < sizeof in_ptx / sizeof in_ptx[0]; k++)
      CHECK(mlir_has(ptx.data, in_ptx[k]));
    int loops = 0;
    for (const char *q = ptx.data; (q = strstr(q, "hg_red_cas:")) != NULL; q++) loops++;
    CHECK(loops >= 8); /* LLVM may duplicate a block, never drop one */
  }
  hg_text_free(&mlir);
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

static void test_sync_cluster_and_mbarriers(void) {
  hg_builder_t *b = kernel("sync");
  hg_b_set_cluster(b, 4, 1, 1);
  uint32_t boff = hg_b_smem_reserve(b, 8, 8);
  hg_val_t bar = hg_b_smem_addr(b, boff);
  hg_val_t rank = hg_b_sreg(b, HG_CLUSTER_CTARANK);
  hg_val_t elected = hg_b_elect_sync(b);
  hg_b_if(b, elected);
  hg_b_mbar_init(b, bar, hg_b_i32(b, 4));
  hg_b_fence_mbarrier_init(b);
  hg_b_endif(b);
  hg_b_cluster_arrive(b, true);
  hg_b_cluster_wait(b);
  hg_b_mbar_arrive(b, bar);
  hg_b_mbar_arrive_cluster(b, bar, hg_b_i32(b, 0));
  hg_b_mbar_arrive_expect_tx(b, bar, hg_b_i32(b, 1024));
  hg_b_mbar_expect_tx(b, bar, hg_b_i32(b, 512));
  hg_val_t parity = hg_b_bin(b, HG_AND, rank, hg_b_i32(b, 1));
  hg_val_t done = hg_b_mbar_try_wait(b, bar, parity);
  hg_b_if(b, hg_b_not(b, done));
  hg_b_mbar_wait(b, bar, parity);
  hg_b_endif(b);
  hg_b_bar_sync(b, 0, 0);
  hg_b_bar_sync(b, 1, 64);
  hg_b_bar_arrive(b, 2, 96);
  hg_b_fence_proxy_async(b);
  hg_b_cluster_arrive(b, false);
  hg_b_cluster_wait(b);
  hg_text_t mlir, ptx;
  if (mlir_lower_and_assemble(b, &mlir, &ptx, NULL)) {
    const char *expect_mlir[] = {
        "nvgpu.mbarrier.init",     "nvgpu.mbarrier.arrive ", "nvgpu.mbarrier.arrive.expect_tx",
        "nvvm.mbarrier.expect_tx", "nvvm.mbarrier.try_wait", "nvvm.elect.sync"};
    for (size_t k = 0; k < sizeof expect_mlir / sizeof expect_mlir[0]; k++)
      CHECK(mlir_has(mlir.data, expect_mlir[k]));
    const char *expect[] = {"elect.sync",
                            "mbarrier.init.shared.b64",
                            "fence.mbarrier_init.release.cluster;",
                            "barrier.cluster.arrive.relaxed;",
                            "barrier.cluster.arrive;",
                            "barrier.cluster.wait;",
                            "mbarrier.arrive.shared.b64",
                            "mbarrier.arrive.shared::cluster.b64 _,",
                            "mbarrier.arrive.expect_tx.shared.b64",
                            "mbarrier.expect_tx.relaxed.cta.shared.b64",
                            "mbarrier.try_wait.parity.shared.b64",
                            "bar.sync \t0;",
                            "bar.sync \t1, 64;",
                            "bar.arrive \t2, 96;",
                            "fence.proxy.async.shared::cta;"};
    for (size_t k = 0; k < sizeof expect / sizeof expect[0]; k++)
      CHECK(mlir_has(ptx.data, expect[k]));
    /* the remote arrive has the default .release.cta semantics, as in ptx.c */
    CHECK(strstr(ptx.data, "release.cluster.shared::cluster") == NULL);
    /* the wait loop spins on the same instruction as ptx.c's, without a suspend hint */
    CHECK(strstr(ptx.data, "LAB_WAIT") == NULL);
  }
  hg_text_free(&mlir);
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

static void test_control_flow_and_comments(void) {
  hg_builder_t *b = kernel("flow");
  hg_val_t out = hg_b_param(b, HG_T_I64, "out");
  hg_val_t n = hg_b_param(b, HG_T_I32, "n");
  hg_b_comment(b, "sum the odd numbers below n\nin a loop with an if");
  hg_b_comment(b, "odd\tchars: \xc3\xa9");
  hg_val_t sum = hg_b_var(b, HG_T_I32, hg_b_i32(b, 0));
  hg_val_t k = hg_b_var(b, HG_T_I32, hg_b_i32(b, 0));
  hg_val_t done = hg_b_var(b, HG_T_PRED, hg_b_pred(b, false));
  hg_val_t fsum = hg_b_var(b, HG_T_F32, HG_NONE);
  hg_val_t wide = hg_b_var(b, HG_T_I64, hg_b_i64(b, 0));
  hg_b_assign(b, fsum, hg_b_f32(b, 0));
  hg_b_loop(b);
  hg_b_break_if(b, hg_b_cmp(b, HG_GE_S, k, n));
  hg_b_if(b, hg_b_cmp(b, HG_EQ, hg_b_bin(b, HG_AND, k, hg_b_i32(b, 1)), hg_b_i32(b, 1)));
  hg_b_assign(b, sum, hg_b_bin(b, HG_ADD, sum, k));
  hg_b_else(b);
  hg_b_if(b, hg_b_cmp(b, HG_GT_S, k, hg_b_i32(b, 1000)));
  hg_b_assign(b, done, hg_b_pred(b, true));
  hg_b_break_if(b, done);
  hg_b_endif(b);
  hg_b_endif(b);
  hg_b_assign(b, k, hg_b_bin(b, HG_ADD, k, hg_b_i32(b, 1)));
  hg_b_endloop(b);
  hg_val_t i = hg_b_for(b, hg_b_i32(b, 0), n, hg_b_i32(b, 2));
  hg_b_assign(b, fsum, hg_b_bin(b, HG_FADD, fsum, hg_b_i2f(b, i)));
  hg_b_assign(b, wide, hg_b_bin(b, HG_ADD, wide, hg_b_sext(b, i)));
  hg_b_endfor(b);
  hg_b_if(b, hg_b_cmp(b, HG_EQ, n, hg_b_i32(b, 0)));
  hg_b_return(b);
  hg_b_endif(b);
  sink(b, out, 0, sum);
  sink(b, out, 1, fsum);
  sink(b, out, 2, wide);
  sink(b, out, 3, done);
  hg_text_t mlir, ptx;
  hg_ptxas_report_t rep;
  if (mlir_lower_and_assemble(b, &mlir, &ptx, &rep)) {
    CHECK(mlir_has(mlir.data, "// sum the odd numbers below n\n"));
    CHECK(mlir_has(mlir.data, "// in a loop with an if\n"));
    CHECK(mlir_has(mlir.data, "// odd?chars: ??\n")); /* kept ASCII like ptx.c */
    CHECK(mlir_has(mlir.data, "llvm.alloca"));
    CHECK(mlir_has(mlir.data, "cf.cond_br"));
    /* variables live in slots that LLVM promotes: no local memory is left */
    CHECK(mlir_no_local_memory(ptx.data, &rep));
    CHECK(strstr(ptx.data, "ld.local") == NULL && strstr(ptx.data, "st.local") == NULL);
    CHECK(mlir_has(ptx.data, "ret;"));
  }
  hg_text_free(&mlir);
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

/* Kernel directives: threads, CTAs per SM, cluster; none of them when unset. */
static void test_directives(void) {
  hg_builder_t *b = kernel("directives");
  hg_b_set_threads(b, 256);
  hg_b_set_min_ctas(b, 2);
  hg_b_set_cluster(b, 2, 1, 1);
  hg_text_t mlir, ptx;
  if (mlir_lower_and_assemble(b, &mlir, &ptx, NULL)) {
    CHECK(mlir_has(mlir.data, "nvvm.kernel, nvvm.reqntid = array<i32: 256, 1, 1>, nvvm.minctasm = "
                              "2 : i32, nvvm.cluster_dim = array<i32: 2, 1, 1>"));
    CHECK(mlir_has(ptx.data, ".version 8.0\n.target sm_90a\n.address_size 64\n"));
    CHECK(mlir_has(ptx.data, ".visible .entry directives()\n.reqntid 256, 1, 1\n.minnctapersm 2\n"
                             ".explicitcluster\n.reqnctapercluster 2, 1, 1\n"));
    CHECK(strstr(ptx.data, ".shared") == NULL); /* no smem reserved: none declared */
  }
  hg_text_free(&mlir);
  hg_text_free(&ptx);
  hg_builder_destroy(b);

  b = kernel("bare");
  hg_b_set_threads(b, 64);
  if (mlir_lower_and_assemble(b, NULL, &ptx, NULL)) {
    CHECK(strstr(ptx.data, "cluster") == NULL);
    CHECK(strstr(ptx.data, ".minnctapersm") == NULL);
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

/* Shared memory: the declared base keeps ptx.c's 1024-byte alignment, and the run-time
 * rounding to the largest reserved alignment survives LLVM (which would fold it away if
 * it could see the declaration's alignment). */
static void test_shared_memory_base(void) {
  hg_builder_t *b = kernel("smem_base");
  hg_val_t out = hg_b_param(b, HG_T_I64, "out");
  hg_b_smem_reserve(b, 100, 16);
  uint32_t off = hg_b_smem_reserve(b, 4096, 1024);
  sink(b, out, 0, hg_b_smem_addr(b, off));
  hg_text_t ptx;
  if (mlir_lower_and_assemble(b, NULL, &ptx, NULL)) {
    CHECK(mlir_has(ptx.data, ".extern .shared .align 1024 .b8 hg_smem[];"));
    CHECK(mlir_has(ptx.data, ", 1023;"));
    CHECK(mlir_has(ptx.data, ", -1024;"));
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
  CHECK_EQ(hg_builder_smem_bytes(b = kernel("smem_bytes")), 0);
  hg_builder_destroy(b);
}

/* hg_emit with HG_BACKEND_MLIR: the same PTX as printing and lowering by hand. */
static void test_emit_dispatch(void) {
  hg_builder_t *b = kernel("dispatch");
  hg_val_t out = hg_b_param(b, HG_T_I64, "out");
  sink(b, out, 0, hg_b_sreg(b, HG_TID_X));
  hg_text_t a = {0}, m = {0}, c = {0};
  CHECK_OK(hg_emit(b, HG_BACKEND_MLIR, &a));
  CHECK_OK(hg_emit_mlir(b, &m));
  CHECK_OK(hg_mlir_lower(m.data, "dispatch", &c));
  CHECK(a.data && c.data && strcmp(a.data, c.data) == 0);
  CHECK(a.data && strstr(a.data, ".visible .entry dispatch(\n\t.param .u64 dispatch_param_0\n)"));
  hg_text_free(&a);
  hg_text_free(&m);
  hg_text_free(&c);
  hg_builder_destroy(b);
}

static void test_failures(void) {
  /* an incomplete kernel: the builder's sentence */
  hg_builder_t *b = kernel("unbalanced");
  hg_b_loop(b);
  hg_text_t t = {0};
  CHECK_ERR(hg_emit_mlir(b, &t), HG_ERR_INVALID, "never closed");
  CHECK(t.data == NULL);
  CHECK_ERR(hg_emit(b, HG_BACKEND_MLIR, &t), HG_ERR_INVALID, "never closed");
  hg_builder_destroy(b);
  CHECK_ERR(hg_emit_mlir(NULL, &t), HG_ERR_INVALID, "NULL");

  b = kernel("fine");
  /* mlir-opt-22 missing: from PATH, and under an explicit name */
  const char *old_path = getenv("PATH");
  char *saved_path = old_path ? strdup(old_path) : NULL;
  const char *old_tool = getenv("HOPGEN_MLIR_OPT");
  char *saved_tool = old_tool ? strdup(old_tool) : NULL;
  unsetenv("HOPGEN_MLIR_OPT");
  setenv("PATH", "/nonexistent-hopgen-dir", 1);
  CHECK_ERR(hg_emit(b, HG_BACKEND_MLIR, &t), HG_ERR_TOOL,
            "mlir-opt-22 not found: install the MLIR 22 tools (apt-get install mlir-22-tools "
            "llvm-22)");
  CHECK(t.data == NULL);
  if (saved_path) setenv("PATH", saved_path, 1);
  setenv("HOPGEN_MLIR_OPT", "/nonexistent-hopgen-dir/mlir-opt-22", 1);
  CHECK_ERR(hg_emit(b, HG_BACKEND_MLIR, &t), HG_ERR_TOOL,
            "/nonexistent-hopgen-dir/mlir-opt-22 not found");
  if (saved_tool)
    setenv("HOPGEN_MLIR_OPT", saved_tool, 1);
  else
    unsetenv("HOPGEN_MLIR_OPT");
  free(saved_path);
  free(saved_tool);
  hg_builder_destroy(b);

  /* a tool failure: the first diagnostic in the sentence, the input kept at its path */
  hg_status_t s = hg_mlir_lower("module {\n  this is not mlir\n}\n", "broken", &t);
  CHECK_EQ(s.code, HG_ERR_TOOL);
  CHECK(strstr(s.msg, "could not lower kernel 'broken'") != NULL);
  CHECK(strstr(s.msg, "broken.mlir:2:") != NULL);
  CHECK(strstr(s.msg, "error:") != NULL);
  const char *kept = strstr(s.msg, "input kept in ");
  CHECK(kept != NULL);
  if (kept) {
    char path[1024] = "";
    sscanf(kept + strlen("input kept in "), "%1023[^)]", path);
    struct stat st;
    CHECK(stat(path, &st) == 0);
    unlink(path);
    char *slash = strrchr(path, '/');
    if (slash) *slash = '\0';
    rmdir(path);
  }
  CHECK(t.data == NULL);
  if (s.code != HG_OK) fprintf(stderr, "  (tool failure sentence: %s)\n", s.msg);
  CHECK_ERR(hg_mlir_lower(NULL, "x", &t), HG_ERR_INVALID, "required");
}

int main(void) {
  mlir_test_require_tools();
  HG_RUN(test_integer_and_float_arithmetic);
  HG_RUN(test_semantics_on_constants);
  HG_RUN(test_pack_unpack);
  HG_RUN(test_special_registers_and_clock);
  HG_RUN(test_loads_stores_atomics);
  HG_RUN(test_global_reductions);
  HG_RUN(test_sync_cluster_and_mbarriers);
  HG_RUN(test_control_flow_and_comments);
  HG_RUN(test_directives);
  HG_RUN(test_shared_memory_base);
  HG_RUN(test_emit_dispatch);
  HG_RUN(test_failures);
  mlir_test_report_times();
  return hg_test_finish();
}
