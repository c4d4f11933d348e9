/* TMA plans (CuTe's TiledCopy for SM90_TMA_LOAD / _MULTICAST / STORE / REDUCE): from a global
 * tensor and the shared-memory layout of a tile, everything cuTensorMapEncodeTiled takes,
 * the box, the boxes that fill the tile with their coordinates and smem offsets, and the
 * multicast slices of a cluster.
 *
 * How TMA writes a box (docs/ARCHITECTURE.md "Hopper facts"): densely, tensor-map dimension
 * 0 fastest, each row (the inner box) padded to the swizzle span, the swizzle XORing address
 * bits. The planner chooses the largest box whose elements land exactly where the layout
 * wants them and then checks the whole tile element by element, so any layout that boxes
 * cannot produce is refused with the first element that would land in the wrong place. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sm90_internal.h"

hg_tma_options_t hg_tma_options_default(hg_tma_op_t op) {
  hg_tma_options_t o;
  memset(&o, 0, sizeof o);
  o.op = op;
  o.cluster = 1;
  o.l2_promotion = -1;
  return o;
}

/* Tensor-map dimensions: the unit-stride mode first (the driver's dimension 0 is the
 * contiguous one), then the other modes by increasing stride. */
static hg_status_t tensor_dims(const hg_tma_tensor_t *g, int *tmap_mode, int *mode_dim) {
  if ((int)g->dtype < 0 || g->dtype >= HG_DTYPE_COUNT || hg_dtype_bytes(g->dtype) < 1)
    return hg_error(HG_ERR_INVALID, "tensor element type %d is not a TMA type", (int)g->dtype);
  if (g->rank < 1 || g->rank > HG_TMA_MAX_RANK)
    return hg_error(HG_ERR_INVALID, "tensorRank = %d is outside 1..5", g->rank);
  int inner = -1;
  for (int m = 0; m < g->rank; m++) {
    if (g->shape[m] < 1)
      return hg_error(HG_ERR_INVALID, "tensor mode %d has extent %" PRId64 "; TMA needs >= 1", m,
                      g->shape[m]);
    if (g->stride[m] < 0)
      return hg_error(HG_ERR_INVALID,
                      "tensor mode %d has stride %" PRId64 "; TMA strides are non-negative", m,
                      g->stride[m]);
    if (g->stride[m] == 1 && (inner < 0 || g->shape[inner] == 1)) inner = m;
  }
  if (inner < 0) {
    char buf[128];
    int n = 0;
    for (int m = 0; m < g->rank; m++)
      n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%" PRId64, m ? "," : "", g->stride[m]);
    return hg_error(HG_ERR_INVALID,
                    "no mode of the tensor has stride 1 (strides %s): TMA's innermost dimension "
                    "must be contiguous",
                    buf);
  }
  tmap_mode[0] = inner;
  int d = 1;
  bool used[HG_TMA_MAX_RANK] = {false};
  used[inner] = true;
  for (; d < g->rank; d++) {
    int best = -1;
    for (int m = 0; m < g->rank; m++)
      if (!used[m] && (best < 0 || g->stride[m] < g->stride[best])) best = m;
    used[best] = true;
    tmap_mode[d] = best;
  }
  for (d = 0; d < g->rank; d++) mode_dim[tmap_mode[d]] = d;
  return hg_ok();
}

/* The tensor-map rules of the tensor alone: its tensor-map dimensions (tensor_dims), base
 * address, extents and strides, filled into map's tensor part and validated. They hold
 * whatever box and stage layout a plan chooses, so plans and stage layouts check them
 * first: a stride that is not a multiple of 16 B is what the driver refuses (docs/ARCHITECTURE.md
 * "Hopper facts"), whatever else is wrong. */
static hg_status_t tensor_rules(const hg_tma_tensor_t *g, int *tmap_mode, int *mode_dim,
                                hg_tensormap_params_t *map) {
  HG_TRY(tensor_dims(g, tmap_mode, mode_dim));
  if (g->base_align_bytes && g->base_align_bytes % 16 != 0)
    return hg_error(HG_ERR_INVALID,
                    "the tensor's base address is known to be aligned to %" PRIu64
                    " B only; TMA needs a 16-byte aligned globalAddress",
                    g->base_align_bytes);
  const int e = hg_dtype_bytes(g->dtype);
  map->dtype = g->dtype;
  map->rank = g->rank;
  for (int d = 0; d < g->rank; d++) {
    const int m = tmap_mode[d];
    map->global_dim[d] = (uint64_t)g->shape[m];
    if (d > 0) {
      if (g->stride[m] > (INT64_C(1) << 40))
        return hg_error(HG_ERR_INVALID,
                        "tensor mode %d has stride %" PRId64 " elements, beyond TMA's 2^40 B", m,
                        g->stride[m]);
      map->global_stride_bytes[d - 1] = (uint64_t)g->stride[m] * (uint64_t)e;
    }
  }
  return hg_status_wrap(hg_sm90_tensormap_validate_tensor(map, 0), "tensor map: ");
}

