#!/usr/bin/env bash
# Lower ahead of time, on a machine WITH the MLIR tools (mlir-22-tools), every kernel that the
# GPU checks build with --backend mlir, into a cache directory to carry to the GPU machine
# (which has no MLIR tools: there `--backend mlir` finds each lowering in the cache instead of
# running mlir-opt-22):
#   scripts/mlir-prelower.sh CACHEDIR [PATH/TO/hopgen]     (hopgen: default build/hopgen)
# then on the GPU machine: HOPGEN_CACHE_DIR=CACHEDIR scripts/gpu-check.sh mlir (or tma, all).
#
# What it lowers (generation only: each `hopgen` call below prints the MLIR, lowers it into
# CACHEDIR and assembles the PTX with ptxas; nothing runs on a GPU):
#   - scripts/gpu-tma.sh's MLIR steps: its probe (`hopgen tma load --backend mlir`), the
#     matrix-mlir and edges cases (the same files: scripts/tma-cases.sh writes both);
#   - `hopgen bench gemm --backend mlir`: every shape of the llm set (src/kernels/gemm_config.c) for
#     bf16 and e4m3 (bf16 output, K-major operands: bench gemm's problems, and the defaults of
#     `hopgen gemm M N K --type T`);
#   - the `hopgen gemm ... --backend mlir` commands of scripts/gpu-check.sh's mlir() function.
# Then it generates everything again with HOPGEN_MLIR_OPT pointing nowhere, which succeeds
# only if every kernel now comes from the cache.
#
# A kernel is found on the GPU machine only if its MLIR text is the same there, so:
#   - same hopgen source on both machines (a changed generator changes the text);
#   - GEMM configurations: without a GPU `hopgen gemm` picks with hg_gemm_heuristic for 132
#     SMs, as `hopgen gemm/bench gemm --check` does on an H100 SXM or H200 (132 SMs); a GPU
#     with another SM count (H100 PCIe: 114), or a gemm-tuned.txt in the GPU's
#     HOPGEN_CACHE_DIR (from --tune), may pick other configurations, which then miss.
set -uo pipefail
DIR=${1:?usage: scripts/mlir-prelower.sh CACHEDIR [PATH/TO/hopgen]}
root=$(cd "$(dirname "$0")/.." && pwd)
H=${2:-$root/build/hopgen}
[ -x "$H" ] || {
  echo "mlir-prelower: $H is not an executable hopgen (build it, or give its path)" >&2
  exit 2
}
H=$(cd "$(dirname "$H")" && pwd)/$(basename "$H")
export PATH="$PATH:/usr/local/cuda/bin"
tool=${HOPGEN_MLIR_OPT:-mlir-opt-22}
command -v "$tool" > /dev/null || {
  echo "mlir-prelower: $tool not found: this script lowers with the MLIR tools (apt-get install mlir-22-tools llvm-22, or set HOPGEN_MLIR_OPT)" >&2
  exit 2
}
mkdir -p "$DIR" || exit 2
DIR=$(cd "$DIR" && pwd)
export HOPGEN_CACHE_DIR=$DIR
jobs=$(nproc 2> /dev/null || echo 2)
work=$(mktemp -d "${TMPDIR:-/tmp}/hopgen-prelower.XXXXXX")
trap 'rm -rf "$work"' EXIT
entries() { find "$DIR" -maxdepth 1 -name 'mlir-*.ptx' | wc -l; }
before=$(entries)
t0=$(date +%s)
failures=0

# ---------------------------------------------------------------- the TMA cases
"$root/scripts/tma-cases.sh" "$work" || exit 2
# The batch files split into one part per core: a batch is one process, lowering serially.
cat "$work/matrix-mlir.txt" "$work/edges.txt" | grep -vE '^[[:space:]]*(#|$)' > "$work/tma-all.txt"
echo "load" >> "$work/tma-all.txt" # gpu-tma.sh's probe: `hopgen tma load --backend mlir`
split -n "l/$jobs" -d "$work/tma-all.txt" "$work/tma-part-"

# tma_pass EXTRA...: every TMA case, in parallel batches; a batch's tally line per part.
tma_pass() {
  local p pids=() rc=0
  for p in "$work"/tma-part-*; do
    [ -s "$p" ] || continue
    "$H" tma --batch "$p" --backend mlir "$@" > "$p.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  local pass fail refused
  pass=$(cat "$work"/tma-part-*.log | grep -c '^PASS ')
  fail=$(cat "$work"/tma-part-*.log | grep -c '^FAIL ')
  refused=$(cat "$work"/tma-part-*.log | grep -c '^REFUSED ')
  echo "  tma: $pass generated, $refused refused by the planner (no kernel), $fail failed"
  if [ "$rc" -ne 0 ] || [ "$fail" -ne 0 ]; then
    grep -h -A1 '^FAIL ' "$work"/tma-part-*.log | head -6 | sed 's/^/    /'
    grep -h '^hopgen: ' "$work"/tma-part-*.log | head -3 | sed 's/^/    /'
    return 1
  fi
}

