/* The host side of `hopgen tma --check`, without a GPU: what the check expects of every CTA
 * (loads) or of the output (stores) must equal an independent statement of what the
 * kernel does, written from the tile's shared-memory layout alone: tile element c of the
 * CTA at origin o lands at byte layout(c) x esize of the stage buffer, holding tensor
 * element o + c (zero or NaN outside the tensor); every other byte keeps the poison. The
 * check itself goes through the plan's boxes and the CPU model of TMA, so the two meet
 * only in the answer. Then the comparison: a perfect GPU passes, a flipped byte is found
 * and described. Covers negative origins in every mode, tiles hanging over every edge,
 * multicast slices of clusters 2 and 4, NaN fill, every swizzle, ranks 1-3. */
#include <stdio.h>
#include <string.h>

#include "hg_test.h"
#include "hopgen/kernels.h"
#include "kernels/tma_internal.h"

static hg_tma_check_t chk; /* large: keep off the stack */
static hg_tma_result_t res;

/* The element offset the stage layout gives tile coordinate c (flat, one per mode). */
static int64_t layout_offset(const hg_tma_plan_t *p, int rank, const int64_t *c) {
  hg_tuple_t crd;
  int64_t off = -1;
  hg_status_t s = hg_tuple_ints(&crd, rank, c);
  if (hg_is_ok(&s)) s = hg_composed_eval(&p->smem, &crd, &off);
  if (!hg_is_ok(&s)) HG_FAIL("evaluating the stage layout: %s", s.msg);
  return off;
}

/* Iterate the tile: c[] over [0, tile) per mode, mode 0 fastest; false when done. */
static bool next_coord(const hg_tma_spec_t *s, int64_t *c) {
  for (int m = 0; m < s->rank; m++) {
    if (++c[m] < s->tile[m]) return true;
    c[m] = 0;
  }
  return false;
}

/* Byte offset of tensor element g (per mode) from the tensor base, or -1 outside. */
static int64_t tensor_offset(const hg_tma_spec_t *s, const int64_t *g) {
  int64_t off = 0;
  for (int m = 0; m < s->rank; m++) {
    if (g[m] < 0 || g[m] >= s->shape[m]) return -1;
    off += g[m] * s->stride[m];
  }
  return off * hg_dtype_bytes(s->dtype);
}

static void independent_load(const hg_tma_check_t *x, uint8_t *want) {
  const hg_tma_spec_t *s = &x->s;
  const int e = x->esize;
  memset(want, HG_TMA_POISON, (size_t)x->image_bytes);
  for (int64_t cta = 0; cta < x->ctas; cta++) {
    int64_t q[HG_TMA_MAX_RANK];
    int32_t org[HG_TMA_MAX_RANK];
    hg_tma_tile_of(s, cta / x->C, q, org);
    uint8_t *img = want + (uint64_t)cta * x->p->smem_bytes;
    int64_t c[HG_TMA_MAX_RANK] = {0};
    do {
      int64_t g[HG_TMA_MAX_RANK];
      for (int m = 0; m < s->rank; m++) g[m] = org[m] + c[m];
      const int64_t at = layout_offset(x->p, s->rank, c) * e;
      const int64_t src = tensor_offset(s, g);
      if (at < 0 || at + e > (int64_t)x->p->smem_bytes) {
        HG_FAIL("tile element outside the stage buffer");
        return;
      }
      if (src >= 0)
        memcpy(img + at, x->tensor + HG_TMA_GUARD_BYTES + src, (size_t)e);
      else
        for (int i = 0; i < e; i++) img[at + i] = s->oob_nan ? (i % 2 ? 0x7F : 0xF7) : 0;
    } while (next_coord(s, c));
  }
}

