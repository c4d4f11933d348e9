/* MLIR backend, TMA family: the kernels of test_ptx_tma.c (loads plain / multicast /
 * cache hint / both, prefetch, store plain and with a cache hint, every reduce op for
 * ranks 1..5, bulk groups, tensor-map prefetch) printed as MLIR, lowered and assembled;
 * which dialect each took;
 * the tensor map as a 64-aligned 128-byte grid-constant parameter addressed in place;
 * and the negative-coordinate test: `ctaid.x * 64 - 3` goes through arith.index_cast
 * (sign-extending) into nvgpu.tma.async.load and comes out of the lowering as the very
 * 32-bit register cp.async.bulk.tensor reads.
 *
 * The kernels both backends check are built once, by tests/support/emit_kernels.c. */
#include "test_mlir_util.h"
#include "support/emit_kernels.h"

static void test_loads_all_ranks_and_variants(void) {
  for (int rank = 1; rank <= 5; rank++) {
    hg_builder_t *b;
    CHECK_OK(emit_kernel_tma_load(rank, &b));
    hg_text_t mlir, ptx;
    if (mlir_lower_and_assemble(b, &mlir, &ptx, NULL)) {
      /* nvgpu without a cache hint (plain and multicast), nvvm with one */
      CHECK_EQ(mlir_count(mlir.data, "nvgpu.tma.async.load "), 2);
      CHECK_EQ(mlir_count(mlir.data, " multicast_mask = "), 2);
      CHECK_EQ(mlir_count(mlir.data, "nvvm.cp.async.bulk.tensor.shared.cluster.global "), 3);
      CHECK_EQ(mlir_count(mlir.data, " l2_cache_hint = "), 3);
      char want[200];
      const char *base = "cp.async.bulk.tensor.%dd.shared::cluster.global.tile.mbarrier::"
                         "complete_tx::bytes%s [";
      const char *sfx[] = {"", ".multicast::cluster", ".L2::cache_hint",
                           ".multicast::cluster.L2::cache_hint"};
      for (int v = 0; v < 4; v++) {
        snprintf(want, sizeof want, base, rank, sfx[v]);
        CHECK(mlir_has(ptx.data, want));
      }
      CHECK(mlir_has(ptx.data, "createpolicy.fractional.L2::evict_first.b64"));
      CHECK(mlir_has(ptx.data, "createpolicy.fractional.L2::evict_last.b64"));
      CHECK(mlir_has(ptx.data, "createpolicy.fractional.L2::evict_normal.b64"));
      CHECK(mlir_has(ptx.data, ".reqnctapercluster 2, 1, 1"));
    }
    hg_text_free(&mlir);
    hg_text_free(&ptx);
    hg_builder_destroy(b);
  }
}

static void test_prefetch_store_reduce_all_ranks(void) {
  for (int rank = 1; rank <= 5; rank++) {
    hg_builder_t *b;
    CHECK_OK(emit_kernel_tma_out(rank, &b));
    hg_text_t mlir, ptx;
    if (mlir_lower_and_assemble(b, &mlir, &ptx, NULL)) {
      CHECK(mlir_has(mlir.data, "nvgpu.tma.prefetch.descriptor"));
      /* nvgpu's store has no cache-hint operand: the hinted one is nvvm's */
      CHECK_EQ(mlir_count(mlir.data, "nvgpu.tma.async.store "), 1);
      CHECK_EQ(mlir_count(mlir.data, "nvvm.cp.async.bulk.tensor.global.shared.cta "), 1);
      CHECK_EQ(mlir_count(mlir.data, " l2_cache_hint = "), 1);
      CHECK(mlir_has(mlir.data, "nvvm.cp.async.bulk.tensor.prefetch"));
      CHECK_EQ(mlir_count(mlir.data, "nvvm.cp.async.bulk.tensor.reduce "), 8);
      char want[160];
      snprintf(want, sizeof want, "cp.async.bulk.prefetch.tensor.%dd.L2.global.tile", rank);
      CHECK(mlir_has(ptx.data, want));
      snprintf(want, sizeof want, "cp.async.bulk.tensor.%dd.global.shared::cta.tile.bulk_group [",
               rank);
      CHECK(mlir_has(ptx.data, want));
      snprintf(want, sizeof want,
               "cp.async.bulk.tensor.%dd.global.shared::cta.tile.bulk_group.L2::cache_hint [",
               rank);
      CHECK(mlir_has(ptx.data, want));
      for (int r = 0; r < EMIT_TMA_NREDS; r++) {
        snprintf(want, sizeof want,
                 "cp.reduce.async.bulk.tensor.%dd.global.shared::cta.%s.tile.bulk_group", rank,
                 emit_tma_red_names[r]);
        CHECK(mlir_has(ptx.data, want));
      }
      CHECK(mlir_has(ptx.data, "cp.async.bulk.commit_group;"));
      CHECK(mlir_has(ptx.data, "cp.async.bulk.wait_group.read \t1;"));
      CHECK(mlir_has(ptx.data, "cp.async.bulk.wait_group \t0;"));
      CHECK(mlir_has(ptx.data, "prefetch"));
      CHECK(mlir_has(ptx.data, "tensormap"));
      CHECK(mlir_has(ptx.data, "fence.proxy.async.shared::cta;"));
    }
    hg_text_free(&mlir);
    hg_text_free(&ptx);
    hg_builder_destroy(b);
  }
}

