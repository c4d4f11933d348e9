/* TMA copy kernels (the classic CuTe TMA tutorial): load, prefetch + load, multicast load,
 * store and reduce of one tile per CTA, generated through the builder from a TMA plan.
 *
 * The plan (hg_tma_plan_make) says which boxes fill the tile, where each lands in the
 * stage buffer and how a cluster slices them; this file only turns it into a kernel: one
 * elected thread issues the boxes, an mbarrier counts the bytes, and the other threads
 * poison, dump or fill the stage buffer so the host can compare every byte with the CPU
 * model (sm90.h). Stores and reductions send a box through TMA only when none of its
 * coordinates is negative (an H200 raises an illegal instruction otherwise, see
 * docs/hardware-notes.md); every thread writes the other boxes' in-bounds elements without
 * TMA. Generation is pure; tma_run.c runs and checks the kernels. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hopgen/kernels.h"
#include "kernels/tma_internal.h"

/* 128 threads: a warpgroup, as the tutorial's kernels use; only warp 0 issues TMA, all
 * threads poison, dump and fill the stage buffer 16 bytes at a time. */
#define TMA_THREADS 128

/* The watchdog of the mbarrier wait, in SM clock cycles (clock64): about 5 s at 1.7 GHz.
 * A transaction count that never reaches zero (a plan/model disagreement, a box that
 * never lands) would otherwise hang the process; after this many cycles the CTA records
 * HG_TMA_STATUS_TIMEOUT, still dumps and joins the cluster barrier, so the host can say
 * which CTA starved. Far above any real TMA latency, compute-sanitizer included. */
#define TMA_WAIT_CYCLES (INT64_C(1) << 33)

/* ---------------------------------------------------------------- specs */

hg_tma_spec_t hg_tma_spec_default(hg_tma_op_t op) {
  hg_tma_spec_t s;
  memset(&s, 0, sizeof s);
  s.op = op;
  s.dtype = HG_F16;
  s.rank = 2;
  s.shape[0] = s.shape[1] = 256;
  s.tile[0] = s.tile[1] = 64;
  s.grid[0] = s.grid[1] = 1;
  s.cluster = 1;
  s.swizzle = HG_SWIZZLE_128B;
  return s;
}

static int64_t ceil_div(int64_t a, int64_t b) {
  return a <= 0 ? 0 : (a + b - 1) / b;
}

