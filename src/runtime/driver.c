/* The CUDA driver, loaded with dlopen: entry-point resolution, hg_rt_open/close, device
 * information, memory, streams, events, synchronisation and the error sentences.
 *
 * No <cuda.h> and no link-time libcuda: the declarations live in cuda_api.h, and on a
 * machine without the driver hg_rt_open says so and everything else in hopgen still works. */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/rt_internal.h"

/* ---------------------------------------------------------------- error sentences */

/* Names for when the driver cannot name its own errors (a stub library, or a failure
 * before cuGetErrorName resolved). Values from cuda.h, enum cudaError_enum. */
static const char *fallback_name(CUresult r) {
  switch (r) {
  case CUDA_SUCCESS:
    return "CUDA_SUCCESS";
  case CUDA_ERROR_INVALID_VALUE:
    return "CUDA_ERROR_INVALID_VALUE";
  case CUDA_ERROR_OUT_OF_MEMORY:
    return "CUDA_ERROR_OUT_OF_MEMORY";
  case CUDA_ERROR_NOT_INITIALIZED:
    return "CUDA_ERROR_NOT_INITIALIZED";
  case CUDA_ERROR_DEINITIALIZED:
    return "CUDA_ERROR_DEINITIALIZED";
  case CUDA_ERROR_STUB_LIBRARY:
    return "CUDA_ERROR_STUB_LIBRARY";
  case CUDA_ERROR_NO_DEVICE:
    return "CUDA_ERROR_NO_DEVICE";
  case CUDA_ERROR_INVALID_DEVICE:
    return "CUDA_ERROR_INVALID_DEVICE";
  case CUDA_ERROR_INVALID_IMAGE:
    return "CUDA_ERROR_INVALID_IMAGE";
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
    return "CUDA_ERROR_NO_BINARY_FOR_GPU";
  case CUDA_ERROR_INVALID_PTX:
    return "CUDA_ERROR_INVALID_PTX";
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
  case CUDA_ERROR_NOT_FOUND:
    return "CUDA_ERROR_NOT_FOUND";
  case CUDA_ERROR_NOT_READY:
    return "CUDA_ERROR_NOT_READY";
  case CUDA_ERROR_ILLEGAL_ADDRESS:
    return "CUDA_ERROR_ILLEGAL_ADDRESS";
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
  case CUDA_ERROR_LAUNCH_TIMEOUT:
    return "CUDA_ERROR_LAUNCH_TIMEOUT";
  case CUDA_ERROR_ASSERT:
    return "CUDA_ERROR_ASSERT";
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
    return "CUDA_ERROR_HARDWARE_STACK_ERROR";
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    return "CUDA_ERROR_ILLEGAL_INSTRUCTION";
  case CUDA_ERROR_MISALIGNED_ADDRESS:
    return "CUDA_ERROR_MISALIGNED_ADDRESS";
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    return "CUDA_ERROR_INVALID_ADDRESS_SPACE";
  case CUDA_ERROR_INVALID_PC:
    return "CUDA_ERROR_INVALID_PC";
  case CUDA_ERROR_LAUNCH_FAILED:
    return "CUDA_ERROR_LAUNCH_FAILED";
  case CUDA_ERROR_INVALID_CLUSTER_SIZE:
    return "CUDA_ERROR_INVALID_CLUSTER_SIZE";
  case CUDA_ERROR_UNKNOWN:
    return "CUDA_ERROR_UNKNOWN";
  default:
    return NULL;
  }
}

const char *hg_cu_describe(const hg_cu_t *cu, CUresult r, char *buf, size_t size) {
  const char *name = NULL, *text = NULL;
  if (cu && cu->cuGetErrorName && cu->cuGetErrorName(r, &name) != CUDA_SUCCESS) name = NULL;
  if (cu && cu->cuGetErrorString && cu->cuGetErrorString(r, &text) != CUDA_SUCCESS) text = NULL;
  if (!name) name = fallback_name(r);
  if (name && text)
    snprintf(buf, size, "%s (%s)", name, text);
  else if (name)
    snprintf(buf, size, "%s", name);
  else
    snprintf(buf, size, "CUDA error %d", (int)r);
  return buf;
}

/* Faults that kill the context: every later call returns the same error, so the sentence
 * says that the process has to start over. */
