#!/usr/bin/env bash
# The decode kernel (mainloop ldg-mmasync, src/kernels/gemm_decode.c) on the GPU: --check
# (f32 reference, D poisoned) over M in 1, 2, 7, 16 x the decode and odd shapes, packed and
# with odd leading dimensions (rows of every alignment), bf16 and f16, split and not, and a
# few epilogue chains; then bench: the decode set with and without --heuristic dv, and the
# M <= 16 shapes of the odd set on ldg-mmasync against cuBLASLt (bw_frac: the fraction of the
# device-to-device copy bandwidth; x: hopgen's time over cuBLASLt's inverted, > 1 faster).
#   scripts/gemm-decode.sh path/to/hopgen [check|bench|all] [table-file]
set -u
H=${1:?usage: gemm-decode.sh path/to/hopgen [check|bench|all] [table-file]}
what=${2:-all}
table=${3:-/dev/null}
fails=0; runs=0
. "$(dirname "$0")/gemm-check-lib.sh" # run
ML="--mainloop ldg-mmasync"
if [ "$what" != bench ]; then
  for m in 1 2 7 16; do
    for nk in "7168 2048" "2048 7168" "12345 678" "7168 2049" "4097 127" "1 1" "300 4097"; do
      set -- $nk
      run $m $1 $2 $ML
      run $m $1 $2 $ML --type f16 --lda $(( $2 + 3 )) --ldb $(( $2 + 1 ))
      run $m $1 $2 $ML --ldb $(( $2 + 4 )) --config 16x32x32,k3a,ldg-mmasync
    done
  done
  # epilogue chains through the GEMM's own epilogue
  run 3 7168 2048 $ML --epilogue bias,gelu
  run 16 4097 127 $ML --ldb 131 --epilogue bias,gelu --beta 0.5
  run 5 7168 2049 $ML --d e4m3 --amax
  run 16 2048 7168 $ML --d e4m3 --amax --config 16x32x96,k4a,ldg-mmasync
  run 9 12345 678 $ML --ldb 679 --epilogue residual
  run 12 2048 7168 $ML --epilogue bias_m,silu --d f32 --beta 0.25
  run 1 7168 2048 $ML --epilogue rowscale,colscale,bias,relu --config 16x64x32,ldg-mmasync
  run 8 3000 1000 $ML --epilogue gelu --aux --config 16x16x128,k2a,ldg-mmasync
  run 4 2048 7168 $ML --deterministic
  run 16 7168 2048 $ML --backend mlir
  # s2: the full iterations pipelined in registers
  run 1 4096 28672 --config 16x32x96,s2,k2a,ldg-mmasync
  run 16 28672 4096 --config 16x32x96,s2,ldg-mmasync --epilogue bias,gelu
  run 7 12345 678 --config 16x32x32,s2,ldg-mmasync --ldb 679
  run 2 7168 2049 --config 16x16x64,s2,k3a,ldg-mmasync --type f16
  run 16 4096 28672 --config 16x32x64,s2,k2a,ldg-mmasync --type e4m3
  # fp8 (m16n8k32): mixes, row-wise scales, fast accumulation, odd rows, split
  for m in 1 16; do
    run $m 7168 2048 $ML --type e4m3
    run $m 2048 7168 $ML --a e4m3 --b e5m2 --scale row
    run $m 12345 677 $ML --type e5m2 --fp8-accum fast --d e4m3 --amax
    run $m 4097 127 $ML --type e4m3 --ldb 131 --epilogue bias,gelu
    run $m 7168 2049 $ML --a e5m2 --b e4m3 --config 16x16x128,k3a,ldg-mmasync --epilogue residual
  done
  echo "decode checks: $runs runs, $fails failed"
fi
if [ "$what" != check ]; then
  {
    echo "== decode set, default heuristic"
    "$H" bench gemm --set decode --types bf16,e4m3 --iters 20
    echo "== decode set, --heuristic dv"
    "$H" bench gemm --set decode --types bf16,e4m3 --iters 20 --heuristic dv
    echo "== the big weights: plain loop (s1, the heuristic's) against pipelined in registers (s2)"
    for s in "1 28672 4096" "8 28672 4096" "1 4096 28672" "8 4096 28672"; do
      for st in s1 s2; do
        set -- $s
        cfg=$("$H" gemm $s --mainloop ldg-mmasync 2>&1 | grep -o '16x[0-9x]*,c1x1,s1[^ ]*' | head -1 | sed 's/,$//')
        echo "-- $s ${cfg/,s1,/,$st,}"
        "$H" gemm $s --config "${cfg/,s1,/,$st,}" --bench --iters 20 2>&1 | grep -E '  bench|  memory' | head -2
      done
    done
    echo "== odd shapes M <= 16 on ldg-mmasync (hopgen vs cuBLASLt, same process)"
    for s in "1 12345 678" "1 7168 2049" "16 4097 127" "1 1 1" "7 300 4097" "16 7168 2049" \
             "1 7168 2048 --type e4m3" "16 2048 7168 --type e4m3" "1 12345 677 --type e4m3"; do
      echo "-- $s"
      "$H" gemm $s $ML --bench --iters 20 2>&1 | grep -E '^kernel|  bench|  memory' | head -4
    done
  } | tee "$table"
fi
[ "$fails" = 0 ]
