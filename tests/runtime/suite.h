/* The runtime's device suite, shared by test_gpu.c (the real driver on a Hopper GPU) and
 * test_mock.c (the mock driver and cuBLASLt, on any machine). Each suite_* function uses
 * the runtime in suite_rt; checks that only the mock can make (what exactly reached the
 * driver) are guarded by suite_mock. suite_fault must run last: it kills the context. */
#ifndef HG_TEST_RUNTIME_SUITE_H
#define HG_TEST_RUNTIME_SUITE_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hg_test.h"
#include "hopgen/runtime.h"
#include "mock_api.h"
#include "numeric.h"
#include "runtime/cache.h"

static hg_rt_t *suite_rt;
static bool suite_mock;
/* The mock driver's record (defined by the including test; only read when suite_mock). */
static mock_cuda_state_t *suite_mock_state(void);

/* ---------------------------------------------------------------- kernels */

#define SUITE_PTX_HEADER ".version 8.0\n.target sm_90a\n.address_size 64\n\n"

/* out[i] = 3 i + 1 for i < n, one thread per element. */
static const char suite_ptx_fill[] = SUITE_PTX_HEADER ".visible .entry hg_test_fill(\n"
                                                      "  .param .u64 hg_test_fill_out,\n"
                                                      "  .param .u32 hg_test_fill_n\n"
                                                      ")\n"
                                                      "{\n"
                                                      "  .reg .pred %p<2>;\n"
                                                      "  .reg .b32 %r<8>;\n"
                                                      "  .reg .b64 %rd<5>;\n"
                                                      "  ld.param.u64 %rd1, [hg_test_fill_out];\n"
                                                      "  ld.param.u32 %r1, [hg_test_fill_n];\n"
                                                      "  mov.u32 %r2, %ctaid.x;\n"
                                                      "  mov.u32 %r3, %ntid.x;\n"
                                                      "  mov.u32 %r4, %tid.x;\n"
                                                      "  mad.lo.s32 %r5, %r2, %r3, %r4;\n"
                                                      "  setp.ge.u32 %p1, %r5, %r1;\n"
                                                      "  @%p1 bra DONE;\n"
                                                      "  cvta.to.global.u64 %rd2, %rd1;\n"
                                                      "  mul.wide.u32 %rd3, %r5, 4;\n"
                                                      "  add.s64 %rd4, %rd2, %rd3;\n"
                                                      "  mul.lo.s32 %r6, %r5, 3;\n"
                                                      "  add.s32 %r6, %r6, 1;\n"
                                                      "  st.global.u32 [%rd4], %r6;\n"
                                                      "DONE:\n"
                                                      "  ret;\n"
                                                      "}\n";

/* out[ctaid.x] = 16 * %cluster_nctarank + %cluster_ctarank (thread 0 of each CTA), and a
 * kernel that traps. */
static const char suite_ptx_cluster[] =
    SUITE_PTX_HEADER ".visible .entry hg_test_cluster_rank(\n"
                     "  .param .u64 hg_test_cluster_rank_out\n"
                     ")\n"
                     "{\n"
                     "  .reg .pred %p<2>;\n"
                     "  .reg .b32 %r<8>;\n"
                     "  .reg .b64 %rd<5>;\n"
                     "  mov.u32 %r4, %tid.x;\n"
                     "  setp.ne.u32 %p1, %r4, 0;\n"
                     "  @%p1 bra DONE;\n"
                     "  ld.param.u64 %rd1, [hg_test_cluster_rank_out];\n"
                     "  cvta.to.global.u64 %rd2, %rd1;\n"
                     "  mov.u32 %r1, %cluster_ctarank;\n"
                     "  mov.u32 %r2, %cluster_nctarank;\n"
                     "  mov.u32 %r3, %ctaid.x;\n"
                     "  shl.b32 %r5, %r2, 4;\n"
                     "  add.s32 %r5, %r5, %r1;\n"
                     "  mul.wide.u32 %rd3, %r3, 4;\n"
                     "  add.s64 %rd4, %rd2, %rd3;\n"
                     "  st.global.u32 [%rd4], %r5;\n"
                     "DONE:\n"
                     "  ret;\n"
                     "}\n"
                     "\n"
                     ".visible .entry hg_test_trap()\n"
                     "{\n"
                     "  trap;\n"
                     "  ret;\n"
                     "}\n";

/* Not PTX the JIT accepts: an instruction that does not exist. */
static const char suite_ptx_bad[] = SUITE_PTX_HEADER ".visible .entry hg_test_bad()\n"
                                                     "{\n"
                                                     "  .reg .b32 %r<2>;\n"
                                                     "  bogus.op.u32 %r1, %r1;\n"
                                                     "  ret;\n"
                                                     "}\n";

/* ---------------------------------------------------------------- files */

static void suite_tmpdir(char *buf, size_t size) {
  const char *base = getenv("TMPDIR");
  snprintf(buf, size, "%s/hopgen-rt-XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(buf)) HG_FAIL("mkdtemp: %s", strerror(errno));
}

static void suite_rm_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  char path[1200];
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
      suite_rm_tree(path);
    else
      unlink(path);
  }
  closedir(d);
  rmdir(dir);
}

static char *suite_saved_env(const char *name) {
  const char *v = getenv(name);
  return v ? strdup(v) : NULL;
}

static void suite_restore_env(const char *name, char *saved) {
  if (saved)
    setenv(name, saved, 1);
  else
    unsetenv(name);
  free(saved);
}

/* ---------------------------------------------------------------- device and memory */

static void suite_device(void) {
  const hg_device_info_t *d = hg_rt_device(suite_rt);
  CHECK(d != NULL);
  if (!d) return;
  fprintf(stderr, "  device %d: %s, sm_%d%d, %d SMs, %d B smem opt-in, driver %d, %.1f GiB\n",
          d->ordinal, d->name, d->cc_major, d->cc_minor, d->sm_count, d->max_smem_per_block_optin,
          d->driver_version, (double)d->total_mem_bytes / (1 << 30));
  CHECK(d->name[0] != '\0');
  CHECK_EQ(d->cc_major, 9);
  CHECK_EQ(d->cc_minor, 0);
  CHECK(d->sm_count >= 100);
  CHECK(d->max_smem_per_block_optin >= 200 * 1024);
  CHECK(d->max_smem_per_sm >= d->max_smem_per_block_optin);
  CHECK(d->l2_bytes >= 32 << 20);
  CHECK(d->clock_khz > 0 && d->mem_clock_khz > 0 && d->mem_bus_bits > 0);
  CHECK(d->driver_version >= 12000);
  CHECK(d->total_mem_bytes >= ((uint64_t)16 << 30));
  if (suite_mock) {
    /* Each attribute came back under its own enum value. */
    CHECK_STR(d->name, "NVIDIA H100 80GB HBM3");
    CHECK_EQ(d->sm_count, 132);
    CHECK_EQ(d->max_smem_per_block_optin, 232448);
    CHECK_EQ(d->max_smem_per_sm, 233472);
    CHECK_EQ(d->l2_bytes, 52428800);
    CHECK_EQ(d->clock_khz, 1980000);
    CHECK_EQ(d->mem_clock_khz, 2619000);
    CHECK_EQ(d->mem_bus_bits, 5120);
    CHECK_EQ(d->driver_version, 13000);
    CHECK_EQ(d->total_mem_bytes, (uint64_t)80 << 30);
  }
}

