/* The streaming copy: the TMA pieces of the copy kernels (tensor maps, boxes, mbarriers,
 * bulk groups) put together for bandwidth, and its benchmark against the driver's
 * device-to-device copy in the same process.
 *
 * The buffer is viewed as a [rows, 256] tensor of u32 (1 KiB rows); a box is box_rows
 * rows. A persistent grid (SM count x ctas_per_sm CTAs) walks the boxes round-robin;
 * in each CTA one thread runs a ring of `stages` shared-memory buffers, one mbarrier each:
 *
 *   prologue   load boxes 0 .. stages-1 of this CTA into stages 0 .. stages-1
 *   box j      wait full[j % S] (phase (j / S) & 1); TMA-store stage j % S; commit;
 *              then refill the stage box j-1 used (its store was committed one iteration
 *              ago): cp.async.bulk.wait_group.read 1 (every group but the newest has
 *              finished reading shared memory), expect_tx + load box j-1+S into it
 *   end        cp.async.bulk.wait_group 0 (the writes are done before the CTA exits)
 *
 * So S-1 loads are in flight while a store drains, and the issuing thread never waits
 * for a store it has just issued. Out-of-bounds rows of a last partial box are zero-
 * filled by the load and skipped by the store (TMA's bounds), so any whole number of
 * rows copies exactly.
 *
 * Layering note: hg_copy_bench_run calls the runtime (see tma_run.c's note). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hopgen/kernels.h"
#include "kernels/tma_internal.h"

#define COPY_ROW_ELEMS 256 /* a box row: 256 u32 (the box limit), 1 KiB */
#define COPY_ROW_BYTES (COPY_ROW_ELEMS * 4)
#define COPY_THREADS 32 /* one warp: elect.sync picks the issuing thread */

static hg_status_t copy_config_normalize(hg_copy_config_t *c) {
  if (c->stages == 0) c->stages = 6;
  if (c->box_rows == 0) c->box_rows = 32;
  if (c->ctas_per_sm == 0) c->ctas_per_sm = 1;
  if (c->stages < 2 || c->stages > 16)
    return hg_error(HG_ERR_INVALID, "the copy ring has %d stages; give 2..16", c->stages);
  if (c->box_rows < 1 || c->box_rows > 256)
    return hg_error(HG_ERR_INVALID, "a copy box of %d rows is outside TMA's 1..256 box extent",
                    c->box_rows);
  if (c->ctas_per_sm < 1 || c->ctas_per_sm > 32)
    return hg_error(HG_ERR_INVALID, "%d CTAs per SM is outside 1..32", c->ctas_per_sm);
  const uint64_t smem = (uint64_t)c->stages * (uint64_t)c->box_rows * COPY_ROW_BYTES;
  if (smem + 8u * (uint64_t)c->stages > 227u * 1024u)
    return hg_error(HG_ERR_INVALID,
                    "%d stages of %d rows x %d B = %" PRIu64
                    " B of shared memory exceed the 227 KiB a CTA may use on sm_90",
                    c->stages, c->box_rows, COPY_ROW_BYTES, smem);
  if (smem * (uint64_t)c->ctas_per_sm > 228u * 1024u)
    return hg_error(HG_ERR_INVALID,
                    "%d CTAs per SM with %" PRIu64
                    " B of shared memory each exceed an SM's 228 KiB: fewer stages, smaller "
                    "boxes or fewer CTAs per SM",
                    c->ctas_per_sm, smem);
  return hg_ok();
}

/* The [rows, 256] u32 view of `bytes`: what both tensor maps describe. */
static void copy_map(const hg_copy_config_t *c, uint64_t bytes, hg_tensormap_params_t *m) {
  memset(m, 0, sizeof *m);
  m->dtype = HG_U32;
  m->rank = 2;
  m->global_dim[0] = COPY_ROW_ELEMS;
  m->global_dim[1] = bytes / COPY_ROW_BYTES;
  m->global_stride_bytes[0] = COPY_ROW_BYTES;
  m->box_dim[0] = COPY_ROW_ELEMS;
  m->box_dim[1] = (uint32_t)c->box_rows;
  m->element_strides[0] = m->element_strides[1] = 1;
  m->swizzle = HG_SWIZZLE_NONE;
  m->l2_promotion = 3; /* 256B: whole rows are read */
}

