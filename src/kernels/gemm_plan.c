/* GEMM planning (host side, pure): which path each operand takes, the TMA plans of A, B and
 * the epilogue's D sub-tile, the cp.async copies of operands TMA cannot address, and the
 * library's one step from a problem to a kernel (hg_gemm_build). gemm_gen.c turns a plan
 * into a kernel with the builders. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hopgen/kernels.h"
#include "kernels/gemm_internal.h"

static const char *const mainloop_names[HG_MAINLOOP_COUNT] = {
    [HG_MAINLOOP_AUTO] = "auto",
    [HG_MAINLOOP_TMA_WGMMA] = "tma-wgmma",
    [HG_MAINLOOP_CPASYNC_WGMMA] = "cpasync-wgmma",
    [HG_MAINLOOP_TMA_MMASYNC] = "tma-mmasync",
    [HG_MAINLOOP_TMA_LDMATRIX_WGMMA_RS] = "tma-ldmatrix-wgmma-rs",
    [HG_MAINLOOP_LDG_MMASYNC] = "ldg-mmasync",
};

const char *hg_gemm_mainloop_name(hg_gemm_mainloop_t m) {
  return (int)m >= 0 && m < HG_MAINLOOP_COUNT ? mainloop_names[m] : "?";
}

const char *hg_gemm_store_name(const hg_gemm_kernel_t *k) {
  static const char *const names[3][4] = {
      {"direct-store", "direct-store, aux direct", "direct-store, aux staged",
       "direct-store, aux by TMA"},
      {"staged-store", "staged-store, aux direct", "staged-store, aux staged",
       "staged-store, aux by TMA"},
      {"TMA-store", "TMA-store, aux direct", "TMA-store, aux staged", "TMA-store, aux by TMA"}};
  if (!k) return "?";
  const int d = k->tma_store ? 2 : k->staged_store ? 1 : 0;
  const int a = !k->problem.aux ? 0 : k->aux_tma ? 3 : k->aux_staged ? 2 : 1;
  return names[d][a];
}

hg_status_t hg_gemm_mainloop_parse(const char *name, hg_gemm_mainloop_t *out) {
  for (int i = 0; i < HG_MAINLOOP_COUNT; i++)
    if (name && !strcmp(name, mainloop_names[i])) {
      *out = (hg_gemm_mainloop_t)i;
      return hg_ok();
    }
  return hg_error(HG_ERR_PARSE,
                  "mainloop '%s' is not one of auto, tma-wgmma, cpasync-wgmma, tma-mmasync, "
                  "tma-ldmatrix-wgmma-rs, ldg-mmasync",
                  name ? name : "(null)");
}

static int64_t gcd64(int64_t a, int64_t b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b) {
    const int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

int hg_gemm_operand_align(const hg_gemm_problem_t *p, int operand) {
  const bool a = operand == 0;
  const int e = hg_dtype_bytes(a ? p->a_type : p->b_type);
  const int64_t ld = a ? p->lda : p->ldb, bs = a ? p->batch_stride_a : p->batch_stride_b;
  const int base = a ? p->a_align : p->b_align;
  /* Only the byte counts modulo 16 matter (g divides 16): reduce before multiplying, so that
   * a stride near INT64_MAX elements cannot overflow in bytes. */
  int64_t g = gcd64(16, (int64_t)((uint64_t)ld % 16) * e);
  if (p->batch > 1) g = gcd64(g, (int64_t)((uint64_t)bs % 16) * e);
  if (base > 0) g = gcd64(g, base);
  return (int)g;
}

/* Measured on an H100 (bench/RESULTS.md, eleventh session; the sets with every operand map at
 * 128 B against 256 B, the plan's default): 128 B was 2-3% faster on the splitk sets
 * (128x128x32768 and 192x320x40000 5-8%), 8% on the waves set in bf16 (3300^3, 2500x3500x1000,
 * 1536x6000x900 10-12%) and 5% in fp8, 1001x999x4097 13%, and level on the large llm shapes;
 * it was 2-7% slower where a weight streams through once (decode Mx28672x4096,
 * 128x24576x1536, 128x7168x2048, 64x1024x65536), which keep 256 B: the promotion then
 * fetches the next k-block's half line ahead of its load. Two runs on each card (H100, H200)
 * agree. */
int hg_gemm_operand_l2_promotion(const hg_gemm_problem_t *p, const hg_gemm_config_t *c,
                                 int operand) {
  if (p->group != HG_GROUP_NONE) return 3;
  /* a unit's K of 8192 or more (the large llm shapes): 128 B measured 1-3% slower on both
   * cards (4096x7168x16384 e4m3 0.97-0.99 in three runs), 256 B kept */
  const int64_t unit_k = c->splits > 1 ? (p->k + c->splits - 1) / c->splits : p->k;
  if (unit_k >= HG_GEMM_L2_128B_MAX_K) return 3;
  const bool a = operand == 0;
  /* the tiles along the other extent that read this operand's bytes: one cluster's
   * multicast counts once */
  const int64_t other = a ? p->n : p->m;
  const int64_t span = a ? (int64_t)c->tile_n * c->cluster_n : (int64_t)c->tile_m * c->cluster_m;
  return span > 0 && other > span ? 2 : 3;
}

hg_gemm_mainloop_t hg_gemm_mainloop_resolve(const hg_gemm_problem_t *p, hg_gemm_mainloop_t m) {
  if (m != HG_MAINLOOP_AUTO) return m;
  return hg_gemm_operand_align(p, 0) == 16 && hg_gemm_operand_align(p, 1) == 16
             ? HG_MAINLOOP_TMA_WGMMA
             : HG_MAINLOOP_CPASYNC_WGMMA;
}

