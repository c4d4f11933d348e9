/* Warp roles (builders.h): the warp-specialized split of a CTA into a producer warpgroup
 * and consumer warpgroups, register reallocation between them, elected issue, and the
 * named barriers consumers synchronise on.
 *
 * Why these shapes: setmaxnreg only takes effect with a register cap at entry (.maxntid
 * with .minnctapersm 1) and warpgroup-uniform branches (seen on an H200; docs/ARCHITECTURE.md),
 * so hg_roles_make sets both and every branch here is on tid / 128. Named-barrier ids are
 * immediates in PTX, so a barrier chosen by a run-time consumer index is one branch per
 * consumer. */
#include "hopgen/builders.h"

static hg_val_t i32(hg_builder_t *b, int32_t v) {
  return hg_b_i32(b, v);
}

static bool regs_ok(int r) {
  return r == 0 || (r >= 24 && r <= 256 && r % 8 == 0);
}

hg_status_t hg_roles_make(hg_builder_t *b, const hg_roles_spec_t *spec, hg_roles_t *out) {
  if (spec->producers < 0 || spec->producers > 1)
    return hg_error(HG_ERR_INVALID, "%d producer warpgroups: the roles take 0 or 1",
                    spec->producers);
  if (spec->consumers < 1 || spec->consumers > HG_MAX_CONSUMERS)
    return hg_error(HG_ERR_INVALID, "%d consumer warpgroups: the roles take 1..%d", spec->consumers,
                    HG_MAX_CONSUMERS);
  if (!regs_ok(spec->producer_regs) || !regs_ok(spec->consumer_regs))
    return hg_error(HG_ERR_INVALID,
                    "setmaxnreg counts %d (producers) and %d (consumers): each must be 0 (none) "
                    "or 24..256 in steps of 8 (PTX ISA setmaxnreg)",
                    spec->producer_regs, spec->consumer_regs);
  const int wgs = spec->producers + spec->consumers;
  const int64_t regs =
      128LL * spec->producers * spec->producer_regs + 128LL * spec->consumers * spec->consumer_regs;
  if (spec->producer_regs && spec->consumer_regs && regs > 65536)
    return hg_error(HG_ERR_INVALID,
                    "%d x 128 x %d + %d x 128 x %d = %lld registers exceed the SM's 65536",
                    spec->producers, spec->producer_regs, spec->consumers, spec->consumer_regs,
                    (long long)regs);
  out->spec = *spec;
  out->threads = 128 * wgs;
  hg_b_set_threads(b, out->threads);
  hg_b_set_min_ctas(b, 1);
  out->tid = hg_b_sreg(b, HG_TID_X);
  out->warp = hg_b_bin(b, HG_SHR_U, out->tid, i32(b, 5));
  out->lane = hg_b_sreg(b, HG_LANEID);
  out->wg_tid = hg_b_bin(b, HG_AND, out->tid, i32(b, 127));
  out->warp_in_wg = hg_b_bin(b, HG_AND, out->warp, i32(b, 3));
  hg_val_t wg = hg_b_bin(b, HG_SHR_U, out->tid, i32(b, 7));
  out->consumer = spec->producers ? hg_b_bin(b, HG_SUB, wg, i32(b, spec->producers)) : wg;
  return hg_ok();
}

void hg_roles_producer(hg_builder_t *b, const hg_roles_t *r) {
  if (r->spec.producers != 1) {
    hg_builder_fail(b, hg_error(HG_ERR_INVALID, "hg_roles_producer: the roles have no producer"));
    return;
  }
  hg_b_if(b, hg_b_cmp(b, HG_LT_U, r->tid, i32(b, 128)));
  if (r->spec.producer_regs) hg_b_setmaxnreg(b, false, r->spec.producer_regs);
}

void hg_roles_consumer(hg_builder_t *b, const hg_roles_t *r) {
  if (r->spec.producers) hg_b_else(b);
  if (r->spec.consumer_regs) hg_b_setmaxnreg(b, true, r->spec.consumer_regs);
}

void hg_roles_end(hg_builder_t *b, const hg_roles_t *r) {
  if (r->spec.producers) hg_b_endif(b);
}

void hg_elect_begin(hg_builder_t *b, hg_val_t warp_pred) {
  hg_b_if(b, warp_pred);
  hg_b_if(b, hg_b_elect_sync(b));
}

