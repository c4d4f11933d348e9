#!/usr/bin/env bash
# fp8 GEMMs on the GPU (issue 11): accurate accumulation (partial sums promoted into f32 every
# N k-blocks, the default) and fast (the whole K in wgmma's fp8 accumulator); per-tensor,
# row-wise and block-wise scales; each checked against the f32 reference with cuBLASLt in the
# same mode beside it (--check prints both errors), then the accuracy table over K and the
# benchmarks against cuBLASLt in the same mode (the fp8block and fp8row sets).
# overlap: the accurate mode's promotions staggered between the two consumer warpgroups (",ps",
# the heuristic's choice on cooperative tiles) or with two partial sets (",pd", its choice with
# block scales) against the same tiles without, on the llm and fp8 shapes (tensor scales also
# on 128x128 coop tiles: plain, ps, pd), each checked and timed beside cuBLASLt in the same
# process, then a table.
#   scripts/gemm-fp8.sh path/to/hopgen [check|accuracy|bench|overlap|all]
set -u
H=${1:?usage: gemm-fp8.sh path/to/hopgen [check|accuracy|bench|overlap|all]}
what=${2:-all}
fails=0; runs=0
run() {
  runs=$((runs+1))
  if out=$("$H" gemm "$@" --check 2>&1); then
    echo "ok   $* :: $(echo "$out" | grep -E '^  check' | head -1 | sed 's/^ *//')"
  else
    fails=$((fails+1)); echo "FAIL $* :: $(echo "$out" | tail -3 | tr '\n' ' ')"
  fi
}
if [ "$what" = check ] || [ "$what" = all ]; then
  for mode in "" "--fp8-promote 1" "--fp8-promote 16" "--fp8-accum fast"; do
    run 4096 4096 4096 --type e4m3 $mode
    run 1000 1000 1000 --type e4m3 $mode --d f32
    run 513 300 4097 --a e4m3 --b e5m2 $mode --d f16
    run 128 7168 16384 --type e4m3 $mode
    run 777 1001 640 --type e4m3 $mode --beta 0.5 --d f32
  done
  # explicit tiles with two accumulator sets; split-K (each split promotes its own k-blocks)
  run 4096 4096 4096 --type e4m3 --config 128x192x128,c2x1
  run 4096 4096 4096 --type e4m3 --config 64x192x128,pp --fp8-promote 1
  run 256 256 32768 --type e4m3 --config 128x128x128,k8
  run 1000 1000 1000 --type e4m3 --epilogue rowscale,colscale,bias,gelu,residual
  # row-wise scales (epilogue vectors) and block-wise ones (1x128 / 128x128 in the main loop):
  # random non-trivial scales, the reference applies them in f32; awkward shapes (K, N, M not
  # multiples of 128: the last k-block partial, a B block split by the edge), split-K, e5m2
  for sc in row block; do
    run 4096 4096 4096 --type e4m3 --scale $sc
    run 1000 3000 700 --type e4m3 --scale $sc
    run 1000 3000 720 --type e4m3 --scale $sc --config 128x64x128,c1x2
    run 1 300 4100 --type e4m3 --scale $sc --d f32
    run 777 1001 640 --a e4m3 --b e5m2 --scale $sc --beta 0.5 --d f16
    run 128 7168 16384 --type e4m3 --scale $sc
    run 256 256 32768 --type e4m3 --scale $sc --config 128x128x128,k8
    run 4096 2112 7168 --type e4m3 --scale $sc --config 64x128x128,pp
  done
  # promotion overlap: staggered consumers (ps), two partial sets (pd) with k-blocks left over
  # after the unrolled bodies (kb % 4 or % 2 promote), none at all (kb < unroll), split-K
  run 1000 1000 1000 --type e4m3 --fp8-promote 3 --config 128x128x128,c2x1,ps
  run 4096 4096 4096 --type e4m3 --config 256x64x128,ps
  run 513 300 4097 --type e4m3 --config 128x128x128,c2x1,pd
  run 777 1001 640 --type e4m3 --fp8-promote 3 --config 64x128x128,pp,pd --beta 0.5 --d f32
  run 1000 3000 700 --type e4m3 --scale block --config 128x128x128,c2x1,pd
  run 1000 3000 720 --type e4m3 --scale block --config 64x128x128,pp,pd
  run 256 256 32768 --type e4m3 --scale block --config 128x128x128,k8,pd
  run 4096 4096 4096 --type e4m3 --fp8-promote 1 --config 128x64x128,c1x2,pd
  run 4096 4096 4096 --type e4m3 --scale row --fp8-accum fast
  run 1000 1000 1000 --type e4m3 --scale block --epilogue bias,gelu --config 128x64x128,c1x2
  echo "fp8 checks: $runs runs, $fails failed"
