/* The CuTe TMA tutorial's prefetch variant, with hopgen: before loading its tile, each CTA
 * asks TMA to bring the tile's boxes into L2 (cp.async.bulk.prefetch.tensor, CuTe's
 * SM90_TMA_LOAD::PREFETCH / prefetch(tma, tAgA)); the load that follows then finds them
 * there. A prefetch has no destination and no mbarrier: it is a hint, and it must not fault
 * even where the tile hangs over the tensor's edge.
 *
 * The tensor here is a 3-D [batch, N, K] = [4, 300, 256] f16 tensor; each CTA takes one
 * 64 x 64 tile of one batch, starting at (0, -8, -16): tiles overhang the top and left
 * edges (negative coordinates) and the bottom one (300 is not a multiple of 64). */
#include <stdio.h>
#include <string.h>

#include "hopgen/kernels.h"

static hg_tma_plan_t plan;
static hg_tma_result_t result;

int main(void) {
  hg_tma_spec_t spec = hg_tma_spec_default(HG_TMA_PREFETCH);
  spec.dtype = HG_F16;
  spec.rank = 3;
  const int64_t shape[3] = {4, 300, 256};
  const int tile[3] = {1, 64, 64};
  const int32_t origin[3] = {0, -8, -16}; /* -16 f16 = -32 bytes: a multiple of 16 B */
  for (int m = 0; m < 3; m++) {
    spec.shape[m] = shape[m];
    spec.tile[m] = tile[m];
    spec.origin[m] = origin[m];
    spec.grid[m] = 0; /* auto */
  }
  spec.swizzle = HG_SWIZZLE_128B;
  hg_status_t s = hg_tma_spec_normalize(&spec);
  if (hg_is_ok(&s)) s = hg_tma_spec_plan(&spec, &plan);
  if (!hg_is_ok(&s)) return fprintf(stderr, "tma_prefetch: %s\n", s.msg), 1;
  char what[256];
  hg_tma_spec_print(&spec, what, sizeof what);
  printf("%s\n", what);
  printf("%d box(es) per tile of %u x %u x %u elements (tensor-map order: K, N, batch)\n",
         plan.num_boxes, plan.map.box_dim[0], plan.map.box_dim[1], plan.map.box_dim[2]);

  /* The kernel: the same as the load, with one prefetch per box first. */
  hg_kernel_t k;
  s = hg_tma_generate(&spec, HG_BACKEND_PTX, &k, NULL);
  if (!hg_is_ok(&s)) return fprintf(stderr, "tma_prefetch: %s\n", s.msg), 1;
  printf("kernel %s (%.2f ms to generate):\n", k.name, k.gen_ms);
  for (const char *line = k.ptx.data; line && *line;) {
    const char *end = strchr(line, '\n');
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", end ? (int)(end - line) : (int)strlen(line), line);
    if (strstr(buf, "cp.async.bulk")) printf("  %s\n", buf + strspn(buf, " \t"));
    line = end ? end + 1 : line + strlen(line);
  }
  hg_kernel_free(&k);

  hg_rt_t *rt;
  s = hg_rt_open(0, &rt);
  if (s.code == HG_ERR_NO_DRIVER || s.code == HG_ERR_NO_DEVICE) {
    printf("\nno GPU to run it on: %s\n", s.msg);
    return 0;
  }
  if (!hg_is_ok(&s)) return fprintf(stderr, "tma_prefetch: %s\n", s.msg), 1;
  s = hg_tma_run(rt, &spec, HG_BACKEND_PTX, NULL, &result);
  printf("\nran on %s: %u CTAs prefetched and loaded their tiles; shared memory %s\n",
         result.device, result.ctas, hg_is_ok(&s) ? "matches the model, every byte" : s.msg);
  hg_rt_close(rt);
  return hg_is_ok(&s) ? 0 : 1;
}
