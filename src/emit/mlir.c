/* The MLIR backend: prints the builder's IR (ir.h) as MLIR 22 text (a gpu.module holding
 * one kernel in the nvgpu / nvvm / arith / cf / llvm dialects), which mlir_lower.c lowers
 * to PTX with mlir-opt-22. Same IR, same meaning as ptx.c; a difference is a bug.
 *
 * Shape of the output:
 *
 *   !hg_mbar = !nvgpu.mbarrier.group<...>        type aliases (barrier group, TMA tiles)
 *   module attributes {gpu.container_module} {
 *     gpu.module @hopgen [#nvvm.target<chip = "sm_90a", features = "+ptx80", O = 3>] {
 *       llvm.mlir.global external @hg_smem() {addr_space = 3, alignment = 1024} ...
 *       llvm.func @kernel(%v1_A: !llvm.ptr {llvm.byval = ..., nvvm.grid_constant}, ...)
 *           attributes {nvvm.kernel, nvvm.reqntid = ..., nvvm.minctasm = ..., ...} {
 *         allocas (one slot per variable), dynamic shared-memory base, body, llvm.return
 *
 * Why an llvm.func and not a gpu.func: a tensor map is a 128-byte by-value parameter that
 * the kernel addresses in place (a __grid_constant__ CUtensorMap), and MLIR 22 accepts the
 * `nvvm.grid_constant` argument attribute only on an llvm.func marked `nvvm.kernel` (on a
 * gpu.func the verifier says "'nvvm.grid_constant' attribute must be present only on
 * kernel arguments"). Without grid_constant, NVPTX copies a by-value parameter whose
 * address is taken into local memory, and TMA cannot read a tensor map from there.
 *
 * Values are SSA (%v<id>_<hint>). Variables (hg_b_var, the hg_b_for counter) live in
 * llvm.alloca slots of the entry block, read with llvm.load where used and written with
 * llvm.store; LLVM's SROA (the -O3 that gpu-module-to-binary runs) promotes every slot
 * to registers, so no local memory remains (tests/emit/test_mlir_wgmma.c checks a loop
 * around 128 accumulators). Control flow is printed as cf blocks, exactly the labels and
 * branches of ptx.c; the IR guarantees that every operand's definition dominates its use.
 *
 * Dialect choices, op by op, are commented where each op is printed: nvgpu where its
 * typed operands can be given (mbarrier init/arrive/arrive.expect_tx, TMA load with or
 * without multicast, TMA store, tensor-map prefetch), nvvm where nvgpu has no such op or
 * cannot say what the IR says (TMA with an L2 cache hint, tensor prefetch and reduce,
 * expect_tx, try_wait, remote arrive, wgmma, setmaxnreg, stmatrix, fences, cluster
 * barriers, elect.sync; and the sm_80 ops, which nvgpu covers only as whole-tile
 * abstractions: cp.async with its commit, wait and mbarrier arrival, ldmatrix, mma.sync), arith for
 * integer and float arithmetic (signedness from the opcode), llvm for memory, one LLVM intrinsic
 * called directly (bar.arrive), and llvm.inline_asm only where neither dialect says what ptx.c
 * prints (createpolicy; wgmma with a run-time scale-d or A in registers; an opaque copy of the
 * shared-memory base, see print_entry; tanh.approx.f32, which has no NVVM intrinsic).
 *
 * Warp-synchronous (.aligned) instructions: the nvvm ops that become LLVM intrinsics
 * (barriers, elect.sync, wgmma fence/commit/wait, setmaxnreg, stmatrix, cluster barriers,
 * mbarrier try_wait) are `convergent`, so LLVM never duplicates them into divergent paths.
 * wgmma.mma_async itself is inline assembly (as nvvm.wgmma.mma_async lowers too), which
 * LLVM does not mark convergent. In hopgen's kernels each wgmma shares its basic block
 * with the convergent wgmma.fence / commit_group around it (no branch between them), and
 * LLVM duplicates no block that holds a convergent call; a generator that branched
 * between a fence and its wgmmas would lose that protection. ldmatrix (like stmatrix) is a
 * convergent intrinsic; mma.sync's (llvm.nvvm.mma.m16n8k16.*, LLVM 22) is neither convergent
 * nor memory-touching, so LLVM may move it like arithmetic, e.g. sink it into the only
 * branch that uses its results. In hopgen's main loops every lane uses the accumulators
 * (they are carried to the next iteration and stored by all lanes); a generator that used
 * the last mma.sync's results only under a warp-divergent condition could see it sunk
 * there, where .aligned forbids it. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit/mlir.h"
#include "emit/sbuf.h"

/* ----------------------------------------------------------------------------- printer */

#define NAME_BYTES 48
#define NO_UNROLL "{loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}"
typedef char name_t[NAME_BYTES];

typedef struct mprinter {
  const hg_builder_t *b;
  hg_sbuf_t s;
  name_t *names; /* SSA name of each value id; for variables and counters, their slot */
  int ntmp;      /* %t<n> temporaries */
  int depth;     /* indentation */
} mprinter_t;

static bool is_slot(const mprinter_t *p, int32_t id) {
  hg_ir_value_kind_t k = p->b->values[id].kind;
  return k == HG_VK_VAR || k == HG_VK_COUNTER;
}

/* The MLIR type of a value: PRED i1, I32 i32, I64 i64, F32 f32, and a tensor map is the
 * generic pointer to the by-value parameter (what TMA takes). */
static const char *mty(hg_type_t t) {
  switch (t) {
  case HG_T_PRED:
    return "i1";
  case HG_T_I32:
    return "i32";
  case HG_T_I64:
    return "i64";
  case HG_T_F32:
    return "f32";
  default:
    return "!llvm.ptr";
  }
}

static hg_type_t vtype(const mprinter_t *p, int32_t id) {
  return p->b->values[id].type;
}

/* One line of the body, indented by nesting depth. */
static void L(mprinter_t *p, const char *fmt, ...) HG_PRINTF(2, 3);
static void L(mprinter_t *p, const char *fmt, ...) {
  hg_sbuf_put(&p->s, "      %*s", 2 * p->depth, "");
  va_list ap;
  va_start(ap, fmt);
  hg_sbuf_vput(&p->s, fmt, ap);
  va_end(ap);
  hg_sbuf_put(&p->s, "\n");
}

/* A block label; the previous block must have ended with a terminator. */
static void label(mprinter_t *p, const char *fmt, int32_t n) {
  hg_sbuf_put(&p->s, "    ^");
  hg_sbuf_put(&p->s, fmt, n);
  hg_sbuf_put(&p->s, ":\n");
}

static int tmp(mprinter_t *p) {
  return p->ntmp++;
}

/* The name under which value `id` can be used here: an SSA value's own name, or for a
 * variable a fresh load of its slot (so every read sees the latest assignment). */
static const char *V(mprinter_t *p, int32_t id, name_t buf) {
  if (!is_slot(p, id)) return p->names[id];
  int t = tmp(p);
  L(p, "%%t%d = llvm.load %s : !llvm.ptr -> %s", t, p->names[id], mty(vtype(p, id)));
  snprintf(buf, NAME_BYTES, "%%t%d", t);
  return buf;
}

/* An i32/i64/i1/index constant as a fresh temporary. */
static int cst(mprinter_t *p, int64_t v, const char *type) {
  int t = tmp(p);
  L(p, "%%t%d = arith.constant %" PRId64 " : %s", t, v, type);
  return t;
}

static void store_slot(mprinter_t *p, int32_t var, const char *value) {
  L(p, "llvm.store %s, %s : %s, !llvm.ptr", value, p->names[var], mty(vtype(p, var)));
}

/* Address conversions. Shared addresses are the IR's 32-bit shared::cta (or
 * shared::cluster) offsets: inttoptr gives the pointer in address space 3 (or 7). A
 * global address is a generic 64-bit pointer: inttoptr to the generic space, then an
 * addrspacecast to global, which NVPTX prints as cvta.to.global (what ptx.c emits). */
static int ptr_shared(mprinter_t *p, const char *addr, int space) {
  int t = tmp(p);
  L(p, "%%t%d = llvm.inttoptr %s : i32 to !llvm.ptr<%d>", t, addr, space);
  return t;
}

static int ptr_global(mprinter_t *p, const char *addr) {
  int g = tmp(p), t = tmp(p);
  L(p, "%%t%d = llvm.inttoptr %s : i64 to !llvm.ptr", g, addr);
  L(p, "%%t%d = llvm.addrspacecast %%t%d : !llvm.ptr to !llvm.ptr<1>", t, g);
  return t;
}

/* A rank-`rank` memref descriptor (!hg_mref<rank>) over the shared-memory address `addr`:
 * the typed view that nvgpu ops take for a barrier group (rank 1, one 8-byte barrier) or a
 * TMA tile (1 x ... x 1 x 16 bytes). The IR knows only the address, so the view is
 * nominal (see print_aliases); every field is filled, so that no lowering can read an
 * undefined one. Returns the struct. */
static int memref_at(mprinter_t *p, const char *addr, int rank, int64_t last) {
  int ptr = ptr_shared(p, addr, 3);
  int s = tmp(p);
  L(p, "%%t%d = llvm.mlir.poison : !hg_mref%d", s, rank);
  int zero = cst(p, 0, "i64"), one = cst(p, 1, "i64");
  int lastc = last == 1 ? one : cst(p, last, "i64");
  for (int f = 0; f < 2; f++) { /* allocated and aligned pointer */
    int n = tmp(p);
    L(p, "%%t%d = llvm.insertvalue %%t%d, %%t%d[%d] : !hg_mref%d", n, ptr, s, f, rank);
    s = n;
  }
  int n = tmp(p);
  L(p, "%%t%d = llvm.insertvalue %%t%d, %%t%d[2] : !hg_mref%d", n, zero, s, rank);
  s = n;
  /* sizes 1 x ... x 1 x last, row-major contiguous strides last x ... x last x 1 */
  for (int d = 0; d < rank; d++) {
    int size = d == rank - 1 ? lastc : one, stride = d == rank - 1 ? one : lastc;
    n = tmp(p);
    L(p, "%%t%d = llvm.insertvalue %%t%d, %%t%d[3, %d] : !hg_mref%d", n, size, s, d, rank);
    s = n;
    n = tmp(p);
    L(p, "%%t%d = llvm.insertvalue %%t%d, %%t%d[4, %d] : !hg_mref%d", n, stride, s, d, rank);
    s = n;
  }
  return s;
}

/* The !hg_mbar barrier group whose barrier 0 is at shared address `addr`. */
static int mbar_group(mprinter_t *p, const char *addr) {
  int d = memref_at(p, addr, 1, 1);
  int g = tmp(p);
  L(p, "%%t%d = builtin.unrealized_conversion_cast %%t%d : !hg_mref1 to !hg_mbar", g, d);
  return g;
}

/* ----------------------------------------------------------------------------- op tables */

