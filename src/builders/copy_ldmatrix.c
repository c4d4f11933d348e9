/* TiledCopy from shared memory into MMA fragments with ldmatrix (builders.h).
 *
 * ldmatrix.x4 reads four 8 x 8 matrices of 16-bit elements; lanes 8i..8i+7 give the
 * addresses of matrix i's 8 rows (16 contiguous bytes each) and lane t receives, of each
 * matrix, row t/4, elements 2(t%4) and 2(t%4)+1 - or, with .trans, column t/4, rows 2(t%4)
 * and 2(t%4)+1 (PTX ISA "ldmatrix"). For a K-major tile a matrix's rows are 8 MN indices
 * with 8 contiguous K each, which gives lane t (mn = t/4, k = 2(t%4)..) as the MMA A and B
 * fragments want; for an MN-major tile the rows are 8 K indices with 8 contiguous MN each,
 * and .trans gives lane t the same (mn = t/4, k = 2(t%4)..). Each row's address comes from
 * the stage layout (swizzle included): a row's 16 bytes stay contiguous under every
 * TMA/GMMA swizzle, whose unit is a 16-byte chunk. */
#include "hopgen/builders.h"

static hg_val_t i32(hg_builder_t *b, int32_t v) {
  return hg_b_i32(b, v);
}

/* table[g] for a run-time g in 0..3 (a small select chain; usually an affine pattern that
 * ptxas folds). */
static hg_val_t pick(hg_builder_t *b, hg_val_t g, const int table[4]) {
  hg_val_t v = i32(b, table[0]);
  for (int i = 1; i < 4; i++)
    if (table[i] != table[0])
      v = hg_b_select(b, hg_b_cmp(b, HG_EQ, g, i32(b, i)), i32(b, table[i]), v);
  return v;
}

void hg_ldmatrix_x4(hg_builder_t *b, const hg_composed_t *layout, bool mn_major, hg_val_t stage,
                    hg_val_t mn0, hg_val_t k0, const int dmn[4], const int dk[4], hg_val_t lane,
                    hg_val_t out[4]) {
  if (hg_layout_rank(&layout->layout) != 2) {
    hg_builder_fail(b, hg_error(HG_ERR_INVALID,
                                "hg_ldmatrix_x4: the stage layout has rank %d, not (MN, K)",
                                hg_layout_rank(&layout->layout)));
    return;
  }
  hg_val_t g = hg_b_bin(b, HG_SHR_U, lane, i32(b, 3));
  hg_val_t row = hg_b_bin(b, HG_AND, lane, i32(b, 7));
  hg_val_t mn = hg_b_bin(b, HG_ADD, mn0, pick(b, g, dmn));
  hg_val_t k = hg_b_bin(b, HG_ADD, k0, pick(b, g, dk));
  /* the lane's row runs along the strided mode */
  if (mn_major)
    k = hg_b_bin(b, HG_ADD, k, row);
  else
    mn = hg_b_bin(b, HG_ADD, mn, row);
  hg_val_t crd[2] = {mn, k}, off;
  hg_status_t s = hg_composed_emit(b, layout, crd, &off);
  if (!hg_is_ok(&s)) {
    hg_builder_fail(b, s);
    return;
  }
  hg_val_t addr = hg_b_bin(b, HG_ADD, stage, hg_b_bin(b, HG_SHL, off, i32(b, 1)));
  hg_b_ldmatrix(b, 4, mn_major, addr, out);
}

void hg_ldmatrix_a16x16(hg_builder_t *b, const hg_composed_t *layout, bool mn_major, hg_val_t stage,
                        hg_val_t mn0, hg_val_t k0, hg_val_t lane, hg_val_t out[4]) {
  /* a0 (rows 0-7, k 0-7), a1 (rows 8-15, k 0-7), a2 (rows 0-7, k 8-15), a3 (rows 8-15,
   * k 8-15): PTX ISA "Matrix Fragments for mma.m16n8k16", and wgmma's register A. */
  static const int dmn[4] = {0, 8, 0, 8}, dk[4] = {0, 0, 8, 8};
  hg_ldmatrix_x4(b, layout, mn_major, stage, mn0, k0, dmn, dk, lane, out);
}

void hg_ldmatrix_b16x16(hg_builder_t *b, const hg_composed_t *layout, bool mn_major, hg_val_t stage,
                        hg_val_t n0, hg_val_t k0, hg_val_t lane, hg_val_t out[4]) {
  /* b0, b1 of the n8 block n0 (k 0-7, k 8-15), then of the block n0 + 8. */
  static const int dmn[4] = {0, 0, 8, 8}, dk[4] = {0, 8, 0, 8};
  hg_ldmatrix_x4(b, layout, mn_major, stage, n0, k0, dmn, dk, lane, out);
}
