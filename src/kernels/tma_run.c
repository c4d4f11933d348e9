/* Run and check the TMA copy kernels on the GPU: generate -> JIT (cache) -> encode the
 * tensor map -> launch -> download -> compare every byte with the CPU reference model.
 *
 * Layering note: docs/ARCHITECTURE.md's table: kernels -> builders, sm90, emit. The run/check/bench
 * drivers of this folder also call the runtime (runtime.h), on purpose: they are the
 * place where a generated kernel meets the driver, and the CLI must stay printing-only.
 * The generators (tma.c, copy.c's hg_gen_copy) never touch the runtime.
 *
 * What is compared:
 *   loads     the whole stage buffer of every CTA (the kernel dumps it after the mbarrier
 *             phase), against hg_model_tma_load(_multicast) applied to a simulated stage
 *             buffer poisoned like the real one: in-bounds bytes, zero (or NaN) fill
 *             outside the tensor, and swizzle padding that must keep the poison.
 *   stores    the whole output allocation (guard bytes before and after the tensor, and
 *             row padding included), initialised with a known pattern, against
 *             hg_model_tma_store applied to a host copy (hg_model_store_elementwise for the
 *             boxes with a negative coordinate, which the kernel writes without TMA): out-of-
 *             bounds elements skipped, every byte no box covers untouched. Each CTA's status
 *             word also says how many boxes it wrote without TMA, held to the plan's count.
 * Before the launch, the model's transaction bytes are checked against the plan's
 * expect_tx: a disagreement would leave the mbarrier waiting forever. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hopgen/kernels.h"
#include "kernels/tma_internal.h"

/* Tile t's origin per tensor mode (mode 0 fastest over the grid), and its coordinates. */
void hg_tma_tile_of(const hg_tma_spec_t *s, int64_t t, int64_t *q, int32_t *origin) {
  for (int m = 0; m < s->rank; m++) {
    q[m] = t % s->grid[m];
    t /= s->grid[m];
    origin[m] = (int32_t)((int64_t)s->origin[m] + q[m] * s->tile[m]);
  }
}

static int print_coord(char *buf, size_t size, int n, const int64_t *c) {
  int k = snprintf(buf, size, "(");
  for (int i = 0; i < n && k > 0 && (size_t)k < size; i++)
    k += snprintf(buf + k, size - (size_t)k, "%s%" PRId64, i ? "," : "", c[i]);
  if (k > 0 && (size_t)k < size) k += snprintf(buf + k, size - (size_t)k, ")");
  return k;
}

/* ---------------------------------------------------------------- test data */

/* A random element that every reduction handles exactly as the model does: finite,
 * normal, non-zero floats (no NaN payloads, no signed zeros, no denormal flushing), small
 * integers for inc/dec (so both of their branches happen), random bits otherwise. */
static void random_element(hg_dtype_t t, hg_tma_op_t op, uint64_t *rng, uint8_t *out) {
  const uint64_t r = hg_splitmix64(rng);
  uint32_t v;
  switch (t) {
  case HG_F32:
  case HG_TF32: /* sign, exponent 124..131 (2^-3 .. 2^4), random mantissa */
    v = (uint32_t)(r >> 63) << 31 | (uint32_t)(124 + (r >> 40) % 8) << 23 |
        ((uint32_t)r & 0x7FFFFF);
    memcpy(out, &v, 4);
    return;
  case HG_F16: {
    uint16_t h = (uint16_t)((r >> 63) << 15 | (12 + (r >> 40) % 8) << 10 | (r & 0x3FF));
    memcpy(out, &h, 2);
    return;
  }
  case HG_BF16: {
    uint16_t h = (uint16_t)((r >> 63) << 15 | (124 + (r >> 40) % 8) << 7 | (r & 0x7F));
    memcpy(out, &h, 2);
    return;
  }
  default:
    break;
  }
  const int e = hg_dtype_bytes(t);
  if (op == HG_TMA_REDUCE_INC || op == HG_TMA_REDUCE_DEC) {
    v = (uint32_t)(r % 16);
    memcpy(out, &v, (size_t)e);
    return;
  }
  memcpy(out, &r, (size_t)e);
}

