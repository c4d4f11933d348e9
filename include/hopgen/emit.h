/* hopgen emitters — one backend-neutral builder, two backends.
 *
 * A kernel generator describes one kernel by calling hg_b_* functions on a builder.
 * The builder records a small structured IR (values, integer and float arithmetic,
 * structured if/loop, memory, and the Hopper operations). A backend prints that IR:
 * hg_emit_ptx writes PTX ISA 8.x for sm_90a; hg_emit_mlir writes a gpu.module in the
 * nvgpu/nvvm dialects of MLIR 22. Generators never write PTX or MLIR text themselves,
 * so one generator yields both, and a difference between the two is a backend bug.
 *
 * Errors are sticky: a misuse (type mismatch, unbalanced if/loop, a value used outside
 * the region that defined it) records the first failure with a sentence, later calls
 * become no-ops, and hg_builder_status / hg_emit_* return it. Generator code stays
 * readable: no status check after every instruction.
 *
 * Values are SSA: each hg_b_* that produces something returns a new value. A value
 * defined inside an if/loop body may be used only inside that body; state that crosses
 * a region boundary or changes across loop iterations lives in a variable (hg_b_var),
 * which is a value that hg_b_assign may overwrite. Backends map variables to registers
 * (PTX) or to promotable stack slots (MLIR). */
#ifndef HOPGEN_EMIT_H
#define HOPGEN_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hopgen/sm90.h"
#include "hopgen/status.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: what libhopgen.so exports */

/* ---------------------------------------------------------------- owned text */

/* Emitted text (PTX, MLIR, logs): the only heap-owning type of this layer. */
typedef struct hg_text {
  char *data; /* NUL-terminated, or NULL when empty */
  size_t len;
} hg_text_t;

void hg_text_free(hg_text_t *t);

/* ---------------------------------------------------------------- values */

typedef enum hg_type {
  HG_T_NONE = 0,
  HG_T_PRED, /* 1-bit predicate */
  HG_T_I32,  /* 32-bit integer; signedness is a property of the operation, not the value */
  HG_T_I64,  /* 64-bit integer; also global addresses */
  HG_T_F32,
  HG_T_TMAP, /* a tensor-map kernel parameter (CUtensorMap, 128 bytes, grid constant) */
} hg_type_t;

/* A handle to an SSA value or a variable of the builder that made it. id 0 is "none". */
typedef struct hg_val {
  int32_t id;
} hg_val_t;

#define HG_NONE ((hg_val_t){0})
static inline bool hg_val_is_none(hg_val_t v) {
  return v.id == 0;
}

typedef struct hg_builder hg_builder_t;

/* One kernel per builder. name is the PTX entry / gpu.func name ([A-Za-z_][A-Za-z0-9_]*). */
hg_status_t hg_builder_create(const char *kernel_name, hg_builder_t **out);
void hg_builder_destroy(hg_builder_t *b);
hg_status_t hg_builder_status(const hg_builder_t *b); /* the first recorded misuse, or OK */
/* Record a misuse found by a layer above the builder (kernel builders, generators) in the
 * sticky status: the first failure wins, later hg_b_* calls become no-ops. OK is ignored. */
void hg_builder_fail(hg_builder_t *b, hg_status_t s);
hg_type_t hg_val_type(const hg_builder_t *b, hg_val_t v);
/* Name a value for readers of the output (a PTX register suffix, an MLIR comment); no
 * semantic effect. Characters outside [A-Za-z0-9_] become '_'; at most 23 are kept. */
void hg_b_name(hg_builder_t *b, hg_val_t v, const char *name);

/* ---------------------------------------------------------------- kernel attributes */

/* Threads per CTA, 1-D (reqntid in PTX and MLIR). */
void hg_b_set_threads(hg_builder_t *b, int threads);
/* Minimum CTAs per SM (.minnctapersm); with threads this gives the register cap at entry
 * that setmaxnreg needs. 0 = unset. */
void hg_b_set_min_ctas(hg_builder_t *b, int min_ctas);
/* Required cluster shape (.reqnctapercluster / cluster_dim); 0 = no cluster attribute. */
void hg_b_set_cluster(hg_builder_t *b, int x, int y, int z);

/* ---------------------------------------------------------------- parameters */

