"""Exceptions that carry the C library's sentence.

Every failing C call becomes a subclass of HopgenError chosen by the status code; each also
derives from the built-in exception a Python user would catch (ValueError for bad input,
RuntimeError for the GPU, ...). `code` is the C code's stable name ("invalid", "parse", ...)
and `sentence` the C library's own message, unchanged.
"""
from __future__ import annotations

from . import _capi


class HopgenError(Exception):
    """A failure reported by libhopgen: `code` (e.g. "invalid") and `sentence` (the C text)."""

    code = "error"

    def __init__(self, sentence: str, context: str = ""):
        self.sentence = sentence
        self.context = context
        super().__init__(f"{context}{sentence}" if context else sentence)


class ParseError(HopgenError, ValueError):
    """Malformed text: layout notation, a dtype or configuration name."""
    code = "parse"


class InvalidError(HopgenError, ValueError):
    """A well-formed value that breaks a rule (algebra, hardware limit, alignment)."""
    code = "invalid"


class HopgenOverflowError(HopgenError, OverflowError):
    """An integer result does not fit its type."""
    code = "overflow"


class CapacityError(HopgenError, ValueError):
    """A fixed-capacity value (a layout of at most 64 nodes, ...) would overflow."""
    code = "capacity"


class UnsupportedError(HopgenError, NotImplementedError):
    """A valid request that hopgen does not implement."""
    code = "unsupported"


class NoDriverError(HopgenError, RuntimeError):
    """libcuda.so.1 cannot be loaded or initialised."""
    code = "no-driver"


class NoDeviceError(HopgenError, RuntimeError):
    """No CUDA device, or not a Hopper (sm_90) one."""
    code = "no-device"


class CudaError(HopgenError, RuntimeError):
    """A CUDA driver call failed; the sentence names the call."""
    code = "cuda"


class JitError(HopgenError, RuntimeError):
    """The driver or ptxas rejected generated code; the sentence holds the log."""
    code = "jit"


class ToolError(HopgenError, RuntimeError):
    """An external tool (ptxas, mlir-opt-22) is missing or failed."""
    code = "tool"


class HopgenIOError(HopgenError, OSError):
    """A file or directory operation failed."""
    code = "io"


class HopgenMemoryError(HopgenError, MemoryError):
    """An allocation failed."""
    code = "nomem"


class MismatchError(HopgenError, RuntimeError):
    """A verification found results that differ from the reference."""
    code = "mismatch"


_BY_CODE = {1: ParseError, 2: InvalidError, 3: HopgenOverflowError, 4: CapacityError,
            5: UnsupportedError, 6: NoDriverError, 7: NoDeviceError, 8: CudaError, 9: JitError,
            10: ToolError, 11: HopgenIOError, 12: HopgenMemoryError, 13: MismatchError}


def error_from_status(status: "_capi.Status", context: str = "") -> HopgenError:
    """The exception for a failed hg_status_t (context is prefixed to the sentence)."""
    cls = _BY_CODE.get(status.code, HopgenError)
    return cls(status.msg.decode("utf-8", "replace"), context)


def check(status: "_capi.Status", context: str = "") -> None:
    """Raise the matching HopgenError when status is not HG_OK."""
    if status.code != 0:
        raise error_from_status(status, context)
