/* The whole runtime against a mock driver and a mock cuBLASLt, on any machine.
 *
 * The mocks (mock_libcuda.c, mock_cublaslt.c) are compiled here, at run time, against the
 * CUDA toolkit's own <cuda.h>, <cudaTypedefs.h> and <cublasLt.h>: so the values, layouts
 * and signatures that hopgen declares for itself meet NVIDIA's, and the ABI version hopgen
 * asks cuGetProcAddress for is checked against the toolkit's PFN typedefs. Then the same
 * device suite that test_gpu.c runs on a Hopper GPU runs here (suite.h), plus what only a
 * mock can show: refusals of non-Hopper devices and old drivers, the dlsym fallback, the
 * cluster schedulability refusal, and what exactly reached the driver.
 *
 * Without a C compiler or the toolkit headers the test says so and is skipped (77). */
#include <dlfcn.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "hopgen/kernels.h"
#include "suite.h"

static char mock_dir[512], mock_cuda_path[700], mock_blas_path[700];

static mock_cuda_state_t *suite_mock_state(void) {
  static mock_cuda_state_fn fn;
  if (!fn) {
    void *h = dlopen(mock_cuda_path, RTLD_NOW | RTLD_NOLOAD);
    if (h) *(void **)&fn = dlsym(h, "mock_cuda_state");
  }
  static mock_cuda_state_t none;
  return fn ? fn() : &none;
}

static mock_blas_state_t *mock_blas(void) {
  static mock_blas_state_fn fn;
  if (!fn) {
    void *h = dlopen(mock_blas_path, RTLD_NOW | RTLD_NOLOAD);
    if (h) *(void **)&fn = dlsym(h, "mock_blas_state");
  }
  static mock_blas_state_t none;
  return fn ? fn() : &none;
}

/* ---------------------------------------------------------------- building the mocks */

static const char *cuda_include(void) {
  static char buf[600];
  const char *roots[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda", "/opt/cuda",
                         "/usr"};
  for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
    if (!roots[i] || !*roots[i]) continue;
    snprintf(buf, sizeof buf, "%s/include/cublasLt.h", roots[i]);
    if (access(buf, R_OK) == 0) {
      snprintf(buf, sizeof buf, "%s/include", roots[i]);
      return buf;
    }
  }
  return NULL;
}

/* 0 built, 77 cannot build here (skip), 1 the mock does not compile (a real failure:
 * most likely a signature that no longer matches the toolkit's). */
static int build_one(const char *cc, const char *inc, const char *src_dir, const char *src,
                     const char *out) {
  char cmd[3000], log[4096] = "";
  snprintf(cmd, sizeof cmd,
           "%s -shared -fPIC -std=gnu11 -O1 -Wno-deprecated-declarations "
           "-Werror=incompatible-pointer-types -Werror=implicit-function-declaration "
           "-I'%s' -I'%s' -o '%s' '%s/%s' -lm -ldl 2>&1",
           cc, inc, src_dir, out, src_dir, src);
  FILE *p = popen(cmd, "r");
  if (!p) return 77;
  size_t n = fread(log, 1, sizeof log - 1, p);
  log[n] = '\0';
  int st = pclose(p);
  if (st == 0) return 0;
  if (WIFEXITED(st) && WEXITSTATUS(st) == 127) return 77; /* no compiler */
  fprintf(stderr, "compiling %s failed:\n%s\n%s\n", src, cmd, log);
  return 1;
}

static int build_mocks(void) {
  const char *inc = cuda_include();
  if (!inc) {
    fprintf(stderr, "skipped: the CUDA toolkit headers (cuda.h, cublasLt.h) are not installed\n");
    return 77;
  }
  const char *root = getenv("HOPGEN_SOURCE_DIR");
  char src_dir[600];
  snprintf(src_dir, sizeof src_dir, "%s/tests/runtime", root ? root : ".");
  char probe[700];
  snprintf(probe, sizeof probe, "%s/mock_libcuda.c", src_dir);
  if (access(probe, R_OK) != 0) {
    fprintf(stderr, "skipped: %s not found (set HOPGEN_SOURCE_DIR)\n", probe);
    return 77;
  }
  const char *cc = getenv("CC");
  if (!cc || !*cc) cc = "cc";
  suite_tmpdir(mock_dir, sizeof mock_dir);
  snprintf(mock_cuda_path, sizeof mock_cuda_path, "%s/libcuda-mock.so.1", mock_dir);
  snprintf(mock_blas_path, sizeof mock_blas_path, "%s/libcublasLt-mock.so", mock_dir);
  int r = build_one(cc, inc, src_dir, "mock_libcuda.c", mock_cuda_path);
  if (r == 0) r = build_one(cc, inc, src_dir, "mock_cublaslt.c", mock_blas_path);
  if (r == 77) fprintf(stderr, "skipped: no C compiler (%s) to build the mock driver\n", cc);
  return r;
}

/* ---------------------------------------------------------------- what only a mock shows */

