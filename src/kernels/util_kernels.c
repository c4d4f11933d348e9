/* Utility kernels for running and checking generated kernels on the GPU: fresh random
 * data, a straightforward f32-accumulating reference GEMM, and the unfused bias and
 * activation (the operand repack is in repack.c). They go through the builder like every
 * other kernel, so they exist in both backends and need no nvcc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hopgen/kernels.h"

void hg_kernel_free(hg_kernel_t *k) {
  if (!k) return;
  hg_text_free(&k->ptx);
  hg_text_free(&k->mlir);
}

hg_status_t hg_kernel_finish(hg_builder_t *b, hg_backend_t be, hg_kernel_t *k) {
  const double t0 = hg_now_ms();
  HG_TRY(hg_builder_status(b));
  k->smem_bytes = hg_builder_smem_bytes(b);
  hg_status_t s;
  if (be == HG_BACKEND_MLIR) {
    /* Print once: the text kept in k->mlir is the one lowered (and the lowering cache's key). */
    HG_TRY(hg_emit_mlir(b, &k->mlir));
    s = hg_mlir_to_ptx(k->mlir.data, &k->ptx);
  } else {
    s = hg_emit(b, be, &k->ptx);
  }
  k->gen_ms += hg_now_ms() - t0;
  return s;
}

hg_status_t hg_kernel_append_entry(hg_kernel_t *k, const hg_kernel_t *more) {
  const char *entry = more->ptx.data ? strstr(more->ptx.data, "\n.visible .entry") : NULL;
  if (!entry)
    return hg_error(HG_ERR_INVALID, "kernel %s's PTX has no .visible .entry to append to %s",
                    more->name, k->name);
  const size_t add = more->ptx.len - (size_t)(entry - more->ptx.data);
  char *grown = realloc(k->ptx.data, k->ptx.len + add + 1);
  if (!grown)
    return hg_error(HG_ERR_NOMEM, "out of memory appending kernel %s's PTX to %s", more->name,
                    k->name);
  memcpy(grown + k->ptx.len, entry, add + 1);
  k->ptx.data = grown;
  k->ptx.len += add;
  return hg_ok();
}

/* Start a kernel artefact: builder, name, threads, no cluster. */
static hg_status_t begin(const char *name, int threads, hg_kernel_t *k, hg_builder_t **b) {
  memset(k, 0, sizeof *k);
  snprintf(k->name, sizeof k->name, "%s", name);
  k->threads = (uint32_t)threads;
  k->cluster[0] = k->cluster[1] = k->cluster[2] = 1;
  HG_TRY(hg_builder_create(name, b));
  hg_b_set_threads(*b, threads);
  return hg_ok();
}

static hg_status_t end(hg_builder_t *b, hg_backend_t be, hg_kernel_t *k) {
  hg_status_t s = hg_kernel_finish(b, be, k);
  hg_builder_destroy(b);
  if (!hg_is_ok(&s)) hg_kernel_free(k);
  return s;
}

/* The global thread index and the grid-wide thread count, both I64. */
static void grid_stride(hg_builder_t *b, hg_val_t *first, hg_val_t *step) {
  hg_val_t tid = hg_b_sreg(b, HG_TID_X), ntid = hg_b_sreg(b, HG_NTID_X);
  hg_val_t cta = hg_b_sreg(b, HG_CTAID_X), ncta = hg_b_sreg(b, HG_NCTAID_X);
  *first = hg_b_bin(b, HG_ADD, hg_b_bin(b, HG_MUL, hg_b_zext(b, cta), hg_b_zext(b, ntid)),
                    hg_b_zext(b, tid));
  *step = hg_b_bin(b, HG_MUL, hg_b_zext(b, ncta), hg_b_zext(b, ntid));
}

/* splitmix64 finaliser: a well-mixed 64-bit hash of (seed, index), so that every element
 * gets an independent-looking value and a new seed gives fresh data. */
