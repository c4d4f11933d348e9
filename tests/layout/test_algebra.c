/* Unit tests for the algebra the golden vectors do not cover: blocked/raked/flat products,
 * tile_to_shape, flat divides, local_tile, local_partition, upcast/downcast/recast, max_common_*,
 * coalesce by profile, slices, and the errors. Each expected value is derived by hand in
 * the comment above it (notation: A o B is composition, comp(L, M) is complement). */
#include <string.h>

#include "layout_test_util.h"

static void test_blocked_raked_product(void) {
  hg_layout_t r;
  /* blocked_product((2,2):(1,2), (3,4):(1,3)): rank 2, so no padding.
   * logical_product: cosize(B) = 2*1 + 3*3 + 1 = 12, size(A) = 4 -> comp(A, 48): sorted
   * modes 2:1, 2:2 give (1,1,12):(1,2,4) -> 12:4; 12:4 o (3,4):(1,3) = (3,4):(4,12) by mode.
   * Mode i of the result pairs mode i of A with mode i of that: ((2,3),(2,4)):((1,4),(2,12)).
   * (CUTLASS 4.2 zips without coalescing the pairs.) */
  CHECK_OK(hg_blocked_product(LP("(2,2):(1,2)"), LP("(3,4):(1,3)"), &r));
  CHECK_STR(P(&r), "((2,3),(2,4)):((1,4),(2,12))");
  /* Row-major tiler (3,4):(4,1): cosize 12 again, 12:4 o (3,4):(4,1) = (3,4):(16,4). */
  hg_layout_t a = L("(2,2):(1,2)"), b = L("(3,4):(4,1)");
  CHECK_OK(hg_blocked_product(&a, &b, &r));
  CHECK_STR(P(&r), "((2,3),(2,4)):((1,16),(2,4))");
  /* raked_product pairs the other way round: (tiler_i, block_i). */
  CHECK_OK(hg_raked_product(&a, &b, &r));
  CHECK_STR(P(&r), "((3,2),(4,2)):((16,1),(4,2))");
  /* Rank padding: tiler 3:1 becomes (3,1):(1,0), cosize 3, comp(A, 12) = 3:4;
   * 3:4 o (3,1):(1,0) = (3,1):(4,0) -> ((2,3),(2,1)):((1,4),(2,0)). */
  b = L("3:1");
  CHECK_OK(hg_blocked_product(&a, &b, &r));
  CHECK_STR(P(&r), "((2,3),(2,1)):((1,4),(2,0))");
  /* Rank 1 with integer shapes: comp(4:1, 12) = 3:4, 3:4 o 3:1 = 3:4; CuTe's zip of two
   * non-tuples pairs them whole, in a rank-1 tuple: ((4,3)):((1,4)); raked ((3,4)):((4,1)). */
  a = L("4:1");
  CHECK_OK(hg_blocked_product(&a, &b, &r));
  CHECK_STR(P(&r), "((4,3)):((1,4))");
  CHECK_OK(hg_raked_product(&a, &b, &r));
  CHECK_STR(P(&r), "((3,4)):((4,1))");
}

