/* Every operation by name on text arguments: the one entry point behind
 * `hopgen layout OP ARGS...`, `hopgen layout eval` (the golden-vector format) and the
 * vector test, so that all three exercise the same code. */
#include <stdlib.h>
#include <string.h>

#include "layout_internal.h"

typedef enum kind {
  K_SIZE,
  K_COSIZE,
  K_RANK,
  K_DEPTH,
  K_COALESCE,
  K_FILTER,
  K_RIGHT_INVERSE,
  K_LEFT_INVERSE,
  K_COMPLEMENT,
  K_COMPOSITION,
  K_LOGICAL_DIVIDE,
  K_ZIPPED_DIVIDE,
  K_TILED_DIVIDE,
  K_FLAT_DIVIDE,
  K_LOGICAL_PRODUCT,
  K_ZIPPED_PRODUCT,
  K_TILED_PRODUCT,
  K_FLAT_PRODUCT,
  K_BLOCKED_PRODUCT,
  K_RAKED_PRODUCT,
  K_CRD2IDX,
  K_IDX2CRD,
  K_SLICE,
  K_LOCAL_TILE,
  K_LOCAL_PARTITION,
  K_MAX_COMMON_VECTOR,
  K_MAX_COMMON_LAYOUT,
  K_UPCAST,
  K_DOWNCAST,
  K_RECAST,
  K_SWIZZLE,
  K_MAKE_LAYOUT,
  K_MAKE_ORDERED,
  K_MODE,
} kind_t;

static const struct {
  hg_layout_op_info_t info;
  kind_t kind;
} ops[] = {
    {{"size", 1, 1, "LAYOUT", "size of the domain"}, K_SIZE},
    {{"cosize", 1, 1, "LAYOUT", "size of the codomain, L(size-1)+1"}, K_COSIZE},
    {{"rank", 1, 1, "LAYOUT", "number of top-level modes"}, K_RANK},
    {{"depth", 1, 1, "LAYOUT", "nesting depth"}, K_DEPTH},
    {{"coalesce", 1, 2, "LAYOUT [PROFILE]", "merge modes (within each mode of PROFILE)"},
     K_COALESCE},
    {{"filter", 1, 1, "LAYOUT", "drop stride-0 and size-1 modes, then coalesce"}, K_FILTER},
    {{"right_inverse", 1, 1, "LAYOUT", "R with L(R(i)) == i"}, K_RIGHT_INVERSE},
    {{"left_inverse", 1, 1, "LAYOUT", "R with R(L(i)) == i"}, K_LEFT_INVERSE},
    {{"complement", 1, 2, "LAYOUT [BOUND]", "the layout of the rest of [0, BOUND) (default 1)"},
     K_COMPLEMENT},
    {{"composition", 2, 2, "A B", "A o B; A may be swizzled, B may be a by-mode tiler"},
     K_COMPOSITION},
    {{"logical_divide", 2, 2, "LAYOUT TILER", "split into (tile, rest) per tiler mode"},
     K_LOGICAL_DIVIDE},
    {{"zipped_divide", 2, 2, "LAYOUT TILER", "((tiles...),(rests...))"}, K_ZIPPED_DIVIDE},
    {{"tiled_divide", 2, 2, "LAYOUT TILER", "((tiles...),rest0,rest1,...)"}, K_TILED_DIVIDE},
    {{"flat_divide", 2, 2, "LAYOUT TILER", "(tile0,tile1,...,rest0,rest1,...)"}, K_FLAT_DIVIDE},
    {{"logical_product", 2, 2, "LAYOUT TILER", "(layout, layout repeated over tiler)"},
     K_LOGICAL_PRODUCT},
    {{"zipped_product", 2, 2, "LAYOUT TILER", "((blocks...),(repeats...))"}, K_ZIPPED_PRODUCT},
    {{"tiled_product", 2, 2, "LAYOUT TILER", "((blocks...),repeat0,repeat1,...)"}, K_TILED_PRODUCT},
    {{"flat_product", 2, 2, "LAYOUT TILER", "(block0,...,repeat0,...)"}, K_FLAT_PRODUCT},
    {{"blocked_product", 2, 2, "BLOCK TILER", "rank-preserving product, blocks contiguous"},
     K_BLOCKED_PRODUCT},
    {{"raked_product", 2, 2, "BLOCK TILER", "rank-preserving product, blocks interleaved"},
     K_RAKED_PRODUCT},
    {{"crd2idx", 2, 2, "LAYOUT COORD", "index of a coordinate (LAYOUT may be swizzled)"},
     K_CRD2IDX},
    {{"idx2crd", 2, 2, "SHAPE INDEX", "natural coordinate of a 1-D index"}, K_IDX2CRD},
    {{"slice", 2, 2, "LAYOUT COORD", "sub-layout of the '_' modes, and the offset"}, K_SLICE},
    {{"local_tile", 3, 3, "LAYOUT TILER COORD", "tile COORD of zipped_divide, and its offset"},
     K_LOCAL_TILE},
    {{"local_partition", 3, 3, "LAYOUT THREADS INDEX", "what thread INDEX owns, and the offset"},
     K_LOCAL_PARTITION},
    {{"max_common_vector", 2, 2, "A B", "length of the common contiguous run"},
     K_MAX_COMMON_VECTOR},
    {{"max_common_layout", 2, 2, "A B", "layout of the common contiguous run"},
     K_MAX_COMMON_LAYOUT},
    {{"upcast", 2, 2, "LAYOUT N", "layout of N-times wider elements"}, K_UPCAST},
    {{"downcast", 2, 2, "LAYOUT N", "layout of N-times narrower elements"}, K_DOWNCAST},
    {{"recast_layout", 3, 3, "LAYOUT OLD_BITS NEW_BITS", "recast between element widths"},
     K_RECAST},
    {{"swizzle", 2, 2, "B,M,S OFFSET", "Swizzle<B,M,S> applied to OFFSET"}, K_SWIZZLE},
    {{"make_layout", 1, 2, "SHAPE [STRIDE|col|row]", "a layout (column-major by default)"},
     K_MAKE_LAYOUT},
    {{"make_ordered_layout", 2, 2, "SHAPE ORDER", "compact layout, smallest order fastest"},
     K_MAKE_ORDERED},
    {{"mode", 2, 2, "LAYOUT I", "mode I of the layout"}, K_MODE},
};

