/* What the mock driver (mock_libcuda.c) and mock cuBLASLt (mock_cublaslt.c) tell a test
 * about how hopgen called them. Plain C types only: the mocks include the real <cuda.h>
 * and <cublasLt.h>, the tests do not. */
#ifndef HG_TEST_RUNTIME_MOCK_API_H
#define HG_TEST_RUNTIME_MOCK_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mock_cuda_state {
  /* Entry points whose ABI hopgen must not receive (an older or newer variant than the
   * signature it declares), as "name@version" list; "" when every lookup was right. */
  char wrong_abi[512];
  int proc_lookups;     /* cuGetProcAddress_v2 calls */
  int flags_not_legacy; /* lookups without CU_GET_PROC_ADDRESS_LEGACY_STREAM */
  int compiles, loads, occupancy_calls, launches;
  int encodes;               /* cuTensorMapEncodeTiled calls */
  int encode_l2[32];         /* the L2 promotion of encode i, at i % 32 */
  int replaces;              /* cuTensorMapReplaceAddress calls */
  int link_size_without_nul; /* cuLinkAddData calls whose size did not cover the NUL */
  int link_logs_missing;     /* cuLinkCreate calls without both log buffers */
  int whole_program_loads;   /* cuModuleLoadDataEx calls (PTX compiled and loaded in one) */
  unsigned last_grid[3], last_block[3], last_cluster[3], last_smem;
  bool last_pdl;         /* the last launch allowed programmatic stream serialization */
  bool last_cooperative; /* the last launch was cooperative (every CTA resident at once) */
  int last_num_attrs;
  void *last_stream;
  /* the launched kernels' names, each followed by a space, in order (a test empties it;
   * names that no longer fit are dropped) */
  char launch_log[1024];
  /* the same launches with their grids and parameters by name, as the kernel's PTX declares
   * them: "name<<<x,y,z>>>(rows_a=512,...,tmap_a=map) " */
  char param_log[8192];
  int nonportable_set;
  int dyn_smem_value; /* last MAX_DYNAMIC_SHARED_SIZE_BYTES set */
  int live_allocations;
  int wrong_context; /* calls made while the primary context was not current */
  int retained;      /* primary context retain count */
  /* what cuStreamGetCaptureInfo_v2 reports for every stream (a test sets them): 0 none, 1
   * active, 2 invalidated, and the capture's id */
  int capture_status;
  uint64_t capture_id;
} mock_cuda_state_t;

typedef mock_cuda_state_t *(*mock_cuda_state_fn)(void);
/* Is [ptr, ptr + bytes) inside one live mock allocation? (used by the mock cuBLASLt) */
typedef int (*mock_cuda_range_ok_fn)(uint64_t ptr, size_t bytes);

typedef struct mock_blas_state {
  int matmuls, heuristics;
  int last_transa, last_transb;
  int last_compute;
  int bad_alignment; /* a pointer less aligned than the algorithm was chosen for */
  int out_of_range;  /* an operand reached outside its allocation */
  int workspace_missing;
  int last_fast_accum;                      /* CUBLASLT_MATMUL_DESC_FAST_ACCUM of the last matmul */
  int last_scale_mode_a, last_scale_mode_b; /* A_SCALE_MODE / B_SCALE_MODE of the last matmul */
  /* AlgoGetHeuristic refused a vector or block scale mode (INVALID_VALUE: pointers not yet on
   * the descriptor, or misaligned) */
  int scale_rejected;
} mock_blas_state_t;

typedef mock_blas_state_t *(*mock_blas_state_fn)(void);

#endif
