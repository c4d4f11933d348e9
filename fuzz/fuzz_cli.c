/* libFuzzer target: the CLI's option parsing of every command, in process. The input is the
 * argument list, one argument per line ('\n' or NUL separates); hg_cli_main runs it in the
 * sandbox (hg_cli_set_sandbox): no file is written or read, no ptxas, GPU or MLIR tool runs,
 * no cache is touched. Whatever the arguments, the CLI must return 0, 1 or 2 and never
 * crash, hang or leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fuzz_input.h"

#define MAX_INPUT 4096
#define MAX_ARGS 48

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  hg_cli_set_sandbox(true);
  fz_offline(); /* belt and braces, whatever the sandbox misses */
  if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "r", stdin)) abort();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > MAX_INPUT) return 0;
  char text[MAX_INPUT + 1];
  memcpy(text, data, size);
  text[size] = '\0';
  char *argv[MAX_ARGS + 2];
  int argc = 0;
  argv[argc++] = "hopgen";
  for (char *p = text; argc < MAX_ARGS + 1;) {
    argv[argc++] = p;
    char *end = p + strcspn(p, "\n");
    if (end >= text + size) break;
    *end = '\0';
    p = end + 1;
  }
  /* NULs inside the input end an argument early, as they would in a real argv. */
  argv[argc] = NULL;
  const int rc = hg_cli_main(argc, argv);
  if (rc < 0 || rc > 2) __builtin_trap(); /* the documented exit statuses only */
  return 0;
}