/* "hg_gemm_bf16_bf16_tn_128x256x64_c2x1_s4_coop" and a mainloop suffix. */
void hg_gemm_kernel_name(const hg_gemm_kernel_t *k, char *buf, size_t size) {
  const hg_gemm_problem_t *p = &k->problem;
  const hg_gemm_config_t *c = &k->config;
  const hg_gemm_mainloop_t ml = c->mainloop;
  const char *mma = ml == HG_MAINLOOP_TMA_MMASYNC             ? "_ms"
                    : ml == HG_MAINLOOP_TMA_LDMATRIX_WGMMA_RS ? "_rs"
                    : ml == HG_MAINLOOP_LDG_MMASYNC           ? "_ldg"
                                                              : "";
  /* Operands through cp.async, with their chunk bytes: _cpa16, _cpb2, _cpa8b8. */
  char cp[24] = "";
  if (ml == HG_MAINLOOP_LDG_MMASYNC) /* the rows' alignments the loads are specialized on */
    snprintf(cp, sizeof cp, "_a%db%d", k->a_vec, k->b_vec);
  else if (!k->a_tma && !k->b_tma)
    snprintf(cp, sizeof cp, "_cpa%db%d", k->a_vec, k->b_vec);
  else if (!k->a_tma || !k->b_tma)
    snprintf(cp, sizeof cp, "_cp%c%d", !k->a_tma ? 'a' : 'b', !k->a_tma ? k->a_vec : k->b_vec);
  char split[160] = "";
  if (c->splits > 1)
    snprintf(split, sizeof split, "_k%d%s", c->splits,
             c->split_atomic    ? "a"
             : c->split_scatter ? "r"
                                : "");
  if (c->stream_k) snprintf(split, sizeof split, "_sk");
  if (p->rowscale || p->colscale)
    snprintf(split + strlen(split), sizeof split - strlen(split), "_%s%s", p->rowscale ? "rs" : "",
             p->colscale ? "cs" : "");
  if (p->bias != HG_BIAS_NONE)
    snprintf(split + strlen(split), sizeof split - strlen(split), "_bias%c%s",
             p->bias == HG_BIAS_N ? 'n' : 'm', hg_dtype_name(p->bias_type));
  /* the activation; a clamp's bounds are constants of the code: their bits name it */
  if (p->act != HG_ACT_NONE) {
    const size_t at = strlen(split);
    if (p->act == HG_ACT_CLAMP) {
      uint32_t lo, hi;
      memcpy(&lo, &p->act_lo, 4);
      memcpy(&hi, &p->act_hi, 4);
      snprintf(split + at, sizeof split - at, "_clamp%08x%08x", lo, hi);
    } else {
      snprintf(split + at, sizeof split - at, "_%s", hg_gemm_act_name(p->act));
    }
    /* the erf GELU's formula when not the default */
    if (p->act == HG_ACT_GELU && c->gelu != HG_GELU_POLY7)
      snprintf(split + strlen(split), sizeof split - strlen(split), "_%s",
               hg_gelu_alg_name((hg_gelu_alg_t)c->gelu));
  }
  if (p->residual) snprintf(split + strlen(split), sizeof split - strlen(split), "_res");
  /* grouped: the layout and the group count (the size of its shared-memory tables) */
  if (p->group != HG_GROUP_NONE)
    snprintf(split + strlen(split), sizeof split - strlen(split), "_g%c%d",
             p->group == HG_GROUP_CONTIGUOUS ? 'c' : 'm', p->batch);
  /* C's type when it is not D's (an fp8 D's default bf16 included), the aux output, the amax */
  if (p->c_type != p->d_type && p->c_type != (hg_dtype_t)0)
    snprintf(split + strlen(split), sizeof split - strlen(split), "_c%s", hg_dtype_name(p->c_type));
  if (p->aux)
    snprintf(split + strlen(split), sizeof split - strlen(split), "_aux%s",
             hg_dtype_name(p->aux_type));
  if (p->amax) snprintf(split + strlen(split), sizeof split - strlen(split), "_amax");
  if (c->epi_direct) snprintf(split + strlen(split), sizeof split - strlen(split), "_ds");
  /* A and B swapped: D stored transposed */
  if (c->swap_ab) snprintf(split + strlen(split), sizeof split - strlen(split), "_sw");
  /* fp8: the accumulation, and the k-blocks per promotion */
  if (hg_dtype_bits(p->a_type) == 8) {
    if (p->scale != HG_SCALE_TENSOR)
      snprintf(split + strlen(split), sizeof split - strlen(split), "_s%s",
               p->scale == HG_SCALE_ROW ? "row" : "blk");
    if (p->scale == HG_SCALE_BLOCK)
      ;
    else if (hg_gemm_promote(p))
      snprintf(split + strlen(split), sizeof split - strlen(split), "_p%d", hg_gemm_promote(p));
    else
      snprintf(split + strlen(split), sizeof split - strlen(split), "_fast");
    /* the promotions' overlap: staggered consumers, two partial sets */
    const int ov = c->promote_overlap & ~HG_PROMOTE_AHEAD;
    if (ov)
      snprintf(split + strlen(split), sizeof split - strlen(split), "_%s",
               ov == HG_PROMOTE_STAGGER  ? "ps"
               : ov == HG_PROMOTE_DOUBLE ? "pd"
                                         : "pt");
    /* the next unit's first k-block issued before the epilogue */
    if (c->promote_overlap & HG_PROMOTE_AHEAD)
      snprintf(split + strlen(split), sizeof split - strlen(split), "_pa");
    /* block-wise scales staged in shared memory by the producer (by TMA: _bst) */
    if (c->block_scales == HG_BLOCK_SCALES_SMEM)
      snprintf(split + strlen(split), sizeof split - strlen(split), "_bs%s",
               k->scales_tma ? "t" : "");
  }
  snprintf(buf, size, "hg_gemm_%s%s_%s_%c%c_%dx%dx%d_c%dx%d_s%d_%s%s%s%s", hg_dtype_name(p->a_type),
           p->a_type == p->b_type ? "" : hg_dtype_name(p->b_type), hg_dtype_name(p->d_type),
           p->a_k_major ? 't' : 'n', p->b_k_major ? 'n' : 't', c->tile_m, c->tile_n, c->tile_k,
           c->cluster_m, c->cluster_n, c->stages, c->schedule == HG_SCHED_PINGPONG ? "pp" : "coop",
           mma, cp, split);
}

