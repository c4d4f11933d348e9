/* Split-K partial tiles (builders.h, hg_splitk_*): each split stores its partial sums to its
 * own slot (hg_splitk_store_tile); the reduction pass (a second kernel: hg_splitk_reduce_emit)
 * sums a tile's slots in split order and runs the epilogue on them.
 *
 * Why a second kernel and not the last split to finish: that CTA would either read every
 * slot of its tile alone (S x 32-64 KB through one SM: about 0.5 us a split on the H100) or
 * climb a tree of pairwise sums behind arrival counters (fence, atomic, re-read: about 3 us a
 * level, log2(S) levels). The pass instead hands each group of accumulator chunks of each
 * tile to its own CTA, so every SM reads a share of the partials with many loads in flight,
 * while they are still in L2; the launch costs about what the counters' memset did. */
#include <stdlib.h>
#include <string.h>

#include "hopgen/builders.h"

static hg_val_t i32(hg_builder_t *b, int32_t v) {
  return hg_b_i32(b, v);
}

size_t hg_splitk_workspace_bytes(int splits, int64_t cta_tiles, int64_t tile_elems) {
  return (size_t)cta_tiles * (size_t)splits * (size_t)tile_elems * 4;
}

hg_status_t hg_splitk_make(hg_builder_t *b, const hg_splitk_spec_t *spec, hg_splitk_t *out) {
  const int threads = 128 * (spec->pingpong ? 1 : spec->consumers);
  if (spec->splits < 2 || spec->splits > HG_SCHED_MAX_SPLITS)
    return hg_error(HG_ERR_INVALID, "split-K into %d ranges: the reduction takes 2..%d",
                    spec->splits, HG_SCHED_MAX_SPLITS);
  if (spec->acc_count < 4 || spec->acc_count % 4 != 0)
    return hg_error(HG_ERR_INVALID,
                    "split-K partials move 4 accumulators a store; %d per thread is not a "
                    "multiple of 4",
                    spec->acc_count);
  if (spec->consumers < 1 || spec->consumers > HG_MAX_CONSUMERS)
    return hg_error(HG_ERR_INVALID,
                    "split-K partial tiles are held by 1..%d consumer warpgroups, not %d",
                    HG_MAX_CONSUMERS, spec->consumers);
  if (spec->tile_m < 1 || spec->tile_n < 1 || spec->tile_k < 1 || spec->cluster_m < 1 ||
      spec->cluster_n < 1 || (!spec->pingpong && spec->tile_m % spec->consumers != 0))
    return hg_error(HG_ERR_INVALID,
                    "split-K over %dx%dx%d tiles in %dx%d clusters held by %d consumers: every "
                    "extent must be positive and the consumers must divide the tile's rows",
                    spec->tile_m, spec->tile_n, spec->tile_k, spec->cluster_m, spec->cluster_n,
                    spec->consumers);
  memset(out, 0, sizeof *out);
  out->spec = *spec;
  out->splits = spec->splits;
  out->acc_count = spec->acc_count;
  out->threads = threads;
  out->workspace = spec->workspace;
  if (spec->atomic && spec->scatter)
    return hg_error(HG_ERR_INVALID,
                    "split-K both by atomic adds and reduced in the GEMM: the spec takes one");
  if (spec->scatter && spec->pingpong)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "split-K reduced in the GEMM with ping-pong consumers: the splits of a tile "
                    "wait for each other, one tile a CTA");
  /* split-K by atomics: the arrival count read back by the tile's threads (one word per
   * ping-pong consumer) */
  if (spec->atomic) out->arrival_smem = hg_b_smem_reserve(b, 16, 16);
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

hg_val_t hg_splitk_thread(hg_builder_t *b, const hg_splitk_t *s, const hg_roles_t *r) {
  return s->spec.pingpong ? r->wg_tid : hg_b_mad(b, r->consumer, i32(b, 128), r->wg_tid);
}