static const char *const sreg_mlir[] = {
    [HG_TID_X] = "tid.x",
    [HG_TID_Y] = "tid.y",
    [HG_TID_Z] = "tid.z",
    [HG_NTID_X] = "ntid.x",
    [HG_CTAID_X] = "ctaid.x",
    [HG_CTAID_Y] = "ctaid.y",
    [HG_CTAID_Z] = "ctaid.z",
    [HG_NCTAID_X] = "nctaid.x",
    [HG_NCTAID_Y] = "nctaid.y",
    [HG_NCTAID_Z] = "nctaid.z",
    [HG_LANEID] = "laneid",
    [HG_CLUSTER_CTARANK] = "cluster.ctarank",
    [HG_CLUSTER_NCTARANK] = "cluster.nctarank",
    [HG_CLUSTER_CTAID_X] = "cluster.ctaid.x",
    [HG_CLUSTER_CTAID_Y] = "cluster.ctaid.y",
    [HG_CLUSTER_CTAID_Z] = "cluster.ctaid.z",
    [HG_CLUSTERID_X] = "clusterid.x",
    [HG_CLUSTERID_Y] = "clusterid.y",
    [HG_CLUSTERID_Z] = "clusterid.z",
    [HG_NCLUSTERID_X] = "nclusterid.x",
    [HG_NCLUSTERID_Y] = "nclusterid.y",
    [HG_NCLUSTERID_Z] = "nclusterid.z",
    [HG_SMID] = "smid",
};

static const char *const reduce_mlir[] = {
    [HG_RED_ADD] = "add", [HG_RED_MIN] = "min", [HG_RED_MAX] = "max", [HG_RED_INC] = "inc",
    [HG_RED_DEC] = "dec", [HG_RED_AND] = "and", [HG_RED_OR] = "or",   [HG_RED_XOR] = "xor",
};

static const char *const policy_ptx[] = {
    [HG_EVICT_NORMAL] = "evict_normal",
    [HG_EVICT_FIRST] = "evict_first",
    [HG_EVICT_LAST] = "evict_last",
};

/* arith ops whose semantics match ptx.c's exactly for every input (the shifts, which
 * differ for large amounts, are printed separately). */
static const char *binop_arith(hg_binop_t op) {
  switch (op) {
  case HG_ADD:
    return "arith.addi";
  case HG_SUB:
    return "arith.subi";
  case HG_MUL:
    return "arith.muli";
  case HG_DIV_S:
    return "arith.divsi";
  case HG_DIV_U:
    return "arith.divui";
  case HG_REM_S:
    return "arith.remsi";
  case HG_REM_U:
    return "arith.remui";
  case HG_MIN_S:
    return "arith.minsi";
  case HG_MAX_S:
    return "arith.maxsi";
  case HG_MIN_U:
    return "arith.minui";
  case HG_MAX_U:
    return "arith.maxui";
  case HG_AND:
    return "arith.andi";
  case HG_OR:
    return "arith.ori";
  case HG_XOR:
    return "arith.xori";
  /* Without `contract` fast-math flags LLVM neither fuses these into an fma nor lets
   * ptxas do it: NVPTX prints add.rn/sub.rn/mul.rn.f32, as ptx.c does. */
  case HG_FADD:
    return "arith.addf";
  case HG_FSUB:
    return "arith.subf";
  case HG_FMUL:
    return "arith.mulf";
  /* PTX min/max.f32 return the other operand when one is NaN: IEEE minNum/maxNum */
  case HG_FMIN:
    return "arith.minnumf";
  case HG_FMAX:
    return "arith.maxnumf";
  default:
    return NULL;
  }
}

static const char *cmp_arith(hg_cmp_t op) {
  switch (op) {
  case HG_EQ:
    return "eq";
  case HG_NE:
    return "ne";
  case HG_LT_S:
    return "slt";
  case HG_LE_S:
    return "sle";
  case HG_GT_S:
    return "sgt";
  case HG_GE_S:
    return "sge";
  case HG_LT_U:
    return "ult";
  case HG_LE_U:
    return "ule";
  case HG_GT_U:
    return "ugt";
  case HG_GE_U:
    return "uge";
  /* setp.{lt,le,gt,ge,eq}.f32 are false when either operand is NaN: ordered predicates */
  case HG_FLT:
    return "olt";
  case HG_FLE:
    return "ole";
  case HG_FGT:
    return "ogt";
  case HG_FGE:
    return "oge";
  case HG_FEQ:
    return "oeq";
  }
  return "eq";
}

/* The element type of a TMA/wgmma operand in the nvvm attribute syntax. */
static const char *wgmma_type(hg_dtype_t t) {
  switch (t) {
  case HG_F16:
    return "f16";
  case HG_BF16:
    return "bf16";
  case HG_TF32:
    return "tf32";
  case HG_E4M3:
    return "e4m3";
  case HG_E5M2:
    return "e5m2";
  case HG_S8:
    return "s8";
  case HG_U8:
    return "u8";
  case HG_F32:
    return "f32";
  case HG_S32:
    return "s32";
  default:
    return "?";
  }
}

/* ----------------------------------------------------------------------------- coordinates */

/* TMA coordinates: I32 in the IR, signed, and they must reach cp.async.bulk.tensor as the
 * same 32-bit value (a negative or past-the-end coordinate is legal; TMA fills or skips
 * the out-of-bounds part of the box).
 *
 * What MLIR 22 accepts:
 * - nvgpu.tma.async.load / nvgpu.tma.async.store take `Variadic<Index>:$coordinates`
 *   (NVGPUOps.td). The nvgpu-to-nvvm lowering (NVGPUToNVVM.cpp) converts each index to
 *   i32 with truncToI32, an llvm.trunc when index is wider than 32 bits (it is 64 here:
 *   the default index bitwidth of the conversion), before building the nvvm op.
 * - nvvm.cp.async.bulk.tensor.{shared.cluster.global, global.shared.cta, prefetch, reduce}
 *   take `Variadic<I32>:$coordinates` ("box[...]"), the .s32 operands of the PTX
 *   instruction: hopgen's I32 goes in unchanged.
 *
 * The conversion for nvgpu is arith.index_cast, which sign-extends i32 -> index
 * (arith.index_castui would zero-extend). So the index equals the signed coordinate
 * (-3 stays -3, not 4294967293), any index-level folding or range reasoning stays true,
 * and the lowering's truncation restores the original bits exactly: trunc(sext(x)) == x
 * for every int32 x. After canonicalization the pair folds away and the register that
 * computed the coordinate is the one cp.async.bulk.tensor reads
 * (tests/emit/test_mlir_tma.c checks this on `ctaid.x * 64 - 3`). */
static void coords_index(mprinter_t *p, const int32_t *c, int rank, char *out, size_t size) {
  size_t at = 0;
  out[0] = '\0';
  for (int k = 0; k < rank; k++) {
    name_t buf;
    const char *v = V(p, c[k], buf);
    int t = tmp(p);
    L(p, "%%t%d = arith.index_cast %s : i32 to index", t, v);
    int n = snprintf(out + at, size - at, "%s%%t%d", k ? ", " : "", t);
    if (n > 0) at += (size_t)n < size - at ? (size_t)n : size - at - 1;
  }
}

/* nvvm TMA ops: the I32 coordinates as they are (see above). */
static void coords_i32(mprinter_t *p, const int32_t *c, int rank, char *out, size_t size) {
  size_t at = 0;
  out[0] = '\0';
  for (int k = 0; k < rank; k++) {
    name_t buf;
    const char *v = V(p, c[k], buf);
    int n = snprintf(out + at, size - at, "%s%s", k ? ", " : "", v);
    if (n > 0) at += (size_t)n < size - at ? (size_t)n : size - at - 1;
  }
}

/* ----------------------------------------------------------------------------- wgmma */

static bool const_pred(const hg_builder_t *b, int32_t id, bool *value) {
  const hg_ir_value_t *v = &b->values[id];
  if (v->kind != HG_VK_SSA || v->def < 0 || b->ops[v->def].code != HG_OP_CONST) return false;
  *value = b->ops[v->def].u.cnst.i != 0;
  return true;
}

/* The two ways a wgmma is printed (see print_wgmma). */
static bool wgmma_uses_op(const hg_builder_t *b, const hg_ir_op_t *op) {
  const hg_wgmma_op_t *w = &op->u.wgmma;
  int nacc = hg_ir_wgmma_num_acc(w), na = hg_ir_wgmma_num_a(w);
  bool value;
  return !w->a_regs && const_pred(b, hg_ir_operands(b, op)[nacc + na + 1], &value);
}

/* Accumulator element of the struct that carries them: f32, i32 (s32), and for an f16
 * accumulator (two halves per I32) vector<2xf16> in the nvvm op, i32 in inline asm. */
static const char *acc_elem(const hg_wgmma_op_t *w, bool nvvm_op) {
  if (w->acc == HG_F32) return "f32";
  if (w->acc == HG_F16 && nvvm_op) return "vector<2xf16>";
  return "i32";
}

/* The alias of the accumulator struct: !hg_acc<count>x<f32|i32|v2f16>. */
static void acc_alias(const hg_wgmma_op_t *w, bool nvvm_op, char *buf, size_t size) {
  const char *e = acc_elem(w, nvvm_op);
  snprintf(buf, size, "!hg_acc%dx%s", hg_ir_wgmma_num_acc(w), e[0] == 'v' ? "v2f16" : e);
}

/* Gather the accumulator variables into a struct (the value the op carries). */
static int acc_struct(mprinter_t *p, const hg_wgmma_op_t *w, const int32_t *acc, bool nvvm_op) {
  int nacc = hg_ir_wgmma_num_acc(w);
  bool halves = acc_elem(w, nvvm_op)[0] == 'v';
  char ty[32];
  acc_alias(w, nvvm_op, ty, sizeof ty);
  int s = tmp(p);
  L(p, "%%t%d = llvm.mlir.poison : %s", s, ty);
  for (int k = 0; k < nacc; k++) {
    name_t buf;
    char v[NAME_BYTES];
    snprintf(v, sizeof v, "%s", V(p, acc[k], buf));
    if (halves) {
      int x = tmp(p);
      L(p, "%%t%d = llvm.bitcast %s : i32 to vector<2xf16>", x, v);
      snprintf(v, sizeof v, "%%t%d", x);
    }
    int n = tmp(p);
    L(p, "%%t%d = llvm.insertvalue %s, %%t%d[%d] : %s", n, v, s, k, ty);
    s = n;
  }
  return s;
}

/* Write the result struct back into the accumulator variables. */
static void acc_unpack(mprinter_t *p, const hg_wgmma_op_t *w, const int32_t *acc, int result,
                       bool nvvm_op) {
  int nacc = hg_ir_wgmma_num_acc(w);
  bool halves = acc_elem(w, nvvm_op)[0] == 'v';
  char ty[32];
  acc_alias(w, nvvm_op, ty, sizeof ty);
  for (int k = 0; k < nacc; k++) {
    int e = tmp(p);
    L(p, "%%t%d = llvm.extractvalue %%t%d[%d] : %s", e, result, k, ty);
    char v[NAME_BYTES];
    snprintf(v, sizeof v, "%%t%d", e);
    if (halves) {
      int c = tmp(p);
      L(p, "%%t%d = llvm.bitcast %%t%d : vector<2xf16> to i32", c, e);
      snprintf(v, sizeof v, "%%t%d", c);
    }
    store_slot(p, acc[k], v);
  }
}

