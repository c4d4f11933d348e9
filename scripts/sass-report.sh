#!/usr/bin/env bash
# SASS evidence for the GEMM kernels the benchmark uses: for each shape and type, generate
# the heuristic's kernel, assemble it with ptxas -v, disassemble with cuobjdump, and count
# the warpgroup MMAs (HGMMA for 16-bit, QGMMA for fp8) and any local-memory traffic
# (LDL/STL: spills). Prints one line per kernel; exit 1 if a kernel lacks its MMA or spills.
#   scripts/sass-report.sh PATH/TO/hopgen [WORKDIR]
set -uo pipefail
H=${1:?usage: scripts/sass-report.sh PATH/TO/hopgen [WORKDIR]}
W=${2:-$(mktemp -d)}
mkdir -p "$W"
export PATH="$PATH:/usr/local/cuda/bin"
command -v cuobjdump >/dev/null || { echo "sass-report: cuobjdump not found (CUDA toolkit)"; exit 77; }
shapes="2048,2048,2048 4096,4096,4096 8192,8192,8192 16384,16384,16384 8192,28672,8192
8192,8192,28672 4096,7168,2048 4096,2112,7168 4096,24576,1536 4096,7168,16384 128,7168,2048
128,24576,1536 64,7168,16384"
fail=0
printf '%-5s %-18s %-28s %5s %6s %6s %5s %5s\n' type shape config regs spill stack mma ldl/stl
for t in bf16 e4m3; do
  mma=$([ "$t" = e4m3 ] && echo QGMMA || echo HGMMA)
  for s in $shapes; do
    IFS=, read -r m n k <<< "$s"
    json=$("$H" gemm "$m" "$n" "$k" --type "$t" --emit "$W/k.ptx" --json) || { echo "$t $s: generation failed"; fail=1; continue; }
    cfg=$(echo "$json" | sed -E 's/.*"config": "([^"]*)".*/\1/')
    rep=$(ptxas -arch=sm_90a -v "$W/k.ptx" -o "$W/k.cubin" 2>&1)
    regs=$(echo "$rep" | sed -nE 's/.*Used ([0-9]+) registers.*/\1/p' | head -1)
    spill=$(echo "$rep" | sed -nE 's/.*bytes stack frame, ([0-9]+) bytes spill stores.*/\1/p' | head -1)
    stack=$(echo "$rep" | sed -nE 's/.* ([0-9]+) bytes stack frame.*/\1/p' | head -1)
    cuobjdump -sass "$W/k.cubin" > "$W/k.sass"
    nm=$(grep -c "$mma" "$W/k.sass")
    nl=$(grep -cE '\b(LDL|STL)\b' "$W/k.sass")
    printf '%-5s %-18s %-28s %5s %6s %6s %5s %5s\n' "$t" "${m}x${n}x${k}" "$cfg" "$regs" "$spill" "$stack" "$nm" "$nl"
    if [ "$nm" -eq 0 ] || [ "$nl" -ne 0 ] || [ "${spill:-1}" != 0 ]; then fail=1; fi
  done
done
exit $fail
