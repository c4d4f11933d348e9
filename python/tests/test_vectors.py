"""The golden layout-algebra vectors through the Python API (not the text entry point):
every line of tests/vectors/layout_algebra.tsv and layout_nested_tilers.tsv (or of
$HOPGEN_VECTORS, for another corpus; several separated by os.pathsep) is parsed into Python
objects, computed with the pycute-named functions and printed with str(); lines whose
expected result is `error` must raise a HopgenError."""
import os
from collections import defaultdict
from pathlib import Path

import pytest

import hopgen
from hopgen import layout as L

_DIR = Path(__file__).resolve().parents[2] / "tests" / "vectors"
VECTORS = ([Path(p) for p in os.environ["HOPGEN_VECTORS"].split(os.pathsep)]
           if os.environ.get("HOPGEN_VECTORS") else
           [_DIR / "layout_algebra.tsv", _DIR / "layout_nested_tilers.tsv"])


def _absent(a):
    return a.strip() == "_"


def _swizzle(text):
    t = text.strip()
    if t.startswith("Sw<") and t.endswith(">"):
        t = t[3:-1]
    b, m, s = (int(x) for x in t.split(","))
    return hopgen.Swizzle(b, m, s)


def _offset(pair):
    lay, off = pair
    return f"{lay} offset {off}"


def _tiler(text):
    return hopgen.parse_tiler(text)  # a Layout, or a tuple of Layouts / None


# op -> function of the text arguments returning the text result, built from Python objects.
OPS = {
    "size": lambda a, b: hopgen.size(hopgen.Layout(a)),
    "cosize": lambda a, b: hopgen.cosize(hopgen.Layout(a)),
    "rank": lambda a, b: hopgen.rank(hopgen.Layout(a)),
    "depth": lambda a, b: hopgen.depth(hopgen.Layout(a)),
    "coalesce": lambda a, b: hopgen.coalesce(hopgen.Layout(a),
                                             None if _absent(b) else hopgen.parse_tuple(b)),
    "filter": lambda a, b: hopgen.filter(hopgen.Layout(a)),
    "right_inverse": lambda a, b: hopgen.right_inverse(hopgen.Layout(a)),
    "left_inverse": lambda a, b: hopgen.left_inverse(hopgen.Layout(a)),
    "complement": lambda a, b: hopgen.complement(hopgen.Layout(a),
                                                 1 if _absent(b) else int(b)),
    "composition": lambda a, b: hopgen.composition(L._parse_any(a), _tiler(b)),
    "blocked_product": lambda a, b: hopgen.blocked_product(hopgen.Layout(a), hopgen.Layout(b)),
    "raked_product": lambda a, b: hopgen.raked_product(hopgen.Layout(a), hopgen.Layout(b)),
    "crd2idx": lambda a, b: L._parse_any(a)(hopgen.parse_tuple(b)),
    "idx2crd": lambda a, b: hopgen.tuple_str(hopgen.idx2crd(int(b), hopgen.parse_tuple(a))),
    "slice": lambda a, b: _offset(hopgen.slice_and_offset(hopgen.parse_tuple(b),
                                                          hopgen.Layout(a))),
    "max_common_vector": lambda a, b: hopgen.max_common_vector(hopgen.Layout(a),
                                                               hopgen.Layout(b)),
    "max_common_layout": lambda a, b: hopgen.max_common_layout(hopgen.Layout(a),
                                                               hopgen.Layout(b)),
    "upcast": lambda a, b: hopgen.upcast(hopgen.Layout(a), int(b)),
    "downcast": lambda a, b: hopgen.downcast(hopgen.Layout(a), int(b)),
    "swizzle": lambda a, b: _swizzle(a)(int(b)),
    "make_layout": lambda a, b: hopgen.make_layout(hopgen.parse_tuple(a), *(
        [] if _absent(b) else [b if b in ("col", "row") else hopgen.parse_tuple(b)])),
    "make_ordered_layout": lambda a, b: hopgen.make_ordered_layout(hopgen.parse_tuple(a),
                                                                   hopgen.parse_tuple(b)),
    "mode": lambda a, b: hopgen.Layout(a)[int(b)],
}
for _op in ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
            "logical_product", "zipped_product", "tiled_product", "flat_product"):
    OPS[_op] = (lambda f: lambda a, b: f(hopgen.Layout(a), _tiler(b)))(getattr(hopgen, _op))


def evaluate(op, args):
    """The Python API's answer for one vector line, as text ('error' when it raises)."""
    a, b = (list(args) + ["_", "_"])[:2]
    if op == "local_tile":
        return _offset(hopgen.local_tile(hopgen.Layout(args[0]), _tiler(args[1]),
                                         hopgen.parse_tuple(args[2])))
    if op == "local_partition":
        return _offset(hopgen.local_partition(hopgen.Layout(args[0]), hopgen.Layout(args[1]),
                                              int(args[2])))
    if op == "recast_layout":
        return str(hopgen.recast_layout(hopgen.Layout(args[0]), int(args[1]), int(args[2])))
    if op not in OPS:
        raise KeyError(f"no Python mapping for vector op {op!r}")
    return str(OPS[op](a, b))


def _lines():
    by_op = defaultdict(list)
    for path in VECTORS:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            f = line.split("\t")
            by_op[f[0]].append((f"{path.name}:{n}", f[1:-1], f[-1]))
    return by_op


BY_OP = _lines()


def test_every_op_of_the_corpus_has_a_python_mapping():
    ops = {name for name, _, _ in hopgen.layout_ops()}
    for op in BY_OP:
        assert op in OPS or op in ("local_tile", "local_partition", "recast_layout"), op
    # every operation the C library knows is reachable from Python by its CuTe name
    missing = [op for op in ops if op not in OPS and op not in
               ("local_tile", "local_partition", "recast_layout")]
    assert not missing, missing


@pytest.mark.parametrize("op", sorted(BY_OP))
def test_vectors(op):
    bad = []
    for n, args, expected in BY_OP[op]:
        try:
            got = evaluate(op, args)
        except hopgen.HopgenError as e:
            got = "error"
            why = str(e)
        if got != expected:
            bad.append(f"{n}: {op} {args} -> {got} (expected {expected})"
                       + (f" [{why}]" if got == "error" else ""))
    assert not bad, f"{len(bad)} of {len(BY_OP[op])} differ:\n" + "\n".join(bad[:20])


def test_errors_carry_the_c_sentence():
    with pytest.raises(hopgen.HopgenError) as e:
        hopgen.Layout("(4,8):(1,4,2)")
    assert e.value.code in ("parse", "invalid") and e.value.sentence
    assert isinstance(e.value, ValueError)
    # the same sentence the C text entry point gives
    with pytest.raises(hopgen.HopgenError) as t:
        hopgen.layout_op("composition", "(6,4,(8,8)):(1,48,(192,6))", "(16,4):(1,16)")
    with pytest.raises(hopgen.HopgenError) as p:
        hopgen.composition(hopgen.Layout("(6,4,(8,8)):(1,48,(192,6))"), hopgen.Layout("(16,4):(1,16)"))
    assert p.value.sentence == t.value.sentence
