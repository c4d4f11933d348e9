/* The store and reduce kernels' element-wise fallback for boxes TMA cannot take (a negative
 * coordinate: an H200 raises an illegal instruction), without a GPU:
 *   - the count of such boxes, per box and mode (hg_tma_spec_fallback_boxes), equals the
 *     per-tile count of boxes the sm90 rule refuses (hg_tma_box_issuable);
 *   - the fallback's per-element code (hg_tma_emit_fallback_element, the kernel's loop body)
 *     evaluated on constants: built with constant tile origins, extents, strides and
 *     element indices, lowered through the MLIR backend, where LLVM folds everything, so
 *     the stored immediates are what the GPU would compute. Each element's write decision
 *     must be "its box is refused by hg_tma_box_issuable and the element is in the tensor",
 *     its global address the tensor's, and its shared-memory address the one the CPU model
 *     of TMA reads that box element from. Skipped with a note without mlir-opt-22.
 * The GPU run of the same kernels is scripts/gpu-tma.sh (store and reduce cases at negative
 * origins, checked byte for byte against the ideal: out-of-bounds elements skipped). */
#include <stdio.h>
#include <string.h>

#include "emit/emit_test_util.h"
#include "hg_test.h"
#include "hopgen/kernels.h"
#include "kernels/tma_internal.h"

static hg_tma_plan_t plan; /* large: keep off the stack */

static hg_tma_spec_t spec(hg_tma_op_t op, hg_dtype_t t, hg_swizzle_mode_t sw, int rank,
                          const int *tile, const int64_t *shape, const int32_t *origin) {
  hg_tma_spec_t s = hg_tma_spec_default(op);
  s.dtype = t;
  s.swizzle = sw;
  s.rank = rank;
  for (int m = 0; m < rank; m++) {
    s.tile[m] = tile[m];
    s.shape[m] = shape[m];
    s.origin[m] = origin[m];
    s.grid[m] = 0;
  }
  return s;
}

/* The specs probed: 1, 2 and 4-byte elements, every swizzle, ranks 1 to 3, plans of one
 * box and of several along the inner and the outer dimensions, a padded row pitch, tiles
 * narrower than the swizzle span (stage rows padded to it),
 * negative origins in every mode (the innermost a multiple of 16 B, as TMA needs). */
static int make_specs(hg_tma_spec_t *out) {
  int n = 0;
  {
    const int tile[2] = {64, 64};
    const int64_t shape[2] = {128, 128};
    const int32_t org[2] = {-8, -8};
    out[n++] = spec(HG_TMA_STORE, HG_F16, HG_SWIZZLE_128B, 2, tile, shape, org);
  }
  {
    const int tile[2] = {8, 64};
    const int64_t shape[2] = {29, 208};
    const int32_t org[2] = {-3, -16};
    out[n++] = spec(HG_TMA_STORE, HG_U8, HG_SWIZZLE_NONE, 2, tile, shape, org);
  }
  static const hg_dtype_t types[] = {HG_U8, HG_F16, HG_F32};
  for (int ti = 0; ti < 3; ti++)
    for (int sw = 0; sw < 4; sw++) {
      const int e = hg_dtype_bytes(types[ti]);
      const int span = sw ? hg_swizzle_mode_bytes((hg_swizzle_mode_t)sw) : 64;
      const int tile[2] = {16, 2 * span / e}; /* two boxes along the inner dimension */
      const int64_t shape[2] = {37, 2 * span / e + 16 / e};
      const int32_t org[2] = {-5, -16 / e};
      out[n] = spec(ti == 2 ? HG_TMA_REDUCE_ADD : HG_TMA_STORE, types[ti], (hg_swizzle_mode_t)sw, 2,
                    tile, shape, org);
      out[n].stride[0] = 3 * span / e; /* padded rows */
      out[n].stride[1] = 1;
      n++;
    }
  /* Tiles narrower than the swizzle span: rows padded to it (half of it used). */
  for (int ti = 0; ti < 3; ti++)
    for (int sw = 1; sw < 4; sw++) {
      const int e = hg_dtype_bytes(types[ti]);
      const int half = hg_swizzle_mode_bytes((hg_swizzle_mode_t)sw) / 2 / e;
      const int tile[2] = {16, half};
      const int64_t shape[2] = {21, 3 * half + 16 / e};
      const int32_t org[2] = {-5, -16 / e};
      out[n++] = spec(ti == 1   ? HG_TMA_REDUCE_MAX
                      : ti == 2 ? HG_TMA_REDUCE_ADD
                                : HG_TMA_STORE,
                      types[ti], (hg_swizzle_mode_t)sw, 2, tile, shape, org);
    }
  {
    const int tile[3] = {2, 16, 64};
    const int64_t shape[3] = {3, 20, 72};
    const int32_t org[3] = {-1, -9, -8};
    out[n++] = spec(HG_TMA_REDUCE_MAX, HG_BF16, HG_SWIZZLE_128B, 3, tile, shape, org);
  }
  {
    const int tile[2] = {512, 16}; /* rows over 256: boxes along the outer dimension */
    const int64_t shape[2] = {700, 40};
    const int32_t org[2] = {-300, -16};
    out[n++] = spec(HG_TMA_REDUCE_XOR, HG_U32, HG_SWIZZLE_NONE, 2, tile, shape, org);
  }
  {
    const int tile[5] = {2, 2, 2, 2, 64}; /* rank 5, negative in every mode */
    const int64_t shape[5] = {3, 4, 5, 6, 64};
    const int32_t org[5] = {-1, -1, -1, -1, -8};
    out[n++] = spec(HG_TMA_STORE, HG_F16, HG_SWIZZLE_NONE, 5, tile, shape, org);
  }
  {
    const int tile[1] = {256};
    const int64_t shape[1] = {1000};
    const int32_t org[1] = {-64};
    out[n++] = spec(HG_TMA_STORE, HG_F16, HG_SWIZZLE_NONE, 1, tile, shape, org);
  }
  return n;
}

