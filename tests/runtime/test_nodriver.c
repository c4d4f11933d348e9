/* The runtime on a machine without a usable driver (every machine runs these): clean
 * HG_ERR_NO_DRIVER / HG_ERR_NO_DEVICE sentences, no crash when handed no runtime, and the
 * cuBLASLt loader's own errors. */
#include <unistd.h>

#include "hg_test.h"
#include "hopgen/runtime.h"

static void test_missing_driver(void) {
  setenv("HOPGEN_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  hg_rt_t *rt = (hg_rt_t *)1;
  CHECK_ERR(hg_rt_open(0, &rt), HG_ERR_NO_DRIVER, "could not be loaded");
  CHECK_ERR(hg_rt_open(0, &rt), HG_ERR_NO_DRIVER, "no NVIDIA driver on this machine");
  CHECK_ERR(hg_rt_open(0, &rt), HG_ERR_NO_DRIVER, "/nonexistent/libcuda.so.1");
  CHECK_ERR(hg_rt_open(0, &rt), HG_ERR_NO_DRIVER, "HOPGEN_LIBCUDA");
  CHECK(rt == NULL);
  unsetenv("HOPGEN_LIBCUDA");
}

/* Whatever this machine has, opening either works (a Hopper GPU) or fails cleanly with
 * NO_DRIVER / NO_DEVICE and a sentence. */
static void test_this_machine(void) {
  unsetenv("HOPGEN_LIBCUDA");
  hg_rt_t *rt = NULL;
  hg_status_t s = hg_rt_open(0, &rt);
  if (s.code == HG_OK) {
    CHECK(rt != NULL);
    const hg_device_info_t *d = hg_rt_device(rt);
    CHECK(d->cc_major == 9 && d->cc_minor == 0);
    fprintf(stderr, "  (this machine has %s, driver %d)\n", d->name, d->driver_version);
    hg_rt_close(rt);
    return;
  }
  if (s.code != HG_ERR_NO_DRIVER && s.code != HG_ERR_NO_DEVICE)
    HG_FAIL("hg_rt_open returned %s: %s", hg_code_name(s.code), s.msg);
  CHECK(strlen(s.msg) > 20);
  CHECK(rt == NULL);
  if (s.code == HG_ERR_NO_DRIVER) CHECK(strstr(s.msg, "libcuda.so.1") || strstr(s.msg, "driver"));
  fprintf(stderr, "  (this machine: %s)\n", s.msg);
}

/* The toolkit's stub libcuda (exports every symbol, every call returns
 * CUDA_ERROR_STUB_LIBRARY) exercises the resolver's dlsym path and a failing cuInit. */
static void test_stub_driver(void) {
  const char *stubs[] = {"/usr/local/cuda/lib64/stubs/libcuda.so",
                         "/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so"};
  const char *stub = NULL;
  for (size_t i = 0; i < sizeof stubs / sizeof stubs[0] && !stub; i++)
    if (access(stubs[i], R_OK) == 0) stub = stubs[i];
  if (!stub) {
    fprintf(stderr, "  (no CUDA stub library here; skipped)\n");
    return;
  }
  setenv("HOPGEN_LIBCUDA", stub, 1);
  hg_rt_t *rt = NULL;
  CHECK_ERR(hg_rt_open(0, &rt), HG_ERR_NO_DRIVER, "cuInit failed with CUDA_ERROR_STUB_LIBRARY");
  CHECK_ERR(hg_rt_open(0, &rt), HG_ERR_NO_DRIVER, "is not usable");
  CHECK(rt == NULL);
  unsetenv("HOPGEN_LIBCUDA");
}

/* A library that is not a driver at all. */
static void test_not_a_driver(void) {
  setenv("HOPGEN_LIBCUDA", "libm.so.6", 1);
  hg_rt_t *rt = NULL;
  CHECK_ERR(hg_rt_open(0, &rt), HG_ERR_NO_DRIVER, "is not a usable CUDA driver: it lacks");
  unsetenv("HOPGEN_LIBCUDA");
}

/* Every entry point refuses a missing runtime with a sentence instead of crashing. */
static void test_null_runtime(void) {
  hg_devptr_t p = 7;
  CHECK_ERR(hg_rt_alloc(NULL, 16, &p), HG_ERR_INVALID, "hg_rt_open");
  CHECK_EQ(p, 0);
  char buf[4];
  CHECK_ERR(hg_rt_upload(NULL, 0, buf, 4), HG_ERR_INVALID, "hg_rt_open");
  CHECK_ERR(hg_rt_download(NULL, buf, 0, 4), HG_ERR_INVALID, "hg_rt_open");
  CHECK_ERR(hg_rt_copy_d2d(NULL, 0, 0, 4, NULL), HG_ERR_INVALID, "hg_rt_open");
  CHECK_ERR(hg_rt_memset8(NULL, 0, 0, 4, NULL), HG_ERR_INVALID, "hg_rt_open");
  CHECK_ERR(hg_rt_sync(NULL, NULL), HG_ERR_INVALID, "hg_rt_open");
  hg_stream_t s = (hg_stream_t)1;
  CHECK_ERR(hg_rt_stream_create(NULL, &s), HG_ERR_INVALID, "hg_rt_open");
  CHECK(s == NULL);
  hg_event_t e = (hg_event_t)1;
  CHECK_ERR(hg_rt_event_create(NULL, &e), HG_ERR_INVALID, "hg_rt_open");
  CHECK(e == NULL);
  float ms = 1;
  CHECK_ERR(hg_rt_event_elapsed_ms(NULL, NULL, NULL, &ms), HG_ERR_INVALID, "hg_rt_open");
  hg_module_t *m = (hg_module_t *)1;
  hg_jit_info_t info;
  CHECK_ERR(hg_rt_module_load(NULL, ".version 8.0", &m, &info), HG_ERR_INVALID, "hg_rt_open");
  CHECK(m == NULL);
  CHECK_ERR(hg_rt_module_load(NULL, "", &m, &info), HG_ERR_INVALID, "no PTX");
  hg_function_t *f = (hg_function_t *)1;
  CHECK_ERR(hg_rt_function(NULL, NULL, "k", 0, &f), HG_ERR_INVALID, "module");
  CHECK(f == NULL);
  hg_launch_t l = {{1, 1, 1}, {1, 1, 1}, {0, 0, 0}, 0, NULL};
  CHECK_ERR(hg_rt_launch(NULL, NULL, &l, NULL), HG_ERR_INVALID, "kernel");
  CHECK(hg_rt_device(NULL) == NULL);
  /* Releasing nothing is fine. */
  hg_rt_close(NULL);
  hg_rt_free(NULL, 0);
  hg_rt_stream_destroy(NULL, NULL);
  hg_rt_event_destroy(NULL, NULL);
  hg_rt_module_unload(NULL, NULL);
  hg_blas_close(NULL);
}

/* The tensor map is validated before the driver is needed: the rule reaches the user. */
static void test_tensormap_validation_first(void) {
  hg_tensormap_params_t p;
  memset(&p, 0, sizeof p);
  p.dtype = HG_BF16;
  p.rank = 2;
  p.global_dim[0] = 500;
  p.global_dim[1] = 64;
  p.global_stride_bytes[0] = 1000;
  p.box_dim[0] = 64;
  p.box_dim[1] = 64;
  p.element_strides[0] = p.element_strides[1] = 1;
  p.swizzle = HG_SWIZZLE_128B;
  hg_tensormap_t tm;
  CHECK_ERR(hg_rt_tensormap_encode(NULL, &p, 0x10000, &tm), HG_ERR_INVALID,
            "globalStrides[0] = 1000 B is not a multiple of 16 B");
  p.global_stride_bytes[0] = 1008;
  CHECK_ERR(hg_rt_tensormap_encode(NULL, &p, 0x10008, &tm), HG_ERR_INVALID, "16-byte aligned");
  CHECK_ERR(hg_rt_tensormap_encode(NULL, &p, 0, &tm), HG_ERR_INVALID, "globalAddress = 0");
  /* Valid parameters without a runtime: refused for the missing runtime only. */
  CHECK_ERR(hg_rt_tensormap_encode(NULL, &p, 0x10000, &tm), HG_ERR_INVALID, "hg_rt_open");
}

static void test_blas_without_library(void) {
  setenv("HOPGEN_LIBCUBLASLT", "/nonexistent/libcublasLt.so.13", 1);
  hg_blas_t *b = (hg_blas_t *)1;
  CHECK_ERR(hg_blas_open(NULL, &b), HG_ERR_TOOL, "cuBLASLt could not be loaded");
  CHECK_ERR(hg_blas_open(NULL, &b), HG_ERR_TOOL, "/nonexistent/libcublasLt.so.13");
  CHECK_ERR(hg_blas_open(NULL, &b), HG_ERR_TOOL, "HOPGEN_LIBCUBLASLT");
  CHECK(b == NULL);
  setenv("HOPGEN_LIBCUBLASLT", "libm.so.6", 1);
  CHECK_ERR(hg_blas_open(NULL, &b), HG_ERR_TOOL, "is not a usable cuBLASLt: it lacks cublasLt");
  unsetenv("HOPGEN_LIBCUBLASLT");
  /* With the system's cuBLASLt (when installed), the library loads and every symbol
   * resolves; what is missing then is the runtime. */
  hg_status_t s = hg_blas_open(NULL, &b);
  if (s.code == HG_ERR_TOOL) {
    fprintf(stderr, "  (no cuBLASLt here: %s)\n", s.msg);
  } else {
    CHECK_ERR(hg_blas_open(NULL, &b), HG_ERR_INVALID, "needs an open runtime");
  }
  CHECK(b == NULL);
  hg_blas_gemm_args_t g;
  memset(&g, 0, sizeof g);
  CHECK_ERR(hg_blas_gemm(NULL, &g), HG_ERR_INVALID, "handle");
}

static void test_clock(void) {
  double a = hg_now_ms();
  usleep(2000);
  double b = hg_now_ms();
  CHECK(b - a >= 1.9);
  CHECK(b - a < 1000);
}

int main(void) {
  HG_RUN(test_missing_driver);
  HG_RUN(test_this_machine);
  HG_RUN(test_stub_driver);
  HG_RUN(test_not_a_driver);
  HG_RUN(test_null_runtime);
  HG_RUN(test_tensormap_validation_first);
  HG_RUN(test_blas_without_library);
  HG_RUN(test_clock);
  return hg_test_finish();
}
