/* Ahead-of-time export of a GEMM (export.h): the generated kernel plus a launcher in plain
 * C that needs only libcuda. The launcher repeats, with the driver API, what
 * hg_gemm_op_create and hg_gemm_op_run do with hopgen's runtime: the kernel's parameters,
 * the operand tensors as TMA sees them (modes (MN, K, batch), gemm_gen.c's operand_tensor)
 * mapped to tensor-map dimensions by the plan's tmap_mode, and the persistent grid.
 *
 * Layering note: this lives with the kernel generators (it needs hg_gemm_generate and the
 * plans) and writes files; it never calls the runtime. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hopgen/export.h"

/* The driver's tensor-map data type of the element types a GEMM uses (TMA moves 8-bit
 * types as UINT8: the driver has no fp8 type), as the names cuda.h defines. */
static const char *cu_dtype(hg_dtype_t t) {
  switch (t) {
  case HG_F16:
    return "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
  case HG_BF16:
    return "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16";
  case HG_F32:
    return "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";
  default:
    return "CU_TENSOR_MAP_DATA_TYPE_UINT8";
  }
}

static const char *cu_swizzle(hg_swizzle_mode_t s) {
  static const char *names[] = {"CU_TENSOR_MAP_SWIZZLE_NONE", "CU_TENSOR_MAP_SWIZZLE_32B",
                                "CU_TENSOR_MAP_SWIZZLE_64B", "CU_TENSOR_MAP_SWIZZLE_128B"};
  return names[(int)s & 3];
}

static const char *cu_l2(int l2) {
  static const char *names[] = {
      "CU_TENSOR_MAP_L2_PROMOTION_NONE", "CU_TENSOR_MAP_L2_PROMOTION_L2_64B",
      "CU_TENSOR_MAP_L2_PROMOTION_L2_128B", "CU_TENSOR_MAP_L2_PROMOTION_L2_256B"};
  return names[l2 & 3];
}

static hg_status_t check_name(const char *name) {
  if (!name || !*name || strlen(name) > 64 || !(isalpha((unsigned char)name[0]) || name[0] == '_'))
    return hg_error(HG_ERR_INVALID,
                    "export name \"%.80s\" is not a C identifier of 1 to 64 "
                    "characters",
                    name ? name : "");
  for (const char *p = name; *p; p++)
    if (!isalnum((unsigned char)*p) && *p != '_')
      return hg_error(HG_ERR_INVALID, "export name \"%s\": '%c' is not allowed in a C identifier",
                      name, *p);
  return hg_ok();
}

static hg_status_t write_file(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return hg_error(HG_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  const size_t w = fwrite(data, 1, len, f);
  if (fclose(f) != 0 || w != len) return hg_error(HG_ERR_IO, "writing %s failed", path);
  return hg_ok();
}

static hg_status_t read_file(const char *path, uint8_t **data, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return hg_error(HG_ERR_IO, "cannot read %s: %s", path, strerror(errno));
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) break;
    uint8_t *more = realloc(buf, cap * 2);
    if (!more) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = more;
    cap *= 2;
  }
  fclose(f);
  if (!buf) return hg_error(HG_ERR_NOMEM, "no memory to read %s", path);
  *data = buf;
  *len = n;
  return hg_ok();
}

/* The tensor map of plan p in the launcher, inside a block that defines shape[] and
 * stride[] (per tensor mode, elements): the plan's constants (tensor-map dimension order,
 * box, element strides, swizzle, L2 promotion) with the run-time extents and strides. */
static void emit_map(FILE *f, const char *nm, const char *x, const char *base,
                     const hg_tma_plan_t *p, const char *l2) {
  const int r = p->map.rank;
  fprintf(f, "    static const int mode[%d] = {", r);
  for (int d = 0; d < r; d++) fprintf(f, "%s%d", d ? ", " : "", p->tmap_mode[d]);
  fprintf(f, "};\n    static const cuuint32_t box[%d] = {", r);
  for (int d = 0; d < r; d++) fprintf(f, "%s%uu", d ? ", " : "", p->map.box_dim[d]);
  fprintf(f, "};\n    static const cuuint32_t estr[%d] = {", r);
  for (int d = 0; d < r; d++) fprintf(f, "%s%uu", d ? ", " : "", p->map.element_strides[d]);
  fprintf(f,
          "};\n    r = %s_map(&map_%s, %s, %d, %d, %s, shape, stride, mode, box, estr, %s, %s, "
          "\"%s\");\n    if (r != CUDA_SUCCESS) return r;\n  }\n",
          nm, x, cu_dtype(p->map.dtype), hg_dtype_bytes(p->map.dtype), r, base,
          cu_swizzle(p->map.swizzle), l2 ? l2 : cu_l2(p->map.l2_promotion), x);
}

