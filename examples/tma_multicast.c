/* The CuTe TMA tutorial's multicast kernel, with hopgen: a cluster of CTAs needs the same
 * tile (in a GEMM, the CTAs of a cluster row share an A tile). Instead of each loading all
 * of it, each CTA loads 1/C of the boxes with .multicast::cluster (CuTe's
 * SM90_TMA_LOAD_MULTICAST with a CTA mask), and the bytes land in every CTA's shared memory
 * at the same offset, signalling every CTA's mbarrier, which expects the whole tile.
 *
 * What the kernel needs beyond the plain load: the mbarrier init made visible to the
 * cluster (fence.mbarrier_init + a cluster barrier) before any CTA multicasts into a
 * peer, and a cluster barrier at the end so that no CTA exits while a peer may still write
 * into its shared memory. */
#include <stdio.h>
#include <string.h>

#include "hopgen/kernels.h"

static hg_tma_plan_t plan;
static hg_tma_result_t result;

int main(void) {
  /* A: [N, K] = [512, 512] bf16; 128 x 64 tiles; clusters of 4 CTAs share each tile. */
  hg_tma_spec_t spec = hg_tma_spec_default(HG_TMA_LOAD);
  spec.dtype = HG_BF16;
  spec.shape[0] = spec.shape[1] = 512;
  spec.tile[0] = 128;
  spec.tile[1] = 64;
  spec.grid[0] = spec.grid[1] = 0;
  spec.cluster = 4;
  hg_status_t s = hg_tma_spec_normalize(&spec);
  if (hg_is_ok(&s)) s = hg_tma_spec_plan(&spec, &plan);
  if (!hg_is_ok(&s)) return fprintf(stderr, "tma_multicast: %s\n", s.msg), 1;
  printf("A: [512, 512] bf16, %lld tiles of 128 x 64, each shared by a cluster of %d CTAs\n",
         (long long)hg_tma_spec_tiles(&spec), spec.cluster);
  printf("every CTA's mbarrier expects %u bytes; each CTA issues %u of them:\n",
         plan.expect_tx_bytes, plan.cta_issue_bytes);
  for (int r = 0; r < plan.cluster; r++)
    for (int b = plan.cta_first_box[r]; b < plan.cta_first_box[r] + plan.boxes_per_cta; b++)
      printf("  CTA %d of the cluster: box (%d, %d) + tile origin -> smem byte %u of all %d "
             "CTAs (mask 0x%x)\n",
             r, plan.box[b].coord[0], plan.box[b].coord[1], plan.box[b].smem_offset, plan.cluster,
             plan.mcast_mask);

  hg_kernel_t k;
  s = hg_tma_generate(&spec, HG_BACKEND_PTX, &k, NULL);
  if (!hg_is_ok(&s)) return fprintf(stderr, "tma_multicast: %s\n", s.msg), 1;
  printf("kernel %s (%.2f ms to generate):\n", k.name, k.gen_ms);
  for (const char *line = k.ptx.data; line && *line;) {
    const char *end = strchr(line, '\n');
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", end ? (int)(end - line) : (int)strlen(line), line);
    if (strstr(buf, "barrier.cluster.") || strstr(buf, ".reqnctapercluster") ||
        strstr(buf, "multicast::cluster") || strstr(buf, "mbarrier.init") ||
        strstr(buf, "fence.mbarrier_init") || strstr(buf, "expect_tx"))
      printf("  %s\n", buf + strspn(buf, " \t"));
    line = end ? end + 1 : line + strlen(line);
  }
  hg_kernel_free(&k);

  hg_rt_t *rt;
  s = hg_rt_open(0, &rt);
  if (s.code == HG_ERR_NO_DRIVER || s.code == HG_ERR_NO_DEVICE) {
    printf("\nno GPU to run it on: %s\n", s.msg);
    return 0;
  }
  if (!hg_is_ok(&s)) return fprintf(stderr, "tma_multicast: %s\n", s.msg), 1;
  s = hg_tma_run(rt, &spec, HG_BACKEND_PTX, NULL, &result);
  printf("\nran on %s: %u CTAs in clusters of %u; every CTA's shared memory %s\n", result.device,
         result.ctas, result.cluster,
         hg_is_ok(&s) ? "holds the whole tile, identical to the model" : s.msg);
  hg_rt_close(rt);
  return hg_is_ok(&s) ? 0 : 1;
}