/* Seen on an H200: an innermost coordinate v (of tensor mode m, e-byte elements) whose byte
 * offset is not a multiple of 16 raises an illegal instruction. */
static hg_status_t check_inner_coord(int64_t v, int m, int e) {
  if ((v * e) % 16 == 0) return hg_ok();
  return hg_error(HG_ERR_INVALID,
                  "the innermost coordinate %" PRId64 " (tensor mode %d) is %" PRId64
                  " B into the row, not a multiple of 16 B: the GPU raises an illegal "
                  "instruction; keep the tile origin along mode %d a multiple of %d elements",
                  v, m, v * e, m, e >= 16 ? 1 : 16 / e);
}

/* The modes of the smem layout as flat lists of leaves: mode m maps its 1-D index i to
 * sum_j ((i / prod_{j'<j} shape_j') % shape_j) * stride_j, CuTe's colexicographic order. */
#define FLAT_MAX 16
typedef struct flat_mode {
  int n;
  int64_t shape[FLAT_MAX], stride[FLAT_MAX];
} flat_mode_t;

typedef struct tables {
  int rank;
  flat_mode_t mode[HG_TMA_MAX_RANK];
} tables_t;

static int64_t mode_eval(const flat_mode_t *f, int64_t i) {
  int64_t off = 0;
  for (int j = 0; j < f->n; j++) {
    off += (i % f->shape[j]) * f->stride[j];
    i /= f->shape[j];
  }
  return off;
}

static hg_status_t make_tables(const hg_layout_t *l, int rank, int *tile, tables_t *t) {
  t->rank = rank;
  for (int m = 0; m < rank; m++) {
    hg_layout_t mode;
    int64_t n;
    HG_TRY(hg_layout_mode(l, m, &mode));
    HG_TRY(hg_size(&mode, &n));
    flat_mode_t *f = &t->mode[m];
    f->n = hg_tuple_leaf_values(&mode.shape, f->shape, FLAT_MAX);
    if (f->n > FLAT_MAX || hg_tuple_leaf_values(&mode.stride, f->stride, FLAT_MAX) != f->n)
      return hg_error(HG_ERR_CAPACITY, "mode %d of the shared-memory layout has over %d leaves", m,
                      FLAT_MAX);
    if (n > 65536)
      return hg_error(HG_ERR_INVALID,
                      "mode %d of the tile has %" PRId64 " elements; a TMA tile has at most 256 "
                      "boxes of at most 256",
                      m, n);
    tile[m] = (int)n;
  }
  return hg_ok();
}

/* The longest run of mode f: f(i) = i * s for i < run. */
static int64_t run_length(const flat_mode_t *f, int64_t n, int64_t s) {
  int64_t i = 1;
  while (i < n && mode_eval(f, i) == i * s) i++;
  return i;
}

/* Largest divisor of n that is <= cap and a multiple of q. */
static int64_t largest_divisor(int64_t n, int64_t cap, int64_t q) {
  for (int64_t b = cap < n ? cap : n; b >= 1; b--)
    if (n % b == 0 && b % q == 0) return b;
  return 0;
}

typedef struct geom {
  int rank, esize;
  uint32_t span;                /* swizzle span, 0 for none */
  uint32_t pitch;               /* bytes per box row */
  int64_t box[HG_TMA_MAX_RANK]; /* tensor-map order */
} geom_t;

static void print_coord(char *buf, size_t size, int rank, const int64_t *c) {
  int n = snprintf(buf, size, "(");
  for (int m = 0; m < rank && n > 0 && (size_t)n < size; m++)
    n += snprintf(buf + n, size - (size_t)n, "%s%" PRId64, m ? "," : "", c[m]);
  if (n > 0 && (size_t)n < size) snprintf(buf + n, size - (size_t)n, ")");
}

