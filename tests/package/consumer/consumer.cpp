// A C++17 program outside hopgen, built against an installed copy (tests/package/install.sh)
// and linked with the static library: every public header, then a GEMM's PTX checked with
// ptxas. Exit 0 when ptxas accepted it, 77 when ptxas is missing, 1 on any failure.
#include <hopgen/emit.h>
#include <hopgen/kernels.h>
#include <hopgen/layout.h>
#include <hopgen/runtime.h>
#include <hopgen/sm90.h>
#include <hopgen/status.h>

#include <cstdio>
#include <cstring>
#include <string>

static_assert(alignof(hg_tensormap_t) == 64, "a CUtensorMap is 64-byte aligned");

int main() {
  hg_layout_t l;
  hg_status_t s = hg_layout_parse("(4,8):(1,4)", &l);
  int64_t size = 0;
  if (hg_is_ok(&s)) s = hg_size(&l, &size);
  if (!hg_is_ok(&s) || size != 32) {
    std::fprintf(stderr, "consumer (C++): layout: %s\n", s.msg);
    return 1;
  }
  hg_gemm_problem_t p{};
  p.m = p.n = 256;
  p.k = 128;
  p.batch = 1;
  p.a_type = p.b_type = HG_F16;
  p.d_type = HG_F32;
  p.a_k_major = p.b_k_major = true;
  p.alpha = 1.0f;
  hg_gemm_config_t c;
  hg_gemm_kernel_t k;
  s = hg_gemm_heuristic(&p, 132, &c);
  if (hg_is_ok(&s)) s = hg_gemm_generate(&p, &c, HG_BACKEND_PTX, &k);
  if (!hg_is_ok(&s)) {
    std::fprintf(stderr, "consumer (C++): %s\n", s.msg);
    return 1;
  }
  hg_ptxas_report_t r{};
  s = hg_ptxas_check(k.k.ptx.data, &r);
  const std::string name = k.k.name;
  std::printf("consumer (C++), hopgen %s: %s, ptxas: %s\n", hg_version(), name.c_str(),
              hg_is_ok(&s) ? "ok" : s.msg);
  hg_gemm_kernel_free(&k);
  return hg_is_ok(&s) ? 0 : s.code == HG_ERR_TOOL ? 77 : 1;
}
