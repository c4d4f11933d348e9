/* hopgen kernel builders — the reusable middle between plans (sm90.h) and kernels
 * (kernels.h): the pieces a Hopper kernel is composed of, each emitting builder calls
 * (emit.h) from what the plans computed.
 *
 *   run-time layouts   a layout or composed layout evaluated at a run-time index
 *   warp roles         producer / consumer warpgroups, setmaxnreg, elected issue,
 *                      named barriers between consumers, ping-pong consumers' turns
 *   cluster2d          a cluster of m x n CTAs sharing operands by multicast
 *   stage ring         full/empty mbarriers per stage, phase tracking, producer acquire/
 *                      commit, consumer wait/release (to every CTA that wrote the stage),
 *                      the kernel's prologue (barriers initialised, cluster in step)
 *   producer           the warp-specialized producer: per unit and k-block, a stage of two
 *                      operands by TMA (multicast) or cp.async
 *   TiledCopy          TMA (load, multicast slices, prefetch, store, reduce: the box-issue
 *                      loop lives here once), cp.async (any alignment, zero fill),
 *                      ldmatrix (shared memory -> MMA fragments), stmatrix
 *   TiledMma           wgmma SS, wgmma RS (A through ldmatrix), mma.sync m16n8k16, and
 *                      the consumer main loop over a stage ring (fp8 promotion, block scales)
 *   tile schedulers    a unit sequence behind one interface (persistent rasterized, split-K
 *                      ranges, grouped)
 *   split-K            partial tiles to workspace slots, and the reduction pass summing them
 *                      in split order through the epilogue
 *   epilogue           accumulators -> a chain of elementwise steps -> TMA store through
 *                      stmatrix and swizzled shared memory, or predicated direct stores
 *
 * So a kernel generator reads as a short orchestration (src/kernels/gemm_gen.c), and
 * changing an atom (TMA or cp.async, wgmma or mma.sync) changes the emitted sequence.
 *
 * Conventions: value types (no malloc except hg_acc_map_t), hg_status_t with a sentence
 * for every refusal at make time, and misuse at emission time recorded in the builder's
 * sticky status (hg_builder_fail) like any hg_b_* misuse. All run-time values are I32
 * unless noted; coordinates stay signed. */
#ifndef HOPGEN_BUILDERS_H
#define HOPGEN_BUILDERS_H

#include <stdbool.h>
#include <stdint.h>

#include "hopgen/emit.h"
#include "hopgen/layout.h"
#include "hopgen/sm90.h"
#include "hopgen/status.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: what libhopgen.so exports */

/* ---------------------------------------------------------------- run-time layouts */

/* l(idx) for a run-time 1-D index idx (I32 in [0, size(l))): idx split colexicographically
 * over l's leaves (CuTe's idx2crd) and dotted with the strides - hg_dl_eval of the static
 * layout (dlayout.h), so only the index is run-time arithmetic and every division is by a
 * constant. */
hg_status_t hg_layout_emit(hg_builder_t *b, const hg_layout_t *l, hg_val_t idx, hg_val_t *out);
/* Swizzle<B,M,S> of an offset in elements of esize bytes, applied to an I32 byte offset (in
 * bytes it is Swizzle<B, M + log2(esize), S>). */
hg_val_t hg_swizzle_emit_bytes(hg_builder_t *b, hg_swizzle_t sw, int esize, hg_val_t off_bytes);
/* c(crd) for a composed layout: crd holds one I32 per top-level mode of c->layout, each a
 * 1-D index into that mode (in [0, its size)). The element offset (I32), offset and swizzle
 * applied: what hg_composed_eval computes on the host (hg_dl_crd2idx, then the swizzle). */
hg_status_t hg_composed_emit(hg_builder_t *b, const hg_composed_t *c, const hg_val_t *crd,
                             hg_val_t *out);

/* ---------------------------------------------------------------- warp roles */

/* Named barrier ids the roles use (0 is bar.sync of the whole CTA): consumer w's own
 * barrier, and the two ordering barriers of ping-pong consumers. */
#define HG_BAR_CONSUMER_BASE 1
#define HG_BAR_ORDER_BASE 4
#define HG_MAX_CONSUMERS 3

typedef struct hg_roles_spec {
  int producers;     /* producer warpgroups: 0 (no specialization) or 1 */
  int consumers;     /* consumer warpgroups, 1..HG_MAX_CONSUMERS */
  int producer_regs; /* registers per thread after setmaxnreg (24..256, multiple of 8); 0: none */
  int consumer_regs;
} hg_roles_spec_t;

/* Who a thread is. Set by hg_roles_make at the top of the kernel. */
typedef struct hg_roles {
  hg_roles_spec_t spec;
  int threads;              /* 128 x (producers + consumers) */
  hg_val_t tid, warp, lane; /* CTA-wide */
  hg_val_t wg_tid;          /* thread within its warpgroup, 0..127 */
  hg_val_t warp_in_wg;      /* warp within its warpgroup, 0..3 */
  hg_val_t consumer;        /* consumer index tid / 128 - producers (meaningful in consumers) */
} hg_roles_t;

/* Check the spec, set the kernel's threads (and .minnctapersm 1: the register cap at entry
 * setmaxnreg needs), and read the thread's indices. */
hg_status_t hg_roles_make(hg_builder_t *b, const hg_roles_spec_t *spec, hg_roles_t *out);
/* The producer branch (if tid < 128: setmaxnreg.dec), then the consumer branch (else:
 * setmaxnreg.inc), closed by hg_roles_end. Each condition is warpgroup-uniform. */
void hg_roles_producer(hg_builder_t *b, const hg_roles_t *r);
void hg_roles_consumer(hg_builder_t *b, const hg_roles_t *r);
void hg_roles_end(hg_builder_t *b, const hg_roles_t *r);
/* One elected thread of the warp for which warp_pred (PRED, warp-uniform) holds: opens two
 * ifs (elect.sync needs the whole warp), closed by hg_elect_end. */
void hg_elect_begin(hg_builder_t *b, hg_val_t warp_pred);
void hg_elect_end(hg_builder_t *b);
/* bar.sync of the calling consumer warpgroup's 128 threads (its own named barrier; one
 * branch per consumer since barrier ids are immediates). */
void hg_roles_consumer_sync(hg_builder_t *b, const hg_roles_t *r);
/* Ping-pong ordering between two consumers: wait until the other one has signalled
 * (bar.sync of both, 256 threads), and signal the other (bar.arrive). */
void hg_roles_order_wait(hg_builder_t *b, const hg_roles_t *r);
void hg_roles_order_signal(hg_builder_t *b, const hg_roles_t *r);
/* MMA turns of two consumers that work on the same k-blocks (a cooperative tile), on the
 * ordering barriers: consumer 0 takes the first turn without waiting (started: a PRED
 * variable, false before it, set by the wait), then the turns alternate; signal hands the
 * turn to the other. turns_end, after the last k-block, takes consumer 1's last hand-over (an
 * arrival with no bar.sync would be left on the barrier), if any turn was taken. */
void hg_roles_mma_turn_wait(hg_builder_t *b, const hg_roles_t *r, hg_val_t started);
void hg_roles_mma_turn_signal(hg_builder_t *b, const hg_roles_t *r);
void hg_roles_mma_turns_end(hg_builder_t *b, const hg_roles_t *r, hg_val_t started);

/* ---------------------------------------------------------------- clusters of m x n CTAs */

/* A 2-D cluster: CTA (rm, rn) has rank rm + m * rn. CTAs of a row (same rm) share the A
 * operand tile, CTAs of a column (same rn) share B. m = n = 1: no cluster (rank 0). */
typedef struct hg_cluster2d {
  int m, n;
  hg_val_t rank, rm, rn; /* I32 */
  hg_val_t id, count;    /* the cluster's index in the grid and the number of clusters */
} hg_cluster2d_t;

hg_status_t hg_cluster2d_make(hg_builder_t *b, int m, int n, hg_cluster2d_t *out);
/* Multicast masks over the cluster's ranks: the CTAs sharing this CTA's A (its row) and
 * sharing its B (its column). */
hg_val_t hg_cluster2d_row_mask(hg_builder_t *b, const hg_cluster2d_t *c);
hg_val_t hg_cluster2d_col_mask(hg_builder_t *b, const hg_cluster2d_t *c);
/* CTAs writing into one CTA's stage: its row and column, itself once (m + n - 1). */
int hg_cluster2d_peers(const hg_cluster2d_t *c);
/* The whole cluster (or CTA) in step: barrier.cluster arrive + wait, or bar.sync 0. */
void hg_cluster2d_sync(hg_builder_t *b, const hg_cluster2d_t *c);

/* ---------------------------------------------------------------- shared memory rings */

/* `stages` buffers of stage_bytes each, aligned, in dynamic shared memory. */
typedef struct hg_smem_ring {
  uint32_t offset, stage_bytes, align;
  int stages;
} hg_smem_ring_t;

hg_status_t hg_smem_ring_make(hg_builder_t *b, uint32_t stage_bytes, uint32_t align, int stages,
                              hg_smem_ring_t *out);
/* The shared::cta address of stage s (I32, run time). */
hg_val_t hg_smem_ring_addr(hg_builder_t *b, const hg_smem_ring_t *r, hg_val_t s);

/* ---------------------------------------------------------------- the stage ring's barriers */

typedef struct hg_pipe_spec {
  int stages;         /* 1..32 */
  int full_arrivals;  /* arrivals (besides the transaction bytes) that complete a full
                       * barrier: 1 for an elected TMA producer, the producer threads for
                       * cp.async or register copies */
  int empty_arrivals; /* arrivals that complete an empty barrier: every releasing consumer
                       * warp of every CTA whose producer writes this CTA's stage; 0 = the
                       * ring has no empty barriers (the producer tracks reuse itself) */
} hg_pipe_spec_t;

typedef struct hg_pipe {
  hg_pipe_spec_t spec;
  uint32_t full_offset, empty_offset; /* the barrier arrays in shared memory */
} hg_pipe_t;

/* A position in the ring: stage index and phase parity (I32 variables). */
typedef struct hg_pipe_pos {
  hg_val_t stage, phase;
} hg_pipe_pos_t;

hg_status_t hg_pipe_make(hg_builder_t *b, const hg_pipe_spec_t *spec, hg_pipe_t *out);
/* mbarrier.init of every stage's barriers: one thread, before the CTA's (or cluster's)
 * barrier that precedes any use. */
