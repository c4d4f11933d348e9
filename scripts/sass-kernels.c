/* The GEMM kernels scripts/sass-compare.sh compares between two revisions: every
 * configuration of the tuner's space for bf16 (all four layouts) and fp8 4096^3, the
 * mainloop set of tests/kernels/test_gemm.c (four mainloops, bf16/f16, every layout, aligned
 * and K = 4097), the cp.async chunk sizes, and direct-store epilogues. Writes DIR/NNN.ptx
 * and one line "NNN<TAB>kernel<TAB>problem<TAB>config" per kernel on stdout. Uses only the
 * public API, so the same file builds against older revisions of the library.
 *   cc -Iinclude sass-kernels.c libhopgen.a -ldl -lm -lpthread -o sass-kernels
 *   ./sass-kernels DIR */
#include <stdio.h>
#include <string.h>

#include "hopgen/kernels.h"

static int count, failed;
static const char *dir;

static hg_gemm_problem_t problem(int64_t m, int64_t n, int64_t k, hg_dtype_t t, int lay) {
  hg_gemm_problem_t p = {.m = m,
                         .n = n,
                         .k = k,
                         .batch = 1,
                         .a_type = t,
                         .b_type = t,
                         .d_type = HG_BF16,
                         .a_k_major = lay & 1,
                         .b_k_major = (lay >> 1) & 1,
                         .alpha = 1};
  return p;
}

static void emit(const hg_gemm_problem_t *p, const hg_gemm_config_t *c) {
  char cfg[128], path[512];
  hg_gemm_config_print(c, cfg, sizeof cfg);
  hg_gemm_kernel_t k;
  hg_status_t s = hg_gemm_generate(p, c, HG_BACKEND_PTX, &k);
  if (!hg_is_ok(&s)) {
    fprintf(stderr, "sass-kernels: %s: %s\n", cfg, s.msg);
    failed++;
    return;
  }
  snprintf(path, sizeof path, "%s/%03d.ptx", dir, count);
  FILE *f = fopen(path, "w");
  if (!f || fputs(k.k.ptx.data, f) < 0 || fclose(f) != 0) {
    fprintf(stderr, "sass-kernels: cannot write %s\n", path);
    failed++;
  } else {
    printf("%03d\t%s\t%s%s %c%c %lldx%lldx%lld\t%s\n", count, k.k.name, hg_dtype_name(p->a_type),
           p->b_type == p->a_type ? "" : hg_dtype_name(p->b_type), p->a_k_major ? 'k' : 'm',
           p->b_k_major ? 'k' : 'n', (long long)p->m, (long long)p->n, (long long)p->k, cfg);
  }
  count++;
  hg_gemm_kernel_free(&k);
}

static void emit_text(const hg_gemm_problem_t *p, const char *text, hg_gemm_mainloop_t ml) {
  hg_gemm_config_t c;
  hg_status_t s = hg_gemm_config_parse(text, &c);
  if (!hg_is_ok(&s)) {
    fprintf(stderr, "sass-kernels: %s: %s\n", text, s.msg);
    failed++;
    return;
  }
  if (ml != HG_MAINLOOP_AUTO) c.mainloop = ml;
  emit(p, &c);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: sass-kernels DIR\n");
    return 2;
  }
  dir = argv[1];
  /* The tuner's space: bf16 in every layout, fp8 (K-major only). */
  for (int t = 0; t < 2; t++)
    for (int lay = 0; lay < (t ? 1 : 4); lay++) {
      hg_gemm_problem_t p = problem(4096, 4096, 4096, t ? HG_E4M3 : HG_BF16, t ? 3 : lay);
      hg_gemm_config_t space[HG_GEMM_TUNE_MAX];
      const int n = hg_gemm_tune_space(&p, space, HG_GEMM_TUNE_MAX);
      for (int i = 0; i < n; i++) emit(&p, &space[i]);
    }
  /* The mainloops: as test_gemm.c's test_mainloops. */
  static const char *const cfgs[] = {"128x128x64,c1x1,s4", "128x64x64,c1x1,s4,pp",
                                     "64x128x64,c1x1,s6"};
  for (int ml = HG_MAINLOOP_TMA_WGMMA; ml < HG_MAINLOOP_COUNT; ml++)
    for (int t = 0; t < 2; t++)
      for (int lay = 0; lay < 4; lay++)
        for (int odd = 0; odd < 2; odd++) {
          hg_gemm_problem_t p = problem(1000, 1000, odd ? 4097 : 4096, t ? HG_F16 : HG_BF16, lay);
          p.d_type = lay == 2 ? HG_F32 : p.a_type;
          emit_text(&p, cfgs[(ml + lay + odd) % 3], (hg_gemm_mainloop_t)ml);
        }
  /* cp.async chunks of 8 and 4 bytes, fp8 register copies and 16-byte chunks. */
  hg_gemm_problem_t p = problem(1000, 1000, 4100, HG_BF16, 3);
  emit_text(&p, "128x128x64,c1x1,s4", HG_MAINLOOP_AUTO);
  p = problem(1002, 1000, 4098, HG_F16, 2);
  emit_text(&p, "128x128x64,c1x1,s4", HG_MAINLOOP_AUTO);
  p = problem(1000, 1000, 4097, HG_E4M3, 3);
  emit_text(&p, "128x128x128,c1x1,s4", HG_MAINLOOP_AUTO);
  p = problem(1000, 1000, 4096, HG_E4M3, 3);
  emit_text(&p, "128x128x128,c1x1,s4", HG_MAINLOOP_CPASYNC_WGMMA);
  /* Direct-store epilogues (rows of D TMA cannot address), bf16 and f32 D, both schedules. */
  p = problem(1000, 7, 127, HG_BF16, 3);
  emit_text(&p, "128x64x64,c1x1,s4", HG_MAINLOOP_AUTO);
  p = problem(4096, 4095, 4096, HG_BF16, 3);
  emit_text(&p, "128x128x64,c1x1,s4,pp", HG_MAINLOOP_AUTO);
  p.d_type = HG_F32;
  p.n = 4093;
  emit_text(&p, "128x256x64,c2x1,s4", HG_MAINLOOP_AUTO);
  fprintf(stderr, "sass-kernels: %d kernels, %d failed\n", count, failed);
  return failed ? 1 : 0;
}
