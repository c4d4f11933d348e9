/* The notation: parse and print tuples, layouts, tilers and swizzled layouts.
 *
 * Canonical output is what the golden vectors use: `(4,8):(1,4)`, no spaces, a rank-1
 * tuple keeps its parentheses `(4)`. Input also accepts CuTe's and pycute's printed
 * forms: `_4` static integers, spaces anywhere between tokens, a trailing comma `(4,)`. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "layout_internal.h"

/* ---------------------------------------------------------------- printing */

void hgl_sb_puts(hgl_sbuf_t *b, const char *s) {
  size_t n = strlen(s);
  if (b->size > 0 && b->len < b->size - 1) {
    size_t room = b->size - 1 - b->len;
    memcpy(b->buf + b->len, s, n < room ? n : room);
  }
  b->len += n;
  if (b->size > 0) b->buf[b->len < b->size ? b->len : b->size - 1] = '\0';
}

static void sb_int(hgl_sbuf_t *b, int64_t v) {
  char tmp[32];
  if (v == HG_UNDERSCORE)
    snprintf(tmp, sizeof tmp, "_");
  else
    snprintf(tmp, sizeof tmp, "%lld", (long long)v);
  hgl_sb_puts(b, tmp);
}

static int sb_tuple(hgl_sbuf_t *b, const hg_tuple_t *t, int i) {
  if (t->arity[i] == HG_LEAF) {
    sb_int(b, t->v[i]);
    return i + 1;
  }
  int k = t->arity[i];
  hgl_sb_puts(b, "(");
  i++;
  for (int j = 0; j < k; j++) {
    if (j) hgl_sb_puts(b, ",");
    i = sb_tuple(b, t, i);
  }
  hgl_sb_puts(b, ")");
  return i;
}

static int sb_done(hgl_sbuf_t *b) {
  if (b->size > 0 && b->len == 0) b->buf[0] = '\0';
  return b->len > (size_t)INT32_MAX ? INT32_MAX : (int)b->len;
}

int hg_tuple_print(const hg_tuple_t *t, char *buf, size_t size) {
  hgl_sbuf_t b = {buf, size, 0};
  if (!hgl_tuple_valid(t))
    hgl_sb_puts(&b, "<invalid tuple>");
  else
    sb_tuple(&b, t, 0);
  return sb_done(&b);
}

static void sb_layout(hgl_sbuf_t *b, const hg_layout_t *l) {
  if (!hgl_tuple_valid(&l->shape) || !hgl_tuple_valid(&l->stride)) {
    hgl_sb_puts(b, "<invalid layout>");
    return;
  }
  sb_tuple(b, &l->shape, 0);
  hgl_sb_puts(b, ":");
  sb_tuple(b, &l->stride, 0);
}

int hg_layout_print(const hg_layout_t *l, char *buf, size_t size) {
  hgl_sbuf_t b = {buf, size, 0};
  sb_layout(&b, l);
  return sb_done(&b);
}

/* The list (first, count) as [slot,...]; returns one past its last node. */
static int sb_tiler_list(hgl_sbuf_t *b, const hg_tiler_t *t, int first, int count) {
  int i = first;
  hgl_sb_puts(b, "[");
  for (int k = 0; k < count && i < HG_TILER_MAX; k++) {
    if (k) hgl_sb_puts(b, ",");
    if (t->sub[i] > 0) {
      i = sb_tiler_list(b, t, i + 1, t->sub[i]);
      continue;
    }
    if (t->skip[i])
      hgl_sb_puts(b, "_");
    else
      sb_layout(b, &t->mode[i]);
    i++;
  }
  hgl_sb_puts(b, "]");
  return i;
}

int hg_tiler_print(const hg_tiler_t *t, char *buf, size_t size) {
  hgl_sbuf_t b = {buf, size, 0};
  hg_status_t s = t->rank == 0 ? hg_ok() : hgl_check_tiler(t, "tiler");
  if (t->rank == 0)
    sb_layout(&b, &t->mode[0]);
  else if (!hg_is_ok(&s))
    hgl_sb_puts(&b, "<invalid tiler>");
  else
    sb_tiler_list(&b, t, 0, t->rank);
  return sb_done(&b);
}

