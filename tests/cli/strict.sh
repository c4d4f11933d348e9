#!/usr/bin/env bash
# Issue 14's table, row by row, plus the classes of bug behind it: every write checked, one
# option parser (strict numbers, --opt=value everywhere, repeats and conflicts refused,
# usage errors exit 2), --json failures as JSON, the tma --batch reader, and an unusable
# cache directory or home said in a note with nothing created.
set -u
cli=${1:?usage: strict.sh PATH_TO_HOPGEN}
# shellcheck source=tests/cli/cli_test.bash
. "$(dirname "$0")/cli_test.bash"
have_ptxas=0
if command -v ptxas > /dev/null || [ -x /usr/local/cuda/bin/ptxas ]; then have_ptxas=1; fi
have_mlir=0
if command -v "${HOPGEN_MLIR_OPT:-mlir-opt-22}" > /dev/null; then have_mlir=1; fi
export HOPGEN_LIBCUDA=/nonexistent/libcuda.so.1 # no GPU, whatever the machine has

gemm=(gemm 256 256 128)

# --- Row (what the issue found): `gemm ... --emit /proc/version`: exit 0, nothing written.
bad 1 "writing /proc/version failed" "${gemm[@]}" --emit /proc/version
# --- Row (what the issue found): `gemm ... --emit /dev/full`: exit 0, nothing written.
bad 1 "writing /dev/full failed: No space left on device" "${gemm[@]}" --emit /dev/full
bad 1 "cannot open /nonexistent-dir/k.ptx for writing" "${gemm[@]}" --emit /nonexistent-dir/k.ptx
# --- Row (what the issue found): `gemm ... --backend mlir --emit-mlir /dev/full`: exit 0, nothing written.
if [ $have_mlir -eq 1 ]; then
  bad 1 "writing /dev/full failed" "${gemm[@]}" --backend mlir --emit-mlir /dev/full
fi
bad 2 "--emit-mlir needs --backend mlir" "${gemm[@]}" --emit-mlir "$tmp/k.mlir"
# The other file writers: tma --emit, layout show --svg.
bad 1 "writing /dev/full failed" tma load --no-ptxas --emit /dev/full
bad 1 "writing the picture failed" layout show "(4,8):(1,4)" --svg /dev/full
# A write that works still works, and --emit - is standard output.
if "$cli" "${gemm[@]}" --emit "$tmp/k.ptx" > /dev/null 2>&1 || [ $have_ptxas -eq 0 ]; then
  if grep -q "^.visible .entry hg_gemm_" "$tmp/k.ptx"; then pass; else fail "--emit wrote no kernel"; fi
else
  fail "${gemm[*]} --emit $tmp/k.ptx failed"
fi

# --- Row (what the issue found): most commands with stdout on a full disk: exit 0.
full() {
  "$cli" "$@" > /dev/full 2> "$tmp/err"
  local rc=$?
  if [ $rc -eq 1 ] && grep -q "writing standard output failed: No space left on device" "$tmp/err"; then
    pass
  else fail "$* > /dev/full exited $rc: $(head -c 300 "$tmp/err")"; fi
}
full --version
full --help
full gemm --help
# A help longer than stdio's buffer (gemm's is past 4096 bytes) fails inside its own write:
# the sentence must still name the reason. stdbuf shrinks the buffer to 64 bytes so that
# every such help overflows it, whatever its length. (stdbuf preloads its library, which an
# AddressSanitizer build refuses unless told not to check the link order, and whose buffer
# LeakSanitizer then reports: CI's sanitizer job runs this too.)
if command -v stdbuf > /dev/null; then
  for c in "gemm" "export gemm" "bench gemm" "grouped-gemm" "bench grouped-gemm"; do
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0" \
      stdbuf -o 64 "$cli" $c --help > /dev/full 2> "$tmp/err"
    rc=$?
    if [ $rc -eq 1 ] && grep -q "writing standard output failed: No space left on device" "$tmp/err" &&
       [ "$(wc -l < "$tmp/err")" -eq 1 ]; then
      pass
    else fail "$c --help > /dev/full (64-byte buffer) exited $rc: $(head -c 300 "$tmp/err")"; fi
  done
