/* The streaming copy: the TMA pieces of the copy kernels (tensor maps, boxes, mbarriers,
 * bulk groups) put together for bandwidth, and its benchmark against the driver's
 * device-to-device copy in the same process.
 *
 * The buffer is viewed as a [rows, 256] tensor of u32 (1 KiB rows); a box is box_rows
 * rows. A persistent grid (SM count x ctas_per_sm CTAs) walks the boxes round-robin
 * (CTA c: boxes c, c + G, ... of G CTAs) or, with order = contiguous, each CTA one run of
 * consecutive boxes: CTA c starts at c * (n / G) + min(c, n % G) and the first n % G CTAs
 * take one box more. That is the balance of [c * n / G, (c + 1) * n / G) (every CTA
 * floor(n / G) or ceil(n / G) boxes) without the product c * n, which can pass 2^31. In
 * each CTA one thread runs a ring of `stages` shared-memory buffers, one mbarrier each:
 *
 *   prologue   load boxes 0 .. stages-1 of this CTA into stages 0 .. stages-1
 *   box j      wait full[j % S] (phase (j / S) & 1); TMA-store stage j % S; commit;
 *              then refill the stage box j-1 used (its store was committed one iteration
 *              ago): cp.async.bulk.wait_group.read 1 (every group but the newest has
 *              finished reading shared memory), expect_tx + load box j-1+S into it
 *   end        cp.async.bulk.wait_group 0 (the writes are done before the CTA exits)
 *
 * So S-1 loads are in flight while a store drains, and the issuing thread never waits
 * for a store it has just issued; but a refill is issued only after that thread's wait for
 * the next full stage and the store's read, so a load can queue behind them. With
 * split_roles the two jobs are two threads (one elected lane in each of warps 0 and 1) and
 * the ring gets an empty mbarrier per stage (hg_pipe_t, one arrival):
 *
 *   loader     box j: hg_pipe_acquire (empty[j % S], parity ((j / S) & 1) ^ 1: the first
 *              pass does not wait), expect_tx + load box j into stage j % S
 *   storer     box j: wait full[j % S]; TMA-store it; commit; for j >= 1,
 *              cp.async.bulk.wait_group.read 1 (the store of box j-1 has read its stage),
 *              then arrive on empty[(j-1) % S]; at the end wait_group 0
 *
 * so a load waits only for its own stage's store. The empty barrier of a stage completes
 * its k-th phase when the store of the stage's k-th box has read it, exactly the phase the
 * loader's (k+1)-th pass waits for. Barrier init (thread 0, fenced for the async proxy)
 * comes before a CTA barrier that both roles pass.
 *
 * store_evict_first puts an L2::evict_first cache policy on the stores (the loads' is
 * evict_first); both are hints only. Out-of-bounds rows of a last partial box are zero-
 * filled by the load and skipped by the store (TMA's bounds), so any whole number of
 * rows copies exactly.
 *
 * store_threads keeps the TMA loads but has threads store: one elected lane of warp 0 is
 * split roles' loader, and warps 1..W (T = 32 W threads) are the store warps. Each stage
 * has a full mbarrier (the loader's expect_tx, TMA's complete_tx) and an empty one that
 * counts T arrivals:
 *
 *   store thread t, box j: wait full[j % S]; rows = min(box_rows, rows - first row of the
 *              box) (the last box may be partial: its zero-filled rows are not stored);
 *              in chunks of T x C vectors of 16 B, vector t + i T of each chunk (i < C):
 *              C ld.shared.v4, then C st.global.v4 (a warp reads and writes 512
 *              consecutive bytes); the rest of the box (fewer than a chunk) a vector at a
 *              time under a bound; then fence.proxy.async.shared::cta and arrive on
 *              empty[j % S]
 *
 * The fence is each thread's own: its ld.shared are generic-proxy reads of a stage that
 * the loader's next TMA load (async proxy) overwrites once the empty barrier completes,
 * and PTX orders accesses of different proxies only through a proxy fence; the arrival
 * (release) then carries that order to the loader's wait (acquire). C is the thread's
 * share of a box, 2 box_rows / W vectors, clamped to 1..8 (at most 32 data registers).
 *
 * ldg is a reference with no TMA and no shared memory: a tile is ldg_threads x unroll
 * vectors of 16 B; CTA c copies tiles c, c + G, ... of the bytes / (16 T U) whole tiles,
 * thread t vectors t + u T (u < U) of each: all U ld.global.v4 first, then the U
 * st.global.v4 (ptxas keeps that order: the stores may alias the loads). The CTA whose turn
 * the last, partial tile would be copies it a vector at a time under a bound (the bench's
 * sizes are whole 1 KiB rows, so 16-byte vectors cover them exactly). store_cs puts the
 * .cs (streaming) cache operator on either form's st.global. Both threaded forms set
 * .minnctapersm to ctas_per_sm, so that the persistent grid is resident (the register cap
 * ptxas derives from it).
 *
 * Layering note: hg_copy_bench_run calls the runtime (see tma_run.c's note). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hopgen/kernels.h"
#include "kernels/tma_internal.h"

#define COPY_ROW_ELEMS 256 /* a box row: 256 u32 (the box limit), 1 KiB */
#define COPY_ROW_BYTES (COPY_ROW_ELEMS * 4)
#define COPY_THREADS 32 /* a warp: elect.sync picks the issuing thread (two with split roles) */

static const char *const order_names[] = {"interleaved", "contiguous"};

const char *hg_copy_order_name(hg_copy_order_t o) {
  return (int)o >= 0 && o <= HG_COPY_CONTIGUOUS ? order_names[o] : "?";
}

hg_status_t hg_copy_order_parse(const char *text, hg_copy_order_t *out) {
  for (int i = 0; i <= HG_COPY_CONTIGUOUS; i++)
    if (text && !strcmp(text, order_names[i])) {
      *out = (hg_copy_order_t)i;
      return hg_ok();
    }
  return hg_error(HG_ERR_PARSE, "copy order '%s' is not one of interleaved, contiguous",
                  text ? text : "(null)");
}

/* The first option of c that the ldg copy has no use for (it has no TMA and no ring), or
 * NULL. */
static const char *ldg_conflict(const hg_copy_config_t *c) {
  if (c->stages) return "stages";
  if (c->box_rows) return "box_rows";
  if (c->evict_first) return "evict_first";
  if (c->store_evict_first) return "store_evict_first";
  if (c->split_roles) return "split_roles";
  if (c->order != HG_COPY_INTERLEAVED) return "a contiguous order";
  if (c->store_threads) return "store_threads";
  if (c->store_warps) return "store_warps";
  return NULL;
}