/* The ldX / batch-stride checks and the tensor map of one TMA operand (plan p, the tensor
 * (rows, cols, batch) of `mn` x `k` with leading dimension ld) in the launcher. */
/* An operand the kernel reads with cp.async in chunks of vec bytes: its pitch, batch stride
 * and base must be multiples of the chunk (the kernel's code depends on it). */
static void emit_cp_operand(FILE *f, const char *nm, const char *x, int e, int vec) {
  fprintf(f,
          "  if ((ld%s * %d) %% %d != 0 || (batch > 1 && (bs_%s * %d) %% %d != 0) || args->%s %% "
          "%d != 0)\n"
          "    return %s_fail(CUDA_ERROR_INVALID_VALUE, \"%s: this kernel reads it in %d-byte "
          "chunks (cp.async): its leading dimension, batch stride and address must be multiples "
          "of %d B (ld%s %%lld, at 0x%%llx)\", (long long)ld%s, (unsigned long long)args->%s);\n",
          x, e, vec, x, e, vec, x, vec, nm, x, vec, vec, x, x, x);
}

/* The operand's L2 promotion as the operation chooses it (hg_gemm_operand_l2_promotion) from
 * the run's other extent `other` and K (no split-K in an export): 256 B where that extent
 * fits `span` (one tile, or one cluster's multicast) or K is large, else 128 B. */
static void l2_expr(char *buf, size_t size, const char *other, int64_t span) {
  snprintf(buf, size, "%s > %lld && k < %d ? %s : %s", other, (long long)span,
           HG_GEMM_L2_128B_MAX_K, cu_l2(2), cu_l2(3));
}

static void emit_operand(FILE *f, const char *nm, const char *x, const hg_tma_plan_t *p,
                         const char *mn, bool k_major, const char *l2) {
  const int e = hg_dtype_bytes(p->map.dtype);
  char base[32];
  snprintf(base, sizeof base, "args->%s", x);
  fprintf(f,
          "  if ((ld%s * %d) %% 16 != 0)\n"
          "    return %s_fail(CUDA_ERROR_INVALID_VALUE, \"ld%s = %%lld: ld%s x %d B is not a "
          "multiple of 16 B (TMA's globalStrides rule)\", (long long)ld%s);\n",
          x, e, nm, x, x, e, x);
  fprintf(f,
          "  if (batch > 1 && (bs_%s * %d) %% 16 != 0)\n"
          "    return %s_fail(CUDA_ERROR_INVALID_VALUE, \"batch_stride_%s = %%lld: x %d B is not "
          "a multiple of 16 B (TMA's globalStrides rule)\", (long long)bs_%s);\n",
          x, e, nm, x, e, x);
  fprintf(f,
          "  if (args->%s %% 16 != 0)\n"
          "    return %s_fail(CUDA_ERROR_INVALID_VALUE, \"%s at 0x%%llx is not 16-byte aligned "
          "(TMA's globalAddress rule)\", (unsigned long long)args->%s);\n",
          x, nm, x, x);
  fprintf(f, "  {\n    const int64_t shape[3] = {%s, k, batch};\n", mn);
  fprintf(f,
          "    const int64_t stride[3] = {%s, %s, batch > 1 ? bs_%s : "
          "(ld%s * %s + %d) / %d * %d};\n",
          k_major ? "ld" : "1", k_major ? "1" : "ld", x, x, k_major ? mn : "k", 16 / e - 1, 16 / e,
          16 / e);
  emit_map(f, nm, x, base, p, l2);
}

/* The epilogue pointers a kernel of p reads, for the launcher's comments: "bias, amax". */
static const char *epi_used(const hg_gemm_problem_t *p) {
  static _Thread_local char buf[96];
  buf[0] = '\0';
  const struct {
    bool on;
    const char *name;
  } f[] = {{p->bias != HG_BIAS_NONE, "bias"},
           {p->rowscale, "rowscale"},
           {p->colscale, "colscale"},
           {p->residual, "residual"},
           {hg_dtype_bits(p->d_type) == 8, "scale_d"},
           {p->amax, "amax"},
           {p->aux, "aux"}};
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
    if (f[i].on)
      snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", buf[0] ? ", " : "", f[i].name);
  return buf[0] ? buf : "none of them";
}

static const char *bias_text(const hg_gemm_problem_t *p) {
  static _Thread_local char buf[64];
  if (p->bias == HG_BIAS_NONE) return "none here";
  snprintf(buf, sizeof buf, "%s, one per %s", hg_dtype_name(p->bias_type),
           p->bias == HG_BIAS_N ? "column (N)" : "row (M)");
  return buf;
}

