/* hopgen grouped-gemm and hopgen bench grouped-gemm: the grouped GEMM of mixture-of-experts
 * layers (kernels.h, hg_grouped_gemm_*). Parsing and printing only. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hopgen/kernels.h"

static const char grouped_usage[] =
    "usage: hopgen grouped-gemm --experts E (--tokens T [--uneven SEED] | --tokens-per-expert "
    "T1,T2,...)\n"
    "                           --n N --k K [--masked] [--type bf16|f16|e4m3|e5m2] [--d TYPE]\n"
    "                           [--scale tensor|row|block] [--fp8-accum accurate|fast]\n"
    "                           [--config CFG] [--backend ptx|mlir]\n"
    "                           [--check] [--bench] [--iters I] [--warmup W] [--seed S]\n"
    "                           [--emit FILE] [--json]\n"
    "\n"
    "A grouped GEMM for mixture-of-experts layers: D_e = A_e x B_e for every expert e in one\n"
    "persistent launch, each expert's token count read on the device (no host sync, CUDA-graph\n"
    "safe; empty experts allowed). B is E x N x K (K-major weights).\n"
    "  contiguous (default)  A is (sum of tokens) x K sorted by expert, D (sum) x N; the kernel\n"
    "                        reads int32 cumulative end rows (torch._grouped_mm's offs)\n"
    "  --masked              A is E x max_tokens x K, D E x max_tokens x N; int32 counts,\n"
    "                        rows past an expert's count untouched\n"
    "  --tokens T            T tokens per expert; --uneven SEED redistributes the same total\n"
    "                        unevenly (some experts empty, one far above the rest)\n"
    "  --type                operands (default bf16); --d the output (default bf16)\n"
    "  --scale               fp8: tensor (one scale for A, one per expert for B), row (one\n"
    "                        per token of A, one per expert and column of B) or block\n"
    "                        (DeepSeek-V3's, applied per 128 of K in the main loop; f32):\n"
    "                          A 1x128: contiguous [rows, ceil(K/128)] strides (1, rows), rows\n"
    "                          all of A's (the check: the tokens + 64);\n"
    "                          masked [E, max_tokens, ceil(K/128)] strides\n"
    "                          (ceil(K/128) max_tokens, 1, max_tokens)\n"
    "                          B 128x128: [E, ceil(N/128), ceil(K/128)] (the check pads its\n"
    "                          rows to 4, as cuBLASLt takes them)\n"
    "                        --fp8-accum accurate (the default: partial sums promoted to f32)\n"
    "                        or fast (not with block)\n"
    "  --check               D poisoned first, an f32 reference per expert, rows outside every\n"
    "                        expert verified untouched, cuBLASLt checked the same way\n"
    "  --bench               timed side by side with cuBLASLt: one GEMM per non-empty expert on\n"
    "                        one stream (cuBLASLt's grouped matmul is not used; block: its\n"
    "                        block-scaled GEMM, which needs each expert's tokens a multiple of 4)\n"
    "Without --check/--bench: generate the kernel and assemble it with ptxas.\n";

enum {
  O_EXPERTS,
  O_TOKENS,
  O_TPE,
  O_UNEVEN,
  O_N,
  O_K,
  O_MASKED,
  O_TYPE,
  O_D,
  O_SCALE,
  O_SET,
  O_FP8_ACCUM
};

static const hg_cli_opt_t grouped_opts[] = {
    {O_EXPERTS, "--experts", NULL, HG_CLI_VALUE, 0},
    {O_TOKENS, "--tokens", NULL, HG_CLI_VALUE, HG_CLI_BIT(O_TOKENS)},
    {O_TPE, "--tokens-per-expert", NULL, HG_CLI_VALUE, HG_CLI_BIT(O_TOKENS)},
    {O_UNEVEN, "--uneven", NULL, HG_CLI_VALUE, 0},
    {O_N, "--n", NULL, HG_CLI_VALUE, 0},
    {O_K, "--k", NULL, HG_CLI_VALUE, 0},
    {O_MASKED, "--masked", NULL, HG_CLI_FLAG, 0},
    {O_TYPE, "--type", NULL, HG_CLI_VALUE, 0},
    {O_D, "--d", NULL, HG_CLI_VALUE, 0},
    {O_SCALE, "--scale", NULL, HG_CLI_VALUE, 0},
    HG_CLI_RUN_OPTS,
    {O_FP8_ACCUM, "--fp8-accum", NULL, HG_CLI_VALUE, 0},
};

typedef struct gargs {
  hg_grouped_gemm_problem_t p;
  int64_t tokens;  /* --tokens */
  int64_t *counts; /* per expert (malloc'd) */
  int ncounts;     /* --tokens-per-expert items */
  int64_t list[HG_GROUPED_MAX_GROUPS];
  uint64_t uneven;
  hg_cli_run_t run; /* --config, --backend, --check, --bench, --iters, ... */
} gargs_t;

