/* Internals shared by the runtime's files (driver.c, jit.c, launch.c, blas.c): the table
 * of driver entry points, the runtime/module/function structs and the error helpers. */
#ifndef HOPGEN_RUNTIME_RT_INTERNAL_H
#define HOPGEN_RUNTIME_RT_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "hopgen/runtime.h"
#include "runtime/cache.h"
#include "runtime/cuda_api.h"

/* Every entry point: X(name, CUDA version of its ABI, exported symbol of that ABI).
 * cuGetProcAddress is asked for `name` at exactly that version (the driver then returns
 * the ABI introduced at that version, never a later _v2/_v3 with another signature); a
 * driver without cuGetProcAddress, or one that does not know the symbol, is searched with
 * dlsym for the exported name, which is spelt with its ABI suffix and so is the same
 * function. The boot set is resolved before the driver version is known. */
#define HG_CU_BOOT_SYMBOLS(X)                                                                      \
  X(cuGetErrorString, 6000, "cuGetErrorString")                                                    \
  X(cuGetErrorName, 6000, "cuGetErrorName")                                                        \
  X(cuInit, 2000, "cuInit")                                                                        \
  X(cuDriverGetVersion, 2020, "cuDriverGetVersion")

#define HG_CU_SYMBOLS(X)                                                                           \
  X(cuDeviceGetCount, 2000, "cuDeviceGetCount")                                                    \
  X(cuDeviceGet, 2000, "cuDeviceGet")                                                              \
  X(cuDeviceGetName, 2000, "cuDeviceGetName")                                                      \
  X(cuDeviceGetAttribute, 2000, "cuDeviceGetAttribute")                                            \
  X(cuDeviceTotalMem, 3020, "cuDeviceTotalMem_v2")                                                 \
  X(cuDevicePrimaryCtxRetain, 7000, "cuDevicePrimaryCtxRetain")                                    \
  X(cuDevicePrimaryCtxRelease, 11000, "cuDevicePrimaryCtxRelease_v2")                              \
  X(cuCtxSetCurrent, 4000, "cuCtxSetCurrent")                                                      \
  X(cuCtxSynchronize, 2000, "cuCtxSynchronize")                                                    \
  X(cuMemAlloc, 3020, "cuMemAlloc_v2")                                                             \
  X(cuMemFree, 3020, "cuMemFree_v2")                                                               \
  X(cuMemcpyHtoD, 3020, "cuMemcpyHtoD_v2")                                                         \
  X(cuMemcpyDtoH, 3020, "cuMemcpyDtoH_v2")                                                         \
  X(cuMemcpyDtoDAsync, 3020, "cuMemcpyDtoDAsync_v2")                                               \
  X(cuMemsetD8Async, 3020, "cuMemsetD8Async")                                                      \
  X(cuStreamCreate, 2000, "cuStreamCreate")                                                        \
  X(cuStreamDestroy, 4000, "cuStreamDestroy_v2")                                                   \
  X(cuStreamSynchronize, 2000, "cuStreamSynchronize")                                              \
  X(cuStreamGetCaptureInfo, 11030, "cuStreamGetCaptureInfo_v2")                                    \
  X(cuEventCreate, 2000, "cuEventCreate")                                                          \
  X(cuEventDestroy, 4000, "cuEventDestroy_v2")                                                     \
  X(cuEventRecord, 2000, "cuEventRecord")                                                          \
  X(cuEventSynchronize, 2000, "cuEventSynchronize")                                                \
  X(cuEventElapsedTime, 2000, "cuEventElapsedTime")                                                \
  X(cuModuleLoadData, 2000, "cuModuleLoadData")                                                    \
  X(cuModuleLoadDataEx, 2010, "cuModuleLoadDataEx")                                                \
  X(cuModuleUnload, 2000, "cuModuleUnload")                                                        \
  X(cuModuleGetFunction, 2000, "cuModuleGetFunction")                                              \
  X(cuLinkCreate, 6050, "cuLinkCreate_v2")                                                         \
  X(cuLinkAddData, 6050, "cuLinkAddData_v2")                                                       \
  X(cuLinkComplete, 5050, "cuLinkComplete")                                                        \
  X(cuLinkDestroy, 5050, "cuLinkDestroy")                                                          \
  X(cuFuncGetAttribute, 2020, "cuFuncGetAttribute")                                                \
  X(cuFuncSetAttribute, 9000, "cuFuncSetAttribute")                                                \
  X(cuLaunchKernelEx, 11060, "cuLaunchKernelEx")                                                   \
  X(cuOccupancyMaxActiveClusters, 11070, "cuOccupancyMaxActiveClusters")                           \
  X(cuTensorMapEncodeTiled, 12000, "cuTensorMapEncodeTiled")                                       \
  X(cuTensorMapReplaceAddress, 12000, "cuTensorMapReplaceAddress")

