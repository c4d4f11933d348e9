/* wgmma atoms: which shapes and types the PTX ISA allows, and the thread-value layouts of
 * the register operands (PTX ISA "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
 * Instructions": wgmma.mma_async, "Register Fragments and Shared Memory Matrix Layouts"). */
#include <stdio.h>

#include "sm90_internal.h"

int hg_wgmma_k(hg_dtype_t a) {
  switch (a) {
  case HG_F16:
  case HG_BF16:
    return 16; /* m64nNk16 */
  case HG_TF32:
    return 8; /* m64nNk8 */
  case HG_E4M3:
  case HG_E5M2:
  case HG_S8:
  case HG_U8:
    return 32; /* m64nNk32 */
  default:
    return 0;
  }
}

static bool is_int8(hg_dtype_t t) {
  return t == HG_S8 || t == HG_U8;
}
static bool is_fp8(hg_dtype_t t) {
  return t == HG_E4M3 || t == HG_E5M2;
}

hg_status_t hg_wgmma_check_n(hg_dtype_t a, hg_dtype_t acc, int n) {
  (void)acc;
  if (is_int8(a)) {
    /* PTX ISA: .s8/.u8 (s32 accumulators) allow n = 8, 16, 24, 32, 48, 64, ..., 256. */
    if (n >= 8 && n <= 256 && (n <= 32 ? n % 8 == 0 : n % 16 == 0)) return hg_ok();
    if (n > 32 && n < 256 && n % 8 == 0)
      return hg_error(HG_ERR_INVALID,
                      "N = %d is not allowed for %s wgmma: above 32 the PTX ISA allows multiples "
                      "of 16 only (nearest: %d or %d)",
                      n, hg_dtype_name(a), n - 8, n + 8);
    return hg_error(HG_ERR_INVALID,
                    "N = %d is not allowed for %s wgmma: the PTX ISA allows 8, 16, 24, 32, then "
                    "multiples of 16 up to 256",
                    n, hg_dtype_name(a));
  }
  /* f16, bf16, tf32, e4m3, e5m2: n = 8..256 in steps of 8. */
  if (n >= 8 && n <= 256 && n % 8 == 0) return hg_ok();
  return hg_error(HG_ERR_INVALID,
                  "N = %d is not allowed for %s wgmma: the PTX ISA allows multiples of 8 from 8 "
                  "to 256",
                  n, hg_dtype_name(a));
}

static hg_status_t check_types(hg_dtype_t a, hg_dtype_t b, hg_dtype_t acc) {
  if (hg_wgmma_k(a) == 0)
    return hg_error(HG_ERR_INVALID,
                    "%s is not a wgmma operand type (f16, bf16, tf32, e4m3, e5m2, s8, u8)",
                    hg_dtype_name(a));
  const char *rule = NULL;
  bool b_ok, acc_ok;
  if (a == HG_F16) {
    b_ok = b == HG_F16;
    acc_ok = acc == HG_F16 || acc == HG_F32;
    rule = "f16 x f16 accumulating in f16 or f32";
  } else if (a == HG_BF16) {
    b_ok = b == HG_BF16;
    acc_ok = acc == HG_F32;
    rule = "bf16 x bf16 accumulating in f32 only";
  } else if (a == HG_TF32) {
    b_ok = b == HG_TF32;
    acc_ok = acc == HG_F32;
    rule = "tf32 x tf32 accumulating in f32";
  } else if (is_fp8(a)) {
    b_ok = is_fp8(b);
    acc_ok = acc == HG_F16 || acc == HG_F32;
    rule = "e4m3/e5m2 x e4m3/e5m2 (any mix) accumulating in f16 or f32";
  } else {
    b_ok = is_int8(b);
    acc_ok = acc == HG_S32;
    rule = "s8/u8 x s8/u8 (any mix) accumulating in s32";
  }
  if (!b_ok || !acc_ok)
    return hg_error(HG_ERR_INVALID,
                    "wgmma does not take %s x %s accumulating in %s: for %s A the PTX ISA allows "
                    "%s",
                    hg_dtype_name(a), hg_dtype_name(b), hg_dtype_name(acc), hg_dtype_name(a), rule);
  return hg_ok();
}