/* Kernel parameters in declaration order; the runtime passes arguments in that order. */
hg_val_t hg_b_param(hg_builder_t *b, hg_type_t type, const char *name); /* I32, I64, F32 */
hg_val_t hg_b_param_tmap(hg_builder_t *b, const char *name); /* .param .align 64 .b8 [128] */
/* The parameters recorded so far, for code that marshals launch arguments. */
int hg_builder_param_count(const hg_builder_t *b);
hg_type_t hg_builder_param_type(const hg_builder_t *b, int i); /* HG_T_NONE out of range */

/* ---------------------------------------------------------------- shared memory */

/* Reserve bytes of dynamic shared memory with the given alignment (a power of two up
 * to 1024); returns the byte offset from the base, which the kernel aligns at run time
 * to the largest alignment reserved. Reservations are static: the kernel's dynamic
 * shared-memory size is hg_builder_smem_bytes (at most 227 KB on sm_90). */
uint32_t hg_b_smem_reserve(hg_builder_t *b, uint32_t bytes, uint32_t align);
/* The 32-bit shared::cta address of base + offset_bytes (I32). In a cluster launch the
 * window address carries the CTA's rank in bits 24 and up (sm_90a: SR_CgaCtaId << 24):
 * use it as an address, and mask it before packing it into narrower fields (a wgmma
 * descriptor's start address is bits 4..17 of it). */
hg_val_t hg_b_smem_addr(hg_builder_t *b, uint32_t offset_bytes);
/* Bytes to pass as dynamic shared memory at launch: reservations plus alignment slack
 * (largest alignment - 16, since only 16-byte alignment of the base is guaranteed). */
uint32_t hg_builder_smem_bytes(const hg_builder_t *b);

/* ---------------------------------------------------------------- constants, variables */

hg_val_t hg_b_i32(hg_builder_t *b, int32_t v);
hg_val_t hg_b_i64(hg_builder_t *b, int64_t v);
hg_val_t hg_b_f32(hg_builder_t *b, float v);
hg_val_t hg_b_pred(hg_builder_t *b, bool v);

hg_val_t hg_b_var(hg_builder_t *b, hg_type_t type, hg_val_t init); /* init may be HG_NONE */
void hg_b_assign(hg_builder_t *b, hg_val_t var, hg_val_t value);

/* ---------------------------------------------------------------- arithmetic */

typedef enum hg_binop {
  HG_ADD,
  HG_SUB,
  HG_MUL,   /* low half of the product */
  HG_DIV_S, /* signed, rounds toward zero */
  HG_DIV_U,
  HG_REM_S,
  HG_REM_U,
  HG_MIN_S,
  HG_MAX_S,
  HG_MIN_U,
  HG_MAX_U,
  HG_AND,
  HG_OR,
  HG_XOR,
  HG_SHL,
  HG_SHR_S, /* arithmetic shift */
  HG_SHR_U, /* logical shift */
  HG_FADD,  /* F32, round to nearest */
  HG_FSUB,
  HG_FMUL,
  HG_FMIN,
  HG_FMAX,
} hg_binop_t;

/* Both operands of the same type (I32, I64, or F32 for HG_F*); PRED accepts AND/OR/XOR. */
hg_val_t hg_b_bin(hg_builder_t *b, hg_binop_t op, hg_val_t x, hg_val_t y);
hg_val_t hg_b_mad(hg_builder_t *b, hg_val_t x, hg_val_t y, hg_val_t z);  /* x*y+z, int */
hg_val_t hg_b_ffma(hg_builder_t *b, hg_val_t x, hg_val_t y, hg_val_t z); /* F32 fused */
hg_val_t hg_b_not(hg_builder_t *b, hg_val_t x);                          /* int or PRED */

/* F32 functions of one operand, as the epilogue's activations need them. */
typedef enum hg_funary {
  HG_FABS,  /* |x| (abs.f32) */
  HG_FNEG,  /* -x (neg.f32) */
  HG_FEX2,  /* 2^x, ex2.approx.ftz.f32: max error 2 ulp, subnormal results flush to 0 */
  HG_FRCP,  /* 1/x, rcp.approx.ftz.f32: max error 1 ulp, one MUFU op (rcp.rn is a subroutine) */
  HG_FTANH, /* tanh(x), tanh.approx.f32 (sm_75+): max relative error about 2^-11 */
} hg_funary_t;
hg_val_t hg_b_funary(hg_builder_t *b, hg_funary_t op, hg_val_t x);

