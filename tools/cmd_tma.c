/* hopgen tma: generate, ptxas-validate, run and check the TMA copy kernels of the CuTe
 * tutorial (load, prefetch, multicast load, store, reduce). Parsing and printing only:
 * hg_tma_generate and hg_tma_run (kernels.h) do the work. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hopgen/kernels.h"

/* ---------------------------------------------------------------- JSON helpers */

static void json_ints(FILE *f, const char *name, int n, const int64_t *v, const char *sep) {
  fprintf(f, "\"%s\": [", name);
  for (int i = 0; i < n; i++) fprintf(f, "%s%" PRId64, i ? ", " : "", v[i]);
  fprintf(f, "]%s", sep);
}

static void json_error(FILE *f, hg_status_t s) {
  hg_cli_json_error(f, hg_code_name(s.code), s.msg);
}

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: hopgen tma load|prefetch|multicast|store|reduce [options]\n"
      "       hopgen tma --batch FILE [options]\n\n"
      "Generate the TMA copy kernel of the CuTe tutorial for a tile of a global tensor, check\n"
      "it with ptxas -arch=sm_90a, and with --check run it on the GPU and compare every byte\n"
      "of shared memory (loads) or of the output (stores) with the CPU model of TMA.\n\n"
      "  load        each CTA loads its tile into shared memory (one thread, one mbarrier)\n"
      "  prefetch    the same, after an L2 prefetch of the tile's boxes\n"
      "  multicast   a cluster of CTAs shares each tile: each CTA multicasts its slice\n"
      "  store       each CTA stores its tile from shared memory\n"
      "  reduce      each CTA reduces its tile into the tensor (--reduce OP, default add)\n\n"
      "options (lists are one value per tensor mode, in your mode order, e.g. N,K):\n"
      "  --dtype T          u8 s8 e4m3 e5m2 u16 f16 bf16 u32 s32 f32 tf32 (default f16)\n"
      "  --shape S0,S1,..   the global tensor (default 256,256); row-major by default\n"
      "  --strides D0,..    element strides (default packed row-major: last mode contiguous)\n"
      "  --tile T0,T1,..    the CTA tile (alias --box; default 64 rows x 128 B)\n"
      "  --grid G0,G1,..    tiles along each mode (default auto: cover the tensor from the\n"
      "                     origin); CTA c takes tile c, mode 0 fastest\n"
      "  --origin O0,O1,..  where tile (0,..,0) starts; may be negative; along the\n"
      "                     contiguous mode a multiple of 16 bytes (default 0,..)\n"
      "  --cluster C        CTAs per cluster sharing each tile (multicast; default 2)\n"
      "  --swizzle S        none, 32B, 64B, 128B (default 128B)\n"
      "  --reduce OP        add min max inc dec and or xor (reduce; default add)\n"
      "  --nan              NaN instead of zero for out-of-bounds elements (float loads)\n"
      "  --backend B        ptx (default) or mlir\n"
      "  --emit FILE        write the PTX ('-': standard output)\n"
      "  --emit-mlir FILE   write the MLIR module (mlir backend)\n"
      "  --no-ptxas         skip the ptxas check (default: on without --check)\n"
      "  --ptxas            run the ptxas check with --check too\n"
      "  --check            run on the GPU and compare with the model (needs an sm_90 GPU)\n"
      "  --runs N           passes of --check (default 2: the cold path, then the warm path)\n"
      "  --seed N           data seed (default: from the clock)\n"
      "  --device N         GPU ordinal (default 0)\n"
      "  --max-cold-ms MS   with --check: fail when spec -> launched kernel took longer on the\n"
      "                     first pass\n"
      "  --max-warm-ms MS   the same for the last pass\n"
      "  --json             machine-readable result on standard output (one object per case)\n\n"
      "--batch FILE runs one case per line of FILE ('OP options...'; '#' starts a comment; '-'\n"
      "reads standard input), with the options given after FILE appended to every line, in\n"
      "one process and one GPU context: a PASS, FAIL or REFUSED (the planner's rule, before any\n"
      "GPU work) line per case, the first differences under a failure, and a tally last. Exit\n"
      "status 1 when a case failed. A kernel fault ends the CUDA context: later cases say so.\n");
}

static hg_tma_result_t result; /* large: keep off the stack */
static hg_tma_plan_t plan;

static void print_timing(FILE *f, const char *label, const hg_tma_timing_t *t) {
  fprintf(f,
          "  %s path: spec -> launched kernel %.2f ms (generate %.2f, JIT %.2f [%s], function "
          "%.2f, encode %.3f, launch %.3f); finished %.2f ms\n",
          label, t->to_launch_ms, t->gen_ms, t->jit_ms, t->jit.cache_hit ? "cache hit" : "compiled",
          t->function_ms, t->encode_ms, t->launch_ms, t->to_finish_ms);
  if (t->jit.cache_note[0]) fprintf(f, "    cache: %s\n", t->jit.cache_note);
}