hg_sched_spec_t hg_gemm_sched_spec(const hg_gemm_config_t *c) {
  return (hg_sched_spec_t){.kind = HG_SCHED_PERSISTENT,
                           .tile_m = c->tile_m,
                           .tile_n = c->tile_n,
                           .cluster_m = c->cluster_m,
                           .cluster_n = c->cluster_n,
                           .raster = c->raster,
                           .raster_group = c->raster_group,
                           .splits = c->splits > 1 ? c->splits : 0,
                           .stream_k = c->stream_k != 0};
}

hg_mma_kind_t hg_gemm_mma_kind(hg_gemm_mainloop_t m) {
  return m == HG_MAINLOOP_TMA_MMASYNC             ? HG_MMA_SYNC
         : m == HG_MAINLOOP_TMA_LDMATRIX_WGMMA_RS ? HG_MMA_WGMMA_RS
                                                  : HG_MMA_WGMMA_SS;
}

/* The operand tensors as TMA sees them, modes (MN, K, batch). A batch of one still gets a
 * third mode (TMA then reads only index 0) whose stride must be TMA-legal. */
static void operand_tensor(hg_dtype_t t, bool k_major, int64_t mn, int64_t k, int64_t ld, int batch,
                           int64_t batch_stride, hg_tma_tensor_t *out) {
  memset(out, 0, sizeof *out);
  out->dtype = t;
  out->rank = 3;
  out->shape[0] = mn;
  out->shape[1] = k;
  out->shape[2] = batch;
  out->stride[0] = k_major ? ld : 1;
  out->stride[1] = k_major ? 1 : ld;
  const int64_t q = 16 / hg_dtype_bytes(t);
  out->stride[2] = batch > 1 ? batch_stride : ((ld * (k_major ? mn : k) + q - 1) / q) * q;
  out->base_align_bytes = 16;
}

/* The composed layout `l` with a third mode of one element, for the (MN, K, batch) tensor. */
static hg_status_t with_batch_mode(const hg_composed_t *l, hg_composed_t *out) {
  *out = *l;
  hg_layout_t one = hg_layout_1d(1, 0);
  return hg_layout_append(&l->layout, &one, &out->layout);
}

/* The epilogue's shared-memory sub-tile: 64 rows x epi_n columns of D, row-major, rows of
 * the swizzle span so that stmatrix's eight rows land in eight different 16-byte chunks. */
static hg_status_t epilogue_layout(int esize, int epi_n, hg_composed_t *out) {
  const int row_bytes = epi_n * esize;
  const int b = row_bytes == 128 ? 3 : row_bytes == 64 ? 2 : row_bytes == 32 ? 1 : 0;
  int lg = 0;
  while ((1 << lg) < esize) lg++;
  hg_swizzle_t sw;
  HG_TRY(hg_swizzle_make(b, 4 - lg, 3, &sw));
  const int64_t sh[3] = {64, epi_n, 1}, st[3] = {epi_n, 1, 0};
  hg_tuple_t shape, stride;
  HG_TRY(hg_tuple_ints(&shape, 3, sh));
  HG_TRY(hg_tuple_ints(&stride, 3, st));
  out->sw = sw;
  out->offset = 0;
  return hg_make_layout(&shape, &stride, &out->layout);
}

/* Whether aux (p->aux) fits D's sub-tile buffers of epi_n columns, in pieces of k->aux_n
 * columns (set, with their swizzle k->aux_sw): a piece holds at most D's sub-tile's bytes, its
 * width divides epi_n and suits the buffer writes (16 columns for 16-bit aux: stmatrix; 8
 * for f32), its rows are whole 16-byte units (TMA) and, swizzled, exactly one span. */
static bool aux_pieces(const hg_gemm_problem_t *p, int epi_n, hg_gemm_kernel_t *k) {
  if (!p->aux || epi_n <= 0) return false;
  const int ed = hg_dtype_bytes(p->d_type), ex = hg_dtype_bytes(p->aux_type);
  const int w = ex <= ed ? epi_n : epi_n * ed / ex;
  if (w < 8 || epi_n % w || w % (ex == 2 ? 16 : 8) || (w * ex) % 16) return false;
  hg_composed_t sa;
  hg_status_t s = epilogue_layout(ex, w, &sa);
  if (!hg_is_ok(&s)) return false;
  /* unswizzled rows (not 32/64/128 bytes) only when D's are unswizzled too: one piece */
  const int rb = w * ex;
  if (rb != 32 && rb != 64 && rb != 128 && w != epi_n) return false;
  k->aux_n = w;
  k->aux_sw = sa.sw;
  return true;
}

/* Window copies (rows only 2- or 1-byte aligned, copy_cpasync.c): chunks a producer thread
 * loads before it stores them, 8 registers each, as gemm_gen.c's producer budget allows (56
 * registers beside two consumer warpgroups, 112 beside one): the more in flight, the closer
 * the copy gets to the memory's bandwidth. */
#define WINDOW_BATCH_2WG 2
#define WINDOW_BATCH_1WG 8

/* One operand's path: a TMA plan (multicast across `share` CTAs) or a cp.async copy into
 * the same stage layout. */
