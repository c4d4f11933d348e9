/* The utility kernels (random fill, reference GEMM, repack) are generated for every type
 * they support, and ptxas accepts each. */
#include <stdlib.h>

#include "hg_test.h"
#include "hopgen/kernels.h"
#include "support/ir_eval.h"

static void check_ptxas(hg_kernel_t *k) {
  hg_ptxas_report_t r;
  CHECK_OK(hg_ptxas_check(k->ptx.data, &r));
  CHECK_EQ(r.spill_store_bytes, 0);
}

static void test_fill_random(void) {
  const hg_dtype_t types[] = {HG_U8, HG_S8, HG_E4M3, HG_E5M2, HG_F16, HG_BF16, HG_F32, HG_S32};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    hg_kernel_t k;
    CHECK_OK(hg_gen_fill_random(types[i], HG_BACKEND_PTX, &k));
    CHECK(k.ptx.data && strstr(k.ptx.data, ".entry hg_fill_random_"));
    check_ptxas(&k);
    hg_kernel_free(&k);
  }
  hg_kernel_t k;
  CHECK_ERR(hg_gen_fill_random(HG_F64, HG_BACKEND_PTX, &k), HG_ERR_UNSUPPORTED, "f64");
}

static void test_reference_gemm(void) {
  const hg_dtype_t ab[] = {HG_BF16, HG_F16, HG_E4M3, HG_E5M2};
  const hg_dtype_t dt[] = {HG_BF16, HG_F16, HG_F32};
  for (int a = 0; a < 4; a++)
    for (int d = 0; d < 3; d++)
      for (int mj = 0; mj < 4; mj++) {
        hg_gemm_problem_t p = {.m = 100,
                               .n = 50,
                               .k = 30,
                               .batch = 1,
                               .a_type = ab[a],
                               .b_type = ab[(a + mj) % 4],
                               .d_type = dt[d],
                               .a_k_major = mj & 1,
                               .b_k_major = (mj >> 1) & 1};
        hg_kernel_t k;
        CHECK_OK(hg_gen_gemm_reference(&p, HG_BACKEND_PTX, &k));
        if (k.ptx.data) check_ptxas(&k);
        CHECK_EQ(k.threads, 256);
        hg_kernel_free(&k);
      }
}

static void test_repack(void) {
  for (int i = 0; i < 6; i++) {
    const int e = 1 << (i % 3);
    hg_kernel_t k;
    CHECK_OK(i < 3 ? hg_gen_repack(e, HG_BACKEND_PTX, &k)
                   : hg_gen_repack_pair(e, HG_BACKEND_PTX, &k));
    CHECK(strstr(k.name, i < 3 ? "hg_repack_b" : "hg_repack2_b") != NULL);
    if (k.ptx.data) {
      check_ptxas(&k);
      /* aligned 16-byte loads and stores, no division per element */
      CHECK(strstr(k.ptx.data, "ld.global.v4.") != NULL);
      CHECK(strstr(k.ptx.data, "st.global.v4.") != NULL);
      CHECK(strstr(k.ptx.data, "div.") == NULL && strstr(k.ptx.data, "rem.") == NULL);
    }
    hg_kernel_free(&k);
  }
  hg_kernel_t k;
  CHECK_ERR(hg_gen_repack(3, HG_BACKEND_PTX, &k), HG_ERR_UNSUPPORTED, "not 3");
  CHECK_ERR(hg_gen_repack_pair(3, HG_BACKEND_PTX, &k), HG_ERR_UNSUPPORTED, "not 3");
}

