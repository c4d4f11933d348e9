/* The tile scheduler's index math without a GPU: the coordinates hg_sched_work emits (through
 * dynamic layouts, src/builders/sched.c), interpreted on the CPU (tests/support/ir_eval.c) for
 * every unit and every CTA of the cluster, equal the rasterized order built on the host by
 * walking it - batches, then bands of raster_group cluster tiles across, the last band
 * narrower, each band walked along the other dimension - for random extents, tiles, clusters,
 * raster orders and groups; with split-K, each tile's units and their k-block ranges. */
#include <stdlib.h>
#include <string.h>

#include "hg_test.h"
#include "hopgen/builders.h"
#include "support/ir_eval.h"

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static int64_t rnd(int64_t n) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (int64_t)(rng_state % (uint64_t)n);
}

/* One unit of the host's walk: cluster tile (tm, tn) of batch l. */
typedef struct unit {
  int64_t tm, tn, l;
} unit_t;

/* Unit t of the order the scheduler promises, found by walking it (whole batches and whole
 * bands skipped by their counts, the band itself enumerated): no index formula to share a bug
 * with the kernel's. Also the number of units, in *total. */
static unit_t host_unit(const hg_sched_spec_t *s, int64_t m, int64_t n, int64_t batch, int64_t t,
                        int64_t *total) {
  const int64_t cm = (int64_t)s->tile_m * s->cluster_m, cn = (int64_t)s->tile_n * s->cluster_n;
  const int64_t ctm = (m + cm - 1) / cm, ctn = (n + cn - 1) / cn;
  const bool along_m = s->raster == HG_RASTER_M;
  const int64_t inner = along_m ? ctm : ctn, outer = along_m ? ctn : ctm;
  *total = ctm * ctn * batch;
  unit_t u = {-1, -1, -1};
  int64_t l = 0;
  while (l < batch && t >= ctm * ctn) {
    t -= ctm * ctn;
    l++;
  }
  for (int64_t start = 0; start < outer; start += s->raster_group) {
    const int64_t width = outer - start < s->raster_group ? outer - start : s->raster_group;
    if (t >= width * inner) {
      t -= width * inner;
      continue;
    }
    for (int64_t i = 0, k = 0; i < inner; i++)
      for (int64_t o = start; o < start + width; o++, k++)
        if (k == t) return (unit_t){along_m ? i : o, along_m ? o : i, l};
  }
  return u;
}

/* Unit t's cluster tile (over all batches) and split in the order split-K promises: the
 * splits of a tile consecutive, or (major: 2 or more cluster tiles along both M and N) a
 * batch's tiles at split 0, then at split 1, ... walked by whole batches' splits. */
static void host_split(int64_t t, int64_t per_batch, int64_t splits, bool major, int64_t *ct,
                       int64_t *sp) {
  if (!major) {
    *ct = t / splits;
    *sp = t % splits;
    return;
  }
  int64_t l = 0, s = 0;
  for (; t >= per_batch; t -= per_batch)
    if (++s == splits) {
      s = 0;
      l++;
    }
  *ct = l * per_batch + t;
  *sp = s;
}

/* Shared memory of one interpreted thread: the prepared divisors' slot (at 0). */
static int64_t prep_smem[HG_SCHED_PREPARED_BYTES / 4];
static int64_t prep_load(void *ctx, hg_space_t space, int bits, int64_t addr) {
  (void)ctx;
  (void)bits;
  return space == HG_SHARED && addr >= 0 && addr < HG_SCHED_PREPARED_BYTES ? prep_smem[addr / 4]
                                                                           : -1;
}
static void prep_store(void *ctx, hg_space_t space, int bits, int64_t addr, int64_t v) {
  (void)ctx;
  (void)bits;
  if (space == HG_SHARED && addr >= 0 && addr < HG_SCHED_PREPARED_BYTES) prep_smem[addr / 4] = v;
}

