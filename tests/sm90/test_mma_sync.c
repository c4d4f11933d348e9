/* mma.sync atoms: the types the atom takes, its fields, and its three register layouts
 * checked against the CPU model of the PTX ISA's fragment figures for every (lane, value),
 * each covering its operand exactly once. */
#include "hg_test.h"
#include "hopgen/sm90.h"

static void test_types_and_fields(void) {
  hg_mma_sync_atom_t a;
  CHECK_OK(hg_mma_sync_atom_make(HG_BF16, HG_BF16, HG_F32, &a));
  CHECK_STR(a.ptx, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32");
  CHECK_EQ(a.m, 16);
  CHECK_EQ(a.n, 8);
  CHECK_EQ(a.k, 16);
  CHECK_EQ(a.a_values, 8); /* 16 x 16 / 32 lanes */
  CHECK_EQ(a.b_values, 4); /* 16 x 8 / 32 */
  CHECK_EQ(a.c_values, 4);
  CHECK_EQ(a.a_regs, 4);
  CHECK_EQ(a.b_regs, 2);
  CHECK_EQ(a.c_regs, 4);
  /* lane t = q + 4 g: A row g, columns 2q (stride 32 = 2 * 16) and the values (next column,
   * row + 8, column + 8); B column g, rows 2q (stride 16 = 2 * 8); C like A without the K step */
  char buf[128];
  hg_layout_print(&a.a_tv, buf, sizeof buf);
  CHECK_STR(buf, "((4,8),(2,2,2)):((32,1),(16,8,128))");
  hg_layout_print(&a.b_tv, buf, sizeof buf);
  CHECK_STR(buf, "((4,8),(2,2)):((16,1),(8,64))");
  hg_layout_print(&a.c_tv, buf, sizeof buf);
  CHECK_STR(buf, "((4,8),(2,2)):((32,1),(16,8))");
  CHECK_OK(hg_mma_sync_atom_make(HG_F16, HG_F16, HG_F32, &a));
  CHECK_STR(a.ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");

  CHECK_ERR(hg_mma_sync_atom_make(HG_BF16, HG_F16, HG_F32, &a), HG_ERR_INVALID,
            "mma.sync m16n8k16 takes A and B both bf16 or both f16, not bf16 x f16");
  CHECK_ERR(hg_mma_sync_atom_make(HG_TF32, HG_TF32, HG_F32, &a), HG_ERR_INVALID, "not tf32 x tf32");
  CHECK_ERR(hg_mma_sync_atom_make(HG_E4M3, HG_BF16, HG_F32, &a), HG_ERR_INVALID,
            "takes fp8 A and B (each e4m3 or e5m2) into f32, not e4m3 x bf16 into f32");
  CHECK_ERR(hg_mma_sync_atom_make(HG_E4M3, HG_E4M3, HG_F16, &a), HG_ERR_INVALID,
            "not e4m3 x e4m3 into f16");
  /* fp8, m16n8k32: four bytes a register; lane t = q + 4 g: A row g, columns 4q (stride 64 =
   * 4 * 16) and the values (next column, row + 8, column + 16); B column g, rows 4q (stride 32
   * = 4 * 8), values (next k, k + 16); C as m16n8k16's */
  CHECK_OK(hg_mma_sync_atom_make(HG_E4M3, HG_E5M2, HG_F32, &a));
  CHECK_STR(a.ptx, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32");
  CHECK_EQ(a.k, 32);
  CHECK_EQ(a.a_values, 16);
  CHECK_EQ(a.b_values, 8);
  CHECK_EQ(a.a_regs, 4);
  CHECK_EQ(a.b_regs, 2);
  hg_layout_print(&a.a_tv, buf, sizeof buf);
  CHECK_STR(buf, "((4,8),(4,2,2)):((64,1),(16,8,256))");
  hg_layout_print(&a.b_tv, buf, sizeof buf);
  CHECK_STR(buf, "((4,8),(4,2)):((32,1),(8,128))");
  CHECK_ERR(hg_mma_sync_atom_make(HG_F16, HG_F16, HG_F16, &a), HG_ERR_INVALID,
            "accumulator f16: hopgen's mma.sync m16n8k16 accumulates f16 x f16 in f32");
}

/* Operand `operand` of the atom: its layout, values per lane, and how the model's (row, col)
 * becomes the layout's index (A: m + 16 k; B: the model's (k, n) -> n + 8 k; C: m + 16 n). */
static void check_layout(const hg_mma_sync_atom_t *a, int operand) {
  const hg_layout_t *l = operand == 0 ? &a->a_tv : operand == 1 ? &a->b_tv : &a->c_tv;
  const int values = operand == 0 ? a->a_values : operand == 1 ? a->b_values : a->c_values;
  int seen[512] = {0};
  int bad = 0;
  for (int t = 0; t < 32; t++)
    for (int v = 0; v < values; v++) {
      hg_tuple_t crd;
      const int64_t cv[2] = {t, v};
      int64_t idx;
      int row, col;
      CHECK_OK(hg_tuple_ints(&crd, 2, cv));
      CHECK_OK(hg_crd2idx(l, &crd, &idx));
      if (a->k == 32)
        CHECK_OK(hg_model_mma_sync8_coord(operand, t, v, &row, &col));
      else
        CHECK_OK(hg_model_mma_sync_coord(operand, t, v, &row, &col));
      const int64_t want = operand == 1 ? col + 8 * row : row + 16 * col;
      if (idx != want && bad++ < 5)
        HG_FAIL("operand %d lane %d value %d: layout says %lld, PTX figure (%d,%d)", operand, t, v,
                (long long)idx, row, col);
      if (idx >= 0 && idx < 32 * values) seen[idx]++;
    }
  for (int i = 0; i < 32 * values; i++)
    if (seen[i] != 1 && bad++ < 5)
      HG_FAIL("operand %d element %d held %d times", operand, i, seen[i]);
  CHECK_EQ(bad, 0);
}

static void test_layouts_match_the_fragment_figures(void) {
  hg_mma_sync_atom_t a;
  CHECK_OK(hg_mma_sync_atom_make(HG_BF16, HG_BF16, HG_F32, &a));
  for (int operand = 0; operand < 3; operand++) check_layout(&a, operand);
  CHECK_OK(hg_mma_sync_atom_make(HG_E5M2, HG_E4M3, HG_F32, &a));
  for (int operand = 0; operand < 3; operand++) check_layout(&a, operand);
}

/* Spot checks of the model against the figures' first rows, so that the model itself is not
 * only checked against the layouts it judges. */
static void test_model_spot_checks(void) {
  int r, c;
  CHECK_OK(hg_model_mma_sync_coord(0, 5, 6, &r, &c)); /* lane 5: group 1, tig 1; a6 */
  CHECK_EQ(r, 9);
  CHECK_EQ(c, 10);
  CHECK_OK(hg_model_mma_sync_coord(1, 31, 3, &r, &c)); /* b3 of lane 31: k = 15, n = 7 */
  CHECK_EQ(r, 15);
  CHECK_EQ(c, 7);
  CHECK_OK(hg_model_mma_sync_coord(2, 2, 3, &r, &c)); /* c3 of lane 2: row 8, col 5 */
  CHECK_EQ(r, 8);
  CHECK_EQ(c, 5);
  CHECK_ERR(hg_model_mma_sync_coord(3, 0, 0, &r, &c), HG_ERR_INVALID,
            "mma.sync model: operand 3 is not 0 (A), 1 (B) or 2 (C)");
  CHECK_ERR(hg_model_mma_sync_coord(1, 0, 4, &r, &c), HG_ERR_INVALID,
            "mma.sync model: lane 0 value 4 is outside 32 lanes x 4 values of B");
  CHECK_ERR(hg_model_mma_sync_coord(0, 32, 0, &r, &c), HG_ERR_INVALID, "lane 32 value 0");
  /* m16n8k32 (8-bit): a13 of lane 6 (group 1, tig 2): row 9, col 8 + 1 + 16; b5 of lane 31:
   * k = 12 + 1 + 16, n = 7 */
  CHECK_OK(hg_model_mma_sync8_coord(0, 6, 13, &r, &c));
  CHECK_EQ(r, 9);
  CHECK_EQ(c, 25);
  CHECK_OK(hg_model_mma_sync8_coord(1, 31, 5, &r, &c));
  CHECK_EQ(r, 29);
  CHECK_EQ(c, 7);
  CHECK_ERR(hg_model_mma_sync8_coord(0, 0, 16, &r, &c), HG_ERR_INVALID,
            "lane 0 value 16 is outside 32 lanes x 16 values of A");
}

int main(void) {
  HG_RUN(test_types_and_fields);
  HG_RUN(test_layouts_match_the_fragment_figures);
  HG_RUN(test_model_spot_checks);
  return hg_test_finish();
}
