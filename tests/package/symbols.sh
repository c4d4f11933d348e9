#!/usr/bin/env bash
# libhopgen.so exports exactly the functions the public headers declare: no internal
# function leaks, and every declared one is there (a header without the visibility pragma
# would hide its functions). The headers are read by the compiler (gcc -aux-info lists
# every function a translation unit declares, with the file), so any header added to
# include/hopgen is covered. Usage: symbols.sh BUILD_DIR SOURCE_DIR
set -u
build=${1:?usage: symbols.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: symbols.sh BUILD_DIR SOURCE_DIR}
lib=$build/libhopgen.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc=${CC:-cc}
"$gcc" --version 2> /dev/null | grep -qi 'gcc\|free software foundation' || gcc=gcc
if ! command -v "$gcc" > /dev/null || ! command -v nm > /dev/null; then
  echo "SKIP: needs gcc (for -aux-info) and nm"
  exit 77
fi
if [ ! -f "$lib" ]; then echo "FAIL: no $lib" >&2; exit 1; fi

for h in "$src"/include/hopgen/*.h; do echo "#include \"hopgen/$(basename "$h")\""; done > "$tmp/all.c"
if ! "$gcc" -std=c11 -I"$src/include" -aux-info "$tmp/all.aux" -fsyntax-only "$tmp/all.c"; then
  echo "FAIL: the public headers do not compile" >&2
  exit 1
fi
# Declarations from include/hopgen/, static inline ones left out: the name before the first '('.
grep '/include/hopgen/\|^/\* include/hopgen/' "$tmp/all.aux" | grep -v '\*/ static ' |
  sed -E 's/^[^(]*[ *]([A-Za-z_][A-Za-z0-9_]*) \(.*$/\1/' | sort -u > "$tmp/declared"
# Exported definitions; names starting with '_' belong to the toolchain (_init, ASan's).
nm -D --defined-only "$lib" | awk '{print $NF}' | grep -v '^_' | sort -u > "$tmp/exported"
status=0
if comm -13 "$tmp/declared" "$tmp/exported" | grep -q .; then
  echo "FAIL: exported but declared in no public header:" >&2
  comm -13 "$tmp/declared" "$tmp/exported" | sed 's/^/  /' >&2
  status=1
fi
if comm -23 "$tmp/declared" "$tmp/exported" | grep -q .; then
  echo "FAIL: declared in a public header but not exported (a header without" >&2
  echo "      '#pragma GCC visibility push(default)', or a function never defined):" >&2
  comm -23 "$tmp/declared" "$tmp/exported" | sed 's/^/  /' >&2
  status=1
fi
echo "symbols: $(wc -l < "$tmp/exported") exported, $(wc -l < "$tmp/declared") declared"
exit $status
