/* The operand repack (kernels.h, hg_gen_repack): rows that TMA cannot address (a leading
 * dimension or base that is not a multiple of 16 bytes) copied into packed rows of 16-byte
 * multiples before a tma-wgmma GEMM, and its bandwidth benchmark.
 *
 * The copy is bandwidth-bound, so it is written for bandwidth: a source row starts anywhere
 * (2-byte aligned for bf16 with an odd leading dimension, any byte for fp8), but its bytes lie
 * in 16-byte aligned blocks. Each thread makes 16-byte destination chunks: it loads the two
 * aligned source blocks a chunk straddles (ld.global.v4), then picks the chunk's 16 bytes
 * out of those 32 with word selects and funnel shifts (two shifts and an or per word: the
 * row's misalignment is uniform along the row), and stores them with one st.global.v4. A
 * thread issues the loads of UNROLL chunks before the first store, so every thread has up to
 * 2 x UNROLL 16-byte loads in flight. Rows go to groups of 2^lanes_log2 threads (a warp, or a
 * part of one for short rows) with no division in the kernel; the batch is grid z. The pair
 * kernel (hg_gen_repack_pair) runs the same body for both operands of a GEMM in one launch:
 * its CTAs along x are A's then B's, each CTA picking its operand's parameters once at entry.
 *
 * The alternative, one element per thread with a 64-bit division and remainder for its
 * coordinates (the first version), ran at about 120 GB/s on an H100 (bench/RESULTS.md). */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hopgen/kernels.h"
#include "kernels/gemm_internal.h"

#define REPACK_THREADS 256
#define REPACK_UNROLL 4 /* 16-byte chunks per thread per iteration, loads before stores */

static hg_val_t i32(hg_builder_t *b, int32_t v) {
  return hg_b_i32(b, v);
}

/* One operand's parameters as the body reads them: the kernel's own (hg_gen_repack), or in
 * the pair kernel those of the operand the CTA copies, picked once at entry. */
typedef struct rp_vals {
  hg_val_t dst, src, rows, cols, ld_dst, ld_src, bs_dst, bs_src; /* I64 */
  hg_val_t lw;                                                   /* I32: lanes_log2 */
} rp_vals_t;

/* The parameters of one operand, named with suffix ("" or "_a", "_b"); batch (shared by the
 * pair) is declared by the caller, between cols and ld_dst in the single kernel. */
static hg_val_t rp_param(hg_builder_t *b, hg_type_t type, const char *name, const char *suffix) {
  char n[40];
  snprintf(n, sizeof n, "%s%s", name, suffix);
  return hg_b_param(b, type, n);
}

static void rp_declare(hg_builder_t *b, const char *suffix, rp_vals_t *v, hg_val_t *batch) {
  v->dst = rp_param(b, HG_T_I64, "dst", suffix);
  v->src = rp_param(b, HG_T_I64, "src", suffix);
  v->rows = rp_param(b, HG_T_I64, "rows", suffix);
  v->cols = rp_param(b, HG_T_I64, "cols", suffix);
  if (batch) *batch = hg_b_param(b, HG_T_I64, "batch");
  v->ld_dst = rp_param(b, HG_T_I64, "ld_dst", suffix);
  v->ld_src = rp_param(b, HG_T_I64, "ld_src", suffix);
  v->bs_dst = rp_param(b, HG_T_I64, "batch_stride_dst", suffix);
  v->bs_src = rp_param(b, HG_T_I64, "batch_stride_src", suffix);
  v->lw = rp_param(b, HG_T_I32, "lanes_log2", suffix);
}

/* dst(r, c, z) = src(r, c, z) for r < rows, c < cols (c contiguous), z < batch; dst's
 * columns cols..ld_dst-1 = 0. cta: this CTA's index among the operand's CTAs along x. */
