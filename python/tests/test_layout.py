"""The algebra's Python surface beyond the vectors: pycute's constructors and call
conventions, the notations the C parser takes, pictures, and error paths."""
import pytest

import hopgen
from hopgen import ComposedLayout, Layout, Swizzle


def test_pycute_constructors_and_calls():
    L = Layout((4, 8), (8, 1))
    assert str(L) == "(4,8):(8,1)" and L == Layout("(4,8):(8,1)")
    assert Layout((4, 8)).stride == (1, 4)  # column-major by default, as pycute
    assert len(L) == 2 and L[1] == Layout(8, 1) and list(L)[0] == Layout(4, 8)
    assert L(3, 2) == 26 and L((3, 2)) == 26
    assert L(1) == 8  # a 1-D index walks mode 0 first
    assert hopgen.size(L) == 32 and hopgen.cosize(L) == 32 and L.size() == 32
    assert hopgen.rank(L) == 2 and hopgen.depth(Layout(((2, 2), 8), ((1, 2), 4))) == 2
    assert hopgen.size((2, (3, 4))) == 24 and hopgen.rank((2, 3)) == 2 and hopgen.depth(5) == 0
    assert hash(L) == hash(Layout("(4,8):(8,1)"))
    assert repr(L) == "Layout('(4,8):(8,1)')"
    # slicing with None: the layout of the kept modes
    assert L(None, 3) == Layout((4,), (8,))
    assert hopgen.slice_and_offset((None, 3), L) == (Layout((4,), (8,)), 3)


def test_every_notation_the_parser_takes():
    for text in ("(4,8):(8,1)", "(_4,_8):(_8,_1)", "( 4 , 8 ) : ( 8 , 1 )"):
        assert str(Layout(text)) == "(4,8):(8,1)"
    assert str(Layout("(4,):(1,)")) == "(4):(1)"
    assert hopgen.parse_tuple("((2,4),8)") == ((2, 4), 8)
    assert hopgen.tuple_str((4,)) == "(4)" and hopgen.tuple_str(((2, 4), 8)) == "((2,4),8)"
    t = hopgen.parse_tiler("[4:1,_,(2,2):(1,4)]")
    assert t[0] == Layout(4, 1) and t[1] is None and t[2] == Layout((2, 2), (1, 4))
    C = ComposedLayout("Sw<3,4,3> o 0 o (8,64):(64,1)")
    assert str(C) == "Sw<3,4,3> o 0 o (8,64):(64,1)"
    assert C == ComposedLayout(Swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))
    assert C(1, 0) == Swizzle(3, 4, 3)(64) and C.layoutA == Layout((8, 64), (64, 1))


