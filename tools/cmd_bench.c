/* hopgen bench: `bench copy` (the streaming TMA copy against the driver's device-to-device
 * copy, hg_copy_bench_run), `bench repack` (the operand repack against the same copy,
 * hg_repack_bench_run) and `bench gemm` (hg_cli_bench_gemm in cmd_gemm.c). Parsing and
 * printing only. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hopgen/kernels.h"

static void usage(FILE *f) {
  fprintf(f, "usage: hopgen bench copy [options]   (hopgen bench copy --help)\n"
             "       hopgen bench repack [ROWS COLS] [options]   (hopgen bench repack --help)\n"
             "       hopgen bench gemm [options]   (hopgen bench gemm --help)\n"
             "       hopgen bench grouped-gemm [options]   (hopgen bench grouped-gemm --help)\n");
}

static void usage_copy(FILE *f) {
  fprintf(
      f, "usage: hopgen bench copy [--bytes N] [--stages S] [--box-rows R] [--ctas-per-sm K]\n"
         "                         [--evict-first] [--store-evict-first] [--split-roles]\n"
         "                         [--order interleaved|contiguous]\n"
         "                         [--store-threads [--store-warps W]] [--store-cs]\n"
         "                         [--ldg [--unroll U] [--ldg-threads N]] [--warmup W] [--runs R]\n"
         "                         [--seed N] [--min-ratio X] [--backend ptx|mlir] [--device N]\n"
         "                         [--json]\n\n"
         "The streaming TMA copy (a persistent grid; in each CTA one thread moves boxes through a\n"
         "ring of shared-memory stages: TMA load, mbarrier, TMA store) against the driver's\n"
         "device-to-device copy of the same bytes, in the same process: fresh random data, the\n"
         "copy verified byte for byte, then warm-up and the median of interleaved runs timed with\n"
         "events. Bandwidth counts read + write (2 x bytes) for both.\n\n"
         "  --bytes N         buffer size, a multiple of 1 KiB; suffixes K M G (KiB, MiB, GiB)\n"
         "                    (default 1G)\n"
         "  --stages S        shared-memory ring depth per CTA, 2..16 (default 6)\n"
         "  --box-rows R      1 KiB rows per box, 1..256 (default 32: 32 KiB boxes)\n"
         "  --ctas-per-sm K   persistent CTAs per SM (default 1)\n"
         "  --evict-first     L2::evict_first cache hint on the loads\n"
         "  --store-evict-first  L2::evict_first cache hint on the stores\n"
         "  --split-roles     two issuing threads (warps 0 and 1): one only loads, one only\n"
         "                    stores, each stage handed back through an empty mbarrier\n"
         "  --order O         which boxes a CTA copies: interleaved (CTA c: boxes c, c + G, ...;\n"
         "                    the default) or contiguous (one run of consecutive boxes each)\n"
         "  --store-threads   TMA loads (one thread of warp 0), but threads store: W store warps\n"
         "                    read each stage with ld.shared.v4 and write it with st.global.v4,\n"
         "                    then hand it back through an empty mbarrier\n"
         "  --store-warps W   store warps with --store-threads, 1..8 (default 4)\n"
         "  --store-cs        the threads' stores with the .cs (streaming) cache operator\n"
         "                    (--store-threads or --ldg)\n"
         "  --ldg             no TMA and no shared memory: every thread copies 16-byte vectors,\n"
         "                    ld.global.v4 then st.global.v4, in a grid-stride loop (a reference;\n"
         "                    no --stages, --box-rows, --order or TMA hints)\n"
         "  --unroll U        --ldg: vectors a thread loads before it stores them, 1..16\n"
         "                    (default 8)\n"
         "  --ldg-threads N   --ldg: threads per CTA, a multiple of 32 up to 1024 (default 256)\n"
         "  --warmup W, --runs R  per side (default 3 and 25)\n"
         "  --min-ratio X     exit 1 when copy / D2D bandwidth is below X (e.g. 0.9)\n"
         "  --json            machine-readable result on standard output\n");
}

/* "1073741824", "1G", "512M", "64K" (binary units), "1GiB": decimal digits first; false
 * on anything else, zero or overflow. */