static void print_wgmma(mprinter_t *p, const hg_ir_op_t *op) {
  const hg_builder_t *b = p->b;
  const hg_wgmma_op_t *w = &op->u.wgmma;
  const int32_t *o = hg_ir_operands(b, op);
  int nacc = hg_ir_wgmma_num_acc(w), na = hg_ir_wgmma_num_a(w);
  int k = hg_ir_wgmma_k(w);
  bool integer = w->acc == HG_S32;
  bool sixteen = w->a == HG_F16 || w->a == HG_BF16;
  int32_t desc_b = o[nacc + na], scale_d = o[nacc + na + 1];
  char ty[32];

  if (wgmma_uses_op(b, op)) {
    /* nvvm.wgmma.mma_async: A and B from descriptors, scale-d an attribute (one: D +=,
     * zero: D =). The layouts say which operand is K-major: A <row> and B <col> are
     * K-major, so trans_a is A <col> and trans_b is B <row> (imm-trans-a/-b = 1).
     * Not nvgpu.warpgroup.mma, which does not fit the IR's single instruction: its
     * lowering (NVGPUToNVVM.cpp, WarpgroupGemm) wraps each op in its own wgmma.fence,
     * commit_group and wait_group, where the IR issues several wgmmas between one fence
     * and one commit and waits for N groups later (a per-instruction wait would serialize
     * the GEMM's pipeline); it always accumulates (scale-out one), so scale-d false cannot
     * be said; it takes whole-tile typed descriptors and derives each instruction's
     * descriptor itself, while the IR's descriptors are built by the generator; and it
     * has no A from registers. */
    bool scale = true;
    const_pred(b, scale_d, &scale);
    name_t ba, bb;
    int s = acc_struct(p, w, o, true);
    const char *da = V(p, o[nacc], ba);
    const char *db = V(p, desc_b, bb);
    acc_alias(w, true, ty, sizeof ty);
    int r = tmp(p);
    L(p,
      "%%t%d = nvvm.wgmma.mma_async %s, %s, %%t%d, #nvvm.shape<m = 64, n = %d, k = %d>, "
      "D [<%s>, #nvvm.wgmma_scale_out<%s>], A [<%s>, #nvvm.wgmma_scale_in<one>, <%s>], "
      "B [<%s>, #nvvm.wgmma_scale_in<one>, <%s>] : %s -> %s",
      r, da, db, s, w->n, k, wgmma_type(w->acc), scale ? "one" : "zero", wgmma_type(w->a),
      w->trans_a ? "col" : "row", wgmma_type(w->b), w->trans_b ? "row" : "col", ty, ty);
    acc_unpack(p, w, o, r, true);
    return;
  }

  /* A in registers, or scale-d known only at run time: nvvm.wgmma.mma_async takes A only
   * as a descriptor (i64) and scale-d only as an attribute, so print the instruction
   * ptx.c prints, as inline assembly with the accumulators tied in and out (which is also
   * how the nvvm op itself lowers). Operands: $0..$(nacc-1) the results, then A (1 or 4),
   * the B descriptor, scale-d as an i32, and the accumulators tied to the results. */
  const char *reg = w->acc == HG_F32 ? "f" : "r";
  hg_sbuf_t text = {0}, cons = {0};
  hg_sbuf_put(&text, "{\\0A.reg .pred p;\\0Asetp.ne.b32 p, $%d, 0;\\0A", nacc + na + 1);
  hg_sbuf_put(&text, "wgmma.mma_async.sync.aligned.m64n%dk%d.%s.%s.%s {", w->n, k,
              hg_dtype_name(w->acc), hg_dtype_name(w->a), hg_dtype_name(w->b));
  for (int i = 0; i < nacc; i++) hg_sbuf_put(&text, "%s$%d", i ? ", " : "", i);
  hg_sbuf_put(&text, "}, ");
  if (w->a_regs)
    hg_sbuf_put(&text, "{$%d, $%d, $%d, $%d}", nacc, nacc + 1, nacc + 2, nacc + 3);
  else
    hg_sbuf_put(&text, "$%d", nacc);
  hg_sbuf_put(&text, ", $%d, p", nacc + na);
  if (!integer) hg_sbuf_put(&text, ", 1, 1");
  if (sixteen) {
    if (!w->a_regs) hg_sbuf_put(&text, ", %d", w->trans_a ? 1 : 0);
    hg_sbuf_put(&text, ", %d", w->trans_b ? 1 : 0);
  }
  hg_sbuf_put(&text, ";\\0A}");
  for (int i = 0; i < nacc; i++) hg_sbuf_put(&cons, "=%s,", reg);
  for (int i = 0; i < na; i++) hg_sbuf_put(&cons, "%s,", w->a_regs ? "r" : "l");
  hg_sbuf_put(&cons, "l,r");
  for (int i = 0; i < nacc; i++) hg_sbuf_put(&cons, ",%d", i);

  name_t abuf[4], bb, bs;
  char an[4][NAME_BYTES];
  for (int i = 0; i < na; i++) snprintf(an[i], NAME_BYTES, "%s", V(p, o[nacc + i], abuf[i]));
  char db[NAME_BYTES];
  snprintf(db, sizeof db, "%s", V(p, desc_b, bb));
  const char *sd = V(p, scale_d, bs);
  int s32 = tmp(p);
  L(p, "%%t%d = arith.extui %s : i1 to i32", s32, sd);
  name_t *accn = malloc(sizeof *accn * (size_t)nacc);
  if (!accn) {
    p->s.oom = true;
    free(text.data);
    free(cons.data);
    return;
  }
  for (int i = 0; i < nacc; i++) {
    name_t buf;
    snprintf(accn[i], NAME_BYTES, "%s", V(p, o[i], buf));
  }
  acc_alias(w, false, ty, sizeof ty);
  int r = tmp(p);
  hg_sbuf_put(&p->s, "      %*s%%t%d = llvm.inline_asm has_side_effects \"%s\", \"%s\" ",
              2 * p->depth, "", r, text.data ? text.data : "", cons.data ? cons.data : "");
  for (int i = 0; i < na; i++) hg_sbuf_put(&p->s, "%s, ", an[i]);
  hg_sbuf_put(&p->s, "%s, %%t%d", db, s32);
  for (int i = 0; i < nacc; i++) hg_sbuf_put(&p->s, ", %s", accn[i]);
  hg_sbuf_put(&p->s, " : (");
  for (int i = 0; i < na; i++) hg_sbuf_put(&p->s, "%s, ", w->a_regs ? "i32" : "i64");
  hg_sbuf_put(&p->s, "i64, i32");
  for (int i = 0; i < nacc; i++) hg_sbuf_put(&p->s, ", %s", w->acc == HG_F32 ? "f32" : "i32");
  hg_sbuf_put(&p->s, ") -> %s\n", ty);
  if (text.oom || cons.oom) p->s.oom = true;
  free(text.data);
  free(cons.data);
  free(accn);
  acc_unpack(p, w, o, r, false);
}

/* ----------------------------------------------------------------------------- sm_80 ops */

/* The attributes of nvvm.stmatrix / nvvm.ldmatrix: 8x8 matrices of b16, layout <col> for
 * .trans; ldmatrix also says how many (num). Returns buf. */
static const char *matrix_attrs(const hg_ir_op_t *op, bool with_num, char *buf, size_t size) {
  char num[24] = "";
  if (with_num) snprintf(num, sizeof num, "num = %d : i32, ", op->u.matrix.num);
  snprintf(buf, size,
           "%slayout = #nvvm.mma_layout<%s>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>, "
           "eltType = #nvvm.ld_st_matrix_elt_type<b16>",
           num, op->u.matrix.trans ? "col" : "row");
  return buf;
}

/* nvvm.mma.sync (the llvm.nvvm.mma.m16n8k16.row.col intrinsic, mma.sync.aligned.m16n8k16
 * .row.col.f32.<t>.<t>.f32 in PTX): the accumulator variables are read as C and the result
 * struct is written back into them, as ptx.c's D = C registers. f16 fragments are
 * vector<2xf16> in the op, bf16 ones i32 (the op's types for each). */
static void print_mma_sync(mprinter_t *p, const hg_ir_op_t *op) {
  const int32_t *o = hg_ir_operands(p->b, op);
  const bool f16 = op->u.mma_sync.a == HG_F16;
  const char *ft = f16 ? "vector<2xf16>" : "i32";
  enum { NACC = HG_IR_MMA_SYNC_ACC, NF = HG_IR_MMA_SYNC_A + HG_IR_MMA_SYNC_B };
  name_t acc[NACC], frag[NF];
  for (int k = 0; k < NACC; k++) {
    name_t buf;
    snprintf(acc[k], NAME_BYTES, "%s", V(p, o[k], buf));
  }
  for (int k = 0; k < NF; k++) {
    name_t buf;
    const char *v = V(p, o[NACC + k], buf);
    if (f16) {
      int t = tmp(p);
      L(p, "%%t%d = llvm.bitcast %s : i32 to vector<2xf16>", t, v);
      snprintf(frag[k], NAME_BYTES, "%%t%d", t);
    } else {
      snprintf(frag[k], NAME_BYTES, "%s", v);
    }
  }
  const char *ty = "!llvm.struct<(f32, f32, f32, f32)>", *t = f16 ? "f16" : "bf16";
  int r = tmp(p);
  if (op->u.mma_sync.k == 32) {
    /* fp8 (m16n8k32): MLIR 22's nvvm.mma.sync refuses e4m3/e5m2 ("invalid shape or
     * multiplicand type"), so the instruction ptx.c prints, as inline assembly; D and C are
     * separate operands here, the result written back into the accumulators as below */
    L(p,
      "%%t%d = llvm.inline_asm \"mma.sync.aligned.m16n8k32.row.col.f32.%s.%s.f32 {$0, $1, $2, "
      "$3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};\", "
      "\"=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f\" %s, %s, %s, %s, %s, %s, %s, %s, %s, %s : (i32, i32, "
      "i32, i32, i32, i32, f32, f32, f32, f32) -> %s",
      r, hg_dtype_name(op->u.mma_sync.a), hg_dtype_name(op->u.mma_sync.b), frag[0], frag[1],
      frag[2], frag[3], frag[4], frag[5], acc[0], acc[1], acc[2], acc[3], ty);
  } else {
    L(p,
      "%%t%d = nvvm.mma.sync A[%s, %s, %s, %s] B[%s, %s] C[%s, %s, %s, %s] {layoutA = "
      "#nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = "
      "#nvvm.mma_type<%s>, multiplicandBPtxType = #nvvm.mma_type<%s>, shape = #nvvm.shape<m = 16, "
      "n = 8, k = 16>} : (%s, %s, f32) -> %s",
      r, frag[0], frag[1], frag[2], frag[3], frag[4], frag[5], acc[0], acc[1], acc[2], acc[3], t, t,
      ft, ft, ty);
  }
  for (int k = 0; k < NACC; k++) {
    int e = tmp(p);
    L(p, "%%t%d = llvm.extractvalue %%t%d[%d] : %s", e, r, k, ty);
    name_t v;
    snprintf(v, sizeof v, "%%t%d", e);
    store_slot(p, o[k], v);
  }
}

/* ----------------------------------------------------------------------------- ops */

/* Shifts: PTX clamps the amount (shl/shr.u by >= width give 0, shr.s gives the sign
 * fill), while arith.shli/shrsi/shrui by >= width are poison. Select the clamped result
 * explicitly so that both backends agree for every amount; for a 64-bit shift ptx.c
 * first narrows the amount to u32 (PTX shift amounts are .u32), and so does this. */
