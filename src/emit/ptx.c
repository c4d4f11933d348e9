/* The PTX backend: prints the builder's IR (ir.h) as PTX ISA 8.x for sm_90a.
 *
 * One pass over the ops writes the body; registers, then the header, are written once
 * the body is known (temporaries are counted while printing). Every value gets its own
 * virtual register (ptxas allocates the physical ones), named after its type and id and,
 * where the builder knows it, its origin: %r7_ctaid_x, %rd3_A (a parameter), %f40_v.
 *
 * Version: .version 8.0 covers every instruction hopgen emits (wgmma, setmaxnreg,
 * elect.sync, cp.async.bulk.tensor/prefetch/reduce, mbarrier expect_tx, fence.proxy.async,
 * barrier.cluster.*.relaxed, stmatrix, cvta.param, and the sm_80 ones: cp.async with its
 * commit/wait and mbarrier arrive, ldmatrix, mma.sync). The one exception is wgmma with mixed
 * integer operands (s8 x u8, u8 x s8), which ptxas accepts only from PTX ISA 8.4; such a
 * kernel says .version 8.4, as does fp8 mma.sync (m16n8k32 e4m3/e5m2); and vector reductions
 * (red.global.add.v2/v4.f32), from 8.1. The lowest sufficient version keeps the PTX loadable by the
 * oldest drivers that know sm_90a (a CUDA 12.0 driver JIT-compiles PTX 8.0). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit/ir.h"
#include "emit/sbuf.h"

/* ----------------------------------------------------------------------------- printer */

#define NAME_BYTES 48

typedef struct printer {
  const hg_builder_t *b;
  hg_sbuf_t body;
  char (*names)[NAME_BYTES]; /* register name of each value id */
  int ntp, nth, ntr, ntrd;   /* temporaries used: .pred, .b16, .b32, .b64 */
  int depth;                 /* current indentation */
} printer_t;

static const char *prefix_of(hg_type_t t) {
  switch (t) {
  case HG_T_PRED:
    return "%p";
  case HG_T_I32:
    return "%r";
  case HG_T_F32:
    return "%f";
  default: /* I64 and TMAP (the tensor map's generic address) */
    return "%rd";
  }
}

static const char *reg_type(hg_type_t t) {
  switch (t) {
  case HG_T_PRED:
    return ".pred";
  case HG_T_I32:
    return ".b32";
  case HG_T_F32:
    return ".f32";
  default:
    return ".b64";
  }
}

/* The mov suffix that copies a value of type t. */
static const char *mov_type(hg_type_t t) {
  switch (t) {
  case HG_T_PRED:
    return "pred";
  case HG_T_I32:
    return "b32";
  case HG_T_F32:
    return "f32";
  default:
    return "b64";
  }
}

static const char *R(const printer_t *p, int32_t id) {
  return p->names[id];
}

/* One instruction line, indented by nesting depth. */
static void ins(printer_t *p, const char *fmt, ...) HG_PRINTF(2, 3);
static void ins(printer_t *p, const char *fmt, ...) {
  hg_sbuf_put(&p->body, "\t%*s", 2 * p->depth, "");
  va_list ap;
  va_start(ap, fmt);
  hg_sbuf_vput(&p->body, fmt, ap);
  va_end(ap);
  hg_sbuf_put(&p->body, "\n");
}

static void label(printer_t *p, const char *fmt, int32_t n) {
  hg_sbuf_put(&p->body, "$L%d_%s:\n", n, fmt);
}

static int tmp_pred(printer_t *p) {
  return p->ntp++;
}
static int tmp_b16(printer_t *p) {
  return p->nth++;
}
static int tmp_b32(printer_t *p) {
  return p->ntr++;
}
static int tmp_b64(printer_t *p) {
  return p->ntrd++;
}

/* A {a, b, ...} list of operand registers, wrapped every 8 for long lists. */
static void put_list(printer_t *p, const int32_t *ids, int n) {
  hg_sbuf_put(&p->body, "{");
  for (int k = 0; k < n; k++) {
    if (k && k % 8 == 0)
      hg_sbuf_put(&p->body, ",\n\t%*s    ", 2 * p->depth, "");
    else if (k)
      hg_sbuf_put(&p->body, ", ");
    hg_sbuf_put(&p->body, "%s", R(p, ids[k]));
  }
  hg_sbuf_put(&p->body, "}");
}

/* ----------------------------------------------------------------------------- op tables */

static const char *binop_ptx(hg_binop_t op, hg_type_t t) {
  bool w = t == HG_T_I64;
  switch (op) {
  case HG_ADD:
    return t == HG_T_PRED ? NULL : w ? "add.s64" : "add.s32";
  case HG_SUB:
    return w ? "sub.s64" : "sub.s32";
  case HG_MUL:
    return w ? "mul.lo.s64" : "mul.lo.s32";
  case HG_DIV_S:
    return w ? "div.s64" : "div.s32";
  case HG_DIV_U:
    return w ? "div.u64" : "div.u32";
  case HG_REM_S:
    return w ? "rem.s64" : "rem.s32";
  case HG_REM_U:
    return w ? "rem.u64" : "rem.u32";
  case HG_MIN_S:
    return w ? "min.s64" : "min.s32";
  case HG_MAX_S:
    return w ? "max.s64" : "max.s32";
  case HG_MIN_U:
    return w ? "min.u64" : "min.u32";
  case HG_MAX_U:
    return w ? "max.u64" : "max.u32";
  case HG_AND:
    return t == HG_T_PRED ? "and.pred" : w ? "and.b64" : "and.b32";
  case HG_OR:
    return t == HG_T_PRED ? "or.pred" : w ? "or.b64" : "or.b32";
  case HG_XOR:
    return t == HG_T_PRED ? "xor.pred" : w ? "xor.b64" : "xor.b32";
  case HG_SHL:
    return w ? "shl.b64" : "shl.b32";
  case HG_SHR_S:
    return w ? "shr.s64" : "shr.s32";
  case HG_SHR_U:
    return w ? "shr.u64" : "shr.u32";
  /* .rn keeps ptxas from contracting a separate mul and add into an fma, so results
   * match a reference that rounds each step */
  case HG_FADD:
    return "add.rn.f32";
  case HG_FSUB:
    return "sub.rn.f32";
  case HG_FMUL:
    return "mul.rn.f32";
  case HG_FMIN:
    return "min.f32";
  case HG_FMAX:
    return "max.f32";
  }
  return NULL;
}

