/* Shared by the GEMM's planner (gemm_plan.c), generator (gemm_gen.c), configuration code
 * (gemm_config.c) and runner: the plan of one kernel. Not public API. */
#ifndef HOPGEN_KERNELS_GEMM_INTERNAL_H
#define HOPGEN_KERNELS_GEMM_INTERNAL_H

#include "cachefile.h"
#include "hopgen/kernels.h"

/* What the generator needs besides hg_gemm_kernel_t's public part. */
typedef struct gemm_plan {
  bool pingpong;
  int consumers;                 /* consumer warpgroups */
  hg_mma_builder_t mma;          /* the TiledMma of the mainloop's kind */
  hg_cp_async_copy_t cp_a, cp_b; /* operands not through TMA */
  int epi_n, epi_buffers;
  uint32_t epi_bytes;  /* one epilogue buffer, 1024-byte aligned */
  hg_swizzle_t epi_sw; /* the buffers' swizzle (TMA or staged D) */
} gemm_plan_t;

/* The problem a configuration with swap_ab runs: M and N, A and B (types, majorness, leading
 * dimensions, batch strides, alignments), the bias's direction and the row and column scales
 * exchanged; D, C, the residual and aux keep their layouts (the kernel stores them
 * transposed). p normalised. */
hg_gemm_problem_t hg_gemm_problem_swapped(const hg_gemm_problem_t *p);

/* The GEMM kernel's run-time parameters (gemm_params.c); HG_NONE where the kernel has none. */
typedef struct gemm_params {
  hg_val_t tmap_a, tmap_b;                /* operands through TMA */
  hg_val_t tmap_aux;                      /* the aux output through TMA */
  hg_val_t tmap_sa, tmap_sb;              /* fp8 block scales staged by TMA (scales_tma) */
  int scale_rank_a, scale_rank_b;         /* their maps' ranks */
  int scale_a_pad;                        /* hg_block_scales_t.a_pad */
  hg_val_t a_ptr, b_ptr, lda, ldb;        /* operands through cp.async (I64) */
  hg_val_t bsa, bsb;                      /* and their batch strides (I64) */
  hg_val_t M, N, K, batch;                /* I32 */
  hg_val_t scale_a, scale_b;              /* fp8's scale pointers (I64) */
  hg_val_t groups;                        /* grouped: the groups' rows on the device (I64) */
  hg_val_t scale_b_at, vec[2], vec_at[2]; /* grouped: per-unit pointers (variables) of the
                                           * steps reading a group's scales, and the row and
                                           * column scale parameters they derive from */
  hg_val_t workspace;                     /* split-K (I64) */
  hg_val_t scale_lda, scale_ldb;          /* fp8 block scaling (I64) */
  hg_val_t scale_group_a, scale_group_b;  /* grouped block scaling: f32 elements between the
                                           * groups' tables (I64; HG_NONE: one table) */
} gemm_params_t;

/* Accumulator sets a consumer thread holds: the f32 one, a partial one when partial sums are
 * promoted, a second partial one with HG_PROMOTE_DOUBLE (normalised p). */
int hg_gemm_acc_sets(const hg_gemm_problem_t *p, const hg_gemm_config_t *c);
/* The consumer thread's accumulators (*acc, malloc'ed: the caller frees it) as F32 variables,
 * and fp8 promotion's partial sums after them (*partial; NULL without promotion). */
hg_status_t hg_gemm_acc_vars(hg_builder_t *b, const hg_gemm_kernel_t *k, const gemm_plan_t *g,
                             hg_val_t **acc, hg_val_t **partial);
/* Declare the parameters of kernel k in the order hg_gemm_op_run passes them and append the
 * epilogue chain over them to e's steps (e->tma set first: whether tmap_d feeds it). */
hg_status_t hg_gemm_params_declare(hg_builder_t *b, const hg_gemm_kernel_t *k, gemm_params_t *x,
                                   hg_epilogue_t *e);
/* Operand i (0: A, 1: B) of kernel k as the producer copies it, over the parameters x. */
hg_operand_copy_t hg_gemm_params_operand(const hg_gemm_kernel_t *k, const gemm_plan_t *g,
                                         const gemm_params_t *x, int i);
/* fp8 block scaling's factors over the parameters, for a thread whose first accumulator row
 * is row0 (I32) in a region of atoms_m 64-row atoms. */
