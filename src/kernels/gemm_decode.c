/* The decode GEMM (mainloop ldg-mmasync, kernels.h): D[M, N] = A[M, K] B[N, K]^T for M <= 16
 * with K-major weights B, streamed from global memory straight into registers.
 *
 * The warp-specialized GEMM spends a 64-row wgmma on at most 16 rows of A and a stage ring
 * on a problem that is one pass over B; here the kernel is that one pass. It computes
 * D^T = B A^T with mma.sync.m16n8k16: 16 rows of B (N) are the mma's A operand, A's rows the
 * mma's N (n8, two n8 blocks when M > 8, a uniform branch). The reduction over k is order-free,
 * so k is permuted so that a lane's 16-byte load IS its fragment: in a 64-byte chunk of k
 * (32 16-bit elements), lane (g = lane / 4, q = lane % 4) loads the 16 bytes at byte 16q of
 * rows g and g + 8 (words w[0..3], v[0..3]); mma step s (0, 1) takes {w[2s], v[2s], w[2s+1],
 * v[2s+1]}, i.e. mma k 2q, 2q+1 <-> chunk elements 8q + 4s, +1 and mma k 2q+8, 2q+9 <-> 8q +
 * 4s + 2, +3. The B fragment (A^T) of lane (g, q) is then A[g][8q + 4s .. 8q + 4s + 3]: the
 * same 16-byte window of A's row g. A is read from global memory too (it is at most 16 x K,
 * shared by every CTA: L2-resident), which needs no K-sized shared memory. fp8 takes the same
 * words through mma.sync.m16n8k32 (four elements a register: k 4q..4q+3 <-> 16q + 8s + 0..3,
 * k 4q+16.. <-> 16q + 8s + 4..7), its accurate accumulation adding each iteration's sums into
 * the f32 accumulators.
 *
 * Rows that are not 16-byte aligned (ldb * 2 % 16 != 0: each row its own offset) load the two
 * aligned 16-byte blocks under the window and shift it out (hg_window16_extract); the
 * alignment is a generation-time constant (hg_gemm_operand_align: 16 means plain loads).
 * Elements past K are zeroed on both sides before the mma (a NaN in the padding must not
 * reach a sum: NaN x 0 = NaN), and no block is read that holds none of the row's bytes.
 * Rows past N (A's past M) are clamped to the last row: real data whose sums are never
 * stored, so the hot loop has no predicates.
 *
 * A CTA of DEC_WARPS warps holds tile_n rows of N (tile_n / 16 row groups per warp); its warps
 * split the tile's k-range chunk by chunk (warp w takes chunks w, w + W, ...; tile_k / 32
 * chunks a warp in flight per iteration) and sum through shared memory. CTAs split K
 * (config.splits) by atomic adds into the tile's f32 slot (the ,kSa protocol of splitk.c:
 * slot + arrival counter; the last arriver reads the sums, re-zeroes both and runs the
 * epilogue). The epilogue is the GEMM's (hg_epilogue_emit, direct stores): every step the
 * GEMM supports works unchanged. The grid is persistent over (tile, split) units. */
#include <stdlib.h>

#include "hopgen/kernels.h"
#include "kernels/gemm_internal.h"

#define DEC_WARPS 8
#define DEC_THREADS (32 * DEC_WARPS)
#define CHUNK_BYTES 64 /* k per lane load: 16 bytes each of 4 lanes */
#define RED_STRIDE                                                                                 \
  17 /* f32 per n row of a warp's partial tile in shared memory (16 + 1: no                        \
      * bank conflicts when consecutive threads read consecutive rows) */
/* Loads a lane keeps in flight per iteration: row groups x chunks (each 2 x 16 bytes, or
 * 2 x 32 bytes for unaligned rows), as the registers allow beside 2 CTAs an SM */
#define DEC_MAX_LOADS 6
#define DEC_MAX_LOADS_WINDOW 2
#define DEC_MAX_CHUNKS 4 /* chunks a warp per iteration (each its own address arithmetic) */

static hg_val_t i32(hg_builder_t *b, int32_t v) {
  return hg_b_i32(b, v);
}

static bool is8(hg_dtype_t t) {
  return t == HG_E4M3 || t == HG_E5M2;
}

/* The decode kernel's configuration of CTA height tile_n and tile_k of K a warp an
 * iteration: 16 rows of M, no cluster, the plain k-loop (s2: pipelined in registers). */
static hg_gemm_config_t dec_config(int tile_n, int tile_k) {
  return (hg_gemm_config_t){.tile_m = 16,
                            .tile_n = tile_n,
                            .tile_k = tile_k,
                            .cluster_m = 1,
                            .cluster_n = 1,
                            .stages = 1,
                            .schedule = HG_SCHED_COOPERATIVE,
                            .raster = HG_RASTER_M,
                            .raster_group = 8,
                            .mainloop = HG_MAINLOOP_LDG_MMASYNC};
}

/* The operand types the kernel takes: bf16 x bf16, f16 x f16 (mma.sync m16n8k16), or fp8 in
 * any mix (m16n8k32) with per-tensor or row-wise scales (the epilogue applies both). */
static bool types_ok(const hg_gemm_problem_t *p) {
  if (is8(p->a_type) && is8(p->b_type)) return p->scale != HG_SCALE_BLOCK;
  return (p->a_type == HG_BF16 || p->a_type == HG_F16) && p->a_type == p->b_type;
}

bool hg_gemm_decode_shape_ok(const hg_gemm_problem_t *p) {
  return p->m <= 16 && p->b_k_major && p->a_k_major && p->group == HG_GROUP_NONE && p->batch <= 1 &&
         types_ok(p);
}

