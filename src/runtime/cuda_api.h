/* The subset of the CUDA driver API that hopgen's runtime calls, declared here so that
 * hopgen builds and runs without <cuda.h> and without linking libcuda: the driver is
 * opened with dlopen and every entry point is resolved at run time (driver.c).
 *
 * Every value below is the documented one from the CUDA Driver API reference
 * ("Data types used by CUDA driver", "Tensor Map Object Management", "Execution Control",
 * "Driver Entry Point Access"). The function-pointer typedefs carry the CUDA version in
 * which that exact ABI was introduced (the number cudaTypedefs.h appends, e.g.
 * PFN_cuMemAlloc_v3020): driver.c asks cuGetProcAddress for precisely that version, so
 * the driver hands back the function with this signature and no newer variant. */
#ifndef HOPGEN_RUNTIME_CUDA_API_H
#define HOPGEN_RUNTIME_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- handles and scalars */

typedef int CUresult;         /* CUresult is an enum; an int has its size and every value */
typedef int CUdevice;         /* CUdevice_v1 */
typedef uint64_t CUdeviceptr; /* CUdeviceptr_v2: 64-bit since CUDA 3.2 (the _v2 entry points) */
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUlinkState_st *CUlinkState;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
/* CUstreamCaptureStatus (cuda.h, enum CUstreamCaptureStatus_enum) */
typedef enum {
  CU_STREAM_CAPTURE_STATUS_NONE = 0,
  CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
  CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2
} CUstreamCaptureStatus;

/* CUresult values that the runtime treats specially (cuda.h, enum cudaError_enum). */
enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_STUB_LIBRARY = 34,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_TIMEOUT = 702,
  CUDA_ERROR_ASSERT = 710,
  CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
  CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
  CUDA_ERROR_MISALIGNED_ADDRESS = 716,
  CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
  CUDA_ERROR_INVALID_PC = 718,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_INVALID_CLUSTER_SIZE = 912,
  CUDA_ERROR_UNKNOWN = 999,
};

/* ---------------------------------------------------------------- device attributes */

typedef int CUdevice_attribute; /* enum CUdevice_attribute_enum */
enum {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13, /* kHz */
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36, /* kHz */
  CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH = 120,
};

/* ---------------------------------------------------------------- function attributes */

typedef int CUfunction_attribute; /* enum CUfunction_attribute_enum */
enum {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1, /* static shared memory */
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14,
};

/* ---------------------------------------------------------------- JIT and linker */

typedef int CUjit_option; /* enum CUjit_option_enum */
enum {
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_LOG_VERBOSE = 12,
};

typedef int CUjitInputType; /* enum CUjitInputType_enum */
enum { CU_JIT_INPUT_CUBIN = 0, CU_JIT_INPUT_PTX = 1 };

/* ---------------------------------------------------------------- streams and events */

enum { CU_STREAM_DEFAULT = 0 }; /* a blocking stream: it syncs with the legacy NULL stream */
enum { CU_EVENT_DEFAULT = 0 };  /* timing enabled */

/* ---------------------------------------------------------------- cuGetProcAddress */

typedef int CUdriverProcAddressQueryResult;
enum {
  CU_GET_PROC_ADDRESS_SUCCESS = 0,
  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
  CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
};
/* Flags: the legacy NULL stream (not per-thread default streams), stated explicitly
 * because CU_GET_PROC_ADDRESS_DEFAULT depends on how the *caller* was compiled. */
enum { CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1 };

/* ---------------------------------------------------------------- launch (cuLaunchKernelEx) */

typedef int CUlaunchAttributeID; /* enum CUlaunchAttributeID_enum */
enum {
  CU_LAUNCH_ATTRIBUTE_IGNORE = 0,
  CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2,
  CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
  CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6
};

/* union CUlaunchAttributeValue_union: padded to 64 bytes; it holds pointers (the access
 * policy window), hence 8-byte alignment. */
typedef union CUlaunchAttributeValue {
  char pad[64];
  struct {
    unsigned int x, y, z;
  } clusterDim;
  int cooperative;
  int programmaticStreamSerializationAllowed;
  void *align_as_pointer_;
  uint64_t align_as_u64_;
} CUlaunchAttributeValue;

