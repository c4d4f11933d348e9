/* TMA plans: tensor maps, boxes, coordinates, multicast slices, and every constraint of
 * tiled tensor maps refused with a sentence naming the rule and the value. */
#include "hg_test.h"
#include "hopgen/sm90.h"

static hg_tma_tensor_t tensor2(hg_dtype_t t, int64_t s0, int64_t s1, int64_t st0, int64_t st1) {
  hg_tma_tensor_t g;
  memset(&g, 0, sizeof g);
  g.dtype = t;
  g.rank = 2;
  g.shape[0] = s0;
  g.shape[1] = s1;
  g.stride[0] = st0;
  g.stride[1] = st1;
  return g;
}

static hg_tma_tensor_t tensor3(hg_dtype_t t, const int64_t *shape, const int64_t *stride) {
  hg_tma_tensor_t g;
  memset(&g, 0, sizeof g);
  g.dtype = t;
  g.rank = 3;
  for (int m = 0; m < 3; m++) {
    g.shape[m] = shape[m];
    g.stride[m] = stride[m];
  }
  return g;
}

static hg_status_t plan_tile(const hg_tma_tensor_t *g, int t0, int t1, hg_swizzle_mode_t sw,
                             const hg_tma_options_t *o, hg_tma_plan_t *p) {
  hg_composed_t c;
  const int tile[2] = {t0, t1};
  HG_TRY(hg_tma_smem_layout(g, tile, sw, &c));
  return hg_tma_plan_make(g, &c, o, p);
}

static hg_tma_plan_t plan; /* large: keep off the stack */

/* The plan of a layout written in the notation. */
static hg_status_t plan_layout(const hg_tma_tensor_t *g, const char *text,
                               const hg_tma_options_t *o, hg_tma_plan_t *p) {
  hg_composed_t c;
  HG_TRY(hg_composed_parse(text, &c));
  return hg_tma_plan_make(g, &c, o, p);
}

/* The README's example: A (1000 x 4096 bf16, row-major), a 128 x 64 tile, 128B swizzle. */
static void test_basic_load(void) {
  hg_tma_tensor_t g = tensor2(HG_BF16, 1000, 4096, 4096, 1);
  hg_tma_options_t o = hg_tma_options_default(HG_TMA_LOAD);
  CHECK_OK(plan_tile(&g, 128, 64, HG_SWIZZLE_128B, &o, &plan));
  char buf[256];
  hg_composed_print(&plan.smem, buf, sizeof buf);
  CHECK_STR(buf, "Sw<3,3,3> o 0 o (128,64):(64,1)");
  /* Tensor-map dimension 0 is the unit-stride mode (K, mode 1), then M. */
  CHECK_EQ(plan.tmap_mode[0], 1);
  CHECK_EQ(plan.tmap_mode[1], 0);
  CHECK_EQ(plan.mode_dim[0], 1);
  CHECK_EQ(plan.map.rank, 2);
  CHECK_EQ(plan.map.global_dim[0], 4096);
  CHECK_EQ(plan.map.global_dim[1], 1000);
  CHECK_EQ(plan.map.global_stride_bytes[0], 8192);
  /* One box: 64 elements = 128 B (the whole swizzle span) x 128 rows. */
  CHECK_EQ(plan.map.box_dim[0], 64);
  CHECK_EQ(plan.map.box_dim[1], 128);
  CHECK_EQ(plan.map.element_strides[0], 1);
  CHECK_EQ(plan.map.swizzle, HG_SWIZZLE_128B);
  CHECK_EQ(plan.map.interleave, 0);
  CHECK_EQ(plan.map.l2_promotion, 3);
  CHECK(!plan.map.oob_nan);
  CHECK_EQ(plan.num_boxes, 1);
  CHECK_EQ(plan.box[0].coord[0], 0);
  CHECK_EQ(plan.box[0].coord[1], 0);
  CHECK_EQ(plan.box[0].smem_offset, 0);
  CHECK_EQ(plan.box_bytes, 128 * 64 * 2);
  CHECK_EQ(plan.tile_bytes, 16384);
  CHECK_EQ(plan.smem_bytes, 16384);
  CHECK_EQ(plan.smem_align_bytes, 1024);
  CHECK_EQ(plan.expect_tx_bytes, 16384);
  CHECK_EQ(plan.cluster, 1);
  /* Origin (-3, 64) per tensor mode: coordinates in tensor-map order (k, m) = (64, -3). */
  const int32_t origin[2] = {-3, 64};
  int32_t c[2];
  CHECK_OK(hg_tma_box_coords(&plan, 0, origin, c));
  CHECK_EQ(c[0], 64);
  CHECK_EQ(c[1], -3);
}

