/* A minimal test harness: each tests/<layer>/test_*.c is one executable whose main calls
 * HG_RUN(fn) for each test function and returns hg_test_finish(). Checks record the
 * file, line and the values involved; a test function continues after a failed check
 * so that one run shows every failure. Exit code 77 = skipped (CTest SKIP_RETURN_CODE). */
#ifndef HG_TEST_H
#define HG_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hopgen/status.h"

static int hg_test_failures;
static int hg_test_checks;
static const char *hg_test_current = "";

#define HG_FAIL(...)                                                                               \
  do {                                                                                             \
    hg_test_failures++;                                                                            \
    fprintf(stderr, "%s:%d: [%s] ", __FILE__, __LINE__, hg_test_current);                          \
    fprintf(stderr, __VA_ARGS__);                                                                  \
    fputc('\n', stderr);                                                                           \
  } while (0)

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    hg_test_checks++;                                                                              \
    if (!(cond)) HG_FAIL("CHECK(%s) failed", #cond);                                               \
  } while (0)

#define CHECK_EQ(a, b)                                                                             \
  do {                                                                                             \
    hg_test_checks++;                                                                              \
    long long va_ = (long long)(a), vb_ = (long long)(b);                                          \
    if (va_ != vb_) HG_FAIL("%s == %lld, expected %s == %lld", #a, va_, #b, vb_);                  \
  } while (0)

#define CHECK_STR(a, b)                                                                            \
  do {                                                                                             \
    hg_test_checks++;                                                                              \
    const char *sa_ = (a), *sb_ = (b);                                                             \
    if (strcmp(sa_, sb_) != 0) HG_FAIL("%s == \"%s\", expected \"%s\"", #a, sa_, sb_);             \
  } while (0)

/* The status must be OK; on failure print its sentence. */
#define CHECK_OK(expr)                                                                             \
  do {                                                                                             \
    hg_test_checks++;                                                                              \
    hg_status_t s_ = (expr);                                                                       \
    if (s_.code != HG_OK) HG_FAIL("%s failed: %s", #expr, s_.msg);                                 \
  } while (0)

/* The status must fail with code and its sentence must contain fragment. */
#define CHECK_ERR(expr, code_, fragment)                                                           \
  do {                                                                                             \
    hg_test_checks++;                                                                              \
    hg_status_t s_ = (expr);                                                                       \
    if (s_.code != (code_))                                                                        \
      HG_FAIL("%s returned code %s (\"%s\"), expected %s", #expr, hg_code_name(s_.code), s_.msg,   \
              hg_code_name(code_));                                                                \
    else if (!strstr(s_.msg, (fragment)))                                                          \
      HG_FAIL("%s said \"%s\", which lacks \"%s\"", #expr, s_.msg, (fragment));                    \
  } while (0)

/* A step through the MLIR backend: true when it succeeded; false, with a line on stderr and no
 * failure, when the machine has no MLIR tools and no cached lowering of the kernel (a GPU
 * machine without mlir-22-tools: gpu-check.sh carries .device-carry/mlir-cache for that); any
 * other error fails the test. CI installs the tools, so there it always runs. */
#define CHECK_OK_MLIR(expr, ok_)                                                                   \
  do {                                                                                             \
    hg_test_checks++;                                                                              \
    hg_status_t s_ = (expr);                                                                       \
    (ok_) = s_.code == HG_OK;                                                                      \
    if (s_.code == HG_ERR_TOOL && strstr(s_.msg, "no cached lowering"))                            \
      fprintf(stderr, "skip %s: %s\n", #expr, s_.msg);                                             \
    else if (s_.code != HG_OK)                                                                     \
      HG_FAIL("%s failed: %s", #expr, s_.msg);                                                     \
  } while (0)

#define HG_RUN(fn)                                                                                 \
  do {                                                                                             \
    hg_test_current = #fn;                                                                         \
    int before_ = hg_test_failures;                                                                \
    fn();                                                                                          \
    fprintf(stderr, "%s %s\n", hg_test_failures == before_ ? "ok  " : "FAIL", #fn);                \
  } while (0)

static inline int hg_test_finish(void) {
  fprintf(stderr, "%d checks, %d failures\n", hg_test_checks, hg_test_failures);
  return hg_test_failures ? 1 : 0;
}

/* HOPGEN_TEST_SUBSET=N (scripts/test.sh sets 4 for the sanitizer build): tests whose time
 * goes to external tools (ptxas, mlir-opt-22) run the tool on every Nth case only, while the
 * library's own code still runs on every case. Case i is run when hg_test_sampled(i). */
static inline int hg_test_subset(void) {
  const char *e = getenv("HOPGEN_TEST_SUBSET");
  const int n = e ? atoi(e) : 1;
  return n < 1 ? 1 : n;
}
static inline int hg_test_sampled(long i) {
  return i % hg_test_subset() == 0;
}

/* Path of a file in the source tree (HOPGEN_SOURCE_DIR is set by CTest). */
static inline const char *hg_test_src_path(const char *rel, char *buf, size_t size) {
  const char *root = getenv("HOPGEN_SOURCE_DIR");
  snprintf(buf, size, "%s/%s", root ? root : ".", rel);
  return buf;
}

#endif
