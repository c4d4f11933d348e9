/* The generators through the MLIR backend: every TMA copy kernel variant of the GPU check
 * matrix (tests/kernels/test_tma_kernels.c: 1/2/4-byte types x swizzles x tile shapes x
 * load / prefetch / multicast 2 and 4 / store / every reduce op the type allows, origins
 * negative in every mode) and a matrix of GEMM configurations (16-bit and fp8 types, every
 * majorness, cooperative and ping-pong, clusters, TMA-store and direct epilogues), each
 * generated with HG_BACKEND_MLIR, lowered by mlir-opt-22, accepted by ptxas -arch=sm_90a,
 * and compared with the same kernel from the PTX backend: the same entry (name, parameter
 * types and order), directives, launch facts, and the same number of each TMA, mbarrier,
 * cluster and wgmma instruction; no local memory. Likewise the streaming copy and its
 * variants. Kernels are built by a few threads, as the lowering is mostly waiting on child
 * processes. */
#include <pthread.h>
#include <stdatomic.h>

#include "hopgen/kernels.h"
#include "test_mlir_util.h"
#include "support/tma_matrix.h"

/* ---------------------------------------------------------------- jobs */

typedef enum { JOB_TMA, JOB_GEMM, JOB_COPY } job_kind_t;

typedef struct job {
  job_kind_t kind;
  hg_tma_spec_t tma;
  bool may_refuse; /* multicast variants the planner may refuse (as the PTX test allows) */
  hg_gemm_problem_t problem;
  hg_gemm_config_t config;
  hg_copy_config_t copy;
  /* results */
  bool ok, refused, skipped; /* skipped: generated only (HOPGEN_TEST_SUBSET) */
  double lower_ms;
  int regs_mlir, regs_ptx;
  char what[200];
  char msg[1400];
} job_t;

static job_t *jobs;
static int njobs, cap_jobs;
static atomic_int next_job;

static job_t *add_job(void) {
  if (njobs == cap_jobs) {
    cap_jobs = cap_jobs ? 2 * cap_jobs : 256;
    job_t *j = realloc(jobs, sizeof *jobs * (size_t)cap_jobs);
    if (!j) {
      fprintf(stderr, "out of memory\n");
      exit(1);
    }
    jobs = j;
  }
  job_t *j = &jobs[njobs++];
  memset(j, 0, sizeof *j);
  return j;
}

/* ---------------------------------------------------------------- comparing the PTX */

/* The parameter list of the entry, names dropped: ".align 64 .b8 [128]|.u64|.u32|..." */
static void entry_signature(const char *ptx, char *out, size_t size) {
  out[0] = '\0';
  const char *e = ptx ? strstr(ptx, ".entry ") : NULL;
  if (!e) return;
  const char *open = strchr(e, '('), *close = open ? strchr(open, ')') : NULL;
  if (!open || !close) return;
  size_t at = 0;
  for (const char *p = open + 1; p < close;) {
    const char *comma = memchr(p, ',', (size_t)(close - p));
    const char *end = comma ? comma : close;
    char decl[200];
    snprintf(decl, sizeof decl, "%.*s", (int)(end - p), p);
    /* the declaration without its name: every token but the last, plus any [size] */
    char *last = strrchr(decl, ' ');
    const char *bracket = strchr(decl, '[');
    char norm[200] = "";
    if (last) {
      *last = '\0';
      const char *d = decl;
      while (*d == '\n' || *d == '\t' || *d == ' ') d++;
      snprintf(norm, sizeof norm, "%s%s", d, bracket ? bracket : "");
    }
    int n = snprintf(out + at, size - at, "%s%s", at ? "|" : "", norm);
    if (n > 0) at = (size_t)n < size - at ? at + (size_t)n : size - 1;
    p = end + 1;
  }
}

/* The performance-tuning and cluster directives, in order. */
static void directives(const char *ptx, char *out, size_t size) {
  out[0] = '\0';
  size_t at = 0;
  for (const char *line = ptx; line && *line;) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    if (!strncmp(line, ".reqntid", 8) || !strncmp(line, ".maxntid", 8) ||
        !strncmp(line, ".minnctapersm", 13) || !strncmp(line, ".explicitcluster", 16) ||
        !strncmp(line, ".reqnctapercluster", 18) || !strncmp(line, ".maxnreg", 8)) {
      int n = snprintf(out + at, size - at, "%.*s;", (int)len, line);
      if (n > 0) at = (size_t)n < size - at ? at + (size_t)n : size - 1;
    }
    line = nl ? nl + 1 : NULL;
  }
}

static const char *const counted[] = {
    "redux.sync.",
    "cp.async.bulk.tensor.",
    "cp.reduce.async.bulk.tensor.",
    "cp.async.bulk.prefetch.tensor.",
    ".multicast::cluster",
    ".L2::cache_hint",
    "mbarrier.init.",
    "mbarrier.arrive.expect_tx.",
    "mbarrier.try_wait",
    "mapa.",
    "barrier.cluster.arrive",
    "barrier.cluster.wait",
    "fence.proxy.async",
    "fence.mbarrier_init",
    "cp.async.bulk.commit_group",
    "cp.async.bulk.wait_group",
    "wgmma.fence",
    "wgmma.mma_async",
    "wgmma.commit_group",
    "wgmma.wait_group",
    "setmaxnreg.",
    "stmatrix.",
    "elect.sync",
};

/* The streaming copy's threaded forms: their vector copies, counted as well (only for the
 * copy: elsewhere LLVM may merge or split plain loads and stores). */
