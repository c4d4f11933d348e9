/* hopgen CLI: argument parsing and printing only; every behaviour lives in the library.
 * Each command group lives in its own tools/cmd_<group>.c; tools/cli.c holds what they
 * share: the one option parser, the value converters, failure and JSON conventions, and
 * every file and standard-output write, checked.
 *
 * Exit status of every command:
 *   0  success;
 *   1  a failure: a rule the request broke (the library's sentence), no GPU or tool, a
 *      write that failed; one "hopgen: <sentence>" line on stderr;
 *   2  a usage error: the command line itself is wrong (an unknown command or option, a
 *      missing or extra argument, a value that does not parse as its type or lies outside
 *      its range, an option given twice or together with one it conflicts with).
 * With --json a failure or usage error also prints one JSON object on stdout,
 *   {"command": "...", "ok": false, "error": {"code": "<hg_code_name or usage>", "message": "..."}}
 * unless the command already printed its own object (which then says "ok": false).
 *
 * Adding an option to a command:
 *   1. one line in the command's hg_cli_opt_t table: its id (the command's enum), the name
 *      ("--iters"), an alias or NULL, HG_CLI_FLAG / HG_CLI_VALUE / HG_CLI_JSON, and `sets`
 *      (0 unless it sets something another option also sets: then the same bit in both, and
 *      giving both is refused as a conflict);
 *   2. a case for the id in the command's loop over hg_cli_next, converting the value with
 *      hg_cli_int / hg_cli_float / hg_cli_list / hg_cli_check (a library parser's status);
 *   3. a line in the command's usage text.
 * The parser itself takes "--opt value" and "--opt=value" (a value may start with '-', as a
 * negative origin does), "--" (only operands follow), --help/-h anywhere, and refuses
 * unknown options, missing values, values given to flags, repeats and conflicts. */
#ifndef HOPGEN_CLI_H
#define HOPGEN_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hopgen/emit.h"
#include "hopgen/kernels.h"
#include "hopgen/runtime.h"
#include "hopgen/status.h"

/* ---------------------------------------------------------------- commands */

/* The whole CLI on argv (argv[0] the program): the exit status. Never exits and keeps no
 * state between calls, so that a fuzzer can drive it in-process; standard output is flushed
 * and checked at the end (a failed write is a failure). */
int hg_cli_main(int argc, char **argv);
/* Fuzzing: no file is written (every output file is /dev/null) or read (--batch FILE is
 * refused), ptxas is not run and no GPU is opened (both say so as failures). */
void hg_cli_set_sandbox(bool on);
bool hg_cli_sandboxed(void);

/* Each takes argv[0] == its own name. */
int hg_cmd_layout(int argc, char **argv);     /* hopgen layout ... */
int hg_cmd_plan(int argc, char **argv);       /* hopgen plan tma|mma ... */
int hg_cmd_tma(int argc, char **argv);        /* hopgen tma load|prefetch|multicast|store|reduce */
int hg_cmd_gemm(int argc, char **argv);       /* hopgen gemm ... */
int hg_cmd_export(int argc, char **argv);     /* hopgen export gemm ... (tools/cmd_gemm.c) */
int hg_cmd_bench(int argc, char **argv);      /* hopgen bench copy|gemm */
int hg_cmd_demo(int argc, char **argv);       /* hopgen demo: the README's main job */
int hg_cli_bench_gemm(int argc, char **argv); /* hopgen bench gemm (tools/cmd_gemm.c) */
int hg_cmd_grouped_gemm(int argc, char **argv);  /* hopgen grouped-gemm (tools/cmd_grouped.c) */
int hg_cli_bench_grouped(int argc, char **argv); /* hopgen bench grouped-gemm (cmd_grouped.c) */
/* The tma --batch reader on an open stream (tools/cmd_tma.c): one case per line, of any
 * length, with extra[] appended to each; the batch's exit status. name labels messages. */
int hg_cli_tma_batch(FILE *f, const char *name, int nextra, char **extra);

/* ---------------------------------------------------------------- the option parser */

typedef enum hg_cli_kind {
  HG_CLI_FLAG,  /* no value */
  HG_CLI_VALUE, /* one value: "--opt v" or "--opt=v" */
  HG_CLI_JSON,  /* a flag that also makes failures JSON (found before parsing starts) */
} hg_cli_kind_t;

typedef struct hg_cli_opt {
  int id;            /* the command's code for it, 0..63 */
  const char *name;  /* "--shape" */
  const char *alias; /* another spelling ("--box"), or NULL */
  hg_cli_kind_t kind;
  uint64_t sets; /* what it sets, as bits; 0 means HG_CLI_BIT(id) alone */
} hg_cli_opt_t;

