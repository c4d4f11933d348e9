/* The kernels the PTX and MLIR emit tests share (see emit_kernels.h).
 *
 * Why tests/support/: tests/CMakeLists.txt links every .c file of this folder into every
 * test executable, so this file needs no build change; naming a tests/emit/ file in just
 * the six emit targets that use it would need a per-target condition in that foreach. It
 * depends only on the library, so the other tests merely link code they do not call.
 *
 * No hg_test.h here: its counters are static, one set per translation unit, so a CHECK in
 * this file would count in a tally no test prints. The builders check nothing; they
 * return hg_builder_create's status for the caller's CHECK_OK (the one check the tests
 * made while building), and the tests check everything else. */
#include "support/emit_kernels.h"

#include <stdio.h>

#include "emit/ir.h"

void emit_sink(hg_builder_t *b, hg_val_t out, int slot, hg_val_t v) {
  hg_type_t t = hg_val_type(b, v);
  if (t == HG_T_PRED) v = hg_b_select(b, v, hg_b_i32(b, 1), hg_b_i32(b, 0));
  hg_val_t addr = hg_b_bin(b, HG_ADD, out, hg_b_i64(b, 8 * slot));
  hg_b_store(b, HG_GLOBAL, 0, 1, addr, &v);
}

/* A 128-thread kernel named `name`. */
static hg_status_t kernel(const char *name, hg_builder_t **out) {
  hg_status_t s = hg_builder_create(name, out);
  if (s.code == HG_OK) hg_b_set_threads(*out, 128);
  return s;
}

/* ---------------------------------------------------------------- non-TMA families */

hg_status_t emit_kernel_arith(bool mlir_extras, hg_builder_t **out) {
  hg_status_t st = kernel("arith", out);
  if (st.code != HG_OK) return st;
  hg_builder_t *b = *out;
  hg_val_t o = hg_b_param(b, HG_T_I64, "out");
  hg_val_t n = hg_b_param(b, HG_T_I32, "n");
  hg_val_t f = hg_b_param(b, HG_T_F32, "f");
  hg_val_t tid = hg_b_sreg(b, HG_TID_X);
  hg_val_t x32 = hg_b_bin(b, HG_SUB, tid, n);
  hg_val_t y32 = hg_b_bin(b, HG_ADD, n, hg_b_i32(b, 7));
  hg_val_t x64 = hg_b_sext(b, x32), y64 = hg_b_zext(b, y32);
  int slot = 0;
  for (int op = HG_ADD; op <= HG_SHR_U; op++) {
    emit_sink(b, o, slot++, hg_b_bin(b, (hg_binop_t)op, x32, y32));
    emit_sink(b, o, slot++, hg_b_bin(b, (hg_binop_t)op, x64, y64));
  }
  hg_val_t g = hg_b_i2f(b, x32);
  for (int op = HG_FADD; op <= HG_FMAX; op++) emit_sink(b, o, slot++, hg_b_bin(b, op, f, g));
  hg_val_t p = hg_b_cmp(b, HG_LT_S, x32, y32), q = hg_b_cmp(b, HG_GE_U, x64, y64);
  emit_sink(b, o, slot++, hg_b_bin(b, HG_AND, p, q));
  emit_sink(b, o, slot++, hg_b_bin(b, HG_OR, p, q));
  emit_sink(b, o, slot++, hg_b_bin(b, HG_XOR, p, q));
  emit_sink(b, o, slot++, hg_b_not(b, p));
  emit_sink(b, o, slot++, hg_b_not(b, x32));
  emit_sink(b, o, slot++, hg_b_not(b, x64));
  emit_sink(b, o, slot++, hg_b_mad(b, x32, y32, n));
  emit_sink(b, o, slot++, hg_b_mad(b, x64, y64, x64));
  emit_sink(b, o, slot++, hg_b_ffma(b, f, g, f));
  /* a separate multiply and add must stay two rounded steps (no contraction) */
  if (mlir_extras) emit_sink(b, o, slot++, hg_b_bin(b, HG_FADD, hg_b_bin(b, HG_FMUL, f, g), f));
  for (int c = HG_EQ; c <= HG_GE_U; c++) {
    emit_sink(b, o, slot++, hg_b_cmp(b, (hg_cmp_t)c, x32, y32));
    emit_sink(b, o, slot++, hg_b_cmp(b, (hg_cmp_t)c, x64, y64));
  }
  for (int c = HG_FLT; c <= HG_FEQ; c++) emit_sink(b, o, slot++, hg_b_cmp(b, (hg_cmp_t)c, f, g));
  emit_sink(b, o, slot++, hg_b_select(b, p, x32, y32));
  emit_sink(b, o, slot++, hg_b_select(b, p, x64, y64));
  emit_sink(b, o, slot++, hg_b_select(b, p, f, g));
  emit_sink(b, o, slot++, hg_b_select(b, p, q, hg_b_pred(b, true)));
  emit_sink(b, o, slot++, hg_b_trunc(b, x64));
  emit_sink(b, o, slot++, hg_b_f2i(b, f));
  emit_sink(b, o, slot++, hg_b_bitcast(b, HG_T_I32, f));
  emit_sink(b, o, slot++, hg_b_bitcast(b, HG_T_F32, x32));
  emit_sink(b, o, slot++, hg_b_i64(b, INT64_MIN));
  emit_sink(b, o, slot++, hg_b_i64(b, -5));
  emit_sink(b, o, slot++, hg_b_f32(b, -0.0f));
  emit_sink(b, o, slot++, hg_b_f32(b, 1.5f));
  if (mlir_extras) {
    /* shifts by constant amounts at and past the width: PTX clamps, and so must we */
    emit_sink(b, o, slot++, hg_b_bin(b, HG_SHL, x32, hg_b_i32(b, 40)));
    emit_sink(b, o, slot++, hg_b_bin(b, HG_SHR_S, x32, hg_b_i32(b, 32)));
    emit_sink(b, o, slot++, hg_b_bin(b, HG_SHR_U, x64, hg_b_i64(b, 64)));
  }
  return st;
}

hg_status_t emit_kernel_pack(emit_pack_vals_t *vals, hg_builder_t **out) {
  hg_status_t st = kernel("pack", out);
  if (st.code != HG_OK) return st;
  hg_builder_t *b = *out;
  hg_val_t o = hg_b_param(b, HG_T_I64, "out");
  hg_val_t lo = hg_b_param(b, HG_T_F32, "lo");
  hg_val_t hi = hg_b_param(b, HG_T_F32, "hi");
  hg_val_t bf = hg_b_pack_f32x2(b, HG_BF16, lo, hi);
  hg_val_t h = hg_b_pack_f32x2(b, HG_F16, lo, hi);
  emit_sink(b, o, 0, bf);
  emit_sink(b, o, 1, h);
  emit_sink(b, o, 2, hg_b_unpack_f32(b, HG_BF16, bf));
  emit_sink(b, o, 3, hg_b_unpack_f32(b, HG_F16, h));
  emit_sink(b, o, 4, hg_b_unpack_f32(b, HG_E4M3, h));
  emit_sink(b, o, 5, hg_b_unpack_f32(b, HG_E5M2, h));
  /* fp8 with saturation, read back; the warp reductions an amax takes */
  hg_val_t e4 = hg_b_pack_f32x2(b, HG_E4M3, lo, hi), e5 = hg_b_pack_f32x2(b, HG_E5M2, lo, hi);
  emit_sink(b, o, 6, hg_b_unpack_f32(b, HG_E4M3, e4));
  emit_sink(b, o, 7, hg_b_unpack_f32(b, HG_E5M2, e5));
  emit_sink(b, o, 8, hg_b_redux_sync(b, HG_RED_MAX, e4));
  emit_sink(b, o, 9, hg_b_redux_sync(b, HG_RED_ADD, e5));
  emit_sink(b, o, 10, hg_b_redux_sync(b, HG_RED_XOR, bf));
  *vals = (emit_pack_vals_t){.lo = lo, .hi = hi, .bf = bf, .h = h, .e4 = e4, .e5 = e5};
  return st;
}

