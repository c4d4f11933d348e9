/* The sm_80 instructions on a real GPU, against the CPU model: one warp copies an input
 * image into shared memory with cp.async (16-byte .cg, 8- and 4-byte .ca; completion through
 * cp.async.mbarrier.arrive.noinc on an mbarrier, and through commit/wait_group for a region
 * whose chunks have source sizes 0..16: the zero fill), dumps shared memory, runs ldmatrix
 * x1/x2/x4 (plain and .trans) at random row addresses, and one mma.sync m16n8k16 (bf16 and
 * f16) on A and B fragments loaded by ldmatrix with the addresses a main loop uses. The host
 * checks every byte, every register against hg_model_ldmatrix, and D against A * B + C placed
 * with hg_model_mma_sync_coord. Both backends (the MLIR one where mlir-opt-22 is installed).
 *
 * Without a GPU the kernels are still built, printed by both backends and assembled with
 * ptxas, and the test then exits 77 (skipped). On a Hopper machine:
 * ctest --test-dir build -R model/test_sm80_gpu --output-on-failure */
#include "hg_test.h"
#include "hopgen/emit.h"
#include "hopgen/runtime.h"

/* The input image and shared memory (same offsets), in bytes. */
enum {
  TAGS = 0,     /* 512 distinct 16-bit tags: ldmatrix's rows */
  A_OFF = 1024, /* 16 x 16 A, K-major (rows of 32 bytes) */
  B_OFF = 1536, /* 8 x 16 B stored N x K (rows of 32 bytes) */
  Z_OFF = 1792, /* 64 chunks of 16 bytes copied with source sizes (5 c) % 17 */
  SMEM_BYTES = 2816,
  C_OFF = 2816, /* 32 lanes x 4 f32: the mma.sync C fragment */
  IN_BYTES = 3328,
};
/* The output, in bytes: the shared-memory dump, 6 ldmatrix variants x 32 lanes x 4
 * registers, 32 lanes x 4 D values. */
enum { OUT_LDM = SMEM_BYTES, OUT_D = OUT_LDM + 6 * 32 * 16, OUT_BYTES = OUT_D + 32 * 16 };
/* lane_addr: ldmatrix rows in the tags (32), A x4 rows (32), B x2 rows (32). */
enum { NADDR = 96 };

static const struct {
  int num;
  bool trans;
} variants[6] = {{1, false}, {1, true}, {2, false}, {2, true}, {4, false}, {4, true}};

static int zero_fill_size(int chunk) {
  return (5 * chunk) % 17;
}

/* base + index * scale + offset: a shared (I32) or global (I64) address. */
static hg_val_t at(hg_builder_t *b, hg_val_t base, hg_val_t index, int scale, int offset) {
  hg_val_t off = hg_b_mad(b, index, hg_b_i32(b, scale), hg_b_i32(b, offset));
  bool global = hg_val_type(b, base) == HG_T_I64;
  return hg_b_bin(b, HG_ADD, base, global ? hg_b_sext(b, off) : off);
}

