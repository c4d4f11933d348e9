#!/usr/bin/env bash
# The one call on a GPU machine: build, run the GPU tests, the TMA --check matrix, the GEMM
# checks and benchmarks; full logs go to $OUT/logs.tar.gz, a short table is printed last.
#   scripts/gpu-check.sh [smoke|tests|tma|gemm|mlir|all|sets|torchsets|episets|twospans|bs192|bsprobe|rp2|rs|splitk|sk2|sk2check|sk2bench|epilogue|outputs|unaligned2|dedup|bs2|midsets|oob|swap|grouped|gb|ea|ea-check|ea-bench|options|dv|dvbench|...] [extra steps...]
# Each mode is a list of steps; a step's log is logs/<step>.log.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/hopgen-gpu-out}
mkdir -p "$OUT/logs"
LOG=$OUT/logs
export PATH="$PATH:/usr/local/cuda/bin"
export HOPGEN_CACHE_DIR=${HOPGEN_CACHE_DIR:-/tmp/hopgen-cache}
# The GPU machine has no MLIR tools: MLIR-backend kernels come lowered from the cache that
# scripts/mlir-prelower.sh filled on a machine that has them, carried in .device-carry/.
mkdir -p "$HOPGEN_CACHE_DIR"
[ -d .device-carry/mlir-cache ] && cp -r .device-carry/mlir-cache/. "$HOPGEN_CACHE_DIR"/
summary=$OUT/summary.txt
: > "$summary"
t_all=$(date +%s)

step() { # step NAME CMD...: run, log, record PASS/FAIL and seconds
  local name=$1; shift
  local t0=$(date +%s%N)
  # A hung kernel must not eat the whole call: each step gets STEP_TIMEOUT seconds.
  local cmd=("$@")
  if declare -F "$1" > /dev/null; then # a shell function: run it in a child bash
    cmd=(bash -c "$(declare -f "$1"); H=$H; $*")
  fi
  if timeout "${STEP_TIMEOUT:-240}" "${cmd[@]}" > "$LOG/$name.log" 2>&1; then r=PASS; else r="FAIL(rc=$?)"; fi
  printf '%-28s %-12s %6d ms\n' "$name" "$r" $(( ($(date +%s%N) - t0) / 1000000 )) >> "$summary"
  [ "$r" = PASS ] || { echo "---- $name (tail)"; tail -25 "$LOG/$name.log"; }
}

# The copy on a GPU machine may carry a stale .git (the device tool copies the working tree):
# the line says so when the sources differ from that commit, and gives the sources' hash
# (the build stamp below), which `scripts/gpu-check.sh stamp` prints here for comparison.
src_stamp() { find src include tools tests bench examples CMakeLists.txt -type f -print0 | sort -z | xargs -0 cat | md5sum | cut -c1-16; }
[ "${1:-}" = stamp ] && { src_stamp; exit 0; }
{ nvidia-smi; nvidia-smi -q | grep -iE 'clocks|MHz|Driver|Product' | head -40; } > "$LOG/device.txt" 2>&1
commit_line="commit ${HOPGEN_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
if [ -z "${HOPGEN_COMMIT:-}" ] && ! git diff --quiet HEAD -- src include tools tests bench examples CMakeLists.txt 2> /dev/null; then
  commit_line="$commit_line plus changes not in it"
fi
echo "$commit_line, sources $(src_stamp)" > "$LOG/commit.txt"
# Warnings stay warnings here: the GPU machine's compiler differs from CI's, and CI is where
# -Werror is enforced; a run of device time must not die on a new warning.
# A build directory kept from an earlier call may hold objects newer than the sources that
# arrived since (the copy keeps modification times): rebuild from scratch when any source
# differs from what the stamp recorded.
stamp=$(src_stamp)
if [ "$(cat build-gpu/.stamp 2>/dev/null)" != "$stamp" ]; then rm -rf build-gpu; fi
step build bash -c 'cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DHOPGEN_WERROR=OFF && cmake --build build-gpu -j"$(nproc)"' && echo "$stamp" > build-gpu/.stamp
H=build-gpu/hopgen

