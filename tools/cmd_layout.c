/* hopgen layout: CuTe layout algebra from the command line. Parsing and printing only;
 * every operation is hg_layout_op in the library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hopgen/layout.h"

#define RESULT_BYTES 8192

static void usage(FILE *f) {
  fprintf(f, "usage: hopgen layout eval [--explain] < vectors.tsv\n"
             "       hopgen layout show LAYOUT [--svg FILE] [--tv TVLAYOUT]\n"
             "       hopgen layout OP ARGS...    (hopgen layout OP --help)\n\n"
             "Notation: 8, (4,8), ((2,4),8); a layout SHAPE:STRIDE like (4,8):(1,4); a tiler is\n"
             "a layout or a by-mode list [4:1,_,(2,2):(1,4)]; a swizzled layout\n"
             "'Sw<3,4,3> o 0 o (8,64):(64,1)'. CuTe's printed forms (_4, spaces) are accepted.\n\n"
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

static int eval_usage(FILE *f) {
  fprintf(f, "usage: hopgen layout eval [--explain] < vectors.tsv > results.tsv\n\n"
             "Each line 'op<TAB>arg1<TAB>arg2[<TAB>expected]' is written back with the 4th\n"
             "column replaced by hopgen's result in canonical notation, or 'error' where the\n"
             "input is inadmissible. Lines starting with '#' and empty lines pass through.\n"
             "'_' in an argument column means unused. --explain writes the reason for each\n"
             "'error' to stderr as 'hopgen: line N: <sentence>'.\n");
  return f == stdout ? 0 : 2;
}

static int cmd_eval(int argc, char **argv) {
  int explain = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return eval_usage(stdout);
    if (!strcmp(argv[i], "--explain")) {
      explain = 1;
      continue;
    }
    fprintf(stderr, "hopgen: layout eval: unknown argument '%s'\n", argv[i]);
    return eval_usage(stderr);
  }
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  long lineno = 0;
  int bad_lines = 0;
  char result[RESULT_BYTES];
  while ((len = getline(&line, &cap, stdin)) >= 0) {
    lineno++;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
    if (len == 0 || line[0] == '#') {
      printf("%s\n", line);
      continue;
    }
    char *field[4] = {NULL, NULL, NULL, NULL};
    int nf = 0;
    char *p = line;
    while (nf < 4) {
      field[nf++] = p;
      char *tab = strchr(p, '\t');
      if (!tab) break;
      *tab = '\0';
      p = tab + 1;
    }
    if (nf < 3) {
      fprintf(stderr, "hopgen: line %ld: expected op<TAB>arg1<TAB>arg2[<TAB>expected]\n", lineno);
      bad_lines++;
      continue;
    }
    const char *args[2] = {field[1], field[2]};
    hg_status_t s = hg_layout_op(field[0], 2, args, result, sizeof result);
    if (!hg_is_ok(&s)) {
      if (explain) fprintf(stderr, "hopgen: line %ld: %s\n", lineno, s.msg);
      snprintf(result, sizeof result, "error");
    }
    printf("%s\t%s\t%s\t%s\n", field[0], field[1], field[2], result);
  }
  free(line);
  if (ferror(stdin) || ferror(stdout)) {
    fprintf(stderr, "hopgen: layout eval: reading or writing failed\n");
    return 1;
  }
  return bad_lines ? 1 : 0;
}

static int show_usage(FILE *f) {
  fprintf(f, "usage: hopgen layout show LAYOUT [--svg FILE] [--tv TVLAYOUT]\n\n"
             "Print LAYOUT (plain or swizzled) as a table like cute::print_layout: rows are\n"
             "mode 0, columns the remaining modes. --svg writes a picture instead (cells\n"
             "coloured by value); with --tv, a (thread,value) -> index layout into LAYOUT's\n"
             "domain, cells are labelled T<thread>V<value> and coloured by thread.\n");
  return f == stdout ? 0 : 2;
}

static int cmd_show(int argc, char **argv) {
  const char *layout_text = NULL, *svg = NULL, *tv_text = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return show_usage(stdout);
    if (!strcmp(argv[i], "--svg") || !strcmp(argv[i], "--tv")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "hopgen: layout show: %s needs a value\n", argv[i]);
        return show_usage(stderr);
      }
      if (!strcmp(argv[i], "--svg"))
        svg = argv[++i];
      else
        tv_text = argv[++i];
      continue;
    }
    if (layout_text) {
      fprintf(stderr, "hopgen: layout show: unexpected argument '%s'\n", argv[i]);
      return show_usage(stderr);
    }
    layout_text = argv[i];
  }
  if (!layout_text) {
    fprintf(stderr, "hopgen: layout show: missing LAYOUT\n");
    return show_usage(stderr);
  }
  hg_composed_t c;
  hg_status_t s = hg_composed_parse(layout_text, &c);
  if (!hg_is_ok(&s)) return hg_cli_fail(s);
  hg_layout_t tv;
  if (tv_text) {
    s = hg_layout_parse(tv_text, &tv);
    if (!hg_is_ok(&s)) return hg_cli_fail(s);
    if (!svg) {
      fprintf(stderr, "hopgen: layout show: --tv labels the SVG picture; give --svg FILE too\n");
      return 2;
    }
  }
  if (!svg) {
    s = hg_layout_show(&c, stdout);
    return hg_is_ok(&s) ? 0 : hg_cli_fail(s);
  }
  FILE *f = !strcmp(svg, "-") ? stdout : fopen(svg, "w");
  if (!f) return hg_cli_fail(hg_error(HG_ERR_IO, "cannot open '%s' for writing", svg));
  s = hg_layout_svg(&c, tv_text ? &tv : NULL, f);
  if (f != stdout && fclose(f) != 0 && hg_is_ok(&s))
    s = hg_error(HG_ERR_IO, "writing '%s' failed", svg);
  if (!hg_is_ok(&s)) return hg_cli_fail(s);
  if (f != stdout) printf("wrote %s\n", svg);
  return 0;
}

int hg_cmd_layout(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "hopgen: layout: missing operation\n");
    usage(stderr);
    return 2;
  }
  const char *op = argv[1];
  if (!strcmp(op, "--help") || !strcmp(op, "-h") || !strcmp(op, "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(op, "eval")) return cmd_eval(argc - 1, argv + 1);
  if (!strcmp(op, "show")) return cmd_show(argc - 1, argv + 1);
  const hg_layout_op_info_t *info = NULL;
  for (int i = 0; hg_layout_op_info(i); i++)
    if (!strcmp(hg_layout_op_info(i)->name, op)) info = hg_layout_op_info(i);
  if (!info) {
    fprintf(stderr, "hopgen: unknown layout operation '%s'\n", op);
    usage(stderr);
    return 2;
  }
  if (hg_cli_wants_help(argc - 2, argv + 2)) {
    printf("usage: hopgen layout %s %s\n\n%s\n", info->name, info->usage, info->summary);
    return 0;
  }
  int nargs = argc - 2;
  if (nargs < info->min_args || nargs > info->max_args) {
    fprintf(stderr, "hopgen: layout %s takes %s\nusage: hopgen layout %s %s\n", op, info->usage,
            info->name, info->usage);
    return 2;
  }
  char result[RESULT_BYTES];
  hg_status_t s = hg_layout_op(op, nargs, (const char *const *)(argv + 2), result, sizeof result);
  if (!hg_is_ok(&s)) return hg_cli_fail(s);
  printf("%s\n", result);
  return 0;
}