static const char *cmp_ptx(hg_cmp_t op) {
  switch (op) {
  case HG_EQ:
    return "eq";
  case HG_NE:
    return "ne";
  case HG_LT_S:
  case HG_LT_U:
  case HG_FLT:
    return "lt";
  case HG_LE_S:
  case HG_LE_U:
  case HG_FLE:
    return "le";
  case HG_GT_S:
  case HG_GT_U:
  case HG_FGT:
    return "gt";
  case HG_GE_S:
  case HG_GE_U:
  case HG_FGE:
    return "ge";
  case HG_FEQ:
    return "eq";
  }
  return "?";
}

static const char *cmp_type(hg_cmp_t op, hg_type_t t) {
  if (op >= HG_FLT) return "f32";
  bool u = op >= HG_LT_U && op <= HG_GE_U;
  if (t == HG_T_I64) return u ? "u64" : "s64";
  return u ? "u32" : "s32";
}

static const char *const sreg_ptx[] = {
    [HG_TID_X] = "%tid.x",
    [HG_TID_Y] = "%tid.y",
    [HG_TID_Z] = "%tid.z",
    [HG_NTID_X] = "%ntid.x",
    [HG_CTAID_X] = "%ctaid.x",
    [HG_CTAID_Y] = "%ctaid.y",
    [HG_CTAID_Z] = "%ctaid.z",
    [HG_NCTAID_X] = "%nctaid.x",
    [HG_NCTAID_Y] = "%nctaid.y",
    [HG_NCTAID_Z] = "%nctaid.z",
    [HG_LANEID] = "%laneid",
    [HG_CLUSTER_CTARANK] = "%cluster_ctarank",
    [HG_CLUSTER_NCTARANK] = "%cluster_nctarank",
    [HG_CLUSTER_CTAID_X] = "%cluster_ctaid.x",
    [HG_CLUSTER_CTAID_Y] = "%cluster_ctaid.y",
    [HG_CLUSTER_CTAID_Z] = "%cluster_ctaid.z",
    [HG_CLUSTERID_X] = "%clusterid.x",
    [HG_CLUSTERID_Y] = "%clusterid.y",
    [HG_CLUSTERID_Z] = "%clusterid.z",
    [HG_NCLUSTERID_X] = "%nclusterid.x",
    [HG_NCLUSTERID_Y] = "%nclusterid.y",
    [HG_NCLUSTERID_Z] = "%nclusterid.z",
    [HG_SMID] = "%smid",
};

static const char *const reduce_ptx[] = {
    [HG_RED_ADD] = "add", [HG_RED_MIN] = "min", [HG_RED_MAX] = "max", [HG_RED_INC] = "inc",
    [HG_RED_DEC] = "dec", [HG_RED_AND] = "and", [HG_RED_OR] = "or",   [HG_RED_XOR] = "xor",
};

static const char *const policy_ptx[] = {
    [HG_EVICT_NORMAL] = "evict_normal",
    [HG_EVICT_FIRST] = "evict_first",
    [HG_EVICT_LAST] = "evict_last",
};

/* ld/st type suffix: narrow unsigned for 8/16 bits, else the element type. */
static const char *mem_type(const hg_ir_op_t *op) {
  if (op->u.mem.bits == 8) return "u8";
  if (op->u.mem.bits == 16) return "u16";
  switch (op->u.mem.type) {
  case HG_T_F32:
    return "f32";
  case HG_T_I64:
    return "u64";
  default:
    return "u32";
  }
}

static const char *vec_prefix(int n) {
  return n == 4 ? "v4." : n == 2 ? "v2." : "";
}

/* ----------------------------------------------------------------------------- ops */

/* The address operand of a memory op, as "[reg]"; a global address goes through
 * cvta.to.global first (a no-op on every NVIDIA GPU, but what the ISA asks of a
 * generic pointer used with .global). */
static const char *mem_space(printer_t *p, const hg_ir_op_t *op, int32_t addr, char *buf,
                             size_t size) {
  switch (op->u.mem.space) {
  case HG_GLOBAL: {
    int t = tmp_b64(p);
    ins(p, "cvta.to.global.u64 %%trd%d, %s;", t, R(p, addr));
    snprintf(buf, size, "[%%trd%d]", t);
    return "global";
  }
  case HG_SHARED:
    snprintf(buf, size, "[%s]", R(p, addr));
    return "shared";
  default:
    snprintf(buf, size, "[%s]", R(p, addr));
    return "shared::cluster";
  }
}

static void print_coords(printer_t *p, const int32_t *c, int rank, char *buf, size_t size) {
  size_t at = 0;
  at += (size_t)snprintf(buf + at, size - at, "{");
  for (int k = 0; k < rank; k++)
    at += (size_t)snprintf(buf + at, size - at, "%s%s", k ? ", " : "", R(p, c[k]));
  snprintf(buf + at, size - at, "}");
}

static void print_wgmma(printer_t *p, const hg_ir_op_t *op) {
  const hg_builder_t *b = p->b;
  const hg_wgmma_op_t *w = &op->u.wgmma;
  const int32_t *o = hg_ir_operands(b, op);
  int nacc = hg_ir_wgmma_num_acc(w), na = hg_ir_wgmma_num_a(w);
  int k = hg_ir_wgmma_k(w);
  bool integer = w->acc == HG_S32;
  bool sixteen = w->a == HG_F16 || w->a == HG_BF16;
  hg_sbuf_put(&p->body, "\t%*swgmma.mma_async.sync.aligned.m64n%dk%d.%s.%s.%s ", 2 * p->depth, "",
              w->n, k, hg_dtype_name(w->acc), hg_dtype_name(w->a), hg_dtype_name(w->b));
  put_list(p, o, nacc);
  hg_sbuf_put(&p->body, ",\n\t%*s    ", 2 * p->depth, "");
  if (w->a_regs)
    put_list(p, o + nacc, na);
  else
    hg_sbuf_put(&p->body, "%s", R(p, o[nacc]));
  /* operand order (PTX ISA, wgmma.mma_async): d, a, b-desc, scale-d, then for float types
   * imm-scale-a, imm-scale-b (1 = no negation), then for f16/bf16 imm-trans-a (only when
   * A is a descriptor) and imm-trans-b */
  hg_sbuf_put(&p->body, ", %s, %s", R(p, o[nacc + na]), R(p, o[nacc + na + 1]));
  if (!integer) hg_sbuf_put(&p->body, ", 1, 1");
  if (sixteen) {
    if (!w->a_regs) hg_sbuf_put(&p->body, ", %d", w->trans_a ? 1 : 0);
    hg_sbuf_put(&p->body, ", %d", w->trans_b ? 1 : 0);
  }
  hg_sbuf_put(&p->body, ";\n");
}