static const char *const copy_counted[] = {
    "ld.shared.v4", "ld.global.v4", "st.global.v4", "st.global.cs.v4", "mbarrier.arrive",
};

/* Every wgmma.mma_async sits in a basic block with a wgmma.fence or commit_group: the
 * convergent calls that keep LLVM from duplicating the (inline-assembly, non-convergent)
 * wgmma into divergent paths (see mlir.c). Blocks end at labels and branches. */
static bool wgmma_blocks_ok(const char *ptx) {
  bool guarded = false;
  int pending = 0; /* wgmmas seen in the current block */
  for (const char *line = ptx; line && *line;) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
    bool is_label = len && line[len - 1] == ':' && line[0] == '$';
    if (is_label) {
      if (pending && !guarded) return false;
      guarded = false;
      pending = 0;
    }
    if (strstr(buf, "wgmma.fence") || strstr(buf, "wgmma.commit_group")) guarded = true;
    if (strstr(buf, "wgmma.mma_async")) pending++;
    if (strstr(buf, "bra") && strchr(buf, '$')) { /* a branch ends the block */
      if (pending && !guarded) return false;
      guarded = false;
      pending = 0;
    }
    line = nl ? nl + 1 : NULL;
  }
  return !(pending && !guarded);
}

#define APPEND(j, ...)                                                                             \
  do {                                                                                             \
    size_t at_ = strlen((j)->msg);                                                                 \
    if (at_ + 1 < sizeof(j)->msg) snprintf((j)->msg + at_, sizeof(j)->msg - at_, __VA_ARGS__);     \
  } while (0)

/* Everything the two kernels must share; a difference goes into j->msg. */
static void compare(job_t *j, const hg_kernel_t *kp, const hg_kernel_t *km,
                    const hg_ptxas_report_t *rep) {
  char sp[1024], sm[1024];
  entry_signature(kp->ptx.data, sp, sizeof sp);
  entry_signature(km->ptx.data, sm, sizeof sm);
  if (strcmp(sp, sm)) APPEND(j, " parameters differ: ptx (%.400s) mlir (%.400s);", sp, sm);
  char entry[200];
  snprintf(entry, sizeof entry, ".visible .entry %s(", km->name);
  if (!strstr(km->ptx.data, entry)) APPEND(j, " no entry '%s';", km->name);
  directives(kp->ptx.data, sp, sizeof sp);
  directives(km->ptx.data, sm, sizeof sm);
  if (strcmp(sp, sm)) APPEND(j, " directives differ: ptx %.300s mlir %.300s;", sp, sm);
  if (kp->smem_bytes != km->smem_bytes || kp->threads != km->threads ||
      memcmp(kp->cluster, km->cluster, sizeof kp->cluster) || strcmp(kp->name, km->name))
    APPEND(j, " launch facts differ;");
  for (size_t c = 0; c < sizeof counted / sizeof counted[0]; c++) {
    int a = mlir_count(kp->ptx.data, counted[c]), b = mlir_count(km->ptx.data, counted[c]);
    if (a != b) APPEND(j, " %d x '%s' in ptx, %d in mlir;", a, counted[c], b);
  }
  for (size_t c = 0; j->kind == JOB_COPY && c < sizeof copy_counted / sizeof copy_counted[0]; c++) {
    int a = mlir_count(kp->ptx.data, copy_counted[c]),
        b = mlir_count(km->ptx.data, copy_counted[c]);
    if (a != b) APPEND(j, " %d x '%s' in ptx, %d in mlir;", a, copy_counted[c], b);
  }
  if (strstr(km->ptx.data, ".local") || rep->stack_frame_bytes || rep->spill_store_bytes ||
      rep->spill_load_bytes)
    APPEND(j, " local memory (stack %d B, spills %d/%d B);", rep->stack_frame_bytes,
           rep->spill_store_bytes, rep->spill_load_bytes);
  if (strstr(rep->notes, "serialized")) APPEND(j, " ptxas: %s;", rep->notes);
  if (!wgmma_blocks_ok(km->ptx.data))
    APPEND(j, " a wgmma.mma_async shares no basic block with a wgmma.fence/commit_group;");
  if (!km->mlir.data || !strstr(km->mlir.data, "gpu.module @hopgen"))
    APPEND(j, " the kernel does not carry its MLIR;");
}

/* The job's kernel through backend be (for a GEMM, its hg_kernel_t taken out). */
static hg_status_t generate(job_t *j, hg_backend_t be, hg_kernel_t *k) {
  *k = (hg_kernel_t){0};
  if (j->kind == JOB_TMA) return hg_tma_generate(&j->tma, be, k, NULL);
  if (j->kind == JOB_COPY) return hg_gen_copy(&j->copy, be, k);
  hg_gemm_kernel_t g;
  hg_status_t s = hg_gemm_generate(&j->problem, &j->config, be, &g);
  if (hg_is_ok(&s)) {
    *k = g.k;
    g.k = (hg_kernel_t){0};
    hg_gemm_kernel_free(&g);
  }
  return s;
}

