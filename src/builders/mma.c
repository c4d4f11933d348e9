/* TiledMma builders and the consumer main loop (builders.h).
 *
 * All three kinds share the warpgroup tiling of the wgmma TiledMma (hg_tiled_mma_make): a
 * consumer warpgroup owns atoms_m x atoms_n 64 x atom_n blocks of the tile, and its
 * accumulator registers [(im + atoms_m * in) * acc_regs, ...) hold block (im, in) in the
 * order of wgmma's accumulator fragment. What differs is how a k-block is issued:
 *
 *   wgmma SS  one wgmma per (block, K atom), A and B through descriptors advanced by the
 *             planner's per-atom and per-k-block offsets (CuTe's descriptor iterator);
 *   wgmma RS  A's 16-row slice of each warp read with ldmatrix.x4 into the A fragment, B
 *             through its descriptor; a wgmma.fence after the ldmatrix (PTX ISA: registers
 *             written by other instructions must be fenced before wgmma reads them). A
 *             wgmma reads its A registers asynchronously, until a wait_group covers it
 *             (PTX ISA "wgmma.mma_async": touching them earlier is undefined), so each K
 *             atom is its own group, and the ldmatrix into K atom kk's registers first
 *             waits for the previous k-block's group kk (see kblock_wgmma);
 *   mma.sync  each warp computes its 16 rows of each 64-row block as m16n8k16 MMAs: A as
 *             for RS, B's n8 blocks two at a time with ldmatrix.x4. The C fragment of an n8
 *             block (rows lane/4, lane/4 + 8, columns 2*(lane%4) + {0,1}) is exactly values
 *             4j..4j+3 of wgmma's fragment, so the accumulators keep wgmma's order and the
 *             epilogue cannot tell the kinds apart. */
#include <string.h>

#include "hopgen/builders.h"

static hg_val_t i32(hg_builder_t *b, int32_t v) {
  return hg_b_i32(b, v);
}

const char *hg_mma_kind_name(hg_mma_kind_t k) {
  switch (k) {
  case HG_MMA_WGMMA_SS:
    return "wgmma-ss";
  case HG_MMA_WGMMA_RS:
    return "wgmma-rs";
  case HG_MMA_SYNC:
    return "mma-sync";
  }
  return "?";
}

/* A's descriptor advance for warpgroup slot w and atom im is taken as the slot's first atom
 * plus the atom's offset within a slot: true when the planner's per-atom offsets are affine,
 * which the canonical stage buffers are. Refuse anything else rather than guess. */
static hg_status_t check_affine_atoms(const hg_tiled_mma_t *tm) {
  const uint32_t *o = tm->a_op.mn_atom_offset_bytes;
  for (int w = 0; w < tm->wg_m; w++)
    for (int im = 0; im < tm->atoms_m; im++)
      if (o[w * tm->atoms_m + im] != o[w * tm->atoms_m] + o[im] - o[0])
        return hg_error(HG_ERR_UNSUPPORTED,
                        "A's M atoms are not evenly spaced in shared memory (atom %d at %u B): "
                        "the generator advances descriptors by a per-warpgroup offset",
                        w * tm->atoms_m + im, o[w * tm->atoms_m + im]);
  return hg_ok();
}

