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

/* A bf16 GEMM problem with D of type d, an activation and a bias of type bt along N, M or
 * none (0, 1, 2 as hg_gemm_bias_t). */
static hg_gemm_problem_t bias_problem(int64_t n, hg_dtype_t d, hg_act_t act, int bias,
                                      hg_dtype_t bt) {
  hg_gemm_problem_t p = {.m = 100,
                         .n = n,
                         .k = 64,
                         .batch = 2,
                         .a_type = HG_BF16,
                         .b_type = HG_BF16,
                         .d_type = d,
                         .a_k_major = true,
                         .b_k_major = true,
                         .alpha = 1.0f,
                         .act = act,
                         .act_lo = -1.0f,
                         .act_hi = 2.0f,
                         .bias = (hg_gemm_bias_t)bias,
                         .bias_type = bt};
  CHECK_OK(hg_gemm_problem_normalize(&p));
  return p;
}

/* The unfused sequence's elementwise kernel: every output type, bias direction and
 * activation, 16-byte chunks where rows allow and single elements where not, both backends
 * for one variant; a bias of fp8 and an fp8 D are refused. */
static void test_bias_act(void) {
  static const hg_dtype_t types[] = {HG_BF16, HG_F16, HG_F32};
  static const hg_act_t acts[] = {HG_ACT_NONE, HG_ACT_RELU,    HG_ACT_GELU, HG_ACT_GELU_TANH,
                                  HG_ACT_SILU, HG_ACT_SIGMOID, HG_ACT_CLAMP};
  int n = 0;
  hg_kernel_t k;
  for (int t = 0; t < 3; t++)
    for (int bias = 0; bias < 3; bias++)
      for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
        const hg_gemm_problem_t p =
            bias_problem((a % 2) ? 1000 : 1001, types[t], acts[a], bias, types[(t + bias) % 3]);
        CHECK_OK(hg_gen_bias_act(&p, HG_BACKEND_PTX, &k));
        CHECK(strstr(k.name, (a % 2) ? (t == 2 ? "_v4" : "_v8") : "_v1") != NULL);
        if (k.ptx.data && (n++ % 4 == 0 || a == 2)) check_ptxas(&k);
        if (k.ptx.data && a == 2) CHECK(strstr(k.ptx.data, "ex2.approx") != NULL);
        hg_kernel_free(&k);
      }
  hg_gemm_problem_t p = bias_problem(64, HG_BF16, HG_ACT_SILU, HG_BIAS_N, HG_BF16);
  CHECK_OK(hg_gen_bias_act(&p, HG_BACKEND_MLIR, &k));
  if (k.ptx.data) check_ptxas(&k);
  CHECK(strstr(k.name, "_v8") != NULL);
  hg_kernel_free(&k);
  p.bias_type = HG_E4M3;
  CHECK_ERR(hg_gen_bias_act(&p, HG_BACKEND_PTX, &k), HG_ERR_UNSUPPORTED, "a bias of e4m3");
  p.bias_type = HG_BF16;
  p.d_type = HG_E4M3;
  CHECK_ERR(hg_gen_bias_act(&p, HG_BACKEND_PTX, &k), HG_ERR_UNSUPPORTED, "not e4m3");
}

int main(void) {
  HG_RUN(test_fill_random);
  HG_RUN(test_reference_gemm);
  HG_RUN(test_repack);
  HG_RUN(test_bias_act);
  return hg_test_finish();
}
