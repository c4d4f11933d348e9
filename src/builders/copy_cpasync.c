/* TiledCopy through cp.async (builders.h): tiles TMA cannot address - a leading dimension or
 * base that is not a multiple of 16 bytes - copied straight from the user's tensor into the
 * same stage layout TMA would fill, with no repack.
 *
 * The tile is a row-major view (rows x cols, cols contiguous in global memory). It is cut
 * into chunks of `vec` consecutive elements along the contiguous mode; chunk i of the tile
 * goes to thread i % threads. A chunk of 4, 8 or 16 bytes is one cp.async (PTX ISA
 * "cp.async": .cg for 16 bytes, .ca below) whose src-size operand zero-fills what lies
 * outside the tensor, so ragged edges need no branch; rows outside the tensor read nothing
 * (src-size 0). When the rows or the base are only 2- or 1-byte aligned the chunk is one
 * element, loaded into a register and stored to shared memory (any alignment). */
#include <string.h>

#include "hopgen/builders.h"
#include "hopgen/dlayout.h"

static hg_val_t i32(hg_builder_t *b, int32_t v) {
  return hg_b_i32(b, v);
}

/* The tile coordinate (mode 0, mode 1) of view element (r, c). */
static void tile_coord(const hg_cp_async_spec_t *s, int64_t r, int64_t c, hg_tuple_t *crd) {
  const int64_t v[2] = {s->transposed ? c : r, s->transposed ? r : c};
  hg_tuple_ints(crd, 2, v);
}

hg_status_t hg_cp_async_copy_make(const hg_cp_async_spec_t *spec, hg_cp_async_copy_t *out) {
  memset(out, 0, sizeof *out);
  const int e = hg_dtype_bytes(spec->dtype);
  if (e != 1 && e != 2 && e != 4)
    return hg_error(HG_ERR_UNSUPPORTED, "cp.async tiles of %s (%d-byte elements): 1, 2 or 4 bytes",
                    hg_dtype_name(spec->dtype), e);
  const int vb = spec->vec_bytes;
  if (vb != 16 && vb != 8 && vb != 4 && vb != e)
    return hg_error(HG_ERR_INVALID,
                    "a chunk of %d bytes: cp.async moves 4, 8 or 16, a register copy one "
                    "element (%d)",
                    vb, e);
  if (vb < e)
    return hg_error(HG_ERR_INVALID, "a chunk of %d bytes is smaller than a %s element", vb,
                    hg_dtype_name(spec->dtype));
  if (spec->rows < 1 || spec->cols < 1 || spec->threads < 1 || spec->threads > 1024)
    return hg_error(HG_ERR_INVALID, "cp.async tile %dx%d copied by %d threads", spec->rows,
                    spec->cols, spec->threads);
  const int vec = vb / e;
  if (spec->cols % vec)
    return hg_error(HG_ERR_INVALID,
                    "the tile's contiguous extent %d is not a multiple of the %d-element chunk",
                    spec->cols, vec);
  if (hg_layout_rank(&spec->smem.layout) != 2)
    return hg_error(HG_ERR_INVALID, "the stage layout has rank %d; cp.async tiles are 2-D",
                    hg_layout_rank(&spec->smem.layout));
  /* Every chunk must land contiguously and aligned in the stage buffer. */
  for (int64_t r = 0; r < spec->rows; r++)
    for (int64_t c = 0; c < spec->cols; c += vec) {
      int64_t first = 0;
      for (int i = 0; i < vec; i++) {
        hg_tuple_t crd;
        int64_t off;
        tile_coord(spec, r, c + i, &crd);
        HG_TRY(hg_composed_eval(&spec->smem, &crd, &off));
        if (i == 0 && (off * e) % vb)
          return hg_error(HG_ERR_INVALID,
                          "the chunk at view (%lld,%lld) starts at stage byte %lld, not a "
                          "multiple of its %d bytes",
                          (long long)r, (long long)c, (long long)(off * e), vb);
        if (i == 0) first = off;
        if (off != first + i)
          return hg_error(HG_ERR_INVALID,
                          "the chunk at view (%lld,%lld) is not contiguous in the stage layout "
                          "(element %d at offset %lld, expected %lld)",
                          (long long)r, (long long)c, i, (long long)off, (long long)(first + i));
      }
    }
  out->spec = *spec;
  out->vec = vec;
  out->chunks = spec->rows * spec->cols / vec;
  out->per_thread = (out->chunks + spec->threads - 1) / spec->threads;
  out->async = vb >= 4;
  return hg_ok();
}

