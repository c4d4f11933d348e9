/* hopgen: the command-line front end. Dispatches to tools/cmd_<group>.c. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
  const char *name;
  int (*run)(int, char **);
  const char *summary;
} commands[] = {
    {"layout", hg_cmd_layout, "CuTe layout algebra: eval, show, and every operation"},
    {"plan", hg_cmd_plan, "Hopper plans: TMA tensor maps and boxes, wgmma atoms and descriptors"},
    {"tma", hg_cmd_tma, "generate, run and check TMA load/prefetch/multicast/store/reduce"},
    {"gemm", hg_cmd_gemm, "generate, run, check and time a TMA + wgmma GEMM"},
    {"bench", hg_cmd_bench, "benchmarks against the driver's copy and cuBLAS"},
    {"demo", hg_cmd_demo, "the main job: algebra, kernel generation, ptxas, GPU run"},
};

static void usage(FILE *f) {
  fprintf(f, "usage: hopgen COMMAND [ARGS...]   (hopgen COMMAND --help for details)\n\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
}

int hg_cli_fail(hg_status_t s) {
  fprintf(stderr, "hopgen: %s\n", s.msg[0] ? s.msg : hg_code_name(s.code));
  return 1;
}

int hg_cli_wants_help(int argc, char **argv) {
  for (int i = 0; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
  return 0;
}

void hg_cli_json_str(FILE *f, const char *name, const char *v, const char *sep) {
  fprintf(f, "\"%s\": \"", name);
  for (const unsigned char *p = (const unsigned char *)(v ? v : ""); *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p == '\n')
      fputs("\\n", f);
    else if (*p < 0x20)
      fprintf(f, "\\u%04x", *p);
    else
      fputc(*p, f);
  }
  fprintf(f, "\"%s", sep);
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
      !strcmp(argv[1], "help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
  fprintf(stderr, "hopgen: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