/* One element's global reduction (PTX ISA "red": relaxed, .gpu scope by default). The
 * instruction's type: .u32/.s32/.u64/.f32 as the element; .b32/.b64 for the bitwise ops;
 * f16/bf16 add takes a .b16 register (the I32's low half) and .noftz (the only form, which
 * keeps subnormals as the TMA reduction does); f16/bf16 min/max are hg_ir_red_cas_ptx's loop. */
static void print_red(printer_t *p, const hg_ir_op_t *op, const int32_t *o) {
  const hg_reduce_op_t red = op->u.red.op;
  const hg_dtype_t t = op->u.red.dtype;
  const char *cas = hg_ir_red_cas_ptx(red, t);
  if (cas) {
    /* the shared text, $0 and $1 replaced by this op's registers, one line per line */
    hg_sbuf_put(&p->body, "\t%*s", 2 * p->depth, "");
    for (const char *c = cas; *c; c++) {
      if (c[0] == '$' && (c[1] == '0' || c[1] == '1')) {
        hg_sbuf_put(&p->body, "%s", R(p, o[c[1] - '0']));
        c++;
      } else if (c[0] == '\n') {
        hg_sbuf_put(&p->body, "\n");
        if (c[1]) hg_sbuf_put(&p->body, "\t%*s", 2 * p->depth, "");
      } else {
        hg_sbuf_put(&p->body, "%c", c[0]);
      }
    }
    return;
  }
  int a = tmp_b64(p);
  ins(p, "cvta.to.global.u64 %%trd%d, %s;", a, R(p, o[0]));
  const bool bitwise = red == HG_RED_AND || red == HG_RED_OR || red == HG_RED_XOR;
  if (t == HG_F16 || t == HG_BF16) {
    int h = tmp_b16(p);
    ins(p, "cvt.u16.u32 %%th%d, %s;", h, R(p, o[1]));
    ins(p, "red.global.%s.noftz.%s [%%trd%d], %%th%d;", reduce_ptx[red], hg_dtype_name(t), a, h);
    return;
  }
  const char *type = bitwise ? (t == HG_U64 ? "b64" : "b32") : hg_dtype_name(t);
  ins(p, "red.global.%s.%s [%%trd%d], %s;", reduce_ptx[red], type, a, R(p, o[1]));
}