static bool grouped_arg(hg_cli_args_t *a, int id, const char *v, gargs_t *g) {
  int64_t x = 0;
  switch (id) {
  case HG_CLI_OPERAND:
    return hg_cli_bad(a, "unexpected argument '%s' (sizes are options: --experts, --n, --k)", v);
  case O_EXPERTS:
    if (!hg_cli_int(a, v, 1, HG_GROUPED_MAX_GROUPS, &x)) return false;
    g->p.groups = (int)x;
    return true;
  case O_TOKENS:
    return hg_cli_int(a, v, 0, INT32_MAX, &g->tokens);
  case O_TPE:
    g->ncounts = hg_cli_list(a, v, ",", 0, INT32_MAX, g->list, HG_GROUPED_MAX_GROUPS);
    return g->ncounts > 0;
  case O_UNEVEN:
    if (!hg_cli_int(a, v, 1, INT64_MAX, &x)) return false;
    g->uneven = (uint64_t)x;
    return true;
  case O_N:
    return hg_cli_int(a, v, 1, INT32_MAX, &g->p.n);
  case O_K:
    return hg_cli_int(a, v, 1, INT32_MAX, &g->p.k);
  case O_MASKED:
    g->p.layout = HG_GROUP_MASKED;
    return true;
  case O_TYPE: {
    hg_dtype_t t;
    if (!hg_cli_check(a, hg_dtype_parse(v, &t))) return false;
    g->p.a_type = g->p.b_type = t;
    return true;
  }
  case O_D:
    return hg_cli_check(a, hg_dtype_parse(v, &g->p.d_type));
  case O_SCALE:
    if (!strcmp(v, "tensor") || !strcmp(v, "row") || !strcmp(v, "block")) {
      g->p.scale = v[0] == 'r'   ? HG_GROUPED_SCALE_ROW
                   : v[0] == 'b' ? HG_GROUPED_SCALE_BLOCK
                                 : HG_GROUPED_SCALE_TENSOR;
      return true;
    }
    return hg_cli_bad(a, "--scale '%s' is not one of tensor, row, block", v);
  case O_FP8_ACCUM:
    return hg_cli_check(a, hg_gemm_fp8_accum_parse(v, &g->p.fp8_accum));
  }
  /* the options every GEMM run shares (hg_cli_run_arg refuses any other id) */
  return hg_cli_run_arg(a, id, v, &g->run);
}