static bool parse_bytes(const char *s, uint64_t *out) {
  if (!(*s >= '0' && *s <= '9')) return false;
  char *end;
  errno = 0;
  const unsigned long long v = strtoull(s, &end, 10);
  if (errno == ERANGE) return false;
  uint64_t mul = 1;
  if (*end == 'K' || *end == 'k')
    mul = UINT64_C(1) << 10;
  else if (*end == 'M' || *end == 'm')
    mul = UINT64_C(1) << 20;
  else if (*end == 'G' || *end == 'g')
    mul = UINT64_C(1) << 30;
  if (mul > 1) {
    end++;
    if (!strcmp(end, "iB") || !strcmp(end, "B")) end += strlen(end);
  }
  if (*end || v == 0 || v > UINT64_MAX / mul) return false;
  *out = (uint64_t)v * mul;
  return true;
}

enum {
  C_BYTES,
  C_STAGES,
  C_BOX_ROWS,
  C_CTAS_PER_SM,
  C_EVICT_FIRST,
  C_STORE_EVICT_FIRST,
  C_SPLIT_ROLES,
  C_ORDER,
  C_STORE_THREADS,
  C_STORE_WARPS,
  C_STORE_CS,
  C_LDG,
  C_UNROLL,
  C_LDG_THREADS,
  C_WARMUP,
  C_RUNS,
  C_SEED,
  C_DEVICE,
  C_MIN_RATIO,
  C_BACKEND,
  C_JSON
};
static const hg_cli_opt_t copy_opts[] = {
    {C_BYTES, "--bytes", NULL, HG_CLI_VALUE, 0},
    {C_STAGES, "--stages", NULL, HG_CLI_VALUE, 0},
    {C_BOX_ROWS, "--box-rows", NULL, HG_CLI_VALUE, 0},
    {C_CTAS_PER_SM, "--ctas-per-sm", NULL, HG_CLI_VALUE, 0},
    {C_EVICT_FIRST, "--evict-first", NULL, HG_CLI_FLAG, 0},
    {C_STORE_EVICT_FIRST, "--store-evict-first", NULL, HG_CLI_FLAG, 0},
    {C_SPLIT_ROLES, "--split-roles", NULL, HG_CLI_FLAG, 0},
    {C_ORDER, "--order", NULL, HG_CLI_VALUE, 0},
    {C_STORE_THREADS, "--store-threads", NULL, HG_CLI_FLAG, 0},
    {C_STORE_WARPS, "--store-warps", NULL, HG_CLI_VALUE, 0},
    {C_STORE_CS, "--store-cs", NULL, HG_CLI_FLAG, 0},
    {C_LDG, "--ldg", NULL, HG_CLI_FLAG, 0},
    {C_UNROLL, "--unroll", NULL, HG_CLI_VALUE, 0},
    {C_LDG_THREADS, "--ldg-threads", NULL, HG_CLI_VALUE, 0},
    {C_WARMUP, "--warmup", NULL, HG_CLI_VALUE, 0},
    {C_RUNS, "--runs", NULL, HG_CLI_VALUE, 0},
    {C_SEED, "--seed", NULL, HG_CLI_VALUE, 0},
    {C_DEVICE, "--device", NULL, HG_CLI_VALUE, 0},
    {C_MIN_RATIO, "--min-ratio", NULL, HG_CLI_VALUE, 0},
    {C_BACKEND, "--backend", NULL, HG_CLI_VALUE, 0},
    {C_JSON, "--json", NULL, HG_CLI_JSON, 0},
};

