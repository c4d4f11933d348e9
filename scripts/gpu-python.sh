#!/usr/bin/env bash
# The Python package on the GPU machine: libhopgen.so from build-gpu/ (configured if missing,
# always brought up to date: ctypes mirrors must match the library), the whole pytest suite
# (CPU and GPU tests), each GPU test again in its own process (a kernel fault loses the CUDA
# context for the rest of a process: one failure must not hide the others; every mainloop
# has its own tests), the host time per call, and `python -m hopgen.bench`. Logs go to $OUT
# (default build-gpu/python); a short table is printed last: counts, failures, overhead and
# the bench's geometric means. Works without pytest (the GPU tests have their own runner)
# and without network.
#   OUT=/tmp/out scripts/gpu-python.sh            # everything
#   BENCH_SHAPES=4 scripts/gpu-python.sh          # the first 4 shapes of the bench set
#   BENCH_SHAPES=0 scripts/gpu-python.sh          # no bench
#   TESTS="test_mainloop_tma_mmasync_awkward_shapes test_opcheck" scripts/gpu-python.sh
#   GROUPED=only scripts/gpu-python.sh             # the grouped GEMM's test and MoE bench alone
#   GROUPED=0 scripts/gpu-python.sh                # without the MoE bench
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build-gpu/python}
mkdir -p "$out"
export PATH="$PATH:/usr/local/cuda/bin"
py=${PYTHON:-python3}
lib=build-gpu/libhopgen.so
echo "== building $lib"
{ { [ -f build-gpu/CMakeCache.txt ] || cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release; } &&
  cmake --build build-gpu -j"$(nproc)" --target hopgen_shared; } > "$out/build.log" 2>&1 ||
  { echo "build failed: $out/build.log"; tail -20 "$out/build.log"; exit 1; }
export HOPGEN_LIBRARY="$PWD/$lib" PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
"$py" -c "import torch, hopgen; print('torch', torch.__version__, torch.cuda.get_device_name(), '| libhopgen', hopgen.library_path())" 2>&1 | tee "$out/env.log"

summary=()
if "$py" -c "import pytest" 2>/dev/null; then
  echo "== pytest (all tests, one process)"
  timeout 3600 "$py" -m pytest -q -rfE -p no:cacheprovider python/tests > "$out/pytest.log" 2>&1
  summary+=("pytest, one process: $(tail -1 "$out/pytest.log") ($out/pytest.log)")
else
  summary+=("pytest: not installed (the GPU tests run by their own runner below)")
fi

echo "== GPU tests, one process each"
pass=0 fail=0 skip=0
: > "$out/gpu-tests.log"
tests=${TESTS:-$("$py" python/tests/test_gpu.py --list)}
[ "${GROUPED:-1}" = only ] && tests="test_grouped_gemm_contiguous_and_masked test_grouped_gemm_block_scales"
for t in $tests; do
  timeout 600 "$py" python/tests/test_gpu.py "$t" > "$out/gpu-$t.log" 2>&1
  rc=$?
  cat "$out/gpu-$t.log" >> "$out/gpu-tests.log"
  line=$(grep -E "^(PASS|SKIP|FAIL) ($t|all)" "$out/gpu-$t.log" | tail -1)
  case "$line" in
    PASS*) pass=$((pass + 1)); rm -f "$out/gpu-$t.log";;
    SKIP*) skip=$((skip + 1)); rm -f "$out/gpu-$t.log";;
    *) fail=$((fail + 1))
       [ -n "$line" ] || line="FAIL $t: exit $rc without a verdict (timeout or crash)"
       summary+=("  ${line:0:200}");;
  esac
  echo "  ${line:0:200}"
done
summary+=("GPU tests, one process each: $pass passed, $fail failed, $skip skipped (failures: $out/gpu-NAME.log)")

if [ "${GROUPED:-1}" != only ]; then
  echo "== host time per call"
  timeout 600 "$py" -m hopgen.bench --overhead --json "$out/overhead.json" > "$out/overhead.log" 2>&1
  summary+=("$(grep -m1 'host time' "$out/overhead.log" || echo "overhead: failed, see $out/overhead.log")")
fi

rc_bench=0
if [ "${GROUPED:-1}" != 0 ]; then
  echo "== python -m hopgen.bench --grouped (MoE set against torch._grouped_mm)"
  timeout 1800 "$py" -m hopgen.bench --grouped --json "$out/bench-grouped.json" > "$out/bench-grouped.log" 2>&1
  rc_g=$?
  [ "$rc_g" -eq 0 ] || rc_bench=$rc_g
  summary+=("grouped bench (exit $rc_g, $out/bench-grouped.log):")
  while IFS= read -r l; do summary+=("  ${l:0:160}"); done < <(grep -vE "^#" "$out/bench-grouped.log" | head -12)
fi
[ "${GROUPED:-1}" = only ] && BENCH_SHAPES=0
if [ "${BENCH_SHAPES:-all}" != 0 ]; then
  echo "== python -m hopgen.bench"
  timeout 3600 "$py" -m hopgen.bench --shapes "${BENCH_SHAPES:-all}" --json "$out/bench.json" > "$out/bench.log" 2>&1
  rc_bench=$?
  summary+=("bench (exit $rc_bench, $out/bench.log):")
  while IFS= read -r l; do summary+=("  ${l:0:160}"); done < <(grep -E "geometric-mean|FAILED|ERROR" "$out/bench.log" | head -12)
fi

echo
echo "================ hopgen Python on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
printf '%s\n' "${summary[@]}"
[ "$fail" -eq 0 ] && [ "$rc_bench" -eq 0 ]
