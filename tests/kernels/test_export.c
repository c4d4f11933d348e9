/* Ahead-of-time export without a GPU: the files and what the launcher relies on. The
 * launcher encodes tensor maps for any M, N, K, batch and leading dimension with the plan's
 * constants (box, swizzle, tmap_mode) and the kernel's code, so those must not depend on the
 * sizes: checked here across problems. That the files compile with gcc and g++ and link
 * against libcuda's stub is python/tests/test_export.py's job. */
#include <stdlib.h>
#include <unistd.h>

#include "hg_test.h"
#include "hopgen/export.h"

static hg_gemm_problem_t problem(int64_t m, int64_t n, int64_t k, int batch, hg_dtype_t t, bool a_k,
                                 bool b_k) {
  hg_gemm_problem_t p = {.m = m,
                         .n = n,
                         .k = k,
                         .batch = batch,
                         .a_type = t,
                         .b_type = t,
                         .d_type = HG_BF16,
                         .a_k_major = a_k,
                         .b_k_major = b_k,
                         .alpha = 1};
  return p;
}

static bool same_map_constants(const hg_tma_plan_t *x, const hg_tma_plan_t *y) {
  if (x->map.rank != y->map.rank || x->map.swizzle != y->map.swizzle ||
      x->map.dtype != y->map.dtype || x->map.l2_promotion != y->map.l2_promotion)
    return false;
  for (int d = 0; d < x->map.rank; d++)
    if (x->tmap_mode[d] != y->tmap_mode[d] || x->map.box_dim[d] != y->map.box_dim[d] ||
        x->map.element_strides[d] != y->map.element_strides[d])
      return false;
  return true;
}

/* One configuration, many sizes: the same PTX and the same tensor-map constants. */
static void test_kernel_independent_of_sizes(void) {
  static const struct {
    hg_dtype_t t;
    bool a_k, b_k;
  } kinds[] = {{HG_BF16, true, true}, {HG_F16, false, false}, {HG_E4M3, true, true}};
  static const int64_t sizes[][4] = {
      {4096, 4096, 4096, 1}, {128, 256, 64, 1}, {1000, 4096, 512, 3}, {64, 7168, 16384, 1}};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    hg_gemm_problem_t p0 = problem(4096, 4096, 4096, 1, kinds[i].t, kinds[i].a_k, kinds[i].b_k);
    hg_gemm_config_t c;
    CHECK_OK(hg_gemm_heuristic(&p0, 132, &c));
    hg_gemm_kernel_t k0;
    CHECK_OK(hg_gemm_generate(&p0, &c, HG_BACKEND_PTX, &k0));
    for (size_t j = 1; j < sizeof sizes / sizeof sizes[0]; j++) {
      hg_gemm_problem_t p = problem(sizes[j][0], sizes[j][1], sizes[j][2], (int)sizes[j][3],
                                    kinds[i].t, kinds[i].a_k, kinds[i].b_k);
      hg_gemm_kernel_t k;
      hg_status_t s = hg_gemm_generate(&p, &c, HG_BACKEND_PTX, &k);
      CHECK_OK(s);
      if (!hg_is_ok(&s)) continue;
      CHECK(k.tma_store == k0.tma_store);
      CHECK_STR(k.k.name, k0.k.name);
      CHECK(k.k.ptx.len == k0.k.ptx.len && !strcmp(k.k.ptx.data, k0.k.ptx.data));
      CHECK_EQ(k.k.smem_bytes, k0.k.smem_bytes);
      CHECK(same_map_constants(&k.plan_a, &k0.plan_a));
      CHECK(same_map_constants(&k.plan_b, &k0.plan_b));
      if (k.tma_store) CHECK(same_map_constants(&k.plan_d, &k0.plan_d));
      hg_gemm_kernel_free(&k);
    }
    hg_gemm_kernel_free(&k0);
  }
}

/* The operand maps' L2 promotion by the run's sizes: 256 B for an operand each of whose bytes
 * one tile (or one cluster's multicast) reads, 128 B for one read again along the other
 * extent; grouped GEMMs 256 B. */
