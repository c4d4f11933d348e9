/* A growable text buffer for the emit layer's printers (ptx.c, mlir.c): printf-style
 * appends that grow the buffer and remember an allocation failure instead of reporting each
 * one, so a printer checks once at the end. Internal to src/emit. */
#ifndef HOPGEN_EMIT_SBUF_H
#define HOPGEN_EMIT_SBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#if defined(__GNUC__)
#define HG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define HG_PRINTF(f, a)
#endif

typedef struct hg_sbuf {
  char *data; /* NUL-terminated once anything was written */
  size_t len, cap;
  bool oom; /* an allocation failed: later appends are dropped */
} hg_sbuf_t;

void hg_sbuf_vput(hg_sbuf_t *s, const char *fmt, va_list ap);
void hg_sbuf_put(hg_sbuf_t *s, const char *fmt, ...) HG_PRINTF(2, 3);

#endif
