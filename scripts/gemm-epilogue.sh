#!/usr/bin/env bash
# Epilogue activations and bias vectors on the GPU (issue 12): every activation and bias
# against the f32 reference with the epilogue applied on the host (--check), bf16/f16/f32/fp8 output
# (fp8 D saturating, amax bitwise, the aux output, C of its own type), fp8 inputs, ping-pong,
# beta * C before the activation, ragged edges and the direct-store epilogue; then the time
# of each activation over the plain GEMM on one shape.
#   scripts/gemm-epilogue.sh path/to/hopgen [check|bench|all|outputs|outputs-bench|odd|ep2-bench|ea-check|ea-bench]
# (outputs / outputs-bench: only issue 12's output conversions - fp8 D, amax, aux, C's type;
# odd: D and aux rows TMA cannot store - staged through shared memory and copied out row by
# row - on awkward shapes, every D type, C/beta, batches, and the same with
# --direct-stores (,ds: the element-by-element stores); ep2-bench: the issue-12 benches
# side by side with the A/B variants --gelu as|poly7|poly5 (,gas/,gp5) and --direct-stores,
# then a table; ea-check / ea-bench: the aux output beside every D type and the ping-pong
# A/B rule --heuristic pp|pp128, checks then benches)
set -u
H=${1:?usage: gemm-epilogue.sh path/to/hopgen [check|bench|all|outputs|outputs-bench|odd|ep2-bench|ea-check|ea-bench]}
what=${2:-all}
fails=0; runs=0
run() {
  runs=$((runs+1))
  if out=$("$H" gemm "$@" --check 2>&1); then
    echo "ok   $* :: $(echo "$out" | grep -o 'rel. error [0-9.e-]*' | head -1)$(echo "$out" | grep -o 'amax .*: bitwise equal\|[0-9]* reference values saturated' | tr '\n' ' ' | sed 's/^/ | /')"
  else
    fails=$((fails+1)); echo "FAIL $* :: $(echo "$out" | tail -3 | tr '\n' ' ')"
  fi
}
acts="relu gelu gelu_tanh silu sigmoid clamp:-0.5:0.75"
if [ "$what" = check ] || [ "$what" = all ]; then
  for act in $acts; do
    run 1000 1000 1000 --epilogue $act
    run 777 1001 513 --epilogue $act --d f32 --beta 0.5
    run 513 300 4096 --epilogue $act --type e4m3
    run 1000 1000 1000 --epilogue $act --config 128x128x64,c1x1,s4,pp --d f16
    run 300 200 100 --epilogue $act --ldd 203 --ldc 207 --beta 1
  done
  # bias vectors along N and M in each type, alone and before an activation, with beta and batches
  run 1000 1000 1000 --epilogue bias
  run 777 1001 513 --epilogue bias_m --bias-type f32 --beta 0.5
  run 513 300 4096 --epilogue bias,gelu --type e4m3 --bias-type f16
  run 1000 1000 1000 --epilogue bias_m,silu --config 128x128x64,c1x1,s4,pp --d f16
  run 500 300 200 --epilogue bias,relu --batch 3 --beta 0.5 --d f32
  run 300 200 100 --epilogue bias --ldd 203 --ldc 207 --beta 1
  # scale vectors and the residual (the whole chain too)
  run 1000 1000 1000 --epilogue rowscale,colscale
  run 777 1001 513 --epilogue residual --beta 0.5 --d f32
  run 513 300 4096 --type e4m3 --epilogue rowscale,colscale,bias,gelu,residual
  run 500 300 200 --batch 3 --epilogue colscale,bias_m,relu,residual --ldd 301
  run 1000 1000 1000 --config 128x128x64,c1x1,s4,pp --epilogue rowscale,residual --d f16
