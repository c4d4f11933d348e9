/* TEMPORARY — delete this file when src/emit/mlir.c lands.
 *
 * A placeholder hg_emit_mlir so that callers (src/kernels/) link before the MLIR backend
 * exists. It records nothing and always fails with HG_ERR_UNSUPPORTED; the MLIR backend
 * engineer replaces it with the real printer in src/emit/mlir.c (and updates hg_emit in
 * tools.c to dispatch to it). */
#include "emit/ir.h"

hg_status_t hg_emit_mlir(const hg_builder_t *b, hg_text_t *out) {
  (void)b;
  if (out) *out = (hg_text_t){0};
  return hg_error(HG_ERR_UNSUPPORTED, "the MLIR backend is not built yet");
}
