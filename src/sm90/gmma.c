/* GMMA shared-memory layouts and matrix descriptors.
 *
 * PTX ISA, "Asynchronous Warpgroup Level Matrix Shared Memory Layout": an operand in
 * shared memory is made of core matrices of 8 rows x 16 bytes. K-major operands have
 * rows along M/N and the 16 bytes along K; MN-major operands the other way round. The
 * canonical layouts, in elements of e bytes with T = 16/e and W = swizzle span / 16:
 *   K-major,  no swizzle: ((8,m),(T,2k)) : ((T,SBO),(1,LBO))
 *   K-major,  swizzled:   ((8,m),(T,2k)) : ((W T,SBO),(1,T))         (LBO unused)
 *   MN-major, no swizzle: ((T,1,m),(8,k)) : ((1,T,SBO),(T,LBO))
 *   MN-major, swizzled:   ((T,W,m),(8,k)) : ((1,T,LBO),(W T,SBO))
 * with the swizzle Swizzle<B,4,3> on byte addresses. Descriptors are derived here by
 * dividing a layout by the core matrix and reading strides; then every element is checked
 * against the CPU model of what wgmma reads (model.c), so a layout that is not canonical
 * is refused instead of producing a descriptor that reads the wrong bytes. */
#include <inttypes.h>
#include <stdio.h>

#include "sm90_internal.h"

int hg_gmma_layout_type(hg_swizzle_mode_t m) {
  switch (m) {
  case HG_SWIZZLE_128B:
    return 1;
  case HG_SWIZZLE_64B:
    return 2;
  case HG_SWIZZLE_32B:
    return 3;
  default:
    return 0;
  }
}

hg_swizzle_mode_t hg_gmma_swizzle_mode(int layout_type) {
  switch (layout_type) {
  case 1:
    return HG_SWIZZLE_128B;
  case 2:
    return HG_SWIZZLE_64B;
  case 3:
    return HG_SWIZZLE_32B;
  default:
    return HG_SWIZZLE_NONE;
  }
}

static hg_status_t check_field(const char *name, uint32_t bytes) {
  if (bytes % 16 != 0)
    return hg_error(HG_ERR_INVALID,
                    "descriptor %s = %" PRIu32 " B is not a multiple of 16 B (the field holds "
                    "bytes >> 4)",
                    name, bytes);
  if (bytes >= (1u << 18))
    return hg_error(HG_ERR_INVALID,
                    "descriptor %s = %" PRIu32 " B does not fit the 14-bit field (bytes >> 4 must "
                    "be below 2^14, i.e. below 256 KiB)",
                    name, bytes);
  return hg_ok();
}

hg_status_t hg_gmma_desc_encode(const hg_gmma_desc_fields_t *f, uint64_t *out) {
  HG_TRY(check_field("start address", f->start_address));
  HG_TRY(check_field("leading byte offset", f->lbo_bytes));
  HG_TRY(check_field("stride byte offset", f->sbo_bytes));
  if (f->base_offset < 0 || f->base_offset > 7)
    return hg_error(HG_ERR_INVALID, "descriptor base offset %d is outside 0..7", f->base_offset);
  if (f->layout_type < 0 || f->layout_type > 3)
    return hg_error(HG_ERR_INVALID, "descriptor layout type %d is outside 0..3", f->layout_type);
  /* PTX ISA "Matrix Descriptor Format". */
  *out = (uint64_t)(f->start_address >> 4) | (uint64_t)(f->lbo_bytes >> 4) << 16 |
         (uint64_t)(f->sbo_bytes >> 4) << 32 | (uint64_t)f->base_offset << 49 |
         (uint64_t)f->layout_type << 62;
  return hg_ok();
}

hg_gmma_desc_fields_t hg_gmma_desc_decode(uint64_t d) {
  hg_gmma_desc_fields_t f;
  f.start_address = (uint32_t)(d & 0x3fff) << 4;
  f.lbo_bytes = (uint32_t)(d >> 16 & 0x3fff) << 4;
  f.sbo_bytes = (uint32_t)(d >> 32 & 0x3fff) << 4;
  f.base_offset = (int)(d >> 49 & 7);
  f.layout_type = (int)(d >> 62 & 3);
  return f;
}

