/* What the GEMM examples share besides their kernels: operands of random bf16 values, a
 * double-precision reference on the host, the comparison, the TMA view of an operand, the
 * PTX summary and ptxas report, and the run-time boilerplate (open the GPU or say why not,
 * JIT-load and launch). Each example's own file builds its kernel with the builder API; this
 * header holds only the glue between the builder calls that every example makes the same way
 * (specs, the barrier initialisation, a consumer thread's part of the C tile). Everything is static
 * inline so that each example compiles it on its own without warnings for what it does not use. */
#ifndef HOPGEN_EXAMPLE_UTIL_H
#define HOPGEN_EXAMPLE_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hopgen/kernels.h"

/* Leave the example with a sentence when a call failed (examples are programs: they may exit). */
#define EX_CHECK(expr)                                                                             \
  do {                                                                                             \
    hg_status_t ex_s_ = (expr);                                                                    \
    if (!hg_is_ok(&ex_s_)) {                                                                       \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, ex_s_.msg);                               \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

/* ---------------------------------------------------------------- kernels */

/* The command line every GEMM example takes: --mlir generates through the MLIR backend
 * (mlir-opt-22) instead of the PTX printer; --emit FILE writes the whole PTX to FILE. */
typedef struct ex_options {
  hg_backend_t backend;
  const char *emit;
} ex_options_t;

static inline ex_options_t ex_options(int argc, char **argv) {
  ex_options_t o = {.backend = HG_BACKEND_PTX, .emit = NULL};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--mlir")) {
      o.backend = HG_BACKEND_MLIR;
    } else if (!strcmp(argv[i], "--emit") && i + 1 < argc) {
      o.emit = argv[++i];
    } else {
      fprintf(stderr, "usage: %s [--mlir] [--emit FILE]\n", argv[0]);
      exit(2);
    }
  }
  return o;
}

/* The builder calls of one kernel, given the host-side plans; sets *threads per CTA. */
typedef hg_status_t (*ex_build_fn)(hg_builder_t *b, const void *plans, int *threads);

/* Create a builder, run build on it, print it through the backend into k. */
static inline hg_status_t ex_generate(const char *name, ex_build_fn build, const void *plans,
                                      hg_backend_t be, hg_kernel_t *k) {
  memset(k, 0, sizeof *k);
  snprintf(k->name, sizeof k->name, "%s", name);
  k->cluster[0] = k->cluster[1] = k->cluster[2] = 1;
  const double t0 = hg_now_ms();
  hg_builder_t *b;
  HG_TRY(hg_builder_create(name, &b));
  int threads = 0;
  hg_status_t s = build(b, plans, &threads);
  if (hg_is_ok(&s)) s = hg_kernel_finish(b, be, k);
  hg_builder_destroy(b);
  k->threads = (uint32_t)threads;
  k->gen_ms = hg_now_ms() - t0;
  if (!hg_is_ok(&s)) hg_kernel_free(k);
  return s;
}

/* The TiledMma of the examples: bf16 x bf16 accumulating in f32 over a tile_m x tile_n x
 * tile_k CTA tile, `consumers` warpgroups along M, the widest swizzle the stages allow. */
static inline hg_tiled_mma_spec_t ex_mma_spec(int tile_m, int tile_n, int tile_k, int consumers,
                                              hg_major_t a_major, hg_major_t b_major) {
  return (hg_tiled_mma_spec_t){.a = HG_BF16,
                               .b = HG_BF16,
                               .acc = HG_F32,
                               .tile_m = tile_m,
                               .tile_n = tile_n,
                               .tile_k = tile_k,
                               .wg_m = consumers,
                               .wg_n = 1,
                               .a_major = a_major,
                               .b_major = b_major,
                               .auto_swizzle = true};
}

/* The persistent scheduler over tile_m x tile_n tiles, no cluster, bands of `group` M-tiles. */
static inline hg_sched_spec_t ex_sched_spec(int tile_m, int tile_n, int group) {
  return (hg_sched_spec_t){.kind = HG_SCHED_PERSISTENT,
                           .tile_m = tile_m,
                           .tile_n = tile_n,
                           .cluster_m = 1,
                           .cluster_n = 1,
                           .raster = HG_RASTER_M,
                           .raster_group = group};
}