static hg_val_t mix64(hg_builder_t *b, hg_val_t x) {
  x = hg_b_bin(b, HG_MUL, hg_b_bin(b, HG_XOR, x, hg_b_bin(b, HG_SHR_U, x, hg_b_i64(b, 30))),
               hg_b_i64(b, (int64_t)0xBF58476D1CE4E5B9ull));
  x = hg_b_bin(b, HG_MUL, hg_b_bin(b, HG_XOR, x, hg_b_bin(b, HG_SHR_U, x, hg_b_i64(b, 27))),
               hg_b_i64(b, (int64_t)0x94D049BB133111EBull));
  return hg_b_bin(b, HG_XOR, x, hg_b_bin(b, HG_SHR_U, x, hg_b_i64(b, 31)));
}

hg_status_t hg_gen_fill_random(hg_dtype_t dtype, hg_backend_t be, hg_kernel_t *k) {
  const int bits = hg_dtype_bits(dtype);
  if (bits != 8 && bits != 16 && bits != 32)
    return hg_error(HG_ERR_UNSUPPORTED, "random fill supports 8/16/32-bit types, not %s",
                    hg_dtype_name(dtype));
  char name[64];
  snprintf(name, sizeof name, "hg_fill_random_%s", hg_dtype_name(dtype));
  hg_builder_t *b;
  HG_TRY(begin(name, 256, k, &b));
  hg_val_t ptr = hg_b_param(b, HG_T_I64, "ptr");
  hg_val_t count = hg_b_param(b, HG_T_I64, "count");
  hg_val_t seed = hg_b_param(b, HG_T_I64, "seed");
  hg_val_t first, step;
  grid_stride(b, &first, &step);
  hg_val_t i = hg_b_var(b, HG_T_I64, first);
  hg_b_loop(b);
  hg_b_break_if(b, hg_b_cmp(b, HG_GE_S, i, count));
  hg_val_t h =
      mix64(b, hg_b_bin(b, HG_ADD,
                        hg_b_bin(b, HG_MUL, i, hg_b_i64(b, (int64_t)0x9E3779B97F4A7C15ull)), seed));
  hg_val_t addr = hg_b_bin(b, HG_ADD, ptr, hg_b_bin(b, HG_MUL, i, hg_b_i64(b, bits / 8)));
  if (dtype == HG_E4M3 || dtype == HG_E5M2) {
    /* Build finite fp8 bit patterns directly: a random sign and mantissa, and an exponent
     * field that keeps magnitudes within [2^-6, 2) (e4m3, bias 7) or [2^-5, 2) (e5m2,
     * bias 15), so that products and sums stay far from the formats' limits. */
    hg_val_t r = hg_b_trunc(b, hg_b_bin(b, HG_SHR_U, h, hg_b_i64(b, 32)));
    hg_val_t sign = hg_b_bin(b, HG_AND, r, hg_b_i32(b, 0x80));
    hg_val_t e7 = hg_b_bin(b, HG_REM_U, hg_b_bin(b, HG_SHR_U, r, hg_b_i32(b, 8)), hg_b_i32(b, 7));
    hg_val_t v;
    if (dtype == HG_E4M3) {
      hg_val_t exp = hg_b_bin(b, HG_ADD, e7, hg_b_i32(b, 1)); /* 1..7 */
      hg_val_t man = hg_b_bin(b, HG_AND, hg_b_bin(b, HG_SHR_U, r, hg_b_i32(b, 16)), hg_b_i32(b, 7));
      v = hg_b_bin(b, HG_OR, sign,
                   hg_b_bin(b, HG_OR, hg_b_bin(b, HG_SHL, exp, hg_b_i32(b, 3)), man));
    } else {
      hg_val_t exp = hg_b_bin(b, HG_ADD, e7, hg_b_i32(b, 10)); /* 10..16 */
      hg_val_t man = hg_b_bin(b, HG_AND, hg_b_bin(b, HG_SHR_U, r, hg_b_i32(b, 16)), hg_b_i32(b, 3));
      v = hg_b_bin(b, HG_OR, sign,
                   hg_b_bin(b, HG_OR, hg_b_bin(b, HG_SHL, exp, hg_b_i32(b, 2)), man));
    }
    hg_b_store(b, HG_GLOBAL, 8, 1, addr, &v);
  } else if (bits == 8) {
    hg_val_t v = hg_b_trunc(b, hg_b_bin(b, HG_SHR_U, h, hg_b_i64(b, 40)));
    hg_b_store(b, HG_GLOBAL, 8, 1, addr, &v);
  } else {
    /* Uniform in [-1, 1): the top 24 bits of the hash as an integer, scaled. */
    hg_val_t top = hg_b_trunc(b, hg_b_bin(b, HG_SHR_U, h, hg_b_i64(b, 40)));
    hg_val_t f = hg_b_ffma(b, hg_b_i2f(b, top), hg_b_f32(b, 1.0f / 8388608.0f), hg_b_f32(b, -1.0f));
    if (dtype == HG_F32 || dtype == HG_TF32) {
      hg_b_store(b, HG_GLOBAL, 0, 1, addr, &f);
    } else if (dtype == HG_BF16 || dtype == HG_F16) {
      hg_val_t packed = hg_b_pack_f32x2(b, dtype, f, f);
      hg_b_store(b, HG_GLOBAL, 16, 1, addr, &packed);
    } else {
      hg_val_t v = hg_b_trunc(b, h);
      if (bits == 16)
        hg_b_store(b, HG_GLOBAL, 16, 1, addr, &v);
      else
        hg_b_store(b, HG_GLOBAL, 0, 1, addr, &v);
    }
  }
  hg_b_assign(b, i, hg_b_bin(b, HG_ADD, i, step));
  hg_b_endloop(b);
  return end(b, be, k);
}