/* The options into g, the counts made (g->counts, freed by the caller), the rows set. */
static bool grouped_parse(hg_cli_args_t *a, gargs_t *g) {
  memset(g, 0, sizeof *g);
  g->p = (hg_grouped_gemm_problem_t){.layout = HG_GROUP_CONTIGUOUS,
                                     .a_type = HG_BF16,
                                     .b_type = HG_BF16,
                                     .d_type = HG_BF16,
                                     .b_k_major = true,
                                     .alpha = 1.0f};
  hg_cli_run_init(&g->run);
  const char *v;
  for (int id; (id = hg_cli_next(a, &v)) != HG_CLI_END;)
    if (id == HG_CLI_ERROR || !grouped_arg(a, id, v, g)) return false;
  const uint64_t need = HG_CLI_BIT(O_EXPERTS) | HG_CLI_BIT(O_N) | HG_CLI_BIT(O_K);
  if ((a->seen & need) != need)
    return hg_cli_bad(a, "give --experts E, --n N and --k K (and --tokens or --tokens-per-expert)");
  if (!(a->seen & HG_CLI_BIT(O_TOKENS)))
    return hg_cli_bad(a, "give the tokens: --tokens T (per expert) or --tokens-per-expert "
                         "T1,T2,...");
  if (g->ncounts && g->ncounts != g->p.groups)
    return hg_cli_bad(a, "--tokens-per-expert gives %d counts for --experts %d", g->ncounts,
                      g->p.groups);
  if (g->uneven && g->ncounts)
    return hg_cli_bad(a, "--uneven redistributes --tokens; --tokens-per-expert gives the counts "
                         "already");
  const bool gpu = g->run.check || g->run.bench;
  if (!gpu &&
      (a->seen & (HG_CLI_BIT(HG_RUN_SEED) | HG_CLI_BIT(HG_RUN_ITERS) | HG_CLI_BIT(HG_RUN_WARMUP))))
    return hg_cli_bad(a, "--seed, --iters and --warmup apply with --check or --bench");
  if (!g->run.bench && (a->seen & (HG_CLI_BIT(HG_RUN_ITERS) | HG_CLI_BIT(HG_RUN_WARMUP))))
    return hg_cli_bad(a, "--iters and --warmup time runs: they apply with --bench");
  if (gpu && g->run.emit) return hg_cli_bad(a, "--emit writes the kernel without running it");
  g->counts = calloc((size_t)g->p.groups, sizeof *g->counts);
  if (!g->counts) return hg_cli_bad(a, "out of memory for %d counts", g->p.groups);
  if (g->ncounts)
    memcpy(g->counts, g->list, sizeof *g->counts * (size_t)g->p.groups);
  else
    hg_grouped_gemm_counts(g->p.groups, g->tokens, g->uneven, g->counts);
  int64_t sum = 0, max = 0;
  for (int e = 0; e < g->p.groups; e++) {
    sum += g->counts[e];
    if (g->counts[e] > max) max = g->counts[e];
  }
  if (sum > INT32_MAX) return hg_cli_bad(a, "%" PRId64 " tokens in all: at most 2^31 - 1", sum);
  const bool masked = g->p.layout == HG_GROUP_MASKED;
  /* contiguous: 64 rows past the last group, which the check verifies are never written */
  g->p.rows = masked ? max : sum + 64;
  if (g->p.rows < 1) g->p.rows = 1; /* every expert empty: still a well-formed problem */
  g->p.expected_rows = (sum + g->p.groups - 1) / g->p.groups;
  return true;
}

static void print_json(const gargs_t *g, const hg_grouped_gemm_report_t *r, hg_status_t s) {
  char cfg[128];
  hg_gemm_config_print(&r->config, cfg, sizeof cfg);
  printf("{\"command\": \"grouped-gemm\", \"ok\": %s, ", hg_is_ok(&s) ? "true" : "false");
  hg_cli_json_str(stdout, "kernel", r->kernel, ", ");
  hg_cli_json_str(stdout, "config", cfg, ", ");
  printf("\"layout\": \"%s\", \"experts\": %d, \"tokens\": %" PRId64 ", \"n\": %" PRId64
         ", \"k\": %" PRId64 ", \"type\": \"%s\", \"grid\": %d, \"seed\": %" PRIu64,
         g->p.layout == HG_GROUP_MASKED ? "masked" : "contiguous", g->p.groups, r->total_rows,
         g->p.n, g->p.k, hg_dtype_name(g->p.a_type), r->grid, r->seed);
  const struct {
    const char *key;
    double v;
    bool on;
  } nums[] = {{"rel_err", r->rel_err, r->checked},
              {"rel_err_cublaslt", r->rel_err_blas, r->checked},
              {"tolerance", r->tolerance, r->checked},
              {"ms", r->ms, r->benched},
              {"tflops", r->tflops, r->benched},
              {"cublaslt_ms", r->blas_ms, r->benched},
              {"cublaslt_tflops", r->blas_tflops, r->benched},
              {"ratio", r->ratio, r->benched}};
  for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
    if (nums[i].on) {
      if (isfinite(nums[i].v))
        printf(", \"%s\": %.6g", nums[i].key, nums[i].v);
      else
        printf(", \"%s\": null", nums[i].key);
    }
  if (r->checked) printf(", \"bad\": %" PRId64 ", \"touched\": %" PRId64, r->bad, r->touched);
  printf(", ");
  hg_cli_json_str(stdout, "note", r->note, "");
  if (!hg_is_ok(&s)) {
    printf(", ");
    hg_cli_json_error(stdout, hg_code_name(s.code), s.msg);
  }
  printf("}\n");
  hg_cli_json_printed();
}