hg_status_t hg_gen_copy(const hg_copy_config_t *cfg, hg_backend_t be, hg_kernel_t *k) {
  if (!k) return hg_error(HG_ERR_INVALID, "hg_gen_copy needs somewhere to put the kernel");
  memset(k, 0, sizeof *k);
  hg_copy_config_t c;
  memset(&c, 0, sizeof c);
  if (cfg) c = *cfg;
  HG_TRY(copy_config_normalize(&c));
  const double t0 = hg_now_ms();
  const int S = c.stages;
  const uint32_t box_bytes = (uint32_t)c.box_rows * COPY_ROW_BYTES;
  snprintf(k->name, sizeof k->name, "hg_copy_s%d_r%d%s", S, c.box_rows, c.evict_first ? "_ef" : "");
  k->threads = COPY_THREADS;
  k->cluster[0] = k->cluster[1] = k->cluster[2] = 1;
  hg_builder_t *b;
  HG_TRY(hg_builder_create(k->name, &b));
  hg_b_set_threads(b, COPY_THREADS);
  hg_val_t src = hg_b_param_tmap(b, "src");
  hg_val_t dst = hg_b_param_tmap(b, "dst");
  hg_val_t nboxes = hg_b_param(b, HG_T_I32, "boxes");
  /* The ring: S box buffers and a full barrier each (no empty barriers: the one thread that
   * loads also stores, and knows from its bulk groups when a stage is free). */
  hg_smem_ring_t ring;
  hg_pipe_t pipe;
  const hg_pipe_spec_t ps = {.stages = S, .full_arrivals = 1, .empty_arrivals = 0};
  hg_status_t st = hg_smem_ring_make(b, box_bytes, 128, S, &ring);
  if (hg_is_ok(&st)) st = hg_pipe_make(b, &ps, &pipe);
  if (!hg_is_ok(&st)) {
    hg_builder_destroy(b);
    return st;
  }
  hg_val_t zero = hg_b_i32(b, 0);
  hg_val_t rows = hg_b_i32(b, c.box_rows);
  hg_val_t tx = hg_b_i32(b, (int32_t)box_bytes);

  hg_b_if(b, hg_b_elect_sync(b));
  {
    hg_val_t hint = c.evict_first ? hg_b_cache_policy(b, HG_EVICT_FIRST) : HG_NONE;
    hg_pipe_init(b, &pipe);
    /* the barriers' init must be visible to the TMA unit's complete_tx (async proxy) */
    hg_b_fence_proxy_async(b);
    hg_val_t cta = hg_b_sreg(b, HG_CTAID_X), nc = hg_b_sreg(b, HG_NCTAID_X);
    /* n = boxes this CTA copies: ceil((boxes - cta) / nctaid), 0 when cta >= boxes */
    hg_val_t left = hg_b_bin(b, HG_SUB, nboxes, cta);
    hg_val_t n = hg_b_select(
        b, hg_b_cmp(b, HG_GT_S, left, zero),
        hg_b_bin(b, HG_DIV_S, hg_b_bin(b, HG_ADD, left, hg_b_bin(b, HG_SUB, nc, hg_b_i32(b, 1))),
                 nc),
        zero);
    hg_b_name(b, n, "my_boxes");

    hg_b_comment(b, "prologue: fill the ring");
    for (int s = 0; s < S; s++) {
      hg_b_if(b, hg_b_cmp(b, HG_LT_S, hg_b_i32(b, s), n));
      hg_val_t sv = hg_b_i32(b, s);
      hg_val_t bar = hg_pipe_full_bar(b, &pipe, sv);
      hg_val_t box = hg_b_mad(b, sv, nc, cta);
      hg_val_t crd[2] = {zero, hg_b_bin(b, HG_MUL, box, rows)};
      hg_b_mbar_arrive_expect_tx(b, bar, tx);
      hg_b_tma_load(b, src, hg_smem_ring_addr(b, &ring, sv), bar, 2, crd, HG_NONE, hint);
      hg_b_endif(b);
    }

    hg_b_comment(b, "steady state: store box j, refill the stage of box j-1");
    hg_val_t j = hg_b_for(b, zero, n, hg_b_i32(b, 1));
    {
      hg_val_t Sv = hg_b_i32(b, S);
      hg_val_t s = hg_b_bin(b, HG_REM_U, j, Sv);
      hg_val_t parity = hg_b_bin(b, HG_AND, hg_b_bin(b, HG_DIV_U, j, Sv), hg_b_i32(b, 1));
      hg_val_t stage = hg_smem_ring_addr(b, &ring, s);
      hg_val_t bar = hg_pipe_full_bar(b, &pipe, s);
      hg_b_mbar_wait(b, bar, parity);
      hg_val_t box = hg_b_mad(b, j, nc, cta);
      hg_val_t crd[2] = {zero, hg_b_bin(b, HG_MUL, box, rows)};
      hg_b_tma_store(b, dst, stage, 2, crd);
      hg_b_bulk_commit(b);
      hg_val_t next = hg_b_bin(b, HG_ADD, j, hg_b_i32(b, S - 1)); /* the box to load */
      hg_b_if(b, hg_b_bin(b, HG_AND, hg_b_cmp(b, HG_GE_S, j, hg_b_i32(b, 1)),
                          hg_b_cmp(b, HG_LT_S, next, n)));
      {
        /* PTX ISA cp.async.bulk.wait_group.read: the older store (box j-1) has read its
         * stage, which may now be overwritten. */
        hg_b_bulk_wait(b, 1, true);
        hg_val_t sp = hg_b_bin(b, HG_REM_U, next, Sv);
        hg_val_t pstage = hg_smem_ring_addr(b, &ring, sp);
        hg_val_t pbar = hg_pipe_full_bar(b, &pipe, sp);
        hg_val_t pbox = hg_b_mad(b, next, nc, cta);
        hg_val_t pcrd[2] = {zero, hg_b_bin(b, HG_MUL, pbox, rows)};
        hg_b_mbar_arrive_expect_tx(b, pbar, tx);
        hg_b_tma_load(b, src, pstage, pbar, 2, pcrd, HG_NONE, hint);
      }
      hg_b_endif(b);
    }
    hg_b_endfor(b);
    hg_b_bulk_wait(b, 0, false);
  }
  hg_b_endif(b);
  k->gen_ms = hg_now_ms() - t0;
  st = hg_kernel_finish(b, be, k);
  hg_builder_destroy(b);
  if (!hg_is_ok(&st)) {
    hg_kernel_free(k);
    return hg_status_wrap(st, "generating the streaming copy: ");
  }
  return hg_ok();
}

