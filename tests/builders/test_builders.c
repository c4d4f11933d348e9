/* The kernel-builders layer (builders.h) without a GPU: every refusal's sentence, and the
 * address arithmetic the copies emit, interpreted on the CPU (tests/support/ir_eval.c) for
 * every thread of the copy and compared with the layouts they must implement:
 *   - cp.async TiledCopy: every element of the tile lands exactly once where the stage layout
 *     puts it, read from the right global element or zero-filled outside the tensor, for
 *     16/8/4-byte chunks and 1/2-byte register copies, K-major and MN-major tiles, swizzles,
 *     ragged edges, odd leading dimensions and ones past 2^31 elements, 64 to 256 threads;
 *   - ldmatrix TiledCopy: each lane addresses the row of the 8x8 matrix the MMA fragment
 *     needs (tests/model/test_ldmatrix_chain.c proves what ldmatrix then returns). */
#include <stdlib.h>
#include <string.h>

#include "hg_test.h"
#include "hopgen/builders.h"
#include "hopgen/kernels.h"
#include "support/ir_eval.h"

/* ---------------------------------------------------------------- refusals */

static void test_refusals(void) {
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("k", &b));
  hg_roles_t r;
  hg_roles_spec_t rs = {.producers = 1, .consumers = 0};
  CHECK_ERR(hg_roles_make(b, &rs, &r), HG_ERR_INVALID, "0 consumer warpgroups");
  rs = (hg_roles_spec_t){.producers = 2, .consumers = 1};
  CHECK_ERR(hg_roles_make(b, &rs, &r), HG_ERR_INVALID, "2 producer warpgroups");
  rs = (hg_roles_spec_t){.producers = 1, .consumers = 2, .producer_regs = 20};
  CHECK_ERR(hg_roles_make(b, &rs, &r), HG_ERR_INVALID, "24..256 in steps of 8");
  rs = (hg_roles_spec_t){.producers = 1, .consumers = 2, .producer_regs = 64, .consumer_regs = 240};
  CHECK_ERR(hg_roles_make(b, &rs, &r), HG_ERR_INVALID, "exceed the SM's 65536");
  hg_cluster2d_t cl;
  CHECK_ERR(hg_cluster2d_make(b, 4, 8, &cl), HG_ERR_INVALID, "at most 16 CTAs");
  CHECK_ERR(hg_cluster2d_make(b, 0, 1, &cl), HG_ERR_INVALID, "cluster 0x1");
  hg_smem_ring_t ring;
  CHECK_ERR(hg_smem_ring_make(b, 1024, 24, 4, &ring), HG_ERR_INVALID, "power of two");
  CHECK_ERR(hg_smem_ring_make(b, 1024, 128, 0, &ring), HG_ERR_INVALID, "ring of 0 stages");
  hg_pipe_t pipe;
  hg_pipe_spec_t ps = {.stages = 4, .full_arrivals = 0, .empty_arrivals = 4};
  CHECK_ERR(hg_pipe_make(b, &ps, &pipe), HG_ERR_INVALID, "full 0");
  ps = (hg_pipe_spec_t){.stages = 40, .full_arrivals = 1};
  CHECK_ERR(hg_pipe_make(b, &ps, &pipe), HG_ERR_INVALID, "pipeline of 40 stages");
  hg_sched_spec_t ss = {.kind = HG_SCHED_PERSISTENT,
                        .tile_m = 128,
                        .tile_n = 128,
                        .cluster_m = 1,
                        .cluster_n = 1,
                        .raster_group = 0};
  CHECK_OK(hg_cluster2d_make(b, 1, 1, &cl));
  hg_sched_t sched;
  hg_val_t one = hg_b_i32(b, 1);
  CHECK_ERR(hg_sched_make(b, &ss, &cl, one, one, one, one, &sched), HG_ERR_INVALID,
            "raster group = 0");
  ss.raster_group = 8;
  ss.cluster_m = 2;
  CHECK_ERR(hg_sched_make(b, &ss, &cl, one, one, one, one, &sched), HG_ERR_INVALID,
            "not the kernel's 1x1");
  ss.cluster_m = 1;
  CHECK_EQ(hg_sched_units(&ss, 1000, 300, 3), 8 * 3 * 3);
  CHECK_OK(hg_builder_status(b));
  /* Emission-time misuse is sticky, with the sentence. */
  ps = (hg_pipe_spec_t){.stages = 2, .full_arrivals = 1, .empty_arrivals = 0};
  CHECK_OK(hg_pipe_make(b, &ps, &pipe));
  hg_pipe_release(b, &pipe, one, NULL, one);
  CHECK_ERR(hg_builder_status(b), HG_ERR_INVALID, "no empty barriers");
  hg_builder_destroy(b);

  CHECK_OK(hg_builder_create("k", &b));
  hg_tma_tensor_t t = {
      .dtype = HG_BF16, .rank = 2, .shape = {256, 256}, .stride = {256, 1}, .base_align_bytes = 16};
  const int tile[2] = {64, 64};
  hg_composed_t smem;
  CHECK_OK(hg_tma_smem_layout(&t, tile, HG_SWIZZLE_128B, &smem));
  static hg_tma_plan_t store, mc;
  hg_tma_options_t o = hg_tma_options_default(HG_TMA_STORE);
  CHECK_OK(hg_tma_plan_make(&t, &smem, &o, &store));
  hg_val_t map = hg_b_param_tmap(b, "m");
  hg_val_t org[2] = {hg_b_i32(b, 0), hg_b_i32(b, 0)};
  hg_tma_copy_load(b, &store, map, hg_b_i32(b, 0), hg_b_i32(b, 0), org, HG_NONE, HG_NONE, HG_NONE);
  CHECK_ERR(hg_builder_status(b), HG_ERR_INVALID, "hg_tma_copy_load: the plan is a store plan");
  hg_builder_destroy(b);
  CHECK_OK(hg_builder_create("k", &b));
  map = hg_b_param_tmap(b, "m");
  org[0] = org[1] = hg_b_i32(b, 0);
  o = hg_tma_options_default(HG_TMA_LOAD);
  o.cluster = 2;
  CHECK_OK(hg_tma_plan_make(&t, &smem, &o, &mc));
  hg_tma_copy_load(b, &mc, map, hg_b_i32(b, 0), hg_b_i32(b, 0), org, HG_NONE, HG_NONE, HG_NONE);
  CHECK_ERR(hg_builder_status(b), HG_ERR_INVALID, "needs the CTA's member index");
  hg_builder_destroy(b);

  /* cp.async copies, MMA builders, epilogues. */
  hg_cp_async_copy_t cp;
  hg_cp_async_spec_t cs = {
      .dtype = HG_BF16, .rows = 64, .cols = 64, .smem = smem, .vec_bytes = 12, .threads = 128};
  CHECK_ERR(hg_cp_async_copy_make(&cs, &cp), HG_ERR_INVALID, "a chunk of 12 bytes");
  cs.vec_bytes = 16;
  cs.cols = 60;
  CHECK_ERR(hg_cp_async_copy_make(&cs, &cp), HG_ERR_INVALID, "not a multiple of the 8-element");
  cs.cols = 64;
  cs.transposed = true; /* rows of the swizzled K-major layout are not MN-contiguous */
  CHECK_ERR(hg_cp_async_copy_make(&cs, &cp), HG_ERR_INVALID, "is not contiguous in the stage");
  cs.transposed = false;
  cs.dtype = HG_F64;
  CHECK_ERR(hg_cp_async_copy_make(&cs, &cp), HG_ERR_UNSUPPORTED, "1, 2 or 4 bytes");
  hg_tiled_mma_spec_t ms = {.a = HG_E4M3,
                            .b = HG_E4M3,
                            .acc = HG_F32,
                            .tile_m = 128,
                            .tile_n = 128,
                            .tile_k = 128,
                            .wg_m = 2,
                            .wg_n = 1,
                            .auto_swizzle = true};
  static hg_mma_builder_t mb;
  CHECK_ERR(hg_mma_builder_make(HG_MMA_WGMMA_RS, &ms, &mb), HG_ERR_UNSUPPORTED,
            "wgmma-rs takes bf16 or f16 operands");
  CHECK_ERR(hg_mma_builder_make(HG_MMA_SYNC, &ms, &mb), HG_ERR_UNSUPPORTED,
            "mma-sync takes bf16 or f16");
  CHECK_OK(hg_mma_builder_make(HG_MMA_WGMMA_SS, &ms, &mb));
  CHECK_EQ(mb.acc_count, 64); /* 64 rows x 128 columns per consumer / 128 threads */
  CHECK(mb.async);
  ms.a = ms.b = HG_BF16;
  ms.tile_k = 64;
  ms.acc = HG_F16;
  CHECK_ERR(hg_mma_builder_make(HG_MMA_SYNC, &ms, &mb), HG_ERR_UNSUPPORTED, "f32 here, not f16");
  ms.acc = HG_F32;
  CHECK_OK(hg_mma_builder_make(HG_MMA_SYNC, &ms, &mb));
  CHECK(!mb.async);
  CHECK_STR(hg_mma_kind_name(mb.kind), "mma-sync");
  hg_acc_map_t am;
  CHECK_ERR(hg_acc_map_make(&mb.tm, 256, &am), HG_ERR_INVALID, "256 rows in a tile of 128");
  CHECK_OK(hg_acc_map_make(&mb.tm, 64, &am));
  /* wgmma's (and mma.sync's) fragment: thread 0 holds (0,0), (0,1), (8,0), (8,1), (0,8)... */
  CHECK_EQ(hg_acc_map_at(&am, 0, 0), 0);
  CHECK_EQ(hg_acc_map_at(&am, 0, 1), 1);
  CHECK_EQ(hg_acc_map_at(&am, 8, 0), 2);
  CHECK_EQ(hg_acc_map_at(&am, 8, 1), 3);
  CHECK_EQ(hg_acc_map_at(&am, 0, 8), 4);
  CHECK_EQ(hg_acc_map_at(&am, 1, 0), -1);
  CHECK_EQ(hg_acc_map_at(&am, -1, 0), -1);
  CHECK_OK(hg_builder_create("k", &b));
  hg_epilogue_t e = {.d_type = HG_U8};
  hg_val_t acc[64];
  for (int i = 0; i < 64; i++) acc[i] = hg_b_var(b, HG_T_F32, hg_b_f32(b, 0));
  CHECK_OK(hg_roles_make(b, &(hg_roles_spec_t){.producers = 1, .consumers = 1}, &r));
  CHECK_ERR(hg_epilogue_emit(b, &e, acc, &am, one, one, one, one, one, &r), HG_ERR_UNSUPPORTED,
            "bf16, f16, f32, e4m3 or e5m2, not u8");
  /* an fp8 D through TMA needs D's plan like any other */
  e.d_type = HG_E4M3;
  e.tma = true;
  CHECK_ERR(hg_epilogue_emit(b, &e, acc, &am, one, one, one, one, one, &r), HG_ERR_INVALID,
            "needs D's plan");
  /* an amax needs its running value, made by hg_epilogue_begin */
  e.tma = false;
  e.amax_ptr = hg_b_i64(b, 0);
  CHECK_ERR(hg_epilogue_emit(b, &e, acc, &am, one, one, one, one, one, &r), HG_ERR_INVALID,
            "hg_epilogue_begin");
  e.amax_ptr = HG_NONE;
  /* an aux matrix of fp8 is refused with its step's index */
  e.nsteps = 1;
  e.steps[0] = (hg_epi_step_t){.kind = HG_EPI_AUX, .dtype = HG_E5M2};
  CHECK_ERR(hg_epilogue_emit(b, &e, acc, &am, one, one, one, one, one, &r), HG_ERR_UNSUPPORTED,
            "step 0: an aux matrix of e5m2");
  e.nsteps = 0;
  e.d_type = HG_BF16;
  e.tma = true;
  CHECK_ERR(hg_epilogue_emit(b, &e, acc, &am, one, one, one, one, one, &r), HG_ERR_INVALID,
            "needs D's plan");
  /* the buffers' swizzle is the plan's: one left zero scrambles every sub-tile */
  hg_tma_plan_t plan;
  memset(&plan, 0, sizeof plan);
  plan.smem.sw = (hg_swizzle_t){3, 3, 3};
  e.plan_d = &plan;
  CHECK_ERR(hg_epilogue_emit(b, &e, acc, &am, one, one, one, one, one, &r), HG_ERR_INVALID,
            "under Sw<0,0,0> and its plan stores them from Sw<3,3,3>");
  hg_acc_map_free(&am);
  hg_builder_destroy(b);
}