void hg_pipe_init(hg_builder_t *b, const hg_pipe_t *p);
/* The kernel's prologue around hg_pipe_init: thread tid == 0 (I32) prefetches the descriptors
 * of the tensor maps (tmaps[0..ntmaps), HG_NONE entries skipped) and initialises the barriers,
 * fenced so that the async proxy and (with a cluster) the peer CTAs see them, then the whole
 * cluster synchronises: no peer multicasts into a barrier before it exists. */
void hg_pipe_init_cluster(hg_builder_t *b, const hg_pipe_t *p, const hg_cluster2d_t *cl,
                          hg_val_t tid, const hg_val_t *tmaps, int ntmaps);
/* Variables at stage 0, phase 0. */
hg_pipe_pos_t hg_pipe_start(hg_builder_t *b);
hg_val_t hg_pipe_full_bar(hg_builder_t *b, const hg_pipe_t *p, hg_val_t stage);
hg_val_t hg_pipe_empty_bar(hg_builder_t *b, const hg_pipe_t *p, hg_val_t stage);
/* Producer: wait until the stage at pos is free (its empty barrier's previous phase). */
void hg_pipe_acquire(hg_builder_t *b, const hg_pipe_t *p, hg_pipe_pos_t pos);
/* Producer: arrive on the full barrier announcing the stage's transaction bytes (TMA). */
void hg_pipe_expect_tx(hg_builder_t *b, const hg_pipe_t *p, hg_pipe_pos_t pos, uint32_t bytes);
/* Producer: add the stage's transaction bytes without arriving (mbarrier.expect_tx), when the
 * arrivals come from elsewhere (cp.async producers that also issue TMA for one operand). */
void hg_pipe_add_tx(hg_builder_t *b, const hg_pipe_t *p, hg_pipe_pos_t pos, uint32_t bytes);
/* Producer thread, after generic-proxy writes of the stage (st.shared): fence the async proxy
 * (the consumers' wgmma reads through it) and arrive on the full barrier. */
void hg_pipe_commit_stores(hg_builder_t *b, const hg_pipe_t *p, hg_pipe_pos_t pos);
/* Producer thread, after its cp.async of the stage: arrive once they have landed. */
void hg_pipe_commit_cp_async(hg_builder_t *b, const hg_pipe_t *p, hg_pipe_pos_t pos);
/* Consumer: wait until the stage at pos is full. */
void hg_pipe_wait(hg_builder_t *b, const hg_pipe_t *p, hg_pipe_pos_t pos);
/* Consumer warp: release `stage` (I32) to its producers: lane 0 arrives on the local empty
 * barrier, or with a cluster, lane i < peers arrives on the barrier of the i-th CTA of its
 * row and column (the CTAs whose multicasts fill this CTA's stage). */
void hg_pipe_release(hg_builder_t *b, const hg_pipe_t *p, hg_val_t stage,
                     const hg_cluster2d_t *cluster, hg_val_t lane);
/* pos <- the next stage; pos <- n stages further (n >= 0, run time). */
void hg_pipe_advance(hg_builder_t *b, const hg_pipe_t *p, hg_pipe_pos_t pos);
void hg_pipe_skip(hg_builder_t *b, const hg_pipe_t *p, hg_pipe_pos_t pos, hg_val_t n);
/* A consumer's turn at a unit (iter: the unit's index in the consumer's loop, I32). Ping-pong
 * consumers take alternate units: the other one only moves its ring position pos past the
 * unit's kblocks (I32) of pipe p, and the one whose unit it is waits until the other has
 * issued the previous unit's main loop. Opens the branch of the consumer whose unit it is
 * (every consumer's, cooperative), closed with hg_b_endif. hg_roles_turn_handover (ping-pong
 * only), after the main loop, lets the other consumer go on when a unit follows (has_next:
 * PRED). */
void hg_roles_turn_begin(hg_builder_t *b, const hg_roles_t *r, bool pingpong, const hg_pipe_t *p,
                         hg_pipe_pos_t pos, hg_val_t iter, hg_val_t kblocks);
void hg_roles_turn_handover(hg_builder_t *b, const hg_roles_t *r, hg_val_t has_next);

/* ---------------------------------------------------------------- TiledCopy: TMA */

/* Box b's coordinates for the tile at origin (one I32 per TENSOR mode), in tensor-map
 * order: origin of the mode that dimension d holds plus the box's offset. */
void hg_tma_copy_coords(hg_builder_t *b, const hg_tma_plan_t *p, int box, const hg_val_t *origin,
                        hg_val_t *coords);
/* Load the tile at origin into the stage buffer dst (I32 shared address), completing on
 * bar. Multicast plans (p->cluster > 1): this CTA is member `member` (I32) of its group and
 * issues that member's slice with `mask` (I32, the receiving ranks); one branch per member.
 * hint: HG_NONE or an hg_b_cache_policy value. The caller announces p->expect_tx_bytes. */
void hg_tma_copy_load(hg_builder_t *b, const hg_tma_plan_t *p, hg_val_t tmap, hg_val_t dst,
                      hg_val_t bar, const hg_val_t *origin, hg_val_t member, hg_val_t mask,
                      hg_val_t hint);
/* L2 prefetch of every box of the tile. */
void hg_tma_copy_prefetch(hg_builder_t *b, const hg_tma_plan_t *p, hg_val_t tmap,
                          const hg_val_t *origin);
/* Store (or, for a reduce plan, reduce) the tile from the stage buffer src. ok: NULL, or a
 * PRED per box saying whether TMA may take it (hg_tma_box_issuable at run time); boxes
 * whose ok is false are skipped (the caller writes them otherwise). Commit and wait are
 * the caller's. */
void hg_tma_copy_store(hg_builder_t *b, const hg_tma_plan_t *p, hg_val_t tmap, hg_val_t src,
                       const hg_val_t *origin, const hg_val_t *ok);

/* ---------------------------------------------------------------- TiledCopy: cp.async */

/* A tile of a row-major view (rows x cols, cols contiguous in global memory: for a K-major
 * GEMM operand rows = MN and cols = K) copied by `threads` threads into a stage layout, with
 * zero fill for everything outside the tensor's extents. vec_bytes is the chunk each copy
 * moves: 16, 8 or 4 go through cp.async (the global rows and base must be multiples of it);
 * the element size (1 or 2) goes through registers - any alignment: 16-byte chunks built from
 * the aligned global blocks around them (ld.global.v4, funnel shifts, st.shared.v4) where the
 * stage keeps 16 bytes together, else one element each (ld.global + st.shared). */
typedef struct hg_cp_async_spec {
  hg_dtype_t dtype;
  int rows, cols;     /* the tile */
  hg_composed_t smem; /* (tile mode 0, tile mode 1) -> element offset */
  bool transposed;    /* tile mode 0 is the contiguous one (cols of the view): MN-major */
  int vec_bytes;
  int threads;
  int batch; /* window copies: chunks whose loads go before their stores (0: 2; up to 16) */
  /* window copies through shared memory instead of registers (hg_cp_async_stage_issue and
   * _shift): the aligned blocks land by cp.async in a staging slot k-blocks ahead */
  bool staged;
} hg_cp_async_spec_t;

typedef struct hg_cp_async_copy {
  hg_cp_async_spec_t spec;
  int vec;        /* elements per chunk */
  int chunks;     /* per tile */
  int per_thread; /* chunks per thread (ceil) */
  bool async;     /* cp.async (vec_bytes >= 4), else registers */
  bool window;    /* registers, 16-byte chunks from aligned global blocks (vec = 16 / size) */
  /* When the threads cover whole rows (step_rows = threads / chunks per row), a thread's
   * chunk j sits step_rows * j rows below its first; when the stage offsets of those chunks
   * repeat with a period of `period` chunks, shifted by period_elems each time (swizzled
   * GMMA stages do, with a period of 1 or 2), the copy evaluates the layout `period` times
   * per tile and adds constants. period 0: the layout is evaluated for every chunk. */
  int step_rows, period;
  int64_t period_elems;
  /* Staged window copies: each thread owns `runs` runs of `run` consecutive chunks of one
   * row and the run + 1 aligned 16-byte blocks under each, at its own place in a staging
   * slot of staging_bytes (all threads). */
  bool staged;
  int run, runs;
  uint32_t staging_bytes;
} hg_cp_async_copy_t;

/* out[0..3] = the 16 bytes at byte sh (I32, 0..15) of the 32 bytes in w[0..7] (two aligned
 * 16-byte global blocks, little-endian I32 words): how a copy builds a 16-byte chunk of rows
 * that are not 16-byte aligned (the window copy, the operand repack). */
void hg_window16_extract(hg_builder_t *b, const hg_val_t w[8], hg_val_t sh, hg_val_t out[4]);
/* out[i] with the bytes at positions >= nbytes (I32; <= 0: every byte) zeroed. */
void hg_window16_mask(hg_builder_t *b, hg_val_t nbytes, hg_val_t out[4]);
/* The aligned 16-byte global block at blk (I64) into the I32 variables w[0..3]: one
 * ld.global.v4, or where the block runs past end (I64: past the tensor's last byte) its bytes
 * before end one by one and zeros after. A block holding a byte of the tensor lies in that
 * byte's page, so the whole load could not fault, but its bytes past the allocation are
 * outside it all the same (compute-sanitizer memcheck reports them). */
void hg_window16_load(hg_builder_t *b, hg_val_t blk, hg_val_t end, const hg_val_t w[4]);

/* Check that every chunk is contiguous and aligned in the stage layout and in global memory. */
hg_status_t hg_cp_async_copy_make(const hg_cp_async_spec_t *spec, hg_cp_async_copy_t *out);
/* The calling thread's chunks of the tile whose view origin is (row0, col0) (I32), from the
 * view's base gbase (I64 generic, batch already applied) with row pitch ld (I64 elements),
 * rows_ext x cols_ext (I32) in bounds, into the stage buffer dst (I32 shared address).
 * thread: the caller's index among spec.threads. */
void hg_cp_async_copy_issue(hg_builder_t *b, const hg_cp_async_copy_t *c, hg_val_t dst,
                            hg_val_t gbase, hg_val_t ld, hg_val_t row0, hg_val_t col0,
                            hg_val_t rows_ext, hg_val_t cols_ext, hg_val_t thread);
/* Staged window copies (c->staged), in two steps HG_CP_ASYNC_STAGING_DEPTH k-blocks apart, so that
 * as many bytes are in flight as the staging slots hold, not as the producer's registers do: _issue
 * starts the cp.async of the aligned 16-byte blocks under the calling thread's chunks into its part
 * of the staging slot stg (I32 shared address; blocks holding no byte of the tile's rows are
 * zero-filled, never read); after cp.async.wait_group has seen them land, _shift builds each
 * 16-byte chunk from two staged blocks and stores it into the stage dst. The thread reads only
 * blocks it copied itself: no barrier between the two. Arguments as hg_cp_async_copy_issue's. */
