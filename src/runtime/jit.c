/* Modules: PTX compiled by the driver's JIT linker (cuLinkCreate / cuLinkAddData /
 * cuLinkComplete, CUDA Driver API "Module Management") into a cubin, kept in the on-disk
 * cache (cache.c), loaded with cuModuleLoadData; or, for PTX that moves registers between
 * warpgroups (setmaxnreg), compiled and loaded in one step by cuModuleLoadDataEx (below);
 * kernels looked up and configured. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"

/* Enough for any ptxas diagnostic worth reading; the status keeps ~1 KB of it anyway. */
#define JIT_LOG_BYTES 8192

/* Trailing newlines and spaces off a driver log (it ends each message with "\n"). */
static void trim(char *s) {
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ')) s[--n] = '\0';
}

static hg_status_t jit_failure(const hg_cu_t *cu, CUresult r, const char *call, char *err,
                               char *info) {
  trim(err);
  trim(info);
  char what[256];
  hg_cu_describe(cu, r, what, sizeof what);
  return hg_error(HG_ERR_JIT, "the driver's JIT compiler rejected the PTX (%s: %s)%s%s%s%s", call,
                  what, *err ? ":\n" : "", err, *info ? "\n" : "", info);
}

/* PTX -> cubin; the cubin is copied out (the linker owns its buffer) into *cubin. */
static hg_status_t jit_compile(hg_rt_t *rt, const char *ptx, size_t len, void **cubin,
                               size_t *cubin_size) {
  const hg_cu_t *cu = &rt->cu;
  char err[JIT_LOG_BYTES] = "", info[JIT_LOG_BYTES] = "";
  /* The log buffers are written during cuLinkAddData and cuLinkComplete, so they live in
   * this frame until cuLinkDestroy. Size options are unsigned ints passed by value in the
   * pointer slot (CUjit_option documentation). */
  CUjit_option opts[4] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                          CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void *vals[4] = {err, (void *)(uintptr_t)sizeof err, info, (void *)(uintptr_t)sizeof info};
  CUlinkState link = NULL;
  CUresult r = cu->cuLinkCreate(4, opts, vals, &link);
  if (r != CUDA_SUCCESS) return hg_cu_fail(cu, r, "cuLinkCreate");
  hg_status_t s = hg_ok();
  /* PTX is text: the size covers the terminating NUL, which the JIT expects to find. */
  r = cu->cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)ptx, len + 1, "hopgen.ptx", 0, NULL, NULL);
  if (r != CUDA_SUCCESS) {
    s = jit_failure(cu, r, "cuLinkAddData", err, info);
  } else {
    void *image = NULL;
    size_t size = 0;
    r = cu->cuLinkComplete(link, &image, &size);
    if (r != CUDA_SUCCESS) {
      s = jit_failure(cu, r, "cuLinkComplete", err, info);
    } else if (!image || size == 0) {
      s = hg_error(HG_ERR_JIT, "the driver's JIT linker returned an empty image");
    } else {
      *cubin = malloc(size);
      if (!*cubin)
        s = hg_error(HG_ERR_NOMEM, "cannot allocate %zu B for the compiled module", size);
      else {
        memcpy(*cubin, image, size);
        *cubin_size = size;
      }
    }
  }
  cu->cuLinkDestroy(link);
  return s;
}

/* Whether the PTX must be compiled as one whole program. The JIT linker compiles its input as
 * a separate compilation unit, and ptxas then ignores setmaxnreg ("C7504: 'setmaxnreg'
 * ignored to maintain compatibility across compilation units"): the consumer warpgroups
 * keep the entry's register cap (168 beside 384 threads, not the 232-240 they ask for) and
 * spill. Seen on an H100 with driver 580.159.04 (bench/RESULTS.md, "setmaxnreg and the JIT
 * linker"): a block-wise fp8 GEMM linked so had a 328-byte stack and 310 local loads and
 * stores, where ptxas and cuModuleLoadDataEx on the same PTX give none. cuModuleLoadDataEx
 * hands back no cubin, so hopgen's cache cannot keep these modules: the driver's own JIT
 * cache (CUDA_CACHE_PATH) keeps them across processes instead. */
static bool whole_program(const char *ptx) {
  return strstr(ptx, "setmaxnreg") != NULL;
}

/* PTX -> a loaded module in one step (whole-program compilation). */
static hg_status_t jit_load(hg_rt_t *rt, const char *ptx, CUmodule *mod) {
  const hg_cu_t *cu = &rt->cu;
  char err[JIT_LOG_BYTES] = "", info[JIT_LOG_BYTES] = "";
  CUjit_option opts[4] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                          CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void *vals[4] = {err, (void *)(uintptr_t)sizeof err, info, (void *)(uintptr_t)sizeof info};
  CUresult r = cu->cuModuleLoadDataEx(mod, ptx, 4, opts, vals);
  return r == CUDA_SUCCESS ? hg_ok() : jit_failure(cu, r, "cuModuleLoadDataEx", err, info);
}

