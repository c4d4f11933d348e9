/* GMMA shared-memory layouts and descriptors, with expected values worked out from first
 * principles (PTX ISA "Matrix Descriptor Format" and "Shared Memory Matrix Layout"). */
#include "hg_test.h"
#include "hopgen/sm90.h"

static void test_encode_decode(void) {
  hg_gmma_desc_fields_t f = {.start_address = 0x1230,
                             .lbo_bytes = 16,
                             .sbo_bytes = 1024,
                             .base_offset = 0,
                             .layout_type = 1};
  uint64_t d;
  CHECK_OK(hg_gmma_desc_encode(&f, &d));
  /* start >> 4 = 0x123 in bits 0-13, LBO >> 4 = 1 in bits 16-29, SBO >> 4 = 64 in bits
   * 32-45, layout type 1 (128B) in bits 62-63. */
  CHECK_EQ(d, 0x4000004000010123ull);
  hg_gmma_desc_fields_t g = hg_gmma_desc_decode(d);
  CHECK_EQ(g.start_address, 0x1230);
  CHECK_EQ(g.lbo_bytes, 16);
  CHECK_EQ(g.sbo_bytes, 1024);
  CHECK_EQ(g.base_offset, 0);
  CHECK_EQ(g.layout_type, 1);
  f.base_offset = 5;
  f.layout_type = 3;
  CHECK_OK(hg_gmma_desc_encode(&f, &d));
  CHECK_EQ(d >> 49 & 7, 5);
  CHECK_EQ(d >> 62, 3);
  f.start_address = 0x1238;
  CHECK_ERR(hg_gmma_desc_encode(&f, &d), HG_ERR_INVALID,
            "start address = 4664 B is not a multiple of 16");
  f.start_address = 1u << 18;
  CHECK_ERR(hg_gmma_desc_encode(&f, &d), HG_ERR_INVALID, "does not fit the 14-bit field");
  f.start_address = 0;
  f.sbo_bytes = 8;
  CHECK_ERR(hg_gmma_desc_encode(&f, &d), HG_ERR_INVALID, "stride byte offset = 8 B");
  f.sbo_bytes = 16;
  f.base_offset = 8;
  CHECK_ERR(hg_gmma_desc_encode(&f, &d), HG_ERR_INVALID, "base offset 8 is outside 0..7");
}

static void test_layout_type_numbering(void) {
  /* The descriptor numbers swizzles the other way round from the tensor map. */
  CHECK_EQ(hg_gmma_layout_type(HG_SWIZZLE_NONE), 0);
  CHECK_EQ(hg_gmma_layout_type(HG_SWIZZLE_128B), 1);
  CHECK_EQ(hg_gmma_layout_type(HG_SWIZZLE_64B), 2);
  CHECK_EQ(hg_gmma_layout_type(HG_SWIZZLE_32B), 3);
  for (int m = 0; m <= 3; m++) CHECK_EQ(hg_gmma_layout_type(hg_gmma_swizzle_mode(m)), m);
}

static void test_atoms(void) {
  hg_composed_t c;
  char buf[256];
  /* 128B K-major bf16: 8 rows of 64 elements (128 B), Swizzle<3,3,3> in 2-byte elements
   * (= Swizzle<3,4,3> on bytes). */
  CHECK_OK(hg_gmma_layout_atom(HG_BF16, HG_MAJOR_K, HG_SWIZZLE_128B, &c));
  hg_composed_print(&c, buf, sizeof buf);
  CHECK_STR(buf, "Sw<3,3,3> o 0 o (8,64):(64,1)");
  CHECK_OK(hg_gmma_layout_atom(HG_E4M3, HG_MAJOR_K, HG_SWIZZLE_32B, &c));
  hg_composed_print(&c, buf, sizeof buf);
  CHECK_STR(buf, "Sw<1,4,3> o 0 o (8,32):(32,1)");
  CHECK_OK(hg_gmma_layout_atom(HG_TF32, HG_MAJOR_K, HG_SWIZZLE_NONE, &c));
  hg_composed_print(&c, buf, sizeof buf);
  CHECK_STR(buf, "(8,4):(4,1)"); /* no swizzle: printed as a plain layout */
  CHECK_OK(hg_gmma_layout_atom(HG_F16, HG_MAJOR_MN, HG_SWIZZLE_64B, &c));
  hg_composed_print(&c, buf, sizeof buf);
  CHECK_STR(buf, "Sw<2,3,3> o 0 o (32,8):(1,32)");
  CHECK_ERR(hg_gmma_layout_atom(HG_F64, HG_MAJOR_K, HG_SWIZZLE_NONE, &c), HG_ERR_INVALID,
            "f64 elements (8 B) have no GMMA layout");
}

