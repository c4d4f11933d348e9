/* CuTe's layout tutorial in C: layouts, coordinates, and the algebra (coalesce, composition,
 * complement, divides, products), ending with the swizzled shared-memory atom the GEMM
 * examples' stages are made of. Every result is printed next to the CuTe call it mirrors and
 * compared with the value CuTe (pycute) gives; the program fails on any difference. No GPU.
 *
 * Notation: a layout is shape:stride, tuples nest, (4,8):(1,4) is column-major 4 x 8; a
 * tiler [A,B] applies layout A to mode 0 and B to mode 1. A layout maps a coordinate to an
 * index: the inner product of the coordinate with the strides. */
#include "example_util.h"

static int failures;

/* Print `call  result`, and complain unless result == want. */
static void check(const char *call, const char *got, const char *want) {
  printf("  %-46s %s\n", call, got);
  if (strcmp(got, want)) {
    printf("  ^ CuTe gives %s\n", want);
    failures++;
  }
}

static void check_layout(const char *call, const hg_layout_t *l, const char *want) {
  char got[256];
  hg_layout_print(l, got, sizeof got);
  check(call, got, want);
}

static hg_layout_t layout(const char *text) {
  hg_layout_t l;
  EX_CHECK(hg_layout_parse(text, &l));
  return l;
}

static hg_tiler_t tiler(const char *text) {
  hg_tiler_t t;
  EX_CHECK(hg_tiler_parse(text, &t));
  return t;
}

static void table(const char *text) {
  hg_composed_t c;
  EX_CHECK(hg_composed_parse(text, &c));
  EX_CHECK(hg_layout_show(&c, stdout));
}

