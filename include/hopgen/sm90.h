/* hopgen Hopper facts — element types, wgmma atoms and TiledMma, GMMA shared-memory
 * layouts and descriptors, TMA tensor-map parameters and TiledCopy plans.
 *
 * Pure computation: integers in, integers out. No driver, no GPU. Every plan is
 * validated against the documented hardware rules and a failure names the rule. */
#ifndef HOPGEN_SM90_H
#define HOPGEN_SM90_H

#include <stdbool.h>
#include <stdint.h>

#include "hopgen/layout.h"
#include "hopgen/status.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: what libhopgen.so exports */

/* ---------------------------------------------------------------- element types */

typedef enum hg_dtype {
  HG_U8,
  HG_S8,
  HG_E4M3, /* fp8 e4m3 */
  HG_E5M2, /* fp8 e5m2 */
  HG_U16,
  HG_F16,
  HG_BF16,
  HG_U32,
  HG_S32,
  HG_F32,
  HG_TF32, /* stored as 32 bits; wgmma reads the top 19 */
  HG_U64,
  HG_F64,
  HG_DTYPE_COUNT
} hg_dtype_t;

int hg_dtype_bytes(hg_dtype_t t);
int hg_dtype_bits(hg_dtype_t t);
bool hg_dtype_is_float(hg_dtype_t t);
const char *hg_dtype_name(hg_dtype_t t); /* "bf16", "e4m3", ... */
hg_status_t hg_dtype_parse(const char *name, hg_dtype_t *out);

/* ---------------------------------------------------------------- TMA tensor maps */

/* Swizzle modes numbered as CUtensorMapSwizzle (1 = 32B ... 3 = 128B). The wgmma
 * descriptor numbers them the other way round; convert with hg_gmma_layout_type. */
typedef enum hg_swizzle_mode {
  HG_SWIZZLE_NONE = 0,
  HG_SWIZZLE_32B = 1,
  HG_SWIZZLE_64B = 2,
  HG_SWIZZLE_128B = 3,
} hg_swizzle_mode_t;

int hg_swizzle_mode_bytes(hg_swizzle_mode_t m); /* 0, 32, 64, 128 */

#define HG_TMA_MAX_RANK 5

/* Everything cuTensorMapEncodeTiled takes besides the global address. Dimension 0 is
 * the innermost (stride-1) one, as the driver wants it. */
typedef struct hg_tensormap_params {
  hg_dtype_t dtype;
  int rank;                                          /* 1..5 */
  uint64_t global_dim[HG_TMA_MAX_RANK];              /* elements */
  uint64_t global_stride_bytes[HG_TMA_MAX_RANK - 1]; /* of dims 1..rank-1 */
  uint32_t box_dim[HG_TMA_MAX_RANK];                 /* elements, 1..256 */
  uint32_t element_strides[HG_TMA_MAX_RANK];         /* 1..8 */
  int interleave;                                    /* CUtensorMapInterleave; hopgen uses 0 */
  hg_swizzle_mode_t swizzle;
  int l2_promotion; /* CUtensorMapL2promotion: 0 none..3 256B */
  bool oob_nan;     /* NaN instead of zero fill (float types) */
} hg_tensormap_params_t;

/* Every documented rule of tiled tensor maps, checked before any driver call; the
 * failure names the field, its value and the rule (global_address may be 0 to skip
 * the address check when it is not known yet). */
hg_status_t hg_tensormap_validate(const hg_tensormap_params_t *p, uint64_t global_address);

/* ---------------------------------------------------------------- operand majorness */

/* Which dimension of an MMA operand is contiguous in shared memory. K-major: K is
 * contiguous (A row-major MxK, B stored NxK: the "TN" GEMM). MN-major: M (or N) is
 * contiguous; wgmma reads it "transposed" (imm-trans-a/b = 1), 16-bit types only. */
typedef enum hg_major {
  HG_MAJOR_K = 0,
  HG_MAJOR_MN = 1,
} hg_major_t;

const char *hg_major_name(hg_major_t m);                       /* "k", "mn" */
hg_status_t hg_major_parse(const char *name, hg_major_t *out); /* k, mn (also K, MN, m, n) */
const char *hg_swizzle_mode_name(hg_swizzle_mode_t m);         /* "none", "32B", "64B", "128B" */
hg_status_t hg_swizzle_mode_parse(const char *name, hg_swizzle_mode_t *out);

