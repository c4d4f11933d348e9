/* What every hopgen command shares: failure and help conventions, the JSON string writer
 * and the integer parsers, so that all commands read and print alike. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int hg_cli_fail(hg_status_t s) {
  fprintf(stderr, "hopgen: %s\n", s.msg[0] ? s.msg : hg_code_name(s.code));
  return 1;
}

int hg_cli_wants_help(int argc, char **argv) {
  for (int i = 0; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
  return 0;
}

void hg_cli_json_str(FILE *f, const char *name, const char *v, const char *sep) {
  fprintf(f, "\"%s\": \"", name);
  for (const unsigned char *p = (const unsigned char *)(v ? v : ""); *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p == '\n')
      fputs("\\n", f);
    else if (*p < 0x20)
      fprintf(f, "\\u%04x", *p);
    else
      fputc(*p, f);
  }
  fprintf(f, "\"%s", sep);
}

int hg_cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  char *end;
  const long long v = strtoll(s, &end, 0);
  if (end == s || *end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

int hg_cli_parse_list(const char *s, const char *seps, int64_t *out, int cap) {
  int n = 0;
  const char *p = s;
  while (*p) {
    char *end;
    const long long v = strtoll(p, &end, 10);
    if (end == p || n == cap) return -1;
    out[n++] = v;
    p = end;
    if (*p && strchr(seps, *p))
      p++;
    else if (*p)
      return -1;
  }
  return n;
}