smoke() {
  step rt-gpu-test ./build-gpu/tests/runtime_test_gpu
  step gemm-small-rc bash -c "$H gemm 256 256 256 --check && $H gemm 1000 7 127 --check && $H gemm 129 263 77 --check --d f32"
  step gemm-4096-check "$H" gemm 4096 4096 4096 --check --bench --iters 10
  step gemm-8192-bench "$H" gemm 8192 8192 8192 --check --bench --iters 20
}
tests() { step ctest-all ctest --test-dir build-gpu -j8 --output-on-failure; }
tma() { [ -x scripts/gpu-tma.sh ] && step tma-matrix scripts/gpu-tma.sh "$H" "$LOG/tma"; }
gemm_awkward() {
  local fails=0
  for mnk in "1 1 1" "7 7 7" "127 1000 4097" "4097 127 1000" "1000 4097 7" "1 4097 127"; do
    for lay in RC RR CR CC; do
      "$H" gemm $mnk --layout $lay --check || fails=$((fails+1))
    done
    "$H" gemm $mnk --type e4m3 --check || fails=$((fails+1))
    "$H" gemm $mnk --a e4m3 --b e5m2 --d f32 --check || fails=$((fails+1))
  done
  "$H" gemm 1000 1000 1000 --batch 3 --beta 0.5 --check || fails=$((fails+1))
  "$H" gemm 512 384 256 --batch 4 --d f16 --layout CC --alpha 2 --beta -1 --check || fails=$((fails+1))
  "$H" gemm 300 200 100 --lda 105 --ldb 111 --ldd 203 --ldc 207 --beta 1 --check || fails=$((fails+1))
  return $fails
}
gemm() {
  step gemm-awkward gemm_awkward
  step gemm-bench "$H" bench gemm --json "$OUT/gemm.json"
}
combos() { step gemm-combos scripts/gemm-combos.sh "$H" ${COMBOS_MODE:-}; }
sm80() { step sm80-gpu-test ./build-gpu/tests/model_test_sm80_gpu; }
compare() {
  step gemm-old-vs-new scripts/gpu-compare.sh "$H"
  step gemm-unaligned "$H" bench gemm --set unaligned --compare-repack --json "$OUT/gemm-unaligned.json"
}
# the wheel build (about 100 s) and the whole suite: more than the default step limit
python() { STEP_TIMEOUT=540 step python-gpu scripts/gpu-python.sh; }
sass() { step sass-report scripts/sass-report.sh "$H" /tmp/hopgen-sass; }
rt() { step rt-gpu-test ./build-gpu/tests/runtime_test_gpu; }
mlir() {
  step gemm-mlir-bench "$H" bench gemm --backend mlir --json "$OUT/gemm-mlir.json"
}

ep2_check() {
  STEP_TIMEOUT=600 step ep2-check scripts/gemm-epilogue.sh "$H" check
  STEP_TIMEOUT=600 step ep2-outputs scripts/gemm-epilogue.sh "$H" outputs
  STEP_TIMEOUT=600 step ep2-odd scripts/gemm-epilogue.sh "$H" odd
  step ep2-python env TESTS="test_gemm_aux_through_tma_and_staged test_gemm_fp8_out_amax_aux_c_type test_gemm_odd_shapes_cp_async_and_direct_store" BENCH_SHAPES=0 scripts/gpu-python.sh
  grep -hE '^FAIL|checks: ' "$LOG/ep2-check.log" "$LOG/ep2-outputs.log" "$LOG/ep2-odd.log" |
    cut -c1-200 >> "$summary"
}
ea_check() {
  STEP_TIMEOUT=600 step ea-check scripts/gemm-epilogue.sh "$H" ea-check
  grep -hE '^FAIL|checks: ' "$LOG/ea-check.log" | cut -c1-200 >> "$summary"
}
# The epilogue benches' table (gemm-epilogue.sh's ROW| lines): each case's time over the plain
# GEMM of its shape ("... none").
epi_table() {
  grep -h '^ROW|' "$1" | awk -F'|' '
    BEGIN { printf "%-34s %-32s %9s %8s %-34s %6s %-8s %s\n", "case", "variant", "hopgen ms", "+% none", "cuBLASLt ms (fused)", "ratio", "check", "store" }
    { split($2, w, " "); if ($2 ~ / none$/) base[w[1]] = $4
      pct = (w[1] in base && base[w[1]] > 0 && $4 + 0 > 0) ? sprintf("%+.1f", 100 * ($4 / base[w[1]] - 1)) : "-"
      printf "%-34s %-32s %9s %8s %-34s %6s %-8s %s\n", $2, $3, $4, pct, $5, $6, $7, $8 }' >> "$summary"
}
# The variants that were environment variables, by their options (docs/gemm-config.md): the
# configuration's --gelu as|poly5 / ,gas (the erf GELU's formula) and --direct-stores (,ds),
# the heuristic's --heuristic sk|pp|pp128|nobs|pt; each --check'ed (a few --bench'ed beside
# the default), then bench gemm --heuristic; one OPT| line per run, a table in the summary.
options_check() {
  local fails=0 out rc
  o() { # o ARGS...: one run, one OPT| line
    out=$("$H" gemm "$@" 2>&1); rc=$?
    [ $rc = 0 ] || fails=$((fails+1))
    echo "OPT|$(echo "$*" | sed 's/ --check//; s/ --bench//; s/ --iters [0-9]*//')|$(echo "$out" | grep -o 'config [^ ]*' | head -1 | cut -c8- | sed 's/,$//')|$(echo "$out" | grep -o 'rel. error [0-9.e-]*' | head -1 | cut -c12-)|$(echo "$out" | sed -n 's/.*bench    hopgen \([0-9.]*\) ms.*/\1/p' | head -1)|$([ $rc = 0 ] && echo ok || echo "FAIL(rc=$rc)")"
    [ $rc = 0 ] || echo "$out" | tail -5
  }
  for g in poly7 as poly5; do o 4096 4096 4096 --epilogue bias,gelu --gelu $g --check --bench --iters 20; done
  o 1000 1000 1000 --epilogue gelu --d f32 --config 128x64x64,c1x1,s8,gas --check
  o 777 1001 513 --epilogue bias,gelu --aux --d f32 --beta 0.5 --config 128x64x64,c1x1,s8,gp5 --check
  o 4095 4097 127 --amax --check --bench --iters 20
  o 4095 4097 127 --amax --direct-stores --check --bench --iters 20
  o 1000 4097 7 --batch 3 --beta 0.5 --epilogue bias,gelu --aux --direct-stores --check
  o 2500 3500 1000 --check --bench --iters 20
  o 2500 3500 1000 --heuristic sk --check --bench --iters 20
  o 4096 4096 1024 --epilogue bias,gelu --heuristic pp --check
  o 1000 3000 1000 --epilogue bias,silu --aux --aux-type f32 --heuristic pp128 --check
  for r in default nobs pt nobs,pt; do o 4096 7168 2048 --type e4m3 --scale block --heuristic $r --check --bench --iters 20; done
  "$H" bench gemm --set fp8block --types e4m3 --shapes 2 --iters 10 --heuristic nobs || fails=$((fails+1))
  echo "options checks: $fails failed"
  return $fails
}
options_table() {
  grep -h '^OPT|' "$1" | awk -F'|' '
    BEGIN { printf "%-78s %-44s %9s %9s %s\n", "run", "config", "rel.err", "ms", "check" }
    { printf "%-78s %-44s %9s %9s %s\n", substr($2, 1, 78), $3, $4, ($5 == "" ? "-" : $5), $6 }' >> "$summary"
  grep -hE '^(fp8block e4m3: geometric|options checks)' "$1" >> "$summary"
}
ea_bench() { STEP_TIMEOUT=600 step ea-bench scripts/gemm-epilogue.sh "$H" ea-bench; epi_table "$LOG/ea-bench.log"; }
ep2_bench() { STEP_TIMEOUT=600 step ep2-bench scripts/gemm-epilogue.sh "$H" ep2-bench; epi_table "$LOG/ep2-bench.log"; }

