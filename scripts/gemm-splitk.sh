#!/usr/bin/env bash
# Split-K on the GPU (issue 10): correctness of the last-CTA reduction against the f32
# reference (D poisoned first by --check) across schedules, clusters, mainloops, batches
# with beta, fewer k-blocks than splits and fp8; then the splitk shape set timed against
# cuBLASLt at several split counts, for the heuristic to learn from.
#   scripts/gemm-splitk.sh path/to/hopgen [check|bench|all]
set -u
H=${1:?usage: gemm-splitk.sh path/to/hopgen [check|bench|all]}
what=${2:-all}
fails=0; runs=0
run() { # one --check, one line
  runs=$((runs+1))
  if out=$("$H" gemm "$@" --check 2>&1); then
    echo "ok   $* :: $(echo "$out" | grep -o 'rel. error [0-9.e-]*' | head -1)"
  else
    fails=$((fails+1)); echo "FAIL $* :: $(echo "$out" | tail -3 | tr '\n' ' ')"
  fi
}
if [ "$what" != bench ]; then
  run 128 128 32768 --config 128x128x64,k8
  run 512 512 16384 --config 128x128x64,pp,k4
  run 64 1024 65536 --config 128x128x64,c1x2,k16
  run 192 320 40000 --config 128x64x64,k6 --beta 0.5
  run 300 200 100 --config 128x128x64,k8
  run 1000 1000 4097 --config 128x128x64,k3,cpasync-wgmma
  run 256 256 8192 --layout CC --config 128x128x64,pp,k4,tma-mmasync
  run 256 384 8192 --config 128x192x64,k4,tma-ldmatrix-wgmma-rs
  run 500 300 6000 --batch 3 --beta 0.5 --config 128x128x64,k5
  run 128 7168 16384 --type e4m3 --config 128x256x128,c2x1,k4
  run 1 4096 32768 --config 64x128x64,k32
  echo "split-K checks: $runs runs, $fails failed"
fi
if [ "$what" != check ]; then
  for mnk in "128 128 32768" "512 512 16384" "64 1024 65536" "192 320 40000"; do
    for cfg in 128x128x64 128x128x64,k4 128x128x64,k8 128x128x64,k16 64x128x64,k16; do
      echo "== $mnk $cfg"
      "$H" gemm $mnk --config $cfg --bench --iters 30 2>&1 | grep -E 'TFLOP|ratio|error' | head -3
    done
  done
fi
exit $((fails > 0))