static hg_status_t ldg_config_normalize(hg_copy_config_t *c) {
  const char *other = ldg_conflict(c);
  if (other)
    return hg_error(HG_ERR_INVALID,
                    "the ldg copy has no TMA and no shared-memory ring: %s applies to the TMA "
                    "copy only",
                    other);
  if (c->unroll == 0) c->unroll = 8;
  if (c->ldg_threads == 0) c->ldg_threads = 256;
  if (c->ctas_per_sm == 0) c->ctas_per_sm = 1;
  if (c->unroll < 1 || c->unroll > 16)
    return hg_error(HG_ERR_INVALID, "an ldg unroll of %d vectors per thread is outside 1..16",
                    c->unroll);
  if (c->ldg_threads < 32 || c->ldg_threads > 1024 || c->ldg_threads % 32 != 0)
    return hg_error(HG_ERR_INVALID, "%d ldg threads per CTA is not a multiple of 32 in 32..1024",
                    c->ldg_threads);
  if (c->ctas_per_sm < 1 || c->ctas_per_sm > 32)
    return hg_error(HG_ERR_INVALID, "%d CTAs per SM is outside 1..32", c->ctas_per_sm);
  if (c->ldg_threads * c->ctas_per_sm > 2048)
    return hg_error(HG_ERR_INVALID,
                    "%d CTAs per SM of %d threads exceed the 2048 threads an SM holds: fewer "
                    "CTAs per SM or fewer threads",
                    c->ctas_per_sm, c->ldg_threads);
  return hg_ok();
}

static hg_status_t copy_config_normalize(hg_copy_config_t *c) {
  if ((int)c->order < 0 || c->order > HG_COPY_CONTIGUOUS)
    return hg_error(HG_ERR_INVALID,
                    "copy order %d is not an hg_copy_order_t (interleaved 0, contiguous 1)",
                    (int)c->order);
  if (c->ldg) return ldg_config_normalize(c);
  if (c->unroll || c->ldg_threads)
    return hg_error(HG_ERR_INVALID,
                    "unroll (%d) and ldg_threads (%d) apply to the ldg copy only: set ldg or "
                    "leave them 0",
                    c->unroll, c->ldg_threads);
  if (c->store_cs && !c->store_threads)
    return hg_error(HG_ERR_INVALID,
                    "store_cs puts the .cs cache operator on the threads' stores: it needs "
                    "store_threads or ldg (the TMA stores' hint is store_evict_first)");
  if (c->store_threads) {
    if (c->split_roles)
      return hg_error(HG_ERR_INVALID,
                      "store_threads splits the roles already (warp 0 loads, the store warps "
                      "store): leave split_roles off");
    if (c->store_evict_first)
      return hg_error(HG_ERR_INVALID,
                      "store_evict_first hints TMA stores, and with store_threads the threads "
                      "store: leave it off (store_cs is the threads' streaming hint)");
    if (c->store_warps == 0) c->store_warps = 4;
    if (c->store_warps < 1 || c->store_warps > 8)
      return hg_error(HG_ERR_INVALID, "%d store warps is outside 1..8", c->store_warps);
  } else if (c->store_warps) {
    return hg_error(HG_ERR_INVALID,
                    "store_warps (%d) applies to store_threads only: set store_threads or leave "
                    "it 0",
                    c->store_warps);
  }
  if (c->stages == 0) c->stages = 6;
  if (c->box_rows == 0) c->box_rows = 32;
  if (c->ctas_per_sm == 0) c->ctas_per_sm = 1;
  if (c->stages < 2 || c->stages > 16)
    return hg_error(HG_ERR_INVALID, "the copy ring has %d stages; give 2..16", c->stages);
  if (c->box_rows < 1 || c->box_rows > 256)
    return hg_error(HG_ERR_INVALID, "a copy box of %d rows is outside TMA's 1..256 box extent",
                    c->box_rows);
  if (c->ctas_per_sm < 1 || c->ctas_per_sm > 32)
    return hg_error(HG_ERR_INVALID, "%d CTAs per SM is outside 1..32", c->ctas_per_sm);
  if (c->store_threads && COPY_THREADS * (1 + c->store_warps) * c->ctas_per_sm > 2048)
    return hg_error(HG_ERR_INVALID,
                    "%d CTAs per SM of %d threads exceed the 2048 threads an SM holds: fewer "
                    "CTAs per SM or store warps",
                    c->ctas_per_sm, COPY_THREADS * (1 + c->store_warps));
  const uint64_t smem = (uint64_t)c->stages * (uint64_t)c->box_rows * COPY_ROW_BYTES;
  /* a full mbarrier per stage, and an empty one with split roles or store threads */
  const uint64_t bars = (c->split_roles || c->store_threads ? 16u : 8u) * (uint64_t)c->stages;
  if (smem + bars > 227u * 1024u)
    return hg_error(HG_ERR_INVALID,
                    "%d stages of %d rows x %d B = %" PRIu64
                    " B of shared memory exceed the 227 KiB a CTA may use on sm_90",
                    c->stages, c->box_rows, COPY_ROW_BYTES, smem);
  if (smem * (uint64_t)c->ctas_per_sm > 228u * 1024u)
    return hg_error(HG_ERR_INVALID,
                    "%d CTAs per SM with %" PRIu64
                    " B of shared memory each exceed an SM's 228 KiB: fewer stages, smaller "
                    "boxes or fewer CTAs per SM",
                    c->ctas_per_sm, smem);
  return hg_ok();
}

/* The [rows, 256] u32 view of `bytes`: what both tensor maps describe. */
static void copy_map(const hg_copy_config_t *c, uint64_t bytes, hg_tensormap_params_t *m) {
  memset(m, 0, sizeof *m);
  m->dtype = HG_U32;
  m->rank = 2;
  m->global_dim[0] = COPY_ROW_ELEMS;
  m->global_dim[1] = bytes / COPY_ROW_BYTES;
  m->global_stride_bytes[0] = COPY_ROW_BYTES;
  m->box_dim[0] = COPY_ROW_ELEMS;
  m->box_dim[1] = (uint32_t)c->box_rows;
  m->element_strides[0] = m->element_strides[1] = 1;
  m->swizzle = HG_SWIZZLE_NONE;
  m->l2_promotion = 3; /* 256B: whole rows are read */
}

/* What both forms of the kernel share: parameters, the ring, constants, the options. */
typedef struct copy_gen {
  hg_builder_t *b;
  const hg_copy_config_t *c;
  hg_val_t src, dst, nboxes;
  hg_smem_ring_t ring;
  hg_pipe_t pipe;
  hg_val_t zero, rows, tx;
  hg_val_t cta, nc;        /* this CTA and the grid's CTAs */
  hg_val_t n, first;       /* this CTA's boxes: how many, and the first (contiguous order) */
  hg_val_t dst_ptr, nrows; /* store_threads: the destination (I64) and its rows (I32) */
} copy_gen_t;

/* n (and with contiguous order, first): this CTA's share of the boxes. Interleaved:
 * ceil((boxes - cta) / nctaid), 0 when cta >= boxes. Contiguous: q = boxes / nctaid,
 * r = boxes % nctaid, n = q + (cta < r), first = cta * q + min(cta, r). */
