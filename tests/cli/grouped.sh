#!/usr/bin/env bash
# hopgen grouped-gemm end to end without a GPU: the kernel of each layout generated and
# assembled (ptxas when present), JSON output, and bad requests refused with a sentence
# (exit 2 for usage errors, 1 for rules the library enforces or a missing GPU).
set -u
cli=${1:?usage: grouped.sh PATH_TO_HOPGEN}
# shellcheck source=tests/cli/cli_test.bash
. "$(dirname "$0")/cli_test.bash"

g=(grouped-gemm --experts 8 --tokens 4096 --n 4096 --k 7168)
ok "_gc8" "${g[@]}"
ok "TMA stores for whole tiles" "${g[@]}"
ok "direct-store epilogue" grouped-gemm --experts 2 --tokens 4 --n 100 --k 64
ok "_gm256" grouped-gemm --experts 256 --tokens 64 --n 2048 --k 7168 --masked --type e4m3
ok "_gc4" grouped-gemm --experts 4 --tokens-per-expert 0,100,0,3000 --n 1536 --k 2048
ok "128x128x64,c1x1,s5,pp" grouped-gemm --experts 32 --tokens 512 --n 4096 --k 7168 \
  --config 128x128x64,c1x1,s5,pp,m8
if "$cli" grouped-gemm --experts 128 --tokens 128 --n 1536 --k 2048 --json > "$tmp/j.json" 2> "$tmp/err"; then
  json_is 'j["ok"] and j["kernel"].endswith("_gc128") and j["spill_bytes"] == 0' "$tmp/j.json"
else
  fail "grouped-gemm --json failed: $(head -c 600 "$tmp/err")"
fi
# usage errors
bad 2 "give --experts E, --n N and --k K" grouped-gemm --experts 8 --tokens 4
bad 2 "give the tokens" grouped-gemm --experts 8 --n 8 --k 16
bad 2 "gives 2 counts for --experts 3" grouped-gemm --experts 3 --tokens-per-expert 1,2 --n 8 --k 16
bad 2 "conflicts" grouped-gemm --experts 2 --tokens 4 --tokens-per-expert 1,2 --n 8 --k 16
bad 2 "--uneven redistributes --tokens" grouped-gemm --experts 2 --tokens-per-expert 1,2 \
  --uneven 3 --n 8 --k 16
# block-wise fp8 scales: both layouts, staged (bs) or read directly, K not a multiple of 128
ok "_gc8_sblk_pd_bs" grouped-gemm --experts 8 --tokens 512 --n 4096 --k 7168 --type e4m3 --scale block
ok "_gm32_sblk" grouped-gemm --experts 32 --tokens 256 --n 1000 --k 2000 --type e4m3 \
  --scale block --masked --config 128x128x128,c1x1,s5
ok "_gc6_sblk" grouped-gemm --experts 6 --tokens-per-expert 0,1,4097,130,0,64 --n 1536 \
  --k 2048 --type e4m3 --scale block --d f32
ok "(ceil(K/128) max_tokens, 1, max_tokens)" grouped-gemm --help
bad 1 "block-wise scales are for fp8 operands" grouped-gemm --experts 2 --tokens 4 --n 64 \
  --k 128 --scale block
bad 1 "fp8 accumulation 'fast'" grouped-gemm --experts 2 --tokens 4 --n 64 --k 128 --type e4m3 \
  --scale block --fp8-accum fast
bad 1 "tile K must be 128" grouped-gemm --experts 2 --tokens 4 --n 64 --k 128 --type e4m3 \
  --scale block --config 128x128x64,c1x1,s5
bad 1 "tile N must divide 128" grouped-gemm --experts 2 --tokens 4 --n 256 --k 128 --type e4m3 \
  --scale block --config 128x160x128,c1x1,s3
bad 2 "tensor, row or block" bench grouped-gemm --scale x
bad 1 "D is bf16, f16 or f32" grouped-gemm --experts 2 --tokens 4 --n 64 --k 64 --type e4m3 \
  --d e4m3
bad 1 "row-wise scales are for fp8 operands" grouped-gemm --experts 2 --tokens 4 --n 64 --k 64 \
  --scale row
ok "_rscs_gc16" grouped-gemm --experts 16 --tokens 256 --n 2048 --k 7168 --type e4m3 --scale row
bad 2 "is not one of tensor, row, block" grouped-gemm --experts 2 --tokens 4 --n 8 --k 16 --scale x
bad 2 "apply with --check or --bench" grouped-gemm --experts 2 --tokens 4 --n 8 --k 16 --seed 3
bad 2 "apply with --bench" grouped-gemm --experts 2 --tokens 4 --n 8 --k 16 --check --iters 3
bad 2 "--experts" grouped-gemm --experts 1025 --tokens 4 --n 8 --k 16
bad 2 "unexpected argument" grouped-gemm 8 --experts 2 --tokens 4 --n 8 --k 16
# rules of the library
bad 1 "multiples of 16 bytes" grouped-gemm --experts 2 --tokens 4 --n 8 --k 17
bad 1 "split-K (4) in a grouped GEMM" grouped-gemm --experts 2 --tokens 4 --n 64 --k 64 \
  --config 128x128x64,c1x1,s4,k4
bad 1 "it runs tma-wgmma" grouped-gemm --experts 2 --tokens 4 --n 64 --k 64 \
  --config 128x128x64,c1x1,s4,tma-mmasync
bad 2 "the grouped GEMM's set is moe" bench grouped-gemm --set llm

echo "grouped-gemm CLI: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