/* Chunk c of a consumer thread's accumulators (acc[4c..4c+3], one 16-byte store) holds a row
 * of D when its first row, the thread's first row + the chunk's smallest row offset in the
 * map, is one (rows_left = M - the thread's first row): -> PRED. Rows past D (63 of 64 for
 * the M = 1 of a decode step) are neither stored nor read back. Columns are not tested: a
 * predicate per chunk on both spilled on 128-row mma.sync tiles, and a tile has few columns
 * past N. */
hg_val_t hg_splitk_chunk_keep(hg_builder_t *b, const hg_acc_map_t *am, hg_val_t rows_left, int c) {
  int dm = -1;
  for (int i = 0; i < am->rows && dm < 0; i++)
    for (int j = 0; j < am->cols; j++) {
      const int v = hg_acc_map_at(am, i, j);
      if (v >= 4 * c && v < 4 * c + 4) dm = i;
    }
  if (dm < 0) {
    hg_builder_fail(b,
                    hg_error(HG_ERR_INVALID, "accumulator chunk %d has no place in the %dx%d map",
                             c, am->rows, am->cols));
    return hg_b_pred(b, false);
  }
  return hg_b_cmp(b, HG_LT_S, i32(b, dm), rows_left);
}

/* The CTA-tile grid the slots are indexed over: the cluster tiles' CTAs along M and N. */
static void cta_tiles(hg_builder_t *b, const hg_splitk_spec_t *c, hg_val_t m, hg_val_t n,
                      hg_val_t *tiles_m, hg_val_t *tiles_n) {
  for (int i = 0; i < 2; i++) {
    const int span = i ? c->tile_n * c->cluster_n : c->tile_m * c->cluster_m;
    hg_val_t ext = i ? n : m;
    hg_val_t t = hg_b_bin(b, HG_DIV_U, hg_b_bin(b, HG_ADD, ext, i32(b, span - 1)), i32(b, span));
    *(i ? tiles_n : tiles_m) = hg_b_bin(b, HG_MUL, t, i32(b, i ? c->cluster_n : c->cluster_m));
  }
}

hg_status_t hg_splitk_store_tile(hg_builder_t *b, const hg_splitk_t *s, const hg_acc_map_t *am,
                                 const hg_sched_work_t *w, hg_val_t m, hg_val_t n, hg_val_t row0,
                                 hg_val_t thread, const hg_val_t *acc) {
  hg_val_t tm, tn;
  cta_tiles(b, &s->spec, m, n, &tm, &tn);
  hg_val_t tile = hg_splitk_tile(b, w->batch, w->m0, w->n0, s->spec.tile_m, s->spec.tile_n, tm, tn);
  hg_b_comment(b, "split-K: this split's partial tile to its slot");
  hg_val_t at = hg_splitk_slot(b, s, tile, w->split, thread);
  hg_val_t rows_left = hg_b_bin(b, HG_SUB, m, row0);
  for (int c = 0; c < s->acc_count / 4; c++) {
    hg_b_if(b, hg_splitk_chunk_keep(b, am, rows_left, c));
    hg_splitk_store(b, s, at, c, &acc[4 * c]);
    hg_b_endif(b);
  }
  return hg_builder_status(b);
}

/* Chunks a CTA of the reduction pass sums: one, or enough that a tile takes at most 16
 * CTAs (each group is a copy of the sum and the epilogue in the code). */
static int reduce_chunks(int acc_count) {
  const int chunks = acc_count / 4;
  int q = 1;
  while (chunks / q > 16 && chunks % (2 * q) == 0) q *= 2;
  return q;
}

int hg_splitk_reduce_groups(int acc_count) {
  return acc_count / 4 / reduce_chunks(acc_count);
}

/* CTA (tile, group) of a grid (CTA tiles, groups) sums the tile's partials for its group of
 * accumulator chunks, in split order, and runs the epilogue on them. Its threads stand for
 * the GEMM's consumer threads one to one (the slots' order), so the accumulator map and the
 * epilogue are the GEMM's, cropped to the group's values. */
