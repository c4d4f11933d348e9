#!/usr/bin/env bash
# The TMA copy kernels on a GPU (H100/H200), in one call, within TMA_BUDGET_S seconds
# (default: scripts/gpu-check.sh's STEP_TIMEOUT - 15, i.e. 225 s):
#   scripts/gpu-tma.sh PATH/TO/hopgen [OUTDIR]        (OUTDIR defaults to $OUT/hopgen-tma)
#
# Steps, most important first (a step that no longer fits the budget is NOT-RUN):
#   matrix-ptx    --check of every kernel variant: element types (1/2/4 B) x swizzles x tile
#                 shapes (rank 1-3) x operations (load, prefetch, multicast over clusters of 2
#                 and 4, store, every reduce op the type allows), all with negative origins
#                 and tiles hanging over the tensor's far edges; one process (--batch); the
#                 planner's static refusals (multicast slices below a swizzle pattern) are
#                 REFUSED lines, not failures
#   edges         negative origins in each mode alone and in all, far-edge overhang, tiles
#                 wholly outside the tensor, padded rows, NaN fill, fp8, rank 5, multicast 2
#                 and 4, stores and reduce-add (guards and row padding must stay untouched)
#   cold-warm-OP  spec -> launched kernel in a fresh process with an empty cache (< 300 ms),
#                 then from the cache in the same process (< 5 ms); the times go in the table
#   copy-1G/4G    hopgen bench copy: the streaming TMA copy vs the driver's D2D copy, same
#                 process; must reach 0.9 of D2D
#   san-TOOL      compute-sanitizer memcheck / racecheck / synccheck over one small case of
#                 each operation (one --batch process per tool)
#   matrix-mlir   a third of the matrix and the edges through the MLIR backend, when
#                 `hopgen tma load --backend mlir` works (else SKIP with its sentence); without
#                 mlir-opt-22 on this machine, from a HOPGEN_CACHE_DIR that
#                 scripts/mlir-prelower.sh filled on one with it
#   example-*     examples/tma_{load,prefetch,multicast} next to the CLI, when built
#   copy-1G-altN  only when copy-1G did not reach 0.9: other ring shapes, for tuning
#
# Every step's full output is in OUTDIR/<step>.log (each case's PASS/FAIL/REFUSED line; under
# a failure its sentence and first differing bytes with CTA, smem byte, box element and
# tensor coordinate). The pass/fail table comes last, also in OUTDIR/summary.txt. Exit
# status: 0 when every step passed (SKIP counts as passed), else 1.
set -uo pipefail
H=${1:?usage: scripts/gpu-tma.sh PATH/TO/hopgen [OUTDIR]}
OUTDIR=${2:-${OUT:-/tmp}/hopgen-tma}
mkdir -p "$OUTDIR"
H=$(cd "$(dirname "$H")" && pwd)/$(basename "$H")
export PATH="$PATH:/usr/local/cuda/bin"
# The matrix reuses compiled kernels across runs (a persistent cache); the cold-path steps
# use fresh empty directories of their own.
export HOPGEN_CACHE_DIR=${HOPGEN_CACHE_DIR:-/tmp/hopgen-tma-cache}
mkdir -p "$HOPGEN_CACHE_DIR"
# The whole script stays inside this many seconds (scripts/gpu-check.sh gives a step
# STEP_TIMEOUT, 240 s by default): a step that would not fit is reported NOT-RUN, so the
# table below is always printed.
budget=${TMA_BUDGET_S:-$((${STEP_TIMEOUT:-240} - 15))}
summary=$OUTDIR/summary.txt
: > "$summary"
t_all=$(date +%s)
failures=0

# record NAME RESULT SECONDS NOTE
record() {
  printf '%-21s %-8s %4s s  %s\n' "$1" "$2" "$3" "$4" >> "$summary"
  [ "$2" = PASS ] || [ "$2" = SKIP ] || failures=$((failures + 1))
}

