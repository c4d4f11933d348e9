/* GEMM generator without a GPU: configuration text, problem and configuration rules with
 * their sentences, the heuristic over the issue's shape set, and ptxas on every
 * configuration the heuristic and the tuner can pick (no spills, setmaxnreg honoured). */
#include <math.h>

#include "hg_test.h"
#include "hopgen/kernels.h"
#include "kernels/gemm_internal.h"

static void test_config_text(void) {
  hg_gemm_config_t c;
  CHECK_OK(hg_gemm_config_parse("128x256x64,c2x1,s4,coop,m8,e64", &c));
  CHECK_EQ(c.tile_m, 128);
  CHECK_EQ(c.tile_n, 256);
  CHECK_EQ(c.tile_k, 64);
  CHECK_EQ(c.cluster_m, 2);
  CHECK_EQ(c.cluster_n, 1);
  CHECK_EQ(c.stages, 4);
  CHECK_EQ(c.schedule, HG_SCHED_COOPERATIVE);
  CHECK_EQ(c.raster, HG_RASTER_M);
  CHECK_EQ(c.raster_group, 8);
  CHECK_EQ(c.epi_n, 64);
  char buf[128];
  hg_gemm_config_print(&c, buf, sizeof buf);
  CHECK_STR(buf, "128x256x64,c2x1,s4,coop,m8,e64");
  /* Fields after the tile are optional and in any order; 'coop' is not a cluster. */
  CHECK_OK(hg_gemm_config_parse("64x128x128,n4,s6,coop,c1x2", &c));
  CHECK_EQ(c.schedule, HG_SCHED_COOPERATIVE);
  CHECK_EQ(c.raster, HG_RASTER_N);
  CHECK_EQ(c.raster_group, 4);
  CHECK_EQ(c.cluster_n, 2);
  CHECK_EQ(c.stages, 6);
  CHECK_ERR(hg_gemm_config_parse("128x256", &c), HG_ERR_PARSE, "is not a tile MxNxK");
  CHECK_ERR(hg_gemm_config_parse("128x256x64,c2", &c), HG_ERR_PARSE, "is not a cluster cMxN");
  CHECK_ERR(hg_gemm_config_parse("128x256x64,fast", &c), HG_ERR_PARSE, "unknown field 'fast'");
  CHECK_ERR(hg_gemm_config_parse("", &c), HG_ERR_PARSE, "empty");
  /* The mainloop: a named field, printed only when not auto ('cpasync-...' is no cluster). */
  CHECK_OK(hg_gemm_config_parse("128x128x64,cpasync-wgmma,c1x1", &c));
  CHECK_EQ(c.mainloop, HG_MAINLOOP_CPASYNC_WGMMA);
  CHECK_EQ(c.cluster_m, 1);
  hg_gemm_config_print(&c, buf, sizeof buf);
  CHECK_STR(buf, "128x128x64,c1x1,s4,coop,m8,e0,cpasync-wgmma");
  CHECK_OK(hg_gemm_config_parse(buf, &c));
  CHECK_EQ(c.mainloop, HG_MAINLOOP_CPASYNC_WGMMA);
  CHECK_OK(hg_gemm_config_parse("128x128x64,tma-ldmatrix-wgmma-rs", &c));
  CHECK_EQ(c.mainloop, HG_MAINLOOP_TMA_LDMATRIX_WGMMA_RS);
  CHECK_OK(hg_gemm_config_parse("128x128x64,auto", &c));
  CHECK_EQ(c.mainloop, HG_MAINLOOP_AUTO);
  hg_gemm_config_print(&c, buf, sizeof buf);
  CHECK_STR(buf, "128x128x64,c1x1,s4,coop,m8,e0");
  CHECK_ERR(hg_gemm_config_parse("128x128x64,tma-sync", &c), HG_ERR_PARSE,
            "mainloop 'tma-sync' is not one of");
  for (int m = 0; m < HG_MAINLOOP_COUNT; m++) {
    hg_gemm_mainloop_t back;
    CHECK_OK(hg_gemm_mainloop_parse(hg_gemm_mainloop_name((hg_gemm_mainloop_t)m), &back));
    CHECK_EQ(back, m);
  }
  CHECK_ERR(hg_gemm_config_parse("128x128x64,tma-wgmma,auto", &c), HG_ERR_PARSE, "mainloop twice");
  /* Strict: no overflow, sign, space, empty field or field given twice gets through. */
  CHECK_ERR(hg_gemm_config_parse("3277777778x128x64", &c), HG_ERR_PARSE, "is not a tile");
  CHECK_ERR(hg_gemm_config_parse("128x-128x64", &c), HG_ERR_PARSE, "is not a tile");
  CHECK_ERR(hg_gemm_config_parse(" 128x128x64", &c), HG_ERR_PARSE, "is not a tile");
  CHECK_ERR(hg_gemm_config_parse("128x128x64,s 4", &c), HG_ERR_PARSE, "is not a stage count");
  CHECK_ERR(hg_gemm_config_parse("128x128x64,,s4", &c), HG_ERR_PARSE, "unknown field ''");
  CHECK_ERR(hg_gemm_config_parse("128x128x64,pp,coop", &c), HG_ERR_PARSE, "schedule twice");
  CHECK_ERR(hg_gemm_config_parse("128x128x64,s4,s5", &c), HG_ERR_PARSE, "stage count twice");
}

static hg_gemm_problem_t problem(int64_t m, int64_t n, int64_t k, hg_dtype_t t) {
  hg_gemm_problem_t p = {.m = m,
                         .n = n,
                         .k = k,
                         .batch = 1,
                         .a_type = t,
                         .b_type = t,
                         .d_type = HG_BF16,
                         .a_k_major = true,
                         .b_k_major = true,
                         .alpha = 1};
  return p;
}

static void test_problem_rules(void) {
  hg_gemm_problem_t p = problem(100, 200, 300, HG_BF16);
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_EQ(p.lda, 300); /* packed K-major A */
  CHECK_EQ(p.ldb, 300); /* packed K-major B (columns of K) */
  CHECK_EQ(p.ldd, 200);
  CHECK_EQ(p.batch_stride_d, 200 * 100);
  /* offsets fit 64 bits in bytes, not only in elements (a fuzzer's batch stride of D passed
   * the element bound and overflowed when the plan scaled it by D's size) */
  p = problem(100, 200, 300, HG_BF16);
  p.d_type = HG_F32;
  p.batch = 2;
  p.batch_stride_d = INT64_MAX / 2 - 1; /* fits in elements, not in bytes */
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_OVERFLOW,
            "D: batch stride 4611686018427387902 x 2 batches of 4-byte elements overflows 64 bits "
            "of bytes");
  p.batch_stride_d = INT64_MAX / 4 - 200 * 100;
  CHECK_OK(hg_gemm_problem_normalize(&p));
  p = problem(100, 200, 300, HG_BF16);
  p.lda = INT64_MAX / 100 / 2 + 1; /* 100 rows of 2-byte elements */
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_OVERFLOW, "A: leading dimension");
  p = problem(100, 200, 300, HG_E4M3); /* 3 k-blocks, 2 column blocks */
  p.scale = HG_SCALE_BLOCK;
  p.scale_lda = INT64_MAX / 4 / 3 + 1;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_OVERFLOW, "block-wise scale tables");
  p.scale_lda = 100;
  p.scale_ldb = INT64_MAX / 4 / 2 + 1;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_OVERFLOW, "overflows 64 bits of bytes");
  p.scale_ldb = INT64_MAX / 4 / 2;
  CHECK_OK(hg_gemm_problem_normalize(&p));
  p = problem(100, 200, 300, HG_E4M3);
  p.b_k_major = false;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_INVALID, "fp8 operands must both be K-major");
  p = problem(100, 200, 300, HG_BF16);
  p.b_type = HG_F16;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_UNSUPPORTED, "the same type");
  p = problem(0, 200, 300, HG_BF16);
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_INVALID, "at least 1");
  p = problem(100, 200, 300, HG_BF16);
  p.lda = 299;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_INVALID, "lda = 299 is below K = 300");
  p = problem(100, 200, 300, HG_BF16);
  p.d_type = HG_S8;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_UNSUPPORTED,
            "D may be bf16, f16, f32, e4m3 or e5m2");

  /* Operand paths: a 7-element row of bf16 is 14 B, not a multiple of 16, so TMA cannot
   * address it; cp.async moves the largest chunk that divides the row pitch and the base. */
  p = problem(1000, 7, 127, HG_BF16);
  p.b_k_major = false; /* B row-major K x N, rows of N = 7 */
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_EQ(hg_gemm_operand_align(&p, 0), 2); /* A rows of K = 127 elements: 254 B */
  CHECK_EQ(hg_gemm_operand_align(&p, 1), 2); /* B rows of N = 7 elements: 14 B */
  CHECK_EQ(hg_gemm_mainloop_resolve(&p, HG_MAINLOOP_AUTO), HG_MAINLOOP_CPASYNC_WGMMA);
  p = problem(1000, 96, 132, HG_BF16); /* A rows of 264 B: 8-byte chunks */
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_EQ(hg_gemm_operand_align(&p, 0), 8);
  CHECK_EQ(hg_gemm_operand_align(&p, 1), 8);
  p = problem(1000, 96, 128, HG_BF16);
  p.a_align = 4; /* a base known only to be 4-byte aligned */
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_EQ(hg_gemm_operand_align(&p, 0), 4);
  CHECK_EQ(hg_gemm_operand_align(&p, 1), 16);
  CHECK_EQ(hg_gemm_mainloop_resolve(&p, HG_MAINLOOP_AUTO), HG_MAINLOOP_CPASYNC_WGMMA);
  p.a_align = 0;
  CHECK_EQ(hg_gemm_mainloop_resolve(&p, HG_MAINLOOP_AUTO), HG_MAINLOOP_TMA_WGMMA);
}