static void print_text(const gargs_t *g, const hg_grouped_gemm_report_t *r) {
  char cfg[128];
  hg_gemm_config_print(&r->config, cfg, sizeof cfg);
  printf("grouped GEMM %s %s, %d experts, %" PRId64 " tokens, N %" PRId64 ", K %" PRId64
         "\n  kernel %s\n  config %s, grid %d, seed %" PRIu64 "\n",
         g->p.layout == HG_GROUP_MASKED ? "masked" : "contiguous", hg_dtype_name(g->p.a_type),
         g->p.groups, r->total_rows, g->p.n, g->p.k, r->kernel, cfg, r->grid, r->seed);
  if (r->checked)
    printf("  check: relative error %.3g (tolerance %.3g; cuBLASLt %.3g); %" PRId64
           " unwritten inside the experts, %" PRId64 " written outside%s%s\n",
           r->rel_err, r->tolerance, r->rel_err_blas, r->bad, r->touched, r->where[0] ? "; " : "",
           r->where);
  if (r->benched)
    printf("  bench: hopgen %.4f ms %.1f TFLOP/s | cuBLASLt %.4f ms %.1f TFLOP/s | ratio %.3f\n",
           r->ms, r->tflops, r->blas_ms, r->blas_tflops, r->ratio);
  if (r->note[0]) printf("  note: %s\n", r->note);
}

static int grouped_generate(const gargs_t *g) {
  hg_gemm_problem_t p;
  hg_status_t s = hg_grouped_gemm_problem(&g->p, &p);
  hg_gemm_config_t cfg = g->run.cfg;
  if (hg_is_ok(&s) && !g->run.have_cfg) {
    hg_gemm_problem_t h = p;
    h.m = p.group == HG_GROUP_CONTIGUOUS ? g->p.expected_rows * g->p.groups : g->p.expected_rows;
    if (h.m < 1) h.m = 1;
    s = hg_gemm_heuristic(&h, 132, &cfg);
  }
  hg_gemm_kernel_t k;
  if (hg_is_ok(&s)) s = hg_gemm_build(&p, &cfg, HG_MAINLOOP_AUTO, NULL, g->run.be, &k);
  if (!hg_is_ok(&s)) return hg_cli_fail(s);
  if (g->run.emit) s = hg_cli_write_file(g->run.emit, k.k.ptx.data);
  hg_ptxas_report_t rep;
  const char *ptxas = hg_cli_ptxas_verdict(k.k.ptx.data, &s, &rep);
  char c[128];
  hg_gemm_config_print(&k.config, c, sizeof c);
  if (g->run.json) {
    printf("{\"command\": \"grouped-gemm\", \"ok\": %s, ", hg_is_ok(&s) ? "true" : "false");
    hg_cli_json_str(stdout, "kernel", k.k.name, ", ");
    hg_cli_json_str(stdout, "config", c, ", ");
    printf("\"smem_bytes\": %u, \"threads\": %u, \"ptxas\": %s, \"registers\": %d, "
           "\"spill_bytes\": %d",
           k.k.smem_bytes, k.k.threads, !strcmp(ptxas, "ok") ? "true" : "false", rep.registers,
           rep.spill_store_bytes + rep.spill_load_bytes);
    if (!hg_is_ok(&s)) {
      printf(", ");
      hg_cli_json_error(stdout, hg_code_name(s.code), s.msg);
    }
    printf("}\n");
    hg_cli_json_printed();
  } else {
    printf("kernel %s\n  config %s, %u threads, %u B shared memory, %s\n"
           "  generated in %.2f ms (%s backend); ptxas: %s, %d registers, %d B spilled\n",
           k.k.name, c, k.k.threads, k.k.smem_bytes,
           k.tma_store ? "TMA stores for whole tiles, a group's last tile element by element"
                       : "direct-store epilogue",
           k.k.gen_ms, hg_backend_name(g->run.be), ptxas, rep.registers,
           rep.spill_store_bytes + rep.spill_load_bytes);
  }
  hg_gemm_kernel_free(&k);
  return hg_is_ok(&s) ? 0 : hg_cli_fail(s);
}

