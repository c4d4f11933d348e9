#!/usr/bin/env bash
# Split-K on the GPU (issue 10): correctness of the partial tiles and their reduction pass
# against the f32 reference (D poisoned first by --check) across schedules, clusters,
# mainloops, batches with beta, fewer k-blocks than splits, fp8 and epilogue chains; then the
# splitk shape set timed against cuBLASLt at several split counts, for the heuristic to
# learn from (sweep2: the compact sweep of tile x splits on the splitk and decode shapes).
# check runs every split configuration by the reduction pass (,kS), by atomics (,kSa) and
# reduced in the GEMM (,kSr, the cooperative wgmma ones).
#   scripts/gemm-splitk.sh path/to/hopgen [check|sanitize|bench|sweep|sweep2|decode-sweep|decode2|clusters|all]
set -u
H=${1:?usage: gemm-splitk.sh path/to/hopgen [check|sanitize|bench|sweep|sweep2|decode-sweep|decode2|clusters|all]}
what=${2:-all}
fails=0; runs=0
. "$(dirname "$0")/gemm-check-lib.sh" # run, sanitize
checks() { # $1: "" (the reduction pass) or "a" (split-K by atomic adds, ,kSa)
  local a=$1
  run 128 128 32768 --config 128x128x64,k8$a
  run 512 512 16384 --config 128x128x64,pp,k4$a
  run 64 1024 65536 --config 128x128x64,c1x2,k16$a
  run 192 320 40000 --config 128x64x64,k6$a --beta 0.5
  run 300 200 100 --config 128x128x64,k8$a
  run 1000 1000 4097 --config 128x128x64,s3,k3$a,cpasync-wgmma
  run 256 256 8192 --layout CC --config 128x128x64,pp,k4$a,tma-mmasync
  run 256 384 8192 --config 128x192x64,k4$a,tma-ldmatrix-wgmma-rs
  run 500 300 6000 --batch 3 --beta 0.5 --config 128x128x64,k5$a
  run 128 7168 16384 --type e4m3 --config 128x128x128,c2x1,k4$a
  run 128 7168 16384 --type e4m3 --fp8-accum fast --config 128x256x128,c2x1,k4$a
  run 1 4096 32768 --config 64x128x64,k32$a
  run 128 128 32768 --config 128x128x64,k64$a
  run 200 136 30000 --config 64x128x64,k33$a --beta 0.25
  run 130 260 9000 --config 128x128x64,pp,k7$a
  run 64 1024 65536 --config 64x256x64,c1x2,k48$a
  # the epilogue chain runs in the reduction pass (by atomics: in the last split)
  run 300 520 9000 --config 64x128x64,k8$a --epilogue rowscale,colscale,bias,gelu,residual --beta 0.5
  run 77 1000 20000 --config 128x128x64,pp,k16$a --epilogue bias_m,silu --d f32
  run 1 7168 2048 --config 64x64x64,k4$a --epilogue bias,relu
  run 3 2048 7168 --type e4m3 --config 64x128x128,k8$a --epilogue bias,gelu_tanh
  run 130 700 8192 --config 128x128x64,c2x1,k4$a --epilogue colscale,bias,sigmoid --batch 2
}
if [ "$what" != bench ] && [ "$what" != sweep2 ] && [ "$what" != sanitize ]; then
  checks ""
  # the same by atomic adds: the last split runs the epilogue; --check also compares 2 more
  # launches within tolerance (a workspace not left zeroed would double the sums)
  checks a
  # reduced in the GEMM (,kSr: the splits wait for each other, each sums a share): every
  # cooperative wgmma case above with every unit resident (at most 132 CTAs), and
  # --deterministic (10 launches bit for bit)
  checks_r() {
    run 128 128 32768 --config 128x128x64,k8r
    run 512 512 16384 --config 128x128x64,k8r --deterministic
    run 64 1024 65536 --config 128x128x64,c1x2,k16r
    run 192 320 40000 --config 64x64x64,k8r --beta 0.5 --deterministic
    run 192 320 40000 --config 128x64x64,k6r --beta 0.5
    run 300 200 100 --config 128x128x64,k8r
    run 600 600 4097 --config 128x128x64,s3,k3r,cpasync-wgmma
    run 500 300 6000 --batch 3 --beta 0.5 --config 128x128x64,k3r
    run 128 512 16384 --type e4m3 --config 128x128x128,c2x1,k8r
    run 128 512 16384 --type e4m3 --fp8-accum fast --config 128x256x128,c2x1,k16r
    run 1 4096 32768 --config 64x128x64,k4r
    run 128 128 32768 --config 128x128x64,k64r
    run 200 136 30000 --config 64x128x64,k16r --beta 0.25
    run 300 520 9000 --config 64x128x64,k5r --epilogue rowscale,colscale,bias,gelu,residual --beta 0.5
    run 77 1000 20000 --config 128x128x64,k16r --epilogue bias_m,silu --d f32
    run 3 2048 7168 --type e4m3 --config 64x128x128,k8r --epilogue bias,gelu_tanh --d e4m3 --amax
    run 130 700 8192 --config 128x128x64,c2x1,k4r --epilogue colscale,bias,sigmoid --batch 2
  }
  checks_r
  # the heuristic's choice, and --deterministic (no atomic adds: 10 launches bit for bit)
  run 128 128 32768
  run 1 2048 7168 --type e4m3
  run 192 320 40000 --deterministic
  run 128 128 32768 --deterministic
  echo "split-K checks: $runs runs, $fails failed"
