/* The TMA copy kernels, generated for the whole matrix the GPU check covers: element types
 * of 1, 2 and 4 bytes x swizzles (none, 32B, 64B, 128B) x tile shapes x clusters (1, 2, 4)
 * x operations (load, prefetch, multicast, store, every reduce op the type allows), each
 * accepted by ptxas -arch=sm_90a and holding the instructions its plan asks for. Plus the
 * streaming copy kernel, the spec rules (each refused with a sentence), and the runtime
 * entry points without a runtime. No GPU needed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit/emit_test_util.h"
#include "hg_test.h"
#include "hopgen/kernels.h"
#include "support/tma_matrix.h"

static hg_tma_plan_t plan; /* large: keep off the stack */

static int count_of(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
  return n;
}

/* Lines of text holding both op (an instruction, at the line's start after indentation) and
 * needle. */
static int lines_with(const char *text, const char *op, const char *needle) {
  int n = 0;
  for (const char *line = text; line && *line;) {
    const char *nl = strchr(line, '\n');
    const size_t len = nl ? (size_t)(nl - line) : strlen(line);
    const char *at = line;
    while (at < line + len && (*at == '\t' || *at == ' ')) at++;
    char buf[512];
    snprintf(buf, sizeof buf, "%.*s", (int)(line + len - at), at);
    n += !strncmp(buf, op, strlen(op)) && strstr(buf, needle);
    line = nl ? nl + 1 : NULL;
  }
  return n;
}

static int kernels_built, refused_multicast;

/* Generate spec, assemble it, and check the instructions against the plan. */
static bool build_one(const hg_tma_spec_t *s, bool may_refuse) {
  hg_kernel_t k;
  hg_status_t st = hg_tma_generate(s, HG_BACKEND_PTX, &k, &plan);
  char what[256];
  hg_tma_spec_print(s, what, sizeof what);
  hg_test_checks++;
  if (!hg_is_ok(&st)) {
    if (may_refuse && st.code == HG_ERR_INVALID &&
        (strstr(st.msg, "cluster") || strstr(st.msg, "multicast"))) {
      refused_multicast++;
      return false;
    }
    HG_FAIL("%s: %s", what, st.msg);
    return false;
  }
  kernels_built++;
  if (!hg_test_sampled(kernels_built)) {
    hg_kernel_free(&k);
    return true;
  }
  hg_ptxas_report_t rep;
  st = hg_ptxas_check(k.ptx.data, &rep);
  hg_test_checks++;
  if (!hg_is_ok(&st)) {
    HG_FAIL("%s: ptxas rejected %s: %s", what, k.name, st.msg);
    emit_test_dump(k.ptx.data);
    hg_kernel_free(&k);
    return false;
  }
  CHECK_EQ(rep.spill_store_bytes, 0);
  CHECK_EQ(k.threads, 128);
  CHECK(k.smem_bytes >=
        plan.smem_bytes + (s->op == HG_TMA_LOAD || s->op == HG_TMA_PREFETCH ? 8 : 0));
  CHECK_EQ(k.cluster[0], s->cluster > 1 ? (uint32_t)s->cluster : 1u);
  char want[160];
  const int r = plan.map.rank;
  switch (s->op) {
  case HG_TMA_LOAD:
  case HG_TMA_PREFETCH:
    snprintf(want, sizeof want,
             "cp.async.bulk.tensor.%dd.shared::cluster.global.tile.mbarrier::complete_tx::bytes%s ",
             r, s->cluster > 1 ? ".multicast::cluster" : "");
    CHECK_EQ(count_of(k.ptx.data, want), plan.num_boxes);
    CHECK(strstr(k.ptx.data, "mbarrier.arrive.expect_tx") != NULL);
    snprintf(want, sizeof want, "], %u;", plan.expect_tx_bytes);
    CHECK(strstr(k.ptx.data, "mbarrier.arrive.expect_tx") != NULL);
    if (s->op == HG_TMA_PREFETCH) {
      snprintf(want, sizeof want, "cp.async.bulk.prefetch.tensor.%dd.L2.global.tile", r);
      CHECK_EQ(count_of(k.ptx.data, want), plan.num_boxes);
    } else {
      CHECK(!strstr(k.ptx.data, "cp.async.bulk.prefetch.tensor"));
    }
    if (s->cluster > 1) {
      snprintf(want, sizeof want, ".reqnctapercluster %d, 1, 1", s->cluster);
      CHECK(strstr(k.ptx.data, want) != NULL);
      CHECK(strstr(k.ptx.data, "fence.mbarrier_init.release.cluster") != NULL);
      CHECK_EQ(count_of(k.ptx.data, "barrier.cluster.arrive"), 2);
      CHECK_EQ(count_of(k.ptx.data, "barrier.cluster.wait"), 2);
      CHECK_EQ(plan.boxes_per_cta * s->cluster, plan.num_boxes);
    } else {
      CHECK(!strstr(k.ptx.data, "barrier.cluster"));
    }
    break;
  case HG_TMA_STORE: {
    snprintf(want, sizeof want, "cp.async.bulk.tensor.%dd.global.shared::cta.tile.bulk_group", r);
    CHECK_EQ(count_of(k.ptx.data, want), plan.num_boxes);
    CHECK_EQ(count_of(k.ptx.data, "cp.async.bulk.commit_group"), 1);
    CHECK_EQ(count_of(k.ptx.data, "cp.async.bulk.wait_group 0"), 1);
    /* the fallback for boxes with a negative coordinate: ordinary stores of the element
     * (4-byte elements share st.global.u32 with the status word) */
    const int e = hg_dtype_bytes(s->dtype);
    snprintf(want, sizeof want, "st.global.u%d [", 8 * e);
    CHECK_EQ(count_of(k.ptx.data, want), e == 4 ? 2 : 1);
    snprintf(want, sizeof want, "ld.shared.u%d ", 8 * e);
    CHECK_EQ(count_of(k.ptx.data, want), 1);
    break;
  }
  default: {
    static const char *const red[] = {"add", "min", "max", "inc", "dec", "and", "or", "xor"};
    const char *rn = red[s->op - HG_TMA_REDUCE_ADD];
    snprintf(want, sizeof want, "cp.reduce.async.bulk.tensor.%dd.global.shared::cta.%s.tile", r,
             rn);
    CHECK_EQ(count_of(k.ptx.data, want), plan.num_boxes);
    /* the fallback: one global reduction of the element (hg_b_red), or for 16-bit float
     * min/max its CAS loop */
    const bool cas = (s->dtype == HG_F16 || s->dtype == HG_BF16) &&
                     (s->op == HG_TMA_REDUCE_MIN || s->op == HG_TMA_REDUCE_MAX);
    snprintf(want, sizeof want, "red.global.%s.", rn);
    CHECK_EQ(count_of(k.ptx.data, want), cas ? 0 : 1);
    CHECK_EQ(count_of(k.ptx.data, "atom.global.cas.b16"), cas ? 1 : 0);
    break;
  }
  }
  if (s->op != HG_TMA_LOAD && s->op != HG_TMA_PREFETCH) {
    /* the tensor's parameters, the per-box TMA decision and the reported count */
    CHECK(strstr(k.ptx.data, ".param .u64 hgp_gmem") != NULL);
    CHECK(strstr(k.ptx.data, ".param .u64 hgp_extent0") != NULL);
    CHECK(strstr(k.ptx.data, ".param .u64 hgp_stride0") != NULL);
    /* declared, counted, tested before the fallback loop, shifted into the status word */
    CHECK_EQ(count_of(k.ptx.data, "_boxes_without_tma"), 4);
  }
  /* Coordinates stay signed: the origin parameters are loaded as 32-bit values and never
   * widened before the TMA operands (no cvt to 64 bits of an origin). */
  CHECK(strstr(k.ptx.data, "ld.param.u32 %r") != NULL);
  hg_kernel_free(&k);
  return true;
}