/* A loaded module joins the runtime's table under its key, with one reference. */
static hg_status_t wrap_module(hg_rt_t *rt, CUmodule mod, const hg_cache_key_t *key, size_t len,
                               hg_module_t **out) {
  hg_module_t *m = (hg_module_t *)calloc(1, sizeof *m);
  if (!m) {
    rt->cu.cuModuleUnload(mod);
    return hg_error(HG_ERR_NOMEM, "cannot allocate a module");
  }
  m->mod = mod;
  m->refs = 1;
  m->key = key->hash;
  m->ptx_len = len;
  pthread_mutex_lock(&rt->modules_lock);
  m->next = rt->modules;
  rt->modules = m;
  pthread_mutex_unlock(&rt->modules_lock);
  *out = m;
  return hg_ok();
}

/* The module already loaded for this key, with a reference taken; NULL when none. */
static hg_module_t *loaded(hg_rt_t *rt, const hg_cache_key_t *key, size_t len) {
  pthread_mutex_lock(&rt->modules_lock);
  hg_module_t *m = rt->modules;
  while (m && !(m->ptx_len == len && m->key.lo == key->hash.lo && m->key.hi == key->hash.hi))
    m = m->next;
  if (m) m->refs++;
  pthread_mutex_unlock(&rt->modules_lock);
  return m;
}

hg_status_t hg_rt_module_load(hg_rt_t *rt, const char *ptx, hg_module_t **out,
                              hg_jit_info_t *info) {
  hg_jit_info_t scratch;
  if (!info) info = &scratch;
  memset(info, 0, sizeof *info);
  if (!out) return hg_error(HG_ERR_INVALID, "hg_rt_module_load needs somewhere to put the module");
  *out = NULL;
  if (!ptx || !*ptx) return hg_error(HG_ERR_INVALID, "hg_rt_module_load was given no PTX");
  HG_TRY(hg_rt_bind(rt));
  const double t0 = hg_now_ms();
  const size_t len = strlen(ptx);
  const hg_cu_t *cu = &rt->cu;

  hg_cache_t cache;
  hg_cache_from_env(&cache);
  const hg_cache_key_t key = hg_cache_key(ptx, len, rt->info.driver_version, rt->info.name,
                                          rt->info.cc_major, rt->info.cc_minor);
  if (cache.enabled)
    hg_cache_path(&cache, &key, info->cache_path, sizeof info->cache_path);
  else
    snprintf(info->cache_note, sizeof info->cache_note, "cache off: %s", cache.why_disabled);

  /* Hot path: this runtime has it loaded already. */
  if ((*out = loaded(rt, &key, len))) {
    info->cache_hit = true;
    info->load_ms = hg_now_ms() - t0;
    snprintf(info->cache_note, sizeof info->cache_note,
             "already loaded by this process: the same module");
    return hg_ok();
  }

  if (whole_program(ptx)) {
    CUmodule mod = NULL;
    HG_TRY(jit_load(rt, ptx, &mod));
    info->compile_ms = hg_now_ms() - t0;
    info->cache_path[0] = '\0';
    snprintf(info->cache_note, sizeof info->cache_note,
             "compiled as a whole program (setmaxnreg), which only cuModuleLoadDataEx does: "
             "the driver's JIT cache keeps it, hopgen's cache does not");
    return wrap_module(rt, mod, &key, len, out);
  }

  /* Warm path: one file read and cuModuleLoadData. */
  void *image = NULL;
  size_t image_size = 0;
  char why[sizeof info->cache_note];
  hg_cache_result_t found = hg_cache_lookup(&cache, &key, &image, &image_size, why, sizeof why);
  if (why[0]) snprintf(info->cache_note, sizeof info->cache_note, "%s", why);
  if (found == HG_CACHE_HIT) {
    CUmodule mod = NULL;
    CUresult r = cu->cuModuleLoadData(&mod, image);
    free(image);
    image = NULL;
    if (r == CUDA_SUCCESS) {
      info->cache_hit = true;
      info->load_ms = hg_now_ms() - t0;
      return wrap_module(rt, mod, &key, len, out);
    }
    /* A whole entry under exactly this key that the driver will not load (a driver changed
     * without its version number, or a cubin made bad before it was stored): replace it. */
    hg_cache_remove(&cache, &key);
    char what[256];
    snprintf(info->cache_note, sizeof info->cache_note,
             "the cached cubin was refused by cuModuleLoadData (%s); it was deleted and the "
             "PTX recompiled",
             hg_cu_describe(cu, r, what, sizeof what));
  }

  const double tc = hg_now_ms();
  HG_TRY(jit_compile(rt, ptx, len, &image, &image_size));
  info->compile_ms = hg_now_ms() - tc;

  if (cache.enabled) {
    hg_status_t s = hg_cache_store(&cache, &key, image, image_size);
    if (!hg_is_ok(&s)) {
      snprintf(info->cache_note, sizeof info->cache_note, "not cached: %.240s", s.msg);
      info->cache_path[0] = '\0';
    }
  }

  const double tl = hg_now_ms();
  CUmodule mod = NULL;
  CUresult r = cu->cuModuleLoadData(&mod, image);
  info->load_ms = hg_now_ms() - tl;
  free(image);
  if (r != CUDA_SUCCESS) {
    hg_cache_remove(&cache, &key);
    return hg_cu_fail(cu, r, "cuModuleLoadData of the freshly compiled cubin");
  }
  return wrap_module(rt, mod, &key, len, out);
}

