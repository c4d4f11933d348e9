/* bindings.h: pictures into a buffer (with the capacity protocol) and plans as JSON (the
 * objects `hopgen plan tma/mma --json` print, written snprintf-style). */
#include "hg_test.h"
#include "hopgen/bindings.h"

static void test_picture(void) {
  hg_composed_t c;
  CHECK_OK(hg_composed_parse("(4,8):(8,1)", &c));
  static char buf[1 << 15];
  size_t need = 0;
  CHECK_OK(hg_layout_picture(&c, NULL, false, buf, sizeof buf, &need));
  CHECK_EQ(need, strlen(buf));
  CHECK(strstr(buf, "| 31 |") != NULL); /* the last cell, row 3 column 7 */
  char small[16];
  CHECK_ERR(hg_layout_picture(&c, NULL, false, small, sizeof small, &need), HG_ERR_CAPACITY,
            "needs");
  CHECK_EQ(need, strlen(buf));
  hg_layout_t tv;
  CHECK_OK(hg_layout_parse("(4,8):(8,1)", &tv));
  CHECK_OK(hg_layout_picture(&c, &tv, true, buf, sizeof buf, &need));
  CHECK(strncmp(buf, "<svg", 4) == 0 || strstr(buf, "<svg") != NULL);
  CHECK(strstr(buf, "T0V0") != NULL);
  CHECK_OK(hg_composed_parse("(256,512):(1,256)", &c));
  CHECK_ERR(hg_layout_picture(&c, NULL, false, buf, sizeof buf, &need), HG_ERR_INVALID,
            "more than");
}

static void test_tma_plan_json(void) {
  hg_tma_tensor_t g = {.dtype = HG_BF16, .rank = 2, .shape = {1000, 4096}, .stride = {4096, 1}};
  const int tile[2] = {128, 64};
  hg_composed_t smem;
  CHECK_OK(hg_tma_smem_layout(&g, tile, HG_SWIZZLE_128B, &smem));
  hg_tma_options_t o = hg_tma_options_default(HG_TMA_LOAD);
  o.cluster = 2;
  hg_tma_plan_t p;
  CHECK_OK(hg_tma_plan_make(&g, &smem, &o, &p));
  static char buf[1 << 16];
  const int32_t origin[2] = {0, 64};
  const int n = hg_tma_plan_json(&g, &p, origin, buf, sizeof buf);
  CHECK_EQ(n, strlen(buf));
  CHECK(strstr(buf, "\"op\": \"load\", \"dtype\": \"bf16\"") != NULL);
  CHECK(strstr(buf, "\"global_dim\": [4096, 1000]") != NULL);
  CHECK(strstr(buf, "\"global_strides_bytes\": [8192]") != NULL);
  CHECK(strstr(buf, "\"abs_coords\": [64, 0]") != NULL);
  CHECK(strstr(buf, "\"cluster\": 2") != NULL);
  /* snprintf's protocol: a short buffer gets a prefix and the full length back. */
  char small[32];
  CHECK_EQ(hg_tma_plan_json(&g, &p, origin, small, sizeof small), n);
  CHECK_EQ(strlen(small), sizeof small - 1);
  CHECK(strncmp(small, buf, sizeof small - 1) == 0);
  CHECK(strstr(buf, "\"tensor\"") != NULL);
  hg_tma_plan_json(NULL, &p, NULL, buf, sizeof buf);
  CHECK(strstr(buf, "\"tensor\"") == NULL && strstr(buf, "abs_coords") == NULL);
}

static void test_tiled_mma_json(void) {
  hg_tiled_mma_spec_t s = {.a = HG_BF16,
                           .b = HG_BF16,
                           .acc = HG_F32,
                           .tile_m = 128,
                           .tile_n = 256,
                           .tile_k = 64,
                           .wg_m = 2,
                           .wg_n = 1,
                           .auto_swizzle = true};
  hg_tiled_mma_t tm;
  CHECK_OK(hg_tiled_mma_make(&s, &tm));
  static char buf[1 << 16];
  const int n = hg_tiled_mma_json(&tm, 0, 32768, buf, sizeof buf);
  CHECK_EQ(n, strlen(buf));
  CHECK(strstr(buf, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16") != NULL);
  CHECK(strstr(buf, "\"warpgroups\": [2, 1], \"threads\": 256") != NULL);
  CHECK(strstr(buf, "\"smem_base\": 32768") != NULL);
  CHECK(strstr(buf, "\"acc_tv_index\": \"m + 128 * n\"") != NULL);
}

int main(void) {
  HG_RUN(test_picture);
  HG_RUN(test_tma_plan_json);
  HG_RUN(test_tiled_mma_json);
  return hg_test_finish();
}
