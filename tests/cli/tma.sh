#!/usr/bin/env bash
# hopgen tma and hopgen bench copy end to end, without a GPU: every kernel generates and
# passes ptxas, --emit writes the PTX, --json is valid JSON, bad input gets a sentence and
# the documented exit code (1: a rule broke, 2: usage), and --check / bench copy on a
# machine without the driver say so in a sentence and exit 1.
set -u
cli=${1:?usage: tma.sh PATH_TO_HOPGEN}
# shellcheck source=tests/cli/cli_test.bash
. "$(dirname "$0")/cli_test.bash"
if ! command -v ptxas > /dev/null && [ ! -x /usr/local/cuda/bin/ptxas ]; then
  echo "SKIP: ptxas not found"
  exit 77
fi

# --help everywhere.
ok "usage: hopgen tma" tma --help
ok "usage: hopgen tma" tma load --help
ok "usage: hopgen bench copy" bench copy --help
ok "usage: hopgen bench copy" bench --help

# The tutorial's kernels: generated and accepted by ptxas.
ok "ptxas -arch=sm_90a: ok" tma load
ok "kernel hg_tma_load_f16_64x64_sw128:" tma load --shape 256,256 --tile 64,64
ok "hg_tma_prefetch_f16_128x64_sw128" tma prefetch --tile 128,64
ok "clusters of 2" tma multicast
ok "hg_tma_load_bf16_64x64_sw128_mc4" tma multicast --cluster 4 --dtype bf16
ok "ptxas -arch=sm_90a: ok" tma store --dtype u8 --swizzle 64B
ok "hg_tma_reduce_add_f32" tma reduce --dtype f32 --tile 64,32
ok "hg_tma_reduce_xor_u32" tma reduce --reduce xor --dtype u32 --tile 8,32 --swizzle none
ok "hg_tma_reduce_min_s32" tma reduce-min --dtype s32 --tile 8,32
# Negative origins in every mode (the innermost a multiple of 16 B), overhanging tiles,
# padded rows, rank 3, NaN fill, --opt=value spelling.
ok "origin [-3,-8]" tma load --shape 100,200 --strides 208,1 --origin=-3,-8
ok "grid [4,2,3]" tma load --shape 3,40,104 --tile 1,32,64 --origin -1,-7,-32 --swizzle 128B
ok "nan-fill" tma load --dtype f32 --tile 32,32 --nan --origin 0,-4
ok "box(es) of [256]" tma load --shape 5000 --tile 256 --swizzle none --origin -64

# --emit writes the PTX; '-' is standard output (the summary then goes to stderr).
ok "ptxas" tma load --emit "$tmp/k.ptx"
if grep -q "^.visible .entry hg_tma_load_f16_64x64_sw128(" "$tmp/k.ptx" &&
  grep -q "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes" \
    "$tmp/k.ptx"; then pass; else fail "--emit wrote no load kernel"; fi
if "$cli" tma multicast --emit - 2> /dev/null | grep -q "multicast::cluster"; then pass; else
  fail "--emit - did not print the multicast PTX"
fi

# --json: one valid object.
for args in "load" "multicast --cluster 4" "store --dtype u32" "reduce --reduce add --dtype u32"; do
  # shellcheck disable=SC2086
  if "$cli" tma $args --json > "$tmp/j" 2> "$tmp/err"; then
    if command -v python3 > /dev/null; then
      if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ok"] and d["check"]["ran"] is False and d["ptxas"]["ran"], d' "$tmp/j"; then pass; else
        fail "tma $args --json: $(cat "$tmp/j")"
      fi
    elif grep -q '"ok": true' "$tmp/j"; then pass; else fail "tma $args --json: $(cat "$tmp/j")"; fi
  else
    fail "tma $args --json exited non-zero: $(cat "$tmp/err")"
  fi
done

# Stores and reductions at negative origins: TMA cannot take a box with a negative coordinate
# (an H200 raises an illegal instruction); the CLI says how many boxes go without TMA, in the
# text, the batch line and the JSON (the H200 case: CTAs 0, 1, 2, 3, 6 of the 3 x 3 grid).
ok "negative-origin boxes stored without TMA: 5 of 9" tma store --shape 128,128 --tile 64,64 \
  --grid 3,3 --origin=-8,-8