static void test_tile_to_shape(void) {
  hg_composed_t atom = hg_composed_from_layout(LP("(8,8):(8,1)")), tile;
  char buf[256];
  /* (8,8):(8,1) to (128,64), repetitions (16,8) column-major: (16,8):(1,16). The atom
   * covers [0,64), so comp(atom, 64 x 128) = 128:64 and 128:64 o (16,8):(1,16) =
   * (16,8):(64,1024). Zipped by mode: ((8,16),(8,8)):((8,64),(1,1024)); mode 0 coalesces
   * (8 x 8 = 64) to 128:8. */
  CHECK_OK(hg_tile_to_shape(&atom, TP("(128,64)"), &tile));
  hg_composed_print(&tile, buf, sizeof buf);
  CHECK_STR(buf, "(128,(8,8)):(8,(1,1024))");
  /* Ordered (1,0): the repetitions (2,2) of a (16,16) tile vary along mode 1 first,
   * (2,2):(2,1); comp = 4:64 and 4:64 o (2,2):(2,1) = (2,2):(128,64):
   * ((8,2),(8,2)):((8,128),(1,64)), nothing coalesces (8 x 8 = 64 is not 128). */
  CHECK_OK(hg_tile_to_shape_ordered(&atom, TP("(16,16)"), TP("(1,0)"), &tile));
  hg_composed_print(&tile, buf, sizeof buf);
  CHECK_STR(buf, "((8,2),(8,2)):((8,128),(1,64))");
  /* A swizzled atom keeps its swizzle and offset: (8,64):(64,1) to (16,64) adds 2:512 to
   * mode 0, which coalesces with 8:64 to 16:64. */
  CHECK_OK(hg_composed_parse("Sw<3,3,3> o 0 o (8,64):(64,1)", &atom));
  CHECK_OK(hg_tile_to_shape(&atom, TP("(16,64)"), &tile));
  hg_composed_print(&tile, buf, sizeof buf);
  CHECK_STR(buf, "Sw<3,3,3> o 0 o (16,64):(64,1)");
  atom = hg_composed_from_layout(LP("(8,8):(8,1)"));
  CHECK_ERR(hg_tile_to_shape(&atom, TP("(100,64)"), &tile), HG_ERR_INVALID,
            "mode 0 of the tile (100) is not a multiple of the atom's 8");
  CHECK_ERR(hg_tile_to_shape(&atom, TP("(8,8,8)"), &tile), HG_ERR_INVALID,
            "the target has 3 modes but the atom 2");
}

static void test_flat_divide_product(void) {
  hg_layout_t a = L("(8,16):(16,1)"), r;
  hg_tiler_t t = TL("[2:1,4:1]");
  /* mode 0: 8:16 / 2:1: comp(2:1, 8) = 4:2, so 8:16 o (2,4):(1,2) = (2,4):(16,32);
   * mode 1: 16:1 / 4:1 = (4,4):(1,4). zipped: ((2,4),(4,4)):((16,1),(32,4)). */
  CHECK_OK(hg_zipped_divide(&a, &t, &r));
  CHECK_STR(P(&r), "((2,4),(4,4)):((16,1),(32,4))");
  /* tiled keeps the tile mode, unpacks the rest; flat unpacks both. */
  CHECK_OK(hg_tiled_divide(&a, &t, &r));
  CHECK_STR(P(&r), "((2,4),4,4):((16,1),32,4)");
  CHECK_OK(hg_flat_divide(&a, &t, &r));
  CHECK_STR(P(&r), "(2,4,4,4):(16,1,32,4)");
  /* flat_product((2,2):(1,2), [3:1,4:1]):
   * mode 0: comp(2:1, 6) = 3:2, 3:2 o 3:1 = 3:2 -> (2:1, 3:2);
   * mode 1: comp(2:2, 8) = (2,2):(1,4) (2*1 != 4), (2,2):(1,4) o 4:1 = (2,2):(1,4).
   * zipped ((2,2),(3,(2,2))), flat (2,2,3,(2,2)). */
  a = L("(2,2):(1,2)");
  t = TL("[3:1,4:1]");
  CHECK_OK(hg_flat_product(&a, &t, &r));
  CHECK_STR(P(&r), "(2,2,3,(2,2)):(1,2,2,(1,4))");
  CHECK_OK(hg_zipped_product(&a, &t, &r));
  CHECK_STR(P(&r), "((2,2),(3,(2,2))):((1,2),(2,(1,4)))");
  /* A rank-1 half stays whole in flat_divide (CuTe's repeat<1>(_) is a bare `_`):
   * zipped_divide(6:1, [2:1]) = ((2),(3)):((1),(2)), and flat_divide keeps both halves. */
  a = L("6:1");
  t = TL("[2:1]");
  CHECK_OK(hg_flat_divide(&a, &t, &r));
  CHECK_STR(P(&r), "((2),(3)):((1),(2))");
  /* tiled_divide follows pycute instead and unpacks the rank-1 rest: ((2),3):((1),2). */
  CHECK_OK(hg_tiled_divide(&a, &t, &r));
  CHECK_STR(P(&r), "((2),3):((1),2)");
  /* A `_` slot: the whole mode goes to the rest, the tile gets 1:0 (pycute's hier_unzip). */
  a = L("(8,16):(16,1)");
  t = TL("[2:1,_]");
  CHECK_OK(hg_zipped_divide(&a, &t, &r));
  CHECK_STR(P(&r), "((2,1),(4,16)):((16,0),(32,1))");
}