hg_status_t hg_tma_spec_normalize(hg_tma_spec_t *s) {
  if (!s) return hg_error(HG_ERR_INVALID, "no TMA spec given");
  if ((int)s->op < 0 || s->op >= HG_TMA_OP_COUNT)
    return hg_error(HG_ERR_INVALID, "TMA operation %d is not known", (int)s->op);
  if ((int)s->dtype < 0 || s->dtype >= HG_DTYPE_COUNT)
    return hg_error(HG_ERR_INVALID, "element type %d is not known", (int)s->dtype);
  const int e = hg_dtype_bytes(s->dtype);
  if (e != 1 && e != 2 && e != 4)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "the TMA copy kernels take 8, 16 or 32-bit element types, not %s (%d B)",
                    hg_dtype_name(s->dtype), e);
  if (s->rank < 1 || s->rank > HG_TMA_MAX_RANK)
    return hg_error(HG_ERR_INVALID, "rank %d is outside 1..%d (TMA tensor maps)", s->rank,
                    HG_TMA_MAX_RANK);
  const int r = s->rank;
  if (s->cluster == 0) s->cluster = 1;
  if (s->cluster < 1 || s->cluster > HG_TMA_MAX_CLUSTER)
    return hg_error(HG_ERR_INVALID,
                    "a cluster of %d CTAs is outside 1..16 (the multicast mask has 16 bits)",
                    s->cluster);
  if (s->cluster > 1 && s->op != HG_TMA_LOAD)
    return hg_error(HG_ERR_INVALID,
                    "a cluster of %d is for multicast loads; a %s is issued by each CTA for its "
                    "own tile (use cluster 1)",
                    s->cluster, hg_tma_op_name(s->op));
  if (hg_tma_op_is_reduce(s->op)) HG_TRY(hg_tma_reduce_check(s->op, s->dtype));
  if (s->oob_nan && s->op != HG_TMA_LOAD && s->op != HG_TMA_PREFETCH)
    return hg_error(HG_ERR_INVALID, "NaN fill applies to loads; a %s skips out-of-bounds elements",
                    hg_tma_op_name(s->op));
  if ((int)s->swizzle < 0 || (int)s->swizzle > 3)
    return hg_error(HG_ERR_INVALID, "swizzle mode %d is not none, 32B, 64B or 128B",
                    (int)s->swizzle);
  bool any_stride = false;
  for (int m = 0; m < r; m++) {
    if (s->shape[m] < 1 || s->shape[m] > (INT64_C(1) << 32))
      return hg_error(HG_ERR_INVALID,
                      "the tensor's extent along mode %d is %" PRId64 "; TMA takes 1..2^32", m,
                      s->shape[m]);
    if (s->tile[m] < 1 || s->tile[m] > 65536)
      return hg_error(HG_ERR_INVALID, "the tile's extent along mode %d is %d; it must be 1..65536",
                      m, s->tile[m]);
    if (s->stride[m] < 0)
      return hg_error(HG_ERR_INVALID, "the stride of mode %d is %" PRId64 "; strides are >= 0", m,
                      s->stride[m]);
    if (s->stride[m]) any_stride = true;
    if (s->grid[m] < 0)
      return hg_error(HG_ERR_INVALID,
                      "the grid has %d tiles along mode %d; give >= 1 (0: enough to reach the "
                      "end of the tensor)",
                      s->grid[m], m);
  }
  if (!any_stride) {
    /* Packed row-major: the last mode contiguous, as a C array [shape0][shape1]... */
    int64_t acc = 1;
    for (int m = r - 1; m >= 0; m--) {
      s->stride[m] = acc;
      if (acc > (INT64_C(1) << 40) / s->shape[m])
        return hg_error(HG_ERR_OVERFLOW, "the packed tensor of this shape exceeds 2^40 elements");
      acc *= s->shape[m];
    }
  } else {
    for (int m = 0; m < r; m++)
      if (s->stride[m] == 0)
        return hg_error(HG_ERR_INVALID,
                        "the stride of mode %d is 0 while others are given: give every stride "
                        "(or none, for packed row-major)",
                        m);
  }
  for (int m = r; m < HG_TMA_MAX_RANK; m++) {
    s->shape[m] = 0;
    s->stride[m] = 0;
    s->tile[m] = 0;
    s->grid[m] = 0;
    s->origin[m] = 0;
  }
  int64_t tiles = 1;
  for (int m = 0; m < r; m++) {
    if (s->grid[m] == 0) {
      /* auto: tiles from the origin until the end of the tensor is covered */
      int64_t g = ceil_div(s->shape[m] - (int64_t)s->origin[m], s->tile[m]);
      s->grid[m] = (int)(g < 1 ? 1 : g > 65536 ? 65536 : g);
    }
    /* Every box coordinate is a signed 32-bit TMA operand: the last tile must end in range. */
    const int64_t end = (int64_t)s->origin[m] + (int64_t)s->grid[m] * s->tile[m];
    if (end - 1 > INT32_MAX)
      return hg_error(HG_ERR_OVERFLOW,
                      "the grid's last tile along mode %d ends at %" PRId64
                      ", beyond the signed 32-bit range of TMA coordinates",
                      m, end - 1);
    tiles *= s->grid[m];
    if (tiles * s->cluster > INT32_MAX)
      return hg_error(HG_ERR_INVALID, "the grid has %" PRId64 " CTAs, more than 2^31 - 1",
                      tiles * s->cluster);
  }
  return hg_ok();
}

int64_t hg_tma_spec_tiles(const hg_tma_spec_t *s) {
  int64_t t = 1;
  for (int m = 0; m < s->rank; m++) t *= s->grid[m] > 0 ? s->grid[m] : 1;
  return t;
}

uint64_t hg_tma_spec_tensor_bytes(const hg_tma_spec_t *s) {
  uint64_t last = 0;
  for (int m = 0; m < s->rank; m++) last += (uint64_t)(s->shape[m] - 1) * (uint64_t)s->stride[m];
  return (last + 1) * (uint64_t)hg_dtype_bytes(s->dtype);
}

int64_t hg_tma_spec_fallback_boxes(const hg_tma_spec_t *s, const hg_tma_plan_t *p) {
  if (p->op != HG_TMA_STORE && !hg_tma_op_is_reduce(p->op)) return 0;
  const int64_t tiles = hg_tma_spec_tiles(s);
  const int m0 = p->tmap_mode[0];
  /* A store clips dimension 0 at 16-byte granularity (hg_tma_box_issuable): when its extent
   * in bytes is not a multiple of 16, a box running past its end goes without TMA too. */
  const bool ragged = (s->shape[m0] * hg_dtype_bytes(s->dtype)) % 16 != 0;
  int64_t total = 0;
  for (int i = 0; i < p->num_boxes; i++) {
    /* Along mode m the box of tile q starts at origin + q * tile + coord: non-negative from
     * q = ceil(-(origin + coord) / tile) on, and (dimension 0 of a ragged extent) within the
     * extent up to q = floor((extent - origin - coord - box) / tile). The box goes through
     * TMA in the tiles inside both ranges in every mode. */
    int64_t tma_tiles = 1;
    for (int d = 0; d < p->map.rank; d++) {
      const int m = p->tmap_mode[d];
      const int64_t start = (int64_t)s->origin[m] + p->box[i].coord[d];
      const int64_t need = -start;
      int64_t first = need <= 0 ? 0 : (need + s->tile[m] - 1) / s->tile[m];
      if (first > s->grid[m]) first = s->grid[m];
      int64_t end = s->grid[m]; /* tiles [first, end) go through TMA along this mode */
      if (d == 0 && ragged) {
        const int64_t room = s->shape[m] - start - (int64_t)p->map.box_dim[0];
        end = room < 0 ? 0 : room / s->tile[m] + 1;
        if (end > s->grid[m]) end = s->grid[m];
      }
      tma_tiles *= end > first ? end - first : 0;
    }
    total += tiles - tma_tiles;
  }
  return total;
}