/* Chunk (or thread) idx of the compact grid (cpr, rows), in the domain: its view row and
 * first column (col * vec, one value: the global column and the stage coordinate share it). */
static hg_status_t column(hg_builder_t *b, hg_dint_t idx, int cpr, int rows, int vec,
                          hg_dint_t *col, hg_dint_t *row) {
  hg_dtuple_t shape, crd;
  hg_val_t v;
  HG_TRY(hg_dtuple_make(2, (hg_dint_t[2]){hg_dint(cpr), hg_dint(rows)}, &shape));
  HG_TRY(hg_dl_idx2crd(b, &shape, NULL, idx, HG_DL_IN_DOMAIN, &crd));
  *row = crd.d[2];
  HG_TRY(hg_dint_mul(b, crd.d[1], hg_dint(vec), col));
  if (hg_dint_is_static(*col)) return hg_ok();
  HG_TRY(hg_dint_emit(b, *col, HG_T_I32, &v));
  *col = hg_dint_val_nonneg(v);
  return hg_ok();
}

static hg_val_t val(hg_builder_t *b, hg_dint_t x) {
  hg_val_t v = HG_NONE;
  hg_status_t st = hg_dint_emit(b, x, HG_T_NONE, &v);
  if (!hg_is_ok(&st)) hg_builder_fail(b, st);
  return v;
}

/* The chunks of the tile, chunk i at view (i / cpr, (i % cpr) * vec) - the compact chunk grid
 * (cpr, rows) - taken by thread i % threads. Global element (gr, gc) is at
 * gbase + e * G(gr, gc) for the view G = (rows_ext, cols_ext):(ld, 1), a dynamic layout. */