/* ---------------------------------------------------------------- wgmma atoms (MmaAtom) */

/* Everything about one wgmma.mma_async instruction, D(64xN) (+)= A(64xK) * B(KxN):
 * the fields a generator passes to the builder (n, types, a_regs, trans flags: the
 * same names as hg_wgmma_op_t in emit.h), and the thread-value layouts of its register
 * operands. PTX ISA "Asynchronous Warpgroup Level Matrix Multiply-Accumulate",
 * wgmma.mma_async: shapes m64nNk16 (f16, bf16), m64nNk8 (tf32), m64nNk32 (e4m3/e5m2,
 * s8/u8); register fragments from "Register Fragments and Shared Memory Matrix Layouts". */
typedef struct hg_wgmma_atom {
  int m, n, k;          /* 64, N, K */
  hg_dtype_t a, b, acc; /* acc: f16, f32 or s32 */
  hg_major_t a_major, b_major;
  bool a_regs;           /* A from registers (a_tv below), else from a descriptor */
  bool trans_a, trans_b; /* == (major == HG_MAJOR_MN): the instruction's imm-trans-a/b */
  int acc_values;        /* accumulator elements per thread: 64 * N / 128 = N / 2 */
  int acc_regs;          /* 32-bit registers holding them: N/2 (f32, s32) or N/4 (f16) */
  int a_values;          /* A-fragment elements per thread (a_regs): 64 * K / 128 */
  int a_regs_count;      /* 32-bit registers holding them: always 4 */
  /* (thread 0..127, value) -> m + 64 * n in the 64xN accumulator (CuTe's CLayout). */
  hg_layout_t c_tv;
  /* (thread 0..127, value) -> m + 64 * k in the 64xK A operand from registers. */
  hg_layout_t a_tv;
  char ptx[80]; /* "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16" */
} hg_wgmma_atom_t;

/* The wgmma K for an A element type (16, 8 or 32), or 0 when wgmma does not take it. */
int hg_wgmma_k(hg_dtype_t a);
/* Whether N is legal for the operand and accumulator types: 8..256 in steps of 8; for
 * s8/u8 (s32 accumulators) 8, 16, 24, 32 then steps of 16. The sentence lists the
 * nearest legal values. */
hg_status_t hg_wgmma_check_n(hg_dtype_t a, hg_dtype_t acc, int n);
/* Build the atom; every illegal combination (types, N, majorness, register A with an
 * MN-major A) is refused with the rule it breaks. */
hg_status_t hg_wgmma_atom_make(hg_dtype_t a, hg_dtype_t b, hg_dtype_t acc, int n,
                               hg_major_t a_major, hg_major_t b_major, bool a_regs,
                               hg_wgmma_atom_t *out);

/* ---------------------------------------------------------------- mma.sync atoms (sm_80+) */

/* One warp-level mma.sync.aligned.m16n8k16.row.col.f32.<t>.<t>.f32, D(16x8) = A(16x16) *
 * B(16x8) + C (PTX ISA "Warp Level Matrix Multiply-Accumulate Instructions", mma.sync; the
 * fragments of "Matrix Fragments for mma.m16n8k16 with floating point type"), or for fp8
 * mma.sync.aligned.m16n8k32.row.col.f32.<a>.<b>.f32 (sm_89+; "Matrix Fragments for
 * mma.m16n8k32", four 8-bit elements a register): the fields of
 * hg_mma_sync_op_t in emit.h, and the thread-value layouts of its three register operands in
 * CuTe's convention, values in register order (two 16-bit elements per A/B register, low half
 * first). ldmatrix x4 (A, K-major: plain; MN-major: .trans) and x2 (B) load them directly. */
typedef struct hg_mma_sync_atom {
  int m, n, k;                      /* 16, 8, 16 (fp8: 32) */
  hg_dtype_t a, b, acc;             /* a == b: bf16 or f16, or each e4m3/e5m2; acc: f32 */
  int a_values, b_values, c_values; /* elements per thread: 8, 4, 4 (fp8: 16, 8, 4) */
  int a_regs, b_regs, c_regs;       /* 32-bit registers holding them: 4, 2, 4 */
  hg_layout_t a_tv;                 /* (thread 0..31, value) -> m + 16 * k (16 x K A) */
  hg_layout_t b_tv;                 /* (thread, value) -> n + 8 * k (B as 8 x K, N x K) */
  hg_layout_t c_tv;                 /* (thread, value 0..3) -> m + 16 * n (16x8 C and D) */
  char ptx[64];                     /* "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" */
} hg_mma_sync_atom_t;