/* Each variant of the shared matrix through the PTX backend and ptxas; multicast variants
 * may be refused by the planner (counted per cluster size when they build). */
static void assemble_variant(const hg_tma_spec_t *spec, void *ctx) {
  int *multicast_ok = ctx; /* per cluster 1, 2, 4 */
  hg_tma_spec_t s = *spec;
  if (build_one(&s, s.cluster > 1) && s.cluster > 1) multicast_ok[s.cluster / 2]++;
}

static void test_matrix(void) {
  int multicast_ok[3] = {0, 0, 0};
  tma_matrix_for_each(assemble_variant, multicast_ok);
  /* Multicast must work for every type and swizzle on the 64-row tile at least. */
  const int cases = (int)(sizeof tma_matrix_types / sizeof tma_matrix_types[0]) *
                    (int)(sizeof tma_matrix_swizzles / sizeof tma_matrix_swizzles[0]);
  CHECK(multicast_ok[1] >= cases);
  CHECK(multicast_ok[2] >= cases);
  fprintf(stderr,
          "  %d kernels assembled; %d multicast variants refused by the planner "
          "(slices below a swizzle pattern)\n",
          kernels_built, refused_multicast);
}

/* Tiles narrower than the swizzle span (rows padded to it, hg_tma_smem_layout): 1, 2 and
 * 4-byte elements, inner extents of 16 B up to half the span under each swizzle, 16 rows at
 * negative origins, loaded, multicast over 2 (8-row slices, one swizzle pattern each),
 * stored and reduced; each plan one box of the whole tile in 16 rows of the span. */
static void test_padded_tiles(void) {
  static const hg_dtype_t types[3] = {HG_U8, HG_F16, HG_F32};
  int built = 0;
  for (int ti = 0; ti < 3; ti++)
    for (int sw = 1; sw <= 3; sw++) {
      const int e = hg_dtype_bytes(types[ti]), span = hg_swizzle_mode_bytes((hg_swizzle_mode_t)sw);
      for (int width = 16; width < span; width *= 2)
        for (int v = 0; v < 4; v++) {
          static const hg_tma_op_t ops[4] = {HG_TMA_LOAD, HG_TMA_LOAD, HG_TMA_STORE,
                                             HG_TMA_REDUCE_ADD};
          hg_tma_spec_t s = hg_tma_spec_default(ops[v]);
          s.dtype = types[ti];
          s.swizzle = (hg_swizzle_mode_t)sw;
          s.cluster = v == 1 ? 2 : 1;
          if (ops[v] == HG_TMA_REDUCE_ADD && types[ti] == HG_U8) s.op = HG_TMA_STORE;
          s.tile[0] = 16;
          s.tile[1] = width / e;
          s.shape[0] = 40;
          s.shape[1] = 3 * width / e + 16 / e;
          s.origin[0] = -3;
          s.origin[1] = -16 / e;
          s.grid[0] = s.grid[1] = 0;
          if (!build_one(&s, false)) continue;
          built++;
          char what[256];
          hg_tma_spec_print(&s, what, sizeof what);
          hg_test_checks++;
          if (plan.map.box_dim[0] * (uint32_t)e != (uint32_t)width ||
              plan.smem_bytes != 16u * (uint32_t)span || plan.num_boxes != s.cluster ||
              plan.map.box_dim[1] != 16u / (uint32_t)s.cluster)
            HG_FAIL("%s: inner box %u B, %u B of shared memory, %d box(es) of %u rows; expected "
                    "%d B, %d B, %d of %d",
                    what, plan.map.box_dim[0] * (uint32_t)e, plan.smem_bytes, plan.num_boxes,
                    plan.map.box_dim[1], width, 16 * span, s.cluster, 16 / s.cluster);
        }
    }
  CHECK_EQ(built, 3 * (1 + 2 + 3) * 4);
}

/* The same generator through the MLIR backend (mlir-opt-22 lowering), on a sample of the
 * matrix: each operation, each cluster size, 1/2/4-byte types, swizzled and not. Skipped
 * with a note where mlir-opt-22 is not installed. */