static void json_timing(FILE *f, const char *name, const hg_tma_timing_t *t, const char *sep) {
  fprintf(f,
          "\"%s\": {\"to_launch_ms\": %.4f, \"to_finish_ms\": %.4f, \"gen_ms\": %.4f, "
          "\"jit_ms\": %.4f, \"function_ms\": %.4f, \"encode_ms\": %.4f, \"launch_ms\": %.4f, "
          "\"sync_ms\": %.4f, \"cache_hit\": %s, \"compile_ms\": %.4f, \"load_ms\": %.4f, ",
          name, t->to_launch_ms, t->to_finish_ms, t->gen_ms, t->jit_ms, t->function_ms,
          t->encode_ms, t->launch_ms, t->sync_ms, t->jit.cache_hit ? "true" : "false",
          t->jit.compile_ms, t->jit.load_ms);
  hg_cli_json_str(f, "cache_note", t->jit.cache_note, "}");
  fputs(sep, f);
}

static void print_list_i64(FILE *f, int n, const int64_t *v) {
  fputc('[', f);
  for (int i = 0; i < n; i++) fprintf(f, "%s%" PRId64, i ? "," : "", v[i]);
  fputc(']', f);
}

static void json_spec(FILE *f, const hg_tma_spec_t *s) {
  int64_t v[5][HG_TMA_MAX_RANK];
  for (int m = 0; m < s->rank; m++) {
    v[0][m] = s->shape[m];
    v[1][m] = s->stride[m];
    v[2][m] = s->tile[m];
    v[3][m] = s->grid[m];
    v[4][m] = s->origin[m];
  }
  fprintf(f, "\"spec\": {\"op\": \"%s\", \"dtype\": \"%s\", \"rank\": %d, ", hg_tma_op_name(s->op),
          hg_dtype_name(s->dtype), s->rank);
  json_ints(f, "shape", s->rank, v[0], ", ");
  json_ints(f, "strides", s->rank, v[1], ", ");
  json_ints(f, "tile", s->rank, v[2], ", ");
  json_ints(f, "grid", s->rank, v[3], ", ");
  json_ints(f, "origin", s->rank, v[4], ", ");
  fprintf(f, "\"cluster\": %d, \"swizzle\": \"%s\", \"oob_nan\": %s}, ", s->cluster,
          hg_swizzle_mode_name(s->swizzle), s->oob_nan ? "true" : "false");
}

static void json_plan(FILE *f, const hg_tma_plan_t *p, int64_t without_tma) {
  int64_t box[HG_TMA_MAX_RANK], dims[HG_TMA_MAX_RANK], str[HG_TMA_MAX_RANK];
  for (int d = 0; d < p->map.rank; d++) {
    box[d] = p->map.box_dim[d];
    dims[d] = (int64_t)p->map.global_dim[d];
    if (d) str[d - 1] = (int64_t)p->map.global_stride_bytes[d - 1];
  }
  fprintf(f, "\"plan\": {\"boxes\": %d, ", p->num_boxes);
  json_ints(f, "box_dim", p->map.rank, box, ", ");
  json_ints(f, "global_dim", p->map.rank, dims, ", ");
  json_ints(f, "global_stride_bytes", p->map.rank - 1, str, ", ");
  fprintf(f,
          "\"box_bytes\": %" PRIu32 ", \"tile_bytes\": %" PRIu32 ", \"stage_bytes\": %" PRIu32
          ", \"stage_align_bytes\": %" PRIu32 ", \"expect_tx_bytes\": %" PRIu32
          ", \"boxes_per_cta\": %d, \"mcast_mask\": %u, \"boxes_without_tma\": %" PRId64 "}, ",
          p->box_bytes, p->tile_bytes, p->smem_bytes, p->smem_align_bytes, p->expect_tx_bytes,
          p->boxes_per_cta, (unsigned)p->mcast_mask, without_tma);
}

/* One invocation's state that a batch shares: the GPU, opened at the first --check. */
typedef struct tma_ctx {
  bool batch;
  bool rt_tried;
  hg_status_t rt_status;
  hg_rt_t *rt;
  int64_t device;
  double open_ms;
  bool context_lost; /* a kernel fault killed the CUDA context: later cases cannot run */
} tma_ctx_t;

/* What one case came to (single mode: the exit status; batch mode: the tally). */
enum { CASE_PASS = 0, CASE_FAIL = 1, CASE_USAGE = 2, CASE_REFUSED = 3 };