void hg_cp_async_stage_issue(hg_builder_t *b, const hg_cp_async_copy_t *c, hg_val_t stg,
                             hg_val_t gbase, hg_val_t ld, hg_val_t row0, hg_val_t col0,
                             hg_val_t rows_ext, hg_val_t cols_ext, hg_val_t thread);
void hg_cp_async_stage_shift(hg_builder_t *b, const hg_cp_async_copy_t *c, hg_val_t stg,
                             hg_val_t dst, hg_val_t gbase, hg_val_t ld, hg_val_t row0,
                             hg_val_t col0, hg_val_t rows_ext, hg_val_t cols_ext, hg_val_t thread);
/* The staging slot a staged window copy of rows x row_bytes (a multiple of 16) by `threads`
 * threads needs, in bytes (what hg_cp_async_copy_make puts in staging_bytes). */
uint32_t hg_cp_async_staging_bytes(int rows, int row_bytes, int threads);
/* Staging slots a staged copy's producer keeps in flight: measured on an H100, 2, 3 and 4
 * run within 1% of each other on decode shapes (the copy is not latency-bound there), and
 * each slot costs about a stage's shared memory. */
/* (The blocks go by cp.async, not by one 1-D bulk copy per run of a row: measured 1.5x slower
 * on an H100, bench/RESULTS.md "bulk copies into the staging slot".) */
#define HG_CP_ASYNC_STAGING_DEPTH 2
/* The HG_CP_ASYNC_STAGING_DEPTH staging slots of c (16-byte aligned); nothing (out zeroed)
 * when c is NULL or not staged. */
hg_status_t hg_cp_async_staging_make(hg_builder_t *b, const hg_cp_async_copy_t *c,
                                     hg_smem_ring_t *out);

/* Tell the ring the calling thread's part of the stage is written (cp.async arrive, or a
 * proxy fence and an arrive after register copies). */
void hg_cp_async_copy_commit(hg_builder_t *b, const hg_cp_async_copy_t *c, const hg_pipe_t *p,
                             hg_pipe_pos_t pos);

/* ---------------------------------------------------------------- TiledCopy: ldmatrix, stmatrix */

/* Four 8x8 matrices of a 16-bit operand tile in its stage layout (MN, K) -> element, into
 * the four registers ldmatrix.x4 returns: matrix i starts at (mn0 + dmn[i], k0 + dk[i]) and
 * its 8 rows run along the non-contiguous mode. mn_major: the tile's MN mode is the
 * contiguous one (ldmatrix .trans then gives the same fragments as the K-major case). */
void hg_ldmatrix_x4(hg_builder_t *b, const hg_composed_t *layout, bool mn_major, hg_val_t stage,
                    hg_val_t mn0, hg_val_t k0, const int dmn[4], const int dk[4], hg_val_t lane,
                    hg_val_t out[4]);
/* The A fragment of a 16 x 16 (rows mn0.., k0..) block as mma.sync m16n8k16 and wgmma RS read
 * it: a0 (rows 0-7, k 0-7), a1 (rows 8-15), a2 (k 8-15), a3 (rows 8-15, k 8-15). */
void hg_ldmatrix_a16x16(hg_builder_t *b, const hg_composed_t *layout, bool mn_major, hg_val_t stage,
                        hg_val_t mn0, hg_val_t k0, hg_val_t lane, hg_val_t out[4]);
/* The B fragments of two n8 blocks (N rows n0.., n0+8.., K k0..k0+15) for mma.sync
 * m16n8k16: out[0..1] block n0, out[2..3] block n0 + 8. */
void hg_ldmatrix_b16x16(hg_builder_t *b, const hg_composed_t *layout, bool mn_major, hg_val_t stage,
                        hg_val_t n0, hg_val_t k0, hg_val_t lane, hg_val_t out[4]);

/* ---------------------------------------------------------------- TiledMma */

typedef enum hg_mma_kind {
  HG_MMA_WGMMA_SS, /* wgmma, A and B from shared memory through descriptors */
  HG_MMA_WGMMA_RS, /* wgmma, A from registers (ldmatrix), B through a descriptor */
  HG_MMA_SYNC,     /* mma.sync m16n8k16, A and B through ldmatrix (16-bit types) */
} hg_mma_kind_t;

const char *hg_mma_kind_name(hg_mma_kind_t k); /* "wgmma-ss", "wgmma-rs", "mma-sync" */

/* One consumer warpgroup's MMA work over a tile, whatever the instruction: the warpgroup
 * tiling (stage layouts, accumulator layout) is the wgmma TiledMma's, and every kind keeps
 * its accumulators in the same registers order, so the epilogue does not depend on the kind:
 * mma.sync's warps each take 16 rows of a 64-row atom, as wgmma's do, and its C fragment
 * (rows lane/4 (+8), columns 2*(lane%4) (+1) of an n8 block) is wgmma's value order. */
typedef struct hg_mma_builder {
  hg_mma_kind_t kind;
  hg_tiled_mma_t tm;
  hg_wgmma_op_t op;         /* the instruction for the wgmma kinds */
  hg_mma_sync_op_t sync_op; /* and for mma.sync */
  int acc_count;            /* F32 accumulators per consumer thread */
  bool async;               /* the instruction keeps reading shared memory after issue */
} hg_mma_builder_t;

/* spec: the CTA tile as the consumers compute it (wg_m consumer warpgroups along M).
 * Refused with a sentence for what a kind cannot do (8-bit operands through ldmatrix,
 * tf32, ...). */
hg_status_t hg_mma_builder_make(hg_mma_kind_t kind, const hg_tiled_mma_spec_t *spec,
                                hg_mma_builder_t *out);
/* Issue one k-block of MMAs (every K atom of the tile) into acc (acc_count F32 variables):
 * slot wm (I32, the consumer's M slot among wg_m), stages a_stage/b_stage (I32 addresses),
 * accumulate (PRED: false overwrites, for the first k-block). The wgmma kinds fence and
 * commit hg_mma_builder_groups groups (RS: one per K atom, each waiting for the previous
 * k-block's group that read the same A registers); the caller waits (hg_mma_builder_wait). */
void hg_mma_builder_kblock(hg_builder_t *b, const hg_mma_builder_t *m, const hg_val_t *acc,
                           hg_val_t wm, hg_val_t a_stage, hg_val_t b_stage, hg_val_t accumulate,
                           const hg_roles_t *r);
/* wgmma groups one k-block commits (0 for mma.sync). */
int hg_mma_builder_groups(const hg_mma_builder_t *m);
/* Wait until at most n k-blocks of MMAs are pending (wgmma.wait_group of n groups per k-block;
 * nothing for mma.sync). */
void hg_mma_builder_wait(hg_builder_t *b, const hg_mma_builder_t *m, int n);

/* The consumer main loop of one tile: per k-block wait for the stage, MMA, release the stage
 * (after the MMAs that read it are done), advance. */
typedef struct hg_mainloop {
  const hg_mma_builder_t *mma;
  const hg_pipe_t *pipe;
  const hg_smem_ring_t *ring_a, *ring_b;
  const hg_cluster2d_t *cluster; /* who receives releases; NULL: this CTA only */
  bool fence_proxy;              /* stages written through the generic proxy (cp.async or
                                  * registers) and read by wgmma: fence after the wait */
  /* Promotion (fp8's accurate accumulation and block scaling; wgmma kinds only): the MMAs
   * accumulate into `partial` (acc_count F32 variables), each group of `promote` k-blocks
   * starting it from zero (scale-d = 0), and after a group's last k-block (wgmma.wait_group 0)
   * the partial sums are added into acc, which starts the tile at zero. wgmma's fp8
   * accumulator keeps fewer bits than f32 (docs/hardware-notes.md): this bounds how many
   * products it sums. 0: the MMAs accumulate into acc directly. */
  int promote;
  const hg_val_t *partial;
  /* Block scaling (with promote = 1): before each k-block's MMAs, kblock_scales(b, ctx, kb,
   * f) emits the k-block's factors (F32, one per 64-row M atom and accumulator-fragment row
   * half of the thread: f[2 * im + half], half = row / 8 % 2 within the warp's 16 rows), and
   * the promotion is acc = partial * f + acc. kb: the k-block's index within the unit. */
  void (*kblock_scales)(hg_builder_t *b, void *ctx, hg_val_t kb, hg_val_t *f);
  void *scales_ctx;
  /* Factor runs (hg_block_scales_runs; 0 or 1: one): a tile wider than B's 128-column scale
   * blocks spans two of them, so each 64-column run c of an atom's accumulators takes its
   * own factors, f[c * 2 atoms_m + 2 im + half] (HG_BLOCK_SCALES_MAX_F at most). */
  int scale_runs;
  /* Block scaling from shared memory (instead of kblock_scales): the producer staged the
   * k-block's factors' sources in ring_s, one stage per stage of the pipe, completing the same
   * full barrier; after the stage wait, kblock_scales_staged(b, ctx, kb, s, f) emits the
   * factors of k-block kb (as for kblock_scales) from s, the I32 shared::cta address of the
   * k-block's stage of ring_s. */
  void (*kblock_scales_staged)(hg_builder_t *b, void *ctx, hg_val_t kb, hg_val_t s, hg_val_t *f);
  const hg_smem_ring_t *ring_s;
  /* With promote: I32 (HG_NONE: 0), k-blocks of the unit's first group counted as done before
   * it starts. Consumers of different phases promote at different k-blocks, so one's MMAs
   * keep the tensor cores busy while the other waits and adds (a short first group still
   * starts its partial sums from zero). */
  hg_val_t phase;
  /* With promote (and no phase): acc_count more F32 variables, a second partial set. The loop
   * then runs bodies of hg_mainloop_unroll(promote) k-blocks whose groups alternate between
   * the two sets, each group added while the next one's MMAs run (wgmma.wait_group 1; one
   * wait_group 0 per body), then the k-blocks left one by one as without it: the same sums in
   * the same order. NULL: one partial set. */
  const hg_val_t *partial2;
  /* MMA turns between the two consumers of a cooperative tile (PRED variable, false before the
   * first unit, kept across units; HG_NONE: none): each k-block's MMAs are issued between
   * hg_roles_mma_turn_wait and hg_roles_mma_turn_signal. Not with partial2 or phase. */
  hg_val_t turns;
  /* With promote (PRED variable; HG_NONE: never): true when the unit's first k-block was
   * issued ahead, before the previous unit's epilogue (hg_mainloop_issue_ahead), and landed
   * in acc after it (hg_mainloop_land_ahead): the loop then starts at k-block 1 and does not
   * zero acc. Not with turns or phase. */
  hg_val_t ahead;
} hg_mainloop_t;

