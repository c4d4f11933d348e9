#!/usr/bin/env bash
# Build the libFuzzer targets with clang (the library and the CLI instrumented too) and run
# each for a bounded time: fuzz.sh [SECONDS [TARGET...]] (default 35 s, every target). Each
# starts from its seeds (fuzz/seeds/<target>/) plus what earlier runs kept in
# build-fuzz/corpus/<target>; the log shows each target's coverage (edges), features and
# corpus size, and fewer than 100 edges fails the run (blind fuzzing). A target that finds
# a crash, leak or timeout fails the run, with the input that did it saved as
# build-fuzz/<target>-crash-* (libFuzzer's artifact).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-35}
shift || true
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DHOPGEN_FUZZ=ON -DHOPGEN_SANITIZE=ON >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target hopgen_fuzz_targets
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in build-fuzz/fuzz/fuzz_*; do [ -x "$f" ] && targets+=("$(basename "$f")"); done
fi
printf '%-18s %8s %8s %8s %10s %8s\n' target seconds runs edges features corpus
for name in "${targets[@]}"; do
  f=build-fuzz/fuzz/$name
  corpus=build-fuzz/corpus/$name
  mkdir -p "$corpus"
  cp -n fuzz/seeds/"$name"/* "$corpus"/ 2>/dev/null || true
  # -close_fd_mask=2: the targets' own stderr (the CLI's sentences) is closed; libFuzzer and
  # the sanitizers keep reporting on theirs.
  if ! "$f" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2048 -close_fd_mask=2 \
    -artifact_prefix=build-fuzz/"$name"- -print_final_stats=1 "$corpus" \
    2> build-fuzz/"$name".log; then
    tail -60 build-fuzz/"$name".log
    echo "fuzz: $name FAILED (the input is build-fuzz/$name-*)"
    exit 1
  fi
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' build-fuzz/"$name".log | tail -1 || true)
  runs=$(sed -nE 's/^#([0-9]+).*/\1/p' <<< "$done_line")
  edges=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<< "$done_line")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<< "$done_line")
  corp=$(sed -nE 's/.* corp: ([0-9]+)\/.*/\1/p' <<< "$done_line")
  printf '%-18s %8s %8s %8s %10s %8s\n' "$name" "$secs" "${runs:-?}" "${edges:-?}" "${ft:-?}" "${corp:-?}"
  # A harness alone has a few dozen edges: far fewer means the library went uninstrumented
  # and the fuzzing blind (every target reaches well over 100 in seconds).
  if [ "${edges:-0}" -lt 100 ]; then
    echo "fuzz: $name covered ${edges:-no} edges: is the library built with -fsanitize=fuzzer-no-link?"
    exit 1
  fi
done