/* ---------------------------------------------------------------- the repack, run on the CPU
 * Every thread of the launch hg_repack_geometry (hg_repack_pair_geometry for the pair kernel)
 * computes runs through the IR interpreter on a simulated memory: each operand's source
 * allocation (the tensor plus 64 bytes either side, all bytes marked by position, so A's and
 * B's bytes differ) and its destination. Checks: every destination byte written exactly once,
 * with its source byte or 0 in the padding; nothing written elsewhere; every 16-byte load
 * aligned (as ld.global.v4 needs), within an aligned 16-byte block that holds a byte of one
 * of its operand's rows and ends at or before the tensor's end (its last element's last byte:
 * compute-sanitizer memcheck reports a byte past the allocation); a byte load from the aligned
 * block of the tensor's first byte up to its end. */
#define RP_SRC 0x100000
#define RP_DST 0x900000
#define RP_APART 0x400000 /* B's source and destination this far past A's */

typedef struct rp_opnd {
  hg_repack_args_t x;
  int64_t src_lo, src_hi; /* the simulated source allocation */
  int64_t dst_bytes;
  uint8_t *dst;
  int *writes;
} rp_opnd_t;

typedef struct rp_sim {
  rp_opnd_t op[2];
  int n_ops, e;
  int loads, bad_loads, bad_stores;
} rp_sim_t;

/* One operand's shape: rows x cols, source pitch ld_src (elements), the source base `mis`
 * bytes past a 16-byte boundary, batches bs_more elements apart beyond the rows. */
typedef struct rp_shape {
  int64_t rows, cols, ld_src;
  int mis;
  int64_t bs_more;
} rp_shape_t;

static uint8_t rp_src_byte(int64_t addr) {
  return (uint8_t)(addr * 131 + (addr >> 8) * 7 + 1);
}

/* Does the 16-byte block at blk hold a byte of a row of o's tensor? */
static bool rp_block_in_tensor(const rp_opnd_t *o, int e, int64_t blk) {
  for (int64_t z = 0; z < o->x.batch; z++)
    for (int64_t r = 0; r < o->x.rows; r++) {
      const int64_t lo = (int64_t)o->x.src + (z * o->x.bs_src + r * o->x.ld_src) * e;
      const int64_t hi = lo + o->x.cols * e;
      if (lo < blk + 16 && blk < hi) return true;
    }
  return false;
}

/* Past the tensor's last byte: its element (rows - 1, cols - 1) of batch batch - 1, + 1. */
static int64_t rp_tensor_end(const rp_opnd_t *o, int e) {
  const hg_repack_args_t *x = &o->x;
  return (int64_t)x->src + ((x->batch - 1) * x->bs_src + (x->rows - 1) * x->ld_src + x->cols) * e;
}

static int64_t rp_load(void *ctx, hg_space_t space, int bits, int64_t addr) {
  rp_sim_t *s = ctx;
  s->loads++;
  const rp_opnd_t *o = NULL;
  const int bytes = bits / 8;
  for (int i = 0; i < s->n_ops; i++)
    if (addr >= s->op[i].src_lo && addr + bytes <= s->op[i].src_hi) o = &s->op[i];
  if (space != HG_GLOBAL || (bits != 32 && bits != 8) || !o) {
    s->bad_loads++;
    return 0;
  }
  if (bits == 8) {
    /* from the aligned block that holds the tensor's first byte (its allocation starts no
     * later: cudaMalloc's are 256-byte aligned) */
    if (addr < ((int64_t)o->x.src & ~(int64_t)15) || addr >= rp_tensor_end(o, s->e)) s->bad_loads++;
    return rp_src_byte(addr);
  }
  /* the four words of one v4 load come in order: check the block once */
  if (addr % 16 == 0 && (!rp_block_in_tensor(o, s->e, addr) || addr + 16 > rp_tensor_end(o, s->e)))
    s->bad_loads++;
  int64_t v = 0;
  for (int i = 0; i < 4; i++) v |= (int64_t)rp_src_byte(addr + i) << (8 * i);
  return v;
}