static void test_two_boxes(void) {
  /* K = 128 bf16 is two 128-byte swizzle rows: two boxes along K, the second after the
   * first one's 128 rows (128 x 128 B = 16 KiB). */
  hg_tma_tensor_t g = tensor2(HG_BF16, 1000, 4096, 4096, 1);
  hg_tma_options_t o = hg_tma_options_default(HG_TMA_LOAD);
  CHECK_OK(plan_tile(&g, 128, 128, HG_SWIZZLE_128B, &o, &plan));
  CHECK_EQ(plan.num_boxes, 2);
  CHECK_EQ(plan.box[1].coord[0], 64);
  CHECK_EQ(plan.box[1].coord[1], 0);
  CHECK_EQ(plan.box[1].smem_offset, 16384);
  CHECK_EQ(plan.tile_bytes, 32768);
  /* Cluster of 2: one box each, no slicing. */
  o.cluster = 2;
  CHECK_OK(plan_tile(&g, 128, 128, HG_SWIZZLE_128B, &o, &plan));
  CHECK_EQ(plan.num_boxes, 2);
  CHECK_EQ(plan.boxes_per_cta, 1);
  CHECK_EQ(plan.cta_first_box[1], 1);
  CHECK_EQ(plan.mcast_mask, 0x3);
  CHECK_EQ(plan.expect_tx_bytes, 32768); /* every CTA receives the whole tile */
  CHECK_EQ(plan.cta_issue_bytes, 16384);
  /* Cluster of 4: each box sliced in two along its slowest dimension (M). */
  o.cluster = 4;
  CHECK_OK(plan_tile(&g, 128, 128, HG_SWIZZLE_128B, &o, &plan));
  CHECK_EQ(plan.num_boxes, 4);
  CHECK_EQ(plan.map.box_dim[1], 64);
  const uint32_t offs[4] = {0, 8192, 16384, 24576};
  const int32_t k[4] = {0, 0, 64, 64}, m[4] = {0, 64, 0, 64};
  for (int b = 0; b < 4; b++) {
    CHECK_EQ(plan.box[b].smem_offset, offs[b]);
    CHECK_EQ(plan.box[b].coord[0], k[b]);
    CHECK_EQ(plan.box[b].coord[1], m[b]);
  }
  CHECK_EQ(plan.mcast_mask, 0xf);
  CHECK_EQ(plan.expect_tx_bytes, 32768);
  CHECK_EQ(plan.cta_issue_bytes, 8192);
}

static void test_multicast_one_box(void) {
  hg_tma_tensor_t g = tensor2(HG_BF16, 1000, 4096, 4096, 1);
  hg_tma_options_t o = hg_tma_options_default(HG_TMA_LOAD);
  o.cluster = 2;
  CHECK_OK(plan_tile(&g, 128, 64, HG_SWIZZLE_128B, &o, &plan));
  /* One 64 x 128 box sliced along M: CTA 0 rows 0..63 at byte 0, CTA 1 rows 64..127 at
   * 64 x 128 B = 8192. */
  CHECK_EQ(plan.num_boxes, 2);
  CHECK_EQ(plan.map.box_dim[0], 64);
  CHECK_EQ(plan.map.box_dim[1], 64);
  CHECK_EQ(plan.box[1].coord[1], 64);
  CHECK_EQ(plan.box[1].smem_offset, 8192);
  CHECK_EQ(plan.cta_first_box[1], 1);
  CHECK_EQ(plan.expect_tx_bytes, 16384);
  o.cluster = 16;
  CHECK_OK(plan_tile(&g, 128, 64, HG_SWIZZLE_128B, &o, &plan));
  CHECK_EQ(plan.map.box_dim[1], 8);
  CHECK_EQ(plan.mcast_mask, 0xffff);
  CHECK_EQ(plan.box[15].smem_offset, 15 * 1024);
  /* The CTAs sharing an A tile in a 2 x 2 cluster (rank m + 2 n): ranks 0 and 2. */
  o.cluster = 2;
  o.mcast_rank_stride = 2;
  CHECK_OK(plan_tile(&g, 128, 64, HG_SWIZZLE_128B, &o, &plan));
  CHECK_EQ(plan.mcast_mask, 0x5);
  CHECK_EQ(plan.mcast_rank_stride, 2);
  o.cluster = 3;
  o.mcast_rank_stride = 8;
  CHECK_ERR(plan_tile(&g, 128, 64, HG_SWIZZLE_128B, &o, &plan), HG_ERR_INVALID,
            "a multicast group of 3 CTAs 8 ranks apart reaches rank 16");
}

