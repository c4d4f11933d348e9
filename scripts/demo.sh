#!/usr/bin/env bash
# The main job: build hopgen, show the layout algebra at work, generate kernels, validate
# them with ptxas, and run them on the GPU when one is present.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
exec build/hopgen demo