static void run_job(job_t *j) {
  hg_kernel_t kp = {0}, km = {0};
  hg_status_t s = generate(j, HG_BACKEND_PTX, &kp);
  if (!hg_is_ok(&s)) {
    if (j->may_refuse && s.code == HG_ERR_INVALID &&
        (strstr(s.msg, "cluster") || strstr(s.msg, "multicast"))) {
      j->refused = j->ok = true;
      /* the MLIR backend refuses the same spec with the same sentence */
      hg_status_t m = generate(j, HG_BACKEND_MLIR, &km);
      if (m.code != s.code || strcmp(m.msg, s.msg)) {
        j->ok = false;
        snprintf(j->msg, sizeof j->msg, "refused differently: ptx '%.500s', mlir '%.500s'", s.msg,
                 m.msg);
      }
      hg_kernel_free(&km);
      return;
    }
    snprintf(j->msg, sizeof j->msg, "PTX backend: %s", s.msg);
    return;
  }
  if (!hg_test_sampled(j - jobs)) { /* the PTX generation ran; the tools only on a sample */
    j->ok = j->skipped = true;
    goto out;
  }
  double t0 = mlir_test_now_ms();
  s = generate(j, HG_BACKEND_MLIR, &km);
  j->lower_ms = mlir_test_now_ms() - t0;
  if (!hg_is_ok(&s)) {
    snprintf(j->msg, sizeof j->msg, "MLIR backend: %s", s.msg);
    goto out;
  }
  hg_ptxas_report_t rep, rp;
  s = hg_ptxas_check(km.ptx.data, &rep);
  if (!hg_is_ok(&s)) {
    snprintf(j->msg, sizeof j->msg, "ptxas rejected the MLIR backend's PTX: %s", s.msg);
    goto out;
  }
  j->regs_mlir = rep.registers;
  if (j->kind == JOB_GEMM && hg_ptxas_check(kp.ptx.data, &rp).code == HG_OK)
    j->regs_ptx = rp.registers;
  compare(j, &kp, &km, &rep);
  j->ok = j->msg[0] == '\0';
out:
  hg_kernel_free(&kp);
  hg_kernel_free(&km);
}

static void *worker(void *arg) {
  (void)arg;
  for (;;) {
    int i = atomic_fetch_add(&next_job, 1);
    if (i >= njobs) return NULL;
    run_job(&jobs[i]);
  }
}

static void run_all(void) {
  int threads = 4;
  const char *env = getenv("HG_TEST_JOBS");
  if (env && atoi(env) > 0) threads = atoi(env);
  pthread_t t[16];
  if (threads > 16) threads = 16;
  atomic_store(&next_job, 0);
  for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
}

/* ---------------------------------------------------------------- the matrices */

/* The matrix tests/kernels/test_tma_kernels.c assembles through the PTX backend
 * (tests/support/tma_matrix.c), here through MLIR. */
static void add_tma_job(const hg_tma_spec_t *s, void *ctx) {
  (void)ctx;
  job_t *j = add_job();
  j->kind = JOB_TMA;
  j->tma = *s;
  j->may_refuse = s->cluster > 1;
  hg_tma_spec_print(s, j->what, sizeof j->what);
}

static void add_tma_matrix(void) {
  tma_matrix_for_each(add_tma_job, NULL);
}

/* N of the next add_gemm_output jobs: 4097 makes D's (and aux's) rows unfit for TMA, so they
 * are staged through shared memory and copied out row by row. */
static int64_t out_n = 4096;
/* A JOB_GEMM of problem p under configuration text `config`, s the status of what the caller
 * parsed into p first (a chain): the text, p (normalised here) and the pair checked, one check
 * counted. Anything refused fails the test (tag before the sentence), except where
 * skip_refused a pair the generator does not build for p, which is skipped. NULL without a
 * job; the caller names the job. */
static job_t *add_gemm_job(hg_gemm_problem_t p, hg_status_t s, const char *config,
                           bool skip_refused, const char *tag) {
  hg_gemm_config_t c;
  if (hg_is_ok(&s)) s = hg_gemm_config_parse(config, &c);
  hg_test_checks++;
  if (!hg_is_ok(&s)) {
    HG_FAIL("%s: %s", tag, s.msg);
    return NULL;
  }
  s = hg_gemm_problem_normalize(&p);
  if (hg_is_ok(&s)) s = hg_gemm_config_check(&p, &c);
  if (!hg_is_ok(&s)) {
    if (!skip_refused) HG_FAIL("%s: %s", tag, s.msg);
    return NULL;
  }
  job_t *j = add_job();
  j->kind = JOB_GEMM;
  j->problem = p;
  j->config = c;
  return j;
}

/* aux's type for the next add_gemm_output jobs (0: D's, bf16 for fp8 D) */
static hg_dtype_t out_aux;

/* Issue 12's output conversions: fp8 D (saturating cvt), C of another type, the aux output
 * (through TMA when of D's element size) and the amax (redux.sync, red.global.max), on top of
 * an epilogue chain. */
static void add_gemm_output(hg_dtype_t ab, hg_dtype_t d, hg_dtype_t c_type, const char *chain,
                            bool aux, bool amax, const char *config) {
  hg_gemm_problem_t p = {.m = 4096,
                         .n = out_n,
                         .k = 4096,
                         .batch = 1,
                         .a_type = ab,
                         .b_type = ab,
                         .d_type = d,
                         .a_k_major = true,
                         .b_k_major = true,
                         .alpha = 1.0f,
                         .beta = 0.5f,
                         .c_type = c_type,
                         .aux = aux,
                         .aux_type = out_aux,
                         .amax = amax};
  const hg_status_t s = hg_gemm_epilogue_parse(chain, &p);
  p.bias_type = HG_BF16;
  char tag[96];
  snprintf(tag, sizeof tag, "%s %s", chain, config);
  job_t *j = add_gemm_job(p, s, config, false, tag);
  if (!j) return;
  snprintf(j->what, sizeof j->what, "gemm %s->%s c=%s %s%s%s %s", hg_dtype_name(ab),
           hg_dtype_name(d), hg_dtype_name(j->problem.c_type), chain, aux ? " aux" : "",
           amax ? " amax" : "", config);
  if (out_n != 4096)
    snprintf(j->what + strlen(j->what), sizeof j->what - strlen(j->what), " N=%lld",
             (long long)out_n);
}
/* fp8's accumulation for the jobs added next (ACCURATE, promote 0: the defaults) */
static hg_gemm_fp8_accum_t fp8_accum;
static int fp8_promote;
static hg_gemm_scale_t fp8_scale;