/* The tensor map: a 128-byte, 64-aligned by-value parameter, grid constant, whose generic
 * address (cvta.param) is the TMA operand; no copy to local memory. */
static void test_tensor_map_param_addressing(void) {
  emit_tma_kernel_t k;
  CHECK_OK(emit_tma_kernel("tmap_param", &k));
  hg_val_t n = hg_b_param(k.b, HG_T_I32, "n");
  hg_val_t map2 = hg_b_param_tmap(k.b, "map2");
  hg_val_t c[2] = {n, hg_b_i32(k.b, 0)};
  hg_b_tma_prefetch(k.b, k.map, 1, c);
  hg_b_tma_store(k.b, map2, k.tile, 2, c);
  hg_text_t mlir, ptx;
  hg_ptxas_report_t rep;
  if (mlir_lower_and_assemble(k.b, &mlir, &ptx, &rep)) {
    CHECK(mlir_has(mlir.data, "!llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 "
                              "x i8>, nvvm.grid_constant}"));
    /* parameter order and types as the runtime passes them */
    CHECK(mlir_has(ptx.data, ".visible .entry tmap_param(\n"
                             "\t.param .align 64 .b8 tmap_param_param_0[128],\n"
                             "\t.param .u32 tmap_param_param_1,\n"
                             "\t.param .align 64 .b8 tmap_param_param_2[128]\n)"));
    CHECK(mlir_has(ptx.data, "cvta.param.u64"));
    CHECK(mlir_no_local_memory(ptx.data, &rep));
  }
  hg_text_free(&mlir);
  hg_text_free(&ptx);
  hg_builder_destroy(k.b);
}

/* ---------------------------------------------------------------- negative coordinates */

/* The register written first on `line` (the destination), or "" when the line is not an
 * instruction with a register destination. */
static void dest_of(const char *line, char *out, size_t size) {
  out[0] = '\0';
  while (*line == ' ' || *line == '\t') line++;
  if (*line == '@') {
    while (*line && *line != ' ' && *line != '\t') line++;
    while (*line == ' ' || *line == '\t') line++;
  }
  if (!isalpha((unsigned char)*line)) return;
  while (*line && *line != ' ' && *line != '\t') line++;
  while (*line == ' ' || *line == '\t') line++;
  if (*line != '%') return;
  size_t k = 0;
  while (line[k] && line[k] != ',' && line[k] != ';' && line[k] != ' ' && k + 1 < size) k++;
  memcpy(out, line, k);
  out[k] = '\0';
}

static bool mentions_reg(const char *line, const char *reg) {
  size_t rl = strlen(reg);
  for (const char *p = line; (p = strstr(p, reg)); p++) {
    char after = p[rl];
    if (!(isalnum((unsigned char)after) || after == '_')) return true;
  }
  return false;
}

/* The line (copied into buf) that writes register `reg`, or NULL. */
static const char *line_defining(const char *ptx, const char *reg, char *buf, size_t size) {
  for (const char *line = ptx; line && *line;) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    snprintf(buf, size, "%.*s", (int)(len < size ? len : size - 1), line);
    char d[64];
    dest_of(buf, d, sizeof d);
    if (!strcmp(d, reg)) return buf;
    line = nl ? nl + 1 : NULL;
  }
  return NULL;
}