/* ---------------------------------------------------------------- counts */

static void test_counts(void) {
  static hg_tma_spec_t specs[32];
  const int n = make_specs(specs);
  int multi_box = 0;
  for (int k = 0; k < n; k++) {
    hg_tma_spec_t s = specs[k];
    CHECK_OK(hg_tma_spec_normalize(&s));
    CHECK_OK(hg_tma_spec_plan(&s, &plan));
    if (plan.num_boxes > 1) multi_box++;
    int64_t per_tile = 0;
    for (int64_t t = 0; t < hg_tma_spec_tiles(&s); t++) {
      int64_t q[HG_TMA_MAX_RANK];
      int32_t org[HG_TMA_MAX_RANK];
      hg_tma_tile_of(&s, t, q, org);
      per_tile += hg_tma_tile_fallback_boxes(&plan, org);
    }
    char what[256];
    hg_tma_spec_print(&s, what, sizeof what);
    hg_test_checks++;
    if (per_tile != hg_tma_spec_fallback_boxes(&s, &plan))
      HG_FAIL("%s: %lld boxes refused tile by tile, %lld counted per box", what,
              (long long)per_tile, (long long)hg_tma_spec_fallback_boxes(&s, &plan));
    CHECK(per_tile > 0); /* every probed spec has negative origins */
    /* a load of the same tiles needs no fallback */
    s.op = HG_TMA_LOAD;
    CHECK_OK(hg_tma_spec_plan(&s, &plan));
    CHECK_EQ(hg_tma_spec_fallback_boxes(&s, &plan), 0);
  }
  CHECK(multi_box >= 10);
  /* The H200 case: a 3 x 3 grid of 64 x 64 f16 tiles at (-8, -8): CTAs 0, 1, 2, 3, 6 (every
   * tile negative in some mode) go without TMA, the other four through it. */
  hg_tma_spec_t s = specs[0];
  s.grid[0] = s.grid[1] = 3;
  CHECK_OK(hg_tma_spec_normalize(&s));
  CHECK_OK(hg_tma_spec_plan(&s, &plan));
  CHECK_EQ(hg_tma_spec_fallback_boxes(&s, &plan), 5);
  for (int64_t t = 0; t < 9; t++) {
    int64_t q[HG_TMA_MAX_RANK];
    int32_t org[HG_TMA_MAX_RANK];
    hg_tma_tile_of(&s, t, q, org);
    CHECK_EQ(hg_tma_tile_fallback_boxes(&plan, org),
             t == 0 || t == 1 || t == 2 || t == 3 || t == 6);
  }
  /* Far edges of 96 x 96 f16 (rows of 192 B end on a 16-byte boundary): nothing falls back. */
  s.origin[0] = s.origin[1] = 0;
  s.grid[0] = s.grid[1] = 0;
  s.shape[0] = s.shape[1] = 96;
  memset(s.stride, 0, sizeof s.stride);
  CHECK_OK(hg_tma_spec_normalize(&s));
  CHECK_OK(hg_tma_spec_plan(&s, &plan));
  CHECK_EQ(hg_tma_spec_fallback_boxes(&s, &plan), 0);
  /* 100 x 100 f16 in rows of 104 (200 B, not a multiple of 16): a TMA store clips the row at
   * 16-byte granularity and would write columns 100-103 (seen on an H200), so the two
   * tiles that cross column 100 (64 + 64 > 100; one per row of tiles) go without TMA. */
  s.shape[0] = s.shape[1] = 100;
  s.stride[0] = 104;
  s.stride[1] = 1;
  s.grid[0] = s.grid[1] = 0;
  CHECK_OK(hg_tma_spec_normalize(&s));
  CHECK_OK(hg_tma_spec_plan(&s, &plan));
  CHECK_EQ(hg_tma_spec_fallback_boxes(&s, &plan), 2);
  int32_t org[HG_TMA_MAX_RANK] = {0, 64};
  CHECK_EQ(hg_tma_tile_fallback_boxes(&plan, org), 1);
  int32_t c0[HG_TMA_MAX_RANK];
  CHECK_OK(hg_tma_box_coords(&plan, 0, org, c0));
  CHECK_ERR(hg_tma_box_issuable(&plan, 0, c0), HG_ERR_INVALID, "clips at 16-byte granularity");
  org[1] = 0;
  CHECK_EQ(hg_tma_tile_fallback_boxes(&plan, org), 0);
}

