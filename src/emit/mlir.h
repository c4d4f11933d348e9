/* hopgen emit layer: the MLIR backend's private interface (mlir.c prints, mlir_lower.c
 * lowers). hg_emit_mlir itself is public (include/hopgen/emit.h). */
#ifndef HOPGEN_EMIT_MLIR_H
#define HOPGEN_EMIT_MLIR_H

#include "emit/ir.h"

/* The PTX ISA version (x10) a kernel needs: 80, or 84 for wgmma with mixed-signedness
 * integer operands (ptxas: "WGMMA with mixed integer types requires PTX ISA .version
 * 8.4"). Both backends ask for the lowest sufficient version. */
int hg_mlir_ptx_version(const hg_builder_t *b);

/* The mlir-opt-22 pass pipeline that lowers hg_emit_mlir's text to PTX (mlir_lower.c). */
const char *hg_mlir_pipeline(void);
/* The lowering's version, part of every lowering-cache key (mlir_cache.h): bumped whenever
 * the pipeline, the PTX extraction or the MLIR release changes what a text lowers to. */
const char *hg_mlir_lower_version(void);

/* Lower the text of hg_emit_mlir to PTX for sm_90a with mlir-opt-22 (one child process:
 * nvgpu/nvvm/arith/cf -> LLVM dialect -> LLVM -O3 -> NVPTX, see mlir_lower.c) and check
 * that it holds the entry `kernel_name`. On failure the sentence carries the tool's first
 * diagnostics and the path of the kept input file. */
hg_status_t hg_mlir_lower(const char *mlir_text, const char *kernel_name, hg_text_t *ptx);
/* hg_mlir_lower that also says whether it failed because the tool could not be found (the
 * cache's caller then says where else a lowering could have come from). No cache here:
 * this always runs the tool. */
hg_status_t hg_mlir_lower_run(const char *mlir_text, const char *kernel_name, hg_text_t *ptx,
                              bool *tool_missing);

/* hg_emit's MLIR path: hg_emit_mlir, then hg_mlir_to_ptx (the lowering cache, then
 * hg_mlir_lower). */
hg_status_t hg_emit_mlir_ptx(const hg_builder_t *b, hg_text_t *ptx);

#endif
