"""CuTe layout algebra with pycute's names and semantics, computed by libhopgen.

    >>> from hopgen import Layout, logical_divide
    >>> L = Layout("(8,16):(16,1)")          # or Layout((8, 16), (16, 1)), as in pycute
    >>> print(logical_divide(L, (2, 4)))
    ((2,4),(4,4)):((16,64),(1,4))

Shapes, strides and coordinates are Python ints and (nested) tuples, as in pycute; `None`
in a coordinate or a by-mode tiler plays CuTe's `_`. Every layout prints in hopgen's
canonical notation (`(4,8):(1,4)`, what `hopgen layout` prints), and every string argument
is parsed with the C parser, so any notation it takes works here: `_4` static integers,
spaces, `(4,)`, swizzled layouts `Sw<3,4,3> o 0 o (8,64):(64,1)`, by-mode tilers
`[4:1,_,(2,2):(1,4)]`. Failures raise hopgen.errors exceptions carrying the C sentence.
"""
from __future__ import annotations

import ctypes as C
from typing import Optional, Sequence, Tuple, Union

from . import _capi
from ._capi import fn
from .errors import CapacityError, InvalidError, UnsupportedError, check

IntTuple = Union[int, Tuple["IntTuple", ...]]

__all__ = [
    "Layout", "Swizzle", "ComposedLayout", "make_layout", "make_ordered_layout", "size",
    "cosize", "rank", "depth", "coalesce", "filter", "composition", "complement",
    "right_inverse", "left_inverse", "logical_divide", "zipped_divide", "tiled_divide",
    "flat_divide", "logical_product", "zipped_product", "tiled_product", "flat_product",
    "blocked_product", "raked_product", "crd2idx", "idx2crd", "slice_", "slice_and_offset",
    "local_tile", "local_partition", "max_common_vector", "max_common_layout", "upcast",
    "downcast", "recast_layout", "parse_tuple", "tuple_str", "parse_tiler", "layout_op",
    "layout_ops",
]

# ----------------------------------------------------------------------------- conversions


def _is_tuple(x) -> bool:
    return isinstance(x, (tuple, list))


def _to_ctuple(t, what: str = "tuple") -> _capi.Tuple:
    """Python int / nested tuple (None for `_`) -> hg_tuple_t in preorder."""
    out = _capi.Tuple()
    n = 0

    def put(arity: int, value: int) -> None:
        nonlocal n
        if n >= _capi.HG_TUPLE_MAX:
            raise CapacityError(f"{what} has more than {_capi.HG_TUPLE_MAX} nodes "
                                f"(integers plus tuples), hopgen's capacity")
        out.arity[n] = arity
        out.v[n] = value
        n += 1

    def rec(x) -> None:
        if _is_tuple(x):
            if len(x) > 127:
                raise CapacityError(f"{what}: a tuple of {len(x)} elements exceeds 127")
            put(len(x), 0)
            for e in x:
                rec(e)
        elif x is None or (isinstance(x, str) and x.strip() == "_"):
            put(_capi.HG_LEAF, _capi.HG_UNDERSCORE)
        elif isinstance(x, bool) or not hasattr(x, "__index__"):
            raise TypeError(f"{what}: expected an int or a tuple of ints, got {x!r}")
        else:
            v = x.__index__()
            if not -(2**63) < v < 2**63:
                raise InvalidError(f"{what}: {v} does not fit 64 bits")
            put(_capi.HG_LEAF, v)

    if isinstance(t, str):
        check(fn("hg_tuple_parse")(t.encode(), C.byref(out)), f"{what}: ")
        return out
    rec(t)
    out.n = n
    return out


def _from_ctuple(ct: _capi.Tuple) -> IntTuple:
    pos = 0

    def rec():
        nonlocal pos
        a, v = ct.arity[pos], ct.v[pos]
        pos += 1
        if a == _capi.HG_LEAF:
            return None if v == _capi.HG_UNDERSCORE else v
        return tuple(rec() for _ in range(a))

    return rec()