/* Build the atom; anything but bf16 x bf16, f16 x f16 or e4m3/e5m2 x e4m3/e5m2 accumulating
 * in f32 is refused with the rule (the mma.sync shapes hopgen emits). */
hg_status_t hg_mma_sync_atom_make(hg_dtype_t a, hg_dtype_t b, hg_dtype_t acc,
                                  hg_mma_sync_atom_t *out);

/* ---------------------------------------------------------------- GMMA descriptors */

/* The descriptor's swizzle field ("layout type"): numbered the other way round from the
 * tensor map (PTX ISA "Matrix Descriptor Format": 0 none/interleave, 1 128B, 2 64B,
 * 3 32B). */
int hg_gmma_layout_type(hg_swizzle_mode_t m);
hg_swizzle_mode_t hg_gmma_swizzle_mode(int layout_type);

/* The decoded fields of a 64-bit wgmma shared-memory matrix descriptor, in bytes. PTX ISA
 * "Matrix Descriptor Format": start address >> 4 in bits 0-13, leading-dimension byte
 * offset >> 4 in bits 16-29, stride-dimension byte offset >> 4 in bits 32-45, base offset
 * in bits 49-51, layout type in bits 62-63. */
typedef struct hg_gmma_desc_fields {
  uint32_t start_address; /* shared-memory byte address, a multiple of 16 below 2^18 */
  uint32_t lbo_bytes;     /* leading-dimension byte offset, multiple of 16 below 2^18 */
  uint32_t sbo_bytes;     /* stride-dimension byte offset, multiple of 16 below 2^18 */
  int base_offset;        /* 0..7; hopgen's layouts keep 0 (1024-byte aligned atoms) */
  int layout_type;        /* 0 none, 1 128B, 2 64B, 3 32B */
} hg_gmma_desc_fields_t;

hg_status_t hg_gmma_desc_encode(const hg_gmma_desc_fields_t *f, uint64_t *out);
hg_gmma_desc_fields_t hg_gmma_desc_decode(uint64_t desc);

/* The canonical GMMA shared-memory layout atom for (type, majorness, swizzle), as a
 * composed layout (MN, K) -> element offset. In bytes, a row of the atom is the swizzle
 * span (16 B with no swizzle, the "interleaved" core matrix) and the atom has 8 rows:
 *   K-major:  Sw o (8, span/e) : (span/e, 1)     MN-major: Sw o (span/e, 8) : (1, span/e)
 * where Sw = Swizzle<B, 4 - log2(e), 3> (B = 0..3 for none..128B) is TMA's and wgmma's
 * XOR of address bits [4,4+B) with bits [7,7+B), written in elements of e bytes.
 * Atoms exist for 1, 2 and 4-byte elements either way (TMA can fill them); wgmma reads
 * MN-major operands of 16-bit types only, which descriptors check. */
hg_status_t hg_gmma_layout_atom(hg_dtype_t t, hg_major_t major, hg_swizzle_mode_t sw,
                                hg_composed_t *out);
/* Derive the descriptor of one wgmma operand from its shared-memory layout with the
 * algebra: layout is the (MN, K) view of exactly the elements one instruction reads
 * (64 x K for A, N x K for B), smem_addr the shared-memory address of the stage buffer
 * the layout indexes (the layout's own offset is added). The layout is recast to
 * 16-byte units and divided by the 8-row x 16-byte core matrix; LBO and SBO are the
 * strides read off the result. A layout that is not a canonical GMMA layout (PTX ISA
 * "Shared Memory Matrix Layout") is refused with the mode and stride that break it. */
hg_status_t hg_gmma_desc_make(const hg_composed_t *layout, hg_dtype_t t, hg_major_t major,
                              uint32_t smem_addr, hg_gmma_desc_fields_t *out);

#define HG_GMMA_MAX_BLOCKS 64

