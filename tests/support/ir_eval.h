/* A CPU interpreter for the integer and predicate subset of a builder's IR (src/emit/ir.h):
 * constants, integer arithmetic with the PTX width semantics (I32 wraps, shifts past the
 * width saturate), comparisons, selects, width changes, variables, and structured control
 * flow, with the kernel's parameters (and optionally its special registers) given as
 * numbers. Tests build the arithmetic a layer emits and check it against host arithmetic
 * without a GPU; anything outside the subset (memory, barriers but bar.sync, which one
 * thread passes, floats, TMA) is an error. */
#ifndef HG_TEST_IR_EVAL_H
#define HG_TEST_IR_EVAL_H

#include <stdint.h>

#include "hopgen/emit.h"

/* The value of every builder value after a run (I32 sign-extended, PRED 0 or 1). */
typedef struct ir_eval {
  int64_t *v;
  int32_t n;
  int64_t steps; /* ops executed */
} ir_eval_t;

/* Runs the kernel body once. params[i] is parameter i's value (b's declaration order);
 * sregs (NULL: none) is indexed by hg_sreg_t. A division by zero, an overflowing signed
 * division, a value read before it is set, or more than 10 million steps is an error. */
hg_status_t ir_eval_run(const hg_builder_t *b, const int64_t *params, const int64_t *sregs,
                        ir_eval_t *out);
/* Memory seen by a run: with hooks, loads, stores, cp.async and ldmatrix call back instead of
 * being errors (NULL hooks: still errors). load returns the value (integer bits; bits = 8/16
 * for narrow loads, 32/64 otherwise); ldmatrix gets the lane's row address and fills num
 * registers (the test decides what a single lane sees). */
typedef struct ir_eval_hooks {
  void *ctx;
  int64_t (*load)(void *ctx, hg_space_t space, int bits, int64_t addr);
  void (*store)(void *ctx, hg_space_t space, int bits, int64_t addr, int64_t value);
  void (*cp_async)(void *ctx, int bytes, int64_t dst, int64_t src, int64_t src_bytes);
  void (*ldmatrix)(void *ctx, int num, bool trans, int64_t addr, int64_t *regs);
} ir_eval_hooks_t;

hg_status_t ir_eval_run_hooks(const hg_builder_t *b, const int64_t *params, const int64_t *sregs,
                              const ir_eval_hooks_t *hooks, ir_eval_t *out);
int64_t ir_eval_get(const ir_eval_t *e, hg_val_t v);
void ir_eval_free(ir_eval_t *e);
/* Ops recorded in the builder (what a test inspects to see that static parts folded). */
int ir_eval_op_count(const hg_builder_t *b);
/* Integer BIN ops of code bin (bin < 0: every BIN and MAD) among ops [from, end). */
int ir_eval_count_bin(const hg_builder_t *b, int from, int bin);

#endif
