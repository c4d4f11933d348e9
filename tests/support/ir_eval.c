/* The integer subset of the builder IR, interpreted (see ir_eval.h). Values follow the PTX
 * instructions the backends print: two's-complement wrap at the value's width, shifts by
 * at least the width give 0 (or the sign for an arithmetic right shift). */
#include "ir_eval.h"

#include <stdlib.h>
#include <string.h>

#include "emit/ir.h"

static int64_t wrap(hg_type_t t, int64_t v) {
  if (t == HG_T_I32) return (int64_t)(int32_t)(uint32_t)(uint64_t)v;
  if (t == HG_T_PRED) return v != 0;
  return v;
}

static uint64_t umask(hg_type_t t, int64_t v) {
  return t == HG_T_I32 ? (uint64_t)(uint32_t)v : (uint64_t)v;
}

static hg_status_t bin(hg_type_t t, hg_binop_t op, int64_t x, int64_t y, int32_t at, int64_t *r) {
  const int bits = t == HG_T_I32 ? 32 : 64;
  const uint64_t ux = umask(t, x), uy = umask(t, y);
  const int64_t tmin = t == HG_T_I32 ? INT32_MIN : INT64_MIN;
  switch (op) {
  case HG_ADD:
    *r = (int64_t)((uint64_t)x + (uint64_t)y);
    break;
  case HG_SUB:
    *r = (int64_t)((uint64_t)x - (uint64_t)y);
    break;
  case HG_MUL:
    *r = (int64_t)((uint64_t)x * (uint64_t)y);
    break;
  case HG_DIV_S:
  case HG_REM_S:
    if (y == 0 || (x == tmin && y == -1))
      return hg_error(HG_ERR_INVALID, "ir_eval: op %d divides %lld by %lld (signed)", (int)at,
                      (long long)x, (long long)y);
    *r = op == HG_DIV_S ? x / y : x % y;
    break;
  case HG_DIV_U:
  case HG_REM_U:
    if (uy == 0) return hg_error(HG_ERR_INVALID, "ir_eval: op %d divides by zero", (int)at);
    *r = (int64_t)(op == HG_DIV_U ? ux / uy : ux % uy);
    break;
  case HG_MIN_S:
    *r = x < y ? x : y;
    break;
  case HG_MAX_S:
    *r = x > y ? x : y;
    break;
  case HG_MIN_U:
    *r = (int64_t)(ux < uy ? ux : uy);
    break;
  case HG_MAX_U:
    *r = (int64_t)(ux > uy ? ux : uy);
    break;
  case HG_AND:
    *r = x & y;
    break;
  case HG_OR:
    *r = x | y;
    break;
  case HG_XOR:
    *r = x ^ y;
    break;
  case HG_SHL:
    *r = uy >= (uint64_t)bits ? 0 : (int64_t)(ux << uy);
    break;
  case HG_SHR_U:
    *r = uy >= (uint64_t)bits ? 0 : (int64_t)(ux >> uy);
    break;
  case HG_SHR_S:
    *r = x >> (uy >= (uint64_t)bits ? bits - 1 : (int)uy);
    break;
  default:
    return hg_error(HG_ERR_UNSUPPORTED, "ir_eval: op %d is a float operation", (int)at);
  }
  *r = wrap(t, *r);
  return hg_ok();
}

static bool cmp(hg_type_t t, hg_cmp_t op, int64_t x, int64_t y) {
  const uint64_t ux = umask(t, x), uy = umask(t, y);
  switch (op) {
  case HG_EQ:
    return x == y;
  case HG_NE:
    return x != y;
  case HG_LT_S:
    return x < y;
  case HG_LE_S:
    return x <= y;
  case HG_GT_S:
    return x > y;
  case HG_GE_S:
    return x >= y;
  case HG_LT_U:
    return ux < uy;
  case HG_LE_U:
    return ux <= uy;
  case HG_GT_U:
    return ux > uy;
  default:
    return ux >= uy;
  }
}

int64_t ir_eval_get(const ir_eval_t *e, hg_val_t v) {
  return v.id > 0 && v.id < e->n ? e->v[v.id] : 0;
}

void ir_eval_free(ir_eval_t *e) {
  free(e->v);
  e->v = NULL;
  e->n = 0;
}

int ir_eval_op_count(const hg_builder_t *b) {
  return b->nops;
}

