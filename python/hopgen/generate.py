"""Generation from Python, no GPU needed: plans as dicts (the JSON the C library writes,
the same objects as `hopgen plan ... --json`), and the PTX / MLIR text of GEMM and TMA
kernels (what `hopgen gemm --emit` and `hopgen tma --emit` write)."""
from __future__ import annotations

import ctypes as C
import json
from dataclasses import dataclass, field
from typing import Optional, Sequence, Tuple, Union

from . import _capi
from ._capi import fn
from .errors import InvalidError, check

__all__ = ["plan_tma", "plan_mma", "plan_gemm", "gemm_config", "GemmConfig", "gemm_kernel",
           "gemm_ptx", "gemm_mlir", "tma_kernel", "ptxas_check", "Kernel", "MAINLOOPS"]

MAINLOOPS = tuple(_capi.MAINLOOPS)  # the names `mainloop=` takes

# ----------------------------------------------------------------------------- names

_TORCH_DTYPE_NAMES = {"bfloat16": "bf16", "float16": "f16", "half": "f16", "float32": "f32",
                      "float": "f32", "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2",
                      "uint8": "u8", "int8": "s8", "int32": "s32", "float64": "f64",
                      "uint16": "u16", "uint32": "u32", "uint64": "u64", "int16": "u16"}


def dtype_code(dtype, what: str = "dtype") -> int:
    """hg_dtype_t of a name ("bf16", "e4m3", ...) or a torch dtype (torch.bfloat16, ...)."""
    if isinstance(dtype, int):
        return dtype
    name = str(dtype)
    if name.startswith("torch."):
        name = _TORCH_DTYPE_NAMES.get(name[6:], name)
    out = C.c_int()
    check(fn("hg_dtype_parse")(name.encode(), C.byref(out)), f"{what}: ")
    return out.value


def dtype_name(code: int) -> str:
    return _capi.DTYPES[code]


def _swizzle_code(sw, what: str = "swizzle") -> int:
    if isinstance(sw, int) and sw in (0, 1, 2, 3):
        return sw
    key = {"none": "none", "0": "none", "32b": "32B", "32": "32B", "64b": "64B", "64": "64B",
           "128b": "128B", "128": "128B"}.get(str(sw).lower())
    if key is None:
        raise InvalidError(f"{what} = {sw!r}: expected none, 32B, 64B or 128B")
    return _capi.SWIZZLE_MODES[key]


def _major(m, what: str) -> int:
    key = str(m).lower()
    if key in ("k",):
        return 0
    if key in ("mn", "m", "n"):
        return 1
    raise InvalidError(f"{what} = {m!r}: expected 'k' or 'mn'")


def _backend(be) -> int:
    if be not in _capi.BACKENDS:
        raise InvalidError(f"backend = {be!r}: expected 'ptx' or 'mlir'")
    return _capi.BACKENDS[be]


def _tma_op(op) -> int:
    if op not in _capi.TMA_OPS:
        raise InvalidError(f"op = {op!r}: expected one of {', '.join(_capi.TMA_OPS)}")
    return _capi.TMA_OPS.index(op)


def _text(t: _capi.Text) -> str:
    return C.string_at(t.data, t.len).decode() if t.data else ""


def _json_of(writer, *args) -> dict:
    size = 1 << 16
    while True:
        buf = C.create_string_buffer(size)
        need = writer(*args, buf, size)
        if need < size:
            return json.loads(buf.value.decode())
        size = need + 1


def _ints(values, n: int, what: str, lo: int = -(2**63), hi: int = 2**63 - 1):
    vals = [int(v) for v in values]
    if len(vals) != n:
        raise InvalidError(f"{what} has {len(vals)} entries, expected {n}")
    for v in vals:
        if not lo <= v <= hi:
            raise InvalidError(f"{what}: {v} is outside {lo}..{hi}")
    return vals


# ----------------------------------------------------------------------------- TMA plans