int hg_composed_print(const hg_composed_t *c, char *buf, size_t size) {
  hgl_sbuf_t b = {buf, size, 0};
  if (c->sw.b != 0 || c->offset != 0) {
    char tmp[96];
    snprintf(tmp, sizeof tmp, "Sw<%d,%d,%d> o %lld o ", c->sw.b, c->sw.m, c->sw.s,
             (long long)c->offset);
    hgl_sb_puts(&b, tmp);
  }
  sb_layout(&b, &c->layout);
  return sb_done(&b);
}

const char *hgl_lstr(const hg_layout_t *l, char *buf, size_t size) {
  hgl_sbuf_t b = {buf, size, 0};
  sb_layout(&b, l);
  if (b.len >= size && size > 4) memcpy(buf + size - 4, "...", 4);
  return buf;
}

hg_status_t hgl_wrap(hg_status_t s, const char *what, const hg_layout_t *l, const hg_layout_t *b) {
  if (hg_is_ok(&s)) return s;
  char x[256], y[256];
  return hg_status_wrap(s, "%s %s%s%s: ", what, hgl_lstr(l, x, sizeof x), b ? " and " : "",
                        b ? hgl_lstr(b, y, sizeof y) : "");
}

const char *hgl_tstr(const hg_tuple_t *t, char *buf, size_t size) {
  hg_tuple_print(t, buf, size);
  if (strlen(buf) + 1 >= size && size > 4) memcpy(buf + size - 4, "...", 4);
  return buf;
}

/* ---------------------------------------------------------------- parsing */

void hgl_skip_ws(hgl_cursor_t *c) {
  while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r') c->p++;
}

hg_status_t hgl_parse_error(const hgl_cursor_t *c, const char *fmt, ...) {
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  long col = (long)(c->p - c->text) + 1;
  if (*c->p)
    return hg_error(HG_ERR_PARSE, "cannot parse \"%.200s\": %s at column %ld (found '%c')", c->text,
                    what, col, *c->p);
  return hg_error(HG_ERR_PARSE, "cannot parse \"%.200s\": %s at column %ld (end of text)", c->text,
                  what, col);
}

hg_status_t hgl_parse_int(hgl_cursor_t *c, int64_t *out) {
  const char *start = c->p;
  bool neg = false;
  if (*c->p == '+' || *c->p == '-') {
    neg = *c->p == '-';
    c->p++;
  }
  if (!isdigit((unsigned char)*c->p)) return hgl_parse_error(c, "expected a digit");
  /* Accumulate negatively so that INT64_MIN's magnitude is representable; INT64_MIN itself
   * is refused below because it is the `_` marker. */
  int64_t v = 0;
  while (isdigit((unsigned char)*c->p)) {
    int d = *c->p - '0';
    if (v < (INT64_MIN + d) / 10) {
      hgl_cursor_t at = {c->text, start};
      return hgl_parse_error(&at, "integer does not fit int64");
    }
    v = v * 10 - d;
    c->p++;
  }
  if (!neg) {
    if (v == INT64_MIN) {
      hgl_cursor_t at = {c->text, start};
      return hgl_parse_error(&at, "integer does not fit int64");
    }
    v = -v;
  } else if (v == INT64_MIN) {
    hgl_cursor_t at = {c->text, start};
    return hgl_parse_error(&at, "integer -9223372036854775808 is reserved (it marks `_`)");
  }
  *out = v;
  return hg_ok();
}

static hg_status_t add_node(hgl_cursor_t *c, hg_tuple_t *t, int8_t arity, int64_t v) {
  if (t->n >= HG_TUPLE_MAX)
    return hg_error(HG_ERR_CAPACITY,
                    "cannot parse \"%.200s\": more than HG_TUPLE_MAX = %d nodes (integers plus "
                    "parenthesised groups) at column %ld",
                    c->text, HG_TUPLE_MAX, (long)(c->p - c->text) + 1);
  t->arity[t->n] = arity;
  t->v[t->n] = v;
  t->n++;
  return hg_ok();
}