/* One random scheduler: every unit (or a sample of a large grid) for every CTA rank. */
static void one_sched(int trial) {
  hg_sched_spec_t s = {.kind = HG_SCHED_PERSISTENT,
                       .tile_m = (int)(16 << rnd(5)) + (rnd(4) == 0 ? 16 * (int)rnd(8) : 0),
                       .tile_n = (int)(8 << rnd(6)) + (rnd(4) == 0 ? 8 * (int)rnd(16) : 0),
                       .cluster_m = 1 << rnd(3),
                       .cluster_n = 1 << rnd(2),
                       .raster = rnd(2) ? HG_RASTER_M : HG_RASTER_N,
                       .raster_group = 1 + (int)rnd(rnd(2) ? 3 : 16),
                       .splits = rnd(3) == 0 ? 2 + (int)rnd(rnd(4) ? 7 : HG_SCHED_MAX_SPLITS - 1)
                                             : (int)rnd(2)};
  if (s.cluster_m * s.cluster_n > 16) s.cluster_n = 1;
  const int64_t kb = 1 + rnd(rnd(2) ? 40 : 3000000);
  const bool big = rnd(8) == 0;
  const int64_t m = 1 + rnd(big ? 30000 : 3000), n = 1 + rnd(big ? 30000 : 3000);
  const int64_t batch = 1 + rnd(big ? 300 : 4);
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("sched", &b));
  hg_cluster2d_t cl;
  CHECK_OK(hg_cluster2d_make(b, s.cluster_m, s.cluster_n, &cl));
  hg_val_t pm = hg_b_param(b, HG_T_I32, "m"), pn = hg_b_param(b, HG_T_I32, "n");
  hg_val_t pb = hg_b_param(b, HG_T_I32, "batch"), pt = hg_b_param(b, HG_T_I32, "t");
  hg_val_t pk = hg_b_param(b, HG_T_I32, "kblocks");
  hg_sched_t sched;
  CHECK_OK(hg_sched_make(b, &s, &cl, pm, pn, pb, pk, &sched));
  /* every other trial through the prepared divisors (the consumers' form), taken at run time
   * where the grid (one cluster here) walks 4 units or more, the plain form below that */
  const bool prepared = trial % 2 == 1;
  if (prepared) hg_sched_prepare(b, &sched, hg_b_i32(b, 0), hg_b_pred(b, true));
  const int from = ir_eval_op_count(b);
  hg_sched_work_t w;
  hg_sched_work(b, &sched, pt, &w);
  CHECK_OK(hg_builder_status(b));
  /* One division and one remainder per split of the index (unit, band, across): what the
   * hand-written index math took. */
  const int divs = ir_eval_count_bin(b, from, HG_DIV_U) + ir_eval_count_bin(b, from, HG_DIV_S) +
                   ir_eval_count_bin(b, from, HG_REM_U) + ir_eval_count_bin(b, from, HG_REM_S);
  /* split-K: the unit's split and tile (2), and its k range by kb = q S + r (4, 32-bit) */
  CHECK(divs <= (s.splits > 1 ? 12 : 6)); /* the plain form's, prepared or not */
  int64_t tiles;
  host_unit(&s, m, n, batch, 0, &tiles);
  const int64_t splits = s.splits > 1 ? (s.splits < kb ? s.splits : kb) : 1;
  const int64_t total = tiles * splits;
  CHECK_EQ(hg_sched_units(&s, m, n, batch), tiles * (s.splits > 1 ? s.splits : 1));
  const int64_t step = total > 4096 ? total / 97 + 1 : 1;
  const int64_t ctm = (m + (int64_t)s.tile_m * s.cluster_m - 1) / ((int64_t)s.tile_m * s.cluster_m);
  const int64_t ctn = (n + (int64_t)s.tile_n * s.cluster_n - 1) / ((int64_t)s.tile_n * s.cluster_n);
  const bool major = s.splits > 1 && ctm > 1 && ctn > 1;
  int64_t bad = 0;
  for (int64_t t = 0; t < total && bad < 3; t += step) {
    int64_t ct, sp;
    host_split(t, tiles / batch, splits, major, &ct, &sp);
    const unit_t u = host_unit(&s, m, n, batch, ct, &tiles);
    const int64_t kf = sp * kb / splits, kc = (sp + 1) * kb / splits - kf;
    for (int rank = 0; rank < s.cluster_m * s.cluster_n; rank++) {
      int64_t sregs[HG_SMID + 1] = {0};
      sregs[HG_CLUSTER_CTARANK] = rank;
      sregs[HG_CTAID_X] = rank;
      sregs[HG_NCTAID_X] = s.cluster_m * s.cluster_n;
      const int64_t params[5] = {m, n, batch, t, kb};
      ir_eval_t ev;
      memset(prep_smem, 0xff, sizeof prep_smem); /* written before it is read */
      const ir_eval_hooks_t hooks = {.load = prep_load, .store = prep_store};
      hg_status_t st = ir_eval_run_hooks(b, params, sregs, &hooks, &ev);
      if (!hg_is_ok(&st)) {
        HG_FAIL("trial %d: %s", trial, st.msg);
        bad++;
        break;
      }
      /* rank r is CTA (r % cluster_m, r / cluster_m) of its cluster */
      const int64_t m0 = (u.tm * s.cluster_m + rank % s.cluster_m) * s.tile_m;
      const int64_t n0 = (u.tn * s.cluster_n + rank / s.cluster_m) * s.tile_n;
      const int64_t gm0 = ir_eval_get(&ev, w.m0), gn0 = ir_eval_get(&ev, w.n0);
      const int64_t gl = ir_eval_get(&ev, w.batch), gt = ir_eval_get(&ev, sched.total);
      const int64_t gkf = ir_eval_get(&ev, w.k_first), gkc = ir_eval_get(&ev, w.k_count);
      const int64_t gsp = ir_eval_get(&ev, w.split), gtile = ir_eval_get(&ev, w.tile);
      hg_test_checks++;
      if (gkf != kf || gkc != kc || kc < 1 || gsp != sp || gtile != ct) {
        HG_FAIL("trial %d: unit %lld of %lld splits over %lld k-blocks: split %lld of tile %lld, "
                "k-blocks [%lld, +%lld); expected split %lld of tile %lld, [%lld, +%lld)",
                trial, (long long)t, (long long)splits, (long long)kb, (long long)gsp,
                (long long)gtile, (long long)gkf, (long long)gkc, (long long)sp, (long long)ct,
                (long long)kf, (long long)kc);
        bad++;
      }
      if (gm0 != m0 || gn0 != n0 || gl != u.l || gt != total) {
        HG_FAIL("trial %d (M %lld N %lld batch %lld, tile %dx%d, cluster %dx%d, raster %c%d): "
                "unit %lld rank %d is (m0 %lld, n0 %lld, batch %lld) of %lld units, expected "
                "(%lld, %lld, %lld) of %lld",
                trial, (long long)m, (long long)n, (long long)batch, s.tile_m, s.tile_n,
                s.cluster_m, s.cluster_n, s.raster == HG_RASTER_M ? 'm' : 'n', s.raster_group,
                (long long)t, rank, (long long)gm0, (long long)gn0, (long long)gl, (long long)gt,
                (long long)m0, (long long)n0, (long long)u.l, (long long)total);
        bad++;
      }
      ir_eval_free(&ev);
    }
  }
  hg_builder_destroy(b);
}