/* ---------------------------------------------------------------- the probe */

#define SLOT_BYTES 16 /* 8-byte values 16 bytes apart: no two stores merge into a vector */
#define BASE 0x7000000000ll
#define STAGE 2048

typedef struct probe {
  int spec;
  int32_t org[HG_TMA_MAX_RANK];
  int64_t i;
} probe_t;

static probe_t probes[8192];
static int nprobes;

/* The folded PTX, read back: the value of an operand that is a literal or a register
 * defined from literals and the kernel's one parameter (0) by mov, add.s64 or
 * cvta.to.global (LLVM computes every slot's address as param + offset, then cvta). */
typedef struct def {
  const char *line; /* the instruction defining the register */
} def_t;

static def_t *defs; /* by register number of %rd<n> / %r<n> */
static int ndefs;

static bool reg_number(const char *op, int *n) {
  if (op[0] != '%' || op[1] != 'r') return false;
  const char *d = op + 2;
  if (*d == 'd') d++;
  char *end;
  long v = strtol(d, &end, 10);
  if (end == d || v < 0 || v >= ndefs) return false;
  *n = (int)v;
  return true;
}

static bool value_of(const char *op, int64_t *v, int depth) {
  while (*op == ' ' || *op == '\t') op++;
  char *end;
  long long x = strtoll(op, &end, 0);
  if (end != op && (*end == ';' || *end == ',' || *end == ']')) {
    *v = x;
    return true;
  }
  int n;
  if (depth > 8 || !reg_number(op, &n) || !defs[n].line) return false;
  const char *l = defs[n].line;
  const char *a = strchr(l, ','); /* first source operand */
  if (!a) return false;
  a++;
  if (!strncmp(l, "ld.param", 8)) {
    *v = 0;
    return true;
  }
  if (!strncmp(l, "mov.", 4) || !strncmp(l, "cvta.to.global", 14)) return value_of(a, v, depth + 1);
  if (!strncmp(l, "add.s64", 7)) {
    const char *bop = strchr(a, ',');
    int64_t x1, x2;
    if (!bop || !value_of(a, &x1, depth + 1) || !value_of(bop + 1, &x2, depth + 1)) return false;
    *v = x1 + x2;
    return true;
  }
  return false;
}

/* Index the defining instruction of every register: "op %rdN, ..." (tabs and spaces). */
static void index_defs(const char *ptx) {
  ndefs = 1 << 20;
  defs = calloc((size_t)ndefs, sizeof *defs);
  for (const char *l = ptx; l && *l;) {
    while (*l == '\t' || *l == ' ') l++;
    const char *nl = strchr(l, '\n');
    const char *sp = strpbrk(l, " \t");
    if (sp && (!nl || sp < nl) && strncmp(l, "st.", 3) && strncmp(l, ".reg", 4)) {
      const char *d = sp;
      while (*d == ' ' || *d == '\t') d++;
      int n;
      if (reg_number(d, &n)) defs[n].line = l;
    }
    l = nl ? nl + 1 : NULL;
  }
}