static void test_config_rules(void) {
  hg_gemm_problem_t p = problem(4096, 4096, 4096, HG_BF16);
  CHECK_OK(hg_gemm_problem_normalize(&p));
  hg_gemm_config_t c;
  CHECK_OK(hg_gemm_config_parse("128x256x64,c2x1,s5", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "at most 4 stages fit");
  CHECK_OK(hg_gemm_config_parse("128x256x64,c2x1,s4,pp", &c));
  CHECK_OK(hg_gemm_config_check(&p, &c)); /* 256 rows would be refused; 128x256 pp fits */
  hg_gemm_kernel_t k;
  CHECK_ERR(hg_gemm_generate(&p, &c, HG_BACKEND_PTX, &k), HG_ERR_INVALID,
            "256 accumulator values in 256 registers");
  CHECK_OK(hg_gemm_config_parse("96x256x64", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "tile M = 96");
  CHECK_OK(hg_gemm_config_parse("128x200x64", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "tile N = 200");
  CHECK_OK(hg_gemm_config_parse("128x128x48", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "tile K = 48 elements is 96 B");
  CHECK_OK(hg_gemm_config_parse("128x128x64,c4x8", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "cluster 4x8");
  CHECK_OK(hg_gemm_config_parse("128x128x64,e48", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "epilogue width 48");
  /* Epilogue widths: 64 bf16 = 128-byte swizzled rows, double-buffered; a 176-wide tile
   * (16 x 11) has no 64- or 128-byte divisor, so the whole width goes unswizzled in one
   * buffer; f32 output halves the swizzled width. */
  CHECK_OK(hg_gemm_config_parse("128x256x64", &c));
  CHECK_EQ(hg_gemm_epi_n(&p, &c), 64);
  CHECK_EQ(hg_gemm_epi_buffers(&p, &c), 2);
  CHECK_OK(hg_gemm_config_parse("128x176x64", &c));
  CHECK_EQ(hg_gemm_epi_n(&p, &c), 176);
  CHECK(!hg_gemm_epi_swizzled(&p, 176));
  CHECK_EQ(hg_gemm_epi_buffers(&p, &c), 1);
  CHECK_OK(hg_gemm_config_parse("128x176x64,e16", &c));
  CHECK_OK(hg_gemm_config_check(&p, &c)); /* 32-byte swizzled rows: legal when asked for */
  CHECK_OK(hg_gemm_config_parse("128x176x64,e88", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "epilogue width 88");
  /* D rows of N = 100 bf16 (200 B) in a leading dimension of 104: a TMA store would also
   * write columns 100..103 (it clips at 16 bytes), so the epilogue stores directly; N = 96
   * (192 B) keeps the TMA epilogue. */
  {
    hg_gemm_problem_t q = problem(256, 100, 64, HG_BF16);
    q.ldd = 104;
    hg_gemm_config_t c2;
    CHECK_OK(hg_gemm_config_parse("128x128x64", &c2));
    hg_gemm_kernel_t gk;
    CHECK_OK(hg_gemm_generate(&q, &c2, HG_BACKEND_PTX, &gk));
    CHECK(!gk.tma_store);
    hg_gemm_kernel_free(&gk);
    q.n = 96;
    CHECK_OK(hg_gemm_generate(&q, &c2, HG_BACKEND_PTX, &gk));
    CHECK(gk.tma_store);
    hg_gemm_kernel_free(&gk);
  }
  hg_gemm_problem_t pf = p;
  pf.d_type = HG_F32;
  CHECK_OK(hg_gemm_config_parse("128x256x64", &c));
  CHECK_EQ(hg_gemm_epi_n(&pf, &c), 32);
}

/* Generate, assemble, and require no spills: the consumers hold 128 accumulators. */
/* Launched as a programmatic dependent (gemm_op.c), a GEMM may read or write global memory
 * only after griddepcontrol.wait: the previous kernel's outputs (operands, a grouped GEMM's
 * group rows) are visible only past it. So in the GEMM's entry no global access comes before
 * the wait. */
static void check_reads_after_wait(const hg_gemm_kernel_t *k) {
  const char *ptx = k->k.ptx.data;
  const char *wait = strstr(ptx, "griddepcontrol.wait");
  if (!wait) {
    HG_FAIL("%s has no griddepcontrol.wait", k->k.name);
    return;
  }
  static const char *const access[] = {
      "ld.global", "cp.async.bulk.tensor", "cp.async.ca", "cp.async.cg",
      "st.global", "red.global",           "atom.global", "ld.volatile.global"};
  for (size_t i = 0; i < sizeof access / sizeof access[0]; i++) {
    const char *at = strstr(ptx, access[i]);
    if (at && at < wait)
      HG_FAIL("%s: %s at byte %td, before griddepcontrol.wait at byte %td", k->k.name, access[i],
              at - ptx, wait - ptx);
  }
}

static void check_generates(const hg_gemm_problem_t *p, const hg_gemm_config_t *c) {
  hg_gemm_kernel_t k;
  hg_status_t s = hg_gemm_generate(p, c, HG_BACKEND_PTX, &k);
  char cfg[128];
  hg_gemm_config_print(c, cfg, sizeof cfg);
  if (!hg_is_ok(&s)) {
    HG_FAIL("%s (%s): %s", cfg, hg_dtype_name(p->a_type), s.msg);
    return;
  }
  check_reads_after_wait(&k);
  static long cases;
  if (!hg_test_sampled(cases++)) {
    hg_gemm_kernel_free(&k);
    return;
  }
  hg_ptxas_report_t r;
  s = hg_ptxas_check(k.k.ptx.data, &r);
  if (!hg_is_ok(&s)) HG_FAIL("%s: ptxas: %s", cfg, s.msg);
  if (r.spill_store_bytes || r.spill_load_bytes || r.stack_frame_bytes)
    HG_FAIL("%s (%s %c%c -> %s): %d B spilled, %d B stack", cfg, hg_dtype_name(p->a_type),
            p->a_k_major ? 'k' : 'm', p->b_k_major ? 'k' : 'n', hg_dtype_name(p->d_type),
            r.spill_store_bytes + r.spill_load_bytes, r.stack_frame_bytes);
  if (r.setmaxnreg_ignored) HG_FAIL("%s: ptxas ignored setmaxnreg", cfg);
  /* C7514: ptxas serializes every wgmma when registers an MMA may still write are touched */
  if (strstr(r.notes, "serialized")) HG_FAIL("%s: ptxas: %s", cfg, r.notes);
  /* The mainloop's instructions are there: the MMA and how operands arrive. */
  const hg_gemm_mainloop_t ml = k.config.mainloop;
  const bool k32 = ml == HG_MAINLOOP_LDG_MMASYNC && hg_dtype_bits(p->b_type) == 8;
  CHECK(strstr(k.k.ptx.data, k32 ? "mma.sync.aligned.m16n8k32"
                             : ml == HG_MAINLOOP_TMA_MMASYNC || ml == HG_MAINLOOP_LDG_MMASYNC
                                 ? "mma.sync.aligned.m16n8k16"
                                 : "wgmma.mma_async") != NULL);
  if (ml == HG_MAINLOOP_LDG_MMASYNC) {
    /* weights by ld.global.v4 straight to registers: no stage ring, no cp.async, no TMA */
    CHECK(strstr(k.k.ptx.data, "ld.global.v4") != NULL);
    CHECK(strstr(k.k.ptx.data, "cp.async") == NULL);
    CHECK(strstr(k.k.ptx.data, "mbarrier") == NULL);
    hg_gemm_kernel_free(&k);
    return;
  }
  if (ml == HG_MAINLOOP_TMA_MMASYNC || ml == HG_MAINLOOP_TMA_LDMATRIX_WGMMA_RS)
    CHECK(strstr(k.k.ptx.data, "ldmatrix.sync.aligned.m8n8.x4") != NULL);
  if (!k.a_tma || !k.b_tma)
    CHECK(strstr(k.k.ptx.data, k.a_vec >= 4 || k.b_vec >= 4 ? "cp.async" : "st.shared") != NULL);
  else
    CHECK(strstr(k.k.ptx.data, "cp.async.bulk.tensor") != NULL);
  hg_gemm_kernel_free(&k);
}

static const int64_t shapes[][3] = {
    {2048, 2048, 2048},  {4096, 4096, 4096},  {8192, 8192, 8192}, {16384, 16384, 16384},
    {8192, 28672, 8192}, {8192, 8192, 28672}, {4096, 7168, 2048}, {4096, 2112, 7168},
    {4096, 24576, 1536}, {4096, 7168, 16384}, {128, 7168, 2048},  {128, 24576, 1536},
    {64, 7168, 16384},   {1, 1, 1},           {127, 1000, 4097},  {4097, 7, 1000}};

/* The epilogue's batched stores (epilogue.c, store_buffered): a consumer region whose 64-row
 * sub-tiles each have a buffer waits for its last stores once (bulk wait_group.read 0) and no
 * sub-tile waits for the other buffer (read 1); a region of more sub-tiles than buffers keeps
 * the per-sub-tile wait. The block-wise heuristic takes a stage less for the batched form
 * where the staged scales do not fit 6 stages (gemm_config.c, block_scale_rule). */
static void test_epilogue_batched(void) {
  static const struct {
    int64_t m, n, k;
    hg_dtype_t t;
    hg_gemm_scale_t scale;
    bool batched;
  } cases[] = {{4096, 24576, 1536, HG_E4M3, HG_SCALE_BLOCK, true},
               {4096, 7168, 16384, HG_E4M3, HG_SCALE_BLOCK, true},
               {4096, 4096, 4096, HG_BF16, HG_SCALE_TENSOR, false}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hg_gemm_problem_t p = problem(cases[i].m, cases[i].n, cases[i].k, cases[i].t);
    p.scale = cases[i].scale;
    hg_gemm_config_t c;
    CHECK_OK(hg_gemm_heuristic(&p, 132, &c));
    if (cases[i].scale == HG_SCALE_BLOCK) {
      CHECK_EQ(c.tile_n, 128);
      CHECK_EQ(c.stages, 5);
      CHECK_EQ(hg_gemm_epi_n(&p, &c), 64);
    }
    hg_gemm_kernel_t k;
    CHECK_OK(hg_gemm_generate(&p, &c, HG_BACKEND_PTX, &k));
    const char *ptx = k.k.ptx.data;
    CHECK_EQ(strstr(ptx, "cp.async.bulk.wait_group.read 0;") != NULL, cases[i].batched);
    CHECK_EQ(strstr(ptx, "cp.async.bulk.wait_group.read 1;") != NULL, !cases[i].batched);
    hg_gemm_kernel_free(&k);
  }
}

static void test_heuristic_shapes(void) {
  /* bf16; fp8 accurate (the default: two accumulator sets); fp8 fast */
  const hg_dtype_t types[] = {HG_BF16, HG_E4M3, HG_E4M3};
  for (int t = 0; t < 3; t++)
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
      hg_gemm_problem_t p = problem(shapes[i][0], shapes[i][1], shapes[i][2], types[t]);
      if (t == 2) p.fp8_accum = HG_FP8_ACCUM_FAST;
      hg_gemm_config_t c;
      CHECK_OK(hg_gemm_heuristic(&p, 132, &c));
      /* 192 columns on a 1x2 cluster (2x1 spilled), except fp8's promotion tiles (2x1: no
       * spill, checked here) */
      if (c.tile_n == 192 && !hg_gemm_promote(&p)) CHECK(c.cluster_m == 1);
      CHECK_OK(hg_gemm_config_check(&p, &c));
      check_generates(&p, &c);
      /* fp8 D with its amax beside the widest promotion tiles spilled: not chosen */
      if (t == 1) {
        p.d_type = HG_E4M3;
        p.amax = true;
        CHECK_OK(hg_gemm_heuristic(&p, 132, &c));
        CHECK(c.tile_n != 192);
        check_generates(&p, &c);
      }
    }
  /* 112-column tiles: only 64-row ones under fp8's promotion, where 128 columns leave a
   * partial wave (e4m3 Mx28672x4096: 256 tiles of 112 on 132 SMs against 224 of 128) */
  for (int m = 1; m <= 64; m *= 4) {
    hg_gemm_problem_t p = problem(m, 28672, 4096, HG_E4M3);
    hg_gemm_config_t c;
    CHECK_OK(hg_gemm_heuristic(&p, 132, &c));
    CHECK(c.tile_m == 64 && c.tile_n == 112);
    check_generates(&p, &c);
    p.a_type = p.b_type = HG_BF16; /* one wave of 224 columns */
    CHECK_OK(hg_gemm_heuristic(&p, 132, &c));
    CHECK(c.tile_n == 224);
  }
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    hg_gemm_problem_t p = problem(shapes[i][0], shapes[i][1], shapes[i][2], HG_BF16);
    hg_gemm_config_t c;
    CHECK_OK(hg_gemm_heuristic(&p, 132, &c));
    CHECK(c.tile_n != 112);
  }
  /* one 64-row tile of a long K streams the weights: 64 x 128 tiles without a cluster, for
   * bf16 and fp8 (block-wise scales keep the model's choice) */
  const hg_dtype_t sw[] = {HG_BF16, HG_E4M3};
  for (int t = 0; t < 2; t++)
    for (int m = 32; m <= 64; m += 16) {
      hg_gemm_problem_t p = problem(m, 7168, 16384, sw[t]);
      hg_gemm_config_t c;
      CHECK_OK(hg_gemm_heuristic(&p, 132, &c));
      CHECK(c.tile_m == 64 && c.tile_n == 128 && c.cluster_m == 1 && c.cluster_n == 1);
      check_generates(&p, &c);
    }
}

/* The tuner's space (hg_gemm_tune): tiles x clusters x schedules at the most stages that
 * fit, for bf16 and fp8; plus every layout and output type on one configuration. */
/* Split-K (config ",kS"): the text form, the limits' sentences, and every mainloop, schedule,
 * cluster and type with it through ptxas (no spill); the kernel carries the arrival counter
 * (fence, atomic add) and the partial stores, and names its split count. */
/* Two swizzle spans a stage row (16-bit K-major operands by TMA, tile K 128): the layout
 * algebra lays each stage out as two 128-byte atoms along K, so each operand's TMA plan loads
 * two boxes a stage and the k-block holds eight k16 MMAs; ptxas takes it without a spill in
 * the schedules and paths it combines with; the other paths refuse it with a sentence. */
static void test_two_spans(void) {
  static const struct {
    const char *cfg;
    int64_t m, n, k;
    hg_dtype_t t;
    const char *epi;
  } ok[] = {{"64x128x128,c1x1,s4", 1, 16384, 16384, HG_BF16, NULL},
            {"64x128x128,c1x1,s4,k4a", 8, 4096, 28672, HG_BF16, NULL},
            {"128x128x128,c2x1,s3", 4096, 4096, 4096, HG_F16, NULL},
            {"128x128x128,c1x1,s3,pp", 4096, 4096, 4096, HG_BF16, "bias,gelu"},
            {"128x128x128,c1x1,s3,sk", 1000, 1000, 4000, HG_BF16, NULL},
            {"64x128x128,c1x1,s4,k3", 100, 300, 30000, HG_BF16, NULL}};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    hg_gemm_problem_t p = problem(ok[i].m, ok[i].n, ok[i].k, ok[i].t);
    p.bias_type = HG_BF16;
    if (ok[i].epi) CHECK_OK(hg_gemm_epilogue_parse(ok[i].epi, &p));
    CHECK_OK(hg_gemm_problem_normalize(&p));
    hg_gemm_config_t c;
    CHECK_OK(hg_gemm_config_parse(ok[i].cfg, &c));
    CHECK_OK(hg_gemm_config_check(&p, &c));
    check_generates(&p, &c);
  }
  /* the loads and MMAs of a k-block: two boxes per operand, eight k16 MMAs per consumer */
  hg_gemm_problem_t p = problem(1, 16384, 16384, HG_BF16);
  CHECK_OK(hg_gemm_problem_normalize(&p));
  hg_gemm_config_t c;
  hg_gemm_kernel_t k;
  for (int two = 0; two < 2; two++) {
    CHECK_OK(hg_gemm_config_parse(two ? "64x128x128,c1x1,s4" : "64x128x64,c1x1,s8", &c));
    CHECK_OK(hg_gemm_generate(&p, &c, HG_BACKEND_PTX, &k));
    int loads = 0, mmas = 0;
    for (const char *at = k.k.ptx.data; (at = strstr(at, "mbarrier::complete_tx::bytes [")); at++)
      loads++;
    for (const char *at = k.k.ptx.data; (at = strstr(at, "wgmma.mma_async.sync")); at++) mmas++;
    CHECK_EQ(loads, two ? 4 : 2);
    CHECK_EQ(mmas, two ? 8 : 4);
    hg_gemm_kernel_free(&k);
  }
  /* refusals: MN-major operands, fp8, other mainloops, operands by cp.async */
  CHECK_OK(hg_gemm_config_parse("64x128x128,c1x1,s4", &c));
  hg_gemm_problem_t q = p;
  q.b_k_major = false;
  CHECK_OK(hg_gemm_problem_normalize(&q));
  CHECK_ERR(hg_gemm_config_check(&q, &c), HG_ERR_UNSUPPORTED, "an MN-major operand");
  c.mainloop = HG_MAINLOOP_TMA_MMASYNC;
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_UNSUPPORTED, "mainloop not tma-wgmma");
  c.mainloop = HG_MAINLOOP_CPASYNC_WGMMA;
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_UNSUPPORTED, "an operand by cp.async");
  q = problem(1, 16384, 16384, HG_E4M3);
  CHECK_OK(hg_gemm_problem_normalize(&q));
  CHECK_OK(hg_gemm_config_parse("64x128x256,c1x1,s4", &c));
  CHECK_ERR(hg_gemm_config_check(&q, &c), HG_ERR_UNSUPPORTED, "8-bit operands");
  CHECK_OK(hg_gemm_config_parse("64x128x192,c1x1,s4", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "two spans: tile K 128");
}

/* The heuristic splits K only when the output has few tiles: one wave of units, 512 of K or
 * more per split, 64x64 tiles where 64x128 ones would split K into pieces of 1024 or less
 * (128x128x32768: 64x64 in 33 splits, not 64x128 in 64; 128x384x24576: 64x64 in 11, not
 * 128x128 in 24); batch invariance takes the same configuration for every M and never
 * splits. */
static void test_split_heuristic(void) {
  static const struct {
    int64_t m, n, k;
    int splits, tile_m;
  } cases[] = {{128, 128, 32768, 33, 64},
               {512, 512, 16384, 8, 128},
               {64, 1024, 65536, 16, 64},
               {192, 320, 40000, 8, 64},
               {8, 4096, 28672, 4, 64},
               {1, 7168, 2048, 0, 0},
               {4096, 4096, 4096, 0, 0},
               {128, 128, 1024, 2, 64},
               {128, 128, 512, 0, 0},
               {128, 384, 24576, 11, 64},
               {96, 200, 50000, 48, 128},
               {8, 2048, 7168, 8, 64},
               /* short splits where 64 x 64 tiles give a third of the SMs a tile: unsplit */
               {32, 4096, 4096, 0, 64},
               {64, 3072, 3072, 0, 64},
               {24, 4096, 1024, 0, 64},
               {32, 2048, 7168, 4, 64},
               {16, 4096, 4096, 4, 64},
               {32, 4096, 8192, 4, 64}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hg_gemm_problem_t p = problem(cases[i].m, cases[i].n, cases[i].k, HG_BF16);
    hg_gemm_config_t c;
    /* TMA's split rule (AUTO takes the decode kernel for M <= 16 and weights of 64 MB or
     * less: test_decode) */
    CHECK_OK(hg_gemm_heuristic_for(&p, HG_MAINLOOP_TMA_WGMMA, 132, NULL, &c));
    /* 192 columns on a 1x2 cluster (2x1 spilled), except fp8's promotion tiles */
    if (c.tile_n == 192 && !hg_gemm_promote(&p)) CHECK(c.cluster_m == 1);
    const int got = c.splits > 1 ? c.splits : 0;
    if (got != cases[i].splits)
      HG_FAIL("%" PRId64 "x%" PRId64 "x%" PRId64 ": %d splits, expected %d", cases[i].m, cases[i].n,
              cases[i].k, got, cases[i].splits);
    if (cases[i].tile_m) CHECK_EQ(c.tile_m, cases[i].tile_m);
    if (cases[i].m >= 24 && cases[i].m <= 64 && cases[i].n >= 3072 && cases[i].k <= 4096)
      CHECK_EQ(c.tile_n, 64);
  }
  /* a deterministic problem keeps the pass's tiles (64 x 64 is for atomic adds) */
  hg_gemm_problem_t p = problem(128, 128, 32768, HG_BF16);
  hg_gemm_config_t c, first;
  p.deterministic = true;
  CHECK_OK(hg_gemm_heuristic(&p, 132, &c));
  CHECK(c.tile_m == 64 && c.tile_n == 128 && c.splits == 64 && !c.split_atomic);
  p.deterministic = false;
  CHECK_OK(hg_gemm_heuristic(&p, 132, &c));
  CHECK(c.tile_m == 64 && c.tile_n == 64 && c.splits == 33 && c.split_atomic);
  /* fewer SMs, fewer units: 128x128x32768 on 66 SMs takes one wave of at least half of them
   * (one 128x128 tile in 64 splits) */
  CHECK_OK(hg_gemm_heuristic(&p, 66, &c));
  const int64_t units66 = (128 / c.tile_m) * (128 / c.tile_n) * c.splits;
  if (units66 > 66 || units66 < 33)
    HG_FAIL("128x128x32768 on 66 SMs: %dx%d tiles in %d splits", c.tile_m, c.tile_n, c.splits);
  /* decode against a wide weight: 16-bit tiles of at least 128 columns up to M = 32 */
  static const int64_t dm[] = {1, 2, 8, 24, 32};
  for (size_t i = 0; i < sizeof dm / sizeof dm[0]; i++) {
    p = problem(dm[i], 7168, 2048, HG_BF16);
    CHECK_OK(hg_gemm_heuristic_for(&p, HG_MAINLOOP_TMA_WGMMA, 132, NULL, &c));
    /* 192 columns on a 1x2 cluster (2x1 spilled), except fp8's promotion tiles */
    if (c.tile_n == 192 && !hg_gemm_promote(&p)) CHECK(c.cluster_m == 1);
    if (c.tile_n < 128) HG_FAIL("%" PRId64 "x7168x2048 bf16: tile_n %d", dm[i], c.tile_n);
  }
  static const int64_t ms[] = {1, 7, 64, 100, 1000, 4096, 20000};
  for (int n = 0; n < 2; n++)
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
      p = problem(ms[i], n ? 7168 : 128, n ? 2048 : 32768, HG_BF16);
      p.batch_invariant = true;
      CHECK_OK(hg_gemm_heuristic(&p, 132, &c));
      /* 192 columns on a 1x2 cluster (2x1 spilled), except fp8's promotion tiles */
      if (c.tile_n == 192 && !hg_gemm_promote(&p)) CHECK(c.cluster_m == 1);
      CHECK(c.splits <= 1);
      if (i == 0) first = c;
      char x[128], y[128];
      hg_gemm_config_print(&c, x, sizeof x);
      hg_gemm_config_print(&first, y, sizeof y);
      if (strcmp(x, y) != 0) HG_FAIL("batch-invariant M = %" PRId64 ": %s, M = 1: %s", ms[i], x, y);
    }
  /* split-K past few tiles (split_k_wide): where it takes wide split tiles, and where the
   * measurements kept the wave model's choice (bench/RESULTS.md, twelfth session) */
  static const struct {
    int64_t m, n, k;
    hg_dtype_t t;
    int tile_n, splits; /* 0 splits: the rule leaves the problem alone */
  } wide[] = {
      {200, 2000, 16384, HG_BF16, 256, 8}, {200, 2000, 16384, HG_E4M3, 192, 6},
      {300, 3000, 8192, HG_BF16, 256, 3},  {768, 768, 12288, HG_BF16, 256, 7},
      {384, 1536, 8192, HG_BF16, 256, 7},  {384, 1536, 8192, HG_E4M3, 0, 0},
      {1024, 1024, 8192, HG_BF16, 0, 0},   {512, 2048, 8192, HG_BF16, 0, 0},
      {128, 4096, 8192, HG_BF16, 0, 0},    {128, 7168, 16384, HG_BF16, 0, 0},
      {3000, 200, 16384, HG_BF16, 224, 5}, {3000, 200, 16384, HG_E4M3, 0, 0},
      {2048, 2048, 8192, HG_BF16, 0, 0},   {200, 2000, 2048, HG_BF16, 0, 0},
  };
  for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++) {
    p = problem(wide[i].m, wide[i].n, wide[i].k, wide[i].t);
    CHECK_OK(hg_gemm_heuristic(&p, 132, &c));
    const int got = c.splits > 1 ? c.splits : 0;
    if (got != wide[i].splits ||
        (wide[i].splits && (c.tile_m != 128 || c.tile_n != wide[i].tile_n)))
      HG_FAIL("%" PRId64 "x%" PRId64 "x%" PRId64 " %s: %dx%d in %d splits, expected 128x%d in %d",
              wide[i].m, wide[i].n, wide[i].k, hg_dtype_name(wide[i].t), c.tile_m, c.tile_n, got,
              wide[i].tile_n, wide[i].splits);
  }
  /* a wave of 128 x 128 tiles over 0.9 of the SMs takes 2-CTA clusters (nocw: not), not
   * where the pairs would need a second wave (5 rows of 128 x 128 tiles: 6 x 25 > 132), nor
   * for tiles of other widths (2048^3: 128 tiles of 128 x 256) */
  hg_gemm_rules_t r = {.no_cluster_wave = true};
  p = problem(400, 4000, 4096, HG_BF16);
  CHECK_OK(hg_gemm_heuristic(&p, 132, &c));
  CHECK(c.tile_m == 128 && c.tile_n == 128 && c.cluster_m == 2 && c.cluster_n == 1);
  CHECK_OK(hg_gemm_heuristic_rules(&p, 132, &r, &c));
  CHECK(c.tile_m == 128 && c.tile_n == 128 && c.cluster_m * c.cluster_n == 1);
  p = problem(1000, 2000, 6000, HG_E4M3);
  CHECK_OK(hg_gemm_heuristic(&p, 132, &c));
  CHECK(c.tile_m == 128 && c.tile_n == 128 && c.cluster_m == 2 && c.cluster_n == 1);
  p = problem(2048, 2048, 2048, HG_BF16);
  CHECK_OK(hg_gemm_heuristic(&p, 132, &c));
  CHECK(c.tile_n == 256 && c.cluster_m * c.cluster_n == 1);
  p = problem(1024, 1024, 8192, HG_BF16);
  CHECK_OK(hg_gemm_heuristic(&p, 132, &c));
  CHECK(c.cluster_m * c.cluster_n == 1);
  /* SM counts past any GPU's are refused (the fuzzer's 1819129269 overflowed the decode
   * rule's 2 x SMs in int); the largest allowed runs the wave model and the decode rule */
  p = problem(1, 7168, 2048, HG_BF16);
  CHECK_ERR(hg_gemm_heuristic(&p, 1819129269, &c), HG_ERR_INVALID, "SM count");
  CHECK_ERR(hg_gemm_decode_heuristic(&p, HG_GEMM_MAX_SMS + 1, &c), HG_ERR_INVALID, "SM count");
  CHECK_OK(hg_gemm_heuristic(&p, HG_GEMM_MAX_SMS, &c));
  CHECK_OK(hg_gemm_decode_heuristic(&p, HG_GEMM_MAX_SMS, &c));
  p = problem(200, 2000, 16384, HG_BF16);
  CHECK_OK(hg_gemm_heuristic(&p, HG_GEMM_MAX_SMS, &c));
  /* one column of tiles splits at the narrowest width that covers N (nokcol: not) */
  p = problem(3000, 200, 16384, HG_BF16);
  CHECK_OK(hg_gemm_heuristic(&p, 132, &c));
  CHECK(c.tile_m == 128 && c.tile_n == 224 && c.splits == 5);
  p = problem(3000, 120, 16384, HG_BF16);
  CHECK_OK(hg_gemm_heuristic(&p, 132, &c));
  CHECK(c.tile_m == 128 && c.tile_n == 128 && c.splits > 1);
  r = (hg_gemm_rules_t){.no_split_column = true};
  p = problem(3000, 200, 16384, HG_BF16);
  CHECK_OK(hg_gemm_heuristic_rules(&p, 132, &r, &c));
  CHECK(c.tile_m == 128 && c.tile_n == 64 && c.splits <= 1);
}

static void test_split_k(void) {
  hg_gemm_config_t c;
  char buf[128];
  CHECK_OK(hg_gemm_config_parse("128x128x64,k4", &c));
  CHECK_EQ(c.splits, 4);
  hg_gemm_config_print(&c, buf, sizeof buf);
  CHECK(strstr(buf, ",k4") != NULL);
  CHECK_OK(hg_gemm_config_parse("128x128x64", &c));
  hg_gemm_config_print(&c, buf, sizeof buf);
  CHECK(strstr(buf, ",k") == NULL);
  CHECK_ERR(hg_gemm_config_parse("128x128x64,k4,k2", &c), HG_ERR_PARSE, "split-K count twice");
  CHECK_ERR(hg_gemm_config_parse("128x128x64,k4x", &c), HG_ERR_PARSE, "unknown field 'k4x'");
  hg_gemm_problem_t p = problem(256, 512, 32768, HG_BF16);
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_OK(hg_gemm_config_parse("128x128x64,k65", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "split-K into 65 ranges");
  static const char *const cfgs[] = {"128x128x64,k4",
                                     "128x128x64,pp,k4",
                                     "128x256x64,c2x1,k8",
                                     "64x128x64,c1x2,k3",
                                     "128x128x64,pp,k2,tma-mmasync",
                                     "128x192x64,k5,tma-ldmatrix-wgmma-rs",
                                     "128x128x64,k64,cpasync-wgmma"};
  for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
    CHECK_OK(hg_gemm_config_parse(cfgs[i], &c));
    check_generates(&p, &c);
    hg_gemm_kernel_t k;
    hg_status_t st = hg_gemm_generate(&p, &c, HG_BACKEND_PTX, &k);
    if (!hg_is_ok(&st)) continue; /* check_generates said why */
    /* partial tiles stored with 16-byte stores, no arrival counters; the reduction pass is a
     * second entry of the module with its grid's second dimension */
    CHECK(strstr(k.k.ptx.data, "atom.global") == NULL);
    CHECK(strstr(k.k.ptx.data, "st.global.v4.f32") != NULL);
    CHECK(strstr(k.k.ptx.data, "ld.global.v4.f32") != NULL);
    snprintf(buf, sizeof buf, "_k%d", c.splits);
    CHECK(strstr(k.k.name, buf) != NULL);
    CHECK(!strncmp(k.reduce_name, "hg_gred_", 8) && strstr(k.reduce_name, buf) != NULL);
    snprintf(buf, sizeof buf, ".visible .entry %s(", k.reduce_name);
    CHECK(strstr(k.k.ptx.data, buf) != NULL);
    CHECK(k.reduce_groups >= 1 && k.reduce_groups <= 16);
    CHECK(k.reduce_threads == 128 || k.reduce_threads == 256);
    CHECK(strstr(k.k.ptx.data, "%ctaid.y") != NULL);
    hg_gemm_kernel_free(&k);
  }
  /* operands read in place (K odd: staged window copies), fp8, f32 output */
  hg_gemm_problem_t q = problem(300, 200, 40001, HG_BF16);
  q.d_type = HG_F32;
  CHECK_OK(hg_gemm_problem_normalize(&q));
  CHECK_OK(hg_gemm_config_parse("128x128x64,s3,k7,cpasync-wgmma", &c));
  check_generates(&q, &c);
  q = problem(128, 7168, 16384, HG_E4M3);
  q.fp8_accum = HG_FP8_ACCUM_FAST;
  CHECK_OK(hg_gemm_problem_normalize(&q));
  CHECK_OK(hg_gemm_config_parse("128x256x128,c2x1,k6", &c));
  check_generates(&q, &c);
  /* accurate accumulation: each split promotes its own k-blocks */
  q.fp8_accum = HG_FP8_ACCUM_ACCURATE;
  CHECK_OK(hg_gemm_problem_normalize(&q));
  CHECK_OK(hg_gemm_config_parse("128x128x128,c2x1,k6", &c));
  check_generates(&q, &c);
}

/* Split-K reduced in the GEMM (",kSr"): text form and refusals; every wgmma mainloop,
 * cluster, batch, fp8 and epilogue chains through ptxas with 0 spills; one entry, the
 * partials' 16-byte stores and loads, the arrival (fence, atomic add, spin, departure) and
 * no atomic reductions into the slots. */
static void test_split_scatter(void) {
  hg_gemm_config_t c;
  char buf[128];
  CHECK_OK(hg_gemm_config_parse("128x128x64,k8r", &c));
  CHECK(c.splits == 8 && c.split_scatter == 1 && c.split_atomic == 0);
  hg_gemm_config_print(&c, buf, sizeof buf);
  CHECK(strstr(buf, ",k8r") != NULL);
  hg_gemm_config_t back;
  CHECK_OK(hg_gemm_config_parse(buf, &back));
  CHECK(back.split_scatter == 1 && back.splits == 8);
  CHECK_ERR(hg_gemm_config_parse("128x128x64,k8r,k4", &c), HG_ERR_PARSE, "split-K count twice");
  CHECK_ERR(hg_gemm_config_parse("128x128x64,k8ra", &c), HG_ERR_PARSE, "unknown field");
  hg_gemm_problem_t p = problem(512, 512, 16384, HG_BF16);
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_OK(hg_gemm_config_parse("128x128x64,k8r", &c));
  c.split_atomic = 1;
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "give one of ,k8a and ,k8r");
  CHECK_OK(hg_gemm_config_parse("128x128x64,pp,k8r", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_UNSUPPORTED, "ping-pong");
  CHECK_OK(hg_gemm_config_parse("128x128x64,k8r,tma-mmasync", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_UNSUPPORTED, "wgmma mainloops");
  CHECK_OK(hg_gemm_config_parse("128x128x64,k8r", &c));
  c.split_scatter = 2;
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "split_scatter = 2");
  c.split_scatter = 1;
  c.splits = 1;
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "without a split");
  /* deterministic problems take it (split order, whoever arrives last) */
  hg_gemm_problem_t det = p;
  det.deterministic = true;
  CHECK_OK(hg_gemm_config_parse("128x128x64,k8r", &c));
  CHECK_OK(hg_gemm_config_check(&det, &c));
  static const struct {
    const char *cfg;
    int64_t m, n, k;
    int batch;
    hg_dtype_t t, d;
    const char *chain;
  } cases[] = {{"128x128x64,k8r", 512, 512, 16384, 1, HG_BF16, HG_BF16, "none"},
               {"64x64x64,k8r", 192, 320, 40000, 1, HG_BF16, HG_BF16, "none"},
               {"128x256x64,c2x1,k4r", 300, 700, 9000, 1, HG_BF16, HG_F32, "bias,gelu"},
               {"64x128x64,c1x2,k3r", 200, 136, 30000, 3, HG_F16, HG_F16, "none"},
               {"128x128x64,s3,k7r,cpasync-wgmma", 300, 200, 40001, 1, HG_BF16, HG_F32, "none"},
               {"128x128x128,c2x1,k6r", 128, 7168, 16384, 1, HG_E4M3, HG_BF16, "bias,relu"},
               {"128x128x64,k64r", 128, 128, 32768, 1, HG_BF16, HG_BF16, "none"},
               {"64x64x128,k5r", 100, 300, 30000, 1, HG_E4M3, HG_E4M3, "none"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hg_gemm_problem_t q = problem(cases[i].m, cases[i].n, cases[i].k, cases[i].t);
    q.batch = cases[i].batch;
    q.d_type = cases[i].d;
    if (cases[i].d == HG_E4M3) q.amax = true;
    CHECK_OK(hg_gemm_epilogue_parse(cases[i].chain, &q));
    q.bias_type = HG_BF16;
    CHECK_OK(hg_gemm_problem_normalize(&q));
    CHECK_OK(hg_gemm_config_parse(cases[i].cfg, &c));
    check_generates(&q, &c);
    hg_gemm_kernel_t k;
    hg_status_t st = hg_gemm_generate(&q, &c, HG_BACKEND_PTX, &k);
    if (!hg_is_ok(&st)) continue; /* check_generates said why */
    const char *ptx = k.k.ptx.data;
    int entries = 0;
    for (const char *e = ptx; (e = strstr(e, ".entry ")); e++) entries++;
    CHECK_EQ(entries, 1);
    CHECK(k.reduce_name[0] == '\0');
    CHECK(strstr(ptx, "st.global.v4.f32") != NULL && strstr(ptx, "ld.global.v4.f32") != NULL);
    CHECK(strstr(ptx, "fence.acq_rel.gpu") != NULL);
    CHECK(strstr(ptx, "atom.global.add.u32") != NULL);
    CHECK(strstr(ptx, "red.global.add") == NULL || q.amax);
    snprintf(buf, sizeof buf, "_k%dr", c.splits);
    CHECK(strstr(k.k.name, buf) != NULL);
    hg_gemm_kernel_free(&k);
  }
  CHECK_EQ(hg_splitk_scatter_group_chunks(64, 8), 2);
  CHECK_EQ(hg_splitk_scatter_group_chunks(64, 2), 4);
  CHECK_EQ(hg_splitk_scatter_group_chunks(64, 16), 1);
  CHECK_EQ(hg_splitk_scatter_group_chunks(32, 64), 1);
  CHECK_EQ(hg_splitk_scatter_counter_bytes(1), 256);
  CHECK_EQ(hg_splitk_scatter_counter_bytes(65), 512);
}

/* Stream-K (config ",sk"): the text form and its refusals (with split-K, batch-invariant and
 * grouped problems), and every mainloop, schedule, cluster, fp8 accumulation and an epilogue
 * chain through ptxas, 0 spills: the fix-up's release (fence, atomic add), its spin (atomic
 * reads, fence, the flag reset) and the partials' 16-byte stores and loads are in the PTX, in
 * the one kernel (no reduction pass). */
static void test_stream_k(void) {
  hg_gemm_config_t c;
  char buf[128];
  CHECK_OK(hg_gemm_config_parse("128x128x64,pp,sk", &c));
  CHECK_EQ(c.stream_k, 1);
  hg_gemm_config_print(&c, buf, sizeof buf);
  CHECK(strstr(buf, ",sk") != NULL);
  CHECK_ERR(hg_gemm_config_parse("128x128x64,sk,sk", &c), HG_ERR_PARSE, "stream-K twice");
  CHECK_ERR(hg_gemm_config_parse("128x128x64,sk2", &c), HG_ERR_PARSE, "stage count");
  hg_gemm_problem_t p = problem(2500, 3500, 1000, HG_BF16);
  p.beta = 0.5f;
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_OK(hg_gemm_config_parse("128x128x64,k4,sk", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "stream-K with split-K (4)");
  c.splits = 0;
  c.stream_k = 2;
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "stream_k = 2");
  hg_gemm_problem_t bi = p;
  bi.batch_invariant = true;
  CHECK_OK(hg_gemm_config_parse("128x128x64,sk", &c));
  CHECK_ERR(hg_gemm_config_check(&bi, &c), HG_ERR_INVALID, "batch-invariant");
  /* the heuristic's rule: off by default; with the rule sk, a partial last wave of few waves
   * (2500x3500x1000: 140 cluster tiles on 66 clusters) takes stream-K, many waves (8192^3: 32
   * of them) and a batch-invariant problem do not; the environment changes nothing */
  hg_gemm_config_t h;
  CHECK_OK(hg_gemm_heuristic(&p, 132, &h));
  CHECK_EQ(h.stream_k, 0);
  setenv("HOPGEN_STREAM_K", "auto", 1); /* the variable this rule replaced: ignored */
  CHECK_OK(hg_gemm_heuristic(&p, 132, &h));
  CHECK_EQ(h.stream_k, 0);
  unsetenv("HOPGEN_STREAM_K");
  hg_gemm_rules_t sk;
  CHECK_OK(hg_gemm_rules_parse("sk", &sk));
  CHECK(sk.stream_k && !sk.epi_pingpong && !sk.global_scales && !sk.mma_turns);
  CHECK_OK(hg_gemm_heuristic_rules(&p, 132, &sk, &h));
  CHECK(h.stream_k == 1 && h.tile_m >= 128 && h.splits <= 1);
  hg_gemm_problem_t big = problem(8192, 8192, 8192, HG_BF16);
  CHECK_OK(hg_gemm_heuristic_rules(&big, 132, &sk, &h));
  CHECK_EQ(h.stream_k, 0);
  CHECK_OK(hg_gemm_heuristic_rules(&bi, 132, &sk, &h));
  CHECK_EQ(h.stream_k, 0);
  hg_gemm_problem_t few = problem(128, 128, 32768, HG_BF16); /* split-K's */
  CHECK_OK(hg_gemm_heuristic_rules(&few, 132, &sk, &h));
  CHECK(h.stream_k == 0 && h.splits > 1);
  /* hg_gemm_config_choose: hg_gemm_build's choice (no device: the heuristic), under rules */
  hg_gemm_config_t chosen, plain;
  CHECK_OK(hg_gemm_config_choose(&p, HG_MAINLOOP_AUTO, NULL, &sk, &chosen));
  CHECK_OK(hg_gemm_heuristic_rules(&p, 132, &sk, &h));
  CHECK(!memcmp(&chosen, &h, sizeof h));
  CHECK_OK(hg_gemm_config_choose(&p, HG_MAINLOOP_AUTO, NULL, NULL, &chosen));
  CHECK_OK(hg_gemm_heuristic(&p, 132, &plain));
  CHECK(!memcmp(&chosen, &plain, sizeof plain) && chosen.stream_k == 0);
  hg_gemm_kernel_t k;
  CHECK_OK(hg_gemm_build(&bi, NULL, HG_MAINLOOP_AUTO, NULL, HG_BACKEND_PTX, &k));
  CHECK_EQ(k.config.stream_k, 0);
  hg_gemm_kernel_free(&k);
  static const struct {
    const char *cfg;
    hg_dtype_t t;
    int64_t m, n, k;
    bool fast, epi;
  } cases[] = {
      {"128x256x64,sk", HG_BF16, 2500, 3500, 1000, false, false},
      {"128x128x64,pp,sk", HG_BF16, 1536, 6000, 900, false, true},
      {"128x256x64,c2x1,sk", HG_BF16, 3300, 3300, 3328, false, false},
      {"64x128x64,sk", HG_BF16, 127, 1000, 4096, false, true},
      {"128x128x64,sk,tma-mmasync", HG_BF16, 1000, 1000, 4096, false, false},
      {"128x192x64,sk,tma-ldmatrix-wgmma-rs", HG_BF16, 1000, 1000, 4096, false, false},
      {"128x128x64,s3,sk,cpasync-wgmma", HG_BF16, 1001, 999, 4097, false, true},
      {"128x128x128,c2x1,sk", HG_E4M3, 3300, 3300, 3328, false, true},
      {"128x256x128,sk", HG_E4M3, 2500, 3500, 1024, true, false},
      {"64x128x128,pp,sk", HG_E4M3, 7, 4097, 8192, false, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hg_gemm_problem_t q = problem(cases[i].m, cases[i].n, cases[i].k, cases[i].t);
    q.beta = 0.5f;
    if (cases[i].fast) q.fp8_accum = HG_FP8_ACCUM_FAST;
    if (cases[i].epi) {
      q.bias = HG_BIAS_N;
      q.bias_type = HG_BF16;
      q.act = HG_ACT_GELU;
    }
    CHECK_OK(hg_gemm_problem_normalize(&q));
    CHECK_OK(hg_gemm_config_parse(cases[i].cfg, &c));
    check_generates(&q, &c);
    hg_status_t st = hg_gemm_generate(&q, &c, HG_BACKEND_PTX, &k);
    if (!hg_is_ok(&st)) continue; /* check_generates said why */
    const char *ptx = k.k.ptx.data;
    CHECK(strstr(k.k.name, "_sk") != NULL);
    CHECK(strstr(ptx, "fence.acq_rel.gpu;") != NULL);
    CHECK(strstr(ptx, "atom.global.add.u32") != NULL);
    CHECK(strstr(ptx, "st.global.v4.f32") != NULL && strstr(ptx, "ld.global.v4.f32") != NULL);
    CHECK(strstr(ptx, "hg_gred_") == NULL && k.reduce_name[0] == '\0');
    /* every case through ptxas (check_generates samples): no spill, setmaxnreg kept */
    hg_ptxas_report_t r;
    st = hg_ptxas_check(ptx, &r);
    if (!hg_is_ok(&st)) HG_FAIL("%s: ptxas: %s", cases[i].cfg, st.msg);
    if (r.spill_store_bytes || r.spill_load_bytes || r.setmaxnreg_ignored)
      HG_FAIL("%s: %d B spilled%s", cases[i].cfg, r.spill_store_bytes + r.spill_load_bytes,
              r.setmaxnreg_ignored ? ", setmaxnreg ignored" : "");
    hg_gemm_kernel_free(&k);
  }
  /* the host side: the shared tiles and the grid (all resident, every range non-empty) */
  CHECK_OK(hg_gemm_config_parse("128x128x64,sk", &c));
  const hg_sched_spec_t ss = hg_gemm_sched_spec(&c);
  CHECK(ss.stream_k);
  CHECK_EQ(hg_sched_streamk_clusters(&ss, 128, 128, 1, 8, 132), 8); /* 1 tile x 8 k-blocks */
  CHECK_EQ(hg_sched_streamk_clusters(&ss, 4096, 4096, 1, 8, 132), 132);
  CHECK_EQ(hg_streamk_workspace_bytes(132, 128 * 128), 768 + (size_t)132 * 128 * 128 * 4);
}

/* The kernel cache by specification (gemm_cache.c): a second hg_gemm_build of the same
 * problem, configuration and backend is served whole from the cache (the same PTX and the
 * same plans, field for field) without planning or generating, several times faster; any
 * other input misses; a damaged entry is regenerated; the cache off caches nothing. */
static void test_spec_cache(void) {
  CHECK(hg_gemm_build_id() != NULL); /* the test binary is linked with a build id */
  char dir[] = "/tmp/hopgen-spec-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  setenv("HOPGEN_CACHE_DIR", dir, 1);
  hg_gemm_problem_t p = problem(1000, 3000, 776, HG_BF16);
  p.beta = 0.5f;
  hg_gemm_config_t c;
  CHECK_OK(hg_gemm_config_parse("128x128x64,c1x2,s5,pp,k3", &c));
  hg_gemm_kernel_t cold, warm, other;
  double t0 = hg_now_ms();
  CHECK_OK(hg_gemm_build(&p, &c, HG_MAINLOOP_AUTO, NULL, HG_BACKEND_PTX, &cold));
  const double cold_ms = hg_now_ms() - t0;
  CHECK(!cold.from_cache);
  /* the fastest of three lookups: one slow lookup on a loaded machine is not the cache's
   * cost (a single one failed the 3x bound once under a parallel build) */
  double warm_ms = 0;
  for (int i = 0; i < 3; i++) {
    if (i) hg_gemm_kernel_free(&warm);
    t0 = hg_now_ms();
    CHECK_OK(hg_gemm_build(&p, &c, HG_MAINLOOP_AUTO, NULL, HG_BACKEND_PTX, &warm));
    const double ms = hg_now_ms() - t0;
    if (i == 0 || ms < warm_ms) warm_ms = ms;
  }
  CHECK(warm.from_cache);
  CHECK(warm_ms * 3 < cold_ms);
  fprintf(stderr, "  hg_gemm_build: cold %.2f ms, from the cache %.3f ms\n", cold_ms, warm_ms);
  CHECK_EQ(warm.k.ptx.len, cold.k.ptx.len);
  CHECK(warm.k.ptx.data && !strcmp(warm.k.ptx.data, cold.k.ptx.data));
  CHECK(!strcmp(warm.k.name, cold.k.name));
  CHECK_EQ(warm.k.threads, cold.k.threads);
  CHECK_EQ(warm.k.smem_bytes, cold.k.smem_bytes);
  CHECK_EQ(warm.k.cluster[0], cold.k.cluster[0]);
  CHECK(!memcmp(&warm.plan_a, &cold.plan_a, sizeof cold.plan_a));
  CHECK(!memcmp(&warm.plan_b, &cold.plan_b, sizeof cold.plan_b));
  CHECK(!memcmp(&warm.plan_d, &cold.plan_d, sizeof cold.plan_d));
  CHECK(!memcmp(&warm.config, &cold.config, sizeof cold.config));
  CHECK_EQ(warm.problem.ldd, cold.problem.ldd);
  CHECK_EQ(warm.tma_store, cold.tma_store);
  hg_gemm_kernel_free(&warm);
  /* another leading dimension, another configuration, another backend's key: misses */
  hg_gemm_problem_t q = p;
  q.ldd = 3008;
  CHECK_OK(hg_gemm_build(&q, &c, HG_MAINLOOP_AUTO, NULL, HG_BACKEND_PTX, &other));
  CHECK(!other.from_cache);
  CHECK_EQ(other.problem.ldd, 3008);
  hg_gemm_kernel_free(&other);
  hg_gemm_config_t c2 = c;
  c2.splits = 4;
  CHECK_OK(hg_gemm_build(&p, &c2, HG_MAINLOOP_AUTO, NULL, HG_BACKEND_PTX, &other));
  CHECK(!other.from_cache);
  hg_gemm_kernel_free(&other);
  hg_gemm_spec_key_t k1, k2;
  hg_gemm_problem_t n = p;
  CHECK_OK(hg_gemm_problem_normalize(&n));
  CHECK(hg_gemm_spec_key(&n, &c, false, false, HG_BACKEND_PTX, &k1));
  CHECK(hg_gemm_spec_key(&n, &c, false, false, HG_BACKEND_MLIR, &k2));
  CHECK(memcmp(&k1.key.hash, &k2.key.hash, sizeof k1.key.hash) != 0);
  /* a damaged entry: not served, regenerated and stored again */
  char path[600];
  hg_cache_dir_t d;
  hg_cache_dir_at(&d, dir);
  hg_cache_entry_path(&d, "gemm-", &k1.key, ".kernel", path, sizeof path);
  FILE *f = fopen(path, "r+b");
  CHECK(f != NULL);
  if (f) {
    fseek(f, -16, SEEK_END);
    fputs("garbage garbage!", f);
    fclose(f);
  }
  CHECK_OK(hg_gemm_build(&p, &c, HG_MAINLOOP_AUTO, NULL, HG_BACKEND_PTX, &warm));
  CHECK(!warm.from_cache);
  hg_gemm_kernel_free(&warm);
  CHECK_OK(hg_gemm_build(&p, &c, HG_MAINLOOP_AUTO, NULL, HG_BACKEND_PTX, &warm));
  CHECK(warm.from_cache);
  hg_gemm_kernel_free(&warm);
  /* the repack decision travels with the kernel (K = 777: rows TMA cannot address) */
  q = p;
  q.k = 777;
  CHECK_OK(hg_gemm_build(&q, &c, HG_MAINLOOP_AUTO, NULL, HG_BACKEND_PTX, &other));
  CHECK(!other.from_cache && other.repack_a && other.repack_b);
  hg_gemm_kernel_free(&other);
  CHECK_OK(hg_gemm_build(&q, &c, HG_MAINLOOP_AUTO, NULL, HG_BACKEND_PTX, &other));
  CHECK(other.from_cache && other.repack_a && other.repack_b && other.problem.lda == 784);
  hg_gemm_kernel_free(&other);
  /* the cache off: nothing found, nothing stored */
  setenv("HOPGEN_CACHE_DIR", "off", 1);
  CHECK_OK(hg_gemm_build(&p, &c, HG_MAINLOOP_AUTO, NULL, HG_BACKEND_PTX, &warm));
  CHECK(!warm.from_cache);
  hg_gemm_kernel_free(&warm);
  hg_gemm_kernel_free(&cold);
  unsetenv("HOPGEN_CACHE_DIR");
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK_EQ(system(cmd), 0);
}

/* Activations in the epilogue (issue 12, first step): the text form and its refusals, the
 * host reference's formulas, the problem's rules, and every activation through ptxas with
 * the kernel named after it. */
static void test_activations(void) {
  hg_gemm_act_t a;
  float lo, hi;
  CHECK_OK(hg_gemm_act_parse("gelu_tanh", &a, &lo, &hi));
  CHECK_EQ(a, HG_ACT_GELU_TANH);
  CHECK_OK(hg_gemm_act_parse("clamp:-1.5:2", &a, &lo, &hi));
  CHECK(a == HG_ACT_CLAMP && lo == -1.5f && hi == 2.0f);
  CHECK_ERR(hg_gemm_act_parse("clamp:3:2", &a, &lo, &hi), HG_ERR_PARSE, "finite LO <= HI");
  CHECK_ERR(hg_gemm_act_parse("clamp:nan:2", &a, &lo, &hi), HG_ERR_PARSE, "finite LO <= HI");
  CHECK_ERR(hg_gemm_act_parse("clamp:1:2x", &a, &lo, &hi), HG_ERR_PARSE, "clamp:LO:HI");
  CHECK_ERR(hg_gemm_act_parse("swish", &a, &lo, &hi), HG_ERR_PARSE, "is not one of none, relu");
  CHECK(!strcmp(hg_gemm_act_name(HG_ACT_SILU), "silu"));
  /* the reference: known values */
  CHECK(fabs(hg_gemm_act_ref(HG_ACT_GELU, 1.0, 0, 0) - 0.8413447460685429) < 1e-12);
  CHECK(fabs(hg_gemm_act_ref(HG_ACT_GELU_TANH, 1.0, 0, 0) - 0.8411919906082768) < 1e-12);
  CHECK(fabs(hg_gemm_act_ref(HG_ACT_SILU, 2.0, 0, 0) - 1.7615941559557649) < 1e-12);
  CHECK(fabs(hg_gemm_act_ref(HG_ACT_SIGMOID, 0.0, 0, 0) - 0.5) < 1e-15);
  CHECK(hg_gemm_act_ref(HG_ACT_RELU, -3.0, 0, 0) == 0.0);
  CHECK(hg_gemm_act_ref(HG_ACT_CLAMP, 7.0, -1, 2) == 2.0);
  /* the problem's rules */
  hg_gemm_problem_t p = problem(1000, 1000, 1000, HG_BF16);
  p.act = HG_ACT_CLAMP;
  p.act_lo = 2;
  p.act_hi = 1;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_INVALID, "clamp to [2, 1]");
  p.act = (hg_gemm_act_t)42;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_INVALID, "activation 42 is not known");
  hg_gemm_config_t c;
  CHECK_OK(hg_gemm_config_parse("128x128x64,c1x1,s4", &c));
  for (int i = HG_ACT_RELU; i < HG_ACT_COUNT; i++) {
    p = problem(1000, 1000, 1000, i % 2 ? HG_BF16 : HG_E4M3);
    if (i % 2 == 0)
      CHECK_OK(hg_gemm_config_parse("128x128x128,c1x1,s4", &c));
    else
      CHECK_OK(hg_gemm_config_parse(i == 3 ? "128x128x64,pp" : "128x128x64,c1x1,s4", &c));
    p.act = (hg_gemm_act_t)i;
    p.act_lo = -1;
    p.act_hi = 1;
    CHECK_OK(hg_gemm_problem_normalize(&p));
    check_generates(&p, &c);
    hg_gemm_kernel_t k;
    hg_status_t st = hg_gemm_generate(&p, &c, HG_BACKEND_PTX, &k);
    if (!hg_is_ok(&st)) continue;
    CHECK(strstr(k.k.name, i == HG_ACT_CLAMP ? "_clamp" : hg_gemm_act_name(p.act)) != NULL);
    if (i == HG_ACT_GELU) CHECK(strstr(k.k.ptx.data, "ex2.approx.ftz.f32") != NULL);
    if (i == HG_ACT_GELU_TANH) CHECK(strstr(k.k.ptx.data, "tanh.approx.f32") != NULL);
    hg_gemm_kernel_free(&k);
  }
}