/* One operand's stage buffer (A: M x K, B: N x K) and everything the GEMM generator needs
 * to address it: the layout TMA fills, its size and alignment, the descriptor of
 * instruction (0,0) and the start-address advance of every MN atom and k-block, so that
 *   desc(i, kb) = desc_at_base + ((mn_atom_offset_bytes[i] + kblock_offset_bytes[kb]) >> 4)
 * (the advances are pre-swizzle offsets: wgmma applies the swizzle to the final address,
 * so they add to the start-address field exactly as CuTe's descriptor iterator does). */
typedef struct hg_gmma_operand {
  hg_dtype_t dtype;
  hg_major_t major;
  hg_swizzle_mode_t swizzle;
  int mn, k;                  /* the tile: rows (M for A, N for B) and K */
  int atom_mn, atom_k;        /* what one instruction reads: 64 or N rows, K of the wgmma */
  hg_composed_t layout;       /* (mn, k) -> element offset in the stage buffer */
  uint32_t stage_bytes;       /* cosize(layout) x element size */
  uint32_t align_bytes;       /* the stage buffer's address must be a multiple of this */
  hg_gmma_desc_fields_t desc; /* instruction (0,0) with the stage buffer at address 0 */
  int mn_atoms, kblocks;      /* mn / atom_mn, k / atom_k */
  uint32_t mn_atom_offset_bytes[HG_GMMA_MAX_BLOCKS];
  uint32_t kblock_offset_bytes[HG_GMMA_MAX_BLOCKS];
  /* The advance per MN atom and per k-block when it is uniform, else 0. */
  uint32_t mn_atom_stride_bytes, kblock_stride_bytes;
} hg_gmma_operand_t;

/* The canonical stage buffer: the atom hg_gmma_layout_atom(t, major, sw) tiled to (mn, k),
 * repeated along the strided mode first (K-major: MN, which is CuTe's column-major default;
 * MN-major: K), checked and described for instructions of atom_mn rows (64 for A, N for B). */
hg_status_t hg_gmma_operand_make(hg_dtype_t t, hg_major_t major, hg_swizzle_mode_t sw, int mn,
                                 int k, int atom_mn, hg_gmma_operand_t *out);
/* The same for any composed layout (mn, k) -> element offset: refused with a sentence
 * unless every instruction's view is a canonical GMMA layout with the same LBO and SBO. */
hg_status_t hg_gmma_operand_from_layout(const hg_composed_t *layout, hg_dtype_t t, hg_major_t major,
                                        int atom_mn, hg_gmma_operand_t *out);
/* The descriptor of MN atom mn_atom and k-block kblock for a stage buffer at smem_base. */
hg_status_t hg_gmma_operand_desc(const hg_gmma_operand_t *op, uint32_t smem_base, int mn_atom,
                                 int kblock, uint64_t *out);

/* ---------------------------------------------------------------- TiledMma */

/* A CTA tile computed by warpgroups, each issuing atoms_m x atoms_n wgmma per k-block. */
typedef struct hg_tiled_mma_spec {
  hg_dtype_t a, b, acc;
  int tile_m, tile_n, tile_k;
  int wg_m, wg_n; /* warpgroups along M and N (0 means 1) */
  hg_major_t a_major, b_major;
  hg_swizzle_mode_t a_swizzle, b_swizzle;
  bool auto_swizzle; /* ignore a/b_swizzle: the widest swizzle the tile allows */
  bool a_regs;       /* A from registers */
  int atom_n;        /* N of the instruction; 0: tile_n / wg_n */
} hg_tiled_mma_spec_t;

typedef struct hg_tiled_mma {
  hg_wgmma_atom_t atom;
  int tile_m, tile_n, tile_k;
  int wg_m, wg_n, warpgroups, threads; /* threads = 128 x warpgroups */
  /* Per warpgroup: instructions along M and N per k-block, and k-blocks per tile. Warp-
   * group w = wm + wg_m * wn owns rows [wm * tile_m/wg_m, ...) and columns [wn * tile_n/wg_n,
   * ...); its instruction (im, in) uses A MN atom wm * atoms_m + im and B MN atom
   * wn * atoms_n + in, and accumulator registers [(im + atoms_m * in) * atom.acc_regs, ...). */
  int atoms_m, atoms_n, atoms_k;
  hg_gmma_operand_t a_op, b_op; /* stage buffers of A (tile_m x tile_k), B (tile_n x tile_k) */
  int acc_values; /* accumulator elements per thread: atoms_m x atoms_n x atom.acc_values */
  /* (thread 0..threads-1, value) -> m + tile_m * n over the CTA tile; values ordered
   * (atom value, im, in) as the registers above. */
  hg_layout_t acc_tv;
  /* (thread, value) -> m + tile_m * k: the register-A fragments of the CTA tile, values
   * ordered (atom value, im, kb). */
  hg_layout_t a_tv;
} hg_tiled_mma_t;