hg_status_t hg_splitk_reduce_emit(hg_builder_t *b, const hg_splitk_t *s, const hg_tiled_mma_t *tm,
                                  hg_epilogue_t *e, const hg_roles_t *r, hg_val_t m, hg_val_t n,
                                  hg_val_t k) {
  const hg_splitk_spec_t *c = &s->spec;
  const bool pp = c->pingpong;
  const int rows = pp ? c->tile_m : c->tile_m / c->consumers;
  const int chunks = s->acc_count / 4, q = reduce_chunks(s->acc_count);
  hg_b_comment(b, "split-K reduction pass: one group of accumulator chunks of one tile");
  /* launched as the GEMM's programmatic dependent: its partials are complete and visible
   * only past this wait */
  hg_b_griddep_wait(b);
  hg_acc_map_t am, crop = {0};
  HG_TRY(hg_acc_map_make(tm, rows, &am));
  hg_val_t thread = hg_splitk_thread(b, s, r);
  hg_val_t t_row, t_col;
  hg_status_t st = hg_acc_thread_origin(b, tm, thread, &t_row, &t_col);
  crop.rows = am.rows;
  crop.cols = am.cols;
  crop.v = malloc(sizeof(int) * (size_t)am.rows * (size_t)am.cols);
  hg_val_t *keep = malloc(sizeof(hg_val_t) * (size_t)q);
  hg_val_t *sum = malloc(sizeof(hg_val_t) * 4 * (size_t)q);
  if (hg_is_ok(&st) && (!crop.v || !keep || !sum))
    st = hg_error(HG_ERR_NOMEM, "out of memory for the split-K reduction pass");
  if (hg_is_ok(&st)) {
    hg_val_t tiles_m, tiles_n;
    cta_tiles(b, c, m, n, &tiles_m, &tiles_n);
    /* blockIdx.x -> (batch, CTA tile along M, along N), row-major as hg_splitk_tile counts */
    hg_val_t tile32 = hg_b_sreg(b, HG_CTAID_X), group = hg_b_sreg(b, HG_CTAID_Y);
    hg_val_t tn = hg_b_bin(b, HG_REM_U, tile32, tiles_n);
    hg_val_t rest = hg_b_bin(b, HG_DIV_U, tile32, tiles_n);
    hg_val_t tmi = hg_b_bin(b, HG_REM_U, rest, tiles_m);
    hg_val_t batch = hg_b_bin(b, HG_DIV_U, rest, tiles_m);
    hg_val_t m0 = hg_b_bin(b, HG_MUL, tmi, i32(b, c->tile_m));
    hg_val_t n0 = hg_b_bin(b, HG_MUL, tn, i32(b, c->tile_n));
    hg_val_t tile = hg_b_sext(b, tile32);
    hg_val_t kblocks =
        hg_b_bin(b, HG_DIV_U, hg_b_bin(b, HG_ADD, k, i32(b, c->tile_k - 1)), i32(b, c->tile_k));
    hg_val_t splits = hg_b_bin(b, HG_MIN_S, i32(b, c->splits), kblocks);
    hg_val_t wm = pp ? i32(b, 0) : r->consumer;
    hg_val_t row0 = hg_b_bin(b, HG_ADD, m0, t_row), col0 = hg_b_bin(b, HG_ADD, n0, t_col);
    hg_val_t m_base = hg_b_bin(b, HG_ADD, m0, hg_b_bin(b, HG_MUL, wm, i32(b, rows)));
    hg_epilogue_begin(b, e);
    /* CTA tiles past D (a cluster's CTAs beyond M or N) have nothing to sum */
    hg_b_if(b, hg_b_bin(b, HG_AND, hg_b_cmp(b, HG_LT_S, m0, m), hg_b_cmp(b, HG_LT_S, n0, n)));
    hg_val_t rows_left = hg_b_bin(b, HG_SUB, m, row0);
    for (int gi = 0; gi * q < chunks && hg_is_ok(&st); gi++) {
      hg_b_if(b, hg_b_cmp(b, HG_EQ, group, i32(b, gi)));
      for (int i = 0; i < 4 * q; i++) sum[i] = hg_b_var(b, HG_T_F32, HG_NONE);
      for (int i = 0; i < q; i++) keep[i] = hg_splitk_chunk_keep(b, &am, rows_left, gi * q + i);
      hg_splitk_sum(b, s, tile, splits, thread, gi * q, q, keep, sum);
      /* the map cropped to the group's values, renumbered from 0 */
      for (int i = 0; i < am.rows * am.cols; i++) {
        const int v = am.v[i];
        crop.v[i] = v >= 4 * gi * q && v < 4 * (gi + 1) * q ? v - 4 * gi * q : -1;
      }
      st = hg_epilogue_emit(b, e, sum, &crop, row0, col0, m_base, n0, batch, r);
      hg_b_endif(b);
    }
    hg_b_endif(b);
    /* every thread: the amax's warp reductions need whole warps */
    hg_epilogue_drain(b, e, r);
  }
  free(crop.v);
  free(keep);
  free(sum);
  hg_acc_map_free(&am);
  return hg_is_ok(&st) ? hg_builder_status(b) : st;
}

