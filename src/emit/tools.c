/* External tools (ptxas, mlir-opt-22) and the owned text type.
 *
 * hg_tool_run forks and execs a tool with three pipes and services all of them with
 * poll(), so neither a tool that writes megabytes before reading its input nor one that
 * fills stderr while we wait on stdout can deadlock. The library never prints: a
 * tool's output is captured and a failure's sentence quotes the start of its stderr. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hopgen/emit.h"

extern char **environ;

/* ----------------------------------------------------------------------------- text */

void hg_text_free(hg_text_t *t) {
  if (!t) return;
  free(t->data);
  t->data = NULL;
  t->len = 0;
}

typedef struct grow_buf {
  char *data;
  size_t len, cap;
  bool oom;
} grow_buf_t;

static void gb_append(grow_buf_t *g, const char *p, size_t n) {
  if (g->oom || n == 0) return;
  if (g->len + n + 1 > g->cap) {
    size_t cap = g->cap ? g->cap : 4096;
    while (cap < g->len + n + 1) cap *= 2;
    char *q = realloc(g->data, cap);
    if (!q) {
      g->oom = true;
      return;
    }
    g->data = q;
    g->cap = cap;
  }
  memcpy(g->data + g->len, p, n);
  g->len += n;
  g->data[g->len] = '\0';
}

/* ----------------------------------------------------------------------------- tool runner */

static bool executable(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Resolve a tool name through PATH, then /usr/local/cuda/bin (where the CUDA toolkit
 * installs ptxas whether or not PATH has it). A name with a '/' is used as given. */
static bool find_tool(const char *name, char *buf, size_t size) {
  if (strchr(name, '/')) {
    snprintf(buf, size, "%s", name);
    return executable(buf);
  }
  const char *path = getenv("PATH");
  if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
  for (const char *p = path;;) {
    const char *end = strchr(p, ':');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == 0)
      snprintf(buf, size, "./%s", name);
    else
      snprintf(buf, size, "%.*s/%s", (int)len, p, name);
    if (executable(buf)) return true;
    if (!end) break;
    p = end + 1;
  }
  snprintf(buf, size, "/usr/local/cuda/bin/%s", name);
  return executable(buf);
}

