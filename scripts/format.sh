#!/usr/bin/env bash
# clang-format every C source; --check fails on any difference instead of rewriting.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find src include tools tests bench examples fuzz -name '*.[ch]')
if [ "${1:-}" = "--check" ]; then
  clang-format --dry-run -Werror $files
else
  clang-format -i $files
fi