hg_status_t hg_mma_builder_make(hg_mma_kind_t kind, const hg_tiled_mma_spec_t *spec,
                                hg_mma_builder_t *out) {
  memset(out, 0, sizeof *out);
  if (kind != HG_MMA_WGMMA_SS && kind != HG_MMA_WGMMA_RS && kind != HG_MMA_SYNC)
    return hg_error(HG_ERR_INVALID, "MMA kind %d is not known", (int)kind);
  const bool b16 = (spec->a == HG_BF16 || spec->a == HG_F16) && spec->b == spec->a;
  if (kind != HG_MMA_WGMMA_SS && !b16)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "%s takes bf16 or f16 operands (A %s, B %s): ldmatrix moves 16-bit elements, "
                    "and an 8-bit operand's MMA fragment (4 consecutive K per register) is not "
                    "what it returns; use wgmma-ss for fp8",
                    hg_mma_kind_name(kind), hg_dtype_name(spec->a), hg_dtype_name(spec->b));
  if (kind == HG_MMA_SYNC && spec->acc != HG_F32)
    return hg_error(HG_ERR_UNSUPPORTED, "mma-sync accumulates in f32 here, not %s",
                    hg_dtype_name(spec->acc));
  /* The tiling, stage layouts and accumulator layout are the SS TiledMma's for every kind:
   * register A is read from the same stage buffer, by ldmatrix instead of a descriptor. */
  hg_tiled_mma_spec_t s = *spec;
  s.a_regs = false;
  HG_TRY(hg_tiled_mma_make(&s, &out->tm));
  HG_TRY(check_affine_atoms(&out->tm));
  const hg_wgmma_atom_t *at = &out->tm.atom;
  out->kind = kind;
  out->op = (hg_wgmma_op_t){.n = at->n,
                            .a = at->a,
                            .b = at->b,
                            .acc = at->acc,
                            .a_regs = kind == HG_MMA_WGMMA_RS,
                            /* register A is always the K-major fragment (ldmatrix .trans
                             * reads an MN-major stage into it) */
                            .trans_a = kind == HG_MMA_WGMMA_RS ? false : at->trans_a,
                            .trans_b = at->trans_b};
  out->sync_op =
      (hg_mma_sync_op_t){.m = 16, .n = 8, .k = 16, .a = spec->a, .b = spec->b, .acc = HG_F32};
  out->acc_count = out->tm.atoms_m * out->tm.atoms_n * at->acc_regs;
  out->async = kind != HG_MMA_SYNC;
  return hg_ok();
}

/* ---------------------------------------------------------------- k-blocks */

/* desc(stage) = the descriptor of instruction (0,0) at address 0 with the stage's address in
 * the start-address field (bits 0-13 hold address >> 4). The field must be masked: in a
 * cluster launch the shared-memory window address of a CTA carries its rank in bits 24 and up
 * (sm_90a SASS: base = SR_CgaCtaId << 24 | offset), and address >> 4 would otherwise spill
 * rank bits into the leading-byte-offset field (bits 16-29) - harmless for swizzled K-major
 * operands, which ignore LBO, but it moved every MN-major operand block after the first in
 * the CTAs of rank >= 1 (seen on an H200). */
static hg_val_t stage_desc(hg_builder_t *b, const hg_gmma_operand_t *op, hg_val_t stage) {
  uint64_t d0;
  hg_gmma_desc_fields_t f = op->desc;
  f.start_address = 0;
  hg_status_t st = hg_gmma_desc_encode(&f, &d0);
  if (!hg_is_ok(&st)) {
    hg_builder_fail(b, st); /* cannot happen: the planner encoded the same fields */
    return HG_NONE;
  }
  hg_val_t field =
      hg_b_zext(b, hg_b_bin(b, HG_AND, hg_b_bin(b, HG_SHR_U, stage, i32(b, 4)), i32(b, 0x3FFF)));
  return hg_b_bin(b, HG_OR, hg_b_i64(b, (int64_t)d0), field);
}

static hg_val_t desc_plus(hg_builder_t *b, hg_val_t d, uint32_t bytes) {
  return bytes ? hg_b_bin(b, HG_ADD, d, hg_b_i64(b, bytes >> 4)) : d;
}

/* The first row of the consumer's slot wm (run time) within the tile, and A's byte offset of
 * the slot's first M atom (a choice between the planner's per-atom offsets). */
static hg_val_t slot_row0(hg_builder_t *b, const hg_tiled_mma_t *tm, hg_val_t wm) {
  return hg_b_bin(b, HG_MUL, wm, i32(b, tm->tile_m / tm->wg_m));
}