static void random_bytes(uint8_t *p, uint64_t n, uint64_t *rng) {
  for (uint64_t i = 0; i < n; i += 8) {
    const uint64_t r = hg_splitmix64(rng);
    memcpy(p + i, &r, n - i < 8 ? (size_t)(n - i) : 8);
  }
}

static void random_elements(uint8_t *p, uint64_t n, const hg_tma_check_t *x, uint64_t *rng) {
  for (uint64_t i = 0; i + (uint64_t)x->esize <= n; i += (uint64_t)x->esize)
    random_element(x->s.dtype, x->s.op, rng, p + i);
}

/* ---------------------------------------------------------------- the model's answer */

static hg_status_t expect_load(hg_tma_check_t *x) {
  const hg_tma_plan_t *p = x->p;
  const uint8_t *gmem = x->tensor + HG_TMA_GUARD_BYTES;
  memset(x->expected, HG_TMA_POISON, (size_t)x->image_bytes);
  for (int64_t t = 0; t < x->tiles; t++) {
    int64_t q[HG_TMA_MAX_RANK];
    int32_t org[HG_TMA_MAX_RANK];
    hg_tma_tile_of(&x->s, t, q, org);
    uint8_t *cta[HG_TMA_MAX_CLUSTER];
    uint32_t tx[HG_TMA_MAX_CLUSTER] = {0};
    for (int r = 0; r < x->C; r++) cta[r] = x->expected + (uint64_t)(t * x->C + r) * p->smem_bytes;
    for (int r = 0; r < x->C; r++) {
      const int first = x->C > 1 ? p->cta_first_box[r] : 0;
      const int count = x->C > 1 ? p->boxes_per_cta : p->num_boxes;
      for (int i = first; i < first + count; i++) {
        int32_t c[HG_TMA_MAX_RANK];
        HG_TRY(hg_tma_box_coords(p, i, org, c));
        if (x->C > 1)
          HG_TRY(hg_model_tma_load_multicast(&p->map, gmem, x->tensor_bytes, c, cta, x->C,
                                             p->smem_bytes, p->box[i].smem_offset, p->mcast_mask,
                                             tx));
        else {
          uint32_t b = 0;
          HG_TRY(hg_model_tma_load(&p->map, gmem, x->tensor_bytes, c, cta[0], p->smem_bytes,
                                   p->box[i].smem_offset, &b));
          tx[0] += b;
        }
      }
    }
    for (int r = 0; r < x->C; r++)
      if (tx[r] != p->expect_tx_bytes)
        return hg_error(HG_ERR_INVALID,
                        "the plan tells CTA %d of the cluster to expect %" PRIu32
                        " B but the model delivers %" PRIu32
                        " B to it: the mbarrier would never complete (a planner or model bug; "
                        "nothing was launched)",
                        r, p->expect_tx_bytes, tx[r]);
  }
  return hg_ok();
}

int hg_tma_tile_fallback_boxes(const hg_tma_plan_t *p, const int32_t *origin) {
  int n = 0;
  for (int i = 0; i < p->num_boxes; i++) {
    int32_t c[HG_TMA_MAX_RANK];
    hg_status_t st = hg_tma_box_coords(p, i, origin, c);
    if (hg_is_ok(&st)) st = hg_tma_box_issuable(p, i, c);
    if (!hg_is_ok(&st)) n++;
  }
  return n;
}

/* Each box as the kernel writes it: by TMA where TMA can take it (the model of the
 * instruction), else element by element (the ideal: out-of-bounds elements skipped), so
 * the expected output is the ideal one whichever path a box takes. */
