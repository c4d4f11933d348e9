/* The tuned-configuration store (kernels.h): the tuner's winners, one text file in the cache
 * directory that every hopgen cache shares (cachefile.h), and the tuner that fills it. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cachefile.h"
#include "hopgen/kernels.h"

/* The tuner's winners live in one text file in the cache directory (the one every hopgen
 * cache shares, cachefile.h), a line per problem kind: "<key> <config>". Lookups read it;
 * the tuner appends (the last line for a key wins). "" when the cache is off or has no
 * location. */
static void tuned_path(hg_cache_dir_t *d, char *buf, size_t size) {
  hg_cache_dir_from_env(d);
  if (d->enabled)
    snprintf(buf, size, "%s/gemm-tuned.txt", d->dir);
  else
    buf[0] = '\0';
}

static void tuned_key(const hg_gemm_problem_t *p, const char *device, char *buf, size_t size) {
  char dev[64];
  size_t j = 0;
  for (size_t i = 0; device[i] && j + 1 < sizeof dev; i++)
    dev[j++] = (device[i] == ' ' || device[i] == '\t') ? '_' : device[i];
  dev[j] = '\0';
  /* The operands' alignments decide their paths (TMA or cp.async), and fp8's scaling mode
   * and accumulation its mainloop, so they are part of the problem's kind. */
  snprintf(buf, size, "%s|%s%s%s|%c%c|%" PRId64 "x%" PRId64 "x%" PRId64 "x%d|a%db%d|s%df%d", dev,
           hg_dtype_name(p->a_type), hg_dtype_name(p->b_type), hg_dtype_name(p->d_type),
           p->a_k_major ? 'k' : 'm', p->b_k_major ? 'k' : 'n', p->m, p->n, p->k, p->batch,
           hg_gemm_operand_align(p, 0), hg_gemm_operand_align(p, 1), (int)p->scale,
           (int)p->fp8_accum);
}

bool hg_gemm_tuned_lookup(const hg_gemm_problem_t *p, const char *device, hg_gemm_config_t *out) {
  char path[600], key[256], line[512];
  hg_cache_dir_t d;
  tuned_path(&d, path, sizeof path);
  if (!path[0]) return false;
  FILE *f = fopen(path, "r");
  if (!f) return false;
  tuned_key(p, device, key, sizeof key);
  bool found = false;
  const size_t kl = strlen(key);
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, key, kl) != 0 || line[kl] != ' ') continue;
    char *cfg = line + kl + 1;
    cfg[strcspn(cfg, "\r\n")] = '\0';
    hg_gemm_config_t c;
    hg_status_t s = hg_gemm_config_parse(cfg, &c);
    if (hg_is_ok(&s)) s = hg_gemm_config_check(p, &c);
    if (hg_is_ok(&s)) {
      *out = c;
      found = true;
    }
  }
  fclose(f);
  return found;
}

hg_status_t hg_gemm_tuned_record(const hg_gemm_problem_t *p, const char *device,
                                 const hg_gemm_config_t *c) {
  char path[600], key[256], cfg[128];
  hg_cache_dir_t d;
  tuned_path(&d, path, sizeof path);
  if (!path[0]) return hg_ok();
  HG_TRY(hg_cache_mkdir_p(d.dir));
  FILE *f = fopen(path, "a");
  if (!f) return hg_error(HG_ERR_IO, "cannot append the tuned configuration to %s", path);
  tuned_key(p, device, key, sizeof key);
  hg_gemm_config_print(c, cfg, sizeof cfg);
  fprintf(f, "%s %s\n", key, cfg);
  fclose(f);
  return hg_ok();
}

/* The tuner's search space: tiles that suit the shape, clusters along the shared operand,
 * both schedules, the most stages that fit. */
hg_status_t hg_gemm_tune(hg_rt_t *rt, const hg_gemm_problem_t *p_in, const hg_gemm_run_options_t *o,
                         hg_gemm_config_t *best, hg_gemm_report_t *best_report) {
  hg_gemm_problem_t p = *p_in;
  HG_TRY(hg_gemm_problem_normalize(&p));
  /* The heuristic's choice first, then the space: the answer is never slower than the default
   * as measured here (the heuristic may pick what the space lacks: the decode kernel, 64x64
   * split tiles; bench/RESULTS.md has two shapes where the space alone lost to it). */
  hg_gemm_config_t space[HG_GEMM_TUNE_MAX + 1];
  const hg_device_info_t *info = hg_rt_device(rt);
  hg_status_t hs = hg_gemm_heuristic(&p, info ? info->sm_count : 0, &space[0]);
  const int first = hg_is_ok(&hs) ? 1 : 0;
  const int n = first + hg_gemm_tune_space(&p, space + first, HG_GEMM_TUNE_MAX);
  double best_ms = 0;
  int tried = 0;
  for (int ci = 0; ci < n; ci++) {
    hg_gemm_config_t c = space[ci];
    hg_gemm_run_options_t oo = *o;
    oo.config = &c;
    oo.check = false;
    oo.bench = true;
    hg_gemm_report_t rep;
    hg_status_t s = hg_gemm_run(rt, &p, &oo, &rep);
    tried++;
    if (!hg_is_ok(&s)) continue; /* a configuration that fails to run is not a winner */
    if (best_ms == 0 || rep.ms < best_ms) {
      best_ms = rep.ms;
      *best = c;
      if (best_report) *best_report = rep;
    }
  }
  if (best_ms == 0)
    return hg_error(HG_ERR_INVALID, "the tuner found no configuration that runs (%d tried)", tried);
  const hg_device_info_t *dev = hg_rt_device(rt);
  return hg_gemm_tuned_record(&p, dev ? dev->name : "", best);
}