static void test_local_tile(void) {
  hg_layout_t a = L("(16,64):(1,16)"), r;
  hg_tiler_t t = TL("[8:1,16:1]");
  int64_t off = -1;
  /* zipped_divide: mode 0 16:1 / 8:1 = (8,2):(1,8); mode 1 64:16 / 16:1 = (16,4):(16,256)
   * -> ((8,16),(2,4)):((1,16),(8,256)). Tile (1,2) starts at 1*8 + 2*256 = 520. */
  hg_tuple_t c = T("(1,2)");
  CHECK_OK(hg_local_tile(&a, &t, &c, &r, &off));
  CHECK_STR(P(&r), "(8,16):(1,16)");
  CHECK_EQ(off, 520);
  /* A 1-D tile index indexes the grid (2,4) colexicographically: 5 = (1,2). */
  c = T("5");
  CHECK_OK(hg_local_tile(&a, &t, &c, &r, &off));
  CHECK_STR(P(&r), "(8,16):(1,16)");
  CHECK_EQ(off, 520);
  /* `_` keeps that grid mode: (1,_) -> tile modes plus the 4:256 column of tiles, at 8. */
  c = T("(1,_)");
  CHECK_OK(hg_local_tile(&a, &t, &c, &r, &off));
  CHECK_STR(P(&r), "(8,16,4):(1,16,256)");
  CHECK_EQ(off, 8);
  /* A shorter coordinate is padded with `_` (CuTe's append<R1>(coord, _)). */
  c = T("(1)");
  CHECK_OK(hg_local_tile(&a, &t, &c, &r, &off));
  CHECK_STR(P(&r), "(8,16,4):(1,16,256)");
  c = T("(1,2,3)");
  CHECK_ERR(hg_local_tile(&a, &t, &c, &r, &off), HG_ERR_INVALID, "has 3 modes");
  /* A rank-1 tiler: zipped_divide(4:1, [2:1]) = ((2),(2)):((1),(2)); the tile mode is kept
   * whole, so tile (1) is ((2)):((1)) at offset 1*2. */
  a = L("4:1");
  t = TL("[2:1]");
  c = T("(1)");
  CHECK_OK(hg_local_tile(&a, &t, &c, &r, &off));
  CHECK_STR(P(&r), "((2)):((1))");
  CHECK_EQ(off, 2);
}