static void add_gemm_k(hg_dtype_t a, hg_dtype_t b, hg_dtype_t d, bool ak, bool bk, bool d_no_tma,
                       const char *config, int64_t k) {
  hg_gemm_problem_t p = {.m = 4096,
                         .n = 4096,
                         .k = k,
                         .batch = 1,
                         .a_type = a,
                         .b_type = b,
                         .d_type = d,
                         .a_k_major = ak,
                         .b_k_major = bk,
                         .alpha = 1.0f,
                         .beta = 0.5f,
                         .d_no_tma = d_no_tma,
                         .fp8_accum = fp8_accum,
                         .fp8_promote = fp8_promote,
                         .scale = hg_dtype_bits(a) == 8 ? fp8_scale : HG_SCALE_TENSOR};
  /* a pair the generator does not build is skipped */
  job_t *j = add_gemm_job(p, hg_ok(), config, true, config);
  if (!j) return;
  p = j->problem;
  const char *mode = hg_dtype_bits(a) != 8              ? ""
                     : p.scale == HG_SCALE_BLOCK        ? " block-scaled"
                     : p.scale == HG_SCALE_ROW          ? " row-scaled"
                     : p.fp8_accum == HG_FP8_ACCUM_FAST ? " fast"
                     : p.fp8_promote == 1               ? " promote-1"
                                                        : " promote-4";
  snprintf(j->what, sizeof j->what, "gemm %s.%s->%s %c%c%s K=%lld %s%s", hg_dtype_name(a),
           hg_dtype_name(b), hg_dtype_name(d), ak ? 't' : 'n', bk ? 'n' : 't',
           d_no_tma ? " direct-D" : "", (long long)k, config, mode);
}

static void add_gemm(hg_dtype_t a, hg_dtype_t b, hg_dtype_t d, bool ak, bool bk, bool d_no_tma,
                     const char *config) {
  add_gemm_k(a, b, d, ak, bk, d_no_tma, config, 4096);
}

/* The decode kernel (ldg-mmasync): M of 16 rows against weights (and A) of ldb elements a row
 * (ldb odd: every row its own offset in its 16-byte block, the window loads and shifts; LLVM
 * spills 16x32x32 window tiles with a GELU chain and 16x64 tiles under the 128 registers of two
 * CTAs an SM, ptxas does not: 16x16 here), its chain through the GEMM's direct epilogue, split-K by
 * atomics when the configuration says so. */
static void add_decode(hg_dtype_t ab, hg_dtype_t d, const char *chain, int64_t ldb, bool amax,
                       const char *config) {
  hg_gemm_problem_t p = {.m = 16,
                         .n = 7168,
                         .k = 2049,
                         .batch = 1,
                         .a_type = ab,
                         .b_type = ab,
                         .d_type = d,
                         .a_k_major = true,
                         .b_k_major = true,
                         .lda = ldb,
                         .ldb = ldb,
                         .alpha = 1.0f,
                         .beta = 0.5f,
                         .amax = amax};
  const hg_status_t s = hg_gemm_epilogue_parse(chain, &p);
  p.bias_type = HG_BF16;
  char tag[96];
  snprintf(tag, sizeof tag, "decode %s %s", chain, config);
  job_t *j = add_gemm_job(p, s, config, false, tag);
  if (!j) return;
  snprintf(j->what, sizeof j->what, "gemm decode %s->%s %s%s ldb=%lld %s", hg_dtype_name(ab),
           hg_dtype_name(d), chain, amax ? " amax" : "", (long long)ldb, config);
}

/* A grouped GEMM (mixture of experts): the scheduler's shared-memory tables and search, the
 * group's row bound on D, per-group fp8 B scales. */
static void add_grouped(hg_dtype_t ab, hg_dtype_t d, hg_gemm_group_t group, int groups, bool row,
                        const char *config) {
  hg_gemm_problem_t p = {.m = 4096,
                         .n = 4096,
                         .k = 7168,
                         .batch = groups,
                         .a_type = ab,
                         .b_type = ab,
                         .d_type = d,
                         .a_k_major = true,
                         .b_k_major = true,
                         .alpha = 1.0f,
                         .group = group,
                         .fp8_accum = fp8_accum,
                         .rowscale = row,
                         .colscale = row,
                         .scale = hg_dtype_bits(ab) == 8 ? fp8_scale : HG_SCALE_TENSOR};
  char tag[96];
  snprintf(tag, sizeof tag, "grouped %s", config);
  job_t *j = add_gemm_job(p, hg_ok(), config, false, tag);
  if (!j) return;
  snprintf(j->what, sizeof j->what, "grouped %s %s->%s %d groups%s %s",
           group == HG_GROUP_CONTIGUOUS ? "contiguous" : "masked", hg_dtype_name(ab),
           hg_dtype_name(d), groups,
           row                                  ? " row-wise"
           : j->problem.scale == HG_SCALE_BLOCK ? " block-scaled"
                                                : "",
           config);
}

/* Configurations as text: tile, cluster, stages, schedule (the default is cooperative),
 * raster, epilogue width. */