typedef enum hg_cmp {
  HG_EQ,
  HG_NE,
  HG_LT_S,
  HG_LE_S,
  HG_GT_S,
  HG_GE_S,
  HG_LT_U,
  HG_LE_U,
  HG_GT_U,
  HG_GE_U,
  HG_FLT, /* ordered float comparisons */
  HG_FLE,
  HG_FGT,
  HG_FGE,
  HG_FEQ,
} hg_cmp_t;

hg_val_t hg_b_cmp(hg_builder_t *b, hg_cmp_t op, hg_val_t x, hg_val_t y); /* -> PRED */
hg_val_t hg_b_select(hg_builder_t *b, hg_val_t pred, hg_val_t x, hg_val_t y);

/* Integer width changes are explicit so that no layer widens a signed coordinate by
 * accident: sext keeps the sign of an I32, zext treats it as unsigned. */
hg_val_t hg_b_sext(hg_builder_t *b, hg_val_t i32);  /* -> I64 */
hg_val_t hg_b_zext(hg_builder_t *b, hg_val_t i32);  /* -> I64 */
hg_val_t hg_b_trunc(hg_builder_t *b, hg_val_t i64); /* -> I32, low 32 bits */
hg_val_t hg_b_i2f(hg_builder_t *b, hg_val_t i32);   /* signed I32 -> F32 */
hg_val_t hg_b_f2i(hg_builder_t *b, hg_val_t f32);   /* F32 -> signed I32, round to zero */
hg_val_t hg_b_bitcast(hg_builder_t *b, hg_type_t to, hg_val_t x); /* I32 <-> F32 */

/* Two F32 -> one I32 holding two 16-bit floats (dtype HG_BF16 or HG_F16), lo in bits
 * 0..15; round to nearest even. Used by epilogues before stmatrix / stores. With HG_E4M3 or
 * HG_E5M2: two fp8 bytes in bits 0..15 (lo in 0..7), cvt.rn.satfinite (PTX ISA "cvt"):
 * values past the largest finite one, infinities included, become it (with their sign);
 * NaN stays NaN. */
hg_val_t hg_b_pack_f32x2(hg_builder_t *b, hg_dtype_t dtype, hg_val_t lo, hg_val_t hi);
/* One 16-bit float (dtype HG_BF16/HG_F16) or 8-bit float (HG_E4M3/HG_E5M2) held in the
 * low bits of an I32 -> F32. */
hg_val_t hg_b_unpack_f32(hg_builder_t *b, hg_dtype_t dtype, hg_val_t bits);

/* ---------------------------------------------------------------- special registers */

typedef enum hg_sreg {
  HG_TID_X,
  HG_TID_Y,
  HG_TID_Z,
  HG_NTID_X,
  HG_CTAID_X,
  HG_CTAID_Y,
  HG_CTAID_Z,
  HG_NCTAID_X,
  HG_NCTAID_Y,
  HG_NCTAID_Z,
  HG_LANEID,
  HG_CLUSTER_CTARANK,  /* %cluster_ctarank */
  HG_CLUSTER_NCTARANK, /* %cluster_nctarank */
  HG_CLUSTER_CTAID_X,  /* CTA position inside its cluster */
  HG_CLUSTER_CTAID_Y,
  HG_CLUSTER_CTAID_Z,
  HG_CLUSTERID_X, /* cluster position inside the grid */
  HG_CLUSTERID_Y,
  HG_CLUSTERID_Z,
  HG_NCLUSTERID_X,
  HG_NCLUSTERID_Y,
  HG_NCLUSTERID_Z,
  HG_SMID,
} hg_sreg_t;

hg_val_t hg_b_sreg(hg_builder_t *b, hg_sreg_t r); /* -> I32 */
hg_val_t hg_b_clock64(hg_builder_t *b);           /* -> I64 */

/* ---------------------------------------------------------------- control flow */

/* if/else/endif. Around warpgroup instructions (wgmma, setmaxnreg) the condition must be
 * the same for all 128 threads of a warpgroup (derive it from tid.x >> 7): ptxas cannot
 * check this, and a divergent warpgroup is undefined behaviour. */
void hg_b_if(hg_builder_t *b, hg_val_t pred);
void hg_b_else(hg_builder_t *b);
void hg_b_endif(hg_builder_t *b);
/* loop { ... } runs until a hg_b_break_if inside it (at any nesting of ifs) fires.
 * hg_b_break_if leaves the innermost hg_b_loop; it is an error inside an hg_b_for. */