static hg_val_t slot_a_offset(hg_builder_t *b, const hg_tiled_mma_t *tm, hg_val_t wm) {
  hg_val_t off = i32(b, 0);
  for (int w = 1; w < tm->wg_m; w++)
    off = hg_b_select(b, hg_b_cmp(b, HG_EQ, wm, i32(b, w)),
                      i32(b, (int32_t)tm->a_op.mn_atom_offset_bytes[w * tm->atoms_m]), off);
  return off;
}

/* A fragments of this warp's 16 rows of every M atom of K atom kk: a[im * 4 + i]. */
static void load_a_frags(hg_builder_t *b, const hg_tiled_mma_t *tm, hg_val_t a_stage, hg_val_t wm,
                         int kk, const hg_roles_t *r, hg_val_t *a) {
  const bool mn_major = tm->a_op.major == HG_MAJOR_MN;
  hg_val_t row0 =
      hg_b_bin(b, HG_ADD, slot_row0(b, tm, wm), hg_b_bin(b, HG_SHL, r->warp_in_wg, i32(b, 4)));
  for (int im = 0; im < tm->atoms_m; im++) {
    hg_val_t mn0 = im ? hg_b_bin(b, HG_ADD, row0, i32(b, 64 * im)) : row0;
    hg_ldmatrix_a16x16(b, &tm->a_op.layout, mn_major, a_stage, mn0, i32(b, 16 * kk), r->lane,
                       a + im * 4);
  }
}

/* wgmma.wait_group takes 0..7 (PTX ISA); waiting for more groups than needed is safe. */
static int pending_max(int n) {
  return n < 7 ? n : 7;
}

static void kblock_wgmma(hg_builder_t *b, const hg_mma_builder_t *m, const hg_val_t *acc,
                         hg_val_t wm, hg_val_t a_stage, hg_val_t b_stage, hg_val_t accumulate,
                         const hg_roles_t *r) {
  const hg_tiled_mma_t *tm = &m->tm;
  const int acc_regs = tm->atom.acc_regs;
  const bool rs = m->kind == HG_MMA_WGMMA_RS;
  hg_val_t afr[4 * HG_GMMA_MAX_BLOCKS];
  hg_val_t da = HG_NONE;
  if (rs) {
    if (tm->atoms_k * tm->atoms_m > HG_GMMA_MAX_BLOCKS) {
      hg_builder_fail(b, hg_error(HG_ERR_CAPACITY, "%d x %d register A fragments per k-block",
                                  tm->atoms_k, tm->atoms_m));
      return;
    }
  } else {
    da = stage_desc(b, &tm->a_op, a_stage);
    da = hg_b_bin(b, HG_ADD, da,
                  hg_b_zext(b, hg_b_bin(b, HG_SHR_U, slot_a_offset(b, tm, wm), i32(b, 4))));
  }
  hg_val_t db = stage_desc(b, &tm->b_op, b_stage);
  hg_val_t true_ = hg_b_pred(b, true);
  if (!rs) hg_b_wgmma_fence(b);
  for (int kk = 0; kk < tm->atoms_k; kk++) {
    if (rs) {
      /* K atom kk's registers are those the previous k-block's group kk reads: the groups
       * since then are at most atoms_k - 1 (the rest of that k-block's, this one's before
       * kk), so waiting down to atoms_k - 1 pending completes it. The printed registers are
       * the same every k-block, and overwriting them under an MMA in flight gave wrong
       * products (cooperative 128x192 tiles, every block of D, on H100 and H200). */
      hg_b_wgmma_wait(b, pending_max(tm->atoms_k - 1));
      load_a_frags(b, tm, a_stage, wm, kk, r, afr + kk * tm->atoms_m * 4);
      hg_b_wgmma_fence(b);
    }
    for (int in = 0; in < tm->atoms_n; in++)
      for (int im = 0; im < tm->atoms_m; im++) {
        const int first = (im + tm->atoms_m * in) * acc_regs;
        hg_val_t ad =
            rs ? HG_NONE
               : desc_plus(b, da,
                           tm->a_op.mn_atom_offset_bytes[im] - tm->a_op.mn_atom_offset_bytes[0] +
                               tm->a_op.kblock_offset_bytes[kk]);
        hg_val_t bd =
            desc_plus(b, db, tm->b_op.mn_atom_offset_bytes[in] + tm->b_op.kblock_offset_bytes[kk]);
        hg_b_wgmma(b, &m->op, acc + first, rs ? afr + (kk * tm->atoms_m + im) * 4 : &ad, bd,
                   kk == 0 ? accumulate : true_);
      }
    if (rs) hg_b_wgmma_commit(b);
  }
  if (!rs) hg_b_wgmma_commit(b);
}