static void test_mn_major_and_rank3(void) {
  /* A stored M-contiguous (column-major 512 x 256): the MN-major GMMA stage buffer. Boxes
   * are 64 M (128 B) x 64 K; the second M atom follows the 64 k-rows of the first. */
  hg_tma_tensor_t g = tensor2(HG_BF16, 512, 256, 1, 512);
  hg_gmma_operand_t op;
  CHECK_OK(hg_gmma_operand_make(HG_BF16, HG_MAJOR_MN, HG_SWIZZLE_128B, 128, 64, 64, &op));
  hg_tma_options_t o = hg_tma_options_default(HG_TMA_LOAD);
  CHECK_OK(hg_tma_plan_make(&g, &op.layout, &o, &plan));
  CHECK_EQ(plan.tmap_mode[0], 0);
  CHECK_EQ(plan.map.box_dim[0], 64);
  CHECK_EQ(plan.map.box_dim[1], 64);
  CHECK_EQ(plan.num_boxes, 2);
  CHECK_EQ(plan.box[1].coord[0], 64);
  CHECK_EQ(plan.box[1].smem_offset, 8192);
  CHECK_EQ(plan.smem_bytes, op.stage_bytes);

  /* Rank 3 (batch, m, k): one box covers the tile. */
  const int64_t sh3[3] = {4, 100, 64}, st3[3] = {6400, 64, 1};
  hg_tma_tensor_t g3 = tensor3(HG_F16, sh3, st3);
  const int tile[3] = {2, 64, 64};
  hg_composed_t c;
  CHECK_OK(hg_tma_smem_layout(&g3, tile, HG_SWIZZLE_NONE, &c));
  CHECK_OK(hg_tma_plan_make(&g3, &c, &o, &plan));
  CHECK_EQ(plan.tmap_mode[0], 2);
  CHECK_EQ(plan.tmap_mode[1], 1);
  CHECK_EQ(plan.tmap_mode[2], 0);
  CHECK_EQ(plan.map.global_stride_bytes[0], 128);
  CHECK_EQ(plan.map.global_stride_bytes[1], 12800);
  CHECK_EQ(plan.num_boxes, 1);
  CHECK_EQ(plan.map.box_dim[0], 64);
  CHECK_EQ(plan.map.box_dim[1], 64);
  CHECK_EQ(plan.map.box_dim[2], 2);

  /* Rank 1: 1024 f32 in boxes of 256. */
  hg_tma_tensor_t g1;
  memset(&g1, 0, sizeof g1);
  g1.dtype = HG_F32;
  g1.rank = 1;
  g1.shape[0] = 5000;
  g1.stride[0] = 1;
  const int t1[1] = {1024};
  CHECK_OK(hg_tma_smem_layout(&g1, t1, HG_SWIZZLE_NONE, &c));
  CHECK_OK(hg_tma_plan_make(&g1, &c, &o, &plan));
  CHECK_EQ(plan.num_boxes, 4);
  CHECK_EQ(plan.map.box_dim[0], 256);
  CHECK_EQ(plan.box[3].coord[0], 768);
  CHECK_EQ(plan.box[3].smem_offset, 3072);
}

static void test_store_reduce_prefetch(void) {
  hg_tma_tensor_t g = tensor2(HG_F32, 300, 256, 256, 1);
  hg_tma_options_t o = hg_tma_options_default(HG_TMA_STORE);
  CHECK_OK(plan_tile(&g, 64, 32, HG_SWIZZLE_128B, &o, &plan));
  CHECK_EQ(plan.op, HG_TMA_STORE);
  CHECK_EQ(plan.map.box_dim[0], 32);
  CHECK_EQ(plan.expect_tx_bytes, 0);
  o.op = HG_TMA_REDUCE_ADD;
  CHECK_OK(plan_tile(&g, 64, 32, HG_SWIZZLE_128B, &o, &plan));
  o.op = HG_TMA_PREFETCH;
  CHECK_OK(plan_tile(&g, 64, 32, HG_SWIZZLE_128B, &o, &plan));
  o.op = HG_TMA_REDUCE_INC;
  CHECK_ERR(plan_tile(&g, 64, 32, HG_SWIZZLE_128B, &o, &plan), HG_ERR_INVALID,
            "TMA reduce-inc does not take f32 elements");
  hg_tma_tensor_t gu = tensor2(HG_U32, 300, 256, 256, 1);
  CHECK_OK(plan_tile(&gu, 64, 32, HG_SWIZZLE_128B, &o, &plan));
  o.op = HG_TMA_REDUCE_XOR;
  CHECK_OK(plan_tile(&gu, 64, 32, HG_SWIZZLE_128B, &o, &plan));
  hg_tma_tensor_t gb = tensor2(HG_BF16, 300, 256, 256, 1);
  CHECK_ERR(plan_tile(&gb, 64, 64, HG_SWIZZLE_128B, &o, &plan), HG_ERR_INVALID,
            ".xor takes 32- and 64-bit integers");
  o.op = HG_TMA_REDUCE_MAX;
  CHECK_OK(plan_tile(&gb, 64, 64, HG_SWIZZLE_128B, &o, &plan));
  /* Negative coordinates: loads may take them; a store or reduction box may not go through
   * TMA (seen on an H200: an illegal instruction), though its coordinates are still given
   * (a kernel writes such a box element by element), and a known negative origin does not
   * make the plan fail. */
  int32_t c[2];
  const int32_t neg_outer[2] = {-3, 64}, neg_inner[2] = {8, -32}, edge[2] = {290, 240};
  o.op = HG_TMA_LOAD;
  CHECK_OK(plan_tile(&g, 64, 32, HG_SWIZZLE_128B, &o, &plan));
  CHECK_OK(hg_tma_box_coords(&plan, 0, neg_outer, c));
  CHECK_OK(hg_tma_box_issuable(&plan, 0, c));
  o.op = HG_TMA_STORE;
  o.origin_known = true;
  o.origin[0] = -3;
  o.origin[1] = -32;
  CHECK_OK(plan_tile(&g, 64, 32, HG_SWIZZLE_128B, &o, &plan));
  o.origin_known = false;
  CHECK_OK(hg_tma_box_coords(&plan, 0, neg_outer, c));
  CHECK_EQ(c[0], 64);
  CHECK_EQ(c[1], -3);
  CHECK_ERR(hg_tma_box_issuable(&plan, 0, c), HG_ERR_INVALID,
            "box 0's coordinate along tensor mode 0 is -3: the GPU raises an illegal "
            "instruction: TMA stores and reductions take non-negative coordinates only");
  CHECK_OK(hg_tma_box_coords(&plan, 0, neg_inner, c));
  CHECK_ERR(hg_tma_box_issuable(&plan, 0, c), HG_ERR_INVALID,
            "along tensor mode 1 is -32: the GPU raises an illegal instruction");
  CHECK_OK(hg_tma_box_coords(&plan, 0, edge, c));
  CHECK_OK(hg_tma_box_issuable(&plan, 0, c)); /* past the far edges: fine */
  CHECK_ERR(hg_tma_box_issuable(&plan, 1, c), HG_ERR_INVALID, "box 1 is outside the plan's 1");
  o.op = HG_TMA_REDUCE_ADD;
  CHECK_OK(plan_tile(&g, 64, 32, HG_SWIZZLE_128B, &o, &plan));
  CHECK_OK(hg_tma_box_coords(&plan, 0, neg_outer, c));
  CHECK_ERR(hg_tma_box_issuable(&plan, 0, c), HG_ERR_INVALID, "TMA stores and reductions");
  o.op = HG_TMA_STORE;
  o.cluster = 2;
  CHECK_ERR(plan_tile(&g, 64, 32, HG_SWIZZLE_128B, &o, &plan), HG_ERR_INVALID,
            "multicast (a cluster of 2) applies to loads only");
  o.cluster = 1;
  o.oob_nan = true;
  CHECK_ERR(plan_tile(&g, 64, 32, HG_SWIZZLE_128B, &o, &plan), HG_ERR_INVALID,
            "NaN fill applies to loads");
}

