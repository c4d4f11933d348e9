/* The registers of wgmma in flight (ir.h, hg_ir_check_wgmma_registers).
 *
 * wgmma.mma_async reads its A fragment registers and reads and writes its accumulators
 * asynchronously: until a wgmma.wait_group covers its group, another instruction that writes
 * either, or reads an accumulator, is undefined behaviour (PTX ISA "wgmma.mma_async"). A
 * backend prints a value defined inside a loop as the same register on every iteration, so
 * an ldmatrix into the next k-block's A fragment while the previous k-block's wgmma is still
 * pending overwrites the registers it reads: ptxas does not extend their live ranges past
 * the wgmma (it reused them), and the hardware read the new values (cooperative RS tiles
 * wider than 128 gave wrong products on every block).
 *
 * The check walks the ops in program order with the pending groups: each value a wgmma reads
 * or writes is tagged with its group's position (the open group, or how many groups were
 * committed after its own), wait_group n forgets all but the n newest, and any other op that
 * writes a tagged value, or reads a tagged accumulator, is refused. Both branches of an if
 * are walked and their states merged (a value in flight on either path is in flight after
 * it); a loop body is walked twice, the second time from the state its first pass left, so
 * an overwrite on the next iteration is seen, and the state after the loop merges the entry
 * (no iteration) with the second pass's. */
#include <stdlib.h>
#include <string.h>

#include "emit/ir.h"

typedef struct {
  int32_t v;   /* value id */
  int32_t pos; /* -1: the open (uncommitted) group; else groups committed after its own */
  bool acc;    /* an accumulator (read and written), else an A register (read) */
} inflight_t;

typedef struct {
  inflight_t *e;
  int n, cap;
  int pending; /* committed groups that may still run */
} wstate_t;

typedef struct {
  const hg_builder_t *b;
  hg_status_t st;
  uint8_t *wg; /* wg[v]: some wgmma reads or writes value v (the only values to look up) */
} walk_t;

static void st_free(wstate_t *s) {
  free(s->e);
  memset(s, 0, sizeof *s);
}

static bool st_copy(wstate_t *d, const wstate_t *s) {
  *d = (wstate_t){.pending = s->pending};
  if (!s->n) return true;
  d->e = malloc(sizeof(inflight_t) * (size_t)s->n);
  if (!d->e) return false;
  memcpy(d->e, s->e, sizeof(inflight_t) * (size_t)s->n);
  d->n = d->cap = s->n;
  return true;
}

static inflight_t *st_find(const wstate_t *s, int32_t v) {
  for (int i = 0; i < s->n; i++)
    if (s->e[i].v == v) return &s->e[i];
  return NULL;
}

/* v in the open group (newest wins: a value read by a later wgmma is pending until it is). */
static bool st_add(wstate_t *s, int32_t v, int32_t pos, bool acc) {
  inflight_t *f = st_find(s, v);
  if (f) {
    if (pos < f->pos) f->pos = pos;
    f->acc |= acc;
    return true;
  }
  if (s->n == s->cap) {
    const int cap = s->cap ? 2 * s->cap : 64;
    inflight_t *e = realloc(s->e, sizeof(inflight_t) * (size_t)cap);
    if (!e) return false;
    s->e = e;
    s->cap = cap;
  }
  s->e[s->n++] = (inflight_t){.v = v, .pos = pos, .acc = acc};
  return true;
}

/* Keep what is still pending: the open group and the `pending` newest committed groups. */
static void st_prune(wstate_t *s) {
  int k = 0;
  for (int i = 0; i < s->n; i++)
    if (s->e[i].pos < s->pending) s->e[k++] = s->e[i];
  s->n = k;
}

/* d := the merge of d and s: pending on either path is pending after both. */
static bool st_merge(wstate_t *d, const wstate_t *s) {
  if (s->pending > d->pending) d->pending = s->pending;
  for (int i = 0; i < s->n; i++)
    if (!st_add(d, s->e[i].v, s->e[i].pos, s->e[i].acc)) return false;
  return true;
}

static const char *hint(const hg_builder_t *b, int32_t v) {
  const char *h = hg_ir_value(b, v)->hint;
  return h[0] ? h : "unnamed";
}

static void fail_nomem(walk_t *w) {
  if (hg_is_ok(&w->st))
    w->st =
        hg_error(HG_ERR_NOMEM, "out of memory checking kernel '%s' for wgmma hazards", w->b->name);
}

