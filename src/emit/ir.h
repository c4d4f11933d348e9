/* hopgen emit layer — the builder's recorded kernel: a small, backend-neutral, structured IR.
 *
 * Who reads this header: builder.c (which writes the IR), ptx.c (the PTX printer), and
 * mlir.c (the MLIR printer). A backend is a printer: it walks the op list once, front to
 * back, and writes text. Nothing in the IR is PTX- or MLIR-specific: there are no
 * instruction strings, register names or dialect names here, only what the generator
 * asked for (the opcodes mirror the hg_b_* calls of include/hopgen/emit.h one to one).
 *
 * ----------------------------------------------------------------------------- values
 * Every value is an entry of b->values, indexed by its hg_val_t id (id 0 is "none" and
 * the entry is unused). A value has a type (hg_type_t) and a kind:
 *   HG_VK_SSA      defined once, by the op b->values[id].def;
 *   HG_VK_VAR      a variable (hg_b_var): defined by an HG_OP_VAR op and overwritten by
 *                  HG_OP_ASSIGN and by HG_OP_WGMMA and HG_OP_MMA_SYNC (their accumulators);
 *   HG_VK_COUNTER  the counter of an hg_b_for (defined by the HG_OP_FOR op, read-only for
 *                  the generator, advanced by the loop itself);
 *   HG_VK_PARAM    a kernel parameter: defined at kernel entry (def = -1), usable anywhere.
 * `scope` is the region instance whose body defined the value (0 = the kernel body). The
 * builder guarantees that every operand is visible where it is used: its scope is the
 * kernel body or a region that encloses the use. So a backend may map SSA values to
 * registers (PTX) or to SSA values (MLIR) without checking dominance itself; variables
 * need a mutable home (PTX register, MLIR memref/alloca slot or loop-carried value).
 *
 * ----------------------------------------------------------------------------- ops
 * b->ops is the kernel body in program order. Control flow is structured and spelled
 * with marker ops that always nest properly (the builder rejects anything else):
 *   HG_OP_IF [pred] ... (HG_OP_ELSE ...)? HG_OP_ENDIF
 *   HG_OP_LOOP ... HG_OP_BREAK_IF [pred] (at any depth of ifs) ... HG_OP_ENDLOOP
 *   HG_OP_FOR [start, end, step] -> counter ... HG_OP_ENDFOR
 * Each marker links to its partners (see hg_ir_op_t.open / .mid / .close), and every op
 * records its nesting depth, so a printer can either print linearly (labels and
 * branches) or recurse region by region (scf.if / scf.while).
 *
 * Operands and results are value ids stored in one pool (b->pool); an op owns the slice
 * [first_operand, first_operand + num_operands) and likewise for results. The operand
 * order of each opcode is documented next to it below. Optional operands keep their
 * slot and hold 0 (HG_NONE) when absent, so positions never shift. Results are fresh SSA
 * values, except for ops that write variables in place: HG_OP_ASSIGN (results[0] = the
 * variable), HG_OP_WGMMA and HG_OP_MMA_SYNC (results = the accumulator variables, which are
 * also their leading operands).
 *
 * Immediate attributes (an opcode's sub-operation, widths, counts, flags) live in the
 * union `u`; the member to read is named next to each opcode below.
 *
 * A printer, in outline (see ptx.c for the complete one):
 *
 *   HG_TRY(hg_ir_check_complete(b));          // sticky status, balance, kernel rules
 *   for (int i = 0; i < b->nparams; i++) ...  // b->params[i]: type, name, value id
 *   for (int32_t i = 0; i < b->nops; i++) {
 *     const hg_ir_op_t *op = &b->ops[i];
 *     const int32_t *in = hg_ir_operands(b, op), *out = hg_ir_results(b, op);
 *     switch (op->code) {
 *     case HG_OP_BIN: print(out[0], op->u.bin, in[0], in[1]); break;
 *     case HG_OP_IF:  open a region on in[0]; its else is op->mid, its end op->close
 *     ...
 *     }
 *   }
 *
 * Kernel-level facts a printer needs are plain fields of struct hg_builder below:
 * name, threads, min_ctas, cluster, the shared-memory layout (smem_used, smem_max_align,
 * hg_ir_smem_total) and whether setmaxnreg / wgmma appear. */