hg_status_t hg_tiled_mma_make(const hg_tiled_mma_spec_t *spec, hg_tiled_mma_t *out);
/* Operand 0 = A, 1 = B: the descriptor warpgroup wg's instruction (mn_atom, kblock) uses
 * (mn_atom counts within the warpgroup), for a stage buffer at smem_base. */
hg_status_t hg_tiled_mma_desc(const hg_tiled_mma_t *tm, int operand, uint32_t smem_base, int wg,
                              int mn_atom, int kblock, uint64_t *out);
/* Where accumulator value v of CTA thread t lives in the tile (plain integers). */
hg_status_t hg_tiled_mma_acc_coord(const hg_tiled_mma_t *tm, int thread, int value, int *m, int *n);

/* ---------------------------------------------------------------- TMA plans (TiledCopy) */

/* What a plan's boxes do. The reduce operations follow hg_reduce_op_t of emit.h in the
 * same order: (hg_reduce_op_t)(op - HG_TMA_REDUCE_ADD). */
typedef enum hg_tma_op {
  HG_TMA_LOAD,
  HG_TMA_PREFETCH,
  HG_TMA_STORE,
  HG_TMA_REDUCE_ADD,
  HG_TMA_REDUCE_MIN,
  HG_TMA_REDUCE_MAX,
  HG_TMA_REDUCE_INC,
  HG_TMA_REDUCE_DEC,
  HG_TMA_REDUCE_AND,
  HG_TMA_REDUCE_OR,
  HG_TMA_REDUCE_XOR,
  HG_TMA_OP_COUNT
} hg_tma_op_t;

const char *hg_tma_op_name(hg_tma_op_t op); /* "load", "prefetch", "store", "reduce-add"... */
hg_status_t hg_tma_op_parse(const char *name, hg_tma_op_t *out);
bool hg_tma_op_is_reduce(hg_tma_op_t op);
/* The element types cp.reduce.async.bulk.tensor takes for op (PTX ISA): add u32 s32 u64
 * f32 f16 bf16; min/max u32 s32 f16 bf16; inc/dec u32; and/or/xor 32/64-bit integers. */
hg_status_t hg_tma_reduce_check(hg_tma_op_t op, hg_dtype_t t);

/* A global tensor as TMA sees it: shape and strides in elements, mode order as the user
 * names it (the plan finds the unit-stride mode and makes it tensor-map dimension 0). */
typedef struct hg_tma_tensor {
  hg_dtype_t dtype;
  int rank; /* 1..5 */
  int64_t shape[HG_TMA_MAX_RANK];
  int64_t stride[HG_TMA_MAX_RANK];
  uint64_t base_align_bytes; /* what the base address is known to be a multiple of; 0: unknown */
} hg_tma_tensor_t;

typedef struct hg_tma_options {
  hg_tma_op_t op;
  int cluster; /* CTAs receiving each box by multicast (loads); 0 or 1: none */
  /* The multicast group's CTA ranks are first + i * mcast_rank_stride (0 means 1): e.g. the
   * CTAs sharing an A tile in a 2 x 2 cluster whose rank is m + 2 n have stride 2. */
  int mcast_rank_stride;
  int l2_promotion;  /* CUtensorMapL2promotion; -1: 256B (3), the default */
  bool oob_nan;      /* NaN instead of zero fill for out-of-bounds elements (floats) */
  bool origin_known; /* origin below is the tile origin: check it statically */
  int32_t origin[HG_TMA_MAX_RANK]; /* tile origin, per tensor mode */
} hg_tma_options_t;

hg_tma_options_t hg_tma_options_default(hg_tma_op_t op);

