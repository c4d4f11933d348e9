/* Tile schedulers (builders.h): which output tiles (and which of their k-blocks) a cluster
 * computes, in which order. Producer and consumers walk the same sequence, so each side
 * calls the same scheduler and stays in step with the other through the stage ring.
 *
 * The persistent scheduler: the grid is as many clusters as run at once; cluster c takes
 * units c, c + clusters, ... A unit is a cluster tile (cluster_m x cluster_n CTA tiles) of one
 * batch; consecutive units walk a band of raster_group cluster tiles along one dimension
 * before moving along the other, so the ~SM-count tiles in flight share A rows and B
 * columns in L2. The unit's coordinates come from layouts over the run-time extents
 * (dlayout.h: idx2crd and crd2idx with the counts as dynamic leaves), not from restated
 * div/mod formulas; tests/builders/test_sched.c checks them against a walk of the order.
 * Split-K (spec.splits > 1) makes each cluster tile min(splits, k-blocks) units, each with a
 * contiguous range of k-blocks: split s takes [s kb / S, (s + 1) kb / S), never empty since
 * S <= kb. The units come in one of two orders, chosen at run time (split_major):
 * tile-major, the splits of a tile consecutive (unit = tile x S + split), or split-major, a
 * batch's tiles in raster order at split 0, then at split 1, ... (unit = (batch x S + split)
 * x per_batch + tile in batch). Split-major where the cluster tiles are 2 or more along both
 * M and N: consecutive units, which the hardware starts together on neighbouring SMs, then
 * read the same k-range of shared A rows and B columns, and the split-K shapes ran 6-18%
 * faster on both cards (512x512x16384 bf16 +17-18%, 192x320x40000 +10%; bench/RESULTS.md,
 * twelfth session); with one tile row (decode: M <= 64) it was 1-4% slower, and stays
 * tile-major, where neighbours stream adjacent k-ranges of the same weight rows. The
 * grouped scheduler hands out per-group extents through the same hg_sched_work_t.
 * hg_sched_prepare turns the run-time divisions of that index math into multiplies and
 * shifts by divisors prepared once (hg_divisor_t), the same coordinates: the consumers call
 * it, the producer (one thread, running stages ahead) keeps the plain form.
 *
 * Stream-K (spec.stream_k): of T cluster tiles on G clusters, the first S tiles of the order
 * are shared in k-blocks and the rest, a multiple of G, are whole tiles taken round-robin
 * (data-parallel waves). S = 0 when G divides T, T when T < G, else T mod G + G: the partial
 * wave joined by one full wave, so each cluster's share is 1 to 2 tiles of k-blocks (a lone
 * partial wave would give each cluster a sliver and each tile many contributors). The S x kb
 * iterations (tile = i / kb, k-block = i mod kb) are cut into G contiguous ranges, cluster c
 * taking [c I / G, (c + 1) I / G); its units are the pieces of its range in each tile, then
 * its whole tiles S + c, S + c + G, ... A cluster shares first, so the clusters whose
 * partials a tile waits for (the later ones, which start their ranges with it) wrote them
 * at their start: the holder of k-block 0 reaches that tile last in its own range. */
#include <string.h>

#include "hopgen/builders.h"
#include "hopgen/dlayout.h"

static hg_val_t i32(hg_builder_t *b, int32_t v) {
  return hg_b_i32(b, v);
}

static hg_status_t check_spec(const hg_sched_spec_t *s) {
  if (s->kind != HG_SCHED_PERSISTENT && s->kind != HG_SCHED_GROUPED)
    return hg_error(HG_ERR_UNSUPPORTED, "tile scheduler kind %d is not known", (int)s->kind);
  if (s->tile_m < 1 || s->tile_n < 1 || s->cluster_m < 1 || s->cluster_n < 1)
    return hg_error(HG_ERR_INVALID, "scheduler tile %dx%d, cluster %dx%d: all must be >= 1",
                    s->tile_m, s->tile_n, s->cluster_m, s->cluster_n);
  if (s->raster_group < 1)
    return hg_error(HG_ERR_INVALID, "raster group = %d is not positive", s->raster_group);
  if (s->splits < 0 || s->splits > HG_SCHED_MAX_SPLITS)
    return hg_error(HG_ERR_INVALID, "split-K into %d ranges: the scheduler takes 0..%d", s->splits,
                    HG_SCHED_MAX_SPLITS);
  if (s->stream_k && (s->splits > 1 || s->kind != HG_SCHED_PERSISTENT))
    return hg_error(HG_ERR_UNSUPPORTED,
                    "stream-K shares k-blocks of the persistent scheduler's tiles: not with "
                    "split-K (%d splits) nor the grouped scheduler",
                    s->splits);
  return hg_ok();
}

/* ---- run-time divisors (builders.h: hg_divisor_t) */

/* The bit length of x (I32, 0 <= x < 2^31): 0 for 0, else floor(log2 x) + 1, by five
 * halvings (no count-leading-zeros op in the IR; this runs once, outside the loop). */
static hg_val_t bit_length(hg_builder_t *b, hg_val_t x) {
  hg_val_t len = i32(b, 0);
  for (int sh = 16; sh >= 1; sh /= 2) {
    hg_val_t hi = hg_b_bin(b, HG_SHR_U, x, i32(b, sh));
    hg_val_t big = hg_b_cmp(b, HG_NE, hi, i32(b, 0));
    x = hg_b_select(b, big, hi, x);
    len = hg_b_select(b, big, hg_b_bin(b, HG_ADD, len, i32(b, sh)), len);
  }
  return hg_b_bin(b, HG_ADD, len, x); /* x is 0 or 1 now */
}