def _tma_tensor(dtype, shape: Sequence[int], stride: Optional[Sequence[int]],
                base_align: int = 0) -> _capi.TmaTensor:
    g = _capi.TmaTensor()
    g.dtype = dtype_code(dtype)
    r = len(shape)
    if not 1 <= r <= _capi.HG_TMA_MAX_RANK:
        raise InvalidError(f"shape has {r} modes; TMA takes 1 to {_capi.HG_TMA_MAX_RANK}")
    if stride is None:  # packed row-major: the last mode contiguous
        stride, acc = [0] * r, 1
        for i in reversed(range(r)):
            stride[i], acc = acc, acc * int(shape[i])
    g.rank = r
    for i, (s, d) in enumerate(zip(_ints(shape, r, "shape"), _ints(stride, r, "stride"))):
        g.shape[i], g.stride[i] = s, d
    g.base_align_bytes = base_align
    return g


def _smem_layout(g: _capi.TmaTensor, tile: Sequence[int], swizzle) -> _capi.Composed:
    t = (C.c_int * _capi.HG_TMA_MAX_RANK)(*_ints(tile, g.rank, "tile", 1, 65536))
    out = _capi.Composed()
    if swizzle in (None, "auto"):
        # The widest swizzle whose rows tile the contiguous extent without padding (none
        # for rank 1), as `hopgen plan tma` chooses.
        order = [3, 2, 1, 0] if g.rank > 1 else [0]
        last = None
        for sw in order:
            last = fn("hg_tma_smem_layout")(C.byref(g), t, sw, C.byref(out))
            if last.code == 0 and not fn("hg_tma_smem_padded")(C.byref(g), t, sw):
                return out
        check(last, "tile: ")
        return out
    check(fn("hg_tma_smem_layout")(C.byref(g), t, _swizzle_code(swizzle), C.byref(out)),
          "tile: ")
    return out


def plan_tma(dtype, shape: Sequence[int], tile: Optional[Sequence[int]] = None, *,
             stride: Optional[Sequence[int]] = None, op: str = "load", swizzle="auto",
             layout=None, cluster: int = 1, mcast_rank_stride: int = 0,
             origin: Optional[Sequence[int]] = None, oob_nan: bool = False,
             l2_promotion: int = -1, base_align: int = 0) -> dict:
    """The TMA plan (TiledCopy) of a tile of a global tensor, as a dict: what `hopgen plan
    tma --json` prints. shape/stride are in elements in the order you name the modes (stride
    None: packed row-major); the stage layout is `layout` (a Layout / ComposedLayout / text)
    or hopgen's for `tile` with `swizzle` ("auto": the widest that fits)."""
    from .layout import ComposedLayout, Layout

    g = _tma_tensor(dtype, shape, stride, base_align)
    if layout is not None:
        if isinstance(layout, Layout):
            layout = ComposedLayout._from_layout(layout)
        elif isinstance(layout, str):
            layout = ComposedLayout(layout)
        smem = layout._cc
    elif tile is None:
        raise InvalidError("plan_tma needs tile= or layout=")
    else:
        smem = _smem_layout(g, tile, swizzle)
    opts = fn("hg_tma_options_default")(_tma_op(op))
    opts.cluster, opts.mcast_rank_stride = int(cluster), int(mcast_rank_stride)
    opts.oob_nan, opts.l2_promotion = bool(oob_nan), int(l2_promotion)
    org = None
    if origin is not None:
        opts.origin_known = True
        vals = _ints(origin, g.rank, "origin", -(2**31), 2**31 - 1)
        for i, v in enumerate(vals):
            opts.origin[i] = v
        org = (C.c_int32 * _capi.HG_TMA_MAX_RANK)(*vals)
    plan = _capi.TmaPlan()
    check(fn("hg_tma_plan_make")(C.byref(g), C.byref(smem), C.byref(opts), C.byref(plan)),
          "plan_tma: ")
    return _json_of(fn("hg_tma_plan_json"), C.byref(g), C.byref(plan), org)


# ----------------------------------------------------------------------------- MMA plans


