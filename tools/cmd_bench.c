/* hopgen bench: `bench copy` (the streaming TMA copy against the driver's device-to-device
 * copy, hg_copy_bench_run) and `bench gemm` (hg_cli_bench_gemm in cmd_gemm.c). Parsing and
 * printing only. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hopgen/kernels.h"

static void usage(FILE *f) {
  fprintf(f, "usage: hopgen bench copy [options]   (hopgen bench copy --help)\n"
             "       hopgen bench gemm [options]   (hopgen bench gemm --help)\n");
}

static void usage_copy(FILE *f) {
  fprintf(
      f, "usage: hopgen bench copy [--bytes N] [--stages S] [--box-rows R] [--ctas-per-sm K]\n"
         "                         [--evict-first] [--warmup W] [--runs R] [--seed N]\n"
         "                         [--min-ratio X] [--backend ptx|mlir] [--device N] [--json]\n\n"
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
         "  --warmup W, --runs R  per side (default 3 and 25)\n"
         "  --min-ratio X     exit 1 when TMA / D2D bandwidth is below X (e.g. 0.9)\n"
         "  --json            machine-readable result on standard output\n");
}

static int usage_error(const char *fmt, const char *a) {
  fprintf(stderr, "hopgen: ");
  fprintf(stderr, fmt, a);
  fprintf(stderr, " (hopgen bench copy --help)\n");
  return 2;
}

/* "1073741824", "1G", "512M", "64K" (binary units), "1GiB". */
static int parse_bytes(const char *s, uint64_t *out) {
  char *end;
  const unsigned long long v = strtoull(s, &end, 10);
  if (end == s || s[0] == '-') return -1;
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
  if (*end || v > UINT64_MAX / mul) return -1;
  *out = (uint64_t)v * mul;
  return 0;
}

