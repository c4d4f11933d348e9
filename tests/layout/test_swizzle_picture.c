/* Swizzles, composed (swizzled) layouts, and the pictures (text table and SVG). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout_test_util.h"

static hg_composed_t C(const char *text) {
  hg_composed_t c = {{0, 0, 0}, 0, hg_layout_1d(1, 0)};
  hg_status_t s = hg_composed_parse(text, &c);
  if (!hg_is_ok(&s)) HG_FAIL("parse %s: %s", text, s.msg);
  return c;
}

static const hg_composed_t *CP(const char *text) {
  static hg_composed_t bufs[4];
  static int k;
  hg_composed_t *p = &bufs[k++ & 3];
  *p = C(text);
  return p;
}

static const char *PC(const hg_composed_t *c) {
  static char buf[1024];
  hg_composed_print(c, buf, sizeof buf);
  return buf;
}

static void test_swizzle(void) {
  hg_swizzle_t sw;
  CHECK_OK(hg_swizzle_make(3, 4, 3, &sw));
  /* 129 = bit 7 + bit 0; bits [7,10) = 1 shift down 3 to bit 4: 129 ^ 16 = 145. */
  CHECK_EQ(hg_swizzle_apply(sw, 129), 145);
  /* 1008 sets bits 4..9; bits 7..9 (= 7) XOR into bits 4..6: 1008 ^ 112 = 896. */
  CHECK_EQ(hg_swizzle_apply(sw, 1008), 896);
  /* Offsets below 128 never change under Swizzle<3,4,3>. */
  CHECK_EQ(hg_swizzle_apply(sw, 127), 127);
  /* Negative offsets behave as Python's two's-complement ints: -1 ^ 112 = -113. */
  CHECK_EQ(hg_swizzle_apply(sw, -1), -113);
  /* A negative shift moves bits up: Swizzle<2,0,-3>(5): bits [0,2) = 1 go to bit 3: 13. */
  CHECK_OK(hg_swizzle_make(2, 0, -3, &sw));
  CHECK_EQ(hg_swizzle_apply(sw, 5), 13);
  /* B = 0 is the identity. */
  CHECK_OK(hg_swizzle_make(0, 4, 3, &sw));
  CHECK_EQ(hg_swizzle_apply(sw, 12345), 12345);
  CHECK_ERR(hg_swizzle_make(3, 4, 2, &sw), HG_ERR_INVALID, "smaller than bits");
  CHECK_ERR(hg_swizzle_make(-1, 4, 2, &sw), HG_ERR_INVALID, ">= 0");
  CHECK_ERR(hg_swizzle_make(30, 30, 30, &sw), HG_ERR_INVALID, "exceeds 62");
  /* The named operation also refuses a zero shift, as the reference pycute does. */
  CHECK_STR(OP("swizzle", 2, "3,4,3", "129", NULL), "145");
  CHECK(strstr(OP("swizzle", 2, "0,4,0", "7", NULL), "shift of 0") != NULL);
}

static void test_composed(void) {
  hg_composed_t c = C("Sw<3,4,3> o 0 o (8,64):(64,1)"), r;
  CHECK_STR(PC(&c), "Sw<3,4,3> o 0 o (8,64):(64,1)");
  int64_t v = -1;
  /* (2,1) -> 2*64 + 1 = 129 -> swizzled 145. */
  CHECK_OK(hg_composed_eval(&c, TP("(2,1)"), &v));
  CHECK_EQ(v, 145);
  /* The offset is added before the swizzle: 16 + 128 = 144 has bit 7 -> 144 ^ 16 = 128. */
  c = C("Sw<3,4,3> o _16 o (_8,_64):(_64,_1)");
  CHECK_STR(PC(&c), "Sw<3,4,3> o 16 o (8,64):(64,1)");
  CHECK_OK(hg_composed_eval(&c, TP("(2,0)"), &v));
  CHECK_EQ(v, 128);
  /* pycute's spelling, and the offset may be left out. */
  CHECK_STR(PC(CP("SW_3_4_3 o 0 o (8,64):(64,1)")), "Sw<3,4,3> o 0 o (8,64):(64,1)");
  CHECK_STR(PC(CP("Sw<2,4,3> o (8,32):(32,1)")), "Sw<2,4,3> o 0 o (8,32):(32,1)");
  /* A plain layout is a composed layout with the identity swizzle and prints plainly. */
  CHECK_STR(PC(CP("(4,8):(8,1)")), "(4,8):(8,1)");
  hg_layout_t pl = L("(4,8):(8,1)");
  hg_composed_t fromp = hg_composed_from_layout(&pl);
  CHECK_STR(PC(&fromp), "(4,8):(8,1)");
  /* (Sw o 0 o A) o B = Sw o 0 o (A o B). A = (8,64):(64,1), B = (8,8):(1,8):
   * A o 8:1 = 8:64 (the first 8 rows); A o 8:8: stride 8 consumes mode 8 (new shape 1),
   * leaving 8 with stride 1 in mode 64 -> 8:1. So A o B = (8,8):(64,1). */
  c = C("Sw<3,4,3> o 0 o (8,64):(64,1)");
  hg_layout_t b = L("(8,8):(1,8)");
  CHECK_OK(hg_composed_composition(&c, &b, &r));
  CHECK_STR(PC(&r), "Sw<3,4,3> o 0 o (8,8):(64,1)");
  /* And by definition the composed result at (i,j) is c at B(i,j) = i + 8j. */
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++) {
      int64_t crd[2] = {i, j}, x, y;
      hg_tuple_t t2, t1 = hg_int(i + 8 * j);
      CHECK_OK(hg_tuple_ints(&t2, 2, crd));
      CHECK_OK(hg_composed_eval(&r, &t2, &x));
      CHECK_OK(hg_composed_eval(&c, &t1, &y));
      CHECK_EQ(x, y);
    }
  CHECK_STR(OP("composition", 2, "Sw<3,4,3> o 0 o (8,64):(64,1)", "(8,8):(1,8)", NULL),
            "Sw<3,4,3> o 0 o (8,8):(64,1)");
  hg_composed_t bad;
  CHECK_ERR(hg_composed_parse("Sw<3,4,2> o 0 o 8:1", &bad), HG_ERR_INVALID, "smaller than bits");
  CHECK_ERR(hg_composed_parse("Sw<3,4,3> 8:1", &bad), HG_ERR_PARSE, "expected 'o'");
  CHECK_ERR(hg_composed_parse("Sw<3,4,3> o 8:1 o 8:1", &bad), HG_ERR_PARSE, "unexpected text");
  CHECK_ERR(hg_composed_parse("Sw<3,4 o 8:1", &bad), HG_ERR_PARSE, "column");
}