def plan_mma(a="bf16", b=None, acc="f32", *, tile: Sequence[int] = (128, 256, 64),
             warpgroups: Union[int, Tuple[int, int]] = 1, a_major: str = "k",
             b_major: str = "k", swizzle="auto", a_swizzle=None, b_swizzle=None,
             a_regs: bool = False, atom_n: int = 0, smem_a: int = 0,
             smem_b: Optional[int] = None) -> dict:
    """The TiledMma of a CTA tile as a dict: what `hopgen plan mma --json` prints (the wgmma
    atom, operand stage layouts, every descriptor, the accumulator's TV layout)."""
    s = _capi.TiledMmaSpec()
    s.a, s.b, s.acc = dtype_code(a, "a"), dtype_code(b if b is not None else a, "b"), \
        dtype_code(acc, "acc")
    s.tile_m, s.tile_n, s.tile_k = _ints(tile, 3, "tile", 1, 1 << 20)
    wg = (warpgroups, 1) if isinstance(warpgroups, int) else tuple(warpgroups)
    s.wg_m, s.wg_n = _ints(wg, 2, "warpgroups", 1, 64)
    s.a_major, s.b_major = _major(a_major, "a_major"), _major(b_major, "b_major")
    s.a_regs, s.atom_n = bool(a_regs), int(atom_n)
    sa = a_swizzle if a_swizzle is not None else swizzle
    sb = b_swizzle if b_swizzle is not None else swizzle
    tm = _capi.TiledMma()
    if sa in (None, "auto") or sb in (None, "auto"):
        s.auto_swizzle = True
        check(fn("hg_tiled_mma_make")(C.byref(s), C.byref(tm)), "plan_mma: ")
        s.a_swizzle = tm.a_op.swizzle if sa in (None, "auto") else _swizzle_code(sa, "a_swizzle")
        s.b_swizzle = tm.b_op.swizzle if sb in (None, "auto") else _swizzle_code(sb, "b_swizzle")
    else:
        s.a_swizzle, s.b_swizzle = _swizzle_code(sa, "a_swizzle"), _swizzle_code(sb, "b_swizzle")
    s.auto_swizzle = False
    check(fn("hg_tiled_mma_make")(C.byref(s), C.byref(tm)), "plan_mma: ")
    if smem_b is None:
        smem_b = smem_a + (tm.a_op.stage_bytes + 1023) // 1024 * 1024
    return _json_of(fn("hg_tiled_mma_json"), C.byref(tm), int(smem_a), int(smem_b))


# ----------------------------------------------------------------------------- GEMM


def mainloop_code(name, what: str = "mainloop") -> int:
    """hg_gemm_mainloop_t of a name ("auto", "tma-wgmma", "cpasync-wgmma", "tma-mmasync",
    "tma-ldmatrix-wgmma-rs", "ldg-mmasync"); a ParseError with the C sentence for any other."""
    if name is None:
        return 0
    out = C.c_int()
    check(fn("hg_gemm_mainloop_parse")(str(name).encode(), C.byref(out)), f"{what}: ")
    return out.value


# hg_gemm_config_t.promote_overlap's flags and block_scales' values (kernels.h)
_PROMOTE_STAGGER, _PROMOTE_DOUBLE, _PROMOTE_TURNS, _PROMOTE_AHEAD = 1, 2, 4, 8
_BLOCK_SCALES_GLOBAL, _BLOCK_SCALES_SMEM = 0, 1
# hg_gelu_alg_t's values (builders.h), by hg_gelu_alg_name
GELU_FORMULAS = ("poly7", "as", "poly5", "poly5t")


