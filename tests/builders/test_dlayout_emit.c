/* The arithmetic dynamic layouts emit, through both backends: a kernel that computes the
 * GEMM's tile and element offsets, a signed floor division chain, a division by a divisor
 * of unknown sign, min/max and a mad, stores each result, and must assemble with ptxas
 * (and lower through mlir-opt-22 when it is installed). Skips only when ptxas is missing. */
#include "emit/emit_test_util.h"
#include "hopgen/dlayout.h"

static void store_i64(hg_builder_t *b, hg_val_t out, int k, hg_dint_t x) {
  hg_val_t v, addr = hg_b_bin(b, HG_ADD, out, hg_b_i64(b, 8 * k));
  CHECK_OK(hg_dint_emit(b, x, HG_T_I64, &v));
  hg_b_store(b, HG_GLOBAL, 64, 1, addr, &v);
}

static hg_builder_t *build(void) {
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("dlayout_math", &b));
  hg_b_set_threads(b, 128);
  hg_val_t pm = hg_b_param(b, HG_T_I32, "M"), pn = hg_b_param(b, HG_T_I32, "N"),
           pl = hg_b_param(b, HG_T_I32, "L"), pld = hg_b_param(b, HG_T_I64, "ld"),
           pbs = hg_b_param(b, HG_T_I64, "bs"), pi = hg_b_param(b, HG_T_I32, "i"),
           out = hg_b_param(b, HG_T_I64, "out");
  const char *names[6] = {"M", "N", "L", "ld", "bs", "i"};
  hg_dint_t v[6] = {hg_dint_val(pm),  hg_dint_val(pn),  hg_dint_val(pl),
                    hg_dint_val(pld), hg_dint_val(pbs), hg_dint_val(pi)};
  hg_dlayout_t d, tiles, tile;
  CHECK_OK(hg_dlayout_parse("(M,N,L):(ld,1,bs)", 6, names, v, &d));
  hg_tiler_t t = {0};
  CHECK_OK(hg_tiler_parse("[128,256,_]", &t));
  CHECK_OK(hg_dl_zipped_divide(b, &d, &t, &tiles));
  /* The tile index from the block, split over the grid of tiles (column-major here). */
  hg_dlayout_t grid;
  CHECK_OK(hg_dlayout_mode(&tiles, 1, &grid));
  hg_dtuple_t crd;
  hg_dint_t idx = hg_dint_val_nonneg(hg_b_sreg(b, HG_CTAID_X)), off, x;
  CHECK_OK(hg_dl_idx2crd(b, &grid.shape, NULL, idx, HG_DL_IN_DOMAIN, &crd));
  CHECK_OK(hg_dl_local_tile(b, &d, &t, &crd, &tile, &off));
  store_i64(b, out, 0, off);
  /* A signed index through a dynamic extent: floor division and modulo by M (>= 1). */
  hg_dtuple_t shape, c2;
  hg_dint_t ext[2] = {d.shape.d[1], hg_dint(6)};
  CHECK_OK(hg_dtuple_make(2, ext, &shape));
  CHECK_OK(hg_dl_idx2crd(b, &shape, NULL, v[5], 0, &c2));
  store_i64(b, out, 1, c2.d[1]);
  store_i64(b, out, 2, c2.d[2]);
  /* A divisor of unknown sign (ld), a power of two, min/max. */
  CHECK_OK(hg_dint_div(b, v[5], v[3], &x));
  store_i64(b, out, 3, x);
  CHECK_OK(hg_dint_mod(b, v[5], v[3], &x));
  store_i64(b, out, 4, x);
  CHECK_OK(hg_dint_mod(b, v[5], hg_dint(64), &x));
  store_i64(b, out, 5, x);
  CHECK_OK(hg_dint_min(b, v[0], v[1], &x));
  CHECK_OK(hg_dint_max(b, x, v[5], &x));
  store_i64(b, out, 6, x);
  CHECK_OK(hg_dint_ceil_div(b, v[5], v[1], &x));
  store_i64(b, out, 7, x);
  CHECK_OK(hg_builder_status(b));
  return b;
}

static void test_ptx(void) {
  hg_builder_t *b = build();
  CHECK(assemble_ok(b));
  hg_builder_destroy(b);
}

static void test_mlir(void) {
  const char *argv[] = {"mlir-opt-22", "--version", NULL};
  hg_text_t o = {0}, e = {0};
  hg_status_t s = hg_tool_run(argv, NULL, &o, &e);
  hg_text_free(&o);
  hg_text_free(&e);
  if (s.code == HG_ERR_TOOL && strstr(s.msg, "not found")) {
    fprintf(stderr, "  (mlir-opt-22 not installed: MLIR lowering not checked)\n");
    return;
  }
  hg_builder_t *b = build();
  hg_text_t ptx = {0};
  CHECK_OK(hg_emit(b, HG_BACKEND_MLIR, &ptx));
  hg_ptxas_report_t rep;
  if (ptx.data) CHECK_OK(hg_ptxas_check(ptx.data, &rep));
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

int main(void) {
  emit_test_require_ptxas();
  HG_RUN(test_ptx);
  HG_RUN(test_mlir);
  return hg_test_finish();
}