/* ---------------------------------------------------------------- tensor-map rules */

static hg_tensormap_params_t good_map(void) {
  hg_tensormap_params_t p;
  memset(&p, 0, sizeof p);
  p.dtype = HG_BF16;
  p.rank = 2;
  p.global_dim[0] = 4096;
  p.global_dim[1] = 1000;
  p.global_stride_bytes[0] = 8192;
  p.box_dim[0] = 64;
  p.box_dim[1] = 128;
  p.element_strides[0] = p.element_strides[1] = 1;
  p.swizzle = HG_SWIZZLE_128B;
  return p;
}

static void test_tensormap_rules(void) {
  hg_tensormap_params_t p = good_map();
  CHECK_OK(hg_tensormap_validate(&p, 0x10000));
  CHECK_ERR(hg_tensormap_validate(&p, 0x10008), HG_ERR_INVALID,
            "globalAddress = 0x10008 is not 16-byte aligned");
  p.rank = 6;
  CHECK_ERR(hg_tensormap_validate(&p, 0), HG_ERR_INVALID, "tensorRank = 6 is outside 1..5");
  p.rank = 0;
  CHECK_ERR(hg_tensormap_validate(&p, 0), HG_ERR_INVALID, "tensorRank = 0 is outside 1..5");
  p = good_map();
  p.global_dim[1] = 0;
  CHECK_ERR(hg_tensormap_validate(&p, 0), HG_ERR_INVALID, "globalDim[1] = 0 is outside 1..2^32");
  p.global_dim[1] = (1ull << 32) + 1;
  CHECK_ERR(hg_tensormap_validate(&p, 0), HG_ERR_INVALID, "globalDim[1] = 4294967297");
  p = good_map();
  p.global_stride_bytes[0] = 1000;
  CHECK_ERR(hg_tensormap_validate(&p, 0), HG_ERR_INVALID,
            "globalStrides[0] = 1000 B is not a multiple of 16 B");
  p.global_stride_bytes[0] = 1ull << 40;
  CHECK_ERR(hg_tensormap_validate(&p, 0), HG_ERR_INVALID, "is not below 2^40 B");
  p = good_map();
  p.box_dim[1] = 257;
  CHECK_ERR(hg_tensormap_validate(&p, 0), HG_ERR_INVALID, "boxDim[1] = 257 is outside 1..256");
  p.box_dim[1] = 0;
  CHECK_ERR(hg_tensormap_validate(&p, 0), HG_ERR_INVALID, "boxDim[1] = 0 is outside 1..256");
  p = good_map();
  p.element_strides[1] = 9;
  CHECK_ERR(hg_tensormap_validate(&p, 0), HG_ERR_INVALID, "elementStrides[1] = 9 is outside 1..8");
  p = good_map();
  p.box_dim[0] = 4;
  CHECK_ERR(hg_tensormap_validate(&p, 0), HG_ERR_INVALID,
            "boxDim[0] = 4 elements of 2 B is 8 B, not a multiple of 16 B");
  p.box_dim[0] = 128;
  CHECK_ERR(hg_tensormap_validate(&p, 0), HG_ERR_INVALID,
            "the inner box is 256 B (boxDim[0] = 128 x 2 B) but a 128 B swizzle allows at most "
            "128 B");
  p.swizzle = HG_SWIZZLE_32B;
  p.box_dim[0] = 32;
  CHECK_ERR(hg_tensormap_validate(&p, 0), HG_ERR_INVALID, "a 32 B swizzle allows at most 32 B");
  p = good_map();
  p.swizzle = (hg_swizzle_mode_t)4;
  CHECK_ERR(hg_tensormap_validate(&p, 0), HG_ERR_INVALID, "swizzle = 4 is not a tensor-map");
  p = good_map();
  p.l2_promotion = 4;
  CHECK_ERR(hg_tensormap_validate(&p, 0), HG_ERR_INVALID, "l2Promotion = 4 is outside 0..3");
  p = good_map();
  p.interleave = 1;
  CHECK_ERR(hg_tensormap_validate(&p, 0), HG_ERR_UNSUPPORTED, "interleave = 1");
  p = good_map();
  p.dtype = HG_U16;
  p.oob_nan = true;
  CHECK_ERR(hg_tensormap_validate(&p, 0), HG_ERR_INVALID,
            "NaN out-of-bounds fill needs a floating-point element type, not u16");
  p.dtype = HG_E4M3;
  p.box_dim[0] = 128;
  CHECK_ERR(hg_tensormap_validate(&p, 0), HG_ERR_INVALID, "not available for e4m3");
}