static void emit_header(FILE *f, const char *nm, const hg_gemm_kernel_t *gk, const char *cfg) {
  const hg_gemm_problem_t *p = &gk->problem;
  fprintf(
      f,
      "/* Generated by hopgen (hg_export_gemm): %s, configuration %s.\n"
      " * D (%s, row-major) = alpha * A (%s, %s-major) x B (%s, %s-major) + beta * C%s.\n"
      " * Needs <cuda.h> (CUDA 12.0 or later) to build and libcuda (-lcuda) to run; an\n"
      " * sm_90a GPU. One kernel serves every M, N, K, batch and leading dimension its operand\n"
      " * paths (TMA, or cp.async chunks) can read; NAME_launch refuses others (INVALID_VALUE). "
      "*/\n",
      gk->k.name, cfg, hg_dtype_name(p->d_type), hg_dtype_name(p->a_type), p->a_k_major ? "K" : "M",
      hg_dtype_name(p->b_type), p->b_k_major ? "K" : "N",
      gk->tma_store ? " (D stored with TMA: 16-byte aligned, N and ldd multiples of 16 B)" : "");
  fprintf(f, "#ifndef %s_H_\n#define %s_H_\n\n#include <cuda.h>\n#include <stdint.h>\n\n", nm, nm);
  fprintf(f, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  fprintf(f,
          "typedef struct %s_args {\n"
          "  CUdeviceptr a, b, c, d; /* c may be 0 when beta is 0 */\n"
          "  CUdeviceptr scale_a, scale_b; /* fp8: device pointers to one float each, 0 = 1.0 */\n"
          "  int64_t m, n, k;\n"
          "  int batch; /* 0 means 1 */\n"
          "  /* Leading dimensions in elements, 0: packed. A is %s-major (lda >= %s), B is "
          "%s-major\n"
          "   * (ldb >= %s), C and D row-major (ldc, ldd >= N). */\n"
          "  int64_t lda, ldb, ldc, ldd;\n"
          "  int64_t batch_stride_a, batch_stride_b, batch_stride_c, batch_stride_d; /* 0: "
          "packed */\n"
          "  float alpha, beta;\n"
          "  /* The epilogue's device pointers; this kernel reads %s.\n"
          "   * bias: %s; rowscale [M], colscale [N]: float; residual: C's type (%s), laid out as\n"
          "   * D; scale_d: fp8 D's output scale (one float, 0 = 1.0); amax: one float, written\n"
          "   * with max |D| as stored; aux: the values before the activation (%s),\n"
          "   * row-major at ldaux / batch_stride_aux (0: packed). */\n"
          "  CUdeviceptr bias, rowscale, colscale, residual, scale_d, amax, aux;\n"
          "  int64_t ldaux, batch_stride_aux;\n"
          "  /* With an amax: %d bytes of device memory, 4-byte aligned, that hold the\n"
          "   * kernel's running maxima and arrival count. Zero them once (cuMemsetD8); every\n"
          "   * launch leaves them zero, so no memset precedes a launch. Launches that may\n"
          "   * overlap (other streams) need one each. */\n"
          "  CUdeviceptr amax_state;\n"
          "} %s_args_t;\n\n",
          nm, p->a_k_major ? "K" : "M", p->a_k_major ? "K" : "M", p->b_k_major ? "K" : "N",
          p->b_k_major ? "K" : "N", epi_used(p), bias_text(p), hg_dtype_name(p->c_type),
          p->aux ? hg_dtype_name(p->aux_type) : "none here", HG_AMAX_STATE_BYTES, nm);
  fprintf(f,
          "/* Load the kernel into the current context (once; later calls return at once). */\n"
          "CUresult %s_load(void);\n"
          "/* Check args, encode the tensor maps and launch on stream (asynchronous). Calls\n"
          " * %s_load first if needed. */\n"
          "CUresult %s_launch(const %s_args_t *args, CUstream stream);\n"
          "/* Why the last call failed, one sentence (\"\" after success). */\n"
          "const char *%s_error(void);\n"
          "void %s_unload(void);\n\n",
          nm, nm, nm, nm, nm, nm);
  fprintf(f, "#ifdef __cplusplus\n}\n#endif\n#endif\n");
}

static void emit_source(FILE *f, const char *nm, const hg_gemm_kernel_t *gk, const uint8_t *img,
                        size_t img_len, bool cubin) {
  const hg_gemm_problem_t *p = &gk->problem;
  const hg_gemm_config_t *c = &gk->config;
  const hg_kernel_t *k = &gk->k;
  const int cs = c->cluster_m * c->cluster_n;
  const int ed = hg_dtype_bytes(p->d_type);
  fprintf(f,
          "/* Generated by hopgen (hg_export_gemm): the launcher of %s. See %s.h. */\n"
          "#include \"%s.h\"\n\n#include <stdarg.h>\n#include <stdio.h>\n#include <string.h>\n\n",
          k->name, nm, nm);
  fprintf(f, "/* The kernel as %s (%zu bytes). */\nstatic const unsigned char %s_image[] = {",
          cubin ? "a cubin for sm_90a"
                : "PTX for sm_90a, NUL-terminated (the driver JIT-compiles it)",
          img_len, nm);
  for (size_t i = 0; i < img_len; i++) fprintf(f, "%s0x%02x,", i % 16 ? " " : "\n    ", img[i]);
  fprintf(f, "\n};\n\n");
  fprintf(f,
          "static CUmodule %s_module;\nstatic CUfunction %s_function;\n"
          "static int %s_clusters; /* clusters the device runs at once */\n"
          "static char %s_message[256];\n\n",
          nm, nm, nm, nm);
  fprintf(f,
          "#if defined(__GNUC__)\n__attribute__((format(printf, 2, 3)))\n#endif\n"
          "static CUresult %s_fail(CUresult r, const char *fmt, ...) {\n"
          "  va_list ap;\n  va_start(ap, fmt);\n"
          "  vsnprintf(%s_message, sizeof %s_message, fmt, ap);\n  va_end(ap);\n  return r;\n}\n\n",
          nm, nm, nm);
  fprintf(f, "const char *%s_error(void) {\n  return %s_message;\n}\n\n", nm, nm);
  fprintf(f,
          "void %s_unload(void) {\n  if (%s_module) cuModuleUnload(%s_module);\n"
          "  %s_module = NULL;\n  %s_function = NULL;\n}\n\n",
          nm, nm, nm, nm, nm);
  /* launch configuration shared by the occupancy query and the launch */
  fprintf(f,
          "static void %s_config(CUlaunchConfig *cfg, CUlaunchAttribute *attr, unsigned grid,\n"
          "                      CUstream stream) {\n"
          "  memset(cfg, 0, sizeof *cfg);\n  memset(attr, 0, sizeof *attr);\n"
          "  attr->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;\n"
          "  attr->value.clusterDim.x = %d;\n  attr->value.clusterDim.y = 1;\n"
          "  attr->value.clusterDim.z = 1;\n"
          "  cfg->gridDimX = grid;\n  cfg->gridDimY = 1;\n  cfg->gridDimZ = 1;\n"
          "  cfg->blockDimX = %u;\n  cfg->blockDimY = 1;\n  cfg->blockDimZ = 1;\n"
          "  cfg->sharedMemBytes = %u;\n  cfg->hStream = stream;\n"
          "  cfg->attrs = attr;\n  cfg->numAttrs = 1;\n}\n\n",
          nm, cs, k->threads, k->smem_bytes);
  fprintf(
      f,
      "CUresult %s_load(void) {\n"
      "  CUlaunchConfig cfg;\n  CUlaunchAttribute attr;\n  CUresult r;\n"
      "  %s_message[0] = '\\0';\n"
      "  if (%s_function) return CUDA_SUCCESS;\n"
      "  r = cuModuleLoadData(&%s_module, %s_image);\n"
      "  if (r != CUDA_SUCCESS)\n"
      "    return %s_fail(r, \"cuModuleLoadData(%s) failed with CUresult %%d (an sm_90a "
      "device and a driver for CUDA 12 or later are needed)\", (int)r);\n"
      "  r = cuModuleGetFunction(&%s_function, %s_module, \"%s\");\n"
      "  if (r == CUDA_SUCCESS)\n"
      "    r = cuFuncSetAttribute(%s_function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "
      "%u);\n",
      nm, nm, nm, nm, nm, nm, k->name, nm, nm, k->name, nm, k->smem_bytes);
  if (cs > 8)
    fprintf(f,
            "  if (r == CUDA_SUCCESS)\n"
            "    r = cuFuncSetAttribute(%s_function, "
            "CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);\n",
            nm);
  fprintf(f,
          "  if (r == CUDA_SUCCESS) {\n    %s_config(&cfg, &attr, %d, NULL);\n"
          "    r = cuOccupancyMaxActiveClusters(&%s_clusters, %s_function, &cfg);\n  }\n"
          "  if (r == CUDA_SUCCESS && %s_clusters < 1) r = CUDA_ERROR_INVALID_VALUE;\n"
          "  if (r != CUDA_SUCCESS) {\n    %s_unload();\n"
          "    return %s_fail(r, \"preparing %s (%u B shared memory, %u threads, clusters of %d) "
          "failed with CUresult %%d\", (int)r);\n  }\n  return CUDA_SUCCESS;\n}\n\n",
          nm, cs, nm, nm, nm, nm, nm, k->name, k->smem_bytes, k->threads, cs);
  fprintf(f,
          "static CUresult %s_map(CUtensorMap *map, CUtensorMapDataType type, int esize, int "
          "rank,\n"
          "                       CUdeviceptr base, const int64_t *shape, const int64_t *stride,\n"
          "                       const int *mode, const cuuint32_t *box, const cuuint32_t "
          "*estr,\n"
          "                       CUtensorMapSwizzle sw, CUtensorMapL2promotion l2, const char "
          "*what) {\n"
          "  cuuint64_t dims[5], strides[4];\n  int d;\n  CUresult r;\n"
          "  for (d = 0; d < rank; d++) dims[d] = (cuuint64_t)shape[mode[d]];\n"
          "  for (d = 1; d < rank; d++) strides[d - 1] = (cuuint64_t)(stride[mode[d]] * "
          "esize);\n"
          "  r = cuTensorMapEncodeTiled(map, type, (cuuint32_t)rank, (void *)(uintptr_t)base, "
          "dims, strides,\n"
          "                             box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, sw, l2,\n"
          "                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);\n"
          "  if (r != CUDA_SUCCESS)\n"
          "    return %s_fail(r, \"cuTensorMapEncodeTiled(%%s) failed with CUresult %%d\", what, "
          "(int)r);\n"
          "  return CUDA_SUCCESS;\n}\n\n",
          nm, nm);
  /* the launch */
  fprintf(f,
          "CUresult %s_launch(const %s_args_t *args, CUstream stream) {\n"
          "  CUtensorMap map_a, map_b%s;\n  CUdeviceptr ptr_a = args->a, ptr_b = args->b;\n"
          "  CUlaunchConfig cfg;\n  CUlaunchAttribute attr;\n"
          "  CUresult r;\n"
          "  const int64_t m = args->m, n = args->n, k = args->k;\n"
          "  const int batch = args->batch ? args->batch : 1;\n"
          "  int64_t lda = args->lda ? args->lda : %s, ldb = args->ldb ? args->ldb : %s;\n"
          "  int64_t ldd = args->ldd ? args->ldd : n, ldc = args->ldc ? args->ldc : ldd;\n"
          "  int64_t bs_a = args->batch_stride_a ? args->batch_stride_a : lda * %s;\n"
          "  int64_t bs_b = args->batch_stride_b ? args->batch_stride_b : ldb * %s;\n"
          "  int64_t bs_c = args->batch_stride_c ? args->batch_stride_c : ldc * m;\n"
          "  int64_t bs_d = args->batch_stride_d ? args->batch_stride_d : ldd * m;\n"
          "  CUdeviceptr c = args->c ? args->c : args->d, d = args->d;\n"
          "  float alpha = args->alpha, beta = args->beta;\n"
          "  int32_t m32, n32, k32, batch32;\n  int64_t tiles, clusters;\n",
          nm, nm, gk->tma_store ? (gk->aux_tma ? ", map_d, map_aux" : ", map_d") : "",
          p->a_k_major ? "k" : "m", p->b_k_major ? "k" : "n", p->a_k_major ? "m" : "k",
          p->b_k_major ? "n" : "k");
  if (hg_dtype_bits(p->a_type) == 8)
    fprintf(f, "  CUdeviceptr scale_a = args->scale_a, scale_b = args->scale_b;\n");
  /* the epilogue's pointers this kernel takes */
  const bool d8 = hg_dtype_bits(p->d_type) == 8;
  const struct {
    bool on;
    const char *name;
    int align;
    bool may_be_null;
  } ev[] = {{p->rowscale, "rowscale", 4, false},
            {p->colscale, "colscale", 4, false},
            {p->bias != HG_BIAS_NONE, "bias",
             p->bias != HG_BIAS_NONE ? hg_dtype_bytes(p->bias_type) : 1, false},
            {p->residual, "residual", hg_dtype_bytes(p->c_type), false},
            {d8, "scale_d", 4, true},
            {p->aux, "aux", p->aux ? hg_dtype_bytes(p->aux_type) : 1, false},
            {p->amax, "amax", 4, false},
            {p->amax, "amax_state", 4, false}};
  for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++)
    if (ev[i].on) fprintf(f, "  CUdeviceptr %s = args->%s;\n", ev[i].name, ev[i].name);
  if (p->aux)
    fprintf(f, "  int64_t ldaux = args->ldaux ? args->ldaux : n;\n"
               "  int64_t bs_aux = args->batch_stride_aux ? args->batch_stride_aux : ldaux * m;\n");
  fprintf(f, "  void *params[40];\n  int np = 0;\n");
  fprintf(f,
          "  r = %s_load();\n  if (r != CUDA_SUCCESS) return r;\n"
          "  if (m < 1 || n < 1 || k < 1 || m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || "
          "batch < 1)\n"
          "    return %s_fail(CUDA_ERROR_INVALID_VALUE, \"M = %%lld, N = %%lld, K = %%lld, batch = "
          "%%d: sizes must be 1..2^31-1\", (long long)m, (long long)n, (long long)k, batch);\n"
          "  if (lda < %s || ldb < %s || ldd < n || ldc < n)\n"
          "    return %s_fail(CUDA_ERROR_INVALID_VALUE, \"a leading dimension is below its "
          "matrix's contiguous extent (lda %%lld, ldb %%lld, ldc %%lld, ldd %%lld)\", (long "
          "long)lda, (long long)ldb, (long long)ldc, (long long)ldd);\n"
          "  if (beta != 0.0f && !args->c)\n"
          "    return %s_fail(CUDA_ERROR_INVALID_VALUE, \"beta = %%g but C is a null pointer\", "
          "(double)beta);\n",
          nm, nm, p->a_k_major ? "k" : "m", p->b_k_major ? "k" : "n", nm, nm);
  for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++) {
    if (!ev[i].on) continue;
    if (!ev[i].may_be_null)
      fprintf(f,
              "  if (!%s)\n"
              "    return %s_fail(CUDA_ERROR_INVALID_VALUE, \"this kernel's epilogue reads "
              "args->%s, which is 0\");\n",
              ev[i].name, nm, ev[i].name);
    if (ev[i].align > 1)
      fprintf(f,
              "  if (%s %% %d != 0)\n"
              "    return %s_fail(CUDA_ERROR_INVALID_VALUE, \"args->%s at 0x%%llx is not "
              "aligned to its %d-byte elements\", (unsigned long long)%s);\n",
              ev[i].name, ev[i].align, nm, ev[i].name, ev[i].align, ev[i].name);
  }
  if (p->aux)
    fprintf(f,
            "  if (ldaux < n)\n"
            "    return %s_fail(CUDA_ERROR_INVALID_VALUE, \"ldaux = %%lld is below N = %%lld\", "
            "(long long)ldaux, (long long)n);\n",
            nm);
  /* operand ld names: emit_operand refers to ld<x> and bs_<x> */
  fprintf(f, "  (void)ptr_a;\n  (void)ptr_b;\n  (void)map_a;\n  (void)map_b;\n");
  fprintf(f, "  {\n    const int64_t ld = lda;\n    (void)ld;\n");
  /* the promotion rule's spans (hg_gemm_operand_l2_promotion; exported GEMMs are not
   * grouped) */
  const hg_gemm_config_t *cf = &gk->config;
  char l2a[160], l2b[160];
  l2_expr(l2a, sizeof l2a, "n", (int64_t)cf->tile_n * cf->cluster_n);
  l2_expr(l2b, sizeof l2b, "m", (int64_t)cf->tile_m * cf->cluster_m);
  if (gk->a_tma)
    emit_operand(f, nm, "a", &gk->plan_a, "m", p->a_k_major, l2a);
  else
    emit_cp_operand(f, nm, "a", hg_dtype_bytes(p->a_type), gk->a_vec);
  fprintf(f, "  }\n  {\n    const int64_t ld = ldb;\n    (void)ld;\n");
  if (gk->b_tma)
    emit_operand(f, nm, "b", &gk->plan_b, "n", p->b_k_major, l2b);
  else
    emit_cp_operand(f, nm, "b", hg_dtype_bytes(p->b_type), gk->b_vec);
  fprintf(f, "  }\n");
  if (gk->tma_store) {
    fprintf(f,
            "  if (d %% 16 != 0 || (ldd * %d) %% 16 != 0 || (n * %d) %% 16 != 0 ||\n"
            "      (batch > 1 && (bs_d * %d) %% 16 != 0))\n"
            "    return %s_fail(CUDA_ERROR_INVALID_VALUE, \"this kernel stores D with TMA: D "
            "must be 16-byte aligned and N, ldd (and the batch stride) multiples of 16 B; export "
            "from a problem with d_no_tma for any D\");\n",
            ed, ed, ed, nm);
    fprintf(f, "  {\n    const int64_t ld = ldd;\n    (void)ld;\n");
    const hg_tma_plan_t *pd = &gk->plan_d;
    fprintf(f,
            "    const int64_t shape[3] = {m, n, batch};\n"
            "    const int64_t stride[3] = {ldd, 1, batch > 1 ? bs_d : (ldd * m + %d) / %d * "
            "%d};\n",
            16 / ed - 1, 16 / ed, 16 / ed);
    emit_map(f, nm, "d", "d", pd, NULL);
  }
  if (gk->aux_tma) {
    const int ex = hg_dtype_bytes(p->aux_type);
    fprintf(f,
            "  if (aux %% 16 != 0 || (ldaux * %d) %% 16 != 0 || (batch > 1 && (bs_aux * %d) %% 16 "
            "!= 0))\n"
            "    return %s_fail(CUDA_ERROR_INVALID_VALUE, \"this kernel stores aux with TMA: aux "
            "must be 16-byte aligned and ldaux (and its batch stride) multiples of 16 B; export "
            "from a problem with d_no_tma for any aux\");\n",
            ex, ex, nm);
    fprintf(f,
            "  {\n    const int64_t shape[3] = {m, n, batch};\n"
            "    const int64_t stride[3] = {ldaux, 1, batch > 1 ? bs_aux : (ldaux * m + %d) / %d "
            "* %d};\n",
            16 / ex - 1, 16 / ex, 16 / ex);
    emit_map(f, nm, "aux", "aux", &gk->plan_aux, NULL);
  }
  fprintf(f,
          "  m32 = (int32_t)m;\n  n32 = (int32_t)n;\n  k32 = (int32_t)k;\n  batch32 = batch;\n"
          "%s%s%s"
          "  params[np++] = &d;\n  params[np++] = &c;\n"
          "  params[np++] = &m32;\n  params[np++] = &n32;\n  params[np++] = &k32;\n"
          "  params[np++] = &batch32;\n  params[np++] = &ldc;\n  params[np++] = &ldd;\n"
          "  params[np++] = &bs_c;\n  params[np++] = &bs_d;\n"
          "  params[np++] = &alpha;\n  params[np++] = &beta;\n%s",
          gk->a_tma ? "  params[np++] = &map_a;\n"
                    : "  params[np++] = &ptr_a;\n  params[np++] = &lda;\n  params[np++] = "
                      "&bs_a;\n",
          gk->b_tma ? "  params[np++] = &map_b;\n"
                    : "  params[np++] = &ptr_b;\n  params[np++] = &ldb;\n  params[np++] = "
                      "&bs_b;\n",
          gk->tma_store ? (gk->aux_tma ? "  params[np++] = &map_d;\n  params[np++] = &map_aux;\n"
                                       : "  params[np++] = &map_d;\n")
                        : "",
          hg_dtype_bits(p->a_type) == 8 ? "  params[np++] = &scale_a;\n  params[np++] = &scale_b;\n"
                                        : "");
  /* the epilogue's, in the generator's order (gemm_gen.c) */
  for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++) {
    if (!ev[i].on) continue;
    fprintf(f, "  params[np++] = &%s;\n", ev[i].name);
    if (!strcmp(ev[i].name, "aux"))
      fprintf(f, "  params[np++] = &ldaux;\n  params[np++] = &bs_aux;\n");
  }
  fprintf(f,
          "  (void)np;\n"
          "  /* The persistent grid: as many clusters as run at once, no more than tiles. */\n"
          "  tiles = ((m + %d - 1) / %d) * ((n + %d - 1) / %d) * batch;\n"
          "  clusters = tiles < %s_clusters ? tiles : %s_clusters;\n"
          "  %s_config(&cfg, &attr, (unsigned)(clusters * %d), stream);\n"
          "  r = cuLaunchKernelEx(&cfg, %s_function, params, NULL);\n"
          "  if (r != CUDA_SUCCESS)\n"
          "    return %s_fail(r, \"cuLaunchKernelEx(%s) failed with CUresult %%d\", (int)r);\n"
          "  %s_message[0] = '\\0';\n  return CUDA_SUCCESS;\n}\n",
          c->tile_m * c->cluster_m, c->tile_m * c->cluster_m, c->tile_n * c->cluster_n,
          c->tile_n * c->cluster_n, nm, nm, nm, cs, nm, nm, k->name, nm);
}