/* Capture what a picture function writes. */
static char *capture(hg_status_t (*fn)(const hg_composed_t *, const hg_layout_t *, FILE *),
                     const hg_composed_t *c, const hg_layout_t *tv, hg_status_t *st) {
  char *data = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&data, &len);
  *st = fn(c, tv, f);
  fclose(f);
  return data;
}

static hg_status_t show2(const hg_composed_t *c, const hg_layout_t *tv, FILE *f) {
  (void)tv;
  return hg_layout_show(c, f);
}

static int count(const char *s, const char *what) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, what)); p += strlen(what)) n++;
  return n;
}

static void test_show(void) {
  /* (2,3):(3,1) is row-major: row m holds 3m, 3m+1, 3m+2. Width 1 digit, like
   * cute::print_layout. */
  hg_composed_t c = C("(2,3):(3,1)");
  hg_status_t st;
  char *out = capture(show2, &c, NULL, &st);
  CHECK_OK(st);
  CHECK_STR(out, "(2,3):(3,1)\n"
                 "      0   1   2 \n"
                 "    +---+---+---+\n"
                 " 0  | 0 | 1 | 2 |\n"
                 "    +---+---+---+\n"
                 " 1  | 3 | 4 | 5 |\n"
                 "    +---+---+---+\n");
  free(out);
  /* Rank 1 is one row; rank 3 folds modes 1.. into the columns: (2,2,2):(1,2,4) shows
   * 2 rows x 4 columns with row 1 = 1, 3, 5, 7. */
  c = C("(2,2,2):(1,2,4)");
  out = capture(show2, &c, NULL, &st);
  CHECK_OK(st);
  CHECK(strstr(out, " 1  | 1 | 3 | 5 | 7 |\n") != NULL);
  free(out);
  c = C("4:2");
  out = capture(show2, &c, NULL, &st);
  CHECK(strstr(out, " 0  | 0 | 2 | 4 | 6 |\n") != NULL);
  free(out);
  /* Swizzled values: Sw<1,0,1> o (2,2):(1,2): 0,1,2,3 -> bit 1 XOR into bit 0: 0,1,3,2. */
  c = C("Sw<1,0,1> o 0 o (2,2):(1,2)");
  out = capture(show2, &c, NULL, &st);
  CHECK(strstr(out, " 0  | 0 | 3 |\n") != NULL);
  CHECK(strstr(out, " 1  | 1 | 2 |\n") != NULL);
  free(out);
  c = C("(1024,1024):(1,1024)");
  out = capture(show2, &c, NULL, &st);
  CHECK_ERR(st, HG_ERR_INVALID, "more than the");
  free(out);
}

static void test_svg(void) {
  hg_composed_t c = C("Sw<1,0,1> o 0 o (2,3):(3,1)");
  hg_status_t st;
  char *out = capture(hg_layout_svg, &c, NULL, &st);
  CHECK_OK(st);
  CHECK(strncmp(out, "<?xml", 5) == 0);
  CHECK(strstr(out, "</svg>\n") != NULL);
  /* One background plus one rectangle per cell; the '<' in the title is escaped. */
  CHECK_EQ(count(out, "<rect"), 7);
  CHECK(strstr(out, "Sw&lt;1,0,1&gt;") != NULL);
  CHECK(strstr(out, "Sw<1") == NULL);
  free(out);
  /* TV layout (3,2):(2,1): thread t value v owns cell 2t + v; cell 5 is T2V1. */
  c = C("(2,3):(1,2)");
  hg_layout_t tv = L("(3,2):(2,1)");
  out = capture(hg_layout_svg, &c, &tv, &st);
  CHECK_OK(st);
  CHECK(strstr(out, ">T2V1<") != NULL);
  CHECK(strstr(out, ">T0V0<") != NULL);
  CHECK_EQ(count(out, ">T"), 6);
  free(out);
  tv = L("(3,2):(2,4)");
  out = capture(hg_layout_svg, &c, &tv, &st);
  CHECK_ERR(st, HG_ERR_INVALID, "outside the layout");
  free(out);
  /* A TV layout with a huge thread mode but an empty value mode is refused, not walked. */
  tv = L("(33377777777,0):(4,2)");
  out = capture(hg_layout_svg, &c, &tv, &st);
  CHECK_ERR(st, HG_ERR_INVALID, "too large to draw");
  free(out);
  tv = L("6:1");
  out = capture(hg_layout_svg, &c, &tv, &st);
  CHECK_ERR(st, HG_ERR_INVALID, "rank 2");
  free(out);
}

int main(void) {
  HG_RUN(test_swizzle);
  HG_RUN(test_composed);
  HG_RUN(test_show);
  HG_RUN(test_svg);
  return hg_test_finish();
}