static void test_raster_order(void) {
  for (int i = 0; i < 300; i++) one_sched(i);
}

/* hg_divisor_t: q and r of n by d, d prepared at run time (hg_divisor_make) and as constants
 * (hg_divisor_const), equal C's for d and n over the whole range 1 <= d, 0 <= n < 2^31, the
 * edges included (1, powers of two and their neighbours, 2^31 - 1), and select picks one. */
static void test_divisor(void) {
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("divisor", &b));
  hg_val_t pd = hg_b_param(b, HG_T_I32, "d"), pn = hg_b_param(b, HG_T_I32, "n");
  hg_val_t pick = hg_b_param(b, HG_T_I32, "pick");
  const hg_divisor_t dyn = hg_divisor_make(b, pd);
  const hg_divisor_t seven = hg_divisor_const(b, 7);
  const hg_divisor_t sel =
      hg_divisor_select(b, hg_b_cmp(b, HG_NE, pick, hg_b_i32(b, 0)), &dyn, &seven);
  hg_val_t q, r, qs, rs;
  hg_divisor_divmod(b, &dyn, pn, &q, &r);
  hg_divisor_divmod(b, &sel, pn, &qs, &rs);
  CHECK_OK(hg_builder_status(b));
  const int64_t top = ((int64_t)1 << 31) - 1;
  int64_t edges[] = {1,
                     2,
                     3,
                     5,
                     7,
                     8,
                     9,
                     127,
                     128,
                     129,
                     1000,
                     65535,
                     65536,
                     65537,
                     (1 << 24) - 1,
                     1 << 24,
                     (1 << 24) + 1,
                     (1 << 30) - 1,
                     1 << 30,
                     (1 << 30) + 1,
                     top - 1,
                     top};
  const int ne = (int)(sizeof edges / sizeof edges[0]);
  int bad = 0;
  for (int i = 0; i < 4000 && bad < 3; i++) {
    int64_t d = i < ne * ne ? edges[i % ne] : 1 + rnd(rnd(2) ? top : (int64_t)1 << (1 + rnd(30)));
    if (d > top) d = top;
    int64_t n = i < ne * ne ? edges[i / ne] : rnd(rnd(2) ? top + 1 : d * (1 + rnd(9)));
    if (n > top) n = top;
    if (i % 5 == 0) n = top - rnd(3);
    for (int pk = 0; pk < 2; pk++) {
      ir_eval_t ev;
      const int64_t params[3] = {d, n, pk};
      CHECK_OK(ir_eval_run(b, params, NULL, &ev));
      const int64_t dd = pk ? d : 7;
      hg_test_checks++;
      if (ir_eval_get(&ev, q) != n / d || ir_eval_get(&ev, r) != n % d ||
          ir_eval_get(&ev, qs) != n / dd || ir_eval_get(&ev, rs) != n % dd) {
        HG_FAIL("%lld / %lld: q %lld r %lld (select %lld: %lld %lld), expected %lld %lld",
                (long long)n, (long long)d, (long long)ir_eval_get(&ev, q),
                (long long)ir_eval_get(&ev, r), (long long)dd, (long long)ir_eval_get(&ev, qs),
                (long long)ir_eval_get(&ev, rs), (long long)(n / d), (long long)(n % d));
        bad++;
      }
      ir_eval_free(&ev);
    }
  }
  /* constants across the range, by the same formula computed here */
  for (int i = 0; i < 200; i++) {
    const int32_t d = i < ne ? (int32_t)edges[i] : (int32_t)(1 + rnd(top));
    hg_builder_t *c;
    CHECK_OK(hg_builder_create("divisor_const", &c));
    hg_val_t n2 = hg_b_param(c, HG_T_I32, "n");
    const hg_divisor_t k = hg_divisor_const(c, d);
    hg_val_t q2, r2;
    hg_divisor_divmod(c, &k, n2, &q2, &r2);
    for (int j = 0; j < 8; j++) {
      const int64_t n = j == 0 ? top : j == 1 ? 0 : j == 2 ? d - 1 : rnd(top + 1);
      ir_eval_t ev;
      CHECK_OK(ir_eval_run(c, &n, NULL, &ev));
      CHECK_EQ(ir_eval_get(&ev, q2), n / d);
      CHECK_EQ(ir_eval_get(&ev, r2), n % d);
      ir_eval_free(&ev);
    }
    hg_builder_destroy(c);
  }
  hg_builder_destroy(b);
}

