"""hopgen: NVIDIA Hopper (sm_90a) kernels generated from CuTe layout algebra.

The package binds libhopgen (plain C, no CPython extension) with ctypes, so one build
serves every Python >= 3.9 and every PyTorch version. torch is optional: the layout algebra
and generation work without it and without a GPU.

    import hopgen
    L = hopgen.Layout("(4,8):(8,1)")
    hopgen.logical_divide(L, (2, 4))
    hopgen.plan_tma(dtype="bf16", shape=(1000, 4096), tile=(128, 64))   # a dict
    hopgen.gemm_ptx(4096, 4096, 4096, dtype="bf16")                     # PTX text
    d = hopgen.gemm(a, b)                                               # torch tensors
"""
from __future__ import annotations

import sys

from ._capi import library_path
from .errors import (CapacityError, CudaError, HopgenError, InvalidError, JitError,
                     MismatchError, NoDeviceError, NoDriverError, ParseError, ToolError,
                     UnsupportedError)
from .layout import *  # noqa: F401,F403  (the pycute-named algebra)
from .layout import __all__ as _layout_all
from .generate import (MAINLOOPS, GemmConfig, gemm_config, gemm_kernel,  # noqa: F401
                       gemm_mlir, gemm_ptx, plan_gemm, plan_mma, plan_tma, ptxas_check,
                       tma_kernel)
from .aot import export  # noqa: F401

__version__ = "0.1.0"


_TORCH_NAMES = ("gemm", "scaled_gemm", "grouped_gemm", "tma_copy", "tma_load_tiles",
                "clear_cache", "GemmOp", "as_tensor")


def __getattr__(name):
    # The torch-facing part is imported on first use, so `import hopgen` never imports torch
    # itself; the names then become plain attributes (torch.compile resolves them directly).
    if name in _TORCH_NAMES:
        from . import ops
        for n in _TORCH_NAMES:
            globals()[n] = getattr(ops, n)
        return globals()[name]
    raise AttributeError(f"module 'hopgen' has no attribute {name!r}")


if "torch" in sys.modules and sys.modules["torch"] is not None:
    __getattr__("gemm")  # torch is already loaded: bind the ops now, at no import cost

__all__ = list(_layout_all) + [
    "HopgenError", "ParseError", "InvalidError", "CapacityError", "UnsupportedError",
    "NoDriverError", "NoDeviceError", "CudaError", "JitError", "ToolError", "MismatchError",
    "library_path", "plan_tma", "plan_mma", "plan_gemm", "gemm_config", "GemmConfig", "MAINLOOPS",
    "gemm_kernel", "gemm_ptx", "gemm_mlir", "tma_kernel", "ptxas_check", "export",
    *_TORCH_NAMES,
]
