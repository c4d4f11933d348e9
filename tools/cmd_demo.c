/* hopgen demo: the README's main job. Walks the pipeline once, printing as it goes:
 * the layout algebra, the Hopper plans it derives, kernels generated from them and checked
 * with ptxas, and, when a GPU is present, those kernels run and checked against the CPU
 * model / an f32 reference and timed against cuBLASLt. Exit 0 when every step that could
 * run passed. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "hopgen/kernels.h"
#include "hopgen/layout.h"
#include "hopgen/sm90.h"

static int failures;

static void step_fail(const char *what, hg_status_t s) {
  failures++;
  printf("  FAILED %s: %s\n", what, s.msg);
}

static void demo_layout(void) {
  printf("== 1. CuTe layout algebra\n");
  const char *ops[][3] = {{"logical_divide", "(8,16):(16,1)", "[2:1,4:1]"},
                          {"composition", "(4,8):(8,1)", "(2,4):(1,4)"},
                          {"complement", "(2,2):(1,6)", "24"},
                          {"blocked_product", "(2,2):(1,2)", "(3,4):(1,3)"},
                          {"right_inverse", "((2,2),4):((1,8),2)", ""}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    const char *argv[2] = {ops[i][1], ops[i][2]};
    char out[256];
    hg_status_t s = hg_layout_op(ops[i][0], ops[i][2][0] ? 2 : 1, argv, out, sizeof out);
    if (!hg_is_ok(&s)) {
      step_fail(ops[i][0], s);
      continue;
    }
    printf("  %-15s %s %s = %s\n", ops[i][0], ops[i][1], ops[i][2], out);
  }
  hg_composed_t sw;
  hg_status_t s = hg_composed_parse("Sw<2,0,2> o 0 o (4,8):(8,1)", &sw);
  if (hg_is_ok(&s)) {
    printf("  a swizzled layout, Sw<2,0,2> o 0 o (4,8):(8,1):\n");
    s = hg_layout_show(&sw, stdout);
  }
  if (!hg_is_ok(&s)) step_fail("swizzled layout", s);
}

static void demo_plans(void) {
  printf("\n== 2. Hopper plans from the algebra\n");
  hg_tiled_mma_spec_t ms = {.a = HG_BF16,
                            .b = HG_BF16,
                            .acc = HG_F32,
                            .tile_m = 128,
                            .tile_n = 256,
                            .tile_k = 64,
                            .wg_m = 2,
                            .wg_n = 1,
                            .auto_swizzle = true};
  hg_tiled_mma_t tm;
  hg_status_t s = hg_tiled_mma_make(&ms, &tm);
  if (!hg_is_ok(&s)) return step_fail("TiledMma", s);
  char buf[256];
  hg_composed_print(&tm.a_op.layout, buf, sizeof buf);
  printf("  TiledMma 128x256x64 bf16, 2 consumer warpgroups: %s, %d x %d x %d per warpgroup\n",
         tm.atom.ptx, tm.atoms_m, tm.atoms_n, tm.atoms_k);
  printf("  A stage (128x64, K-major, 128B swizzle): %s\n", buf);
  printf("  A descriptor: LBO %u B, SBO %u B, layout type %d; k-block advances:",
         tm.a_op.desc.lbo_bytes, tm.a_op.desc.sbo_bytes, tm.a_op.desc.layout_type);
  for (int k = 0; k < tm.a_op.kblocks; k++) printf(" %u", tm.a_op.kblock_offset_bytes[k]);
  printf(" B\n");
  hg_tma_tensor_t g = {.dtype = HG_BF16,
                       .rank = 2,
                       .shape = {8192, 8192},
                       .stride = {8192, 1},
                       .base_align_bytes = 16};
  hg_tma_options_t o = hg_tma_options_default(HG_TMA_LOAD);
  o.cluster = 2;
  hg_tma_plan_t p;
  s = hg_tma_plan_make(&g, &tm.a_op.layout, &o, &p);
  if (!hg_is_ok(&s)) return step_fail("TMA plan", s);
  printf("  TMA plan for that stage, multicast over 2 CTAs: box %ux%u, %d boxes, CTA r issues "
         "box r with mask 0x%x, each barrier expects %u B\n",
         p.map.box_dim[0], p.map.box_dim[1], p.num_boxes, p.mcast_mask, p.expect_tx_bytes);
}

/* Generate and assemble; returns true when ptxas accepted it. */
static bool report_ptxas(const char *what, const hg_kernel_t *k) {
  hg_ptxas_report_t r;
  memset(&r, 0, sizeof r);
  hg_status_t s = hg_cli_ptxas(k->ptx.data, &r);
  if (!hg_is_ok(&s)) {
    step_fail(what, s);
    return false;
  }
  printf("  %-34s generated in %6.2f ms, ptxas: %3d registers, %d B spilled, %u B smem\n", k->name,
         k->gen_ms, r.registers, r.spill_store_bytes + r.spill_load_bytes, k->smem_bytes);
  return true;
}