/* k-blocks per body with two partial sets: two groups, and at least 4 (block scales promote
 * every k-block). */
#define HG_MAINLOOP_MAX_UNROLL 8
int hg_mainloop_unroll(int promote);

/* The next unit's first k-block issued before this unit's epilogue, so the tensor cores work
 * while the epilogue converts and stores (a promoting main loop's MMAs write `partial`, not
 * acc, which the epilogue reads): its stage waited for, its block-scale factors read into the
 * F32 variables f (with block scales; the scales' context set to the next unit), its MMAs
 * issued into ml->partial from zero and committed; pos moves past it, and stage (an I32
 * variable) keeps the stage to release. */
void hg_mainloop_issue_ahead(hg_builder_t *b, const hg_mainloop_t *ml, hg_pipe_pos_t pos,
                             hg_val_t wm, const hg_roles_t *r, const hg_val_t *f, hg_val_t stage);
/* After the epilogue: the k-block issued ahead (when ml->ahead) is waited for, its stage
 * released, and acc set to its partial sums (times its factors with block scales). */
void hg_mainloop_land_ahead(hg_builder_t *b, const hg_mainloop_t *ml, const hg_val_t *acc,
                            const hg_val_t *f, hg_val_t stage, const hg_roles_t *r);
void hg_mainloop_emit(hg_builder_t *b, const hg_mainloop_t *ml, const hg_val_t *acc,
                      hg_pipe_pos_t pos, hg_val_t kblocks, hg_val_t wm, const hg_roles_t *r);

/* fp8 block scaling (block_scale.c): A's f32 scales per row and 128 of K at scale_a + 4 (kb x
 * lda + row), B's per 128 x 128 block at scale_b + 4 (n / 128 x ldb + kb) (I64 pointers and
 * leading dimensions). hg_block_scales_load is a hg_mainloop_t.kblock_scales with this as its
 * context: the factors sa(row, kb) x sb(n0 / 128, kb) of the calling thread's accumulator rows
 * (f[2 im + half] for row row0 + 64 im + 8 half of the tile). m0, n0, k_first: the unit's
 * origin and first k-block, set per unit. */
typedef struct hg_block_scales {
  hg_val_t scale_a, scale_b, lda, ldb; /* I64 */
  hg_val_t m;                          /* A's rows (I32): rows past it read row m - 1 */
  /* Tiles wider than 128 columns (tile_n 192 or 256): B's columns n (I32; the second block
   * of a tile at the right edge is clamped to the last, whose factors multiply only columns
   * past N, never stored) and the tile's width. 0 / HG_NONE: one block a tile. */
  int tile_n;
  hg_val_t n;
  hg_val_t m0, n0, k_first; /* I32, per unit */
  hg_val_t row0;            /* I32: the thread's first row within the tile */
  int atoms_m;              /* 64-row M atoms of the consumer's region */
  int tile_m;               /* rows of the tile (staged scales: A's per stage) */
  /* Grouped GEMMs: f32 elements from one group's table to the next (I64; HG_NONE: every
   * group reads the same table). The staged side copy moves its reads to the producer unit's
   * group (w->batch); the direct loads read scale_a / scale_b as given, so the consumer sets
   * them per unit with hg_block_scales_group_ptr. */
  hg_val_t group_a, group_b;
  /* Staged scales by TMA (hg_block_scales_side): the tensor maps of A's table (f32, dims
   * (M, ceil(K / 128)), box (tile_m + a_pad, 1)) and B's (dims (ceil(K / 128), ceil(N / 128)),
   * box (4, 1), or (4, 2) for a tile of two blocks), each with the group as a third dimension
   * where its rank is 3 (a grouped GEMM's B, a masked one's A); HG_NONE: cp.async by the side
   * warp's lanes. Rows past M and blocks past N arrive as zeros. */
  hg_val_t tmap_a, tmap_b;
  int rank_a, rank_b;
  /* A contiguous grouped GEMM's units start on any row: its stages hold a_pad = 4 rows more,
   * and by TMA A's box starts at m0 rounded down to a multiple of 4 (an innermost coordinate
   * on 16 bytes), the tile's rows m0 % 4 rows into it. 0 elsewhere. */
  int a_pad;
} hg_block_scales_t;
/* table + 4 stride x group (I64 table and stride, I32 group), or table when stride is HG_NONE:
 * a grouped GEMM's group's scale table. */
hg_val_t hg_block_scales_group_ptr(hg_builder_t *b, hg_val_t table, hg_val_t stride,
                                   hg_val_t group);
/* The thread's first row in wgmma's accumulator fragment: the consumer's first row slot_row0
 * (I32), then warp w's 16 rows, lane / 4 within them. */
hg_val_t hg_block_scales_row0(hg_builder_t *b, const hg_roles_t *r, hg_val_t slot_row0);
void hg_block_scales_load(hg_builder_t *b, void *ctx, hg_val_t kb, hg_val_t *f);
/* A tile of tile_n columns: its 64-column runs with their own factors, tile_n / 64 where the
 * tile spans two 128-column blocks of B's scales (tile_n > 128, a multiple of 64), else 1. */
int hg_block_scales_runs(int tile_n);
#define HG_BLOCK_SCALES_MAX_F (2 * HG_GMMA_MAX_BLOCKS * 4)
/* Staged in shared memory (HG_BLOCK_SCALES_SMEM): a stage holds the k-block's tile_m A scales
 * (row r of the tile at byte 4 r; rows past M read row M - 1, or 0 by TMA) and B's scale at
 * byte hg_block_scales_b_offset(a_rows) (a_rows: tile_m + a_pad; a tile wider than 128
 * columns: its first block's
 * there, the next block's 16 bytes on). Both start on 128-byte boundaries, as TMA's
 * destinations must (stages of HG_BLOCK_SCALES_STAGE_ALIGN). By TMA, B's box starts at a
 * k-block that is a multiple of 4 (an innermost TMA coordinate must fall on 16 bytes): the
 * k-block's scale is then 4 (k % 4) bytes into its 16. hg_block_scales_stage_bytes is
 * the stage's size; hg_block_scales_side makes the producer's side copy that fills it (ctx:
 * the hg_block_scales_t, its m0/n0/k_first unused: the copy takes them from the producer's
 * unit; by TMA where tmap_a is set); hg_block_scales_load_staged is a
 * hg_mainloop_t.kblock_scales_staged that reads the calling thread's factors back. */
#define HG_BLOCK_SCALES_STAGE_ALIGN 128
uint32_t hg_block_scales_b_offset(int a_rows);
uint32_t hg_block_scales_stage_bytes(int a_rows);
/* A's rows a stage holds: tile_m, 4 more for a contiguous grouped GEMM (a_pad). */
int hg_block_scales_a_rows(int tile_m, bool contiguous);
/* B's 16-byte scale slots a stage holds (and block rows of B's TMA box): 2 for a tile of two
 * scale blocks, else 1. */
int hg_block_scales_b_rows(int tile_n);
void hg_block_scales_load_staged(hg_builder_t *b, void *ctx, hg_val_t kb, hg_val_t s, hg_val_t *f);

/* ---------------------------------------------------------------- tile schedulers */

typedef enum hg_raster {
  HG_RASTER_M, /* consecutive tiles walk down M within a group of raster_group N-tiles */
  HG_RASTER_N, /* consecutive tiles walk along N within a group of raster_group M-tiles */
} hg_raster_t;

typedef enum hg_sched_kind {
  HG_SCHED_PERSISTENT, /* each cluster walks tiles id, id + clusters, ...: rasterized */
  HG_SCHED_GROUPED,    /* the same walk over the tiles of G groups (experts) of run-time rows
                          read on the device: hg_sched_make_grouped */
} hg_sched_kind_t;

#define HG_SCHED_MAX_SPLITS 64

typedef struct hg_sched_spec {
  hg_sched_kind_t kind;
  int tile_m, tile_n;       /* CTA tile */
  int cluster_m, cluster_n; /* a cluster tile is cluster_m x cluster_n CTA tiles */
  hg_raster_t raster;
  int raster_group; /* cluster tiles per rasterization band, >= 1 */
  /* Split-K: each cluster tile's k-blocks in up to `splits` ranges, one unit each (0 or 1:
   * none). At run time min(splits, k-blocks) ranges, every one non-empty; the splits of a
   * tile are consecutive units, so they run at the same time on neighbouring clusters. */
  int splits;
  /* Stream-K (persistent kind, splits 0 or 1): the grid's clusters share the linearized
   * (cluster tile, k-block) iterations of the last tiles: sched.c's header says which and how
   * a tile split across clusters is fixed up (hg_streamk_*). */
  bool stream_k;
  /* HG_SCHED_GROUPED: the groups' rows are contiguous in one (rows, K) A and (rows, N) D, the
   * device array holding each group's cumulative end row (torch's `offs`); else (masked) each
   * group has its own batch of A and D and the array holds its row count. */
  bool contiguous;
} hg_sched_spec_t;

/* A run-time divisor d (I32, 1 <= d < 2^31) prepared once, outside a loop, so that each
 * division by it inside costs a multiply and a shift: q = (n m) >> s for 0 <= n < 2^31, with
 * s = 31 + p, 2^p >= d and m = ceil(2^s / d) (I64 m and s). Exact: m d = 2^s + e with
 * 0 <= e < d, so n m / 2^s = n / d + n e / (d 2^s), and n e < 2^31 d <= 2^s keeps the extra
 * term under 1 / d (division by invariant integers, Granlund and Montgomery). A div.u32 by a
 * run-time value is ~20 instructions around a MUFU reciprocal. */
typedef struct hg_divisor {
  hg_val_t d, m, s; /* I32 each: m < 2^32 (as its u32 bits), s in 31..62 */
} hg_divisor_t;
/* d known at run time: p = ceil(log2 d) from d - 1's bit length, so 2^(p-1) < d <= 2^p and
 * m < 2^32, m by a 32-step restoring division (sched.c): a loop, run once. hg_divisors_make
 * prepares up to HG_DIVISORS_MAX in one loop. */
