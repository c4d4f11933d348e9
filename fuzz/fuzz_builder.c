/* libFuzzer target: builder misuse. The input is a program of builder calls with arbitrary
 * arguments (values of the wrong type, from nowhere or none, enums out of range, bad ranks
 * and counts, unbalanced control flow). The builder must record the first misuse as a
 * sticky error: once hg_builder_status fails it keeps the same code and sentence whatever
 * follows, the emitters refuse with it, and nothing crashes or leaks. A program without
 * misuse emits PTX (and MLIR text) naming its entry. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "hopgen/emit.h"

#define POOL 64
#define MAX_CALLS 300

static void check(int cond) {
  if (!cond) __builtin_trap();
}

typedef struct prog {
  fz_t in;
  hg_builder_t *b;
  hg_val_t pool[POOL];
  int n;
} prog_t;

/* A value of the pool, or none, or an id no builder made. */
static hg_val_t val(prog_t *g) {
  const uint8_t k = fz_u8(&g->in);
  if (k == 255) return HG_NONE;
  if (k == 254) return (hg_val_t){(int32_t)fz_u32(&g->in)};
  return g->n ? g->pool[k % g->n] : HG_NONE;
}

static void keep(prog_t *g, hg_val_t v) {
  g->pool[g->n < POOL ? g->n++ : fz_u8(&g->in) % POOL] = v;
}

static hg_type_t type(prog_t *g) {
  return (hg_type_t)fz_pick(&g->in, HG_T_TMAP + 1);
}

static void vals(prog_t *g, hg_val_t *v, int n) {
  for (int i = 0; i < n; i++) v[i] = val(g);
}

static void name(prog_t *g, char *buf, size_t size) {
  const size_t n = fz_u8(&g->in) % (size - 1);
  for (size_t i = 0; i < n; i++) buf[i] = (char)(fz_u8(&g->in) | 1); /* no NUL inside */
  buf[n] = '\0';
}

