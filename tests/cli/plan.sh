#!/usr/bin/env bash
# hopgen plan end to end: TMA and TiledMma plans printed readably and as JSON (checked with
# python3's json module when it is there), and bad input refused with "hopgen: <sentence>".
set -u
cli=${1:?usage: plan.sh PATH_TO_HOPGEN}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

# expect_has FRAGMENT ARGS...: the command succeeds and its output contains FRAGMENT.
expect_has() {
  local frag=$1
  shift
  if "$cli" "$@" > "$tmp/out" 2> "$tmp/err"; then
    if grep -qF -- "$frag" "$tmp/out"; then pass; else
      fail "$* lacks '$frag':"
      cat "$tmp/out" >&2
    fi
  else
    fail "$* failed: $(cat "$tmp/err")"
  fi
}
# expect_fail CODE FRAGMENT ARGS...: exits CODE with "hopgen: ..." containing FRAGMENT.
expect_fail() {
  local code=$1 frag=$2
  shift 2
  "$cli" "$@" > /dev/null 2> "$tmp/err"
  local rc=$?
  if [ "$rc" -ne "$code" ]; then fail "$* exited $rc, expected $code ($(cat "$tmp/err"))"; return; fi
  if grep -q "^hopgen: " "$tmp/err" && grep -qF -- "$frag" "$tmp/err"; then pass; else
    fail "$* said '$(cat "$tmp/err")', expected 'hopgen: ...$frag...'"
  fi
}
# json_check PYEXPR ARGS...: the output parses as JSON and PYEXPR (over j) is true.
json_check() {
  local expr=$1
  shift
  if ! "$cli" "$@" > "$tmp/j.json" 2> "$tmp/err"; then fail "$* failed: $(cat "$tmp/err")"; return; fi
  if ! command -v python3 > /dev/null; then
    if grep -q '^{' "$tmp/j.json"; then pass; else fail "$* printed no JSON object"; fi
    return
  fi
  if python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($expr) else 1)" \
    "$tmp/j.json" 2> "$tmp/perr"; then pass; else
    fail "$* --json: '$expr' does not hold: $(head -c 600 "$tmp/j.json") $(cat "$tmp/perr")"
  fi
}

tma=(plan tma --dtype bf16 --shape 1000,4096 --stride 4096,1 --tile 128,64 --swizzle 128B)
expect_has "Sw<3,3,3> o 0 o (128,64):(64,1)" "${tma[@]}"
expect_has "swizzle 128B (3)" "${tma[@]}"
expect_has "box 0   (0,0)  smem +0" "${tma[@]}"
expect_has "mbarrier: expect 16384 B per tile" "${tma[@]}"
expect_has "at origin: (64,-3)" "${tma[@]}" --origin -3,64
expect_has "mask 0x0003; each CTA issues 1 box(es) (8192 B); every CTA's mbarrier expects 16384 B" \
  "${tma[@]}" --cluster 2
expect_has "box 1   (0,64)  smem +8192  CTA 1" "${tma[@]}" --cluster 2
expect_has "TMA reduce-add plan" "${tma[@]}" --op reduce-add
expect_has "TMA prefetch plan" "${tma[@]}" --op prefetch
json_check 'j["tensor_map"]["box_dim"] == [64, 128] and j["tensor_map"]["global_strides_bytes"] == [8192] and j["tensor_map"]["swizzle"] == 3' "${tma[@]}" --json
json_check 'j["multicast"]["mask"] == "0x000f" and len(j["boxes"]) == 4 and j["boxes"][3]["smem_offset"] == 12288 and j["multicast"]["expect_tx_bytes"] == 16384 and j["boxes"][1]["abs_coords"] == [64, 29]' \
  "${tma[@]}" --cluster 4 --origin -3,64 --json
json_check 'j["tensor_map"]["oob_fill"] == "nan" and j["tensor_map"]["l2_promotion"] == 2' \
  "${tma[@]}" --nan --l2 2 --json
