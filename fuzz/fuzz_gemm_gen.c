/* libFuzzer target: the GEMM problem and configuration checks and kernel generation,
 * without ptxas: arbitrary sizes, types, majorness, leading dimensions, batch strides and
 * configurations (from bytes, or the heuristic's). Normalising, checking and generating
 * return a status with a sentence; a kernel that is generated has PTX naming its entry,
 * and the MLIR printer runs on it too (the lowering tool is pointed at nothing). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "hopgen/kernels.h"

static void check(int cond) {
  if (!cond) __builtin_trap();
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  fz_offline();
  return 0;
}

static hg_gemm_kernel_t k; /* large: off the stack */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 256) return 0;
  fz_t f = {data, size};
  hg_gemm_problem_t p;
  memset(&p, 0, sizeof p);
  p.m = fz_int(&f, 9000);
  p.n = fz_int(&f, 9000);
  p.k = fz_int(&f, 9000);
  p.batch = (int)fz_int(&f, 8);
  static const hg_dtype_t pick[] = {HG_BF16, HG_F16, HG_E4M3, HG_E5M2, HG_F32, HG_TF32, HG_S8};
  p.a_type = pick[fz_u8(&f) % 7];
  p.b_type = fz_bool(&f) ? p.a_type : pick[fz_u8(&f) % 7];
  p.d_type = (hg_dtype_t)fz_pick(&f, HG_DTYPE_COUNT);
  p.a_k_major = fz_bool(&f);
  p.b_k_major = fz_bool(&f);
  if (fz_bool(&f)) {
    p.lda = fz_int(&f, 20000);
    p.ldb = fz_int(&f, 20000);
    p.ldc = fz_int(&f, 20000);
    p.ldd = fz_int(&f, 20000);
  }
  if (fz_bool(&f)) {
    p.batch_stride_a = fz_int(&f, 1 << 26);
    p.batch_stride_b = fz_int(&f, 1 << 26);
    p.batch_stride_c = fz_int(&f, 1 << 26);
    p.batch_stride_d = fz_int(&f, 1 << 26);
  }
  p.alpha = 1.0f;
  p.beta = fz_bool(&f) ? 0.5f : 0.0f;
  p.d_no_tma = fz_bool(&f);
  hg_status_t s = hg_gemm_problem_normalize(&p);
  if (s.code != HG_OK) {
    check(s.msg[0] != '\0');
    return 0;
  }
  hg_gemm_config_t c;
  memset(&c, 0, sizeof c);
  if (fz_bool(&f)) {
    s = hg_gemm_heuristic(&p, (int)fz_int(&f, 200), &c);
  } else {
    static const int tiles[] = {64, 128, 192, 256, 16, 32, 96, 8};
    c.tile_m = tiles[fz_u8(&f) % 8];
    c.tile_n = tiles[fz_u8(&f) % 8];
    c.tile_k = tiles[fz_u8(&f) % 8];
    c.cluster_m = (int)fz_int(&f, 4);
    c.cluster_n = (int)fz_int(&f, 4);
    c.stages = (int)fz_int(&f, 10);
    c.schedule = (hg_gemm_schedule_t)fz_pick(&f, 2);
    c.raster = (hg_raster_t)fz_pick(&f, 2);
    c.raster_group = (int)fz_int(&f, 16);
    c.epi_n = (int)fz_int(&f, 256);
    c.mainloop = (hg_gemm_mainloop_t)fz_pick(&f, HG_MAINLOOP_COUNT);
    s = hg_gemm_config_check(&p, &c);
  }
  if (s.code != HG_OK) {
    check(s.msg[0] != '\0');
    return 0;
  }
  /* the library's one step: with the mainloop AUTO, operands TMA cannot address are given
   * packed rows (the repack path), else the named mainloop reads them in place */
  const hg_backend_t be = fz_bool(&f) ? HG_BACKEND_MLIR : HG_BACKEND_PTX;
  s = hg_gemm_build(&p, &c, HG_MAINLOOP_AUTO, NULL, be, &k);
  if (s.code != HG_OK) {
    check(s.msg[0] != '\0');
    return 0;
  }
  check(k.k.ptx.data && strstr(k.k.ptx.data, k.k.name));
  hg_gemm_kernel_free(&k);
  return 0;
}