hg_status_t hg_gemm_decode_check(const hg_gemm_problem_t *p, const hg_gemm_config_t *c) {
  const char *ml = "mainloop ldg-mmasync";
  if (p->m > 16)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "%s streams the weights for decode shapes of M <= 16, and M = %lld; use "
                    "tma-wgmma",
                    ml, (long long)p->m);
  if (!p->b_k_major)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "%s reads each row of B (N x K) along K, and this B is MN-major; use "
                    "tma-wgmma",
                    ml);
  if (!p->a_k_major)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "%s reads each row of A (M x K) along K, and this A is MN-major; use "
                    "tma-wgmma",
                    ml);
  if (p->group != HG_GROUP_NONE)
    return hg_error(HG_ERR_UNSUPPORTED, "%s in a grouped GEMM: it runs tma-wgmma", ml);
  if (p->batch > 1)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "%s with a batch of %d: it computes one matrix; use tma-wgmma", ml, p->batch);
  if (!types_ok(p))
    return hg_error(HG_ERR_UNSUPPORTED,
                    "%s takes bf16 or f16 operands of one type (mma.sync m16n8k16) or fp8 ones "
                    "(m16n8k32) with per-tensor or row-wise scales, not %s x %s%s",
                    ml, hg_dtype_name(p->a_type), hg_dtype_name(p->b_type),
                    p->scale == HG_SCALE_BLOCK ? " with block-wise scales" : "");
  if (c->tile_m != 16)
    return hg_error(HG_ERR_INVALID,
                    "%s: tile M = %d; its tile holds all of M, 16 rows (e.g. 16x32x128)", ml,
                    c->tile_m);
  if (c->tile_n != 16 && c->tile_n != 32 && c->tile_n != 64)
    return hg_error(HG_ERR_INVALID,
                    "%s: tile N = %d rows of the weights per CTA; it takes 16, 32 or 64", ml,
                    c->tile_n);
  const int chunk = CHUNK_BYTES / hg_dtype_bytes(p->b_type);
  const bool window = hg_gemm_operand_align(p, 1) != 16 || hg_gemm_operand_align(p, 0) != 16;
  const int most = window ? DEC_MAX_LOADS_WINDOW : DEC_MAX_LOADS;
  if (c->tile_k < chunk || c->tile_k % chunk || c->tile_k / chunk > DEC_MAX_CHUNKS ||
      (c->tile_k / chunk) * (c->tile_n / 16) > most)
    return hg_error(HG_ERR_INVALID,
                    "%s: tile K = %d is the k a warp loads per iteration, 1..%d whole chunks of "
                    "%d; tile N / 16 x tile K / %d must be at most %d for %s rows (registers)",
                    ml, c->tile_k, DEC_MAX_CHUNKS, chunk, chunk, most,
                    window ? "unaligned" : "16-byte aligned");
  if (c->cluster_m != 1 || c->cluster_n != 1)
    return hg_error(HG_ERR_INVALID,
                    "%s: cluster %dx%d; it reads with ld.global, nothing to multicast: use c1x1",
                    ml, c->cluster_m, c->cluster_n);
  if (c->stream_k)
    return hg_error(HG_ERR_UNSUPPORTED, "%s does not run stream-K (,sk); split K with ,kSa", ml);
  if (c->splits < 0 || c->splits > HG_SCHED_MAX_SPLITS)
    return hg_error(HG_ERR_INVALID, "split-K into %d ranges: 0 or 1 (no split) up to %d", c->splits,
                    HG_SCHED_MAX_SPLITS);
  if (c->splits > 1 && !c->split_atomic)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "%s splits K by atomic adds only (,k%da), not with the reduction pass (,k%d)",
                    ml, c->splits, c->splits);
  if (c->split_atomic && c->splits < 2)
    return hg_error(HG_ERR_INVALID,
                    "split-K by atomic adds without a split (splits = %d): give ,kSa with S of "
                    "2..%d",
                    c->splits, HG_SCHED_MAX_SPLITS);
  if (c->split_atomic && (p->deterministic || p->batch_invariant))
    return hg_error(HG_ERR_INVALID,
                    "%s with split-K by atomic adds (,k%da) for a %s problem: the splits' sums "
                    "are added in the order they finish, so D's bits vary run to run; drop the "
                    "split",
                    ml, c->splits, p->batch_invariant ? "batch-invariant" : "deterministic");
  if (c->promote_overlap || c->block_scales)
    return hg_error(HG_ERR_INVALID,
                    "%s: promotion overlaps (ps, pd, pt) and staged block scales (bs) are fp8 "
                    "options of the wgmma mainloops",
                    ml);
  if (c->gelu < 0 || c->gelu >= HG_GELU_ALG_COUNT || (c->gelu && p->act != HG_ACT_GELU))
    return hg_error(HG_ERR_INVALID,
                    "erf GELU formula %d: 0..%d, and only for an epilogue with the erf GELU",
                    c->gelu, HG_GELU_ALG_COUNT - 1);
  if (c->epi_direct != 0 && c->epi_direct != 1)
    return hg_error(HG_ERR_INVALID, "epi_direct = %d: 0 (off) or 1 (direct stores, ds)",
                    c->epi_direct);
  return hg_ok();
}

