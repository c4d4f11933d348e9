/* PTX backend, non-TMA families: one kernel per family, each assembled by ptxas, plus
 * checks on the exact text where a detail matters (signedness suffixes, pack operand
 * order, 16-bit multicast mask, kernel directives, comments). */
#include "emit_test_util.h"

static hg_builder_t *kernel(const char *name) {
  hg_builder_t *b = NULL;
  CHECK_OK(hg_builder_create(name, &b));
  hg_b_set_threads(b, 128);
  return b;
}

/* Keep a value alive: store it to global memory so ptxas cannot drop the computation. */
static void sink(hg_builder_t *b, hg_val_t out, int slot, hg_val_t v) {
  hg_type_t t = hg_val_type(b, v);
  if (t == HG_T_PRED) v = hg_b_select(b, v, hg_b_i32(b, 1), hg_b_i32(b, 0));
  hg_val_t addr = hg_b_bin(b, HG_ADD, out, hg_b_i64(b, 8 * slot));
  hg_b_store(b, HG_GLOBAL, 0, 1, addr, &v);
}

static bool has(const char *text, const char *what) {
  bool ok = text && strstr(text, what) != NULL;
  if (!ok) fprintf(stderr, "  missing in PTX: %s\n", what);
  return ok;
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
  hg_text_t ptx;
  if (emit_and_assemble(b, &ptx, NULL)) {
    const char *expect[] = {"div.s32",        "div.u32",         "rem.s32",
                            "rem.u32",        "min.s32",         "max.u32",
                            "shr.s32",        "shr.u32",         "shr.s64",
                            "div.u64",        "mul.lo.s64",      "add.rn.f32",
                            "mul.rn.f32",     "min.f32",         "setp.lt.s32",
                            "setp.ge.u64",    "setp.le.u32",     "setp.gt.f32",
                            "cvt.s64.s32",    "cvt.u64.u32",     "cvt.u32.u64",
                            "cvt.rn.f32.s32", "cvt.rzi.s32.f32", "fma.rn.f32",
                            "mad.lo.s32",     "mad.lo.s64",      "selp.f32",
                            "selp.b64",       "mov.pred",        "xor.pred",
                            "not.pred",       "not.b64",         "0x8000000000000000",
                            "0f80000000",     "0f3FC00000",      "mov.b64 %rd"};
    for (size_t k = 0; k < sizeof expect / sizeof expect[0]; k++) CHECK(has(ptx.data, expect[k]));
    /* a 64-bit shift takes its amount as .u32 */
    CHECK(has(ptx.data, "cvt.u32.u64 %tr"));
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
  hg_text_t ptx;
  if (emit_and_assemble(b, &ptx, NULL)) {
    /* cvt.rn.bf16x2.f32 d, a, b puts a in the upper half: hi must come first */
    char want[128];
    snprintf(want, sizeof want, "cvt.rn.bf16x2.f32 %%r%d, %%f%d_hi, %%f%d_lo;", bf.id, hi.id,
             lo.id);
    CHECK(has(ptx.data, want));
    snprintf(want, sizeof want, "cvt.rn.f16x2.f32 %%r%d, %%f%d_hi, %%f%d_lo;", h.id, hi.id, lo.id);
    CHECK(has(ptx.data, want));
    CHECK(has(ptx.data, "cvt.rn.f16x2.e4m3x2"));
    CHECK(has(ptx.data, "cvt.rn.f16x2.e5m2x2"));
    CHECK(has(ptx.data, "cvt.f32.f16"));
    CHECK(has(ptx.data, ", 16;")); /* bf16 -> f32 is a shift */
  }
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
  if (emit_and_assemble(b, &ptx, NULL)) {
    const char *expect[] = {"%tid.x",           "%ntid.x",
                            "%nctaid.z",        "%laneid",
                            "%cluster_ctarank", "%cluster_nctarank",
                            "%cluster_ctaid.y", "%clusterid.z",
                            "%nclusterid.x",    "%smid",
                            "mov.u64 %rd",      "%clock64",
                            ".explicitcluster", ".reqnctapercluster 2, 2, 1",
                            "_cta_rank"};
    for (size_t k = 0; k < sizeof expect / sizeof expect[0]; k++) CHECK(has(ptx.data, expect[k]));
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
        hg_b_store(b, spaces[sp], 0, n, addrs[sp], v);
      }
    for (int bits = 8; bits <= 16; bits *= 2) {
      hg_val_t v[1];
      hg_b_load(b, spaces[sp], HG_T_I32, bits, 1, addrs[sp], v);
      hg_b_store(b, spaces[sp], bits, 1, addrs[sp], v);
    }
  }
  hg_b_atomic_add_f32(b, g, hg_b_f32(b, 1.0f));
  hg_text_t ptx;
  if (emit_and_assemble(b, &ptx, NULL)) {
    const char *expect[] = {
        "ld.global.v4.f32 {",      "ld.global.v2.u64 {", "st.global.v4.u32 [",
        "ld.shared.v2.u32 {",      "st.shared.u64 [",    "ld.shared::cluster.v4.f32",
        "st.shared::cluster.u8 [", "ld.global.u16",      "st.shared.u16",
        "red.global.add.f32 [",    "cvta.to.global.u64", "mapa.shared::cluster.u32"};
    for (size_t k = 0; k < sizeof expect / sizeof expect[0]; k++) CHECK(has(ptx.data, expect[k]));
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

/* Every pair hg_b_red takes, assembled by ptxas, with the PTX ISA's spelling of each: red
 * .global with the element's type (.b32/.b64 for the bitwise ops, .noftz for 16-bit float
 * add), and a 16-bit CAS loop for 16-bit float min/max (PTX has no scalar red for them). */
static void test_global_reductions(void) {
  hg_builder_t *b = kernel("reductions");
  hg_val_t g = hg_b_param(b, HG_T_I64, "g");
  emit_test_reductions(b, g);
  hg_text_t ptx;
  if (emit_and_assemble(b, &ptx, NULL)) {
    const char *expect[] = {"red.global.add.u32 [",
                            "red.global.add.s32 [",
                            "red.global.add.u64 [",
                            "red.global.add.f32 [",
                            "red.global.add.noftz.f16 [",
                            "red.global.add.noftz.bf16 [",
                            "red.global.min.u32 [",
                            "red.global.min.s32 [",
                            "red.global.max.u32 [",
                            "red.global.max.s32 [",
                            "red.global.inc.u32 [",
                            "red.global.dec.u32 [",
                            "red.global.and.b32 [",
                            "red.global.or.b32 [",
                            "red.global.xor.b32 [",
                            "red.global.and.b64 [",
                            "red.global.or.b64 [",
                            "red.global.xor.b64 [",
                            "min.f16 %hg_new, %hg_old, %hg_v;",
                            "max.bf16 %hg_new, %hg_old, %hg_v;",
                            "atom.global.cas.b16 %hg_seen, [%hg_a], %hg_old, %hg_new;",
                            "@%hg_retry bra hg_red_cas;"};
    for (size_t k = 0; k < sizeof expect / sizeof expect[0]; k++) CHECK(has(ptx.data, expect[k]));
    /* two passes: 2 x 4 CAS loops, 2 x 2 u32 and s32 adds; the 16-bit values as .b16 */
    int loops = 0, adds = 0;
    for (const char *q = ptx.data; (q = strstr(q, "hg_red_cas:")) != NULL; q++) loops++;
    for (const char *q = ptx.data; (q = strstr(q, "red.global.add.u32 [")) != NULL; q++) adds++;
    CHECK_EQ(loops, 8);
    CHECK_EQ(adds, 2);
    CHECK(has(ptx.data, "cvt.u16.u32 %th"));
    CHECK(!strstr(ptx.data, "red.global.min.f16"));
    CHECK(!strstr(ptx.data, "red.global.min.noftz"));
  }
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
  hg_text_t ptx;
  if (emit_and_assemble(b, &ptx, NULL)) {
    const char *expect[] = {"elect.sync _|%p",
                            "mbarrier.init.shared::cta.b64 [",
                            "fence.mbarrier_init.release.cluster;",
                            "barrier.cluster.arrive.relaxed;",
                            "barrier.cluster.arrive;",
                            "barrier.cluster.wait;",
                            "mbarrier.arrive.shared::cta.b64 _, [",
                            "mbarrier.arrive.shared::cluster.b64 _, [%tr",
                            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [",
                            "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [",
                            "mbarrier.try_wait.parity.shared::cta.b64 %p",
                            "mbarrier.try_wait.parity.shared::cta.b64 %tp",
                            "bar.sync 0;",
                            "bar.sync 1, 64;",
                            "bar.arrive 2, 96;",
                            "fence.proxy.async.shared::cta;"};
    for (size_t k = 0; k < sizeof expect / sizeof expect[0]; k++) CHECK(has(ptx.data, expect[k]));
  }
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
  hg_text_t ptx;
  if (emit_and_assemble(b, &ptx, NULL)) {
    CHECK(has(ptx.data, "// sum the odd numbers below n\n"));
    CHECK(has(ptx.data, "// in a loop with an if\n"));
    CHECK(has(ptx.data, "// odd?chars: ??\n")); /* PTX is ASCII */
    CHECK(has(ptx.data, "_loop:\n"));
    CHECK(has(ptx.data, "_endloop:\n"));
    CHECK(has(ptx.data, "_else:\n"));
    CHECK(has(ptx.data, "_for:\n"));
    CHECK(has(ptx.data, "setp.ge.s32 %tp"));
    CHECK(has(ptx.data, "ret;\n"));
    CHECK(has(ptx.data, "_v"));
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

/* Kernel directives: threads, CTAs per SM, cluster; no cluster lines without a cluster. */
static void test_directives(void) {
  hg_builder_t *b = kernel("directives");
  hg_b_set_threads(b, 256);
  hg_b_set_min_ctas(b, 2);
  hg_text_t ptx;
  if (emit_and_assemble(b, &ptx, NULL)) {
    CHECK(has(ptx.data, ".version 8.0\n.target sm_90a\n.address_size 64\n"));
    CHECK(has(ptx.data, ".visible .entry directives()\n.reqntid 256, 1, 1\n.minnctapersm 2\n{"));
    CHECK(strstr(ptx.data, "cluster") == NULL);
    CHECK(strstr(ptx.data, ".shared") == NULL); /* no smem reserved: none declared */
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

int main(void) {
  emit_test_require_ptxas();
  HG_RUN(test_integer_and_float_arithmetic);
  HG_RUN(test_pack_unpack);
  HG_RUN(test_special_registers_and_clock);
  HG_RUN(test_loads_stores_atomics);
  HG_RUN(test_global_reductions);
  HG_RUN(test_sync_cluster_and_mbarriers);
  HG_RUN(test_control_flow_and_comments);
  HG_RUN(test_directives);
  return hg_test_finish();
}