enum {
  O_CHECK,
  O_JSON,
  O_NAN,
  O_PTXAS,
  O_DTYPE,
  O_SHAPE,
  O_STRIDES,
  O_TILE,
  O_GRID,
  O_ORIGIN,
  O_CLUSTER,
  O_SWIZZLE,
  O_REDUCE,
  O_BACKEND,
  O_EMIT,
  O_EMIT_MLIR,
  O_RUNS,
  O_SEED,
  O_DEVICE,
  O_MAX_COLD,
  O_MAX_WARM,
  O_NO_PTXAS = O_PTXAS + 32 /* its own id, the same bit as --ptxas */
};
static const hg_cli_opt_t tma_opts[] = {
    {O_CHECK, "--check", NULL, HG_CLI_FLAG, 0},
    {O_JSON, "--json", NULL, HG_CLI_JSON, 0},
    {O_NAN, "--nan", NULL, HG_CLI_FLAG, 0},
    {O_PTXAS, "--ptxas", NULL, HG_CLI_FLAG, 0},
    {O_NO_PTXAS, "--no-ptxas", NULL, HG_CLI_FLAG, HG_CLI_BIT(O_PTXAS)},
    {O_DTYPE, "--dtype", NULL, HG_CLI_VALUE, 0},
    {O_SHAPE, "--shape", NULL, HG_CLI_VALUE, 0},
    {O_STRIDES, "--strides", "--stride", HG_CLI_VALUE, 0},
    {O_TILE, "--tile", "--box", HG_CLI_VALUE, 0},
    {O_GRID, "--grid", NULL, HG_CLI_VALUE, 0},
    {O_ORIGIN, "--origin", NULL, HG_CLI_VALUE, 0},
    {O_CLUSTER, "--cluster", NULL, HG_CLI_VALUE, 0},
    {O_SWIZZLE, "--swizzle", NULL, HG_CLI_VALUE, 0},
    {O_REDUCE, "--reduce", NULL, HG_CLI_VALUE, 0},
    {O_BACKEND, "--backend", NULL, HG_CLI_VALUE, 0},
    {O_EMIT, "--emit", NULL, HG_CLI_VALUE, 0},
    {O_EMIT_MLIR, "--emit-mlir", NULL, HG_CLI_VALUE, 0},
    {O_RUNS, "--runs", NULL, HG_CLI_VALUE, 0},
    {O_SEED, "--seed", NULL, HG_CLI_VALUE, 0},
    {O_DEVICE, "--device", NULL, HG_CLI_VALUE, 0},
    {O_MAX_COLD, "--max-cold-ms", NULL, HG_CLI_VALUE, 0},
    {O_MAX_WARM, "--max-warm-ms", NULL, HG_CLI_VALUE, 0},
};

/* A case's options as the command line gave them. */
typedef struct tma_args {
  int64_t shape[8], strides[8], tile[8], grid[8], origin[8];
  int nshape, nstrides, ntile, ngrid, norigin;
  bool check, json, no_ptxas, want_ptxas;
  int64_t cluster, runs, seed;
  double max_cold, max_warm;
  hg_backend_t be;
  const char *emit, *emit_mlir;
} tma_args_t;

/* One option into t and s (the spec); false with a->error set. */
static bool tma_arg(hg_cli_args_t *a, int id, const char *v, tma_ctx_t *cx, tma_args_t *t,
                    hg_tma_spec_t *s, hg_tma_op_t *op, bool is_reduce) {
  switch (id) {
  case HG_CLI_OPERAND:
    return hg_cli_bad(a, "unexpected argument '%s' (the kernel comes first, then options)", v);
  case O_CHECK:
    return t->check = true;
  case O_JSON:
    return t->json = true;
  case O_NAN:
    return s->oob_nan = true;
  case O_PTXAS:
    return t->want_ptxas = true;
  case O_NO_PTXAS:
    return t->no_ptxas = true;
  case O_DTYPE:
    return hg_cli_check(a, hg_dtype_parse(v, &s->dtype));
  case O_SHAPE:
    return (t->nshape = hg_cli_list(a, v, ",x", 1, INT64_MAX, t->shape, 8)) > 0;
  case O_STRIDES:
    return (t->nstrides = hg_cli_list(a, v, ",x", INT64_MIN, INT64_MAX, t->strides, 8)) > 0;
  case O_TILE:
    return (t->ntile = hg_cli_list(a, v, ",x", 1, 65536, t->tile, 8)) > 0;
  case O_GRID: /* 0 along a mode: enough tiles to reach the end (as 'auto' for all) */
    if (!strcmp(v, "auto")) return true;
    return (t->ngrid = hg_cli_list(a, v, ",x", 0, 65536, t->grid, 8)) > 0;
  case O_ORIGIN:
    return (t->norigin = hg_cli_list(a, v, ",x", INT32_MIN, INT32_MAX, t->origin, 8)) > 0;
  case O_CLUSTER:
    return hg_cli_int(a, v, 1, 16, &t->cluster);
  case O_SWIZZLE:
    return hg_cli_check(a, hg_swizzle_mode_parse(v, &s->swizzle));
  case O_REDUCE: {
    char full[32];
    snprintf(full, sizeof full, "reduce-%.20s", v);
    hg_tma_op_t r;
    hg_status_t st = hg_tma_op_parse(full, &r);
    if (!hg_is_ok(&st) || !hg_tma_op_is_reduce(r) || strlen(v) > 20)
      return hg_cli_bad(a, "--reduce '%s' is not one of add min max inc dec and or xor", v);
    if (!is_reduce && !hg_tma_op_is_reduce(*op))
      return hg_cli_bad(a, "--reduce applies to 'hopgen tma reduce', not '%s'",
                        hg_tma_op_name(*op));
    s->op = *op = r;
    return true;
  }
  case O_BACKEND:
    return hg_cli_check(a, hg_backend_parse(v, &t->be));
  case O_EMIT:
    t->emit = v;
    return true;
  case O_EMIT_MLIR:
    t->emit_mlir = v;
    return true;
  case O_RUNS:
    return hg_cli_int(a, v, 1, 1000, &t->runs);
  case O_SEED:
    return hg_cli_int(a, v, 0, INT64_MAX, &t->seed);
  case O_DEVICE:
    return hg_cli_int(a, v, 0, 1023, &cx->device);
  case O_MAX_COLD:
  case O_MAX_WARM:
    return hg_cli_float(a, v, 1e-6, 1e9, false, id == O_MAX_COLD ? &t->max_cold : &t->max_warm);
  }
  return hg_cli_bad(a, "internal: option %d has no handling", id);
}