#ifndef HOPGEN_EMIT_IR_H
#define HOPGEN_EMIT_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hopgen/emit.h"

/* Limits of the fixed-size parts of a builder; a generator that needs more gets
 * HG_ERR_CAPACITY with a sentence. Values, ops and operands are unbounded (heap). */
#define HG_IR_MAX_NAME 128  /* kernel name, including the NUL */
#define HG_IR_MAX_PARAMS 64 /* kernel parameters */
#define HG_IR_MAX_PARAM_NAME 64
#define HG_IR_MAX_DEPTH 64 /* nesting of if/loop/for */
#define HG_IR_MAX_HINT 24  /* a value's name hint, including the NUL */
#define HG_IR_MAX_SMEM_BYTES                                                                       \
  232448u /* 227 KB: the most dynamic shared memory a CTA may                                      \
           * opt into on sm_90 (CUDA C Programming Guide,                                          \
           * "Compute Capabilities", technical specifications) */

typedef enum hg_ir_opcode {
  /* ---------------------------------------------- bookkeeping */
  HG_OP_COMMENT, /* u.comment: offset of the NUL-terminated text in b->strings */
  HG_OP_CONST,   /* -> [v]; u.cnst.i (PRED 0/1, I32, I64) or u.cnst.f (F32); type = v's type */
  HG_OP_VAR,     /* -> [var]; operands [init] (init may be 0: uninitialised) */
  HG_OP_ASSIGN,  /* results [var]; operands [value]: var := value */

  /* ---------------------------------------------- arithmetic (result type = operand type
   * unless noted). Integer signedness is carried by the opcode/sub-op, never by a type. */
  HG_OP_BIN,        /* -> [d]; [x, y]; u.bin. I32/I64 integer ops, F32 for HG_F*, PRED and/or/xor */
  HG_OP_MAD,        /* -> [d]; [x, y, z]: x*y+z, low half, I32 or I64 */
  HG_OP_FFMA,       /* -> [d]; [x, y, z]: fused x*y+z, round to nearest, F32 */
  HG_OP_NOT,        /* -> [d]; [x]: bitwise not (I32/I64) or logical not (PRED) */
  HG_OP_FUNARY,     /* -> [d]; [x]; u.funary: F32 abs, neg, ex2, rcp, tanh */
  HG_OP_CMP,        /* -> [PRED]; [x, y]; u.cmp (integer EQ/NE/_S/_U on I32/I64, HG_F* on F32) */
  HG_OP_SELECT,     /* -> [d]; [pred, x, y]: pred ? x : y */
  HG_OP_SEXT,       /* -> [I64]; [I32] sign-extended */
  HG_OP_ZEXT,       /* -> [I64]; [I32] zero-extended */
  HG_OP_TRUNC,      /* -> [I32]; [I64] low 32 bits */
  HG_OP_I2F,        /* -> [F32]; [I32] signed, round to nearest */
  HG_OP_F2I,        /* -> [I32]; [F32] signed, round toward zero */
  HG_OP_BITCAST,    /* -> [d]; [x]; I32 <-> F32, same bits; u.to = d's type */
  HG_OP_PACK_F32X2, /* -> [I32]; [lo, hi] F32; u.dtype = HG_BF16 or HG_F16 (lo in bits 0..15),
                     * or HG_E4M3/HG_E5M2 (satfinite; lo in bits 0..7, hi in 8..15) */
  HG_OP_UNPACK_F32, /* -> [F32]; [bits] I32; u.dtype = HG_BF16/HG_F16 (low 16 bits) or
                     * HG_E4M3/HG_E5M2 (low 8 bits) */

  /* ---------------------------------------------- special registers, shared memory */
  HG_OP_SREG,      /* -> [I32]; u.sreg */
  HG_OP_CLOCK64,   /* -> [I64] */
  HG_OP_SMEM_ADDR, /* -> [I32] shared::cta address of (aligned dynamic smem base +
                    * u.smem_offset); the base's alignment is b->smem_max_align */

  /* ---------------------------------------------- structured control flow */
  HG_OP_IF,       /* [pred]; mid = its ELSE or -1, close = its ENDIF */
  HG_OP_ELSE,     /* open = its IF, close = its ENDIF */
  HG_OP_ENDIF,    /* open = its IF, mid = its ELSE or -1 */
  HG_OP_LOOP,     /* close = its ENDLOOP; runs until a BREAK_IF fires */
  HG_OP_BREAK_IF, /* [pred]; open = the innermost enclosing LOOP (never a FOR) */
  HG_OP_ENDLOOP,  /* open = its LOOP */
  HG_OP_FOR,      /* -> [counter I32]; [start, end, step] I32; close = its ENDFOR.
                   * for (counter = start; counter < end (signed); counter += step) */
  HG_OP_ENDFOR,   /* open = its FOR */
  HG_OP_RETURN,   /* this thread leaves the kernel */

  /* ---------------------------------------------- memory */
  HG_OP_LOAD,           /* -> [u.mem.n values of u.mem.type]; [addr]; u.mem.{space, type, bits, n}.
                         * bits 8/16: one narrow unsigned integer zero-extended into an I32 */
  HG_OP_STORE,          /* [addr, v0..v(n-1)]; u.mem.{space, type, bits, n, cs}; type = the values'
                         * type */
  HG_OP_ATOMIC_ADD_F32, /* [addr I64 global, v0..v(n-1) F32]; u.mem.n (1, 2, 4) */
  HG_OP_ATOMIC_ADD_U32, /* -> [I32 old value]; [addr I64 global, v I32]; relaxed, .gpu */
  HG_OP_REDUX,          /* -> [I32]; [v I32]; u.red.op (add, min, max, and, or, xor) over the
                         * warp's 32 lanes as u32 (redux.sync, full mask) */
  HG_OP_RED,            /* [addr I64 global, v]; u.red.{op, dtype}: one element's global
                         * reduction (hg_b_red); v is I32 (u32, s32; f16/bf16 in the low 16
                         * bits), F32 (f32) or I64 (u64) */
  HG_OP_MAPA,           /* -> [I32 shared::cluster]; [addr I32 shared::cta, cta_rank I32] */

  /* ---------------------------------------------- synchronisation */
  HG_OP_BAR_SYNC,          /* u.bar.{id, threads}; threads 0 = the whole CTA */
  HG_OP_BAR_ARRIVE,        /* u.bar.{id, threads}; threads > 0 */
  HG_OP_FENCE_PROXY_ASYNC, /* generic-proxy writes to shared::cta become visible to the
                            * async proxy (TMA, wgmma) */
  HG_OP_FENCE_MBAR_INIT,   /* release mbarrier.init to the cluster */
  HG_OP_FENCE_GPU,         /* fence.acq_rel.gpu */
  HG_OP_GRIDDEP_WAIT,      /* griddepcontrol.wait */
  HG_OP_GRIDDEP_LAUNCH,    /* griddepcontrol.launch_dependents */
  HG_OP_CLUSTER_ARRIVE,    /* u.relaxed */
  HG_OP_CLUSTER_WAIT,
  HG_OP_ELECT_SYNC,            /* -> [PRED]; true in exactly one lane of the (full) warp */
  HG_OP_MBAR_INIT,             /* [addr, count] */
  HG_OP_MBAR_ARRIVE,           /* [addr] */
  HG_OP_MBAR_ARRIVE_CLUSTER,   /* [addr (shared::cta, local offset), cta_rank]: arrive
                                * on that CTA's barrier: default .release.cta, see ptx.c */
  HG_OP_MBAR_ARRIVE_EXPECT_TX, /* [addr, bytes] */
  HG_OP_MBAR_EXPECT_TX,        /* [addr, bytes] */
  HG_OP_MBAR_TRY_WAIT,         /* -> [PRED]; [addr, parity] */
  HG_OP_MBAR_WAIT,             /* [addr, parity]: spin on try_wait until the phase completes */

  /* ---------------------------------------------- TMA. Coordinates are I32, signed,
   * dimension 0 innermost, and must reach the instruction unchanged. */
  HG_OP_CACHE_POLICY, /* -> [I64]; u.policy (fraction 1.0) */
  HG_OP_TMA_LOAD,     /* [tmap, dst, bar, mcast_mask|0, cache_hint|0, c0..c(rank-1)]; u.tma.rank */
  HG_OP_TMA_PREFETCH, /* [tmap, c0..]; u.tma.rank */
  HG_OP_TMA_STORE,    /* [tmap, src, cache_hint|0, c0..]; u.tma.rank */
  HG_OP_TMA_REDUCE,   /* [tmap, src, 0, c0..]; u.tma.{rank, red} */
  HG_OP_BULK_COMMIT,
  HG_OP_BULK_WAIT,     /* u.bulk_wait.{n, read} */
  HG_OP_TMAP_PREFETCH, /* [tmap] */

  /* ---------------------------------------------- cp.async (sm_80+, per thread) */
  HG_OP_CP_ASYNC,             /* [dst I32 shared::cta, src I64 generic, src_bytes I32|0];
                               * u.cp_async.bytes (4, 8, 16) */
  HG_OP_CP_ASYNC_COMMIT,      /* cp.async.commit_group */
  HG_OP_CP_ASYNC_WAIT,        /* u.wait_n */
  HG_OP_CP_ASYNC_MBAR_ARRIVE, /* [addr]: .noinc arrival once this thread's copies land */

  /* ---------------------------------------------- warpgroup MMA and friends */
  HG_OP_WGMMA_FENCE,
  HG_OP_WGMMA_COMMIT,
  HG_OP_WGMMA_WAIT, /* u.wait_n */
  HG_OP_WGMMA,      /* results [acc...]; operands [acc..., a..., desc_b, scale_d]; u.wgmma.
                     * hg_ir_wgmma_num_acc / hg_ir_wgmma_num_a give the counts. */
  HG_OP_SETMAXNREG, /* u.maxnreg.{increase, regs} */
  HG_OP_STMATRIX,   /* [addr, r0..r(num-1)]; u.matrix.{num, trans} */
  HG_OP_LDMATRIX,   /* -> [r0..r(num-1)] I32; [addr]; u.matrix.{num, trans} */

  /* ---------------------------------------------- warp-level MMA (sm_80+) */
  HG_OP_MMA_SYNC, /* results [acc0..acc3] F32; operands [acc0..acc3, a0..a3, b0, b1] I32;
                   * u.mma_sync (m16n8k16 bf16/f16, m16n8k32 fp8 -> f32:
                   * hg_ir_mma_sync_validate) */

  HG_OP_COUNT
} hg_ir_opcode_t;