static void rp_body(hg_builder_t *b, int esize, const rp_vals_t *v, hg_val_t batch, hg_val_t cta) {
  const hg_val_t dst = v->dst, src = v->src, rows = v->rows, cols = v->cols;
  const hg_val_t ld_dst = v->ld_dst, ld_src = v->ld_src, bs_dst = v->bs_dst, bs_src = v->bs_src;
  const hg_val_t lw = v->lw;
  hg_val_t tid = hg_b_sreg(b, HG_TID_X);
  hg_val_t lane =
      hg_b_bin(b, HG_AND, tid, hg_b_bin(b, HG_SUB, hg_b_bin(b, HG_SHL, i32(b, 1), lw), i32(b, 1)));
  hg_val_t lanes = hg_b_bin(b, HG_SHL, i32(b, 1), lw);
  hg_val_t r = hg_b_bin(b, HG_ADD,
                        hg_b_bin(b, HG_MUL, hg_b_zext(b, cta),
                                 hg_b_zext(b, hg_b_bin(b, HG_SHR_U, i32(b, REPACK_THREADS), lw))),
                        hg_b_zext(b, hg_b_bin(b, HG_SHR_U, tid, lw)));
  hg_b_name(b, r, "row");
  hg_b_if(b, hg_b_cmp(b, HG_GE_S, r, rows));
  hg_b_return(b);
  hg_b_endif(b);
  hg_val_t es = hg_b_i64(b, esize);
  /* the source's end: past its last element, (rows - 1, cols - 1, batch - 1) */
  hg_val_t last = hg_b_mad(b, hg_b_bin(b, HG_SUB, batch, hg_b_i64(b, 1)), bs_src,
                           hg_b_mad(b, hg_b_bin(b, HG_SUB, rows, hg_b_i64(b, 1)), ld_src, cols));
  hg_val_t end = hg_b_bin(b, HG_ADD, src, hg_b_bin(b, HG_MUL, last, es));
  /* byte counts within one row fit 32 bits (hg_repack_launch checks) */
  hg_val_t row_bytes = hg_b_trunc(b, hg_b_bin(b, HG_MUL, cols, es));
  hg_val_t dst_chunks =
      hg_b_bin(b, HG_SHR_U, hg_b_trunc(b, hg_b_bin(b, HG_MUL, ld_dst, es)), i32(b, 4));
  hg_val_t step = hg_b_bin(b, HG_MUL, lanes, i32(b, REPACK_UNROLL));

  hg_val_t z = hg_b_var(b, HG_T_I64, hg_b_zext(b, hg_b_sreg(b, HG_CTAID_Z)));
  hg_val_t nz = hg_b_zext(b, hg_b_sreg(b, HG_NCTAID_Z));
  hg_b_loop(b);
  hg_b_break_if(b, hg_b_cmp(b, HG_GE_S, z, batch));
  {
    hg_val_t s =
        hg_b_bin(b, HG_ADD, src,
                 hg_b_bin(b, HG_MUL, hg_b_mad(b, z, bs_src, hg_b_bin(b, HG_MUL, r, ld_src)), es));
    hg_val_t d =
        hg_b_bin(b, HG_ADD, dst,
                 hg_b_bin(b, HG_MUL, hg_b_mad(b, z, bs_dst, hg_b_bin(b, HG_MUL, r, ld_dst)), es));
    /* The source row from the 16-byte aligned block that holds its first byte: sh bytes in */
    hg_val_t sh = hg_b_bin(b, HG_AND, hg_b_trunc(b, s), i32(b, 15));
    hg_val_t a = hg_b_bin(b, HG_SUB, s, hg_b_zext(b, sh));
    hg_val_t shifted = hg_b_cmp(b, HG_NE, sh, i32(b, 0));
    hg_val_t c0 = hg_b_for(b, i32(b, 0), dst_chunks, step);
    {
      hg_val_t w[REPACK_UNROLL][8], nb[REPACK_UNROLL], off[REPACK_UNROLL], j[REPACK_UNROLL];
      hg_b_comment(b, "the loads of every chunk first");
      for (int u = 0; u < REPACK_UNROLL; u++) {
        j[u] = hg_b_bin(b, HG_ADD, hg_b_mad(b, i32(b, u), lanes, c0), lane);
        off[u] = hg_b_bin(b, HG_SHL, j[u], i32(b, 4));
        nb[u] = hg_b_bin(b, HG_SUB, row_bytes, off[u]); /* row bytes from the chunk's start */
        for (int i = 0; i < 8; i++) w[u][i] = hg_b_var(b, HG_T_I32, i32(b, 0));
        hg_val_t blk = hg_b_bin(b, HG_ADD, a, hg_b_zext(b, off[u]));
        /* Only aligned 16-byte blocks that hold bytes of the row: the first holds the chunk's
         * first byte (nb > 0), the second is read only when the chunk reaches into it (nb >
         * 16 - sh) and that byte is in the row; and none of a block past the source's end
         * (hg_window16_load). A chunk wholly past the row (the packed row's padding) reads
         * nothing. */
        hg_b_if(b, hg_b_cmp(b, HG_GT_S, nb[u], i32(b, 0)));
        hg_window16_load(b, blk, end, w[u]);
        hg_b_endif(b);
        hg_b_if(b, hg_b_bin(b, HG_AND, shifted,
                            hg_b_cmp(b, HG_GT_S, hg_b_bin(b, HG_ADD, nb[u], sh), i32(b, 16))));
        hg_window16_load(b, hg_b_bin(b, HG_ADD, blk, hg_b_i64(b, 16)), end, w[u] + 4);
        hg_b_endif(b);
      }
      hg_b_comment(b, "then the stores: each chunk's 16 bytes out of its 32");
      for (int u = 0; u < REPACK_UNROLL; u++) {
        hg_b_if(b, hg_b_cmp(b, HG_LT_S, j[u], dst_chunks));
        hg_val_t out[4];
        hg_window16_extract(b, w[u], sh, out);
        hg_val_t o[4];
        for (int i = 0; i < 4; i++) o[i] = hg_b_var(b, HG_T_I32, out[i]);
        /* the row's last chunk and the padding: bytes past the row's end are zeros */
        hg_b_if(b, hg_b_cmp(b, HG_LT_S, nb[u], i32(b, 16)));
        hg_window16_mask(b, nb[u], out);
        for (int i = 0; i < 4; i++) hg_b_assign(b, o[i], out[i]);
        hg_b_endif(b);
        hg_b_store(b, HG_GLOBAL, 0, 4, hg_b_bin(b, HG_ADD, d, hg_b_zext(b, off[u])), o);
        hg_b_endif(b);
      }
    }
    hg_b_endfor(b);
  }
  hg_b_assign(b, z, hg_b_bin(b, HG_ADD, z, nz));
  hg_b_endloop(b);
}