static hg_status_t check_elem(hg_dtype_t t, int *esize) {
  const int e = hg_dtype_bytes(t);
  if (e != 1 && e != 2 && e != 4)
    return hg_error(HG_ERR_INVALID,
                    "%s elements (%d B) have no GMMA layout: wgmma operands are 1, 2 or 4 bytes",
                    hg_dtype_name(t), e);
  *esize = e;
  return hg_ok();
}

static hg_status_t check_swizzle_mode(hg_swizzle_mode_t sw) {
  if ((int)sw < 0 || (int)sw > 3)
    return hg_error(HG_ERR_INVALID, "swizzle mode %d is not none, 32B, 64B or 128B", (int)sw);
  return hg_ok();
}

hg_status_t hg_gmma_layout_atom(hg_dtype_t t, hg_major_t major, hg_swizzle_mode_t sw,
                                hg_composed_t *out) {
  int e = 0;
  HG_TRY(check_elem(t, &e));
  HG_TRY(check_swizzle_mode(sw));
  const int span = sw == HG_SWIZZLE_NONE ? 16 : hg_swizzle_mode_bytes(sw);
  const int64_t row = span / e; /* elements in one row of the atom */
  hg_tuple_t shape, stride;
  if (major == HG_MAJOR_K) {
    const int64_t sh[2] = {8, row}, st[2] = {row, 1};
    HG_TRY(hg_tuple_ints(&shape, 2, sh));
    HG_TRY(hg_tuple_ints(&stride, 2, st));
  } else if (major == HG_MAJOR_MN) {
    const int64_t sh[2] = {row, 8}, st[2] = {1, row};
    HG_TRY(hg_tuple_ints(&shape, 2, sh));
    HG_TRY(hg_tuple_ints(&stride, 2, st));
  } else {
    return hg_error(HG_ERR_INVALID, "majorness %d is neither K nor MN", (int)major);
  }
  hg_composed_t c;
  HG_TRY(hg_make_layout(&shape, &stride, &c.layout));
  c.sw = hg_sm90_swizzle_for(sw, e);
  c.offset = 0;
  *out = c;
  return hg_ok();
}

/* Mode j of l, coalesced: its size and its one stride. A mode that does not coalesce to a
 * single stride is not evenly spaced, which no descriptor can express. */
static hg_status_t mode_stride(const hg_layout_t *l, int j, const char *what, int64_t *size,
                               int64_t *stride) {
  hg_layout_t mj, c;
  HG_TRY(hg_layout_mode(l, j, &mj));
  HG_TRY(hg_coalesce(&mj, &c));
  HG_TRY(hg_size(&c, size));
  if (*size == 1) {
    *stride = 0;
    return hg_ok();
  }
  int64_t sh[8], st[8];
  const int n = hg_tuple_leaf_values(&c.shape, sh, 8);
  hg_tuple_leaf_values(&c.stride, st, 8);
  if (n != 1) {
    char buf[256];
    hg_layout_print(&mj, buf, sizeof buf);
    return hg_error(HG_ERR_INVALID,
                    "%s are not evenly spaced (%s): a descriptor has one stride for them", what,
                    buf);
  }
  *stride = st[0];
  return hg_ok();
}

/* Mode (i, j) of a divided layout. */
static hg_status_t sub_mode(const hg_layout_t *div, int i, int j, const char *what, int64_t *size,
                            int64_t *stride) {
  hg_layout_t mi;
  HG_TRY(hg_layout_mode(div, i, &mi));
  return mode_stride(&mi, j, what, size, stride);
}

static hg_status_t divide2(const hg_layout_t *l, int64_t t0, int64_t t1, hg_layout_t *out) {
  hg_tiler_t tiler = {0};
  tiler.rank = 2;
  tiler.skip[0] = tiler.skip[1] = false;
  tiler.mode[0] = hg_layout_1d(t0, 1);
  tiler.mode[1] = hg_layout_1d(t1, 1);
  return hg_logical_divide(l, &tiler, out);
}

/* 16 B for an offset the instruction never uses (the convention CUTLASS also follows for the
 * LBO of swizzled K-major operands). */
