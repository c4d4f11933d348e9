/* hopgen gemm: placeholder until its layer lands (replaced by the layer's own CLI). */
#include <stdio.h>

#include "cli.h"

int hg_cmd_gemm(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "hopgen: 'gemm' is not built yet\n");
  return 1;
}
