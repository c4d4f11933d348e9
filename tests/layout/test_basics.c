/* Tuples, layout construction, coordinates and slices, the notation (including CuTe's and
 * pycute's printed forms) and its errors. */
#include <string.h>

#include "layout_test_util.h"

static void test_tuples(void) {
  hg_tuple_t t = T("((2,3),4)"), m, f;
  CHECK_EQ(hg_tuple_rank(&t), 2);
  CHECK_EQ(hg_tuple_depth(&t), 2);
  CHECK_EQ(hg_tuple_leaves(&t), 3);
  CHECK(!hg_is_int(&t));
  CHECK_OK(hg_tuple_get(&t, 0, &m));
  CHECK_STR(PT(&m), "(2,3)");
  CHECK_OK(hg_tuple_get(&t, 1, &m));
  CHECK_STR(PT(&m), "4");
  CHECK_ERR(hg_tuple_get(&t, 2, &m), HG_ERR_INVALID, "mode 2 of a rank-2 tuple");
  int64_t p;
  CHECK_OK(hg_tuple_product(&t, &p));
  CHECK_EQ(p, 24);
  CHECK_OK(hg_tuple_flatten(&t, &f));
  CHECK_STR(PT(&f), "(2,3,4)");
  hg_tuple_t five = hg_int(5);
  CHECK_OK(hg_tuple_append(&t, &five));
  CHECK_STR(PT(&t), "((2,3),4,5)");
  /* An integer becomes a pair when something is appended. */
  hg_tuple_t i = hg_int(7), e = hg_int(8);
  CHECK(hg_is_int(&i));
  CHECK_EQ(hg_tuple_rank(&i), 1);
  CHECK_EQ(hg_tuple_depth(&i), 0);
  CHECK_OK(hg_tuple_append(&i, &e));
  CHECK_STR(PT(&i), "(7,8)");
  /* make / ints, equality and congruence. */
  hg_tuple_t parts[2] = {T("(2,3)"), hg_int(4)}, made;
  CHECK_OK(hg_tuple_make(&made, 2, parts));
  CHECK(hg_tuple_equal(&made, TP("((2,3),4)")));
  CHECK(!hg_tuple_equal(&made, TP("((2,3),5)")));
  CHECK(hg_tuple_congruent(&made, TP("((9,9),9)")));
  CHECK(!hg_tuple_congruent(&made, TP("(9,(9,9))")));
  int64_t vals[3] = {4, 8, 2};
  CHECK_OK(hg_tuple_ints(&made, 3, vals));
  CHECK_STR(PT(&made), "(4,8,2)");
  int64_t got[4] = {0};
  CHECK_EQ(hg_tuple_leaf_values(&made, got, 4), 3);
  CHECK_EQ(got[2], 2);
  CHECK_ERR(hg_tuple_ints(&made, 0, vals), HG_ERR_INVALID, "at least one element");
  /* Rank-1 tuples keep their parentheses; pycute's (4,) reads as (4). */
  CHECK_STR(PT(TP("(4,)")), "(4)");
  CHECK_EQ(hg_tuple_rank(TP("(4)")), 1);
  CHECK(!hg_is_int(TP("(4)")));
}

static void test_make_layout(void) {
  hg_tuple_t s = T("((2,3),4)");
  hg_layout_t l, r;
  /* Column-major: prefix products 1, 2, 6. Row-major: last mode fastest at every level:
   * 4 -> 1, then (2,3) from 4: 3 -> 4, 2 -> 12. */
  CHECK_OK(hg_make_layout_col_major(&s, &l));
  CHECK_STR(P(&l), "((2,3),4):((1,2),6)");
  CHECK_OK(hg_make_layout_row_major(&s, &l));
  CHECK_STR(P(&l), "((2,3),4):((12,4),1)");
  /* Ordered (CuTe's example): order (0,2,3,1) -> mode 0 stride 1, mode 3 stride 2,
   * mode 1 stride 4, mode 2 stride 8. */
  hg_tuple_t s4 = T("(2,2,2,2)"), o = T("(0,2,3,1)");
  CHECK_OK(hg_make_ordered_layout(&s4, &o, &l));
  CHECK_STR(P(&l), "(2,2,2,2):(1,4,8,2)");
  /* Order as a profile: (1,0) over ((2,3),4): mode 1 (size 4) first, then (2,3) from 4. */
  o = T("(1,0)");
  CHECK_OK(hg_make_ordered_layout(&s, &o, &l));
  CHECK_STR(P(&l), "((2,3),4):((4,8),1)");
  o = T("(1,0,2)");
  CHECK_ERR(hg_make_ordered_layout(&s, &o, &l), HG_ERR_INVALID, "does not match the modes");
  /* Concatenation and append. */
  hg_layout_t modes[2] = {L("4:1"), L("(2,2):(4,8)")};
  CHECK_OK(hg_layout_concat(2, modes, &l));
  CHECK_STR(P(&l), "(4,(2,2)):(1,(4,8))");
  CHECK_EQ(hg_layout_rank(&l), 2);
  CHECK_EQ(hg_layout_depth(&l), 2);
  CHECK_OK(hg_layout_mode(&l, 1, &r));
  CHECK_STR(P(&r), "(2,2):(4,8)");
  CHECK_ERR(hg_layout_mode(&l, 2, &r), HG_ERR_INVALID, "mode 2 of the rank-2 layout");
  hg_layout_t x = L("4:1"), y = L("8:4");
  CHECK_OK(hg_layout_append(&x, &y, &l));
  CHECK_STR(P(&l), "(4,8):(1,4)");
  hg_tuple_t sh = T("(4,8)"), st = T("(1)");
  CHECK_ERR(hg_make_layout(&sh, &st, &l), HG_ERR_INVALID, "not congruent");
  l = hg_layout_1d(8, 2);
  CHECK_STR(P(&l), "8:2");
}

