/* wgmma atoms: the shape and type rules of the PTX ISA, and the register layouts checked
 * against the CPU model of the PTX ISA's fragment figures. */
#include "hg_test.h"
#include "hopgen/sm90.h"

static void test_k_per_type(void) {
  /* PTX ISA wgmma.mma_async: m64nNk16 for 16-bit types, k8 for tf32, k32 for 8-bit. */
  CHECK_EQ(hg_wgmma_k(HG_F16), 16);
  CHECK_EQ(hg_wgmma_k(HG_BF16), 16);
  CHECK_EQ(hg_wgmma_k(HG_TF32), 8);
  CHECK_EQ(hg_wgmma_k(HG_E4M3), 32);
  CHECK_EQ(hg_wgmma_k(HG_E5M2), 32);
  CHECK_EQ(hg_wgmma_k(HG_S8), 32);
  CHECK_EQ(hg_wgmma_k(HG_U8), 32);
  CHECK_EQ(hg_wgmma_k(HG_F32), 0);
  CHECK_EQ(hg_wgmma_k(HG_F64), 0);
}

static void test_n_rules(void) {
  int legal_f = 0, legal_i = 0;
  for (int n = 0; n <= 264; n++) {
    hg_status_t s = hg_wgmma_check_n(HG_BF16, HG_F32, n);
    if (hg_is_ok(&s)) legal_f++;
    s = hg_wgmma_check_n(HG_S8, HG_S32, n);
    if (hg_is_ok(&s)) legal_i++;
  }
  CHECK_EQ(legal_f, 32); /* 8, 16, ..., 256 */
  CHECK_EQ(legal_i, 18); /* 8, 16, 24, 32, 48, ..., 256 */
  CHECK_OK(hg_wgmma_check_n(HG_U8, HG_S32, 24));
  CHECK_OK(hg_wgmma_check_n(HG_E4M3, HG_F32, 40));
  CHECK_ERR(hg_wgmma_check_n(HG_S8, HG_S32, 40), HG_ERR_INVALID, "N = 40 is not allowed for s8");
  CHECK_ERR(hg_wgmma_check_n(HG_S8, HG_S32, 40), HG_ERR_INVALID, "multiples of 16");
  CHECK_ERR(hg_wgmma_check_n(HG_F16, HG_F32, 12), HG_ERR_INVALID, "multiples of 8 from 8 to 256");
  CHECK_ERR(hg_wgmma_check_n(HG_F16, HG_F32, 264), HG_ERR_INVALID, "N = 264");
  CHECK_ERR(hg_wgmma_check_n(HG_TF32, HG_F32, 0), HG_ERR_INVALID, "N = 0");
}

