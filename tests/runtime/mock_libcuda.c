/* A mock CUDA driver for test_mock.c, compiled by that test at run time into a shared
 * library that hopgen loads through HOPGEN_LIBCUDA. It is built against the toolkit's real
 * <cuda.h> and <cudaTypedefs.h>, so every enum value, struct layout and signature hopgen
 * declares for itself (src/runtime/cuda_api.h) is checked against NVIDIA's:
 *   - each entry point is defined with the real prototype (a mismatch does not compile);
 *   - the cuGetProcAddress table pairs each (name, version) with a function whose type is
 *     the real PFN_<name>_v<version> (checked by initialisation, -Werror);
 *   - older and newer ABIs of the same name are traps that record that hopgen received
 *     them;
 *   - attributes, options and launch configurations are read with the real names.
 * "Device memory" is host memory; the three test kernels and hopgen's operand repack run on
 * the host.
 * Not part of the library and not built by CMake (the file name is not test_*.c). */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mock_api.h"

static mock_cuda_state_t state;

mock_cuda_state_t *mock_cuda_state(void) {
  return &state;
}

static struct {
  int devices, cc_major, cc_minor, driver;
  char name[128];
  CUresult sticky; /* a kernel fault: every later call returns it */
} cfg;

static int env_int(const char *name, int fallback) {
  const char *v = getenv(name);
  return v && *v ? atoi(v) : fallback;
}

static void add_wrong(const char *what) {
  size_t n = strlen(state.wrong_abi);
  snprintf(state.wrong_abi + n, sizeof state.wrong_abi - n, "%s%s", n ? " " : "", what);
}

/* ---------------------------------------------------------------- context checks */

static struct CUctx_st { int dummy; } primary;
static __thread CUcontext current;

#define NEED_CTX()                                                                                 \
  do {                                                                                             \
    if (current != &primary) {                                                                     \
      state.wrong_context++;                                                                       \
      return CUDA_ERROR_INVALID_CONTEXT;                                                           \
    }                                                                                              \
    if (cfg.sticky) return cfg.sticky;                                                             \
  } while (0)

/* ---------------------------------------------------------------- memory */

#define MAX_ALLOCS 4096
static struct {
  uint8_t *p;
  size_t n;
} allocs[MAX_ALLOCS];