static hg_status_t build(hg_dtype_t t, hg_builder_t **out) {
  char name[32];
  snprintf(name, sizeof name, "sm80_probe_%s", hg_dtype_name(t));
  hg_status_t st = hg_builder_create(name, out);
  if (st.code != HG_OK) return st;
  hg_builder_t *b = *out;
  hg_b_set_threads(b, 32);
  hg_val_t in = hg_b_param(b, HG_T_I64, "in");
  hg_val_t addrs = hg_b_param(b, HG_T_I64, "lane_addr");
  hg_val_t o = hg_b_param(b, HG_T_I64, "out");
  hg_b_smem_reserve(b, SMEM_BYTES, 128);
  uint32_t bar_off = hg_b_smem_reserve(b, 8, 8);
  hg_val_t base = hg_b_smem_addr(b, 0), bar = hg_b_smem_addr(b, bar_off);
  hg_val_t lane = hg_b_sreg(b, HG_LANEID);

  /* poison shared memory, so that a byte cp.async did not write shows */
  hg_val_t poison = hg_b_i32(b, (int32_t)0xABABABABu);
  for (int w = 0; w < SMEM_BYTES / 4; w += 32)
    hg_b_store(b, HG_SHARED, 0, 1, at(b, base, lane, 4, 4 * w), &poison);
  hg_b_if(b, hg_b_cmp(b, HG_EQ, lane, hg_b_i32(b, 0)));
  hg_b_mbar_init(b, bar, hg_b_i32(b, 32));
  hg_b_endif(b);
  hg_b_bar_sync(b, 0, 0);

  /* tags (16 B .cg), A (8 B .ca with the full source size), B (4 B .ca): 64 chunks each,
   * lane c and c + 32; completion through the barrier, one .noinc arrival per lane */
  static const struct {
    int off, bytes;
    bool size;
  } regions[3] = {{TAGS, 16, false}, {A_OFF, 8, true}, {B_OFF, 4, false}};
  for (int r = 0; r < 3; r++)
    for (int half = 0; half < 2; half++) {
      const int bytes = regions[r].bytes, off = regions[r].off + 32 * bytes * half;
      hg_b_cp_async(b, bytes, at(b, base, lane, bytes, off), at(b, in, lane, bytes, off),
                    regions[r].size ? hg_b_i32(b, bytes) : HG_NONE);
    }
  hg_b_cp_async_mbar_arrive(b, bar);
  hg_b_mbar_wait(b, bar, hg_b_i32(b, 0));
  /* the zero-fill region, completed with commit and wait_group */
  for (int half = 0; half < 2; half++) {
    hg_val_t c = hg_b_bin(b, HG_ADD, lane, hg_b_i32(b, 32 * half));
    hg_val_t size = hg_b_bin(b, HG_REM_U, hg_b_bin(b, HG_MUL, c, hg_b_i32(b, 5)), hg_b_i32(b, 17));
    hg_b_cp_async(b, 16, at(b, base, c, 16, Z_OFF), at(b, in, c, 16, Z_OFF), size);
  }
  hg_b_cp_async_commit(b);
  hg_b_cp_async_wait(b, 0);
  hg_b_bar_sync(b, 0, 0);

  for (int w = 0; w < SMEM_BYTES / 4; w += 32) {
    hg_val_t v;
    hg_b_load(b, HG_SHARED, HG_T_I32, 0, 1, at(b, base, lane, 4, 4 * w), &v);
    hg_b_store(b, HG_GLOBAL, 0, 1, at(b, o, lane, 4, 4 * w), &v);
  }

  hg_val_t row[3];
  for (int k = 0; k < 3; k++) {
    hg_val_t rel;
    hg_b_load(b, HG_GLOBAL, HG_T_I32, 0, 1, at(b, addrs, lane, 4, 4 * 32 * k), &rel);
    row[k] = hg_b_bin(b, HG_ADD, base, rel);
  }
  for (int v = 0; v < 6; v++) {
    hg_val_t r[4];
    hg_b_ldmatrix(b, variants[v].num, variants[v].trans, row[0], r);
    hg_b_store(b, HG_GLOBAL, 0, variants[v].num, at(b, o, lane, 16, OUT_LDM + 32 * 16 * v), r);
  }

  hg_val_t a[4], bf[2], acc[4], c[4];
  hg_b_ldmatrix(b, 4, false, row[1], a);
  hg_b_ldmatrix(b, 2, false, row[2], bf);
  hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 4, at(b, in, lane, 16, C_OFF), c);
  for (int i = 0; i < 4; i++) acc[i] = hg_b_var(b, HG_T_F32, c[i]);
  hg_mma_sync_op_t op = {.m = 16, .n = 8, .k = 16, .a = t, .b = t, .acc = HG_F32};
  hg_b_mma_sync(b, &op, acc, a, bf);
  hg_b_store(b, HG_GLOBAL, 0, 4, at(b, o, lane, 16, OUT_D), acc);
  return st;
}

/* ---------------------------------------------------------------- host side */

/* A small integer as a 16-bit float of type t (exact for |v| <= 256). */
static uint16_t encode(hg_dtype_t t, int v) {
  const float f = (float)v;
  uint32_t u;
  memcpy(&u, &f, 4);
  if (t == HG_BF16) return (uint16_t)(u >> 16);
  if (v == 0) return 0;
  /* f16: the same exponent re-biased (127 -> 15), the top 10 mantissa bits */
  const uint32_t e = (u >> 23 & 0xFF) - 127 + 15, m = (u >> 13) & 0x3FF;
  return (uint16_t)((u >> 16 & 0x8000) | e << 10 | m);
}

static void put16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}

static int a_val(int m, int k) {
  return (m * 7 + k * 3) % 9 - 4;
}
static int b_val(int n, int k) {
  return (n * 5 + k * 11) % 7 - 3;
}