static bool is_sticky(CUresult r) {
  switch (r) {
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_ASSERT:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_LAUNCH_FAILED:
    return true;
  default:
    return false;
  }
}

const char *hg_cu_hint(CUresult r) {
  switch (r) {
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    return "a kernel executed an illegal instruction; with TMA, an innermost TMA coordinate "
           "whose byte offset is not a multiple of 16 kills the kernel this way (so can wgmma "
           "or setmaxnreg used outside their rules); the CUDA context is lost: restart the "
           "process";
  case CUDA_ERROR_ILLEGAL_ADDRESS:
    return "a kernel accessed memory outside any allocation (a wrong pointer, extent or "
           "tensor-map base address); the CUDA context is lost: restart the process";
  case CUDA_ERROR_MISALIGNED_ADDRESS:
    return "a kernel made a misaligned access (TMA shared-memory buffers need 128 B "
           "alignment, 1024 B with the 128B swizzle; mbarriers 8 B; vector accesses their "
           "size); the CUDA context is lost: restart the process";
  case CUDA_ERROR_LAUNCH_TIMEOUT:
    return "the kernel ran past the watchdog; a hang such as an mbarrier wait whose "
           "transaction count never reaches zero looks like this";
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    return "the launch needs more registers or shared memory per SM than there are (threads "
           "per block x registers per thread, static + dynamic shared memory)";
  case CUDA_ERROR_INVALID_CLUSTER_SIZE:
    return "the cluster shape is not supported for this kernel (at most 8 CTAs portably, 16 "
           "on Hopper with non-portable sizes; the grid must be a multiple of the cluster)";
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
  case CUDA_ERROR_INVALID_IMAGE:
    return "the compiled image does not fit this GPU or driver";
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    return "the PTX ISA version is newer than this driver's JIT compiler supports: update the "
           "NVIDIA driver";
  default:
    return is_sticky(r) ? "a kernel faulted; the CUDA context is lost: restart the process" : "";
  }
}

hg_status_t hg_cu_fail(const hg_cu_t *cu, CUresult r, const char *fmt, ...) {
  char call[768]; /* a tensor map's full parameter list fits */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(call, sizeof call, fmt, ap);
  va_end(ap);
  char what[256];
  hg_cu_describe(cu, r, what, sizeof what);
  const char *hint = hg_cu_hint(r);
  return hg_error(HG_ERR_CUDA, "%s failed: %s%s%s", call, what, *hint ? ": " : "", hint);
}

/* ---------------------------------------------------------------- entry points */

/* Find one entry point, at the CUDA version of the ABI we declared for it. */
static void *resolve(hg_cu_t *cu, const char *name, int version, const char *exported) {
  void *p = NULL;
  if (cu->getProc2) {
    CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (cu->getProc2(name, &p, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) != CUDA_SUCCESS ||
        q != CU_GET_PROC_ADDRESS_SUCCESS)
      p = NULL;
  } else if (cu->getProc1) {
    if (cu->getProc1(name, &p, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM) != CUDA_SUCCESS)
      p = NULL;
  }
  /* The exported name carries the ABI suffix, so this is the same function. */
  if (!p) p = dlsym(cu->lib, exported);
  return p;
}

#define HG_CU_RESOLVE_(name, ver, sym)                                                             \
  {                                                                                                \
    void *p_ = resolve(cu, #name, ver, sym);                                                       \
    if (!p_) {                                                                                     \
      *missing = sym;                                                                              \
      return false;                                                                                \
    }                                                                                              \
    /* POSIX guarantees that a data pointer from dlsym converts to a function pointer. */          \
    memcpy(&cu->name, &p_, sizeof p_);                                                             \
  }

static bool resolve_boot(hg_cu_t *cu, const char **missing) {
  HG_CU_BOOT_SYMBOLS(HG_CU_RESOLVE_)
  return true;
}

static bool resolve_rest(hg_cu_t *cu, const char **missing) {
  HG_CU_SYMBOLS(HG_CU_RESOLVE_)
  return true;
}

static hg_status_t load_library(hg_cu_t *cu) {
  const char *env = getenv("HOPGEN_LIBCUDA");
  const bool overridden = env && *env;
  const char *path = overridden ? env : "libcuda.so.1";
  snprintf(cu->lib_path, sizeof cu->lib_path, "%s", path);
  dlerror();
  cu->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!cu->lib) {
    const char *e = dlerror();
    return hg_error(HG_ERR_NO_DRIVER,
                    "%s%s could not be loaded (%s): no NVIDIA driver on this machine", path,
                    overridden ? " (from HOPGEN_LIBCUDA)" : "", e ? e : "unknown error");
  }
  void *p = dlsym(cu->lib, "cuGetProcAddress_v2");
  if (p) {
    memcpy(&cu->getProc2, &p, sizeof p);
    cu->proc_api = 2;
  } else if ((p = dlsym(cu->lib, "cuGetProcAddress")) != NULL) {
    memcpy(&cu->getProc1, &p, sizeof p);
    cu->proc_api = 1;
  }
  return hg_ok();
}

