#!/usr/bin/env bash
# The streaming copy's variants against the driver's device-to-device copy, one
# `hopgen bench copy` process each (fresh random data, every byte verified, the median of
# interleaved runs), then the best:
#   scripts/copy-sweep.sh PATH/TO/hopgen BYTES [EXTRA bench copy OPTIONS...]
#   e.g. scripts/copy-sweep.sh build/hopgen 1G
#        scripts/copy-sweep.sh build/hopgen 4G --runs 15
#        SHAPES="4x16 3x32" ST_SHAPES="4x16 3x32" ONE_SHAPE=4x16 \
#          scripts/copy-sweep.sh build/hopgen 1G --ctas-per-sm 2   (rings that fit twice an SM)
#
# Runs (issue 10 item 7), 23 by default:
#   today's kernel at the ring shapes in SHAPES (stages x box KiB; default "4x16 8x16 4x32
#     6x32 3x64": what a CTA's 227 KiB holds, since 8 x 32 KiB and 4 x 64 KiB do not fit);
#   one shape (ONE_SHAPE, default 6x32) of each earlier variant, for the record: --order
#     contiguous and --store-evict-first (each 1-2% below today's kernel on an H200),
#     --split-roles (level), --split-roles --order contiguous;
#   --store-threads (TMA loads, stores by threads: ld.shared.v4 + st.global.v4) with 4 and 8
#     store warps at the shapes in ST_SHAPES (default "4x16 6x32 3x64"), with --store-cs once
#     (ONE_SHAPE, 4 warps), and with 2 CTAs an SM at 4x16 and 3x32 (half an SM's shared
#     memory each);
#   --ldg (no TMA: ld.global.v4 + st.global.v4 by every thread) at unroll 4 and 8 with 256
#     threads x 4 CTAs and 512 threads x 2 CTAs an SM (1024 threads an SM either way), and
#     with --store-cs once.
# A run that sets --ctas-per-sm drops its own when EXTRA has one. EXTRA goes to every run:
# options of the TMA copy only (--evict-first, --order, ...) make the ldg runs fail (refused
# with a sentence). Each run is mostly the GPU's start and the two byte-for-byte checks
# through the host (a few seconds at 1G, so about 2 minutes in all; not yet timed on a
# GPU, and 4G takes about four times as long). Every run verifies the copy, so a wrong
# variant shows as FAILED. One line per run: the ratio to D2D (higher is better), both
# bandwidths, or FAILED with the tool's sentence (or a timeout: RUN_TIMEOUT_S, default 90 s
# a run: a barrier phase gone wrong hangs); then the best. Exit status 1 when any run failed.
set -uo pipefail
H=${1:?usage: scripts/copy-sweep.sh PATH/TO/hopgen BYTES [EXTRA bench copy OPTIONS...]}
BYTES=${2:?usage: scripts/copy-sweep.sh PATH/TO/hopgen BYTES [EXTRA bench copy OPTIONS...]}
shift 2
SHAPES=${SHAPES:-4x16 8x16 4x32 6x32 3x64}
ST_SHAPES=${ST_SHAPES:-4x16 6x32 3x64}
ONE_SHAPE=${ONE_SHAPE:-6x32}
RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-90}

# name|shape (stages x box KiB, or - for the ldg copy, which has no ring)|flags
runs=()
for shape in $SHAPES; do runs+=("default|$shape|"); done
runs+=("contiguous|$ONE_SHAPE|--order contiguous")
runs+=("store-evict-first|$ONE_SHAPE|--store-evict-first")
runs+=("split-roles|$ONE_SHAPE|--split-roles")
runs+=("split-roles+contiguous|$ONE_SHAPE|--split-roles --order contiguous")
for w in 4 8; do
  for shape in $ST_SHAPES; do runs+=("store-threads-w$w|$shape|--store-threads --store-warps $w"); done
done
runs+=("store-threads-w4+cs|$ONE_SHAPE|--store-threads --store-warps 4 --store-cs")
runs+=("store-threads-w4-2cta|4x16|--store-threads --store-warps 4 --ctas-per-sm 2")
runs+=("store-threads-w4-2cta|3x32|--store-threads --store-warps 4 --ctas-per-sm 2")
for u in 4 8; do
  runs+=("ldg-t256-u$u|-|--ldg --ldg-threads 256 --unroll $u --ctas-per-sm 4")
  runs+=("ldg-t512-u$u|-|--ldg --ldg-threads 512 --unroll $u --ctas-per-sm 2")
done
runs+=("ldg-t256-u8+cs|-|--ldg --ldg-threads 256 --unroll 8 --ctas-per-sm 4 --store-cs")

# EXTRA's own --ctas-per-sm wins (bench copy refuses an option given twice).
extra_cps=0
for a in "$@"; do case $a in --ctas-per-sm | --ctas-per-sm=*) extra_cps=1 ;; esac; done

printf '%-24s %-6s %-8s %9s %9s %s\n' variant stages box_KiB "GB/s" "D2D GB/s" ratio
best_ratio=0
best=""
failed=0
for r in "${runs[@]}"; do
  name=${r%%|*}
  rest=${r#*|}
  shape=${rest%%|*}
  read -r -a given <<< "${rest#*|}"
  flags=()
  for ((i = 0; i < ${#given[@]}; i++)); do
    if [ "${given[i]}" = --ctas-per-sm ] && [ $extra_cps = 1 ]; then
      i=$((i + 1))
      continue
    fi
    flags+=("${given[i]}")
  done
  if [ "$shape" = - ]; then
    stages=-
    rows=-
  else
    stages=${shape%x*}
    rows=${shape#*x}
    flags=(--stages "$stages" --box-rows "$rows" "${flags[@]}")
  fi
  cmd=(bench copy --bytes "$BYTES" "${flags[@]}" "$@")
  # A kernel that never finishes (a barrier phase gone wrong spins forever) is killed.
  out=$(timeout "$RUN_TIMEOUT_S" "$H" "${cmd[@]}" 2>&1)
  rc=$?
  [ $rc -eq 124 ] && out="timed out after $RUN_TIMEOUT_S s (RUN_TIMEOUT_S): a hang?"
  # `bench copy` prints "  TMA copy  <ms> ms median (...)  <GB/s> GB/s" ("  ldg copy  " for
  # the ldg copy), the same for "  D2D copy", and "  ratio     <ratio> (TMA / D2D; ...)".
  bw=$(awk '/^  (TMA|ldg) copy  /{print $(NF-1)}' <<< "$out")
  d2d=$(awk '/^  D2D copy  /{print $(NF-1)}' <<< "$out")
  ratio=$(awk '/^  ratio  /{print $2}' <<< "$out")
  if [ $rc -ne 0 ] || [ -z "$ratio" ]; then
    failed=$((failed + 1))
    printf '%-24s %-6s %-8s FAILED (exit %d): %s\n' "$name" "$stages" "$rows" "$rc" \
      "$(grep -m1 '^hopgen: ' <<< "$out" || tail -n1 <<< "$out")"
    continue
  fi
  printf '%-24s %-6s %-8s %9s %9s %s\n' "$name" "$stages" "$rows" "$bw" "$d2d" "$ratio"
  if awk -v r="$ratio" -v b="$best_ratio" 'BEGIN { exit !(r > b) }'; then
    best_ratio=$ratio
    best="$name: ${cmd[*]}"
  fi
done
if [ -n "$best" ]; then
  echo "best: ratio $best_ratio ($best)"
else
  echo "best: none (every run failed)"
fi
[ "$failed" -eq 0 ]