hg_status_t emit_kernel_sregs(hg_builder_t **out) {
  hg_status_t st = kernel("sregs", out);
  if (st.code != HG_OK) return st;
  hg_builder_t *b = *out;
  hg_b_set_cluster(b, 2, 2, 1);
  hg_val_t o = hg_b_param(b, HG_T_I64, "out");
  for (int r = HG_TID_X; r <= HG_SMID; r++) emit_sink(b, o, r, hg_b_sreg(b, (hg_sreg_t)r));
  emit_sink(b, o, 40, hg_b_clock64(b));
  return st;
}

hg_status_t emit_kernel_memory(bool store_elsewhere, hg_builder_t **out) {
  hg_status_t st = kernel("memory", out);
  if (st.code != HG_OK) return st;
  hg_builder_t *b = *out;
  hg_b_set_cluster(b, 2, 1, 1);
  hg_val_t g = hg_b_param(b, HG_T_I64, "g");
  uint32_t off = hg_b_smem_reserve(b, 256, 16);
  hg_val_t s = hg_b_smem_addr(b, off);
  hg_val_t rank = hg_b_sreg(b, HG_CLUSTER_CTARANK);
  hg_val_t remote = hg_b_mapa(b, s, hg_b_bin(b, HG_XOR, rank, hg_b_i32(b, 1)));
  hg_val_t addrs[3] = {g, s, remote};
  hg_space_t spaces[3] = {HG_GLOBAL, HG_SHARED, HG_SHARED_CLUSTER};
  static const hg_type_t types[3] = {HG_T_I32, HG_T_I64, HG_T_F32};
  for (int sp = 0; sp < 3; sp++) {
    for (int t = 0; t < 3; t++)
      for (int n = 1; n <= 4; n *= 2) {
        if (types[t] == HG_T_I64 && n == 4) continue;
        hg_val_t v[4];
        hg_b_load(b, spaces[sp], types[t], 0, n, addrs[sp], v);
        hg_val_t dst = addrs[sp];
        if (store_elsewhere)
          dst = sp == 0 ? hg_b_bin(b, HG_ADD, addrs[sp], hg_b_i64(b, 64))
                        : hg_b_bin(b, HG_ADD, addrs[sp], hg_b_i32(b, 64));
        hg_b_store(b, spaces[sp], 0, n, dst, v);
      }
    for (int bits = 8; bits <= 16; bits *= 2) {
      hg_val_t v[1];
      hg_b_load(b, spaces[sp], HG_T_I32, bits, 1, addrs[sp], v);
      hg_val_t dst = addrs[sp];
      if (store_elsewhere)
        dst = sp == 0 ? hg_b_bin(b, HG_ADD, addrs[sp], hg_b_i64(b, 128))
                      : hg_b_bin(b, HG_ADD, addrs[sp], hg_b_i32(b, 128));
      hg_b_store(b, spaces[sp], bits, 1, dst, v);
    }
  }
  /* streaming (.cs) global stores: a vector of four u32, one f32, one u64 */
  {
    hg_val_t v[4];
    hg_b_load(b, HG_GLOBAL, HG_T_I32, 0, 4, g, v);
    hg_b_store_cs(b, 0, 4, hg_b_bin(b, HG_ADD, g, hg_b_i64(b, 2048)), v);
    hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 1, g, v);
    hg_b_store_cs(b, 0, 1, hg_b_bin(b, HG_ADD, g, hg_b_i64(b, 2064)), v);
    hg_b_load(b, HG_GLOBAL, HG_T_I64, 0, 1, g, v);
    hg_b_store_cs(b, 0, 1, hg_b_bin(b, HG_ADD, g, hg_b_i64(b, 2072)), v);
  }
  hg_b_atomic_add_f32(b, g, hg_b_f32(b, 1.0f));
  /* vector reductions (split-K's in-place partial sums): red.global.add.v2/v4.f32, one
   * addend a variable (a load in the MLIR printer) */
  {
    hg_val_t w = hg_b_var(b, HG_T_F32, hg_b_f32(b, 2.0f));
    hg_val_t v4[4] = {hg_b_f32(b, 1.0f), w, hg_b_f32(b, 3.0f), w};
    hg_b_atomic_add_f32v(b, hg_b_bin(b, HG_ADD, g, hg_b_i64(b, 1024)), 4, v4);
    hg_b_atomic_add_f32v(b, hg_b_bin(b, HG_ADD, g, hg_b_i64(b, 1040)), 2, v4);
  }
  /* the F32 functions of the epilogue's activations, each result stored */
  {
    hg_val_t x;
    hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 1, hg_b_bin(b, HG_ADD, g, hg_b_i64(b, 200)), &x);
    for (int f = HG_FABS; f <= HG_FTANH; f++) {
      hg_val_t y = hg_b_funary(b, (hg_funary_t)f, x);
      hg_b_store(b, HG_GLOBAL, 0, 1, hg_b_bin(b, HG_ADD, g, hg_b_i64(b, 204 + 4 * f)), &y);
    }
  }
  /* a split-K arrival: release, count, acquire; the old count is kept (stored) */
  hg_b_fence_gpu(b);
  hg_val_t old = hg_b_atomic_add_u32(b, hg_b_bin(b, HG_ADD, g, hg_b_i64(b, 192)), hg_b_i32(b, 1));
  hg_b_fence_gpu(b);
  hg_b_store(b, HG_GLOBAL, 0, 1, hg_b_bin(b, HG_ADD, g, hg_b_i64(b, 196)), &old);
  return st;
}

/* Every (op, element type) pair hg_b_red takes: those of cp.reduce.async.bulk.tensor. */
static const struct {
  hg_reduce_op_t op;
  hg_dtype_t t;
} reds[] = {
    {HG_RED_ADD, HG_U32}, {HG_RED_ADD, HG_S32},  {HG_RED_ADD, HG_U64}, {HG_RED_ADD, HG_F32},
    {HG_RED_ADD, HG_F16}, {HG_RED_ADD, HG_BF16}, {HG_RED_MIN, HG_U32}, {HG_RED_MIN, HG_S32},
    {HG_RED_MIN, HG_F16}, {HG_RED_MIN, HG_BF16}, {HG_RED_MAX, HG_U32}, {HG_RED_MAX, HG_S32},
    {HG_RED_MAX, HG_F16}, {HG_RED_MAX, HG_BF16}, {HG_RED_INC, HG_U32}, {HG_RED_DEC, HG_U32},
    {HG_RED_AND, HG_U32}, {HG_RED_AND, HG_S32},  {HG_RED_AND, HG_U64}, {HG_RED_OR, HG_U32},
    {HG_RED_OR, HG_S32},  {HG_RED_OR, HG_U64},   {HG_RED_XOR, HG_U32}, {HG_RED_XOR, HG_S32},
    {HG_RED_XOR, HG_U64},
};

