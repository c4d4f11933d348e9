#!/usr/bin/env bash
# Build the libFuzzer targets with clang and run each for a bounded time (seconds, $1).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DHOPGEN_FUZZ=ON -DHOPGEN_SANITIZE=ON >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target hopgen_fuzz_targets
for f in build-fuzz/fuzz/fuzz_*; do
  [ -x "$f" ] || continue
  name=$(basename "$f")
  corpus=build-fuzz/corpus/$name
  mkdir -p "$corpus"
  cp -n fuzz/seeds/"$name"/* "$corpus"/ 2>/dev/null || true
  echo "fuzz: $name for ${secs}s"
  "$f" -max_total_time="$secs" -print_final_stats=0 "$corpus" 2>build-fuzz/"$name".log || {
    tail -40 build-fuzz/"$name".log; exit 1; }
  grep -E '^(#[0-9]+.*DONE|Done)' build-fuzz/"$name".log | tail -1 || true
done