/* Stores, and the reductions whose arithmetic is plain integer arithmetic. */
static bool independent_store(const hg_tma_check_t *x, uint8_t *want) {
  const hg_tma_spec_t *s = &x->s;
  const int e = x->esize;
  if (s->op != HG_TMA_STORE && !(e == 4 && !hg_dtype_is_float(s->dtype) &&
                                 (s->op == HG_TMA_REDUCE_ADD || s->op == HG_TMA_REDUCE_XOR ||
                                  s->op == HG_TMA_REDUCE_AND || s->op == HG_TMA_REDUCE_OR)))
    return false;
  memcpy(want, x->tensor, (size_t)x->alloc_bytes);
  for (int64_t cta = 0; cta < x->ctas; cta++) {
    int64_t q[HG_TMA_MAX_RANK];
    int32_t org[HG_TMA_MAX_RANK];
    hg_tma_tile_of(s, cta, q, org);
    const uint8_t *img = x->images + (uint64_t)cta * x->p->smem_bytes;
    int64_t c[HG_TMA_MAX_RANK] = {0};
    do {
      int64_t g[HG_TMA_MAX_RANK];
      for (int m = 0; m < s->rank; m++) g[m] = org[m] + c[m];
      const int64_t at = layout_offset(x->p, s->rank, c) * e;
      const int64_t dst = tensor_offset(s, g);
      if (dst < 0) continue;
      uint8_t *out = want + HG_TMA_GUARD_BYTES + dst;
      if (s->op == HG_TMA_STORE) {
        memcpy(out, img + at, (size_t)e);
        continue;
      }
      uint32_t a, b;
      memcpy(&a, out, 4);
      memcpy(&b, img + at, 4);
      a = s->op == HG_TMA_REDUCE_ADD   ? a + b
          : s->op == HG_TMA_REDUCE_XOR ? a ^ b
          : s->op == HG_TMA_REDUCE_AND ? a & b
                                       : a | b;
      memcpy(out, &a, 4);
    } while (next_coord(s, c));
  }
  return true;
}

static int run_spec(const hg_tma_spec_t *spec) {
  char what[256];
  hg_tma_spec_print(spec, what, sizeof what);
  hg_status_t st = hg_tma_check_init(&chk, spec);
  if (hg_is_ok(&st)) st = hg_tma_check_prepare(&chk, 12345);
  hg_test_checks++;
  if (!hg_is_ok(&st)) {
    HG_FAIL("%s: %s", what, st.msg);
    hg_tma_check_free(&chk);
    return 0;
  }
  const uint64_t n = chk.load ? chk.image_bytes : chk.alloc_bytes;
  uint8_t *want = malloc((size_t)n);
  bool independent = true;
  if (chk.load)
    independent_load(&chk, want);
  else
    independent = independent_store(&chk, want);
  if (independent) {
    hg_test_checks++;
    for (uint64_t i = 0; i < n; i++)
      if (want[i] != chk.expected[i]) {
        HG_FAIL("%s: byte %llu: the check expects 0x%02X, the layout says 0x%02X", what,
                (unsigned long long)i, chk.expected[i], want[i]);
        break;
      }
  }
  free(want);

  /* A perfect GPU passes (a store CTA reports the boxes it wrote without TMA) ... */
  memcpy(chk.got, chk.expected, (size_t)n);
  int64_t fallback = 0;
  for (int64_t c = 0; c < chk.ctas; c++) {
    int64_t q[HG_TMA_MAX_RANK];
    int32_t org[HG_TMA_MAX_RANK];
    hg_tma_tile_of(&chk.s, c / chk.C, q, org);
    const int nf = hg_tma_tile_fallback_boxes(chk.p, org);
    fallback += nf;
    chk.status[c] = HG_TMA_STATUS_DONE | (uint32_t)nf << HG_TMA_STATUS_FALLBACK_SHIFT;
  }
  CHECK_EQ(fallback, hg_tma_spec_fallback_boxes(&chk.s, chk.p));
  if (!chk.load) CHECK(fallback > 0); /* every store spec here has negative origins */
  memset(&res, 0, sizeof res);
  res.first_bad_cta = res.first_fallback_cta = -1;
  hg_tma_check_compare(&chk, 4, &res);
  CHECK_EQ(res.mismatches, 0);
  CHECK_EQ(res.bytes_compared, n);
  CHECK_EQ(res.ctas_fallback_wrong, 0);
  CHECK_EQ(res.fallback_reported, fallback);
  if (!chk.load) {
    /* ... one that takes a negative box through TMA (or skips it) is caught by its word */
    chk.status[0] ^= 1u << HG_TMA_STATUS_FALLBACK_SHIFT;
    memset(&res, 0, sizeof res);
    res.first_bad_cta = res.first_fallback_cta = -1;
    hg_tma_check_compare(&chk, 4, &res);
    CHECK_EQ(res.ctas_fallback_wrong, 1);
    CHECK_EQ(res.first_fallback_cta, 0);
    CHECK_EQ(res.ctas_unfinished + res.ctas_timed_out, 0);
    chk.status[0] ^= 1u << HG_TMA_STATUS_FALLBACK_SHIFT;
  }
  /* ... and one that gets a byte wrong, or starves a CTA, does not. */
  const uint64_t at = n / 2 + 1;
  chk.got[at] ^= 0x5A;
  chk.status[chk.ctas - 1] = HG_TMA_STATUS_TIMEOUT;
  memset(&res, 0, sizeof res);
  res.first_bad_cta = -1;
  hg_tma_check_compare(&chk, 4, &res);
  CHECK_EQ(res.mismatches, 1);
  CHECK_EQ(res.reported, 1);
  CHECK_EQ(res.ctas_timed_out, 1);
  CHECK_EQ(res.first_bad_cta, chk.ctas - 1);
  CHECK(res.first[0].where[0] != '\0');
  if (chk.load) {
    CHECK_EQ(res.first[0].cta, (int64_t)(at / chk.p->smem_bytes));
    CHECK_EQ(res.first[0].offset, at % chk.p->smem_bytes);
    CHECK(strstr(res.first[0].where, "CTA ") == res.first[0].where);
    CHECK(strstr(res.first[0].where, "smem byte") != NULL);
  } else {
    CHECK(strstr(res.first[0].where, "output byte") != NULL);
  }
  if (getenv("HG_TEST_VERBOSE")) fprintf(stderr, "  %s\n    %s\n", what, res.first[0].where);
  hg_tma_check_free(&chk);
  return 1;
}