hg_status_t emit_kernel_reductions(hg_builder_t **out) {
  hg_status_t st = kernel("reductions", out);
  if (st.code != HG_OK) return st;
  hg_builder_t *b = *out;
  hg_val_t g = hg_b_param(b, HG_T_I64, "g");
  for (int pass = 0; pass < 2; pass++) {
    hg_val_t i = HG_NONE;
    if (pass) {
      i = hg_b_for(b, hg_b_i32(b, 0), hg_b_sreg(b, HG_TID_X), hg_b_i32(b, 1));
      hg_b_if(b, hg_b_cmp(b, HG_NE, i, hg_b_i32(b, 3)));
    }
    for (int k = 0; k < (int)(sizeof reds / sizeof reds[0]); k++) {
      const hg_dtype_t t = reds[k].t;
      hg_val_t at = hg_b_bin(b, HG_ADD, g, hg_b_i64(b, 8 * k));
      if (pass) at = hg_b_bin(b, HG_ADD, at, hg_b_sext(b, hg_b_bin(b, HG_SHL, i, hg_b_i32(b, 9))));
      hg_val_t from = hg_b_bin(b, HG_ADD, at, hg_b_i64(b, 8 * 64));
      hg_val_t v;
      if (t == HG_U64)
        hg_b_load(b, HG_GLOBAL, HG_T_I64, 0, 1, from, &v);
      else if (t == HG_F32)
        hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 1, from, &v);
      else
        hg_b_load(b, HG_GLOBAL, HG_T_I32, hg_dtype_bytes(t) == 2 ? 16 : 0, 1, from, &v);
      hg_b_red(b, reds[k].op, t, at, v);
    }
    if (pass) {
      hg_b_endif(b);
      hg_b_endfor(b);
    }
  }
  return st;
}

hg_status_t emit_kernel_sync(hg_builder_t **out) {
  hg_status_t st = kernel("sync", out);
  if (st.code != HG_OK) return st;
  hg_builder_t *b = *out;
  hg_b_set_cluster(b, 4, 1, 1);
  uint32_t boff = hg_b_smem_reserve(b, 8, 8);
  hg_val_t bar = hg_b_smem_addr(b, boff);
  hg_val_t rank = hg_b_sreg(b, HG_CLUSTER_CTARANK);
  hg_val_t elected = hg_b_elect_sync(b);
  hg_b_if(b, elected);
  hg_b_mbar_init(b, bar, hg_b_i32(b, 4));
  hg_b_fence_mbarrier_init(b);
  hg_b_endif(b);
  hg_b_cluster_arrive(b, true);
  hg_b_cluster_wait(b);
  hg_b_mbar_arrive(b, bar);
  hg_b_mbar_arrive_cluster(b, bar, hg_b_i32(b, 0));
  hg_b_mbar_arrive_expect_tx(b, bar, hg_b_i32(b, 1024));
  hg_b_mbar_expect_tx(b, bar, hg_b_i32(b, 512));
  hg_val_t parity = hg_b_bin(b, HG_AND, rank, hg_b_i32(b, 1));
  hg_val_t done = hg_b_mbar_try_wait(b, bar, parity);
  hg_b_if(b, hg_b_not(b, done));
  hg_b_mbar_wait(b, bar, parity);
  hg_b_endif(b);
  hg_b_bar_sync(b, 0, 0);
  hg_b_bar_sync(b, 1, 64);
  hg_b_bar_arrive(b, 2, 96);
  hg_b_fence_proxy_async(b);
  hg_b_cluster_arrive(b, false);
  hg_b_cluster_wait(b);
  return st;
}

hg_status_t emit_kernel_flow(hg_builder_t **out) {
  hg_status_t st = kernel("flow", out);
  if (st.code != HG_OK) return st;
  hg_builder_t *b = *out;
  hg_val_t o = hg_b_param(b, HG_T_I64, "out");
  hg_val_t n = hg_b_param(b, HG_T_I32, "n");
  hg_b_comment(b, "sum the odd numbers below n\nin a loop with an if");
  hg_b_comment(b, "odd\tchars: \xc3\xa9");
  hg_val_t sum = hg_b_var(b, HG_T_I32, hg_b_i32(b, 0));
  hg_val_t k = hg_b_var(b, HG_T_I32, hg_b_i32(b, 0));
  hg_val_t done = hg_b_var(b, HG_T_PRED, hg_b_pred(b, false));
  hg_val_t fsum = hg_b_var(b, HG_T_F32, HG_NONE);
  hg_val_t wide = hg_b_var(b, HG_T_I64, hg_b_i64(b, 0));
  hg_b_assign(b, fsum, hg_b_f32(b, 0));
  hg_b_loop(b);
  hg_b_break_if(b, hg_b_cmp(b, HG_GE_S, k, n));
  hg_b_if(b, hg_b_cmp(b, HG_EQ, hg_b_bin(b, HG_AND, k, hg_b_i32(b, 1)), hg_b_i32(b, 1)));
  hg_b_assign(b, sum, hg_b_bin(b, HG_ADD, sum, k));
  hg_b_else(b);
  hg_b_if(b, hg_b_cmp(b, HG_GT_S, k, hg_b_i32(b, 1000)));
  hg_b_assign(b, done, hg_b_pred(b, true));
  hg_b_break_if(b, done);
  hg_b_endif(b);
  hg_b_endif(b);
  hg_b_assign(b, k, hg_b_bin(b, HG_ADD, k, hg_b_i32(b, 1)));
  hg_b_endloop(b);
  hg_val_t i = hg_b_for(b, hg_b_i32(b, 0), n, hg_b_i32(b, 2));
  hg_b_assign(b, fsum, hg_b_bin(b, HG_FADD, fsum, hg_b_i2f(b, i)));
  hg_b_assign(b, wide, hg_b_bin(b, HG_ADD, wide, hg_b_sext(b, i)));
  hg_b_endfor(b);
  hg_b_if(b, hg_b_cmp(b, HG_EQ, n, hg_b_i32(b, 0)));
  hg_b_return(b);
  hg_b_endif(b);
  emit_sink(b, o, 0, sum);
  emit_sink(b, o, 1, fsum);
  emit_sink(b, o, 2, wide);
  emit_sink(b, o, 3, done);
  return st;
}

hg_status_t emit_kernel_directives(bool cluster, hg_builder_t **out) {
  hg_status_t st = kernel("directives", out);
  if (st.code != HG_OK) return st;
  hg_b_set_threads(*out, 256);
  hg_b_set_min_ctas(*out, 2);
  if (cluster) hg_b_set_cluster(*out, 2, 1, 1);
  return st;
}

/* ---------------------------------------------------------------- TMA family */

hg_status_t emit_tma_kernel(const char *name, emit_tma_kernel_t *k) {
  *k = (emit_tma_kernel_t){0};
  hg_status_t st = kernel(name, &k->b);
  if (st.code != HG_OK) return st;
  k->map = hg_b_param_tmap(k->b, "map");
  uint32_t tile = hg_b_smem_reserve(k->b, 8192, 1024);
  uint32_t bar = hg_b_smem_reserve(k->b, 8, 8);
  k->tile = hg_b_smem_addr(k->b, tile);
  k->bar = hg_b_smem_addr(k->b, bar);
  return st;
}

/* Coordinates ctaid.x - 16 d for d < rank. */
static void coords_for(hg_builder_t *b, int rank, hg_val_t *c) {
  hg_val_t ctaid = hg_b_sreg(b, HG_CTAID_X);
  for (int d = 0; d < rank; d++) c[d] = hg_b_bin(b, HG_ADD, ctaid, hg_b_i32(b, -16 * d));
}

