"""GPU tests of the torch integration (skipped without torch and a Hopper GPU): GEMM against
torch across dtypes and layouts, every mainloop on awkward shapes and on misaligned views
(odd leading dimensions, bases one element off: operands repacked by auto, read in place
with cp.async by a named mainloop), a repacking op on concurrent streams, D poisoned
with NaN first, refusals, CUDA-graph capture and replay with new data,
torch.compile(fullgraph=True), torch.library.opcheck, autograd, CuPy / CUDA-array-interface
interop, the TMA copy kernels, an exported GEMM run through libcuda only, and the host time
per call.

Runs under pytest, or without it (the GPU machine may lack pytest):
    python3 python/tests/test_gpu.py --list | NAME...
(scripts/gpu-python.sh runs each test in its own process, so a fault cannot hide the rest).
"""
import contextlib
import ctypes
import os
import re
import subprocess
import sys
import tempfile

try:
    import pytest
    pytestmark = pytest.mark.gpu
except ImportError:
    pytest = None
try:
    import torch
except ImportError:
    torch = None

import hopgen

CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")


class Skip(Exception):
    pass


def _skip(msg):
    if pytest:
        pytest.skip(msg)
    raise Skip(msg)


@contextlib.contextmanager
def _raises(exc, match=None):
    try:
        yield
    except exc as e:
        if match and not re.search(match, str(e)):
            raise AssertionError(f"{type(e).__name__}: {e!s} does not match {match!r}")
        return
    raise AssertionError(f"no {exc.__name__} raised")


def _rel(d, ref):
    return float((d.float() - ref).norm() / ref.norm())


def _check(d, ref, tol, what):
    assert torch.isfinite(d.float()).all(), f"{what}: non-finite elements (unwritten D?)"
    err = _rel(d, ref)
    assert err <= tol, f"{what}: relative error {err:.3e} > {tol}"
    return err


def _mat(rows, cols, dtype, row_major=True, scale=1.0):
    if row_major:
        return (torch.randn(rows, cols, device="cuda") * scale).to(dtype)
    return (torch.randn(cols, rows, device="cuda") * scale).to(dtype).t()


# ----------------------------------------------------------------------------- correctness


def _layout_sweep(dtype, m, n, k):
    failures = []
    for a_row in (True, False):
        for b_row in (True, False):
            for out_dtype in (dtype, torch.float32):
                a, b = _mat(m, k, dtype, a_row), _mat(k, n, dtype, b_row)
                ref = a.float() @ b.float()
                try:
                    d = hopgen.gemm(a, b, out_dtype=out_dtype)
                    torch.cuda.synchronize()
                    assert d.dtype == out_dtype and d.shape == (m, n)
                    _check(d, ref, 1e-2, f"{dtype} a_row={a_row} b_row={b_row} -> {out_dtype}")
                except Exception as e:  # collect every combination's failure
                    failures.append(f"{m}x{n}x{k} a_row={a_row} b_row={b_row} out "
                                    f"{out_dtype}: {e}")
    assert not failures, "\n".join(failures)


def test_gemm_bf16_layouts():
    _layout_sweep(torch.bfloat16, 512, 384, 256)


def test_gemm_f16_layouts():
    _layout_sweep(torch.float16, 256, 512, 192)


def test_gemm_odd_shapes_cp_async_and_direct_store():
    # K = 100: a row-major's 200-byte rows are read with cp.async (8-byte chunks); N = 100: D
    # stored without TMA
    _layout_sweep(torch.bfloat16, 1000, 100, 100)
    _layout_sweep(torch.float16, 1, 8, 64)


# ----------------------------------------------------------------------------- mainloops


def _poisoned(rows, cols, dtype, pad=0, offset=0, batch=None):
    """(buffer, view): a row-major [batch,] rows x cols view with leading dimension cols + pad
    starting offset elements into a NaN-filled buffer (with a NaN tail), so an element the
    kernel never wrote, or one it wrote outside the view, shows."""
    ld = cols + pad
    per = rows * ld
    nb = batch or 1
    buf = torch.full((offset + nb * per + 64,), float("nan"), device="cuda", dtype=dtype)
    view = buf[offset:offset + nb * per].view(nb, rows, ld)[:, :, :cols]
    return buf, view if batch else view[0]


def _outside_untouched(buf, view, what):
    """Every element of buf outside view still holds NaN."""
    mask = torch.ones(buf.numel(), dtype=torch.bool, device="cuda")
    idx = torch.arange(buf.numel(), device="cuda")
    inside = torch.as_strided(idx, view.shape, view.stride(), view.storage_offset())
    mask[inside.reshape(-1)] = False
    assert torch.isnan(buf[mask].float()).all(), f"{what}: D written outside its view"


def _gemm_vs_torch(a, b, what, tol=1e-2, out_dtype=None, pad=0, offset=0, **kw):
    """hopgen.gemm(a, b) into a NaN-poisoned D (leading dimension N + pad, offset elements
    into its buffer) against an f32 reference; returns the operation that ran."""
    batch = a.shape[0] if a.dim() == 3 else None
    buf, d = _poisoned(a.shape[-2], b.shape[-1], out_dtype or a.dtype, pad, offset, batch)
    assert hopgen.gemm(a, b, out=d, **kw) is d
    torch.cuda.synchronize()
    _check(d, a.float() @ b.float(), tol, what)
    _outside_untouched(buf, d, what)
    return hopgen.ops._last_op[0]


def _view(rows, cols, dtype, row_major=True, pad=0, offset=0, batch=None):
    """A rows x cols operand (batch of them) stored with leading dimension (rows or cols) +
    pad, starting offset elements into its allocation: x[:, 1:] is pad = offset = 1."""
    inner, outer = (cols, rows) if row_major else (rows, cols)
    nb = batch or 1
    base = (torch.randn(nb * outer * (inner + pad) + offset, device="cuda")).to(dtype)
    v = base[offset:].view(nb, outer, inner + pad)[:, :, :inner]
    v = v if row_major else v.transpose(-1, -2)
    return v if batch else v[0]