/* One kernel: argv[0] is the operation, the rest its options. */
static int tma_case(tma_ctx_t *cx, int argc, char **argv) {
  hg_cli_args_t a;
  hg_cli_args_init(&a, "tma", tma_opts, (int)(sizeof tma_opts / sizeof tma_opts[0]), argc, argv);
  const char *opname = argv[0];
  hg_tma_op_t op;
  bool multicast = false, is_reduce = false;
  if (!strcmp(opname, "load"))
    op = HG_TMA_LOAD;
  else if (!strcmp(opname, "prefetch"))
    op = HG_TMA_PREFETCH;
  else if (!strcmp(opname, "multicast")) {
    op = HG_TMA_LOAD;
    multicast = true;
  } else if (!strcmp(opname, "store"))
    op = HG_TMA_STORE;
  else if (!strcmp(opname, "reduce")) {
    op = HG_TMA_REDUCE_ADD;
    is_reduce = true;
  } else {
    hg_status_t s = hg_tma_op_parse(opname, &op); /* reduce-add, reduce-xor, ... */
    if (!hg_is_ok(&s) || !hg_tma_op_is_reduce(op))
      return hg_cli_usagef(&a,
                           "unknown TMA kernel '%s': expected load, prefetch, multicast, store "
                           "or reduce",
                           opname);
  }

  hg_tma_spec_t s = hg_tma_spec_default(op);
  tma_args_t t;
  memset(&t, 0, sizeof t);
  t.cluster = multicast ? 2 : 1;
  t.runs = 2;
  t.be = HG_BACKEND_PTX;
  const char *v;
  for (int id; (id = hg_cli_next(&a, &v)) != HG_CLI_END;)
    if (id == HG_CLI_ERROR || !tma_arg(&a, id, v, cx, &t, &s, &op, is_reduce))
      return hg_cli_usage(&a);
  if (t.cluster > 1 && !multicast)
    return hg_cli_usagef(&a,
                         "--cluster is for 'hopgen tma multicast' (a %s is issued by each CTA "
                         "for its own tile)",
                         opname);
  if (multicast && t.cluster < 2)
    return hg_cli_usagef(&a, "multicast needs --cluster 2 or more (use 'load' for one CTA per "
                             "tile)");
  if (cx->batch && t.emit && !strcmp(t.emit, "-"))
    return hg_cli_usagef(&a, "--emit - does not mix with --batch (give a file)");
  if (t.emit_mlir && t.be != HG_BACKEND_MLIR)
    return hg_cli_usagef(&a, "--emit-mlir needs --backend mlir (the PTX backend makes no MLIR)");
  if (!t.check && (a.seen & (HG_CLI_BIT(O_RUNS) | HG_CLI_BIT(O_SEED) | HG_CLI_BIT(O_DEVICE) |
                             HG_CLI_BIT(O_MAX_COLD) | HG_CLI_BIT(O_MAX_WARM))))
    return hg_cli_usagef(&a, "--runs, --seed, --device, --max-cold-ms and --max-warm-ms apply "
                             "to a GPU run: add --check");
  const bool check = t.check, json = t.json;
  const hg_backend_t be = t.be;
  const char *emit = t.emit, *emit_mlir = t.emit_mlir;

  /* The spec. Rank from --shape (default 2); every other list must have as many values. */
  const int rank = t.nshape > 0 ? t.nshape : 2;
  if (rank > HG_TMA_MAX_RANK)
    return hg_cli_usagef(&a, "--shape has %d modes; TMA tensors have 1 to 5", rank);
  s.rank = rank;
  const struct {
    const char *name;
    int n;
  } lists[] = {
      {"--strides", t.nstrides}, {"--tile", t.ntile}, {"--grid", t.ngrid}, {"--origin", t.norigin}};
  for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
    if (lists[i].n > 0 && lists[i].n != rank)
      return hg_cli_usagef(&a,
                           "%s has %d value(s) but the tensor has %d mode(s) (--shape): give one "
                           "per mode",
                           lists[i].name, lists[i].n, rank);
  const int esize = hg_dtype_bytes(s.dtype);
  const int span = hg_swizzle_mode_bytes(s.swizzle);
  for (int m = 0; m < rank; m++) {
    s.shape[m] = t.nshape > 0 ? t.shape[m] : 256;
    s.stride[m] = t.nstrides > 0 ? t.strides[m] : 0;
    /* default tile: 64 rows of 128 B (or the swizzle span, if wider), outer modes 1 */
    const int64_t def = m == rank - 1   ? (span > 128 ? span : 128) / (esize > 0 ? esize : 1)
                        : m == rank - 2 ? 64
                                        : 1;
    s.tile[m] = (int)(t.ntile > 0 ? t.tile[m] : def); /* the lists' ranges fit int */
    s.grid[m] = (int)(t.ngrid > 0 ? t.grid[m] : 0);
    s.origin[m] = (int32_t)(t.norigin > 0 ? t.origin[m] : 0);
  }
  s.cluster = (int)t.cluster;
  if (check || be == HG_BACKEND_MLIR) hg_cli_cache_note(); /* kernels and lowerings are cached */
  /* In a batch, text goes to stdout; --emit - moves the single case's text to stderr. */
  FILE *text = emit && !strcmp(emit, "-") ? stderr : stdout;
  /* Generate (pure). A refusal here is the planner's or the spec's rule, not the GPU's. */
  hg_kernel_t k;
  hg_status_t st = hg_tma_spec_normalize(&s);
  char what[256];
  hg_tma_spec_print(&s, what, sizeof what);
  if (hg_is_ok(&st)) st = hg_tma_generate(&s, be, &k, &plan);
  if (!hg_is_ok(&st)) {
    if (json) {
      printf("{\"command\": \"tma\", \"ok\": false, \"refused\": true, ");
      hg_cli_json_str(stdout, "case", what, ", ");
      json_error(stdout, st);
      printf("}\n");
      hg_cli_json_printed();
    }
    if (cx->batch) {
      if (!json) printf("REFUSED %s\n        %s\n", what, st.msg);
      return CASE_REFUSED;
    }
    hg_cli_fail(st);
    return CASE_FAIL;
  }
  hg_tma_spec_print(&s, what, sizeof what);
  const int64_t ctas = hg_tma_spec_tiles(&s) * s.cluster;
  /* Stores and reductions: the boxes TMA cannot take (a negative coordinate raises an
   * illegal instruction) go element by element; always said, never silent. */
  const bool out_op = op != HG_TMA_LOAD && op != HG_TMA_PREFETCH;
  const int64_t without_tma = hg_tma_spec_fallback_boxes(&s, &plan);
  if (!json && !cx->batch) {
    FILE *f = text;
    fprintf(f, "tma %s\n", what);
    fprintf(f, "  kernel %s: %" PRId64 " CTA(s) x %u threads, %u B dynamic shared memory", k.name,
            ctas, k.threads, k.smem_bytes);
    if (s.cluster > 1) fprintf(f, ", clusters of %d", s.cluster);
    fprintf(f, "; generated in %.2f ms (%s backend)\n", k.gen_ms, hg_backend_name(be));
    fprintf(f, "  plan: %d box(es) of ", plan.num_boxes);
    int64_t bx[HG_TMA_MAX_RANK];
    for (int d = 0; d < plan.map.rank; d++) bx[d] = plan.map.box_dim[d];
    print_list_i64(f, plan.map.rank, bx);
    fprintf(f,
            " (tensor-map order), %" PRIu32 " B per tile, stage buffer %" PRIu32
            " B aligned to %" PRIu32,
            plan.tile_bytes, plan.smem_bytes, plan.smem_align_bytes);
    if (op == HG_TMA_LOAD || op == HG_TMA_PREFETCH)
      fprintf(f, ", expect_tx %" PRIu32 " B", plan.expect_tx_bytes);
    if (s.cluster > 1)
      fprintf(f, ", %d box(es) per CTA, mask 0x%04x", plan.boxes_per_cta, plan.mcast_mask);
    fputc('\n', f);
    if (out_op)
      fprintf(f,
              "  negative-origin boxes stored without TMA: %" PRId64 " of %" PRId64
              " (TMA stores and reductions take no negative coordinate; the kernel writes "
              "those boxes' in-bounds elements one by one)\n",
              without_tma, hg_tma_spec_tiles(&s) * plan.num_boxes);
  }
  if (emit) st = hg_cli_write_file(emit, k.ptx.data);
  if (hg_is_ok(&st) && emit_mlir) {
    if (!k.mlir.data)
      st = hg_error(HG_ERR_INVALID,
                    "--emit-mlir needs --backend mlir (the PTX backend makes no MLIR)");
    else
      st = hg_cli_write_file(emit_mlir, k.mlir.data);
  }

  /* ptxas: by default without --check (the driver's JIT checks the code with --check). */
  hg_ptxas_report_t rep;
  memset(&rep, 0, sizeof rep);
  bool ptxas_ran = false;
  if (hg_is_ok(&st) && !t.no_ptxas && (!check || t.want_ptxas)) {
    st = hg_cli_ptxas(k.ptx.data, &rep);
    ptxas_ran = hg_is_ok(&st);
    if (!hg_is_ok(&st))
      st = hg_status_wrap(st,
                          "ptxas -arch=sm_90a rejected %s (or could not run; --no-ptxas skips "
                          "this check): ",
                          k.name);
    else if (!json && !cx->batch)
      fprintf(text, "  ptxas -arch=sm_90a: ok, %d registers, %d B spilled%s%s\n", rep.registers,
              rep.spill_store_bytes, rep.notes[0] ? "; " : "", rep.notes);
  }

  /* Run and check on the GPU (opened once per process). */
  bool ran = false;
  hg_status_t run_st = hg_ok();
  if (hg_is_ok(&st) && check) {
    if (!cx->rt_tried) {
      cx->rt_tried = true;
      const double t0 = hg_now_ms();
      cx->rt_status = hg_cli_rt_open((int)cx->device, &cx->rt);
      cx->open_ms = hg_now_ms() - t0;
    }
    if (!hg_is_ok(&cx->rt_status)) {
      run_st = hg_status_wrap(cx->rt_status, "--check cannot run on the GPU: ");
    } else if (cx->context_lost) {
      run_st = hg_error(HG_ERR_CUDA, "not run: an earlier case's kernel fault destroyed the CUDA "
                                     "context (see the first failure above)");
    } else {
      hg_tma_run_options_t o;
      memset(&o, 0, sizeof o);
      o.runs = (int)t.runs;
      o.seed = (uint64_t)t.seed;
      run_st = hg_tma_run(cx->rt, &s, be, &o, &result);
      ran = result.runs > 0;
      /* A kernel fault is sticky: the context refuses everything after it. Other driver
       * failures (a refused launch shape) leave it usable; a sync tells them apart. */
      if (run_st.code == HG_ERR_CUDA) {
        hg_status_t probe = hg_rt_sync(cx->rt, NULL);
        cx->context_lost = !hg_is_ok(&probe);
      }
      if (hg_is_ok(&run_st) && t.max_cold > 0 && result.cold.to_launch_ms > t.max_cold)
        run_st = hg_error(HG_ERR_MISMATCH,
                          "the cold path (spec -> launched kernel, first pass) took %.2f ms, over "
                          "--max-cold-ms %.2f",
                          result.cold.to_launch_ms, t.max_cold);
      if (hg_is_ok(&run_st) && t.max_warm > 0 && result.warm.to_launch_ms > t.max_warm)
        run_st = hg_error(HG_ERR_MISMATCH,
                          "the warm path (spec -> launched kernel, pass %d) took %.2f ms, over "
                          "--max-warm-ms %.2f%s",
                          result.runs, result.warm.to_launch_ms, t.max_warm,
                          result.warm.jit.cache_hit ? "" : " (and it was not a cache hit)");
    }
  }
  const bool ok = hg_is_ok(&st) && hg_is_ok(&run_st);
  const hg_tma_result_t *r = &result;

  if (!json && cx->batch) {
    printf("%-7s %s", ok ? "PASS" : "FAIL", what);
    if (ran)
      printf(" | %" PRId64 " CTAs, %" PRIu64 " B compared, %.1f ms (%s)", ctas, r->bytes_compared,
             r->cold.to_finish_ms, r->cold.jit.cache_hit ? "cached" : "JIT");
    if (out_op) printf(" | negative-origin boxes stored without TMA: %" PRId64, without_tma);
    printf("\n");
    if (!ok) printf("        %s\n", (hg_is_ok(&st) ? run_st : st).msg);
  }
  if (!json && check && ran) {
    FILE *f = text;
    if (!cx->batch) {
      fprintf(f, "  GPU: %s (opened in %.1f ms)\n", r->device, cx->open_ms);
      fprintf(
          f, "  check: %s, %d pass(es), %" PRIu64 " B compared per pass (%s), %" PRIu64 " differ\n",
          r->mismatches || r->ctas_timed_out || r->ctas_unfinished ? "FAIL" : "PASS", r->runs,
          r->bytes_compared,
          op == HG_TMA_LOAD || op == HG_TMA_PREFETCH ? "every CTA's whole stage buffer"
                                                     : "the whole output allocation and guards",
          r->mismatches);
    }
    if (r->mismatches) {
      if (op == HG_TMA_LOAD || op == HG_TMA_PREFETCH)
        fprintf(f,
                "    %" PRIu64 " of the differing bytes still hold the 0x%02X poison (TMA never "
                "wrote them)\n",
                r->poison_left, HG_TMA_POISON);
      else
        fprintf(f, "    %" PRIu64 " of the differing bytes kept their old value (never written)\n",
                r->untouched);
      for (int i = 0; i < r->reported; i++)
        fprintf(f, "    byte 0x%02X expected, 0x%02X got: %s\n", r->first[i].expected,
                r->first[i].got, r->first[i].where);
    }
    if (out_op && !cx->batch)
      fprintf(f,
              "    negative-origin boxes stored without TMA: %" PRId64
              " (the CTAs reported %" PRId64 ")\n",
              r->fallback_boxes, r->fallback_reported);
    if (r->ctas_fallback_wrong)
      fprintf(f,
              "    CTAs: %" PRId64
              " reported a different count of boxes without TMA (first: CTA %" PRId64
              ", %d reported, %d planned)\n",
              r->ctas_fallback_wrong, r->first_fallback_cta, r->first_fallback_got,
              r->first_fallback_want);
    if (r->ctas_timed_out || r->ctas_unfinished)
      fprintf(f,
              "    CTAs: %" PRId64 " timed out on the mbarrier, %" PRId64
              " never finished (first: CTA %" PRId64 ")\n",
              r->ctas_timed_out, r->ctas_unfinished, r->first_bad_cta);
    if (!cx->batch) {
      print_timing(f, "cold", &r->cold);
      if (r->runs > 1) print_timing(f, "warm", &r->warm);
    }
  }

  if (json) {
    FILE *f = stdout;
    fprintf(f, "{\"command\": \"tma\", \"ok\": %s, ", ok ? "true" : "false");
    hg_cli_json_str(f, "case", what, ", ");
    json_spec(f, &s);
    fprintf(f, "\"kernel\": {");
    hg_cli_json_str(f, "name", k.name, ", ");
    fprintf(f,
            "\"ctas\": %" PRId64 ", \"threads\": %u, \"smem_bytes\": %u, \"cluster\": %d, "
            "\"gen_ms\": %.4f, \"backend\": \"%s\"}, ",
            ctas, k.threads, k.smem_bytes, s.cluster, k.gen_ms, hg_backend_name(be));
    json_plan(f, &plan, without_tma);
    fprintf(f, "\"ptxas\": {\"ran\": %s, \"registers\": %d, \"spill_store_bytes\": %d}, ",
            ptxas_ran ? "true" : "false", rep.registers, rep.spill_store_bytes);
    fprintf(f, "\"check\": {\"ran\": %s", ran ? "true" : "false");
    if (ran) {
      fprintf(f, ", \"passed\": %s, ", hg_is_ok(&run_st) ? "true" : "false");
      hg_cli_json_str(f, "device", r->device, ", ");
      fprintf(f,
              "\"open_ms\": %.3f, \"runs\": %d, \"bytes_compared\": %" PRIu64
              ", \"mismatches\": %" PRIu64 ", \"poison_left\": %" PRIu64 ", \"untouched\": %" PRIu64
              ", \"ctas_timed_out\": %" PRId64 ", \"ctas_unfinished\": %" PRId64
              ", \"boxes_without_tma\": %" PRId64 ", \"boxes_without_tma_reported\": %" PRId64
              ", \"ctas_fallback_wrong\": %" PRId64 ", \"first\": [",
              cx->open_ms, r->runs, r->bytes_compared, r->mismatches, r->poison_left, r->untouched,
              r->ctas_timed_out, r->ctas_unfinished, r->fallback_boxes, r->fallback_reported,
              r->ctas_fallback_wrong);
      for (int i = 0; i < r->reported; i++) {
        fprintf(f,
                "%s{\"cta\": %" PRId64 ", \"offset\": %" PRIu64 ", \"expected\": %u, \"got\": %u, ",
                i ? ", " : "", r->first[i].cta, r->first[i].offset, r->first[i].expected,
                r->first[i].got);
        hg_cli_json_str(f, "where", r->first[i].where, "}");
      }
      fprintf(f, "], ");
      json_timing(f, "cold", &r->cold, ", ");
      json_timing(f, "warm", &r->warm, "");
    }
    fprintf(f, "}");
    if (!ok) {
      fprintf(f, ", ");
      json_error(f, hg_is_ok(&st) ? run_st : st);
    }
    fprintf(f, "}\n");
    fflush(f);
    hg_cli_json_printed();
  }
  hg_kernel_free(&k);
  if (cx->batch) return ok ? CASE_PASS : CASE_FAIL;
  if (!hg_is_ok(&st)) return hg_cli_fail(st);
  if (!hg_is_ok(&run_st)) return hg_cli_fail(run_st);
  return CASE_PASS;
}