#define UNUSED_OFFSET_BYTES 16u

/* What a descriptor and an operand plan both start from: the element's bytes e, wgmma's K for
 * the type, a majorness the type may have (only 16-bit operands MN-major), the swizzle mode and
 * the sizes of the layout's two modes (MN, K). what names the layout in the rank's sentence. */
static hg_status_t operand_shape(const hg_composed_t *layout, hg_dtype_t t, hg_major_t major,
                                 const char *what, int *e, int *kdim, hg_swizzle_mode_t *sw,
                                 int64_t *mn, int64_t *k) {
  HG_TRY(check_elem(t, e));
  *kdim = hg_wgmma_k(t);
  if (*kdim == 0)
    return hg_error(HG_ERR_INVALID, "%s is not a wgmma operand type", hg_dtype_name(t));
  if (major == HG_MAJOR_MN && *e != 2)
    return hg_error(HG_ERR_INVALID,
                    "an MN-major %s operand is not a legal wgmma operand: only 16-bit operands "
                    "may be MN-major (transposed)",
                    hg_dtype_name(t));
  if (major != HG_MAJOR_K && major != HG_MAJOR_MN)
    return hg_error(HG_ERR_INVALID, "majorness %d is neither K nor MN", (int)major);
  HG_TRY(hg_sm90_swizzle_of(layout->sw, *e, sw));
  const hg_layout_t *l = &layout->layout;
  if (hg_layout_rank(l) != 2)
    return hg_error(HG_ERR_INVALID, "%s has two modes (MN, K), not %d", what, hg_layout_rank(l));
  hg_layout_t m0, m1;
  HG_TRY(hg_layout_mode(l, 0, &m0));
  HG_TRY(hg_layout_mode(l, 1, &m1));
  HG_TRY(hg_size(&m0, mn));
  return hg_size(&m1, k);
}

