/* MLIR backend, non-TMA families: the kernels of test_ptx_ops.c printed as MLIR, lowered
 * with mlir-opt-22 and assembled by ptxas, with checks on the MLIR where the op choice
 * carries meaning (signedness, NaN behaviour, rounding) and on the PTX where the lowering
 * must produce a particular instruction (no fma contraction, saturating f2i, pack operand
 * order, kernel directives). Plus the backend's failure sentences: incomplete kernel,
 * missing mlir-opt-22, a tool failure with its diagnostics and the kept input.
 *
 * The kernels both backends check are built once, by tests/support/emit_kernels.c. */
#include <sys/stat.h>
#include <unistd.h>

#include "test_mlir_util.h"
#include "support/emit_kernels.h"

static hg_builder_t *kernel(const char *name) {
  hg_builder_t *b = NULL;
  CHECK_OK(hg_builder_create(name, &b));
  hg_b_set_threads(b, 128);
  return b;
}

static void test_integer_and_float_arithmetic(void) {
  hg_builder_t *b;
  CHECK_OK(emit_kernel_arith(true, &b));
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
  emit_sink(b, out, 0, hg_b_bin(b, HG_SHL, hg_b_i64(b, 3), hg_b_i64(b, 0x100000005ll)));
  /* shr.s32 -8, 32 -> -1 (sign fill) */
  emit_sink(b, out, 1, hg_b_bin(b, HG_SHR_S, hg_b_i32(b, -8), hg_b_i32(b, 32)));
  /* shl.b32 7, 40 -> 0 and shr.u64 -1, 64 -> 0: stored as a plain 0 */
  emit_sink(b, out, 2, hg_b_bin(b, HG_SHL, hg_b_i32(b, 7), hg_b_i32(b, 40)));
  emit_sink(b, out, 3, hg_b_bin(b, HG_SHR_U, hg_b_i64(b, -1), hg_b_i64(b, 64)));
  /* in range: shr.s64 -4096, 2 -> -1024; shr.u32 0xfffffff8, 29 -> 7 */
  emit_sink(b, out, 4, hg_b_bin(b, HG_SHR_S, hg_b_i64(b, -4096), hg_b_i64(b, 2)));
  emit_sink(b, out, 5, hg_b_bin(b, HG_SHR_U, hg_b_i32(b, -8), hg_b_i32(b, 29)));
  /* cvt.rzi.s32.f32 saturates and gives 0 for NaN */
  emit_sink(b, out, 6, hg_b_f2i(b, hg_b_f32(b, 1e10f)));
  emit_sink(b, out, 7, hg_b_f2i(b, hg_b_f32(b, -1e10f)));
  emit_sink(b, out, 8, hg_b_f2i(b, hg_b_bitcast(b, HG_T_F32, hg_b_i32(b, 0x7fc00000))));
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
  hg_builder_t *b;
  emit_pack_vals_t v;
  CHECK_OK(emit_kernel_pack(&v, &b));
  hg_val_t lo = v.lo, hi = v.hi;
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
    /* fp8 with saturation, hi first; the warp reductions */
    snprintf(want, sizeof want, "nvvm.convert.f32x2.to.f8x2 %%v%d_hi, %%v%d_lo", hi.id, lo.id);
    CHECK(mlir_has(mlir.data, want));
    CHECK(mlir_has(ptx.data, "cvt.rn.satfinite.e4m3x2.f32"));
    CHECK(mlir_has(ptx.data, "cvt.rn.satfinite.e5m2x2.f32"));
    CHECK(mlir_has(ptx.data, "redux.sync.max.u32"));
    CHECK(mlir_has(ptx.data, "redux.sync.add.")); /* LLVM prints .s32: the same sum */
    CHECK(mlir_has(ptx.data, "redux.sync.xor.b32"));
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
  hg_builder_t *b;
  CHECK_OK(emit_kernel_sregs(&b));
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
  hg_builder_t *b;
  CHECK_OK(emit_kernel_memory(true, &b));
  hg_text_t ptx;
  if (mlir_lower_and_assemble(b, NULL, &ptx, NULL)) {
    const char *expect[] = {"ld.global.v4.b32",
                            "ld.global.v2.b64",
                            "st.global.v4.b32",
                            "st.global.cs.v4.u32",
                            "st.global.cs.f32",
                            "st.global.cs.u64",
                            "ld.shared.v2.b32",
                            "st.shared.b64",
                            "ld.shared::cluster.v4.b32",
                            "st.shared::cluster.b8",
                            "ld.global.b16",
                            "st.shared.b16",
                            "cvta.to.global.u64",
                            "mapa.shared::cluster",
                            "add.f32",
                            "fence.acq_rel.gpu",
                            "red.global.add.v4.f32",
                            "red.global.add.v2.f32",
                            "global.add.u32",
                            "abs.f32",
                            "neg.f32",
                            "ex2.approx.ftz.f32",
                            "rcp.approx.ftz.f32",
                            "tanh.approx.f32"};
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
  hg_builder_t *b;
  CHECK_OK(emit_kernel_reductions(&b));
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
  hg_builder_t *b;
  CHECK_OK(emit_kernel_sync(&b));
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
  hg_builder_t *b;
  CHECK_OK(emit_kernel_flow(&b));
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
  hg_builder_t *b;
  CHECK_OK(emit_kernel_directives(true, &b));
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
  emit_sink(b, out, 0, hg_b_smem_addr(b, off));
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
  emit_sink(b, out, 0, hg_b_sreg(b, HG_TID_X));
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
