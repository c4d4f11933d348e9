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

static hg_val_t i32(hg_builder_t *b, int32_t v) {
  return hg_b_i32(b, v);
}

/* The tile coordinate (mode 0, mode 1) of view element (r, c). */
static void tile_coord(const hg_cp_async_spec_t *s, int64_t r, int64_t c, hg_tuple_t *crd) {
  const int64_t v[2] = {s->transposed ? c : r, s->transposed ? r : c};
  hg_tuple_ints(crd, 2, v);
}

/* The stage offset of view element (r, c). */
static hg_status_t offset_of(const hg_cp_async_spec_t *s, int64_t r, int64_t c, int64_t *off) {
  hg_tuple_t crd;
  tile_coord(s, r, c, &crd);
  return hg_composed_eval(&s->smem, &crd, off);
}

/* Find the smallest period P (chunks) such that, for every thread's first row and column and
 * every chunk j >= P, offset(row + j R, c) = offset(row + (j - P) R, c) + D with one D: then
 * the copy needs P layout evaluations per thread and constant steps (hg_cp_async_copy_t). */
static hg_status_t find_period(hg_cp_async_copy_t *cp) {
  const hg_cp_async_spec_t *s = &cp->spec;
  const int cpr = s->cols / cp->vec;
  cp->period = 0;
  if (s->threads % cpr) return hg_ok();
  const int R = s->threads / cpr;
  cp->step_rows = R;
  if (cp->per_thread <= 1) {
    cp->period = 1;
    return hg_ok();
  }
  for (int P = 1; P <= 8 && P < cp->per_thread; P++) {
    int64_t D = 0;
    bool ok = true, have = false;
    for (int64_t r = 0; r + (int64_t)P * R < s->rows && ok; r++)
      for (int64_t c = 0; c < s->cols && ok; c += cp->vec) {
        int64_t a, b2;
        HG_TRY(offset_of(s, r, c, &a));
        HG_TRY(offset_of(s, r + (int64_t)P * R, c, &b2));
        if (!have) D = b2 - a, have = true;
        ok = b2 - a == D;
      }
    if (ok) {
      cp->period = P;
      cp->period_elems = D;
      return hg_ok();
    }
  }
  return hg_ok();
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
  HG_TRY(find_period(out));
  return hg_ok();
}