void hg_b_loop(hg_builder_t *b);
void hg_b_break_if(hg_builder_t *b, hg_val_t pred);
void hg_b_endloop(hg_builder_t *b);
/* for (i = start; i < end (signed); i += step): returns i, an I32 variable readable in
 * the body. Closed with hg_b_endfor. */
hg_val_t hg_b_for(hg_builder_t *b, hg_val_t start, hg_val_t end, hg_val_t step);
void hg_b_endfor(hg_builder_t *b);
void hg_b_return(hg_builder_t *b); /* leave the kernel (this thread) */
/* A comment carried into the output of both backends, for readers of generated code. */
void hg_b_comment(hg_builder_t *b, const char *text);

/* ---------------------------------------------------------------- memory */

typedef enum hg_space {
  HG_GLOBAL,         /* address: I64 generic pointer (cudaMalloc); converted with cvta.to.global */
  HG_SHARED,         /* address: I32 shared::cta */
  HG_SHARED_CLUSTER, /* address: I32 shared::cluster (from hg_b_mapa) */
} hg_space_t;

/* Loads of n (1, 2 or 4) consecutive elements of type (I32, I64, F32) from an address
 * aligned to the vector's size; bits = 8 or 16 loads a narrow unsigned integer into an
 * I32 (n must be 1). */
void hg_b_load(hg_builder_t *b, hg_space_t space, hg_type_t type, int bits, int n, hg_val_t addr,
               hg_val_t *out);
void hg_b_store(hg_builder_t *b, hg_space_t space, int bits, int n, hg_val_t addr,
                const hg_val_t *vals);
/* hg_b_store to global memory (an I64 address) with the cache-streaming operator .cs (PTX
 * ISA st: "likely to be accessed once"; the lines are allocated evict-first): for data that
 * this kernel writes once and nothing reads back soon. */
void hg_b_store_cs(hg_builder_t *b, int bits, int n, hg_val_t addr, const hg_val_t *vals);
/* Global atomic add of an F32 (used by reference checks, not by hot loops). */
void hg_b_atomic_add_f32(hg_builder_t *b, hg_val_t addr, hg_val_t v);
/* n = 1, 2 or 4 consecutive f32 added to global memory at addr (8- or 16-byte aligned for 2
 * and 4) by one reduction: red.global.add.v2/v4.f32 (PTX ISA 8.1, sm_90), relaxed, .gpu. */
void hg_b_atomic_add_f32v(hg_builder_t *b, hg_val_t addr, int n, const hg_val_t *v);
/* Global atomic add of a u32 (relaxed, .gpu scope) -> the old value (I32). With
 * hg_b_fence_gpu before and after, an arrival counter across CTAs: each writer's stores are
 * released before its arrival, the last arrival acquires them all. */
hg_val_t hg_b_atomic_add_u32(hg_builder_t *b, hg_val_t addr, hg_val_t v);
/* The shared::cluster address of a shared::cta address in CTA cta_rank of the cluster. */
hg_val_t hg_b_mapa(hg_builder_t *b, hg_val_t smem_addr, hg_val_t cta_rank);

/* ---------------------------------------------------------------- synchronisation */

void hg_b_bar_sync(hg_builder_t *b, int id, int threads);   /* threads 0 = whole CTA */
void hg_b_bar_arrive(hg_builder_t *b, int id, int threads); /* named barrier, no wait */
void hg_b_fence_proxy_async(hg_builder_t *b);               /* fence.proxy.async.shared::cta */
void hg_b_fence_mbarrier_init(hg_builder_t *b); /* fence.mbarrier_init.release.cluster */
void hg_b_fence_gpu(hg_builder_t *b);           /* fence.acq_rel.gpu */
/* Programmatic dependent launch (a kernel launched with hg_launch_t.pdl after another on the
 * same stream): griddepcontrol.wait blocks until the grids this one depends on have completed
 * and their memory is visible; griddepcontrol.launch_dependents lets the next such grid be
 * scheduled before this one ends (its CTAs start as resources free up and wait). */
void hg_b_griddep_wait(hg_builder_t *b);
void hg_b_griddep_launch_dependents(hg_builder_t *b);
void hg_b_cluster_arrive(hg_builder_t *b, bool relaxed);
void hg_b_cluster_wait(hg_builder_t *b);
/* -> PRED, true in one lane of the warp; all 32 lanes must execute it together. */
hg_val_t hg_b_elect_sync(hg_builder_t *b);

