/* Tensor-map encoding (cuTensorMapEncodeTiled, CUDA Driver API "Tensor Map Object
 * Management") and kernel launch with thread-block clusters (cuLaunchKernelEx,
 * cuOccupancyMaxActiveClusters, "Execution Control" / "Occupancy"). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "runtime/rt_internal.h"

_Static_assert(sizeof(hg_tensormap_t) == sizeof(CUtensorMap), "hg_tensormap_t is a CUtensorMap");
_Static_assert(_Alignof(hg_tensormap_t) >= 64, "the driver writes tensor maps 64-byte aligned");

/* ---------------------------------------------------------------- tensor maps */

/* TMA moves bytes: 8-bit types of any meaning travel as UINT8 (the driver has no fp8 or
 * signed 8-bit tensor-map type); the float types keep their own for NaN fill. */
static bool tensormap_type(hg_dtype_t t, CUtensorMapDataType *out) {
  switch (t) {
  case HG_U8:
  case HG_S8:
  case HG_E4M3:
  case HG_E5M2:
    *out = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    return true;
  case HG_U16:
    *out = CU_TENSOR_MAP_DATA_TYPE_UINT16;
    return true;
  case HG_F16:
    *out = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    return true;
  case HG_BF16:
    *out = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    return true;
  case HG_U32:
    *out = CU_TENSOR_MAP_DATA_TYPE_UINT32;
    return true;
  case HG_S32:
    *out = CU_TENSOR_MAP_DATA_TYPE_INT32;
    return true;
  case HG_F32:
    *out = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    return true;
  case HG_TF32:
    *out = CU_TENSOR_MAP_DATA_TYPE_TFLOAT32;
    return true;
  case HG_U64:
    *out = CU_TENSOR_MAP_DATA_TYPE_UINT64;
    return true;
  case HG_F64:
    *out = CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
    return true;
  default:
    return false;
  }
}