static int bench_copy(int argc, char **argv) {
  hg_cli_args_t a;
  hg_cli_args_init(&a, "bench copy", copy_opts, (int)(sizeof copy_opts / sizeof copy_opts[0]), argc,
                   argv);
  if (a.help) {
    usage_copy(stdout);
    return 0;
  }
  a.max_operands = 0;
  hg_copy_bench_t b;
  memset(&b, 0, sizeof b);
  b.bytes = UINT64_C(1) << 30;
  bool json = false;
  int64_t device = 0, x = 0;
  double min_ratio = 0;
  hg_backend_t be = HG_BACKEND_PTX;
  const char *v;
  for (int id; (id = hg_cli_next(&a, &v)) != HG_CLI_END;) {
    bool ok = true;
    switch (id) {
    case HG_CLI_ERROR:
      return hg_cli_usage(&a);
    case C_BYTES:
      ok = parse_bytes(v, &b.bytes) ||
           hg_cli_bad(&a, "--bytes '%s' is not a size like 1073741824, 512M or 4G", v);
      break;
    case C_STAGES:
      ok = hg_cli_int(&a, v, 2, 16, &x);
      b.config.stages = (int)x;
      break;
    case C_BOX_ROWS:
      ok = hg_cli_int(&a, v, 1, 256, &x);
      b.config.box_rows = (int)x;
      break;
    case C_CTAS_PER_SM:
      ok = hg_cli_int(&a, v, 1, 32, &x);
      b.config.ctas_per_sm = (int)x;
      break;
    case C_EVICT_FIRST:
      b.config.evict_first = true;
      break;
    case C_STORE_EVICT_FIRST:
      b.config.store_evict_first = true;
      break;
    case C_SPLIT_ROLES:
      b.config.split_roles = true;
      break;
    case C_ORDER:
      ok = hg_cli_check(&a, hg_copy_order_parse(v, &b.config.order));
      break;
    case C_STORE_THREADS:
      b.config.store_threads = true;
      break;
    case C_STORE_WARPS:
      ok = hg_cli_int(&a, v, 1, 8, &x);
      b.config.store_warps = (int)x;
      break;
    case C_STORE_CS:
      b.config.store_cs = true;
      break;
    case C_LDG:
      b.config.ldg = true;
      break;
    case C_UNROLL:
      ok = hg_cli_int(&a, v, 1, 16, &x);
      b.config.unroll = (int)x;
      break;
    case C_LDG_THREADS:
      /* the multiple of 32 is the library's rule, and its sentence */
      ok = hg_cli_int(&a, v, 32, 1024, &x);
      b.config.ldg_threads = (int)x;
      break;
    case C_WARMUP:
      ok = hg_cli_int(&a, v, 1, 1000, &x);
      b.warmup = (int)x;
      break;
    case C_RUNS:
      ok = hg_cli_int(&a, v, 1, 100000, &x);
      b.runs = (int)x;
      break;
    case C_SEED:
      ok = hg_cli_int(&a, v, 1, INT64_MAX, &x);
      b.seed = (uint64_t)x;
      break;
    case C_DEVICE:
      ok = hg_cli_int(&a, v, 0, 1023, &device);
      break;
    case C_MIN_RATIO:
      ok = hg_cli_float(&a, v, 1e-9, 1e9, false, &min_ratio);
      break;
    case C_BACKEND:
      ok = hg_cli_check(&a, hg_backend_parse(v, &be));
      break;
    case C_JSON:
      json = true;
      break;
    }
    if (!ok) return hg_cli_usage(&a);
  }
  hg_cli_cache_note();

  /* The kernel first (pure), so a bad configuration fails before the GPU is touched. */
  hg_kernel_t k;
  hg_status_t s = hg_copy_bench_validate(&b);
  if (hg_is_ok(&s)) s = hg_gen_copy(&b.config, be, &k);
  if (hg_is_ok(&s)) hg_kernel_free(&k);
  hg_rt_t *rt = NULL;
  double open_ms = 0;
  if (hg_is_ok(&s)) {
    const double t0 = hg_now_ms();
    s = hg_cli_rt_open((int)device, &rt);
    open_ms = hg_now_ms() - t0;
    if (!hg_is_ok(&s)) s = hg_status_wrap(s, "bench copy cannot run on the GPU: ");
  }
  hg_copy_bench_result_t r;
  memset(&r, 0, sizeof r);
  bool ran = false;
  if (hg_is_ok(&s)) {
    s = hg_copy_bench_run(rt, &b, be, &r);
    ran = hg_is_ok(&s);
  }
  if (ran && min_ratio > 0 && r.ratio < min_ratio)
    s = hg_error(HG_ERR_MISMATCH,
                 "the %s copy reached %.3f of the driver's D2D bandwidth (%.1f vs %.1f GB/s on "
                 "%" PRIu64 " B), below --min-ratio %.3f",
                 r.config.ldg ? "ldg" : "TMA", r.ratio, r.copy_gbs, r.d2d_gbs, r.bytes, min_ratio);
  const hg_tma_timing_t *t = &r.path;
  if (json) {
    printf("{\"command\": \"bench copy\", \"ok\": %s, \"bytes\": %" PRIu64 ", ",
           hg_is_ok(&s) ? "true" : "false", b.bytes);
    if (ran) {
      hg_cli_json_str(stdout, "device", r.device, ", ");
      printf("\"open_ms\": %.3f, \"ctas\": %u, \"threads\": %u, \"smem_bytes\": %u, "
             "\"stages\": %d, \"box_rows\": %d, \"box_bytes\": %d, \"ctas_per_sm\": %d, "
             "\"evict_first\": %s, \"store_evict_first\": %s, \"split_roles\": %s, "
             "\"order\": \"%s\", \"store_threads\": %s, \"store_warps\": %d, \"store_cs\": %s, "
             "\"ldg\": %s, \"unroll\": %d, \"ldg_threads\": %d, \"verified\": %s, "
             "\"copy_ms\": %.5f, \"copy_min_ms\": %.5f, \"copy_max_ms\": %.5f, \"copy_gbs\": %.2f, "
             "\"d2d_ms\": %.5f, \"d2d_min_ms\": %.5f, \"d2d_max_ms\": %.5f, \"d2d_gbs\": %.2f, "
             "\"ratio\": %.4f, \"path\": {\"to_launch_ms\": %.4f, \"gen_ms\": %.4f, "
             "\"jit_ms\": %.4f, \"cache_hit\": %s}",
             open_ms, r.ctas, r.threads, r.smem_bytes, r.config.stages, r.config.box_rows,
             r.config.box_rows * 1024, r.config.ctas_per_sm,
             r.config.evict_first ? "true" : "false", r.config.store_evict_first ? "true" : "false",
             r.config.split_roles ? "true" : "false", hg_copy_order_name(r.config.order),
             r.config.store_threads ? "true" : "false", r.config.store_warps,
             r.config.store_cs ? "true" : "false", r.config.ldg ? "true" : "false", r.config.unroll,
             r.config.ldg_threads, r.verified ? "true" : "false", r.copy_ms, r.copy_min_ms,
             r.copy_max_ms, r.copy_gbs, r.d2d_ms, r.d2d_min_ms, r.d2d_max_ms, r.d2d_gbs, r.ratio,
             t->to_launch_ms, t->gen_ms, t->jit_ms, t->jit.cache_hit ? "true" : "false");
    }
    if (!hg_is_ok(&s)) {
      printf("%s", ran ? ", " : "");
      hg_cli_json_error(stdout, hg_code_name(s.code), s.msg);
    }
    printf("}\n");
    hg_cli_json_printed();
  } else if (ran) {
    const double gib = (double)r.bytes / (double)(UINT64_C(1) << 30);
    printf("bench copy: %" PRIu64 " B (%.2f GiB) on %s\n", r.bytes, gib, r.device);
    /* the kernel's label: "TMA copy" for every form with TMA loads, "ldg copy" without */
    const char *what = r.config.ldg ? "ldg" : "TMA";
    char stores[96] = "";
    if (r.config.store_threads)
      snprintf(stores, sizeof stores, ", stores by %d warps of threads%s", r.config.store_warps,
               r.config.store_cs ? " (st.global.cs)" : "");
    if (r.config.ldg)
      printf("  ldg copy: %u CTAs x %u threads, %d vectors of 16 B in flight per thread%s\n",
             r.ctas, r.threads, r.config.unroll, r.config.store_cs ? ", st.global.cs" : "");
    else
      printf("  TMA copy: %u CTAs x %u threads, %u B shared memory each: %d stages of %d KiB "
             "boxes%s%s%s%s%s\n",
             r.ctas, r.threads, r.smem_bytes, r.config.stages, r.config.box_rows,
             r.config.order == HG_COPY_CONTIGUOUS ? ", contiguous order" : "",
             r.config.evict_first ? ", evict_first loads" : "",
             r.config.store_evict_first ? ", evict_first stores" : "",
             r.config.split_roles ? ", split loader and storer" : "", stores);
    printf("  verified: the copy equals the source, every byte (fresh random data)\n");
    printf("  %s copy  %8.3f ms median (min %.3f, max %.3f)  %8.1f GB/s\n", what, r.copy_ms,
           r.copy_min_ms, r.copy_max_ms, r.copy_gbs);
    printf("  D2D copy  %8.3f ms median (min %.3f, max %.3f)  %8.1f GB/s\n", r.d2d_ms, r.d2d_min_ms,
           r.d2d_max_ms, r.d2d_gbs);
    printf("  ratio     %.3f (%s / D2D; read + write counted for both)\n", r.ratio, what);
    printf("  path: spec -> launched kernel %.2f ms (generate %.2f, JIT %.2f [%s]); GPU opened "
           "in %.1f ms\n",
           t->to_launch_ms, t->gen_ms, t->jit_ms, t->jit.cache_hit ? "cache hit" : "compiled",
           open_ms);
  }
  if (rt) hg_rt_close(rt);
  return hg_is_ok(&s) ? 0 : hg_cli_fail(s);
}