static int print_list64(char *buf, size_t size, int n, const int64_t *v) {
  int k = snprintf(buf, size, "[");
  for (int i = 0; i < n; i++)
    k += snprintf(buf + (k < (int)size ? k : (int)size), (size_t)k < size ? size - (size_t)k : 0,
                  "%s%" PRId64, i ? "," : "", v[i]);
  k +=
      snprintf(buf + (k < (int)size ? k : (int)size), (size_t)k < size ? size - (size_t)k : 0, "]");
  return k;
}

int hg_tma_spec_print(const hg_tma_spec_t *s, char *buf, size_t size) {
  int64_t shape[HG_TMA_MAX_RANK] = {0}, stride[HG_TMA_MAX_RANK] = {0}, tile[HG_TMA_MAX_RANK] = {0},
          grid[HG_TMA_MAX_RANK] = {0}, origin[HG_TMA_MAX_RANK] = {0};
  const int r = s->rank >= 1 && s->rank <= HG_TMA_MAX_RANK ? s->rank : 0;
  for (int m = 0; m < r; m++) {
    shape[m] = s->shape[m];
    stride[m] = s->stride[m];
    tile[m] = s->tile[m];
    grid[m] = s->grid[m];
    origin[m] = s->origin[m];
  }
  char a[96], b[96], c[96], d[96], e[96];
  print_list64(a, sizeof a, r, shape);
  print_list64(b, sizeof b, r, stride);
  print_list64(c, sizeof c, r, tile);
  bool auto_grid = true;
  for (int m = 0; m < r; m++) auto_grid = auto_grid && grid[m] == 0;
  if (auto_grid)
    snprintf(d, sizeof d, "auto");
  else
    print_list64(d, sizeof d, r, grid);
  print_list64(e, sizeof e, r, origin);
  const bool mc = s->op == HG_TMA_LOAD && s->cluster > 1;
  char cl[32] = "";
  if (mc) snprintf(cl, sizeof cl, " cluster %d", s->cluster);
  return snprintf(buf, size, "%s %s shape %s strides %s tile %s grid %s origin %s swizzle %s%s%s",
                  mc ? "multicast" : hg_tma_op_name(s->op), hg_dtype_name(s->dtype), a, b, c, d, e,
                  hg_swizzle_mode_name(s->swizzle), cl, s->oob_nan ? " nan-fill" : "");
}

/* ---------------------------------------------------------------- plan */

hg_status_t hg_tma_spec_plan(const hg_tma_spec_t *s, hg_tma_plan_t *p) {
  hg_tma_tensor_t g;
  memset(&g, 0, sizeof g);
  g.dtype = s->dtype;
  g.rank = s->rank;
  for (int m = 0; m < s->rank; m++) {
    g.shape[m] = s->shape[m];
    g.stride[m] = s->stride[m];
  }
  /* hg_tma_run allocates with cuMemAlloc (256-byte aligned); library users must give a
   * 16-byte aligned base, which hg_rt_tensormap_encode checks. */
  g.base_align_bytes = 16;
  hg_composed_t smem;
  HG_TRY(hg_status_wrap(hg_tma_smem_layout(&g, s->tile, s->swizzle, &smem),
                        "the stage buffer of the tile: "));
  /* The prefetch kernel loads the tile after prefetching it: it needs the load's plan (its
   * transaction count) for the same boxes. */
  hg_tma_options_t o = hg_tma_options_default(s->op == HG_TMA_PREFETCH ? HG_TMA_LOAD : s->op);
  o.cluster = s->cluster;
  o.oob_nan = s->oob_nan;
  /* Tile (0,...,0) starts at the origin and every tile is a whole number of inner boxes
   * further, so checking the origin checks the 16-byte innermost rule for every tile. */
  o.origin_known = true;
  for (int m = 0; m < s->rank; m++) o.origin[m] = s->origin[m];
  HG_TRY(hg_tma_plan_make(&g, &smem, &o, p));
  return hg_ok();
}

/* ---------------------------------------------------------------- generator */