static void test_type_rules(void) {
  hg_wgmma_atom_t a;
  CHECK_OK(hg_wgmma_atom_make(HG_F16, HG_F16, HG_F16, 64, HG_MAJOR_K, HG_MAJOR_K, false, &a));
  CHECK_OK(hg_wgmma_atom_make(HG_F16, HG_F16, HG_F32, 256, HG_MAJOR_MN, HG_MAJOR_MN, false, &a));
  CHECK_OK(hg_wgmma_atom_make(HG_BF16, HG_BF16, HG_F32, 8, HG_MAJOR_K, HG_MAJOR_MN, false, &a));
  CHECK_OK(hg_wgmma_atom_make(HG_TF32, HG_TF32, HG_F32, 128, HG_MAJOR_K, HG_MAJOR_K, true, &a));
  CHECK_OK(hg_wgmma_atom_make(HG_E4M3, HG_E5M2, HG_F16, 96, HG_MAJOR_K, HG_MAJOR_K, false, &a));
  CHECK_OK(hg_wgmma_atom_make(HG_E5M2, HG_E4M3, HG_F32, 256, HG_MAJOR_K, HG_MAJOR_K, true, &a));
  CHECK_OK(hg_wgmma_atom_make(HG_S8, HG_U8, HG_S32, 48, HG_MAJOR_K, HG_MAJOR_K, false, &a));
  CHECK_STR(a.ptx, "wgmma.mma_async.sync.aligned.m64n48k32.s32.s8.u8");
  CHECK_ERR(hg_wgmma_atom_make(HG_BF16, HG_BF16, HG_F16, 64, HG_MAJOR_K, HG_MAJOR_K, false, &a),
            HG_ERR_INVALID, "bf16 x bf16 accumulating in f32 only");
  CHECK_ERR(hg_wgmma_atom_make(HG_F16, HG_BF16, HG_F32, 64, HG_MAJOR_K, HG_MAJOR_K, false, &a),
            HG_ERR_INVALID, "wgmma does not take f16 x bf16");
  CHECK_ERR(hg_wgmma_atom_make(HG_S8, HG_E4M3, HG_S32, 64, HG_MAJOR_K, HG_MAJOR_K, false, &a),
            HG_ERR_INVALID, "s8/u8 x s8/u8");
  CHECK_ERR(hg_wgmma_atom_make(HG_U8, HG_U8, HG_F32, 64, HG_MAJOR_K, HG_MAJOR_K, false, &a),
            HG_ERR_INVALID, "accumulating in s32");
  CHECK_ERR(hg_wgmma_atom_make(HG_F32, HG_F32, HG_F32, 64, HG_MAJOR_K, HG_MAJOR_K, false, &a),
            HG_ERR_INVALID, "f32 is not a wgmma operand type");
  /* Only 16-bit operands may be MN-major. */
  CHECK_ERR(hg_wgmma_atom_make(HG_E4M3, HG_E4M3, HG_F32, 64, HG_MAJOR_MN, HG_MAJOR_K, false, &a),
            HG_ERR_INVALID, "operand A is e4m3 and MN-major");
  CHECK_ERR(hg_wgmma_atom_make(HG_S8, HG_S8, HG_S32, 64, HG_MAJOR_K, HG_MAJOR_MN, false, &a),
            HG_ERR_INVALID, "a 8-bit operand must be K-major");
  CHECK_ERR(hg_wgmma_atom_make(HG_TF32, HG_TF32, HG_F32, 64, HG_MAJOR_K, HG_MAJOR_MN, false, &a),
            HG_ERR_INVALID, "a 32-bit operand must be K-major");
  CHECK_ERR(hg_wgmma_atom_make(HG_F16, HG_F16, HG_F32, 64, HG_MAJOR_MN, HG_MAJOR_K, true, &a),
            HG_ERR_INVALID, "A from registers cannot be MN-major");
}

static void test_fields(void) {
  hg_wgmma_atom_t a;
  CHECK_OK(hg_wgmma_atom_make(HG_BF16, HG_BF16, HG_F32, 256, HG_MAJOR_K, HG_MAJOR_MN, false, &a));
  CHECK_EQ(a.m, 64);
  CHECK_EQ(a.n, 256);
  CHECK_EQ(a.k, 16);
  CHECK(!a.trans_a);
  CHECK(a.trans_b);
  CHECK_EQ(a.acc_values, 128); /* 64 x 256 / 128 threads */
  CHECK_EQ(a.acc_regs, 128);
  CHECK_STR(a.ptx, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16");
  CHECK_OK(hg_wgmma_atom_make(HG_F16, HG_F16, HG_F16, 128, HG_MAJOR_K, HG_MAJOR_K, true, &a));
  CHECK_EQ(a.acc_values, 64);
  CHECK_EQ(a.acc_regs, 32); /* two f16 per register */
  CHECK_EQ(a.a_values, 8);
  CHECK_EQ(a.a_regs_count, 4);
  char buf[256];
  hg_layout_print(&a.c_tv, buf, sizeof buf);
  CHECK_STR(buf, "((4,8,4),(2,2,16)):((128,1,16),(64,8,512))");
  hg_layout_print(&a.a_tv, buf, sizeof buf);
  CHECK_STR(buf, "((4,8,4),(2,2,2)):((128,1,16),(64,8,512))");
}

/* c_tv must agree with the PTX ISA's accumulator figure (the model) and cover 64xN once. */
static void check_acc_layout(int n) {
  hg_wgmma_atom_t a;
  CHECK_OK(hg_wgmma_atom_make(HG_F16, HG_F16, HG_F32, n, HG_MAJOR_K, HG_MAJOR_K, false, &a));
  static int seen[64 * 256];
  memset(seen, 0, sizeof seen);
  int bad = 0;
  for (int t = 0; t < 128; t++)
    for (int v = 0; v < a.acc_values; v++) {
      hg_tuple_t crd;
      const int64_t cv[2] = {t, v};
      int64_t idx;
      int m, col;
      CHECK_OK(hg_tuple_ints(&crd, 2, cv));
      CHECK_OK(hg_crd2idx(&a.c_tv, &crd, &idx));
      CHECK_OK(hg_model_wgmma_acc_coord(n, t, v, &m, &col));
      if (idx != m + 64 * col && bad++ < 5)
        HG_FAIL("N=%d thread %d value %d: layout says %lld, PTX figure (%d,%d)", n, t, v,
                (long long)idx, m, col);
      if (idx >= 0 && idx < 64 * n) seen[idx]++;
    }
  for (int i = 0; i < 64 * n; i++)
    if (seen[i] != 1 && bad++ < 5) HG_FAIL("N=%d element %d held %d times", n, i, seen[i]);
  CHECK_EQ(bad, 0);
}

static void test_acc_layout(void) {
  const int ns[] = {8, 16, 24, 64, 120, 256};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) check_acc_layout(ns[i]);
}