void hg_divisors_make(hg_builder_t *b, int n, const hg_val_t *d, hg_divisor_t *out) {
  /* m = ceil(2^s / d) = floor((2^s - 1) / d) + 1 by restoring division: the quotient has 32
   * bits and the high word of 2^s - 1, 2^(p-1) - 1, is below d, so each step's remainder
   * stays below 2^32. No 64-bit division: ptxas calls a subroutine for one, and its frame
   * spilled the registers of ping-pong kernels. The divisors share the loop (ILP). */
  hg_val_t rem[HG_DIVISORS_MAX], q[HG_DIVISORS_MAX], lo[HG_DIVISORS_MAX];
  for (int k = 0; k < n; k++) {
    hg_val_t p = bit_length(b, hg_b_bin(b, HG_SUB, d[k], i32(b, 1)));
    out[k] = (hg_divisor_t){d[k], HG_NONE, hg_b_bin(b, HG_ADD, p, i32(b, 31))};
    /* 2^s - 1: high word 2^(p-1) - 1 (0 for p = 0), low word all ones (2^31 - 1 for p = 0) */
    hg_val_t p0 = hg_b_cmp(b, HG_EQ, p, i32(b, 0));
    hg_val_t hi = hg_b_bin(
        b, HG_SUB, hg_b_bin(b, HG_SHL, i32(b, 1), hg_b_bin(b, HG_SUB, p, i32(b, 1))), i32(b, 1));
    rem[k] = hg_b_var(b, HG_T_I32, hg_b_select(b, p0, i32(b, 0), hi));
    lo[k] = hg_b_select(b, p0, i32(b, INT32_MAX), i32(b, -1));
    q[k] = hg_b_var(b, HG_T_I32, i32(b, 0));
  }
  hg_val_t i = hg_b_for(b, i32(b, 0), i32(b, 32), i32(b, 1));
  {
    hg_val_t sh = hg_b_bin(b, HG_SUB, i32(b, 31), i);
    for (int k = 0; k < n; k++) {
      hg_val_t bit = hg_b_bin(b, HG_AND, hg_b_bin(b, HG_SHR_U, lo[k], sh), i32(b, 1));
      hg_val_t r2 = hg_b_bin(b, HG_OR, hg_b_bin(b, HG_SHL, rem[k], i32(b, 1)), bit);
      hg_val_t ge = hg_b_cmp(b, HG_GE_U, r2, d[k]);
      hg_b_assign(b, rem[k], hg_b_select(b, ge, hg_b_bin(b, HG_SUB, r2, d[k]), r2));
      hg_b_assign(b, q[k],
                  hg_b_bin(b, HG_OR, hg_b_bin(b, HG_SHL, q[k], i32(b, 1)),
                           hg_b_select(b, ge, i32(b, 1), i32(b, 0))));
    }
  }
  hg_b_endfor(b);
  for (int k = 0; k < n; k++) out[k].m = hg_b_bin(b, HG_ADD, q[k], i32(b, 1));
}

hg_divisor_t hg_divisor_make(hg_builder_t *b, hg_val_t d) {
  hg_divisor_t out;
  hg_divisors_make(b, 1, &d, &out);
  return out;
}

hg_divisor_t hg_divisor_const(hg_builder_t *b, int32_t d) {
  int p = 0;
  while (p < 31 && ((int64_t)1 << p) < d) p++;
  const int s = 31 + p;
  const uint64_t m = (((uint64_t)1 << s) + (uint64_t)d - 1) / (uint64_t)d;
  return (hg_divisor_t){i32(b, d), i32(b, (int32_t)(uint32_t)m), i32(b, s)};
}

hg_divisor_t hg_divisor_select(hg_builder_t *b, hg_val_t pred, const hg_divisor_t *x,
                               const hg_divisor_t *y) {
  return (hg_divisor_t){hg_b_select(b, pred, x->d, y->d), hg_b_select(b, pred, x->m, y->m),
                        hg_b_select(b, pred, x->s, y->s)};
}

void hg_divisor_divmod(hg_builder_t *b, const hg_divisor_t *dv, hg_val_t n, hg_val_t *q,
                       hg_val_t *r) {
  /* n m < 2^31 x 2^32: a 32 x 32 -> 64-bit product */
  hg_val_t prod = hg_b_bin(b, HG_MUL, hg_b_zext(b, n), hg_b_zext(b, dv->m));
  hg_val_t quo = hg_b_trunc(b, hg_b_bin(b, HG_SHR_U, prod, hg_b_zext(b, dv->s)));
  if (q) *q = quo;
  if (r) *r = hg_b_bin(b, HG_SUB, n, hg_b_bin(b, HG_MUL, quo, dv->d));
}

/* Both schedulers: the spec's cluster must be the kernel's; out starts with the spec. */
static hg_status_t start(const hg_sched_spec_t *spec, const hg_cluster2d_t *cluster, hg_val_t batch,
                         hg_val_t kblocks, hg_sched_t *out) {
  if (cluster->m != spec->cluster_m || cluster->n != spec->cluster_n)
    return hg_error(HG_ERR_INVALID, "the scheduler's cluster %dx%d is not the kernel's %dx%d",
                    spec->cluster_m, spec->cluster_n, cluster->m, cluster->n);
  memset(out, 0, sizeof *out);
  out->spec = *spec;
  out->cluster = cluster;
  out->batch = batch;
  out->kblocks = kblocks;
  return hg_ok();
}

/* An extent of the scheduler: a run-time count of cluster tiles (or the batch), >= 1. */
static hg_dint_t extent(hg_val_t v) {
  return hg_dint_val_sign(v, HG_DINT_POS);
}

/* A count as one builder value, computed where the scheduler is made (outside its loop). */
static hg_status_t count_val(hg_builder_t *b, hg_dint_t x, hg_val_t *out) {
  return hg_dint_emit(b, x, HG_T_I32, out);
}

static hg_val_t i64(hg_builder_t *b, int64_t v) {
  return hg_b_i64(b, v);
}

hg_val_t hg_sched_streamk_start(hg_builder_t *b, const hg_sched_t *s, hg_val_t c) {
  /* c x I / G in 64 bits: I reaches 2 x 132 x 2^25 k-blocks */
  return hg_b_bin(b, HG_DIV_U, hg_b_bin(b, HG_MUL, hg_b_sext(b, c), s->sk_iters),
                  hg_b_sext(b, s->cluster->count));
}