hg_status_t hg_gmma_desc_make(const hg_composed_t *layout, hg_dtype_t t, hg_major_t major,
                              uint32_t smem_addr, hg_gmma_desc_fields_t *out) {
  int e = 0, kdim = 0;
  hg_swizzle_mode_t sw;
  int64_t mn, kx;
  HG_TRY(operand_shape(layout, t, major, "a wgmma operand layout", &e, &kdim, &sw, &mn, &kx));
  const hg_layout_t *l = &layout->layout;
  if (kx != kdim)
    return hg_error(HG_ERR_INVALID,
                    "the operand view has K = %" PRId64 " but one %s wgmma reads K = %d", kx,
                    hg_dtype_name(t), kdim);
  if (mn < 8 || mn > 256 || mn % 8 != 0)
    return hg_error(HG_ERR_INVALID,
                    "the operand view has %" PRId64 " rows; wgmma reads 64 (A) or N = 8..256 in "
                    "steps of 8 (B)",
                    mn);
  const int64_t T = 16 / e;                       /* elements per 16 bytes */
  const int64_t span = hg_swizzle_mode_bytes(sw); /* 0: no swizzle */
  const int64_t W = span ? span / 16 : 1;         /* 16-byte chunks per row */
  const char *mname = major == HG_MAJOR_K ? "K-major" : "MN-major";
  int64_t lbo = -1, sbo = -1;
  hg_layout_t div;
  int64_t sz, st;
  /* K-major: ((8, MN/8), (T, K/T)), rows of a core matrix, groups of 8 rows, elements of a
   * 16-byte chunk, chunks along K. MN-major: ((T, MN/T), (8, K/8)), elements of a 16-byte
   * chunk, chunks along MN, the 8 k-rows of a core matrix, groups of 8 k. Either way mode c
   * holds the 16-byte core-matrix rows and mode 1 - c their 8 rows and groups of 8. */
  const bool kmaj = major == HG_MAJOR_K;
  const int c = kmaj ? 1 : 0;
  if (kmaj && mn % 8 != 0)
    return hg_error(HG_ERR_INVALID, "a K-major operand needs rows in groups of 8");
  if (!kmaj && (mn * e) % 16 != 0)
    return hg_error(HG_ERR_INVALID, "an MN-major operand needs whole 16-byte chunks along MN");
  HG_TRY(divide2(l, kmaj ? 8 : T, kmaj ? T : 8, &div));
  HG_TRY(sub_mode(&div, c, 0,
                  kmaj ? "the elements of a 16-byte core-matrix row"
                       : "the elements of a 16-byte chunk along MN",
                  &sz, &st));
  if (st != 1)
    return hg_error(HG_ERR_INVALID,
                    "not a %s GMMA layout: %s is not contiguous (stride %" PRId64 "%s)", mname,
                    kmaj ? "K" : "MN", st,
                    kmaj ? " between k and k+1; a K-major operand needs 16-byte rows along K"
                         : " between neighbours along MN");
  HG_TRY(sub_mode(&div, 1 - c, 0,
                  kmaj ? "the 8 rows of a core matrix" : "the 8 k-rows of a core matrix", &sz,
                  &st));
  if (st != W * T)
    return hg_error(HG_ERR_INVALID,
                    "not a %s GMMA layout for a %s swizzle: %s of a core matrix are %" PRId64
                    " B apart, the layout needs %" PRId64 " B",
                    mname, hg_swizzle_mode_name(sw), kmaj ? "rows" : "k-rows", st * e, W * 16);
  HG_TRY(sub_mode(&div, 1 - c, 1, kmaj ? "groups of 8 rows" : "groups of 8 k", &sz, &st));
  const int64_t groups = sz > 1 ? st * e : -1;
  if (kmaj) {
    sbo = groups;
    HG_TRY(sub_mode(&div, 1, 1, "the 16-byte chunks along K", &sz, &st));
    if (span) {
      if (sz > 1 && st != T)
        return hg_error(HG_ERR_INVALID,
                        "not a %s GMMA layout for a %s swizzle: the 16-byte chunks along K are "
                        "%" PRId64 " B apart, they must be adjacent in the swizzled row",
                        mname, hg_swizzle_mode_name(sw), st * e);
    } else {
      lbo = sz > 1 ? st * e : -1;
    }
  } else {
    /* The chunks along MN are divided again by W: chunks within a swizzle row, then swizzle
     * atoms. */
    hg_layout_t d0, chunks, cdiv;
    HG_TRY(hg_layout_mode(&div, 0, &d0));
    HG_TRY(hg_layout_mode(&d0, 1, &chunks));
    int64_t nchunks;
    HG_TRY(hg_size(&chunks, &nchunks));
    if (nchunks % W != 0)
      return hg_error(HG_ERR_INVALID,
                      "not a %s GMMA layout for a %s swizzle: %" PRId64
                      " rows along MN are not whole %" PRId64 "-byte swizzle rows",
                      mname, hg_swizzle_mode_name(sw), mn, span);
    hg_tiler_t tw = {0};
    tw.rank = 0;
    tw.mode[0] = hg_layout_1d(W, 1);
    HG_TRY(hg_logical_divide(&chunks, &tw, &cdiv));
    HG_TRY(mode_stride(&cdiv, 0, "the 16-byte chunks of a swizzle row", &sz, &st));
    if (sz > 1 && st != T)
      return hg_error(HG_ERR_INVALID,
                      "not a %s GMMA layout for a %s swizzle: 16-byte chunks along MN are %" PRId64
                      " B apart, they must be adjacent in the swizzled row",
                      mname, hg_swizzle_mode_name(sw), st * e);
    HG_TRY(mode_stride(&cdiv, 1, "the swizzle atoms along MN", &sz, &st));
    const int64_t atoms = sz > 1 ? st * e : -1;
    if (span) {
      lbo = atoms;
      sbo = groups;
    } else {
      sbo = atoms;
      lbo = groups;
    }
  }
  const int64_t start = (int64_t)smem_addr + layout->offset * e;
  if (start < 0 || start % 16 != 0)
    return hg_error(HG_ERR_INVALID,
                    "the operand starts at shared-memory byte %" PRId64 ", not a multiple of 16 B",
                    start);
  if (span) {
    if (smem_addr % (uint32_t)(span * 8) != 0)
      return hg_error(HG_ERR_INVALID,
                      "a stage buffer with a %s swizzle must start at a multiple of %" PRId64
                      " B (the swizzle pattern; descriptors keep base offset 0), not 0x%" PRIx32,
                      hg_swizzle_mode_name(sw), span * 8, smem_addr);
    if ((start >> 7) & (W - 1))
      return hg_error(HG_ERR_INVALID,
                      "the operand starts at byte 0x%" PRIx64 ", inside a %s swizzle pattern row "
                      "group (address bits 7.. not 0): that needs a descriptor base offset, "
                      "which hopgen does not use",
                      (uint64_t)start, hg_swizzle_mode_name(sw));
  }
  hg_gmma_desc_fields_t f;
  f.start_address = (uint32_t)start;
  f.lbo_bytes = lbo < 0 ? UNUSED_OFFSET_BYTES : (uint32_t)lbo;
  f.sbo_bytes = sbo < 0 ? UNUSED_OFFSET_BYTES : (uint32_t)sbo;
  if (lbo > 0x7fffffff || sbo > 0x7fffffff || lbo == 0 || sbo == 0)
    return hg_error(HG_ERR_INVALID,
                    "not a %s GMMA layout: core matrices overlap or are too far apart (LBO %" PRId64
                    " B, SBO %" PRId64 " B)",
                    mname, lbo, sbo);
  f.base_offset = 0;
  f.layout_type = hg_gmma_layout_type(sw);
  uint64_t desc;
  HG_TRY(hg_status_wrap(hg_gmma_desc_encode(&f, &desc), "the %s operand's ", mname));

  /* Every element: where the layout puts it, and where a wgmma with this descriptor reads it
   * (the CPU model). Any difference means the layout is not canonical. */
  int64_t t0[256], t1[32], n0, n1;
  uint32_t addrs[256 * 32];
  HG_TRY(hg_sm90_mode_table(l, 0, t0, 256, &n0));
  HG_TRY(hg_sm90_mode_table(l, 1, t1, 32, &n1));
  HG_TRY(hg_sm90_wgmma_addrs(desc, t, major, (int)n0, addrs));
  for (int64_t i = 0; i < n0; i++)
    for (int64_t k = 0; k < n1; k++) {
      const int64_t want =
          (int64_t)smem_addr + e * hg_swizzle_apply(layout->sw, layout->offset + t0[i] + t1[k]);
      const uint32_t got = addrs[i * n1 + k];
      if ((int64_t)got != want)
        return hg_error(HG_ERR_INVALID,
                        "not a canonical %s GMMA layout: element (%" PRId64 ", %" PRId64
                        ") is at shared-memory byte %" PRId64
                        " but a descriptor (LBO %u B, SBO %u B, %s) reads byte %u",
                        mname, i, k, want, f.lbo_bytes, f.sbo_bytes, hg_swizzle_mode_name(sw), got);
    }
  *out = f;
  return hg_ok();
}