static void test_plan_refusals(void) {
  hg_tma_options_t o = hg_tma_options_default(HG_TMA_LOAD);
  /* A row pitch of 1004 bf16 = 2008 B: the driver would say CUDA_ERROR_INVALID_VALUE. */
  hg_tma_tensor_t g = tensor2(HG_BF16, 1000, 1004, 1004, 1);
  CHECK_ERR(plan_tile(&g, 128, 64, HG_SWIZZLE_128B, &o, &plan), HG_ERR_INVALID,
            "tensor map: globalStrides[0] = 2008 B is not a multiple of 16 B");
  g = tensor2(HG_BF16, 1000, 1024, 1024, 1);
  g.base_align_bytes = 8;
  CHECK_ERR(plan_tile(&g, 128, 64, HG_SWIZZLE_128B, &o, &plan), HG_ERR_INVALID,
            "aligned to 8 B only; TMA needs a 16-byte aligned globalAddress");
  g = tensor2(HG_BF16, 1000, 1024, 2048, 2);
  CHECK_ERR(plan_tile(&g, 128, 64, HG_SWIZZLE_128B, &o, &plan), HG_ERR_INVALID,
            "no mode of the tensor has stride 1 (strides 2048,2)");
  g = tensor2(HG_BF16, 1000, 1024, 1024, 1);
  /* The innermost coordinate (K, mode 1) must be a multiple of 16 B = 8 bf16. */
  o.origin_known = true;
  o.origin[0] = -3;
  o.origin[1] = 3;
  CHECK_ERR(plan_tile(&g, 128, 64, HG_SWIZZLE_128B, &o, &plan), HG_ERR_INVALID,
            "the innermost coordinate 3 (tensor mode 1) is 6 B into the row, not a multiple of "
            "16 B");
  o.origin[1] = -8; /* negative, but 16 B aligned: fine; outer coordinates may be anything */
  CHECK_OK(plan_tile(&g, 128, 64, HG_SWIZZLE_128B, &o, &plan));
  o.origin[0] = INT32_MAX - 10; /* the second multicast slice starts 64 rows further */
  o.cluster = 2;
  CHECK_ERR(plan_tile(&g, 128, 64, HG_SWIZZLE_128B, &o, &plan), HG_ERR_OVERFLOW,
            "does not fit a signed 32-bit TMA coordinate");
  o = hg_tma_options_default(HG_TMA_LOAD);
  o.cluster = 17;
  CHECK_ERR(plan_tile(&g, 128, 64, HG_SWIZZLE_128B, &o, &plan), HG_ERR_INVALID,
            "a multicast cluster of 17 CTAs is over 16");
  o.cluster = 3;
  CHECK_ERR(plan_tile(&g, 128, 64, HG_SWIZZLE_128B, &o, &plan), HG_ERR_INVALID,
            "a cluster of 3 CTAs does not divide the tile: 1 box(es), and the box's slowest "
            "dimension (tensor mode 0, 128 elements) is not a multiple of 3");
  o.cluster = 1;
  /* Tiles wider than a swizzle row that are not whole rows, or too few bytes for a box
   * (narrower ones get padded rows: test_padded_rows). */
  CHECK_ERR(plan_tile(&g, 128, 96, HG_SWIZZLE_128B, &o, &plan), HG_ERR_INVALID,
            "extent 96 along tensor mode 1 (the unit-stride mode) is not a multiple of the 128B "
            "swizzle row (64 elements");
  CHECK_ERR(plan_tile(&g, 128, 4, HG_SWIZZLE_128B, &o, &plan), HG_ERR_INVALID,
            "the tile's extent 4 along tensor mode 1 (the unit-stride mode) is 8 B, not a "
            "multiple of 16 B");
  /* M-contiguous smem, K-contiguous tensor */
  CHECK_ERR(plan_layout(&g, "(64,64):(1,64)", &o, &plan), HG_ERR_INVALID,
            "contiguous for only 1 element(s) (2 B) along tensor mode 1");
  CHECK_ERR(plan_layout(&g, "(64,64,2):(64,1,4096)", &o, &plan), HG_ERR_INVALID,
            "the shared-memory layout has 3 modes but the tensor has 2");
  /* Rows of 64 B under a 128B swizzle: each 1-row box would start 64 B into the pattern. */
  CHECK_ERR(plan_layout(&g, "Sw<3,3,3> o 0 o (64,32):(32,1)", &o, &plan), HG_ERR_INVALID,
            "box 1 of (32,1) elements starts at shared-memory byte 64, not a multiple of 1024 B");
  /* A 128B swizzle on a byte offset basis is not the hardware's for 2-byte elements. */
  CHECK_ERR(plan_layout(&g, "Sw<3,4,3> o 0 o (64,64):(64,1)", &o, &plan), HG_ERR_INVALID,
            "Sw<3,4,3> is not a TMA/GMMA swizzle for 2-byte elements");
  /* Rows padded to twice their width with no swizzle: one box per row, 512 > 256 boxes. */
  hg_tma_tensor_t g2 = tensor2(HG_BF16, 1000, 1024, 1024, 1);
  CHECK_ERR(plan_layout(&g2, "(512,64):(128,1)", &o, &plan), HG_ERR_CAPACITY,
            "the tile needs 512 boxes of (64,1) elements, more than the 256 a plan holds");
}