hg_status_t hg_gemm_decode_heuristic(const hg_gemm_problem_t *p, int sm_count,
                                     hg_gemm_config_t *out) {
  const bool window = hg_gemm_operand_align(p, 1) != 16 || hg_gemm_operand_align(p, 0) != 16;
  const int chunk = CHUNK_BYTES / hg_dtype_bytes(p->b_type);
  /* 32 rows a CTA: 2 row groups a warp share each A fragment; 3 chunks a warp in flight for
   * aligned rows (48 KB of loads outstanding a CTA, two CTAs an SM: 126 registers), 1 for
   * window rows (twice the registers a chunk; 32 KB a CTA); fp8 2 for aligned rows (its
   * promotion's partial sums beside them). More spilled under the 128 registers of two CTAs an
   * SM (ptxas). */
  const bool fp8 = is8(p->b_type);
  hg_gemm_config_t c = dec_config(32, (window ? 1 : fp8 ? 2 : 3) * chunk);
  if (sm_count <= 0) sm_count = 132;
  if (sm_count > HG_GEMM_MAX_SMS)
    return hg_error(HG_ERR_INVALID, "an SM count of %d: give 1..%d (0 or less: an H100's 132)",
                    sm_count, HG_GEMM_MAX_SMS);
  /* 16-bit operands: 16 rows a CTA (one row group a warp) instead of 32 where that fills 7/8
   * of the SMs or more without splitting K (aligned rows: 4 chunks a warp, the loads in
   * flight of 2 row groups x 2 chunks), and for window rows of a short K (the CTAs' one or
   * two waves end sooner). Same call (bench/RESULTS.md, 2026-11-27 sixth session), ms 16x32
   * -> 16x16: H200 1x2048x7168 0.0120 (k4a) -> 0.0111, 1x4096x4096 0.0128 (k2a) -> 0.0113,
   * 16x3072x3072 0.0107 (k2a) -> 0.0089, window rows 1x12345x678 0.0134 -> 0.0104,
   * 8x12345x678 0.0137 -> 0.0109, 4x3000x700 0.0052 -> 0.0045; H100 1x2048x7168 0.0151 ->
   * 0.0141, 16x3072x3072 0.0122 -> 0.0102, 1x12345x678 0.0138 -> 0.0109, 4x3000x700 0.0076
   * -> 0.0050. Not at K = 1000 (1x5000x1000: level on the H200, 9% slower on the H100), nor
   * 1x7168x2049 (0.0132 -> 0.0173 on the H200: long K), nor aligned rows that fill the GPU
   * at 32 (level at 7168x2048, 10-15% slower at 4x8192x512). */
  /* fp8 the same for aligned rows (4 chunks: 4 loads, its most beside the partial sums).
   * Same call (bench/RESULTS.md, 2026-11-27 seventh session), ms 16x32x128 (split) ->
   * 16x16x256, H100: e4m3 1x4096x4096 0.0102 -> 0.0081, 8x3072x3072 0.0080 -> 0.0067,
   * 1x2048x2048 0.0051 -> 0.0033, 16x4096x14336 0.0270 -> 0.0251, 1x4096x28672 0.0465 ->
   * 0.0443; H200: 1x4096x4096 0.0082 -> 0.0066, 8x3072x3072 0.0071 -> 0.0063, 16x2560x2560
   * 0.0072 -> 0.0064, 16x4096x14336 0.0214 -> 0.0203. fp8 past M = 1 only where the 16-row
   * CTAs make a full wave (tiles16 >= SMs): with one CTA on most SMs and none on the rest
   * (2048 rows: 128 CTAs) the H200 ran 16x2048x7168 0.0084 -> 0.0095 and M = 8 0.0078 ->
   * 0.0082 (H100 0.0098 -> 0.0100, 0.0093 -> 0.0091; M = 1 0.0092 -> 0.0087, H200 level).
   * Both types only where K gives every warp of the CTA a full iteration (DEC_WARPS x 4
   * chunks): at 4096x1024 half the warps of a 16x16x256 CTA idle (M = 16 0.0037 -> 0.0044,
   * H100). */
  /* Weights over HG_DECODE_MAX_WEIGHT_BYTES (here through the rule's long fp8 rows, H200-class
   * memory, dv or a named mainloop) take 16 rows with 4 chunks too: same calls, ms 16x32 ->
   * 16x16, H100 bf16 1x16384x16384 0.2113 -> 0.1876, 1x28672x4096 0.0886 -> 0.0813, e4m3
   * 0.0453 -> 0.0430; H200 bf16 1x16384x16384 0.1422 -> 0.1336, e4m3 1x28672x4096 0.0354 ->
   * 0.0317 (1x4096x28672 bf16 level on both). */
  const int64_t tiles32 = (p->n + 31) / 32, tiles16 = (p->n + 15) / 16;
  const bool big = p->n * p->k * hg_dtype_bytes(p->b_type) > HG_DECODE_MAX_WEIGHT_BYTES;
  if ((!window && p->k >= (int64_t)DEC_WARPS * 4 * chunk &&
       (big || (tiles32 < sm_count && tiles16 * 8 >= (int64_t)sm_count * 7 &&
                (!fp8 || p->m == 1 || tiles16 >= sm_count)))) ||
      (!fp8 && window && p->k <= 768)) {
    c.tile_n = 16;
    c.tile_k = (window ? 1 : 4) * chunk;
  }
  /* Fewer tiles than SMs leave SMs without loads: split K into as many ranges as one wave of
   * two CTAs an SM holds (no second, partial wave), each keeping at least one full iteration
   * of the CTA's warps (DEC_WARPS x tile_k of K); never for a deterministic problem. */
  const int64_t tiles = (p->n + c.tile_n - 1) / c.tile_n;
  const int64_t per_iter = (int64_t)DEC_WARPS * c.tile_k;
  int64_t s = tiles < sm_count && !(c.tile_n == 16 && !window) ? 2 * (int64_t)sm_count / tiles : 1;
  if (s > p->k / per_iter) s = p->k / per_iter;
  if (s > HG_SCHED_MAX_SPLITS) s = HG_SCHED_MAX_SPLITS;
  if (s >= 2 && !p->deterministic && !p->batch_invariant) {
    c.splits = (int)s;
    c.split_atomic = 1;
  }
  HG_TRY(hg_gemm_decode_check(p, &c));
  *out = c;
  return hg_ok();
}

/* The decode kernel's part of the tuner's space (hg_gemm_tune_space puts it first): for each
 * CTA height (16, 32, 64 rows; fp8 16 and 32) the most chunks a warp its registers allow, unsplit
 * and split by atomics into 2, 4 and 8 (each split keeping a full iteration of the CTA's warps;
 * none for a deterministic or batch-invariant problem). Nothing for problems the kernel refuses. */