int hg_cmd_grouped_gemm(int argc, char **argv) {
  hg_cli_args_t a;
  hg_cli_args_init(&a, "grouped-gemm", grouped_opts,
                   (int)(sizeof grouped_opts / sizeof grouped_opts[0]), argc, argv);
  if (a.help) return hg_cli_help(grouped_usage);
  gargs_t *g = calloc(1, sizeof *g);
  if (!g) return hg_cli_fail(hg_error(HG_ERR_NOMEM, "out of memory"));
  if (!grouped_parse(&a, g)) {
    free(g->counts);
    free(g);
    return hg_cli_usage(&a);
  }
  int rc;
  if (!g->run.check && !g->run.bench) {
    rc = grouped_generate(g);
  } else {
    hg_cli_cache_note();
    hg_rt_t *rt;
    hg_status_t s = hg_cli_rt_open(0, &rt);
    if (!hg_is_ok(&s)) {
      rc = hg_cli_fail(s);
    } else {
      const hg_gemm_run_options_t o = hg_cli_run_options(&g->run);
      hg_grouped_gemm_report_t r;
      s = hg_grouped_gemm_run(rt, &g->p, g->counts, o.config, &o, &r);
      if (r.kernel[0]) {
        if (g->run.json)
          print_json(g, &r, s);
        else
          print_text(g, &r);
      }
      hg_rt_close(rt);
      rc = hg_is_ok(&s) ? 0 : hg_cli_fail(s);
    }
  }
  free(g->counts);
  free(g);
  return rc;
}

/* ------------------------------------------------------------------ bench grouped-gemm */

static const char bench_usage[] =
    "usage: hopgen bench grouped-gemm [--set moe] [--type bf16|e4m3|bf16,e4m3] [--masked]\n"
    "                                 [--scale tensor|row|block (fp8)]\n"
    "                                 [--uneven SEED] [--iters I] [--warmup W] [--json]\n"
    "The MoE set: (experts x tokens, N, K) = (8x4096, 4096, 7168), (32x512, 4096, 7168),\n"
    "(128x128, 1536, 2048), (256x64, 2048, 7168); each checked, then timed beside cuBLASLt\n"
    "(one GEMM per expert on one stream) in the same process.\n";

enum { B_SET, B_TYPE, B_MASKED, B_UNEVEN, B_ITERS, B_WARMUP, B_JSON, B_SCALE };
static const hg_cli_opt_t bench_opts[] = {
    {B_SET, "--set", NULL, HG_CLI_VALUE, 0},      {B_TYPE, "--type", NULL, HG_CLI_VALUE, 0},
    {B_MASKED, "--masked", NULL, HG_CLI_FLAG, 0}, {B_UNEVEN, "--uneven", NULL, HG_CLI_VALUE, 0},
    {B_ITERS, "--iters", NULL, HG_CLI_VALUE, 0},  {B_WARMUP, "--warmup", NULL, HG_CLI_VALUE, 0},
    {B_JSON, "--json", NULL, HG_CLI_JSON, 0},     {B_SCALE, "--scale", NULL, HG_CLI_VALUE, 0},
};

