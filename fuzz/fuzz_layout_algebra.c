/* libFuzzer target: every layout operation on fuzzed operands.
 *
 * Input: up to four lines, "A\nB\nCOORD\nN": A a layout (possibly swizzled), B a tiler or
 * layout, COORD a coordinate, N an integer. Lines that do not parse fall back to fixed
 * values so that the operations always run. Every result must be a well-formed layout
 * that prints and parses back to itself; coalesce must keep the function. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hopgen/layout.h"

#define MAX_INPUT 4096
/* Functional checks and pictures walk the domain; keep them cheap. */
#define MAX_WALK 4096
#define MAX_PICTURE 256

static void check(int cond) {
  if (!cond) __builtin_trap();
}

static int ok(hg_status_t s) {
  return s.code == HG_OK;
}

static void roundtrip(const hg_layout_t *l) {
  char a[8192], b[8192];
  hg_layout_t back;
  int n = hg_layout_print(l, a, sizeof a);
  check(n > 0 && (size_t)n < sizeof a);
  check(ok(hg_layout_parse(a, &back)));
  hg_layout_print(&back, b, sizeof b);
  check(strcmp(a, b) == 0);
}

/* A successful operation must have produced a layout that survives print/parse. */
static void result(hg_status_t s, const hg_layout_t *out) {
  if (ok(s))
    roundtrip(out);
  else
    check(s.msg[0] != '\0'); /* every failure carries a sentence */
}

static void walk_equal(const hg_layout_t *x, const hg_layout_t *y) {
  int64_t n;
  if (!ok(hg_size(x, &n)) || n > MAX_WALK) return;
  for (int64_t i = 0; i < n; i++) {
    int64_t vx, vy;
    hg_status_t sx = hg_layout_eval(x, i, &vx), sy = hg_layout_eval(y, i, &vy);
    if (ok(sx) && ok(sy)) check(vx == vy);
  }
}

static char *next_line(char **p) {
  if (!*p) return NULL;
  char *line = *p, *nl = strchr(line, '\n');
  if (nl) {
    *nl = '\0';
    *p = nl + 1;
  } else {
    *p = NULL;
  }
  return line;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > MAX_INPUT) return 0;
  char text[MAX_INPUT + 1];
  memcpy(text, data, size);
  text[size] = '\0';
  char *p = text;
  const char *la = next_line(&p), *lb = next_line(&p), *lc = next_line(&p), *ln = next_line(&p);

  hg_composed_t ca;
  if (!la || !ok(hg_composed_parse(la, &ca))) {
    hg_layout_t d = hg_layout_1d(8, 1);
    ca = hg_composed_from_layout(&d);
  }
  hg_layout_t a = ca.layout, b, r, r2;
  hg_tiler_t t;
  if (!lb || !ok(hg_tiler_parse(lb, &t))) {
    b = hg_layout_1d(2, 1);
    t = hg_tiler_layout(&b);
  }
  b = t.rank == 0 ? t.mode[0] : (t.skip[0] ? hg_layout_1d(2, 1) : t.mode[0]);
  hg_tuple_t c;
  if (!lc || !ok(hg_tuple_parse(lc, &c))) c = hg_int(1);
  int64_t n = 3;
  if (ln) {
    hg_tuple_t nt;
    if (ok(hg_tuple_parse(ln, &nt)) && hg_is_int(&nt)) n = nt.v[0];
  }

  int64_t v, off;
  hg_status_t s;
  s = hg_size(&a, &v);
  s = hg_cosize(&a, &v);
  (void)hg_layout_rank(&a);
  (void)hg_layout_depth(&a);
  s = hg_coalesce(&a, &r);
  result(s, &r);
  if (ok(s)) walk_equal(&a, &r);
  s = hg_coalesce_profile(&a, &c, &r);
  result(s, &r);
  s = hg_filter(&a, &r);
  result(s, &r);
  s = hg_composition(&a, &b, &r);
  result(s, &r);
  s = hg_composition_tiler(&a, &t, &r);
  result(s, &r);
  s = hg_complement(&a, n, &r);
  result(s, &r);
  s = hg_complement(&a, 1, &r);
  result(s, &r);
  s = hg_right_inverse(&a, &r);
  result(s, &r);
  s = hg_left_inverse(&a, &r);
  result(s, &r);
  hg_status_t (*tiler_ops[])(const hg_layout_t *, const hg_tiler_t *, hg_layout_t *) = {
      hg_logical_divide,  hg_zipped_divide,  hg_tiled_divide,  hg_flat_divide,
      hg_logical_product, hg_zipped_product, hg_tiled_product, hg_flat_product};
  for (size_t i = 0; i < sizeof tiler_ops / sizeof tiler_ops[0]; i++) {
    s = tiler_ops[i](&a, &t, &r);
    result(s, &r);
  }
  s = hg_blocked_product(&a, &b, &r);
  result(s, &r);
  s = hg_raked_product(&a, &b, &r);
  result(s, &r);
  s = hg_crd2idx(&a, &c, &v);
  s = hg_layout_eval(&a, n, &v);
  hg_tuple_t crd;
  s = hg_idx2crd(&a.shape, n, &crd);
  if (ok(s)) {
    char buf[4096];
    hg_tuple_print(&crd, buf, sizeof buf);
  }
  s = hg_slice(&a, &c, &r, &off);
  result(s, &r);
  s = hg_local_tile(&a, &t, &c, &r, &off);
  result(s, &r);
  s = hg_local_partition(&a, &b, n, &r, &off);
  result(s, &r);
  s = hg_max_common_vector(&a, &b, &v);
  s = hg_max_common_layout(&a, &b, &r);
  result(s, &r);
  s = hg_upcast(&a, n, &r);
  result(s, &r);
  s = hg_downcast(&a, n, &r);
  result(s, &r);
  s = hg_recast_layout(&a, (int)(n & 0xff), 16, &r);
  result(s, &r);
  hg_layout_t parts[2] = {a, b};
  s = hg_layout_concat(2, parts, &r);
  result(s, &r);
  s = hg_layout_append(&a, &b, &r2);
  result(s, &r2);
  s = hg_make_layout_col_major(&a.shape, &r);
  result(s, &r);
  s = hg_make_layout_row_major(&a.shape, &r);
  result(s, &r);
  s = hg_make_ordered_layout(&a.shape, &c, &r);
  result(s, &r);

  /* Swizzles and composed layouts. */
  (void)hg_swizzle_apply(ca.sw, n);
  s = hg_composed_eval(&ca, &c, &v);
  hg_composed_t cr;
  s = hg_composed_composition(&ca, &b, &cr);
  if (ok(s)) roundtrip(&cr.layout);

  /* Pictures of small layouts, written to nowhere. */
  if (ok(hg_size(&a, &v)) && v <= MAX_PICTURE) {
    FILE *null = fopen("/dev/null", "w");
    if (null) {
      s = hg_layout_show(&ca, null);
      s = hg_layout_svg(&ca, NULL, null);
      s = hg_layout_svg(&ca, &b, null);
      fclose(null);
    }
  }
  (void)s;
  return 0;
}