static void copy_share(copy_gen_t *g) {
  hg_builder_t *b = g->b;
  if (g->c->order == HG_COPY_CONTIGUOUS) {
    hg_val_t q = hg_b_bin(b, HG_DIV_S, g->nboxes, g->nc);
    hg_val_t r = hg_b_bin(b, HG_REM_S, g->nboxes, g->nc);
    g->n = hg_b_bin(b, HG_ADD, q,
                    hg_b_select(b, hg_b_cmp(b, HG_LT_S, g->cta, r), hg_b_i32(b, 1), g->zero));
    g->first = hg_b_mad(b, g->cta, q, hg_b_bin(b, HG_MIN_S, g->cta, r));
    hg_b_name(b, g->first, "first_box");
  } else {
    hg_val_t left = hg_b_bin(b, HG_SUB, g->nboxes, g->cta);
    g->n = hg_b_select(
        b, hg_b_cmp(b, HG_GT_S, left, g->zero),
        hg_b_bin(b, HG_DIV_S, hg_b_bin(b, HG_ADD, left, hg_b_bin(b, HG_SUB, g->nc, hg_b_i32(b, 1))),
                 g->nc),
        g->zero);
  }
  hg_b_name(b, g->n, "my_boxes");
}

/* The coordinates {0, row} of this CTA's j-th box. */
static void copy_coords(copy_gen_t *g, hg_val_t j, hg_val_t crd[2]) {
  hg_builder_t *b = g->b;
  hg_val_t box = g->c->order == HG_COPY_CONTIGUOUS ? hg_b_bin(b, HG_ADD, g->first, j)
                                                   : hg_b_mad(b, j, g->nc, g->cta);
  crd[0] = g->zero;
  crd[1] = hg_b_bin(b, HG_MUL, box, g->rows);
}

/* The L2 policy of the stores: the loads' when both are evict_first (one createpolicy). */
static hg_val_t store_hint(copy_gen_t *g, hg_val_t load_hint) {
  if (!g->c->store_evict_first) return HG_NONE;
  return g->c->evict_first ? load_hint : hg_b_cache_policy(g->b, HG_EVICT_FIRST);
}

/* One thread loads and stores (see the file comment). */
static void copy_one_thread(copy_gen_t *g) {
  hg_builder_t *b = g->b;
  const int S = g->c->stages;
  hg_val_t zero = g->zero;
  hg_b_if(b, hg_b_elect_sync(b));
  {
    hg_val_t hint = g->c->evict_first ? hg_b_cache_policy(b, HG_EVICT_FIRST) : HG_NONE;
    hg_val_t shint = store_hint(g, hint);
    hg_pipe_init(b, &g->pipe);
    /* the barriers' init must be visible to the TMA unit's complete_tx (async proxy) */
    hg_b_fence_proxy_async(b);
    g->cta = hg_b_sreg(b, HG_CTAID_X);
    g->nc = hg_b_sreg(b, HG_NCTAID_X);
    copy_share(g);
    hg_val_t n = g->n;

    hg_b_comment(b, "prologue: fill the ring");
    for (int s = 0; s < S; s++) {
      hg_b_if(b, hg_b_cmp(b, HG_LT_S, hg_b_i32(b, s), n));
      hg_val_t sv = hg_b_i32(b, s);
      hg_val_t bar = hg_pipe_full_bar(b, &g->pipe, sv);
      hg_val_t crd[2];
      copy_coords(g, sv, crd);
      hg_b_mbar_arrive_expect_tx(b, bar, g->tx);
      hg_b_tma_load(b, g->src, hg_smem_ring_addr(b, &g->ring, sv), bar, 2, crd, HG_NONE, hint);
      hg_b_endif(b);
    }

    hg_b_comment(b, "steady state: store box j, refill the stage of box j-1");
    hg_val_t j = hg_b_for(b, zero, n, hg_b_i32(b, 1));
    {
      hg_val_t Sv = hg_b_i32(b, S);
      hg_val_t s = hg_b_bin(b, HG_REM_U, j, Sv);
      hg_val_t parity = hg_b_bin(b, HG_AND, hg_b_bin(b, HG_DIV_U, j, Sv), hg_b_i32(b, 1));
      hg_val_t stage = hg_smem_ring_addr(b, &g->ring, s);
      hg_val_t bar = hg_pipe_full_bar(b, &g->pipe, s);
      hg_b_mbar_wait(b, bar, parity);
      hg_val_t crd[2];
      copy_coords(g, j, crd);
      hg_b_tma_store_hint(b, g->dst, stage, 2, crd, shint);
      hg_b_bulk_commit(b);
      hg_val_t next = hg_b_bin(b, HG_ADD, j, hg_b_i32(b, S - 1)); /* the box to load */
      hg_b_if(b, hg_b_bin(b, HG_AND, hg_b_cmp(b, HG_GE_S, j, hg_b_i32(b, 1)),
                          hg_b_cmp(b, HG_LT_S, next, n)));
      {
        /* PTX ISA cp.async.bulk.wait_group.read: the older store (box j-1) has read its
         * stage, which may now be overwritten. */
        hg_b_bulk_wait(b, 1, true);
        hg_val_t sp = hg_b_bin(b, HG_REM_U, next, Sv);
        hg_val_t pstage = hg_smem_ring_addr(b, &g->ring, sp);
        hg_val_t pbar = hg_pipe_full_bar(b, &g->pipe, sp);
        hg_val_t pcrd[2];
        copy_coords(g, next, pcrd);
        hg_b_mbar_arrive_expect_tx(b, pbar, g->tx);
        hg_b_tma_load(b, g->src, pstage, pbar, 2, pcrd, HG_NONE, hint);
      }
      hg_b_endif(b);
    }
    hg_b_endfor(b);
    hg_b_bulk_wait(b, 0, false);
  }
  hg_b_endif(b);
}

/* The loader of split roles and store threads (one elected lane of warp 0): for each box,
 * wait until its stage is free, then expect its bytes and load it. */
static void copy_loader(copy_gen_t *g) {
  hg_builder_t *b = g->b;
  hg_b_comment(b, "loader: wait for a free stage, load box j into it");
  hg_val_t hint = g->c->evict_first ? hg_b_cache_policy(b, HG_EVICT_FIRST) : HG_NONE;
  hg_pipe_pos_t pos = hg_pipe_start(b);
  hg_val_t j = hg_b_for(b, g->zero, g->n, hg_b_i32(b, 1));
  {
    hg_pipe_acquire(b, &g->pipe, pos);
    hg_pipe_expect_tx(b, &g->pipe, pos, (uint32_t)g->c->box_rows * COPY_ROW_BYTES);
    hg_val_t crd[2];
    copy_coords(g, j, crd);
    hg_b_tma_load(b, g->src, hg_smem_ring_addr(b, &g->ring, pos.stage),
                  hg_pipe_full_bar(b, &g->pipe, pos.stage), 2, crd, HG_NONE, hint);
    hg_pipe_advance(b, &g->pipe, pos);
  }
  hg_b_endfor(b);
}