static void test_local_partition(void) {
  hg_layout_t a = L("(16,64):(1,16)"), thr = L("(2,16):(1,2)"), r;
  int64_t off = -1;
  /* Tiler (2,16) by mode: ((2,16),(8,4)):((1,16),(2,256)). Thread 3 of the column-major
   * (2,16) sits at (3 % 2, 3 / 2) = (1,1): fix (1,1) in the tile, keep the (8,4) grid;
   * offset 1*1 + 1*16 = 17. */
  CHECK_OK(hg_local_partition(&a, &thr, 3, &r, &off));
  CHECK_STR(P(&r), "(8,4):(2,256)");
  CHECK_EQ(off, 17);
  /* Row-major threads (2,16):(16,1): thread 17 -> (17/16 % 2, 17/1 % 16) = (1,1) -> 17;
   * thread 1 -> (0,1) -> offset 16: the thread layout's strides matter. */
  thr = L("(2,16):(16,1)");
  CHECK_OK(hg_local_partition(&a, &thr, 17, &r, &off));
  CHECK_EQ(off, 17);
  CHECK_OK(hg_local_partition(&a, &thr, 1, &r, &off));
  CHECK_STR(P(&r), "(8,4):(2,256)");
  CHECK_EQ(off, 16);
  CHECK_ERR(hg_local_partition(&a, &thr, 32, &r, &off), HG_ERR_INVALID, "outside the thread");
  /* 1-D: 32 elements over 4 threads: zipped_divide(32:1, 4:1) = (4,8):(1,4); thread 2
   * slices (2,_): it owns 2, 6, ..., 30, a rank-1 tuple (8):(4) at offset 2 (a slice keeps
   * the kept modes in a tuple, as CuTe's slice does). */
  a = L("32:1");
  thr = L("4:1");
  CHECK_OK(hg_local_partition(&a, &thr, 2, &r, &off));
  CHECK_STR(P(&r), "(8):(4)");
  CHECK_EQ(off, 2);
}

static void test_recast(void) {
  hg_layout_t a = L("(8,4):(1,8)"), r;
  /* upcast<2>: the stride-1 mode packs pairs (8 -> 4, stride 1 stays 1), the other mode
   * keeps its shape and halves its stride (8 -> 4). */
  CHECK_OK(hg_upcast(&a, 2, &r));
  CHECK_STR(P(&r), "(4,4):(1,4)");
  /* downcast<2>: the stride-1 mode doubles its shape, other strides double. */
  CHECK_OK(hg_downcast(&a, 2, &r));
  CHECK_STR(P(&r), "(16,4):(1,16)");
  /* recast 16 -> 32 bits is upcast<2>, 32 -> 16 is downcast<2>, equal widths identity. */
  CHECK_OK(hg_recast_layout(&a, 16, 32, &r));
  CHECK_STR(P(&r), "(4,4):(1,4)");
  CHECK_OK(hg_recast_layout(&a, 32, 16, &r));
  CHECK_STR(P(&r), "(16,4):(1,16)");
  CHECK_OK(hg_recast_layout(&a, 8, 8, &r));
  CHECK_STR(P(&r), "(8,4):(1,8)");
  /* 24 -> 16 bits is the ratio 2/3: upcast<2> then downcast<3>: (4,4):(1,4) ->
   * (12,4):(1,12). */
  CHECK_OK(hg_recast_layout(&a, 24, 16, &r));
  CHECK_STR(P(&r), "(12,4):(1,12)");
  /* A stride-0 mode is left alone; 4:1 upcast<4> packs all 4 into 1 element: 1:1. */
  a = L("(8,4):(0,1)");
  CHECK_OK(hg_upcast(&a, 4, &r));
  CHECK_STR(P(&r), "(8,1):(0,1)");
  /* 3 elements packed in pairs round up to 2 (CuTe's ceil_div); the stride 3 of the
   * other mode and the factor 2 do not divide one another. */
  a = L("(3,4):(1,6)");
  CHECK_OK(hg_upcast(&a, 2, &r));
  CHECK_STR(P(&r), "(2,4):(1,3)");
  a = L("(3,4):(1,3)");
  CHECK_ERR(hg_upcast(&a, 2, &r), HG_ERR_INVALID, "stride 3 and the factor 2 do not divide");
  a = L("(4,4):(2,8)");
  CHECK_ERR(hg_downcast(&a, 2, &r), HG_ERR_INVALID, "stride 1");
}