/* The pieces a generator composes (split-K's halves, the producer, a second entry of a
 * module): their refusals, and what they derive. */
static void test_orchestration_pieces(void) {
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("k", &b));
  hg_splitk_t sk;
  hg_splitk_spec_t s = {.splits = 1,
                        .acc_count = 64,
                        .consumers = 2,
                        .tile_m = 128,
                        .tile_n = 128,
                        .tile_k = 64,
                        .cluster_m = 1,
                        .cluster_n = 1,
                        .workspace = hg_b_param(b, HG_T_I64, "workspace")};
  CHECK_ERR(hg_splitk_make(b, &s, &sk), HG_ERR_INVALID, "the reduction takes 2..64");
  s.splits = 4;
  s.acc_count = 62;
  CHECK_ERR(hg_splitk_make(b, &s, &sk), HG_ERR_INVALID, "62 per thread is not a multiple of 4");
  s.acc_count = 64;
  s.consumers = 4;
  CHECK_ERR(hg_splitk_make(b, &s, &sk), HG_ERR_INVALID, "1..3 consumer warpgroups, not 4");
  s.consumers = 3; /* 128 rows do not split 3 ways */
  CHECK_ERR(hg_splitk_make(b, &s, &sk), HG_ERR_INVALID, "the consumers must divide");
  s.consumers = 2;
  CHECK_OK(hg_splitk_make(b, &s, &sk));
  CHECK_EQ(sk.threads, 256); /* cooperative: both consumers hold the tile */
  s.pingpong = true;
  CHECK_OK(hg_splitk_make(b, &s, &sk));
  CHECK_EQ(sk.threads, 128); /* ping-pong: each its own */
  /* the pass's CTAs per tile: 16 chunks one each; 32 in pairs; 60 in fours (15 CTAs) */
  CHECK_EQ(hg_splitk_reduce_groups(64), 16);
  CHECK_EQ(hg_splitk_reduce_groups(128), 16);
  CHECK_EQ(hg_splitk_reduce_groups(240), 15);
  /* a stage completes on one elected TMA arrival, or on 128 per kind of copy */
  const hg_cp_async_copy_t async = {.async = true}, regs = {.async = false};
  CHECK_EQ(hg_producer_full_arrivals(NULL, NULL), 1);
  CHECK_EQ(hg_producer_full_arrivals(&async, NULL), 128);
  CHECK_EQ(hg_producer_full_arrivals(&async, &async), 128);
  CHECK_EQ(hg_producer_full_arrivals(&regs, &async), 256);
  const hg_producer_t none = {.tile_k = 64};
  hg_producer_emit(b, &none);
  CHECK_ERR(hg_builder_status(b), HG_ERR_INVALID, "operand A has neither a TMA plan nor");
  hg_builder_destroy(b);

  /* a second entry appended to a module: from its `.visible .entry` on, or refused */
  hg_kernel_t k = {.name = "first"}, more = {.name = "second"};
  char no_entry[] = "//\n.version 8.0\n";
  more.ptx = (hg_text_t){no_entry, strlen(no_entry)};
  k.ptx.data = malloc(32);
  if (!k.ptx.data) {
    HG_FAIL("out of memory");
    return;
  }
  strcpy(k.ptx.data, "//\n.visible .entry first()\n");
  k.ptx.len = strlen(k.ptx.data);
  CHECK_ERR(hg_kernel_append_entry(&k, &more), HG_ERR_INVALID,
            "kernel second's PTX has no .visible .entry to append to first");
  char two[] = "//\n.version 8.0\n.visible .entry second()\n";
  more.ptx = (hg_text_t){two, strlen(two)};
  CHECK_OK(hg_kernel_append_entry(&k, &more));
  CHECK_STR(k.ptx.data, "//\n.visible .entry first()\n\n.visible .entry second()\n");
  CHECK_EQ(k.ptx.len, strlen(k.ptx.data));
  hg_text_free(&k.ptx);
}