/* Stream-K's counts (the header's S, I and this cluster's range and units). */
static hg_status_t make_streamk(hg_builder_t *b, hg_sched_t *o) {
  hg_val_t g = o->cluster->count, t = o->tiles;
  hg_val_t rem = hg_b_bin(b, HG_REM_U, t, g);
  hg_val_t shared = hg_b_select(b, hg_b_cmp(b, HG_LT_S, t, g), t, hg_b_bin(b, HG_ADD, rem, g));
  o->sk_tiles = hg_b_select(b, hg_b_cmp(b, HG_EQ, rem, i32(b, 0)), i32(b, 0), shared);
  o->sk_iters = hg_b_bin(b, HG_MUL, hg_b_sext(b, o->sk_tiles), hg_b_sext(b, o->kblocks));
  o->sk_first = hg_sched_streamk_start(b, o, o->cluster->id);
  o->sk_end = hg_sched_streamk_start(b, o, hg_b_bin(b, HG_ADD, o->cluster->id, i32(b, 1)));
  /* the tiles the range touches: (end - 1) / kb - first / kb + 1, none when it is empty */
  hg_val_t kb = hg_b_sext(b, o->kblocks);
  hg_val_t last = hg_b_bin(b, HG_DIV_U, hg_b_bin(b, HG_SUB, o->sk_end, i64(b, 1)), kb);
  hg_val_t pieces = hg_b_bin(
      b, HG_ADD, hg_b_bin(b, HG_SUB, last, hg_b_bin(b, HG_DIV_U, o->sk_first, kb)), i64(b, 1));
  o->sk_units = hg_b_select(b, hg_b_cmp(b, HG_LT_S, o->sk_first, o->sk_end), hg_b_trunc(b, pieces),
                            i32(b, 0));
  /* then the whole tiles: (T - S) / G of them, S + id + j G */
  hg_val_t whole = hg_b_bin(b, HG_DIV_U, hg_b_bin(b, HG_SUB, t, o->sk_tiles), g);
  o->total = hg_b_bin(b, HG_ADD, o->sk_units, whole);
  return hg_builder_status(b);
}

int64_t hg_sched_streamk_tiles(int64_t tiles, int64_t clusters) {
  if (clusters < 1 || tiles % clusters == 0) return 0;
  return tiles < clusters ? tiles : tiles % clusters + clusters;
}

int64_t hg_sched_streamk_clusters(const hg_sched_spec_t *spec, int64_t m, int64_t n, int64_t batch,
                                  int64_t kblocks, int64_t resident) {
  hg_sched_spec_t s = *spec;
  s.splits = 0;
  const int64_t tiles = hg_sched_units(&s, m, n, batch);
  /* no more clusters than iterations: the grid is then all shared (fewer tiles than
   * clusters), each range at least one k-block */
  const int64_t g = resident < tiles * kblocks ? resident : tiles * kblocks;
  return g > 1 ? g : 1;
}

hg_status_t hg_sched_make(hg_builder_t *b, const hg_sched_spec_t *spec,
                          const hg_cluster2d_t *cluster, hg_val_t m, hg_val_t n, hg_val_t batch,
                          hg_val_t kblocks, hg_sched_t *out) {
  HG_TRY(check_spec(spec));
  if (spec->kind != HG_SCHED_PERSISTENT)
    return hg_error(HG_ERR_INVALID, "hg_sched_make builds the persistent scheduler; a grouped "
                                    "one comes from hg_sched_make_grouped");
  HG_TRY(start(spec, cluster, batch, kblocks, out));
  /* The grid of cluster tiles (M, N, batch >= 1, so every count is >= 1) and the bands the
   * raster walks: raster_group cluster tiles across the banded dimension, the other
   * dimension along. */
  hg_dint_t tm, tn, per_batch, total, band_tiles, bands;
  const int64_t grp = spec->raster_group;
  HG_TRY(hg_dint_ceil_div(b, extent(m), hg_dint((int64_t)spec->tile_m * spec->cluster_m), &tm));
  HG_TRY(hg_dint_ceil_div(b, extent(n), hg_dint((int64_t)spec->tile_n * spec->cluster_n), &tn));
  HG_TRY(count_val(b, tm, &out->tiles_m));
  HG_TRY(count_val(b, tn, &out->tiles_n));
  HG_TRY(hg_dint_mul(b, extent(out->tiles_m), extent(out->tiles_n), &per_batch));
  HG_TRY(count_val(b, per_batch, &out->per_batch));
  HG_TRY(hg_dint_mul(b, extent(out->per_batch), extent(batch), &total));
  HG_TRY(count_val(b, total, &out->tiles));
  out->total = out->tiles;
  out->splits = i32(b, 1);
  out->split_major = hg_b_pred(b, false);
  if (spec->splits > 1) {
    /* K of fewer k-blocks than splits: fewer ranges, none empty (kblocks >= 1) */
    out->splits = hg_b_bin(b, HG_MIN_S, i32(b, spec->splits), kblocks);
    out->total = hg_b_bin(b, HG_MUL, out->tiles, out->splits);
    out->split_major = hg_b_bin(b, HG_AND, hg_b_cmp(b, HG_GT_S, out->tiles_m, i32(b, 1)),
                                hg_b_cmp(b, HG_GT_S, out->tiles_n, i32(b, 1)));
  }
  if (spec->stream_k) HG_TRY(make_streamk(b, out));
  const bool along_m = spec->raster == HG_RASTER_M;
  hg_val_t inner = along_m ? out->tiles_m : out->tiles_n,
           outer = along_m ? out->tiles_n : out->tiles_m;
  HG_TRY(hg_dint_mul(b, hg_dint(grp), extent(inner), &band_tiles));
  HG_TRY(count_val(b, band_tiles, &out->band_tiles));
  HG_TRY(hg_dint_ceil_div(b, extent(outer), hg_dint(grp), &bands));
  HG_TRY(count_val(b, bands, &out->bands));
  return hg_builder_status(b);
}

hg_val_t hg_sched_begin(hg_builder_t *b, const hg_sched_t *s) {
  /* stream-K: total is this cluster's own count of units */
  if (s->spec.stream_k) return hg_b_for(b, i32(b, 0), s->total, i32(b, 1));
  return hg_b_for(b, s->cluster->id, s->total, s->cluster->count);
}

void hg_sched_end(hg_builder_t *b, const hg_sched_t *s) {
  (void)s;
  hg_b_endfor(b);
}