static void add_gemm_matrix(void) {
  static const char *const configs16[] = {
      "128x256x64,c2x1,s4,m8,e64", "128x128x64,c1x2,s5,pp,n4,e0", "64x128x64,c1x1,s6,m8,e0",
      "256x128x64,c2x1,s3,m8,e32", "128x64x32,c1x1,s8,pp,m1,e0",  "128x192x64,c1x1,s4,m8,e64"};
  static const char *const configs8[] = {
      "128x256x128,c2x1,s4,m8,e64", "128x128x128,c1x2,s5,pp,n4,e0", "64x256x128,c1x1,s4,m8,e0"};
  static const hg_dtype_t d16[] = {HG_BF16, HG_F32, HG_F16};
  for (int t = 0; t < 2; t++) {
    hg_dtype_t ab = t ? HG_F16 : HG_BF16;
    for (int maj = 0; maj < 4; maj++)
      for (size_t c = 0; c < sizeof configs16 / sizeof configs16[0]; c++)
        add_gemm(ab, ab, d16[(maj + c + t) % 3], maj & 1, maj & 2, false, configs16[c]);
  }
  /* the direct-store epilogue */
  add_gemm(HG_BF16, HG_BF16, HG_BF16, true, true, true, configs16[0]);
  add_gemm(HG_F16, HG_F16, HG_F32, false, true, true, configs16[1]);
  static const hg_dtype_t f8[][3] = {
      {HG_E4M3, HG_E4M3, HG_BF16}, {HG_E4M3, HG_E5M2, HG_F32}, {HG_E5M2, HG_E5M2, HG_F16}};
  /* fp8: the whole K in wgmma's accumulator (fast), and its partial sums promoted into f32
   * every k-block or every 4 (accurate) on tiles whose two accumulator sets fit */
  fp8_accum = HG_FP8_ACCUM_FAST;
  for (size_t t = 0; t < sizeof f8 / sizeof f8[0]; t++)
    for (size_t c = 0; c < sizeof configs8 / sizeof configs8[0]; c++)
      add_gemm(f8[t][0], f8[t][1], f8[t][2], true, true, t == 1 && c == 0, configs8[c]);
  fp8_accum = HG_FP8_ACCUM_ACCURATE;
  static const char *const configs8_acc[] = {
      "128x128x128,c2x1,s4,m8,e64", "64x128x128,c1x2,s5,pp,n4,e0", "128x192x128,c1x1,s4,m8,e0"};
  for (size_t t = 0; t < sizeof f8 / sizeof f8[0]; t++)
    for (size_t c = 0; c < sizeof configs8_acc / sizeof configs8_acc[0]; c++) {
      fp8_promote = (t + c) % 2 ? 1 : 4;
      add_gemm_k(f8[t][0], f8[t][1], f8[t][2], true, true, false, configs8_acc[c], 4096 + 64);
    }
  /* staggered promotions: the second consumer's group counter starts at promote / 2 */
  fp8_promote = 3;
  add_gemm_k(HG_E4M3, HG_E4M3, HG_BF16, true, true, false, "128x176x128,c2x1,s4,ps", 4096 + 64);
  fp8_promote = 0;
  add_gemm_k(HG_E4M3, HG_E5M2, HG_F32, true, true, false, "256x64x128,c1x1,s4,ps", 4096);
  /* two partial sets: unrolled bodies of two groups, then the k-blocks left */
  fp8_promote = 2;
  add_gemm_k(HG_E4M3, HG_E4M3, HG_BF16, true, true, false, "128x128x128,c2x1,s4,pd", 4096 + 64);
  fp8_promote = 0;
  /* fp8 row-wise scales (epilogue vectors) and block-wise ones (main loop), split-K too */
  fp8_scale = HG_SCALE_ROW;
  add_gemm_k(HG_E4M3, HG_E4M3, HG_BF16, true, true, false, "128x176x128,c2x1,s4", 4096);
  add_gemm_k(HG_E4M3, HG_E5M2, HG_F32, true, true, false, "64x128x128,pp,s4", 4096);
  fp8_scale = HG_SCALE_BLOCK;
  add_gemm_k(HG_E4M3, HG_E4M3, HG_BF16, true, true, false, "128x128x128,c2x1,s4", 4112);
  add_gemm_k(HG_E5M2, HG_E4M3, HG_F16, true, true, false, "64x128x128,pp,s5", 4096);
  add_gemm_k(HG_E4M3, HG_E4M3, HG_F32, true, true, false, "128x64x128,s4,k3", 16384);
  add_gemm_k(HG_E4M3, HG_E4M3, HG_BF16, true, true, false, "128x128x128,c2x1,s4,pd", 4112);
  /* staged block scales: the producer's second warp copies them into each stage */
  add_gemm_k(HG_E4M3, HG_E4M3, HG_BF16, true, true, false, "128x128x128,c2x1,s6,e32,bs", 4112);
  add_gemm_k(HG_E4M3, HG_E5M2, HG_F32, true, true, false, "64x128x128,pp,s5,bs", 4096);
  add_gemm_k(HG_E4M3, HG_E4M3, HG_BF16, true, true, false, "128x128x128,c2x1,s4,pd,bs", 4112);
  /* MMA turns between the two consumers (bar.sync / bar.arrive around each k-block's MMAs) */
  add_gemm_k(HG_E4M3, HG_E4M3, HG_BF16, true, true, false, "128x128x128,c2x1,s6,e32,pt,bs", 4112);
  /* tiles of 192 columns: two of B's scale blocks a tile, a factor per 64-column run */
  add_gemm_k(HG_E4M3, HG_E4M3, HG_BF16, true, true, false, "128x192x128,c2x1,s4,bs", 4112);
  add_gemm_k(HG_E4M3, HG_E4M3, HG_BF16, true, true, false, "128x192x128,c1x2,s4", 4096);
  fp8_scale = HG_SCALE_TENSOR;
  /* two swizzle spans a stage row (16-bit tile K 128): two TMA boxes an operand a stage */
  add_gemm_k(HG_BF16, HG_BF16, HG_BF16, true, true, false, "64x128x128,c1x1,s4", 4096);
  add_gemm_k(HG_F16, HG_F16, HG_F32, true, true, false, "128x128x128,c2x1,s3,k3", 16384);
  /* window copies of 2- and 1-byte aligned rows, 8 chunks a round (one consumer warpgroup) */
  add_gemm_k(HG_BF16, HG_BF16, HG_BF16, true, true, false, "64x128x64,c1x1,s4,cpasync-wgmma", 4097);
  add_gemm_k(HG_E4M3, HG_E4M3, HG_BF16, true, true, false, "64x128x128,c1x1,s4,cpasync-wgmma",
             4097);
  /* The other three mainloops of the builders layer, every layout, with aligned operands
   * (TMA) and with K = 4097 (rows TMA cannot address: cp.async, 16-byte window copies for
   * K-major operands), and fp8 through cp.async. */
  static const char *const combos[] = {"128x128x64,c1x1,s4,cpasync-wgmma",
                                       "128x128x64,c1x1,s4,pp,tma-mmasync",
                                       "128x192x64,c1x1,s4,tma-ldmatrix-wgmma-rs"};
  for (size_t c = 0; c < sizeof combos / sizeof combos[0]; c++)
    for (int maj = 0; maj < 4; maj++)
      for (int odd = 0; odd < 2; odd++)
        add_gemm_k(maj & 1 ? HG_BF16 : HG_F16, maj & 1 ? HG_BF16 : HG_F16, d16[(maj + c) % 3],
                   maj & 1, maj & 2, false, combos[c], odd ? 4097 : 4096);
  add_gemm_k(HG_E4M3, HG_E4M3, HG_BF16, true, true, false, "128x128x128,c1x1,s4", 4097);
  add_gemm_k(HG_E4M3, HG_E4M3, HG_F32, true, true, false, "128x128x128,c1x1,s4,cpasync-wgmma",
             4104);
  add_gemm_output(HG_BF16, HG_E4M3, HG_F32, "bias,gelu", true, true, "128x128x64,c1x1,s4");
  add_gemm_output(HG_E4M3, HG_E5M2, 0, "rowscale,relu,residual", false, true,
                  "64x128x128,c1x1,s4,pp");
  add_gemm_output(HG_BF16, HG_BF16, HG_F16, "bias,silu", true, true, "128x256x64,c2x1,s4,e64");
  /* staged D and aux (rows of 4097 elements): bf16 with aux, fp8 with amax, f32 on a
   * full-width unswizzled sub-tile, ping-pong */
  out_n = 4097;
  add_gemm_output(HG_BF16, HG_BF16, 0, "bias,gelu", true, true, "128x256x64,c2x1,s4");
  add_gemm_output(HG_BF16, HG_E4M3, 0, "bias,relu", false, true, "128x128x64,c1x1,s4");
  add_gemm_output(HG_BF16, HG_F32, 0, "gelu_tanh", true, false, "128x176x64,c2x1,s4");
  add_gemm_output(HG_BF16, HG_F16, 0, "silu", true, false, "128x128x64,pp");
  /* aux of another element size than D's, in pieces of D's buffers (TMA, staged), and a
   * 128x192 ping-pong tile whose GELU runs inside D's write */
  out_aux = HG_F32;
  /* (on 128x256 tiles LLVM spills 8 bytes beside the staged D and f32 aux: ptxas does not) */
  add_gemm_output(HG_BF16, HG_BF16, 0, "bias,gelu", true, false, "128x128x64,c1x1,s4");
  out_n = 4096;
  add_gemm_output(HG_BF16, HG_BF16, 0, "bias,gelu", true, false, "128x256x64,c2x1,s4");
  add_gemm_output(HG_BF16, HG_E4M3, 0, "bias,silu", true, true, "128x128x64,c1x1,s4");
  out_aux = (hg_dtype_t)0;
  add_gemm_output(HG_BF16, HG_BF16, 0, "bias,gelu", false, false, "128x192x64,pp");
  /* the decode kernel: aligned and window rows, split by atomics, chains, fp8 D's amax */
  add_decode(HG_BF16, HG_BF16, "none", 2056, false, "16x32x96,ldg-mmasync");
  add_decode(HG_F16, HG_F32, "bias,gelu", 2049, false, "16x16x32,k4a,ldg-mmasync");
  add_decode(HG_BF16, HG_E4M3, "residual", 2051, true, "16x16x32,ldg-mmasync");
  add_decode(HG_BF16, HG_BF16, "bias_m,silu", 2056, false, "16x32x64,k3a,ldg-mmasync");
  /* fp8: m16n8k32 as inline assembly (MLIR 22's nvvm.mma.sync refuses e4m3/e5m2), PTX 8.4 */
  add_decode(HG_E4M3, HG_BF16, "bias,gelu", 2064, false, "16x16x192,k4a,ldg-mmasync");
  add_decode(HG_E5M2, HG_F32, "none", 2049, false, "16x16x64,ldg-mmasync");
  /* the full iterations pipelined in registers (s2): loop-carried words, loads after MMAs */
  add_decode(HG_BF16, HG_BF16, "bias,gelu", 2056, false, "16x32x64,s2,ldg-mmasync");
  add_decode(HG_F16, HG_F16, "none", 2049, false, "16x16x32,s2,k2a,ldg-mmasync");
  /* split-K: the arrival counter (atomicrmw, fences) and the partial tiles */
  add_gemm_k(HG_BF16, HG_BF16, HG_BF16, true, true, false, "128x128x64,c1x1,s4,pp,k4", 32768);
  add_gemm_k(HG_E4M3, HG_E4M3, HG_F32, true, true, false, "128x128x128,c2x1,s4,k3", 16384);
  /* split-K reduced in the GEMM: arrival, spin and departure on the tile's counter */
  add_gemm_k(HG_BF16, HG_BF16, HG_BF16, true, true, false, "128x128x64,c1x1,s4,k4r", 32768);
  /* stream-K: the fix-up's flags (atomics, fences, the spin loop) and partials in the kernel */
  add_gemm_k(HG_BF16, HG_BF16, HG_BF16, true, true, false, "128x128x64,c1x1,s4,pp,sk", 4160);
  add_gemm_k(HG_E4M3, HG_E4M3, HG_BF16, true, true, false, "128x128x128,c2x1,s4,sk", 4160);
  fp8_accum = HG_FP8_ACCUM_FAST;
  add_gemm_k(HG_E4M3, HG_E4M3, HG_F32, true, true, false, "128x256x128,c2x1,s4,k3", 16384);
  add_grouped(HG_BF16, HG_BF16, HG_GROUP_CONTIGUOUS, 8, false, "128x256x64,c2x1,s4,m8");
  add_grouped(HG_BF16, HG_BF16, HG_GROUP_MASKED, 256, false, "128x128x64,c1x1,s5,pp,n4");
  add_grouped(HG_E4M3, HG_BF16, HG_GROUP_CONTIGUOUS, 128, false, "128x128x128,c1x2,s5,pp,m4");
  add_grouped(HG_E4M3, HG_F32, HG_GROUP_MASKED, 32, false, "64x256x128,c1x1,s4,m8");
  fp8_accum = HG_FP8_ACCUM_ACCURATE;
  add_grouped(HG_E4M3, HG_BF16, HG_GROUP_CONTIGUOUS, 64, false, "128x128x128,c2x1,s4,m8");
  add_grouped(HG_E4M3, HG_BF16, HG_GROUP_CONTIGUOUS, 16, true, "128x128x128,c2x1,s5,m8");
  add_grouped(HG_E4M3, HG_BF16, HG_GROUP_MASKED, 64, true, "128x128x128,c1x1,s5,n4");
  /* block-wise scales: each unit's group's tables, read directly and staged (bs) */
  fp8_scale = HG_SCALE_BLOCK;
  add_grouped(HG_E4M3, HG_BF16, HG_GROUP_CONTIGUOUS, 8, false, "128x128x128,c1x1,s5,m8");
  add_grouped(HG_E4M3, HG_BF16, HG_GROUP_CONTIGUOUS, 32, false, "128x128x128,c1x1,s6,e32,bs");
  add_grouped(HG_E4M3, HG_F32, HG_GROUP_MASKED, 64, false, "64x128x128,c1x1,s6,pp");
  add_grouped(HG_E4M3, HG_BF16, HG_GROUP_MASKED, 256, false, "128x128x128,c2x1,s4,bs");
  fp8_scale = HG_SCALE_TENSOR;
}