static hg_status_t plan_operand(const gemm_plan_t *g, int operand, hg_gemm_kernel_t *k,
                                hg_cp_async_copy_t *cp) {
  const hg_gemm_problem_t *p = &k->problem;
  const bool a = operand == 0;
  const hg_gmma_operand_t *op = a ? &g->mma.tm.a_op : &g->mma.tm.b_op;
  const bool kmaj = a ? p->a_k_major : p->b_k_major;
  const hg_dtype_t t = a ? p->a_type : p->b_type;
  const char *what = a ? "A" : "B";
  if (a ? k->a_tma : k->b_tma) {
    hg_tma_tensor_t ten;
    /* a contiguous grouped A is one matrix of every group's rows */
    const int batch = a && p->group == HG_GROUP_CONTIGUOUS ? 1 : p->batch;
    operand_tensor(t, kmaj, a ? p->m : p->n, p->k, a ? p->lda : p->ldb, batch,
                   a ? p->batch_stride_a : p->batch_stride_b, &ten);
    hg_composed_t s;
    HG_TRY(with_batch_mode(&op->layout, &s));
    hg_tma_options_t o = hg_tma_options_default(HG_TMA_LOAD);
    o.cluster = a ? k->config.cluster_n : k->config.cluster_m;
    return hg_status_wrap(hg_tma_plan_make(&ten, &s, &o, a ? &k->plan_a : &k->plan_b),
                          "loading %s: ", what);
  }
  hg_cp_async_spec_t cs = {.dtype = t,
                           .rows = kmaj ? op->mn : op->k,
                           .cols = kmaj ? op->k : op->mn,
                           .smem = op->layout,
                           .transposed = !kmaj,
                           .vec_bytes = a ? k->a_vec : k->b_vec,
                           .threads = 128,
                           .batch = g->consumers == 1 ? WINDOW_BATCH_1WG : WINDOW_BATCH_2WG,
                           .staged = true};
  return hg_status_wrap(hg_cp_async_copy_make(&cs, cp), "copying %s with cp.async: ", what);
}

/* fp8 block scales staged in shared memory come by TMA where both tables' rows start on 16-byte
 * boundaries (leading dimensions multiples of 4): A's as (M, ceil(K / 128)) in boxes of the
 * tile's rows, B's as (ceil(K / 128), ceil(N / 128)) in boxes of 4 k-blocks (16 bytes, TMA's
 * least) by one block row, or two for a tile spanning two blocks. A grouped GEMM's tables
 * take the group as a third dimension (B's, and a masked GEMM's A's: one table per group);
 * a contiguous GEMM's A table covers every group's rows, in boxes of 4 rows more (units
 * start on any row: hg_block_scales_t.a_pad), so not for tiles of over 252 rows (TMA's box
 * holds 256). Else the side warp's cp.async copies them (kernels.h, scales_tma). p
 * normalised. */
static hg_status_t scales_plan(const hg_gemm_problem_t *p, const hg_gemm_config_t *c,
                               hg_gemm_kernel_t *k) {
  const int a_rows = hg_block_scales_a_rows(c->tile_m, p->group == HG_GROUP_CONTIGUOUS);
  if (p->scale != HG_SCALE_BLOCK || c->block_scales != HG_BLOCK_SCALES_SMEM ||
      p->scale_lda % 4 != 0 || p->scale_ldb % 4 != 0 || a_rows > 256)
    return hg_ok();
  const uint64_t kb = (uint64_t)(p->k + 127) / 128, nb = (uint64_t)(p->n + 127) / 128;
  const bool grouped = p->group != HG_GROUP_NONE, masked = p->group == HG_GROUP_MASKED;
  const uint64_t groups = (uint64_t)p->batch, lda = (uint64_t)p->scale_lda,
                 ldb = (uint64_t)p->scale_ldb;
  hg_tensormap_params_t *a = &k->map_scale_a, *b = &k->map_scale_b;
  *a = (hg_tensormap_params_t){.dtype = HG_F32,
                               .rank = masked ? 3 : 2,
                               .global_dim = {(uint64_t)p->m, kb, groups},
                               .global_stride_bytes = {4 * lda, 4 * kb * lda},
                               .box_dim = {(uint32_t)a_rows, 1, 1},
                               .element_strides = {1, 1, 1},
                               .swizzle = HG_SWIZZLE_NONE,
                               .l2_promotion = 2};
  *b = (hg_tensormap_params_t){.dtype = HG_F32,
                               .rank = grouped ? 3 : 2,
                               .global_dim = {kb, nb, groups},
                               .global_stride_bytes = {4 * ldb, 4 * nb * ldb},
                               .box_dim = {4, (uint32_t)hg_block_scales_b_rows(c->tile_n), 1},
                               .element_strides = {1, 1, 1},
                               .swizzle = HG_SWIZZLE_NONE,
                               .l2_promotion = 2};
  HG_TRY(hg_status_wrap(hg_tensormap_validate(a, 0), "A's block scales by TMA: "));
  HG_TRY(hg_status_wrap(hg_tensormap_validate(b, 0), "B's block scales by TMA: "));
  k->scales_tma = true;
  return hg_ok();
}