/* ---------------------------------------------------------------- cp.async on the CPU */

/* Global memory: element index i of the view at byte gbase + i * e holds mark(i), a 30-bit
 * hash of i plus 1 (0 means "zero-filled"), small enough to pass through the 32-bit register
 * of a register copy, and unlike i modulo 2^32 for an address 2^32 elements off. Shared
 * memory: one slot per element offset of the stage. */
static int64_t mark(int64_t i) {
  uint64_t z = (uint64_t)i + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (int64_t)((z ^ (z >> 31)) & 0x3fffffff) + 1;
}

typedef struct copy_sim {
  int e;
  /* the window copy (16-byte chunks from aligned blocks): bytes move, not elements, so an
   * element's mark is made of byte marks (wmark) and loads and stores are 32-bit words */
  bool window;
  int64_t gbase, gbytes; /* the view's bytes [gbase, gbase + gbytes) */
  /* past its last element (row rows - 1's end): no window load reaches beyond it (what the
   * allocation holds past the view's last byte is not known: compute-sanitizer memcheck
   * reports a read there) */
  int64_t vend;
  int64_t *smem; /* value per stage element, -1: never written */
  int64_t slots;
  /* a staged window copy's staging slot, at shared byte STAGING on: its bytes, poisoned
   * (0x1A5) before each thread runs, so a thread that read another's blocks would fail */
  int16_t *stg;
  int64_t stg_bytes;
  int writes_twice;
  char err[160];
} copy_sim_t;

