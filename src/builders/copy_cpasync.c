/* TiledCopy through cp.async (builders.h): tiles TMA cannot address - a leading dimension or
 * base that is not a multiple of 16 bytes - copied straight from the user's tensor into the
 * same stage layout TMA would fill, with no repack.
 *
 * The tile is a row-major view (rows x cols, cols contiguous in global memory). It is cut
 * into chunks of `vec` consecutive elements along the contiguous mode; chunk i of the tile
 * goes to thread i % threads. A chunk of 4, 8 or 16 bytes is one cp.async (PTX ISA
 * "cp.async": .cg for 16 bytes, .ca below) whose src-size operand zero-fills what lies
 * outside the tensor, so ragged edges need no branch; rows outside the tensor read nothing
 * (src-size 0).
 *
 * When the rows or the base are only 2- or 1-byte aligned, cp.async cannot move them: the
 * chunk is still 16 bytes of the stage (the "window" copy), built in registers. Its bytes lie
 * in two 16-byte aligned global blocks; the thread loads both (ld.global.v4, the second only
 * when the chunk reaches into it), picks the chunk's 16 bytes with word selects and funnel
 * shifts (hg_window16_extract), zeroes the bytes past the row's end and stores one
 * st.shared.v4. A thread issues the loads of spec.batch chunks (8 registers each) before
 * their stores: the more, the more bytes in flight, as the caller's register budget allows. Where
 * the stage layout does not keep 16-byte chunks contiguous, one element per register copy. */
#include <string.h>

#include "hopgen/builders.h"

static hg_val_t i32(hg_builder_t *b, int32_t v) {
  return hg_b_i32(b, v);
}

#define WINDOW_BATCH 2 /* window chunks whose loads go together, by default (16 registers) */
#define WINDOW_BATCH_MAX 16

void hg_window16_extract(hg_builder_t *b, const hg_val_t w[8], hg_val_t sh, hg_val_t out[4]) {
  /* word selection by sh / 4 in two steps (8 bytes, then 4), then a funnel shift of
   * 8 * (sh % 4) bits per word; a shift by 32 gives 0 in PTX (and in the MLIR printer's
   * shifts), which is what a shift of 0 needs from the upper word */
  hg_val_t q2 = hg_b_cmp(b, HG_NE, hg_b_bin(b, HG_AND, sh, i32(b, 8)), i32(b, 0));
  hg_val_t q1 = hg_b_cmp(b, HG_NE, hg_b_bin(b, HG_AND, sh, i32(b, 4)), i32(b, 0));
  hg_val_t bs = hg_b_bin(b, HG_SHL, hg_b_bin(b, HG_AND, sh, i32(b, 3)), i32(b, 3));
  hg_val_t inv = hg_b_bin(b, HG_SUB, i32(b, 32), bs);
  hg_val_t v[6], u[5];
  for (int i = 0; i < 6; i++) v[i] = hg_b_select(b, q2, w[i + 2], w[i]);
  for (int i = 0; i < 5; i++) u[i] = hg_b_select(b, q1, v[i + 1], v[i]);
  for (int i = 0; i < 4; i++)
    out[i] =
        hg_b_bin(b, HG_OR, hg_b_bin(b, HG_SHR_U, u[i], bs), hg_b_bin(b, HG_SHL, u[i + 1], inv));
}

void hg_window16_mask(hg_builder_t *b, hg_val_t nbytes, hg_val_t out[4]) {
  for (int i = 0; i < 4; i++) {
    hg_val_t valid =
        hg_b_bin(b, HG_MAX_S, i32(b, 0),
                 hg_b_bin(b, HG_MIN_S, i32(b, 4), hg_b_bin(b, HG_SUB, nbytes, i32(b, 4 * i))));
    /* (1 << 32) - 1 = all ones: PTX shifts saturate */
    hg_val_t mask =
        hg_b_bin(b, HG_SUB, hg_b_bin(b, HG_SHL, i32(b, 1), hg_b_bin(b, HG_SHL, valid, i32(b, 3))),
                 i32(b, 1));
    out[i] = hg_b_bin(b, HG_AND, out[i], mask);
  }
}