static void suite_memory(void) {
  enum { N = 1 << 20 };
  uint8_t *h = malloc(N), *back = malloc(N);
  for (int i = 0; i < N; i++) h[i] = (uint8_t)(i * 7 + (i >> 8));
  hg_devptr_t a = 0, b = 0, z = 5;
  CHECK_OK(hg_rt_alloc(suite_rt, N, &a));
  CHECK_OK(hg_rt_alloc(suite_rt, N, &b));
  CHECK(a != 0 && b != 0 && a % 256 == 0);
  CHECK_OK(hg_rt_alloc(suite_rt, 0, &z));
  CHECK_EQ(z, 0);
  hg_rt_free(suite_rt, z);
  CHECK_OK(hg_rt_upload(suite_rt, a, h, N));
  memset(back, 0, N);
  CHECK_OK(hg_rt_download(suite_rt, back, a, N));
  CHECK(memcmp(h, back, N) == 0);
  /* Device to device on the default stream, then a partial memset. */
  CHECK_OK(hg_rt_copy_d2d(suite_rt, b, a, N, NULL));
  CHECK_OK(hg_rt_memset8(suite_rt, b + 100, 0x5A, 1000, NULL));
  CHECK_OK(hg_rt_sync(suite_rt, NULL));
  CHECK_OK(hg_rt_download(suite_rt, back, b, N));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += back[i] != ((i >= 100 && i < 1100) ? 0x5A : h[i]);
  CHECK_EQ(bad, 0);
  /* An offset upload and download. */
  CHECK_OK(hg_rt_upload(suite_rt, a + 4096, h, 333));
  CHECK_OK(hg_rt_download(suite_rt, back, a + 4096, 333));
  CHECK(memcmp(back, h, 333) == 0);
  /* An impossible allocation: the driver's sentence names the call and the error. */
  hg_devptr_t huge = 0;
  CHECK_ERR(hg_rt_alloc(suite_rt, (size_t)1 << 50, &huge), HG_ERR_CUDA, "cuMemAlloc(");
  CHECK_ERR(hg_rt_alloc(suite_rt, (size_t)1 << 50, &huge), HG_ERR_CUDA, "CUDA_ERROR_OUT_OF_MEMORY");
  CHECK_EQ(huge, 0);
  hg_rt_free(suite_rt, a);
  hg_rt_free(suite_rt, b);
  free(h);
  free(back);
}

static void suite_streams_events(void) {
  enum { N = 1 << 22 };
  hg_devptr_t a = 0, b = 0;
  CHECK_OK(hg_rt_alloc(suite_rt, N, &a));
  CHECK_OK(hg_rt_alloc(suite_rt, N, &b));
  hg_stream_t s = NULL;
  CHECK_OK(hg_rt_stream_create(suite_rt, &s));
  CHECK(s != NULL);
  hg_event_t e0 = NULL, e1 = NULL;
  CHECK_OK(hg_rt_event_create(suite_rt, &e0));
  CHECK_OK(hg_rt_event_create(suite_rt, &e1));
  CHECK_OK(hg_rt_event_record(suite_rt, e0, s));
  CHECK_OK(hg_rt_memset8(suite_rt, a, 0x11, N, s));
  CHECK_OK(hg_rt_copy_d2d(suite_rt, b, a, N, s));
  CHECK_OK(hg_rt_event_record(suite_rt, e1, s));
  float ms = -1;
  CHECK_OK(hg_rt_event_elapsed_ms(suite_rt, e0, e1, &ms));
  CHECK(ms >= 0.0f && ms < 10000.0f);
  /* neither stream is capturing a CUDA graph: id 0 */
  uint64_t cap = 77;
  CHECK_OK(hg_rt_stream_capture_id(suite_rt, s, &cap));
  CHECK_EQ(cap, 0);
  cap = 77;
  CHECK_OK(hg_rt_stream_capture_id(suite_rt, NULL, &cap));
  CHECK_EQ(cap, 0);
  CHECK_ERR(hg_rt_stream_capture_id(suite_rt, s, NULL), HG_ERR_INVALID, "somewhere");
  CHECK_OK(hg_rt_sync(suite_rt, s));
  uint8_t tail[64];
  CHECK_OK(hg_rt_download(suite_rt, tail, b + N - 64, 64));
  int bad = 0;
  for (int i = 0; i < 64; i++) bad += tail[i] != 0x11;
  CHECK_EQ(bad, 0);
  hg_rt_event_destroy(suite_rt, e0);
  hg_rt_event_destroy(suite_rt, e1);
  hg_rt_stream_destroy(suite_rt, s);
  hg_rt_free(suite_rt, a);
  hg_rt_free(suite_rt, b);
}

/* ---------------------------------------------------------------- JIT, cache, launch */

/* Run hg_test_fill over n elements of a poisoned buffer and check every word. */
static void suite_run_fill(hg_module_t *m, uint32_t n, uint32_t smem) {
  hg_function_t *f = NULL;
  CHECK_OK(hg_rt_function(suite_rt, m, "hg_test_fill", smem, &f));
  if (!f) return;
  const uint32_t words = n + 64;
  hg_devptr_t out = 0;
  CHECK_OK(hg_rt_alloc(suite_rt, words * 4, &out));
  CHECK_OK(hg_rt_memset8(suite_rt, out, 0xAB, words * 4, NULL));
  hg_launch_t l = {{(n + 127) / 128, 1, 1}, {128, 1, 1}, {0, 0, 0}, smem, NULL};
  void *args[] = {&out, &n};
  CHECK_OK(hg_rt_launch(suite_rt, f, &l, args));
  CHECK_OK(hg_rt_sync(suite_rt, NULL));
  uint32_t *h = malloc(words * 4);
  CHECK_OK(hg_rt_download(suite_rt, h, out, words * 4));
  int bad = 0;
  for (uint32_t i = 0; i < words; i++) bad += h[i] != (i < n ? i * 3 + 1 : 0xABABABABu);
  if (bad) HG_FAIL("%d of %u words wrong after hg_test_fill (n = %u)", bad, words, n);
  free(h);
  hg_rt_free(suite_rt, out);
}

static hg_module_t *suite_load(const char *ptx, hg_jit_info_t *info) {
  hg_module_t *m = NULL;
  hg_status_t s = hg_rt_module_load(suite_rt, ptx, &m, info);
  if (!hg_is_ok(&s)) HG_FAIL("hg_rt_module_load: %s", s.msg);
  return m;
}

