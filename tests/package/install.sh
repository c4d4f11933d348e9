#!/usr/bin/env bash
# Install hopgen to a temporary prefix and use it from outside: a C program built through
# pkg-config (shared library), the same after the prefix has moved (hopgen.pc is relative to
# itself), and a C and a C++17 program built with find_package(hopgen) (hopgen::hopgen and
# hopgen::hopgen_static). Each generates a GEMM's PTX and checks it with ptxas; exit 77 when
# ptxas is missing. Usage: install.sh BUILD_DIR SOURCE_DIR
set -u
build=${1:?usage: install.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: install.sh BUILD_DIR SOURCE_DIR}
cc=${CC:-cc}
cxx=${CXX:-c++}
flags=${HOPGEN_CONSUMER_FLAGS:-} # the sanitizer flags of a sanitized build
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
skipped=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
# run NAME PROGRAM...: 0 passes, 77 (no ptxas) is counted as skipped, anything else fails.
run() {
  local name=$1
  shift
  "$@" > "$tmp/run.out" 2>&1
  local rc=$?
  cat "$tmp/run.out"
  case $rc in
  0) pass ;;
  77) skipped=$((skipped + 1)) ;;
  *) fail "$name exited $rc" ;;
  esac
}

if ! cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log" 2>&1; then
  cat "$tmp/install.log" >&2
  echo "FAIL: cmake --install" >&2
  exit 1
fi
pc=$(find "$tmp/prefix" -name hopgen.pc | head -1)
if [ -z "$pc" ]; then echo "FAIL: no hopgen.pc installed" >&2; exit 1; fi
rel=${pc#"$tmp/prefix/"}
libdir=$(dirname "$(dirname "$rel")") # lib or lib/<multiarch>

# pkg-config, for the prefix as installed and after it moved.
for where in prefix moved; do
  if [ "$where" = moved ]; then mv "$tmp/prefix" "$tmp/moved"; fi
  export PKG_CONFIG_PATH=$tmp/$where/$libdir/pkgconfig
  inc=$(pkg-config --variable=includedir hopgen)
  if [ "$(cd "$inc" 2> /dev/null && pwd -P)" = "$(cd "$tmp/$where/include" && pwd -P)" ]; then pass; else
    fail "pkg-config includedir is '$inc', not $tmp/$where/include"
  fi
  # shellcheck disable=SC2046,SC2086
  if $cc -std=c11 -Wall -Wextra -Werror $flags "$src/tests/package/consumer/consumer.c" \
    $(pkg-config --cflags --libs hopgen) -o "$tmp/c_$where" 2> "$tmp/cc.log"; then
    run "the pkg-config C program ($where)" env LD_LIBRARY_PATH="$tmp/$where/$libdir" "$tmp/c_$where"
  else
    fail "building the C program through pkg-config ($where): $(cat "$tmp/cc.log")"
  fi
done

# find_package, against the moved prefix (the CMake package is relocatable too).
if cmake -S "$src/tests/package/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/moved" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" > "$tmp/configure.log" 2>&1 &&
  cmake --build "$tmp/consumer" > "$tmp/build.log" 2>&1; then
  run "the find_package C program (hopgen::hopgen)" "$tmp/consumer/consumer_c"
  run "the find_package C++ program (hopgen::hopgen_static)" "$tmp/consumer/consumer_cxx"
  if ldd "$tmp/consumer/consumer_c" | grep -q "libhopgen.so.0.1 "; then pass; else
    fail "consumer_c does not load libhopgen.so.0.1: $(ldd "$tmp/consumer/consumer_c")"
  fi
  if ldd "$tmp/consumer/consumer_cxx" | grep -q libhopgen; then
    fail "consumer_cxx (hopgen::hopgen_static) loads a shared libhopgen"
  else pass; fi
else
  cat "$tmp/configure.log" "$tmp/build.log" >&2
  fail "building the find_package consumer"
fi

echo "install: $passed passed, $failed failed, $skipped skipped (no ptxas)"
[ "$failed" -eq 0 ] || exit 1
[ "$skipped" -eq 0 ] || exit 77
