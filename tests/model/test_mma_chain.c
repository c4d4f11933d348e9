/* A TiledMma end to end on the CPU models: TMA plans fill the A and B stage buffers (with
 * multicast), every warpgroup's wgmma reads its operands through the TiledMma's
 * descriptors, the products land in registers where the PTX ISA's accumulator figure puts
 * them, and the TiledMma's accumulator layout must then name, for every thread and value,
 * the (m, n) whose dot product the register holds. Small integers keep every sum exact. */
#include <math.h>

#include "hg_test.h"
#include "hopgen/sm90.h"

static hg_tma_plan_t plan;

static float decode(hg_dtype_t t, const uint8_t *p) {
  uint32_t u = 0;
  float f;
  switch (t) {
  case HG_BF16:
    u = (uint32_t)(p[0] | p[1] << 8) << 16;
    memcpy(&f, &u, 4);
    return f;
  case HG_F16: {
    const int h = p[0] | p[1] << 8, e = h >> 10 & 31, m = h & 1023;
    const float v = e == 0 ? ldexpf((float)m, -24) : ldexpf((float)(m | 1024), e - 25);
    return h & 0x8000 ? -v : v;
  }
  case HG_TF32:
    memcpy(&f, p, 4);
    return f;
  case HG_S8:
    return (float)(int8_t)p[0];
  default:
    return NAN;
  }
}

static void encode(hg_dtype_t t, int v, uint8_t *p) {
  const float f = (float)v;
  uint32_t u;
  memcpy(&u, &f, 4);
  switch (t) {
  case HG_BF16:
    p[0] = (uint8_t)(u >> 16), p[1] = (uint8_t)(u >> 24);
    break;
  case HG_F16: {
    int h = 0;
    if (v != 0) {
      const int a = abs(v);
      int e = 0;
      while ((2 << e) <= a) e++;
      h = (e + 15) << 10 | (int)((a - (1 << e)) * (1024 >> e));
      if (v < 0) h |= 0x8000;
    }
    p[0] = (uint8_t)h, p[1] = (uint8_t)(h >> 8);
    break;
  }
  case HG_TF32:
    memcpy(p, &u, 4);
    break;
  default:
    p[0] = (uint8_t)(int8_t)v;
  }
}

static int value_a(int64_t m, int64_t k) {
  return (int)((m * 7 + k * 3) % 9) - 4;
}
static int value_b(int64_t n, int64_t k) {
  return (int)((n * 5 + k * 11) % 7) - 3;
}

/* A global operand (rows x kdim) in majorness major, filled by f; loaded by a plan. */
static hg_status_t load_operand(const hg_gmma_operand_t *op, int64_t rows, int64_t kdim,
                                int (*f)(int64_t, int64_t), int32_t org_mn, int32_t org_k,
                                int cluster, uint8_t **ctas, size_t smem_size, uint32_t base) {
  const int e = hg_dtype_bytes(op->dtype), q = 16 / e;
  hg_tma_tensor_t g;
  memset(&g, 0, sizeof g);
  g.dtype = op->dtype;
  g.rank = 2;
  g.shape[0] = rows;
  g.shape[1] = kdim;
  int64_t pitch;
  if (op->major == HG_MAJOR_K) {
    pitch = (kdim + q - 1) / q * q;
    g.stride[0] = pitch, g.stride[1] = 1;
  } else {
    pitch = (rows + q - 1) / q * q;
    g.stride[0] = 1, g.stride[1] = pitch;
  }
  const size_t bytes = (size_t)(op->major == HG_MAJOR_K ? rows : kdim) * (size_t)pitch * (size_t)e;
  uint8_t *gm = calloc(bytes, 1);
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < kdim; j++)
      encode(op->dtype, f(i, j),
             gm + (op->major == HG_MAJOR_K ? i * pitch + j : i + j * pitch) * e);
  hg_tma_options_t o = hg_tma_options_default(HG_TMA_LOAD);
  o.cluster = cluster;
  hg_status_t s = hg_tma_plan_make(&g, &op->layout, &o, &plan);
  const int32_t origin[2] = {org_mn, org_k};
  for (int r = 0; r < cluster && hg_is_ok(&s); r++)
    for (int b = plan.cta_first_box[r]; b < plan.cta_first_box[r] + plan.boxes_per_cta; b++) {
      int32_t c[5];
      s = hg_tma_box_coords(&plan, b, origin, c);
      if (!hg_is_ok(&s)) break;
      s = hg_model_tma_load_multicast(&plan.map, gm, bytes, c, ctas, cluster, smem_size,
                                      base + plan.box[b].smem_offset, plan.mcast_mask, NULL);
      if (!hg_is_ok(&s)) break;
    }
  free(gm);
  return s;
}

