/* Nested by-mode tilers ([[2:1,3:1],4:1], [(2,2):(1,2),_], tuples of sizes): the parser and
 * printer, hand-derived results for the operations pycute lacks (flat_divide, local_tile),
 * and algebraic properties over random layouts: a by-mode tiler acts mode by mode, a nested
 * list acts on the sub-modes as the same operation would on that mode alone. (The
 * pycute-computed corpus is tests/vectors/layout_nested_tilers.tsv, run by test_vectors.) */
#include <string.h>

#include "layout_test_util.h"

static const char *PTL(const hg_tiler_t *t) {
  static char bufs[4][1024];
  static int k;
  char *b = bufs[k++ & 3];
  hg_tiler_print(t, b, 1024);
  return b;
}

static void test_parse_print(void) {
  hg_tiler_t t = TL("[ [2:1, 3:1] , 4:1 ]");
  CHECK_EQ(t.rank, 2);
  CHECK_EQ(t.sub[0], 2); /* preorder: list(2), 2:1, 3:1, 4:1 */
  CHECK_STR(P(&t.mode[2]), "3:1");
  CHECK_STR(PTL(&t), "[[2:1,3:1],4:1]");
  /* A tuple of sizes is a by-mode list at every level (pycute's tuple tilers). */
  t = TL("((2,2),_,8)");
  CHECK_STR(PTL(&t), "[[2:1,2:1],_,8:1]");
  t = TL("[(2,2),(3,2):(1,0)]");
  CHECK_STR(PTL(&t), "[[2:1,2:1],(3,2):(1,0)]");
  t = TL("[[_,[2,(3,4)]],(2,2):(1,2)]");
  CHECK_STR(PTL(&t), "[[_,[2:1,[3:1,4:1]]],(2,2):(1,2)]");
  hg_tiler_t again = TL(PTL(&t));
  CHECK_STR(PTL(&again), PTL(&t));
  hg_tuple_t shape = T("((2,(3,_)),4)");
  CHECK_OK(hg_tiler_shape(&shape, &t));
  CHECK_STR(PTL(&t), "[[2:1,[3:1,_]],4:1]");
  /* 16 nodes fit: a list node counts as one. */
  t = TL("[[1,1,1,1,1,1,1],[1,1,1,1,1,1,1]]");
  CHECK_EQ(t.rank, 2);
  /* A hand-built tiler with an inconsistent node is refused, not read past. */
  hg_tiler_t bad = TL("[[2:1,3:1],4:1]");
  bad.sub[0] = 15; /* its slots would run into unused (zeroed) nodes */
  hg_layout_t r;
  CHECK_ERR(hg_logical_divide(LP("((4,6),8):((1,4),24)"), &bad, &r), HG_ERR_INVALID, "malformed");
  bad.sub[0] = 2;
  bad.rank = 17;
  CHECK_ERR(hg_logical_divide(LP("((4,6),8):((1,4),24)"), &bad, &r), HG_ERR_CAPACITY,
            "HG_TILER_MAX");
  bad.rank = 2;
  bad.skip[0] = true;
  CHECK_ERR(hg_logical_divide(LP("((4,6),8):((1,4),24)"), &bad, &r), HG_ERR_INVALID, "malformed");
}

static void test_hand_derived(void) {
  hg_layout_t a = L("((4,6),8):((1,4),24)"), r;
  /* [[2:1,3:1],4:1]: mode (0,0) 4:1 / 2:1 = (2,2):(1,2); mode (0,1) 6:4 / 3:1: comp(3:1, 6)
   * = 2:3, 6:4 o (3,2):(1,3) = (3,2):(4,12); mode 1 8:24 / 4:1 = (4,2):(24,96). */
  hg_tiler_t t = TL("[[2:1,3:1],4:1]");
  CHECK_OK(hg_logical_divide(&a, &t, &r));
  CHECK_STR(P(&r), "(((2,2),(3,2)),(4,2)):(((1,2),(4,12)),(24,96))");
  /* zipped: tiles ((2,3),4), rests ((2,2),2). tiled unpacks the rests, flat both halves. */
  CHECK_OK(hg_zipped_divide(&a, &t, &r));
  CHECK_STR(P(&r), "(((2,3),4),((2,2),2)):(((1,4),24),((2,12),96))");
  CHECK_OK(hg_tiled_divide(&a, &t, &r));
  CHECK_STR(P(&r), "(((2,3),4),(2,2),2):(((1,4),24),(2,12),96)");
  CHECK_OK(hg_flat_divide(&a, &t, &r));
  CHECK_STR(P(&r), "((2,3),4,(2,2),2):((1,4),24,(2,12),96)");
  /* local_tile at rest coordinate ((1,1),1): offset 1*2 + 1*12 + 1*96 = 110; the tile is
   * ((2,3),4):((1,4),24). A 1-D coordinate 3 in the (2,2) rest mode is (1,1) too. */
  int64_t off = -1;
  CHECK_OK(hg_local_tile(&a, &t, TP("((1,1),1)"), &r, &off));
  CHECK_STR(P(&r), "((2,3),4):((1,4),24)");
  CHECK_EQ(off, 110);
  CHECK_OK(hg_local_tile(&a, &t, TP("(3,1)"), &r, &off));
  CHECK_EQ(off, 110);
  /* composition by a nested list: (4:1 o 2:2, 6:4 o 3:2) = (2:2, 3:8), mode 1 kept. */
  t = TL("[[2:2,3:2]]");
  CHECK_OK(hg_composition_tiler(&a, &t, &r));
  CHECK_STR(P(&r), "((2,3),8):((2,8),24)");
  /* A list may not have more slots than the mode it tiles. */
  t = TL("[[2,2,2]]");
  CHECK_ERR(hg_logical_divide(&a, &t, &r), HG_ERR_INVALID, "the tiler has 3 modes");
  t = TL("[_,[2,2]]"); /* mode 1 is the integer 8: rank 1 < 2 */
  CHECK_ERR(hg_zipped_divide(&a, &t, &r), HG_ERR_INVALID, "the tiler has 2 modes");
}