static void print_op(printer_t *p, int32_t i) {
  const hg_builder_t *b = p->b;
  const hg_ir_op_t *op = &b->ops[i];
  const int32_t *o = hg_ir_operands(b, op);
  const int32_t *r = hg_ir_results(b, op);
  char a1[96], a2[400];

  switch (op->code) {
  case HG_OP_COMMENT: {
    const char *t = hg_ir_comment_text(b, op);
    while (*t) {
      const char *nl = strchr(t, '\n');
      int len = nl ? (int)(nl - t) : (int)strlen(t);
      /* PTX source is ASCII: control and non-ASCII bytes become '?' in comments */
      hg_sbuf_put(&p->body, "\t%*s// ", 2 * p->depth, "");
      for (int c = 0; c < len; c++) {
        unsigned char ch = (unsigned char)t[c];
        hg_sbuf_put(&p->body, "%c", ch < 0x20 || ch >= 0x7f ? '?' : (char)ch);
      }
      hg_sbuf_put(&p->body, "\n");
      t += len + (nl ? 1 : 0);
    }
    break;
  }
  case HG_OP_CONST: {
    hg_type_t t = b->values[r[0]].type;
    if (t == HG_T_F32) {
      uint32_t bits;
      float f = op->u.cnst.f;
      memcpy(&bits, &f, sizeof bits);
      ins(p, "mov.f32 %s, 0f%08" PRIX32 "; // %g", R(p, r[0]), bits, (double)f);
    } else if (t == HG_T_PRED) {
      ins(p, "mov.pred %s, %d;", R(p, r[0]), op->u.cnst.i ? 1 : 0);
    } else if (t == HG_T_I64 && op->u.cnst.i == INT64_MIN) {
      ins(p, "mov.b64 %s, 0x8000000000000000;", R(p, r[0]));
    } else {
      ins(p, "mov.%s %s, %" PRId64 ";", mov_type(t), R(p, r[0]), op->u.cnst.i);
    }
    break;
  }
  case HG_OP_VAR:
    if (o[0]) ins(p, "mov.%s %s, %s;", mov_type(b->values[r[0]].type), R(p, r[0]), R(p, o[0]));
    break;
  case HG_OP_ASSIGN:
    ins(p, "mov.%s %s, %s;", mov_type(b->values[r[0]].type), R(p, r[0]), R(p, o[0]));
    break;
  case HG_OP_BIN: {
    hg_type_t t = b->values[o[0]].type;
    const char *name = binop_ptx(op->u.bin, t);
    bool shift = op->u.bin == HG_SHL || op->u.bin == HG_SHR_S || op->u.bin == HG_SHR_U;
    if (shift && t == HG_T_I64) {
      /* PTX shift amounts are .u32 whatever the shifted width */
      int s = tmp_b32(p);
      ins(p, "cvt.u32.u64 %%tr%d, %s;", s, R(p, o[1]));
      ins(p, "%s %s, %s, %%tr%d;", name, R(p, r[0]), R(p, o[0]), s);
    } else {
      ins(p, "%s %s, %s, %s;", name, R(p, r[0]), R(p, o[0]), R(p, o[1]));
    }
    break;
  }
  case HG_OP_MAD:
    ins(p, "mad.lo.%s %s, %s, %s, %s;", b->values[r[0]].type == HG_T_I64 ? "s64" : "s32",
        R(p, r[0]), R(p, o[0]), R(p, o[1]), R(p, o[2]));
    break;
  case HG_OP_FFMA:
    ins(p, "fma.rn.f32 %s, %s, %s, %s;", R(p, r[0]), R(p, o[0]), R(p, o[1]), R(p, o[2]));
    break;
  case HG_OP_FUNARY: {
    static const char *const ins_name[] = {"abs.f32", "neg.f32", "ex2.approx.ftz.f32",
                                           "rcp.approx.ftz.f32", "tanh.approx.f32"};
    ins(p, "%s %s, %s;", ins_name[op->u.funary], R(p, r[0]), R(p, o[0]));
    break;
  }
  case HG_OP_NOT: {
    hg_type_t t = b->values[r[0]].type;
    ins(p, "not.%s %s, %s;",
        t == HG_T_PRED  ? "pred"
        : t == HG_T_I64 ? "b64"
                        : "b32",
        R(p, r[0]), R(p, o[0]));
    break;
  }
  case HG_OP_CMP:
    ins(p, "setp.%s.%s %s, %s, %s;", cmp_ptx(op->u.cmp), cmp_type(op->u.cmp, b->values[o[0]].type),
        R(p, r[0]), R(p, o[0]), R(p, o[1]));
    break;
  case HG_OP_SELECT: {
    hg_type_t t = b->values[r[0]].type;
    if (t == HG_T_PRED) { /* selp has no .pred form */
      ins(p, "@%s mov.pred %s, %s;", R(p, o[0]), R(p, r[0]), R(p, o[1]));
      ins(p, "@!%s mov.pred %s, %s;", R(p, o[0]), R(p, r[0]), R(p, o[2]));
    } else {
      ins(p, "selp.%s %s, %s, %s, %s;", mov_type(t), R(p, r[0]), R(p, o[1]), R(p, o[2]),
          R(p, o[0]));
    }
    break;
  }
  case HG_OP_SEXT:
    ins(p, "cvt.s64.s32 %s, %s;", R(p, r[0]), R(p, o[0]));
    break;
  case HG_OP_ZEXT:
    ins(p, "cvt.u64.u32 %s, %s;", R(p, r[0]), R(p, o[0]));
    break;
  case HG_OP_TRUNC:
    ins(p, "cvt.u32.u64 %s, %s;", R(p, r[0]), R(p, o[0]));
    break;
  case HG_OP_I2F:
    ins(p, "cvt.rn.f32.s32 %s, %s;", R(p, r[0]), R(p, o[0]));
    break;
  case HG_OP_F2I:
    ins(p, "cvt.rzi.s32.f32 %s, %s;", R(p, r[0]), R(p, o[0]));
    break;
  case HG_OP_BITCAST:
    ins(p, "mov.b32 %s, %s;", R(p, r[0]), R(p, o[0]));
    break;
  case HG_OP_PACK_F32X2:
    if (op->u.dtype == HG_E4M3 || op->u.dtype == HG_E5M2) {
      /* cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, a, b: a in the upper byte, like f16x2 */
      int h = tmp_b16(p);
      ins(p, "cvt.rn.satfinite.%s.f32 %%th%d, %s, %s; // lo = %s in bits 0..7",
          op->u.dtype == HG_E4M3 ? "e4m3x2" : "e5m2x2", h, R(p, o[1]), R(p, o[0]), R(p, o[0]));
      ins(p, "cvt.u32.u16 %s, %%th%d;", R(p, r[0]), h);
      break;
    }
    /* cvt.rn.{bf16x2,f16x2}.f32 d, a, b puts a in the UPPER half: hi goes first */
    ins(p, "cvt.rn.%s.f32 %s, %s, %s; // lo = %s in bits 0..15",
        op->u.dtype == HG_BF16 ? "bf16x2" : "f16x2", R(p, r[0]), R(p, o[1]), R(p, o[0]),
        R(p, o[0]));
    break;
  case HG_OP_UNPACK_F32: {
    switch (op->u.dtype) {
    case HG_BF16: { /* bf16 is the top half of an f32: shift, no rounding needed */
      int t = tmp_b32(p);
      ins(p, "shl.b32 %%tr%d, %s, 16;", t, R(p, o[0]));
      ins(p, "mov.b32 %s, %%tr%d;", R(p, r[0]), t);
      break;
    }
    case HG_F16: {
      int h = tmp_b16(p);
      ins(p, "cvt.u16.u32 %%th%d, %s;", h, R(p, o[0]));
      ins(p, "cvt.f32.f16 %s, %%th%d;", R(p, r[0]), h);
      break;
    }
    default: { /* e4m3/e5m2: the low byte, via f16x2 (exact), then f16 -> f32 (exact) */
      int h = tmp_b16(p), t = tmp_b32(p), h2 = tmp_b16(p);
      ins(p, "cvt.u16.u32 %%th%d, %s;", h, R(p, o[0]));
      ins(p, "cvt.rn.f16x2.%s %%tr%d, %%th%d;", op->u.dtype == HG_E4M3 ? "e4m3x2" : "e5m2x2", t, h);
      ins(p, "cvt.u16.u32 %%th%d, %%tr%d; // low half = the low byte's value", h2, t);
      ins(p, "cvt.f32.f16 %s, %%th%d;", R(p, r[0]), h2);
      break;
    }
    }
    break;
  }
  case HG_OP_SREG:
    ins(p, "mov.u32 %s, %s;", R(p, r[0]), sreg_ptx[op->u.sreg]);
    break;
  case HG_OP_CLOCK64:
    ins(p, "mov.u64 %s, %%clock64;", R(p, r[0]));
    break;
  case HG_OP_SMEM_ADDR:
    if (op->u.smem_offset == 0)
      ins(p, "mov.b32 %s, %%smem_base;", R(p, r[0]));
    else
      ins(p, "add.s32 %s, %%smem_base, %" PRIu32 ";", R(p, r[0]), op->u.smem_offset);
    break;

  case HG_OP_IF:
    ins(p, "@!%s bra $L%d_%s;", R(p, o[0]), i, op->mid >= 0 ? "else" : "endif");
    p->depth++;
    break;
  case HG_OP_ELSE:
    ins(p, "bra.uni $L%d_endif;", op->open);
    p->depth--;
    label(p, "else", op->open);
    p->depth++;
    break;
  case HG_OP_ENDIF:
    p->depth--;
    label(p, "endif", op->open);
    break;
  case HG_OP_LOOP:
    label(p, "loop", i);
    p->depth++;
    break;
  case HG_OP_BREAK_IF:
    ins(p, "@%s bra $L%d_endloop;", R(p, o[0]), op->open);
    break;
  case HG_OP_ENDLOOP:
    ins(p, "bra.uni $L%d_loop;", op->open);
    p->depth--;
    label(p, "endloop", op->open);
    break;
  case HG_OP_FOR: {
    int t = tmp_pred(p);
    ins(p, "mov.b32 %s, %s;", R(p, r[0]), R(p, o[0]));
    label(p, "for", i);
    p->depth++;
    ins(p, "setp.ge.s32 %%tp%d, %s, %s;", t, R(p, r[0]), R(p, o[1]));
    ins(p, "@%%tp%d bra $L%d_endfor;", t, i);
    break;
  }
  case HG_OP_ENDFOR: {
    const hg_ir_op_t *f = &b->ops[op->open];
    const int32_t *fo = hg_ir_operands(b, f);
    int32_t counter = hg_ir_results(b, f)[0];
    ins(p, "add.s32 %s, %s, %s;", R(p, counter), R(p, counter), R(p, fo[2]));
    ins(p, "bra.uni $L%d_for;", op->open);
    p->depth--;
    label(p, "endfor", op->open);
    break;
  }
  case HG_OP_RETURN:
    ins(p, "ret;");
    break;

  case HG_OP_LOAD: {
    const char *space = mem_space(p, op, o[0], a1, sizeof a1);
    if (op->u.mem.n == 1)
      ins(p, "ld.%s.%s %s, %s;", space, mem_type(op), R(p, r[0]), a1);
    else {
      hg_sbuf_put(&p->body, "\t%*sld.%s.%s%s ", 2 * p->depth, "", space, vec_prefix(op->u.mem.n),
                  mem_type(op));
      put_list(p, r, op->u.mem.n);
      hg_sbuf_put(&p->body, ", %s;\n", a1);
    }
    break;
  }
  case HG_OP_STORE: {
    const char *space = mem_space(p, op, o[0], a1, sizeof a1);
    /* PTX ISA st: st{.ss}{.cop}{.vec}.type, the cache operator after the space */
    const char *cop = op->u.mem.cs ? ".cs" : "";
    if (op->u.mem.n == 1)
      ins(p, "st.%s%s.%s %s, %s;", space, cop, mem_type(op), a1, R(p, o[1]));
    else {
      hg_sbuf_put(&p->body, "\t%*sst.%s%s.%s%s %s, ", 2 * p->depth, "", space, cop,
                  vec_prefix(op->u.mem.n), mem_type(op), a1);
      put_list(p, o + 1, op->u.mem.n);
      hg_sbuf_put(&p->body, ";\n");
    }
    break;
  }
  case HG_OP_ATOMIC_ADD_F32: {
    int t = tmp_b64(p);
    ins(p, "cvta.to.global.u64 %%trd%d, %s;", t, R(p, o[0]));
    if (op->u.mem.n <= 1) {
      ins(p, "red.global.add.f32 [%%trd%d], %s;", t, R(p, o[1]));
    } else {
      hg_sbuf_put(&p->body, "\t%*sred.global.add.v%d.f32 [%%trd%d], ", 2 * p->depth, "",
                  op->u.mem.n, t);
      put_list(p, o + 1, op->u.mem.n);
      hg_sbuf_put(&p->body, ";\n");
    }
    break;
  }
  case HG_OP_ATOMIC_ADD_U32: {
    int t = tmp_b64(p);
    ins(p, "cvta.to.global.u64 %%trd%d, %s;", t, R(p, o[0]));
    ins(p, "atom.global.add.u32 %s, [%%trd%d], %s;", R(p, r[0]), t, R(p, o[1]));
    break;
  }
  case HG_OP_RED:
    print_red(p, op, o);
    break;
  case HG_OP_REDUX: {
    static const char *const kinds[] = {"add.u32", "min.u32", "max.u32", "",
                                        "",        "and.b32", "or.b32",  "xor.b32"};
    ins(p, "redux.sync.%s %s, %s, 0xffffffff;", kinds[op->u.red.op], R(p, r[0]), R(p, o[0]));
    break;
  }
  case HG_OP_MAPA:
    ins(p, "mapa.shared::cluster.u32 %s, %s, %s;", R(p, r[0]), R(p, o[0]), R(p, o[1]));
    break;

  case HG_OP_BAR_SYNC:
    if (op->u.bar.threads)
      ins(p, "bar.sync %d, %d;", op->u.bar.id, op->u.bar.threads);
    else
      ins(p, "bar.sync %d;", op->u.bar.id);
    break;
  case HG_OP_BAR_ARRIVE:
    ins(p, "bar.arrive %d, %d;", op->u.bar.id, op->u.bar.threads);
    break;
  case HG_OP_FENCE_PROXY_ASYNC:
    ins(p, "fence.proxy.async.shared::cta;");
    break;
  case HG_OP_FENCE_GPU:
    ins(p, "fence.acq_rel.gpu;");
    break;
  case HG_OP_GRIDDEP_WAIT:
    ins(p, "griddepcontrol.wait;");
    break;
  case HG_OP_GRIDDEP_LAUNCH:
    ins(p, "griddepcontrol.launch_dependents;");
    break;
  case HG_OP_FENCE_MBAR_INIT:
    ins(p, "fence.mbarrier_init.release.cluster;");
    break;
  case HG_OP_CLUSTER_ARRIVE:
    ins(p, "barrier.cluster.arrive%s;", op->u.relaxed ? ".relaxed" : "");
    break;
  case HG_OP_CLUSTER_WAIT:
    ins(p, "barrier.cluster.wait;");
    break;
  case HG_OP_ELECT_SYNC:
    ins(p, "elect.sync _|%s, 0xffffffff;", R(p, r[0]));
    break;
  case HG_OP_MBAR_INIT:
    ins(p, "mbarrier.init.shared::cta.b64 [%s], %s;", R(p, o[0]), R(p, o[1]));
    break;
  case HG_OP_MBAR_ARRIVE:
    ins(p, "mbarrier.arrive.shared::cta.b64 _, [%s];", R(p, o[0]));
    break;
  case HG_OP_MBAR_ARRIVE_CLUSTER: {
    /* the remote barrier's shared::cluster address, then an arrive with the default
     * semantics (.release at .cta scope; the state result must be the sink _ for
     * shared::cluster). Not .release.cluster: ptxas implements that with MEMBAR.ALL.GPU
     * before every arrive (seen in sm_90a SASS), which cost a GEMM about 30% when each
     * consumer warp releases every pipeline stage to its cluster peers. Arrivals signal
     * "done reading" of data that async-proxy operations (wgmma, TMA) wrote and read; no
     * generic-proxy write needs publishing cluster-wide. */
    int t = tmp_b32(p);
    ins(p, "mapa.shared::cluster.u32 %%tr%d, %s, %s;", t, R(p, o[0]), R(p, o[1]));
    ins(p, "mbarrier.arrive.shared::cluster.b64 _, [%%tr%d];", t);
    break;
  }
  case HG_OP_MBAR_ARRIVE_EXPECT_TX:
    ins(p, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%s], %s;", R(p, o[0]), R(p, o[1]));
    break;
  case HG_OP_MBAR_EXPECT_TX:
    ins(p, "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%s], %s;", R(p, o[0]), R(p, o[1]));
    break;
  case HG_OP_MBAR_TRY_WAIT:
    ins(p, "mbarrier.try_wait.parity.shared::cta.b64 %s, [%s], %s;", R(p, r[0]), R(p, o[0]),
        R(p, o[1]));
    break;
  case HG_OP_MBAR_WAIT: {
    int t = tmp_pred(p);
    label(p, "wait", i);
    ins(p, "mbarrier.try_wait.parity.shared::cta.b64 %%tp%d, [%s], %s;", t, R(p, o[0]), R(p, o[1]));
    ins(p, "@!%%tp%d bra $L%d_wait;", t, i);
    break;
  }

  case HG_OP_CACHE_POLICY:
    ins(p, "createpolicy.fractional.L2::%s.b64 %s, 1.0;", policy_ptx[op->u.policy], R(p, r[0]));
    break;
  case HG_OP_TMA_LOAD: {
    int rank = op->u.tma.rank;
    int32_t mcast = o[HG_IR_TMA_LOAD_MCAST], hint = o[HG_IR_TMA_LOAD_HINT];
    print_coords(p, o + HG_IR_TMA_LOAD_COORDS, rank, a2, sizeof a2);
    char extra[64] = "";
    if (mcast) {
      /* ctaMask is a 16-bit operand */
      int h = tmp_b16(p);
      ins(p, "cvt.u16.u32 %%th%d, %s;", h, R(p, mcast));
      snprintf(extra, sizeof extra, ", %%th%d", h);
    }
    if (hint) {
      size_t at = strlen(extra);
      snprintf(extra + at, sizeof extra - at, ", %s", R(p, hint));
    }
    ins(p,
        "cp.async.bulk.tensor.%dd.shared::cluster.global.tile.mbarrier::complete_tx::bytes%s%s "
        "[%s], [%s, %s], [%s]%s;",
        rank, mcast ? ".multicast::cluster" : "", hint ? ".L2::cache_hint" : "",
        R(p, o[HG_IR_TMA_LOAD_DST]), R(p, o[HG_IR_TMA_LOAD_TMAP]), a2, R(p, o[HG_IR_TMA_LOAD_BAR]),
        extra);
    break;
  }
  case HG_OP_TMA_PREFETCH:
    print_coords(p, o + HG_IR_TMA_PREFETCH_COORDS, op->u.tma.rank, a2, sizeof a2);
    ins(p, "cp.async.bulk.prefetch.tensor.%dd.L2.global.tile [%s, %s];", op->u.tma.rank, R(p, o[0]),
        a2);
    break;
  case HG_OP_TMA_STORE: {
    int32_t hint = o[HG_IR_TMA_STORE_HINT];
    char extra[64] = "";
    if (hint) snprintf(extra, sizeof extra, ", %s", R(p, hint));
    print_coords(p, o + HG_IR_TMA_STORE_COORDS, op->u.tma.rank, a2, sizeof a2);
    ins(p, "cp.async.bulk.tensor.%dd.global.shared::cta.tile.bulk_group%s [%s, %s], [%s]%s;",
        op->u.tma.rank, hint ? ".L2::cache_hint" : "", R(p, o[0]), a2, R(p, o[HG_IR_TMA_STORE_SRC]),
        extra);
    break;
  }
  case HG_OP_TMA_REDUCE:
    print_coords(p, o + HG_IR_TMA_STORE_COORDS, op->u.tma.rank, a2, sizeof a2);
    ins(p, "cp.reduce.async.bulk.tensor.%dd.global.shared::cta.%s.tile.bulk_group [%s, %s], [%s];",
        op->u.tma.rank, reduce_ptx[op->u.tma.red], R(p, o[0]), a2, R(p, o[HG_IR_TMA_STORE_SRC]));
    break;
  case HG_OP_BULK_COMMIT:
    ins(p, "cp.async.bulk.commit_group;");
    break;
  case HG_OP_BULK_WAIT:
    ins(p, "cp.async.bulk.wait_group%s %d;", op->u.bulk_wait.read ? ".read" : "",
        op->u.bulk_wait.n);
    break;
  case HG_OP_TMAP_PREFETCH:
    ins(p, "prefetch.tensormap [%s];", R(p, o[0]));
    break;

  case HG_OP_CP_ASYNC: {
    /* PTX ISA, cp.async: .cg (L2 only) exists for 16-byte copies alone; the source is a
     * .global address, so the generic pointer goes through cvta.to.global as for ld/st */
    int bytes = op->u.cp_async.bytes;
    int t = tmp_b64(p);
    ins(p, "cvta.to.global.u64 %%trd%d, %s;", t, R(p, o[1]));
    if (o[2])
      ins(p, "cp.async.%s.shared.global [%s], [%%trd%d], %d, %s;", bytes == 16 ? "cg" : "ca",
          R(p, o[0]), t, bytes, R(p, o[2]));
    else
      ins(p, "cp.async.%s.shared.global [%s], [%%trd%d], %d;", bytes == 16 ? "cg" : "ca",
          R(p, o[0]), t, bytes);
    break;
  }
  case HG_OP_CP_ASYNC_COMMIT:
    ins(p, "cp.async.commit_group;");
    break;
  case HG_OP_CP_ASYNC_WAIT:
    ins(p, "cp.async.wait_group %d;", op->u.wait_n);
    break;
  case HG_OP_CP_ASYNC_MBAR_ARRIVE:
    ins(p, "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%s];", R(p, o[0]));
    break;

  case HG_OP_WGMMA_FENCE:
    ins(p, "wgmma.fence.sync.aligned;");
    break;
  case HG_OP_WGMMA_COMMIT:
    ins(p, "wgmma.commit_group.sync.aligned;");
    break;
  case HG_OP_WGMMA_WAIT:
    ins(p, "wgmma.wait_group.sync.aligned %d;", op->u.wait_n);
    break;
  case HG_OP_WGMMA:
    print_wgmma(p, op);
    break;
  case HG_OP_SETMAXNREG:
    ins(p, "setmaxnreg.%s.sync.aligned.u32 %d;", op->u.maxnreg.increase ? "inc" : "dec",
        op->u.maxnreg.regs);
    break;
  case HG_OP_STMATRIX:
    hg_sbuf_put(&p->body, "\t%*sstmatrix.sync.aligned.m8n8.x%d%s.shared.b16 [%s], ", 2 * p->depth,
                "", op->u.matrix.num, op->u.matrix.trans ? ".trans" : "", R(p, o[0]));
    put_list(p, o + 1, op->u.matrix.num);
    hg_sbuf_put(&p->body, ";\n");
    break;
  case HG_OP_LDMATRIX:
    hg_sbuf_put(&p->body, "\t%*sldmatrix.sync.aligned.m8n8.x%d%s.shared.b16 ", 2 * p->depth, "",
                op->u.matrix.num, op->u.matrix.trans ? ".trans" : "");
    put_list(p, r, op->u.matrix.num);
    hg_sbuf_put(&p->body, ", [%s];\n", R(p, o[0]));
    break;
  case HG_OP_MMA_SYNC: {
    /* D and C are the same accumulator registers: the variables are updated in place */
    hg_sbuf_put(&p->body, "\t%*smma.sync.aligned.m16n8k%d.row.col.f32.%s.%s.f32 ", 2 * p->depth, "",
                op->u.mma_sync.k, hg_dtype_name(op->u.mma_sync.a), hg_dtype_name(op->u.mma_sync.b));
    put_list(p, o, HG_IR_MMA_SYNC_ACC);
    hg_sbuf_put(&p->body, ", ");
    put_list(p, o + HG_IR_MMA_SYNC_ACC, HG_IR_MMA_SYNC_A);
    hg_sbuf_put(&p->body, ", ");
    put_list(p, o + HG_IR_MMA_SYNC_ACC + HG_IR_MMA_SYNC_A, HG_IR_MMA_SYNC_B);
    hg_sbuf_put(&p->body, ", ");
    put_list(p, o, HG_IR_MMA_SYNC_ACC);
    hg_sbuf_put(&p->body, ";\n");
    break;
  }
  case HG_OP_COUNT:
    break;
  }
}

