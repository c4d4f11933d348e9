/* Lowering the MLIR backend's text to PTX with the MLIR 22 tools, as a child process.
 *
 * The pipeline, one mlir-opt-22 run:
 *
 *   convert-nvgpu-to-nvvm        nvgpu mbarrier / TMA ops -> nvvm ops (+ llvm casts);
 *                                index coordinates and counts truncated to i32
 *   convert-nvvm-to-llvm         nvvm ops that are PTX templates (wgmma.mma_async, ...) ->
 *                                llvm.inline_asm; the others stay nvvm (LLVM intrinsics)
 *   convert-arith-to-llvm        arith -> llvm (index = i64)
 *   convert-cf-to-llvm           cf blocks -> llvm.br / llvm.cond_br
 *   canonicalize, cse            fold index_cast/trunc pairs and repeated constants
 *   reconcile-unrealized-casts   the typed nvgpu views cancel against their lowering
 *   gpu-module-to-binary{format=isa}
 *                                translate the gpu.module to LLVM IR, run LLVM's -O3 (the
 *                                O = 3 of its #nvvm.target: SROA promotes the variables'
 *                                slots to registers) and the NVPTX back end for the
 *                                target's chip (sm_90a) and PTX version (+ptx80/+ptx84);
 *                                the PTX is the `assembly` string of the gpu.object
 *
 * Why this and not mlir-translate-22 | opt-22 -O3 | llc-22: it is the same LLVM 22 (the
 * NVPTX back end and the -O3 pipeline linked into libMLIR), in one process instead of
 * four, with the target (chip, PTX version, optimisation level) in the module itself, so
 * that `mlir-opt-22 kernel.mlir --pass-pipeline=...` on a saved module reproduces the
 * PTX exactly; and it needs no extraction of the gpu.module's body into a plain module
 * for mlir-translate. gpu-lower-to-nvvm-pipeline would also work, but it attaches a
 * second target of its own and runs host-side passes the kernel does not need; the
 * explicit list documents every step. Measured on Debian's MLIR 22.1.8 (2 cores): about
 * 50 ms for a TMA copy kernel and 130-370 ms (mean 214) for the GEMMs of
 * tests/emit/test_mlir_kernels.c, of which 30-90 ms is starting mlir-opt-22 (loading
 * libMLIR) and the rest mostly LLVM -O3 and NVPTX code generation.
 *
 * The library never prints: the tool's diagnostics go into the status sentence, and on
 * failure the input file is kept (its path is in the sentence) for mlir-opt-22 by hand.
 *
 * hg_mlir_to_ptx (mlir_cache.c) puts an on-disk cache of lowerings in front of this, so
 * that a machine without the MLIR tools can use lowerings made on one with them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emit/mlir.h"

#define HG_MLIR_PIPELINE                                                                           \
  "builtin.module(convert-nvgpu-to-nvvm,convert-nvvm-to-llvm,convert-arith-to-llvm,"               \
  "convert-cf-to-llvm,canonicalize,cse,reconcile-unrealized-casts,"                                \
  "gpu-module-to-binary{format=isa})"

/* Bump on any change to HG_MLIR_PIPELINE, extract_ptx or the MLIR release the pipeline is
 * written for: it is part of every lowering-cache key (mlir_cache.c), so entries lowered
 * the old way stop matching instead of being served as if they were current. The pipeline
 * string is in the key too, but a change of extraction or of release would not show. */
#define HG_MLIR_LOWER_VERSION "mlir22-1"

const char *hg_mlir_pipeline(void) {
  return HG_MLIR_PIPELINE;
}

const char *hg_mlir_lower_version(void) {
  return HG_MLIR_LOWER_VERSION;
}

/* The tool: mlir-opt-22 from PATH, or HOPGEN_MLIR_OPT (a path or name) where MLIR 22 is
 * installed under another name. */