/* Load one element of dtype at addr and widen it to F32. */
static hg_val_t load_as_f32(hg_builder_t *b, hg_dtype_t t, hg_val_t addr) {
  hg_val_t v;
  const int bits = hg_dtype_bits(t);
  if (t == HG_F32 || t == HG_TF32) {
    hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 1, addr, &v);
    return v;
  }
  hg_b_load(b, HG_GLOBAL, HG_T_I32, bits, 1, addr, &v);
  return hg_b_unpack_f32(b, t, v);
}

/* Element address: base + (batch_off + row * ld + col) * esize, all I64. */
static hg_val_t elem_addr(hg_builder_t *b, hg_val_t base, hg_val_t batch_off, hg_val_t row,
                          hg_val_t ld, hg_val_t col, int esize) {
  hg_val_t idx =
      hg_b_bin(b, HG_ADD, batch_off, hg_b_mad(b, hg_b_sext(b, row), ld, hg_b_sext(b, col)));
  return hg_b_bin(b, HG_ADD, base, hg_b_bin(b, HG_MUL, idx, hg_b_i64(b, esize)));
}

#define REF_T 16 /* the reference kernel's square thread tile */

/* One operand element (mn, k) as f32 into the thread's shared-memory slot: 0 where `in` is
 * false (outside the matrix). */
static void stage_element(hg_builder_t *b, hg_dtype_t t, bool k_major, hg_val_t base,
                          hg_val_t batch_off, hg_val_t ld, hg_val_t mn, hg_val_t k, hg_val_t in,
                          hg_val_t slot) {
  const int e = hg_dtype_bytes(t);
  hg_val_t v = hg_b_var(b, HG_T_F32, hg_b_f32(b, 0.0f));
  hg_b_if(b, in);
  {
    hg_val_t addr = k_major ? elem_addr(b, base, batch_off, mn, ld, k, e)
                            : elem_addr(b, base, batch_off, k, ld, mn, e);
    hg_b_assign(b, v, load_as_f32(b, t, addr));
  }
  hg_b_endif(b);
  hg_b_store(b, HG_SHARED, 0, 1, slot, &v);
}

