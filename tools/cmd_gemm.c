/* hopgen gemm / hopgen bench gemm: argument parsing and printing around the library's GEMM
 * generator and its run/check/bench/tune driver (include/hopgen/kernels.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hopgen/kernels.h"

static const char gemm_usage[] =
    "usage: hopgen gemm M N K [options]      (or --m M --n N --k K)\n"
    "  D = alpha * A x B + beta * C; D and C row-major MxN.\n"
    "  --type T            A and B type: bf16 (default), f16, e4m3, e5m2\n"
    "  --a T / --b T       A and B types separately (fp8 may mix e4m3 and e5m2)\n"
    "  --d T               D and C type: bf16 (default), f16, f32\n"
    "  --layout XY         storage of A and B: R(ow) or C(olumn)-major each; RC (default) is\n"
    "                      K-major A and B (the 'TN' GEMM); fp8 needs RC\n"
    "  --batch B           batch count (strided, packed by default)\n"
    "  --lda/--ldb/--ldc/--ldd L   leading dimensions (elements; default packed)\n"
    "  --alpha A --beta B  scalars (default 1 and 0)\n"
    "  --config CFG        e.g. 128x256x64,c2x1,s4,coop,m8 (default: tuned or heuristic)\n"
    "  --mainloop ML       tma-wgmma | cpasync-wgmma | tma-mmasync | tma-ldmatrix-wgmma-rs\n"
    "                      (default auto: tma-wgmma, or cpasync-wgmma for operands TMA cannot\n"
    "                      address: leading dimension not a multiple of 16 bytes)\n"
    "  --compare-repack    with --bench: also time repacking such operands + tma-wgmma\n"
    "  --backend ptx|mlir  code generation backend (default ptx)\n"
    "  --check             run on the GPU and compare with an f32 reference and cuBLASLt\n"
    "  --bench             time hopgen and cuBLASLt side by side on the same data\n"
    "  --tune              search configurations on the GPU and keep the fastest in the cache\n"
    "  --iters N --warmup N --seed S\n"
    "  --emit FILE         write the PTX; --emit-mlir FILE writes the MLIR (mlir backend)\n"
    "  --json              machine-readable output\n"
    "Without --check/--bench/--tune the kernel is generated and checked with ptxas (no GPU).\n";

static int parse_i64(const char *s, int64_t *out) {
  char *end;
  long long v = strtoll(s, &end, 10);
  if (!*s || *end) return 0;
  *out = v;
  return 1;
}

typedef struct gemm_args {
  hg_gemm_problem_t p;
  hg_gemm_config_t cfg;
  bool have_cfg, check, bench, tune, json, compare_repack;
  hg_gemm_mainloop_t mainloop;
  hg_backend_t be;
  int iters, warmup;
  uint64_t seed;
  const char *emit, *emit_mlir;
} gemm_args_t;

static hg_status_t parse_layout(const char *s, hg_gemm_problem_t *p) {
  if (strlen(s) != 2 || !strchr("RrCc", s[0]) || !strchr("RrCc", s[1]))
    return hg_error(HG_ERR_PARSE,
                    "--layout '%s': give two letters, R or C, for the storage of A and B (RC = "
                    "row-major A, column-major B, both K-major)",
                    s);
  p->a_k_major = s[0] == 'R' || s[0] == 'r';
  p->b_k_major = s[1] == 'C' || s[1] == 'c';
  return hg_ok();
}

static hg_status_t parse_args(int argc, char **argv, gemm_args_t *g) {
  memset(g, 0, sizeof *g);
  g->p = (hg_gemm_problem_t){.batch = 1,
                             .a_type = HG_BF16,
                             .b_type = HG_BF16,
                             .d_type = HG_BF16,
                             .a_k_major = true,
                             .b_k_major = true,
                             .alpha = 1.0f,
                             .beta = 0.0f};
  g->be = HG_BACKEND_PTX;
  g->iters = 30;
  g->warmup = 5;
  int positional = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE                                                                                 \
  do {                                                                                             \
    if (!v) return hg_error(HG_ERR_PARSE, "%s needs a value", a);                                  \
    i++;                                                                                           \
  } while (0)
    int64_t x;
    if (a[0] != '-') {
      if (!parse_i64(a, &x) || positional >= 3)
        return hg_error(HG_ERR_PARSE, "unexpected argument '%s' (sizes are M N K)", a);
      int64_t *dst[3] = {&g->p.m, &g->p.n, &g->p.k};
      *dst[positional++] = x;
    } else if (!strcmp(a, "--m") || !strcmp(a, "--n") || !strcmp(a, "--k") || !strcmp(a, "--lda") ||
               !strcmp(a, "--ldb") || !strcmp(a, "--ldc") || !strcmp(a, "--ldd") ||
               !strcmp(a, "--batch") || !strcmp(a, "--iters") || !strcmp(a, "--warmup") ||
               !strcmp(a, "--seed")) {
      NEED_VALUE;
      if (!parse_i64(v, &x)) return hg_error(HG_ERR_PARSE, "%s '%s' is not an integer", a, v);
      if (!strcmp(a, "--m")) g->p.m = x;
      if (!strcmp(a, "--n")) g->p.n = x;
      if (!strcmp(a, "--k")) g->p.k = x;
      if (!strcmp(a, "--lda")) g->p.lda = x;
      if (!strcmp(a, "--ldb")) g->p.ldb = x;
      if (!strcmp(a, "--ldc")) g->p.ldc = x;
      if (!strcmp(a, "--ldd")) g->p.ldd = x;
      if (!strcmp(a, "--batch")) g->p.batch = (int)x;
      if (!strcmp(a, "--iters")) g->iters = (int)x;
      if (!strcmp(a, "--warmup")) g->warmup = (int)x;
      if (!strcmp(a, "--seed")) g->seed = (uint64_t)x;
    } else if (!strcmp(a, "--type") || !strcmp(a, "--a") || !strcmp(a, "--b") ||
               !strcmp(a, "--d")) {
      NEED_VALUE;
      hg_dtype_t t;
      HG_TRY(hg_status_wrap(hg_dtype_parse(v, &t), "%s: ", a));
      if (!strcmp(a, "--type")) g->p.a_type = g->p.b_type = t;
      if (!strcmp(a, "--a")) g->p.a_type = t;
      if (!strcmp(a, "--b")) g->p.b_type = t;
      if (!strcmp(a, "--d")) g->p.d_type = t;
    } else if (!strcmp(a, "--layout")) {
      NEED_VALUE;
      HG_TRY(parse_layout(v, &g->p));
    } else if (!strcmp(a, "--alpha") || !strcmp(a, "--beta")) {
      NEED_VALUE;
      char *end;
      float f = strtof(v, &end);
      if (!*v || *end) return hg_error(HG_ERR_PARSE, "%s '%s' is not a number", a, v);
      if (!strcmp(a, "--alpha"))
        g->p.alpha = f;
      else
        g->p.beta = f;
    } else if (!strcmp(a, "--config")) {
      NEED_VALUE;
      HG_TRY(hg_gemm_config_parse(v, &g->cfg));
      g->have_cfg = true;
    } else if (!strcmp(a, "--mainloop")) {
      NEED_VALUE;
      HG_TRY(hg_status_wrap(hg_gemm_mainloop_parse(v, &g->mainloop), "--mainloop: "));
    } else if (!strcmp(a, "--compare-repack")) {
      g->compare_repack = true;
    } else if (!strcmp(a, "--backend")) {
      NEED_VALUE;
      HG_TRY(hg_backend_parse(v, &g->be));
    } else if (!strcmp(a, "--emit")) {
      NEED_VALUE;
      g->emit = v;
    } else if (!strcmp(a, "--emit-mlir")) {
      NEED_VALUE;
      g->emit_mlir = v;
    } else if (!strcmp(a, "--check")) {
      g->check = true;
    } else if (!strcmp(a, "--bench")) {
      g->bench = true;
    } else if (!strcmp(a, "--tune")) {
      g->tune = true;
    } else if (!strcmp(a, "--json")) {
      g->json = true;
    } else {
      return hg_error(HG_ERR_PARSE, "unknown option '%s' (see hopgen gemm --help)", a);
    }
#undef NEED_VALUE
  }
  if (g->p.m == 0 || g->p.n == 0 || g->p.k == 0)
    return hg_error(HG_ERR_PARSE, "give the sizes: hopgen gemm M N K (or --m/--n/--k)");
  if (g->iters < 1) return hg_error(HG_ERR_PARSE, "--iters must be at least 1");
  return hg_ok();
}

static hg_status_t write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return hg_error(HG_ERR_IO, "cannot write %s", path);
  fputs(text ? text : "", f);
  fclose(f);
  return hg_ok();
}

static void json_num(FILE *f, const char *key, double v, bool comma) {
  if (isfinite(v))
    fprintf(f, "\"%s\": %.6g%s", key, v, comma ? ", " : "");
  else
    fprintf(f, "\"%s\": null%s", key, comma ? ", " : "");
}

static void print_report_json(FILE *f, const hg_gemm_problem_t *p, const hg_gemm_report_t *r) {
  char cfg[128];
  hg_gemm_config_print(&r->config, cfg, sizeof cfg);
  fprintf(f, "{\"m\": %" PRId64 ", \"n\": %" PRId64 ", \"k\": %" PRId64 ", \"batch\": %d, ", p->m,
          p->n, p->k, p->batch);
  hg_cli_json_str(f, "a", hg_dtype_name(p->a_type), ", ");
  hg_cli_json_str(f, "b", hg_dtype_name(p->b_type), ", ");
  hg_cli_json_str(f, "d", hg_dtype_name(p->d_type), ", ");
  hg_cli_json_str(f, "config", cfg, ", ");
  hg_cli_json_str(f, "kernel", r->kernel, ", ");
  hg_cli_json_str(f, "mainloop", hg_gemm_mainloop_name(r->config.mainloop), ", ");
  fprintf(f, "\"tma_store\": %s, \"cp_async_a\": %s, \"cp_async_b\": %s, \"grid\": %d, ",
          r->tma_store ? "true" : "false", r->cp_async_a ? "true" : "false",
          r->cp_async_b ? "true" : "false", r->grid);
  fprintf(f, "\"seed\": %" PRIu64 ", ", r->seed);
  json_num(f, "gen_ms", r->gen_ms, true);
  fprintf(f, "\"cache_hit\": %s, ", r->jit.cache_hit ? "true" : "false");
  json_num(f, "jit_ms", r->jit.compile_ms, true);
  json_num(f, "load_ms", r->jit.load_ms, true);
  json_num(f, "first_run_ms", r->first_run_ms, true);
  fprintf(f, "\"checked\": %s, ", r->checked ? "true" : "false");
  json_num(f, "rel_err", r->rel_err, true);
  json_num(f, "rel_err_cublas", r->rel_err_blas, true);
  json_num(f, "tolerance", r->tolerance, true);
  fprintf(f, "\"nonfinite\": %" PRId64 ", ", r->bad);
  fprintf(f, "\"benched\": %s, ", r->benched ? "true" : "false");
  json_num(f, "ms", r->ms, true);
  json_num(f, "tflops", r->tflops, true);
  json_num(f, "cublas_ms", r->blas_ms, true);
  json_num(f, "cublas_tflops", r->blas_tflops, true);
  json_num(f, "ratio", r->ratio, true);
  json_num(f, "repack_ms", r->repack_ms, true);
  hg_cli_json_str(f, "note", r->note, "");
  fprintf(f, "}");
}

static void print_report_text(const hg_gemm_problem_t *p, const hg_gemm_report_t *r) {
  char cfg[128];
  hg_gemm_config_print(&r->config, cfg, sizeof cfg);
  printf("gemm %" PRId64 "x%" PRId64 "x%" PRId64 " batch %d  %s x %s -> %s\n", p->m, p->n, p->k,
         p->batch, hg_dtype_name(p->a_type), hg_dtype_name(p->b_type), hg_dtype_name(p->d_type));
  char cpa[48] = "", cpb[48] = "";
  if (r->cp_async_a) snprintf(cpa, sizeof cpa, ", A by cp.async (%d B chunks)", r->a_vec);
  if (r->cp_async_b) snprintf(cpb, sizeof cpb, ", B by cp.async (%d B chunks)", r->b_vec);
  printf("  config   %s  (kernel %s, grid %d, %s, %s epilogue%s%s)\n", cfg, r->kernel, r->grid,
         hg_gemm_mainloop_name(r->config.mainloop), r->tma_store ? "TMA-store" : "direct-store",
         cpa, cpb);
  printf("  timing   generate %.2f ms, %s %.2f ms, load %.2f ms, spec->first result %.2f ms\n",
         r->gen_ms, r->jit.cache_hit ? "cache hit" : "JIT", r->jit.compile_ms, r->jit.load_ms,
         r->first_run_ms);
  if (r->checked)
    printf("  check    rel. error %.3g vs f32 reference (tolerance %.3g)%s; cuBLASLt %.3g\n",
           r->rel_err, r->tolerance, r->bad ? " NON-FINITE OUTPUT" : "", r->rel_err_blas);
  if (r->benched)
    printf(
        "  bench    hopgen %.4f ms = %.1f TFLOP/s | cuBLASLt %.4f ms = %.1f TFLOP/s | ratio %.3f\n",
        r->ms, r->tflops, r->blas_ms, r->blas_tflops, r->ratio);
  if (r->benched && r->repack_ms > 0)
    printf("  repack   repack + tma-wgmma %.4f ms: cp.async path is %.3fx that\n", r->repack_ms,
           r->repack_ms / r->ms);
  if (r->note[0]) printf("  note     %s\n", r->note);
}

int hg_cmd_gemm(int argc, char **argv) {
  if (hg_cli_wants_help(argc, argv)) {
    fputs(gemm_usage, stdout);
    return 0;
  }
  gemm_args_t g;
  hg_status_t s = parse_args(argc, argv, &g);
  if (!hg_is_ok(&s)) {
    fprintf(stderr, "hopgen: %s\n%s", s.msg, gemm_usage);
    return 2;
  }
  const bool gpu = g.check || g.bench || g.tune;
  if (!gpu) {
    /* Generation only: the library's step from problem to kernel (no device: the heuristic
     * for an H100/H200's 132 SMs), then ptxas. */
    hg_gemm_kernel_t k;
    s = hg_gemm_build(&g.p, g.have_cfg ? &g.cfg : NULL, g.mainloop, NULL, g.be, &k);
    if (!hg_is_ok(&s)) return hg_cli_fail(s);
    const hg_gemm_config_t c = k.config;
    hg_ptxas_report_t rep;
    memset(&rep, 0, sizeof rep);
    s = hg_ptxas_check(k.k.ptx.data, &rep);
    if (hg_is_ok(&s) && g.emit) s = write_file(g.emit, k.k.ptx.data);
    if (hg_is_ok(&s) && g.emit_mlir) s = write_file(g.emit_mlir, k.k.mlir.data);
    char cfg[128];
    hg_gemm_config_print(&c, cfg, sizeof cfg);
    if (g.json) {
      printf("{\"kernel\": \"%s\", \"config\": \"%s\", \"backend\": \"%s\", \"gen_ms\": %.3f, "
             "\"smem_bytes\": %u, \"threads\": %u, \"tma_store\": %s, \"ptxas\": %s, "
             "\"registers\": %d, \"spill_bytes\": %d, \"mainloop\": \"%s\"}\n",
             k.k.name, cfg, hg_backend_name(g.be), k.k.gen_ms, k.k.smem_bytes, k.k.threads,
             k.tma_store ? "true" : "false", hg_is_ok(&s) ? "true" : "false", rep.registers,
             rep.spill_store_bytes + rep.spill_load_bytes, hg_gemm_mainloop_name(c.mainloop));
    } else {
      printf("kernel %s\n  config %s, %u threads, %u B shared memory, %s epilogue\n"
             "  generated in %.2f ms (%s backend); ptxas: %s, %d registers, %d B spilled%s\n",
             k.k.name, cfg, k.k.threads, k.k.smem_bytes, k.tma_store ? "TMA-store" : "direct-store",
             k.k.gen_ms, hg_backend_name(g.be), hg_is_ok(&s) ? "ok" : "REJECTED", rep.registers,
             rep.spill_store_bytes + rep.spill_load_bytes,
             !k.a_tma || !k.b_tma ? "\n  operands TMA cannot address are read with cp.async" : "");
    }
    hg_gemm_kernel_free(&k);
    return hg_is_ok(&s) ? 0 : hg_cli_fail(s);
  }
  hg_rt_t *rt;
  s = hg_rt_open(0, &rt);
  if (!hg_is_ok(&s)) return hg_cli_fail(s);
  hg_gemm_run_options_t o = hg_gemm_run_options_default();
  o.backend = g.be;
  o.check = g.check;
  o.bench = g.bench;
  o.iters = g.iters;
  o.warmup = g.warmup;
  o.seed = g.seed;
  o.compare_repack = g.compare_repack;
  if (g.mainloop != HG_MAINLOOP_AUTO && !g.have_cfg) {
    /* A mainloop without a configuration: the heuristic's for that mainloop. */
    hg_gemm_kernel_t k;
    s = hg_gemm_build(&g.p, NULL, g.mainloop, hg_rt_device(rt), HG_BACKEND_PTX, &k);
    if (!hg_is_ok(&s)) {
      hg_rt_close(rt);
      return hg_cli_fail(s);
    }
    g.cfg = k.config;
    g.have_cfg = true;
    hg_gemm_kernel_free(&k);
  }
  if (g.mainloop != HG_MAINLOOP_AUTO) g.cfg.mainloop = g.mainloop;
  o.config = g.have_cfg ? &g.cfg : NULL;
  hg_gemm_report_t r;
  if (g.tune) {
    hg_gemm_config_t best;
    s = hg_gemm_tune(rt, &g.p, &o, &best, &r);
    if (hg_is_ok(&s) && !g.json) {
      char cfg[128];
      hg_gemm_config_print(&best, cfg, sizeof cfg);
      printf("tuned: %s (kept in the cache)\n", cfg);
    }
    if (hg_is_ok(&s) && (g.check || g.bench)) {
      o.config = &best;
      s = hg_gemm_run(rt, &g.p, &o, &r);
    }
  } else {
    s = hg_gemm_run(rt, &g.p, &o, &r);
  }
  if (r.kernel[0]) {
    hg_gemm_problem_t p = g.p;
    hg_gemm_problem_normalize(&p);
    if (g.json) {
      print_report_json(stdout, &p, &r);
      printf("\n");
    } else {
      print_report_text(&p, &r);
    }
  }
  hg_rt_close(rt);
  return hg_is_ok(&s) ? 0 : hg_cli_fail(s);
}

