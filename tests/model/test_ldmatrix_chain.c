/* ldmatrix feeds the register MMAs: a tile stored in shared memory, read by the model's
 * ldmatrix with the lane addresses a main loop computes, must give every lane exactly the
 * fragment the atom's thread-value layout names. That is what an ldmatrix + mma.sync main
 * loop (A by x4, B by x2; .trans for MN-major tiles) and an ldmatrix + wgmma RS main loop (A
 * by x4 per warp) rely on. Each element holds a distinct 16-bit tag, so a register that got
 * the wrong element, or the right ones in the wrong halves, shows up. */
#include "hg_test.h"
#include "hopgen/sm90.h"

enum { SMEM = 8192, BASE = 1024 };
static uint8_t smem[SMEM];

/* The tag of element (row, col) of an operand: distinct for every row < 64 and col < 16. */
static uint16_t tag(int row, int col) {
  return (uint16_t)(0x4000 + row * 16 + col);
}

static void put16(uint32_t addr, uint16_t v) {
  smem[addr] = (uint8_t)v;
  smem[addr + 1] = (uint8_t)(v >> 8);
}

/* Store a rows x cols operand (element (r, c) = tag(r, c)) at BASE: with c contiguous in rows
 * of ld_bytes (c_major), or r contiguous (element (r, c) at c * ld_bytes + 2 r). */
static void store_tile(int rows, int cols, bool c_major, int ld_bytes) {
  memset(smem, 0xEE, sizeof smem);
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++)
      put16(BASE + (uint32_t)(c_major ? r * ld_bytes + 2 * c : c * ld_bytes + 2 * r), tag(r, c));
}

/* The element value v of lane t holds: register v / 2, low half for even v. */
static uint16_t half_of(const uint32_t out[32][4], int t, int v) {
  return (uint16_t)(out[t][v / 2] >> (16 * (v % 2)));
}

/* The value (thread, v) of a thread-value layout, as an index into the operand. */
static int64_t tv(const hg_layout_t *l, int thread, int v) {
  hg_tuple_t crd;
  const int64_t cv[2] = {thread, v};
  int64_t idx = -1;
  CHECK_OK(hg_tuple_ints(&crd, 2, cv));
  CHECK_OK(hg_crd2idx(l, &crd, &idx));
  return idx;
}

/* The values of the 32 lanes (threads thread0.. of layout l) that do not hold tag(row, col) of
 * the element the layout names (index row + rows * col); the first few are reported. */
static int mismatches(const char *what, const hg_layout_t *l, int thread0, int values, int rows,
                      const uint32_t out[32][4]) {
  int bad = 0;
  for (int t = 0; t < 32; t++)
    for (int v = 0; v < values; v++) {
      const int64_t idx = tv(l, thread0 + t, v);
      const int row = (int)(idx % rows), col = (int)(idx / rows);
      const uint16_t got = half_of(out, t, v);
      if (got != tag(row, col) && bad++ < 5)
        HG_FAIL("%s: lane %d value %d holds 0x%04x, the layout names (%d, %d) = 0x%04x", what, t, v,
                got, row, col, tag(row, col));
    }
  return bad;
}

/* A 16x16 tile, K-major (rows m of 32 + pad bytes, plain ldmatrix) or MN-major (rows k, .trans):
 * lane l addresses row l % 8 of matrix i = l / 8, which holds rows m 8 (i % 2).. and columns
 * k 8 (i / 2).. of A (the order of the A fragment's registers). */
static void check_a(bool mn_major, int pad) {
  const int ld = 32 + pad;
  hg_mma_sync_atom_t atom;
  CHECK_OK(hg_mma_sync_atom_make(HG_BF16, HG_BF16, HG_F32, &atom));
  store_tile(16, 16, !mn_major, ld);
  uint32_t addr[32], out[32][4];
  for (int l = 0; l < 32; l++) {
    const int i = l / 8, r = l % 8, m0 = 8 * (i % 2), k0 = 8 * (i / 2);
    /* K-major: row m0 + r from column k0; MN-major: the transposed block, row k0 + r of the
     * stored K x M tile from column m0 */
    addr[l] = BASE + (uint32_t)(mn_major ? (k0 + r) * ld + 2 * m0 : (m0 + r) * ld + 2 * k0);
  }
  CHECK_OK(hg_model_ldmatrix(4, mn_major, addr, smem, sizeof smem, out));
  char what[48];
  snprintf(what, sizeof what, "A %s, pad %d", mn_major ? "MN-major" : "K-major", pad);
  CHECK_EQ(mismatches(what, &atom.a_tv, 0, atom.a_values, 16, out), 0); /* m + 16 k */
}

/* B as 8 (N) x 16 (K), K-major (rows n: plain x2, matrix i = columns k 8i..) or MN-major
 * (rows k of the stored K x N tile: .trans, matrix i = rows k 8i..). Lanes 16..31 address
 * nothing (x2); the model must not read them, so they hold garbage here. */
static void check_b(bool mn_major, int pad) {
  hg_mma_sync_atom_t atom;
  CHECK_OK(hg_mma_sync_atom_make(HG_F16, HG_F16, HG_F32, &atom));
  const int ld = (mn_major ? 16 : 32) + pad;
  store_tile(8, 16, !mn_major, ld); /* element (n, k) */
  uint32_t addr[32], out[32][4];
  for (int l = 0; l < 32; l++) {
    const int i = l / 8, r = l % 8;
    addr[l] =
        l >= 16 ? 0xFFFFFFF0u : BASE + (uint32_t)(mn_major ? (8 * i + r) * ld : r * ld + 2 * 8 * i);
  }
  CHECK_OK(hg_model_ldmatrix(2, mn_major, addr, smem, sizeof smem, out));
  char what[48];
  snprintf(what, sizeof what, "B %s, pad %d", mn_major ? "MN-major" : "K-major", pad);
  CHECK_EQ(mismatches(what, &atom.b_tv, 0, atom.b_values, 8, out), 0); /* n + 8 k */
}