void hg_rt_module_unload(hg_rt_t *rt, hg_module_t *m) {
  if (!m) return;
  if (rt) {
    /* the last reference unloads it and leaves the table */
    pthread_mutex_lock(&rt->modules_lock);
    const bool last = --m->refs <= 0;
    if (last)
      for (hg_module_t **p = &rt->modules; *p; p = &(*p)->next)
        if (*p == m) {
          *p = m->next;
          break;
        }
    pthread_mutex_unlock(&rt->modules_lock);
    if (!last) return;
  }
  for (hg_function_t *f = m->functions; f;) {
    hg_function_t *next = f->next;
    free(f);
    f = next;
  }
  if (rt) {
    hg_status_t s = hg_rt_bind(rt);
    if (hg_is_ok(&s)) rt->cu.cuModuleUnload(m->mod);
  }
  free(m);
}

/* ---------------------------------------------------------------- kernels */

hg_status_t hg_function_reserve_smem(hg_rt_t *rt, hg_function_t *f, uint32_t bytes) {
  if ((int64_t)bytes <= (int64_t)f->dyn_smem_limit) return hg_ok();
  const int optin = rt->info.max_smem_per_block_optin;
  if ((int64_t)bytes + f->static_smem_bytes > (int64_t)optin)
    return hg_error(HG_ERR_INVALID,
                    "kernel %s asks for %" PRIu32 " B of dynamic shared memory on top of its %d B "
                    "of static shared memory, but device %d (%s) allows at most %d B per block",
                    f->name, bytes, f->static_smem_bytes, rt->info.ordinal, rt->info.name, optin);
  CUresult r =
      rt->cu.cuFuncSetAttribute(f->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes);
  if (r != CUDA_SUCCESS)
    return hg_cu_fail(&rt->cu, r,
                      "cuFuncSetAttribute(%s, MAX_DYNAMIC_SHARED_SIZE_BYTES = %" PRIu32 ")",
                      f->name, bytes);
  f->dyn_smem_limit = (int)bytes;
  return hg_ok();
}

static hg_status_t func_attr(hg_rt_t *rt, hg_function_t *f, CUfunction_attribute a,
                             const char *what, int *out) {
  CUresult r = rt->cu.cuFuncGetAttribute(out, a, f->fn);
  if (r != CUDA_SUCCESS) return hg_cu_fail(&rt->cu, r, "cuFuncGetAttribute(%s, %s)", f->name, what);
  return hg_ok();
}

hg_status_t hg_rt_function(hg_rt_t *rt, hg_module_t *m, const char *name, uint32_t smem_bytes,
                           hg_function_t **out) {
  if (!out) return hg_error(HG_ERR_INVALID, "hg_rt_function needs somewhere to put the kernel");
  *out = NULL;
  if (!m || !name || !*name)
    return hg_error(HG_ERR_INVALID, "hg_rt_function needs a module and a kernel name");
  if (strlen(name) >= sizeof(((hg_function_t *)0)->name))
    return hg_error(HG_ERR_INVALID, "kernel name %.40s... is longer than %zu characters", name,
                    sizeof(((hg_function_t *)0)->name) - 1);
  HG_TRY(hg_rt_bind(rt));
  /* The same kernel asked for twice is the same object (the module owns it). */
  for (hg_function_t *f = m->functions; f; f = f->next) {
    if (strcmp(f->name, name) == 0) {
      HG_TRY(hg_function_reserve_smem(rt, f, smem_bytes));
      *out = f;
      return hg_ok();
    }
  }
  CUfunction fn = NULL;
  CUresult r = rt->cu.cuModuleGetFunction(&fn, m->mod, name);
  if (r == CUDA_ERROR_NOT_FOUND)
    return hg_error(HG_ERR_INVALID, "the module has no kernel named %s (its .entry name)", name);
  if (r != CUDA_SUCCESS) return hg_cu_fail(&rt->cu, r, "cuModuleGetFunction(%s)", name);
  hg_function_t *f = (hg_function_t *)calloc(1, sizeof *f);
  if (!f) return hg_error(HG_ERR_NOMEM, "cannot allocate a kernel handle");
  f->fn = fn;
  snprintf(f->name, sizeof f->name, "%s", name);
  hg_status_t s = func_attr(rt, f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "SHARED_SIZE_BYTES",
                            &f->static_smem_bytes);
  if (hg_is_ok(&s))
    s = func_attr(rt, f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "MAX_THREADS_PER_BLOCK",
                  &f->max_threads);
  if (hg_is_ok(&s))
    s = func_attr(rt, f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                  "MAX_DYNAMIC_SHARED_SIZE_BYTES", &f->dyn_smem_limit);
  if (hg_is_ok(&s)) s = hg_function_reserve_smem(rt, f, smem_bytes);
  if (!hg_is_ok(&s)) {
    free(f);
    return s;
  }
  f->next = m->functions;
  m->functions = f;
  *out = f;
  return hg_ok();
}