static void kblock_sync(hg_builder_t *b, const hg_mma_builder_t *m, const hg_val_t *acc,
                        hg_val_t wm, hg_val_t a_stage, hg_val_t b_stage, const hg_roles_t *r) {
  const hg_tiled_mma_t *tm = &m->tm;
  const int acc_regs = tm->atom.acc_regs, atom_n = tm->atom.n;
  const bool b_mn = tm->b_op.major == HG_MAJOR_MN;
  for (int kk = 0; kk < tm->atoms_k; kk++) {
    hg_val_t afr[4 * HG_GMMA_MAX_BLOCKS];
    hg_val_t row0 =
        hg_b_bin(b, HG_ADD, slot_row0(b, tm, wm), hg_b_bin(b, HG_SHL, r->warp_in_wg, i32(b, 4)));
    for (int im = 0; im < tm->atoms_m; im++) {
      hg_val_t mn0 = im ? hg_b_bin(b, HG_ADD, row0, i32(b, 64 * im)) : row0;
      hg_ldmatrix_a16x16(b, &tm->a_op.layout, tm->a_op.major == HG_MAJOR_MN, a_stage, mn0,
                         i32(b, 16 * kk), r->lane, afr + 4 * im);
    }
    for (int in = 0; in < tm->atoms_n; in++)
      for (int j2 = 0; j2 < atom_n / 16; j2++) {
        hg_val_t bfr[4];
        hg_ldmatrix_b16x16(b, &tm->b_op.layout, b_mn, b_stage, i32(b, in * atom_n + 16 * j2),
                           i32(b, 16 * kk), r->lane, bfr);
        for (int im = 0; im < tm->atoms_m; im++)
          for (int h = 0; h < 2; h++) {
            const int j = 2 * j2 + h; /* the n8 block within the atom */
            hg_b_mma_sync(b, &m->sync_op, acc + (im + tm->atoms_m * in) * acc_regs + 4 * j,
                          afr + 4 * im, bfr + 2 * h);
          }
      }
  }
}

void hg_mma_builder_kblock(hg_builder_t *b, const hg_mma_builder_t *m, const hg_val_t *acc,
                           hg_val_t wm, hg_val_t a_stage, hg_val_t b_stage, hg_val_t accumulate,
                           const hg_roles_t *r) {
  if (m->kind == HG_MMA_SYNC)
    kblock_sync(b, m, acc, wm, a_stage, b_stage, r);
  else
    kblock_wgmma(b, m, acc, wm, a_stage, b_stage, accumulate, r);
}

int hg_mma_builder_groups(const hg_mma_builder_t *m) {
  return !m->async ? 0 : m->kind == HG_MMA_WGMMA_RS ? m->tm.atoms_k : 1;
}

void hg_mma_builder_wait(hg_builder_t *b, const hg_mma_builder_t *m, int n) {
  if (m->async) hg_b_wgmma_wait(b, pending_max(n * hg_mma_builder_groups(m)));
}

/* ---------------------------------------------------------------- the main loop */

static bool block_scaled(const hg_mainloop_t *ml) {
  return ml->kblock_scales || ml->kblock_scales_staged;
}