/* Bias vectors (issue 12): the chain text and its order rule, the problem's type rule, and
 * along N and M in every type, with and without an activation, bf16 and fp8, both schedules,
 * through ptxas with the kernel named after them. */
static void test_bias(void) {
  hg_gemm_problem_t p = problem(1000, 3000, 700, HG_BF16);
  CHECK_OK(hg_gemm_epilogue_parse("bias_m,gelu_tanh", &p));
  CHECK(p.bias == HG_BIAS_M && p.act == HG_ACT_GELU_TANH);
  CHECK_OK(hg_gemm_epilogue_parse("none", &p));
  CHECK(p.bias == HG_BIAS_NONE && p.act == HG_ACT_NONE);
  CHECK_OK(hg_gemm_epilogue_parse("rowscale,colscale,bias,silu,residual", &p));
  CHECK(p.rowscale && p.colscale && p.bias == HG_BIAS_N && p.act == HG_ACT_SILU && p.residual);
  CHECK_OK(hg_gemm_epilogue_parse("residual", &p));
  CHECK(!p.rowscale && !p.colscale && p.bias == HG_BIAS_NONE && p.residual);
  CHECK_ERR(hg_gemm_epilogue_parse("relu,bias", &p), HG_ERR_PARSE, "'bias' out of place");
  CHECK_ERR(hg_gemm_epilogue_parse("bias,bias_m", &p), HG_ERR_PARSE, "'bias_m' out of place");
  CHECK_ERR(hg_gemm_epilogue_parse("relu,gelu", &p), HG_ERR_PARSE, "'gelu' out of place");
  CHECK_ERR(hg_gemm_epilogue_parse("residual,colscale", &p), HG_ERR_PARSE, "out of place");
  CHECK_ERR(hg_gemm_epilogue_parse("bias,none", &p), HG_ERR_PARSE, "'none' stands alone");
  CHECK_ERR(hg_gemm_epilogue_parse("rowscale,none", &p), HG_ERR_PARSE, "'none' stands alone");
  CHECK_ERR(hg_gemm_epilogue_parse("bias,swish", &p), HG_ERR_PARSE, "is not one of");
  p = problem(1000, 3000, 700, HG_BF16);
  p.bias = HG_BIAS_N;
  p.bias_type = HG_E4M3;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_UNSUPPORTED, "a bias vector of e4m3");
  static const hg_dtype_t types[] = {HG_BF16, HG_F16, HG_F32};
  hg_gemm_config_t c;
  for (int i = 0; i < 6; i++) {
    const bool fp8 = i == 5;
    p = problem(1000, 3000, 704, fp8 ? HG_E4M3 : HG_BF16);
    p.bias = i % 2 ? HG_BIAS_M : HG_BIAS_N;
    p.bias_type = types[i % 3];
    p.act = i >= 3 ? HG_ACT_SILU : HG_ACT_NONE;
    p.rowscale = i == 1 || i == 4;
    p.colscale = i == 2 || i == 4;
    p.residual = i >= 2;
    CHECK_OK(hg_gemm_problem_normalize(&p));
    CHECK_OK(hg_gemm_config_parse(fp8      ? "128x192x128,c2x1,s4"
                                  : i == 2 ? "128x128x64,pp"
                                           : "128x256x64,c2x1,s4",
                                  &c));
    check_generates(&p, &c);
    hg_gemm_kernel_t k;
    hg_status_t st = hg_gemm_generate(&p, &c, HG_BACKEND_PTX, &k);
    if (!hg_is_ok(&st)) continue;
    char want[32];
    snprintf(want, sizeof want, "_bias%c%s", i % 2 ? 'm' : 'n', hg_dtype_name(p.bias_type));
    CHECK(strstr(k.k.name, want) != NULL);
    CHECK(strstr(k.k.ptx.data, "bias") != NULL); /* the parameter */
    CHECK((strstr(k.k.ptx.data, "residual") != NULL) == p.residual);
    CHECK((strstr(k.k.ptx.data, "rowscale") != NULL) == p.rowscale);
    hg_gemm_kernel_free(&k);
  }
  /* the longest chain: fp8's two scale pointers, alpha, beta * C and every step (9) */
  p = problem(513, 300, 4096, HG_E4M3);
  CHECK_OK(hg_gemm_epilogue_parse("rowscale,colscale,bias_m,clamp:-2:2,residual", &p));
  p.bias_type = HG_F16;
  p.beta = 0.5f;
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_OK(hg_gemm_config_parse("128x128x128,c1x1,s4,k3", &c));
  check_generates(&p, &c);
  /* the parameters in the order hg_gemm_op_run passes them: ..., scale_a, scale_b, rowscale,
   * colscale, bias, residual, workspace */
  hg_gemm_kernel_t k;
  hg_status_t st = hg_gemm_generate(&p, &c, HG_BACKEND_PTX, &k);
  CHECK_OK(st);
  if (hg_is_ok(&st)) {
    static const char *const order[] = {"_scale_a", "_scale_b",  "_rowscale", "_colscale",
                                        "_bias",    "_residual", "_workspace"};
    const char *at = strstr(k.k.ptx.data, ".entry");
    for (size_t i = 0; at && i < sizeof order / sizeof order[0]; i++) {
      const char *next = strstr(at, order[i]);
      if (!next) HG_FAIL("parameter %s missing or out of order", order[i] + 1);
      at = next;
    }
    hg_gemm_kernel_free(&k);
  }
}

/* Output conversions (issue 12): C in its own type, fp8 D with its scale, the amax and the aux
 * output - the problem's rules and defaults, the kernel's name and parameters, ptxas. */
static void test_output_conversions(void) {
  hg_gemm_problem_t p = problem(1000, 1000, 1000, HG_BF16);
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_EQ(p.c_type, HG_BF16); /* C has D's type by default */
  p = problem(1000, 1000, 1000, HG_BF16);
  p.d_type = HG_E4M3;
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_EQ(p.c_type, HG_BF16); /* fp8 D: C is bf16 by default */
  p = problem(1000, 1000, 1000, HG_BF16);
  p.c_type = HG_E5M2;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_UNSUPPORTED, "C of e5m2");
  p = problem(1000, 1000, 1000, HG_BF16);
  p.d_type = HG_S8;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_UNSUPPORTED, "e4m3 or e5m2");
  p = problem(1000, 1000, 1000, HG_BF16);
  p.aux = true;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_INVALID, "has no activation");
  p.act = HG_ACT_GELU;
  p.ldaux = 999;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_INVALID, "ldaux = 999 is below N = 1000");
  p.ldaux = 0;
  p.aux_type = HG_E4M3;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_UNSUPPORTED, "an aux output of e4m3");
  p.aux_type = (hg_dtype_t)0;
  p.d_type = HG_E5M2;
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_EQ(p.aux_type, HG_BF16);
  CHECK_EQ(p.ldaux, 1000);
  CHECK_EQ(p.batch_stride_aux, 1000 * 1000);
  /* fp8 D through TMA: sub-tiles of 64-byte rows (64 columns, as bf16's 128-byte ones),
   * or 128-byte ones when asked */
  hg_gemm_config_t c;
  CHECK_OK(hg_gemm_config_parse("128x128x64,c1x1,s4", &c));
  CHECK_EQ(hg_gemm_epi_n(&p, &c), 64);
  CHECK(hg_gemm_epi_swizzled(&p, 64));
  CHECK_OK(hg_gemm_config_parse("128x128x64,c1x1,s4,e128", &c));
  CHECK_OK(hg_gemm_config_check(&p, &c));
  /* the chains: fp8 A/B and bf16 A/B, fp8 and 16/32-bit D, C types, aux, amax, both schedules */
  static const struct {
    hg_dtype_t ab, d, c, aux_t;
    const char *chain, *config;
    bool aux, amax;
    float beta;
  } cases[] = {
      {HG_BF16, HG_E4M3, 0, 0, "none", "128x128x64,c1x1,s4", false, true, 0},
      {HG_BF16, HG_E5M2, HG_F32, 0, "bias,gelu", "128x256x64,c2x1,s4", true, true, 0.5f},
      /* fp8 operands: tiles whose two accumulator sets (accurate accumulation) fit */
      {HG_E4M3, HG_E4M3, HG_F16, HG_F32, "rowscale,bias,gelu_tanh,residual", "128x128x128,c2x1,s4",
       true, true, 0.5f},
      {HG_E4M3, HG_BF16, HG_F32, 0, "bias,relu", "64x128x128,c1x1,s4,pp", true, true, 1.0f},
      {HG_BF16, HG_F32, HG_BF16, HG_F16, "colscale,bias_m,silu,residual", "128x128x64,pp", true,
       false, 0.5f},
      {HG_F16, HG_F16, HG_F32, 0, "none", "128x256x64,c2x1,s4", false, true, 0.5f},
      {HG_BF16, HG_BF16, 0, 0, "clamp:-2:2", "128x128x64,c1x1,s4,k2", false, true, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0] + 2; i++) {
    /* the last two: the first two cases with D stored directly (N not a multiple of 16 B) */
    const size_t ci = i % (sizeof cases / sizeof cases[0]);
    p = problem(4096, i == ci ? 4096 : 4088, 4096, cases[ci].ab);
    p.d_type = cases[ci].d;
    p.c_type = cases[ci].c;
    p.aux_type = cases[ci].aux_t;
    p.aux = cases[ci].aux;
    p.amax = cases[ci].amax;
    p.beta = cases[ci].beta;
    CHECK_OK(hg_gemm_epilogue_parse(cases[ci].chain, &p));
    if (p.bias != HG_BIAS_NONE) p.bias_type = HG_BF16;
    CHECK_OK(hg_gemm_problem_normalize(&p));
    CHECK_OK(hg_gemm_config_parse(cases[ci].config, &c));
    check_generates(&p, &c);
    hg_gemm_kernel_t k;
    hg_status_t st = hg_gemm_generate(&p, &c, HG_BACKEND_PTX, &k);
    CHECK_OK(st);
    if (!hg_is_ok(&st)) continue;
    const bool fp8 = hg_dtype_bits(p.d_type) == 8;
    /* N = 4096: D goes through TMA, fp8 too (byte pairs into shared memory); N = 4088: an fp8
     * D's rows are not 16-byte multiples, so it is stored byte by byte */
    CHECK(k.tma_store == (i == ci));
    if (fp8) CHECK(strstr(k.k.ptx.data, k.tma_store ? "st.shared.u16" : "st.global.u8") != NULL);
    /* the name says what differs: D's type, C's when not D's, aux, amax */
    char want[32];
    snprintf(want, sizeof want, "_%s_", hg_dtype_name(p.d_type));
    CHECK(strstr(k.k.name, want) != NULL);
    if (p.c_type != p.d_type) {
      snprintf(want, sizeof want, "_c%s", hg_dtype_name(p.c_type));
      CHECK(strstr(k.k.name, want) != NULL);
    }
    CHECK((strstr(k.k.name, "_amax") != NULL) == p.amax);
    CHECK((strstr(k.k.name, "_aux") != NULL) == p.aux);
    /* the instructions: saturating fp8 conversions, the warp and global max reductions */
    CHECK((strstr(k.k.ptx.data, "cvt.rn.satfinite.e") != NULL) == fp8);
    CHECK((strstr(k.k.ptx.data, "redux.sync.max.u32") != NULL) == p.amax);
    CHECK((strstr(k.k.ptx.data, "red.global.max.u32") != NULL) == p.amax);
    /* the amax: the warpgroup's warps meet in shared memory, one thread puts the max into
     * the state and counts; the last warpgroup of the grid stores it and zeroes the state
     * (no memset before a launch) */
    if (p.amax) {
      static const char *const seq[] = {
          "redux.sync.max.u32",  "%smem_base",        "st.shared.u32",      "bar.sync",
          "ld.shared.v4.u32",    "%nctaid.y",         "red.global.max.u32", "fence.acq_rel.gpu",
          "atom.global.add.u32", "fence.acq_rel.gpu", "atom.global.add.u32"};
      const char *at = k.k.ptx.data;
      for (size_t j = 0; at && j < sizeof seq / sizeof seq[0]; j++) at = strstr(at, seq[j]);
      if (!at) HG_FAIL("case %zu: the amax's publication is not in its order", i);
      /* split-K by the reduction pass: the pass publishes it, the GEMM that stores the
       * partial tiles does not */
      const char *pass = strstr(k.k.ptx.data, ".entry hg_gred");
      if (c.splits > 1 && !c.split_atomic && !c.split_scatter) {
        const char *red = strstr(k.k.ptx.data, "red.global.max.u32");
        CHECK(pass && red && red > pass);
      }
    }
    /* the parameters in the order hg_gemm_op_run_args passes them */
    const char *order[9];
    int n = 0;
    if (p.residual) order[n++] = "hgp_residual,";
    if (fp8) order[n++] = "hgp_scale_d,";
    if (p.aux) {
      order[n++] = "hgp_aux,";
      order[n++] = "hgp_ldaux,";
      order[n++] = "hgp_batch_stride_aux";
    }
    if (p.amax) {
      order[n++] = "hgp_amax,";
      order[n++] = "hgp_amax_state";
    }
    if (c.splits > 1) order[n++] = "hgp_workspace";
    const char *at = strstr(k.k.ptx.data, ".entry");
    for (int j = 0; at && j < n; j++) {
      const char *next = strstr(at, order[j]);
      if (!next) HG_FAIL("case %zu: parameter %s missing or out of order", i, order[j] + 4);
      at = next;
    }
    hg_gemm_kernel_free(&k);
  }
}

/* A kernel of p and config cfg, ptxas-checked (no spills): its store paths. */
static bool gen_paths(const hg_gemm_problem_t *p_in, const char *cfg, hg_gemm_kernel_t *k) {
  hg_gemm_problem_t p = *p_in;
  hg_gemm_config_t c;
  CHECK_OK(hg_gemm_config_parse(cfg, &c));
  hg_status_t s = hg_gemm_problem_normalize(&p);
  if (hg_is_ok(&s)) s = hg_gemm_generate(&p, &c, HG_BACKEND_PTX, k);
  if (!hg_is_ok(&s)) {
    HG_FAIL("%s: %s", cfg, s.msg);
    return false;
  }
  hg_ptxas_report_t r;
  s = hg_ptxas_check(k->k.ptx.data, &r);
  if (!hg_is_ok(&s) && s.code != HG_ERR_TOOL) HG_FAIL("%s: ptxas: %s", cfg, s.msg);
  if (hg_is_ok(&s) && (r.spill_store_bytes || r.spill_load_bytes))
    HG_FAIL("%s (%s): %d B spilled", cfg, hg_gemm_store_name(k),
            r.spill_store_bytes + r.spill_load_bytes);
  return true;
}

/* A and B swapped (",sw"): the text, what is refused, the problem the kernel runs, and kernels
 * over the epilogue's chains, fp8 modes, split-K and stream-K that ptxas takes without spills,
 * every one storing D element by element. */
