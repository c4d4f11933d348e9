/* Helpers shared by the MLIR-backend tests: print a builder's kernel as MLIR, lower it
 * with mlir-opt-22 (hg_mlir_lower), assemble the PTX with ptxas, and on any failure show
 * the numbered MLIR (and PTX) so that the failure points at a line. Also the lowering
 * times, for the summary each test program prints. By hand: HG_TEST_DUMP_MLIR=1 prints
 * every kernel's MLIR and PTX; HG_TEST_COMPARE=1 prints both backends' register counts. */
#ifndef HG_TEST_MLIR_UTIL_H
#define HG_TEST_MLIR_UTIL_H

#include <ctype.h>
#include <time.h>

#include "emit/mlir.h"
#include "emit_test_util.h"

static double mlir_test_ms_total, mlir_test_ms_max;
static int mlir_test_kernels;
static char mlir_test_slowest[HG_IR_MAX_NAME];

static inline double mlir_test_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Exit 77 (CTest: skipped) when ptxas or mlir-opt-22 cannot be found. CI installs both
 * (scripts/deps.sh: mlir-22-tools, llvm-22; the CUDA toolkit). */
static inline void mlir_test_require_tools(void) {
  emit_test_require_ptxas();
  const char *tool = getenv("HOPGEN_MLIR_OPT");
  emit_test_require_tool(tool && *tool ? tool : "mlir-opt-22");
}

/* Print, lower and assemble. mlir and ptx (either may be NULL) receive the texts, which
 * the caller frees. Returns true when every step succeeded. */
static inline bool mlir_lower_and_assemble(hg_builder_t *b, hg_text_t *mlir_out, hg_text_t *ptx_out,
                                           hg_ptxas_report_t *rep) {
  hg_text_t mlir = {0}, ptx = {0};
  hg_ptxas_report_t local;
  if (!rep) rep = &local;
  memset(rep, 0, sizeof *rep);
  bool ok = false;
  hg_status_t s = hg_emit_mlir(b, &mlir);
  hg_test_checks++;
  if (s.code != HG_OK) {
    HG_FAIL("hg_emit_mlir failed: %s", s.msg);
    goto out;
  }
  double t0 = mlir_test_now_ms();
  s = hg_mlir_lower(mlir.data, b->name, &ptx);
  double ms = mlir_test_now_ms() - t0;
  hg_test_checks++;
  if (s.code != HG_OK) {
    HG_FAIL("lowering failed: %s", s.msg);
    emit_test_dump_text("MLIR", mlir.data);
    goto out;
  }
  mlir_test_ms_total += ms;
  mlir_test_kernels++;
  if (ms > mlir_test_ms_max) {
    mlir_test_ms_max = ms;
    snprintf(mlir_test_slowest, sizeof mlir_test_slowest, "%s", b->name);
  }
  s = hg_ptxas_check(ptx.data, rep);
  hg_test_checks++;
  if (s.code != HG_OK) {
    HG_FAIL("ptxas rejected the lowered kernel: %s", s.msg);
    emit_test_dump_text("MLIR", mlir.data);
    emit_test_dump_text("PTX", ptx.data);
    goto out;
  }
  if (getenv("HG_TEST_DUMP_MLIR")) {
    emit_test_dump_text("MLIR", mlir.data);
    emit_test_dump_text("PTX", ptx.data);
  }
  if (getenv("HG_TEST_COMPARE")) {
    hg_text_t p2 = {0};
    hg_ptxas_report_t r2;
    if (hg_emit_ptx(b, &p2).code == HG_OK && hg_ptxas_check(p2.data, &r2).code == HG_OK)
      fprintf(stderr, "  %-28s registers: mlir %3d, ptx %3d; spills %d/%d\n", b->name,
              rep->registers, r2.registers, rep->spill_store_bytes, r2.spill_store_bytes);
    hg_text_free(&p2);
  }
  ok = true;
out:
  if (mlir_out)
    *mlir_out = mlir;
  else
    hg_text_free(&mlir);
  if (ptx_out)
    *ptx_out = ptx;
  else
    hg_text_free(&ptx);
  return ok;
}

static inline bool mlir_assemble_ok(hg_builder_t *b) {
  return mlir_lower_and_assemble(b, NULL, NULL, NULL);
}

/* Local memory: no .local declaration, no ld.local/st.local, and ptxas reports no stack
 * frame and no spills. */
static inline bool mlir_no_local_memory(const char *ptx, const hg_ptxas_report_t *rep) {
  bool ok = ptx && !strstr(ptx, ".local") && rep->stack_frame_bytes == 0 &&
            rep->spill_store_bytes == 0 && rep->spill_load_bytes == 0;
  if (!ok)
    fprintf(stderr, "  local memory: .local %s, stack %d B, spills %d/%d B\n",
            ptx && strstr(ptx, ".local") ? "present" : "absent", rep->stack_frame_bytes,
            rep->spill_store_bytes, rep->spill_load_bytes);
  return ok;
}

static inline bool mlir_has(const char *text, const char *what) {
  bool ok = text && strstr(text, what) != NULL;
  if (!ok) fprintf(stderr, "  missing: %s\n", what);
  return ok;
}

/* How many times `what` occurs in text. */
static inline int mlir_count(const char *text, const char *what) {
  int n = 0;
  size_t len = strlen(what);
  for (const char *p = text; p && (p = strstr(p, what)); p += len) n++;
  return n;
}

static inline void mlir_test_report_times(void) {
  if (mlir_test_kernels)
    fprintf(stderr, "lowering: %d kernels, mean %.0f ms, max %.0f ms (%s)\n", mlir_test_kernels,
            mlir_test_ms_total / mlir_test_kernels, mlir_test_ms_max, mlir_test_slowest);
}

#endif