/* One TMA instruction: coordinates RELATIVE to the tile origin, in tensor-map dimension
 * order (add the origin's tensor-map-ordered coordinates at run time: dimension d takes the
 * origin of tensor mode tmap_mode[d]), and the byte offset of its destination (source) in
 * the stage buffer. Offsets along dimension 0 are multiples of 16 bytes; the run-time
 * origin along tmap_mode[0] must be too (16 / element-size elements), or the GPU raises an
 * illegal instruction (seen on an H200). Plans check it when the origin is known
 * (hg_tma_options_t.origin_known, hg_tma_box_coords); generated kernels must ensure it.
 * Stores and reductions further take no negative coordinate at all (hg_tma_box_issuable):
 * a kernel must write such a box without TMA. */
typedef struct hg_tma_box {
  int32_t coord[HG_TMA_MAX_RANK];
  uint32_t smem_offset; /* bytes */
} hg_tma_box_t;

#define HG_TMA_MAX_BOXES 256
#define HG_TMA_MAX_CLUSTER 16

typedef struct hg_tma_plan {
  hg_tma_op_t op;
  hg_tensormap_params_t map;      /* all cuTensorMapEncodeTiled takes besides the address */
  int tmap_mode[HG_TMA_MAX_RANK]; /* tensor mode of tensor-map dimension d */
  int mode_dim[HG_TMA_MAX_RANK];  /* tensor-map dimension of tensor mode m */
  int tile[HG_TMA_MAX_RANK];      /* tile extent per tensor mode */
  hg_composed_t smem;             /* tile coordinate -> element offset in the stage buffer */
  uint32_t smem_bytes;            /* the stage buffer: cosize x element size */
  uint32_t smem_align_bytes;      /* its address must be a multiple: 128, 1024 with swizzle */
  uint32_t box_bytes;             /* bytes one box moves (what the transaction count sees) */
  uint32_t tile_bytes;            /* bytes all boxes move */
  int num_boxes;
  hg_tma_box_t box[HG_TMA_MAX_BOXES]; /* sorted by smem_offset */
  /* Multicast: member i of the group (0 <= i < cluster) issues boxes [cta_first_box[i],
   * cta_first_box[i] + boxes_per_cta) with mask mcast_mask << (rank of member 0): the mask
   * has bit i * mcast_rank_stride set for every member. Every member's mbarrier expects
   * expect_tx_bytes, the whole tile, although it issues only cta_issue_bytes. */
  int cluster;
  int mcast_rank_stride;
  uint16_t mcast_mask;
  int boxes_per_cta;
  int cta_first_box[HG_TMA_MAX_CLUSTER];
  uint32_t cta_issue_bytes; /* bytes each CTA's own boxes move */
  uint32_t expect_tx_bytes; /* bytes each CTA's mbarrier must expect (loads) */
} hg_tma_plan_t;

/* The plan that moves the tile whose shared-memory layout is smem (rank of the tensor,
 * mode i of the tile = mode i of the tensor, shape = the tile) between the tensor and the
 * stage buffer: tensor-map parameters (validated with hg_tensormap_validate), the box TMA
 * must use, the boxes that fill the tile, and multicast slices. Refused with a sentence
 * when the layout cannot be written by TMA boxes (it is checked element by element; rows
 * padded to the swizzle span are what TMA writes). Rules are checked in a fixed order, so
 * that a request breaking several names the one the hardware enforces whatever the layout:
 * the tensor's (type, strides, base alignment, extents), then the known origin's innermost
 * 16-byte rule, then the stage layout's and the boxes'. */
hg_status_t hg_tma_plan_make(const hg_tma_tensor_t *g, const hg_composed_t *smem,
                             const hg_tma_options_t *opt, hg_tma_plan_t *out);
/* A stage layout for a plain copy of a tile: the unit-stride mode of g fastest, rows
 * of the swizzle span (or of up to 256 elements with no swizzle) in groups of 8. A tile
 * narrower than the span (in 16-byte chunks) gets padded rows: rows the span apart, the
 * tile in the first part of each, as TMA writes them (seen on an H200). The tensor's own
 * tensor-map rules (strides, base alignment) are checked first, as hg_tma_plan_make does. */
hg_status_t hg_tma_smem_layout(const hg_tma_tensor_t *g, const int *tile, hg_swizzle_mode_t sw,
                               hg_composed_t *out);
/* Whether hg_tma_smem_layout pads the rows of this tile under swizzle sw: the tile's extent
 * along g's unit-stride mode is narrower than the swizzle span (part of every row unused). */