hg_status_t hg_gen_gemm_reference(const hg_gemm_problem_t *p, hg_backend_t be, hg_kernel_t *k) {
  char name[64];
  /* C's type (p normalised: c_type filled in; D's when not) */
  const hg_dtype_t ct = p->c_type == (hg_dtype_t)0 ? p->d_type : p->c_type;
  /* fp8 row- and block-wise scales (kernels.h), applied in f32 */
  const hg_gemm_scale_t scale = hg_dtype_bits(p->a_type) == 8 ? p->scale : HG_SCALE_TENSOR;
  snprintf(name, sizeof name, "hg_gemm_ref_%s_%s_%s_%c%c%s", hg_dtype_name(p->a_type),
           hg_dtype_name(p->b_type), hg_dtype_name(ct), p->a_k_major ? 'k' : 'm',
           p->b_k_major ? 'k' : 'n',
           scale == HG_SCALE_ROW     ? "_srow"
           : scale == HG_SCALE_BLOCK ? "_sblk"
                                     : "");
  hg_builder_t *b;
  HG_TRY(begin(name, REF_T * REF_T, k, &b));
  const int ec = hg_dtype_bytes(ct);
  hg_val_t A = hg_b_param(b, HG_T_I64, "a"), B = hg_b_param(b, HG_T_I64, "b");
  hg_val_t C = hg_b_param(b, HG_T_I64, "c"), D = hg_b_param(b, HG_T_I64, "dref");
  hg_val_t M = hg_b_param(b, HG_T_I32, "m"), N = hg_b_param(b, HG_T_I32, "n");
  hg_val_t K = hg_b_param(b, HG_T_I32, "k");
  hg_val_t lda = hg_b_param(b, HG_T_I64, "lda"), ldb = hg_b_param(b, HG_T_I64, "ldb");
  hg_val_t ldc = hg_b_param(b, HG_T_I64, "ldc");
  hg_val_t sa = hg_b_param(b, HG_T_I64, "batch_stride_a");
  hg_val_t sb = hg_b_param(b, HG_T_I64, "batch_stride_b");
  hg_val_t sc = hg_b_param(b, HG_T_I64, "batch_stride_c");
  hg_val_t alpha = hg_b_param(b, HG_T_F32, "alpha"), beta = hg_b_param(b, HG_T_F32, "beta");
  hg_val_t scale_a = HG_NONE, scale_b = HG_NONE, slda = HG_NONE, sldb = HG_NONE;
  if (scale != HG_SCALE_TENSOR) {
    scale_a = hg_b_param(b, HG_T_I64, "scale_a");
    scale_b = hg_b_param(b, HG_T_I64, "scale_b");
    slda = hg_b_param(b, HG_T_I64, "scale_lda");
    sldb = hg_b_param(b, HG_T_I64, "scale_ldb");
  }

  /* Two REF_T x REF_T f32 tiles: sA[row][k] and sB[k][col]. */
  const uint32_t tile_bytes = REF_T * REF_T * 4;
  const uint32_t off_a = hg_b_smem_reserve(b, tile_bytes, 16);
  const uint32_t off_b = hg_b_smem_reserve(b, tile_bytes, 16);
  hg_val_t tid = hg_b_sreg(b, HG_TID_X);
  hg_val_t tx = hg_b_bin(b, HG_AND, tid, hg_b_i32(b, REF_T - 1));
  hg_val_t ty = hg_b_bin(b, HG_SHR_U, tid, hg_b_i32(b, 4));
  hg_val_t m = hg_b_mad(b, hg_b_sreg(b, HG_CTAID_Y), hg_b_i32(b, REF_T), ty);
  hg_val_t n = hg_b_mad(b, hg_b_sreg(b, HG_CTAID_X), hg_b_i32(b, REF_T), tx);
  hg_val_t bz = hg_b_zext(b, hg_b_sreg(b, HG_CTAID_Z));
  hg_val_t boff_a = hg_b_bin(b, HG_MUL, bz, sa), boff_b = hg_b_bin(b, HG_MUL, bz, sb);
  hg_val_t my_slot = hg_b_bin(b, HG_SHL, tid, hg_b_i32(b, 2)); /* (ty*16+tx)*4 bytes */
  hg_val_t slot_a = hg_b_bin(b, HG_ADD, hg_b_smem_addr(b, off_a), my_slot);
  hg_val_t slot_b = hg_b_bin(b, HG_ADD, hg_b_smem_addr(b, off_b), my_slot);
  hg_val_t m_in = hg_b_cmp(b, HG_LT_S, m, M), n_in = hg_b_cmp(b, HG_LT_S, n, N);

  hg_val_t acc = hg_b_var(b, HG_T_F32, hg_b_f32(b, 0.0f));
  /* rows and columns past the matrix read the last one's scales (never stored) */
  hg_val_t m_c = hg_b_sext(b, hg_b_bin(b, HG_MIN_S, m, hg_b_bin(b, HG_SUB, M, hg_b_i32(b, 1))));
  hg_val_t n_c = hg_b_sext(b, hg_b_bin(b, HG_MIN_S, n, hg_b_bin(b, HG_SUB, N, hg_b_i32(b, 1))));
  hg_val_t k0 = hg_b_for(b, hg_b_i32(b, 0), K, hg_b_i32(b, REF_T));
  {
    /* block scales: a 16-wide K tile lies in one 128-wide k-block, whose factor sa(m, kb)
     * sb(n / 128, kb) multiplies the tile's sum */
    hg_val_t sum = acc;
    if (scale == HG_SCALE_BLOCK) sum = hg_b_var(b, HG_T_F32, hg_b_f32(b, 0.0f));
    /* A(m, k0+tx) -> sA[ty][tx]; B(k0+ty, n) -> sB[ty][tx]; zero outside the matrix. */
    hg_val_t ka = hg_b_bin(b, HG_ADD, k0, tx), kb = hg_b_bin(b, HG_ADD, k0, ty);
    stage_element(b, p->a_type, p->a_k_major, A, boff_a, lda, m, ka,
                  hg_b_bin(b, HG_AND, m_in, hg_b_cmp(b, HG_LT_S, ka, K)), slot_a);
    stage_element(b, p->b_type, p->b_k_major, B, boff_b, ldb, n, kb,
                  hg_b_bin(b, HG_AND, n_in, hg_b_cmp(b, HG_LT_S, kb, K)), slot_b);
    hg_b_bar_sync(b, 0, 0);
    hg_val_t row_a = hg_b_bin(b, HG_ADD, hg_b_smem_addr(b, off_a),
                              hg_b_bin(b, HG_SHL, ty, hg_b_i32(b, 6))); /* ty*16*4 */
    hg_val_t col_b =
        hg_b_bin(b, HG_ADD, hg_b_smem_addr(b, off_b), hg_b_bin(b, HG_SHL, tx, hg_b_i32(b, 2)));
    for (int kk = 0; kk < REF_T; kk++) {
      hg_val_t x, y;
      hg_b_load(b, HG_SHARED, HG_T_F32, 0, 1, hg_b_bin(b, HG_ADD, row_a, hg_b_i32(b, kk * 4)), &x);
      hg_b_load(b, HG_SHARED, HG_T_F32, 0, 1,
                hg_b_bin(b, HG_ADD, col_b, hg_b_i32(b, kk * REF_T * 4)), &y);
      hg_b_assign(b, sum, hg_b_ffma(b, x, y, sum));
    }
    if (scale == HG_SCALE_BLOCK) {
      hg_val_t kb = hg_b_sext(b, hg_b_bin(b, HG_SHR_U, k0, hg_b_i32(b, 7)));
      hg_val_t four = hg_b_i64(b, 4), fa, fb;
      hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 1,
                hg_b_mad(b, hg_b_mad(b, kb, slda, m_c), four, scale_a), &fa);
      hg_val_t jb = hg_b_bin(b, HG_SHR_U, n_c, hg_b_i64(b, 7));
      hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 1, hg_b_mad(b, hg_b_mad(b, jb, sldb, kb), four, scale_b),
                &fb);
      hg_b_assign(b, acc, hg_b_ffma(b, sum, hg_b_bin(b, HG_FMUL, fa, fb), acc));
    }
    hg_b_bar_sync(b, 0, 0);
  }
  hg_b_endfor(b);
  if (scale == HG_SCALE_ROW) {
    hg_val_t four = hg_b_i64(b, 4), fa, fb;
    hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 1, hg_b_mad(b, m_c, four, scale_a), &fa);
    hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 1, hg_b_mad(b, n_c, four, scale_b), &fb);
    hg_b_assign(b, acc, hg_b_bin(b, HG_FMUL, acc, hg_b_bin(b, HG_FMUL, fa, fb)));
  }

  hg_b_if(b, hg_b_bin(b, HG_AND, m_in, n_in));
  {
    hg_val_t out = hg_b_var(b, HG_T_F32, hg_b_bin(b, HG_FMUL, alpha, acc));
    hg_b_if(b, hg_b_cmp(b, HG_FEQ, beta, hg_b_f32(b, 0.0f)));
    hg_b_else(b);
    {
      hg_val_t boff_c = hg_b_bin(b, HG_MUL, bz, sc);
      hg_val_t cv = load_as_f32(b, ct, elem_addr(b, C, boff_c, m, ldc, n, ec));
      hg_b_assign(b, out, hg_b_ffma(b, beta, cv, out));
    }
    hg_b_endif(b);
    /* dref is packed f32: batch * M * N. */
    hg_val_t mn = hg_b_bin(b, HG_MUL, hg_b_sext(b, M), hg_b_sext(b, N));
    hg_val_t daddr = elem_addr(b, D, hg_b_bin(b, HG_MUL, bz, mn), m, hg_b_sext(b, N), n, 4);
    hg_b_store(b, HG_GLOBAL, 0, 1, daddr, &out);
  }
  hg_b_endif(b);
  return end(b, be, k);
}