/* Operand positions of the TMA ops (the coordinates follow). */
enum {
  HG_IR_TMA_LOAD_TMAP = 0,
  HG_IR_TMA_LOAD_DST = 1,
  HG_IR_TMA_LOAD_BAR = 2,
  HG_IR_TMA_LOAD_MCAST = 3,
  HG_IR_TMA_LOAD_HINT = 4,
  HG_IR_TMA_LOAD_COORDS = 5,
  HG_IR_TMA_PREFETCH_COORDS = 1,
  HG_IR_TMA_STORE_SRC = 1,  /* also TMA_REDUCE */
  HG_IR_TMA_STORE_HINT = 2, /* 0 for TMA_REDUCE: hg_b_tma_reduce takes no hint */
  HG_IR_TMA_STORE_COORDS = 3,
};

typedef enum hg_ir_value_kind {
  HG_VK_SSA,
  HG_VK_VAR,
  HG_VK_COUNTER,
  HG_VK_PARAM,
} hg_ir_value_kind_t;

typedef struct hg_ir_value {
  hg_type_t type;
  hg_ir_value_kind_t kind;
  int32_t def;               /* index of the defining op in b->ops; -1 for parameters */
  int32_t scope;             /* region instance that defined it; 0 = kernel body */
  int32_t param;             /* index in b->params for HG_VK_PARAM, else -1 */
  char hint[HG_IR_MAX_HINT]; /* [A-Za-z0-9_]* naming the value's origin ("tid_x", "i",
                              * a parameter's name, hg_b_name's text); "" when none */
} hg_ir_value_t;