typedef struct mma_case {
  hg_tiled_mma_spec_t spec;
  int64_t M, N, K;
  int32_t m0, n0, k0;
  int cluster;
} mma_case_t;

static hg_tiled_mma_t tm;

static void run(const mma_case_t *c) {
  const int before = hg_test_failures;
  char what[160];
  snprintf(what, sizeof what, "%s %dx%dx%d wg %dx%d A %s B %s", hg_dtype_name(c->spec.a),
           c->spec.tile_m, c->spec.tile_n, c->spec.tile_k, c->spec.wg_m, c->spec.wg_n,
           hg_major_name(c->spec.a_major), hg_major_name(c->spec.b_major));
  hg_status_t s = hg_tiled_mma_make(&c->spec, &tm);
  if (!hg_is_ok(&s)) {
    HG_FAIL("%s: %s", what, s.msg);
    return;
  }
  const uint32_t base_a = 1024, base_b = 1024 + (tm.a_op.stage_bytes + 1023) / 1024 * 1024;
  const size_t smem_size = base_b + tm.b_op.stage_bytes + 1024;
  uint8_t *ctas[4];
  for (int r = 0; r < c->cluster; r++) ctas[r] = calloc(smem_size, 1);
  s = load_operand(&tm.a_op, c->M, c->K, value_a, c->m0, c->k0, c->cluster, ctas, smem_size,
                   base_a);
  if (hg_is_ok(&s))
    s = load_operand(&tm.b_op, c->N, c->K, value_b, c->n0, c->k0, c->cluster, ctas, smem_size,
                     base_b);
  if (!hg_is_ok(&s)) HG_FAIL("%s: loading: %s", what, s.msg);
  const hg_wgmma_atom_t *at = &tm.atom;
  const int e_a = hg_dtype_bytes(at->a), e_b = hg_dtype_bytes(at->b);
  float *regs = calloc((size_t)tm.threads * (size_t)tm.acc_values, sizeof(float));
  float *d = malloc(64 * 256 * sizeof(float));
  uint8_t *ra = malloc(64 * 32 * 4), *rb = malloc(256 * 32 * 4);
  for (int w = 0; w < tm.warpgroups && hg_test_failures == before; w++)
    for (int im = 0; im < tm.atoms_m; im++)
      for (int in = 0; in < tm.atoms_n; in++) {
        for (int i = 0; i < 64 * at->n; i++) d[i] = 0;
        for (int kb = 0; kb < tm.atoms_k; kb++) {
          uint64_t da, db;
          CHECK_OK(hg_tiled_mma_desc(&tm, 0, base_a, w, im, kb, &da));
          CHECK_OK(hg_tiled_mma_desc(&tm, 1, base_b, w, in, kb, &db));
          CHECK_OK(
              hg_model_wgmma_read(da, at->a, at->a_major, 64, ctas[c->cluster - 1], smem_size, ra));
          CHECK_OK(hg_model_wgmma_read(db, at->b, at->b_major, at->n, ctas[0], smem_size, rb));
          for (int m = 0; m < 64; m++)
            for (int n = 0; n < at->n; n++) {
              float acc = 0;
              for (int k = 0; k < at->k; k++)
                acc += decode(at->a, ra + (m * at->k + k) * e_a) *
                       decode(at->b, rb + (n * at->k + k) * e_b);
              d[m + 64 * n] += acc;
            }
        }
        /* The PTX ISA's accumulator figure puts D(m, n) in thread t's register v. */
        for (int t = 0; t < 128; t++)
          for (int v = 0; v < at->acc_values; v++) {
            int m, n;
            CHECK_OK(hg_model_wgmma_acc_coord(at->n, t, v, &m, &n));
            regs[(size_t)(w * 128 + t) * (size_t)tm.acc_values +
                 (size_t)(v + at->acc_values * (im + tm.atoms_m * in))] = d[m + 64 * n];
          }
      }
  int bad = 0;
  for (int t = 0; t < tm.threads && hg_test_failures == before; t++)
    for (int v = 0; v < tm.acc_values; v++) {
      int m, n;
      CHECK_OK(hg_tiled_mma_acc_coord(&tm, t, v, &m, &n));
      float want = 0;
      const int64_t gm = c->m0 + m, gn = c->n0 + n;
      if (gm >= 0 && gm < c->M && gn >= 0 && gn < c->N)
        for (int64_t k = c->k0; k < c->k0 + c->spec.tile_k; k++)
          if (k >= 0 && k < c->K) want += (float)(value_a(gm, k) * value_b(gn, k));
      const float got = regs[(size_t)t * (size_t)tm.acc_values + (size_t)v];
      if (got != want && bad++ < 3)
        HG_FAIL("%s: thread %d value %d is (%d,%d): register holds %g, expected %g", what, t, v, m,
                n, got, want);
    }
  /* Register A: the TiledMma's fragment layout against the PTX ISA's figure. */
  if (c->spec.a_regs) {
    const int vpt = at->a_values * tm.atoms_m * tm.atoms_k;
    for (int t = 0; t < tm.threads; t++)
      for (int v = 0; v < vpt; v++) {
        hg_tuple_t crd;
        const int64_t cv[2] = {t, v};
        int64_t idx;
        int ml, kl;
        CHECK_OK(hg_tuple_ints(&crd, 2, cv));
        CHECK_OK(hg_crd2idx(&tm.a_tv, &crd, &idx));
        const int w = t / 128, wm = w % tm.wg_m, av = v % at->a_values, rest = v / at->a_values;
        const int im = rest % tm.atoms_m, kb = rest / tm.atoms_m;
        CHECK_OK(hg_model_wgmma_a_coord(at->a, t % 128, av, &ml, &kl));
        const int64_t m = (int64_t)wm * 64 * tm.atoms_m + im * 64 + ml,
                      k = (int64_t)kb * at->k + kl;
        if (idx != m + (int64_t)tm.tile_m * k && bad++ < 3)
          HG_FAIL("%s: A fragment thread %d value %d: layout %lld, figure (%lld,%lld)", what, t, v,
                  (long long)idx, (long long)m, (long long)k);
      }
  }
  for (int r = 0; r < c->cluster; r++) free(ctas[r]);
  free(regs);
  free(d);
  free(ra);
  free(rb);
}