#define NOPS ((int)(sizeof ops / sizeof ops[0]))

const hg_layout_op_info_t *hg_layout_op_info(int i) {
  return i >= 0 && i < NOPS ? &ops[i].info : NULL;
}

static hg_status_t put(const char *buf, size_t size, int need) {
  (void)buf; /* already written; only its length is checked */
  if (need < 0 || (size_t)need >= size)
    return hg_error(HG_ERR_CAPACITY, "the result needs %d characters, the buffer holds %zu", need,
                    size);
  return hg_ok();
}

static hg_status_t put_int(int64_t v, char *buf, size_t size) {
  return put(buf, size, snprintf(buf, size, "%lld", (long long)v));
}

static hg_status_t put_layout(const hg_layout_t *l, char *buf, size_t size) {
  return put(buf, size, hg_layout_print(l, buf, size));
}

static hg_status_t put_layout_offset(const hg_layout_t *l, int64_t off, char *buf, size_t size) {
  int n = hg_layout_print(l, buf, size);
  HG_TRY(put(buf, size, n));
  return put(buf, size, n + snprintf(buf + n, size - (size_t)n, " offset %lld", (long long)off));
}

static hg_status_t arg_int(const char *what, const char *text, int64_t *out) {
  hg_tuple_t t;
  hg_status_t s = hg_tuple_parse(text, &t);
  if (!hg_is_ok(&s)) return hg_status_wrap(s, "%s: ", what);
  if (!hg_is_int(&t) || t.v[0] == HG_UNDERSCORE)
    return hg_error(HG_ERR_PARSE, "%s: expected an integer, got \"%.200s\"", what, text);
  *out = t.v[0];
  return hg_ok();
}