static void report(job_kind_t kind, const char *title) {
  int n = 0, refused = 0, ok = 0, skipped = 0;
  double total = 0, max = 0;
  const char *slowest = "";
  for (int i = 0; i < njobs; i++) {
    job_t *j = &jobs[i];
    if (j->kind != kind) continue;
    n++;
    hg_test_checks++;
    if (!j->ok) {
      HG_FAIL("%s: %s", j->what, j->msg);
      continue;
    }
    ok++;
    if (j->skipped) {
      skipped++;
      continue;
    }
    if (j->refused) {
      refused++;
      continue;
    }
    total += j->lower_ms;
    if (j->lower_ms > max) {
      max = j->lower_ms;
      slowest = j->what;
    }
    if (kind == JOB_GEMM && getenv("HG_TEST_COMPARE"))
      fprintf(stderr, "  %-60s registers: mlir %3d, ptx %3d; %4.0f ms\n", j->what, j->regs_mlir,
              j->regs_ptx, j->lower_ms);
  }
  int built = ok - refused - skipped;
  fprintf(stderr,
          "  %s: %d variants, %d built through MLIR and assembled, %d refused by the planner in "
          "both backends, %d generated only (HOPGEN_TEST_SUBSET); generation + lowering mean %.0f "
          "ms, max %.0f ms (%s)\n",
          title, n, built, refused, skipped, built ? total / built : 0.0, max, slowest);
}