int hg_cli_bench_grouped(int argc, char **argv) {
  hg_cli_args_t a;
  hg_cli_args_init(&a, "bench grouped-gemm", bench_opts,
                   (int)(sizeof bench_opts / sizeof bench_opts[0]), argc, argv);
  if (a.help) return hg_cli_help(bench_usage);
  hg_dtype_t types[2] = {HG_BF16, HG_E4M3};
  int ntypes = 2, iters = 30, warmup = 5;
  bool masked = false, json = false;
  hg_grouped_scale_t scale = HG_GROUPED_SCALE_TENSOR;
  uint64_t uneven = 0;
  const char *v;
  int64_t x;
  for (int id; (id = hg_cli_next(&a, &v)) != HG_CLI_END;) {
    bool ok = true;
    switch (id) {
    case HG_CLI_ERROR:
      return hg_cli_usage(&a);
    case HG_CLI_OPERAND:
      ok = hg_cli_bad(&a, "unexpected argument '%s'", v);
      break;
    case B_SET:
      if (strcmp(v, "moe")) ok = hg_cli_bad(&a, "--set '%s': the grouped GEMM's set is moe", v);
      break;
    case B_TYPE: {
      char buf[32];
      snprintf(buf, sizeof buf, "%s", v);
      ntypes = 0;
      for (char *t = strtok(buf, ","); t && ok && ntypes < 2; t = strtok(NULL, ","))
        ok = hg_cli_check(&a, hg_dtype_parse(t, &types[ntypes++]));
      break;
    }
    case B_MASKED:
      masked = true;
      break;
    case B_UNEVEN:
      ok = hg_cli_int(&a, v, 1, INT64_MAX, &x);
      uneven = (uint64_t)x;
      break;
    case B_ITERS:
      ok = hg_cli_int(&a, v, 1, 100000, &x);
      iters = (int)x;
      break;
    case B_WARMUP:
      ok = hg_cli_int(&a, v, 0, 10000, &x);
      warmup = (int)x;
      break;
    case B_JSON:
      json = true;
      break;
    case B_SCALE:
      if (!strcmp(v, "row"))
        scale = HG_GROUPED_SCALE_ROW;
      else if (!strcmp(v, "block"))
        scale = HG_GROUPED_SCALE_BLOCK;
      else if (strcmp(v, "tensor"))
        ok = hg_cli_bad(&a, "--scale '%s': tensor, row or block", v);
      break;
    }
    if (!ok) return hg_cli_usage(&a);
  }
  static const int64_t set[][4] = {
      {8, 4096, 4096, 7168}, {32, 512, 4096, 7168}, {128, 128, 1536, 2048}, {256, 64, 2048, 7168}};
  hg_cli_cache_note();
  hg_rt_t *rt;
  hg_status_t s = hg_cli_rt_open(0, &rt);
  if (!hg_is_ok(&s)) return hg_cli_fail(s);
  int failed = 0;
  if (!json)
    printf("%-6s %-22s %-10s %10s %10s %10s %8s %9s\n", "type", "experts x tokens, N, K", "layout",
           "hopgen", "cuBLASLt", "TFLOP/s", "ratio", "rel_err");
  for (int t = 0; t < ntypes; t++)
    for (size_t i = 0; i < sizeof set / sizeof set[0]; i++) {
      gargs_t *g = calloc(1, sizeof *g);
      int64_t *counts = calloc((size_t)set[i][0], sizeof *counts);
      if (!g || !counts) {
        free(g);
        free(counts);
        hg_rt_close(rt);
        return hg_cli_fail(hg_error(HG_ERR_NOMEM, "out of memory"));
      }
      hg_grouped_gemm_counts((int)set[i][0], set[i][1], uneven, counts);
      int64_t sum = 0, max = 0;
      for (int e = 0; e < set[i][0]; e++) {
        sum += counts[e];
        max = counts[e] > max ? counts[e] : max;
      }
      g->p = (hg_grouped_gemm_problem_t){
          .layout = masked ? HG_GROUP_MASKED : HG_GROUP_CONTIGUOUS,
          .groups = (int)set[i][0],
          .rows = masked ? max : sum,
          .n = set[i][2],
          .k = set[i][3],
          .a_type = types[t],
          .b_type = types[t],
          .d_type = HG_BF16,
          .b_k_major = true,
          .alpha = 1.0f,
          .expected_rows = set[i][1],
          .scale = hg_dtype_bits(types[t]) == 8 ? scale : HG_GROUPED_SCALE_TENSOR};
      hg_gemm_run_options_t o = hg_gemm_run_options_default();
      o.check = o.bench = true;
      o.iters = iters;
      o.warmup = warmup;
      hg_grouped_gemm_report_t r;
      s = hg_grouped_gemm_run(rt, &g->p, counts, NULL, &o, &r);
      if (!hg_is_ok(&s)) failed++;
      if (json) {
        hg_cli_json_next();
        if (r.kernel[0]) print_json(g, &r, s);
      } else {
        char shape[40];
        snprintf(shape, sizeof shape, "%" PRId64 "x%" PRId64 ", %" PRId64 ", %" PRId64, set[i][0],
                 set[i][1], set[i][2], set[i][3]);
        printf("%-6s %-22s %-10s %9.4fms %9.4fms %10.1f %8.3f %9.3g%s%s\n", hg_dtype_name(types[t]),
               shape, masked ? "masked" : "contiguous", r.ms, r.blas_ms, r.tflops, r.ratio,
               r.rel_err, hg_is_ok(&s) ? "" : "  FAILED: ", hg_is_ok(&s) ? "" : s.msg);
      }
      free(counts);
      free(g);
    }
  hg_rt_close(rt);
  if (failed)
    return hg_cli_fail(hg_error(HG_ERR_MISMATCH, "%d of the set's problems failed", failed));
  return 0;
}