static void test_l2_promotion_rule(void) {
  hg_gemm_config_t c = {.tile_m = 128, .tile_n = 256, .cluster_m = 2, .cluster_n = 1};
  hg_gemm_problem_t p = problem(4096, 4096, 4096, 1, HG_BF16, true, true);
  CHECK_EQ(hg_gemm_operand_l2_promotion(&p, &c, 0), 2);
  CHECK_EQ(hg_gemm_operand_l2_promotion(&p, &c, 1), 2);
  /* decode: the weight B streams once (M = 16 on 128 rows), A is read by every N tile */
  p = problem(16, 7168, 2048, 1, HG_BF16, true, true);
  CHECK_EQ(hg_gemm_operand_l2_promotion(&p, &c, 0), 2);
  CHECK_EQ(hg_gemm_operand_l2_promotion(&p, &c, 1), 3);
  /* M = 256 is one 2x1 cluster's rows: its multicast reads B once; 257 needs a second */
  p.m = 256;
  CHECK_EQ(hg_gemm_operand_l2_promotion(&p, &c, 1), 3);
  p.m = 257;
  CHECK_EQ(hg_gemm_operand_l2_promotion(&p, &c, 1), 2);
  /* N within A's span: A streams */
  p.n = 256;
  CHECK_EQ(hg_gemm_operand_l2_promotion(&p, &c, 0), 3);
  /* a unit's K of 8192 or more keeps 256 B; split-K counts K over the splits */
  p = problem(4096, 4096, 8192, 1, HG_BF16, true, true);
  CHECK_EQ(hg_gemm_operand_l2_promotion(&p, &c, 0), 3);
  p.k = 8191;
  CHECK_EQ(hg_gemm_operand_l2_promotion(&p, &c, 0), 2);
  c.splits = 4;
  p.k = 32768;
  CHECK_EQ(hg_gemm_operand_l2_promotion(&p, &c, 1), 3);
  p.k = 32764;
  CHECK_EQ(hg_gemm_operand_l2_promotion(&p, &c, 1), 2);
  c.splits = 0;
  p.group = HG_GROUP_CONTIGUOUS;
  p.k = 2048;
  p.n = 7168;
  CHECK_EQ(hg_gemm_operand_l2_promotion(&p, &c, 0), 3);
  CHECK_EQ(hg_gemm_operand_l2_promotion(&p, &c, 1), 3);
}

static bool file_has(const char *path, const char *needle) {
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  static char buf[1 << 22];
  const size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return strstr(buf, needle) != NULL;
}

static void test_files(void) {
  char dir[] = "/tmp/hopgen-export-XXXXXX";
  if (!mkdtemp(dir)) {
    HG_FAIL("mkdtemp failed");
    return;
  }
  hg_gemm_problem_t p = problem(4096, 4096, 4096, 1, HG_BF16, true, true);
  hg_export_options_t o = {.dir = dir, .name = "my_gemm", .cubin = false};
  hg_export_result_t r;
  CHECK_OK(hg_export_gemm(&p, NULL, HG_BACKEND_PTX, &o, &r));
  CHECK_EQ(r.count, 3); /* ptx, h, c: no cubin asked for */
  CHECK(!r.has_cubin);
  char h[600], c[600];
  snprintf(h, sizeof h, "%s/my_gemm.h", dir);
  snprintf(c, sizeof c, "%s/my_gemm.c", dir);
  CHECK(file_has(h, "CUresult my_gemm_launch(const my_gemm_args_t *args, CUstream stream);"));
  CHECK(file_has(c, "cuTensorMapEncodeTiled("));
  CHECK(file_has(c, "CU_TENSOR_MAP_SWIZZLE_128B"));
  CHECK(file_has(c, "\"hg_gemm_bf16_bf16_tn_"));
  /* A's and B's L2 promotion chosen at run time as the operation does (128x256 in a 2x1
   * cluster: both spans 256), D's the plan's */
  CHECK(file_has(c, "n > 256 && k < 8192 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B : "
                    "CU_TENSOR_MAP_L2_PROMOTION_L2_256B, \"a\")"));
  CHECK(file_has(c, "m > 256 && k < 8192 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B : "
                    "CU_TENSOR_MAP_L2_PROMOTION_L2_256B, \"b\")"));
  CHECK(strstr(r.note, "stored with TMA") != NULL);
  /* With ptxas, the cubin is embedded instead of the PTX. */
  o.cubin = true;
  o.name = "my_gemm_bin";
  hg_status_t s = hg_export_gemm(&p, NULL, HG_BACKEND_PTX, &o, &r);
  if (s.code == HG_ERR_TOOL) {
    CHECK(strstr(s.msg, "ptxas") != NULL);
  } else {
    CHECK_OK(s);
    CHECK_EQ(r.count, 4);
    CHECK(r.has_cubin);
  }
  /* Refusals name the rule. */
  o.name = "9lives";
  CHECK_ERR(hg_export_gemm(&p, NULL, HG_BACKEND_PTX, &o, &r), HG_ERR_INVALID, "C identifier");
  o.name = "ok_name";
  /* Rows TMA cannot address (M-major A of 100 rows: 200 B): that operand goes through
   * cp.async, and the launcher passes its pointer, pitch and batch stride and checks them
   * against the chunk (8 B here) instead of encoding a tensor map. */
  hg_gemm_problem_t q = problem(100, 100, 128, 1, HG_BF16, false, false);
  CHECK_OK(hg_export_gemm(&q, NULL, HG_BACKEND_PTX, &o, &r));
  char cp_src[600];
  snprintf(cp_src, sizeof cp_src, "%s/ok_name.c", dir);
  CHECK(file_has(cp_src, "params[np++] = &ptr_a;"));
  CHECK(file_has(cp_src, "in 8-byte chunks (cp.async)"));
  CHECK(file_has(cp_src, "_cpa8b8"));
  q = problem(128, 128, 128, 1, HG_BF16, true, true);
  q.d_no_tma = true;
  o.cubin = false;
  CHECK_OK(hg_export_gemm(&q, NULL, HG_BACKEND_PTX, &o, &r));
  CHECK(strstr(r.note, "stored directly") != NULL);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);
}

int main(void) {
  HG_RUN(test_kernel_independent_of_sizes);
  HG_RUN(test_l2_promotion_rule);
  HG_RUN(test_files);
  return hg_test_finish();
}
