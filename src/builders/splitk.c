/* Split-K partial tiles (builders.h, hg_splitk_*): each split stores its partial sums to its
 * own slot; the reduction pass (a second kernel, gemm_gen.c) sums a tile's slots in split
 * order.
 *
 * Why a second kernel and not the last split to finish: that CTA would either read every
 * slot of its tile alone (S x 32-64 KB through one SM: about 0.5 us a split on the H100) or
 * climb a tree of pairwise sums behind arrival counters (fence, atomic, re-read: about 3 us a
 * level, log2(S) levels). The pass instead hands each group of accumulator chunks of each
 * tile to its own CTA, so every SM reads a share of the partials with many loads in flight,
 * while they are still in L2; the launch costs about what the counters' memset did. */
#include <string.h>

#include "hopgen/builders.h"

static hg_val_t i32(hg_builder_t *b, int32_t v) {
  return hg_b_i32(b, v);
}

size_t hg_splitk_workspace_bytes(int splits, int64_t cta_tiles, int64_t tile_elems) {
  return (size_t)cta_tiles * (size_t)splits * (size_t)tile_elems * 4;
}

hg_status_t hg_splitk_make(hg_builder_t *b, int splits, int acc_count, int threads,
                           hg_val_t workspace, hg_splitk_t *out) {
  if (splits < 2 || splits > HG_SCHED_MAX_SPLITS)
    return hg_error(HG_ERR_INVALID, "split-K into %d ranges: the reduction takes 2..%d", splits,
                    HG_SCHED_MAX_SPLITS);
  if (acc_count < 4 || acc_count % 4 != 0)
    return hg_error(HG_ERR_INVALID,
                    "split-K partials move 4 accumulators a store; %d per thread is not a "
                    "multiple of 4",
                    acc_count);
  if (threads < 128 || threads % 128 != 0)
    return hg_error(HG_ERR_INVALID,
                    "split-K partial tiles are held by whole warpgroups; %d threads are not",
                    threads);
  memset(out, 0, sizeof *out);
  out->splits = splits;
  out->acc_count = acc_count;
  out->threads = threads;
  out->workspace = workspace;
  return hg_builder_status(b);
}

hg_val_t hg_splitk_tile(hg_builder_t *b, hg_val_t batch, hg_val_t m0, hg_val_t n0, int tile_m,
                        int tile_n, hg_val_t tiles_m, hg_val_t tiles_n) {
  hg_val_t tm = hg_b_bin(b, HG_DIV_U, m0, i32(b, tile_m));
  hg_val_t tn = hg_b_bin(b, HG_DIV_U, n0, i32(b, tile_n));
  hg_val_t row = hg_b_mad(b, hg_b_sext(b, batch), hg_b_sext(b, tiles_m), hg_b_sext(b, tm));
  return hg_b_mad(b, row, hg_b_sext(b, tiles_n), hg_b_sext(b, tn));
}

hg_val_t hg_splitk_slot(hg_builder_t *b, const hg_splitk_t *s, hg_val_t tile, hg_val_t split,
                        hg_val_t thread) {
  const int64_t slot_bytes = (int64_t)s->threads * s->acc_count * 4;
  hg_val_t slot = hg_b_mad(b, tile, hg_b_i64(b, s->splits), hg_b_sext(b, split));
  return hg_b_mad(b, slot, hg_b_i64(b, slot_bytes),
                  hg_b_mad(b, hg_b_sext(b, thread), hg_b_i64(b, 16), s->workspace));
}

void hg_splitk_store(hg_builder_t *b, const hg_splitk_t *s, hg_val_t at, int c,
                     const hg_val_t *vals) {
  const int64_t step = (int64_t)s->threads * 16;
  hg_b_store(b, HG_GLOBAL, 0, 4, hg_b_bin(b, HG_ADD, at, hg_b_i64(b, c * step)), vals);
}

void hg_splitk_sum(hg_builder_t *b, const hg_splitk_t *s, hg_val_t tile, hg_val_t splits,
                   hg_val_t thread, int first, int chunks, const hg_val_t *keep, hg_val_t *sum) {
  hg_b_comment(b, "split-K: the tile's partials summed in split order");
  const int64_t slot_bytes = (int64_t)s->threads * s->acc_count * 4;
  const int64_t step = (int64_t)s->threads * 16;
  /* Loads in flight per round: a round reads `batch` slots of every chunk (4 x chunks x batch
   * registers), then adds them in order. L2's latency, not its bandwidth, bounds one CTA:
   * 16 outstanding 16-byte loads a thread keep it busy. */
  int batch = 16 / chunks;
  if (batch < 1) batch = 1;
  if (batch > s->splits) batch = s->splits;
  for (int i = 0; i < 4 * chunks; i++) hg_b_assign(b, sum[i], hg_b_f32(b, 0.0f));
  hg_val_t base = hg_splitk_slot(b, s, tile, i32(b, 0), thread);
  hg_val_t r = hg_b_for(b, i32(b, 0), splits, i32(b, batch));
  {
    hg_val_t v[16][4];
    hg_val_t at = hg_b_mad(b, hg_b_sext(b, r), hg_b_i64(b, slot_bytes), base);
    for (int c = 0; c < chunks; c++) {
      if (keep && !hg_val_is_none(keep[c])) hg_b_if(b, keep[c]);
      hg_val_t chunk = hg_b_bin(b, HG_ADD, at, hg_b_i64(b, (first + c) * step));
      for (int j = 0; j < batch; j++) {
        /* slot r + j exists when r + j < splits; absent slots add nothing */
        hg_val_t in = hg_b_cmp(b, HG_LT_S, hg_b_bin(b, HG_ADD, r, i32(b, j)), splits);
        hg_val_t tmp[4];
        for (int e = 0; e < 4; e++) tmp[e] = hg_b_var(b, HG_T_F32, hg_b_f32(b, 0.0f));
        hg_b_if(b, in);
        hg_val_t got[4];
        hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 4,
                  hg_b_bin(b, HG_ADD, chunk, hg_b_i64(b, (int64_t)j * slot_bytes)), got);
        for (int e = 0; e < 4; e++) hg_b_assign(b, tmp[e], got[e]);
        hg_b_endif(b);
        for (int e = 0; e < 4; e++) v[j][e] = tmp[e];
      }
      /* in split order: ((s0 + s1) + s2) + ... */
      for (int j = 0; j < batch; j++)
        for (int e = 0; e < 4; e++)
          hg_b_assign(b, sum[4 * c + e], hg_b_bin(b, HG_FADD, sum[4 * c + e], v[j][e]));
      if (keep && !hg_val_is_none(keep[c])) hg_b_endif(b);
    }
  }
  hg_b_endfor(b);
}