# The default swizzle is the widest that fits; --layout takes any composed layout.
expect_has "swizzle 64B (2)" plan tma --dtype f16 --shape 512,96 --stride 96,1 --tile 64,32
expect_has "boxes: 8 of 1024 B" plan tma --dtype f32 --shape 5000 --stride 1 --tile 2048
expect_has "boxDim" plan tma --dtype bf16 --shape 512,256 --stride 1,512 \
  --layout "Sw<3,3,3> o 0 o (64,64):(1,64)"

# Every refusal: a sentence, exit 1 (2 for a value that does not parse as its kind).
expect_fail 1 "globalStrides[0] = 2008 B is not a multiple of 16 B" \
  plan tma --dtype bf16 --shape 1000,1004 --stride 1004,1 --tile 128,64
expect_fail 1 "the innermost coordinate 3 (tensor mode 1) is 6 B into the row" "${tma[@]}" --origin 0,3
expect_fail 1 "a multicast cluster of 17 CTAs is over 16" "${tma[@]}" --cluster 17
expect_fail 1 "a cluster of 3 CTAs does not divide the tile" "${tma[@]}" --cluster 3
expect_fail 1 "multicast (a cluster of 2) applies to loads only" "${tma[@]}" --cluster 2 --op store
expect_fail 1 "TMA reduce-inc does not take bf16" "${tma[@]}" --op reduce-inc
expect_fail 1 "no mode of the tensor has stride 1" plan tma --dtype bf16 --shape 10,10 --stride 16,160 --tile 8,8
expect_fail 1 "TMA needs a 16-byte aligned globalAddress" "${tma[@]}" --align 8
expect_fail 2 "unknown element type 'bf17'" plan tma --dtype bf17 --shape 8 --stride 1 --tile 8
expect_fail 2 "unknown swizzle '16B'" plan tma --dtype bf16 --shape 64 --stride 1 --tile 64 --swizzle 16B
expect_fail 1 "NaN out-of-bounds fill needs a floating-point element type, not u16" \
  plan tma --dtype u16 --shape 64,64 --stride 64,1 --tile 64,8 --nan
expect_fail 2 "unknown option '--bogus'" plan tma --bogus 1
expect_fail 2 "needs --dtype" plan tma --shape 8 --stride 1 --tile 8
expect_fail 2 "unknown plan 'gemm'" plan gemm

mma=(plan mma --a bf16 --b bf16 --acc f32 --tile 128,256,64 --warpgroups 2)
expect_has "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16" "${mma[@]}"
expect_has "0x4000004000010000 (start 0x0, LBO 16 B, SBO 1024 B, base offset 0, layout 1 = 128B)" "${mma[@]}"
expect_has "start-address advance per k-block (B): 0 32 64 96" "${mma[@]}"
expect_has "per 64-row atom (B): 0 8192" "${mma[@]}"
expect_has "((4,8,4,2,1),(2,2,32,1,1)):((256,1,16,64,32768),(128,8,1024,64,32768))" "${mma[@]}"
expect_has "wg 1 kb 3 m 0 n 0: A 0x4000004000010206" "${mma[@]}"
expect_has "register-A TV layout" "${mma[@]}" --a-regs
json_check 'j["wgmma"]["n"] == 256 and j["a"]["desc"]["sbo_bytes"] == 1024 and j["a"]["desc"]["lbo_bytes"] == 16 and j["a"]["desc"]["layout_type"] == 1 and j["a"]["kblock_advance_bytes"] == [0, 32, 64, 96] and len(j["instructions"]) == 8' \
  "${mma[@]}" --json
json_check 'j["b"]["major"] == "mn" and j["wgmma"]["trans_b"] == 1' "${mma[@]}" --b-major mn --json
expect_fail 1 "bf16 x bf16 accumulating in f32 only" plan mma --a bf16 --acc f16 --tile 128,128,64
expect_fail 1 "operand A is e4m3 and MN-major" plan mma --a e4m3 --tile 128,128,64 --a-major mn
expect_fail 1 "N = 40 is not allowed for s8" plan mma --a s8 --tile 64,40,64
expect_fail 1 "tile M = 96 is not a multiple of 64" "${mma[@]/128,256,64/96,256,64}"
expect_fail 1 "is not a whole number of 128-byte" plan mma --a bf16 --tile 128,128,32 --swizzle 128B
expect_fail 2 "needs --tile" plan mma --a bf16

echo "plan CLI: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
