/* hopgen gemm / hopgen bench gemm: argument parsing and printing around the library's GEMM
 * generator and its run/check/bench/tune driver (include/hopgen/kernels.h). */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hopgen/export.h"
#include "hopgen/kernels.h"

static const char gemm_usage[] =
    "usage: hopgen gemm M N K [options]      (or --m M --n N --k K)\n"
    "  D = alpha * A x B + beta * C; D and C row-major MxN.\n"
    "  --type T            A and B type: bf16 (default), f16, e4m3, e5m2\n"
    "  --a T / --b T       A and B types separately (fp8 may mix e4m3 and e5m2)\n"
    "  --d T, --d-type T   D's type: bf16 (default), f16, f32, or e4m3/e5m2 (fp8 D: stored\n"
    "                      as saturate(x * scale_d), the largest finite value past it, NaN kept)\n"
    "  --c-type T          C's (and the residual's) type: bf16, f16, f32 (default: D's; bf16\n"
    "                      for fp8 D)\n"
    "  --scale-d X         fp8 D's output scale, uploaded as args.scale_d (default 1)\n"
    "  --amax              also reduce max |D| (as stored) into a device f32 in the same kernel;\n"
    "                      --check compares it bit for bit with a host reduction over D\n"
    "  --aux               also store the values before the activation (cuBLASLt's GELU_AUX);\n"
    "                      needs an activation in --epilogue\n"
    "  --aux-type T        the aux output's type: bf16, f16, f32 (default: D's; bf16 for fp8 D)\n"
    "  --layout XY         storage of A and B: R(ow) or C(olumn)-major each; RC (default) is\n"
    "                      K-major A and B (the 'TN' GEMM); fp8 needs RC\n"
    "  --batch B           batch count (strided, packed by default)\n"
    "  --lda/--ldb/--ldc/--ldd L   leading dimensions (elements; default packed)\n"
    "  --alpha A --beta B  scalars (default 1 and 0)\n"
    "  --epilogue STEPS    D = ACT(alpha A B + beta C + bias): steps `bias` (along N) or\n"
    "                      `bias_m` (along M), then relu, gelu, gelu_tanh, silu, sigmoid or\n"
    "                      clamp:LO:HI, e.g. bias,gelu (--check applies them to the reference)\n"
    "  --bias-type T       the bias vector's type: bf16, f16 or f32 (default: D's)\n"
    "  --fp8-accum MODE    fp8: accurate (default, as torch._scaled_mm): wgmma's partial sums\n"
    "                      added into f32 every --fp8-promote k-blocks of 128; fast: the whole K\n"
    "                      in wgmma's fp8 accumulator (cuBLASLt's FAST_ACCUM). --bench and\n"
    "                      --check run cuBLASLt in the same mode\n"
    "  --fp8-promote N     k-blocks per promotion, 1..16 (default 4: every 512 of K)\n"
    "  --scale S           fp8 scales: tensor (default: one f32 each), row (A per row, B per\n"
    "                      column, in the epilogue) or block (A 1x128, B 128x128, per k-block\n"
    "                      in the main loop; tile K 128, tile N dividing 128); --check uses\n"
    "                      random non-trivial scales, cuBLASLt in the same mode beside it\n"
    "  --config CFG        e.g. 128x256x64,c2x1,s4,coop,m8 (default: tuned or heuristic)\n"
    "  --mainloop ML       tma-wgmma | cpasync-wgmma | tma-mmasync | tma-ldmatrix-wgmma-rs\n"
    "                      | ldg-mmasync (decode: M <= 16, K-major; bf16/f16/fp8)\n"
    "                      (default auto: tma-wgmma; operands TMA cannot address - leading\n"
    "                      dimension not a multiple of 16 bytes - are repacked each run; a\n"
    "                      named mainloop reads them in place with cp.async)\n"
    "  --compare-repack    with --bench: also time the other path (in place or repacked)\n"
    "  --stream-k          stream-K (,sk) on the configuration; --split-k S: split-K (,kS)\n"
    "  --gelu FORM         the erf GELU's formula on the configuration: poly7 (,gp7), as (,gas),\n"
    "                      poly5 (,gp5) or poly5t (,gt5: by tanh.approx; default unless D is f32)\n"
    "  --direct-stores     D and aux stored element by element (,ds) where they would be staged\n"
    "                      or stored by TMA (D by TMA stays): an A/B variant\n"
    "  --heuristic RULES   the heuristic's A/B switches (not with --config):\n"
    "                      sk (stream-K by its wave model), pp|pp128 (ping-pong tiles for\n"
    "                      costly activations), nobs (fp8 block scales from global memory,\n"
    "                      not staged), pt (fp8 block scales with MMA turns), dv (decode\n"
    "                      shapes M <= 16 on ldg-mmasync, in place), nocw (no clusters for\n"
    "                      a wave of tiles under the SMs), nokcol (no split-K for one column\n"
    "                      of tiles); e.g. sk,pp\n"
    "  --deterministic     the same bits of D run to run (split-K without atomic adds, ,kSa);\n"
    "                      --check compares 10 runs (else 3)\n"
    "  --batch-invariant   each row of D the same bits whatever M is: the configuration is\n"
    "                      chosen as for M = 4096, no split-K (stream-K refused), no tuned\n"
    "                      entry; --check also\n"
    "                      runs M = 7 on the same operands and compares those rows bit for bit\n"
    "  --backend ptx|mlir  code generation backend (default ptx)\n"
    "  --check             run on the GPU and compare with an f32 reference and cuBLASLt\n"
    "  --bench             time hopgen and cuBLASLt side by side on the same data\n"
    "  --tune              search configurations on the GPU and keep the fastest in the cache\n"
    "  --iters N --warmup N --seed S\n"
    "  --emit FILE         write the PTX; --emit-mlir FILE writes the MLIR (mlir backend)\n"
    "  --json              machine-readable output\n"
    "Without --check/--bench/--tune the kernel is generated and checked with ptxas (no GPU).\n";

static const char export_usage[] =
    "usage: hopgen export gemm M N K [options]\n"
    "  Write the GEMM kernel and a launcher that needs only libcuda (include/hopgen/export.h):\n"
    "  DIR/NAME.ptx, DIR/NAME.cubin (ptxas), DIR/NAME.h and DIR/NAME.c.\n"
    "  --out DIR           an existing directory (default: .)\n"
    "  --name NAME         a C identifier: the files' stem and the functions' prefix (default\n"
    "                      hopgen_gemm)\n"
    "  --ptx-only          embed the PTX (the driver JIT-compiles it) instead of a cubin\n"
    "  --any-d             store D directly, so the kernel takes any D (else D must suit TMA)\n"
    "  and the problem options of hopgen gemm: --type/--a/--b/--d, --layout, --batch,\n"
    "  --lda/--ldb/--ldc/--ldd, --config, --mainloop, --backend, --json.\n";

typedef struct gemm_args {
  hg_gemm_problem_t p;
  bool export_mode;
  const char *out, *name;
  bool ptx_only;
  hg_cli_run_t run; /* --config, --backend, --check, --bench, --iters, ... */
  bool tune, compare_repack;
  hg_gemm_mainloop_t mainloop;
  /* --stream-k / --split-k S: the configuration's K schedule forced (splits 0: not) */
  bool stream_k;
  int splits;
  /* --gelu FORM (-1: not given) / --direct-stores: the configuration's epilogue variants */
  int gelu;
  bool direct_stores;
  /* --heuristic RULES */
  hg_gemm_rules_t rules;
  bool have_rules;
  bool deterministic;
  const char *emit_mlir;
  float scale_d;
} gemm_args_t;