/* The input image and the lane addresses (relative to the shared-memory base). */
static void make_inputs(hg_dtype_t t, uint8_t *in, uint32_t *addr) {
  memset(in, 0, IN_BYTES);
  for (int i = 0; i < 512; i++) put16(in + TAGS + 2 * i, (uint16_t)(0x1234 + 37 * i));
  for (int m = 0; m < 16; m++)
    for (int k = 0; k < 16; k++) put16(in + A_OFF + 32 * m + 2 * k, encode(t, a_val(m, k)));
  for (int n = 0; n < 8; n++)
    for (int k = 0; k < 16; k++) put16(in + B_OFF + 32 * n + 2 * k, encode(t, b_val(n, k)));
  for (int j = 0; j < 1024; j++) in[Z_OFF + j] = (uint8_t)(13 * j + 7);
  for (int l = 0; l < 32; l++)
    for (int i = 0; i < 4; i++) {
      const float c = (float)((4 * l + i) % 11 - 5);
      memcpy(in + C_OFF + 16 * l + 4 * i, &c, 4);
    }
  /* ldmatrix rows anywhere in the tags (16-byte aligned); A x4: lane l reads row
   * l % 8 + 8 ((l / 8) % 2), column block l / 16 (the A fragment's register order); B x2 (N x
   * K, 8 rows): row l % 8, column block (l / 8) % 2 */
  uint32_t x = 12345;
  for (int l = 0; l < 32; l++) {
    x = x * 1103515245u + 12345u;
    addr[l] = TAGS + 16 * ((x >> 16) % 64);
    addr[32 + l] = A_OFF + 32 * (uint32_t)(l % 8 + 8 * ((l / 8) % 2)) + 16 * (uint32_t)(l / 16);
    addr[64 + l] = B_OFF + 32 * (uint32_t)(l % 8) + 16 * (uint32_t)((l / 8) % 2);
  }
}

static int check_smem(const uint8_t *in, const uint8_t *out) {
  int bad = 0;
  for (int j = 0; j < SMEM_BYTES; j++) {
    uint8_t want = in[j];
    if (j >= Z_OFF) {
      const int chunk = (j - Z_OFF) / 16, within = (j - Z_OFF) % 16;
      if (within >= zero_fill_size(chunk)) want = 0; /* past the source size: zero */
    }
    if (out[j] != want && bad++ < 5)
      HG_FAIL("shared byte %d is 0x%02x, expected 0x%02x", j, out[j], want);
  }
  return bad;
}

static int check_ldmatrix(const uint8_t *in, const uint32_t *addr, const uint8_t *out) {
  int bad = 0;
  for (int v = 0; v < 6; v++) {
    uint32_t model[32][4];
    CHECK_OK(hg_model_ldmatrix(variants[v].num, variants[v].trans, addr, in, 1024, model));
    for (int l = 0; l < 32; l++)
      for (int i = 0; i < variants[v].num; i++) {
        uint32_t got;
        memcpy(&got, out + OUT_LDM + 32 * 16 * v + 16 * l + 4 * i, 4);
        if (got != model[l][i] && bad++ < 5)
          HG_FAIL("ldmatrix x%d%s lane %d register %d: GPU 0x%08x, model 0x%08x", variants[v].num,
                  variants[v].trans ? ".trans" : "", l, i, got, model[l][i]);
      }
  }
  return bad;
}

/* D = A B + C, with C and D placed where the model of the fragment figure says. */
static int check_mma(const uint8_t *in, const uint8_t *out) {
  float c[16][8], d[16][8];
  for (int l = 0; l < 32; l++)
    for (int i = 0; i < 4; i++) {
      int m, n;
      CHECK_OK(hg_model_mma_sync_coord(2, l, i, &m, &n));
      memcpy(&c[m][n], in + C_OFF + 16 * l + 4 * i, 4);
    }
  for (int m = 0; m < 16; m++)
    for (int n = 0; n < 8; n++) {
      float s = c[m][n];
      for (int k = 0; k < 16; k++) s += (float)(a_val(m, k) * b_val(n, k));
      d[m][n] = s;
    }
  int bad = 0;
  for (int l = 0; l < 32; l++)
    for (int i = 0; i < 4; i++) {
      int m, n;
      float got;
      CHECK_OK(hg_model_mma_sync_coord(2, l, i, &m, &n));
      memcpy(&got, out + OUT_D + 16 * l + 4 * i, 4);
      if (got != d[m][n] && bad++ < 5)
        HG_FAIL("mma.sync lane %d value %d (m %d, n %d): GPU %g, expected %g", l, i, m, n,
                (double)got, (double)d[m][n]);
    }
  return bad;
}

