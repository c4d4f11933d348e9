/* PTX backend, TMA family: tiled loads (plain, multicast, cache hint, both), prefetch,
 * store and every reduce op for ranks 1..5, bulk groups, tensor-map prefetch, cache
 * policies; every kernel assembled by ptxas. And the negative-coordinate test: a
 * coordinate computed at run time reaches cp.async.bulk.tensor as the very 32-bit
 * register that computed it. */
#include <ctype.h>

#include "emit_test_util.h"

/* A kernel skeleton with one tensor map, a 1024-aligned tile and an mbarrier. */
typedef struct tma_kernel {
  hg_builder_t *b;
  hg_val_t map, tile, bar;
} tma_kernel_t;

static tma_kernel_t tma_kernel(const char *name) {
  tma_kernel_t k = {0};
  CHECK_OK(hg_builder_create(name, &k.b));
  hg_b_set_threads(k.b, 128);
  k.map = hg_b_param_tmap(k.b, "map");
  uint32_t tile = hg_b_smem_reserve(k.b, 8192, 1024);
  uint32_t bar = hg_b_smem_reserve(k.b, 8, 8);
  k.tile = hg_b_smem_addr(k.b, tile);
  k.bar = hg_b_smem_addr(k.b, bar);
  return k;
}

static void coords_for(hg_builder_t *b, int rank, hg_val_t *c) {
  hg_val_t ctaid = hg_b_sreg(b, HG_CTAID_X);
  for (int d = 0; d < rank; d++) c[d] = hg_b_bin(b, HG_ADD, ctaid, hg_b_i32(b, -16 * d));
}

static void test_loads_all_ranks_and_variants(void) {
  for (int rank = 1; rank <= 5; rank++) {
    char name[32];
    snprintf(name, sizeof name, "tma_load_%dd", rank);
    tma_kernel_t k = tma_kernel(name);
    hg_builder_t *b = k.b;
    hg_b_set_cluster(b, 2, 1, 1);
    hg_val_t c[5];
    coords_for(b, rank, c);
    hg_val_t mask = hg_b_i32(b, 0x3);
    hg_val_t first = hg_b_cache_policy(b, HG_EVICT_FIRST);
    hg_val_t last = hg_b_cache_policy(b, HG_EVICT_LAST);
    hg_val_t normal = hg_b_cache_policy(b, HG_EVICT_NORMAL);
    hg_b_mbar_init(b, k.bar, hg_b_i32(b, 1));
    hg_b_fence_mbarrier_init(b);
    hg_b_mbar_arrive_expect_tx(b, k.bar, hg_b_i32(b, 4 * 8192));
    hg_b_tma_load(b, k.map, k.tile, k.bar, rank, c, HG_NONE, HG_NONE);
    hg_b_tma_load(b, k.map, k.tile, k.bar, rank, c, mask, HG_NONE);
    hg_b_tma_load(b, k.map, k.tile, k.bar, rank, c, HG_NONE, first);
    hg_b_tma_load(b, k.map, k.tile, k.bar, rank, c, mask, last);
    hg_b_tma_load(b, k.map, k.tile, k.bar, rank, c, HG_NONE, normal);
    hg_b_mbar_wait(b, k.bar, hg_b_i32(b, 0));
    hg_text_t ptx;
    if (emit_and_assemble(b, &ptx, NULL)) {
      char want[160];
      snprintf(want, sizeof want,
               "cp.async.bulk.tensor.%dd.shared::cluster.global.tile.mbarrier::complete_tx::"
               "bytes.multicast::cluster.L2::cache_hint",
               rank);
      CHECK(strstr(ptx.data, want) != NULL);
      CHECK(strstr(ptx.data, "createpolicy.fractional.L2::evict_first.b64") != NULL);
      CHECK(strstr(ptx.data, ".reqnctapercluster 2, 1, 1") != NULL);
    }
    hg_text_free(&ptx);
    hg_builder_destroy(b);
  }
}

