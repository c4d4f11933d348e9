/* The CPU model of TMA and wgmma against hardware truth: an H200-validated model of TMA
 * loads (hashed cases in tma_oracle_cases.h) and hand-worked examples. */
#include <math.h>

#include "hg_test.h"
#include "hopgen/sm90.h"
#include "model/tma_oracle_cases.h"

static uint64_t fnv1a(const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

static uint8_t gmem_buf[1 << 22];
static uint8_t smem_buf[1 << 18];

/* Each line: elem_bytes rank dims... strides_bytes... box... swizzle nan coords... */
static void test_oracle_cases(void) {
  int agree = 0;
  for (size_t ci = 0; ci < sizeof oracle_cases / sizeof oracle_cases[0]; ci++) {
    long long v[32];
    int n = 0;
    const char *s = oracle_cases[ci].line;
    char *end;
    for (;;) {
      long long x = strtoll(s, &end, 10);
      if (end == s) break;
      v[n++] = x;
      s = end;
    }
    int k = 0;
    const int eb = (int)v[k++], rank = (int)v[k++];
    hg_tensormap_params_t p;
    memset(&p, 0, sizeof p);
    p.rank = rank;
    for (int i = 0; i < rank; i++) p.global_dim[i] = (uint64_t)v[k++];
    for (int i = 0; i < rank - 1; i++) p.global_stride_bytes[i] = (uint64_t)v[k++];
    for (int i = 0; i < rank; i++) {
      p.box_dim[i] = (uint32_t)v[k++];
      p.element_strides[i] = 1;
    }
    p.swizzle = (hg_swizzle_mode_t)v[k++];
    p.oob_nan = v[k++] != 0;
    int32_t coords[5];
    for (int i = 0; i < rank; i++) coords[i] = (int32_t)v[k++];
    p.dtype = eb == 1   ? HG_U8
              : eb == 2 ? (p.oob_nan ? HG_F16 : HG_U16)
                        : (p.oob_nan ? HG_F32 : HG_U32);
    /* The oracle's global buffer: byte i = (i * 131 + 7) % 251 + 1 over the tensor. */
    size_t span = (size_t)eb;
    for (int i = 0; i < rank; i++) span *= p.global_dim[i];
    if (rank > 1) span = p.global_stride_bytes[rank - 2] * p.global_dim[rank - 1];
    uint8_t *gm = malloc(span);
    if (!gm) {
      HG_FAIL("case %zu: no memory for a %zu B tensor", ci, span);
      continue;
    }
    for (size_t i = 0; i < span; i++) gm[i] = (uint8_t)((i * 131 + 7) % 251 + 1);
    memset(smem_buf, 0xAB, sizeof smem_buf); /* the oracle poisons shared memory */
    uint32_t tx = 0;
    hg_status_t st = hg_model_tma_load(&p, gm, span, coords, smem_buf, sizeof smem_buf, 0, &tx);
    free(gm);
    const int kind = oracle_cases[ci].kind;
    if (kind == 1) {
      if (st.code == HG_ERR_INVALID && strstr(st.msg, "globalStrides"))
        agree++;
      else
        HG_FAIL("case %zu (%s): the driver refuses it, the model said \"%s\"", ci,
                oracle_cases[ci].line, st.msg);
    } else if (kind == 2) {
      if (st.code == HG_ERR_INVALID && strstr(st.msg, "illegal instruction"))
        agree++;
      else
        HG_FAIL("case %zu (%s): the GPU faults on it, the model said \"%s\"", ci,
                oracle_cases[ci].line, st.msg);
    } else if (!hg_is_ok(&st)) {
      HG_FAIL("case %zu (%s): %s", ci, oracle_cases[ci].line, st.msg);
    } else {
      const uint64_t h = fnv1a(smem_buf, oracle_cases[ci].foot);
      uint64_t elems = 1;
      for (int i = 0; i < rank; i++) elems *= p.box_dim[i];
      if (h != oracle_cases[ci].hash)
        HG_FAIL("case %zu (%s): shared-memory bytes differ from the hardware model", ci,
                oracle_cases[ci].line);
      else if (tx != elems * (uint64_t)eb)
        HG_FAIL("case %zu: transaction bytes %u, expected %llu", ci, tx,
                (unsigned long long)(elems * (uint64_t)eb));
      else
        agree++;
    }
  }
  CHECK_EQ(agree, (int)(sizeof oracle_cases / sizeof oracle_cases[0]));
}

static hg_tensormap_params_t map2(hg_dtype_t t, uint64_t d0, uint64_t d1, uint64_t stride_bytes,
                                  uint32_t b0, uint32_t b1, hg_swizzle_mode_t sw) {
  hg_tensormap_params_t p;
  memset(&p, 0, sizeof p);
  p.dtype = t;
  p.rank = 2;
  p.global_dim[0] = d0;
  p.global_dim[1] = d1;
  p.global_stride_bytes[0] = stride_bytes;
  p.box_dim[0] = b0;
  p.box_dim[1] = b1;
  p.element_strides[0] = p.element_strides[1] = 1;
  p.swizzle = sw;
  return p;
}

static uint16_t *gm16(void) {
  return (uint16_t *)gmem_buf;
}

/* u16 tensor 128 x 64 (row pitch 128 elements) whose element (r, c) holds r * 256 + c. */
static void fill_u16(int rows, int pitch) {
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < pitch; c++) gm16()[r * pitch + c] = (uint16_t)(r * 256 + c);
}

