/* hopgen bench: placeholder until its layer lands (replaced by the layer's own CLI). */
#include <stdio.h>

#include "cli.h"

int hg_cmd_bench(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "hopgen: 'bench' is not built yet\n");
  return 1;
}