hg_status_t emit_kernel_tma_load(int rank, hg_builder_t **out) {
  char name[32];
  snprintf(name, sizeof name, "tma_load_%dd", rank);
  emit_tma_kernel_t k;
  hg_status_t st = emit_tma_kernel(name, &k);
  *out = k.b;
  if (st.code != HG_OK) return st;
  hg_builder_t *b = k.b;
  hg_b_set_cluster(b, 2, 1, 1);
  hg_val_t c[5];
  coords_for(b, rank, c);
  hg_val_t mask = hg_b_i32(b, 0x3);
  hg_val_t first = hg_b_cache_policy(b, HG_EVICT_FIRST);
  hg_val_t last = hg_b_cache_policy(b, HG_EVICT_LAST);
  hg_val_t normal = hg_b_cache_policy(b, HG_EVICT_NORMAL);
  hg_b_mbar_init(b, k.bar, hg_b_i32(b, 1));
  hg_b_fence_mbarrier_init(b);
  hg_b_mbar_arrive_expect_tx(b, k.bar, hg_b_i32(b, 4 * 8192));
  hg_b_tma_load(b, k.map, k.tile, k.bar, rank, c, HG_NONE, HG_NONE);
  hg_b_tma_load(b, k.map, k.tile, k.bar, rank, c, mask, HG_NONE);
  hg_b_tma_load(b, k.map, k.tile, k.bar, rank, c, HG_NONE, first);
  hg_b_tma_load(b, k.map, k.tile, k.bar, rank, c, mask, last);
  hg_b_tma_load(b, k.map, k.tile, k.bar, rank, c, HG_NONE, normal);
  hg_b_mbar_wait(b, k.bar, hg_b_i32(b, 0));
  return st;
}

const hg_reduce_op_t emit_tma_reds[EMIT_TMA_NREDS] = {
    HG_RED_ADD, HG_RED_MIN, HG_RED_MAX, HG_RED_INC, HG_RED_DEC, HG_RED_AND, HG_RED_OR, HG_RED_XOR};
const char *const emit_tma_red_names[EMIT_TMA_NREDS] = {"add", "min", "max", "inc",
                                                        "dec", "and", "or",  "xor"};

hg_status_t emit_kernel_tma_out(int rank, hg_builder_t **out) {
  char name[32];
  snprintf(name, sizeof name, "tma_out_%dd", rank);
  emit_tma_kernel_t k;
  hg_status_t st = emit_tma_kernel(name, &k);
  *out = k.b;
  if (st.code != HG_OK) return st;
  hg_builder_t *b = k.b;
  hg_val_t c[5];
  coords_for(b, rank, c);
  hg_b_tmap_prefetch(b, k.map);
  hg_b_tma_prefetch(b, k.map, rank, c);
  hg_b_fence_proxy_async(b);
  hg_b_tma_store(b, k.map, k.tile, rank, c);
  hg_b_tma_store_hint(b, k.map, k.tile, rank, c, hg_b_cache_policy(b, HG_EVICT_FIRST));
  for (int r = 0; r < EMIT_TMA_NREDS; r++)
    hg_b_tma_reduce(b, emit_tma_reds[r], k.map, k.tile, rank, c);
  hg_b_bulk_commit(b);
  hg_b_bulk_wait(b, 1, true);
  hg_b_bulk_wait(b, 0, false);
  return st;
}

hg_status_t emit_kernel_negative_coord(hg_val_t *coord, hg_builder_t **out) {
  hg_status_t st = kernel("negative_coord", out);
  *coord = HG_NONE;
  if (st.code != HG_OK) return st;
  hg_builder_t *b = *out;
  hg_val_t map = hg_b_param_tmap(b, "map");
  hg_val_t tile = hg_b_smem_addr(b, hg_b_smem_reserve(b, 64 * 4, 128));
  hg_val_t bar = hg_b_smem_addr(b, hg_b_smem_reserve(b, 8, 8));
  hg_val_t box = hg_b_i32(b, 64);
  hg_val_t ctaid = hg_b_sreg(b, HG_CTAID_X);
  hg_val_t start = hg_b_bin(b, HG_MUL, ctaid, box);
  *coord = hg_b_bin(b, HG_SUB, start, hg_b_i32(b, 3)); /* -3 for CTA 0 */
  hg_b_name(b, *coord, "coord");
  hg_b_mbar_init(b, bar, hg_b_i32(b, 1));
  hg_b_fence_mbarrier_init(b);
  hg_b_mbar_arrive_expect_tx(b, bar, hg_b_i32(b, 64 * 4));
  hg_b_tma_load(b, map, tile, bar, 1, coord, HG_NONE, HG_NONE);
  hg_b_mbar_wait(b, bar, hg_b_i32(b, 0));
  return st;
}

hg_status_t emit_kernel_coords_from_params(bool hint_and_prefetch, hg_builder_t **out) {
  hg_status_t st = kernel("coords_from_params", out);
  if (st.code != HG_OK) return st;
  hg_builder_t *b = *out;
  hg_val_t map = hg_b_param_tmap(b, "map");
  hg_val_t x0 = hg_b_param(b, HG_T_I32, "x0");
  hg_val_t tile = hg_b_smem_addr(b, hg_b_smem_reserve(b, 4096, 1024));
  hg_val_t bar = hg_b_smem_addr(b, hg_b_smem_reserve(b, 8, 8));
  hg_val_t hint = hint_and_prefetch ? hg_b_cache_policy(b, HG_EVICT_FIRST) : HG_NONE;
  hg_val_t i = hg_b_for(b, hg_b_i32(b, -2), hg_b_i32(b, 2), hg_b_i32(b, 1));
  hg_val_t c[5] = {x0, i, hg_b_i32(b, -1), hg_b_bin(b, HG_SUB, i, x0), hg_b_i32(b, INT32_MIN)};
  hg_b_tma_load(b, map, tile, bar, 2, c, HG_NONE, HG_NONE);
  hg_b_tma_load(b, map, tile, bar, 5, c, HG_NONE, HG_NONE);
  if (hint_and_prefetch) {
    hg_b_tma_load(b, map, tile, bar, 5, c, HG_NONE, hint);
    hg_b_tma_prefetch(b, map, 5, c);
  }
  hg_b_tma_store(b, map, tile, 5, c);
  hg_b_endfor(b);
  return st;
}

/* ---------------------------------------------------------------- warpgroup family */

const emit_wgmma_family_t emit_wgmma_families[EMIT_WGMMA_NFAMILIES] = {
    {HG_F16, HG_F16, HG_F16},   {HG_F16, HG_F16, HG_F32},   {HG_BF16, HG_BF16, HG_F32},
    {HG_TF32, HG_TF32, HG_F32}, {HG_E4M3, HG_E4M3, HG_F32}, {HG_E4M3, HG_E5M2, HG_F16},
    {HG_E5M2, HG_E4M3, HG_F32}, {HG_E5M2, HG_E5M2, HG_F16}, {HG_E4M3, HG_E4M3, HG_F16},
    {HG_E5M2, HG_E5M2, HG_F32}, {HG_S8, HG_S8, HG_S32},     {HG_S8, HG_U8, HG_S32},
    {HG_U8, HG_S8, HG_S32},     {HG_U8, HG_U8, HG_S32},
};

const emit_wgmma_family_t emit_wgmma_reps[EMIT_WGMMA_NREPS] = {{HG_BF16, HG_BF16, HG_F32},
                                                               {HG_F16, HG_F16, HG_F16},
                                                               {HG_TF32, HG_TF32, HG_F32},
                                                               {HG_E4M3, HG_E5M2, HG_F32},
                                                               {HG_U8, HG_S8, HG_S32}};

bool emit_sixteen_bit(hg_dtype_t t) {
  return t == HG_F16 || t == HG_BF16;
}

void emit_wgmma_mnemonic(const emit_wgmma_family_t *fa, int n, char *buf, size_t cap) {
  int kk = (fa->a == HG_TF32) ? 8 : emit_sixteen_bit(fa->a) ? 16 : 32;
  snprintf(buf, cap, "wgmma.mma_async.sync.aligned.m64n%dk%d.%s.%s.%s {", n, kk,
           hg_dtype_name(fa->acc), hg_dtype_name(fa->a), hg_dtype_name(fa->b));
}