static void call(prog_t *g) {
  hg_builder_t *b = g->b;
  fz_t *f = &g->in;
  hg_val_t v[8], big[512];
  char text[40];
  switch (fz_u8(f) % 72) {
  case 0:
    hg_b_set_threads(b, (int)fz_int(f, 1100));
    break;
  case 1:
    hg_b_set_min_ctas(b, (int)fz_int(f, 40));
    break;
  case 2:
    hg_b_set_cluster(b, (int)fz_int(f, 17), (int)fz_int(f, 3), (int)fz_int(f, 3));
    break;
  case 3:
    name(g, text, sizeof text);
    keep(g, hg_b_param(b, type(g), text));
    break;
  case 4:
    name(g, text, sizeof text);
    keep(g, hg_b_param_tmap(b, text));
    break;
  case 5:
    (void)hg_b_smem_reserve(b, (uint32_t)fz_int(f, 300000), (uint32_t)fz_int(f, 2048));
    break;
  case 6:
    keep(g, hg_b_smem_addr(b, (uint32_t)fz_int(f, 300000)));
    break;
  case 7:
    keep(g, hg_b_i32(b, (int32_t)fz_i64(f)));
    break;
  case 8:
    keep(g, hg_b_i64(b, fz_i64(f)));
    break;
  case 9:
    keep(g, hg_b_f32(b, (float)fz_int(f, 1000) / 7.0f));
    break;
  case 10:
    keep(g, hg_b_pred(b, fz_bool(f)));
    break;
  case 11: {
    hg_type_t t = type(g);
    keep(g, hg_b_var(b, t, val(g)));
    break;
  }
  case 12:
    vals(g, v, 2);
    hg_b_assign(b, v[0], v[1]);
    break;
  case 13: {
    int op = fz_pick(f, HG_FMAX + 1);
    vals(g, v, 2);
    keep(g, hg_b_bin(b, (hg_binop_t)op, v[0], v[1]));
    break;
  }
  case 14:
    vals(g, v, 3);
    keep(g, hg_b_mad(b, v[0], v[1], v[2]));
    break;
  case 15:
    vals(g, v, 3);
    keep(g, hg_b_ffma(b, v[0], v[1], v[2]));
    break;
  case 16:
    keep(g, hg_b_not(b, val(g)));
    break;
  case 17: {
    int op = fz_pick(f, HG_FEQ + 1);
    vals(g, v, 2);
    keep(g, hg_b_cmp(b, (hg_cmp_t)op, v[0], v[1]));
    break;
  }
  case 18:
    vals(g, v, 3);
    keep(g, hg_b_select(b, v[0], v[1], v[2]));
    break;
  case 19:
    keep(g, hg_b_sext(b, val(g)));
    break;
  case 20:
    keep(g, hg_b_zext(b, val(g)));
    break;
  case 21:
    keep(g, hg_b_trunc(b, val(g)));
    break;
  case 22:
    keep(g, hg_b_i2f(b, val(g)));
    break;
  case 23:
    keep(g, hg_b_f2i(b, val(g)));
    break;
  case 24: {
    hg_type_t t = type(g);
    keep(g, hg_b_bitcast(b, t, val(g)));
    break;
  }
  case 25: {
    hg_dtype_t t = (hg_dtype_t)fz_pick(f, HG_DTYPE_COUNT);
    vals(g, v, 2);
    keep(g, hg_b_pack_f32x2(b, t, v[0], v[1]));
    break;
  }
  case 26: {
    hg_dtype_t t = (hg_dtype_t)fz_pick(f, HG_DTYPE_COUNT);
    keep(g, hg_b_unpack_f32(b, t, val(g)));
    break;
  }
  case 27:
    keep(g, hg_b_sreg(b, (hg_sreg_t)fz_pick(f, HG_SMID + 1)));
    break;
  case 28:
    keep(g, hg_b_clock64(b));
    break;
  case 29:
    hg_b_if(b, val(g));
    break;
  case 30:
    hg_b_else(b);
    break;
  case 31:
    hg_b_endif(b);
    break;
  case 32:
    hg_b_loop(b);
    break;
  case 33:
    hg_b_break_if(b, val(g));
    break;
  case 34:
    hg_b_endloop(b);
    break;
  case 35:
    vals(g, v, 3);
    keep(g, hg_b_for(b, v[0], v[1], v[2]));
    break;
  case 36:
    hg_b_endfor(b);
    break;
  case 37:
    hg_b_return(b);
    break;
  case 38:
    name(g, text, sizeof text);
    hg_b_comment(b, text);
    break;
  case 39: {
    hg_space_t sp = (hg_space_t)fz_pick(f, 3);
    hg_type_t t = type(g);
    int bits = (int)fz_int(f, 64), n = (int)fz_int(f, 6);
    hg_val_t addr = val(g);
    memset(v, 0, sizeof v);
    hg_b_load(b, sp, t, bits, n, addr, v);
    for (int i = 0; i < 8; i++)
      if (v[i].id) keep(g, v[i]);
    break;
  }
  case 40: {
    hg_space_t sp = (hg_space_t)fz_pick(f, 3);
    int bits = (int)fz_int(f, 64), n = (int)fz_int(f, 6);
    hg_val_t addr = val(g);
    vals(g, v, 8);
    hg_b_store(b, sp, bits, n, addr, v);
    break;
  }
  case 41:
    vals(g, v, 2);
    hg_b_atomic_add_f32(b, v[0], v[1]);
    break;
  case 42:
    vals(g, v, 2);
    keep(g, hg_b_mapa(b, v[0], v[1]));
    break;
  case 43:
    hg_b_bar_sync(b, (int)fz_int(f, 20), (int)fz_int(f, 1100));
    break;
  case 44:
    hg_b_bar_arrive(b, (int)fz_int(f, 20), (int)fz_int(f, 1100));
    break;
  case 45:
    hg_b_fence_proxy_async(b);
    break;
  case 46:
    hg_b_fence_mbarrier_init(b);
    break;
  case 47:
    hg_b_cluster_arrive(b, fz_bool(f));
    break;
  case 48:
    hg_b_cluster_wait(b);
    break;
  case 49:
    keep(g, hg_b_elect_sync(b));
    break;
  case 50:
    vals(g, v, 2);
    hg_b_mbar_init(b, v[0], v[1]);
    break;
  case 51:
    hg_b_mbar_arrive(b, val(g));
    break;
  case 52:
    vals(g, v, 2);
    hg_b_mbar_arrive_cluster(b, v[0], v[1]);
    break;
  case 53:
    vals(g, v, 2);
    hg_b_mbar_arrive_expect_tx(b, v[0], v[1]);
    break;
  case 54:
    vals(g, v, 2);
    hg_b_mbar_expect_tx(b, v[0], v[1]);
    break;
  case 55:
    vals(g, v, 2);
    keep(g, hg_b_mbar_try_wait(b, v[0], v[1]));
    break;
  case 56:
    vals(g, v, 2);
    hg_b_mbar_wait(b, v[0], v[1]);
    break;
  case 57:
    keep(g, hg_b_cache_policy(b, (hg_cache_policy_t)fz_pick(f, 3)));
    break;
  case 58: {
    hg_val_t t = val(g), dst = val(g), bar = val(g);
    int rank = (int)fz_int(f, 8);
    vals(g, v, 8);
    hg_val_t mask = val(g), hint = val(g);
    hg_b_tma_load(b, t, dst, bar, rank, v, mask, hint);
    break;
  }
  case 59: {
    hg_val_t t = val(g);
    int rank = (int)fz_int(f, 8);
    vals(g, v, 8);
    hg_b_tma_prefetch(b, t, rank, v);
    break;
  }
  case 60: {
    hg_val_t t = val(g), src = val(g);
    int rank = (int)fz_int(f, 8);
    vals(g, v, 8);
    hg_b_tma_store(b, t, src, rank, v);
    break;
  }
  case 61: {
    hg_reduce_op_t op = (hg_reduce_op_t)fz_pick(f, HG_RED_XOR + 1);
    hg_val_t t = val(g), src = val(g);
    int rank = (int)fz_int(f, 8);
    vals(g, v, 8);
    hg_b_tma_reduce(b, op, t, src, rank, v);
    break;
  }
  case 62: {
    hg_reduce_op_t op = (hg_reduce_op_t)fz_pick(f, HG_RED_XOR + 1);
    hg_dtype_t t = (hg_dtype_t)fz_pick(f, HG_DTYPE_COUNT);
    vals(g, v, 2);
    hg_b_red(b, op, t, v[0], v[1]);
    break;
  }
  case 63:
    hg_b_bulk_commit(b);
    break;
  case 64:
    hg_b_bulk_wait(b, (int)fz_int(f, 10), fz_bool(f));
    break;
  case 65:
    hg_b_tmap_prefetch(b, val(g));
    break;
  case 66:
    hg_b_wgmma_fence(b);
    break;
  case 67:
    hg_b_wgmma_commit(b);
    break;
  case 68:
    hg_b_wgmma_wait(b, (int)fz_int(f, 10));
    break;
  case 69: {
    hg_wgmma_op_t op;
    memset(&op, 0, sizeof op);
    op.n = (int)fz_int(f, 300);
    op.a = (hg_dtype_t)fz_pick(f, HG_DTYPE_COUNT);
    op.b = fz_bool(f) ? op.a : (hg_dtype_t)fz_pick(f, HG_DTYPE_COUNT);
    op.acc = (hg_dtype_t)fz_pick(f, HG_DTYPE_COUNT);
    op.a_regs = fz_bool(f);
    op.trans_a = fz_bool(f);
    op.trans_b = fz_bool(f);
    /* the accumulators: one variable of a type the input picks, repeated, or pool values */
    const bool same = fz_bool(f);
    hg_val_t acc = same ? hg_b_var(b, type(g), HG_NONE) : HG_NONE;
    for (int i = 0; i < 512; i++) big[i] = same ? acc : val(g);
    vals(g, v, 4);
    hg_val_t desc_b = val(g), scale = val(g);
    hg_b_wgmma(b, &op, big, v, desc_b, scale);
    break;
  }
  case 70:
    hg_b_setmaxnreg(b, fz_bool(f), (int)fz_int(f, 300));
    break;
  default: {
    int num = (int)fz_int(f, 6);
    bool trans = fz_bool(f);
    hg_val_t addr = val(g);
    vals(g, v, 8);
    if (fz_bool(f))
      hg_b_stmatrix(b, num, trans, addr, v);
    else {
      name(g, text, sizeof text);
      hg_b_name(b, addr, text);
    }
    break;
  }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096) return 0;
  prog_t g;
  memset(&g, 0, sizeof g);
  g.in = (fz_t){data, size};
  char kname[24] = "fuzz_kernel";
  if (fz_u8(&g.in) == 0x4e) name(&g, kname, sizeof kname); /* now and then a bad name */
  hg_status_t s = hg_builder_create(kname, &g.b);
  if (s.code != HG_OK) {
    check(s.msg[0] != '\0' && g.b == NULL);
    return 0;
  }
  hg_status_t first = hg_ok();
  for (int i = 0; i < MAX_CALLS && g.in.n; i++) {
    call(&g);
    s = hg_builder_status(g.b);
    if (first.code == HG_OK)
      first = s;
    else /* sticky: the first misuse stays, word for word */
      check(s.code == first.code && strcmp(s.msg, first.msg) == 0);
    check(s.code == HG_OK || s.msg[0] != '\0');
  }
  hg_text_t ptx = {0}, mlir = {0};
  s = hg_emit_ptx(g.b, &ptx);
  if (first.code != HG_OK) check(s.code != HG_OK && ptx.data == NULL);
  if (s.code == HG_OK) check(ptx.data && strstr(ptx.data, kname));
  if (s.code != HG_OK) check(s.msg[0] != '\0');
  s = hg_emit_mlir(g.b, &mlir);
  if (first.code != HG_OK) check(s.code != HG_OK);
  if (s.code != HG_OK) check(s.msg[0] != '\0');
  hg_text_free(&ptx);
  hg_text_free(&mlir);
  hg_builder_destroy(g.b);
  return 0;
}