/* ceil(x / d) for a run-time x >= 0 and a constant d: the k-blocks of K. */
static inline hg_val_t ex_ceil_div(hg_builder_t *b, hg_val_t x, int d) {
  return hg_b_bin(b, HG_DIV_U, hg_b_bin(b, HG_ADD, x, hg_b_i32(b, d - 1)), hg_b_i32(b, d));
}

static inline hg_val_t ex_add(hg_builder_t *b, hg_val_t x, hg_val_t y) {
  return hg_b_bin(b, HG_ADD, x, y);
}

/* A consumer thread's part of the C tile (CuTe: thr_mma.partition_fragment_C): its f32
 * accumulators; its warpgroup's slot along M (the TiledMma's wm) and the first row of that
 * slot's region; where its first element sits in the tile, from the thread mode of the
 * accumulator layout at its index among the TiledMma's threads; and the map from (row,
 * column) offsets to accumulator indices, which hg_epilogue_emit walks. Release with
 * hg_acc_map_free(&f->map). */
#define EX_MAX_ACC 128
typedef struct ex_frag_c {
  hg_val_t acc[EX_MAX_ACC];
  hg_val_t slot, region_row, row, col;
  hg_acc_map_t map;
} ex_frag_c_t;

static inline hg_status_t ex_frag_c_make(hg_builder_t *b, const hg_mma_builder_t *mma,
                                         const hg_roles_t *r, ex_frag_c_t *f) {
  const hg_tiled_mma_t *tm = &mma->tm;
  const int rows = tm->tile_m / tm->wg_m;
  if (mma->acc_count > EX_MAX_ACC)
    return hg_error(HG_ERR_CAPACITY, "%d accumulators a thread; the examples keep %d",
                    mma->acc_count, EX_MAX_ACC);
  for (int i = 0; i < mma->acc_count; i++) f->acc[i] = hg_b_var(b, HG_T_F32, HG_NONE);
  f->slot = tm->wg_m > 1 ? r->consumer : hg_b_i32(b, 0);
  f->region_row = hg_b_bin(b, HG_MUL, f->slot, hg_b_i32(b, rows));
  HG_TRY(hg_acc_thread_origin(b, tm, hg_b_mad(b, f->slot, hg_b_i32(b, 128), r->wg_tid), &f->row,
                              &f->col));
  return hg_acc_map_make(tm, rows, &f->map);
}

/* How many PTX lines contain `what`, and the first of them (trimmed) into first. */
static inline int ex_count_lines(const char *ptx, const char *what, char *first, size_t size) {
  int count = 0;
  first[0] = '\0';
  for (const char *line = ptx; line && *line;) {
    const char *end = strchr(line, '\n');
    const size_t len = end ? (size_t)(end - line) : strlen(line);
    char buf[512];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf - 1 ? len : sizeof buf - 1), line);
    if (strstr(buf, what) && !strstr(buf, "//") && count++ == 0) {
      /* the line with runs of blanks folded, cut at 100 characters */
      size_t n = 0;
      for (const char *c = buf + strspn(buf, " \t"); *c && n + 1 < size && n < 100; c++)
        if (!((*c == ' ' || *c == '\t') && n && first[n - 1] == ' '))
          first[n++] = *c == '\t' ? ' ' : *c;
      first[n] = '\0';
    }
    line = end ? end + 1 : line + len;
  }
  return count;
}

/* Write the PTX where --emit asked; print the kernel's size, how often each instruction of
 * `key` (NULL-terminated) occurs in its PTX with one example line, and what ptxas says. False when
 * an instruction of `key` is missing or ptxas rejects the PTX; a machine without ptxas skips that
 * check. */
