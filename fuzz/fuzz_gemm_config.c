/* libFuzzer target: the GEMM configuration text ("128x256x64,c2x1,s4,coop,m8,e64", what
 * --config and the tuner's file hold). Whatever the text, parsing returns a status; what
 * parses prints canonically and parses back to the same configuration; it is checked against
 * a few problems, and where it is valid the epilogue and stage helpers answer. */
#include <stdint.h>
#include <string.h>

#include "hopgen/kernels.h"

#define MAX_INPUT 1024

static void check(int cond) {
  if (!cond) __builtin_trap();
}

static int same(const hg_gemm_config_t *a, const hg_gemm_config_t *b) {
  return a->tile_m == b->tile_m && a->tile_n == b->tile_n && a->tile_k == b->tile_k &&
         a->cluster_m == b->cluster_m && a->cluster_n == b->cluster_n && a->stages == b->stages &&
         a->schedule == b->schedule && a->raster == b->raster &&
         a->raster_group == b->raster_group && a->epi_n == b->epi_n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > MAX_INPUT) return 0;
  char text[MAX_INPUT + 1];
  memcpy(text, data, size);
  text[size] = '\0';
  hg_gemm_config_t c, back;
  hg_status_t s = hg_gemm_config_parse(text, &c);
  if (s.code != HG_OK) {
    check(s.msg[0] != '\0');
    return 0;
  }
  char out[256], again[256];
  const int n = hg_gemm_config_print(&c, out, sizeof out);
  check(n > 0 && (size_t)n < sizeof out);
  check(hg_gemm_config_parse(out, &back).code == HG_OK && same(&c, &back));
  hg_gemm_config_print(&back, again, sizeof again);
  check(strcmp(out, again) == 0);
  static const hg_dtype_t types[][3] = {{HG_BF16, HG_BF16, HG_BF16},
                                        {HG_F16, HG_F16, HG_F32},
                                        {HG_E4M3, HG_E5M2, HG_BF16},
                                        {HG_TF32, HG_TF32, HG_F32},
                                        {HG_S8, HG_S8, HG_S32}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    hg_gemm_problem_t p = {.m = 1000,
                           .n = 520,
                           .k = 264,
                           .batch = 2,
                           .a_type = types[i][0],
                           .b_type = types[i][1],
                           .d_type = types[i][2],
                           .a_k_major = true,
                           .b_k_major = i != 1,
                           .alpha = 1.0f};
    if (hg_gemm_problem_normalize(&p).code != HG_OK) continue;
    s = hg_gemm_config_check(&p, &c);
    check(s.code == HG_OK || s.msg[0] != '\0');
    if (s.code != HG_OK) continue; /* the helpers below answer for valid configurations */
    const int epi = hg_gemm_epi_n(&p, &c);
    (void)hg_gemm_epi_swizzled(&p, epi);
    (void)hg_gemm_epi_buffers(&p, &c);
    (void)hg_gemm_max_stages(&p, &c);
  }
  return 0;
}