static hg_status_t emit_files(const hg_gemm_kernel_t *gk, const hg_export_options_t *o,
                              hg_export_result_t *r) {
  char ptx_path[512], bin_path[512], h_path[512], c_path[512];
  snprintf(ptx_path, sizeof ptx_path, "%s/%s.ptx", o->dir, o->name);
  snprintf(bin_path, sizeof bin_path, "%s/%s.cubin", o->dir, o->name);
  snprintf(h_path, sizeof h_path, "%s/%s.h", o->dir, o->name);
  snprintf(c_path, sizeof c_path, "%s/%s.c", o->dir, o->name);
  HG_TRY(write_file(ptx_path, gk->k.ptx.data, gk->k.ptx.len));
  snprintf(r->files[r->count++], sizeof r->files[0], "%s", ptx_path);
  uint8_t *img = (uint8_t *)gk->k.ptx.data;
  size_t img_len = gk->k.ptx.len + 1; /* the NUL: cuModuleLoadData reads PTX as a C string */
  uint8_t *bin = NULL;
  if (o->cubin) {
    const char *argv[] = {"ptxas", "-arch=sm_90a", "-o", bin_path, ptx_path, NULL};
    hg_status_t s = hg_tool_run(argv, NULL, NULL, NULL);
    if (!hg_is_ok(&s))
      return hg_status_wrap(s, "the cubin needs ptxas from the CUDA toolkit (export without a "
                               "cubin to embed the PTX, which the driver JIT-compiles): ");
    HG_TRY(read_file(bin_path, &bin, &img_len));
    img = bin;
    snprintf(r->files[r->count++], sizeof r->files[0], "%s", bin_path);
    r->has_cubin = true;
  }
  char cfg[128];
  hg_gemm_config_print(&gk->config, cfg, sizeof cfg);
  hg_status_t s = hg_ok();
  FILE *f = fopen(h_path, "w");
  if (!f) s = hg_error(HG_ERR_IO, "cannot write %s: %s", h_path, strerror(errno));
  if (f) {
    emit_header(f, o->name, gk, cfg);
    if (fclose(f) != 0) s = hg_error(HG_ERR_IO, "writing %s failed", h_path);
  }
  if (hg_is_ok(&s)) {
    snprintf(r->files[r->count++], sizeof r->files[0], "%s", h_path);
    f = fopen(c_path, "w");
    if (!f) s = hg_error(HG_ERR_IO, "cannot write %s: %s", c_path, strerror(errno));
  }
  if (hg_is_ok(&s)) {
    emit_source(f, o->name, gk, img, img_len, o->cubin);
    if (fclose(f) != 0) s = hg_error(HG_ERR_IO, "writing %s failed", c_path);
    if (hg_is_ok(&s)) snprintf(r->files[r->count++], sizeof r->files[0], "%s", c_path);
  }
  free(bin);
  if (hg_is_ok(&s))
    snprintf(r->note, sizeof r->note, "%s, configuration %s, %u threads, %u B shared memory; D %s",
             gk->k.name, cfg, gk->k.threads, gk->k.smem_bytes,
             gk->tma_store ? "stored with TMA (16-byte aligned D, N and ldd multiples of 16 B)"
                           : "stored directly (any D)");
  return s;
}