# step NAME TIMEOUT_S NOTE_REGEX CMD...: run with a time limit, log, record. The note is the
# last log line matching NOTE_REGEX (or the last line of the log on failure).
step() {
  local name=$1 limit=$2 pat=$3
  shift 3
  local log=$OUTDIR/$name.log t0 rc note result left
  t0=$(date +%s)
  left=$((budget - (t0 - t_all)))
  if [ "$left" -lt 20 ]; then
    record "$name" "NOT-RUN" 0 "out of time (TMA_BUDGET_S=$budget): run it alone, or raise the budget"
    return
  fi
  [ "$limit" -le $((left - 10)) ] || limit=$((left - 10))
  echo "== $name: $*" > "$log"
  timeout --kill-after=10 "$limit" "$@" >> "$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then result=PASS; elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    result="TIMEOUT"
    echo "== killed after ${limit} s (a hang: look for a CTA waiting on its mbarrier)" >> "$log"
  else result="FAIL($rc)"; fi
  note=$(grep -E -- "$pat" "$log" | tail -1)
  if [ "$result" != PASS ]; then
    # a batch: its tally and the first failing case's sentence; else the CLI's sentence
    local first
    first=$(grep -m1 -A1 '^FAIL ' "$log" | tail -1 | sed 's/^ *//')
    if [ -n "$note" ] && [ -n "$first" ]; then note="$note | first: $first"; else
      note=$(grep -E '^hopgen: ' "$log" | tail -1)
    fi
  fi
  [ -n "$note" ] || note=$(tail -1 "$log")
  record "$name" "$result" $(($(date +%s) - t0)) "${note:0:150}"
  echo "$name: $result"
  # A batch that hung: name the case it was running (the one after the last result line).
  if [ "$result" = TIMEOUT ] && [ "${2:-}" = tma ] && [ "${3:-}" = --batch ]; then
    local done_cases hung
    done_cases=$(grep -cE '^(PASS|FAIL|REFUSED) ' "$log")
    hung=$(grep -vE '^[[:space:]]*(#|$)' "$4" | sed -n "$((done_cases + 1))p")
    echo "                      (hung in case $((done_cases + 1)): $hung)" >> "$summary"
  fi
}

{
  echo "hopgen: $H"
  nvidia-smi -L 2> /dev/null || echo "nvidia-smi not available"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2> /dev/null
  git -C "$(dirname "$0")" log -1 --format='commit %H %s' 2> /dev/null
} > "$OUTDIR/device.txt"

# ---------------------------------------------------------------- the cases
# The matrix, the edges and the MLIR part of the matrix: scripts/tma-cases.sh writes them (one
# copy of the cases, which scripts/mlir-prelower.sh reads too).
if ! "$(dirname "$0")/tma-cases.sh" "$OUTDIR" > "$OUTDIR/cases.log" 2>&1; then
  echo "scripts/tma-cases.sh failed: $(tail -1 "$OUTDIR/cases.log")"
  exit 1
fi
matrix=$OUTDIR/matrix.txt
edges=$OUTDIR/edges.txt

# ---------------------------------------------------------------- the --check matrix
# The same variants tests/kernels/test_tma_kernels.c assembles with ptxas in CI. For a
# tile of T0 x T1 the tensor is 3 T + a bit in each mode and the origin is negative (the
# innermost by exactly 16 bytes), so the grid's tiles hang over every edge.
step matrix-ptx 110 '^batch ' "$H" tma --batch "$matrix" --check --runs 1

# ---------------------------------------------------------------- edges and signs
# negative origins in each mode, far edges, tiles outside the tensor, padded rows, NaN fill,
# fp8, rank 3 and 5, multicast, stores and reduce-add (see tma-cases.sh)
step edges 40 '^batch ' "$H" tma --batch "$edges" --check --runs 1

