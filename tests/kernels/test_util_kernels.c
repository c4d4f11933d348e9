/* The utility kernels (random fill, reference GEMM, repack) are generated for every type
 * they support, and ptxas accepts each. */
#include "hg_test.h"
#include "hopgen/kernels.h"

static void check_ptxas(hg_kernel_t *k) {
  hg_ptxas_report_t r;
  CHECK_OK(hg_ptxas_check(k->ptx.data, &r));
  CHECK_EQ(r.spill_store_bytes, 0);
}

static void test_fill_random(void) {
  const hg_dtype_t types[] = {HG_U8, HG_S8, HG_E4M3, HG_E5M2, HG_F16, HG_BF16, HG_F32, HG_S32};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    hg_kernel_t k;
    CHECK_OK(hg_gen_fill_random(types[i], HG_BACKEND_PTX, &k));
    CHECK(k.ptx.data && strstr(k.ptx.data, ".entry hg_fill_random_"));
    check_ptxas(&k);
    hg_kernel_free(&k);
  }
  hg_kernel_t k;
  CHECK_ERR(hg_gen_fill_random(HG_F64, HG_BACKEND_PTX, &k), HG_ERR_UNSUPPORTED, "f64");
}

static void test_reference_gemm(void) {
  const hg_dtype_t ab[] = {HG_BF16, HG_F16, HG_E4M3, HG_E5M2};
  const hg_dtype_t dt[] = {HG_BF16, HG_F16, HG_F32};
  for (int a = 0; a < 4; a++)
    for (int d = 0; d < 3; d++)
      for (int mj = 0; mj < 4; mj++) {
        hg_gemm_problem_t p = {.m = 100,
                               .n = 50,
                               .k = 30,
                               .batch = 1,
                               .a_type = ab[a],
                               .b_type = ab[(a + mj) % 4],
                               .d_type = dt[d],
                               .a_k_major = mj & 1,
                               .b_k_major = (mj >> 1) & 1};
        hg_kernel_t k;
        CHECK_OK(hg_gen_gemm_reference(&p, HG_BACKEND_PTX, &k));
        if (k.ptx.data) check_ptxas(&k);
        CHECK_EQ(k.threads, 256);
        hg_kernel_free(&k);
      }
}

static void test_repack(void) {
  for (int e = 1; e <= 4; e *= 2) {
    hg_kernel_t k;
    CHECK_OK(hg_gen_repack(e, HG_BACKEND_PTX, &k));
    if (k.ptx.data) check_ptxas(&k);
    hg_kernel_free(&k);
  }
  hg_kernel_t k;
  CHECK_ERR(hg_gen_repack(3, HG_BACKEND_PTX, &k), HG_ERR_UNSUPPORTED, "not 3");
}

int main(void) {
  HG_RUN(test_fill_random);
  HG_RUN(test_reference_gemm);
  HG_RUN(test_repack);
  return hg_test_finish();
}
