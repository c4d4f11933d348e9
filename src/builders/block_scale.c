/* fp8 block scaling's factors in the main loop (builders.h, hg_block_scales_*): A scaled per
 * row and 128 of K, B per 128 x 128 block, applied to each k-block's partial sums as the
 * mainloop promotes them (hg_mainloop_t.kblock_scales). */
#include "hopgen/builders.h"

hg_val_t hg_block_scales_row0(hg_builder_t *b, const hg_roles_t *r, hg_val_t slot_row0) {
  return hg_b_bin(b, HG_ADD, slot_row0,
                  hg_b_bin(b, HG_ADD, hg_b_bin(b, HG_SHL, r->warp_in_wg, hg_b_i32(b, 4)),
                           hg_b_bin(b, HG_SHR_U, r->lane, hg_b_i32(b, 2))));
}

/* Rows past M read row M - 1 (their results are never stored), so the loads need no branch
 * and stay in flight across the stage wait and the MMAs (the mainloop calls this first in
 * the k-block). */
void hg_block_scales_load(hg_builder_t *b, void *ctx, hg_val_t kb, hg_val_t *f) {
  const hg_block_scales_t *s = ctx;
  hg_val_t k = hg_b_sext(b, hg_b_bin(b, HG_ADD, s->k_first, kb));
  hg_val_t jb = hg_b_sext(b, hg_b_bin(b, HG_SHR_U, s->n0, hg_b_i32(b, 7)));
  hg_val_t four = hg_b_i64(b, 4), sb;
  hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 1, hg_b_mad(b, hg_b_mad(b, jb, s->ldb, k), four, s->scale_b),
            &sb);
  hg_val_t last = hg_b_bin(b, HG_SUB, s->m, hg_b_i32(b, 1));
  /* the k-block's column of A's scales: scale_a + 4 k lda */
  hg_val_t col = hg_b_mad(b, hg_b_bin(b, HG_MUL, k, s->lda), four, s->scale_a);
  for (int im = 0; im < s->atoms_m; im++)
    for (int half = 0; half < 2; half++) {
      hg_val_t row =
          hg_b_bin(b, HG_ADD, s->m0, hg_b_bin(b, HG_ADD, s->row0, hg_b_i32(b, 64 * im + 8 * half)));
      row = hg_b_bin(b, HG_MIN_S, row, last);
      hg_val_t sa;
      hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 1, hg_b_mad(b, hg_b_sext(b, row), four, col), &sa);
      f[2 * im + half] = hg_b_bin(b, HG_FMUL, sa, sb);
    }
}