def test_operations_match_the_text_entry_point():
    L = Layout("(8,16):(16,1)")
    pairs = [
        (hopgen.logical_divide(L, (2, 4)), "logical_divide", "[2:1,4:1]"),
        (hopgen.zipped_divide(L, [Layout(2), Layout(4)]), "zipped_divide", "[2:1,4:1]"),
        (hopgen.tiled_divide(L, "[2:1,4:1]"), "tiled_divide", "[2:1,4:1]"),
        (hopgen.flat_divide(L, (2, 4)), "flat_divide", "[2:1,4:1]"),
        (hopgen.logical_product(Layout(4, 1), Layout(3, 1)), None, None),
        (hopgen.blocked_product(Layout((2, 2), (1, 2)), Layout((3, 4))), None, None),
        (hopgen.raked_product(Layout((2, 2), (1, 2)), Layout((3, 4))), None, None),
    ]
    for got, op, tiler in pairs:
        if op:
            assert str(got) == hopgen.layout_op(op, str(L), tiler)
    assert str(hopgen.composition(L, (None, 4))) == hopgen.layout_op("composition", str(L),
                                                                     "[_,4:1]")
    assert hopgen.complement(Layout(4, 2), 16) == Layout(hopgen.layout_op(
        "complement", "4:2", "16"))
    assert hopgen.coalesce(Layout((2, 4), (1, 2))) == Layout(8, 1)
    assert hopgen.coalesce(Layout((2, (2, 2)), (1, (2, 4))), (1, 1)) == \
        Layout(hopgen.layout_op("coalesce", "(2,(2,2)):(1,(2,4))", "(1,1)"))
    assert hopgen.right_inverse(Layout((4, 8), (8, 1)))(8) == 1
    assert hopgen.left_inverse(Layout((4, 8), (8, 1))) == \
        Layout(hopgen.layout_op("left_inverse", "(4,8):(8,1)"))
    lay, off = hopgen.local_tile(Layout((128, 128), (128, 1)), (64, 32), (1, 2))
    assert f"{lay} offset {off}" == hopgen.layout_op("local_tile", "(128,128):(128,1)",
                                                     "[64:1,32:1]", "(1,2)")
    lay, off = hopgen.local_partition(Layout((8, 8)), Layout((2, 4)), 5)
    assert f"{lay} offset {off}" == hopgen.layout_op("local_partition", "(8,8):(1,8)",
                                                     "(2,4):(1,2)", "5")
    assert hopgen.crd2idx((1, 2), (4, 8)) == 9 and hopgen.crd2idx((1, 2), L) == 18
    assert hopgen.idx2crd(9, (4, 8)) == (1, 2)
    assert hopgen.idx2crd(9, (4, 8), (1, 4)) == (1, 2)
    assert hopgen.make_layout(Layout(4, 1), Layout(8, 4)) == Layout((4, 8), (1, 4))
    assert hopgen.make_layout((4, 8), "row") == Layout((4, 8), (8, 1))
    assert hopgen.make_ordered_layout((4, 8), (1, 0)) == Layout((4, 8), (8, 1))
    assert hopgen.upcast(Layout((4, 8), (1, 4)), 2) == Layout(hopgen.layout_op(
        "upcast", "(4,8):(1,4)", "2"))
    assert hopgen.recast_layout(Layout((4, 8), (1, 4)), 16, 32) == \
        Layout(hopgen.layout_op("recast_layout", "(4,8):(1,4)", "16", "32"))
    assert hopgen.max_common_vector(Layout(8, 1), Layout((4, 2), (1, 8))) == 4
    # nested by-mode tilers, as pycute nests tuples: Python tuples, text and parse_tiler agree
    N = Layout("((4,6),8):((1,4),24)")
    nested = hopgen.logical_divide(N, ((2, Layout(3, 2)), None))
    assert str(nested) == hopgen.layout_op("logical_divide", str(N), "[[2:1,3:2],_]")
    assert hopgen.parse_tiler("[[2:1,3:2],_]") == ((Layout(2, 1), Layout(3, 2)), None)
    assert hopgen.parse_tiler("[(2,3),4:1]") == ((Layout(2, 1), Layout(3, 1)), Layout(4, 1))
    assert str(hopgen.zipped_divide(N, ((2, 3), 4))) == hopgen.layout_op(
        "zipped_divide", str(N), "[[2:1,3:1],4:1]")
    swz = hopgen.composition(ComposedLayout("Sw<3,4,3> o 0 o (8,64):(64,1)"),
                             Layout((8, 8), (64, 1)))
    assert isinstance(swz, ComposedLayout) and str(swz).startswith("Sw<3,4,3> o 0 o ")


def test_pictures():
    L = Layout("(4,8):(8,1)")
    table = L.show(file=False)
    assert "31" in table and table.count("\n") >= 9
    svg = ComposedLayout("Sw<1,0,1> o 0 o (2,4):(4,1)").svg()
    assert svg.lstrip().startswith("<svg") or "<svg" in svg
    tv = Layout("(2,4):(4,1)").svg(tv=Layout("(4,2):(2,1)"))
    assert "T" in tv and "V" in tv
    big = Layout((256, 512))  # 131072 cells: refused with the C sentence
    with pytest.raises(hopgen.InvalidError, match="more than"):
        big.show(file=False)


def test_errors_name_the_argument_and_carry_the_c_sentence():
    with pytest.raises(hopgen.ParseError) as e:
        Layout("(4,8:(1,4)")
    assert e.value.code == "parse" and "Layout: " in str(e.value) and e.value.sentence
    with pytest.raises(hopgen.InvalidError):
        Layout((4, 8), (1, 4, 2))  # not congruent
    with pytest.raises(hopgen.CapacityError):
        Layout(tuple(range(1, 80)))
    with pytest.raises(TypeError):
        Layout((4, "x"))
    with pytest.raises(hopgen.InvalidError, match="shift of 0"):
        Swizzle(0, 4, 0)
    with pytest.raises(hopgen.InvalidError, match="tiler has 2 modes"):
        hopgen.logical_divide(Layout((8, 8)), ((2, 2), 4))  # mode 0 of 8:1 has no sub-modes
    with pytest.raises(IndexError):
        Layout((4, 8))[2]
    with pytest.raises(hopgen.HopgenError) as e:
        hopgen.logical_divide(Layout("(4,(8,5),(32,8)):(10240,(1280,256),(8,1))"),
                              (Layout(2, 2), Layout(5, 1)))
    assert str(e.value).startswith("logical_divide: ") and isinstance(e.value, ValueError)