static hg_tma_spec_t spec2(hg_tma_op_t op, hg_dtype_t t, hg_swizzle_mode_t sw, int64_t s0,
                           int64_t s1, int t0, int t1, int32_t o0, int32_t o1) {
  hg_tma_spec_t s = hg_tma_spec_default(op);
  s.dtype = t;
  s.swizzle = sw;
  s.shape[0] = s0;
  s.shape[1] = s1;
  s.tile[0] = t0;
  s.tile[1] = t1;
  s.origin[0] = o0;
  s.origin[1] = o1;
  s.grid[0] = s.grid[1] = 0;
  return s;
}

static void test_loads(void) {
  static const hg_dtype_t types[] = {HG_U8, HG_F16, HG_F32};
  int ran = 0;
  for (int ti = 0; ti < 3; ti++) {
    const int e = hg_dtype_bytes(types[ti]);
    for (int sw = 0; sw < 4; sw++) {
      const int span = sw ? hg_swizzle_mode_bytes((hg_swizzle_mode_t)sw) : 64;
      /* negative origins in both modes, tiles hanging over every edge, a padded row pitch */
      hg_tma_spec_t s = spec2(HG_TMA_LOAD, types[ti], (hg_swizzle_mode_t)sw, 45,
                              3 * span / e + 16 / e, 16, 2 * span / e, -7, -32 / e);
      s.stride[0] = 4 * span / e;
      s.stride[1] = 1;
      ran += run_spec(&s);
      s.op = HG_TMA_PREFETCH;
      ran += run_spec(&s);
      /* multicast: clusters of 2 and 4 share each tile */
      s.op = HG_TMA_LOAD;
      s.tile[0] = 64;
      s.shape[0] = 150;
      for (int c = 2; c <= 4; c *= 2) {
        s.cluster = c;
        ran += run_spec(&s);
      }
      s.cluster = 1;
      if (hg_dtype_is_float(types[ti])) {
        s.oob_nan = true;
        ran += run_spec(&s);
      }
    }
  }
  /* rank 3 and rank 1, negative in every mode */
  hg_tma_spec_t s = hg_tma_spec_default(HG_TMA_LOAD);
  s.rank = 3;
  s.shape[0] = 3;
  s.shape[1] = 20;
  s.shape[2] = 72;
  s.tile[0] = 2;
  s.tile[1] = 16;
  s.tile[2] = 64;
  s.origin[0] = -1;
  s.origin[1] = -9;
  s.origin[2] = -8;
  s.grid[0] = s.grid[1] = s.grid[2] = 0;
  ran += run_spec(&s);
  s.cluster = 2;
  ran += run_spec(&s);
  s = hg_tma_spec_default(HG_TMA_LOAD);
  s.rank = 1;
  s.shape[0] = 1000;
  s.tile[0] = 256;
  s.origin[0] = -64;
  s.swizzle = HG_SWIZZLE_NONE;
  s.grid[0] = 0;
  ran += run_spec(&s);
  CHECK(ran >= 40);
}