/* mbarrier operations; addr is the I32 shared::cta address of an 8-byte barrier. */
void hg_b_mbar_init(hg_builder_t *b, hg_val_t addr, hg_val_t count);
void hg_b_mbar_arrive(hg_builder_t *b, hg_val_t addr);
/* Arrive on the barrier at the same offset in CTA cta_rank of the cluster. */
void hg_b_mbar_arrive_cluster(hg_builder_t *b, hg_val_t addr, hg_val_t cta_rank);
void hg_b_mbar_arrive_expect_tx(hg_builder_t *b, hg_val_t addr, hg_val_t bytes);
void hg_b_mbar_expect_tx(hg_builder_t *b, hg_val_t addr, hg_val_t bytes);
hg_val_t hg_b_mbar_try_wait(hg_builder_t *b, hg_val_t addr, hg_val_t parity); /* -> PRED */
void hg_b_mbar_wait(hg_builder_t *b, hg_val_t addr, hg_val_t parity);         /* spin until done */

/* ---------------------------------------------------------------- TMA (bulk tensor) */

typedef enum hg_reduce_op {
  HG_RED_ADD,
  HG_RED_MIN,
  HG_RED_MAX,
  HG_RED_INC,
  HG_RED_DEC,
  HG_RED_AND,
  HG_RED_OR,
  HG_RED_XOR,
} hg_reduce_op_t;

typedef enum hg_cache_policy {
  HG_EVICT_NORMAL,
  HG_EVICT_FIRST,
  HG_EVICT_LAST,
} hg_cache_policy_t;

/* An L2 cache-policy value (createpolicy.fractional) for the cache_hint operands. */
hg_val_t hg_b_cache_policy(hg_builder_t *b, hg_cache_policy_t p); /* -> I64 */

/* Tiled TMA load of one box into shared memory, completing on mbarrier bar.
 * coords: rank (1..5) I32 values, dimension 0 innermost, signed and passed unchanged.
 * mcast_mask: HG_NONE, or an I32 whose low 16 bits name the receiving CTAs (the box
 * lands at the same smem offset and signals the same barrier offset in each).
 * cache_hint: HG_NONE or an I64 from hg_b_cache_policy.
 * The innermost coordinate times the element size must be a multiple of 16 bytes or the
 * kernel dies with an illegal instruction (validate it where it is known). */
void hg_b_tma_load(hg_builder_t *b, hg_val_t tmap, hg_val_t smem_dst, hg_val_t bar, int rank,
                   const hg_val_t *coords, hg_val_t mcast_mask, hg_val_t cache_hint);
void hg_b_tma_prefetch(hg_builder_t *b, hg_val_t tmap, int rank, const hg_val_t *coords);
void hg_b_tma_store(hg_builder_t *b, hg_val_t tmap, hg_val_t smem_src, int rank,
                    const hg_val_t *coords);
/* hg_b_tma_store with an L2 cache policy on the writes (cache_hint: HG_NONE or an I64 from
 * hg_b_cache_policy; PTX ISA cp.async.bulk.tensor's .L2::cache_hint, shared::cta -> global). */
void hg_b_tma_store_hint(hg_builder_t *b, hg_val_t tmap, hg_val_t smem_src, int rank,
                         const hg_val_t *coords, hg_val_t cache_hint);
void hg_b_tma_reduce(hg_builder_t *b, hg_reduce_op_t op, hg_val_t tmap, hg_val_t smem_src, int rank,
                     const hg_val_t *coords);
/* A global reduction of one element (PTX ISA "red"; relaxed, .gpu scope), with the
 * element-type semantics of cp.reduce.async.bulk.tensor, and exactly the (op, type) pairs
 * that instruction takes (hg_tma_reduce_check): add u32 s32 u64 f32 f16 bf16; min/max u32
 * s32 f16 bf16; inc/dec u32; and/or/xor u32 s32 u64. addr: the I64 generic address of the
 * element (aligned to its size). v: an I32 for u32/s32, an I32 holding the 16 bits in its
 * low half for f16/bf16, an F32 for f32, an I64 for u64. PTX has no scalar red.min/max of a
 * 16-bit float (only vectors, from PTX ISA 8.1, which would touch the neighbour), so those
 * are a 16-bit atom.cas loop around min/max.f16/bf16; the rest are one red.global. Kernels
 * use it where TMA cannot reduce a box (a negative coordinate). */