static void suite_flip_byte(const char *path, long from_end) {
  int fd = open(path, O_RDWR);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    HG_FAIL("cannot open %s", path);
    if (fd >= 0) close(fd);
    return;
  }
  uint8_t b = 0;
  const off_t at = st.st_size - from_end;
  if (pread(fd, &b, 1, at) != 1) HG_FAIL("cannot read %s", path);
  b ^= 0x20;
  if (pwrite(fd, &b, 1, at) != 1) HG_FAIL("cannot write %s", path);
  close(fd);
}

static void suite_jit_and_cache(void) {
  char *saved = suite_saved_env("HOPGEN_CACHE_DIR");
  char dir[512];
  suite_tmpdir(dir, sizeof dir);
  setenv("HOPGEN_CACHE_DIR", dir, 1);
  hg_jit_info_t info;

  /* Cold: compiled, stored, loaded. */
  hg_module_t *m1 = suite_load(suite_ptx_fill, &info);
  CHECK(!info.cache_hit);
  CHECK(info.compile_ms > 0.0);
  CHECK(strstr(info.cache_path, dir) == info.cache_path);
  CHECK_STR(info.cache_note, "");
  CHECK(access(info.cache_path, R_OK) == 0);
  fprintf(stderr, "  cold load: compile %.2f ms, load %.2f ms\n", info.compile_ms, info.load_ms);
  if (m1) suite_run_fill(m1, 1000, 0);

  /* Hot: the same PTX while m1 is loaded is m1 again, another reference (no file read, no
   * cuModuleLoadData); it stays loaded until both are unloaded. */
  hg_module_t *hot = suite_load(suite_ptx_fill, &info);
  CHECK(hot == m1);
  CHECK(info.cache_hit);
  CHECK(strstr(info.cache_note, "already loaded") != NULL);
  hg_rt_module_unload(suite_rt, hot);
  if (m1) suite_run_fill(m1, 33, 0);
  hg_rt_module_unload(suite_rt, m1);

  /* Warm: from the cache, well under 5 ms all told. */
  const double t0 = hg_now_ms();
  hg_module_t *m2 = suite_load(suite_ptx_fill, &info);
  const double warm = hg_now_ms() - t0;
  CHECK(info.cache_hit);
  CHECK(info.compile_ms == 0.0);
  CHECK(info.load_ms < 5.0);
  if (warm >= 5.0) HG_FAIL("the warm load took %.2f ms, expected < 5 ms", warm);
  fprintf(stderr, "  warm load: %.3f ms (load_ms %.3f)\n", warm, info.load_ms);
  if (m2) suite_run_fill(m2, 4097, 0);
  hg_rt_module_unload(suite_rt, m2);

  /* A damaged entry is detected, deleted, recompiled and stored again. */
  char path[512];
  snprintf(path, sizeof path, "%s", info.cache_path);
  suite_flip_byte(path, 100);
  hg_module_t *m3 = suite_load(suite_ptx_fill, &info);
  CHECK(!info.cache_hit);
  CHECK(strstr(info.cache_note, "damaged") != NULL);
  hg_rt_module_unload(suite_rt, m3);
  hg_module_t *m4 = suite_load(suite_ptx_fill, &info);
  CHECK(info.cache_hit);
  if (m4) suite_run_fill(m4, 77, 0);
  hg_rt_module_unload(suite_rt, m4);

  /* A truncated entry likewise. */
  if (truncate(path, 100) != 0) HG_FAIL("truncate %s", path);
  hg_module_t *m5 = suite_load(suite_ptx_fill, &info);
  CHECK(!info.cache_hit);
  CHECK(strstr(info.cache_note, "truncated") != NULL);
  hg_rt_module_unload(suite_rt, m5);

  /* An intact entry (right key and checksum) that the driver refuses to load. */
  const hg_device_info_t *d = hg_rt_device(suite_rt);
  hg_cache_t c;
  hg_cache_at(&c, dir);
  const hg_cache_key_t key = hg_cache_key(suite_ptx_fill, strlen(suite_ptx_fill), d->driver_version,
                                          d->name, d->cc_major, d->cc_minor);
  const char junk[] = "this is not a cubin, although its checksum is right";
  CHECK_OK(hg_cache_store(&c, &key, junk, sizeof junk));
  hg_module_t *m6 = suite_load(suite_ptx_fill, &info);
  CHECK(!info.cache_hit);
  CHECK(strstr(info.cache_note, "refused by cuModuleLoadData") != NULL);
  if (m6) suite_run_fill(m6, 300, 0);
  hg_rt_module_unload(suite_rt, m6);
  hg_module_t *m7 = suite_load(suite_ptx_fill, &info);
  CHECK(info.cache_hit);
  hg_rt_module_unload(suite_rt, m7);

  /* HOPGEN_CACHE_DIR=off: compiled every time, nothing written. */
  setenv("HOPGEN_CACHE_DIR", "off", 1);
  hg_module_t *m8 = suite_load(suite_ptx_fill, &info);
  CHECK(!info.cache_hit);
  CHECK_STR(info.cache_path, "");
  CHECK(strstr(info.cache_note, "HOPGEN_CACHE_DIR=off") != NULL);
  if (m8) suite_run_fill(m8, 5, 0);
  hg_rt_module_unload(suite_rt, m8);

  /* An unusable cache directory: the module still loads, the note says why it is off. */
  char file[600], below[700];
  snprintf(file, sizeof file, "%s/a-file", dir);
  FILE *fp = fopen(file, "w");
  if (fp) fclose(fp);
  snprintf(below, sizeof below, "%s/cache", file);
  setenv("HOPGEN_CACHE_DIR", below, 1);
  hg_module_t *m9 = suite_load(suite_ptx_fill, &info);
  CHECK(!info.cache_hit);
  CHECK(strstr(info.cache_note, "cache off") && strstr(info.cache_note, "is not a directory"));
  CHECK_STR(info.cache_path, "");
  if (m9) suite_run_fill(m9, 9, 0);
  hg_rt_module_unload(suite_rt, m9);
  suite_restore_env("HOPGEN_CACHE_DIR", saved);
  suite_rm_tree(dir);
}

static void suite_jit_error(void) {
  char *saved = suite_saved_env("HOPGEN_CACHE_DIR");
  char dir[512];
  suite_tmpdir(dir, sizeof dir);
  setenv("HOPGEN_CACHE_DIR", dir, 1);
  for (int round = 0; round < 2; round++) { /* a failure is never cached */
    hg_module_t *m = (hg_module_t *)1;
    hg_jit_info_t info;
    hg_status_t s = hg_rt_module_load(suite_rt, suite_ptx_bad, &m, &info);
    CHECK_EQ(s.code, HG_ERR_JIT);
    CHECK(m == NULL);
    CHECK(strstr(s.msg, "rejected the PTX") != NULL);
    CHECK(strstr(s.msg, "CUDA_ERROR_INVALID_PTX") != NULL);
    CHECK(strstr(s.msg, "error") != NULL); /* the log itself */
    if (round == 0) fprintf(stderr, "  JIT failure says: %s\n", s.msg);
  }
  suite_restore_env("HOPGEN_CACHE_DIR", saved);
  suite_rm_tree(dir);
}

