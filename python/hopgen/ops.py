"""hopgen kernels on torch tensors: GEMM (bf16, f16, fp8 with per-tensor scales) and the TMA
copy kernels, launched on torch's current stream in torch's (primary) CUDA context.

The launch path is graph-safe: no host synchronisation, no device allocation by hopgen, no
blocking call. Outputs come from torch's caching allocator (capture-aware). Operations are
cached per problem signature (shapes, strides, dtypes, the base pointers' alignments,
configuration, mainloop), so the first call of a signature generates, JIT-compiles (or loads
from hopgen's on-disk cache) and sizes the kernel, and later calls only encode the tensor
maps and launch. Operations hold no device memory (an operand TMA cannot address is read
with cp.async, never repacked), so one serves every stream at once. A first call during
CUDA-graph capture is refused with a sentence: warm up (call once) before capturing, as
torch's CUDA-graph documentation recommends.

Ops are registered with torch.library (hopgen::gemm, hopgen::gemm_out, hopgen::tma_copy, and
hopgen::gemm_epilogue for the fused epilogue's arguments)
with fake implementations, so torch.compile(fullgraph=True) traces through them; in eager
mode hopgen.gemm calls the launch path directly, skipping the dispatcher's overhead.
"""
from __future__ import annotations

import ctypes as C
import threading
from typing import Any, Optional, Tuple

import torch

from . import _capi
from ._capi import fn
from .errors import InvalidError, UnsupportedError, check, error_from_status
from .generate import GemmConfig, _backend, _config, mainloop_code

__all__ = ["gemm", "scaled_gemm", "grouped_gemm", "tma_copy", "tma_load_tiles", "clear_cache",
           "GemmOp", "as_tensor"]

_DT = {torch.bfloat16: 6, torch.float16: 5, torch.float32: 9}
if hasattr(torch, "float8_e4m3fn"):
    _DT[torch.float8_e4m3fn] = 2
    _DT[torch.float8_e5m2] = 3
_FP8 = (2, 3)

_lock = threading.Lock()
_runtimes: dict = {}
_ops: dict = {}
_modules: dict = {}
_kernels: dict = {}
_fast: dict = {}


def as_tensor(x: Any, what: str) -> torch.Tensor:
    """A torch view of x: a torch.Tensor, or any object with __dlpack__ (CuPy, JAX, ...) or
    __cuda_array_interface__ (zero-copy; DLPack orders the producer's stream before torch's)."""
    if isinstance(x, torch.Tensor):
        return x
    if hasattr(x, "__dlpack__"):
        return torch.from_dlpack(x)
    if hasattr(x, "__cuda_array_interface__"):
        return torch.as_tensor(x, device="cuda")
    raise TypeError(f"{what}: expected a torch.Tensor or an object with __dlpack__ or "
                    f"__cuda_array_interface__, got {type(x).__name__}")


def _runtime(index: int):
    rt = _runtimes.get(index)
    if rt is not None:
        return rt
    with _lock:
        rt = _runtimes.get(index)
        if rt is None:
            # torch creates and makes current the device's primary context; hopgen retains
            # the same one (hg_rt_open), so both see the same memory and streams.
            torch.cuda.init()
            with torch.cuda.device(index):
                torch.cuda.current_stream()
                h = C.c_void_p()
                check(fn("hg_rt_open")(index, C.byref(h)), f"GPU {index}: ")
            rt = _runtimes[index] = h
    return rt


def _capturing() -> bool:
    return torch.cuda.is_current_stream_capturing()


def _raw_stream(index: int) -> int:
    return torch._C._cuda_getCurrentRawStream(index)


# ----------------------------------------------------------------------------- GEMM

_get_stream = torch._C._cuda_getCurrentRawStream
_run = fn("hg_gemm_op_run_workspace")

# What a base address is known to be a multiple of, from its low four bits: the lowest set
# bit, 16 when none is set (hg_gemm_problem_t's a_align / b_align).
_ALIGN = tuple(16 if r == 0 else r & -r for r in range(16))


class GemmOp:
    """One created GEMM (hg_gemm_op_t): kernel generated, compiled, sized for its problem.
    One op serves every stream at once: an op that repacks an operand (rows TMA cannot
    address, with mainloop "auto") or splits K takes `workspace` bytes per run from torch's
    allocator on the current stream (so graph capture and concurrent streams each get their
    own); an op whose workspace must start at zero (an amax's state, split-K by atomic adds,
    stream-K) keeps zeroed buffers instead, one per stream and one per graph capture
    (_workspace)."""

    __slots__ = ("handle", "device", "kernel", "config", "mainloop", "grid", "jit_cache_hit",
                 "d_dtype", "mnk", "operands", "workspace", "needs_zeros", "stream_workspace",
                 "capture_workspace", "spare")

    def __init__(self, handle, device: int, d_dtype, mnk):
        self.handle, self.device, self.d_dtype, self.mnk = handle, device, d_dtype, mnk
        k = fn("hg_gemm_op_kernel")(handle)[0]
        self.kernel = k.k.name.decode()
        cfg = GemmConfig._from_c(k.config)
        self.config, self.mainloop = str(cfg), cfg.mainloop
        self.operands = {x: "repacked" if rp else "tma" if tma else f"cp.async {vec} B"
                         for x, tma, vec, rp in (("a", k.a_tma, k.a_vec, k.repack_a),
                                                 ("b", k.b_tma, k.b_vec, k.repack_b))}
        self.workspace = fn("hg_gemm_op_workspace_bytes")(handle)
        self.needs_zeros = fn("hg_gemm_op_workspace_zero_bytes")(handle) > 0
        self.stream_workspace = {}
        self.capture_workspace = {}  # (capture id, stream) -> buffer, kept for the graphs
        self.spare = None  # a zeroed buffer for the next capture (_workspace)
        self.grid = fn("hg_gemm_op_grid")(handle)
        self.jit_cache_hit = bool(fn("hg_gemm_op_jit")(handle)[0].cache_hit)

    def __repr__(self) -> str:
        return (f"GemmOp({self.kernel}, config {self.config}, A {self.operands['a']}, "
                f"B {self.operands['b']}, grid {self.grid})")


def clear_cache() -> None:
    """Destroy every cached GEMM operation and loaded module (frees their device memory)."""
    with _lock:
        for op in _ops.values():
            fn("hg_gemm_op_destroy")(op.handle)
        _ops.clear()
        for h in _grouped_ops.values():
            fn("hg_grouped_gemm_op_destroy")(h)
        _grouped_ops.clear()
        _fast.clear()
        _kernels.clear()
        for mod, rt in _modules.values():
            fn("hg_rt_module_unload")(rt, mod[0])
        _modules.clear()


def _matrix(t: torch.Tensor, what: str, rows_name: str, cols_name: str):
    """(rows, cols, batch, row_major, ld, batch_stride) of a 2-D or 3-D operand."""
    if t.dim() not in (2, 3):
        raise InvalidError(f"{what} has {t.dim()} dimensions; hopgen.gemm takes 2-D "
                           f"[{rows_name}, {cols_name}] or 3-D batched tensors")
    rows, cols = t.shape[-2], t.shape[-1]
    s_r, s_c = t.stride(-2), t.stride(-1)
    batch = t.shape[0] if t.dim() == 3 else 1
    bs = t.stride(0) if t.dim() == 3 else 0
    if s_c == 1 and (s_r >= cols or rows == 1):
        return rows, cols, batch, True, max(s_r, cols), bs
    if s_r == 1 and (s_c >= rows or cols == 1):
        return rows, cols, batch, False, max(s_c, rows), bs
    raise InvalidError(f"{what}: strides {tuple(t.stride())} for shape {tuple(t.shape)} are "
                       "neither row-major nor column-major (one of the last two dimensions "
                       "must have stride 1, the other a leading dimension at least as large "
                       "as the contiguous extent); pass .contiguous() or a transposed view")