/* A loader in warp 0 and a storer in warp 1, one elected lane each (see the file comment). */
static hg_status_t copy_split_roles(copy_gen_t *g) {
  hg_builder_t *b = g->b;
  const int S = g->c->stages;
  hg_val_t tid = hg_b_sreg(b, HG_TID_X);
  hg_cluster2d_t one; /* a cluster of one CTA: the grid's CTA index and count */
  HG_TRY(hg_cluster2d_make(b, 1, 1, &one));
  g->cta = one.id;
  g->nc = one.count;
  /* Thread 0 prefetches both descriptors and initialises the barriers (fenced for the async
   * proxy); then bar.sync 0, so neither role touches a barrier before it exists. */
  const hg_val_t maps[2] = {g->src, g->dst};
  hg_pipe_init_cluster(b, &g->pipe, &one, tid, maps, 2);
  copy_share(g);
  hg_val_t Sv = hg_b_i32(b, S);

  hg_b_if(b, hg_b_cmp(b, HG_LT_U, tid, hg_b_i32(b, 32)));
  hg_b_if(b, hg_b_elect_sync(b));
  copy_loader(g);
  hg_b_endif(b);
  hg_b_else(b);
  hg_b_if(b, hg_b_elect_sync(b));
  {
    hg_b_comment(b, "storer: store box j, then hand back the stage of box j-1 once read");
    hg_val_t shint = g->c->store_evict_first ? hg_b_cache_policy(b, HG_EVICT_FIRST) : HG_NONE;
    hg_pipe_pos_t pos = hg_pipe_start(b);
    hg_val_t j = hg_b_for(b, g->zero, g->n, hg_b_i32(b, 1));
    {
      hg_pipe_wait(b, &g->pipe, pos);
      hg_val_t crd[2];
      copy_coords(g, j, crd);
      hg_b_tma_store_hint(b, g->dst, hg_smem_ring_addr(b, &g->ring, pos.stage), 2, crd, shint);
      hg_b_bulk_commit(b);
      hg_b_if(b, hg_b_cmp(b, HG_GE_S, j, hg_b_i32(b, 1)));
      {
        /* PTX ISA cp.async.bulk.wait_group.read: every bulk group but the newest (box j's)
         * has finished reading shared memory, so box j-1's stage may be refilled. */
        hg_b_bulk_wait(b, 1, true);
        hg_val_t prev = hg_b_bin(b, HG_REM_U, hg_b_bin(b, HG_ADD, j, hg_b_i32(b, S - 1)), Sv);
        hg_b_mbar_arrive(b, hg_pipe_empty_bar(b, &g->pipe, prev));
      }
      hg_b_endif(b);
      hg_pipe_advance(b, &g->pipe, pos);
    }
    hg_b_endfor(b);
    /* the writes are done (not only read from shared memory) before the CTA exits */
    hg_b_bulk_wait(b, 0, false);
  }
  hg_b_endif(b);
  hg_b_endif(b);
  return hg_builder_status(b);
}

/* A thread's 16-byte store to global memory, with .cs when the configuration asks. */
static void store_v4(hg_builder_t *b, bool cs, hg_val_t addr, const hg_val_t v[4]) {
  if (cs)
    hg_b_store_cs(b, 0, 4, addr, v);
  else
    hg_b_store(b, HG_GLOBAL, 0, 4, addr, v);
}

/* 16-byte vectors a store thread moves per chunk of a box: its share of the box (64 vectors
 * a row over 32 x store_warps threads: 2 box_rows / store_warps), at most 8 (32 registers)
 * and at least 1. A chunk's shared-memory loads are all issued before its stores. */
static int store_chunk(const hg_copy_config_t *c) {
  const int v = 2 * c->box_rows / c->store_warps;
  return v < 1 ? 1 : v > 8 ? 8 : v;
}

/* A loader in warp 0 (one elected lane) and store_warps warps that store (see the file
 * comment). */