fi
full layout coalesce "(4,8):(1,4)"
full layout coalesce "(4,8):(1,4)" --json
full layout show "(8,8):(8,1)"
full plan tma --dtype bf16 --shape 1000,4096 --stride 4096,1 --tile 128,64
full plan mma --a bf16 --tile 128,256,64 --json
full tma load --no-ptxas
full tma load --no-ptxas --emit -
printf 'size\t(4,8):(1,4)\t_\n' > "$tmp/one.tsv"
"$cli" layout eval < "$tmp/one.tsv" > /dev/full 2> "$tmp/err"
if [ $? -eq 1 ] && grep -q "No space left" "$tmp/err"; then pass; else fail "layout eval > /dev/full"; fi
if [ $have_ptxas -eq 1 ]; then full "${gemm[@]}"; fi

# --- Row (what the issue found): `gemm ... --batch 4294967297` ran as batch 1 (an int cast).
bad 2 "--batch 4294967297 is outside 1..2147483647" "${gemm[@]}" --batch 4294967297
# --- Row (what the issue found): `gemm ... --batch 0` quietly ran as 1.
bad 2 "--batch 0: it is a count, and must be at least 1" "${gemm[@]}" --batch 0
bad 2 "--batch -3: it is a count" "${gemm[@]}" --batch -3
bad 2 "the operand M 0: it is a count" gemm 0 256 128
bad 2 "--iters 0: it is a count" "${gemm[@]}" --bench --iters 0
bad 2 "--lda 0: it is a count" "${gemm[@]}" --lda 0
bad 2 "--runs 0: it is a count" tma load --check --runs 0
bad 2 "--stages 0: it is a count, and must be at least 2" bench copy --stages 0
bad 2 "item 1 is outside the range" tma load --tile 0,64
# --- Row (what the issue found): `gemm M N K --m 5` silently overrode M.
bad 2 "--m conflicts with the operand M" "${gemm[@]}" --m 5
bad 2 "the operand M conflicts with --m" gemm --m 5 256 256 128
# Repeated and conflicting options, everywhere.
bad 2 "--batch is given twice" "${gemm[@]}" --batch 2 --batch=3
bad 2 "--a conflicts with --type" "${gemm[@]}" --type f16 --a bf16
bad 2 "--shape is given twice" tma load --shape 64,64 --shape 128,128
bad 2 "--tile is given twice" tma load --tile 64,64 --box 64,64
bad 2 "--ptxas conflicts with --no-ptxas" tma load --no-ptxas --ptxas
bad 2 "--layout conflicts with --tile" plan tma --dtype bf16 --shape 64 --stride 1 --tile 64 --layout 64:1
bad 2 "--wg conflicts with --warpgroups" plan mma --a bf16 --tile 128,128,64 --warpgroups 2 --wg 2,1
bad 2 "--json is given twice" layout coalesce 8:1 --json --json
bad 2 "unexpected argument '4'" gemm 1 2 3 4
# Options that would be silently ignored.
bad 2 "--seed picks the data of a GPU run" "${gemm[@]}" --seed 3
bad 2 "--runs, --seed, --device" tma load --runs 3
bad 2 "leave out --check, --bench and --tune" "${gemm[@]}" --check --emit "$tmp/x.ptx"
# --- Row (what the issue found): `--alpha nan`, `--beta 1e999` accepted.
bad 2 "--alpha nan is not a finite number" "${gemm[@]}" --alpha nan
bad 2 "--beta 1e999 is not a finite number" "${gemm[@]}" --beta 1e999
bad 2 "--beta 1e39 is not a finite number that a 32-bit float can hold" "${gemm[@]}" --beta 1e39
bad 2 "--alpha inf is not a finite number" "${gemm[@]}" --alpha=inf
bad 2 "--alpha '0.5x' is not a number" "${gemm[@]}" --alpha 0.5x
bad 2 "--max-cold-ms -1 must be positive" tma load --check --max-cold-ms -1
bad 2 "--min-ratio nan is not a finite number" bench copy --min-ratio nan