const char *emit_wgmma_version(const emit_wgmma_family_t *fa) {
  bool mixed_int = fa->acc == HG_S32 && fa->a != fa->b;
  return mixed_int ? ".version 8.4\n" : ".version 8.0\n";
}

/* A warpgroup kernel with 128 accumulator variables of the family's type, one A
 * descriptor, four A fragment registers and a B descriptor. */
typedef struct mma_kernel {
  hg_builder_t *b;
  hg_val_t acc[128], a_desc, a_regs[4], b_desc, scale_d;
} mma_kernel_t;

static hg_status_t mma_kernel(const char *name, hg_dtype_t acc, mma_kernel_t *k) {
  hg_status_t st = kernel(name, &k->b);
  if (st.code != HG_OK) return st;
  hg_builder_t *b = k->b;
  hg_val_t base = hg_b_param(b, HG_T_I64, "desc");
  for (int i = 0; i < 128; i++)
    k->acc[i] = hg_b_var(b, acc == HG_F32 ? HG_T_F32 : HG_T_I32, HG_NONE);
  k->a_desc = base;
  k->b_desc = hg_b_bin(b, HG_ADD, base, hg_b_i64(b, 64));
  hg_val_t tid = hg_b_sreg(b, HG_TID_X);
  for (int i = 0; i < 4; i++) k->a_regs[i] = hg_b_bin(b, HG_MUL, tid, hg_b_i32(b, i + 1));
  k->scale_d = hg_b_cmp(b, HG_NE, tid, hg_b_i32(b, 0));
  return st;
}

static void mma(mma_kernel_t *k, hg_wgmma_op_t op, hg_val_t scale_d) {
  hg_b_wgmma(k->b, &op, k->acc, op.a_regs ? k->a_regs : &k->a_desc, k->b_desc, scale_d);
}

/* Keep accumulators alive past the wgmmas so that ptxas cannot drop them. */
static void finish(mma_kernel_t *k) {
  hg_builder_t *b = k->b;
  hg_b_wgmma_commit(b);
  hg_b_wgmma_wait(b, 0);
  hg_val_t out = hg_b_param(b, HG_T_I64, "out");
  for (int i = 0; i < 128; i += 4) {
    hg_val_t v[4] = {k->acc[i], k->acc[i + 1], k->acc[i + 2], k->acc[i + 3]};
    hg_b_store(b, HG_GLOBAL, 0, 4, hg_b_bin(b, HG_ADD, out, hg_b_i64(b, 4 * i)), v);
  }
}

hg_status_t emit_kernel_wgmma_matrix(const emit_wgmma_family_t *fa, bool const_scale_too,
                                     emit_wgmma_matrix_t *info, hg_builder_t **out) {
  static const int ns_float[] = {8, 24, 64, 136, 256};
  static const int ns_int[] = {8, 24, 48, 144, 256};
  const int *ns = fa->acc == HG_S32 ? ns_int : ns_float;
  *info = (emit_wgmma_matrix_t){.ns = ns};
  char name[64];
  snprintf(name, sizeof name, "mma_%s_%s_%s", hg_dtype_name(fa->a), hg_dtype_name(fa->b),
           hg_dtype_name(fa->acc));
  mma_kernel_t k;
  hg_status_t st = mma_kernel(name, fa->acc, &k);
  *out = k.b;
  if (st.code != HG_OK) return st;
  hg_val_t one = HG_NONE, zero = HG_NONE;
  if (const_scale_too) {
    one = hg_b_pred(k.b, true);
    zero = hg_b_pred(k.b, false);
  }
  hg_b_wgmma_fence(k.b);
  for (int i = 0; i < 5; i++) {
    for (int regs = 0; regs <= 1; regs++) {
      int tmax = emit_sixteen_bit(fa->a) ? (regs ? 1 : 3) : 0; /* transpose combinations */
      for (int t = 0; t <= tmax; t++) {
        hg_wgmma_op_t op = {.n = ns[i], .a = fa->a, .b = fa->b, .acc = fa->acc};
        op.a_regs = regs;
        op.trans_b = t & 1;
        op.trans_a = regs ? false : (t >> 1) & 1;
        if (const_scale_too && !regs) {
          mma(&k, op, t & 1 ? zero : one);
          info->n_const++;
        }
        mma(&k, op, k.scale_d);
        info->n_runtime++;
      }
    }
  }
  finish(&k);
  return st;
}

hg_status_t emit_kernel_wgmma_every_n(size_t rep, bool const_scale, int *count,
                                      hg_builder_t **out) {
  const emit_wgmma_family_t *fa = &emit_wgmma_reps[rep];
  char name[64];
  snprintf(name, sizeof name, "mma_all_n_%zu", rep);
  *count = 0;
  mma_kernel_t k;
  hg_status_t st = mma_kernel(name, fa->acc, &k);
  *out = k.b;
  if (st.code != HG_OK) return st;
  hg_val_t scale = const_scale ? hg_b_pred(k.b, true) : k.scale_d;
  hg_b_wgmma_fence(k.b);
  for (int n = 8; n <= 256; n += 8) {
    hg_wgmma_op_t op = {.n = n, .a = fa->a, .b = fa->b, .acc = fa->acc};
    if (hg_ir_wgmma_validate(&op).code == HG_OK) {
      mma(&k, op, scale);
      (*count)++;
    }
  }
  finish(&k);
  return st;
}

hg_status_t emit_kernel_warp_specialized(hg_builder_t **out) {
  hg_status_t st = hg_builder_create("warp_specialized", out);
  if (st.code != HG_OK) return st;
  hg_builder_t *b = *out;
  hg_b_set_threads(b, 384);
  hg_b_set_min_ctas(b, 1);
  hg_val_t wg = hg_b_bin(b, HG_SHR_U, hg_b_sreg(b, HG_TID_X), hg_b_i32(b, 7));
  hg_b_if(b, hg_b_cmp(b, HG_EQ, wg, hg_b_i32(b, 0)));
  hg_b_comment(b, "producer warpgroup: few registers");
  hg_b_setmaxnreg(b, false, 40);
  hg_b_else(b);
  hg_b_comment(b, "consumer warpgroups: many registers");
  hg_b_setmaxnreg(b, true, 232);
  hg_b_endif(b);
  return st;
}

hg_status_t emit_kernel_stmatrix(hg_builder_t **out) {
  hg_status_t st = kernel("stmatrix", out);
  if (st.code != HG_OK) return st;
  hg_builder_t *b = *out;
  hg_val_t smem = hg_b_smem_addr(b, hg_b_smem_reserve(b, 4096, 128));
  hg_val_t lane = hg_b_sreg(b, HG_LANEID);
  hg_val_t addr = hg_b_bin(b, HG_ADD, smem, hg_b_bin(b, HG_SHL, lane, hg_b_i32(b, 4)));
  hg_val_t f = hg_b_i2f(b, lane);
  hg_val_t r[4];
  for (int i = 0; i < 4; i++)
    r[i] = hg_b_pack_f32x2(b, HG_BF16, f, hg_b_bin(b, HG_FADD, f, hg_b_f32(b, (float)i)));
  for (int num = 1; num <= 4; num *= 2)
    for (int trans = 0; trans <= 1; trans++) hg_b_stmatrix(b, num, trans, addr, r);
  return st;
}