static hg_status_t parse_elem(hgl_cursor_t *c, hg_tuple_t *t) {
  hgl_skip_ws(c);
  char ch = *c->p;
  if (ch == '(') {
    int me = t->n;
    HG_TRY(add_node(c, t, 0, 0));
    c->p++;
    hgl_skip_ws(c);
    if (*c->p == ')') return hgl_parse_error(c, "empty tuple ()");
    for (;;) {
      if (t->arity[me] >= 127) return hgl_parse_error(c, "more than 127 elements in a tuple");
      HG_TRY(parse_elem(c, t));
      t->arity[me]++;
      hgl_skip_ws(c);
      if (*c->p == ',') {
        c->p++;
        hgl_skip_ws(c);
        if (*c->p == ')') { /* pycute prints a rank-1 tuple as (4,) */
          c->p++;
          return hg_ok();
        }
        continue;
      }
      if (*c->p == ')') {
        c->p++;
        return hg_ok();
      }
      return hgl_parse_error(c, "expected ',' or ')'");
    }
  }
  if (ch == '_') {
    c->p++;
    if (isdigit((unsigned char)*c->p) || *c->p == '-' || *c->p == '+') {
      int64_t v; /* CuTe prints static integers as _4 */
      HG_TRY(hgl_parse_int(c, &v));
      return add_node(c, t, HG_LEAF, v);
    }
    return add_node(c, t, HG_LEAF, HG_UNDERSCORE);
  }
  if (isdigit((unsigned char)ch) || ch == '-' || ch == '+') {
    int64_t v;
    HG_TRY(hgl_parse_int(c, &v));
    return add_node(c, t, HG_LEAF, v);
  }
  return hgl_parse_error(c, "expected an integer, '_' or '('");
}

hg_status_t hgl_parse_tuple(hgl_cursor_t *c, hg_tuple_t *out) {
  hg_tuple_t t;
  t.n = 0;
  HG_TRY(parse_elem(c, &t));
  *out = t;
  return hg_ok();
}

static hg_status_t expect_end(hgl_cursor_t *c) {
  hgl_skip_ws(c);
  if (*c->p) return hgl_parse_error(c, "unexpected text after the value");
  return hg_ok();
}

hg_status_t hg_tuple_parse(const char *text, hg_tuple_t *out) {
  if (!text) return hg_error(HG_ERR_PARSE, "cannot parse a NULL tuple text");
  hgl_cursor_t c = {text, text};
  hg_tuple_t t;
  HG_TRY(hgl_parse_tuple(&c, &t));
  HG_TRY(expect_end(&c));
  *out = t;
  return hg_ok();
}

hg_status_t hgl_parse_layout(hgl_cursor_t *c, hg_layout_t *out) {
  hg_layout_t l;
  const char *start = c->p;
  HG_TRY(hgl_parse_tuple(c, &l.shape));
  hgl_skip_ws(c);
  if (*c->p != ':') return hgl_parse_error(c, "expected ':' between shape and stride");
  c->p++;
  HG_TRY(hgl_parse_tuple(c, &l.stride));
  if (!hg_tuple_congruent(&l.shape, &l.stride)) {
    char a[256], b[256];
    hgl_cursor_t at = {c->text, start};
    return hgl_parse_error(&at, "shape %s and stride %s are not congruent (same nesting)",
                           hgl_tstr(&l.shape, a, sizeof a), hgl_tstr(&l.stride, b, sizeof b));
  }
  for (int i = 0; i < l.shape.n; i++) {
    if (l.shape.arity[i] != HG_LEAF) continue;
    if (l.shape.v[i] == HG_UNDERSCORE || l.stride.v[i] == HG_UNDERSCORE) {
      hgl_cursor_t at = {c->text, start};
      return hgl_parse_error(&at, "a layout cannot hold '_'");
    }
    if (l.shape.v[i] < 0) {
      hgl_cursor_t at = {c->text, start};
      return hgl_parse_error(&at, "shape %lld is negative (shapes are sizes, >= 0)",
                             (long long)l.shape.v[i]);
    }
  }
  *out = l;
  return hg_ok();
}

hg_status_t hg_layout_parse(const char *text, hg_layout_t *out) {
  if (!text) return hg_error(HG_ERR_PARSE, "cannot parse a NULL layout text");
  hgl_cursor_t c = {text, text};
  hg_layout_t l;
  HG_TRY(hgl_parse_layout(&c, &l));
  HG_TRY(expect_end(&c));
  *out = l;
  return hg_ok();
}

