#!/usr/bin/env bash
# Old and new GEMM side by side in one device call (issue 9's acceptance: the shape set gives
# the same ratios before and after the builders rewrite). The old tree comes as a tarball in
# .device-carry/old.tar (git archive <commit>); both are built here and benched alternately,
# each against cuBLASLt on the same data.
#   scripts/gpu-compare.sh NEW_HOPGEN [types]
set -uo pipefail
new=${1:?usage: gpu-compare.sh path/to/new/hopgen [types]}
types=${2:-bf16,e4m3}
old_src=/tmp/hopgen-old
if [ ! -x "$old_src/build/hopgen" ]; then
  rm -rf "$old_src" && mkdir -p "$old_src" && tar -xf .device-carry/old.tar -C "$old_src" || exit 1
  (cmake -S "$old_src" -B "$old_src/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS=-Wno-error &&
    cmake --build "$old_src/build" -j"$(nproc)" --target hopgen) > /tmp/hopgen-old-build.log 2>&1 ||
    { tail -20 /tmp/hopgen-old-build.log; exit 1; }
fi
old=$old_src/build/hopgen
for t in ${types//,/ }; do
  echo "== $t old"; "$old" bench gemm --types "$t" --no-check | grep -E "geometric|^$t"
  echo "== $t new"; "$new" bench gemm --types "$t" --no-check | grep -E "geometric|^$t"
done