static void clear_mock_env(void) {
  const char *vars[] = {"MOCK_CUDA_DEVICES",     "MOCK_CUDA_CC",   "MOCK_CUDA_NAME",
                        "MOCK_CUDA_DRIVER",      "MOCK_CUDA_INIT", "MOCK_CUDA_PROC",
                        "MOCK_CUDA_MAX_CLUSTERS"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
}

static void expect_open_fails(hg_code_t code, const char *fragment) {
  hg_rt_t *rt = (hg_rt_t *)1;
  hg_status_t s = hg_rt_open(0, &rt);
  if (s.code != code || !strstr(s.msg, fragment))
    HG_FAIL("hg_rt_open said %s \"%s\", expected %s with \"%s\"", hg_code_name(s.code), s.msg,
            hg_code_name(code), fragment);
  CHECK(rt == NULL);
  CHECK_EQ(suite_mock_state()->retained, 0); /* nothing left retained */
}

static void test_open_refusals(void) {
  clear_mock_env();
  setenv("MOCK_CUDA_CC", "80", 1);
  setenv("MOCK_CUDA_NAME", "NVIDIA A100-SXM4-80GB", 1);
  expect_open_fails(HG_ERR_NO_DEVICE, "device 0 (NVIDIA A100-SXM4-80GB) is sm_80; hopgen's "
                                      "kernels need a Hopper (sm_90) GPU");
  setenv("MOCK_CUDA_CC", "100", 1);
  setenv("MOCK_CUDA_NAME", "NVIDIA B200", 1);
  expect_open_fails(HG_ERR_NO_DEVICE, "device 0 (NVIDIA B200) is sm_100;");
  clear_mock_env();

  setenv("MOCK_CUDA_DEVICES", "0", 1);
  expect_open_fails(HG_ERR_NO_DEVICE, "no CUDA device is visible");
  setenv("MOCK_CUDA_DEVICES", "2", 1);
  hg_rt_t *rt = NULL;
  CHECK_ERR(hg_rt_open(5, &rt), HG_ERR_NO_DEVICE,
            "device ordinal 5 is out of range: 2 CUDA devices are visible");
  CHECK_ERR(hg_rt_open(-1, &rt), HG_ERR_NO_DEVICE, "out of range");
  CHECK_OK(hg_rt_open(1, &rt));
  if (rt) {
    CHECK_EQ(hg_rt_device(rt)->ordinal, 1);
    CHECK_EQ(suite_mock_state()->retained, 1);
    hg_rt_close(rt);
  }
  CHECK_EQ(suite_mock_state()->retained, 0);
  clear_mock_env();

  setenv("MOCK_CUDA_INIT", "100", 1); /* CUDA_ERROR_NO_DEVICE */
  expect_open_fails(HG_ERR_NO_DEVICE, "cuInit found no CUDA device");
  setenv("MOCK_CUDA_INIT", "803", 1);
  expect_open_fails(HG_ERR_NO_DRIVER,
                    "cuInit failed with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (system has unsupported");
  clear_mock_env();

  setenv("MOCK_CUDA_DRIVER", "11080", 1);
  expect_open_fails(HG_ERR_NO_DRIVER,
                    "the NVIDIA driver supports CUDA 11.8, but hopgen needs CUDA 12.0 or newer");
  clear_mock_env();
}

/* Without cuGetProcAddress every entry point comes from dlsym by its ABI-suffixed name. */
static void test_dlsym_fallback(void) {
  clear_mock_env();
  setenv("MOCK_CUDA_PROC", "0", 1);
  hg_rt_t *rt = NULL;
  CHECK_OK(hg_rt_open(0, &rt));
  if (rt) {
    CHECK_EQ(hg_rt_device(rt)->sm_count, 132);
    hg_devptr_t p = 0;
    CHECK_OK(hg_rt_alloc(rt, 4096, &p));
    hg_rt_free(rt, p);
    hg_rt_close(rt);
  }
  CHECK_STR(suite_mock_state()->wrong_abi, "");
  clear_mock_env();
}

/* Every entry point was asked for at the version of the ABI hopgen declares, with the
 * legacy-stream flag, and every call happened with the runtime's context current. */
static void test_abi_audit(void) {
  mock_cuda_state_t *st = suite_mock_state();
  CHECK_STR(st->wrong_abi, "");
  CHECK(st->proc_lookups >= 39);
  CHECK_EQ(st->flags_not_legacy, 0);
  CHECK_EQ(st->wrong_context, 0);
  CHECK_EQ(st->link_size_without_nul, 0);
  CHECK_EQ(st->link_logs_missing, 0);
  mock_blas_state_t *b = mock_blas();
  CHECK_EQ(b->bad_alignment, 0);
  CHECK_EQ(b->out_of_range, 0);
  CHECK_EQ(b->workspace_missing, 0);
  CHECK(b->matmuls >= 10);
}

static void test_launch_plumbing(void) {
  hg_jit_info_t info;
  hg_module_t *m = suite_load(suite_ptx_fill, &info);
  if (!m) return;
  hg_function_t *f = NULL;
  CHECK_OK(hg_rt_function(suite_rt, m, "hg_test_fill", 0, &f));
  hg_stream_t s = NULL;
  CHECK_OK(hg_rt_stream_create(suite_rt, &s));
  hg_devptr_t out = 0;
  uint32_t n = 100;
  CHECK_OK(hg_rt_alloc(suite_rt, 4096, &out));
  void *args[] = {&out, &n};
  hg_launch_t l = {{3, 2, 1}, {64, 2, 1}, {0, 0, 0}, 4096, s};
  CHECK_OK(hg_rt_launch(suite_rt, f, &l, args));
  mock_cuda_state_t *st = suite_mock_state();
  CHECK(st->last_stream == s);
  CHECK_EQ(st->last_grid[0], 3);
  CHECK_EQ(st->last_grid[1], 2);
  CHECK_EQ(st->last_block[0], 64);
  CHECK_EQ(st->last_block[1], 2);
  CHECK_EQ(st->last_smem, 4096);
  CHECK_EQ(st->last_num_attrs, 0);
  CHECK_OK(hg_rt_sync(suite_rt, s));
  hg_rt_stream_destroy(suite_rt, s);
  hg_rt_free(suite_rt, out);
  hg_rt_module_unload(suite_rt, m);
}

/* hg_rt_stream_capture_id reports the driver's capture id while a capture is active, 0 when
 * none is, and refuses an invalidated capture with a sentence. */
static void test_capture_id(void) {
  mock_cuda_state_t *st = suite_mock_state();
  uint64_t id = 5;
  st->capture_status = 1;
  st->capture_id = 0x123456789ull;
  CHECK_OK(hg_rt_stream_capture_id(suite_rt, NULL, &id));
  CHECK_EQ(id, 0x123456789ull);
  st->capture_status = 2;
  CHECK_ERR(hg_rt_stream_capture_id(suite_rt, NULL, &id), HG_ERR_CUDA, "invalidated");
  CHECK_EQ(id, 0);
  st->capture_status = 0;
  id = 5;
  CHECK_OK(hg_rt_stream_capture_id(suite_rt, NULL, &id));
  CHECK_EQ(id, 0);
}

static void test_cluster_refused_when_unschedulable(void) {
  hg_jit_info_t info;
  hg_module_t *m = suite_load(suite_ptx_cluster, &info);
  if (!m) return;
  hg_function_t *f = NULL;
  CHECK_OK(hg_rt_function(suite_rt, m, "hg_test_cluster_rank", 0, &f));
  hg_devptr_t out = 0;
  CHECK_OK(hg_rt_alloc(suite_rt, 4096, &out));
  void *args[] = {&out};
  setenv("MOCK_CUDA_MAX_CLUSTERS", "0", 1);
  const int launches = suite_mock_state()->launches;
  hg_launch_t l = {{8, 1, 1}, {128, 1, 1}, {4, 1, 1}, 64 * 1024, NULL};
  CHECK_ERR(hg_rt_launch(suite_rt, f, &l, args), HG_ERR_INVALID,
            "device 0 (NVIDIA H100 80GB HBM3) cannot co-schedule a 4x1x1 cluster of kernel "
            "hg_test_cluster_rank (128 threads and 65536 B dynamic + 0 B static shared memory "
            "per CTA)");
  CHECK_EQ(suite_mock_state()->launches, launches); /* nothing was launched */
  unsetenv("MOCK_CUDA_MAX_CLUSTERS");
  CHECK_OK(hg_rt_launch(suite_rt, f, &l, args));
  CHECK_OK(hg_rt_sync(suite_rt, NULL));
  hg_rt_free(suite_rt, out);
  hg_rt_module_unload(suite_rt, m);
}

/* hg_gemm_op_run's host path: tensor maps encoded once for pointers that repeat (a run with
 * the same A, B and D encodes nothing; a new D encodes one), and AUTO's repack of operands TMA
 * cannot address runs before the GEMM, one launch of the pair kernel when both are repacked
 * and of the one-operand kernel when one is, into the caller's workspace
 * (hg_gemm_op_run_workspace) or one hg_gemm_op_run allocates once. */
/* fp8's fast accumulation reaches cuBLASLt as CUBLASLT_MATMUL_DESC_FAST_ACCUM, on its own
 * plan: the default (accurate) call after it does not carry it. */
static void test_blas_fast_accum(void) {
  hg_blas_t *blas = NULL;
  CHECK_OK(hg_blas_open(suite_rt, &blas));
  if (!blas) return;
  suite_gemm_t c = {64, 64, 128, 1, HG_E4M3, HG_E4M3, HG_BF16, true, true, 1, 0, false, 0, 0};
  c.fast_accum = true;
  suite_gemm_check(blas, &c, "e4m3 fast accumulation (mock)");
  CHECK_EQ(mock_blas()->last_fast_accum, 1);
  c.fast_accum = false;
  suite_gemm_check(blas, &c, "e4m3 accurate accumulation (mock)");
  CHECK_EQ(mock_blas()->last_fast_accum, 0);
  hg_blas_close(blas);
}

/* The e4m3 x e4m3 -> bf16 GEMM (m x n x k, K-major operands, alpha 1) on device buffers, with
 * cuBLASLt scale mode `scale` (1 row-wise, 2 block-wise) and the scales' leading dimensions. */
static hg_blas_gemm_args_t scaled_e4m3(int64_t m, int64_t n, int64_t k, hg_devptr_t a,
                                       hg_devptr_t b, hg_devptr_t d, hg_devptr_t sa, hg_devptr_t sb,
                                       int scale, int64_t slda, int64_t sldb) {
  return (hg_blas_gemm_args_t){.m = m,
                               .n = n,
                               .k = k,
                               .batch = 1,
                               .a_type = HG_E4M3,
                               .b_type = HG_E4M3,
                               .cd_type = HG_BF16,
                               .a_k_major = true,
                               .b_k_major = true,
                               .alpha = 1,
                               .a = a,
                               .b = b,
                               .d = d,
                               .scale_a = sa,
                               .scale_b = sb,
                               .scale = scale,
                               .scale_lda = slda,
                               .scale_ldb = sldb};
}

/* fp8 row- and block-wise scales through cuBLASLt's scale modes: hopgen's layouts (kernels.h)
 * reach the mock's documented meaning (OUTER_VEC_32F on both; BLK128x128_32F on its A = hopgen's
 * B, VEC128_32F on its B = hopgen's A) and give hopgen's definition, computed here in double:
 * row D(i, j) = sa[i] sb[j] (A B)(i, j); block D(i, j) = sum_kb sa[kb M + i] sb[(j / 128) L4 + kb]
 * (A B over kb)(i, j), K = 300 ending in a partial k-block, N = 160 in two column blocks, B's
 * scale rows ceil(K / 128) = 3 rounded up to L4 = 4 (cuBLAS's BLK128x128 layout). The scale
 * pointers are on the descriptor before the heuristic (the mock refuses a vector mode without
 * them, as cuBLASLt did on the H100); the rules' sentences: B's row stride, M and N multiples
 * of 4. */
static void test_blas_scale_modes(void) {
  hg_blas_t *blas = NULL;
  CHECK_OK(hg_blas_open(suite_rt, &blas));
  if (!blas) return;
  enum { M = 48, N = 160, K = 300, KB = 3, L4 = 4, NB = 2 };
  static uint8_t ha[M * K], hb[N * K];
  static float sa[KB * M], sb[N]; /* block: the first NB x L4 of sb */
  static uint16_t hd[M * N];
  uint64_t rng = 12345;
  for (int i = 0; i < M * K; i++) ha[i] = hgt_f32_to_fp8(hgt_rand_quarter(&rng) * 4, 0);
  for (int i = 0; i < N * K; i++) hb[i] = hgt_f32_to_fp8(hgt_rand_quarter(&rng) * 4, 0);
  for (int i = 0; i < KB * M; i++) sa[i] = 0.5f + (float)(i % 7) / 4;
  for (int i = 0; i < N; i++) sb[i] = 2.0f - (float)(i % 5) / 4;
  hg_devptr_t da, db, dd, dsa, dsb;
  CHECK_OK(hg_rt_alloc(suite_rt, sizeof ha, &da));
  CHECK_OK(hg_rt_alloc(suite_rt, sizeof hb, &db));
  CHECK_OK(hg_rt_alloc(suite_rt, sizeof hd, &dd));
  CHECK_OK(hg_rt_alloc(suite_rt, sizeof sa, &dsa));
  CHECK_OK(hg_rt_alloc(suite_rt, sizeof sb, &dsb));
  CHECK_OK(hg_rt_upload(suite_rt, da, ha, sizeof ha));
  CHECK_OK(hg_rt_upload(suite_rt, db, hb, sizeof hb));
  CHECK_OK(hg_rt_upload(suite_rt, dsa, sa, sizeof sa));
  CHECK_OK(hg_rt_upload(suite_rt, dsb, sb, sizeof sb));
  for (int mode = 1; mode <= 2; mode++) {
    const hg_blas_gemm_args_t g =
        scaled_e4m3(M, N, K, da, db, dd, dsa, dsb, mode, mode == 2 ? M : 0, mode == 2 ? L4 : 0);
    const int rejected = mock_blas()->scale_rejected;
    CHECK_OK(hg_blas_gemm(blas, &g));
    CHECK_EQ(mock_blas()->scale_rejected, rejected);
    CHECK_EQ(mock_blas()->last_scale_mode_a, mode == 1 ? 3 : 5);
    CHECK_EQ(mock_blas()->last_scale_mode_b, mode == 1 ? 3 : 4);
    CHECK_OK(hg_rt_download(suite_rt, hd, dd, sizeof hd));
    double num = 0, den = 0;
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        double ref = 0, part = 0;
        for (int k = 0; k < K; k++) {
          part += (double)hgt_e4m3_to_f32(ha[i * K + k]) * hgt_e4m3_to_f32(hb[j * K + k]);
          if (k % 128 == 127 || k + 1 == K) {
            const int kb = k / 128;
            ref += mode == 2 ? part * sa[kb * M + i] * sb[(j / 128) * L4 + kb] : part;
            part = 0;
          }
        }
        if (mode == 1) ref *= (double)sa[i] * sb[j];
        const double got = hgt_bf16_to_f32(hd[i * N + j]);
        num += (got - ref) * (got - ref);
        den += ref * ref;
      }
    const double rel = sqrt(num / den);
    if (!(rel < 1e-2)) HG_FAIL("scale mode %d: relative error %.3g", mode, rel);
  }
  /* cuBLASLt's block layouts: A's scales packed, B's rows of L4 */
  hg_blas_gemm_args_t g = scaled_e4m3(M, N, K, da, db, dd, dsa, dsb, 2, M + 4, L4);
  CHECK_ERR(hg_blas_gemm(blas, &g), HG_ERR_UNSUPPORTED, "1x128 block scales packed");
  g.scale_lda = M;
  g.scale_ldb = KB;
  CHECK_ERR(hg_blas_gemm(blas, &g), HG_ERR_UNSUPPORTED, "rounded up to 4 (scale_ldb = 4)");
  g.scale_ldb = L4;
  g.m = M - 2;
  g.scale_lda = M - 2;
  CHECK_ERR(hg_blas_gemm(blas, &g), HG_ERR_UNSUPPORTED, "M and N multiples of 4 (M = 46");
  hg_rt_free(suite_rt, da);
  hg_rt_free(suite_rt, db);
  hg_rt_free(suite_rt, dd);
  hg_rt_free(suite_rt, dsa);
  hg_rt_free(suite_rt, dsb);
  hg_blas_close(blas);
}