enum {
  G_M,
  G_N,
  G_K,
  G_TYPE,
  G_A,
  G_B,
  G_D,
  G_LAYOUT,
  G_BATCH,
  G_LDA,
  G_LDB,
  G_LDC,
  G_LDD,
  G_ALPHA,
  G_BETA,
  G_TUNE,
  G_EMIT_MLIR,
  G_MAINLOOP,
  G_COMPARE_REPACK,
  G_BATCH_INVARIANT,
  G_DETERMINISTIC,
  G_OUT,
  G_NAME,
  G_PTX_ONLY,
  G_ANY_D,
  G_EPILOGUE,
  G_BIAS_TYPE,
  G_D_TYPE,
  G_C_TYPE,
  G_SCALE_D,
  G_AMAX,
  G_AUX,
  G_AUX_TYPE,
  G_FP8_ACCUM,
  G_FP8_PROMOTE,
  G_SCALE,
  G_STREAM_K,
  G_SPLIT_K,
  G_GELU,
  G_DIRECT_STORES,
  G_HEURISTIC
};
/* --type sets both A's and B's type: it conflicts with --a and --b. */
static const hg_cli_opt_t gemm_opts[] = {
    {G_M, "--m", NULL, HG_CLI_VALUE, 0},
    {G_N, "--n", NULL, HG_CLI_VALUE, 0},
    {G_K, "--k", NULL, HG_CLI_VALUE, 0},
    {G_TYPE, "--type", NULL, HG_CLI_VALUE, HG_CLI_BIT(G_A) | HG_CLI_BIT(G_B)},
    {G_A, "--a", NULL, HG_CLI_VALUE, 0},
    {G_B, "--b", NULL, HG_CLI_VALUE, 0},
    {G_D, "--d", NULL, HG_CLI_VALUE, 0},
    {G_D_TYPE, "--d-type", NULL, HG_CLI_VALUE, HG_CLI_BIT(G_D)}, /* --d's other name */
    {G_C_TYPE, "--c-type", NULL, HG_CLI_VALUE, 0},
    {G_SCALE_D, "--scale-d", NULL, HG_CLI_VALUE, 0},
    {G_AMAX, "--amax", NULL, HG_CLI_FLAG, 0},
    {G_AUX, "--aux", NULL, HG_CLI_FLAG, 0},
    {G_AUX_TYPE, "--aux-type", NULL, HG_CLI_VALUE, 0},
    {G_LAYOUT, "--layout", NULL, HG_CLI_VALUE, 0},
    {G_BATCH, "--batch", NULL, HG_CLI_VALUE, 0},
    {G_LDA, "--lda", NULL, HG_CLI_VALUE, 0},
    {G_LDB, "--ldb", NULL, HG_CLI_VALUE, 0},
    {G_LDC, "--ldc", NULL, HG_CLI_VALUE, 0},
    {G_LDD, "--ldd", NULL, HG_CLI_VALUE, 0},
    {G_ALPHA, "--alpha", NULL, HG_CLI_VALUE, 0},
    {G_BETA, "--beta", NULL, HG_CLI_VALUE, 0},
    HG_CLI_RUN_OPTS,
    {G_TUNE, "--tune", NULL, HG_CLI_FLAG, 0},
    {G_EMIT_MLIR, "--emit-mlir", NULL, HG_CLI_VALUE, 0},
    {G_MAINLOOP, "--mainloop", NULL, HG_CLI_VALUE, 0},
    {G_COMPARE_REPACK, "--compare-repack", NULL, HG_CLI_FLAG, 0},
    {G_BATCH_INVARIANT, "--batch-invariant", NULL, HG_CLI_FLAG, 0},
    {G_DETERMINISTIC, "--deterministic", NULL, HG_CLI_FLAG, 0},
    {G_OUT, "--out", NULL, HG_CLI_VALUE, 0},
    {G_NAME, "--name", NULL, HG_CLI_VALUE, 0},
    {G_PTX_ONLY, "--ptx-only", NULL, HG_CLI_FLAG, 0},
    {G_ANY_D, "--any-d", NULL, HG_CLI_FLAG, 0},
    {G_EPILOGUE, "--epilogue", NULL, HG_CLI_VALUE, 0},
    {G_BIAS_TYPE, "--bias-type", NULL, HG_CLI_VALUE, 0},
    {G_FP8_ACCUM, "--fp8-accum", NULL, HG_CLI_VALUE, 0},
    {G_FP8_PROMOTE, "--fp8-promote", NULL, HG_CLI_VALUE, 0},
    {G_SCALE, "--scale", NULL, HG_CLI_VALUE, 0},
    {G_STREAM_K, "--stream-k", NULL, HG_CLI_FLAG, HG_CLI_BIT(G_SPLIT_K)},
    {G_SPLIT_K, "--split-k", NULL, HG_CLI_VALUE, 0},
    {G_GELU, "--gelu", NULL, HG_CLI_VALUE, 0},
    {G_DIRECT_STORES, "--direct-stores", NULL, HG_CLI_FLAG, 0},
    {G_HEURISTIC, "--heuristic", NULL, HG_CLI_VALUE, 0},
};

static bool parse_layout(hg_cli_args_t *a, const char *s, hg_gemm_problem_t *p) {
  if (strlen(s) != 2 || !strchr("RrCc", s[0]) || !strchr("RrCc", s[1]))
    return hg_cli_bad(a,
                      "--layout '%s': give two letters, R or C, for the storage of A and B (RC = "
                      "row-major A, column-major B, both K-major)",
                      s);
  p->a_k_major = s[0] == 'R' || s[0] == 'r';
  p->b_k_major = s[1] == 'C' || s[1] == 'c';
  return true;
}

