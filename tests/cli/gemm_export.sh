#!/usr/bin/env bash
# hopgen gemm's mainloops and hopgen export gemm, without a GPU: every mainloop generates and
# passes ptxas (operands TMA cannot address through cp.async), export writes a kernel and a
# launcher that build with gcc and g++, and the options that do not belong are refused.
set -u
cli=${1:?usage: gemm_export.sh path/to/hopgen}
# shellcheck source=tests/cli/cli_test.bash
. "$(dirname "$0")/cli_test.bash"
export PATH="$PATH:/usr/local/cuda/bin"

for ml in tma-wgmma cpasync-wgmma tma-mmasync tma-ldmatrix-wgmma-rs; do
  ok "mainloop\": \"$ml\"" gemm 1000 999 4096 --mainloop "$ml" --config 128x128x64,c1x1,s4 --json
done
ok "A is repacked into packed 16-byte rows before each run" gemm 1000 999 4097
ok "A is read in place by staged window copies (2-byte aligned rows" gemm 1000 999 4097 --mainloop tma-wgmma
ok "A is read with cp.async in 4-byte chunks" gemm 1000 999 4098 --mainloop cpasync-wgmma
ok "\"a_path\": \"cp.async\"" gemm 1000 999 4097 --mainloop tma-mmasync --json
bad 2 "mainloop 'wgmma' is not one of" gemm 64 64 64 --mainloop wgmma
bad 1 "takes bf16/f16 operands, not e4m3" gemm 64 64 128 --type e4m3 --mainloop tma-mmasync
bad 1 "cp.async cannot multicast" gemm 1000 1000 4097 --config 128x128x64,c2x1,s4 --mainloop tma-wgmma
ok "A is repacked" gemm 1000 1000 4097 --config 128x128x64,c2x1,s4
bad 2 "applies with --bench" gemm 64 64 64 --compare-repack

mkdir -p "$tmp/exp"
# builds NAME WHAT: the exported launcher NAME.c compiles as C99 and as C++ (where the CUDA
# headers and g++ are here), else fails with WHAT
builds() {
  [ -d /usr/local/cuda/include ] && command -v g++ > /dev/null || return 0
  if gcc -std=c99 -Wall -Wextra -Werror -I/usr/local/cuda/include -c "$tmp/exp/$1.c" -o "$tmp/exp/$1.o" &&
    g++ -Wall -Wextra -Werror -I/usr/local/cuda/include -x c++ -c "$tmp/exp/$1.c" -o "$tmp/exp/$1-cxx.o"; then
    pass
  else fail "$2"; fi
}
ok "$tmp/exp/k.h" export gemm 1000 1000 4097 --out "$tmp/exp" --name k --ptx-only
if grep -q "in 2-byte chunks (cp.async)" "$tmp/exp/k.c"; then pass; else fail "no cp.async check in k.c"; fi
builds k "the exported launcher does not build"
# issue 12's epilogue: the launcher takes its pointers (in the kernel's order), checks them,
# the amax's state after the amax and no memset before the launch, and builds as C and C++
ok "$tmp/exp/k3.h" export gemm 1024 1024 1024 --d-type e4m3 --amax --aux --c-type f32 \
  --epilogue rowscale,colscale,bias,gelu,residual --out "$tmp/exp" --name k3 --ptx-only
if ! grep -q "cuMemset" "$tmp/exp/k3.c" &&
  tr -d '\n' < "$tmp/exp/k3.c" | grep -q "params\[np++\] = &rowscale;  params\[np++\] = &colscale;  params\[np++\] = &bias;  params\[np++\] = &residual;  params\[np++\] = &scale_d;  params\[np++\] = &aux;  params\[np++\] = &ldaux;  params\[np++\] = &bs_aux;  params\[np++\] = &amax;  params\[np++\] = &amax_state;" &&
  grep -q "this kernel's epilogue reads args->residual, which is 0" "$tmp/exp/k3.c" &&
  grep -q "this kernel's epilogue reads args->amax_state, which is 0" "$tmp/exp/k3.c" &&
  grep -q "if (amax_state % 4 != 0)" "$tmp/exp/k3.c" &&
  grep -q "CUdeviceptr amax_state;" "$tmp/exp/k3.h"; then
  pass
else fail "k3.c lacks the epilogue's parameters, checks or the amax's state (or still has a memset)"; fi
builds k3 "the exported launcher with an epilogue does not build"
# aux of D's type beside a TMA-stored D: its own tensor map, checked and encoded by the
# launcher, passed right after D's
ok "$tmp/exp/k4.h" export gemm 1024 1024 1024 --epilogue bias,gelu --aux --out "$tmp/exp" --name k4 --ptx-only
if grep -q "this kernel stores aux with TMA" "$tmp/exp/k4.c" &&
  tr -d '\n' < "$tmp/exp/k4.c" | grep -q "params\[np++\] = &map_d;  params\[np++\] = &map_aux;  params\[np++\] = &d;"; then
  pass
else fail "k4.c lacks aux's tensor map"; fi
builds k4 "the exported launcher with aux through TMA does not build"
"$cli" export gemm 512 512 512 --out "$tmp/exp" --name k2 --ptx-only --json > "$tmp/j" 2> "$tmp/err"
json_is 'j["ok"] and j["command"] == "export" and len(j["files"]) == 3 and j["files"][1].endswith("k2.h")' "$tmp/j"
bad 2 "only GEMMs are exported" export tma 64 64 64
bad 2 "writes files without running anything" export gemm 64 64 64 --check
bad 2 "options of hopgen export gemm" gemm 64 64 64 --name x
# split-K by the heuristic on few output tiles; batch invariance: one configuration for any M
ok "config 64x64x64,c1x1,s8,coop,m8,e0,k33a," gemm 128 128 32768
# split-K in a fixed order for a deterministic problem; atomic adds refused for it
ok "config 64x128x64,c1x1,s8,coop,m8,e0,k64," gemm 128 128 32768 --deterministic
bad 1 "use ,k64 (the reduction pass" gemm 128 128 32768 --deterministic --config 64x128x64,k64a
bad 1 "split-K by atomic adds without a split" gemm 128 128 32768 --config 64x128x64,k1a
for m in 1 77 5000; do
  ok "config 64x64x64,c1x1,s8,coop,m8,e0,tma-wgmma," gemm "$m" 128 70000 --batch-invariant --deterministic
done
bad 1 "not a C identifier" export gemm 64 64 64 --out "$tmp/exp" --name 9x --ptx-only
ok "usage: hopgen export gemm" export --help

echo "gemm and export CLI: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
