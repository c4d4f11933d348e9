/* Small helpers for the layout tests: parse-or-fail and print-to-static-buffer. */
#ifndef HG_LAYOUT_TEST_UTIL_H
#define HG_LAYOUT_TEST_UTIL_H

#include "hg_test.h"
#include "hopgen/layout.h"

static inline hg_layout_t L(const char *text) {
  hg_layout_t l = hg_layout_1d(1, 0);
  hg_status_t s = hg_layout_parse(text, &l);
  if (!hg_is_ok(&s)) HG_FAIL("parse %s: %s", text, s.msg);
  return l;
}

static inline hg_tuple_t T(const char *text) {
  hg_tuple_t t = hg_int(0);
  hg_status_t s = hg_tuple_parse(text, &t);
  if (!hg_is_ok(&s)) HG_FAIL("parse %s: %s", text, s.msg);
  return t;
}

static inline hg_tiler_t TL(const char *text) {
  hg_tiler_t t = {0};
  hg_status_t s = hg_tiler_parse(text, &t);
  if (!hg_is_ok(&s)) HG_FAIL("parse tiler %s: %s", text, s.msg);
  return t;
}

/* Pointers to parsed values in rotating storage, for passing literals to the API. */
static inline const hg_layout_t *LP(const char *text) {
  static hg_layout_t bufs[8];
  static int k;
  hg_layout_t *p = &bufs[k++ & 7];
  *p = L(text);
  return p;
}

static inline const hg_tuple_t *TP(const char *text) {
  static hg_tuple_t bufs[8];
  static int k;
  hg_tuple_t *p = &bufs[k++ & 7];
  *p = T(text);
  return p;
}

/* Printed layout in one of a few rotating buffers (so two may appear in one check). */
static inline const char *P(const hg_layout_t *l) {
  static char bufs[4][1024];
  static int k;
  char *b = bufs[k++ & 3];
  hg_layout_print(l, b, 1024);
  return b;
}

static inline const char *PT(const hg_tuple_t *t) {
  static char bufs[4][1024];
  static int k;
  char *b = bufs[k++ & 3];
  hg_tuple_print(t, b, 1024);
  return b;
}

/* Run a named operation (same entry as the CLI) and return its text or "error: <msg>". */
static inline const char *OP(const char *op, int argc, const char *a0, const char *a1,
                             const char *a2) {
  static char bufs[4][2048];
  static int k;
  char *b = bufs[k++ & 3];
  const char *args[3] = {a0, a1, a2};
  hg_status_t s = hg_layout_op(op, argc, args, b, 2048);
  if (!hg_is_ok(&s)) snprintf(b, 2048, "error: %s", s.msg);
  return b;
}

#endif