/* The persistent loop visits every unit once across the clusters of the grid: each cluster
 * walks id, id + clusters, ... (the loop hg_sched_begin opens), here for a grid of 3
 * clusters of 2 CTAs, counting units by the last index each cluster reaches. */
static void test_loop_bounds(void) {
  hg_sched_spec_t s = {.kind = HG_SCHED_PERSISTENT,
                       .tile_m = 128,
                       .tile_n = 256,
                       .cluster_m = 2,
                       .cluster_n = 1,
                       .raster = HG_RASTER_N,
                       .raster_group = 4};
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("loop", &b));
  hg_cluster2d_t cl;
  CHECK_OK(hg_cluster2d_make(b, 2, 1, &cl));
  hg_val_t pm = hg_b_param(b, HG_T_I32, "m"), pn = hg_b_param(b, HG_T_I32, "n");
  hg_val_t pb = hg_b_param(b, HG_T_I32, "batch");
  hg_sched_t sched;
  CHECK_OK(hg_sched_make(b, &s, &cl, pm, pn, pb, hg_b_i32(b, 1), &sched));
  hg_val_t count = hg_b_var(b, HG_T_I32, hg_b_i32(b, 0));
  hg_val_t t = hg_sched_begin(b, &sched);
  hg_b_assign(b, count, hg_b_bin(b, HG_ADD, count, hg_b_i32(b, 1)));
  hg_sched_end(b, &sched);
  CHECK_OK(hg_builder_status(b));
  (void)t;
  const int64_t params[3] = {1000, 3000, 3}; /* 4 x 12 cluster tiles x 3 = 144 units */
  int64_t units = 0;
  for (int c = 0; c < 3; c++) {
    int64_t sregs[HG_SMID + 1] = {0};
    sregs[HG_CTAID_X] = 2 * c;
    sregs[HG_NCTAID_X] = 6;
    ir_eval_t ev;
    CHECK_OK(ir_eval_run(b, params, sregs, &ev));
    units += ir_eval_get(&ev, count);
    ir_eval_free(&ev);
  }
  CHECK_EQ(units, 144);
  CHECK_EQ(hg_sched_units(&s, 1000, 3000, 3), 144);
  hg_builder_destroy(b);
}

/* ---- the grouped scheduler: its shared-memory tables, binary search and per-group bands,
 * interpreted with one thread (its barriers pass), against a host walk of the same order:
 * group after group, each group's cluster tiles banded as in host_unit. */

typedef struct gmem {
  const int32_t *groups;
  int64_t base; /* the groups array's device address */
  int32_t smem[4096];
} gmem_t;

