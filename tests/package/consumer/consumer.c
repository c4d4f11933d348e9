/* A program outside hopgen, built against an installed copy (tests/package/install.sh):
 * generates a GEMM's PTX and checks it with ptxas, through the public API alone. Exit 0
 * when ptxas accepted it, 77 when ptxas is missing, 1 on any failure. */
#include <stdio.h>
#include <string.h>

#include <hopgen/emit.h>
#include <hopgen/kernels.h>

int main(void) {
  hg_gemm_problem_t p;
  memset(&p, 0, sizeof p);
  p.m = p.n = p.k = 512;
  p.batch = 1;
  p.a_type = p.b_type = p.d_type = HG_BF16;
  p.a_k_major = p.b_k_major = true;
  p.alpha = 1.0f;
  hg_gemm_config_t c;
  hg_gemm_kernel_t k;
  hg_status_t s = hg_gemm_heuristic(&p, 132, &c);
  if (hg_is_ok(&s)) s = hg_gemm_generate(&p, &c, HG_BACKEND_PTX, &k);
  if (!hg_is_ok(&s)) {
    fprintf(stderr, "consumer (C): %s\n", s.msg);
    return 1;
  }
  hg_ptxas_report_t r;
  memset(&r, 0, sizeof r);
  s = hg_ptxas_check(k.k.ptx.data, &r);
  printf("consumer (C), hopgen %s: %s, %zu bytes of PTX, ptxas: %s\n", hg_version(), k.k.name,
         strlen(k.k.ptx.data), hg_is_ok(&s) ? "ok" : s.msg);
  hg_gemm_kernel_free(&k);
  return hg_is_ok(&s) ? 0 : s.code == HG_ERR_TOOL ? 77 : 1;
}
