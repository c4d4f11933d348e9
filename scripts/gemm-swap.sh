#!/usr/bin/env bash
# A and B swapped (config ,sw: the kernel runs D^T = B A^T and stores D transposed) on the GPU:
#   scripts/gemm-swap.sh HOPGEN check   --check (f32 reference, D poisoned) over ragged M,
#                                       epilogue chains, C, batches, fp8 per tensor and
#                                       row-wise, split-K (pass and atomics), stream-K,
#                                       unaligned operands (repacked)
#   scripts/gemm-swap.sh HOPGEN bench   shapes whose M wastes 128-row tiles, each under the
#                                       heuristic and under ,sw tiles (M in wgmma's N),
#                                       cuBLASLt beside each, twice, alternated
# Prints one line per case and a summary; exits non-zero when a check fails.
set -uo pipefail
H=${1:?usage: gemm-swap.sh path/to/hopgen [check|bench]}
what=${2:-check}
fails=0; runs=0
# shellcheck disable=SC1091 # run (reads H), counting in runs and fails
. "$(dirname "$0")/gemm-check-lib.sh"
if [ "$what" = check ]; then
  run 400 4000 4096 --config 128x112x64,c1x1,s6,sw
  run 400 4000 4096 --config 128x112x64,c2x1,s6,sw --epilogue bias,gelu --amax --beta 0.5
  run 400 4000 4096 --config 128x208x64,c1x1,s4,sw --epilogue bias_m,relu
  run 100 200 65 --config 64x112x64,c1x1,s6,sw
  run 1 4097 127 --config 128x16x64,c1x1,s6,sw
  run 333 555 777 --config 128x112x64,c1x1,s6,sw --batch 3 --beta -1 --layout CC
  run 300 3000 8192 --config 128x160x64,c1x1,s5,k2,sw
  run 300 3000 8192 --config 128x160x64,c1x1,s5,k3a,sw
  run 600 2400 4096 --config 128x160x64,c1x1,s5,sk,sw
  run 400 4000 4096 --type e4m3 --config 128x112x128,c1x1,s5,sw
  run 400 4000 4096 --type e4m3 --scale row --config 128x112x128,c1x1,s5,sw --d e4m3 --amax
  run 257 1000 3000 --config 128x96x64,c1x1,s6,sw --epilogue residual --d f32
  run 400 4000 4096 --config 128x112x64,c1x1,s4,pp,sw --epilogue bias,relu
  echo "swap checks: $runs runs, $fails failed"
  [ "$fails" -eq 0 ]
else
  while read -r m n k t cfg; do
    for _ in 1 2; do
      for c in default "$cfg"; do
        if [ "$c" = default ]; then a=(); else a=(--config "$c"); fi
        echo "$t $m $n $k ${c}: $("$H" gemm "$m" "$n" "$k" --type "$t" "${a[@]}" --bench --iters 30 2>&1 |
          grep -E 'bench' | sed 's/  */ /g' | cut -c1-150)"
      done
    done
  done << 'LIST'
400 4000 4096 bf16 128x112x64,c1x1,s6,sw
400 4000 4096 bf16 128x112x64,c2x1,s6,sw
400 4000 4096 e4m3 128x112x128,c1x1,s5,sw
300 3000 8192 e4m3 128x160x128,c1x1,s4,k2,sw
200 2000 16384 bf16 128x208x64,c1x1,s4,k8,sw
600 2400 12000 bf16 128x160x64,c1x1,s5,sw
1000 1000 8192 bf16 128x112x64,c1x1,s6,sw
LIST
fi