void hg_window16_load(hg_builder_t *b, hg_val_t blk, hg_val_t end, const hg_val_t w[4]) {
  hg_b_if(b, hg_b_cmp(b, HG_LE_S, hg_b_bin(b, HG_ADD, blk, hg_b_i64(b, 16)), end));
  {
    hg_val_t x[4];
    hg_b_load(b, HG_GLOBAL, HG_T_I32, 0, 4, blk, x);
    for (int i = 0; i < 4; i++) hg_b_assign(b, w[i], x[i]);
  }
  hg_b_else(b);
  for (int i = 0; i < 16; i++) {
    hg_val_t at = hg_b_bin(b, HG_ADD, blk, hg_b_i64(b, i));
    if (i % 4 == 0) hg_b_assign(b, w[i / 4], i32(b, 0));
    hg_b_if(b, hg_b_cmp(b, HG_LT_S, at, end));
    hg_val_t byte;
    hg_b_load(b, HG_GLOBAL, HG_T_I32, 8, 1, at, &byte);
    hg_b_assign(b, w[i / 4],
                hg_b_bin(b, HG_OR, w[i / 4], hg_b_bin(b, HG_SHL, byte, i32(b, 8 * (i % 4)))));
    hg_b_endif(b);
  }
  hg_b_endif(b);
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

/* The shared address (I32) of view element (r, c) in the stage at dst; false where the stage
 * layout cannot be emitted (the builder then holds the failure). */
static bool stage_addr(hg_builder_t *b, const hg_cp_async_spec_t *s, hg_val_t r, hg_val_t c,
                       hg_val_t dst, hg_val_t *out) {
  hg_val_t crd[2] = {s->transposed ? c : r, s->transposed ? r : c}, off;
  hg_status_t st = hg_composed_emit(b, &s->smem, crd, &off);
  if (!hg_is_ok(&st)) {
    hg_builder_fail(b, st);
    return false;
  }
  *out = hg_b_mad(b, off, i32(b, hg_dtype_bytes(s->dtype)), dst);
  return true;
}

/* The global address (I64) of tensor element (gr, gc) (I32) of the view at gbase with row
 * pitch ld (I64 elements) of e-byte elements: 64-bit row offsets. */
static hg_val_t view_addr(hg_builder_t *b, hg_val_t gbase, hg_val_t ld, hg_val_t gr, hg_val_t gc,
                          int e) {
  return hg_b_bin(
      b, HG_ADD, gbase,
      hg_b_bin(b, HG_MUL, hg_b_mad(b, hg_b_sext(b, gr), ld, hg_b_sext(b, gc)), hg_b_i64(b, e)));
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

/* Every chunk of vec elements (vb bytes) must land contiguously and aligned in the stage. */
static hg_status_t check_chunks(const hg_cp_async_spec_t *spec, int vec, int vb) {
  const int e = hg_dtype_bytes(spec->dtype);
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
  return hg_ok();
}

/* A staged window copy's split of rows x cpr chunks among `threads`: runs of `run` chunks
 * of one row (run divides cpr, at most a thread's share), `runs` of them a thread. */
static void staging_split(int rows, int cpr, int threads, int *run, int *runs) {
  const int64_t chunks = (int64_t)rows * cpr;
  const int64_t share = (chunks + threads - 1) / threads;
  int r = 1;
  for (int d = 1; d <= cpr; d++)
    if (cpr % d == 0 && d <= share) r = d;
  *run = r;
  *runs = (int)((chunks / r + threads - 1) / threads);
}

uint32_t hg_cp_async_staging_bytes(int rows, int row_bytes, int threads) {
  if (rows < 1 || threads < 1 || row_bytes < 16 || row_bytes % 16) return 0;
  int run, runs;
  staging_split(rows, row_bytes / 16, threads, &run, &runs);
  /* a run's chunks straddle run + 1 aligned blocks */
  return (uint32_t)threads * (uint32_t)runs * (uint32_t)(run + 1) * 16u;
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
  if (spec->batch < 0 || spec->batch > WINDOW_BATCH_MAX)
    return hg_error(HG_ERR_INVALID, "a batch of %d window chunks is outside 0..%d", spec->batch,
                    WINDOW_BATCH_MAX);
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
  HG_TRY(check_chunks(spec, vec, vb));
  /* Rows only 2- or 1-byte aligned: 16-byte window chunks where the stage keeps 16 bytes
   * together (GMMA layouts do: their swizzles move 16-byte units), else one element each. */
  const int wvec = 16 / e;
  bool window = false;
  if (vb == e && e < 4 && spec->cols % wvec == 0) {
    const hg_status_t ws = check_chunks(spec, wvec, 16);
    window = hg_is_ok(&ws);
  }
  out->spec = *spec;
  out->window = window;
  out->vec = window ? wvec : vec;
  out->chunks = spec->rows * spec->cols / out->vec;
  out->per_thread = (out->chunks + spec->threads - 1) / spec->threads;
  out->async = vb >= 4;
  if (window && spec->staged) {
    out->staged = true;
    staging_split(spec->rows, spec->cols * e / 16, spec->threads, &out->run, &out->runs);
    out->staging_bytes = hg_cp_async_staging_bytes(spec->rows, spec->cols * e, spec->threads);
  }
  HG_TRY(find_period(out));
  return hg_ok();
}

/* The window copy (see the top of the file): chunks thread, thread + threads, ... in rounds
 * of WINDOW_BATCH, each round's loads before its stores. The global block pair of a chunk is
 * read only where it holds bytes of the row, and no byte past the view's last
 * (hg_window16_load); rows past the tensor read nothing. */
static void issue_window(hg_builder_t *b, const hg_cp_async_copy_t *cp, hg_val_t dst,
                         hg_val_t gbase, hg_val_t ld, hg_val_t row0, hg_val_t col0,
                         hg_val_t rows_ext, hg_val_t cols_ext, hg_val_t thread) {
  const hg_cp_async_spec_t *s = &cp->spec;
  const int e = hg_dtype_bytes(s->dtype), cpr = s->cols / cp->vec, T = s->threads;
  /* no more chunks a round than a thread has */
  int G = s->batch > 0 ? s->batch : WINDOW_BATCH;
  if (G > cp->per_thread) G = cp->per_thread;
  /* every round full when the chunks divide into whole rounds */
  const bool ragged = cp->chunks % (T * G) != 0;
  /* past the view's last byte: its last row's end */
  hg_val_t end = view_addr(b, gbase, ld, hg_b_bin(b, HG_SUB, rows_ext, i32(b, 1)), cols_ext, e);
  hg_val_t c0 = hg_b_for(b, thread, i32(b, cp->chunks), i32(b, T * G));
  hg_val_t w[WINDOW_BATCH_MAX][8], sh[WINDOW_BATCH_MAX], left[WINDOW_BATCH_MAX],
      saddr[WINDOW_BATCH_MAX], valid[WINDOW_BATCH_MAX];
  for (int g = 0; g < G; g++) {
    hg_val_t chunk = hg_b_bin(b, HG_ADD, c0, i32(b, g * T));
    valid[g] = ragged ? hg_b_cmp(b, HG_LT_S, chunk, i32(b, cp->chunks)) : HG_NONE;
    hg_val_t r = hg_b_bin(b, HG_DIV_U, chunk, i32(b, cpr));
    hg_val_t c = hg_b_bin(b, HG_MUL, hg_b_bin(b, HG_REM_U, chunk, i32(b, cpr)), i32(b, cp->vec));
    if (!stage_addr(b, s, r, c, dst, &saddr[g])) return;
    hg_val_t gr = hg_b_bin(b, HG_ADD, row0, r), gc = hg_b_bin(b, HG_ADD, col0, c);
    left[g] = hg_b_bin(b, HG_MUL, hg_b_bin(b, HG_SUB, cols_ext, gc), i32(b, e));
    hg_val_t in_row = hg_b_bin(b, HG_AND, hg_b_cmp(b, HG_LT_S, gr, rows_ext),
                               hg_b_cmp(b, HG_GT_S, left[g], i32(b, 0)));
    if (ragged) in_row = hg_b_bin(b, HG_AND, in_row, valid[g]);
    hg_val_t gaddr = view_addr(b, gbase, ld, gr, gc, e);
    sh[g] = hg_b_bin(b, HG_AND, hg_b_trunc(b, gaddr), i32(b, 15));
    hg_val_t blk = hg_b_bin(b, HG_SUB, gaddr, hg_b_zext(b, sh[g]));
    for (int i = 0; i < 8; i++) w[g][i] = hg_b_var(b, HG_T_I32, i32(b, 0));
    hg_b_if(b, in_row);
    {
      hg_window16_load(b, blk, end, w[g]);
      /* the second block holds row bytes when the chunk reaches past the first */
      hg_b_if(b, hg_b_cmp(b, HG_GT_S, hg_b_bin(b, HG_ADD, left[g], sh[g]), i32(b, 16)));
      hg_window16_load(b, hg_b_bin(b, HG_ADD, blk, hg_b_i64(b, 16)), end, w[g] + 4);
      hg_b_endif(b);
    }
    hg_b_endif(b);
  }
  for (int g = 0; g < G; g++) {
    if (ragged) hg_b_if(b, valid[g]);
    hg_val_t out[4];
    hg_window16_extract(b, w[g], sh[g], out);
    /* bytes past the row's end (all of them for a chunk outside the tensor) are zeros */
    hg_window16_mask(b, left[g], out);
    hg_b_store(b, HG_SHARED, 0, 4, saddr[g], out);
    if (ragged) hg_b_endif(b);
  }
  hg_b_endfor(b);
}

/* ---------------------------------------------------------------- staged window copies */

hg_status_t hg_cp_async_staging_make(hg_builder_t *b, const hg_cp_async_copy_t *c,
                                     hg_smem_ring_t *out) {
  memset(out, 0, sizeof *out);
  if (!c || !c->staged) return hg_ok();
  return hg_smem_ring_make(b, c->staging_bytes, 16, HG_CP_ASYNC_STAGING_DEPTH, out);
}

/* Run u of the calling thread (run index U = thread + u * threads of the tile's runs): its
 * view row and first chunk, where its bytes start in global memory and how many of them
 * the row still holds from there, whether it is inside the tile and the tensor, and its
 * place in the staging slot. */
typedef struct stage_run {
  hg_val_t r, c;  /* view row, first column (elements) */
  hg_val_t valid; /* a run of the tile (PRED) */
  hg_val_t gaddr; /* I64: the run's first byte */
  hg_val_t sh;    /* gaddr % 16 */
  hg_val_t left;  /* bytes of the row from gaddr on (<= 0: none; rows past the tensor: 0) */
  hg_val_t stg;   /* I32 shared: the run's blocks in the staging slot */
} stage_run_t;

static stage_run_t stage_run(hg_builder_t *b, const hg_cp_async_copy_t *cp, int u, hg_val_t stg,
                             hg_val_t gbase, hg_val_t ld, hg_val_t row0, hg_val_t col0,
                             hg_val_t rows_ext, hg_val_t cols_ext, hg_val_t thread) {
  const hg_cp_async_spec_t *s = &cp->spec;
  const int e = hg_dtype_bytes(s->dtype), cpr = s->cols / cp->vec, per_row = cpr / cp->run;
  const int total = s->rows * per_row;
  stage_run_t x;
  hg_val_t U = hg_b_bin(b, HG_ADD, thread, i32(b, u * s->threads));
  x.valid = (int64_t)(u + 1) * s->threads > total ? hg_b_cmp(b, HG_LT_S, U, i32(b, total))
                                                  : hg_b_pred(b, true);
  x.r = hg_b_bin(b, HG_DIV_U, U, i32(b, per_row));
  x.c = hg_b_bin(b, HG_MUL, hg_b_bin(b, HG_REM_U, U, i32(b, per_row)), i32(b, cp->run * cp->vec));
  hg_val_t gr = hg_b_bin(b, HG_ADD, row0, x.r), gc = hg_b_bin(b, HG_ADD, col0, x.c);
  hg_val_t in = hg_b_bin(b, HG_AND, x.valid, hg_b_cmp(b, HG_LT_S, gr, rows_ext));
  x.left = hg_b_select(b, in, hg_b_bin(b, HG_MUL, hg_b_bin(b, HG_SUB, cols_ext, gc), i32(b, e)),
                       i32(b, 0));
  /* a run outside the tensor names the view's base and reads nothing */
  x.gaddr = hg_b_select(b, in, view_addr(b, gbase, ld, gr, gc, e), gbase);
  x.sh = hg_b_bin(b, HG_AND, hg_b_trunc(b, x.gaddr), i32(b, 15));
  x.stg = hg_b_mad(b, thread, i32(b, cp->runs * (cp->run + 1) * 16),
                   hg_b_bin(b, HG_ADD, stg, i32(b, u * (cp->run + 1) * 16)));
  return x;
}

void hg_cp_async_stage_issue(hg_builder_t *b, const hg_cp_async_copy_t *cp, hg_val_t stg,
                             hg_val_t gbase, hg_val_t ld, hg_val_t row0, hg_val_t col0,
                             hg_val_t rows_ext, hg_val_t cols_ext, hg_val_t thread) {
  const int e = hg_dtype_bytes(cp->spec.dtype);
  hg_val_t end = view_addr(b, gbase, ld, hg_b_bin(b, HG_SUB, rows_ext, i32(b, 1)), cols_ext, e);
  for (int u = 0; u < cp->runs; u++) {
    const stage_run_t x =
        stage_run(b, cp, u, stg, gbase, ld, row0, col0, rows_ext, cols_ext, thread);
    hg_val_t blk = hg_b_bin(b, HG_SUB, x.gaddr, hg_b_zext(b, x.sh));
    /* block q holds row bytes while it starts before the row's end: 16 q < sh + left */
    hg_val_t reach = hg_b_bin(b, HG_ADD, x.sh, x.left);
    for (int q = 0; q <= cp->run; q++) {
      hg_val_t some = hg_b_cmp(b, HG_GT_S, reach, i32(b, 16 * q));
      hg_val_t src = q ? hg_b_bin(b, HG_ADD, blk, hg_b_i64(b, 16 * q)) : blk;
      /* a block past the row reads nothing but still names an aligned address; one past the
       * view's last byte reads up to it (src-size; cp.async zero-fills the rest) */
      hg_val_t avail =
          hg_b_trunc(b, hg_b_bin(b, HG_MIN_S, hg_b_bin(b, HG_SUB, end, src), hg_b_i64(b, 16)));
      hg_b_cp_async(b, 16, hg_b_bin(b, HG_ADD, x.stg, i32(b, 16 * q)),
                    hg_b_select(b, some, src, blk), hg_b_select(b, some, avail, i32(b, 0)));
    }
  }
}

void hg_cp_async_stage_shift(hg_builder_t *b, const hg_cp_async_copy_t *cp, hg_val_t stg,
                             hg_val_t dst, hg_val_t gbase, hg_val_t ld, hg_val_t row0,
                             hg_val_t col0, hg_val_t rows_ext, hg_val_t cols_ext, hg_val_t thread) {
  for (int u = 0; u < cp->runs; u++) {
    const stage_run_t x =
        stage_run(b, cp, u, stg, gbase, ld, row0, col0, rows_ext, cols_ext, thread);
    hg_b_if(b, x.valid);
    hg_val_t w[8];
    hg_b_load(b, HG_SHARED, HG_T_I32, 0, 4, x.stg, w);
    for (int i = 0; i < cp->run; i++) {
      hg_b_load(b, HG_SHARED, HG_T_I32, 0, 4, hg_b_bin(b, HG_ADD, x.stg, i32(b, 16 * (i + 1))),
                w + 4);
      hg_val_t out[4];
      hg_window16_extract(b, w, x.sh, out);
      /* bytes past the row's end are zeros (the staged blocks past it are zero-filled, but
       * the last block holding row bytes may hold the next row's too) */
      hg_window16_mask(b, hg_b_bin(b, HG_SUB, x.left, i32(b, 16 * i)), out);
      hg_val_t saddr;
      if (!stage_addr(b, &cp->spec, x.r, hg_b_bin(b, HG_ADD, x.c, i32(b, i * cp->vec)), dst,
                      &saddr))
        return;
      hg_b_store(b, HG_SHARED, 0, 4, saddr, out);
      for (int j = 0; j < 4; j++) w[j] = w[4 + j];
    }
    hg_b_endif(b);
  }
}

void hg_cp_async_copy_issue(hg_builder_t *b, const hg_cp_async_copy_t *cp, hg_val_t dst,
                            hg_val_t gbase, hg_val_t ld, hg_val_t row0, hg_val_t col0,
                            hg_val_t rows_ext, hg_val_t cols_ext, hg_val_t thread) {
  if (cp->window) {
    issue_window(b, cp, dst, gbase, ld, row0, col0, rows_ext, cols_ext, thread);
    return;
  }
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
      if (!stage_addr(b, s, r, tc, dst, &sbase[p])) return;
    }
    /* the thread's first row and column in the tensor, and one row step in bytes */
    hg_val_t gr0 = hg_b_bin(b, HG_ADD, row0, tr), gc = hg_b_bin(b, HG_ADD, col0, tc);
    grow0 = view_addr(b, gbase, ld, gr0, gc, e);
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
      gaddr = view_addr(b, gbase, ld, gr, gc, e);
      if (!stage_addr(b, s, r, c, dst, &saddr)) return;
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
