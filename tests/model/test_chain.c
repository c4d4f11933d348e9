/* The chain CI relies on to catch descriptor, swizzle and coordinate bugs without a GPU:
 * fill a global matrix with distinct values, "load" a tile with the TMA plan into simulated
 * shared memory (the CPU model of TMA, multicast to every CTA of the cluster), then "read"
 * it back through the wgmma descriptor of every MN atom and k-block (the CPU model of
 * wgmma) and require exactly the expected (mn, k) elements: zero where the tile hangs over
 * an edge of the tensor or starts at negative coordinates.
 *
 * Values: element (i, j) of the MN x K tensor has id 1 + i + MN j (< 2^24). Elements of e
 * bytes carry e bytes of the id per pass; 1-byte types take three passes, 2-byte two. */
#include "hg_test.h"
#include "hopgen/sm90.h"

typedef struct cfg {
  hg_dtype_t t;
  hg_major_t major;
  hg_swizzle_mode_t sw;
  int mn, k, atom_mn, cluster;
  int32_t org_mn, org_k;
  int64_t MN, K;
} cfg_t;

static hg_tma_plan_t plan;
static int cases_run, cases_failed, cases_seen;

/* Sanitizer builds check memory safety, not coverage (the release build runs everything):
 * they take every 4th case of the matrix, which keeps them under a minute. */
#if defined(__SANITIZE_ADDRESS__)
#define MATRIX_STRIDE 4
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MATRIX_STRIDE 4
#endif
#endif
#ifndef MATRIX_STRIDE
#define MATRIX_STRIDE 1
#endif

static void describe(const cfg_t *c, char *buf, size_t n) {
  snprintf(buf, n, "%s %s-major %s tile %dx%d atom %d cluster %d origin (%d,%d) tensor %lldx%lld",
           hg_dtype_name(c->t), hg_major_name(c->major), hg_swizzle_mode_name(c->sw), c->mn, c->k,
           c->atom_mn, c->cluster, c->org_mn, c->org_k, (long long)c->MN, (long long)c->K);
}