static void print_shift(mprinter_t *p, const hg_ir_op_t *op, const char *x, const char *y,
                        const char *d) {
  const int32_t *o = hg_ir_operands(p->b, op);
  bool wide = vtype(p, o[0]) == HG_T_I64;
  const char *ty = wide ? "i64" : "i32";
  int width = wide ? 64 : 32;
  const hg_ir_value_t *amount = &p->b->values[o[1]];
  if (amount->kind == HG_VK_SSA && p->b->ops[amount->def].code == HG_OP_CONST) {
    int64_t k = p->b->ops[amount->def].u.cnst.i;
    if (k >= 0 && k < width) { /* a constant in range: the plain shift says it all */
      const char *name = op->u.bin == HG_SHL ? "shli" : op->u.bin == HG_SHR_S ? "shrsi" : "shrui";
      L(p, "%s = arith.%s %s, %s : %s", d, name, x, y, ty);
      return;
    }
  }
  int amt32 = -1;
  char amt[NAME_BYTES];
  if (wide) {
    amt32 = tmp(p);
    L(p, "%%t%d = arith.trunci %s : i64 to i32", amt32, y);
    int e = tmp(p);
    L(p, "%%t%d = arith.extui %%t%d : i32 to i64", e, amt32);
    snprintf(amt, sizeof amt, "%%t%d", e);
  } else {
    snprintf(amt, sizeof amt, "%s", y);
  }
  char amt_u32[NAME_BYTES];
  if (wide)
    snprintf(amt_u32, sizeof amt_u32, "%%t%d", amt32);
  else
    snprintf(amt_u32, sizeof amt_u32, "%s", y);
  int w = cst(p, width, "i32");
  int big = tmp(p);
  L(p, "%%t%d = arith.cmpi uge, %s, %%t%d : i32", big, amt_u32, w);
  if (op->u.bin == HG_SHR_S) {
    int fill = cst(p, width - 1, ty);
    int a = tmp(p);
    L(p, "%%t%d = arith.select %%t%d, %%t%d, %s : %s", a, big, fill, amt, ty);
    L(p, "%s = arith.shrsi %s, %%t%d : %s", d, x, a, ty);
    return;
  }
  int sh = tmp(p), zero = cst(p, 0, ty);
  L(p, "%%t%d = arith.%s %s, %s : %s", sh, op->u.bin == HG_SHL ? "shli" : "shrui", x, amt, ty);
  L(p, "%s = arith.select %%t%d, %%t%d, %%t%d : %s", d, big, zero, sh, ty);
}

/* The vector or scalar LLVM type of a load/store, and its alignment. */
static void mem_shape(const hg_ir_op_t *op, char *ty, size_t size, int *align) {
  const char *elem = op->u.mem.bits == 8          ? "i8"
                     : op->u.mem.bits == 16       ? "i16"
                     : op->u.mem.type == HG_T_F32 ? "f32"
                     : op->u.mem.type == HG_T_I64 ? "i64"
                                                  : "i32";
  int ebytes = op->u.mem.bits / 8;
  if (op->u.mem.n == 1)
    snprintf(ty, size, "%s", elem);
  else
    snprintf(ty, size, "vector<%dx%s>", op->u.mem.n, elem);
  *align = ebytes * op->u.mem.n; /* the IR requires alignment to the access's size */
}

static int mem_ptr(mprinter_t *p, const hg_ir_op_t *op, const char *addr, int *space) {
  switch (op->u.mem.space) {
  case HG_GLOBAL:
    *space = 1;
    return ptr_global(p, addr);
  case HG_SHARED:
    *space = 3;
    return ptr_shared(p, addr, 3);
  default:
    *space = 7; /* shared::cluster */
    return ptr_shared(p, addr, 7);
  }
}

/* A global store with the .cs cache operator, as ptx.c prints it, in inline assembly:
 * llvm.store has no cache operator NVPTX would print. The address is a generic pointer
 * (cvta.to.global first, as ptx.c); the values' constraint and PTX type follow the IR type
 * (a narrow store takes the low bits of a 32-bit register, as ld/st allow). */
static void print_store_cs(mprinter_t *p, const hg_ir_op_t *op, const int32_t *o) {
  const int n = op->u.mem.n;
  const bool f32 = op->u.mem.type == HG_T_F32, i64 = op->u.mem.type == HG_T_I64;
  const char *ptype = op->u.mem.bits == 8    ? "u8"
                      : op->u.mem.bits == 16 ? "u16"
                      : f32                  ? "f32"
                      : i64                  ? "u64"
                                             : "u32";
  const char *con = f32 ? "f" : i64 ? "l" : "r";
  name_t nv[5];
  const char *v[5];
  for (int k = 0; k <= n; k++) v[k] = V(p, o[k], nv[k]);
  hg_sbuf_put(
      &p->s,
      "      %*sllvm.inline_asm has_side_effects \"{ .reg .b64 a; cvta.to.global.u64 a, $0; "
      "st.global.cs.%s%s [a], ",
      2 * p->depth, "",
      n == 4   ? "v4."
      : n == 2 ? "v2."
               : "",
      ptype);
  if (n > 1) hg_sbuf_put(&p->s, "{");
  for (int k = 1; k <= n; k++) hg_sbuf_put(&p->s, "%s$%d", k > 1 ? ", " : "", k);
  hg_sbuf_put(&p->s, "%s; }\", \"l", n > 1 ? "}" : "");
  for (int k = 0; k < n; k++) hg_sbuf_put(&p->s, ",%s", con);
  hg_sbuf_put(&p->s, ",~{memory}\" %s", v[0]);
  for (int k = 1; k <= n; k++) hg_sbuf_put(&p->s, ", %s", v[k]);
  hg_sbuf_put(&p->s, " : (i64");
  for (int k = 0; k < n; k++) hg_sbuf_put(&p->s, ", %s", mty(op->u.mem.type));
  hg_sbuf_put(&p->s, ") -> ()\n");
}

static void print_comment(mprinter_t *p, const char *t) {
  while (*t) {
    const char *nl = strchr(t, '\n');
    int len = nl ? (int)(nl - t) : (int)strlen(t);
    /* kept ASCII like ptx.c: control and non-ASCII bytes become '?' */
    hg_sbuf_put(&p->s, "      %*s// ", 2 * p->depth, "");
    for (int c = 0; c < len; c++) {
      unsigned char ch = (unsigned char)t[c];
      hg_sbuf_put(&p->s, "%c", ch < 0x20 || ch >= 0x7f ? '?' : (char)ch);
    }
    hg_sbuf_put(&p->s, "\n");
    t += len + (nl ? 1 : 0);
  }
}

/* One element's global reduction, as ptx.c's red.global: llvm.atomicrmw, relaxed
 * (monotonic) at device scope, the result unused, for every pair LLVM has a binop for; NVPTX
 * prints atom.global.<op> (the same operation, its old value discarded): add (integer, or
 * fadd for f32, f16 and bf16: atom.add.noftz.f16/bf16), signed or unsigned min/max, and,
 * or, xor, and uinc_wrap/udec_wrap, which are PTX's inc/dec exactly (old >= v ? 0 : old + 1;
 * old == 0 || old > v ? v : old - 1). f16/bf16 min/max: LLVM would expand atomicrmw
 * fmin/fmax into a CAS loop on the enclosing 32-bit word; the inline assembly of
 * hg_ir_red_cas_ptx is ptx.c's own 16-bit loop, so both backends run the same code (as
 * createpolicy). */
static void print_red(mprinter_t *p, const hg_ir_op_t *op, const int32_t *o) {
  const hg_reduce_op_t red = op->u.red.op;
  const hg_dtype_t t = op->u.red.dtype;
  name_t n0, n1;
  const char *addr = V(p, o[0], n0), *v = V(p, o[1], n1);
  const char *cas = hg_ir_red_cas_ptx(red, t);
  if (cas) {
    hg_sbuf_put(&p->s, "      %*sllvm.inline_asm has_side_effects \"", 2 * p->depth, "");
    for (const char *c = cas; *c; c++) {
      if (*c == '\n')
        hg_sbuf_put(&p->s, "\\n");
      else if (*c == '"' || *c == '\\')
        hg_sbuf_put(&p->s, "\\%c", *c);
      else
        hg_sbuf_put(&p->s, "%c", *c);
    }
    hg_sbuf_put(&p->s, "\", \"l,r,~{memory}\" %s, %s : (i64, i32) -> ()\n", addr, v);
    return;
  }
  const char *bin;
  switch (red) {
  case HG_RED_ADD:
    bin = t == HG_F32 || t == HG_F16 || t == HG_BF16 ? "fadd" : "add";
    break;
  case HG_RED_MIN:
    bin = t == HG_S32 ? "min" : "umin";
    break;
  case HG_RED_MAX:
    bin = t == HG_S32 ? "max" : "umax";
    break;
  case HG_RED_INC:
    bin = "uinc_wrap";
    break;
  case HG_RED_DEC:
    bin = "udec_wrap";
    break;
  case HG_RED_AND:
    bin = "_and";
    break;
  case HG_RED_OR:
    bin = "_or";
    break;
  default:
    bin = "_xor";
    break;
  }
  const char *ty = t == HG_U64    ? "i64"
                   : t == HG_F32  ? "f32"
                   : t == HG_F16  ? "f16"
                   : t == HG_BF16 ? "bf16"
                                  : "i32";
  char val[NAME_BYTES];
  snprintf(val, sizeof val, "%s", v);
  if (t == HG_F16 || t == HG_BF16) { /* the I32's low 16 bits, as the 16-bit float */
    int h = tmp(p), f = tmp(p);
    L(p, "%%t%d = arith.trunci %s : i32 to i16", h, v);
    L(p, "%%t%d = arith.bitcast %%t%d : i16 to %s", f, h, ty);
    snprintf(val, sizeof val, "%%t%d", f);
  }
  int ptr = ptr_global(p, addr);
  int r = tmp(p);
  L(p, "%%t%d = llvm.atomicrmw %s %%t%d, %s syncscope(\"device\") monotonic : !llvm.ptr<1>, %s", r,
    bin, ptr, val, ty);
}