static void usage_repack(FILE *f) {
  fprintf(f,
          "usage: hopgen bench repack [ROWS COLS] [--type T] [--ld N] [--offset E] [--batch B]\n"
          "                           [--pair ROWS_B] [--warmup W] [--runs R] [--seed N]\n"
          "                           [--min-ratio X]\n"
          "                           [--backend ptx|mlir] [--device N] [--json]\n\n"
          "The operand repack that AUTO runs before a GEMM whose rows TMA cannot address (rows\n"
          "of ROWS x COLS elements, default 4096 x 4097 bf16, copied into packed rows of 16-byte\n"
          "multiples, the padding zeroed) against the driver's device-to-device copy of the\n"
          "packed bytes, in the same process: fresh random data, every byte verified, then the\n"
          "median of interleaved runs timed with events. GB/s counts read + write for both.\n\n"
          "  --type T          bf16 (default), f16, e4m3, e5m2, f32, ... (1, 2 or 4 bytes)\n"
          "  --ld N            source elements between rows (default COLS)\n"
          "  --offset E        the source starts E elements past a 256-byte boundary (0..15)\n"
          "  --batch B         matrices, each ld x ROWS elements apart (default 1)\n"
          "  --pair ROWS_B     a second operand of ROWS_B rows (same columns, ld, offset, batch),\n"
          "                    copied with the first in one launch by the pair kernel that a GEMM\n"
          "                    repacking both A and B runs; the two one-operand launches it\n"
          "                    replaces are timed beside it\n"
          "  --warmup W, --runs R  per side (default 5 and 30)\n"
          "  --min-ratio X     exit 1 when repack / D2D bandwidth is below X (e.g. 0.7)\n"
          "  --json            machine-readable result on standard output\n");
}