/* ---------------------------------------------------------------- padded rows */

/* Seen on an H200: with a swizzle every box row occupies the whole span, an inner box
 * narrower than the span using its first bytes. Tiles that narrow get padded stage layouts. */
static void test_padded_rows(void) {
  char buf[256];
  hg_composed_t c;
  hg_tma_options_t o = hg_tma_options_default(HG_TMA_LOAD);
  /* bf16 rows of 16 (32 B) under 128B: the (128,64) stage layout Sw<3,3,3> o (128,64):(64,1)
   * composed with [_,16:1] keeps 16 elements of each 64-element row: (128,16):(64,1). One
   * box of 16 x 128 moves 4 KiB, but occupies 128 rows of 128 B. */
  hg_tma_tensor_t g = tensor2(HG_BF16, 1000, 4096, 4096, 1);
  const int narrow[2] = {128, 16};
  CHECK(hg_tma_smem_padded(&g, narrow, HG_SWIZZLE_128B));
  CHECK(!hg_tma_smem_padded(&g, narrow, HG_SWIZZLE_32B)); /* 32 B: whole rows */
  CHECK(!hg_tma_smem_padded(&g, narrow, HG_SWIZZLE_NONE));
  CHECK_OK(plan_tile(&g, 128, 16, HG_SWIZZLE_128B, &o, &plan));
  hg_composed_print(&plan.smem, buf, sizeof buf);
  CHECK_STR(buf, "Sw<3,3,3> o 0 o (128,16):(64,1)");
  CHECK_EQ(plan.num_boxes, 1);
  CHECK_EQ(plan.map.box_dim[0], 16);
  CHECK_EQ(plan.map.box_dim[1], 128);
  CHECK_EQ(plan.map.swizzle, HG_SWIZZLE_128B);
  CHECK_EQ(plan.box_bytes, 4096);
  CHECK_EQ(plan.expect_tx_bytes, 4096);
  CHECK_EQ(plan.smem_bytes, 128 * 128);
  CHECK_EQ(plan.smem_align_bytes, 1024);
  /* Multicast: the box is sliced along M, 64 rows of 128 B = 8 KiB per CTA; every CTA still
   * expects the tile's 4 KiB and issues 2 KiB. */
  o.cluster = 2;
  CHECK_OK(plan_tile(&g, 128, 16, HG_SWIZZLE_128B, &o, &plan));
  CHECK_EQ(plan.num_boxes, 2);
  CHECK_EQ(plan.map.box_dim[1], 64);
  CHECK_EQ(plan.box[1].coord[1], 64);
  CHECK_EQ(plan.box[1].smem_offset, 8192);
  CHECK_EQ(plan.expect_tx_bytes, 4096);
  CHECK_EQ(plan.cta_issue_bytes, 2048);
  /* 8 rows per CTA of 16: 1024 B apart, the 128B pattern; 4 rows of 8 would be 512 B. */
  o.cluster = 16;
  CHECK_OK(plan_tile(&g, 128, 16, HG_SWIZZLE_128B, &o, &plan));
  CHECK_EQ(plan.box[15].smem_offset, 15 * 1024);
  o.cluster = 2;
  CHECK_ERR(plan_tile(&g, 8, 16, HG_SWIZZLE_128B, &o, &plan), HG_ERR_INVALID,
            "box 1 of (16,4) elements starts at shared-memory byte 512, not a multiple of 1024 B");
  o.cluster = 1;
  /* 64B swizzle, rows of 32 B: Sw<2,3,3> o (8,16):(32,1), 8 rows of 64 B. */
  CHECK_OK(plan_tile(&g, 8, 16, HG_SWIZZLE_64B, &o, &plan));
  hg_composed_print(&plan.smem, buf, sizeof buf);
  CHECK_STR(buf, "Sw<2,3,3> o 0 o (8,16):(32,1)");
  CHECK_EQ(plan.smem_bytes, 512);
  CHECK_EQ(plan.smem_align_bytes, 512);
  /* u8 rows of 16 B under 32B: Sw<1,4,3> o (16,16):(32,1). */
  hg_tma_tensor_t g8 = tensor2(HG_U8, 100, 256, 256, 1);
  CHECK_OK(plan_tile(&g8, 16, 16, HG_SWIZZLE_32B, &o, &plan));
  hg_composed_print(&plan.smem, buf, sizeof buf);
  CHECK_STR(buf, "Sw<1,4,3> o 0 o (16,16):(32,1)");
  CHECK_EQ(plan.map.box_dim[0], 16);
  CHECK_EQ(plan.smem_bytes, 512);
  /* Rank 3, f32 rows of 8 (32 B) under 128B, 3 rows x 2: rows 32 elements apart,
   * (2,3,8):(96,32,1), one box of 6 rows of 128 B. */
  const int64_t sh3[3] = {4, 100, 8}, st3[3] = {800, 8, 1};
  hg_tma_tensor_t g3 = tensor3(HG_F32, sh3, st3);
  const int t3[3] = {2, 3, 8};
  CHECK_OK(hg_tma_smem_layout(&g3, t3, HG_SWIZZLE_128B, &c));
  hg_composed_print(&c, buf, sizeof buf);
  CHECK_STR(buf, "Sw<3,2,3> o 0 o (2,3,8):(96,32,1)");
  CHECK_OK(hg_tma_plan_make(&g3, &c, &o, &plan));
  CHECK_EQ(plan.num_boxes, 1);
  CHECK_EQ(plan.map.box_dim[0], 8);
  CHECK_EQ(plan.map.box_dim[1], 3);
  CHECK_EQ(plan.map.box_dim[2], 2);
  CHECK_EQ(plan.smem_bytes, 6 * 128);
  /* A store and a reduction of a padded tile: TMA reads the same first bytes of each row. */
  hg_tma_tensor_t gf = tensor2(HG_F32, 300, 256, 256, 1);
  o.op = HG_TMA_STORE;
  CHECK_OK(plan_tile(&gf, 64, 8, HG_SWIZZLE_64B, &o, &plan));
  CHECK_EQ(plan.map.box_dim[0], 8);
  CHECK_EQ(plan.smem_bytes, 64 * 64);
  o.op = HG_TMA_REDUCE_ADD;
  CHECK_OK(plan_tile(&gf, 64, 8, HG_SWIZZLE_64B, &o, &plan));
  o.op = HG_TMA_LOAD;

  /* Hand-written layouts: the planner holds any layout to where TMA puts each element. */
  hg_tma_tensor_t gb = tensor2(HG_BF16, 1000, 1024, 1024, 1);
  CHECK_OK(plan_layout(&gb, "Sw<3,3,3> o 0 o (64,16):(64,1)", &o, &plan));
  CHECK_EQ(plan.num_boxes, 1);
  CHECK_EQ(plan.smem_bytes, 64 * 128);
  /* Rows two spans apart: TMA's rows are one span apart, so each row is a box of its own,
   * 256 B into the pattern. */
  CHECK_ERR(plan_layout(&gb, "Sw<3,3,3> o 0 o (64,16):(128,1)", &o, &plan), HG_ERR_INVALID,
            "box 1 of (16,1) elements starts at shared-memory byte 256, not a multiple of 1024 B");
  /* The tile at the end of each row instead of its start (offset 48 elements = 96 B). */
  CHECK_ERR(plan_layout(&gb, "Sw<3,3,3> o 48 o (64,16):(64,1)", &o, &plan), HG_ERR_INVALID,
            "box 0 of (16,64) elements starts at shared-memory byte 96");
  /* Padded rows with no swizzle: rows of 32 B, 128 B apart, one box per row (each 128-byte
   * aligned), the last one ending 32 B into its row: 63 x 128 + 32 B. */
  CHECK_OK(plan_layout(&gb, "(64,16):(64,1)", &o, &plan));
  CHECK_EQ(plan.num_boxes, 64);
  CHECK_EQ(plan.map.box_dim[1], 1);
  CHECK_EQ(plan.box[63].smem_offset, 63 * 128);
  CHECK_EQ(plan.smem_bytes, 63 * 128 + 32);
  /* Two rows of the tile in the same place (stride 0): both boxes at byte 0. Every element
   * is where TMA would put it, but the two boxes would race into the same bytes. */
  CHECK_ERR(plan_layout(&gb, "(2,64):(0,1)", &o, &plan), HG_ERR_INVALID,
            "boxes of (64,1) elements overlap in shared memory: one occupies bytes [0, 128) "
            "(1 row(s) of 128 B) and the next starts at byte 0");
}