/* The prepared slot's words: (d, m, s) of per_batch, band_tiles, the last band's width and
 * splits, then split-K's kblocks / splits and kblocks % splits. */
enum {
  PREP_PER_BATCH = 0,
  PREP_BAND_TILES = 3,
  PREP_LAST_BAND = 6,
  PREP_SPLITS = 9,
  PREP_KB_Q = 12
};

void hg_sched_prepare(hg_builder_t *b, hg_sched_t *s, hg_val_t slot, hg_val_t writer) {
  if (s->spec.kind != HG_SCHED_PERSISTENT || !hg_val_is_none(s->prepared)) return;
  /* worth it where a cluster walks HG_SCHED_PREPARED_UNITS units or more: total > (U - 1) G */
  s->prepared_on =
      hg_b_cmp(b, HG_GT_S, s->total,
               hg_b_bin(b, HG_MUL, s->cluster->count, i32(b, HG_SCHED_PREPARED_UNITS - 1)));
  hg_b_if(b, s->prepared_on);
  const bool along_m = s->spec.raster == HG_RASTER_M;
  hg_val_t outer = along_m ? s->tiles_n : s->tiles_m;
  /* the last band's width: outer - (bands - 1) raster_group, 1..raster_group */
  hg_val_t last_w = hg_b_bin(
      b, HG_SUB, outer,
      hg_b_bin(b, HG_MUL, hg_b_bin(b, HG_SUB, s->bands, i32(b, 1)), i32(b, s->spec.raster_group)));
  const bool split = s->spec.splits > 1;
  hg_val_t d[4] = {s->per_batch, s->band_tiles, last_w, s->splits};
  hg_divisor_t dv[4];
  hg_divisors_make(b, split ? 4 : 3, d, dv);
  hg_val_t w[16];
  for (int i = 0; i < 16; i++) w[i] = i32(b, 0);
  if (split) hg_divisor_divmod(b, &dv[3], s->kblocks, &w[PREP_KB_Q], &w[PREP_KB_Q + 1]);
  for (int i = 0; i < (split ? 4 : 3); i++) {
    w[3 * i] = dv[i].d;
    w[3 * i + 1] = dv[i].m;
    w[3 * i + 2] = dv[i].s;
  }
  /* the vectors prepared_words reads back: the last only for split-K */
  hg_b_if(b, writer);
  for (int i = 0; i < (split ? 4 : 3); i++)
    hg_b_store(b, HG_SHARED, 32, 4, hg_b_bin(b, HG_ADD, slot, i32(b, 16 * i)), &w[4 * i]);
  hg_b_endif(b);
  hg_b_endif(b);
  s->prepared = slot;
}

/* The prepared words, read back for one unit (16-byte loads, issued together; the last one
 * only for split-K). */
static void prepared_words(hg_builder_t *b, const hg_sched_t *s, hg_val_t *w) {
  for (int i = 0; i < (s->spec.splits > 1 ? 4 : 3); i++)
    hg_b_load(b, HG_SHARED, HG_T_I32, 32, 4, hg_b_bin(b, HG_ADD, s->prepared, i32(b, 16 * i)),
              &w[4 * i]);
}

static hg_divisor_t word_divisor(const hg_val_t *w, int at) {
  return (hg_divisor_t){w[at], w[at + 1], w[at + 2]};
}

/* idx (in the domain) -> its coordinate (c0, c1) in the compact shape (s0, s1). */
static hg_status_t split(hg_builder_t *b, hg_dint_t idx, hg_dint_t s0, hg_dint_t s1, hg_dint_t *c0,
                         hg_dint_t *c1) {
  hg_dtuple_t shape, crd;
  HG_TRY(hg_dtuple_make(2, (hg_dint_t[2]){s0, s1}, &shape));
  HG_TRY(hg_dl_idx2crd(b, &shape, NULL, idx, HG_DL_IN_DOMAIN, &crd));
  *c0 = crd.d[1];
  *c1 = crd.d[2];
  return hg_ok();
}

/* x / d and x % d (I32; either output may be NULL): by d's prepared divisor dv where there is
 * one (hg_sched_prepare), else by division. */
static void divmod_by(hg_builder_t *b, const hg_divisor_t *dv, hg_val_t x, hg_val_t d, hg_val_t *q,
                      hg_val_t *r) {
  if (dv) {
    hg_divisor_divmod(b, dv, x, q, r);
    return;
  }
  if (q) *q = hg_b_bin(b, HG_DIV_U, x, d);
  if (r) *r = hg_b_bin(b, HG_REM_U, x, d);
}

/* The same by a prepared divisor of s0 (hg_sched_prepare), when there is one. */
static hg_status_t split_by(hg_builder_t *b, const hg_divisor_t *dv, hg_dint_t idx, hg_dint_t s0,
                            hg_dint_t s1, hg_dint_t *c0, hg_dint_t *c1) {
  if (!dv) return split(b, idx, s0, s1, c0, c1);
  hg_val_t v, q, r;
  HG_TRY(hg_dint_emit(b, idx, HG_T_I32, &v));
  hg_divisor_divmod(b, dv, v, &q, &r);
  *c0 = hg_dint_val_nonneg(r);
  *c1 = hg_dint_val_nonneg(q);
  return hg_ok();
}

/* The first element along one dimension of a CTA's tile: crd2idx of (rank in the cluster,
 * cluster tile) in the layout (cluster, tiles):(tile, cluster * tile). */
static hg_status_t origin(hg_builder_t *b, int tile, int cluster, hg_val_t rank, hg_val_t tiles,
                          hg_dint_t t, hg_val_t *out) {
  hg_dlayout_t l;
  hg_dtuple_t shape, stride, crd;
  hg_dint_t o;
  HG_TRY(hg_dtuple_make(2, (hg_dint_t[2]){hg_dint(cluster), extent(tiles)}, &shape));
  HG_TRY(
      hg_dtuple_make(2, (hg_dint_t[2]){hg_dint(tile), hg_dint((int64_t)cluster * tile)}, &stride));
  HG_TRY(hg_dlayout_make(&shape, &stride, &l));
  /* A cluster of one along this dimension has rank 0 there. */
  const hg_dint_t r = cluster == 1 ? hg_dint(0) : hg_dint_val_nonneg(rank);
  HG_TRY(hg_dtuple_make(2, (hg_dint_t[2]){r, t}, &crd));
  HG_TRY(hg_dl_crd2idx(b, &l, &crd, HG_DL_IN_DOMAIN, &o));
  return hg_dint_emit(b, o, HG_T_I32, out);
}