hg_status_t hg_gemm_plan_make(const hg_gemm_problem_t *p_in, const hg_gemm_config_t *c,
                              hg_gemm_kernel_t *k, gemm_plan_t *g) {
  memset(k, 0, sizeof *k);
  memset(g, 0, sizeof *g);
  hg_gemm_problem_t p = *p_in;
  HG_TRY(hg_gemm_problem_normalize(&p));
  k->config = *c;
  k->config.mainloop = hg_gemm_mainloop_resolve(&p, c->mainloop);
  HG_TRY(hg_gemm_config_check(&p, &k->config));
  /* A and B swapped: from here on the problem is the kernel's (M the caller's N; the
   * mainloop's resolution reads both operands' alignments alike, so it stands) */
  if (c->swap_ab) {
    p = hg_gemm_problem_swapped(&p);
    k->swapped = true;
  }
  k->problem = p;
  const hg_gemm_mainloop_t ml = k->config.mainloop;
  const int va = hg_gemm_operand_align(&p, 0), vb = hg_gemm_operand_align(&p, 1);
  if (ml == HG_MAINLOOP_LDG_MMASYNC) {
    /* the decode kernel (gemm_decode.c): both operands by ld.global, D stored directly */
    k->a_vec = va;
    k->b_vec = vb;
    return hg_ok();
  }
  /* An operand goes through TMA when TMA can address it, else through cp.async, whatever
   * the MMA: the operand path and the MMA kind are independent. cpasync-wgmma asked for by
   * name takes both operands through cp.async. */
  const bool all_cp = ml == HG_MAINLOOP_CPASYNC_WGMMA && c->mainloop == HG_MAINLOOP_CPASYNC_WGMMA;
  k->a_tma = !all_cp && va == 16;
  k->b_tma = !all_cp && vb == 16;
  /* cp.async moves 4, 8 or 16 aligned bytes; below 4, one element at a time (an fp8 operand
   * of 2-byte aligned rows is copied byte by byte). */
  k->a_vec = va >= 4 ? va : hg_dtype_bytes(p.a_type);
  k->b_vec = vb >= 4 ? vb : hg_dtype_bytes(p.b_type);
  HG_TRY(scales_plan(&p, &k->config, k));
  g->pingpong = c->schedule == HG_SCHED_PINGPONG;
  g->consumers = g->pingpong ? 2 : (c->tile_m >= 128 ? 2 : 1);
  hg_tiled_mma_spec_t ms = {.a = p.a_type,
                            .b = p.b_type,
                            .acc = HG_F32,
                            .tile_m = c->tile_m,
                            .tile_n = c->tile_n,
                            .tile_k = c->tile_k,
                            .wg_m = g->pingpong ? 1 : g->consumers,
                            .wg_n = 1,
                            .a_major = p.a_k_major ? HG_MAJOR_K : HG_MAJOR_MN,
                            .b_major = p.b_k_major ? HG_MAJOR_K : HG_MAJOR_MN,
                            .auto_swizzle = true};
  HG_TRY(hg_status_wrap(hg_mma_builder_make(hg_gemm_mma_kind(ml), &ms, &g->mma),
                        "GEMM tile %dx%dx%d (%s): ", c->tile_m, c->tile_n, c->tile_k,
                        hg_gemm_mainloop_name(ml)));
  HG_TRY(plan_operand(g, 0, k, &g->cp_a));
  HG_TRY(plan_operand(g, 1, k, &g->cp_b));

  /* The epilogue goes through TMA when D allows it (leading dimension and batch stride
   * multiples of 16 bytes, 16-byte aligned base) and the tile splits into sub-tiles, and
   * rows of N end on a 16-byte boundary: a TMA store clips dimension 0 at 16-byte
   * granularity, so a tile past N would also write D's row padding up to the boundary (seen
   * on an H200; docs/hardware-notes.md). */
  const int ed = hg_dtype_bytes(p.d_type);
  g->epi_n = hg_gemm_epi_n(&p, c);
  /* A grouped GEMM stores with TMA only the tiles whose rows all lie in their group (the
   * generator decides per tile); a box of a group's last, partial tile would write the next
   * group's rows (or a masked group's rows past its count), so those go element by element.
   * Its D is one matrix (contiguous) or a batch per group (masked). */
  const int d_batch = p.group == HG_GROUP_CONTIGUOUS ? 1 : p.batch;
  const bool d_ok = !p.d_no_tma && (p.ldd * ed) % 16 == 0 && (p.n * ed) % 16 == 0 &&
                    (d_batch == 1 || (p.batch_stride_d * ed) % 16 == 0);
  /* transposed stores (A and B swapped) go element by element */
  k->tma_store = d_ok && g->epi_n > 0 && !k->swapped;
  if (k->tma_store) {
    hg_tma_tensor_t td;
    memset(&td, 0, sizeof td);
    td.dtype = p.d_type;
    td.rank = 3;
    td.shape[0] = p.m;
    td.shape[1] = p.n;
    td.shape[2] = d_batch;
    td.stride[0] = p.ldd;
    td.stride[1] = 1;
    const int64_t q = 16 / ed;
    td.stride[2] = d_batch > 1 ? p.batch_stride_d : ((p.ldd * p.m + q - 1) / q) * q;
    td.base_align_bytes = 16;
    hg_composed_t se;
    HG_TRY(epilogue_layout(ed, g->epi_n, &se));
    hg_tma_options_t od = hg_tma_options_default(HG_TMA_STORE);
    HG_TRY(hg_status_wrap(hg_tma_plan_make(&td, &se, &od, &k->plan_d), "storing D: "));
    g->epi_buffers = hg_gemm_epi_buffers(&p, c);
    g->epi_bytes = (k->plan_d.smem_bytes + 1023) / 1024 * 1024;
    g->epi_sw = se.sw;
    /* aux through the same buffers (no more shared memory), in pieces that fit them: with
     * TMA where its rows allow, as D's */
    const bool ax = aux_pieces(&p, g->epi_n, k);
    if (ax && p.group == HG_GROUP_NONE && (c->splits <= 1 || c->split_atomic) && !c->epi_direct) {
      const int ex = hg_dtype_bytes(p.aux_type);
      /* rows of N ending on a 16-byte boundary, as D's (a smaller element than D's may not) */
      k->aux_tma = (p.ldaux * ex) % 16 == 0 && (p.n * ex) % 16 == 0 &&
                   (p.batch == 1 || (p.batch_stride_aux * ex) % 16 == 0);
      k->aux_staged = !k->aux_tma;
    }
    if (k->aux_tma) {
      hg_composed_t sa;
      HG_TRY(epilogue_layout(hg_dtype_bytes(p.aux_type), k->aux_n, &sa));
      const int64_t qa = 16 / hg_dtype_bytes(p.aux_type);
      td.dtype = p.aux_type;
      td.stride[0] = p.ldaux;
      td.stride[2] = p.batch > 1 ? p.batch_stride_aux : ((p.ldaux * p.m + qa - 1) / qa) * qa;
      HG_TRY(hg_status_wrap(hg_tma_plan_make(&td, &sa, &od, &k->plan_aux), "storing aux: "));
    }
  } else if (g->epi_n > 0 && p.group == HG_GROUP_NONE && (c->splits <= 1 || c->split_atomic) &&
             !c->epi_direct && !k->swapped) {
    /* rows TMA cannot store: staged through the same buffers (the shared memory counted for
     * them either way, gemm_config.c), then copied out row by row */
    hg_composed_t se;
    HG_TRY(epilogue_layout(ed, g->epi_n, &se));
    k->staged_store = true;
    k->aux_staged = aux_pieces(&p, g->epi_n, k);
    g->epi_sw = se.sw;
    g->epi_buffers = hg_gemm_epi_buffers(&p, c);
    g->epi_bytes = (uint32_t)((64 * g->epi_n * ed + 1023) / 1024 * 1024);
  }
  return hg_ok();
}

