/* hopgen layout: CuTe layout algebra from the command line. Parsing and printing only;
 * every operation is hg_layout_op in the library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hopgen/layout.h"

#define RESULT_BYTES 8192

static void usage(FILE *f) {
  fprintf(f, "usage: hopgen layout eval [--explain] [--json] < vectors.tsv\n"
             "       hopgen layout show LAYOUT [--svg FILE] [--tv TVLAYOUT] [--json]\n"
             "       hopgen layout OP ARGS... [--json]   (hopgen layout OP --help)\n\n"
             "Notation: 8, (4,8), ((2,4),8); a layout SHAPE:STRIDE like (4,8):(1,4); a tiler is\n"
             "a layout or a by-mode list [4:1,_,(2,2):(1,4)]; a swizzled layout\n"
             "'Sw<3,4,3> o 0 o (8,64):(64,1)'. CuTe's printed forms (_4, spaces) are accepted.\n"
             "--json prints the result as a JSON object (eval: one per input line).\n\n"
             "  eval      read 'op<TAB>arg1<TAB>arg2[<TAB>expected]' lines (the golden vector\n"
             "            format) and write them with the 4th column replaced by hopgen's\n"
             "            result or 'error'; comment lines pass through\n"
             "  show      print the layout as a table (rows: mode 0), or write an SVG\n\n"
             "Operations:\n");
  for (int i = 0; hg_layout_op_info(i); i++) {
    const hg_layout_op_info_t *op = hg_layout_op_info(i);
    fprintf(f, "  %-19s %-26s %s\n", op->name, op->usage, op->summary);
  }
}

static void json_args(FILE *f, int n, char **args) {
  fprintf(f, "\"args\": [");
  for (int i = 0; i < n; i++) {
    fprintf(f, "%s\"", i ? ", " : "");
    /* hg_cli_json_str writes "name": "value"; the array wants the value alone */
    for (const unsigned char *p = (const unsigned char *)args[i]; *p; p++) {
      if (*p == '"' || *p == '\\')
        fprintf(f, "\\%c", *p);
      else if (*p < 0x20 || *p == 0x7f)
        fprintf(f, "\\u%04x", *p);
      else
        fputc(*p, f);
    }
    fputc('"', f);
  }
  fprintf(f, "], ");
}

/* The end of an operation's JSON object: "ok" and the result, or the error. */
static void json_outcome(FILE *f, hg_status_t s, const char *result) {
  fprintf(f, "\"ok\": %s, ", hg_is_ok(&s) ? "true" : "false");
  if (hg_is_ok(&s)) {
    hg_cli_json_str(f, "result", result, "}\n");
  } else {
    hg_cli_json_error(f, hg_code_name(s.code), s.msg);
    fprintf(f, "}\n");
  }
}

/* ---------------------------------------------------------------- eval */

static const char eval_help[] =
    "usage: hopgen layout eval [--explain] [--json] < vectors.tsv > results.tsv\n\n"
    "Each line 'op<TAB>arg1<TAB>arg2[<TAB>expected]' is written back with the 4th column\n"
    "replaced by hopgen's result in canonical notation, or 'error' where the input is\n"
    "inadmissible. Lines starting with '#' and empty lines pass through. '_' in an argument\n"
    "column means unused. Every input line gives one output line: a malformed line (fewer\n"
    "than 3 or more than 4 columns) is written with its columns, padded to 3, and 'error';\n"
    "it is reported on stderr and the exit status is then 1. --explain writes the reason for\n"
    "each 'error' to stderr as 'hopgen: line N: <sentence>'. --json writes one JSON object\n"
    "per input line instead.\n";

enum { EVAL_EXPLAIN, EVAL_JSON };
static const hg_cli_opt_t eval_opts[] = {
    {EVAL_EXPLAIN, "--explain", NULL, HG_CLI_FLAG, 0},
    {EVAL_JSON, "--json", NULL, HG_CLI_JSON, 0},
};

