#!/usr/bin/env bash
# Every test hopgen has: the normal build, an ASan+UBSan build, bounded fuzzing, and the
# format check. GPU tests skip with a message where there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
jobs=$(nproc)
t0=$(date +%s)
echo "== build (release) and tests"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"
echo "== build (ASan+UBSan) and tests"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DHOPGEN_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
# The sanitizers watch the library; ptxas and mlir-opt-22 (most of the release run's time)
# run on a quarter of the kernel matrices here (HOPGEN_TEST_SUBSET, tests/hg_test.h).
HOPGEN_TEST_SUBSET=4 ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure -j"$jobs"
echo "== python package (fresh venv, pip install ./python, pytest)"
scripts/python-test.sh
echo "== fuzzing (bounded)"
scripts/fuzz.sh "${HOPGEN_FUZZ_SECONDS:-35}"
echo "== format"
scripts/format.sh --check
echo "== all tests passed in $(( $(date +%s) - t0 )) s"
