#!/usr/bin/env bash
# Old and new GEMM side by side in one device call: a commit (OLD, built from a git worktree
# of the copy's .git; or the tarball .device-carry/old.tar, git archive <commit>) against the
# working tree's build, on the same GPU in the same call.
#   OLD=<rev> [SETS="fp8block:e4m3 llm:bf16"] [ITERS=10] [LIST=file] \
#     scripts/gpu-compare.sh path/to/new/hopgen
# SETS: `bench gemm --set NAME --types T` on both, the order alternated from set to set; each
# run's table goes to $OUT/NAME-T-{old,new}.txt and the line printed per set is the
# geometric mean of new / old TFLOP/s over the shapes, with the shapes that moved most.
# LIST: a file of `hopgen gemm` argument lines, each benched old then new, new then old
# (--iters 30); a line `CHECK args` runs `--check` on the new build only. Neither given: the
# llm set in bf16 and e4m3.
set -uo pipefail
new=${1:?usage: OLD=<rev> [SETS=...] [LIST=file] gpu-compare.sh path/to/new/hopgen}
OUT=${OUT:-/tmp/hopgen-compare}
mkdir -p "$OUT"
old_src=/tmp/hopgen-old
if [ ! -x "$old_src/build/hopgen" ]; then
  rm -rf "$old_src"
  if [ -n "${OLD:-}" ]; then
    # The device's copy may carry the .git of the session's start only: a later commit is
    # not in it. Then carry its tree instead: git archive <rev> > .device-carry/old.tar.
    git worktree add -f "$old_src" "$OLD" --detach > /dev/null 2>&1 || {
      echo "no worktree of $OLD in this copy's .git (at $(git rev-parse --short HEAD 2>/dev/null));" \
        "carry its tree: git archive $OLD > .device-carry/old.tar, and leave OLD unset"
      exit 1
    }
  else
    mkdir -p "$old_src" && tar -xf .device-carry/old.tar -C "$old_src" || exit 1
  fi
  (cmake -S "$old_src" -B "$old_src/build" -DCMAKE_BUILD_TYPE=Release -DHOPGEN_WERROR=OFF &&
    cmake --build "$old_src/build" -j"$(nproc)" --target hopgen) > /tmp/hopgen-old-build.log 2>&1 ||
    { tail -20 /tmp/hopgen-old-build.log; exit 1; }
fi
old=$old_src/build/hopgen

# new / old TFLOP/s per shape of two set tables (columns: type M N K config hopgen ...)
compare() {
  python3 - "$1" "$2" << 'EOF'
import math, sys
def rows(f):
    d = {}
    for line in open(f):
        p = line.split()
        if len(p) > 6 and p[1].isdigit() and p[2].isdigit():
            d[tuple(p[:4])] = float(p[5])
    return d
o, n = rows(sys.argv[1]), rows(sys.argv[2])
r = {k: n[k] / o[k] for k in o if k in n and o[k] > 0}
if not r:
    print("no shapes in both tables"); sys.exit()
g = math.exp(sum(math.log(v) for v in r.values()) / len(r))
moved = sorted(r.items(), key=lambda kv: abs(math.log(kv[1])), reverse=True)[:4]
print(f"new/old {g:.4f} over {len(r)} shapes; most moved: " +
      ", ".join(f"{'x'.join(k[1:])} {v:.3f}" for k, v in moved))
EOF
}

[ -z "${SETS:-}${LIST:-}" ] && SETS="llm:bf16 llm:e4m3"
i=0
for st in ${SETS:-}; do
  i=$((i + 1)) n=${st%%:*} t=${st#*:}
  order="old new"
  [ $((i % 2)) = 0 ] && order="new old"
  for w in $order; do
    x=$new
    [ "$w" = old ] && x=$old
    "$x" bench gemm --set "$n" --types "$t" --iters "${ITERS:-10}" > "$OUT/$n-$t-$w.txt" 2>&1
  done
  echo "$n $t: $(compare "$OUT/$n-$t-old.txt" "$OUT/$n-$t-new.txt")"
done

[ -n "${LIST:-}" ] && while read -r line; do
  [ -z "$line" ] && continue
  case "$line" in
  CHECK*)
    # shellcheck disable=SC2086 # the line's words are the arguments
    "$new" gemm ${line#CHECK } --check > "$OUT/check.log" 2>&1 && r=pass || r=FAIL
    echo "check $r: ${line#CHECK }"
    continue
    ;;
  esac
  for w in old new new old; do
    x=$new
    [ "$w" = old ] && x=$old
    # shellcheck disable=SC2086 # the line's words are the arguments
    echo "$line :: $w: $("$x" gemm $line --bench --iters 30 2>&1 | grep ' bench ' |
      sed -E 's/ = [0-9.]+ TFLOP\/s//g; s/^ *bench *//')"
  done
done < "$LIST"
