/* External tools: hg_tool_run (missing tool, exit status, big outputs both ways without
 * deadlock, stdin), hg_ptxas_check (report parsing, rejection sentence), and the
 * backend dispatch (names, parse, MLIR not built yet). */
#include <unistd.h>

#include "emit_test_util.h"

static void test_missing_tool_says_how_to_get_it(void) {
  const char *argv[] = {"hopgen-no-such-tool-xyz", NULL};
  hg_text_t out = {0}, err = {0};
  CHECK_ERR(hg_tool_run(argv, NULL, &out, &err), HG_ERR_TOOL,
            "hopgen-no-such-tool-xyz not found (put it on PATH; searched PATH and "
            "/usr/local/cuda/bin)");
  CHECK(out.data == NULL && err.data == NULL);

  /* ptxas gets the CUDA toolkit hint: run with an empty PATH and no /usr/local/cuda
   * fallback reachable by name resolution (an absolute path that does not exist) */
  const char *argv2[] = {"/nonexistent/bin/ptxas", NULL};
  CHECK_ERR(hg_tool_run(argv2, NULL, NULL, NULL), HG_ERR_TOOL,
            "/nonexistent/bin/ptxas not found (install the CUDA toolkit");
  const char *argv3[] = {"/nonexistent/mlir-opt-22", NULL};
  CHECK_ERR(hg_tool_run(argv3, NULL, NULL, NULL), HG_ERR_TOOL, "mlir-22-tools");
  const char *argv4[] = {"", NULL};
  CHECK_ERR(hg_tool_run(argv4, NULL, NULL, NULL), HG_ERR_INVALID, "no program given");
}

static void test_ptxas_found_without_path(void) {
  /* /usr/local/cuda/bin is searched even when PATH lacks it */
  if (access("/usr/local/cuda/bin/ptxas", X_OK) != 0) return; /* ptxas lives elsewhere */
  const char *saved = getenv("PATH");
  char *copy = saved ? strdup(saved) : NULL;
  setenv("PATH", "/usr/bin:/bin", 1);
  const char *argv[] = {"ptxas", "--version", NULL};
  hg_text_t out = {0};
  CHECK_OK(hg_tool_run(argv, NULL, &out, NULL));
  CHECK(out.data && strstr(out.data, "ptxas"));
  hg_text_free(&out);
  if (copy) {
    setenv("PATH", copy, 1);
    free(copy);
  }
}

static void test_nonzero_exit_quotes_stderr(void) {
  const char *argv[] = {"sh", "-c", "echo out-text; echo 'something broke: detail' >&2; exit 3",
                        NULL};
  hg_text_t out = {0}, err = {0};
  CHECK_ERR(hg_tool_run(argv, NULL, &out, &err), HG_ERR_TOOL,
            "sh exited with status 3: something broke: detail");
  CHECK(out.data && !strcmp(out.data, "out-text\n"));
  CHECK(err.data && strstr(err.data, "something broke"));
  hg_text_free(&out);
  hg_text_free(&err);

  const char *argv2[] = {"sh", "-c", "kill -9 $$", NULL};
  CHECK_ERR(hg_tool_run(argv2, NULL, NULL, NULL), HG_ERR_TOOL, "killed by signal 9");

  const char *argv3[] = {"sh", "-c", "exit 1", NULL};
  CHECK_ERR(hg_tool_run(argv3, NULL, NULL, NULL), HG_ERR_TOOL,
            "exited with status 1: (nothing on stderr)");
}

static void test_success_captures_both_streams(void) {
  const char *argv[] = {"sh", "-c", "printf abc; printf xyz >&2", NULL};
  hg_text_t out = {0}, err = {0};
  CHECK_OK(hg_tool_run(argv, NULL, &out, &err));
  CHECK(out.data && !strcmp(out.data, "abc"));
  CHECK_EQ(out.len, 3);
  CHECK(err.data && !strcmp(err.data, "xyz"));
  hg_text_free(&out);
  hg_text_free(&err);
  CHECK(out.data == NULL && out.len == 0);
  /* no output at all: data stays NULL */
  const char *argv2[] = {"true", NULL};
  CHECK_OK(hg_tool_run(argv2, NULL, &out, &err));
  CHECK(out.data == NULL && err.data == NULL);
}

