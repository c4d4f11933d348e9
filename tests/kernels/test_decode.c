/* The decode kernel's pieces on the CPU (ldg-mmasync, src/kernels/gemm_decode.c): its k
 * permutation against the PTX ISA's mma.m16n8k16 and m16n8k32 (fp8) fragment models (the sums
 * come out as
 * D^T = B A^T exactly), and a lane's window load run through the IR interpreter against
 * rows of every offset and length (the right 16 bytes, zeros past the row, no block read that
 * holds none of the row's bytes). The whole kernel's ptxas matrix is in test_gemm.c
 * (test_decode); its GPU check is scripts/gpu-check.sh dv. */
#include <stdlib.h>
#include <string.h>

#include "hg_test.h"
#include "hopgen/kernels.h"
#include "kernels/gemm_internal.h"
#include "support/ir_eval.h"

/* One 64-byte chunk of k with e elements a 32-bit register (e = 2: 32 16-bit elements through
 * mma.sync m16n8k16; e = 4: 64 fp8 elements through m16n8k32, the same registers): W (16 rows
 * of B), A (8 rows), both small integers so that every sum is exact. Lane (g, q) holds
 * W[g][8e q ..] (its 16 bytes, w), W[g+8][...] (v) and A[g][8e q ..] (x), as the kernel loads
 * them; the mma model says where each register's elements sit in the 16 x 8e A fragment, the
 * 8e x 8 B fragment and the accumulator. */
static void check_permutation(int e, hg_status_t (*coord)(int, int, int, int *, int *)) {
  const int kc = 16 * e, ks = 8 * e; /* k a chunk, k an mma step */
  int W[16][64], A[8][64];
  for (int r = 0; r < 16; r++)
    for (int k = 0; k < kc; k++)
      W[r][k] = e == 2 ? (r * 7 + k * 3) % 11 - 5 : (r * 5 + k * 7) % 13 - 6;
  for (int m = 0; m < 8; m++)
    for (int k = 0; k < kc; k++)
      A[m][k] = e == 2 ? (m * 5 + k * 13) % 7 - 3 : (m * 3 + k * 11) % 9 - 4;
  long d[16][8] = {{0}};
  for (int s = 0; s < 2; s++) {
    /* the mma's operands as matrices, filled from the lanes' registers through the model */
    int fa[16][32], fb[32][8], seen_a[16][32] = {{0}}, seen_b[32][8] = {{0}};
    for (int lane = 0; lane < 32; lane++) {
      const int g = lane / 4, q = lane % 4;
      for (int reg = 0; reg < 4; reg++) {
        int half, word;
        hg_gemm_decode_frag(s, reg, &half, &word);
        for (int x = 0; x < e; x++) {
          int row, col;
          CHECK_OK(coord(0, lane, e * reg + x, &row, &col));
          fa[row][col] = W[g + 8 * half][4 * e * q + e * word + x];
          seen_a[row][col]++;
        }
      }
      for (int reg = 0; reg < 2; reg++)
        for (int x = 0; x < e; x++) {
          int row, col;
          CHECK_OK(coord(1, lane, e * reg + x, &row, &col));
          fb[row][col] = A[g][4 * e * q + e * (2 * s + reg) + x];
          seen_b[row][col]++;
        }
    }
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < ks; j++) CHECK_EQ(seen_a[i][j], 1);
    for (int i = 0; i < ks; i++)
      for (int j = 0; j < 8; j++) CHECK_EQ(seen_b[i][j], 1);
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 8; j++)
        for (int k = 0; k < ks; k++) d[i][j] += (long)fa[i][k] * fb[k][j];
  }
  /* the accumulator (row n of B, column m of A) is sum_k W[n][k] A[m][k] over the chunk */
  int wrong = 0;
  for (int n = 0; n < 16; n++)
    for (int m = 0; m < 8; m++) {
      long want = 0;
      for (int k = 0; k < kc; k++) want += (long)W[n][k] * A[m][k];
      wrong += d[n][m] != want;
    }
  CHECK_EQ(wrong, 0);
  /* and where the kernel says each accumulator lands: c_i of lane (g, q) at (g + 8 (i / 2),
   * 2q + i % 2), which the reduction through shared memory relies on */
  for (int lane = 0; lane < 32; lane++)
    for (int i = 0; i < 4; i++) {
      int row, col;
      CHECK_OK(coord(2, lane, i, &row, &col));
      CHECK_EQ(row, lane / 4 + 8 * (i / 2));
      CHECK_EQ(col, 2 * (lane % 4) + i % 2);
    }
}

static void test_permutation(void) {
  check_permutation(2, hg_model_mma_sync_coord);
}