typedef struct hg_ir_op {
  hg_ir_opcode_t code;
  int32_t depth; /* number of regions (if/else/loop/for bodies) around this op; markers
                  * carry the depth of the region they open or close (outside it) */
  int32_t first_operand, num_operands; /* slice of b->pool */
  int32_t first_result, num_results;   /* slice of b->pool */
  int32_t open, mid, close;            /* region partners (op indices, -1 when none); see opcodes */
  union {
    struct {
      int64_t i;
      float f;
    } cnst;
    hg_binop_t bin;
    hg_funary_t funary;
    hg_cmp_t cmp;
    hg_type_t to;
    hg_dtype_t dtype;
    hg_sreg_t sreg;
    uint32_t smem_offset;
    struct {
      hg_space_t space;
      hg_type_t type;
      int bits; /* 8, 16 (narrow, n = 1), or 32/64 = the type's width */
      int n;    /* 1, 2, 4 */
      bool cs;  /* HG_OP_STORE to global only: the .cs (cache streaming) operator */
    } mem;
    struct {
      int id;
      int threads;
    } bar;
    bool relaxed;
    hg_cache_policy_t policy;
    struct {
      int rank;
      hg_reduce_op_t red;
    } tma;
    struct {
      hg_reduce_op_t op;
      hg_dtype_t dtype;
    } red;
    struct {
      int n;
      bool read;
    } bulk_wait;
    int wait_n;
    hg_wgmma_op_t wgmma;
    struct {
      bool increase;
      int regs;
    } maxnreg;
    struct {
      int num;
      bool trans;
    } matrix; /* stmatrix, ldmatrix */
    struct {
      int bytes;
    } cp_async;
    hg_mma_sync_op_t mma_sync;
    int32_t comment;
  } u;
} hg_ir_op_t;

