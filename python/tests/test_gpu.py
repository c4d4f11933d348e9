"""GPU tests of the torch integration (skipped without torch and a Hopper GPU): GEMM against
torch across dtypes and layouts, refusals, CUDA-graph capture and replay with new data,
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


def test_gemm_odd_shapes_repack_and_direct_store():
    # K = 100: a row-major's 200-byte rows are repacked; N = 100: D stored without TMA
    _layout_sweep(torch.bfloat16, 1000, 100, 100)
    _layout_sweep(torch.float16, 1, 8, 64)


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
        if hasattr(torch, "_scaled_mm") and at == bt:
            t = torch._scaled_mm(a, w.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                                 use_fast_accum=True)
            assert abs(_rel(d, ref) - _rel(t, ref)) < 5e-3


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
    buf = torch.zeros(64 * 64 + 8, device="cuda", dtype=torch.bfloat16)
    with _raises(hopgen.InvalidError, "16-byte aligned"):
        hopgen.gemm(buf[1:1 + 64 * 64].view(64, 64), a)


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
    torch.library.opcheck(torch.ops.hopgen.gemm.default,
                          (a, b, None, None, None, 1.0, 0.0, None, None, "ptx"))
    torch.library.opcheck(torch.ops.hopgen.gemm_out.default,
                          (a, b, out, None, None, None, 1.0, 0.0, None, "ptx"))
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


def test_exported_gemm_runs_with_libcuda_only():
    d_ = tempfile.mkdtemp()
    try:
        hopgen.export(d_, 4096, 4096, 4096, name="xg", dtype="bf16")
    except hopgen.ToolError:
        hopgen.export(d_, 4096, 4096, 4096, name="xg", dtype="bf16", cubin=False)
    so = os.path.join(d_, "libxg.so")
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror",
                    f"-I{CUDA}/include", os.path.join(d_, "xg.c"), "-o", so,
                    f"-L{CUDA}/lib64/stubs", "-lcuda"], check=True)
    lib = ctypes.CDLL(so)

    class Args(ctypes.Structure):
        _fields_ = [(x, ctypes.c_uint64) for x in ("a", "b", "c", "d", "scale_a", "scale_b")] + \
            [(x, ctypes.c_int64) for x in ("m", "n", "k")] + [("batch", ctypes.c_int)] + \
            [(x, ctypes.c_int64) for x in ("lda", "ldb", "ldc", "ldd", "bsa", "bsb", "bsc",
                                           "bsd")] + \
            [("alpha", ctypes.c_float), ("beta", ctypes.c_float)]

    lib.xg_launch.argtypes = [ctypes.POINTER(Args), ctypes.c_void_p]
    lib.xg_error.restype = ctypes.c_char_p
    m, n, k = 1000, 512, 384  # another size than the export's: one kernel serves all
    a, w = _mat(m, k, torch.bfloat16), _mat(n, k, torch.bfloat16)
    d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    args = Args(a=a.data_ptr(), b=w.data_ptr(), d=d.data_ptr(), m=m, n=n, k=k, alpha=1.0)
    r = lib.xg_launch(ctypes.byref(args), ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
    assert r == 0, lib.xg_error().decode()
    torch.cuda.synchronize()
    _check(d, a.float() @ w.float().t(), 1e-2, "exported GEMM")
    args.lda = k + 3  # a leading dimension TMA cannot take: refused with a sentence
    assert lib.xg_launch(ctypes.byref(args), None) != 0
    assert b"lda" in lib.xg_error()


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