/* Every st.global [address], value of the folded probe: values[address / SLOT_BYTES]. */
static int read_stores(const char *ptx, int64_t *values, bool *seen, int slots) {
  index_defs(ptx);
  int n = 0;
  for (const char *p = ptx; (p = strstr(p, "st.global.")) != NULL; p++) {
    const char *br = strchr(p, '[');
    const char *close = br ? strchr(br, ']') : NULL;
    if (!close) break;
    int64_t addr, v;
    if (!value_of(br + 1, &addr, 0) || !value_of(close + 2, &v, 0)) {
      HG_FAIL("a probe store did not fold to constants: %.80s", p);
      break;
    }
    const int64_t slot = addr / SLOT_BYTES;
    if (addr % SLOT_BYTES || slot < 0 || slot >= slots) {
      HG_FAIL("a store at offset %lld is not a probe slot", (long long)addr);
      continue;
    }
    values[slot] = v;
    seen[slot] = true;
    n++;
  }
  free(defs);
  defs = NULL;
  return n;
}

/* What the fallback must do with element i of the tile at org, from the plan, the sm90 rule
 * and the CPU model of TMA (not from the generator). */
static void expected(const hg_tma_spec_t *s, const hg_tma_plan_t *p, const int32_t *org, int64_t i,
                     int64_t *write, int64_t *gaddr, int64_t *saddr) {
  const int r = p->map.rank, e = hg_dtype_bytes(p->map.dtype);
  int64_t x[HG_TMA_MAX_RANK]; /* per tensor mode */
  int64_t rest = i;
  for (int d = 0; d < r; d++) {
    const int m = p->tmap_mode[d];
    x[m] = rest % p->tile[m];
    rest /= p->tile[m];
  }
  bool inb = true;
  int64_t g = BASE;
  for (int m = 0; m < r; m++) {
    const int64_t c = (int64_t)org[m] + x[m];
    if (c < 0 || c >= s->shape[m]) inb = false;
    g += c * s->stride[m] * e;
  }
  /* the box holding the element, and where TMA reads the element from (the model's box
   * geometry: rows of the inner box padded to the swizzle span, the swizzle on the address) */
  int box = -1;
  int64_t idx[HG_TMA_MAX_RANK];
  for (int b = 0; b < p->num_boxes && box < 0; b++) {
    bool in = true;
    for (int d = 0; d < r; d++) {
      idx[d] = x[p->tmap_mode[d]] - p->box[b].coord[d];
      if (idx[d] < 0 || idx[d] >= p->map.box_dim[d]) in = false;
    }
    if (in) box = b;
  }
  if (box < 0) {
    HG_FAIL("element %lld of the tile is in no box of the plan", (long long)i);
    return;
  }
  int32_t c[HG_TMA_MAX_RANK];
  hg_status_t st = hg_tma_box_coords(p, box, org, c);
  const bool tma = hg_is_ok(&st) && (st = hg_tma_box_issuable(p, box, c), hg_is_ok(&st));
  const uint32_t span = (uint32_t)hg_swizzle_mode_bytes(p->map.swizzle);
  uint32_t pitch = p->map.box_dim[0] * (uint32_t)e;
  if (pitch < span) pitch = span;
  uint64_t row = 0, mul = 1;
  for (int d = 1; d < r; d++) {
    row += (uint64_t)idx[d] * mul;
    mul *= p->map.box_dim[d];
  }
  *write = !tma && inb;
  *gaddr = g;
  *saddr = STAGE +
           hg_model_swizzle_addr(p->map.swizzle, p->box[box].smem_offset + (uint32_t)(row * pitch) +
                                                     (uint32_t)idx[0] * (uint32_t)e);
}