static void rp_store(void *ctx, hg_space_t space, int bits, int64_t addr, int64_t value) {
  rp_sim_t *s = ctx;
  for (int i = 0; i < s->n_ops; i++) {
    rp_opnd_t *o = &s->op[i];
    const int64_t at = addr - (int64_t)o->x.dst;
    if (at < 0 || at + 4 > o->dst_bytes) continue;
    if (space != HG_GLOBAL || bits != 32 || at % 4 != 0) break;
    for (int j = 0; j < 4; j++) {
      o->dst[at + j] = (uint8_t)(value >> (8 * j));
      o->writes[at + j]++;
    }
    return;
  }
  s->bad_stores++;
}

/* Operand i of the simulation: its arguments and memory. */
static void rp_opnd_init(rp_opnd_t *o, int i, int e, const rp_shape_t *sh, int64_t batch) {
  const int64_t q = 16 / e;
  memset(o, 0, sizeof *o);
  o->x.rows = sh->rows;
  o->x.cols = sh->cols;
  o->x.batch = batch;
  o->x.ld_src = sh->ld_src;
  o->x.ld_dst = (sh->cols + q - 1) / q * q;
  o->x.bs_src = sh->ld_src * sh->rows + sh->bs_more;
  o->x.bs_dst = o->x.ld_dst * sh->rows;
  o->x.src = RP_SRC + (hg_devptr_t)i * RP_APART + 64 + (hg_devptr_t)sh->mis;
  o->x.dst = RP_DST + (hg_devptr_t)i * RP_APART;
  o->src_lo = RP_SRC + (int64_t)i * RP_APART;
  o->src_hi = (int64_t)o->x.src + o->x.bs_src * batch * e + 64;
  o->dst_bytes = o->x.bs_dst * batch * e;
  CHECK(o->src_hi < RP_SRC + (int64_t)(i + 1) * RP_APART && o->dst_bytes < RP_APART);
  o->dst = calloc((size_t)o->dst_bytes + 1, 1);
  o->writes = calloc((size_t)o->dst_bytes + 1, sizeof(int));
}

/* Every destination byte of o: its source byte, or 0 in the padding; each written once. */
static int64_t rp_opnd_wrong(const rp_opnd_t *o, int e, int64_t *first) {
  int64_t wrong = 0;
  *first = -1;
  for (int64_t z = 0; z < o->x.batch; z++)
    for (int64_t r = 0; r < o->x.rows; r++)
      for (int64_t c = 0; c < o->x.ld_dst * e; c++) {
        const int64_t at = (z * o->x.bs_dst + r * o->x.ld_dst) * e + c;
        const uint8_t want =
            c < o->x.cols * e
                ? rp_src_byte((int64_t)o->x.src + (z * o->x.bs_src + r * o->x.ld_src) * e + c)
                : 0;
        if ((o->dst[at] != want || o->writes[at] != 1) && wrong++ == 0) *first = at;
      }
  return wrong;
}

/* One case: n_ops operands (1: hg_repack_build; 2: hg_repack_pair_build over A = shapes[0]
 * and B = shapes[1]) of e-byte elements, batch, grid z forced to gz (0: the geometry's). */