/* Stream-K: unit t of this cluster -> its cluster tile and k-blocks. A piece of the shared
 * range (t < sk_units): tile first / kb + t, the range clipped to the tile; else whole tile
 * S + id + (t - sk_units) G. */
static void streamk_unit(hg_builder_t *b, const hg_sched_t *s, hg_val_t t, hg_val_t *ct,
                         hg_val_t *k_first, hg_val_t *k_count) {
  hg_val_t kb = hg_b_sext(b, s->kblocks);
  hg_val_t piece = hg_b_cmp(b, HG_LT_S, t, s->sk_units);
  hg_val_t tile = hg_b_bin(b, HG_ADD, hg_b_bin(b, HG_DIV_U, s->sk_first, kb), hg_b_sext(b, t));
  hg_val_t t0 = hg_b_bin(b, HG_MUL, tile, kb);
  hg_val_t lo = hg_b_bin(b, HG_MAX_S, s->sk_first, t0);
  hg_val_t hi = hg_b_bin(b, HG_MIN_S, s->sk_end, hg_b_bin(b, HG_ADD, t0, kb));
  hg_val_t whole = hg_b_mad(b, hg_b_bin(b, HG_SUB, t, s->sk_units), s->cluster->count,
                            hg_b_bin(b, HG_ADD, s->sk_tiles, s->cluster->id));
  *ct = hg_b_select(b, piece, hg_b_trunc(b, tile), whole);
  *k_first = hg_b_select(b, piece, hg_b_trunc(b, hg_b_bin(b, HG_SUB, lo, t0)), i32(b, 0));
  *k_count = hg_b_select(b, piece, hg_b_trunc(b, hg_b_bin(b, HG_SUB, hi, lo)), s->kblocks);
}

/* The unit for loop index t, as layouts over the run-time extents:
 *   t               -> (tile, batch)          compact (per_batch, batch)
 *   tile            -> (in_band, band)        compact (band_tiles, bands)
 *   in_band         -> (across, along)        compact (band_w, inner): a band walks its
 *                                             band_w cluster tiles across, then steps along
 *   (across, band)  -> the banded coordinate  (raster_group, bands):(1, raster_group)
 * band_w is raster_group except in a last, narrower band: min(raster_group, outer - band *
 * raster_group), the one step that is no layout. Then each CTA's origin from its cluster
 * tile and its rank in the cluster (origin()). */