/* ---------------------------------------------------------------- open and close */

hg_status_t hg_rt_bind(hg_rt_t *rt) {
  if (!rt) return hg_error(HG_ERR_INVALID, "no runtime: call hg_rt_open first");
  CUresult r = rt->cu.cuCtxSetCurrent(rt->ctx);
  if (r != CUDA_SUCCESS) return hg_cu_fail(&rt->cu, r, "cuCtxSetCurrent");
  return hg_ok();
}

static void rt_destroy(hg_rt_t *rt, bool unload) {
  if (!rt) return;
  if (rt->ctx_retained && rt->cu.cuDevicePrimaryCtxRelease)
    rt->cu.cuDevicePrimaryCtxRelease(rt->dev);
  /* After a successful cuInit the driver keeps its own threads running; unloading the
   * library under them is unsafe, so only a driver that never initialised is closed. */
  if (unload && rt->cu.lib) dlclose(rt->cu.lib);
  pthread_mutex_destroy(&rt->modules_lock);
  free(rt);
}

static hg_status_t get_attr(hg_rt_t *rt, CUdevice_attribute a, const char *what, int *out) {
  CUresult r = rt->cu.cuDeviceGetAttribute(out, a, rt->dev);
  if (r != CUDA_SUCCESS)
    return hg_cu_fail(&rt->cu, r, "cuDeviceGetAttribute(%s, device %d)", what, rt->info.ordinal);
  return hg_ok();
}

static hg_status_t fill_info(hg_rt_t *rt) {
  hg_device_info_t *d = &rt->info;
  struct {
    CUdevice_attribute a;
    const char *name;
    int *out;
  } attrs[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR", &d->cc_major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "COMPUTE_CAPABILITY_MINOR", &d->cc_minor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "MULTIPROCESSOR_COUNT", &d->sm_count},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
       &d->max_smem_per_block_optin},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
       "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR", &d->max_smem_per_sm},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2_CACHE_SIZE", &d->l2_bytes},
      {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, "CLOCK_RATE", &d->clock_khz},
      {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, "MEMORY_CLOCK_RATE", &d->mem_clock_khz},
      {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, "GLOBAL_MEMORY_BUS_WIDTH", &d->mem_bus_bits},
  };
  for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
    HG_TRY(get_attr(rt, attrs[i].a, attrs[i].name, attrs[i].out));
  size_t total = 0;
  CUresult r = rt->cu.cuDeviceTotalMem(&total, rt->dev);
  if (r != CUDA_SUCCESS) return hg_cu_fail(&rt->cu, r, "cuDeviceTotalMem(device %d)", d->ordinal);
  d->total_mem_bytes = (uint64_t)total;
  return hg_ok();
}