@dataclass(frozen=True)
class GemmConfig:
    """A GEMM kernel configuration; str() is hopgen's text form
    "128x256x64,c2x1,s4,coop,m8,e0[,kS|,kSa|,kSr|,sk][,ps][,pd][,pt][,pa][,bs][,gas|,gp5][,ds][,mainloop]"
    (what --config takes; split-K is printed when splits > 1, stream-K when set, the fp8
    promotion variants, staged block scales, a GELU formula other than poly7 and direct
    stores when set, the mainloop when not "auto"; docs/gemm-config.md),
    GemmConfig.parse(text) reads it; every field survives the round trip."""
    tile_m: int
    tile_n: int
    tile_k: int
    cluster_m: int = 1
    cluster_n: int = 1
    stages: int = 4
    schedule: str = "coop"  # or "pingpong"
    raster: str = "m"
    raster_group: int = 8
    epi_n: int = 0
    mainloop: str = "auto"  # or one of MAINLOOPS: how operands reach which MMA
    splits: int = 0  # split-K: each tile's K over this many CTAs (0 or 1: none)
    # fp8 accurate accumulation: the second consumer warpgroup promotes half a group later
    promote_stagger: bool = False
    # stream-K: the grid's CTAs share the last partial wave's k-blocks (not with splits)
    stream_k: bool = False
    # fp8 accurate accumulation: a second set of partial sums, promoted while the next
    # k-block's MMAs run ("pd"), and the consumers taking turns at the MMAs ("pt")
    promote_double: bool = False
    promote_turns: bool = False
    # fp8 block-wise scales staged in shared memory by the producer ("bs"), not read by the
    # consumers from global memory
    staged_scales: bool = False
    # split-K's partials added by atomics, the last split running the epilogue ("kSa": one
    # launch, D's bits not reproducible run to run), not summed by the reduction pass
    split_atomic: bool = False
    # the erf GELU's formula where the epilogue has one: "poly7" (default), "as" or "poly5"
    # ("gas", "gp5"); measured alternatives (docs/epilogue.md)
    gelu: str = "poly7"
    # D and aux stored element by element where they would be staged or stored by TMA ("ds")
    direct_stores: bool = False
    # split-K reduced inside the GEMM ("kSr"): the splits of a tile wait for each other, then
    # each sums its share of the tile over every split in split order (one launch, the
    # reduction pass's bits)
    split_scatter: bool = False
    # fp8 accurate accumulation: the next unit's first k-block issued before this unit's
    # epilogue ("pa"), so the tensor cores run it while the epilogue stores
    promote_ahead: bool = False
    # A and B swapped ("sw"): the kernel computes D^T = B A^T (the tile's M is the problem's
    # N) and stores D transposed, element by element
    swap_ab: bool = False

    @classmethod
    def parse(cls, text: str) -> "GemmConfig":
        c = _capi.GemmConfig()
        check(fn("hg_gemm_config_parse")(text.encode(), C.byref(c)), "config: ")
        return cls._from_c(c)

    @classmethod
    def _from_c(cls, c: _capi.GemmConfig) -> "GemmConfig":
        return cls(c.tile_m, c.tile_n, c.tile_k, c.cluster_m, c.cluster_n, c.stages,
                   "pingpong" if c.schedule == 1 else "coop", "n" if c.raster == 1 else "m",
                   c.raster_group, c.epi_n, fn("hg_gemm_mainloop_name")(c.mainloop).decode(),
                   c.splits, bool(c.promote_overlap & _PROMOTE_STAGGER), bool(c.stream_k),
                   bool(c.promote_overlap & _PROMOTE_DOUBLE),
                   bool(c.promote_overlap & _PROMOTE_TURNS), c.block_scales == _BLOCK_SCALES_SMEM,
                   bool(c.split_atomic),
                   GELU_FORMULAS[c.gelu] if 0 <= c.gelu < len(GELU_FORMULAS) else "?",
                   bool(c.epi_direct), bool(c.split_scatter),
                   bool(c.promote_overlap & _PROMOTE_AHEAD), bool(c.swap_ab))

    def _c(self) -> _capi.GemmConfig:
        c = _capi.GemmConfig()
        c.tile_m, c.tile_n, c.tile_k = self.tile_m, self.tile_n, self.tile_k
        c.cluster_m, c.cluster_n, c.stages = self.cluster_m, self.cluster_n, self.stages
        if self.schedule not in ("coop", "pingpong", "pp"):
            raise InvalidError(f"schedule = {self.schedule!r}: expected 'coop' or 'pingpong'")
        if self.raster not in ("m", "n"):
            raise InvalidError(f"raster = {self.raster!r}: expected 'm' or 'n'")
        c.schedule = 0 if self.schedule == "coop" else 1
        c.raster = 0 if self.raster == "m" else 1
        c.raster_group, c.epi_n = self.raster_group, self.epi_n
        c.mainloop = mainloop_code(self.mainloop)
        c.splits = self.splits
        c.promote_overlap = ((_PROMOTE_STAGGER if self.promote_stagger else 0)
                             | (_PROMOTE_DOUBLE if self.promote_double else 0)
                             | (_PROMOTE_TURNS if self.promote_turns else 0)
                             | (_PROMOTE_AHEAD if self.promote_ahead else 0))
        c.stream_k = 1 if self.stream_k else 0
        c.block_scales = _BLOCK_SCALES_SMEM if self.staged_scales else _BLOCK_SCALES_GLOBAL
        c.split_atomic = 1 if self.split_atomic else 0
        c.split_scatter = 1 if self.split_scatter else 0
        if self.gelu not in GELU_FORMULAS:
            raise InvalidError(f"gelu = {self.gelu!r}: expected one of {', '.join(GELU_FORMULAS)}")
        c.gelu = GELU_FORMULAS.index(self.gelu)
        c.epi_direct = 1 if self.direct_stores else 0
        c.swap_ab = 1 if self.swap_ab else 0
        return c

    def __str__(self) -> str:
        buf = C.create_string_buffer(128)
        fn("hg_gemm_config_print")(C.byref(self._c()), buf, 128)
        return buf.value.decode()