static bool absent(const char *a) {
  const char *p = a;
  while (*p == ' ') p++;
  return p[0] == '_' && p[1] == '\0';
}

static hg_status_t parse_swizzle_args(const char *text, hg_swizzle_t *sw) {
  /* "B,M,S", also "Sw<B,M,S>" */
  char tmp[128];
  const char *p = text;
  if (strncmp(p, "Sw<", 3) == 0) p += 3;
  snprintf(tmp, sizeof tmp, "(%s)", p);
  size_t n = strlen(tmp);
  if (n >= 2 && tmp[n - 2] == '>') {
    tmp[n - 2] = ')';
    tmp[n - 1] = '\0';
  }
  hg_tuple_t t;
  hg_status_t s = hg_tuple_parse(tmp, &t);
  if (!hg_is_ok(&s) || hg_tuple_depth(&t) != 1 || t.arity[0] != 3)
    return hg_error(HG_ERR_PARSE, "swizzle: expected B,M,S (three integers), got \"%.200s\"", text);
  for (int i = 1; i <= 3; i++)
    if (t.v[i] < -1000 || t.v[i] > 1000)
      return hg_error(HG_ERR_INVALID, "swizzle: parameter %lld out of range", (long long)t.v[i]);
  return hg_swizzle_make((int)t.v[1], (int)t.v[2], (int)t.v[3], sw);
}

