#!/usr/bin/env bash
# The decode kernel (--mainloop ldg-mmasync) from the CLI without a GPU: it generates for
# decode shapes of any alignment, ptxas takes it, --heuristic dv picks it for AUTO (in place,
# no repack) and nothing else does; each thing it does not do is refused with its rule.
set -u
cli=${1:?usage: decode.sh path/to/hopgen}
# shellcheck source=tests/cli/cli_test.bash
. "$(dirname "$0")/cli_test.bash"
export HOPGEN_LIBCUDA=/nonexistent/libcuda.so.1 # no GPU, whatever the machine has

ok "_ldg_a16b16" gemm 1 7168 2048 --mainloop ldg-mmasync
ok "ptxas: ok" gemm 16 2048 7168 --mainloop ldg-mmasync
ok ",ldg-mmasync" gemm 16 2048 7168 --mainloop ldg-mmasync
ok "_ldg_a2b2" gemm 7 12345 678 --mainloop ldg-mmasync --ldb 679 --lda 679
ok "aligned blocks shifted into place" gemm 1 7168 2049 --mainloop ldg-mmasync
ok "ptxas: ok" gemm 1 1 1 --mainloop ldg-mmasync --epilogue bias,gelu
ok "_k3a" gemm 16 4097 127 --ldb 131 --config 16x32x32,k3a,ldg-mmasync --d e4m3 --amax
ok "ptxas: ok" gemm 9 300 4097 --mainloop ldg-mmasync --epilogue residual --type f16
# the MLIR backend, unless the machine has no MLIR tools and no cached lowering (a GPU
# machine without mlir-22-tools; CI has them)
if "$cli" gemm 4 7168 2048 --mainloop ldg-mmasync --backend mlir > /dev/null 2> "$tmp/err" ||
  ! grep -q "no cached lowering" "$tmp/err"; then
  ok "ptxas: ok" gemm 4 7168 2048 --mainloop ldg-mmasync --backend mlir
else
  echo "skip the MLIR case: $(head -c 300 "$tmp/err")"
fi
# s2: the full iterations pipelined in registers (s1, the heuristic's: the plain loop)
ok ",s1," gemm 1 4096 28672 --mainloop ldg-mmasync
ok "ptxas: ok" gemm 1 4096 28672 --config 16x32x96,s2,k2a,ldg-mmasync
ok "ptxas: ok" gemm 7 12345 678 --config 16x32x32,s2,ldg-mmasync --ldb 679
# fp8: m16n8k32, e4m3/e5m2 in any mix, per-tensor and row-wise scales, accurate and fast
ok "_ldg_a16b16_p4" gemm 1 7168 2048 --mainloop ldg-mmasync --type e4m3
ok "ptxas: ok" gemm 16 2048 7168 --mainloop ldg-mmasync --a e4m3 --b e5m2 --scale row
ok "_ldg_a1b1" gemm 7 12345 677 --mainloop ldg-mmasync --type e5m2 --fp8-accum fast --d e4m3 --amax
ok "ldg-mmasync" gemm 3 7168 2048 --type e4m3 --heuristic dv
# export: the launcher of an unsplit decode kernel; a split one needs a workspace it lacks
ok "hopgen_gemm.c" export gemm 16 7168 2048 --mainloop ldg-mmasync --out "$tmp"
bad 1 "export: configuration with split-K (k5)" export gemm 1 1024 4096 --mainloop ldg-mmasync --out "$tmp"
# the rule: AUTO's decode shapes on ldg-mmasync, in place; M = 17 keeps the GEMM
ok "ldg-mmasync" gemm 1 12345 678 --heuristic dv
ok "B is read with ld.global" gemm 1 12345 678 --heuristic dv
ok "B is read with cp.async" gemm 17 12345 678 --heuristic dv
# without the rule: rows TMA cannot address take it anyway, aligned weights of up to 64 MB
# too (larger aligned ones keep the GEMM)
ok "ldg-mmasync" gemm 1 12345 678
ok "B is read with ld.global" gemm 1 7168 2049
ok "ldg-mmasync" gemm 1 7168 2048
ok "tma-wgmma" gemm 1 28672 4096
ok "tma-wgmma" gemm 17 7168 2048
ok "tma-wgmma" gemm 16 7168 2048
ok "cpasync-wgmma" gemm 1 12345 678 --batch-invariant
# a deterministic problem is not split
"$cli" gemm 4 2048 7168 --mainloop ldg-mmasync --deterministic --json > "$tmp/j" 2> /dev/null
json_is 'j["ok"] is True and "ldg-mmasync" in j["config"] and ",k" not in j["config"]' "$tmp/j"

bad 1 "for decode shapes of M <= 16, and M = 17" gemm 17 2048 7168 --mainloop ldg-mmasync
bad 1 "this B is MN-major" gemm 4 2048 7168 --mainloop ldg-mmasync --layout RR
bad 1 "this A is MN-major" gemm 4 2048 7168 --mainloop ldg-mmasync --layout CC
bad 1 "with a batch of 3" gemm 4 2048 7168 --mainloop ldg-mmasync --batch 3
bad 1 "not e4m3 x e4m3 with block-wise scales" gemm 4 2048 7168 --mainloop ldg-mmasync --type e4m3 --scale block
bad 1 "by atomic adds only (,k4a)" gemm 4 2048 7168 --config 16x32x96,k4,ldg-mmasync
bad 1 "for a deterministic problem" gemm 4 2048 7168 --config 16x32x96,k4a,ldg-mmasync --deterministic
bad 1 "tile M = 64" gemm 4 2048 7168 --config 64x32x96,ldg-mmasync
bad 1 "tile N = 48" gemm 4 2048 7168 --config 16x48x96,ldg-mmasync
bad 1 "must be at most 2 for unaligned rows" gemm 4 2048 7169 --config 16x32x64,ldg-mmasync
bad 1 "use c1x1" gemm 4 2048 7168 --config 16x32x96,c2x1,ldg-mmasync
bad 1 "does not run stream-K" gemm 4 2048 7168 --config 16x32x96,sk,ldg-mmasync
bad 2 "unknown rule 'dvv'" gemm 4 2048 7168 --heuristic dvv

echo "decode.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