static void test_mlir_backend(void) {
  hg_tma_spec_t s = hg_tma_spec_default(HG_TMA_LOAD);
  hg_kernel_t k;
  hg_status_t st = hg_tma_generate(&s, HG_BACKEND_MLIR, &k, NULL);
  if (st.code == HG_ERR_TOOL || st.code == HG_ERR_UNSUPPORTED) {
    fprintf(stderr, "  skipped: %s\n", st.msg);
    return;
  }
  CHECK_OK(st);
  if (hg_is_ok(&st)) {
    CHECK(k.mlir.data != NULL);
    hg_kernel_free(&k);
  }
  static const struct {
    hg_tma_op_t op;
    hg_dtype_t t;
    hg_swizzle_mode_t sw;
    int cluster;
  } cases[] = {
      {HG_TMA_LOAD, HG_U8, HG_SWIZZLE_128B, 1},
      {HG_TMA_LOAD, HG_F16, HG_SWIZZLE_64B, 2},
      {HG_TMA_LOAD, HG_F32, HG_SWIZZLE_32B, 4},
      {HG_TMA_PREFETCH, HG_BF16, HG_SWIZZLE_NONE, 1},
      {HG_TMA_STORE, HG_U8, HG_SWIZZLE_NONE, 1},
      {HG_TMA_STORE, HG_F32, HG_SWIZZLE_128B, 1},
      {HG_TMA_REDUCE_ADD, HG_F16, HG_SWIZZLE_128B, 1},
      {HG_TMA_REDUCE_XOR, HG_U32, HG_SWIZZLE_64B, 1},
      {HG_TMA_REDUCE_INC, HG_U32, HG_SWIZZLE_NONE, 1},
      {HG_TMA_REDUCE_MIN, HG_S32, HG_SWIZZLE_32B, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    s = hg_tma_spec_default(cases[i].op);
    s.dtype = cases[i].t;
    s.swizzle = cases[i].sw;
    const int e = hg_dtype_bytes(s.dtype);
    const int span = s.swizzle ? hg_swizzle_mode_bytes(s.swizzle) : 64;
    s.tile[0] = 64;
    s.tile[1] = 2 * span / e;
    s.origin[0] = -3;
    s.origin[1] = -16 / e;
    s.grid[0] = s.grid[1] = 0;
    s.cluster = cases[i].cluster;
    st = hg_tma_generate(&s, HG_BACKEND_MLIR, &k, &plan);
    char what[256];
    hg_tma_spec_print(&s, what, sizeof what);
    hg_test_checks++;
    if (!hg_is_ok(&st)) {
      HG_FAIL("%s (mlir): %s", what, st.msg);
      continue;
    }
    hg_ptxas_report_t rep;
    st = hg_ptxas_check(k.ptx.data, &rep);
    hg_test_checks++;
    if (!hg_is_ok(&st)) HG_FAIL("%s (mlir): ptxas: %s", what, st.msg);
    /* the same TMA instructions as the PTX backend's kernel */
    const int loads = count_of(k.ptx.data, "cp.async.bulk.tensor.2d.shared::cluster.global");
    const int outs = count_of(k.ptx.data, "cp.async.bulk.tensor.2d.global.shared::cta") +
                     count_of(k.ptx.data, "cp.reduce.async.bulk.tensor.2d.global.shared::cta");
    if (s.op == HG_TMA_LOAD || s.op == HG_TMA_PREFETCH)
      CHECK_EQ(loads, plan.num_boxes);
    else
      CHECK_EQ(outs, plan.num_boxes);
    hg_kernel_free(&k);
  }
}

/* The tutorial's three kernels, by name, and their parameters in the documented order. */
static void test_tutorial_kernels(void) {
  hg_tma_spec_t s = hg_tma_spec_default(HG_TMA_LOAD);
  hg_kernel_t k;
  CHECK_OK(hg_tma_generate(&s, HG_BACKEND_PTX, &k, &plan));
  CHECK_STR(k.name, "hg_tma_load_f16_64x64_sw128");
  CHECK(strstr(k.ptx.data,
               ".param .align 64 .b8 hgp_tmap[128],\n\t.param .u64 hgp_dump,\n\t"
               ".param .u64 hgp_status,\n\t.param .u32 hgp_origin0,\n\t.param .u32 "
               "hgp_origin1,\n\t.param .u32 hgp_tiles0,\n\t.param .u32 hgp_tiles1") != NULL);
  CHECK_EQ(plan.num_boxes, 1);
  CHECK_EQ(plan.expect_tx_bytes, 8192);
  hg_kernel_free(&k);
  s.op = HG_TMA_PREFETCH;
  CHECK_OK(hg_tma_generate(&s, HG_BACKEND_PTX, &k, NULL));
  CHECK_STR(k.name, "hg_tma_prefetch_f16_64x64_sw128");
  hg_kernel_free(&k);
  s.op = HG_TMA_LOAD;
  s.cluster = 2;
  CHECK_OK(hg_tma_generate(&s, HG_BACKEND_PTX, &k, &plan));
  CHECK_STR(k.name, "hg_tma_load_f16_64x64_sw128_mc2");
  CHECK_EQ(plan.boxes_per_cta, 1);
  CHECK_EQ(plan.mcast_mask, 3);
  CHECK_EQ(plan.expect_tx_bytes, 8192); /* every CTA receives the whole tile */
  hg_kernel_free(&k);
  s.cluster = 1;
  s.op = HG_TMA_REDUCE_ADD;
  CHECK_OK(hg_tma_generate(&s, HG_BACKEND_PTX, &k, NULL));
  CHECK(strstr(k.ptx.data, "hgp_src") != NULL);
  hg_kernel_free(&k);
}

static void test_spec_rules(void) {
  hg_tma_spec_t s = hg_tma_spec_default(HG_TMA_LOAD);
  CHECK_OK(hg_tma_spec_normalize(&s));
  CHECK_EQ(s.stride[0], 256);
  CHECK_EQ(s.stride[1], 1);
  CHECK_EQ(s.grid[0], 1); /* given */
  s.grid[0] = s.grid[1] = 0;
  s.origin[0] = -10;
  s.origin[1] = -16;
  CHECK_OK(hg_tma_spec_normalize(&s));
  CHECK_EQ(s.grid[0], 5); /* ceil(266 / 64) */
  CHECK_EQ(s.grid[1], 5); /* ceil(272 / 64) */
  CHECK_EQ(hg_tma_spec_tiles(&s), 25);
  CHECK_EQ(hg_tma_spec_tensor_bytes(&s), 256 * 256 * 2);
  char buf[256];
  hg_tma_spec_print(&s, buf, sizeof buf);
  CHECK_STR(buf, "load f16 shape [256,256] strides [256,1] tile [64,64] grid [5,5] origin "
                 "[-10,-16] swizzle 128B");
  hg_kernel_t k;

  /* The innermost origin must be 16-byte aligned (the GPU traps otherwise). */
  s = hg_tma_spec_default(HG_TMA_LOAD);
  s.origin[1] = -4;
  CHECK_ERR(hg_tma_generate(&s, HG_BACKEND_PTX, &k, NULL), HG_ERR_INVALID, "multiple of 16 B");
  s.origin[1] = -8; /* 16 B of f16 */
  s.origin[0] = -3; /* outer coordinates may be anything */
  CHECK_OK(hg_tma_generate(&s, HG_BACKEND_PTX, &k, NULL));
  hg_kernel_free(&k);

  s = hg_tma_spec_default(HG_TMA_STORE);
  s.cluster = 2;
  CHECK_ERR(hg_tma_generate(&s, HG_BACKEND_PTX, &k, NULL), HG_ERR_INVALID, "multicast loads");
  s = hg_tma_spec_default(HG_TMA_REDUCE_INC);
  CHECK_ERR(hg_tma_generate(&s, HG_BACKEND_PTX, &k, NULL), HG_ERR_INVALID, "u32 only");
  s = hg_tma_spec_default(HG_TMA_LOAD);
  s.dtype = HG_F64;
  CHECK_ERR(hg_tma_generate(&s, HG_BACKEND_PTX, &k, NULL), HG_ERR_UNSUPPORTED, "8, 16 or 32-bit");
  s = hg_tma_spec_default(HG_TMA_LOAD);
  s.rank = 6;
  CHECK_ERR(hg_tma_generate(&s, HG_BACKEND_PTX, &k, NULL), HG_ERR_INVALID, "rank 6");
  s = hg_tma_spec_default(HG_TMA_LOAD);
  s.tile[0] = 0;
  CHECK_ERR(hg_tma_generate(&s, HG_BACKEND_PTX, &k, NULL), HG_ERR_INVALID, "mode 0");
  s = hg_tma_spec_default(HG_TMA_LOAD);
  s.origin[0] = INT32_MAX - 10;
  CHECK_ERR(hg_tma_generate(&s, HG_BACKEND_PTX, &k, NULL), HG_ERR_OVERFLOW, "signed 32-bit");
  s = hg_tma_spec_default(HG_TMA_LOAD);
  s.stride[0] = 256;
  CHECK_ERR(hg_tma_generate(&s, HG_BACKEND_PTX, &k, NULL), HG_ERR_INVALID, "give every stride");
  s = hg_tma_spec_default(HG_TMA_STORE);
  s.oob_nan = true;
  CHECK_ERR(hg_tma_generate(&s, HG_BACKEND_PTX, &k, NULL), HG_ERR_INVALID, "NaN fill");
  s = hg_tma_spec_default(HG_TMA_LOAD);
  s.cluster = 17;
  CHECK_ERR(hg_tma_generate(&s, HG_BACKEND_PTX, &k, NULL), HG_ERR_INVALID, "16");
  /* A row pitch that is not a multiple of 16 B: the tensor map refuses it, with its rule. */
  s = hg_tma_spec_default(HG_TMA_LOAD);
  s.shape[1] = 100;
  CHECK_ERR(hg_tma_generate(&s, HG_BACKEND_PTX, &k, NULL), HG_ERR_INVALID, "multiple of 16 B");
  /* ... and with a padded leading dimension it works, tiles overhanging the edge. */
  s.stride[0] = 104;
  s.stride[1] = 1;
  CHECK_OK(hg_tma_generate(&s, HG_BACKEND_PTX, &k, NULL));
  hg_kernel_free(&k);
  /* The MLIR backend passes its answer through (an error until it lands). */
  s = hg_tma_spec_default(HG_TMA_LOAD);
  hg_status_t m = hg_tma_generate(&s, HG_BACKEND_MLIR, &k, NULL);
  if (hg_is_ok(&m)) {
    CHECK(k.ptx.data != NULL);
    hg_kernel_free(&k);
  } else {
    CHECK(m.msg[0] != '\0');
  }
}

static void test_copy_kernel(void) {
  const hg_copy_config_t cfgs[] = {
      {0, 0, 0, false}, {2, 1, 1, false}, {4, 48, 1, true}, {4, 16, 2, false}, {16, 8, 1, false},
  };
  for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
    hg_kernel_t k;
    CHECK_OK(hg_gen_copy(&cfgs[i], HG_BACKEND_PTX, &k));
    if (!k.ptx.data) continue;
    hg_ptxas_report_t rep;
    CHECK_OK(hg_ptxas_check(k.ptx.data, &rep));
    CHECK_EQ(rep.spill_store_bytes, 0);
    CHECK_EQ(k.threads, 32);
    const int stages = cfgs[i].stages ? cfgs[i].stages : 6;
    /* the prologue's loads plus the refill */
    CHECK_EQ(count_of(k.ptx.data, "cp.async.bulk.tensor.2d.shared::cluster.global.tile"),
             stages + 1);
    CHECK_EQ(count_of(k.ptx.data, "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"), 1);
    CHECK_EQ(count_of(k.ptx.data, "cp.async.bulk.wait_group.read 1"), 1);
    CHECK_EQ(count_of(k.ptx.data, "mbarrier.init.shared::cta.b64"), stages);
    if (cfgs[i].evict_first) CHECK(strstr(k.ptx.data, "L2::evict_first") != NULL);
    hg_kernel_free(&k);
  }
  hg_kernel_t k;
  /* The default configuration keeps its name (the JIT cache's key) and has no variant's
   * instructions: no cache hint, no contiguous split, one warp. */
  CHECK_OK(hg_gen_copy(NULL, HG_BACKEND_PTX, &k));
  CHECK_STR(k.name, "hg_copy_s6_r32");
  CHECK(!strstr(k.ptx.data, "L2::cache_hint") && !strstr(k.ptx.data, "min.s32"));
  CHECK(strstr(k.ptx.data, ".reqntid 32, 1, 1") != NULL);
  /* the threaded forms' register cap is theirs alone */
  CHECK(!strstr(k.ptx.data, ".minnctapersm"));
  hg_kernel_free(&k);
  hg_copy_config_t bad = {1, 0, 0, false};
  CHECK_ERR(hg_gen_copy(&bad, HG_BACKEND_PTX, &k), HG_ERR_INVALID, "2..16");
  bad = (hg_copy_config_t){8, 64, 1, false};
  CHECK_ERR(hg_gen_copy(&bad, HG_BACKEND_PTX, &k), HG_ERR_INVALID, "227 KiB");
  bad = (hg_copy_config_t){4, 32, 2, false};
  CHECK_ERR(hg_gen_copy(&bad, HG_BACKEND_PTX, &k), HG_ERR_INVALID, "CTAs per SM");
  bad = (hg_copy_config_t){.order = (hg_copy_order_t)2};
  CHECK_ERR(hg_gen_copy(&bad, HG_BACKEND_PTX, &k), HG_ERR_INVALID, "copy order 2");
  bad = (hg_copy_config_t){.stages = 8, .box_rows = 64, .split_roles = true};
  CHECK_ERR(hg_gen_copy(&bad, HG_BACKEND_PTX, &k), HG_ERR_INVALID, "227 KiB");
  hg_copy_bench_t bench = {.bytes = 1 << 20, .config = {.order = (hg_copy_order_t)-1}};
  CHECK_ERR(hg_copy_bench_validate(&bench), HG_ERR_INVALID, "not an hg_copy_order_t");
}