def _problem(m: int, n: int, k: int, *, dtype="bf16", a_dtype=None, b_dtype=None,
             out_dtype="bf16", batch: int = 1, a_major: str = "k", b_major: str = "k",
             lda: int = 0, ldb: int = 0, ldc: int = 0, ldd: int = 0, batch_stride_a: int = 0,
             batch_stride_b: int = 0, batch_stride_c: int = 0, batch_stride_d: int = 0,
             alpha: float = 1.0, beta: float = 0.0, d_tma: bool = True, a_align: int = 0,
             b_align: int = 0, deterministic: bool = False) -> _capi.GemmProblem:
    p = _capi.GemmProblem()
    p.m, p.n, p.k, p.batch = int(m), int(n), int(k), int(batch)
    p.a_type = dtype_code(a_dtype if a_dtype is not None else dtype, "a_dtype")
    p.b_type = dtype_code(b_dtype if b_dtype is not None else dtype, "b_dtype")
    p.d_type = dtype_code(out_dtype, "out_dtype")
    p.a_k_major = _major(a_major, "a_major") == 0
    p.b_k_major = _major(b_major, "b_major") == 0
    p.lda, p.ldb, p.ldc, p.ldd = int(lda), int(ldb), int(ldc), int(ldd)
    p.batch_stride_a, p.batch_stride_b = int(batch_stride_a), int(batch_stride_b)
    p.batch_stride_c, p.batch_stride_d = int(batch_stride_c), int(batch_stride_d)
    p.alpha, p.beta, p.d_no_tma = float(alpha), float(beta), not d_tma
    p.a_align, p.b_align = int(a_align), int(b_align)
    p.deterministic = bool(deterministic)
    check(fn("hg_gemm_problem_normalize")(C.byref(p)), "GEMM problem: ")
    return p


def _device(sm_count: int):
    """The device hg_gemm_build sizes for: None (an H100/H200 SXM, 132 SMs) or a description
    carrying only the SM count (no name: no tuned configuration applies)."""
    if int(sm_count) == 132:
        return None
    d = _capi.DeviceInfo()
    d.sm_count = int(sm_count)
    return C.byref(d)