static hg_status_t copy_store_threads(copy_gen_t *g) {
  hg_builder_t *b = g->b;
  const int T = COPY_THREADS * g->c->store_warps, C = store_chunk(g->c);
  const int32_t chunk = T * C; /* vectors of a chunk, all store threads together */
  const int32_t step = T * 16; /* bytes from a thread's vector to its next in a chunk */
  const bool cs = g->c->store_cs;
  hg_val_t tid = hg_b_sreg(b, HG_TID_X);
  hg_cluster2d_t one; /* a cluster of one CTA: the grid's CTA index and count */
  HG_TRY(hg_cluster2d_make(b, 1, 1, &one));
  g->cta = one.id;
  g->nc = one.count;
  /* thread 0 prefetches the source's descriptor and initialises the barriers; then
   * bar.sync 0 (see copy_split_roles) */
  hg_pipe_init_cluster(b, &g->pipe, &one, tid, &g->src, 1);
  copy_share(g);

  hg_b_if(b, hg_b_cmp(b, HG_LT_U, tid, hg_b_i32(b, 32)));
  hg_b_if(b, hg_b_elect_sync(b));
  copy_loader(g);
  hg_b_endif(b);
  hg_b_else(b);
  {
    hg_b_comment(b, "store warps: wait for box j, copy it out with every thread, hand its stage "
                    "back");
    /* store thread t's vectors are t, t + T, ... of a chunk: a warp's 32 lanes read and write
     * 512 consecutive bytes (shared memory without bank conflicts, whole global sectors) */
    hg_val_t me = hg_b_bin(b, HG_SUB, tid, hg_b_i32(b, 32));
    hg_val_t mine = hg_b_bin(b, HG_MUL, me, hg_b_i32(b, 16));
    hg_b_name(b, mine, "my_offset");
    hg_val_t mine64 = hg_b_zext(b, mine);
    hg_pipe_pos_t pos = hg_pipe_start(b);
    hg_val_t j = hg_b_for(b, g->zero, g->n, hg_b_i32(b, 1));
    {
      hg_pipe_wait(b, &g->pipe, pos);
      hg_val_t crd[2];
      copy_coords(g, j, crd);
      /* the box's rows that exist: all but in the last box (TMA filled the rest with zeros,
       * which must not be written past the end) */
      hg_val_t rows = hg_b_bin(b, HG_MIN_S, hg_b_bin(b, HG_SUB, g->nrows, crd[1]), g->rows);
      hg_val_t vecs = hg_b_bin(b, HG_MUL, rows, hg_b_i32(b, COPY_ROW_BYTES / 16));
      hg_b_name(b, vecs, "box_vectors");
      hg_val_t from = hg_b_bin(b, HG_ADD, hg_smem_ring_addr(b, &g->ring, pos.stage), mine);
      hg_val_t row_at = hg_b_bin(b, HG_SHL, hg_b_sext(b, crd[1]), hg_b_i64(b, 10)); /* x 1 KiB */
      hg_val_t to = hg_b_bin(b, HG_ADD, hg_b_bin(b, HG_ADD, g->dst_ptr, row_at), mine64);
      hg_val_t chunks = hg_b_bin(b, HG_DIV_U, vecs, hg_b_i32(b, chunk));
      hg_val_t k = hg_b_for(b, g->zero, chunks, hg_b_i32(b, 1));
      {
        hg_val_t at = hg_b_bin(b, HG_MUL, k, hg_b_i32(b, chunk * 16));
        hg_val_t f = hg_b_bin(b, HG_ADD, from, at);
        hg_val_t t = hg_b_bin(b, HG_ADD, to, hg_b_zext(b, at));
        hg_val_t v[8][4];
        for (int i = 0; i < C; i++)
          hg_b_load(b, HG_SHARED, HG_T_I32, 0, 4, hg_b_bin(b, HG_ADD, f, hg_b_i32(b, i * step)),
                    v[i]);
        for (int i = 0; i < C; i++)
          store_v4(b, cs, hg_b_bin(b, HG_ADD, t, hg_b_i64(b, (int64_t)i * step)), v[i]);
      }
      hg_b_endfor(b);
      /* the rest, fewer than a chunk: the last box's rows, or a box that is not a whole number
       * of chunks; a vector at a time */
      hg_val_t done = hg_b_bin(b, HG_MUL, chunks, hg_b_i32(b, chunk));
      hg_val_t rest = hg_b_bin(b, HG_SUB, vecs, done);
      hg_b_if(b, hg_b_cmp(b, HG_GT_S, rest, g->zero));
      {
        hg_val_t at = hg_b_bin(b, HG_MUL, done, hg_b_i32(b, 16));
        hg_val_t f = hg_b_bin(b, HG_ADD, from, at);
        hg_val_t t = hg_b_bin(b, HG_ADD, to, hg_b_zext(b, at));
        for (int i = 0; i < C; i++) {
          hg_b_if(b, hg_b_cmp(b, HG_LT_S, hg_b_bin(b, HG_ADD, me, hg_b_i32(b, i * T)), rest));
          hg_val_t v[4];
          hg_b_load(b, HG_SHARED, HG_T_I32, 0, 4, hg_b_bin(b, HG_ADD, f, hg_b_i32(b, i * step)), v);
          store_v4(b, cs, hg_b_bin(b, HG_ADD, t, hg_b_i64(b, (int64_t)i * step)), v);
          hg_b_endif(b);
        }
      }
      hg_b_endif(b);
      /* PTX ISA "Proxies": this thread's reads of the stage are generic-proxy accesses and
       * the loader's next TMA load into it an async-proxy write; the fence orders the reads
       * before the arrival that lets that load be issued (each thread fences its own). */
      hg_b_fence_proxy_async(b);
      hg_b_mbar_arrive(b, hg_pipe_empty_bar(b, &g->pipe, pos.stage));
      hg_pipe_advance(b, &g->pipe, pos);
    }
    hg_b_endfor(b);
  }
  hg_b_endif(b);
  return hg_builder_status(b);
}

/* Both copy forms' end: the generation time since t0, the kernel's text from b unless st
 * already failed (hg_kernel_finish checks the builder's own status), b destroyed; on failure k
 * freed and the status said of `what`. */
static hg_status_t copy_finish(hg_builder_t *b, hg_backend_t be, hg_kernel_t *k, double t0,
                               hg_status_t st, const char *what) {
  k->gen_ms = hg_now_ms() - t0;
  if (hg_is_ok(&st)) st = hg_kernel_finish(b, be, k);
  hg_builder_destroy(b);
  if (!hg_is_ok(&st)) {
    hg_kernel_free(k);
    return hg_status_wrap(st, "generating the %s: ", what);
  }
  return hg_ok();
}

/* The register copy (see the file comment): no TMA, no shared memory. */
static hg_status_t copy_gen_ldg(const hg_copy_config_t *c, hg_backend_t be, hg_kernel_t *k) {
  const double t0 = hg_now_ms();
  const int T = c->ldg_threads, U = c->unroll;
  const int32_t tile = T * U;  /* vectors a CTA moves per step of its loop */
  const int32_t step = T * 16; /* bytes from a thread's vector to its next in a tile */
  snprintf(k->name, sizeof k->name, "hg_copy_ldg_t%d_u%d_c%d%s", T, U, c->ctas_per_sm,
           c->store_cs ? "_cs" : "");
  k->threads = (uint32_t)T;
  k->cluster[0] = k->cluster[1] = k->cluster[2] = 1;
  hg_builder_t *b;
  HG_TRY(hg_builder_create(k->name, &b));
  hg_b_set_threads(b, T);
  /* the register cap that keeps ctas_per_sm CTAs resident: the grid is persistent */
  hg_b_set_min_ctas(b, c->ctas_per_sm);
  hg_val_t src = hg_b_param(b, HG_T_I64, "src");
  hg_val_t dst = hg_b_param(b, HG_T_I64, "dst");
  hg_val_t bytes = hg_b_param(b, HG_T_I64, "bytes");
  hg_val_t tid = hg_b_sreg(b, HG_TID_X);
  hg_val_t cta = hg_b_sreg(b, HG_CTAID_X);
  hg_val_t nc = hg_b_sreg(b, HG_NCTAID_X);
  hg_val_t vecs = hg_b_bin(b, HG_SHR_U, bytes, hg_b_i64(b, 4));
  hg_val_t full64 = hg_b_bin(b, HG_DIV_U, vecs, hg_b_i64(b, tile));
  hg_val_t full = hg_b_trunc(b, full64);
  hg_b_name(b, full, "full_tiles");
  hg_val_t rest =
      hg_b_trunc(b, hg_b_bin(b, HG_SUB, vecs, hg_b_bin(b, HG_MUL, full64, hg_b_i64(b, tile))));
  hg_b_name(b, rest, "rest_vectors");
  /* thread t's vectors are t, t + T, ... of a tile: a warp moves 512 consecutive bytes */
  hg_val_t mine = hg_b_zext(b, hg_b_bin(b, HG_MUL, tid, hg_b_i32(b, 16)));
  hg_val_t from = hg_b_bin(b, HG_ADD, src, mine), to = hg_b_bin(b, HG_ADD, dst, mine);

  hg_b_comment(b, "tiles cta, cta + nctaid, ...: every load of a tile, then every store");
  hg_val_t t = hg_b_for(b, cta, full, nc);
  {
    hg_val_t at = hg_b_bin(b, HG_MUL, hg_b_zext(b, t), hg_b_i64(b, (int64_t)tile * 16));
    hg_val_t f = hg_b_bin(b, HG_ADD, from, at), d = hg_b_bin(b, HG_ADD, to, at);
    hg_val_t v[16][4];
    for (int u = 0; u < U; u++)
      hg_b_load(b, HG_GLOBAL, HG_T_I32, 0, 4,
                hg_b_bin(b, HG_ADD, f, hg_b_i64(b, (int64_t)u * step)), v[u]);
    for (int u = 0; u < U; u++)
      store_v4(b, c->store_cs, hg_b_bin(b, HG_ADD, d, hg_b_i64(b, (int64_t)u * step)), v[u]);
  }
  hg_b_endfor(b);

  hg_b_comment(b, "the last tile, fewer than T x U vectors: the CTA whose turn it is");
  hg_b_if(b, hg_b_bin(b, HG_AND, hg_b_cmp(b, HG_GT_S, rest, hg_b_i32(b, 0)),
                      hg_b_cmp(b, HG_EQ, cta, hg_b_bin(b, HG_REM_U, full, nc))));
  {
    hg_val_t at = hg_b_bin(b, HG_MUL, hg_b_zext(b, full), hg_b_i64(b, (int64_t)tile * 16));
    hg_val_t f = hg_b_bin(b, HG_ADD, from, at), d = hg_b_bin(b, HG_ADD, to, at);
    for (int u = 0; u < U; u++) {
      hg_b_if(b, hg_b_cmp(b, HG_LT_S, hg_b_bin(b, HG_ADD, tid, hg_b_i32(b, u * T)), rest));
      hg_val_t v[4];
      hg_b_load(b, HG_GLOBAL, HG_T_I32, 0, 4,
                hg_b_bin(b, HG_ADD, f, hg_b_i64(b, (int64_t)u * step)), v);
      store_v4(b, c->store_cs, hg_b_bin(b, HG_ADD, d, hg_b_i64(b, (int64_t)u * step)), v);
      hg_b_endif(b);
    }
  }
  hg_b_endif(b);
  return copy_finish(b, be, k, t0, hg_ok(), "ldg copy");
}

