/* The CuTe TMA tutorial's first kernel, with hopgen: every CTA loads one tile of a
 * row-major [N, K] matrix into shared memory, one thread driving TMA and an mbarrier.
 *
 *   CuTe                                            hopgen
 *   Tensor gA = make_tensor(ptr, make_shape(N, K),  hg_tma_spec_t: dtype, shape, strides
 *                           LayoutRight{});
 *   auto sL = tile_to_shape(GMMA::Layout_K_SW128..  hg_tma_smem_layout (tile + swizzle)
 *   auto tma = make_tma_copy(SM90_TMA_LOAD{}, gA,   hg_tma_plan_make: the tensor map, the
 *                            sL);                   box and the boxes that fill the tile
 *   kernel: mbarrier init, arrive_and_expect_tx,    hg_tma_generate: the same kernel, built
 *           copy(tma.with(bar), tAgA, tAsA), wait   with the builder, as PTX
 *
 * Then it runs the kernel and compares every byte of every CTA's shared memory with the
 * CPU model of TMA (hg_tma_run). Without a GPU it stops after printing the kernel. */
#include <stdio.h>
#include <string.h>

#include "hopgen/kernels.h"

static hg_tma_plan_t plan;
static hg_tma_result_t result;

int main(void) {
  /* 1. The global tensor: A is [N, K] = [1000, 512] bf16, row-major (K contiguous). The
   *    tiles: 128 x 64, enough of them to cover A (grid 0 = auto: 8 x 8). 1000 is not a
   *    multiple of 128, so the last row of tiles hangs over the edge: TMA fills zeros. */
  hg_tma_spec_t spec = hg_tma_spec_default(HG_TMA_LOAD);
  spec.dtype = HG_BF16;
  spec.shape[0] = 1000; /* N */
  spec.shape[1] = 512;  /* K */
  spec.tile[0] = 128;
  spec.tile[1] = 64;
  spec.grid[0] = spec.grid[1] = 0;
  spec.swizzle = HG_SWIZZLE_128B;
  hg_status_t s = hg_tma_spec_normalize(&spec);
  if (!hg_is_ok(&s)) return fprintf(stderr, "tma_load: %s\n", s.msg), 1;

  /* 2. make_tma_copy: the shared-memory layout of a tile and the TMA plan. */
  s = hg_tma_spec_plan(&spec, &plan);
  if (!hg_is_ok(&s)) return fprintf(stderr, "tma_load: %s\n", s.msg), 1;
  char text[512];
  hg_composed_print(&plan.smem, text, sizeof text);
  printf("A: [%lld, %lld] bf16, row-major; tile 128 x 64; %lld x %lld tiles\n",
         (long long)spec.shape[0], (long long)spec.shape[1], (long long)spec.grid[0],
         (long long)spec.grid[1]);
  printf("shared-memory layout of a tile: %s (%u bytes)\n", text, plan.smem_bytes);
  printf("tensor map: globalDim {%llu, %llu}, globalStrides {%llu} B, boxDim {%u, %u}, "
         "swizzle %s\n",
         (unsigned long long)plan.map.global_dim[0], (unsigned long long)plan.map.global_dim[1],
         (unsigned long long)plan.map.global_stride_bytes[0], plan.map.box_dim[0],
         plan.map.box_dim[1], hg_swizzle_mode_name(plan.map.swizzle));
  for (int b = 0; b < plan.num_boxes; b++)
    printf("  box %d: coordinates (%d, %d) from the tile origin -> smem byte %u\n", b,
           plan.box[b].coord[0], plan.box[b].coord[1], plan.box[b].smem_offset);
  printf("the mbarrier expects %u bytes per tile\n\n", plan.expect_tx_bytes);

  /* 3. The kernel. Print the lines that do the tutorial's work. */
  hg_kernel_t k;
  s = hg_tma_generate(&spec, HG_BACKEND_PTX, &k, NULL);
  if (!hg_is_ok(&s)) return fprintf(stderr, "tma_load: %s\n", s.msg), 1;
  printf("kernel %s: %u threads, %u bytes of dynamic shared memory, generated in %.2f ms\n", k.name,
         k.threads, k.smem_bytes, k.gen_ms);
  for (const char *line = k.ptx.data; line && *line;) {
    const char *end = strchr(line, '\n');
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", end ? (int)(end - line) : (int)strlen(line), line);
    if ((strstr(buf, "mbarrier.") && !strstr(buf, "try_wait")) || strstr(buf, "cp.async.bulk"))
      printf("  %s\n", buf + strspn(buf, " \t"));
    line = end ? end + 1 : line + strlen(line);
  }
  hg_kernel_free(&k);

  /* 4. Run it and check every byte of shared memory, on a GPU if there is one. */
  hg_rt_t *rt;
  s = hg_rt_open(0, &rt);
  if (s.code == HG_ERR_NO_DRIVER || s.code == HG_ERR_NO_DEVICE) {
    printf("\nno GPU to run it on: %s\n", s.msg);
    return 0;
  }
  if (!hg_is_ok(&s)) return fprintf(stderr, "tma_load: %s\n", s.msg), 1;
  hg_tma_run_options_t opts = {.runs = 2};
  s = hg_tma_run(rt, &spec, HG_BACKEND_PTX, &opts, &result);
  printf("\nran on %s: %u CTAs, %llu bytes of shared memory compared with the model: %s\n",
         result.device, result.ctas, (unsigned long long)result.bytes_compared,
         hg_is_ok(&s) ? "identical" : s.msg);
  printf("spec -> launched kernel: %.1f ms cold (%s), %.2f ms warm (%s)\n",
         result.cold.to_launch_ms, result.cold.jit.cache_hit ? "cache hit" : "JIT",
         result.warm.to_launch_ms, result.warm.jit.cache_hit ? "cache hit" : "JIT");
  hg_rt_close(rt);
  return hg_is_ok(&s) ? 0 : 1;
}