static void test_swap_ab(void) {
  hg_gemm_config_t c;
  char text[128];
  CHECK_OK(hg_gemm_config_parse("128x112x64,c2x1,s6,sw", &c));
  CHECK_EQ(c.swap_ab, 1);
  hg_gemm_config_print(&c, text, sizeof text);
  CHECK_STR(text, "128x112x64,c2x1,s6,coop,m8,e0,sw");
  CHECK_ERR(hg_gemm_config_parse("128x112x64,sw,sw", &c), HG_ERR_PARSE, "operand swap twice");
  /* the swapped problem: M and N, the operands and the vectors trade places */
  hg_gemm_problem_t p = problem(400, 4000, 4096, HG_E4M3);
  p.b_type = HG_E5M2;
  p.b_k_major = true;
  p.lda = 4100;
  p.bias = HG_BIAS_N;
  p.bias_type = HG_BF16;
  p.rowscale = true;
  p.b_align = 8;
  CHECK_OK(hg_gemm_problem_normalize(&p));
  const hg_gemm_problem_t s = hg_gemm_problem_swapped(&p);
  CHECK(s.m == 4000 && s.n == 400 && s.k == 4096 && s.a_type == HG_E5M2 && s.b_type == HG_E4M3);
  CHECK(s.lda == p.ldb && s.ldb == 4100 && s.batch_stride_a == p.batch_stride_b);
  CHECK(s.a_align == 8 && s.b_align == p.a_align);
  CHECK(s.bias == HG_BIAS_M && s.colscale && !s.rowscale && s.ldd == p.ldd);
  /* refused: block-wise scales, grouped and batch-invariant problems, the decode kernel */
  CHECK_OK(hg_gemm_config_parse("128x112x128,sw", &c));
  hg_gemm_problem_t q = problem(400, 4000, 4096, HG_E4M3);
  q.scale = HG_SCALE_BLOCK;
  CHECK_ERR(hg_gemm_config_check(&q, &c), HG_ERR_UNSUPPORTED, "block-wise scales");
  q = problem(400, 4000, 4096, HG_BF16);
  q.batch_invariant = true;
  CHECK_OK(hg_gemm_config_parse("128x112x64,sw", &c));
  CHECK_ERR(hg_gemm_config_check(&q, &c), HG_ERR_UNSUPPORTED, "batch-invariant");
  q.batch_invariant = false;
  CHECK_OK(hg_gemm_config_parse("16x32x64,s1,sw,ldg-mmasync", &c));
  CHECK_ERR(hg_gemm_config_check(&q, &c), HG_ERR_UNSUPPORTED, "decode kernel");
  /* the tile is the kernel's, and so are its checks' sentences */
  CHECK_OK(hg_gemm_config_parse("128x100x64,sw", &c));
  CHECK_ERR(hg_gemm_config_check(&q, &c), HG_ERR_INVALID, "with A and B swapped (,sw; the tile's");
  /* the stages that fit are the kernel problem's, in the check's sentence as from
   * hg_gemm_max_stages: A's rows of 4097 (cp.async staging, the kernel's B) and row scales
   * (its column scales) make 8 of them, where the caller's problem would make 7 */
  hg_gemm_problem_t st = q;
  st.lda = 4097;
  st.rowscale = true;
  CHECK_OK(hg_gemm_problem_normalize(&st));
  CHECK_OK(hg_gemm_config_parse("128x64x64,s10,sw,cpasync-wgmma", &c));
  CHECK_EQ(hg_gemm_max_stages(&st, &c), 8);
  CHECK_ERR(hg_gemm_config_check(&st, &c), HG_ERR_INVALID, "at most 8 stages fit");
  static const struct {
    hg_dtype_t t;
    hg_gemm_scale_t scale;
    const char *cfg;
    int chain; /* 0 plain, 1 bias + GELU + beta C + amax, 2 residual + aux + fp8 D, 3 row/col
                * scales */
  } cases[] = {{HG_BF16, HG_SCALE_TENSOR, "128x112x64,c1x1,s6,sw", 0},
               {HG_BF16, HG_SCALE_TENSOR, "128x112x64,c2x1,s6,sw", 1},
               {HG_BF16, HG_SCALE_TENSOR, "128x160x64,c1x1,s4,sw", 2},
               {HG_BF16, HG_SCALE_TENSOR, "64x112x64,c1x1,s6,sw", 3},
               {HG_BF16, HG_SCALE_TENSOR, "128x112x64,c1x1,s6,k3,sw", 1},
               {HG_BF16, HG_SCALE_TENSOR, "128x112x64,c1x1,s6,k3a,sw", 0},
               {HG_BF16, HG_SCALE_TENSOR, "128x112x64,c1x1,s6,sk,sw", 1},
               {HG_E4M3, HG_SCALE_TENSOR, "128x112x128,c1x1,s5,sw", 1},
               {HG_E4M3, HG_SCALE_ROW, "128x112x128,c1x1,s5,sw", 0},
               {HG_BF16, HG_SCALE_TENSOR, "128x112x64,c1x1,s4,pp,sw", 1}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hg_gemm_problem_t u = problem(400, 4000, 4096, cases[i].t);
    u.scale = cases[i].scale;
    if (cases[i].chain == 1) {
      u.bias = HG_BIAS_N;
      u.bias_type = HG_BF16;
      u.act = HG_ACT_GELU;
      u.beta = 0.5f;
      u.amax = true;
    } else if (cases[i].chain == 2) {
      u.residual = true;
      u.act = HG_ACT_RELU;
      u.aux = true;
      u.d_type = HG_E4M3;
    } else if (cases[i].chain == 3) {
      u.rowscale = u.colscale = true;
      u.bias = HG_BIAS_M;
      u.bias_type = HG_F32;
    }
    hg_gemm_kernel_t k;
    if (!gen_paths(&u, cases[i].cfg, &k)) continue;
    CHECK(k.swapped && k.problem.m == 4000 && k.problem.n == 400);
    CHECK(!k.tma_store && !k.staged_store && !k.aux_tma && !k.aux_staged);
    CHECK(strstr(k.k.name, "_sw") != NULL);
    hg_gemm_kernel_free(&k);
  }
}

/* Where TMA cannot store D (rows of 4097 elements, d_no_tma), D is staged through the
 * epilogue's swizzled buffers and copied out row by row (ld.shared, then one coalesced
 * st.global per lane and row); aux of D's element size goes through the same buffers, with
 * TMA where its rows allow. Split-K, grouped GEMMs and direct stores (,ds) keep the
 * element-by-element stores. */
static void test_staged_store(void) {
  static const struct {
    hg_dtype_t d;
    const char *cfg, *ld_sh, *st_g;
  } cases[] = {{HG_BF16, "128x256x64,c2x1,s4", "ld.shared.u16", "st.global.u16"},
               {HG_F16, "128x176x64,c2x1,s4", "ld.shared.u16", "st.global.u16"},
               {HG_F32, "128x128x64,c1x1,s4", "ld.shared.f32", "st.global.f32"},
               {HG_E4M3, "128x128x64,c1x1,s4", "ld.shared.u8", "st.global.u8"},
               {HG_BF16, "128x128x64,pp", "ld.shared.u16", "st.global.u16"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    /* K = 128: generated directly, the operands need rows TMA can read (no repack here) */
    hg_gemm_problem_t p = problem(4095, 4097, 128, HG_BF16);
    p.d_type = cases[i].d;
    p.amax = cases[i].d == HG_E4M3;
    p.beta = 0.5f;
    hg_gemm_kernel_t k;
    if (!gen_paths(&p, cases[i].cfg, &k)) continue;
    CHECK(!k.tma_store && k.staged_store);
    CHECK(!strcmp(hg_gemm_store_name(&k), "staged-store"));
    CHECK(strstr(k.k.ptx.data, cases[i].ld_sh) != NULL);
    CHECK(strstr(k.k.ptx.data, cases[i].st_g) != NULL);
    /* no TMA store without a tensor map of D */
    CHECK(strstr(k.k.ptx.data, "cp.async.bulk.tensor.3d.global.shared") == NULL);
    hg_gemm_kernel_free(&k);
  }
  /* d_no_tma with rows TMA could store: staged too; split-K and the A/B switch: direct */
  hg_gemm_problem_t p = problem(4096, 4096, 4096, HG_BF16);
  p.d_no_tma = true;
  hg_gemm_kernel_t k;
  if (gen_paths(&p, "128x256x64,c2x1,s4", &k)) {
    CHECK(k.staged_store);
    hg_gemm_kernel_free(&k);
  }
  p = problem(256, 4097, 16384, HG_BF16);
  if (gen_paths(&p, "128x128x64,c1x1,s4,k4", &k)) {
    CHECK(!k.staged_store && !k.tma_store);
    CHECK(!strcmp(hg_gemm_store_name(&k), "direct-store"));
    hg_gemm_kernel_free(&k);
  }
  /* direct stores (ds): the configuration's choice, in its text, the kernel's name and the
   * cache key; the variable that chose them before is ignored */
  setenv("HOPGEN_EPI_STORE", "direct", 1);
  p = problem(4095, 4097, 128, HG_BF16);
  if (gen_paths(&p, "128x256x64,c2x1,s4", &k)) {
    CHECK(k.staged_store && k.config.epi_direct == 0);
    hg_gemm_kernel_free(&k);
  }
  unsetenv("HOPGEN_EPI_STORE");
  if (gen_paths(&p, "128x256x64,c2x1,s4,ds", &k)) {
    CHECK(!k.staged_store && !k.tma_store && k.config.epi_direct == 1);
    CHECK(!strcmp(hg_gemm_store_name(&k), "direct-store"));
    CHECK(strstr(k.k.ptx.data, "ld.shared.u16") == NULL);
    CHECK(strstr(k.k.name, "_ds") != NULL);
    char text[128];
    hg_gemm_config_print(&k.config, text, sizeof text);
    CHECK(strstr(text, ",ds") != NULL);
    hg_gemm_config_t c0 = k.config;
    c0.epi_direct = 0;
    hg_gemm_spec_key_t kd, k0;
    if (hg_gemm_spec_key(&k.problem, &k.config, false, false, HG_BACKEND_PTX, &kd) &&
        hg_gemm_spec_key(&k.problem, &c0, false, false, HG_BACKEND_PTX, &k0))
      CHECK(strcmp(kd.text, k0.text) != 0);
    hg_gemm_kernel_free(&k);
  }
  /* aux beside a D that TMA stores: aux element by element with ds */
  p = problem(4096, 4096, 128, HG_BF16);
  p.act = HG_ACT_GELU;
  p.aux = true;
  if (gen_paths(&p, "128x256x64,c2x1,s4,ds", &k)) {
    CHECK(k.tma_store && !k.aux_tma && !k.aux_staged);
    CHECK(!strcmp(hg_gemm_store_name(&k), "TMA-store, aux direct"));
    hg_gemm_kernel_free(&k);
  }

  /* aux: bf16 beside bf16 D through TMA (its own tensor map after D's, a second TMA store
   * per sub-tile); another element size than D's in pieces of D's buffers (f32 beside bf16 D:
   * two of 32 columns a sub-tile; bf16 beside fp8 D: two of 32; f32 beside fp8 D: four of 16;
   * bf16 beside f32 D: one of 32, half a buffer); rows of 4097: staged; f32 aux beside a
   * full-width unswizzled bf16 sub-tile (176 columns, no piece of 88 fits the rules): element
   * by element */
  static const struct {
    hg_dtype_t d, aux;
    int64_t n, ldaux;
    const char *cfg, *name;
  } ax[] = {
      {HG_BF16, HG_BF16, 4096, 0, "128x256x64,c2x1,s4", "TMA-store, aux by TMA"},
      {HG_F16, HG_F16, 4096, 0, "128x128x64,pp", "TMA-store, aux by TMA"},
      {HG_F32, HG_F32, 4096, 0, "128x128x64,c1x1,s4", "TMA-store, aux by TMA"},
      {HG_BF16, HG_F32, 4096, 0, "128x256x64,c2x1,s4", "TMA-store, aux by TMA"},
      {HG_BF16, HG_BF16, 4096, 4097, "128x256x64,c2x1,s4", "TMA-store, aux staged"},
      {HG_BF16, HG_BF16, 4097, 0, "128x256x64,c2x1,s4", "staged-store, aux staged"},
      {HG_E4M3, HG_BF16, 4096, 0, "128x128x64,c1x1,s4", "TMA-store, aux by TMA"},
      {HG_E4M3, HG_F32, 4096, 0, "128x128x64,c1x1,s4", "TMA-store, aux by TMA"},
      {HG_F32, HG_BF16, 4096, 0, "128x128x64,c1x1,s4", "TMA-store, aux by TMA"},
      {HG_F16, HG_F32, 4096, 0, "128x128x64,pp", "TMA-store, aux by TMA"},
      {HG_BF16, HG_F32, 4096, 4097, "128x256x64,c2x1,s4", "TMA-store, aux staged"},
      {HG_BF16, HG_F32, 4097, 0, "128x256x64,c2x1,s4", "staged-store, aux staged"},
      {HG_E4M3, HG_BF16, 4097, 0, "128x128x64,c1x1,s4", "staged-store, aux staged"},
      {HG_BF16, HG_F32, 4096, 0, "128x176x64,c2x1,s4", "TMA-store, aux direct"},
      /* f32 D of 4100 columns through TMA; bf16 aux rows of 8200 bytes (ldaux 4104): a TMA box
       * would write past N into the row's padding, so staged */
      {HG_F32, HG_BF16, 4100, 4104, "128x128x64,c1x1,s4", "TMA-store, aux staged"},
  };
  for (size_t i = 0; i < sizeof ax / sizeof ax[0]; i++) {
    p = problem(4096, ax[i].n, 4096, HG_BF16);
    p.d_type = ax[i].d;
    p.aux = true;
    p.aux_type = ax[i].aux;
    p.ldaux = ax[i].ldaux;
    p.bias = HG_BIAS_N;
    p.bias_type = HG_BF16;
    p.act = HG_ACT_GELU;
    if (!gen_paths(&p, ax[i].cfg, &k)) continue;
    if (strcmp(hg_gemm_store_name(&k), ax[i].name))
      HG_FAIL("aux case %zu: '%s', expected '%s'", i, hg_gemm_store_name(&k), ax[i].name);
    const char *d_map = strstr(k.k.ptx.data, "hgp_tmap_d");
    const char *x_map = strstr(k.k.ptx.data, "hgp_tmap_aux");
    CHECK((x_map != NULL) == k.aux_tma);
    if (x_map) CHECK(d_map && d_map < x_map); /* the order hg_gemm_op_run passes them */
    /* TMA stores: one per sub-tile for D, and one more for aux through TMA */
    int stores = 0;
    for (const char *at = k.k.ptx.data; (at = strstr(at, "cp.async.bulk.tensor.3d.global.shared"));
         at++)
      stores++;
    /* per sub-tile one for D and one per aux piece: aux of another element size than D's
     * in epi_n / aux_n pieces (epi_n x D's size / aux's columns when aux's are larger) */
    hg_gemm_config_t cc;
    CHECK_OK(hg_gemm_config_parse(ax[i].cfg, &cc));
    const int epi_n = hg_gemm_epi_n(&k.problem, &cc), ed = hg_dtype_bytes(ax[i].d),
              ex = hg_dtype_bytes(ax[i].aux);
    if (k.aux_tma || k.aux_staged) CHECK_EQ(k.aux_n, ex <= ed ? epi_n : epi_n * ed / ex);
    const int per_sub = 1 + (k.aux_tma ? epi_n / (k.aux_n ? k.aux_n : 1) : 0);
    if (!k.tma_store) CHECK_EQ(stores, 0);
    if (k.tma_store) CHECK(stores % per_sub == 0 && stores >= per_sub);
    hg_gemm_kernel_free(&k);
  }
  /* the run-time rule: aux through TMA needs a 16-byte aligned base (hg_gemm_op_run refuses
   * another; d_no_tma takes any: both staged) */
  p = problem(4096, 4096, 4096, HG_BF16);
  p.aux = true;
  p.act = HG_ACT_GELU;
  p.d_no_tma = true;
  if (gen_paths(&p, "128x256x64,c2x1,s4", &k)) {
    CHECK(!strcmp(hg_gemm_store_name(&k), "staged-store, aux staged"));
    hg_gemm_kernel_free(&k);
  }
}

/* Ping-pong tiles with expensive activations compile without spills (ptxas -v, gen_paths):
 * their chain's activation runs 16 columns at a time inside D's write, next to 192 (128x192)
 * or 128 (128x128) accumulators a thread; and the heuristic's rule pp makes it take them for
 * those chains only. */
static void test_pingpong_chains(void) {
  static const struct {
    const char *cfg, *chain;
    hg_dtype_t aux; /* 0: no aux */
  } cases[] = {
      {"128x192x64,pp", "bias,gelu", 0},
      {"128x192x64,pp", "bias,silu", 0},
      {"128x192x64,pp", "bias,sigmoid", 0},
      {"128x192x64,c1x2,s4,pp", "bias,gelu_tanh", 0},
      {"128x192x64,c1x2,s4,pp", "bias,gelu", 0},
      {"128x192x64,c1x2,s4,pp", "bias,sigmoid", 0},
      {"128x128x64,c2x1,s4,pp", "bias,gelu", 0},
      {"128x128x64,c2x1,s4,pp", "bias,silu", 0},
      {"128x128x64,c2x1,s4,pp", "bias,sigmoid", 0},
      {"128x128x64,c2x1,s4,pp", "bias,gelu", HG_BF16},
      {"128x128x64,c2x1,s4,pp", "bias,gelu", HG_F32},
      {"128x128x64,pp", "bias,silu", HG_BF16},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hg_gemm_problem_t p = problem(4096, 4096, 4096, HG_BF16);
    CHECK_OK(hg_gemm_epilogue_parse(cases[i].chain, &p));
    p.bias_type = HG_BF16;
    p.aux = cases[i].aux != 0;
    p.aux_type = cases[i].aux;
    hg_gemm_kernel_t k;
    if (!gen_paths(&p, cases[i].cfg, &k)) continue;
    CHECK(k.config.schedule == HG_SCHED_PINGPONG);
    hg_gemm_kernel_free(&k);
  }
  /* the A/B rule: off by default (and whatever the environment says); pp: ping-pong for a
   * GELU (192 columns, 128 with aux or pp128) and not for a ReLU or no chain */
  static const struct {
    const char *rules, *chain;
    bool aux;
    int sched, tile_n;
  } sw[] = {{NULL, "bias,gelu", false, HG_SCHED_COOPERATIVE, 256},
            {"pp", "bias,gelu", false, HG_SCHED_PINGPONG, 192},
            {"pp", "rowscale,bias,gelu", false, HG_SCHED_PINGPONG, 128},
            {"pp", "bias,silu", true, HG_SCHED_PINGPONG, 128},
            {"pp128", "bias,sigmoid", false, HG_SCHED_PINGPONG, 128},
            {"pp", "bias,relu", false, HG_SCHED_COOPERATIVE, 256},
            {"pp", "none", false, HG_SCHED_COOPERATIVE, 256},
            {"default", "bias,gelu", false, HG_SCHED_COOPERATIVE, 256}};
  setenv("HOPGEN_EPI_SCHEDULE", "pingpong", 1); /* the variable the rule replaced: ignored */
  for (size_t i = 0; i < sizeof sw / sizeof sw[0]; i++) {
    hg_gemm_rules_t r = {0};
    if (sw[i].rules) CHECK_OK(hg_gemm_rules_parse(sw[i].rules, &r));
    hg_gemm_problem_t p = problem(4096, 4096, 4096, HG_BF16);
    CHECK_OK(hg_gemm_epilogue_parse(sw[i].chain, &p));
    if (p.bias != HG_BIAS_NONE) p.bias_type = HG_BF16;
    p.aux = sw[i].aux;
    hg_gemm_config_t c;
    CHECK_OK(sw[i].rules ? hg_gemm_heuristic_rules(&p, 132, &r, &c)
                         : hg_gemm_heuristic(&p, 132, &c));
    /* 192 columns on a 1x2 cluster (2x1 spilled), except fp8's promotion tiles */
    if (c.tile_n == 192 && !hg_gemm_promote(&p)) CHECK(c.cluster_m == 1);
    if ((int)c.schedule != sw[i].sched || c.tile_n != sw[i].tile_n || c.tile_m != 128)
      HG_FAIL("rules %s %s: %dx%d %s, expected %s 128x%d", sw[i].rules ? sw[i].rules : "(none)",
              sw[i].chain, c.tile_m, c.tile_n, c.schedule == HG_SCHED_PINGPONG ? "pp" : "coop",
              sw[i].sched == HG_SCHED_PINGPONG ? "pp" : "coop", sw[i].tile_n);
    hg_test_checks++;
    CHECK_OK(hg_gemm_config_check(&p, &c));
  }
  unsetenv("HOPGEN_EPI_SCHEDULE");
  /* the rules' text: each once, printed back in a fixed order */
  hg_gemm_rules_t r;
  char text[64];
  CHECK_OK(hg_gemm_rules_parse("pt,pp128,nobs,sk", &r));
  CHECK(r.stream_k && r.epi_pingpong == 128 && r.global_scales && r.mma_turns);
  hg_gemm_rules_print(&r, text, sizeof text);
  CHECK(!strcmp(text, "sk,pp128,nobs,pt"));
  CHECK_OK(hg_gemm_rules_parse("nokcol,dv,nocw", &r));
  CHECK(r.no_split_column && r.decode && r.no_cluster_wave && !r.stream_k);
  hg_gemm_rules_print(&r, text, sizeof text);
  CHECK(!strcmp(text, "dv,nocw,nokcol"));
  CHECK_ERR(hg_gemm_rules_parse("nocw,nocw", &r), HG_ERR_PARSE, "twice");
  CHECK_ERR(hg_gemm_rules_parse("cw", &r), HG_ERR_PARSE, "unknown rule 'cw'");
  CHECK_OK(hg_gemm_rules_parse("default", &r));
  hg_gemm_rules_print(&r, text, sizeof text);
  CHECK(!strcmp(text, "default"));
  CHECK_ERR(hg_gemm_rules_parse("pp,pp128", &r), HG_ERR_PARSE, "twice");
  CHECK_ERR(hg_gemm_rules_parse("auto", &r), HG_ERR_PARSE, "unknown rule 'auto'");
  CHECK_ERR(hg_gemm_rules_parse("sk,", &r), HG_ERR_PARSE, "unknown rule ''");
  hg_gemm_problem_t p = problem(4096, 4096, 4096, HG_BF16);
  hg_gemm_config_t c;
  r = (hg_gemm_rules_t){.epi_pingpong = 100};
  CHECK_ERR(hg_gemm_heuristic_rules(&p, 132, &r, &c), HG_ERR_INVALID, "epi_pingpong = 100");
}

/* The erf GELU's formulas (the configuration's gelu: gp7, gas, gp5), in host f32: gelu(x)
 * within the documented error of x Phi(x) (relative to |x|), saturating cleanly far out; the
 * kernel's PTX and name follow the configuration, and the kernel cache's key with it. */
static void test_gelu_formulas(void) {
  static const double bound[HG_GELU_ALG_COUNT] = {4e-7, 4e-7, 2.5e-6, 2.5e-6};
  for (int a = 0; a < HG_GELU_ALG_COUNT; a++) {
    double worst = 0;
    for (int i = -240000; i <= 240000; i++) {
      const float x = (float)i * 5e-5f;
      const double ref = (double)x * 0.5 * erfc(-(double)x / sqrt(2.0));
      const double got = hg_gelu_model((hg_gelu_alg_t)a, x);
      const double err = fabs(got - ref) / fmax(fabs((double)x), 1e-30);
      if (err > worst) worst = err;
    }
    if (!(worst <= bound[a]))
      HG_FAIL("gelu %s: error %.3g |x| (bound %.3g)", hg_gelu_alg_name((hg_gelu_alg_t)a), worst,
              bound[a]);
    hg_test_checks++;
    static const float far[] = {40.0f, 1e4f, 1e30f};
    for (int i = 0; i < 3; i++) {
      CHECK(hg_gelu_model((hg_gelu_alg_t)a, far[i]) == far[i]);
      CHECK(fabsf(hg_gelu_model((hg_gelu_alg_t)a, -far[i])) <= 1e-30f);
    }
  }
  hg_gemm_problem_t p = problem(4096, 4096, 4096, HG_BF16);
  p.act = HG_ACT_GELU;
  CHECK_OK(hg_gemm_problem_normalize(&p));
  hg_gemm_config_t c, cas, c5, c7;
  CHECK_OK(hg_gemm_config_parse("128x256x64,c2x1,s4", &c));
  CHECK_EQ(c.gelu, HG_GELU_POLY7);
  CHECK_OK(hg_gemm_config_parse("128x256x64,c2x1,s4,gas", &cas));
  CHECK_EQ(cas.gelu, HG_GELU_AS);
  CHECK_OK(hg_gemm_config_parse("128x256x64,c2x1,s4,gp5", &c5));
  CHECK_EQ(c5.gelu, HG_GELU_POLY5);
  /* gp7 names the default, which prints as nothing */
  CHECK_OK(hg_gemm_config_parse("128x256x64,c2x1,s4,gp7", &c7));
  CHECK(!memcmp(&c7, &c, sizeof c));
  char text[128];
  hg_gemm_config_print(&c5, text, sizeof text);
  CHECK(!strcmp(text, "128x256x64,c2x1,s4,coop,m8,e0,gp5"));
  CHECK_ERR(hg_gemm_config_parse("128x256x64,gas,gp5", &c7), HG_ERR_PARSE, "GELU formula twice");
  hg_gemm_spec_key_t k7, kas;
  const bool keyed = hg_gemm_spec_key(&p, &c, false, false, HG_BACKEND_PTX, &k7);
  hg_gemm_kernel_t k;
  CHECK_OK(hg_gemm_generate(&p, &c, HG_BACKEND_PTX, &k));
  const bool abs7 = strstr(k.k.ptx.data, "abs.f32") != NULL;
  CHECK(strstr(k.k.name, "_gelu") != NULL && strstr(k.k.name, "_gelu_") == NULL);
  hg_gemm_kernel_free(&k);
  /* the variable that chose the formula before the configuration did: ignored */
  setenv("HOPGEN_GELU", "as", 1);
  CHECK_OK(hg_gemm_generate(&p, &c, HG_BACKEND_PTX, &k));
  CHECK((strstr(k.k.ptx.data, "abs.f32") != NULL) == abs7);
  hg_gemm_kernel_free(&k);
  unsetenv("HOPGEN_GELU");
  CHECK_OK(hg_gemm_generate(&p, &cas, HG_BACKEND_PTX, &k));
  CHECK(!abs7 && strstr(k.k.ptx.data, "abs.f32") != NULL); /* |x| only in the erfc form */
  CHECK(strstr(k.k.name, "_gelu_as") != NULL);
  hg_gemm_kernel_free(&k);
  if (keyed) {
    CHECK(hg_gemm_spec_key(&p, &cas, false, false, HG_BACKEND_PTX, &kas));
    CHECK(strcmp(k7.text, kas.text) != 0);
  }
  /* poly5 names its kernel too */
  CHECK_OK(hg_gemm_generate(&p, &c5, HG_BACKEND_PTX, &k));
  CHECK(strstr(k.k.name, "_gelu_poly5") != NULL);
  hg_gemm_kernel_free(&k);
  /* a formula without the erf GELU is refused, naming the activation */
  hg_gemm_problem_t t = p;
  t.act = HG_ACT_GELU_TANH;
  CHECK_ERR(hg_gemm_config_check(&t, &cas), HG_ERR_INVALID, "activation is gelu_tanh");
  c7 = c;
  c7.gelu = 4;
  CHECK_ERR(hg_gemm_config_check(&p, &c7), HG_ERR_INVALID, "formula 4 is not known");
  /* poly5t (gt5): one tanh.approx a value instead of ex2 + rcp; the heuristic's choice for
   * 16- and 8-bit D, not for f32 D (whose ulp would show tanh.approx's error) */
  hg_gemm_config_t ct;
  CHECK_OK(hg_gemm_config_parse("128x256x64,c2x1,s4,gt5", &ct));
  CHECK_EQ(ct.gelu, HG_GELU_TANH5);
  hg_gemm_config_print(&ct, text, sizeof text);
  CHECK(!strcmp(text, "128x256x64,c2x1,s4,coop,m8,e0,gt5"));
  CHECK_OK(hg_gemm_generate(&p, &ct, HG_BACKEND_PTX, &k));
  CHECK(strstr(k.k.name, "_gelu_poly5t") != NULL);
  CHECK(strstr(k.k.ptx.data, "tanh.approx.f32") != NULL && strstr(k.k.ptx.data, "ex2.") == NULL);
  hg_gemm_kernel_free(&k);
  hg_gemm_config_t h;
  CHECK_OK(hg_gemm_heuristic(&p, 132, &h));
  CHECK_EQ(h.gelu, HG_GELU_TANH5);
  t = p;
  t.d_type = HG_F32;
  CHECK_OK(hg_gemm_problem_normalize(&t));
  CHECK_OK(hg_gemm_heuristic(&t, 132, &h));
  CHECK_EQ(h.gelu, HG_GELU_POLY7);
  t = p;
  t.act = HG_ACT_SILU;
  CHECK_OK(hg_gemm_heuristic(&t, 132, &h));
  CHECK_EQ(h.gelu, HG_GELU_POLY7);
}

static void test_tuner_space(void) {
  const hg_dtype_t types[] = {HG_BF16, HG_E4M3};
  int n = 0;
  for (int t = 0; t < 2; t++) {
    hg_gemm_problem_t p = problem(4096, 4096, 4096, types[t]);
    hg_gemm_config_t space[HG_GEMM_TUNE_MAX];
    const int k = hg_gemm_tune_space(&p, space, HG_GEMM_TUNE_MAX);
    CHECK(k > 0 && k < HG_GEMM_TUNE_MAX);
    for (int i = 0; i < k; i++) {
      check_generates(&p, &space[i]);
      n++;
    }
  }
  CHECK(n >= 40);
  /* decode shapes: the decode kernel's candidates first (16, 32 and 64-row CTAs, unsplit and
   * in 2-8 atomic splits), none split for a deterministic problem, none past M = 16 */
  for (int t = 0; t < 2; t++)
    for (int det = 0; det < 2; det++) {
      hg_gemm_problem_t p = problem(4, 2048, 7168, types[t]);
      p.deterministic = det;
      hg_gemm_config_t space[HG_GEMM_TUNE_MAX];
      const int k = hg_gemm_tune_space(&p, space, HG_GEMM_TUNE_MAX);
      int dec = 0, heights = 0, split = 0;
      for (int i = 0; i < k && space[i].mainloop == HG_MAINLOOP_LDG_MMASYNC; i++, dec++) {
        CHECK(!det || space[i].splits <= 1);
        heights |= space[i].tile_n;
        split += space[i].splits > 1;
        check_generates(&p, &space[i]); /* 0 bytes spilled */
      }
      CHECK_EQ(heights, t ? 16 | 32 : 16 | 32 | 64);
      CHECK(det ? split == 0 : split >= 2);
      p.m = 17;
      const int k17 = hg_gemm_tune_space(&p, space, HG_GEMM_TUNE_MAX);
      for (int i = 0; i < k17; i++) CHECK(space[i].mainloop != HG_MAINLOOP_LDG_MMASYNC);
    }
  /* few output tiles: the split tiles, 64 x 64 unsplit among them (the heuristic's answer
   * to short splits), and the whole space within HG_GEMM_TUNE_MAX (nothing cut) */
  for (int t = 0; t < 2; t++) {
    hg_gemm_problem_t p = problem(24, 4096, 4096, types[t]);
    hg_gemm_config_t space[HG_GEMM_TUNE_MAX];
    const int k = hg_gemm_tune_space(&p, space, HG_GEMM_TUNE_MAX);
    CHECK(k > 0 && k < HG_GEMM_TUNE_MAX);
    int unsplit64 = 0, split64 = 0;
    for (int i = 0; i < k; i++)
      if (space[i].tile_m == 64 && space[i].tile_n == 64) {
        if (space[i].splits > 1)
          split64++;
        else
          unsplit64++;
      }
    CHECK(unsplit64 == 1 && split64 >= 2);
  }
  hg_gemm_config_t c;
  CHECK_OK(hg_gemm_config_parse("128x256x64,c2x1,s4", &c));
  const hg_dtype_t outs[] = {HG_BF16, HG_F16, HG_F32};
  for (int lay = 0; lay < 4; lay++)
    for (int o = 0; o < 3; o++) {
      hg_gemm_problem_t p = problem(4096, 4096, 4096, o == 1 ? HG_F16 : HG_BF16);
      p.a_k_major = lay & 1;
      p.b_k_major = (lay >> 1) & 1;
      p.d_type = outs[o];
      check_generates(&p, &c);
    }
  hg_gemm_problem_t p = problem(4096, 4096, 4096, HG_E4M3);
  p.b_type = HG_E5M2;
  p.d_type = HG_F32;
  p.fp8_accum = HG_FP8_ACCUM_FAST;
  CHECK_OK(hg_gemm_config_parse("128x256x128,c2x1,s4", &c));
  check_generates(&p, &c);
  /* the widest tiles with two accumulator sets (fp8's accurate accumulation) */
  p.fp8_accum = HG_FP8_ACCUM_ACCURATE;
  p.fp8_promote = 1;
  CHECK_OK(hg_gemm_config_parse("128x192x128,c2x1,s4", &c));
  check_generates(&p, &c);
  p.a_type = HG_E5M2;
  p.b_type = HG_E4M3;
  p.d_type = HG_BF16;
  p.fp8_promote = 4;
  CHECK_OK(hg_gemm_config_parse("64x192x128,pp,s4", &c));
  check_generates(&p, &c);
  /* The direct-store epilogue (D rows of 7 bf16 elements cannot take TMA). */
  p = problem(1000, 7, 127, HG_BF16);
  CHECK_OK(hg_gemm_config_parse("128x64x64,c1x1,s4", &c));
  check_generates(&p, &c);
}

/* Shared-memory accounting (gemm_config.c) against what the generator reserves: every
 * configuration of the tune space and the heuristic's, at its most stages, generates for
 * problems with staged vectors (the epilogue buffers start at a 1024-byte boundary after the
 * barriers: 1000^3 e4m3 with a five-step chain overflowed by 512 bytes at 128x64x128, s8). */
static void test_smem_accounting(void) {
  static const char *const chains[] = {"rowscale,colscale,bias,gelu,residual", "bias_m,silu",
                                       "none"};
  static const hg_dtype_t types[] = {HG_E4M3, HG_BF16};
  int n = 0;
  for (int t = 0; t < 2; t++)
    for (int e = 0; e < 3; e++) {
      hg_gemm_problem_t p = problem(1000, 1000, 1024, types[t]);
      CHECK_OK(hg_gemm_epilogue_parse(chains[e], &p));
      p.bias_type = HG_BF16;
      CHECK_OK(hg_gemm_problem_normalize(&p));
      hg_gemm_config_t space[HG_GEMM_TUNE_MAX + 1];
      int k = hg_gemm_tune_space(&p, space, HG_GEMM_TUNE_MAX);
      if (k > HG_GEMM_TUNE_MAX) k = HG_GEMM_TUNE_MAX;
      CHECK_OK(hg_gemm_heuristic(&p, 132, &space[k++]));
      for (int i = 0; i < k; i++) {
        space[i].stages = hg_gemm_max_stages(&p, &space[i]);
        hg_status_t ok = hg_gemm_config_check(&p, &space[i]);
        if (!hg_is_ok(&ok)) continue;
        hg_gemm_kernel_t kk;
        hg_status_t st = hg_gemm_generate(&p, &space[i], HG_BACKEND_PTX, &kk);
        char cfg[96];
        hg_gemm_config_print(&space[i], cfg, sizeof cfg);
        if (!hg_is_ok(&st))
          HG_FAIL("%s (%s, %s): %s", cfg, chains[e], t ? "bf16" : "e4m3", st.msg);
        else
          hg_gemm_kernel_free(&kk);
        n++;
      }
    }
  CHECK(n >= 20);
}

static int count(const char *text, const char *what) {
  int n = 0;
  for (const char *at = text; (at = strstr(at, what)) != NULL; at += strlen(what)) n++;
  return n;
}

/* fp8's accumulation: ACCURATE by default with a promotion every 4 k-blocks, FAST without;
 * cleared for 16-bit operands; the sentences for bad values and for tiles whose two
 * accumulator sets would spill; the kernel's name says the mode, and the accurate kernel adds
 * each accumulator of the partial set into the f32 one (one add.f32 per accumulator more). */
static void test_fp8_accum(void) {
  hg_gemm_problem_t p = problem(4096, 4096, 4096, HG_E4M3);
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_EQ(p.fp8_accum, HG_FP8_ACCUM_ACCURATE);
  CHECK_EQ(p.fp8_promote, HG_FP8_PROMOTE_DEFAULT);
  p.fp8_promote = 17;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_INVALID, "fp8 promotion every 17 k-blocks");
  p.fp8_promote = 3;
  p.fp8_accum = HG_FP8_ACCUM_FAST;
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_EQ(p.fp8_promote, 0);
  p.fp8_accum = (hg_gemm_fp8_accum_t)7;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_INVALID, "fp8 accumulation 7 is not known");
  hg_gemm_problem_t q = problem(256, 256, 256, HG_BF16);
  q.fp8_accum = HG_FP8_ACCUM_FAST;
  q.fp8_promote = 2;
  CHECK_OK(hg_gemm_problem_normalize(&q));
  CHECK(q.fp8_accum == HG_FP8_ACCUM_ACCURATE && q.fp8_promote == 0);
  hg_gemm_fp8_accum_t a;
  CHECK_OK(hg_gemm_fp8_accum_parse("fast", &a));
  CHECK_EQ(a, HG_FP8_ACCUM_FAST);
  CHECK_ERR(hg_gemm_fp8_accum_parse("exact", &a), HG_ERR_PARSE, "not one of accurate, fast");
  /* 128x256 coop: 128 accumulators a thread, twice: refused accurate, taken fast */
  hg_gemm_config_t c;
  CHECK_OK(hg_gemm_config_parse("128x256x128,c2x1,s4", &c));
  p = problem(4096, 4096, 4096, HG_E4M3);
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_UNSUPPORTED, "two accumulator sets of 128");
  CHECK_OK(hg_gemm_config_parse("128x128x128,pp,s4", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_UNSUPPORTED, "--fp8-accum fast");
  p.fp8_accum = HG_FP8_ACCUM_FAST;
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_OK(hg_gemm_config_check(&p, &c));
  /* the same tile in the three modes */
  CHECK_OK(hg_gemm_config_parse("128x128x128,c1x1,s4", &c));
  static const struct {
    hg_gemm_fp8_accum_t accum;
    int promote;
    const char *suffix;
  } modes[] = {{HG_FP8_ACCUM_FAST, 0, "_fast"},
               {HG_FP8_ACCUM_ACCURATE, 1, "_p1"},
               {HG_FP8_ACCUM_ACCURATE, 0, "_p4"}};
  int adds[3] = {0};
  for (int i = 0; i < 3; i++) {
    p = problem(4096, 4096, 4096, HG_E4M3);
    p.fp8_accum = modes[i].accum;
    p.fp8_promote = modes[i].promote;
    CHECK_OK(hg_gemm_problem_normalize(&p));
    hg_gemm_kernel_t k;
    hg_status_t st = hg_gemm_generate(&p, &c, HG_BACKEND_PTX, &k);
    CHECK_OK(st);
    if (!hg_is_ok(&st)) continue;
    CHECK(strstr(k.k.name, modes[i].suffix) != NULL);
    adds[i] = count(k.k.ptx.data, "add.f32") + count(k.k.ptx.data, "add.rn.f32");
    hg_gemm_kernel_free(&k);
  }
  /* a consumer of a 128x128 coop tile holds 64 accumulators */
  CHECK(adds[1] - adds[0] >= 64);
  CHECK_EQ(adds[1], adds[2]);
}