/* ---------------------------------------------------------------- split-K by atomic adds
 *
 * builders.h describes the protocol. Why a slot per tile added into, and not a slot per split
 * read back by the last CTA: the additions happen in L2 as the splits finish (red.global.add,
 * 16 bytes a thread, nothing returned), so the last CTA reads one tile, not S of them, and
 * the sums need neither a second launch nor the reduction pass's S x tile of traffic. The
 * price is the order of the additions: whichever split arrives first adds first. */

size_t hg_splitk_atomic_workspace_bytes(int64_t cta_tiles, int64_t tile_elems) {
  return (size_t)cta_tiles * ((size_t)tile_elems * 4 + HG_SPLITK_COUNTER_BYTES);
}

/* The barrier of the threads holding one tile (s's, or stream-K's slots'): a ping-pong
 * consumer's warpgroup, or every consumer warpgroup of a cooperative tile. */
static void tile_sync(hg_builder_t *b, const hg_splitk_t *s, const hg_roles_t *r) {
  if (s->spec.pingpong)
    hg_roles_consumer_sync(b, r);
  else
    hg_b_bar_sync(b, HG_BAR_CONSUMERS, s->threads);
}

hg_val_t hg_splitk_add_tile(hg_builder_t *b, const hg_splitk_t *s, const hg_acc_map_t *am,
                            const hg_sched_work_t *w, hg_val_t m, hg_val_t n, hg_val_t splits,
                            hg_val_t row0, const hg_roles_t *r, hg_val_t *acc) {
  const hg_splitk_spec_t *c = &s->spec;
  const int64_t slot_bytes = (int64_t)s->threads * s->acc_count * 4;
  const int64_t step = (int64_t)s->threads * 16;
  if (!c->atomic) {
    hg_builder_fail(b, hg_error(HG_ERR_INVALID,
                                "hg_splitk_add_tile on a split-K made for the reduction pass "
                                "(spec.atomic is false: its workspace has no counters)"));
    return hg_b_pred(b, false);
  }
  hg_val_t tm, tn;
  cta_tiles(b, c, m, n, &tm, &tn);
  hg_val_t tile = hg_splitk_tile(b, w->batch, w->m0, w->n0, c->tile_m, c->tile_n, tm, tn);
  hg_val_t thread = hg_splitk_thread(b, s, r);
  /* the tile's region: its slot, then its arrival counter */
  hg_val_t region =
      hg_b_mad(b, tile, hg_b_i64(b, slot_bytes + HG_SPLITK_COUNTER_BYTES), s->workspace);
  hg_val_t at = hg_b_mad(b, hg_b_sext(b, thread), hg_b_i64(b, 16), region);
  hg_val_t counter = hg_b_bin(b, HG_ADD, region, hg_b_i64(b, slot_bytes));
  hg_val_t rows_left = hg_b_bin(b, HG_SUB, m, row0);
  hg_b_comment(b, "split-K: this split's partial tile added into the tile's slot");
  for (int ch = 0; ch < s->acc_count / 4; ch++) {
    hg_b_if(b, hg_splitk_chunk_keep(b, am, rows_left, ch));
    hg_b_atomic_add_f32v(b, hg_b_bin(b, HG_ADD, at, hg_b_i64(b, ch * step)), 4, &acc[4 * ch]);
    hg_b_endif(b);
  }
  /* every tile thread's additions, then one release and the arrival (as stream-K's flags:
   * fence.acq_rel.gpu orders what the barrier made this thread observe before the atomic);
   * the count goes to the tile's threads through shared memory */
  tile_sync(b, s, r);
  hg_val_t word = hg_b_smem_addr(b, s->arrival_smem);
  if (c->pingpong) word = hg_b_mad(b, r->consumer, i32(b, 4), word);
  hg_splitk_count_arrival(b, hg_b_cmp(b, HG_EQ, thread, i32(b, 0)), counter,
                          hg_b_bin(b, HG_SUB, splits, i32(b, 1)), word);
  tile_sync(b, s, r);
  hg_val_t got;
  hg_b_load(b, HG_SHARED, HG_T_I32, 0, 1, word, &got);
  hg_val_t last = hg_b_cmp(b, HG_EQ, got, hg_b_bin(b, HG_SUB, splits, i32(b, 1)));
  hg_b_comment(b, "split-K: the last split takes the tile's sums and leaves the slot zeroed");
  hg_b_if(b, last);
  hg_val_t zeros[4];
  for (int e = 0; e < 4; e++) zeros[e] = hg_b_f32(b, 0.0f);
  for (int ch = 0; ch < s->acc_count / 4; ch++) {
    hg_b_if(b, hg_splitk_chunk_keep(b, am, rows_left, ch));
    hg_val_t chunk = hg_b_bin(b, HG_ADD, at, hg_b_i64(b, ch * step)), v[4];
    hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 4, chunk, v);
    for (int e = 0; e < 4; e++) hg_b_assign(b, acc[4 * ch + e], v[e]);
    hg_b_store(b, HG_GLOBAL, 0, 4, chunk, zeros);
    hg_b_endif(b);
  }
  hg_b_endif(b);
  return last;
}