enum {
  R_TYPE,
  R_LD,
  R_OFFSET,
  R_BATCH,
  R_PAIR,
  R_WARMUP,
  R_RUNS,
  R_SEED,
  R_DEVICE,
  R_MIN,
  R_BE,
  R_JSON
};
static const hg_cli_opt_t repack_opts[] = {
    {R_TYPE, "--type", NULL, HG_CLI_VALUE, 0},     {R_LD, "--ld", NULL, HG_CLI_VALUE, 0},
    {R_OFFSET, "--offset", NULL, HG_CLI_VALUE, 0}, {R_BATCH, "--batch", NULL, HG_CLI_VALUE, 0},
    {R_WARMUP, "--warmup", NULL, HG_CLI_VALUE, 0}, {R_RUNS, "--runs", NULL, HG_CLI_VALUE, 0},
    {R_SEED, "--seed", NULL, HG_CLI_VALUE, 0},     {R_DEVICE, "--device", NULL, HG_CLI_VALUE, 0},
    {R_MIN, "--min-ratio", NULL, HG_CLI_VALUE, 0}, {R_BE, "--backend", NULL, HG_CLI_VALUE, 0},
    {R_JSON, "--json", NULL, HG_CLI_JSON, 0},      {R_PAIR, "--pair", NULL, HG_CLI_VALUE, 0},
};

