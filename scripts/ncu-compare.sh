#!/usr/bin/env bash
# hopgen's GEMM kernel beside cuBLASLt's on one problem, by Nsight Compute (GPU machine):
# each kernel alone, caches flushed, base clocks. Prints a table of what told the two apart on
# the split-K shapes (bench/RESULTS.md, eleventh session): duration, SM active cycles, L2
# sectors read and requests, bytes TMA delivered to the SMs, L2 hit rate, DRAM bytes; then,
# with SASS=1, the instructions with the most warp samples in each kernel.
#   scripts/ncu-compare.sh build-gpu/hopgen 512 512 16384 [gemm options...]
#   CONFIGS="128x64x64,c1x2,s8,k4 128x128x64,s6,k8" scripts/ncu-compare.sh H 512 512 16384
# (CONFIGS: hopgen's kernel under each configuration as well; cuBLASLt's once.)
set -uo pipefail
H=${1:?usage: ncu-compare.sh path/to/hopgen M N K [gemm options...]}
shift
# shellcheck disable=SC2012 # fixed install paths
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | head -1)
[ -n "$NCU" ] || { echo "ncu-compare.sh: no ncu on this machine"; exit 1; }
OUT=${OUT:-/tmp/ncu-compare}
mkdir -p "$OUT"
metrics=gpu__time_duration.sum,sm__cycles_active.avg,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,l1tex__m_xbar2l1tex_read_bytes.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum

# one kernel (regex) of one `hopgen gemm` run: raw metrics to $OUT/NAME.csv, and the source
# page (SASS with samples) to $OUT/NAME-sass.csv with SASS=1
profile() {
  local name=$1 re=$2
  shift 2
  local set=(--section LaunchStats --metrics "$metrics")
  [ "${SASS:-0}" = 1 ] && set=(--section LaunchStats --section SourceCounters --section WarpStateStats --metrics "$metrics")
  "$NCU" "${set[@]}" -k "regex:$re" --launch-skip 6 --launch-count 1 -o "$OUT/$name" -f \
    "$H" gemm "$@" --bench --iters 2 --warmup 2 > "$OUT/$name.log" 2>&1
  "$NCU" -i "$OUT/$name.ncu-rep" --page raw --csv > "$OUT/$name.csv" 2>> "$OUT/$name.log"
  [ "${SASS:-0}" = 1 ] &&
    "$NCU" -i "$OUT/$name.ncu-rep" --page source --csv --print-source sass > "$OUT/$name-sass.csv" 2>> "$OUT/$name.log"
  echo "$name"
}

names=("$(profile cublaslt 'nvjet|sm90_xmma|cutlass' "$@")" "$(profile hopgen 'hg_gemm' "$@")")
i=0
for c in ${CONFIGS:-}; do
  i=$((i + 1))
  names+=("$(profile "hopgen-$i" 'hg_gemm' "$@" --config "$c")")
done

python3 - "$OUT" "${names[@]}" << 'EOF'
import csv, os, sys
out, names = sys.argv[1], sys.argv[2:]
cols = [("gpu__time_duration.sum", "us", 1e-3), ("sm__cycles_active.avg", "SM cyc", 1),
        ("lts__t_sectors_srcunit_tex_op_read.sum", "L2 rd MiB", 32 / 2**20),
        ("lts__t_requests_srcunit_tex_op_read.sum", "L2 req k", 1e-3),
        ("l1tex__m_xbar2l1tex_read_bytes.sum", "to SM MiB", 1 / 2**20),
        ("lts__t_sector_hit_rate.pct", "L2 hit %", 1), ("dram__bytes_read.sum", "DRAM MiB", 1 / 2**20)]
unit = {"ns": 1, "nsecond": 1, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6, "byte": 1,
        "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1024, "MB": 2**20}
print(f"{'kernel':44s}" + "".join(f"{c[1]:>11s}" for c in cols))
for n in names:
    try:
        rows = [r for r in csv.reader(open(os.path.join(out, n + ".csv"))) if len(r) > 10]
        h, u, v = rows[0], rows[1], rows[2]
    except (OSError, IndexError):
        print(f"{n:44s} (no profile: {os.path.join(out, n + '.log')})")
        continue
    kname = v[h.index("Kernel Name")] if "Kernel Name" in h else n
    cells = []
    for m, _, scale in cols:
        if m not in h:
            cells.append("-")
            continue
        i = h.index(m)
        x = float(v[i].replace(",", "")) * unit.get(u[i], 1)
        cells.append(f"{x * scale:.1f}")
    print(f"{(n + ': ' + kname)[:44]:44s}" + "".join(f"{c:>11s}" for c in cells))
    # the launch: grid, block, cluster, shared memory, registers (LaunchStats)
    launch = [f"{m[8:]}={v[h.index(m)]}" for m in h if m.startswith("launch__") and
              any(w in m for w in ("grid_size", "block_size", "cluster_dim", "cluster_size",
                                   "shared_mem_per_block", "registers_per_thread"))]
    print("      " + " ".join(launch))
    sass = os.path.join(out, n + "-sass.csv")
    if os.path.exists(sass):
        rows = list(csv.reader(open(sass)))
        hdr, data = rows[1], rows[2:]
        ia, isrc = hdr.index("Warp Stall Sampling (All Samples)"), hdr.index("Source")
        tot = sum(float(r[ia] or 0) for r in data) or 1
        for r in sorted(data, key=lambda r: -float(r[ia] or 0))[:8]:
            print(f"      {100 * float(r[ia]) / tot:5.1f}%  {r[isrc].strip()[:80]}")
EOF