def _dtype(t: torch.Tensor, what: str) -> int:
    code = _DT.get(t.dtype)
    if code is None or code == 9:  # float32 is an output type only
        raise UnsupportedError(f"{what} has dtype {t.dtype}; hopgen.gemm takes bfloat16, "
                               "float16 and float8 (e4m3fn, e5m2) operands")
    return code


def _scale_ptr(s, what: str, dev: torch.device) -> Tuple[int, float]:
    """(device pointer, host factor) of a per-tensor scale: a one-element float32 tensor on
    the GPU (read by the kernel), or a Python number (folded into alpha)."""
    if s is None:
        return 0, 1.0
    if isinstance(s, (int, float)):
        return 0, float(s)
    s = as_tensor(s, what)
    if s.numel() != 1 or s.dtype != torch.float32 or s.device != dev:
        raise InvalidError(f"{what}: a per-tensor scale is a one-element float32 tensor on "
                           f"{dev} (or a Python number); got {s.dtype} of {s.numel()} elements "
                           f"on {s.device}")
    return s.data_ptr(), 1.0


def _activation(activation):
    """(hg_act_t, lo, hi) of an activation name ("relu", "gelu", "gelu_tanh", "silu",
    "sigmoid", "clamp:LO:HI"), through the library's parser and its sentences."""
    if activation is None:
        return (0, 0.0, 0.0)
    if not isinstance(activation, str):
        raise InvalidError(f"activation must be a name such as 'gelu', not {activation!r}")
    act, lo, hi = C.c_int(), C.c_float(), C.c_float()
    check(fn("hg_gemm_act_parse")(activation.encode(), C.byref(act), C.byref(lo), C.byref(hi)),
          "hopgen.gemm activation: ")
    return (act.value, lo.value, hi.value)


def _bias(bias, n, dev):
    """The bias vector's (pointer, hg_dtype_t) after checking it: 1-D, N elements, contiguous,
    bfloat16 / float16 / float32, on the operands' device; (0, 0) for None."""
    if bias is None:
        return 0, 0
    if not isinstance(bias, torch.Tensor):
        raise InvalidError(f"bias must be a torch tensor, not {type(bias).__name__}")
    if bias.dim() != 1 or bias.shape[0] != n or (n > 1 and bias.stride(0) != 1):
        raise InvalidError(f"bias {tuple(bias.shape)} strides {tuple(bias.stride())}: expected "
                           f"a contiguous vector of N = {n} elements (one per column of D)")
    if bias.dtype not in _DT or bias.device != dev:
        raise InvalidError(f"bias has dtype {bias.dtype} on {bias.device}; it must be "
                           f"bfloat16, float16 or float32 on {dev}")
    return bias.data_ptr(), _DT[bias.dtype]


def _vector(v, what, length, line, dev):
    """A contiguous float32 vector of `length` elements on dev (the row / column scales);
    0 for None."""
    if v is None:
        return 0
    if not isinstance(v, torch.Tensor):
        raise InvalidError(f"{what} must be a torch tensor, not {type(v).__name__}")
    if v.dim() != 1 or v.shape[0] != length or (length > 1 and v.stride(0) != 1) or \
            v.dtype != torch.float32 or v.device != dev:
        raise InvalidError(f"{what} {tuple(v.shape)} {v.dtype} on {v.device}: expected a "
                           f"contiguous float32 vector of {length} elements (one per {line} "
                           f"of D) on {dev}")
    return v.data_ptr()


def _like_out(t, what, out, dev):
    """A tensor laid out exactly as out (shape and strides), bfloat16 / float16 / float32, on
    dev (the residual, the aux output): its (pointer, hg_dtype_t)."""
    if not isinstance(t, torch.Tensor):
        raise InvalidError(f"{what} must be a torch tensor, not {type(t).__name__}")
    if t.shape != out.shape or t.stride() != out.stride() or t.device != dev:
        raise InvalidError(f"{what} {tuple(t.shape)} strides {tuple(t.stride())} on {t.device}: "
                           f"expected out's shape {tuple(out.shape)} and strides "
                           f"{tuple(out.stride())} on {dev}")
    code = _DT.get(t.dtype)
    if code is None or code in _FP8:
        raise UnsupportedError(f"{what} has dtype {t.dtype}; it may be bfloat16, float16 or "
                               "float32")
    return t.data_ptr(), code


def _gemm_launch(a, b, out, c, alpha, beta, scale_a, scale_b, config, mainloop,
                 backend, bias=None, activation=None, residual=None, rowscale=None,
                 colscale=None, scale_d=None, amax=None, aux=None) -> None:
    """Validate, find (or create) the operation for this signature and launch it into out."""
    if a.device.type != "cuda" or b.device != a.device or out.device != a.device:
        raise InvalidError(f"hopgen.gemm: a ({a.device}), b ({b.device}) and out "
                           f"({out.device}) must be on the same CUDA device")
    ta, tb, td = _dtype(a, "a"), _dtype(b, "b"), _DT.get(out.dtype)
    if td is None:
        raise UnsupportedError(f"out has dtype {out.dtype}; D may be bfloat16, float16, "
                               "float32, float8_e4m3fn or float8_e5m2")
    m, k, batch, a_row, lda, bsa = _matrix(a, "a", "M", "K")
    k2, n, batch_b, b_row, ldb, bsb = _matrix(b, "b", "K", "N")
    if k2 != k:
        raise InvalidError(f"a is [{m}, {k}] and b is [{k2}, {n}]: the inner dimensions "
                           "differ")
    if batch_b != batch or (a.dim() != b.dim()):
        raise InvalidError(f"a {tuple(a.shape)} and b {tuple(b.shape)}: give both operands "
                           "the same batch dimension (no broadcasting)")
    dm, dn, batch_d, d_row, ldd, bsd = _matrix(out, "out", "M", "N")
    if (dm, dn, batch_d) != (m, n, batch) or not d_row or out.dim() != a.dim():
        raise InvalidError(f"out {tuple(out.shape)} strides {tuple(out.stride())}: expected a "
                           f"row-major {'[%d, ' % batch if a.dim() == 3 else '['}{m}, {n}] "
                           "tensor (last dimension contiguous)")
    if ta in _FP8 and b_row:
        raise InvalidError("b: fp8 operands must be K-major (wgmma reads 8-bit operands "
                           "K-major only): pass b as the transpose of a row-major [N, K] "
                           "tensor, e.g. w.t(), as torch._scaled_mm requires")
    if ta in _FP8 and not a_row:
        raise InvalidError("a: fp8 operands must be K-major: a must be row-major [M, K]")
    dev = a.device
    psa, fa = _scale_ptr(scale_a, "scale_a", dev)
    psb, fb = _scale_ptr(scale_b, "scale_b", dev)
    if (psa or psb) and ta not in _FP8:
        raise InvalidError("scale_a / scale_b tensors are for fp8 operands; for 16-bit ones "
                           "give Python numbers (folded into alpha)")
    alpha = float(alpha) * fa * fb
    beta = float(beta)
    pc = 0
    ldc = bsc = 0
    if c is not None:
        c = as_tensor(c, "c")
        if c.dtype not in (torch.bfloat16, torch.float16, torch.float32) or c.device != dev:
            raise InvalidError(f"c has dtype {c.dtype} on {c.device}; C may be bfloat16, "
                               f"float16 or float32 (its own type, not necessarily out's), "
                               f"on {dev}")
        cm, cn, batch_c, c_row, ldc, bsc = _matrix(c, "c", "M", "N")
        if (cm, cn, batch_c) != (m, n, batch) or not c_row:
            raise InvalidError(f"c {tuple(c.shape)} strides {tuple(c.stride())}: expected a "
                               f"row-major [{m}, {n}] tensor like out")
        pc = c.data_ptr()
    elif beta != 0:
        raise InvalidError(f"beta = {beta} but no c was given")
    pbias, tbias = _bias(bias, n, dev)
    act = _activation(activation)
    # the epilogue's other inputs and outputs (issue 12): C's type (also the residual's), the
    # scale vectors, fp8 D's scale, the amax and the aux output
    tc = _DT[c.dtype] if c is not None else 0
    pres = 0
    if residual is not None:
        pres, tres = _like_out(residual, "residual", out, dev)
        if tc and tres != tc:
            raise InvalidError(f"residual has dtype {residual.dtype} and c {c.dtype}: the "
                               "residual has C's type")
        tc = tres
    if tc == td:
        tc = 0  # the default: one problem, one key
    prs = _vector(rowscale, "rowscale", m, "row", dev)
    pcs = _vector(colscale, "colscale", n, "column", dev)
    psd = 0
    if scale_d is not None:
        if td not in _FP8:
            raise InvalidError(f"scale_d scales an fp8 out (float8_e4m3fn or float8_e5m2); out "
                               f"is {out.dtype}")
        if isinstance(scale_d, (int, float)):
            scale_d = torch.full((1,), float(scale_d), dtype=torch.float32, device=dev)
        psd, f = _scale_ptr(scale_d, "scale_d", dev)
    pamax = 0
    if amax is not None:
        if not isinstance(amax, torch.Tensor) or amax.numel() != 1 or \
                amax.dtype != torch.float32 or amax.device != dev:
            raise InvalidError(f"amax: a one-element float32 tensor on {dev} for max |D| "
                               "(written by the kernel; the run zeroes it first)")
        pamax = amax.data_ptr()
    paux, taux, ldaux, bsaux = 0, 0, 0, 0
    if aux is not None:
        if activation is None:
            raise InvalidError("aux receives the values before the activation, and no "
                               "activation was given: pass activation= or drop aux")
        paux, taux = _like_out(aux, "aux", out, dev)
        ldaux, bsaux = ldd, bsd
    epi = (tc, pres != 0, prs != 0, pcs != 0, pamax != 0, taux, ldaux, bsaux)
    ptrs = (pbias, prs, pcs, pres, psd, pamax, paux)
    pa, pb, pd = a.data_ptr(), b.data_ptr(), out.data_ptr()
    index = dev.index if dev.index is not None else torch.cuda.current_device()
    # The base alignments are part of the signature: an operand less than 16-byte aligned
    # goes through cp.async in chunks that fit it (hg_gemm_op_run refuses a pointer less
    # aligned than its op was made for), and D's alignment (and aux's, stored like D) decides
    # its TMA store.
    key = (index, ta, tb, td, m, n, k, batch, a_row, b_row, lda, ldb, ldc, ldd, bsa, bsb, bsc,
           bsd, alpha, beta, _ALIGN[pa & 15], _ALIGN[pb & 15], pd % 16 == 0 and paux % 16 == 0,
           config, mainloop,
           backend, tbias, act, epi, torch.are_deterministic_algorithms_enabled())
    op = _ops.get(key)
    if op is None:
        op = _create(key, index)
    _last_op[0] = op
    _run_op(op, pa, pb, pc, pd, psa, psb, index, pbias, ptrs)