hg_status_t hg_gmma_operand_from_layout(const hg_composed_t *layout, hg_dtype_t t, hg_major_t major,
                                        int atom_mn, hg_gmma_operand_t *out) {
  int e = 0, kdim = 0;
  hg_swizzle_mode_t sw;
  int64_t mn, k;
  HG_TRY(operand_shape(layout, t, major, "a stage layout", &e, &kdim, &sw, &mn, &k));
  const hg_layout_t *l = &layout->layout;
  if (atom_mn < 8 || atom_mn > 256 || atom_mn % 8 != 0)
    return hg_error(HG_ERR_INVALID,
                    "an instruction reads %d rows; wgmma reads 64 (A) or N = 8..256 in steps of "
                    "8 (B)",
                    atom_mn);
  if (mn > 256)
    return hg_error(HG_ERR_INVALID,
                    "a wgmma operand tile has at most 256 rows (M or N), not %" PRId64, mn);
  if (mn % atom_mn != 0)
    return hg_error(HG_ERR_INVALID,
                    "the tile's %" PRId64 " rows are not a multiple of the %d rows one wgmma "
                    "reads",
                    mn, atom_mn);
  if (k % kdim != 0)
    return hg_error(HG_ERR_INVALID,
                    "the tile's K = %" PRId64 " is not a multiple of the %s wgmma's K = %d", k,
                    hg_dtype_name(t), kdim);
  if (mn / atom_mn > HG_GMMA_MAX_BLOCKS || k / kdim > HG_GMMA_MAX_BLOCKS)
    return hg_error(HG_ERR_CAPACITY,
                    "the tile holds %" PRId64 " x %" PRId64 " wgmma operands, over %d per mode",
                    mn / atom_mn, k / kdim, HG_GMMA_MAX_BLOCKS);
  hg_gmma_operand_t r;
  r.dtype = t;
  r.major = major;
  r.swizzle = sw;
  r.mn = (int)mn;
  r.k = (int)k;
  r.atom_mn = atom_mn;
  r.atom_k = kdim;
  r.layout = *layout;
  r.mn_atoms = (int)(mn / atom_mn);
  r.kblocks = (int)(k / kdim);
  const uint32_t span = (uint32_t)hg_swizzle_mode_bytes(sw);
  r.align_bytes = span ? span * 8 : 128;

  hg_tiler_t tiler = {0};
  tiler.rank = 2;
  tiler.skip[0] = tiler.skip[1] = false;
  tiler.mode[0] = hg_layout_1d(atom_mn, 1);
  tiler.mode[1] = hg_layout_1d(kdim, 1);
  uint32_t start0 = 0;
  for (int i = 0; i < r.mn_atoms; i++)
    for (int kb = 0; kb < r.kblocks; kb++) {
      hg_tuple_t crd;
      const int64_t cv[2] = {i, kb};
      HG_TRY(hg_tuple_ints(&crd, 2, cv));
      hg_composed_t sub;
      int64_t off;
      HG_TRY(hg_local_tile(l, &tiler, &crd, &sub.layout, &off));
      sub.sw = layout->sw;
      sub.offset = layout->offset + off;
      hg_gmma_desc_fields_t f;
      HG_TRY(hg_status_wrap(hg_gmma_desc_make(&sub, t, major, 0, &f),
                            "MN atom %d, k-block %d of the %" PRId64 "x%" PRId64 " %s tile: ", i,
                            kb, mn, k, hg_major_name(major)));
      if (i == 0 && kb == 0) {
        r.desc = f;
        start0 = f.start_address;
      } else if (f.lbo_bytes != r.desc.lbo_bytes || f.sbo_bytes != r.desc.sbo_bytes) {
        return hg_error(HG_ERR_INVALID,
                        "MN atom %d, k-block %d needs LBO %u B and SBO %u B but the first needs "
                        "%u B and %u B: one descriptor shape must serve every instruction",
                        i, kb, f.lbo_bytes, f.sbo_bytes, r.desc.lbo_bytes, r.desc.sbo_bytes);
      }
      const uint32_t adv = f.start_address - start0;
      if (kb == 0) r.mn_atom_offset_bytes[i] = adv;
      if (i == 0) r.kblock_offset_bytes[kb] = adv;
      if (adv != r.mn_atom_offset_bytes[i] + r.kblock_offset_bytes[kb])
        return hg_error(HG_ERR_INVALID,
                        "MN atom %d, k-block %d starts %u B into the buffer, not at the sum of "
                        "its MN-atom and k-block advances",
                        i, kb, adv);
    }
  r.mn_atom_stride_bytes = r.mn_atoms > 1 ? r.mn_atom_offset_bytes[1] : 0;
  for (int i = 2; i < r.mn_atoms; i++)
    if (r.mn_atom_offset_bytes[i] != (uint32_t)i * r.mn_atom_stride_bytes)
      r.mn_atom_stride_bytes = 0;
  r.kblock_stride_bytes = r.kblocks > 1 ? r.kblock_offset_bytes[1] : 0;
  for (int kb = 2; kb < r.kblocks; kb++)
    if (r.kblock_offset_bytes[kb] != (uint32_t)kb * r.kblock_stride_bytes)
      r.kblock_stride_bytes = 0;
  /* The footprint: the largest swizzled offset any element reaches. */
  int64_t t0[256], t1[HG_GMMA_MAX_BLOCKS * 32], n0, n1, top = 0;
  HG_TRY(hg_sm90_mode_table(l, 0, t0, 256, &n0));
  HG_TRY(hg_sm90_mode_table(l, 1, t1, HG_GMMA_MAX_BLOCKS * 32, &n1));
  for (int64_t i = 0; i < n0; i++)
    for (int64_t kk = 0; kk < n1; kk++) {
      const int64_t o = hg_swizzle_apply(layout->sw, layout->offset + t0[i] + t1[kk]);
      if (o + 1 > top) top = o + 1;
    }
  r.stage_bytes = (uint32_t)(top * e);
  *out = r;
  return hg_ok();
}