int hg_gemm_decode_tune_space(const hg_gemm_problem_t *p, hg_gemm_config_t *out, int cap) {
  if (p->batch_invariant || !hg_gemm_decode_shape_ok(p)) return 0;
  const bool window = hg_gemm_operand_align(p, 1) != 16 || hg_gemm_operand_align(p, 0) != 16;
  const int chunk = CHUNK_BYTES / hg_dtype_bytes(p->b_type);
  const int most = window ? DEC_MAX_LOADS_WINDOW : DEC_MAX_LOADS;
  /* fp8: at most 4 loads a warp beside the promotion's partial sums (16x64 with one chunk
   * spilled 40-96 bytes, ptxas) */
  const bool fp8 = is8(p->b_type);
  int n = 0;
  for (int tn = 16; tn <= (fp8 ? 32 : 64); tn *= 2) {
    int chunks = (fp8 && most > 4 ? 4 : most) / (tn / 16);
    if (chunks > DEC_MAX_CHUNKS) chunks = DEC_MAX_CHUNKS;
    if (chunks < 1) continue;
    for (int splits = 1; splits <= 8; splits *= 2) {
      hg_gemm_config_t c = dec_config(tn, chunks * chunk);
      if (splits > 1) {
        if (p->deterministic || p->k / ((int64_t)DEC_WARPS * c.tile_k) < splits) break;
        c.splits = splits;
        c.split_atomic = 1;
      }
      hg_status_t ok = hg_gemm_decode_check(p, &c);
      if (!hg_is_ok(&ok)) continue;
      if (n < cap) out[n] = c;
      n++;
    }
  }
  return n < cap ? n : cap;
}

/* ---------------------------------------------------------------- the kernel */

typedef struct dec {
  hg_builder_t *b;
  const hg_gemm_kernel_t *k;
  gemm_params_t prm;
  hg_epilogue_t epi;
  hg_roles_t r;
  int R, U;            /* row groups of 16 a warp; chunks a warp per iteration */
  bool win_a, win_b;   /* rows not 16-byte aligned: window loads */
  hg_val_t g, q, warp; /* lane / 4, lane % 4, warp */
  hg_val_t brow[4][2]; /* B's rows of the lane (I64 address of its 16 bytes in chunk 0) */
  hg_val_t bsh[4][2];  /* and their offsets in their aligned block (I32), window rows */
  hg_val_t arow[2], ash[2];
  hg_val_t acc[4][2][4]; /* [row group][n8 block][fragment] */
  hg_val_t kbytes;       /* K x element bytes (I32) */
  bool pipe;             /* config stages >= 2: the full iterations pipelined in registers */
} dec_t;

void hg_gemm_decode_frag(int s, int reg, int *half, int *word) {
  /* mma A registers: {row g, k 2q..2q+1}, {row g+8, k 2q..}, {row g, k 2q+8..}, {row g+8,
   * k 2q+8..} (PTX ISA, mma.m16n8k16 fragments); k 2q+j <-> chunk element 8q + 4s + j and
   * k 2q+8+j <-> 8q + 4s + 2 + j */
  *half = reg & 1;
  *word = 2 * s + (reg >> 1);
}

void hg_gemm_decode_lane_row(hg_builder_t *b, hg_val_t row_addr, hg_val_t q, bool win, hg_val_t *at,
                             hg_val_t *sh) {
  hg_val_t a = hg_b_bin(b, HG_ADD, row_addr, hg_b_zext(b, hg_b_bin(b, HG_MUL, q, i32(b, 16))));
  *sh = HG_NONE;
  if (win) {
    *sh = hg_b_bin(b, HG_AND, hg_b_trunc(b, a), i32(b, 15));
    a = hg_b_bin(b, HG_SUB, a, hg_b_zext(b, *sh));
  }
  *at = a;
}

/* A full chunk's words into w (4, or 8 for window rows: the two aligned blocks under the
 * window): the second block holds window bytes whenever sh > 0; with sh = 0 the extract
 * ignores it, so the first is read again rather than a block past the row. */
static void load_raw(hg_builder_t *b, hg_val_t at, hg_val_t sh, bool win, hg_val_t off,
                     hg_val_t w[8]) {
  hg_val_t addr = hg_b_bin(b, HG_ADD, at, off);
  hg_b_load(b, HG_GLOBAL, HG_T_I32, 0, 4, addr, w);
  if (!win) return;
  hg_val_t next =
      hg_b_select(b, hg_b_cmp(b, HG_EQ, sh, i32(b, 0)), hg_b_i64(b, 0), hg_b_i64(b, 16));
  hg_b_load(b, HG_GLOBAL, HG_T_I32, 0, 4, hg_b_bin(b, HG_ADD, addr, next), w + 4);
}

/* The window's 16 bytes out of the words load_raw read. */
static void finish_raw(hg_builder_t *b, const hg_val_t w[8], hg_val_t sh, bool win,
                       hg_val_t out[4]) {
  if (win)
    hg_window16_extract(b, w, sh, out);
  else
    for (int i = 0; i < 4; i++) out[i] = w[i];
}