/* ------------------------------------------------------------------ bench gemm */

static const int64_t shape_set[][3] = {
    {2048, 2048, 2048},  {4096, 4096, 4096},  {8192, 8192, 8192}, {16384, 16384, 16384},
    {8192, 28672, 8192}, {8192, 8192, 28672}, {4096, 7168, 2048}, {4096, 2112, 7168},
    {4096, 24576, 1536}, {4096, 7168, 16384}, {128, 7168, 2048},  {128, 24576, 1536},
    {64, 7168, 16384}};

static const char bench_usage[] =
    "usage: hopgen bench gemm [--types bf16,e4m3] [--shapes all|N] [--no-check] [--iters N]\n"
    "                         [--backend ptx|mlir] [--json FILE]\n"
    "  The issue's shape set for each type (fp8 with bf16 output), checked against the f32\n"
    "  reference and timed against cuBLASLt on the same data; prints a table, the geometric\n"
    "  mean of the ratios and the lowest one; --json writes every report.\n";

int hg_cli_bench_gemm(int argc, char **argv) {
  if (hg_cli_wants_help(argc, argv)) {
    fputs(bench_usage, stdout);
    return 0;
  }
  const char *types = "bf16,e4m3", *json = NULL;
  int nshapes = (int)(sizeof shape_set / sizeof shape_set[0]);
  bool check = true;
  hg_backend_t be = HG_BACKEND_PTX;
  int iters = 30;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--types") && v)
      types = argv[++i];
    else if (!strcmp(a, "--json") && v)
      json = argv[++i];
    else if (!strcmp(a, "--no-check"))
      check = false;
    else if (!strcmp(a, "--iters") && v)
      iters = atoi(argv[++i]);
    else if (!strcmp(a, "--shapes") && v) {
      i++;
      if (strcmp(v, "all") != 0) nshapes = atoi(v);
    } else if (!strcmp(a, "--backend") && v) {
      hg_status_t s = hg_backend_parse(argv[++i], &be);
      if (!hg_is_ok(&s)) return hg_cli_fail(s);
    } else {
      fprintf(stderr, "hopgen: unknown or incomplete option '%s'\n%s", a, bench_usage);
      return 2;
    }
  }
  if (nshapes < 1 || nshapes > (int)(sizeof shape_set / sizeof shape_set[0])) {
    fprintf(stderr, "hopgen: --shapes takes 'all' or 1..%d\n",
            (int)(sizeof shape_set / sizeof shape_set[0]));
    return 2;
  }
  hg_rt_t *rt;
  hg_status_t s = hg_rt_open(0, &rt);
  if (!hg_is_ok(&s)) return hg_cli_fail(s);
  FILE *jf = NULL;
  if (json) {
    jf = fopen(json, "w");
    if (!jf) {
      hg_rt_close(rt);
      return hg_cli_fail(hg_error(HG_ERR_IO, "cannot write %s", json));
    }
    fprintf(jf, "{\"device\": \"%s\", \"driver\": %d, \"backend\": \"%s\", \"runs\": [\n",
            hg_rt_device(rt)->name, hg_rt_device(rt)->driver_version, hg_backend_name(be));
  }
  int failures = 0, first_json = 1;
  char list[128];
  snprintf(list, sizeof list, "%s", types);
  for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    hg_dtype_t ty;
    s = hg_dtype_parse(t, &ty);
    if (!hg_is_ok(&s)) {
      hg_cli_fail(s);
      failures++;
      continue;
    }
    printf("%-5s %6s %6s %6s  %-26s %9s %9s %7s %9s\n", "type", "M", "N", "K", "config", "hopgen",
           "cuBLASLt", "ratio", "rel.err");
    double log_sum = 0, min_ratio = 1e9;
    int n_ratio = 0;
    for (int i = 0; i < nshapes; i++) {
      hg_gemm_problem_t p = {.m = shape_set[i][0],
                             .n = shape_set[i][1],
                             .k = shape_set[i][2],
                             .batch = 1,
                             .a_type = ty,
                             .b_type = ty,
                             .d_type = HG_BF16,
                             .a_k_major = true,
                             .b_k_major = true,
                             .alpha = 1.0f};
      hg_gemm_run_options_t o = hg_gemm_run_options_default();
      o.backend = be;
      o.check = check;
      o.bench = true;
      o.iters = iters;
      hg_gemm_report_t r;
      s = hg_gemm_run(rt, &p, &o, &r);
      char cfg[128];
      hg_gemm_config_print(&r.config, cfg, sizeof cfg);
      printf("%-5s %6" PRId64 " %6" PRId64 " %6" PRId64 "  %-26s %9.1f %9.1f %7.3f %9.2e%s\n", t,
             p.m, p.n, p.k, cfg, r.tflops, r.blas_tflops, r.ratio, r.rel_err,
             hg_is_ok(&s) ? "" : "  FAILED");
      if (!hg_is_ok(&s)) {
        fprintf(stderr, "  %s\n", s.msg);
        failures++;
      }
      if (r.benched && r.ratio > 0) {
        log_sum += log(r.ratio);
        n_ratio++;
        if (r.ratio < min_ratio) min_ratio = r.ratio;
      }
      if (jf) {
        fprintf(jf, "%s  ", first_json ? "" : ",\n");
        first_json = 0;
        print_report_json(jf, &p, &r);
      }
      fflush(stdout);
    }
    if (n_ratio)
      printf("%s: geometric-mean ratio %.3f over %d shapes, lowest %.3f\n\n", t,
             exp(log_sum / n_ratio), n_ratio, min_ratio);
  }
  if (jf) {
    fprintf(jf, "\n]}\n");
    fclose(jf);
  }
  hg_rt_close(rt);
  return failures ? 1 : 0;
}