static void test_prefetch_store_reduce_all_ranks(void) {
  static const hg_reduce_op_t reds[] = {HG_RED_ADD, HG_RED_MIN, HG_RED_MAX, HG_RED_INC,
                                        HG_RED_DEC, HG_RED_AND, HG_RED_OR,  HG_RED_XOR};
  static const char *const red_names[] = {"add", "min", "max", "inc", "dec", "and", "or", "xor"};
  for (int rank = 1; rank <= 5; rank++) {
    char name[32];
    snprintf(name, sizeof name, "tma_out_%dd", rank);
    tma_kernel_t k = tma_kernel(name);
    hg_builder_t *b = k.b;
    hg_val_t c[5];
    coords_for(b, rank, c);
    hg_b_tmap_prefetch(b, k.map);
    hg_b_tma_prefetch(b, k.map, rank, c);
    hg_b_fence_proxy_async(b);
    hg_b_tma_store(b, k.map, k.tile, rank, c);
    for (size_t r = 0; r < sizeof reds / sizeof reds[0]; r++)
      hg_b_tma_reduce(b, reds[r], k.map, k.tile, rank, c);
    hg_b_bulk_commit(b);
    hg_b_bulk_wait(b, 1, true);
    hg_b_bulk_wait(b, 0, false);
    hg_text_t ptx;
    if (emit_and_assemble(b, &ptx, NULL)) {
      char want[160];
      snprintf(want, sizeof want, "cp.async.bulk.prefetch.tensor.%dd.L2.global.tile", rank);
      CHECK(strstr(ptx.data, want) != NULL);
      snprintf(want, sizeof want, "cp.async.bulk.tensor.%dd.global.shared::cta.tile.bulk_group",
               rank);
      CHECK(strstr(ptx.data, want) != NULL);
      for (size_t r = 0; r < sizeof reds / sizeof reds[0]; r++) {
        snprintf(want, sizeof want,
                 "cp.reduce.async.bulk.tensor.%dd.global.shared::cta.%s.tile.bulk_group", rank,
                 red_names[r]);
        CHECK(strstr(ptx.data, want) != NULL);
      }
      CHECK(strstr(ptx.data, "cp.async.bulk.wait_group.read 1;") != NULL);
      CHECK(strstr(ptx.data, "cp.async.bulk.wait_group 0;") != NULL);
      CHECK(strstr(ptx.data, "prefetch.tensormap [") != NULL);
    }
    hg_text_free(&ptx);
    hg_builder_destroy(b);
  }
}

/* The tensor map is a 128-byte, 64-aligned .param whose generic address (cvta.param)
 * is the TMA operand, as nvcc does for a __grid_constant__ CUtensorMap. */
static void test_tensor_map_param_addressing(void) {
  tma_kernel_t k = tma_kernel("tmap_param");
  hg_val_t c = hg_b_i32(k.b, 0);
  hg_b_tma_prefetch(k.b, k.map, 1, &c);
  hg_text_t ptx;
  if (emit_and_assemble(k.b, &ptx, NULL)) {
    CHECK(strstr(ptx.data, ".param .align 64 .b8 hgp_map[128]") != NULL);
    const char *mov = strstr(ptx.data, "mov.b64 ");
    CHECK(mov != NULL);
    if (mov) {
      char reg[64] = "";
      sscanf(mov, "mov.b64 %63[^,], hgp_map;", reg);
      char want[160];
      snprintf(want, sizeof want, "cvta.param.u64 %s, %s;", reg, reg);
      CHECK(strstr(ptx.data, want) != NULL);
      snprintf(want, sizeof want, "[%s, {", reg);
      CHECK(strstr(ptx.data, want) != NULL);
    }
  }
  hg_text_free(&ptx);
  hg_builder_destroy(k.b);
}

/* ---------------------------------------------------------------- negative coordinates */

/* The register written first on `line` (the destination), or "" when the line is not an
 * instruction with a register destination. */
static void dest_of(const char *line, char *out, size_t size) {
  out[0] = '\0';
  while (*line == ' ' || *line == '\t') line++;
  if (*line == '@') { /* a guard: skip it */
    while (*line && *line != ' ') line++;
    while (*line == ' ') line++;
  }
  if (!isalpha((unsigned char)*line)) return;
  while (*line && *line != ' ' && *line != '\t') line++; /* the opcode */
  while (*line == ' ' || *line == '\t') line++;
  if (*line != '%') return;
  size_t k = 0;
  while (line[k] && line[k] != ',' && line[k] != ';' && line[k] != ' ' && k + 1 < size) k++;
  memcpy(out, line, k);
  out[k] = '\0';
}

static bool mentions_reg(const char *line, size_t len, const char *reg) {
  size_t rl = strlen(reg);
  for (const char *p = line; p + rl <= line + len; p++) {
    if (memcmp(p, reg, rl)) continue;
    char after = p[rl];
    if (!(isalnum((unsigned char)after) || after == '_')) return true;
  }
  return false;
}