void hg_gemm_decode_load(hg_builder_t *b, hg_val_t at, hg_val_t sh, bool win, hg_val_t off,
                         hg_val_t left, hg_val_t out[4]) {
  hg_val_t w[8], t[4];
  if (hg_val_is_none(left)) {
    load_raw(b, at, sh, win, off, w);
    finish_raw(b, w, sh, win, out);
    return;
  }
  hg_val_t addr = hg_b_bin(b, HG_ADD, at, off);
  for (int i = 0; i < 8; i++) w[i] = hg_b_var(b, HG_T_I32, i32(b, 0));
  hg_b_if(b, hg_b_cmp(b, HG_GT_S, left, i32(b, 0)));
  hg_b_load(b, HG_GLOBAL, HG_T_I32, 0, 4, addr, t);
  for (int i = 0; i < 4; i++) hg_b_assign(b, w[i], t[i]);
  if (win) {
    hg_b_if(b, hg_b_cmp(b, HG_GT_S, hg_b_bin(b, HG_ADD, left, sh), i32(b, 16)));
    hg_b_load(b, HG_GLOBAL, HG_T_I32, 0, 4, hg_b_bin(b, HG_ADD, addr, hg_b_i64(b, 16)), t);
    for (int i = 0; i < 4; i++) hg_b_assign(b, w[4 + i], t[i]);
    hg_b_endif(b);
  }
  hg_b_endif(b);
  finish_raw(b, w, sh, win, out);
  hg_window16_mask(b, left, out);
}

/* The MMAs of chunks [0, n) whose fragments' words are wb (B's rows: [chunk][row group][row g
 * or g + 8][word]) and wa (A's rows g, g + 8). */
static void mma_chunks(dec_t *x, hg_val_t (*wb)[4][2][4], hg_val_t (*wa)[2][4], int n, bool two) {
  hg_builder_t *b = x->b;
  const hg_gemm_problem_t *p = &x->k->problem;
  /* the weights are the mma's A: B's type first; fp8 takes k32 a step (the same registers) */
  const hg_mma_sync_op_t op = {.m = 16,
                               .n = 8,
                               .k = is8(p->b_type) ? 32 : 16,
                               .a = p->b_type,
                               .b = p->a_type,
                               .acc = HG_F32};
  /* fp8's accurate accumulation: the iteration's sums in fresh accumulators, added into the
   * running f32 ones after it (a promotion every tile K of k, at most 256: the tensor cores'
   * fp8 sums keep fewer bits than f32, as wgmma's) */
  const bool promote = hg_gemm_promote(p) > 0;
  hg_val_t part[4][2][4];
  for (int r = 0; r < x->R && promote; r++)
    for (int j = 0; j < (two ? 2 : 1); j++)
      for (int i = 0; i < 4; i++) part[r][j][i] = hg_b_var(b, HG_T_F32, hg_b_f32(b, 0.0f));
  for (int u = 0; u < n; u++)
    for (int s = 0; s < 2; s++)
      for (int r = 0; r < x->R; r++) {
        hg_val_t fa[4];
        for (int i = 0; i < 4; i++) {
          int h, w;
          hg_gemm_decode_frag(s, i, &h, &w);
          fa[i] = wb[u][r][h][w];
        }
        for (int j = 0; j < (two ? 2 : 1); j++) {
          const hg_val_t fb[2] = {wa[u][j][2 * s], wa[u][j][2 * s + 1]};
          hg_b_mma_sync(b, &op, promote ? part[r][j] : x->acc[r][j], fa, fb);
        }
      }
  for (int r = 0; r < x->R && promote; r++)
    for (int j = 0; j < (two ? 2 : 1); j++)
      for (int i = 0; i < 4; i++)
        hg_b_assign(b, x->acc[r][j][i], hg_b_bin(b, HG_FADD, x->acc[r][j][i], part[r][j][i]));
}

/* The warp's chunk u of the iteration at c0: c0 + u W + warp. */
static hg_val_t chunk_of(dec_t *x, hg_val_t c0, int u) {
  return hg_b_bin(x->b, HG_ADD, c0, hg_b_mad(x->b, i32(x->b, u), i32(x->b, DEC_WARPS), x->warp));
}

/* One iteration's chunks c[0..n) of the warp: every load first, then the MMAs (two n8 blocks
 * when `two`). lim (I32, HG_NONE: none) masks the loads: only the bytes of each row before byte
 * lim (the unit's end: K's or its split's) are read, the rest are zeros. */
static void chunks(dec_t *x, const hg_val_t *c, int n, bool two, hg_val_t lim) {
  const bool tail = !hg_val_is_none(lim);
  hg_builder_t *b = x->b;
  hg_val_t wb[DEC_MAX_LOADS][4][2][4], wa[DEC_MAX_LOADS][2][4];
  for (int u = 0; u < n; u++) {
    hg_val_t off = hg_b_bin(b, HG_MUL, hg_b_sext(b, c[u]), hg_b_i64(b, CHUNK_BYTES));
    hg_val_t left = HG_NONE;
    if (tail)
      left =
          hg_b_bin(b, HG_SUB, lim,
                   hg_b_mad(b, c[u], i32(b, CHUNK_BYTES), hg_b_bin(b, HG_MUL, x->q, i32(b, 16))));
    for (int r = 0; r < x->R; r++)
      for (int h = 0; h < 2; h++)
        hg_gemm_decode_load(b, x->brow[r][h], x->bsh[r][h], x->win_b, off, left, wb[u][r][h]);
    for (int h = 0; h < (two ? 2 : 1); h++)
      hg_gemm_decode_load(b, x->arow[h], x->ash[h], x->win_a, off, left, wa[u][h]);
  }
  mma_chunks(x, wb, wa, n, two);
}

/* Chunk u's words (raw: load_raw's, before the window shift) for the iteration at c0 into the
 * variables vb (B's rows) and va (A's), as the pipelined loop keeps them across iterations. */