/* The oldest driver hopgen accepts: tensor maps (cuTensorMapEncodeTiled) arrived in 12.0. */
#define HG_MIN_DRIVER_VERSION 12000

#define HG_CU_FIELD_(name, ver, sym) PFN_##name##_v##ver name;

typedef struct hg_cu {
  void *lib;
  char lib_path[256];
  /* How entry points were found: 2 = cuGetProcAddress_v2, 1 = cuGetProcAddress (v1),
   * 0 = dlsym only. Tests read it. */
  int proc_api;
  PFN_cuGetProcAddress_v12000 getProc2;
  PFN_cuGetProcAddress_v11030 getProc1;
  HG_CU_BOOT_SYMBOLS(HG_CU_FIELD_)
  HG_CU_SYMBOLS(HG_CU_FIELD_)
} hg_cu_t;

struct hg_rt {
  hg_cu_t cu;
  CUdevice dev;
  CUcontext ctx;
  bool ctx_retained;
  hg_device_info_t info;
  /* The modules loaded through this runtime, by their cache key: loading the same PTX again
   * takes another reference to the loaded module instead of a file read and
   * cuModuleLoadData (0.3-1 ms: what a warm hg_gemm_op_create would otherwise spend). */
  pthread_mutex_t modules_lock;
  struct hg_module *modules;
};

struct hg_function {
  CUfunction fn;
  struct hg_function *next; /* the module's list, freed with it */
  char name[128];
  int static_smem_bytes;
  int max_threads;
  int dyn_smem_limit;     /* current CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
  bool nonportable_ok;    /* CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED set */
  uint32_t ok_cluster[3]; /* the last cluster configuration found schedulable */
  uint32_t ok_block[3];
  uint32_t ok_smem;
  bool ok_valid;
};

struct hg_module {
  CUmodule mod;
  hg_function_t *functions;
  int refs;               /* hg_rt_module_load calls not yet unloaded */
  hg_hash128_t key;       /* the module cache key's hash of its PTX and device */
  size_t ptx_len;         /* and the PTX's length (a 128-bit hash and a length both equal) */
  struct hg_module *next; /* the runtime's list */
};

/* Make the runtime's context current on the calling thread (contexts are per thread, and
 * hopgen may be called from any thread). */
hg_status_t hg_rt_bind(hg_rt_t *rt);

/* HG_ERR_CUDA: "<call> failed: <CUDA_ERROR_NAME> (<driver's string>)" followed by a hint
 * when the code has a known cause (kernel faults, launch resources, clusters). */
hg_status_t hg_cu_fail(const hg_cu_t *cu, CUresult r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* "CUDA_ERROR_X (string)" into buf: the driver's own name and text when it can give them. */
const char *hg_cu_describe(const hg_cu_t *cu, CUresult r, char *buf, size_t size);

/* Let f take `bytes` of dynamic shared memory per block, raising
 * CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES when needed (the default limit is 48 KB
 * minus the static size); refused with a sentence above the device's opt-in limit. */
hg_status_t hg_function_reserve_smem(hg_rt_t *rt, hg_function_t *f, uint32_t bytes);

/* One sentence on what a code usually means for hopgen's kernels ("" when nothing to add). */
const char *hg_cu_hint(CUresult r);

#endif