/* A kernel name that says what it is ("hg_tma_load_f16_64x64_sw128_mc2"); [A-Za-z0-9_]. */
static void kernel_name(const hg_tma_spec_t *s, char *buf, size_t size) {
  char op[24];
  snprintf(op, sizeof op, "%s", hg_tma_op_name(s->op));
  for (char *c = op; *c; c++)
    if (*c == '-') *c = '_';
  int n = snprintf(buf, size, "hg_tma_%s_%s_", op, hg_dtype_name(s->dtype));
  for (int m = 0; m < s->rank && n > 0 && (size_t)n < size; m++)
    n += snprintf(buf + n, size - (size_t)n, "%s%d", m ? "x" : "", s->tile[m]);
  if (n > 0 && (size_t)n < size)
    n += snprintf(buf + n, size - (size_t)n, "_sw%d", hg_swizzle_mode_bytes(s->swizzle));
  if (s->cluster > 1 && n > 0 && (size_t)n < size)
    n += snprintf(buf + n, size - (size_t)n, "_mc%d", s->cluster);
  if (s->oob_nan && n > 0 && (size_t)n < size) snprintf(buf + n, size - (size_t)n, "_nan");
}

typedef struct tma_gen {
  hg_builder_t *b;
  const hg_tma_spec_t *s;
  const hg_tma_plan_t *p;
  hg_val_t map, buf, status;
  hg_val_t origin[HG_TMA_MAX_RANK], tiles[HG_TMA_MAX_RANK];
  /* stores and reductions: the tensor itself, for boxes TMA cannot take */
  hg_val_t gmem, extent[HG_TMA_MAX_RANK], stride_bytes[HG_TMA_MAX_RANK];
  hg_val_t stage, tid;
  hg_val_t tile_origin[HG_TMA_MAX_RANK]; /* this CTA's tile, per tensor mode */
} tma_gen_t;

/* One parameter per mode of the tensor: prefix0, prefix1, ... */
static void param_per_mode(tma_gen_t *g, hg_type_t t, const char *prefix, hg_val_t *out) {
  for (int m = 0; m < g->s->rank; m++) {
    char name[16];
    snprintf(name, sizeof name, "%s%d", prefix, m);
    out[m] = hg_b_param(g->b, t, name);
  }
}

/* Parameters in the documented order: map, buffer, status, origins, tile counts. */
static void params(tma_gen_t *g, const char *buf_name) {
  hg_builder_t *b = g->b;
  g->map = hg_b_param_tmap(b, "tmap");
  g->buf = hg_b_param(b, HG_T_I64, buf_name);
  g->status = hg_b_param(b, HG_T_I64, "status");
  param_per_mode(g, HG_T_I32, "origin", g->origin);
  param_per_mode(g, HG_T_I32, "tiles", g->tiles);
}

/* Stores and reductions, after the common parameters: the tensor's base address, per mode
 * its extent and its stride in bytes (I64), which the element-wise fallback addresses the
 * tensor with (the tensor map holds the same, but opaquely). */
static void params_tensor(tma_gen_t *g) {
  hg_builder_t *b = g->b;
  g->gmem = hg_b_param(b, HG_T_I64, "gmem");
  param_per_mode(g, HG_T_I64, "extent", g->extent);
  param_per_mode(g, HG_T_I64, "stride", g->stride_bytes);
}

/* The tile this CTA moves: index t (mode 0 fastest over the grid's tile counts), origin
 * + t_m * tile_m per mode, all signed 32-bit. */
static void tile_origin(tma_gen_t *g, hg_val_t index) {
  hg_builder_t *b = g->b;
  hg_val_t t = index;
  for (int m = 0; m < g->s->rank; m++) {
    hg_val_t q = hg_b_bin(b, HG_REM_U, t, g->tiles[m]);
    if (m + 1 < g->s->rank) t = hg_b_bin(b, HG_DIV_U, t, g->tiles[m]);
    g->tile_origin[m] = hg_b_mad(b, q, hg_b_i32(b, g->s->tile[m]), g->origin[m]);
    char name[16];
    snprintf(name, sizeof name, "tile_org%d", m);
    hg_b_name(b, g->tile_origin[m], name);
  }
}

/* for (i = tid * 16; i < bytes; i += threads * 16): body(i). Stage buffers are multiples
 * of 16 bytes (box rows are), so 16-byte vectors cover them exactly. */
static hg_val_t for_each_16(tma_gen_t *g, uint32_t bytes) {
  hg_builder_t *b = g->b;
  hg_val_t start = hg_b_bin(b, HG_SHL, g->tid, hg_b_i32(b, 4));
  return hg_b_for(b, start, hg_b_i32(b, (int32_t)bytes), hg_b_i32(b, TMA_THREADS * 16));
}

/* The elected thread of warp 0 (elect.sync needs the whole warp, so the branch is on the
 * warp first). Closed with hg_elect_end. */
static void begin_elected(tma_gen_t *g) {
  hg_elect_begin(g->b, hg_b_cmp(g->b, HG_LT_U, g->tid, hg_b_i32(g->b, 32)));
}

/* Thread 0 writes the CTA's status word: the host learns that the CTA finished and
 * whether its wait timed out. */
