#!/usr/bin/env bash
# Every public header (include/hopgen/*.h, whatever headers there are) compiles on its own
# as C11 and as C++17, and all of them together in one C++17 file that links against the
# static library and runs: `g++ -std=c++17 -Wall -Wextra -Werror`, as a C++ user would.
# Usage: headers.sh BUILD_DIR SOURCE_DIR
set -u
build=${1:?usage: headers.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: headers.sh BUILD_DIR SOURCE_DIR}
cc=${CC:-cc}
cxx=${CXX:-c++}
flags=${HOPGEN_CONSUMER_FLAGS:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! command -v "$cxx" > /dev/null; then echo "SKIP: no C++ compiler ($cxx)"; exit 77; fi
passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

headers=("$src"/include/hopgen/*.h)
: > "$tmp/all.cpp"
for h in "${headers[@]}"; do
  name=hopgen/$(basename "$h")
  echo "#include \"$name\"" >> "$tmp/all.cpp"
  printf '#include "%s"\n' "$name" > "$tmp/one.c"
  if $cc -std=c11 -Wall -Wextra -Werror -pedantic -fsyntax-only -I"$src/include" "$tmp/one.c" \
    2> "$tmp/err"; then pass; else fail "$name as C11: $(cat "$tmp/err")"; fi
  cp "$tmp/one.c" "$tmp/one.cpp"
  if $cxx -std=c++17 -Wall -Wextra -Werror -pedantic -fsyntax-only -I"$src/include" \
    "$tmp/one.cpp" 2> "$tmp/err"; then pass; else fail "$name as C++17: $(cat "$tmp/err")"; fi
done
cat >> "$tmp/all.cpp" << 'CPP'
#include <cstdio>
#include <cstring>
// extern "C" linkage: these resolve against the C library only if the headers say so.
int main() {
  hg_layout_t l;
  hg_status_t s = hg_layout_parse("(2,4):(4,1)", &l);
  char buf[64];
  if (hg_is_ok(&s)) hg_layout_print(&l, buf, sizeof buf);
  std::printf("hopgen %s from C++: %s\n", hg_version(), hg_is_ok(&s) ? buf : s.msg);
  return hg_is_ok(&s) && !std::strcmp(buf, "(2,4):(4,1)") ? 0 : 1;
}
CPP
# shellcheck disable=SC2086
if $cxx -std=c++17 -Wall -Wextra -Werror $flags -I"$src/include" "$tmp/all.cpp" \
  "$build/libhopgen.a" -ldl -lm -lpthread -o "$tmp/all" 2> "$tmp/err"; then
  if "$tmp/all"; then pass; else fail "the C++ program including every header failed"; fi
else
  fail "every header in one C++17 file: $(cat "$tmp/err")"
fi
echo "headers (${#headers[@]}): $passed passed, $failed failed"
[ "$failed" -eq 0 ]