static hg_status_t check_major(const char *which, hg_dtype_t t, hg_major_t major) {
  if (major != HG_MAJOR_K && major != HG_MAJOR_MN)
    return hg_error(HG_ERR_INVALID, "%s majorness %d is neither K nor MN", which, (int)major);
  if (major == HG_MAJOR_MN && hg_dtype_bytes(t) != 2)
    return hg_error(HG_ERR_INVALID,
                    "%s is %s and MN-major: wgmma transposes only 16-bit operands (f16, bf16; "
                    "imm-trans), so a %d-bit operand must be K-major",
                    which, hg_dtype_name(t), hg_dtype_bits(t));
  return hg_ok();
}

hg_status_t hg_wgmma_atom_make(hg_dtype_t a, hg_dtype_t b, hg_dtype_t acc, int n,
                               hg_major_t a_major, hg_major_t b_major, bool a_regs,
                               hg_wgmma_atom_t *out) {
  HG_TRY(check_types(a, b, acc));
  HG_TRY(hg_wgmma_check_n(a, acc, n));
  HG_TRY(check_major("operand A", a, a_major));
  HG_TRY(check_major("operand B", b, b_major));
  if (a_regs && a_major == HG_MAJOR_MN)
    return hg_error(HG_ERR_INVALID,
                    "A from registers cannot be MN-major: register fragments have one fixed "
                    "layout and the transpose flag applies to shared-memory operands only");
  hg_wgmma_atom_t r;
  r.m = 64;
  r.n = n;
  r.k = hg_wgmma_k(a);
  r.a = a;
  r.b = b;
  r.acc = acc;
  r.a_major = a_major;
  r.b_major = b_major;
  r.a_regs = a_regs;
  r.trans_a = a_major == HG_MAJOR_MN;
  r.trans_b = b_major == HG_MAJOR_MN;
  r.acc_values = 64 * n / 128;
  r.acc_regs = acc == HG_F16 ? r.acc_values / 2 : r.acc_values;
  r.a_values = 64 * r.k / 128;
  r.a_regs_count = 4;

  /* Accumulator, index m + 64 n. Thread t = q + 4 g + 32 w (q = lane % 4, g = lane / 4,
   * w = warp): column 2q, row g, row 16w. Values (2, 2, N/8): next column, row + 8, next
   * block of 8 columns. */
  const int64_t c_tsh[3] = {4, 8, 4}, c_tst[3] = {2 * 64, 1, 16};
  const int64_t c_vsh[3] = {2, 2, n / 8}, c_vst[3] = {64, 8, 8 * 64};
  HG_TRY(hg_sm90_layout2(3, c_tsh, c_tst, 3, c_vsh, c_vst, &r.c_tv));

  /* Register A, index m + 64 k. Each 32-bit register holds vpr consecutive k of one row:
   * thread q starts at k = vpr q; registers (row g, row g + 8) x (first, second half of K). */
  const int64_t vpr = 4 / hg_dtype_bytes(a);
  const int64_t a_tsh[3] = {4, 8, 4}, a_tst[3] = {vpr * 64, 1, 16};
  const int64_t a_vsh[3] = {vpr, 2, 2}, a_vst[3] = {64, 8, 64 * (r.k / 2)};
  HG_TRY(hg_sm90_layout2(3, a_tsh, a_tst, 3, a_vsh, a_vst, &r.a_tv));

  snprintf(r.ptx, sizeof r.ptx, "wgmma.mma_async.sync.aligned.m64n%dk%d.%s.%s.%s", n, r.k,
           hg_dtype_name(acc), hg_dtype_name(a), hg_dtype_name(b));
  *out = r;
  return hg_ok();
}