static void run_case(const cfg_t *c) {
  char what[256];
  describe(c, what, sizeof what);
  cases_run++;
  const int before = hg_test_failures;
  const int e = hg_dtype_bytes(c->t), q = 16 / e;
  hg_gmma_operand_t op;
  hg_status_t s = hg_gmma_operand_make(c->t, c->major, c->sw, c->mn, c->k, c->atom_mn, &op);
  if (!hg_is_ok(&s)) {
    HG_FAIL("%s: operand: %s", what, s.msg);
    cases_failed++;
    return;
  }
  /* The tensor: K-major rows of K (padded to 16 B), or MN-major columns of MN. */
  hg_tma_tensor_t g;
  memset(&g, 0, sizeof g);
  g.dtype = c->t;
  g.rank = 2;
  g.shape[0] = c->MN;
  g.shape[1] = c->K;
  int64_t pitch, elems;
  if (c->major == HG_MAJOR_K) {
    pitch = (c->K + q - 1) / q * q;
    g.stride[0] = pitch;
    g.stride[1] = 1;
    elems = c->MN * pitch;
  } else {
    pitch = (c->MN + q - 1) / q * q;
    g.stride[0] = 1;
    g.stride[1] = pitch;
    elems = c->K * pitch;
  }
  g.base_align_bytes = 256;
  hg_tma_options_t o = hg_tma_options_default(HG_TMA_LOAD);
  o.cluster = c->cluster;
  o.origin_known = true;
  o.origin[0] = c->org_mn;
  o.origin[1] = c->org_k;
  s = hg_tma_plan_make(&g, &op.layout, &o, &plan);
  if (!hg_is_ok(&s)) {
    HG_FAIL("%s: plan: %s", what, s.msg);
    cases_failed++;
    return;
  }
  if (plan.smem_bytes > op.stage_bytes)
    HG_FAIL("%s: the plan writes %u B, the stage buffer is %u B", what, plan.smem_bytes,
            op.stage_bytes);
  const uint32_t base = 2048; /* a 1024-aligned stage buffer, not at address 0 */
  const size_t smem_size = base + op.stage_bytes + 1024;
  const size_t gbytes = (size_t)elems * (size_t)e;
  uint8_t *gm = malloc(gbytes);
  uint8_t *smem[4];
  for (int r = 0; r < c->cluster; r++) smem[r] = malloc(smem_size);
  uint32_t *via_desc = calloc((size_t)c->mn * (size_t)c->k, 4);
  uint32_t *via_layout = calloc((size_t)c->mn * (size_t)c->k, 4);
  uint8_t *rd = malloc((size_t)c->atom_mn * 32 * (size_t)e);
  int64_t t0[256], t1[256];
  for (int i = 0; i < c->mn; i++) {
    hg_layout_t m0;
    hg_layout_mode(&op.layout.layout, 0, &m0);
    hg_layout_eval(&m0, i, &t0[i]);
  }
  for (int j = 0; j < c->k; j++) {
    hg_layout_t m1;
    hg_layout_mode(&op.layout.layout, 1, &m1);
    hg_layout_eval(&m1, j, &t1[j]);
  }
  const int passes = (3 + e - 1) / e;
  for (int p = 0; p < passes && hg_test_failures == before; p++) {
    for (int64_t i = 0; i < c->MN; i++)
      for (int64_t j = 0; j < c->K; j++) {
        const uint32_t id = (uint32_t)(1 + i + c->MN * j);
        const uint64_t v = (uint64_t)id >> (8 * e * p);
        const int64_t at = c->major == HG_MAJOR_K ? i * pitch + j : i + j * pitch;
        for (int b = 0; b < e; b++) gm[at * e + b] = (uint8_t)(v >> (8 * b));
      }
    for (int r = 0; r < c->cluster; r++) memset(smem[r], 0xCD, smem_size);
    uint32_t tx[4] = {0, 0, 0, 0};
    const int32_t origin[2] = {c->org_mn, c->org_k};
    for (int r = 0; r < c->cluster && hg_test_failures == before; r++)
      for (int b = plan.cta_first_box[r]; b < plan.cta_first_box[r] + plan.boxes_per_cta; b++) {
        int32_t crd[5];
        CHECK_OK(hg_tma_box_coords(&plan, b, origin, crd));
        s = hg_model_tma_load_multicast(&plan.map, gm, gbytes, crd, smem, c->cluster, smem_size,
                                        base + plan.box[b].smem_offset, plan.mcast_mask, tx);
        if (!hg_is_ok(&s)) {
          HG_FAIL("%s: box %d: %s", what, b, s.msg);
          break;
        }
      }
    for (int r = 0; r < c->cluster; r++) {
      if (tx[r] != plan.expect_tx_bytes)
        HG_FAIL("%s: CTA %d's barrier got %u B, the plan expects %u", what, r, tx[r],
                plan.expect_tx_bytes);
      if (r > 0 && memcmp(smem[0] + base, smem[r] + base, op.stage_bytes))
        HG_FAIL("%s: CTA %d's stage differs from CTA 0's", what, r);
    }
    /* Read back through every descriptor (CTA 0; the others hold the same bytes). */
    for (int i = 0; i < op.mn_atoms; i++)
      for (int kb = 0; kb < op.kblocks; kb++) {
        uint64_t d;
        CHECK_OK(hg_gmma_operand_desc(&op, base, i, kb, &d));
        s = hg_model_wgmma_read(d, c->t, c->major, c->atom_mn, smem[0], smem_size, rd);
        if (!hg_is_ok(&s)) {
          HG_FAIL("%s: descriptor (%d,%d): %s", what, i, kb, s.msg);
          continue;
        }
        for (int r = 0; r < c->atom_mn; r++)
          for (int kk = 0; kk < op.atom_k; kk++) {
            uint64_t v = 0;
            for (int b = 0; b < e; b++)
              v |=
                  (uint64_t)rd[((size_t)r * (size_t)op.atom_k + (size_t)kk) * (size_t)e + (size_t)b]
                  << (8 * b);
            const int m = i * c->atom_mn + r, kx = kb * op.atom_k + kk;
            via_desc[m * c->k + kx] |= (uint32_t)(v << (8 * e * p));
          }
      }
    /* And straight through the layout function. */
    for (int i = 0; i < c->mn; i++)
      for (int j = 0; j < c->k; j++) {
        const int64_t off = hg_swizzle_apply(op.layout.sw, op.layout.offset + t0[i] + t1[j]);
        uint64_t v = 0;
        for (int b = 0; b < e; b++) v |= (uint64_t)smem[0][base + off * e + b] << (8 * b);
        via_layout[i * c->k + j] |= (uint32_t)(v << (8 * e * p));
      }
  }
  int bad = 0;
  for (int i = 0; i < c->mn && hg_test_failures == before; i++)
    for (int j = 0; j < c->k; j++) {
      const int64_t gi = (int64_t)c->org_mn + i, gj = (int64_t)c->org_k + j;
      const uint32_t want =
          gi >= 0 && gi < c->MN && gj >= 0 && gj < c->K ? (uint32_t)(1 + gi + c->MN * gj) : 0;
      const uint32_t mask = 0xFFFFFFu;
      if ((via_desc[i * c->k + j] & mask) != want && bad++ < 3)
        HG_FAIL("%s: wgmma reads element (%d,%d) as id %u, expected %u", what, i, j,
                via_desc[i * c->k + j] & mask, want);
      if ((via_layout[i * c->k + j] & mask) != want && bad++ < 3)
        HG_FAIL("%s: the layout finds element (%d,%d) as id %u, expected %u", what, i, j,
                via_layout[i * c->k + j] & mask, want);
    }
  if (hg_test_failures != before) cases_failed++;
  free(gm);
  for (int r = 0; r < c->cluster; r++) free(smem[r]);
  free(via_desc);
  free(via_layout);
  free(rd);
}