hg_status_t hg_gmma_operand_make(hg_dtype_t t, hg_major_t major, hg_swizzle_mode_t sw, int mn,
                                 int k, int atom_mn, hg_gmma_operand_t *out) {
  int e = 0;
  HG_TRY(check_elem(t, &e));
  if (hg_wgmma_k(t) == 0)
    return hg_error(HG_ERR_INVALID, "%s is not a wgmma operand type", hg_dtype_name(t));
  if (major == HG_MAJOR_MN && e != 2)
    return hg_error(HG_ERR_INVALID,
                    "%s operands cannot be MN-major: wgmma transposes only 16-bit operands, so a "
                    "%d-bit operand must be K-major",
                    hg_dtype_name(t), 8 * e);
  hg_composed_t atom, tile;
  HG_TRY(hg_gmma_layout_atom(t, major, sw, &atom));
  hg_tuple_t shape;
  const int64_t sv[2] = {mn, k};
  HG_TRY(hg_tuple_ints(&shape, 2, sv));
  const int span = sw == HG_SWIZZLE_NONE ? 16 : hg_swizzle_mode_bytes(sw);
  if (major == HG_MAJOR_K && (k * e) % span != 0)
    return hg_error(HG_ERR_INVALID,
                    "a K-major %s tile with K = %d (%d B) is not a whole number of %d-byte %s "
                    "swizzle rows",
                    hg_dtype_name(t), k, k * e, span, hg_swizzle_mode_name(sw));
  if (major == HG_MAJOR_MN && (mn * e) % span != 0)
    return hg_error(HG_ERR_INVALID,
                    "an MN-major %s tile with %d rows (%d B) is not a whole number of %d-byte %s "
                    "swizzle rows",
                    hg_dtype_name(t), mn, mn * e, span, hg_swizzle_mode_name(sw));
  /* Repeat along the strided mode first: K-major (MN, K) rows continue along MN, MN-major
   * rows along K; then a TMA box spans the whole strided extent. */
  hg_tuple_t order;
  const int64_t ov[2] = {major == HG_MAJOR_K ? 0 : 1, major == HG_MAJOR_K ? 1 : 0};
  HG_TRY(hg_tuple_ints(&order, 2, ov));
  HG_TRY(hg_status_wrap(hg_tile_to_shape_ordered(&atom, &shape, &order, &tile),
                        "the %dx%d %s %s tile: ", mn, k, hg_dtype_name(t), hg_major_name(major)));
  return hg_gmma_operand_from_layout(&tile, t, major, atom_mn, out);
}

hg_status_t hg_gmma_operand_desc(const hg_gmma_operand_t *op, uint32_t smem_base, int mn_atom,
                                 int kblock, uint64_t *out) {
  if (smem_base % op->align_bytes != 0)
    return hg_error(HG_ERR_INVALID,
                    "stage buffer address 0x%" PRIx32 " is not a multiple of %u B (%s swizzle)",
                    smem_base, op->align_bytes, hg_swizzle_mode_name(op->swizzle));
  if (mn_atom < 0 || mn_atom >= op->mn_atoms || kblock < 0 || kblock >= op->kblocks)
    return hg_error(HG_ERR_INVALID,
                    "instruction (MN atom %d, k-block %d) is outside the tile's %d x %d", mn_atom,
                    kblock, op->mn_atoms, op->kblocks);
  hg_gmma_desc_fields_t f = op->desc;
  f.start_address = smem_base + op->desc.start_address + op->mn_atom_offset_bytes[mn_atom] +
                    op->kblock_offset_bytes[kblock];
  return hg_gmma_desc_encode(&f, out);
}