fi
if [ "$what" = sanitize ]; then
  # compute-sanitizer on split-K by atomic adds and by the reduction pass (memcheck: the
  # slots, counters and zeroing stay in the workspace; racecheck: the arrival word in shared
  # memory between the tile's threads)
  sanitize "300 200 2048 --config 128x128x64,k4a" "130 260 3000 --config 128x128x64,pp,k3a --beta 0.5" \
           "77 1024 4096 --config 64x128x64,k8a" "300 200 2048 --config 128x128x64,k4" \
           "300 200 2048 --config 128x128x64,k4r" "77 1024 4096 --config 64x128x64,k8r"
  echo "split-K sanitizer: $runs runs, $fails failed"
  [ "$fails" -eq 0 ]; exit
fi
if [ "$what" = sweep2 ]; then
  # tile x splits on the splitk and decode shapes, bf16: one line each
  for mnk in "128 128 32768" "512 512 16384" "64 1024 65536" "192 320 40000" "1 7168 2048" \
             "1 2048 7168" "8 2048 7168" "24 7168 2048" "1 4096 28672" "48 2048 7168"; do
    tiles="64x128x64 128x128x64"; [ "${mnk%% *}" -le 48 ] && tiles="64x64x64 64x128x64"
    for tile in $tiles; do
      for k in 1 2 4 8 16 32; do
        cfg=$tile; [ $k -gt 1 ] && cfg=$cfg,k$k
        r=$("$H" gemm $mnk --config $cfg --bench --iters 30 2>&1 | grep -o 'hopgen [0-9.]* ms.*ratio [0-9.]*' | head -1)
        [ -n "$r" ] && echo "$mnk $cfg :: $r"
      done
    done
  done
  exit 0
fi
if [ "$what" = decode-sweep ]; then
  # decode shapes: weight tile widths x split counts, one line each
  for mnk in "1 7168 2048" "1 2048 7168" "1 28672 4096" "1 4096 28672" "8 7168 2048" "8 2048 7168"; do
    for tile in 64x64x64 64x128x64 64x256x64; do
      for k in 1 2 4 8 16; do
        cfg=$tile; [ $k -gt 1 ] && cfg=$cfg,k$k
        r=$("$H" gemm $mnk --config $cfg --bench --iters 20 2>&1 | grep -o 'hopgen [0-9.]* ms.*ratio [0-9.]*' | head -1)
        [ -n "$r" ] && echo "$mnk $cfg :: $r"
      done
    done
  done
  exit 0