hg_status_t emit_kernel_gemm_like(bool comments, hg_builder_t **out) {
  enum { STAGES = 2, N = 128 };
  hg_status_t st = hg_builder_create("gemm_like", out);
  if (st.code != HG_OK) return st;
  hg_builder_t *b = *out;
  hg_b_set_threads(b, 384);
  hg_b_set_min_ctas(b, 1);
  hg_b_set_cluster(b, 2, 1, 1);
  hg_val_t map_a = hg_b_param_tmap(b, "A");
  hg_val_t map_b = hg_b_param_tmap(b, "B");
  hg_val_t map_c = hg_b_param_tmap(b, "C");
  hg_val_t ktiles = hg_b_param(b, HG_T_I32, "k_tiles");
  uint32_t a_off[STAGES], b_off[STAGES], full_off[STAGES], empty_off[STAGES];
  for (int s = 0; s < STAGES; s++) {
    a_off[s] = hg_b_smem_reserve(b, 64 * 64 * 2, 1024);
    b_off[s] = hg_b_smem_reserve(b, N * 64 * 2, 1024);
  }
  for (int s = 0; s < STAGES; s++) {
    full_off[s] = hg_b_smem_reserve(b, 8, 8);
    empty_off[s] = hg_b_smem_reserve(b, 8, 8);
  }
  uint32_t c_off = hg_b_smem_reserve(b, 64 * N * 2, 1024);
  hg_val_t tid = hg_b_sreg(b, HG_TID_X);
  hg_val_t wg = hg_b_bin(b, HG_SHR_U, tid, hg_b_i32(b, 7));
  hg_val_t rank = hg_b_sreg(b, HG_CLUSTER_CTARANK);
  hg_val_t m0 = hg_b_bin(b, HG_MUL, hg_b_sreg(b, HG_CTAID_X), hg_b_i32(b, 64));
  hg_val_t n0 = hg_b_bin(b, HG_MUL, hg_b_sreg(b, HG_CTAID_Y), hg_b_i32(b, N));

  if (comments) hg_b_comment(b, "barrier setup by one thread, made visible to the cluster");
  hg_b_if(b, hg_b_cmp(b, HG_EQ, tid, hg_b_i32(b, 0)));
  for (int s = 0; s < STAGES; s++) {
    hg_b_mbar_init(b, hg_b_smem_addr(b, full_off[s]), hg_b_i32(b, 1));
    hg_b_mbar_init(b, hg_b_smem_addr(b, empty_off[s]), hg_b_i32(b, 2 * 2));
  }
  hg_b_fence_mbarrier_init(b);
  hg_b_endif(b);
  hg_b_cluster_arrive(b, true);
  hg_b_cluster_wait(b);

  hg_b_if(b, hg_b_cmp(b, HG_EQ, wg, hg_b_i32(b, 0)));
  hg_b_setmaxnreg(b, false, 40);
  hg_b_if(b, hg_b_cmp(b, HG_EQ, tid, hg_b_i32(b, 0)));
  hg_b_tmap_prefetch(b, map_a);
  hg_b_tmap_prefetch(b, map_b);
  hg_val_t policy = hg_b_cache_policy(b, HG_EVICT_LAST);
  hg_val_t kt = hg_b_for(b, hg_b_i32(b, 0), ktiles, hg_b_i32(b, 1));
  hg_val_t stage = hg_b_bin(b, HG_AND, kt, hg_b_i32(b, STAGES - 1));
  hg_val_t phase = hg_b_bin(b, HG_AND, hg_b_bin(b, HG_SHR_U, kt, hg_b_i32(b, 1)), hg_b_i32(b, 1));
  hg_val_t k0 = hg_b_bin(b, HG_MUL, kt, hg_b_i32(b, 64));
  for (int s = 0; s < STAGES; s++) {
    hg_b_if(b, hg_b_cmp(b, HG_EQ, stage, hg_b_i32(b, s)));
    hg_val_t full = hg_b_smem_addr(b, full_off[s]);
    hg_b_mbar_wait(b, hg_b_smem_addr(b, empty_off[s]), hg_b_bin(b, HG_XOR, phase, hg_b_i32(b, 1)));
    hg_b_mbar_arrive_expect_tx(b, full, hg_b_i32(b, (64 + N) * 64 * 2));
    hg_val_t ca[2] = {k0, m0}, cb[2] = {k0, n0};
    hg_b_tma_load(b, map_a, hg_b_smem_addr(b, a_off[s]), full, 2, ca, HG_NONE, policy);
    hg_b_tma_load(b, map_b, hg_b_smem_addr(b, b_off[s]), full, 2, cb,
                  hg_b_bin(b, HG_SHL, hg_b_i32(b, 1), rank), HG_NONE);
    hg_b_endif(b);
  }
  hg_b_endfor(b);
  hg_b_endif(b);
  hg_b_else(b);
  hg_b_setmaxnreg(b, true, 232);
  hg_val_t acc[N / 2];
  for (int i = 0; i < N / 2; i++) acc[i] = hg_b_var(b, HG_T_F32, hg_b_f32(b, 0));
  hg_val_t kt2 = hg_b_for(b, hg_b_i32(b, 0), ktiles, hg_b_i32(b, 1));
  hg_val_t stage2 = hg_b_bin(b, HG_AND, kt2, hg_b_i32(b, STAGES - 1));
  hg_val_t phase2 = hg_b_bin(b, HG_AND, hg_b_bin(b, HG_SHR_U, kt2, hg_b_i32(b, 1)), hg_b_i32(b, 1));
  for (int s = 0; s < STAGES; s++) {
    hg_b_if(b, hg_b_cmp(b, HG_EQ, stage2, hg_b_i32(b, s)));
    hg_b_mbar_wait(b, hg_b_smem_addr(b, full_off[s]), phase2);
    hg_b_wgmma_fence(b);
    for (int kk = 0; kk < 4; kk++) {
      /* descriptors: start address >> 4 in bits 0..13, 128B swizzle (1 << 62) */
      hg_val_t da = hg_b_zext(
          b, hg_b_bin(b, HG_SHR_U, hg_b_smem_addr(b, a_off[s] + 32 * kk), hg_b_i32(b, 4)));
      hg_val_t db = hg_b_zext(
          b, hg_b_bin(b, HG_SHR_U, hg_b_smem_addr(b, b_off[s] + 32 * kk), hg_b_i32(b, 4)));
      hg_val_t sw = hg_b_i64(b, (int64_t)1 << 62);
      da = hg_b_bin(b, HG_OR, da, sw);
      db = hg_b_bin(b, HG_OR, db, sw);
      hg_wgmma_op_t op = {.n = N, .a = HG_BF16, .b = HG_BF16, .acc = HG_F32};
      hg_b_wgmma(b, &op, acc, &da, db, hg_b_pred(b, true));
    }
    hg_b_wgmma_commit(b);
    hg_b_wgmma_wait(b, 0);
    hg_b_mbar_arrive_cluster(b, hg_b_smem_addr(b, empty_off[s]), hg_b_i32(b, 0));
    hg_b_mbar_arrive_cluster(b, hg_b_smem_addr(b, empty_off[s]), hg_b_i32(b, 1));
    hg_b_endif(b);
  }
  hg_b_endfor(b);
  if (comments) hg_b_comment(b, "epilogue: bf16 pairs through stmatrix, then one TMA store");
  hg_val_t lane = hg_b_sreg(b, HG_LANEID);
  hg_val_t base =
      hg_b_bin(b, HG_ADD, hg_b_smem_addr(b, c_off), hg_b_bin(b, HG_SHL, lane, hg_b_i32(b, 4)));
  for (int i = 0; i < N / 2; i += 8) {
    hg_val_t r[4];
    for (int j = 0; j < 4; j++)
      r[j] = hg_b_pack_f32x2(b, HG_BF16, acc[i + 2 * j], acc[i + 2 * j + 1]);
    hg_b_stmatrix(b, 4, false, hg_b_bin(b, HG_ADD, base, hg_b_i32(b, 64 * i)), r);
  }
  hg_b_fence_proxy_async(b);
  hg_b_bar_sync(b, 1, 256);
  hg_b_if(b, hg_b_cmp(b, HG_EQ, tid, hg_b_i32(b, 128)));
  hg_val_t cc[2] = {n0, m0};
  hg_b_tma_store(b, map_c, hg_b_smem_addr(b, c_off), 2, cc);
  hg_b_bulk_commit(b);
  hg_b_bulk_wait(b, 0, true);
  hg_b_endif(b);
  hg_b_endif(b);
  hg_b_cluster_arrive(b, false);
  hg_b_cluster_wait(b);
  return st;
}