int ir_eval_count_bin(const hg_builder_t *b, int from, int bin) {
  int n = 0;
  for (int32_t i = from; i < b->nops; i++) {
    const hg_ir_op_t *op = &b->ops[i];
    if (bin < 0 ? op->code == HG_OP_BIN || op->code == HG_OP_MAD
                : op->code == HG_OP_BIN && (int)op->u.bin == bin)
      n++;
  }
  return n;
}

hg_status_t ir_eval_run(const hg_builder_t *b, const int64_t *params, const int64_t *sregs,
                        ir_eval_t *out) {
  return ir_eval_run_hooks(b, params, sregs, NULL, out);
}

/* Width of a memory op's values in bits. */
static int mem_bits(const hg_ir_op_t *op) {
  if (op->u.mem.bits == 8 || op->u.mem.bits == 16) return op->u.mem.bits;
  return op->u.mem.type == HG_T_I64 ? 64 : 32;
}

hg_status_t ir_eval_run_hooks(const hg_builder_t *b, const int64_t *params, const int64_t *sregs,
                              const ir_eval_hooks_t *hooks, ir_eval_t *out) {
  HG_TRY(hg_builder_status(b));
  int64_t *v = calloc((size_t)b->nvalues + 1, sizeof *v);
  bool *set = calloc((size_t)b->nvalues + 1, sizeof *set);
  if (!v || !set) {
    free(v);
    free(set);
    return hg_error(HG_ERR_NOMEM, "ir_eval: out of memory");
  }
  for (int i = 0; i < b->nparams; i++) {
    int32_t id = b->params[i].value;
    v[id] = wrap(b->params[i].type, params[i]);
    set[id] = true;
  }
  hg_status_t s = hg_ok();
  int64_t steps = 0;
  for (int32_t pc = 0; pc < b->nops && hg_is_ok(&s);) {
    const hg_ir_op_t *op = &b->ops[pc];
    const int32_t *in = hg_ir_operands(b, op), *res = hg_ir_results(b, op);
    int64_t x[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int k = 0; k < op->num_operands && k < 8; k++) {
      if (in[k] == 0) continue;
      if (!set[in[k]]) {
        s = hg_error(HG_ERR_INVALID, "ir_eval: op %d (%s) reads value %d before it is set", (int)pc,
                     hg_ir_opcode_name(op->code), (int)in[k]);
        break;
      }
      x[k] = v[in[k]];
    }
    if (!hg_is_ok(&s)) break;
    if (++steps > 10000000) {
      s = hg_error(HG_ERR_INVALID, "ir_eval: more than 10 million steps (a loop never ends?)");
      break;
    }
    hg_type_t t = op->num_results > 0 ? b->values[res[0]].type : HG_T_NONE;
    int64_t r = 0;
    int32_t next = pc + 1;
    switch (op->code) {
    case HG_OP_COMMENT:
    case HG_OP_ENDIF:
    case HG_OP_LOOP:
    case HG_OP_BAR_SYNC: /* one thread: a barrier waits for no one */
      break;
    case HG_OP_CONST:
      if (t == HG_T_F32)
        s = hg_error(HG_ERR_UNSUPPORTED, "ir_eval: op %d is an F32 constant", (int)pc);
      r = op->u.cnst.i;
      break;
    case HG_OP_VAR:
      r = op->num_operands > 0 && in[0] ? x[0] : 0;
      break;
    case HG_OP_ASSIGN:
      r = x[0];
      break;
    case HG_OP_BIN:
      if (t == HG_T_PRED) {
        r = op->u.bin == HG_AND  ? (x[0] & x[1])
            : op->u.bin == HG_OR ? (x[0] | x[1])
                                 : (x[0] ^ x[1]);
      } else {
        s = bin(t, op->u.bin, x[0], x[1], pc, &r);
      }
      break;
    case HG_OP_MAD:
      r = (int64_t)((uint64_t)x[0] * (uint64_t)x[1] + (uint64_t)x[2]);
      break;
    case HG_OP_NOT:
      r = t == HG_T_PRED ? !x[0] : ~x[0];
      break;
    case HG_OP_CMP:
      r = cmp(b->values[in[0]].type, op->u.cmp, x[0], x[1]);
      break;
    case HG_OP_SELECT:
      r = x[0] ? x[1] : x[2];
      break;
    case HG_OP_SEXT:
      r = (int32_t)x[0];
      break;
    case HG_OP_ZEXT:
      r = (int64_t)(uint32_t)x[0];
      break;
    case HG_OP_TRUNC:
      r = x[0];
      break;
    case HG_OP_SREG:
      if (!sregs)
        s = hg_error(HG_ERR_UNSUPPORTED, "ir_eval: op %d reads a special register", (int)pc);
      else
        r = sregs[op->u.sreg];
      break;
    case HG_OP_IF:
      if (!x[0]) next = (op->mid >= 0 ? op->mid : op->close) + 1;
      break;
    case HG_OP_ELSE: /* reached from the then-branch */
      next = op->close + 1;
      break;
    case HG_OP_BREAK_IF:
      if (x[0]) next = b->ops[op->open].close + 1;
      break;
    case HG_OP_ENDLOOP:
      next = op->open + 1;
      break;
    case HG_OP_FOR:
      r = x[0];
      if (!(wrap(HG_T_I32, r) < x[1])) next = op->close + 1;
      break;
    case HG_OP_ENDFOR: {
      const hg_ir_op_t *f = &b->ops[op->open];
      const int32_t *fin = hg_ir_operands(b, f), *fres = hg_ir_results(b, f);
      int64_t c = wrap(HG_T_I32, v[fres[0]] + v[fin[2]]);
      v[fres[0]] = c;
      if (c < v[fin[1]]) next = op->open + 1;
      break;
    }
    case HG_OP_RETURN:
      next = b->nops;
      break;
    case HG_OP_LOAD: {
      /* a vector load: n consecutive elements, each through the hook */
      if (!hooks || !hooks->load || t == HG_T_F32) {
        s = hg_error(HG_ERR_UNSUPPORTED, "ir_eval: op %d (load) needs a load hook, integers",
                     (int)pc);
        break;
      }
      const int bits = mem_bits(op);
      for (int k = 0; k < op->u.mem.n; k++) {
        v[res[k]] = wrap(t, hooks->load(hooks->ctx, op->u.mem.space, bits, x[0] + k * bits / 8));
        set[res[k]] = true;
      }
      r = v[res[0]];
      break;
    }
    case HG_OP_STORE: {
      if (!hooks || !hooks->store || op->u.mem.type == HG_T_F32) {
        s = hg_error(HG_ERR_UNSUPPORTED, "ir_eval: op %d (store) needs a store hook, integers",
                     (int)pc);
        break;
      }
      const int bits = mem_bits(op);
      for (int k = 0; k < op->u.mem.n; k++)
        hooks->store(hooks->ctx, op->u.mem.space, bits, x[0] + k * bits / 8, x[1 + k]);
      break;
    }
    case HG_OP_CP_ASYNC:
      if (!hooks || !hooks->cp_async) {
        s = hg_error(HG_ERR_UNSUPPORTED, "ir_eval: op %d (cp.async) needs a hook", (int)pc);
        break;
      }
      hooks->cp_async(hooks->ctx, op->u.cp_async.bytes, x[0], x[1],
                      in[2] ? x[2] : op->u.cp_async.bytes);
      break;
    case HG_OP_LDMATRIX: {
      if (!hooks || !hooks->ldmatrix) {
        s = hg_error(HG_ERR_UNSUPPORTED, "ir_eval: op %d (ldmatrix) needs a hook", (int)pc);
        break;
      }
      int64_t regs[4] = {0, 0, 0, 0};
      hooks->ldmatrix(hooks->ctx, op->u.matrix.num, op->u.matrix.trans, x[0], regs);
      for (int k = 0; k < op->num_results; k++) {
        v[res[k]] = wrap(HG_T_I32, regs[k]);
        set[res[k]] = true;
      }
      break;
    }
    case HG_OP_SMEM_ADDR:
      r = op->u.smem_offset; /* the dynamic shared memory's base taken as address 0 */
      break;
    default:
      s = hg_error(HG_ERR_UNSUPPORTED, "ir_eval: op %d (%s) is outside the integer subset", (int)pc,
                   hg_ir_opcode_name(op->code));
    }
    if (op->num_results > 0 && op->code != HG_OP_ENDFOR && op->code != HG_OP_LDMATRIX &&
        op->code != HG_OP_LOAD) {
      v[res[0]] = wrap(t, r);
      set[res[0]] = true;
    }
    pc = next;
  }
  free(set);
  if (!hg_is_ok(&s)) {
    free(v);
    return s;
  }
  out->v = v;
  out->n = b->nvalues;
  out->steps = steps;
  return hg_ok();
}
