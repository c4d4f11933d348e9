/* Layout pictures into a caller's buffer (bindings.h): hg_layout_show / hg_layout_svg
 * write to a FILE, which a binding cannot hand over portably, so they write into an
 * in-memory stream here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hopgen/bindings.h"

hg_status_t hg_layout_picture(const hg_composed_t *l, const hg_layout_t *tv, bool svg, char *buf,
                              size_t size, size_t *needed) {
  if (needed) *needed = 0;
  if (!l) return hg_error(HG_ERR_INVALID, "hg_layout_picture: NULL layout");
  if (!buf && size) return hg_error(HG_ERR_INVALID, "hg_layout_picture: NULL buffer");
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return hg_error(HG_ERR_NOMEM, "hg_layout_picture: no memory for the picture");
  hg_status_t s = svg ? hg_layout_svg(l, tv, f) : hg_layout_show(l, f);
  if (fclose(f) != 0 && hg_is_ok(&s))
    s = hg_error(HG_ERR_NOMEM, "hg_layout_picture: no memory for the picture");
  if (hg_is_ok(&s)) {
    if (needed) *needed = len;
    if (len >= size)
      s = hg_error(HG_ERR_CAPACITY, "the picture needs %zu bytes, the buffer holds %zu", len + 1,
                   size);
    else
      memcpy(buf, text, len + 1);
  }
  free(text);
  return s;
}