hg_status_t hg_layout_op(const char *op, int argc, const char *const *argv, char *buf,
                         size_t size) {
  if (!op) return hg_error(HG_ERR_INVALID, "no operation given");
  int k = -1;
  for (int i = 0; i < NOPS; i++)
    if (!strcmp(op, ops[i].info.name)) k = i;
  if (k < 0)
    return hg_error(HG_ERR_INVALID, "unknown layout operation '%.100s' (see hopgen layout --help)",
                    op);
  /* Optional trailing arguments may be given as "_" (the vector format's "unused"). */
  while (argc > ops[k].info.min_args && absent(argv[argc - 1])) argc--;
  if (argc < ops[k].info.min_args || argc > ops[k].info.max_args)
    return hg_error(HG_ERR_INVALID, "%s takes %s (%d to %d arguments), got %d", op,
                    ops[k].info.usage, ops[k].info.min_args, ops[k].info.max_args, argc);
  for (int i = 0; i < argc; i++)
    if (!argv[i]) return hg_error(HG_ERR_INVALID, "%s: argument %d is NULL", op, i + 1);
  hg_layout_t a, b, r;
  hg_tiler_t t;
  hg_tuple_t c;
  hg_composed_t ca, cr;
  int64_t n, m, off;
  switch (ops[k].kind) {
  case K_SIZE:
  case K_COSIZE:
  case K_RANK:
  case K_DEPTH:
    HG_TRY(hg_layout_parse(argv[0], &a));
    if (ops[k].kind == K_SIZE) HG_TRY(hg_size(&a, &n));
    if (ops[k].kind == K_COSIZE) HG_TRY(hg_cosize(&a, &n));
    if (ops[k].kind == K_RANK) n = hg_layout_rank(&a);
    if (ops[k].kind == K_DEPTH) n = hg_layout_depth(&a);
    return put_int(n, buf, size);
  case K_COALESCE:
    HG_TRY(hg_layout_parse(argv[0], &a));
    if (argc == 2) {
      HG_TRY(hg_tuple_parse(argv[1], &c));
      HG_TRY(hg_coalesce_profile(&a, &c, &r));
    } else {
      HG_TRY(hg_coalesce(&a, &r));
    }
    return put_layout(&r, buf, size);
  case K_FILTER:
  case K_RIGHT_INVERSE:
  case K_LEFT_INVERSE:
    HG_TRY(hg_layout_parse(argv[0], &a));
    if (ops[k].kind == K_FILTER) HG_TRY(hg_filter(&a, &r));
    if (ops[k].kind == K_RIGHT_INVERSE) HG_TRY(hg_right_inverse(&a, &r));
    if (ops[k].kind == K_LEFT_INVERSE) HG_TRY(hg_left_inverse(&a, &r));
    return put_layout(&r, buf, size);
  case K_COMPLEMENT:
    HG_TRY(hg_layout_parse(argv[0], &a));
    n = 1;
    if (argc == 2) HG_TRY(arg_int("complement bound", argv[1], &n));
    HG_TRY(hg_complement(&a, n, &r));
    return put_layout(&r, buf, size);
  case K_COMPOSITION:
    HG_TRY(hg_composed_parse(argv[0], &ca));
    HG_TRY(hg_tiler_parse(argv[1], &t));
    if (ca.sw.b != 0 || ca.offset != 0) {
      if (t.rank != 0)
        return hg_error(HG_ERR_UNSUPPORTED,
                        "composition of a swizzled layout takes a layout on the right, not the "
                        "by-mode tiler %.200s",
                        argv[1]);
      HG_TRY(hg_composed_composition(&ca, &t.mode[0], &cr));
      return put(buf, size, hg_composed_print(&cr, buf, size));
    }
    HG_TRY(hg_composition_tiler(&ca.layout, &t, &r));
    return put_layout(&r, buf, size);
  case K_LOGICAL_DIVIDE:
  case K_ZIPPED_DIVIDE:
  case K_TILED_DIVIDE:
  case K_FLAT_DIVIDE:
  case K_LOGICAL_PRODUCT:
  case K_ZIPPED_PRODUCT:
  case K_TILED_PRODUCT:
  case K_FLAT_PRODUCT:
    HG_TRY(hg_layout_parse(argv[0], &a));
    HG_TRY(hg_tiler_parse(argv[1], &t));
    HG_TRY(hgl_tiler_op((hgl_tiler_op_t)(HGL_OP_LOGICAL_DIVIDE + (ops[k].kind - K_LOGICAL_DIVIDE)),
                        op, &a, &t, &r));
    return put_layout(&r, buf, size);
  case K_BLOCKED_PRODUCT:
  case K_RAKED_PRODUCT:
  case K_MAX_COMMON_LAYOUT:
    HG_TRY(hg_layout_parse(argv[0], &a));
    HG_TRY(hg_layout_parse(argv[1], &b));
    if (ops[k].kind == K_BLOCKED_PRODUCT) HG_TRY(hg_blocked_product(&a, &b, &r));
    if (ops[k].kind == K_RAKED_PRODUCT) HG_TRY(hg_raked_product(&a, &b, &r));
    if (ops[k].kind == K_MAX_COMMON_LAYOUT) HG_TRY(hg_max_common_layout(&a, &b, &r));
    return put_layout(&r, buf, size);
  case K_MAX_COMMON_VECTOR:
    HG_TRY(hg_layout_parse(argv[0], &a));
    HG_TRY(hg_layout_parse(argv[1], &b));
    HG_TRY(hg_max_common_vector(&a, &b, &n));
    return put_int(n, buf, size);
  case K_CRD2IDX:
    HG_TRY(hg_composed_parse(argv[0], &ca));
    HG_TRY(hg_tuple_parse(argv[1], &c));
    HG_TRY(hg_composed_eval(&ca, &c, &n));
    return put_int(n, buf, size);
  case K_IDX2CRD:
    HG_TRY(hg_tuple_parse(argv[0], &c));
    HG_TRY(arg_int("idx2crd index", argv[1], &n));
    HG_TRY(hg_idx2crd(&c, n, &c));
    return put(buf, size, hg_tuple_print(&c, buf, size));
  case K_SLICE:
    HG_TRY(hg_layout_parse(argv[0], &a));
    HG_TRY(hg_tuple_parse(argv[1], &c));
    HG_TRY(hg_slice(&a, &c, &r, &off));
    return put_layout_offset(&r, off, buf, size);
  case K_LOCAL_TILE:
    HG_TRY(hg_layout_parse(argv[0], &a));
    HG_TRY(hg_tiler_parse(argv[1], &t));
    HG_TRY(hg_tuple_parse(argv[2], &c));
    HG_TRY(hg_local_tile(&a, &t, &c, &r, &off));
    return put_layout_offset(&r, off, buf, size);
  case K_LOCAL_PARTITION:
    HG_TRY(hg_layout_parse(argv[0], &a));
    HG_TRY(hg_layout_parse(argv[1], &b));
    HG_TRY(arg_int("local_partition index", argv[2], &n));
    HG_TRY(hg_local_partition(&a, &b, n, &r, &off));
    return put_layout_offset(&r, off, buf, size);
  case K_UPCAST:
  case K_DOWNCAST:
    HG_TRY(hg_layout_parse(argv[0], &a));
    HG_TRY(arg_int("factor", argv[1], &n));
    if (ops[k].kind == K_UPCAST) HG_TRY(hg_upcast(&a, n, &r));
    if (ops[k].kind == K_DOWNCAST) HG_TRY(hg_downcast(&a, n, &r));
    return put_layout(&r, buf, size);
  case K_RECAST:
    HG_TRY(hg_layout_parse(argv[0], &a));
    HG_TRY(arg_int("old bits", argv[1], &n));
    HG_TRY(arg_int("new bits", argv[2], &m));
    if (n < 1 || n > 1 << 20 || m < 1 || m > 1 << 20)
      return hg_error(HG_ERR_INVALID, "recast_layout: element widths %lld and %lld must be 1..%d",
                      (long long)n, (long long)m, 1 << 20);
    HG_TRY(hg_recast_layout(&a, (int)n, (int)m, &r));
    return put_layout(&r, buf, size);
  case K_SWIZZLE: {
    hg_swizzle_t sw;
    HG_TRY(parse_swizzle_args(argv[0], &sw));
    HG_TRY(arg_int("swizzle offset", argv[1], &n));
    /* A zero shift moves nothing (only B = 0 allows it); the reference pycute rejects it
     * (its shift helper never terminates), and the vector format follows the reference. */
    if (sw.s == 0)
      return hg_error(HG_ERR_INVALID,
                      "swizzle %s: a shift of 0 is rejected, as the reference pycute rejects it "
                      "(use B = 0 with a non-zero shift for the identity)",
                      argv[0]);
    return put_int(hg_swizzle_apply(sw, n), buf, size);
  }
  case K_MAKE_LAYOUT:
    HG_TRY(hg_tuple_parse(argv[0], &c));
    if (argc == 1 || !strcmp(argv[1], "col")) {
      HG_TRY(hg_make_layout_col_major(&c, &r));
    } else if (!strcmp(argv[1], "row")) {
      HG_TRY(hg_make_layout_row_major(&c, &r));
    } else {
      hg_tuple_t d;
      HG_TRY(hg_tuple_parse(argv[1], &d));
      HG_TRY(hg_make_layout(&c, &d, &r));
    }
    return put_layout(&r, buf, size);
  case K_MAKE_ORDERED: {
    hg_tuple_t o;
    HG_TRY(hg_tuple_parse(argv[0], &c));
    HG_TRY(hg_tuple_parse(argv[1], &o));
    HG_TRY(hg_make_ordered_layout(&c, &o, &r));
    return put_layout(&r, buf, size);
  }
  case K_MODE:
    HG_TRY(hg_layout_parse(argv[0], &a));
    HG_TRY(arg_int("mode index", argv[1], &n));
    if (n < 0 || n > 1000)
      return hg_error(HG_ERR_INVALID, "mode index %lld out of range", (long long)n);
    HG_TRY(hg_layout_mode(&a, (int)n, &r));
    return put_layout(&r, buf, size);
  }
  return hg_error(HG_ERR_INVALID, "unhandled operation %s", op);
}