static hg_status_t work_at(hg_builder_t *b, const hg_sched_t *s, hg_val_t t, bool fast,
                           hg_sched_work_t *w) {
  const hg_sched_spec_t *c = &s->spec;
  const bool along_m = c->raster == HG_RASTER_M;
  hg_val_t inner = along_m ? s->tiles_m : s->tiles_n, outer = along_m ? s->tiles_n : s->tiles_m;
  const hg_dint_t grp = hg_dint(c->raster_group);
  hg_dint_t tile, batch, in_band, band, band_start, left, band_w, across, along, banded;
  hg_val_t ct = t, sp = i32(b, 0), k_first = i32(b, 0), k_count = s->kblocks;
  hg_val_t pw[16];
  hg_divisor_t dv_pb = {HG_NONE, HG_NONE, HG_NONE}, dv_bt = dv_pb, dv_lb = dv_pb, dv_sp = dv_pb;
  if (fast) {
    prepared_words(b, s, pw);
    dv_pb = word_divisor(pw, PREP_PER_BATCH);
    dv_bt = word_divisor(pw, PREP_BAND_TILES);
    dv_lb = word_divisor(pw, PREP_LAST_BAND);
    if (c->splits > 1) dv_sp = word_divisor(pw, PREP_SPLITS);
  }
  const hg_divisor_t *by_splits = fast ? &dv_sp : NULL;
  if (c->splits > 1) {
    /* unit -> (split, tile in batch, batch): idx2crd in the compact shape (S, P, batch),
     * tile-major, or (P, S, batch), split-major (P the tiles per batch), the first two
     * extents selected at run time */
    const hg_val_t major = s->split_major;
    const hg_val_t e0 = hg_b_select(b, major, s->per_batch, s->splits);
    const hg_val_t e1 = hg_b_select(b, major, s->splits, s->per_batch);
    hg_divisor_t d0, d1;
    if (fast) {
      d0 = hg_divisor_select(b, major, &dv_pb, &dv_sp);
      d1 = hg_divisor_select(b, major, &dv_sp, &dv_pb);
    }
    hg_dint_t c0, c1, rest, rest_ext;
    HG_TRY(hg_dint_mul(b, extent(e1), extent(s->batch), &rest_ext));
    HG_TRY(split_by(b, fast ? &d0 : NULL, hg_dint_val_nonneg(t), extent(e0), rest_ext, &c0, &rest));
    HG_TRY(split_by(b, fast ? &d1 : NULL, rest, extent(e1), extent(s->batch), &c1, &batch));
    hg_val_t v0, v1, vb;
    HG_TRY(hg_dint_emit(b, c0, HG_T_I32, &v0));
    HG_TRY(hg_dint_emit(b, c1, HG_T_I32, &v1));
    HG_TRY(hg_dint_emit(b, batch, HG_T_I32, &vb));
    sp = hg_b_select(b, major, v1, v0);
    const hg_val_t in_batch = hg_b_select(b, major, v0, v1);
    tile = hg_dint_val_nonneg(in_batch);
    ct = hg_b_mad(b, vb, s->per_batch, in_batch);
  } else {
    if (c->stream_k) streamk_unit(b, s, t, &ct, &k_first, &k_count);
    HG_TRY(split_by(b, fast ? &dv_pb : NULL, hg_dint_val_nonneg(ct), extent(s->per_batch),
                    extent(s->batch), &tile, &batch));
  }
  HG_TRY(split_by(b, fast ? &dv_bt : NULL, tile, extent(s->band_tiles), extent(s->bands), &in_band,
                  &band));
  HG_TRY(hg_dint_mul(b, band, grp, &band_start));
  HG_TRY(hg_dint_sub(b, extent(outer), band_start, &left));
  HG_TRY(hg_dint_min(b, grp, left, &band_w));
  hg_divisor_t dv_w = {HG_NONE, HG_NONE, HG_NONE};
  if (fast) { /* raster_group wide, or the last band's width in the last band */
    hg_val_t vband;
    HG_TRY(hg_dint_emit(b, band, HG_T_I32, &vband));
    const hg_divisor_t whole = hg_divisor_const(b, c->raster_group);
    hg_val_t last = hg_b_cmp(b, HG_EQ, vband, hg_b_bin(b, HG_SUB, s->bands, i32(b, 1)));
    dv_w = hg_divisor_select(b, last, &dv_lb, &whole);
  }
  HG_TRY(split_by(b, fast ? &dv_w : NULL, in_band, band_w, extent(inner), &across, &along));
  hg_dlayout_t bl;
  hg_dtuple_t shape, stride, crd;
  HG_TRY(hg_dtuple_make(2, (hg_dint_t[2]){grp, extent(s->bands)}, &shape));
  HG_TRY(hg_dtuple_make(2, (hg_dint_t[2]){hg_dint(1), grp}, &stride));
  HG_TRY(hg_dlayout_make(&shape, &stride, &bl));
  HG_TRY(hg_dtuple_make(2, (hg_dint_t[2]){across, band}, &crd));
  HG_TRY(hg_dl_crd2idx(b, &bl, &crd, HG_DL_IN_DOMAIN, &banded));
  const hg_dint_t ctm = along_m ? along : banded, ctn = along_m ? banded : along;
  w->index = t;
  w->m_end = HG_NONE;
  HG_TRY(hg_dint_emit(b, batch, HG_T_I32, &w->batch));
  HG_TRY(origin(b, c->tile_m, c->cluster_m, s->cluster->rm, s->tiles_m, ctm, &w->m0));
  HG_TRY(origin(b, c->tile_n, c->cluster_n, s->cluster->rn, s->tiles_n, ctn, &w->n0));
  w->tile = ct;
  w->split = sp;
  w->k_first = k_first;
  w->k_count = k_count;
  if (c->splits > 1) {
    /* [sp kb / S, (sp + 1) kb / S) with kb = q S + r: sp q + sp r / S, all in 32 bits
     * ((sp + 1) kb may pass 2^31; sp r < S^2). q and r prepared, or by division: three
     * div.u32 where the 64-bit products took two div.u64, a ptxas subroutine call each, ahead
     * of the producer's first load (bench/RESULTS.md, eleventh session). */
    hg_val_t q = HG_NONE, r = HG_NONE, f2, e2;
    if (fast) {
      q = pw[PREP_KB_Q];
      r = pw[PREP_KB_Q + 1];
    } else {
      divmod_by(b, NULL, s->kblocks, s->splits, &q, &r);
    }
    hg_val_t sp1 = hg_b_bin(b, HG_ADD, sp, i32(b, 1));
    divmod_by(b, by_splits, hg_b_bin(b, HG_MUL, sp, r), s->splits, &f2, NULL);
    divmod_by(b, by_splits, hg_b_bin(b, HG_MUL, sp1, r), s->splits, &e2, NULL);
    hg_val_t first = hg_b_mad(b, sp, q, f2);
    w->k_first = first;
    w->k_count = hg_b_bin(b, HG_SUB, hg_b_mad(b, sp1, q, e2), first);
  }
  return hg_ok();
}

/* Prepared (hg_sched_prepare): both forms, the divisors' where this grid's clusters walk
 * enough units to have prepared them (s->prepared_on, uniform), else the plain one. */
static hg_status_t work(hg_builder_t *b, const hg_sched_t *s, hg_val_t t, hg_sched_work_t *w) {
  if (hg_val_is_none(s->prepared)) return work_at(b, s, t, false, w);
  hg_val_t v[7];
  for (int i = 0; i < 7; i++) v[i] = hg_b_var(b, HG_T_I32, HG_NONE);
  for (int form = 0; form < 2; form++) {
    if (form == 0)
      hg_b_if(b, s->prepared_on);
    else
      hg_b_else(b);
    hg_sched_work_t x;
    HG_TRY(work_at(b, s, t, form == 0, &x));
    const hg_val_t got[7] = {x.batch, x.m0, x.n0, x.tile, x.split, x.k_first, x.k_count};
    for (int i = 0; i < 7; i++) hg_b_assign(b, v[i], got[i]);
  }
  hg_b_endif(b);
  *w = (hg_sched_work_t){.index = t,
                         .batch = v[0],
                         .m0 = v[1],
                         .n0 = v[2],
                         .m_end = HG_NONE,
                         .tile = v[3],
                         .split = v[4],
                         .k_first = v[5],
                         .k_count = v[6]};
  return hg_ok();
}

static hg_status_t work_grouped(hg_builder_t *b, const hg_sched_t *s, hg_val_t t,
                                hg_sched_work_t *w);

void hg_sched_work(hg_builder_t *b, const hg_sched_t *s, hg_val_t t, hg_sched_work_t *w) {
  hg_status_t st = s->spec.kind == HG_SCHED_GROUPED ? work_grouped(b, s, t, w) : work(b, s, t, w);
  if (!hg_is_ok(&st)) hg_builder_fail(b, hg_status_wrap(st, "hg_sched_work: "));
}

hg_val_t hg_sched_next(hg_builder_t *b, const hg_sched_t *s, hg_val_t t) {
  return hg_b_bin(b, HG_ADD, t, s->spec.stream_k ? i32(b, 1) : s->cluster->count);
}

hg_val_t hg_sched_has_next(hg_builder_t *b, const hg_sched_t *s, hg_val_t t) {
  return hg_b_cmp(b, HG_LT_S, hg_sched_next(b, s, t), s->total);
}