void hg_elect_end(hg_builder_t *b) {
  hg_b_endif(b);
  hg_b_endif(b);
}

void hg_roles_consumer_sync(hg_builder_t *b, const hg_roles_t *r) {
  const int n = r->spec.consumers;
  if (n == 1) {
    hg_b_bar_sync(b, HG_BAR_CONSUMER_BASE, 128);
    return;
  }
  for (int w = 0; w < n; w++) {
    hg_b_if(b, hg_b_cmp(b, HG_EQ, r->consumer, i32(b, w)));
    hg_b_bar_sync(b, HG_BAR_CONSUMER_BASE + w, 128);
    hg_b_endif(b);
  }
}

/* Consumer w waits on barrier ORDER_BASE + w, which the other consumer arrives at: a
 * bar.sync of 256 threads completes when both warpgroups reached it. */
static void order(hg_builder_t *b, const hg_roles_t *r, bool wait, const char *api) {
  if (r->spec.consumers != 2) {
    hg_builder_fail(b, hg_error(HG_ERR_INVALID,
                                "%s: ping-pong ordering needs exactly 2 consumers, not %d", api,
                                r->spec.consumers));
    return;
  }
  for (int w = 0; w < 2; w++) {
    hg_b_if(b, hg_b_cmp(b, HG_EQ, r->consumer, i32(b, w)));
    if (wait)
      hg_b_bar_sync(b, HG_BAR_ORDER_BASE + w, 256);
    else
      hg_b_bar_arrive(b, HG_BAR_ORDER_BASE + 1 - w, 256);
    hg_b_endif(b);
  }
}

void hg_roles_order_wait(hg_builder_t *b, const hg_roles_t *r) {
  order(b, r, true, "hg_roles_order_wait");
}

void hg_roles_order_signal(hg_builder_t *b, const hg_roles_t *r) {
  order(b, r, false, "hg_roles_order_signal");
}

void hg_roles_mma_turn_wait(hg_builder_t *b, const hg_roles_t *r, hg_val_t started) {
  hg_val_t first = hg_b_cmp(b, HG_EQ, r->consumer, i32(b, 0));
  hg_b_if(b, hg_b_not(b, hg_b_bin(b, HG_AND, first, hg_b_not(b, started))));
  hg_roles_order_wait(b, r);
  hg_b_endif(b);
  hg_b_assign(b, started, hg_b_pred(b, true));
}

void hg_roles_mma_turn_signal(hg_builder_t *b, const hg_roles_t *r) {
  hg_roles_order_signal(b, r);
}

void hg_roles_mma_turns_end(hg_builder_t *b, const hg_roles_t *r, hg_val_t started) {
  hg_b_if(b, hg_b_bin(b, HG_AND, started, hg_b_cmp(b, HG_EQ, r->consumer, i32(b, 0))));
  hg_b_bar_sync(b, HG_BAR_ORDER_BASE, 256);
  hg_b_endif(b);
}

void hg_roles_turn_begin(hg_builder_t *b, const hg_roles_t *r, bool pingpong, const hg_pipe_t *p,
                         hg_pipe_pos_t pos, hg_val_t iter, hg_val_t kblocks) {
  hg_val_t mine = hg_b_pred(b, true);
  if (pingpong) {
    /* Units alternate between the two consumers; the other's only moves the ring. */
    mine = hg_b_cmp(b, HG_EQ, hg_b_bin(b, HG_AND, iter, hg_b_i32(b, 1)), r->consumer);
    hg_b_if(b, hg_b_not(b, mine));
    hg_pipe_skip(b, p, pos, kblocks);
    hg_b_endif(b);
  }
  hg_b_if(b, mine);
  if (pingpong) {
    /* An mbarrier wait sees only the parity of a phase: the consumer that skipped the other's
     * unit would otherwise wait on stage phases a whole unit ahead and be released by an
     * earlier phase of the same parity. It starts its main loop only once the other has
     * issued the previous unit's. */
    hg_b_if(b, hg_b_cmp(b, HG_GT_S, iter, hg_b_i32(b, 0)));
    hg_roles_order_wait(b, r);
    hg_b_endif(b);
  }
}

void hg_roles_turn_handover(hg_builder_t *b, const hg_roles_t *r, hg_val_t has_next) {
  hg_b_if(b, has_next);
  hg_roles_order_signal(b, r);
  hg_b_endif(b);
}