/* Megabytes on stdout and stderr at once, interleaved: a runner that reads one stream to
 * the end before the other deadlocks once the other pipe fills (64 KB). */
static void test_large_outputs_do_not_deadlock(void) {
  const char *argv[] = {"sh", "-c",
                        "i=0; while [ $i -lt 40 ]; do head -c 40000 /dev/zero | tr '\\0' e >&2; "
                        "head -c 40000 /dev/zero | tr '\\0' o; i=$((i+1)); done",
                        NULL};
  hg_text_t out = {0}, err = {0};
  CHECK_OK(hg_tool_run(argv, NULL, &out, &err));
  CHECK_EQ(out.len, 1600000);
  CHECK_EQ(err.len, 1600000);
  CHECK(out.data && out.data[0] == 'o' && out.data[out.len - 1] == 'o');
  CHECK(err.data && err.data[0] == 'e' && err.data[err.len - 1] == 'e');
  hg_text_free(&out);
  hg_text_free(&err);

  /* 3 MB through stdin and back out: cat writes while we are still writing */
  size_t n = 3u << 20;
  char *in = malloc(n + 1);
  CHECK(in != NULL);
  if (!in) return;
  for (size_t k = 0; k < n; k++) in[k] = (char)('a' + k % 26);
  in[n] = '\0';
  const char *cat[] = {"cat", NULL};
  CHECK_OK(hg_tool_run(cat, in, &out, NULL));
  CHECK_EQ(out.len, n);
  CHECK(out.data && memcmp(out.data, in, n) == 0);
  hg_text_free(&out);

  /* a tool that never reads its input and exits: no SIGPIPE kills us */
  const char *argv3[] = {"sh", "-c", "exit 0", NULL};
  CHECK_OK(hg_tool_run(argv3, in, NULL, NULL));
  const char *argv4[] = {"sh", "-c", "head -c 10 >/dev/null; exit 4", NULL};
  CHECK_ERR(hg_tool_run(argv4, in, NULL, NULL), HG_ERR_TOOL, "exited with status 4");
  free(in);
}

static const char good_ptx[] = ".version 8.0\n"
                               ".target sm_90a\n"
                               ".address_size 64\n"
                               ".visible .entry k(.param .u64 p)\n"
                               "{\n"
                               "  .reg .b64 %rd<3>;\n"
                               "  .reg .b32 %r<2>;\n"
                               "  ld.param.u64 %rd1, [p];\n"
                               "  cvta.to.global.u64 %rd2, %rd1;\n"
                               "  mov.u32 %r1, %tid.x;\n"
                               "  st.global.u32 [%rd2], %r1;\n"
                               "  ret;\n"
                               "}\n";

static void test_ptxas_check_report(void) {
  hg_ptxas_report_t rep;
  memset(&rep, 0x55, sizeof rep);
  CHECK_OK(hg_ptxas_check(good_ptx, &rep));
  CHECK(rep.registers > 0 && rep.registers < 32);
  CHECK_EQ(rep.spill_store_bytes, 0);
  CHECK_EQ(rep.spill_load_bytes, 0);
  CHECK_EQ(rep.stack_frame_bytes, 0);
  CHECK_EQ(rep.smem_bytes, 0);
  CHECK_EQ(rep.setmaxnreg_ignored, 0);
  CHECK_STR(rep.notes, "");
  CHECK_OK(hg_ptxas_check(good_ptx, NULL));
}

static void test_ptxas_rejection_carries_its_error(void) {
  const char bad[] = ".version 8.0\n.target sm_90a\n.address_size 64\n"
                     ".visible .entry k()\n{\n  frobnicate.b32 %r1;\n  ret;\n}\n";
  hg_ptxas_report_t rep;
  CHECK_ERR(hg_ptxas_check(bad, &rep), HG_ERR_JIT, "ptxas rejected the PTX: ");
  CHECK_ERR(hg_ptxas_check(bad, &rep), HG_ERR_JIT, "line 6; error");
  CHECK_ERR(hg_ptxas_check(NULL, &rep), HG_ERR_INVALID, "ptx is NULL");
}