static int bench_repack(int argc, char **argv) {
  hg_cli_args_t a;
  hg_cli_args_init(&a, "bench repack", repack_opts,
                   (int)(sizeof repack_opts / sizeof repack_opts[0]), argc, argv);
  if (a.help) {
    usage_repack(stdout);
    return 0;
  }
  a.max_operands = 2;
  hg_repack_bench_t b = {.type = HG_BF16, .rows = 4096, .cols = 4097, .batch = 1};
  bool json = false;
  int64_t device = 0, x = 0, dims[2];
  int ndims = 0;
  double min_ratio = 0;
  hg_backend_t be = HG_BACKEND_PTX;
  const char *v;
  for (int id; (id = hg_cli_next(&a, &v)) != HG_CLI_END;) {
    bool ok = true;
    switch (id) {
    case HG_CLI_ERROR:
      return hg_cli_usage(&a);
    case HG_CLI_OPERAND:
      ok = hg_cli_int(&a, v, 1, INT32_MAX, &dims[ndims]);
      ndims++;
      break;
    case R_TYPE:
      ok = hg_cli_check(&a, hg_dtype_parse(v, &b.type));
      break;
    case R_LD:
      ok = hg_cli_int(&a, v, 1, INT32_MAX, &b.ld_src);
      break;
    case R_OFFSET:
      ok = hg_cli_int(&a, v, 0, 15, &x);
      b.offset = (int)x;
      break;
    case R_BATCH:
      ok = hg_cli_int(&a, v, 1, 1 << 20, &b.batch);
      break;
    case R_PAIR:
      ok = hg_cli_int(&a, v, 1, INT32_MAX, &b.pair_rows);
      break;
    case R_WARMUP:
      ok = hg_cli_int(&a, v, 1, 1000, &x);
      b.warmup = (int)x;
      break;
    case R_RUNS:
      ok = hg_cli_int(&a, v, 1, 100000, &x);
      b.runs = (int)x;
      break;
    case R_SEED:
      ok = hg_cli_int(&a, v, 1, INT64_MAX, &x);
      b.seed = (uint64_t)x;
      break;
    case R_DEVICE:
      ok = hg_cli_int(&a, v, 0, 1023, &device);
      break;
    case R_MIN:
      ok = hg_cli_float(&a, v, 1e-9, 1e9, false, &min_ratio);
      break;
    case R_BE:
      ok = hg_cli_check(&a, hg_backend_parse(v, &be));
      break;
    case R_JSON:
      json = true;
      break;
    }
    if (!ok) return hg_cli_usage(&a);
  }
  if (ndims == 1) return hg_cli_usagef(&a, "give both ROWS and COLS, or neither");
  if (ndims == 2) {
    b.rows = dims[0];
    b.cols = dims[1];
  }
  hg_cli_cache_note();
  hg_status_t s = hg_repack_bench_validate(&b);
  if (!hg_is_ok(&s)) {
    hg_cli_bad(&a, "%s", s.msg);
    return hg_cli_usage(&a);
  }
  hg_rt_t *rt = NULL;
  s = hg_cli_rt_open((int)device, &rt);
  if (!hg_is_ok(&s)) s = hg_status_wrap(s, "bench repack cannot run on the GPU: ");
  hg_repack_bench_result_t r;
  memset(&r, 0, sizeof r);
  bool ran = false;
  if (hg_is_ok(&s)) {
    s = hg_repack_bench_run(rt, &b, be, &r);
    ran = hg_is_ok(&s);
  }
  if (ran && min_ratio > 0 && r.ratio < min_ratio)
    s = hg_error(HG_ERR_MISMATCH,
                 "the repack reached %.3f of the driver's D2D bandwidth (%.1f vs %.1f GB/s), "
                 "below --min-ratio %.3f",
                 r.ratio, r.repack_gbs, r.d2d_gbs, min_ratio);
  if (json) {
    printf("{\"command\": \"bench repack\", \"ok\": %s, \"type\": \"%s\", \"rows\": %" PRId64
           ", \"cols\": %" PRId64 ", \"batch\": %" PRId64 ", \"offset\": %d",
           hg_is_ok(&s) ? "true" : "false", hg_dtype_name(b.type), b.rows, b.cols, b.batch,
           b.offset);
    if (ran) {
      printf(", ");
      hg_cli_json_str(stdout, "device", r.device, ", ");
      printf("\"kernel\": \"%s\", \"ld_src\": %" PRId64 ", \"ld_dst\": %" PRId64
             ", \"lanes\": %d, \"ctas\": %" PRIu64 ", \"bytes_read\": %" PRIu64
             ", \"bytes_written\": %" PRIu64 ", \"verified\": %s, \"repack_ms\": %.5f, "
             "\"repack_min_ms\": %.5f, \"d2d_ms\": %.5f, \"repack_gbs\": %.2f, "
             "\"d2d_gbs\": %.2f, \"ratio\": %.4f",
             r.kernel, r.args.ld_src, r.args.ld_dst, 1 << r.lanes_log2, r.ctas, r.bytes_read,
             r.bytes_written, r.verified ? "true" : "false", r.repack_ms, r.repack_min_ms, r.d2d_ms,
             r.repack_gbs, r.d2d_gbs, r.ratio);
      if (b.pair_rows > 0)
        printf(", \"pair_rows\": %" PRId64 ", \"lanes_b\": %d, \"two_launches_ms\": %.5f",
               b.pair_rows, 1 << r.lanes_log2_b, r.two_ms);
    }
    if (!hg_is_ok(&s)) {
      printf(", ");
      hg_cli_json_error(stdout, hg_code_name(s.code), s.msg);
    }
    printf("}\n");
    hg_cli_json_printed();
  } else if (ran) {
    printf("bench repack: %" PRId64 " x %" PRId64 " %s (ld %" PRId64
           ", base +%d elements) x %" PRId64 " -> rows of %" PRId64 " on %s\n",
           b.rows, b.cols, hg_dtype_name(b.type), r.args.ld_src, b.offset, b.batch, r.args.ld_dst,
           r.device);
    if (b.pair_rows > 0)
      printf("  %s: A and B (%" PRId64 " rows) in one launch, %" PRIu64
             " CTAs x 256 threads, %d and %d threads a row; verified every byte\n",
             r.kernel, b.pair_rows, r.ctas, 1 << r.lanes_log2, 1 << r.lanes_log2_b);
    else
      printf("  %s: %" PRIu64 " CTAs x 256 threads, %d threads a row; verified every byte\n",
             r.kernel, r.ctas, 1 << r.lanes_log2);
    printf("  repack    %8.4f ms median (min %.4f)  %8.1f GB/s (%" PRIu64 " B read + %" PRIu64
           " B written)\n",
           r.repack_ms, r.repack_min_ms, r.repack_gbs, r.bytes_read, r.bytes_written);
    printf("  D2D copy  %8.4f ms median          %8.1f GB/s (the packed bytes)\n", r.d2d_ms,
           r.d2d_gbs);
    if (b.pair_rows > 0)
      printf("  two launches %8.4f ms median (the one-operand kernel on A, then on B; %.3f x "
             "the pair's device time)\n",
             r.two_ms, r.two_ms / r.repack_ms);
    printf("  ratio     %.3f (repack / D2D)\n", r.ratio);
  }
  if (rt) hg_rt_close(rt);
  return hg_is_ok(&s) ? 0 : hg_cli_fail(s);
}

int hg_cmd_bench(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "copy")) return bench_copy(argc - 1, argv + 1);
  if (!strcmp(argv[1], "repack")) return bench_repack(argc - 1, argv + 1);
  if (!strcmp(argv[1], "gemm")) return hg_cli_bench_gemm(argc - 1, argv + 1);
  if (!strcmp(argv[1], "grouped-gemm")) return hg_cli_bench_grouped(argc - 1, argv + 1);
  fprintf(stderr,
          "hopgen: unknown benchmark '%s' (expected copy, repack, gemm or grouped-gemm; hopgen "
          "bench --help)\n",
          argv[1]);
  return 2;
}
