/* MLIR backend, the sm_80 family: the kernels of test_ptx_sm80.c (cp.async of every size
 * with and without a source size, commit/wait and the .noinc mbarrier arrival; ldmatrix
 * x1/x2/x4 (.trans); mma.sync m16n8k16 bf16/f16; a cp.async + ldmatrix + mma.sync main loop)
 * printed as MLIR, lowered with mlir-opt-22 and assembled; the lowered PTX holds the
 * instructions the PTX backend prints, and the accumulator variables carried around the
 * loops are promoted to registers (no local memory).
 *
 * The kernels both backends check are built once, by tests/support/emit_kernels.c. */
#include "test_mlir_util.h"
#include "support/emit_kernels.h"

static void test_cp_async(void) {
  hg_builder_t *b;
  CHECK_OK(emit_kernel_cp_async(&b));
  hg_text_t mlir, ptx;
  if (mlir_lower_and_assemble(b, &mlir, &ptx, NULL)) {
    for (int k = 0; k < EMIT_CP_ASYNC_NEXPECT; k++)
      CHECK(mlir_has(ptx.data, emit_cp_async_expect[k]));
    CHECK(mlir_has(mlir.data, "nvvm.cp.async.shared.global "));
    CHECK(mlir_has(mlir.data, "cache = cg, "));
    CHECK(mlir_has(mlir.data, "nvvm.cp.async.commit.group"));
    CHECK(mlir_has(mlir.data, "nvvm.cp.async.wait.group 1"));
    CHECK(mlir_has(mlir.data, "nvvm.cp.async.mbarrier.arrive %"));
    CHECK(mlir_has(ptx.data, ".version 8.0\n"));
  }
  hg_text_free(&mlir);
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

/* A source size of the constant 0 reaches the lowered instruction. */
static void test_cp_async_zero_fill(void) {
  hg_builder_t *b;
  hg_val_t dst, zero;
  CHECK_OK(emit_kernel_zero_fill(&dst, &zero, &b));
  hg_text_t ptx;
  if (mlir_lower_and_assemble(b, NULL, &ptx, NULL)) {
    /* LLVM folds the constant into the instruction's src-size immediate */
    CHECK(mlir_has(ptx.data, "cp.async.cg.shared.global ["));
    CHECK(mlir_has(ptx.data, "], 16, 0;"));
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

static void test_ldmatrix(void) {
  hg_builder_t *b;
  CHECK_OK(emit_kernel_ldmatrix(&b));
  hg_text_t mlir, ptx;
  if (mlir_lower_and_assemble(b, &mlir, &ptx, NULL)) {
    for (int k = 0; k < EMIT_LDMATRIX_NEXPECT; k++)
      CHECK(mlir_has(ptx.data, emit_ldmatrix_expect[k]));
    CHECK_EQ(mlir_count(mlir.data, "nvvm.ldmatrix "), 6);
  }
  hg_text_free(&mlir);
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

static void test_mma_sync(void) {
  static const hg_dtype_t types[2] = {HG_BF16, HG_F16};
  for (int t = 0; t < 2; t++)
    for (int trans = 0; trans <= 1; trans++) {
      hg_builder_t *b;
      CHECK_OK(emit_kernel_mma_sync(types[t], trans, &b));
      hg_text_t mlir, ptx;
      hg_ptxas_report_t rep;
      if (mlir_lower_and_assemble(b, &mlir, &ptx, &rep)) {
        char want[96];
        emit_mma_sync_mnemonic(types[t], want, sizeof want);
        CHECK(mlir_has(ptx.data, want));
        CHECK_EQ(mlir_count(mlir.data, "nvvm.mma.sync "), 1);
        CHECK(mlir_has(ptx.data, trans ? "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {"
                                       : "ldmatrix.sync.aligned.m8n8.x2.shared.b16 {"));
        /* 4 accumulators + the loop counter: every slot promoted */
        CHECK_EQ(mlir_count(mlir.data, "llvm.alloca"), 5);
        CHECK(mlir_no_local_memory(ptx.data, &rep));
      }
      hg_text_free(&mlir);
      hg_text_free(&ptx);
      hg_builder_destroy(b);
    }
}

static void test_cp_async_mma_kernel(void) {
  hg_builder_t *b;
  CHECK_OK(emit_kernel_cp_async_mma(&b));
  hg_text_t ptx;
  hg_ptxas_report_t rep;
  if (mlir_lower_and_assemble(b, NULL, &ptx, &rep)) {
    CHECK_EQ(mlir_count(ptx.data, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"), 4);
    CHECK(mlir_has(ptx.data, "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {"));
    CHECK(mlir_has(ptx.data, "cp.async.cg.shared.global ["));
    CHECK(mlir_no_local_memory(ptx.data, &rep));
    if (rep.notes[0]) fprintf(stderr, "  ptxas notes: %s\n", rep.notes);
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

int main(void) {
  mlir_test_require_tools();
  HG_RUN(test_cp_async);
  HG_RUN(test_cp_async_zero_fill);
  HG_RUN(test_ldmatrix);
  HG_RUN(test_mma_sync);
  HG_RUN(test_cp_async_mma_kernel);
  mlir_test_report_times();
  return hg_test_finish();
}