static hg_status_t not_found(const char *name) {
  const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
  const char *hint;
  if (!strcmp(base, "ptxas") || !strcmp(base, "nvcc") || !strcmp(base, "nvdisasm") ||
      !strcmp(base, "cuobjdump"))
    hint = "install the CUDA toolkit, or put its bin directory on PATH";
  else if (strstr(base, "mlir") || strstr(base, "llc"))
    hint = "install Debian's mlir-22-tools and llvm-22 packages, or put them on PATH";
  else
    hint = "put it on PATH";
  return hg_error(HG_ERR_TOOL, "%s not found (%s; searched PATH and /usr/local/cuda/bin)", name,
                  hint);
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

static bool make_pipe(int fds[2]) {
  if (pipe(fds) != 0) return false;
  for (int k = 0; k < 2; k++) fcntl(fds[k], F_SETFD, FD_CLOEXEC);
  return true;
}

/* The first lines of stderr, for a failure's sentence (up to ~600 bytes). */
static void head_of(const char *text, char *buf, size_t size) {
  size_t n = text ? strlen(text) : 0;
  while (n && (text[n - 1] == '\n' || text[n - 1] == ' ')) n--;
  if (n == 0) {
    snprintf(buf, size, "(nothing on stderr)");
    return;
  }
  if (n > size - 4) {
    snprintf(buf, size, "%.*s...", (int)(size - 4), text);
    return;
  }
  snprintf(buf, size, "%.*s", (int)n, text);
}

hg_status_t hg_tool_run(const char *const *argv, const char *stdin_text, hg_text_t *out,
                        hg_text_t *err) {
  if (out) *out = (hg_text_t){0};
  if (err) *err = (hg_text_t){0};
  if (!argv || !argv[0] || !argv[0][0])
    return hg_error(HG_ERR_INVALID, "hg_tool_run: no program given");
  char path[4096];
  if (!find_tool(argv[0], path, sizeof path)) return not_found(argv[0]);

  int in[2] = {-1, -1}, o[2] = {-1, -1}, e[2] = {-1, -1}, x[2] = {-1, -1};
  if (!make_pipe(in) || !make_pipe(o) || !make_pipe(e) || !make_pipe(x)) {
    int saved = errno;
    int *all[] = {&in[0], &in[1], &o[0], &o[1], &e[0], &e[1], &x[0], &x[1]};
    for (size_t k = 0; k < 8; k++) close_fd(all[k]);
    return hg_error(HG_ERR_IO, "running %s: cannot create pipes: %s", argv[0], strerror(saved));
  }

  /* A tool that exits without reading all its input would raise SIGPIPE on our write,
   * which by default kills the process: block it in this thread while we talk to the
   * child, and swallow any SIGPIPE we caused before restoring the mask. */
  sigset_t pipe_set, old_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  sigset_t pending;
  sigpending(&pending);
  bool pipe_was_pending = sigismember(&pending, SIGPIPE) == 1;

  pid_t pid = fork();
  if (pid < 0) {
    int saved = errno;
    int *all[] = {&in[0], &in[1], &o[0], &o[1], &e[0], &e[1], &x[0], &x[1]};
    for (size_t k = 0; k < 8; k++) close_fd(all[k]);
    pthread_sigmask(SIG_SETMASK, &old_set, NULL);
    return hg_error(HG_ERR_IO, "running %s: fork failed: %s", argv[0], strerror(saved));
  }
  if (pid == 0) {
    /* child: only async-signal-safe calls from here on */
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, NULL);
    if (dup2(in[0], 0) < 0 || dup2(o[1], 1) < 0 || dup2(e[1], 2) < 0) _exit(127);
    execve(path, (char *const *)argv, environ);
    int code = errno;
    ssize_t w = write(x[1], &code, sizeof code);
    (void)w;
    _exit(127);
  }
  close_fd(&in[0]);
  close_fd(&o[1]);
  close_fd(&e[1]);
  close_fd(&x[1]);

  size_t in_len = stdin_text ? strlen(stdin_text) : 0, in_at = 0;
  if (in_len == 0)
    close_fd(&in[1]);
  else
    fcntl(in[1], F_SETFL, fcntl(in[1], F_GETFL) | O_NONBLOCK);

  grow_buf_t gout = {0}, gerr = {0};
  bool io_failed = false;
  int io_errno = 0;
  while (o[0] >= 0 || e[0] >= 0 || in[1] >= 0) {
    struct pollfd fds[3];
    int nf = 0, io = -1, oo = -1, eo = -1;
    if (in[1] >= 0) {
      io = nf;
      fds[nf++] = (struct pollfd){.fd = in[1], .events = POLLOUT};
    }
    if (o[0] >= 0) {
      oo = nf;
      fds[nf++] = (struct pollfd){.fd = o[0], .events = POLLIN};
    }
    if (e[0] >= 0) {
      eo = nf;
      fds[nf++] = (struct pollfd){.fd = e[0], .events = POLLIN};
    }
    int rc = poll(fds, (nfds_t)nf, -1);
    if (rc < 0) {
      if (errno == EINTR) continue;
      io_failed = true;
      io_errno = errno;
      break;
    }
    if (io >= 0 && fds[io].revents) {
      if (fds[io].revents & (POLLERR | POLLHUP)) {
        close_fd(&in[1]); /* the tool stopped reading; its exit status will tell */
      } else {
        size_t chunk = in_len - in_at > 65536 ? 65536 : in_len - in_at;
        ssize_t w = write(in[1], stdin_text + in_at, chunk);
        if (w > 0)
          in_at += (size_t)w;
        else if (w < 0 && errno != EAGAIN && errno != EINTR)
          close_fd(&in[1]);
        if (in_at == in_len) close_fd(&in[1]);
      }
    }
    int rfd[2] = {oo, eo};
    int *fdp[2] = {&o[0], &e[0]};
    grow_buf_t *gb[2] = {&gout, &gerr};
    for (int k = 0; k < 2; k++) {
      if (rfd[k] < 0 || !fds[rfd[k]].revents) continue;
      char buf[65536];
      ssize_t n = read(*fdp[k], buf, sizeof buf);
      if (n > 0)
        gb_append(gb[k], buf, (size_t)n);
      else if (n == 0 || (errno != EAGAIN && errno != EINTR))
        close_fd(fdp[k]);
    }
  }
  close_fd(&in[1]);
  close_fd(&o[0]);
  close_fd(&e[0]);

  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  int exec_errno = 0;
  ssize_t got = read(x[0], &exec_errno, sizeof exec_errno);
  close_fd(&x[0]);

  if (!pipe_was_pending) {
    struct timespec zero = {0, 0};
    sigtimedwait(&pipe_set, NULL, &zero); /* discard a SIGPIPE our writes raised */
  }
  pthread_sigmask(SIG_SETMASK, &old_set, NULL);

  hg_status_t st = hg_ok();
  char head[640];
  if (got == (ssize_t)sizeof exec_errno) {
    st = hg_error(HG_ERR_TOOL, "%s (%s) could not be started: %s", argv[0], path,
                  strerror(exec_errno));
  } else if (io_failed) {
    st = hg_error(HG_ERR_IO, "running %s: poll failed: %s", argv[0], strerror(io_errno));
  } else if (gout.oom || gerr.oom) {
    st = hg_error(HG_ERR_NOMEM, "running %s: out of memory capturing its output", argv[0]);
  } else if (WIFSIGNALED(status)) {
    head_of(gerr.data, head, sizeof head);
    st = hg_error(HG_ERR_TOOL, "%s was killed by signal %d: %s", argv[0], WTERMSIG(status), head);
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    head_of(gerr.data, head, sizeof head);
    st = hg_error(HG_ERR_TOOL, "%s exited with status %d: %s", argv[0], WEXITSTATUS(status), head);
  }
  if (out && !gout.oom) {
    out->data = gout.data;
    out->len = gout.len;
  } else {
    free(gout.data);
  }
  if (err && !gerr.oom) {
    err->data = gerr.data;
    err->len = gerr.len;
  } else {
    free(gerr.data);
  }
  return st;
}