#define HG_DIVISORS_MAX 4
hg_divisor_t hg_divisor_make(hg_builder_t *b, hg_val_t d);
void hg_divisors_make(hg_builder_t *b, int n, const hg_val_t *d, hg_divisor_t *out);
/* d known now (1 <= d < 2^31): m and s as constants */
hg_divisor_t hg_divisor_const(hg_builder_t *b, int32_t d);
/* pred ? x : y, all three values */
hg_divisor_t hg_divisor_select(hg_builder_t *b, hg_val_t pred, const hg_divisor_t *x,
                               const hg_divisor_t *y);
/* n (I32, 0 <= n < 2^31) -> n / d and n % d (I32); either output may be NULL */
void hg_divisor_divmod(hg_builder_t *b, const hg_divisor_t *dv, hg_val_t n, hg_val_t *q,
                       hg_val_t *r);

/* The run-time counts (I32, each >= 1) the unit order is laid out over: cluster tiles along M
 * and N, per batch and in all, the batch, a band's cluster tiles (raster_group x the tiles of
 * the dimension walked along) and the bands (hg_sched_work: sched.c). */
typedef struct hg_sched {
  hg_sched_spec_t spec;
  const hg_cluster2d_t *cluster;
  hg_val_t tiles_m, tiles_n, per_batch, total, batch, band_tiles, bands, kblocks;
  hg_val_t tiles;  /* cluster tiles of all batches (total = tiles x splits) */
  hg_val_t splits; /* k ranges per tile at run time: min(spec.splits, kblocks); 1 unsplit */
  /* split-K's unit order (PRED): split-major (a batch's tiles at split 0, then at split 1,
   * ...) where the cluster tiles are 2 or more along both M and N, else tile-major (a tile's
   * splits consecutive); false unsplit (sched.c says why) */
  hg_val_t split_major;
  /* HG_SCHED_GROUPED: the groups (I32), the rows of A and D (I32), and the shared-memory
   * tables hg_sched_make_grouped fills: each group's end and (contiguous) start row (I32
   * shared::cta addresses of ends[0], starts[0]) and the inclusive prefix sums of units per
   * group (address of pre[0]). */
  hg_val_t groups, rows, ends, starts, pre;
  /* Stream-K: the tiles shared in k-blocks (the first sk_tiles of the order, I32), their
   * iterations (sk_tiles x kblocks, I64), this cluster's range of them [sk_first, sk_end)
   * (I64) and its units in that range (sk_units, I32); total is then this cluster's units:
   * sk_units, then its whole tiles. */
  hg_val_t sk_tiles, sk_iters, sk_first, sk_end, sk_units;
  /* Once hg_sched_prepare has run: the shared-memory slot its divisors are read from at each
   * unit (I32 shared::cta; HG_NONE before: plain divisions), and whether they were prepared
   * (PRED, uniform: the grid's clusters walk HG_SCHED_PREPARED_UNITS units or more) */
  hg_val_t prepared, prepared_on;
} hg_sched_t;

/* One unit of work: this CTA's tile origin (m0, n0), its batch, and its k-blocks
 * [k_first, k_first + k_count) (every k-block for the persistent scheduler; split-K and
 * stream-K schedulers hand out ranges). */
typedef struct hg_sched_work {
  hg_val_t index, batch, m0, n0, k_first, k_count;
  /* Grouped: batch is the group; m0 a row of A and D (contiguous: counted from row 0 of the
   * whole matrix); m_end the group's end row, which D's rows must stay below. HG_NONE for the
   * persistent scheduler (D's extent M bounds the rows). */
  hg_val_t m_end;
  hg_val_t tile;  /* the cluster tile's index (over all batches): index / splits */
  hg_val_t split; /* which of the tile's k ranges: index % splits (0 unsplit) */
} hg_sched_work_t;

/* Run-time extents M, N, batch (I32, each >= 1) and the k-blocks of one tile. */
hg_status_t hg_sched_make(hg_builder_t *b, const hg_sched_spec_t *spec,
                          const hg_cluster2d_t *cluster, hg_val_t m, hg_val_t n, hg_val_t batch,
                          hg_val_t kblocks, hg_sched_t *out);
/* Shared memory hg_sched_make_grouped reserves for up to max_groups groups. */
uint32_t hg_sched_grouped_smem_bytes(int max_groups);
/* The grouped scheduler: units are (group, m tile, n tile) over groups g = 0..groups-1 (I32,
 * 1..max_groups) in one linear space, group by group, each group's tiles rasterized like the
 * persistent scheduler's (bands of raster_group tiles). Each group's rows come from the device
 * (I64 pointer to `groups` int32: cumulative end rows for spec.contiguous, else row counts),
 * clamped to [0, rows]: no host synchronisation. Emits, at the top of the kernel, code that
 * every one of the CTA's nthreads threads (tid: I32 0..nthreads-1) must run: the groups'
 * units and their prefix sums (log2 steps) into shared memory, with whole-CTA barriers
 * (bar.sync 0). Splits are not taken (spec.splits must be 0 or 1). */
hg_status_t hg_sched_make_grouped(hg_builder_t *b, const hg_sched_spec_t *spec,
                                  const hg_cluster2d_t *cluster, hg_val_t rows, hg_val_t n,
                                  hg_val_t groups, int max_groups, hg_val_t groups_ptr,
                                  hg_val_t kblocks, hg_val_t tid, int nthreads, hg_sched_t *out);
/* for (each unit of this cluster) { ... } : returns the loop's index (I32); close with
 * hg_sched_end. */
hg_val_t hg_sched_begin(hg_builder_t *b, const hg_sched_t *s);
void hg_sched_end(hg_builder_t *b, const hg_sched_t *s);
/* Prepares the divisors hg_sched_work divides by (hg_divisor_t) and stores them, where
 * writer (PRED) is true, into slot (I32 shared::cta address, 16-byte aligned, of
 * HG_SCHED_PREPARED_BYTES); the caller makes the stores visible to the slot's readers (a
 * barrier) before their first hg_sched_work, which then reads them back at each unit. A role
 * calls this on its own copy of the scheduler: the consumers, at their start, where they
 * wait for the first stage anyway (gemm_gen.c). Each unit's coordinates then take
 * multiplies and shifts instead of three to five run-time divisions, which sat between every
 * tile's epilogue and its next main loop. In shared memory, not registers: 14 values live
 * across the main loop spilled kernels with 192 accumulator registers. Persistent scheduler
 * only (the grouped one finds its units by search): a no-op for the others. */
#define HG_SCHED_PREPARED_BYTES 64
/* Preparing costs about 0.5 us once (a 32-step loop, hidden only in part behind the first
 * stage's load) and saves each unit three to five divisions: decided at run time, so that a
 * kernel is the same for every size (H100: at one tile a CTA, prepared, 2048^3 bf16 was 3%
 * slower; 4096x24576x1536 block-wise fp8, 46 tiles a CTA, 1% faster). */
#define HG_SCHED_PREPARED_UNITS 4
void hg_sched_prepare(hg_builder_t *b, hg_sched_t *s, hg_val_t slot, hg_val_t writer);
/* The unit for loop index t. */
void hg_sched_work(hg_builder_t *b, const hg_sched_t *s, hg_val_t t, hg_sched_work_t *out);
/* Whether the loop has a unit after t (ping-pong consumers hand over only when it does). */
hg_val_t hg_sched_has_next(hg_builder_t *b, const hg_sched_t *s, hg_val_t t);
/* The loop index of the unit after t (hg_sched_work's for it; past the loop when has_next is
 * false). */
hg_val_t hg_sched_next(hg_builder_t *b, const hg_sched_t *s, hg_val_t t);
/* Host side: the units of a problem, cluster tiles x splits (at most: fewer splits when K
 * has fewer k-blocks); the persistent grid needs no more clusters. Stream-K: the cluster
 * tiles (hg_sched_streamk_clusters sizes its grid). */
int64_t hg_sched_units(const hg_sched_spec_t *spec, int64_t m, int64_t n, int64_t batch);
/* Stream-K: the first iteration (I64) of the range of cluster `c` (I32, 0..clusters, where
 * c = clusters gives sk_iters): c x sk_iters / clusters, so the ranges tile the iterations in
 * cluster order, each within one k-block of the same size. */
hg_val_t hg_sched_streamk_start(hg_builder_t *b, const hg_sched_t *s, hg_val_t c);
/* Host side, stream-K: the tiles shared in k-blocks for `tiles` cluster tiles on `clusters`
 * clusters: 0 when the tiles fill whole waves, all of them when there are fewer tiles than
 * clusters, else the last partial wave and one full wave before it (so every cluster shares
 * 1 to 2 tiles' worth of k-blocks, never a sliver). The kernel computes the same. */
int64_t hg_sched_streamk_tiles(int64_t tiles, int64_t clusters);
/* Host side, stream-K: the clusters of the grid, at most `resident` (those that run at
 * once: a cluster waits for others' partials, so all must be resident) and at most one per
 * shared iteration (every range non-empty). */
int64_t hg_sched_streamk_clusters(const hg_sched_spec_t *spec, int64_t m, int64_t n, int64_t batch,
                                  int64_t kblocks, int64_t resident);

/* ---------------------------------------------------------------- the producer */

/* How one operand's tile reaches a stage: by TMA (plan non-NULL: its boxes from tmap, the
 * multicast slice of this CTA; batch_zero: the batch coordinate is 0, for a contiguous grouped
 * GEMM's A, whose rows are every group's) or by cp.async / register copies (cp, from the
 * (rows, cols, batches):(ld, 1, batch_stride) view at ptr: rows the MN extent for a K-major
 * operand, else K). */
typedef struct hg_operand_copy {
  const hg_tma_plan_t *plan;
  hg_val_t tmap;
  bool batch_zero;
  const hg_cp_async_copy_t *cp;
  hg_val_t ptr, ld, batch_stride; /* I64; ld and batch_stride in elements */
  hg_val_t mn, k, batches;        /* I32 extents */
  hg_dtype_t dtype;
  bool k_major;
} hg_operand_copy_t;

/* A warp-specialized producer: for each unit of sched, for each of its k-blocks, acquire the
 * next stage of pipe, fill it with A (op[0], multicast along the cluster's row) into ring[0]
 * and B (op[1], along its column) into ring[1], each k-block tile_k deep, and commit it. */
/* A side copy beside the two operands: small per-k-block data (fp8 block scales) that the
 * producer's second warp copies into its own ring, one stage per stage of the pipe. Per
 * k-block the warp acquires the stage, copy(b, ctx, w, kb, lane, dst) emits the lane's
 * cp.async copies into it (kb: the k-block's index in K, unit w; dst: the stage, I32
 * shared::cta), and every lane arrives on the stage's full barrier once its copies land
 * (cp.async.mbarrier.arrive.noinc: HG_SIDE_COPY_ARRIVALS more arrivals). The warp never waits
 * for a load, so it runs ahead of the consumers by the whole ring: through registers (a load,
 * then st.shared) it waited one global load's latency per k-block, and the consumers waited
 * for it (fp8 block-wise 4096x4096x7168 on an H100: the stores were the producer's most
 * stalled instruction, the consumers' full-barrier wait 15% of their time). */
