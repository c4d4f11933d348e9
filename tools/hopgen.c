/* hopgen: the command-line front end. Everything is hg_cli_main (tools/cli.c), which a
 * fuzzer drives in-process; main adds only the final close of standard output. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int main(int argc, char **argv) {
  int rc = hg_cli_main(argc, argv);
  if (fclose(stdout) != 0 && rc == 0) {
    fprintf(stderr, "hopgen: closing standard output failed: %s\n", strerror(errno));
    rc = 1;
  }
  return rc;
}
