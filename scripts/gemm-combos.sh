#!/usr/bin/env bash
# The four mainloop combinations (issue 9) checked on the GPU against the f32 reference on
# awkward shapes and odd leading dimensions, every layout, bf16 and f16:
#   scripts/gemm-combos.sh HOPGEN [quick]
# Prints one line per case and a summary; exits non-zero when any case fails.
set -u
H=${1:?usage: gemm-combos.sh path/to/hopgen [quick]}
quick=${2:-}
fails=0; runs=0
run() { # run ARGS...: one --check, one line of output
  runs=$((runs+1))
  if out=$("$H" gemm "$@" --check 2>&1); then
    echo "ok   $* :: $(echo "$out" | grep -o 'rel. error [0-9.e-]*' | head -1) $(echo "$out" | grep -o 'kernel [A-Za-z0-9_]*' | head -1)"
  else
    fails=$((fails+1)); echo "FAIL $* :: $(echo "$out" | tail -3 | tr '\n' ' ')"
  fi
}
mls="tma-wgmma cpasync-wgmma tma-mmasync tma-ldmatrix-wgmma-rs"
shapes=("1 1 1" "7 7 7" "127 1000 4097" "4097 127 1000" "1000 4097 7" "1 4097 127" "1000 1000 1000")
[ "$quick" = quick ] && shapes=("127 1000 4097" "1000 1000 1000")
for ml in $mls; do
  for mnk in "${shapes[@]}"; do
    for lay in RC CR RR CC; do run $mnk --layout $lay --mainloop $ml; done
  done
  run 1000 1000 1000 --type f16 --d f32 --mainloop $ml
  # odd leading dimensions (2-byte aligned rows) and a batch with beta
  run 300 200 100 --lda 105 --ldb 111 --ldd 203 --ldc 207 --beta 1 --mainloop $ml
  run 256 320 192 --layout CC --lda 261 --ldb 333 --mainloop $ml
  run 500 300 200 --batch 3 --beta 0.5 --mainloop $ml
  # 8- and 4-byte aligned rows through cp.async chunks of that size
  run 512 512 516 --mainloop $ml
  run 512 512 260 --layout RR --ldb 516 --mainloop $ml
  # ping-pong and a 64-row tile
  run 1000 1000 1000 --config 128x128x64,c1x1,s4,pp --mainloop $ml
  run 1000 1000 1000 --config 64x128x64,c1x1,s4 --mainloop $ml
done
# fp8 through cp.async (K not a multiple of 16 bytes) and TMA
run 1000 1000 1001 --type e4m3 --mainloop cpasync-wgmma
run 1000 1000 1000 --type e4m3 --mainloop cpasync-wgmma
run 1000 1000 1004 --type e4m3
echo "combos: $runs runs, $fails failed"
[ "$fails" = 0 ]
