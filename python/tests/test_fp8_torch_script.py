"""scripts/fp8-torch.py (hopgen's fp8 row-/block-wise GEMMs beside torch._scaled_mm) on the CPU:
its arguments, its refusals, and a clean skip without torch or a GPU (the GPU run is
scripts/gpu-check.sh fp8torch)."""
import importlib.util
import io
import contextlib

import pytest

from conftest import REPO


def _script():
    spec = importlib.util.spec_from_file_location("fp8_torch", REPO / "scripts" / "fp8-torch.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_arguments():
    s = _script()
    a = s.parse_args([])
    assert a.modes == ["row", "block"] and a.shapes == s.ANCHORS and a.iters == 30
    a = s.parse_args(["--modes", "block", "--shapes", "128x7168x2048,1000x3000x700"])
    assert a.modes == ["block"] and a.shapes == [(128, 7168, 2048), (1000, 3000, 700)]
    with pytest.raises(SystemExit):
        s.parse_args(["--modes", "col"])
    with pytest.raises(SystemExit):
        s.parse_args(["--shapes", "128x0x64"])
    with pytest.raises(SystemExit):
        s.parse_args(["--shapes", "128x64"])


def test_skips_without_a_gpu():
    try:
        import torch
        if torch.cuda.is_available():
            pytest.skip("a GPU is present: scripts/gpu-check.sh fp8torch runs the script")
    except ImportError:
        pass
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = _script().main(["--shapes", "256x256x256"])
    assert rc == 0 and "skipped" in out.getvalue()
