/* PTX backend, non-TMA families: one kernel per family, each assembled by ptxas, plus
 * checks on the exact text where a detail matters (signedness suffixes, pack operand
 * order, 16-bit multicast mask, kernel directives, comments).
 *
 * The kernels both backends check are built once, by tests/support/emit_kernels.c. */
#include "emit_test_util.h"
#include "support/emit_kernels.h"

static bool has(const char *text, const char *what) {
  bool ok = text && strstr(text, what) != NULL;
  if (!ok) fprintf(stderr, "  missing in PTX: %s\n", what);
  return ok;
}

static void test_integer_and_float_arithmetic(void) {
  hg_builder_t *b;
  CHECK_OK(emit_kernel_arith(false, &b));
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
  hg_builder_t *b;
  emit_pack_vals_t v;
  CHECK_OK(emit_kernel_pack(&v, &b));
  hg_val_t lo = v.lo, hi = v.hi, bf = v.bf, h = v.h;
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
    /* fp8: saturating, hi first as for f16x2, then widened; the warp reductions */
    snprintf(want, sizeof want, "cvt.rn.satfinite.e4m3x2.f32 %%th");
    CHECK(has(ptx.data, want));
    snprintf(want, sizeof want, ", %%f%d_hi, %%f%d_lo; // lo = %%f%d_lo in bits 0..7", hi.id, lo.id,
             lo.id);
    CHECK(has(ptx.data, want));
    CHECK(has(ptx.data, "cvt.rn.satfinite.e5m2x2.f32"));
    CHECK(has(ptx.data, "redux.sync.max.u32"));
    CHECK(has(ptx.data, "redux.sync.add.u32"));
    CHECK(has(ptx.data, "redux.sync.xor.b32"));
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

static void test_special_registers_and_clock(void) {
  hg_builder_t *b;
  CHECK_OK(emit_kernel_sregs(&b));
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
  hg_builder_t *b;
  CHECK_OK(emit_kernel_memory(false, &b));
  hg_text_t ptx;
  if (emit_and_assemble(b, &ptx, NULL)) {
    const char *expect[] = {"ld.global.v4.f32 {",
                            "ld.global.v2.u64 {",
                            "st.global.v4.u32 [",
                            "st.global.cs.v4.u32 [",
                            "st.global.cs.f32 [",
                            "st.global.cs.u64 [",
                            "ld.shared.v2.u32 {",
                            "st.shared.u64 [",
                            "ld.shared::cluster.v4.f32",
                            "st.shared::cluster.u8 [",
                            "ld.global.u16",
                            "st.shared.u16",
                            "red.global.add.f32 [",
                            "red.global.add.v4.f32 [",
                            "red.global.add.v2.f32 [",
                            "cvta.to.global.u64",
                            "mapa.shared::cluster.u32",
                            "fence.acq_rel.gpu;",
                            "atom.global.add.u32 ",
                            "abs.f32 ",
                            "neg.f32 ",
                            "ex2.approx.ftz.f32 ",
                            "rcp.approx.ftz.f32 ",
                            "tanh.approx.f32 "};
    for (size_t k = 0; k < sizeof expect / sizeof expect[0]; k++) CHECK(has(ptx.data, expect[k]));
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

/* Every pair hg_b_red takes, assembled by ptxas, with the PTX ISA's spelling of each: red
 * .global with the element's type (.b32/.b64 for the bitwise ops, .noftz for 16-bit float
 * add), and a 16-bit CAS loop for 16-bit float min/max (PTX has no scalar red for them). */
static void test_global_reductions(void) {
  hg_builder_t *b;
  CHECK_OK(emit_kernel_reductions(&b));
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
  hg_builder_t *b;
  CHECK_OK(emit_kernel_sync(&b));
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
  hg_builder_t *b;
  CHECK_OK(emit_kernel_flow(&b));
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
  hg_builder_t *b;
  CHECK_OK(emit_kernel_directives(false, &b));
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
