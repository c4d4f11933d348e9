#!/usr/bin/env bash
# The grouped GEMM for mixture-of-experts layers on the GPU (issue 11): both layouts, bf16 and
# e4m3 with per-expert B scales, even, uneven and empty experts, against an f32 reference per
# expert with D poisoned and the rows outside every expert verified untouched (--check); then
# the MoE set timed beside cuBLASLt (one GEMM per expert on one stream).
#   scripts/gemm-grouped.sh path/to/hopgen [check|bench|all]
set -u
H=${1:?usage: gemm-grouped.sh path/to/hopgen [check|bench|all]}
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
if [ "$what" != bench ]; then
  for layout in "" --masked; do
    for t in bf16 e4m3; do
      run --experts 8 --tokens 512 --n 1024 --k 2048 --type $t $layout
      run --experts 16 --tokens 200 --uneven 7 --n 1536 --k 2048 --type $t $layout
      run --experts 5 --tokens-per-expert 0,1,129,0,700 --n 520 --k 1024 --type $t $layout
      run --experts 64 --tokens 64 --uneven 3 --n 2048 --k 512 --type $t $layout --d f32
      run --experts 3 --tokens-per-expert 0,0,0 --n 256 --k 256 --type $t $layout
    done
    # each schedule and cluster shape the heuristic does not pick on its own
    run --experts 8 --tokens 300 --uneven 5 --n 1024 --k 1024 --config 128x128x64,c1x1,s5,pp,m8 $layout
    run --experts 8 --tokens 300 --uneven 5 --n 1024 --k 1024 --config 128x256x64,c2x1,s4,m4 $layout
    run --experts 8 --tokens 300 --uneven 5 --n 1024 --k 1024 --config 64x128x64,c1x2,s6,n2 $layout
    run --experts 8 --tokens 300 --uneven 5 --n 1024 --k 1024 --type e4m3 --config 128x128x128,c2x1,s5,pp $layout
  done
  echo "grouped check: $((runs-fails)) of $runs passed"
fi
if [ "$what" != check ]; then
  "$H" bench grouped-gemm --set moe || fails=$((fails+1))
  "$H" bench grouped-gemm --set moe --masked || fails=$((fails+1))
  "$H" bench grouped-gemm --set moe --type bf16 --uneven 11 || fails=$((fails+1))
fi
[ "$fails" -eq 0 ]
