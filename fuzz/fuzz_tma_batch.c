/* libFuzzer target: the `hopgen tma --batch` reader. The input is the batch file itself:
 * lines of any length and content, one case per line with its options, '#' comments. In
 * the sandbox (no ptxas, no GPU, no files) every case is generated and planned; the reader
 * must tally every line and return 0 or 1, never crash, hang or leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fuzz_input.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  hg_cli_set_sandbox(true);
  fz_offline();
  if (!freopen("/dev/null", "w", stdout)) abort();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 16384) return 0;
  /* The batch as a stream (fmemopen takes an empty buffer as an empty file). */
  char *copy = malloc(size + 1);
  if (!copy) return 0;
  memcpy(copy, data, size);
  copy[size] = '\0';
  FILE *f = fmemopen(copy, size, "r");
  if (!f) {
    free(copy);
    return 0;
  }
  char *extra[] = {"--no-ptxas"};
  /* Half the inputs run with an option appended to every line, as the command line may. */
  const int rc = hg_cli_tma_batch(f, "fuzz", size && (data[0] & 1), extra);
  fclose(f);
  free(copy);
  if (rc != 0 && rc != 1) __builtin_trap();
  return 0;
}