static void test_negative_coordinate_reaches_tma_unchanged(void) {
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("negative_coord", &b));
  hg_b_set_threads(b, 128);
  hg_val_t map = hg_b_param_tmap(b, "map");
  hg_val_t tile = hg_b_smem_addr(b, hg_b_smem_reserve(b, 64 * 4, 128));
  hg_val_t bar = hg_b_smem_addr(b, hg_b_smem_reserve(b, 8, 8));
  hg_val_t box = hg_b_i32(b, 64);
  hg_val_t ctaid = hg_b_sreg(b, HG_CTAID_X);
  hg_val_t start = hg_b_bin(b, HG_MUL, ctaid, box);
  hg_val_t coord = hg_b_bin(b, HG_SUB, start, hg_b_i32(b, 3)); /* -3 for CTA 0 */
  hg_b_name(b, coord, "coord");
  hg_b_mbar_init(b, bar, hg_b_i32(b, 1));
  hg_b_fence_mbarrier_init(b);
  hg_b_mbar_arrive_expect_tx(b, bar, hg_b_i32(b, 64 * 4));
  hg_b_tma_load(b, map, tile, bar, 1, &coord, HG_NONE, HG_NONE);
  hg_b_mbar_wait(b, bar, hg_b_i32(b, 0));
  CHECK_EQ(hg_val_type(b, coord), HG_T_I32);

  hg_text_t ptx;
  hg_ptxas_report_t rep;
  if (!emit_and_assemble(b, &ptx, &rep)) {
    hg_builder_destroy(b);
    return;
  }
  /* 1. the subtraction: sub.s32 DST, MUL, CONST with DST a 32-bit register */
  const char *sub = strstr(ptx.data, "sub.s32 ");
  CHECK(sub != NULL);
  char dst[64] = "", lhs[64] = "";
  if (sub) sscanf(sub, "sub.s32 %63[^,], %63[^,],", dst, lhs);
  CHECK(strncmp(dst, "%r", 2) == 0 && strncmp(dst, "%rd", 3) != 0);
  CHECK(strstr(dst, "coord") != NULL);
  /* ... of the product ctaid.x * 64, itself 32-bit signed arithmetic */
  char want[200];
  snprintf(want, sizeof want, "mul.lo.s32 %s, ", lhs);
  CHECK(strstr(ptx.data, want) != NULL);

  /* 2. the coordinate list of cp.async.bulk.tensor is exactly {DST} */
  const char *tma = strstr(ptx.data, "cp.async.bulk.tensor.1d.");
  CHECK(tma != NULL);
  if (tma) {
    const char *brace = strchr(tma, '{');
    char inside[64] = "";
    if (brace) sscanf(brace, "{%63[^}]}", inside);
    CHECK_STR(inside, dst);
  }

  /* 3. nothing else writes DST, and no conversion touches it: no cvt (widening or
   *    narrowing), no mov to another register, no unsigned reinterpretation between the
   *    subtraction and its use */
  int writes = 0, cvts = 0, uses = 0;
  for (const char *line = ptx.data; line && *line;) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    char buf[512];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
    char d[64];
    dest_of(buf, d, sizeof d);
    if (!strcmp(d, dst)) writes++;
    if (mentions_reg(buf, strlen(buf), dst)) {
      uses++;
      if (strstr(buf, "cvt") || strstr(buf, ".u64") || strstr(buf, ".s64") || strstr(buf, ".u32"))
        cvts++;
    }
    line = nl ? nl + 1 : NULL;
  }
  CHECK_EQ(writes, 1);
  CHECK_EQ(cvts, 0);
  CHECK_EQ(uses, 3); /* its declaration, the sub that defines it, the TMA that reads it */
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

/* The same with coordinates from a parameter (-5) and a loop counter, in 2-D and 5-D. */
static void test_signed_coordinates_from_params_and_loops(void) {
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("coords_from_params", &b));
  hg_b_set_threads(b, 128);
  hg_val_t map = hg_b_param_tmap(b, "map");
  hg_val_t x0 = hg_b_param(b, HG_T_I32, "x0");
  hg_val_t tile = hg_b_smem_addr(b, hg_b_smem_reserve(b, 4096, 1024));
  hg_val_t bar = hg_b_smem_addr(b, hg_b_smem_reserve(b, 8, 8));
  hg_val_t i = hg_b_for(b, hg_b_i32(b, -2), hg_b_i32(b, 2), hg_b_i32(b, 1));
  hg_val_t c[5] = {x0, i, hg_b_i32(b, -1), hg_b_bin(b, HG_SUB, i, x0), hg_b_i32(b, INT32_MIN)};
  hg_b_tma_load(b, map, tile, bar, 2, c, HG_NONE, HG_NONE);
  hg_b_tma_load(b, map, tile, bar, 5, c, HG_NONE, HG_NONE);
  hg_b_tma_store(b, map, tile, 5, c);
  hg_b_endfor(b);
  hg_text_t ptx;
  if (emit_and_assemble(b, &ptx, NULL)) {
    CHECK(strstr(ptx.data, "ld.param.u32 %r") != NULL);
    CHECK(strstr(ptx.data, "-2147483648;") != NULL);
    CHECK(strstr(ptx.data, "cvt.") == NULL); /* nothing in this kernel converts */
  }
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

int main(void) {
  emit_test_require_ptxas();
  HG_RUN(test_negative_coordinate_reaches_tma_unchanged);
  HG_RUN(test_signed_coordinates_from_params_and_loops);
  HG_RUN(test_tensor_map_param_addressing);
  HG_RUN(test_loads_all_ranks_and_variants);
  HG_RUN(test_prefetch_store_reduce_all_ranks);
  return hg_test_finish();
}