static void test_coordinates(void) {
  hg_layout_t l = L("(4,(2,3)):(1,(4,8))");
  int64_t v = -1;
  /* Partially flat coordinate: (1,5) -> 1*1, and 5 in (2,3) = (5%2, 5/2) = (1,2) -> 4 + 16;
   * total 21. The same index 1-D: 21 = (1, 5) again. */
  CHECK_OK(hg_crd2idx(&l, TP("(1,5)"), &v));
  CHECK_EQ(v, 21);
  CHECK_OK(hg_crd2idx(&l, TP("(1,(1,2))"), &v));
  CHECK_EQ(v, 21);
  CHECK_OK(hg_layout_eval(&l, 21, &v));
  CHECK_EQ(v, 21);
  /* A 1-D index past the end runs on in the last mode: (2,2):(1,10) at 5 = (1, 2) -> 21. */
  CHECK_OK(hg_layout_eval(LP("(2,2):(1,10)"), 5, &v));
  CHECK_EQ(v, 21);
  /* idx2crd: 21 in (4,(2,3)) = (21 % 4, (21/4 % 2, 21/8 % 3)) = (1,(1,2)). */
  hg_tuple_t c;
  CHECK_OK(hg_idx2crd(TP("(4,(2,3))"), 21, &c));
  CHECK_STR(PT(&c), "(1,(1,2))");
  CHECK_ERR(hg_crd2idx(&l, TP("(1,2,3)"), &v), HG_ERR_INVALID, "ranks must match");
  CHECK_ERR(hg_crd2idx(&l, TP("((1,1),2)"), &v), HG_ERR_INVALID,
            "is a tuple where the shape has the integer 4");
  /* size and cosize: size 24; cosize = L(23) + 1 = 3 + 4 + 16 + 1 = 24. */
  CHECK_OK(hg_size(&l, &v));
  CHECK_EQ(v, 24);
  CHECK_OK(hg_cosize(&l, &v));
  CHECK_EQ(v, 24);
  /* cosize with a stride-0 mode: (4,2):(0,3): L(7) + 1 = 3 + 1. */
  CHECK_OK(hg_cosize(LP("(4,2):(0,3)"), &v));
  CHECK_EQ(v, 4);
}

static void test_slice(void) {
  hg_layout_t l = L("(4,8):(1,4)"), r;
  int64_t off = -1;
  /* (_,3): keep mode 0 as a rank-1 tuple (4):(1); offset 3*4. */
  CHECK_OK(hg_slice(&l, TP("(_,3)"), &r, &off));
  CHECK_STR(P(&r), "(4):(1)");
  CHECK_EQ(off, 12);
  /* Nested: ((_,1),_) keeps 2:1 and 4:6 side by side (slices concatenate), offset 2. */
  l = L("((2,3),4):((1,2),6)");
  CHECK_OK(hg_slice(&l, TP("((_,1),_)"), &r, &off));
  CHECK_STR(P(&r), "(2,4):(1,6)");
  CHECK_EQ(off, 2);
  /* A `_` over a whole tuple mode keeps it whole. */
  CHECK_OK(hg_slice(&l, TP("(_,2)"), &r, &off));
  CHECK_STR(P(&r), "((2,3)):((1,2))");
  CHECK_EQ(off, 12);
  /* No `_`: nothing is kept (1:0), only the offset 2*1 + 3*4 = 14. */
  l = L("(4,8):(1,4)");
  CHECK_OK(hg_slice(&l, TP("(2,3)"), &r, &off));
  CHECK_STR(P(&r), "1:0");
  CHECK_EQ(off, 14);
  CHECK_ERR(hg_slice(&l, TP("(_,_,_)"), &r, &off), HG_ERR_INVALID, "does not match the shape");
}