static int64_t gload(void *ctx, hg_space_t space, int bits, int64_t addr) {
  gmem_t *m = ctx;
  (void)bits;
  if (space == HG_GLOBAL) return m->groups[(addr - m->base) / 4];
  return m->smem[addr / 4];
}
static void gstore(void *ctx, hg_space_t space, int bits, int64_t addr, int64_t v) {
  gmem_t *m = ctx;
  (void)bits;
  if (space == HG_SHARED) m->smem[addr / 4] = (int32_t)v;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

static void one_grouped(int trial) {
  const bool contiguous = rnd(2);
  hg_sched_spec_t s = {.kind = HG_SCHED_GROUPED,
                       .tile_m = 64 << rnd(3),
                       .tile_n = 16 * (1 + (int)rnd(16)),
                       .cluster_m = 1 << rnd(2),
                       .cluster_n = 1 << rnd(2),
                       .raster = rnd(2) ? HG_RASTER_M : HG_RASTER_N,
                       .raster_group = 1 + (int)rnd(rnd(2) ? 3 : 12),
                       .contiguous = contiguous};
  const int groups = 1 + (int)rnd(rnd(4) ? 40 : 300);
  const int max_groups = groups + (int)rnd(5);
  const int64_t n = 1 + rnd(rnd(2) ? 600 : 9000);
  /* row counts: many empty groups, some far above the rest; contiguous ends may step back
   * (clamped: that group is empty) or pass the rows (clamped to them) */
  int32_t *arr = calloc((size_t)groups, 4);
  int64_t starts[300], ends[300], sum = 0;
  for (int g = 0; g < groups; g++) {
    const int64_t cnt = rnd(3) == 0 ? 0 : rnd(8) == 0 ? rnd(3000) : rnd(300);
    sum += cnt;
    arr[g] = (int32_t)(contiguous ? (rnd(20) == 0 ? sum - rnd(500) : sum) : cnt);
  }
  const int64_t rows = contiguous ? (rnd(4) ? sum : 1 + rnd(sum + 1)) : 1 + rnd(2000);
  for (int g = 0; g < groups; g++) {
    if (contiguous) {
      /* a group starts at the previous one's clamped end, and ends no earlier */
      starts[g] = g ? clamp64(arr[g - 1], 0, rows) : 0;
      const int64_t e = clamp64(arr[g], 0, rows);
      ends[g] = e > starts[g] ? e : starts[g];
    } else {
      starts[g] = 0;
      ends[g] = clamp64(arr[g], 0, rows);
    }
  }
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("grouped", &b));
  hg_cluster2d_t cl;
  CHECK_OK(hg_cluster2d_make(b, s.cluster_m, s.cluster_n, &cl));
  hg_val_t prows = hg_b_param(b, HG_T_I32, "rows"), pn = hg_b_param(b, HG_T_I32, "n");
  hg_val_t pg = hg_b_param(b, HG_T_I32, "groups"), pp = hg_b_param(b, HG_T_I64, "ptr");
  hg_val_t pk = hg_b_param(b, HG_T_I32, "kblocks"), pt = hg_b_param(b, HG_T_I32, "t");
  hg_sched_t sched;
  CHECK_OK(hg_sched_make_grouped(b, &s, &cl, prows, pn, pg, max_groups, pp, pk, hg_b_i32(b, 0), 1,
                                 &sched));
  hg_sched_work_t w;
  hg_sched_work(b, &sched, pt, &w);
  CHECK_OK(hg_builder_status(b));
  /* the host walk */
  const int64_t cm = (int64_t)s.tile_m * s.cluster_m, cn = (int64_t)s.tile_n * s.cluster_n;
  const int64_t tn = (n + cn - 1) / cn;
  int64_t total = 0;
  for (int g = 0; g < groups; g++) total += (ends[g] - starts[g] + cm - 1) / cm * tn;
  const int64_t step = total > 600 ? total / 211 + 1 : 1;
  int64_t bad = 0, t = 0;
  for (int g = 0; g < groups && bad < 3; g++) {
    const int64_t tm = (ends[g] - starts[g] + cm - 1) / cm;
    const bool along_m = s.raster == HG_RASTER_M;
    const int64_t inner = along_m ? tm : tn, outer = along_m ? tn : tm;
    for (int64_t bs = 0; bs < outer; bs += s.raster_group) {
      const int64_t width = outer - bs < s.raster_group ? outer - bs : s.raster_group;
      for (int64_t i = 0; i < inner; i++)
        for (int64_t o = bs; o < bs + width; o++, t++) {
          if (t % step != 0 && t != total - 1) continue;
          const int64_t utm = along_m ? i : o, utn = along_m ? o : i;
          const int rank = (int)rnd(s.cluster_m * s.cluster_n);
          int64_t sregs[HG_SMID + 1] = {0};
          sregs[HG_CLUSTER_CTARANK] = rank;
          sregs[HG_CTAID_X] = rank;
          sregs[HG_NCTAID_X] = s.cluster_m * s.cluster_n;
          gmem_t mem = {.groups = arr, .base = 1 << 20};
          const ir_eval_hooks_t hooks = {.ctx = &mem, .load = gload, .store = gstore};
          const int64_t params[6] = {rows, n, groups, mem.base, 7, t};
          ir_eval_t ev;
          hg_status_t st = ir_eval_run_hooks(b, params, sregs, &hooks, &ev);
          if (!hg_is_ok(&st)) {
            HG_FAIL("grouped trial %d: %s", trial, st.msg);
            bad++;
            continue;
          }
          const int64_t m0 = starts[g] + (utm * s.cluster_m + rank % s.cluster_m) * s.tile_m;
          const int64_t n0 = (utn * s.cluster_n + rank / s.cluster_m) * s.tile_n;
          const int64_t gm0 = ir_eval_get(&ev, w.m0), gn0 = ir_eval_get(&ev, w.n0);
          const int64_t gg = ir_eval_get(&ev, w.batch), gend = ir_eval_get(&ev, w.m_end);
          const int64_t gt = ir_eval_get(&ev, sched.total), gkc = ir_eval_get(&ev, w.k_count);
          hg_test_checks++;
          if (gm0 != m0 || gn0 != n0 || gg != g || gend != ends[g] || gt != total || gkc != 7) {
            HG_FAIL("grouped trial %d (%s, %d groups, rows %lld, N %lld, tile %dx%d, cluster "
                    "%dx%d, raster %c%d): unit %lld rank %d is (m0 %lld, n0 %lld, group %lld, "
                    "end %lld) of %lld, expected (%lld, %lld, %d, %lld) of %lld",
                    trial, contiguous ? "contiguous" : "masked", groups, (long long)rows,
                    (long long)n, s.tile_m, s.tile_n, s.cluster_m, s.cluster_n,
                    s.raster == HG_RASTER_M ? 'm' : 'n', s.raster_group, (long long)t, rank,
                    (long long)gm0, (long long)gn0, (long long)gg, (long long)gend, (long long)gt,
                    (long long)m0, (long long)n0, g, (long long)ends[g], (long long)total);
            bad++;
          }
          ir_eval_free(&ev);
        }
    }
  }
  CHECK_EQ(t, total);
  free(arr);
  hg_builder_destroy(b);
}