/* The k-block's factors from shared memory, once its stage is full (staged block scales). */
static void staged_scales(hg_builder_t *b, const hg_mainloop_t *ml, hg_val_t kb, hg_val_t stage,
                          hg_val_t *f) {
  if (ml->kblock_scales_staged)
    ml->kblock_scales_staged(b, ml->scales_ctx, kb, hg_smem_ring_addr(b, ml->ring_s, stage), f);
}

/* k-block kb's stage made ready for its MMAs: with promotions, its block-scale factors into f
 * (from global memory before the wait, so that the loads fly during it and the MMAs; staged
 * ones from the stage after it), the stage's full barrier waited for, and the fence for
 * stages written through the generic proxy (cp.async, st.shared) that wgmma reads through
 * the async proxy (PTX ISA "Proxies"; ldmatrix reads through the generic proxy and needs
 * none). The main loop's bodies, its single k-blocks and the k-block issued ahead share it. */
static void kblock_ready(hg_builder_t *b, const hg_mainloop_t *ml, hg_val_t kb, hg_pipe_pos_t pos,
                         hg_val_t *f) {
  const bool promote = ml->promote > 0;
  if (promote && ml->kblock_scales) ml->kblock_scales(b, ml->scales_ctx, kb, f);
  hg_pipe_wait(b, ml->pipe, pos);
  if (promote) staged_scales(b, ml, kb, pos.stage, f);
  if (ml->fence_proxy && ml->mma->kind != HG_MMA_SYNC) hg_b_fence_proxy_async(b);
}

/* src (a partial set whose MMAs are done) into acc: acc += src, or with block scales acc +=
 * src * f[row's factor] (the fragment's value v of atom (im, in) sits in row half (v / 2) % 2
 * of the warp's 16 rows: PTX ISA "Matrix fragments for wgmma .m64nNk*"). */
static void add_partial(hg_builder_t *b, const hg_mainloop_t *ml, const hg_val_t *acc,
                        const hg_val_t *src, const hg_val_t *f) {
  const hg_tiled_mma_t *tm = &ml->mma->tm;
  const int acc_regs = tm->atom.acc_regs;
  /* factor runs: fragment value i of an atom lies in column 8 (i / 4) + 2 (lane % 4) + i % 2,
   * so in the 64-column run i / 32 */
  const bool runs = ml->scale_runs > 1;
  for (int v = 0; v < ml->mma->acc_count; v++) {
    if (f) {
      const int im = (v / acc_regs) % tm->atoms_m, half = (v % acc_regs / 2) % 2;
      const int run = runs ? v % acc_regs / 32 : 0;
      hg_b_assign(b, acc[v],
                  hg_b_ffma(b, src[v], f[run * 2 * tm->atoms_m + 2 * im + half], acc[v]));
    } else {
      hg_b_assign(b, acc[v], hg_b_bin(b, HG_FADD, acc[v], src[v]));
    }
  }
}

/* partial into acc after a group's MMAs are done. */
static void promote_partial(hg_builder_t *b, const hg_mainloop_t *ml, const hg_val_t *acc,
                            const hg_val_t *f) {
  hg_mma_builder_wait(b, ml->mma, 0);
  add_partial(b, ml, acc, ml->partial, f);
}

/* Two partial sets, the k-loop unrolled by `unroll` k-blocks (two groups or more, alternating
 * between the sets): each group is added once the next group's first k-block is issued
 * (wgmma.wait_group 1), and the body ends with wait_group 0 and the last group's add, so that
 * no MMA is in flight across the loop's back edge. ptxas serializes every wgmma of the kernel
 * (C7514) when a set written by a wgmma issued before a back edge is read after it, even
 * behind wait_group 1; within one iteration it keeps them asynchronous (what FlashAttention-3's
 * intra-warpgroup overlap relies on). The sums and their order are those of the plain loop. */