/* Fill the box list for the current box shape (grid of boxes over the tile, each box's
 * smem offset taken from the layout at its origin), then check every element of the tile:
 * where TMA puts it (box offset + row * pitch + inner * esize) must be where the layout
 * puts it (before the swizzle, which both apply to the same address bits). */
static hg_status_t layout_boxes(const hg_composed_t *smem, const int *tmap_mode, const int *tile,
                                const tables_t *t, const geom_t *ge, hg_tma_plan_t *p) {
  const int r = ge->rank;
  int64_t grid[HG_TMA_MAX_RANK], nb = 1; /* per tensor-map dimension */
  for (int d = 0; d < r; d++) {
    grid[d] = tile[tmap_mode[d]] / ge->box[d];
    nb *= grid[d];
  }
  if (nb > HG_TMA_MAX_BOXES) {
    char b[96];
    print_coord(b, sizeof b, r, ge->box);
    return hg_error(HG_ERR_CAPACITY,
                    "the tile needs %" PRId64 " boxes of %s elements, more than the %d a plan "
                    "holds (use a layout whose rows continue from atom to atom)",
                    nb, b, HG_TMA_MAX_BOXES);
  }
  p->num_boxes = (int)nb;
  for (int64_t i = 0; i < nb; i++) {
    int64_t rest = i, off = smem->offset;
    hg_tma_box_t bx;
    memset(&bx, 0, sizeof bx);
    for (int d = 0; d < r; d++) {
      const int64_t q = rest % grid[d];
      rest /= grid[d];
      bx.coord[d] = (int32_t)(q * ge->box[d]);
      off += mode_eval(&t->mode[tmap_mode[d]], q * ge->box[d]);
    }
    bx.smem_offset = (uint32_t)(off * ge->esize);
    p->box[i] = bx;
  }
  /* Element-by-element check, iterating the tile in tensor-map order. */
  int64_t total = 1;
  for (int d = 0; d < r; d++) total *= tile[tmap_mode[d]];
  for (int64_t i = 0; i < total; i++) {
    int64_t rest = i, c[HG_TMA_MAX_RANK], want = smem->offset, box_off = smem->offset, row = 0,
            mul = 1;
    for (int d = 0; d < r; d++) {
      const int m = tmap_mode[d];
      c[m] = rest % tile[m];
      rest /= tile[m];
      want += mode_eval(&t->mode[m], c[m]);
      const int64_t q = c[m] / ge->box[d], in = c[m] % ge->box[d];
      box_off += mode_eval(&t->mode[m], q * ge->box[d]);
      if (d > 0) {
        row += in * mul;
        mul *= ge->box[d];
      }
    }
    const int64_t inner = c[tmap_mode[0]] % ge->box[0];
    const int64_t got = box_off * ge->esize + row * ge->pitch + inner * ge->esize;
    if (got != want * ge->esize) {
      char cs[96], bs[96];
      print_coord(cs, sizeof cs, r, c);
      print_coord(bs, sizeof bs, r, ge->box);
      return hg_error(HG_ERR_INVALID,
                      "TMA boxes of %s elements cannot fill this shared-memory layout: tile "
                      "element %s would land at byte %" PRId64 " (before the swizzle) but the "
                      "layout puts it at byte %" PRId64,
                      bs, cs, got, want * ge->esize);
    }
  }
  /* Sort by shared-memory offset (stable insertion sort: at most 256 boxes). */
  for (int i = 1; i < p->num_boxes; i++) {
    hg_tma_box_t x = p->box[i];
    int j = i - 1;
    while (j >= 0 && p->box[j].smem_offset > x.smem_offset) {
      p->box[j + 1] = p->box[j];
      j--;
    }
    p->box[j + 1] = x;
  }
  /* PTX ISA cp.async.bulk.tensor: the shared-memory address is 128-byte aligned. Swizzled
   * boxes are also kept at multiples of the swizzle pattern (8 rows of the span), the only
   * placement seen on hardware. */
  const uint32_t align = ge->span ? 8 * ge->span : 128;
  for (int i = 0; i < p->num_boxes; i++)
    if (p->box[i].smem_offset % align != 0) {
      char bs[96];
      print_coord(bs, sizeof bs, r, ge->box);
      return hg_error(HG_ERR_INVALID,
                      "box %d of %s elements starts at shared-memory byte %u, not a multiple of "
                      "%u B (%s)",
                      i, bs, p->box[i].smem_offset, align,
                      ge->span ? "the swizzle pattern; boxes are placed on pattern boundaries"
                               : "TMA's shared-memory alignment");
    }
  /* Each box owns whole rows of the pitch, padding included (with a swizzle the padding
   * bytes of a row are where the swizzle moves some of its data chunks). A box placed as
   * above that starts inside another's rows has its rows on top of them: two tile elements
   * in the same place (a layout with a stride-0 mode), which the element check lets pass
   * and a load would race two boxes into. */
  int64_t rows = 1;
  for (int d = 1; d < r; d++) rows *= ge->box[d];
  const int64_t foot = rows * ge->pitch;
  for (int i = 0; i + 1 < p->num_boxes; i++)
    if (p->box[i].smem_offset + foot > p->box[i + 1].smem_offset) {
      char bs[96];
      print_coord(bs, sizeof bs, r, ge->box);
      return hg_error(HG_ERR_INVALID,
                      "boxes of %s elements overlap in shared memory: one occupies bytes "
                      "[%u, %" PRId64 ") (%" PRId64 " row(s) of %u B) and the next starts at "
                      "byte %u; the layout maps two tile elements to the same place",
                      bs, p->box[i].smem_offset, p->box[i].smem_offset + foot, rows, ge->pitch,
                      p->box[i + 1].smem_offset);
    }
  return hg_ok();
}

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    const int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