static hg_status_t issue(hg_builder_t *b, const hg_cp_async_copy_t *cp, hg_val_t dst,
                         hg_val_t gbase, hg_val_t ld, hg_val_t row0, hg_val_t col0,
                         hg_val_t rows_ext, hg_val_t cols_ext, hg_val_t thread) {
  const hg_cp_async_spec_t *s = &cp->spec;
  const int e = hg_dtype_bytes(s->dtype), vb = s->vec_bytes;
  const int cpr = s->cols / cp->vec; /* chunks per view row */
  const char *names[3] = {"R", "C", "ld"};
  const hg_dint_t ext[3] = {hg_dint_val_sign(rows_ext, HG_DINT_POS),
                            hg_dint_val_sign(cols_ext, HG_DINT_POS), hg_dint_val(ld)};
  hg_dlayout_t view;
  HG_TRY(hg_dlayout_parse("(R,C):(ld,1)", 3, names, ext, &view));
  /* When the threads cover whole rows, a thread's chunks share a column and step by a
   * constant number of rows: the thread's place in the first rows, (cpr, threads / cpr),
   * splits once per tile instead of once per chunk. */
  const bool rowwise = s->threads % cpr == 0;
  const hg_dint_t th = hg_dint_val_nonneg(thread);
  hg_dint_t tr = hg_dint(0), tc = hg_dint(0);
  if (rowwise) HG_TRY(column(b, th, cpr, s->threads / cpr, cp->vec, &tc, &tr));
  /* A few chunks per thread are unrolled. More (register copies move one element each, dozens
   * per thread; fp8 tiles of 16-byte chunks) go in a run-time loop, so that the compiler does
   * not hoist every address of the unrolled sequence out of the k-loop into registers the
   * producer does not have. */
  const bool loop = !cp->async || cp->per_thread > 4;
  hg_dint_t jv = hg_dint(0);
  const int unrolled = loop ? 1 : cp->per_thread;
  if (loop) jv = hg_dint_val_nonneg(hg_b_for(b, i32(b, 0), i32(b, cp->per_thread), i32(b, 1)));
  for (int j = 0; j < unrolled; j++) {
    hg_dint_t jt, chunk, r, c, gr, gc, goff, gaddr;
    if (!loop) jv = hg_dint(j);
    HG_TRY(hg_dint_mul(b, jv, hg_dint(s->threads), &jt));
    HG_TRY(hg_dint_add(b, th, jt, &chunk));
    const bool partial = loop ? cp->per_thread * s->threads > cp->chunks
                              : (int64_t)(j + 1) * s->threads > cp->chunks;
    if (partial) hg_b_if(b, hg_b_cmp(b, HG_LT_U, val(b, chunk), i32(b, cp->chunks)));
    if (rowwise) {
      HG_TRY(hg_dint_mul(b, jv, hg_dint(s->threads / cpr), &r));
      HG_TRY(hg_dint_add(b, r, tr, &r));
      c = tc;
    } else {
      HG_TRY(column(b, chunk, cpr, s->rows, cp->vec, &c, &r));
    }
    HG_TRY(hg_dint_add(b, hg_dint_val(row0), r, &gr));
    HG_TRY(hg_dint_add(b, hg_dint_val(col0), c, &gc));
    hg_val_t vgr = val(b, gr), vgc = val(b, gc);
    /* bytes of the chunk inside the tensor: 0 outside, a partial chunk at the ragged end */
    hg_val_t left = hg_b_bin(b, HG_MUL, hg_b_bin(b, HG_SUB, cols_ext, vgc), i32(b, e));
    hg_val_t in_row = hg_b_bin(b, HG_AND, hg_b_cmp(b, HG_LT_S, vgr, rows_ext),
                               hg_b_cmp(b, HG_GT_S, left, i32(b, 0)));
    hg_val_t nbytes = hg_b_select(b, in_row, hg_b_bin(b, HG_MIN_S, left, i32(b, vb)), i32(b, 0));
    hg_dtuple_t gcrd;
    HG_TRY(hg_dtuple_make(2, (hg_dint_t[2]){hg_dint_val(vgr), hg_dint_val(vgc)}, &gcrd));
    HG_TRY(hg_dl_crd2idx(b, &view, &gcrd, 0, &goff));
    HG_TRY(hg_dint_mul(b, goff, hg_dint(e), &goff));
    HG_TRY(hg_dint_add(b, hg_dint_val(gbase), goff, &gaddr));
    /* a chunk that reads nothing still names an address: the tile's base, always valid */
    hg_val_t ga = hg_b_select(b, in_row, val(b, gaddr), gbase);
    hg_val_t vr = val(b, r), vc = val(b, c);
    hg_val_t crd[2] = {s->transposed ? vc : vr, s->transposed ? vr : vc}, off;
    HG_TRY(hg_composed_emit(b, &s->smem, crd, &off));
    hg_val_t saddr = hg_b_mad(b, off, i32(b, e), dst);
    if (cp->async) {
      hg_b_cp_async(b, vb, saddr, ga, nbytes);
    } else {
      hg_val_t v = hg_b_var(b, HG_T_I32, i32(b, 0));
      hg_b_if(b, in_row);
      {
        hg_val_t x;
        hg_b_load(b, HG_GLOBAL, HG_T_I32, 8 * e, 1, ga, &x);
        hg_b_assign(b, v, x);
      }
      hg_b_endif(b);
      hg_b_store(b, HG_SHARED, 8 * e, 1, saddr, &v);
    }
    if (partial) hg_b_endif(b);
  }
  if (loop) hg_b_endfor(b);
  return hg_builder_status(b);
}

void hg_cp_async_copy_issue(hg_builder_t *b, const hg_cp_async_copy_t *cp, hg_val_t dst,
                            hg_val_t gbase, hg_val_t ld, hg_val_t row0, hg_val_t col0,
                            hg_val_t rows_ext, hg_val_t cols_ext, hg_val_t thread) {
  hg_status_t st = issue(b, cp, dst, gbase, ld, row0, col0, rows_ext, cols_ext, thread);
  if (!hg_is_ok(&st)) hg_builder_fail(b, hg_status_wrap(st, "hg_cp_async_copy_issue: "));
}

void hg_cp_async_copy_commit(hg_builder_t *b, const hg_cp_async_copy_t *c, const hg_pipe_t *p,
                             hg_pipe_pos_t pos) {
  if (c->async)
    hg_pipe_commit_cp_async(b, p, pos);
  else
    hg_pipe_commit_stores(b, p, pos);
}