static void test_grouped(void) {
  for (int i = 0; i < 200; i++) one_grouped(i);
}

/* What the grouped scheduler refuses, with a sentence. */
static void test_grouped_refusals(void) {
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("grouped_bad", &b));
  hg_cluster2d_t cl;
  CHECK_OK(hg_cluster2d_make(b, 1, 1, &cl));
  hg_sched_spec_t s = {.kind = HG_SCHED_GROUPED,
                       .tile_m = 128,
                       .tile_n = 128,
                       .cluster_m = 1,
                       .cluster_n = 1,
                       .raster_group = 4,
                       .splits = 4};
  hg_val_t one = hg_b_i32(b, 1);
  hg_sched_t sched;
  CHECK_ERR(
      hg_sched_make_grouped(b, &s, &cl, one, one, one, 8, hg_b_i64(b, 0), one, one, 1, &sched),
      HG_ERR_UNSUPPORTED, "does not split K");
  s.splits = 0;
  CHECK_ERR(hg_sched_make(b, &s, &cl, one, one, one, one, &sched), HG_ERR_INVALID,
            "hg_sched_make_grouped");
  hg_builder_destroy(b);
}

/* ---- stream-K: the partition of the (tile, k-block) iterations over the grid's clusters,
 * interpreted per cluster (its units' tile and k-block range recorded through the store
 * hook), checked against what the fix-up relies on: every (tile, k-block) computed exactly
 * once; each tile's pieces held by consecutive clusters in k order, the first (k-block 0) by
 * the lowest; a cluster publishes at most one partial, as its first unit, and waits only in
 * its last piece, so waits point to later clusters' first units and cannot cycle; the
 * fix-up's walk (later clusters while their first iteration lies in the tile, the empty
 * ranges skipped) finds exactly the tile's other pieces, in k order; whole tiles come after
 * the shared ones, round-robin; and the shared tiles are hg_sched_streamk_tiles's. */

typedef struct skrec {
  int64_t base;
  int64_t v[3 * 4096];
  int64_t n; /* values stored */
} skrec_t;

static void skstore(void *ctx, hg_space_t space, int bits, int64_t addr, int64_t v) {
  skrec_t *r = ctx;
  (void)bits;
  if (space != HG_GLOBAL) return;
  const int64_t i = (addr - r->base) / 4;
  if (i >= 0 && i < 3 * 4096) r->v[i] = v, r->n = i + 1 > r->n ? i + 1 : r->n;
}

typedef struct piece {
  int64_t cluster, unit, k_first, k_count;
} piece_t;