hg_status_t hg_tma_plan_make(const hg_tma_tensor_t *g, const hg_composed_t *smem,
                             const hg_tma_options_t *opt, hg_tma_plan_t *out) {
  static hg_tma_plan_t zero;
  hg_tma_plan_t p = zero;
  const hg_tma_op_t op = opt->op;
  if ((int)op < 0 || op >= HG_TMA_OP_COUNT)
    return hg_error(HG_ERR_INVALID, "TMA operation %d is not known", (int)op);
  if (hg_tma_op_is_reduce(op)) HG_TRY(hg_tma_reduce_check(op, g->dtype));
  const int cluster = opt->cluster > 1 ? opt->cluster : 1;
  if (opt->cluster > HG_TMA_MAX_CLUSTER)
    return hg_error(HG_ERR_INVALID,
                    "a multicast cluster of %d CTAs is over 16: the multicast mask has 16 bits "
                    "(and a cluster at most 16 CTAs)",
                    opt->cluster);
  const int rstride = opt->mcast_rank_stride > 0 ? opt->mcast_rank_stride : 1;
  if ((int64_t)(cluster - 1) * rstride >= HG_TMA_MAX_CLUSTER) /* 64-bit: any stride */
    return hg_error(HG_ERR_INVALID,
                    "a multicast group of %d CTAs %d ranks apart reaches rank %" PRId64
                    "; the mask has 16 bits (ranks 0..15)",
                    cluster, rstride, (int64_t)(cluster - 1) * rstride);
  if (cluster > 1 && op != HG_TMA_LOAD)
    return hg_error(HG_ERR_INVALID,
                    "multicast (a cluster of %d) applies to loads only; a %s is issued by each "
                    "CTA for its own tile",
                    cluster, hg_tma_op_name(op));
  if (opt->oob_nan && op != HG_TMA_LOAD && op != HG_TMA_PREFETCH)
    return hg_error(HG_ERR_INVALID, "NaN fill applies to loads; a %s skips out-of-bounds elements",
                    hg_tma_op_name(op));
  /* Rules in the order of what they depend on, so that a request breaking several is told
   * the one the hardware enforces whatever the stage layout: the tensor's own tensor-map
   * rules, then the tile origin's innermost 16-byte rule (every box's innermost coordinate
   * is the origin's plus a whole number of 16-byte inner boxes), and only then the stage
   * layout, the boxes derived from it, and their own tensor-map rules. */
  HG_TRY(tensor_rules(g, p.tmap_mode, p.mode_dim, &p.map));
  const int r = g->rank, e = hg_dtype_bytes(g->dtype);
  if (opt->origin_known)
    HG_TRY(hg_status_wrap(check_inner_coord(opt->origin[p.tmap_mode[0]], p.tmap_mode[0], e),
                          "at the tile origin: "));
  if (hg_layout_rank(&smem->layout) != r)
    return hg_error(HG_ERR_INVALID,
                    "the shared-memory layout has %d modes but the tensor has %d: mode i of the "
                    "tile must be mode i of the tensor",
                    hg_layout_rank(&smem->layout), r);
  if (smem->offset < 0)
    return hg_error(HG_ERR_INVALID, "the shared-memory layout's offset %" PRId64 " is negative",
                    smem->offset);
  hg_swizzle_mode_t sw;
  HG_TRY(hg_sm90_swizzle_of(smem->sw, e, &sw));
  tables_t t;
  int tile[HG_TMA_MAX_RANK];
  HG_TRY(make_tables(&smem->layout, r, tile, &t));
  /* Every element of the tile needs its own bytes of the stage buffer: a tile larger than
   * shared memory can be refused before any box is tried (and before the element-by-element
   * check below would walk it). */
  int64_t elems = 1;
  for (int m = 0; m < r && elems <= 227 * 1024; m++) elems *= tile[m];
  if (elems * e > 227 * 1024)
    return hg_error(HG_ERR_INVALID,
                    "the tile has over %" PRId64 " elements of %d B, more than the 227 KiB of "
                    "shared memory a CTA may use on sm_90",
                    (int64_t)(227 * 1024 / e), e);

  geom_t ge;
  memset(&ge, 0, sizeof ge);
  ge.rank = r;
  ge.esize = e;
  ge.span = (uint32_t)hg_swizzle_mode_bytes(sw);
  /* Dimension 0: the longest stride-1 run of the contiguous mode, at most 256 elements and
   * at most the swizzle span, a multiple of 16 bytes, dividing the tile. It may be narrower
   * than the span: the rows are then padded (below). */
  const int mi = p.tmap_mode[0];
  const int64_t q16 = e >= 16 ? 1 : 16 / e;
  const int64_t run0 = run_length(&t.mode[mi], tile[mi], 1);
  int64_t cap0 = 256;
  if (ge.span && ge.span / (uint32_t)e < cap0) cap0 = ge.span / (uint32_t)e;
  const int64_t b0 = largest_divisor(tile[mi], run0 < cap0 ? run0 : cap0, q16);
  if (b0 == 0) {
    if (run0 * e < 16 || tile[mi] * e < 16)
      return hg_error(HG_ERR_INVALID,
                      "the tile is contiguous for only %" PRId64 " element(s) (%" PRId64
                      " B) along tensor mode %d, the tensor's unit-stride mode: TMA's inner box "
                      "must be a multiple of 16 B",
                      run0 < tile[mi] ? run0 : (int64_t)tile[mi],
                      (run0 < tile[mi] ? run0 : (int64_t)tile[mi]) * e, mi);
    return hg_error(HG_ERR_INVALID,
                    "the tile's extent %d along tensor mode %d (the unit-stride mode) has no "
                    "divisor that is a multiple of 16 B (%" PRId64 " elements) and at most %" PRId64
                    " elements (contiguous run %" PRId64 ", box limit %" PRId64 ")",
                    tile[mi], mi, q16, run0 < cap0 ? run0 : cap0, run0, cap0);
  }
  ge.box[0] = b0;
  /* Seen on an H200: with a swizzle every box row occupies the whole span, the inner box
   * its first b0 * e bytes (before the swizzle) and the rest untouched, so box rows are the
   * span apart even when the inner box is narrower: the layout must put its rows there
   * too (padded rows, as hg_tma_smem_layout makes them), which the run along dimension 1
   * and the element-by-element check below hold it to. */
  ge.pitch = ge.span ? ge.span : (uint32_t)(b0 * e);
  int64_t expect = ge.pitch / (uint32_t)e; /* elements between box rows */
  for (int d = 1; d < r; d++) {
    const int m = p.tmap_mode[d];
    const int64_t run = run_length(&t.mode[m], tile[m], expect);
    ge.box[d] = largest_divisor(tile[m], run < 256 ? run : 256, 1);
    expect *= ge.box[d];
  }
  HG_TRY(layout_boxes(smem, p.tmap_mode, tile, &t, &ge, &p));

  /* Multicast: each CTA issues 1/cluster of the boxes. When the boxes do not split evenly,
   * slice every box along its slowest dimension, so that each CTA's slices stay contiguous. */
  if (cluster > 1 && p.num_boxes % cluster != 0) {
    const int64_t s = cluster / gcd64(p.num_boxes, cluster);
    int ds = -1;
    for (int d = r - 1; d >= 0; d--)
      if (ge.box[d] > 1) {
        ds = d;
        break;
      }
    if (ds < 0 || ge.box[ds] % s != 0)
      return hg_error(HG_ERR_INVALID,
                      "a cluster of %d CTAs does not divide the tile: %d box(es), and the box's "
                      "slowest dimension (tensor mode %d, %" PRId64 " elements) is not a multiple "
                      "of %" PRId64,
                      cluster, p.num_boxes, ds < 0 ? 0 : p.tmap_mode[ds], ds < 0 ? 1 : ge.box[ds],
                      s);
    ge.box[ds] /= s;
    if (ds == 0) {
      if ((ge.box[0] * e) % 16 != 0)
        return hg_error(HG_ERR_INVALID,
                        "a cluster of %d CTAs would slice the %" PRId64
                        "-element inner box into %" PRId64 " B pieces, not multiples of 16 B",
                        cluster, ge.box[0] * s, ge.box[0] * e);
      if (!ge.span) ge.pitch = (uint32_t)(ge.box[0] * e);
    }
    HG_TRY(hg_status_wrap(layout_boxes(smem, p.tmap_mode, tile, &t, &ge, &p),
                          "multicast over %d CTAs, slicing each box along tensor mode %d: ",
                          cluster, p.tmap_mode[ds]));
  }

  /* The tensor map's box (its tensor part was filled and checked first). */
  for (int d = 0; d < r; d++) {
    p.map.box_dim[d] = (uint32_t)ge.box[d];
    p.map.element_strides[d] = 1;
  }
  p.map.interleave = 0;
  p.map.swizzle = sw;
  /* L2 promotion 256B unless asked otherwise: tiles are rows of 64 B and more. */
  p.map.l2_promotion = opt->l2_promotion < 0 ? 3 : opt->l2_promotion;
  p.map.oob_nan = opt->oob_nan;
  HG_TRY(hg_status_wrap(hg_tensormap_validate(&p.map, 0), "tensor map: "));

  p.op = op;
  for (int m = 0; m < r; m++) p.tile[m] = tile[m];
  p.smem = *smem;
  uint64_t box_elems = 1, rows = 1;
  for (int d = 0; d < r; d++) box_elems *= (uint64_t)ge.box[d];
  for (int d = 1; d < r; d++) rows *= (uint64_t)ge.box[d];
  p.box_bytes = (uint32_t)(box_elems * (uint64_t)e);
  p.tile_bytes = p.box_bytes * (uint32_t)p.num_boxes;
  uint64_t foot = 0;
  for (int b = 0; b < p.num_boxes; b++) {
    const uint64_t end = p.box[b].smem_offset + (uint64_t)ge.pitch * rows;
    if (end > foot) foot = end;
  }
  if (foot > 227 * 1024)
    return hg_error(HG_ERR_INVALID,
                    "the tile occupies %" PRIu64 " B of shared memory, over the 227 KiB a CTA may "
                    "use on sm_90",
                    foot);
  p.smem_bytes = (uint32_t)foot;
  p.smem_align_bytes = ge.span ? 8 * ge.span : 128;
  p.cluster = cluster;
  p.mcast_rank_stride = rstride;
  p.mcast_mask = 0;
  for (int c = 0; c < cluster; c++) p.mcast_mask |= (uint16_t)(1u << (c * rstride));
  p.boxes_per_cta = p.num_boxes / cluster;
  for (int c = 0; c < cluster; c++) p.cta_first_box[c] = c * p.boxes_per_cta;
  p.cta_issue_bytes = p.box_bytes * (uint32_t)p.boxes_per_cta;
  p.expect_tx_bytes = op == HG_TMA_LOAD ? p.tile_bytes : 0;

  if (opt->origin_known) {
    for (int b = 0; b < p.num_boxes; b++) {
      int32_t c[HG_TMA_MAX_RANK];
      HG_TRY(hg_status_wrap(hg_tma_box_coords(&p, b, opt->origin, c), "at the tile origin: "));
    }
  }
  *out = p;
  return hg_ok();
}

