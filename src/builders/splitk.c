/* The split-K reduction as a binary tree over the splits (builders.h, hg_splitk_*).
 *
 * At level L the splits pair up in groups of 2^(L+1): the half [a, a + 2^L) and the half
 * [a + 2^L, a + 2^(L+1)). Each half has one CTA left holding its sum; both store it to the
 * slot of their half's first split and arrive on the pair's counter; the second to arrive
 * loads the other half's sum, adds it and goes on to level L+1, the first leaves (its tile's
 * epilogue is not its business). The last one standing holds the whole sum. Float addition is
 * commutative, so each pair's sum has the same bits whichever half arrives last: the result is
 * a fixed tree of additions, deterministic run to run, and the chain of dependent L2 round
 * trips is log2(splits) long instead of splits (a linear sum behind the last CTA spent ~0.5 us
 * a split on the H100: 16 splits cost more than their k-blocks).
 *
 * Release/acquire per arrival: the group's stores, a named barrier, one thread's fence
 * (fence.acq_rel.gpu) and atomic add; the second arrival fences again and, after a second
 * barrier, every thread fences before loading so that no load is served from a line this
 * SM's L1 kept from before. */
#include <string.h>

#include "hopgen/builders.h"

static hg_val_t i32(hg_builder_t *b, int32_t v) {
  return hg_b_i32(b, v);
}

#define COUNTERS_ALIGN 256

/* A counter per pair of the tree, `splits` per CTA tile (a tree over S leaves has S - 1
 * pairs; the pair of halves starting at a on level L is counter a + 2^L - 1: its low L bits
 * set, bit L clear, unique) */
size_t hg_splitk_counter_bytes(int splits, int64_t cta_tiles) {
  return ((size_t)cta_tiles * (size_t)splits * 4 + COUNTERS_ALIGN - 1) / COUNTERS_ALIGN *
         COUNTERS_ALIGN;
}

size_t hg_splitk_workspace_bytes(int splits, int64_t cta_tiles, int64_t tile_elems) {
  return hg_splitk_counter_bytes(splits, cta_tiles) +
         (size_t)cta_tiles * (size_t)splits * (size_t)tile_elems * 4;
}

hg_status_t hg_splitk_make(hg_builder_t *b, int splits, int acc_count, const hg_roles_t *r,
                           bool per_group, hg_val_t workspace, hg_splitk_t *out) {
  if (splits < 2 || splits > HG_SCHED_MAX_SPLITS)
    return hg_error(HG_ERR_INVALID, "split-K into %d ranges: the reduction takes 2..%d", splits,
                    HG_SCHED_MAX_SPLITS);
  if (acc_count < 4 || acc_count % 4 != 0)
    return hg_error(HG_ERR_INVALID,
                    "split-K partials move 4 accumulators a store; %d per thread is not a "
                    "multiple of 4",
                    acc_count);
  memset(out, 0, sizeof *out);
  out->splits = splits;
  out->acc_count = acc_count;
  out->per_group = per_group || r->spec.consumers == 1;
  out->threads = out->per_group ? 128 : 128 * r->spec.consumers;
  out->flag_offset = hg_b_smem_reserve(b, 4 * (uint32_t)r->spec.consumers, 4);
  out->workspace = workspace;
  return hg_builder_status(b);
}

/* The barrier of the threads holding one tile. */
static void group_sync(hg_builder_t *b, const hg_splitk_t *s, const hg_roles_t *r) {
  if (s->per_group)
    hg_roles_consumer_sync(b, r);
  else
    hg_b_bar_sync(b, HG_BAR_CONSUMERS, s->threads);
}

