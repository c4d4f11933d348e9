#!/usr/bin/env bash
# The TMA cases of the GPU checks, written as `hopgen tma --batch` files, one case a line:
#   scripts/tma-cases.sh OUTDIR
# writes OUTDIR/matrix.txt (the --check matrix), OUTDIR/edges.txt (edges and signs) and
# OUTDIR/matrix-mlir.txt (the part of the matrix the MLIR backend runs). scripts/gpu-tma.sh
# runs them on the GPU; scripts/mlir-prelower.sh lowers the MLIR ones ahead of time, on a
# machine with the MLIR tools, so both must read the same cases: this file is that one copy.
set -euo pipefail
OUTDIR=${1:?usage: scripts/tma-cases.sh OUTDIR}
mkdir -p "$OUTDIR"

# ---------------------------------------------------------------- the --check matrix
# The same variants tests/kernels/test_tma_kernels.c assembles with ptxas in CI. For a
# tile of T0 x T1 the tensor is 3 T + a bit in each mode and the origin is negative (the
# innermost by exactly 16 bytes), so the grid's tiles hang over every edge.
matrix=$OUTDIR/matrix.txt
: > "$matrix"
for dt in u8:1 f16:2 bf16:2 u32:4 s32:4 f32:4; do
  t=${dt%%:*}
  e=${dt##*:}
  case $t in
    u8) reds="" ;;
    f16 | bf16) reds="add min max" ;;
    u32) reds="add min max inc dec and or xor" ;;
    s32) reds="add min max and or xor" ;;
    f32) reds="add" ;;
  esac
  for sw in none 32B 64B 128B; do
    case $sw in none) span=64 ;; 32B) span=32 ;; 64B) span=64 ;; 128B) span=128 ;; esac
    inner=$((span / e))
    o16=$((-16 / e))
    one=$((inner * 4))
    [ "$sw" = none ] || one=$inner
    for shape in "2 8,$inner" "2 64,$((2 * inner))" "3 2,16,$inner" "1 $one"; do
      rank=${shape%% *}
      tile=${shape#* }
      IFS=, read -r -a tl <<< "$tile"
      sh=()
      og=()
      for ((m = 0; m < rank; m++)); do
        if [ $m -eq $((rank - 1)) ]; then
          sh+=($((3 * tl[m] + 16 / e)))
          og+=("$o16")
        else
          sh+=($((3 * tl[m] + 5)))
          og+=(-3)
        fi
      done
      args="--dtype $t --swizzle $sw --tile $tile --shape $(
        IFS=,
        echo "${sh[*]}"
      ) --origin=$(
        IFS=,
        echo "${og[*]}"
      )"
      {
        echo "load $args"
        echo "prefetch $args"
        echo "multicast --cluster 2 $args"
        echo "multicast --cluster 4 $args"
        echo "store $args"
        for r in $reds; do echo "reduce --reduce $r $args"; done
      } >> "$matrix"
    done
  done
done