/* --batch FILE: one case per line ("OP options...", '#' comments), the remaining command-
 * line options appended to every line; one GPU context for all. Lines of any length. */
static int tma_batch(tma_ctx_t *cx, FILE *f, const char *name, int nextra, char **extra) {
  char *line = NULL, **words = NULL;
  size_t cap = 0, wcap = 0;
  int counts[4] = {0, 0, 0, 0}, lineno = 0, rc = 0;
  bool json = false;
  for (int i = 0; i < nextra; i++) json |= !strcmp(extra[i], "--json");
  const double t0 = hg_now_ms();
  for (ssize_t len; (len = getline(&line, &cap, f)) >= 0;) {
    lineno++;
    if (strlen(line) != (size_t)len) {
      fprintf(stderr, "hopgen: %s: line %d holds a NUL byte: malformed case\n", name, lineno);
      counts[CASE_USAGE]++;
      continue;
    }
    size_t n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(line, " \t\r\n\v\f", &save); tok && tok[0] != '#';
         tok = strtok_r(NULL, " \t\r\n\v\f", &save)) {
      if (n + (size_t)nextra + 2 > wcap) {
        const size_t grown = wcap ? 2 * wcap : 64 + (size_t)nextra;
        char **w = realloc(words, grown * sizeof *w);
        if (!w) {
          rc = hg_cli_fail(
              hg_error(HG_ERR_NOMEM, "%s: line %d: no memory for its words", name, lineno));
          goto done;
        }
        words = w;
        wcap = grown;
      }
      words[n++] = tok;
    }
    if (n == 0) continue;
    for (int i = 0; i < nextra; i++) words[n++] = extra[i];
    words[n] = NULL;
    hg_cli_json_next();
    const int r = tma_case(cx, (int)n, words);
    if (r == CASE_USAGE)
      fprintf(stderr, "hopgen: %s: line %d: malformed case (the message above says why)\n", name,
              lineno);
    counts[r]++;
    fflush(stdout);
  }
  if (ferror(f)) {
    clearerr(f);
    rc =
        hg_cli_fail(hg_error(HG_ERR_IO, "reading the batch %s failed after line %d", name, lineno));
    goto done;
  }
  const int total =
      counts[CASE_PASS] + counts[CASE_FAIL] + counts[CASE_REFUSED] + counts[CASE_USAGE];
  if (json) {
    printf("{\"command\": \"tma batch\", ");
    hg_cli_json_str(stdout, "batch", name, ", ");
    printf("\"passed\": %d, \"failed\": %d, \"refused\": %d, \"malformed\": %d, "
           "\"seconds\": %.3f}\n",
           counts[CASE_PASS], counts[CASE_FAIL], counts[CASE_REFUSED], counts[CASE_USAGE],
           (hg_now_ms() - t0) / 1000.0);
  } else {
    printf("batch %s: %d passed, %d failed, %d refused by the planner, %d malformed (%.1f s)\n",
           name, counts[CASE_PASS], counts[CASE_FAIL], counts[CASE_REFUSED], counts[CASE_USAGE],
           (hg_now_ms() - t0) / 1000.0);
  }
  if (total == 0) {
    fprintf(stderr, "hopgen: the batch %s has no cases\n", name);
    rc = 1;
  } else if (counts[CASE_FAIL] || counts[CASE_USAGE]) {
    fprintf(stderr, "hopgen: %d of the batch's %d case(s) failed%s\n",
            counts[CASE_FAIL] + counts[CASE_USAGE], total,
            cx->context_lost ? " (a kernel fault destroyed the CUDA context: the cases after it "
                               "did not run)"
                             : "");
    rc = 1;
  }