static inline bool ex_show(const hg_kernel_t *k, const char *const *key, const ex_options_t *o) {
  if (o->emit) {
    FILE *f = fopen(o->emit, "w");
    if (!f || fputs(k->ptx.data, f) < 0) fprintf(stderr, "cannot write %s\n", o->emit);
    if (f) fclose(f);
  }
  printf("kernel %s: %u threads, %u bytes of dynamic shared memory, %zu bytes of PTX, built in "
         "%.1f ms\n",
         k->name, k->threads, k->smem_bytes, k->ptx.len, k->gen_ms);
  bool ok = true;
  printf("  key instruction                      PTX lines, the first of them\n");
  for (int i = 0; key[i]; i++) {
    char first[200];
    const int n = ex_count_lines(k->ptx.data, key[i], first, sizeof first);
    printf("  %-36s x%-3d %s\n", key[i], n, n ? first : "(missing)");
    ok = ok && n > 0;
  }
  hg_ptxas_report_t rep;
  hg_status_t s = hg_ptxas_check(k->ptx.data, &rep);
  if (s.code == HG_ERR_TOOL) {
    printf("ptxas -arch=sm_90a: not run (%s)\n", s.msg);
  } else if (!hg_is_ok(&s)) {
    printf("ptxas -arch=sm_90a: REJECTED: %s\n", s.msg);
    ok = false;
  } else {
    printf("ptxas -arch=sm_90a: ok, %d registers, %d bytes spill stores, %d bytes spill loads, "
           "%d bytes stack%s%s\n",
           rep.registers, rep.spill_store_bytes, rep.spill_load_bytes, rep.stack_frame_bytes,
           rep.notes[0] ? "; " : "", rep.notes);
  }
  return ok;
}

/* ---------------------------------------------------------------- the GPU */

/* The runtime, or NULL when there is none to run on: *rc is then the exit code (0: no GPU,
 * the GPU part is skipped after saying so; 1: the driver failed otherwise). */
static inline hg_rt_t *ex_gpu_open(int *rc) {
  hg_rt_t *rt = NULL;
  hg_status_t s = hg_rt_open(0, &rt);
  *rc = 0;
  if (s.code == HG_ERR_NO_DRIVER || s.code == HG_ERR_NO_DEVICE) {
    printf("no GPU to run on (%s): the GPU part is skipped\n", s.msg);
    return NULL;
  }
  if (!hg_is_ok(&s)) {
    fprintf(stderr, "opening the GPU: %s\n", s.msg);
    *rc = 1;
    return NULL;
  }
  printf("running on %s\n", hg_rt_device(rt)->name);
  return rt;
}

/* JIT-load k (through the cache), launch it on a 1-D grid with the parameter values args
 * (in the order the kernel declared them), wait for it and unload it. */
static inline hg_status_t ex_launch(hg_rt_t *rt, const hg_kernel_t *k, uint32_t grid, void **args) {
  hg_module_t *mod;
  hg_function_t *fn;
  HG_TRY(hg_rt_module_load(rt, k->ptx.data, &mod, NULL));
  hg_status_t s = hg_rt_function(rt, mod, k->name, k->smem_bytes, &fn);
  const hg_launch_t l = {.grid = {grid, 1, 1},
                         .block = {k->threads, 1, 1},
                         .cluster = {1, 1, 1},
                         .smem_bytes = k->smem_bytes};
  if (hg_is_ok(&s)) s = hg_rt_launch(rt, fn, &l, args);
  if (hg_is_ok(&s)) s = hg_rt_sync(rt, NULL);
  hg_rt_module_unload(rt, mod);
  return s;
}

/* ---------------------------------------------------------------- matrices */

/* rows x cols of bf16 or f32, cols contiguous, rows ld elements apart (row-major); host
 * values as floats (a bf16 value is exact in a float), and the device copy. */
typedef struct ex_matrix {
  hg_dtype_t dtype;
  int64_t rows, cols, ld;
  float *val; /* rows x ld, NaN in the padding between cols and ld */
  hg_devptr_t dev;
} ex_matrix_t;

static inline uint16_t ex_bf16_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;        /* NaN */
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16); /* round to nearest even */
}

