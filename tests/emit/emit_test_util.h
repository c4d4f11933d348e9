/* Helpers shared by the emit tests: emit a builder's PTX, run it through ptxas, and
 * print the numbered PTX when ptxas rejects it, so a failure shows the offending line. */
#ifndef HG_EMIT_TEST_UTIL_H
#define HG_EMIT_TEST_UTIL_H

#include <stdio.h>
#include <string.h>

#include "hg_test.h"
#include "hopgen/emit.h"

/* Exit 77 (CTest: skipped) when the tool cannot be found: the only reason to skip. */
static inline void emit_test_require_tool(const char *tool) {
  const char *argv[] = {tool, "--version", NULL};
  hg_text_t out = {0}, err = {0};
  hg_status_t s = hg_tool_run(argv, NULL, &out, &err);
  hg_text_free(&out);
  hg_text_free(&err);
  if (s.code == HG_ERR_TOOL && strstr(s.msg, "not found")) {
    fprintf(stderr, "SKIP: %s\n", s.msg);
    exit(77);
  }
}

static inline void emit_test_require_ptxas(void) {
  emit_test_require_tool("ptxas");
}

/* The text with numbered lines, under a "---- <what> ----" title, on stderr. */
static inline void emit_test_dump_text(const char *what, const char *text) {
  int line = 1;
  fprintf(stderr, "---- %s ----\n%4d  ", what, line);
  for (const char *p = text ? text : ""; *p; p++) {
    fputc(*p, stderr);
    if (*p == '\n' && p[1]) fprintf(stderr, "%4d  ", ++line);
  }
  fprintf(stderr, "---- end ----\n");
}

static inline void emit_test_dump(const char *ptx) {
  emit_test_dump_text("PTX", ptx);
}

/* Emit PTX (into *ptx, which the caller frees) and assemble it; a rejection fails the
 * test with ptxas's sentence and dumps the PTX. Returns true when ptxas accepted it. */
static inline bool emit_and_assemble(hg_builder_t *b, hg_text_t *ptx, hg_ptxas_report_t *rep) {
  hg_ptxas_report_t local;
  if (!rep) rep = &local;
  *ptx = (hg_text_t){0};
  hg_status_t s = hg_emit_ptx(b, ptx);
  hg_test_checks++;
  if (s.code != HG_OK) {
    HG_FAIL("hg_emit_ptx failed: %s", s.msg);
    return false;
  }
  s = hg_ptxas_check(ptx->data, rep);
  hg_test_checks++;
  if (s.code != HG_OK) {
    HG_FAIL("ptxas rejected the kernel: %s", s.msg);
    emit_test_dump(ptx->data);
    return false;
  }
  if (getenv("HG_TEST_DUMP_PTX")) emit_test_dump(ptx->data);
  return true;
}

/* Build-and-check in one call for kernels whose text the test does not inspect. */
static inline bool assemble_ok(hg_builder_t *b) {
  hg_text_t ptx;
  bool ok = emit_and_assemble(b, &ptx, NULL);
  hg_text_free(&ptx);
  return ok;
}

#endif