def _mainloop_awkward(ml):
    """Every layout of A and B on shapes no tile divides (M, N, K of 1000 x 100 x 100,
    257 x 136 x 4097, 1 x 8 x 64): leading dimensions that TMA can or cannot address, K
    not a multiple of anything, D stored with or without TMA; bf16 and f16, D of the input
    type and f32."""
    failures = []
    for i, (m, n, k) in enumerate(((1000, 100, 100), (257, 136, 4097), (1, 8, 64))):
        for a_row in (True, False):
            for b_row in (True, False):
                dt = (torch.bfloat16, torch.float16)[(i + a_row + b_row) % 2]
                od = torch.float32 if (a_row and not b_row) else dt
                what = f"{ml} {m}x{n}x{k} {dt} a_row={a_row} b_row={b_row} -> {od}"
                try:
                    op = _gemm_vs_torch(_mat(m, k, dt, a_row), _mat(k, n, dt, b_row), what,
                                        out_dtype=od, mainloop=ml)
                    # auto: tma-wgmma or cpasync-wgmma (or a tuned winner's mainloop)
                    assert op.mainloop == ml or (ml == "auto" and op.mainloop != "auto"), \
                        f"{what}: ran {op.mainloop}"
                except Exception as e:  # collect every case
                    failures.append(f"{what}: {type(e).__name__}: {e}")
    assert not failures, f"{len(failures)} of 12 failed:\n" + "\n".join(failures)


def _mainloop_misaligned(ml):
    """Operands TMA cannot address, read with cp.async under every MMA: x[:, 1:] (base one
    element off, odd leading dimension), column-major views with lda = M + 1, K-major B
    with ldb = K + 1 and a base one element off, N-major B with ldb = N + 3, a batched view
    with an odd batch stride, D one element off with ldd = N + 1; each against torch."""
    m, n, k = 300, 136, 200
    bf, f16 = torch.bfloat16, torch.float16
    cases = [
        ("A = x[:, 1:]", _view(m, k, bf, pad=1, offset=1), _mat(k, n, bf), {}),
        ("A column-major, lda = M + 1, base + 1", _view(m, k, bf, False, 1, 1),
         _mat(k, n, bf, False), {}),
        ("B K-major, ldb = K + 1, base + 1", _mat(m, k, f16), _view(k, n, f16, False, 1, 1), {}),
        ("B N-major, ldb = N + 3", _mat(m, k, f16, False), _view(k, n, f16, True, 3), {}),
        ("A and B base + 1 element, D f32", _view(m, k, f16, offset=1),
         _view(k, n, f16, False, offset=1), {"out_dtype": torch.float32}),
        ("batched A view, batch stride M (K + 1)", _view(m, k, bf, pad=1, offset=1, batch=3),
         torch.randn(3, k, n, device="cuda").to(bf), {}),
        ("D base + 1 element, ldd = N + 1", _mat(m, k, bf), _view(k, n, bf, False, 2, 2),
         {"pad": 1, "offset": 1}),
    ]
    failures = []
    for what, a, b, kw in cases:
        what = f"{ml}: {what}"
        try:
            op = _gemm_vs_torch(a, b, what, mainloop=ml, **kw)
            # auto repacks what TMA cannot address; a named mainloop reads it in place
            want = "repacked" if ml == "auto" else "cp.async"
            assert want in str(op.operands), f"{what}: ran {op} without {want}"
            assert op.mainloop == ml or (ml == "auto" and op.mainloop != "auto"), op
        except Exception as e:
            failures.append(f"{what}: {type(e).__name__}: {e}")
    assert not failures, f"{len(failures)} of {len(cases)} failed:\n" + "\n".join(failures)


def _named(fn_, name):
    fn_.__name__ = fn_.__qualname__ = name
    return fn_


def test_mainloop_ldg_mmasync_decode():
    """The decode kernel (ldg-mmasync: M <= 16, K-major A and B): shapes no tile divides,
    rows of every alignment (odd K, ldb = K + 1, bases one element off), bf16 and f16, D of
    the input type and f32, each against torch; and auto takes it for rows TMA cannot
    address."""
    ml, bf = "ldg-mmasync", torch.bfloat16
    cases = []
    for m, n, k in ((1, 7168, 2049), (7, 300, 4097), (16, 136, 100), (1, 8, 64), (3, 12345, 678)):
        for dt in (bf, torch.float16):
            cases.append((f"{m}x{n}x{k} {dt}", _mat(m, k, dt), _mat(k, n, dt, False), {}))
    cases += [
        ("A = x[:, 1:]", _view(5, 200, bf, pad=1, offset=1), _mat(200, 136, bf, False), {}),
        ("B K-major, ldb = K + 1, base + 1", _mat(9, 200, bf), _view(200, 136, bf, False, 1, 1),
         {}),
        ("D f32 one element off, ldd = N + 1", _mat(16, 200, bf), _mat(200, 136, bf, False),
         {"out_dtype": torch.float32, "pad": 1, "offset": 1}),
    ]
    failures = []
    for what, a, b, kw in cases:
        try:
            op = _gemm_vs_torch(a, b, f"{ml}: {what}", mainloop=ml, **kw)
            assert op.mainloop == ml, op
        except Exception as e:  # collect every case
            failures.append(f"{what}: {type(e).__name__}: {e}")
    try:
        op = _gemm_vs_torch(_mat(1, 2049, bf), _mat(2049, 7168, bf, False), "auto, K = 2049")
        assert op.mainloop == ml, op
    except Exception as e:
        failures.append(f"auto, K = 2049: {type(e).__name__}: {e}")
    assert not failures, f"{len(failures)} of {len(cases) + 1} failed:\n" + "\n".join(failures)


# One test per mainloop (and kind), each in its own process under gpu-python.sh: a kernel
# fault loses the process's CUDA context, and must not hide the other mainloops. The decode
# kernel (M <= 16 only) has its own test above.
for _ml in [m for m in hopgen.MAINLOOPS if m != "ldg-mmasync"]:
    _id = _ml.replace("-", "_")
    globals()[f"test_mainloop_{_id}_awkward_shapes"] = _named(
        (lambda ml: lambda: _mainloop_awkward(ml))(_ml), f"test_mainloop_{_id}_awkward_shapes")
    globals()[f"test_mainloop_{_id}_misaligned_views"] = _named(
        (lambda ml: lambda: _mainloop_misaligned(ml))(_ml),
        f"test_mainloop_{_id}_misaligned_views")