/* struct CUlaunchAttribute_st: the id, padding to 8 bytes, then the value. */
typedef struct CUlaunchAttribute {
  CUlaunchAttributeID id;
  char pad[8 - sizeof(CUlaunchAttributeID)];
  CUlaunchAttributeValue value;
} CUlaunchAttribute;

/* struct CUlaunchConfig_st */
typedef struct CUlaunchConfig {
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned int numAttrs;
} CUlaunchConfig;

_Static_assert(sizeof(CUlaunchAttributeValue) == 64, "CUlaunchAttributeValue is 64 bytes");
_Static_assert(offsetof(CUlaunchAttribute, value) == 8, "CUlaunchAttribute value at offset 8");
_Static_assert(sizeof(CUlaunchAttribute) == 72, "CUlaunchAttribute is 72 bytes");
_Static_assert(offsetof(CUlaunchConfig, hStream) == 32, "CUlaunchConfig layout");
_Static_assert(offsetof(CUlaunchConfig, attrs) == 40, "CUlaunchConfig layout");
_Static_assert(offsetof(CUlaunchConfig, numAttrs) == 48, "CUlaunchConfig layout");

/* ---------------------------------------------------------------- tensor maps */

/* CUtensorMap: CU_TENSOR_MAP_NUM_QWORDS = 16 opaque 64-bit words; the encode call needs
 * the object 64-byte aligned ("tensorMap address must be aligned to 64 bytes"). */
typedef struct CUtensorMap {
  _Alignas(64) uint64_t opaque[16];
} CUtensorMap;

typedef int CUtensorMapDataType; /* enum CUtensorMapDataType_enum */
enum {
  CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
  CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1,
  CU_TENSOR_MAP_DATA_TYPE_UINT32 = 2,
  CU_TENSOR_MAP_DATA_TYPE_INT32 = 3,
  CU_TENSOR_MAP_DATA_TYPE_UINT64 = 4,
  CU_TENSOR_MAP_DATA_TYPE_INT64 = 5,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT64 = 8,
  CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ = 10,
  CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 = 11,
  CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ = 12,
};
typedef int CUtensorMapInterleave;   /* NONE = 0, 16B = 1, 32B = 2 */
typedef int CUtensorMapSwizzle;      /* NONE = 0, 32B = 1, 64B = 2, 128B = 3 */
typedef int CUtensorMapL2promotion;  /* NONE = 0, 64B = 1, 128B = 2, 256B = 3 */
typedef int CUtensorMapFloatOOBfill; /* NONE = 0, NAN_REQUEST_ZERO_FMA = 1 */
enum {
  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0,
  CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA = 1
};

/* ---------------------------------------------------------------- entry points */

/* Named PFN_<function>_v<CUDA version that introduced this ABI>. */
typedef CUresult (*PFN_cuGetProcAddress_v12000)(const char *symbol, void **pfn, int cudaVersion,
                                                uint64_t flags,
                                                CUdriverProcAddressQueryResult *symbolStatus);
typedef CUresult (*PFN_cuGetProcAddress_v11030)(const char *symbol, void **pfn, int cudaVersion,
                                                uint64_t flags);
typedef CUresult (*PFN_cuGetErrorString_v6000)(CUresult error, const char **pStr);
typedef CUresult (*PFN_cuGetErrorName_v6000)(CUresult error, const char **pStr);
typedef CUresult (*PFN_cuInit_v2000)(unsigned int flags);
typedef CUresult (*PFN_cuDriverGetVersion_v2020)(int *driverVersion);
typedef CUresult (*PFN_cuDeviceGetCount_v2000)(int *count);
typedef CUresult (*PFN_cuDeviceGet_v2000)(CUdevice *device, int ordinal);
typedef CUresult (*PFN_cuDeviceGetName_v2000)(char *name, int len, CUdevice dev);
typedef CUresult (*PFN_cuDeviceGetAttribute_v2000)(int *pi, CUdevice_attribute attrib,
                                                   CUdevice dev);