int64_t hg_sched_units(const hg_sched_spec_t *spec, int64_t m, int64_t n, int64_t batch) {
  const int64_t cm = (int64_t)spec->tile_m * spec->cluster_m;
  const int64_t cn = (int64_t)spec->tile_n * spec->cluster_n;
  if (cm < 1 || cn < 1) return 0;
  return ((m + cm - 1) / cm) * ((n + cn - 1) / cn) * batch * (spec->splits > 1 ? spec->splits : 1);
}

/* ---------------------------------------------------------------- the grouped scheduler
 *
 * Units of all groups in one linear space, group after group: group g has
 * ceil(rows_g / (tile_m cluster_m)) x tiles_n cluster tiles, and unit t belongs to the group
 * whose inclusive prefix sum of units first exceeds t. The counts live on the device (a
 * CUDA graph replays them as they are at launch): every CTA reads them once at its start,
 * its threads each taking groups tid, tid + nthreads, ..., and builds in shared memory each
 * group's end row and the prefix sums of units (a Hillis-Steele scan between two buffers,
 * one barrier per doubling: log2(groups) steps for any group count). A unit then finds its
 * group by a binary search of the prefix sums (log2(groups) shared-memory loads, no global
 * memory on the way), and within the group walks bands of raster_group cluster tiles like
 * the persistent scheduler, so the CTAs in flight share the group's B (the expert's weights)
 * in L2. Plain index arithmetic here: the group's extents change per unit. */

uint32_t hg_sched_grouped_smem_bytes(int max_groups) {
  /* ends[G], starts[G] (contiguous), then the scan's two buffers pre[2][G] */
  return (uint32_t)(4 * 4 * (max_groups > 0 ? max_groups : 1));
}

static hg_val_t ld_smem(hg_builder_t *b, hg_val_t base, hg_val_t idx) {
  hg_val_t v;
  hg_b_load(b, HG_SHARED, HG_T_I32, 32, 1, hg_b_mad(b, idx, i32(b, 4), base), &v);
  return v;
}

static void st_smem(hg_builder_t *b, hg_val_t base, hg_val_t idx, hg_val_t v) {
  hg_b_store(b, HG_SHARED, 32, 1, hg_b_mad(b, idx, i32(b, 4), base), &v);
}

/* int32 element i of the device array at ptr (I64). */
static hg_val_t ld_group(hg_builder_t *b, hg_val_t ptr, hg_val_t i) {
  hg_val_t v;
  hg_b_load(b, HG_GLOBAL, HG_T_I32, 32, 1,
            hg_b_bin(b, HG_ADD, ptr, hg_b_bin(b, HG_MUL, hg_b_sext(b, i), hg_b_i64(b, 4))), &v);
  return v;
}

static hg_val_t clamp_rows(hg_builder_t *b, hg_val_t v, hg_val_t rows) {
  return hg_b_bin(b, HG_MIN_S, hg_b_bin(b, HG_MAX_S, v, i32(b, 0)), rows);
}

/* ceil(x / d) for x >= 0, d > 0 a constant. */
static hg_val_t ceil_div_c(hg_builder_t *b, hg_val_t x, int d) {
  return hg_b_bin(b, HG_DIV_U, hg_b_bin(b, HG_ADD, x, i32(b, d - 1)), i32(b, d));
}

hg_status_t hg_sched_make_grouped(hg_builder_t *b, const hg_sched_spec_t *spec,
                                  const hg_cluster2d_t *cluster, hg_val_t rows, hg_val_t n,
                                  hg_val_t groups, int max_groups, hg_val_t groups_ptr,
                                  hg_val_t kblocks, hg_val_t tid, int nthreads, hg_sched_t *out) {
  HG_TRY(check_spec(spec));
  if (spec->kind != HG_SCHED_GROUPED)
    return hg_error(HG_ERR_INVALID, "hg_sched_make_grouped builds only HG_SCHED_GROUPED");
  if (spec->splits > 1)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "the grouped scheduler does not split K (splits = %d): a group's tiles are "
                    "few only when its rows are, and then every group's are",
                    spec->splits);
  if (max_groups < 1 || nthreads < 1)
    return hg_error(HG_ERR_INVALID, "grouped scheduler: %d groups at most, %d threads: both >= 1",
                    max_groups, nthreads);
  HG_TRY(start(spec, cluster, groups, kblocks, out));
  out->groups = groups;
  out->rows = rows;
  out->splits = i32(b, 1);
  const uint32_t off = hg_b_smem_reserve(b, hg_sched_grouped_smem_bytes(max_groups), 16);
  out->ends = hg_b_smem_addr(b, off);
  out->starts = hg_b_smem_addr(b, off + 4u * (uint32_t)max_groups);
  hg_val_t buf0 = hg_b_smem_addr(b, off + 8u * (uint32_t)max_groups);
  hg_val_t buf1 = hg_b_smem_addr(b, off + 12u * (uint32_t)max_groups);
  const int cm = spec->tile_m * spec->cluster_m;
  out->tiles_n = ceil_div_c(b, n, spec->tile_n * spec->cluster_n);
  hg_b_comment(b, "grouped scheduler: each group's end row and units, then their prefix sums");
  hg_val_t g = hg_b_for(b, tid, groups, i32(b, nthreads));
  {
    hg_val_t end = clamp_rows(b, ld_group(b, groups_ptr, g), rows), start = i32(b, 0);
    if (spec->contiguous) {
      /* the previous group's end (0 before the first); a decreasing offset makes the group
       * empty rather than negative */
      hg_val_t prev = hg_b_var(b, HG_T_I32, i32(b, 0));
      hg_b_if(b, hg_b_cmp(b, HG_GT_S, g, i32(b, 0)));
      hg_b_assign(b, prev,
                  clamp_rows(b, ld_group(b, groups_ptr, hg_b_bin(b, HG_SUB, g, i32(b, 1))), rows));
      hg_b_endif(b);
      start = prev;
      end = hg_b_bin(b, HG_MAX_S, end, start);
      st_smem(b, out->starts, g, start);
    }
    st_smem(b, out->ends, g, end);
    hg_val_t units =
        hg_b_bin(b, HG_MUL, ceil_div_c(b, hg_b_bin(b, HG_SUB, end, start), cm), out->tiles_n);
    st_smem(b, buf0, g, units);
  }
  hg_b_endfor(b);
  hg_b_bar_sync(b, 0, 0);
  /* Hillis-Steele: after the step of distance d, src[i] sums groups i - 2d + 1 .. i. */
  hg_val_t src = hg_b_var(b, HG_T_I32, buf0), dst = hg_b_var(b, HG_T_I32, buf1);
  hg_val_t d = hg_b_var(b, HG_T_I32, i32(b, 1));
  hg_b_loop(b);
  {
    hg_b_break_if(b, hg_b_cmp(b, HG_GE_S, d, groups));
    hg_val_t i = hg_b_for(b, tid, groups, i32(b, nthreads));
    {
      hg_val_t v = hg_b_var(b, HG_T_I32, ld_smem(b, src, i));
      hg_b_if(b, hg_b_cmp(b, HG_GE_S, i, d));
      hg_b_assign(b, v, hg_b_bin(b, HG_ADD, v, ld_smem(b, src, hg_b_bin(b, HG_SUB, i, d))));
      hg_b_endif(b);
      st_smem(b, dst, i, v);
    }
    hg_b_endfor(b);
    hg_b_bar_sync(b, 0, 0);
    hg_val_t tmp = hg_b_bin(b, HG_ADD, src, i32(b, 0));
    hg_b_assign(b, src, dst);
    hg_b_assign(b, dst, tmp);
    hg_b_assign(b, d, hg_b_bin(b, HG_SHL, d, i32(b, 1)));
  }
  hg_b_endloop(b);
  out->pre = hg_b_bin(b, HG_ADD, src, i32(b, 0));
  out->tiles = out->total = ld_smem(b, out->pre, hg_b_bin(b, HG_SUB, groups, i32(b, 1)));
  return hg_builder_status(b);
}

