#!/usr/bin/env bash
# The grouped GEMM for mixture-of-experts layers on the GPU (issue 11): both layouts, bf16 and
# e4m3 with per-expert B scales, even, uneven and empty experts, against an f32 reference per
# expert with D poisoned and the rows outside every expert verified untouched (--check); then
# the MoE set timed beside cuBLASLt (one GEMM per expert on one stream).
# block-check / block-bench: fp8 block-wise scales (1x128 A, 128x128 B per expert) alone: the
# checks (both layouts, staged and direct scales, empty and very unequal experts, K and N not
# multiples of 128), then the MoE set beside cuBLASLt's block-scaled GEMM per expert, with a
# table of lines "GB|shape|layout|hopgen ms|cuBLASLt ms|ratio|rel_err" last.
# sweep: each MoE shape under a few configurations besides the heuristic's (the heuristic is
# the dense GEMM's, fed the mean rows per expert: where another wins, it is what to change).
#   scripts/gemm-grouped.sh path/to/hopgen [check|bench|all|sweep|block-check|block-bench]
set -u
H=${1:?usage: gemm-grouped.sh path/to/hopgen [check|bench|all|sweep|block-check|block-bench]}
what=${2:-all}
fails=0; runs=0
run() {
  runs=$((runs+1))
  if out=$("$H" grouped-gemm "$@" --check 2>&1); then
    echo "ok   $* :: $(echo "$out" | grep -o 'relative error [0-9.e+-]*' | head -1)"
  else
    fails=$((fails+1)); echo "FAIL $* :: $(echo "$out" | tail -3 | tr '\n' ' ')"
  fi
}
block_checks() {
  for layout in "" --masked; do
    # the heuristic's (staged scales where both operands come by TMA) and the global loads
    for cfg in "" "--config 128x128x128,c1x1,s5" "--config 128x128x128,c2x1,s4,bs" \
               "--config 64x128x128,c1x1,s6,pp" "--config 128x64x128,c1x2,s6,bs"; do
      # shellcheck disable=SC2086
      run --experts 8 --tokens 512 --n 1024 --k 2048 --type e4m3 --scale block $layout $cfg
    done
    run --experts 6 --tokens-per-expert 0,1,4097,130,0,64 --n 1536 --k 2048 --type e4m3 --scale block $layout
    run --experts 6 --tokens-per-expert 0,1,4097,130,0,64 --n 1000 --k 2000 --type e4m3 --scale block $layout --d f32
    run --experts 16 --tokens 200 --uneven 7 --n 520 --k 1040 --type e4m3 --scale block $layout
    run --experts 64 --tokens 64 --uneven 3 --n 2048 --k 7168 --type e4m3 --scale block $layout
    run --experts 3 --tokens-per-expert 0,0,0 --n 256 --k 256 --type e4m3 --scale block $layout
    run --experts 4 --tokens 300 --n 384 --k 384 --type e5m2 --scale block $layout --d f16
  done
  echo "grouped block-wise check: $((runs-fails)) of $runs passed"
}
block_bench() {
  for layout in "" --masked; do
    for u in "" "--uneven 11"; do
      # shellcheck disable=SC2086
      out=$("$H" bench grouped-gemm --set moe --type e4m3 --scale block $layout $u 2>&1) ||
        fails=$((fails+1))
      echo "$out"
      # e4m3 EXPxTOK, N, K layout hopgen cuBLASLt TFLOP/s ratio rel_err
      echo "$out" | awk -v lay="${layout:-contiguous}${u:+ uneven}" '$1 == "e4m3" {
          printf "GB|%s %s %s|%s|%s|%s|%s|%s\n", $2, $3, $4, lay, $6, $7, $9, $10 }'
    done
  done
}
if [ "$what" = block-check ]; then block_checks; [ "$fails" -eq 0 ]; exit; fi
if [ "$what" = block-bench ]; then block_bench 2>&1; [ "$fails" -eq 0 ]; exit; fi
if [ "$what" = sweep ]; then
  for t in bf16 e4m3; do
    if [ $t = bf16 ]; then kt=64; else kt=128; fi
    for shape in "8 4096 4096 7168" "32 512 4096 7168" "128 128 1536 2048" "256 64 2048 7168"; do
      set -- $shape
      for cfg in heuristic 128x256x${kt},c2x1 128x256x${kt},c1x1 128x128x${kt},c1x1,pp \
                 128x128x${kt},c2x1,pp 64x256x${kt},c1x1 64x128x${kt},c1x1,pp 128x192x${kt},c1x1; do
        c=(); [ $cfg = heuristic ] || c=(--config "$cfg")
        out=$("$H" grouped-gemm --experts $1 --tokens $2 --n $3 --k $4 --type $t --bench "${c[@]}" 2>&1)
        printf '%-5s %4sx%-5s %5s %5s  %-26s %s\n' $t $1 $2 $3 $4 "$cfg" \
          "$(echo "$out" | grep -E 'bench:|hopgen: ' | tr '\n' ' ' | cut -c1-150)"
      done
    done
  done
  exit 0
