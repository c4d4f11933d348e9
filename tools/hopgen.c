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