static void print_op(mprinter_t *p, int32_t i) {
  const hg_builder_t *b = p->b;
  const hg_ir_op_t *op = &b->ops[i];
  const int32_t *o = hg_ir_operands(b, op);
  const int32_t *r = hg_ir_results(b, op);
  name_t n0, n1, n2, n3, n4;
  char list[512], attrs[192];

  switch (op->code) {
  case HG_OP_COMMENT:
    print_comment(p, hg_ir_comment_text(b, op));
    break;
  case HG_OP_CONST: {
    hg_type_t t = vtype(p, r[0]);
    if (t == HG_T_F32) {
      /* the bit pattern, so that -0.0, NaN payloads and every float survive exactly */
      uint32_t bits;
      float f = op->u.cnst.f;
      memcpy(&bits, &f, sizeof bits);
      L(p, "%s = arith.constant 0x%08" PRIX32 " : f32 // %g", p->names[r[0]], bits, (double)f);
    } else if (t == HG_T_PRED) {
      L(p, "%s = arith.constant %s", p->names[r[0]], op->u.cnst.i ? "true" : "false");
    } else {
      L(p, "%s = arith.constant %" PRId64 " : %s", p->names[r[0]], op->u.cnst.i, mty(t));
    }
    break;
  }
  case HG_OP_VAR:
    /* the slot is in the entry block; an initial value is stored here, where the
     * generator declared it (an uninitialised variable was zeroed at entry) */
    if (o[0]) store_slot(p, r[0], V(p, o[0], n0));
    break;
  case HG_OP_ASSIGN:
    store_slot(p, r[0], V(p, o[0], n0));
    break;
  case HG_OP_BIN: {
    hg_type_t t = vtype(p, o[0]);
    const char *x = V(p, o[0], n0), *y = V(p, o[1], n1);
    const char *d = p->names[r[0]];
    if (op->u.bin == HG_SHL || op->u.bin == HG_SHR_S || op->u.bin == HG_SHR_U)
      print_shift(p, op, x, y, d);
    else
      L(p, "%s = %s %s, %s : %s", d, binop_arith(op->u.bin), x, y, mty(t));
    break;
  }
  case HG_OP_MAD: {
    /* mad.lo = the low half of x*y+z: a wrapping multiply and add */
    hg_type_t t = vtype(p, r[0]);
    const char *x = V(p, o[0], n0), *y = V(p, o[1], n1), *z = V(p, o[2], n2);
    int m = tmp(p);
    L(p, "%%t%d = arith.muli %s, %s : %s", m, x, y, mty(t));
    L(p, "%s = arith.addi %%t%d, %s : %s", p->names[r[0]], m, z, mty(t));
    break;
  }
  case HG_OP_FFMA: {
    const char *x = V(p, o[0], n0), *y = V(p, o[1], n1), *z = V(p, o[2], n2);
    L(p, "%s = llvm.intr.fma(%s, %s, %s) : (f32, f32, f32) -> f32", p->names[r[0]], x, y, z);
    break;
  }
  case HG_OP_FUNARY: {
    /* the NVVM intrinsics of ptx.c's instructions: LLVM lowers each to that instruction */
    const char *x = V(p, o[0], n0), *d = p->names[r[0]];
    switch (op->u.funary) {
    case HG_FABS:
      L(p, "%s = llvm.intr.fabs(%s) : (f32) -> f32", d, x);
      break;
    case HG_FNEG:
      L(p, "%s = arith.negf %s : f32", d, x);
      break;
    case HG_FEX2:
      L(p, "%s = llvm.call_intrinsic \"llvm.nvvm.ex2.approx.ftz.f\"(%s) : (f32) -> f32", d, x);
      break;
    case HG_FRCP:
      L(p, "%s = llvm.call_intrinsic \"llvm.nvvm.rcp.approx.ftz.f\"(%s) : (f32) -> f32", d, x);
      break;
    case HG_FTANH:
      /* LLVM 22 has no NVVM intrinsic for it: the instruction, as a pure asm statement */
      L(p, "%s = llvm.inline_asm \"tanh.approx.f32 $0, $1;\", \"=f,f\" %s : (f32) -> f32", d, x);
      break;
    }
    break;
  }
  case HG_OP_NOT: {
    hg_type_t t = vtype(p, r[0]);
    const char *x = V(p, o[0], n0);
    int m = t == HG_T_PRED ? tmp(p) : cst(p, -1, mty(t));
    if (t == HG_T_PRED) L(p, "%%t%d = arith.constant true", m);
    L(p, "%s = arith.xori %s, %%t%d : %s", p->names[r[0]], x, m, mty(t));
    break;
  }
  case HG_OP_CMP: {
    const char *x = V(p, o[0], n0), *y = V(p, o[1], n1);
    L(p, "%s = arith.%s %s, %s, %s : %s", p->names[r[0]], op->u.cmp >= HG_FLT ? "cmpf" : "cmpi",
      cmp_arith(op->u.cmp), x, y, mty(vtype(p, o[0])));
    break;
  }
  case HG_OP_SELECT: {
    const char *c = V(p, o[0], n0), *x = V(p, o[1], n1), *y = V(p, o[2], n2);
    L(p, "%s = arith.select %s, %s, %s : %s", p->names[r[0]], c, x, y, mty(vtype(p, r[0])));
    break;
  }
  case HG_OP_SEXT:
    L(p, "%s = arith.extsi %s : i32 to i64", p->names[r[0]], V(p, o[0], n0));
    break;
  case HG_OP_ZEXT:
    L(p, "%s = arith.extui %s : i32 to i64", p->names[r[0]], V(p, o[0], n0));
    break;
  case HG_OP_TRUNC:
    L(p, "%s = arith.trunci %s : i64 to i32", p->names[r[0]], V(p, o[0], n0));
    break;
  case HG_OP_I2F: /* round to nearest even, as cvt.rn.f32.s32 */
    L(p, "%s = arith.sitofp %s : i32 to f32", p->names[r[0]], V(p, o[0], n0));
    break;
  case HG_OP_F2I:
    /* cvt.rzi.s32.f32 saturates (NaN -> 0); arith.fptosi is poison out of range, so use
     * the saturating intrinsic, whose result is defined for every input and identical */
    L(p, "%s = llvm.call_intrinsic \"llvm.fptosi.sat.i32.f32\"(%s) : (f32) -> i32", p->names[r[0]],
      V(p, o[0], n0));
    break;
  case HG_OP_BITCAST:
    L(p, "%s = arith.bitcast %s : %s to %s", p->names[r[0]], V(p, o[0], n0), mty(vtype(p, o[0])),
      mty(vtype(p, r[0])));
    break;
  case HG_OP_PACK_F32X2: {
    if (op->u.dtype == HG_E4M3 || op->u.dtype == HG_E5M2) {
      /* cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32: the first operand in the upper byte */
      int t = tmp(p);
      L(p,
        "%%t%d = nvvm.convert.f32x2.to.f8x2 %s, %s {rnd = #nvvm.fp_rnd_mode<rn>, sat = "
        "#nvvm.sat_mode<satfinite>} : i16 (%s)",
        t, V(p, o[1], n1), V(p, o[0], n0), op->u.dtype == HG_E4M3 ? "f8E4M3FN" : "f8E5M2");
      L(p, "%s = arith.extui %%t%d : i16 to i32", p->names[r[0]], t);
      break;
    }
    /* nvvm.convert.f32x2.to.{bf16x2,f16x2} a, b is cvt.rn.*x2.f32 d, a, b, which puts a in
     * the upper half: hi goes first, as in ptx.c */
    const char *lo = V(p, o[0], n0), *hi = V(p, o[1], n1);
    const char *h = op->u.dtype == HG_BF16 ? "bf16" : "f16";
    int t = tmp(p);
    L(p, "%%t%d = nvvm.convert.f32x2.to.%sx2 %s, %s {rnd = #nvvm.fp_rnd_mode<rn>} : vector<2x%s>",
      t, h, hi, lo, h);
    L(p, "%s = llvm.bitcast %%t%d : vector<2x%s> to i32", p->names[r[0]], t, h);
    break;
  }
  case HG_OP_UNPACK_F32: {
    const char *x = V(p, o[0], n0);
    const char *d = p->names[r[0]];
    if (op->u.dtype == HG_BF16) { /* bf16 is the top half of an f32: exact */
      int c = cst(p, 16, "i32"), s = tmp(p);
      L(p, "%%t%d = arith.shli %s, %%t%d : i32", s, x, c);
      L(p, "%s = arith.bitcast %%t%d : i32 to f32", d, s);
    } else if (op->u.dtype == HG_F16) {
      int h = tmp(p), f = tmp(p);
      L(p, "%%t%d = arith.trunci %s : i32 to i16", h, x);
      L(p, "%%t%d = arith.bitcast %%t%d : i16 to f16", f, h);
      L(p, "%s = arith.extf %%t%d : f16 to f32", d, f);
    } else {
      /* the low byte through cvt.rn.f16x2.{e4m3x2,e5m2x2} (exact), then its low half */
      int h = tmp(p), v = tmp(p), c = tmp(p), z = cst(p, 0, "i32"), e = tmp(p);
      L(p, "%%t%d = arith.trunci %s : i32 to i16", h, x);
      L(p, "%%t%d = llvm.bitcast %%t%d : i16 to vector<2xi8>", v, h);
      L(p, "%%t%d = nvvm.convert.f8x2.to.f16x2 %%t%d : vector<2xi8> (%s) -> vector<2xf16>", c, v,
        op->u.dtype == HG_E4M3 ? "f8E4M3FN" : "f8E5M2");
      L(p, "%%t%d = llvm.extractelement %%t%d[%%t%d : i32] : vector<2xf16>", e, c, z);
      L(p, "%s = arith.extf %%t%d : f16 to f32", d, e);
    }
    break;
  }
  case HG_OP_SREG:
    L(p, "%s = nvvm.read.ptx.sreg.%s : i32", p->names[r[0]], sreg_mlir[op->u.sreg]);
    break;
  case HG_OP_CLOCK64:
    L(p, "%s = nvvm.read.ptx.sreg.clock64 : i64", p->names[r[0]]);
    break;
  case HG_OP_SMEM_ADDR: {
    int c = cst(p, op->u.smem_offset, "i32");
    L(p, "%s = arith.addi %%smem_base, %%t%d : i32", p->names[r[0]], c);
    break;
  }

  /* control flow: the blocks and branches of ptx.c's labels. A loop's back edge is an
   * llvm.br that forbids LLVM's unrolling, so ptxas gets the rolled loop ptx.c hands it:
   * LLVM -O3 unrolled the copy loops of copy_cpasync.c by their bounded trip count and
   * hoisted every chunk's address out of the k-loop (200-460 B of spills in the producer). */
  case HG_OP_IF: {
    const char *c = V(p, o[0], n0);
    if (op->mid >= 0)
      L(p, "cf.cond_br %s, ^if%d_then, ^if%d_else", c, i, i);
    else
      L(p, "cf.cond_br %s, ^if%d_then, ^if%d_end", c, i, i);
    label(p, "if%d_then", i);
    p->depth++;
    break;
  }
  case HG_OP_ELSE:
    L(p, "cf.br ^if%d_end", op->open);
    p->depth--;
    label(p, "if%d_else", op->open);
    p->depth++;
    break;
  case HG_OP_ENDIF:
    L(p, "cf.br ^if%d_end", op->open);
    p->depth--;
    label(p, "if%d_end", op->open);
    break;
  case HG_OP_LOOP:
    L(p, "cf.br ^loop%d", i);
    label(p, "loop%d", i);
    p->depth++;
    break;
  case HG_OP_BREAK_IF: {
    const char *c = V(p, o[0], n0);
    L(p, "cf.cond_br %s, ^loop%d_end, ^break%d_no", c, op->open, i);
    label(p, "break%d_no", i);
    break;
  }
  case HG_OP_ENDLOOP:
    L(p, "llvm.br ^loop%d " NO_UNROLL, op->open);
    p->depth--;
    label(p, "loop%d_end", op->open);
    break;
  case HG_OP_FOR: {
    /* counter := start; header: counter < end (signed, end re-read each time as ptx.c
     * re-reads its register) */
    store_slot(p, r[0], V(p, o[0], n0));
    L(p, "cf.br ^for%d", i);
    label(p, "for%d", i);
    p->depth++;
    const char *c = V(p, r[0], n1);
    const char *e = V(p, o[1], n2);
    int t = tmp(p);
    L(p, "%%t%d = arith.cmpi slt, %s, %s : i32", t, c, e);
    L(p, "cf.cond_br %%t%d, ^for%d_body, ^for%d_end", t, i, i);
    label(p, "for%d_body", i);
    break;
  }
  case HG_OP_ENDFOR: {
    const hg_ir_op_t *f = &b->ops[op->open];
    const int32_t *fo = hg_ir_operands(b, f);
    int32_t counter = hg_ir_results(b, f)[0];
    const char *c = V(p, counter, n0), *s = V(p, fo[2], n1);
    int t = tmp(p);
    L(p, "%%t%d = arith.addi %s, %s : i32", t, c, s);
    snprintf(n2, sizeof n2, "%%t%d", t);
    store_slot(p, counter, n2);
    L(p, "llvm.br ^for%d " NO_UNROLL, op->open);
    p->depth--;
    label(p, "for%d_end", op->open);
    break;
  }
  case HG_OP_RETURN:
    /* whatever follows in this region is unreachable; it still needs a block */
    L(p, "llvm.return");
    label(p, "ret%d_after", i);
    break;

  case HG_OP_LOAD: {
    char ty[32];
    int align, space;
    mem_shape(op, ty, sizeof ty, &align);
    int ptr = mem_ptr(p, op, V(p, o[0], n0), &space);
    int t = tmp(p);
    L(p, "%%t%d = llvm.load %%t%d {alignment = %d : i64} : !llvm.ptr<%d> -> %s", t, ptr, align,
      space, ty);
    const char *vt = mty(op->u.mem.type);
    if (op->u.mem.n == 1) {
      if (op->u.mem.bits < 32) /* ld.u8/u16: zero-extended into the I32 */
        L(p, "%s = arith.extui %%t%d : %s to i32", p->names[r[0]], t, ty);
      else
        L(p, "%s = llvm.bitcast %%t%d : %s to %s", p->names[r[0]], t, ty, vt);
    } else {
      for (int k = 0; k < op->u.mem.n; k++) {
        int c = cst(p, k, "i32");
        L(p, "%s = llvm.extractelement %%t%d[%%t%d : i32] : %s", p->names[r[k]], t, c, ty);
      }
    }
    break;
  }
  case HG_OP_STORE: {
    if (op->u.mem.cs) {
      print_store_cs(p, op, o);
      break;
    }
    char ty[32];
    int align, space;
    mem_shape(op, ty, sizeof ty, &align);
    int ptr = mem_ptr(p, op, V(p, o[0], n0), &space);
    char value[NAME_BYTES];
    if (op->u.mem.n == 1) {
      const char *v = V(p, o[1], n1);
      if (op->u.mem.bits < 32) { /* st.u8/u16: the low bits */
        int t = tmp(p);
        L(p, "%%t%d = arith.trunci %s : i32 to %s", t, v, ty);
        snprintf(value, sizeof value, "%%t%d", t);
      } else {
        snprintf(value, sizeof value, "%s", v);
      }
    } else {
      int vec = tmp(p);
      L(p, "%%t%d = llvm.mlir.poison : %s", vec, ty);
      for (int k = 0; k < op->u.mem.n; k++) {
        const char *v = V(p, o[1 + k], n1);
        int c = cst(p, k, "i32"), nv = tmp(p);
        L(p, "%%t%d = llvm.insertelement %s, %%t%d[%%t%d : i32] : %s", nv, v, vec, c, ty);
        vec = nv;
      }
      snprintf(value, sizeof value, "%%t%d", vec);
    }
    L(p, "llvm.store %s, %%t%d {alignment = %d : i64} : %s, !llvm.ptr<%d>", value, ptr, align, ty,
      space);
    break;
  }
  case HG_OP_ATOMIC_ADD_F32: {
    if (op->u.mem.n > 1) {
      /* vectors: LLVM's atomicrmw has no vector fadd NVPTX lowers to one instruction; the
       * instruction ptx.c prints, as inline assembly (relaxed, .gpu, as below). Names
       * first: reading a variable prints a load line. */
      const int n = op->u.mem.n;
      name_t nv[5];
      const char *v[5];
      for (int k = 0; k <= n; k++) v[k] = V(p, o[k], nv[k]);
      hg_sbuf_put(&p->s,
                  "      %*sllvm.inline_asm has_side_effects \"{ .reg .b64 a; cvta.to.global.u64 "
                  "a, $0; red.global.add.v%d.f32 [a], {",
                  2 * p->depth, "", n);
      for (int k = 1; k <= n; k++) hg_sbuf_put(&p->s, "%s$%d", k > 1 ? ", " : "", k);
      hg_sbuf_put(&p->s, "}; }\", \"l");
      for (int k = 0; k < n; k++) hg_sbuf_put(&p->s, ",f");
      hg_sbuf_put(&p->s, ",~{memory}\" %s", v[0]);
      for (int k = 1; k <= n; k++) hg_sbuf_put(&p->s, ", %s", v[k]);
      hg_sbuf_put(&p->s, " : (i64");
      for (int k = 0; k < n; k++) hg_sbuf_put(&p->s, ", f32");
      hg_sbuf_put(&p->s, ") -> ()\n");
      break;
    }
    /* relaxed, device scope: what red.global.add.f32 without qualifiers means */
    int ptr = ptr_global(p, V(p, o[0], n0));
    int t = tmp(p);
    L(p,
      "%%t%d = llvm.atomicrmw fadd %%t%d, %s syncscope(\"device\") monotonic : !llvm.ptr<1>, f32",
      t, ptr, V(p, o[1], n1));
    break;
  }
  case HG_OP_ATOMIC_ADD_U32: {
    /* relaxed, device scope, as atom.global.add.u32 without qualifiers */
    int ptr = ptr_global(p, V(p, o[0], n0));
    L(p, "%s = llvm.atomicrmw add %%t%d, %s syncscope(\"device\") monotonic : !llvm.ptr<1>, i32",
      p->names[r[0]], ptr, V(p, o[1], n1));
    break;
  }
  case HG_OP_RED:
    print_red(p, op, o);
    break;
  case HG_OP_REDUX: {
    static const char *const kinds[] = {"add", "umin", "umax", "", "", "and", "or", "xor"};
    int m = cst(p, -1, "i32");
    L(p, "%s = nvvm.redux.sync %s %s, %%t%d : i32 -> i32", p->names[r[0]], kinds[op->u.red.op],
      V(p, o[0], n0), m);
    break;
  }
  case HG_OP_MAPA: {
    int ptr = ptr_shared(p, V(p, o[0], n0), 3);
    int m = tmp(p);
    L(p, "%%t%d = nvvm.mapa %%t%d, %s : !llvm.ptr<3> -> !llvm.ptr<7>", m, ptr, V(p, o[1], n1));
    /* shared::cluster addresses fit 32 bits (PTX has mapa.shared::cluster.u32) */
    L(p, "%s = llvm.ptrtoint %%t%d : !llvm.ptr<7> to i32", p->names[r[0]], m);
    break;
  }

  case HG_OP_BAR_SYNC: {
    int id = cst(p, op->u.bar.id, "i32");
    if (op->u.bar.threads) {
      int n = cst(p, op->u.bar.threads, "i32");
      L(p, "nvvm.barrier id = %%t%d number_of_threads = %%t%d", id, n);
    } else {
      L(p, "nvvm.barrier id = %%t%d", id);
    }
    break;
  }
  case HG_OP_BAR_ARRIVE: {
    /* the LLVM intrinsic, not nvvm.barrier.arrive: that op lowers to inline assembly with
     * the id and count in registers (a register barrier id hides from ptxas which named
     * barriers the kernel uses) and, being inline assembly, is not `convergent`, so LLVM
     * could duplicate this .aligned instruction into divergent paths. The intrinsic is
     * convergent and prints immediates: bar.arrive id, threads; as ptx.c does. */
    int id = tmp(p), n = tmp(p);
    L(p, "%%t%d = llvm.mlir.constant(%d : i32) : i32", id, op->u.bar.id);
    L(p, "%%t%d = llvm.mlir.constant(%d : i32) : i32", n, op->u.bar.threads);
    L(p,
      "llvm.call_intrinsic \"llvm.nvvm.barrier.cta.arrive.aligned.count\"(%%t%d, %%t%d) : (i32, "
      "i32) -> ()",
      id, n);
    break;
  }
  case HG_OP_FENCE_PROXY_ASYNC:
    L(p, "nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = "
         "#nvvm.shared_space<cta>}");
    break;
  case HG_OP_FENCE_GPU:
    L(p, "llvm.fence syncscope(\"device\") acq_rel");
    break;
  case HG_OP_GRIDDEP_WAIT:
    L(p, "nvvm.griddepcontrol wait");
    break;
  case HG_OP_GRIDDEP_LAUNCH:
    L(p, "nvvm.griddepcontrol launch_dependents");
    break;
  case HG_OP_FENCE_MBAR_INIT:
    L(p, "nvvm.fence.mbarrier.init");
    break;
  case HG_OP_CLUSTER_ARRIVE:
    L(p, "nvvm.cluster.arrive%s", op->u.relaxed ? ".relaxed" : "");
    break;
  case HG_OP_CLUSTER_WAIT:
    L(p, "nvvm.cluster.wait");
    break;
  case HG_OP_ELECT_SYNC:
    L(p, "%s = nvvm.elect.sync -> i1", p->names[r[0]]);
    break;

  /* mbarriers. nvgpu for init, arrive and arrive.expect_tx: they take a barrier group
   * (!nvgpu.mbarrier.group) and an index; the IR's barrier is an address, so the group is
   * a one-barrier view of it (mbar_group) and the index 0. The counts are index operands
   * (truncated back to i32 by the lowering, like coordinates). */
  case HG_OP_MBAR_INIT: {
    const char *a = V(p, o[0], n0), *c = V(p, o[1], n1);
    int g = mbar_group(p, a);
    int ci = tmp(p);
    L(p, "%%t%d = arith.index_cast %s : i32 to index", ci, c);
    L(p, "nvgpu.mbarrier.init %%t%d[%%c0_index], %%t%d : !hg_mbar", g, ci);
    break;
  }
  case HG_OP_MBAR_ARRIVE: {
    int g = mbar_group(p, V(p, o[0], n0));
    int t = tmp(p);
    L(p, "%%t%d = nvgpu.mbarrier.arrive %%t%d[%%c0_index] : !hg_mbar -> !nvgpu.mbarrier.token", t,
      g);
    break;
  }
  case HG_OP_MBAR_ARRIVE_EXPECT_TX: {
    const char *a = V(p, o[0], n0), *c = V(p, o[1], n1);
    int g = mbar_group(p, a);
    int ci = tmp(p);
    L(p, "%%t%d = arith.index_cast %s : i32 to index", ci, c);
    L(p, "nvgpu.mbarrier.arrive.expect_tx %%t%d[%%c0_index], %%t%d : !hg_mbar", g, ci);
    break;
  }
  case HG_OP_MBAR_ARRIVE_CLUSTER: {
    /* nvvm: nvgpu has no remote arrive. mapa to the barrier in CTA cta_rank, then an
     * arrive on the shared::cluster pointer with the default semantics (.release.cta),
     * which NVPTX prints as mbarrier.arrive.shared::cluster.b64 _, [addr], as ptx.c does.
     * Not scope = cluster (.release.cluster): ptxas implements that with a MEMBAR.ALL.GPU
     * before every arrive, which throttled the GEMM's stage releases (see ptx.c). */
    int ptr = ptr_shared(p, V(p, o[0], n0), 3);
    int m = tmp(p);
    L(p, "%%t%d = nvvm.mapa %%t%d, %s : !llvm.ptr<3> -> !llvm.ptr<7>", m, ptr, V(p, o[1], n1));
    L(p, "nvvm.mbarrier.arrive %%t%d : !llvm.ptr<7>", m);
    break;
  }
  case HG_OP_MBAR_EXPECT_TX: {
    /* nvvm: nvgpu has no expect_tx without an arrive */
    int ptr = ptr_shared(p, V(p, o[0], n0), 3);
    L(p, "nvvm.mbarrier.expect_tx %%t%d, %s : !llvm.ptr<3>, i32", ptr, V(p, o[1], n1));
    break;
  }
  case HG_OP_MBAR_TRY_WAIT: {
    /* nvvm.mbarrier.try_wait with an i32 phase is the try_wait.parity intrinsic, one
     * attempt that returns the predicate, as ptx.c's try_wait.parity. (nvgpu's
     * try_wait.parity is a blocking spin loop in inline assembly with a suspend-time hint,
     * a different instruction from the one the PTX backend prints.) */
    int ptr = ptr_shared(p, V(p, o[0], n0), 3);
    L(p, "%s = nvvm.mbarrier.try_wait %%t%d, %s : !llvm.ptr<3>, i32 -> i1", p->names[r[0]], ptr,
      V(p, o[1], n1));
    break;
  }
  case HG_OP_MBAR_WAIT: {
    /* the spin loop of ptx.c, around the same intrinsic */
    L(p, "cf.br ^wait%d", i);
    label(p, "wait%d", i);
    int ptr = ptr_shared(p, V(p, o[0], n0), 3);
    int t = tmp(p);
    L(p, "%%t%d = nvvm.mbarrier.try_wait %%t%d, %s : !llvm.ptr<3>, i32 -> i1", t, ptr,
      V(p, o[1], n1));
    L(p, "cf.cond_br %%t%d, ^wait%d_done, ^wait%d", t, i, i);
    label(p, "wait%d_done", i);
    break;
  }

  /* TMA */
  case HG_OP_CACHE_POLICY: {
    /* inline assembly: neither nvvm nor LLVM has createpolicy (no side effects: a pure
     * value, free to be hoisted or merged) */
    L(p, "%s = llvm.inline_asm \"createpolicy.fractional.L2::%s.b64 $0, 1.0;\", \"=l\" : () -> i64",
      p->names[r[0]], policy_ptx[op->u.policy]);
    break;
  }
  case HG_OP_TMA_LOAD: {
    int rank = op->u.tma.rank;
    int32_t mcast = o[HG_IR_TMA_LOAD_MCAST], hint = o[HG_IR_TMA_LOAD_HINT];
    const char *map = V(p, o[HG_IR_TMA_LOAD_TMAP], n0);
    const char *dst = V(p, o[HG_IR_TMA_LOAD_DST], n1);
    const char *bar = V(p, o[HG_IR_TMA_LOAD_BAR], n2);
    int m16 = -1;
    if (mcast) { /* ctaMask is a 16-bit operand in both dialects (and in PTX) */
      m16 = tmp(p);
      L(p, "%%t%d = arith.trunci %s : i32 to i16", m16, V(p, mcast, n3));
    }
    if (!hint) {
      /* nvgpu.tma.async.load: typed views of the tensor map, destination and barrier
       * (nominal shapes, see the aliases); coordinates as index (coords_index) */
      int desc = tmp(p);
      L(p, "%%t%d = builtin.unrealized_conversion_cast %s : !llvm.ptr to !hg_desc%d", desc, map,
        rank);
      int dm = memref_at(p, dst, rank, 16);
      int tile = tmp(p);
      L(p, "%%t%d = builtin.unrealized_conversion_cast %%t%d : !hg_mref%d to !hg_tile%d", tile, dm,
        rank, rank);
      int g = mbar_group(p, bar);
      coords_index(p, o + HG_IR_TMA_LOAD_COORDS, rank, list, sizeof list);
      char extra[64] = "";
      if (mcast) snprintf(extra, sizeof extra, " multicast_mask = %%t%d", m16);
      L(p,
        "nvgpu.tma.async.load %%t%d[%s], %%t%d[%%c0_index] to %%t%d%s : !hg_desc%d, !hg_mbar "
        "-> !hg_tile%d",
        desc, list, g, tile, extra, rank, rank);
    } else {
      /* nvvm: nvgpu.tma.async.load has no L2 cache-hint operand */
      int d3 = ptr_shared(p, dst, 3), d7 = tmp(p), b3 = ptr_shared(p, bar, 3);
      L(p, "%%t%d = llvm.addrspacecast %%t%d : !llvm.ptr<3> to !llvm.ptr<7>", d7, d3);
      coords_i32(p, o + HG_IR_TMA_LOAD_COORDS, rank, list, sizeof list);
      char extra[96] = "";
      if (mcast) snprintf(extra, sizeof extra, " multicast_mask = %%t%d", m16);
      size_t at = strlen(extra);
      snprintf(extra + at, sizeof extra - at, " l2_cache_hint = %s", V(p, hint, n4));
      L(p,
        "nvvm.cp.async.bulk.tensor.shared.cluster.global %%t%d, %s, %%t%d, box[%s]%s : "
        "!llvm.ptr<7>, !llvm.ptr",
        d7, map, b3, list, extra);
    }
    break;
  }
  case HG_OP_TMA_PREFETCH: {
    /* nvvm: nvgpu has no tensor prefetch (only the descriptor prefetch) */
    const char *map = V(p, o[0], n0);
    coords_i32(p, o + HG_IR_TMA_PREFETCH_COORDS, op->u.tma.rank, list, sizeof list);
    L(p, "nvvm.cp.async.bulk.tensor.prefetch %s, box[%s] : !llvm.ptr", map, list);
    break;
  }
  case HG_OP_TMA_STORE: {
    int rank = op->u.tma.rank;
    const char *map = V(p, o[0], n0), *src = V(p, o[HG_IR_TMA_STORE_SRC], n1);
    if (o[HG_IR_TMA_STORE_HINT]) {
      /* nvvm: nvgpu.tma.async.store has no L2 cache-hint operand */
      int s3 = ptr_shared(p, src, 3);
      coords_i32(p, o + HG_IR_TMA_STORE_COORDS, rank, list, sizeof list);
      L(p,
        "nvvm.cp.async.bulk.tensor.global.shared.cta %s, %%t%d, box[%s] l2_cache_hint = %s : "
        "!llvm.ptr, !llvm.ptr<3>",
        map, s3, list, V(p, o[HG_IR_TMA_STORE_HINT], n2));
      break;
    }
    int desc = tmp(p);
    L(p, "%%t%d = builtin.unrealized_conversion_cast %s : !llvm.ptr to !hg_desc%d", desc, map,
      rank);
    int sm = memref_at(p, src, rank, 16);
    int tile = tmp(p);
    L(p, "%%t%d = builtin.unrealized_conversion_cast %%t%d : !hg_mref%d to !hg_tile%d", tile, sm,
      rank, rank);
    coords_index(p, o + HG_IR_TMA_STORE_COORDS, rank, list, sizeof list);
    L(p, "nvgpu.tma.async.store %%t%d to %%t%d[%s] : !hg_tile%d -> !hg_desc%d", tile, desc, list,
      rank, rank);
    break;
  }
  case HG_OP_TMA_REDUCE: {
    /* nvvm: nvgpu has no TMA reduction */
    const char *map = V(p, o[0], n0);
    int src = ptr_shared(p, V(p, o[HG_IR_TMA_STORE_SRC], n1), 3);
    coords_i32(p, o + HG_IR_TMA_STORE_COORDS, op->u.tma.rank, list, sizeof list);
    L(p,
      "nvvm.cp.async.bulk.tensor.reduce %s, %%t%d, box[%s] {redKind = #nvvm.tma_redux_kind<%s>} "
      ": !llvm.ptr, !llvm.ptr<3>",
      map, src, list, reduce_mlir[op->u.tma.red]);
    break;
  }
  case HG_OP_BULK_COMMIT:
    L(p, "nvvm.cp.async.bulk.commit.group");
    break;
  case HG_OP_BULK_WAIT:
    L(p, "nvvm.cp.async.bulk.wait_group %d%s", op->u.bulk_wait.n,
      op->u.bulk_wait.read ? " {read}" : "");
    break;
  case HG_OP_CP_ASYNC: {
    /* nvvm.cp.async.shared.global: .cg for 16 bytes, else .ca, as ptx.c; the source pointer
     * in the global space (cvta.to.global), the optional source size as cpSize */
    int bytes = op->u.cp_async.bytes;
    int dst = ptr_shared(p, V(p, o[0], n0), 3);
    int src = ptr_global(p, V(p, o[1], n1));
    if (o[2])
      L(p,
        "nvvm.cp.async.shared.global %%t%d, %%t%d, %d, cache = %s, %s : !llvm.ptr<3>, "
        "!llvm.ptr<1>, i32",
        dst, src, bytes, bytes == 16 ? "cg" : "ca", V(p, o[2], n2));
    else
      L(p, "nvvm.cp.async.shared.global %%t%d, %%t%d, %d, cache = %s : !llvm.ptr<3>, !llvm.ptr<1>",
        dst, src, bytes, bytes == 16 ? "cg" : "ca");
    break;
  }
  case HG_OP_CP_ASYNC_COMMIT:
    L(p, "nvvm.cp.async.commit.group");
    break;
  case HG_OP_CP_ASYNC_WAIT:
    L(p, "nvvm.cp.async.wait.group %d", op->u.wait_n);
    break;
  case HG_OP_CP_ASYNC_MBAR_ARRIVE: {
    /* on a shared (address space 3) pointer: the .shared::cta form */
    int ptr = ptr_shared(p, V(p, o[0], n0), 3);
    L(p, "nvvm.cp.async.mbarrier.arrive %%t%d {noinc = true} : !llvm.ptr<3>", ptr);
    break;
  }
  case HG_OP_TMAP_PREFETCH: {
    /* nvgpu.tma.prefetch.descriptor: the tensor map as a typed descriptor (any rank will
     * do: the prefetch reads the 128 bytes whatever the tensor's rank) */
    int desc = tmp(p);
    L(p, "%%t%d = builtin.unrealized_conversion_cast %s : !llvm.ptr to !hg_desc1", desc,
      V(p, o[0], n0));
    L(p, "nvgpu.tma.prefetch.descriptor %%t%d : !hg_desc1", desc);
    break;
  }

  case HG_OP_WGMMA_FENCE:
    L(p, "nvvm.wgmma.fence.aligned");
    break;
  case HG_OP_WGMMA_COMMIT:
    L(p, "nvvm.wgmma.commit.group.sync.aligned");
    break;
  case HG_OP_WGMMA_WAIT:
    L(p, "nvvm.wgmma.wait.group.sync.aligned %d", op->u.wait_n);
    break;
  case HG_OP_WGMMA:
    print_wgmma(p, op);
    break;
  case HG_OP_SETMAXNREG:
    L(p, "nvvm.setmaxregister %s %d", op->u.maxnreg.increase ? "increase" : "decrease",
      op->u.maxnreg.regs);
    break;
  case HG_OP_STMATRIX: {
    /* nvvm.stmatrix: layout <col> is .trans */
    int ptr = ptr_shared(p, V(p, o[0], n0), 3);
    name_t bufs[4];
    const char *v[4] = {"", "", "", ""};
    for (int k = 0; k < op->u.matrix.num; k++) v[k] = V(p, o[1 + k], bufs[k]);
    hg_sbuf_put(&p->s, "      %*snvvm.stmatrix %%t%d", 2 * p->depth, "", ptr);
    for (int k = 0; k < op->u.matrix.num; k++) hg_sbuf_put(&p->s, ", %s", v[k]);
    hg_sbuf_put(&p->s, " {%s} : !llvm.ptr<3>", matrix_attrs(op, false, attrs, sizeof attrs));
    for (int k = 0; k < op->u.matrix.num; k++) hg_sbuf_put(&p->s, ", i32");
    hg_sbuf_put(&p->s, "\n");
    break;
  }
  case HG_OP_LDMATRIX: {
    /* nvvm.ldmatrix: one i32, or a struct of num i32 taken apart into the results */
    int ptr = ptr_shared(p, V(p, o[0], n0), 3);
    int num = op->u.matrix.num;
    matrix_attrs(op, true, attrs, sizeof attrs);
    if (num == 1) {
      L(p, "%s = nvvm.ldmatrix %%t%d {%s} : (!llvm.ptr<3>) -> i32", p->names[r[0]], ptr, attrs);
      break;
    }
    char ty[64];
    snprintf(ty, sizeof ty, "!llvm.struct<(i32%s)>", num == 2 ? ", i32" : ", i32, i32, i32");
    int t = tmp(p);
    L(p, "%%t%d = nvvm.ldmatrix %%t%d {%s} : (!llvm.ptr<3>) -> %s", t, ptr, attrs, ty);
    for (int k = 0; k < num; k++)
      L(p, "%s = llvm.extractvalue %%t%d[%d] : %s", p->names[r[k]], t, k, ty);
    break;
  }
  case HG_OP_MMA_SYNC:
    print_mma_sync(p, op);
    break;
  case HG_OP_COUNT:
    break;
  }
}

