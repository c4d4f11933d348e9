/* The GEMM kernel cache by specification (gemm_internal.h). hg_gemm_build's output is a
 * function of the packed problem, the resolved configuration and the backend, given the
 * library's code: it is stored whole (the kernel struct, its PTX and MLIR) under a key of
 * exactly those inputs and the build id of the binary the library is part of, and found
 * again before planning (about 2.5 ms of layout algebra) and generation (about 3-5 ms; MLIR
 * lowering hundreds). The build id names the code: any other build of the library, with
 * another struct layout or another generator, looks under other keys. Without a build id
 * (a binary linked without one) nothing is cached. Entries use the checked format of every
 * hopgen cache (cachefile.h): a damaged or foreign entry is never served. */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <elf.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cachefile.h"
#include "kernels/gemm_internal.h"

#define SEED_TEXT UINT64_C(0x67656D6D2D737065) /* "gemm-spe" */
#define SEED_KEY UINT64_C(0x67656D6D2D6B6579)  /* "gemm-key" */
#define SEED_SUM UINT64_C(0x67656D6D2D73756D)  /* "gemm-sum" */
#define FORMAT 1
#define MAX_ENTRY (64u << 20)
/* The kernel cache's bounds (hg_cache_prune): about 2000 typical entries of 100-250 KB. */
#define HG_GEMM_CACHE_MAX_MB 512
#define HG_GEMM_CACHE_MAX_FILES 4096

static const hg_cache_format_t format = {"hopgen-gemm-kernel", FORMAT, SEED_SUM, MAX_ENTRY};

/* ---------------------------------------------------------------- the build id */

typedef struct find_id {
  uintptr_t addr; /* an address inside the library's code */
  char hex[2 * 64 + 1];
} find_id_t;

/* The NT_GNU_BUILD_ID note of the loaded object whose segments hold f->addr. */
static int visit(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  find_id_t *f = arg;
  bool mine = false;
  for (int i = 0; i < info->dlpi_phnum && !mine; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    const uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    mine = ph->p_type == PT_LOAD && f->addr >= lo && f->addr < lo + ph->p_memsz;
  }
  if (!mine) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE) continue;
    const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
    const unsigned char *end = p + ph->p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)(const void *)p;
      const unsigned char *name = p + sizeof *n;
      const unsigned char *desc = name + ((n->n_namesz + 3) & ~3u);
      if (desc + n->n_descsz > end) break;
      if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4) &&
          n->n_descsz > 0 && n->n_descsz <= 64) {
        for (unsigned k = 0; k < n->n_descsz; k++) snprintf(f->hex + 2 * k, 3, "%02x", desc[k]);
        return 1;
      }
      p = desc + ((n->n_descsz + 3) & ~3u);
    }
  }
  return 1; /* the right object, without a build id */
}

const char *hg_gemm_build_id(void) {
  /* Computed once; every thread computes the same string, so a race only repeats work. */
  static char id[2 * 64 + 1];
  static int state; /* 0 unknown, 1 found, -1 none */
  if (state == 0) {
    find_id_t f = {.addr = (uintptr_t)&hg_gemm_build_id, .hex = ""};
    dl_iterate_phdr(visit, &f);
    if (f.hex[0]) memcpy(id, f.hex, sizeof id);
    state = f.hex[0] ? 1 : -1;
  }
  return state == 1 ? id : NULL;
}

/* ---------------------------------------------------------------- keys */

bool hg_gemm_spec_key(const hg_gemm_problem_t *p, const hg_gemm_config_t *c, bool repack_a,
                      bool repack_b, hg_backend_t be, hg_gemm_spec_key_t *out) {
  const char *id = hg_gemm_build_id();
  memset(out, 0, sizeof *out);
  if (!id) return false;
  /* Every field, printed: a struct's padding bytes would make equal inputs differ. */
  const int n = snprintf(
      out->text, sizeof out->text,
      "m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " batch=%d types=%d,%d,%d kmajor=%d,%d "
      "ld=%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 " bs=%" PRId64 ",%" PRId64 ",%" PRId64
      ",%" PRId64 " alpha=%a beta=%a d_no_tma=%d align=%d,%d act=%d,%a,%a bias=%d,%d "
      "scales=%d,%d residual=%d group=%d c_type=%d amax=%d aux=%d,%d,%" PRId64 ",%" PRId64 " "
      "accum=%d,%d scale=%d,%" PRId64 ",%" PRId64 " "
      "repack=%d,%d | "
      "tile=%d,%d,%d "
      "cluster=%d,%d stages=%d schedule=%d raster=%d,%d epi=%d mainloop=%d splits=%d,%d,%d "
      "overlap=%d sk=%d bscales=%d gelu=%d epi_direct=%d swap=%d",
      p->m, p->n, p->k, p->batch, (int)p->a_type, (int)p->b_type, (int)p->d_type, p->a_k_major,
      p->b_k_major, p->lda, p->ldb, p->ldc, p->ldd, p->batch_stride_a, p->batch_stride_b,
      p->batch_stride_c, p->batch_stride_d, (double)p->alpha, (double)p->beta, p->d_no_tma,
      p->a_align, p->b_align, (int)p->act, (double)p->act_lo, (double)p->act_hi, (int)p->bias,
      (int)p->bias_type, p->rowscale, p->colscale, p->residual, (int)p->group, (int)p->c_type,
      p->amax, p->aux, (int)p->aux_type, p->ldaux, p->batch_stride_aux, (int)p->fp8_accum,
      p->fp8_promote, (int)p->scale, p->scale_lda, p->scale_ldb, repack_a, repack_b, c->tile_m,
      c->tile_n, c->tile_k, c->cluster_m, c->cluster_n, c->stages, (int)c->schedule, (int)c->raster,
      c->raster_group, c->epi_n, (int)c->mainloop, c->splits, c->split_atomic, c->split_scatter,
      c->promote_overlap, c->stream_k, c->block_scales, c->gelu, c->epi_direct, c->swap_ab);
  if (n < 0 || (size_t)n >= sizeof out->text) return false;
  out->key =
      hg_cache_key_make(SEED_TEXT, SEED_KEY, out->text, (size_t)n,
                        "hopgen-gemm-kernel|format=%d|build=%s|backend=%d|", FORMAT, id, (int)be);
  return out->key.usable;
}