int main(void) {
  hg_layout_t r;
  char buf[256];

  printf("1. Layouts: a shape and a stride. make_layout(shape) is column-major (LayoutLeft).\n");
  hg_tuple_t shape;
  EX_CHECK(hg_tuple_parse("(2,4)", &shape));
  EX_CHECK(hg_make_layout_col_major(&shape, &r));
  check_layout("make_layout(make_shape(2,4))", &r, "(2,4):(1,2)");
  EX_CHECK(hg_make_layout_row_major(&shape, &r));
  check_layout("make_layout(make_shape(2,4), LayoutRight{})", &r, "(2,4):(4,1)");
  printf("  print_layout of the hierarchical (2,(2,2)):(4,(2,1)): rows are mode 0, the\n"
         "  columns walk mode 1's sub-modes colexicographically.\n");
  table("(2,(2,2)):(4,(2,1))");

  printf("\n2. Coordinates. A layout takes a 1-D index, a 2-D coordinate, or the natural\n"
         "   (hierarchical) one; all name the same element.\n");
  const hg_layout_t l3 = layout("(3,(2,3)):(3,(12,1))");
  const char *const coords[] = {"16", "(1,5)", "(1,(1,2))"};
  for (int i = 0; i < 3; i++) {
    hg_tuple_t crd;
    int64_t idx;
    char call[80];
    EX_CHECK(hg_tuple_parse(coords[i], &crd));
    EX_CHECK(hg_crd2idx(&l3, &crd, &idx));
    snprintf(call, sizeof call, "crd2idx(%s, (3,(2,3)):(3,(12,1)))", coords[i]);
    snprintf(buf, sizeof buf, "%lld", (long long)idx);
    check(call, buf, "17");
  }
  hg_tuple_t nat;
  EX_CHECK(hg_idx2crd(&l3.shape, 16, &nat));
  hg_tuple_print(&nat, buf, sizeof buf);
  check("idx2crd(16, (3,(2,3)))", buf, "(1,(1,2))");

  printf("\n3. Coalesce: the same function with fewer modes (by mode with a profile).\n");
  const hg_layout_t lc = layout("(2,(1,6)):(1,(6,2))");
  EX_CHECK(hg_coalesce(&lc, &r));
  check_layout("coalesce((2,(1,6)):(1,(6,2)))", &r, "12:1");
  hg_tuple_t prof;
  EX_CHECK(hg_tuple_parse("(1,1)", &prof));
  EX_CHECK(hg_coalesce_profile(&lc, &prof, &r));
  check_layout("coalesce(.., Step<_1,_1>{})", &r, "(2,6):(1,2)");

  printf("\n4. Composition: (A o B)(c) = A(B(c)); B picks A's elements in its own shape.\n");
  const hg_layout_t ca = layout("(6,2):(8,2)"), cb = layout("(4,3):(3,1)");
  EX_CHECK(hg_composition(&ca, &cb, &r));
  check_layout("composition((6,2):(8,2), (4,3):(3,1))", &r, "((2,2),3):((24,2),8)");
  const hg_layout_t c2 = layout("(12,(4,8)):(59,(13,1))");
  hg_tiler_t t2 = tiler("[3:4,8:2]");
  EX_CHECK(hg_composition_tiler(&c2, &t2, &r));
  check_layout("composition(.., make_tile(3:4, 8:2))", &r, "(3,(2,4)):(236,(26,1))");

  printf("\n5. Complement: the layout of what a layout leaves out of [0, N), so that\n"
         "   (L, complement(L, N)) covers it exactly; divide and product are built on it.\n");
  const hg_layout_t k1 = layout("4:2"), k2 = layout("(2,2):(1,6)");
  EX_CHECK(hg_complement(&k1, 24, &r));
  check_layout("complement(4:2, 24)", &r, "(2,3):(1,8)");
  EX_CHECK(hg_complement(&k2, 24, &r));
  check_layout("complement((2,2):(1,6), 24)", &r, "(3,2):(2,12)");

  printf("\n6. Divide: logical_divide(L, T) = L o (T, complement(T, size(L))): mode 0 is a\n"
         "   tile, mode 1 walks the tiles. zipped and tiled divide regroup the modes.\n");
  const hg_layout_t d1 = layout("(4,2,3):(2,1,8)");
  hg_tiler_t t1 = tiler("4:2");
  EX_CHECK(hg_logical_divide(&d1, &t1, &r));
  check_layout("logical_divide((4,2,3):(2,1,8), 4:2)", &r, "((2,2),(2,3)):((4,1),(2,8))");
  const hg_layout_t d2 = layout("(9,(4,8)):(59,(13,1))");
  hg_tiler_t td = tiler("[3:3,(2,4):(1,8)]");
  EX_CHECK(hg_logical_divide(&d2, &td, &r));
  check_layout("logical_divide((9,(4,8)):(59,(13,1)), T)", &r,
               "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))");
  EX_CHECK(hg_zipped_divide(&d2, &td, &r));
  check_layout("zipped_divide(.., T)  ((tile),(rest))", &r,
               "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))");
  EX_CHECK(hg_tiled_divide(&d2, &td, &r));
  check_layout("tiled_divide(.., T)   ((tile),rest0,rest1)", &r,
               "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))");
  printf("  with T = [3:3,(2,4):(1,8)]\n");

  printf(
      "\n7. Product: logical_product(A, B) = (A, complement(A, size(A) cosize(B)) o B): A\n"
      "   repeated the way B says; blocked keeps A's blocks together, raked interleaves them.\n");
  const hg_layout_t p1 = layout("(2,2):(4,1)");
  hg_tiler_t t6 = tiler("6:1");
  EX_CHECK(hg_logical_product(&p1, &t6, &r));
  check_layout("logical_product((2,2):(4,1), 6:1)", &r, "((2,2),(2,3)):((4,1),(2,8))");
  const hg_layout_t blk = layout("(2,5):(5,1)"), rep = layout("(3,4):(1,3)");
  EX_CHECK(hg_blocked_product(&blk, &rep, &r));
  check_layout("blocked_product((2,5):(5,1), (3,4):(1,3))", &r, "((2,3),(5,4)):((5,10),(1,30))");
  EX_CHECK(hg_raked_product(&blk, &rep, &r));
  check_layout("raked_product((2,5):(5,1), (3,4):(1,3))", &r, "((3,2),(4,5)):((10,5),(30,1))");
  printf("  the blocked product as a table: each 2 x 5 block holds 10 consecutive indices\n");
  EX_CHECK(hg_blocked_product(&blk, &rep, &r));
  hg_composed_t rc = hg_composed_from_layout(&r);
  EX_CHECK(hg_layout_show(&rc, stdout));

  printf("\n8. Swizzles. TMA and wgmma XOR address bits 4-6 (the 16-byte chunk within a\n"
         "   128-byte row) with bits 7-9 (the row): CuTe's Swizzle<3,4,3> on byte addresses,\n"
         "   Swizzle<3,3,3> on the offsets of 2-byte elements (hopgen writes swizzles on\n"
         "   element offsets). The 8 rows of an 8 x 8 block of chunks land in 8 different\n"
         "   bank groups. The bf16 K-major 128-byte atom, and the same atom in chunks:\n");
  hg_composed_t atom;
  EX_CHECK(hg_gmma_layout_atom(HG_BF16, HG_MAJOR_K, HG_SWIZZLE_128B, &atom));
  hg_composed_print(&atom, buf, sizeof buf);
  check("GMMA::Layout_K_SW128_Atom<bf16>", buf, "Sw<3,3,3> o 0 o (8,64):(64,1)");
  table("Sw<3,0,3> o 0 o (8,8):(8,1)");
  hg_tuple_t crd;
  int64_t off;
  EX_CHECK(hg_tuple_parse("(1,8)", &crd));
  EX_CHECK(hg_composed_eval(&atom, &crd, &off));
  snprintf(buf, sizeof buf, "%lld", (long long)off);
  check("atom(1, 8): row 1, chunk 1 -> chunk 0", buf, "64");
  hg_tuple_t stage;
  hg_composed_t sA;
  EX_CHECK(hg_tuple_parse("(128,64)", &stage));
  EX_CHECK(hg_tile_to_shape(&atom, &stage, &sA));
  hg_composed_print(&sA, buf, sizeof buf);
  check("tile_to_shape(atom, (128,64))", buf, "Sw<3,3,3> o 0 o (128,64):(64,1)");
  printf("  the A stage of examples/gemm_tma_wgmma.c: 16 atoms down M (they coalesce into one\n"
         "  mode of 128 rows), 64 elements along K\n");

  printf("\n%s\n", failures ? "some results differ from CuTe's" : "every result matches CuTe's");
  return failures ? 1 : 0;
}
