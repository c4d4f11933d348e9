/* PTX backend, TMA family: tiled loads (plain, multicast, cache hint, both), prefetch,
 * store (plain and with a cache hint) and every reduce op for ranks 1..5, bulk groups,
 * tensor-map prefetch, cache policies; every kernel assembled by ptxas. And the
 * negative-coordinate test: a coordinate computed at run time reaches cp.async.bulk.tensor
 * as the very 32-bit register that computed it.
 *
 * The kernels both backends check are built once, by tests/support/emit_kernels.c. */
#include <ctype.h>

#include "emit_test_util.h"
#include "support/emit_kernels.h"

static void test_loads_all_ranks_and_variants(void) {
  for (int rank = 1; rank <= 5; rank++) {
    hg_builder_t *b;
    CHECK_OK(emit_kernel_tma_load(rank, &b));
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
  for (int rank = 1; rank <= 5; rank++) {
    hg_builder_t *b;
    CHECK_OK(emit_kernel_tma_out(rank, &b));
    hg_text_t ptx;
    if (emit_and_assemble(b, &ptx, NULL)) {
      char want[160];
      snprintf(want, sizeof want, "cp.async.bulk.prefetch.tensor.%dd.L2.global.tile", rank);
      CHECK(strstr(ptx.data, want) != NULL);
      snprintf(want, sizeof want, "cp.async.bulk.tensor.%dd.global.shared::cta.tile.bulk_group [",
               rank);
      CHECK(strstr(ptx.data, want) != NULL);
      /* with a cache policy: the qualifier, and the policy as the last operand */
      snprintf(want, sizeof want,
               "cp.async.bulk.tensor.%dd.global.shared::cta.tile.bulk_group.L2::cache_hint [",
               rank);
      const char *hinted = strstr(ptx.data, want);
      CHECK(hinted != NULL);
      if (hinted) CHECK(strstr(hinted, "], %rd") < strchr(hinted, '\n'));
      CHECK(strstr(ptx.data, "createpolicy.fractional.L2::evict_first.b64") != NULL);
      for (int r = 0; r < EMIT_TMA_NREDS; r++) {
        snprintf(want, sizeof want,
                 "cp.reduce.async.bulk.tensor.%dd.global.shared::cta.%s.tile.bulk_group", rank,
                 emit_tma_red_names[r]);
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
  emit_tma_kernel_t k;
  CHECK_OK(emit_tma_kernel("tmap_param", &k));
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
  hg_val_t coord;
  CHECK_OK(emit_kernel_negative_coord(&coord, &b));
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
  CHECK_OK(emit_kernel_coords_from_params(false, &b));
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
