#!/usr/bin/env bash
# hopgen layout end to end: `eval` reproduces the golden vectors' 4th column exactly, the
# operations print canonical notation, and bad input gives a sentence and a non-zero exit.
set -u
cli=${1:?usage: layout_eval.sh PATH_TO_HOPGEN}
root=${HOPGEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
vectors=$root/tests/vectors/layout_algebra.tsv
# shellcheck source=tests/cli/cli_test.bash
. "$(dirname "$0")/cli_test.bash"

# eval: the whole file back, byte for byte (comments pass through, column 4 recomputed).
if "$cli" layout eval < "$vectors" > "$tmp/out.tsv"; then pass; else fail "eval exited non-zero"; fi
if cmp -s "$vectors" "$tmp/out.tsv"; then pass; else
  fail "eval differs from the vectors:"
  diff "$vectors" "$tmp/out.tsv" | head -20 >&2
fi
# Without the expected column, and with a wrong one, the result is recomputed.
printf 'composition\t(4,3):(3,1)\t3:3\nsize\t(4,8):(1,4)\t_\t999\n' |
  "$cli" layout eval > "$tmp/o2.tsv"
printf 'composition\t(4,3):(3,1)\t3:3\terror\nsize\t(4,8):(1,4)\t_\t32\n' > "$tmp/e2.tsv"
if cmp -s "$tmp/e2.tsv" "$tmp/o2.tsv"; then pass; else fail "eval of partial lines"; cat "$tmp/o2.tsv" >&2; fi
# --explain says why an 'error' line failed.
printf 'complement\t(8,2):(1,2)\t16\t?\n' | "$cli" layout eval --explain > /dev/null 2> "$tmp/why"
if grep -q "hopgen: line 1: complement of (8,2):(1,2)" "$tmp/why"; then pass; else fail "--explain"; fi

# expect OUTPUT ARGS...: the command succeeds and prints exactly OUTPUT.
expect() {
  local want=$1
  shift
  local got
  if got=$("$cli" "$@" 2> "$tmp/err"); then
    if [ "$got" = "$want" ]; then pass; else fail "$* printed '$got', expected '$want'"; fi
  else
    fail "$* failed: $(cat "$tmp/err")"
  fi
}

# mode 0: 8:16 o (2,4):(1,2) = (2,4):(16,32); mode 1: 16:1 / 4:1 = (4,4):(1,4).
expect "((2,4),(4,4)):((16,32),(1,4))" layout logical_divide "(8,16):(16,1)" "[2:1,4:1]"
# comp(4:2, 24): the gap 2:1 below stride 2, then 24/8 = 3 copies at stride 8.
expect "(2,3):(1,8)" layout complement 4:2 24
expect "21" layout crd2idx "(4,(2,3)):(1,(4,8))" "(1,5)"
expect "145" layout swizzle 3,4,3 129
expect "((2,3),(2,4)):((1,4),(2,12))" layout blocked_product "(2,2):(1,2)" "(3,4):(1,3)"
expect "((3,2),(4,2)):((16,1),(4,2))" layout raked_product "(2,2):(1,2)" "(3,4):(4,1)"
expect "(8,16):(1,16) offset 520" layout local_tile "(16,64):(1,16)" "[8:1,16:1]" "(1,2)"
expect "(8,4):(2,256) offset 17" layout local_partition "(16,64):(1,16)" "(2,16):(1,2)" 3
expect "(4,4):(1,4)" layout upcast "(8,4):(1,8)" 2
expect "(4,8):(8,1)" layout coalesce "(_4,_8):(_8,_1)"
expect "Sw<3,4,3> o 0 o (8,8):(64,1)" layout composition "Sw<3,4,3> o 0 o (8,64):(64,1)" "(8,8):(1,8)"
expect "(1,(1,2))" layout idx2crd "(4,(2,3))" 21
expect "(4):(1) offset 12" layout slice "(4,8):(1,4)" "(_,3)"
expect "((2,3),4):((12,4),1)" layout make_layout "((2,3),4)" row

# show: the table, and an SVG a browser can render (well-formed XML with an svg root).
expect "$(printf '(2,3):(3,1)\n      0   1   2 \n    +---+---+---+\n 0  | 0 | 1 | 2 |\n    +---+---+---+\n 1  | 3 | 4 | 5 |\n    +---+---+---+')" layout show "(2,3):(3,1)"
if "$cli" layout show "Sw<3,4,3> o 0 o (8,64):(64,1)" --svg "$tmp/sw.svg" > /dev/null &&
   "$cli" layout show "(4,8):(1,4)" --svg "$tmp/tv.svg" --tv "(8,4):(4,1)" > /dev/null; then
  pass
else
  fail "show --svg"
fi
if command -v python3 > /dev/null; then
  if python3 -c 'import sys, xml.etree.ElementTree as E
for f in sys.argv[1:]:
    r = E.parse(f).getroot()
    assert r.tag == "{http://www.w3.org/2000/svg}svg", r.tag' "$tmp/sw.svg" "$tmp/tv.svg"; then
    pass
  else
    fail "the SVG files are not well-formed SVG"
  fi
fi
if grep -q ">T7V3<" "$tmp/tv.svg"; then pass; else fail "TV labels missing"; fi

# Errors: a sentence on stderr, exit 1; usage errors exit 2.
bad 1 "at column" layout coalesce "(4,8):(1,4"
bad 1 "not congruent" layout size "(4,8):(1)"
bad 1 "CuTe's divisibility condition" layout composition "(4,3):(3,1)" 3:3
bad 1 "in-bound condition" layout complement "(8,2):(1,2)" 16
bad 2 "unknown layout operation 'frobnicate'" layout frobnicate 1:1
bad 2 "takes LAYOUT TILER" layout logical_divide "8:1"
bad 2 "missing LAYOUT" layout show
bad 2 "missing operation" layout
if "$cli" layout --help | grep -q "blocked_product"; then pass; else fail "layout --help"; fi
if "$cli" layout complement --help | grep -q "LAYOUT \[BOUND\]"; then pass; else fail "op --help"; fi
if "$cli" layout eval --help | grep -q "4th"; then pass; else fail "eval --help"; fi
if "$cli" layout show --help | grep -q -- "--tv"; then pass; else fail "show --help"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