static void one_streamk(int trial) {
  hg_sched_spec_t s = {.kind = HG_SCHED_PERSISTENT,
                       .tile_m = 64 << rnd(3),
                       .tile_n = 16 * (1 + (int)rnd(16)),
                       .cluster_m = 1 + (int)rnd(2),
                       .cluster_n = 1,
                       .raster = rnd(2) ? HG_RASTER_M : HG_RASTER_N,
                       .raster_group = 1 + (int)rnd(8),
                       .stream_k = true};
  const int64_t kb = 1 + rnd(rnd(3) ? 24 : 200);
  const int64_t m = 1 + rnd(rnd(3) ? 3000 : 20000), n = 1 + rnd(rnd(3) ? 3000 : 20000);
  const int64_t batch = 1 + rnd(3);
  int64_t tiles = hg_sched_units(&s, m, n, batch);
  if (tiles * kb > 200000) return; /* the coverage bitmap stays small */
  /* the grid's clusters: some of a 132- or 114-SM GPU, or more than the iterations */
  int64_t g = rnd(4) == 0 ? 1 + rnd(tiles * kb + 3) : (rnd(2) ? 132 : 114) / s.cluster_m;
  if (rnd(5) == 0) g = hg_sched_streamk_clusters(&s, m, n, batch, kb, g);
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("sk", &b));
  hg_cluster2d_t cl;
  CHECK_OK(hg_cluster2d_make(b, s.cluster_m, s.cluster_n, &cl));
  hg_val_t pm = hg_b_param(b, HG_T_I32, "m"), pn = hg_b_param(b, HG_T_I32, "n");
  hg_val_t pb = hg_b_param(b, HG_T_I32, "batch"), pk = hg_b_param(b, HG_T_I32, "kblocks");
  hg_val_t out = hg_b_param(b, HG_T_I64, "out"), pc = hg_b_param(b, HG_T_I32, "c");
  hg_sched_t sched;
  CHECK_OK(hg_sched_make(b, &s, &cl, pm, pn, pb, pk, &sched));
  hg_val_t start_c = hg_sched_streamk_start(b, &sched, pc);
  hg_val_t t = hg_sched_begin(b, &sched);
  {
    hg_sched_work_t w;
    hg_sched_work(b, &sched, t, &w);
    const hg_val_t vals[3] = {w.tile, w.k_first, w.k_count};
    for (int i = 0; i < 3; i++)
      hg_b_store(b, HG_GLOBAL, 32, 1,
                 hg_b_mad(b, hg_b_sext(b, hg_b_mad(b, t, hg_b_i32(b, 3), hg_b_i32(b, i))),
                          hg_b_i64(b, 4), out),
                 &vals[i]);
  }
  hg_sched_end(b, &sched);
  CHECK_OK(hg_builder_status(b));
  const int64_t shared = hg_sched_streamk_tiles(tiles, g), iters = shared * kb;
  uint8_t *seen = calloc((size_t)(tiles * kb), 1);
  piece_t *pieces = calloc((size_t)(shared * (g + 2) + 1), sizeof *pieces); /* per tile */
  int64_t *npieces = calloc((size_t)shared + 1, sizeof *npieces);
  int64_t *whole_next = calloc((size_t)g, sizeof *whole_next);
  int bad = 0;
  skrec_t *rec = malloc(sizeof *rec);
  for (int64_t c = 0; c < g && !bad; c++) {
    int64_t sregs[HG_SMID + 1] = {0};
    sregs[HG_CTAID_X] = c * s.cluster_m;
    sregs[HG_NCTAID_X] = g * s.cluster_m;
    const int64_t params[6] = {m, n, batch, kb, 1 << 20, c};
    rec->base = 1 << 20;
    rec->n = 0;
    ir_eval_hooks_t hooks = {.ctx = rec, .store = skstore};
    ir_eval_t ev;
    hg_status_t st = ir_eval_run_hooks(b, params, sregs, &hooks, &ev);
    if (!hg_is_ok(&st)) {
      HG_FAIL("trial %d: %s", trial, st.msg);
      break;
    }
    hg_test_checks++;
    const int64_t units = ir_eval_get(&ev, sched.total),
                  sk_units = ir_eval_get(&ev, sched.sk_units);
    if (ir_eval_get(&ev, sched.sk_tiles) != shared || ir_eval_get(&ev, sched.sk_iters) != iters ||
        ir_eval_get(&ev, start_c) != c * iters / g || rec->n != 3 * units) {
      HG_FAIL("trial %d: cluster %lld of %lld: %lld shared tiles (%lld expected), start %lld "
              "(%lld), %lld values stored for %lld units",
              trial, (long long)c, (long long)g, (long long)ir_eval_get(&ev, sched.sk_tiles),
              (long long)shared, (long long)ir_eval_get(&ev, start_c), (long long)(c * iters / g),
              (long long)rec->n, (long long)units);
      bad++;
    }
    for (int64_t u = 0; u < units && !bad; u++) {
      const int64_t tile = rec->v[3 * u], kf = rec->v[3 * u + 1], kc = rec->v[3 * u + 2];
      if (tile < 0 || tile >= tiles || kf < 0 || kc < 1 || kf + kc > kb) {
        HG_FAIL("trial %d: cluster %lld unit %lld: tile %lld k-blocks [%lld, +%lld) of %lld "
                "tiles x %lld",
                trial, (long long)c, (long long)u, (long long)tile, (long long)kf, (long long)kc,
                (long long)tiles, (long long)kb);
        bad++;
        break;
      }
      for (int64_t k = kf; k < kf + kc; k++) bad += seen[tile * kb + k]++ ? 1 : 0;
      if (u < sk_units) {
        /* shared: pieces in order; a partial only first, a wait only last */
        if (tile >= shared || (kf > 0 && u != 0) || (kf == 0 && kc < kb && u != sk_units - 1)) {
          bad++;
          HG_FAIL("trial %d: cluster %lld piece %lld of %lld: tile %lld [%lld, +%lld)", trial,
                  (long long)c, (long long)u, (long long)sk_units, (long long)tile, (long long)kf,
                  (long long)kc);
        } else {
          pieces[tile * (g + 2) + npieces[tile]++] = (piece_t){c, u, kf, kc};
        }
      } else if (tile != shared + c + whole_next[c]++ * g || kf != 0 || kc != kb) {
        bad++;
        HG_FAIL("trial %d: cluster %lld whole unit %lld is tile %lld [%lld, +%lld)", trial,
                (long long)c, (long long)u, (long long)tile, (long long)kf, (long long)kc);
      }
    }
    ir_eval_free(&ev);
  }
  for (int64_t i = 0; i < tiles * kb && !bad; i++)
    if (seen[i] != 1) {
      bad++;
      HG_FAIL("trial %d: tile %lld k-block %lld computed %d times (G %lld, kb %lld)", trial,
              (long long)(i / kb), (long long)(i % kb), seen[i], (long long)g, (long long)kb);
    }
  /* the fix-up's walk for each shared tile, against its pieces */
  for (int64_t tl = 0; tl < shared && !bad; tl++) {
    const piece_t *p = &pieces[tl * (g + 2)];
    int64_t at = 1, k_next = p[0].k_count;
    if (p[0].k_first != 0) bad++;
    for (int64_t c = p[0].cluster + 1; c < g && c * iters / g < (tl + 1) * kb; c++) {
      if (c * iters / g == (c + 1) * iters / g) continue; /* empty range */
      if (at >= npieces[tl] || p[at].cluster != c || p[at].k_first != k_next) {
        bad++;
        break;
      }
      k_next += p[at++].k_count;
    }
    if (!bad && (at != npieces[tl] || k_next != kb)) bad++;
    if (bad)
      HG_FAIL("trial %d: shared tile %lld of %lld: its %lld pieces are not what the fix-up "
              "walks from cluster %lld",
              trial, (long long)tl, (long long)shared, (long long)npieces[tl],
              (long long)p[0].cluster);
  }
  free(rec);
  free(seen);
  free(pieces);
  free(npieces);
  free(whole_next);
  hg_builder_destroy(b);
}