# --- Row (what the issue found): a `tma --batch` line over 2,047 bytes was split into several passing cases.
{
  printf 'load --tile 64,64 --no-ptxas'
  head -c 5000 /dev/zero | tr '\0' ' '
  printf -- '--dtype bf16\n'
  printf 'store --dtype u32 --tile 8,32 --no-ptxas # a comment %s\n' "$(head -c 3000 /dev/zero | tr '\0' x)"
} > "$tmp/long.txt"
ok "2 passed, 0 failed, 0 refused by the planner, 0 malformed" tma --batch "$tmp/long.txt"
if grep -q "^PASS    load bf16" "$tmp/out"; then pass; else fail "the long line lost its tail: $(cat "$tmp/out")"; fi
# 200 words on one line: every one read (the old reader kept 64).
{
  printf 'load --no-ptxas'
  for _ in $(seq 1 99); do printf ' --nan'; done
  printf '\n'
} > "$tmp/words.txt"
bad 1 "--nan is given twice" tma --batch "$tmp/words.txt"
# --- Row (what the issue found): `tma --batch` given a directory: "0 passed, 0 failed", exit 0.
bad 1 "is a directory, not a regular file" tma --batch "$tmp"
bad 1 "cannot open $tmp/none" tma --batch "$tmp/none"
printf '# nothing\n\n' > "$tmp/empty.txt"
bad 1 "has no cases" tma --batch "$tmp/empty.txt"
if printf 'load --no-ptxas\n' | "$cli" tma --batch - > "$tmp/out" 2>&1; then pass; else
  fail "tma --batch - (stdin)"
fi
printf 'load\n' > "$tmp/one.txt"
ok "1 passed" tma --batch="$tmp/one.txt" --no-ptxas

# --- Row (what the issue found): `gemm 99999999999999999999 ...` reported as M = 9223372036854775807.
bad 2 "the operand M 99999999999999999999 is outside 1..9223372036854775807" gemm 99999999999999999999 256 128
bad 2 "--seed 99999999999999999999 is outside" tma load --check --seed 99999999999999999999
bad 2 "item 1 is outside the range" tma load --shape 99999999999999999999,64
bad 2 "--device '1x' is not an integer" tma load --check --device 1x
bad 2 "--l2 ' 2' is not an integer" plan tma --dtype bf16 --shape 64 --stride 1 --tile 64 --l2 " 2"
bad 2 "item 2 is empty" tma load --shape 64,,64
bad 2 "item 3 is empty" tma load --shape 64,64,
# --- Row (what the issue found): a trailing unknown flag said "needs a value".
bad 2 "unknown option '--bogus'" "${gemm[@]}" --bogus
bad 2 "unknown option '--bogus'" plan tma --dtype bf16 --bogus
bad 2 "unknown option '--bogus'" plan mma --tile 128,128,64 --bogus
bad 2 "unknown option '--bogus'" tma load --bogus
bad 2 "unknown option '--bogus'" bench copy --bogus
bad 2 "unknown option '--bogus'" bench gemm --bogus
# bench gemm --epilogue: the chain's options refused as hopgen gemm refuses them
bad 2 "--aux stores the values before the activation" bench gemm --epilogue bias --aux
bad 2 "--bias-type applies with a bias" bench gemm --bias-type f32
bad 2 "activation 'bogus' is not one of" bench gemm --epilogue bogus
bad 1 "no NVIDIA driver" bench gemm --epilogue bias,gelu --d-type e4m3 --amax --shapes 1
bad 2 "unknown option '--bogus'" layout show 8:1 --bogus
bad 2 "unknown option '--bogus'" layout eval --bogus
bad 2 "unknown option '--bogus'" layout coalesce 8:1 --bogus
bad 2 "unknown option '--bogus'" demo --bogus
bad 2 "--shape needs a value" tma load --shape
bad 2 "--json takes no value" layout coalesce 8:1 --json=yes