bool hg_tma_smem_padded(const hg_tma_tensor_t *g, const int *tile, hg_swizzle_mode_t sw);
/* The absolute coordinates of box b for a tile at origin (per tensor mode): the innermost
 * one must be a multiple of 16 bytes (an H200 raises an illegal instruction otherwise) and
 * all must fit int32. Negative coordinates are legal for loads, prefetches and multicast
 * (TMA fills out-of-bounds elements), and are returned for every operation: whether a
 * store's or reduction's box may go through TMA is hg_tma_box_issuable's question. */
hg_status_t hg_tma_box_coords(const hg_tma_plan_t *p, int b, const int32_t *origin, int32_t *out);
/* Whether box b of plan p may be issued by TMA at coords (tensor-map order, from
 * hg_tma_box_coords). Loads and prefetches: always. Stores and reductions: only when every
 * coordinate is >= 0. Seen on an H200 (driver 580.159.04): a cp.async.bulk.tensor store
 * with ANY negative coordinate (innermost or outer, aligned or not) raises
 * CUDA_ERROR_ILLEGAL_INSTRUCTION and kills the context; cp.reduce.async.bulk.tensor shares
 * the store path and is assumed to do the same. And a box running past the end of dimension
 * 0 when that extent is not a multiple of 16 bytes: the store clips at 16-byte granularity
 * and writes up to the next boundary past the end (f16 rows of 100 in a pitch of 104:
 * columns 100-103 written); boxes past the far edges are otherwise fine
 * (docs/hardware-notes.md). The refusal names the box, mode and value; hopgen's
 * store and reduce kernels write such a box element by element instead (the ideal result:
 * out-of-bounds elements skipped, hg_model_store_elementwise). */
hg_status_t hg_tma_box_issuable(const hg_tma_plan_t *p, int b, const int32_t *coords);

/* ---------------------------------------------------------------- CPU reference model */

/* What the hardware does, written from the PTX ISA and from what an H200 was seen to do
 * (docs/ARCHITECTURE.md), independently of the planners above, so that tests can check plans
 * and descriptors against it and kernels' GPU results can be compared with it.
 *
 * Shared memory is a byte array whose index is the shared-memory address (so it is
 * 1024-byte aligned: the swizzles XOR address bits). Global memory is the tensor's bytes,
 * gmem[0] being element (0,...,0); gmem_bytes bounds every access. */

/* A tiled TMA load of one box at coords (tensor-map order, signed) into smem at address
 * dst: the box lands densely, dimension 0 fastest, each row padded to the swizzle span,
 * 16-byte chunks XORed with address bits 7..; out-of-bounds elements read zero (or 0x7FF7
 * in every 16 bits with oob_nan). *tx_bytes gets the bytes the mbarrier is told of (the
 * whole box). An innermost coordinate whose byte offset is not a multiple of 16 is an
 * error: the GPU raises an illegal instruction. */
hg_status_t hg_model_tma_load(const hg_tensormap_params_t *p, const void *gmem, size_t gmem_bytes,
                              const int32_t *coords, uint8_t *smem, size_t smem_bytes, uint32_t dst,
                              uint32_t *tx_bytes);
/* The same box multicast to every CTA whose bit is set in mask: cta_smem[r] is CTA r's
 * shared memory; tx_bytes[r] (may be NULL) accumulates the bytes signalled to CTA r. */
hg_status_t hg_model_tma_load_multicast(const hg_tensormap_params_t *p, const void *gmem,
                                        size_t gmem_bytes, const int32_t *coords,
                                        uint8_t *const *cta_smem, int cluster, size_t smem_bytes,
                                        uint32_t dst, uint16_t mask, uint32_t *tx_bytes);
/* A tiled TMA store (op HG_TMA_STORE) or reduction (HG_TMA_REDUCE_*) of one box from smem
 * at address src: the same box shape and swizzle as a load; out-of-bounds elements past the
 * far edges are skipped. Reductions compute in the element type (f16/bf16 rounded to
 * nearest even). Any negative coordinate is an error, as the innermost 16-byte rule is:
 * the GPU raises an illegal instruction (seen on an H200 for stores, assumed for
 * reductions; hg_tma_box_issuable). */
hg_status_t hg_model_tma_store(const hg_tensormap_params_t *p, hg_tma_op_t op, void *gmem,
                               size_t gmem_bytes, const int32_t *coords, const uint8_t *smem,
                               size_t smem_bytes, uint32_t src);
