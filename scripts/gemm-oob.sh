#!/usr/bin/env bash
# Operands read from rows TMA cannot address, under compute-sanitizer memcheck (and
# racecheck): the repack AUTO runs, cp.async window copies (staged or not), the decode
# kernel's windows and its K tails, each on a problem whose operand ends inside a 16-byte
# block, so that a load of the whole block would read past the allocation (bench/RESULTS.md,
# thirteenth session: all three did). One line per case, a summary; exits non-zero on any
# report. GPU machine:
#   scripts/gemm-oob.sh path/to/hopgen
set -uo pipefail
H=${1:?usage: gemm-oob.sh path/to/hopgen}
fails=0; runs=0
# shellcheck disable=SC1091 # sanitize (reads H), counting in runs and fails
. "$(dirname "$0")/gemm-check-lib.sh"
sanitize "100 200 65" \
  "33 17 9 --batch 3" \
  "100 64 130 --type e4m3 --mainloop cpasync-wgmma" \
  "9 200 333 --layout RR --mainloop cpasync-wgmma" \
  "7 1000 127 --type e4m3" \
  "5 300 99 --mainloop ldg-mmasync" \
  "3 1000 65 --type e4m3 --mainloop ldg-mmasync" \
  "16 130 1001 --mainloop ldg-mmasync"
echo "out-of-bounds checks: $runs runs, $fails failed"
[ "$fails" -eq 0 ]