def _workspace(op, index, stream):
    """op's workspace on this stream, and whether it is zero where op needs zeros.

    Where it needs zeros (an amax, split-K by atomic adds, stream-K): every run leaves its
    amax's state, split-K sums, counters and stream-K flags zero again, so a buffer made zero
    once serves every later run in stream order without a memset launch.
    - Outside a CUDA-graph capture: one zeroed buffer per (operation, stream), kept with the
      operation (a buffer per stream, as runs on two streams may overlap).
    - While capturing: one buffer per (capture, stream), shared by every call of the operation
      in that capture on that stream. It is the operation's spare, a buffer zeroed and
      synchronised outside any capture, when there is one: the graph then replays without a
      memset node. Else (the spare went to an earlier capture and no eager call came since to
      make another) a buffer from the graph's pool, zeroed by a memset node on each replay
      before its first use. Graph buffers stay with the operation for the process's life (the
      graph may replay at any time).
    Else (a repack's packed copy, split-K partials by the reduction pass): a buffer from
    torch's allocator each call (from the graph's pool while capturing)."""
    if not op.workspace:
        return None, False
    if not op.needs_zeros:
        return torch.empty(op.workspace, dtype=torch.uint8, device=f"cuda:{index}"), False
    if torch.cuda.is_current_stream_capturing():
        cid = C.c_uint64(0)
        check(fn("hg_rt_stream_capture_id")(_runtime(index), stream, C.byref(cid)),
              "hopgen.gemm: ")
        key = (cid.value, stream)
        ws = op.capture_workspace.get(key)
        if ws is not None:
            return ws, True  # an earlier call of this capture left it zero
        ws, zeroed = op.spare, True
        op.spare = None
        if ws is None:
            ws = torch.empty(op.workspace, dtype=torch.uint8, device=f"cuda:{index}")
            zeroed = False
        op.capture_workspace[key] = ws
        return ws, zeroed
    ws = op.stream_workspace.get(stream)
    if ws is None:
        ws = torch.zeros(op.workspace, dtype=torch.uint8, device=f"cuda:{index}")
        op.stream_workspace[stream] = ws
    if op.spare is None:
        # zero before any graph that takes it can replay, on whatever stream
        op.spare = torch.zeros(op.workspace, dtype=torch.uint8, device=f"cuda:{index}")
        torch.cuda.current_stream(index).synchronize()
    return ws, True


def _run_op(op, pa, pb, pc, pd, psa, psb, index, pbias=0, ptrs=None) -> None:
    """Launch op on the current stream, with its workspace (_workspace) when it needs one."""
    stream = _get_stream(index)
    ws, zeroed = _workspace(op, index, stream)
    if ws is None and not pbias and not (ptrs is not None and any(ptrs)):
        st = _run(op.handle, pa, pb, pc, pd, psa, psb, 0, 0, stream)
    else:
        args = _capi.GemmArgs(a=pa, b=pb, c=pc, d=pd, scale_a=psa, scale_b=psb, bias=pbias,
                              workspace=ws.data_ptr() if ws is not None else 0,
                              workspace_bytes=op.workspace if ws is not None else 0,
                              workspace_zeroed=zeroed)
        if ptrs is not None and any(ptrs):
            (_, args.rowscale, args.colscale, args.residual, args.scale_d, args.amax,
             args.aux) = ptrs
        st = fn("hg_gemm_op_run_args")(op.handle, C.byref(args), stream)
    if st.code != 0:
        raise error_from_status(st, "hopgen.gemm: ")


def _create(key, index) -> GemmOp:
    (_, ta, tb, td, m, n, k, batch, a_row, b_row, lda, ldb, ldc, ldd, bsa, bsb, bsc, bsd,
     alpha, beta, a_align, b_align, d_aligned, config, mainloop, backend, tbias, act,
     epi, deterministic) = key
    tc, res, rs, cs, amax, taux, ldaux, bsaux = epi
    mainloop_code(mainloop, "hopgen.gemm mainloop")  # a bad name: the C sentence, at once
    p = _capi.GemmProblem(m=m, n=n, k=k, batch=batch, a_type=ta, b_type=tb, d_type=td,
                          a_k_major=a_row, b_k_major=not b_row, lda=lda, ldb=ldb, ldc=ldc,
                          ldd=ldd, batch_stride_a=bsa, batch_stride_b=bsb, batch_stride_c=bsc,
                          batch_stride_d=bsd, alpha=alpha, beta=beta, d_no_tma=not d_aligned,
                          a_align=a_align, b_align=b_align, act=act[0], act_lo=act[1],
                          act_hi=act[2], bias=1 if tbias else 0, bias_type=tbias, c_type=tc,
                          residual=res, rowscale=rs, colscale=cs, amax=amax, aux=taux != 0,
                          aux_type=taux, ldaux=ldaux, batch_stride_aux=bsaux,
                          # torch.use_deterministic_algorithms(True): no split-K by atomic
                          # adds (D's bits the same run to run)
                          deterministic=deterministic)
    check(fn("hg_gemm_problem_normalize")(C.byref(p)), "hopgen.gemm: ")
    if _capturing():
        raise InvalidError(
            "hopgen.gemm: the first call for this problem (%s x %s -> %s, M=%d N=%d K=%d) "
            "happened during CUDA-graph capture; creating it compiles and loads a kernel, "
            "which a capture must not do: call it once before capturing (warm-up)"
            % (_capi.DTYPES[ta], _capi.DTYPES[tb], _capi.DTYPES[td], m, n, k))
    rt = _runtime(index)
    h = C.c_void_p()
    with torch.cuda.device(index):
        cfg = _config(p, config, mainloop, fn("hg_rt_device")(rt), "hopgen.gemm")
        check(fn("hg_gemm_op_create")(rt, C.byref(p), C.byref(cfg) if cfg is not None else None,
                                      _backend(backend), C.byref(h)), "hopgen.gemm: ")
    op = GemmOp(h, index, td, (m, n, k))
    with _lock:
        _ops[key] = op
    return op