/* The copy's options (copy.c), each generated, assembled, and holding what makes it that
 * variant; every combination of order, store hint and roles, at two ring sizes. */
static void test_copy_variants(void) {
  hg_copy_order_t order;
  CHECK_OK(hg_copy_order_parse("contiguous", &order));
  CHECK_EQ(order, HG_COPY_CONTIGUOUS);
  CHECK_OK(hg_copy_order_parse("interleaved", &order));
  CHECK_EQ(order, HG_COPY_INTERLEAVED);
  CHECK_ERR(hg_copy_order_parse("diagonal", &order), HG_ERR_PARSE,
            "copy order 'diagonal' is not one of interleaved, contiguous");
  CHECK_STR(hg_copy_order_name(HG_COPY_CONTIGUOUS), "contiguous");
  CHECK_STR(hg_copy_order_name((hg_copy_order_t)9), "?");
  static const int rings[][2] = {{4, 16}, {2, 1}, {16, 8}};
  for (int v = 0; v < 16 * 3; v++) {
    const int S = rings[v / 16][0];
    hg_copy_config_t c = {.stages = S,
                          .box_rows = rings[v / 16][1],
                          .order = v & 1 ? HG_COPY_CONTIGUOUS : HG_COPY_INTERLEAVED,
                          .store_evict_first = (v & 2) != 0,
                          .split_roles = (v & 4) != 0,
                          .evict_first = (v & 8) != 0};
    hg_kernel_t k;
    CHECK_OK(hg_gen_copy(&c, HG_BACKEND_PTX, &k));
    if (!k.ptx.data) continue;
    const char *ptx = k.ptx.data;
    hg_ptxas_report_t rep;
    CHECK_OK(hg_ptxas_check(ptx, &rep));
    CHECK_EQ(rep.spill_store_bytes, 0);
    /* the name says every option, so no two variants share a JIT cache entry */
    char name[128];
    snprintf(name, sizeof name, "hg_copy_s%d_r%d%s%s%s%s", S, c.box_rows,
             c.evict_first ? "_ef" : "", c.store_evict_first ? "_sef" : "",
             c.order == HG_COPY_CONTIGUOUS ? "_ct" : "", c.split_roles ? "_sr" : "");
    CHECK_STR(k.name, name);
    const int loads = count_of(ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.tile");
    const int stores = count_of(ptx, "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group");
    const int hinted_stores =
        count_of(ptx, "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group.L2::cache_hint");
    const int hinted_loads = count_of(ptx, "mbarrier::complete_tx::bytes.L2::cache_hint");
    CHECK_EQ(stores, 1);
    CHECK_EQ(hinted_stores, c.store_evict_first ? 1 : 0);
    CHECK_EQ(hinted_loads, c.evict_first ? loads : 0);
    /* one policy a thread that uses one: the single thread shares the loads' */
    const int policies = count_of(ptx, "createpolicy.fractional.L2::evict_first");
    CHECK_EQ(policies, c.split_roles ? c.evict_first + c.store_evict_first
                                     : (c.evict_first || c.store_evict_first));
    /* contiguous: q = boxes / nctaid, r = boxes % nctaid, first = cta * q + min(cta, r), and
     * box j is first + j; interleaved: box j is j * nctaid + cta */
    if (c.order == HG_COPY_CONTIGUOUS) {
      CHECK(strstr(ptx, "div.s32") && strstr(ptx, "rem.s32"));
      CHECK(strstr(ptx, "min.s32") != NULL);
      /* one first_box + j for each box a load or store addresses */
      CHECK_EQ(lines_with(ptx, "add.s32", "_first_box,"), loads + stores);
    } else {
      CHECK(!strstr(ptx, "first_box") && !strstr(ptx, "min.s32"));
      CHECK_EQ(lines_with(ptx, "mad.lo.s32", "_nctaid_x, %r"), loads + stores);
    }
    if (c.split_roles) {
      /* two warps; a full and an empty barrier per stage, one arrival each */
      CHECK_EQ(k.threads, 64);
      CHECK(strstr(ptx, ".reqntid 64, 1, 1") != NULL);
      CHECK_EQ(count_of(ptx, "mbarrier.init.shared::cta.b64"), 2 * S);
      CHECK_EQ(count_of(ptx, "elect.sync"), 2);
      /* barriers initialised by thread 0 before a CTA barrier both roles pass */
      CHECK_EQ(count_of(ptx, "bar.sync 0;"), 1);
      CHECK(strstr(ptx, "fence.proxy.async.shared::cta") < strstr(ptx, "bar.sync 0;"));
      /* the loader's one load in its loop (no prologue); its wait on the empty barrier
       * and the storer's on the full one */
      CHECK_EQ(loads, 1);
      CHECK_EQ(count_of(ptx, "mbarrier.try_wait.parity"), 2);
      /* the storer's release: after the store of box j-1 has read its stage */
      CHECK_EQ(count_of(ptx, "mbarrier.arrive.shared::cta.b64"), 1);
      const char *rd = strstr(ptx, "cp.async.bulk.wait_group.read 1;");
      CHECK(rd != NULL && strstr(rd, "mbarrier.arrive.shared::cta.b64") != NULL);
      /* the last stores complete before the storer exits */
      /* the loader comes first, in warp 0 (tid < 32); the storer in the else branch */
      const char *store_at = strstr(ptx, "cp.async.bulk.tensor.2d.global.shared::cta");
      const char *load_at = strstr(ptx, "cp.async.bulk.tensor.2d.shared::cluster.global");
      CHECK(strstr(ptx, "setp.lt.u32") && load_at && store_at && load_at < store_at);
      /* the last stores complete before the storer exits */
      CHECK_EQ(count_of(ptx, "cp.async.bulk.wait_group 0;"), 1);
      CHECK(store_at && strstr(ptx, "cp.async.bulk.wait_group 0;") > store_at);
    } else {
      CHECK_EQ(k.threads, 32);
      CHECK_EQ(count_of(ptx, "mbarrier.init.shared::cta.b64"), S);
      CHECK_EQ(loads, S + 1);
      CHECK_EQ(count_of(ptx, "mbarrier.try_wait.parity"), 1);
      CHECK_EQ(count_of(ptx, "mbarrier.arrive.shared::cta.b64"), 0);
      CHECK_EQ(count_of(ptx, "cp.async.bulk.wait_group.read 1;"), 1);
    }
    hg_kernel_free(&k);
  }
}

/* The arrival counts the kernel's mbarrier.init lines give, in order: each init's count
 * register is set by a mov.b32 of a constant just before it (ptx.c's constants). */
static int init_counts(const char *ptx, int *counts, int max) {
  int n = 0;
  for (const char *at = ptx; n < max && (at = strstr(at, "mbarrier.init.shared::cta.b64 ["));
       at++) {
    const char *comma = strstr(at, "], ");
    char reg[32] = "";
    if (!comma || sscanf(comma + 3, "%31[^;]", reg) != 1) break;
    /* the last "mov.b32 <reg>, " before this init */
    char mov[48];
    snprintf(mov, sizeof mov, "mov.b32 %s, ", reg);
    const char *def = NULL;
    for (const char *m = ptx; (m = strstr(m, mov)) != NULL && m < at; m++) def = m;
    counts[n++] = def ? atoi(def + strlen(mov)) : -1;
  }
  return n;
}

/* The last occurrence of needle in text before limit (NULL: anywhere), or NULL. */
static const char *last_of(const char *text, const char *needle, const char *limit) {
  const char *last = NULL;
  for (const char *p = text; (p = strstr(p, needle)) != NULL && (!limit || p < limit); p++)
    last = p;
  return last;
}

/* Store threads (copy.c): TMA loads by one elected lane of warp 0, stores by 32 W threads
 * through ld.shared.v4 -> st.global.v4, each thread fencing the proxies before its arrival
 * on the stage's empty barrier. Ring shapes, warp counts, the order, the load hint, .cs
 * stores and CTAs per SM in combination; each assembled, no spills. */
static void test_copy_store_threads(void) {
  static const struct {
    int stages, box_rows, warps, ctas;
    bool cs, ef, contiguous;
  } v[] = {
      {0, 0, 0, 0, false, false, false}, /* the defaults: 6 x 32 KiB, 4 store warps */
      {4, 16, 4, 1, false, false, false}, {3, 64, 8, 1, false, true, false},
      {4, 16, 8, 1, true, false, true},   {2, 1, 1, 1, false, false, false},
      {2, 1, 8, 1, true, true, true},     {8, 16, 3, 1, false, false, false},
      {4, 16, 4, 2, true, false, false},  {3, 32, 2, 2, false, true, true},
      {4, 8, 4, 4, false, false, false},  {16, 8, 7, 1, true, false, false},
  };
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    hg_copy_config_t c = {.stages = v[i].stages,
                          .box_rows = v[i].box_rows,
                          .ctas_per_sm = v[i].ctas,
                          .store_threads = true,
                          .store_warps = v[i].warps,
                          .store_cs = v[i].cs,
                          .evict_first = v[i].ef,
                          .order = v[i].contiguous ? HG_COPY_CONTIGUOUS : HG_COPY_INTERLEAVED};
    hg_kernel_t k;
    CHECK_OK(hg_gen_copy(&c, HG_BACKEND_PTX, &k));
    if (!k.ptx.data) continue;
    const char *ptx = k.ptx.data;
    const int S = c.stages ? c.stages : 6, R = c.box_rows ? c.box_rows : 32;
    const int W = c.store_warps ? c.store_warps : 4, cps = c.ctas_per_sm ? c.ctas_per_sm : 1;
    int C = 2 * R / W; /* a thread's vectors per chunk (copy.c's store_chunk) */
    C = C < 1 ? 1 : C > 8 ? 8 : C;
    hg_ptxas_report_t rep;
    CHECK_OK(hg_ptxas_check(ptx, &rep));
    CHECK_EQ(rep.spill_store_bytes, 0);
    CHECK_EQ(rep.stack_frame_bytes, 0);
    char name[128], line[64];
    snprintf(name, sizeof name, "hg_copy_s%d_r%d%s%s_st%d_c%d%s", S, R, c.evict_first ? "_ef" : "",
             c.order == HG_COPY_CONTIGUOUS ? "_ct" : "", W, cps, c.store_cs ? "_cs" : "");
    CHECK_STR(k.name, name);
    /* a loader warp and W store warps; the register cap of ctas_per_sm resident CTAs */
    CHECK_EQ(k.threads, 32u * (1u + (unsigned)W));
    snprintf(line, sizeof line, ".reqntid %d, 1, 1", 32 * (1 + W));
    CHECK(strstr(ptx, line) != NULL);
    snprintf(line, sizeof line, ".minnctapersm %d", cps);
    CHECK(strstr(ptx, line) != NULL);
    /* the destination is a pointer: one tensor map (the source's), rows for the last box */
    CHECK(strstr(ptx, ".param .u64 hgp_dst") && strstr(ptx, ".param .u32 hgp_rows"));
    CHECK_EQ(count_of(ptx, ".param .align 64 .b8"), 1);
    /* TMA loads only: the loader's one load, no TMA store and no bulk groups */
    CHECK_EQ(count_of(ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.tile"), 1);
    CHECK_EQ(count_of(ptx, "cp.async.bulk.tensor.2d.global"), 0);
    CHECK_EQ(count_of(ptx, "cp.async.bulk.commit_group"), 0);
    CHECK_EQ(count_of(ptx, "cp.async.bulk.wait_group"), 0);
    CHECK_EQ(count_of(ptx, "mbarrier::complete_tx::bytes.L2::cache_hint"), c.evict_first ? 1 : 0);
    CHECK_EQ(count_of(ptx, "elect.sync"), 1);
    /* the threads' copy: C vectors of a chunk and C of the rest, each ld.shared.v4 then
     * st.global.v4 (with .cs when asked) */
    CHECK_EQ(count_of(ptx, "ld.shared.v4.u32"), 2 * C);
    CHECK_EQ(count_of(ptx, "st.global.cs.v4.u32"), c.store_cs ? 2 * C : 0);
    CHECK_EQ(count_of(ptx, "st.global.v4.u32"), c.store_cs ? 0 : 2 * C);
    CHECK(strstr(ptx, "ld.shared.v4.u32") < strstr(ptx, "st.global."));
    /* the last box's rows that exist: rows - its first row, at most box_rows */
    CHECK_EQ(lines_with(ptx, "sub.s32", "_rows, "), 1);
    CHECK(strstr(ptx, "min.s32") != NULL);
    /* full barriers of one arrival, empty ones of 32 W: init counts in stage order */
    int counts[32];
    CHECK_EQ(init_counts(ptx, counts, 32), 2 * S);
    for (int s = 0; s < 2 * S && s < 32; s++) CHECK_EQ(counts[s], s % 2 ? 32 * W : 1);
    /* the loader's wait on an empty barrier, the store threads' on a full one */
    CHECK_EQ(count_of(ptx, "mbarrier.try_wait.parity"), 2);
    /* each store thread: its last read of the stage, then the proxy fence, then its
     * arrival on the empty barrier (the only plain arrive; the loader's is expect_tx) */
    CHECK_EQ(count_of(ptx, "mbarrier.arrive.shared::cta.b64"), 1);
    CHECK_EQ(count_of(ptx, "mbarrier.arrive.expect_tx"), 1);
    const char *arrive = strstr(ptx, "mbarrier.arrive.shared::cta.b64");
    const char *fence = last_of(ptx, "fence.proxy.async.shared::cta", arrive);
    const char *read = last_of(ptx, "ld.shared.v4", arrive);
    CHECK(arrive && fence && read && read < fence);
    /* two fences in all: the barriers' init, the store threads' */
    CHECK_EQ(count_of(ptx, "fence.proxy.async.shared::cta"), 2);
    /* the loader (warp 0, tid < 32) first; the store warps in the else branch */
    CHECK(strstr(ptx, "cp.async.bulk.tensor.2d.shared::cluster") < strstr(ptx, "ld.shared.v4"));
    hg_kernel_free(&k);
  }
  /* the store threads' default: 4 warps */
  hg_copy_config_t c = {.store_threads = true};
  hg_kernel_t k;
  CHECK_OK(hg_gen_copy(&c, HG_BACKEND_PTX, &k));
  CHECK_STR(k.name, "hg_copy_s6_r32_st4_c1");
  CHECK_EQ(k.threads, 160);
  hg_kernel_free(&k);
}

/* The ldg copy (copy.c): no TMA, no shared memory, no barriers; a tile's U ld.global.v4 by
 * every thread before its U st.global.v4, then the partial tile a vector at a time. */
static void test_copy_ldg(void) {
  static const struct {
    int threads, unroll, ctas;
    bool cs;
  } v[] = {
      {0, 0, 0, false},   {256, 4, 4, false}, {512, 8, 2, false},   {512, 4, 2, true},
      {256, 8, 4, true},  {32, 1, 1, false},  {1024, 16, 1, false}, {128, 3, 16, true},
      {256, 4, 8, false}, {64, 16, 2, false},
  };
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    hg_copy_config_t c = {.ldg = true,
                          .ldg_threads = v[i].threads,
                          .unroll = v[i].unroll,
                          .ctas_per_sm = v[i].ctas,
                          .store_cs = v[i].cs};
    hg_kernel_t k;
    CHECK_OK(hg_gen_copy(&c, HG_BACKEND_PTX, &k));
    if (!k.ptx.data) continue;
    const char *ptx = k.ptx.data;
    const int T = c.ldg_threads ? c.ldg_threads : 256, U = c.unroll ? c.unroll : 8;
    const int cps = c.ctas_per_sm ? c.ctas_per_sm : 1;
    hg_ptxas_report_t rep;
    CHECK_OK(hg_ptxas_check(ptx, &rep));
    /* 1024 threads with 16 vectors each need more than the 64 registers a thread may have */
    if (T * U <= 8192) CHECK_EQ(rep.spill_store_bytes, 0);
    char name[96], line[64];
    snprintf(name, sizeof name, "hg_copy_ldg_t%d_u%d_c%d%s", T, U, cps, c.store_cs ? "_cs" : "");
    CHECK_STR(k.name, name);
    CHECK_EQ(k.threads, (unsigned)T);
    CHECK_EQ(k.smem_bytes, 0);
    snprintf(line, sizeof line, ".reqntid %d, 1, 1", T);
    CHECK(strstr(ptx, line) != NULL);
    snprintf(line, sizeof line, ".minnctapersm %d", cps);
    CHECK(strstr(ptx, line) != NULL);
    /* pointers and a byte count, no tensor map */
    CHECK(strstr(ptx, ".param .u64 hgp_src") && strstr(ptx, ".param .u64 hgp_bytes"));
    CHECK(!strstr(ptx, ".param .align 64"));
    /* nothing of TMA, barriers or shared memory */
    CHECK(!strstr(ptx, "cp.async") && !strstr(ptx, "mbarrier") && !strstr(ptx, ".shared") &&
          !strstr(ptx, "bar.sync") && !strstr(ptx, "fence.proxy"));
    /* U vectors of the loop and U of the partial tile */
    CHECK_EQ(count_of(ptx, "ld.global.v4.u32"), 2 * U);
    CHECK_EQ(count_of(ptx, "st.global.cs.v4.u32"), c.store_cs ? 2 * U : 0);
    CHECK_EQ(count_of(ptx, "st.global.v4.u32"), c.store_cs ? 0 : 2 * U);
    /* in the loop, every load before the first store */
    const char *ld = ptx;
    for (int u = 0; u < U && ld; u++) ld = strstr(u ? ld + 1 : ld, "ld.global.v4.u32");
    CHECK(ld && ld < strstr(ptx, "st.global."));
    /* the grid-stride loop: tile += nctaid */
    CHECK_EQ(lines_with(ptx, "add.s32", "_nctaid_x;"), 1);
    hg_kernel_free(&k);
  }
}

/* Each threaded option refused with a sentence where it does not apply or is out of range. */
static void test_copy_thread_refusals(void) {
  hg_kernel_t k;
  static const struct {
    hg_copy_config_t c;
    const char *says;
  } bad[] = {
      {{.ldg = true, .split_roles = true},
       "the ldg copy has no TMA and no shared-memory ring: "
       "split_roles applies to the TMA copy only"},
      {{.ldg = true, .stages = 4}, "stages applies to the TMA copy only"},
      {{.ldg = true, .box_rows = 8}, "box_rows applies"},
      {{.ldg = true, .evict_first = true}, "evict_first applies"},
      {{.ldg = true, .store_evict_first = true}, "store_evict_first applies"},
      {{.ldg = true, .order = HG_COPY_CONTIGUOUS}, "a contiguous order applies"},
      {{.ldg = true, .store_threads = true}, "store_threads applies"},
      {{.ldg = true, .store_warps = 2}, "store_warps applies"},
      {{.ldg = true, .unroll = 17}, "an ldg unroll of 17 vectors per thread is outside 1..16"},
      {{.ldg = true, .unroll = -1}, "unroll of -1"},
      {{.ldg = true, .ldg_threads = 100}, "100 ldg threads per CTA is not a multiple of 32"},
      {{.ldg = true, .ldg_threads = 2048}, "2048 ldg threads per CTA"},
      {{.ldg = true, .ldg_threads = 1024, .ctas_per_sm = 4},
       "4 CTAs per SM of 1024 threads exceed the 2048 threads an SM holds"},
      {{.ldg = true, .ctas_per_sm = 33}, "33 CTAs per SM is outside 1..32"},
      {{.unroll = 4}, "unroll (4) and ldg_threads (0) apply to the ldg copy only"},
      {{.ldg_threads = 256}, "apply to the ldg copy only"},
      {{.store_cs = true},
       "store_cs puts the .cs cache operator on the threads' stores: it needs "
       "store_threads or ldg"},
      {{.store_warps = 4}, "store_warps (4) applies to store_threads only"},
      {{.store_threads = true, .store_warps = 9}, "9 store warps is outside 1..8"},
      {{.store_threads = true, .store_warps = -2}, "-2 store warps"},
      {{.store_threads = true, .split_roles = true}, "store_threads splits the roles already"},
      {{.store_threads = true, .store_evict_first = true}, "store_evict_first hints TMA stores"},
      {{.store_threads = true, .stages = 8, .box_rows = 32}, "227 KiB"},
      {{.store_threads = true, .stages = 2, .box_rows = 1, .store_warps = 8, .ctas_per_sm = 8},
       "8 CTAs per SM of 288 threads exceed the 2048 threads an SM holds"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    CHECK_ERR(hg_gen_copy(&bad[i].c, HG_BACKEND_PTX, &k), HG_ERR_INVALID, bad[i].says);
  hg_copy_bench_t bench = {.bytes = 1 << 20, .config = {.ldg = true, .unroll = 99}};
  CHECK_ERR(hg_copy_bench_validate(&bench), HG_ERR_INVALID, "outside 1..16");
  bench.config = (hg_copy_config_t){.ldg = true};
  CHECK_OK(hg_copy_bench_validate(&bench));
  bench.config = (hg_copy_config_t){.store_threads = true, .store_warps = 8};
  CHECK_OK(hg_copy_bench_validate(&bench));
}

/* Without a runtime, the drivers refuse with a sentence instead of crashing. */
static void test_no_runtime(void) {
  static hg_tma_result_t res;
  hg_tma_spec_t s = hg_tma_spec_default(HG_TMA_LOAD);
  CHECK_ERR(hg_tma_run(NULL, &s, HG_BACKEND_PTX, NULL, &res), HG_ERR_NO_DRIVER, "hg_rt_open");
  hg_copy_bench_t b = {.bytes = 1 << 20};
  hg_copy_bench_result_t r;
  CHECK_ERR(hg_copy_bench_run(NULL, &b, HG_BACKEND_PTX, &r), HG_ERR_NO_DRIVER, "hg_rt_open");
  b.bytes = 1000;
  CHECK_ERR(hg_copy_bench_validate(&b), HG_ERR_INVALID, "multiple of 1024");
  b.bytes = 1 << 20;
  CHECK_OK(hg_copy_bench_validate(&b));
}

int main(void) {
  emit_test_require_ptxas();
  HG_RUN(test_tutorial_kernels);
  HG_RUN(test_spec_rules);
  HG_RUN(test_copy_kernel);
  HG_RUN(test_copy_variants);
  HG_RUN(test_copy_store_threads);
  HG_RUN(test_copy_ldg);
  HG_RUN(test_copy_thread_refusals);
  HG_RUN(test_no_runtime);
  HG_RUN(test_mlir_backend);
  HG_RUN(test_padded_tiles);
  HG_RUN(test_matrix);
  return hg_test_finish();
}
