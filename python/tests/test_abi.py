"""The ctypes mirrors against the C headers: a C program generated from the mirrors prints
sizeof and offsetof of every field, compiled with the repository's headers."""
import ctypes as C
import subprocess

import pytest

from conftest import REPO, tool
from hopgen import _capi


@pytest.mark.skipif(not tool("gcc") and not tool("cc"), reason="no C compiler")
def test_struct_layouts_match_the_headers(tmp_path):
    lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "hopgen/bindings.h"',
             '#include "hopgen/export.h"', '#include "hopgen/kernels.h"',
             "int main(void) {"]
    expected = []
    for cname, py in sorted(_capi.MIRRORED.items()):
        lines.append(f'  printf("{cname} %zu\\n", sizeof({cname}));')
        expected.append(f"{cname} {C.sizeof(py)}")
        for fname, _ in py._fields_:
            lines.append(f'  printf("{cname}.{fname} %zu\\n", offsetof({cname}, {fname}));')
            expected.append(f"{cname}.{fname} {getattr(py, fname).offset}")
    lines += ["  return 0;", "}"]
    src = tmp_path / "abi.c"
    src.write_text("\n".join(lines) + "\n")
    exe = tmp_path / "abi"
    cc = tool("gcc") or tool("cc")
    subprocess.run([cc, "-std=c11", "-I", str(REPO / "include"), str(src), "-o", str(exe)],
                   check=True)
    got = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split("\n")
    diff = [f"C: {g}  ctypes: {e}" for g, e in zip(got, expected) if g != e]
    assert not diff, "\n".join(diff)
    assert len(got) - 1 == len(expected)


def test_every_bound_function_exists_in_the_library():
    lib = _capi.lib()
    missing = [name for name in _capi._PROTOS if getattr(lib, name, None) is None]
    assert not missing, f"{_capi.library_path()} lacks {missing}"