hg_block_scales_t hg_gemm_params_block_scales(const gemm_params_t *x, hg_val_t row0, int atoms_m);
/* The kernel's tile scheduler over the parameters: persistent, or grouped (whose groups' rows
 * every thread of roles reads from the device as it is made). */
hg_status_t hg_gemm_params_sched(hg_builder_t *b, const hg_gemm_kernel_t *k, const gemm_params_t *x,
                                 const hg_cluster2d_t *cl, const hg_roles_t *roles,
                                 hg_sched_t *out);
/* Grouped, per unit w: D's row bound and the steps' scale pointers become its group's. */
void hg_gemm_params_unit(hg_builder_t *b, const gemm_params_t *x, hg_epilogue_t *e,
                         const hg_sched_work_t *w);

/* The GEMM's shared-memory ring: the cluster, the stages of A and B, the staged window copies'
 * slots, the staged fp8 block scales' stages (HG_BLOCK_SCALES_SMEM) and the stage barriers
 * (full: the producer's arrivals and the TMA bytes; empty: the consumer warps of every CTA
 * that receives this CTA's multicasts). Reserved in that order (gemm_params.c). */
typedef struct gemm_ring {
  hg_cluster2d_t cl;
  hg_smem_ring_t a, b, stg_a, stg_b, s;
  hg_pipe_t pipe;
} gemm_ring_t;
hg_status_t hg_gemm_ring_make(hg_builder_t *b, const hg_gemm_kernel_t *k, const gemm_plan_t *g,
                              gemm_ring_t *out);
/* The consumers' main loop over ring rg: k's MMA, fp8 promotion (its overlap flags; partial:
 * the partial sums, a second set after them with HG_PROMOTE_DOUBLE) and block scales (bs, the
 * consumer's factors, read through the description). */
hg_mainloop_t hg_gemm_params_mainloop(hg_builder_t *b, const hg_gemm_kernel_t *k,
                                      const gemm_plan_t *g, const gemm_ring_t *rg,
                                      const hg_roles_t *r, const hg_val_t *partial,
                                      hg_block_scales_t *bs);

/* Normalise p, resolve the mainloop, check c, and plan every operand and the epilogue into
 * k (problem, config, paths, TMA plans) and g. */
hg_status_t hg_gemm_plan_make(const hg_gemm_problem_t *p, const hg_gemm_config_t *c,
                              hg_gemm_kernel_t *k, gemm_plan_t *g);
/* The warp roles of k's kernel (reduce: of its split-K reduction pass): warpgroups and the
 * registers setmaxnreg gives each. */
hg_roles_spec_t hg_gemm_roles_spec(const hg_gemm_kernel_t *k, const gemm_plan_t *g, bool reduce);
/* Split-K's partial tiles of k's kernel (config.splits > 1) in the workspace parameter. */
hg_splitk_spec_t hg_gemm_splitk_spec(const hg_gemm_kernel_t *k, const gemm_plan_t *g,
                                     hg_val_t workspace);
/* "hg_gemm_bf16_bf16_tn_128x256x64_c2x1_s4_coop" and the mainloop's and cp.async's suffixes. */
void hg_gemm_kernel_name(const hg_gemm_kernel_t *k, char *buf, size_t size);
/* The tile scheduler of a configuration (the kernel's and the grid size's). */
hg_sched_spec_t hg_gemm_sched_spec(const hg_gemm_config_t *c);
/* Whether the consumers prepare the scheduler's divisors (hg_sched_prepare, gemm_gen.c; the
 * kernel then decides at run time whether to use them). Not for grouped GEMMs (units found by
 * search) nor ping-pong consumers (beside a whole tile's accumulators the words read back,
 * hoisted out of the loop by ptxas, spilled). */
bool hg_gemm_sched_prepared(const hg_gemm_problem_t *p, const hg_gemm_config_t *c);
/* The MMA kind of a (resolved) mainloop. */
hg_mma_kind_t hg_gemm_mma_kind(hg_gemm_mainloop_t m);
/* Whether the epilogue's vector steps (bias, row and column scales) are staged in shared
 * memory before the main loop: they are when the configuration has room for them. */
bool hg_gemm_vectors_staged(const hg_gemm_problem_t *p, const hg_gemm_config_t *c);
/* k-blocks per promotion of fp8 partial sums into f32 (normalised p): 0 when the MMAs
 * accumulate in place (16-bit operands, fp8 FAST). */