hg_status_t hg_repack_build(hg_builder_t *b, int esize) {
  if (esize != 1 && esize != 2 && esize != 4)
    return hg_error(HG_ERR_UNSUPPORTED, "repack supports 1, 2 or 4-byte elements, not %d", esize);
  hg_b_set_threads(b, REPACK_THREADS);
  rp_vals_t v;
  hg_val_t batch;
  rp_declare(b, "", &v, &batch);
  rp_body(b, esize, &v, batch, hg_b_sreg(b, HG_CTAID_X));
  return hg_builder_status(b);
}

/* Both operands in one launch (one cuLaunchKernelEx of ~3 us host time fewer per run): CTAs
 * [0, ctas_a) along x copy A, the rest B, each with its own parameters, picked by selects
 * once at entry so the copy loop is the single kernel's, with no division or branch on the
 * operand inside it. A CTA's operand is uniform over the CTA, so its warps never diverge on
 * it. */
hg_status_t hg_repack_pair_build(hg_builder_t *b, int esize) {
  if (esize != 1 && esize != 2 && esize != 4)
    return hg_error(HG_ERR_UNSUPPORTED, "repack supports 1, 2 or 4-byte elements, not %d", esize);
  hg_b_set_threads(b, REPACK_THREADS);
  rp_vals_t a, bb, v;
  rp_declare(b, "_a", &a, NULL);
  rp_declare(b, "_b", &bb, NULL);
  hg_val_t batch = hg_b_param(b, HG_T_I64, "batch");
  hg_val_t ctas_a = hg_b_param(b, HG_T_I32, "ctas_a");
  hg_val_t x = hg_b_sreg(b, HG_CTAID_X);
  hg_val_t in_a = hg_b_cmp(b, HG_LT_U, x, ctas_a);
  hg_val_t cta = hg_b_select(b, in_a, x, hg_b_bin(b, HG_SUB, x, ctas_a));
#define RP_PICK(f) v.f = hg_b_select(b, in_a, a.f, bb.f)
  RP_PICK(dst);
  RP_PICK(src);
  RP_PICK(rows);
  RP_PICK(cols);
  RP_PICK(ld_dst);
  RP_PICK(ld_src);
  RP_PICK(bs_dst);
  RP_PICK(bs_src);
  RP_PICK(lw);
#undef RP_PICK
  rp_body(b, esize, &v, batch, cta);
  return hg_builder_status(b);
}

static hg_status_t rp_generate(int esize, bool pair, hg_backend_t be, hg_kernel_t *k) {
  if (!k) return hg_error(HG_ERR_INVALID, "hg_gen_repack needs somewhere to put the kernel");
  memset(k, 0, sizeof *k);
  if (esize != 1 && esize != 2 && esize != 4)
    return hg_error(HG_ERR_UNSUPPORTED, "repack supports 1, 2 or 4-byte elements, not %d", esize);
  snprintf(k->name, sizeof k->name, "hg_repack%s_b%d", pair ? "2" : "", esize * 8);
  k->threads = REPACK_THREADS;
  k->cluster[0] = k->cluster[1] = k->cluster[2] = 1;
  hg_builder_t *b;
  HG_TRY(hg_builder_create(k->name, &b));
  hg_status_t s = pair ? hg_repack_pair_build(b, esize) : hg_repack_build(b, esize);
  if (hg_is_ok(&s)) s = hg_kernel_finish(b, be, k);
  hg_builder_destroy(b);
  if (!hg_is_ok(&s)) hg_kernel_free(k);
  return s;
}

hg_status_t hg_gen_repack(int esize, hg_backend_t be, hg_kernel_t *k) {
  return rp_generate(esize, false, be, k);
}

hg_status_t hg_gen_repack_pair(int esize, hg_backend_t be, hg_kernel_t *k) {
  return rp_generate(esize, true, be, k);
}

