#!/usr/bin/env bash
# Install the Debian packages hopgen needs to build and test, if any is missing.
# The CUDA toolkit (ptxas) is expected at /usr/local/cuda, as on the project's machines.
set -euo pipefail
need=(make cmake gcc clang clang-format libclang-rt-14-dev mlir-22-tools llvm-22 python3 pkg-config)
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q >/dev/null || true
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi
if ! command -v ptxas >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/ptxas ]; then
  echo "deps: warning: no ptxas (CUDA toolkit) found; the ptxas tests will fail" >&2
fi