fi
if [ "$what" = check ] || [ "$what" = all ] || [ "$what" = outputs ]; then
  # output conversions (issue 12): fp8 D (with saturating scales), C in its own type, the aux
  # output, the amax (bitwise against the host's reduction over the stored D)
  for d in e4m3 e5m2 bf16 f16 f32; do
    run 1000 1000 1000 --d-type $d --amax
    run 777 1001 513 --d-type $d --epilogue bias,gelu --aux --amax --beta 0.5 --c-type f32
    run 513 300 4096 --type e4m3 --d-type $d --epilogue rowscale,colscale,bias,gelu_tanh,residual --amax --aux --aux-type f32
    run 500 300 200 --batch 3 --d-type $d --epilogue colscale,bias_m,relu,residual --ldd 301 --amax --c-type f16 --beta 0.5
    run 1000 1000 1000 --config 128x128x64,c1x1,s4,pp --d-type $d --epilogue silu --aux --aux-type bf16 --amax
    # N, ldd and batch strides of 16-byte multiples: D through TMA stores (fp8: byte pairs)
    run 1024 1024 1024 --d-type $d --epilogue bias,gelu --aux --amax
    run 512 528 256 --batch 3 --d-type $d --amax --epilogue rowscale,relu,residual --beta 0.5
    run 1000 1024 1000 --config 128x128x64,c1x1,s4,pp --d-type $d --epilogue bias_m,sigmoid --amax
    run 777 1024 513 --config 128x256x64,c2x1,s4 --d-type $d --amax --c-type f32 --beta 1
  done
  run 777 1024 513 --config 128x256x64,c2x1,s4,e128 --d-type e4m3 --amax --epilogue relu --beta 1
  # saturation: a large output scale sends many values past 448 (e4m3) / 57344 (e5m2)
  run 1000 1000 1000 --d-type e4m3 --scale-d 300 --amax
  run 777 1001 513 --d-type e4m3 --scale-d 1000 --epilogue bias,relu --amax --aux
  run 513 300 4096 --type e4m3 --d-type e5m2 --scale-d 30000 --amax
  run 500 300 200 --batch 3 --d-type e5m2 --scale-d 0.001 --epilogue clamp:-0.5:0.75 --amax
  run 1000 1000 1000 --d-type e4m3 --scale-d 4 --config 128x128x64,c1x1,s4,k3 --amax
  run 1024 1024 1024 --d-type e4m3 --scale-d 500 --epilogue bias,gelu --amax --aux
  run 2048 2048 512 --d-type e5m2 --scale-d 40000 --amax --config 128x128x64,c1x1,s4,k2
  echo "epilogue checks: $runs runs, $fails failed"
fi
if [ "$what" = odd ] || [ "$what" = all ]; then
  # D rows TMA cannot store (ldd or N not a multiple of 16 bytes): staged sub-tiles copied out
  # row by row; aux of D's element size staged the same way (aux through TMA needs D through
  # TMA: 4096 columns in an ldd of 4097 stage both)
  for d in bf16 f16 f32 e4m3 e5m2; do
    run 4095 4097 127 --d-type $d --amax
    run 1 4097 127 --d-type $d --epilogue bias,gelu --aux --beta 0.5
    run 7 1000 4097 --d-type $d --ldd 1001 --ldc 1003 --beta 1 --amax
    run 127 7 1000 --d-type $d --epilogue relu --aux
    run 1000 4097 7 --d-type $d --batch 3 --beta 0.5 --epilogue bias_m,silu,residual
    run 4096 4096 512 --d-type $d --ldd 4097 --epilogue bias,gelu --aux --amax
    run 1000 1000 1000 --d-type $d --ldd 1001 --config 128x128x64,c1x1,s4,pp --epilogue gelu_tanh --aux
    run 777 1001 513 --d-type $d --config 128x176x64,c2x1,s4 --beta 0.5 --c-type f32
  done
  run 4095 4097 127 --epilogue bias,gelu --aux --aux-type f32
  run 4095 4097 127 --epilogue bias,gelu --aux --aux-type f16 --batch 3
  # the element-by-element stores (--direct-stores, ,ds) on the same kind of shapes
  run 4095 4097 127 --amax --direct-stores
  run 1000 4097 7 --batch 3 --beta 0.5 --epilogue bias,gelu --aux --direct-stores
  # the erf GELU's other formulas (--gelu: ,gas ,gp5), f32 output: accuracy against the reference
  for g in as poly7 poly5; do
    run 1000 1000 1000 --epilogue gelu --d f32 --gelu $g
    run 777 1001 513 --epilogue bias,gelu --aux --d f32 --beta 0.5 --gelu $g
  done
  echo "odd/staged checks: $runs runs, $fails failed"
