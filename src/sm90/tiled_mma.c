/* TiledMma: one wgmma atom repeated over warpgroups and over a CTA tile (CuTe's
 * make_tiled_mma with warpgroups laid out along M first, then N). */
#include <inttypes.h>

#include "sm90_internal.h"

/* The widest swizzle whose rows tile `bytes` (the contiguous extent of the tile). */
static hg_swizzle_mode_t widest_swizzle(int bytes) {
  if (bytes % 128 == 0) return HG_SWIZZLE_128B;
  if (bytes % 64 == 0) return HG_SWIZZLE_64B;
  if (bytes % 32 == 0) return HG_SWIZZLE_32B;
  return HG_SWIZZLE_NONE;
}

static hg_swizzle_mode_t auto_swizzle(hg_dtype_t t, hg_major_t major, int mn, int atom_mn, int k) {
  const int e = hg_dtype_bytes(t);
  /* K-major rows run along K; MN-major rows along MN, and one instruction's rows must be
   * whole swizzle rows too. */
  if (major == HG_MAJOR_K) return widest_swizzle(k * e);
  const hg_swizzle_mode_t a = widest_swizzle(mn * e), b = widest_swizzle(atom_mn * e);
  return hg_swizzle_mode_bytes(a) < hg_swizzle_mode_bytes(b) ? a : b;
}

hg_status_t hg_tiled_mma_make(const hg_tiled_mma_spec_t *spec, hg_tiled_mma_t *out) {
  hg_tiled_mma_t r;
  const int wg_m = spec->wg_m > 0 ? spec->wg_m : 1;
  const int wg_n = spec->wg_n > 0 ? spec->wg_n : 1;
  if (wg_m * wg_n > 8)
    return hg_error(HG_ERR_INVALID,
                    "%d x %d warpgroups is %d threads; a CTA has at most 1024 (8 warpgroups)", wg_m,
                    wg_n, 128 * wg_m * wg_n);
  if (spec->tile_m <= 0 || spec->tile_n <= 0 || spec->tile_k <= 0)
    return hg_error(HG_ERR_INVALID, "the tile %dx%dx%d has an empty mode", spec->tile_m,
                    spec->tile_n, spec->tile_k);
  if (spec->tile_m % (64 * wg_m) != 0)
    return hg_error(HG_ERR_INVALID,
                    "tile M = %d is not a multiple of 64 rows per wgmma x %d warpgroup(s) along M "
                    "= %d",
                    spec->tile_m, wg_m, 64 * wg_m);
  if (spec->tile_n % wg_n != 0)
    return hg_error(HG_ERR_INVALID, "tile N = %d does not split over %d warpgroups along N",
                    spec->tile_n, wg_n);
  const int atom_n = spec->atom_n > 0 ? spec->atom_n : spec->tile_n / wg_n;
  HG_TRY(hg_wgmma_atom_make(spec->a, spec->b, spec->acc, atom_n, spec->a_major, spec->b_major,
                            spec->a_regs, &r.atom));
  if (spec->tile_n % (wg_n * atom_n) != 0)
    return hg_error(HG_ERR_INVALID,
                    "tile N = %d is not a multiple of N = %d per wgmma x %d warpgroup(s) along N",
                    spec->tile_n, atom_n, wg_n);
  if (spec->tile_k % r.atom.k != 0)
    return hg_error(HG_ERR_INVALID, "tile K = %d is not a multiple of the %s wgmma's K = %d",
                    spec->tile_k, hg_dtype_name(spec->a), r.atom.k);
  r.tile_m = spec->tile_m;
  r.tile_n = spec->tile_n;
  r.tile_k = spec->tile_k;
  r.wg_m = wg_m;
  r.wg_n = wg_n;
  r.warpgroups = wg_m * wg_n;
  r.threads = 128 * r.warpgroups;
  r.atoms_m = spec->tile_m / (64 * wg_m);
  r.atoms_n = spec->tile_n / (atom_n * wg_n);
  r.atoms_k = spec->tile_k / r.atom.k;

  const hg_swizzle_mode_t a_sw =
      spec->auto_swizzle ? auto_swizzle(spec->a, spec->a_major, spec->tile_m, 64, spec->tile_k)
                         : spec->a_swizzle;
  const hg_swizzle_mode_t b_sw =
      spec->auto_swizzle ? auto_swizzle(spec->b, spec->b_major, spec->tile_n, atom_n, spec->tile_k)
                         : spec->b_swizzle;
  HG_TRY(hg_status_wrap(
      hg_gmma_operand_make(spec->a, spec->a_major, a_sw, spec->tile_m, spec->tile_k, 64, &r.a_op),
      "operand A: "));
  HG_TRY(hg_status_wrap(hg_gmma_operand_make(spec->b, spec->b_major, b_sw, spec->tile_n,
                                             spec->tile_k, atom_n, &r.b_op),
                        "operand B: "));
  r.acc_values = r.atoms_m * r.atoms_n * r.atom.acc_values;
  const int acc_regs = r.atoms_m * r.atoms_n * r.atom.acc_regs;
  if (acc_regs > 240)
    return hg_error(HG_ERR_INVALID,
                    "each thread would hold its %d accumulator values in %d registers; with 255 "
                    "registers per thread at most 240 can be accumulators (use more warpgroups "
                    "or a smaller tile)",
                    r.acc_values, acc_regs);

  const int64_t tm = spec->tile_m;
  /* Threads (q, g, w, wm, wn) and values (column + 1, row + 8, 8-column block, M atom,
   * N atom), index m + tile_m * n. */
  const int64_t tsh[5] = {4, 8, 4, wg_m, wg_n};
  const int64_t tst[5] = {2 * tm, 1, 16, 64 * r.atoms_m, tm * atom_n * r.atoms_n};
  const int64_t vsh[5] = {2, 2, atom_n / 8, r.atoms_m, r.atoms_n};
  const int64_t vst[5] = {tm, 8, 8 * tm, 64, tm * atom_n};
  HG_TRY(hg_sm90_layout2(5, tsh, tst, 5, vsh, vst, &r.acc_tv));

  /* Register A, index m + tile_m * k: warpgroups along N share the same rows (stride 0). */
  const int64_t vpr = 4 / hg_dtype_bytes(spec->a), k = r.atom.k;
  const int64_t ash[5] = {4, 8, 4, wg_m, wg_n};
  const int64_t ast[5] = {vpr * tm, 1, 16, 64 * r.atoms_m, 0};
  const int64_t avsh[5] = {vpr, 2, 2, r.atoms_m, r.atoms_k};
  const int64_t avst[5] = {tm, 8, (k / 2) * tm, 64, k * tm};
  HG_TRY(hg_sm90_layout2(5, ash, ast, 5, avsh, avst, &r.a_tv));
  *out = r;
  return hg_ok();
}