static void repack_run(int e, int n_ops, const rp_shape_t *shapes, int64_t batch, int gz) {
  rp_sim_t s;
  memset(&s, 0, sizeof s);
  s.e = e;
  s.n_ops = n_ops;
  for (int i = 0; i < n_ops; i++) rp_opnd_init(&s.op[i], i, e, &shapes[i], batch);
  hg_launch_t l;
  int32_t lw[2] = {-1, -1}, ctas_a = -1;
  int64_t params[20];
  int n_params = 0;
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("repack_cpu", &b));
  if (n_ops == 1) {
    CHECK_OK(hg_repack_geometry(&s.op[0].x, e, &l, &lw[0]));
    CHECK_OK(hg_repack_build(b, e));
    const hg_repack_args_t *x = &s.op[0].x;
    const int64_t p[10] = {(int64_t)x->dst, (int64_t)x->src, x->rows,   x->cols,   batch,
                           x->ld_dst,       x->ld_src,       x->bs_dst, x->bs_src, lw[0]};
    memcpy(params, p, sizeof p);
    n_params = 10;
  } else {
    CHECK_OK(hg_repack_pair_geometry(&s.op[0].x, &s.op[1].x, e, &l, lw, &ctas_a));
    CHECK_OK(hg_repack_pair_build(b, e));
    for (int i = 0; i < 2; i++) {
      const hg_repack_args_t *x = &s.op[i].x;
      const int64_t p[9] = {(int64_t)x->dst, (int64_t)x->src, x->rows,   x->cols, x->ld_dst,
                            x->ld_src,       x->bs_dst,       x->bs_src, lw[i]};
      memcpy(params + n_params, p, sizeof p);
      n_params += 9;
    }
    params[n_params++] = batch;
    params[n_params++] = ctas_a;
    /* A's CTAs cover its rows, and no more than one CTA's worth beyond */
    const int64_t rows_a = s.op[0].x.rows, per_cta = 256 >> lw[0];
    CHECK(ctas_a >= 0 && (int64_t)ctas_a * per_cta >= rows_a &&
          (int64_t)ctas_a * per_cta < rows_a + per_cta);
  }
  CHECK(lw[0] >= 0 && lw[0] <= 5 && l.block[0] == 256);
  if (gz > 0) l.grid[2] = (uint32_t)gz;
  ir_eval_hooks_t h = {.ctx = &s, .load = rp_load, .store = rp_store};
  int64_t sregs[HG_SMID + 1];
  memset(sregs, 0, sizeof sregs);
  sregs[HG_NTID_X] = 256;
  sregs[HG_NCTAID_X] = l.grid[0];
  sregs[HG_NCTAID_Y] = 1;
  sregs[HG_NCTAID_Z] = l.grid[2];
  hg_status_t st = hg_ok();
  for (uint32_t cz = 0; cz < l.grid[2] && hg_is_ok(&st); cz++)
    for (uint32_t cx = 0; cx < l.grid[0] && hg_is_ok(&st); cx++)
      for (int t = 0; t < 256 && hg_is_ok(&st); t++) {
        sregs[HG_TID_X] = t;
        sregs[HG_CTAID_X] = cx;
        sregs[HG_CTAID_Z] = cz;
        ir_eval_t ev;
        st = ir_eval_run_hooks(b, params, sregs, &h, &ev);
        if (hg_is_ok(&st)) ir_eval_free(&ev);
      }
  CHECK_OK(st);
  int64_t rows = 0;
  for (int i = 0; i < n_ops; i++) {
    int64_t first;
    const int64_t wrong = rp_opnd_wrong(&s.op[i], e, &first);
    const rp_opnd_t *o = &s.op[i];
    rows += o->x.rows;
    hg_test_checks++;
    if (wrong)
      HG_FAIL("repack (%s) of %d-byte elements, %s %lld x %lld (ld %lld, base +%d) x %lld, grid "
              "z %u: %lld bytes wrong or not written once (first at %lld)",
              n_ops == 1 ? "one operand" : "pair", e, i ? "B" : "A", (long long)o->x.rows,
              (long long)o->x.cols, (long long)o->x.ld_src, shapes[i].mis, (long long)batch,
              l.grid[2], (long long)wrong, (long long)first);
    free(s.op[i].dst);
    free(s.op[i].writes);
  }
  hg_test_checks++;
  if (s.bad_loads || s.bad_stores || (s.loads == 0 && rows > 0 && batch > 0))
    HG_FAIL("repack (%s) of %d-byte elements x %lld: %d loads outside the tensors' 16-byte "
            "blocks, %d stores outside the destinations, %d loads",
            n_ops == 1 ? "one operand" : "pair", e, (long long)batch, s.bad_loads, s.bad_stores,
            s.loads);
  hg_builder_destroy(b);
}