ok "negative-origin boxes stored without TMA: 7 of 16" tma store --dtype u8 --shape 29,208 \
  --tile 8,64 --grid 4,4 --origin=-3,-16 --swizzle none
ok "negative-origin boxes stored without TMA: 0 of" tma reduce --dtype f32 --tile 64,32
if "$cli" tma reduce --reduce max --dtype bf16 --origin=-1,0 --json > "$tmp/j" 2> "$tmp/err" &&
  grep -q '"boxes_without_tma": 4' "$tmp/j"; then pass; else
  fail "reduce at a negative origin --json: $(cat "$tmp/j" "$tmp/err")"
fi
if "$cli" tma load --origin=-8,-8 | grep -q "without TMA"; then
  fail "a load mentions boxes without TMA"
else pass; fi
printf '%s\n' 'store --shape 128,128 --tile 64,64 --grid 3,3 --origin=-8,-8' > "$tmp/neg.txt"
ok "| negative-origin boxes stored without TMA: 5" tma --batch "$tmp/neg.txt" --no-ptxas

# --batch: one case per line, options appended, REFUSED for the planner's rules.
printf '%s\n' '# cases' 'load --tile 64,64' 'multicast --cluster 4 --tile 8,64  # refused' \
  'store --dtype u32 --tile 8,32' 'reduce --reduce xor --dtype u32 --tile 8,32 --origin -8,-4' \
  > "$tmp/batch.txt"
ok "3 passed, 0 failed, 1 refused by the planner, 0 malformed" tma --batch "$tmp/batch.txt" --no-ptxas
if grep -q "^REFUSED multicast" "$tmp/out" && [ "$(grep -c '^PASS ' "$tmp/out")" -eq 3 ]; then pass; else
  fail "--batch lines: $(cat "$tmp/out")"
fi
echo 'load --frobnicate' >> "$tmp/batch.txt"
bad 1 "line 6: malformed case" tma --batch "$tmp/batch.txt" --no-ptxas

# Rules, each with its sentence (exit 1).
bad 1 "multiple of 16 B" tma load --origin 0,-4
bad 1 "multiple of 16 B" tma load --shape 64,100
bad 1 "u32 only" tma reduce --reduce inc --dtype f16
bad 1 "8, 16 or 32-bit" tma load --dtype f64
bad 1 "signed 32-bit" tma load --origin 2147483600,0
bad 1 "swizzle row" tma load --dtype f32 --tile 64,48 --swizzle 128B
# narrower than the span: rows padded to it (a 32 B inner box in 128 B rows)
ok "1 box(es) of [16,64] (tensor-map order), 2048 B per tile, stage buffer 8192 B" \
  tma load --dtype f16 --shape 256,256 --tile 64,16 --swizzle 128B
# a stride that is not a multiple of 16 B and a tile of 8 B rows: the stride is named
bad 1 "globalStrides[0] = 200 B is not a multiple of 16 B" tma load --shape 64,100 --tile 64,4
ok "2 box(es)" tma load --dtype f32 --tile 64,64 --swizzle 128B
bad 2 "--emit-mlir needs --backend mlir" tma load --emit-mlir "$tmp/k.mlir"
# Usage errors (exit 2).
bad 2 "unknown TMA kernel" tma copy
bad 2 "--cluster is for" tma load --cluster 2
bad 2 "multicast needs --cluster 2" tma multicast --cluster 1
bad 2 "one per mode" tma load --shape 64,64 --tile 64
bad 2 "not a list of integers" tma load --shape 64,abc
bad 2 "unknown option" tma load --frobnicate
bad 2 "needs a value" tma load --shape
bad 2 "--reduce applies" tma store --reduce add
bad 2 "unknown benchmark" bench frobnicate
bad 2 "--bytes" bench copy --bytes 12Q
# The copy's order is one of two words; anything else is a usage error that names them.
bad 2 "copy order 'diagonal' is not one of interleaved, contiguous" bench copy --order diagonal
bad 2 "copy order 'Contiguous' is not one of" bench copy --order Contiguous
bad 2 "copy order '' is not one of" bench copy --order ''
bad 2 "--order needs a value" bench copy --order
# The threaded copies' counts are ranges the CLI checks (the multiple of 32 is the library's).
bad 2 "--store-warps 9 is outside 1..8" bench copy --store-threads --store-warps 9
bad 2 "--store-warps needs a value" bench copy --store-threads --store-warps
bad 2 "--unroll 0: it is a count" bench copy --ldg --unroll 0
bad 2 "--unroll 17 is outside 1..16" bench copy --ldg --unroll 17
bad 2 "--ldg-threads 2048 is outside 32..1024" bench copy --ldg --ldg-threads 2048
bad 2 "--ldg takes no value" bench copy --ldg=1
bad 2 "--store-cs takes no value" bench copy --store-threads --store-cs=yes