/* ---------------------------------------------------------------- rule order */

/* A request that breaks a rule of the tensor (or of its origin) and a rule of the stage
 * layout is told about the former: it holds whatever layout is chosen. Each case first
 * shows the layout rule alone, then both. */
static void test_rule_order(void) {
  hg_tma_options_t o = hg_tma_options_default(HG_TMA_LOAD);
  hg_tma_tensor_t good = tensor2(HG_BF16, 1000, 1024, 1024, 1);
  /* Rows of 2008 B (1004 bf16): the driver refuses the tensor map. */
  hg_tma_tensor_t bad_stride = tensor2(HG_BF16, 1000, 1004, 1004, 1);
  const char *stride_rule = "tensor map: globalStrides[0] = 2008 B is not a multiple of 16 B";
  /* An inner extent of 8 B, and 12 rows under a swizzle: stage-layout refusals alone ... */
  CHECK_ERR(plan_tile(&good, 128, 4, HG_SWIZZLE_128B, &o, &plan), HG_ERR_INVALID,
            "is 8 B, not a multiple of 16 B");
  CHECK_ERR(plan_tile(&good, 12, 64, HG_SWIZZLE_128B, &o, &plan), HG_ERR_INVALID,
            "is not a multiple of the 8 rows of a swizzle pattern");
  CHECK_ERR(plan_tile(&good, 128, 96, HG_SWIZZLE_128B, &o, &plan), HG_ERR_INVALID,
            "is not a multiple of the 128B swizzle row");
  /* ... and with the stride as well, the stride. */
  CHECK_ERR(plan_tile(&bad_stride, 128, 4, HG_SWIZZLE_128B, &o, &plan), HG_ERR_INVALID,
            stride_rule);
  CHECK_ERR(plan_tile(&bad_stride, 12, 64, HG_SWIZZLE_128B, &o, &plan), HG_ERR_INVALID,
            stride_rule);
  CHECK_ERR(plan_tile(&bad_stride, 128, 96, HG_SWIZZLE_128B, &o, &plan), HG_ERR_INVALID,
            stride_rule);
  /* A layout TMA cannot write (M contiguous for a K-contiguous tensor) ... */
  const char *m_contiguous = "(64,64):(1,64)";
  CHECK_ERR(plan_layout(&good, m_contiguous, &o, &plan), HG_ERR_INVALID, "contiguous for only 1");
  /* ... with a stride that is not a multiple of 16 B, or a base address known to be 8-byte
   * aligned only, or an innermost origin 6 B into the row: each names its rule. */
  CHECK_ERR(plan_layout(&bad_stride, m_contiguous, &o, &plan), HG_ERR_INVALID, stride_rule);
  hg_tma_tensor_t bad_base = good;
  bad_base.base_align_bytes = 8;
  CHECK_ERR(plan_layout(&bad_base, m_contiguous, &o, &plan), HG_ERR_INVALID,
            "aligned to 8 B only; TMA needs a 16-byte aligned globalAddress");
  o.origin_known = true;
  o.origin[0] = 0;
  o.origin[1] = 3;
  const char *origin_rule = "at the tile origin: the innermost coordinate 3 (tensor mode 1) is 6 "
                            "B into the row, not a multiple of 16 B";
  CHECK_ERR(plan_layout(&good, m_contiguous, &o, &plan), HG_ERR_INVALID, origin_rule);
  /* Three rules at once: the tensor's stride first, then the origin. */
  CHECK_ERR(plan_layout(&bad_stride, m_contiguous, &o, &plan), HG_ERR_INVALID, stride_rule);
  /* A misaligned origin with a cluster that does not divide the tile, or with a layout whose
   * boxes would start inside the swizzle pattern (rows of 64 B under 128B). */
  o.cluster = 3;
  CHECK_ERR(plan_tile(&good, 128, 64, HG_SWIZZLE_128B, &o, &plan), HG_ERR_INVALID, origin_rule);
  o.cluster = 1;
  const char *half_rows = "Sw<3,3,3> o 0 o (64,32):(32,1)";
  CHECK_ERR(plan_layout(&good, half_rows, &o, &plan), HG_ERR_INVALID, origin_rule);
  o.origin[1] = 8;
  CHECK_ERR(plan_layout(&good, half_rows, &o, &plan), HG_ERR_INVALID,
            "starts at shared-memory byte 64, not a multiple of 1024 B");
  /* The tensor map itself: the tensor's rules (strides) before the box's (boxDim). */
  hg_tensormap_params_t p = good_map();
  p.box_dim[0] = 4;
  p.box_dim[1] = 300;
  CHECK_ERR(hg_tensormap_validate(&p, 0), HG_ERR_INVALID, "boxDim[1] = 300 is outside 1..256");
  p.global_stride_bytes[0] = 1000;
  CHECK_ERR(hg_tensormap_validate(&p, 0), HG_ERR_INVALID,
            "globalStrides[0] = 1000 B is not a multiple of 16 B");
}