/* fp8 (m16n8k32): the same words, four elements each */
static void test_permutation8(void) {
  check_permutation(4, hg_model_mma_sync8_coord);
}

/* A row of `kbytes` bytes at byte `base` of a buffer, lane q's window of chunk c. */
typedef struct mem {
  uint8_t bytes[512];
  int64_t lo, hi; /* the row's bytes: [lo, hi) */
  int bad, loads;
} mem_t;

static int64_t mem_load(void *ctx, hg_space_t space, int bits, int64_t addr) {
  mem_t *m = ctx;
  m->loads++;
  /* 32-bit words of 16-byte loads: the word's block must hold a byte of the row */
  const int64_t blk = addr & ~(int64_t)15;
  if (space != HG_GLOBAL || bits != 32 || blk + 16 <= m->lo || blk >= m->hi || addr < 0 ||
      addr + 4 > (int64_t)sizeof m->bytes) {
    m->bad++;
    return 0;
  }
  uint32_t v;
  memcpy(&v, m->bytes + addr, 4);
  return (int64_t)v;
}

static void window_case(int base, int kbytes, int q, int c, bool win, bool tail) {
  hg_builder_t *b = NULL;
  CHECK_OK(hg_builder_create("decode_window", &b));
  hg_val_t row = hg_b_param(b, HG_T_I64, "row");
  hg_val_t qv = hg_b_param(b, HG_T_I32, "q");
  hg_val_t cv = hg_b_param(b, HG_T_I32, "c");
  hg_val_t kb = hg_b_param(b, HG_T_I32, "kbytes");
  hg_val_t at, sh, out[4];
  hg_gemm_decode_lane_row(b, row, qv, win, &at, &sh);
  hg_val_t off = hg_b_bin(b, HG_MUL, hg_b_sext(b, cv), hg_b_i64(b, 64));
  hg_val_t left =
      tail ? hg_b_bin(b, HG_SUB, kb,
                      hg_b_mad(b, cv, hg_b_i32(b, 64), hg_b_bin(b, HG_MUL, qv, hg_b_i32(b, 16))))
           : HG_NONE;
  hg_gemm_decode_load(b, at, sh, win, off, left, out);
  mem_t m = {.lo = base, .hi = base + kbytes};
  for (size_t i = 0; i < sizeof m.bytes; i++) m.bytes[i] = (uint8_t)(i * 37 + 11);
  const int64_t params[4] = {base, q, c, kbytes};
  ir_eval_hooks_t h = {.ctx = &m, .load = mem_load};
  ir_eval_t ev;
  hg_status_t st = ir_eval_run_hooks(b, params, NULL, &h, &ev);
  CHECK_OK(st);
  if (hg_is_ok(&st)) {
    int wrong = 0;
    for (int i = 0; i < 16; i++) {
      const int64_t at_byte = (int64_t)c * 64 + 16 * q + i; /* in the row */
      const uint8_t want = at_byte < kbytes ? m.bytes[base + at_byte] : 0;
      const uint8_t got = (uint8_t)((uint64_t)ir_eval_get(&ev, out[i / 4]) >> (8 * (i % 4)));
      wrong += got != want;
    }
    hg_test_checks++;
    if (wrong || m.bad)
      HG_FAIL("window of a row at +%d of %d bytes, lane q %d, chunk %d (%s%s): %d bytes wrong, "
              "%d loads outside the row's blocks",
              base, kbytes, q, c, win ? "window" : "aligned", tail ? ", tail" : "", wrong, m.bad);
    ir_eval_free(&ev);
  }
  hg_builder_destroy(b);
}

static void test_window_loads(void) {
  /* aligned rows (base a multiple of 16): plain loads, and the tail's */
  for (int kb = 2; kb <= 160; kb += 2)
    for (int q = 0; q < 4; q++)
      for (int c = 0; c * 64 < kb; c++) {
        window_case(32, kb, q, c, false, true);
        if ((c + 1) * 64 <= kb) window_case(32, kb, q, c, false, false);
      }
  /* every offset a 16-bit row may start at (and odd ones), every length to 3 chunks */
  for (int base = 1; base < 32; base++)
    for (int kb = 2; kb <= 170; kb += 3)
      for (int q = 0; q < 4; q++)
        for (int c = 0; c * 64 < kb; c++) {
          window_case(base, kb, q, c, true, true);
          /* a full chunk (wholly within the row) without masks */
          if ((c + 1) * 64 <= kb) window_case(base, kb, q, c, true, false);
        }
}

int main(void) {
  HG_RUN(test_permutation);
  HG_RUN(test_permutation8);
  HG_RUN(test_window_loads);
  return hg_test_finish();
}