void hg_cp_async_copy_issue(hg_builder_t *b, const hg_cp_async_copy_t *cp, hg_val_t dst,
                            hg_val_t gbase, hg_val_t ld, hg_val_t row0, hg_val_t col0,
                            hg_val_t rows_ext, hg_val_t cols_ext, hg_val_t thread) {
  const hg_cp_async_spec_t *s = &cp->spec;
  const int e = hg_dtype_bytes(s->dtype), vb = s->vec_bytes;
  const int cpr = s->cols / cp->vec; /* chunks per view row */
  /* When the threads cover whole rows, a thread's chunks share a column and step by a
   * constant number of rows: one division per tile instead of one per chunk. */
  const bool rowwise = s->threads % cpr == 0;
  hg_val_t tr = HG_NONE, tc = HG_NONE;
  if (rowwise) {
    tr = hg_b_bin(b, HG_DIV_U, thread, i32(b, cpr));
    tc = hg_b_bin(b, HG_MUL, hg_b_bin(b, HG_REM_U, thread, i32(b, cpr)), i32(b, cp->vec));
  }
  /* Chunk j of the thread: view row tr + j R (R = threads / chunks per row), column tc. The
   * stage offset comes from `period` layout evaluations plus constant steps, the global
   * address from one row pointer plus j row steps. A few chunks are unrolled; more (register
   * copies move one element each, dozens per thread; fp8 tiles of 16-byte chunks) go in a
   * run-time loop, so that the compiler does not hoist every address out of the k-loop into
   * registers the producer does not have. */
  const bool loop = !cp->async || cp->per_thread > 8;
  const int period = cp->period;
  hg_val_t sbase[8];
  hg_val_t gstep = HG_NONE, grow0 = HG_NONE, left = HG_NONE;
  if (period) {
    for (int p = 0; p < period; p++) {
      hg_val_t r = hg_b_bin(b, HG_ADD, tr, i32(b, p * cp->step_rows));
      hg_val_t crd[2] = {s->transposed ? tc : r, s->transposed ? r : tc}, off;
      hg_status_t st = hg_composed_emit(b, &s->smem, crd, &off);
      if (!hg_is_ok(&st)) {
        hg_builder_fail(b, st);
        return;
      }
      sbase[p] = hg_b_mad(b, off, i32(b, e), dst);
    }
    /* the thread's first row and column in the tensor, and one row step in bytes */
    hg_val_t gr0 = hg_b_bin(b, HG_ADD, row0, tr), gc = hg_b_bin(b, HG_ADD, col0, tc);
    grow0 = hg_b_bin(
        b, HG_ADD, gbase,
        hg_b_bin(b, HG_MUL, hg_b_mad(b, hg_b_sext(b, gr0), ld, hg_b_sext(b, gc)), hg_b_i64(b, e)));
    gstep = hg_b_bin(b, HG_MUL, ld, hg_b_i64(b, (int64_t)cp->step_rows * e));
    left = hg_b_bin(b, HG_MUL, hg_b_bin(b, HG_SUB, cols_ext, gc), i32(b, e));
  }
  /* The run-time loop walks chunk = thread, thread + threads, ... < chunks, with j counting
   * and the addresses stepping as running values. Its trip count depends on the thread, so
   * ptxas cannot unroll it whole: unrolled (64 chunks of one byte), every chunk's row test
   * and address would be hoisted out of the k-loop into registers the producer lacks. */
  hg_val_t jv = HG_NONE, grun = HG_NONE, srun = HG_NONE, chunk_run = HG_NONE;
  const int unrolled = loop ? 1 : cp->per_thread;
  if (loop) {
    jv = hg_b_var(b, HG_T_I32, i32(b, 0));
    if (period) {
      grun = hg_b_var(b, HG_T_I64, grow0);
      if (period == 1) srun = hg_b_var(b, HG_T_I32, sbase[0]);
    }
    chunk_run = hg_b_for(b, thread, i32(b, cp->chunks), i32(b, s->threads));
  }
  for (int j = 0; j < unrolled; j++) {
    hg_val_t jj = loop ? jv : i32(b, j);
    hg_val_t chunk = loop ? chunk_run : hg_b_mad(b, jj, i32(b, s->threads), thread);
    const bool partial = !loop && (int64_t)(j + 1) * s->threads > cp->chunks;
    if (partial) hg_b_if(b, hg_b_cmp(b, HG_LT_U, chunk, i32(b, cp->chunks)));
    hg_val_t gr, saddr, gaddr, in_row;
    if (period) {
      /* stage: base of the chunk's phase + whole periods; global: row j steps down */
      hg_val_t rj = hg_b_mad(b, jj, i32(b, cp->step_rows), tr);
      gr = hg_b_bin(b, HG_ADD, row0, rj);
      if (loop) {
        if (period == 1) {
          saddr = srun;
        } else {
          hg_val_t ph = hg_b_bin(b, HG_REM_U, jj, i32(b, period));
          hg_val_t sb = sbase[0];
          for (int p = 1; p < period; p++)
            sb = hg_b_select(b, hg_b_cmp(b, HG_EQ, ph, i32(b, p)), sbase[p], sb);
          hg_val_t q = hg_b_bin(b, HG_DIV_U, jj, i32(b, period));
          saddr = hg_b_mad(b, q, i32(b, (int32_t)(cp->period_elems * e)), sb);
        }
        gaddr = grun;
      } else {
        const int32_t q = j / period;
        saddr =
            q ? hg_b_bin(b, HG_ADD, sbase[j % period], i32(b, (int32_t)(q * cp->period_elems * e)))
              : sbase[j % period];
        gaddr = j ? hg_b_bin(b, HG_ADD, grow0, hg_b_bin(b, HG_MUL, hg_b_i64(b, j), gstep)) : grow0;
      }
      in_row = hg_b_bin(b, HG_AND, hg_b_cmp(b, HG_LT_S, gr, rows_ext),
                        hg_b_cmp(b, HG_GT_S, left, i32(b, 0)));
    } else {
      /* the general case: the chunk's row and column, the layout at them */
      hg_val_t r, c;
      if (rowwise) {
        r = hg_b_mad(b, jj, i32(b, s->threads / cpr), tr);
        c = tc;
      } else {
        r = hg_b_bin(b, HG_DIV_U, chunk, i32(b, cpr));
        c = hg_b_bin(b, HG_MUL, hg_b_bin(b, HG_REM_U, chunk, i32(b, cpr)), i32(b, cp->vec));
      }
      gr = hg_b_bin(b, HG_ADD, row0, r);
      hg_val_t gc = hg_b_bin(b, HG_ADD, col0, c);
      left = hg_b_bin(b, HG_MUL, hg_b_bin(b, HG_SUB, cols_ext, gc), i32(b, e));
      in_row = hg_b_bin(b, HG_AND, hg_b_cmp(b, HG_LT_S, gr, rows_ext),
                        hg_b_cmp(b, HG_GT_S, left, i32(b, 0)));
      gaddr = hg_b_bin(
          b, HG_ADD, gbase,
          hg_b_bin(b, HG_MUL, hg_b_mad(b, hg_b_sext(b, gr), ld, hg_b_sext(b, gc)), hg_b_i64(b, e)));
      hg_val_t crd[2] = {s->transposed ? c : r, s->transposed ? r : c}, off;
      hg_status_t st = hg_composed_emit(b, &s->smem, crd, &off);
      if (!hg_is_ok(&st)) {
        hg_builder_fail(b, st);
        return;
      }
      saddr = hg_b_mad(b, off, i32(b, e), dst);
    }
    /* a chunk that reads nothing still names an address: the tile's base, always valid */
    gaddr = hg_b_select(b, in_row, gaddr, gbase);
    if (cp->async) {
      /* bytes of the chunk inside the tensor: 0 outside, a partial chunk at the ragged end */
      hg_val_t nbytes = hg_b_select(b, in_row, hg_b_bin(b, HG_MIN_S, left, i32(b, vb)), i32(b, 0));
      hg_b_cp_async(b, vb, saddr, gaddr, nbytes);
    } else {
      hg_val_t v = hg_b_var(b, HG_T_I32, i32(b, 0));
      hg_b_if(b, in_row);
      {
        hg_val_t x;
        hg_b_load(b, HG_GLOBAL, HG_T_I32, 8 * e, 1, gaddr, &x);
        hg_b_assign(b, v, x);
      }
      hg_b_endif(b);
      hg_b_store(b, HG_SHARED, 8 * e, 1, saddr, &v);
    }
    if (partial) hg_b_endif(b);
    if (loop) hg_b_assign(b, jv, hg_b_bin(b, HG_ADD, jv, i32(b, 1)));
    if (!hg_val_is_none(grun)) hg_b_assign(b, grun, hg_b_bin(b, HG_ADD, grun, gstep));
    if (!hg_val_is_none(srun))
      hg_b_assign(b, srun, hg_b_bin(b, HG_ADD, srun, i32(b, (int32_t)(cp->period_elems * e))));
  }
  if (loop) hg_b_endfor(b);
}

void hg_cp_async_copy_commit(hg_builder_t *b, const hg_cp_async_copy_t *c, const hg_pipe_t *p,
                             hg_pipe_pos_t pos) {
  if (c->async)
    hg_pipe_commit_cp_async(b, p, pos);
  else
    hg_pipe_commit_stores(b, p, pos);
}
