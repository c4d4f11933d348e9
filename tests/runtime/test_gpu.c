/* The runtime on a real Hopper GPU: memory, streams and events, JIT and the module cache,
 * kernel launches with clusters, tensor maps, the cuBLASLt reference (bf16 in every
 * majorness, f16, tf32, batched, fp8 TN with scales) against a CPU f64 reference, and a
 * kernel fault's sentence. The same suite runs against the mock driver in test_mock.c.
 *
 * Without a driver or a Hopper device the test says why and is skipped (exit 77). */
#include "suite.h"

static mock_cuda_state_t *suite_mock_state(void) {
  static mock_cuda_state_t none; /* never read: suite_mock is false here */
  return &none;
}

int main(void) {
  const char *ordinal = getenv("HOPGEN_TEST_DEVICE");
  hg_status_t s = hg_rt_open(ordinal ? atoi(ordinal) : 0, &suite_rt);
  if (s.code == HG_ERR_NO_DRIVER || s.code == HG_ERR_NO_DEVICE) {
    fprintf(stderr, "skipped: no Hopper GPU here (%s)\n", s.msg);
    return 77;
  }
  if (!hg_is_ok(&s)) {
    fprintf(stderr, "hg_rt_open failed: %s\n", s.msg);
    return 1;
  }
  HG_RUN(suite_device);
  HG_RUN(suite_memory);
  HG_RUN(suite_streams_events);
  HG_RUN(suite_jit_and_cache);
  HG_RUN(suite_jit_error);
  HG_RUN(suite_functions);
  HG_RUN(suite_clusters);
  HG_RUN(suite_tensormaps);
  HG_RUN(suite_gemm);
  HG_RUN(suite_fault); /* last: the context is lost */
  hg_rt_close(suite_rt);
  return hg_test_finish();
}
