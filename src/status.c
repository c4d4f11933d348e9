/* hg_status_t helpers: the only code every layer shares (see include/hopgen/status.h). */
#include "hopgen/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Mark a truncated message so that a reader knows the sentence was cut. */
static void mark_truncation(char *msg, int written) {
  if (written >= HG_STATUS_MSG_BYTES) memcpy(msg + HG_STATUS_MSG_BYTES - 4, "...", 4);
}

hg_status_t hg_error(hg_code_t code, const char *fmt, ...) {
  hg_status_t s;
  s.code = code;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(s.msg, sizeof s.msg, fmt, ap);
  va_end(ap);
  if (n < 0) s.msg[0] = '\0';
  mark_truncation(s.msg, n);
  return s;
}

hg_status_t hg_status_wrap(hg_status_t s, const char *fmt, ...) {
  if (s.code == HG_OK) return s;
  hg_status_t out;
  out.code = s.code;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(out.msg, sizeof out.msg, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  if (n < (int)sizeof out.msg) {
    int m = snprintf(out.msg + n, sizeof out.msg - (size_t)n, "%s", s.msg);
    mark_truncation(out.msg, n + m);
  } else {
    mark_truncation(out.msg, n);
  }
  return out;
}

const char *hg_code_name(hg_code_t code) {
  switch (code) {
  case HG_OK:
    return "ok";
  case HG_ERR_PARSE:
    return "parse";
  case HG_ERR_INVALID:
    return "invalid";
  case HG_ERR_OVERFLOW:
    return "overflow";
  case HG_ERR_CAPACITY:
    return "capacity";
  case HG_ERR_UNSUPPORTED:
    return "unsupported";
  case HG_ERR_NO_DRIVER:
    return "no-driver";
  case HG_ERR_NO_DEVICE:
    return "no-device";
  case HG_ERR_CUDA:
    return "cuda";
  case HG_ERR_JIT:
    return "jit";
  case HG_ERR_TOOL:
    return "tool";
  case HG_ERR_IO:
    return "io";
  case HG_ERR_NOMEM:
    return "nomem";
  case HG_ERR_MISMATCH:
    return "mismatch";
  }
  return "unknown";
}
