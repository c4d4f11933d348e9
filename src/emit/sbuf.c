/* The emit layer's growable text buffer (sbuf.h). */
#include "emit/sbuf.h"

#include <stdio.h>
#include <stdlib.h>

void hg_sbuf_vput(hg_sbuf_t *s, const char *fmt, va_list ap) {
  if (s->oom) return;
  for (;;) {
    va_list aq;
    va_copy(aq, ap);
    size_t room = s->cap - s->len;
    int n = vsnprintf(s->data ? s->data + s->len : NULL, s->data ? room : 0, fmt, aq);
    va_end(aq);
    if (n < 0) {
      s->oom = true;
      return;
    }
    if (s->data && (size_t)n < room) {
      s->len += (size_t)n;
      return;
    }
    /* Kernels print tens of kilobytes: start at 16 KiB and double. */
    size_t cap = s->cap ? s->cap : 16384;
    while (cap - s->len <= (size_t)n) cap *= 2;
    char *p = realloc(s->data, cap);
    if (!p) {
      s->oom = true;
      return;
    }
    s->data = p;
    s->cap = cap;
  }
}

void hg_sbuf_put(hg_sbuf_t *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  hg_sbuf_vput(s, fmt, ap);
  va_end(ap);
}