# ----------------------------------------------------------------------------- grouped GEMM

_grouped_ops: dict = {}


def grouped_gemm(a, b, offs=None, *, counts=None, out=None, out_dtype=None, scale_a=None,
                 scale_b=None, config=None, expected_rows: Optional[int] = None,
                 backend: str = "ptx", use_fast_accum: bool = False):
    """The grouped GEMM of mixture-of-experts layers (hopgen's hg_grouped_gemm_*), one
    persistent launch for every expert, the experts' rows read on the GPU (graph-safe).

    Contiguous (torch._grouped_mm's signature): a [total, K] with the rows of expert e at
       [offs[e-1], offs[e]), offs an int32 GPU tensor of E cumulative ends; out [total, N]
       (rows past offs[-1] are left as they are).
    Masked: a [E, M, K] and counts an int32 GPU tensor of E row counts (each <= M); out
       [E, M, N], rows past an expert's count left as they are.
    b: [E, K, N], contiguous ([E, K, N] storage) or the transpose of a contiguous [E, N, K]
       (the K-major weights fp8 needs). a contiguous. Empty experts are allowed.
    scale_a, scale_b: fp8 scales, float32 GPU tensors: per tensor, scale_a one element and
       scale_b E (one per expert); or row-wise, scale_a one per row of a ([total] or [E, M])
       and scale_b one per expert and column ([E, N]), as torch._scaled_grouped_mm; or
       block-wise (DeepSeek-V3's, DeepGEMM's layouts; taken when scale_b is 3-D): scale_a
       1x128, [total, ceil(K/128)] with strides (1, lda), lda >= total (contiguous), or
       [E, M, ceil(K/128)] with strides (ceil(K/128) lda, 1, lda), lda >= M (masked), i.e.
       the M-major transpose of a contiguous [.., ceil(K/128), lda]; scale_b 128x128,
       [E, ceil(N/128), ceil(K/128)] with strides (ceil(N/128) ldb, ldb, 1), ldb >=
       ceil(K/128). Applied per 128 of K in the main loop (use_fast_accum is refused).
    expected_rows: rows per expert the configuration is chosen for (default: the mean).
    use_fast_accum: fp8, the whole K in wgmma's accumulator (as torch's flag); default: partial
       sums promoted to f32 (accurate).
    """
    a, b = as_tensor(a, "a"), as_tensor(b, "b")
    masked = offs is None
    if masked == (counts is None):
        raise InvalidError("hopgen.grouped_gemm: give offs (contiguous a [total, K]) or counts "
                           "(masked a [E, M, K]), one of them")
    groups_t = as_tensor(counts if masked else offs, "counts" if masked else "offs")
    if b.dim() != 3:
        raise InvalidError(f"hopgen.grouped_gemm: b has shape {tuple(b.shape)}; expected "
                           f"[E, K, N]")
    e, k, n = b.shape
    if a.dim() != (3 if masked else 2) or a.shape[-1] != k or (masked and a.shape[0] != e):
        raise InvalidError(f"hopgen.grouped_gemm: a has shape {tuple(a.shape)}; expected "
                           f"{'[E, M, K]' if masked else '[total, K]'} with E = {e}, K = {k}")
    if not a.is_contiguous():
        raise InvalidError("hopgen.grouped_gemm: a must be contiguous (each token's row of K "
                           "elements, rows packed)")
    if b.stride() == (k * n, n, 1):
        b_k_major = False
    elif b.stride() == (k * n, 1, k):
        b_k_major = True
    else:
        raise InvalidError(f"hopgen.grouped_gemm: b strides {tuple(b.stride())}: give a "
                           f"contiguous [E, K, N] or the transpose of a contiguous [E, N, K]")
    if groups_t.dtype != torch.int32 or groups_t.numel() != e or groups_t.device != a.device:
        raise InvalidError(f"hopgen.grouped_gemm: {'counts' if masked else 'offs'} must be an "
                           f"int32 tensor of {e} elements on {a.device}")
    ta, tb = _DT.get(a.dtype), _DT.get(b.dtype)
    if ta is None or tb is None:
        raise UnsupportedError(f"hopgen.grouped_gemm: a {a.dtype} x b {b.dtype}")
    rows = a.shape[1] if masked else a.shape[0]
    if out is None:
        td_dtype = out_dtype or (torch.bfloat16 if ta in _FP8 else a.dtype)
        out = torch.empty((*a.shape[:-1], n), device=a.device, dtype=td_dtype)
    else:
        out = as_tensor(out, "out")
        if tuple(out.shape) != (*a.shape[:-1], n) or not out.is_contiguous():
            raise InvalidError(f"hopgen.grouped_gemm: out {tuple(out.shape)}: expected a "
                               f"contiguous {(*a.shape[:-1], n)}")
    td = _DT.get(out.dtype)
    psa = scale_a.data_ptr() if scale_a is not None else 0
    psb = scale_b.data_ptr() if scale_b is not None else 0
    if (psa or psb) and ta not in _FP8:
        raise InvalidError("hopgen.grouped_gemm: scale_a / scale_b are for fp8 operands")
    block = scale_b is not None and scale_b.dim() == 3
    scale_lda = scale_ldb = 0
    if block:
        scale_lda, scale_ldb = _grouped_block_scales(scale_a, scale_b, masked, e, rows, n, k,
                                                     a.device)
    row = not block and scale_a is not None and scale_a.numel() > 1
    n_sa, n_sb = ((e * rows if masked else rows), e * n) if row else (1, e)
    for t, want, what in () if block else ((scale_a, n_sa, "scale_a"), (scale_b, n_sb, "scale_b")):
        if t is not None and (t.numel() != want or t.dtype != torch.float32 or
                              not t.is_contiguous()):
            raise InvalidError(f"hopgen.grouped_gemm: {what} must be {want} contiguous float32 "
                               f"({'row-wise' if row else 'per tensor'} scales)")
    if row and scale_b is None:
        raise InvalidError("hopgen.grouped_gemm: row-wise scale_a needs row-wise scale_b")
    index = a.device.index if a.device.index is not None else torch.cuda.current_device()
    exp = expected_rows or max(1, rows // e if not masked else rows)
    key = (index, masked, e, rows, n, k, ta, tb, td, b_k_major, exp, _cfg_text(config), backend,
           row, block, scale_lda, scale_ldb, bool(use_fast_accum))
    h = _grouped_ops.get(key)
    if h is None:
        if _capturing():
            raise InvalidError("hopgen.grouped_gemm: the first call for this problem happened "
                               "during CUDA-graph capture: call it once before capturing")
        p = _capi.GroupedGemmProblem(layout=2 if masked else 1, groups=e, rows=rows, n=n, k=k,
                                     a_type=ta, b_type=tb, d_type=td, b_k_major=b_k_major,
                                     alpha=1.0, expected_rows=exp,
                                     scale=2 if block else 1 if row else 0,
                                     fp8_accum=1 if use_fast_accum else 0,
                                     scale_lda=scale_lda, scale_ldb=scale_ldb)
        cfg = None
        if config is not None:
            cfg = _capi.GemmConfig()
            check(fn("hg_gemm_config_parse")(_cfg_text(config).encode(), C.byref(cfg)),
                  "hopgen.grouped_gemm config: ")
        rt = _runtime(index)
        hh = C.c_void_p()
        with torch.cuda.device(index):
            check(fn("hg_grouped_gemm_op_create")(rt, C.byref(p), C.byref(cfg) if cfg else None,
                                                  _backend(backend), C.byref(hh)),
                  "hopgen.grouped_gemm: ")
        h = _grouped_ops[key] = hh
    st = fn("hg_grouped_gemm_op_run")(h, a.data_ptr(), b.data_ptr(), out.data_ptr(),
                                       groups_t.data_ptr(), psa, psb, _get_stream(index))
    if st.code:
        raise error_from_status(st, "hopgen.grouped_gemm: ")
    return out


def _grouped_block_scales(scale_a, scale_b, masked: bool, e: int, rows: int, n: int, k: int,
                          device):
    """The leading dimensions (scale_lda, scale_ldb) of grouped block-wise scales, after
    checking their shapes and strides against the layouts grouped_gemm documents."""
    kb, nb = (k + 127) // 128, (n + 127) // 128
    if scale_a is None:
        raise InvalidError("hopgen.grouped_gemm: block-wise scale_b (3-D) needs block-wise "
                           "scale_a")
    for t, what in ((scale_a, "scale_a"), (scale_b, "scale_b")):
        if t.dtype != torch.float32 or t.device != device:
            raise InvalidError(f"hopgen.grouped_gemm: block-wise {what} must be float32 on "
                               f"{device}, not {t.dtype} on {t.device}")
    if tuple(scale_b.shape) != (e, nb, kb):
        raise InvalidError(f"hopgen.grouped_gemm: block-wise scale_b has shape "
                           f"{tuple(scale_b.shape)}; expected [E, ceil(N/128), ceil(K/128)] = "
                           f"{(e, nb, kb)}")
    sb = scale_b.stride()
    ldb = sb[1] if nb > 1 else max(kb, sb[0] // nb if e > 1 else kb)
    if (kb > 1 and sb[2] != 1) or ldb < kb or (e > 1 and sb[0] != nb * ldb):
        raise InvalidError(f"hopgen.grouped_gemm: block-wise scale_b strides {sb}: expected "
                           f"(ceil(N/128) ldb, ldb, 1) with ldb >= ceil(K/128) = {kb}")
    want = (e, rows, kb) if masked else (rows, kb)
    if tuple(scale_a.shape) != want:
        raise InvalidError(f"hopgen.grouped_gemm: block-wise scale_a has shape "
                           f"{tuple(scale_a.shape)}; expected "
                           f"{'[E, M, ceil(K/128)]' if masked else '[total, ceil(K/128)]'} = "
                           f"{want}")
    sa = scale_a.stride()[-2:]
    lda = sa[1] if kb > 1 else rows
    if (rows > 1 and sa[0] != 1) or lda < rows or (
            masked and e > 1 and scale_a.stride()[0] != kb * lda):
        raise InvalidError(f"hopgen.grouped_gemm: block-wise scale_a strides "
                           f"{tuple(scale_a.stride())}: expected M-major 1x128 scales, "
                           f"{'(ceil(K/128) lda, 1, lda)' if masked else '(1, lda)'} with lda "
                           f">= {rows} (the transpose of a contiguous "
                           f"{'[E, ceil(K/128), lda]' if masked else '[ceil(K/128), lda]'})")
    return lda, ldb


def _out_dtype(a: torch.Tensor, out_dtype) -> torch.dtype:
    if out_dtype is not None:
        return out_dtype
    return torch.bfloat16 if _DT.get(a.dtype) in _FP8 else a.dtype


def _out_shape(a: torch.Tensor, b: torch.Tensor):
    return (*a.shape[:-1], b.shape[-1])


def gemm(a, b, *, out=None, c=None, alpha: float = 1.0, beta: float = 0.0,
         out_dtype: Optional[torch.dtype] = None, scale_a=None, scale_b=None,
         config=None, mainloop: str = "auto", backend: str = "ptx", bias=None,
         activation: Optional[str] = None, residual=None, rowscale=None, colscale=None,
         scale_d=None, amax=None, aux=None):
    """D = act(alpha * scale_a * scale_b * (a @ b) + beta * c + bias) with hopgen's Hopper
    GEMM, the bias and the activation fused into its epilogue.

    a: [M, K] (or [B, M, K]) bfloat16 / float16 / float8; row-major or a transposed view.
    b: [K, N] (or [B, K, N]); either majorness for 16-bit types, K-major (b = w.t() of a
       row-major [N, K] w) for fp8, as torch._scaled_mm. Any leading dimension, batch
       stride and element-aligned base works (views such as x[:, 1:] included): an operand
       TMA cannot address is repacked by the op before each run (mainloop "auto"), or read
       in place with cp.async when a mainloop is named.
    out: optional row-major [M, N] output (bfloat16, float16 or float32; default a's dtype,
       bfloat16 for fp8). c: optional [M, N] tensor of out's dtype, read when beta != 0.
    scale_a, scale_b: fp8 per-tensor scales: one-element float32 GPU tensors (read by the
       kernel, so they may change between CUDA-graph replays) or Python numbers.
    config: a GemmConfig or its text ("128x256x64,c2x1,s4,coop"); None: tuned or heuristic.
    mainloop: how operands reach which MMA: "auto" (tma-wgmma, repacking operands TMA
       cannot address), "tma-wgmma", "cpasync-wgmma", "tma-mmasync" or
       "tma-ldmatrix-wgmma-rs" (the last two 16-bit types only), or "ldg-mmasync" (the decode
       kernel: M <= 16, K-major operands, bf16/f16 or fp8 without block-wise scales, batch
       1; auto takes it for 16-bit decode shapes whose rows TMA cannot address); replaces
       config's own.
    bias: optional contiguous [N] vector (bfloat16, float16 or float32) added to every row.
    activation: optional "relu", "gelu" (erf form), "gelu_tanh", "silu", "sigmoid" or
       "clamp:LO:HI", applied after the bias (with autograd the two are refused for now;
       under torch.compile they go through hopgen::gemm_epilogue, see below).
    The rest of the epilogue (docs/epilogue.md; under torch.compile through the
    hopgen::gemm_epilogue op, which makes out, amax and aux itself; no backward yet):
    D = saturate(scale_d * (act(rowscale[i] colscale[j] (alpha A B + beta C) + bias) +
    residual)) for an fp8 out.
    c may have its own dtype (bfloat16, float16, float32), and residual (laid out as out)
       has C's. rowscale [M] and colscale [N]: contiguous float32 vectors.
    out_dtype / out may be torch.float8_e4m3fn or float8_e5m2: converted with saturation
       (values past the largest finite fp8 become it, NaN stays NaN); scale_d is its output
       scale, a one-element float32 GPU tensor or a number.
    amax: a one-element float32 GPU tensor that receives max |D| over D as stored (reduced
       in the same kernel, no memset first; NaN when D holds one), or True for a new one.
    aux: a tensor laid out as out (bfloat16, float16 or float32) that receives the values
       just before the activation (for the backward pass), or True for a new one of out's
       dtype (bfloat16 for an fp8 out). Needs an activation.
    With amax=True or aux=True the call returns (out, amax, aux), the ones not asked None.
    Inputs may also be DLPack / __cuda_array_interface__ objects (CuPy, JAX). Runs on
    torch.cuda.current_stream(); returns out (a new tensor when out is None).
    """
    more = any(x is not None for x in (residual, rowscale, colscale, scale_d, amax, aux)) or \
        _DT.get(out_dtype if out is None else getattr(out, "dtype", None)) in _FP8 or (
            isinstance(c, torch.Tensor) and out is not None and c.dtype != out.dtype)
    epi = bias is not None or activation is not None or more
    if epi and torch.is_grad_enabled() and any(
            isinstance(x, torch.Tensor) and x.requires_grad
            for x in (a, b, c, bias, residual, rowscale, colscale)):
        raise UnsupportedError("hopgen.gemm: the epilogue's bias, activation, residual, scale "
                               "vectors, fp8 output, amax and aux have no backward yet; with "
                               "tensors that require grad, apply them after the GEMM")
    if epi and torch.compiler.is_compiling():
        return _gemm_traced(a, b, out, c, alpha, beta, out_dtype, scale_a, scale_b, config,
                            mainloop, backend, bias, activation, residual, rowscale, colscale,
                            scale_d, amax, aux)
    if more:
        return _gemm_more(a, b, out, c, alpha, beta, out_dtype, scale_a, scale_b, config,
                          mainloop, backend, bias, activation, residual, rowscale, colscale,
                          scale_d, amax, aux)
    if torch.compiler.is_compiling():
        alpha, scale_a, scale_b = _fold_scales(alpha, scale_a, scale_b)
        if out is not None:
            torch.ops.hopgen.gemm_out(a, b, out, c, scale_a, scale_b, float(alpha), float(beta),
                                      _cfg_text(config), mainloop, backend)
            return out
        return torch.ops.hopgen.gemm(a, b, c, scale_a, scale_b, float(alpha), float(beta),
                                     out_dtype, _cfg_text(config), mainloop, backend)
    if torch.is_grad_enabled() and out is None and any(
            isinstance(x, torch.Tensor) and x.requires_grad for x in (a, b, c)):
        # autograd: through the registered op, whose backward is two more hopgen GEMMs
        alpha, scale_a, scale_b = _fold_scales(alpha, scale_a, scale_b)
        return torch.ops.hopgen.gemm(a, b, c, scale_a, scale_b, float(alpha), float(beta),
                                     out_dtype, _cfg_text(config), mainloop, backend)
    out_obj = out
    if not isinstance(a, torch.Tensor):
        a = as_tensor(a, "a")
    if not isinstance(b, torch.Tensor):
        b = as_tensor(b, "b")
    if out is None:
        out = torch.empty((*a.shape[:-1], b.shape[-1]), device=a.device,
                          dtype=out_dtype or (torch.bfloat16 if a.element_size() == 1
                                              else a.dtype))
        out_obj = out
    elif not isinstance(out, torch.Tensor):
        out = as_tensor(out, "out")
    # The fast path: everything that decides validity and the operation is in the key, so a
    # hit launches without re-validating (pointers and the stream are per call).
    pa, pb, pd = a.data_ptr(), b.data_ptr(), out.data_ptr()
    key = (a.dtype, b.dtype, out.dtype, a.shape, a.stride(), b.shape, b.stride(), out.shape,
           out.stride(), a.device, b.device, out.device, _ALIGN[pa & 15], _ALIGN[pb & 15],
           pd & 15 == 0, alpha, beta, _sig(c), _sig(scale_a), _sig(scale_b), config, mainloop,
           backend, _sig(bias), activation, torch.are_deterministic_algorithms_enabled())
    hit = _fast.get(key)
    if hit is None:
        _gemm_launch(a, b, out, c, alpha, beta, scale_a, scale_b, _cfg_text(config), mainloop,
                     backend, bias, activation)
        if not _capturing():
            _fast[key] = _fast_entry(a, c, scale_a, scale_b, bias)
        return out_obj
    op, index, use_c, use_sa, use_sb, use_bias = hit
    _last_op[0] = op
    if op.workspace or use_bias:
        _run_op(op, pa, pb, c.data_ptr() if use_c else 0, pd,
                scale_a.data_ptr() if use_sa else 0, scale_b.data_ptr() if use_sb else 0, index,
                bias.data_ptr() if use_bias else 0)
        return out_obj
    st = _run(op.handle, pa, pb, c.data_ptr() if use_c else 0, pd,
              scale_a.data_ptr() if use_sa else 0, scale_b.data_ptr() if use_sb else 0, 0, 0,
              _get_stream(index))
    if st.code:
        raise error_from_status(st, "hopgen.gemm: ")
    return out_obj


def _gemm_more(a, b, out, c, alpha, beta, out_dtype, scale_a, scale_b, config, mainloop,
               backend, bias, activation, residual, rowscale, colscale, scale_d, amax, aux):
    """hopgen.gemm with the epilogue's other inputs and outputs: always the validating path
    (no fast-path entry), new amax / aux tensors made when asked with True."""
    a = as_tensor(a, "a")
    b = as_tensor(b, "b")
    if out is None:
        out = torch.empty(_out_shape(a, b), device=a.device, dtype=_out_dtype(a, out_dtype))
    else:
        out = as_tensor(out, "out")
    want = amax is True or aux is True
    if amax is True:
        amax = torch.empty(1, dtype=torch.float32, device=a.device)
    if aux is True:
        aux = torch.empty_strided(out.shape, out.stride(), device=out.device,
                                  dtype=torch.bfloat16 if _DT.get(out.dtype) in _FP8
                                  else out.dtype)
    _gemm_launch(a, b, out, c, alpha, beta, scale_a, scale_b, _cfg_text(config), mainloop,
                 backend, bias, activation, residual, rowscale, colscale, scale_d,
                 None if amax is None or amax is False else amax,
                 None if aux is None or aux is False else aux)
    if want:
        return out, (amax if isinstance(amax, torch.Tensor) else None), \
            (aux if isinstance(aux, torch.Tensor) else None)
    return out


def _sig(x):
    """What the fast path's key needs of c / scale_a / scale_b: None, a number, or a tensor's
    dtype, shape, strides and device."""
    if x is None or isinstance(x, (int, float)):
        return x
    if isinstance(x, torch.Tensor):
        return (x.dtype, x.shape, x.stride(), x.device)
    return id(type(x))  # DLPack / CAI objects: never on the fast path (see _fast_entry)


def _fast_entry(a, c, scale_a, scale_b, bias=None):
    """The fast path's record of a validated call: the op (the one _gemm_launch just used)
    and which optional pointers the call passes; None (always the slow path) when c or a
    scale is not a torch tensor or number."""
    if not all(x is None or isinstance(x, (int, float, torch.Tensor))
               for x in (c, scale_a, scale_b)):
        return None
    return (_last_op[0], a.device.index, c is not None,
            isinstance(scale_a, torch.Tensor), isinstance(scale_b, torch.Tensor),
            bias is not None)


_last_op = [None]  # the GemmOp the latest hopgen.gemm call ran (bench and tests read it)


def scaled_gemm(a, b, scale_a, scale_b, *, out_dtype=torch.bfloat16, **kw):
    """fp8 GEMM with per-tensor scales, torch._scaled_mm's argument order."""
    return gemm(a, b, scale_a=scale_a, scale_b=scale_b, out_dtype=out_dtype, **kw)


def _fold_scales(alpha, scale_a, scale_b):
    """Python-number scales folded into alpha: the registered ops take scale tensors only."""
    if isinstance(scale_a, (int, float)):
        alpha, scale_a = alpha * scale_a, None
    if isinstance(scale_b, (int, float)):
        alpha, scale_b = alpha * scale_b, None
    return alpha, scale_a, scale_b


def _cfg_text(config) -> Optional[str]:
    return None if config is None else str(config)


# ----------------------------------------------------------------------------- TMA kernels


def _module(rt, ptx: str, name: str, smem: int):
    key = (rt.value, ptx)
    hit = _modules.get(key)
    if hit is not None:
        return hit[0][1]
    if _capturing():
        raise InvalidError(f"the first launch of {name} happened during CUDA-graph capture; "
                           "call it once before capturing (warm-up)")
    mod, f = C.c_void_p(), C.c_void_p()
    check(fn("hg_rt_module_load")(rt, ptx.encode(), C.byref(mod), None), f"{name}: ")
    st = fn("hg_rt_function")(rt, mod, name.encode(), smem, C.byref(f))
    if st.code != 0:
        fn("hg_rt_module_unload")(rt, mod)
        check(st, f"{name}: ")
    _modules[key] = ((mod, f), rt)
    return f


class _TensorMap:
    """A CUtensorMap value (128 bytes, 64-byte aligned) for a kernel parameter."""

    def __init__(self):
        self._buf = C.create_string_buffer(128 + 64)
        addr = C.addressof(self._buf)
        self.ptr = C.c_void_p(addr + (-addr % 64))

    def encode(self, rt, params: _capi.TensormapParams, base: int, what: str) -> None:
        check(fn("hg_rt_tensormap_encode")(rt, C.byref(params), base, self.ptr), f"{what}: ")


def _launch(rt, f, grid, threads, smem, cluster, stream, values, what: str) -> None:
    lc = _capi.Launch()
    lc.grid[:] = (grid, 1, 1)
    lc.block[:] = (threads, 1, 1)
    lc.cluster[:] = (cluster, 1, 1) if cluster > 1 else (0, 0, 0)
    lc.smem_bytes, lc.stream = smem, stream
    ptrs = (C.c_void_p * len(values))(*[v.ptr if isinstance(v, _TensorMap) else
                                        C.cast(C.pointer(v), C.c_void_p) for v in values])
    check(fn("hg_rt_launch")(rt, f, C.byref(lc), ptrs), f"{what}: ")


_COPY_ROW_BYTES = 1024  # hg_gen_copy's [rows, 256] u32 view (kernels.h)


def tma_copy(dst, src, *, stages: int = 0, box_rows: int = 0, ctas_per_sm: int = 0,
             evict_first: bool = False):
    """dst <- src with hopgen's streaming TMA copy (a persistent grid of TMA load -> store
    rings): contiguous tensors of the same byte size, a multiple of 1 KiB, 16-byte aligned.
    Returns dst."""
    dst_obj = dst
    dst, src = as_tensor(dst, "dst"), as_tensor(src, "src")
    nbytes = src.numel() * src.element_size()
    for t, what in ((dst, "dst"), (src, "src")):
        if not t.is_contiguous() or t.device.type != "cuda":
            raise InvalidError(f"{what}: tma_copy takes contiguous CUDA tensors")
        if t.data_ptr() % 16:
            raise InvalidError(f"{what} at 0x{t.data_ptr():x} is not 16-byte aligned (TMA's "
                               "globalAddress rule)")
    if dst.numel() * dst.element_size() != nbytes or dst.device != src.device:
        raise InvalidError(f"dst ({dst.numel() * dst.element_size()} B on {dst.device}) and "
                           f"src ({nbytes} B on {src.device}) differ")
    if nbytes == 0:
        return dst_obj
    if nbytes % _COPY_ROW_BYTES:
        raise InvalidError(f"tma_copy moves whole 1 KiB rows; {nbytes} B is not a multiple "
                           "of 1024")
    index = src.device.index
    rt = _runtime(index)
    cfg = _capi.CopyConfig(stages=stages, box_rows=box_rows, ctas_per_sm=ctas_per_sm,
                           evict_first=evict_first)
    key = ("copy", index, stages, box_rows, ctas_per_sm, evict_first)
    hit = _kernels.get(key)
    if hit is None:
        k = _capi.Kernel()
        check(fn("hg_gen_copy")(C.byref(cfg), 0, C.byref(k)), "tma_copy: ")
        try:
            ptx, name = C.string_at(k.ptx.data).decode(), k.name.decode()
            f = _module(rt, ptx, name, k.smem_bytes)
            sms = fn("hg_rt_device")(rt)[0].sm_count
            hit = _kernels[key] = (name, f, k.threads, k.smem_bytes, sms)
        finally:
            fn("hg_kernel_free")(C.byref(k))
    name, f, threads, smem, sms = hit
    rows = nbytes // _COPY_ROW_BYTES
    br = box_rows or 32
    p = _capi.TensormapParams(dtype=7, rank=2, interleave=0, swizzle=0, l2_promotion=3)
    p.global_dim[0], p.global_dim[1] = 256, rows
    p.global_stride_bytes[0] = _COPY_ROW_BYTES
    p.box_dim[0], p.box_dim[1] = 256, br
    p.element_strides[0] = p.element_strides[1] = 1
    ms, md = _TensorMap(), _TensorMap()
    ms.encode(rt, p, src.data_ptr(), "tma_copy src")
    md.encode(rt, p, dst.data_ptr(), "tma_copy dst")
    nboxes = C.c_int32((rows + br - 1) // br)
    ctas = min(sms * (ctas_per_sm or 1), nboxes.value)
    _launch(rt, f, ctas, threads, smem, 1, _raw_stream(index), [ms, md, nboxes], "tma_copy")
    return dst_obj


def tma_load_tiles(x, tile, *, origin=None, grid=None, swizzle="128B", cluster: int = 1,
                   oob_nan: bool = False, prefetch: bool = False):
    """The TMA tutorial's load kernel on a tensor: each CTA TMA-loads one tile (tile t starts
    at origin + t * tile, mode 0 fastest; origin may be negative: out-of-bounds elements are
    zero- or NaN-filled) into shared memory laid out as the plan's stage layout, and dumps
    that buffer. Returns (images, status, plan): uint8 [CTAs, smem_bytes] stage images, int32
    [CTAs] status words (1 = finished, 2 = the mbarrier wait timed out), and the plan dict
    (its smem.layout says where each tile element lands). cluster > 1 multicasts."""
    from .generate import _json_of, _tma_spec, _tma_tensor

    x = as_tensor(x, "x")
    if x.device.type != "cuda":
        raise InvalidError("x: tma_load_tiles takes a CUDA tensor")
    dtype = {1: "u8", 2: "u16", 4: "u32", 8: "u64"}[x.element_size()]
    if x.dtype in (torch.float16, torch.bfloat16, torch.float32):
        dtype = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32"}[x.dtype]
    spec = _tma_spec("prefetch" if prefetch else "load", dtype, tuple(x.shape), tile,
                     stride=tuple(x.stride()), grid=grid, origin=origin, cluster=cluster,
                     swizzle=swizzle, oob_nan=oob_nan)
    index = x.device.index
    rt = _runtime(index)
    k, plan = _capi.Kernel(), _capi.TmaPlan()
    check(fn("hg_tma_generate")(C.byref(spec), 0, C.byref(k), C.byref(plan)), "tma_load_tiles: ")
    try:
        ptx, name = C.string_at(k.ptx.data).decode(), k.name.decode()
        threads, smem, clus = k.threads, k.smem_bytes, k.cluster[0]
    finally:
        fn("hg_kernel_free")(C.byref(k))
    f = _module(rt, ptx, name, smem)
    tiles = fn("hg_tma_spec_tiles")(C.byref(spec))
    ctas = tiles * max(1, spec.cluster)
    images = torch.empty((ctas, plan.smem_bytes), dtype=torch.uint8, device=x.device)
    status = torch.zeros((ctas,), dtype=torch.int32, device=x.device)
    tm = _TensorMap()
    tm.encode(rt, plan.map, x.data_ptr(), "tma_load_tiles x")
    vals = [tm, C.c_int64(images.data_ptr()), C.c_int64(status.data_ptr())]
    vals += [C.c_int32(spec.origin[i]) for i in range(spec.rank)]
    vals += [C.c_int32(spec.grid[i]) for i in range(spec.rank)]
    _launch(rt, f, ctas, threads, smem, clus if clus > 1 else 1, _raw_stream(index), vals,
            "tma_load_tiles")
    g = _tma_tensor(spec.dtype, list(x.shape), list(x.stride()))
    org = (C.c_int32 * _capi.HG_TMA_MAX_RANK)(*list(spec.origin))
    return images, status, _json_of(fn("hg_tma_plan_json"), C.byref(g), C.byref(plan), org)


# ----------------------------------------------------------------------------- torch.library

_lib_ops = {}


def _register() -> None:
    if not hasattr(torch.library, "custom_op"):
        return  # torch < 2.4: eager calls only

    @torch.library.custom_op("hopgen::gemm", mutates_args=())
    def gemm_op(a: torch.Tensor, b: torch.Tensor, c: Optional[torch.Tensor],
                scale_a: Optional[torch.Tensor], scale_b: Optional[torch.Tensor], alpha: float,
                beta: float, out_dtype: Optional[torch.dtype], config: Optional[str],
                mainloop: str, backend: str) -> torch.Tensor:
        out = torch.empty(_out_shape(a, b), dtype=_out_dtype(a, out_dtype), device=a.device)
        _gemm_launch(a, b, out, c, alpha, beta, scale_a, scale_b, config, mainloop, backend)
        return out

    @gemm_op.register_fake
    def _(a, b, c, scale_a, scale_b, alpha, beta, out_dtype, config, mainloop, backend):
        mainloop_code(mainloop, "hopgen.gemm mainloop")
        if a.dim() not in (2, 3) or b.dim() != a.dim() or a.shape[-1] != b.shape[-2]:
            raise InvalidError(f"hopgen.gemm: a {tuple(a.shape)} and b {tuple(b.shape)} do "
                               "not multiply")
        return a.new_empty(_out_shape(a, b), dtype=_out_dtype(a, out_dtype))

    @torch.library.custom_op("hopgen::gemm_out", mutates_args=("out",))
    def gemm_out_op(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor,
                    c: Optional[torch.Tensor], scale_a: Optional[torch.Tensor],
                    scale_b: Optional[torch.Tensor], alpha: float, beta: float,
                    config: Optional[str], mainloop: str, backend: str) -> None:
        _gemm_launch(a, b, out, c, alpha, beta, scale_a, scale_b, config, mainloop, backend)

    @gemm_out_op.register_fake
    def _(a, b, out, c, scale_a, scale_b, alpha, beta, config, mainloop, backend):
        mainloop_code(mainloop, "hopgen.gemm mainloop")
        return None

    def setup_context(ctx, inputs, output):
        a, b, c, scale_a, scale_b, alpha, beta, out_dtype, config, mainloop, backend = inputs
        ctx.save_for_backward(a, b)
        ctx.alpha, ctx.beta, ctx.has_c = alpha, beta, c is not None
        ctx.mainloop, ctx.backend = mainloop, backend

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        if _DT.get(a.dtype) in _FP8:
            raise UnsupportedError("hopgen.gemm has no backward for fp8 operands")
        g = grad.to(a.dtype).contiguous()  # e.g. an expanded gradient of a sum
        ga = gb = gc = None
        if ctx.needs_input_grad[0]:
            ga = torch.ops.hopgen.gemm(g, b.transpose(-1, -2), None, None, None, ctx.alpha, 0.0,
                                       a.dtype, None, ctx.mainloop, ctx.backend)
        if ctx.needs_input_grad[1]:
            gb = torch.ops.hopgen.gemm(a.transpose(-1, -2), g, None, None, None, ctx.alpha, 0.0,
                                       b.dtype, None, ctx.mainloop, ctx.backend)
        if ctx.has_c and ctx.needs_input_grad[2]:
            gc = grad * ctx.beta
        return ga, gb, gc, None, None, None, None, None, None, None, None

    gemm_op.register_autograd(backward, setup_context=setup_context)

    @torch.library.custom_op("hopgen::tma_copy", mutates_args=("dst",))
    def tma_copy_op(dst: torch.Tensor, src: torch.Tensor) -> None:
        tma_copy(dst, src)

    @tma_copy_op.register_fake
    def _(dst, src):
        return None

    _lib_ops.update(gemm=gemm_op, gemm_out=gemm_out_op, tma_copy=tma_copy_op)


_register()

_epilogue_op_error = [None]  # why hopgen::gemm_epilogue could not be registered, if so


def _register_epilogue() -> None:
    """hopgen::gemm_epilogue: hopgen.gemm with its whole epilogue as one op that traces under
    torch.compile; it returns (out, amax, aux), the last two empty when not asked for. Kept
    apart from _register so that a torch refusing its schema leaves the other ops working
    (hopgen.gemm then names the reason under torch.compile)."""
    if not hasattr(torch.library, "custom_op"):
        _epilogue_op_error[0] = "torch < 2.4 has no torch.library.custom_op"
        return
    try:
        @torch.library.custom_op("hopgen::gemm_epilogue", mutates_args=())
        def gemm_epilogue_op(a: torch.Tensor, b: torch.Tensor, c: Optional[torch.Tensor],
                             scale_a: Optional[torch.Tensor], scale_b: Optional[torch.Tensor],
                             alpha: float, beta: float, out_dtype: Optional[torch.dtype],
                             config: Optional[str], mainloop: str, backend: str,
                             bias: Optional[torch.Tensor], activation: Optional[str],
                             residual: Optional[torch.Tensor], rowscale: Optional[torch.Tensor],
                             colscale: Optional[torch.Tensor], scale_d: Optional[torch.Tensor],
                             want_amax: bool, aux_dtype: Optional[torch.dtype]
                             ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            shape = _out_shape(a, b)
            out = torch.empty(shape, dtype=_out_dtype(a, out_dtype), device=a.device)
            amax = torch.empty(1 if want_amax else 0, dtype=torch.float32, device=a.device)
            aux = torch.empty(shape if aux_dtype is not None else (0,),
                              dtype=aux_dtype or torch.bfloat16, device=a.device)
            _gemm_launch(a, b, out, c, alpha, beta, scale_a, scale_b, config, mainloop, backend,
                         bias, activation, residual, rowscale, colscale, scale_d,
                         amax if want_amax else None, aux if aux_dtype is not None else None)
            return out, amax, aux

        @gemm_epilogue_op.register_fake
        def _(a, b, c, scale_a, scale_b, alpha, beta, out_dtype, config, mainloop, backend,
              bias, activation, residual, rowscale, colscale, scale_d, want_amax, aux_dtype):
            mainloop_code(mainloop, "hopgen.gemm mainloop")
            _activation(activation)
            if a.dim() not in (2, 3) or b.dim() != a.dim() or a.shape[-1] != b.shape[-2]:
                raise InvalidError(f"hopgen.gemm: a {tuple(a.shape)} and b {tuple(b.shape)} "
                                   "do not multiply")
            shape = _out_shape(a, b)
            return (a.new_empty(shape, dtype=_out_dtype(a, out_dtype)),
                    a.new_empty((1 if want_amax else 0,), dtype=torch.float32),
                    a.new_empty(shape if aux_dtype is not None else (0,),
                                dtype=aux_dtype or torch.bfloat16))

        _lib_ops["gemm_epilogue"] = gemm_epilogue_op
    except Exception as e:  # noqa: BLE001 - any refusal: recorded, said under torch.compile
        _epilogue_op_error[0] = f"{type(e).__name__}: {e}"


_register_epilogue()


def _gemm_traced(a, b, out, c, alpha, beta, out_dtype, scale_a, scale_b, config, mainloop,
                 backend, bias, activation, residual, rowscale, colscale, scale_d, amax, aux):
    """hopgen.gemm's epilogue under torch.compile: through hopgen::gemm_epilogue, which makes
    its outputs (so out=, and amax / aux tensors to write into, are refused here)."""
    if "gemm_epilogue" not in _lib_ops:
        raise UnsupportedError("hopgen.gemm: the epilogue's arguments cannot be traced here: "
                               f"hopgen::gemm_epilogue is not registered "
                               f"({_epilogue_op_error[0]}); call it in eager mode")
    if out is not None or isinstance(amax, torch.Tensor) or isinstance(aux, torch.Tensor):
        raise UnsupportedError("hopgen.gemm under torch.compile: with the epilogue's arguments "
                               "it makes its outputs: leave out out=, and ask for amax and aux "
                               "with True (they are returned) instead of passing tensors")
    alpha, scale_a, scale_b = _fold_scales(alpha, scale_a, scale_b)
    if isinstance(scale_d, (int, float)):
        scale_d = torch.full((1,), float(scale_d), dtype=torch.float32, device=a.device)
    od = _out_dtype(a, out_dtype)
    aux_dtype = None if not aux else (torch.bfloat16 if _DT.get(od) in _FP8 else od)
    d, am, ax = torch.ops.hopgen.gemm_epilogue(
        a, b, c, scale_a, scale_b, float(alpha), float(beta), out_dtype, _cfg_text(config),
        mainloop, backend, bias, activation, residual, rowscale, colscale, scale_d,
        amax is True, aux_dtype)
    if amax is True or aux is True:
        return d, (am if amax is True else None), (ax if aux is True else None)
    return d