def test_alignment_is_part_of_the_operation_signature():
    # the same shape and strides at a 16-byte aligned base and one element off: two
    # operations (TMA, and a repack for auto or 2-byte cp.async copies for a named cp.async
    # mainloop), each on the fast path on its second call
    m, n, k = 256, 128, 192
    flat = torch.randn(m * k + 8, device="cuda").bfloat16()
    a16, a2 = flat[:m * k].view(m, k), flat[1:1 + m * k].view(m, k)
    b = _mat(k, n, torch.bfloat16, row_major=False)
    cases = ((a16, "auto", "tma"), (a2, "auto", "repacked"),
             (a2, "cpasync-wgmma", "cp.async 2 B"))
    for a, ml, want in cases:
        op = _gemm_vs_torch(a, b, f"A {want}", mainloop=ml)
        assert op.operands["a"] == want, op
        assert (op.workspace > 0) == (want == "repacked"), op.workspace
    for i, (a, ml, want) in enumerate(cases * 2):  # fast path
        assert _gemm_vs_torch(a, b, f"fast path, call {i}", mainloop=ml).operands["a"] == want
    with _raises(hopgen.ParseError, "mainloop 'tma-bogus' is not one of auto, tma-wgmma"):
        hopgen.gemm(a16, b, mainloop="tma-bogus")


def test_repacking_op_on_concurrent_streams():
    # one op that repacks A (lda = K + 1), run on two streams at once with different data:
    # each run's workspace comes from its own stream's pool, so neither sees the other's copy
    m, n, k = 1024, 512, 1000
    b = _mat(k, n, torch.bfloat16, row_major=False)
    xs = [_view(m, k, torch.bfloat16, pad=1) for _ in range(2)]
    outs = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for _ in range(2)]
    hopgen.gemm(xs[0], b, out=outs[0])  # creates the op
    torch.cuda.synchronize()
    assert hopgen.ops._last_op[0].operands["a"] == "repacked"
    streams = [torch.cuda.Stream() for _ in range(2)]
    for _ in range(3):
        for x, o, s in zip(xs, outs, streams):
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(4):
                    hopgen.gemm(x, b, out=o)
        torch.cuda.synchronize()
        for i, (x, o) in enumerate(zip(xs, outs)):
            _check(o, x.float() @ b.float(), 1e-2, f"stream {i}")


def test_gemm_fp8_with_scales():
    for at, bt in ((torch.float8_e4m3fn, torch.float8_e4m3fn),
                   (torch.float8_e4m3fn, torch.float8_e5m2)):
        m, n, k = 512, 256, 384
        a = _mat(m, k, at)
        w = _mat(n, k, bt)
        sa = torch.tensor([1.25], device="cuda")
        sb = torch.tensor([0.75], device="cuda")
        ref = (a.float() @ w.float().t()) * (1.25 * 0.75)
        for out_dtype in (torch.bfloat16, torch.float16, torch.float32):
            d = hopgen.gemm(a, w.t(), scale_a=sa, scale_b=sb, out_dtype=out_dtype)
            torch.cuda.synchronize()
            _check(d, ref, 1e-2, f"{at} x {bt} -> {out_dtype}")
        d = hopgen.scaled_gemm(a, w.t(), 1.25, 0.75)  # Python-number scales fold into alpha
        _check(d, ref, 1e-2, "scales as numbers")
        # through cp.async: the whole mainloop, and K = 100 (100-byte rows, 4-byte chunks);
        # auto repacks those rows instead
        d = hopgen.gemm(a, w.t(), scale_a=sa, scale_b=sb, mainloop="cpasync-wgmma")
        torch.cuda.synchronize()
        _check(d, ref, 1e-2, f"{at} x {bt} cpasync-wgmma")
        a1, w1 = a[:, :100].contiguous(), w[:, :100].contiguous()
        ref1 = (a1.float() @ w1.float().t()) * (1.25 * 0.75)
        for ml, want in (("cpasync-wgmma", "cp.async 4 B"), ("auto", "repacked")):
            _check(hopgen.gemm(a1, w1.t(), scale_a=sa, scale_b=sb, mainloop=ml), ref1, 1e-2,
                   f"{at} x {bt} K = 100, {ml}")
            assert want in str(hopgen.ops._last_op[0].operands), hopgen.ops._last_op[0]
        with _raises(hopgen.UnsupportedError, "bf16/f16"):  # mma.sync: 16-bit types only
            hopgen.gemm(a, w.t(), scale_a=sa, scale_b=sb, mainloop="tma-mmasync")
        if hasattr(torch, "_scaled_mm") and at == bt:
            t = torch._scaled_mm(a, w.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                                 use_fast_accum=True)
            assert abs(_rel(d, ref) - _rel(t, ref)) < 5e-3