/* ----------------------------------------------------------------------------- module */

/* PTX ISA version (x10) this kernel needs: 8.0, 8.1 for vector reductions, or 8.4 for
 * mixed-signedness integer wgmma ("Feature 'WGMMA with mixed integer types' requires PTX ISA
 * .version 8.4") and fp8 mma.sync. */
static int needed_version(const hg_builder_t *b) {
  int v = 80;
  for (int32_t i = 0; i < b->nops; i++) {
    const hg_ir_op_t *op = &b->ops[i];
    if (op->code == HG_OP_WGMMA && op->u.wgmma.acc == HG_S32 && op->u.wgmma.a != op->u.wgmma.b)
      return 84;
    if (op->code == HG_OP_ATOMIC_ADD_F32 && op->u.mem.n > 1) v = 81;
    /* fp8 mma.sync (m16n8k32 e4m3/e5m2): "requires PTX ISA .version 8.4" */
    if (op->code == HG_OP_MMA_SYNC && op->u.mma_sync.k == 32) return 84;
  }
  return v;
}

static void name_values(printer_t *p) {
  const hg_builder_t *b = p->b;
  for (int32_t id = 1; id < b->nvalues; id++) {
    const hg_ir_value_t *v = &b->values[id];
    if (v->hint[0])
      snprintf(p->names[id], NAME_BYTES, "%s%d_%s", prefix_of(v->type), (int)id, v->hint);
    else
      snprintf(p->names[id], NAME_BYTES, "%s%d", prefix_of(v->type), (int)id);
  }
}