/* Staggered promotions (HG_PROMOTE_STAGGER, ",ps"): the text form round-trips, the rules and
 * their sentences (accurate fp8 only, two consumer warpgroups on a tile, two k-blocks or more
 * a group), the heuristic takes them on cooperative tiles with two consumers and the tuner
 * tries both, and the kernel (named _ps) starts the second consumer's group counter at
 * promote / 2 (a selp of 2 for promote 4, of 1 for 3) and assembles without spills or
 * serialized wgmma. */
static void test_fp8_stagger(void) {
  hg_gemm_config_t c;
  char text[128];
  CHECK_OK(hg_gemm_config_parse("128x128x128,c2x1,s4,ps", &c));
  CHECK_EQ(c.promote_overlap, HG_PROMOTE_STAGGER);
  hg_gemm_config_print(&c, text, sizeof text);
  CHECK(strstr(text, ",ps") != NULL);
  CHECK_ERR(hg_gemm_config_parse("128x128x128,ps,ps", &c), HG_ERR_PARSE,
            "gives the promotion overlap twice");
  CHECK_ERR(hg_gemm_config_parse("128x128x128,px", &c), HG_ERR_PARSE,
            "ps|pd, pa, gp7|gas|gp5, ds, sw or a mainloop");
  CHECK_OK(hg_gemm_config_parse("128x128x128,c2x1,s4", &c));
  hg_gemm_config_print(&c, text, sizeof text);
  CHECK(strstr(text, "ps") == NULL);
  hg_gemm_problem_t p = problem(4096, 4096, 4096, HG_E4M3);
  CHECK_OK(hg_gemm_problem_normalize(&p));
  c.promote_overlap = 16;
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "promotion overlap 16 is not known");
  c.promote_overlap = HG_PROMOTE_STAGGER | HG_PROMOTE_DOUBLE;
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "do not combine");
  CHECK_OK(hg_gemm_config_parse("64x128x128,pp,ps", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "need two consumer warpgroups");
  CHECK_OK(hg_gemm_config_parse("64x128x128,ps", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "need two consumer warpgroups");
  CHECK_OK(hg_gemm_config_parse("128x128x128,ps", &c));
  CHECK_OK(hg_gemm_config_check(&p, &c));
  hg_gemm_problem_t q = problem(4096, 4096, 4096, HG_E4M3);
  q.fp8_accum = HG_FP8_ACCUM_FAST;
  CHECK_OK(hg_gemm_problem_normalize(&q));
  CHECK_ERR(hg_gemm_config_check(&q, &c), HG_ERR_INVALID, "promotes nothing (--fp8-accum fast)");
  q = problem(4096, 4096, 4096, HG_BF16);
  CHECK_OK(hg_gemm_problem_normalize(&q));
  CHECK_OK(hg_gemm_config_parse("128x128x64,ps", &c));
  CHECK_ERR(hg_gemm_config_check(&q, &c), HG_ERR_INVALID, "promotes nothing (16-bit operands)");
  CHECK_OK(hg_gemm_config_parse("128x128x128,ps", &c));
  q = problem(4096, 4096, 4096, HG_E4M3);
  q.fp8_promote = 1;
  CHECK_OK(hg_gemm_problem_normalize(&q));
  CHECK_ERR(hg_gemm_config_check(&q, &c), HG_ERR_INVALID, "has no half");
  q = problem(4096, 4096, 4096, HG_E4M3);
  q.scale = HG_SCALE_BLOCK;
  CHECK_OK(hg_gemm_problem_normalize(&q));
  CHECK_ERR(hg_gemm_config_check(&q, &c), HG_ERR_INVALID, "block-wise scales) has no half");
  /* the heuristic: no overlap (measured slower, gemm_config.c), but the staggered form of
   * its two-consumer accurate tiles passes the check and generates */
  static const int64_t shapes[][3] = {{4096, 7168, 16384}, {4096, 2112, 7168}, {8192, 8192, 8192},
                                      {128, 7168, 2048},   {64, 7168, 16384},  {256, 256, 32768}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    for (int mode = 0; mode < 4; mode++) {
      q = problem(shapes[i][0], shapes[i][1], shapes[i][2], mode == 3 ? HG_BF16 : HG_E4M3);
      q.fp8_accum = mode == 1 ? HG_FP8_ACCUM_FAST : HG_FP8_ACCUM_ACCURATE;
      q.scale = mode == 2 ? HG_SCALE_ROW : HG_SCALE_TENSOR;
      CHECK_OK(hg_gemm_heuristic(&q, 132, &c));
      const bool two = c.schedule == HG_SCHED_COOPERATIVE && c.tile_m >= 128;
      CHECK_EQ(c.promote_overlap, 0);
      CHECK_OK(hg_gemm_problem_normalize(&q));
      CHECK_OK(hg_gemm_config_check(&q, &c));
      if ((mode == 0 || mode == 2) && two && c.splits <= 1) {
        c.promote_overlap = HG_PROMOTE_STAGGER;
        CHECK_OK(hg_gemm_config_check(&q, &c));
        check_generates(&q, &c);
      }
    }
  /* the tuner tries each two-consumer accurate tile both ways (and pd where it fits) */
  hg_gemm_config_t space[HG_GEMM_TUNE_MAX];
  const int k = hg_gemm_tune_space(&p, space, HG_GEMM_TUNE_MAX);
  CHECK(k > 0 && k < HG_GEMM_TUNE_MAX);
  int staggered = 0;
  for (int i = 0; i < k; i++)
    if (space[i].promote_overlap == HG_PROMOTE_STAGGER) {
      staggered++;
      bool plain = false;
      for (int j = 0; j < k; j++) {
        hg_gemm_config_t t = space[i];
        t.promote_overlap = 0;
        plain = plain || !memcmp(&t, &space[j], sizeof t);
      }
      CHECK(plain);
    }
  CHECK(staggered >= 4);
  /* the kernel, against the same tile unstaggered: one selp more (the second consumer's
   * counter starts at promote / 2) and one and.pred more (a unit's first k-block overwrites
   * the partial sums whatever the counter says) */
  for (int promote = 3; promote <= 4; promote++) {
    int selp[2] = {0}, andp[2] = {0};
    for (int ps = 0; ps < 2; ps++) {
      q = problem(1000, 3000, 4112, HG_E4M3);
      q.fp8_promote = promote;
      CHECK_OK(hg_gemm_problem_normalize(&q));
      CHECK_OK(hg_gemm_config_parse(ps ? "128x128x128,c2x1,s4,ps" : "128x128x128,c2x1,s4", &c));
      if (ps) check_generates(&q, &c);
      hg_gemm_kernel_t kk;
      hg_status_t st = hg_gemm_generate(&q, &c, HG_BACKEND_PTX, &kk);
      CHECK_OK(st);
      if (!hg_is_ok(&st)) continue;
      char name[32];
      snprintf(name, sizeof name, ps ? "_p%d_ps" : "_p%d", promote);
      const char *at = strstr(kk.k.name, name);
      if (!at || (!ps && at[strlen(name)] != '\0')) HG_FAIL("%s: not ending %s", kk.k.name, name);
      selp[ps] = count(kk.k.ptx.data, "selp.b32");
      andp[ps] = count(kk.k.ptx.data, "and.pred");
      hg_gemm_kernel_free(&kk);
    }
    CHECK_EQ(selp[1], selp[0] + 1);
    CHECK_EQ(andp[1], andp[0] + 1);
  }
}

/* Two partial sets (HG_PROMOTE_DOUBLE, ",pd"): the text form, the rules and their sentences
 * (not with ps, fp8_promote 1..4, three sets within the register budget), the heuristic takes
 * it for block scales where the third set fits, and each kernel (named _pd) assembles without
 * spills or serialized wgmma and holds the unrolled bodies: (unroll + 1) times the plain
 * kernel's wgmma instructions (the body, then the k-blocks left one by one). */
static void test_fp8_double(void) {
  hg_gemm_config_t c;
  char text[128];
  CHECK_OK(hg_gemm_config_parse("128x128x128,c2x1,s4,pd", &c));
  CHECK_EQ(c.promote_overlap, HG_PROMOTE_DOUBLE);
  hg_gemm_config_print(&c, text, sizeof text);
  CHECK(strstr(text, ",pd") != NULL);
  CHECK_ERR(hg_gemm_config_parse("128x128x128,ps,pd", &c), HG_ERR_PARSE,
            "gives the promotion overlap twice");
  hg_gemm_problem_t p = problem(4096, 4096, 4096, HG_E4M3);
  p.fp8_promote = 8;
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_OK(hg_gemm_config_parse("128x128x128,pd", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "fp8_promote 1..4");
  p.fp8_promote = 4;
  CHECK_OK(hg_gemm_config_check(&p, &c));
  CHECK_OK(hg_gemm_config_parse("128x192x128,pd", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_UNSUPPORTED, "three (two partial sets: pd)");
  hg_gemm_problem_t q = problem(4096, 4096, 4096, HG_E4M3);
  q.scale = HG_SCALE_ROW; /* 176 a thread: 3 x 64 is over */
  CHECK_OK(hg_gemm_problem_normalize(&q));
  CHECK_OK(hg_gemm_config_parse("128x128x128,pd", &c));
  CHECK_ERR(hg_gemm_config_check(&q, &c), HG_ERR_UNSUPPORTED, "over the 176");
  /* the heuristic takes pd beside staged block scales wherever it fits (measured 2-5% faster
   * once the scales came by cp.async; it had been 2-6x slower before the RS register fix) */
  static const int64_t mnk[][3] = {{4096, 7168, 16384}, {128, 7168, 2048}, {64, 2112, 7168}};
  for (size_t i = 0; i < sizeof mnk / sizeof mnk[0]; i++) {
    q = problem(mnk[i][0], mnk[i][1], mnk[i][2], HG_E4M3);
    q.scale = HG_SCALE_BLOCK;
    CHECK_OK(hg_gemm_heuristic(&q, 132, &c));
    CHECK_OK(hg_gemm_problem_normalize(&q));
    hg_gemm_config_t t = c;
    t.promote_overlap = HG_PROMOTE_DOUBLE;
    hg_status_t fits = hg_gemm_config_check(&q, &t);
    CHECK_EQ(c.promote_overlap, HG_PROMOTE_DOUBLE);
    CHECK_OK(fits);
  }
  /* the kernels against the same tiles without pd */
  static const struct {
    hg_gemm_scale_t scale;
    int promote;
    const char *config;
    int unroll;
  } kernels[] = {
      {HG_SCALE_BLOCK, 0, "128x128x128,c2x1,s4", 4}, {HG_SCALE_BLOCK, 0, "64x128x128,pp,s5", 4},
      {HG_SCALE_BLOCK, 0, "128x64x128,s4,k3", 4},    {HG_SCALE_TENSOR, 4, "128x128x128,c2x1,s4", 8},
      {HG_SCALE_TENSOR, 3, "64x128x128,pp,s4", 6},   {HG_SCALE_TENSOR, 1, "128x64x128,c1x2,s6", 4},
      {HG_SCALE_ROW, 2, "128x64x128,c2x1,s4", 4}};
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
    int wgmmas[2] = {0};
    for (int pd = 0; pd < 2; pd++) {
      q = problem(1000, 3000, 4112, HG_E4M3);
      q.scale = kernels[i].scale;
      q.fp8_promote = kernels[i].promote;
      CHECK_OK(hg_gemm_problem_normalize(&q));
      CHECK_OK(hg_gemm_config_parse(kernels[i].config, &c));
      c.promote_overlap = pd ? HG_PROMOTE_DOUBLE : 0;
      CHECK_OK(hg_gemm_config_check(&q, &c));
      if (pd) check_generates(&q, &c);
      hg_gemm_kernel_t kk;
      hg_status_t st = hg_gemm_generate(&q, &c, HG_BACKEND_PTX, &kk);
      CHECK_OK(st);
      if (!hg_is_ok(&st)) continue;
      if (pd && !strstr(kk.k.name, "_pd")) HG_FAIL("%s: no _pd", kk.k.name);
      wgmmas[pd] = count(kk.k.ptx.data, "wgmma.mma_async");
      hg_gemm_kernel_free(&kk);
    }
    if (wgmmas[1] != (kernels[i].unroll + 1) * wgmmas[0])
      HG_FAIL("%s: %d wgmma with pd, %d without (unroll %d)", kernels[i].config, wgmmas[1],
              wgmmas[0], kernels[i].unroll);
  }
}

/* fp8 row- and block-wise scales: the problem rules and their sentences (fp8 only; block
 * promotes every k-block, so fast accumulation and other intervals are refused; its scale
 * leading dimensions default to the packed ones and may not be smaller), the tile rules (tile
 * K 128, tile N dividing 128), the heuristic's choice on DeepSeek-V3's shapes through ptxas
 * without spills, and the kernels: row-wise scales are two vector steps of the epilogue (no
 * scale-pointer factor), block-wise ones an fma per accumulator and k-block with the scale
 * leading dimensions as the last parameters (after split-K's workspace). */
static void test_fp8_scaling(void) {
  hg_gemm_problem_t p = problem(1000, 3000, 700, HG_BF16);
  p.scale = HG_SCALE_ROW;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_INVALID, "row-wise scales are for fp8");
  p = problem(1000, 3000, 720, HG_E4M3); /* K: 16-byte rows (TMA), a partial last k-block */
  p.scale = (hg_gemm_scale_t)3;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_INVALID, "fp8 scaling 3 is not known");
  p.scale = HG_SCALE_BLOCK;
  p.fp8_accum = HG_FP8_ACCUM_FAST;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_INVALID, "cannot apply them");
  p.fp8_accum = HG_FP8_ACCUM_ACCURATE;
  p.fp8_promote = 4;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_INVALID, "promotes every k-block");
  p.fp8_promote = 0;
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_EQ(p.scale_lda, 1000);
  CHECK_EQ(p.scale_ldb, 6); /* ceil(720 / 128) */
  CHECK_EQ(p.fp8_promote, 1);
  p.scale_lda = 999;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_INVALID, "scale_lda = 999 must be at least M");
  p.scale_lda = 1004;
  p.scale_ldb = 8;
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_EQ(p.scale_ldb, 8);
  hg_gemm_scale_t sc;
  CHECK_OK(hg_gemm_scale_parse("block", &sc));
  CHECK_EQ(sc, HG_SCALE_BLOCK);
  CHECK_ERR(hg_gemm_scale_parse("col", &sc), HG_ERR_PARSE, "not one of tensor, row, block");
  hg_gemm_config_t c;
  CHECK_OK(hg_gemm_config_parse("128x256x128,c2x1,s4", &c)); /* two scale blocks: registers */
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_UNSUPPORTED, "over the 192 that fit");
  CHECK_OK(hg_gemm_config_parse("128x96x128", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_UNSUPPORTED, "tile N must divide 128");
  CHECK_OK(hg_gemm_config_parse("128x128x64", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_UNSUPPORTED, "tile K must be 128");
  /* row-wise scales stage two vectors more: two sets of 96 are over their limit (176) */
  hg_gemm_problem_t r = problem(4096, 4096, 4096, HG_E4M3);
  r.scale = HG_SCALE_ROW;
  CHECK_OK(hg_gemm_problem_normalize(&r));
  CHECK_OK(hg_gemm_config_parse("128x192x128,c2x1,s4", &c));
  CHECK_ERR(hg_gemm_config_check(&r, &c), HG_ERR_UNSUPPORTED, "two accumulator sets of 96");
  /* the heuristic on DeepSeek-V3's projections (M 64, 128, 4096), both scalings */
  static const int64_t nk[][2] = {{2112, 7168},  {24576, 1536}, {32768, 512},
                                  {7168, 16384}, {4096, 7168},  {7168, 2048}};
  static const int64_t ms[] = {64, 128, 4096};
  for (int sm = 1; sm <= 2; sm++)
    for (size_t i = 0; i < sizeof nk / sizeof nk[0]; i++)
      for (size_t j = 0; j < sizeof ms / sizeof ms[0]; j++) {
        hg_gemm_problem_t q = problem(ms[j], nk[i][0], nk[i][1], HG_E4M3);
        q.scale = (hg_gemm_scale_t)sm;
        CHECK_OK(hg_gemm_heuristic(&q, 132, &c));
        CHECK_OK(hg_gemm_problem_normalize(&q));
        CHECK_OK(hg_gemm_config_check(&q, &c));
        check_generates(&q, &c);
      }
  /* the kernels */
  static const struct {
    hg_gemm_scale_t scale;
    hg_dtype_t b;
    const char *config, *name;
  } kernels[] = {{HG_SCALE_ROW, HG_E4M3, "128x176x128,c2x1,s4", "_srow_p4"},
                 {HG_SCALE_ROW, HG_E5M2, "128x128x128,pp,s4", "_srow"},
                 {HG_SCALE_BLOCK, HG_E4M3, "128x128x128,c2x1,s4", "_sblk"},
                 {HG_SCALE_BLOCK, HG_E5M2, "64x128x128,pp,s5", "_sblk"},
                 {HG_SCALE_BLOCK, HG_E4M3, "128x64x128,c1x2,s6", "_sblk"},
                 {HG_SCALE_BLOCK, HG_E4M3, "128x128x128,s4,k4", "_k4_sblk"}};
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
    hg_gemm_problem_t q = problem(1000, 3000, 4112, HG_E4M3);
    q.b_type = kernels[i].b;
    q.scale = kernels[i].scale;
    if (i == 1) q.fp8_accum = HG_FP8_ACCUM_FAST;
    CHECK_OK(hg_gemm_problem_normalize(&q));
    CHECK_OK(hg_gemm_config_parse(kernels[i].config, &c));
    check_generates(&q, &c);
    hg_gemm_kernel_t k;
    hg_status_t st = hg_gemm_generate(&q, &c, HG_BACKEND_PTX, &k);
    CHECK_OK(st);
    if (!hg_is_ok(&st)) continue;
    if (!strstr(k.k.name, kernels[i].name)) HG_FAIL("%s: no %s", k.k.name, kernels[i].name);
    const char *ptx = k.k.ptx.data;
    if (q.scale == HG_SCALE_BLOCK) {
      /* an fma per accumulator of a consumer (64 x 128 / 128 or 64 x 64 / 128, at least 32) */
      CHECK(count(ptx, "fma.rn.f32") >= 32);
      const char *lda = strstr(ptx, "_scale_lda"), *ldb = strstr(ptx, "_scale_ldb");
      CHECK(lda && ldb && lda < ldb);
      const char *ws = strstr(ptx, "_workspace");
      if (c.splits > 1) CHECK(ws && lda && ws < lda);
    } else {
      /* two vectors staged for the epilogue, no scale factor: the scales are read as vectors */
      CHECK(strstr(ptx, "_scale_a") != NULL && strstr(ptx, "_scale_lda") == NULL);
    }
    hg_gemm_kernel_free(&k);
  }
}

