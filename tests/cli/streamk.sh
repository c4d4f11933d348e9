#!/usr/bin/env bash
# Stream-K from the CLI without a GPU: --stream-k and --config ...,sk generate one kernel
# (no reduction pass) that ptxas takes; what is refused, with the rule: stream-K with split-K,
# for a batch-invariant problem, in an exported launcher, and malformed options.
set -u
cli=${1:?usage: streamk.sh path/to/hopgen}
# shellcheck source=tests/cli/cli_test.bash
. "$(dirname "$0")/cli_test.bash"
export HOPGEN_LIBCUDA=/nonexistent/libcuda.so.1 # no GPU, whatever the machine has

# the heuristic's configuration with stream-K forced, and --config's
ok "_sk" gemm 2500 3500 1000 --stream-k
ok ",sk," gemm 2500 3500 1000 --stream-k
ok "ptxas: ok" gemm 1536 6000 900 --config 128x128x64,pp,sk --epilogue bias,gelu --beta 0.5
ok ",sk," gemm 1000 1000 4097 --type e4m3 --config 128x128x128,sk
ok ",k6," gemm 2500 3500 1000 --split-k 6
# rows TMA cannot address (K = 900 bf16, 1000 e4m3): forced stream-K or split-K keeps AUTO's
# repack, so the heuristic's cluster stands (it was refused as cp.async with a cluster)
ok "B is repacked" gemm 1536 6000 900 --stream-k
ok "A is repacked" gemm 2500 3500 1000 --type e4m3 --split-k 4
# --split-k replaces --config's stream-K and --stream-k its split-K
ok ",sk," gemm 512 512 16384 --config 128x128x64,k4 --stream-k
ok ",k3," gemm 512 512 16384 --config 128x128x64,sk --split-k 3
# ... and the split's form with it: the heuristic's atomic split (k4a) on a skinny shape
# became a stream-K configuration still marked atomic, refused (fixed 2026-11-27)
ok ",sk," gemm 127 1000 4097 --type e4m3 --stream-k
ok ",k6," gemm 127 1000 4097 --type e4m3 --split-k 6
ok ",k3," gemm 512 512 16384 --config 128x128x64,k4a --split-k 3
# ... and the decode kernel (16-row CTAs) the heuristic takes for tiny M or unaddressable
# rows: a forced K schedule is the wgmma kernel's (was "tile M = 16" refused, 2026-11-28)
ok ",sk," gemm 7 1000 16384 --stream-k
ok ",sk," gemm 7 7 7 --stream-k
ok ",sk," gemm 1 1 1 --stream-k
ok ",k4," gemm 7 1000 16384 --split-k 4
bad 1 "splits K by atomic adds only" gemm 7 1000 16384 --split-k 4 --mainloop ldg-mmasync
# a 16-row --config is the user's: kept, and refused by the generator, not replaced
bad 1 "tile M = 16" gemm 7 1000 16384 --config 16x32x128 --stream-k
"$cli" gemm 3300 3300 3328 --stream-k --json > "$tmp/j" 2> /dev/null
json_is 'j["ok"] is True and ",sk" in j["config"] and j["spill_bytes"] == 0' "$tmp/j"

bad 2 "--stream-k conflicts with --split-k" gemm 256 256 256 --split-k 4 --stream-k
bad 2 "--split-k 1 is outside 2..64" gemm 256 256 256 --split-k 1
bad 2 "--split-k 65 is outside 2..64" gemm 256 256 256 --split-k 65
bad 2 "value" gemm 256 256 256 --stream-k=1
bad 1 "stream-K for a batch-invariant problem" gemm 256 256 4096 --stream-k --batch-invariant
bad 1 "stream-K with split-K (4)" gemm 256 256 4096 --config 128x128x64,k4,sk
bad 2 "gives the stream-K twice" gemm 256 256 4096 --config 128x128x64,sk,sk
bad 1 "export: configuration with stream-K" export gemm 256 256 256 --stream-k --out "$tmp"
# a GPU run says why it cannot
bad 1 "" gemm 2500 3500 1000 --stream-k --check

echo "streamk.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