static void suite_functions(void) {
  hg_jit_info_t info;
  hg_module_t *m = suite_load(suite_ptx_fill, &info);
  if (!m) return;
  const hg_device_info_t *d = hg_rt_device(suite_rt);
  hg_function_t *f = NULL, *g = NULL;
  CHECK_OK(hg_rt_function(suite_rt, m, "hg_test_fill", 0, &f));
  CHECK_OK(hg_rt_function(suite_rt, m, "hg_test_fill", 0, &g));
  CHECK(f != NULL && f == g); /* one handle per kernel */
  CHECK_ERR(hg_rt_function(suite_rt, m, "no_such_kernel", 0, &g), HG_ERR_INVALID,
            "no kernel named no_such_kernel");
  CHECK(g == NULL);
  /* Above 48 KB the limit is raised; above the opt-in limit the request is refused. */
  CHECK_OK(hg_rt_function(suite_rt, m, "hg_test_fill", 100 * 1024, &g));
  if (suite_mock) {
    mock_cuda_state_t *st = suite_mock_state();
    CHECK_EQ(st->dyn_smem_value, 100 * 1024);
  }
  CHECK_ERR(
      hg_rt_function(suite_rt, m, "hg_test_fill", (uint32_t)d->max_smem_per_block_optin + 1, &g),
      HG_ERR_INVALID, "allows at most");
  /* Launches with large dynamic shared memory: at the reserved size, and above it (the
   * launch raises the limit itself). */
  suite_run_fill(m, 500, 100 * 1024);
  suite_run_fill(m, 500, 200 * 1024);
  /* Launch shapes refused before the driver sees them. */
  hg_devptr_t out = 0;
  uint32_t n = 16;
  CHECK_OK(hg_rt_alloc(suite_rt, 1024, &out));
  void *args[] = {&out, &n};
  hg_launch_t l = {{0, 1, 1}, {128, 1, 1}, {0, 0, 0}, 0, NULL};
  CHECK_ERR(hg_rt_launch(suite_rt, f, &l, args), HG_ERR_INVALID, "grid.x = 0");
  hg_launch_t l2 = {{1, 1, 1}, {1024, 2, 1}, {0, 0, 0}, 0, NULL};
  CHECK_ERR(hg_rt_launch(suite_rt, f, &l2, args), HG_ERR_INVALID, "2048 threads");
  hg_launch_t l3 = {
      {1, 1, 1}, {32, 1, 1}, {1, 1, 1}, (uint32_t)d->max_smem_per_block_optin + 16, NULL};
  CHECK_ERR(hg_rt_launch(suite_rt, f, &l3, args), HG_ERR_INVALID, "allows at most");
  hg_rt_free(suite_rt, out);
  hg_rt_module_unload(suite_rt, m);
}

static void suite_clusters(void) {
  hg_jit_info_t info;
  hg_module_t *m = suite_load(suite_ptx_cluster, &info);
  if (!m) return;
  hg_function_t *f = NULL;
  CHECK_OK(hg_rt_function(suite_rt, m, "hg_test_cluster_rank", 0, &f));
  if (!f) return;
  enum { G = 32 };
  hg_devptr_t out = 0;
  CHECK_OK(hg_rt_alloc(suite_rt, G * 4, &out));
  void *args[] = {&out};
  uint32_t h[G];
  struct {
    uint32_t grid, cluster;
  } cases[] = {{8, 0}, {8, 1}, {8, 2}, {G, 4}, {16, 8}, {G, 16}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const uint32_t grid = cases[c].grid, cl = cases[c].cluster;
    CHECK_OK(hg_rt_memset8(suite_rt, out, 0xFF, G * 4, NULL));
    hg_launch_t l = {{grid, 1, 1}, {64, 1, 1}, {cl, cl ? 1u : 0u, cl ? 1u : 0u}, 0, NULL};
    hg_status_t s = hg_rt_launch(suite_rt, f, &l, args);
    if (!suite_mock && cl > 8 && s.code == HG_ERR_INVALID && strstr(s.msg, "cannot co-schedule")) {
      /* Non-portable sizes need a GPC with that many free SMs; not every Hopper part has. */
      fprintf(stderr, "  (cluster %u not schedulable here: %s)\n", cl, s.msg);
      continue;
    }
    if (!hg_is_ok(&s)) {
      HG_FAIL("cluster %u: %s", cl, s.msg);
      continue;
    }
    CHECK_OK(hg_rt_sync(suite_rt, NULL));
    CHECK_OK(hg_rt_download(suite_rt, h, out, sizeof h));
    const uint32_t size = cl ? cl : 1;
    int bad = 0;
    for (uint32_t b = 0; b < G; b++) bad += h[b] != (b < grid ? 16 * size + b % size : 0xFFFFFFFFu);
    if (bad) HG_FAIL("cluster %ux1x1 over grid %u: %d CTAs wrote the wrong rank", cl, grid, bad);
    if (suite_mock) {
      mock_cuda_state_t *st = suite_mock_state();
      CHECK_EQ(st->last_num_attrs, size > 1 ? 1 : 0);
      CHECK_EQ(st->last_cluster[0], size);
      if (size > 8) CHECK_EQ(st->nonportable_set, 1);
    }
  }
  if (suite_mock) { /* the schedulability check runs once per configuration */
    mock_cuda_state_t *st = suite_mock_state();
    const int before = st->occupancy_calls;
    hg_launch_t l = {{8, 1, 1}, {64, 1, 1}, {2, 1, 1}, 0, NULL};
    CHECK_OK(hg_rt_launch(suite_rt, f, &l, args));
    CHECK_OK(hg_rt_launch(suite_rt, f, &l, args));
    CHECK_EQ(st->occupancy_calls - before, 1);
    CHECK_OK(hg_rt_sync(suite_rt, NULL));
  }
  hg_launch_t bad1 = {{7, 1, 1}, {64, 1, 1}, {2, 1, 1}, 0, NULL};
  CHECK_ERR(hg_rt_launch(suite_rt, f, &bad1, args), HG_ERR_INVALID,
            "grid.x = 7 is not a multiple of cluster.x = 2");
  hg_launch_t bad2 = {{8, 1, 1}, {64, 1, 1}, {2, 0, 1}, 0, NULL};
  CHECK_ERR(hg_rt_launch(suite_rt, f, &bad2, args), HG_ERR_INVALID, "zero dimension");
  hg_launch_t bad3 = {{32, 1, 1}, {64, 1, 1}, {32, 1, 1}, 0, NULL};
  CHECK_ERR(hg_rt_launch(suite_rt, f, &bad3, args), HG_ERR_INVALID, "exceeds Hopper's limit of 16");
  hg_rt_free(suite_rt, out);
  hg_rt_module_unload(suite_rt, m);
}