/* The PTX repack kernels, one per element size and form (one operand, or the pair),
 * generated on first use and kept for the process: the PTX is a function of the element size
 * and form alone, and generating it (about 0.5 ms each) would otherwise be most of a warm
 * hg_gemm_op_create of a repacked problem (issue 10 asks < 0.5 ms). Never freed: six small
 * texts at most, reachable until exit. */
static pthread_mutex_t repack_lock = PTHREAD_MUTEX_INITIALIZER;
static hg_kernel_t repack_kernels[2][3];
static bool repack_made[2][3];

hg_status_t hg_repack_kernel(int esize, bool pair, const hg_kernel_t **out) {
  *out = NULL;
  const int i = esize == 1 ? 0 : esize == 2 ? 1 : esize == 4 ? 2 : -1;
  if (i < 0)
    return hg_error(HG_ERR_UNSUPPORTED, "repack supports 1, 2 or 4-byte elements, not %d", esize);
  pthread_mutex_lock(&repack_lock);
  hg_status_t s = hg_ok();
  if (!repack_made[pair][i]) {
    s = rp_generate(esize, pair, HG_BACKEND_PTX, &repack_kernels[pair][i]);
    repack_made[pair][i] = hg_is_ok(&s);
  }
  if (repack_made[pair][i]) *out = &repack_kernels[pair][i];
  pthread_mutex_unlock(&repack_lock);
  return s;
}

hg_status_t hg_repack_geometry(const hg_repack_args_t *x, int esize, hg_launch_t *l,
                               int32_t *lanes_log2) {
  if (!x || !l || !lanes_log2)
    return hg_error(HG_ERR_INVALID, "hg_repack_geometry needs the arguments and two outputs");
  if (esize != 1 && esize != 2 && esize != 4)
    return hg_error(HG_ERR_UNSUPPORTED, "repack supports 1, 2 or 4-byte elements, not %d", esize);
  if (x->rows < 0 || x->cols < 0 || x->batch < 0)
    return hg_error(HG_ERR_INVALID,
                    "a repack of %" PRId64 " rows x %" PRId64 " columns x %" PRId64
                    " batches: none may be negative",
                    x->rows, x->cols, x->batch);
  if (x->ld_dst < x->cols || x->ld_src < x->cols)
    return hg_error(HG_ERR_INVALID,
                    "repack leading dimensions (dst %" PRId64 ", src %" PRId64
                    ") must hold a row of %" PRId64 " columns",
                    x->ld_dst, x->ld_src, x->cols);
  if ((x->ld_dst * esize) % 16 != 0 || (x->batch > 1 && (x->bs_dst * esize) % 16 != 0) ||
      x->dst % 16 != 0)
    return hg_error(HG_ERR_INVALID,
                    "the repack writes 16-byte chunks: the destination (0x%" PRIx64
                    "), its row pitch (%" PRId64 " B) and batch pitch (%" PRId64
                    " B) must be multiples of 16 bytes",
                    (uint64_t)x->dst, x->ld_dst * esize, x->bs_dst * esize);
  if (x->src % (hg_devptr_t)esize != 0)
    return hg_error(HG_ERR_INVALID, "the repack's source 0x%" PRIx64 " is not %d-byte aligned",
                    (uint64_t)x->src, esize);
  if (x->ld_dst * esize > INT32_MAX / 2)
    return hg_error(HG_ERR_INVALID,
                    "a repacked row of %" PRId64 " B exceeds the kernel's 32-bit row offsets",
                    x->ld_dst * esize);
  const int64_t chunks = x->ld_dst * esize / 16;
  const int64_t per_lane = (chunks + REPACK_UNROLL - 1) / REPACK_UNROLL;
  int32_t lw = 0;
  while (lw < 5 && ((int64_t)1 << lw) < per_lane) lw++;
  const int64_t rows_per_cta = REPACK_THREADS >> lw;
  const int64_t ctas = (x->rows + rows_per_cta - 1) / rows_per_cta;
  if (ctas > INT32_MAX)
    return hg_error(HG_ERR_INVALID, "%" PRId64 " rows need more than 2^31 - 1 CTAs", x->rows);
  memset(l, 0, sizeof *l);
  l->grid[0] = (uint32_t)(ctas > 0 ? ctas : 1);
  l->grid[1] = 1;
  l->grid[2] = (uint32_t)(x->batch < 1 ? 1 : x->batch > 65535 ? 65535 : x->batch);
  l->block[0] = REPACK_THREADS;
  l->block[1] = l->block[2] = 1;
  *lanes_log2 = lw;
  return hg_ok();
}

