"""How the package is found and loaded: an installed wheel carries its own libhopgen.so;
development mode is PYTHONPATH=python with HOPGEN_LIBRARY; `import hopgen` needs neither
torch nor a GPU; a fresh virtual environment installs it (HOPGEN_TEST_VENV=1: slow, needs
PyPI for scikit-build-core; scripts/python-test.sh does the same install for CI)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import hopgen
from conftest import REPO


def test_library_is_loaded():
    path = Path(hopgen.library_path())
    assert path.is_file()
    if os.environ.get("HOPGEN_EXPECT_INSTALLED"):
        # CI runs the suite against the wheel installed into a fresh venv
        assert "site-packages" in str(path) and path.parent == Path(hopgen.__file__).parent
        assert REPO / "python" not in Path(hopgen.__file__).parents


def _python(code, env_extra, block_torch=False):
    env = dict(os.environ, **env_extra)
    pre = ("import sys; sys.modules['torch'] = None\n" if block_torch else "")
    return subprocess.run([sys.executable, "-c", pre + code], env=env, capture_output=True,
                          text=True, cwd="/")


def test_development_mode_and_no_torch():
    lib = hopgen.library_path()
    r = _python("import hopgen, sys\n"
                "print(hopgen.Layout('(4,8):(8,1)'))\n"
                "print(hopgen.library_path())\n"
                "print(hopgen.plan_tma('f16', (64, 64), (64, 64))['op'])\n"
                "print('torch' in sys.modules and sys.modules['torch'] is not None)\n",
                {"PYTHONPATH": str(REPO / "python"), "HOPGEN_LIBRARY": lib}, block_torch=True)
    assert r.returncode == 0, r.stderr
    out = r.stdout.split()
    assert out == ["(4,8):(8,1)", lib, "load", "False"]
    # the torch-facing names say what they need
    r = _python("import hopgen\nhopgen.gemm\n", {"PYTHONPATH": str(REPO / "python"),
                                                 "HOPGEN_LIBRARY": lib}, block_torch=True)
    assert r.returncode != 0 and "torch" in r.stderr


def test_a_missing_library_is_a_clear_error():
    r = _python("import hopgen\nhopgen.Layout('4:1')\n",
                {"PYTHONPATH": str(REPO / "python"), "HOPGEN_LIBRARY": "/nonexistent/lib.so"})
    assert r.returncode != 0
    assert "libhopgen.so not found" in r.stderr and "HOPGEN_LIBRARY" in r.stderr


@pytest.mark.skipif(not os.environ.get("HOPGEN_TEST_VENV"), reason="HOPGEN_TEST_VENV=1 to run")
def test_fresh_venv_install(tmp_path):
    venv = tmp_path / "v"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(REPO / "python")],
                   check=True)
    r = subprocess.run([str(venv / "bin" / "python"), "-c",
                        "import hopgen; print(hopgen.Layout('(4,8):(8,1)'))"],
                       capture_output=True, text=True, cwd="/", check=True)
    assert r.stdout.strip() == "(4,8):(8,1)"