static void write_status(tma_gen_t *g, hg_val_t cta, hg_val_t value) {
  hg_builder_t *b = g->b;
  hg_b_if(b, hg_b_cmp(b, HG_EQ, g->tid, hg_b_i32(b, 0)));
  hg_val_t addr =
      hg_b_bin(b, HG_ADD, g->status, hg_b_bin(b, HG_MUL, hg_b_zext(b, cta), hg_b_i64(b, 4)));
  hg_b_store(b, HG_GLOBAL, 0, 1, addr, &value);
  hg_b_endif(b);
}

static void build_load(tma_gen_t *g) {
  hg_builder_t *b = g->b;
  const hg_tma_plan_t *p = g->p;
  const int C = p->cluster;
  const bool prefetch = g->s->op == HG_TMA_PREFETCH;
  if (C > 1) hg_b_set_cluster(b, C, 1, 1);
  params(g, "dump");
  const uint32_t align = p->smem_align_bytes > 128 ? p->smem_align_bytes : 128;
  const uint32_t stage_off = hg_b_smem_reserve(b, p->smem_bytes, align);
  const uint32_t bar_off = hg_b_smem_reserve(b, 8, 8);
  g->stage = hg_b_smem_addr(b, stage_off);
  hg_val_t bar = hg_b_smem_addr(b, bar_off);
  g->tid = hg_b_sreg(b, HG_TID_X);
  hg_val_t cta = hg_b_sreg(b, HG_CTAID_X);

  hg_b_comment(b, "poison the stage buffer, so that a byte TMA never writes shows up");
  {
    hg_val_t i = for_each_16(g, p->smem_bytes);
    hg_val_t poison = hg_b_i32(b, (int32_t)(HG_TMA_POISON * 0x01010101u));
    hg_val_t v[4] = {poison, poison, poison, poison};
    hg_b_store(b, HG_SHARED, 0, 4, hg_b_bin(b, HG_ADD, g->stage, i), v);
    hg_b_endfor(b);
  }
  hg_b_comment(b, "one thread initialises the mbarrier (one arrival: the issuing thread)");
  hg_b_if(b, hg_b_cmp(b, HG_EQ, g->tid, hg_b_i32(b, 0)));
  hg_b_mbar_init(b, bar, hg_b_i32(b, 1));
  /* PTX ISA fence.mbarrier_init: makes the init visible to the cluster, whose CTAs'
   * multicast complete_tx will signal this barrier. */
  if (C > 1) hg_b_fence_mbarrier_init(b);
  hg_b_endif(b);
  /* PTX ISA "Proxies": the poison stores (generic proxy) must be ordered before the TMA
   * writes (async proxy) into the same bytes. */
  hg_b_fence_proxy_async(b);
  if (C > 1) {
    hg_b_comment(b, "cluster barrier: every CTA's mbarrier is initialised and its buffer "
                    "poisoned before any CTA multicasts into it");
    hg_b_cluster_arrive(b, false);
    hg_b_cluster_wait(b);
  } else {
    hg_b_bar_sync(b, 0, 0);
  }

  tile_origin(g, C > 1 ? hg_b_sreg(b, HG_CLUSTERID_X) : cta);

  hg_b_comment(b, "one elected thread: expect the tile's bytes, issue the boxes");
  begin_elected(g);
  hg_b_mbar_arrive_expect_tx(b, bar, hg_b_i32(b, (int32_t)p->expect_tx_bytes));
  if (prefetch) hg_tma_copy_prefetch(b, p, g->map, g->tile_origin);
  /* With a cluster, CTA r issues its slice of the boxes to every CTA (mask of all C): each
   * box lands at the same stage offset, and signals the same barrier, in every CTA. */
  hg_tma_copy_load(b, p, g->map, g->stage, bar, g->tile_origin,
                   C > 1 ? hg_b_sreg(b, HG_CLUSTER_CTARANK) : HG_NONE,
                   C > 1 ? hg_b_i32(b, (int32_t)p->mcast_mask) : HG_NONE, HG_NONE);
  hg_elect_end(b);

  hg_b_comment(b, "every thread waits for phase 0 (bounded: a starved barrier is reported)");
  hg_val_t status = hg_b_var(b, HG_T_I32, hg_b_i32(b, HG_TMA_STATUS_DONE));
  hg_val_t start = hg_b_clock64(b);
  hg_b_loop(b);
  {
    hg_b_break_if(b, hg_b_mbar_try_wait(b, bar, hg_b_i32(b, 0)));
    hg_val_t late = hg_b_cmp(b, HG_GT_S, hg_b_bin(b, HG_SUB, hg_b_clock64(b), start),
                             hg_b_i64(b, TMA_WAIT_CYCLES));
    hg_b_if(b, late);
    hg_b_assign(b, status, hg_b_i32(b, HG_TMA_STATUS_TIMEOUT));
    hg_b_endif(b);
    hg_b_break_if(b, late);
  }
  hg_b_endloop(b);

  hg_b_comment(b, "dump the whole stage buffer: dump + ctaid * smem_bytes");
  {
    hg_val_t base = hg_b_bin(b, HG_ADD, g->buf,
                             hg_b_bin(b, HG_MUL, hg_b_zext(b, cta), hg_b_i64(b, p->smem_bytes)));
    hg_val_t i = for_each_16(g, p->smem_bytes);
    hg_val_t v[4];
    hg_b_load(b, HG_SHARED, HG_T_I32, 0, 4, hg_b_bin(b, HG_ADD, g->stage, i), v);
    hg_b_store(b, HG_GLOBAL, 0, 4, hg_b_bin(b, HG_ADD, base, hg_b_zext(b, i)), v);
    hg_b_endfor(b);
  }
  write_status(g, cta, status);
  if (C > 1) {
    /* CUDA Programming Guide, "Distributed Shared Memory": a CTA must not exit while others
     * of its cluster may still access its shared memory. */
    hg_b_comment(b, "no CTA leaves while a peer's multicast may still target it");
    hg_b_cluster_arrive(b, false);
    hg_b_cluster_wait(b);
  }
}