# ---------------------------------------------------------------- cold and warm paths
for op in "load" "multicast --cluster 2" "store"; do
  fresh=$(mktemp -d /tmp/hopgen-cold-cache.XXXXXX)
  # shellcheck disable=SC2086
  HOPGEN_CACHE_DIR=$fresh step "cold-warm-${op%% *}" 30 'path: spec' \
    "$H" tma $op --check --runs 3 --max-cold-ms 300 --max-warm-ms 5
  grep -E '(cold|warm) path' "$OUTDIR/cold-warm-${op%% *}.log" | sed 's/^ */    /' >> "$summary"
  rm -rf "$fresh"
done

# ---------------------------------------------------------------- streaming copy
for size in 1G 4G; do
  step "copy-$size" 60 '^  ratio' "$H" bench copy --bytes "$size" --min-ratio 0.9
done

# ---------------------------------------------------------------- compute-sanitizer
# One small case of each operation, all five in one process per tool (--batch); the
# sanitizer's reports name the kernel (hg_tma_<op>_...).
san=$(command -v compute-sanitizer || true)
for c in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
  [ -n "$san" ] || { [ -x "$c" ] && san=$c; }
done
if [ -n "$san" ]; then
  cat > "$OUTDIR/sanitize.txt" << 'EOF'
load --shape 128,128 --tile 64,64 --origin=-8,-8
prefetch --shape 128,128 --tile 64,64 --origin=-8,-8
multicast --cluster 2 --shape 128,128 --tile 64,64 --origin=-8,-8
store --shape 128,128 --tile 64,64 --origin=-8,-8
reduce --reduce add --dtype f32 --shape 96,96 --tile 64,32 --origin=-8,-4
EOF
  for tool in memcheck racecheck synccheck; do
    step "san-$tool" 45 'ERROR SUMMARY' "$san" --tool "$tool" --error-exitcode 99 \
      "$H" tma --batch "$OUTDIR/sanitize.txt" --check --runs 1
  done
else
  record sanitizer SKIP 0 "compute-sanitizer not found (PATH, /usr/local/cuda)"
fi

# ---------------------------------------------------------------- MLIR backend
t0=$(date +%s)
if "$H" tma load --backend mlir --emit /dev/null --no-ptxas > "$OUTDIR/mlir-probe.log" 2>&1; then
  # every 3rd case of the matrix (tma-cases.sh): an MLIR lowering costs more than ptx's
  step matrix-mlir 60 '^batch ' "$H" tma --batch "$OUTDIR/matrix-mlir.txt" --check --runs 1 \
    --backend mlir
  step edges-mlir 20 '^batch ' "$H" tma --batch "$edges" --check --runs 1 --backend mlir
else
  record matrix-mlir SKIP $(($(date +%s) - t0)) "$(grep -m1 '^hopgen: ' "$OUTDIR/mlir-probe.log" | cut -c1-150)"
fi

# ---------------------------------------------------------------- examples
bindir=$(dirname "$H")
for ex in tma_load tma_prefetch tma_multicast; do
  if [ -x "$bindir/example_$ex" ]; then
    step "example-$ex" 20 '^ran on' "$bindir/example_$ex"
  else
    record "example-$ex" SKIP 0 "$bindir/example_$ex not built"
  fi
done

# ---------------------------------------------------------------- copy tuning (if needed)
if ! grep -qE '^copy-1G +PASS' "$summary"; then
  # Below 0.9 (or failed): try the other shapes of the ring, logged for tuning.
  i=0
  for alt in "--ctas-per-sm 2 --stages 3" "--box-rows 16 --stages 12" \
    "--box-rows 64 --stages 3" "--evict-first"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    step "copy-1G-alt$i" 60 '^  ratio' "$H" bench copy --bytes 1G --min-ratio 0.9 $alt
    echo "                      (alt$i: $alt)" >> "$summary"
  done
fi

echo
echo "==== gpu-tma: $(head -2 "$OUTDIR/device.txt" | tail -1) | $(grep -m1 '^commit' "$OUTDIR/device.txt" | cut -c1-60) | $(($(date +%s) - t_all)) s | logs: $OUTDIR"
cat "$summary"
[ "$failures" -eq 0 ]