/* The acceptance case. A 64x64 f16 K-major tile with a 128B swizzle: each row of the
 * swizzle atom is 128 B (64 halves), 8 rows make a 1024-byte atom, and the tile stacks 8
 * atoms along M. One wgmma reads 64 rows x 16 halves (32 B of each row):
 *  - SBO, the distance between groups of 8 rows (core matrices adjacent in M): 8 x 128 B
 *    = 1024 B;
 *  - LBO, the distance between core matrices adjacent in K: the instruction's 32 B of K lie
 *    side by side inside one swizzled 128-byte row, so the hardware ignores it; hopgen
 *    writes 16 B (field value 1);
 *  - layout type 1 = 128B (descriptor numbering); base offset 0 (1024-aligned buffer);
 *  - k-block kb starts 32 kb bytes into the row: 0, 32, 64, 96. */
static void test_acceptance_64x64_f16_k_128b(void) {
  hg_gmma_operand_t op;
  CHECK_OK(hg_gmma_operand_make(HG_F16, HG_MAJOR_K, HG_SWIZZLE_128B, 64, 64, 64, &op));
  CHECK_EQ(op.desc.start_address, 0);
  CHECK_EQ(op.desc.lbo_bytes, 16);
  CHECK_EQ(op.desc.sbo_bytes, 1024);
  CHECK_EQ(op.desc.layout_type, 1);
  CHECK_EQ(op.desc.base_offset, 0);
  CHECK_EQ(op.stage_bytes, 64 * 64 * 2);
  CHECK_EQ(op.align_bytes, 1024);
  CHECK_EQ(op.mn_atoms, 1);
  CHECK_EQ(op.kblocks, 4);
  CHECK_EQ(op.kblock_stride_bytes, 32);
  uint64_t d;
  CHECK_OK(hg_gmma_operand_desc(&op, 0, 0, 0, &d));
  CHECK_EQ(d, 0x4000004000010000ull);
  /* The same tile at smem address 0x2000, k-block 3: start (0x2000 + 96) >> 4. */
  CHECK_OK(hg_gmma_operand_desc(&op, 0x2000, 0, 3, &d));
  CHECK_EQ(d, 0x4000004000010000ull | ((0x2000 + 96) >> 4));
  hg_gmma_desc_fields_t f = hg_gmma_desc_decode(d);
  CHECK_EQ(f.start_address, 0x2000 + 96);
  CHECK_EQ(f.sbo_bytes, 1024);
  CHECK_EQ(f.lbo_bytes, 16);
}

typedef struct expect {
  hg_dtype_t t;
  hg_major_t major;
  hg_swizzle_mode_t sw;
  int mn, k, atom_mn;
  uint32_t lbo, sbo;
  int layout_type;
  uint32_t kb1, kb2; /* advance of k-blocks 1 and 2 */
  uint32_t mn1;      /* advance of MN atom 1 (0 when only one) */
  const char *why;
} expect_t;