/* One option or operand into g; false with a->error set. */
static bool gemm_arg(hg_cli_args_t *a, int id, const char *v, gemm_args_t *g, int *operands) {
  int64_t x = 0;
  double f = 0;
  int64_t *const size[3] = {&g->p.m, &g->p.n, &g->p.k};
  int64_t *const ld[4] = {&g->p.lda, &g->p.ldb, &g->p.ldc, &g->p.ldd};
  switch (id) {
  case HG_CLI_OPERAND: {
    static const char *const who[3] = {"the operand M", "the operand N", "the operand K"};
    if (*operands >= 3) return hg_cli_bad(a, "unexpected argument '%s' (sizes are M N K)", v);
    a->current = who[*operands];
    if (!hg_cli_claim(a, HG_CLI_BIT(G_M + *operands), who[*operands]) ||
        !hg_cli_int(a, v, 1, INT64_MAX, size[*operands]))
      return false;
    ++*operands;
    return true;
  }
  case G_M:
  case G_N:
  case G_K:
    return hg_cli_int(a, v, 1, INT64_MAX, size[id - G_M]);
  case G_TYPE:
  case G_A:
  case G_B:
  case G_D:
  case G_D_TYPE:
  case G_C_TYPE:
  case G_AUX_TYPE: {
    hg_dtype_t t;
    if (!hg_cli_check(a, hg_dtype_parse(v, &t))) return false;
    if (id == G_TYPE || id == G_A) g->p.a_type = t;
    if (id == G_TYPE || id == G_B) g->p.b_type = t;
    if (id == G_D || id == G_D_TYPE) g->p.d_type = t;
    if (id == G_C_TYPE) g->p.c_type = t;
    if (id == G_AUX_TYPE) g->p.aux_type = t;
    /* u8 is 0, which the problem reads as "the default type": refuse it here */
    if ((id == G_C_TYPE || id == G_AUX_TYPE) && t == HG_U8)
      return hg_cli_bad(a, "%s u8: C and aux may be bf16, f16 or f32",
                        id == G_C_TYPE ? "--c-type" : "--aux-type");
    return true;
  }
  case G_SCALE_D:
    if (!hg_cli_float(a, v, -FLT_MAX, FLT_MAX, true, &f)) return false;
    g->scale_d = (float)f;
    return true;
  case G_AMAX:
    return g->p.amax = true;
  case G_AUX:
    return g->p.aux = true;
  case G_LAYOUT:
    return parse_layout(a, v, &g->p);
  case G_BATCH:
    if (!hg_cli_int(a, v, 1, INT32_MAX, &x)) return false;
    g->p.batch = (int)x;
    return true;
  case G_LDA:
  case G_LDB:
  case G_LDC:
  case G_LDD:
    return hg_cli_int(a, v, 1, INT64_MAX, ld[id - G_LDA]);
  case G_ALPHA:
  case G_BETA:
    if (!hg_cli_float(a, v, -FLT_MAX, FLT_MAX, true, &f)) return false;
    *(id == G_ALPHA ? &g->p.alpha : &g->p.beta) = (float)f;
    return true;
  case G_EPILOGUE:
    return hg_cli_check(a, hg_gemm_epilogue_parse(v, &g->p));
  case G_BIAS_TYPE:
    return hg_cli_check(a, hg_dtype_parse(v, &g->p.bias_type));
  case G_FP8_ACCUM:
    return hg_cli_check(a, hg_gemm_fp8_accum_parse(v, &g->p.fp8_accum));
  case G_SCALE:
    return hg_cli_check(a, hg_gemm_scale_parse(v, &g->p.scale));
  case G_FP8_PROMOTE:
    if (!hg_cli_int(a, v, 1, HG_FP8_PROMOTE_MAX, &x)) return false;
    g->p.fp8_promote = (int)x;
    return true;
  case G_TUNE:
    return g->tune = true;
  case G_EMIT_MLIR:
    g->emit_mlir = v;
    return true;
  case G_MAINLOOP:
    return hg_cli_check(a, hg_gemm_mainloop_parse(v, &g->mainloop));
  case G_COMPARE_REPACK:
    return g->compare_repack = true;
  case G_STREAM_K:
    return g->stream_k = true;
  case G_SPLIT_K:
    if (!hg_cli_int(a, v, 2, HG_SCHED_MAX_SPLITS, &x)) return false;
    g->splits = (int)x;
    return true;
  case G_GELU:
    for (int i = 0; i < HG_GELU_ALG_COUNT; i++)
      if (!strcmp(v, hg_gelu_alg_name((hg_gelu_alg_t)i))) return (g->gelu = i), true;
    return hg_cli_bad(a, "--gelu '%s': the erf GELU's formulas are poly7, as, poly5 and poly5t", v);
  case G_DIRECT_STORES:
    return g->direct_stores = true;
  case G_HEURISTIC:
    return g->have_rules = hg_cli_check(a, hg_gemm_rules_parse(v, &g->rules));
  case G_BATCH_INVARIANT:
    return g->p.batch_invariant = true;
  case G_DETERMINISTIC:
    /* the problem's flag (no split-K by atomic adds); --check verifies it over 10 runs */
    g->deterministic = true;
    return g->p.deterministic = true;
  case G_OUT:
    g->out = v;
    return true;
  case G_NAME:
    g->name = v;
    return true;
  case G_PTX_ONLY:
    return g->ptx_only = true;
  case G_ANY_D:
    return g->p.d_no_tma = true;
  }
  /* the options every GEMM run shares (hg_cli_run_arg refuses any other id) */
  return hg_cli_run_arg(a, id, v, &g->run);
}

/* What --epilogue, --bias-type and --aux need of each other, in hopgen gemm and bench gemm
 * alike, and the bias type's default (D's type; bf16 for fp8 D): false with a's error set. */
static bool chain_options(hg_cli_args_t *a, hg_gemm_problem_t *p, bool bias_type_given) {
  if (bias_type_given && p->bias == HG_BIAS_NONE)
    return hg_cli_bad(a, "--bias-type applies with a bias in --epilogue (bias or bias_m)");
  if (p->aux && p->act == HG_ACT_NONE)
    return hg_cli_bad(a, "--aux stores the values before the activation, and --epilogue has none: "
                         "add one (relu, gelu, gelu_tanh, silu, sigmoid, clamp:LO:HI)");
  if (p->bias != HG_BIAS_NONE && !bias_type_given)
    p->bias_type = hg_dtype_bits(p->d_type) == 8 ? HG_BF16 : p->d_type;
  return true;
}

static bool parse_args(hg_cli_args_t *a, gemm_args_t *g, bool export_mode) {
  memset(g, 0, sizeof *g);
  g->export_mode = export_mode;
  g->gelu = -1;
  g->p = (hg_gemm_problem_t){.batch = 1,
                             .a_type = HG_BF16,
                             .b_type = HG_BF16,
                             .d_type = HG_BF16,
                             .a_k_major = true,
                             .b_k_major = true,
                             .alpha = 1.0f,
                             .beta = 0.0f};
  hg_cli_run_init(&g->run);
  int operands = 0;
  const char *v;
  for (int id; (id = hg_cli_next(a, &v)) != HG_CLI_END;)
    if (id == HG_CLI_ERROR || !gemm_arg(a, id, v, g, &operands)) return false;
  const uint64_t sizes = HG_CLI_BIT(G_M) | HG_CLI_BIT(G_N) | HG_CLI_BIT(G_K);
  if ((a->seen & sizes) != sizes)
    return hg_cli_bad(a, "give the sizes: hopgen gemm M N K (or --m/--n/--k)");
  if (!chain_options(a, &g->p, a->seen & HG_CLI_BIT(G_BIAS_TYPE))) return false;
  const bool d8 = hg_dtype_bits(g->p.d_type) == 8;
  const bool fp8 = hg_dtype_bits(g->p.a_type) == 8 && hg_dtype_bits(g->p.b_type) == 8;
  if (!fp8 &&
      (a->seen & (HG_CLI_BIT(G_FP8_ACCUM) | HG_CLI_BIT(G_FP8_PROMOTE) | HG_CLI_BIT(G_SCALE))))
    return hg_cli_bad(a,
                      "--fp8-accum, --fp8-promote and --scale apply to fp8 operands (--type "
                      "e4m3 or e5m2), not %s x %s",
                      hg_dtype_name(g->p.a_type), hg_dtype_name(g->p.b_type));
  if (g->p.fp8_accum == HG_FP8_ACCUM_FAST && (a->seen & HG_CLI_BIT(G_FP8_PROMOTE)))
    return hg_cli_bad(a, "--fp8-promote sets the accurate accumulation's promotion interval; "
                         "--fp8-accum fast never promotes");
  if ((a->seen & HG_CLI_BIT(G_AUX_TYPE)) && !g->p.aux)
    return hg_cli_bad(a, "--aux-type applies with --aux");
  if ((a->seen & HG_CLI_BIT(G_SCALE_D)) && !d8)
    return hg_cli_bad(a, "--scale-d scales an fp8 D (--d-type e4m3 or e5m2); D is %s",
                      hg_dtype_name(g->p.d_type));
  const bool gpu = g->run.check || g->run.bench || g->tune;
  const uint64_t export_opts =
      HG_CLI_BIT(G_OUT) | HG_CLI_BIT(G_NAME) | HG_CLI_BIT(G_PTX_ONLY) | HG_CLI_BIT(G_ANY_D);
  if (!g->export_mode && (a->seen & export_opts))
    return hg_cli_bad(a, "--out, --name, --ptx-only and --any-d are options of hopgen export "
                         "gemm");
  if (g->export_mode && (gpu || g->run.emit || g->emit_mlir || g->compare_repack ||
                         (a->seen & (HG_CLI_BIT(HG_RUN_ITERS) | HG_CLI_BIT(HG_RUN_WARMUP) |
                                     HG_CLI_BIT(HG_RUN_SEED)))))
    return hg_cli_bad(a, "hopgen export gemm writes files without running anything: --check, "
                         "--bench, --tune, --emit, --iters, --warmup and --seed do not apply");
  /* Options that would be silently ignored are refused. */
  if (gpu && (g->run.emit || g->emit_mlir))
    return hg_cli_bad(a, "--emit and --emit-mlir write the generated kernel without running it: "
                         "leave out --check, --bench and --tune");
  if (g->emit_mlir && g->run.be != HG_BACKEND_MLIR)
    return hg_cli_bad(a, "--emit-mlir needs --backend mlir (the PTX backend makes no MLIR)");
  if (!g->run.bench && !g->tune &&
      (a->seen & (HG_CLI_BIT(HG_RUN_ITERS) | HG_CLI_BIT(HG_RUN_WARMUP))))
    return hg_cli_bad(a, "--iters and --warmup time runs: they apply with --bench or --tune");
  if (g->compare_repack && !g->run.bench)
    return hg_cli_bad(a, "--compare-repack times the repack path beside the run: it applies with "
                         "--bench");
  if (!gpu && (a->seen & HG_CLI_BIT(G_SCALE_D)))
    return hg_cli_bad(a, "--scale-d is data the driver uploads for a GPU run: it applies with "
                         "--check, --bench or --tune");
  if (g->have_rules && (g->run.have_cfg || g->tune))
    return hg_cli_bad(a, "--heuristic changes the heuristic's choice: --config gives the "
                         "configuration itself, and --tune searches its own space");
  if (!gpu && (a->seen & HG_CLI_BIT(HG_RUN_SEED)))
    return hg_cli_bad(a, "--seed picks the data of a GPU run: it applies with --check, --bench "
                         "or --tune");
  return true;
}