static uint16_t sm16(uint32_t byte) {
  uint16_t v;
  memcpy(&v, smem_buf + byte, 2);
  return v;
}

static void test_swizzle_by_hand(void) {
  fill_u16(64, 128);
  hg_tensormap_params_t p = map2(HG_U16, 128, 64, 256, 64, 8, HG_SWIZZLE_128B);
  memset(smem_buf, 0xAB, 4096);
  const int32_t c[2] = {0, 0};
  uint32_t tx;
  CHECK_OK(hg_model_tma_load(&p, gmem_buf, 128 * 64 * 2, c, smem_buf, sizeof smem_buf, 0, &tx));
  CHECK_EQ(tx, 64 * 8 * 2);
  /* Row 0 (address bits 7..9 = 0) is not permuted: element (0, 9) at byte 18. */
  CHECK_EQ(sm16(18), 9);
  /* Row 1 starts at byte 128; bits 7..9 = 1 flip chunk bit 4: element (1, 0) lands at byte
   * 128 ^ 16 = 144, and element (1, 8) (chunk 1) at byte 128. */
  CHECK_EQ(sm16(144), 256 + 0);
  CHECK_EQ(sm16(128), 256 + 8);
  /* Row 5: chunk c goes to chunk c ^ 5; element (5, 3 * 8 + 1) -> chunk 6, byte 640+96+2. */
  CHECK_EQ(sm16(640 + 96 + 2), 5 * 256 + 25);
  /* 32B swizzle with a 16-byte inner box: rows padded to 32 B, the second half untouched;
   * row 4 (byte 128, bit 7 set) has its 16-byte chunk moved to bytes 144..159. */
  memset(smem_buf, 0xAB, 4096);
  p = map2(HG_U16, 128, 64, 256, 8, 8, HG_SWIZZLE_32B);
  CHECK_OK(hg_model_tma_load(&p, gmem_buf, 128 * 64 * 2, c, smem_buf, sizeof smem_buf, 0, &tx));
  CHECK_EQ(tx, 8 * 8 * 2);
  CHECK_EQ(sm16(0), 0);
  CHECK_EQ(sm16(16), 0xABAB);
  CHECK_EQ(sm16(32), 256);
  CHECK_EQ(sm16(128), 0xABAB);
  CHECK_EQ(sm16(144), 4 * 256);
}

