#!/usr/bin/env bash
# The Python package's tests, as CI runs them: a fresh virtual environment, `pip install
# ./python` (scikit-build-core builds libhopgen.so from this checkout; PyPI only), then
# pytest against the installed wheel. GPU tests skip without torch and a Hopper GPU
# (scripts/gpu-python.sh runs them on the GPU machine).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/cuda/bin"
venv=build-py/venv
rm -rf build-py
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check pytest ./python
# From the repository root, `import hopgen` finds the installed copy (python/ is not on the
# path); HOPGEN_EXPECT_INSTALLED makes the suite check that it did.
HOPGEN_EXPECT_INSTALLED=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider python/tests