/* ---------------------------------------------------------------- the benchmark */

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct bench_state {
  hg_rt_t *rt;
  hg_devptr_t src, dst;
  hg_module_t *copy_mod, *fill_mod;
  hg_function_t *copy_fn, *fill_fn;
  hg_event_t ev[4];
  hg_stream_t stream;
  double *times;
  uint8_t *host_a, *host_b;
} bench_state_t;

static void bench_free(bench_state_t *b) {
  for (int i = 0; i < 4; i++)
    if (b->ev[i]) hg_rt_event_destroy(b->rt, b->ev[i]);
  if (b->stream) hg_rt_stream_destroy(b->rt, b->stream);
  if (b->copy_mod) hg_rt_module_unload(b->rt, b->copy_mod);
  if (b->fill_mod) hg_rt_module_unload(b->rt, b->fill_mod);
  hg_rt_free(b->rt, b->src);
  hg_rt_free(b->rt, b->dst);
  free(b->times);
  free(b->host_a);
  free(b->host_b);
}

/* Compare dst with src in 64 MiB pieces; the first difference is described. */
static hg_status_t verify(bench_state_t *b, uint64_t bytes, int box_rows, bool *ok) {
  const size_t chunk = (size_t)64 << 20;
  *ok = false;
  if (!b->host_a) b->host_a = malloc(chunk);
  if (!b->host_b) b->host_b = malloc(chunk);
  if (!b->host_a || !b->host_b)
    return hg_error(HG_ERR_NOMEM, "cannot allocate 2 x 64 MiB of host memory to verify the copy");
  for (uint64_t at = 0; at < bytes; at += chunk) {
    const size_t n = bytes - at < chunk ? (size_t)(bytes - at) : chunk;
    HG_TRY(hg_rt_download(b->rt, b->host_a, b->src + at, n));
    HG_TRY(hg_rt_download(b->rt, b->host_b, b->dst + at, n));
    if (memcmp(b->host_a, b->host_b, n) != 0) {
      size_t i = 0;
      while (b->host_a[i] == b->host_b[i]) i++;
      uint64_t bad = 0;
      for (size_t k = i; k < n; k++) bad += b->host_a[k] != b->host_b[k];
      const uint64_t off = at + i;
      return hg_error(HG_ERR_MISMATCH,
                      "the TMA copy is not exact: byte %" PRIu64 " (row %" PRIu64 ", box %" PRIu64
                      " of %d rows) is 0x%02X, the source has 0x%02X (0x5A is the destination's "
                      "poison); %" PRIu64 " bytes differ in this 64 MiB piece",
                      off, off / COPY_ROW_BYTES, off / COPY_ROW_BYTES / (uint64_t)box_rows,
                      box_rows, b->host_b[i], b->host_a[i], bad);
    }
  }
  *ok = true;
  return hg_ok();
}