static inline float ex_bf16_value(uint16_t h) {
  const uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* A matrix of uniform values in [-1, 1) (rounded to bf16 for bf16 matrices) from seed; or,
 * with random false, all NaN (an output: whatever the kernel does not write stays NaN). */
static inline void ex_matrix_make(ex_matrix_t *m, hg_dtype_t t, int64_t rows, int64_t cols,
                                  int64_t ld, bool random, uint64_t seed) {
  *m = (ex_matrix_t){.dtype = t, .rows = rows, .cols = cols, .ld = ld};
  m->val = malloc(sizeof(float) * (size_t)(rows * ld));
  if (!m->val) fprintf(stderr, "out of host memory\n"), exit(1);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < rows * ld; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull; /* 64-bit LCG, top bits used */
    const float u = (float)((double)(x >> 40) / (double)(1ull << 24)) * 2.0f - 1.0f;
    const float v = t == HG_BF16 ? ex_bf16_value(ex_bf16_bits(u)) : u;
    m->val[i] = random && i % ld < cols ? v : NAN;
  }
}

static inline size_t ex_matrix_bytes(const ex_matrix_t *m) {
  return (size_t)(m->rows * m->ld) * (size_t)hg_dtype_bytes(m->dtype);
}

/* Allocate the device copy and upload the values. */
static inline hg_status_t ex_matrix_upload(hg_rt_t *rt, ex_matrix_t *m) {
  const size_t n = (size_t)(m->rows * m->ld), bytes = ex_matrix_bytes(m);
  void *buf = malloc(bytes);
  if (!buf) return hg_error(HG_ERR_NOMEM, "out of host memory for %zu bytes", bytes);
  for (size_t i = 0; i < n; i++) {
    if (m->dtype == HG_BF16)
      ((uint16_t *)buf)[i] = ex_bf16_bits(m->val[i]);
    else
      ((float *)buf)[i] = m->val[i];
  }
  hg_status_t s = hg_rt_alloc(rt, bytes, &m->dev);
  if (hg_is_ok(&s)) s = hg_rt_upload(rt, m->dev, buf, bytes);
  free(buf);
  return s;
}

static inline hg_status_t ex_matrix_download(hg_rt_t *rt, ex_matrix_t *m) {
  const size_t n = (size_t)(m->rows * m->ld), bytes = ex_matrix_bytes(m);
  void *buf = malloc(bytes);
  if (!buf) return hg_error(HG_ERR_NOMEM, "out of host memory for %zu bytes", bytes);
  hg_status_t s = hg_rt_download(rt, buf, m->dev, bytes);
  for (size_t i = 0; i < n && hg_is_ok(&s); i++)
    m->val[i] = m->dtype == HG_BF16 ? ex_bf16_value(((uint16_t *)buf)[i]) : ((float *)buf)[i];
  free(buf);
  return s;
}

static inline void ex_matrix_free(hg_rt_t *rt, ex_matrix_t *m) {
  if (rt && m->dev) hg_rt_free(rt, m->dev);
  free(m->val);
  m->val = NULL;
  m->dev = 0;
}

/* The TMA view of a GEMM operand whose MN x K elements are stored in m: K-major (m is MN x K)
 * or MN-major (m is K x MN), as hg_tma_plan_make wants it, modes (MN, K). */
static inline hg_tma_tensor_t ex_tma_operand(const ex_matrix_t *m, bool k_major) {
  hg_tma_tensor_t t = {.dtype = m->dtype, .rank = 2, .base_align_bytes = 16};
  t.shape[0] = k_major ? m->rows : m->cols;
  t.shape[1] = k_major ? m->cols : m->rows;
  t.stride[0] = k_major ? m->ld : 1;
  t.stride[1] = k_major ? 1 : m->ld;
  return t;
}

/* make_tma_copy(SM90_TMA_LOAD, gX, sX): the plan that loads an operand's tile into the stage
 * layout the TiledMma reads (op: the TiledMma's a_op or b_op). */