/* ---------------------------------------------------------------- sm_80 family */

hg_status_t emit_kernel_cp_async(hg_builder_t **out) {
  hg_status_t st = kernel("cp_async", out);
  if (st.code != HG_OK) return st;
  hg_builder_t *b = *out;
  hg_val_t g = hg_b_param(b, HG_T_I64, "g");
  hg_val_t n = hg_b_param(b, HG_T_I32, "n");
  uint32_t buf = hg_b_smem_reserve(b, 3 * 128 * 16, 128);
  uint32_t bar_off = hg_b_smem_reserve(b, 8, 8);
  hg_val_t tid = hg_b_sreg(b, HG_TID_X);
  hg_val_t inside = hg_b_cmp(b, HG_LT_S, tid, n);
  hg_val_t chunk = hg_b_bin(b, HG_SHL, tid, hg_b_i32(b, 4));
  hg_val_t dst = hg_b_bin(b, HG_ADD, hg_b_smem_addr(b, buf), chunk);
  hg_val_t src = hg_b_bin(b, HG_ADD, g, hg_b_zext(b, chunk));
  for (int bytes = 16; bytes >= 4; bytes /= 2) {
    hg_val_t some = hg_b_select(b, inside, hg_b_i32(b, bytes), hg_b_i32(b, 0));
    hg_b_cp_async(b, bytes, dst, src, HG_NONE);
    hg_b_cp_async(b, bytes, dst, src, some);
    hg_b_cp_async(b, bytes, dst, src, hg_b_i32(b, 0)); /* zero fill */
  }
  hg_b_cp_async_commit(b);
  hg_val_t s = hg_b_for(b, hg_b_i32(b, 0), hg_b_i32(b, 3), hg_b_i32(b, 1));
  hg_val_t at = hg_b_bin(b, HG_ADD, dst, hg_b_bin(b, HG_MUL, s, hg_b_i32(b, 128 * 16)));
  hg_b_cp_async(b, 16, at, src, hg_b_select(b, inside, hg_b_i32(b, 16), hg_b_i32(b, 0)));
  hg_b_cp_async_commit(b);
  hg_b_cp_async_wait(b, 1);
  hg_b_endfor(b);
  hg_b_cp_async_wait(b, 0);
  hg_val_t bar = hg_b_smem_addr(b, bar_off);
  hg_b_if(b, hg_b_cmp(b, HG_EQ, tid, hg_b_i32(b, 0)));
  hg_b_mbar_init(b, bar, hg_b_i32(b, 128));
  hg_b_endif(b);
  hg_b_bar_sync(b, 0, 0);
  hg_b_cp_async(b, 16, dst, src, HG_NONE);
  hg_b_cp_async_mbar_arrive(b, bar);
  hg_b_mbar_wait(b, bar, hg_b_i32(b, 0));
  return st;
}

hg_status_t emit_kernel_zero_fill(hg_val_t *dst, hg_val_t *zero, hg_builder_t **out) {
  hg_status_t st = kernel("zero_fill", out);
  if (st.code != HG_OK) return st;
  hg_builder_t *b = *out;
  hg_val_t g = hg_b_param(b, HG_T_I64, "g");
  *dst = hg_b_smem_addr(b, hg_b_smem_reserve(b, 16, 16));
  *zero = hg_b_i32(b, 0);
  hg_b_cp_async(b, 16, *dst, g, *zero);
  hg_b_cp_async_commit(b);
  hg_b_cp_async_wait(b, 0);
  return st;
}

const char *const emit_cp_async_expect[EMIT_CP_ASYNC_NEXPECT] = {
    "cp.async.cg.shared.global [",
    "cp.async.ca.shared.global [",
    "], 16;",
    "], 16, ",
    "], 8;",
    "], 8, ",
    "], 4;",
    "], 4, ",
    "cp.async.commit_group;",
    "cp.async.wait_group",
    "cp.async.mbarrier.arrive.noinc.shared",
};

const char *const emit_ldmatrix_expect[EMIT_LDMATRIX_NEXPECT] = {
    "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {",
    "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {",
    "ldmatrix.sync.aligned.m8n8.x2.shared.b16 {",
    "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {",
    "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {",
    "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {",
};

void emit_mma_sync_mnemonic(hg_dtype_t t, char *buf, size_t cap) {
  snprintf(buf, cap, "mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32", hg_dtype_name(t),
           hg_dtype_name(t));
}

hg_status_t emit_kernel_ldmatrix(hg_builder_t **out) {
  hg_status_t st = kernel("ldmatrix", out);
  if (st.code != HG_OK) return st;
  hg_builder_t *b = *out;
  hg_val_t g = hg_b_param(b, HG_T_I64, "out");
  hg_val_t smem = hg_b_smem_addr(b, hg_b_smem_reserve(b, 4096, 128));
  hg_val_t lane = hg_b_sreg(b, HG_LANEID);
  hg_val_t addr = hg_b_bin(b, HG_ADD, smem, hg_b_bin(b, HG_SHL, lane, hg_b_i32(b, 4)));
  int slot = 0;
  for (int num = 1; num <= 4; num *= 2)
    for (int trans = 0; trans <= 1; trans++) {
      hg_val_t r[4];
      hg_b_ldmatrix(b, num, trans, addr, r);
      for (int k = 0; k < num; k++) emit_sink(b, g, slot++, r[k]);
    }
  return st;
}

/* lane -> the shared-memory address ldmatrix reads a row from, in a tile of 16-bit elements
 * stored in rows of row_bytes: lanes 8i..8i+7 address the 8 rows of matrix i, which is
 * row block i % row_blocks and 16-byte column block i / row_blocks of the tile. A 16x16 A
 * tile read by x4 has row_blocks 2 (matrices: rows 0-7 and 8-15 of columns 0-7, then of
 * columns 8-15: the order of mma.sync's A fragment registers); an N x K B tile of 8 rows
 * read by x2 has 1; a K x N B tile of 16 rows read by x2 .trans has 2. */
static hg_val_t ldmatrix_lane_addr(hg_builder_t *b, hg_val_t base, hg_val_t lane, int row_bytes,
                                   int row_blocks) {
  hg_val_t m = hg_b_bin(b, HG_SHR_U, lane, hg_b_i32(b, 3));
  hg_val_t rb = hg_b_i32(b, row_blocks);
  hg_val_t row = hg_b_bin(b, HG_ADD, hg_b_bin(b, HG_AND, lane, hg_b_i32(b, 7)),
                          hg_b_bin(b, HG_SHL, hg_b_bin(b, HG_REM_U, m, rb), hg_b_i32(b, 3)));
  hg_val_t block = hg_b_bin(b, HG_DIV_U, m, rb);
  hg_val_t off =
      hg_b_mad(b, row, hg_b_i32(b, row_bytes), hg_b_bin(b, HG_SHL, block, hg_b_i32(b, 4)));
  return hg_b_bin(b, HG_ADD, base, off);
}