int hg_gemm_promote(const hg_gemm_problem_t *p);
/* The heuristic for a given mainloop (AUTO: the one the problem resolves to) under rules
 * (NULL: the defaults). */
hg_status_t hg_gemm_heuristic_for(const hg_gemm_problem_t *p, hg_gemm_mainloop_t m, int sm_count,
                                  const hg_gemm_rules_t *rules, hg_gemm_config_t *out);

/* The decode GEMM (mainloop ldg-mmasync, gemm_decode.c): whether p is a shape it runs (M <=
 * 16, K-major operands of one 16-bit type, batch 1, not grouped), its configuration check
 * (sentences for what it does not do), its heuristic (tile, splits to fill sm_count SMs) and
 * its kernel into b over a planned kernel (out->problem, config, a_vec/b_vec; sets out->k's
 * threads and cluster). */
bool hg_gemm_decode_shape_ok(const hg_gemm_problem_t *p);
/* hg_gemm_decode_rule for the device dev (NULL: none known, the H100's choices): the memory's
 * bandwidth moves larger weights to the decode kernel on H200-class memory (gemm_plan.c). */
bool hg_gemm_decode_rule_on(const hg_gemm_problem_t *p, const hg_gemm_rules_t *rules,
                            const hg_device_info_t *dev);
/* Aligned weights up to this size take the decode kernel at small M on any device (the
 * rule in gemm_plan.c); larger ones choose 16-row CTAs in it (gemm_decode.c). */
#define HG_DECODE_MAX_WEIGHT_BYTES (64ll << 20)
hg_status_t hg_gemm_decode_check(const hg_gemm_problem_t *p, const hg_gemm_config_t *c);
int hg_gemm_decode_tune_space(const hg_gemm_problem_t *p, hg_gemm_config_t *out, int cap);
hg_status_t hg_gemm_decode_heuristic(const hg_gemm_problem_t *p, int sm_count,
                                     hg_gemm_config_t *out);
hg_status_t hg_gemm_decode_build(hg_builder_t *b, hg_gemm_kernel_t *out);
/* Its pieces, for the CPU tests. The k permutation: mma step s (0, 1) takes as register reg
 * (0..3) of the mma's A fragment word `word` (0..3) of the lane's 16 bytes of row g (half 0)
 * or g + 8 (half 1) of the chunk; the B fragment's register j is word 2s + j of A's row. */
void hg_gemm_decode_frag(int s, int reg, int *half, int *word);
/* Lane q's 16-byte window of the row at row_addr (I64) in chunk 0: its address, and for window
 * rows (win) the aligned block under it and the window's offset sh (I32) in it. */
void hg_gemm_decode_lane_row(hg_builder_t *b, hg_val_t row_addr, hg_val_t q, bool win, hg_val_t *at,
                             hg_val_t *sh);
/* The window's 16 bytes at chunk offset off (I64): out[0..3]. left (I32, HG_NONE: a chunk
 * wholly within the row) the row's bytes from the window's start: only the aligned blocks
 * holding row bytes are read, the bytes past the row zeroed. */
void hg_gemm_decode_load(hg_builder_t *b, hg_val_t at, hg_val_t sh, bool win, hg_val_t off,
                         hg_val_t left, hg_val_t out[4]);

/* The kernel cache by specification (gemm_cache.c): hg_gemm_build's whole output stored under
 * its inputs (the packed problem, the resolved configuration, the repack decision, the
 * backend) and the library's build id. hg_gemm_build_id: the hex build id of the binary the
 * library is linked into, NULL without one (then nothing is cached). The key is false when
 * there is no build id; load fills out (from_cache set) on a hit only; store never fails
 * loudly (a cache that cannot store costs the next build its time). */
typedef struct hg_gemm_spec_key {
  char text[640];
  hg_cache_key_t key;
} hg_gemm_spec_key_t;
const char *hg_gemm_build_id(void);
bool hg_gemm_spec_key(const hg_gemm_problem_t *p, const hg_gemm_config_t *c, bool repack_a,
                      bool repack_b, hg_backend_t be, hg_gemm_spec_key_t *out);
bool hg_gemm_spec_load(const hg_gemm_spec_key_t *k, hg_gemm_kernel_t *out);
void hg_gemm_spec_store(const hg_gemm_spec_key_t *k, const hg_gemm_kernel_t *kernel);

/* One run of a grouped GEMM's operation: args as hg_gemm_op_run_args, groups the device array
 * of the groups' rows (hg_gemm_group_t). The grouped operation (grouped.c) runs through it. */
