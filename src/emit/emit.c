/* The backend dispatch: hg_emit picks the PTX printer or the MLIR printer plus its lowering,
 * and backends have names for command lines and configuration ("ptx", "mlir"). */
#include <string.h>

#include "emit/ir.h"
#include "emit/mlir.h"

const char *hg_backend_name(hg_backend_t be) {
  switch (be) {
  case HG_BACKEND_PTX:
    return "ptx";
  case HG_BACKEND_MLIR:
    return "mlir";
  }
  return "?";
}

hg_status_t hg_backend_parse(const char *name, hg_backend_t *out) {
  if (name && !strcmp(name, "ptx")) {
    *out = HG_BACKEND_PTX;
    return hg_ok();
  }
  if (name && !strcmp(name, "mlir")) {
    *out = HG_BACKEND_MLIR;
    return hg_ok();
  }
  return hg_error(HG_ERR_PARSE, "unknown backend '%s' (expected ptx or mlir)",
                  name ? name : "(null)");
}

hg_status_t hg_emit(const hg_builder_t *b, hg_backend_t be, hg_text_t *ptx) {
  if (!ptx) return hg_error(HG_ERR_INVALID, "hg_emit: out is NULL");
  ptx->data = NULL;
  ptx->len = 0;
  switch (be) {
  case HG_BACKEND_PTX:
    return hg_emit_ptx(b, ptx);
  case HG_BACKEND_MLIR:
    return hg_emit_mlir_ptx(b, ptx); /* mlir.c prints, mlir_lower.c runs mlir-opt-22 */
  }
  return hg_error(HG_ERR_INVALID, "hg_emit: %d is not an hg_backend_t", (int)be);
}