static hg_tiled_mma_spec_t spec(hg_dtype_t t, hg_dtype_t acc, int m, int n, int k, int wg_m,
                                int wg_n, hg_major_t am, hg_major_t bm) {
  hg_tiled_mma_spec_t s;
  memset(&s, 0, sizeof s);
  s.a = s.b = t;
  s.acc = acc;
  s.tile_m = m, s.tile_n = n, s.tile_k = k;
  s.wg_m = wg_m, s.wg_n = wg_n;
  s.a_major = am, s.b_major = bm;
  s.auto_swizzle = true;
  return s;
}

static void test_128x256x64_bf16_two_warpgroups(void) {
  mma_case_t c;
  memset(&c, 0, sizeof c);
  c.spec = spec(HG_BF16, HG_F32, 128, 256, 64, 2, 1, HG_MAJOR_K, HG_MAJOR_K);
  CHECK_OK(hg_tiled_mma_make(&c.spec, &tm));
  CHECK_EQ(tm.atom.n, 256);
  CHECK_EQ(tm.threads, 256);
  CHECK_EQ(tm.atoms_m, 1);
  CHECK_EQ(tm.atoms_n, 1);
  CHECK_EQ(tm.atoms_k, 4);
  CHECK_EQ(tm.acc_values, 128);
  CHECK_EQ(tm.a_op.swizzle, HG_SWIZZLE_128B);
  CHECK_EQ(tm.a_op.mn_atom_stride_bytes, 64 * 128); /* warpgroup 1's rows: 8 KiB on */
  CHECK_EQ(tm.a_op.kblock_stride_bytes, 32);
  CHECK_EQ(tm.b_op.kblock_stride_bytes, 32);
  CHECK_EQ(tm.b_op.desc.sbo_bytes, 1024);
  CHECK_STR(tm.atom.ptx, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16");
  char buf[256];
  hg_layout_print(&tm.acc_tv, buf, sizeof buf);
  CHECK_STR(buf, "((4,8,4,2,1),(2,2,32,1,1)):((256,1,16,64,32768),(128,8,1024,64,32768))");
  c.M = 300, c.N = 700, c.K = 200;
  c.m0 = 256, c.n0 = 512, c.k0 = 160; /* hangs over M, N and K */
  c.cluster = 2;
  run(&c);
  c.m0 = -64, c.n0 = -3, c.k0 = -16;
  run(&c);
}

static void test_variants(void) {
  mma_case_t c;
  memset(&c, 0, sizeof c);
  c.M = 300, c.N = 333, c.K = 150;
  c.m0 = 200, c.n0 = -40, c.k0 = 96;
  c.cluster = 1;
  c.spec = spec(HG_BF16, HG_F32, 128, 256, 64, 1, 2, HG_MAJOR_MN, HG_MAJOR_MN);
  run(&c);
  c.spec = spec(HG_F16, HG_F16, 128, 128, 64, 2, 1, HG_MAJOR_K, HG_MAJOR_MN);
  c.cluster = 4;
  run(&c);
  c.spec = spec(HG_F16, HG_F32, 256, 128, 32, 2, 2, HG_MAJOR_MN, HG_MAJOR_K);
  c.spec.atom_n = 32; /* two N atoms per warpgroup */
  run(&c);
  c.spec = spec(HG_S8, HG_S32, 128, 96, 128, 2, 1, HG_MAJOR_K, HG_MAJOR_K);
  c.cluster = 2;
  c.k0 = 32;
  run(&c);
  c.spec = spec(HG_TF32, HG_F32, 64, 64, 32, 1, 1, HG_MAJOR_K, HG_MAJOR_K);
  c.spec.a_regs = true;
  c.k0 = -8;
  run(&c);
  c.spec = spec(HG_BF16, HG_F32, 128, 64, 64, 2, 1, HG_MAJOR_K, HG_MAJOR_K);
  c.spec.a_regs = true;
  c.spec.auto_swizzle = false;
  c.spec.a_swizzle = HG_SWIZZLE_32B;
  c.spec.b_swizzle = HG_SWIZZLE_NONE;
  run(&c);
}

static void test_refusals(void) {
  hg_tiled_mma_spec_t s = spec(HG_BF16, HG_F32, 96, 256, 64, 2, 1, HG_MAJOR_K, HG_MAJOR_K);
  CHECK_ERR(hg_tiled_mma_make(&s, &tm), HG_ERR_INVALID,
            "tile M = 96 is not a multiple of 64 rows per wgmma x 2 warpgroup(s) along M = 128");
  s = spec(HG_BF16, HG_F32, 128, 256, 40, 2, 1, HG_MAJOR_K, HG_MAJOR_K);
  CHECK_ERR(hg_tiled_mma_make(&s, &tm), HG_ERR_INVALID,
            "tile K = 40 is not a multiple of the bf16 wgmma's K = 16");
  s = spec(HG_S8, HG_S32, 128, 80, 64, 2, 1, HG_MAJOR_K, HG_MAJOR_K);
  s.atom_n = 40;
  CHECK_ERR(hg_tiled_mma_make(&s, &tm), HG_ERR_INVALID, "N = 40 is not allowed for s8");
  s = spec(HG_E4M3, HG_F32, 128, 128, 64, 2, 1, HG_MAJOR_MN, HG_MAJOR_K);
  CHECK_ERR(hg_tiled_mma_make(&s, &tm), HG_ERR_INVALID, "operand A is e4m3 and MN-major");
  s = spec(HG_BF16, HG_F32, 128, 256, 64, 1, 1, HG_MAJOR_K, HG_MAJOR_K);
  CHECK_ERR(hg_tiled_mma_make(&s, &tm), HG_ERR_INVALID, "in 256 registers");
  s = spec(HG_BF16, HG_F32, 128, 512, 64, 2, 1, HG_MAJOR_K, HG_MAJOR_K);
  CHECK_ERR(hg_tiled_mma_make(&s, &tm), HG_ERR_INVALID, "N = 512 is not allowed");
  s = spec(HG_BF16, HG_F32, 128, 256, 64, 2, 1, HG_MAJOR_K, HG_MAJOR_K);
  s.auto_swizzle = false;
  s.a_swizzle = HG_SWIZZLE_128B;
  s.b_swizzle = HG_SWIZZLE_128B;
  s.tile_k = 32;
  CHECK_ERR(hg_tiled_mma_make(&s, &tm), HG_ERR_INVALID,
            "operand A: a K-major bf16 tile with K = 32 (64 B) is not a whole number of 128-byte");
}

int main(void) {
  HG_RUN(test_128x256x64_bf16_two_warpgroups);
  HG_RUN(test_variants);
  HG_RUN(test_refusals);
  return hg_test_finish();
}