static const char *mlir_opt_tool(void) {
  const char *t = getenv("HOPGEN_MLIR_OPT");
  return t && *t ? t : "mlir-opt-22";
}

static hg_status_t write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return hg_error(HG_ERR_IO, "cannot create %s: %s", path, strerror(errno));
  size_t len = strlen(text);
  bool ok = fwrite(text, 1, len, f) == len;
  ok = fclose(f) == 0 && ok;
  if (!ok) return hg_error(HG_ERR_IO, "writing %s failed: %s", path, strerror(errno));
  return hg_ok();
}

/* The first error lines of mlir-opt's stderr (those that say "error:"), joined with "; "
 * and without the long "see current operation" notes; or the start of stderr. */
static void first_errors(const char *text, char *buf, size_t size) {
  size_t at = 0;
  int lines = 0;
  buf[0] = '\0';
  for (const char *line = text; line && *line && lines < 3 && at + 1 < size;) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%.*s", (int)(len < sizeof tmp ? len : sizeof tmp - 1), line);
    if (strstr(tmp, "error:")) {
      int n = snprintf(buf + at, size - at, "%s%s", at ? "; " : "", tmp);
      if (n < 0) break;
      at = (size_t)n < size - at ? at + (size_t)n : size - 1;
      lines++;
    }
    line = nl ? nl + 1 : NULL;
  }
  if (buf[0]) return;
  size_t n = text ? strlen(text) : 0;
  while (n && (text[n - 1] == '\n' || text[n - 1] == ' ')) n--;
  if (!n)
    snprintf(buf, size, "(nothing on stderr)");
  else
    snprintf(buf, size, "%.*s", (int)(n < size - 1 ? n : size - 1), text);
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* The PTX: the `assembly = "..."` string of the gpu.object that gpu-module-to-binary
 * wrote, unescaped (MLIR prints '"' and '\' and non-printable bytes as \XX or \\). */
static hg_status_t extract_ptx(const char *lowered, hg_text_t *ptx) {
  const char *key = "assembly = \"";
  const char *a = lowered ? strstr(lowered, key) : NULL;
  if (!a) return hg_error(HG_ERR_TOOL, "no assembly string");
  a += strlen(key);
  size_t cap = strlen(a) + 1, len = 0;
  char *d = malloc(cap);
  if (!d) return hg_error(HG_ERR_NOMEM, "out of memory extracting the PTX");
  for (const char *q = a; *q; q++) {
    if (*q == '"') {
      d[len] = '\0';
      ptx->data = d;
      ptx->len = len;
      return hg_ok();
    }
    if (*q != '\\') {
      d[len++] = *q;
      continue;
    }
    char c = q[1];
    int h1 = hexval(c), h2 = c ? hexval(q[2]) : -1;
    if (h1 >= 0 && h2 >= 0) {
      d[len++] = (char)(h1 * 16 + h2);
      q += 2;
    } else if (c == 'n' || c == 't' || c == '\\' || c == '"') {
      d[len++] = c == 'n' ? '\n' : c == 't' ? '\t' : c;
      q++;
    } else {
      free(d);
      return hg_error(HG_ERR_TOOL, "an unknown escape \\%c in the assembly string", c ? c : '0');
    }
  }
  free(d);
  return hg_error(HG_ERR_TOOL, "the assembly string is not terminated");
}

static void remove_dir(const char *dir, const char *file, const char *out) {
  unlink(file);
  unlink(out);
  rmdir(dir);
}

hg_status_t hg_mlir_lower(const char *mlir_text, const char *kernel_name, hg_text_t *ptx) {
  bool tool_missing;
  return hg_mlir_lower_run(mlir_text, kernel_name, ptx, &tool_missing);
}

hg_status_t hg_mlir_lower_run(const char *mlir_text, const char *kernel_name, hg_text_t *ptx,
                              bool *tool_missing) {
  *tool_missing = false;
  if (!ptx) return hg_error(HG_ERR_INVALID, "hg_mlir_lower: ptx is NULL");
  *ptx = (hg_text_t){0};
  if (!mlir_text || !kernel_name)
    return hg_error(HG_ERR_INVALID, "hg_mlir_lower: the MLIR text and kernel name are required");
  const char *tool = mlir_opt_tool();

  const char *tmpdir = getenv("TMPDIR");
  if (!tmpdir || !*tmpdir) tmpdir = "/tmp";
  char dir[4096], file[4200], out[4200];
  snprintf(dir, sizeof dir, "%s/hopgen-mlir-XXXXXX", tmpdir);
  if (!mkdtemp(dir))
    return hg_error(HG_ERR_IO,
                    "lowering kernel '%s': cannot create a temporary directory in %s: %s",
                    kernel_name, tmpdir, strerror(errno));
  snprintf(file, sizeof file, "%s/%s.mlir", dir, kernel_name);
  snprintf(out, sizeof out, "%s/%s.lowered.mlir", dir, kernel_name);
  hg_status_t s = write_file(file, mlir_text);
  if (!hg_is_ok(&s)) {
    remove_dir(dir, file, out);
    return hg_status_wrap(s, "lowering kernel '%s': ", kernel_name);
  }

  const char *argv[] = {tool, file, "--pass-pipeline=" HG_MLIR_PIPELINE, NULL};
  hg_text_t lowered = {0}, err = {0};
  s = hg_tool_run(argv, NULL, &lowered, &err);
  if (s.code == HG_ERR_TOOL && strstr(s.msg, " not found (")) {
    remove_dir(dir, file, out);
    hg_text_free(&lowered);
    hg_text_free(&err);
    *tool_missing = true;
    return hg_error(HG_ERR_TOOL,
                    "%s not found: install the MLIR 22 tools (apt-get install mlir-22-tools "
                    "llvm-22), or set HOPGEN_MLIR_OPT to its path",
                    tool);
  }
  if (!hg_is_ok(&s)) {
    char diag[700];
    if (s.code == HG_ERR_TOOL && strstr(s.msg, "exited with status"))
      first_errors(err.data, diag, sizeof diag);
    else
      snprintf(diag, sizeof diag, "%.600s", s.msg);
    hg_text_free(&lowered);
    hg_text_free(&err);
    return hg_error(HG_ERR_TOOL, "%s could not lower kernel '%s' (input kept in %s): %s", tool,
                    kernel_name, file, diag);
  }
  hg_text_free(&err);

  s = extract_ptx(lowered.data, ptx);
  if (hg_is_ok(&s)) {
    char entry[HG_IR_MAX_NAME + 16];
    snprintf(entry, sizeof entry, ".entry %s(", kernel_name);
    if (!strstr(ptx->data, entry)) {
      hg_text_free(ptx);
      s = hg_error(HG_ERR_TOOL, "the PTX has no entry '%s'", kernel_name);
    }
  }
  if (!hg_is_ok(&s)) {
    hg_status_t w = write_file(out, lowered.data ? lowered.data : "");
    hg_text_free(&lowered);
    return hg_error(HG_ERR_TOOL, "%s lowered kernel '%s' but %s (input kept in %s%s%s)", tool,
                    kernel_name, s.msg, file, hg_is_ok(&w) ? ", output in " : "",
                    hg_is_ok(&w) ? out : "");
  }
  hg_text_free(&lowered);
  remove_dir(dir, file, out);
  return hg_ok();
}

hg_status_t hg_emit_mlir_ptx(const hg_builder_t *b, hg_text_t *ptx) {
  if (!ptx) return hg_error(HG_ERR_INVALID, "hg_emit: out is NULL");
  *ptx = (hg_text_t){0};
  hg_text_t mlir = {0};
  HG_TRY(hg_emit_mlir(b, &mlir));
  hg_status_t s = hg_mlir_to_ptx(mlir.data, ptx);
  hg_text_free(&mlir);
  return s;
}
