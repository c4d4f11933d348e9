/* PTX backend, the sm_80 family that Hopper keeps: cp.async (every size, with and without a
 * source size, the zero fill), commit/wait_group and the .noinc mbarrier arrival; ldmatrix
 * x1/x2/x4 (.trans); mma.sync m16n8k16 bf16 and f16 (accumulators updated in place); and a
 * cp.async + ldmatrix + mma.sync main loop, all through ptxas -arch=sm_90a.
 *
 * The kernels both backends check are built once, by tests/support/emit_kernels.c. */
#include "emit_test_util.h"
#include "support/emit_kernels.h"

static bool has(const char *text, const char *what) {
  bool ok = text && strstr(text, what) != NULL;
  if (!ok) fprintf(stderr, "  missing in PTX: %s\n", what);
  return ok;
}

static int count(const char *text, const char *what) {
  int n = 0;
  for (const char *p = text; p && (p = strstr(p, what)); p += strlen(what)) n++;
  return n;
}

static void test_cp_async(void) {
  hg_builder_t *b;
  CHECK_OK(emit_kernel_cp_async(&b));
  hg_text_t ptx;
  if (emit_and_assemble(b, &ptx, NULL)) {
    for (int k = 0; k < EMIT_CP_ASYNC_NEXPECT; k++) CHECK(has(ptx.data, emit_cp_async_expect[k]));
    CHECK(has(ptx.data, ".version 8.0\n"));
    /* 16 bytes: .cg (L2 only); 8 and 4: .ca, the only form for them */
    CHECK_EQ(count(ptx.data, "cp.async.cg.shared.global ["), 3 + 1 + 1);
    CHECK_EQ(count(ptx.data, "cp.async.ca.shared.global ["), 2 * 3);
    CHECK(has(ptx.data, "], [%trd")); /* the source goes through cvta.to.global */
    CHECK(has(ptx.data, "cp.async.wait_group 1;"));
    CHECK(has(ptx.data, "cp.async.wait_group 0;"));
    CHECK(has(ptx.data, "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%r"));
    CHECK_EQ(count(ptx.data, "cp.async.commit_group;"), 2);
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

/* The zero-fill form on its own: a source size of the constant 0 reaches the instruction. */
static void test_cp_async_zero_fill(void) {
  hg_builder_t *b;
  hg_val_t dst, zero;
  CHECK_OK(emit_kernel_zero_fill(&dst, &zero, &b));
  hg_text_t ptx;
  if (emit_and_assemble(b, &ptx, NULL)) {
    char want[96];
    snprintf(want, sizeof want, "mov.b32 %%r%d, 0;", zero.id);
    CHECK(has(ptx.data, want));
    snprintf(want, sizeof want, "cp.async.cg.shared.global [%%r%d_smem0], [%%trd0], 16, %%r%d;",
             dst.id, zero.id);
    CHECK(has(ptx.data, want));
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

static void test_ldmatrix(void) {
  hg_builder_t *b;
  CHECK_OK(emit_kernel_ldmatrix(&b));
  hg_text_t ptx;
  if (emit_and_assemble(b, &ptx, NULL)) {
    for (int k = 0; k < EMIT_LDMATRIX_NEXPECT; k++) CHECK(has(ptx.data, emit_ldmatrix_expect[k]));
    CHECK(has(ptx.data, "x4.shared.b16 {%r"));
    CHECK(has(ptx.data, "_ldm}, [%r"));
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

/* The brace lists of the mma.sync line starting at p: D, A, B, C. */
static int brace_lists(const char *p, char lists[4][160]) {
  int n = 0;
  const char *end = strchr(p, ';');
  while (n < 4 && (p = strchr(p, '{')) && (!end || p < end)) {
    const char *q = strchr(p, '}');
    if (!q) break;
    snprintf(lists[n++], 160, "%.*s", (int)(q - p + 1), p);
    p = q;
  }
  return n;
}

static void test_mma_sync(void) {
  static const hg_dtype_t types[2] = {HG_BF16, HG_F16};
  for (int t = 0; t < 2; t++)
    for (int trans = 0; trans <= 1; trans++) {
      hg_builder_t *b;
      CHECK_OK(emit_kernel_mma_sync(types[t], trans, &b));
      hg_text_t ptx;
      if (emit_and_assemble(b, &ptx, NULL)) {
        char want[96];
        emit_mma_sync_mnemonic(types[t], want, sizeof want);
        const char *line = strstr(ptx.data, want);
        CHECK(has(ptx.data, want));
        CHECK(has(ptx.data, trans ? "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {"
                                  : "ldmatrix.sync.aligned.m8n8.x2.shared.b16 {"));
        char lists[4][160];
        if (line) {
          CHECK_EQ(brace_lists(line, lists), 4);
          /* D and C are the same four accumulator registers (f32), A four and B two b32 */
          CHECK_STR(lists[0], lists[3]);
          CHECK_EQ(count(lists[0], "%f"), 4);
          CHECK_EQ(count(lists[1], "%r"), 4);
          CHECK_EQ(count(lists[2], "%r"), 2);
        }
      }
      hg_text_free(&ptx);
      hg_builder_destroy(b);
    }
}

/* cp.async ring + ldmatrix + mma.sync: assembles without spills. */
static void test_cp_async_mma_kernel(void) {
  hg_builder_t *b;
  CHECK_OK(emit_kernel_cp_async_mma(&b));
  hg_text_t ptx;
  hg_ptxas_report_t rep;
  if (emit_and_assemble(b, &ptx, &rep)) {
    CHECK_EQ(count(ptx.data, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"), 4);
    CHECK_EQ(count(ptx.data, "cp.async.cg.shared.global ["), 3);
    CHECK_EQ(rep.spill_store_bytes, 0);
    CHECK_EQ(rep.stack_frame_bytes, 0);
    if (rep.notes[0]) fprintf(stderr, "  ptxas notes: %s\n", rep.notes);
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

int main(void) {
  emit_test_require_ptxas();
  HG_RUN(test_cp_async);
  HG_RUN(test_cp_async_zero_fill);
  HG_RUN(test_ldmatrix);
  HG_RUN(test_mma_sync);
  HG_RUN(test_cp_async_mma_kernel);
  return hg_test_finish();
}