/* AUTO's rule for an operand TMA cannot address (kernels.h): in place when the GEMM reads the
 * operand about once, so that a repack (read and write it, then the GEMM reads the copy)
 * would triple its traffic and add a launch: B when M, the other dimension, fits one tile of
 * INPLACE_MAX_OTHER rows or fewer (decode against a weight whose rows TMA cannot address), A
 * when N does. Everywhere else the repack: since the repack kernel streams near the copy
 * bandwidth (repack.c), it costs a few microseconds per 16 MB, and the packed operand then
 * goes through TMA with multicast, which an in-place loader does not match (bench/RESULTS.md,
 * "Operands TMA cannot address": in place 9-31 TFLOP/s with element copies, 99-135 with
 * 4-byte cp.async, against 180-313 repacked at 4096-8192). A grouped problem is always
 * repacked (its groups' rows are read through TMA). The basis of the threshold is the
 * measured decode case (1x12345x678: in place 0.7 TFLOP/s, repacked 0.1 with the old
 * repack); retune INPLACE_MAX_OTHER from `hopgen bench gemm --set odd --compare-repack`
 * and `--set unaligned` (scripts/gemm-unaligned.sh bench). */
#define INPLACE_MAX_OTHER 64

bool hg_gemm_repack_rule(const hg_gemm_problem_t *p, int operand) {
  if (!p || (operand != 0 && operand != 1) || hg_gemm_operand_align(p, operand) == 16) return false;
  if (p->group != HG_GROUP_NONE) return true;
  const int64_t other = operand == 0 ? p->n : p->m;
  return other > INPLACE_MAX_OTHER;
}

/* Rows TMA cannot address in a decode problem go to the decode kernel, which streams them
 * from global memory whatever their alignment: H100, same process (bench/RESULTS.md,
 * 2026-11-27 third session), bf16 1x12345x678 0.96x cuBLASLt (0.44x in place through wgmma),
 * 1x7168x2049 1.14x (0.38-0.43x), 16x7168x2049 2.2x; e4m3 1.2-1.9x faster than in place
 * (1x7168x2049 0.0186 -> 0.0101 ms, 16x7168x2049 0.0208 -> 0.0112).
 * Aligned weights of up to 64 MB take it too: fp8 up to M = 16 (e4m3 7168x2048 and 2048x7168,
 * M = 1, 8: 1.45-1.54x cuBLASLt against TMA's 1.11-1.18x, H100); 16-bit up to M = 8, where
 * the decode kernel was level with TMA or faster (same call, bench/RESULTS.md 2026-11-27
 * sixth session, ms TMA -> decode kernel: H200 1x7168x2048 0.0126 -> 0.0106, 8x7168x2048
 * 0.0119 -> 0.0108, 1x2048x7168 0.0127 -> 0.0120; H100 1x2048x7168 0.0149 -> 0.0135,
 * 8x7168x2048 level), but not at M = 16 (16x7168x2048: 0.0131 -> 0.0139 on the H100, level on
 * the H200). Larger weights stay on TMA, which streamed 235 MB bf16 ones at 0.95-0.99 of the
 * copy against the decode kernel's 0.78-0.90 (H100, 32-row CTAs) and ran 1x4096x28672 at
 * 0.93x cuBLASLt against 0.89x (H200, 32-row CTAs), and 117 MB e4m3 ones level or faster
 * (28672x4096, 4096x28672), except as follows. */
/* Larger fp8 weights of few rows (N <= 4096: fewer 32-row CTAs than the H100 and H200 have
 * SMs, where TMA splits K) take the decode kernel's 16-row CTAs up to M = 8. Same call
 * (bench/RESULTS.md, 2026-11-27 seventh session), ms TMA (64x128 k4a) -> 16x16x256, M = 1 /
 * 2 / 8, e4m3 Mx4096x28672: H200 0.0362 / 0.0352 / 0.0348 -> 0.0324 / 0.0325 / 0.0338, H100
 * 0.0453 / 0.0452 / 0.0457 -> 0.0443 / 0.0445 / 0.0455; at M = 16 TMA (0.0349 against
 * 0.0375 on the H200). */
#define DECODE_FP8_LONG_ROWS_MAX_N 4096
/* On memory of H200 class (HBM3e: 4.4 TB/s or more) the decode kernel's 16-row CTAs also
 * stream larger weights faster than TMA's 64-row tiles: fp8 up to M = 8, 16-bit up to M = 2
 * where N <= K. H200, same calls (bench/RESULTS.md, 2026-11-27 seventh session), ms TMA ->
 * 16x16, M = 1 / 2 / 8: e4m3 28672x4096 0.0331 / 0.0332 / 0.0336 -> 0.0317 / 0.0320 /
 * 0.0328; bf16 16384x16384 0.1427 / 0.1386 -> 0.1336 / 0.1352, 4096x28672 0.0632 / 0.0628 ->
 * 0.0614 / 0.0617. Not 16-bit at M = 8 (4096x28672 0.0629 -> 0.0649) nor N > K (28672x4096
 * 0.0592 -> 0.0610), nor fp8 at M = 16 (0.0324 -> 0.0355). On the H100 (3.35 TB/s) TMA
 * kept ahead on all of these (e4m3 1x28672x4096 0.0417 -> 0.0430, bf16 1x16384x16384 0.1808
 * -> 0.1876, 1x4096x28672 0.0841 -> 0.0885). Memory bandwidth from the device's memory clock
 * and bus width (2 transfers a clock): H100 SXM 2619 MHz x 5120 bits = 3.35 TB/s, H200 3201
 * MHz x 6144 bits = 4.92 TB/s. */
