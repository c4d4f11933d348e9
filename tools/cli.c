/* What every hopgen command shares (see cli.h): the dispatcher, the option parser and value
 * converters, failure and JSON conventions, and the checked writes, so that all commands
 * read and print alike. */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* One invocation's state: reset by hg_cli_main, so that calls do not see each other. */
static struct {
  const char *command; /* names the command in usage messages and JSON */
  bool json;           /* failures as JSON on stdout */
  bool json_printed;   /* the command printed its own object */
  bool cache_noted;
} run;
static bool sandbox;

void hg_cli_set_sandbox(bool on) {
  sandbox = on;
}

bool hg_cli_sandboxed(void) {
  return sandbox;
}

/* ---------------------------------------------------------------- dispatch */

static const struct {
  const char *name;
  int (*run)(int, char **);
  const char *summary;
} commands[] = {
    {"layout", hg_cmd_layout, "CuTe layout algebra: eval, show, and every operation"},
    {"plan", hg_cmd_plan, "Hopper plans: TMA tensor maps and boxes, wgmma atoms and descriptors"},
    {"tma", hg_cmd_tma, "generate, run and check TMA load/prefetch/multicast/store/reduce"},
    {"gemm", hg_cmd_gemm, "generate, run, check and time a GEMM (four mainloops)"},
    {"grouped-gemm", hg_cmd_grouped_gemm,
     "a grouped GEMM for mixture-of-experts layers (contiguous or masked)"},
    {"export", hg_cmd_export, "write a GEMM and a launcher that needs only libcuda"},
    {"bench", hg_cmd_bench, "benchmarks against the driver's copy and cuBLAS"},
    {"demo", hg_cmd_demo, "the main job: algebra, kernel generation, ptxas, GPU run"},
};

static void usage(FILE *f) {
  fprintf(f, "usage: hopgen COMMAND [ARGS...]   (hopgen COMMAND --help for details)\n"
             "       hopgen --version\n\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
}

/* Set when a write to standard output has failed and been reported (hg_cli_help): the final
 * check then stays quiet instead of repeating it. */
static bool stdout_reported;

/* Standard output, checked once at the end: a full disk or a closed pipe is a failure. */
static int finish(int rc) {
  if (stdout_reported) {
    stdout_reported = false;
    clearerr(stdout);
    return rc ? rc : 1;
  }
  errno = 0;
  const int flushed = fflush(stdout);
  const int err = errno;
  if (flushed != 0 || ferror(stdout)) {
    fprintf(stderr, "hopgen: writing standard output failed: %s\n",
            err ? strerror(err) : "an earlier write failed");
    clearerr(stdout);
    return rc ? rc : 1;
  }
  return rc;
}

int hg_cli_main(int argc, char **argv) {
  memset(&run, 0, sizeof run);
  run.command = "hopgen";
  clearerr(stdout);
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
    usage(stdout);
    return finish(0);
  }
  if (!strcmp(cmd, "--version")) {
    if (argc > 2) {
      fprintf(stderr, "hopgen: --version takes no arguments\n");
      return 2;
    }
    printf("hopgen %s\n", hg_version());
    return finish(0);
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(cmd, commands[i].name)) {
      run.command = commands[i].name;
      return finish(commands[i].run(argc - 1, argv + 1));
    }
  fprintf(stderr, "hopgen: unknown command '%s'\n", cmd);
  usage(stderr);
  return 2;
}

/* ---------------------------------------------------------------- the option parser */

static const hg_cli_opt_t *find(const hg_cli_args_t *a, const char *name, size_t len) {
  for (int i = 0; i < a->nopts; i++) {
    const hg_cli_opt_t *o = &a->opts[i];
    if ((strlen(o->name) == len && !strncmp(o->name, name, len)) ||
        (o->alias && strlen(o->alias) == len && !strncmp(o->alias, name, len)))
      return o;
  }
  return NULL;
}

static bool is_help(const char *s) {
  return !strcmp(s, "--help") || !strcmp(s, "-h");
}

/* An option is "--x..."; "-" alone, "-5" and "-.5" are operands (stdin, negative numbers). */
static bool is_option(const char *s) {
  return s[0] == '-' && s[1] != '\0' && !(s[1] >= '0' && s[1] <= '9') && s[1] != '.';
}