static void test_a_layout(void) {
  const hg_dtype_t types[] = {HG_F16, HG_BF16, HG_TF32, HG_E4M3, HG_S8};
  const hg_dtype_t accs[] = {HG_F32, HG_F32, HG_F32, HG_F32, HG_S32};
  for (int ti = 0; ti < 5; ti++) {
    hg_wgmma_atom_t a;
    CHECK_OK(
        hg_wgmma_atom_make(types[ti], types[ti], accs[ti], 64, HG_MAJOR_K, HG_MAJOR_K, true, &a));
    int seen[64 * 32] = {0}, bad = 0;
    for (int t = 0; t < 128; t++)
      for (int v = 0; v < a.a_values; v++) {
        hg_tuple_t crd;
        const int64_t cv[2] = {t, v};
        int64_t idx;
        int m, k;
        CHECK_OK(hg_tuple_ints(&crd, 2, cv));
        CHECK_OK(hg_crd2idx(&a.a_tv, &crd, &idx));
        CHECK_OK(hg_model_wgmma_a_coord(types[ti], t, v, &m, &k));
        if (idx != m + 64 * k && bad++ < 5)
          HG_FAIL("%s thread %d value %d: layout %lld, PTX figure (%d,%d)",
                  hg_dtype_name(types[ti]), t, v, (long long)idx, m, k);
        if (idx >= 0 && idx < 64 * a.k) seen[idx]++;
      }
    for (int i = 0; i < 64 * a.k; i++)
      if (seen[i] != 1 && bad++ < 5) HG_FAIL("element %d held %d times", i, seen[i]);
    CHECK_EQ(bad, 0);
  }
  /* First principles, 16-bit: thread 5 (lane 5: group 1, q 1) holds a0,a1 = (1, 2..3),
   * a2,a3 = (9, 2..3), a4,a5 = (1, 10..11), a6,a7 = (9, 10..11). */
  int m, k;
  CHECK_OK(hg_model_wgmma_a_coord(HG_F16, 5, 6, &m, &k));
  CHECK_EQ(m, 9);
  CHECK_EQ(k, 10);
  /* tf32: thread 37 (warp 1, lane 5): a3 = (16 + 1 + 8, 4 + 1). */
  CHECK_OK(hg_model_wgmma_a_coord(HG_TF32, 37, 3, &m, &k));
  CHECK_EQ(m, 25);
  CHECK_EQ(k, 5);
}

int main(void) {
  HG_RUN(test_k_per_type);
  HG_RUN(test_n_rules);
  HG_RUN(test_type_rules);
  HG_RUN(test_fields);
  HG_RUN(test_acc_layout);
  HG_RUN(test_a_layout);
  return hg_test_finish();
}