/* "{a, b, c}" of n values. */
static void list_u64(char *buf, size_t size, const uint64_t *v, int n) {
  size_t used = 0;
  used += (size_t)snprintf(buf, size, "{");
  for (int i = 0; i < n && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%" PRIu64, i ? ", " : "", v[i]);
  if (used < size) snprintf(buf + used, size - used, "}");
}

static void list_u32(char *buf, size_t size, const uint32_t *v, int n) {
  uint64_t w[HG_TMA_MAX_RANK];
  for (int i = 0; i < n; i++) w[i] = v[i];
  list_u64(buf, size, w, n);
}

hg_status_t hg_rt_tensormap_encode(hg_rt_t *rt, const hg_tensormap_params_t *p, hg_devptr_t base,
                                   hg_tensormap_t *out) {
  if (!p || !out)
    return hg_error(HG_ERR_INVALID, "hg_rt_tensormap_encode needs parameters and an output");
  memset(out, 0, sizeof *out);
  /* hopgen's validation names the rule that broke; the driver only says INVALID_VALUE. */
  HG_TRY(hg_tensormap_validate(p, (uint64_t)base));
  if (base == 0)
    return hg_error(HG_ERR_INVALID,
                    "globalAddress = 0: a tensor map is encoded for a device address");
  CUtensorMapDataType type;
  if (!tensormap_type(p->dtype, &type))
    return hg_error(HG_ERR_UNSUPPORTED, "element type %s has no tensor-map data type",
                    hg_dtype_name(p->dtype));
  uint64_t dims[HG_TMA_MAX_RANK] = {0}, strides[HG_TMA_MAX_RANK - 1] = {0};
  uint32_t box[HG_TMA_MAX_RANK] = {0}, estr[HG_TMA_MAX_RANK] = {0};
  for (int i = 0; i < p->rank; i++) {
    dims[i] = p->global_dim[i];
    box[i] = p->box_dim[i];
    estr[i] = p->element_strides[i];
  }
  for (int i = 0; i + 1 < p->rank; i++) strides[i] = p->global_stride_bytes[i];
  HG_TRY(hg_rt_bind(rt));
  CUtensorMap tm;
  memset(&tm, 0, sizeof tm);
  /* The hopgen enums for interleave, swizzle and L2 promotion are numbered as the driver's
   * (sm90.h); oob_nan selects CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA. */
  CUresult r = rt->cu.cuTensorMapEncodeTiled(
      &tm, type, (uint32_t)p->rank, (void *)(uintptr_t)base, dims, strides, box, estr,
      (CUtensorMapInterleave)p->interleave, (CUtensorMapSwizzle)p->swizzle,
      (CUtensorMapL2promotion)p->l2_promotion,
      p->oob_nan ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
                 : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    /* Validation passed, so the driver knows a rule hopgen does not: show everything. */
    char d[160], s[160], b[96], e[96];
    list_u64(d, sizeof d, dims, p->rank);
    list_u64(s, sizeof s, strides, p->rank - 1);
    list_u32(b, sizeof b, box, p->rank);
    list_u32(e, sizeof e, estr, p->rank);
    return hg_cu_fail(&rt->cu, r,
                      "cuTensorMapEncodeTiled(dataType = %d (%s), rank = %d, globalAddress = "
                      "0x%" PRIx64 ", globalDim = %s, globalStrides = %s B, boxDim = %s, "
                      "elementStrides = %s, interleave = %d, swizzle = %d, l2Promotion = %d, "
                      "oobFill = %s) passed hopgen's checks but",
                      type, hg_dtype_name(p->dtype), p->rank, (uint64_t)base, d, s, b, e,
                      p->interleave, (int)p->swizzle, p->l2_promotion, p->oob_nan ? "NaN" : "zero");
  }
  memcpy(out->opaque, tm.opaque, sizeof out->opaque);
  return hg_ok();
}

hg_status_t hg_rt_tensormap_replace_address(hg_rt_t *rt, hg_tensormap_t *map, hg_devptr_t base) {
  if (!map) return hg_error(HG_ERR_INVALID, "hg_rt_tensormap_replace_address needs a map");
  if (base == 0 || base % 16 != 0)
    return hg_error(HG_ERR_INVALID,
                    "globalAddress = 0x%" PRIx64 ": a tensor map's address is a non-zero multiple "
                    "of 16 bytes",
                    (uint64_t)base);
  HG_TRY(hg_rt_bind(rt));
  CUtensorMap tm;
  memcpy(tm.opaque, map->opaque, sizeof tm.opaque);
  CUresult r = rt->cu.cuTensorMapReplaceAddress(&tm, (void *)(uintptr_t)base);
  if (r != CUDA_SUCCESS)
    return hg_cu_fail(&rt->cu, r, "cuTensorMapReplaceAddress(globalAddress = 0x%" PRIx64 ")",
                      (uint64_t)base);
  memcpy(map->opaque, tm.opaque, sizeof map->opaque);
  return hg_ok();
}

/* ---------------------------------------------------------------- launch */

/* Hopper: 8 CTAs per cluster portably, 16 with the non-portable opt-in (CUDA Programming
 * Guide, "Thread Block Clusters"; CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED). */
#define HG_PORTABLE_CLUSTER 8
#define HG_MAX_CLUSTER 16

static bool same3(const uint32_t *a, const uint32_t *b) {
  return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

static const char *axis(int i) {
  return i == 0 ? "x" : i == 1 ? "y" : "z";
}

/* What cuLaunchKernelEx and cuOccupancyMaxActiveClusters both take: the context bound, the
 * function's dynamic shared-memory limit raised, non-portable cluster sizes (> 8) allowed
 * when asked for, and the launch configuration over grid, with the cluster attribute when
 * with_cluster, and programmatic stream serialization when l->pdl (attr[2] is pointed to by
 * cfg and must live as long). */
static hg_status_t launch_config(hg_rt_t *rt, hg_function_t *f, const hg_launch_t *l,
                                 const uint32_t grid[3], const uint32_t cluster[3],
                                 bool with_cluster, CUlaunchAttribute attr[3],
                                 CUlaunchConfig *cfg) {
  HG_TRY(hg_rt_bind(rt));
  HG_TRY(hg_function_reserve_smem(rt, f, l->smem_bytes));
  const uint64_t ctas = (uint64_t)cluster[0] * cluster[1] * cluster[2];
  if (ctas > HG_PORTABLE_CLUSTER && !f->nonportable_ok) {
    CUresult r =
        rt->cu.cuFuncSetAttribute(f->fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    if (r != CUDA_SUCCESS)
      return hg_cu_fail(&rt->cu, r, "cuFuncSetAttribute(%s, NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 1)",
                        f->name);
    f->nonportable_ok = true;
  }
  memset(attr, 0, 3 * sizeof *attr);
  unsigned n = 0;
  if (with_cluster) {
    attr[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr[n].value.clusterDim.x = cluster[0];
    attr[n].value.clusterDim.y = cluster[1];
    attr[n++].value.clusterDim.z = cluster[2];
  }
  if (l->pdl) {
    attr[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr[n++].value.programmaticStreamSerializationAllowed = 1;
  }
  if (l->cooperative) {
    attr[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attr[n++].value.cooperative = 1;
  }
  memset(cfg, 0, sizeof *cfg);
  cfg->gridDimX = grid[0];
  cfg->gridDimY = grid[1];
  cfg->gridDimZ = grid[2];
  cfg->blockDimX = l->block[0];
  cfg->blockDimY = l->block[1];
  cfg->blockDimZ = l->block[2];
  cfg->sharedMemBytes = l->smem_bytes;
  cfg->hStream = (CUstream)l->stream;
  cfg->attrs = n ? attr : NULL;
  cfg->numAttrs = n;
  return hg_ok();
}

hg_status_t hg_rt_launch(hg_rt_t *rt, hg_function_t *f, const hg_launch_t *l, void **args) {
  if (!f || !l) return hg_error(HG_ERR_INVALID, "hg_rt_launch needs a kernel and a launch shape");
  static const uint32_t grid_max[3] = {0x7FFFFFFFu, 65535u, 65535u};
  for (int i = 0; i < 3; i++) {
    if (l->grid[i] == 0 || l->grid[i] > grid_max[i])
      return hg_error(HG_ERR_INVALID, "kernel %s: grid.%s = %" PRIu32 " is outside 1..%" PRIu32,
                      f->name, axis(i), l->grid[i], grid_max[i]);
    if (l->block[i] == 0)
      return hg_error(HG_ERR_INVALID,
                      "kernel %s: block.%s = 0; every block dimension is at least 1", f->name,
                      axis(i));
  }
  const uint64_t threads = (uint64_t)l->block[0] * l->block[1] * l->block[2];
  if (threads > (uint64_t)f->max_threads)
    return hg_error(HG_ERR_INVALID,
                    "kernel %s: a block of %" PRIu32 "x%" PRIu32 "x%" PRIu32 " = %" PRIu64
                    " threads exceeds the kernel's limit of %d threads per block",
                    f->name, l->block[0], l->block[1], l->block[2], threads, f->max_threads);

  uint32_t cluster[3] = {l->cluster[0], l->cluster[1], l->cluster[2]};
  const bool none = cluster[0] == 0 && cluster[1] == 0 && cluster[2] == 0;
  if (none) cluster[0] = cluster[1] = cluster[2] = 1;
  for (int i = 0; i < 3; i++)
    if (cluster[i] == 0)
      return hg_error(HG_ERR_INVALID,
                      "kernel %s: cluster = %" PRIu32 "x%" PRIu32 "x%" PRIu32
                      " has a zero dimension; use {0,0,0} or {1,1,1} for no cluster",
                      f->name, l->cluster[0], l->cluster[1], l->cluster[2]);
  const uint64_t ctas = (uint64_t)cluster[0] * cluster[1] * cluster[2];
  const bool clustered = ctas > 1;
  if (clustered) {
    for (int i = 0; i < 3; i++)
      if (l->grid[i] % cluster[i] != 0)
        return hg_error(HG_ERR_INVALID,
                        "kernel %s: grid.%s = %" PRIu32
                        " is not a multiple of cluster.%s = %" PRIu32,
                        f->name, axis(i), l->grid[i], axis(i), cluster[i]);
    if (ctas > HG_MAX_CLUSTER)
      return hg_error(HG_ERR_INVALID,
                      "kernel %s: a cluster of %" PRIu32 "x%" PRIu32 "x%" PRIu32 " = %" PRIu64
                      " CTAs exceeds Hopper's limit of %d (%d portably)",
                      f->name, cluster[0], cluster[1], cluster[2], ctas, HG_MAX_CLUSTER,
                      HG_PORTABLE_CLUSTER);
  }
  CUlaunchAttribute attr[3];
  CUlaunchConfig cfg;
  HG_TRY(launch_config(rt, f, l, l->grid, cluster, clustered, attr, &cfg));

  /* A cluster whose CTAs cannot all be resident on one GPC at once would never start: ask
   * the driver before launching, once per configuration (benchmarks launch in loops). */
  if (clustered && !(f->ok_valid && same3(f->ok_cluster, cluster) && same3(f->ok_block, l->block) &&
                     f->ok_smem == l->smem_bytes)) {
    int active = 0;
    CUresult r = rt->cu.cuOccupancyMaxActiveClusters(&active, f->fn, &cfg);
    if (r != CUDA_SUCCESS)
      return hg_cu_fail(&rt->cu, r,
                        "cuOccupancyMaxActiveClusters(%s, cluster %" PRIu32 "x%" PRIu32 "x%" PRIu32
                        ", block %" PRIu32 "x%" PRIu32 "x%" PRIu32 ", %" PRIu32 " B dynamic smem)",
                        f->name, cluster[0], cluster[1], cluster[2], l->block[0], l->block[1],
                        l->block[2], l->smem_bytes);
    if (active < 1)
      return hg_error(HG_ERR_INVALID,
                      "device %d (%s) cannot co-schedule a %" PRIu32 "x%" PRIu32 "x%" PRIu32
                      " cluster of kernel %s (%" PRIu64 " threads and %" PRIu32
                      " B dynamic + %d B static shared memory per CTA): "
                      "cuOccupancyMaxActiveClusters says 0 such clusters fit; use fewer CTAs per "
                      "cluster or less shared memory",
                      rt->info.ordinal, rt->info.name, cluster[0], cluster[1], cluster[2], f->name,
                      threads, l->smem_bytes, f->static_smem_bytes);
    memcpy(f->ok_cluster, cluster, sizeof cluster);
    memcpy(f->ok_block, l->block, sizeof f->ok_block);
    f->ok_smem = l->smem_bytes;
    f->ok_valid = true;
  }

  CUresult r = rt->cu.cuLaunchKernelEx(&cfg, f->fn, args, NULL);
  if (r != CUDA_SUCCESS)
    return hg_cu_fail(&rt->cu, r,
                      "launching kernel %s (cuLaunchKernelEx: grid %" PRIu32 "x%" PRIu32 "x%" PRIu32
                      ", block %" PRIu32 "x%" PRIu32 "x%" PRIu32 ", cluster %" PRIu32 "x%" PRIu32
                      "x%" PRIu32 ", %" PRIu32 " B dynamic smem)",
                      f->name, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
                      l->block[2], cluster[0], cluster[1], cluster[2], l->smem_bytes);
  return hg_ok();
}

hg_status_t hg_rt_max_active_clusters(hg_rt_t *rt, hg_function_t *f, const hg_launch_t *l,
                                      int *out) {
  if (!rt || !f || !l || !out)
    return hg_error(HG_ERR_INVALID, "hg_rt_max_active_clusters needs a runtime, a function, a "
                                    "launch and an output");
  uint32_t cluster[3] = {l->cluster[0], l->cluster[1], l->cluster[2]};
  for (int i = 0; i < 3; i++)
    if (cluster[i] == 0) cluster[i] = 1;
  /* The occupancy query takes a launch configuration; only the cluster shape, block and
   * shared memory matter, the grid is one cluster. */
  hg_launch_t one = *l;
  one.pdl = one.cooperative = false;
  CUlaunchAttribute attr[3];
  CUlaunchConfig cfg;
  HG_TRY(launch_config(rt, f, &one, cluster, cluster, true, attr, &cfg));
  int active = 0;
  CUresult r = rt->cu.cuOccupancyMaxActiveClusters(&active, f->fn, &cfg);
  if (r != CUDA_SUCCESS)
    return hg_cu_fail(&rt->cu, r,
                      "cuOccupancyMaxActiveClusters(%s, cluster %" PRIu32 "x%" PRIu32 "x%" PRIu32
                      ", %" PRIu32 " B dynamic smem)",
                      f->name, cluster[0], cluster[1], cluster[2], l->smem_bytes);
  *out = active;
  return hg_ok();
}