void hg_splitk_count_arrival(hg_builder_t *b, hg_val_t leader, hg_val_t counter, hg_val_t last,
                             hg_val_t word) {
  hg_b_if(b, leader);
  {
    hg_b_fence_gpu(b);
    hg_val_t old = hg_b_atomic_add_u32(b, counter, i32(b, 1));
    hg_b_store(b, HG_SHARED, 32, 1, word, &old);
    /* the last arrival: acquire the others' additions, and the counter back to zero for
     * the next launch (nothing else touches it in this one) */
    hg_b_if(b, hg_b_cmp(b, HG_EQ, old, last));
    hg_b_fence_gpu(b);
    hg_val_t zero = i32(b, 0);
    hg_b_store(b, HG_GLOBAL, 32, 1, counter, &zero);
    hg_b_endif(b);
  }
  hg_b_endif(b);
}

/* ---------------------------------------------------------------- split-K in the GEMM
 *
 * builders.h describes the protocol. Why every split waits and then sums a share, and not
 * the last split alone: the last would read S slots through one SM (bench/RESULTS.md: about
 * 0.5 us a split); shared, each split's SM reads 1/S of them, S slots of its share with all
 * its loads in flight, as the reduction pass's CTAs do, without the pass's launch. */

size_t hg_splitk_scatter_counter_bytes(int64_t cta_tiles) {
  return ((size_t)cta_tiles * 4 + 255) & ~(size_t)255;
}

/* The counters' region in the kernel: CTA tiles x 4 bytes, rounded up to 256 (as the host's
 * hg_splitk_scatter_counter_bytes), from the tile grid and the batch count. */