/* Whether dimension 0's extent (run time) is not a multiple of 16 bytes: then a TMA store
 * running past its end would write up to the next 16-byte boundary (hg_tma_box_issuable). */
static hg_val_t ragged_extent_of(hg_builder_t *b, const hg_tma_plan_t *p, const hg_val_t *extent) {
  const int e = hg_dtype_bytes(p->map.dtype);
  hg_val_t bytes = hg_b_bin(b, HG_MUL, extent[p->tmap_mode[0]], hg_b_i64(b, e));
  return hg_b_cmp(b, HG_NE, hg_b_bin(b, HG_AND, bytes, hg_b_i64(b, 15)), hg_b_i64(b, 0));
}

/* ragged && a box starting at coordinate c0 (I32) along dimension 0 runs past its end. */
static hg_val_t past_ragged_end(hg_builder_t *b, const hg_tma_plan_t *p, hg_val_t ragged,
                                hg_val_t c0, const hg_val_t *extent) {
  hg_val_t end = hg_b_bin(b, HG_ADD, hg_b_sext(b, c0), hg_b_i64(b, p->map.box_dim[0]));
  return hg_b_bin(b, HG_AND, ragged, hg_b_cmp(b, HG_GT_S, end, extent[p->tmap_mode[0]]));
}

/* The smallest of n I32 values (signed). */
static hg_val_t min_of(hg_builder_t *b, const hg_val_t *v, int n) {
  hg_val_t m = v[0];
  for (int i = 1; i < n; i++) m = hg_b_bin(b, HG_MIN_S, m, v[i]);
  return m;
}

/* Element i of the tile (tma_internal.h): tensor-map dimension 0 fastest, so that
 * consecutive threads take consecutive addresses. Element x of the tile (x_d along
 * tensor-map dimension d, of tensor mode m = tmap_mode[d]) belongs to the box whose
 * coordinate along d is tile_origin[m] + (x_d / box_d) * box_d, so the per-box decision the
 * elected thread makes for TMA is re-made per element, with no loop over boxes; its value
 * is where the plan's composed layout puts tile coordinate x (swizzle included), which is
 * where TMA would read it (hg_tma_plan_make checks that layout against the boxes). */
hg_status_t hg_tma_emit_fallback_element(hg_builder_t *b, const hg_tma_plan_t *p,
                                         const hg_tma_fallback_in_t *in, hg_val_t i,
                                         hg_tma_fallback_elem_t *out) {
  const int r = p->map.rank, e = hg_dtype_bytes(p->map.dtype);
  hg_val_t x[HG_TMA_MAX_RANK] = {0};   /* per tensor mode: the element's tile coordinate */
  hg_val_t box[HG_TMA_MAX_RANK] = {0}; /* per tensor-map dimension: its box's coordinate */
  hg_val_t inb = HG_NONE;
  hg_val_t gaddr = in->gmem;
  int64_t div = 1;
  for (int d = 0; d < r; d++) {
    const int m = p->tmap_mode[d];
    hg_val_t q = div > 1 ? hg_b_bin(b, HG_DIV_U, i, hg_b_i32(b, (int32_t)div)) : i;
    x[m] = d + 1 < r ? hg_b_bin(b, HG_REM_U, q, hg_b_i32(b, p->tile[m])) : q;
    div *= p->tile[m];
    const int32_t bd = (int32_t)p->map.box_dim[d];
    box[d] = bd == p->tile[m] ? in->tile_origin[m]
                              : hg_b_mad(b, hg_b_bin(b, HG_DIV_U, x[m], hg_b_i32(b, bd)),
                                         hg_b_i32(b, bd), in->tile_origin[m]);
    /* the tensor coordinate, signed 32-bit (the spec keeps every tile's end in range), and
     * 0 <= it < extent compared in 64 bits (extents go up to 2^32) */
    hg_val_t c = hg_b_bin(b, HG_ADD, in->tile_origin[m], x[m]);
    hg_val_t c64 = hg_b_sext(b, c);
    hg_val_t ok = hg_b_bin(b, HG_AND, hg_b_cmp(b, HG_GE_S, c, hg_b_i32(b, 0)),
                           hg_b_cmp(b, HG_LT_S, c64, in->extent[m]));
    inb = d ? hg_b_bin(b, HG_AND, inb, ok) : ok;
    gaddr = hg_b_mad(b, c64, in->stride_bytes[m], gaddr);
  }
  /* The box went without TMA when it has a negative coordinate or runs past the end of a
   * ragged dimension 0 (the same test the elected thread made). */
  hg_val_t neg = hg_b_cmp(b, HG_LT_S, min_of(b, box, r), hg_b_i32(b, 0));
  hg_val_t past = past_ragged_end(b, p, ragged_extent_of(b, p, in->extent), box[0], in->extent);
  hg_val_t off;
  HG_TRY(hg_composed_emit(b, &p->smem, x, &off));
  out->write = hg_b_bin(b, HG_AND, hg_b_bin(b, HG_OR, neg, past), inb);
  out->gaddr = gaddr;
  out->saddr = hg_b_mad(b, off, hg_b_i32(b, e), in->stage);
  return hg_ok();
}