static void check_op(walk_t *w, int32_t i, wstate_t *s) {
  const hg_builder_t *b = w->b;
  const hg_ir_op_t *op = &b->ops[i];
  const int32_t *in = hg_ir_operands(b, op), *out = hg_ir_results(b, op);
  switch (op->code) {
  case HG_OP_WGMMA: {
    const int nacc = hg_ir_wgmma_num_acc(&op->u.wgmma), na = hg_ir_wgmma_num_a(&op->u.wgmma);
    for (int j = 0; j < nacc; j++)
      if (!st_add(s, in[j], -1, true)) fail_nomem(w);
    if (op->u.wgmma.a_regs)
      for (int j = 0; j < na; j++)
        if (!st_add(s, in[nacc + j], -1, false)) fail_nomem(w);
    return;
  }
  case HG_OP_WGMMA_COMMIT:
    for (int j = 0; j < s->n; j++) s->e[j].pos++;
    s->pending++;
    return;
  case HG_OP_WGMMA_WAIT:
    if (op->u.wait_n < s->pending) s->pending = op->u.wait_n;
    st_prune(s);
    return;
  default:
    break;
  }
  for (int j = 0; j < op->num_results; j++) {
    const inflight_t *f = w->wg[out[j]] ? st_find(s, out[j]) : NULL;
    if (f && hg_is_ok(&w->st))
      w->st = hg_error(HG_ERR_INVALID,
                       "kernel '%s': op %d (%s) writes value %d (%s), which a wgmma still in "
                       "flight reads as %s; wait for its group first (wgmma.wait_group): PTX "
                       "ISA \"wgmma.mma_async\" leaves the result undefined",
                       b->name, (int)i, hg_ir_opcode_name(op->code), (int)out[j], hint(b, out[j]),
                       f->acc ? "an accumulator" : "its A fragment");
  }
  for (int j = 0; j < op->num_operands; j++) {
    const inflight_t *f = w->wg[in[j]] ? st_find(s, in[j]) : NULL;
    if (f && f->acc && hg_is_ok(&w->st))
      w->st = hg_error(HG_ERR_INVALID,
                       "kernel '%s': op %d (%s) reads accumulator %d (%s) of a wgmma still in "
                       "flight; wait for its group first (wgmma.wait_group): PTX ISA "
                       "\"wgmma.mma_async\" leaves the value undefined",
                       b->name, (int)i, hg_ir_opcode_name(op->code), (int)in[j], hint(b, in[j]));
  }
}

static void walk(walk_t *w, int32_t from, int32_t to, wstate_t *s);

/* One region opened at ops[i]: returns the index after it. */
static int32_t walk_region(walk_t *w, int32_t i, wstate_t *s) {
  const hg_ir_op_t *op = &w->b->ops[i];
  if (op->code == HG_OP_IF) {
    wstate_t e;
    if (!st_copy(&e, s)) {
      fail_nomem(w);
      return op->close + 1;
    }
    walk(w, i + 1, op->mid >= 0 ? op->mid : op->close, s);
    if (op->mid >= 0) walk(w, op->mid + 1, op->close, &e);
    if (!st_merge(s, &e)) fail_nomem(w);
    st_free(&e);
    return op->close + 1;
  }
  /* FOR, LOOP: two passes over the body; after it, no iteration or some */
  wstate_t entry;
  if (!st_copy(&entry, s)) {
    fail_nomem(w);
    return op->close + 1;
  }
  walk(w, i + 1, op->close, s);
  walk(w, i + 1, op->close, s);
  if (!st_merge(s, &entry)) fail_nomem(w);
  st_free(&entry);
  return op->close + 1;
}

static void walk(walk_t *w, int32_t from, int32_t to, wstate_t *s) {
  for (int32_t i = from; i < to && hg_is_ok(&w->st);) {
    const hg_ir_opcode_t c = w->b->ops[i].code;
    if (c == HG_OP_IF || c == HG_OP_FOR || c == HG_OP_LOOP) {
      i = walk_region(w, i, s);
    } else {
      check_op(w, i, s);
      i++;
    }
  }
}

hg_status_t hg_ir_check_wgmma_registers(const hg_builder_t *b) {
  if (!b->uses_wgmma) return hg_ok();
  walk_t w = {.b = b, .st = hg_ok(), .wg = calloc((size_t)b->nvalues, 1)};
  if (!w.wg) return hg_error(HG_ERR_NOMEM, "out of memory checking kernel '%s'", b->name);
  for (int32_t i = 0; i < b->nops; i++) {
    const hg_ir_op_t *op = &b->ops[i];
    if (op->code != HG_OP_WGMMA) continue;
    const int32_t *in = hg_ir_operands(b, op);
    const int n = hg_ir_wgmma_num_acc(&op->u.wgmma) +
                  (op->u.wgmma.a_regs ? hg_ir_wgmma_num_a(&op->u.wgmma) : 0);
    for (int j = 0; j < n; j++) w.wg[in[j]] = 1;
  }
  wstate_t s = {0};
  walk(&w, 0, b->nops, &s);
  st_free(&s);
  free(w.wg);
  return w.st;
}