/* ---------------------------------------------------------------- tensor maps */

static void suite_tensormaps(void) {
  hg_devptr_t buf = 0;
  CHECK_OK(hg_rt_alloc(suite_rt, 1 << 20, &buf));
  hg_tensormap_params_t p;
  memset(&p, 0, sizeof p);
  p.dtype = HG_BF16;
  p.rank = 2;
  p.global_dim[0] = 256;
  p.global_dim[1] = 128;
  p.global_stride_bytes[0] = 512;
  p.box_dim[0] = 64;
  p.box_dim[1] = 32;
  p.element_strides[0] = p.element_strides[1] = 1;
  p.swizzle = HG_SWIZZLE_128B;
  p.l2_promotion = 2;
  hg_tensormap_t tm;
  /* a map pointed at another address is the map encoded there */
  hg_tensormap_t moved, fresh;
  CHECK_OK(hg_rt_tensormap_encode(suite_rt, &p, buf, &moved));
  CHECK_OK(hg_rt_tensormap_replace_address(suite_rt, &moved, buf + 4096));
  CHECK_OK(hg_rt_tensormap_encode(suite_rt, &p, buf + 4096, &fresh));
  CHECK(memcmp(moved.opaque, fresh.opaque, sizeof moved.opaque) == 0);
  CHECK_ERR(hg_rt_tensormap_replace_address(suite_rt, &moved, buf + 8), HG_ERR_INVALID,
            "multiple of 16 bytes");
  CHECK_OK(hg_rt_tensormap_encode(suite_rt, &p, buf, &tm));
  if (suite_mock) { /* each argument reached its own parameter */
    CHECK_EQ(tm.opaque[15], 0x4D4F434B);
    CHECK_EQ(tm.opaque[0], buf);
    CHECK_EQ(tm.opaque[1], 9); /* CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 */
    CHECK_EQ(tm.opaque[2], 2);
    CHECK_EQ(tm.opaque[3], 0);
    CHECK_EQ(tm.opaque[4], 3); /* CU_TENSOR_MAP_SWIZZLE_128B */
    CHECK_EQ(tm.opaque[5], 2);
    CHECK_EQ(tm.opaque[6], 0);
    CHECK_EQ(tm.opaque[7], 256);
    CHECK_EQ(tm.opaque[8], 128);
    CHECK_EQ(tm.opaque[9], 512);
    CHECK_EQ(tm.opaque[11], 64);
    CHECK_EQ(tm.opaque[12], 32);
    CHECK_EQ(tm.opaque[13], 1);
  }
  /* Rank 5 with NaN fill and element strides. */
  hg_tensormap_params_t q;
  memset(&q, 0, sizeof q);
  q.dtype = HG_F32;
  q.rank = 5;
  uint64_t stride = 64 * 4;
  for (int i = 0; i < 5; i++) {
    q.global_dim[i] = i == 0 ? 64 : 4;
    q.box_dim[i] = i == 0 ? 8 : 2;
    q.element_strides[i] = i == 4 ? 2 : 1;
    if (i < 4) {
      q.global_stride_bytes[i] = stride;
      stride *= 4;
    }
  }
  q.oob_nan = true;
  CHECK_OK(hg_rt_tensormap_encode(suite_rt, &q, buf + 1024, &tm));
  if (suite_mock) {
    CHECK_EQ(tm.opaque[1], 7); /* CU_TENSOR_MAP_DATA_TYPE_FLOAT32 */
    CHECK_EQ(tm.opaque[2], 5);
    CHECK_EQ(tm.opaque[6], 1); /* CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA */
    CHECK_EQ(tm.opaque[8], 4);
    CHECK_EQ(tm.opaque[10], 64 * 4 * 4 * 4 * 4);
    CHECK_EQ(tm.opaque[13], 2);
  }
  /* Every element type maps to a tensor-map type the driver takes. */
  static const struct {
    hg_dtype_t t;
    uint64_t cu;
  } types[] = {{HG_U8, 0},    {HG_S8, 0},   {HG_E4M3, 0}, {HG_E5M2, 0}, {HG_U16, 1},
               {HG_F16, 6},   {HG_BF16, 9}, {HG_U32, 2},  {HG_S32, 3},  {HG_F32, 7},
               {HG_TF32, 11}, {HG_U64, 4},  {HG_F64, 8}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    hg_tensormap_params_t r = p;
    r.dtype = types[i].t;
    r.box_dim[0] = 64 / (uint32_t)hg_dtype_bytes(types[i].t); /* 64 B inner box */
    r.swizzle = HG_SWIZZLE_64B;
    hg_status_t s = hg_rt_tensormap_encode(suite_rt, &r, buf, &tm);
    if (!hg_is_ok(&s)) HG_FAIL("%s: %s", hg_dtype_name(types[i].t), s.msg);
    if (suite_mock && tm.opaque[1] != types[i].cu)
      HG_FAIL("%s became tensor-map type %llu, expected %llu", hg_dtype_name(types[i].t),
              (unsigned long long)tm.opaque[1], (unsigned long long)types[i].cu);
  }
  /* hopgen's validation speaks first. */
  hg_tensormap_params_t bad = p;
  bad.global_stride_bytes[0] = 1000;
  CHECK_ERR(hg_rt_tensormap_encode(suite_rt, &bad, buf, &tm), HG_ERR_INVALID,
            "globalStrides[0] = 1000 B is not a multiple of 16 B");
  CHECK_ERR(hg_rt_tensormap_encode(suite_rt, &p, buf + 8, &tm), HG_ERR_INVALID, "16-byte aligned");
  if (suite_mock) { /* a driver refusal after validation lists every parameter */
    hg_tensormap_params_t odd = p;
    odd.global_dim[0] = 12345;
    CHECK_ERR(hg_rt_tensormap_encode(suite_rt, &odd, buf, &tm), HG_ERR_CUDA,
              "passed hopgen's checks but failed: CUDA_ERROR_INVALID_VALUE");
    CHECK_ERR(hg_rt_tensormap_encode(suite_rt, &odd, buf, &tm), HG_ERR_CUDA,
              "globalDim = {12345, 128}, globalStrides = {512} B, boxDim = {64, 32}");
  }
  hg_rt_free(suite_rt, buf);
}

/* ---------------------------------------------------------------- cuBLASLt */

typedef struct suite_gemm {
  int64_t m, n, k;
  int batch;
  hg_dtype_t at, bt, ct;
  bool akm, bkm;
  float alpha, beta;
  bool with_c;
  float scale_a, scale_b; /* 0 = no scale pointer */
  bool fast_accum;        /* fp8: cuBLASLt's FAST_ACCUM */
} suite_gemm_t;