/* One input line (NUL-terminated, len bytes without its newline) as one output line. */
static int eval_line(char *line, size_t len, long lineno, bool explain, bool json) {
  static char result[RESULT_BYTES];
  if (len == 0 || line[0] == '#') {
    if (json) {
      printf("{\"line\": %ld, ", lineno);
      hg_cli_json_str(stdout, "comment", line, "}\n");
    } else {
      printf("%s\n", line);
    }
    return 0;
  }
  char *field[5] = {NULL, NULL, NULL, NULL, NULL};
  int nf = 0;
  for (char *p = line; nf < 5;) {
    field[nf++] = p;
    char *tab = strchr(p, '\t');
    if (!tab) break;
    *tab = '\0';
    p = tab + 1;
  }
  const char *malformed = NULL;
  if (strlen(line) < len && nf == 1)
    malformed = "the line holds a NUL byte";
  else if (nf < 3)
    malformed = "expected op<TAB>arg1<TAB>arg2[<TAB>expected]: fewer than 3 columns";
  else if (nf > 4)
    malformed = "expected op<TAB>arg1<TAB>arg2[<TAB>expected]: more than 4 columns";
  hg_status_t s = hg_ok();
  if (malformed) {
    fprintf(stderr, "hopgen: line %ld: %s\n", lineno, malformed);
    s = hg_error(HG_ERR_PARSE, "%s", malformed);
  } else {
    const char *args[2] = {field[1], field[2]};
    s = hg_layout_op(field[0], 2, args, result, sizeof result);
    if (!hg_is_ok(&s) && explain) fprintf(stderr, "hopgen: line %ld: %s\n", lineno, s.msg);
  }
  if (json) {
    printf("{\"line\": %ld, ", lineno);
    hg_cli_json_str(stdout, "op", field[0], ", ");
    json_args(stdout, nf > 3 ? 2 : nf - 1, field + 1);
    json_outcome(stdout, s, result);
  } else {
    /* the first three columns (padded), then the result */
    printf("%s\t%s\t%s\t%s\n", field[0], nf > 1 ? field[1] : "", nf > 2 ? field[2] : "",
           hg_is_ok(&s) ? result : "error");
  }
  return malformed ? 1 : 0;
}

static int cmd_eval(int argc, char **argv) {
  hg_cli_args_t a;
  hg_cli_args_init(&a, "layout eval", eval_opts, 2, argc, argv);
  if (a.help) {
    fputs(eval_help, stdout);
    return 0;
  }
  a.max_operands = 0; /* the vectors come on standard input */
  bool explain = false, json = false;
  const char *v;
  for (int id; (id = hg_cli_next(&a, &v)) != HG_CLI_END;) {
    if (id == HG_CLI_ERROR) return hg_cli_usage(&a);
    if (id == EVAL_EXPLAIN) explain = true;
    if (id == EVAL_JSON) json = true;
  }
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  long lineno = 0;
  int bad_lines = 0;
  while ((len = getline(&line, &cap, stdin)) >= 0) {
    lineno++;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
    bad_lines += eval_line(line, (size_t)len, lineno, explain, json);
  }
  free(line);
  if (ferror(stdin)) {
    clearerr(stdin);
    return hg_cli_fail(hg_error(HG_ERR_IO, "layout eval: reading standard input failed"));
  }
  if (bad_lines)
    fprintf(stderr, "hopgen: layout eval: %d malformed line(s), written as 'error'\n", bad_lines);
  if (json) hg_cli_json_printed();
  return bad_lines ? 1 : 0;
}

/* ---------------------------------------------------------------- show */

static const char show_help[] =
    "usage: hopgen layout show LAYOUT [--svg FILE] [--tv TVLAYOUT] [--json]\n\n"
    "Print LAYOUT (plain or swizzled) as a table like cute::print_layout: rows are mode 0,\n"
    "columns the remaining modes. --svg writes a picture instead (cells coloured by value;\n"
    "'-': standard output); with --tv, a (thread,value) -> index layout into LAYOUT's\n"
    "domain, cells are labelled T<thread>V<value> and coloured by thread. --json prints\n"
    "{\"layout\", \"table\"} (or the SVG file's name) as one JSON object.\n";

enum { SHOW_SVG, SHOW_TV, SHOW_JSON };
static const hg_cli_opt_t show_opts[] = {
    {SHOW_SVG, "--svg", NULL, HG_CLI_VALUE, 0},
    {SHOW_TV, "--tv", NULL, HG_CLI_VALUE, 0},
    {SHOW_JSON, "--json", NULL, HG_CLI_JSON, 0},
};