void hg_b_red(hg_builder_t *b, hg_reduce_op_t op, hg_dtype_t t, hg_val_t addr, hg_val_t v);
/* The reduction of an I32 over the 32 lanes of the warp (redux.sync with a full mask; PTX ISA
 * "redux.sync", sm_80+): add, min or max as u32, or and/or/xor; every lane gets the result,
 * and all 32 must execute it together. */
hg_val_t hg_b_redux_sync(hg_builder_t *b, hg_reduce_op_t op, hg_val_t v);
void hg_b_bulk_commit(hg_builder_t *b);                  /* cp.async.bulk.commit_group */
void hg_b_bulk_wait(hg_builder_t *b, int n, bool read);  /* wait_group[.read] n */
void hg_b_tmap_prefetch(hg_builder_t *b, hg_val_t tmap); /* prefetch.tensormap */

/* ---------------------------------------------------------------- cp.async (sm_80+) */

/* cp.async (PTX ISA "cp.async", sm_80+): asynchronous copy of `bytes` (4, 8 or 16) from global
 * memory (gmem_src: I64 generic address, aligned to `bytes`) to shared memory (smem_dst: I32
 * shared::cta address, aligned to `bytes`). src_bytes (I32, 0..bytes, or HG_NONE = bytes) bytes
 * are read and the rest of the destination is zero-filled: src_bytes = 0 is how out-of-bounds
 * chunks become zeros. 16-byte copies use .cg (bypass L1), smaller ones .ca. */
void hg_b_cp_async(hg_builder_t *b, int bytes, hg_val_t smem_dst, hg_val_t gmem_src,
                   hg_val_t src_bytes);
void hg_b_cp_async_commit(hg_builder_t *b);      /* cp.async.commit_group */
void hg_b_cp_async_wait(hg_builder_t *b, int n); /* cp.async.wait_group n (0: all done) */
/* cp.async.mbarrier.arrive.noinc.shared::cta.b64: the barrier at addr (I32 shared::cta) gets
 * one arrival once every cp.async this thread issued before has completed; .noinc: that
 * arrival counts against the count the barrier was initialised with. */
void hg_b_cp_async_mbar_arrive(hg_builder_t *b, hg_val_t addr);

/* ---------------------------------------------------------------- wgmma and friends */

/* One warpgroup MMA instruction: D(64xN) = A(64xK) * B(KxN) + (scale_d ? D : 0). */
typedef struct hg_wgmma_op {
  int n;                 /* 8..256 as the ISA allows for the types; m is 64 */
  hg_dtype_t a, b, acc;  /* acc: HG_F32, HG_F16 or HG_S32 */
  bool a_regs;           /* A from registers instead of a descriptor */
  bool trans_a, trans_b; /* MN-major operand (16-bit types only) */
} hg_wgmma_op_t;

void hg_b_wgmma_fence(hg_builder_t *b);
void hg_b_wgmma_commit(hg_builder_t *b);
void hg_b_wgmma_wait(hg_builder_t *b, int n);
/* acc: the accumulator variables (n/2 F32 for f32 acc; n/4 I32 for f16 acc holding two
 * halves each; n/2 I32 for s32), in the ISA's fragment order. a: one I64 descriptor, or
 * the A fragment registers (4 I32) when a_regs. desc_b: I64. scale_d: a PRED (false:
 * overwrite D). Issue hg_b_wgmma_fence before the first wgmma and after any other
 * instruction touched the accumulators or A registers (PTX ISA, wgmma.fence). */
void hg_b_wgmma(hg_builder_t *b, const hg_wgmma_op_t *op, const hg_val_t *acc, const hg_val_t *a,
                hg_val_t desc_b, hg_val_t scale_d);
void hg_b_setmaxnreg(hg_builder_t *b, bool increase, int regs);
/* stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: num (1, 2, 4) I32 registers. */
void hg_b_stmatrix(hg_builder_t *b, int num, bool trans, hg_val_t smem_addr, const hg_val_t *regs);
/* ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: num (1, 2, 4) I32 results into out;
 * every lane passes an I32 shared::cta address (lanes 8i..8i+7 address the 8 rows of matrix i,
 * 16 bytes each). */
void hg_b_ldmatrix(hg_builder_t *b, int num, bool trans, hg_val_t smem_addr, hg_val_t *out);

/* ---------------------------------------------------------------- mma.sync (sm_80+) */

