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
#   scripts/gemm-fp8.sh path/to/hopgen [check|accuracy|bench|overlap|all|bs2-check|bs2-bench]
set -u
H=${1:?usage: gemm-fp8.sh path/to/hopgen [check|accuracy|bench|overlap|all|bs2-check|bs2-bench]}
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
# bs2 (issue 11, block-wise speed): staged block scales (",bs": the producer's second warp
# copies each k-block's scales into the stage; consumers read shared memory) and MMA turns
# (",pt": the two consumers issue each k-block's MMAs in turn) against the global path. bs2-check: --check on awkward shapes per variant, and the refusals; bs2-bench: the
# fp8block set (DeepSeek-V3's projections, the anchors) per variant, cuBLASLt block-wise in the
# same process, a table last. BS2_SHAPES / ITERS / BS2_BUDGET narrow it.
bs_fit() { # bs_fit SHAPE... -- CFG: the first of CFG, CFG with e32, CFG one stage less that
           # generates (nothing when none does: e.g. pt on a one-consumer tile)
  local mnk=() c
  while [ "$1" != -- ]; do mnk+=("$1"); shift; done; shift
  c=$1
  local st=$(echo "$c" | sed -nE 's/.*,s([0-9]+).*/\1/p')
  local fewer=$c
  [ -n "$st" ] && fewer=$(echo "$c" | sed -E "s/,s$st/,s$((st - 1))/")
  for try in "$c" "$(echo "$c" | sed -E 's/,e[0-9]+/,e32/')" "$fewer"; do
    "$H" gemm "${mnk[@]}" --type e4m3 --scale block --config "$try" > /dev/null 2>&1 && { echo "$try"; return; }
  done
}
if [ "$what" = bs2-check ]; then
  for v in "" ",bs" ",pd,bs" ",pt" ",pt,bs"; do
    run 4096 4096 4096 --type e4m3 --scale block --config 128x128x128,c2x1,s5$v
    run 1000 3000 700 --type e4m3 --scale block --config 128x128x128,c2x1,s5$v
    run 1000 3000 720 --type e4m3 --scale block --config 128x64x128,c1x2$v
    run 777 1001 640 --a e4m3 --b e5m2 --scale block --beta 0.5 --d f16 --config 128x128x128,s5$v
    run 129 7168 16384 --type e4m3 --scale block --config 128x128x128,c1x1,s6,e32$v
    run 256 256 32768 --type e4m3 --scale block --config 128x128x128,k8$v
    run 1000 1000 1000 --type e4m3 --scale block --epilogue bias,gelu --config 128x64x128,c1x2$v
    run 3000 1000 4112 --type e4m3 --scale block --config 256x64x128,c2x1,s4$v
    case "$v" in *pt*) continue ;; esac # one consumer per tile: no turns
    # M = 1 reads B in place (cp.async): staged scales are refused there (see below)
    case "$v" in *bs*) ;; *) run 1 300 4100 --type e4m3 --scale block --d f32 --config 64x128x128,pp$v ;; esac
    run 4095 2112 7168 --type e4m3 --scale block --config 64x128x128,pp$v
    run 1000 3000 4112 --type e4m3 --scale block --config 64x64x128,c2x1,pp$v
  done
  # turns with per-tensor and row-wise scales (a promotion every 4 k-blocks)
  run 4096 4096 4096 --type e4m3 --config 128x128x128,c2x1,pt
  run 777 1001 4100 --type e4m3 --scale row --config 128x128x128,pt --d f32
  # K not a multiple of 16 (rows TMA cannot address): repacked under auto (bs takes the packed
  # copies); refused with a sentence where an operand stays with cp.async
  run 1000 3000 4097 --type e4m3 --scale block --config 128x128x128,s5,bs
  for bad in "--scale block --config 128x128x128,s4,bs,cpasync-wgmma" \
             "--config 128x128x128,s4,bs" "--scale block --config 64x128x128,pp,pt" \
             "--scale block --fp8-accum fast --config 128x128x128,pt"; do
    runs=$((runs+1))
    if out=$("$H" gemm 1000 3000 4096 --type e4m3 $bad 2>&1); then
      fails=$((fails+1)); echo "FAIL (not refused) $bad"
    else
      echo "ok   refused $bad :: $(echo "$out" | tail -1 | cut -c1-150)"
    fi
  done
  echo "bs2 checks: $runs runs, $fails failed"