static void mainloop_double(hg_builder_t *b, const hg_mainloop_t *ml, const hg_val_t *acc,
                            hg_pipe_pos_t pos, hg_val_t first, hg_val_t iters, int unroll,
                            hg_val_t wm, const hg_roles_t *r) {
  const hg_mma_builder_t *m = ml->mma;
  const int p = ml->promote;
  hg_val_t f[HG_MAINLOOP_MAX_UNROLL][HG_BLOCK_SCALES_MAX_F], stage[HG_MAINLOOP_MAX_UNROLL];
  hg_val_t it = hg_b_for(b, i32(b, 0), iters, i32(b, 1));
  {
    hg_val_t base = hg_b_bin(b, HG_ADD, first, hg_b_bin(b, HG_MUL, it, i32(b, unroll)));
    for (int j = 0; j < unroll; j++) {
      const int g = j / p; /* the body's group: sets alternate */
      const hg_val_t *set = g % 2 ? ml->partial2 : ml->partial;
      hg_val_t kb = j ? hg_b_bin(b, HG_ADD, base, i32(b, j)) : base;
      kblock_ready(b, ml, kb, pos, f[j]);
      /* the stage's index now: pos.stage moves on with the ring */
      stage[j] = hg_b_var(b, HG_T_I32, pos.stage);
      hg_mma_builder_kblock(b, m, set, wm, hg_smem_ring_addr(b, ml->ring_a, pos.stage),
                            hg_smem_ring_addr(b, ml->ring_b, pos.stage), hg_b_pred(b, j % p != 0),
                            r);
      if (j > 0) {
        /* the previous k-block's MMAs are done: its stage is free, and when this k-block
         * starts a group, the group before is complete */
        hg_mma_builder_wait(b, m, 1);
        hg_pipe_release(b, ml->pipe, stage[j - 1], ml->cluster, r->lane);
        if (j % p == 0)
          add_partial(b, ml, acc, (g - 1) % 2 ? ml->partial2 : ml->partial,
                      block_scaled(ml) ? f[j - 1] : NULL);
      }
      hg_pipe_advance(b, ml->pipe, pos);
    }
    hg_mma_builder_wait(b, m, 0);
    hg_pipe_release(b, ml->pipe, stage[unroll - 1], ml->cluster, r->lane);
    add_partial(b, ml, acc, (unroll / p - 1) % 2 ? ml->partial2 : ml->partial,
                block_scaled(ml) ? f[unroll - 1] : NULL);
  }
  hg_b_endfor(b);
}

int hg_mainloop_unroll(int promote) {
  return promote == 1 ? 4 : 2 * promote;
}