static int32_t floor_to(int64_t v, int q) {
  int64_t r = v % q;
  if (r < 0) r += q;
  return (int32_t)(v - r);
}

/* Origins: the tensor's corner, hanging over both far edges, starting at negative
 * coordinates, and wholly outside. The innermost coordinate stays a multiple of 16 B. */
static void origins(const cfg_t *c, int which, int32_t *omn, int32_t *ok) {
  const int q = 16 / hg_dtype_bytes(c->t);
  int64_t mn = 0, k = 0;
  switch (which) {
  case 0:
    break;
  case 1:
    mn = c->MN - c->mn / 2 - 1;
    k = c->K - c->k / 2 - 3;
    break;
  case 2:
    mn = -c->mn / 2 + 3;
    k = -c->k / 4 - 5;
    break;
  default:
    mn = -c->mn - 3;
    k = c->K + q;
    break;
  }
  if (c->major == HG_MAJOR_K) {
    *omn = (int32_t)mn;
    *ok = floor_to(k, q);
  } else {
    *omn = floor_to(mn, q);
    *ok = (int32_t)k;
  }
}

static void test_matrix(void) {
  static const struct {
    hg_dtype_t t;
    hg_major_t major;
  } kinds[] = {{HG_E4M3, HG_MAJOR_K}, {HG_S8, HG_MAJOR_K},    {HG_BF16, HG_MAJOR_K},
               {HG_F16, HG_MAJOR_MN}, {HG_BF16, HG_MAJOR_MN}, {HG_TF32, HG_MAJOR_K}};
  static const int tiles[][2] = {{64, 64}, {128, 64}, {64, 128}, {256, 64}, {128, 256}, {256, 256}};
  static const hg_swizzle_mode_t sws[] = {HG_SWIZZLE_NONE, HG_SWIZZLE_32B, HG_SWIZZLE_64B,
                                          HG_SWIZZLE_128B};
  for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++)
    for (size_t si = 0; si < 4; si++)
      for (size_t ti = 0; ti < sizeof tiles / sizeof tiles[0]; ti++) {
        cfg_t c;
        memset(&c, 0, sizeof c);
        c.t = kinds[ki].t;
        c.major = kinds[ki].major;
        c.sw = sws[si];
        c.mn = tiles[ti][0];
        c.k = tiles[ti][1];
        const int e = hg_dtype_bytes(c.t);
        if ((int64_t)c.mn * c.k * e > 160 * 1024) continue; /* beyond a stage buffer */
        /* Whole swizzle rows only (the refusal has its own test in sm90/test_gmma). */
        const int span = c.sw == HG_SWIZZLE_NONE ? 16 : hg_swizzle_mode_bytes(c.sw);
        if ((c.major == HG_MAJOR_K ? c.k : c.mn) * e % span != 0) continue;
        c.MN = 2 * c.mn + 3;
        c.K = c.k + c.k / 2 + 5;
        /* Instructions of 64 rows (A), of the whole tile (B with N = tile), and a narrow
         * B (N = 8, or one swizzle row's worth for MN-major). */
        int atoms[3] = {64, c.mn, 8}, natoms = 3;
        if (c.major == HG_MAJOR_MN) {
          const int row = c.sw == HG_SWIZZLE_NONE ? 8 : hg_swizzle_mode_bytes(c.sw) / e;
          atoms[2] = row < 64 ? row : 64;
        }
        if (c.mn == 64) natoms = 1, atoms[1] = atoms[2], natoms = 2;
        for (int ai = 0; ai < natoms; ai++) {
          c.atom_mn = atoms[ai];
          for (int oi = 0; oi < 4; oi++) {
            origins(&c, oi, &c.org_mn, &c.org_k);
            /* Clusters 1, 2 and 4 at the corner and over the edge; 1 elsewhere. */
            for (int cl = 1; cl <= (oi < 2 && ai == 0 ? 4 : 1); cl *= 2) {
              c.cluster = cl;
              if (cases_seen++ % MATRIX_STRIDE == 0) run_case(&c);
            }
          }
        }
      }
  fprintf(stderr, "chain: %d cases, %d failed\n", cases_run, cases_failed);
  CHECK_EQ(cases_failed, 0);
}