mode=${1:-smoke}; shift || true
case "$mode" in
  smoke) smoke ;;
  tests) tests ;;
  tma) tma ;;
  gemm) gemm ;;
  mlir) mlir ;;
  all) smoke; tests; tma; gemm; combos; mlir ;;
  combos) combos ;;
  verify) rt; sm80; tma; step gemm-awkward gemm_awkward; combos ;;
  compare) compare ;;
  unaligned) step gemm-combos-quick scripts/gemm-combos.sh "$H" quick
    step gemm-unaligned "$H" bench gemm --set unaligned --compare-repack --json "$OUT/gemm-unaligned.json"
    step gemm-odd "$H" bench gemm --set odd --json "$OUT/gemm-odd.json" ;;
  # operands TMA cannot address: the checks, the repack's bandwidth, both paths timed; the
  # table last (the repack lines and each set's summary)
  unaligned2) STEP_TIMEOUT=600 step unaligned-check scripts/gemm-unaligned.sh "$H" check
    step unaligned-repack scripts/gemm-unaligned.sh "$H" repack
    STEP_TIMEOUT=600 step unaligned-bench env OUT="$OUT" scripts/gemm-unaligned.sh "$H" bench
    grep -hE '^(FAIL|==)' "$LOG/unaligned-check.log" | head -40
    grep -hE '^(ok|FAIL)' "$LOG/unaligned-repack.log" | cut -c1-200
    grep -hiE 'geomean|geometric|^ *(bf16|e4m3|f16) ' "$LOG/unaligned-bench.log" | cut -c1-200 ;;
  python) python ;;
  sweep) step gemm-splitk-check scripts/gemm-splitk.sh "$H" check
    step gemm-epilogue-check scripts/gemm-epilogue.sh "$H" check
    step gemm-epilogue-bench scripts/gemm-epilogue.sh "$H" bench
    step gemm-splitk-sweep scripts/gemm-splitk.sh "$H" sweep ;;
  issue10) step gemm-splitk-check scripts/gemm-splitk.sh "$H" check
    step gemm-invariant bash -c "for a in '1000 4096 4096' '300 7168 2048 --layout CR' '77 1024 65536' '513 512 16384 --beta 0.5'; do $H gemm \$a --batch-invariant --check | grep -E 'config|bits|check' || exit 1; done"
    step gemm-splitk-set "$H" bench gemm --set splitk --json "$OUT/gemm-splitk.json"
    step gemm-decode-set "$H" bench gemm --set decode --json "$OUT/gemm-decode.json"
    step gemm-waves-set "$H" bench gemm --set waves --types bf16 --json "$OUT/gemm-waves.json"
    step gemm-llm "$H" bench gemm --json "$OUT/gemm.json" ;;
  # issue 10 item 1, stream-K: checks (sets, awkward shapes, fp8, epilogues), 10-run
  # determinism, compute-sanitizer, then splitk/waves/llm: heuristic, heuristic with the
  # stream-K rule (--heuristic sk), stream-K forced, split-K forced; the table last
  sk2) STEP_TIMEOUT=500 step gemm-streamk-check scripts/gemm-streamk.sh "$H" check
    step gemm-streamk-determinism scripts/gemm-streamk.sh "$H" determinism
    STEP_TIMEOUT=400 step gemm-streamk-sanitize scripts/gemm-streamk.sh "$H" sanitize
    STEP_TIMEOUT=900 step gemm-streamk-bench scripts/gemm-streamk.sh "$H" bench "$OUT/streamk-table.txt"
    [ -f "$OUT/streamk-table.txt" ] && cat "$OUT/streamk-table.txt" >> "$summary" ;;
  # the same in two calls, where one would pass the device's 10 minutes a command
  sk2check) STEP_TIMEOUT=500 step gemm-streamk-check scripts/gemm-streamk.sh "$H" check
    step gemm-streamk-determinism scripts/gemm-streamk.sh "$H" determinism
    STEP_TIMEOUT=400 step gemm-streamk-sanitize scripts/gemm-streamk.sh "$H" sanitize ;;
  sk2bench) STEP_TIMEOUT=900 step gemm-streamk-bench scripts/gemm-streamk.sh "$H" bench "$OUT/streamk-table.txt"
    [ -f "$OUT/streamk-table.txt" ] && cat "$OUT/streamk-table.txt" >> "$summary" ;;
  splitk2) step gemm-splitk-check scripts/gemm-splitk.sh "$H" check
    step gemm-splitk-set "$H" bench gemm --set splitk --json "$OUT/gemm-splitk.json"
    step gemm-decode-set "$H" bench gemm --set decode --json "$OUT/gemm-decode.json"
    STEP_TIMEOUT=420 step gemm-splitk-sweep2 scripts/gemm-splitk.sh "$H" sweep2 ;;
  # issue 10 item 2: the decode set (heuristic), then tile widths x splits on decode shapes,
  # with the memory line (bytes over time against the D2D copy, rotated operands)
  decode) step gemm-decode-set "$H" bench gemm --set decode --json "$OUT/gemm-decode.json"
    STEP_TIMEOUT=${DECODE_SWEEP_TIMEOUT:-420} step gemm-decode-sweep scripts/gemm-splitk.sh "$H" decode2
    grep -hE '^(bf16|e4m3|decode)' "$LOG/gemm-decode-set.log" | cut -c1-150 ;;
  # issue 10, split-K by atomic adds (,kSa): every split configuration both ways, the
  # heuristic and --deterministic, compute-sanitizer, then the splitk and decode sets (the
  # heuristic) with their host times; the table last
  ska) STEP_TIMEOUT=400 step gemm-splitk-check scripts/gemm-splitk.sh "$H" check
    STEP_TIMEOUT=300 step gemm-splitk-sanitize scripts/gemm-splitk.sh "$H" sanitize
    step gemm-splitk-set "$H" bench gemm --set splitk --types bf16,e4m3 --iters 10 --json "$OUT/gemm-splitk.json"
    step gemm-decode-set "$H" bench gemm --set decode --types bf16,e4m3 --iters 10 --json "$OUT/gemm-decode.json"
    grep -hE '^FAIL|checks:|sanitizer:' "$LOG/gemm-splitk-check.log" "$LOG/gemm-splitk-sanitize.log" | cut -c1-220
    grep -hiE 'geomean|geometric|host' "$LOG/gemm-splitk-set.log" "$LOG/gemm-decode-set.log" | cut -c1-200 ;;
  # wgmma RS (tma-ldmatrix-wgmma-rs): the checks on every tile width and schedule (cooperative
  # tiles wider than 128 gave wrong products before the A fragments waited for their wgmma),
  # then RS against SS on the same tiles beside cuBLASLt; the table last
  rs) STEP_TIMEOUT=400 step gemm-rs-check scripts/gemm-rs.sh "$H" check
    STEP_TIMEOUT=300 step gemm-rs-bench scripts/gemm-rs.sh "$H" bench
    grep -hE '^FAIL|RS checks' "$LOG/gemm-rs-check.log" | cut -c1-200 >> "$summary"
    grep -hE ' :: ' "$LOG/gemm-rs-bench.log" | cut -c1-160 >> "$summary" ;;
  splitk) step gemm-splitk-check scripts/gemm-splitk.sh "$H" check
    step gemm-splitk-bench scripts/gemm-splitk.sh "$H" bench ;;
  grouped) step gemm-grouped-check scripts/gemm-grouped.sh "$H" check
    step gemm-grouped-bench scripts/gemm-grouped.sh "$H" bench ;;
  grouped-sweep) step gemm-grouped-sweep scripts/gemm-grouped.sh "$H" sweep ;;
  # issue 11 item 3: the grouped GEMM with fp8 block-wise scales: its checks (both layouts,
  # staged and global scales, empty/unequal experts, K and N not multiples of 128), then the MoE
  # set beside cuBLASLt's block-scaled GEMM per expert; the table last
  gb) STEP_TIMEOUT=300 step gb-check scripts/gemm-grouped.sh "$H" block-check
    STEP_TIMEOUT=280 step gb-bench scripts/gemm-grouped.sh "$H" block-bench
    step gb-python env HOPGEN_LIBRARY="$PWD/build-gpu/libhopgen.so" PYTHONPATH="$PWD/python" \
      python3 python/tests/test_gpu.py test_grouped_gemm_block_scales
    grep -hsE '^FAIL|block-wise check' "$LOG/gb-check.log" | cut -c1-200 >> "$summary"
    { printf '%-22s %-18s %10s %10s %7s %9s\n' "experts x tok, N, K" layout hopgen cuBLASLt ratio rel_err
      grep -h '^GB|' "$LOG/gb-bench.log" | awk -F'|' '{ printf "%-22s %-18s %10s %10s %7s %9s\n", $2, $3, $4, $5, $6, $7 }'
    } >> "$summary" ;;
  epilogue) step gemm-epilogue-check scripts/gemm-epilogue.sh "$H" check
    step gemm-epilogue-bench scripts/gemm-epilogue.sh "$H" bench ;;
  # issue 11: fp8 accurate/fast accumulation (and the scaling modes as they land)
  fp8) step gemm-fp8-check scripts/gemm-fp8.sh "$H" check
    step gemm-fp8-accuracy scripts/gemm-fp8.sh "$H" accuracy
    step gemm-fp8-bench scripts/gemm-fp8.sh "$H" bench ;;
  # the promotion overlap (ps, pd) against the same tiles without, beside cuBLASLt; a call of
  # its own (about 75 check+bench runs); OVERLAP_SCALES="tensor" etc. narrows it
  fp8overlap) STEP_TIMEOUT=560 step gemm-fp8-overlap scripts/gemm-fp8.sh "$H" overlap
    grep -E '^[0-9]+x|overlap:|FAIL' "$LOG/gemm-fp8-overlap.log" ;;
  # issue 11, block-wise speed: staged block scales (,bs) and with two partial sets (,pd,bs)
  # against the global path: --check on awkward shapes and the refusals, then the fp8block set
  # per variant beside cuBLASLt block-wise; the table (best per shape, geomeans by kind) last
  # (bs2check / bs2bench: one half each, for two calls when one does not fit 10 minutes)
  bs2|bs2check|bs2bench)
    [ "$mode" = bs2bench ] || STEP_TIMEOUT=240 step gemm-bs2-check scripts/gemm-fp8.sh "$H" bs2-check
    [ "$mode" = bs2check ] || STEP_TIMEOUT=400 step gemm-bs2-bench scripts/gemm-fp8.sh "$H" bs2-bench
    grep -hsE '^FAIL|bs2 checks' "$LOG/gemm-bs2-check.log" | cut -c1-200
    grep -hsE '^[0-9]+x' "$LOG/gemm-bs2-bench.log" | cut -c1-110
    sed -n '/^== bs2/,$p' "$LOG/gemm-bs2-bench.log" 2>/dev/null ;;
  # the fp8block set as the heuristic picks it under its rules (kernels.h hg_gemm_rules_t,
  # gemm_config.c: block_scale_rule): nobs (global scales), default (bs), nobs,pt (pt alone) and
  # pt (bs,pt), cuBLASLt beside each; summaries last
  bs2sets) for v in nobs default nobs,pt pt; do
      STEP_TIMEOUT=200 step "fp8block-$v" "$H" bench gemm --set fp8block --types e4m3 \
        --iters ${ITERS:-20} --heuristic $v
    done
    for v in nobs default nobs,pt pt; do echo "== --heuristic $v"; grep -hE 'geometric|^ *[0-9]+x' "$LOG/fp8block-$v.log" | cut -c1-150; done ;;
  # operands read from unaligned rows under compute-sanitizer (repack, cp.async windows),
  # then the decode and unaligned sets (compare with the tree before the thirteenth session
  # by scripts/gpu-compare.sh); A and B swapped (,sw): checks, then timed against the default
  oob) STEP_TIMEOUT=400 step gemm-oob scripts/gemm-oob.sh "$H"
    step decode-bench "$H" bench gemm --set decode --types bf16,e4m3 --iters 20
    step unaligned-bench "$H" bench gemm --set unaligned --compare-repack
    grep -hE '^(ok|FAIL)|checks:|geometric' "$LOG/gemm-oob.log" "$LOG/decode-bench.log" \
      "$LOG/unaligned-bench.log" | cut -c1-200 ;;
  swap) STEP_TIMEOUT=400 step gemm-swap-check scripts/gemm-swap.sh "$H" check
    STEP_TIMEOUT=400 step gemm-swap-bench scripts/gemm-swap.sh "$H" bench
    grep -hE '^(FAIL|==)|checks:|^ *[0-9]' "$LOG/gemm-swap-check.log" "$LOG/gemm-swap-bench.log" |
      cut -c1-200 ;;
  # the mid set (one wave or less over a long K) under the heuristic's default and its rules
  # nocw (no clusters for a wave of 0.9 of the SMs) and nokcol (no split-K for one column of
  # tiles), the default since the thirteenth session,
  # default first and last (two rounds), cuBLASLt beside each; summaries last
  midsets) for t in $(echo "${TYPES:-bf16,e4m3}" | tr , ' '); do
      for v in default nocw nokcol default2; do
        STEP_TIMEOUT=200 step "mid-$t-$v" "$H" bench gemm --set mid --types "$t" \
          --iters "${ITERS:-20}" --heuristic "${v%2}"
      done
    done
    for t in $(echo "${TYPES:-bf16,e4m3}" | tr , ' '); do
      for v in default nocw nokcol default2; do echo "== $t --heuristic ${v%2}"; grep -hE 'geometric|^ *(bf16|e4m3) ' "$LOG/mid-$t-$v.log" | cut -c1-150; done
    done ;;
  # fp8 row- and block-wise against torch._scaled_mm in the same mode (same process, same data)
  fp8torch) step fp8-torch env HOPGEN_LIBRARY="$PWD/build-gpu/libhopgen.so" \
      PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" python3 scripts/fp8-torch.py
    grep -vE '^\s*$' "$LOG/fp8-torch.log" | cut -c1-170 ;;
  # issue 12's output conversions alone: fp8 D (saturating), amax (bitwise), aux, C's type;
  # then their cost over the plain bf16-D GEMM and against cuBLASLt's GELU_AUX_BIAS; Python
  outputs) STEP_TIMEOUT=600 step epilogue-outputs-check scripts/gemm-epilogue.sh "$H" outputs
    STEP_TIMEOUT=600 step epilogue-outputs-bench scripts/gemm-epilogue.sh "$H" outputs-bench
    step python-epilogue-outputs env TESTS="test_gemm_fp8_out_amax_aux_c_type test_gemm_bias_activation_fused" BENCH_SHAPES=0 scripts/gpu-python.sh
    grep -hE '^(ok|FAIL|==)|epilogue checks|bench |plain |amax ' "$LOG/epilogue-outputs-check.log" \
      "$LOG/epilogue-outputs-bench.log" | cut -c1-170 ;;
  # what the sessions without device time built: split-K, activations, launch cost
  pending) rt; step gemm-splitk-check scripts/gemm-splitk.sh "$H" check
    step gemm-epilogue-check scripts/gemm-epilogue.sh "$H" check
    step gemm-combos-quick scripts/gemm-combos.sh "$H" quick
    step gemm-bench "$H" bench gemm --json "$OUT/gemm.json"
    step gemm-splitk-bench scripts/gemm-splitk.sh "$H" bench
    step gemm-epilogue-bench scripts/gemm-epilogue.sh "$H" bench ;;
  final2) rt; step gemm-awkward gemm_awkward
    step gemm-combos-quick scripts/gemm-combos.sh "$H" quick
    step examples bash -c "bash tests/cli/examples.sh $H > $LOG/examples-out.log 2>&1; rc=\$?; grep -h 'PASS\|FAIL\|rel' build-gpu/examples.log 2>/dev/null; tail -3 $LOG/examples-out.log; exit \$rc"
    compare
    step gemm-odd "$H" bench gemm --set odd --json "$OUT/gemm-odd.json" ;;
  # issue 9's de-duplication: the GEMM generator composed from the producer, split-K, block
  # scale and epilogue builders (emitted PTX unchanged on the CPU), the check/bench drivers'
  # shared kits (gemm_bench.c, grouped.c) and the CLI's shared run options: every path's
  # --check, the examples, then the shape set's ratios against cuBLASLt
  dedup) rt; step gemm-awkward gemm_awkward
    step gemm-combos-quick scripts/gemm-combos.sh "$H" quick
    step gemm-splitk-check scripts/gemm-splitk.sh "$H" check
    step gemm-fp8-check scripts/gemm-fp8.sh "$H" check
    step gemm-grouped-check scripts/gemm-grouped.sh "$H" check
    step gemm-epilogue-check scripts/gemm-epilogue.sh "$H" check
    step examples bash -c "bash tests/cli/examples.sh $H > $LOG/examples-out.log 2>&1; rc=\$?; tail -3 $LOG/examples-out.log; exit \$rc"
    step gemm-bench "$H" bench gemm --json "$OUT/gemm.json"
    step grouped-bench scripts/gemm-grouped.sh "$H" bench ;;
  # issue 12 / 10 epilogue stores: the epilogue and output checks, the staged (odd-D) checks
  # with both A/B switches, then the benches (4096^3, 8192^3: none, bias,gelu under each
  # --gelu formula (,gas ,gp5), gelu_tanh, aux through TMA against --direct-stores (,ds), fp8 D +
  # amax, ping-pong for the erf GELU; odd-ldd shapes staged against direct) and their table
  # ep2: issue 12 / 10's epilogue stores (checks: epilogue, outputs, odd-D staged stores and
  # the A/B switches; bench: 4096^3/8192^3 chains and odd-ldd shapes, table in the summary).
  # Over 10 minutes in all: on the device, run ep2-check and ep2-bench as two calls.
  # ea: aux beside every D type, ping-pong for expensive chains (--heuristic pp|pp128 A/B);
  # checks, then the 4096^3/8192^3 benches cooperative vs ping-pong, a table last. Over 10
  # minutes in all: on the device, run ea-check and ea-bench as two calls.
  ea) ea_check; ea_bench ;;
  ea-check) ea_check ;;
  ea-bench) ea_bench ;;
  ep2) ep2_check; ep2_bench ;;
  ep2-check) ep2_check ;;
  ep2-bench) ep2_bench ;;
  options) STEP_TIMEOUT=500 step options options_check; options_table "$LOG/options.log" ;;
  # dv: the decode kernel (ldg-mmasync) --check matrix; dvbench: the decode set with and
  # without --heuristic dv and the odd M <= 16 shapes against cuBLASLt, the table last
  dv) STEP_TIMEOUT=560 step gemm-decode-check scripts/gemm-decode.sh "$H" check ;;
  dvbench) STEP_TIMEOUT=560 step gemm-decode-bench scripts/gemm-decode.sh "$H" bench "$OUT/decode-table.txt"
    cat "$OUT/decode-table.txt" ;;
  # sets: every shape set of `bench gemm` for the types in $TYPES (default bf16), one step per
  # set, each table in $OUT/set-<set>-<type>.txt, the geometric means in the summary; then the
  # streaming copy against the driver's D2D copy (COPY=0: not).
  sets) for t in $(echo "${TYPES:-bf16}" | tr , ' '); do
      for s in ${SETS:-llm decode splitk odd waves unaligned fp8block fp8row}; do
        case "$s:$t" in fp8*:bf16|fp8*:f16) continue ;; esac
        STEP_TIMEOUT=400 step "set-$s-$t" "$H" bench gemm --set "$s" --types "$t" --iters 10 \
          --json "$OUT/set-$s-$t.json"
        cp "$LOG/set-$s-$t.log" "$OUT/set-$s-$t.txt"
        grep -h 'geometric' "$LOG/set-$s-$t.log" | cut -c1-160 >> "$summary"
      done
    done
    [ "${COPY:-1}" = 0 ] || { step copy "$H" bench copy --bytes 1G; grep -hiE 'ratio|GB/s' "$LOG/copy.log" | tail -3 >> "$summary"; } ;;
  # episets: issue 12's fused chains over the llm set's six large shapes (bf16), one step per
  # chain (each table in $OUT/epi-<n>.txt: time over the plain GEMM, unfused over fused, ratio
  # to cuBLASLt's same fused epilogue), the geometric means in the summary. About 2 minutes a
  # chain on an H200: CHAINS picks them (1 bias,gelu 2 bias,gelu_tanh 3 bias,relu 4 + aux
  # 5 e4m3 D + amax; default all), and two calls may be needed within a call's 10 minutes.
  episets) n=0
    for e in "bias,gelu" "bias,gelu_tanh" "bias,relu" "bias,gelu --aux" "bias --d-type e4m3 --amax"; do
      n=$((n+1))
      case " ${CHAINS:-1 2 3 4 5} " in *" $n "*) ;; *) continue ;; esac
      STEP_TIMEOUT=200 step "epi-$n" "$H" bench gemm --set llm --types bf16 --shapes 6 --iters 20 --epilogue $e
      cp "$LOG/epi-$n.log" "$OUT/epi-$n.txt"
      printf 'epilogue %-30s %s\n' "$e" "$(grep -h 'geometric' "$LOG/epi-$n.log" | cut -c1-100)" >> "$summary"
    done ;;
  # torchsets: the same sets against torch.matmul / torch._scaled_mm in one process
  # (python -m hopgen.bench --set), table in $OUT/torch-sets.txt, geometric means in the summary
  torchsets) STEP_TIMEOUT=560 step torch-sets env HOPGEN_LIBRARY="$PWD/build-gpu/libhopgen.so" \
      PYTHONPATH="$PWD/python" python3 -m hopgen.bench --set "${SETS:-all}" --types "${TYPES:-bf16,e4m3}" \
      --iters 20 --json "$OUT/torch-sets.json"
    cp "$LOG/torch-sets.log" "$OUT/torch-sets.txt"
    grep -hE 'geometric|ERROR|FAILED' "$LOG/torch-sets.log" | cut -c1-160 >> "$summary" ;;
  # both operands repacked in one launch (the pair kernel): checks, the host time a run
  # (run_host_us; 3 launches a run before, 2 now), and the repack alone, pair against two
  # launches; the table last
  rp2) for g in "1001 999 4097" "333 7777 2222" "4095 4097 127" "1001 999 4097 --type e4m3" \
        "1001 999 4097 --batch 3" "77 4097 1001 --layout RR"; do
      step "rp2-gemm-$(echo "$g" | tr ' ' '_' | tr -d -)" "$H" gemm $g --check --bench --iters 20
    done
    step rp2-bench-repack bash -c "$H bench repack 1001 4097 --pair 999 && \
      $H bench repack 4095 127 --pair 4097 && $H bench repack 333 2222 --pair 7777 --type e4m3"
    for f in "$LOG"/rp2-gemm-*.log; do
      printf '%-36s %s\n' "$(basename "$f" .log)" "$(grep -hE 'host +hg_gemm_op_run' "$f" | cut -c1-110)"
      grep -hE '^ *(check|bench) ' "$f" | cut -c1-150
    done
    grep -hE 'bench repack:|launch|repack  |two launches|ratio' "$LOG/rp2-bench-repack.log" | cut -c1-150 ;;
  # twospans: bf16 tile K 128 (two swizzle spans a stage row) against the heuristic's tile K
  # 64 on skinny large-weight shapes and one square; measured on the H100 only (2026-11-27,
  # no gain there): run it on an H200, where TMA streams large weights below the decode
  # kernel's rate
  twospans) for s in "1 16384 16384|64x128x128,c1x1,s4" "1 4096 28672|64x128x128,c1x1,s4,k4a" \
        "1 28672 4096|64x224x128,c1x1,s3" "8 28672 4096|64x224x128,c1x1,s3" \
        "32 7168 8192|64x128x128,c1x1,s4" "4096 4096 4096|128x128x128,c2x1,s3"; do
      g=${s%%|*} c=${s#*|}
      step "ts-$(echo "$g" | tr ' ' x)" bash -c "$H gemm $g --bench --iters 50 && $H gemm $g --config $c --check --bench --iters 50"
      printf '%-16s %s\n' "$g" "$(grep -h ' bench ' "$LOG/ts-$(echo "$g" | tr ' ' x).log" | sed 's/ = [0-9.]* TFLOP\/s//g' | tr -s ' ' | tr '\n' ' ')"
    done ;;
  # bs192: block-scaled tiles of 192 columns (two scale blocks a tile), written 2026-11-27
  # without a GPU: --check on shapes with a partial last N tile, K not a multiple of 128,
  # small M and grouped, then timed against the heuristic's 128x128 (fp8block set shapes)
  bs192) for g in "4096 7168 16384|128x192x128,c2x1,s4,bs" "4096 2112 7168|128x192x128,c2x1,s4,bs" \
        "1000 3000 700|128x192x128,c1x1,s4" "128 7168 2048|64x192x128,pp,s4,bs" \
        "8192 8192 8192|128x192x128,c1x2,s4,bs" "4096 7168 16384|128x192x128,c2x1,s4,pt,bs"; do
      shape=${g%%|*} cfg=${g#*|} n="bs192-$(echo "$shape" | tr ' ' x)-${cfg%%,*}"
      step "$n" bash -c "$H gemm $shape --type e4m3 --scale block --bench --iters 20 && \
        $H gemm $shape --type e4m3 --scale block --config $cfg --check --bench --iters 20"
      printf '%-20s %s\n' "$shape" "$(grep -hE ' bench |check ' "$LOG/$n.log" | sed 's/ = [0-9.]* TFLOP\/s//g' | tr -s ' ' | cut -c1-90 | tr '\n' ' ')"
    done
    step bs192-grouped "$H" grouped-gemm --experts 8 --tokens 512 --n 4096 --k 7168 --type e4m3 \
      --scale block --config 128x192x128,c2x1,s4,bs --check --bench ;;
  # bsprobe: where fp8 block-wise loses 15% against per-tensor promotion every k-block on the
  # same tile (bench/RESULTS.md, seventh session): Nsight Compute's warp states for the two
  # kernels, 4096x7168x16384 e4m3, 128x128x128 c1x2 s6
  bsprobe) NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
    for v in "p1|--fp8-promote 1 --config 128x128x128,c1x2,s6,coop,m8,e32" \
        "bs|--scale block --config 128x128x128,c1x2,s6,coop,m8,e32,bs"; do
      n=${v%%|*} a=${v#*|}
      step "bsprobe-$n" "$NCU" -k regex:hg_gemm -c 1 --section WarpStateStats --section SchedulerStats \
        --section SpeedOfLight "$H" gemm 4096 7168 16384 --type e4m3 $a --bench --iters 1 --warmup 0
      grep -hE 'Stall|Issued|Throughput|Duration' "$LOG/bsprobe-$n.log" | head -30
    done ;;
  none) ;;
  final) rt; tma; gemm; combos; sass; mlir ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
i=0
for extra in "$@"; do i=$((i+1)); step "x$i-$(echo "$extra" | sed 's|build-gpu/hopgen ||' | tr -c 'A-Za-z0-9' _ | cut -c1-24)" bash -c "$extra"; done

echo "==== $(cat "$LOG/commit.txt") total $(( $(date +%s) - t_all )) s"
grep -m1 -E 'NVIDIA H[0-9]+' "$LOG/device.txt"; grep -m1 'Driver Version' "$LOG/device.txt"
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$OUT/logs"
cat "$summary"