/* The window copy's marks: byte o of the view (o may lie outside it) holds a hash of o; an
 * element, the little-endian value of its bytes. */
static int64_t byte_mark(int64_t o) {
  return (int64_t)((uint64_t)mark(o) >> 7 & 0xff);
}

static int64_t wmark(int e, int64_t i) {
  int64_t v = 0;
  for (int k = 0; k < e; k++) v |= byte_mark(i * e + k) << (8 * k);
  return v;
}

static void put(copy_sim_t *x, int64_t saddr, int64_t value) {
  if (saddr % x->e || saddr < 0 || saddr / x->e >= x->slots) {
    if (!x->err[0])
      snprintf(x->err, sizeof x->err, "stage byte %lld outside or misaligned", (long long)saddr);
    return;
  }
  if (x->smem[saddr / x->e] != -1) x->writes_twice++;
  x->smem[saddr / x->e] = value;
}

static int64_t elem_at(copy_sim_t *x, int64_t gaddr) {
  const int64_t off = gaddr - x->gbase;
  if (off < 0 || off >= x->gbytes || off % x->e) {
    if (!x->err[0])
      snprintf(x->err, sizeof x->err, "global byte %lld read outside the view", (long long)off);
    return 0;
  }
  return mark(off / x->e);
}

#define STAGING (INT64_C(1) << 24)

static void sim_cp_async(void *ctx, int bytes, int64_t dst, int64_t src, int64_t src_bytes) {
  copy_sim_t *x = ctx;
  if (x->stg) {
    /* a staged block: 16 aligned bytes of a block holding a view byte, read up to the view's
     * end (src_bytes; zeros after), or zeros */
    const int64_t at = dst - STAGING, blk = src - x->gbase;
    if (bytes != 16 || at < 0 || at + 16 > x->stg_bytes || at % 16 || src % 16 ||
        (src_bytes && (blk + 16 <= 0 || blk >= x->gbytes)) || src_bytes < 0 || src_bytes > 16 ||
        (src_bytes && blk + src_bytes > x->vend) ||
        (src_bytes && src_bytes < 16 && blk + 16 <= x->vend)) {
      if (!x->err[0])
        snprintf(x->err, sizeof x->err,
                 "a staged cp.async of %d bytes (%lld of them) to %lld from "
                 "view byte %lld",
                 bytes, (long long)src_bytes, (long long)dst, (long long)blk);
      return;
    }
    for (int k = 0; k < 16; k++) x->stg[at + k] = k < src_bytes ? (int16_t)byte_mark(blk + k) : 0;
    return;
  }
  if (dst % bytes || (src - x->gbase) % bytes)
    if (!x->err[0]) snprintf(x->err, sizeof x->err, "a %d-byte cp.async is misaligned", bytes);
  for (int k = 0; k < bytes / x->e; k++)
    put(x, dst + (int64_t)k * x->e, k * x->e < src_bytes ? elem_at(x, src + (int64_t)k * x->e) : 0);
}