# --- Row (what the issue found): `layout eval` dropped malformed lines, so output lines no longer matched input.
printf 'size\t(4,8):(1,4)\t_\nbogus\n# comment\nsize\t8\t_\t1\textra\n\ncoalesce\t(4,8):(1,4)\t_\t?\nonly\ttwo\n' > "$tmp/mixed.tsv"
"$cli" layout eval < "$tmp/mixed.tsv" > "$tmp/out" 2> "$tmp/err"
rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l < "$tmp/out")" -eq "$(wc -l < "$tmp/mixed.tsv")" ]; then pass; else
  fail "layout eval: exit $rc, $(wc -l < "$tmp/out") lines for $(wc -l < "$tmp/mixed.tsv")"
fi
printf 'size\t(4,8):(1,4)\t_\t32\nbogus\t\t\terror\n# comment\nsize\t8\t_\terror\n\ncoalesce\t(4,8):(1,4)\t_\t32:1\nonly\ttwo\t\terror\n' > "$tmp/want.tsv"
if cmp -s "$tmp/want.tsv" "$tmp/out"; then pass; else fail "layout eval lines: $(cat -A "$tmp/out")"; fi
if grep -q "hopgen: line 2: expected op<TAB>arg1<TAB>arg2" "$tmp/err" &&
  grep -q "hopgen: line 4: .*more than 4 columns" "$tmp/err"; then pass; else
  fail "layout eval's reasons: $(cat "$tmp/err")"
fi
"$cli" layout eval --json < "$tmp/mixed.tsv" > "$tmp/out" 2> /dev/null
if [ "$(wc -l < "$tmp/out")" -eq 7 ] && command -v python3 > /dev/null; then
  if python3 -c 'import json,sys
rows=[json.loads(l) for l in open(sys.argv[1])]
assert [r["line"] for r in rows] == list(range(1, 8))
assert rows[0]["ok"] and rows[0]["result"] == "32"
assert not rows[1]["ok"] and rows[1]["error"]["code"] == "parse"
assert rows[2]["comment"] == "# comment"
assert rows[5]["result"] == "32:1"' "$tmp/out"; then pass; else fail "layout eval --json: $(cat "$tmp/out")"; fi
elif [ "$(wc -l < "$tmp/out")" -eq 7 ]; then pass; else fail "layout eval --json: $(cat "$tmp/out")"; fi

# --- Row (what the issue found): `--check --json` without a GPU printed no JSON.
if "$cli" "${gemm[@]}" --check --json > "$tmp/j" 2> /dev/null; then
  fail "gemm --check --json without a GPU succeeded"
else pass; fi
json_is 'j["command"] == "gemm" and j["ok"] is False and j["error"]["code"] == "no-driver"' "$tmp/j"
"$cli" tma load --check --json > "$tmp/j" 2> /dev/null
json_is 'j["ok"] is False and j["error"]["code"] == "no-driver"' "$tmp/j"
"$cli" bench copy --bytes 1M --json > "$tmp/j" 2> /dev/null
json_is 'j["ok"] is False and j["error"]["code"] == "no-driver"' "$tmp/j"
bad 1 "no NVIDIA driver" bench gemm --shapes 1
# With --json every failure is one JSON object on stdout, usage errors included.
"$cli" "${gemm[@]}" --batch 0 --json > "$tmp/j" 2> /dev/null
json_is 'j["ok"] is False and j["error"]["code"] == "usage" and "--batch 0" in j["error"]["message"]' "$tmp/j"
"$cli" plan tma --json --dtype bf17 --shape 8 --stride 1 --tile 8 > "$tmp/j" 2> /dev/null
json_is 'j["command"] == "plan tma" and j["error"]["code"] == "usage"' "$tmp/j"
"$cli" plan tma --json --dtype bf16 --shape 1000,1004 --stride 1004,1 --tile 128,64 > "$tmp/j" 2> /dev/null
json_is 'j["ok"] is False and "globalStrides" in j["error"]["message"]' "$tmp/j"
"$cli" "${gemm[@]}" --json --emit /dev/full > "$tmp/j" 2> /dev/null
json_is 'j["ok"] is False and j["error"]["code"] == "io" and "kernel" in j' "$tmp/j"