fi
if [ "$what" = clusters ]; then
  # few-tile shapes: tile x cluster x splits (one wave of units, and half of one), the most
  # stages up to 8: whether multicast (less L2 traffic for the operand the tiles share) pays
  sms=${SMS:-132}
  for mnk in ${SPLIT_SHAPES:-"128 128 32768" "512 512 16384" "64 1024 65536" "192 320 40000" \
             "256 256 16384" "96 768 32768" "384 640 12288"}; do
    set -- $mnk; m=$1; n=$2
    for tile in 64x128 128x128 128x64 64x256 128x256; do
      tm=${tile%x*}; tn=${tile#*x}
      tiles=$(( (m + tm - 1) / tm * ((n + tn - 1) / tn) ))
      for cl in c1x1 c2x1 c1x2; do
        # a cluster needs two tiles along its direction
        [ $cl = c2x1 ] && [ $(( (m + tm - 1) / tm )) -lt 2 ] && continue
        [ $cl = c1x2 ] && [ $(( (n + tn - 1) / tn )) -lt 2 ] && continue
        full=$(( sms / tiles )); [ $full -gt 64 ] && full=64
        for k in $full $(( full / 2 )); do
          [ $k -lt 2 ] && continue
          for st in 8 6 4; do
            cfg=${tile}x64,$cl,s$st,k$k
            out=$("$H" gemm $mnk --config $cfg --bench --iters 30 2>&1) || continue
            r=$(echo "$out" | grep -o 'hopgen [0-9.]* ms.*ratio [0-9.]*' | head -1)
            echo "$mnk $cfg tiles $tiles :: $r"
            break
          done
        done
      done
    done
  done
  exit 0
fi
if [ "$what" = decode2 ]; then
  # decode shapes: weight tile widths x split counts where the units make one or two waves,
  # the most stages up to 8; hopgen's time, cuBLASLt's, and the memory line (A+B+D bytes over
  # time against the D2D copy), timed over rotated operand sets past the L2
  sms=${SMS:-132}; ty=${TYPE:-bf16}; tk=64; [ "$ty" = e4m3 ] || [ "$ty" = e5m2 ] && tk=128
  # DECODE_SHAPES: shapes separated by ';' ("1 2048 7168;8 2048 7168")
  IFS=';' read -r -a shapes <<< "${DECODE_SHAPES:-1 7168 2048;8 7168 2048;24 7168 2048;48 7168 2048;1 2048 7168;8 2048 7168;24 2048 7168;1 28672 4096;8 28672 4096;1 4096 28672;8 4096 28672}"
  for mnk in "${shapes[@]}"; do
    set -- $mnk; n=$2
    for tn in 64 96 112 128 160 192 256; do
      for k in 1 2 3 4 6 8; do
        units=$(( (n + tn - 1) / tn * k ))
        [ $units -gt $((2 * sms)) ] && continue
        [ $units -lt $((sms / 3)) ] && continue
        for st in 8 6 4; do
          cfg=64x${tn}x$tk,s$st; [ $k -gt 1 ] && cfg=$cfg,k$k
          out=$("$H" gemm $mnk --type $ty --config $cfg --bench --iters 30 2>&1) || continue
          r=$(echo "$out" | grep -o 'hopgen [0-9.]* ms.*ratio [0-9.]*' | head -1)
          bw=$(echo "$out" | grep -o '= [0-9.]* of the driver' | grep -o '[0-9.]*' | head -1)
          echo "$mnk $cfg units $units :: $r :: bw $bw"
          break
        done
      done
    done
  done
  exit 0
fi
if [ "$what" = sweep ]; then
  # every tile x cluster x split count on the split-K and a few decode shapes: one line each
  # (TFLOP/s and the ratio), for the heuristic's model
  for mnk in "128 128 32768" "512 512 16384" "64 1024 65536" "192 320 40000" "1 7168 2048" \
             "8 4096 28672" "48 28672 4096"; do
    for tile in 128x128x64 128x256x64 64x128x64 64x256x64; do
      for cl in c1x1 c1x2; do
        for k in 1 4 8 16 32 64; do
          cfg=$tile,$cl; [ $k -gt 1 ] && cfg=$cfg,k$k
          r=$("$H" gemm $mnk --config $cfg --bench --iters 20 2>&1 | grep -o 'hopgen [0-9.]* ms.*ratio [0-9.]*' | head -1)
          [ -n "$r" ] && echo "$mnk $cfg :: $r"
        done
      done
    done
  done
  exit 0
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