#define HG_SIDE_COPY_ARRIVALS 32
/* A side copy by TMA (tma_bytes > 0): lane 0 arrives once on the full barrier, announcing
 * tma_bytes, and copy() issues the loads, which complete the stage's transactions (bar: the
 * stage's full barrier). The cp.async copy ignores bar. Measured on an H200 (fp8 block-wise
 * 4096x7168x16384, 128x128 tiles): the 32 lanes' cp.async arrivals cost 12-14% of the
 * kernel's time against no side copy at all (bench/RESULTS.md, eighth session). */
#define HG_SIDE_COPY_TMA_ARRIVALS 1
typedef struct hg_side_copy {
  const hg_smem_ring_t *ring;
  void *ctx;
  uint32_t tma_bytes; /* 0: cp.async by every lane; else TMA by lane 0 */
  void (*copy)(hg_builder_t *b, void *ctx, const hg_sched_work_t *w, hg_val_t kb, hg_val_t lane,
               hg_val_t dst, hg_val_t bar);
} hg_side_copy_t;

typedef struct hg_producer {
  const hg_sched_t *sched;
  const hg_pipe_t *pipe;
  const hg_cluster2d_t *cluster;
  const hg_roles_t *roles;
  const hg_smem_ring_t *ring[2];
  /* the HG_CP_ASYNC_STAGING_DEPTH staging slots of operands copied by staged window copies
   * (op[i].cp->staged) */
  const hg_smem_ring_t *staging[2];
  hg_operand_copy_t op[2];
  int tile_k;
  /* NULL: none. Only with both operands by TMA (the other producer warps are idle then). */
  const hg_side_copy_t *side;
} hg_producer_t;

/* fp8 block scales staged by the producer (block_scale.c): the side copy of s (which must
 * outlive the emission) into ring, a ring of hg_block_scales_stage_bytes(s->tile_m + s->a_pad)
 * stages. */
hg_side_copy_t hg_block_scales_side(hg_block_scales_t *s, const hg_smem_ring_t *ring);

/* The arrivals that complete a stage's full barrier (hg_pipe_spec_t.full_arrivals) for
 * operands copied by cp (NULL: by TMA): 1 for an elected TMA producer, 128 per kind of copy. */
int hg_producer_full_arrivals(const hg_cp_async_copy_t *a, const hg_cp_async_copy_t *b);
/* Inside hg_roles_producer's branch. An operand with neither a plan nor a copy is recorded in
 * the builder's status. */
void hg_producer_emit(hg_builder_t *b, const hg_producer_t *p);

/* ---------------------------------------------------------------- split-K reduction */

/* Named barrier of all consumer warpgroups (cooperative tiles split over them). */
#define HG_BAR_CONSUMERS 6

/* Split-K partial tiles (splitk.c). Each split of a CTA tile stores its f32 partial sums to
 * its own slot of the workspace and leaves; a second kernel (the reduction pass) sums each
 * tile's slots in split order and runs the epilogue. No CTA waits on another and the sum's
 * order is fixed: the same bits run to run, whatever order the splits finish in, and no
 * counters to zero before a launch. The pass spreads a tile over many CTAs (a group of
 * accumulator chunks each), so the whole GPU reads the partials instead of one CTA per tile
 * (a tree of pairwise sums through arrival counters, the previous design, cost about 3 us a
 * level on the H100 in fences and round trips: bench/RESULTS.md).
 *
 * Workspace (I64 address, 16-byte aligned): for CTA tile t (its index over the batch and the
 * grid of CTA tiles, hg_splitk_tile) and split s, slot t x splits + s of threads x acc_count
 * f32, in (chunk = accumulator / 4, thread, 4) order: 16-byte stores and loads, coalesced. */
typedef struct hg_splitk_spec {
  int splits;    /* the scheduler's spec.splits, 2..HG_SCHED_MAX_SPLITS: slots per CTA tile */
  int acc_count; /* accumulators per consumer thread, a multiple of 4 */
  int consumers; /* consumer warpgroups, 1..HG_MAX_CONSUMERS */
  bool pingpong; /* each consumer holds a tile of its own; else they split one along M */
  int tile_m, tile_n, tile_k, cluster_m, cluster_n; /* the CTA tile and the cluster */
  hg_val_t workspace;                               /* I64 */
  /* Partials added into one slot per tile by atomics (hg_splitk_add_tile), the last split to
   * arrive running the epilogue; else a slot per split and the reduction pass. */
  bool atomic;
  /* A slot per split, reduced inside the GEMM (hg_splitk_scatter_*), not by the pass. */
  bool scatter;
} hg_splitk_spec_t;

typedef struct hg_splitk {
  hg_splitk_spec_t spec;
  int splits;    /* spec.splits */
  int acc_count; /* spec.acc_count */
  int threads;   /* threads holding one tile: 128 (ping-pong) or 128 x consumers */
  hg_val_t workspace;
  uint32_t arrival_smem; /* spec.atomic: the arrival count's shared-memory word(s) */
} hg_splitk_t;

/* Refused with a sentence: splits outside 2..HG_SCHED_MAX_SPLITS, accumulators that are not
 * whole 16-byte chunks, consumers outside 1..HG_MAX_CONSUMERS, tiles the consumers cannot
 * split. */
hg_status_t hg_splitk_make(hg_builder_t *b, const hg_splitk_spec_t *spec, hg_splitk_t *out);
/* The calling consumer thread's index among the threads holding its tile (the slots' order). */
hg_val_t hg_splitk_thread(hg_builder_t *b, const hg_splitk_t *s, const hg_roles_t *r);
/* The CTA tile's index for the slots: (batch x tiles_m + m0 / tile_m) x tiles_n + n0 /
 * tile_n over the CTA-tile grid tiles_m x tiles_n (I32 each) -> I64. */
hg_val_t hg_splitk_tile(hg_builder_t *b, hg_val_t batch, hg_val_t m0, hg_val_t n0, int tile_m,
                        int tile_n, hg_val_t tiles_m, hg_val_t tiles_n);
/* The thread's first float of chunk 0 in slot (tile, split) (I64); chunk c is c x threads x
 * 16 bytes on. */
hg_val_t hg_splitk_slot(hg_builder_t *b, const hg_splitk_t *s, hg_val_t tile, hg_val_t split,
                        hg_val_t thread);
/* Store chunk c (vals[0..3], accumulators 4c..4c+3) at the thread's slot address `at`. */
void hg_splitk_store(hg_builder_t *b, const hg_splitk_t *s, hg_val_t at, int c,
                     const hg_val_t *vals);
/* sum[0 .. 4 chunks) = the tile's chunks [first, first + chunks) of `thread` summed over slots
 * 0 .. splits - 1 (I32 at run time, 1..s->splits) in that order, `batch` slots' loads in
 * flight at a time; a chunk where keep[c] (PRED; HG_NONE: always) is false stays 0. sum:
 * 4 x chunks F32 variables the caller made. */
void hg_splitk_sum(hg_builder_t *b, const hg_splitk_t *s, hg_val_t tile, hg_val_t splits,
                   hg_val_t thread, int first, int chunks, const hg_val_t *keep, hg_val_t *sum);
/* Host side: the workspace's bytes. */
size_t hg_splitk_workspace_bytes(int splits, int64_t cta_tiles, int64_t tile_elems);

/* Split-K by atomic adds (spec.atomic): one slot per CTA tile, laid out as the reduction
 * pass's slots, followed by the tile's 32-bit arrival counter (HG_SPLITK_COUNTER_BYTES keep
 * the next slot 128-byte aligned). Each split adds its partial tile into the slot
 * (red.global.add.v4.f32, rows past M skipped), then its threads meet at a barrier and one of
 * them releases (fence.acq_rel.gpu) and counts its arrival (atom.add); the split that counts
 * `splits` (I32 at run time: the scheduler's) acquires, loads the sums into acc, stores zeros
 * over them and resets the counter: the workspace is left as it was found, all zeros, so a
 * launch needs no memset (the operation zeroes its own workspace once; a caller's is zeroed
 * every run). No CTA waits on another. The order of the additions is the order of arrival:
 * not bitwise reproducible run to run (the reduction pass is). -> PRED, uniform over the
 * tile's threads: this split is the last and acc holds the tile's sums. Inside the
 * consumers' branch; every thread holding the tile calls it (it has two barriers). */
#define HG_SPLITK_COUNTER_BYTES 128
size_t hg_splitk_atomic_workspace_bytes(int64_t cta_tiles, int64_t tile_elems);

/* ---------------------------------------------------------------- accumulators -> tile */

/* Where each accumulator value of a consumer thread sits relative to the thread's first one:
 * v[dm * cols + dn] is the value index at (dm, dn), -1 where the thread has none. The same
 * map holds for every thread (its first element is its own). Owns memory: hg_acc_map_free. */
typedef struct hg_acc_map {
  int rows, cols;
  int *v;
} hg_acc_map_t;

/* From the TiledMma's accumulator layout: the values of consumer thread 0, within the
 * consumer's rows x tm->tile_n region. */
hg_status_t hg_acc_map_make(const hg_tiled_mma_t *tm, int rows, hg_acc_map_t *out);
int hg_acc_map_at(const hg_acc_map_t *am, int dm, int dn);
void hg_acc_map_free(hg_acc_map_t *am);
/* Where a consumer thread's first accumulator sits in the tile (CuTe: the first coordinate of
 * thr_mma.partition_C): the thread mode of tm's accumulator layout at `thread` (I32, the
 * thread's index among the TiledMma's 128 x wg_m threads), split over the tile_m x tile_n
 * tile into row and col (I32). The acc map's offsets are relative to it. */
hg_status_t hg_acc_thread_origin(hg_builder_t *b, const hg_tiled_mma_t *tm, hg_val_t thread,
                                 hg_val_t *row, hg_val_t *col);

/* ---------------------------------------------------------------- epilogue */

#define HG_EPI_MAX_STEPS 12