static int cmd_show(int argc, char **argv) {
  hg_cli_args_t a;
  hg_cli_args_init(&a, "layout show", show_opts, 3, argc, argv);
  if (a.help) {
    fputs(show_help, stdout);
    return 0;
  }
  a.max_operands = 1;
  const char *layout_text = NULL, *svg = NULL, *tv_text = NULL, *v;
  bool json = false;
  for (int id; (id = hg_cli_next(&a, &v)) != HG_CLI_END;) {
    if (id == HG_CLI_ERROR) return hg_cli_usage(&a);
    if (id == SHOW_SVG) svg = v;
    if (id == SHOW_TV) tv_text = v;
    if (id == SHOW_JSON) json = true;
    if (id == HG_CLI_OPERAND) layout_text = v;
  }
  if (!layout_text) return hg_cli_usagef(&a, "missing LAYOUT");
  if (tv_text && !svg) return hg_cli_usagef(&a, "--tv labels the SVG picture; give --svg FILE too");
  if (json && !strcmp(svg ? svg : "", "-"))
    return hg_cli_usagef(&a, "--svg - and --json would both write standard output");
  hg_composed_t c;
  hg_status_t s = hg_composed_parse(layout_text, &c);
  if (!hg_is_ok(&s)) return hg_cli_fail(s);
  hg_layout_t tv;
  if (tv_text) {
    s = hg_layout_parse(tv_text, &tv);
    if (!hg_is_ok(&s)) return hg_cli_fail(hg_status_wrap(s, "--tv: "));
  }
  char canon[RESULT_BYTES];
  hg_composed_print(&c, canon, sizeof canon);
  if (!svg) {
    if (!json) {
      s = hg_layout_show(&c, stdout);
      return hg_is_ok(&s) ? 0 : hg_cli_fail(s);
    }
    /* The table into memory, then one JSON object. */
    char *table = NULL;
    size_t tlen = 0;
    FILE *mem = open_memstream(&table, &tlen);
    if (!mem) return hg_cli_fail(hg_error(HG_ERR_NOMEM, "no memory for the table"));
    s = hg_layout_show(&c, mem);
    if (fclose(mem) != 0 && hg_is_ok(&s)) s = hg_error(HG_ERR_NOMEM, "no memory for the table");
    if (hg_is_ok(&s)) {
      printf("{\"command\": \"layout show\", \"ok\": true, ");
      hg_cli_json_str(stdout, "layout", canon, ", ");
      hg_cli_json_str(stdout, "table", table, "}\n");
      hg_cli_json_printed();
    }
    free(table);
    return hg_is_ok(&s) ? 0 : hg_cli_fail(s);
  }
  FILE *f = hg_cli_open_write(svg, &s);
  if (!f) return hg_cli_fail(s);
  s = hg_layout_svg(&c, tv_text ? &tv : NULL, f);
  hg_status_t w = hg_cli_close_write(f, svg);
  if (hg_is_ok(&s)) s = w;
  if (!hg_is_ok(&s)) return hg_cli_fail(s);
  if (json) {
    printf("{\"command\": \"layout show\", \"ok\": true, ");
    hg_cli_json_str(stdout, "layout", canon, ", ");
    hg_cli_json_str(stdout, "svg", svg, "}\n");
    hg_cli_json_printed();
  } else if (strcmp(svg, "-") != 0) {
    printf("wrote %s\n", svg);
  }
  return 0;
}

/* ---------------------------------------------------------------- operations */

enum { OP_JSON };
static const hg_cli_opt_t op_opts[] = {{OP_JSON, "--json", NULL, HG_CLI_JSON, 0}};

static int cmd_op(const hg_layout_op_info_t *info, int argc, char **argv) {
  char command[64];
  snprintf(command, sizeof command, "layout %s", info->name);
  hg_cli_args_t a;
  hg_cli_args_init(&a, command, op_opts, 1, argc, argv);
  if (a.help) {
    printf("usage: hopgen layout %s %s [--json]\n\n%s\n", info->name, info->usage, info->summary);
    return 0;
  }
  enum { MAX_OPERANDS = 8 };
  char *args[MAX_OPERANDS];
  int nargs = 0;
  bool json = false;
  const char *v;
  for (int id; (id = hg_cli_next(&a, &v)) != HG_CLI_END;) {
    if (id == HG_CLI_ERROR) return hg_cli_usage(&a);
    if (id == OP_JSON) json = true;
    if (id == HG_CLI_OPERAND && nargs < MAX_OPERANDS) args[nargs] = (char *)v;
    if (id == HG_CLI_OPERAND) nargs++;
  }
  if (nargs < info->min_args || nargs > info->max_args || nargs > MAX_OPERANDS)
    return hg_cli_usagef(&a, "layout %s takes %s (%d operand(s) given)", info->name, info->usage,
                         nargs);
  static char result[RESULT_BYTES];
  hg_status_t s = hg_layout_op(info->name, nargs, (const char *const *)args, result, sizeof result);
  if (!json) {
    if (!hg_is_ok(&s)) return hg_cli_fail(s);
    printf("%s\n", result);
    return 0;
  }
  printf("{\"command\": \"layout\", ");
  hg_cli_json_str(stdout, "op", info->name, ", ");
  json_args(stdout, nargs, args);
  json_outcome(stdout, s, result);
  hg_cli_json_printed();
  return hg_is_ok(&s) ? 0 : hg_cli_fail(s);
}

int hg_cmd_layout(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "hopgen: layout: missing operation (hopgen layout --help)\n");
    return 2;
  }
  const char *op = argv[1];
  if (!strcmp(op, "--help") || !strcmp(op, "-h") || !strcmp(op, "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(op, "eval")) return cmd_eval(argc - 1, argv + 1);
  if (!strcmp(op, "show")) return cmd_show(argc - 1, argv + 1);
  for (int i = 0; hg_layout_op_info(i); i++)
    if (!strcmp(hg_layout_op_info(i)->name, op))
      return cmd_op(hg_layout_op_info(i), argc - 1, argv + 1);
  fprintf(stderr, "hopgen: unknown layout operation '%s' (hopgen layout --help lists them)\n", op);
  return 2;
}