int mock_cuda_range_ok(uint64_t ptr, size_t bytes) {
  for (int i = 0; i < MAX_ALLOCS; i++) {
    uint64_t a = (uint64_t)(uintptr_t)allocs[i].p;
    if (allocs[i].p && ptr >= a && ptr + bytes <= a + allocs[i].n && ptr + bytes >= ptr) return 1;
  }
  return 0;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize) {
  NEED_CTX();
  if (bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
  if (bytesize > ((size_t)1 << 40)) return CUDA_ERROR_OUT_OF_MEMORY;
  for (int i = 0; i < MAX_ALLOCS; i++) {
    if (allocs[i].p) continue;
    size_t n = (bytesize + 255) & ~(size_t)255;
    allocs[i].p = aligned_alloc(256, n);
    if (!allocs[i].p) return CUDA_ERROR_OUT_OF_MEMORY;
    memset(allocs[i].p, 0xCD, n);
    allocs[i].n = bytesize;
    *dptr = (CUdeviceptr)(uintptr_t)allocs[i].p;
    state.live_allocations++;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuMemFree(CUdeviceptr dptr) {
  NEED_CTX();
  for (int i = 0; i < MAX_ALLOCS; i++) {
    if (allocs[i].p && (CUdeviceptr)(uintptr_t)allocs[i].p == dptr) {
      free(allocs[i].p);
      allocs[i].p = NULL;
      state.live_allocations--;
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t n) {
  NEED_CTX();
  if (!mock_cuda_range_ok(dst, n)) return CUDA_ERROR_INVALID_VALUE;
  memcpy((void *)(uintptr_t)dst, src, n);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n) {
  NEED_CTX();
  if (!mock_cuda_range_ok(src, n)) return CUDA_ERROR_INVALID_VALUE;
  memcpy(dst, (const void *)(uintptr_t)src, n);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  (void)s;
  NEED_CTX();
  if (!mock_cuda_range_ok(dst, n) || !mock_cuda_range_ok(src, n)) return CUDA_ERROR_INVALID_VALUE;
  memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char uc, size_t n, CUstream s) {
  (void)s;
  NEED_CTX();
  if (!mock_cuda_range_ok(dst, n)) return CUDA_ERROR_INVALID_VALUE;
  memset((void *)(uintptr_t)dst, uc, n);
  return CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- init, devices, contexts */

CUresult CUDAAPI cuInit(unsigned int flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  cfg.devices = env_int("MOCK_CUDA_DEVICES", 1);
  cfg.cc_major = env_int("MOCK_CUDA_CC", 90) / 10;
  cfg.cc_minor = env_int("MOCK_CUDA_CC", 90) % 10;
  cfg.driver = env_int("MOCK_CUDA_DRIVER", 13000);
  const char *name = getenv("MOCK_CUDA_NAME");
  snprintf(cfg.name, sizeof cfg.name, "%s", name && *name ? name : "NVIDIA H100 80GB HBM3");
  cfg.sticky = CUDA_SUCCESS;
  return (CUresult)env_int("MOCK_CUDA_INIT", 0);
}

CUresult CUDAAPI cuDriverGetVersion(int *v) {
  *v = cfg.driver;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count) {
  *count = cfg.devices;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *dev, int ordinal) {
  if (ordinal < 0 || ordinal >= cfg.devices) return CUDA_ERROR_INVALID_DEVICE;
  *dev = ordinal;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev) {
  if (dev < 0 || dev >= cfg.devices || len < 1) return CUDA_ERROR_INVALID_VALUE;
  snprintf(name, (size_t)len, "%s", cfg.name);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev) {
  if (dev < 0 || dev >= cfg.devices) return CUDA_ERROR_INVALID_DEVICE;
  switch (attrib) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *pi = cfg.cc_major;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *pi = cfg.cc_minor;
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *pi = 132;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *pi = 232448;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
    *pi = 233472;
    break;
  case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
    *pi = 52428800;
    break;
  case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
    *pi = 1980000;
    break;
  case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
    *pi = 2619000;
    break;
  case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
    *pi = 5120;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *pi = 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH:
    *pi = 1;
    break;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice dev) {
  if (dev < 0 || dev >= cfg.devices) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = (size_t)80 << 30;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) {
  if (dev < 0 || dev >= cfg.devices) return CUDA_ERROR_INVALID_DEVICE;
  *pctx = &primary;
  state.retained++;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) {
  if (dev < 0 || dev >= cfg.devices) return CUDA_ERROR_INVALID_DEVICE;
  state.retained--;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
  current = ctx;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void) {
  NEED_CTX();
  return CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- streams and events */

struct CUstream_st {
  int magic;
};
struct CUevent_st {
  double t;
  int recorded;
};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

CUresult CUDAAPI cuStreamCreate(CUstream *s, unsigned int flags) {
  NEED_CTX();
  if (flags > 1) return CUDA_ERROR_INVALID_VALUE;
  *s = calloc(1, sizeof **s);
  (*s)->magic = 0x5354;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamDestroy(CUstream s) {
  if (!s || s->magic != 0x5354) return CUDA_ERROR_INVALID_HANDLE;
  s->magic = 0;
  free(s);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream s) {
  (void)s;
  NEED_CTX();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream s, CUstreamCaptureStatus *status,
                                           cuuint64_t *id, CUgraph *graph, const CUgraphNode **deps,
                                           size_t *num_deps) {
  (void)s;
  NEED_CTX();
  if (!status) return CUDA_ERROR_INVALID_VALUE;
  *status = (CUstreamCaptureStatus)state.capture_status;
  if (id && state.capture_status != CU_STREAM_CAPTURE_STATUS_NONE) *id = state.capture_id;
  if (graph) *graph = NULL;
  if (deps) *deps = NULL;
  if (num_deps) *num_deps = 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventCreate(CUevent *e, unsigned int flags) {
  NEED_CTX();
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE; /* timing must stay enabled */
  *e = calloc(1, sizeof **e);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventDestroy(CUevent e) {
  free(e);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent e, CUstream s) {
  (void)s;
  NEED_CTX();
  e->t = now_ms();
  e->recorded = 1;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventSynchronize(CUevent e) {
  (void)e;
  NEED_CTX();
  return CUDA_SUCCESS;
}

/* The legacy (CUDA 2.0) ABI, which hopgen declares; the header maps the name to _v2. */
#undef cuEventElapsedTime
CUresult CUDAAPI cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
  NEED_CTX();
  if (!start->recorded || !end->recorded) return CUDA_ERROR_INVALID_HANDLE;
  *ms = (float)(end->t - start->t);
  return CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- modules and the JIT */

#define IMAGE_MAGIC "MOCKCUBIN\n"

struct CUlinkState_st {
  char *err, *info;
  unsigned err_size, info_size;
  char *image;
};

CUresult CUDAAPI cuLinkCreate(unsigned int n, CUjit_option *options, void **values,
                              CUlinkState *out) {
  NEED_CTX();
  struct CUlinkState_st *l = calloc(1, sizeof *l);
  for (unsigned i = 0; i < n; i++) {
    switch (options[i]) {
    case CU_JIT_ERROR_LOG_BUFFER:
      l->err = (char *)values[i];
      break;
    case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
      l->err_size = (unsigned)(uintptr_t)values[i];
      break;
    case CU_JIT_INFO_LOG_BUFFER:
      l->info = (char *)values[i];
      break;
    case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
      l->info_size = (unsigned)(uintptr_t)values[i];
      break;
    default:
      free(l);
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  if (!l->err || !l->info || l->err_size < 64 || l->info_size < 64) state.link_logs_missing++;
  *out = l;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLinkAddData(CUlinkState l, CUjitInputType type, void *data, size_t size,
                               const char *name, unsigned int n, CUjit_option *o, void **v) {
  (void)name;
  (void)o;
  (void)v;
  NEED_CTX();
  if (type != CU_JIT_INPUT_PTX || n != 0 || size == 0) return CUDA_ERROR_INVALID_VALUE;
  const char *text = (const char *)data;
  if (text[size - 1] != '\0' || strlen(text) != size - 1) state.link_size_without_nul++;
  if (strstr(text, "bogus")) {
    if (l->err)
      snprintf(l->err, l->err_size,
               "ptxas application ptx input, line 7; error   : Not a name of any known "
               "instruction: 'bogus'\nptxas fatal   : Ptx assembly aborted due to errors\n");
    if (l->info) snprintf(l->info, l->info_size, "ptxas info    : 0 bytes gmem\n");
    return CUDA_ERROR_INVALID_PTX;
  }
  free(l->image);
  l->image = malloc(strlen(IMAGE_MAGIC) + strlen(text) + 1);
  strcpy(l->image, IMAGE_MAGIC);
  strcat(l->image, text);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLinkComplete(CUlinkState l, void **cubin, size_t *size) {
  NEED_CTX();
  if (!l->image) return CUDA_ERROR_INVALID_VALUE;
  *cubin = l->image;
  *size = strlen(l->image) + 1;
  state.compiles++;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLinkDestroy(CUlinkState l) {
  free(l->image);
  free(l);
  return CUDA_SUCCESS;
}

#define MOCK_MAX_PARAMS 48
struct CUfunc_st {
  char name[128];
  int dyn_limit;
  int nonportable;
  /* the entry's parameters as its PTX declares them: names (hopgen's "hgp_" prefix
   * dropped) and kinds ('q' 8 bytes, 'd' 4 bytes, 'f' f32, 'm' a 128-byte tensor map) */
  int nparams;
  char param_name[MOCK_MAX_PARAMS][40];
  char param_kind[MOCK_MAX_PARAMS];
  struct CUfunc_st *next;
};

struct CUmod_st {
  char *text;
  struct CUfunc_st *funcs; /* freed with the module, as the driver does */
};

CUresult CUDAAPI cuModuleLoadData(CUmodule *m, const void *image) {
  NEED_CTX();
  const char *t = (const char *)image;
  if (strncmp(t, IMAGE_MAGIC, strlen(IMAGE_MAGIC)) != 0) return CUDA_ERROR_INVALID_IMAGE;
  *m = calloc(1, sizeof **m);
  (*m)->text = strdup(t);
  state.loads++;
  return CUDA_SUCCESS;
}

/* PTX compiled and loaded in one step: the logs as cuLinkCreate takes them, "bogus" fails. */
CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned int n,
                                    CUjit_option *options, void **values) {
  NEED_CTX();
  char *err = NULL;
  unsigned err_size = 0;
  for (unsigned i = 0; i < n; i++) {
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
      err = (char *)values[i];
    else if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
      err_size = (unsigned)(uintptr_t)values[i];
    else if (options[i] != CU_JIT_INFO_LOG_BUFFER &&
             options[i] != CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES)
      return CUDA_ERROR_INVALID_VALUE;
  }
  if (!err || err_size < 64) state.link_logs_missing++;
  const char *text = (const char *)image;
  if (strstr(text, "bogus")) {
    if (err) snprintf(err, err_size, "ptxas fatal   : Ptx assembly aborted due to errors\n");
    return CUDA_ERROR_INVALID_PTX;
  }
  *m = calloc(1, sizeof **m);
  (*m)->text = malloc(strlen(IMAGE_MAGIC) + strlen(text) + 1);
  strcpy((*m)->text, IMAGE_MAGIC);
  strcat((*m)->text, text);
  state.compiles++;
  state.loads++;
  state.whole_program_loads++;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleUnload(CUmodule m) {
  while (m->funcs) {
    struct CUfunc_st *next = m->funcs->next;
    free(m->funcs);
    m->funcs = next;
  }
  free(m->text);
  free(m);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  NEED_CTX();
  char pat[160];
  snprintf(pat, sizeof pat, ".entry %s(", name);
  if (!strstr(m->text, pat)) return CUDA_ERROR_NOT_FOUND;
  *f = calloc(1, sizeof **f);
  snprintf((*f)->name, sizeof(*f)->name, "%s", name);
  /* ".param .u64 hgp_x", ".param .u32 hgp_x", ".param .f32 hgp_x" or
   * ".param .align 64 .b8 hgp_x[128]", comma-separated up to the closing parenthesis */
  const char *at = strstr(m->text, pat) + strlen(pat), *end = strchr(at, ')');
  while (end && (*f)->nparams < MOCK_MAX_PARAMS) {
    const char *q = strstr(at, ".param");
    if (!q || q > end) break;
    q += strlen(".param");
    while (*q == ' ') q++;
    char kind = 'q';
    if (!strncmp(q, ".u32", 4) || !strncmp(q, ".s32", 4) || !strncmp(q, ".b32", 4)) kind = 'd';
    if (!strncmp(q, ".f32", 4)) kind = 'f';
    if (!strncmp(q, ".align", 6)) kind = 'm';
    const char *nm = strstr(q, "hgp_");
    const char *stop = q + strcspn(q, ",)");
    if (nm && nm < stop) {
      nm += 4;
      const size_t len = strcspn(nm, ",)[ \n\t");
      const int i = (*f)->nparams++;
      snprintf((*f)->param_name[i], sizeof(*f)->param_name[i], "%.*s", (int)len, nm);
      (*f)->param_kind[i] = kind;
    }
    at = stop;
  }
  (*f)->dyn_limit = 48 * 1024;
  (*f)->next = m->funcs;
  m->funcs = *f;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute a, CUfunction f) {
  NEED_CTX();
  switch (a) {
  case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
    *pi = 0;
    break;
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *pi = 1024;
    break;
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    *pi = f->dyn_limit;
    break;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int value) {
  NEED_CTX();
  switch (a) {
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    if (value < 0 || value > 232448) return CUDA_ERROR_INVALID_VALUE;
    f->dyn_limit = value;
    state.dyn_smem_value = value;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
    if (value != 0 && value != 1) return CUDA_ERROR_INVALID_VALUE;
    f->nonportable = value;
    state.nonportable_set = value;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

/* ---------------------------------------------------------------- launch */

/* The cluster dimension attribute, read with the real CUlaunchConfig layout. */
static CUresult cluster_of(const CUlaunchConfig *c, unsigned dims[3], bool *given) {
  dims[0] = dims[1] = dims[2] = 1;
  *given = false;
  for (unsigned i = 0; i < c->numAttrs; i++) {
    const CUlaunchAttribute *a = &c->attrs[i];
    if (a->id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      dims[0] = a->value.clusterDim.x;
      dims[1] = a->value.clusterDim.y;
      dims[2] = a->value.clusterDim.z;
      *given = true;
    } else if (a->id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION) {
      if (a->value.programmaticStreamSerializationAllowed != 1) return CUDA_ERROR_INVALID_VALUE;
    } else if (a->id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE) {
      if (a->value.cooperative != 1) return CUDA_ERROR_INVALID_VALUE;
    } else if (a->id != CU_LAUNCH_ATTRIBUTE_IGNORE) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  if (!dims[0] || !dims[1] || !dims[2]) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  return CUDA_SUCCESS;
}

static CUresult check_config(const CUlaunchConfig *c, CUfunction f, unsigned cl[3]) {
  bool given;
  CUresult r = cluster_of(c, cl, &given);
  if (r) return r;
  const unsigned n = cl[0] * cl[1] * cl[2];
  if (c->gridDimX % cl[0] || c->gridDimY % cl[1] || c->gridDimZ % cl[2])
    return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  if (n > 16 || (n > 8 && !f->nonportable)) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  if (c->sharedMemBytes > (unsigned)f->dyn_limit) return CUDA_ERROR_INVALID_VALUE;
  if ((uint64_t)c->blockDimX * c->blockDimY * c->blockDimZ > 1024) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuOccupancyMaxActiveClusters(int *num, CUfunction f, const CUlaunchConfig *c) {
  NEED_CTX();
  state.occupancy_calls++;
  unsigned cl[3];
  bool given;
  CUresult r = cluster_of(c, cl, &given);
  if (r) return r;
  if (!given) return CUDA_ERROR_INVALID_CLUSTER_SIZE; /* documented: must be specified */
  r = check_config(c, f, cl);
  if (r) return r;
  const int n = (int)(cl[0] * cl[1] * cl[2]);
  const int forced = env_int("MOCK_CUDA_MAX_CLUSTERS", -1);
  *num = forced >= 0 ? forced : 132 / n;
  return CUDA_SUCCESS;
}

/* Parameter `name` of a launch, read at the size f's PTX declares (found: whether it has one). */
static long long mock_param(CUfunction f, void **params, const char *name, bool *found) {
  for (int i = 0; i < f->nparams; i++)
    if (!strcmp(f->param_name[i], name)) {
      if (f->param_kind[i] == 'q') return *(const long long *)params[i];
      if (f->param_kind[i] == 'd') return *(const int *)params[i];
    }
  *found = false;
  return 0;
}

/* hopgen's operand repack (hg_repack_b<bits>, and the pair kernel hg_repack2_b<bits> over
 * CTAs [0, ctas_a) for A and the rest for B), run on the host from its parameters by name:
 * the rows its CTAs reach (256 >> lanes_log2 a CTA) copied, the padding zeroed. A parameter
 * the PTX lacks or memory outside an allocation is an illegal address. */
static void mock_repack(const CUlaunchConfig *c, CUfunction f, void **params, int esize,
                        bool pair) {
  bool ok = true;
  const long long batch = mock_param(f, params, "batch", &ok);
  const long long ctas_a = pair ? mock_param(f, params, "ctas_a", &ok) : (long long)c->gridDimX;
  for (int op = 0; op < (pair ? 2 : 1) && ok; op++) {
    const char *sfx = !pair ? "" : op ? "_b" : "_a";
    long long v[9];
    static const char *const names[9] = {"dst",
                                         "src",
                                         "rows",
                                         "cols",
                                         "ld_dst",
                                         "ld_src",
                                         "batch_stride_dst",
                                         "batch_stride_src",
                                         "lanes_log2"};
    for (int i = 0; i < 9; i++) {
      char n[48];
      snprintf(n, sizeof n, "%s%s", names[i], sfx);
      v[i] = mock_param(f, params, n, &ok);
    }
    if (!ok) break;
    const long long ctas = op ? (long long)c->gridDimX - ctas_a : ctas_a;
    long long rows = ctas * (256 >> v[8]);
    rows = rows < v[2] ? rows : v[2];
    for (long long z = 0; z < batch && ok; z++)
      for (long long r = 0; r < rows && ok; r++) {
        const uint64_t d = (uint64_t)(v[0] + (z * v[6] + r * v[4]) * esize);
        const uint64_t s = (uint64_t)(v[1] + (z * v[7] + r * v[5]) * esize);
        const size_t n = (size_t)(v[3] * esize), pad = (size_t)((v[4] - v[3]) * esize);
        ok = mock_cuda_range_ok(d, n + pad) && (n == 0 || mock_cuda_range_ok(s, n));
        if (!ok) break;
        memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
        memset((void *)(uintptr_t)(d + n), 0, pad);
      }
  }
  if (!ok) cfg.sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params,
                                  void **extra) {
  NEED_CTX();
  if (extra) return CUDA_ERROR_INVALID_VALUE;
  unsigned cl[3];
  CUresult r = check_config(c, f, cl);
  if (r) return r;
  state.launches++;
  state.last_grid[0] = c->gridDimX;
  state.last_grid[1] = c->gridDimY;
  state.last_grid[2] = c->gridDimZ;
  state.last_block[0] = c->blockDimX;
  state.last_block[1] = c->blockDimY;
  state.last_block[2] = c->blockDimZ;
  memcpy(state.last_cluster, cl, sizeof cl);
  state.last_smem = c->sharedMemBytes;
  state.last_num_attrs = (int)c->numAttrs;
  state.last_pdl = state.last_cooperative = false;
  for (unsigned i = 0; i < c->numAttrs; i++) {
    state.last_pdl =
        state.last_pdl || c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    state.last_cooperative =
        state.last_cooperative || c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
  }
  state.last_stream = c->hStream;
  {
    const size_t used = strlen(state.launch_log), need = strlen(f->name) + 1;
    if (used + need < sizeof state.launch_log)
      snprintf(state.launch_log + used, sizeof state.launch_log - used, "%s ", f->name);
  }
  {
    /* "name<<<x,y,z>>>(p=v,...) " with each parameter read at the size its PTX declares */
    char one[2048];
    int n = snprintf(one, sizeof one, "%s<<<%u,%u,%u>>>(", f->name, c->gridDimX, c->gridDimY,
                     c->gridDimZ);
    for (int i = 0; i < f->nparams && n > 0 && (size_t)n < sizeof one; i++) {
      const char *sep = i ? "," : "";
      const char *nm = f->param_name[i];
      switch (f->param_kind[i]) {
      case 'q':
        n += snprintf(one + n, sizeof one - (size_t)n, "%s%s=%lld", sep, nm,
                      *(const long long *)params[i]);
        break;
      case 'd':
        n += snprintf(one + n, sizeof one - (size_t)n, "%s%s=%d", sep, nm, *(const int *)params[i]);
        break;
      case 'f':
        n += snprintf(one + n, sizeof one - (size_t)n, "%s%s=%g", sep, nm,
                      (double)*(const float *)params[i]);
        break;
      default:
        n += snprintf(one + n, sizeof one - (size_t)n, "%s%s=map", sep, nm);
      }
    }
    const size_t used = strlen(state.param_log);
    if (n > 0 && (size_t)n + 2 < sizeof one && used + (size_t)n + 2 < sizeof state.param_log)
      snprintf(state.param_log + used, sizeof state.param_log - used, "%s) ", one);
  }
  /* The suite's kernels, run on the host with the same meaning as their PTX. */
  if (!strcmp(f->name, "hg_test_fill")) {
    const CUdeviceptr out = *(const CUdeviceptr *)params[0];
    const uint32_t n = *(const uint32_t *)params[1];
    const uint64_t threads = (uint64_t)c->gridDimX * c->blockDimX;
    const uint32_t todo = threads < n ? (uint32_t)threads : n;
    if (!mock_cuda_range_ok(out, (size_t)todo * 4)) {
      cfg.sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
      return CUDA_SUCCESS;
    }
    for (uint32_t i = 0; i < todo; i++) ((uint32_t *)(uintptr_t)out)[i] = i * 3 + 1;
  } else if (!strcmp(f->name, "hg_test_cluster_rank")) {
    const CUdeviceptr out = *(const CUdeviceptr *)params[0];
    if (!mock_cuda_range_ok(out, (size_t)c->gridDimX * 4)) {
      cfg.sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
      return CUDA_SUCCESS;
    }
    const unsigned n = cl[0] * cl[1] * cl[2];
    for (unsigned b = 0; b < c->gridDimX; b++) ((uint32_t *)(uintptr_t)out)[b] = 16 * n + b % cl[0];
  } else if (!strcmp(f->name, "hg_test_trap")) {
    cfg.sticky = CUDA_ERROR_ILLEGAL_INSTRUCTION; /* reported by the next synchronising call */
  } else if (!strcmp(f->name, "hg_fill_random_u32")) {
    /* distinct bytes everywhere (not hopgen's generator: a test only needs them to differ) */
    bool ok = true;
    const long long ptr = mock_param(f, params, "ptr", &ok),
                    n = mock_param(f, params, "count", &ok);
    const long long seed = mock_param(f, params, "seed", &ok);
    if (!ok || !mock_cuda_range_ok((uint64_t)ptr, (size_t)n * 4)) {
      cfg.sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
      return CUDA_SUCCESS;
    }
    for (long long i = 0; i < n; i++)
      ((uint32_t *)(uintptr_t)ptr)[i] = (uint32_t)(((uint64_t)i + (uint64_t)seed) * 0x9E3779B1u);
  } else if (!strncmp(f->name, "hg_repack_b", 11) || !strncmp(f->name, "hg_repack2_b", 12)) {
    const bool pair = f->name[9] == '2';
    mock_repack(c, f, params, atoi(f->name + (pair ? 12 : 11)) / 8, pair);
  }
  return CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- tensor maps */

CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap *tm, CUtensorMapDataType type, cuuint32_t rank,
                                        void *addr, const cuuint64_t *dim,
                                        const cuuint64_t *strides, const cuuint32_t *box,
                                        const cuuint32_t *estr, CUtensorMapInterleave il,
                                        CUtensorMapSwizzle sw, CUtensorMapL2promotion l2,
                                        CUtensorMapFloatOOBfill oob) {
  NEED_CTX();
  state.encode_l2[state.encodes % 32] = (int)l2;
  state.encodes++;
  if ((uintptr_t)tm % 64 != 0) return CUDA_ERROR_INVALID_VALUE;
  if (rank < 1 || rank > 5 || (uintptr_t)addr % 16 != 0) return CUDA_ERROR_INVALID_VALUE;
  if (dim[0] == 12345) return CUDA_ERROR_INVALID_VALUE; /* the suite's "driver says no" */
  memset(tm, 0, sizeof *tm);
  tm->opaque[0] = (uint64_t)(uintptr_t)addr;
  tm->opaque[1] = (uint64_t)type;
  tm->opaque[2] = rank;
  tm->opaque[3] = (uint64_t)il;
  tm->opaque[4] = (uint64_t)sw;
  tm->opaque[5] = (uint64_t)l2;
  tm->opaque[6] = (uint64_t)oob;
  tm->opaque[7] = dim[0];
  tm->opaque[8] = dim[rank - 1];
  tm->opaque[9] = rank > 1 ? strides[0] : 0;
  tm->opaque[10] = rank > 1 ? strides[rank - 2] : 0;
  tm->opaque[11] = box[0];
  tm->opaque[12] = box[rank - 1];
  tm->opaque[13] = estr[rank - 1];
  tm->opaque[15] = 0x4D4F434B;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuTensorMapReplaceAddress(CUtensorMap *tm, void *addr) {
  NEED_CTX();
  state.replaces++;
  if ((uintptr_t)tm % 64 != 0 || (uintptr_t)addr % 16 != 0 || tm->opaque[15] != 0x4D4F434B)
    return CUDA_ERROR_INVALID_VALUE;
  tm->opaque[0] = (uint64_t)(uintptr_t)addr;
  return CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- errors */

static const struct {
  CUresult r;
  const char *name, *text;
} errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_ILLEGAL_INSTRUCTION, "CUDA_ERROR_ILLEGAL_INSTRUCTION",
     "an illegal instruction was encountered"},
    {CUDA_ERROR_INVALID_CLUSTER_SIZE, "CUDA_ERROR_INVALID_CLUSTER_SIZE", "invalid cluster size"},
    {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "system has unsupported display driver / cuda driver combination"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

CUresult CUDAAPI cuGetErrorName(CUresult r, const char **s) {
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    if (errors[i].r == r) {
      *s = errors[i].name;
      return CUDA_SUCCESS;
    }
  *s = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGetErrorString(CUresult r, const char **s) {
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    if (errors[i].r == r) {
      *s = errors[i].text;
      return CUDA_SUCCESS;
    }
  *s = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

/* ---------------------------------------------------------------- cuGetProcAddress */

/* Other ABIs of the same names: handing one of these to hopgen is a bug in its version
 * table. They record the fact; their arguments are never looked at. */
#define TRAP(name, ver)                                                                            \
  static CUresult trap_##name##_##ver(void) {                                                      \
    add_wrong(#name "@" #ver "(called)");                                                          \
    return CUDA_ERROR_UNKNOWN;                                                                     \
  }
TRAP(cuMemAlloc, 2000)
TRAP(cuMemFree, 2000)
TRAP(cuMemcpyHtoD, 2000)
TRAP(cuMemcpyDtoH, 2000)
TRAP(cuMemcpyDtoDAsync, 3000)
TRAP(cuDeviceTotalMem, 2000)
TRAP(cuDevicePrimaryCtxRelease, 7000)
TRAP(cuStreamDestroy, 2000)
TRAP(cuEventDestroy, 2000)
TRAP(cuLinkCreate, 5050)
TRAP(cuLinkAddData, 5050)
TRAP(cuCtxSynchronize, 13000)
TRAP(cuEventElapsedTime, 12080)
TRAP(cuStreamGetCaptureInfo, 10010)
TRAP(cuStreamGetCaptureInfo, 12030)

/* Each good entry is type-checked against the toolkit's PFN typedef of that version. */
#define GOOD(name, ver, fn) static PFN_##name##_v##ver const chk_##name##_##ver = fn;
#define GOOD_ENTRY(name, ver, fn) {#name, ver, (void *)chk_##name##_##ver, 0},
#define TRAP_ENTRY(name, ver) {#name, ver, (void *)trap_##name##_##ver, 1},

#define GOOD_LIST(X)                                                                               \
  X(cuGetErrorString, 6000, cuGetErrorString)                                                      \
  X(cuGetErrorName, 6000, cuGetErrorName)                                                          \
  X(cuInit, 2000, cuInit)                                                                          \
  X(cuDriverGetVersion, 2020, cuDriverGetVersion)                                                  \
  X(cuDeviceGetCount, 2000, cuDeviceGetCount)                                                      \
  X(cuDeviceGet, 2000, cuDeviceGet)                                                                \
  X(cuDeviceGetName, 2000, cuDeviceGetName)                                                        \
  X(cuDeviceGetAttribute, 2000, cuDeviceGetAttribute)                                              \
  X(cuDeviceTotalMem, 3020, cuDeviceTotalMem_v2)                                                   \
  X(cuDevicePrimaryCtxRetain, 7000, cuDevicePrimaryCtxRetain)                                      \
  X(cuDevicePrimaryCtxRelease, 11000, cuDevicePrimaryCtxRelease_v2)                                \
  X(cuCtxSetCurrent, 4000, cuCtxSetCurrent)                                                        \
  X(cuCtxSynchronize, 2000, cuCtxSynchronize)                                                      \
  X(cuMemAlloc, 3020, cuMemAlloc_v2)                                                               \
  X(cuMemFree, 3020, cuMemFree_v2)                                                                 \
  X(cuMemcpyHtoD, 3020, cuMemcpyHtoD_v2)                                                           \
  X(cuMemcpyDtoH, 3020, cuMemcpyDtoH_v2)                                                           \
  X(cuMemcpyDtoDAsync, 3020, cuMemcpyDtoDAsync_v2)                                                 \
  X(cuMemsetD8Async, 3020, cuMemsetD8Async)                                                        \
  X(cuStreamCreate, 2000, cuStreamCreate)                                                          \
  X(cuStreamDestroy, 4000, cuStreamDestroy_v2)                                                     \
  X(cuStreamSynchronize, 2000, cuStreamSynchronize)                                                \
  X(cuStreamGetCaptureInfo, 11030, cuStreamGetCaptureInfo_v2)                                      \
  X(cuEventCreate, 2000, cuEventCreate)                                                            \
  X(cuEventDestroy, 4000, cuEventDestroy_v2)                                                       \
  X(cuEventRecord, 2000, cuEventRecord)                                                            \
  X(cuEventSynchronize, 2000, cuEventSynchronize)                                                  \
  X(cuEventElapsedTime, 2000, cuEventElapsedTime)                                                  \
  X(cuModuleLoadData, 2000, cuModuleLoadData)                                                      \
  X(cuModuleLoadDataEx, 2010, cuModuleLoadDataEx)                                                  \
  X(cuModuleUnload, 2000, cuModuleUnload)                                                          \
  X(cuModuleGetFunction, 2000, cuModuleGetFunction)                                                \
  X(cuLinkCreate, 6050, cuLinkCreate_v2)                                                           \
  X(cuLinkAddData, 6050, cuLinkAddData_v2)                                                         \
  X(cuLinkComplete, 5050, cuLinkComplete)                                                          \
  X(cuLinkDestroy, 5050, cuLinkDestroy)                                                            \
  X(cuFuncGetAttribute, 2020, cuFuncGetAttribute)                                                  \
  X(cuFuncSetAttribute, 9000, cuFuncSetAttribute)                                                  \
  X(cuLaunchKernelEx, 11060, cuLaunchKernelEx)                                                     \
  X(cuOccupancyMaxActiveClusters, 11070, cuOccupancyMaxActiveClusters)                             \
  X(cuTensorMapEncodeTiled, 12000, cuTensorMapEncodeTiled)                                         \
  X(cuTensorMapReplaceAddress, 12000, cuTensorMapReplaceAddress)

#define TRAP_LIST(X)                                                                               \
  X(cuMemAlloc, 2000)                                                                              \
  X(cuMemFree, 2000)                                                                               \
  X(cuMemcpyHtoD, 2000)                                                                            \
  X(cuMemcpyDtoH, 2000)                                                                            \
  X(cuMemcpyDtoDAsync, 3000)                                                                       \
  X(cuDeviceTotalMem, 2000)                                                                        \
  X(cuDevicePrimaryCtxRelease, 7000)                                                               \
  X(cuStreamDestroy, 2000)                                                                         \
  X(cuEventDestroy, 2000)                                                                          \
  X(cuLinkCreate, 5050)                                                                            \
  X(cuLinkAddData, 5050)                                                                           \
  X(cuCtxSynchronize, 13000)                                                                       \
  X(cuEventElapsedTime, 12080)                                                                     \
  X(cuStreamGetCaptureInfo, 10010)                                                                 \
  X(cuStreamGetCaptureInfo, 12030)

GOOD_LIST(GOOD)

static const struct entry {
  const char *name;
  int version;
  void *fn;
  int trap;
} table[] = {GOOD_LIST(GOOD_ENTRY) TRAP_LIST(TRAP_ENTRY)};

#undef cuGetProcAddress
CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                     CUdriverProcAddressQueryResult *status) {
  state.proc_lookups++;
  if (!(flags & CU_GET_PROC_ADDRESS_LEGACY_STREAM)) state.flags_not_legacy++;
  *pfn = NULL;
  if (env_int("MOCK_CUDA_PROC", 2) == 0) return CUDA_ERROR_NOT_SUPPORTED; /* force dlsym */
  /* Documented: a version above the driver's is CUDA_ERROR_INVALID_VALUE (cfg.driver is
   * only known after cuInit; before it the boot symbols are asked for at <= 6000). */
  if (cfg.driver && version > cfg.driver) return CUDA_ERROR_INVALID_VALUE;
  const struct entry *best = NULL;
  bool known = false;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    if (strcmp(table[i].name, symbol) != 0) continue;
    known = true;
    if (table[i].version <= version && (!best || table[i].version > best->version))
      best = &table[i];
  }
  if (status)
    *status = best    ? CU_GET_PROC_ADDRESS_SUCCESS
              : known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                      : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (!best) return CUDA_SUCCESS;
  if (best->trap) {
    char what[96];
    snprintf(what, sizeof what, "%s@%d", symbol, best->version);
    add_wrong(what);
  }
  *pfn = best->fn;
  return CUDA_SUCCESS;
}
