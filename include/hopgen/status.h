/* hopgen — status values shared by every layer.
 *
 * Every fallible function returns an hg_status_t and writes its results through
 * out-parameters. A failure carries a code (for programs) and one human sentence
 * naming the offending value and the rule it broke (for people). The library never
 * prints, aborts or exits on its own. */
#ifndef HOPGEN_STATUS_H
#define HOPGEN_STATUS_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: what libhopgen.so exports */

typedef enum hg_code {
  HG_OK = 0,
  HG_ERR_PARSE,       /* malformed text (layout notation, CLI values, tool output) */
  HG_ERR_INVALID,     /* a well-formed value that breaks a rule (algebra, hardware limit) */
  HG_ERR_OVERFLOW,    /* an integer result does not fit its type */
  HG_ERR_CAPACITY,    /* a fixed-capacity value type would overflow (too many modes) */
  HG_ERR_UNSUPPORTED, /* valid request that hopgen does not implement (yet) */
  HG_ERR_NO_DRIVER,   /* libcuda.so.1 cannot be loaded */
  HG_ERR_NO_DEVICE,   /* no CUDA device, or not a Hopper (sm_90) device */
  HG_ERR_CUDA,        /* a CUDA driver call failed; the message names the call */
  HG_ERR_JIT,         /* the driver (or ptxas) rejected generated code; message has the log */
  HG_ERR_TOOL,        /* an external tool (ptxas, mlir-opt-22, llc-22) missing or failed */
  HG_ERR_IO,          /* a file or directory operation failed */
  HG_ERR_NOMEM,       /* an allocation failed */
  HG_ERR_MISMATCH,    /* a verification found results that differ from the reference */
} hg_code_t;

/* Large enough for a driver JIT log excerpt; longer messages are truncated with "...". */
#define HG_STATUS_MSG_BYTES 1024

typedef struct hg_status {
  hg_code_t code;
  char msg[HG_STATUS_MSG_BYTES]; /* one sentence (or a short log), NUL-terminated; "" when OK */
} hg_status_t;

/* Success. Inline so that the success path writes two fields, not 1 KB. */
static inline hg_status_t hg_ok(void) {
  hg_status_t s;
  s.code = HG_OK;
  s.msg[0] = '\0';
  return s;
}

/* A failure with a printf-formatted sentence. */
hg_status_t hg_error(hg_code_t code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Prefix context to a failure's sentence ("composing A with B: " + original); OK passes through. */
hg_status_t hg_status_wrap(hg_status_t s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static inline bool hg_is_ok(const hg_status_t *s) {
  return s->code == HG_OK;
}

/* Short stable name of a code ("invalid", "no-driver", ...) for JSON output. */
const char *hg_code_name(hg_code_t code);

/* The library's version, "MAJOR.MINOR.PATCH" (the README states the soname policy). */
const char *hg_version(void);

/* Return early with the status of EXPR when it failed. */
#define HG_TRY(expr)                                                                               \
  do {                                                                                             \
    hg_status_t hg_try_s_ = (expr);                                                                \
    if (hg_try_s_.code != HG_OK) return hg_try_s_;                                                 \
  } while (0)

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