# ---------------------------------------------------------------- the GEMMs
# The "llm" shape set of src/kernels/gemm_config.c (what `hopgen bench gemm` runs by
# default), read from the source so that a new shape there is prelowered too.
sed -n '/{"llm",/,/{"decode",/p' "$root/src/kernels/gemm_config.c" |
  grep -oE '\{ *[0-9]+, *[0-9]+, *[0-9]+ *\}' | tr -d '{},' > "$work/shapes.txt"
nshapes=$(wc -l < "$work/shapes.txt")
if [ "$nshapes" -lt 1 ]; then
  echo "mlir-prelower: found no llm shape set in $root/src/kernels/gemm_config.c (has it moved?)" >&2
  exit 2
fi
: > "$work/gemm.txt"
for t in bf16 e4m3; do
  while read -r m n k; do echo "$m $n $k --type $t --backend mlir" >> "$work/gemm.txt"; done < "$work/shapes.txt"
done
# scripts/gpu-check.sh's mlir(): its `$H gemm ...` commands, less the GPU-only switches (the
# kernel does not depend on them).
# shellcheck disable=SC2016 # a literal $H: the text of gpu-check.sh's commands
sed -n '/^mlir() {/,/^}/p' "$root/scripts/gpu-check.sh" | grep -oE '\$H gemm [^&";]*' |
  sed -E 's/^\$H gemm //; s/ --(check|bench)\b//g; s/ --(iters|warmup|seed|json) [^ ]+//g' \
    >> "$work/gemm.txt"
if grep -q -- '--tune' "$work/gemm.txt"; then
  echo "mlir-prelower: scripts/gpu-check.sh's mlir() tunes a GEMM: a tuned configuration is picked on the GPU and cannot be lowered ahead of time" >&2
fi

# gemm_pass: every GEMM line, $jobs at a time; each one's output in its own log.
gemm_pass() {
  local i=0 rc=0
  while read -r line; do
    i=$((i + 1))
    echo "$i $line"
  done < "$work/gemm.txt" > "$work/gemm-numbered.txt"
  # shellcheck disable=SC2016
  xargs -P "$jobs" -L 1 bash -c 'n=$1; shift; "$0" gemm "$@" > "'"$work"'/gemm-$n.log" 2>&1 || { echo "  FAILED: hopgen gemm $*"; sed "s/^/    /" "'"$work"'/gemm-$n.log" | tail -3; exit 1; }' "$H" \
    < "$work/gemm-numbered.txt" || rc=1
  echo "  gemm: $(grep -l '^kernel ' "$work"/gemm-*.log | wc -l) of $(wc -l < "$work/gemm.txt") generated ($nshapes shapes x bf16, e4m3; gpu-check.sh's mlir())"
  return $rc
}

echo "lowering into $DIR with $tool ($jobs at a time)"
tma_pass || failures=$((failures + 1))
gemm_pass || failures=$((failures + 1))
lowered=$(($(date +%s) - t0))

# ---------------------------------------------------------------- every kernel from the cache
echo "checking that every kernel now comes from the cache (HOPGEN_MLIR_OPT=/nonexistent)"
rm -f "$work"/tma-part-*.log "$work"/gemm-*.log
export HOPGEN_MLIR_OPT=/nonexistent-hopgen-prelower/mlir-opt-22
tma_pass --no-ptxas || failures=$((failures + 1))
gemm_pass || failures=$((failures + 1))
unset HOPGEN_MLIR_OPT

after=$(entries)
bytes=$(find "$DIR" -maxdepth 1 -name 'mlir-*.ptx' -printf '%s\n' | awk '{s += $1} END {print s + 0}')
echo "mlir-prelower: wrote $((after - before)) new entries ($after MLIR lowerings in all, $((bytes / 1024)) KiB of entries; the directory: $(du -sh "$DIR" | cut -f1)) in ${lowered} s + check $(($(date +%s) - t0 - lowered)) s: $DIR"
if [ "$bytes" -gt $((20 * 1024 * 1024)) ]; then
  echo "mlir-prelower: the entries take more than 20 MiB: too much to carry comfortably" >&2
  failures=$((failures + 1))
fi
[ "$failures" -eq 0 ]