static inline hg_status_t ex_tma_load_plan(const ex_matrix_t *m, bool k_major,
                                           const hg_gmma_operand_t *op, hg_tma_plan_t *out) {
  const hg_tma_tensor_t t = ex_tma_operand(m, k_major);
  const hg_tma_options_t o = hg_tma_options_default(HG_TMA_LOAD);
  return hg_tma_plan_make(&t, &op->layout, &o, out);
}

/* Upload every matrix of the list (NULL-terminated). */
static inline hg_status_t ex_upload(hg_rt_t *rt, ex_matrix_t *const *all) {
  for (int i = 0; all[i]; i++) HG_TRY(ex_matrix_upload(rt, all[i]));
  return hg_ok();
}

/* Free the matrices of the list (NULL-terminated), the kernel and the runtime (may be NULL). */
static inline void ex_cleanup(hg_rt_t *rt, ex_matrix_t *const *all, hg_kernel_t *k) {
  for (int i = 0; all[i]; i++) ex_matrix_free(rt, all[i]);
  hg_kernel_free(k);
  if (rt) hg_rt_close(rt);
}

/* ---------------------------------------------------------------- the check */

/* An operand of the GEMM: A is M x K, B is N x K (CuTe's and cuBLAS's "TN" view), each
 * K-major (the matrix is MN x K) or MN-major (the matrix is K x MN). */
static inline float ex_operand_at(const ex_matrix_t *m, bool k_major, int64_t mn, int64_t k) {
  return k_major ? m->val[mn * m->ld + k] : m->val[k * m->ld + mn];
}

/* D = alpha * A x B^T + beta * C, in double on the host, compared with the kernel's D
 * (downloaded into d). Prints the relative Frobenius error ||D - ref|| / ||ref|| and the
 * elements the kernel left unwritten (still NaN); true when the error is within tol and D is
 * complete. c may be NULL (beta 0). */
static inline bool ex_check(hg_rt_t *rt, const ex_matrix_t *a, bool a_k_major, const ex_matrix_t *b,
                            bool b_k_major, int64_t k, float alpha, float beta,
                            const ex_matrix_t *c, ex_matrix_t *d, double tol) {
  hg_status_t s = ex_matrix_download(rt, d);
  if (!hg_is_ok(&s)) {
    fprintf(stderr, "downloading D: %s\n", s.msg);
    return false;
  }
  const int64_t m = d->rows, n = d->cols;
  /* Both operands K-contiguous in memory, so each dot product runs along one cache line. */
  float *at = malloc(sizeof(float) * (size_t)(m * k)),
        *bt = malloc(sizeof(float) * (size_t)(n * k));
  if (!at || !bt) fprintf(stderr, "out of host memory\n"), exit(1);
  for (int64_t i = 0; i < m; i++)
    for (int64_t kk = 0; kk < k; kk++) at[i * k + kk] = ex_operand_at(a, a_k_major, i, kk);
  for (int64_t j = 0; j < n; j++)
    for (int64_t kk = 0; kk < k; kk++) bt[j * k + kk] = ex_operand_at(b, b_k_major, j, kk);
  double num = 0, den = 0;
  int64_t unwritten = 0;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double ref = 0;
      for (int64_t kk = 0; kk < k; kk++) ref += (double)at[i * k + kk] * bt[j * k + kk];
      ref *= alpha;
      if (c) ref += (double)beta * c->val[i * c->ld + j];
      const double got = d->val[i * d->ld + j];
      if (!isfinite(got)) {
        unwritten++;
        continue;
      }
      num += (got - ref) * (got - ref);
      den += ref * ref;
    }
  free(at);
  free(bt);
  const double rel = den > 0 ? sqrt(num / den) : sqrt(num);
  const bool ok = unwritten == 0 && rel <= tol;
  printf("D (%lld x %lld, %s) against a double-precision reference: relative error %.3g "
         "(tolerance %.0e), %lld elements unwritten: %s\n",
         (long long)m, (long long)n, hg_dtype_name(d->dtype), rel, tol, (long long)unwritten,
         ok ? "PASS" : "FAIL");
  return ok;
}

#endif