static int bench_copy(int argc, char **argv) {
  hg_copy_bench_t b;
  memset(&b, 0, sizeof b);
  b.bytes = UINT64_C(1) << 30;
  bool json = false;
  int64_t device = 0;
  double min_ratio = 0;
  hg_backend_t be = HG_BACKEND_PTX;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage_copy(stdout);
      return 0;
    }
    if (!strcmp(a, "--json")) {
      json = true;
      continue;
    }
    if (!strcmp(a, "--evict-first")) {
      b.config.evict_first = true;
      continue;
    }
    if (i + 1 >= argc) return usage_error("option %s needs a value", a);
    const char *v = argv[++i];
    int64_t x;
    if (!strcmp(a, "--bytes")) {
      if (parse_bytes(v, &b.bytes) || b.bytes == 0)
        return usage_error("--bytes '%s' is not a size like 1073741824, 512M or 4G", v);
    } else if (!strcmp(a, "--stages")) {
      if (hg_cli_parse_int(v, 2, 16, &x)) return usage_error("--stages '%s' is not 2..16", v);
      b.config.stages = (int)x;
    } else if (!strcmp(a, "--box-rows")) {
      if (hg_cli_parse_int(v, 1, 256, &x)) return usage_error("--box-rows '%s' is not 1..256", v);
      b.config.box_rows = (int)x;
    } else if (!strcmp(a, "--ctas-per-sm")) {
      if (hg_cli_parse_int(v, 1, 32, &x)) return usage_error("--ctas-per-sm '%s' is not 1..32", v);
      b.config.ctas_per_sm = (int)x;
    } else if (!strcmp(a, "--warmup")) {
      if (hg_cli_parse_int(v, 1, 1000, &x)) return usage_error("--warmup '%s' is not 1..1000", v);
      b.warmup = (int)x;
    } else if (!strcmp(a, "--runs")) {
      if (hg_cli_parse_int(v, 1, 100000, &x)) return usage_error("--runs '%s' is not 1..100000", v);
      b.runs = (int)x;
    } else if (!strcmp(a, "--seed")) {
      if (hg_cli_parse_int(v, 1, INT64_MAX, &x))
        return usage_error("--seed '%s' is not a positive integer", v);
      b.seed = (uint64_t)x;
    } else if (!strcmp(a, "--device")) {
      if (hg_cli_parse_int(v, 0, 1023, &device))
        return usage_error("--device '%s' is not an ordinal", v);
    } else if (!strcmp(a, "--min-ratio")) {
      char *end;
      min_ratio = strtod(v, &end);
      if (end == v || *end || min_ratio <= 0)
        return usage_error("--min-ratio '%s' is not a positive number like 0.9", v);
    } else if (!strcmp(a, "--backend")) {
      hg_status_t s = hg_backend_parse(v, &be);
      if (!hg_is_ok(&s)) return usage_error("--backend '%s' is not ptx or mlir", v);
    } else {
      return usage_error("unknown option '%s'", a);
    }
  }

  /* The kernel first (pure), so a bad configuration fails before the GPU is touched. */
  hg_kernel_t k;
  hg_status_t s = hg_copy_bench_validate(&b);
  if (hg_is_ok(&s)) s = hg_gen_copy(&b.config, be, &k);
  if (hg_is_ok(&s)) hg_kernel_free(&k);
  hg_rt_t *rt = NULL;
  double open_ms = 0;
  if (hg_is_ok(&s)) {
    const double t0 = hg_now_ms();
    s = hg_rt_open((int)device, &rt);
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
                 "the TMA copy reached %.3f of the driver's D2D bandwidth (%.1f vs %.1f GB/s on "
                 "%" PRIu64 " B), below --min-ratio %.3f",
                 r.ratio, r.copy_gbs, r.d2d_gbs, r.bytes, min_ratio);
  const hg_tma_timing_t *t = &r.path;
  if (json) {
    printf("{\"command\": \"bench copy\", \"ok\": %s, \"bytes\": %" PRIu64 ", ",
           hg_is_ok(&s) ? "true" : "false", b.bytes);
    if (ran) {
      hg_cli_json_str(stdout, "device", r.device, ", ");
      printf("\"open_ms\": %.3f, \"ctas\": %u, \"threads\": %u, \"smem_bytes\": %u, "
             "\"stages\": %d, \"box_rows\": %d, \"box_bytes\": %d, \"ctas_per_sm\": %d, "
             "\"evict_first\": %s, \"verified\": %s, "
             "\"copy_ms\": %.5f, \"copy_min_ms\": %.5f, \"copy_max_ms\": %.5f, \"copy_gbs\": %.2f, "
             "\"d2d_ms\": %.5f, \"d2d_min_ms\": %.5f, \"d2d_max_ms\": %.5f, \"d2d_gbs\": %.2f, "
             "\"ratio\": %.4f, \"path\": {\"to_launch_ms\": %.4f, \"gen_ms\": %.4f, "
             "\"jit_ms\": %.4f, \"cache_hit\": %s}",
             open_ms, r.ctas, r.threads, r.smem_bytes, r.config.stages, r.config.box_rows,
             r.config.box_rows * 1024, r.config.ctas_per_sm,
             r.config.evict_first ? "true" : "false", r.verified ? "true" : "false", r.copy_ms,
             r.copy_min_ms, r.copy_max_ms, r.copy_gbs, r.d2d_ms, r.d2d_min_ms, r.d2d_max_ms,
             r.d2d_gbs, r.ratio, t->to_launch_ms, t->gen_ms, t->jit_ms,
             t->jit.cache_hit ? "true" : "false");
    }
    if (!hg_is_ok(&s)) {
      printf("%s\"error\": {\"code\": \"%s\", ", ran ? ", " : "", hg_code_name(s.code));
      hg_cli_json_str(stdout, "message", s.msg, "}");
    }
    printf("}\n");
  } else if (ran) {
    const double gib = (double)r.bytes / (double)(UINT64_C(1) << 30);
    printf("bench copy: %" PRIu64 " B (%.2f GiB) on %s\n", r.bytes, gib, r.device);
    printf("  TMA copy: %u CTAs x %u threads, %u B shared memory each: %d stages of %d KiB boxes"
           "%s\n",
           r.ctas, r.threads, r.smem_bytes, r.config.stages, r.config.box_rows,
           r.config.evict_first ? ", evict_first loads" : "");
    printf("  verified: the copy equals the source, every byte (fresh random data)\n");
    printf("  TMA copy  %8.3f ms median (min %.3f, max %.3f)  %8.1f GB/s\n", r.copy_ms,
           r.copy_min_ms, r.copy_max_ms, r.copy_gbs);
    printf("  D2D copy  %8.3f ms median (min %.3f, max %.3f)  %8.1f GB/s\n", r.d2d_ms, r.d2d_min_ms,
           r.d2d_max_ms, r.d2d_gbs);
    printf("  ratio     %.3f (TMA / D2D; read + write counted for both)\n", r.ratio);
    printf("  path: spec -> launched kernel %.2f ms (generate %.2f, JIT %.2f [%s]); GPU opened "
           "in %.1f ms\n",
           t->to_launch_ms, t->gen_ms, t->jit_ms, t->jit.cache_hit ? "cache hit" : "compiled",
           open_ms);
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
  if (!strcmp(argv[1], "gemm")) return hg_cli_bench_gemm(argc - 1, argv + 1);
  fprintf(stderr, "hopgen: unknown benchmark '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
