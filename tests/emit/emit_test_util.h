/* Helpers shared by the emit tests: emit a builder's PTX, run it through ptxas, and
 * print the numbered PTX when ptxas rejects it, so a failure shows the offending line. */
#ifndef HG_EMIT_TEST_UTIL_H
#define HG_EMIT_TEST_UTIL_H

#include <stdio.h>
#include <string.h>

#include "hg_test.h"
#include "hopgen/emit.h"

/* Exit 77 (CTest: skipped) when ptxas cannot be found: the only reason to skip. */
static inline void emit_test_require_ptxas(void) {
  const char *argv[] = {"ptxas", "--version", NULL};
  hg_text_t out = {0}, err = {0};
  hg_status_t s = hg_tool_run(argv, NULL, &out, &err);
  hg_text_free(&out);
  hg_text_free(&err);
  if (s.code == HG_ERR_TOOL && strstr(s.msg, "not found")) {
    fprintf(stderr, "SKIP: %s\n", s.msg);
    exit(77);
  }
}

static inline void emit_test_dump(const char *ptx) {
  int line = 1;
  fprintf(stderr, "---- PTX ----\n%4d  ", line);
  for (const char *p = ptx; *p; p++) {
    fputc(*p, stderr);
    if (*p == '\n' && p[1]) fprintf(stderr, "%4d  ", ++line);
  }
  fprintf(stderr, "---- end ----\n");
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

/* Every (op, element type) pair hg_b_red takes: those of cp.reduce.async.bulk.tensor. */
typedef struct emit_test_red {
  hg_reduce_op_t op;
  hg_dtype_t t;
} emit_test_red_t;

static const emit_test_red_t emit_test_reds[] = {
    {HG_RED_ADD, HG_U32}, {HG_RED_ADD, HG_S32},  {HG_RED_ADD, HG_U64}, {HG_RED_ADD, HG_F32},
    {HG_RED_ADD, HG_F16}, {HG_RED_ADD, HG_BF16}, {HG_RED_MIN, HG_U32}, {HG_RED_MIN, HG_S32},
    {HG_RED_MIN, HG_F16}, {HG_RED_MIN, HG_BF16}, {HG_RED_MAX, HG_U32}, {HG_RED_MAX, HG_S32},
    {HG_RED_MAX, HG_F16}, {HG_RED_MAX, HG_BF16}, {HG_RED_INC, HG_U32}, {HG_RED_DEC, HG_U32},
    {HG_RED_AND, HG_U32}, {HG_RED_AND, HG_S32},  {HG_RED_AND, HG_U64}, {HG_RED_OR, HG_U32},
    {HG_RED_OR, HG_S32},  {HG_RED_OR, HG_U64},   {HG_RED_XOR, HG_U32}, {HG_RED_XOR, HG_S32},
    {HG_RED_XOR, HG_U64},
};
#define EMIT_TEST_NREDS ((int)(sizeof emit_test_reds / sizeof emit_test_reds[0]))

/* One hg_b_red of each pair into 8-byte slot i of the global buffer g, the operand loaded
 * from slot 64 + i (so nothing folds), then the same pairs again inside a loop and an if,
 * so that the 16-bit float min/max loops (a { } block each) appear several times and at
 * depth. */
static inline void emit_test_reductions(hg_builder_t *b, hg_val_t g) {
  for (int pass = 0; pass < 2; pass++) {
    hg_val_t i = HG_NONE;
    if (pass) {
      i = hg_b_for(b, hg_b_i32(b, 0), hg_b_sreg(b, HG_TID_X), hg_b_i32(b, 1));
      hg_b_if(b, hg_b_cmp(b, HG_NE, i, hg_b_i32(b, 3)));
    }
    for (int k = 0; k < EMIT_TEST_NREDS; k++) {
      const hg_dtype_t t = emit_test_reds[k].t;
      hg_val_t at = hg_b_bin(b, HG_ADD, g, hg_b_i64(b, 8 * k));
      if (pass) at = hg_b_bin(b, HG_ADD, at, hg_b_sext(b, hg_b_bin(b, HG_SHL, i, hg_b_i32(b, 9))));
      hg_val_t from = hg_b_bin(b, HG_ADD, at, hg_b_i64(b, 8 * 64));
      hg_val_t v;
      if (t == HG_U64)
        hg_b_load(b, HG_GLOBAL, HG_T_I64, 0, 1, from, &v);
      else if (t == HG_F32)
        hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 1, from, &v);
      else
        hg_b_load(b, HG_GLOBAL, HG_T_I32, hg_dtype_bytes(t) == 2 ? 16 : 0, 1, from, &v);
      hg_b_red(b, emit_test_reds[k].op, t, at, v);
    }
    if (pass) {
      hg_b_endif(b);
      hg_b_endfor(b);
    }
  }
}

#endif