fi
if [ "$what" = bs2-bench ]; then
  shapes=${BS2_SHAPES:-"64x2112x7168 64x24576x1536 64x32768x512 64x7168x16384 64x4096x7168 64x7168x2048 128x2112x7168 128x24576x1536 128x32768x512 128x7168x16384 128x4096x7168 128x7168x2048 4096x2112x7168 4096x24576x1536 4096x32768x512 4096x7168x16384 4096x4096x7168 4096x7168x2048 8192x8192x8192"}
  table=$(mktemp)
  t0=$SECONDS
  for mnk in $shapes; do
    # BS2_BUDGET seconds (default 330): the shapes left are skipped, the table still printed
    if [ $((SECONDS - t0)) -gt ${BS2_BUDGET:-330} ]; then echo "budget reached: skipped from $mnk on"; break; fi
    m=$(echo $mnk | tr x ' ')
    cfg=$("$H" gemm $m --type e4m3 --scale block 2>&1 | awk '$1 == "config" {sub(",$", "", $2); print $2}')
    [ -n "$cfg" ] || { echo "FAIL $mnk: no configuration"; fails=$((fails+1)); continue; }
    base=$(echo "$cfg" | sed -E 's/,p[sd]//')
    variants=("$base" "$(bs_fit $m -- "$base,bs")" "$(bs_fit $m -- "$base,pd,bs")"
              "$(bs_fit $m -- "$base,pt")" "$(bs_fit $m -- "$base,pt,bs")")
    # the 128-row accurate tile as well where the heuristic took another
    case "$base" in 128x128x128,*) ;; *) variants+=("$(bs_fit $m -- 128x128x128,c2x1,s6,e32,pt,bs)") ;; esac
    for c in "${variants[@]}"; do
      [ -n "$c" ] || continue
      # correctness is bs2-check's (and BS2_CHECK=1 adds --check here: rel_err filled in)
      out=$("$H" gemm $m --type e4m3 --scale block --config "$c" ${BS2_CHECK:+--check} --bench --iters ${ITERS:-20} --json 2>&1)
      rc=$?
      runs=$((runs+1))
      [ $rc -eq 0 ] || fails=$((fails+1))
      echo "$out" | python3 -c '
import json, sys
shape, cfg, rc = sys.argv[1:4]
try:
    r = json.loads(sys.stdin.read().strip().splitlines()[-1])
    f = lambda k: "-" if r.get(k) is None else "%.4g" % r[k]
    print("%-18s %-50s %8s %8s %6s %9s" % (shape, cfg, f("tflops"), f("cublas_tflops"),
                                           f("ratio"), f("rel_err")))
except Exception:
    print("%-18s %-50s FAIL (rc %s, no report)" % (shape, cfg, rc))
' "$mnk" "$c" $rc | tee -a "$table"
    done
  done
  # per shape: each variant's ratio to cuBLASLt, the best; then the geomean of the best and of
  # each kind of variant (global, bs, pd+bs)
  python3 - "$table" <<'PY'
import math, sys, collections
rows = [l.split() for l in open(sys.argv[1]) if "FAIL" not in l]
best, kind = {}, collections.defaultdict(list)
for r in rows:
    if len(r) < 6 or r[4] == "-": continue
    shape, cfg, ratio = r[0], r[1], float(r[4])
    k = ("pd," if ",pd" in cfg else "pt," if ",pt" in cfg else "") + ("bs" if ",bs" in cfg else "global")
    kind[k].append(ratio)
    if ratio > best.get(shape, (0, ""))[0]: best[shape] = (ratio, cfg)
print("== bs2: best per shape (ratio to cuBLASLt block-wise)")
for s, (r, c) in best.items(): print("%-18s %6.3f  %s" % (s, r, c))
g = lambda v: math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")
print("bs2 geomean best %.3f (lowest %.3f); by kind: %s" % (g([r for r, _ in best.values()]),
      min([r for r, _ in best.values()] or [float("nan")]),
      ", ".join("%s %.3f (%d)" % (k, g(v), len(v)) for k, v in kind.items())))
PY
  rm -f "$table"
  echo "bs2 bench: $runs runs, $fails failed"
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