def _block_ref(a8, w8, sa, sb):
    """f32 reference of one expert's block-scaled GEMM: a8 [m, K], w8 [N, K], sa [m, kb] (1x128),
    sb [nb, kb] (128x128), each 128-wide k-block's product scaled by sa(i, kb) sb(j/128, kb)."""
    m, k = a8.shape
    n = w8.shape[0]
    out = torch.zeros(m, n, device=a8.device)
    for q in range(0, k, 128):
        part = a8[:, q:q + 128].float() @ w8[:, q:q + 128].float().t()
        col = sb[:, q // 128].repeat_interleave(128)[:n]
        out += part * sa[:, q // 128, None] * col[None, :]
    return out


def test_grouped_gemm_block_scales():
    """hopgen.grouped_gemm with fp8 block-wise scales (1x128 A, 128x128 per expert for B) in
    DeepGEMM's layouts, contiguous and masked: empty and very unequal experts, K and N not
    multiples of 128, out poisoned first, rows outside every expert untouched."""
    if not hasattr(torch, "float8_e4m3fn"):
        raise Skip("torch lacks float8_e4m3fn")
    e, n, k = 6, 520, 1040
    counts = [0, 1, 300, 130, 0, 64]
    total = sum(counts)
    kb, nb = (k + 127) // 128, (n + 127) // 128
    offs = torch.tensor(counts, device="cuda", dtype=torch.int32).cumsum(0).int()
    a8 = _mat(total + 5, k, torch.bfloat16).to(torch.float8_e4m3fn)
    w8 = torch.randn(e, n, k, device="cuda").to(torch.float8_e4m3fn)
    # 1x128 scales M-major (the transpose of a contiguous [kb, rows]); 128x128 [E, nb, kb]
    sa = (torch.rand(kb, total + 5, device="cuda") + 0.5).t()
    sb = torch.rand(e, nb, kb, device="cuda") + 0.5
    out = torch.full((total + 5, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    hopgen.grouped_gemm(a8, w8.transpose(1, 2), offs, out=out, scale_a=sa, scale_b=sb)
    torch.cuda.synchronize()
    start = 0
    for g, c in enumerate(counts):
        if c:
            ref = _block_ref(a8[start:start + c], w8[g], sa[start:start + c], sb[g])
            _check(out[start:start + c], ref, 1e-2, f"block-wise expert {g} ({c} rows)")
        start += c
    assert torch.isnan(out[total:].float()).all(), "rows past the experts were written"
    # masked: [E, M, kb] 1x128 scales, strides (kb M, 1, M)
    cap = 320
    am = _mat(e * cap, k, torch.bfloat16).to(torch.float8_e4m3fn).view(e, cap, k)
    cnt = torch.tensor(counts, device="cuda", dtype=torch.int32)
    sam = (torch.rand(e, kb, cap, device="cuda") + 0.5).transpose(1, 2)
    out = torch.full((e, cap, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    hopgen.grouped_gemm(am, w8.transpose(1, 2), counts=cnt, out=out, scale_a=sam, scale_b=sb)
    torch.cuda.synchronize()
    for g, c in enumerate(counts):
        if c:
            _check(out[g, :c], _block_ref(am[g, :c], w8[g], sam[g, :c], sb[g]), 1e-2,
                   f"masked block-wise expert {g}")
        assert torch.isnan(out[g, c:].float()).all(), f"masked expert {g}: rows past its count"


def test_grouped_gemm_contiguous_and_masked():
    """hopgen.grouped_gemm against a per-expert torch reference (and torch._grouped_mm where
    torch has it): empty and very unequal experts, out poisoned first, rows outside every
    expert untouched, both B layouts, fp8 with a scale per expert, CUDA-graph replay with new
    counts."""
    e, n, k = 6, 256, 512
    counts = [0, 37, 300, 0, 1, 150]
    total = sum(counts)
    offs = torch.tensor(counts, device="cuda", dtype=torch.int32).cumsum(0).int()
    a = _mat(total + 5, k, torch.bfloat16)  # 5 rows past the last expert
    w = torch.randn(e, n, k, device="cuda").bfloat16()  # [E, N, K] weights
    for b in (w.transpose(1, 2), w.transpose(1, 2).contiguous()):
        out = torch.full((total + 5, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        hopgen.grouped_gemm(a, b, offs, out=out)
        torch.cuda.synchronize()
        start = 0
        for g, c in enumerate(counts):
            if c:
                ref = a[start:start + c].float() @ b[g].float()
                _check(out[start:start + c], ref, 1e-2, f"expert {g} ({c} rows)")
            start += c
        assert torch.isnan(out[total:].float()).all(), "rows past the experts were written"
        if hasattr(torch, "_grouped_mm"):
            t = torch._grouped_mm(a[:total], b, offs=offs, out_dtype=torch.bfloat16)
            _check(out[:total], t.float(), 1e-2, "against torch._grouped_mm")
    # masked
    cap = 320
    am = _mat(e * cap, k, torch.bfloat16).view(e, cap, k)
    cnt = torch.tensor(counts, device="cuda", dtype=torch.int32)
    out = torch.full((e, cap, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    hopgen.grouped_gemm(am, w.transpose(1, 2), counts=cnt, out=out)
    torch.cuda.synchronize()
    for g, c in enumerate(counts):
        if c:
            _check(out[g, :c], am[g, :c].float() @ w[g].float().t(), 1e-2, f"masked expert {g}")
        assert torch.isnan(out[g, c:].float()).all(), f"masked expert {g}: rows past its count"
    # fp8 with a scale per expert
    if hasattr(torch, "float8_e4m3fn"):
        a8 = a.to(torch.float8_e4m3fn)
        w8 = w.to(torch.float8_e4m3fn)
        sa = torch.tensor([1.25], device="cuda")
        sb = torch.linspace(0.5, 1.0, e, device="cuda")
        d = hopgen.grouped_gemm(a8, w8.transpose(1, 2), offs, scale_a=sa, scale_b=sb)
        torch.cuda.synchronize()
        start = 0
        for g, c in enumerate(counts):
            if c:
                ref = (a8[start:start + c].float() @ w8[g].float().t()) * 1.25 * float(sb[g])
                _check(d[start:start + c], ref, 1e-2, f"fp8 expert {g}")
            start += c
        # row-wise: a scale per token, one per expert and column
        ra = torch.rand(total + 5, device="cuda") + 0.5
        cb = torch.rand(e, n, device="cuda") + 0.5
        d = hopgen.grouped_gemm(a8, w8.transpose(1, 2), offs, scale_a=ra, scale_b=cb)
        torch.cuda.synchronize()
        start = 0
        for g, c in enumerate(counts):
            if c:
                ref = (a8[start:start + c].float() @ w8[g].float().t()) * \
                    ra[start:start + c, None] * cb[g][None, :]
                _check(d[start:start + c], ref, 1e-2, f"fp8 row-wise expert {g}")
            start += c
    # CUDA graph: the counts are read on the device, so a replay with new offsets follows them
    out = torch.zeros((total + 5, n), device="cuda", dtype=torch.bfloat16)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        hopgen.grouped_gemm(a, w.transpose(1, 2), offs, out=out)  # warm-up
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=s):
            hopgen.grouped_gemm(a, w.transpose(1, 2), offs, out=out)
    offs.copy_(torch.tensor([total, total, total, total, total, total], dtype=torch.int32))
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    _check(out[:total], a[:total].float() @ w[0].float().t(), 1e-2, "graph replay, new offsets")


def test_gemm_batched_alpha_beta_c():
    bsz, m, n, k = 3, 256, 128, 192
    a = torch.randn(bsz, m, k, device="cuda").bfloat16()
    b = torch.randn(bsz, k, n, device="cuda").bfloat16()
    c = torch.randn(bsz, m, n, device="cuda").bfloat16()
    ref = 0.5 * (a.float() @ b.float()) + 2.0 * c.float()
    d = hopgen.gemm(a, b, c=c, alpha=0.5, beta=2.0)
    out = torch.empty_like(c)
    hopgen.gemm(a, b, c=c, alpha=0.5, beta=2.0, out=out)
    torch.cuda.synchronize()
    _check(d, ref, 1e-2, "batched")
    _check(out, ref, 1e-2, "batched out=")
    # strided views: a batch of column slices of a wider matrix
    wide = torch.randn(m, 2 * k, device="cuda").bfloat16()
    v = wide[:, :k]
    _check(hopgen.gemm(v, b[0]), v.float() @ b[0].float(), 1e-2, "view with lda > K")


def test_split_k_atomic_and_deterministic():
    # a long K over few tiles: split-K by atomic adds (one launch) by default, with one
    # zeroed workspace per stream kept by the op (each run leaves its sums zero, so later runs
    # skip the memset), another on a second stream, one from the graph's pool (zeroed in the
    # graph) while capturing; under torch.use_deterministic_algorithms the reduction pass,
    # bit for bit the same every run
    m, n, k = 128, 128, 32768
    a = torch.randn(m, k, device="cuda").bfloat16()
    b = torch.randn(k, n, device="cuda").bfloat16()
    ref = a.float() @ b.float()
    for _ in range(3):
        d = hopgen.gemm(a, b)
        torch.cuda.synchronize()
        _check(d, ref, 1e-2, "split-K by atomic adds")
    op = hopgen.ops._last_op[0]
    assert ",k" in op.config and "a," in op.config
    assert op.needs_zeros and len(op.stream_workspace) == 1
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        outs = [hopgen.gemm(a, b) for _ in range(3)]
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    assert len(op.stream_workspace) == 2
    for o in outs:
        _check(o, ref, 1e-2, "split-K by atomic adds on a second stream")
    # graph 1 takes the op's spare (zeroed outside the capture: no memset node), and its
    # three calls share it; graph 2, captured right after, finds no spare and takes a buffer
    # from its pool, zeroed by a memset node before its first call
    spare = op.spare
    assert spare is not None and len(op.capture_workspace) == 0
    a2 = torch.randn(m, k, device="cuda").bfloat16()
    ref2 = a2.float() @ b.float()
    outs = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(side):
        with torch.cuda.graph(g, stream=side):
            for i, o in enumerate(outs):
                hopgen.gemm(a2 if i == 1 else a, b, out=o)
    assert op.spare is None and len(op.capture_workspace) == 1
    assert next(iter(op.capture_workspace.values())) is spare
    out2 = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    g2 = torch.cuda.CUDAGraph()
    with torch.cuda.stream(side):
        with torch.cuda.graph(g2, stream=side):
            hopgen.gemm(a2, b, out=out2)
            hopgen.gemm(a, b, out=out2)
    assert op.spare is None and len(op.capture_workspace) == 2
    for _ in range(3):
        for o in outs + [out2]:
            o.fill_(float("nan"))
        g.replay()
        g2.replay()
        torch.cuda.synchronize()
        for i, o in enumerate(outs):
            _check(o, ref2 if i == 1 else ref, 1e-2, "split-K by atomic adds in a CUDA graph")
        _check(out2, ref, 1e-2, "split-K by atomic adds in a second CUDA graph")
    hopgen.gemm(a, b)  # an eager call makes the next capture's spare
    assert op.spare is not None
    was = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        first = hopgen.gemm(a, b)
        cfg = hopgen.ops._last_op[0].config
        assert ",k" in cfg and "a," not in cfg, cfg
        for _ in range(3):
            assert torch.equal(hopgen.gemm(a, b), first)
        _check(first, ref, 1e-2, "split-K, deterministic")
    finally:
        torch.use_deterministic_algorithms(was)


def test_gemm_bias_activation_fused():
    m, n, k = 300, 264, 520
    a = torch.randn(m, k, device="cuda").bfloat16()
    w = torch.randn(n, k, device="cuda").bfloat16()
    for bt in (torch.bfloat16, torch.float32):
        bias = torch.randn(n, device="cuda").to(bt)
        pre = a.float() @ w.float().t() + bias.float()
        for act, ref in (("relu", torch.relu(pre)),
                         ("gelu", torch.nn.functional.gelu(pre)),
                         ("gelu_tanh", torch.nn.functional.gelu(pre, approximate="tanh")),
                         ("silu", torch.nn.functional.silu(pre)),
                         ("clamp:-0.5:0.75", pre.clamp(-0.5, 0.75)), (None, pre)):
            for _ in range(2):  # the second call takes the fast path
                d = hopgen.gemm(a, w.t(), bias=bias, activation=act)
                torch.cuda.synchronize()
                _check(d, ref, 1e-2, f"bias {bt} activation {act}")
    d = hopgen.gemm(a, w.t(), activation="sigmoid")
    _check(d, torch.sigmoid(a.float() @ w.float().t()), 1e-2, "sigmoid, no bias")
    with _raises(hopgen.InvalidError, "vector of N = 264"):
        hopgen.gemm(a, w.t(), bias=torch.zeros(263, device="cuda"))
    with _raises(hopgen.ParseError, "swish"):
        hopgen.gemm(a, w.t(), activation="swish")


def test_gemm_aux_through_tma_and_staged():
    """The aux output beside a bfloat16 out: through TMA (N = 256), staged with out (N = 1001:
    rows TMA cannot store, copied out of shared memory row by row), and into a caller's aux
    only 2-byte aligned (the op then stages both); nothing written outside aux."""
    for m, n, k in ((300, 256, 512), (300, 1001, 512)):
        a = torch.randn(m, k, device="cuda").bfloat16()
        w = torch.randn(n, k, device="cuda").bfloat16()
        bias = torch.randn(n, device="cuda").bfloat16()
        pre = a.float() @ w.float().t() + bias.float()
        d, _, aux = hopgen.gemm(a, w.t(), bias=bias, activation="gelu", aux=True)
        torch.cuda.synchronize()
        _check(d.float(), torch.nn.functional.gelu(pre), 2e-2, f"out N={n}")
        _check(aux.float(), pre, 1e-2, f"aux N={n}")
        buf = torch.full((m * n + 9,), float("nan"), device="cuda", dtype=torch.bfloat16)
        aux_t = buf[1:1 + m * n].view(m, n)
        d2 = hopgen.gemm(a, w.t(), bias=bias, activation="gelu", aux=aux_t)
        torch.cuda.synchronize()
        _check(d2.float(), torch.nn.functional.gelu(pre), 2e-2, f"out N={n}, aux at +2 B")
        _check(aux_t.float(), pre, 1e-2, f"aux N={n} at +2 B")
        assert torch.isnan(buf[0].float()) and torch.isnan(buf[1 + m * n:].float()).all(), \
            f"N={n}: aux written outside its view"


def test_gemm_fp8_out_amax_aux_c_type():
    """Issue 12's outputs against torch: fp8 out with a saturating scale, the amax bit for bit
    over the stored out, the aux output (pre-activation), C of its own dtype with a residual,
    row and column scales."""
    m, n, k = 300, 264, 520
    a = torch.randn(m, k, device="cuda").bfloat16()
    w = torch.randn(n, k, device="cuda").bfloat16()
    bias = torch.randn(n, device="cuda").bfloat16()
    c = torch.randn(m, n, device="cuda")  # float32 C for a bfloat16 / fp8 out
    res = torch.randn(m, n, device="cuda")
    rs = torch.rand(m, device="cuda") + 0.5
    cs = torch.rand(n, device="cuda") + 0.5
    pre = (a.float() @ w.float().t() + 0.5 * c) * rs[:, None] * cs[None, :] + bias.float()
    y = torch.nn.functional.gelu(pre) + res
    for dt, scale in ((torch.float8_e4m3fn, 300.0), (torch.float8_e5m2, 2.0),
                      (torch.bfloat16, None)):
        kw = dict(scale_d=scale) if scale is not None else {}
        d, amax, aux = hopgen.gemm(a, w.t(), c=c, beta=0.5, bias=bias, activation="gelu",
                                   residual=res, rowscale=rs, colscale=cs, out_dtype=dt,
                                   amax=True, aux=True, **kw)
        torch.cuda.synchronize()
        want = y * (scale or 1.0)
        if dt != torch.bfloat16:
            fmax = torch.finfo(dt).max
            want = want.clamp(-fmax, fmax).to(dt)  # saturate, then torch's round to nearest
        _check(d.float(), want.float(), 7e-2 if dt == torch.float8_e5m2 else 4e-2, f"out {dt}")
        ref_amax = d.float().abs().max()
        assert amax.reshape(1).view(torch.int32).item() == \
            ref_amax.reshape(1).view(torch.int32).item(), \
            f"amax {amax.item()} != max |out| {ref_amax.item()} ({dt})"
        _check(aux.float(), pre, 1e-2, f"aux ({dt} out)")
    # the amax's running state is left zero by each launch (no memset before it): a second
    # launch on halved A gives exactly half the amax (bf16 out: halving is exact), into a
    # poisoned tensor; on another stream, and captured in a CUDA graph replayed on new data
    amax_t = torch.full((1,), float("nan"), device="cuda")
    d1 = hopgen.gemm(a, w.t(), amax=amax_t)
    torch.cuda.synchronize()
    first = amax_t.clone()
    assert first.item() == d1.float().abs().max().item()
    amax_t.fill_(float("nan"))
    d2 = hopgen.gemm(a * 0.5, w.t(), amax=amax_t)
    torch.cuda.synchronize()
    assert amax_t.item() == first.item() / 2 == d2.float().abs().max().item(), \
        f"second launch's amax {amax_t.item()}, first {first.item()}"
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        amax_s = torch.full((1,), float("nan"), device="cuda")
        hopgen.gemm(a * 0.25, w.t(), amax=amax_s)
    side.synchronize()
    assert amax_s.item() == first.item() / 4, f"side stream's amax {amax_s.item()}"
    ga, gout, gamax = a.clone(), torch.empty(m, n, device="cuda", dtype=torch.bfloat16), \
        torch.zeros(1, device="cuda")
    hopgen.gemm(ga, w.t(), out=gout, amax=gamax)  # warm: create the operation outside capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        hopgen.gemm(ga, w.t(), out=gout, amax=gamax)
    for f in (2.0, 0.125, 1.0):
        ga.copy_(a * f)
        gamax.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert gamax.item() == first.item() * f == gout.float().abs().max().item(), \
            f"graph replay x{f}: amax {gamax.item()}"
    with _raises(hopgen.InvalidError, "no activation was given"):
        hopgen.gemm(a, w.t(), aux=True)
    with _raises(hopgen.InvalidError, "scale_d scales an fp8 out"):
        hopgen.gemm(a, w.t(), scale_d=2.0, amax=True)
    with _raises(hopgen.InvalidError, "residual has C's type"):
        hopgen.gemm(a, w.t(), c=c, beta=1.0, residual=res.bfloat16())
    with _raises(hopgen.UnsupportedError, "no backward yet"):
        hopgen.gemm(a.clone().requires_grad_(), w.t(), amax=True)
    # the same epilogue traced by torch.compile (hopgen::gemm_epilogue) gives the same bits
    def f(a, w, c, bias, res, rs, cs):
        return hopgen.gemm(a, w.t(), c=c, beta=0.5, bias=bias, activation="gelu", residual=res,
                           rowscale=rs, colscale=cs, out_dtype=torch.float8_e4m3fn,
                           scale_d=300.0, amax=True, aux=True)
    d, amax, aux = torch.compile(f, fullgraph=True)(a, w, c, bias, res, rs, cs)
    d2, amax2, aux2 = f(a, w, c, bias, res, rs, cs)
    torch.cuda.synchronize()
    assert torch.equal(d.view(torch.uint8), d2.view(torch.uint8)), "compiled fp8 out differs"
    assert torch.equal(amax, amax2) and torch.equal(aux, aux2), "compiled amax / aux differ"
    torch.library.opcheck(torch.ops.hopgen.gemm_epilogue.default,
                          (a, w.t(), None, None, None, 1.0, 0.0, None, None, "auto", "ptx",
                           bias, "relu", None, None, None, None, True, torch.bfloat16))


def test_refusals_name_the_argument():
    a = _mat(64, 64, torch.bfloat16)
    with _raises(hopgen.InvalidError, "a: strides"):
        hopgen.gemm(a[:, ::2], _mat(32, 64, torch.bfloat16))
    with _raises(hopgen.UnsupportedError, "float32"):
        hopgen.gemm(a.float(), a.float())
    with _raises(hopgen.InvalidError, "inner dimensions"):
        hopgen.gemm(a, _mat(32, 64, torch.bfloat16))
    f8 = a.to(torch.float8_e4m3fn)
    with _raises(hopgen.InvalidError, "K-major"):
        hopgen.gemm(f8, f8)  # b row-major
    with _raises(hopgen.InvalidError, "beta"):
        hopgen.gemm(a, a, beta=1.0)
    with _raises(hopgen.ParseError, "mainloop 'wgmma' is not one of"):
        hopgen.gemm(a, a, mainloop="wgmma")
    with _raises(hopgen.HopgenError, "bf16/f16"):
        hopgen.gemm(f8, f8.t(), config="128x128x64", mainloop="tma-ldmatrix-wgmma-rs")


# ----------------------------------------------------------------------------- graphs, compile


def test_cuda_graph_capture_and_replay_with_new_data():
    m, n, k = 512, 256, 128
    a, b = _mat(m, k, torch.bfloat16), _mat(k, n, torch.bfloat16, row_major=False)
    d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    hopgen.gemm(a, b, out=d)  # warm-up outside the capture: creates and loads the kernel
    hopgen.gemm(a, b)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        hopgen.gemm(a, b, out=d)
        e = hopgen.gemm(a, b)  # allocates from the graph's pool
    for _ in range(3):
        a.copy_(torch.randn_like(a, dtype=torch.float32))
        b.copy_(torch.randn(n, k, device="cuda").t())
        g.replay()
        torch.cuda.synchronize()
        ref = a.float() @ b.float()
        _check(d, ref, 1e-2, "replay out=")
        _check(e, ref, 1e-2, "replay allocated")
    # an operand TMA cannot address (x[:, 1:], one element off) in a graph: repacked by auto
    # into a workspace from the graph's pool, read in place by cpasync-wgmma
    xa = _view(m, k, torch.bfloat16, pad=1, offset=1)
    for ml, want in (("auto", "repacked"), ("cpasync-wgmma", "cp.async")):
        dx = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        hopgen.gemm(xa, b, out=dx, mainloop=ml)
        torch.cuda.synchronize()
        assert want in hopgen.ops._last_op[0].operands["a"], hopgen.ops._last_op[0]
        gx = torch.cuda.CUDAGraph()
        with torch.cuda.graph(gx):
            hopgen.gemm(xa, b, out=dx, mainloop=ml)
        for _ in range(2):
            xa.copy_(torch.randn(m, k, device="cuda"))
            gx.replay()
            torch.cuda.synchronize()
            _check(dx, xa.float() @ b.float(), 1e-2, f"replay of a {want} operand")
    # fp8 scales are read by the kernel: changing them between replays changes the result
    a8, w8 = _mat(m, k, torch.float8_e4m3fn), _mat(n, k, torch.float8_e4m3fn)
    sa, sb = torch.tensor([1.0], device="cuda"), torch.tensor([1.0], device="cuda")
    d8 = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    hopgen.gemm(a8, w8.t(), scale_a=sa, scale_b=sb, out=d8)
    torch.cuda.synchronize()
    g8 = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g8):
        hopgen.gemm(a8, w8.t(), scale_a=sa, scale_b=sb, out=d8)
    for s in (0.5, 3.0):
        sa.fill_(s)
        g8.replay()
        torch.cuda.synchronize()
        _check(d8, (a8.float() @ w8.float().t()) * s, 1e-2, f"fp8 replay scale {s}")


def _model(x, w, bias):
    return torch.relu(hopgen.gemm(x, w.t()) + bias) * 0.5


def test_torch_compile_fullgraph():
    x, w = _mat(256, 128, torch.bfloat16), _mat(192, 128, torch.bfloat16)
    bias = torch.randn(192, device="cuda").bfloat16()
    compiled = torch.compile(_model, fullgraph=True)
    for _ in range(2):
        got = compiled(x, w, bias)
        torch.cuda.synchronize()
        want = torch.relu(x.float() @ w.float().t() + bias.float()) * 0.5
        _check(got, want, 1e-2, "compiled")
    mm = torch.compile(lambda x, w: hopgen.gemm(x, w.t(), mainloop="tma-mmasync") * 2,
                       fullgraph=True)
    _check(mm(x, w), 2 * (x.float() @ w.float().t()), 1e-2, "compiled, mainloop tma-mmasync")
    # with CUDA graphs under torch.compile, on new data each call
    cg = torch.compile(_model, fullgraph=True, mode="reduce-overhead")
    for _ in range(4):
        x.copy_(torch.randn_like(x, dtype=torch.float32))
        got = cg(x, w, bias).clone()
        torch.cuda.synchronize()
        want = torch.relu(x.float() @ w.float().t() + bias.float()) * 0.5
        _check(got, want, 1e-2, "compiled reduce-overhead")


def test_opcheck():
    a, b = _mat(128, 64, torch.bfloat16), _mat(64, 96, torch.bfloat16)
    out = torch.empty(128, 96, device="cuda", dtype=torch.bfloat16)
    for ml in ("auto", "tma-ldmatrix-wgmma-rs"):
        torch.library.opcheck(torch.ops.hopgen.gemm.default,
                              (a, b, None, None, None, 1.0, 0.0, None, None, ml, "ptx"))
        torch.library.opcheck(torch.ops.hopgen.gemm_out.default,
                              (a, b, out, None, None, None, 1.0, 0.0, None, ml, "ptx"))
    src = torch.randn(4096, device="cuda")
    torch.library.opcheck(torch.ops.hopgen.tma_copy.default, (torch.empty_like(src), src))


def test_autograd():
    a = _mat(128, 64, torch.bfloat16).requires_grad_()
    b = _mat(64, 96, torch.bfloat16).requires_grad_()
    y = hopgen.gemm(a, b, alpha=0.5)
    y.float().sum().backward()
    a32, b32 = a.detach().float().requires_grad_(), b.detach().float().requires_grad_()
    (0.5 * (a32 @ b32)).sum().backward()
    _check(a.grad, a32.grad, 1e-2, "grad a")
    _check(b.grad, b32.grad, 1e-2, "grad b")


# ----------------------------------------------------------------------------- interop


def test_cupy_interop():
    try:
        import cupy as cp
    except ImportError:
        _skip("CuPy is not installed")
    a = cp.random.standard_normal((256, 128)).astype(cp.float16)
    b = cp.random.standard_normal((128, 64)).astype(cp.float16)
    ref = torch.as_tensor(a, device="cuda").float() @ torch.as_tensor(b, device="cuda").float()
    d = hopgen.gemm(a, b)  # DLPack in, a torch tensor out
    torch.cuda.synchronize()
    _check(d, ref, 1e-2, "cupy in")
    out = cp.empty((256, 64), dtype=cp.float16)
    assert hopgen.gemm(a, b, out=out) is out  # written in place, the caller's object back
    torch.cuda.synchronize()
    _check(torch.as_tensor(out, device="cuda"), ref, 1e-2, "cupy out")


class _CAI:
    """Only __cuda_array_interface__ (as Numba or older libraries expose)."""

    def __init__(self, t):
        self._t = t
        self.__cuda_array_interface__ = t.__cuda_array_interface__


def test_cuda_array_interface():
    a, b = _mat(128, 64, torch.float16), _mat(64, 32, torch.float16)
    d = hopgen.gemm(_CAI(a), _CAI(b))
    torch.cuda.synchronize()
    _check(d, a.float() @ b.float(), 1e-2, "CUDA array interface")


# ----------------------------------------------------------------------------- TMA kernels


def test_tma_copy():
    src = torch.randint(0, 255, (64 << 20,), dtype=torch.uint8, device="cuda")
    dst = torch.zeros_like(src)
    hopgen.tma_copy(dst, src)
    torch.cuda.synchronize()
    assert torch.equal(dst, src)
    with _raises(hopgen.InvalidError, "1024"):
        hopgen.tma_copy(torch.empty(1000, device="cuda", dtype=torch.uint8),
                        torch.empty(1000, device="cuda", dtype=torch.uint8))


def test_tma_load_tiles_land_where_the_plan_says():
    x = torch.randn(256, 256, device="cuda").half()
    images, status, plan = hopgen.tma_load_tiles(x, (64, 64), origin=(64, 0), grid=(2, 1))
    torch.cuda.synchronize()
    assert status.tolist() == [1, 1]
    smem = hopgen.ComposedLayout(plan["smem"]["layout"])
    elems = images.view(torch.float16)  # each CTA's stage buffer as f16
    for cta, (r0, c0) in enumerate(((64, 0), (128, 0))):
        idx = torch.tensor([smem(i, j) for j in range(64) for i in range(64)], device="cuda")
        got = elems[cta][idx].view(64, 64).t()
        assert torch.equal(got, x[r0:r0 + 64, c0:c0 + 64]), f"CTA {cta}"


# ----------------------------------------------------------------------------- export


class _ExportArgs(ctypes.Structure):
    """NAME_args_t of an exported GEMM (include/hopgen/export.h)."""
    _fields_ = [(x, ctypes.c_uint64) for x in ("a", "b", "c", "d", "scale_a", "scale_b")] + \
        [(x, ctypes.c_int64) for x in ("m", "n", "k")] + [("batch", ctypes.c_int)] + \
        [(x, ctypes.c_int64) for x in ("lda", "ldb", "ldc", "ldd", "bsa", "bsb", "bsc", "bsd")] + \
        [("alpha", ctypes.c_float), ("beta", ctypes.c_float)]


def _exported(directory, name, **kw):
    """Export a GEMM (a cubin when ptxas is there, else PTX), build its launcher into a shared
    library with gcc against libcuda only, and return (launch, error) functions."""
    try:
        hopgen.export(directory, 4096, 4096, 4096, name=name, dtype="bf16", **kw)
    except hopgen.ToolError:
        hopgen.export(directory, 4096, 4096, 4096, name=name, dtype="bf16", cubin=False, **kw)
    so = os.path.join(directory, f"lib{name}.so")
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror",
                    f"-I{CUDA}/include", os.path.join(directory, f"{name}.c"), "-o", so,
                    f"-L{CUDA}/lib64/stubs", "-lcuda"], check=True)
    lib = ctypes.CDLL(so)
    launch, error = getattr(lib, f"{name}_launch"), getattr(lib, f"{name}_error")
    launch.argtypes = [ctypes.POINTER(_ExportArgs), ctypes.c_void_p]
    error.restype = ctypes.c_char_p
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    return (lambda args: launch(ctypes.byref(args), stream)), (lambda: error().decode())


def test_exported_gemm_runs_with_libcuda_only():
    d_ = tempfile.mkdtemp()
    launch, error = _exported(d_, "xg")
    m, n, k = 1000, 512, 384  # another size than the export's: one kernel serves all
    a, w = _mat(m, k, torch.bfloat16), _mat(n, k, torch.bfloat16)
    d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    args = _ExportArgs(a=a.data_ptr(), b=w.data_ptr(), d=d.data_ptr(), m=m, n=n, k=k, alpha=1.0)
    assert launch(args) == 0, error()
    torch.cuda.synchronize()
    _check(d, a.float() @ w.float().t(), 1e-2, "exported GEMM")
    args.lda = k + 3  # a leading dimension TMA cannot take: refused with a sentence
    assert launch(args) != 0 and "lda" in error()
    # a kernel that reads A with cp.async (exported for lda = K + 4: 8-byte chunks), run on
    # a view with that pitch four elements into its allocation; one element off is refused
    launch, error = _exported(d_, "xc", lda=4100)
    av = _view(m, k, torch.bfloat16, pad=4, offset=4)
    d.fill_(float("nan"))
    torch.cuda.synchronize()
    args = _ExportArgs(a=av.data_ptr(), b=w.data_ptr(), d=d.data_ptr(), m=m, n=n, k=k,
                       lda=k + 4, alpha=1.0)
    assert launch(args) == 0, error()
    torch.cuda.synchronize()
    _check(d, av.float() @ w.float().t(), 1e-2, "exported cp.async GEMM")
    args.a += 2  # one bf16 further: not a multiple of the 8-byte chunk
    assert launch(args) != 0 and "8-byte chunks" in error()


# ----------------------------------------------------------------------------- host time


def test_host_overhead_per_call():
    from hopgen.bench import host_overhead
    o = host_overhead()
    print(f"\nhost time per call ({o['problem']}): C launch {o['c_launch_us']:.2f} us, "
          f"hopgen.gemm(out=) {o['hopgen_gemm_us']:.2f} us (+{o['overhead_us']:.2f} us), "
          f"allocating {o['hopgen_gemm_alloc_us']:.2f} us, torch.matmul "
          f"{o['torch_matmul_us']:.2f} us")
    assert o["overhead_us"] <= 15.0, o


# ----------------------------------------------------------------------------- without pytest


def _main(argv):
    names = [n for n in globals() if n.startswith("test_")]
    if argv == ["--list"]:
        print("\n".join(names))
        return 0
    if torch is None or not torch.cuda.is_available():
        print("SKIP all: needs torch with a CUDA device")
        return 0
    failed = 0
    for name in argv or names:
        try:
            globals()[name]()
            print(f"PASS {name}", flush=True)
        except Skip as e:
            print(f"SKIP {name}: {e}", flush=True)
        except Exception as e:  # report and go on
            failed += 1
            import traceback
            traceback.print_exc()
            print(f"FAIL {name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
                  flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