# The MLIR backend: passed through (an error sentence until it lands, then PTX).
"$cli" tma load --backend mlir --no-ptxas > /dev/null 2> "$tmp/err"
rc=$?
if [ $rc -eq 0 ] || { [ $rc -eq 1 ] && grep -q "^hopgen: " "$tmp/err"; }; then pass; else
  fail "tma load --backend mlir exited $rc: $(cat "$tmp/err")"
fi

# No driver: --check and bench copy say so and exit 1; without --check all still works.
export HOPGEN_LIBCUDA=/nonexistent/libcuda.so.1
bad 1 "--check cannot run on the GPU" tma load --check
bad 1 "no NVIDIA driver" tma multicast --check --json
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert not d["ok"] and d["error"]["code"] == "no-driver", d' "$tmp/out" 2> /dev/null ||
  grep -q '"code": "no-driver"' "$tmp/out"; then pass; else fail "--check --json without a driver: $(cat "$tmp/out")"; fi
bad 1 "bench copy cannot run on the GPU" bench copy --bytes 1M
bad 1 "multiple of 1024" bench copy --bytes 1000
bad 1 "227 KiB" bench copy --stages 16 --box-rows 64
# The variants generate (the configuration is checked before the GPU is opened).
bad 1 "bench copy cannot run on the GPU" bench copy --bytes 1M --order contiguous
bad 1 "bench copy cannot run on the GPU" bench copy --bytes 1M --order=interleaved --split-roles
bad 1 "bench copy cannot run on the GPU" bench copy --bytes 1M --store-evict-first --evict-first
bad 1 "227 KiB" bench copy --stages 16 --box-rows 64 --split-roles
# Store threads and the ldg copy generate; options where they do not apply are refused
# with the library's sentence before the GPU is opened (exit 1).
bad 1 "bench copy cannot run on the GPU" bench copy --bytes 1M --store-threads
bad 1 "bench copy cannot run on the GPU" bench copy --bytes 1M --store-threads --store-warps 8 \
  --store-cs --order contiguous --evict-first --stages 4 --box-rows 16
bad 1 "bench copy cannot run on the GPU" bench copy --bytes 7K --ldg
bad 1 "bench copy cannot run on the GPU" bench copy --bytes 1M --ldg --unroll 4 --ldg-threads 512 \
  --ctas-per-sm 2 --store-cs
bad 1 "store_warps (2) applies to store_threads only" bench copy --store-warps 2
bad 1 "store_cs puts the .cs cache operator on the threads' stores" bench copy --store-cs
bad 1 "store_threads splits the roles already" bench copy --store-threads --split-roles
bad 1 "store_evict_first hints TMA stores" bench copy --store-threads --store-evict-first
bad 1 "227 KiB" bench copy --stages 16 --box-rows 64 --store-threads
bad 1 "split_roles applies to the TMA copy only" bench copy --ldg --split-roles
bad 1 "stages applies to the TMA copy only" bench copy --ldg --stages 4
bad 1 "a contiguous order applies to the TMA copy only" bench copy --ldg --order contiguous
bad 1 "store_threads applies to the TMA copy only" bench copy --ldg --store-threads
bad 1 "100 ldg threads per CTA is not a multiple of 32" bench copy --ldg --ldg-threads 100
bad 1 "exceed the 2048 threads an SM holds" bench copy --ldg --ldg-threads 1024 --ctas-per-sm 4
bad 1 "apply to the ldg copy only" bench copy --unroll 4
bad 1 "multiple of 1024" bench copy --ldg --bytes 1000
ok "ptxas -arch=sm_90a: ok" tma store

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