def _printed(printer, obj) -> str:
    size = 512
    while True:
        buf = C.create_string_buffer(size)
        need = printer(C.byref(obj), buf, size)
        if need < size:
            return buf.value.decode()
        size = need + 1


def parse_tuple(text: str) -> IntTuple:
    """An int tuple from the notation: "((2,4),8)" -> ((2, 4), 8); "_" -> None."""
    return _from_ctuple(_to_ctuple(text))


def tuple_str(t: IntTuple) -> str:
    """The canonical notation of an int tuple: ((2, 4), 8) -> "((2,4),8)", (4,) -> "(4)"."""
    return _printed(fn("hg_tuple_print"), _to_ctuple(t))


def _call(name: str, *args, context: str = ""):
    check(fn(name)(*args), context)


# ----------------------------------------------------------------------------- Layout


class _Pictured:
    """What Layout and ComposedLayout share: repr, format, and the pictures."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def show(self, file=None) -> str:
        """The layout as a table like cute::print_layout: rows are mode 0, columns the other
        modes. Printed to file (default stdout) unless file is False; returned either way."""
        return _show(self._composed(), None, False, file)

    def svg(self, tv=None, path: Optional[str] = None) -> str:
        """An SVG picture (cells coloured by value; with tv, a (thread,value) -> index layout,
        labelled T<thread>V<value>). Written to path when given; returned either way."""
        return _show(self._composed(), tv, True, path)

    def _repr_svg_(self) -> str:  # Jupyter
        return self.svg()


class Layout(_Pictured):
    """A CuTe layout: congruent shape and stride int tuples (pycute's Layout).

    Layout(shape, stride=None) with tuples (stride None: column-major, as pycute and CuTe's
    default LayoutLeft), or Layout("shape:stride") in the notation. L(crd) maps a coordinate
    (an int, a congruent tuple, or a partially flattened one) to an index; a coordinate with
    None slices (pycute's behaviour). len(L) is the rank, L[i] mode i.
    """

    __slots__ = ("shape", "stride", "_cl")

    def __init__(self, shape: Union[IntTuple, str, "Layout"], stride: Optional[IntTuple] = None):
        if isinstance(shape, Layout):
            if stride is not None:
                raise TypeError("Layout(layout, stride): a layout already has strides")
            self.shape, self.stride, self._cl = shape.shape, shape.stride, shape._cl
            return
        cl = _capi.LayoutC()
        if isinstance(shape, str):
            if stride is not None:
                raise TypeError("Layout(text, stride): the text already gives the strides")
            _call("hg_layout_parse", shape.encode(), C.byref(cl), context="Layout: ")
        elif stride is None:
            _call("hg_make_layout_col_major", C.byref(_to_ctuple(shape, "shape")), C.byref(cl),
                  context="Layout: ")
        else:
            _call("hg_make_layout", C.byref(_to_ctuple(shape, "shape")),
                  C.byref(_to_ctuple(stride, "stride")), C.byref(cl), context="Layout: ")
        self._set(cl)

    def _set(self, cl: _capi.LayoutC) -> None:
        self._cl = cl
        self.shape = _from_ctuple(cl.shape)
        self.stride = _from_ctuple(cl.stride)

    @classmethod
    def _from_c(cls, cl: _capi.LayoutC) -> "Layout":
        obj = cls.__new__(cls)
        obj._set(cl)
        return obj

    def _c(self) -> _capi.LayoutC:
        return self._cl

    # pycute's interface
    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = Layout(other)
        return isinstance(other, Layout) and self.shape == other.shape and \
            self.stride == other.stride

    def __hash__(self) -> int:
        return hash((self.shape, self.stride))

    def __len__(self) -> int:
        return rank(self)

    def __getitem__(self, i: int) -> "Layout":
        if not isinstance(i, int):
            raise TypeError(f"Layout indices are mode numbers, got {i!r}")
        r = len(self)
        if not -r <= i < r:
            raise IndexError(f"mode {i} of the rank-{r} layout {self}")
        return _layout_fn("hg_layout_mode", self._cl, i % r, context="mode: ")

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __call__(self, *crd):
        if len(crd) == 1:
            crd = crd[0]
        if _has_none(crd):
            return slice_(crd, self)
        return crd2idx(crd, self)

    def size(self) -> int:
        return size(self)

    def cosize(self) -> int:
        return cosize(self)

    @property
    def rank(self) -> int:
        return rank(self)

    @property
    def depth(self) -> int:
        return depth(self)

    def __str__(self) -> str:
        return _printed(fn("hg_layout_print"), self._cl)

    def _composed(self) -> "ComposedLayout":
        return ComposedLayout._from_layout(self)


def _has_none(x) -> bool:
    if x is None:
        return True
    return _is_tuple(x) and any(_has_none(e) for e in x)


def _as_layout(x, what: str = "layout") -> Layout:
    if isinstance(x, Layout):
        return x
    if isinstance(x, str):
        return Layout(x)
    if isinstance(x, ComposedLayout):
        raise UnsupportedError(f"{what}: a swizzled layout is not accepted here ({x})")
    if x is None:
        raise TypeError(f"{what}: expected a Layout, got None")
    return Layout(x)  # an int or a shape: compact column-major, as pycute's Layout(shape)


# ----------------------------------------------------------------------------- swizzles


class Swizzle:
    """Swizzle<B,M,S> (pycute's Swizzle(bits, base, shift)): XOR the B bits at [M+S, M+S+B)
    of an offset into the bits at [M, M+B). S = 0 is refused, as pycute refuses it."""

    __slots__ = ("bits", "base", "shift", "_cs")

    def __init__(self, bits: int, base: int, shift: int):
        cs = _capi.SwizzleC()
        _call("hg_swizzle_make", int(bits), int(base), int(shift), C.byref(cs),
              context="Swizzle: ")
        if shift == 0:
            raise InvalidError(f"Swizzle<{bits},{base},{shift}>: a shift of 0 is rejected, as "
                               "the reference pycute rejects it (use B = 0 with a non-zero shift "
                               "for the identity)")
        self.bits, self.base, self.shift, self._cs = int(bits), int(base), int(shift), cs

    @classmethod
    def _from_c(cls, cs: _capi.SwizzleC) -> "Swizzle":
        obj = cls.__new__(cls)
        obj.bits, obj.base, obj.shift, obj._cs = cs.b, cs.m, cs.s, cs
        return obj

    def __call__(self, offset: int) -> int:
        return fn("hg_swizzle_apply")(self._cs, int(offset))

    def size(self) -> int:
        return 1 << (self.bits + self.base + abs(self.shift))

    def cosize(self) -> int:
        return self.size()

    def __eq__(self, other) -> bool:
        return isinstance(other, Swizzle) and \
            (self.bits, self.base, self.shift) == (other.bits, other.base, other.shift)

    def __hash__(self) -> int:
        return hash((self.bits, self.base, self.shift))

    def __str__(self) -> str:
        return f"Sw<{self.bits},{self.base},{self.shift}>"

    def __repr__(self) -> str:
        return f"Swizzle({self.bits},{self.base},{self.shift})"


class ComposedLayout(_Pictured):
    """swizzle o offset o layout (pycute's ComposedLayout(layoutB, offset, layoutA), CuTe's
    ComposedLayout<Swizzle, offset, Layout>), or ComposedLayout("Sw<3,4,3> o 0 o ...")."""

    __slots__ = ("layoutB", "offset", "layoutA", "_cc")

    def __init__(self, layoutB: Union[Swizzle, str], offset: int = 0,
                 layoutA: Optional[Layout] = None):
        cc = _capi.Composed()
        if isinstance(layoutB, str) and layoutA is None:
            _call("hg_composed_parse", layoutB.encode(), C.byref(cc), context="ComposedLayout: ")
        else:
            if not isinstance(layoutB, Swizzle):
                raise UnsupportedError("ComposedLayout: hopgen composes a Swizzle with a layout; "
                                       f"layoutB = {layoutB!r} is not a Swizzle")
            cc.sw = layoutB._cs
            cc.offset = int(offset)
            cc.layout = _as_layout(layoutA, "layoutA")._c()
        self._set(cc)

    def _set(self, cc: _capi.Composed) -> None:
        self._cc = cc
        self.layoutB = Swizzle._from_c(cc.sw)
        self.offset = cc.offset
        self.layoutA = Layout._from_c(cc.layout)

    @classmethod
    def _from_c(cls, cc: _capi.Composed) -> "ComposedLayout":
        obj = cls.__new__(cls)
        obj._set(cc)
        return obj

    @classmethod
    def _from_layout(cls, lay: Layout) -> "ComposedLayout":
        cc = _capi.Composed()
        cc.sw.m, cc.sw.s = 0, 1
        cc.layout = lay._c()
        return cls._from_c(cc)

    # CuTe's names for the parts
    @property
    def swizzle(self) -> Swizzle:
        return self.layoutB

    @property
    def layout(self) -> Layout:
        return self.layoutA

    @property
    def shape(self) -> IntTuple:
        return self.layoutA.shape

    def __eq__(self, other) -> bool:
        return isinstance(other, ComposedLayout) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    def __len__(self) -> int:
        return len(self.layoutA)

    def __getitem__(self, i: int) -> "ComposedLayout":
        cc = _capi.Composed()
        cc.sw, cc.offset, cc.layout = self._cc.sw, self._cc.offset, self.layoutA[i]._c()
        return ComposedLayout._from_c(cc)

    def __call__(self, *crd) -> int:
        if len(crd) == 1:
            crd = crd[0]
        out = C.c_int64()
        _call("hg_composed_eval", C.byref(self._cc), C.byref(_to_ctuple(crd, "coordinate")),
              C.byref(out), context=f"{self}: ")
        return out.value

    def size(self) -> int:
        return size(self.layoutA)

    def cosize(self) -> int:
        return cosize(self)

    def __str__(self) -> str:
        return _printed(fn("hg_composed_print"), self._cc)

    def _composed(self) -> "ComposedLayout":
        return self


AnyLayout = Union[Layout, ComposedLayout]


def _show(cl: ComposedLayout, tv, svg: bool, dest) -> str:
    tvc = None if tv is None else C.byref(_as_layout(tv, "tv")._c())
    size = 1 << 16
    need = C.c_size_t()
    while True:
        buf = C.create_string_buffer(size)
        st = fn("hg_layout_picture")(C.byref(cl._cc), tvc, svg, buf, size, C.byref(need))
        if st.code == 4 and need.value >= size:  # HG_ERR_CAPACITY: grow and retry
            size = need.value + 1
            continue
        check(st, "svg: " if svg else "show: ")
        text = buf.value.decode()
        break
    if svg and isinstance(dest, str):
        with open(dest, "w") as f:
            f.write(text)
    elif not svg and dest is not False:
        import sys
        (dest or sys.stdout).write(text)
    return text


# ----------------------------------------------------------------------------- tilers


def parse_tiler(text: str):
    """A tiler from the notation: a Layout, or for a by-mode list "[4:1,_,2:1]" a tuple of
    Layouts with None for `_`, nested tuples for nested lists ("[[2:1,3:1],4:1]")."""
    t = _capi.Tiler()
    _call("hg_tiler_parse", text.encode(), C.byref(t), context="tiler: ")
    if t.rank == 0:
        return Layout._from_c(t.mode[0])
    return _tiler_list(t, 0, t.rank)[0]


def _tiler_list(t: _capi.Tiler, node: int, count: int):
    """The by-mode list of count slots starting at preorder node `node`, and the node after
    it (hg_tiler_t keeps nested lists in preorder, sub[i] > 0 marking a list)."""
    out = []
    for _ in range(count):
        if t.sub[node] > 0:
            inner, node = _tiler_list(t, node + 1, t.sub[node])
            out.append(inner)
            continue
        out.append(None if t.skip[node] else Layout._from_c(t.mode[node]))
        node += 1
    return tuple(out), node


def _to_tiler(b, what: str = "tiler") -> _capi.Tiler:
    """pycute's tiler forms: a Layout; an int n (n:1); a tuple, by mode, of Layouts, ints,
    None (leave the mode alone) and nested tuples (a tiler of that mode's sub-modes); or the
    notation as a string."""
    t = _capi.Tiler()
    if isinstance(b, str):
        _call("hg_tiler_parse", b.encode(), C.byref(t), context=f"{what}: ")
        return t
    if isinstance(b, Layout):
        t.rank = 0
        t.mode[0] = b._c()
        return t
    if _is_tuple(b):
        t.rank = len(b)
        _fill_tiler_list(t, b, 0, what)
        return t
    if isinstance(b, ComposedLayout):
        raise UnsupportedError(f"{what}: a swizzled layout cannot be a tiler ({b})")
    t.mode[0] = _as_layout(b, what)._c()
    return t


def _fill_tiler_list(t: _capi.Tiler, slots, node: int, what: str) -> int:
    """Write the by-mode list `slots` into t's preorder nodes from `node`; returns the next
    free node."""
    if len(slots) == 0:
        raise InvalidError(f"{what}: an empty by-mode tiler")
    for i, e in enumerate(slots):
        if node >= _capi.HG_TILER_MAX:
            raise CapacityError(f"{what}: a tiler holds at most HG_TILER_MAX = "
                                f"{_capi.HG_TILER_MAX} nodes (layouts, None and nested lists "
                                "together)")
        me = node
        t.skip[me], t.sub[me], node = False, 0, node + 1
        if e is None or (isinstance(e, str) and e.strip() == "_"):
            t.skip[me] = True
            t.mode[me] = Layout(1, 0)._c()
        elif _is_tuple(e):
            t.sub[me] = len(e)
            t.mode[me] = Layout(1, 0)._c()
            node = _fill_tiler_list(t, e, node, f"{what} mode {i}")
        else:
            t.mode[me] = _as_layout(e, f"{what} mode {i}")._c()
    return node


# ----------------------------------------------------------------------------- functions


def _layout_fn(cname: str, *inputs, context: str) -> Layout:
    out = _capi.LayoutC()
    _call(cname, *[C.byref(x) if isinstance(x, C.Structure) else x for x in inputs],
          C.byref(out), context=context)
    return Layout._from_c(out)


def make_layout(*args) -> Layout:
    """pycute: make_layout(L0, L1, ...) concatenates layouts as modes (also given one list of
    them). CuTe C++: make_layout(shape[, stride]) with stride a tuple, "col" (default) or
    "row"."""
    if len(args) == 1 and _is_tuple(args[0]) and args[0] and \
            all(isinstance(x, (Layout, str)) for x in args[0]):
        args = tuple(args[0])
    if args and all(isinstance(x, Layout) or (isinstance(x, str) and ":" in x) for x in args):
        ls = [_as_layout(x) for x in args]
        arr = (_capi.LayoutC * len(ls))(*[x._c() for x in ls])
        return _layout_fn("hg_layout_concat", len(ls), arr, context="make_layout: ")
    if not 1 <= len(args) <= 2:
        raise TypeError("make_layout takes layouts, or a shape and an optional stride")
    shape = _to_ctuple(args[0], "shape")
    stride = args[1] if len(args) == 2 else "col"
    if stride == "col":
        return _layout_fn("hg_make_layout_col_major", shape, context="make_layout: ")
    if stride == "row":
        return _layout_fn("hg_make_layout_row_major", shape, context="make_layout: ")
    return _layout_fn("hg_make_layout", shape, _to_ctuple(stride, "stride"),
                      context="make_layout: ")


def make_ordered_layout(shape: IntTuple, order: IntTuple) -> Layout:
    """A compact layout whose mode with the smallest order value has stride 1."""
    return _layout_fn("hg_make_ordered_layout", _to_ctuple(shape, "shape"),
                      _to_ctuple(order, "order"), context="make_ordered_layout: ")


def size(x) -> int:
    """Size of a layout's domain, or the product of an int tuple (pycute's size)."""
    if isinstance(x, ComposedLayout):
        x = x.layoutA
    if isinstance(x, (Layout, str)):
        out = C.c_int64()
        _call("hg_size", C.byref(_as_layout(x)._c()), C.byref(out), context="size: ")
        return out.value
    return _tuple_product(x)


def _tuple_product(x) -> int:
    if _is_tuple(x):
        p = 1
        for e in x:
            p *= _tuple_product(e)
        return p
    return int(x)


def cosize(x) -> int:
    """Size of the codomain: L(size - 1) + 1 (the swizzle's span for a swizzled layout's
    outer function as pycute defines it)."""
    if isinstance(x, ComposedLayout):
        return x.layoutB.cosize()
    out = C.c_int64()
    _call("hg_cosize", C.byref(_as_layout(x)._c()), C.byref(out), context="cosize: ")
    return out.value


def rank(x) -> int:
    """Number of top-level modes (1 for an int)."""
    if isinstance(x, ComposedLayout):
        x = x.layoutA
    if isinstance(x, (Layout, str)):
        return fn("hg_layout_rank")(C.byref(_as_layout(x)._c()))
    return len(x) if _is_tuple(x) else 1


def depth(x) -> int:
    """Nesting depth (0 for an int)."""
    if isinstance(x, ComposedLayout):
        x = x.layoutA
    if isinstance(x, (Layout, str)):
        return fn("hg_layout_depth")(C.byref(_as_layout(x)._c()))
    return 1 + max((depth(e) for e in x), default=0) if _is_tuple(x) else 0


def coalesce(layout, profile: Optional[IntTuple] = None) -> Layout:
    """Merge modes; with a profile, within each of its modes (pycute's coalesce)."""
    a = _as_layout(layout)
    if profile is None:
        return _layout_fn("hg_coalesce", a._c(), context="coalesce: ")
    return _layout_fn("hg_coalesce_profile", a._c(), _to_ctuple(profile, "profile"),
                      context="coalesce: ")


def filter(layout, profile: Optional[IntTuple] = None) -> Layout:  # noqa: A001 (pycute's name)
    """Drop stride-0 and size-1 modes, then coalesce; with a profile, by mode (pycute)."""
    a = _as_layout(layout)
    if profile is None:
        return _layout_fn("hg_filter", a._c(), context="filter: ")
    if not _is_tuple(profile):
        return filter(a)
    modes = [filter(a[i], profile[i]) for i in range(len(profile))]
    return make_layout(*modes, *[a[i] for i in range(len(profile), len(a))])


def composition(a, b):
    """A o B: B a Layout, an int, a by-mode tuple, or the notation; A may be swizzled."""
    if b is None:
        return a if not isinstance(a, str) else _parse_any(a)
    if isinstance(a, str):
        a = _parse_any(a)
    if isinstance(a, ComposedLayout):
        t = _to_tiler(b, "composition B")
        if t.rank != 0:
            raise UnsupportedError("composition of a swizzled layout takes a layout on the "
                                   f"right, not the by-mode tiler {b!r}")
        out = _capi.Composed()
        _call("hg_composed_composition", C.byref(a._cc), C.byref(t.mode[0]), C.byref(out),
              context="composition: ")
        return ComposedLayout._from_c(out)
    return _layout_fn("hg_composition_tiler", _as_layout(a)._c(), _to_tiler(b, "composition B"),
                      context="composition: ")


def _parse_any(text: str) -> AnyLayout:
    cc = _capi.Composed()
    _call("hg_composed_parse", text.encode(), C.byref(cc), context="layout: ")
    if cc.sw.b == 0 and cc.offset == 0:
        return Layout._from_c(cc.layout)
    return ComposedLayout._from_c(cc)


def complement(layout, max_idx: int = 1) -> Layout:
    """The layout of the rest of [0, max_idx) (pycute's complement; CuTe's cosize_bound)."""
    return _layout_fn("hg_complement", _as_layout(layout)._c(), int(max_idx),
                      context="complement: ")


def right_inverse(layout) -> Optional[Layout]:
    """R with L(R(i)) == i."""
    if layout is None:
        return None
    return _layout_fn("hg_right_inverse", _as_layout(layout)._c(), context="right_inverse: ")


def left_inverse(layout) -> Optional[Layout]:
    """R with R(L(i)) == i."""
    if layout is None:
        return None
    return _layout_fn("hg_left_inverse", _as_layout(layout)._c(), context="left_inverse: ")


def _tiler_op(cname: str, doc: str):
    def op(layout, tiler) -> Layout:
        name = cname[3:]
        return _layout_fn(cname, _as_layout(layout)._c(), _to_tiler(tiler, f"{name} tiler"),
                          context=f"{name}: ")

    op.__name__ = cname[3:]
    op.__qualname__ = cname[3:]
    op.__doc__ = doc + "\n\ntiler: a Layout, an int, a by-mode tuple (None keeps a mode) or text."
    return op


logical_divide = _tiler_op("hg_logical_divide", "Split each tiler mode into (tile, rest).")
zipped_divide = _tiler_op("hg_zipped_divide", "((tiles...), (rests...)).")
tiled_divide = _tiler_op("hg_tiled_divide", "((tiles...), rest0, rest1, ...).")
flat_divide = _tiler_op("hg_flat_divide", "(tile0, tile1, ..., rest0, rest1, ...).")
logical_product = _tiler_op("hg_logical_product", "(layout, layout repeated over the tiler).")
zipped_product = _tiler_op("hg_zipped_product", "((blocks...), (repeats...)).")
tiled_product = _tiler_op("hg_tiled_product", "((blocks...), repeat0, repeat1, ...).")
flat_product = _tiler_op("hg_flat_product", "(block0, ..., repeat0, ...).")


def blocked_product(block, tiler) -> Layout:
    """Rank-preserving product, blocks contiguous: mode i is (block_i, tiler_i)."""
    return _layout_fn("hg_blocked_product", _as_layout(block)._c(),
                      _as_layout(tiler, "tiler")._c(), context="blocked_product: ")


def raked_product(block, tiler) -> Layout:
    """Rank-preserving product, blocks interleaved: mode i is (tiler_i, block_i)."""
    return _layout_fn("hg_raked_product", _as_layout(block)._c(),
                      _as_layout(tiler, "tiler")._c(), context="raked_product: ")


def crd2idx(crd, shape, stride=None) -> int:
    """Coordinate -> index. pycute's form crd2idx(crd, shape, stride=None) (column-major
    strides by default), or crd2idx(crd, layout) with a Layout / ComposedLayout / text."""
    if isinstance(shape, ComposedLayout):
        return shape(crd)
    if isinstance(shape, str):
        lay = _parse_any(shape)
        if isinstance(lay, ComposedLayout):
            return lay(crd)
        shape = lay
    lay = shape if isinstance(shape, Layout) else Layout(shape, stride)
    out = C.c_int64()
    _call("hg_crd2idx", C.byref(lay._c()), C.byref(_to_ctuple(crd, "coordinate")),
          C.byref(out), context=f"crd2idx in {lay}: ")
    return out.value


def idx2crd(idx, shape, stride=None) -> IntTuple:
    """Index -> natural coordinate congruent to shape (colexicographic, CuTe's order). With
    a stride, pycute's general form: (idx // stride) % shape per mode."""
    if stride is None and not _is_tuple(idx):
        out = _capi.Tuple()
        _call("hg_idx2crd", C.byref(_to_ctuple(shape, "shape")), int(idx), C.byref(out),
              context="idx2crd: ")
        return _from_ctuple(out)
    if stride is None:
        stride = Layout(shape).stride
    if _is_tuple(idx):
        return tuple(idx2crd(i, s, d) for i, s, d in zip(idx, shape, stride))
    if _is_tuple(shape):
        return tuple(idx2crd(idx, s, d) for s, d in zip(shape, stride))
    return (idx // stride) % shape


def slice_and_offset(crd, layout) -> Tuple[Layout, int]:
    """The sub-layout of the None (`_`) modes of crd, and the offset of the fixed ones."""
    out, off = _capi.LayoutC(), C.c_int64()
    lay = _as_layout(layout)
    _call("hg_slice", C.byref(lay._c()), C.byref(_to_ctuple(crd, "coordinate")), C.byref(out),
          C.byref(off), context=f"slice of {lay}: ")
    return Layout._from_c(out), off.value


def slice_(crd, layout) -> Layout:
    """The sub-layout of the None (`_`) modes of crd (pycute's slice_)."""
    return slice_and_offset(crd, layout)[0]


def local_tile(layout, tiler, coord) -> Tuple[Layout, int]:
    """Tile `coord` of zipped_divide(layout, tiler) and the offset of its first element."""
    out, off = _capi.LayoutC(), C.c_int64()
    _call("hg_local_tile", C.byref(_as_layout(layout)._c()), C.byref(_to_tiler(tiler)),
          C.byref(_to_ctuple(coord, "coordinate")), C.byref(out), C.byref(off),
          context="local_tile: ")
    return Layout._from_c(out), off.value


def local_partition(layout, thr_layout, idx: int) -> Tuple[Layout, int]:
    """What thread idx of thr_layout owns of layout (CuTe's outer partition), and the offset."""
    out, off = _capi.LayoutC(), C.c_int64()
    _call("hg_local_partition", C.byref(_as_layout(layout)._c()),
          C.byref(_as_layout(thr_layout, "thr_layout")._c()), int(idx), C.byref(out),
          C.byref(off), context="local_partition: ")
    return Layout._from_c(out), off.value


def max_common_vector(a, b) -> int:
    """Length of the common contiguous run of two layouts."""
    out = C.c_int64()
    _call("hg_max_common_vector", C.byref(_as_layout(a)._c()), C.byref(_as_layout(b)._c()),
          C.byref(out), context="max_common_vector: ")
    return out.value


def max_common_layout(a, b) -> Layout:
    """Layout of the common contiguous run of two layouts."""
    return _layout_fn("hg_max_common_layout", _as_layout(a)._c(), _as_layout(b)._c(),
                      context="max_common_layout: ")


def upcast(layout, n: int) -> Layout:
    """Layout of n-times wider elements."""
    return _layout_fn("hg_upcast", _as_layout(layout)._c(), int(n), context="upcast: ")


def downcast(layout, n: int) -> Layout:
    """Layout of n-times narrower elements."""
    return _layout_fn("hg_downcast", _as_layout(layout)._c(), int(n), context="downcast: ")


def recast_layout(layout, old_bits: int, new_bits: int) -> Layout:
    """Recast a layout of old_bits-wide elements to new_bits-wide ones."""
    return _layout_fn("hg_recast_layout", _as_layout(layout)._c(), int(old_bits),
                      int(new_bits), context="recast_layout: ")


# ----------------------------------------------------------------------------- by name


def layout_ops() -> Sequence[Tuple[str, str, str]]:
    """(name, usage, summary) of every operation `hopgen layout` knows."""
    class Info(C.Structure):
        _fields_ = [("name", C.c_char_p), ("min_args", C.c_int), ("max_args", C.c_int),
                    ("usage", C.c_char_p), ("summary", C.c_char_p)]

    f = _capi.lib().hg_layout_op_info
    f.restype, f.argtypes = C.POINTER(Info), [C.c_int]
    out, i = [], 0
    while True:
        p = f(i)
        if not p:
            return out
        out.append((p[0].name.decode(), p[0].usage.decode(), p[0].summary.decode()))
        i += 1


def layout_op(op: str, *args: str) -> str:
    """Run an operation on text arguments and return its text result: exactly what
    `hopgen layout OP ARGS...` prints (hg_layout_op)."""
    argv = (C.c_char_p * max(1, len(args)))(*[str(a).encode() for a in args])
    size = 1 << 14
    buf = C.create_string_buffer(size)
    _call("hg_layout_op", op.encode(), len(args), argv, buf, size, context=f"{op}: ")
    return buf.value.decode()