/* The element-wise fallback of a store or reduction: every in-bounds element of every box
 * with a negative coordinate, written (or reduced) with an ordinary global store (red),
 * all 128 threads taking consecutive elements of the tile. Generic-proxy reads of shared
 * memory after the CTA barrier, generic-proxy writes to global memory: no proxy fence is
 * involved (PTX ISA "Proxies"; the fence.proxy.async before the barrier is for TMA). */
static hg_status_t emit_fallback(tma_gen_t *g) {
  hg_builder_t *b = g->b;
  const hg_tma_plan_t *p = g->p;
  const hg_tma_op_t op = g->s->op;
  const int r = p->map.rank, e = hg_dtype_bytes(p->map.dtype);
  int64_t elems = 1;
  for (int d = 0; d < r; d++) elems *= p->tile[p->tmap_mode[d]];
  hg_tma_fallback_in_t in;
  memset(&in, 0, sizeof in);
  for (int m = 0; m < r; m++) {
    in.tile_origin[m] = g->tile_origin[m];
    in.extent[m] = g->extent[m];
    in.stride_bytes[m] = g->stride_bytes[m];
  }
  in.gmem = g->gmem;
  in.stage = g->stage;
  hg_val_t i = hg_b_for(b, g->tid, hg_b_i32(b, (int32_t)elems), hg_b_i32(b, TMA_THREADS));
  hg_tma_fallback_elem_t el;
  HG_TRY(hg_tma_emit_fallback_element(b, p, &in, i, &el));
  hg_b_if(b, el.write);
  {
    const int bits = e == 4 ? 0 : 8 * e;
    hg_val_t v;
    const bool f32 = p->map.dtype == HG_F32 && op != HG_TMA_STORE;
    hg_b_load(b, HG_SHARED, f32 ? HG_T_F32 : HG_T_I32, bits, 1, el.saddr, &v);
    if (op == HG_TMA_STORE)
      hg_b_store(b, HG_GLOBAL, bits, 1, el.gaddr, &v);
    else
      hg_b_red(b, (hg_reduce_op_t)(op - HG_TMA_REDUCE_ADD), p->map.dtype, el.gaddr, v);
  }
  hg_b_endif(b);
  hg_b_endfor(b);
  return hg_ok();
}