/* 16 bytes a thread when every row holds whole 16-byte chunks, else one element */
int hg_gen_bias_act_chunk(const hg_gemm_problem_t *p) {
  const int e = hg_dtype_bytes(p->d_type), v = e > 0 && e <= 16 ? 16 / e : 1;
  return p->n % v == 0 && p->ldd % v == 0 && p->batch_stride_d % v == 0 ? v : 1;
}

hg_status_t hg_gen_bias_act(const hg_gemm_problem_t *p, hg_gelu_alg_t gelu, hg_backend_t be,
                            hg_kernel_t *k) {
  const hg_dtype_t t = p->d_type;
  if ((int)gelu < 0 || gelu >= HG_GELU_ALG_COUNT)
    return hg_error(HG_ERR_INVALID,
                    "erf GELU formula %d is not known (poly7 0, as 1, poly5 2, poly5t 3)",
                    (int)gelu);
  const int e = hg_dtype_bytes(t);
  if (t != HG_BF16 && t != HG_F16 && t != HG_F32)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "the bias + activation kernel takes bf16, f16 or f32 D, not %s",
                    hg_dtype_name(t));
  if (p->bias != HG_BIAS_NONE && p->bias_type != HG_BF16 && p->bias_type != HG_F16 &&
      p->bias_type != HG_F32)
    return hg_error(HG_ERR_UNSUPPORTED, "a bias of %s", hg_dtype_name(p->bias_type));
  const int vec = hg_gen_bias_act_chunk(p);
  char name[80];
  /* the formula names the kernel only where it is not the default */
  const bool named = p->act == HG_ACT_GELU && gelu != HG_GELU_POLY7;
  snprintf(name, sizeof name, "hg_bias_act_%s_%s%s%s%s_v%d", hg_dtype_name(t),
           p->bias == HG_BIAS_N   ? "n"
           : p->bias == HG_BIAS_M ? "m"
                                  : "",
           hg_gemm_act_name(p->act), named ? "_" : "", named ? hg_gelu_alg_name(gelu) : "", vec);
  hg_builder_t *b;
  HG_TRY(begin(name, 256, k, &b));
  /* D(i, j, z) = act(D(i, j, z) + bias[j or i]) in place; rows of n elements at ldd */
  hg_val_t d = hg_b_param(b, HG_T_I64, "d"), bias = hg_b_param(b, HG_T_I64, "bias");
  hg_val_t m = hg_b_param(b, HG_T_I64, "m"), n = hg_b_param(b, HG_T_I64, "n");
  hg_val_t batch = hg_b_param(b, HG_T_I64, "batch"), ldd = hg_b_param(b, HG_T_I64, "ldd");
  hg_val_t bsd = hg_b_param(b, HG_T_I64, "batch_stride_d");
  /* a row per CTA along x, 256 chunks of it per CTA along y, the batch along z: no 64-bit
   * division (a grid-stride loop dividing its index ran at a quarter of the memory's
   * bandwidth) */
  (void)batch;
  (void)m;
  hg_val_t r = hg_b_zext(b, hg_b_sreg(b, HG_CTAID_X));
  hg_val_t z = hg_b_zext(b, hg_b_sreg(b, HG_CTAID_Z));
  hg_val_t chunk = hg_b_bin(
      b, HG_ADD, hg_b_bin(b, HG_MUL, hg_b_zext(b, hg_b_sreg(b, HG_CTAID_Y)), hg_b_i64(b, 256)),
      hg_b_zext(b, hg_b_sreg(b, HG_TID_X)));
  hg_val_t c = hg_b_bin(b, HG_MUL, chunk, hg_b_i64(b, vec));
  hg_b_if(b, hg_b_cmp(b, HG_LT_S, c, n));
  hg_val_t addr =
      hg_b_bin(b, HG_ADD, d,
               hg_b_bin(b, HG_MUL, hg_b_mad(b, z, bsd, hg_b_mad(b, r, ldd, c)), hg_b_i64(b, e)));
  const int words = vec * e / 4 > 0 ? vec * e / 4 : 1;
  hg_val_t raw[4], x[8];
  if (vec == 1)
    x[0] = load_as_f32(b, t, addr);
  else
    hg_b_load(b, HG_GLOBAL, t == HG_F32 ? HG_T_F32 : HG_T_I32, 0, words, addr, raw);
  for (int j = 0; j < vec && vec > 1; j++)
    x[j] = t == HG_F32
               ? raw[j]
               : hg_b_unpack_f32(
                     b, t, j % 2 ? hg_b_bin(b, HG_SHR_U, raw[j / 2], hg_b_i32(b, 16)) : raw[j / 2]);
  for (int j = 0; j < vec; j++) {
    if (p->bias != HG_BIAS_NONE) {
      hg_val_t at = p->bias == HG_BIAS_N ? hg_b_bin(b, HG_ADD, c, hg_b_i64(b, j)) : r;
      x[j] =
          hg_b_bin(b, HG_FADD, x[j],
                   load_as_f32(b, p->bias_type,
                               hg_b_mad(b, at, hg_b_i64(b, hg_dtype_bytes(p->bias_type)), bias)));
    }
    if (p->act != HG_ACT_NONE) x[j] = hg_act_emit(b, p->act, gelu, p->act_lo, p->act_hi, x[j]);
  }
  if (vec == 1) {
    if (t == HG_F32) {
      hg_b_store(b, HG_GLOBAL, 0, 1, addr, &x[0]);
    } else {
      hg_val_t pk = hg_b_pack_f32x2(b, t, x[0], x[0]);
      hg_b_store(b, HG_GLOBAL, 16, 1, addr, &pk);
    }
  } else {
    for (int w = 0; w < words; w++)
      raw[w] = t == HG_F32 ? x[w] : hg_b_pack_f32x2(b, t, x[2 * w], x[2 * w + 1]);
    hg_b_store(b, HG_GLOBAL, 0, words, addr, raw);
  }
  hg_b_endif(b);
  return end(b, be, k);
}