#define HG_CLI_BIT(id) (UINT64_C(1) << (id))

/* What hg_cli_next returns besides an option's id. */
enum { HG_CLI_OPERAND = -1, HG_CLI_END = -2, HG_CLI_ERROR = -3 };

typedef struct hg_cli_args {
  const char *command; /* "gemm", "plan tma": in messages */
  const hg_cli_opt_t *opts;
  int nopts;
  int argc;
  char **argv;
  int next;            /* the argv index hg_cli_next looks at */
  bool help;           /* --help or -h was given (anywhere) */
  int max_operands;    /* more operands are a usage error; -1 (the default): any number */
  int operands;        /* operands seen */
  bool operands_only;  /* after "--" */
  const char *current; /* the option being converted, as typed ("--batch") */
  uint64_t seen;
  const char *who[64]; /* the argument that set each bit */
  char error[HG_STATUS_MSG_BYTES];
} hg_cli_args_t;

/* Start parsing argv (argv[0], the command word, is skipped). Sets help, and JSON failure
 * output when an HG_CLI_JSON option is present. */
void hg_cli_args_init(hg_cli_args_t *a, const char *command, const hg_cli_opt_t *opts, int nopts,
                      int argc, char **argv);
/* The next argument: an option's id (*value its value, NULL for a flag), HG_CLI_OPERAND
 * (*value the operand), HG_CLI_END, or HG_CLI_ERROR (a->error says why). */
int hg_cli_next(hg_cli_args_t *a, const char **value);
/* Record that an operand sets what bits say ("the operand M" against --m): false with
 * a->error set when an option or operand already did. */
bool hg_cli_claim(hg_cli_args_t *a, uint64_t bits, const char *who);

/* Value converters for a->current's value v; false with a->error set when v is not one.
 * Integers are decimal (or 0x hex), with an optional sign, nothing else around them, and
 * within [lo, hi]: overflow and trailing characters are refused, never cut or cast. */
bool hg_cli_int(hg_cli_args_t *a, const char *v, int64_t lo, int64_t hi, int64_t *out);
/* A finite number within [lo, hi] that also fits a float when as_float (nan, inf and
 * 1e999 are refused). */
bool hg_cli_float(hg_cli_args_t *a, const char *v, double lo, double hi, bool as_float,
                  double *out);
/* "a,b,c" (each separator a character of seps), each an integer as hg_cli_int takes it in
 * [lo, hi]: the count (1..cap), or -1 with a->error set (empty items, a trailing
 * separator and more than cap items are refused). */
int hg_cli_list(hg_cli_args_t *a, const char *v, const char *seps, int64_t lo, int64_t hi,
                int64_t *out, int cap);
