#!/usr/bin/env bash
# The Python package on the GPU machine: libhopgen.so from build-gpu/ (built here if missing),
# the whole pytest suite (CPU and GPU tests), each GPU test again in its own process (a kernel
# fault loses the CUDA context for the rest of a process: one failure must not hide the
# others), the host time per call, and `python -m hopgen.bench`. Logs go to $OUT (default
# build-gpu/python); a short table is printed last. Works without pytest (the GPU tests have
# their own runner) and without network.
#   OUT=/tmp/out scripts/gpu-python.sh            # everything
#   BENCH_SHAPES=4 scripts/gpu-python.sh          # the first 4 shapes of the bench set
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build-gpu/python}
mkdir -p "$out"
export PATH="$PATH:/usr/local/cuda/bin"
py=${PYTHON:-python3}
lib=build-gpu/libhopgen.so
if [ ! -f "$lib" ]; then
  echo "== building $lib"
  { cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release && cmake --build build-gpu -j"$(nproc)" --target hopgen_shared; } > "$out/build.log" 2>&1 || { echo "build failed: $out/build.log"; tail -20 "$out/build.log"; exit 1; }
fi
export HOPGEN_LIBRARY="$PWD/$lib" PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
"$py" -c "import torch, hopgen; print('torch', torch.__version__, torch.cuda.get_device_name(), '| libhopgen', hopgen.library_path())" 2>&1 | tee "$out/env.log"

summary=()
if "$py" -c "import pytest" 2>/dev/null; then
  echo "== pytest (all tests, one process)"
  "$py" -m pytest -v -rA -p no:cacheprovider python/tests > "$out/pytest.log" 2>&1
  summary+=("pytest (one process): $(tail -1 "$out/pytest.log")")
else
  summary+=("pytest: not installed (GPU tests run by their own runner below)")
fi

echo "== GPU tests, one process each"
pass=0 fail=0 skip=0
: > "$out/gpu-tests.log"
for t in $("$py" python/tests/test_gpu.py --list); do
  line=$(timeout 600 "$py" python/tests/test_gpu.py "$t" >> "$out/gpu-tests.log" 2>&1; tail -1 "$out/gpu-tests.log")
  case "$line" in
    PASS*) pass=$((pass + 1));;
    SKIP*) skip=$((skip + 1));;
    *) fail=$((fail + 1)); line="FAIL $t: $(grep -m1 "^FAIL $t" "$out/gpu-tests.log" | cut -c1-160)";;
  esac
  echo "  $line"
  summary+=("  $line")
done
summary+=("GPU tests: $pass passed, $fail failed, $skip skipped ($out/gpu-tests.log)")

echo "== host time per call"
"$py" -m hopgen.bench --overhead --json "$out/overhead.json" > "$out/overhead.log" 2>&1
summary+=("$(grep -m1 'host time' "$out/overhead.log" || echo "overhead: failed, see $out/overhead.log")")

echo "== python -m hopgen.bench"
"$py" -m hopgen.bench --shapes "${BENCH_SHAPES:-all}" --json "$out/bench.json" > "$out/bench.log" 2>&1
rc_bench=$?
summary+=("bench (exit $rc_bench, $out/bench.log):")
while IFS= read -r l; do summary+=("  $l"); done < <(grep -E "geometric-mean|FAILED|ERROR" "$out/bench.log")

echo
echo "================ hopgen Python on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
printf '%s\n' "${summary[@]}"
[ "$fail" -eq 0 ] && [ "$rc_bench" -eq 0 ]
