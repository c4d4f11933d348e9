/* hopgen for language bindings and tools: values written into caller buffers instead of
 * FILE streams, and plans as JSON, so a binding (python/hopgen, ctypes) needs no stdio or
 * struct walking of its own.
 *
 * The text functions follow snprintf: they write at most size bytes (NUL included) and
 * return the length the whole text needs, so a caller retries with a larger buffer. */
#ifndef HOPGEN_BINDINGS_H
#define HOPGEN_BINDINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hopgen/layout.h"
#include "hopgen/sm90.h"
#include "hopgen/status.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: what libhopgen.so exports */

/* hg_layout_show's table (svg false) or hg_layout_svg's picture (svg true; tv may be NULL)
 * into buf. *needed gets the text's length; HG_ERR_CAPACITY when it does not fit in size
 * (retry with *needed + 1 bytes). */
hg_status_t hg_layout_picture(const hg_composed_t *l, const hg_layout_t *tv, bool svg, char *buf,
                              size_t size, size_t *needed);

/* A TMA plan as one JSON object: what `hopgen plan tma --json` prints (op, dtype, tensor,
 * tile, smem layout, tensor_map fields, boxes with their CTA, multicast). g may be NULL
 * (then "tensor" is omitted); origin (per tensor mode) may be NULL, else every box also
 * gets "abs_coords" (boxes whose coordinates do not fit int32 get null). */
int hg_tma_plan_json(const hg_tma_tensor_t *g, const hg_tma_plan_t *p, const int32_t *origin,
                     char *buf, size_t size);

/* A TiledMma as one JSON object, with the stage buffers of A and B at shared-memory
 * addresses smem_a and smem_b: what `hopgen plan mma --json` prints (tile, warpgroups,
 * the wgmma atom, operands with their descriptors, every instruction's descriptors, the
 * accumulator's thread-value layout). */
int hg_tiled_mma_json(const hg_tiled_mma_t *tm, uint32_t smem_a, uint32_t smem_b, char *buf,
                      size_t size);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