/* A library parser's status on the value (hg_dtype_parse, ...): false with a->error set. */
bool hg_cli_check(hg_cli_args_t *a, hg_status_t s);
/* Set a->error (printf-style) and return false: a usage error found by the command. */
bool hg_cli_bad(hg_cli_args_t *a, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Print a->error as a usage error ("hopgen: <sentence> (hopgen <command> --help)", and the
 * JSON object with --json) and return 2: `return hg_cli_usage(&a);`. */
int hg_cli_usage(const hg_cli_args_t *a);
/* A command's --help text on standard output, written and flushed at once so that a failed
 * write reports its own reason (a text past stdio's buffer would otherwise fail mid-way and
 * leave only "an earlier write failed" to the final check): 0, or 1 after the sentence. */
int hg_cli_help(const char *text);
/* Set a->error (printf-style) and do as hg_cli_usage: `return hg_cli_usagef(&a, ...);`. */
int hg_cli_usagef(hg_cli_args_t *a, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---------------------------------------------------------------- options of GEMM runs */

/* What hopgen gemm, export gemm and grouped-gemm share: which kernel (--config, --backend),
 * what to do with it (--check, --bench, --emit FILE), how (--iters, --warmup, --seed) and
 * --json. A command puts HG_CLI_RUN_OPTS in its table and hands these ids to hg_cli_run_arg;
 * its own ids stay below HG_RUN_FIRST (and every id below 64, for HG_CLI_BIT). */
enum {
  HG_RUN_FIRST = 50,
  HG_RUN_CONFIG = HG_RUN_FIRST,
  HG_RUN_BACKEND,
  HG_RUN_CHECK,
  HG_RUN_BENCH,
  HG_RUN_ITERS,
  HG_RUN_WARMUP,
  HG_RUN_SEED,
  HG_RUN_EMIT,
  HG_RUN_JSON,
  HG_RUN_LAST = HG_RUN_JSON
};

#define HG_CLI_RUN_OPTS                                                                            \
  {HG_RUN_CONFIG, "--config", NULL, HG_CLI_VALUE, 0},                                              \
      {HG_RUN_BACKEND, "--backend", NULL, HG_CLI_VALUE, 0},                                        \
      {HG_RUN_CHECK, "--check", NULL, HG_CLI_FLAG, 0},                                             \
      {HG_RUN_BENCH, "--bench", NULL, HG_CLI_FLAG, 0},                                             \
      {HG_RUN_ITERS, "--iters", NULL, HG_CLI_VALUE, 0},                                            \
      {HG_RUN_WARMUP, "--warmup", NULL, HG_CLI_VALUE, 0},                                          \
      {HG_RUN_SEED, "--seed", NULL, HG_CLI_VALUE, 0},                                              \
      {HG_RUN_EMIT, "--emit", NULL, HG_CLI_VALUE, 0}, {                                            \
    HG_RUN_JSON, "--json", NULL, HG_CLI_JSON, 0                                                    \
  }

typedef struct hg_cli_run {
  hg_gemm_config_t cfg; /* --config, when have_cfg */
  bool have_cfg, check, bench, json;
  hg_backend_t be;
  int iters, warmup; /* 30 and 5 unless given */
  uint64_t seed;     /* 0: from the clock */
  const char *emit;  /* NULL: not asked */
} hg_cli_run_t;

/* The defaults: PTX backend, 30 iterations after 5 warm-up runs, the rest unset. */
void hg_cli_run_init(hg_cli_run_t *r);
/* Convert option id (an HG_RUN_* id) with value v into r; false with a->error set when v is
 * not one (or id is not an HG_RUN_* id). */
bool hg_cli_run_arg(hg_cli_args_t *a, int id, const char *v, hg_cli_run_t *r);
/* The GEMM drivers' options from r (its configuration when --config was given). */
hg_gemm_run_options_t hg_cli_run_options(const hg_cli_run_t *r);

/* ---------------------------------------------------------------- output */

/* Print a failure ("hopgen: <sentence>" on stderr, and the JSON object with --json) and
 * return 1: `return hg_cli_fail(s);`. */
int hg_cli_fail(hg_status_t s);
/* Print "error": {"code": ..., "message": ...} (code: hg_code_name, or "usage"). */
void hg_cli_json_error(FILE *f, const char *code, const char *msg);
/* The command printed its own JSON result object: failures print no second one. */
void hg_cli_json_printed(void);
/* A new JSON object may follow (the next case of a batch). */
void hg_cli_json_next(void);
/* Print "name": "v" followed by sep, as a JSON string (quotes, backslashes and control
 * characters escaped; NULL prints as ""); name NULL: the string alone (an array element).
 * Every --json output goes through it. */
void hg_cli_json_str(FILE *f, const char *name, const char *v, const char *sep);
/* With HOPGEN_CACHE_DIR or the home unusable, say once on stderr that this run is uncached
 * (commands that would use a cache call it before they do). */
void hg_cli_cache_note(void);

/* Write text as the file path ('-': standard output, flushed), every write and the close
 * checked: HG_ERR_IO with a sentence naming the file and the reason. */
hg_status_t hg_cli_write_file(const char *path, const char *text);
/* Open path for writing ('-': standard output); NULL with *s set when it cannot be. */
FILE *hg_cli_open_write(const char *path, hg_status_t *s);
/* Flush and close what hg_cli_open_write opened, checking both (standard output is only
 * flushed): HG_ERR_IO with a sentence when any write to it failed. */
hg_status_t hg_cli_close_write(FILE *f, const char *path);
/* Open path for reading ('-': standard input), refusing what is not a regular file (a
 * directory reads as nothing); NULL with *s set when it cannot be. */
FILE *hg_cli_open_read(const char *path, hg_status_t *s);

/* hg_ptxas_check and hg_rt_open, or a failure in the sandbox. */
hg_status_t hg_cli_ptxas(const char *ptx, hg_ptxas_report_t *r);
/* The generate-only commands' check: rep zeroed, then, when *s is a success (the kernel's
 * files written), ptx assembled with ptxas (rep filled, *s its status). Returns how it went:
 * "ok", "not available" (no ptxas), "REJECTED", or "not run" (*s a failure already). */
const char *hg_cli_ptxas_verdict(const char *ptx, hg_status_t *s, hg_ptxas_report_t *rep);
hg_status_t hg_cli_rt_open(int ordinal, hg_rt_t **rt);

#endif