static hg_status_t bench_body(bench_state_t *st, const hg_copy_bench_t *in, hg_backend_t be,
                              hg_copy_bench_result_t *out) {
  hg_rt_t *rt = st->rt;
  const uint64_t bytes = in->bytes;
  const hg_device_info_t *dev = hg_rt_device(rt);
  if (dev) snprintf(out->device, sizeof out->device, "%s", dev->name);
  const int sms = dev && dev->sm_count > 0 ? dev->sm_count : 132;
  const int warmup = in->warmup > 0 ? in->warmup : 3;
  const int runs = in->runs > 0 ? in->runs : 25;
  hg_copy_config_t cfg = out->config;

  HG_TRY(hg_rt_stream_create(rt, &st->stream));
  for (int i = 0; i < 4; i++) HG_TRY(hg_rt_event_create(rt, &st->ev[i]));
  HG_TRY(hg_rt_alloc(rt, (size_t)bytes, &st->src));
  HG_TRY(hg_rt_alloc(rt, (size_t)bytes, &st->dst));

  /* Fresh random source data (a new seed per run unless one is given), poisoned output. */
  hg_kernel_t fill;
  HG_TRY(hg_gen_fill_random(HG_U32, be, &fill));
  hg_status_t s = hg_rt_module_load(rt, fill.ptx.data, &st->fill_mod, NULL);
  if (hg_is_ok(&s)) s = hg_rt_function(rt, st->fill_mod, fill.name, fill.smem_bytes, &st->fill_fn);
  hg_kernel_free(&fill);
  HG_TRY(s);
  {
    uint64_t count = bytes / 4;
    uint64_t seed = in->seed ? in->seed : (uint64_t)(hg_now_ms() * 1e3) * 0x9E3779B97F4A7C15ull;
    hg_devptr_t ptr = st->src;
    void *args[] = {&ptr, &count, &seed};
    hg_launch_t l;
    memset(&l, 0, sizeof l);
    l.grid[0] = (uint32_t)sms * 8;
    l.grid[1] = l.grid[2] = 1;
    l.block[0] = 256;
    l.block[1] = l.block[2] = 1;
    l.stream = st->stream;
    HG_TRY(hg_rt_launch(rt, st->fill_fn, &l, args));
  }
  HG_TRY(hg_rt_memset8(rt, st->dst, 0x5A, (size_t)bytes, st->stream));
  HG_TRY(hg_rt_sync(rt, st->stream));

  /* The path from spec to launched kernel, timed like hg_tma_run's. */
  hg_tma_timing_t *t = &out->path;
  const double t0 = hg_now_ms();
  hg_kernel_t k;
  HG_TRY(hg_gen_copy(&cfg, be, &k));
  const double t1 = hg_now_ms();
  t->gen_ms = t1 - t0;
  s = hg_rt_module_load(rt, k.ptx.data, &st->copy_mod, &t->jit);
  const double t2 = hg_now_ms();
  t->jit_ms = t2 - t1;
  if (hg_is_ok(&s)) s = hg_rt_function(rt, st->copy_mod, k.name, k.smem_bytes, &st->copy_fn);
  const double t3 = hg_now_ms();
  t->function_ms = t3 - t2;
  hg_tensormap_params_t mp;
  copy_map(&cfg, bytes, &mp);
  hg_tensormap_t map_src, map_dst;
  if (hg_is_ok(&s)) s = hg_rt_tensormap_encode(rt, &mp, st->src, &map_src);
  if (hg_is_ok(&s)) s = hg_rt_tensormap_encode(rt, &mp, st->dst, &map_dst);
  const double t4 = hg_now_ms();
  t->encode_ms = t4 - t3;
  const uint64_t rows = bytes / COPY_ROW_BYTES;
  int32_t nboxes = (int32_t)((rows + (uint64_t)cfg.box_rows - 1) / (uint64_t)cfg.box_rows);
  void *args[] = {&map_src, &map_dst, &nboxes};
  hg_launch_t l;
  memset(&l, 0, sizeof l);
  uint32_t ctas = (uint32_t)sms * (uint32_t)cfg.ctas_per_sm;
  if ((int64_t)ctas > nboxes) ctas = (uint32_t)nboxes;
  l.grid[0] = ctas;
  l.grid[1] = l.grid[2] = 1;
  l.block[0] = k.threads;
  l.block[1] = l.block[2] = 1;
  l.smem_bytes = k.smem_bytes;
  l.stream = st->stream;
  out->ctas = ctas;
  out->threads = k.threads;
  out->smem_bytes = k.smem_bytes;
  if (hg_is_ok(&s)) s = hg_rt_launch(rt, st->copy_fn, &l, args);
  const double t5 = hg_now_ms();
  t->launch_ms = t5 - t4;
  t->to_launch_ms = t5 - t0;
  if (hg_is_ok(&s)) s = hg_rt_sync(rt, st->stream);
  t->sync_ms = hg_now_ms() - t5;
  t->to_finish_ms = hg_now_ms() - t0;
  if (!hg_is_ok(&s)) {
    hg_status_t w = hg_status_wrap(s, "streaming copy kernel %s: ", k.name);
    hg_kernel_free(&k);
    return w;
  }
  hg_kernel_free(&k);

  /* Correct first: the copy's output is the input, byte for byte. */
  HG_TRY(verify(st, bytes, cfg.box_rows, &out->verified));

  /* Then the time: warm-up, then runs of (copy, d2d) pairs, interleaved so that clock and
   * thermal drift hit both sides alike; each timed by events around the one operation. */
  for (int i = 0; i < warmup; i++) {
    HG_TRY(hg_rt_launch(rt, st->copy_fn, &l, args));
    HG_TRY(hg_rt_copy_d2d(rt, st->dst, st->src, (size_t)bytes, st->stream));
  }
  HG_TRY(hg_rt_sync(rt, st->stream));
  st->times = malloc(sizeof(double) * 2 * (size_t)runs);
  if (!st->times) return hg_error(HG_ERR_NOMEM, "cannot allocate the timing table");
  double *tc = st->times, *td = st->times + runs;
  for (int i = 0; i < runs; i++) {
    float a = 0, d = 0;
    HG_TRY(hg_rt_event_record(rt, st->ev[0], st->stream));
    HG_TRY(hg_rt_launch(rt, st->copy_fn, &l, args));
    HG_TRY(hg_rt_event_record(rt, st->ev[1], st->stream));
    HG_TRY(hg_rt_event_record(rt, st->ev[2], st->stream));
    HG_TRY(hg_rt_copy_d2d(rt, st->dst, st->src, (size_t)bytes, st->stream));
    HG_TRY(hg_rt_event_record(rt, st->ev[3], st->stream));
    HG_TRY(hg_rt_sync(rt, st->stream));
    HG_TRY(hg_rt_event_elapsed_ms(rt, st->ev[0], st->ev[1], &a));
    HG_TRY(hg_rt_event_elapsed_ms(rt, st->ev[2], st->ev[3], &d));
    tc[i] = a;
    td[i] = d;
  }
  /* The data the timed copies moved is the same source: check the last one too. */
  HG_TRY(hg_rt_launch(rt, st->copy_fn, &l, args));
  HG_TRY(hg_rt_sync(rt, st->stream));
  HG_TRY(verify(st, bytes, cfg.box_rows, &out->verified));
  double lo_c = tc[0], hi_c = tc[0], lo_d = td[0], hi_d = td[0];
  for (int i = 0; i < runs; i++) {
    lo_c = tc[i] < lo_c ? tc[i] : lo_c;
    hi_c = tc[i] > hi_c ? tc[i] : hi_c;
    lo_d = td[i] < lo_d ? td[i] : lo_d;
    hi_d = td[i] > hi_d ? td[i] : hi_d;
  }
  out->copy_ms = median(tc, runs);
  out->d2d_ms = median(td, runs);
  out->copy_min_ms = lo_c;
  out->copy_max_ms = hi_c;
  out->d2d_min_ms = lo_d;
  out->d2d_max_ms = hi_d;
  /* read + write, counted the same way for both */
  out->copy_gbs = 2.0 * (double)bytes / (out->copy_ms * 1e-3) / 1e9;
  out->d2d_gbs = 2.0 * (double)bytes / (out->d2d_ms * 1e-3) / 1e9;
  out->ratio = out->copy_gbs / out->d2d_gbs;
  return hg_ok();
}