#define DECODE_FAST_MEMORY_GBPS 4400.0
static bool fast_memory(const hg_device_info_t *dev) {
  return dev &&
         2.0 * dev->mem_clock_khz * 1e3 * (dev->mem_bus_bits / 8) / 1e9 >= DECODE_FAST_MEMORY_GBPS;
}

bool hg_gemm_decode_rule(const hg_gemm_problem_t *p, const hg_gemm_rules_t *rules) {
  return hg_gemm_decode_rule_on(p, rules, NULL);
}

bool hg_gemm_decode_rule_on(const hg_gemm_problem_t *p, const hg_gemm_rules_t *rules,
                            const hg_device_info_t *dev) {
  /* a batch-invariant problem keeps the kernel its M = 4096 twin runs (the same sums) */
  if (!p || p->batch_invariant || !hg_gemm_decode_shape_ok(p)) return false;
  if ((rules && rules->decode) || hg_gemm_operand_align(p, 0) != 16 ||
      hg_gemm_operand_align(p, 1) != 16)
    return true;
  const bool fp8 = hg_dtype_bits(p->b_type) == 8;
  if ((fp8 || p->m <= 8) && p->n * p->k * hg_dtype_bytes(p->b_type) <= HG_DECODE_MAX_WEIGHT_BYTES)
    return true;
  if (fp8 && p->m <= 8 && p->n <= DECODE_FP8_LONG_ROWS_MAX_N) return true;
  return fast_memory(dev) && (fp8 ? p->m <= 8 : p->m <= 2 && p->n <= p->k);
}

/* q = p with the operands TMA cannot address that AUTO repacks (force: every one of them;
 * else as hg_gemm_repack_rule says) given packed rows of 16-byte multiples (what the repack
 * kernels write); says which. */
static void packed_problem(const hg_gemm_problem_t *p, bool force, hg_gemm_problem_t *q, bool *ra,
                           bool *rb) {
  *q = *p;
  for (int i = 0; i < 2; i++) {
    const bool a = i == 0;
    bool *need = a ? ra : rb;
    *need = hg_gemm_operand_align(p, i) != 16 && (force || hg_gemm_repack_rule(p, i));
    if (!*need) continue;
    const int e = hg_dtype_bytes(a ? p->a_type : p->b_type);
    const bool kmaj = a ? p->a_k_major : p->b_k_major;
    const int64_t rows = a ? (kmaj ? p->m : p->k) : (kmaj ? p->n : p->k);
    const int64_t cols = a ? (kmaj ? p->k : p->m) : (kmaj ? p->k : p->n);
    const int64_t ld = (cols + 16 / e - 1) / (16 / e) * (16 / e);
    *(a ? &q->lda : &q->ldb) = ld;
    *(a ? &q->batch_stride_a : &q->batch_stride_b) = ld * rows;
    *(a ? &q->a_align : &q->b_align) = 16;
  }
}

/* The tuner's winner for p on dev, if any (never for a batch-invariant problem: the tuner's
 * winner depends on M). */
static bool tuned_for(const hg_gemm_problem_t *p, const hg_device_info_t *dev,
                      hg_gemm_config_t *cfg) {
  return dev && !p->batch_invariant && hg_gemm_tuned_lookup(p, dev->name, cfg);
}

/* The configuration for p (normalised, packed where AUTO repacks) without one given: the
 * tuned store's winner, else the heuristic under rules. A stored winner counts only when it
 * runs the mainloop asked for. store = false: the caller has read the store for this key
 * already (the problem as asked, not changed by packing) and found nothing. */
static hg_status_t choose(const hg_gemm_problem_t *p, hg_gemm_mainloop_t mainloop,
                          const hg_device_info_t *dev, const hg_gemm_rules_t *rules, bool store,
                          hg_gemm_config_t *cfg) {
  if (store && tuned_for(p, dev, cfg) &&
      (mainloop == HG_MAINLOOP_AUTO || cfg->mainloop == mainloop))
    return hg_ok();
  return hg_gemm_heuristic_for(p, mainloop, dev && dev->sm_count > 0 ? dev->sm_count : 132, rules,
                               cfg);
}

hg_status_t hg_gemm_config_choose(const hg_gemm_problem_t *p_in, hg_gemm_mainloop_t mainloop,
                                  const hg_device_info_t *dev, const hg_gemm_rules_t *rules,
                                  hg_gemm_config_t *out) {
  hg_gemm_problem_t p = *p_in;
  HG_TRY(hg_gemm_problem_normalize(&p));
  /* the tuner's winner as hg_gemm_build takes it (for the problem as asked) */
  if (mainloop == HG_MAINLOOP_AUTO && tuned_for(&p, dev, out)) return hg_ok();
  /* the decode kernel reads the operands in place (no packed problem) */
  if (mainloop == HG_MAINLOOP_AUTO && hg_gemm_decode_rule_on(&p, rules, dev))
    return hg_gemm_heuristic_for(&p, HG_MAINLOOP_LDG_MMASYNC,
                                 dev && dev->sm_count > 0 ? dev->sm_count : 132, rules, out);
  bool ra = false, rb = false;
  if (mainloop == HG_MAINLOOP_AUTO) {
    hg_gemm_problem_t q;
    packed_problem(&p, false, &q, &ra, &rb);
    p = q;
  }
  HG_TRY(choose(&p, mainloop, dev, rules, !(mainloop == HG_MAINLOOP_AUTO && !ra && !rb), out));
  if (mainloop != HG_MAINLOOP_AUTO) out->mainloop = mainloop;
  return hg_ok();
}