hg_status_t hg_repack_launch(hg_rt_t *rt, hg_function_t *fn, int esize, const hg_repack_args_t *x,
                             hg_stream_t stream) {
  hg_launch_t l;
  int32_t lw;
  HG_TRY(hg_repack_geometry(x, esize, &l, &lw));
  if (x->rows == 0 || x->batch == 0 || x->ld_dst == 0) return hg_ok();
  l.stream = stream;
  hg_repack_args_t v = *x;
  void *args[] = {&v.dst,    &v.src,    &v.rows,   &v.cols,   &v.batch,
                  &v.ld_dst, &v.ld_src, &v.bs_dst, &v.bs_src, &lw};
  return hg_rt_launch(rt, fn, &l, args);
}

hg_status_t hg_repack_pair_geometry(const hg_repack_args_t *a, const hg_repack_args_t *b, int esize,
                                    hg_launch_t *l, int32_t lanes_log2[2], int32_t *ctas_a) {
  if (!a || !b || !l || !lanes_log2 || !ctas_a)
    return hg_error(HG_ERR_INVALID,
                    "hg_repack_pair_geometry needs both operands' arguments and three outputs");
  if (a->batch != b->batch)
    return hg_error(
        HG_ERR_INVALID,
        "the pair repack copies both operands over one batch (grid z), but A has %" PRId64
        " and B %" PRId64,
        a->batch, b->batch);
  const hg_repack_args_t *x[2] = {a, b};
  int64_t ctas[2];
  for (int i = 0; i < 2; i++) {
    HG_TRY(
        hg_status_wrap(hg_repack_geometry(x[i], esize, l, &lanes_log2[i]), "%s: ", i ? "B" : "A"));
    /* an operand with nothing to copy gets no CTA (the single kernel's launch is skipped) */
    ctas[i] = x[i]->rows == 0 || x[i]->ld_dst == 0 ? 0 : (int64_t)l->grid[0];
  }
  if (ctas[0] + ctas[1] > INT32_MAX)
    return hg_error(HG_ERR_INVALID,
                    "the pair repack's %" PRId64 " + %" PRId64 " CTAs exceed 2^31 - 1", ctas[0],
                    ctas[1]);
  /* grid y and z, block: as each operand's (the same for both) */
  l->grid[0] = (uint32_t)(ctas[0] + ctas[1] > 0 ? ctas[0] + ctas[1] : 1);
  *ctas_a = (int32_t)ctas[0];
  return hg_ok();
}

hg_status_t hg_repack_pair_launch(hg_rt_t *rt, hg_function_t *fn, int esize,
                                  const hg_repack_args_t *a, const hg_repack_args_t *b,
                                  hg_stream_t stream) {
  hg_launch_t l;
  int32_t lw[2], ctas_a;
  HG_TRY(hg_repack_pair_geometry(a, b, esize, &l, lw, &ctas_a));
  const bool a_empty = a->rows == 0 || a->ld_dst == 0, b_empty = b->rows == 0 || b->ld_dst == 0;
  if (a->batch == 0 || (a_empty && b_empty)) return hg_ok();
  l.stream = stream;
  hg_repack_args_t va = *a, vb = *b;
  int64_t batch = a->batch;
  void *args[] = {&va.dst,    &va.src,    &va.rows,   &va.cols, &va.ld_dst, &va.ld_src, &va.bs_dst,
                  &va.bs_src, &lw[0],     &vb.dst,    &vb.src,  &vb.rows,   &vb.cols,   &vb.ld_dst,
                  &vb.ld_src, &vb.bs_dst, &vb.bs_src, &lw[1],   &batch,     &ctas_a};
  return hg_rt_launch(rt, fn, &l, args);
}

/* ---------------------------------------------------------------- the bandwidth benchmark
 * Layering note: like hg_copy_bench_run, this driver calls the runtime. */

typedef struct rp_bench_state {
  hg_rt_t *rt;
  hg_devptr_t src, dst;
  hg_module_t *mod, *mod2, *fill_mod;
  hg_function_t *fn, *fn2, *fill_fn; /* fn2: the pair kernel */
  hg_event_t ev[6];
  hg_stream_t stream;
  double *times;
  uint8_t *host_src, *host_dst;
} rp_bench_state_t;

static int rp_cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double rp_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, rp_cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void rp_bench_free(rp_bench_state_t *st) {
  for (int i = 0; i < 6; i++)
    if (st->ev[i]) hg_rt_event_destroy(st->rt, st->ev[i]);
  if (st->stream) hg_rt_stream_destroy(st->rt, st->stream);
  if (st->mod) hg_rt_module_unload(st->rt, st->mod);
  if (st->mod2) hg_rt_module_unload(st->rt, st->mod2);
  if (st->fill_mod) hg_rt_module_unload(st->rt, st->fill_mod);
  hg_rt_free(st->rt, st->src);
  hg_rt_free(st->rt, st->dst);
  free(st->times);
  free(st->host_src);
  free(st->host_dst);
}

/* The bytes an operand's source region takes (its tensor, room for the offset, 256-byte
 * aligned) and its packed copy's. */