static hg_status_t expect_store(hg_tma_check_t *x) {
  const hg_tma_plan_t *p = x->p;
  memcpy(x->expected, x->tensor, (size_t)x->alloc_bytes);
  for (int64_t t = 0; t < x->tiles; t++) {
    int64_t q[HG_TMA_MAX_RANK];
    int32_t org[HG_TMA_MAX_RANK];
    hg_tma_tile_of(&x->s, t, q, org);
    const uint8_t *img = x->images + (uint64_t)t * p->smem_bytes;
    for (int i = 0; i < p->num_boxes; i++) {
      int32_t c[HG_TMA_MAX_RANK];
      HG_TRY(hg_tma_box_coords(p, i, org, c));
      hg_status_t tma = hg_tma_box_issuable(p, i, c);
      if (hg_is_ok(&tma))
        HG_TRY(hg_model_tma_store(&p->map, x->s.op, x->expected + HG_TMA_GUARD_BYTES,
                                  x->tensor_bytes, c, img, p->smem_bytes, p->box[i].smem_offset));
      else
        HG_TRY(hg_model_store_elementwise(&p->map, x->s.op, x->expected + HG_TMA_GUARD_BYTES,
                                          x->tensor_bytes, c, img, p->smem_bytes,
                                          p->box[i].smem_offset));
    }
  }
  return hg_ok();
}

/* ---------------------------------------------------------------- describing a byte */