static void test_stores(void) {
  static const hg_tma_op_t ops[] = {HG_TMA_STORE,      HG_TMA_REDUCE_ADD, HG_TMA_REDUCE_MIN,
                                    HG_TMA_REDUCE_MAX, HG_TMA_REDUCE_INC, HG_TMA_REDUCE_DEC,
                                    HG_TMA_REDUCE_AND, HG_TMA_REDUCE_OR,  HG_TMA_REDUCE_XOR};
  static const hg_dtype_t types[] = {HG_U8, HG_F16, HG_BF16, HG_U32, HG_S32, HG_F32};
  for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++)
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
      if (hg_tma_op_is_reduce(ops[oi])) {
        hg_status_t ok = hg_tma_reduce_check(ops[oi], types[ti]);
        if (!hg_is_ok(&ok)) continue;
      }
      const int e = hg_dtype_bytes(types[ti]);
      for (int sw = 0; sw < 4; sw += 3) {
        const int span = sw ? hg_swizzle_mode_bytes((hg_swizzle_mode_t)sw) : 64;
        hg_tma_spec_t s = spec2(ops[oi], types[ti], (hg_swizzle_mode_t)sw, 37,
                                2 * span / e + 16 / e, 16, span / e, -5, -16 / e);
        s.stride[0] = 3 * span / e;
        s.stride[1] = 1;
        run_spec(&s);
      }
    }
}

/* Guard bytes and row padding are described as such. */
static void test_store_descriptions(void) {
  hg_tma_spec_t s = spec2(HG_TMA_STORE, HG_U32, HG_SWIZZLE_NONE, 8, 12, 8, 16, 0, 0);
  s.stride[0] = 16;
  s.stride[1] = 1;
  CHECK_OK(hg_tma_check_init(&chk, &s));
  CHECK_OK(hg_tma_check_prepare(&chk, 7));
  if (!chk.got) return;
  memcpy(chk.got, chk.expected, (size_t)chk.alloc_bytes);
  for (int64_t c = 0; c < chk.ctas; c++) chk.status[c] = HG_TMA_STATUS_DONE;
  chk.got[3] ^= 1;                                 /* a guard byte before the tensor */
  chk.got[HG_TMA_GUARD_BYTES + 12 * 4] ^= 1;       /* row 0, column 12: padding */
  chk.got[HG_TMA_GUARD_BYTES + (16 + 5) * 4] ^= 1; /* element (1, 5) */
  memset(&res, 0, sizeof res);
  res.first_bad_cta = -1;
  hg_tma_check_compare(&chk, 8, &res);
  CHECK_EQ(res.mismatches, 3);
  CHECK(strstr(res.first[0].where, "guard byte before") != NULL);
  CHECK(strstr(res.first[1].where, "row padding") != NULL);
  CHECK(strstr(res.first[2].where, "tensor (1,5), written by CTA 0 (tile (0,0))") != NULL);
  hg_tma_check_free(&chk);
}

int main(void) {
  HG_RUN(test_loads);
  HG_RUN(test_stores);
  HG_RUN(test_store_descriptions);
  return hg_test_finish();
}