/* The ideal store or reduction of the same box at any int32 coordinates, element by
 * element: every in-bounds element is read from where TMA would read it (the box geometry
 * and swizzle above) and written or reduced; out-of-bounds elements on either side are
 * skipped. What hopgen's kernels do for a box that TMA cannot take (a negative coordinate),
 * and what TMA itself does for the others. */
hg_status_t hg_model_store_elementwise(const hg_tensormap_params_t *p, hg_tma_op_t op, void *gmem,
                                       size_t gmem_bytes, const int32_t *coords,
                                       const uint8_t *smem, size_t smem_bytes, uint32_t src);

/* What a kernel that issues every box of plan p for the tile at origin (per tensor mode)
 * does, on the model: a load, multicast or not (member i of the group issues its slice into
 * every member's shared memory; cta_smem[i] is member i's), a store or reduction from
 * cta_smem[0] (refused, as the GPU would fault, when a box has a negative coordinate), or a
 * prefetch (nothing lands; the coordinates are still checked). smem_base
 * is the stage buffer's shared-memory address; tx_bytes (p->cluster entries, or NULL) gets
 * what each member's mbarrier was told. A convenience over the calls above for checking
 * GPU results; it takes the plan's word for the tensor map, boxes and offsets. */
hg_status_t hg_model_tma_run(const hg_tma_plan_t *p, void *gmem, size_t gmem_bytes,
                             const int32_t *origin, uint8_t *const *cta_smem, size_t smem_bytes,
                             uint32_t smem_base, uint32_t *tx_bytes);

/* The shared-memory byte address wgmma reads element (mn, k) of an operand from, for a
 * descriptor (PTX ISA "Matrix Descriptor Format" and the canonical K-major and MN-major
 * layouts of "Shared Memory Matrix Layout"): mn < 256 along M (A) or N (B), k < the
 * instruction's K for type t. Base offsets other than 0 are not modelled. */
hg_status_t hg_model_wgmma_addr(uint64_t desc, hg_dtype_t t, hg_major_t major, int mn, int k,
                                uint32_t *addr);
/* Gather the rows x K operand a descriptor describes: out[(mn * K + k) * e ...] = the
 * element's bytes. */
hg_status_t hg_model_wgmma_read(uint64_t desc, hg_dtype_t t, hg_major_t major, int rows,
                                const uint8_t *smem, size_t smem_bytes, void *out);
/* Where the PTX ISA's register-fragment figures put accumulator element `value` of thread
 * `thread` (0..127) of a 64xN wgmma, and element `value` of a register A fragment. */
hg_status_t hg_model_wgmma_acc_coord(int n, int thread, int value, int *m, int *col);
hg_status_t hg_model_wgmma_a_coord(hg_dtype_t a, int thread, int value, int *m, int *k);
/* Where the PTX ISA's fragment figures for mma.m16n8k16 (16-bit floats) put element `value`
 * of lane `lane` (0..31) of operand 0 = A (16x16: row m, col k; values 0..7), 1 = B (16x8:
 * row k, col n; values 0..3) or 2 = C/D (16x8 f32: row m, col n; values 0..3). */
hg_status_t hg_model_mma_sync_coord(int operand, int lane, int value, int *row, int *col);
/* The same for mma.m16n8k32 with 8-bit operands (e4m3/e5m2): A 16x32 (values 0..15, four
 * bytes a register), B 32x8 (values 0..7), C/D 16x8 f32 (values 0..3). */
hg_status_t hg_model_mma_sync8_coord(int operand, int lane, int value, int *row, int *col);
/* What ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16 puts in each lane's registers:
 * lane 8i + r (i < num) gives in lane_addr the shared-memory address of row r of matrix i (8
 * 16-bit elements, 16-byte aligned; the other lanes' addresses are not read); register i of
 * lane t gets row t/4, elements 2(t%4) and 2(t%4)+1 of matrix i (low half first), or with
 * .trans column t/4, rows 2(t%4) and 2(t%4)+1. out[t][i] for i < num. */
hg_status_t hg_model_ldmatrix(int num, bool trans, const uint32_t lane_addr[32],
                              const uint8_t *smem, size_t smem_bytes, uint32_t out[32][4]);
/* Swizzle a shared-memory byte address as TMA and wgmma do for mode m. */
uint32_t hg_model_swizzle_addr(hg_swizzle_mode_t m, uint32_t addr);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