static void suite_put(uint8_t *base, hg_dtype_t t, int64_t i, float v) {
  switch (t) {
  case HG_BF16: {
    uint16_t h = hgt_f32_to_bf16(v);
    memcpy(base + 2 * i, &h, 2);
    break;
  }
  case HG_F16: {
    uint16_t h = hgt_f32_to_f16(v);
    memcpy(base + 2 * i, &h, 2);
    break;
  }
  case HG_F32:
  case HG_TF32:
    memcpy(base + 4 * i, &v, 4);
    break;
  case HG_E4M3:
    base[i] = hgt_f32_to_fp8(v, 0);
    break;
  case HG_E5M2:
    base[i] = hgt_f32_to_fp8(v, 1);
    break;
  default:
    break;
  }
}

static double suite_get(const uint8_t *base, hg_dtype_t t, int64_t i) {
  uint16_t h;
  float f;
  switch (t) {
  case HG_BF16:
    memcpy(&h, base + 2 * i, 2);
    return hgt_bf16_to_f32(h);
  case HG_F16:
    memcpy(&h, base + 2 * i, 2);
    return hgt_f16_to_f32(h);
  case HG_F32:
  case HG_TF32:
    memcpy(&f, base + 4 * i, 4);
    return f;
  case HG_E4M3:
    return hgt_e4m3_to_f32(base[i]);
  case HG_E5M2:
    return hgt_e5m2_to_f32(base[i]);
  default:
    return 0;
  }
}

/* One GEMM against a CPU f64 reference; padded leading dimensions and batch strides, and
 * D's padding must stay untouched. Returns the relative Frobenius error. */
static double suite_gemm_check(hg_blas_t *blas, const suite_gemm_t *c, const char *what) {
  const int64_t M = c->m, N = c->n, K = c->k, B = c->batch > 0 ? c->batch : 1;
  const int64_t pad = 16; /* keeps every row 16-byte aligned for every type */
  const int64_t lda = (c->akm ? K : M) + pad, ldb = (c->bkm ? K : N) + pad, ldd = N + pad;
  /* Batch strides: past the matrix, rounded to 128 elements (every batch stays aligned). */
  const int64_t sa = ((c->akm ? M : K) * lda + 64 + 127) / 128 * 128,
                sb = ((c->bkm ? N : K) * ldb + 64 + 127) / 128 * 128,
                sd = (M * ldd + 64 + 127) / 128 * 128;
  const size_t ea = (size_t)hg_dtype_bytes(c->at), eb = (size_t)hg_dtype_bytes(c->bt),
               ed = (size_t)hg_dtype_bytes(c->ct);
  uint8_t *ha = calloc((size_t)(sa * B), ea), *hb = calloc((size_t)(sb * B), eb),
          *hc = calloc((size_t)(sd * B), ed), *hd = calloc((size_t)(sd * B), ed);
  uint64_t rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)(M * 31 + N * 7 + K);
  for (int64_t i = 0; i < sa * B; i++) suite_put(ha, c->at, i, hgt_rand_quarter(&rng));
  for (int64_t i = 0; i < sb * B; i++) suite_put(hb, c->bt, i, hgt_rand_quarter(&rng));
  for (int64_t i = 0; i < sd * B; i++) suite_put(hc, c->ct, i, hgt_rand_quarter(&rng));
  hg_devptr_t da = 0, db = 0, dc = 0, dd = 0, dscale = 0;
  CHECK_OK(hg_rt_alloc(suite_rt, (size_t)(sa * B) * ea, &da));
  CHECK_OK(hg_rt_alloc(suite_rt, (size_t)(sb * B) * eb, &db));
  CHECK_OK(hg_rt_alloc(suite_rt, (size_t)(sd * B) * ed, &dc));
  CHECK_OK(hg_rt_alloc(suite_rt, (size_t)(sd * B) * ed, &dd));
  CHECK_OK(hg_rt_alloc(suite_rt, 256, &dscale));
  const float scales[5] = {c->scale_a, 0, 0, 0, c->scale_b}; /* at dscale and dscale + 16 */
  CHECK_OK(hg_rt_upload(suite_rt, dscale, scales, sizeof scales));
  CHECK_OK(hg_rt_upload(suite_rt, da, ha, (size_t)(sa * B) * ea));
  CHECK_OK(hg_rt_upload(suite_rt, db, hb, (size_t)(sb * B) * eb));
  CHECK_OK(hg_rt_upload(suite_rt, dc, hc, (size_t)(sd * B) * ed));
  CHECK_OK(hg_rt_memset8(suite_rt, dd, 0xFF, (size_t)(sd * B) * ed, NULL)); /* poison (NaN) */
  hg_blas_gemm_args_t g;
  memset(&g, 0, sizeof g);
  g.m = M;
  g.n = N;
  g.k = K;
  g.batch = (int)B;
  g.a_type = c->at;
  g.b_type = c->bt;
  g.cd_type = c->ct;
  g.a_k_major = c->akm;
  g.b_k_major = c->bkm;
  g.lda = lda;
  g.ldb = ldb;
  g.ldc = ldd;
  g.ldd = ldd;
  g.batch_stride_a = sa;
  g.batch_stride_b = sb;
  g.batch_stride_c = sd;
  g.batch_stride_d = sd;
  g.alpha = c->alpha;
  g.beta = c->beta;
  g.a = da;
  g.b = db;
  g.c = c->with_c ? dc : 0;
  g.d = dd;
  g.scale_a = c->scale_a != 0.0f ? dscale : 0;
  /* its own 16-byte aligned slot: cuBLASLt declined e4m3 -> bf16 with the scale of B 4 bytes
   * after that of A (CUBLAS_STATUS_NOT_SUPPORTED on an H200) */
  g.scale_b = c->scale_b != 0.0f ? dscale + 16 : 0;
  g.fast_accum = c->fast_accum;
  double rel = INFINITY;
  hg_status_t s = hg_blas_gemm(blas, &g);
  if (!hg_is_ok(&s)) {
    HG_FAIL("%s: %s", what, s.msg);
  } else {
    CHECK_OK(hg_rt_sync(suite_rt, NULL));
    CHECK_OK(hg_rt_download(suite_rt, hd, dd, (size_t)(sd * B) * ed));
    const double scale =
        (c->scale_a != 0.0f ? c->scale_a : 1.0) * (c->scale_b != 0.0f ? c->scale_b : 1.0);
    double err2 = 0, ref2 = 0;
    int64_t pad_touched = 0;
    for (int64_t b = 0; b < B; b++) {
      for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < ldd; j++) {
          const int64_t at = b * sd + i * ldd + j;
          if (j >= N) { /* padding: still poison */
            pad_touched += suite_get(hd, c->ct, at) == suite_get(hd, c->ct, at);
            continue;
          }
          double acc = 0;
          for (int64_t p = 0; p < K; p++) {
            const double x = suite_get(ha, c->at, b * sa + (c->akm ? i * lda + p : p * lda + i));
            const double y = suite_get(hb, c->bt, b * sb + (c->bkm ? j * ldb + p : p * ldb + j));
            acc += x * y;
          }
          double ref = c->alpha * scale * acc;
          if (c->with_c && c->beta != 0.0f) ref += c->beta * suite_get(hc, c->ct, at);
          const double got = suite_get(hd, c->ct, at);
          err2 += (got - ref) * (got - ref);
          ref2 += ref * ref;
        }
      }
    }
    rel = sqrt(err2 / (ref2 > 0 ? ref2 : 1));
    if (!(rel < 1e-2)) HG_FAIL("%s: relative Frobenius error %.3g (expected < 1e-2)", what, rel);
    if (pad_touched)
      HG_FAIL("%s: %lld padding elements of D were written", what, (long long)pad_touched);
    fprintf(stderr, "  %-44s rel. error %.2e\n", what, rel);
  }
  hg_rt_free(suite_rt, da);
  hg_rt_free(suite_rt, db);
  hg_rt_free(suite_rt, dc);
  hg_rt_free(suite_rt, dd);
  hg_rt_free(suite_rt, dscale);
  free(ha);
  free(hb);
  free(hc);
  free(hd);
  return rel;
}