/* Activations of the epilogue (HG_EPI_ACT), in f32. */
typedef enum hg_act {
  HG_ACT_NONE = 0,
  HG_ACT_RELU,      /* max(x, 0) */
  HG_ACT_GELU,      /* x/2 (1 + erf(x / sqrt 2)) to 2e-7 |x| (hg_gelu_alg_t) */
  HG_ACT_GELU_TANH, /* x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); tanh.approx (2^-11) */
  HG_ACT_SILU,      /* x sigmoid(x) */
  HG_ACT_SIGMOID,   /* 1 / (1 + e^-x), e^-x as 2^(-x log2 e) (ex2.approx) */
  HG_ACT_CLAMP,     /* min(max(x, lo), hi) */
  HG_ACT_COUNT
} hg_act_t;
/* The erf GELU's formula (HG_ACT_GELU), a GEMM configuration's choice (hg_gemm_config_t.gelu,
 * text ",gas"/",gp5"): poly7 (the default: x / (1 + 2^p(x)) with an odd degree-13 polynomial
 * p, 12 instructions a value, |error| <= 2.0e-7 |x|), as (Abramowitz-Stegun 7.1.26 through
 * erfc, 15 instructions, 1e-7 |x|), poly5 (degree 9, 10 instructions, 1.6e-6 |x|), poly5t (",gt5":
 * poly5's function as x/2 (1 + tanh(x q(x^2))), one MUFU operation instead of two, to
 * tanh.approx.f32's accuracy: about 3e-4 |x|, under half an ulp of 16- and 8-bit D, which is
 * where the heuristic picks it). */
typedef enum hg_gelu_alg {
  HG_GELU_POLY7 = 0,
  HG_GELU_AS,
  HG_GELU_POLY5,
  HG_GELU_TANH5,
  HG_GELU_ALG_COUNT
} hg_gelu_alg_t;
const char *hg_gelu_alg_name(hg_gelu_alg_t a); /* "poly7", "as", "poly5", "poly5t"; "?" */
/* The formula's value in host f32 arithmetic (ex2 and rcp exact): what tests bound. */
float hg_gelu_model(hg_gelu_alg_t a, float x);
/* act(x) for one F32 value (clamp's bounds lo, hi; an erf GELU by formula gelu): the
 * epilogue's activations, for any kernel that applies them. */
hg_val_t hg_act_emit(hg_builder_t *b, hg_act_t act, hg_gelu_alg_t gelu, float lo, float hi,
                     hg_val_t x);

typedef enum hg_epi_kind {
  HG_EPI_SCALE,     /* acc *= value (F32, run time) */
  HG_EPI_SCALE_PTR, /* acc *= the f32 at ptr (I64 device pointer), 1 when ptr is 0 (fp8's
                     * per-tensor scales); consecutive scale steps fold into one multiply */
  HG_EPI_BETA_C,    /* acc += beta * C(row, col) when beta (F32) != 0 (a uniform branch); C of
                     * dtype (bf16, f16 or f32; 0 = HG_U8: D's type) at ptr (I64) + batch *
                     * batch_stride + row * ld + col (elements) */
  HG_EPI_ACT,       /* acc = act(acc) (hg_act_t); clamp's bounds lo, hi are constants */
  HG_EPI_BIAS,      /* acc += vec[col] (along_n) or vec[row] (acc *= with multiply: a scale
                     * vector): a vector of dtype (bf16, f16, f32) at ptr (I64), loaded once
                     * per column (row) of the thread */
  HG_EPI_AUX,       /* store acc, as it is at this point of the chain, into a matrix of dtype
                     * (bf16, f16, f32) laid out like C (ptr, ld, batch_stride): the
                     * pre-activation output a backward pass needs (cuBLASLt's GELU_AUX) */
} hg_epi_kind_t;

typedef struct hg_epi_step {
  hg_epi_kind_t kind;
  hg_val_t value;                 /* SCALE: the factor; BETA_C: beta */
  hg_val_t ptr, ld, batch_stride; /* BETA_C: C; AUX: the aux matrix */
  hg_act_t act;                   /* ACT */
  float lo, hi;                   /* ACT: clamp's bounds */
  hg_gelu_alg_t gelu;             /* ACT: the erf GELU's formula (0: poly7) */
  hg_dtype_t dtype;               /* BIAS: the vector's type; BETA_C, AUX: the matrix's */
  bool along_n;                   /* BIAS: one value per column (else per row) */
  bool multiply;                  /* BIAS: scale (acc *= v) instead of add */
  /* AUX in a TMA or staged epilogue: through D's sub-tile buffers, each sub-tile before
   * D's, in pieces of sub_n columns (rows swizzled by sw; a piece at most a buffer's bytes,
   * several pieces for an aux of a larger element size than D's), stored with plan and tmap
   * (its tensor map, boxes of 64 x sub_n) when plan is set (TMA epilogues only), else copied
   * out row by row like a staged D */
  bool buffered;
  int sub_n;
  hg_swizzle_t sw;
  const hg_tma_plan_t *plan;
  hg_val_t tmap;
} hg_epi_step_t;

/* The amax's state (hg_epilogue_t.amax_state): an arrival count, then HG_AMAX_STATE_SLOTS
 * running maxima, 128 bytes apart so that each has a 128-byte line of its own at any 4-byte
 * aligned address (spread: same-address atomics serialise). */
#define HG_AMAX_STATE_SLOTS 8
#define HG_AMAX_STATE_BYTES (128 * (HG_AMAX_STATE_SLOTS + 1))

/* How D leaves the consumers. TMA: 64-row x epi_n sub-tiles through `buffers` swizzled
 * shared-memory buffers per consumer (stmatrix for 16-bit D), each stored with the plan's
 * boxes by the consumer's first thread. Staged (rows TMA cannot store: ldd or N not a
 * multiple of 16 bytes, a base only element-aligned): the same sub-tiles through the same
 * buffers, then copied out row by row, consecutive lanes on consecutive elements. Direct:
 * every element with a bounds predicate. */
typedef struct hg_epilogue {
  /* bf16, f16, f32, or fp8 e4m3/e5m2 (converted with saturation to the largest finite
   * value, NaN kept: hg_b_pack_f32x2; through TMA, an fp8 sub-tile is written to shared
   * memory as byte pairs with st.shared.b16, as stmatrix moves 16-bit elements only) */
  hg_dtype_t d_type;
  int nsteps;
  hg_epi_step_t steps[HG_EPI_MAX_STEPS];
  bool tma, staged;
  const hg_tma_plan_t *plan_d; /* TMA: the sub-tile's plan (modes M, N, batch) */
  hg_swizzle_t sw;             /* TMA or staged: the buffers' swizzle (on byte offsets) */
  hg_val_t tmap_d;
  uint32_t buf_offset, buf_bytes; /* consumer c's buffer j at buf_offset + (c * buffers + j) *
                                   * buf_bytes */
  int buffers, epi_n;
  hg_val_t d_ptr, ldd, batch_stride_d; /* direct (I64) */
  hg_val_t m, n, batches; /* D's extents (I32, >= 1): D is (m, n, batches); batches HG_NONE: 1 */
  /* Vector steps (HG_EPI_BIAS) through shared memory: vec_lines > 0 reserves, per tile in
   * flight (one in cooperative kernels, whose consumers share the tile; one per consumer in
   * ping-pong: vec_per_consumer) and vector step i, vec_lines f32 (the tile's rows or columns,
   * vec_lines >= both) at vec_offset + (copy * vectors + i) * vec_lines * 4.
   * hg_epilogue_prefetch loads a tile's values before the main loop; hg_epilogue_emit stores
   * them there and reads them back, when `prefetch` points at what hg_epilogue_prefetch
   * returned (NULL: the epilogue loads them from global memory itself). vec_threads: the
   * threads holding one tile (128 x consumers, or 128 in ping-pong). */
  uint32_t vec_offset;
  int vec_lines, vectors, vec_threads;
  bool vec_per_consumer;
  const struct hg_epi_prefetch *prefetch;
  /* amax_ptr (I64, HG_NONE: none): the kernel reduces max |D| over the values it stores, as
   * stored (rounded to d_type), into the f32 there: a running max per thread (the bits of |x|
   * as u32: non-negative floats order like unsigned integers, and a NaN above them all), over
   * the warp with redux.sync at hg_epilogue_drain, then one red.global.max.u32 per warp.
   * amax_state (I64, 4-byte aligned, HG_AMAX_STATE_BYTES; HG_NONE: the caller zeroes the
   * f32 before the launch): words that are zero before the launch, an arrival count at byte
   * 0 and HG_AMAX_STATE_SLOTS running maxima at 128 x (1 + j). The warps of a consumer
   * warpgroup meet in shared memory (16 bytes per consumer, reserved at hg_epilogue_drain);
   * one thread per warpgroup max-reduces into a slot and counts the warpgroup, and the last
   * of the grid's nctaid x consumers (every consumer thread of every CTA calls
   * hg_epilogue_drain) stores the slots' max into the f32 and the state back to zero: no
   * memset precedes a launch, as state zeroed once serves every later launch in stream
   * order. amax_var: the thread's running max (hg_epilogue_begin). */
  hg_val_t amax_ptr, amax_state, amax_var;
  /* D, C, the residual and aux are stored transposed: the tile's element (i, j) at i + j ld of
   * its matrix (column-major), the kernel's rows being the matrices' columns (a GEMM run with
   * A and B swapped). Direct stores only (not tma or staged). */
  bool trans;
  /* TMA or staged: the chain from its activation on (when no residual follows it) runs inside
   * D's sub-tile write, 16 columns at a time after the barrier that frees the buffer, so that
   * one slice's temporaries live beside the accumulators instead of a whole sub-tile's (set
   * for ping-pong tiles, whose 128x192 GELU epilogues spilled otherwise) */
  bool act_in_write;
} hg_epilogue_t;

/* A consumer thread's share of its tile's vector values (lines t, t + vec_threads, ... for the
 * t-th thread of the tile), held in registers across the main loop. */
typedef struct hg_epi_prefetch {
  hg_val_t v[HG_EPI_MAX_STEPS][2];
  hg_val_t m0, n0; /* the tile's first row and column */
} hg_epi_prefetch_t;

/* Before the consumer's main loop: load the thread's share of each vector step's values for
 * the tile starting at (m0, n0) (0 past D's extent): the loads' latency passes behind the
 * main loop instead of stalling the epilogue. */
hg_status_t hg_epilogue_prefetch(hg_builder_t *b, const hg_epilogue_t *e, hg_val_t m0, hg_val_t n0,
                                 const hg_roles_t *r, hg_epi_prefetch_t *out);

/* The tile's accumulators (acc: am's values of the calling consumer thread) through the
 * steps into D. row0/col0: the thread's first element in D; m_base: the first row of the
 * consumer's region; n0: the tile's first column; batch (I32). */