/* ----------------------------------------------------------------------------- module */

int hg_mlir_ptx_version(const hg_builder_t *b) {
  int v = 80;
  for (int32_t i = 0; i < b->nops; i++) {
    const hg_ir_op_t *op = &b->ops[i];
    if (op->code == HG_OP_WGMMA && op->u.wgmma.acc == HG_S32 && op->u.wgmma.a != op->u.wgmma.b)
      return 84;
    if (op->code == HG_OP_ATOMIC_ADD_F32 && op->u.mem.n > 1) v = 81;
    /* fp8 mma.sync (inline assembly here): "requires PTX ISA .version 8.4", as in ptx.c */
    if (op->code == HG_OP_MMA_SYNC && op->u.mma_sync.k == 32) return 84;
  }
  return v;
}

static void name_values(mprinter_t *p) {
  const hg_builder_t *b = p->b;
  for (int32_t id = 1; id < b->nvalues; id++) {
    const hg_ir_value_t *v = &b->values[id];
    const char *prefix = is_slot(p, id) ? "slot" : "v";
    if (v->hint[0])
      snprintf(p->names[id], NAME_BYTES, "%%%s%d_%s", prefix, (int)id, v->hint);
    else
      snprintf(p->names[id], NAME_BYTES, "%%%s%d", prefix, (int)id);
  }
}