fi
if [ "$what" = accuracy ] || [ "$what" = all ]; then
  # relative error vs the f32 reference: hopgen and cuBLASLt, each mode, K = 4k, 16k, 64k
  printf '%-8s %-16s %-40s\n' K mode "check line (hopgen; cuBLASLt in the same mode)"
  for k in 4096 16384 65536; do
    for mode in "--fp8-accum fast" "--fp8-promote 1" "" "--fp8-promote 8" "--fp8-promote 16"; do
      out=$("$H" gemm 2048 2048 $k --type e4m3 $mode --check 2>&1 | grep -E '^  check' | head -1 | sed 's/^ *//')
      printf '%-8s %-16s %s\n' $k "${mode:-promote 4}" "$out"
    done
  done
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  # block- and row-wise: DeepSeek-V3's projections and the anchors, cuBLASLt in the same mode
  "$H" bench gemm --set fp8block --types e4m3 --iters 30
  "$H" bench gemm --set fp8row --types e4m3 --iters 30
  for mode in "" "--fp8-accum fast"; do
    echo "== llm set, e4m3 ${mode:-accurate (promote 4)}"
    for mnk in "4096 7168 16384" "4096 2112 7168" "8192 8192 8192" "128 7168 2048" "4096 4096 4096" \
               "8192 28672 8192" "4096 24576 1536" "64 7168 16384"; do
      echo "-- $mnk"
      "$H" gemm $mnk --type e4m3 $mode --check --bench --iters 30 2>&1 | grep -E 'config|kernel|bench|check' | head -4
    done
  done
fi
if [ "$what" = overlap ] || [ "$what" = all ]; then
  # the heuristic's configuration (ps where it applies), then the same without ps; the config
  # comes from a generation without the GPU (hopgen gemm without --check/--bench)
  printf '%-18s %-7s %-46s %8s %8s %6s %9s\n' shape scale config hopgen cublaslt ratio rel_err
  # OVERLAP_SCALES / OVERLAP_SHAPES narrow a run that must fit a time limit
  for sc in ${OVERLAP_SCALES:-tensor block row}; do
    shapes=${OVERLAP_SHAPES:-"4096x7168x16384 4096x2112x7168 8192x8192x8192 128x7168x2048 4096x24576x1536 64x7168x16384 2048x2048x65536"}
    for mnk in $shapes; do
      mnk=$(echo $mnk | tr x ' ')
      cfg=$("$H" gemm $mnk --type e4m3 --scale $sc 2>&1 | awk '$1 == "config" {sub(",$", "", $2); print $2}')
      [ -n "$cfg" ] || { echo "FAIL $mnk $sc: no configuration"; fails=$((fails+1)); continue; }
      extra=()
      # tensor scales: also a 128x128 coop tile plain, staggered and with two partial sets
      [ $sc = tensor ] && extra=(128x128x128,c2x1 128x128x128,c2x1,ps 128x128x128,c2x1,pd)
      for c in "$cfg" "$(echo "$cfg" | sed -E 's/,p[sd]//')" "${extra[@]}"; do
        out=$("$H" gemm $mnk --type e4m3 --scale $sc --config "$c" --check --bench --iters ${ITERS:-20} --json 2>&1)
        rc=$?
        runs=$((runs+1))
        [ $rc -eq 0 ] || fails=$((fails+1))
        echo "$out" | python3 -c '
import json, sys
shape, sc, cfg, rc = sys.argv[1:5]
try:
    r = json.loads(sys.stdin.read().strip().splitlines()[-1])
    f = lambda k: "-" if r.get(k) is None else "%.4g" % r[k]
    print("%-18s %-7s %-46s %8s %8s %6s %9s" % (shape, sc, cfg, f("tflops"), f("cublas_tflops"),
                                                 f("ratio"), f("rel_err")))
except Exception:
    print("%-18s %-7s %-46s FAIL (rc %s, no report)" % (shape, sc, cfg, rc))
' "$(echo $mnk | tr ' ' x)" $sc "$c" $rc
      done
    done
  done
  echo "overlap: $runs runs, $fails failed"
fi
exit $((fails > 0))