static void test_oob_fill(void) {
  fill_u16(64, 128);
  /* Box of 8 x 4 at (-8, -2): columns -8..-1 and rows -2..-1 out of bounds (zero). */
  hg_tensormap_params_t p = map2(HG_U16, 128, 64, 256, 16, 4, HG_SWIZZLE_NONE);
  const int32_t c[2] = {-8, -2};
  uint32_t tx;
  memset(smem_buf, 0xAB, 4096);
  CHECK_OK(hg_model_tma_load(&p, gmem_buf, 128 * 64 * 2, c, smem_buf, sizeof smem_buf, 0, &tx));
  CHECK_EQ(tx, 16 * 4 * 2);                /* the whole box, out-of-bounds elements included */
  CHECK_EQ(sm16(0), 0);                    /* (-2, -8) */
  CHECK_EQ(sm16(2 * 32 + 7 * 2), 0);       /* (0, -1) */
  CHECK_EQ(sm16(2 * 32 + 8 * 2), 0);       /* (0, 0): in bounds, value 0 */
  CHECK_EQ(sm16(3 * 32 + 9 * 2), 256 + 1); /* (1, 1) */
  /* NaN fill: 0x7FF7 in every 16 bits (seen on an H200), f16 and f32. */
  p.dtype = HG_F16;
  p.oob_nan = true;
  CHECK_OK(hg_model_tma_load(&p, gmem_buf, 128 * 64 * 2, c, smem_buf, sizeof smem_buf, 0, &tx));
  CHECK_EQ(sm16(0), 0x7FF7);
  CHECK_EQ(sm16(3 * 32 + 9 * 2), 256 + 1);
  /* f32, 62 columns: a box of 4 at column 60 holds two in-bounds and two NaN elements. */
  hg_tensormap_params_t q = map2(HG_F32, 62, 64, 256, 4, 1, HG_SWIZZLE_NONE);
  q.oob_nan = true;
  const int32_t c2[2] = {60, 0};
  CHECK_OK(hg_model_tma_load(&q, gmem_buf, 64 * 256, c2, smem_buf, sizeof smem_buf, 0, &tx));
  uint32_t w;
  memcpy(&w, smem_buf + 12, 4);
  CHECK_EQ(w, 0x7FF77FF7u);
  uint32_t g61;
  memcpy(&w, smem_buf + 4, 4);
  memcpy(&g61, gmem_buf + 61 * 4, 4);
  CHECK_EQ(w, g61);
  const int32_t c3[2] = {64, 63}; /* past the end in dim 0 */
  CHECK_OK(hg_model_tma_load(&q, gmem_buf, 64 * 256, c3, smem_buf, sizeof smem_buf, 0, &tx));
  memcpy(&w, smem_buf, 4);
  CHECK_EQ(w, 0x7FF77FF7u);
}

static void test_model_refusals(void) {
  hg_tensormap_params_t p = map2(HG_U16, 128, 64, 256, 64, 8, HG_SWIZZLE_128B);
  uint32_t tx;
  const int32_t bad[2] = {4, 0}; /* 8 B into the row */
  CHECK_ERR(
      hg_model_tma_load(&p, gmem_buf, sizeof gmem_buf, bad, smem_buf, sizeof smem_buf, 0, &tx),
      HG_ERR_INVALID, "the innermost coordinate 4 is 8 B into the row");
  const int32_t neg[2] = {-3, 0};
  CHECK_ERR(
      hg_model_tma_load(&p, gmem_buf, sizeof gmem_buf, neg, smem_buf, sizeof smem_buf, 0, &tx),
      HG_ERR_INVALID, "illegal instruction");
  const int32_t ok[2] = {-8, -1000}; /* outer coordinates may be anything */
  CHECK_OK(hg_model_tma_load(&p, gmem_buf, sizeof gmem_buf, ok, smem_buf, sizeof smem_buf, 0, &tx));
  CHECK_ERR(
      hg_model_tma_load(&p, gmem_buf, sizeof gmem_buf, ok, smem_buf, sizeof smem_buf, 64, &tx),
      HG_ERR_INVALID, "not 128-byte aligned");
  CHECK_ERR(
      hg_model_tma_load(&p, gmem_buf, sizeof gmem_buf, ok, smem_buf, sizeof smem_buf, 128, &tx),
      HG_ERR_UNSUPPORTED, "not aligned to the 1024 B pattern");
  CHECK_ERR(hg_model_tma_load(&p, gmem_buf, 100, ok, smem_buf, sizeof smem_buf, 0, &tx),
            HG_ERR_INVALID, "the tensor spans 16384 B of global memory but 100 B were given");
  p.global_stride_bytes[0] = 250;
  CHECK_ERR(hg_model_tma_load(&p, gmem_buf, sizeof gmem_buf, ok, smem_buf, sizeof smem_buf, 0, &tx),
            HG_ERR_INVALID, "globalStrides[0] = 250 B is not a multiple of 16 B");
}

