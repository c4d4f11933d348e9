/* fp8 block scaling's factors in the main loop (builders.h, hg_block_scales_*): A scaled per
 * row and 128 of K, B per 128 x 128 block, applied to each k-block's partial sums as the
 * mainloop promotes them (hg_mainloop_t.kblock_scales). */
#include "hopgen/builders.h"

hg_val_t hg_block_scales_row0(hg_builder_t *b, const hg_roles_t *r, hg_val_t slot_row0) {
  return hg_b_bin(b, HG_ADD, slot_row0,
                  hg_b_bin(b, HG_ADD, hg_b_bin(b, HG_SHL, r->warp_in_wg, hg_b_i32(b, 4)),
                           hg_b_bin(b, HG_SHR_U, r->lane, hg_b_i32(b, 2))));
}

int hg_block_scales_runs(int tile_n) {
  return tile_n > 128 ? tile_n / 64 : 1;
}

/* B's scale of block jb and k-block k: table + 4 (jb ldb + k) (I64 values; four the I64 4). */
static hg_val_t b_scale_at(hg_builder_t *b, hg_val_t table, hg_val_t jb, hg_val_t ldb, hg_val_t k,
                           hg_val_t four) {
  return hg_b_mad(b, hg_b_mad(b, jb, ldb, k), four, table);
}

/* B's block after the tile's first (jb + 1), clamped to the last block of N columns: a tile
 * at the right edge whose second block lies past N reads the last (its factors multiply only
 * columns past N, which are never stored). */
static hg_val_t next_block(hg_builder_t *b, hg_val_t jb, hg_val_t n) {
  hg_val_t last =
      hg_b_sext(b, hg_b_bin(b, HG_SHR_U, hg_b_bin(b, HG_SUB, n, hg_b_i32(b, 1)), hg_b_i32(b, 7)));
  return hg_b_bin(b, HG_MIN_S, hg_b_bin(b, HG_ADD, jb, hg_b_i64(b, 1)), last);
}

/* The factors of a tile of several runs: run c of 64 columns starts at column n0 % 128 + 64 c
 * of the tile's first scale block, in the next block from 128 on (tiles of 192 start at a
 * multiple of 64: run 0 always in the first block, runs past 128 - n0 % 128 in the second). */
static void runs_factors(hg_builder_t *b, const hg_block_scales_t *s, const hg_val_t *sa,
                         hg_val_t sb0, hg_val_t sb1, hg_val_t *f) {
  const int rows = 2 * s->atoms_m, runs = hg_block_scales_runs(s->tile_n);
  hg_val_t off = hg_b_bin(b, HG_AND, s->n0, hg_b_i32(b, 127));
  for (int c = 0; c < runs; c++) {
    /* run 0 starts in the first block (off <= 64), runs from column 128 on in the second */
    hg_val_t sb =
        c == 0 ? sb0
        : 64 * c >= 128
            ? sb1
            : hg_b_select(b,
                          hg_b_cmp(b, HG_GE_S, hg_b_bin(b, HG_ADD, off, hg_b_i32(b, 64 * c)),
                                   hg_b_i32(b, 128)),
                          sb1, sb0);
    for (int j = 0; j < rows; j++) f[c * rows + j] = hg_b_bin(b, HG_FMUL, sa[j], sb);
  }
}

/* Rows past M read row M - 1 (their results are never stored), so the loads need no branch
 * and stay in flight across the stage wait and the MMAs (the mainloop calls this first in
 * the k-block). */
void hg_block_scales_load(hg_builder_t *b, void *ctx, hg_val_t kb, hg_val_t *f) {
  const hg_block_scales_t *s = ctx;
  const bool runs = hg_block_scales_runs(s->tile_n) > 1;
  hg_val_t k = hg_b_sext(b, hg_b_bin(b, HG_ADD, s->k_first, kb));
  hg_val_t jb = hg_b_sext(b, hg_b_bin(b, HG_SHR_U, s->n0, hg_b_i32(b, 7)));
  hg_val_t four = hg_b_i64(b, 4), sb, sb1 = HG_NONE;
  hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 1, b_scale_at(b, s->scale_b, jb, s->ldb, k, four), &sb);
  if (runs)
    hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 1,
              b_scale_at(b, s->scale_b, next_block(b, jb, s->n), s->ldb, k, four), &sb1);
  hg_val_t last = hg_b_bin(b, HG_SUB, s->m, hg_b_i32(b, 1));
  /* the k-block's column of A's scales: scale_a + 4 k lda */
  hg_val_t col = hg_b_mad(b, hg_b_bin(b, HG_MUL, k, s->lda), four, s->scale_a);
  hg_val_t sas[2 * HG_GMMA_MAX_BLOCKS];
  for (int im = 0; im < s->atoms_m; im++)
    for (int half = 0; half < 2; half++) {
      hg_val_t row =
          hg_b_bin(b, HG_ADD, s->m0, hg_b_bin(b, HG_ADD, s->row0, hg_b_i32(b, 64 * im + 8 * half)));
      row = hg_b_bin(b, HG_MIN_S, row, last);
      hg_val_t sa;
      hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 1, hg_b_mad(b, hg_b_sext(b, row), four, col), &sa);
      if (runs)
        sas[2 * im + half] = sa;
      else
        f[2 * im + half] = hg_b_bin(b, HG_FMUL, sa, sb);
    }
  if (runs) runs_factors(b, s, sas, sb, sb1, f);
}