/* Parameter pname of the first launch of fname in the mock's param_log (found: whether it is
 * there); with pname "<<<" the launch's grid x. */
static long long logged_param(const char *log, const char *fname, const char *pname, bool *found) {
  char pat[96];
  *found = false;
  snprintf(pat, sizeof pat, "%s<<<", fname);
  const char *at = strstr(log, pat);
  if (!at) return 0;
  if (!strcmp(pname, "<<<")) {
    *found = true;
    return strtoll(at + strlen(pat), NULL, 10);
  }
  const char *end = strstr(at, ") ");
  for (const char *sep = "(,"; *sep; sep++) {
    snprintf(pat, sizeof pat, "%c%s=", *sep, pname);
    const char *q = strstr(at, pat);
    if (q && (!end || q < end)) {
      *found = true;
      return strtoll(q + strlen(pat), NULL, 10);
    }
  }
  return 0;
}

/* The launch of fname in the mock's param_log has parameter pname = want. */
#define CHECK_PARAM(fname, pname, want)                                                            \
  do {                                                                                             \
    bool found_;                                                                                   \
    const long long got_ = logged_param(st->param_log, fname, pname, &found_);                     \
    hg_test_checks++;                                                                              \
    if (!found_ || got_ != (long long)(want))                                                      \
      HG_FAIL("%s's %s: %s%lld, expected %lld", fname, pname, found_ ? "" : "not logged, ", got_,  \
              (long long)(want));                                                                  \
  } while (0)