def _built_config(p: _capi.GemmProblem, mainloop: int, dev,
                  what: str = "GEMM") -> _capi.GemmConfig:
    """The configuration hg_gemm_build picks for p and a mainloop code on dev (a DeviceInfo
    pointer or None), its mainloop resolved: generation is the library's only such step."""
    gk = _capi.GemmKernel()
    st = fn("hg_gemm_build")(C.byref(p), None, mainloop, dev, 0, C.byref(gk))
    if st.code and mainloop:
        # No configuration fits under this mainloop: the automatic choice's configuration
        # built with it names the rule the mainloop breaks (e.g. 16-bit types only).
        c = _capi.GemmConfig()
        if fn("hg_gemm_heuristic")(C.byref(p), 132, C.byref(c)).code == 0:
            c.mainloop = mainloop
            why = fn("hg_gemm_build")(C.byref(p), C.byref(c), mainloop, dev, 0, C.byref(gk))
            fn("hg_gemm_kernel_free")(C.byref(gk))
            st = why if why.code else st
    check(st, f"{what}: ")
    c = _capi.GemmConfig.from_buffer_copy(gk.config)
    fn("hg_gemm_kernel_free")(C.byref(gk))
    return c


def _config(p: _capi.GemmProblem, config, mainloop=None, dev=None,
            what: str = "GEMM") -> Optional[_capi.GemmConfig]:
    """The configuration to build p with: config (a GemmConfig or its text) with mainloop
    (when not "auto") replacing its own, checked against p. For config None: None when the
    mainloop is automatic (the library then picks: tuned winner or heuristic), else the
    library's choice for that mainloop on dev (a DeviceInfo pointer, None: 132 SMs)."""
    ml = mainloop_code(mainloop)
    if config is None:
        return _built_config(p, ml, dev, what) if ml else None
    if isinstance(config, str):
        config = GemmConfig.parse(config)
    c = config._c()
    if ml:
        c.mainloop = ml
    check(fn("hg_gemm_config_check")(C.byref(p), C.byref(c)), f"config {config}: ")
    return c


def gemm_config(m: int, n: int, k: int, *, sm_count: int = 132, mainloop: str = "auto",
                **problem) -> GemmConfig:
    """The configuration hopgen picks for a problem on a device of sm_count SMs (132: an
    H100 SXM / H200), with its mainloop resolved ("auto" becomes tma-wgmma, or cpasync-wgmma
    when TMA cannot address an operand)."""
    p = _problem(m, n, k, **problem)
    return GemmConfig._from_c(_built_config(p, mainloop_code(mainloop), _device(sm_count)))


@dataclass
class Kernel:
    """A generated kernel: its PTX (and MLIR when the MLIR backend made it), entry point and
    launch needs, and its plans as dicts."""
    name: str
    ptx: str
    mlir: str
    threads: int
    smem_bytes: int
    cluster: Tuple[int, int, int]
    gen_ms: float
    config: Optional[str] = None
    plans: dict = field(default_factory=dict)
    problem: dict = field(default_factory=dict)
    operands: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"name": self.name, "threads": self.threads, "smem_bytes": self.smem_bytes,
                "cluster": list(self.cluster), "config": self.config, "problem": self.problem,
                "operands": self.operands, "plans": self.plans}


def _kernel_fields(k: _capi.Kernel) -> dict:
    return dict(name=k.name.decode(), ptx=_text(k.ptx), mlir=_text(k.mlir), threads=k.threads,
                smem_bytes=k.smem_bytes, cluster=tuple(k.cluster), gen_ms=k.gen_ms)


def _problem_dict(p: _capi.GemmProblem) -> dict:
    return {"m": p.m, "n": p.n, "k": p.k, "batch": p.batch, "a": dtype_name(p.a_type),
            "b": dtype_name(p.b_type), "d": dtype_name(p.d_type),
            "a_major": "k" if p.a_k_major else "m", "b_major": "k" if p.b_k_major else "n",
            "lda": p.lda, "ldb": p.ldb, "ldc": p.ldc, "ldd": p.ldd,
            "batch_stride_a": p.batch_stride_a, "batch_stride_b": p.batch_stride_b,
            "batch_stride_c": p.batch_stride_c, "batch_stride_d": p.batch_stride_d,
            "alpha": p.alpha, "beta": p.beta, "a_align": p.a_align, "b_align": p.b_align}