hg_status_t hg_gemm_build(const hg_gemm_problem_t *p_in, const hg_gemm_config_t *c,
                          hg_gemm_mainloop_t mainloop, const hg_device_info_t *dev, hg_backend_t be,
                          hg_gemm_kernel_t *out) {
  return hg_gemm_build_repack(p_in, c, mainloop, dev, be, false, out);
}

hg_status_t hg_gemm_build_repack(const hg_gemm_problem_t *p_in, const hg_gemm_config_t *c,
                                 hg_gemm_mainloop_t mainloop, const hg_device_info_t *dev,
                                 hg_backend_t be, bool force_repack, hg_gemm_kernel_t *out) {
  memset(out, 0, sizeof *out);
  hg_gemm_problem_t p = *p_in;
  HG_TRY(hg_gemm_problem_normalize(&p));
  /* AUTO throughout: operands TMA cannot address are repacked per run where
   * hg_gemm_repack_rule says so (the kernel then reads the packed copy with TMA), else read
   * in place. */
  /* With no configuration given, the tuner's winner for the problem as asked is taken as if
   * given: the tuner ran it so (hg_gemm_tune runs each candidate as a given configuration),
   * whether it is the decode kernel or not. Looked up before the packing below, whose problem
   * (16-byte rows) would not find a winner tuned on unaligned rows. */
  hg_gemm_config_t tuned;
  const bool looked = !c && mainloop == HG_MAINLOOP_AUTO && !force_repack;
  if (looked) {
    if (tuned_for(&p, dev, &tuned))
      c = &tuned;
    else if (hg_gemm_decode_rule_on(&p, NULL, dev)) /* the decode kernel, in place */
      mainloop = HG_MAINLOOP_LDG_MMASYNC;
  }
  const hg_gemm_mainloop_t asked = mainloop != HG_MAINLOOP_AUTO ? mainloop
                                   : c                          ? c->mainloop
                                                                : HG_MAINLOOP_AUTO;
  bool ra = false, rb = false;
  if (asked == HG_MAINLOOP_AUTO) {
    hg_gemm_problem_t q;
    packed_problem(&p, force_repack, &q, &ra, &rb);
    p = q;
  }
  hg_gemm_config_t cfg;
  if (c)
    cfg = *c;
  else
    HG_TRY(choose(&p, mainloop, dev, NULL, !(looked && !ra && !rb), &cfg));
  if (mainloop != HG_MAINLOOP_AUTO) cfg.mainloop = mainloop;
  /* The kernel cache by specification first: planning and generation are most of a warm
   * hg_gemm_op_create. */
  const double t0 = hg_now_ms();
  hg_gemm_spec_key_t key;
  const bool keyed = hg_gemm_spec_key(&p, &cfg, ra, rb, be, &key);
  if (keyed && hg_gemm_spec_load(&key, out)) {
    out->k.gen_ms = hg_now_ms() - t0;
    return hg_ok();
  }
  HG_TRY(hg_gemm_generate(&p, &cfg, be, out));
  /* the kernel's operands: the caller's B first when swapped */
  out->repack_a = cfg.swap_ab ? rb : ra;
  out->repack_b = cfg.swap_ab ? ra : rb;
  if (keyed) hg_gemm_spec_store(&key, out);
  return hg_ok();
}

/* Registers per thread after setmaxnreg (PTX ISA: 24..256, multiples of 8): the producer
 * keeps few, consumers get what the register file leaves (40 x 128 + 232 x 256 = 64512).
 * cp.async producers compute an address for every chunk, and LLVM (the MLIR backend) hoists
 * them: they keep more (56 x 128 + 224 x 256 = 64512; with one consumer 112 + 240). */
#define PRODUCER_REGS 40
#define CONSUMER_REGS_2WG 232
#define CONSUMER_REGS_1WG 240
#define PRODUCER_REGS_CPASYNC_2WG 56
#define CONSUMER_REGS_CPASYNC_2WG 224
#define PRODUCER_REGS_CPASYNC_1WG 112

hg_roles_spec_t hg_gemm_roles_spec(const hg_gemm_kernel_t *k, const gemm_plan_t *g, bool reduce) {
  /* the reduction pass: the consumer warpgroups that hold one tile, no producer */
  if (reduce) return (hg_roles_spec_t){.producers = 0, .consumers = g->pingpong ? 1 : g->consumers};
  const bool cpasync = !k->a_tma || !k->b_tma, one = g->consumers == 1;
  return (hg_roles_spec_t){.producers = 1,
                           .consumers = g->consumers,
                           .producer_regs = !cpasync ? PRODUCER_REGS
                                            : one    ? PRODUCER_REGS_CPASYNC_1WG
                                                     : PRODUCER_REGS_CPASYNC_2WG,
                           .consumer_regs = one       ? CONSUMER_REGS_1WG
                                            : cpasync ? CONSUMER_REGS_CPASYNC_2WG
                                                      : CONSUMER_REGS_2WG};
}

hg_splitk_spec_t hg_gemm_splitk_spec(const hg_gemm_kernel_t *k, const gemm_plan_t *g,
                                     hg_val_t workspace) {
  const hg_gemm_config_t *c = &k->config;
  return (hg_splitk_spec_t){.splits = c->splits,
                            .acc_count = g->mma.acc_count,
                            .consumers = g->consumers,
                            .pingpong = g->pingpong,
                            .tile_m = c->tile_m,
                            .tile_n = c->tile_n,
                            .tile_k = c->tile_k,
                            .cluster_m = c->cluster_m,
                            .cluster_n = c->cluster_n,
                            .workspace = workspace,
                            .atomic = c->split_atomic != 0,
                            .scatter = c->split_scatter != 0};
}