hg_val_t hg_splitk_reduce(hg_builder_t *b, const hg_splitk_t *s, const hg_sched_t *sched,
                          const hg_sched_work_t *w, const hg_val_t *acc, const hg_roles_t *r) {
  hg_val_t alive = hg_b_var(b, HG_T_I32, i32(b, 1));
  hg_b_if(b, hg_b_cmp(b, HG_GT_S, sched->splits, i32(b, 1)));
  {
    hg_b_comment(b, "split-K: a tree of pairwise sums over the splits' partial tiles");
    const hg_cluster2d_t *cl = sched->cluster;
    const int64_t csize = (int64_t)cl->m * cl->n;
    const int64_t elems = (int64_t)s->threads * s->acc_count;
    const int64_t slot_bytes = elems * 4, step = (int64_t)s->threads * 16;
    hg_val_t thread = s->per_group ? r->wg_tid : hg_b_mad(b, r->consumer, i32(b, 128), r->wg_tid);
    hg_val_t group = s->per_group ? r->consumer : i32(b, 0);
    /* CTA tile = cluster tile x cluster size + rank; its counters, then the slots */
    hg_val_t ctile =
        hg_b_sext(b, csize > 1 ? hg_b_mad(b, w->tile, i32(b, (int32_t)csize), cl->rank) : w->tile);
    hg_val_t ctiles = hg_b_bin(b, HG_MUL, hg_b_sext(b, sched->tiles), hg_b_i64(b, csize));
    hg_val_t counters = hg_b_mad(b, ctile, hg_b_i64(b, 4 * (int64_t)s->splits), s->workspace);
    hg_val_t slots = hg_b_bin(b, HG_ADD, s->workspace,
                              hg_b_bin(b, HG_AND,
                                       hg_b_mad(b, ctiles, hg_b_i64(b, 4 * (int64_t)s->splits),
                                                hg_b_i64(b, COUNTERS_ALIGN - 1)),
                                       hg_b_i64(b, -COUNTERS_ALIGN)));
    /* this thread's first float in slot 0 of the tile; slot k is k x elems floats on */
    hg_val_t mine =
        hg_b_bin(b, HG_ADD, slots,
                 hg_b_bin(b, HG_ADD,
                          hg_b_bin(b, HG_MUL, ctile, hg_b_i64(b, (int64_t)s->splits * slot_bytes)),
                          hg_b_bin(b, HG_MUL, hg_b_sext(b, thread), hg_b_i64(b, 16))));
    hg_val_t flag = hg_b_bin(b, HG_ADD, hg_b_smem_addr(b, s->flag_offset),
                             hg_b_bin(b, HG_SHL, group, i32(b, 2)));
    int levels = 0;
    while ((1 << levels) < s->splits) levels++;
    hg_val_t level = hg_b_for(b, i32(b, 0), i32(b, levels), i32(b, 1));
    {
      hg_val_t half = hg_b_bin(b, HG_SHL, i32(b, 1), level);
      /* the pair's halves start at a and a + half; this CTA's half starts at own */
      hg_val_t a = hg_b_bin(b, HG_AND, w->split,
                            hg_b_bin(b, HG_SUB, i32(b, 0), hg_b_bin(b, HG_SHL, half, i32(b, 1))));
      hg_val_t own = hg_b_bin(b, HG_AND, w->split, hg_b_bin(b, HG_SUB, i32(b, 0), half));
      hg_val_t pair = hg_b_bin(b, HG_ADD, a, half);
      hg_b_if(b, hg_b_bin(b, HG_AND, hg_b_cmp(b, HG_NE, alive, i32(b, 0)),
                          hg_b_cmp(b, HG_LT_S, pair, sched->splits)));
      {
        hg_val_t at = hg_b_mad(b, hg_b_sext(b, own), hg_b_i64(b, slot_bytes), mine);
        for (int c = 0; c < s->acc_count / 4; c++)
          hg_b_store(b, HG_GLOBAL, 0, 4, hg_b_bin(b, HG_ADD, at, hg_b_i64(b, c * step)),
                     &acc[4 * c]);
        group_sync(b, s, r);
        hg_b_if(b, hg_b_cmp(b, HG_EQ, thread, i32(b, 0)));
        {
          hg_b_fence_gpu(b);
          hg_val_t counter = hg_b_mad(b, hg_b_sext(b, hg_b_bin(b, HG_SUB, pair, i32(b, 1))),
                                      hg_b_i64(b, 4), counters);
          hg_val_t old = hg_b_atomic_add_u32(b, counter, i32(b, 1));
          hg_val_t second =
              hg_b_select(b, hg_b_cmp(b, HG_EQ, old, i32(b, 1)), i32(b, 1), i32(b, 0));
          hg_b_store(b, HG_SHARED, 0, 1, flag, &second);
        }
        hg_b_endif(b);
        group_sync(b, s, r);
        hg_val_t second;
        hg_b_load(b, HG_SHARED, HG_T_I32, 0, 1, flag, &second);
        hg_b_assign(b, alive, second);
        hg_b_if(b, hg_b_cmp(b, HG_NE, second, i32(b, 0)));
        {
          /* the other half's sum: its slot is this one's with the half bit flipped */
          hg_b_fence_gpu(b);
          hg_val_t other = hg_b_mad(b, hg_b_sext(b, hg_b_bin(b, HG_XOR, own, half)),
                                    hg_b_i64(b, slot_bytes), mine);
          for (int c = 0; c < s->acc_count / 4; c++) {
            hg_val_t v[4];
            hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 4,
                      hg_b_bin(b, HG_ADD, other, hg_b_i64(b, c * step)), v);
            for (int j = 0; j < 4; j++)
              hg_b_assign(b, acc[4 * c + j], hg_b_bin(b, HG_FADD, acc[4 * c + j], v[j]));
          }
        }
        hg_b_endif(b);
      }
      hg_b_endif(b);
    }
    hg_b_endfor(b);
  }
  hg_b_endif(b);
  return hg_b_cmp(b, HG_NE, alive, i32(b, 0));
}
