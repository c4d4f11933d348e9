/* libFuzzer target: the layout notation parsers. Whatever the bytes, parsing must return
 * a status without crashing; whatever parses must print canonically and parse back to the
 * same value (print and parse are inverses on canonical text). Tab-separated input also
 * runs a named operation, "op<TAB>args...", as the CLI does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hopgen/layout.h"

#define MAX_INPUT 4096

static void check(int cond) {
  if (!cond) __builtin_trap();
}

static int ok(hg_status_t s) {
  return s.code == HG_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > MAX_INPUT) return 0;
  char text[MAX_INPUT + 1], out[8192], again[8192];
  memcpy(text, data, size);
  text[size] = '\0';

  hg_tuple_t t = hg_int(0), t2;
  if (ok(hg_tuple_parse(text, &t))) {
    int n = hg_tuple_print(&t, out, sizeof out);
    check(n > 0 && (size_t)n < sizeof out);
    check(ok(hg_tuple_parse(out, &t2)));
    check(hg_tuple_equal(&t, &t2));
  }
  hg_layout_t l = hg_layout_1d(1, 0), l2;
  if (ok(hg_layout_parse(text, &l))) {
    int n = hg_layout_print(&l, out, sizeof out);
    check(n > 0 && (size_t)n < sizeof out);
    check(ok(hg_layout_parse(out, &l2)));
    check(hg_tuple_equal(&l.shape, &l2.shape) && hg_tuple_equal(&l.stride, &l2.stride));
  }
  hg_tiler_t tl, tl2;
  if (ok(hg_tiler_parse(text, &tl))) {
    hg_tiler_print(&tl, out, sizeof out);
    check(ok(hg_tiler_parse(out, &tl2)));
    hg_tiler_print(&tl2, again, sizeof again);
    check(strcmp(out, again) == 0);
  }
  hg_composed_t c, c2;
  if (ok(hg_composed_parse(text, &c))) {
    hg_composed_print(&c, out, sizeof out);
    check(ok(hg_composed_parse(out, &c2)));
    hg_composed_print(&c2, again, sizeof again);
    check(strcmp(out, again) == 0);
  }
  /* The named operations on text, as `hopgen layout OP ARGS` and `eval` run them:
   * "op<TAB>arg1<TAB>arg2<TAB>arg3". */
  char *field[4];
  int nf = 0;
  for (char *q = text; nf < 4;) {
    field[nf++] = q;
    char *tab = strchr(q, '\t');
    if (!tab) break;
    *tab = '\0';
    q = tab + 1;
  }
  if (nf >= 2) {
    hg_status_t s =
        hg_layout_op(field[0], nf - 1, (const char *const *)(field + 1), out, sizeof out);
    check(ok(s) ? strlen(out) < sizeof out : s.msg[0] != '\0');
  }
  /* Printing into tiny buffers must stay inside them. */
  char tiny[3];
  hg_tuple_print(&t, tiny, sizeof tiny);
  hg_layout_print(&l, tiny, 1);
  return 0;
}