hg_status_t hg_gen_copy(const hg_copy_config_t *cfg, hg_backend_t be, hg_kernel_t *k) {
  if (!k) return hg_error(HG_ERR_INVALID, "hg_gen_copy needs somewhere to put the kernel");
  memset(k, 0, sizeof *k);
  hg_copy_config_t c;
  memset(&c, 0, sizeof c);
  if (cfg) c = *cfg;
  HG_TRY(copy_config_normalize(&c));
  if (c.ldg) return copy_gen_ldg(&c, be, k);
  const double t0 = hg_now_ms();
  const int S = c.stages;
  const uint32_t box_bytes = (uint32_t)c.box_rows * COPY_ROW_BYTES;
  const int threads = c.store_threads ? COPY_THREADS * (1 + c.store_warps)
                      : c.split_roles ? 2 * COPY_THREADS
                                      : COPY_THREADS;
  char stores[32] = ""; /* store threads: how many warps, CTAs per SM, the cache operator */
  if (c.store_threads)
    snprintf(stores, sizeof stores, "_st%d_c%d%s", c.store_warps, c.ctas_per_sm,
             c.store_cs ? "_cs" : "");
  snprintf(k->name, sizeof k->name, "hg_copy_s%d_r%d%s%s%s%s%s", S, c.box_rows,
           c.evict_first ? "_ef" : "", c.store_evict_first ? "_sef" : "",
           c.order == HG_COPY_CONTIGUOUS ? "_ct" : "", c.split_roles ? "_sr" : "", stores);
  k->threads = (uint32_t)threads;
  k->cluster[0] = k->cluster[1] = k->cluster[2] = 1;
  copy_gen_t g;
  memset(&g, 0, sizeof g);
  g.c = &c;
  HG_TRY(hg_builder_create(k->name, &g.b));
  hg_builder_t *b = g.b;
  hg_b_set_threads(b, threads);
  /* Store threads: the register cap of ctas_per_sm resident CTAs. Without .minnctapersm,
   * ptxas (CUDA 13.0) caps a 96- or 160-thread kernel at 40 registers and spills. */
  if (c.store_threads) hg_b_set_min_ctas(b, c.ctas_per_sm);
  g.src = hg_b_param_tmap(b, "src");
  if (c.store_threads) {
    g.dst_ptr = hg_b_param(b, HG_T_I64, "dst");
    g.nboxes = hg_b_param(b, HG_T_I32, "boxes");
    g.nrows = hg_b_param(b, HG_T_I32, "rows");
  } else {
    g.dst = hg_b_param_tmap(b, "dst");
    g.nboxes = hg_b_param(b, HG_T_I32, "boxes");
  }
  /* The ring: S box buffers and a full barrier each; empty barriers only with split roles
   * (one arrival: the storer's) or store threads (one per store thread) (one thread that
   * loads and stores knows from its bulk groups when a stage is free). */
  const hg_pipe_spec_t ps = {.stages = S,
                             .full_arrivals = 1,
                             .empty_arrivals =
                                 c.store_threads ? COPY_THREADS * c.store_warps : c.split_roles};
  hg_status_t st = hg_smem_ring_make(b, box_bytes, 128, S, &g.ring);
  if (hg_is_ok(&st)) st = hg_pipe_make(b, &ps, &g.pipe);
  if (!hg_is_ok(&st)) {
    hg_builder_destroy(b);
    return st;
  }
  g.zero = hg_b_i32(b, 0);
  g.rows = hg_b_i32(b, c.box_rows);
  g.tx = hg_b_i32(b, (int32_t)box_bytes);
  if (c.store_threads)
    st = copy_store_threads(&g);
  else if (c.split_roles)
    st = copy_split_roles(&g);
  else
    copy_one_thread(&g);
  return copy_finish(b, be, k, t0, st, "streaming copy");
}

/* ---------------------------------------------------------------- the benchmark */

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct bench_state {
  hg_rt_t *rt;
  hg_devptr_t src, dst;
  hg_module_t *copy_mod, *fill_mod;
  hg_function_t *copy_fn, *fill_fn;
  hg_event_t ev[4];
  hg_stream_t stream;
  double *times;
  uint8_t *host_a, *host_b;
} bench_state_t;

static void bench_free(bench_state_t *b) {
  for (int i = 0; i < 4; i++)
    if (b->ev[i]) hg_rt_event_destroy(b->rt, b->ev[i]);
  if (b->stream) hg_rt_stream_destroy(b->rt, b->stream);
  if (b->copy_mod) hg_rt_module_unload(b->rt, b->copy_mod);
  if (b->fill_mod) hg_rt_module_unload(b->rt, b->fill_mod);
  hg_rt_free(b->rt, b->src);
  hg_rt_free(b->rt, b->dst);
  free(b->times);
  free(b->host_a);
  free(b->host_b);
}