typedef struct hg_ir_param {
  hg_type_t type; /* I32, I64, F32 or TMAP */
  char name[HG_IR_MAX_PARAM_NAME];
  int32_t value; /* the value id that reads it */
} hg_ir_param_t;

/* One open region while building (the builder's stack; empty once the kernel is done). */
typedef struct hg_ir_frame {
  hg_ir_opcode_t code; /* HG_OP_IF, HG_OP_LOOP or HG_OP_FOR */
  int32_t op;          /* index of the opening op */
  int32_t scope;       /* region instance of the body being built */
  bool has_else;
} hg_ir_frame_t;

struct hg_builder {
  char name[HG_IR_MAX_NAME];
  hg_status_t status; /* sticky: the first misuse */

  /* kernel attributes; 0 = unset */
  int threads, min_ctas;
  int cluster[3];

  hg_ir_param_t params[HG_IR_MAX_PARAMS];
  int nparams;

  hg_ir_value_t *values; /* [0] unused */
  int32_t nvalues, cap_values;
  hg_ir_op_t *ops;
  int32_t nops, cap_ops;
  int32_t *pool; /* operand and result ids */
  int32_t npool, cap_pool;
  char *strings; /* comment texts, NUL-separated */
  int32_t nstrings, cap_strings;

  /* dynamic shared memory: reservations are bump-allocated from the aligned base */
  uint32_t smem_used;      /* bytes reserved, from the base */
  uint32_t smem_max_align; /* largest alignment requested (>= 16 once anything is reserved) */

  hg_ir_frame_t stack[HG_IR_MAX_DEPTH];
  int depth;
  int32_t *scope_op; /* region instance -> index of the op that opened it (-1: kernel body) */
  int32_t nscopes, cap_scopes;

  /* what the backends need to know up front */
  bool uses_setmaxnreg, uses_wgmma;
};

/* The base of dynamic shared memory is guaranteed 16-byte aligned; a larger requested
 * alignment is established at run time by rounding the base up, which can waste up to
 * align - 16 bytes: that slack is part of hg_builder_smem_bytes. */
#define HG_IR_SMEM_BASE_ALIGN 16u

/* ----------------------------------------------------------------------------- walking */