def gemm_kernel(m: int, n: int, k: int, *, config=None, mainloop: str = "auto",
                backend: str = "ptx", sm_count: int = 132, **problem) -> Kernel:
    """Generate the GEMM D = alpha * A x B + beta * C (pure: no GPU). problem keywords:
    dtype / a_dtype / b_dtype ("bf16", "f16", "e4m3", "e5m2"), out_dtype, batch, a_major /
    b_major ("k" or "mn"), lda..ldd, batch strides, alpha, beta, a_align / b_align (bytes
    the base pointers are multiples of; 0: 16), deterministic (D's bits the same run to run:
    no split-K by atomic adds, ",kSa"). config: a GemmConfig, its text, or None (the
    heuristic for sm_count SMs). mainloop: "auto", "tma-wgmma", "cpasync-wgmma",
    "tma-mmasync", "tma-ldmatrix-wgmma-rs" or "ldg-mmasync" (the decode kernel, M <= 16;
    replaces the configuration's when not auto).
    .operands says how each operand reaches shared memory: TMA, TMA over a packed copy the
    op makes before each run ("repacked": mainloop auto, rows TMA cannot address), or
    cp.async chunks (a named cp.async mainloop reading in place)."""
    p = _problem(m, n, k, **problem)
    dev = _device(sm_count)
    c = _config(p, config, mainloop, dev, "gemm_kernel")
    gk = _capi.GemmKernel()
    check(fn("hg_gemm_build")(C.byref(p), C.byref(c) if c is not None else None,
                              mainloop_code(mainloop), dev, _backend(backend), C.byref(gk)),
          "gemm_kernel: ")
    try:
        plans, operands = {}, {}
        for x, tma, vec, plan, rep in (("a", gk.a_tma, gk.a_vec, gk.plan_a, gk.repack_a),
                                       ("b", gk.b_tma, gk.b_vec, gk.plan_b, gk.repack_b)):
            operands[x] = {"path": "cp.async", "vec_bytes": vec} if not tma else \
                {"path": "tma", "repacked": True} if rep else {"path": "tma"}
            if tma:
                plans[x] = _json_of(fn("hg_tma_plan_json"), None, C.byref(plan), None)
        if gk.tma_store:
            plans["d"] = _json_of(fn("hg_tma_plan_json"), None, C.byref(gk.plan_d), None)
        if gk.aux_tma:
            plans["aux"] = _json_of(fn("hg_tma_plan_json"), None, C.byref(gk.plan_aux), None)
        return Kernel(**_kernel_fields(gk.k), config=str(GemmConfig._from_c(gk.config)),
                      plans=plans, problem=_problem_dict(gk.problem), operands=operands)
    finally:
        fn("hg_gemm_kernel_free")(C.byref(gk))


def plan_gemm(m: int, n: int, k: int, **kw) -> dict:
    """Everything about a generated GEMM but its code, as a dict: problem, configuration,
    kernel name, threads, shared memory, cluster, and the TMA plans of A, B (and D)."""
    return gemm_kernel(m, n, k, **kw).to_dict()


def gemm_ptx(m: int, n: int, k: int, **kw) -> str:
    """PTX of the GEMM for sm_90a (see gemm_kernel for the keywords)."""
    return gemm_kernel(m, n, k, **kw).ptx


def gemm_mlir(m: int, n: int, k: int, **kw) -> str:
    """The GEMM as MLIR 22 (gpu.module in the nvgpu/nvvm dialects): the MLIR backend, which
    also lowers it (mlir-opt-22 or the lowering cache)."""
    kw["backend"] = "mlir"
    return gemm_kernel(m, n, k, **kw).mlir