/* A kernel that spills: the report says how much (ptxas -v "spill stores"). */
static void test_ptxas_report_spills(void) {
  hg_builder_t *b;
  CHECK_OK(hg_builder_create("spiller", &b));
  hg_b_set_threads(b, 1024); /* 64 registers per thread at most */
  hg_b_set_min_ctas(b, 1);
  hg_val_t p = hg_b_param(b, HG_T_I64, "p");
  enum { N = 200 };
  hg_val_t v[N];
  for (int k = 0; k < N; k++) {
    hg_val_t off = hg_b_i64(b, 4 * k);
    hg_val_t tmp[1];
    hg_b_load(b, HG_GLOBAL, HG_T_F32, 0, 1, hg_b_bin(b, HG_ADD, p, off), tmp);
    v[k] = tmp[0];
  }
  hg_val_t acc = hg_b_f32(b, 0.0f);
  for (int k = 0; k < N; k++) acc = hg_b_ffma(b, v[k], v[N - 1 - k], acc);
  for (int k = 0; k < N; k++) {
    hg_val_t x = hg_b_bin(b, HG_FADD, v[k], acc);
    hg_b_store(b, HG_GLOBAL, 0, 1, hg_b_bin(b, HG_ADD, p, hg_b_i64(b, 4 * k)), &x);
  }
  hg_text_t ptx = {0};
  CHECK_OK(hg_emit_ptx(b, &ptx));
  hg_ptxas_report_t rep;
  CHECK_OK(hg_ptxas_check(ptx.data, &rep));
  CHECK(rep.registers <= 64);
  CHECK(rep.spill_store_bytes > 0);
  CHECK(rep.spill_load_bytes > 0);
  CHECK(rep.stack_frame_bytes > 0);
  hg_text_free(&ptx);
  hg_builder_destroy(b);
}

static void test_backends(void) {
  CHECK_STR(hg_backend_name(HG_BACKEND_PTX), "ptx");
  CHECK_STR(hg_backend_name(HG_BACKEND_MLIR), "mlir");
  hg_backend_t be = HG_BACKEND_MLIR;
  CHECK_OK(hg_backend_parse("ptx", &be));
  CHECK_EQ(be, HG_BACKEND_PTX);
  CHECK_OK(hg_backend_parse("mlir", &be));
  CHECK_EQ(be, HG_BACKEND_MLIR);
  CHECK_ERR(hg_backend_parse("llvm", &be), HG_ERR_PARSE,
            "unknown backend 'llvm' (expected ptx or mlir)");

  hg_builder_t *b;
  CHECK_OK(hg_builder_create("k", &b));
  hg_b_set_threads(b, 32);
  hg_text_t t = {0};
  /* Both backends yield PTX for the same kernel (the MLIR one through mlir-opt-22/llc-22,
   * which scripts/deps.sh installs; tests/emit/test_mlir*.c cover it in depth). */
  bool lowered;
  CHECK_OK_MLIR(hg_emit(b, HG_BACKEND_MLIR, &t), lowered);
  if (lowered) CHECK(t.data && strstr(t.data, ".entry k"));
  hg_text_free(&t);
  CHECK_OK(hg_emit(b, HG_BACKEND_PTX, &t));
  CHECK(t.data && strstr(t.data, ".visible .entry k"));
  CHECK_EQ(t.len, strlen(t.data));
  hg_text_free(&t);
  hg_text_free(&t); /* idempotent */
  hg_text_free(NULL);
  hg_builder_destroy(b);
}

int main(void) {
  HG_RUN(test_missing_tool_says_how_to_get_it);
  HG_RUN(test_nonzero_exit_quotes_stderr);
  HG_RUN(test_success_captures_both_streams);
  HG_RUN(test_large_outputs_do_not_deadlock);
  HG_RUN(test_backends);
  emit_test_require_ptxas();
  HG_RUN(test_ptxas_found_without_path);
  HG_RUN(test_ptxas_check_report);
  HG_RUN(test_ptxas_rejection_carries_its_error);
  HG_RUN(test_ptxas_report_spills);
  return hg_test_finish();
}
