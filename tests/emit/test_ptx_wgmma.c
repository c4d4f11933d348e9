/* PTX backend, warpgroup family: wgmma for every type family (f16, bf16, tf32, the four
 * fp8 mixes with both accumulators, the four s8/u8 mixes), a spread of N, A from a
 * descriptor and from registers, every transpose variant the type allows, and every N
 * of each family; setmaxnreg with no "ignored" note from ptxas; stmatrix x1/x2/x4
 * (.trans); and a warp-specialized TMA + mbarrier + wgmma pipeline, all through ptxas.
 *
 * The kernels both backends check are built once, by tests/support/emit_kernels.c. */
#include "emit_test_util.h"
#include "support/emit_kernels.h"

static void test_wgmma_type_matrix(void) {
  for (size_t f = 0; f < EMIT_WGMMA_NFAMILIES; f++) {
    const emit_wgmma_family_t *fa = &emit_wgmma_families[f];
    hg_builder_t *b;
    emit_wgmma_matrix_t m;
    CHECK_OK(emit_kernel_wgmma_matrix(fa, false, &m, &b));
    bool integer = fa->acc == HG_S32;
    const int *ns = m.ns;
    hg_text_t ptx;
    if (emit_and_assemble(b, &ptx, NULL)) {
      char want[160];
      emit_wgmma_mnemonic(fa, ns[4], want, sizeof want);
      CHECK(strstr(ptx.data, want) != NULL);
      CHECK(strstr(ptx.data, emit_wgmma_version(fa)) != NULL);
      if (emit_sixteen_bit(fa->a)) CHECK(strstr(ptx.data, ", 1, 1, 1, 1;") != NULL);
      if (integer) CHECK(strstr(ptx.data, ", 1, 1;") == NULL); /* no scale immediates */
    }
    hg_text_free(&ptx);
    hg_builder_destroy(b);
  }
}

/* Every N each family offers (with A from a descriptor), one kernel per family. */
static void test_wgmma_every_n(void) {
  for (size_t f = 0; f < EMIT_WGMMA_NREPS; f++) {
    hg_builder_t *b;
    int count;
    CHECK_OK(emit_kernel_wgmma_every_n(f, false, &count, &b));
    CHECK_EQ(count, emit_wgmma_reps[f].acc == HG_S32 ? 18 : 32);
    CHECK(assemble_ok(b));
    hg_builder_destroy(b);
  }
}

/* Warp specialization: warpgroup 0 gives registers away, the others take them. With a
 * thread count and min CTAs per SM = 1, ptxas knows the register count at entry and
 * honours setmaxnreg: no C7508 "'setmaxnreg' ignored" note. Without .minnctapersm the
 * same PTX draws that note, which shows that the check can see it. */
static void test_setmaxnreg_not_ignored(void) {
  hg_builder_t *b;
  CHECK_OK(emit_kernel_warp_specialized(&b));
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
  CHECK_OK(emit_kernel_stmatrix(&b));
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
  hg_builder_t *b;
  CHECK_OK(emit_kernel_gemm_like(true, &b));
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