/* cuBLASLt's fused epilogues hopgen compares with: bias along N, then ReLU or the tanh-form
 * GELU, and GELU_AUX_BIAS's pre-activation output, against a CPU reference. */
static void suite_blas_epilogue(hg_blas_t *blas) {
  const int64_t M = 40, N = 72, K = 64;
  float *ha = malloc(sizeof(float) * M * K), *hb = malloc(sizeof(float) * N * K);
  float *bias = malloc(sizeof(float) * N), *hd = malloc(sizeof(float) * M * N);
  float *haux = malloc(sizeof(float) * M * N);
  uint16_t *a16 = malloc(2 * M * K), *b16 = malloc(2 * N * K);
  uint64_t rng = 12345;
  for (int64_t i = 0; i < M * K; i++) suite_put((uint8_t *)a16, HG_BF16, i, hgt_rand_quarter(&rng));
  for (int64_t i = 0; i < N * K; i++) suite_put((uint8_t *)b16, HG_BF16, i, hgt_rand_quarter(&rng));
  for (int64_t j = 0; j < N; j++) bias[j] = (float)(j % 7) * 0.25f - 0.75f;
  for (int64_t i = 0; i < M * K; i++) ha[i] = (float)suite_get((uint8_t *)a16, HG_BF16, i);
  for (int64_t i = 0; i < N * K; i++) hb[i] = (float)suite_get((uint8_t *)b16, HG_BF16, i);
  hg_devptr_t da = 0, db = 0, dd = 0, dbias = 0, daux = 0;
  CHECK_OK(hg_rt_alloc(suite_rt, 2 * M * K, &da));
  CHECK_OK(hg_rt_alloc(suite_rt, 2 * N * K, &db));
  CHECK_OK(hg_rt_alloc(suite_rt, 4 * M * N, &dd));
  CHECK_OK(hg_rt_alloc(suite_rt, 4 * M * N, &daux));
  CHECK_OK(hg_rt_alloc(suite_rt, 4 * N, &dbias));
  CHECK_OK(hg_rt_upload(suite_rt, da, a16, 2 * M * K));
  CHECK_OK(hg_rt_upload(suite_rt, db, b16, 2 * N * K));
  CHECK_OK(hg_rt_upload(suite_rt, dbias, bias, 4 * N));
  static const hg_blas_epilogue_t epis[] = {HG_BLAS_EPI_BIAS, HG_BLAS_EPI_RELU_BIAS,
                                            HG_BLAS_EPI_GELU_BIAS, HG_BLAS_EPI_GELU_AUX_BIAS};
  for (size_t e = 0; e < sizeof epis / sizeof epis[0]; e++) {
    hg_blas_gemm_args_t g;
    memset(&g, 0, sizeof g);
    g.m = M;
    g.n = N;
    g.k = K;
    g.a_type = g.b_type = HG_BF16;
    g.cd_type = HG_F32;
    g.a_k_major = g.b_k_major = true;
    g.alpha = 1.0f;
    g.a = da;
    g.b = db;
    g.d = dd;
    g.epilogue = epis[e];
    g.bias = dbias;
    g.bias_type = HG_F32;
    g.aux = daux;
    g.ld_aux = N;
    CHECK_OK(hg_rt_memset8(suite_rt, dd, 0xFF, 4 * M * N, NULL));
    CHECK_OK(hg_rt_memset8(suite_rt, daux, 0xFF, 4 * M * N, NULL));
    CHECK_OK(hg_blas_gemm(blas, &g));
    CHECK_OK(hg_rt_sync(suite_rt, NULL));
    CHECK_OK(hg_rt_download(suite_rt, hd, dd, 4 * M * N));
    CHECK_OK(hg_rt_download(suite_rt, haux, daux, 4 * M * N));
    double err = 0;
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        double pre = bias[j];
        for (int64_t p = 0; p < K; p++) pre += (double)ha[i * K + p] * hb[j * K + p];
        double want = pre;
        if (epis[e] == HG_BLAS_EPI_RELU_BIAS) want = pre > 0 ? pre : 0;
        if (epis[e] >= HG_BLAS_EPI_GELU_BIAS)
          want = 0.5 * pre * (1 + tanh(0.7978845608028654 * (pre + 0.044715 * pre * pre * pre)));
        const double d = fabs(hd[i * N + j] - want);
        if (!(d <= err)) err = d;
        if (epis[e] == HG_BLAS_EPI_GELU_AUX_BIAS) {
          const double da2 = fabs(haux[i * N + j] - pre);
          if (!(da2 <= err)) err = da2;
        }
      }
    if (!(err < 2e-3)) HG_FAIL("cuBLASLt epilogue %d: max error %.3g", (int)epis[e], err);
  }
  hg_blas_gemm_args_t g;
  memset(&g, 0, sizeof g);
  g.m = g.n = g.k = 64;
  g.a_type = g.b_type = HG_BF16;
  g.cd_type = HG_BF16;
  g.a_k_major = g.b_k_major = true;
  g.a = g.b = g.d = da;
  g.epilogue = HG_BLAS_EPI_BIAS;
  CHECK_ERR(hg_blas_gemm(blas, &g), HG_ERR_INVALID, "needs the bias pointer");
  g.bias = dbias;
  g.epilogue = HG_BLAS_EPI_GELU_AUX_BIAS;
  CHECK_ERR(hg_blas_gemm(blas, &g), HG_ERR_INVALID, "GELU_AUX_BIAS needs the aux pointer");
  hg_rt_free(suite_rt, da);
  hg_rt_free(suite_rt, db);
  hg_rt_free(suite_rt, dd);
  hg_rt_free(suite_rt, daux);
  hg_rt_free(suite_rt, dbias);
  free(ha);
  free(hb);
  free(bias);
  free(hd);
  free(haux);
  free(a16);
  free(b16);
}