/* ----------------------------------------------------------------------------- ptxas */

/* The number right before `key` on the line (e.g. "12 bytes spill stores"), or -1. */
static int number_before(const char *line, const char *key) {
  const char *k = strstr(line, key);
  if (!k) return -1;
  const char *p = k;
  while (p > line && p[-1] == ' ') p--;
  const char *end = p;
  while (p > line && p[-1] >= '0' && p[-1] <= '9') p--;
  if (p == end) return -1;
  return atoi(p);
}

static void append_note(hg_ptxas_report_t *r, const char *line, size_t len) {
  size_t have = strlen(r->notes);
  if (have + 2 >= sizeof r->notes) return;
  snprintf(r->notes + have, sizeof r->notes - have, "%s%.*s", have ? "\n" : "", (int)len, line);
}

/* Parse `ptxas -v` output into the report; keep warnings and performance notes. */
static void parse_ptxas(const char *text, hg_ptxas_report_t *r) {
  for (const char *line = text; line && *line;) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    char buf[1024];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
    int v;
    if ((v = number_before(buf, "registers")) >= 0 && strstr(buf, "Used")) r->registers = v;
    if ((v = number_before(buf, "barriers")) >= 0) r->barriers = v;
    if ((v = number_before(buf, "bytes smem")) >= 0) r->smem_bytes = v;
    if ((v = number_before(buf, "bytes stack frame")) >= 0) r->stack_frame_bytes = v;
    if ((v = number_before(buf, "bytes spill stores")) >= 0) r->spill_store_bytes = v;
    if ((v = number_before(buf, "bytes spill loads")) >= 0) r->spill_load_bytes = v;
    if (strstr(buf, "setmaxnreg") && strstr(buf, "ignored")) r->setmaxnreg_ignored = true;
    if (strstr(buf, "warning") || strstr(buf, "Performance Loss")) append_note(r, buf, strlen(buf));
    line = nl ? nl + 1 : NULL;
  }
}

/* ptxas's error lines (those that say "error" or "fatal"), joined, for a sentence. */
static void error_lines(const char *text, char *buf, size_t size) {
  size_t at = 0;
  buf[0] = '\0';
  for (const char *line = text; line && *line && at + 1 < size;) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%.*s", (int)(len < sizeof tmp ? len : sizeof tmp - 1), line);
    if (strstr(tmp, "error") || strstr(tmp, "fatal")) {
      int n = snprintf(buf + at, size - at, "%s%s", at ? "; " : "", tmp);
      if (n < 0) break;
      at += (size_t)n;
      if (at >= size) {
        at = size - 1;
        break;
      }
    }
    line = nl ? nl + 1 : NULL;
  }
  if (!buf[0]) head_of(text, buf, size);
}

hg_status_t hg_ptxas_check(const char *ptx, hg_ptxas_report_t *report) {
  if (report) memset(report, 0, sizeof *report);
  if (!ptx) return hg_error(HG_ERR_INVALID, "hg_ptxas_check: ptx is NULL");
  char tool[4096];
  if (!find_tool("ptxas", tool, sizeof tool)) return not_found("ptxas");

  const char *tmpdir = getenv("TMPDIR");
  if (!tmpdir || !*tmpdir) tmpdir = "/tmp";
  char src[4096], bin[4200];
  snprintf(src, sizeof src, "%s/hopgen-ptxas-XXXXXX", tmpdir);
  int fd = mkstemp(src);
  if (fd < 0)
    return hg_error(HG_ERR_IO, "hg_ptxas_check: cannot create a temporary file in %s: %s", tmpdir,
                    strerror(errno));
  size_t len = strlen(ptx), at = 0;
  while (at < len) {
    ssize_t w = write(fd, ptx + at, len - at);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int saved = errno;
      close(fd);
      unlink(src);
      return hg_error(HG_ERR_IO, "hg_ptxas_check: writing %s failed: %s", src, strerror(saved));
    }
    at += (size_t)w;
  }
  close(fd);
  snprintf(bin, sizeof bin, "%s.cubin", src);

  const char *argv[] = {tool, "-arch=sm_90a", "-v", src, "-o", bin, NULL};
  hg_text_t out = {0}, err = {0};
  hg_status_t s = hg_tool_run(argv, NULL, &out, &err);
  unlink(src);
  unlink(bin);

  if (s.code == HG_OK || s.code == HG_ERR_TOOL) {
    /* ptxas writes its -v report on stderr (older versions on stdout): read both */
    hg_ptxas_report_t r = {0};
    parse_ptxas(out.data, &r);
    parse_ptxas(err.data, &r);
    if (s.code == HG_ERR_TOOL && strstr(s.msg, "exited with status")) {
      char lines[900];
      error_lines(err.data ? err.data : out.data, lines, sizeof lines);
      s = hg_error(HG_ERR_JIT, "ptxas rejected the PTX: %s", lines);
    }
    if (report) *report = r;
  }
  hg_text_free(&out);
  hg_text_free(&err);
  return s;
}