/* Staged block scales (HG_BLOCK_SCALES_SMEM, ",bs"): the text form round-trips and is given
 * once; the rules (block-wise scales only, operands by TMA only) and their sentences; the
 * stage grows by hg_block_scales_stage_bytes (128x128 tiles: 6 stages no longer fit beside two
 * 128-column epilogue buffers, and do beside 32-column ones); the kernels: the producer's
 * warp 1 loads tile_m / 32 A scales and the B scale a lane and stores them into the stage,
 * the consumers read 2 x atoms_m + 1 values a k-block body from shared memory instead of
 * global memory, and the full barriers count 32 arrivals more (PTX: the init count). */
/* Block-scaled tiles of 192 columns (two of B's 128-column scale blocks a tile): each
 * 64-column run of the accumulators takes its block's factor. Both scale paths generate
 * without a spill; the staged one copies the second block's scale by lane 1; a run that may
 * start in either block selects its factor (selp); existing tiles are untouched; the tuner
 * leaves them out (not yet checked on a GPU); other widths are refused with the sentence. */
static void test_block_scales_wide(void) {
  static const char *const cfgs[] = {"128x192x128,c2x1,s4,bs", "128x192x128,c1x2,s4",
                                     "64x192x128,pp,s4,bs", "128x192x128,c2x1,s4,pt,bs"};
  for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
    hg_gemm_problem_t p = problem(i == 2 ? 1000 : 4096, i == 2 ? 3000 : 7168, 16384, HG_E4M3);
    p.scale = HG_SCALE_BLOCK;
    CHECK_OK(hg_gemm_problem_normalize(&p));
    hg_gemm_config_t c;
    CHECK_OK(hg_gemm_config_parse(cfgs[i], &c));
    CHECK_OK(hg_gemm_config_check(&p, &c));
    check_generates(&p, &c);
  }
  hg_gemm_problem_t p = problem(4096, 7168, 16384, HG_E4M3);
  p.scale = HG_SCALE_BLOCK;
  p.scale_lda = 4097; /* rows not on 16 bytes: the side warp's cp.async path */
  CHECK_OK(hg_gemm_problem_normalize(&p));
  hg_gemm_config_t c;
  hg_gemm_kernel_t k;
  int copies[2] = {0, 0}, selects[2] = {0, 0};
  for (int wide = 0; wide < 2; wide++) {
    CHECK_OK(hg_gemm_config_parse(wide ? "128x192x128,c2x1,s4,bs" : "128x128x128,c2x1,s4,bs", &c));
    CHECK_OK(hg_gemm_generate(&p, &c, HG_BACKEND_PTX, &k));
    for (const char *at = k.k.ptx.data; (at = strstr(at, "cp.async.ca.shared.global")); at++)
      copies[wide]++;
    for (const char *at = k.k.ptx.data; (at = strstr(at, "selp.f32")); at++) selects[wide]++;
    hg_gemm_kernel_free(&k);
  }
  CHECK_EQ(copies[1], copies[0] + 1); /* the second block's scale */
  CHECK(selects[1] > selects[0]);
  CHECK_OK(hg_gemm_config_parse("128x160x128,c2x1,s4", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_UNSUPPORTED, "or be 192 or 256");
  CHECK_OK(hg_gemm_config_parse("128x192x128,c2x1,s4,pd", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_UNSUPPORTED, "three (two partial sets: pd)");
  /* the tuner tries 192 (checked on GPUs), not 256 (never run) */
  hg_gemm_config_t space[HG_GEMM_TUNE_MAX];
  const int ns = hg_gemm_tune_space(&p, space, HG_GEMM_TUNE_MAX);
  CHECK(ns > 0 && ns < HG_GEMM_TUNE_MAX);
  int wide = 0;
  for (int i = 0; i < ns; i++) {
    CHECK(space[i].tile_n <= 192);
    wide += space[i].tile_n == 192;
  }
  CHECK(wide >= 6);
  /* the heuristic: 128 x 192 where it fills the last wave 5% better than 128 x 128 (4096 x
   * 2112: 89% of 3 waves against 82% of 5; 1000 x 3000: 97% of one against 73% of 2), staged
   * scales without pd; 128 x 128 where the waves fill alike, beside an amax, and split */
  static const struct {
    int64_t m, n, k;
    bool amax;
    int tile_n, cluster_m;
  } h[] = {{4096, 2112, 7168, false, 192, 2},  {1000, 3000, 768, false, 192, 1},
           {4096, 7168, 16384, false, 128, 1}, {8192, 8192, 8192, false, 128, 1},
           {4096, 2112, 7168, true, 128, 1},   {128, 7168, 2048, false, 64, 1}};
  for (size_t i = 0; i < sizeof h / sizeof h[0]; i++) {
    hg_gemm_problem_t q = problem(h[i].m, h[i].n, h[i].k, HG_E4M3);
    q.scale = HG_SCALE_BLOCK;
    if (h[i].amax) {
      q.d_type = HG_E4M3;
      q.amax = true;
    }
    hg_gemm_config_t hc;
    CHECK_OK(hg_gemm_heuristic(&q, 132, &hc));
    if (hc.tile_n != h[i].tile_n || hc.cluster_m != h[i].cluster_m ||
        hc.block_scales != HG_BLOCK_SCALES_SMEM || (hc.tile_n == 192 && hc.promote_overlap != 0))
      HG_FAIL("%lldx%lldx%lld%s: heuristic tile N %d cluster_m %d bs %d overlap %d, want %d %d",
              (long long)h[i].m, (long long)h[i].n, (long long)h[i].k, h[i].amax ? " amax" : "",
              hc.tile_n, hc.cluster_m, (int)hc.block_scales, (int)hc.promote_overlap, h[i].tile_n,
              h[i].cluster_m);
  }
}

/* Staged block scales by TMA (kernels.h scales_tma): where both tables' leading dimensions are
 * multiples of 4 and the GEMM is not grouped, the side warp's lane 0 announces the stage's
 * scale bytes and issues two 2-D tensor loads (A's tile_m rows, B's box of 4 k-blocks at a
 * k-block rounded down to a multiple of 4, two block rows for a 192-column tile) instead of
 * the lanes' cp.async copies and arrivals; the consumers read B's scale 4 (k % 4) bytes into
 * its box; the maps' fields; the kernel's name says it (_bst); elsewhere the cp.async path. */
static void test_block_scales_tma(void) {
  static const struct {
    const char *config;
    int tile_m, b_rows;
  } kernels[] = {{"128x128x128,c1x2,s6,e32,pd,bs", 128, 1},
                 {"64x128x128,pp,s5,bs", 64, 1},
                 {"128x192x128,c2x1,s4,bs", 128, 2},
                 {"128x128x128,k4,bs", 128, 1}};
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
    hg_gemm_problem_t q = problem(1000, 3000, 4000, HG_E4M3); /* 32 k-blocks, 24 column blocks */
    q.scale = HG_SCALE_BLOCK;
    CHECK_OK(hg_gemm_problem_normalize(&q));
    hg_gemm_config_t c;
    CHECK_OK(hg_gemm_config_parse(kernels[i].config, &c));
    CHECK_OK(hg_gemm_config_check(&q, &c));
    check_generates(&q, &c);
    hg_gemm_kernel_t k;
    hg_status_t st = hg_gemm_generate(&q, &c, HG_BACKEND_PTX, &k);
    CHECK_OK(st);
    if (!hg_is_ok(&st)) return;
    CHECK(k.scales_tma);
    CHECK(strstr(k.k.name, "_bst") != NULL);
    const hg_tensormap_params_t *a = &k.map_scale_a, *b = &k.map_scale_b;
    CHECK_EQ(a->rank, 2);
    CHECK_EQ(a->global_dim[0], 1000u);
    CHECK_EQ(a->global_dim[1], 32u);
    CHECK_EQ(a->global_stride_bytes[0], 4000u);
    CHECK_EQ(a->box_dim[0], (uint32_t)kernels[i].tile_m);
    CHECK_EQ(a->box_dim[1], 1u);
    CHECK_EQ(b->global_dim[0], 32u);
    CHECK_EQ(b->global_dim[1], 24u);
    CHECK_EQ(b->global_stride_bytes[0], 128u);
    CHECK_EQ(b->box_dim[0], 4u);
    CHECK_EQ(b->box_dim[1], (uint32_t)kernels[i].b_rows);
    CHECK_OK(hg_tensormap_validate(a, 0));
    CHECK_OK(hg_tensormap_validate(b, 0));
    const char *ptx = k.k.ptx.data;
    CHECK(strstr(ptx, "hgp_tmap_scale_a") != NULL && strstr(ptx, "hgp_tmap_scale_b") != NULL);
    CHECK_EQ(count(ptx, "_tmap_scale_a, {"), 1);
    CHECK_EQ(count(ptx, "_tmap_scale_b, {"), 1);
    CHECK_EQ(count(ptx, "cp.async.ca.shared.global"), 0);
    CHECK_EQ(count(ptx, "cp.async.mbarrier.arrive.noinc"), 0);
    /* the tables' maps prefetched beside the others */
    CHECK_EQ(count(ptx, "_tmap_scale_a];"), 1);
    CHECK_EQ(count(ptx, "_tmap_scale_b];"), 1);
    CHECK(strstr(ptx, "-4;") != NULL); /* B's box at a multiple of 4 k-blocks */
    hg_gemm_kernel_free(&k);
  }
  /* grouped: B's map takes the group as a third dimension, a masked GEMM's A's too; a
   * contiguous GEMM's A box holds 4 rows more, from m0 rounded down to a multiple of 4 (units
   * start on any row), and its stages as many more bytes on either path */
  for (int masked = 0; masked < 2; masked++) {
    hg_gemm_problem_t q = problem(4096, 4096, 7168, HG_E4M3);
    q.scale = HG_SCALE_BLOCK;
    q.batch = 8;
    q.group = masked ? HG_GROUP_MASKED : HG_GROUP_CONTIGUOUS;
    CHECK_OK(hg_gemm_problem_normalize(&q));
    hg_gemm_config_t c;
    CHECK_OK(hg_gemm_config_parse("128x128x128,c2x1,s5,bs", &c));
    check_generates(&q, &c);
    hg_gemm_kernel_t k;
    hg_status_t st = hg_gemm_generate(&q, &c, HG_BACKEND_PTX, &k);
    CHECK_OK(st);
    if (!hg_is_ok(&st)) return;
    CHECK(k.scales_tma);
    CHECK_EQ(k.map_scale_a.rank, masked ? 3 : 2);
    CHECK_EQ(k.map_scale_b.rank, 3);
    CHECK_EQ(k.map_scale_a.box_dim[0], masked ? 128u : 132u);
    CHECK_EQ(k.map_scale_b.global_dim[2], 8u);
    CHECK_EQ(k.map_scale_b.global_stride_bytes[1], 4u * 32u * 56u); /* 32 column blocks */
    if (masked) CHECK_EQ(k.map_scale_a.global_stride_bytes[1], 4u * 56u * 4096u);
    CHECK_OK(hg_tensormap_validate(&k.map_scale_a, 0));
    CHECK_OK(hg_tensormap_validate(&k.map_scale_b, 0));
    CHECK_EQ(count(k.k.ptx.data, "cp.async.ca.shared.global"), 0);
    CHECK_EQ(count(k.k.ptx.data, "_tmap_scale_a, {"), 1);
    hg_gemm_kernel_free(&k);
  }
  CHECK_EQ(hg_block_scales_a_rows(128, true), 132);
  CHECK_EQ(hg_block_scales_stage_bytes(132), 768u); /* 528 bytes of A's, B's 128-byte slot */
  CHECK_EQ(hg_block_scales_stage_bytes(128), 640u);
  /* the cp.async path: a leading dimension not a multiple of 4, or a contiguous GEMM's
   * 256-row tile (its box would hold 260 rows) */
  for (int w = 0; w < 3; w++) {
    hg_gemm_problem_t q = problem(1000, 3000, 4000, HG_E4M3);
    q.scale = HG_SCALE_BLOCK;
    if (w == 0) q.scale_lda = 1001;
    if (w == 1) q.scale_ldb = 33;
    if (w == 2) {
      q.m = 4096;
      q.batch = 8;
      q.group = HG_GROUP_CONTIGUOUS;
    }
    CHECK_OK(hg_gemm_problem_normalize(&q));
    hg_gemm_config_t c;
    CHECK_OK(hg_gemm_config_parse(w == 2 ? "256x64x128,c1x1,s4,bs" : "128x128x128,c1x1,s5,bs", &c));
    hg_gemm_kernel_t k;
    hg_status_t st = hg_gemm_generate(&q, &c, HG_BACKEND_PTX, &k);
    CHECK_OK(st);
    if (!hg_is_ok(&st)) return;
    CHECK(!k.scales_tma);
    CHECK(strstr(k.k.name, "_bst") == NULL && strstr(k.k.name, "_bs") != NULL);
    CHECK(strstr(k.k.ptx.data, "tmap_scale") == NULL);
    CHECK(count(k.k.ptx.data, "cp.async.ca.shared.global") > 0);
    hg_gemm_kernel_free(&k);
  }
}

static void test_block_scales_staged(void) {
  hg_gemm_config_t c;
  char text[128];
  CHECK_OK(hg_gemm_config_parse("128x128x128,c2x1,s4,pd,bs", &c));
  CHECK_EQ(c.block_scales, HG_BLOCK_SCALES_SMEM);
  CHECK_EQ(c.promote_overlap, HG_PROMOTE_DOUBLE);
  hg_gemm_config_print(&c, text, sizeof text);
  CHECK(strstr(text, ",pd,bs") != NULL);
  CHECK_ERR(hg_gemm_config_parse("128x128x128,bs,bs", &c), HG_ERR_PARSE,
            "gives the block-scale path twice");
  hg_gemm_problem_t p = problem(4096, 4096, 4096, HG_E4M3);
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_OK(hg_gemm_config_parse("128x128x128,c1x1,s4,bs", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "this GEMM's scaling is tensor");
  p = problem(4096, 4096, 4096, HG_E4M3);
  p.scale = HG_SCALE_BLOCK;
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_OK(hg_gemm_config_check(&p, &c));
  c.block_scales = 2;
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "block-scale path 2 is not known");
  CHECK_OK(hg_gemm_config_parse("128x128x128,c1x1,s4,bs,cpasync-wgmma", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_UNSUPPORTED, "reads an operand with cp.async");
  CHECK_OK(hg_gemm_config_parse("128x128x128,c1x1,s6,e0", &c));
  CHECK_EQ(hg_gemm_max_stages(&p, &c), 6);
  CHECK_OK(hg_gemm_config_check(&p, &c));
  c.block_scales = HG_BLOCK_SCALES_SMEM;
  CHECK_EQ(hg_gemm_max_stages(&p, &c), 5);
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "at most 5 stages fit");
  c.epi_n = 32;
  CHECK_OK(hg_gemm_config_check(&p, &c));
  /* the tuner tries bs and pt,bs beside the global path, within its cap */
  hg_gemm_problem_t tp = problem(128, 2112, 7168, HG_E4M3);
  tp.scale = HG_SCALE_BLOCK;
  hg_gemm_config_t space[HG_GEMM_TUNE_MAX];
  const int ns = hg_gemm_tune_space(&tp, space, HG_GEMM_TUNE_MAX);
  CHECK(ns > 0 && ns < HG_GEMM_TUNE_MAX);
  int staged = 0, turns = 0;
  for (int i = 0; i < ns && i < HG_GEMM_TUNE_MAX; i++) {
    staged += space[i].block_scales == HG_BLOCK_SCALES_SMEM;
    turns += space[i].block_scales && space[i].promote_overlap == HG_PROMOTE_TURNS;
  }
  CHECK(staged >= 6 && turns >= 3);
  /* the kernels, each against the global path on the same tile */
  static const struct {
    const char *config;
    int tile_m, atoms_m, bodies; /* k-block bodies that read factors: 1, or pd's 4 + 1 */
  } kernels[] = {{"128x128x128,c2x1,s6,e32", 128, 1, 1}, {"64x128x128,pp,s5", 64, 1, 1},
                 {"128x64x128,c1x2,s6", 128, 1, 1},      {"128x128x128,s4,k4", 128, 1, 1},
                 {"128x128x128,c2x1,s4,pd", 128, 1, 5},  {"64x64x128,c1x1,s4,pp,pd", 64, 1, 5}};
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
    int n[2][4] = {{0}};
    for (int staged = 0; staged < 2; staged++) {
      hg_gemm_problem_t q = problem(1000, 3000, 4112, HG_E4M3);
      q.scale = HG_SCALE_BLOCK;
      CHECK_OK(hg_gemm_problem_normalize(&q));
      CHECK_OK(hg_gemm_config_parse(kernels[i].config, &c));
      c.block_scales = staged ? HG_BLOCK_SCALES_SMEM : HG_BLOCK_SCALES_GLOBAL;
      CHECK_OK(hg_gemm_config_check(&q, &c));
      if (staged) check_generates(&q, &c);
      hg_gemm_kernel_t k;
      hg_status_t st = hg_gemm_generate(&q, &c, HG_BACKEND_PTX, &k);
      CHECK_OK(st);
      if (!hg_is_ok(&st)) return;
      CHECK(strstr(k.k.name, "_bs") != NULL || !staged);
      const char *ptx = k.k.ptx.data;
      n[staged][0] = count(ptx, "ld.global.f32");
      n[staged][1] = count(ptx, "ld.shared.f32");
      n[staged][2] = count(ptx, "cp.async.ca.shared.global");
      n[staged][3] = count(ptx, "cp.async.mbarrier.arrive.noinc");
      hg_gemm_kernel_free(&k);
    }
    const int reads = (2 * kernels[i].atoms_m + 1) * kernels[i].bodies;
    const int copies = kernels[i].tile_m / 32 + 1;
    /* staged: the consumers' global loads become shared ones; the producer's second warp
     * copies each k-block's factors with 4-byte cp.async (no register round trip) and
     * arrives once they land */
    if (n[1][0] - n[0][0] != -reads || n[1][1] - n[0][1] != reads || n[1][2] - n[0][2] != copies ||
        n[1][3] - n[0][3] != 1)
      HG_FAIL("%s: staged - global: %d ld.global.f32 (want %d), %d ld.shared.f32 (%d), "
              "%d cp.async.ca (%d), %d cp.async.mbarrier.arrive (1)",
              kernels[i].config, n[1][0] - n[0][0], -reads, n[1][1] - n[0][1], reads,
              n[1][2] - n[0][2], copies, n[1][3] - n[0][3]);
  }
}

/* ,pa: the next unit's first k-block issued before the epilogue (HG_PROMOTE_AHEAD): text round
 * trip beside pd, the rules, the kernel's name, and the PTX of the issue and the landing:
 * one wait_group 0 on every path after the epilogue, no MMA in flight across the unit loop's
 * back edge for ptxas to find (no "serialized" notes, no spills: check_generates). */
static void test_promote_ahead(void) {
  hg_gemm_config_t c;
  char text[128];
  CHECK_OK(hg_gemm_config_parse("128x128x128,c1x2,s6,e32,pd,pa,bs", &c));
  CHECK_EQ(c.promote_overlap, HG_PROMOTE_DOUBLE | HG_PROMOTE_AHEAD);
  hg_gemm_config_print(&c, text, sizeof text);
  CHECK(strstr(text, ",pd,pa,bs") != NULL);
  CHECK_OK(hg_gemm_config_parse("128x128x128,pa", &c));
  CHECK_EQ(c.promote_overlap, HG_PROMOTE_AHEAD);
  CHECK_ERR(hg_gemm_config_parse("128x128x128,pa,pa", &c), HG_ERR_PARSE, "twice");
  hg_gemm_problem_t p = problem(4096, 4096, 4096, HG_E4M3);
  p.scale = HG_SCALE_BLOCK;
  CHECK_OK(hg_gemm_problem_normalize(&p));
  static const char *const bad[][2] = {
      {"128x128x128,c2x1,s4,pt,pa", "combines with two partial sets (pd) or nothing"},
      {"128x128x128,c2x1,s4,ps,pa", "combines with two partial sets (pd) or nothing"},
      {"64x128x128,pp,s4,pa", "not ping-pong"},
      {"128x128x128,s4,k3,pa", "split-K"},
      {"128x128x128,s4,sk,pa", "stream-K"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK_OK(hg_gemm_config_parse(bad[i][0], &c));
    CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, bad[i][1]);
  }
  hg_gemm_problem_t bf = problem(4096, 4096, 4096, HG_BF16);
  CHECK_OK(hg_gemm_problem_normalize(&bf));
  CHECK_OK(hg_gemm_config_parse("128x128x64,s4,pa", &c));
  CHECK_ERR(hg_gemm_config_check(&bf, &c), HG_ERR_INVALID, "promotion overlap (ps, pd, pt, pa)");
  static const struct {
    hg_gemm_scale_t scale;
    const char *config;
  } kernels[] = {{HG_SCALE_BLOCK, "128x128x128,c1x2,s6,e32,pd,pa,bs"},
                 {HG_SCALE_BLOCK, "128x192x128,c2x1,s4,pa,bs"},
                 {HG_SCALE_BLOCK, "128x64x128,s8,e32,pd,pa,bs"},
                 {HG_SCALE_ROW, "128x176x128,c2x1,s4,pa"},
                 {HG_SCALE_TENSOR, "128x128x128,c1x2,s4,pd,pa"}};
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
    hg_gemm_problem_t q = problem(1000, 3000, 4112, HG_E4M3);
    q.scale = kernels[i].scale;
    CHECK_OK(hg_gemm_problem_normalize(&q));
    CHECK_OK(hg_gemm_config_parse(kernels[i].config, &c));
    CHECK_OK(hg_gemm_config_check(&q, &c));
    check_generates(&q, &c);
    hg_gemm_kernel_t k;
    hg_status_t st = hg_gemm_generate(&q, &c, HG_BACKEND_PTX, &k);
    CHECK_OK(st);
    if (!hg_is_ok(&st)) return;
    CHECK(strstr(k.k.name, "_pa") != NULL);
    /* the unit loop holds the issue (a wgmma group committed) before the epilogue's TMA
     * store, then the landing's wait_group 0 after it */
    const char *store = strstr(k.k.ptx.data, "d.global.shared::cta.tile.bulk_group [%rd");
    const char *issue = NULL;
    for (const char *at = k.k.ptx.data; at && (!store || at < store);
         at = strstr(at + 1, "wgmma.commit_group"))
      issue = at;
    CHECK(store && issue && issue < store);
    CHECK(store && strstr(store, "wgmma.wait_group.sync.aligned 0") != NULL);
    hg_gemm_kernel_free(&k);
  }
}

/* MMA turns (HG_PROMOTE_TURNS, ",pt"): the text form; the rules (two consumers on one tile,
 * alone among the overlaps, accurate fp8 only) and their sentences; the kernels: each k-block's
 * MMAs between a turn wait and a hand-over on the ordering barriers (bar.sync 4/5 of 256
 * threads in each consumer's branch, bar.arrive to the other's), and consumer 0's last wait
 * after the units: 3 bar.sync and 2 bar.arrive of 256 more than without; the same wgmma. */
static void test_mma_turns(void) {
  hg_gemm_config_t c;
  char text[128];
  CHECK_OK(hg_gemm_config_parse("128x128x128,c2x1,s4,pt,bs", &c));
  CHECK_EQ(c.promote_overlap, HG_PROMOTE_TURNS);
  hg_gemm_config_print(&c, text, sizeof text);
  CHECK(strstr(text, ",pt,bs") != NULL);
  CHECK_ERR(hg_gemm_config_parse("128x128x128,pt,pd", &c), HG_ERR_PARSE,
            "gives the promotion overlap twice");
  hg_gemm_problem_t p = problem(4096, 4096, 4096, HG_E4M3);
  p.scale = HG_SCALE_BLOCK;
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_OK(hg_gemm_config_parse("128x128x128,c2x1,s4,pt", &c));
  CHECK_OK(hg_gemm_config_check(&p, &c));
  c.promote_overlap = HG_PROMOTE_TURNS | HG_PROMOTE_DOUBLE;
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "do not combine");
  c.promote_overlap = 24;
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "promotion overlap 24 is not known");
  CHECK_OK(hg_gemm_config_parse("64x128x128,pp,s4,pt", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "has one per tile");
  CHECK_OK(hg_gemm_config_parse("64x128x128,s4,pt", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "tile has one");
  hg_gemm_problem_t fast = problem(4096, 4096, 4096, HG_E4M3);
  fast.fp8_accum = HG_FP8_ACCUM_FAST;
  CHECK_OK(hg_gemm_problem_normalize(&fast));
  CHECK_OK(hg_gemm_config_parse("128x128x128,c2x1,s4,pt", &c));
  CHECK_ERR(hg_gemm_config_check(&fast, &c), HG_ERR_INVALID, "applies to fp8's accurate");
  static const struct {
    hg_gemm_scale_t scale;
    const char *config;
  } kernels[] = {{HG_SCALE_BLOCK, "128x128x128,c2x1,s4"},
                 {HG_SCALE_BLOCK, "128x128x128,c2x1,s6,e32,bs"},
                 {HG_SCALE_BLOCK, "128x64x128,s4,k3"},
                 {HG_SCALE_TENSOR, "128x128x128,c1x2,s4"},
                 {HG_SCALE_ROW, "256x64x128,s4"}};
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
    int n[2][3] = {{0}};
    for (int pt = 0; pt < 2; pt++) {
      hg_gemm_problem_t q = problem(1000, 3000, 4112, HG_E4M3);
      q.scale = kernels[i].scale;
      CHECK_OK(hg_gemm_problem_normalize(&q));
      CHECK_OK(hg_gemm_config_parse(kernels[i].config, &c));
      if (pt) c.promote_overlap = HG_PROMOTE_TURNS;
      CHECK_OK(hg_gemm_config_check(&q, &c));
      if (pt) check_generates(&q, &c);
      hg_gemm_kernel_t k;
      hg_status_t st = hg_gemm_generate(&q, &c, HG_BACKEND_PTX, &k);
      CHECK_OK(st);
      if (!hg_is_ok(&st)) return;
      CHECK(strstr(k.k.name, "_pt") != NULL || !pt);
      n[pt][0] = count(k.k.ptx.data, ", 256;") - count(k.k.ptx.data, "bar.arrive");
      n[pt][1] = count(k.k.ptx.data, "bar.arrive");
      n[pt][2] = count(k.k.ptx.data, "wgmma.mma_async");
      hg_gemm_kernel_free(&k);
    }
    if (n[1][0] - n[0][0] != 3 || n[1][1] - n[0][1] != 2 || n[1][2] != n[0][2])
      HG_FAIL("%s: with pt %d bar.sync, %d bar.arrive, %d wgmma more (want 3, 2, 0)",
              kernels[i].config, n[1][0] - n[0][0], n[1][1] - n[0][1], n[1][2] - n[0][2]);
  }
}