static size_t name_len(const char *s) {
  const char *eq = strchr(s, '=');
  return eq ? (size_t)(eq - s) : strlen(s);
}

bool hg_cli_bad(hg_cli_args_t *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->error, sizeof a->error, fmt, ap);
  va_end(ap);
  return false;
}

void hg_cli_args_init(hg_cli_args_t *a, const char *command, const hg_cli_opt_t *opts, int nopts,
                      int argc, char **argv) {
  memset(a, 0, sizeof *a);
  a->command = command;
  a->opts = opts;
  a->nopts = nopts;
  a->argc = argc;
  a->argv = argv;
  a->next = 1;
  a->max_operands = -1;
  run.command = command;
  /* Before parsing: --help wins over any error, and --json governs how errors print. */
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--")) break;
    if (is_help(argv[i])) a->help = true;
    if (!is_option(argv[i])) continue;
    const hg_cli_opt_t *o = find(a, argv[i], name_len(argv[i]));
    if (o && o->kind == HG_CLI_JSON) run.json = true;
    if (o && o->kind == HG_CLI_VALUE && !strchr(argv[i], '=')) i++; /* skip its value */
  }
}

bool hg_cli_claim(hg_cli_args_t *a, uint64_t bits, const char *who) {
  const uint64_t both = a->seen & bits;
  if (both) {
    int bit = 0;
    while (!(both & HG_CLI_BIT(bit))) bit++;
    if (a->who[bit] && !strcmp(a->who[bit], who))
      return hg_cli_bad(a, "%s is given twice: give it once", who);
    return hg_cli_bad(a, "%s conflicts with %s given before it: they set the same thing", who,
                      a->who[bit] ? a->who[bit] : "an earlier argument");
  }
  a->seen |= bits;
  for (int bit = 0; bit < 64; bit++)
    if (bits & HG_CLI_BIT(bit)) a->who[bit] = who;
  return true;
}

int hg_cli_next(hg_cli_args_t *a, const char **value) {
  *value = NULL;
  a->current = NULL;
  if (a->next >= a->argc) return HG_CLI_END;
  const char *arg = a->argv[a->next++];
  if (a->operands_only || !is_option(arg)) {
    *value = arg;
    if (a->max_operands >= 0 && a->operands >= a->max_operands) {
      if (a->max_operands == 0)
        hg_cli_bad(a, "unexpected argument '%s' (hopgen %s takes %s)", arg, a->command,
                   a->nopts ? "options only" : "no arguments");
      else
        hg_cli_bad(a, "unexpected argument '%s' (hopgen %s takes %d operand(s))", arg, a->command,
                   a->max_operands);
      return HG_CLI_ERROR;
    }
    a->operands++;
    return HG_CLI_OPERAND;
  }
  if (!strcmp(arg, "--")) {
    a->operands_only = true;
    return hg_cli_next(a, value);
  }
  if (is_help(arg)) return hg_cli_next(a, value); /* handled through a->help */
  const size_t len = name_len(arg);
  const hg_cli_opt_t *o = find(a, arg, len);
  if (!o) {
    hg_cli_bad(a, "unknown option '%.*s' for hopgen %s", (int)len, arg, a->command);
    return HG_CLI_ERROR;
  }
  a->current = o->name;
  const char *eq = arg[len] == '=' ? arg + len + 1 : NULL;
  if (o->kind != HG_CLI_VALUE && eq) {
    hg_cli_bad(a, "%s takes no value (given '%s')", o->name, eq);
    return HG_CLI_ERROR;
  }
  if (o->kind == HG_CLI_VALUE) {
    if (eq) {
      *value = eq;
    } else if (a->next < a->argc) {
      *value = a->argv[a->next++];
    } else {
      hg_cli_bad(a, "%s needs a value", o->name);
      return HG_CLI_ERROR;
    }
  }
  /* The option as typed names it in a repeat or conflict message. */
  if (!hg_cli_claim(a, o->sets ? o->sets : HG_CLI_BIT(o->id), o->name)) return HG_CLI_ERROR;
  return o->id;
}