static void load_vars(dec_t *x, hg_val_t c0, int u, bool two, hg_val_t (*vb)[4][2][8],
                      hg_val_t (*va)[2][8]) {
  hg_builder_t *b = x->b;
  hg_val_t off = hg_b_bin(b, HG_MUL, hg_b_sext(b, chunk_of(x, c0, u)), hg_b_i64(b, CHUNK_BYTES));
  hg_val_t w[8];
  for (int r = 0; r < x->R; r++)
    for (int h = 0; h < 2; h++) {
      load_raw(b, x->brow[r][h], x->bsh[r][h], x->win_b, off, w);
      for (int i = 0; i < (x->win_b ? 8 : 4); i++) hg_b_assign(b, vb[u][r][h][i], w[i]);
    }
  for (int h = 0; h < (two ? 2 : 1); h++) {
    load_raw(b, x->arow[h], x->ash[h], x->win_a, off, w);
    for (int i = 0; i < (x->win_a ? 8 : 4); i++) hg_b_assign(b, va[u][h][i], w[i]);
  }
}

/* The full iterations pipelined in registers (config stages >= 2): each chunk's words live in
 * variables across the loop; as an iteration's chunk u has had its MMAs, the next iteration's
 * chunk u is loaded into the same variables, so a warp always has about U chunks of loads
 * outstanding instead of none between its MMAs and its next loads. The last iteration loads
 * its own chunks again (a valid address, never past the full chunks), which the loop then
 * leaves unused. Returns the first chunk after the full iterations (I32). */
static hg_val_t pipelined(dec_t *x, hg_val_t begin, hg_val_t full_end, bool two) {
  hg_builder_t *b = x->b;
  const int step = DEC_WARPS * x->U;
  hg_val_t vb[DEC_MAX_LOADS][4][2][8], va[DEC_MAX_LOADS][2][8];
  for (int u = 0; u < x->U; u++) {
    for (int r = 0; r < x->R; r++)
      for (int h = 0; h < 2; h++)
        for (int i = 0; i < 8; i++) vb[u][r][h][i] = hg_b_var(b, HG_T_I32, HG_NONE);
    for (int h = 0; h < 2; h++)
      for (int i = 0; i < 8; i++) va[u][h][i] = hg_b_var(b, HG_T_I32, HG_NONE);
  }
  hg_val_t span = hg_b_bin(b, HG_SUB, full_end, begin);
  hg_val_t iters = hg_b_select(b, hg_b_cmp(b, HG_GT_S, span, i32(b, 0)),
                               hg_b_bin(b, HG_DIV_S, span, i32(b, step)), i32(b, 0));
  hg_b_if(b, hg_b_cmp(b, HG_GT_S, iters, i32(b, 0)));
  {
    for (int u = 0; u < x->U; u++) load_vars(x, begin, u, two, vb, va);
    hg_val_t it = hg_b_for(b, i32(b, 0), iters, i32(b, 1));
    {
      hg_val_t c0 = hg_b_mad(b, it, i32(b, step), begin);
      hg_val_t last = hg_b_cmp(b, HG_GE_S, hg_b_bin(b, HG_ADD, it, i32(b, 1)), iters);
      hg_val_t next = hg_b_select(b, last, c0, hg_b_bin(b, HG_ADD, c0, i32(b, step)));
      hg_val_t wb[DEC_MAX_LOADS][4][2][4], wa[DEC_MAX_LOADS][2][4];
      for (int u = 0; u < x->U; u++) {
        for (int r = 0; r < x->R; r++)
          for (int h = 0; h < 2; h++)
            finish_raw(b, vb[u][r][h], x->bsh[r][h], x->win_b, wb[u][r][h]);
        for (int h = 0; h < (two ? 2 : 1); h++)
          finish_raw(b, va[u][h], x->ash[h], x->win_a, wa[u][h]);
      }
      /* the MMAs chunk by chunk, each followed by its variables' next loads (a promotion
       * group is then one chunk) */
      for (int u = 0; u < x->U; u++) {
        mma_chunks(x, &wb[u], &wa[u], 1, two);
        load_vars(x, next, u, two, vb, va);
      }
    }
    hg_b_endfor(b);
  }
  hg_b_endif(b);
  return hg_b_mad(b, iters, i32(b, step), begin);
}

/* The warp's k-loop over chunks [begin, end) of the unit: whole iterations of DEC_WARPS x U
 * chunks below the full ones (`full`: chunks that end within K), then at most one masked
 * iteration of the same shape (its loads all in flight together, not one chunk at a time:
 * a 2048-long K is 2.7 iterations of 16x32x96), masked at the unit's end so that a chunk of
 * the next split reads nothing. */
static void mainloop(dec_t *x, hg_val_t begin, hg_val_t end, hg_val_t full, bool two) {
  hg_builder_t *b = x->b;
  const int step = DEC_WARPS * x->U;
  hg_val_t full_end = hg_b_bin(b, HG_MIN_S, end, full);
  hg_val_t pos = hg_b_var(b, HG_T_I32, begin);
  if (x->pipe) {
    hg_b_assign(b, pos, pipelined(x, begin, full_end, two));
  } else {
    hg_val_t c0 = hg_b_for(b, begin, hg_b_bin(b, HG_SUB, full_end, i32(b, step - 1)), i32(b, step));
    {
      hg_val_t c[DEC_MAX_LOADS];
      for (int u = 0; u < x->U; u++) c[u] = chunk_of(x, c0, u);
      chunks(x, c, x->U, two, HG_NONE);
      hg_b_assign(b, pos, hg_b_bin(b, HG_ADD, c0, i32(b, step)));
    }
    hg_b_endfor(b);
  }
  hg_val_t lim = hg_b_bin(b, HG_MIN_S, x->kbytes, hg_b_bin(b, HG_MUL, end, i32(b, CHUNK_BYTES)));
  hg_b_if(b, hg_b_cmp(b, HG_LT_S, pos, end));
  {
    hg_val_t c[DEC_MAX_LOADS];
    for (int u = 0; u < x->U; u++) c[u] = chunk_of(x, pos, u);
    chunks(x, c, x->U, two, lim);
  }
  hg_b_endif(b);
}

/* The lane's I64 address of its 16 bytes of `row` (clamped to rows - 1) in chunk 0, and for
 * window rows the offset of that address in its aligned block (the address moved down to it). */
