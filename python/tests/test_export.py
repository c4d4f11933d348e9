"""Ahead-of-time export: the files compile with gcc and g++ (-Wall -Wextra -Werror) and a
program using them links against libcuda's stub (no hopgen at run time)."""
import os
import subprocess

import pytest

import hopgen
from conftest import tool

CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")
HAVE_CUDA_H = os.path.exists(f"{CUDA}/include/cuda.h")
STUB = f"{CUDA}/lib64/stubs"

MAIN = r"""
#include "NAME.h"
#include <stdio.h>
int main(int argc, char **argv) {
  NAME_args_t args = {0};
  args.m = 256; args.n = 256; args.k = 128; args.alpha = 1.0f;
  (void)argv;
  if (argc > 5) { /* never taken: the program is only built, not run, without a GPU */
    CUresult r = NAME_launch(&args, (CUstream)0);
    printf("%d %s\n", (int)r, NAME_error());
    NAME_unload();
  }
  return 0;
}
"""

KINDS = [("gemm_bf16", dict(dtype="bf16"), True),
         ("gemm_e4m3", dict(dtype="e4m3", out_dtype="bf16"), False),
         ("gemm_f16_nn", dict(dtype="f16", a_major="mn", b_major="mn", out_dtype="f32",
                              d_tma=False), True),
         # A through cp.async in 8-byte chunks (lda of 260 bf16), B in 4-byte ones (its base
         # known to be 4-byte aligned), on mma.sync
         ("gemm_bf16_cpasync", dict(dtype="bf16", lda=260, b_align=4, mainloop="tma-mmasync"),
          False)]


def _run(cmd, cwd):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout}\n{r.stderr}"


@pytest.mark.skipif(not (HAVE_CUDA_H and tool("gcc") and tool("g++")),
                    reason="needs cuda.h (CUDA toolkit), gcc and g++")
@pytest.mark.parametrize("name,problem,cubin", KINDS)
def test_exported_files_build_with_gcc_and_gxx(tmp_path, name, problem, cubin):
    if cubin and not tool("ptxas"):
        pytest.skip("no ptxas")
    r = hopgen.export(tmp_path, 512, 512, 256, name=name, cubin=cubin, **problem)
    files = {os.path.basename(f) for f in r["files"]}
    assert {f"{name}.ptx", f"{name}.h", f"{name}.c"} <= files
    assert r["has_cubin"] == cubin and (f"{name}.cubin" in files) == cubin
    (tmp_path / "main.c").write_text(MAIN.replace("NAME", name))
    (tmp_path / "main.cpp").write_text(MAIN.replace("NAME", name).replace("= {0}", "{}"))
    warn = ["-Wall", "-Wextra", "-Werror", f"-I{CUDA}/include"]
    _run(["gcc", "-std=c11", *warn, "-c", f"{name}.c", "-o", "lib_c.o"], tmp_path)
    _run(["g++", "-std=c++17", *warn, "-x", "c++", "-c", f"{name}.c", "-o", "lib_cxx.o"],
         tmp_path)
    _run(["gcc", "-std=c11", *warn, "main.c", "lib_c.o", f"-L{STUB}", "-lcuda", "-o", "app_c"],
         tmp_path)
    _run(["g++", "-std=c++17", *warn, "main.cpp", "lib_cxx.o", f"-L{STUB}", "-lcuda", "-o",
          "app_cxx"], tmp_path)
    nm = subprocess.run(["nm", "-u", str(tmp_path / "app_c")], capture_output=True, text=True)
    assert "cuLaunchKernelEx" in nm.stdout and "hg_" not in nm.stdout  # libcuda only


def test_export_refusals(tmp_path):
    with pytest.raises(hopgen.InvalidError, match="C identifier"):
        hopgen.export(tmp_path, name="not-a-name")
    with pytest.raises(hopgen.ParseError, match="mainloop 'wgmma' is not one of"):
        hopgen.export(tmp_path, mainloop="wgmma", cubin=False)


def test_export_reads_operands_tma_cannot_address_with_cp_async(tmp_path):
    # lda = 100 bf16 of an M-major A (and ldb = K = 100): 200-byte rows, read in 8-byte
    # cp.async chunks; the launcher passes pointer and pitch instead of a tensor map and
    # checks each call's lda, batch stride and pointer against the chunk
    r = hopgen.export(tmp_path, 100, 128, 100, name="cpa", a_major="mn", cubin=False)
    assert "tma-wgmma" in r["note"] and "_cpa8b8" in r["note"]  # read in place: no repack
    src = (tmp_path / "cpa.c").read_text()
    assert "args->a % 8 != 0" in src and "args->b % 8 != 0" in src
    assert "params[np++] = &lda;" in src and "&map_a" not in src.replace("(void)map_a", "")