hg_status_t hg_gemm_op_run_grouped(hg_gemm_op_t *op, const hg_gemm_args_t *args, hg_devptr_t groups,
                                   hg_stream_t stream);

/* ---------------------------------------------------------------- the check/bench drivers'
 * shared pieces (gemm_bench.c; the grouped driver in grouped.c uses them too) */

/* Helper kernels loaded once per run: fresh random data (a fill kernel per slot, one slot per
 * element type the run fills) and the f32-accumulating reference GEMM (hg_gen_gemm_reference
 * of the first problem it is asked for). Zero-initialise; hg_gemm_kits_free unloads. */
#define HG_GEMM_FILL_SLOTS 3
typedef struct hg_gemm_kits {
  hg_kernel_t fill[HG_GEMM_FILL_SLOTS], ref;
  hg_module_t *fill_mod[HG_GEMM_FILL_SLOTS], *ref_mod;
  hg_function_t *fill_fn[HG_GEMM_FILL_SLOTS], *ref_fn;
} hg_gemm_kits_t;

/* One launch of the reference: D(f32) = alpha A B + beta C over m x n x batch (its parameter
 * list, util_kernels.c; fp8 block scaling's pointers and leading dimensions last). */
typedef struct hg_gemm_ref_args {
  hg_devptr_t a, b, c, d;
  int32_t m, n, k, batch;
  int64_t lda, ldb, ldc, sa, sb, sc;
  float alpha, beta;
  hg_devptr_t scale_a, scale_b;
  int64_t scale_lda, scale_ldb;
} hg_gemm_ref_args_t;

void hg_gemm_kits_free(hg_rt_t *rt, hg_gemm_kits_t *k);
/* bytes of fresh random data of type t at p with the fill kernel of slot (0..2). */
hg_status_t hg_gemm_kits_fill(hg_rt_t *rt, hg_gemm_kits_t *k, int slot, hg_dtype_t t, hg_devptr_t p,
                              size_t bytes, uint64_t seed);
/* Launch the reference for problem p's types (generated and loaded on the first call). */
hg_status_t hg_gemm_kits_reference(hg_rt_t *rt, hg_gemm_kits_t *k, const hg_gemm_problem_t *p,
                                   const hg_gemm_ref_args_t *a);
/* The host value of one element (bf16, f16, f32, e4m3, e5m2) as a double. */
double hg_gemm_host_elem(hg_dtype_t t, const uint8_t *p);
/* Median milliseconds of one run of fn(ctx) over iters samples on the default stream, after
 * warmup untimed runs; a sample times runs back to back between two events (as many as fill
 * 0.25 ms, at most 64) and divides, so that the host's launch is not timed with the kernel. */
typedef hg_status_t (*hg_gemm_run_fn)(void *ctx);
hg_status_t hg_gemm_time_median(hg_rt_t *rt, hg_gemm_run_fn fn, void *ctx, int warmup, int iters,
                                float *ms);
/* hg_gemm_build, with force_repack: AUTO repacks every operand TMA cannot address, whatever
 * hg_gemm_repack_rule says (the bench's --compare-repack times that path). */
hg_status_t hg_gemm_build_repack(const hg_gemm_problem_t *p, const hg_gemm_config_t *c,
                                 hg_gemm_mainloop_t mainloop, const hg_device_info_t *dev,
                                 hg_backend_t be, bool force_repack, hg_gemm_kernel_t *out);
/* hg_gemm_op_create over hg_gemm_build_repack. */
hg_status_t hg_gemm_op_create_repack(hg_rt_t *rt, const hg_gemm_problem_t *p,
                                     const hg_gemm_config_t *c, hg_backend_t be, bool force_repack,
                                     hg_gemm_op_t **out);

/* JIT-load a generated kernel through the cache and get its function (shared memory opted
 * in); the module is unloaded again when the function cannot be had. */
/* The PTX repack kernel of esize-byte elements (hg_gen_repack, or with pair
 * hg_gen_repack_pair), generated once per process and shared: the caller neither frees nor
 * changes it. */
hg_status_t hg_repack_kernel(int esize, bool pair, const hg_kernel_t **out);
hg_status_t hg_kernels_load(hg_rt_t *rt, const hg_kernel_t *k, hg_module_t **mod,
                            hg_function_t **fn, hg_jit_info_t *info);

#endif