/* Type aliases, printed before the module: names for the types the body repeats.
 * The TMA types are nominal views that nvgpu's verifier accepts for any rank (a box of
 * 1 x ... x 1 x 16 bytes without swizzle): the real box, element type, swizzle and fill
 * are in the run-time tensor map, and the nvgpu-to-nvvm lowering takes nothing from these
 * types but the rank (the descriptor becomes the tensor map's pointer, the tile its
 * shared-memory address). */
static void print_aliases(const hg_builder_t *b, hg_sbuf_t *s) {
  hg_sbuf_put(s, "!hg_mbar = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>\n");
  for (int r = 1; r <= HG_TMA_MAX_RANK; r++) {
    char shape[32] = "";
    for (int d = 0; d < r - 1; d++) strcat(shape, "1x");
    hg_sbuf_put(s, "!hg_tile%d = memref<%s16xi8, #gpu.address_space<workgroup>>\n", r, shape);
    hg_sbuf_put(s,
                "!hg_desc%d = !nvgpu.tensormap.descriptor<tensor = !hg_tile%d, swizzle = none, "
                "l2promo = none, oob = zero, interleave = none>\n",
                r, r);
    hg_sbuf_put(
        s, "!hg_mref%d = !llvm.struct<(ptr<3>, ptr<3>, i64, array<%d x i64>, array<%d x i64>)>\n",
        r, r, r);
  }
  /* accumulator structs, each distinct one once */
  char seen[64][32];
  int nseen = 0;
  for (int32_t i = 0; i < b->nops; i++) {
    const hg_ir_op_t *op = &b->ops[i];
    if (op->code != HG_OP_WGMMA) continue;
    const hg_wgmma_op_t *w = &op->u.wgmma;
    bool nvvm_op = wgmma_uses_op(b, op);
    char name[32];
    acc_alias(w, nvvm_op, name, sizeof name);
    bool dup = false;
    for (int k = 0; k < nseen && !dup; k++) dup = !strcmp(seen[k], name);
    if (dup) continue;
    if (nseen < 64) snprintf(seen[nseen++], sizeof seen[0], "%s", name);
    hg_sbuf_put(s, "%s = !llvm.struct<(", name);
    const char *e = acc_elem(w, nvvm_op);
    for (int k = 0; k < hg_ir_wgmma_num_acc(w); k++) hg_sbuf_put(s, "%s%s", k ? ", " : "", e);
    hg_sbuf_put(s, ")>\n");
  }
}

