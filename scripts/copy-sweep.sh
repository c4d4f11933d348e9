#!/usr/bin/env bash
# The streaming TMA copy's variants against the driver's device-to-device copy, one
# `hopgen bench copy` process each (fresh random data, every byte verified, the median of
# interleaved runs), then the best:
#   scripts/copy-sweep.sh PATH/TO/hopgen BYTES [EXTRA bench copy OPTIONS...]
#   e.g. scripts/copy-sweep.sh build/hopgen 1G
#        scripts/copy-sweep.sh build/hopgen 4G --runs 15 --ctas-per-sm 2
#
# Variants (issue 10 item 7): today's kernel, --order contiguous, --store-evict-first,
# --split-roles, --split-roles --order contiguous; each at the ring shapes in SHAPES
# (stages x box rows; default "4x16 8x16 4x32 6x32 3x64": stages 4 and 8 with 16 KiB boxes, 4
# and 6 (today's default) with 32 KiB, 3 with 64 KiB, since a CTA's 227 KiB of shared memory
# holds no more: 8 x 32 KiB and 4 x 64 KiB do not fit). 25 runs, each mostly the GPU's
# start and the two byte-for-byte checks through the host (estimated at a few seconds at 1G,
# so about 1-2 minutes in all; not yet timed on a GPU, and 4G takes about four times as
# long). Every run verifies the copy, so a wrong variant shows as FAILED. One line per
# setting: the ratio to D2D (higher is better), both bandwidths, or FAILED with the tool's
# sentence (or a timeout: RUN_TIMEOUT_S, default 90 s a run); then the best. Exit status 1
# when any setting failed.
set -uo pipefail
H=${1:?usage: scripts/copy-sweep.sh PATH/TO/hopgen BYTES [EXTRA bench copy OPTIONS...]}
BYTES=${2:?usage: scripts/copy-sweep.sh PATH/TO/hopgen BYTES [EXTRA bench copy OPTIONS...]}
shift 2
SHAPES=${SHAPES:-4x16 8x16 4x32 6x32 3x64}
RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-90}

variants=(
  "default|"
  "contiguous|--order contiguous"
  "store-evict-first|--store-evict-first"
  "split-roles|--split-roles"
  "split-roles+contiguous|--split-roles --order contiguous"
)

printf '%-24s %-6s %-8s %9s %9s %s\n' variant stages box_KiB "TMA GB/s" "D2D GB/s" ratio
best_ratio=0
best=""
failed=0
for v in "${variants[@]}"; do
  name=${v%%|*}
  read -r -a flags <<< "${v#*|}"
  for shape in $SHAPES; do
    stages=${shape%x*}
    rows=${shape#*x}
    # A kernel that never finishes (a barrier phase gone wrong spins forever) is killed.
    out=$(timeout "$RUN_TIMEOUT_S" "$H" bench copy --bytes "$BYTES" --stages "$stages" \
      --box-rows "$rows" "${flags[@]}" "$@" 2>&1)
    rc=$?
    [ $rc -eq 124 ] && out="timed out after $RUN_TIMEOUT_S s (RUN_TIMEOUT_S): a hang?"
    # `bench copy` prints "  TMA copy  <ms> ms median (...)  <GB/s> GB/s", the same for
    # "  D2D copy", and "  ratio     <ratio> (TMA / D2D; ...)".
    tma=$(awk '/^  TMA copy  /{print $(NF-1)}' <<< "$out")
    d2d=$(awk '/^  D2D copy  /{print $(NF-1)}' <<< "$out")
    ratio=$(awk '/^  ratio  /{print $2}' <<< "$out")
    if [ $rc -ne 0 ] || [ -z "$ratio" ]; then
      failed=$((failed + 1))
      printf '%-24s %-6s %-8s FAILED (exit %d): %s\n' "$name" "$stages" "$rows" "$rc" \
        "$(grep -m1 '^hopgen: ' <<< "$out" || tail -n1 <<< "$out")"
      continue
    fi
    printf '%-24s %-6s %-8s %9s %9s %s\n' "$name" "$stages" "$rows" "$tma" "$d2d" "$ratio"
    if awk -v r="$ratio" -v b="$best_ratio" 'BEGIN { exit !(r > b) }'; then
      best_ratio=$ratio
      cmd=(bench copy --bytes "$BYTES" --stages "$stages" --box-rows "$rows" "${flags[@]}" "$@")
      best="$name, $stages stages of $rows KiB boxes: ${cmd[*]}"
    fi
  done
done
if [ -n "$best" ]; then
  echo "best: ratio $best_ratio ($best)"
else
  echo "best: none (every setting failed)"
fi
[ "$failed" -eq 0 ]