static inline const hg_ir_value_t *hg_ir_value(const hg_builder_t *b, int32_t id) {
  return &b->values[id];
}
/* The pool is NULL until an op has operands or results: no arithmetic on a null pointer. */
static inline const int32_t *hg_ir_operands(const hg_builder_t *b, const hg_ir_op_t *op) {
  return b->pool ? b->pool + op->first_operand : NULL;
}
static inline const int32_t *hg_ir_results(const hg_builder_t *b, const hg_ir_op_t *op) {
  return b->pool ? b->pool + op->first_result : NULL;
}
static inline const char *hg_ir_comment_text(const hg_builder_t *b, const hg_ir_op_t *op) {
  return b->strings + op->u.comment;
}

/* K of one wgmma for its operand types (16 for f16/bf16, 8 for tf32, 32 for 8-bit). */
int hg_ir_wgmma_k(const hg_wgmma_op_t *op);
/* Accumulator registers: n/2 (f32, s32) or n/4 (f16, two halves each). */
int hg_ir_wgmma_num_acc(const hg_wgmma_op_t *op);
/* A operands: 4 fragment registers when a_regs, else 1 descriptor. */
int hg_ir_wgmma_num_a(const hg_wgmma_op_t *op);
/* HG_OK when the ISA has this wgmma (shape, type combination, transpose flags); otherwise
 * a sentence naming the rule (PTX ISA "Asynchronous Warpgroup Level Matrix Multiply-
 * Accumulate": wgmma.mma_async shapes and types). */
hg_status_t hg_ir_wgmma_validate(const hg_wgmma_op_t *op);

/* Operand counts of HG_OP_MMA_SYNC: accumulators, A and B fragment registers (m16n8k16). */
enum { HG_IR_MMA_SYNC_ACC = 4, HG_IR_MMA_SYNC_A = 4, HG_IR_MMA_SYNC_B = 2 };
/* HG_OK when hopgen emits this mma.sync: m16n8k16, A and B both bf16 or both f16, f32
 * accumulators (PTX ISA "Warp Level Matrix Multiply-Accumulate Instructions", mma.sync);
 * otherwise a sentence naming the rule. */
hg_status_t hg_ir_mma_sync_validate(const hg_mma_sync_op_t *op);

/* The PTX of an HG_OP_RED that no single instruction says: min/max of an f16 or bf16
 * element (PTX ISA "red": .min/.max of .f16/.bf16 exist only as vectors, from PTX ISA 8.1,
 * and a vector would also reduce the neighbouring element). A self-contained { } block
 * (its registers and label are local to it, so it may appear any number of times) that
 * retries a 16-bit atom.global.cas around min/max.f16/bf16 until no other writer
 * intervened: $0 is the element's I64 generic address, $1 the I32 holding its 16 bits.
 * Lines end in '\n'. NULL for every other pair (one red.global instruction). ptx.c prints
 * it with its registers in place of $0 and $1; mlir.c passes it to llvm.inline_asm. */
const char *hg_ir_red_cas_ptx(hg_reduce_op_t op, hg_dtype_t t);

/* Everything a backend checks before printing: the sticky status, regions all closed,
 * and kernel-level rules that only hold once the whole kernel is known (setmaxnreg needs
 * a register cap at entry; warpgroup instructions need whole warpgroups). */
hg_status_t hg_ir_check_complete(const hg_builder_t *b);
/* No op writes a register that a wgmma still in flight reads (its A fragment, its
 * accumulators) or reads its accumulators before a wgmma.wait_group covers it: PTX ISA
 * "wgmma.mma_async" leaves both undefined (ir_async.c; part of hg_ir_check_complete). */
hg_status_t hg_ir_check_wgmma_registers(const hg_builder_t *b);

/* Stable names for messages and debug output: "bin", "tma_load", ... and "I32", ... */
const char *hg_ir_opcode_name(hg_ir_opcode_t code);
const char *hg_ir_type_name(hg_type_t t);
/* Bytes the kernel needs as dynamic shared memory, slack included (hg_builder_smem_bytes). */
uint32_t hg_ir_smem_total(const hg_builder_t *b);

#endif