static void test_names(void) {
  hg_tma_op_t op;
  CHECK_OK(hg_tma_op_parse("reduce-add", &op));
  CHECK_EQ(op, HG_TMA_REDUCE_ADD);
  CHECK_OK(hg_tma_op_parse("xor", &op));
  CHECK_EQ(op, HG_TMA_REDUCE_XOR);
  CHECK_STR(hg_tma_op_name(HG_TMA_PREFETCH), "prefetch");
  CHECK_ERR(hg_tma_op_parse("copy", &op), HG_ERR_PARSE, "unknown TMA operation 'copy'");
  hg_swizzle_mode_t sw;
  CHECK_OK(hg_swizzle_mode_parse("128B", &sw));
  CHECK_EQ(sw, HG_SWIZZLE_128B);
  CHECK_ERR(hg_swizzle_mode_parse("16B", &sw), HG_ERR_PARSE, "unknown swizzle '16B'");
  hg_major_t m;
  CHECK_OK(hg_major_parse("mn", &m));
  CHECK_EQ(m, HG_MAJOR_MN);
}

int main(void) {
  HG_RUN(test_basic_load);
  HG_RUN(test_two_boxes);
  HG_RUN(test_multicast_one_box);
  HG_RUN(test_mn_major_and_rank3);
  HG_RUN(test_store_reduce_prefetch);
  HG_RUN(test_tensormap_rules);
  HG_RUN(test_plan_refusals);
  HG_RUN(test_padded_rows);
  HG_RUN(test_rule_order);
  HG_RUN(test_names);
  return hg_test_finish();
}