static void demo_generate(const hg_tma_spec_t *tma, const hg_gemm_problem_t *gp) {
  printf("\n== 3. Kernels generated (PTX backend) and checked with ptxas -arch=sm_90a\n");
  hg_kernel_t k;
  hg_status_t s = hg_tma_generate(tma, HG_BACKEND_PTX, &k, NULL);
  if (hg_is_ok(&s)) {
    report_ptxas("TMA load", &k);
    hg_kernel_free(&k);
  } else {
    step_fail("TMA load kernel", s);
  }
  hg_gemm_kernel_t gk;
  s = hg_gemm_build(gp, NULL, HG_MAINLOOP_AUTO, NULL, HG_BACKEND_PTX, &gk);
  if (!hg_is_ok(&s)) return step_fail("GEMM kernel", s);
  const hg_gemm_config_t c = gk.config;
  char cfg[128];
  hg_gemm_config_print(&c, cfg, sizeof cfg);
  printf("  GEMM %" PRId64 "x%" PRId64 "x%" PRId64 " bf16, heuristic configuration %s\n", gp->m,
         gp->n, gp->k, cfg);
  report_ptxas("GEMM", &gk.k);
  hg_gemm_kernel_free(&gk);
}

static void demo_run(const hg_tma_spec_t *tma, const hg_gemm_problem_t *gp) {
  printf("\n== 4. On the GPU\n");
  hg_rt_t *rt;
  hg_status_t s = hg_cli_rt_open(0, &rt);
  if (!hg_is_ok(&s)) {
    printf("  no GPU run: %s\n", s.msg);
    return;
  }
  printf("  device: %s (sm_%d%d, %d SMs)\n", hg_rt_device(rt)->name, hg_rt_device(rt)->cc_major,
         hg_rt_device(rt)->cc_minor, hg_rt_device(rt)->sm_count);
  hg_tma_run_options_t to = {.runs = 2};
  hg_tma_result_t tr;
  s = hg_tma_run(rt, tma, HG_BACKEND_PTX, &to, &tr);
  if (hg_is_ok(&s))
    printf("  TMA load, tiles from a negative origin: %u CTAs, %" PRIu64
           " B of shared memory identical to the CPU model; spec -> launched kernel %.1f ms "
           "cold, %.2f ms warm\n",
           tr.ctas, tr.bytes_compared, tr.cold.to_launch_ms, tr.warm.to_launch_ms);
  else
    step_fail("TMA load check", s);
  hg_gemm_run_options_t go = hg_gemm_run_options_default();
  go.check = go.bench = true;
  go.iters = 20;
  hg_gemm_report_t gr;
  s = hg_gemm_run(rt, gp, &go, &gr);
  if (hg_is_ok(&s)) {
    printf("  GEMM: relative error %.2e against the f32 reference (cuBLASLt: %.2e)\n", gr.rel_err,
           gr.rel_err_blas);
    printf("  GEMM: hopgen %.1f TFLOP/s, cuBLASLt %.1f TFLOP/s, ratio %.3f (same data, same "
           "process)\n",
           gr.tflops, gr.blas_tflops, gr.ratio);
  } else {
    step_fail("GEMM check", s);
  }
  hg_rt_close(rt);
}

int hg_cmd_demo(int argc, char **argv) {
  hg_cli_args_t a;
  hg_cli_args_init(&a, "demo", NULL, 0, argc, argv);
  if (a.help) {
    printf("usage: hopgen demo\n  The pipeline once: layout algebra, Hopper plans, kernels "
           "generated and checked with ptxas, and on a GPU a TMA load checked against the CPU "
           "model and a GEMM checked and timed against cuBLASLt.\n");
    return 0;
  }
  a.max_operands = 0;
  const char *v;
  if (hg_cli_next(&a, &v) == HG_CLI_ERROR) return hg_cli_usage(&a);
  failures = 0;
  hg_cli_cache_note();
  hg_tma_spec_t tma = hg_tma_spec_default(HG_TMA_LOAD);
  tma.shape[0] = 1000; /* rows of a row-major [N, K] matrix */
  tma.shape[1] = 1000;
  tma.origin[0] = -5;  /* tiles hang over the top and left edges: zero fill there */
  tma.origin[1] = -32; /* the innermost origin: a multiple of 16 bytes (TMA's rule) */
  tma.grid[0] = tma.grid[1] = 0;
  hg_gemm_problem_t gp = {.m = 4096,
                          .n = 4096,
                          .k = 4096,
                          .batch = 1,
                          .a_type = HG_BF16,
                          .b_type = HG_BF16,
                          .d_type = HG_BF16,
                          .a_k_major = true,
                          .b_k_major = true,
                          .alpha = 1.0f};
  demo_layout();
  demo_plans();
  demo_generate(&tma, &gp);
  demo_run(&tma, &gp);
  printf("\n%s\n", failures ? "demo: FAILED" : "demo: done");
  return failures ? 1 : 0;
}