/* ---------------------------------------------------------------- properties */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static int rnd(int n) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (int)(rng % (uint64_t)n);
}

/* A random compact layout with nested modes: sizes from {1,2,3,4,6,8}. */
static hg_layout_t random_layout(void) {
  static const int sizes[] = {1, 2, 3, 4, 6, 8};
  char text[256], *p = text;
  int r = 1 + rnd(3);
  p += sprintf(p, "(");
  for (int i = 0; i < r; i++) {
    if (i) p += sprintf(p, ",");
    if (rnd(2)) {
      int k = 1 + rnd(2);
      p += sprintf(p, "(");
      for (int j = 0; j < k; j++) p += sprintf(p, j ? ",%d" : "%d", sizes[rnd(6)]);
      p += sprintf(p, ")");
    } else {
      p += sprintf(p, "%d", sizes[rnd(6)]);
    }
  }
  p += sprintf(p, ")");
  hg_tuple_t s = T(text);
  hg_layout_t l;
  CHECK_OK(hg_make_layout_col_major(&s, &l));
  return l;
}

/* A random tiler for l: per mode `_`, a size, or for a tuple mode a nested list. Also the
 * slot of each mode as a tiler of its own (rank 0 for a size, a list otherwise). */
static hg_tiler_t random_tiler(const hg_layout_t *l, int *count, char slot[][128]) {
  char text[512], *p = text;
  int r = hg_layout_rank(l);
  *count = 1 + rnd(r);
  p += sprintf(p, "[");
  for (int i = 0; i < *count; i++) {
    hg_layout_t m;
    CHECK_OK(hg_layout_mode(l, i, &m));
    char *q = slot[i];
    if (!hg_is_int(&m.shape) && rnd(3)) {
      int k = 1 + rnd(hg_layout_rank(&m));
      q += sprintf(q, "[");
      for (int j = 0; j < k; j++) q += sprintf(q, j ? ",%s" : "%s", rnd(5) ? "2" : "_");
      sprintf(q, "]");
    } else {
      sprintf(q, "%d", 1 + rnd(3));
    }
    p += sprintf(p, i ? ",%s" : "%s", slot[i]);
  }
  sprintf(p, "]");
  return TL(text);
}

static void test_properties(void) {
  int checked = 0;
  for (int iter = 0; iter < 3000; iter++) {
    hg_layout_t a = random_layout(), whole, zip, part, m, half;
    char slot[8][128];
    int count;
    hg_tiler_t t = random_tiler(&a, &count, slot);
    hg_status_t s = hg_logical_divide(&a, &t, &whole);
    hg_status_t sz = hg_zipped_divide(&a, &t, &zip);
    CHECK_EQ(s.code, sz.code);
    if (!hg_is_ok(&s)) continue;
    for (int i = 0; i < hg_layout_rank(&a); i++) {
      CHECK_OK(hg_layout_mode(&a, i, &m));
      hg_layout_t got;
      CHECK_OK(hg_layout_mode(&whole, i, &got));
      if (i >= count || !strcmp(slot[i], "_")) {
        CHECK_STR(P(&got), P(&m));
        continue;
      }
      /* logical_divide by mode: mode i of the result is mode i divided by slot i alone. */
      hg_tiler_t ti = TL(slot[i]);
      CHECK_OK(hg_logical_divide(&m, &ti, &part));
      CHECK_STR(P(&got), P(&part));
      /* zipped: its tile goes to mode (0,i), its rest to (1,i), for a nested slot too. */
      hg_layout_t zi;
      CHECK_OK(hg_zipped_divide(&m, &ti, &part));
      CHECK_OK(hg_layout_mode(&zip, 0, &half));
      CHECK_OK(hg_layout_mode(&half, i, &zi));
      hg_layout_t pi;
      CHECK_OK(hg_layout_mode(&part, 0, &pi));
      CHECK_STR(P(&zi), P(&pi));
      CHECK_OK(hg_layout_mode(&zip, 1, &half));
      CHECK_OK(hg_layout_mode(&half, i, &zi));
      CHECK_OK(hg_layout_mode(&part, 1, &pi));
      CHECK_STR(P(&zi), P(&pi));
      checked++;
    }
    /* A divide covers the whole layout (rounded up to whole tiles), and agrees with it
     * where the layout is defined: the first size(a) indices map alike. */
    int64_t n0, n1, x, y;
    CHECK_OK(hg_size(&a, &n0));
    CHECK_OK(hg_size(&whole, &n1));
    CHECK(n1 >= n0);
    for (int64_t k = 0; k < n0; k += 1 + n0 / 16) {
      CHECK_OK(hg_layout_eval(&a, k, &x));
      CHECK_OK(hg_layout_eval(&whole, k, &y));
      if (n1 == n0) CHECK_EQ(x, y);
    }
  }
  CHECK(checked > 2000);
}

int main(void) {
  HG_RUN(test_parse_print);
  HG_RUN(test_hand_derived);
  HG_RUN(test_properties);
  return hg_test_finish();
}