# ---------------------------------------------------------------- edges and signs
edges=$OUTDIR/edges.txt
cat > "$edges" << 'EOF'
# negative origin in each mode alone, then in both (f16: the innermost by 8 elements = 16 B)
load --shape 200,192 --tile 64,64 --origin=-5,0
load --shape 200,192 --tile 64,64 --origin=0,-8
load --shape 200,192 --tile 64,64 --origin=-64,-64
load --shape 200,192 --origin=-63,-56 --swizzle 64B --tile 64,32
# the far edges only; tiles wholly outside the tensor (an explicit grid past it)
load --shape 100,104 --tile 64,64 --origin=0,0
load --shape 100,104 --tile 64,64 --origin=-200,-320 --grid 3,3
load --shape 100,104 --tile 64,64 --origin=90,96 --grid 2,2
# padded rows (leading dimension > the row), NaN fill of f16 and f32, fp8 as bytes
load --shape 100,100 --strides 104,1 --tile 32,64 --origin=-1,-8 --nan
load --dtype f32 --shape 70,36 --strides 40,1 --tile 16,32 --origin=-3,-4 --nan
load --dtype e4m3 --shape 90,300 --strides 304,1 --tile 16,128 --origin=-2,-16
# rank 3 and rank 5, negative in every mode
load --shape 3,40,72 --tile 2,16,64 --origin=-1,-7,-24
prefetch --shape 3,40,72 --tile 2,16,64 --origin=-1,-7,-24
load --shape 3,4,5,6,64 --tile 2,2,2,2,64 --origin=-1,-1,-1,-1,-8 --swizzle none
store --shape 3,4,5,6,64 --tile 2,2,2,2,64 --origin=-1,-1,-1,-1,-8 --swizzle none
# multicast across clusters of 2 and 4, over the edges
multicast --cluster 2 --shape 300,200 --strides 208,1 --tile 128,64 --origin=-5,-24
multicast --cluster 4 --shape 300,200 --strides 208,1 --tile 128,64 --origin=-5,-24
multicast --cluster 4 --dtype f32 --shape 77,96 --tile 64,32 --origin=-9,-4 --swizzle 128B
multicast --cluster 2 --dtype u8 --shape 130,500 --strides 512,1 --tile 64,128 --origin=-1,-16 --swizzle 128B
# stores and reduce-add over the edges (guards and row padding must stay untouched)
store --shape 100,100 --strides 104,1 --tile 32,64 --origin=-1,-8
reduce --reduce add --dtype f32 --shape 100,100 --strides 104,1 --tile 32,32 --origin=-7,-4
reduce --reduce add --dtype bf16 --shape 100,100 --strides 104,1 --tile 32,64 --origin=-7,-8
reduce --reduce add --dtype u32 --shape 33,20 --strides 24,1 --tile 16,32 --origin=-8,-4 --swizzle 128B
reduce --reduce add --dtype s32 --shape 3,33,20 --strides 792,24,1 --tile 2,16,32 --origin=-1,-8,-4
# tiles narrower than the swizzle span: stage rows padded to the span, the tile in the first
# 16/32/64 B of each (the rest of every row must keep the poison), loads, NaN fill, rank 3,
# multicast 2 and 4, stores and reductions over the edges
load --shape 256,256 --tile 64,16 --swizzle 128B
load --shape 256,256 --tile 64,16 --swizzle 128B --origin=-5,-8
load --dtype u8 --shape 100,90 --strides 96,1 --tile 32,16 --swizzle 32B --origin=-3,-16
load --dtype f32 --shape 70,36 --strides 40,1 --tile 16,8 --swizzle 64B --origin=-3,-4 --nan
load --dtype bf16 --shape 3,40,72 --tile 2,16,32 --swizzle 128B --origin=-1,-7,-8
prefetch --shape 200,100 --strides 104,1 --tile 64,32 --swizzle 128B --origin=-5,-8
multicast --cluster 2 --shape 300,200 --strides 208,1 --tile 128,32 --swizzle 128B --origin=-5,-24
multicast --cluster 4 --dtype u8 --shape 130,500 --strides 512,1 --tile 64,64 --swizzle 128B --origin=-1,-16
multicast --cluster 2 --dtype f32 --shape 77,96 --tile 64,8 --swizzle 64B --origin=-9,-4
store --shape 100,100 --strides 104,1 --tile 32,16 --swizzle 128B --origin=-1,-8
store --dtype u8 --shape 90,300 --strides 304,1 --tile 16,32 --swizzle 64B
reduce --reduce add --dtype f32 --shape 100,100 --strides 104,1 --tile 32,16 --swizzle 128B --origin=-7,-4
reduce --reduce max --dtype bf16 --shape 100,100 --strides 104,1 --tile 32,32 --swizzle 128B --origin=-7,-8
reduce --reduce xor --dtype u32 --shape 33,20 --strides 24,1 --tile 16,4 --swizzle 32B --origin=-8,-4
EOF

# ---------------------------------------------------------------- the MLIR subset
# every 3rd case: the MLIR lowering (mlir-opt-22) costs more per kernel than ptx
awk 'NR % 3 == 1' "$matrix" > "$OUTDIR/matrix-mlir.txt"