static void test_max_common(void) {
  int64_t n = 0;
  hg_layout_t r;
  /* a o right_inverse(32:1) = (4,8):(1,4), which coalesces to 32:1: all 32 in common. */
  CHECK_OK(hg_max_common_vector(LP("(4,8):(1,4)"), LP("32:1"), &n));
  CHECK_EQ(n, 32);
  /* Row-major against column-major: the first mode has stride 8, nothing contiguous. */
  CHECK_OK(hg_max_common_vector(LP("(4,8):(8,1)"), LP("32:1"), &n));
  CHECK_EQ(n, 1);
  /* (4,2):(1,16) o 8:1 = (4,2):(1,16): the first 4 are contiguous. */
  CHECK_OK(hg_max_common_vector(LP("(4,2):(1,16)"), LP("8:1"), &n));
  CHECK_EQ(n, 4);
  /* right_inverse((4,8):(1,8)) = 4:1 (the stride-8 mode does not continue 4); a o 4:1 = 4:1,
   * stride 1, so the common layout is 4:1 o 4:1 = 4:1. */
  CHECK_OK(hg_max_common_layout(LP("(4,8):(1,4)"), LP("(4,8):(1,8)"), &r));
  CHECK_STR(P(&r), "4:1");
  CHECK_OK(hg_max_common_layout(LP("(4,8):(8,1)"), LP("32:1"), &r));
  CHECK_STR(P(&r), "1:0");
}

static void test_coalesce_profile_filter(void) {
  hg_layout_t a = L("(2,(1,6)):(1,(6,2))"), r;
  hg_tuple_t p = T("(1,1)");
  /* Whole: flat (2,1,6):(1,6,2), drop the 1, 2*1 == 2 merges -> 12:1. By mode: 2:1 and
   * (1,6):(6,2) -> 6:2 stay separate -> (2,6):(1,2). */
  CHECK_OK(hg_coalesce(&a, &r));
  CHECK_STR(P(&r), "12:1");
  CHECK_OK(hg_coalesce_profile(&a, &p, &r));
  CHECK_STR(P(&r), "(2,6):(1,2)");
  /* A profile shorter than the layout leaves the trailing modes alone. */
  a = L("((2,2),(3,1)):((1,2),(4,9))");
  p = T("(1)");
  CHECK_OK(hg_coalesce_profile(&a, &p, &r));
  CHECK_STR(P(&r), "(4,(3,1)):(1,(4,9))");
  p = T("(1,1,1)");
  CHECK_ERR(hg_coalesce_profile(&a, &p, &r), HG_ERR_INVALID, "profile has 3 modes");
  /* filter drops stride-0 and size-1 modes: (4,3,1):(0,2,7) -> 3:2. All dropped -> 1:0. */
  a = L("(4,3,1):(0,2,7)");
  CHECK_OK(hg_filter(&a, &r));
  CHECK_STR(P(&r), "3:2");
  a = L("(4,1):(0,7)");
  CHECK_OK(hg_filter(&a, &r));
  CHECK_STR(P(&r), "1:0");
}

static void test_composition_tiler(void) {
  hg_layout_t a = L("(8,16):(16,1)"), r;
  /* By mode with `_`: mode 0 8:16 o 2:2 = 2:32 (int A), mode 1 untouched. */
  hg_tiler_t t = TL("[2:2,_]");
  CHECK_OK(hg_composition_tiler(&a, &t, &r));
  CHECK_STR(P(&r), "(2,16):(32,1)");
  /* A shape tiler (4,8) means [4:1,8:1]: 8:16 o 4:1 = 4:16, 16:1 o 8:1 = 8:1. */
  t = TL("(4,8)");
  CHECK_EQ(t.rank, 2);
  CHECK_OK(hg_composition_tiler(&a, &t, &r));
  CHECK_STR(P(&r), "(4,8):(16,1)");
  t = TL("[2:1,2:1,2:1]");
  CHECK_ERR(hg_composition_tiler(&a, &t, &r), HG_ERR_INVALID, "the tiler has 3 modes");
}