hg_status_t hg_tma_box_coords(const hg_tma_plan_t *p, int b, const int32_t *origin, int32_t *out) {
  if (b < 0 || b >= p->num_boxes)
    return hg_error(HG_ERR_INVALID, "box %d is outside the plan's %d", b, p->num_boxes);
  const int e = hg_dtype_bytes(p->map.dtype);
  for (int d = 0; d < p->map.rank; d++) {
    const int m = p->tmap_mode[d];
    const int64_t v = (int64_t)origin[m] + p->box[b].coord[d];
    if (v < INT32_MIN || v > INT32_MAX)
      return hg_error(HG_ERR_OVERFLOW,
                      "box %d's coordinate along tensor mode %d is %" PRId64
                      ", which does not fit a signed 32-bit TMA coordinate",
                      b, m, v);
    if (d == 0) HG_TRY(check_inner_coord(v, m, e));
    out[d] = (int32_t)v;
  }
  return hg_ok();
}

hg_status_t hg_tma_box_issuable(const hg_tma_plan_t *p, int b, const int32_t *coords) {
  if (b < 0 || b >= p->num_boxes)
    return hg_error(HG_ERR_INVALID, "box %d is outside the plan's %d", b, p->num_boxes);
  if (p->op != HG_TMA_STORE && !hg_tma_op_is_reduce(p->op)) return hg_ok();
  /* Seen on an H200 (driver 580.159.04): a TMA store with any negative coordinate raises an
   * illegal instruction and kills the context; reductions share the store path and are
   * assumed to do the same (docs/hardware-notes.md). */
  for (int d = 0; d < p->map.rank; d++)
    if (coords[d] < 0)
      return hg_error(HG_ERR_INVALID,
                      "box %d's coordinate along tensor mode %d is %" PRId32
                      ": the GPU raises an illegal instruction: TMA stores and reductions take "
                      "non-negative coordinates only (seen on an H200, driver 580.159.04; "
                      "assumed for reductions); write this box without TMA",
                      b, p->tmap_mode[d], coords[d]);
  /* Seen on an H200: a TMA store clips dimension 0 at 16-byte granularity, so a box that
   * runs past its end writes up to the next 16-byte boundary when the extent in bytes is
   * not a multiple of 16 (hg_model_tma_store). */
  const uint64_t e = (uint64_t)hg_dtype_bytes(p->map.dtype);
  const uint64_t ext = p->map.global_dim[0];
  if ((ext * e) % 16 != 0 && (int64_t)coords[0] + p->map.box_dim[0] > (int64_t)ext)
    return hg_error(HG_ERR_INVALID,
                    "box %d runs past the end of tensor mode %d (coordinate %" PRId32 ", %u "
                    "elements, extent %" PRIu64 " = %" PRIu64
                    " B, not a multiple of 16 B): a TMA %s clips at 16-byte granularity and "
                    "would also write the %" PRIu64
                    " B after the end (seen on an H200); write this box without TMA",
                    b, p->tmap_mode[0], coords[0], p->map.box_dim[0], ext, ext * e,
                    p->op == HG_TMA_STORE ? "store" : "reduction", 16 - (ext * e) % 16);
  return hg_ok();
}