static int64_t sim_load(void *ctx, hg_space_t space, int bits, int64_t addr) {
  copy_sim_t *x = ctx;
  if (x->stg && space == HG_SHARED) {
    const int64_t at = addr - STAGING;
    int64_t v = 0;
    for (int k = 0; k < 4 && at >= 0 && at + 4 <= x->stg_bytes && bits == 32 && at % 4 == 0; k++) {
      if (x->stg[at + k] > 0xff) {
        if (!x->err[0])
          snprintf(x->err, sizeof x->err,
                   "staging byte %lld read before a copy of this thread "
                   "wrote it",
                   (long long)(at + k));
        return 0;
      }
      v |= (int64_t)x->stg[at + k] << (8 * k);
    }
    if ((at < 0 || at + 4 > x->stg_bytes || bits != 32 || at % 4) && !x->err[0])
      snprintf(x->err, sizeof x->err, "a staging load at %lld (%d bits)", (long long)at, bits);
    return v;
  }
  if (x->window && bits == 8) {
    /* a byte of a block that runs past the view's end, before that end */
    const int64_t o = addr - x->gbase;
    if (space != HG_GLOBAL || o < -(x->gbase & 15) || o >= x->vend) {
      if (!x->err[0])
        snprintf(x->err, sizeof x->err, "a window byte load at view byte %lld", (long long)o);
      return 0;
    }
    return byte_mark(o);
  }
  if (x->window) {
    /* a word of an aligned 16-byte block that holds a byte of the view and ends by its end */
    const int64_t blk = (addr - (addr & 15)) - x->gbase;
    if (space != HG_GLOBAL || bits != 32 || addr % 4 || blk + 16 <= 0 || blk >= x->gbytes ||
        blk + 16 > x->vend) {
      if (!x->err[0])
        snprintf(x->err, sizeof x->err, "a window load at view byte %lld (%d bits)",
                 (long long)(addr - x->gbase), bits);
      return 0;
    }
    int64_t v = 0;
    for (int k = 0; k < 4; k++) v |= byte_mark(addr - x->gbase + k) << (8 * k);
    return v;
  }
  if (space != HG_GLOBAL || bits != 8 * x->e) {
    if (!x->err[0]) snprintf(x->err, sizeof x->err, "unexpected load");
    return 0;
  }
  return elem_at(x, addr);
}

static void sim_store(void *ctx, hg_space_t space, int bits, int64_t addr, int64_t value) {
  copy_sim_t *x = ctx;
  if (x->window && space == HG_SHARED && bits == 32 && addr % 4 == 0) {
    for (int k = 0; k < 4 / x->e; k++)
      put(x, addr + k * x->e, (int64_t)((uint64_t)value >> (8 * k * x->e)) & ((1 << 8 * x->e) - 1));
    return;
  }
  if (space != HG_SHARED || bits != 8 * x->e) {
    if (!x->err[0]) snprintf(x->err, sizeof x->err, "unexpected store");
    return;
  }
  put(x, addr, value);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static int64_t rnd(int64_t n) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (int64_t)(rng_state % (uint64_t)n);
}

static int staged_copies;

/* One random copy: a GEMM operand's stage (hg_gmma_operand_make), a view of its tensor with
 * a random pitch whose alignment picks the chunk, a random origin with ragged extents. */