hg_status_t hg_epilogue_emit(hg_builder_t *b, const hg_epilogue_t *e, const hg_val_t *acc,
                             const hg_acc_map_t *am, hg_val_t row0, hg_val_t col0, hg_val_t m_base,
                             hg_val_t n0, hg_val_t batch, const hg_roles_t *r);
/* Before the consumer's first tile (outside the tile loop): the running amax, when e has one. */
void hg_epilogue_begin(hg_builder_t *b, hg_epilogue_t *e);
/* e's chain storing element by element: no TMA or staged store, no step's values buffered
 * in shared memory (for tiles a TMA box may not cover, e.g. a grouped GEMM's last tile of a
 * group). */
hg_epilogue_t hg_epilogue_direct(const hg_epilogue_t *e);
/* After the consumer's last tile: its TMA stores have finished reading shared memory, and the
 * amax (when e has one) is reduced into the device scalar; every consumer thread (of every
 * CTA, with an amax_state) calls it. */
void hg_epilogue_drain(hg_builder_t *b, const hg_epilogue_t *e, const hg_roles_t *r);
/* Shared memory for TMA stores of D: `buffers` buffers of buf_bytes (1024-byte aligned) per
 * consumer, each stored with plan_d's boxes as 64-row x epi_n sub-tiles; sets e->tma. */
void hg_epilogue_reserve_tma(hg_builder_t *b, hg_epilogue_t *e, const hg_tma_plan_t *plan_d,
                             int epi_n, int buffers, uint32_t buf_bytes, int consumers);
/* Shared memory for a staged D (e->staged): as hg_epilogue_reserve_tma, without a plan; sw
 * is the buffers' swizzle. */
void hg_epilogue_reserve_staged(hg_builder_t *b, hg_epilogue_t *e, hg_swizzle_t sw, int epi_n,
                                int buffers, uint32_t buf_bytes, int consumers);
/* Shared memory for the vector steps' values (every HG_EPI_BIAS step of e->steps, so call it
 * after the chain is complete), loaded before the main loop (hg_epilogue_prefetch): a copy per
 * tile in flight, so one per consumer in ping-pong. tile_m/tile_n: the CTA tile. */
void hg_epilogue_reserve_vectors(hg_builder_t *b, hg_epilogue_t *e, int tile_m, int tile_n,
                                 int consumers, bool pingpong);

/* ---------------------------------------------------------------- split-K's two halves */

/* The GEMM's half: the unit w's partial tile (acc: am's values of the calling consumer
 * thread, its first element at row row0 of D, thread: hg_splitk_thread) to its slot, the
 * chunks past D's m rows skipped (m, n: D's extents, I32). */
hg_status_t hg_splitk_store_tile(hg_builder_t *b, const hg_splitk_t *s, const hg_acc_map_t *am,
                                 const hg_sched_work_t *w, hg_val_t m, hg_val_t n, hg_val_t row0,
                                 hg_val_t thread, const hg_val_t *acc);
/* Host side: the CTAs of the reduction pass per CTA tile (its grid's y): groups of
 * accumulator chunks, at most 16 of them. */
int hg_splitk_reduce_groups(int acc_count);
/* The reduction pass, a kernel of its own launched as the GEMM's programmatic dependent over
 * a grid of (CTA tiles x batches, hg_splitk_reduce_groups): every consumer thread of the
 * roles (no producer) sums its chunks of its tile over the splits, in split order, and runs
 * e (direct stores, no staged vectors) on them. m, n, k: the GEMM's extents (I32). */
hg_status_t hg_splitk_reduce_emit(hg_builder_t *b, const hg_splitk_t *s, const hg_tiled_mma_t *tm,
                                  hg_epilogue_t *e, const hg_roles_t *r, hg_val_t m, hg_val_t n,
                                  hg_val_t k);

/* Split-K by atomic adds (above): the GEMM's one half. */
hg_val_t hg_splitk_add_tile(hg_builder_t *b, const hg_splitk_t *s, const hg_acc_map_t *am,
                            const hg_sched_work_t *w, hg_val_t m, hg_val_t n, hg_val_t splits,
                            hg_val_t row0, const hg_roles_t *r, hg_val_t *acc);

/* Split-K reduced inside the GEMM (spec.scatter): the reduction pass's sums without its
 * launch. Workspace: the tiles' counters first (a 32-bit word a CTA tile, the region rounded
 * up to 256 bytes: hg_splitk_scatter_counter_bytes), zero before a launch and left zero by
 * it, then the pass's slots.
 *  1. hg_splitk_scatter_arrive: each split stores its partial tile to its slot (rows past M
 *     skipped); its threads meet at a barrier; one releases (fence.acq_rel.gpu), counts its
 *     arrival (+1 on the word), spins (relaxed atomic reads) until `splits` have arrived,
 *     acquires (the fence) and counts its departure (+65536); the split that departs last
 *     sets the word back to zero for the next launch (every other split has stopped reading
 *     it). A second barrier, then the tile's threads may read every slot.
 *  2. The caller sums its share of the tile's chunks over every slot in split order
 *     (hg_splitk_sum on *slots) and runs the epilogue on that share: group g of
 *     hg_splitk_scatter_group_chunks chunks goes to split g mod splits.
 * The splits of a tile wait for each other: every unit must be resident at once (one unit a
 * CTA; the operation refuses a grid that would queue units). The sums' order is split order,
 * whoever arrives last: the pass's bits. -> the tile's index (I64), and *slots: s with its
 * workspace moved past the counters (the slots hg_splitk_sum reads). Inside the consumers'
 * branch; every thread holding the tile calls it (it has two barriers). */
size_t hg_splitk_scatter_counter_bytes(int64_t cta_tiles);
hg_val_t hg_splitk_scatter_arrive(hg_builder_t *b, const hg_splitk_t *s, const hg_acc_map_t *am,
                                  const hg_sched_work_t *w, hg_val_t m, hg_val_t n,
                                  hg_val_t batches, hg_val_t splits, hg_val_t row0,
                                  const hg_roles_t *r, const hg_val_t *acc, hg_splitk_t *slots);
/* Chunk c of a thread's accumulators holds a row of D (rows_left = M - the thread's first
 * row): the keep[] predicate hg_splitk_sum takes (rows past M were never stored). */
hg_val_t hg_splitk_chunk_keep(hg_builder_t *b, const hg_acc_map_t *am, hg_val_t rows_left, int c);
/* The groups of accumulator chunks the splits share: chunks per group (a power of two
 * dividing the thread's chunks) so that `splits` splits each get one group or more. */
int hg_splitk_scatter_group_chunks(int acc_count, int splits);
/* The arrival of that protocol, for any kernel that adds into such slots (the GEMM's
 * hg_splitk_add_tile, the decode kernel): emitted by every thread of the tile between the
 * barrier after their additions and the next one; the thread where `leader` (PRED) holds
 * releases (fence.acq_rel.gpu), counts on the tile's counter (I64 address) and puts the old
 * count in shared memory at `word` (I32 shared::cta) for the others to read after that next
 * barrier; the arrival that finds `last` (I32: splits - 1) acquires the other splits'
 * additions and resets the counter for the next launch. */
void hg_splitk_count_arrival(hg_builder_t *b, hg_val_t leader, hg_val_t counter, hg_val_t last,
                             hg_val_t word);

/* ---------------------------------------------------------------- stream-K's fix-up */

/* Stream-K's fix-up in the same kernel (splitk.c, hg_streamk_*). A CTA whose range starts
 * inside a tile (k_first > 0: at most its first unit) stores that partial tile to its own
 * slot (one per CTA of the grid) and raises its flag: stores, the tile threads' barrier, then
 * one thread's fence.acq_rel.gpu and relaxed atomic add (a release). The CTA holding the
 * tile's k-block 0 finishes it: for each later cluster whose range starts inside the tile,
 * in cluster order, one thread spins on that CTA's flag (relaxed atomic reads, then
 * fence.acq_rel.gpu: an acquire), resets it to 0 for the next launch, the tile threads
 * meet at a barrier and add the slot into their accumulators; then the normal epilogue. The
 * sum's order is fixed by the partition (grid, K), not by timing: the same bits run to run.
 * Waiting is safe because the persistent grid is resident (hg_sched_streamk_clusters) and a
 * cluster waits only on later clusters' first units, which wait on nothing.
 *
 * Workspace (I64, 16-byte aligned): nctaid u32 flags (rounded up to 256 bytes), zero before
 * the first launch (every flag raised is reset by its reader, so they stay zero between
 * launches: CUDA-graph replays need no memset), then nctaid slots of threads x acc_count f32
 * (the split-K slot layout). */
typedef struct hg_streamk_spec {
  int acc_count;      /* accumulators per consumer thread, a multiple of 4 */
  int consumers;      /* consumer warpgroups, 1..HG_MAX_CONSUMERS */
  bool pingpong;      /* each consumer holds a tile of its own; else they split one along M */
  hg_val_t workspace; /* I64 */
} hg_streamk_spec_t;

typedef struct hg_streamk {
  hg_streamk_spec_t spec;
  hg_splitk_t slots; /* the slot layout (one split; tile = the CTA), past the flags */
  hg_val_t flags;    /* I64: the first flag (the workspace) */
} hg_streamk_t;

hg_status_t hg_streamk_make(hg_builder_t *b, const hg_streamk_spec_t *spec, hg_streamk_t *out);
/* A unit that starts inside its tile: its partial tile (acc: am's values of the calling tile
 * thread, whose first row is row0 of D's m rows) to this CTA's slot, then the flag raised. */
void hg_streamk_publish(hg_builder_t *b, const hg_streamk_t *k, const hg_acc_map_t *am,
                        const hg_roles_t *r, hg_val_t m, hg_val_t row0, hg_val_t *acc);
/* A unit holding its tile's k-block 0 but not its last: the later clusters' partials of the
 * tile added into acc in cluster order (a no-op for a unit that holds the whole tile). */
void hg_streamk_fixup(hg_builder_t *b, const hg_streamk_t *k, const hg_sched_t *s,
                      const hg_sched_work_t *w, const hg_acc_map_t *am, const hg_roles_t *r,
                      hg_val_t m, hg_val_t row0, hg_val_t *acc);
/* Host side: the workspace's bytes for a grid of ctas CTAs, and those of its flags (the first
 * bytes, to be zeroed before a first launch). */
size_t hg_streamk_workspace_bytes(int64_t ctas, int64_t tile_elems);
size_t hg_streamk_flag_bytes(int64_t ctas);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
