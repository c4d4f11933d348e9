"""Ahead-of-time export: a GEMM as files a C or C++ program builds and ships with only
libcuda at run time (include/hopgen/export.h says what each file holds)."""
from __future__ import annotations

import ctypes as C
import os
from . import _capi
from ._capi import fn
from .errors import check
from .generate import _backend, _config, _problem

__all__ = ["export"]


def export(directory: str, m: int = 4096, n: int = 4096, k: int = 4096, *,
           name: str = "hopgen_gemm", config=None, mainloop: str = "auto",
           backend: str = "ptx", cubin: bool = True, **problem) -> dict:
    """Write NAME.ptx, NAME.cubin (assembled with the CUDA toolkit's ptxas; cubin=False
    embeds the PTX instead, for the driver to JIT), NAME.h and NAME.c into directory (created
    if missing). NAME.h declares NAME_load(), NAME_launch(&args, stream) and NAME_error();
    NAME.c embeds the kernel and encodes the tensor maps from the pointers and sizes it is
    given, calling libcuda directly (link with -lcuda, include <cuda.h>).

    The kernel is generated for the problem m x n x k with gemm_kernel's keywords (dtype,
    out_dtype, a_major, b_major, lda, a_align, ..., mainloop; d_tma=False for a launcher that
    takes any D) and serves every size of its kind: an operand TMA cannot address (its lda,
    batch stride or a_align not a multiple of 16 B) is read with cp.async in chunks that fit
    them, and the launcher refuses pointers and strides its operand paths cannot read.
    Raises ToolError when cubin is set and ptxas is missing.
    Returns {"files": [...], "has_cubin": bool, "note": str}."""
    os.makedirs(directory, exist_ok=True)
    p = _problem(m, n, k, **problem)
    c = _config(p, config, mainloop)
    opts = _capi.ExportOptions(dir=os.fspath(directory).encode(), name=name.encode(),
                               cubin=bool(cubin))
    res = _capi.ExportResult()
    check(fn("hg_export_gemm")(C.byref(p), C.byref(c) if c is not None else None,
                               _backend(backend), C.byref(opts), C.byref(res)))
    return {"files": [res.files[i].value.decode() for i in range(res.count)],
            "has_cubin": res.has_cubin, "note": res.note.decode()}