hg_val_t hg_block_scales_group_ptr(hg_builder_t *b, hg_val_t table, hg_val_t stride,
                                   hg_val_t group) {
  if (hg_val_is_none(stride)) return table;
  return hg_b_mad(b, hg_b_bin(b, HG_MUL, hg_b_sext(b, group), stride), hg_b_i64(b, 4), table);
}

/* ---------------------------------------------------------------- staged in shared memory */

int hg_block_scales_a_rows(int tile_m, bool contiguous) {
  return tile_m + (contiguous ? 4 : 0);
}

int hg_block_scales_b_rows(int tile_n) {
  return hg_block_scales_runs(tile_n) > 1 ? 2 : 1;
}

uint32_t hg_block_scales_b_offset(int a_rows) {
  const uint32_t a = HG_BLOCK_SCALES_STAGE_ALIGN;
  return ((uint32_t)a_rows * 4u + a - 1) / a * a;
}

/* B's scales in a 128-byte slot of their own: one or two 16-byte boxes */
uint32_t hg_block_scales_stage_bytes(int a_rows) {
  return hg_block_scales_b_offset(a_rows) + HG_BLOCK_SCALES_STAGE_ALIGN;
}

/* Where B's slot starts in s's stages. */
static int b_slot(const hg_block_scales_t *s) {
  return (int)hg_block_scales_b_offset(s->tile_m + s->a_pad);
}

/* Lane l copies rows l, l + 32, ... of the tile (consecutive lanes, consecutive addresses:
 * one 128-byte line a copy instruction) and lane 0 B's scale, 4-byte cp.async each into the
 * stage at dst. Rows past M read row M - 1, as in hg_block_scales_load. */
static void side_copy(hg_builder_t *b, void *ctx, const hg_sched_work_t *w, hg_val_t kb,
                      hg_val_t lane, hg_val_t dst, hg_val_t bar) {
  (void)bar;
  const hg_block_scales_t *s = ctx;
  hg_val_t k = hg_b_sext(b, kb);
  hg_val_t four = hg_b_i64(b, 4);
  hg_val_t jb = hg_b_sext(b, hg_b_bin(b, HG_SHR_U, w->n0, hg_b_i32(b, 7)));
  /* grouped: the unit's group's tables (its rows of A's, for the masked layout) */
  hg_val_t sa = hg_block_scales_group_ptr(b, s->scale_a, s->group_a, w->batch);
  hg_val_t sbt = hg_block_scales_group_ptr(b, s->scale_b, s->group_b, w->batch);
  hg_val_t col = hg_b_mad(b, hg_b_bin(b, HG_MUL, k, s->lda), four, sa);
  hg_val_t last = hg_b_bin(b, HG_SUB, s->m, hg_b_i32(b, 1));
  hg_val_t row = hg_b_bin(b, HG_ADD, w->m0, lane);
  hg_val_t at = hg_b_mad(b, lane, hg_b_i32(b, 4), dst);
  for (int i = 0; i < s->tile_m / 32; i++) {
    hg_val_t r =
        hg_b_bin(b, HG_MIN_S, i ? hg_b_bin(b, HG_ADD, row, hg_b_i32(b, 32 * i)) : row, last);
    hg_b_cp_async(b, 4, i ? hg_b_bin(b, HG_ADD, at, hg_b_i32(b, 128 * i)) : at,
                  hg_b_mad(b, hg_b_sext(b, r), four, col), HG_NONE);
  }
  hg_b_if(b, hg_b_cmp(b, HG_EQ, lane, hg_b_i32(b, 0)));
  const int bo = b_slot(s);
  hg_b_cp_async(b, 4, hg_b_bin(b, HG_ADD, dst, hg_b_i32(b, bo)),
                b_scale_at(b, sbt, jb, s->ldb, k, four), HG_NONE);
  hg_b_endif(b);
  /* a tile of two blocks: lane 1 the next block's 16 bytes on */
  if (hg_block_scales_b_rows(s->tile_n) > 1) {
    hg_b_if(b, hg_b_cmp(b, HG_EQ, lane, hg_b_i32(b, 1)));
    hg_b_cp_async(b, 4, hg_b_bin(b, HG_ADD, dst, hg_b_i32(b, bo + 16)),
                  b_scale_at(b, sbt, next_block(b, jb, s->n), s->ldb, k, four), HG_NONE);
    hg_b_endif(b);
  }
}