/* A and B swapped (config ",sw"): the kernel runs N x M with the caller's B as its A, its
 * operands repacked in the kernel's roles (the pair kernel's A is the caller's B), the row and
 * column scales traded, D stored transposed (no TMA map for it). */
static void test_gemm_op_swapped(void) {
  mock_cuda_state_t *st = suite_mock_state();
  hg_gemm_problem_t p = {.m = 400,
                         .n = 333,
                         .k = 1001,
                         .batch = 1,
                         .a_type = HG_BF16,
                         .b_type = HG_BF16,
                         .d_type = HG_BF16,
                         .a_k_major = true,
                         .b_k_major = false,
                         .alpha = 1.0f,
                         .rowscale = true};
  hg_gemm_config_t c;
  CHECK_OK(hg_gemm_config_parse("128x112x64,c1x1,s4,coop,m8,e0,sw", &c));
  hg_gemm_op_t *op = NULL;
  CHECK_OK(hg_gemm_op_create(suite_rt, &p, &c, HG_BACKEND_PTX, &op));
  if (!op) return;
  const hg_gemm_kernel_t *gk = hg_gemm_op_kernel(op);
  CHECK(gk->swapped && gk->problem.m == 333 && gk->problem.n == 400);
  CHECK(!gk->problem.a_k_major && gk->problem.b_k_major);
  CHECK(gk->problem.colscale && !gk->problem.rowscale);
  CHECK(gk->repack_a && gk->repack_b && !gk->tma_store);
  CHECK(strstr(gk->k.name, "_sw") != NULL);
  hg_devptr_t a = 0, b = 0, d = 0, rs = 0;
  CHECK_OK(hg_rt_alloc(suite_rt, 400 * 1001 * 2, &a));
  CHECK_OK(hg_rt_alloc(suite_rt, 1001 * 333 * 2, &b));
  CHECK_OK(hg_rt_alloc(suite_rt, 400 * 333 * 2, &d));
  CHECK_OK(hg_rt_alloc(suite_rt, 400 * 4, &rs));
  /* the caller's rowscale is the kernel's column scale: without it, the sentence names it */
  hg_gemm_args_t x = {.a = a, .b = b, .d = d};
  CHECK_ERR(hg_gemm_op_run_args(op, &x, NULL), HG_ERR_INVALID, "hg_gemm_args_t.rowscale");
  x.rowscale = rs;
  const int encodes = st->encodes;
  st->launch_log[0] = st->param_log[0] = '\0';
  CHECK_OK(hg_gemm_op_run_args(op, &x, NULL));
  CHECK_EQ(st->encodes - encodes, 2); /* the packed A and B; D has no map */
  const char *f = "hg_repack2_b16";
  CHECK_PARAM(f, "src_a", b); /* the caller's B, N-major: K rows of N */
  CHECK_PARAM(f, "rows_a", 1001);
  CHECK_PARAM(f, "cols_a", 333);
  CHECK_PARAM(f, "src_b", a); /* the caller's A, K-major: M rows of K */
  CHECK_PARAM(f, "rows_b", 400);
  CHECK_PARAM(f, "cols_b", 1001);
  CHECK_PARAM(gk->k.name, "m", 333);
  CHECK_PARAM(gk->k.name, "n", 400);
  CHECK_PARAM(gk->k.name, "d", d);
  CHECK_PARAM(gk->k.name, "ldd", 333);
  CHECK_PARAM(gk->k.name, "colscale", rs);
  hg_gemm_op_destroy(op);
  hg_rt_free(suite_rt, a);
  hg_rt_free(suite_rt, b);
  hg_rt_free(suite_rt, d);
  hg_rt_free(suite_rt, rs);
}

/* hopgen bench repack's driver on the mock, which runs the repack kernels on the host from
 * their parameters: one operand, then the pair (A and B of different rows in one launch,
 * the two one-operand launches timed beside it); every byte verified by the driver. */
static void test_repack_bench(void) {
  hg_repack_bench_t in = {.type = HG_BF16,
                          .rows = 100,
                          .cols = 1001,
                          .batch = 2,
                          .offset = 3,
                          .warmup = 1,
                          .runs = 2,
                          .seed = 7};
  hg_repack_bench_result_t r;
  mock_cuda_state_t *st = suite_mock_state();
  CHECK_OK(hg_repack_bench_run(suite_rt, &in, HG_BACKEND_PTX, &r));
  CHECK(r.verified && r.two_ms == 0 && r.bytes_read == 100 * 1001 * 2 * 2);
  CHECK_STR(r.kernel, "hg_repack_b16");
  in.type = HG_E4M3;
  in.pair_rows = 77;
  in.ld_src = 1003;
  const int launches = st->launches;
  CHECK_OK(hg_repack_bench_run(suite_rt, &in, HG_BACKEND_PTX, &r));
  CHECK(r.verified);
  CHECK_STR(r.kernel, "hg_repack2_b8");
  CHECK(r.args_b.rows == 77 && r.args_b.ld_src == 1003 && r.args_b.ld_dst == 1008);
  CHECK(r.args_b.src % 16 == 3 && r.args_b.dst % 16 == 0);
  CHECK_EQ(r.bytes_read, (uint64_t)(100 + 77) * 1001 * 2);
  CHECK_EQ(r.bytes_written, (uint64_t)(100 + 77) * 1008 * 2);
  /* fill; verify; 1 warm-up; 2 timed runs of (pair, two singles); the last check */
  CHECK_EQ(st->launches - launches, 1 + 1 + 1 + 2 * 3 + 1);
  in.pair_rows = -1;
  CHECK_ERR(hg_repack_bench_run(suite_rt, &in, HG_BACKEND_PTX, &r), HG_ERR_INVALID,
            "may not be negative");
}

/* fp8 block scales staged by TMA (leading dimensions multiples of 4): the two tables' maps are
 * encoded beside A's, B's and D's on the first run and reused after; tables off 16 bytes are
 * refused with the sentence, before any launch. A scale_lda off 4 elements: the cp.async path,
 * no table maps, tables on any 4-byte boundary. */