static hg_status_t rt_open(hg_rt_t *rt, int ordinal, bool *initialised) {
  hg_cu_t *cu = &rt->cu;
  HG_TRY(load_library(cu));
  const char *missing = NULL;
  if (!resolve_boot(cu, &missing))
    return hg_error(HG_ERR_NO_DRIVER, "%s is not a usable CUDA driver: it lacks %s", cu->lib_path,
                    missing);
  CUresult r = cu->cuInit(0);
  if (r == CUDA_ERROR_NO_DEVICE)
    return hg_error(HG_ERR_NO_DEVICE,
                    "cuInit found no CUDA device (the driver is installed, but no GPU is visible "
                    "to this process; check CUDA_VISIBLE_DEVICES)");
  if (r != CUDA_SUCCESS) {
    char what[256];
    return hg_error(HG_ERR_NO_DRIVER,
                    "cuInit failed with %s: the NVIDIA driver in %s is not usable",
                    hg_cu_describe(cu, r, what, sizeof what), cu->lib_path);
  }
  *initialised = true;
  int version = 0;
  r = cu->cuDriverGetVersion(&version);
  if (r != CUDA_SUCCESS) return hg_cu_fail(cu, r, "cuDriverGetVersion");
  rt->info.driver_version = version;
  if (version < HG_MIN_DRIVER_VERSION)
    return hg_error(HG_ERR_NO_DRIVER,
                    "the NVIDIA driver supports CUDA %d.%d, but hopgen needs CUDA %d.%d or newer "
                    "(tensor maps): update the driver",
                    version / 1000, (version % 1000) / 10, HG_MIN_DRIVER_VERSION / 1000,
                    (HG_MIN_DRIVER_VERSION % 1000) / 10);
  if (!resolve_rest(cu, &missing))
    return hg_error(HG_ERR_NO_DRIVER,
                    "the CUDA driver %s (CUDA %d.%d) lacks the entry point %s that hopgen needs",
                    cu->lib_path, version / 1000, (version % 1000) / 10, missing);

  int count = 0;
  r = cu->cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS) return hg_cu_fail(cu, r, "cuDeviceGetCount");
  if (count == 0)
    return hg_error(HG_ERR_NO_DEVICE, "no CUDA device is visible to this process (check "
                                      "CUDA_VISIBLE_DEVICES)");
  if (ordinal < 0 || ordinal >= count)
    return hg_error(HG_ERR_NO_DEVICE, "device ordinal %d is out of range: %d CUDA device%s visible",
                    ordinal, count, count == 1 ? " is" : "s are");
  rt->info.ordinal = ordinal;
  r = cu->cuDeviceGet(&rt->dev, ordinal);
  if (r != CUDA_SUCCESS) return hg_cu_fail(cu, r, "cuDeviceGet(%d)", ordinal);
  r = cu->cuDeviceGetName(rt->info.name, (int)sizeof rt->info.name, rt->dev);
  if (r != CUDA_SUCCESS) return hg_cu_fail(cu, r, "cuDeviceGetName(device %d)", ordinal);
  rt->info.name[sizeof rt->info.name - 1] = '\0';
  HG_TRY(fill_info(rt));
  /* sm_90a code runs on compute capability 9.0 only: the "a" features are not carried
   * forward to later architectures. */
  if (rt->info.cc_major != 9 || rt->info.cc_minor != 0)
    return hg_error(HG_ERR_NO_DEVICE,
                    "device %d (%s) is sm_%d%d; hopgen's kernels need a Hopper (sm_90) GPU",
                    ordinal, rt->info.name, rt->info.cc_major, rt->info.cc_minor);

  r = cu->cuDevicePrimaryCtxRetain(&rt->ctx, rt->dev);
  if (r != CUDA_SUCCESS) return hg_cu_fail(cu, r, "cuDevicePrimaryCtxRetain(device %d)", ordinal);
  rt->ctx_retained = true;
  return hg_rt_bind(rt);
}

hg_status_t hg_rt_open(int ordinal, hg_rt_t **out) {
  if (!out) return hg_error(HG_ERR_INVALID, "hg_rt_open needs somewhere to put the runtime");
  *out = NULL;
  hg_rt_t *rt = (hg_rt_t *)calloc(1, sizeof *rt);
  if (!rt) return hg_error(HG_ERR_NOMEM, "cannot allocate the runtime");
  pthread_mutex_init(&rt->modules_lock, NULL);
  bool initialised = false;
  hg_status_t s = rt_open(rt, ordinal, &initialised);
  if (!hg_is_ok(&s)) {
    rt_destroy(rt, !initialised);
    return s;
  }
  *out = rt;
  return hg_ok();
}

void hg_rt_close(hg_rt_t *rt) {
  rt_destroy(rt, false);
}

const hg_device_info_t *hg_rt_device(const hg_rt_t *rt) {
  return rt ? &rt->info : NULL;
}

/* ---------------------------------------------------------------- memory */