/* Compare dst with src in 64 MiB pieces; the first difference is described (with its box
 * when box_rows > 0; the ldg copy has none). */
static hg_status_t verify(bench_state_t *b, uint64_t bytes, int box_rows, bool *ok) {
  const size_t chunk = (size_t)64 << 20;
  *ok = false;
  if (!b->host_a) b->host_a = malloc(chunk);
  if (!b->host_b) b->host_b = malloc(chunk);
  if (!b->host_a || !b->host_b)
    return hg_error(HG_ERR_NOMEM, "cannot allocate 2 x 64 MiB of host memory to verify the copy");
  for (uint64_t at = 0; at < bytes; at += chunk) {
    const size_t n = bytes - at < chunk ? (size_t)(bytes - at) : chunk;
    HG_TRY(hg_rt_download(b->rt, b->host_a, b->src + at, n));
    HG_TRY(hg_rt_download(b->rt, b->host_b, b->dst + at, n));
    if (memcmp(b->host_a, b->host_b, n) != 0) {
      size_t i = 0;
      while (b->host_a[i] == b->host_b[i]) i++;
      uint64_t bad = 0;
      for (size_t k = i; k < n; k++) bad += b->host_a[k] != b->host_b[k];
      const uint64_t off = at + i;
      if (box_rows == 0)
        return hg_error(HG_ERR_MISMATCH,
                        "the ldg copy is not exact: byte %" PRIu64 " (row %" PRIu64
                        ") is 0x%02X, the source has 0x%02X (0x5A is the destination's poison); "
                        "%" PRIu64 " bytes differ in this 64 MiB piece",
                        off, off / COPY_ROW_BYTES, b->host_b[i], b->host_a[i], bad);
      return hg_error(HG_ERR_MISMATCH,
                      "the TMA copy is not exact: byte %" PRIu64 " (row %" PRIu64 ", box %" PRIu64
                      " of %d rows) is 0x%02X, the source has 0x%02X (0x5A is the destination's "
                      "poison); %" PRIu64 " bytes differ in this 64 MiB piece",
                      off, off / COPY_ROW_BYTES, off / COPY_ROW_BYTES / (uint64_t)box_rows,
                      box_rows, b->host_b[i], b->host_a[i], bad);
    }
  }
  *ok = true;
  return hg_ok();
}