# --- Row (what the issue found): `layout` operations had no --json.
"$cli" layout logical_divide "(8,16):(16,1)" "[2:1,4:1]" --json > "$tmp/j"
json_is 'j["ok"] and j["op"] == "logical_divide" and j["result"] == "((2,4),(4,4)):((16,32),(1,4))" and len(j["args"]) == 2' "$tmp/j"
"$cli" layout complement "(8,2):(1,2)" 16 --json > "$tmp/j" 2> /dev/null
json_is 'j["ok"] is False and "in-bound" in j["error"]["message"]' "$tmp/j"
"$cli" layout show "(2,3):(3,1)" --json > "$tmp/j"
json_is 'j["ok"] and j["layout"] == "(2,3):(3,1)" and "| 3 | 4 | 5 |" in j["table"]' "$tmp/j"
"$cli" layout show "(4,8):(1,4)" --svg "$tmp/l.svg" --json > "$tmp/j"
json_is 'j["ok"] and j["svg"].endswith("l.svg")' "$tmp/j"

# --- Row (what the issue found): `--opt=value` worked in `tma` and failed elsewhere.
if [ $have_ptxas -eq 1 ]; then
  ok "config 64x64x64" gemm --m=256 --n=256 --k=128 --type=f16 --config=64x64x64,s4
fi
ok "TMA load plan" plan tma --dtype=bf16 --shape=1000,4096 --stride=4096,1 --tile=128,64 --swizzle=128B
ok "tile 128x128x64" plan mma --a=bf16 --tile=128,128,64 --warpgroups=2
ok "wrote" layout show "(4,8):(1,4)" --svg="$tmp/eq.svg"
bad 1 "bench copy cannot run on the GPU" bench copy --bytes=1M --stages=4
ok "tma load" tma load --shape=128,128 --no-ptxas
bad 1 "no NVIDIA driver" bench gemm --types=bf16 --shapes=1
# Negative numbers are values, not options, in either spelling.
ok "origin [-3,-8]" tma load --no-ptxas --shape 100,200 --strides 208,1 --origin -3,-8
# --- Row (what the issue found): usage errors exited 1 in some commands and 2 in others.
bad 2 "unknown command 'frob'" frob
bad 2 "missing operation" layout
bad 2 "missing LAYOUT" layout show
bad 2 "takes LAYOUT TILER" layout logical_divide 8:1
bad 2 "unknown plan 'gemm'" plan gemm
bad 2 "unknown TMA kernel 'copy'" tma copy
bad 2 "unknown benchmark" bench frob
bad 2 "give the sizes" gemm 256 256
bad 2 "--dtype: unknown element type 'bf17'" plan tma --dtype bf17 --shape 8 --stride 1 --tile 8
bad 2 "--type: unknown element type" gemm 64 64 64 --type bf17
bad 2 "--backend" tma load --backend cuda
bad 2 "--types" bench gemm --types bf16,,e4m3
bad 2 "--config: configuration '128x128': '128x128' is not a tile" gemm 64 64 64 --config 128x128
bad 2 "activation 'tanh' is not one of none, relu, gelu" gemm 64 64 64 --epilogue tanh
bad 2 "clamp takes clamp:LO:HI with finite LO <= HI" gemm 64 64 64 --epilogue clamp:2:1
bad 2 "clamp takes clamp:LO:HI" gemm 64 64 64 --epilogue clamp:1
ok "_gelu_tanh" gemm 64 64 64 --epilogue gelu_tanh
ok "_biasmf32_silu" gemm 64 64 64 --epilogue bias_m,silu --bias-type f32
bad 2 "'bias' out of place - the chain runs rowscale, colscale" gemm 64 64 64 --epilogue relu,bias
ok "_rscs_res" gemm 64 64 64 --epilogue rowscale,colscale,residual
bad 2 "--bias-type applies with a bias" gemm 64 64 64 --bias-type f16
bad 1 "a bias vector of e4m3" gemm 64 64 64 --epilogue bias --bias-type e4m3
# Issue 12's output conversions: fp8 D, C's type, aux, amax, the output scale.
ok "_cbf16_amax" gemm 256 256 128 --d-type e4m3 --amax
ok "_biasnbf16_gelu_poly5t_cf32_auxf16_amax" gemm 256 256 128 --d-type e5m2 --epilogue bias,gelu \
  --c-type f32 --aux --aux-type f16 --amax --beta 0.5