fi
# One line per case: hopgen and cuBLASLt (fused where it has the chain) in the same process;
# "+%" is over the plain GEMM of the same size timed in this script (the "none" row).
b() { # b LABEL VARIANT ARGS...: one --check --bench run with the variant's options, summarized
  local label=$1 variant=$2; shift 2
  local out rc ms blas rat chk
  out=$("$H" gemm "$@" $variant --check --bench --iters ${ITERS:-30} 2>&1); rc=$?
  ms=$(echo "$out" | sed -n 's/.*bench    hopgen \([0-9.]*\) ms.*/\1/p' | head -1)
  blas=$(echo "$out" | sed -n 's/.*| cuBLASLt\(.*\) \([0-9.]*\) ms = .*/\2\1/p' | head -1)
  rat=$(echo "$out" | sed -n 's/.*| ratio \([0-9.]*\).*/\1/p' | head -1)
  chk=$([ $rc = 0 ] && echo ok || echo "FAIL(rc=$rc)")
  echo "ROW|$label|${variant:--}|${ms:-?}|${blas:-?}|${rat:-?}|$chk|$(echo "$out" | grep -o '[A-Za-z-]*-store[^)]*epilogue' | head -1)"
  echo "$out" | grep -E 'bench|plain|unfused|check|config' | sed 's/^/    /'
}
if [ "$what" = ea-check ]; then
  # helper ea: the aux output beside every D type (f32/f16/bf16 aux beside 16-bit, f32 and fp8
  # D, with and without amax), awkward shapes, batches, beta * C, ping-pong tiles, and the
  # ping-pong A/B rule (--heuristic pp|pp128) on the heuristic's own tile
  for d in bf16 f16 f32 e4m3 e5m2; do
    for a in bf16 f16 f32; do
      x=""; case $d in e4m3|e5m2) x="--amax";; esac
      run 1000 1000 1000 --epilogue bias,gelu --aux --aux-type $a --d $d $x
      run 777 1001 513 --epilogue bias,silu --aux --aux-type $a --d $d --beta 0.5 $x
      run 500 304 200 --epilogue bias,gelu_tanh --aux --aux-type $a --d $d --batch 3 $x
      run 4096 1024 512 --epilogue bias,gelu --aux --aux-type $a --d $d --config 128x128x64,c1x1,s4,pp $x
    done
  done
  run 4096 4096 512 --epilogue bias,gelu --aux --aux-type f32 --config 128x256x64,c2x1,s4
  run 4096 4096 512 --epilogue bias,gelu --aux --aux-type f32 --config 128x192x64,c1x1,s4,pp
  run 4096 4096 512 --epilogue bias,gelu --config 128x192x64,c2x1,s4,pp
  run 4096 4096 512 --epilogue bias,silu,residual --config 128x192x64,c1x1,s4,pp
  run 2048 4097 1024 --epilogue bias,gelu --aux --aux-type f32
  for v in pp pp128; do
    for ch in bias,gelu bias,silu bias,sigmoid; do
      run 4096 4096 1024 --epilogue $ch --heuristic $v
      run 1000 3000 1000 --epilogue $ch --aux --aux-type f32 --heuristic $v
    done
  done
  echo "ea checks: $runs runs, $fails failed"