static hg_status_t bench_body(bench_state_t *st, const hg_copy_bench_t *in, hg_backend_t be,
                              hg_copy_bench_result_t *out) {
  hg_rt_t *rt = st->rt;
  const uint64_t bytes = in->bytes;
  const hg_device_info_t *dev = hg_rt_device(rt);
  if (dev) snprintf(out->device, sizeof out->device, "%s", dev->name);
  const int sms = dev && dev->sm_count > 0 ? dev->sm_count : 132;
  const int warmup = in->warmup > 0 ? in->warmup : 3;
  const int runs = in->runs > 0 ? in->runs : 25;
  hg_copy_config_t cfg = out->config;

  HG_TRY(hg_rt_stream_create(rt, &st->stream));
  for (int i = 0; i < 4; i++) HG_TRY(hg_rt_event_create(rt, &st->ev[i]));
  HG_TRY(hg_rt_alloc(rt, (size_t)bytes, &st->src));
  HG_TRY(hg_rt_alloc(rt, (size_t)bytes, &st->dst));

  /* Fresh random source data (a new seed per run unless one is given), poisoned output. */
  hg_kernel_t fill;
  HG_TRY(hg_gen_fill_random(HG_U32, be, &fill));
  hg_status_t s = hg_rt_module_load(rt, fill.ptx.data, &st->fill_mod, NULL);
  if (hg_is_ok(&s)) s = hg_rt_function(rt, st->fill_mod, fill.name, fill.smem_bytes, &st->fill_fn);
  hg_kernel_free(&fill);
  HG_TRY(s);
  {
    uint64_t count = bytes / 4;
    uint64_t seed = in->seed ? in->seed : (uint64_t)(hg_now_ms() * 1e3) * 0x9E3779B97F4A7C15ull;
    hg_devptr_t ptr = st->src;
    void *args[] = {&ptr, &count, &seed};
    hg_launch_t l;
    memset(&l, 0, sizeof l);
    l.grid[0] = (uint32_t)sms * 8;
    l.grid[1] = l.grid[2] = 1;
    l.block[0] = 256;
    l.block[1] = l.block[2] = 1;
    l.stream = st->stream;
    HG_TRY(hg_rt_launch(rt, st->fill_fn, &l, args));
  }
  HG_TRY(hg_rt_memset8(rt, st->dst, 0x5A, (size_t)bytes, st->stream));
  HG_TRY(hg_rt_sync(rt, st->stream));

  /* The path from spec to launched kernel, timed like hg_tma_run's. */
  hg_tma_timing_t *t = &out->path;
  const double t0 = hg_now_ms();
  hg_kernel_t k;
  HG_TRY(hg_gen_copy(&cfg, be, &k));
  const double t1 = hg_now_ms();
  t->gen_ms = t1 - t0;
  s = hg_rt_module_load(rt, k.ptx.data, &st->copy_mod, &t->jit);
  const double t2 = hg_now_ms();
  t->jit_ms = t2 - t1;
  if (hg_is_ok(&s)) s = hg_rt_function(rt, st->copy_mod, k.name, k.smem_bytes, &st->copy_fn);
  const double t3 = hg_now_ms();
  t->function_ms = t3 - t2;
  /* The TMA forms read through a source map; the stores go through a destination map
   * unless threads store (a pointer); the ldg copy takes both pointers. */
  hg_tensormap_t map_src, map_dst;
  memset(&map_src, 0, sizeof map_src);
  memset(&map_dst, 0, sizeof map_dst);
  if (!cfg.ldg) {
    hg_tensormap_params_t mp;
    copy_map(&cfg, bytes, &mp);
    if (hg_is_ok(&s)) s = hg_rt_tensormap_encode(rt, &mp, st->src, &map_src);
    if (hg_is_ok(&s) && !cfg.store_threads) s = hg_rt_tensormap_encode(rt, &mp, st->dst, &map_dst);
  }
  const double t4 = hg_now_ms();
  t->encode_ms = t4 - t3;
  const uint64_t rows = bytes / COPY_ROW_BYTES;
  /* the grid's units of work: boxes, or the ldg copy's tiles of threads x unroll vectors */
  int32_t nboxes = 0, nrows = (int32_t)rows;
  int64_t units;
  if (cfg.ldg) {
    const uint64_t tile = (uint64_t)cfg.ldg_threads * (uint64_t)cfg.unroll;
    units = (int64_t)((bytes / 16 + tile - 1) / tile);
  } else {
    nboxes = (int32_t)((rows + (uint64_t)cfg.box_rows - 1) / (uint64_t)cfg.box_rows);
    units = nboxes;
  }
  hg_devptr_t src = st->src, dst = st->dst;
  uint64_t nbytes = bytes;
  void *tma_args[] = {&map_src, &map_dst, &nboxes};
  void *store_args[] = {&map_src, &dst, &nboxes, &nrows};
  void *ldg_args[] = {&src, &dst, &nbytes};
  void **args = cfg.ldg ? ldg_args : cfg.store_threads ? store_args : tma_args;
  hg_launch_t l;
  memset(&l, 0, sizeof l);
  uint32_t ctas = (uint32_t)sms * (uint32_t)cfg.ctas_per_sm;
  if ((int64_t)ctas > units) ctas = (uint32_t)units;
  l.grid[0] = ctas;
  l.grid[1] = l.grid[2] = 1;
  l.block[0] = k.threads;
  l.block[1] = l.block[2] = 1;
  l.smem_bytes = k.smem_bytes;
  l.stream = st->stream;
  out->ctas = ctas;
  out->threads = k.threads;
  out->smem_bytes = k.smem_bytes;
  if (hg_is_ok(&s)) s = hg_rt_launch(rt, st->copy_fn, &l, args);
  const double t5 = hg_now_ms();
  t->launch_ms = t5 - t4;
  t->to_launch_ms = t5 - t0;
  if (hg_is_ok(&s)) s = hg_rt_sync(rt, st->stream);
  t->sync_ms = hg_now_ms() - t5;
  t->to_finish_ms = hg_now_ms() - t0;
  if (!hg_is_ok(&s)) {
    hg_status_t w = hg_status_wrap(s, "streaming copy kernel %s: ", k.name);
    hg_kernel_free(&k);
    return w;
  }
  hg_kernel_free(&k);

  /* Correct first: the copy's output is the input, byte for byte. */
  HG_TRY(verify(st, bytes, cfg.box_rows, &out->verified));

  /* Then the time: warm-up, then runs of (copy, d2d) pairs, interleaved so that clock and
   * thermal drift hit both sides alike; each timed by events around the one operation. */
  for (int i = 0; i < warmup; i++) {
    HG_TRY(hg_rt_launch(rt, st->copy_fn, &l, args));
    HG_TRY(hg_rt_copy_d2d(rt, st->dst, st->src, (size_t)bytes, st->stream));
  }
  HG_TRY(hg_rt_sync(rt, st->stream));
  st->times = malloc(sizeof(double) * 2 * (size_t)runs);
  if (!st->times) return hg_error(HG_ERR_NOMEM, "cannot allocate the timing table");
  double *tc = st->times, *td = st->times + runs;
  for (int i = 0; i < runs; i++) {
    float a = 0, d = 0;
    HG_TRY(hg_rt_event_record(rt, st->ev[0], st->stream));
    HG_TRY(hg_rt_launch(rt, st->copy_fn, &l, args));
    HG_TRY(hg_rt_event_record(rt, st->ev[1], st->stream));
    HG_TRY(hg_rt_event_record(rt, st->ev[2], st->stream));
    HG_TRY(hg_rt_copy_d2d(rt, st->dst, st->src, (size_t)bytes, st->stream));
    HG_TRY(hg_rt_event_record(rt, st->ev[3], st->stream));
    HG_TRY(hg_rt_sync(rt, st->stream));
    HG_TRY(hg_rt_event_elapsed_ms(rt, st->ev[0], st->ev[1], &a));
    HG_TRY(hg_rt_event_elapsed_ms(rt, st->ev[2], st->ev[3], &d));
    tc[i] = a;
    td[i] = d;
  }
  /* The data the timed copies moved is the same source: check the last one too. */
  HG_TRY(hg_rt_launch(rt, st->copy_fn, &l, args));
  HG_TRY(hg_rt_sync(rt, st->stream));
  HG_TRY(verify(st, bytes, cfg.box_rows, &out->verified));
  double lo_c = tc[0], hi_c = tc[0], lo_d = td[0], hi_d = td[0];
  for (int i = 0; i < runs; i++) {
    lo_c = tc[i] < lo_c ? tc[i] : lo_c;
    hi_c = tc[i] > hi_c ? tc[i] : hi_c;
    lo_d = td[i] < lo_d ? td[i] : lo_d;
    hi_d = td[i] > hi_d ? td[i] : hi_d;
  }
  out->copy_ms = median(tc, runs);
  out->d2d_ms = median(td, runs);
  out->copy_min_ms = lo_c;
  out->copy_max_ms = hi_c;
  out->d2d_min_ms = lo_d;
  out->d2d_max_ms = hi_d;
  /* read + write, counted the same way for both */
  out->copy_gbs = 2.0 * (double)bytes / (out->copy_ms * 1e-3) / 1e9;
  out->d2d_gbs = 2.0 * (double)bytes / (out->d2d_ms * 1e-3) / 1e9;
  out->ratio = out->copy_gbs / out->d2d_gbs;
  return hg_ok();
}

hg_status_t hg_copy_bench_validate(const hg_copy_bench_t *bench) {
  if (!bench) return hg_error(HG_ERR_INVALID, "no copy benchmark description given");
  hg_copy_config_t c = bench->config;
  HG_TRY(copy_config_normalize(&c));
  if (bench->bytes < COPY_ROW_BYTES || bench->bytes % COPY_ROW_BYTES != 0)
    return hg_error(HG_ERR_INVALID,
                    "the copy benchmark moves whole 1 KiB rows: %" PRIu64
                    " B is not a positive multiple of 1024",
                    bench->bytes);
  if (bench->bytes / COPY_ROW_BYTES > (uint64_t)INT32_MAX / 2)
    return hg_error(HG_ERR_INVALID, "%" PRIu64 " B is more rows than 32-bit TMA coordinates reach",
                    bench->bytes);
  if (bench->warmup < 0 || bench->runs < 0)
    return hg_error(HG_ERR_INVALID, "warm-up and run counts are >= 0 (0: the defaults)");
  return hg_ok();
}

hg_status_t hg_copy_bench_run(hg_rt_t *rt, const hg_copy_bench_t *bench, hg_backend_t be,
                              hg_copy_bench_result_t *out) {
  if (!out) return hg_error(HG_ERR_INVALID, "hg_copy_bench_run needs somewhere to put the result");
  memset(out, 0, sizeof *out);
  HG_TRY(hg_copy_bench_validate(bench));
  if (!rt) return hg_error(HG_ERR_NO_DRIVER, "no runtime: open the GPU with hg_rt_open first");
  out->bytes = bench->bytes;
  out->config = bench->config;
  HG_TRY(copy_config_normalize(&out->config));
  bench_state_t st;
  memset(&st, 0, sizeof st);
  st.rt = rt;
  hg_status_t s = bench_body(&st, bench, be, out);
  bench_free(&st);
  return s;
}
