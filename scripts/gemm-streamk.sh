#!/usr/bin/env bash
# Stream-K on the GPU (issue 10 item 1): correctness against the f32 reference (D poisoned
# first by --check) on the splitk and waves sets and awkward shapes, bf16 and fp8, schedules,
# clusters, mainloops, beta * C and epilogue chains; determinism over 10 runs; compute-
# sanitizer memcheck and racecheck on small cases; then the splitk, waves and llm sets timed
# against cuBLASLt four ways: the heuristic, the heuristic with the stream-K rule
# (--heuristic sk), stream-K forced and split-K forced (--split-k $SPLITS), a table.
#   [SETS="waves splitk"] scripts/gemm-streamk.sh path/to/hopgen [check|determinism|sanitize|bench|all] [TABLE_FILE]
set -u
H=${1:?usage: gemm-streamk.sh path/to/hopgen [check|determinism|sanitize|bench|all] [TABLE_FILE]}
what=${2:-all}
table=${3:-/dev/stdout}
SPLITS=${SPLITS:-4}
# a CTA that waits for a partial no one writes would hang the GPU: every run is bounded
T=${SK_TIMEOUT:-120}
fails=0; runs=0
RUN_SHOW='grid [0-9]*'
. "$(dirname "$0")/gemm-check-lib.sh" # run, sanitize
if [ "$what" = check ] || [ "$what" = all ]; then
  # the waves and splitk sets, bf16 and fp8 (accurate), the heuristic's tiles with stream-K
  for mnk in "2500 3500 1000" "1536 6000 900" "3300 3300 3300" "16896 256 512" \
             "128 128 32768" "512 512 16384" "64 1024 65536" "192 320 40000"; do
    run $mnk --stream-k
    run $mnk --stream-k --type e4m3
  done
  # awkward sizes (1, 7, 127, 1000, 4097) with long K
  for mnk in "1 4097 8192" "7 1000 16384" "127 4097 4096" "1000 127 8192" "4097 1000 4097" \
             "1000 4097 7" "1 1 1" "7 7 7"; do
    run $mnk --stream-k
  done
  run 127 1000 4097 --stream-k --type e4m3
  run 4097 1000 4097 --stream-k --type e4m3 --fp8-accum fast
  # schedules, clusters, mainloops, batches, beta * C, the epilogue once per tile
  run 2500 3500 1000 --config 128x128x64,pp,sk --beta 0.5
  run 2500 3500 1000 --config 128x256x64,c2x1,sk --beta -1 --alpha 2
  run 1536 6000 900 --config 128x128x64,c1x2,sk
  run 1000 1000 4096 --config 128x128x64,sk,tma-mmasync
  run 1000 1000 4096 --config 128x192x64,sk,tma-ldmatrix-wgmma-rs
  run 1001 999 4097 --config 128x128x64,s3,sk,cpasync-wgmma
  run 500 300 6000 --batch 3 --beta 0.5 --config 128x128x64,sk
  run 300 520 9000 --config 128x128x64,sk --epilogue rowscale,colscale,bias,gelu,residual --beta 0.5
  run 777 1000 20000 --config 128x128x64,pp,sk --epilogue bias_m,silu --d f32
  run 2500 3500 1000 --stream-k --epilogue bias,relu --amax
  run 3300 3300 3328 --type e4m3 --config 128x128x128,c2x1,sk --epilogue bias,gelu_tanh
  run 2048 2112 7168 --type e4m3 --scale block --config 128x128x128,sk
  run 2048 2112 7168 --type e4m3 --scale row --stream-k --d e4m3 --amax
  # more CTAs than k-blocks to share (each CTA one k-block: many contributors per tile)
  run 256 256 2048 --config 128x128x64,sk
  run 128 128 512 --config 128x128x64,pp,sk
  echo "stream-K checks: $runs runs, $fails failed"
fi
if [ "$what" = determinism ] || [ "$what" = all ]; then
  # --deterministic --check: 10 launches into poisoned D, each bit for bit the first's
  for a in "2500 3500 1000 --stream-k" "128 128 32768 --stream-k" "3300 3300 3328 --type e4m3 --stream-k" \
           "256 256 2048 --config 128x128x64,sk" "192 320 40000 --split-k 8"; do
    runs=$((runs+1))
    if out=$(timeout "$T" "$H" gemm $a --check --deterministic 2>&1) && echo "$out" | grep -q 'identical over 9 more'; then
      echo "ok   $a :: $(echo "$out" | grep -o 'bits.*' | head -1)"
    else fails=$((fails+1)); echo "FAIL $a :: $(echo "$out" | tail -3 | tr '\n' ' ')"; fi
  done
fi
if [ "$what" = sanitize ] || [ "$what" = all ]; then
  sanitize "256 256 2048 --config 128x128x64,sk" "300 200 3000 --config 128x128x64,pp,sk --beta 0.5"
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  ratio() { # the ratio cuBLASLt time / hopgen time of one --bench run, and its config
    local j; j=$(timeout "$T" "$@" --bench --iters 30 --json 2>/dev/null)
    printf '%s %s' "$(echo "$j" | grep -o '"ratio": [0-9.e+-]*' | head -1 | cut -d' ' -f2)" \
      "$(echo "$j" | grep -o '"config": "[^"]*"' | head -1 | cut -d'"' -f4)"
  }
  {
    printf '%-6s %-22s %8s %8s %8s %8s   %s\n' type "M N K" heur rule sk "k$SPLITS" "heuristic's config"
    for set in ${SETS:-splitk waves llm}; do
      case $set in
        splitk) shapes=("128 128 32768" "512 512 16384" "64 1024 65536" "192 320 40000") ;;
        waves) shapes=("2500 3500 1000" "1536 6000 900" "3300 3300 3300" "16896 256 512") ;;
        llm) shapes=("2048 2048 2048" "4096 4096 4096" "8192 8192 8192" "16384 16384 16384" \
                     "8192 28672 8192" "8192 8192 28672" "4096 7168 2048" "4096 2112 7168" \
                     "4096 24576 1536" "4096 7168 16384" "128 7168 2048" "128 24576 1536" \
                     "64 7168 16384") ;;
      esac
      types="bf16"; [ $set = waves ] && types="bf16 e4m3"
      for t in $types; do
        for mnk in "${shapes[@]}"; do
          read -r h hc <<< "$(ratio "$H" gemm $mnk --type $t)"
          read -r r _ <<< "$(ratio "$H" gemm $mnk --type $t --heuristic sk)"
          read -r s _ <<< "$(ratio "$H" gemm $mnk --type $t --stream-k)"
          read -r k _ <<< "$(ratio "$H" gemm $mnk --type $t --split-k $SPLITS)"
          printf '%-6s %-22s %8s %8s %8s %8s   %s\n' $t "$mnk" "${h:--}" "${r:--}" "${s:--}" "${k:--}" "$hc"
        done
      done
    done
    echo "(ratio = cuBLASLt time / hopgen time, same process; rule = --heuristic sk)"
  } | tee "$table"
fi
[ "$fails" -eq 0 ]