hg_status_t hg_export_gemm(const hg_gemm_problem_t *p, const hg_gemm_config_t *c, hg_backend_t be,
                           const hg_export_options_t *opts, hg_export_result_t *out) {
  if (!p || !opts || !out)
    return hg_error(HG_ERR_INVALID, "hg_export_gemm needs a problem, options and a result");
  memset(out, 0, sizeof *out);
  if (!opts->dir || !*opts->dir) return hg_error(HG_ERR_INVALID, "export: no output directory");
  HG_TRY(check_name(opts->name));
  if (p->scale == HG_SCALE_BLOCK)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "export: fp8 block-wise scaling - the exported launcher takes no scale "
                    "leading dimensions yet (row-wise and per-tensor scales export)");
  if (c && c->splits > 1)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "export: configuration with split-K (k%d) - the exported launcher takes no "
                    "workspace for the partial tiles yet; export the configuration without it",
                    c->splits);
  if (c && c->stream_k)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "export: configuration with stream-K (sk) - the exported launcher takes no "
                    "workspace for the flags and partial tiles yet; export the configuration "
                    "without it");
  if (c && c->swap_ab)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "export: configuration with A and B swapped (sw) - the exported launcher "
                    "passes A and B in the kernel's order, not yet swapped; export the "
                    "configuration without it");
  /* The library's one step from problem to kernel; no device: the heuristic for 132 SMs. The
   * launcher cannot repack (it allocates nothing): operands TMA cannot address are read in
   * place (tma-wgmma's cp.async path) unless the configuration names a mainloop. */
  const hg_gemm_mainloop_t ml =
      c && c->mainloop != HG_MAINLOOP_AUTO ? c->mainloop : HG_MAINLOOP_TMA_WGMMA;
  hg_gemm_kernel_t gk;
  HG_TRY(hg_gemm_build(p, c, ml, NULL, be, &gk));
  hg_status_t s = emit_files(&gk, opts, out);
  hg_gemm_kernel_free(&gk);
  return s;
}
