/* Shared between the TMA copy generator (tma.c), its run/check driver (tma_run.c), the
 * streaming copy (copy.c) and their tests: facts about the generated kernels and the
 * host side of the check, which are not public API. */
#ifndef HOPGEN_KERNELS_TMA_INTERNAL_H
#define HOPGEN_KERNELS_TMA_INTERNAL_H

#include <stdint.h>

#include "hopgen/kernels.h"

/* The per-CTA status word the TMA kernels write (thread 0, at the very end). The host
 * clears the words to HG_TMA_STATUS_NONE before the launch, so a CTA that never ran to
 * its end shows up as such. */
enum {
  HG_TMA_STATUS_NONE = 0,
  HG_TMA_STATUS_DONE = 1,
  HG_TMA_STATUS_TIMEOUT = 2, /* the mbarrier wait gave up: the phase never completed */
};
/* The status is the word's low byte. A store or reduce kernel puts above it the number of
 * its boxes it wrote element by element because TMA cannot take their negative
 * coordinates (at most HG_TMA_MAX_BOXES), which the host compares with the plan's. */
#define HG_TMA_STATUS_MASK 0xFFu
#define HG_TMA_STATUS_FALLBACK_SHIFT 8

/* Bytes before and after a store's output tensor that must stay untouched. 256 keeps the
 * tensor's base as aligned as cuMemAlloc's (TMA needs 16). Loads use the same layout. */
#define HG_TMA_GUARD_BYTES 256u
/* Most bytes of stage images (loads: dumps) or tensor one check may move: keeps host
 * memory and the model's time bounded. */
#define HG_TMA_MAX_CHECK_BYTES (UINT64_C(1) << 30)

/* splitmix64: the host's reproducible random stream for test data. */
static inline uint64_t hg_splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* One check of one spec: the host data, the model's answer, and what the GPU gave. */
typedef struct hg_tma_check {
  hg_rt_t *rt;
  hg_tma_spec_t s; /* normalized */
  hg_tma_plan_t plan;
  const hg_tma_plan_t *p; /* &plan */
  hg_backend_t be;
  bool load;
  int esize, C;
  int64_t tiles, ctas;
  uint64_t tensor_bytes; /* the tensor's extent */
  uint64_t alloc_bytes;  /* guard + tensor (rounded up to 16) + guard */
  uint64_t image_bytes;  /* ctas x smem_bytes */
  /* host */
  uint8_t *tensor;   /* the allocation's initial bytes (loads: the input) */
  uint8_t *expected; /* loads: one stage image per CTA; stores: the whole allocation */
  uint8_t *got;      /* the same shape, from the GPU */
  uint8_t *images;   /* stores: the stage images the kernel copies in, one per CTA */
  uint32_t *status;  /* per CTA, from the GPU */
  /* device */
  hg_devptr_t d_tensor, d_buf, d_status;
} hg_tma_check_t;

/* Normalize and plan the spec, size the buffers. No allocation. */
hg_status_t hg_tma_check_init(hg_tma_check_t *x, const hg_tma_spec_t *spec);
/* Host buffers: fresh data from seed, the model's expected bytes (and, for loads, the
 * plan's expect_tx checked against the model's transaction bytes). */
hg_status_t hg_tma_check_prepare(hg_tma_check_t *x, uint64_t seed);
/* Compare got/status with expected into res (counts, first max_report described). */
void hg_tma_check_compare(const hg_tma_check_t *x, int max_report, hg_tma_result_t *res);
/* Free host buffers (and device buffers when x->rt is set). */
void hg_tma_check_free(hg_tma_check_t *x);
/* The run-time values the element-wise fallback of a store or reduce kernel works from
 * (tma.c): per tensor mode the tile's origin (I32), the tensor's extent and stride in bytes
 * (I64); the tensor's base (I64) and the stage buffer's shared-memory address (I32). */
typedef struct hg_tma_fallback_in {
  hg_val_t tile_origin[HG_TMA_MAX_RANK], extent[HG_TMA_MAX_RANK], stride_bytes[HG_TMA_MAX_RANK];
  hg_val_t gmem, stage;
} hg_tma_fallback_in_t;

/* What the fallback does with element i (I32, 0 <= i < the tile's elements, tensor-map
 * dimension 0 fastest): write (PRED) when its box has a negative coordinate and the element
 * lies in the tensor; then from shared-memory address saddr (I32) to global address gaddr
 * (I64, generic). */
typedef struct hg_tma_fallback_elem {
  hg_val_t write, gaddr, saddr;
} hg_tma_fallback_elem_t;

/* The builder code of one element of the fallback (the kernel's loop body, and a test's
 * probe on constants). */
hg_status_t hg_tma_emit_fallback_element(hg_builder_t *b, const hg_tma_plan_t *p,
                                         const hg_tma_fallback_in_t *in, hg_val_t i,
                                         hg_tma_fallback_elem_t *out);

/* The boxes of plan p that the store or reduce kernel writes element by element for the
 * tile at origin: those hg_tma_box_issuable refuses (a negative coordinate). */
int hg_tma_tile_fallback_boxes(const hg_tma_plan_t *p, const int32_t *origin);
/* Tile t's coordinates q (in tiles) and origin per tensor mode, mode 0 fastest. */
void hg_tma_tile_of(const hg_tma_spec_t *s, int64_t t, int64_t *q, int32_t *origin);

#endif