static void repack_case(int e, int64_t rows, int64_t cols, int64_t batch, int64_t ld_src, int mis,
                        int gz) {
  const rp_shape_t sh = {rows, cols, ld_src, mis, 3}; /* batches a few elements more apart */
  repack_run(e, 1, &sh, batch, gz);
}

/* The pair kernel: A and B of different rows, columns, pitches, misalignments and batch
 * strides, in one launch. */
static void test_repack_pair_cpu(void) {
  /* bf16 1001x999x4097-like in miniature: A 5 x 13 at +2, B 7 x 13 (ld 15) at +6, batched */
  repack_run(2, 2, (const rp_shape_t[]){{5, 13, 13, 2, 3}, {7, 13, 15, 6, 0}}, 2, 0);
  /* different row lengths: A's rows a warp each (lw 5), B's a thread each (lw 0), and more
   * rows than one CTA holds on both sides of the split */
  repack_run(2, 2, (const rp_shape_t[]){{9, 4097, 4097, 14, 1}, {300, 3, 5, 4, 2}}, 1, 0);
  repack_run(2, 2, (const rp_shape_t[]){{300, 7, 9, 10, 0}, {20, 129, 131, 0, 5}}, 3, 1);
  /* fp8 at any byte, the batch looped (grid z 2 for 3 batches) */
  repack_run(1, 2, (const rp_shape_t[]){{7, 127, 129, 5, 1}, {4, 33, 33, 15, 7}}, 3, 2);
  repack_run(1, 2, (const rp_shape_t[]){{3, 1, 1, 3, 0}, {6, 200, 201, 9, 11}}, 2, 0);
  /* an operand with no rows (a GEMM of M = 0 or N = 0 has one): it gets no CTA */
  repack_run(2, 2, (const rp_shape_t[]){{0, 13, 13, 2, 0}, {7, 13, 15, 6, 0}}, 2, 0);
  repack_run(1, 2, (const rp_shape_t[]){{5, 33, 35, 1, 0}, {0, 33, 33, 3, 0}}, 1, 0);
  /* 4-byte elements, aligned rows (no second block) */
  repack_run(4, 2, (const rp_shape_t[]){{3, 5, 7, 4, 0}, {4, 16, 20, 0, 0}}, 2, 0);
  /* the geometry: A's CTAs first, each operand's lanes; unequal batches are refused */
  hg_repack_args_t xa = {.dst = RP_DST,
                         .src = RP_SRC + 2,
                         .rows = 1001,
                         .cols = 4097,
                         .batch = 1,
                         .ld_dst = 4104,
                         .ld_src = 4097},
                   xb = xa;
  xb.rows = 999;
  xb.dst = RP_DST + RP_APART;
  hg_launch_t l;
  int32_t lw[2], ctas_a;
  CHECK_OK(hg_repack_pair_geometry(&xa, &xb, 2, &l, lw, &ctas_a));
  CHECK(lw[0] == 5 && lw[1] == 5 && ctas_a == 126); /* 8 rows a CTA: 126 + 125 CTAs */
  CHECK(l.grid[0] == 251 && l.grid[1] == 1 && l.grid[2] == 1 && l.block[0] == 256);
  xb.cols = xb.ld_src = 3;
  xb.ld_dst = 8;
  CHECK_OK(hg_repack_pair_geometry(&xa, &xb, 2, &l, lw, &ctas_a));
  CHECK(lw[1] == 0 && ctas_a == 126 && l.grid[0] == 126 + 4); /* 256 rows a CTA */
  xb.rows = 0;
  CHECK_OK(hg_repack_pair_geometry(&xa, &xb, 2, &l, lw, &ctas_a));
  CHECK(ctas_a == 126 && l.grid[0] == 126);
  xb.rows = 999;
  xb.batch = 2;
  CHECK_ERR(hg_repack_pair_geometry(&xa, &xb, 2, &l, lw, &ctas_a), HG_ERR_INVALID,
            "A has 1 and B 2");
  xb.batch = 1;
  xb.ld_dst = 2;
  CHECK_ERR(hg_repack_pair_geometry(&xa, &xb, 2, &l, lw, &ctas_a), HG_ERR_INVALID,
            "B: repack leading dimensions");
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("repack_pair", &b));
  CHECK_ERR(hg_repack_pair_build(b, 3), HG_ERR_UNSUPPORTED, "not 3");
  hg_builder_destroy(b);
}