static void test_algebra_errors(void) {
  hg_layout_t r;
  /* (4,3):(3,1) does not coalesce; B = 3:3 meets the mode 4 with stride 3: 4 % 3 and
   * 3 % 4 are both non-zero. */
  CHECK_ERR(hg_composition(LP("(4,3):(3,1)"), LP("3:3"), &r), HG_ERR_INVALID,
            "composition (4,3):(3,1) o 3:3");
  CHECK_ERR(hg_composition(LP("(4,3):(3,1)"), LP("3:3"), &r), HG_ERR_INVALID,
            "(CuTe's divisibility condition)");
  /* (8,2):(1,2): sorted 8:1 covers [0,8), then 2:2 ends at 4 < 8: the modes overlap. */
  CHECK_ERR(hg_complement(LP("(8,2):(1,2)"), 16, &r), HG_ERR_INVALID, "in-bound condition");
  CHECK_ERR(hg_complement(LP("8:1"), -1, &r), HG_ERR_INVALID, "negative");
  /* left_inverse needs the complement, which fails for the overlapping (5,1),2 modes. */
  CHECK_ERR(hg_left_inverse(LP("((5,1),2):((4,20),5)"), &r), HG_ERR_INVALID,
            "left_inverse of ((5,1),2):((4,20),5)");
  /* logical_divide((3,2):(2,1), 2:1) = A o (2:1, comp(2:1, 6) = 3:2). A o 3:2 meets A's
   * first mode 3 with stride 2: 3 % 2 and 2 % 3 are both non-zero. */
  hg_tiler_t t = TL("2:1");
  CHECK_ERR(hg_logical_divide(LP("(3,2):(2,1)"), &t, &r), HG_ERR_INVALID,
            "logical_divide of (3,2):(2,1) by 2:1");
  /* Overflow: 2^40 * 2^40 does not fit. */
  int64_t n;
  CHECK_ERR(hg_size(LP("(1099511627776,1099511627776):(1,1)"), &n), HG_ERR_OVERFLOW,
            "overflows int64");
  hg_tuple_t c = hg_int(3);
  CHECK_ERR(hg_crd2idx(LP("4:4611686018427387904"), &c, &n), HG_ERR_OVERFLOW,
            "3 * 4611686018427387904 overflows int64");
  /* Capacity: 63 leaves fill HG_TUPLE_MAX; left_inverse's (L, complement(L)) cannot fit. */
  char text[512] = "(", *p = text + 1;
  for (int i = 0; i < 63; i++) p += sprintf(p, i ? ",1" : "1");
  strcpy(p, "):(");
  p += 3;
  for (int i = 0; i < 63; i++) p += sprintf(p, i ? ",0" : "0");
  strcpy(p, ")");
  hg_layout_t big = L(text);
  CHECK_EQ(big.shape.n, 64);
  CHECK_ERR(hg_left_inverse(&big, &r), HG_ERR_CAPACITY, "HG_TUPLE_MAX");
  /* A malformed caller-built layout is refused, not read past. */
  hg_layout_t bad = L("(2,2):(1,2)");
  bad.shape.arity[0] = 5;
  CHECK_ERR(hg_coalesce(&bad, &r), HG_ERR_INVALID, "malformed");
  bad = L("(2,2):(1,2)");
  bad.stride = hg_int(1);
  CHECK_ERR(hg_coalesce(&bad, &r), HG_ERR_INVALID, "not congruent");
  /* (2,()):(1,()) -- an empty tuple built by hand (the parser refuses "()"). */
  bad = L("(2,2):(1,2)");
  bad.shape.arity[2] = 0;
  bad.stride.arity[2] = 0;
  CHECK_ERR(hg_coalesce(&bad, &r), HG_ERR_INVALID, "empty tuple");
  hg_tuple_t s = T("(4,-2)");
  CHECK_ERR(hg_make_layout(&s, &s, &r), HG_ERR_INVALID, "negative");
}

int main(void) {
  HG_RUN(test_blocked_raked_product);
  HG_RUN(test_tile_to_shape);
  HG_RUN(test_flat_divide_product);
  HG_RUN(test_local_tile);
  HG_RUN(test_local_partition);
  HG_RUN(test_recast);
  HG_RUN(test_max_common);
  HG_RUN(test_coalesce_profile_filter);
  HG_RUN(test_composition_tiler);
  HG_RUN(test_algebra_errors);
  return hg_test_finish();
}
