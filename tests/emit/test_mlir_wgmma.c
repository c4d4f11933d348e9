/* MLIR backend, warpgroup family: the kernels of test_ptx_wgmma.c (every wgmma type
 * family, a spread of N, A from a descriptor and from registers, every transpose the types
 * allow, every N of each family, setmaxnreg honoured, stmatrix x1/x2/x4 (.trans), a
 * warp-specialized TMA + mbarrier + wgmma pipeline) printed as MLIR, lowered and assembled;
 * and the promotion check: 128 f32 accumulator variables carried around a loop of wgmmas
 * (with a constant and with a run-time scale-d) lower without local memory.
 *
 * The kernels both backends check are built once, by tests/support/emit_kernels.c. */
#include "test_mlir_util.h"
#include "support/emit_kernels.h"

/* Every family, five N, A from a descriptor (nvvm.wgmma.mma_async with a constant scale-d,
 * then inline assembly with the run-time one) and from registers (inline assembly), every
 * transpose combination. */
static void test_wgmma_type_matrix(void) {
  for (size_t f = 0; f < EMIT_WGMMA_NFAMILIES; f++) {
    const emit_wgmma_family_t *fa = &emit_wgmma_families[f];
    hg_builder_t *b;
    emit_wgmma_matrix_t m;
    CHECK_OK(emit_kernel_wgmma_matrix(fa, true, &m, &b));
    const int *ns = m.ns;
    int ops = m.n_const, asms = m.n_runtime;
    hg_text_t mlir, ptx;
    if (mlir_lower_and_assemble(b, &mlir, &ptx, NULL)) {
      CHECK_EQ(mlir_count(mlir.data, "nvvm.wgmma.mma_async "), ops);
      CHECK_EQ(mlir_count(mlir.data, "wgmma.mma_async.sync.aligned.m64n"), asms);
      char want[160];
      emit_wgmma_mnemonic(fa, ns[4], want, sizeof want);
      CHECK(mlir_has(ptx.data, want));
      CHECK(mlir_has(ptx.data, emit_wgmma_version(fa)));
      CHECK_EQ(mlir_count(ptx.data, "wgmma.mma_async.sync.aligned"), ops + asms);
    }
    hg_text_free(&mlir);
    hg_text_free(&ptx);
    hg_builder_destroy(b);
  }
}

static void test_wgmma_every_n(void) {
  for (size_t f = 0; f < EMIT_WGMMA_NREPS; f++) {
    hg_builder_t *b;
    int count;
    CHECK_OK(emit_kernel_wgmma_every_n(f, true, &count, &b));
    CHECK_EQ(count, emit_wgmma_reps[f].acc == HG_S32 ? 18 : 32);
    CHECK(mlir_assemble_ok(b));
    hg_builder_destroy(b);
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
  CHECK_OK(emit_kernel_warp_specialized(&b));
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
  CHECK_OK(emit_kernel_stmatrix(&b));
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
  hg_builder_t *b;
  CHECK_OK(emit_kernel_gemm_like(false, &b));
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