static void test_gemm_op_block_scales_tma(void) {
  mock_cuda_state_t *st = suite_mock_state();
  hg_gemm_problem_t p = {.m = 512,
                         .n = 512,
                         .k = 512,
                         .batch = 1,
                         .a_type = HG_E4M3,
                         .b_type = HG_E4M3,
                         .d_type = HG_BF16,
                         .a_k_major = true,
                         .b_k_major = true,
                         .alpha = 1.0f,
                         .scale = HG_SCALE_BLOCK};
  hg_gemm_config_t c;
  CHECK_OK(hg_gemm_config_parse("128x128x128,c1x1,s4,bs", &c));
  hg_devptr_t a = 0, b = 0, d = 0, sa = 0, sb = 0;
  CHECK_OK(hg_rt_alloc(suite_rt, 513 * 512, &a));
  CHECK_OK(hg_rt_alloc(suite_rt, 513 * 512, &b));
  CHECK_OK(hg_rt_alloc(suite_rt, 512 * 512 * 2, &d));
  CHECK_OK(hg_rt_alloc(suite_rt, 4 * 513 * 4 + 16, &sa));
  CHECK_OK(hg_rt_alloc(suite_rt, 4 * 4 * 4 + 16, &sb));
  for (int tma = 1; tma >= 0; tma--) {
    hg_gemm_problem_t q = p;
    if (!tma) q.scale_lda = 513;
    hg_gemm_op_t *op = NULL;
    CHECK_OK(hg_gemm_op_create(suite_rt, &q, &c, HG_BACKEND_PTX, &op));
    if (!op) return;
    CHECK_EQ(hg_gemm_op_kernel(op)->scales_tma, tma == 1);
    int enc = st->encodes, launches = st->launches;
    CHECK_OK(hg_gemm_op_run(op, a, b, 0, d, sa, sb, NULL));
    CHECK_EQ(st->encodes - enc, tma ? 5 : 3); /* A, B, D (and the two tables) */
    enc = st->encodes;
    CHECK_OK(hg_gemm_op_run(op, a, b, 0, d, sa, sb, NULL));
    CHECK_EQ(st->encodes, enc);
    CHECK_EQ(st->launches - launches, 2);
    if (tma) {
      CHECK_ERR(hg_gemm_op_run(op, a, b, 0, d, sa + 4, sb, NULL), HG_ERR_INVALID,
                "must be 16-byte aligned; create the operation with a scale_lda or scale_ldb");
      CHECK_ERR(hg_gemm_op_run(op, a, b, 0, d, sa, sb + 8, NULL), HG_ERR_INVALID,
                "stages the block scales by TMA");
      CHECK_EQ(st->launches - launches, 2); /* nothing launched */
    } else {
      CHECK_OK(hg_gemm_op_run(op, a, b, 0, d, sa + 4, sb + 4, NULL));
    }
    hg_gemm_op_destroy(op);
  }
  hg_rt_free(suite_rt, a);
  hg_rt_free(suite_rt, b);
  hg_rt_free(suite_rt, d);
  hg_rt_free(suite_rt, sa);
  hg_rt_free(suite_rt, sb);
}