# ----------------------------------------------------------------------------- TMA kernels


def _tma_spec(op, dtype, shape, tile, *, stride=None, grid=None, origin=None, cluster=1,
              swizzle="128B", oob_nan=False) -> _capi.TmaSpec:
    s = fn("hg_tma_spec_default")(_tma_op(op))
    r = len(shape)
    if not 1 <= r <= _capi.HG_TMA_MAX_RANK:
        raise InvalidError(f"shape has {r} modes; TMA takes 1 to {_capi.HG_TMA_MAX_RANK}")
    s.dtype, s.rank = dtype_code(dtype), r
    zero = [0] * r
    for i, v in enumerate(_ints(shape, r, "shape")):
        s.shape[i] = v
    for i, v in enumerate(_ints(stride if stride is not None else zero, r, "stride")):
        s.stride[i] = v
    for i, v in enumerate(_ints(tile, r, "tile", 1, 1 << 20)):
        s.tile[i] = v
    for i, v in enumerate(_ints(grid if grid is not None else zero, r, "grid", 0, 1 << 30)):
        s.grid[i] = v
    for i, v in enumerate(_ints(origin if origin is not None else zero, r, "origin",
                                -(2**31), 2**31 - 1)):
        s.origin[i] = v
    s.cluster, s.swizzle, s.oob_nan = int(cluster), _swizzle_code(swizzle), bool(oob_nan)
    check(fn("hg_tma_spec_normalize")(C.byref(s)), "TMA spec: ")
    return s


def tma_kernel(op: str = "load", dtype="f16", shape: Sequence[int] = (256, 256),
               tile: Sequence[int] = (64, 64), *, backend: str = "ptx", **spec) -> Kernel:
    """Generate one of the TMA tutorial kernels (load, prefetch, store, reduce-*; a load
    with cluster > 1 multicasts): spec keywords stride, grid, origin, cluster, swizzle,
    oob_nan. Pure: no GPU. The plan is in .plans["tile"]."""
    s = _tma_spec(op, dtype, shape, tile, **spec)
    k, plan = _capi.Kernel(), _capi.TmaPlan()
    check(fn("hg_tma_generate")(C.byref(s), _backend(backend), C.byref(k), C.byref(plan)),
          "tma_kernel: ")
    try:
        g = _tma_tensor(s.dtype, list(s.shape)[:s.rank], list(s.stride)[:s.rank])
        org = (C.c_int32 * _capi.HG_TMA_MAX_RANK)(*list(s.origin))
        return Kernel(**_kernel_fields(k),
                      plans={"tile": _json_of(fn("hg_tma_plan_json"), C.byref(g),
                                              C.byref(plan), org)},
                      problem={"op": op, "dtype": dtype_name(s.dtype),
                               "shape": list(s.shape)[:s.rank],
                               "stride": list(s.stride)[:s.rank], "tile": list(s.tile)[:s.rank],
                               "grid": list(s.grid)[:s.rank], "origin": list(s.origin)[:s.rank],
                               "cluster": s.cluster, "tiles": fn("hg_tma_spec_tiles")(
                                   C.byref(s))})
    finally:
        fn("hg_kernel_free")(C.byref(k))


def ptxas_check(ptx: str) -> dict:
    """Assemble PTX with `ptxas -arch=sm_90a -v` (the CUDA toolkit's): registers, spills,
    shared memory; raises JitError with ptxas's message when it rejects the code."""
    r = _capi.PtxasReport()
    check(fn("hg_ptxas_check")(ptx.encode(), C.byref(r)), "ptxas: ")
    return {"registers": r.registers, "spill_store_bytes": r.spill_store_bytes,
            "spill_load_bytes": r.spill_load_bytes, "stack_frame_bytes": r.stack_frame_bytes,
            "smem_bytes": r.smem_bytes, "barriers": r.barriers,
            "setmaxnreg_ignored": r.setmaxnreg_ignored, "notes": r.notes.decode()}