/* .reg lines: a <N> range per class for unnamed values, explicit lists for named ones. */
static void declare_registers(const printer_t *p, hg_sbuf_t *out) {
  const hg_builder_t *b = p->b;
  static const hg_type_t classes[] = {HG_T_PRED, HG_T_I32, HG_T_I64, HG_T_F32};
  for (size_t c = 0; c < sizeof classes / sizeof classes[0]; c++) {
    hg_type_t t = classes[c];
    int32_t top = 0;
    int named = 0;
    for (int32_t id = 1; id < b->nvalues; id++) {
      hg_type_t vt = b->values[id].type == HG_T_TMAP ? HG_T_I64 : b->values[id].type;
      if (vt != t) continue;
      if (b->values[id].hint[0])
        named++;
      else
        top = id + 1;
    }
    if (top) hg_sbuf_put(out, "\t.reg %s %s<%d>;\n", reg_type(t), prefix_of(t), (int)top);
    if (!named) continue;
    int on_line = 0;
    for (int32_t id = 1; id < b->nvalues; id++) {
      hg_type_t vt = b->values[id].type == HG_T_TMAP ? HG_T_I64 : b->values[id].type;
      if (vt != t || !b->values[id].hint[0]) continue;
      if (on_line == 0) hg_sbuf_put(out, "\t.reg %s ", reg_type(t));
      hg_sbuf_put(out, "%s%s", on_line ? ", " : "", p->names[id]);
      if (++on_line == 8) {
        hg_sbuf_put(out, ";\n");
        on_line = 0;
      }
    }
    if (on_line) hg_sbuf_put(out, ";\n");
  }
  if (p->ntp) hg_sbuf_put(out, "\t.reg .pred %%tp<%d>;\n", p->ntp);
  if (p->nth) hg_sbuf_put(out, "\t.reg .b16 %%th<%d>;\n", p->nth);
  if (p->ntr) hg_sbuf_put(out, "\t.reg .b32 %%tr<%d>;\n", p->ntr);
  if (p->ntrd) hg_sbuf_put(out, "\t.reg .b64 %%trd<%d>;\n", p->ntrd);
}