static void row_at(dec_t *x, hg_val_t base, hg_val_t ld, hg_val_t row, hg_val_t rows, bool win,
                   hg_val_t *at, hg_val_t *sh) {
  hg_builder_t *b = x->b;
  const int e = hg_dtype_bytes(x->k->problem.b_type);
  row = hg_b_bin(b, HG_MIN_S, row, hg_b_bin(b, HG_SUB, rows, i32(b, 1)));
  hg_val_t a = hg_b_mad(b, hg_b_bin(b, HG_MUL, hg_b_sext(b, row), ld), hg_b_i64(b, e), base);
  hg_gemm_decode_lane_row(b, a, x->q, win, at, sh);
}

static hg_status_t build(dec_t *x) {
  hg_builder_t *b = x->b;
  const hg_gemm_kernel_t *k = x->k;
  const hg_gemm_config_t *c = &k->config;
  const int S = c->splits > 1 ? c->splits : 1, tn = c->tile_n;
  const int per = 16 * tn / DEC_THREADS; /* sums a thread holds after the CTA's reduction */
  const hg_roles_spec_t rs = {.producers = 0, .consumers = DEC_THREADS / 128};
  HG_TRY(hg_roles_make(b, &rs, &x->r));
  /* two CTAs an SM (128 registers a thread): one CTA's reduction and epilogue overlap the
   * other's loads */
  hg_b_set_min_ctas(b, 2);
  HG_TRY(hg_gemm_params_declare(b, k, &x->prm, &x->epi));
  const uint32_t red = hg_b_smem_reserve(b, DEC_WARPS * tn * RED_STRIDE * 4, 16);
  const uint32_t word = hg_b_smem_reserve(b, 16, 16);
  /* launched as a programmatic dependent: every read of an input after the wait */
  hg_b_griddep_wait(b);
  hg_b_griddep_launch_dependents(b);
  x->warp = x->r.warp;
  x->g = hg_b_bin(b, HG_SHR_U, x->r.lane, i32(b, 2));
  x->q = hg_b_bin(b, HG_AND, x->r.lane, i32(b, 3));
  const gemm_params_t *pm = &x->prm;
  x->kbytes = hg_b_bin(b, HG_MUL, pm->K, i32(b, hg_dtype_bytes(k->problem.b_type)));
  hg_val_t chunk_count = hg_b_bin(
      b, HG_DIV_U, hg_b_bin(b, HG_ADD, x->kbytes, i32(b, CHUNK_BYTES - 1)), i32(b, CHUNK_BYTES));
  hg_val_t full = hg_b_bin(b, HG_DIV_U, x->kbytes, i32(b, CHUNK_BYTES));
  hg_val_t tiles = hg_b_bin(b, HG_DIV_U, hg_b_bin(b, HG_ADD, pm->N, i32(b, tn - 1)), i32(b, tn));
  hg_val_t units = hg_b_bin(b, HG_MUL, tiles, i32(b, S));
  /* the thread's sums after the reduction: column nl of the tile, rows m0 + j x (threads / tn) */
  hg_val_t nl = hg_b_bin(b, HG_REM_U, x->r.tid, i32(b, tn));
  hg_val_t m0 = hg_b_bin(b, HG_DIV_U, x->r.tid, i32(b, tn));
  hg_acc_map_t am = {.rows = 16, .cols = 1, .v = calloc(16, sizeof(int))};
  if (!am.v) return hg_error(HG_ERR_NOMEM, "out of memory for an accumulator map");
  for (int i = 0; i < 16; i++) am.v[i] = -1;
  for (int j = 0; j < per; j++) am.v[j * (DEC_THREADS / tn)] = j;
  hg_val_t sum[4];
  for (int j = 0; j < per; j++) sum[j] = hg_b_var(b, HG_T_F32, HG_NONE);
  for (int r = 0; r < x->R; r++)
    for (int j = 0; j < 2; j++)
      for (int i = 0; i < 4; i++) x->acc[r][j][i] = hg_b_var(b, HG_T_F32, HG_NONE);
  hg_epilogue_begin(b, &x->epi);
  hg_val_t u = hg_b_for(b, hg_b_sreg(b, HG_CTAID_X), units, hg_b_sreg(b, HG_NCTAID_X));
  {
    hg_val_t tile = S > 1 ? hg_b_bin(b, HG_DIV_U, u, i32(b, S)) : u;
    hg_val_t n0 = hg_b_bin(b, HG_MUL, tile, i32(b, tn));
    hg_val_t begin = i32(b, 0), end = chunk_count;
    if (S > 1) {
      /* split s: chunks [s q + min(s, r), + q + (s < r)) of q = C / S, r = C % S */
      hg_val_t s = hg_b_bin(b, HG_REM_U, u, i32(b, S));
      hg_val_t qq = hg_b_bin(b, HG_DIV_U, chunk_count, i32(b, S));
      hg_val_t rr = hg_b_bin(b, HG_REM_U, chunk_count, i32(b, S));
      begin = hg_b_mad(b, s, qq, hg_b_bin(b, HG_MIN_S, s, rr));
      end = hg_b_bin(b, HG_ADD, hg_b_bin(b, HG_ADD, begin, qq),
                     hg_b_select(b, hg_b_cmp(b, HG_LT_S, s, rr), i32(b, 1), i32(b, 0)));
    }
    for (int r = 0; r < x->R; r++)
      for (int h = 0; h < 2; h++)
        row_at(x, pm->b_ptr, pm->ldb,
               hg_b_bin(b, HG_ADD, n0, hg_b_bin(b, HG_ADD, x->g, i32(b, 16 * r + 8 * h))), pm->N,
               x->win_b, &x->brow[r][h], &x->bsh[r][h]);
    for (int h = 0; h < 2; h++)
      row_at(x, pm->a_ptr, pm->lda, hg_b_bin(b, HG_ADD, x->g, i32(b, 8 * h)), pm->M, x->win_a,
             &x->arow[h], &x->ash[h]);
    for (int r = 0; r < x->R; r++)
      for (int j = 0; j < 2; j++)
        for (int i = 0; i < 4; i++) hg_b_assign(b, x->acc[r][j][i], hg_b_f32(b, 0.0f));
    hg_b_comment(b,
                 "decode: the warp's chunks of the unit's k-range, weights straight to registers");
    hg_b_if(b, hg_b_cmp(b, HG_GT_S, pm->M, i32(b, 8)));
    mainloop(x, begin, end, full, true);
    hg_b_else(b);
    mainloop(x, begin, end, full, false);
    hg_b_endif(b);
    /* the warps' partial tiles summed through shared memory: acc[r][j][i] is D^T's (n = 16r
     * + g + 8 (i / 2), m = 8j + 2q + i % 2) */
    hg_val_t wbase = hg_b_smem_addr(b, red);
    for (int r = 0; r < x->R; r++)
      for (int j = 0; j < 2; j++)
        for (int i = 0; i < 4; i++) {
          hg_val_t n = hg_b_bin(b, HG_ADD, x->g, i32(b, 16 * r + 8 * (i / 2)));
          hg_val_t m = hg_b_mad(b, x->q, i32(b, 2), i32(b, 8 * j + i % 2));
          hg_val_t idx = hg_b_mad(b, hg_b_mad(b, x->warp, i32(b, tn), n), i32(b, RED_STRIDE), m);
          hg_b_store(b, HG_SHARED, 0, 1, hg_b_mad(b, idx, i32(b, 4), wbase), &x->acc[r][j][i]);
        }
    hg_b_bar_sync(b, 0, 0);
    for (int j = 0; j < per; j++) {
      hg_val_t m = hg_b_bin(b, HG_ADD, m0, i32(b, j * (DEC_THREADS / tn)));
      hg_val_t at = hg_b_mad(b, hg_b_mad(b, nl, i32(b, RED_STRIDE), m), i32(b, 4), wbase);
      hg_b_assign(b, sum[j], hg_b_f32(b, 0.0f));
      for (int w = 0; w < DEC_WARPS; w++) {
        hg_val_t v;
        hg_b_load(b, HG_SHARED, HG_T_F32, 0, 1,
                  hg_b_bin(b, HG_ADD, at, i32(b, w * tn * RED_STRIDE * 4)), &v);
        hg_b_assign(b, sum[j], hg_b_bin(b, HG_FADD, sum[j], v));
      }
    }
    hg_b_bar_sync(b, 0, 0);
    hg_val_t col0 = hg_b_bin(b, HG_ADD, n0, nl);
    if (S > 1) {
      /* split-K by atomics (splitk.c's protocol, this kernel's slot layout): the thread's
       * sums into the tile's f32 slot, one release and arrival per CTA, the last arriver
       * takes the sums and leaves slot and counter zeroed */
      const int64_t slot_bytes = 16LL * tn * 4;
      hg_val_t region = hg_b_mad(b, hg_b_sext(b, tile),
                                 hg_b_i64(b, slot_bytes + HG_SPLITK_COUNTER_BYTES), pm->workspace);
      hg_val_t at = hg_b_mad(b, hg_b_sext(b, x->r.tid), hg_b_i64(b, 4 * per), region);
      hg_val_t counter = hg_b_bin(b, HG_ADD, region, hg_b_i64(b, slot_bytes));
      hg_b_atomic_add_f32v(b, at, per, sum);
      hg_b_bar_sync(b, 0, 0);
      hg_val_t wd = hg_b_smem_addr(b, word);
      hg_splitk_count_arrival(b, hg_b_cmp(b, HG_EQ, x->r.tid, i32(b, 0)), counter, i32(b, S - 1),
                              wd);
      hg_b_bar_sync(b, 0, 0);
      hg_val_t got;
      hg_b_load(b, HG_SHARED, HG_T_I32, 0, 1, wd, &got);
      /* every thread has read the word before the next unit's thread 0 writes it */
      hg_b_bar_sync(b, 0, 0);
      hg_b_if(b, hg_b_cmp(b, HG_EQ, got, i32(b, S - 1)));
      hg_val_t v[4], zeros[4];
      hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, per, at, v);
      for (int j = 0; j < per; j++) {
        hg_b_assign(b, sum[j], v[j]);
        zeros[j] = hg_b_f32(b, 0.0f);
      }
      hg_b_store(b, HG_GLOBAL, 0, per, at, zeros);
    }
    hg_status_t st =
        hg_epilogue_emit(b, &x->epi, sum, &am, m0, col0, i32(b, 0), n0, i32(b, 0), &x->r);
    if (S > 1) hg_b_endif(b);
    if (!hg_is_ok(&st)) {
      hg_acc_map_free(&am);
      return st;
    }
  }
  hg_b_endfor(b);
  hg_epilogue_drain(b, &x->epi, &x->r);
  hg_acc_map_free(&am);
  return hg_builder_status(b);
}

hg_status_t hg_gemm_decode_build(hg_builder_t *b, hg_gemm_kernel_t *out) {
  const hg_gemm_problem_t *p = &out->problem;
  const int chunk = CHUNK_BYTES / hg_dtype_bytes(p->b_type);
  dec_t x = {.b = b,
             .k = out,
             .R = out->config.tile_n / 16,
             .U = out->config.tile_k / chunk,
             .win_a = hg_gemm_operand_align(p, 0) != 16,
             .win_b = hg_gemm_operand_align(p, 1) != 16,
             .pipe = out->config.stages >= 2};
  out->k.threads = DEC_THREADS;
  out->k.cluster[0] = out->k.cluster[1] = out->k.cluster[2] = 1;
  return build(&x);
}