static void test_negative_coordinate_reaches_tma_unchanged(void) {
  hg_builder_t *b;
  hg_val_t coord;
  CHECK_OK(emit_kernel_negative_coord(&coord, &b));
  CHECK_EQ(hg_val_type(b, coord), HG_T_I32);

  hg_text_t mlir, ptx;
  if (!mlir_lower_and_assemble(b, &mlir, &ptx, NULL)) {
    hg_text_free(&mlir);
    hg_text_free(&ptx);
    hg_builder_destroy(b);
    return;
  }
  /* 1. the MLIR: i32 arithmetic, then a sign-extending index_cast into nvgpu */
  char want[200];
  snprintf(want, sizeof want, "%%v%d_coord = arith.subi ", coord.id);
  CHECK(mlir_has(mlir.data, want));
  snprintf(want, sizeof want, "= arith.index_cast %%v%d_coord : i32 to index", coord.id);
  CHECK(mlir_has(mlir.data, want));
  CHECK(strstr(mlir.data, "index_castui") == NULL);
  CHECK(mlir_has(mlir.data, "nvgpu.tma.async.load "));

  /* 2. the PTX: the coordinate list of cp.async.bulk.tensor is one 32-bit register ... */
  const char *tma = strstr(ptx.data, "cp.async.bulk.tensor.1d.");
  CHECK(tma != NULL);
  char reg[64] = "";
  if (tma) {
    const char *brace = strchr(tma, '{');
    if (brace) sscanf(brace, "{%63[^}]}", reg);
  }
  CHECK(strncmp(reg, "%r", 2) == 0 && strncmp(reg, "%rd", 3) != 0);
  /* ... written once, by the subtraction itself: sub.s32 REG, X, 3, or the add of -3 that
   * LLVM makes of it (x - 3 == x + (-3) in 32-bit two's complement), of the product
   * ctaid.x * 64 (which LLVM may print as a shift by 6) */
  char def[256] = "";
  CHECK(line_defining(ptx.data, reg, def, sizeof def) != NULL);
  char src[64] = "";
  bool is_sub = sscanf(def, " sub.s32 %*[^,], %63[^,], 3;", src) == 1;
  bool is_add = sscanf(def, " add.s32 %*[^,], %63[^,], -3;", src) == 1;
  CHECK(is_sub || is_add);
  if (!(is_sub || is_add)) fprintf(stderr, "  coordinate defined by: %s\n", def);
  char prod[256] = "";
  CHECK(line_defining(ptx.data, src, prod, sizeof prod) != NULL);
  CHECK(strstr(prod, "shl.b32") || strstr(prod, "mul.lo.s32"));
  char ctaid_reg[64] = "";
  if (sscanf(prod, " %*s %*[^,], %63[^,],", ctaid_reg) == 1) {
    char sreg[256] = "";
    CHECK(line_defining(ptx.data, ctaid_reg, sreg, sizeof sreg) != NULL);
    CHECK(strstr(sreg, "%ctaid.x") != NULL);
  }
  /* 3. nothing else writes it or reads it: no cvt, no copy, no 64-bit detour between the
   *    subtraction and the TMA */
  int writes = 0, uses = 0;
  for (const char *line = ptx.data; line && *line;) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    char buf[512];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
    char d[64];
    dest_of(buf, d, sizeof d);
    if (!strcmp(d, reg)) writes++;
    if (mentions_reg(buf, reg)) uses++;
    line = nl ? nl + 1 : NULL;
  }
  CHECK_EQ(writes, 1);
  CHECK_EQ(uses, 2); /* the instruction that defines it, the TMA that reads it */
  hg_text_free(&mlir);
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

/* Coordinates from a parameter, a loop counter, constants (-1, INT32_MIN) and their
 * difference, in 2-D and 5-D, through both dialects (nvgpu plain load and store, nvvm load
 * with a cache hint and prefetch): every coordinate stays 32-bit, no widening in the PTX. */
static void test_signed_coordinates_from_params_and_loops(void) {
  hg_builder_t *b;
  CHECK_OK(emit_kernel_coords_from_params(true, &b));
  hg_text_t mlir, ptx;
  hg_ptxas_report_t rep;
  if (mlir_lower_and_assemble(b, &mlir, &ptx, &rep)) {
    CHECK(mlir_has(mlir.data, "arith.constant -2147483648 : i32"));
    CHECK(strstr(mlir.data, "index_castui") == NULL);
    CHECK(mlir_has(ptx.data, "-2147483648"));
    CHECK(mlir_has(ptx.data, "ld.param.b32"));
    /* the only conversions are of shared-memory addresses (u32 -> u64 for the 64-bit
     * shared pointers NVPTX uses), never of a coordinate: every coordinate operand in a
     * cp.async.bulk.tensor list is a %r register or an immediate */
    for (const char *p = ptx.data; (p = strstr(p, "cp.")); p++) {
      const char *brace = strchr(p, '{');
      const char *nl = strchr(p, '\n');
      if (!brace || (nl && brace > nl)) continue;
      char inside[256] = "";
      sscanf(brace, "{%255[^}]}", inside);
      CHECK(strstr(inside, "%rd") == NULL);
    }
    CHECK(mlir_no_local_memory(ptx.data, &rep));
  }
  hg_text_free(&mlir);
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

int main(void) {
  mlir_test_require_tools();
  HG_RUN(test_negative_coordinate_reaches_tma_unchanged);
  HG_RUN(test_signed_coordinates_from_params_and_loops);
  HG_RUN(test_tensor_map_param_addressing);
  HG_RUN(test_loads_all_ranks_and_variants);
  HG_RUN(test_prefetch_store_reduce_all_ranks);
  mlir_test_report_times();
  return hg_test_finish();
}