static void test_fallback_element_on_constants(void) {
  static hg_tma_spec_t specs[32];
  static hg_tma_plan_t plans[32];
  const int n = make_specs(specs);
  hg_builder_t *b = NULL;
  CHECK_OK(hg_builder_create("fallback_probe", &b));
  if (!b) return;
  hg_b_set_threads(b, 128);
  hg_val_t out = hg_b_param(b, HG_T_I64, "out");
  nprobes = 0;
  for (int k = 0; k < n; k++) {
    CHECK_OK(hg_tma_spec_normalize(&specs[k]));
    CHECK_OK(hg_tma_spec_plan(&specs[k], &plans[k]));
    const hg_tma_spec_t *s = &specs[k];
    const hg_tma_plan_t *p = &plans[k];
    int64_t elems = 1;
    for (int m = 0; m < s->rank; m++) elems *= p->tile[m];
    const int64_t tiles = hg_tma_spec_tiles(s);
    const int64_t pick[3] = {0, tiles > 1 ? 1 : 0, tiles - 1}; /* negative, mixed, far edge */
    for (int t = 0; t < 3; t++) {
      int64_t q[HG_TMA_MAX_RANK] = {0};
      int32_t org[HG_TMA_MAX_RANK] = {0};
      hg_tma_tile_of(s, pick[t], q, org);
      hg_tma_fallback_in_t in;
      memset(&in, 0, sizeof in);
      for (int m = 0; m < s->rank; m++) {
        in.tile_origin[m] = hg_b_i32(b, org[m]);
        in.extent[m] = hg_b_i64(b, s->shape[m]);
        in.stride_bytes[m] = hg_b_i64(b, s->stride[m] * hg_dtype_bytes(s->dtype));
      }
      in.gmem = hg_b_i64(b, BASE);
      in.stage = hg_b_i32(b, STAGE);
      for (int j = 0; j < 40 && nprobes + 1 < (int)(sizeof probes / sizeof probes[0]); j++) {
        const int64_t i = j == 0 ? 0 : j == 1 ? elems - 1 : (j * 7919 + t * 131) % elems;
        hg_tma_fallback_elem_t el;
        CHECK_OK(hg_tma_emit_fallback_element(b, p, &in, hg_b_i32(b, (int32_t)i), &el));
        hg_val_t v[3] = {hg_b_select(b, el.write, hg_b_i64(b, 1), hg_b_i64(b, 0)), el.gaddr,
                         hg_b_zext(b, el.saddr)};
        for (int w = 0; w < 3; w++) {
          hg_val_t at = hg_b_bin(b, HG_ADD, out, hg_b_i64(b, (3 * nprobes + w) * SLOT_BYTES));
          hg_b_store(b, HG_GLOBAL, 0, 1, at, &v[w]);
        }
        probes[nprobes].spec = k;
        memcpy(probes[nprobes].org, org, sizeof org);
        probes[nprobes].i = i;
        nprobes++;
      }
    }
  }
  hg_text_t ptx = {0};
  hg_status_t st = hg_emit(b, HG_BACKEND_MLIR, &ptx);
  hg_builder_destroy(b);
  if (st.code == HG_ERR_TOOL) {
    fprintf(stderr, "  skipped (the probe folds through the MLIR lowering): %s\n", st.msg);
    return;
  }
  CHECK_OK(st);
  if (!ptx.data) return;
  if (getenv("HG_TEST_DUMP_PTX")) emit_test_dump(ptx.data);
  const int slots = 3 * nprobes;
  int64_t *values = calloc((size_t)slots, sizeof *values);
  bool *seen = calloc((size_t)slots, sizeof *seen);
  const int stores = read_stores(ptx.data, values, seen, slots);
  CHECK_EQ(stores, slots);
  int writes = 0, bad = 0;
  for (int k = 0; k < nprobes && bad < 10; k++) {
    const probe_t *pr = &probes[k];
    int64_t want[3] = {0, 0, 0};
    expected(&specs[pr->spec], &plans[pr->spec], pr->org, pr->i, &want[0], &want[1], &want[2]);
    writes += want[0] != 0;
    for (int w = 0; w < 3; w++) {
      hg_test_checks++;
      if (!seen[3 * k + w] || values[3 * k + w] != want[w]) {
        char what[256];
        hg_tma_spec_print(&specs[pr->spec], what, sizeof what);
        static const char *const names[] = {"write", "global address", "shared address"};
        HG_FAIL("%s, tile at (%d,%d,...), element %lld: %s %lld, expected %lld", what, pr->org[0],
                pr->org[1], (long long)pr->i, names[w], (long long)values[3 * k + w],
                (long long)want[w]);
        bad++;
      }
    }
  }
  /* both outcomes occur, and every probe was compared */
  CHECK(writes > 0 && writes < nprobes);
  fprintf(stderr, "  %d elements of %d specs folded; %d written without TMA\n", nprobes, n, writes);
  free(values);
  free(seen);
  hg_text_free(&ptx);
}

int main(void) {
  HG_RUN(test_counts);
  HG_RUN(test_fallback_element_on_constants);
  return hg_test_finish();
}