static void test_parse_print(void) {
  hg_layout_t l;
  char buf[256];
  /* CuTe's printed forms: static integers, spaces; pycute's rank-1 tuples "(x,)". */
  CHECK_STR(P(LP("(_4,_8):(_8,_1)")), "(4,8):(8,1)");
  CHECK_STR(P(LP("  ( 4 , 8 ) : ( 1 , 4 )  ")), "(4,8):(1,4)");
  CHECK_STR(P(LP("_8:_1")), "8:1");
  CHECK_STR(P(LP("((4,5),):((5,1),)")), "((4,5)):((5,1))");
  CHECK_STR(P(LP("((_2,_3),(_2,_4)):((_1,_16),(_2,_4))")), "((2,3),(2,4)):((1,16),(2,4))");
  CHECK_STR(P(LP("(4,2):(-1,0)")), "(4,2):(-1,0)");
  /* Print reports the length it needs, like snprintf. */
  l = L("(4,8):(1,4)");
  CHECK_EQ(hg_layout_print(&l, buf, 4), 11);
  CHECK_STR(buf, "(4,");
  /* Tilers: by-mode lists with `_`, CuTe's forms, a shape tiler, an integer. */
  hg_tiler_t t = TL("[ _4:_1 , _ , (2,2):(1,4) ]");
  CHECK_EQ(t.rank, 3);
  CHECK(t.skip[1]);
  hg_tiler_print(&t, buf, sizeof buf);
  CHECK_STR(buf, "[4:1,_,(2,2):(1,4)]");
  t = TL("(128,64)");
  hg_tiler_print(&t, buf, sizeof buf);
  CHECK_STR(buf, "[128:1,64:1]");
  t = TL("8");
  hg_tiler_print(&t, buf, sizeof buf);
  CHECK_STR(buf, "8:1");
  t = TL("[4,_]");
  hg_tiler_print(&t, buf, sizeof buf);
  CHECK_STR(buf, "[4:1,_]");
  hg_tuple_t shp = T("(128,_,64)");
  CHECK_OK(hg_tiler_shape(&shp, &t));
  hg_tiler_print(&t, buf, sizeof buf);
  CHECK_STR(buf, "[128:1,_,64:1]");
  /* Coordinates may hold `_`, and negative values. */
  CHECK_STR(PT(TP("(_, -3 , _5)")), "(_,-3,5)");
}

static void test_parse_errors(void) {
  hg_layout_t l;
  hg_tuple_t t;
  hg_tiler_t tl;
  CHECK_ERR(hg_layout_parse("(4,8):(1,4", &l), HG_ERR_PARSE, "expected ',' or ')' at column 11");
  CHECK_ERR(hg_layout_parse("(4,8)", &l), HG_ERR_PARSE, "expected ':'");
  CHECK_ERR(hg_layout_parse("(4,8):(1)", &l), HG_ERR_PARSE, "not congruent");
  CHECK_ERR(hg_layout_parse("(4,-8):(1,4)", &l), HG_ERR_PARSE, "shape -8 is negative");
  CHECK_ERR(hg_layout_parse("(4,_):(1,4)", &l), HG_ERR_PARSE, "cannot hold '_'");
  CHECK_ERR(hg_layout_parse("99999999999999999999:1", &l), HG_ERR_PARSE, "does not fit int64");
  CHECK_ERR(hg_layout_parse("(4,8):(1,4) x", &l), HG_ERR_PARSE, "unexpected text");
  CHECK_ERR(hg_layout_parse("", &l), HG_ERR_PARSE, "expected an integer");
  CHECK_ERR(hg_layout_parse("(4,8);(1,4)", &l), HG_ERR_PARSE, "column 6");
  CHECK_ERR(hg_tuple_parse("()", &t), HG_ERR_PARSE, "empty tuple");
  CHECK_ERR(hg_tuple_parse("(4 8)", &t), HG_ERR_PARSE, "expected ',' or ')'");
  CHECK_ERR(hg_tuple_parse("-9223372036854775808", &t), HG_ERR_PARSE, "reserved");
  /* 64 nested parentheses need more than HG_TUPLE_MAX nodes with the integer. */
  char deep[200];
  memset(deep, '(', 64);
  strcpy(deep + 64, "1");
  CHECK_ERR(hg_tuple_parse(deep, &t), HG_ERR_CAPACITY, "HG_TUPLE_MAX");
  CHECK_ERR(hg_tiler_parse("[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", &tl), HG_ERR_PARSE,
            "HG_TILER_MAX");
  CHECK_ERR(hg_tiler_parse("[[1,1,1,1,1,1,1,1],[1,1,1,1,1,1,1]]", &tl), HG_ERR_PARSE,
            "HG_TILER_MAX");
  CHECK_ERR(hg_tiler_parse("[[4:1,_],", &tl), HG_ERR_PARSE, "expected an integer");
  CHECK_ERR(hg_tiler_parse("[[4:1 _]]", &tl), HG_ERR_PARSE, "expected ',' or ']'");
  CHECK_ERR(hg_tiler_parse("((2,-1),4)", &tl), HG_ERR_PARSE, "tiler size must be an integer");
  CHECK_ERR(hg_tiler_parse("[4:1,", &tl), HG_ERR_PARSE, "expected an integer");
}

int main(void) {
  HG_RUN(test_tuples);
  HG_RUN(test_make_layout);
  HG_RUN(test_coordinates);
  HG_RUN(test_slice);
  HG_RUN(test_parse_print);
  HG_RUN(test_parse_errors);
  return hg_test_finish();
}