static void test_repack_cpu(void) {
  repack_case(2, 5, 13, 2, 13, 2, 0);     /* bf16, odd K, a base 2 bytes off */
  repack_case(2, 3, 4097, 1, 4097, 0, 0); /* a row of 513 chunks: a whole warp, 5 rounds */
  repack_case(2, 9, 7, 3, 9, 14, 1);      /* 7 columns (less than a chunk), the batch looped */
  repack_case(2, 300, 1, 1, 1, 6, 0);     /* one column, 256 rows a CTA and more */
  repack_case(1, 7, 127, 2, 129, 5, 0);   /* fp8 at any byte */
  repack_case(1, 4, 33, 1, 33, 15, 0);
  repack_case(4, 3, 5, 2, 7, 4, 0);   /* 4-byte elements, 4 bytes off */
  repack_case(2, 4, 64, 2, 72, 0, 0); /* aligned rows: no second block */
  /* what the kernel cannot do is refused with the rule */
  hg_repack_args_t x = {.dst = RP_DST + 8,
                        .src = RP_SRC,
                        .rows = 4,
                        .cols = 5,
                        .batch = 1,
                        .ld_dst = 8,
                        .ld_src = 5,
                        .bs_dst = 32,
                        .bs_src = 20};
  hg_launch_t l;
  int32_t lw;
  CHECK_ERR(hg_repack_geometry(&x, 2, &l, &lw), HG_ERR_INVALID, "multiples of 16 bytes");
  x.dst = RP_DST;
  x.ld_dst = 4;
  CHECK_ERR(hg_repack_geometry(&x, 2, &l, &lw), HG_ERR_INVALID, "must hold a row of 5");
  x.ld_dst = 8;
  x.src = RP_SRC + 1;
  CHECK_ERR(hg_repack_geometry(&x, 2, &l, &lw), HG_ERR_INVALID, "not 2-byte aligned");
  x.src = RP_SRC;
  CHECK_OK(hg_repack_geometry(&x, 2, &l, &lw));
  CHECK_EQ(lw, 0); /* one 16-byte chunk a row: a thread a row, 256 rows a CTA */
  CHECK_EQ(l.grid[0], 1);
  x.cols = x.ld_src = 4097;
  x.ld_dst = 4104;
  x.rows = 4096;
  x.batch = 70000;
  x.bs_dst = 4104 * 4096;
  CHECK_OK(hg_repack_geometry(&x, 2, &l, &lw));
  CHECK(lw == 5 && l.grid[0] == 512 && l.grid[2] == 65535); /* a warp a row, 8 rows a CTA */
}

/* A bf16 GEMM problem with D of type d, an activation and a bias of type bt along N, M or
 * none (0, 1, 2 as hg_gemm_bias_t). */
static hg_gemm_problem_t bias_problem(int64_t n, hg_dtype_t d, hg_act_t act, int bias,
                                      hg_dtype_t bt) {
  hg_gemm_problem_t p = {.m = 100,
                         .n = n,
                         .k = 64,
                         .batch = 2,
                         .a_type = HG_BF16,
                         .b_type = HG_BF16,
                         .d_type = d,
                         .a_k_major = true,
                         .b_k_major = true,
                         .alpha = 1.0f,
                         .act = act,
                         .act_lo = -1.0f,
                         .act_hi = 2.0f,
                         .bias = (hg_gemm_bias_t)bias,
                         .bias_type = bt};
  CHECK_OK(hg_gemm_problem_normalize(&p));
  return p;
}

