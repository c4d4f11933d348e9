#!/usr/bin/env bash
# The GEMM variants that were environment variables, as options (docs/gemm-config.md): the
# configuration's ,gas/,gp5/,ds (--gelu, --direct-stores) and the heuristic's rules
# (--heuristic sk|pp|pp128|nobs|pt); the variables themselves change nothing; what is refused.
set -u
cli=${1:?usage: config_options.sh path/to/hopgen}
# shellcheck source=tests/cli/cli_test.bash
. "$(dirname "$0")/cli_test.bash"
export HOPGEN_LIBCUDA=/nonexistent/libcuda.so.1 # no GPU, whatever the machine has
export HOPGEN_CACHE_DIR=off

# no_frag FRAGMENT ARGS...: exits 0 and stdout lacks FRAGMENT
no_frag() {
  local frag=$1
  shift
  if "$cli" "$@" > "$tmp/out" 2> "$tmp/err"; then
    if grep -qF -- "$frag" "$tmp/out"; then fail "$* printed '$frag': $(head -c 400 "$tmp/out")"; else pass; fi
  else
    fail "$* exited $?: $(head -c 600 "$tmp/err")"
  fi
}

# the erf GELU's formula on the chosen configuration, in its text and the kernel's name
ok ",gas," gemm 1000 1000 1000 --epilogue bias,gelu --gelu as
ok "_gelu_as" gemm 1000 1000 1000 --epilogue bias,gelu --gelu as
ok "_gelu_poly5" gemm 1000 1000 1000 --epilogue gelu --config 128x128x64,gp5
no_frag ",gp7" gemm 1000 1000 1000 --epilogue gelu --gelu poly7
# direct stores: D rows TMA cannot store go element by element instead of staged
ok "staged-store" gemm 4095 4097 127
ok "direct-store" gemm 4095 4097 127 --direct-stores
ok ",ds," gemm 4095 4097 127 --direct-stores
ok "aux direct" gemm 4096 4096 512 --epilogue bias,gelu --aux --config 128x256x64,c2x1,s4,ds
# an export takes them too, its configuration chosen for tma-wgmma in place as without them
ok "_ds, configuration 128x128x64,c1x1,s3,coop,m8,e0,ds," export gemm 4095 4097 127 --direct-stores --out "$tmp"
ok "_gelu_as, configuration" export gemm 1000 1000 1000 --epilogue bias,gelu --gelu as --out "$tmp"
# the heuristic's rules
no_frag ",sk," gemm 2500 3500 1000
ok ",sk," gemm 2500 3500 1000 --heuristic sk
ok "s4,pp," gemm 4096 4096 1024 --epilogue bias,gelu --heuristic pp
ok "128x128x64,c2x1,s6,pp," gemm 4096 4096 1024 --epilogue bias,gelu --heuristic pp128
ok ",bs," gemm 4096 7168 16384 --type e4m3 --scale block
no_frag ",bs," gemm 4096 7168 16384 --type e4m3 --scale block --heuristic nobs
ok ",pt,bs," gemm 4096 7168 16384 --type e4m3 --scale block --heuristic pt
ok "e0,pt,tma" gemm 4096 7168 16384 --type e4m3 --scale block --heuristic nobs,pt
# the variables these replaced are not read
HOPGEN_STREAM_K=auto no_frag ",sk," gemm 2500 3500 1000
HOPGEN_FP8_BLOCK=none ok ",bs," gemm 4096 7168 16384 --type e4m3 --scale block
HOPGEN_EPI_SCHEDULE=pingpong ok ",coop," gemm 4096 4096 1024 --epilogue bias,gelu
HOPGEN_GELU=as no_frag "_gelu_as" gemm 1000 1000 1000 --epilogue bias,gelu
HOPGEN_EPI_STORE=direct ok "staged-store" gemm 4095 4097 127

bad 2 "--gelu 'tanh': the erf GELU's formulas are poly7, as, poly5 and poly5t" gemm 256 256 256 --gelu tanh
bad 1 "this GEMM's activation is gelu_tanh" gemm 256 256 256 --epilogue gelu_tanh --gelu as
bad 2 "gives the GELU formula twice" gemm 256 256 256 --epilogue gelu --config 128x128x64,gas,gp5
bad 2 "unknown rule 'auto'" gemm 256 256 256 --heuristic auto
bad 2 "name 'pp' twice" gemm 256 256 256 --heuristic pp128,pp
bad 2 "--config gives the configuration itself" gemm 256 256 256 --heuristic sk --config 128x128x64
bad 2 "unknown rule 'x'" bench gemm --heuristic x
bad 2 "value" gemm 256 256 256 --direct-stores=1

echo "config_options.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