typedef CUresult (*PFN_cuDeviceTotalMem_v3020)(size_t *bytes, CUdevice dev);
typedef CUresult (*PFN_cuDevicePrimaryCtxRetain_v7000)(CUcontext *pctx, CUdevice dev);
typedef CUresult (*PFN_cuDevicePrimaryCtxRelease_v11000)(CUdevice dev);
typedef CUresult (*PFN_cuCtxSetCurrent_v4000)(CUcontext ctx);
typedef CUresult (*PFN_cuCtxSynchronize_v2000)(void);
typedef CUresult (*PFN_cuMemAlloc_v3020)(CUdeviceptr *dptr, size_t bytesize);
typedef CUresult (*PFN_cuMemFree_v3020)(CUdeviceptr dptr);
typedef CUresult (*PFN_cuMemcpyHtoD_v3020)(CUdeviceptr dst, const void *src, size_t bytes);
typedef CUresult (*PFN_cuMemcpyDtoH_v3020)(void *dst, CUdeviceptr src, size_t bytes);
typedef CUresult (*PFN_cuMemcpyDtoDAsync_v3020)(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                                                CUstream stream);
typedef CUresult (*PFN_cuMemsetD8Async_v3020)(CUdeviceptr dst, unsigned char uc, size_t n,
                                              CUstream stream);
typedef CUresult (*PFN_cuStreamCreate_v2000)(CUstream *phStream, unsigned int flags);
typedef CUresult (*PFN_cuStreamDestroy_v4000)(CUstream hStream);
typedef CUresult (*PFN_cuStreamSynchronize_v2000)(CUstream hStream);
typedef CUresult (*PFN_cuStreamGetCaptureInfo_v11030)(CUstream hStream,
                                                      CUstreamCaptureStatus *captureStatus_out,
                                                      uint64_t *id_out, CUgraph *graph_out,
                                                      const CUgraphNode **dependencies_out,
                                                      size_t *numDependencies_out);
typedef CUresult (*PFN_cuEventCreate_v2000)(CUevent *phEvent, unsigned int flags);
typedef CUresult (*PFN_cuEventDestroy_v4000)(CUevent hEvent);
typedef CUresult (*PFN_cuEventRecord_v2000)(CUevent hEvent, CUstream hStream);
typedef CUresult (*PFN_cuEventSynchronize_v2000)(CUevent hEvent);
typedef CUresult (*PFN_cuEventElapsedTime_v2000)(float *pMilliseconds, CUevent hStart,
                                                 CUevent hEnd);
typedef CUresult (*PFN_cuModuleLoadData_v2000)(CUmodule *module, const void *image);
typedef CUresult (*PFN_cuModuleLoadDataEx_v2010)(CUmodule *module, const void *image,
                                                 unsigned int numOptions, CUjit_option *options,
                                                 void **optionValues);
typedef CUresult (*PFN_cuModuleUnload_v2000)(CUmodule hmod);
typedef CUresult (*PFN_cuModuleGetFunction_v2000)(CUfunction *hfunc, CUmodule hmod,
                                                  const char *name);
typedef CUresult (*PFN_cuLinkCreate_v6050)(unsigned int numOptions, CUjit_option *options,
                                           void **optionValues, CUlinkState *stateOut);
typedef CUresult (*PFN_cuLinkAddData_v6050)(CUlinkState state, CUjitInputType type, void *data,
                                            size_t size, const char *name, unsigned int numOptions,
                                            CUjit_option *options, void **optionValues);
typedef CUresult (*PFN_cuLinkComplete_v5050)(CUlinkState state, void **cubinOut, size_t *sizeOut);
typedef CUresult (*PFN_cuLinkDestroy_v5050)(CUlinkState state);
typedef CUresult (*PFN_cuFuncGetAttribute_v2020)(int *pi, CUfunction_attribute attrib,
                                                 CUfunction hfunc);
typedef CUresult (*PFN_cuFuncSetAttribute_v9000)(CUfunction hfunc, CUfunction_attribute attrib,
                                                 int value);
typedef CUresult (*PFN_cuLaunchKernelEx_v11060)(const CUlaunchConfig *config, CUfunction f,
                                                void **kernelParams, void **extra);
typedef CUresult (*PFN_cuOccupancyMaxActiveClusters_v11070)(int *numClusters, CUfunction func,
                                                            const CUlaunchConfig *config);
typedef CUresult (*PFN_cuTensorMapEncodeTiled_v12000)(
    CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType, uint32_t tensorRank,
    void *globalAddress, const uint64_t *globalDim, const uint64_t *globalStrides,
    const uint32_t *boxDim, const uint32_t *elementStrides, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
    CUtensorMapFloatOOBfill oobFill);
typedef CUresult (*PFN_cuTensorMapReplaceAddress_v12000)(CUtensorMap *tensorMap,
                                                         void *globalAddress);

#endif