static void test_streamk(void) {
  for (int i = 0; i < 200; i++) one_streamk(i);
  /* the host rule: none for whole waves, all for less than one, else the partial wave and one
   * full wave */
  CHECK_EQ(hg_sched_streamk_tiles(264, 132), 0);
  CHECK_EQ(hg_sched_streamk_tiles(100, 132), 100);
  CHECK_EQ(hg_sched_streamk_tiles(280, 132), 148);
  CHECK_EQ(hg_sched_streamk_tiles(133, 132), 133);
}

static void test_streamk_refusals(void) {
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("skr", &b));
  hg_cluster2d_t cl;
  CHECK_OK(hg_cluster2d_make(b, 1, 1, &cl));
  hg_val_t one = hg_b_i32(b, 1);
  hg_sched_spec_t s = {.kind = HG_SCHED_PERSISTENT,
                       .tile_m = 128,
                       .tile_n = 128,
                       .cluster_m = 1,
                       .cluster_n = 1,
                       .raster_group = 1,
                       .splits = 4,
                       .stream_k = true};
  hg_sched_t sched;
  CHECK_ERR(hg_sched_make(b, &s, &cl, one, one, one, one, &sched), HG_ERR_UNSUPPORTED,
            "not with split-K (4 splits)");
  hg_builder_destroy(b);
}

int main(void) {
  HG_RUN(test_divisor);
  HG_RUN(test_grouped);
  HG_RUN(test_grouped_refusals);
  HG_RUN(test_raster_order);
  HG_RUN(test_loop_bounds);
  HG_RUN(test_streamk);
  HG_RUN(test_streamk_refusals);
  return hg_test_finish();
}