static hg_val_t scatter_counter_bytes(hg_builder_t *b, hg_val_t tiles_m, hg_val_t tiles_n,
                                      hg_val_t batches) {
  hg_val_t t =
      hg_b_bin(b, HG_MUL, hg_b_bin(b, HG_MUL, hg_b_sext(b, tiles_m), hg_b_sext(b, tiles_n)),
               hg_b_sext(b, batches));
  return hg_b_bin(b, HG_AND, hg_b_mad(b, t, hg_b_i64(b, 4), hg_b_i64(b, 255)),
                  hg_b_i64(b, ~(int64_t)255));
}

int hg_splitk_scatter_group_chunks(int acc_count, int splits) {
  const int chunks = acc_count / 4;
  int q = 1;
  while (chunks % (2 * q) == 0 && chunks / (2 * q) >= splits && 2 * q <= 4) q *= 2;
  return q;
}

hg_val_t hg_splitk_scatter_arrive(hg_builder_t *b, const hg_splitk_t *s, const hg_acc_map_t *am,
                                  const hg_sched_work_t *w, hg_val_t m, hg_val_t n,
                                  hg_val_t batches, hg_val_t splits, hg_val_t row0,
                                  const hg_roles_t *r, const hg_val_t *acc, hg_splitk_t *slots) {
  const hg_splitk_spec_t *c = &s->spec;
  *slots = *s;
  if (!c->scatter) {
    hg_builder_fail(b, hg_error(HG_ERR_INVALID,
                                "hg_splitk_scatter_arrive on a split-K not made for it "
                                "(spec.scatter is false: its workspace has no counters)"));
    return hg_b_i64(b, 0);
  }
  hg_val_t tm, tn;
  cta_tiles(b, c, m, n, &tm, &tn);
  hg_val_t tile = hg_splitk_tile(b, w->batch, w->m0, w->n0, c->tile_m, c->tile_n, tm, tn);
  slots->workspace = hg_b_bin(b, HG_ADD, s->workspace, scatter_counter_bytes(b, tm, tn, batches));
  slots->spec.workspace = slots->workspace;
  hg_val_t thread = hg_splitk_thread(b, s, r);
  hg_b_comment(b, "split-K in the GEMM: this split's partial tile to its slot");
  hg_val_t at = hg_splitk_slot(b, slots, tile, w->split, thread);
  hg_val_t rows_left = hg_b_bin(b, HG_SUB, m, row0);
  for (int ch = 0; ch < s->acc_count / 4; ch++) {
    hg_b_if(b, hg_splitk_chunk_keep(b, am, rows_left, ch));
    hg_splitk_store(b, slots, at, ch, &acc[4 * ch]);
    hg_b_endif(b);
  }
  /* every tile thread's stores, then one release and the arrival; the spin's reads are
   * atomic (relaxed), the fence after it the acquire (as stream-K's flags) */
  tile_sync(b, s, r);
  hg_b_comment(b, "split-K in the GEMM: arrive, wait for the tile's other splits, depart");
  hg_val_t counter = hg_b_mad(b, tile, hg_b_i64(b, 4), s->workspace);
  hg_b_if(b, hg_b_cmp(b, HG_EQ, thread, i32(b, 0)));
  {
    hg_b_fence_gpu(b);
    hg_b_atomic_add_u32(b, counter, i32(b, 1));
    hg_b_loop(b);
    {
      hg_val_t v = hg_b_atomic_add_u32(b, counter, i32(b, 0));
      hg_b_break_if(b, hg_b_cmp(b, HG_GE_S, hg_b_bin(b, HG_AND, v, i32(b, 0xFFFF)), splits));
    }
    hg_b_endloop(b);
    hg_b_fence_gpu(b);
    hg_val_t old = hg_b_atomic_add_u32(b, counter, i32(b, 0x10000));
    /* the last to depart: every split has stopped reading the word */
    hg_b_if(b, hg_b_cmp(b, HG_EQ, hg_b_bin(b, HG_SHR_U, old, i32(b, 16)),
                        hg_b_bin(b, HG_SUB, splits, i32(b, 1))));
    hg_val_t zero = i32(b, 0);
    hg_b_store(b, HG_GLOBAL, 32, 1, counter, &zero);
    hg_b_endif(b);
  }
  hg_b_endif(b);
  tile_sync(b, s, r);
  return tile;
}