ok "_relu_cf16_auxf32" gemm 256 256 128 --d f32 --c-type f16 --epilogue relu --aux
bad 2 "--aux stores the values before the activation, and --epilogue has none" gemm 64 64 64 --aux
bad 2 "--aux stores the values before the activation" gemm 64 64 64 --epilogue bias --aux
bad 2 "--aux-type applies with --aux" gemm 64 64 64 --epilogue relu --aux-type f32
bad 2 "--scale-d scales an fp8 D (--d-type e4m3 or e5m2); D is bf16" gemm 64 64 64 --scale-d 2 --check
bad 2 "--scale-d is data the driver uploads for a GPU run" gemm 64 64 64 --d-type e4m3 --scale-d 2
bad 2 "--c-type u8: C and aux may be bf16, f16 or f32" gemm 64 64 64 --c-type u8
bad 1 "C of e4m3: C (and the residual, which has C's type) may be bf16, f16 or f32" gemm 64 64 64 --c-type e4m3
bad 1 "an aux output of e5m2" gemm 64 64 64 --epilogue gelu --aux --aux-type e5m2
bad 1 "D may be bf16, f16, f32, e4m3 or e5m2" gemm 64 64 64 --d-type s8
bad 2 "--d-type conflicts with --d given before it" gemm 64 64 64 --d f16 --d-type f32
ok '"tma_store": true' gemm 256 256 128 --d-type e4m3 --amax --config 128x128x64,e64 --json
ok '"tma_store": false' gemm 256 248 128 --d-type e5m2 --amax --json
# fp8's accumulation: accurate (promote every 4 k-blocks) by default, fast, or every N
ok "_p4" gemm 256 256 1024 --type e4m3
ok "_p1" gemm 256 256 1024 --type e4m3 --fp8-promote 1
ok "_fast" gemm 256 256 1024 --type e4m3 --fp8-accum fast
bad 2 "fp8 accumulation 'exact' is not one of accurate, fast" gemm 64 64 64 --type e4m3 --fp8-accum exact
bad 2 "--fp8-accum, --fp8-promote and --scale apply to fp8 operands" gemm 64 64 64 --fp8-accum fast
bad 2 "--fp8-accum fast never promotes" gemm 64 64 64 --type e4m3 --fp8-accum fast --fp8-promote 2
bad 2 "--fp8-promote" gemm 64 64 64 --type e4m3 --fp8-promote 17
bad 1 "two accumulator sets of 128 registers" gemm 4096 4096 4096 --type e4m3 --config 128x256x128,c2x1
# staggered promotions (a tuner choice: the heuristic takes none, measured slower), and their refusals
ok "_coop_p4" gemm 4096 4096 4096 --type e4m3
ok "_p4_ps" gemm 4096 4096 4096 --type e4m3 --config 128x128x128,c2x1,ps
bad 1 "need two consumer warpgroups on one tile" gemm 4096 4096 4096 --type e4m3 --config 64x128x128,pp,ps
bad 1 "this GEMM promotes nothing (--fp8-accum fast)" gemm 4096 4096 4096 --type e4m3 --fp8-accum fast --config 128x128x128,ps
bad 1 "has no half" gemm 4096 4096 4096 --type e4m3 --scale block --config 128x128x128,ps
bad 2 "unknown field 'px'" gemm 4096 4096 4096 --type e4m3 --config 128x128x128,px
# two partial sets (a tuner choice, not the heuristic's: measured slower on 128-row tiles)
ok "_coop_sblk" gemm 4096 7168 16384 --type e4m3 --scale block
ok "_sblk_pd" gemm 4096 7168 16384 --type e4m3 --scale block --config 128x128x128,c2x1,pd
ok "_p4_pd" gemm 4096 4096 4096 --type e4m3 --config 128x128x128,c2x1,pd
bad 1 "three (two partial sets: pd) accumulator sets" gemm 4096 4096 4096 --type e4m3 --config 128x192x128,c2x1,pd
bad 1 "fp8_promote 1..4" gemm 4096 4096 4096 --type e4m3 --fp8-promote 8 --config 128x128x128,pd
# fp8 scaling: row-wise (epilogue vectors), block-wise (1x128 / 128x128 in the main loop)
ok "_srow_p4" gemm 4096 4096 4096 --type e4m3 --scale row
ok "_sblk_pd_bs" gemm 4096 7168 16384 --type e4m3 --scale block
ok "_sblk" gemm 100 300 1000 --type e4m3 --scale block --config 64x64x128,pp
bad 2 "fp8 scaling 'col' is not one of tensor, row, block" gemm 64 64 64 --type e4m3 --scale col
bad 2 "--scale apply to fp8 operands" gemm 64 64 64 --scale row
bad 1 "tile N must divide 128" gemm 4096 4096 4096 --type e4m3 --scale block --config 128x160x128
bad 1 "'fast' (the whole K in wgmma's accumulator) cannot apply them" gemm 64 64 256 --type e4m3 --scale block --fp8-accum fast
bad 2 "hopgen demo takes no arguments" demo now
bad 2 "--version takes no arguments" --version now
"$cli" > /dev/null 2>&1
rc=$?
if [ $rc -eq 2 ]; then pass; else fail "hopgen without a command exited $rc, not 2"; fi
# hopgen --version: the library's version.
ok "hopgen 0." --version

