/* The TMA kernel variant matrix shared by the PTX and MLIR assembly tests (tma_matrix.h). */
#include "tma_matrix.h"

const hg_dtype_t tma_matrix_types[8] = {HG_U8,  HG_E4M3, HG_F16, HG_BF16,
                                        HG_U16, HG_U32,  HG_S32, HG_F32};
const hg_swizzle_mode_t tma_matrix_swizzles[4] = {HG_SWIZZLE_NONE, HG_SWIZZLE_32B, HG_SWIZZLE_64B,
                                                  HG_SWIZZLE_128B};

int tma_matrix_for_each(tma_matrix_fn fn, void *ctx) {
  int n = 0;
  for (int ti = 0; ti < 8; ti++) {
    const hg_dtype_t t = tma_matrix_types[ti];
    const int e = hg_dtype_bytes(t);
    for (int si = 0; si < 4; si++) {
      const hg_swizzle_mode_t sw = tma_matrix_swizzles[si];
      const int span = sw ? hg_swizzle_mode_bytes(sw) : 64;
      /* one swizzle atom (8 rows of the span); 64 rows of two spans (two boxes along the
       * contiguous mode); a 3-D tile (2 x 16 rows); a 1-D tile (a single row: the stage
       * layout needs 8 rows for the pattern only when there is a second mode) */
      const struct {
        int rank;
        int tile[3];
      } shapes[] = {
          {2, {8, span / e}},
          {2, {64, 2 * span / e}},
          {3, {2, 16, span / e}},
          {1, {span / e * (sw ? 1 : 4)}},
      };
      for (size_t hi = 0; hi < sizeof shapes / sizeof shapes[0]; hi++) {
        hg_tma_spec_t s = hg_tma_spec_default(HG_TMA_LOAD);
        s.dtype = t;
        s.swizzle = sw;
        s.rank = shapes[hi].rank;
        for (int m = 0; m < s.rank; m++) {
          s.tile[m] = shapes[hi].tile[m];
          /* a tensor that the tiles overhang, origins negative in every mode */
          s.shape[m] = 3 * s.tile[m] + (m == s.rank - 1 ? 16 / e : 5);
          s.origin[m] = m == s.rank - 1 ? -16 / e : -3;
          s.grid[m] = 0;
        }
        for (int op = 0; op < HG_TMA_OP_COUNT; op++) {
          s.op = (hg_tma_op_t)op;
          if (hg_tma_op_is_reduce(s.op)) {
            hg_status_t ok = hg_tma_reduce_check(s.op, t);
            if (!hg_is_ok(&ok)) continue;
          }
          for (int c = 1; c <= (s.op == HG_TMA_LOAD ? 4 : 1); c *= 2) {
            s.cluster = c;
            fn(&s, ctx);
            n++;
          }
        }
      }
    }
  }
  return n;
}