/* ---------------------------------------------------------------- stream-K's fix-up
 *
 * builders.h describes the protocol. Why flags per CTA and not per tile: a CTA's range
 * starts inside at most one tile, so it publishes at most one partial; a slot and a flag per
 * CTA need no counting, and the finishing CTA knows whom to wait for from the partition
 * alone (the later clusters whose ranges start inside its tile). */

size_t hg_streamk_flag_bytes(int64_t ctas) {
  return ((size_t)ctas * 4 + 255) & ~(size_t)255;
}

size_t hg_streamk_workspace_bytes(int64_t ctas, int64_t tile_elems) {
  return hg_streamk_flag_bytes(ctas) + (size_t)ctas * (size_t)tile_elems * 4;
}

hg_status_t hg_streamk_make(hg_builder_t *b, const hg_streamk_spec_t *spec, hg_streamk_t *out) {
  if (spec->acc_count < 4 || spec->acc_count % 4 != 0)
    return hg_error(HG_ERR_INVALID,
                    "stream-K partials move 4 accumulators a store; %d per thread is not a "
                    "multiple of 4",
                    spec->acc_count);
  if (spec->consumers < 1 || spec->consumers > HG_MAX_CONSUMERS)
    return hg_error(HG_ERR_INVALID,
                    "stream-K partial tiles are held by 1..%d consumer warpgroups, not %d",
                    HG_MAX_CONSUMERS, spec->consumers);
  memset(out, 0, sizeof *out);
  out->spec = *spec;
  out->flags = spec->workspace;
  /* the slots past the flags: nctaid x 4 bytes rounded up to 256 */
  hg_val_t n = hg_b_sext(b, hg_b_sreg(b, HG_NCTAID_X));
  hg_val_t fb = hg_b_bin(b, HG_AND, hg_b_mad(b, n, hg_b_i64(b, 4), hg_b_i64(b, 255)),
                         hg_b_i64(b, ~(int64_t)255));
  out->slots = (hg_splitk_t){.spec = {.splits = 1,
                                      .acc_count = spec->acc_count,
                                      .consumers = spec->consumers,
                                      .pingpong = spec->pingpong},
                             .splits = 1,
                             .acc_count = spec->acc_count,
                             .threads = 128 * (spec->pingpong ? 1 : spec->consumers),
                             .workspace = hg_b_bin(b, HG_ADD, spec->workspace, fb)};
  out->slots.spec.workspace = out->slots.workspace;
  return hg_builder_status(b);
}

static hg_val_t flag_at(hg_builder_t *b, const hg_streamk_t *k, hg_val_t cta) {
  return hg_b_mad(b, hg_b_sext(b, cta), hg_b_i64(b, 4), k->flags);
}

void hg_streamk_publish(hg_builder_t *b, const hg_streamk_t *k, const hg_acc_map_t *am,
                        const hg_roles_t *r, hg_val_t m, hg_val_t row0, hg_val_t *acc) {
  hg_b_comment(b, "stream-K: this CTA's partial tile to its slot, then its flag raised");
  hg_val_t thread = hg_splitk_thread(b, &k->slots, r);
  hg_val_t cta = hg_b_sreg(b, HG_CTAID_X);
  hg_val_t at = hg_splitk_slot(b, &k->slots, hg_b_sext(b, cta), i32(b, 0), thread);
  hg_val_t rows_left = hg_b_bin(b, HG_SUB, m, row0);
  for (int c = 0; c < k->spec.acc_count / 4; c++) {
    hg_b_if(b, hg_splitk_chunk_keep(b, am, rows_left, c));
    hg_splitk_store(b, &k->slots, at, c, &acc[4 * c]);
    hg_b_endif(b);
  }
  /* every tile thread's stores, then one release: fence.acq_rel.gpu orders what the barrier
   * made this thread observe before the flag's write (PTX ISA, memory consistency model:
   * release pattern) */
  tile_sync(b, &k->slots, r);
  hg_b_if(b, hg_b_cmp(b, HG_EQ, thread, i32(b, 0)));
  hg_b_fence_gpu(b);
  hg_b_atomic_add_u32(b, flag_at(b, k, cta), i32(b, 1));
  hg_b_endif(b);
}