/* A tuple of sizes as tiler slots: an integer n is n:1, `_` a skip, a tuple a nested
 * list (pycute's tuple tilers). */
static hg_status_t tuple_slots(hgl_cursor_t *c, const char *start, const hg_tuple_t *sh, int si,
                               hg_tiler_t *t, int *n) {
  for (int k = 0, e = si + 1; k < sh->arity[si]; k++, e = hgl_end(sh, e)) {
    if (sh->arity[e] != HG_LEAF) {
      int me = *n;
      HG_TRY(hgl_tiler_add(t, n, NULL, false));
      t->sub[me] = sh->arity[e];
      HG_TRY(tuple_slots(c, start, sh, e, t, n));
      continue;
    }
    int64_t v = sh->v[e];
    if (v != HG_UNDERSCORE && v < 0) {
      hgl_cursor_t at = {c->text, start};
      return hgl_parse_error(&at, "a tiler size must be an integer >= 0");
    }
    hg_layout_t l = hg_layout_1d(v, 1);
    HG_TRY(hgl_tiler_add(t, n, v == HG_UNDERSCORE ? NULL : &l, v == HG_UNDERSCORE));
  }
  return hg_ok();
}

/* One slot: `_`, a nested list [...], a layout, an integer n (n:1), or a tuple of sizes
 * (a nested list). Appends its nodes at *n. */
static hg_status_t parse_tiler_list(hgl_cursor_t *c, hg_tiler_t *t, int *n, int *count);

static hg_status_t parse_tiler_slot(hgl_cursor_t *c, hg_tiler_t *t, int *n) {
  hgl_skip_ws(c);
  const char *start = c->p;
  if (c->p[0] == '_' && !isdigit((unsigned char)c->p[1]) && c->p[1] != '-' && c->p[1] != '+') {
    c->p++;
    return hgl_tiler_add(t, n, NULL, true);
  }
  if (*c->p == '[') {
    int me = *n, count;
    HG_TRY(hgl_tiler_add(t, n, NULL, false));
    HG_TRY(parse_tiler_list(c, t, n, &count));
    t->sub[me] = (int8_t)count;
    return hg_ok();
  }
  hg_tuple_t sh;
  HG_TRY(hgl_parse_tuple(c, &sh));
  hgl_skip_ws(c);
  if (*c->p == ':') {
    hg_layout_t l;
    c->p = start;
    HG_TRY(hgl_parse_layout(c, &l));
    return hgl_tiler_add(t, n, &l, false);
  }
  /* A bare integer or tuple of sizes: wrap it as a one-slot list and unwrap that list. */
  hg_tuple_t one;
  hgl_empty(&one);
  HG_TRY(hgl_push(&one, &sh));
  return tuple_slots(c, start, &one, 0, t, n);
}

/* [slot, slot, ...] at the cursor; *count is the number of slots. */
static hg_status_t parse_tiler_list(hgl_cursor_t *c, hg_tiler_t *t, int *n, int *count) {
  c->p++; /* '[' */
  *count = 0;
  for (;;) {
    if (*count >= 127) return hgl_parse_error(c, "more than 127 slots in a tiler list");
    HG_TRY(parse_tiler_slot(c, t, n));
    (*count)++;
    hgl_skip_ws(c);
    if (*c->p == ',') {
      c->p++;
      continue;
    }
    if (*c->p == ']') {
      c->p++;
      return hg_ok();
    }
    return hgl_parse_error(c, "expected ',' or ']' in a by-mode tiler");
  }
}