static void test_gemm_op_host_path(void) {
  mock_cuda_state_t *st = suite_mock_state();
  hg_gemm_problem_t p = {.m = 512,
                         .n = 512,
                         .k = 512,
                         .batch = 1,
                         .a_type = HG_BF16,
                         .b_type = HG_BF16,
                         .d_type = HG_BF16,
                         .a_k_major = true,
                         .b_k_major = true,
                         .alpha = 1.0f};
  hg_gemm_op_t *op = NULL;
  /* The GEMM moves registers between warpgroups (setmaxnreg): compiled as a whole program by
   * cuModuleLoadDataEx, never by the JIT linker, which would ignore setmaxnreg */
  const int whole = st->whole_program_loads, compiles = st->compiles;
  CHECK_OK(hg_gemm_op_create(suite_rt, &p, NULL, HG_BACKEND_PTX, &op));
  if (!op) return;
  CHECK_EQ(st->whole_program_loads - whole, 1);
  CHECK_EQ(st->compiles - compiles, 1);
  /* A warm create: the kernel from the cache by specification, the module from the cubin
   * cache; the host's share of a create (the mock's driver calls cost nothing). */
  hg_gemm_op_destroy(op);
  const double t0 = hg_now_ms();
  CHECK_OK(hg_gemm_op_create(suite_rt, &p, NULL, HG_BACKEND_PTX, &op));
  const double warm_ms = hg_now_ms() - t0;
  if (!op) return;
  CHECK(hg_gemm_op_kernel(op)->from_cache);
  fprintf(stderr, "  warm hg_gemm_op_create: %.3f ms (host side)\n", warm_ms);
  CHECK(warm_ms < 20.0); /* 0.1 ms here; a bound loose enough for a loaded sanitizer run */
  hg_devptr_t a = 0, b = 0, d = 0, d2 = 0;
  CHECK_OK(hg_rt_alloc(suite_rt, 512 * 4100 * 2, &a));
  CHECK_OK(hg_rt_alloc(suite_rt, 512 * 4100 * 2, &b));
  CHECK_OK(hg_rt_alloc(suite_rt, 512 * 512 * 2, &d));
  CHECK_OK(hg_rt_alloc(suite_rt, 512 * 512 * 2, &d2));
  int enc = st->encodes;
  CHECK_OK(hg_gemm_op_run(op, a, b, 0, d, 0, 0, NULL));
  CHECK_EQ(st->encodes - enc, 3); /* A, B, D */
  /* A's and B's maps with the problem's L2 promotion, not the plan's 256 B: 512 rows and
   * columns pass one tile, K = 512 (hg_gemm_operand_l2_promotion) */
  const hg_gemm_kernel_t *gk = hg_gemm_op_kernel(op);
  for (int i = 0; i < 2; i++) {
    const int l2 = st->encode_l2[(enc + i) % 32];
    CHECK_EQ(l2, hg_gemm_operand_l2_promotion(&gk->problem, &gk->config, i));
    CHECK_EQ(l2, 2);
  }
  enc = st->encodes;
  int launches = st->launches;
  CHECK_OK(hg_gemm_op_run(op, a, b, 0, d, 0, 0, NULL));
  CHECK_EQ(st->encodes, enc); /* the same pointers: reused */
  CHECK_EQ(st->launches - launches, 1);
  int rep = st->replaces;
  CHECK_OK(hg_gemm_op_run(op, a, b, 0, d2, 0, 0, NULL));
  CHECK_EQ(st->encodes, enc); /* a new D: its map pointed at it, not encoded again */
  CHECK_EQ(st->replaces - rep, 1);
  CHECK_OK(hg_gemm_op_run(op, b, a, 0, d, 0, 0, NULL));
  CHECK_EQ(st->encodes, enc);
  CHECK_EQ(st->replaces - rep, 4); /* A, B and D moved */
  CHECK_ERR(hg_rt_tensormap_replace_address(suite_rt, NULL, a), HG_ERR_INVALID, "needs a map");
  hg_gemm_op_destroy(op);
  /* K = 4097: rows TMA cannot address, repacked by AUTO. */
  p.k = 4097;
  const int live = st->live_allocations;
  CHECK_OK(hg_gemm_op_create(suite_rt, &p, NULL, HG_BACKEND_PTX, &op));
  if (!op) return;
  CHECK(hg_gemm_op_kernel(op)->repack_a && hg_gemm_op_kernel(op)->repack_b);
  CHECK_EQ(st->live_allocations, live); /* creation allocates nothing */
  const size_t ws = hg_gemm_op_workspace_bytes(op);
  CHECK(ws >= (size_t)2 * 512 * 4104 * 2); /* two packed copies (rows of 4104 elements) */
  /* the caller's workspace: too small, or misaligned, is refused with the sizes */
  hg_devptr_t w = 0;
  CHECK_OK(hg_rt_alloc(suite_rt, ws, &w));
  launches = st->launches;
  hg_status_t s = hg_gemm_op_run_workspace(op, a, b, 0, d, 0, 0, w, ws - 1, NULL);
  CHECK_ERR(s, HG_ERR_INVALID, "workspace of");
  s = hg_gemm_op_run_workspace(op, a, b, 0, d, 0, 0, w + 8, ws, NULL);
  CHECK_ERR(s, HG_ERR_INVALID, "16-byte aligned");
  CHECK_EQ(st->launches, launches); /* nothing launched */
  st->launch_log[0] = '\0';
  CHECK_OK(hg_gemm_op_run_workspace(op, a, b, 0, d, 0, 0, w, ws, NULL));
  /* one copy of both operands (the pair kernel), then the GEMM and its split-K reduction pass
   * (16 tiles: the heuristic splits) */
  CHECK(hg_gemm_op_kernel(op)->config.splits > 1);
  CHECK_EQ(st->launches - launches, 3);
  char want[512];
  snprintf(want, sizeof want, "hg_repack2_b16 %s %s ", hg_gemm_op_kernel(op)->k.name,
           hg_gemm_op_kernel(op)->reduce_name);
  CHECK_STR(st->launch_log, want);
  CHECK_EQ(st->live_allocations, live + 1); /* only the caller's */
  /* without one: allocated on the first run, kept */
  CHECK_OK(hg_gemm_op_run(op, a, b, 0, d, 0, 0, NULL));
  CHECK_EQ(st->live_allocations, live + 2);
  CHECK_OK(hg_gemm_op_run(op, a, b, 0, d, 0, 0, NULL));
  CHECK_EQ(st->live_allocations, live + 2);
  CHECK_EQ(st->launches - launches, 9);
  hg_gemm_op_destroy(op);
  hg_rt_free(suite_rt, w);
  CHECK_EQ(st->live_allocations, live);
  /* Only A repacked (an odd leading dimension, K aligned): one launch of the one-operand
   * kernel before the GEMM; fp8 with both repacked: the pair kernel of bytes. */
  for (int v = 0; v < 2; v++) {
    hg_gemm_problem_t q = p;
    if (v == 0) {
      q.k = 4096;
      q.lda = 4097;
    } else {
      q.a_type = q.b_type = HG_E4M3;
    }
    CHECK_OK(hg_gemm_op_create(suite_rt, &q, NULL, HG_BACKEND_PTX, &op));
    if (!op) return;
    const hg_gemm_kernel_t *gk = hg_gemm_op_kernel(op);
    CHECK(gk->repack_a && gk->repack_b == (v == 1));
    launches = st->launches;
    st->launch_log[0] = st->param_log[0] = '\0';
    CHECK_OK(hg_gemm_op_run(op, a, b, 0, d, 0, 0, NULL));
    if (v == 0) {
      /* the caller's rows of 4097 elements into packed rows of 4096, a warp a row */
      CHECK_PARAM("hg_repack_b16", "src", a);
      CHECK_PARAM("hg_repack_b16", "rows", 512);
      CHECK_PARAM("hg_repack_b16", "cols", 4096);
      CHECK_PARAM("hg_repack_b16", "ld_src", 4097);
      CHECK_PARAM("hg_repack_b16", "ld_dst", 4096);
      CHECK_PARAM("hg_repack_b16", "lanes_log2", 5);
      CHECK_PARAM("hg_repack_b16", "<<<", 64);
    }
    const int passes =
        gk->config.splits > 1 && !gk->config.split_atomic && !gk->config.split_scatter;
    CHECK_EQ(st->launches - launches, 2 + passes);
    snprintf(want, sizeof want, "%s %s %s%s", v ? "hg_repack2_b8" : "hg_repack_b16", gk->k.name,
             passes ? gk->reduce_name : "", passes ? " " : "");
    CHECK_STR(st->launch_log, want);
    hg_gemm_op_destroy(op);
  }
  CHECK_EQ(st->live_allocations, live);
  {
    /* A and B of different shapes in one launch: A 400 x 1001 K-major, B 1001 x 333
     * (N-major), two batches, into the caller's workspace. The pair kernel's parameters, as
     * its PTX declares them: A's rows a warp each (126 chunks), 8 a CTA, 50 CTAs; B's 16
     * lanes each (42 chunks), 16 a CTA, 63 CTAs; the packed copies where the GEMM reads them. */
    hg_gemm_problem_t q = p;
    q.m = 400;
    q.n = 333;
    q.k = 1001;
    q.batch = 2;
    q.b_k_major = false;
    CHECK_OK(hg_gemm_op_create(suite_rt, &q, NULL, HG_BACKEND_PTX, &op));
    if (!op) return;
    const hg_gemm_kernel_t *gk = hg_gemm_op_kernel(op);
    CHECK(gk->repack_a && gk->repack_b);
    const size_t ws2 = hg_gemm_op_workspace_bytes(op);
    hg_devptr_t w2 = 0;
    CHECK_OK(hg_rt_alloc(suite_rt, ws2, &w2));
    launches = st->launches;
    st->launch_log[0] = st->param_log[0] = '\0';
    CHECK_OK(hg_gemm_op_run_workspace(op, a, b, 0, d, 0, 0, w2, ws2, NULL));
    const int passes =
        gk->config.splits > 1 && !gk->config.split_atomic && !gk->config.split_scatter;
    CHECK_EQ(st->launches - launches, 2 + passes);
    CHECK(!strncmp(st->launch_log, "hg_repack2_b16 ", 15));
    const char *f = "hg_repack2_b16";
    CHECK_PARAM(f, "src_a", a);
    CHECK_PARAM(f, "rows_a", 400);
    CHECK_PARAM(f, "cols_a", 1001);
    CHECK_PARAM(f, "ld_src_a", 1001);
    CHECK_PARAM(f, "ld_dst_a", 1008);
    CHECK_PARAM(f, "batch_stride_src_a", 400 * 1001);
    CHECK_PARAM(f, "batch_stride_dst_a", gk->problem.batch_stride_a);
    CHECK_PARAM(f, "lanes_log2_a", 5);
    CHECK_PARAM(f, "src_b", b);
    CHECK_PARAM(f, "rows_b", 1001);
    CHECK_PARAM(f, "cols_b", 333);
    CHECK_PARAM(f, "ld_src_b", 333);
    CHECK_PARAM(f, "ld_dst_b", 336);
    CHECK_PARAM(f, "batch_stride_src_b", 1001 * 333);
    CHECK_PARAM(f, "batch_stride_dst_b", gk->problem.batch_stride_b);
    CHECK_PARAM(f, "lanes_log2_b", 4);
    CHECK_PARAM(f, "batch", 2);
    CHECK_PARAM(f, "ctas_a", 50);
    CHECK_PARAM(f, "<<<", 50 + 63);
    CHECK(gk->problem.lda == 1008 && gk->problem.ldb == 336);
    bool fa, fb;
    const long long da = logged_param(st->param_log, f, "dst_a", &fa);
    const long long db = logged_param(st->param_log, f, "dst_b", &fb);
    const long long bytes_a = gk->problem.batch_stride_a * 2 * 2;
    const long long bytes_b = gk->problem.batch_stride_b * 2 * 2;
    CHECK(fa && fb && da % 16 == 0 && db % 16 == 0);
    CHECK(da >= (long long)w2 && db >= (long long)w2); /* both in the workspace, apart */
    CHECK(da + bytes_a <= (long long)(w2 + ws2) && db + bytes_b <= (long long)(w2 + ws2));
    CHECK(da + bytes_a <= db || db + bytes_b <= da);
    hg_gemm_op_destroy(op);
    hg_rt_free(suite_rt, w2);
  }
  CHECK_EQ(st->live_allocations, live);
  /* Split-K: 4 x 4 tiles of 128 x 128, split 5 ways: 16 x 5 partial tiles of 128 x 128 f32,
   * nothing to zero (the mock's allocations start as 0xCD and stay so: the partials are the
   * kernel's to write), the workspace the kernel's last parameter; then the reduction pass,
   * a second launch over (16 CTA tiles, the kernel's chunk groups), no cluster. */
  p.k = 4096;
  hg_gemm_config_t c;
  CHECK_OK(hg_gemm_config_parse("128x128x64,k5", &c));
  CHECK_OK(hg_gemm_op_create(suite_rt, &p, &c, HG_BACKEND_PTX, &op));
  if (!op) return;
  const size_t ws_split = hg_gemm_op_workspace_bytes(op);
  CHECK_EQ(ws_split, (size_t)16 * 5 * 128 * 128 * 4);
  CHECK_OK(hg_rt_alloc(suite_rt, ws_split, &w));
  CHECK_ERR(hg_gemm_op_run_workspace(op, a, b, 0, d, 0, 0, 0, 0, NULL), HG_ERR_INVALID,
            "split-K partial tiles");
  launches = st->launches;
  CHECK_OK(hg_gemm_op_run_workspace(op, a, b, 0, d, 0, 0, w, ws_split, NULL));
  CHECK_EQ(st->launches - launches, 2);
  CHECK_EQ(st->last_grid[0], 16u);
  CHECK_EQ(st->last_grid[1], (unsigned)hg_gemm_op_kernel(op)->reduce_groups);
  CHECK(st->last_pdl); /* the pass is launched while the GEMM finishes */
  CHECK(!st->last_cooperative);
  CHECK(hg_gemm_op_kernel(op)->reduce_groups >= 2);
  uint32_t partial;
  CHECK_OK(hg_rt_download(suite_rt, &partial, w, 4));
  CHECK_EQ(partial, 0xCDCDCDCDu);
  hg_gemm_op_destroy(op);
  /* Split-K reduced in the GEMM and stream-K: CTAs that wait for each other, launched
   * cooperatively (all resident at once, or no launch); the pass's GEMM above is not */
  static const char *const waiting[] = {"128x128x64,k5r", "128x128x64,sk"};
  for (int i = 0; i < 2; i++) {
    CHECK_OK(hg_gemm_config_parse(waiting[i], &c));
    op = NULL;
    CHECK_OK(hg_gemm_op_create(suite_rt, &p, &c, HG_BACKEND_PTX, &op));
    if (!op) continue;
    CHECK_OK(hg_gemm_op_run(op, a, b, 0, d, 0, 0, NULL));
    CHECK(st->last_cooperative && st->last_pdl);
    hg_gemm_op_destroy(op);
  }
  hg_rt_free(suite_rt, w);
  /* Split-K by atomic adds: the sums and counters must be zero before a launch. A caller's
   * workspace is zeroed on the stream first, unless the caller says it is zero already
   * (workspace_zeroed: as the operation's last run left it); then it is left as it is. */
  CHECK_OK(hg_gemm_config_parse("128x128x64,k5a", &c));
  CHECK_OK(hg_gemm_op_create(suite_rt, &p, &c, HG_BACKEND_PTX, &op));
  if (!op) return;
  const size_t ws_atomic = hg_gemm_op_workspace_bytes(op);
  CHECK(ws_atomic >= (size_t)16 * 128 * 128 * 4);
  CHECK_OK(hg_rt_alloc(suite_rt, ws_atomic, &w));
  hg_gemm_args_t kept = {.a = a,
                         .b = b,
                         .d = d,
                         .workspace = w,
                         .workspace_bytes = ws_atomic,
                         .workspace_zeroed = true};
  launches = st->launches;
  CHECK_OK(hg_gemm_op_run_args(op, &kept, NULL));
  CHECK_EQ(st->launches - launches, 1);
  CHECK_OK(hg_rt_download(suite_rt, &partial, w, 4));
  CHECK_EQ(partial, 0xCDCDCDCDu); /* not touched: the caller said it was zero */
  kept.workspace_zeroed = false;
  CHECK_OK(hg_gemm_op_run_args(op, &kept, NULL));
  CHECK_OK(hg_rt_download(suite_rt, &partial, w, 4));
  CHECK_EQ(partial, 0u); /* zeroed on the stream before the launch */
  hg_gemm_op_destroy(op);
  hg_rt_free(suite_rt, w);
  /* Split-K reduced in the GEMM: the tiles' counters (16 x 4 bytes, rounded up to 256), zero
   * before a launch as each launch leaves them, then 16 x 5 slots the kernel writes; one
   * launch. A caller's counters are zeroed unless it says they are zero; the slots never. */
  CHECK_OK(hg_gemm_config_parse("128x128x64,k5r", &c));
  CHECK_OK(hg_gemm_op_create(suite_rt, &p, &c, HG_BACKEND_PTX, &op));
  if (!op) return;
  const size_t ws_scatter = hg_gemm_op_workspace_bytes(op);
  CHECK_EQ(ws_scatter, (size_t)256 + (size_t)16 * 5 * 128 * 128 * 4);
  CHECK_OK(hg_rt_alloc(suite_rt, ws_scatter, &w));
  kept.workspace = w;
  kept.workspace_bytes = ws_scatter;
  kept.workspace_zeroed = true;
  launches = st->launches;
  CHECK_OK(hg_gemm_op_run_args(op, &kept, NULL));
  CHECK_EQ(st->launches - launches, 1);
  CHECK_EQ(st->last_grid[0], 80u); /* every unit its own CTA */
  CHECK_OK(hg_rt_download(suite_rt, &partial, w, 4));
  CHECK_EQ(partial, 0xCDCDCDCDu);
  kept.workspace_zeroed = false;
  CHECK_OK(hg_gemm_op_run_args(op, &kept, NULL));
  CHECK_OK(hg_rt_download(suite_rt, &partial, w, 4));
  CHECK_EQ(partial, 0u);
  CHECK_OK(hg_rt_download(suite_rt, &partial, w + 256, 4));
  CHECK_EQ(partial, 0xCDCDCDCDu);
  hg_gemm_op_destroy(op);
  /* units that could not all be resident at once (16 tiles x 64 splits on 132 SMs): the
   * splits would wait for splits still queued, so the operation is refused */
  CHECK_OK(hg_gemm_config_parse("128x128x64,k64r", &c));
  op = NULL;
  CHECK_ERR(hg_gemm_op_create(suite_rt, &p, &c, HG_BACKEND_PTX, &op), HG_ERR_UNSUPPORTED,
            "resident at once");
  CHECK(op == NULL);
  /* A bias: hg_gemm_op_run (no bias pointer) is refused with the way to pass one;
   * hg_gemm_op_run_args takes it, with the operation's own workspace when given none. */
  p.bias = HG_BIAS_N;
  p.bias_type = HG_F32;
  p.act = HG_ACT_GELU;
  CHECK_OK(hg_gemm_op_create(suite_rt, &p, NULL, HG_BACKEND_PTX, &op));
  if (!op) return;
  CHECK_ERR(hg_gemm_op_run(op, a, b, 0, d, 0, 0, NULL), HG_ERR_INVALID, "hg_gemm_args_t.bias");
  hg_devptr_t bias = 0;
  CHECK_OK(hg_rt_alloc(suite_rt, 512 * 4, &bias));
  launches = st->launches;
  const hg_gemm_args_t x = {.a = a, .b = b, .d = d, .bias = bias};
  CHECK_OK(hg_gemm_op_run_args(op, &x, NULL));
  CHECK_EQ(st->launches - launches, hg_gemm_op_kernel(op)->config.splits > 1 ? 2 : 1);
  const hg_gemm_args_t odd = {.a = a, .b = b, .d = d, .bias = bias + 2};
  hg_gemm_op_t *op2 = NULL;
  p.residual = true;
  CHECK_OK(hg_gemm_op_create(suite_rt, &p, NULL, HG_BACKEND_PTX, &op2));
  if (op2) {
    CHECK_ERR(hg_gemm_op_run_args(op2, &x, NULL), HG_ERR_INVALID,
              "has a residual but none was given");
    const hg_gemm_args_t xr = {.a = a, .b = b, .d = d, .bias = bias, .residual = d2};
    CHECK_OK(hg_gemm_op_run_args(op2, &xr, NULL));
    hg_gemm_op_destroy(op2);
  }
  p.residual = false;
  /* issue 12's outputs: the amax and aux pointers are required and aligned; no memset
   * touches *amax (the kernel writes it; the mock runs no kernel: it keeps its junk), and the
   * amax's state, the workspace's first HG_AMAX_STATE_BYTES (hg_gemm_op_workspace_zero_bytes
   * in all, with split-K's counters), is zeroed where the workspace is not known to be zero */
  p.amax = p.aux = true;
  p.aux_type = HG_F32;
  CHECK_OK(hg_gemm_op_create(suite_rt, &p, NULL, HG_BACKEND_PTX, &op2));
  if (op2) {
    hg_devptr_t amax = 0, aux = 0;
    CHECK_OK(hg_rt_alloc(suite_rt, 16, &amax));
    CHECK_OK(hg_rt_alloc(suite_rt, 512 * 512 * 4, &aux));
    const uint32_t junk = 0x7F7F7F7Fu;
    CHECK_OK(hg_rt_upload(suite_rt, amax, &junk, 4));
    const hg_gemm_args_t no_amax = {.a = a, .b = b, .d = d, .bias = bias, .aux = aux};
    CHECK_ERR(hg_gemm_op_run_args(op2, &no_amax, NULL), HG_ERR_INVALID,
              "has an amax but none was given: pass its device pointer in hg_gemm_args_t.amax");
    const hg_gemm_args_t no_aux = {.a = a, .b = b, .d = d, .bias = bias, .amax = amax};
    CHECK_ERR(hg_gemm_op_run_args(op2, &no_aux, NULL), HG_ERR_INVALID,
              "has an aux output but none was given");
    const hg_gemm_args_t odd_amax = {
        .a = a, .b = b, .d = d, .bias = bias, .amax = amax + 2, .aux = aux};
    CHECK_ERR(hg_gemm_op_run_args(op2, &odd_amax, NULL), HG_ERR_INVALID,
              "hg_gemm_args_t.amax at 0x");
    const hg_gemm_args_t all = {.a = a, .b = b, .d = d, .bias = bias, .amax = amax, .aux = aux};
    launches = st->launches;
    CHECK_OK(hg_gemm_op_run_args(op2, &all, NULL));
    /* the GEMM (and split-K's pass: the heuristic splits 512 x 512 x 4096) */
    CHECK_EQ(st->launches - launches, hg_gemm_op_kernel(op2)->config.splits > 1 ? 2 : 1);
    uint32_t got = 1;
    CHECK_OK(hg_rt_download(suite_rt, &got, amax, 4));
    CHECK_EQ(got, junk);
    const size_t ws_bytes = hg_gemm_op_workspace_bytes(op2);
    CHECK(hg_gemm_op_workspace_zero_bytes(op2) >= HG_AMAX_STATE_BYTES &&
          ws_bytes >= hg_gemm_op_workspace_zero_bytes(op2));
    hg_devptr_t ws = 0;
    CHECK_OK(hg_rt_alloc(suite_rt, ws_bytes, &ws));
    uint8_t *fill = malloc(ws_bytes), *back = malloc(ws_bytes);
    if (ws && fill && back) {
      memset(fill, 0xAB, ws_bytes);
      CHECK_OK(hg_rt_upload(suite_rt, ws, fill, ws_bytes));
      hg_gemm_args_t wx = all;
      wx.workspace = ws;
      wx.workspace_bytes = 128;
      CHECK_ERR(hg_gemm_op_run_args(op2, &wx, NULL), HG_ERR_INVALID, "needs a workspace of");
      CHECK_ERR(hg_gemm_op_run_args(op2, &wx, NULL), HG_ERR_INVALID, "the amax's state");
      /* said to be zero: left as it is */
      wx.workspace_bytes = ws_bytes;
      wx.workspace_zeroed = true;
      CHECK_OK(hg_gemm_op_run_args(op2, &wx, NULL));
      CHECK_OK(hg_rt_download(suite_rt, back, ws, ws_bytes));
      CHECK(memcmp(back, fill, ws_bytes) == 0);
      /* not said: the state zeroed first, nothing past the zero bytes touched */
      wx.workspace_zeroed = false;
      CHECK_OK(hg_gemm_op_run_args(op2, &wx, NULL));
      CHECK_OK(hg_rt_download(suite_rt, back, ws, ws_bytes));
      const size_t zb = hg_gemm_op_workspace_zero_bytes(op2);
      bool zero = true;
      for (size_t i = 0; i < zb; i++) zero = zero && back[i] == 0;
      CHECK(zero);
      CHECK(zb == ws_bytes || back[zb] == 0xAB);
      CHECK_OK(hg_rt_download(suite_rt, &got, amax, 4));
      CHECK_EQ(got, junk);
    }
    free(fill);
    free(back);
    hg_rt_free(suite_rt, ws);
    hg_gemm_op_destroy(op2);
    hg_rt_free(suite_rt, amax);
    hg_rt_free(suite_rt, aux);
  }
  p.amax = p.aux = false;
  CHECK_ERR(hg_gemm_op_run_args(op, &odd, NULL), HG_ERR_INVALID, "not aligned to its elements");
  CHECK_ERR(hg_gemm_op_run_args(op, NULL, NULL), HG_ERR_INVALID, "args is NULL");
  hg_gemm_op_destroy(op);
  hg_rt_free(suite_rt, bias);
  hg_rt_free(suite_rt, w);
  hg_rt_free(suite_rt, a);
  hg_rt_free(suite_rt, b);
  hg_rt_free(suite_rt, d);
  hg_rt_free(suite_rt, d2);
}

