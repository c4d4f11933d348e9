/* hopgen CLI: argument parsing and printing only; every behaviour lives in the library.
 * Each command group lives in its own tools/cmd_<group>.c. A command returns the process
 * exit status: 0 success, 1 failure (the status sentence printed to stderr), 2 usage. */
#ifndef HOPGEN_CLI_H
#define HOPGEN_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "hopgen/status.h"

int hg_cmd_layout(int argc, char **argv);     /* hopgen layout ... (argv[0] == "layout") */
int hg_cmd_plan(int argc, char **argv);       /* hopgen plan tma|mma ... */
int hg_cmd_tma(int argc, char **argv);        /* hopgen tma load|prefetch|multicast|store|reduce */
int hg_cmd_gemm(int argc, char **argv);       /* hopgen gemm ... */
int hg_cmd_bench(int argc, char **argv);      /* hopgen bench copy|gemm */
int hg_cmd_demo(int argc, char **argv);       /* hopgen demo: the README's main job */
int hg_cli_bench_gemm(int argc, char **argv); /* hopgen bench gemm (tools/cmd_gemm.c) */

/* Print "hopgen: <sentence>" to stderr and return 1 (for `return hg_cli_fail(s);`). */
int hg_cli_fail(hg_status_t s);
/* True when argv holds --help or -h. */
int hg_cli_wants_help(int argc, char **argv);
/* Print "name": "v" followed by sep, as a JSON string (quotes, backslashes and control
 * characters escaped; NULL prints as ""). Every --json output goes through it. */
void hg_cli_json_str(FILE *f, const char *name, const char *v, const char *sep);
/* An integer in C notation (decimal, 0x hex, 0 octal) within [lo, hi] into *out: 0, or -1
 * when s is not one or is out of range. */
int hg_cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out);
/* "a,b,c" (each separator a character of seps) -> decimal values: their count (0 for ""),
 * or -1 when malformed or longer than cap. */
int hg_cli_parse_list(const char *s, const char *seps, int64_t *out, int cap);

#endif