# --- Row (what the issue found): `HOME=/nonexistent hopgen gemm ... --backend mlir` created /nonexistent/.cache/hopgen.
home=$tmp/no-such-home
if [ $have_mlir -eq 1 ]; then
  env -u HOPGEN_CACHE_DIR -u XDG_CACHE_HOME HOME="$home" "$cli" gemm 128 128 64 --backend mlir \
    > /dev/null 2> "$tmp/err"
else
  env -u HOPGEN_CACHE_DIR -u XDG_CACHE_HOME HOME="$home" "$cli" tma load --check > /dev/null 2> "$tmp/err"
fi
if [ ! -e "$home" ]; then pass; else fail "$home was created"; fi
if grep -q "^hopgen: note: HOME=$home is not an existing directory.*running without the cache" "$tmp/err"; then
  pass
else fail "no note on the missing home: $(cat "$tmp/err")"; fi
# --- Row (what the issue found): an unusable HOPGEN_CACHE_DIR silently disabled caching.
touch "$tmp/a-file"
HOPGEN_CACHE_DIR=$tmp/a-file/cache "$cli" tma load --check > /dev/null 2> "$tmp/err"
if grep -q "^hopgen: note: the cache directory $tmp/a-file/cache (from HOPGEN_CACHE_DIR) cannot be used: $tmp/a-file is not a directory; running without the cache" "$tmp/err"; then
  pass
else fail "no note on the unusable HOPGEN_CACHE_DIR: $(cat "$tmp/err")"; fi
if [ "$(grep -c "note:" "$tmp/err")" -eq 1 ]; then pass; else fail "the note is not said once"; fi
HOPGEN_CACHE_DIR=off "$cli" tma load --check > /dev/null 2> "$tmp/err"
if grep -q "note:" "$tmp/err"; then fail "HOPGEN_CACHE_DIR=off is not a problem to note"; else pass; fi

echo "strict CLI: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
