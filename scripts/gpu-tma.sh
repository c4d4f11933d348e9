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
#                 `hopgen tma load --backend mlir` works (else SKIP with its sentence)
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

# ---------------------------------------------------------------- the --check matrix
# The same variants tests/kernels/test_tma_kernels.c assembles with ptxas in CI. For a
# tile of T0 x T1 the tensor is 3 T + a bit in each mode and the origin is negative (the
# innermost by exactly 16 bytes), so the grid's tiles hang over every edge.
matrix=$OUTDIR/matrix.txt
: > "$matrix"
for dt in u8:1 f16:2 bf16:2 u32:4 s32:4 f32:4; do
  t=${dt%%:*}
  e=${dt##*:}
  case $t in
    u8) reds="" ;;
    f16 | bf16) reds="add min max" ;;
    u32) reds="add min max inc dec and or xor" ;;
    s32) reds="add min max and or xor" ;;
    f32) reds="add" ;;
  esac
  for sw in none 32B 64B 128B; do
    case $sw in none) span=64 ;; 32B) span=32 ;; 64B) span=64 ;; 128B) span=128 ;; esac
    inner=$((span / e))
    o16=$((-16 / e))
    one=$((inner * 4))
    [ "$sw" = none ] || one=$inner
    for shape in "2 8,$inner" "2 64,$((2 * inner))" "3 2,16,$inner" "1 $one"; do
      rank=${shape%% *}
      tile=${shape#* }
      IFS=, read -r -a tl <<< "$tile"
      sh=()
      og=()
      for ((m = 0; m < rank; m++)); do
        if [ $m -eq $((rank - 1)) ]; then
          sh+=($((3 * tl[m] + 16 / e)))
          og+=("$o16")
        else
          sh+=($((3 * tl[m] + 5)))
          og+=(-3)
        fi
      done
      args="--dtype $t --swizzle $sw --tile $tile --shape $(
        IFS=,
        echo "${sh[*]}"
      ) --origin=$(
        IFS=,
        echo "${og[*]}"
      )"
      {
        echo "load $args"
        echo "prefetch $args"
        echo "multicast --cluster 2 $args"
        echo "multicast --cluster 4 $args"
        echo "store $args"
        for r in $reds; do echo "reduce --reduce $r $args"; done
      } >> "$matrix"
    done
  done
done
step matrix-ptx 110 '^batch ' "$H" tma --batch "$matrix" --check --runs 1

# ---------------------------------------------------------------- edges and signs
edges=$OUTDIR/edges.txt
cat > "$edges" << 'EOF'
# negative origin in each mode alone, then in both (f16: the innermost by 8 elements = 16 B)
load --shape 200,192 --tile 64,64 --origin=-5,0
load --shape 200,192 --tile 64,64 --origin=0,-8
load --shape 200,192 --tile 64,64 --origin=-64,-64
load --shape 200,192 --tile 64,64 --origin=-63,-56 --swizzle 64B --tile 64,32
# the far edges only; tiles wholly outside the tensor (an explicit grid past it)
load --shape 100,104 --tile 64,64 --origin=0,0
load --shape 100,104 --tile 64,64 --origin=-200,-320 --grid 3,3
load --shape 100,104 --tile 64,64 --origin=90,96 --grid 2,2
# padded rows (leading dimension > the row), NaN fill of f16 and f32, fp8 as bytes
load --shape 100,100 --strides 104,1 --tile 32,64 --origin=-1,-8 --nan
load --dtype f32 --shape 70,36 --strides 40,1 --tile 16,32 --origin=-3,-4 --nan
load --dtype e4m3 --shape 90,300 --strides 304,1 --tile 16,128 --origin=-2,-16
# rank 3 and rank 5, negative in every mode
load --shape 3,40,72 --tile 2,16,64 --origin=-1,-7,-24
prefetch --shape 3,40,72 --tile 2,16,64 --origin=-1,-7,-24
load --shape 3,4,5,6,64 --tile 2,2,2,2,64 --origin=-1,-1,-1,-1,-8 --swizzle none
store --shape 3,4,5,6,64 --tile 2,2,2,2,64 --origin=-1,-1,-1,-1,-8 --swizzle none
# multicast across clusters of 2 and 4, over the edges
multicast --cluster 2 --shape 300,200 --strides 208,1 --tile 128,64 --origin=-5,-24
multicast --cluster 4 --shape 300,200 --strides 208,1 --tile 128,64 --origin=-5,-24
multicast --cluster 4 --dtype f32 --shape 77,96 --tile 64,32 --origin=-9,-4 --swizzle 128B
multicast --cluster 2 --dtype u8 --shape 130,500 --strides 512,1 --tile 64,128 --origin=-1,-16 --swizzle 128B
# stores and reduce-add over the edges (guards and row padding must stay untouched)
store --shape 100,100 --strides 104,1 --tile 32,64 --origin=-1,-8
reduce --reduce add --dtype f32 --shape 100,100 --strides 104,1 --tile 32,32 --origin=-7,-4
reduce --reduce add --dtype bf16 --shape 100,100 --strides 104,1 --tile 32,64 --origin=-7,-8
reduce --reduce add --dtype u32 --shape 33,20 --strides 24,1 --tile 16,32 --origin=-8,-4 --swizzle 128B
reduce --reduce add --dtype s32 --shape 3,33,20 --strides 792,24,1 --tile 2,16,32 --origin=-1,-8,-4
EOF
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
  # every 3rd case: the MLIR lowering (mlir-opt-22, llc-22) costs more per kernel than ptx
  awk 'NR % 3 == 1' "$matrix" > "$OUTDIR/matrix-mlir.txt"
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
