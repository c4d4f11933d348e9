/* mma.sync atoms: the warp-level MMAs hopgen emits (m16n8k16, bf16 or f16 into f32; m16n8k32,
 * e4m3/e5m2 into f32, which the decode GEMM uses) and
 * the thread-value layouts of its register fragments (PTX ISA "Warp Level Matrix Multiply-
 * Accumulate Instructions", mma.sync, "Matrix Fragments for mma.m16n8k16 with floating point
 * type"). Each layout is checked against the CPU model of those figures in tests/sm90. */
#include <stdio.h>

#include "sm90_internal.h"

static bool is8(hg_dtype_t t) {
  return t == HG_E4M3 || t == HG_E5M2;
}

/* m16n8k(8e) with e elements a 32-bit register: e = 2 (bf16/f16, m16n8k16) or 4 (fp8, sm_89+,
 * m16n8k32); the registers are the same, each holding e consecutive k. Lane t = q + 4 g
 * (q = t % 4, g = t / 4).
 *   A, index m + 16 k: lane t holds row g and columns e q .. e q + e - 1; values (e, 2, 2):
 *      next column, row + 8, column + 4e.
 *   B (N x K), index n + 8 k: lane t holds column n = g and rows k = e q .. e q + e - 1;
 *      values (e, 2): next k, k + 4e.
 *   C, index m + 16 n: lane t holds row g and columns 2q, 2q+1; values (2, 2): next column,
 *      row + 8 (f32 for either). */
static hg_status_t atom(hg_dtype_t a, hg_dtype_t b, int e, hg_mma_sync_atom_t *out) {
  hg_mma_sync_atom_t r;
  r.m = 16;
  r.n = 8;
  r.k = 8 * e;
  r.a = a;
  r.b = b;
  r.acc = HG_F32;
  r.a_values = 16 * r.k / 32;
  r.b_values = r.k * 8 / 32;
  r.c_values = 16 * 8 / 32;
  r.a_regs = r.a_values / e;
  r.b_regs = r.b_values / e;
  r.c_regs = r.c_values;
  const int64_t tsh[2] = {4, 8};
  const int64_t a_tst[2] = {e * 16, 1};
  const int64_t a_vsh[3] = {e, 2, 2}, a_vst[3] = {16, 8, 4 * e * 16};
  HG_TRY(hg_sm90_layout2(2, tsh, a_tst, 3, a_vsh, a_vst, &r.a_tv));
  const int64_t b_tst[2] = {e * 8, 1};
  const int64_t b_vsh[2] = {e, 2}, b_vst[2] = {8, 4 * e * 8};
  HG_TRY(hg_sm90_layout2(2, tsh, b_tst, 2, b_vsh, b_vst, &r.b_tv));
  const int64_t c_tst[2] = {2 * 16, 1};
  const int64_t c_vsh[2] = {2, 2}, c_vst[2] = {16, 8};
  HG_TRY(hg_sm90_layout2(2, tsh, c_tst, 2, c_vsh, c_vst, &r.c_tv));
  snprintf(r.ptx, sizeof r.ptx, "mma.sync.aligned.m16n8k%d.row.col.f32.%s.%s.f32", r.k,
           hg_dtype_name(a), hg_dtype_name(b));
  *out = r;
  return hg_ok();
}

hg_status_t hg_mma_sync_atom_make(hg_dtype_t a, hg_dtype_t b, hg_dtype_t acc,
                                  hg_mma_sync_atom_t *out) {
  if (is8(a) && is8(b) && acc == HG_F32) return atom(a, b, 4, out);
  if (is8(a) || is8(b))
    return hg_error(HG_ERR_INVALID,
                    "mma.sync m16n8k32 takes fp8 A and B (each e4m3 or e5m2) into f32, not %s x "
                    "%s into %s",
                    hg_dtype_name(a), hg_dtype_name(b), hg_dtype_name(acc));
  if (a != b || (a != HG_BF16 && a != HG_F16))
    return hg_error(HG_ERR_INVALID,
                    "mma.sync m16n8k16 takes A and B both bf16 or both f16, not %s x %s",
                    hg_dtype_name(a), hg_dtype_name(b));
  if (acc != HG_F32)
    return hg_error(HG_ERR_INVALID,
                    "accumulator %s: hopgen's mma.sync m16n8k16 accumulates %s x %s in f32",
                    hg_dtype_name(acc), hg_dtype_name(a), hg_dtype_name(b));
  return atom(a, b, 2, out);
}