done:
  free(words);
  free(line);
  return rc;
}

int hg_cli_tma_batch(FILE *f, const char *name, int nextra, char **extra) {
  tma_ctx_t cx;
  memset(&cx, 0, sizeof cx);
  cx.batch = true;
  const int rc = tma_batch(&cx, f, name, nextra, extra);
  if (cx.rt) hg_rt_close(cx.rt);
  return rc;
}

int hg_cmd_tma(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    }
  const char *batch = NULL;
  int rest = 2;
  if (!strcmp(argv[1], "--batch")) {
    if (argc < 3) {
      fprintf(stderr, "hopgen: --batch needs a file of cases ('-': standard input) (hopgen tma "
                      "--help)\n");
      return 2;
    }
    batch = argv[2];
    rest = 3;
  } else if (!strncmp(argv[1], "--batch=", 8)) {
    batch = argv[1] + 8;
  }
  if (!batch) {
    tma_ctx_t cx;
    memset(&cx, 0, sizeof cx);
    int rc = tma_case(&cx, argc - 1, argv + 1);
    if (cx.rt) hg_rt_close(cx.rt);
    return rc == CASE_REFUSED ? 1 : rc;
  }
  hg_status_t s;
  FILE *f = hg_cli_open_read(batch, &s);
  if (!f) return hg_cli_fail(hg_status_wrap(s, "--batch: "));
  const int rc = hg_cli_tma_batch(f, batch, argc - rest, argv + rest);
  if (f != stdin) fclose(f);
  return rc;
}