static void suite_gemm(void) {
  hg_blas_t *blas = NULL;
  hg_status_t s = hg_blas_open(suite_rt, &blas);
  if (s.code == HG_ERR_TOOL) {
    fprintf(stderr, "  skipped: %s\n", s.msg);
    return;
  }
  CHECK_OK(s);
  if (!blas) return;
  char what[128];
  for (int am = 0; am < 2; am++) {
    for (int bm = 0; bm < 2; bm++) {
      suite_gemm_t c = {128, 96, 64, 1, HG_BF16, HG_BF16, HG_BF16, am, bm, 1, 0, false, 0, 0};
      snprintf(what, sizeof what, "bf16 A %s, B %s", am ? "K-major" : "M-major",
               bm ? "K-major" : "N-major");
      suite_gemm_check(blas, &c, what);
    }
  }
  suite_gemm_t f32out = {64,   80,    48,   1,    HG_BF16, HG_BF16, HG_F32,
                         true, false, 0.5f, 2.0f, true,    0,       0};
  suite_gemm_check(blas, &f32out, "bf16 -> f32, alpha 0.5, beta 2 with C");
  suite_gemm_t f16 = {96, 64, 32, 1, HG_F16, HG_F16, HG_F16, false, true, 1, 0, false, 0, 0};
  suite_gemm_check(blas, &f16, "f16 A M-major, B K-major");
  suite_gemm_t batched = {64, 48, 32, 3, HG_BF16, HG_BF16, HG_BF16, true, true, 1, 0, false, 0, 0};
  suite_gemm_check(blas, &batched, "bf16 batch of 3");
  suite_gemm_t batched_mn = {48,    64,    32, 2, HG_BF16, HG_BF16, HG_F32,
                             false, false, 1,  1, true,    0,       0};
  suite_gemm_check(blas, &batched_mn, "bf16 batch of 2, M-/N-major, with C");
  suite_gemm_t tf32 = {64, 64, 64, 1, HG_TF32, HG_TF32, HG_F32, true, true, 1, 0, false, 0, 0};
  suite_gemm_check(blas, &tf32, "tf32 -> f32");
  /* cuBLASLt declined this case (CUBLAS_STATUS_NOT_SUPPORTED, H200) while the scale of B
   * sat 4 bytes after that of A; with each scale 16-byte aligned it runs (seen at 2048^3;
   * here small, since the f64 host reference is cubic). */
  suite_gemm_t fp8 = {256,  256,  128, 1, HG_E4M3, HG_E4M3, HG_BF16,
                      true, true, 1,   0, false,   0.5f,    4.0f};
  suite_gemm_check(blas, &fp8, "e4m3 TN, scales 0.5 and 4 -> bf16");
  suite_gemm_t fp8b = {64, 128, 64, 1, HG_E4M3, HG_E5M2, HG_F32, true, true, 1, 0, false, 0, 0};
  suite_gemm_check(blas, &fp8b, "e4m3 x e5m2 TN -> f32");
  suite_gemm_t fp8c = {64, 64, 64, 1, HG_E5M2, HG_E4M3, HG_F16, true, true, 1, 0, false, 2.0f, 0};
  suite_gemm_check(blas, &fp8c, "e5m2 x e4m3 TN, scale A 2 -> f16");
  /* The same shape again uses the cached algorithm. */
  suite_gemm_check(blas, &fp8, "e4m3 TN again (cached algorithm)");
  /* fp8's fast accumulation: its own plan, the same result at this K */
  suite_gemm_t fp8f = fp8;
  fp8f.fast_accum = true;
  suite_gemm_check(blas, &fp8f, "e4m3 TN, fast accumulation -> bf16");
  suite_blas_epilogue(blas);

  /* Refusals, with sentences. */
  hg_blas_gemm_args_t g;
  memset(&g, 0, sizeof g);
  g.m = g.n = g.k = 64;
  g.a_type = g.b_type = HG_E4M3;
  g.cd_type = HG_BF16;
  g.a_k_major = false;
  g.b_k_major = true;
  g.a = g.b = g.d = 0x100000;
  CHECK_ERR(hg_blas_gemm(blas, &g), HG_ERR_UNSUPPORTED, "only in the TN form");
  g.a_k_major = true;
  g.b_type = HG_E5M2;
  g.a_type = HG_E5M2;
  CHECK_ERR(hg_blas_gemm(blas, &g), HG_ERR_UNSUPPORTED, "e5m2 x e5m2");
  g.a_type = g.b_type = HG_BF16;
  g.scale_a = 0x100000;
  CHECK_ERR(hg_blas_gemm(blas, &g), HG_ERR_INVALID, "scales are for fp8");
  g.scale_a = 0;
  g.fast_accum = true;
  CHECK_ERR(hg_blas_gemm(blas, &g), HG_ERR_INVALID, "fast accumulation is for fp8");
  g.fast_accum = false;
  g.b_type = HG_F16;
  CHECK_ERR(hg_blas_gemm(blas, &g), HG_ERR_UNSUPPORTED, "both operands need one type");
  g.b_type = HG_BF16;
  g.lda = 32;
  CHECK_ERR(hg_blas_gemm(blas, &g), HG_ERR_INVALID, "lda = 32 is below 64");
  g.lda = 0;
  g.m = 0;
  CHECK_ERR(hg_blas_gemm(blas, &g), HG_ERR_INVALID, "at least 1");
  g.m = 64;
  g.a_type = g.b_type = HG_S8;
  CHECK_ERR(hg_blas_gemm(blas, &g), HG_ERR_UNSUPPORTED, "s8");
  hg_blas_close(blas);
}

/* ---------------------------------------------------------------- a kernel fault (last) */

static void suite_fault(void) {
  hg_jit_info_t info;
  hg_module_t *m = suite_load(suite_ptx_cluster, &info);
  if (!m) return;
  hg_function_t *f = NULL;
  CHECK_OK(hg_rt_function(suite_rt, m, "hg_test_trap", 0, &f));
  if (!f) return;
  hg_launch_t l = {{1, 1, 1}, {32, 1, 1}, {0, 0, 0}, 0, NULL};
  hg_status_t s = hg_rt_launch(suite_rt, f, &l, NULL);
  if (hg_is_ok(&s)) s = hg_rt_sync(suite_rt, NULL);
  CHECK_EQ(s.code, HG_ERR_CUDA);
  CHECK(strstr(s.msg, "cuStreamSynchronize") || strstr(s.msg, "cuLaunchKernelEx"));
  CHECK(strstr(s.msg, "the CUDA context is lost") != NULL);
  if (suite_mock) CHECK(strstr(s.msg, "CUDA_ERROR_ILLEGAL_INSTRUCTION") != NULL);
  if (suite_mock) CHECK(strstr(s.msg, "innermost TMA coordinate") != NULL);
  fprintf(stderr, "  a trapping kernel says: %s\n", s.msg);
  /* Every later call reports the fault too. */
  hg_devptr_t p = 0;
  hg_status_t t = hg_rt_alloc(suite_rt, 64, &p);
  CHECK_EQ(t.code, HG_ERR_CUDA);
  hg_rt_module_unload(suite_rt, m);
}

#endif