/* One warp-level MMA (PTX ISA "mma.sync", sm_80+): D(16x8) = A(16xK) * B(Kx8) + C, row.col;
 * K = 16 for 16-bit floats, 32 for fp8 (sm_89+). */
typedef struct hg_mma_sync_op {
  int m, n, k;          /* 16, 8, 16; or 16, 8, 32 for fp8 */
  hg_dtype_t a, b, acc; /* a == b in {HG_BF16, HG_F16}, or a, b in {HG_E4M3, HG_E5M2}; acc F32 */
} hg_mma_sync_op_t;
/* acc: 4 F32 variables updated in place (like hg_b_wgmma's accumulators); a: 4 I32 (the A
 * fragment, two 16-bit or four 8-bit elements each); bf: 2 I32 (the B fragment). */
void hg_b_mma_sync(hg_builder_t *b, const hg_mma_sync_op_t *op, const hg_val_t *acc,
                   const hg_val_t *a, const hg_val_t *bf);

/* ---------------------------------------------------------------- backends */

typedef enum hg_backend {
  HG_BACKEND_PTX,
  HG_BACKEND_MLIR,
} hg_backend_t;

const char *hg_backend_name(hg_backend_t be);
hg_status_t hg_backend_parse(const char *name, hg_backend_t *out);

/* PTX ISA 8.x text for sm_90a with one .entry. */
hg_status_t hg_emit_ptx(const hg_builder_t *b, hg_text_t *out);
/* MLIR 22 text: a gpu.module with one kernel (an llvm.func marked nvvm.kernel) in the
 * nvgpu/nvvm/arith/cf/llvm dialects. */
hg_status_t hg_emit_mlir(const hg_builder_t *b, hg_text_t *out);
/* PTX through the chosen backend; for MLIR, hg_emit_mlir then hg_mlir_to_ptx (the
 * lowering cache, else one mlir-opt-22 child process whose diagnostics go into the status). */
hg_status_t hg_emit(const hg_builder_t *b, hg_backend_t be, hg_text_t *ptx);

/* Lower hg_emit_mlir's text to PTX for sm_90a, for callers that keep the MLIR: from the
 * on-disk lowering cache when it holds this text's lowering (no tool runs, so a machine
 * without the MLIR tools can use lowerings carried over from one with them), else with
 * mlir-opt-22 (HOPGEN_MLIR_OPT overrides it), storing the result. The cache lives where the
 * runtime's module cache does ($HOPGEN_CACHE_DIR, "off" disables it; else
 * $XDG_CACHE_HOME/hopgen or ~/.cache/hopgen) in files mlir-<key>.ptx; a damaged entry is
 * deleted and lowered again, never used. A cache that cannot be read or written does not
 * fail the lowering: hg_mlir_cache_note says what happened. */
hg_status_t hg_mlir_to_ptx(const char *mlir, hg_text_t *ptx);
/* Why the calling thread's last hg_mlir_to_ptx did not use or fill the lowering cache (the
 * cache is off or has no location, an entry was damaged, the directory is not writable),
 * or "" when it hit or stored its lowering. Per thread; valid until that thread's next
 * hg_mlir_to_ptx. */
const char *hg_mlir_cache_note(void);

/* ---------------------------------------------------------------- external tools */

/* Run argv[0] (searched in PATH and /usr/local/cuda/bin) with stdin_text on its standard
 * input; capture standard output and error. A non-zero exit is a failure whose sentence
 * holds the start of stderr. out/err may be NULL. */
hg_status_t hg_tool_run(const char *const *argv, const char *stdin_text, hg_text_t *out,
                        hg_text_t *err);

/* What ptxas -v says about a compiled kernel. */
typedef struct hg_ptxas_report {
  int registers;
  int spill_store_bytes;
  int spill_load_bytes;
  int stack_frame_bytes;
  int smem_bytes; /* static shared memory (hopgen kernels use dynamic: usually 0) */
  int barriers;   /* named barriers used */
  /* ptxas reported (C7508) that setmaxnreg is ignored: no register cap at entry. */
  bool setmaxnreg_ignored;
  /* ptxas's warning and "Potential Performance Loss" lines, "" when none (truncated). */
  char notes[512];
} hg_ptxas_report_t;

/* Assemble PTX with `ptxas -arch=sm_90a -v`; a rejection carries ptxas's message. */
hg_status_t hg_ptxas_check(const char *ptx, hg_ptxas_report_t *report);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