/* By TMA (lane 0 alone): A's box of tile_m rows at (m0, kb) and B's of 4 k-blocks at (kb
 * rounded down to a multiple of 4, n0 / 128), two block rows for a tile of two blocks (its
 * second 16 bytes on). The boxes' other elements (B's scales of the neighbouring k-blocks)
 * are never read; rows past M and blocks past N
 * land as zeros, which multiply only rows and columns that are never stored. */
static void side_copy_tma(hg_builder_t *b, void *ctx, const hg_sched_work_t *w, hg_val_t kb,
                          hg_val_t lane, hg_val_t dst, hg_val_t bar) {
  (void)lane;
  const hg_block_scales_t *s = ctx;
  hg_val_t m0 = s->a_pad ? hg_b_bin(b, HG_AND, w->m0, hg_b_i32(b, ~3)) : w->m0;
  const hg_val_t ca[3] = {m0, kb, w->batch};
  hg_b_tma_load(b, s->tmap_a, dst, bar, s->rank_a, ca, HG_NONE, HG_NONE);
  const hg_val_t cb[3] = {hg_b_bin(b, HG_AND, kb, hg_b_i32(b, ~3)),
                          hg_b_bin(b, HG_SHR_U, w->n0, hg_b_i32(b, 7)), w->batch};
  hg_b_tma_load(b, s->tmap_b, hg_b_bin(b, HG_ADD, dst, hg_b_i32(b, b_slot(s))), bar, s->rank_b, cb,
                HG_NONE, HG_NONE);
}

hg_side_copy_t hg_block_scales_side(hg_block_scales_t *s, const hg_smem_ring_t *ring) {
  if (hg_val_is_none(s->tmap_a) || hg_val_is_none(s->tmap_b))
    return (hg_side_copy_t){.ring = ring, .ctx = s, .copy = side_copy};
  /* the two boxes' bytes (gemm_plan.c's maps: tile_m + a_pad rows of A's, 4 k-blocks by
   * hg_block_scales_b_rows block rows of B's) */
  const uint32_t b_rows = (uint32_t)hg_block_scales_b_rows(s->tile_n);
  return (hg_side_copy_t){.ring = ring,
                          .ctx = s,
                          .tma_bytes = 4u * (uint32_t)(s->tile_m + s->a_pad) + 16u * b_rows,
                          .copy = side_copy_tma};
}

void hg_block_scales_load_staged(hg_builder_t *b, void *ctx, hg_val_t kb, hg_val_t st,
                                 hg_val_t *f) {
  const hg_block_scales_t *s = ctx;
  const bool runs = hg_block_scales_runs(s->tile_n) > 1;
  hg_val_t sb, sb1 = HG_NONE;
  /* B's scale: at the slot's start, or by TMA 4 (k % 4) bytes into its box */
  hg_val_t bat = hg_b_bin(b, HG_ADD, st, hg_b_i32(b, b_slot(s)));
  if (!hg_val_is_none(s->tmap_b)) {
    hg_val_t k = hg_b_bin(b, HG_ADD, s->k_first, kb);
    bat = hg_b_mad(b, hg_b_bin(b, HG_AND, k, hg_b_i32(b, 3)), hg_b_i32(b, 4), bat);
  }
  hg_b_load(b, HG_SHARED, HG_T_F32, 0, 1, bat, &sb);
  if (runs)
    hg_b_load(b, HG_SHARED, HG_T_F32, 0, 1, hg_b_bin(b, HG_ADD, bat, hg_b_i32(b, 16)), &sb1);
  /* A's rows: the tile's first at the stage's start, or by TMA with a_pad m0 % 4 rows in */
  hg_val_t row = s->row0;
  if (!hg_val_is_none(s->tmap_a) && s->a_pad)
    row = hg_b_bin(b, HG_ADD, row, hg_b_bin(b, HG_AND, s->m0, hg_b_i32(b, 3)));
  hg_val_t at = hg_b_mad(b, row, hg_b_i32(b, 4), st);
  hg_val_t sas[2 * HG_GMMA_MAX_BLOCKS];
  for (int im = 0; im < s->atoms_m; im++)
    for (int half = 0; half < 2; half++) {
      hg_val_t sa;
      const int off = 4 * (64 * im + 8 * half);
      hg_b_load(b, HG_SHARED, HG_T_F32, 0, 1, off ? hg_b_bin(b, HG_ADD, at, hg_b_i32(b, off)) : at,
                &sa);
      if (runs)
        sas[2 * im + half] = sa;
      else
        f[2 * im + half] = hg_b_bin(b, HG_FMUL, sa, sb);
    }
  if (runs) runs_factors(b, s, sas, sb, sb1, f);
}
