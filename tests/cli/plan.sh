#!/usr/bin/env bash
# hopgen plan end to end: TMA and TiledMma plans printed readably and as JSON (checked with
# python3's json module when it is there), and bad input refused with "hopgen: <sentence>".
set -u
cli=${1:?usage: plan.sh PATH_TO_HOPGEN}
# shellcheck source=tests/cli/cli_test.bash
. "$(dirname "$0")/cli_test.bash"
# json_check PYEXPR ARGS...: the command succeeds and its output is one JSON object for which
# PYEXPR (over j) holds.
json_check() {
  local expr=$1
  shift
  if "$cli" "$@" > "$tmp/j.json" 2> "$tmp/err"; then json_is "$expr" "$tmp/j.json"; else
    fail "$* failed: $(head -c 600 "$tmp/err")"
  fi
}


tma=(plan tma --dtype bf16 --shape 1000,4096 --stride 4096,1 --tile 128,64 --swizzle 128B)
ok "Sw<3,3,3> o 0 o (128,64):(64,1)" "${tma[@]}"
ok "swizzle 128B (3)" "${tma[@]}"
ok "box 0   (0,0)  smem +0" "${tma[@]}"
ok "mbarrier: expect 16384 B per tile" "${tma[@]}"
ok "at origin: (64,-3)" "${tma[@]}" --origin -3,64
ok "mask 0x0003; each CTA issues 1 box(es) (8192 B); every CTA's mbarrier expects 16384 B" \
  "${tma[@]}" --cluster 2
ok "box 1   (0,64)  smem +8192  CTA 1" "${tma[@]}" --cluster 2
ok "TMA reduce-add plan" "${tma[@]}" --op reduce-add
ok "TMA prefetch plan" "${tma[@]}" --op prefetch
json_check 'j["tensor_map"]["box_dim"] == [64, 128] and j["tensor_map"]["global_strides_bytes"] == [8192] and j["tensor_map"]["swizzle"] == 3' "${tma[@]}" --json
json_check 'j["multicast"]["mask"] == "0x000f" and len(j["boxes"]) == 4 and j["boxes"][3]["smem_offset"] == 12288 and j["multicast"]["expect_tx_bytes"] == 16384 and j["boxes"][1]["abs_coords"] == [64, 29]' \
  "${tma[@]}" --cluster 4 --origin -3,64 --json
json_check 'j["tensor_map"]["oob_fill"] == "nan" and j["tensor_map"]["l2_promotion"] == 2' \
  "${tma[@]}" --nan --l2 2 --json
# The default swizzle is the widest that fits; --layout takes any composed layout.
ok "swizzle 64B (2)" plan tma --dtype f16 --shape 512,96 --stride 96,1 --tile 64,32
ok "boxes: 8 of 1024 B" plan tma --dtype f32 --shape 5000 --stride 1 --tile 2048
ok "boxDim" plan tma --dtype bf16 --shape 512,256 --stride 1,512 \
  --layout "Sw<3,3,3> o 0 o (64,64):(1,64)"

# Every refusal: a sentence, exit 1 (2 for a value that does not parse as its kind).
bad 1 "globalStrides[0] = 2008 B is not a multiple of 16 B" \
  plan tma --dtype bf16 --shape 1000,1004 --stride 1004,1 --tile 128,64
bad 1 "the innermost coordinate 3 (tensor mode 1) is 6 B into the row" "${tma[@]}" --origin 0,3
bad 1 "a multicast cluster of 17 CTAs is over 16" "${tma[@]}" --cluster 17
bad 1 "a cluster of 3 CTAs does not divide the tile" "${tma[@]}" --cluster 3
bad 1 "multicast (a cluster of 2) applies to loads only" "${tma[@]}" --cluster 2 --op store
bad 1 "TMA reduce-inc does not take bf16" "${tma[@]}" --op reduce-inc
bad 1 "no mode of the tensor has stride 1" plan tma --dtype bf16 --shape 10,10 --stride 16,160 --tile 8,8
bad 1 "TMA needs a 16-byte aligned globalAddress" "${tma[@]}" --align 8
bad 2 "unknown element type 'bf17'" plan tma --dtype bf17 --shape 8 --stride 1 --tile 8
bad 2 "unknown swizzle '16B'" plan tma --dtype bf16 --shape 64 --stride 1 --tile 64 --swizzle 16B
bad 1 "NaN out-of-bounds fill needs a floating-point element type, not u16" \
  plan tma --dtype u16 --shape 64,64 --stride 64,1 --tile 64,8 --nan
bad 2 "unknown option '--bogus'" plan tma --bogus 1
bad 2 "needs --dtype" plan tma --shape 8 --stride 1 --tile 8
bad 2 "unknown plan 'gemm'" plan gemm

mma=(plan mma --a bf16 --b bf16 --acc f32 --tile 128,256,64 --warpgroups 2)
ok "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16" "${mma[@]}"
ok "0x4000004000010000 (start 0x0, LBO 16 B, SBO 1024 B, base offset 0, layout 1 = 128B)" "${mma[@]}"
ok "start-address advance per k-block (B): 0 32 64 96" "${mma[@]}"
ok "per 64-row atom (B): 0 8192" "${mma[@]}"
ok "((4,8,4,2,1),(2,2,32,1,1)):((256,1,16,64,32768),(128,8,1024,64,32768))" "${mma[@]}"
ok "wg 1 kb 3 m 0 n 0: A 0x4000004000010206" "${mma[@]}"
ok "register-A TV layout" "${mma[@]}" --a-regs
json_check 'j["wgmma"]["n"] == 256 and j["a"]["desc"]["sbo_bytes"] == 1024 and j["a"]["desc"]["lbo_bytes"] == 16 and j["a"]["desc"]["layout_type"] == 1 and j["a"]["kblock_advance_bytes"] == [0, 32, 64, 96] and len(j["instructions"]) == 8' \
  "${mma[@]}" --json
json_check 'j["b"]["major"] == "mn" and j["wgmma"]["trans_b"] == 1' "${mma[@]}" --b-major mn --json
bad 1 "bf16 x bf16 accumulating in f32 only" plan mma --a bf16 --acc f16 --tile 128,128,64
bad 1 "operand A is e4m3 and MN-major" plan mma --a e4m3 --tile 128,128,64 --a-major mn
bad 1 "N = 40 is not allowed for s8" plan mma --a s8 --tile 64,40,64
bad 1 "tile M = 96 is not a multiple of 64" "${mma[@]/128,256,64/96,256,64}"
bad 1 "is not a whole number of 128-byte" plan mma --a bf16 --tile 128,128,32 --swizzle 128B
bad 2 "needs --tile" plan mma --a bf16

echo "plan CLI: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