void hg_mainloop_emit(hg_builder_t *b, const hg_mainloop_t *ml, const hg_val_t *acc,
                      hg_pipe_pos_t pos, hg_val_t kblocks, hg_val_t wm, const hg_roles_t *r) {
  const hg_mma_builder_t *m = ml->mma;
  const bool promote = ml->promote > 0, phased = !hg_val_is_none(ml->phase);
  const bool dbl = promote && ml->partial2, ahead = !hg_val_is_none(ml->ahead);
  const int unroll = dbl ? hg_mainloop_unroll(ml->promote) : 0;
  if ((promote && (!m->async || !ml->partial || (block_scaled(ml) && ml->promote != 1) ||
                   m->tm.atoms_m > HG_GMMA_MAX_BLOCKS)) ||
      (ml->kblock_scales && ml->kblock_scales_staged) ||
      (ml->scale_runs > 1 &&
       (!block_scaled(ml) || m->tm.atoms_n != 1 || m->tm.atom.acc_regs != 32 * ml->scale_runs ||
        ml->scale_runs * 2 * m->tm.atoms_m > HG_BLOCK_SCALES_MAX_F)) ||
      (ml->kblock_scales_staged && !ml->ring_s) ||
      (!hg_val_is_none(ml->turns) && (!m->async || ml->partial2 || phased)) ||
      (phased && !promote) || (ml->partial2 && (!promote || phased)) ||
      (ahead && (!promote || phased || !hg_val_is_none(ml->turns))) ||
      unroll > HG_MAINLOOP_MAX_UNROLL) {
    hg_builder_fail(b, hg_error(HG_ERR_INVALID,
                                "promotion every %d k-blocks needs a wgmma kind, a partial "
                                "accumulator set, and (with block scales) a promotion every "
                                "k-block, from global or staged memory but not both; a "
                                "promotion phase or a second partial set needs promotions, not "
                                "both, and two sets at most %d k-blocks unrolled; MMA turns "
                                "need a wgmma kind and neither; a k-block issued ahead needs "
                                "promotions, no phase and no turns; factor runs (tiles over 128 "
                                "columns) need block scales and one atom of 64 x tile N",
                                ml->promote, HG_MAINLOOP_MAX_UNROLL));
    return;
  }
  /* The MMAs' destination: acc itself, or the partial set promoted into it. */
  const hg_val_t *dst = promote ? ml->partial : acc;
  hg_val_t sd = HG_NONE, prev = HG_NONE, group = HG_NONE;
  if (m->async) {
    sd = hg_b_var(b, HG_T_PRED, hg_b_pred(b, false));
    prev = hg_b_var(b, HG_T_I32, i32(b, 0));
  }
  if (!m->async || promote) {
    /* mma.sync always accumulates, and promotions add into acc: start the tile from zero
     * (unless its first k-block, issued ahead, already landed there). */
    if (ahead) hg_b_if(b, hg_b_not(b, ml->ahead));
    hg_val_t zero = hg_b_f32(b, 0.0f);
    for (int v = 0; v < m->acc_count; v++) hg_b_assign(b, acc[v], zero);
    if (ahead) hg_b_endif(b);
  }
  /* k-blocks in the partial sums; a phase counts some of the unit's first group as done */
  if (promote) group = hg_b_var(b, HG_T_I32, phased ? ml->phase : i32(b, 0));
  /* two partial sets: whole bodies of `unroll` k-blocks, then the rest one by one; from
   * k-block 1 when the first was issued ahead */
  hg_val_t first = ahead ? hg_b_select(b, ml->ahead, i32(b, 1), i32(b, 0)) : i32(b, 0);
  if (dbl) {
    hg_val_t iters = hg_b_bin(b, HG_DIV_U, hg_b_bin(b, HG_SUB, kblocks, first), i32(b, unroll));
    mainloop_double(b, ml, acc, pos, first, iters, unroll, wm, r);
    first = hg_b_var(b, HG_T_I32,
                     hg_b_bin(b, HG_ADD, first, hg_b_bin(b, HG_MUL, iters, i32(b, unroll))));
  }
  hg_val_t kb = hg_b_for(b, first, kblocks, i32(b, 1));
  {
    hg_val_t f[HG_BLOCK_SCALES_MAX_F];
    kblock_ready(b, ml, kb, pos, f);
    hg_val_t a_stage = hg_smem_ring_addr(b, ml->ring_a, pos.stage);
    hg_val_t b_stage = hg_smem_ring_addr(b, ml->ring_b, pos.stage);
    /* A group's first k-block overwrites the partial sums (scale-d = 0), and so does the
     * unit's first when a phase makes its first group look started. */
    hg_val_t accumulate = !m->async ? hg_b_pred(b, true)
                          : promote ? hg_b_cmp(b, HG_NE, group, i32(b, 0))
                                    : sd;
    if (phased) accumulate = hg_b_bin(b, HG_AND, accumulate, sd);
    /* MMA turns: issued and committed in this consumer's turn, handed over before the waits,
     * so the other's MMAs queue behind these and run while this one drains and promotes */
    const bool turns = !hg_val_is_none(ml->turns);
    if (turns) hg_roles_mma_turn_wait(b, r, ml->turns);
    hg_mma_builder_kblock(b, m, dst, wm, a_stage, b_stage, accumulate, r);
    if (turns) hg_roles_mma_turn_signal(b, r);
    if (m->async) {
      hg_b_assign(b, sd, hg_b_pred(b, true));
      /* Keep this k-block's MMAs in flight; the previous k-block's are done reading. */
      hg_mma_builder_wait(b, m, 1);
      hg_b_if(b, hg_b_cmp(b, HG_GT_S, kb, first));
      hg_pipe_release(b, ml->pipe, prev, ml->cluster, r->lane);
      hg_b_endif(b);
      hg_b_assign(b, prev, pos.stage);
    } else {
      /* ldmatrix has read the stage into registers: release it at once. */
      hg_pipe_release(b, ml->pipe, pos.stage, ml->cluster, r->lane);
    }
    if (promote) {
      /* The group's last k-block, or the unit's: wait for its MMAs and promote. */
      hg_b_assign(b, group, hg_b_bin(b, HG_ADD, group, i32(b, 1)));
      hg_b_if(b, hg_b_bin(b, HG_OR, hg_b_cmp(b, HG_EQ, group, i32(b, ml->promote)),
                          hg_b_cmp(b, HG_EQ, hg_b_bin(b, HG_ADD, kb, i32(b, 1)), kblocks)));
      promote_partial(b, ml, acc, block_scaled(ml) ? f : NULL);
      hg_b_assign(b, group, i32(b, 0));
      hg_b_endif(b);
    }
    hg_pipe_advance(b, ml->pipe, pos);
  }
  hg_b_endfor(b);
  if (m->async) {
    hg_mma_builder_wait(b, m, 0);
    /* the last k-block's stage (none when the unrolled bodies, or the k-block issued ahead,
     * took every k-block) */
    if (dbl || ahead) hg_b_if(b, hg_b_cmp(b, HG_GT_S, kblocks, first));
    hg_pipe_release(b, ml->pipe, prev, ml->cluster, r->lane);
    if (dbl || ahead) hg_b_endif(b);
  }
}