/* ---------------------------------------------------------------- values */

/* Only decimal digits after an optional sign (a number that overflowed, if parsing failed). */
static bool all_digits(const char *s) {
  s += *s == '-' || *s == '+';
  return *s && strspn(s, "0123456789") == strlen(s);
}

/* Decimal or 0x hex, optional sign, nothing else; false on anything else or overflow. */
static bool parse_i64(const char *s, int64_t *out) {
  const char *p = s;
  if (*p == '+' || *p == '-') p++;
  if (!(*p >= '0' && *p <= '9')) return false; /* strtoll would skip spaces */
  const int base = p[0] == '0' && (p[1] == 'x' || p[1] == 'X') ? 16 : 10;
  char *end;
  errno = 0;
  const long long v = strtoll(s, &end, base);
  if (errno == ERANGE || end == s || *end) return false;
  *out = v;
  return true;
}

bool hg_cli_int(hg_cli_args_t *a, const char *v, int64_t lo, int64_t hi, int64_t *out) {
  int64_t x;
  const char *name = a->current ? a->current : "the value";
  if (!parse_i64(v, &x)) {
    if (all_digits(v)) /* too many digits for 64 bits */
      return hg_cli_bad(a, "%s %s is outside %" PRId64 "..%" PRId64, name, v, lo, hi);
    return hg_cli_bad(a, "%s '%s' is not an integer", name, v);
  }
  if (x < lo || x > hi) {
    if (lo >= 1 && x < 1)
      return hg_cli_bad(a, "%s %s: it is a count, and must be at least %" PRId64, name, v, lo);
    return hg_cli_bad(a, "%s %s is outside %" PRId64 "..%" PRId64, name, v, lo, hi);
  }
  *out = x;
  return true;
}

bool hg_cli_float(hg_cli_args_t *a, const char *v, double lo, double hi, bool as_float,
                  double *out) {
  const char *name = a->current ? a->current : "the value";
  char *end;
  errno = 0;
  const double x = strtod(v, &end);
  if (end == v || *end || v[0] == ' ' || v[0] == '\t' || v[0] == '\n')
    return hg_cli_bad(a, "%s '%s' is not a number", name, v);
  if (!isfinite(x) || errno == ERANGE || (as_float && fabs(x) > FLT_MAX))
    return hg_cli_bad(a, "%s %s is not a finite number%s", name, v,
                      as_float ? " that a 32-bit float can hold" : "");
  if (x < lo || x > hi) {
    if (lo > 0 && x <= 0) return hg_cli_bad(a, "%s %s must be positive", name, v);
    return hg_cli_bad(a, "%s %s is outside %g..%g", name, v, lo, hi);
  }
  *out = x;
  return true;
}

int hg_cli_list(hg_cli_args_t *a, const char *v, const char *seps, int64_t lo, int64_t hi,
                int64_t *out, int cap) {
  const char *name = a->current ? a->current : "the list";
  int n = 0;
  for (const char *p = v;;) {
    const size_t len = strcspn(p, seps);
    char item[32];
    const char *why = NULL;
    if (len == 0)
      why = "is empty";
    else if (n == cap)
      why = "is one too many";
    else if (len >= sizeof item)
      why = "is too long";
    if (!why) {
      memcpy(item, p, len);
      item[len] = '\0';
      if (!parse_i64(item, &out[n]))
        why = all_digits(item) ? "is outside the range" : "is not an integer";
      else if (out[n] < lo || out[n] > hi)
        why = "is outside the range";
    }
    if (why) {
      hg_cli_bad(a,
                 "%s '%s' is not a list of integers (item %d %s; up to %d items in %" PRId64
                 "..%" PRId64 ", separated by '%c')",
                 name, v, n + 1, why, cap, lo, hi, seps[0]);
      return -1;
    }
    n++;
    if (!p[len]) break;
    p += len + 1;
  }
  return n;
}

bool hg_cli_check(hg_cli_args_t *a, hg_status_t s) {
  if (hg_is_ok(&s)) return true;
  return hg_cli_bad(a, "%s: %s", a->current ? a->current : "value", s.msg);
}

/* ---------------------------------------------------------------- options of GEMM runs */