hg_status_t hg_copy_bench_validate(const hg_copy_bench_t *bench) {
  if (!bench) return hg_error(HG_ERR_INVALID, "no copy benchmark description given");
  hg_copy_config_t c = bench->config;
  HG_TRY(copy_config_normalize(&c));
  if (bench->bytes < COPY_ROW_BYTES || bench->bytes % COPY_ROW_BYTES != 0)
    return hg_error(HG_ERR_INVALID,
                    "the copy benchmark moves whole 1 KiB rows: %" PRIu64
                    " B is not a positive multiple of 1024",
                    bench->bytes);
  if (bench->bytes / COPY_ROW_BYTES > (uint64_t)INT32_MAX / 2)
    return hg_error(HG_ERR_INVALID, "%" PRIu64 " B is more rows than 32-bit TMA coordinates reach",
                    bench->bytes);
  if (bench->warmup < 0 || bench->runs < 0)
    return hg_error(HG_ERR_INVALID, "warm-up and run counts are >= 0 (0: the defaults)");
  return hg_ok();
}

hg_status_t hg_copy_bench_run(hg_rt_t *rt, const hg_copy_bench_t *bench, hg_backend_t be,
                              hg_copy_bench_result_t *out) {
  if (!out) return hg_error(HG_ERR_INVALID, "hg_copy_bench_run needs somewhere to put the result");
  memset(out, 0, sizeof *out);
  HG_TRY(hg_copy_bench_validate(bench));
  if (!rt) return hg_error(HG_ERR_NO_DRIVER, "no runtime: open the GPU with hg_rt_open first");
  out->bytes = bench->bytes;
  out->config = bench->config;
  HG_TRY(copy_config_normalize(&out->config));
  bench_state_t st;
  memset(&st, 0, sizeof st);
  st.rt = rt;
  hg_status_t s = bench_body(&st, bench, be, out);
  bench_free(&st);
  return s;
}