int main(void) {
  int built = build_mocks();
  if (built != 0) {
    if (mock_dir[0]) suite_rm_tree(mock_dir);
    return built;
  }
  setenv("HOPGEN_LIBCUDA", mock_cuda_path, 1);
  setenv("HOPGEN_LIBCUBLASLT", mock_blas_path, 1);
  /* The mock's "cubins" stay out of the shared test cache (a real H100 with the same name
   * and driver would compute the same keys; it would recover, but need not). */
  char cache[600];
  snprintf(cache, sizeof cache, "%s/cache", mock_dir);
  setenv("HOPGEN_CACHE_DIR", cache, 1);

  HG_RUN(test_open_refusals);
  HG_RUN(test_dlsym_fallback);

  clear_mock_env();
  hg_status_t s = hg_rt_open(0, &suite_rt);
  if (!hg_is_ok(&s)) {
    fprintf(stderr, "hg_rt_open on the mock driver failed: %s\n", s.msg);
    suite_rm_tree(mock_dir);
    return 1;
  }
  suite_mock = true;
  HG_RUN(suite_device);
  HG_RUN(suite_memory);
  HG_RUN(suite_streams_events);
  HG_RUN(suite_jit_and_cache);
  HG_RUN(suite_jit_error);
  HG_RUN(suite_functions);
  HG_RUN(suite_clusters);
  HG_RUN(suite_tensormaps);
  HG_RUN(suite_gemm);
  HG_RUN(test_launch_plumbing);
  HG_RUN(test_repack_bench);
  HG_RUN(test_capture_id);
  HG_RUN(test_gemm_op_host_path);
  HG_RUN(test_gemm_op_block_scales_tma);
  HG_RUN(test_blas_fast_accum);
  HG_RUN(test_blas_scale_modes);
  HG_RUN(test_gemm_op_swapped);
  HG_RUN(test_cluster_refused_when_unschedulable);
  HG_RUN(test_abi_audit);
  HG_RUN(suite_fault); /* last: the context is lost */
  hg_rt_close(suite_rt);
  CHECK_EQ(suite_mock_state()->retained, 0);
  CHECK_EQ(suite_mock_state()->live_allocations, 0);
  suite_rm_tree(mock_dir);
  return hg_test_finish();
}