static int one_copy(int trial, bool registers) {
  static const hg_dtype_t types[] = {HG_BF16, HG_E4M3, HG_F32};
  const hg_dtype_t t = types[rnd(3)];
  const int e = hg_dtype_bytes(t);
  const bool mn_major = e == 2 && rnd(2); /* GMMA takes MN-major 16-bit operands only */
  const int k_tile = (e == 1 ? 128 : e == 2 ? 64 : 32) >> rnd(2);
  const int mn_tile = 64 << rnd(2);
  static const hg_swizzle_mode_t sws[] = {HG_SWIZZLE_128B, HG_SWIZZLE_64B, HG_SWIZZLE_32B,
                                          HG_SWIZZLE_NONE};
  hg_gmma_operand_t op;
  hg_status_t s = hg_error(HG_ERR_INVALID, "no swizzle fits");
  for (int i = (int)rnd(4); i < 4 && !hg_is_ok(&s); i++)
    s = hg_gmma_operand_make(t, mn_major ? HG_MAJOR_MN : HG_MAJOR_K, sws[i], mn_tile, k_tile, 64,
                             &op);
  if (!hg_is_ok(&s)) return 0; /* not a stage GMMA has: nothing to copy into */
  const int rows = mn_major ? k_tile : mn_tile, cols = mn_major ? mn_tile : k_tile;
  /* the pitch's alignment (a multiple of the chunk) and the chunk */
  const int64_t cols_ext = 1 + rnd(cols * 3), rows_ext = 1 + rnd(rows * 3);
  int64_t ld = cols_ext + rnd(9);
  static const int vecs[] = {16, 8, 4};
  int vec = vecs[rnd(3)];
  if (rnd(4) == 0 || registers) vec = e;
  if (vec < e) vec = e;
  /* now and then a pitch past 2^31 elements: the row offset needs 64 bits */
  if (rnd(6) == 0) ld += INT64_C(1) << 31;
  ld = (ld * e + vec - 1) / vec * vec / e; /* pitch a multiple of the chunk */
  /* 128 threads (a producer warpgroup) mostly; others split the chunks unevenly, so that a
   * thread's chunks do not share a column and the last round is partial */
  static const int thread_counts[] = {128, 128, 96, 64, 160, 256};
  const int threads = thread_counts[rnd(6)];
  hg_cp_async_spec_t cs = {.dtype = t,
                           .rows = rows,
                           .cols = cols,
                           .smem = op.layout,
                           .transposed = mn_major,
                           .vec_bytes = vec,
                           .threads = threads,
                           .batch = (int)rnd(10), /* window chunks per round: 0 (2) .. 9 */
                           .staged = registers && rnd(2)};
  hg_cp_async_copy_t cp;
  s = hg_cp_async_copy_make(&cs, &cp);
  if (!hg_is_ok(&s)) {
    HG_FAIL("trial %d: %s", trial, s.msg);
    return 0;
  }
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("copy", &b));
  hg_val_t thread = hg_b_param(b, HG_T_I32, "thread");
  hg_val_t gbase = hg_b_param(b, HG_T_I64, "gbase");
  hg_val_t ldv = hg_b_param(b, HG_T_I64, "ld");
  hg_val_t r0 = hg_b_param(b, HG_T_I32, "row0"), c0 = hg_b_param(b, HG_T_I32, "col0");
  hg_val_t re = hg_b_param(b, HG_T_I32, "rows"), ce = hg_b_param(b, HG_T_I32, "cols");
  if (cp.staged) {
    CHECK(cp.staging_bytes == hg_cp_async_staging_bytes(rows, cols * e, threads));
    hg_cp_async_stage_issue(b, &cp, hg_b_i32(b, STAGING), gbase, ldv, r0, c0, re, ce, thread);
    hg_cp_async_stage_shift(b, &cp, hg_b_i32(b, STAGING), hg_b_i32(b, 0), gbase, ldv, r0, c0, re,
                            ce, thread);
  } else {
    hg_cp_async_copy_issue(b, &cp, hg_b_i32(b, 0), gbase, ldv, r0, c0, re, ce, thread);
  }
  /* a tile somewhere in the view, maybe hanging over its ragged far edges */
  const int64_t row0 = rnd(rows_ext) / rows * rows, col0 = rnd(cols_ext) / cols * cols;
  /* the window copy takes any base: now and then one a few elements past 16 bytes */
  copy_sim_t x = {.e = e,
                  .window = cp.window,
                  .gbase = (1 << 20) + (cp.window ? e * rnd(16 / e) : 0),
                  .gbytes = (rows_ext * ld) * e,
                  .vend = ((rows_ext - 1) * ld + cols_ext) * e};
  x.slots = op.stage_bytes / e;
  x.smem = malloc(sizeof(int64_t) * (size_t)x.slots);
  for (int64_t i = 0; i < x.slots; i++) x.smem[i] = -1;
  ir_eval_hooks_t h = {.ctx = &x, .load = sim_load, .store = sim_store, .cp_async = sim_cp_async};
  if (cp.staged) {
    x.stg_bytes = cp.staging_bytes;
    x.stg = malloc(sizeof(int16_t) * (size_t)x.stg_bytes);
  }
  for (int th = 0; th < threads && !x.err[0]; th++) {
    const int64_t params[7] = {th, x.gbase, ld, row0, col0, rows_ext, cols_ext};
    for (int64_t i = 0; i < x.stg_bytes; i++) x.stg[i] = 0x1A5;
    ir_eval_t ev;
    s = ir_eval_run_hooks(b, params, NULL, &h, &ev);
    if (!hg_is_ok(&s)) {
      HG_FAIL("trial %d: %s", trial, s.msg);
      break;
    }
    ir_eval_free(&ev);
  }
  if (x.err[0]) HG_FAIL("trial %d: %s", trial, x.err);
  /* every tile element where the layout puts it, from the right place or zero */
  int64_t bad = 0, first_r = -1, first_c = -1, got = 0, want = 0;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) {
      const int64_t v[2] = {mn_major ? c : r, mn_major ? r : c};
      hg_tuple_t crd;
      int64_t off;
      hg_tuple_ints(&crd, 2, v);
      CHECK_OK(hg_composed_eval(&op.layout, &crd, &off));
      const bool in = row0 + r < rows_ext && col0 + c < cols_ext;
      const int64_t i = (row0 + r) * ld + col0 + c;
      const int64_t w = !in ? 0 : cp.window ? wmark(e, i) : mark(i);
      if (x.smem[off] != w && bad++ == 0) {
        first_r = r;
        first_c = c;
        got = x.smem[off];
        want = w;
      }
    }
  hg_test_checks++;
  if (bad || x.writes_twice)
    HG_FAIL("trial %d (%s %s-major tile %dx%d, %d-byte chunks, %d threads, ld %lld, origin "
            "(%lld,%lld) of %lldx%lld): %lld elements wrong (first (%lld,%lld): %lld, expected "
            "%lld), %d written twice",
            trial, hg_dtype_name(t), mn_major ? "MN" : "K", rows, cols, vec, threads, (long long)ld,
            (long long)row0, (long long)col0, (long long)rows_ext, (long long)cols_ext,
            (long long)bad, (long long)first_r, (long long)first_c, (long long)got, (long long)want,
            x.writes_twice);
  free(x.smem);
  free(x.stg);
  hg_builder_destroy(b);
  staged_copies += cp.staged;
  return cp.window;
}

static void test_cp_async_copies(void) {
  int windows = 0;
  for (int i = 0; i < 120; i++) one_copy(i, false);
  /* rows only 1- or 2-byte aligned: the window copy where the stage keeps 16 bytes together */
  for (int i = 120; i < 240; i++) windows += one_copy(i, true);
  /* window copies, about half of them staged */
  CHECK(windows >= 60);
  CHECK(staged_copies >= 25);
}

/* ---------------------------------------------------------------- direct epilogue */

/* Global stores of the epilogue, in order: (address, value, bits). */
typedef struct store_sim {
  int64_t addr[64], value[64];
  int n, wrong_kind;
} store_sim_t;