fi
if [ "$what" = ea-bench ]; then
  for sz in 4096 8192; do
    b "${sz}^3 none" "" $sz $sz $sz
    for sch in default pp pp128; do
      e="--heuristic $sch"
      b "${sz}^3 bias,gelu" "$e" $sz $sz $sz --epilogue bias,gelu
      b "${sz}^3 bias,silu" "$e" $sz $sz $sz --epilogue bias,silu
      b "${sz}^3 bias,gelu+aux bf16" "$e" $sz $sz $sz --epilogue bias,gelu --aux
      b "${sz}^3 bias,gelu+aux f32" "$e" $sz $sz $sz --epilogue bias,gelu --aux --aux-type f32
      b "${sz}^3 e4m3 D+amax+aux" "$e" $sz $sz $sz --epilogue bias,gelu --d-type e4m3 --amax --aux
    done
  done
fi
if [ "$what" = ep2-bench ]; then
  for sz in 4096 8192; do
    b "${sz}^3 none" "" $sz $sz $sz
    for g in poly7 as poly5; do
      b "${sz}^3 bias,gelu" "--gelu $g" $sz $sz $sz --epilogue bias,gelu
    done
    b "${sz}^3 bias,gelu_tanh" "" $sz $sz $sz --epilogue bias,gelu_tanh
    b "${sz}^3 bias,gelu+aux" "" $sz $sz $sz --epilogue bias,gelu --aux
    b "${sz}^3 bias,gelu+aux" "--direct-stores" $sz $sz $sz --epilogue bias,gelu --aux
    b "${sz}^3 bias,gelu_tanh+aux" "" $sz $sz $sz --epilogue bias,gelu_tanh --aux
    b "${sz}^3 e4m3 D+amax" "" $sz $sz $sz --d-type e4m3 --amax
    # (b) the ping-pong schedule for the erf GELU: hopgen's 128x128 and 128x192 ping-pong tiles
    b "${sz}^3 bias,gelu pp 128x128" "" $sz $sz $sz --epilogue bias,gelu --config 128x128x64,c2x1,s6,pp
    b "${sz}^3 bias,gelu pp 128x192" "" $sz $sz $sz --epilogue bias,gelu --config 128x192x64,c2x1,s4,pp
  done
  for shape in "4095 4097 127" "1001 999 4097" "333 7777 2222" "4096 4096 4096 --ldd 4097" "2048 4097 2048"; do
    b "$shape" "" $shape
    b "$shape" "--direct-stores" $shape
  done
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  for act in none $acts bias bias,relu bias,gelu bias,gelu_tanh bias,silu; do
    echo "== 4096 4096 4096 --epilogue $act"
    "$H" gemm 4096 4096 4096 --epilogue $act --check --bench --iters 30 2>&1 | grep -E 'bench|host|unfused|check|GEMM' | head -5
  done
  for act in none bias bias,gelu bias,gelu_tanh; do
    echo "== 8192 8192 8192 --epilogue $act"
    "$H" gemm 8192 8192 8192 --epilogue $act --check --bench --iters 20 2>&1 | grep -E 'bench|unfused|check|GEMM' | head -4
  done
fi
if [ "$what" = bench ] || [ "$what" = all ] || [ "$what" = outputs-bench ]; then
  # fp8 D with amax, and the aux output, over the plain GEMM with bf16 D ("plain" line)
  for sz in 4096 8192; do
    for x in "--d-type e4m3 --amax" "--d-type e4m3 --amax --epilogue bias,gelu" "--d-type e5m2 --scale-d 2 --amax --epilogue bias,gelu" "--amax" "--epilogue bias,gelu --aux" "--epilogue bias,gelu_tanh --aux --d-type e4m3 --amax"; do
      echo "== $sz $sz $sz $x"
      "$H" gemm $sz $sz $sz $x --check --bench --iters 20 2>&1 | grep -E 'bench|plain|amax|check|GEMM' | head -5
    done
  done
fi
exit $((fails > 0))