static uint64_t elem_value(const uint8_t *p, int e) {
  uint64_t v = 0;
  for (int i = e - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* Which box element of a load lands on stage byte `off` (the model's geometry: rows of
 * the inner box padded to the swizzle span, the swizzle XORing address bits). */
static void describe_load(const hg_tma_check_t *x, int64_t cta, uint64_t off, char *buf,
                          size_t size) {
  const hg_tma_plan_t *p = x->p;
  const int e = x->esize, r = p->map.rank;
  const int64_t t = cta / x->C;
  int64_t q[HG_TMA_MAX_RANK];
  int32_t org[HG_TMA_MAX_RANK];
  hg_tma_tile_of(&x->s, t, q, org);
  char tq[64];
  print_coord(tq, sizeof tq, x->s.rank, q);
  int n = snprintf(buf, size, "CTA %" PRId64 " (tile %s", cta, tq);
  if (x->C > 1) n += snprintf(buf + n, size - (size_t)n, ", cluster rank %" PRId64, cta % x->C);
  n += snprintf(buf + n, size - (size_t)n, "), smem byte %" PRIu64 ": ", off);
  if (n < 0 || (size_t)n >= size) return;
  const uint32_t span = (uint32_t)hg_swizzle_mode_bytes(p->map.swizzle);
  uint32_t pitch = p->map.box_dim[0] * (uint32_t)e;
  if (pitch < span) pitch = span;
  uint64_t box_elems = 1;
  for (int d = 0; d < r; d++) box_elems *= p->map.box_dim[d];
  const uint8_t *want = x->expected + (uint64_t)cta * p->smem_bytes;
  const uint8_t *have = x->got + (uint64_t)cta * p->smem_bytes;
  for (int b = 0; b < p->num_boxes; b++) {
    for (uint64_t i = 0; i < box_elems; i++) {
      int64_t idx[HG_TMA_MAX_RANK];
      uint64_t rest = i, row = 0, mul = 1;
      for (int d = 0; d < r; d++) {
        idx[d] = (int64_t)(rest % p->map.box_dim[d]);
        rest /= p->map.box_dim[d];
      }
      for (int d = 1; d < r; d++) {
        row += (uint64_t)idx[d] * mul;
        mul *= p->map.box_dim[d];
      }
      const uint32_t a =
          hg_model_swizzle_addr(p->map.swizzle, p->box[b].smem_offset + (uint32_t)(row * pitch) +
                                                    (uint32_t)idx[0] * (uint32_t)e);
      if (off < a || off >= (uint64_t)a + (uint64_t)e) continue;
      int32_t c[HG_TMA_MAX_RANK];
      hg_status_t st = hg_tma_box_coords(p, b, org, c);
      int64_t tc[HG_TMA_MAX_RANK];
      bool inb = hg_is_ok(&st);
      for (int m = 0; m < x->s.rank; m++) {
        const int d = p->mode_dim[m];
        tc[m] = (int64_t)c[d] + idx[d];
        if (tc[m] < 0 || tc[m] >= x->s.shape[m]) inb = false;
      }
      char ei[64], te[64];
      print_coord(ei, sizeof ei, r, idx);
      print_coord(te, sizeof te, x->s.rank, tc);
      snprintf(buf + n, size - (size_t)n,
               "box %d element %s = tensor %s, %s; element 0x%0*" PRIx64 " expected, 0x%0*" PRIx64
               " got",
               b, ei, te,
               inb              ? "in bounds"
               : p->map.oob_nan ? "out of bounds (NaN fill)"
                                : "out of bounds (zero fill)",
               2 * e, elem_value(want + a, e), 2 * e, elem_value(have + a, e));
      return;
    }
  }
  snprintf(buf + n, size - (size_t)n,
           "no box writes this byte (swizzle-span padding or a gap): it must keep the 0x%02X "
           "poison",
           HG_TMA_POISON);
}

/* What byte `off` of a store's output allocation is, and who (if anyone) writes it. */
static void describe_store(const hg_tma_check_t *x, uint64_t off, char *buf, size_t size) {
  const hg_tma_plan_t *p = x->p;
  const int e = x->esize, r = p->map.rank;
  if (off < HG_TMA_GUARD_BYTES || off >= HG_TMA_GUARD_BYTES + x->tensor_bytes) {
    snprintf(buf, size,
             "output byte %" PRId64 " relative to the tensor's base: a guard byte %s the tensor, "
             "which no store may touch (was 0x%02X)",
             (int64_t)off - (int64_t)HG_TMA_GUARD_BYTES,
             off < HG_TMA_GUARD_BYTES ? "before" : "after", x->tensor[off]);
    return;
  }
  const uint64_t rel = off - HG_TMA_GUARD_BYTES;
  uint64_t rem = rel / (uint64_t)e;
  int64_t c[HG_TMA_MAX_RANK];
  bool element = true;
  for (int d = r - 1; d >= 1; d--) {
    const uint64_t sd = p->map.global_stride_bytes[d - 1] / (uint64_t)e;
    c[d] = (int64_t)(rem / sd);
    rem %= sd;
  }
  c[0] = (int64_t)rem;
  for (int d = 0; d < r; d++)
    if ((uint64_t)c[d] >= p->map.global_dim[d]) element = false;
  if (!element) {
    snprintf(buf, size,
             "output byte %" PRIu64 ": row padding between elements, which no store may touch "
             "(was 0x%02X)",
             rel, x->tensor[off]);
    return;
  }
  int64_t tc[HG_TMA_MAX_RANK] = {0}, q[HG_TMA_MAX_RANK] = {0};
  bool covered = true;
  int64_t cta = 0, mul = 1;
  for (int m = 0; m < x->s.rank; m++) {
    tc[m] = c[p->mode_dim[m]];
    const int64_t d = tc[m] - x->s.origin[m];
    q[m] = d >= 0 ? d / x->s.tile[m] : -((-d + x->s.tile[m] - 1) / x->s.tile[m]);
    if (q[m] < 0 || q[m] >= x->s.grid[m]) covered = false;
    cta += q[m] * mul;
    mul *= x->s.grid[m];
  }
  char te[64], tq[64];
  print_coord(te, sizeof te, x->s.rank, tc);
  print_coord(tq, sizeof tq, x->s.rank, q);
  const uint64_t first = HG_TMA_GUARD_BYTES + rel - rel % (uint64_t)e;
  char who[96];
  if (covered)
    snprintf(who, sizeof who, "written by CTA %" PRId64 " (tile %s)", cta, tq);
  else
    snprintf(who, sizeof who, "outside every tile: must stay untouched");
  snprintf(buf, size,
           "output byte %" PRIu64 " = tensor %s, %s; element 0x%0*" PRIx64 " expected, 0x%0*" PRIx64
           " got, 0x%0*" PRIx64 " before",
           rel, te, who, 2 * e, elem_value(x->expected + first, e), 2 * e,
           elem_value(x->got + first, e), 2 * e, elem_value(x->tensor + first, e));
}

/* ---------------------------------------------------------------- compare */

void hg_tma_check_compare(const hg_tma_check_t *x, int max_report, hg_tma_result_t *res) {
  const uint64_t n = x->load ? x->image_bytes : x->alloc_bytes;
  res->bytes_compared = n;
  res->fallback_reported = 0; /* per pass, as bytes_compared */
  for (uint64_t i = 0; i < n; i++) {
    if (x->got[i] == x->expected[i]) continue;
    res->mismatches++;
    if (x->load && x->got[i] == HG_TMA_POISON) res->poison_left++;
    if (!x->load && x->got[i] == x->tensor[i]) res->untouched++;
    if (res->reported < max_report) {
      hg_tma_mismatch_t *mm = &res->first[res->reported++];
      mm->expected = x->expected[i];
      mm->got = x->got[i];
      if (x->load) {
        mm->cta = (int64_t)(i / x->p->smem_bytes);
        mm->offset = i % x->p->smem_bytes;
        describe_load(x, mm->cta, mm->offset, mm->where, sizeof mm->where);
      } else {
        mm->cta = -1;
        mm->offset = i; /* of the allocation: the tensor starts HG_TMA_GUARD_BYTES in */
        describe_store(x, i, mm->where, sizeof mm->where);
      }
    }
  }
  for (int64_t c = 0; c < x->ctas; c++) {
    const uint32_t st = x->status[c] & HG_TMA_STATUS_MASK;
    if (st == HG_TMA_STATUS_DONE) {
      if (x->load) continue;
      /* A store CTA says how many of its boxes it wrote without TMA: the plan's count. */
      int64_t q[HG_TMA_MAX_RANK];
      int32_t org[HG_TMA_MAX_RANK];
      hg_tma_tile_of(&x->s, c, q, org);
      const int want = hg_tma_tile_fallback_boxes(x->p, org);
      const int got = (int)(x->status[c] >> HG_TMA_STATUS_FALLBACK_SHIFT);
      res->fallback_reported += got;
      if (got != want) {
        if (res->ctas_fallback_wrong++ == 0) {
          res->first_fallback_cta = c;
          res->first_fallback_got = got;
          res->first_fallback_want = want;
        }
      }
      continue;
    }
    if (st == HG_TMA_STATUS_TIMEOUT)
      res->ctas_timed_out++;
    else
      res->ctas_unfinished++;
    if (res->first_bad_cta < 0) res->first_bad_cta = c;
  }
}

/* ---------------------------------------------------------------- one pass */

void hg_tma_check_free(hg_tma_check_t *x) {
  free(x->tensor);
  free(x->expected);
  free(x->got);
  free(x->images);
  free(x->status);
  x->tensor = x->expected = x->got = x->images = NULL;
  x->status = NULL;
  if (x->rt) {
    hg_rt_free(x->rt, x->d_tensor);
    hg_rt_free(x->rt, x->d_buf);
    hg_rt_free(x->rt, x->d_status);
  }
  x->d_tensor = x->d_buf = x->d_status = 0;
}

hg_status_t hg_tma_check_prepare(hg_tma_check_t *x, uint64_t seed) {
  uint64_t rng = seed;
  const uint64_t n = x->load ? x->image_bytes : x->alloc_bytes;
  x->tensor = malloc((size_t)x->alloc_bytes);
  x->expected = malloc((size_t)n);
  x->got = malloc((size_t)n);
  x->status = calloc((size_t)x->ctas, sizeof *x->status);
  if (!x->load) x->images = malloc((size_t)x->image_bytes);
  if (!x->tensor || !x->expected || !x->got || !x->status || (!x->load && !x->images))
    return hg_error(HG_ERR_NOMEM, "cannot allocate %" PRIu64 " B of host memory for the check",
                    x->alloc_bytes + 3 * x->image_bytes);
  if (x->load) {
    random_bytes(x->tensor, x->alloc_bytes, &rng);
    return expect_load(x);
  }
  random_bytes(x->tensor, HG_TMA_GUARD_BYTES, &rng);
  random_elements(x->tensor + HG_TMA_GUARD_BYTES, x->alloc_bytes - 2 * HG_TMA_GUARD_BYTES, x, &rng);
  random_bytes(x->tensor + x->alloc_bytes - HG_TMA_GUARD_BYTES, HG_TMA_GUARD_BYTES, &rng);
  random_elements(x->images, x->image_bytes, x, &rng);
  return expect_store(x);
}

/* Device buffers: the tensor (loads: the input; stores: the output, with its pattern), the
 * dump (poisoned with 0xCD, so a CTA that never dumps shows up) or the stage images, and
 * the status words (cleared). */
static hg_status_t upload(hg_tma_check_t *x) {
  HG_TRY(hg_rt_alloc(x->rt, (size_t)x->alloc_bytes, &x->d_tensor));
  HG_TRY(hg_rt_upload(x->rt, x->d_tensor, x->tensor, (size_t)x->alloc_bytes));
  HG_TRY(hg_rt_alloc(x->rt, (size_t)x->image_bytes, &x->d_buf));
  if (x->load)
    HG_TRY(hg_rt_memset8(x->rt, x->d_buf, 0xCD, (size_t)x->image_bytes, NULL));
  else
    HG_TRY(hg_rt_upload(x->rt, x->d_buf, x->images, (size_t)x->image_bytes));
  HG_TRY(hg_rt_alloc(x->rt, (size_t)x->ctas * sizeof *x->status, &x->d_status));
  HG_TRY(hg_rt_memset8(x->rt, x->d_status, 0, (size_t)x->ctas * sizeof *x->status, NULL));
  return hg_rt_sync(x->rt, NULL);
}

/* The timed path: spec -> PTX -> module -> function -> tensor map -> launch -> done. */
static hg_status_t launch(hg_tma_check_t *x, hg_stream_t stream, hg_tma_timing_t *t,
                          hg_tma_result_t *res) {
  memset(t, 0, sizeof *t);
  hg_kernel_t k;
  hg_module_t *mod = NULL;
  hg_function_t *fn = NULL;
  const double t0 = hg_now_ms();
  HG_TRY(hg_tma_generate(&x->s, x->be, &k, NULL));
  const double t1 = hg_now_ms();
  t->gen_ms = t1 - t0;
  snprintf(res->kernel, sizeof res->kernel, "%s", k.name);
  res->smem_bytes = k.smem_bytes;
  hg_status_t st = hg_rt_module_load(x->rt, k.ptx.data, &mod, &t->jit);
  if (!hg_is_ok(&st)) st = hg_status_wrap(st, "loading kernel %s: ", k.name);
  const double t2 = hg_now_ms();
  t->jit_ms = t2 - t1;
  if (hg_is_ok(&st)) st = hg_rt_function(x->rt, mod, k.name, k.smem_bytes, &fn);
  const double t3 = hg_now_ms();
  t->function_ms = t3 - t2;
  hg_tensormap_t map;
  if (hg_is_ok(&st))
    st = hg_status_wrap(
        hg_rt_tensormap_encode(x->rt, &x->p->map, x->d_tensor + HG_TMA_GUARD_BYTES, &map),
        "encoding the tensor map: ");
  const double t4 = hg_now_ms();
  t->encode_ms = t4 - t3;
  int32_t origin[HG_TMA_MAX_RANK], tiles[HG_TMA_MAX_RANK];
  int64_t extent[HG_TMA_MAX_RANK], stride_bytes[HG_TMA_MAX_RANK];
  hg_devptr_t gmem = x->d_tensor + HG_TMA_GUARD_BYTES;
  void *args[4 + 4 * HG_TMA_MAX_RANK];
  int na = 0;
  args[na++] = &map;
  args[na++] = &x->d_buf;
  args[na++] = &x->d_status;
  for (int m = 0; m < x->s.rank; m++) {
    origin[m] = x->s.origin[m];
    args[na++] = &origin[m];
  }
  for (int m = 0; m < x->s.rank; m++) {
    tiles[m] = x->s.grid[m];
    args[na++] = &tiles[m];
  }
  if (!x->load) { /* the tensor, for the boxes written without TMA (hg_tma_generate) */
    args[na++] = &gmem;
    for (int m = 0; m < x->s.rank; m++) {
      extent[m] = x->s.shape[m];
      args[na++] = &extent[m];
    }
    for (int m = 0; m < x->s.rank; m++) {
      stride_bytes[m] = x->s.stride[m] * x->esize;
      args[na++] = &stride_bytes[m];
    }
  }
  hg_launch_t l;
  memset(&l, 0, sizeof l);
  l.grid[0] = (uint32_t)x->ctas;
  l.grid[1] = l.grid[2] = 1;
  l.block[0] = k.threads;
  l.block[1] = l.block[2] = 1;
  for (int i = 0; i < 3; i++) l.cluster[i] = k.cluster[i];
  l.smem_bytes = k.smem_bytes;
  l.stream = stream;
  if (hg_is_ok(&st)) st = hg_rt_launch(x->rt, fn, &l, args);
  const double t5 = hg_now_ms();
  t->launch_ms = t5 - t4;
  t->to_launch_ms = t5 - t0;
  if (hg_is_ok(&st)) {
    st = hg_rt_sync(x->rt, stream);
    if (!hg_is_ok(&st)) st = hg_status_wrap(st, "running kernel %s: ", k.name);
  }
  const double t6 = hg_now_ms();
  t->sync_ms = t6 - t5;
  t->to_finish_ms = t6 - t0;
  if (mod) hg_rt_module_unload(x->rt, mod);
  hg_kernel_free(&k);
  return st;
}

hg_status_t hg_tma_check_init(hg_tma_check_t *x, const hg_tma_spec_t *spec) {
  if (!spec) return hg_error(HG_ERR_INVALID, "no TMA spec given");
  x->s = *spec;
  HG_TRY(hg_tma_spec_normalize(&x->s));
  HG_TRY(hg_tma_spec_plan(&x->s, &x->plan));
  x->p = &x->plan;
  x->load = x->s.op == HG_TMA_LOAD || x->s.op == HG_TMA_PREFETCH;
  x->esize = hg_dtype_bytes(x->s.dtype);
  x->C = x->p->cluster;
  x->tiles = hg_tma_spec_tiles(&x->s);
  x->ctas = x->tiles * x->C;
  x->tensor_bytes = hg_tma_spec_tensor_bytes(&x->s);
  x->alloc_bytes =
      HG_TMA_GUARD_BYTES + ((x->tensor_bytes + 15) & ~UINT64_C(15)) + HG_TMA_GUARD_BYTES;
  x->image_bytes = (uint64_t)x->ctas * x->p->smem_bytes;
  if (x->image_bytes > HG_TMA_MAX_CHECK_BYTES || x->tensor_bytes > HG_TMA_MAX_CHECK_BYTES)
    return hg_error(HG_ERR_INVALID,
                    "the check would move %" PRIu64 " B of stage images and a %" PRIu64
                    " B tensor; it compares at most 1 GiB of each (use fewer or smaller tiles)",
                    x->image_bytes, x->tensor_bytes);
  return hg_ok();
}

static hg_status_t pass(hg_tma_check_t *x, uint64_t seed, const hg_tma_run_options_t *o,
                        int max_report, hg_tma_timing_t *t, hg_tma_result_t *res) {
  hg_status_t st = hg_tma_check_prepare(x, seed);
  if (hg_is_ok(&st)) st = upload(x);
  if (hg_is_ok(&st)) st = launch(x, o->stream, t, res);
  if (hg_is_ok(&st))
    st = hg_rt_download(x->rt, x->got, x->load ? x->d_buf : x->d_tensor,
                        (size_t)(x->load ? x->image_bytes : x->alloc_bytes));
  if (hg_is_ok(&st))
    st = hg_rt_download(x->rt, x->status, x->d_status, (size_t)x->ctas * sizeof *x->status);
  if (hg_is_ok(&st)) hg_tma_check_compare(x, max_report, res);
  hg_tma_check_free(x);
  return st;
}

hg_status_t hg_tma_run(hg_rt_t *rt, const hg_tma_spec_t *spec, hg_backend_t be,
                       const hg_tma_run_options_t *opts, hg_tma_result_t *res) {
  if (!res) return hg_error(HG_ERR_INVALID, "hg_tma_run needs somewhere to put the result");
  memset(res, 0, sizeof *res);
  res->first_bad_cta = res->first_fallback_cta = -1;
  if (!rt) return hg_error(HG_ERR_NO_DRIVER, "no runtime: open the GPU with hg_rt_open first");
  if (!spec) return hg_error(HG_ERR_INVALID, "hg_tma_run needs a spec");
  hg_tma_run_options_t o;
  memset(&o, 0, sizeof o);
  if (opts) o = *opts;
  const int runs = o.runs > 0 ? o.runs : 2;
  int max_report = o.max_report > 0 ? o.max_report : 8;
  if (max_report > HG_TMA_MAX_REPORT) max_report = HG_TMA_MAX_REPORT;

  static const hg_tma_check_t zero;
  hg_tma_check_t x = zero;
  HG_TRY(hg_tma_check_init(&x, spec));
  x.rt = rt;
  x.be = be;
  res->spec = x.s;
  res->plan = x.plan;
  const hg_device_info_t *dev = hg_rt_device(rt);
  if (dev) snprintf(res->device, sizeof res->device, "%s", dev->name);
  res->ctas = (uint32_t)x.ctas;
  res->threads = 128;
  res->cluster = (uint32_t)x.C;
  res->fallback_boxes = hg_tma_spec_fallback_boxes(&x.s, x.p);

  uint64_t seed = o.seed ? o.seed : (uint64_t)(hg_now_ms() * 1000.0) ^ 0x5DEECE66Dull;
  for (int i = 0; i < runs; i++) {
    hg_tma_timing_t t;
    memset(&t, 0, sizeof t);
    hg_status_t st = pass(&x, seed + (uint64_t)i * 0x9E3779B97F4A7C15ull, &o, max_report, &t, res);
    if (i == 0) res->cold = t;
    res->warm = t;
    res->runs = i + 1;
    if (!hg_is_ok(&st)) {
      char what[160];
      hg_tma_spec_print(&x.s, what, sizeof what);
      return hg_status_wrap(st, "%s (pass %d of %d): ", what, i + 1, runs);
    }
    if (res->mismatches || res->ctas_unfinished || res->ctas_timed_out || res->ctas_fallback_wrong)
      break;
  }
  if (res->ctas_timed_out)
    return hg_error(HG_ERR_MISMATCH,
                    "%" PRId64 " CTA(s) gave up waiting on the mbarrier (first: CTA %" PRId64
                    "): the transaction count never reached the %" PRIu32
                    " B each CTA expects, so some box never landed",
                    res->ctas_timed_out, res->first_bad_cta, x.p->expect_tx_bytes);
  if (res->ctas_unfinished)
    return hg_error(HG_ERR_MISMATCH,
                    "%" PRId64 " CTA(s) never wrote their status word (first: CTA %" PRId64
                    "): they did not run to their end",
                    res->ctas_unfinished, res->first_bad_cta);
  if (res->ctas_fallback_wrong)
    return hg_error(HG_ERR_MISMATCH,
                    "%" PRId64 " CTA(s) wrote a different number of boxes without TMA than the "
                    "plan says (first: CTA %" PRId64 " reported %d, its tile has %d box(es) "
                    "with a negative coordinate); in all %" PRId64 " reported, %" PRId64 " planned",
                    res->ctas_fallback_wrong, res->first_fallback_cta, res->first_fallback_got,
                    res->first_fallback_want, res->fallback_reported, res->fallback_boxes);
  if (res->mismatches)
    return hg_error(HG_ERR_MISMATCH,
                    "%" PRIu64 " of %" PRIu64 " bytes differ from the model (%s); first: %s",
                    res->mismatches, res->bytes_compared,
                    x.load ? "shared-memory dumps" : "output allocation", res->first[0].where);
  return hg_ok();
}
