#!/usr/bin/env bash
# Operands TMA cannot address (issue 9 item 3, issue 10 item 3) on the GPU:
#   scripts/gemm-unaligned.sh HOPGEN check   --check (f32 reference, D poisoned) on M, N, K
#                                            among 1, 7, 127, 1000, 4097 with odd K and odd
#                                            lda/ldb, bf16, f16 (every layout) and e4m3
#                                            (K-major), AUTO and cpasync-wgmma
#   scripts/gemm-unaligned.sh HOPGEN repack  the repack kernel alone against the D2D copy
#   scripts/gemm-unaligned.sh HOPGEN bench   bench gemm --set unaligned and --set odd, both
#                                            with --compare-repack (JSON to $OUT when set)
# Prints one line per case and a summary; exits non-zero when any case fails.
set -u
H=${1:?usage: gemm-unaligned.sh path/to/hopgen check|repack|bench}
mode=${2:-check}
fails=0; runs=0
run() { # run ARGS...: one --check, one line of output
  runs=$((runs+1))
  if out=$("$H" gemm "$@" --check 2>&1); then
    echo "ok   $* :: $(echo "$out" | grep -o 'rel. error [0-9.e-]*' | head -1) $(echo "$out" | grep -oE '(repacked|read by|read with)[^.;]*' | head -2 | tr '\n' ' ')"
  else
    fails=$((fails+1)); echo "FAIL $* :: $(echo "$out" | tail -3 | tr '\n' ' ')"
  fi
}
check() {
  local shapes=("1 1 1" "7 7 7" "1 4097 127" "127 1000 4097" "4097 127 1000" "1000 4097 7"
    "7 127 4097" "4097 4097 1000")
  for ml in auto cpasync-wgmma; do
    local m=()
    [ "$ml" = auto ] || m=(--mainloop "$ml")
    for mnk in "${shapes[@]}"; do
      set -- $mnk
      for lay in RC CR RR CC; do run "$1" "$2" "$3" --layout $lay "${m[@]}"; done
      run "$1" "$2" "$3" --type f16 "${m[@]}"
      run "$1" "$2" "$3" --type f16 --layout CR "${m[@]}"
      run "$1" "$2" "$3" --type e4m3 "${m[@]}"
      # odd leading dimensions on top (K-major A and B: lda, ldb >= K; MN-major: >= M, N)
      run "$1" "$2" "$3" --layout CC --lda $(($1 + 1)) --ldb $(($3 + 5)) "${m[@]}"
      run "$1" "$2" "$3" --type e4m3 --lda $(($3 + 1)) --ldb $(($3 + 7)) "${m[@]}"
    done
    # a batch, beta, and a 1-byte-aligned fp8 row
    run 300 200 1001 --batch 3 --beta 0.5 "${m[@]}"
    run 1000 1000 1001 --type e4m3 --batch 2 "${m[@]}"
  done
  echo "== unaligned checks: $runs runs, $fails failed"
}
repack() {
  for args in "4096 4097" "4096 4097 --offset 1" "8192 8191" "12345 678" "4097 4096 --ld 4099" \
    "4096 4097 --type e4m3 --offset 3" "2048 2049 --batch 4"; do
    runs=$((runs+1))
    # shellcheck disable=SC2086
    if out=$("$H" bench repack $args 2>&1); then
      echo "ok   repack $args :: $(echo "$out" | grep -E '^  (repack|D2D|ratio)' | tr -s ' ' | tr '\n' ' ')"
    else
      fails=$((fails+1)); echo "FAIL repack $args :: $(echo "$out" | tail -2 | tr '\n' ' ')"
    fi
  done
  echo "== repack benches: $runs runs, $fails failed"
}
bench() {
  local j=()
  for set in unaligned odd; do
    [ -n "${OUT:-}" ] && j=(--json "$OUT/gemm-$set-compare.json")
    runs=$((runs+1))
    "$H" bench gemm --set $set --compare-repack "${j[@]}" || fails=$((fails+1))
  done
}
case "$mode" in
  check) check ;;
  repack) repack ;;
  bench) bench ;;
  *) echo "unknown mode $mode (check, repack, bench)"; exit 2 ;;
esac
[ "$fails" -eq 0 ]