void hg_streamk_fixup(hg_builder_t *b, const hg_streamk_t *k, const hg_sched_t *s,
                      const hg_sched_work_t *w, const hg_acc_map_t *am, const hg_roles_t *r,
                      hg_val_t m, hg_val_t row0, hg_val_t *acc) {
  hg_b_comment(b, "stream-K: the later clusters' partials of this tile, in cluster order");
  const hg_cluster2d_t *cl = s->cluster;
  const int cs = cl->m * cl->n;
  hg_val_t thread = hg_splitk_thread(b, &k->slots, r);
  hg_val_t rows_left = hg_b_bin(b, HG_SUB, m, row0);
  hg_val_t kb = hg_b_sext(b, s->kblocks);
  /* the tile's iterations end at (tile + 1) kb; a unit at k-block 0 that ends before it */
  hg_val_t tile_end = hg_b_mad(b, hg_b_sext(b, w->tile), kb, kb);
  hg_b_if(b, hg_b_cmp(b, HG_LT_S, w->k_count, s->kblocks));
  hg_val_t c = hg_b_var(b, HG_T_I32, hg_b_bin(b, HG_ADD, cl->id, i32(b, 1)));
  hg_b_loop(b);
  {
    hg_b_break_if(b, hg_b_cmp(b, HG_GE_S, c, cl->count));
    hg_val_t first = hg_sched_streamk_start(b, s, c);
    hg_b_break_if(b, hg_b_cmp(b, HG_GE_S, first, tile_end));
    /* a cluster with an empty range (more clusters than iterations) published nothing */
    hg_val_t next = hg_sched_streamk_start(b, s, hg_b_bin(b, HG_ADD, c, i32(b, 1)));
    hg_b_if(b, hg_b_cmp(b, HG_LT_S, first, next));
    {
      /* the same rank of cluster c: the CTA that computed the same CTA tile */
      hg_val_t cta =
          cs == 1 ? hg_b_bin(b, HG_ADD, c, i32(b, 0)) : hg_b_mad(b, c, i32(b, cs), cl->rank);
      hg_val_t flag = flag_at(b, k, cta);
      hg_b_if(b, hg_b_cmp(b, HG_EQ, thread, i32(b, 0)));
      hg_b_loop(b);
      hg_b_break_if(b, hg_b_cmp(b, HG_NE, hg_b_atomic_add_u32(b, flag, i32(b, 0)), i32(b, 0)));
      hg_b_endloop(b);
      /* acquire (relaxed read, then the fence), and the flag back to 0 for the next launch */
      hg_b_fence_gpu(b);
      hg_val_t zero = i32(b, 0);
      hg_b_store(b, HG_GLOBAL, 32, 1, flag, &zero);
      hg_b_endif(b);
      tile_sync(b, &k->slots, r);
      hg_val_t at = hg_splitk_slot(b, &k->slots, hg_b_sext(b, cta), i32(b, 0), thread);
      const int64_t step = (int64_t)k->slots.threads * 16;
      for (int ch = 0; ch < k->spec.acc_count / 4; ch++) {
        hg_b_if(b, hg_splitk_chunk_keep(b, am, rows_left, ch));
        hg_val_t got[4];
        hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 4, hg_b_bin(b, HG_ADD, at, hg_b_i64(b, ch * step)),
                  got);
        for (int e = 0; e < 4; e++)
          hg_b_assign(b, acc[4 * ch + e], hg_b_bin(b, HG_FADD, acc[4 * ch + e], got[e]));
        hg_b_endif(b);
      }
    }
    hg_b_endif(b);
    hg_b_assign(b, c, hg_b_bin(b, HG_ADD, c, i32(b, 1)));
  }
  hg_b_endloop(b);
  hg_b_endif(b);
}