static void test_tma_kernel_matrix(void) {
  njobs = 0;
  add_tma_matrix();
  CHECK(njobs > 800);
  run_all();
  report(JOB_TMA, "TMA kernels");
}

/* The streaming copy (src/kernels/copy.c) and each of its variants: the access order, the
 * stores' cache hint (nvvm's store with l2_cache_hint, not nvgpu's) and the split loader /
 * storer with its empty barriers, alone and together. */
static void add_copy_job(int stages, int box_rows, bool ef, bool sef, bool split,
                         hg_copy_order_t order) {
  job_t *j = add_job();
  j->kind = JOB_COPY;
  j->copy = (hg_copy_config_t){.stages = stages,
                               .box_rows = box_rows,
                               .evict_first = ef,
                               .store_evict_first = sef,
                               .split_roles = split,
                               .order = order};
  snprintf(j->what, sizeof j->what, "copy s%d r%d%s%s%s %s", stages, box_rows, ef ? " ef" : "",
           sef ? " sef" : "", split ? " split" : "", hg_copy_order_name(order));
}

static void add_thread_copy_job(hg_copy_config_t c) {
  job_t *j = add_job();
  j->kind = JOB_COPY;
  j->copy = c;
  if (c.ldg)
    snprintf(j->what, sizeof j->what, "copy ldg t%d u%d c%d%s", c.ldg_threads, c.unroll,
             c.ctas_per_sm, c.store_cs ? " cs" : "");
  else
    snprintf(j->what, sizeof j->what, "copy s%d r%d store threads w%d%s %s", c.stages, c.box_rows,
             c.store_warps, c.store_cs ? " cs" : "", hg_copy_order_name(c.order));
}