static size_t rp_src_region(const hg_repack_args_t *x, int e) {
  return ((size_t)(x->bs_src * x->batch * e) + 16 * (size_t)e + 255) & ~(size_t)255;
}
static size_t rp_dst_region(const hg_repack_args_t *x, int e) {
  return ((size_t)(x->bs_dst * x->batch * e) + 255) & ~(size_t)255;
}

/* The benchmark's operands: x (and with pair_rows, xb) from the description (src and dst
 * left 0). */
static hg_status_t rp_bench_args(const hg_repack_bench_t *in, int *esize, hg_repack_args_t *x,
                                 hg_repack_args_t *xb) {
  const int e = hg_dtype_bytes(in->type);
  if (e != 1 && e != 2 && e != 4)
    return hg_error(HG_ERR_UNSUPPORTED, "the repack benchmark takes 1, 2 or 4-byte types, not %s",
                    hg_dtype_name(in->type));
  if (in->rows < 1 || in->cols < 1 || in->batch < 1)
    return hg_error(HG_ERR_INVALID,
                    "the repack benchmark needs at least one row, column and batch (%" PRId64
                    " x %" PRId64 " x %" PRId64 ")",
                    in->rows, in->cols, in->batch);
  if (in->pair_rows < 0)
    return hg_error(HG_ERR_INVALID,
                    "the second operand's rows (%" PRId64 ") may not be negative (0: none)",
                    in->pair_rows);
  if (in->offset < 0 || in->offset > 15)
    return hg_error(HG_ERR_INVALID, "a source offset of %d elements is outside 0..15", in->offset);
  if (in->warmup < 0 || in->runs < 0)
    return hg_error(HG_ERR_INVALID, "warm-up and run counts are >= 0 (0: the defaults)");
  const int64_t q = 16 / e;
  memset(x, 0, sizeof *x);
  x->rows = in->rows;
  x->cols = in->cols;
  x->batch = in->batch;
  x->ld_src = in->ld_src > 0 ? in->ld_src : in->cols;
  x->ld_dst = (in->cols + q - 1) / q * q;
  x->bs_src = x->ld_src * in->rows;
  x->bs_dst = x->ld_dst * in->rows;
  *xb = *x;
  xb->rows = in->pair_rows;
  xb->bs_src = x->ld_src * in->pair_rows;
  xb->bs_dst = x->ld_dst * in->pair_rows;
  *esize = e;
  const double bytes =
      (double)(x->bs_src + x->bs_dst + xb->bs_src + xb->bs_dst) * (double)x->batch * e;
  if (bytes > 64.0 * (1ull << 30))
    return hg_error(HG_ERR_INVALID, "the repack benchmark's buffers would take %.1f GiB",
                    bytes / (double)(1ull << 30));
  if (in->pair_rows > 0)
    return hg_repack_pair_geometry(x, xb, e, &(hg_launch_t){0}, (int32_t[2]){0, 0}, &(int32_t){0});
  return hg_repack_geometry(x, e, &(hg_launch_t){0}, &(int32_t){0});
}

hg_status_t hg_repack_bench_validate(const hg_repack_bench_t *bench) {
  if (!bench) return hg_error(HG_ERR_INVALID, "no repack benchmark description given");
  int e;
  hg_repack_args_t x, xb;
  return rp_bench_args(bench, &e, &x, &xb);
}

/* Every byte of each operand's packed copy: the source's, or 0 in the padding. */
static hg_status_t rp_verify(rp_bench_state_t *st, const hg_repack_args_t *xs, int n, int e,
                             size_t src_bytes, size_t dst_bytes, bool *ok) {
  *ok = false;
  if (!st->host_src) st->host_src = malloc(src_bytes);
  if (!st->host_dst) st->host_dst = malloc(dst_bytes);
  if (!st->host_src || !st->host_dst)
    return hg_error(HG_ERR_NOMEM, "cannot allocate %zu B of host memory to verify the repack",
                    src_bytes + dst_bytes);
  HG_TRY(hg_rt_download(st->rt, st->host_src, st->src, src_bytes));
  HG_TRY(hg_rt_download(st->rt, st->host_dst, st->dst, dst_bytes));
  for (int i = 0; i < n; i++) {
    const hg_repack_args_t *x = &xs[i];
    const size_t off = (size_t)(x->src - st->src), doff = (size_t)(x->dst - st->dst);
    for (int64_t z = 0; z < x->batch; z++)
      for (int64_t r = 0; r < x->rows; r++) {
        const uint8_t *s = st->host_src + off + (size_t)((z * x->bs_src + r * x->ld_src) * e);
        const uint8_t *d = st->host_dst + doff + (size_t)((z * x->bs_dst + r * x->ld_dst) * e);
        const size_t nb = (size_t)(x->cols * e), pad = (size_t)(x->ld_dst * e) - nb;
        bool bad = memcmp(s, d, nb) != 0;
        for (size_t j = 0; j < pad && !bad; j++) bad = d[nb + j] != 0;
        if (bad)
          return hg_error(HG_ERR_MISMATCH,
                          "the repack's row %" PRId64 " of batch %" PRId64
                          "%s differs from the source (or its padding is not zero)",
                          r, z,
                          n == 1 ? ""
                          : i    ? " of B"
                                 : " of A");
      }
  }
  *ok = true;
  return hg_ok();
}

