/* Tile schedulers (builders.h): which output tiles (and which of their k-blocks) a cluster
 * computes, in which order. Producer and consumers walk the same sequence, so each side
 * calls the same scheduler and stays in step with the other through the stage ring.
 *
 * The persistent scheduler: the grid is as many clusters as run at once; cluster c takes
 * units c, c + clusters, ... A unit is a cluster tile (cluster_m x cluster_n CTA tiles) of one
 * batch; consecutive units walk a band of raster_group cluster tiles along one dimension
 * before moving along the other, so the ~SM-count tiles in flight share A rows and B
 * columns in L2. Split-K, stream-K and grouped schedulers are further kinds of the same
 * interface: they hand out k-block ranges and per-group extents through hg_sched_work_t. */
#include <string.h>

#include "hopgen/builders.h"

static hg_val_t i32(hg_builder_t *b, int32_t v) {
  return hg_b_i32(b, v);
}

/* ceil(x / d) for non-negative I32 x and a constant d >= 1. */
static hg_val_t ceil_div(hg_builder_t *b, hg_val_t x, int d) {
  return hg_b_bin(b, HG_DIV_U, hg_b_bin(b, HG_ADD, x, i32(b, d - 1)), i32(b, d));
}

static hg_status_t check_spec(const hg_sched_spec_t *s) {
  if (s->kind != HG_SCHED_PERSISTENT)
    return hg_error(HG_ERR_UNSUPPORTED, "tile scheduler kind %d is not known", (int)s->kind);
  if (s->tile_m < 1 || s->tile_n < 1 || s->cluster_m < 1 || s->cluster_n < 1)
    return hg_error(HG_ERR_INVALID, "scheduler tile %dx%d, cluster %dx%d: all must be >= 1",
                    s->tile_m, s->tile_n, s->cluster_m, s->cluster_n);
  if (s->raster_group < 1)
    return hg_error(HG_ERR_INVALID, "raster group = %d is not positive", s->raster_group);
  return hg_ok();
}

hg_status_t hg_sched_make(hg_builder_t *b, const hg_sched_spec_t *spec,
                          const hg_cluster2d_t *cluster, hg_val_t m, hg_val_t n, hg_val_t batch,
                          hg_val_t kblocks, hg_sched_t *out) {
  HG_TRY(check_spec(spec));
  if (cluster->m != spec->cluster_m || cluster->n != spec->cluster_n)
    return hg_error(HG_ERR_INVALID, "the scheduler's cluster %dx%d is not the kernel's %dx%d",
                    spec->cluster_m, spec->cluster_n, cluster->m, cluster->n);
  memset(out, 0, sizeof *out);
  out->spec = *spec;
  out->cluster = cluster;
  out->tiles_m = ceil_div(b, m, spec->tile_m * spec->cluster_m);
  out->tiles_n = ceil_div(b, n, spec->tile_n * spec->cluster_n);
  out->per_batch = hg_b_bin(b, HG_MUL, out->tiles_m, out->tiles_n);
  out->total = hg_b_bin(b, HG_MUL, out->per_batch, batch);
  out->kblocks = kblocks;
  return hg_builder_status(b);
}

hg_val_t hg_sched_begin(hg_builder_t *b, const hg_sched_t *s) {
  return hg_b_for(b, s->cluster->id, s->total, s->cluster->count);
}

void hg_sched_end(hg_builder_t *b, const hg_sched_t *s) {
  (void)s;
  hg_b_endfor(b);
}

void hg_sched_work(hg_builder_t *b, const hg_sched_t *s, hg_val_t t, hg_sched_work_t *w) {
  const hg_sched_spec_t *c = &s->spec;
  w->index = t;
  w->batch = hg_b_bin(b, HG_DIV_U, t, s->per_batch);
  hg_val_t tt = hg_b_bin(b, HG_REM_U, t, s->per_batch);
  const bool along_m = c->raster == HG_RASTER_M;
  hg_val_t inner = along_m ? s->tiles_m : s->tiles_n; /* walked fastest */
  hg_val_t outer = along_m ? s->tiles_n : s->tiles_m; /* banded */
  hg_val_t grp = i32(b, c->raster_group);
  hg_val_t band_tiles = hg_b_bin(b, HG_MUL, grp, inner);
  hg_val_t band = hg_b_bin(b, HG_DIV_U, tt, band_tiles);
  hg_val_t in_band = hg_b_bin(b, HG_REM_U, tt, band_tiles);
  hg_val_t band_start = hg_b_bin(b, HG_MUL, band, grp);
  hg_val_t band_w = hg_b_bin(b, HG_MIN_S, grp, hg_b_bin(b, HG_SUB, outer, band_start));
  hg_val_t o = hg_b_bin(b, HG_ADD, band_start, hg_b_bin(b, HG_REM_U, in_band, band_w));
  hg_val_t i = hg_b_bin(b, HG_DIV_U, in_band, band_w);
  hg_val_t tm = along_m ? i : o, tn = along_m ? o : i;
  w->m0 =
      hg_b_bin(b, HG_MUL, hg_b_mad(b, tm, i32(b, c->cluster_m), s->cluster->rm), i32(b, c->tile_m));
  w->n0 =
      hg_b_bin(b, HG_MUL, hg_b_mad(b, tn, i32(b, c->cluster_n), s->cluster->rn), i32(b, c->tile_n));
  w->k_first = i32(b, 0);
  w->k_count = s->kblocks;
}

hg_val_t hg_sched_has_next(hg_builder_t *b, const hg_sched_t *s, hg_val_t t) {
  return hg_b_cmp(b, HG_LT_S, hg_b_bin(b, HG_ADD, t, s->cluster->count), s->total);
}

int64_t hg_sched_units(const hg_sched_spec_t *spec, int64_t m, int64_t n, int64_t batch) {
  const int64_t cm = (int64_t)spec->tile_m * spec->cluster_m;
  const int64_t cn = (int64_t)spec->tile_n * spec->cluster_n;
  if (cm < 1 || cn < 1) return 0;
  return ((m + cm - 1) / cm) * ((n + cn - 1) / cn) * batch;
}
