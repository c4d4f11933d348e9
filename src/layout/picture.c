/* Pictures of layouts: a text table like cute::print_layout, and an SVG. */
#include <stdlib.h>
#include <string.h>

#include "layout_internal.h"

/* Pictures beyond this many cells are refused: nobody reads them, and an SVG of a huge
 * layout would be megabytes. */
#define HGL_PICTURE_MAX_CELLS (1 << 16)

typedef struct grid {
  int64_t rows, cols;
} grid_t;

/* Rows are mode 0; every later mode folds into the columns (colexicographically, so cell
 * (m, n) is the 1-D index m + n * rows). A rank-1 layout is one row. */
static hg_status_t grid_of(const hg_composed_t *c, const char *what, grid_t *g) {
  hg_swizzle_t sw;
  HG_TRY(hg_swizzle_make(c->sw.b, c->sw.m, c->sw.s, &sw));
  HG_TRY(hgl_check_layout(&c->layout, what));
  int64_t n;
  HG_TRY(hgl_size(&c->layout, &n));
  char x[256];
  if (n > HGL_PICTURE_MAX_CELLS)
    return hg_error(HG_ERR_INVALID, "%s: %s has %lld elements, more than the %d a picture shows",
                    what, hgl_lstr(&c->layout, x, sizeof x), (long long)n, HGL_PICTURE_MAX_CELLS);
  if (n == 0) { /* an empty domain: no cells, whatever the other modes say */
    g->rows = g->cols = 0;
  } else if (hgl_rank(&c->layout) >= 2) {
    hg_layout_t m0;
    hgl_mode(&c->layout, 0, &m0);
    HG_TRY(hgl_size(&m0, &g->rows));
    g->cols = g->rows ? n / g->rows : 0;
  } else {
    g->rows = 1;
    g->cols = n;
  }
  return hg_ok();
}

static hg_status_t value_at(const hg_composed_t *c, const grid_t *g, int64_t m, int64_t n,
                            int64_t *v) {
  hg_tuple_t crd = hg_int(m + n * g->rows);
  return hg_composed_eval(c, &crd, v);
}

static int digits(int64_t v) {
  char tmp[32];
  return snprintf(tmp, sizeof tmp, "%lld", (long long)v);
}

static hg_status_t io_check(FILE *out, const char *what) {
  if (ferror(out)) return hg_error(HG_ERR_IO, "%s: writing the picture failed", what);
  return hg_ok();
}

hg_status_t hg_layout_show(const hg_composed_t *l, FILE *out) {
  if (!out) return hg_error(HG_ERR_INVALID, "show: NULL output stream");
  grid_t g;
  HG_TRY(grid_of(l, "show", &g));
  /* Width: print_layout's num_digits(cosize), widened if a value or column index needs
   * more (a swizzle or a negative stride can exceed the cosize). */
  int w = digits(g.cols > 0 ? g.cols - 1 : 0);
  int64_t cosize;
  hg_status_t cs = hgl_cosize(&l->layout, &cosize);
  if (hg_is_ok(&cs) && digits(cosize) > w) w = digits(cosize);
  for (int64_t m = 0; m < g.rows; m++)
    for (int64_t n = 0; n < g.cols; n++) {
      int64_t v;
      HG_TRY(value_at(l, &g, m, n, &v));
      if (digits(v) > w) w = digits(v);
    }
  char text[2048];
  hg_composed_print(l, text, sizeof text);
  fprintf(out, "%s\n", text);
  fprintf(out, "    ");
  for (int64_t n = 0; n < g.cols; n++) fprintf(out, "  %*lld ", w, (long long)n);
  fprintf(out, "\n");
  for (int64_t m = 0; m <= g.rows; m++) {
    fprintf(out, "    ");
    for (int64_t n = 0; n < g.cols; n++) {
      fputc('+', out);
      for (int k = 0; k < w + 2; k++) fputc('-', out);
    }
    fprintf(out, "+\n");
    if (m == g.rows) break;
    fprintf(out, "%2lld  ", (long long)m);
    for (int64_t n = 0; n < g.cols; n++) {
      int64_t v;
      HG_TRY(value_at(l, &g, m, n, &v));
      fprintf(out, "| %*lld ", w, (long long)v);
    }
    fprintf(out, "|\n");
  }
  return io_check(out, "show");
}

/* Eight light colours that keep black text readable; value (or thread) modulo 8 picks one,
 * as CuTe's print_latex palettes do. */
static const char *const palette[8] = {"#afafff", "#afffaf", "#ffffaf", "#ffafaf",
                                       "#d2d2ff", "#d2ffd2", "#ffffd2", "#ffd2d2"};

static void xml_text(FILE *out, const char *s) {
  for (; *s; s++) {
    if (*s == '<')
      fputs("&lt;", out);
    else if (*s == '>')
      fputs("&gt;", out);
    else if (*s == '&')
      fputs("&amp;", out);
    else
      fputc(*s, out);
  }
}

static int64_t mod8(int64_t v) {
  int64_t r = v % 8;
  return r < 0 ? r + 8 : r;
}

static hg_status_t svg_body(const hg_composed_t *l, const hg_layout_t *tv, FILE *out,
                            const grid_t *gp, int64_t *owner_t, int64_t *owner_v);

hg_status_t hg_layout_svg(const hg_composed_t *l, const hg_layout_t *tv, FILE *out) {
  if (!out) return hg_error(HG_ERR_INVALID, "svg: NULL output stream");
  grid_t g;
  HG_TRY(grid_of(l, "svg", &g));
  /* The owner table is the one variable-size thing here (pictures are not algebra). */
  size_t cells = (size_t)(g.rows * g.cols) + 1;
  int64_t *owner = malloc(2 * cells * sizeof *owner);
  if (!owner) return hg_error(HG_ERR_NOMEM, "svg: no memory for %zu cells", cells);
  hg_status_t s = svg_body(l, tv, out, &g, owner, owner + cells);
  free(owner);
  return s;
}