/* Run the probe's PTX on the GPU and check everything it wrote. */
static void run_on_gpu(hg_rt_t *rt, const hg_builder_t *b, hg_dtype_t t, const char *ptx) {
  uint8_t in[IN_BYTES], out[OUT_BYTES];
  uint32_t addr[NADDR];
  make_inputs(t, in, addr);
  hg_devptr_t din = 0, daddr = 0, dout = 0;
  hg_module_t *mod = NULL;
  hg_function_t *f = NULL;
  CHECK_OK(hg_rt_alloc(rt, IN_BYTES, &din));
  CHECK_OK(hg_rt_alloc(rt, sizeof addr, &daddr));
  CHECK_OK(hg_rt_alloc(rt, OUT_BYTES, &dout));
  CHECK_OK(hg_rt_upload(rt, din, in, IN_BYTES));
  CHECK_OK(hg_rt_upload(rt, daddr, addr, sizeof addr));
  CHECK_OK(hg_rt_memset8(rt, dout, 0xCD, OUT_BYTES, NULL));
  hg_status_t s = hg_rt_module_load(rt, ptx, &mod, NULL);
  CHECK_OK(s);
  if (hg_is_ok(&s)) {
    const uint32_t smem = hg_builder_smem_bytes(b);
    char name[32];
    snprintf(name, sizeof name, "sm80_probe_%s", hg_dtype_name(t));
    CHECK_OK(hg_rt_function(rt, mod, name, smem, &f));
    hg_launch_t l = {.grid = {1, 1, 1}, .block = {32, 1, 1}, .smem_bytes = smem};
    void *args[3] = {&din, &daddr, &dout};
    if (f) CHECK_OK(hg_rt_launch(rt, f, &l, args));
    CHECK_OK(hg_rt_sync(rt, NULL));
    CHECK_OK(hg_rt_download(rt, out, dout, OUT_BYTES));
    CHECK_EQ(check_smem(in, out), 0);
    CHECK_EQ(check_ldmatrix(in, addr, out), 0);
    CHECK_EQ(check_mma(in, out), 0);
    hg_rt_module_unload(rt, mod);
  }
  hg_rt_free(rt, din);
  hg_rt_free(rt, daddr);
  hg_rt_free(rt, dout);
}

int main(void) {
  hg_rt_t *rt = NULL;
  const char *ordinal = getenv("HOPGEN_TEST_DEVICE");
  hg_status_t s = hg_rt_open(ordinal ? atoi(ordinal) : 0, &rt);
  const bool gpu = hg_is_ok(&s);
  if (!gpu) fprintf(stderr, "no Hopper GPU here (%s): building and assembling only\n", s.msg);
  static const hg_dtype_t types[2] = {HG_BF16, HG_F16};
  static const hg_backend_t backends[2] = {HG_BACKEND_PTX, HG_BACKEND_MLIR};
  for (int ti = 0; ti < 2; ti++) {
    hg_builder_t *b;
    CHECK_OK(build(types[ti], &b));
    for (int be = 0; be < 2; be++) {
      /* the MLIR lowering also fills the lowering cache, so that a GPU machine without
       * mlir-opt-22 that shares the build's cache (HOPGEN_CACHE_DIR) can run it */
      hg_text_t ptx = {0};
      hg_status_t e = hg_emit(b, backends[be], &ptx);
      if (e.code == HG_ERR_TOOL && backends[be] == HG_BACKEND_MLIR) {
        fprintf(stderr, "  MLIR backend skipped: %s\n", e.msg);
        continue;
      }
      CHECK_OK(e);
      if (hg_is_ok(&e)) {
        /* ptxas where the CUDA toolkit is installed (a GPU machine may have only the driver) */
        hg_ptxas_report_t rep;
        hg_status_t a = hg_ptxas_check(ptx.data, &rep);
        if (a.code == HG_ERR_TOOL && strstr(a.msg, "not found"))
          fprintf(stderr, "  ptxas check skipped: %s\n", a.msg);
        else
          CHECK_OK(a);
        fprintf(stderr, "  %s, %s backend%s\n", hg_dtype_name(types[ti]),
                hg_backend_name(backends[be]), gpu ? ": on the GPU" : "");
        if (gpu) run_on_gpu(rt, b, types[ti], ptx.data);
      }
      hg_text_free(&ptx);
    }
    hg_builder_destroy(b);
  }
  if (rt) hg_rt_close(rt);
  const int rc = hg_test_finish();
  return rc == 0 && !gpu ? 77 : rc;
}