static void test_first_principles(void) {
  static const expect_t cases[] = {
      {HG_BF16, HG_MAJOR_K, HG_SWIZZLE_128B, 128, 64, 64, 16, 1024, 1, 32, 64, 8192,
       "atom 8 x 128 B; M atoms of 64 rows are 64 x 128 B apart"},
      {HG_BF16, HG_MAJOR_K, HG_SWIZZLE_NONE, 64, 64, 64, 1024, 128, 0, 2048, 4096, 0,
       "core matrix 8 x 16 B = 128 B contiguous; 8 of them down M (SBO 128 B), then the "
       "next 16 B of K 64 x 16 B = 1024 B later (LBO)"},
      {HG_BF16, HG_MAJOR_K, HG_SWIZZLE_32B, 64, 64, 64, 16, 256, 3, 2048, 4096, 0,
       "atom 8 x 32 B = 256 B (SBO); one instruction's 32 B of K fill a row, so the next "
       "k-block is the next atom along K, after the 8 atoms down M"},
      {HG_BF16, HG_MAJOR_K, HG_SWIZZLE_64B, 64, 64, 64, 16, 512, 2, 32, 4096, 0,
       "atom 8 x 64 B = 512 B; k-block 1 is 32 B into the row, k-block 2 the next atom along "
       "K after 8 atoms down M"},
      {HG_BF16, HG_MAJOR_MN, HG_SWIZZLE_128B, 64, 64, 64, 16, 1024, 1, 2048, 4096, 0,
       "atom 8 k-rows x 128 B (64 M); groups of 8 k 1024 B apart (SBO); 64 rows of M are one "
       "atom, so LBO is unused; a k-block is 16 k = 2 groups"},
      {HG_BF16, HG_MAJOR_MN, HG_SWIZZLE_128B, 256, 64, 256, 8192, 1024, 1, 2048, 4096, 0,
       "B with N = 256: 4 atoms along N, each after the 8 atoms that cover K (8 x 1024 B = "
       "LBO)"},
      {HG_F16, HG_MAJOR_MN, HG_SWIZZLE_NONE, 64, 64, 64, 128, 1024, 0, 256, 512, 0,
       "core matrix 8 k-rows x 16 B (8 M); 8 of them down K (LBO 128 B), the next 8 M after "
       "the 64 k (8 x 128 B = 1024 B, SBO)"},
      {HG_F16, HG_MAJOR_MN, HG_SWIZZLE_32B, 64, 64, 64, 2048, 256, 3, 512, 1024, 0,
       "atom 8 k-rows x 32 B (16 M) = 256 B; groups of 8 k 256 B apart (SBO); the next 16 M "
       "after all 8 atoms of K (2048 B, LBO)"},
      {HG_E4M3, HG_MAJOR_K, HG_SWIZZLE_128B, 64, 128, 64, 16, 1024, 1, 32, 64, 0,
       "atom 8 x 128 B (128 e4m3); an instruction's K = 32 is 32 B"},
      {HG_TF32, HG_MAJOR_K, HG_SWIZZLE_128B, 64, 32, 64, 16, 1024, 1, 32, 64, 0,
       "atom 8 x 128 B (32 tf32); an instruction's K = 8 is 32 B"},
      {HG_S8, HG_MAJOR_K, HG_SWIZZLE_NONE, 64, 64, 64, 1024, 128, 0, 2048, 0, 0,
       "core matrix 8 x 16 s8; 8 down M (SBO 128 B), the next 16 k after 64 rows (1024 B)"},
      {HG_BF16, HG_MAJOR_K, HG_SWIZZLE_128B, 64, 64, 8, 16, 16, 1, 32, 64, 1024,
       "B with N = 8: one group of 8 rows per instruction, so SBO is unused too (16 B); the "
       "next N atom is 8 rows = 1024 B on"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const expect_t *c = &cases[i];
    hg_gmma_operand_t op;
    hg_status_t s = hg_gmma_operand_make(c->t, c->major, c->sw, c->mn, c->k, c->atom_mn, &op);
    if (!hg_is_ok(&s)) {
      HG_FAIL("case %zu (%s): %s", i, c->why, s.msg);
      continue;
    }
    if (op.desc.lbo_bytes != c->lbo || op.desc.sbo_bytes != c->sbo ||
        op.desc.layout_type != c->layout_type || op.kblock_offset_bytes[1] != c->kb1 ||
        (op.kblocks > 2 && op.kblock_offset_bytes[2] != c->kb2) ||
        (op.mn_atoms > 1 && op.mn_atom_offset_bytes[1] != c->mn1)) {
      char buf[256];
      hg_composed_print(&op.layout, buf, sizeof buf);
      HG_FAIL("case %zu (%s): layout %s gives LBO %u SBO %u type %d kb1 %u kb2 %u mn1 %u", i,
              c->why, buf, op.desc.lbo_bytes, op.desc.sbo_bytes, op.desc.layout_type,
              op.kblock_offset_bytes[1], op.kblocks > 2 ? op.kblock_offset_bytes[2] : 0,
              op.mn_atoms > 1 ? op.mn_atom_offset_bytes[1] : 0);
    }
  }
}

static void test_refusals(void) {
  hg_gmma_operand_t op;
  CHECK_ERR(hg_gmma_operand_make(HG_E4M3, HG_MAJOR_MN, HG_SWIZZLE_128B, 64, 64, 64, &op),
            HG_ERR_INVALID, "e4m3 operands cannot be MN-major");
  CHECK_ERR(hg_gmma_operand_make(HG_TF32, HG_MAJOR_MN, HG_SWIZZLE_NONE, 64, 64, 64, &op),
            HG_ERR_INVALID, "tf32 operands cannot be MN-major");
  CHECK_ERR(hg_gmma_operand_make(HG_BF16, HG_MAJOR_K, HG_SWIZZLE_128B, 64, 48, 64, &op),
            HG_ERR_INVALID, "not a whole number of 128-byte 128B swizzle rows");
  CHECK_ERR(hg_gmma_operand_make(HG_BF16, HG_MAJOR_K, HG_SWIZZLE_NONE, 64, 24, 64, &op),
            HG_ERR_INVALID, "K = 24 is not a multiple of the bf16 wgmma's K = 16");
  CHECK_ERR(hg_gmma_operand_make(HG_BF16, HG_MAJOR_K, HG_SWIZZLE_128B, 96, 64, 64, &op),
            HG_ERR_INVALID, "96 rows are not a multiple of the 64 rows");
  CHECK_ERR(hg_gmma_operand_make(HG_F32, HG_MAJOR_K, HG_SWIZZLE_128B, 64, 64, 64, &op),
            HG_ERR_INVALID, "f32 is not a wgmma operand type");
  CHECK_OK(hg_gmma_operand_make(HG_BF16, HG_MAJOR_K, HG_SWIZZLE_128B, 64, 64, 64, &op));
  uint64_t d;
  CHECK_ERR(hg_gmma_operand_desc(&op, 512, 0, 0, &d), HG_ERR_INVALID,
            "not a multiple of 1024 B (128B swizzle)");
  CHECK_ERR(hg_gmma_operand_desc(&op, 0, 0, 4, &d), HG_ERR_INVALID, "outside the tile's 1 x 4");

  hg_composed_t c;
  hg_gmma_desc_fields_t f;
  /* A byte-level swizzle on 2-byte elements is not what TMA and wgmma do. */
  CHECK_OK(hg_composed_parse("Sw<3,4,3> o 0 o (64,16):(64,1)", &c));
  CHECK_ERR(hg_gmma_desc_make(&c, HG_BF16, HG_MAJOR_K, 0, &f), HG_ERR_INVALID,
            "Sw<3,4,3> is not a TMA/GMMA swizzle for 2-byte elements");
  /* Rows 48 B apart: not 16 B (interleaved) nor a swizzle span. */
  CHECK_OK(hg_composed_parse("(64,16):(24,1)", &c));
  CHECK_ERR(hg_gmma_desc_make(&c, HG_BF16, HG_MAJOR_K, 0, &f), HG_ERR_INVALID,
            "rows of a core matrix are 48 B apart, the layout needs 16 B");
  /* An MN-contiguous layout read as K-major. */
  CHECK_OK(hg_composed_parse("Sw<3,3,3> o 0 o (64,16):(1,64)", &c));
  CHECK_ERR(hg_gmma_desc_make(&c, HG_BF16, HG_MAJOR_K, 0, &f), HG_ERR_INVALID,
            "K is not contiguous");
  /* Groups of 8 rows that are not evenly spaced. */
  CHECK_OK(hg_composed_parse("((8,2,4),16):((8,128,512),1)", &c));
  CHECK_ERR(hg_gmma_desc_make(&c, HG_BF16, HG_MAJOR_K, 0, &f), HG_ERR_INVALID,
            "groups of 8 rows are not evenly spaced");
  /* The right K for the type. */
  CHECK_OK(hg_composed_parse("Sw<3,3,3> o 0 o (64,32):(64,1)", &c));
  CHECK_ERR(hg_gmma_desc_make(&c, HG_BF16, HG_MAJOR_K, 0, &f), HG_ERR_INVALID,
            "has K = 32 but one bf16 wgmma reads K = 16");
  /* A swizzled stage buffer off the 1024-byte pattern. */
  CHECK_OK(hg_composed_parse("Sw<3,3,3> o 0 o (64,16):(64,1)", &c));
  CHECK_OK(hg_gmma_desc_make(&c, HG_BF16, HG_MAJOR_K, 2048, &f));
  CHECK_EQ(f.start_address, 2048);
  CHECK_ERR(hg_gmma_desc_make(&c, HG_BF16, HG_MAJOR_K, 2048 + 128, &f), HG_ERR_INVALID,
            "must start at a multiple of 1024 B");
  /* An operand starting one row into the pattern would need a base offset. */
  CHECK_OK(hg_composed_parse("Sw<3,3,3> o 64 o (64,16):(64,1)", &c));
  CHECK_ERR(hg_gmma_desc_make(&c, HG_BF16, HG_MAJOR_K, 0, &f), HG_ERR_INVALID,
            "needs a descriptor base offset");
  /* 8-bit MN-major through the descriptor path. */
  CHECK_OK(hg_composed_parse("(64,32):(1,64)", &c));
  CHECK_ERR(hg_gmma_desc_make(&c, HG_S8, HG_MAJOR_MN, 0, &f), HG_ERR_INVALID,
            "only 16-bit operands may be MN-major");
}

int main(void) {
  HG_RUN(test_encode_decode);
  HG_RUN(test_layout_type_numbering);
  HG_RUN(test_atoms);
  HG_RUN(test_acceptance_64x64_f16_k_128b);
  HG_RUN(test_first_principles);
  HG_RUN(test_refusals);
  return hg_test_finish();
}