/* The heuristic's block scales: staged (bs) with two partial sets (pd) by default (none on
 * 4096x2112x7168's 128 x 192 tiles: three sets do not fit); the rule
 * nobs keeps the global loads (and no pd), pt gives a 128-row tile staged scales and turns
 * instead of pd, still within shared memory (the epilogue narrowed or a stage less); a 64-row
 * tile only the staged scales (one consumer: no turns); per-tensor problems nothing. */
static void test_block_scale_rule(void) {
  static const int64_t shapes[][3] = {{4096, 7168, 16384}, {4096, 2112, 7168}, {64, 7168, 2048}};
  hg_gemm_config_t c;
  for (size_t i = 0; i < 3; i++)
    for (int rule = 0; rule < 4; rule++) { /* the default, "nobs", "pt", "nobs,pt" */
      static const char *const texts[] = {"default", "nobs", "pt", "nobs,pt"};
      hg_gemm_rules_t r;
      CHECK_OK(hg_gemm_rules_parse(texts[rule], &r));
      const bool global = rule & 1, turns = rule & 2;
      hg_gemm_problem_t q = problem(shapes[i][0], shapes[i][1], shapes[i][2], HG_E4M3);
      q.scale = HG_SCALE_BLOCK;
      CHECK_OK(hg_gemm_heuristic_rules(&q, 132, &r, &c));
      CHECK_EQ(c.block_scales, !global ? HG_BLOCK_SCALES_SMEM : HG_BLOCK_SCALES_GLOBAL);
      const bool two = c.tile_m >= 128 && c.schedule != HG_SCHED_PINGPONG;
      CHECK_EQ(c.promote_overlap, turns     ? (two ? HG_PROMOTE_TURNS : 0)
                                  : !global ? (c.tile_n <= 128 ? HG_PROMOTE_DOUBLE : 0)
                                            : 0);
      CHECK_OK(hg_gemm_problem_normalize(&q));
      CHECK_OK(hg_gemm_config_check(&q, &c));
      if (!global) check_generates(&q, &c);
      hg_gemm_problem_t t = problem(shapes[i][0], shapes[i][1], shapes[i][2], HG_E4M3);
      CHECK_OK(hg_gemm_heuristic_rules(&t, 132, &r, &c));
      CHECK_EQ(c.block_scales, 0);
      CHECK_EQ(c.promote_overlap, 0);
    }
  /* the variable the rules replaced changes nothing */
  setenv("HOPGEN_FP8_BLOCK", "none", 1);
  hg_gemm_problem_t q = problem(4096, 7168, 16384, HG_E4M3);
  q.scale = HG_SCALE_BLOCK;
  CHECK_OK(hg_gemm_heuristic(&q, 132, &c));
  CHECK_EQ(c.block_scales, HG_BLOCK_SCALES_SMEM);
  unsetenv("HOPGEN_FP8_BLOCK");
}

/* The tuner's memory: a recorded configuration is found again for the same problem and device
 * (the last record wins), not for another device or shape, and not with the cache off. */
static void test_tuned_record(void) {
  char dir[] = "/tmp/hopgen-tuned-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char sub[64];
  snprintf(sub, sizeof sub, "%s/a/b", dir); /* created on the first record */
  setenv("HOPGEN_CACHE_DIR", sub, 1);
  hg_gemm_problem_t p = problem(4096, 2112, 7168, HG_BF16);
  CHECK_OK(hg_gemm_problem_normalize(&p));
  hg_gemm_config_t c1, c2, got;
  CHECK_OK(hg_gemm_config_parse("128x176x64,c1x1,s4", &c1));
  CHECK_OK(hg_gemm_config_parse("128x192x64,c2x1,s4,pp", &c2));
  CHECK(!hg_gemm_tuned_lookup(&p, "NVIDIA H200", &got));
  CHECK_OK(hg_gemm_tuned_record(&p, "NVIDIA H200", &c1));
  CHECK_OK(hg_gemm_tuned_record(&p, "NVIDIA H200", &c2));
  CHECK(hg_gemm_tuned_lookup(&p, "NVIDIA H200", &got));
  CHECK_EQ(got.tile_n, 192);
  CHECK_EQ(got.schedule, HG_SCHED_PINGPONG);
  CHECK(!hg_gemm_tuned_lookup(&p, "NVIDIA H100 80GB HBM3", &got));
  hg_gemm_problem_t q = p;
  q.k = 4096;
  CHECK(!hg_gemm_tuned_lookup(&q, "NVIDIA H200", &got));
  /* fp8's scaling mode and accumulation are part of the kind */
  hg_gemm_problem_t f = problem(4096, 2112, 7168, HG_E4M3);
  CHECK_OK(hg_gemm_problem_normalize(&f));
  CHECK_OK(hg_gemm_config_parse("128x128x128,c1x1,s6", &c1));
  CHECK_OK(hg_gemm_tuned_record(&f, "NVIDIA H200", &c1));
  CHECK(hg_gemm_tuned_lookup(&f, "NVIDIA H200", &got));
  f.scale = HG_SCALE_ROW;
  CHECK(!hg_gemm_tuned_lookup(&f, "NVIDIA H200", &got));
  f.scale = HG_SCALE_TENSOR;
  f.fp8_accum = HG_FP8_ACCUM_FAST;
  CHECK(!hg_gemm_tuned_lookup(&f, "NVIDIA H200", &got));
  /* the winner is what hg_gemm_build and hg_gemm_config_choose take for that device, also
   * where the decode rule would pick the decode kernel (a TMA winner), and for rows TMA
   * cannot address (looked up before the packed problem) */
  hg_device_info_t dev = {.sm_count = 132};
  snprintf(dev.name, sizeof dev.name, "NVIDIA H200");
  const struct {
    int64_t m, n, k, ld;
    const char *cfg;
  } won[] = {{1, 7168, 2048, 2048, "64x128x64,c1x1,s8"},
             {1, 12345, 678, 678, "16x16x32,c1x1,s1,ldg-mmasync"},
             {1, 4096, 4096, 4096, "16x64x32,c1x1,s1,k4a,ldg-mmasync"}};
  for (size_t i = 0; i < sizeof won / sizeof won[0]; i++) {
    hg_gemm_problem_t d = problem(won[i].m, won[i].n, won[i].k, HG_BF16);
    d.lda = d.ldb = won[i].ld;
    CHECK_OK(hg_gemm_problem_normalize(&d));
    hg_gemm_config_t w, chosen;
    CHECK_OK(hg_gemm_config_parse(won[i].cfg, &w));
    CHECK_OK(hg_gemm_tuned_record(&d, dev.name, &w));
    CHECK_OK(hg_gemm_config_choose(&d, HG_MAINLOOP_AUTO, &dev, NULL, &chosen));
    CHECK(chosen.tile_n == w.tile_n && chosen.tile_k == w.tile_k && chosen.splits == w.splits &&
          chosen.mainloop == w.mainloop);
    hg_gemm_kernel_t k;
    CHECK_OK(hg_gemm_build(&d, NULL, HG_MAINLOOP_AUTO, &dev, HG_BACKEND_PTX, &k));
    CHECK(k.config.tile_n == w.tile_n && k.config.tile_k == w.tile_k);
    CHECK_EQ(k.config.mainloop == HG_MAINLOOP_LDG_MMASYNC, w.mainloop == HG_MAINLOOP_LDG_MMASYNC);
    hg_gemm_kernel_free(&k);
    /* not for a batch-invariant problem */
    d.batch_invariant = true;
    CHECK_OK(hg_gemm_config_choose(&d, HG_MAINLOOP_AUTO, &dev, NULL, &chosen));
    CHECK(chosen.tile_n != w.tile_n || chosen.tile_k != w.tile_k);
  }
  setenv("HOPGEN_CACHE_DIR", "off", 1);
  CHECK(!hg_gemm_tuned_lookup(&p, "NVIDIA H200", &got));
  CHECK_OK(hg_gemm_tuned_record(&p, "NVIDIA H200", &c1));
  unsetenv("HOPGEN_CACHE_DIR");
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK(system(cmd) == 0);
}

/* The four combinations of the builders layer (issue 9): each mainloop, bf16 and f16, every
 * layout, aligned (TMA) and with K = 4097 (rows of 8194 B: staged window copies for K-major
 * operands), pingpong and cooperative; fp8 where the mainloop takes it,
 * and the refusals with their sentences. */
static void test_mainloops(void) {
  /* 3 stages of 128x128x64: beside them, two staging slots per operand read in place */
  static const char *const cfgs[] = {"128x128x64,c1x1,s3", "128x64x64,c1x1,s4,pp",
                                     "64x128x64,c1x1,s6"};
  int built = 0;
  /* (ldg-mmasync, the decode kernel, has its own matrix: test_decode) */
  for (int ml = HG_MAINLOOP_TMA_WGMMA; ml < HG_MAINLOOP_LDG_MMASYNC; ml++)
    for (int lay = 0; lay < 4; lay++)
      for (int odd = 0; odd < 2; odd++) {
        const int t = (lay + odd + ml) & 1; /* bf16 and f16 alternate over the cases */
        hg_gemm_problem_t p = problem(1000, 1000, odd ? 4097 : 4096, t ? HG_F16 : HG_BF16);
        p.a_k_major = lay & 1;
        p.b_k_major = (lay >> 1) & 1;
        p.d_type = lay == 2 ? HG_F32 : p.a_type;
        hg_gemm_config_t c;
        CHECK_OK(hg_gemm_config_parse(cfgs[(ml + lay + odd) % 3], &c));
        c.mainloop = (hg_gemm_mainloop_t)ml;
        check_generates(&p, &c);
        built++;
      }
  CHECK_EQ(built, 32);
  /* cp.async chunk sizes follow the rows: 8 (K = 4100), 4 (K = 4098 f16 MN-major: M rows of
   * 1002 elements), fp8 with window register copies (K = 4097) and 16-byte chunks. */
  hg_gemm_problem_t p = problem(1000, 1000, 4100, HG_BF16);
  hg_gemm_config_t c;
  CHECK_OK(hg_gemm_config_parse("128x128x64,c1x1,s4", &c));
  check_generates(&p, &c);
  p = problem(1002, 1000, 4098, HG_F16);
  p.a_k_major = false;
  check_generates(&p, &c);
  CHECK_OK(hg_gemm_config_parse("128x128x128,c1x1,s3", &c));
  p = problem(1000, 1000, 4097, HG_E4M3);
  check_generates(&p, &c);
  c.mainloop = HG_MAINLOOP_CPASYNC_WGMMA;
  p = problem(1000, 1000, 4096, HG_E4M3);
  check_generates(&p, &c);
  /* Refusals. */
  c.mainloop = HG_MAINLOOP_TMA_MMASYNC;
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_UNSUPPORTED,
            "mainloop tma-mmasync takes bf16/f16 operands, not e4m3");
  c.mainloop = HG_MAINLOOP_TMA_LDMATRIX_WGMMA_RS;
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_UNSUPPORTED, "ldmatrix moves 16-bit elements");
  p = problem(1000, 1000, 4097, HG_BF16);
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_OK(hg_gemm_config_parse("128x128x64,c2x1,s4", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_INVALID, "cp.async cannot multicast");
  hg_gemm_kernel_t k;
  /* AUTO repacks what TMA cannot address (rows of 4097 bf16 into rows of 4104) and runs
   * tma-wgmma on the packed problem; a named mainloop reads the rows in place. */
  CHECK_OK(hg_gemm_build(&p, NULL, HG_MAINLOOP_AUTO, NULL, HG_BACKEND_PTX, &k));
  CHECK(k.repack_a && k.repack_b && k.a_tma && k.b_tma);
  CHECK_EQ(k.problem.lda, 4104);
  CHECK_EQ(k.problem.ldb, 4104);
  CHECK_EQ(k.config.mainloop, HG_MAINLOOP_TMA_WGMMA);
  hg_gemm_kernel_free(&k);
  CHECK_OK(hg_gemm_build(&p, NULL, HG_MAINLOOP_TMA_MMASYNC, NULL, HG_BACKEND_PTX, &k));
  CHECK(!k.repack_a && !k.repack_b);
  CHECK_EQ(k.config.mainloop, HG_MAINLOOP_TMA_MMASYNC);
  CHECK(!k.a_tma && !k.b_tma); /* rows of 4097 bf16: cp.async, whatever the MMA */
  CHECK_EQ(k.a_vec, 2);
  CHECK_EQ(k.config.cluster_m * k.config.cluster_n, 1);
  CHECK(strstr(k.k.name, "_ms_cpa2b2") != NULL);
  hg_gemm_kernel_free(&k);
}

/* Grouped GEMMs (kernels.h, hg_gemm_group_t): both layouts, bf16 and fp8, the configurations
 * the heuristic and the tuner use, generated and assembled without spills; the name says the
 * layout and the group count; what a grouped GEMM does not take is refused with a sentence. */
static void test_grouped(void) {
  /* 3 stages of 128x256: 256 groups' tables (4 KiB) and the epilogue buffers leave no room for
   * a fourth */
  static const char *const cfg16[] = {"128x256x64,c2x1,s3,m8", "128x128x64,c1x1,s5,pp,n4",
                                      "64x128x64,c1x1,s6", "128x128x64,c2x1,s5"};
  static const char *const cfg8[] = {"128x256x128,c2x1,s3,m8", "128x128x128,c1x2,s5,pp",
                                     "64x128x128,c1x1,s6"};
  for (int t = 0; t < 2; t++)
    for (int g = 0; g < 2; g++) {
      hg_gemm_problem_t p = problem(4096, 2048, 7168, t ? HG_E4M3 : HG_BF16);
      p.batch = g ? 256 : 8;
      p.group = g ? HG_GROUP_MASKED : HG_GROUP_CONTIGUOUS;
      const char *const *cfgs = t ? cfg8 : cfg16;
      const int n = t ? 3 : 4;
      for (int i = 0; i < n; i++) {
        hg_gemm_config_t c;
        CHECK_OK(hg_gemm_config_parse(cfgs[i], &c));
        /* fp8: the two accumulator sets of the accurate accumulation do not fit the first two
         * tiles (128 accumulators a thread each): those run fast */
        p.fp8_accum = t && i < 2 ? HG_FP8_ACCUM_FAST : HG_FP8_ACCUM_ACCURATE;
        p.fp8_promote = 0;
        check_generates(&p, &c);
        hg_gemm_kernel_t k;
        hg_status_t s = hg_gemm_generate(&p, &c, HG_BACKEND_PTX, &k);
        CHECK_OK(s);
        if (!hg_is_ok(&s)) continue;
        CHECK(strstr(k.k.name, g ? "_gm256" : "_gc8") != NULL);
        /* whole tiles through TMA, a group's last tile element by element */
        CHECK(k.tma_store);
        CHECK(strstr(k.k.ptx.data, "cp.async.bulk.tensor.3d.global.shared::cta") != NULL);
        CHECK(strstr(k.k.ptx.data, "st.global") != NULL);
        CHECK(strstr(k.k.ptx.data, "bar.sync") != NULL); /* the tables' barriers */
        hg_gemm_kernel_free(&k);
      }
      hg_gemm_config_t c;
      CHECK_OK(hg_gemm_heuristic(&p, 132, &c));
      /* 192 columns on a 1x2 cluster (2x1 spilled), except fp8's promotion tiles */
      if (c.tile_n == 192 && !hg_gemm_promote(&p)) CHECK(c.cluster_m == 1);
      CHECK_OK(hg_gemm_config_check(&p, &c));
      check_generates(&p, &c);
    }
  /* fp8 row-wise: a scale per row of A, one per group and column of B (the epilogue's
   * vectors, the group's read per unit) */
  for (int g = 0; g < 2; g++) {
    hg_gemm_problem_t p = problem(4096, 2048, 7168, HG_E4M3);
    p.batch = 64;
    p.group = g ? HG_GROUP_MASKED : HG_GROUP_CONTIGUOUS;
    p.rowscale = p.colscale = true;
    hg_gemm_config_t c;
    CHECK_OK(hg_gemm_heuristic(&p, 132, &c));
    /* 192 columns on a 1x2 cluster (2x1 spilled), except fp8's promotion tiles */
    if (c.tile_n == 192 && !hg_gemm_promote(&p)) CHECK(c.cluster_m == 1);
    check_generates(&p, &c);
    CHECK_OK(hg_gemm_config_parse("128x128x128,c1x1,s5", &c));
    check_generates(&p, &c);
    p.colscale = false;
    CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_UNSUPPORTED, "with both vectors");
  }
  hg_grouped_gemm_problem_t gp = {.layout = HG_GROUP_CONTIGUOUS,
                                  .groups = 4,
                                  .rows = 100,
                                  .n = 64,
                                  .k = 64,
                                  .a_type = HG_BF16,
                                  .b_type = HG_BF16,
                                  .d_type = HG_BF16,
                                  .b_k_major = true,
                                  .scale = HG_GROUPED_SCALE_ROW};
  hg_gemm_problem_t gq;
  CHECK_ERR(hg_grouped_gemm_problem(&gp, &gq), HG_ERR_UNSUPPORTED, "for fp8 operands");
  gp.a_type = gp.b_type = HG_E4M3;
  CHECK_OK(hg_grouped_gemm_problem(&gp, &gq));
  CHECK(gq.rowscale && gq.colscale && gq.group == HG_GROUP_CONTIGUOUS && gq.batch == 4);
  /* uneven counts keep the total, leave a group empty and one far above the mean */
  int64_t counts[32], sum = 0, zeros = 0, max = 0;
  hg_grouped_gemm_counts(32, 512, 7, counts);
  for (int i = 0; i < 32; i++) {
    CHECK(counts[i] >= 0);
    sum += counts[i];
    zeros += counts[i] == 0;
    max = counts[i] > max ? counts[i] : max;
  }
  CHECK_EQ(sum, 32 * 512);
  CHECK(zeros >= 1);
  CHECK(max >= 2 * 512);
  hg_grouped_gemm_counts(4, 9, 0, counts);
  CHECK(counts[0] == 9 && counts[3] == 9);

  hg_gemm_problem_t p = problem(4096, 2048, 7168, HG_BF16);
  p.batch = 8;
  p.group = HG_GROUP_CONTIGUOUS;
  hg_gemm_problem_t q = p;
  q.beta = 1;
  CHECK_ERR(hg_gemm_problem_normalize(&q), HG_ERR_UNSUPPORTED, "beta * C");
  q = p;
  q.batch = HG_GROUPED_MAX_GROUPS + 1;
  CHECK_ERR(hg_gemm_problem_normalize(&q), HG_ERR_UNSUPPORTED, "at most 1024");
  q = p;
  q.lda = 7169;
  CHECK_ERR(hg_gemm_problem_normalize(&q), HG_ERR_UNSUPPORTED, "multiples of 16 bytes");
  q = p;
  q.group = (hg_gemm_group_t)7;
  CHECK_ERR(hg_gemm_problem_normalize(&q), HG_ERR_INVALID, "group layout 7");
  hg_gemm_config_t c;
  CHECK_OK(hg_gemm_config_parse("128x128x64,c1x1,s4,k4", &c));
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_UNSUPPORTED, "split-K (4) in a grouped GEMM");
  CHECK_OK(hg_gemm_config_parse("128x128x64,c1x1,s4,tma-mmasync", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_UNSUPPORTED, "it runs tma-wgmma");
}

/* Grouped GEMMs with fp8 block-wise scales (kernels.h, HG_GROUPED_SCALE_BLOCK): both layouts,
 * the scales read directly and staged (bs), K a multiple of 128 and not, N not a multiple of
 * 128, the heuristic's configuration; the grouped problem maps onto the dense block-wise one
 * (the same default leading dimensions) and what it cannot take is refused with a sentence. */
static void test_grouped_block(void) {
  static const char *const cfgs[] = {"128x128x128,c1x1,s5", "128x128x128,c1x1,s5,bs",
                                     "128x128x128,c2x1,s4,e32,bs", "64x128x128,c1x1,s6,pp",
                                     "128x64x128,c1x2,s6,bs"};
  static const int64_t ks[] = {7168, 2000};
  static const int64_t ns[] = {4096, 1000};
  for (int g = 0; g < 2; g++)
    for (int v = 0; v < 2; v++) {
      hg_grouped_gemm_problem_t gp = {.layout = g ? HG_GROUP_MASKED : HG_GROUP_CONTIGUOUS,
                                      .groups = g ? 32 : 8,
                                      .rows = g ? 512 : 8 * 512 + 64,
                                      .n = ns[v],
                                      .k = ks[v],
                                      .a_type = HG_E4M3,
                                      .b_type = HG_E4M3,
                                      .d_type = v ? HG_F32 : HG_BF16,
                                      .b_k_major = true,
                                      .scale = HG_GROUPED_SCALE_BLOCK};
      hg_gemm_problem_t p;
      CHECK_OK(hg_grouped_gemm_problem(&gp, &p));
      CHECK(p.scale == HG_SCALE_BLOCK && !p.rowscale && !p.colscale);
      CHECK_EQ(p.scale_lda, gp.rows);             /* A's scales M-major over the rows */
      CHECK_EQ(p.scale_ldb, (ks[v] + 127) / 128); /* B's K-major, packed */
      CHECK_EQ(p.fp8_promote, 1);
      for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        hg_gemm_config_t c;
        CHECK_OK(hg_gemm_config_parse(cfgs[i], &c));
        CHECK_OK(hg_gemm_config_check(&p, &c));
        check_generates(&p, &c);
        hg_gemm_kernel_t k;
        hg_status_t s = hg_gemm_generate(&p, &c, HG_BACKEND_PTX, &k);
        CHECK_OK(s);
        if (!hg_is_ok(&s)) continue;
        CHECK(strstr(k.k.name, g ? "_gm32_sblk" : "_gc8_sblk") != NULL);
        CHECK((strstr(k.k.name, "_bs") != NULL) == (strstr(cfgs[i], ",bs") != NULL));
        CHECK(strstr(k.k.ptx.data, "scale_ldb") != NULL);
        hg_gemm_kernel_free(&k);
      }
      hg_gemm_config_t c;
      CHECK_OK(hg_gemm_heuristic(&p, 132, &c));
      /* 192 columns on a 1x2 cluster (2x1 spilled), except fp8's promotion tiles */
      if (c.tile_n == 192 && !hg_gemm_promote(&p)) CHECK(c.cluster_m == 1);
      CHECK_OK(hg_gemm_config_check(&p, &c));
      check_generates(&p, &c);
    }
  hg_grouped_gemm_problem_t gp = {.layout = HG_GROUP_MASKED,
                                  .groups = 4,
                                  .rows = 100,
                                  .n = 256,
                                  .k = 512,
                                  .a_type = HG_BF16,
                                  .b_type = HG_BF16,
                                  .d_type = HG_BF16,
                                  .b_k_major = true,
                                  .scale = HG_GROUPED_SCALE_BLOCK};
  hg_gemm_problem_t q;
  CHECK_ERR(hg_grouped_gemm_problem(&gp, &q), HG_ERR_UNSUPPORTED,
            "block-wise scales are for fp8 operands");
  gp.a_type = gp.b_type = HG_E4M3;
  gp.scale_lda = 99;
  CHECK_ERR(hg_grouped_gemm_problem(&gp, &q), HG_ERR_INVALID, "must be at least M = 100");
  gp.scale_lda = 128;
  gp.scale_ldb = 8;
  CHECK_OK(hg_grouped_gemm_problem(&gp, &q));
  CHECK(q.scale_lda == 128 && q.scale_ldb == 8);
  gp.fp8_accum = HG_FP8_ACCUM_FAST;
  CHECK_ERR(hg_grouped_gemm_problem(&gp, &q), HG_ERR_INVALID, "fp8 accumulation 'fast'");
  gp.fp8_accum = HG_FP8_ACCUM_ACCURATE;
  gp.scale = HG_GROUPED_SCALE_ROW;
  CHECK_ERR(hg_grouped_gemm_problem(&gp, &q), HG_ERR_INVALID,
            "scale leading dimensions are for block-wise scales");
  gp.scale = (hg_grouped_scale_t)9;
  CHECK_ERR(hg_grouped_gemm_problem(&gp, &q), HG_ERR_INVALID, "tensor, row or block");
  /* the GEMM problem itself: row-wise is the vectors, and block takes none besides */
  hg_gemm_problem_t p = problem(4096, 2048, 7168, HG_E4M3);
  p.batch = 8;
  p.group = HG_GROUP_CONTIGUOUS;
  p.scale = HG_SCALE_ROW;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_UNSUPPORTED, "as its rowscale and colscale");
  p.scale = HG_SCALE_BLOCK;
  p.fp8_promote = 0; /* what the row-wise normalisation above filled in */
  p.rowscale = p.colscale = true;
  CHECK_ERR(hg_gemm_problem_normalize(&p), HG_ERR_UNSUPPORTED, "no row or column scale vectors");
  /* tile K other than 128: the dense rule */
  p.rowscale = p.colscale = false;
  p.fp8_promote = 0;
  CHECK_OK(hg_gemm_problem_normalize(&p));
  hg_gemm_config_t c;
  CHECK_OK(hg_gemm_config_parse("128x128x64,c1x1,s5", &c));
  CHECK_ERR(hg_gemm_config_check(&p, &c), HG_ERR_UNSUPPORTED, "tile K must be 128");
}

/* A kernel whose B goes through window copies (8 a round beside one consumer warpgroup):
 * ptxas takes it with no spill and keeps setmaxnreg; the 16-byte window loads are there. */
static void window_kernel_ok(const hg_gemm_kernel_t *k) {
  if (!k->k.ptx.data) return;
  hg_ptxas_report_t r;
  CHECK_OK(hg_ptxas_check(k->k.ptx.data, &r));
  CHECK_EQ(r.spill_store_bytes + r.spill_load_bytes + r.stack_frame_bytes, 0);
  CHECK(!r.setmaxnreg_ignored);
  CHECK(strstr(k->k.ptx.data, "ld.global.v4.") != NULL);
}