static void sim_d_store(void *ctx, hg_space_t space, int bits, int64_t addr, int64_t value) {
  store_sim_t *x = ctx;
  if (space != HG_GLOBAL || bits != 32 || x->n == 64) {
    x->wrong_kind++;
    return;
  }
  x->addr[x->n] = addr;
  x->value[x->n++] = value;
}

/* The direct-store epilogue (f32 D, no steps: the stores alone) of one consumer thread whose
 * first element is (row0, col0) of batch `batch`, interpreted: accumulator v (an integer
 * stand-in holding v + 1) is stored once, at D(row0 + dm, col0 + dn, batch) = d + 4 * (row *
 * ldd + col + batch * batch_stride) for the (dm, dn) the accumulator map gives it, when that
 * is inside M x N, and nothing else is stored - for random extents, pitches (some past 2^31
 * elements), batches and threads at the ragged edges. */
/* trans: D stored transposed (column-major), as a GEMM with A and B swapped does */
static void direct_epilogue(bool trans) {
  hg_tiled_mma_spec_t ms = {.a = HG_BF16,
                            .b = HG_BF16,
                            .acc = HG_F32,
                            .tile_m = 128,
                            .tile_n = 64,
                            .tile_k = 64,
                            .wg_m = 2,
                            .wg_n = 1,
                            .auto_swizzle = true};
  static hg_mma_builder_t mb;
  CHECK_OK(hg_mma_builder_make(HG_MMA_WGMMA_SS, &ms, &mb));
  hg_acc_map_t am;
  CHECK_OK(hg_acc_map_make(&mb.tm, 64, &am));
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("epi", &b));
  hg_epilogue_t e = {.d_type = HG_F32, .trans = trans};
  e.d_ptr = hg_b_param(b, HG_T_I64, "d");
  e.ldd = hg_b_param(b, HG_T_I64, "ldd");
  e.batch_stride_d = hg_b_param(b, HG_T_I64, "bsd");
  e.m = hg_b_param(b, HG_T_I32, "m");
  e.n = hg_b_param(b, HG_T_I32, "n");
  e.batches = hg_b_param(b, HG_T_I32, "batches");
  hg_val_t row0 = hg_b_param(b, HG_T_I32, "row0"), col0 = hg_b_param(b, HG_T_I32, "col0");
  hg_val_t batch = hg_b_param(b, HG_T_I32, "batch");
  hg_val_t acc[32];
  CHECK_EQ(mb.acc_count, 32);
  for (int v = 0; v < 32; v++) acc[v] = hg_b_var(b, HG_T_I32, hg_b_i32(b, v + 1));
  hg_roles_t r = {0}; /* the direct path needs no roles */
  CHECK_OK(hg_epilogue_emit(b, &e, acc, &am, row0, col0, row0, col0, batch, &r));
  const int64_t d = INT64_C(1) << 40;
  for (int trial = 0; trial < 300; trial++) {
    const int64_t m = 1 + rnd(300), n = 1 + rnd(200), batches = 1 + rnd(3);
    /* the leading dimension spans a row (a column when transposed) */
    const int64_t ld = (trans ? m : n) + rnd(5) + (rnd(5) == 0 ? INT64_C(1) << 31 : 0);
    const int64_t bs = (trans ? n : m) * ld + rnd(7), l = rnd(batches);
    /* the thread's first element: in some tile of the grid, often past M or N */
    const int64_t r0 = rnd((m + 63) / 64) * 64 + rnd(8), c0 = rnd((n + 63) / 64) * 64 + 2 * rnd(4);
    store_sim_t x = {0};
    ir_eval_hooks_t h = {.ctx = &x, .store = sim_d_store};
    const int64_t params[9] = {d, ld, bs, m, n, batches, r0, c0, l};
    ir_eval_t ev;
    hg_status_t st = ir_eval_run_hooks(b, params, NULL, &h, &ev);
    if (!hg_is_ok(&st)) {
      HG_FAIL("trial %d: %s", trial, st.msg);
      break;
    }
    ir_eval_free(&ev);
    int found = 0, want = 0, bad = 0;
    for (int dm = 0; dm < am.rows; dm++)
      for (int dn = 0; dn < am.cols; dn++) {
        const int v = hg_acc_map_at(&am, dm, dn);
        if (v < 0 || r0 + dm >= m || c0 + dn >= n) continue;
        want++;
        const int64_t at =
            d + 4 * (trans ? (c0 + dn) * ld + r0 + dm + l * bs : (r0 + dm) * ld + c0 + dn + l * bs);
        int hits = 0;
        for (int i = 0; i < x.n; i++) hits += x.addr[i] == at && x.value[i] == v + 1;
        found += hits == 1;
        bad += hits != 1;
      }
    hg_test_checks++;
    if (bad || x.n != want || x.wrong_kind)
      HG_FAIL("trial %d (%sM %lld N %lld ld %lld batch %lld of %lld, first element (%lld,%lld)): "
              "%d of %d elements stored once where they belong, %d stores, %d not 32-bit "
              "global stores",
              trial, trans ? "transposed, " : "", (long long)m, (long long)n, (long long)ld,
              (long long)l, (long long)batches, (long long)r0, (long long)c0, found, want, x.n,
              x.wrong_kind);
  }
  hg_acc_map_free(&am);
  hg_builder_destroy(b);
}