static const char *param_decl_type(hg_type_t t) {
  return t == HG_T_I32 ? ".u32" : t == HG_T_I64 ? ".u64" : ".f32";
}

hg_status_t hg_emit_ptx(const hg_builder_t *b, hg_text_t *out) {
  if (!out) return hg_error(HG_ERR_INVALID, "hg_emit_ptx: out is NULL");
  out->data = NULL;
  out->len = 0;
  HG_TRY(hg_ir_check_complete(b));

  printer_t p = {.b = b};
  p.names = calloc((size_t)b->nvalues, sizeof *p.names);
  if (!p.names) return hg_error(HG_ERR_NOMEM, "hg_emit_ptx: out of memory");
  name_values(&p);

  /* the body first: it decides how many temporaries the header declares */
  for (int32_t i = 0; i < b->nops; i++) print_op(&p, i);
  hg_sbuf_put(&p.body, "\tret;\n");

  hg_sbuf_t s = {0};
  int version = needed_version(b);
  uint32_t smem = hg_ir_smem_total(b);
  hg_sbuf_put(&s,
              "//\n// Generated by hopgen (PTX backend)\n// kernel %s: %d parameter(s), %d ops\n",
              b->name, b->nparams, (int)b->nops);
  if (smem)
    hg_sbuf_put(&s,
                "// dynamic shared memory: %" PRIu32 " bytes (launch with this; includes %" PRIu32
                " bytes of alignment slack)\n",
                smem, smem - b->smem_used);
  hg_sbuf_put(&s, "//\n\n.version %d.%d\n.target sm_90a\n.address_size 64\n\n", version / 10,
              version % 10);
  if (smem) hg_sbuf_put(&s, ".extern .shared .align 1024 .b8 hg_smem[];\n\n");

  hg_sbuf_put(&s, ".visible .entry %s(", b->name);
  for (int i = 0; i < b->nparams; i++) {
    const hg_ir_param_t *pa = &b->params[i];
    hg_sbuf_put(&s, "%s\n\t", i ? "," : "");
    /* a CUtensorMap passed by value as a __grid_constant__ parameter: 128 opaque bytes,
     * 64-byte aligned as TMA requires (PTX ISA, "Tensor-map" / cp.async.bulk.tensor) */
    if (pa->type == HG_T_TMAP)
      hg_sbuf_put(&s, ".param .align 64 .b8 hgp_%s[128]", pa->name);
    else
      hg_sbuf_put(&s, ".param %s hgp_%s", param_decl_type(pa->type), pa->name);
  }
  hg_sbuf_put(&s, "%s)\n", b->nparams ? "\n" : "");
  /* .reqntid plus .minnctapersm gives ptxas the register cap at entry that setmaxnreg
   * needs (PTX ISA, "Performance-Tuning Directives"; setmaxnreg) */
  if (b->threads) hg_sbuf_put(&s, ".reqntid %d, 1, 1\n", b->threads);
  if (b->min_ctas) hg_sbuf_put(&s, ".minnctapersm %d\n", b->min_ctas);
  if (b->cluster[0])
    hg_sbuf_put(&s, ".explicitcluster\n.reqnctapercluster %d, %d, %d\n", b->cluster[0],
                b->cluster[1], b->cluster[2]);
  hg_sbuf_put(&s, "{\n");
  declare_registers(&p, &s);
  if (smem) hg_sbuf_put(&s, "\t.reg .b32 %%smem_base;\n");
  hg_sbuf_put(&s, "\n");

  for (int i = 0; i < b->nparams; i++) {
    const hg_ir_param_t *pa = &b->params[i];
    const char *reg = p.names[pa->value];
    if (pa->type == HG_T_TMAP) {
      /* TMA takes the tensor map's generic address: the parameter's address in the
       * .param space, converted (what nvcc emits for a __grid_constant__ CUtensorMap) */
      hg_sbuf_put(&s, "\tmov.b64 %s, hgp_%s;\n", reg, pa->name);
      hg_sbuf_put(&s, "\tcvta.param.u64 %s, %s;\n", reg, reg);
    } else {
      hg_sbuf_put(&s, "\tld.param%s %s, [hgp_%s];\n", param_decl_type(pa->type), reg, pa->name);
    }
  }
  if (smem) {
    hg_sbuf_put(&s, "\tmov.u32 %%smem_base, hg_smem;\n");
    if (b->smem_max_align > HG_IR_SMEM_BASE_ALIGN) {
      /* only 16-byte alignment of the dynamic shared-memory base is guaranteed: round
       * up at run time (the slack is counted in hg_builder_smem_bytes) */
      hg_sbuf_put(&s, "\tadd.u32 %%smem_base, %%smem_base, %" PRIu32 ";\n", b->smem_max_align - 1);
      hg_sbuf_put(&s, "\tand.b32 %%smem_base, %%smem_base, %" PRId32 ";\n",
                  -(int32_t)b->smem_max_align);
    }
  }
  hg_sbuf_put(&s, "\n");
  if (!p.body.oom && p.body.data) hg_sbuf_put(&s, "%s", p.body.data);
  hg_sbuf_put(&s, "}\n");

  bool oom = s.oom || p.body.oom;
  free(p.body.data);
  free(p.names);
  if (oom) {
    free(s.data);
    return hg_error(HG_ERR_NOMEM, "hg_emit_ptx: out of memory writing kernel '%s'", b->name);
  }
  out->data = s.data;
  out->len = s.len;
  return hg_ok();
}