/* ---------------------------------------------------------------- entries */

/* payload: two sizes, the kernel struct (texts detached), the PTX, the MLIR */
typedef struct head {
  uint64_t ptx_len, mlir_len;
} head_t;

static void entry_path(const hg_cache_dir_t *d, const hg_gemm_spec_key_t *k, char *buf,
                       size_t size) {
  hg_cache_entry_path(d, "gemm-", &k->key, ".kernel", buf, size);
}

bool hg_gemm_spec_load(const hg_gemm_spec_key_t *k, hg_gemm_kernel_t *out) {
  hg_cache_dir_t d;
  hg_cache_dir_from_env(&d);
  if (!d.enabled) return false;
  char path[HG_CACHE_DIR_BYTES + 128];
  entry_path(&d, k, path, sizeof path);
  char *payload = NULL;
  size_t size = 0;
  if (hg_cache_entry_load(&d, path, &format, &k->key, &payload, &size, NULL, 0) != HG_CACHE_HIT)
    return false;
  head_t h;
  bool ok = size >= sizeof h + sizeof *out;
  if (ok) {
    memcpy(&h, payload, sizeof h);
    ok = h.ptx_len > 0 && h.ptx_len < MAX_ENTRY && h.mlir_len < MAX_ENTRY &&
         size == sizeof h + sizeof *out + h.ptx_len + h.mlir_len;
  }
  hg_text_t ptx = {0}, mlir = {0};
  if (ok) {
    ptx.data = malloc(h.ptx_len + 1);
    mlir.data = h.mlir_len ? malloc(h.mlir_len + 1) : NULL;
    ok = ptx.data && (!h.mlir_len || mlir.data);
  }
  if (ok) {
    const char *at = payload + sizeof h;
    memcpy(out, at, sizeof *out);
    at += sizeof *out;
    memcpy(ptx.data, at, h.ptx_len);
    ptx.data[h.ptx_len] = '\0';
    ptx.len = h.ptx_len;
    if (h.mlir_len) {
      memcpy(mlir.data, at + h.ptx_len, h.mlir_len);
      mlir.data[h.mlir_len] = '\0';
      mlir.len = h.mlir_len;
    }
    out->k.ptx = ptx;
    out->k.mlir = mlir;
    out->from_cache = true;
  } else {
    free(ptx.data);
    free(mlir.data);
  }
  free(payload);
  return ok;
}

void hg_gemm_spec_store(const hg_gemm_spec_key_t *k, const hg_gemm_kernel_t *kernel) {
  hg_cache_dir_t d;
  hg_cache_dir_from_env(&d);
  if (!d.enabled || !kernel->k.ptx.data) return;
  const head_t h = {kernel->k.ptx.len, kernel->k.mlir.data ? kernel->k.mlir.len : 0};
  const size_t size = sizeof h + sizeof *kernel + h.ptx_len + h.mlir_len;
  char *payload = calloc(1, size);
  if (!payload) return; /* a cache that cannot store only costs the next create its time */
  hg_gemm_kernel_t copy = *kernel;
  memset(&copy.k.ptx, 0, sizeof copy.k.ptx);
  memset(&copy.k.mlir, 0, sizeof copy.k.mlir);
  copy.from_cache = false;
  char *at = payload;
  memcpy(at, &h, sizeof h);
  memcpy(at += sizeof h, &copy, sizeof copy);
  memcpy(at += sizeof copy, kernel->k.ptx.data, h.ptx_len);
  if (h.mlir_len) memcpy(at + h.ptx_len, kernel->k.mlir.data, h.mlir_len);
  char path[HG_CACHE_DIR_BYTES + 128];
  entry_path(&d, k, path, sizeof path);
  /* A failed write leaves no entry behind (hg_cache_entry_store): nothing to report. */
  (void)hg_cache_entry_store(&d, path, &format, &k->key, payload, size);
  free(payload);
  /* Every build of the library keys its own entries: bound what older builds leave. */
  (void)hg_cache_prune(d.dir, "gemm-", ".kernel", (uint64_t)HG_GEMM_CACHE_MAX_MB << 20,
                       HG_GEMM_CACHE_MAX_FILES);
}