static void test_direct_epilogue(void) {
  direct_epilogue(false);
  direct_epilogue(true);
  /* transposed stores go element by element */
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("epi", &b));
  hg_epilogue_t e = {.d_type = HG_BF16, .trans = true, .staged = true};
  hg_val_t acc[1] = {hg_b_f32(b, 0)}, one = hg_b_i32(b, 1);
  hg_acc_map_t am = {0};
  hg_roles_t r = {0};
  CHECK_ERR(hg_epilogue_emit(b, &e, acc, &am, one, one, one, one, one, &r), HG_ERR_UNSUPPORTED,
            "transposed goes element by element: not through staged buffers");
  hg_builder_destroy(b);
}

/* ---------------------------------------------------------------- ldmatrix addressing */

/* The lane's row address, recorded; what ldmatrix returns is the model's business. */
typedef struct lm_sim {
  int64_t addr;
  int num;
  bool trans;
} lm_sim_t;

static void sim_ldmatrix(void *ctx, int num, bool trans, int64_t addr, int64_t *regs) {
  lm_sim_t *x = ctx;
  x->addr = addr;
  x->num = num;
  x->trans = trans;
  for (int i = 0; i < num; i++) regs[i] = 0;
}

/* For A (16 x 16 at rows mn0, k0) and B (two n8 blocks), every lane's address is the start of
 * the row of its matrix: matrix l / 8, row l % 8, whose 8 elements run along the contiguous
 * mode. Checked by inverting the stage layout. */
static void check_ldmatrix(hg_dtype_t t, hg_major_t major, hg_swizzle_mode_t sw, bool a) {
  hg_gmma_operand_t op;
  CHECK_OK(hg_gmma_operand_make(t, major, sw, 128, 64, 64, &op));
  /* element offset -> (mn, k) */
  const int64_t slots = op.stage_bytes / 2;
  int64_t *inv = malloc(sizeof(int64_t) * (size_t)slots);
  for (int64_t i = 0; i < slots; i++) inv[i] = -1;
  for (int64_t mn = 0; mn < 128; mn++)
    for (int64_t k = 0; k < 64; k++) {
      hg_tuple_t crd;
      int64_t off;
      const int64_t v[2] = {mn, k};
      hg_tuple_ints(&crd, 2, v);
      CHECK_OK(hg_composed_eval(&op.layout, &crd, &off));
      inv[off] = mn * 64 + k;
    }
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("lm", &b));
  hg_val_t lane = hg_b_param(b, HG_T_I32, "lane");
  hg_val_t out[4];
  const int mn0 = 32, k0 = 16;
  const bool mn_major = major == HG_MAJOR_MN;
  if (a)
    hg_ldmatrix_a16x16(b, &op.layout, mn_major, hg_b_i32(b, 0), hg_b_i32(b, mn0), hg_b_i32(b, k0),
                       lane, out);
  else
    hg_ldmatrix_b16x16(b, &op.layout, mn_major, hg_b_i32(b, 0), hg_b_i32(b, mn0), hg_b_i32(b, k0),
                       lane, out);
  CHECK_OK(hg_builder_status(b));
  for (int l = 0; l < 32; l++) {
    lm_sim_t x = {0};
    ir_eval_hooks_t h = {.ctx = &x, .ldmatrix = sim_ldmatrix};
    ir_eval_t ev;
    const int64_t params[1] = {l};
    CHECK_OK(ir_eval_run_hooks(b, params, NULL, &h, &ev));
    ir_eval_free(&ev);
    CHECK_EQ(x.num, 4);
    CHECK_EQ(x.trans, mn_major);
    /* matrix g = l / 8 starts at (dmn, dk); A: (0,0) (8,0) (0,8) (8,8); B: (0,0) (0,8) (8,0)
     * (8,8) */
    const int g = l / 8, row = l % 8;
    const int dmn = a ? 8 * (g & 1) : 8 * (g >> 1), dk = a ? 8 * (g >> 1) : 8 * (g & 1);
    const int64_t want_mn = mn0 + dmn + (mn_major ? 0 : row);
    const int64_t want_k = k0 + dk + (mn_major ? row : 0);
    for (int i = 0; i < 8; i++) {
      const int64_t slot = x.addr / 2 + i;
      const int64_t got = slot < slots ? inv[slot] : -2;
      const int64_t want = (want_mn + (mn_major ? i : 0)) * 64 + want_k + (mn_major ? 0 : i);
      if (got != want) {
        HG_FAIL("%s %s-major %s lane %d element %d: stage slot %lld holds (%lld,%lld), expected "
                "(%lld,%lld)",
                a ? "A" : "B", hg_major_name(major), hg_swizzle_mode_name(sw), l, i,
                (long long)slot, (long long)(got / 64), (long long)(got % 64),
                (long long)(want / 64), (long long)(want % 64));
        break;
      }
    }
  }
  hg_builder_destroy(b);
  free(inv);
}

static void test_ldmatrix_addresses(void) {
  static const hg_swizzle_mode_t sws[] = {HG_SWIZZLE_128B, HG_SWIZZLE_64B, HG_SWIZZLE_32B};
  for (int a = 0; a < 2; a++)
    for (int m = 0; m < 2; m++)
      for (int s = 0; s < 3; s++)
        check_ldmatrix(m ? HG_F16 : HG_BF16, m ? HG_MAJOR_MN : HG_MAJOR_K, sws[s], a);
}

int main(void) {
  HG_RUN(test_refusals);
  HG_RUN(test_orchestration_pieces);
  HG_RUN(test_cp_async_copies);
  HG_RUN(test_direct_epilogue);
  HG_RUN(test_ldmatrix_addresses);
  return hg_test_finish();
}