void hg_cli_run_init(hg_cli_run_t *r) {
  memset(r, 0, sizeof *r);
  r->be = HG_BACKEND_PTX;
  r->iters = 30;
  r->warmup = 5;
}

bool hg_cli_run_arg(hg_cli_args_t *a, int id, const char *v, hg_cli_run_t *r) {
  int64_t x = 0;
  switch (id) {
  case HG_RUN_CONFIG:
    r->have_cfg = true;
    return hg_cli_check(a, hg_gemm_config_parse(v, &r->cfg));
  case HG_RUN_BACKEND:
    return hg_cli_check(a, hg_backend_parse(v, &r->be));
  case HG_RUN_CHECK:
    return r->check = true;
  case HG_RUN_BENCH:
    return r->bench = true;
  case HG_RUN_ITERS:
    if (!hg_cli_int(a, v, 1, 100000, &x)) return false;
    r->iters = (int)x;
    return true;
  case HG_RUN_WARMUP:
    if (!hg_cli_int(a, v, 0, 10000, &x)) return false; /* 0: no warm-up runs */
    r->warmup = (int)x;
    return true;
  case HG_RUN_SEED:
    if (!hg_cli_int(a, v, 0, INT64_MAX, &x)) return false; /* 0: from the clock */
    r->seed = (uint64_t)x;
    return true;
  case HG_RUN_EMIT:
    r->emit = v;
    return true;
  case HG_RUN_JSON:
    return r->json = true;
  }
  return hg_cli_bad(a, "internal: option %d has no handling", id);
}

hg_gemm_run_options_t hg_cli_run_options(const hg_cli_run_t *r) {
  hg_gemm_run_options_t o = hg_gemm_run_options_default();
  o.backend = r->be;
  o.config = r->have_cfg ? &r->cfg : NULL;
  o.check = r->check;
  o.bench = r->bench;
  o.iters = r->iters;
  o.warmup = r->warmup;
  o.seed = r->seed;
  return o;
}

/* ---------------------------------------------------------------- failures and JSON */

void hg_cli_json_str(FILE *f, const char *name, const char *v, const char *sep) {
  if (name) fprintf(f, "\"%s\": ", name);
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)(v ? v : ""); *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p == '\n')
      fputs("\\n", f);
    else if (*p < 0x20 || *p == 0x7f)
      fprintf(f, "\\u%04x", *p);
    else
      fputc(*p, f);
  }
  fprintf(f, "\"%s", sep);
}

void hg_cli_json_printed(void) {
  run.json_printed = true;
}

void hg_cli_json_next(void) {
  run.json_printed = false;
}

void hg_cli_json_error(FILE *f, const char *code, const char *msg) {
  fprintf(f, "\"error\": {");
  hg_cli_json_str(f, "code", code, ", ");
  hg_cli_json_str(f, "message", msg, "}");
}

static void json_failure(const char *code, const char *msg) {
  if (!run.json || run.json_printed) return;
  printf("{");
  hg_cli_json_str(stdout, "command", run.command, ", ");
  printf("\"ok\": false, ");
  hg_cli_json_error(stdout, code, msg);
  printf("}\n");
  run.json_printed = true;
}

int hg_cli_fail(hg_status_t s) {
  const char *msg = s.msg[0] ? s.msg : hg_code_name(s.code);
  fprintf(stderr, "hopgen: %s\n", msg);
  json_failure(hg_code_name(s.code), msg);
  return 1;
}

int hg_cli_help(const char *text) {
  errno = 0;
  const bool ok = fputs(text, stdout) != EOF && fflush(stdout) == 0;
  const int err = errno;
  if (ok) return 0;
  fprintf(stderr, "hopgen: writing standard output failed: %s\n",
          err ? strerror(err) : "an earlier write failed");
  stdout_reported = true;
  return 1;
}

int hg_cli_usage(const hg_cli_args_t *a) {
  fprintf(stderr, "hopgen: %s (hopgen %s --help)\n", a->error, a->command);
  json_failure("usage", a->error);
  return 2;
}

int hg_cli_usagef(hg_cli_args_t *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->error, sizeof a->error, fmt, ap);
  va_end(ap);
  return hg_cli_usage(a);
}