/* AUTO's rule for operands TMA cannot address (hg_gemm_repack_rule): decode against a weight
 * of odd rows reads the weight in place (16-byte windows from its 2-byte aligned rows, or
 * cp.async where they allow) and repacks the small activation; large problems repack both. */
static void test_repack_rule(void) {
  hg_gemm_problem_t p = problem(1, 12345, 678, HG_BF16); /* rows of 1356 B: 4-byte aligned */
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK(hg_gemm_repack_rule(&p, 0) && !hg_gemm_repack_rule(&p, 1));
  /* ... but a decode shape of such rows goes to the decode kernel, both operands in place */
  CHECK(hg_gemm_decode_rule(&p, NULL));
  hg_gemm_kernel_t k;
  CHECK_OK(hg_gemm_build(&p, NULL, HG_MAINLOOP_AUTO, NULL, HG_BACKEND_PTX, &k));
  CHECK_EQ(k.config.mainloop, HG_MAINLOOP_LDG_MMASYNC);
  CHECK(!k.repack_a && !k.repack_b && !k.a_tma && !k.b_tma);
  CHECK_EQ(k.problem.ldb, 678); /* B as the caller has it */
  hg_gemm_kernel_free(&k);
  hg_gemm_config_t cc;
  CHECK_OK(hg_gemm_config_choose(&p, HG_MAINLOOP_AUTO, NULL, NULL, &cc));
  CHECK_EQ(cc.mainloop, HG_MAINLOOP_LDG_MMASYNC);
  /* not for a batch-invariant problem (its M = 4096 twin's kernel), aligned weights (unless
   * the rule dv), M > 16, or a configuration given */
  hg_gemm_problem_t bi = p;
  bi.batch_invariant = true;
  CHECK(!hg_gemm_decode_rule(&bi, NULL));
  CHECK_OK(hg_gemm_build(&bi, NULL, HG_MAINLOOP_AUTO, NULL, HG_BACKEND_PTX, &k));
  CHECK(k.config.mainloop != HG_MAINLOOP_LDG_MMASYNC && !k.b_tma);
  hg_gemm_kernel_free(&k);
  hg_gemm_problem_t al = problem(1, 28672, 2048, HG_BF16); /* 112 MiB of weights */
  CHECK_OK(hg_gemm_problem_normalize(&al));
  hg_gemm_rules_t dv;
  CHECK_OK(hg_gemm_rules_parse("dv", &dv));
  CHECK(!hg_gemm_decode_rule(&al, NULL) && hg_gemm_decode_rule(&al, &dv));
  al.m = 17;
  al.k = 2049;
  al.lda = al.ldb = 2049;
  CHECK(!hg_gemm_decode_rule(&al, &dv));
  CHECK_OK(hg_gemm_config_parse("64x128x64", &cc));
  CHECK_OK(hg_gemm_build(&p, &cc, HG_MAINLOOP_AUTO, NULL, HG_BACKEND_PTX, &k));
  CHECK(k.repack_a && !k.repack_b && k.a_tma && !k.b_tma); /* AUTO's repack rule, as given */
  CHECK_EQ(k.b_vec, 4);
  hg_gemm_kernel_free(&k);
  p = problem(64, 4096, 4097, HG_BF16); /* M = 64: still one tile of rows */
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_OK(hg_gemm_build(&p, NULL, HG_MAINLOOP_AUTO, NULL, HG_BACKEND_PTX, &k));
  CHECK(k.repack_a && !k.repack_b && !k.b_tma);
  CHECK_EQ(k.b_vec, 2);
  window_kernel_ok(&k);
  hg_gemm_kernel_free(&k);
  /* fp8, few rows: rows of 4097 bytes, 1-byte aligned, copied in windows too */
  hg_gemm_problem_t q = problem(20, 4096, 4097, HG_E4M3);
  CHECK_OK(hg_gemm_problem_normalize(&q));
  CHECK_OK(hg_gemm_build(&q, NULL, HG_MAINLOOP_AUTO, NULL, HG_BACKEND_PTX, &k));
  CHECK(k.repack_a && !k.repack_b && !k.b_tma);
  CHECK_EQ(k.b_vec, 1);
  window_kernel_ok(&k);
  hg_gemm_kernel_free(&k);
  p.m = 65;
  CHECK(hg_gemm_repack_rule(&p, 1));
  p.n = 64;
  CHECK(!hg_gemm_repack_rule(&p, 0));     /* A read about once too */
  p = problem(1000, 1000, 4096, HG_BF16); /* rows TMA can address: nothing to decide */
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK(!hg_gemm_repack_rule(&p, 0) && !hg_gemm_repack_rule(&p, 1) && !hg_gemm_repack_rule(&p, 2));
}

/* wgmma RS (tma-ldmatrix-wgmma-rs): a wgmma reads its A registers until a wait_group covers it
 * (PTX ISA "wgmma.mma_async"), and the backends print the next k-block's fragments into the
 * same registers. Each K atom is its own group and its ldmatrix waits for the previous
 * k-block's group of the same atom (wait_group atoms - 1 = 3), so every kernel passes the
 * IR's hazard check (hg_ir_check_wgmma_registers, which refused these before: cooperative
 * tiles wider than 128 gave wrong products on H100 and H200), assembles without spills, and
 * commits a group per K atom. */
static void test_rs_register_a(void) {
  /* bf16 K-major on every tile and schedule; f16 with ragged rows (cp.async) and with an
   * MN-major A (ldmatrix .trans) on a few. Not ping-pong 128x192: ptxas serializes its wgmmas
   * (C7512, insufficient registers for a consumer's 192 accumulators), with or without the
   * waits, which is also why it was the one wide RS tile that gave the right products. */
  static const struct {
    const char *cfg;
    bool f16;
  } cases[] = {{"128x192x64", true},
               {"128x160x64", true},
               {"128x256x64,s3", true},
               {"128x128x64", false},
               {"64x192x64", true},
               {"64x256x64", false},
               {"128x128x64,c1x1,s4,pp", true},
               {"128x192x64,k4", true},
               {"128x192x64,k4a", false},
               {"128x192x64,c1x2", false},
               {"128x192x32,s6", false},
               {"128x256x64,c1x2,s3", false}};
  const struct {
    hg_dtype_t t;
    int64_t m, n, k;
    bool a_mn;
  } probs[] = {{HG_BF16, 256, 384, 8192, false},
               {HG_F16, 1000, 1000, 4100, false}, /* ragged, rows through cp.async */
               {HG_F16, 256, 384, 8192, true}};   /* MN-major A: ldmatrix .trans */
  int built = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (size_t j = 0; j < sizeof probs / sizeof probs[0]; j++) {
      if (j > 0 && !cases[i].f16) continue;
      hg_gemm_problem_t p = problem(probs[j].m, probs[j].n, probs[j].k, probs[j].t);
      p.a_k_major = !probs[j].a_mn;
      hg_gemm_config_t c;
      CHECK_OK(hg_gemm_config_parse(cases[i].cfg, &c));
      c.mainloop = HG_MAINLOOP_TMA_LDMATRIX_WGMMA_RS;
      CHECK_OK(hg_gemm_config_check(&p, &c));
      check_generates(&p, &c);
      hg_gemm_kernel_t k;
      hg_status_t st = hg_gemm_generate(&p, &c, HG_BACKEND_PTX, &k);
      if (!hg_is_ok(&st)) continue; /* check_generates said why */
      built++;
      /* one group per K atom, each ldmatrix after a wait down to atoms - 1 pending */
      const int atoms = c.tile_k / 16;
      char wait[64];
      snprintf(wait, sizeof wait, "wgmma.wait_group.sync.aligned %d;", atoms - 1);
      CHECK(strstr(k.k.ptx.data, wait) != NULL);
      int commits = 0;
      for (const char *q = k.k.ptx.data; (q = strstr(q, "wgmma.commit_group")); q++) commits++;
      if (commits < atoms)
        HG_FAIL("%s: %d wgmma.commit_group, not one per K atom (%d)", cases[i].cfg, commits, atoms);
      hg_gemm_kernel_free(&k);
    }
  CHECK_EQ(built, 24);
}

/* The decode kernel (ldg-mmasync, gemm_decode.c): every variant generates and ptxas takes it
 * without a spill (types x the rows' alignments x M x splits x epilogue chains), and each thing
 * it does not do is refused with its sentence. */
static void test_decode(void) {
  static const char *const chains[] = {"none", "bias,gelu", "residual", "bias_m,relu",
                                       "rowscale,colscale,silu"};
  static const int aligns[] = {16, 8, 4, 2};
  static const int64_t ms[] = {1, 8, 16};
  int built = 0;
  for (int t = 0; t < 2; t++)
    for (int al = 0; al < 4; al++)
      for (int mi = 0; mi < 3; mi++)
        for (int split = 0; split < 2; split++) {
          const int i = t + al + mi + split;
          hg_gemm_problem_t p = problem(ms[mi], 12345, 2049, t ? HG_F16 : HG_BF16);
          /* rows of ldb elements: 16-byte rows, or base alignments below 16 */
          p.ldb = p.lda = 2056;
          p.b_align = aligns[al];
          p.a_align = aligns[(al + i) % 4];
          CHECK_OK(hg_gemm_epilogue_parse(chains[i % 5], &p));
          p.bias_type = HG_BF16;
          if (i % 3 == 0) p.d_type = HG_F32;
          if (i % 4 == 1) p.d_type = HG_E4M3, p.amax = true;
          if (i % 5 == 1) p.aux = true;
          hg_gemm_config_t c;
          CHECK_OK(hg_gemm_heuristic_for(&p, HG_MAINLOOP_LDG_MMASYNC, 132, NULL, &c));
          CHECK_EQ(c.mainloop, HG_MAINLOOP_LDG_MMASYNC);
          CHECK_EQ(c.tile_k, aligns[al] == 16 && p.a_align == 16 ? 96 : 32);
          if (split) {
            c.splits = 4;
            c.split_atomic = 1;
          }
          check_generates(&p, &c);
          built++;
        }
  CHECK_EQ(built, 48);
  /* fp8 (m16n8k32): e4m3/e5m2 in any mix, per-tensor and row-wise scales, accurate (partial
   * sums promoted every iteration) and fast, rows of 16 and 1 bytes, split and not */
  static const hg_dtype_t f8[][2] = {
      {HG_E4M3, HG_E4M3}, {HG_E4M3, HG_E5M2}, {HG_E5M2, HG_E4M3}, {HG_E5M2, HG_E5M2}};
  for (int t = 0; t < 4; t++)
    for (int v = 0; v < 4; v++) {
      hg_gemm_problem_t p = problem(v & 1 ? 16 : 3, 7168, 2049, f8[t][0]);
      p.b_type = f8[t][1];
      p.lda = p.ldb = v & 2 ? 2049 : 2064;
      p.scale = (t + v) & 1 ? HG_SCALE_ROW : HG_SCALE_TENSOR;
      p.fp8_accum = t == 3 ? HG_FP8_ACCUM_FAST : HG_FP8_ACCUM_ACCURATE;
      CHECK_OK(hg_gemm_epilogue_parse(v == 1 ? "bias,gelu" : "none", &p));
      p.bias_type = HG_BF16;
      if (v == 3) p.d_type = HG_E4M3, p.amax = true;
      hg_gemm_config_t c;
      CHECK_OK(hg_gemm_heuristic_for(&p, HG_MAINLOOP_LDG_MMASYNC, 132, NULL, &c));
      CHECK_EQ(c.tile_k, v & 2 ? 64 : 128);
      if (t & 1) c.splits = 3, c.split_atomic = 1;
      check_generates(&p, &c);
      hg_gemm_kernel_t k;
      CHECK_OK(hg_gemm_generate(&p, &c, HG_BACKEND_PTX, &k));
      CHECK(strstr(k.k.ptx.data, "mma.sync.aligned.m16n8k32.row.col.f32") != NULL);
      CHECK(strstr(k.k.ptx.data, ".version 8.4") != NULL);
      hg_gemm_kernel_free(&k);
    }
  /* every tile a warp may take, aligned and not */
  static const char *const tiles[] = {"16x16x128", "16x64x32", "16x16x64,k3a", "16x32x32",
                                      /* s2: the full iterations pipelined in registers */
                                      "16x32x96,s2", "16x32x64,s2,k2a", "16x32x32,s2",
                                      "16x16x64,s2,k3a"};
  for (int i = 0; i < 8; i++) {
    hg_gemm_problem_t p = problem(16, 7168, 2048, i == 5 ? HG_E4M3 : HG_BF16);
    if (i == 2 || i == 3 || i >= 6) p.ldb = 2049;
    if (i == 6) CHECK_OK(hg_gemm_epilogue_parse("bias,gelu", &p));
    p.bias_type = HG_BF16;
    hg_gemm_config_t c;
    CHECK_OK(hg_gemm_config_parse(tiles[i], &c));
    c.mainloop = HG_MAINLOOP_LDG_MMASYNC;
    check_generates(&p, &c);
  }
  /* the heuristic: 16-row CTAs where they fill 7/8 of the SMs unsplit and K gives each warp
   * a full iteration (aligned rows), or for 16-bit operands where K is short (window rows);
   * 32 rows otherwise */
  static const struct {
    int64_t m, n, k, ldb;
    hg_dtype_t t;
    int tile_n, tile_k, splits;
  } dh[] = {
      {4, 2048, 7168, 7168, HG_BF16, 16, 128, 0},   {1, 4096, 4096, 4096, HG_BF16, 16, 128, 0},
      {1, 7168, 2048, 2048, HG_BF16, 32, 96, 0},    {1, 12345, 678, 678, HG_BF16, 16, 32, 0},
      {1, 7168, 2049, 2049, HG_BF16, 32, 32, 0},    {1, 1000, 678, 678, HG_BF16, 16, 32, 2},
      {4, 2048, 7168, 7168, HG_E4M3, 32, 128, 4},   {1, 1024, 4096, 4096, HG_BF16, 32, 96, 5},
      {1, 2048, 7168, 7168, HG_E4M3, 16, 256, 0},   {8, 4096, 4096, 4096, HG_E4M3, 16, 256, 0},
      {16, 4096, 1024, 1024, HG_E4M3, 32, 128, 0},  {1, 4096, 512, 512, HG_BF16, 32, 96, 0},
      {1, 4096, 28672, 28672, HG_E4M3, 16, 256, 0}, {1, 16384, 16384, 16384, HG_BF16, 16, 128, 0},
      {8, 28672, 4096, 4096, HG_E4M3, 16, 256, 0}};
  for (size_t i = 0; i < sizeof dh / sizeof dh[0]; i++) {
    hg_gemm_problem_t q = problem(dh[i].m, dh[i].n, dh[i].k, dh[i].t);
    q.lda = q.ldb = dh[i].ldb;
    hg_gemm_config_t c;
    CHECK_OK(hg_gemm_heuristic_for(&q, HG_MAINLOOP_LDG_MMASYNC, 132, NULL, &c));
    if (c.tile_n != dh[i].tile_n || c.tile_k != dh[i].tile_k ||
        (c.splits > 1 ? c.splits : 0) != dh[i].splits)
      HG_FAIL("decode heuristic %" PRId64 "x%" PRId64 "x%" PRId64
              ": 16x%dx%d k%d, expected 16x%dx%d k%d",
              dh[i].m, dh[i].n, dh[i].k, c.tile_n, c.tile_k, c.splits, dh[i].tile_n, dh[i].tile_k,
              dh[i].splits);
    check_generates(&q, &c);
  }
  /* splits fill the SMs where tiles are few, none for a deterministic problem */
  hg_gemm_problem_t p = problem(4, 1024, 7168, HG_BF16);
  hg_gemm_config_t c;
  CHECK_OK(hg_gemm_heuristic_for(&p, HG_MAINLOOP_LDG_MMASYNC, 132, NULL, &c));
  CHECK(c.splits >= 2 && c.split_atomic);
  char buf[128];
  hg_gemm_config_print(&c, buf, sizeof buf);
  hg_gemm_config_t back;
  CHECK_OK(hg_gemm_config_parse(buf, &back));
  CHECK_EQ(back.mainloop, HG_MAINLOOP_LDG_MMASYNC);
  p.deterministic = true;
  CHECK_OK(hg_gemm_heuristic_for(&p, HG_MAINLOOP_LDG_MMASYNC, 132, NULL, &c));
  CHECK_EQ(c.splits, 0);
  p.deterministic = false;
  /* rule dv: AUTO takes the decode kernel for decode shapes only, in place */
  hg_gemm_rules_t rules;
  CHECK_OK(hg_gemm_rules_parse("dv", &rules));
  CHECK(rules.decode);
  hg_gemm_rules_print(&rules, buf, sizeof buf);
  CHECK_STR(buf, "dv");
  p.ldb = 7169;
  CHECK_OK(hg_gemm_config_choose(&p, HG_MAINLOOP_AUTO, NULL, &rules, &c));
  CHECK_EQ(c.mainloop, HG_MAINLOOP_LDG_MMASYNC);
  /* rows TMA cannot address take it without the rule; aligned weights of up to 64 MB too
   * (2048 x 7168 bf16: 28 MiB), larger ones (28672 x 4096 bf16: 224 MiB) only with it */
  CHECK_OK(hg_gemm_config_choose(&p, HG_MAINLOOP_AUTO, NULL, NULL, &c));
  CHECK_EQ(c.mainloop, HG_MAINLOOP_LDG_MMASYNC);
  p.ldb = 7168;
  CHECK_OK(hg_gemm_config_choose(&p, HG_MAINLOOP_AUTO, NULL, NULL, &c));
  CHECK_EQ(c.mainloop, HG_MAINLOOP_LDG_MMASYNC);
  hg_gemm_problem_t wide = problem(4, 28672, 4096, HG_BF16);
  CHECK_OK(hg_gemm_config_choose(&wide, HG_MAINLOOP_AUTO, NULL, NULL, &c));
  CHECK(c.mainloop != HG_MAINLOOP_LDG_MMASYNC);
  CHECK_OK(hg_gemm_config_choose(&wide, HG_MAINLOOP_AUTO, NULL, &rules, &c));
  CHECK_EQ(c.mainloop, HG_MAINLOOP_LDG_MMASYNC);
  /* fp8: rows TMA cannot address, and aligned weights up to 64 MB, take it without the
   * rule; larger aligned weights (28672 x 4096: 112 MiB) only with it */
  hg_gemm_problem_t f8p = problem(4, 2048, 7169, HG_E4M3);
  CHECK_OK(hg_gemm_problem_normalize(&f8p));
  CHECK(hg_gemm_decode_rule(&f8p, NULL) && hg_gemm_decode_rule(&f8p, &rules));
  CHECK_OK(hg_gemm_config_choose(&f8p, HG_MAINLOOP_AUTO, NULL, NULL, &c));
  CHECK_EQ(c.mainloop, HG_MAINLOOP_LDG_MMASYNC);
  f8p = problem(8, 7168, 2048, HG_E4M3);
  CHECK_OK(hg_gemm_problem_normalize(&f8p));
  CHECK(hg_gemm_decode_rule(&f8p, NULL));
  f8p = problem(1, 28672, 4096, HG_E4M3);
  CHECK_OK(hg_gemm_problem_normalize(&f8p));
  CHECK(!hg_gemm_decode_rule(&f8p, NULL) && hg_gemm_decode_rule(&f8p, &rules));
  CHECK_OK(hg_gemm_config_choose(&f8p, HG_MAINLOOP_AUTO, NULL, NULL, &c));
  CHECK(c.mainloop != HG_MAINLOOP_LDG_MMASYNC);
  /* ... except weights of long rows (N <= 4096) up to M = 8: 4096 x 28672, 112 MiB */
  f8p = problem(8, 4096, 28672, HG_E4M3);
  CHECK_OK(hg_gemm_problem_normalize(&f8p));
  CHECK(hg_gemm_decode_rule(&f8p, NULL));
  CHECK_OK(hg_gemm_config_choose(&f8p, HG_MAINLOOP_AUTO, NULL, NULL, &c));
  CHECK(c.mainloop == HG_MAINLOOP_LDG_MMASYNC && c.tile_n == 16 && c.tile_k == 256);
  f8p.m = 9;
  CHECK(!hg_gemm_decode_rule(&f8p, NULL));
  hg_gemm_problem_t w16 = problem(1, 4096, 28672, HG_BF16); /* 16-bit weights that size: TMA */
  CHECK_OK(hg_gemm_problem_normalize(&w16));
  CHECK(!hg_gemm_decode_rule(&w16, NULL));
  /* ... unless the device's memory is of H200 class (4.4 TB/s or more): then fp8 up to M = 8
   * and 16-bit up to M = 2 where N <= K; the H100's memory keeps TMA */
  const hg_device_info_t h200 = {.name = "test device, HBM3e",
                                 .sm_count = 132,
                                 .mem_clock_khz = 3201000,
                                 .mem_bus_bits = 6144};
  const hg_device_info_t h100 = {
      .name = "test device, HBM3", .sm_count = 132, .mem_clock_khz = 2619000, .mem_bus_bits = 5120};
  static const struct {
    int64_t m, n, k;
    hg_dtype_t t;
    bool fast;
  } bw[] = {{1, 16384, 16384, HG_BF16, true},  {2, 4096, 28672, HG_BF16, true},
            {8, 16384, 16384, HG_BF16, false}, {1, 28672, 4096, HG_BF16, false},
            {8, 28672, 4096, HG_E4M3, true},   {16, 28672, 4096, HG_E4M3, false}};
  for (size_t i = 0; i < sizeof bw / sizeof bw[0]; i++) {
    hg_gemm_problem_t q = problem(bw[i].m, bw[i].n, bw[i].k, bw[i].t);
    CHECK_OK(hg_gemm_problem_normalize(&q));
    CHECK(!hg_gemm_decode_rule_on(&q, NULL, &h100) && !hg_gemm_decode_rule(&q, NULL));
    CHECK_EQ(hg_gemm_decode_rule_on(&q, NULL, &h200), bw[i].fast);
    CHECK_OK(hg_gemm_config_choose(&q, HG_MAINLOOP_AUTO, &h200, NULL, &c));
    CHECK_EQ(c.mainloop == HG_MAINLOOP_LDG_MMASYNC, bw[i].fast);
    if (bw[i].fast) CHECK_EQ(c.tile_n, 16);
    CHECK_OK(hg_gemm_config_choose(&q, HG_MAINLOOP_AUTO, &h100, NULL, &c));
    CHECK(c.mainloop != HG_MAINLOOP_LDG_MMASYNC);
  }
  f8p = problem(1, 28672, 4096, HG_E4M3);
  CHECK_OK(hg_gemm_problem_normalize(&f8p));
  f8p.scale = HG_SCALE_BLOCK; /* block-wise scales: not the decode kernel's */
  f8p.n = 7168;
  f8p.k = f8p.lda = f8p.ldb = 2048;
  CHECK(!hg_gemm_decode_rule(&f8p, &rules));
  hg_gemm_problem_t big = problem(17, 2048, 7168, HG_BF16);
  CHECK_OK(hg_gemm_config_choose(&big, HG_MAINLOOP_AUTO, NULL, &rules, &c));
  CHECK(c.mainloop != HG_MAINLOOP_LDG_MMASYNC);
  /* refusals */
  hg_gemm_kernel_t k;
  CHECK_OK(hg_gemm_config_parse("16x32x96,ldg-mmasync", &c));
  CHECK_ERR(hg_gemm_generate(&big, &c, HG_BACKEND_PTX, &k), HG_ERR_UNSUPPORTED, "M <= 16");
  hg_gemm_problem_t q = problem(8, 2048, 7168, HG_BF16);
  q.b_k_major = false;
  CHECK_ERR(hg_gemm_generate(&q, &c, HG_BACKEND_PTX, &k), HG_ERR_UNSUPPORTED, "B is MN-major");
  q = problem(8, 2048, 7168, HG_BF16);
  q.a_k_major = false;
  CHECK_ERR(hg_gemm_generate(&q, &c, HG_BACKEND_PTX, &k), HG_ERR_UNSUPPORTED, "A is MN-major");
  q = problem(8, 2048, 7168, HG_BF16);
  q.batch = 2;
  CHECK_ERR(hg_gemm_generate(&q, &c, HG_BACKEND_PTX, &k), HG_ERR_UNSUPPORTED, "batch of 2");
  q = problem(8, 2048, 7168, HG_E4M3);
  q.scale = HG_SCALE_BLOCK;
  CHECK_ERR(hg_gemm_generate(&q, &c, HG_BACKEND_PTX, &k), HG_ERR_UNSUPPORTED,
            "not e4m3 x e4m3 with block-wise scales");
  q = problem(8, 2048, 7168, HG_BF16);
  CHECK_OK(hg_gemm_config_parse("16x32x96,k4,ldg-mmasync", &c));
  CHECK_ERR(hg_gemm_generate(&q, &c, HG_BACKEND_PTX, &k), HG_ERR_UNSUPPORTED,
            "by atomic adds only");
  CHECK_OK(hg_gemm_config_parse("16x32x96,k4a,ldg-mmasync", &c));
  q.deterministic = true;
  CHECK_ERR(hg_gemm_generate(&q, &c, HG_BACKEND_PTX, &k), HG_ERR_INVALID, "deterministic");
  q.deterministic = false;
  CHECK_OK(hg_gemm_config_parse("64x32x96,ldg-mmasync", &c));
  CHECK_ERR(hg_gemm_generate(&q, &c, HG_BACKEND_PTX, &k), HG_ERR_INVALID, "tile M = 64");
  CHECK_OK(hg_gemm_config_parse("16x64x128,ldg-mmasync", &c));
  CHECK_ERR(hg_gemm_generate(&q, &c, HG_BACKEND_PTX, &k), HG_ERR_INVALID, "at most 6");
  CHECK_OK(hg_gemm_config_parse("16x32x96,c2x1,ldg-mmasync", &c));
  CHECK_ERR(hg_gemm_generate(&q, &c, HG_BACKEND_PTX, &k), HG_ERR_INVALID, "use c1x1");
}

int main(void) {
  HG_RUN(test_grouped);
  HG_RUN(test_grouped_block);
  HG_RUN(test_tuned_record);
  HG_RUN(test_config_text);
  HG_RUN(test_problem_rules);
  HG_RUN(test_config_rules);
  HG_RUN(test_heuristic_shapes);
  HG_RUN(test_epilogue_batched);
  HG_RUN(test_tuner_space);
  HG_RUN(test_smem_accounting);
  HG_RUN(test_split_k);
  HG_RUN(test_split_scatter);
  HG_RUN(test_stream_k);
  HG_RUN(test_fp8_accum);
  HG_RUN(test_fp8_stagger);
  HG_RUN(test_fp8_double);
  HG_RUN(test_fp8_scaling);
  HG_RUN(test_block_scales_staged);
  HG_RUN(test_block_scales_wide);
  HG_RUN(test_block_scales_tma);
  HG_RUN(test_mma_turns);
  HG_RUN(test_promote_ahead);
  HG_RUN(test_block_scale_rule);
  HG_RUN(test_split_heuristic);
  HG_RUN(test_two_spans);
  HG_RUN(test_spec_cache);
  HG_RUN(test_activations);
  HG_RUN(test_bias);
  HG_RUN(test_output_conversions);
  HG_RUN(test_staged_store);
  HG_RUN(test_swap_ab);
  HG_RUN(test_gelu_formulas);
  HG_RUN(test_pingpong_chains);
  HG_RUN(test_mainloops);
  HG_RUN(test_decode);
  HG_RUN(test_rs_register_a);
  HG_RUN(test_repack_rule);
  return hg_test_finish();
}