/* A few odd shapes: N = 24 (three groups of 8 rows), 96-row tiles, a 192 x 32 MN-major. */
static void test_odd_shapes(void) {
  const cfg_t cs[] = {
      {HG_BF16, HG_MAJOR_K, HG_SWIZZLE_128B, 96, 64, 24, 2, -5, 8, 100, 70},
      {HG_E5M2, HG_MAJOR_K, HG_SWIZZLE_64B, 192, 128, 48, 4, 150, -16, 200, 300},
      {HG_F16, HG_MAJOR_MN, HG_SWIZZLE_64B, 192, 32, 64, 2, -24, -3, 190, 31},
      {HG_TF32, HG_MAJOR_K, HG_SWIZZLE_32B, 128, 40, 128, 2, 100, 36, 129, 77},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) run_case(&cs[i]);
}

/* Whole plans on the model: load a tile (multicast to 2 CTAs), store it from the second
 * CTA into another tensor where it hangs over the edge, and reduce-add it twice. */
static void test_run_plans(void) {
  enum { M = 300, K = 200 };
  static float a[M * K], out[M * K];
  for (int i = 0; i < M * K; i++) a[i] = (float)(i % 1000);
  hg_tma_tensor_t g;
  memset(&g, 0, sizeof g);
  g.dtype = HG_F32, g.rank = 2, g.shape[0] = M, g.shape[1] = K, g.stride[0] = K, g.stride[1] = 1;
  const int tile[2] = {128, 64};
  hg_composed_t lay;
  CHECK_OK(hg_tma_smem_layout(&g, tile, HG_SWIZZLE_128B, &lay));
  hg_tma_options_t o = hg_tma_options_default(HG_TMA_LOAD);
  o.cluster = 2;
  CHECK_OK(hg_tma_plan_make(&g, &lay, &o, &plan));
  static uint8_t s0[65536], s1[65536];
  uint8_t *ctas[2] = {s0, s1};
  uint32_t tx[2];
  const int32_t from[2] = {-20, 40};
  CHECK_OK(hg_model_tma_run(&plan, a, sizeof a, from, ctas, sizeof s0, 1024, tx));
  CHECK_EQ(tx[0], 128 * 64 * 4);
  CHECK_EQ(tx[1], 128 * 64 * 4);
  CHECK(!memcmp(s0, s1, sizeof s0));
  CHECK_ERR(hg_model_tma_run(&plan, a, sizeof a, from, ctas, sizeof s0, 512, tx), HG_ERR_INVALID,
            "is not a multiple of 1024 B");
  for (int i = 0; i < M * K; i++) out[i] = -1;
  o = hg_tma_options_default(HG_TMA_STORE);
  CHECK_OK(hg_tma_plan_make(&g, &lay, &o, &plan));
  const int32_t to[2] = {250, 160};
  uint8_t *second[1] = {s1};
  CHECK_OK(hg_model_tma_run(&plan, out, sizeof out, to, second, sizeof s1, 1024, NULL));
  int bad = 0, written = 0;
  for (int m = 0; m < M; m++)
    for (int k = 0; k < K; k++) {
      const int tm = m - 250, tk = k - 160;
      float want = -1;
      if (tm >= 0 && tm < 128 && tk >= 0 && tk < 64) {
        const int sm = tm - 20, sk = tk + 40; /* the source element, zero outside */
        want = sm >= 0 && sm < M && sk < K ? a[sm * K + sk] : 0;
        written++;
      }
      if (out[m * K + k] != want && bad++ < 3)
        HG_FAIL("store: out(%d,%d) = %g, expected %g", m, k, out[m * K + k], want);
    }
  CHECK_EQ(written, 50 * 40);
  o = hg_tma_options_default(HG_TMA_REDUCE_ADD);
  CHECK_OK(hg_tma_plan_make(&g, &lay, &o, &plan));
  CHECK_OK(hg_model_tma_run(&plan, out, sizeof out, to, second, sizeof s1, 1024, NULL));
  /* Tile element (30, 5) came from a(10, 45); it is now doubled. Outside the tile: -1. */
  CHECK_EQ(out[280 * K + 165], 2 * a[10 * K + 45]);
  CHECK_EQ(out[250 * K + 160], 0);
  CHECK_EQ(out[249 * K + 160], -1);
}

int main(void) {
  HG_RUN(test_matrix);
  HG_RUN(test_odd_shapes);
  HG_RUN(test_run_plans);
  return hg_test_finish();
}