void hg_cli_cache_note(void) {
  if (run.cache_noted) return;
  run.cache_noted = true;
  char dir[512];
  hg_status_t s = hg_cache_dir(dir, sizeof dir);
  if (!hg_is_ok(&s)) fprintf(stderr, "hopgen: note: %s; running without the cache\n", s.msg);
}

/* ---------------------------------------------------------------- files */

FILE *hg_cli_open_write(const char *path, hg_status_t *s) {
  *s = hg_ok();
  if (!path[0]) {
    *s = hg_error(HG_ERR_IO, "an empty file name cannot be written");
    return NULL;
  }
  FILE *f = !strcmp(path, "-") ? stdout : fopen(sandbox ? "/dev/null" : path, "w");
  if (!f) *s = hg_error(HG_ERR_IO, "cannot open %s for writing: %s", path, strerror(errno));
  errno = 0; /* so that close can tell what a failed write said */
  return f;
}

/* Flush and close (standard output: flush only), err being a write's errno (0 if none). */
static hg_status_t close_checked(FILE *f, const char *path, int err) {
  if (!err && ferror(f)) err = errno ? errno : EIO;
  if (fflush(f) != 0 && !err) err = errno;
  if (f == stdout)
    clearerr(stdout); /* reported here, not again at the end */
  else if (fclose(f) != 0 && !err)
    err = errno;
  if (err)
    return hg_error(HG_ERR_IO, "writing %s failed: %s", f == stdout ? "standard output" : path,
                    strerror(err));
  return hg_ok();
}

hg_status_t hg_cli_close_write(FILE *f, const char *path) {
  return close_checked(f, path, 0);
}

hg_status_t hg_cli_write_file(const char *path, const char *text) {
  hg_status_t s;
  FILE *f = hg_cli_open_write(path, &s);
  if (!f) return s;
  const size_t n = text ? strlen(text) : 0;
  const int err = fwrite(text ? text : "", 1, n, f) != n ? errno : 0;
  return close_checked(f, path, err);
}

FILE *hg_cli_open_read(const char *path, hg_status_t *s) {
  *s = hg_ok();
  if (!strcmp(path, "-")) return stdin;
  if (!path[0]) {
    *s = hg_error(HG_ERR_IO, "an empty file name cannot be read");
    return NULL;
  }
  if (sandbox) {
    *s = hg_error(HG_ERR_IO, "cannot read %s: files are not read in the sandbox", path);
    return NULL;
  }
  FILE *f = fopen(path, "r");
  if (!f) {
    *s = hg_error(HG_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    return NULL;
  }
  struct stat st;
  if (fstat(fileno(f), &st) != 0)
    *s = hg_error(HG_ERR_IO, "cannot stat %s: %s", path, strerror(errno));
  else if (!S_ISREG(st.st_mode))
    *s = hg_error(HG_ERR_IO, "%s is %s, not a regular file", path,
                  S_ISDIR(st.st_mode) ? "a directory" : "a device, pipe or socket");
  if (!hg_is_ok(s)) {
    fclose(f);
    return NULL;
  }
  return f;
}

/* ---------------------------------------------------------------- tools and the GPU */

hg_status_t hg_cli_ptxas(const char *ptx, hg_ptxas_report_t *r) {
  if (sandbox) return hg_error(HG_ERR_TOOL, "ptxas is not run in the sandbox");
  return hg_ptxas_check(ptx, r);
}

const char *hg_cli_ptxas_verdict(const char *ptx, hg_status_t *s, hg_ptxas_report_t *rep) {
  memset(rep, 0, sizeof *rep);
  if (!hg_is_ok(s)) return "not run";
  *s = hg_cli_ptxas(ptx, rep);
  return hg_is_ok(s) ? "ok" : s->code == HG_ERR_TOOL ? "not available" : "REJECTED";
}

hg_status_t hg_cli_rt_open(int ordinal, hg_rt_t **rt) {
  *rt = NULL;
  if (sandbox) return hg_error(HG_ERR_NO_DRIVER, "no GPU is opened in the sandbox");
  return hg_rt_open(ordinal, rt);
}