static void test_a_fragment_by_ldmatrix_x4(void) {
  for (int pad = 0; pad <= 16; pad += 16) {
    check_a(false, pad);
    check_a(true, pad);
  }
}

static void test_b_fragment_by_ldmatrix_x2(void) {
  for (int pad = 0; pad <= 16; pad += 16) {
    check_b(false, pad);
    check_b(true, pad);
  }
}

/* wgmma with A from registers (16-bit types): warp w of the warpgroup holds rows 16w..16w+15
 * of the 64x16 A in the same arrangement as mma.sync's A fragment, so ldmatrix x4 with the
 * A addresses above, offset to row 16w, fills it. Checked against the atom's a_tv and,
 * independently, against the model of the wgmma A-fragment figure. */
static void test_wgmma_rs_a_fragment_by_ldmatrix_x4(void) {
  const hg_dtype_t types[2] = {HG_BF16, HG_F16};
  for (int ti = 0; ti < 2; ti++) {
    hg_wgmma_atom_t atom;
    CHECK_OK(
        hg_wgmma_atom_make(types[ti], types[ti], HG_F32, 64, HG_MAJOR_K, HG_MAJOR_K, true, &atom));
    const int ld = 32;
    store_tile(64, 16, true, ld); /* 64 x 16, K-major */
    int bad = 0;
    for (int w = 0; w < 4; w++) {
      uint32_t addr[32], out[32][4];
      for (int l = 0; l < 32; l++) {
        const int i = l / 8, r = l % 8;
        addr[l] = BASE + (uint32_t)((16 * w + 8 * (i % 2) + r) * ld + 2 * 8 * (i / 2));
      }
      CHECK_OK(hg_model_ldmatrix(4, false, addr, smem, sizeof smem, out));
      char what[48];
      snprintf(what, sizeof what, "wgmma RS %s, warp %d", hg_dtype_name(types[ti]), w);
      CHECK_EQ(mismatches(what, &atom.a_tv, 32 * w, atom.a_values, 64, out), 0); /* m + 64 k */
      for (int l = 0; l < 32; l++)
        for (int v = 0; v < atom.a_values; v++) {
          int m, k;
          CHECK_OK(hg_model_wgmma_a_coord(types[ti], 32 * w + l, v, &m, &k));
          if (half_of(out, l, v) != tag(m, k) && bad++ < 5)
            HG_FAIL("%s: lane %d value %d holds 0x%04x, the wgmma figure names (%d, %d)", what, l,
                    v, half_of(out, l, v), m, k);
        }
    }
    CHECK_EQ(bad, 0);
  }
}

/* The model on its own: x1 and .trans on a hand-made matrix, and its refusals. */
static void test_ldmatrix_model(void) {
  memset(smem, 0, sizeof smem);
  uint32_t addr[32], out[32][4];
  for (int l = 0; l < 32; l++) addr[l] = BASE + 16 * (uint32_t)(l % 8);
  for (int r = 0; r < 8; r++)
    for (int c = 0; c < 8; c++) put16(BASE + 16 * (uint32_t)r + 2 * (uint32_t)c, tag(r, c));
  CHECK_OK(hg_model_ldmatrix(1, false, addr, smem, sizeof smem, out));
  /* lane 13: row 3, elements 2 and 3 */
  CHECK_EQ(out[13][0], (uint32_t)tag(3, 2) | (uint32_t)tag(3, 3) << 16);
  CHECK_OK(hg_model_ldmatrix(1, true, addr, smem, sizeof smem, out));
  /* .trans, lane 13: column 3, rows 2 and 3 */
  CHECK_EQ(out[13][0], (uint32_t)tag(2, 3) | (uint32_t)tag(3, 3) << 16);
  CHECK_ERR(hg_model_ldmatrix(3, false, addr, smem, sizeof smem, out), HG_ERR_INVALID,
            "ldmatrix model: 3 matrices is not x1, x2 or x4");
  addr[9] += 8;
  CHECK_OK(hg_model_ldmatrix(1, false, addr, smem, sizeof smem, out)); /* lane 9 unread by x1 */
  CHECK_ERR(
      hg_model_ldmatrix(2, false, addr, smem, sizeof smem, out), HG_ERR_INVALID,
      "ldmatrix model: lane 9's row address 0x418 is not 16-byte aligned (row 1 of matrix 1)");
  addr[9] = SMEM - 8;
  CHECK_ERR(hg_model_ldmatrix(4, false, addr, smem, sizeof smem, out), HG_ERR_INVALID,
            "ldmatrix model: lane 9's row address 0x1ff8 is not 16-byte aligned");
  addr[9] = SMEM - 16;
  CHECK_OK(hg_model_ldmatrix(4, false, addr, smem, sizeof smem, out));
  addr[9] = SMEM;
  CHECK_ERR(hg_model_ldmatrix(4, false, addr, smem, sizeof smem, out), HG_ERR_INVALID,
            "ldmatrix model: lane 9's row at 0x2000 runs past the 8192 B of shared memory");
}

int main(void) {
  HG_RUN(test_ldmatrix_model);
  HG_RUN(test_a_fragment_by_ldmatrix_x4);
  HG_RUN(test_b_fragment_by_ldmatrix_x2);
  HG_RUN(test_wgmma_rs_a_fragment_by_ldmatrix_x4);
  return hg_test_finish();
}