hg_status_t hg_rt_alloc(hg_rt_t *rt, size_t bytes, hg_devptr_t *out) {
  if (!out) return hg_error(HG_ERR_INVALID, "hg_rt_alloc needs somewhere to put the pointer");
  *out = 0;
  HG_TRY(hg_rt_bind(rt));
  if (bytes == 0) return hg_ok(); /* like malloc(0): a null pointer that hg_rt_free accepts */
  CUdeviceptr p = 0;
  CUresult r = rt->cu.cuMemAlloc(&p, bytes);
  if (r != CUDA_SUCCESS) return hg_cu_fail(&rt->cu, r, "cuMemAlloc(%zu B)", bytes);
  *out = (hg_devptr_t)p;
  return hg_ok();
}

void hg_rt_free(hg_rt_t *rt, hg_devptr_t p) {
  if (!rt || !p) return;
  hg_status_t s = hg_rt_bind(rt);
  if (hg_is_ok(&s)) rt->cu.cuMemFree((CUdeviceptr)p);
}

hg_status_t hg_rt_upload(hg_rt_t *rt, hg_devptr_t dst, const void *src, size_t bytes) {
  HG_TRY(hg_rt_bind(rt));
  if (bytes == 0) return hg_ok();
  CUresult r = rt->cu.cuMemcpyHtoD((CUdeviceptr)dst, src, bytes);
  if (r != CUDA_SUCCESS)
    return hg_cu_fail(&rt->cu, r, "cuMemcpyHtoD(0x%" PRIx64 ", %zu B)", (uint64_t)dst, bytes);
  return hg_ok();
}

hg_status_t hg_rt_download(hg_rt_t *rt, void *dst, hg_devptr_t src, size_t bytes) {
  HG_TRY(hg_rt_bind(rt));
  if (bytes == 0) return hg_ok();
  CUresult r = rt->cu.cuMemcpyDtoH(dst, (CUdeviceptr)src, bytes);
  if (r != CUDA_SUCCESS)
    return hg_cu_fail(&rt->cu, r, "cuMemcpyDtoH(0x%" PRIx64 ", %zu B)", (uint64_t)src, bytes);
  return hg_ok();
}

hg_status_t hg_rt_copy_d2d(hg_rt_t *rt, hg_devptr_t dst, hg_devptr_t src, size_t bytes,
                           hg_stream_t stream) {
  HG_TRY(hg_rt_bind(rt));
  if (bytes == 0) return hg_ok();
  CUresult r =
      rt->cu.cuMemcpyDtoDAsync((CUdeviceptr)dst, (CUdeviceptr)src, bytes, (CUstream)stream);
  if (r != CUDA_SUCCESS)
    return hg_cu_fail(&rt->cu, r, "cuMemcpyDtoDAsync(0x%" PRIx64 " <- 0x%" PRIx64 ", %zu B)",
                      (uint64_t)dst, (uint64_t)src, bytes);
  return hg_ok();
}

hg_status_t hg_rt_memset8(hg_rt_t *rt, hg_devptr_t dst, uint8_t value, size_t bytes,
                          hg_stream_t stream) {
  HG_TRY(hg_rt_bind(rt));
  if (bytes == 0) return hg_ok();
  CUresult r = rt->cu.cuMemsetD8Async((CUdeviceptr)dst, value, bytes, (CUstream)stream);
  if (r != CUDA_SUCCESS)
    return hg_cu_fail(&rt->cu, r, "cuMemsetD8Async(0x%" PRIx64 ", 0x%02x, %zu B)", (uint64_t)dst,
                      value, bytes);
  return hg_ok();
}

/* ---------------------------------------------------------------- streams and events */

hg_status_t hg_rt_stream_create(hg_rt_t *rt, hg_stream_t *out) {
  if (!out) return hg_error(HG_ERR_INVALID, "hg_rt_stream_create needs somewhere to put it");
  *out = NULL;
  HG_TRY(hg_rt_bind(rt));
  CUstream s = NULL;
  /* A blocking stream: hg_rt_upload/download (synchronous copies on the NULL stream) then
   * wait for kernels queued on it, which is what a caller expects. */
  CUresult r = rt->cu.cuStreamCreate(&s, CU_STREAM_DEFAULT);
  if (r != CUDA_SUCCESS) return hg_cu_fail(&rt->cu, r, "cuStreamCreate");
  *out = (hg_stream_t)s;
  return hg_ok();
}