void hg_mainloop_issue_ahead(hg_builder_t *b, const hg_mainloop_t *ml, hg_pipe_pos_t pos,
                             hg_val_t wm, const hg_roles_t *r, const hg_val_t *f, hg_val_t stage) {
  const hg_mma_builder_t *m = ml->mma;
  if (ml->promote < 1 || !m->async || !ml->partial || !hg_val_is_none(ml->phase) ||
      !hg_val_is_none(ml->turns)) {
    hg_builder_fail(b, hg_error(HG_ERR_INVALID,
                                "a k-block issued ahead needs a promoting wgmma main loop "
                                "without a phase or MMA turns"));
    return;
  }
  hg_val_t kb = i32(b, 0), fk[HG_BLOCK_SCALES_MAX_F];
  kblock_ready(b, ml, kb, pos, fk);
  if (block_scaled(ml)) {
    const int nf = (ml->scale_runs > 1 ? ml->scale_runs : 1) * 2 * m->tm.atoms_m;
    for (int i = 0; i < nf; i++) hg_b_assign(b, f[i], fk[i]);
  }
  hg_b_assign(b, stage, pos.stage);
  hg_mma_builder_kblock(b, m, ml->partial, wm, hg_smem_ring_addr(b, ml->ring_a, pos.stage),
                        hg_smem_ring_addr(b, ml->ring_b, pos.stage), hg_b_pred(b, false), r);
  hg_pipe_advance(b, ml->pipe, pos);
}

void hg_mainloop_land_ahead(hg_builder_t *b, const hg_mainloop_t *ml, const hg_val_t *acc,
                            const hg_val_t *f, hg_val_t stage, const hg_roles_t *r) {
  /* The wait on every path (nothing in flight when no k-block went ahead): ptxas then sees no
   * MMA in flight across the unit loop's back edge (it would inject a wait there) */
  hg_mma_builder_wait(b, ml->mma, 0);
  hg_b_if(b, ml->ahead);
  hg_pipe_release(b, ml->pipe, stage, ml->cluster, r->lane);
  hg_val_t zero = hg_b_f32(b, 0.0f);
  for (int v = 0; v < ml->mma->acc_count; v++) hg_b_assign(b, acc[v], zero);
  add_partial(b, ml, acc, ml->partial, block_scaled(ml) ? f : NULL);
  hg_b_endif(b);
}