static hg_status_t rp_bench_body(rp_bench_state_t *st, const hg_repack_bench_t *in, hg_backend_t be,
                                 hg_repack_bench_result_t *out) {
  hg_rt_t *rt = st->rt;
  int e = 0;
  hg_repack_args_t xs[2];
  HG_TRY(rp_bench_args(in, &e, &xs[0], &xs[1]));
  const bool pair = in->pair_rows > 0;
  const int n_ops = pair ? 2 : 1;
  const hg_device_info_t *dev = hg_rt_device(rt);
  if (dev) snprintf(out->device, sizeof out->device, "%s", dev->name);
  const int warmup = in->warmup > 0 ? in->warmup : 5;
  const int runs = in->runs > 0 ? in->runs : 30;
  /* the operands one after the other: each source with room for the offset, the whole
   * rounded to whole u32 for the random fill and at least as large as the packed copies (the
   * D2D copy reads that many bytes of it) */
  size_t src_bytes = rp_src_region(&xs[0], e), dst_bytes = rp_dst_region(&xs[0], e);
  if (pair) {
    src_bytes += rp_src_region(&xs[1], e);
    dst_bytes += rp_dst_region(&xs[1], e);
  }
  if (src_bytes < dst_bytes) src_bytes = dst_bytes;
  HG_TRY(hg_rt_stream_create(rt, &st->stream));
  for (int i = 0; i < 6; i++) HG_TRY(hg_rt_event_create(rt, &st->ev[i]));
  HG_TRY(hg_rt_alloc(rt, src_bytes, &st->src));
  HG_TRY(hg_rt_alloc(rt, dst_bytes, &st->dst));
  xs[0].src = st->src + (hg_devptr_t)(in->offset * e);
  xs[0].dst = st->dst;
  xs[1].src = st->src + rp_src_region(&xs[0], e) + (hg_devptr_t)(in->offset * e);
  xs[1].dst = st->dst + rp_dst_region(&xs[0], e);
  out->args = xs[0];
  out->esize = e;
  hg_launch_t l;
  if (pair) {
    out->args_b = xs[1];
    int32_t lw[2], ctas_a;
    HG_TRY(hg_repack_pair_geometry(&xs[0], &xs[1], e, &l, lw, &ctas_a));
    out->lanes_log2 = lw[0];
    out->lanes_log2_b = lw[1];
  } else {
    HG_TRY(hg_repack_geometry(&xs[0], e, &l, &out->lanes_log2));
  }
  out->ctas = (uint64_t)l.grid[0] * l.grid[2];
  for (int i = 0; i < n_ops; i++) {
    out->bytes_read += (uint64_t)(xs[i].rows * xs[i].cols * xs[i].batch * e);
    out->bytes_written += (uint64_t)(xs[i].bs_dst * xs[i].batch * e);
  }
  const size_t copy_bytes = (size_t)out->bytes_written;

  hg_kernel_t fill;
  HG_TRY(hg_gen_fill_random(HG_U32, be, &fill));
  hg_status_t s = hg_kernels_load(rt, &fill, &st->fill_mod, &st->fill_fn, NULL);
  hg_kernel_free(&fill);
  HG_TRY(s);
  {
    uint64_t count = src_bytes / 4;
    uint64_t seed = in->seed ? in->seed : (uint64_t)(hg_now_ms() * 1e3) * 0x9E3779B97F4A7C15ull;
    hg_devptr_t ptr = st->src;
    void *args[] = {&ptr, &count, &seed};
    hg_launch_t f;
    memset(&f, 0, sizeof f);
    f.grid[0] = 1024;
    f.grid[1] = f.grid[2] = 1;
    f.block[0] = 256;
    f.block[1] = f.block[2] = 1;
    f.stream = st->stream;
    HG_TRY(hg_rt_launch(rt, st->fill_fn, &f, args));
  }
  HG_TRY(hg_rt_memset8(rt, st->dst, 0x5A, dst_bytes, st->stream));
  hg_kernel_t k;
  HG_TRY(hg_gen_repack(e, be, &k));
  snprintf(out->kernel, sizeof out->kernel, "%s", k.name);
  s = hg_kernels_load(rt, &k, &st->mod, &st->fn, NULL);
  hg_kernel_free(&k);
  HG_TRY(s);
  if (pair) {
    HG_TRY(hg_gen_repack_pair(e, be, &k));
    snprintf(out->kernel, sizeof out->kernel, "%s", k.name);
    s = hg_kernels_load(rt, &k, &st->mod2, &st->fn2, NULL);
    hg_kernel_free(&k);
    HG_TRY(s);
  }
#define RP_LAUNCH()                                                                                \
  (pair ? hg_repack_pair_launch(rt, st->fn2, e, &xs[0], &xs[1], st->stream)                        \
        : hg_repack_launch(rt, st->fn, e, &xs[0], st->stream))

  /* Correct first, then timed: (repack, [the two one-operand launches,] D2D copy of the
   * packed bytes) interleaved. */
  HG_TRY(RP_LAUNCH());
  HG_TRY(hg_rt_sync(rt, st->stream));
  HG_TRY(rp_verify(st, xs, n_ops, e, src_bytes, dst_bytes, &out->verified));
  for (int i = 0; i < warmup; i++) {
    HG_TRY(RP_LAUNCH());
    HG_TRY(hg_rt_copy_d2d(rt, st->dst, st->src, copy_bytes, st->stream));
  }
  HG_TRY(hg_rt_sync(rt, st->stream));
  st->times = malloc(sizeof(double) * 3 * (size_t)runs);
  if (!st->times) return hg_error(HG_ERR_NOMEM, "cannot allocate the timing table");
  double *tr = st->times, *td = st->times + runs, *t2 = st->times + 2 * runs;
  for (int i = 0; i < runs; i++) {
    float a = 0, d = 0, two = 0;
    HG_TRY(hg_rt_event_record(rt, st->ev[0], st->stream));
    HG_TRY(RP_LAUNCH());
    HG_TRY(hg_rt_event_record(rt, st->ev[1], st->stream));
    if (pair) {
      HG_TRY(hg_rt_event_record(rt, st->ev[4], st->stream));
      HG_TRY(hg_repack_launch(rt, st->fn, e, &xs[0], st->stream));
      HG_TRY(hg_repack_launch(rt, st->fn, e, &xs[1], st->stream));
      HG_TRY(hg_rt_event_record(rt, st->ev[5], st->stream));
    }
    HG_TRY(hg_rt_event_record(rt, st->ev[2], st->stream));
    HG_TRY(hg_rt_copy_d2d(rt, st->dst, st->src, copy_bytes, st->stream));
    HG_TRY(hg_rt_event_record(rt, st->ev[3], st->stream));
    HG_TRY(hg_rt_sync(rt, st->stream));
    HG_TRY(hg_rt_event_elapsed_ms(rt, st->ev[0], st->ev[1], &a));
    HG_TRY(hg_rt_event_elapsed_ms(rt, st->ev[2], st->ev[3], &d));
    if (pair) HG_TRY(hg_rt_event_elapsed_ms(rt, st->ev[4], st->ev[5], &two));
    tr[i] = a;
    td[i] = d;
    t2[i] = two;
  }
  /* the timed runs ended with a D2D copy over dst: the repack once more, checked again */
  HG_TRY(RP_LAUNCH());
#undef RP_LAUNCH
  HG_TRY(hg_rt_sync(rt, st->stream));
  HG_TRY(rp_verify(st, xs, n_ops, e, src_bytes, dst_bytes, &out->verified));
  double lo = tr[0];
  for (int i = 0; i < runs; i++) lo = tr[i] < lo ? tr[i] : lo;
  out->repack_min_ms = lo;
  out->repack_ms = rp_median(tr, runs);
  out->d2d_ms = rp_median(td, runs);
  out->two_ms = pair ? rp_median(t2, runs) : 0;
  /* read + write for both: the repack reads the tensor and writes the packed rows; the
   * copy reads and writes the packed size */
  out->repack_gbs = (double)(out->bytes_read + out->bytes_written) / (out->repack_ms * 1e-3) / 1e9;
  out->d2d_gbs = 2.0 * (double)copy_bytes / (out->d2d_ms * 1e-3) / 1e9;
  out->ratio = out->repack_gbs / out->d2d_gbs;
  return hg_ok();
}

hg_status_t hg_repack_bench_run(hg_rt_t *rt, const hg_repack_bench_t *bench, hg_backend_t be,
                                hg_repack_bench_result_t *out) {
  if (!out)
    return hg_error(HG_ERR_INVALID, "hg_repack_bench_run needs somewhere to put the result");
  memset(out, 0, sizeof *out);
  HG_TRY(hg_repack_bench_validate(bench));
  if (!rt) return hg_error(HG_ERR_NO_DRIVER, "no runtime: open the GPU with hg_rt_open first");
  rp_bench_state_t st;
  memset(&st, 0, sizeof st);
  st.rt = rt;
  hg_status_t s = rp_bench_body(&st, bench, be, out);
  rp_bench_free(&st);
  return s;
}