/* With a TV layout, owner_t/owner_v say which (thread, value) owns each cell. */
static hg_status_t svg_body(const hg_composed_t *l, const hg_layout_t *tv, FILE *out,
                            const grid_t *gp, int64_t *owner_t, int64_t *owner_v) {
  grid_t g = *gp;
  int64_t n = g.rows * g.cols;
  int64_t nthr = 0, nval = 0;
  char x[512], y[256];
  if (tv) {
    HG_TRY(hgl_check_layout(tv, "svg: TV layout"));
    if (hgl_rank(tv) != 2)
      return hg_error(HG_ERR_INVALID,
                      "svg: the TV layout %s must have rank 2 ((thread, value) -> index)",
                      hgl_lstr(tv, x, sizeof x));
    hg_layout_t m;
    hgl_mode(tv, 0, &m);
    HG_TRY(hgl_size(&m, &nthr));
    hgl_mode(tv, 1, &m);
    HG_TRY(hgl_size(&m, &nval));
    int64_t cells;
    /* Each factor is bounded too: a size-0 mode would make the product small while the
     * other factor still drives a loop. */
    if (nthr < 0 || nval < 0 || nthr > HGL_PICTURE_MAX_CELLS || nval > HGL_PICTURE_MAX_CELLS ||
        __builtin_mul_overflow(nthr, nval, &cells) || cells > HGL_PICTURE_MAX_CELLS)
      return hg_error(HG_ERR_INVALID, "svg: the TV layout %s is too large to draw",
                      hgl_lstr(tv, x, sizeof x));
  }
  for (int64_t i = 0; i < n; i++) owner_t[i] = -1;
  for (int64_t t = 0; t < nthr; t++)
    for (int64_t v = 0; v < nval; v++) {
      hg_tuple_t crd;
      int64_t tv2[2] = {t, v}, idx;
      HG_TRY(hg_tuple_ints(&crd, 2, tv2));
      HG_TRY(hg_crd2idx(tv, &crd, &idx));
      if (idx < 0 || idx >= n)
        return hg_error(HG_ERR_INVALID,
                        "svg: the TV layout %s maps thread %lld value %lld to %lld, outside the "
                        "layout %s (0..%lld)",
                        hgl_lstr(tv, x, sizeof x), (long long)t, (long long)v, (long long)idx,
                        hgl_lstr(&l->layout, y, sizeof y), (long long)(n - 1));
      owner_t[idx] = t;
      owner_v[idx] = v;
    }
  const int cw = tv ? 64 : 48, ch = tv ? 40 : 32, margin = 40, title = 28;
  int64_t width = margin + g.cols * cw + 8, height = title + margin + g.rows * ch + 8;
  char text[2048];
  hg_composed_print(l, text, sizeof text);
  fprintf(out,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%lld\" height=\"%lld\" "
          "viewBox=\"0 0 %lld %lld\" font-family=\"monospace\" font-size=\"12\">\n",
          (long long)width, (long long)height, (long long)width, (long long)height);
  fprintf(out, "<title>");
  xml_text(out, text);
  fprintf(out, "</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
  fprintf(out, "<text x=\"4\" y=\"18\" font-size=\"14\">");
  xml_text(out, text);
  if (tv) {
    fprintf(out, "  TV ");
    hg_layout_print(tv, text, sizeof text);
    xml_text(out, text);
  }
  fprintf(out, "</text>\n");
  for (int64_t c = 0; c < g.cols; c++)
    fprintf(out, "<text x=\"%lld\" y=\"%d\" text-anchor=\"middle\">%lld</text>\n",
            (long long)(margin + c * cw + cw / 2), title + margin - 8, (long long)c);
  for (int64_t r = 0; r < g.rows; r++) {
    fprintf(out,
            "<text x=\"%d\" y=\"%lld\" text-anchor=\"end\" dominant-baseline=\"middle\">%lld"
            "</text>\n",
            margin - 6, (long long)(title + margin + r * ch + ch / 2), (long long)r);
    for (int64_t c = 0; c < g.cols; c++) {
      int64_t i = r + c * g.rows, v;
      HG_TRY(value_at(l, &g, r, c, &v));
      const char *fill =
          tv ? (owner_t[i] < 0 ? "#ffffff" : palette[mod8(owner_t[i])]) : palette[mod8(v)];
      long long px = (long long)(margin + c * cw), py = (long long)(title + margin + r * ch);
      fprintf(out,
              "<rect x=\"%lld\" y=\"%lld\" width=\"%d\" height=\"%d\" fill=\"%s\" "
              "stroke=\"black\"/>\n",
              px, py, cw, ch, fill);
      if (tv && owner_t[i] >= 0)
        fprintf(out,
                "<text x=\"%lld\" y=\"%lld\" text-anchor=\"middle\" dominant-baseline=\"middle\">"
                "T%lldV%lld</text>\n",
                px + cw / 2, py + ch / 2, (long long)owner_t[i], (long long)owner_v[i]);
      else if (!tv)
        fprintf(out,
                "<text x=\"%lld\" y=\"%lld\" text-anchor=\"middle\" dominant-baseline=\"middle\">"
                "%lld</text>\n",
                px + cw / 2, py + ch / 2, (long long)v);
    }
  }
  fprintf(out, "</svg>\n");
  return io_check(out, "svg");
}