hg_status_t hg_tiler_parse(const char *text, hg_tiler_t *out) {
  if (!text) return hg_error(HG_ERR_PARSE, "cannot parse a NULL tiler text");
  hgl_cursor_t c = {text, text};
  hg_tiler_t r;
  memset(&r, 0, sizeof r);
  int n = 0;
  hg_status_t s = hg_ok();
  hgl_skip_ws(&c);
  if (*c.p == '[') {
    s = parse_tiler_list(&c, &r, &n, &r.rank);
  } else {
    const char *start = c.p;
    hg_tuple_t sh;
    HG_TRY(hgl_parse_tuple(&c, &sh));
    hgl_skip_ws(&c);
    if (*c.p == ':') {
      c.p = start;
      HG_TRY(hgl_parse_layout(&c, &r.mode[0]));
    } else if (hg_is_int(&sh)) {
      if (sh.v[0] == HG_UNDERSCORE || sh.v[0] < 0) {
        hgl_cursor_t at = {text, start};
        return hgl_parse_error(&at, "a tiler size must be an integer >= 0");
      }
      r.mode[0] = hg_layout_1d(sh.v[0], 1);
    } else {
      /* A tuple of sizes is a by-mode tiler, as CuTe treats a Shape tiler. */
      r.rank = sh.arity[0];
      s = tuple_slots(&c, start, &sh, 0, &r, &n);
    }
  }
  if (s.code == HG_ERR_CAPACITY)
    return hgl_parse_error(&c,
                           "a tiler holds at most HG_TILER_MAX = %d nodes (layouts, '_' and "
                           "nested lists together)",
                           HG_TILER_MAX);
  HG_TRY(s);
  HG_TRY(expect_end(&c));
  *out = r;
  return hg_ok();
}

/* Sw<B,M,S> (CuTe) or SW_B_M_S (pycute). */
static hg_status_t parse_swizzle(hgl_cursor_t *c, hg_swizzle_t *sw) {
  int64_t v[3];
  const char *start = c->p;
  bool angle = strncmp(c->p, "Sw<", 3) == 0;
  c->p += 3;
  for (int i = 0; i < 3; i++) {
    hgl_skip_ws(c);
    HG_TRY(hgl_parse_int(c, &v[i]));
    hgl_skip_ws(c);
    if (i < 2) {
      if (*c->p != (angle ? ',' : '_'))
        return hgl_parse_error(c, "expected '%c' in a swizzle", angle ? ',' : '_');
      c->p++;
    }
  }
  if (angle) {
    if (*c->p != '>') return hgl_parse_error(c, "expected '>' closing Sw<B,M,S>");
    c->p++;
  }
  if (v[0] < -1000 || v[0] > 1000 || v[1] < -1000 || v[1] > 1000 || v[2] < -1000 || v[2] > 1000) {
    hgl_cursor_t at = {c->text, start};
    return hgl_parse_error(&at, "swizzle parameters out of range");
  }
  hg_status_t s = hg_swizzle_make((int)v[0], (int)v[1], (int)v[2], sw);
  if (!hg_is_ok(&s)) return hg_status_wrap(s, "cannot parse \"%.200s\": ", c->text);
  return hg_ok();
}

static hg_status_t expect_o(hgl_cursor_t *c) {
  hgl_skip_ws(c);
  if (*c->p != 'o') return hgl_parse_error(c, "expected 'o' (composition)");
  c->p++;
  return hg_ok();
}

hg_status_t hg_composed_parse(const char *text, hg_composed_t *out) {
  if (!text) return hg_error(HG_ERR_PARSE, "cannot parse a NULL layout text");
  hgl_cursor_t c = {text, text};
  hg_composed_t r;
  memset(&r, 0, sizeof r);
  hgl_skip_ws(&c);
  if (strncmp(c.p, "Sw<", 3) == 0 || strncmp(c.p, "SW_", 3) == 0) {
    HG_TRY(parse_swizzle(&c, &r.sw));
    HG_TRY(expect_o(&c));
    hgl_skip_ws(&c);
    const char *start = c.p;
    hg_tuple_t t;
    HG_TRY(hgl_parse_tuple(&c, &t));
    hgl_skip_ws(&c);
    if (*c.p == ':') {
      c.p = start;
    } else {
      if (!hg_is_int(&t) || t.v[0] == HG_UNDERSCORE) {
        hgl_cursor_t at = {text, start};
        return hgl_parse_error(&at, "expected an integer offset or a layout after 'o'");
      }
      r.offset = t.v[0];
      HG_TRY(expect_o(&c));
    }
  }
  HG_TRY(hgl_parse_layout(&c, &r.layout));
  HG_TRY(expect_end(&c));
  *out = r;
  return hg_ok();
}