static void store_accumulators(hg_builder_t *b, hg_val_t out, const hg_val_t *acc, int n) {
  hg_val_t lane = hg_b_zext(b, hg_b_sreg(b, HG_LANEID));
  hg_val_t at = hg_b_bin(b, HG_ADD, out, hg_b_bin(b, HG_MUL, lane, hg_b_i64(b, 4 * n)));
  for (int i = 0; i < n; i += 4)
    hg_b_store(b, HG_GLOBAL, 0, 4, hg_b_bin(b, HG_ADD, at, hg_b_i64(b, 4 * i)), acc + i);
}

hg_status_t emit_kernel_mma_sync(hg_dtype_t t, bool b_trans, hg_builder_t **out) {
  char name[48];
  snprintf(name, sizeof name, "mma_sync_%s%s", hg_dtype_name(t), b_trans ? "_bt" : "");
  hg_status_t st = kernel(name, out);
  if (st.code != HG_OK) return st;
  hg_builder_t *b = *out;
  hg_val_t o = hg_b_param(b, HG_T_I64, "out");
  hg_val_t ktiles = hg_b_param(b, HG_T_I32, "k_tiles");
  uint32_t a_off = hg_b_smem_reserve(b, 16 * 16 * 2, 128);
  uint32_t b_off = hg_b_smem_reserve(b, 16 * 8 * 2, 128);
  hg_val_t lane = hg_b_sreg(b, HG_LANEID);
  hg_val_t acc[4];
  for (int i = 0; i < 4; i++) acc[i] = hg_b_var(b, HG_T_F32, hg_b_f32(b, 0));
  hg_mma_sync_op_t op = {.m = 16, .n = 8, .k = 16, .a = t, .b = t, .acc = HG_F32};
  hg_b_for(b, hg_b_i32(b, 0), ktiles, hg_b_i32(b, 1));
  hg_val_t a[4], bf[2];
  hg_b_ldmatrix(b, 4, false, ldmatrix_lane_addr(b, hg_b_smem_addr(b, a_off), lane, 32, 2), a);
  /* B stored N x K (8 rows of 32 bytes: plain) or K x N (16 rows of 16 bytes: .trans) */
  hg_val_t baddr =
      ldmatrix_lane_addr(b, hg_b_smem_addr(b, b_off), lane, b_trans ? 16 : 32, b_trans ? 2 : 1);
  hg_b_ldmatrix(b, 2, b_trans, baddr, bf);
  hg_b_mma_sync(b, &op, acc, a, bf);
  hg_b_endfor(b);
  store_accumulators(b, o, acc, 4);
  return st;
}

hg_status_t emit_kernel_cp_async_mma(hg_builder_t **out) {
  enum { STAGES = 2, NTILES = 4, A_BYTES = 16 * 16 * 2, B_BYTES = 8 * NTILES * 16 * 2 };
  hg_status_t st = kernel("cp_async_mma", out);
  if (st.code != HG_OK) return st;
  hg_builder_t *b = *out;
  hg_b_set_threads(b, 32);
  hg_val_t ga = hg_b_param(b, HG_T_I64, "A"); /* M x K, K contiguous */
  hg_val_t gb = hg_b_param(b, HG_T_I64, "B"); /* N x K, K contiguous */
  hg_val_t o = hg_b_param(b, HG_T_I64, "out");
  hg_val_t kdim = hg_b_param(b, HG_T_I32, "k");
  hg_val_t ktiles = hg_b_bin(b, HG_SHR_U, kdim, hg_b_i32(b, 4));
  uint32_t stage_off[STAGES];
  for (int s = 0; s < STAGES; s++) stage_off[s] = hg_b_smem_reserve(b, A_BYTES + B_BYTES, 128);
  hg_val_t lane = hg_b_sreg(b, HG_LANEID);
  hg_val_t row_bytes = hg_b_sext(b, hg_b_bin(b, HG_SHL, kdim, hg_b_i32(b, 1)));
  hg_val_t acc[4 * NTILES];
  for (int i = 0; i < 4 * NTILES; i++) acc[i] = hg_b_var(b, HG_T_F32, hg_b_f32(b, 0));
  hg_val_t stage_base = hg_b_var(b, HG_T_I32, HG_NONE);

  /* Tile kt into the stage at stage_base: lane copies 16-byte chunk c = lane (+32, +64) of
   * the tile, row c / 2, column block c % 2 (rows of 32 bytes in shared memory); past the
   * last tile the chunks become zeros (source size 0). */
  hg_val_t kt = hg_b_for(b, hg_b_i32(b, -1), ktiles, hg_b_i32(b, 1));
  hg_val_t next = hg_b_bin(b, HG_ADD, kt, hg_b_i32(b, 1));
  hg_val_t next_base =
      hg_b_select(b, hg_b_cmp(b, HG_EQ, hg_b_bin(b, HG_AND, next, hg_b_i32(b, 1)), hg_b_i32(b, 0)),
                  hg_b_smem_addr(b, stage_off[0]), hg_b_smem_addr(b, stage_off[1]));
  hg_val_t size =
      hg_b_select(b, hg_b_cmp(b, HG_LT_S, next, ktiles), hg_b_i32(b, 16), hg_b_i32(b, 0));
  hg_val_t kbyte = hg_b_sext(b, hg_b_bin(b, HG_SHL, next, hg_b_i32(b, 5)));
  for (int c = 0; c < (A_BYTES + B_BYTES) / 16; c += 32) {
    bool is_a = c < A_BYTES / 16;
    hg_val_t chunk = hg_b_bin(b, HG_ADD, lane, hg_b_i32(b, is_a ? c : c - A_BYTES / 16));
    hg_val_t row = hg_b_sext(b, hg_b_bin(b, HG_SHR_U, chunk, hg_b_i32(b, 1)));
    hg_val_t half = hg_b_sext(
        b, hg_b_bin(b, HG_SHL, hg_b_bin(b, HG_AND, chunk, hg_b_i32(b, 1)), hg_b_i32(b, 4)));
    hg_val_t src = hg_b_bin(b, HG_ADD, hg_b_mad(b, row, row_bytes, is_a ? ga : gb),
                            hg_b_bin(b, HG_ADD, kbyte, half));
    hg_val_t dst =
        hg_b_bin(b, HG_ADD, next_base,
                 hg_b_bin(b, HG_SHL, hg_b_bin(b, HG_ADD, lane, hg_b_i32(b, c)), hg_b_i32(b, 4)));
    hg_b_cp_async(b, 16, dst, src, size);
  }
  hg_b_cp_async_commit(b);
  /* compute on tile kt (from the second trip on) while tile kt + 1 is in flight */
  hg_b_if(b, hg_b_cmp(b, HG_GE_S, kt, hg_b_i32(b, 0)));
  hg_b_cp_async_wait(b, 1);
  hg_b_bar_sync(b, 1, 32);
  hg_val_t a[4];
  hg_b_ldmatrix(b, 4, false, ldmatrix_lane_addr(b, stage_base, lane, 32, 2), a);
  for (int j = 0; j < NTILES; j++) {
    hg_val_t bf[2];
    hg_val_t btile = hg_b_bin(b, HG_ADD, stage_base, hg_b_i32(b, A_BYTES + j * 8 * 32));
    hg_b_ldmatrix(b, 2, false, ldmatrix_lane_addr(b, btile, lane, 32, 1), bf);
    hg_mma_sync_op_t op = {.m = 16, .n = 8, .k = 16, .a = HG_BF16, .b = HG_BF16, .acc = HG_F32};
    hg_b_mma_sync(b, &op, acc + 4 * j, a, bf);
  }
  hg_b_bar_sync(b, 1, 32);
  hg_b_endif(b);
  hg_b_assign(b, stage_base, next_base);
  hg_b_endfor(b);
  hg_b_cp_async_wait(b, 0);
  store_accumulators(b, o, acc, 4 * NTILES);
  return st;
}
