#!/usr/bin/env bash
# Every program in examples/ runs and exits 0: the GEMM examples build their kernels with the
# builder API (through the PTX printer, and through MLIR when mlir-opt-22 is there), name the
# instructions their combination must contain, pass ptxas, and - without a GPU - say that the
# GPU part was skipped (with one, their check against the host reference must print PASS);
# the layout tutorial matches CuTe's results; the TMA tutorials still run.
# The examples are built next to the CLI (example_<name>).
set -u
cli=${1:?usage: examples.sh PATH_TO_HOPGEN}
bin=$(dirname "$cli")
# shellcheck source=tests/cli/cli_test.bash
. "$(dirname "$0")/cli_test.bash"
if ! command -v ptxas > /dev/null && [ ! -x /usr/local/cuda/bin/ptxas ]; then
  echo "SKIP: ptxas not found"
  exit 77
fi

# run NAME [ARGS...] -- FRAGMENT...: example_NAME exits 0 and prints every FRAGMENT; @GPU
# stands for the GPU part's last word ("the GPU part is skipped", or the check's PASS).
run() {
  local name=$1
  shift
  local args=()
  while [ "$1" != -- ]; do args+=("$1"); shift; done
  shift
  local exe=$bin/example_$name
  if [ ! -x "$exe" ]; then fail "$exe is not built"; return; fi
  if ! "$exe" "${args[@]}" > "$tmp/out" 2>&1; then
    fail "example_$name ${args[*]} exited non-zero: $(tail -5 "$tmp/out")"
    return
  fi
  for frag in "$@"; do
    if [ "$frag" = @GPU ]; then # the GPU part: skipped without a GPU, else the check's verdict
      grep -qE "the GPU part is skipped|: PASS$" "$tmp/out" && continue
    elif grep -qF -- "$frag" "$tmp/out"; then
      continue
    fi
    fail "example_$name ${args[*]} printed no '$frag': $(head -c 800 "$tmp/out")"
    return
  done
  pass
}

gpu=@GPU
run gemm_tma_wgmma -- "ptxas -arch=sm_90a: ok" "wgmma.mma_async" "stmatrix" "$gpu"
run gemm_cpasync_wgmma -- "ptxas -arch=sm_90a: ok" "cp.async chunks of 8 and 8 bytes" "$gpu"
run gemm_tma_mmasync -- "ptxas -arch=sm_90a: ok" "mma.sync.aligned.m16n8k16" "$gpu"
run gemm_tma_ldmatrix_wgmma_rs -- "ptxas -arch=sm_90a: ok" "m8n8.x4.trans" "$gpu"
run layout_algebra -- "every result matches CuTe's"
run tma_load --
run tma_multicast --
run tma_prefetch --

# The same kernels through the MLIR backend (where the MLIR tools are installed).
if command -v mlir-opt-22 > /dev/null || [ -n "${HOPGEN_MLIR_OPT:-}" ]; then
  for name in gemm_tma_wgmma gemm_cpasync_wgmma gemm_tma_mmasync gemm_tma_ldmatrix_wgmma_rs; do
    run "$name" --mlir -- "ptxas -arch=sm_90a: ok" "$gpu"
  done
fi

echo "examples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