/* The unfused sequence's elementwise kernel: every output type, bias direction and
 * activation, 16-byte chunks where rows allow and single elements where not, both backends
 * for one variant; a bias of fp8 and an fp8 D are refused. */
static void test_bias_act(void) {
  static const hg_dtype_t types[] = {HG_BF16, HG_F16, HG_F32};
  static const hg_act_t acts[] = {HG_ACT_NONE, HG_ACT_RELU,    HG_ACT_GELU, HG_ACT_GELU_TANH,
                                  HG_ACT_SILU, HG_ACT_SIGMOID, HG_ACT_CLAMP};
  int n = 0;
  hg_kernel_t k;
  for (int t = 0; t < 3; t++)
    for (int bias = 0; bias < 3; bias++)
      for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
        const hg_gemm_problem_t p =
            bias_problem((a % 2) ? 1000 : 1001, types[t], acts[a], bias, types[(t + bias) % 3]);
        CHECK_OK(hg_gen_bias_act(&p, HG_GELU_POLY7, HG_BACKEND_PTX, &k));
        CHECK(strstr(k.name, (a % 2) ? (t == 2 ? "_v4" : "_v8") : "_v1") != NULL);
        if (k.ptx.data && (n++ % 4 == 0 || a == 2)) check_ptxas(&k);
        if (k.ptx.data && a == 2) CHECK(strstr(k.ptx.data, "ex2.approx") != NULL);
        hg_kernel_free(&k);
      }
  hg_gemm_problem_t p = bias_problem(64, HG_BF16, HG_ACT_SILU, HG_BIAS_N, HG_BF16);
  bool lowered;
  CHECK_OK_MLIR(hg_gen_bias_act(&p, HG_GELU_POLY7, HG_BACKEND_MLIR, &k), lowered);
  if (lowered) {
    if (k.ptx.data) check_ptxas(&k);
    CHECK(strstr(k.name, "_v8") != NULL);
    hg_kernel_free(&k);
  }
  /* the erf GELU's formula follows the fused kernel's configuration (--gelu as): the erfc
   * form has |x|, poly7 none; only a non-default formula names the kernel */
  hg_gemm_problem_t g = bias_problem(1000, HG_BF16, HG_ACT_GELU, HG_BIAS_N, HG_BF16);
  CHECK_OK(hg_gen_bias_act(&g, HG_GELU_POLY7, HG_BACKEND_PTX, &k));
  CHECK(strstr(k.ptx.data, "abs.f32") == NULL && strstr(k.name, "gelu_v") != NULL);
  hg_kernel_free(&k);
  CHECK_OK(hg_gen_bias_act(&g, HG_GELU_AS, HG_BACKEND_PTX, &k));
  CHECK(strstr(k.ptx.data, "abs.f32") != NULL && strstr(k.name, "gelu_as_v") != NULL);
  check_ptxas(&k);
  hg_kernel_free(&k);
  CHECK_ERR(hg_gen_bias_act(&g, (hg_gelu_alg_t)4, HG_BACKEND_PTX, &k), HG_ERR_INVALID,
            "formula 4 is not known");
  p.bias_type = HG_E4M3;
  CHECK_ERR(hg_gen_bias_act(&p, HG_GELU_POLY7, HG_BACKEND_PTX, &k), HG_ERR_UNSUPPORTED,
            "a bias of e4m3");
  p.bias_type = HG_BF16;
  p.d_type = HG_E4M3;
  CHECK_ERR(hg_gen_bias_act(&p, HG_GELU_POLY7, HG_BACKEND_PTX, &k), HG_ERR_UNSUPPORTED, "not e4m3");
}

int main(void) {
  HG_RUN(test_fill_random);
  HG_RUN(test_reference_gemm);
  HG_RUN(test_repack);
  HG_RUN(test_repack_cpu);
  HG_RUN(test_repack_pair_cpu);
  HG_RUN(test_bias_act);
  return hg_test_finish();
}