hg_status_t hg_tma_smem_layout(const hg_tma_tensor_t *g, const int *tile, hg_swizzle_mode_t sw,
                               hg_composed_t *out) {
  int tmap_mode[HG_TMA_MAX_RANK], mode_dim[HG_TMA_MAX_RANK];
  hg_tensormap_params_t map;
  memset(&map, 0, sizeof map);
  /* The tensor's own rules first, as hg_tma_plan_make checks them. */
  HG_TRY(tensor_rules(g, tmap_mode, mode_dim, &map));
  const int r = g->rank, e = hg_dtype_bytes(g->dtype);
  if ((int)sw < 0 || (int)sw > 3)
    return hg_error(HG_ERR_INVALID, "swizzle mode %d is not none, 32B, 64B or 128B", (int)sw);
  if (sw != HG_SWIZZLE_NONE && e > 16)
    return hg_error(HG_ERR_INVALID, "%d-byte elements cannot be swizzled", e);
  const int span = hg_swizzle_mode_bytes(sw);
  for (int m = 0; m < r; m++)
    if (tile[m] < 1)
      return hg_error(HG_ERR_INVALID, "the tile's extent along mode %d is %d", m, tile[m]);
  const int mi = tmap_mode[0];
  int64_t atom[HG_TMA_MAX_RANK], stride[HG_TMA_MAX_RANK], order[HG_TMA_MAX_RANK],
      shape[HG_TMA_MAX_RANK];
  for (int m = 0; m < r; m++) {
    atom[m] = 1;
    shape[m] = tile[m];
  }
  const bool padded = hg_tma_smem_padded(g, tile, sw);
  if (span) {
    atom[mi] = span / e;
    if (padded) {
      /* Narrower than the span: the stage buffer of a tile one span wide, of which the
       * tile uses the first tile[mi] elements of every row (the composition below). */
      if ((int64_t)tile[mi] * e % 16 != 0)
        return hg_error(HG_ERR_INVALID,
                        "the tile's extent %d along tensor mode %d (the unit-stride mode) is "
                        "%" PRId64 " B, not a multiple of 16 B: TMA's inner box must be (a row "
                        "narrower than the %s swizzle span is padded to it, in 16-byte chunks)",
                        tile[mi], mi, (int64_t)tile[mi] * e, hg_swizzle_mode_name(sw));
      shape[mi] = atom[mi];
    } else if (tile[mi] % atom[mi] != 0) {
      return hg_error(HG_ERR_INVALID,
                      "the tile's extent %d along tensor mode %d (the unit-stride mode) is not a "
                      "multiple of the %s swizzle row (%" PRId64 " elements of %d B): a tile "
                      "wider than the row must be whole rows (a narrower one gets rows padded to "
                      "the span)",
                      tile[mi], mi, hg_swizzle_mode_name(sw), atom[mi], e);
    }
  } else {
    atom[mi] = tile[mi] <= 256 ? tile[mi] : 256;
    if (tile[mi] % atom[mi] != 0)
      return hg_error(HG_ERR_INVALID,
                      "the tile's extent %d along tensor mode %d (the unit-stride mode) is over "
                      "256 and not a multiple of 256 (a box's limit)",
                      tile[mi], mi);
  }
  if (r > 1) {
    const int mr = tmap_mode[1];
    if (span) {
      atom[mr] = tile[mr] % 8 == 0 ? 8 : tile[mr] < 8 ? tile[mr] : 0;
      if (atom[mr] == 0)
        return hg_error(HG_ERR_INVALID,
                        "the tile's extent %d along tensor mode %d is not a multiple of the 8 "
                        "rows of a swizzle pattern",
                        tile[mr], mr);
    } else {
      atom[mr] = tile[mr] <= 256 ? tile[mr] : 256;
      if (tile[mr] % atom[mr] != 0)
        return hg_error(HG_ERR_INVALID,
                        "the tile's extent %d along tensor mode %d is over 256 and not a "
                        "multiple of 256 (a box's limit)",
                        tile[mr], mr);
    }
  }
  /* The atom: the unit-stride mode fastest, then the rows; repetitions along the strided
   * modes first (in tensor-map order) and along the unit-stride mode last, so that rows
   * continue from atom to atom. */
  int64_t acc = 1;
  for (int d = 0; d < r; d++) {
    stride[tmap_mode[d]] = acc;
    acc *= atom[tmap_mode[d]];
  }
  for (int d = 1; d < r; d++) order[tmap_mode[d]] = d - 1;
  order[mi] = r - 1;
  hg_tuple_t ash, ast, tsh, tor;
  hg_composed_t c;
  HG_TRY(hg_tuple_ints(&ash, r, atom));
  HG_TRY(hg_tuple_ints(&ast, r, stride));
  HG_TRY(hg_tuple_ints(&tsh, r, shape));
  HG_TRY(hg_tuple_ints(&tor, r, order));
  HG_TRY(hg_make_layout(&ash, &ast, &c.layout));
  c.sw = hg_sm90_swizzle_for(sw, e);
  c.offset = 0;
  HG_TRY(hg_tile_to_shape_ordered(&c, &tsh, &tor, out));
  if (!padded) return hg_ok();
  /* Padded rows: CuTe's composition with the tiler [_, ..., tile[mi]:1, ..., _] keeps the
   * first tile[mi] elements of each row of the span-wide layout and every other mode as it
   * is, so the rows stay the span apart (where TMA puts them). */
  hg_tiler_t first;
  memset(&first, 0, sizeof first);
  first.rank = r;
  for (int m = 0; m < r; m++) first.skip[m] = m != mi;
  first.mode[mi] = hg_layout_1d(tile[mi], 1);
  hg_layout_t narrow;
  HG_TRY(hg_composition_tiler(&out->layout, &first, &narrow));
  out->layout = narrow;
  return hg_ok();
}

bool hg_tma_smem_padded(const hg_tma_tensor_t *g, const int *tile, hg_swizzle_mode_t sw) {
  int tmap_mode[HG_TMA_MAX_RANK], mode_dim[HG_TMA_MAX_RANK];
  hg_status_t s = tensor_dims(g, tmap_mode, mode_dim);
  if (!hg_is_ok(&s) || (int)sw < 1 || (int)sw > 3) return false;
  const int64_t row_bytes = (int64_t)tile[tmap_mode[0]] * hg_dtype_bytes(g->dtype);
  return row_bytes > 0 && row_bytes < hg_swizzle_mode_bytes(sw);
}