static void json_num(FILE *f, const char *key, double v, bool comma) {
  if (isfinite(v))
    fprintf(f, "\"%s\": %.6g%s", key, v, comma ? ", " : "");
  else
    fprintf(f, "\"%s\": null%s", key, comma ? ", " : "");
}

/* One run's report as a JSON object; s is the run's status ("ok", and "error" on failure). */
static void print_report_json(FILE *f, const hg_gemm_problem_t *p, const hg_gemm_report_t *r,
                              hg_status_t s) {
  char cfg[128];
  hg_gemm_config_print(&r->config, cfg, sizeof cfg);
  fprintf(
      f, "{\"ok\": %s, \"m\": %" PRId64 ", \"n\": %" PRId64 ", \"k\": %" PRId64 ", \"batch\": %d, ",
      hg_is_ok(&s) ? "true" : "false", p->m, p->n, p->k, p->batch);
  hg_cli_json_str(f, "a", hg_dtype_name(p->a_type), ", ");
  hg_cli_json_str(f, "b", hg_dtype_name(p->b_type), ", ");
  hg_cli_json_str(f, "d", hg_dtype_name(p->d_type), ", ");
  hg_cli_json_str(f, "config", cfg, ", ");
  hg_cli_json_str(f, "kernel", r->kernel, ", ");
  hg_cli_json_str(f, "mainloop", hg_gemm_mainloop_name(r->config.mainloop), ", ");
  fprintf(f,
          "\"tma_store\": %s, \"store\": \"%s\", \"cp_async_a\": %s, \"cp_async_b\": %s, \"grid\": "
          "%d, ",
          r->tma_store ? "true" : "false", r->store, r->cp_async_a ? "true" : "false",
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
  fprintf(f, "\"cublaslt_epilogue\": \"%s\", ", r->blas_epilogue);
  json_num(f, "unfused_ms", r->unfused_ms, true);
  hg_cli_json_str(f, "c", hg_dtype_name(p->c_type), ", ");
  if (p->aux) {
    hg_cli_json_str(f, "aux_type", hg_dtype_name(p->aux_type), ", ");
    json_num(f, "rel_err_aux", r->rel_err_aux, true);
  }
  if (p->amax)
    fprintf(f,
            "\"amax\": %.9g, \"amax_ref\": %.9g, \"amax_equal\": %s, \"repeat_amax_equal\": %s, ",
            (double)r->amax, (double)r->amax_ref, r->amax_equal ? "true" : "false",
            r->repeat_amax_equal ? "true" : "false");
  if (r->state_bytes)
    fprintf(f, "\"state_bytes\": %" PRId64 ", \"state_zero\": %s, ", r->state_bytes,
            r->state_zero ? "true" : "false");
  if (hg_dtype_bits(p->d_type) == 8) fprintf(f, "\"saturated\": %" PRId64 ", ", r->d_saturated);
  json_num(f, "plain_ms", r->plain_ms, true);
  json_num(f, "over_plain", r->over_plain, true);
  fprintf(f, "\"repeat_identical\": %s, ", r->repeat_identical ? "true" : "false");
  if (r->batch_m) fprintf(f, "\"batch_identical\": %s, ", r->batch_identical ? "true" : "false");
  fprintf(f, "\"nonfinite\": %" PRId64 ", ", r->bad);
  fprintf(f, "\"benched\": %s, ", r->benched ? "true" : "false");
  json_num(f, "ms", r->ms, true);
  json_num(f, "tflops", r->tflops, true);
  json_num(f, "cublas_ms", r->blas_ms, true);
  json_num(f, "cublas_tflops", r->blas_tflops, true);
  json_num(f, "ratio", r->ratio, true);
  json_num(f, "repack_ms", r->repack_ms, true);
  json_num(f, "cpasync_ms", r->cpasync_ms, true);
  json_num(f, "gbs", r->gbs, true);
  json_num(f, "d2d_gbs", r->d2d_gbs, true);
  json_num(f, "bw_frac", r->bw_frac, true);
  fprintf(f, "\"rotated\": %d, ", r->rotated);
  json_num(f, "run_host_us", r->run_host_us, true);
  json_num(f, "run_host_idle_us", r->run_host_idle_us, true);
  json_num(f, "warm_create_ms", r->warm_create_ms, true);
  fprintf(f, "\"repacked_a\": %s, \"repacked_b\": %s, ", r->repacked_a ? "true" : "false",
          r->repacked_b ? "true" : "false");
  hg_cli_json_str(f, "note", r->note, "");
  if (!hg_is_ok(&s)) {
    fprintf(f, ", ");
    hg_cli_json_error(f, hg_code_name(s.code), s.msg);
  }
  fprintf(f, "}");
}

static void print_report_text(const hg_gemm_problem_t *p, const hg_gemm_report_t *r) {
  char cfg[128];
  hg_gemm_config_print(&r->config, cfg, sizeof cfg);
  char mode[96] = "";
  if (hg_dtype_bits(p->a_type) == 8) {
    /* fp8: the accumulation, which cuBLASLt runs in too */
    if (p->scale == HG_SCALE_BLOCK)
      snprintf(mode, sizeof mode, "  (fp8 block-wise scales 1x128 / 128x128, every k-block)");
    else if (p->fp8_accum == HG_FP8_ACCUM_FAST)
      snprintf(mode, sizeof mode, "  (fp8 %s scales, accumulation fast: cuBLASLt FAST_ACCUM)",
               hg_gemm_scale_name(p->scale));
    else
      snprintf(mode, sizeof mode, "  (fp8 %s scales, accumulation accurate: every %d k-blocks)",
               hg_gemm_scale_name(p->scale),
               p->fp8_promote ? p->fp8_promote : HG_FP8_PROMOTE_DEFAULT);
  }
  printf("gemm %" PRId64 "x%" PRId64 "x%" PRId64 " batch %d  %s x %s -> %s%s\n", p->m, p->n, p->k,
         p->batch, hg_dtype_name(p->a_type), hg_dtype_name(p->b_type), hg_dtype_name(p->d_type),
         mode);
  char cpa[48] = "", cpb[48] = "";
  if (r->cp_async_a)
    snprintf(cpa, sizeof cpa, ", A by %s (%d B)", r->a_vec >= 4 ? "cp.async" : "registers",
             r->a_vec);
  if (r->cp_async_b)
    snprintf(cpb, sizeof cpb, ", B by %s (%d B)", r->b_vec >= 4 ? "cp.async" : "registers",
             r->b_vec);
  printf("  config   %s  (kernel %s, grid %d, %s, %s epilogue%s%s)\n", cfg, r->kernel, r->grid,
         hg_gemm_mainloop_name(r->config.mainloop), r->store, cpa, cpb);
  printf("  timing   generate %.2f ms, %s %.2f ms, load %.2f ms, spec->first result %.2f ms\n",
         r->gen_ms, r->jit.cache_hit ? "cache hit" : "JIT", r->jit.compile_ms, r->jit.load_ms,
         r->first_run_ms);
  if (r->checked)
    printf("  check    rel. error %.3g vs f32 reference (tolerance %.3g)%s; cuBLASLt %.3g\n",
           r->rel_err, r->tolerance, r->bad ? " NON-FINITE OUTPUT" : "", r->rel_err_blas);
  if (r->checked && p->aux)
    printf("  aux      %s, rel. error %.3g vs the reference's pre-activation values\n",
           hg_dtype_name(p->aux_type), r->rel_err_aux);
  if (r->checked && p->amax)
    printf("  amax     %.9g, host max |D| over the stored D %.9g: %s; %s in %d more launches\n",
           (double)r->amax, (double)r->amax_ref, r->amax_equal ? "bitwise equal" : "DIFFERENT",
           r->repeat_amax_equal ? "bitwise equal again" : "DIFFERENT", r->repeat_runs);
  if (r->checked && r->state_bytes)
    printf("  state    the workspace's first %" PRId64 " bytes %s after the launches\n",
           r->state_bytes, r->state_zero ? "left zero" : "NOT LEFT ZERO");
  if (r->checked && hg_dtype_bits(p->d_type) == 8)
    printf("  fp8 D    %" PRId64 " reference values saturated (to +-%g)\n", r->d_saturated,
           p->d_type == HG_E4M3 ? 448.0 : 57344.0);
  if (r->checked && r->repeat_atomic)
    printf("  bits     D %s over %d more launches (split-K by atomic adds: the order of "
           "arrival), within %.2g of the first\n",
           r->repeat_identical ? "identical" : "differs", r->repeat_runs, r->repeat_rel_diff);
  else if (r->checked)
    printf("  bits     D %s over %d more launches\n",
           r->repeat_identical ? "identical" : "DIFFERENT", r->repeat_runs);
  if (r->checked && r->batch_m)
    printf("  bits     its first %" PRId64 " rows computed with M = %" PRId64
           ": %s (batch-invariant)\n",
           r->batch_m, r->batch_m, r->batch_identical ? "identical" : "DIFFERENT");
  if (r->benched)
    printf("  bench    hopgen %.4f ms = %.1f TFLOP/s | cuBLASLt%s%s %.4f ms = %.1f TFLOP/s | ratio "
           "%.3f\n",
           r->ms, r->tflops, r->blas_epilogue[0] ? " fused " : "", r->blas_epilogue, r->blas_ms,
           r->blas_tflops, r->ratio);
  if (r->benched && r->d2d_gbs > 0)
    printf("  memory   A+B+D at %.0f GB/s = %.3f of the driver's D2D copy (%.0f GB/s, same run); "
           "timed over %d operand set%s\n",
           r->gbs, r->bw_frac, r->d2d_gbs, r->rotated, r->rotated == 1 ? "" : "s (past the L2)");
  if (r->benched)
    printf("  host     hg_gemm_op_run %.2f us a call (median; %.2f us after a synchronise), a "
           "warm hg_gemm_op_create %.3f ms\n",
           r->run_host_us, r->run_host_idle_us, r->warm_create_ms);
  if (r->benched && r->unfused_ms > 0)
    printf("  unfused  plain GEMM + a bias/activation kernel %.4f ms: fused is %.3fx faster\n",
           r->unfused_ms, r->unfused_ms / r->ms);
  if (r->benched && r->plain_ms > 0)
    printf("  plain    the plain GEMM with bf16 D %.4f ms: this run adds %+.1f%%\n", r->plain_ms,
           100 * r->over_plain);
  if (r->benched && r->repack_ms > 0)
    printf("  other    repack + tma-wgmma %.4f ms: this run (in place) took %.3fx its time\n",
           r->repack_ms, r->ms / r->repack_ms);
  if (r->benched && r->cpasync_ms > 0)
    printf("  other    in place (cp.async) %.4f ms: this run (repacked) took %.3fx its time\n",
           r->cpasync_ms, r->ms / r->cpasync_ms);
  if (r->note[0]) printf("  note     %s\n", r->note);
}

/* --mainloop, --stream-k, --split-k, --gelu and --direct-stores change a configuration:
 * --config's, else the heuristic's (under --heuristic's rules) for the problem on dev (NULL:
 * 132 SMs) with that mainloop. */
static hg_status_t force_config(gemm_args_t *g, const hg_device_info_t *dev) {
  if (g->mainloop == HG_MAINLOOP_AUTO && !g->stream_k && !g->splits && g->gelu < 0 &&
      !g->direct_stores && !g->have_rules)
    return hg_ok();
  /* the mainloop the configuration is chosen for: an export's AUTO is tma-wgmma (operands
   * read in place, no repack: hg_export_gemm), so its choice must be that mainloop's */
  const hg_gemm_mainloop_t ml =
      g->export_mode && g->mainloop == HG_MAINLOOP_AUTO ? HG_MAINLOOP_TMA_WGMMA : g->mainloop;
  /* whether the configuration chosen here (not one given) is the decode kernel's */
  bool decode = false;
  if (!g->run.have_cfg && g->have_rules) {
    /* what hg_gemm_build would take, under the rules */
    HG_TRY(hg_gemm_config_choose(&g->p, ml, dev, &g->rules, &g->run.cfg));
    g->run.have_cfg = true;
    decode = g->run.cfg.mainloop == HG_MAINLOOP_LDG_MMASYNC;
    /* AUTO keeps its repacking, unless a rule chose the decode kernel (in place) */
    if (g->mainloop == HG_MAINLOOP_AUTO && g->run.cfg.mainloop != HG_MAINLOOP_LDG_MMASYNC)
      g->run.cfg.mainloop = HG_MAINLOOP_AUTO;
  } else if (!g->run.have_cfg) {
    hg_gemm_kernel_t k;
    HG_TRY(hg_gemm_build(&g->p, NULL, ml, dev, HG_BACKEND_PTX, &k));
    g->run.cfg = k.config;
    g->run.have_cfg = true;
    decode = k.config.mainloop == HG_MAINLOOP_LDG_MMASYNC;
    /* the configuration names the mainloop it resolved to; left AUTO, operands TMA cannot
     * address are still repacked (a named mainloop would read them in place, and the
     * heuristic's cluster would then be refused) */
    if (g->mainloop == HG_MAINLOOP_AUTO) g->run.cfg.mainloop = HG_MAINLOOP_AUTO;
    hg_gemm_kernel_free(&k);
  }
  /* A forced K schedule (stream-K, a split by the reduction pass) is the persistent wgmma
   * kernel's: where AUTO chose the decode kernel (16-row CTAs; it splits by atomics only and
   * has no stream-K), take what the heuristic gives the tma-wgmma kernel, operands TMA cannot
   * address still repacked (AUTO kept). A --config is kept as given (the generator says why
   * it cannot). */
  if ((g->stream_k || g->splits) && g->mainloop == HG_MAINLOOP_AUTO && decode) {
    HG_TRY(hg_gemm_config_choose(&g->p, HG_MAINLOOP_TMA_WGMMA, dev,
                                 g->have_rules ? &g->rules : NULL, &g->run.cfg));
    g->run.cfg.mainloop = HG_MAINLOOP_AUTO;
  }
  if (g->mainloop != HG_MAINLOOP_AUTO) g->run.cfg.mainloop = g->mainloop;
  /* the K schedule replaced whole: a split's form (,kSa atomics, ,kSr in the GEMM) goes with
   * its split (the heuristic's k4a left split_atomic set without a split under --stream-k) */
  if (g->stream_k || g->splits) g->run.cfg.split_atomic = 0, g->run.cfg.split_scatter = 0;
  if (g->stream_k) g->run.cfg.stream_k = 1, g->run.cfg.splits = 0;
  if (g->splits) g->run.cfg.splits = g->splits, g->run.cfg.stream_k = 0;
  if (g->gelu >= 0) g->run.cfg.gelu = g->gelu;
  if (g->direct_stores) g->run.cfg.epi_direct = 1;
  return hg_ok();
}

/* Without --check/--bench/--tune: pick the configuration, generate, write what --emit and
 * --emit-mlir ask for, assemble with ptxas. */
static int gemm_generate(gemm_args_t *g) {
  if (g->run.be == HG_BACKEND_MLIR) hg_cli_cache_note(); /* lowerings are cached */
  /* The library's one step from problem to kernel (no device here: the heuristic for an
   * H100/H200's 132 SMs). */
  hg_gemm_kernel_t k;
  hg_status_t s = force_config(g, NULL);
  if (hg_is_ok(&s))
    s = hg_gemm_build(&g->p, g->run.have_cfg ? &g->run.cfg : NULL, g->mainloop, NULL, g->run.be,
                      &k);
  if (!hg_is_ok(&s)) return hg_cli_fail(s);
  const hg_gemm_config_t c = k.config;
  /* The files first: the kernel is worth having even where ptxas is missing or refuses it. */
  if (g->run.emit) s = hg_cli_write_file(g->run.emit, k.k.ptx.data);
  if (hg_is_ok(&s) && g->emit_mlir) s = hg_cli_write_file(g->emit_mlir, k.k.mlir.data);
  hg_ptxas_report_t rep;
  const char *ptxas = hg_cli_ptxas_verdict(k.k.ptx.data, &s, &rep);
  const bool ptxas_ok = !strcmp(ptxas, "ok");
  char cfg[128];
  hg_gemm_config_print(&c, cfg, sizeof cfg);
  if (g->run.json) {
    printf("{\"command\": \"gemm\", \"ok\": %s, ", hg_is_ok(&s) ? "true" : "false");
    hg_cli_json_str(stdout, "kernel", k.k.name, ", ");
    hg_cli_json_str(stdout, "config", cfg, ", ");
    printf("\"backend\": \"%s\", \"gen_ms\": %.3f, \"smem_bytes\": %u, \"threads\": %u, "
           "\"tma_store\": %s, \"ptxas\": %s, \"registers\": %d, \"spill_bytes\": %d, "
           "\"mainloop\": \"%s\", \"a_path\": \"%s\", \"b_path\": \"%s\", \"from_cache\": %s",
           hg_backend_name(g->run.be), k.k.gen_ms, k.k.smem_bytes, k.k.threads,
           k.tma_store ? "true" : "false", ptxas_ok ? "true" : "false", rep.registers,
           rep.spill_store_bytes + rep.spill_load_bytes, hg_gemm_mainloop_name(c.mainloop),
           k.a_tma ? "tma" : "cp.async", k.b_tma ? "tma" : "cp.async",
           k.from_cache ? "true" : "false");
    if (!hg_is_ok(&s)) {
      printf(", ");
      hg_cli_json_error(stdout, hg_code_name(s.code), s.msg);
    }
    printf("}\n");
    hg_cli_json_printed();
  } else {
    printf("kernel %s\n  config %s, %u threads, %u B shared memory, %s epilogue\n"
           "  generated in %.2f ms (%s backend%s); ptxas: %s, %d registers, %d B spilled\n",
           k.k.name, cfg, k.k.threads, k.k.smem_bytes, hg_gemm_store_name(&k), k.k.gen_ms,
           hg_backend_name(g->run.be), k.from_cache ? ", from the kernel cache" : "", ptxas,
           rep.registers, rep.spill_store_bytes + rep.spill_load_bytes);
    for (int i = 0; i < 2; i++)
      if (k.config.mainloop == HG_MAINLOOP_LDG_MMASYNC)
        printf("  %c is read with ld.global straight into mma.sync fragments (%d-byte aligned "
               "rows%s)\n",
               i ? 'B' : 'A', i ? k.b_vec : k.a_vec,
               (i ? k.b_vec : k.a_vec) == 16 ? "" : ": aligned blocks shifted into place");
      else if (i ? k.repack_b : k.repack_a)
        printf("  %c is repacked into packed 16-byte rows before each run (TMA cannot address "
               "its rows; --mainloop tma-wgmma reads them in place)\n",
               i ? 'B' : 'A');
      else if (!(i ? k.b_tma : k.a_tma))
        printf((i ? k.b_vec : k.a_vec) >= 4
                   ? "  %c is read with cp.async in %d-byte chunks (TMA cannot address its rows)\n"
                   : "  %c is read in place by staged window copies (%d-byte aligned rows: "
                     "cp.async stages the aligned 16-byte blocks under them, shifted into "
                     "place in shared memory)\n",
               i ? 'B' : 'A', i ? k.b_vec : k.a_vec);
  }
  hg_gemm_kernel_free(&k);
  return hg_is_ok(&s) ? 0 : hg_cli_fail(s);
}

/* hopgen export gemm: the kernel and its libcuda-only launcher as files. */
static int gemm_export(gemm_args_t *g, bool json) {
  if (hg_cli_sandboxed())
    return hg_cli_fail(hg_error(HG_ERR_IO, "export: files are not written in the sandbox"));
  const hg_export_options_t o = {.dir = g->out ? g->out : ".",
                                 .name = g->name ? g->name : "hopgen_gemm",
                                 .cubin = !g->ptx_only};
  hg_export_result_t r;
  hg_status_t s = force_config(g, NULL);
  if (hg_is_ok(&s))
    s = hg_export_gemm(&g->p, g->run.have_cfg ? &g->run.cfg : NULL, g->run.be, &o, &r);
  if (!hg_is_ok(&s)) return hg_cli_fail(s);
  if (json) {
    printf("{\"command\": \"export\", \"ok\": true, \"cubin\": %s, ",
           r.has_cubin ? "true" : "false");
    hg_cli_json_str(stdout, "note", r.note, ", ");
    printf("\"files\": [");
    for (int i = 0; i < r.count; i++) {
      printf("%s", i ? ", " : "");
      hg_cli_json_str(stdout, NULL, r.files[i], "");
    }
    printf("]}\n");
    hg_cli_json_printed();
  } else {
    printf("exported %s\n", r.note);
    for (int i = 0; i < r.count; i++) printf("  %s\n", r.files[i]);
  }
  return 0;
}

int hg_cmd_export(int argc, char **argv) {
  if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
    return hg_cli_help(export_usage);
  hg_cli_args_t a;
  if (argc < 2 || strcmp(argv[1], "gemm") != 0) {
    hg_cli_args_init(&a, "export", gemm_opts, 0, 1, argv);
    hg_cli_bad(&a, "hopgen export takes a kernel kind: hopgen export gemm M N K [options] (%s)",
               argc < 2 ? "none given" : "only GEMMs are exported");
    return hg_cli_usage(&a);
  }
  hg_cli_args_init(&a, "export gemm", gemm_opts, (int)(sizeof gemm_opts / sizeof gemm_opts[0]),
                   argc - 1, argv + 1);
  if (a.help) return hg_cli_help(export_usage);
  gemm_args_t g;
  if (!parse_args(&a, &g, true)) return hg_cli_usage(&a);
  return gemm_export(&g, (a.seen & HG_CLI_BIT(HG_RUN_JSON)) != 0);
}

int hg_cmd_gemm(int argc, char **argv) {
  hg_cli_args_t a;
  hg_cli_args_init(&a, "gemm", gemm_opts, (int)(sizeof gemm_opts / sizeof gemm_opts[0]), argc,
                   argv);
  if (a.help) return hg_cli_help(gemm_usage);
  gemm_args_t g;
  if (!parse_args(&a, &g, false)) return hg_cli_usage(&a);
  if (!g.run.check && !g.run.bench && !g.tune) return gemm_generate(&g);
  hg_cli_cache_note(); /* compiled kernels and tuned configurations are cached */
  hg_rt_t *rt;
  hg_status_t s = hg_cli_rt_open(0, &rt);
  if (!hg_is_ok(&s)) return hg_cli_fail(s);
  hg_gemm_run_options_t o = hg_cli_run_options(&g.run);
  o.compare_repack = g.compare_repack;
  if (g.deterministic) o.repeat_runs = 9;
  o.scale_d = g.scale_d;
  s = force_config(&g, hg_rt_device(rt));
  if (!hg_is_ok(&s)) {
    hg_rt_close(rt);
    return hg_cli_fail(s);
  }
  o.config = g.run.have_cfg ? &g.run.cfg : NULL;
  hg_gemm_report_t r;
  memset(&r, 0, sizeof r);
  if (g.tune) {
    hg_gemm_config_t best;
    s = hg_gemm_tune(rt, &g.p, &o, &best, &r);
    if (hg_is_ok(&s) && !g.run.json) {
      char cfg[128];
      hg_gemm_config_print(&best, cfg, sizeof cfg);
      printf("tuned: %s (kept in the cache)\n", cfg);
    }
    if (hg_is_ok(&s) && (g.run.check || g.run.bench)) {
      o.config = &best;
      s = hg_gemm_run(rt, &g.p, &o, &r);
    }
  } else {
    s = hg_gemm_run(rt, &g.p, &o, &r);
  }
  if (r.kernel[0]) {
    hg_gemm_problem_t p = g.p;
    hg_gemm_problem_normalize(&p);
    if (g.run.json) {
      print_report_json(stdout, &p, &r, s);
      printf("\n");
      hg_cli_json_printed();
    } else {
      print_report_text(&p, &r);
    }
  }
  hg_rt_close(rt);
  return hg_is_ok(&s) ? 0 : hg_cli_fail(s);
}

/* ------------------------------------------------------------------ bench gemm */

static const char bench_usage[] =
    "usage: hopgen bench gemm [--set NAME] [--types bf16,e4m3] [--shapes all|N] [--no-check]\n"
    "                         [--iters N] [--backend ptx|mlir] [--compare-repack] [--json FILE]\n"
    "  A shape set (--set llm (default), decode, splitk, odd, waves, mid, unaligned or all;\n"
    "  and fp8block, fp8row: fp8 types only, with block-wise or row-wise scales) for each type\n"
    "  (fp8 with bf16 output), checked against the f32 reference and timed against\n"
    "  cuBLASLt on the same data; prints a table, the geometric mean of the ratios and the\n"
    "  lowest one per set; --shapes N takes the first N shapes of each set; --compare-repack\n"
    "  also times the repack path for operands TMA cannot address; --json writes every report.\n"
    "  --heuristic RULES: the heuristic's A/B rules (hopgen gemm --help), e.g. nobs or sk.\n"
    "  --epilogue STEPS [--bias-type T] [--aux] [--d-type T] [--amax]: the same fused\n"
    "  epilogue on every shape (hopgen gemm --help); the table then gives its time over the\n"
    "  plain GEMM of the shape (+plain), the unfused sequence's time over it (GEMM, then a\n"
    "  bias/activation kernel: unfused) and the ratio to cuBLASLt's same fused epilogue where\n"
    "  it has one (BIAS, RELU_BIAS, GELU_BIAS, GELU_AUX_BIAS; else its plain GEMM).\n";

enum {
  B_TYPES,
  B_SHAPES,
  B_NO_CHECK,
  B_ITERS,
  B_BACKEND,
  B_JSON,
  B_SET,
  B_REPACK,
  B_HEURISTIC,
  B_EPILOGUE,
  B_BIAS_TYPE,
  B_AUX,
  B_D_TYPE,
  B_AMAX
};
static const hg_cli_opt_t bench_opts[] = {
    {B_SET, "--set", NULL, HG_CLI_VALUE, 0},
    {B_REPACK, "--compare-repack", NULL, HG_CLI_FLAG, 0},
    {B_TYPES, "--types", NULL, HG_CLI_VALUE, 0},
    {B_SHAPES, "--shapes", NULL, HG_CLI_VALUE, 0},
    {B_NO_CHECK, "--no-check", NULL, HG_CLI_FLAG, 0},
    {B_ITERS, "--iters", NULL, HG_CLI_VALUE, 0},
    {B_BACKEND, "--backend", NULL, HG_CLI_VALUE, 0},
    {B_JSON, "--json", NULL, HG_CLI_VALUE, 0}, /* a file: the table stays on stdout */
    {B_HEURISTIC, "--heuristic", NULL, HG_CLI_VALUE, 0},
    {B_EPILOGUE, "--epilogue", NULL, HG_CLI_VALUE, 0},
    {B_BIAS_TYPE, "--bias-type", NULL, HG_CLI_VALUE, 0},
    {B_AUX, "--aux", NULL, HG_CLI_FLAG, 0},
    {B_D_TYPE, "--d-type", NULL, HG_CLI_VALUE, 0},
    {B_AMAX, "--amax", NULL, HG_CLI_FLAG, 0},
};

/* "bf16,e4m3": each a type, at most cap of them; the count, or 0 with a->error set. */
static int parse_types(hg_cli_args_t *a, const char *v, hg_dtype_t *out, int cap) {
  int n = 0;
  for (const char *p = v;;) {
    const size_t len = strcspn(p, ",");
    char name[16];
    if (len == 0 || len >= sizeof name || n == cap)
      return hg_cli_bad(a, "--types '%s' is not a list of up to %d types like bf16,e4m3", v, cap);
    memcpy(name, p, len);
    name[len] = '\0';
    if (!hg_cli_check(a, hg_dtype_parse(name, &out[n++]))) return 0;
    if (!p[len]) return n;
    p += len + 1;
  }
}

int hg_cli_bench_gemm(int argc, char **argv) {
  hg_cli_args_t a;
  hg_cli_args_init(&a, "bench gemm", bench_opts, (int)(sizeof bench_opts / sizeof bench_opts[0]),
                   argc, argv);
  if (a.help) return hg_cli_help(bench_usage);
  a.max_operands = 0;
  const int all = HG_GEMM_SET_MAX;
  hg_dtype_t types[8] = {HG_BF16, HG_E4M3};
  int ntypes = 2, nshapes = all;
  const char *json = NULL, *v, *set = "llm";
  bool check = true, repack = false, have_rules = false;
  hg_gemm_rules_t rules = {0};
  /* --epilogue and the outputs: the problem every shape starts from (D bf16 by default) */
  hg_gemm_problem_t chain = {.d_type = HG_BF16};
  bool bias_type_given = false;
  hg_backend_t be = HG_BACKEND_PTX;
  int64_t x = all, iters = 30;
  for (int id; (id = hg_cli_next(&a, &v)) != HG_CLI_END;) {
    bool ok = true;
    switch (id) {
    case HG_CLI_ERROR:
      return hg_cli_usage(&a);
    case B_TYPES:
      ok = (ntypes = parse_types(&a, v, types, 8)) > 0;
      break;
    case B_SHAPES:
      ok = !strcmp(v, "all") || hg_cli_int(&a, v, 1, all, &x);
      nshapes = strcmp(v, "all") ? (int)x : all;
      break;
    case B_NO_CHECK:
      check = false;
      break;
    case B_ITERS:
      ok = hg_cli_int(&a, v, 1, 100000, &iters);
      break;
    case B_BACKEND:
      ok = hg_cli_check(&a, hg_backend_parse(v, &be));
      break;
    case B_JSON:
      json = v;
      break;
    case B_SET: {
      int64_t shapes[HG_GEMM_SET_MAX][3];
      int n;
      set = v;
      ok = !strcmp(v, "all") || hg_cli_check(&a, hg_gemm_shape_set(v, shapes, &n));
      break;
    }
    case B_REPACK:
      repack = true;
      break;
    case B_HEURISTIC:
      ok = have_rules = hg_cli_check(&a, hg_gemm_rules_parse(v, &rules));
      break;
    case B_EPILOGUE:
      ok = hg_cli_check(&a, hg_gemm_epilogue_parse(v, &chain));
      break;
    case B_BIAS_TYPE:
      ok = bias_type_given = hg_cli_check(&a, hg_dtype_parse(v, &chain.bias_type));
      break;
    case B_AUX:
      chain.aux = true;
      break;
    case B_D_TYPE:
      ok = hg_cli_check(&a, hg_dtype_parse(v, &chain.d_type));
      break;
    case B_AMAX:
      chain.amax = true;
      break;
    }
    if (!ok) return hg_cli_usage(&a);
  }
  if (!chain_options(&a, &chain, bias_type_given)) return hg_cli_usage(&a);
  const bool with_chain = chain.act != HG_ACT_NONE || chain.bias != HG_BIAS_NONE ||
                          chain.rowscale || chain.colscale || chain.residual || chain.aux ||
                          chain.amax || chain.d_type != HG_BF16;
  const char *const one_set[] = {set};
  const char *const *set_list = strcmp(set, "all") ? one_set : hg_gemm_shape_set_names();
  int nsets = 1;
  if (!strcmp(set, "all"))
    for (nsets = 0; set_list[nsets]; nsets++) {
    }
  hg_cli_cache_note();
  hg_rt_t *rt;
  hg_status_t s = hg_cli_rt_open(0, &rt);
  if (!hg_is_ok(&s)) return hg_cli_fail(s);
  FILE *jf = NULL;
  if (json) {
    jf = hg_cli_open_write(json, &s);
    if (!jf) {
      hg_rt_close(rt);
      return hg_cli_fail(s);
    }
    fprintf(jf, "{");
    hg_cli_json_str(jf, "device", hg_rt_device(rt)->name, ", ");
    fprintf(jf, "\"driver\": %d, \"backend\": \"%s\", \"runs\": [\n",
            hg_rt_device(rt)->driver_version, hg_backend_name(be));
  }
  int failures = 0, first_json = 1;
  for (int si = 0; si < nsets; si++) {
    int64_t shape_set[HG_GEMM_SET_MAX][3];
    int set_n = 0;
    hg_gemm_shape_set(set_list[si], shape_set, &set_n);
    /* the fp8 sets name their scaling; they run the fp8 types only */
    const hg_gemm_scale_t scale = !strcmp(set_list[si], "fp8block") ? HG_SCALE_BLOCK
                                  : !strcmp(set_list[si], "fp8row") ? HG_SCALE_ROW
                                                                    : HG_SCALE_TENSOR;
    for (int ti = 0; ti < ntypes; ti++) {
      const hg_dtype_t ty = types[ti];
      const char *t = hg_dtype_name(ty);
      if (scale != HG_SCALE_TENSOR && hg_dtype_bits(ty) != 8) continue;
      /* bw: hopgen's bytes moved (A + B + D) over its time, as a fraction of the D2D copy's */
      printf("set %s\n%-5s %6s %6s %6s  %-30s %9s %9s %7s %9s %5s%s\n", set_list[si], "type", "M",
             "N", "K", "config", "hopgen", "cuBLASLt", "ratio", "rel.err", "bw",
             repack       ? "  repack"
             : with_chain ? "   +plain  unfused  cuBLASLt epilogue"
                          : "");
      double log_sum = 0, min_ratio = 1e9, run_us_max = 0, idle_us_max = 0, create_ms_max = 0;
      int n_ratio = 0;
      for (int i = 0; i < set_n && i < nshapes; i++) {
        /* the chain's problem (its steps and D's type) with this shape and type */
        hg_gemm_problem_t p = chain;
        p.m = shape_set[i][0];
        p.n = shape_set[i][1];
        p.k = shape_set[i][2];
        p.batch = 1;
        p.a_type = p.b_type = ty;
        p.a_k_major = p.b_k_major = true;
        p.alpha = 1.0f;
        p.scale = scale;
        hg_gemm_run_options_t o = hg_gemm_run_options_default();
        o.backend = be;
        o.check = check;
        o.bench = true;
        o.iters = (int)iters;
        o.compare_repack = repack;
        hg_gemm_report_t r;
        memset(&r, 0, sizeof r);
        /* --heuristic: the configuration hg_gemm_run would take, under the rules (AUTO's
         * repacking kept) */
        hg_gemm_config_t ruled;
        s = hg_ok();
        if (have_rules) {
          s = hg_gemm_config_choose(&p, HG_MAINLOOP_AUTO, hg_rt_device(rt), &rules, &ruled);
          if (ruled.mainloop != HG_MAINLOOP_LDG_MMASYNC) ruled.mainloop = HG_MAINLOOP_AUTO;
          o.config = &ruled;
        }
        if (hg_is_ok(&s)) s = hg_gemm_run(rt, &p, &o, &r);
        char cfg[128], rp[32] = "";
        hg_gemm_config_print(&r.config, cfg, sizeof cfg);
        /* the other path's time over this run's: > 1 means this run's path is faster */
        if (repack && (r.repack_ms > 0 || r.cpasync_ms > 0))
          snprintf(rp, sizeof rp, "  %s %.3fx", r.repack_ms > 0 ? "repack" : "in-place",
                   (r.repack_ms > 0 ? r.repack_ms : r.cpasync_ms) / r.ms);
        /* the chain: its time over the plain GEMM's, the unfused sequence's over it */
        char ep[96] = "";
        if (with_chain && r.benched) {
          /* "-" where the run has no such time (a D type alone: no plain GEMM timed) */
          char pl[16] = "      -", un[16] = "        -";
          if (r.plain_ms > 0) snprintf(pl, sizeof pl, "%+6.1f%%", 100 * r.over_plain);
          if (r.unfused_ms > 0) snprintf(un, sizeof un, "%8.3fx", r.unfused_ms / r.ms);
          snprintf(ep, sizeof ep, "  %s %s  %s", pl, un,
                   r.blas_epilogue[0] ? r.blas_epilogue : "(plain)");
        }
        printf("%-5s %6" PRId64 " %6" PRId64 " %6" PRId64
               "  %-30s %9.1f %9.1f %7.3f %9.2e %5.2f%s%s%s\n",
               t, p.m, p.n, p.k, cfg, r.tflops, r.blas_tflops, r.ratio, r.rel_err, r.bw_frac, rp,
               ep, hg_is_ok(&s) ? "" : "  FAILED");
        if (!hg_is_ok(&s)) {
          fprintf(stderr, "  %s\n", s.msg);
          failures++;
        }
        if (r.benched) {
          run_us_max = fmax(run_us_max, r.run_host_us);
          idle_us_max = fmax(idle_us_max, r.run_host_idle_us);
          create_ms_max = fmax(create_ms_max, r.warm_create_ms);
        }
        if (r.benched && r.ratio > 0) {
          log_sum += log(r.ratio);
          n_ratio++;
          if (r.ratio < min_ratio) min_ratio = r.ratio;
        }
        if (jf) {
          fprintf(jf, "%s  ", first_json ? "" : ",\n");
          first_json = 0;
          print_report_json(jf, &p, &r, s);
        }
        fflush(stdout);
      }
      if (n_ratio)
        printf("%s %s: geometric-mean ratio %.3f over %d shapes, lowest %.3f\n", set_list[si], t,
               exp(log_sum / n_ratio), n_ratio, min_ratio);
      printf("%s %s: host time, the largest over the set: hg_gemm_op_run %.2f us a call "
             "(median; %.2f us after a synchronise), warm hg_gemm_op_create %.3f ms\n\n",
             set_list[si], t, run_us_max, idle_us_max, create_ms_max);
    }
  }
  hg_rt_close(rt);
  if (jf) {
    fprintf(jf, "\n]}\n");
    s = hg_cli_close_write(jf, json);
    if (!hg_is_ok(&s)) return hg_cli_fail(s);
  }
  return failures ? 1 : 0;
}
