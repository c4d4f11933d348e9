#!/usr/bin/env bash
# The tma-ldmatrix-wgmma-rs mainloop (wgmma with A from registers) on the GPU: --check against
# the f32 reference (D poisoned first) on every tile width, both schedules, clusters, split-K
# both ways, stream-K, bf16 and f16, MN-major A (ldmatrix .trans), ragged M/N/K and epilogue
# chains; then RS against SS on the same tile, cuBLASLt beside each. Cooperative RS tiles wider
# than 128 gave wrong products (rel. error 1.2) until each K atom's A fragment waited for the
# wgmma that last read its registers (src/builders/mma.c).
#   scripts/gemm-rs.sh path/to/hopgen [check|bench|all]
set -u
H=${1:?usage: gemm-rs.sh path/to/hopgen [check|bench|all]}
what=${2:-all}
RS=tma-ldmatrix-wgmma-rs
fails=0; runs=0
. "$(dirname "$0")/gemm-check-lib.sh" # run, sanitize
if [ "$what" != bench ]; then
  for t in bf16 f16; do
    for c in 128x128x64 128x160x64 128x192x64 128x256x64,s3 64x192x64 64x256x64 \
             128x128x64,pp 128x192x64,c1x1,s3,pp 128x192x64,c1x2 128x192x32,s6; do
      run 256 384 8192 --type $t --config $c,$RS
    done
  done
  for c in 128x192x64,k4 128x192x64,k4a 128x256x64,s3,k3a 128x192x64,sk; do
    run 256 384 8192 --config $c,$RS
  done
  # ragged M/N/K (rows through cp.async where TMA cannot address them), MN-major A, epilogues
  run 1000 1000 4100 --type f16 --config 128x192x64,$RS
  run 77 1000 4096 --config 128x256x64,s3,$RS
  run 300 520 9000 --config 128x192x64,$RS --epilogue bias,gelu --beta 0.5
  run 1000 1000 4096 --config 128x192x64,sk,$RS
  run 512 384 256 --batch 4 --d f16 --layout CC --alpha 2 --beta -1 --config 128x192x64,$RS
  run 256 384 8192 --layout CR --type f16 --config 128x160x64,$RS
  run 129 263 777 --d f32 --config 128x192x64,s2,$RS
  run 4096 4096 4096 --config 128x256x64,s3,$RS
  echo "RS checks: $runs runs, $fails failed"
fi
if [ "$what" != check ]; then
  # RS against SS on the same tile (one line each: hopgen ms, cuBLASLt, ratio)
  for mnk in "256 384 8192" "4096 4096 4096" "8192 8192 8192"; do
    for c in 128x128x64 128x192x64 128x256x64,s3 128x192x64,c1x1,s3,pp; do
      for ml in tma-wgmma $RS; do
        r=$("$H" gemm $mnk --config $c,$ml --bench --iters 20 2>&1 | grep -o 'hopgen [0-9.]* ms.*ratio [0-9.]*' | head -1)
        echo "$mnk $c,$ml :: ${r:-failed}"
      done
    done
  done
fi
exit $((fails > 0))