static void test_store_and_reduce(void) {
  /* Load a 16 x 4 box from one tensor, store it to another at (-8, 62): only the in-bounds
   * quarter (columns 0..7 of rows 62, 63) is written. */
  fill_u16(64, 128);
  hg_tensormap_params_t p = map2(HG_U16, 128, 64, 256, 16, 4, HG_SWIZZLE_32B);
  const int32_t src[2] = {16, 10};
  uint32_t tx;
  CHECK_OK(hg_model_tma_load(&p, gmem_buf, 128 * 64 * 2, src, smem_buf, sizeof smem_buf, 0, &tx));
  static uint16_t out[128 * 64];
  for (int i = 0; i < 128 * 64; i++) out[i] = 0xEEEE;
  const int32_t dst[2] = {-8, 62};
  /* Seen on an H200: a TMA store with a negative coordinate raises an illegal instruction,
   * so the model refuses it (and writes nothing); the element-wise store is the ideal. */
  CHECK_ERR(
      hg_model_tma_store(&p, HG_TMA_STORE, out, sizeof out, dst, smem_buf, sizeof smem_buf, 0),
      HG_ERR_INVALID,
      "TMA store: coordinate 0 (tensor-map dimension 0) is -8: the GPU raises an illegal "
      "instruction: TMA stores and reductions take non-negative coordinates only");
  for (int i = 0; i < 128 * 64; i++) CHECK_EQ(out[i], 0xEEEE);
  CHECK_OK(hg_model_store_elementwise(&p, HG_TMA_STORE, out, sizeof out, dst, smem_buf,
                                      sizeof smem_buf, 0));
  int written = 0;
  for (int r = 0; r < 64; r++)
    for (int c = 0; c < 128; c++) {
      if (out[r * 128 + c] == 0xEEEE) continue;
      written++;
      /* box element (i0, i1) = source (10 + i1, 16 + i0) goes to (62 + i1, -8 + i0) */
      const int i0 = c + 8, i1 = r - 62;
      CHECK_EQ(out[r * 128 + c], (10 + i1) * 256 + 16 + i0);
    }
  CHECK_EQ(written, 2 * 8);
  /* Past the far edges only: TMA takes it and skips the overhang (rows 62, 63, columns
   * 120..127 of the box's 16), exactly as the element-wise store does. */
  static uint16_t out2[128 * 64];
  for (int i = 0; i < 128 * 64; i++) out[i] = out2[i] = 0xEEEE;
  const int32_t far[2] = {120, 62};
  CHECK_OK(
      hg_model_tma_store(&p, HG_TMA_STORE, out, sizeof out, far, smem_buf, sizeof smem_buf, 0));
  CHECK_OK(hg_model_store_elementwise(&p, HG_TMA_STORE, out2, sizeof out2, far, smem_buf,
                                      sizeof smem_buf, 0));
  CHECK(!memcmp(out, out2, sizeof out));
  written = 0;
  for (int i = 0; i < 128 * 64; i++) written += out[i] != 0xEEEE;
  CHECK_EQ(written, 2 * 8);
  /* Any negative coordinate is refused, an outer one too, a reduction too, in any swizzle;
   * the element-wise store takes a misaligned innermost coordinate (no TMA rule applies). */
  const int32_t outer[2] = {16, -1};
  CHECK_ERR(
      hg_model_tma_store(&p, HG_TMA_STORE, out, sizeof out, outer, smem_buf, sizeof smem_buf, 0),
      HG_ERR_INVALID, "coordinate 1 (tensor-map dimension 1) is -1: the GPU raises an illegal");
  const hg_tensormap_params_t pu = map2(HG_U32, 64, 64, 256, 8, 4, HG_SWIZZLE_32B);
  const int32_t outer_u[2] = {8, -1};
  CHECK_ERR(hg_model_tma_store(&pu, HG_TMA_REDUCE_INC, out, sizeof out, outer_u, smem_buf,
                               sizeof smem_buf, 0),
            HG_ERR_INVALID, "TMA reduce: coordinate 1 (tensor-map dimension 1) is -1");
  const int32_t odd[2] = {-3, 60};
  CHECK_ERR(
      hg_model_tma_store(&p, HG_TMA_STORE, out, sizeof out, odd, smem_buf, sizeof smem_buf, 0),
      HG_ERR_INVALID, "not a multiple of 16 B");
  CHECK_OK(hg_model_store_elementwise(&p, HG_TMA_STORE, out2, sizeof out2, odd, smem_buf,
                                      sizeof smem_buf, 0));
  CHECK_EQ(out2[60 * 128 + 0], (10 + 0) * 256 + 16 + 3); /* box element (3, 0) */

  /* Reductions, one element each. */
  struct {
    hg_tma_op_t op;
    hg_dtype_t t;
    uint32_t old, val, want;
  } cases[] = {
      {HG_TMA_REDUCE_ADD, HG_U32, 0xFFFFFFFFu, 2, 1},
      {HG_TMA_REDUCE_ADD, HG_F32, 0x3FC00000u /* 1.5 */, 0x40100000u /* 2.25 */, 0x40700000u},
      {HG_TMA_REDUCE_ADD, HG_F16, 0x3C00 /* 1 */, 0x1400 /* 2^-10 */, 0x3C01},
      {HG_TMA_REDUCE_ADD, HG_F16, 0x3C00, 0x1000 /* 2^-11: a tie, to even */, 0x3C00},
      {HG_TMA_REDUCE_ADD, HG_F16, 0x3C01, 0x1000 /* tie from odd: up */, 0x3C02},
      {HG_TMA_REDUCE_ADD, HG_BF16, 0x3F80 /* 1 */, 0x3B80 /* 2^-8: tie */, 0x3F80},
      {HG_TMA_REDUCE_ADD, HG_BF16, 0x3F80, 0x3C00 /* 2^-7 */, 0x3F81},
      {HG_TMA_REDUCE_MIN, HG_S32, 5, (uint32_t)-7, (uint32_t)-7},
      {HG_TMA_REDUCE_MAX, HG_S32, 5, (uint32_t)-7, 5},
      {HG_TMA_REDUCE_MIN, HG_U32, 5, (uint32_t)-7, 5},
      {HG_TMA_REDUCE_MAX, HG_BF16, 0xC000 /* -2 */, 0x3F80 /* 1 */, 0x3F80},
      {HG_TMA_REDUCE_INC, HG_U32, 3, 10, 4},
      {HG_TMA_REDUCE_INC, HG_U32, 10, 10, 0},
      {HG_TMA_REDUCE_DEC, HG_U32, 0, 10, 10},
      {HG_TMA_REDUCE_DEC, HG_U32, 11, 10, 10},
      {HG_TMA_REDUCE_DEC, HG_U32, 7, 10, 6},
      {HG_TMA_REDUCE_AND, HG_U32, 0xF0F0, 0xFF00, 0xF000},
      {HG_TMA_REDUCE_OR, HG_S32, 0xF0F0, 0xFF00, 0xFFF0},
      {HG_TMA_REDUCE_XOR, HG_U32, 0xF0F0, 0xFF00, 0x0FF0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const int e = hg_dtype_bytes(cases[i].t);
    hg_tensormap_params_t q = map2(cases[i].t, 16 / e, 1, 16, 16 / e, 1, HG_SWIZZLE_NONE);
    uint8_t g[16] = {0}, s[128] = {0};
    memcpy(g, &cases[i].old, (size_t)e);
    memcpy(s, &cases[i].val, (size_t)e);
    const int32_t c[2] = {0, 0};
    CHECK_OK(hg_model_tma_store(&q, cases[i].op, g, sizeof g, c, s, sizeof s, 0));
    uint32_t got = 0;
    memcpy(&got, g, (size_t)e);
    if (got != cases[i].want)
      HG_FAIL("%s on %s: 0x%x with 0x%x gave 0x%x, expected 0x%x", hg_tma_op_name(cases[i].op),
              hg_dtype_name(cases[i].t), cases[i].old, cases[i].val, got, cases[i].want);
  }
  hg_tensormap_params_t q = map2(HG_F32, 4, 1, 16, 4, 1, HG_SWIZZLE_NONE);
  uint8_t g[16] = {0}, s[128] = {0};
  const int32_t c[2] = {0, 0};
  CHECK_ERR(hg_model_tma_store(&q, HG_TMA_REDUCE_INC, g, sizeof g, c, s, sizeof s, 0),
            HG_ERR_INVALID, ".inc takes u32 only");
  CHECK_ERR(hg_model_tma_store(&q, HG_TMA_LOAD, g, sizeof g, c, s, sizeof s, 0), HG_ERR_INVALID,
            "is not a store or reduce");
}

/* Seen on an H200: a TMA store clips dimension 0 at 16-byte granularity. f16 rows of 100
 * elements (200 B) in a pitch of 104 (208 B): a 64-wide box at column 64 wrote columns
 * 64..103 of each row, i.e. also the 4 padding elements up to the 16-byte boundary; the
 * element-wise ideal writes 64..99 only. */
static void test_store_16_byte_clip(void) {
  hg_tensormap_params_t p = {.dtype = HG_F16,
                             .rank = 2,
                             .global_dim = {100, 4},
                             .global_stride_bytes = {208},
                             .box_dim = {64, 4},
                             .element_strides = {1, 1},
                             .swizzle = HG_SWIZZLE_128B};
  static uint8_t smem[4096], tma_out[208 * 4], ideal[208 * 4];
  for (size_t i = 0; i < sizeof smem; i++) smem[i] = (uint8_t)(i * 7 + 1);
  memset(tma_out, 0xEE, sizeof tma_out);
  memset(ideal, 0xEE, sizeof ideal);
  const int32_t at[2] = {64, 0};
  CHECK_OK(hg_model_tma_store(&p, HG_TMA_STORE, tma_out, sizeof tma_out, at, smem, sizeof smem, 0));
  CHECK_OK(
      hg_model_store_elementwise(&p, HG_TMA_STORE, ideal, sizeof ideal, at, smem, sizeof smem, 0));
  for (int row = 0; row < 4; row++)
    for (int col = 0; col < 104; col++) {
      const size_t o = (size_t)row * 208 + (size_t)col * 2;
      const bool hw = col >= 64, id = col >= 64 && col < 100;
      CHECK(hw == (tma_out[o] != 0xEE || tma_out[o + 1] != 0xEE));
      CHECK(id == (ideal[o] != 0xEE || ideal[o + 1] != 0xEE));
    }
  /* f32 rows of 100 (400 B) end on a boundary: the TMA store writes no more than the ideal. */
  p.dtype = HG_F32;
  p.global_stride_bytes[0] = 416;
  p.box_dim[0] = 32;
  static uint8_t a[416 * 4], b2[416 * 4];
  memset(a, 0xEE, sizeof a);
  memset(b2, 0xEE, sizeof b2);
  const int32_t at2[2] = {96, 0};
  CHECK_OK(hg_model_tma_store(&p, HG_TMA_STORE, a, sizeof a, at2, smem, sizeof smem, 0));
  CHECK_OK(hg_model_store_elementwise(&p, HG_TMA_STORE, b2, sizeof b2, at2, smem, sizeof smem, 0));
  CHECK(memcmp(a, b2, sizeof a) == 0);
}

static void test_multicast_model(void) {
  fill_u16(64, 128);
  hg_tensormap_params_t p = map2(HG_U16, 128, 64, 256, 64, 8, HG_SWIZZLE_128B);
  static uint8_t s0[4096], s1[4096], s2[4096];
  uint8_t *ctas[3] = {s0, s1, s2};
  memset(s0, 0, sizeof s0);
  memset(s1, 0, sizeof s1);
  memset(s2, 0x55, sizeof s2);
  uint32_t tx[3] = {0, 0, 0};
  const int32_t c[2] = {0, 8};
  CHECK_OK(
      hg_model_tma_load_multicast(&p, gmem_buf, 128 * 64 * 2, c, ctas, 3, 4096, 1024, 0x3, tx));
  CHECK_EQ(tx[0], 1024);
  CHECK_EQ(tx[1], 1024);
  CHECK_EQ(tx[2], 0);
  CHECK(!memcmp(s0, s1, sizeof s0));
  CHECK_EQ(s2[1024], 0x55);
  CHECK_ERR(
      hg_model_tma_load_multicast(&p, gmem_buf, 128 * 64 * 2, c, ctas, 3, 4096, 1024, 0x8, tx),
      HG_ERR_INVALID, "mask 0x0008 names CTAs beyond the cluster of 3");
}

static void test_wgmma_addresses_by_hand(void) {
  /* K-major, 128B swizzle, start 0, SBO 1024: (m, k) of bf16 sits at row m % 8 of group
   * m / 8: linear 1024 (m / 8) + 128 (m % 8) + 2 k, then chunk ^= row. */
  hg_gmma_desc_fields_t f = {
      .start_address = 0, .lbo_bytes = 16, .sbo_bytes = 1024, .layout_type = 1};
  uint64_t d;
  CHECK_OK(hg_gmma_desc_encode(&f, &d));
  uint32_t a;
  CHECK_OK(hg_model_wgmma_addr(d, HG_BF16, HG_MAJOR_K, 1, 0, &a));
  CHECK_EQ(a, 144);
  CHECK_OK(hg_model_wgmma_addr(d, HG_BF16, HG_MAJOR_K, 8, 0, &a));
  CHECK_EQ(a, 1024);
  CHECK_OK(hg_model_wgmma_addr(d, HG_BF16, HG_MAJOR_K, 0, 8, &a));
  CHECK_EQ(a, 16);
  CHECK_OK(hg_model_wgmma_addr(d, HG_BF16, HG_MAJOR_K, 3, 9, &a));
  CHECK_EQ(a, 3 * 128 + ((1 ^ 3) * 16) + 2);
  /* Interleaved K-major: core matrices of 128 contiguous bytes, K neighbour at LBO. */
  f.layout_type = 0;
  f.lbo_bytes = 2048;
  f.sbo_bytes = 128;
  CHECK_OK(hg_gmma_desc_encode(&f, &d));
  CHECK_OK(hg_model_wgmma_addr(d, HG_F16, HG_MAJOR_K, 9, 10, &a));
  CHECK_EQ(a, 128 + 2048 + 16 + 4);
  /* MN-major 128B: (mn, k) at k-row k % 8 of group k / 8 (SBO), chunk mn / 8. */
  f.layout_type = 1;
  f.lbo_bytes = 8192;
  f.sbo_bytes = 1024;
  CHECK_OK(hg_gmma_desc_encode(&f, &d));
  CHECK_OK(hg_model_wgmma_addr(d, HG_BF16, HG_MAJOR_MN, 70, 9, &a));
  /* atom 1 along MN (LBO), group 1 along K (SBO), row 1, chunk (70 % 64) / 8 = 0 ^ 1 */
  CHECK_EQ(a, 8192 + 1024 + 128 + 16 + 12);
  CHECK_ERR(hg_model_wgmma_addr(d, HG_E4M3, HG_MAJOR_MN, 0, 0, &a), HG_ERR_INVALID,
            "must have 16-bit elements");
  CHECK_ERR(hg_model_wgmma_addr(d, HG_BF16, HG_MAJOR_K, 0, 16, &a), HG_ERR_INVALID,
            "outside the 256 x 16 operand");
  f.start_address = 128;
  CHECK_OK(hg_gmma_desc_encode(&f, &d));
  CHECK_ERR(hg_model_wgmma_addr(d, HG_BF16, HG_MAJOR_K, 0, 0, &a), HG_ERR_UNSUPPORTED,
            "needs a base offset");
  f.start_address = 0;
  f.base_offset = 1;
  CHECK_OK(hg_gmma_desc_encode(&f, &d));
  CHECK_ERR(hg_model_wgmma_addr(d, HG_BF16, HG_MAJOR_K, 0, 0, &a), HG_ERR_UNSUPPORTED,
            "base offset 1 is not modelled");
}

int main(void) {
  HG_RUN(test_oracle_cases);
  HG_RUN(test_swizzle_by_hand);
  HG_RUN(test_oob_fill);
  HG_RUN(test_model_refusals);
  HG_RUN(test_store_and_reduce);
  HG_RUN(test_store_16_byte_clip);
  HG_RUN(test_multicast_model);
  HG_RUN(test_wgmma_addresses_by_hand);
  return hg_test_finish();
}