/* The unit for loop index t: its group by binary search of the prefix sums, then its cluster
 * tile in the group's bands, then the CTA's origin. */
static hg_status_t work_grouped(hg_builder_t *b, const hg_sched_t *s, hg_val_t t,
                                hg_sched_work_t *w) {
  const hg_sched_spec_t *c = &s->spec;
  /* the first group g with pre[g] > t: lo = 0, hi = groups - 1 (t < total = pre[groups-1]) */
  hg_val_t lo = hg_b_var(b, HG_T_I32, i32(b, 0));
  hg_val_t hi = hg_b_var(b, HG_T_I32, hg_b_bin(b, HG_SUB, s->groups, i32(b, 1)));
  hg_b_loop(b);
  {
    hg_b_break_if(b, hg_b_cmp(b, HG_GE_S, lo, hi));
    hg_val_t mid = hg_b_bin(b, HG_SHR_U, hg_b_bin(b, HG_ADD, lo, hi), i32(b, 1));
    hg_val_t above = hg_b_cmp(b, HG_GT_S, ld_smem(b, s->pre, mid), t);
    hg_val_t nlo = hg_b_select(b, above, lo, hg_b_bin(b, HG_ADD, mid, i32(b, 1)));
    hg_b_assign(b, hi, hg_b_select(b, above, mid, hi));
    hg_b_assign(b, lo, nlo);
  }
  hg_b_endloop(b);
  hg_val_t g = hg_b_bin(b, HG_ADD, lo, i32(b, 0));
  hg_val_t first = hg_b_cmp(b, HG_EQ, g, i32(b, 0));
  hg_val_t gm1 = hg_b_bin(b, HG_MAX_S, hg_b_bin(b, HG_SUB, g, i32(b, 1)), i32(b, 0));
  hg_val_t before = hg_b_select(b, first, i32(b, 0), ld_smem(b, s->pre, gm1));
  hg_val_t end = ld_smem(b, s->ends, g);
  hg_val_t start = c->contiguous ? ld_smem(b, s->starts, g) : i32(b, 0);
  const int cm = c->tile_m * c->cluster_m;
  hg_val_t tiles_m = ceil_div_c(b, hg_b_bin(b, HG_SUB, end, start), cm);
  hg_val_t local = hg_b_bin(b, HG_SUB, t, before);
  /* bands of raster_group cluster tiles across the banded dimension, walked along the other */
  const bool along_m = c->raster == HG_RASTER_M;
  hg_val_t inner = along_m ? tiles_m : s->tiles_n, outer = along_m ? s->tiles_n : tiles_m;
  hg_val_t grp = i32(b, c->raster_group);
  hg_val_t band_tiles = hg_b_bin(b, HG_MUL, grp, inner);
  hg_val_t band = hg_b_bin(b, HG_DIV_U, local, band_tiles);
  hg_val_t in_band = hg_b_bin(b, HG_REM_U, local, band_tiles);
  hg_val_t band_start = hg_b_bin(b, HG_MUL, band, grp);
  hg_val_t band_w = hg_b_bin(b, HG_MIN_S, grp, hg_b_bin(b, HG_SUB, outer, band_start));
  hg_val_t across = hg_b_bin(b, HG_REM_U, in_band, band_w);
  hg_val_t along = hg_b_bin(b, HG_DIV_U, in_band, band_w);
  hg_val_t banded = hg_b_bin(b, HG_ADD, band_start, across);
  hg_val_t ctm = along_m ? along : banded, ctn = along_m ? banded : along;
  /* the CTA's origin: (cluster tile x cluster + rank) x tile, rows from the group's start */
  hg_val_t rm = c->cluster_m == 1 ? i32(b, 0) : s->cluster->rm;
  hg_val_t rn = c->cluster_n == 1 ? i32(b, 0) : s->cluster->rn;
  w->index = t;
  w->batch = g;
  w->m0 = hg_b_mad(b, hg_b_mad(b, ctm, i32(b, c->cluster_m), rm), i32(b, c->tile_m), start);
  w->n0 = hg_b_bin(b, HG_MUL, hg_b_mad(b, ctn, i32(b, c->cluster_n), rn), i32(b, c->tile_n));
  w->m_end = end;
  w->tile = t;
  w->split = i32(b, 0);
  w->k_first = i32(b, 0);
  w->k_count = s->kblocks;
  return hg_builder_status(b);
}