static void test_copy_kernels(void) {
  njobs = 0;
  const hg_copy_order_t I = HG_COPY_INTERLEAVED, C = HG_COPY_CONTIGUOUS;
  add_copy_job(0, 0, false, false, false, I); /* today's default */
  add_copy_job(4, 48, true, false, false, I);
  add_copy_job(4, 16, false, false, false, C);
  add_copy_job(6, 32, false, true, false, I);
  add_copy_job(6, 32, true, true, false, C);
  add_copy_job(8, 16, false, false, true, I);
  add_copy_job(2, 1, false, true, true, C);
  add_copy_job(16, 8, true, true, true, I);
  /* store threads: W warps copy each stage out (ld.shared.v4 -> st.global.v4, .cs), the
   * proxy fence and an arrival per thread; and the ldg copy (no TMA) */
  add_thread_copy_job((hg_copy_config_t){.store_threads = true});
  add_thread_copy_job((hg_copy_config_t){.store_threads = true,
                                         .stages = 4,
                                         .box_rows = 16,
                                         .store_warps = 8,
                                         .store_cs = true,
                                         .order = C});
  add_thread_copy_job(
      (hg_copy_config_t){.store_threads = true, .stages = 2, .box_rows = 1, .store_warps = 3});
  add_thread_copy_job((hg_copy_config_t){.ldg = true});
  add_thread_copy_job((hg_copy_config_t){
      .ldg = true, .ldg_threads = 512, .unroll = 4, .ctas_per_sm = 2, .store_cs = true});
  run_all();
  report(JOB_COPY, "streaming copy kernels");
}

static void test_gemm_matrix(void) {
  njobs = 0;
  add_gemm_matrix();
  CHECK(njobs >= 40);
  run_all();
  report(JOB_GEMM, "GEMM kernels");
}

/* The utility kernels (random fill, reference GEMM, repack) too: the GEMM check runs them
 * through the same backend. */
static void test_utility_kernels(void) {
  hg_kernel_t k;
  static const hg_dtype_t fills[] = {HG_BF16, HG_F16, HG_F32, HG_E4M3, HG_E5M2, HG_S8, HG_U8};
  for (size_t i = 0; i < sizeof fills / sizeof fills[0]; i++) {
    hg_status_t s = hg_gen_fill_random(fills[i], HG_BACKEND_MLIR, &k);
    hg_test_checks++;
    if (!hg_is_ok(&s)) {
      if (s.code != HG_ERR_UNSUPPORTED && s.code != HG_ERR_INVALID)
        HG_FAIL("fill %s: %s", hg_dtype_name(fills[i]), s.msg);
      continue;
    }
    CHECK_OK(hg_ptxas_check(k.ptx.data, NULL));
    hg_kernel_free(&k);
  }
  for (int e = 1; e <= 4; e *= 2) {
    CHECK_OK(hg_gen_repack(e, HG_BACKEND_MLIR, &k));
    if (k.ptx.data) CHECK_OK(hg_ptxas_check(k.ptx.data, NULL));
    hg_kernel_free(&k);
    /* both operands in one launch: the per-CTA selects of the operand's parameters */
    CHECK_OK(hg_gen_repack_pair(e, HG_BACKEND_MLIR, &k));
    if (k.ptx.data) CHECK_OK(hg_ptxas_check(k.ptx.data, NULL));
    hg_kernel_free(&k);
  }
  hg_gemm_problem_t p = {.m = 100,
                         .n = 200,
                         .k = 64,
                         .batch = 2,
                         .a_type = HG_BF16,
                         .b_type = HG_BF16,
                         .d_type = HG_F32,
                         .a_k_major = true,
                         .b_k_major = false,
                         .alpha = 1.0f,
                         .beta = 1.0f};
  CHECK_OK(hg_gemm_problem_normalize(&p));
  CHECK_OK(hg_gen_gemm_reference(&p, HG_BACKEND_MLIR, &k));
  if (k.ptx.data) CHECK_OK(hg_ptxas_check(k.ptx.data, NULL));
  hg_kernel_free(&k);
}

int main(void) {
  mlir_test_require_tools();
  HG_RUN(test_utility_kernels);
  HG_RUN(test_copy_kernels);
  HG_RUN(test_gemm_matrix);
  /* HG_TEST_SKIP_TMA=1 leaves out the 840 TMA kernels, for a quick run by hand */
  if (!getenv("HG_TEST_SKIP_TMA")) HG_RUN(test_tma_kernel_matrix);
  free(jobs);
  return hg_test_finish();
}