static hg_status_t build_store(tma_gen_t *g) {
  hg_builder_t *b = g->b;
  const hg_tma_plan_t *p = g->p;
  params(g, "src");
  params_tensor(g);
  const uint32_t align = p->smem_align_bytes > 128 ? p->smem_align_bytes : 128;
  const uint32_t stage_off = hg_b_smem_reserve(b, p->smem_bytes, align);
  g->stage = hg_b_smem_addr(b, stage_off);
  g->tid = hg_b_sreg(b, HG_TID_X);
  hg_val_t cta = hg_b_sreg(b, HG_CTAID_X);

  hg_b_comment(b, "fill the stage buffer from src + ctaid * smem_bytes");
  {
    hg_val_t base = hg_b_bin(b, HG_ADD, g->buf,
                             hg_b_bin(b, HG_MUL, hg_b_zext(b, cta), hg_b_i64(b, p->smem_bytes)));
    hg_val_t i = for_each_16(g, p->smem_bytes);
    hg_val_t v[4];
    hg_b_load(b, HG_GLOBAL, HG_T_I32, 0, 4, hg_b_bin(b, HG_ADD, base, hg_b_zext(b, i)), v);
    hg_b_store(b, HG_SHARED, 0, 4, hg_b_bin(b, HG_ADD, g->stage, i), v);
    hg_b_endfor(b);
  }
  /* PTX ISA "Proxies" / cp.async.bulk.tensor: shared-memory writes of the generic proxy
   * become visible to TMA reads (async proxy) after fence.proxy.async; the CTA barrier
   * then orders every thread's writes before the issuing thread. */
  hg_b_fence_proxy_async(b);
  hg_b_bar_sync(b, 0, 0);
  tile_origin(g, cta);

  /* Seen on an H200 (docs/hardware-notes.md): a TMA store with any negative coordinate
   * raises an illegal instruction and kills the context, and reductions are assumed to do
   * the same (hg_tma_box_issuable). So each box goes through TMA only when all its
   * coordinates are >= 0; the others are written element by element below. The decision
   * depends on the tile origin only, so it is uniform over the CTA. */
  hg_b_comment(b, "which boxes TMA may take: no negative coordinate, and not past the end of "
                  "a dimension 0 whose extent is not a multiple of 16 bytes");
  hg_val_t c[HG_TMA_MAX_BOXES][HG_TMA_MAX_RANK]; /* value ids: 5 KiB */
  hg_val_t tma_ok[HG_TMA_MAX_BOXES];
  hg_val_t fallback = hg_b_i32(b, 0);
  hg_val_t ragged = ragged_extent_of(b, p, g->extent);
  for (int i = 0; i < p->num_boxes; i++) {
    hg_tma_copy_coords(b, p, i, g->tile_origin, c[i]);
    tma_ok[i] =
        hg_b_bin(b, HG_AND, hg_b_cmp(b, HG_GE_S, min_of(b, c[i], p->map.rank), hg_b_i32(b, 0)),
                 hg_b_not(b, past_ragged_end(b, p, ragged, c[i][0], g->extent)));
    fallback =
        hg_b_bin(b, HG_ADD, fallback, hg_b_select(b, tma_ok[i], hg_b_i32(b, 0), hg_b_i32(b, 1)));
  }
  hg_b_name(b, fallback, "boxes_without_tma");

  hg_b_comment(b, "one elected thread issues the TMA boxes, then waits for the bulk group");
  begin_elected(g);
  hg_tma_copy_store(b, p, g->map, g->stage, g->tile_origin, tma_ok);
  hg_b_bulk_commit(b);
  /* Not .read: wait until the writes are performed, so the kernel's completion means the
   * output is final (and the stage buffer outlives every read of it). */
  hg_b_bulk_wait(b, 0, false);
  hg_elect_end(b);

  hg_b_comment(b, "boxes with a negative coordinate: every thread writes their in-bounds "
                  "elements without TMA");
  hg_b_if(b, hg_b_cmp(b, HG_NE, fallback, hg_b_i32(b, 0)));
  HG_TRY(emit_fallback(g));
  hg_b_endif(b);
  /* The status word also says how many boxes went without TMA, so the host can hold the
   * kernel to the plan's count (HG_TMA_STATUS_FALLBACK_SHIFT). */
  write_status(g, cta,
               hg_b_bin(b, HG_OR, hg_b_i32(b, HG_TMA_STATUS_DONE),
                        hg_b_bin(b, HG_SHL, fallback, hg_b_i32(b, HG_TMA_STATUS_FALLBACK_SHIFT))));
  return hg_ok();
}

hg_status_t hg_tma_generate(const hg_tma_spec_t *spec, hg_backend_t be, hg_kernel_t *k,
                            hg_tma_plan_t *plan_out) {
  if (!k) return hg_error(HG_ERR_INVALID, "hg_tma_generate needs somewhere to put the kernel");
  memset(k, 0, sizeof *k);
  if (!spec) return hg_error(HG_ERR_INVALID, "hg_tma_generate needs a spec");
  const double t0 = hg_now_ms();
  hg_tma_spec_t s = *spec;
  HG_TRY(hg_tma_spec_normalize(&s));
  static const hg_tma_plan_t zero_plan;
  hg_tma_plan_t p = zero_plan;
  HG_TRY(hg_tma_spec_plan(&s, &p));

  kernel_name(&s, k->name, sizeof k->name);
  k->threads = TMA_THREADS;
  k->cluster[0] = (uint32_t)p.cluster;
  k->cluster[1] = k->cluster[2] = 1;
  hg_builder_t *b;
  HG_TRY(hg_builder_create(k->name, &b));
  hg_b_set_threads(b, TMA_THREADS);
  tma_gen_t g;
  memset(&g, 0, sizeof g);
  g.b = b;
  g.s = &s;
  g.p = &p;
  hg_status_t st = hg_ok();
  if (s.op == HG_TMA_LOAD || s.op == HG_TMA_PREFETCH)
    build_load(&g);
  else
    st = build_store(&g);
  k->gen_ms = hg_now_ms() - t0;
  if (hg_is_ok(&st)) st = hg_kernel_finish(b, be, k);
  hg_builder_destroy(b);
  if (!hg_is_ok(&st)) {
    hg_kernel_free(k);
    return hg_status_wrap(st, "generating %s: ", k->name);
  }
  if (plan_out) *plan_out = p;
  return hg_ok();
}