hg_status_t hg_tiled_mma_desc(const hg_tiled_mma_t *tm, int operand, uint32_t smem_base, int wg,
                              int mn_atom, int kblock, uint64_t *out) {
  if (wg < 0 || wg >= tm->warpgroups)
    return hg_error(HG_ERR_INVALID, "warpgroup %d is outside 0..%d", wg, tm->warpgroups - 1);
  const int wm = wg % tm->wg_m, wn = wg / tm->wg_m;
  if (operand == 0) {
    if (mn_atom < 0 || mn_atom >= tm->atoms_m)
      return hg_error(HG_ERR_INVALID, "M atom %d is outside the warpgroup's %d", mn_atom,
                      tm->atoms_m);
    return hg_gmma_operand_desc(&tm->a_op, smem_base, wm * tm->atoms_m + mn_atom, kblock, out);
  }
  if (operand == 1) {
    if (mn_atom < 0 || mn_atom >= tm->atoms_n)
      return hg_error(HG_ERR_INVALID, "N atom %d is outside the warpgroup's %d", mn_atom,
                      tm->atoms_n);
    return hg_gmma_operand_desc(&tm->b_op, smem_base, wn * tm->atoms_n + mn_atom, kblock, out);
  }
  return hg_error(HG_ERR_INVALID, "operand %d is neither 0 (A) nor 1 (B)", operand);
}

hg_status_t hg_tiled_mma_acc_coord(const hg_tiled_mma_t *tm, int thread, int value, int *m,
                                   int *n) {
  if (thread < 0 || thread >= tm->threads || value < 0 || value >= tm->acc_values)
    return hg_error(HG_ERR_INVALID,
                    "thread %d value %d is outside %d threads x %d accumulator values", thread,
                    value, tm->threads, tm->acc_values);
  hg_tuple_t crd;
  const int64_t cv[2] = {thread, value};
  HG_TRY(hg_tuple_ints(&crd, 2, cv));
  int64_t idx;
  HG_TRY(hg_crd2idx(&tm->acc_tv, &crd, &idx));
  *m = (int)(idx % tm->tile_m);
  *n = (int)(idx / tm->tile_m);
  return hg_ok();
}