void hg_rt_stream_destroy(hg_rt_t *rt, hg_stream_t s) {
  if (!rt || !s) return;
  hg_status_t st = hg_rt_bind(rt);
  if (hg_is_ok(&st)) rt->cu.cuStreamDestroy((CUstream)s);
}

hg_status_t hg_rt_sync(hg_rt_t *rt, hg_stream_t s) {
  HG_TRY(hg_rt_bind(rt));
  CUresult r = rt->cu.cuStreamSynchronize((CUstream)s);
  if (r != CUDA_SUCCESS)
    return hg_cu_fail(&rt->cu, r, "waiting for the %s stream (cuStreamSynchronize)",
                      s ? "given" : "default");
  return hg_ok();
}

hg_status_t hg_rt_stream_capture_id(hg_rt_t *rt, hg_stream_t s, uint64_t *id) {
  if (!id) return hg_error(HG_ERR_INVALID, "hg_rt_stream_capture_id needs somewhere to put it");
  *id = 0;
  HG_TRY(hg_rt_bind(rt));
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  uint64_t got = 0;
  CUresult r = rt->cu.cuStreamGetCaptureInfo((CUstream)s, &status, &got, NULL, NULL, NULL);
  if (r != CUDA_SUCCESS)
    return hg_cu_fail(&rt->cu, r,
                      "asking whether the %s stream is capturing (cuStreamGetCaptureInfo)",
                      s ? "given" : "default");
  if (status == CU_STREAM_CAPTURE_STATUS_INVALIDATED)
    return hg_error(HG_ERR_CUDA,
                    "the %s stream's CUDA-graph capture was invalidated by an earlier "
                    "error; end the capture (it fails) and capture again",
                    s ? "given" : "default");
  if (status == CU_STREAM_CAPTURE_STATUS_ACTIVE) *id = got;
  return hg_ok();
}

hg_status_t hg_rt_event_create(hg_rt_t *rt, hg_event_t *out) {
  if (!out) return hg_error(HG_ERR_INVALID, "hg_rt_event_create needs somewhere to put it");
  *out = NULL;
  HG_TRY(hg_rt_bind(rt));
  CUevent e = NULL;
  CUresult r = rt->cu.cuEventCreate(&e, CU_EVENT_DEFAULT);
  if (r != CUDA_SUCCESS) return hg_cu_fail(&rt->cu, r, "cuEventCreate");
  *out = (hg_event_t)e;
  return hg_ok();
}

void hg_rt_event_destroy(hg_rt_t *rt, hg_event_t e) {
  if (!rt || !e) return;
  hg_status_t st = hg_rt_bind(rt);
  if (hg_is_ok(&st)) rt->cu.cuEventDestroy((CUevent)e);
}

hg_status_t hg_rt_event_record(hg_rt_t *rt, hg_event_t e, hg_stream_t s) {
  HG_TRY(hg_rt_bind(rt));
  CUresult r = rt->cu.cuEventRecord((CUevent)e, (CUstream)s);
  if (r != CUDA_SUCCESS) return hg_cu_fail(&rt->cu, r, "cuEventRecord");
  return hg_ok();
}

hg_status_t hg_rt_event_elapsed_ms(hg_rt_t *rt, hg_event_t start, hg_event_t end, float *ms) {
  if (!ms) return hg_error(HG_ERR_INVALID, "hg_rt_event_elapsed_ms needs somewhere to put it");
  *ms = 0.0f;
  HG_TRY(hg_rt_bind(rt));
  /* cuEventElapsedTime answers CUDA_ERROR_NOT_READY while the end event is pending: wait for
   * it first, which also surfaces a fault of the timed kernels with its own sentence. */
  CUresult r = rt->cu.cuEventSynchronize((CUevent)end);
  if (r != CUDA_SUCCESS)
    return hg_cu_fail(&rt->cu, r, "waiting for the end event (cuEventSynchronize)");
  r = rt->cu.cuEventElapsedTime(ms, (CUevent)start, (CUevent)end);
  if (r != CUDA_SUCCESS) return hg_cu_fail(&rt->cu, r, "cuEventElapsedTime");
  return hg_ok();
}

/* ---------------------------------------------------------------- time */

double hg_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}