fi
if [ "$what" != bench ]; then
  for layout in "" --masked; do
    for t in bf16 e4m3; do
      run --experts 8 --tokens 512 --n 1024 --k 2048 --type $t $layout
      run --experts 16 --tokens 200 --uneven 7 --n 1536 --k 2048 --type $t $layout
      run --experts 5 --tokens-per-expert 0,1,129,0,700 --n 520 --k 1024 --type $t $layout
      run --experts 64 --tokens 64 --uneven 3 --n 2048 --k 512 --type $t $layout --d f32
      run --experts 3 --tokens-per-expert 0,0,0 --n 256 --k 256 --type $t $layout
    done
    # fp8 row-wise: a scale per token and one per expert and column
    run --experts 16 --tokens 200 --uneven 7 --n 1536 --k 2048 --type e4m3 --scale row $layout
    run --experts 5 --tokens-per-expert 0,1,129,0,700 --n 520 --k 1024 --type e4m3 --scale row $layout --d f32
    # fp8 block-wise: 1x128 A scales, 128x128 per expert for B (block-check has more)
    run --experts 6 --tokens-per-expert 0,1,4097,130,0,64 --n 1000 --k 2000 --type e4m3 --scale block $layout
    # each schedule and cluster shape the heuristic does not pick on its own
    run --experts 8 --tokens 300 --uneven 5 --n 1024 --k 1024 --config 128x128x64,c1x1,s5,pp,m8 $layout
    run --experts 8 --tokens 300 --uneven 5 --n 1024 --k 1024 --config 128x256x64,c2x1,s4,m4 $layout
    run --experts 8 --tokens 300 --uneven 5 --n 1024 --k 1024 --config 64x128x64,c1x2,s6,n2 $layout
    run --experts 8 --tokens 300 --uneven 5 --n 1024 --k 1024 --type e4m3 --fp8-accum fast --config 128x128x128,c2x1,s5,pp $layout
    run --experts 8 --tokens 300 --uneven 5 --n 1024 --k 1024 --type e4m3 --config 128x128x128,c2x1,s5 $layout
  done
  echo "grouped check: $((runs-fails)) of $runs passed"
fi
if [ "$what" != check ]; then
  "$H" bench grouped-gemm --set moe || fails=$((fails+1))
  "$H" bench grouped-gemm --set moe --masked || fails=$((fails+1))
  "$H" bench grouped-gemm --set moe --type bf16 --uneven 11 || fails=$((fails+1))
  "$H" bench grouped-gemm --set moe --type e4m3 --scale row || fails=$((fails+1))
  "$H" bench grouped-gemm --set moe --type e4m3 --scale block || fails=$((fails+1))
fi
[ "$fails" -eq 0 ]