/* The variables' slots (entry block, so that SROA promotes them), each zeroed so that a
 * variable read before its first assignment is an unspecified but defined value, as a PTX
 * register is, not LLVM poison; then the dynamic shared-memory base. */
static void print_entry(mprinter_t *p) {
  const hg_builder_t *b = p->b;
  L(p, "%%one = llvm.mlir.constant(1 : i32) : i32");
  L(p, "%%c0_index = arith.constant 0 : index");
  bool zero_emitted[6] = {false};
  for (int32_t id = 1; id < b->nvalues; id++) {
    if (!is_slot(p, id)) continue;
    hg_type_t t = vtype(p, id);
    L(p, "%s = llvm.alloca %%one x %s : (i32) -> !llvm.ptr", p->names[id], mty(t));
    if (b->values[id].kind != HG_VK_VAR) continue; /* a counter is set by its hg_b_for */
    if (!zero_emitted[t]) {
      if (t == HG_T_F32)
        L(p, "%%zero_f32 = arith.constant 0.0 : f32");
      else if (t == HG_T_PRED)
        L(p, "%%zero_i1 = arith.constant false");
      else
        L(p, "%%zero_%s = arith.constant 0 : %s", mty(t), mty(t));
      zero_emitted[t] = true;
    }
    L(p, "llvm.store %%zero_%s, %s : %s, !llvm.ptr", mty(t), p->names[id], mty(t));
  }
  if (b->smem_used) {
    /* only 16-byte alignment of the dynamic shared-memory base is guaranteed: round it up
     * at run time to the largest alignment reserved, as ptx.c does (the slack is counted
     * in hg_builder_smem_bytes). @hg_smem is declared 1024-aligned like ptx.c's. */
    L(p, "%%smem_ptr = llvm.mlir.addressof @hg_smem : !llvm.ptr<3>");
    if (b->smem_max_align > HG_IR_SMEM_BASE_ALIGN) {
      /* The address goes through an opaque copy: LLVM would otherwise take the declared
       * alignment for a fact (known bits) and fold the rounding away, which is wrong
       * exactly when the base is not that aligned at run time. */
      L(p, "%%smem_addr = llvm.ptrtoint %%smem_ptr : !llvm.ptr<3> to i32");
      L(p, "%%smem_raw = llvm.inline_asm \"mov.b32 $0, $1;\", \"=r,r\" %%smem_addr : (i32) -> "
           "i32");
      L(p, "%%smem_up = arith.constant %" PRIu32 " : i32", b->smem_max_align - 1);
      L(p, "%%smem_mask = arith.constant %" PRId32 " : i32", -(int32_t)b->smem_max_align);
      L(p, "%%smem_sum = arith.addi %%smem_raw, %%smem_up : i32");
      L(p, "%%smem_base = arith.andi %%smem_sum, %%smem_mask : i32");
    } else {
      L(p, "%%smem_base = llvm.ptrtoint %%smem_ptr : !llvm.ptr<3> to i32");
    }
  }
}

static const char *param_type(hg_type_t t) {
  return t == HG_T_I32 ? "i32" : t == HG_T_I64 ? "i64" : t == HG_T_F32 ? "f32" : "!llvm.ptr";
}

hg_status_t hg_emit_mlir(const hg_builder_t *b, hg_text_t *out) {
  if (!out) return hg_error(HG_ERR_INVALID, "hg_emit_mlir: out is NULL");
  out->data = NULL;
  out->len = 0;
  HG_TRY(hg_ir_check_complete(b));

  mprinter_t p = {.b = b};
  p.names = calloc((size_t)b->nvalues, sizeof *p.names);
  if (!p.names) return hg_error(HG_ERR_NOMEM, "hg_emit_mlir: out of memory");
  name_values(&p);

  hg_sbuf_t *s = &p.s;
  int version = hg_mlir_ptx_version(b);
  uint32_t smem = hg_ir_smem_total(b);
  hg_sbuf_put(s, "// Generated by hopgen (MLIR backend, MLIR 22: nvgpu/nvvm/arith/cf/llvm)\n");
  hg_sbuf_put(s, "// kernel %s: %d parameter(s), %d ops\n", b->name, b->nparams, (int)b->nops);
  if (smem)
    hg_sbuf_put(s,
                "// dynamic shared memory: %" PRIu32 " bytes (launch with this; includes %" PRIu32
                " bytes of alignment slack)\n",
                smem, smem - b->smem_used);
  hg_sbuf_put(s, "// lower: mlir-opt-22 FILE --pass-pipeline='%s'\n\n", hg_mlir_pipeline());
  print_aliases(b, s);
  hg_sbuf_put(s, "\nmodule attributes {gpu.container_module} {\n");
  /* O = 3: gpu-module-to-binary runs LLVM's -O3 pipeline (SROA promotes the slots) before
   * NVPTX; the PTX ISA version is the lowest that has every instruction, as in ptx.c */
  hg_sbuf_put(
      s, "  gpu.module @hopgen [#nvvm.target<chip = \"sm_90a\", features = \"+ptx%d\", O = 3>] {\n",
      version);
  if (b->smem_used)
    hg_sbuf_put(
        s, "    llvm.mlir.global external @hg_smem() {addr_space = 3 : i32, alignment = 1024 : "
           "i64} : !llvm.array<0 x i8>\n");

  hg_sbuf_put(s, "    llvm.func @%s(", b->name);
  for (int i = 0; i < b->nparams; i++) {
    const hg_ir_param_t *pa = &b->params[i];
    hg_sbuf_put(s, "%s\n        %s: %s", i ? "," : "", p.names[pa->value], param_type(pa->type));
    /* a CUtensorMap passed by value as a __grid_constant__ parameter: 128 opaque bytes,
     * 64-byte aligned as TMA requires; NVPTX prints .param .align 64 .b8 [128] and takes
     * its generic address with cvta.param (what nvcc does, and ptx.c) */
    if (pa->type == HG_T_TMAP)
      hg_sbuf_put(
          s, " {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}");
  }
  hg_sbuf_put(s, ")\n        attributes {nvvm.kernel");
  /* reqntid plus minctasm gives ptxas the register cap at entry that setmaxnreg needs */
  if (b->threads) hg_sbuf_put(s, ", nvvm.reqntid = array<i32: %d, 1, 1>", b->threads);
  if (b->min_ctas) hg_sbuf_put(s, ", nvvm.minctasm = %d : i32", b->min_ctas);
  if (b->cluster[0])
    hg_sbuf_put(s, ", nvvm.cluster_dim = array<i32: %d, %d, %d>", b->cluster[0], b->cluster[1],
                b->cluster[2]);
  hg_sbuf_put(s, "} {\n");

  print_entry(&p);
  for (int32_t i = 0; i < b->nops; i++) print_op(&p, i);
  L(&p, "llvm.return");
  hg_sbuf_put(s, "    }\n  }\n}\n");

  free(p.names);
  if (s->oom) {
    free(s->data);
    return hg_error(HG_ERR_NOMEM, "hg_emit_mlir: out of memory writing kernel '%s'", b->name);
  }
  out->data = s->data;
  out->len = s->len;
  return hg_ok();
}
