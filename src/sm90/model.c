/* CPU reference model of what TMA and wgmma do with shared memory.
 *
 * Written from the hardware facts (PTX ISA, CUDA driver API, and what an H200 was seen to
 * do: docs/ARCHITECTURE.md "Hopper facts", docs/hardware-notes.md) and deliberately
 * NOT from the planners in this folder: the tests chain planner output through this model,
 * so a planner bug shows up as a mismatch instead of being reproduced here. Keep it dumb:
 * loops over elements and byte arithmetic, no layout algebra. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "sm90_internal.h"

uint32_t hg_model_swizzle_addr(hg_swizzle_mode_t m, uint32_t addr) {
  /* TMA and wgmma XOR the 16-byte chunk index (address bits 4..) with address bits 7..:
   * one bit for 32B, two for 64B, three for 128B (seen on an H200; PTX ISA "Shared Memory
   * Matrix Layout" draws the same patterns). */
  uint32_t bits;
  switch (m) {
  case HG_SWIZZLE_32B:
    bits = 1;
    break;
  case HG_SWIZZLE_64B:
    bits = 2;
    break;
  case HG_SWIZZLE_128B:
    bits = 3;
    break;
  default:
    return addr;
  }
  const uint32_t mask = (1u << bits) - 1u;
  return addr ^ (((addr >> 7) & mask) << 4);
}

/* ---------------------------------------------------------------- TMA */

/* The shape of one box in shared memory, shared by loads and stores. */
typedef struct box_geom {
  int esize, rank;
  uint32_t pitch; /* bytes per box row: inner box bytes, padded up to the swizzle span */
  uint32_t rows;  /* product of the outer box dimensions */
  uint64_t elems;
} box_geom_t;

/* tma: the box is moved by a TMA instruction, so its coordinates obey the hardware's rules
 * (false: element by element, as a kernel's fallback writes it, where any int32 goes). */
static hg_status_t check_box(const hg_tensormap_params_t *p, size_t gmem_bytes,
                             const int32_t *coords, size_t smem_bytes, uint32_t smem_addr,
                             const char *what, bool tma, box_geom_t *g) {
  hg_status_t s = hg_tensormap_validate(p, 0);
  if (!hg_is_ok(&s)) return hg_status_wrap(s, "%s: ", what);
  for (int d = 0; d < p->rank; d++)
    if (p->element_strides[d] != 1)
      return hg_error(HG_ERR_UNSUPPORTED,
                      "%s: elementStrides[%d] = %u: the model covers element strides of 1 only",
                      what, d, p->element_strides[d]);
  g->esize = hg_dtype_bytes(p->dtype);
  g->rank = p->rank;
  /* Seen on an H200: an innermost coordinate whose byte offset is not a multiple of 16
   * raises cudaErrorIllegalInstruction (38 of 38 cases) and kills the context. */
  const int64_t inner_bytes = (int64_t)coords[0] * g->esize;
  if (tma && inner_bytes % 16 != 0)
    return hg_error(HG_ERR_INVALID,
                    "%s: the innermost coordinate %" PRId32 " is %" PRId64
                    " B into the row, not a multiple of 16 B: the GPU raises an illegal "
                    "instruction",
                    what, coords[0], inner_bytes);
  /* PTX ISA cp.async.bulk.tensor: the shared-memory address must be 128-byte aligned. */
  if (smem_addr % 128 != 0)
    return hg_error(HG_ERR_INVALID,
                    "%s: shared-memory address 0x%" PRIx32 " is not 128-byte aligned", what,
                    smem_addr);
  const uint32_t span = (uint32_t)hg_swizzle_mode_bytes(p->swizzle);
  /* The swizzle pattern repeats every 8 rows of the span (256, 512, 1024 B). Boxes were seen
   * on hardware only at pattern-aligned addresses; elsewhere "XOR with address bits" and
   * "XOR with the box's own row index" would disagree, so the model does not guess. */
  if (span && smem_addr % (span * 8) != 0)
    return hg_error(HG_ERR_UNSUPPORTED,
                    "%s: shared-memory address 0x%" PRIx32 " is not aligned to the %" PRIu32
                    " B pattern of a %" PRIu32 " B swizzle; the model covers aligned boxes only",
                    what, smem_addr, span * 8, span);
  g->pitch = p->box_dim[0] * (uint32_t)g->esize;
  if (g->pitch < span) g->pitch = span; /* seen on an H200: rows padded to the span */
  g->rows = 1;
  for (int d = 1; d < p->rank; d++) g->rows *= p->box_dim[d];
  g->elems = (uint64_t)p->box_dim[0] * g->rows;
  const uint64_t foot = (uint64_t)g->pitch * g->rows;
  if ((uint64_t)smem_addr + foot > smem_bytes)
    return hg_error(HG_ERR_INVALID,
                    "%s: the box occupies %" PRIu64 " B of shared memory from 0x%" PRIx32
                    ", past the %zu B given",
                    what, foot, smem_addr, smem_bytes);
  /* The whole tensor must lie in the global buffer the caller gave (a model safety net,
   * not a hardware rule). */
  uint64_t last = (p->global_dim[0] - 1) * (uint64_t)g->esize + (uint64_t)g->esize;
  for (int d = 1; d < p->rank; d++) last += (p->global_dim[d] - 1) * p->global_stride_bytes[d - 1];
  if (last > gmem_bytes)
    return hg_error(HG_ERR_INVALID,
                    "%s: the tensor spans %" PRIu64 " B of global memory but %zu B were given",
                    what, last, gmem_bytes);
  return hg_ok();
}

/* Walk the box: element i (dimension 0 fastest) -> in-bounds flag, global byte offset
 * and shared-memory byte address. */
static void box_element(const hg_tensormap_params_t *p, const box_geom_t *g, const int32_t *coords,
                        uint32_t smem_addr, uint64_t i, bool *inb, uint64_t *goff,
                        uint32_t *saddr) {
  int64_t idx[HG_TMA_MAX_RANK];
  uint64_t rest = i;
  for (int d = 0; d < g->rank; d++) {
    idx[d] = (int64_t)(rest % p->box_dim[d]);
    rest /= p->box_dim[d];
  }
  uint64_t row = 0, mul = 1;
  for (int d = 1; d < g->rank; d++) {
    row += (uint64_t)idx[d] * mul;
    mul *= p->box_dim[d];
  }
  *saddr = hg_model_swizzle_addr(p->swizzle, smem_addr + (uint32_t)(row * g->pitch) +
                                                 (uint32_t)(idx[0] * g->esize));
  *inb = true;
  uint64_t off = 0;
  for (int d = 0; d < g->rank; d++) {
    const int64_t c = (int64_t)coords[d] + idx[d];
    if (c < 0 || (uint64_t)c >= p->global_dim[d]) {
      *inb = false;
      break;
    }
    off += d == 0 ? (uint64_t)c * (uint64_t)g->esize : (uint64_t)c * p->global_stride_bytes[d - 1];
  }
  *goff = off;
}

hg_status_t hg_model_tma_load(const hg_tensormap_params_t *p, const void *gmem, size_t gmem_bytes,
                              const int32_t *coords, uint8_t *smem, size_t smem_bytes, uint32_t dst,
                              uint32_t *tx_bytes) {
  box_geom_t g;
  HG_TRY(check_box(p, gmem_bytes, coords, smem_bytes, dst, "TMA load", true, &g));
  const uint8_t *src = gmem;
  /* Seen on an H200: NaN fill writes 0x7FF7 in every 16 bits (f16 NaN 0x7FF7, f32
   * 0x7FF77FF7); zero fill writes zeros. */
  static const uint8_t nan_bytes[8] = {0xf7, 0x7f, 0xf7, 0x7f, 0xf7, 0x7f, 0xf7, 0x7f};
  for (uint64_t i = 0; i < g.elems; i++) {
    bool inb;
    uint64_t goff;
    uint32_t saddr;
    box_element(p, &g, coords, dst, i, &inb, &goff, &saddr);
    if (inb)
      memcpy(smem + saddr, src + goff, (size_t)g.esize);
    else if (p->oob_nan)
      memcpy(smem + saddr, nan_bytes, (size_t)g.esize);
    else
      memset(smem + saddr, 0, (size_t)g.esize);
  }
  /* The transaction count receives the whole box, out-of-bounds elements included. */
  if (tx_bytes) *tx_bytes = (uint32_t)(g.elems * (uint64_t)g.esize);
  return hg_ok();
}

hg_status_t hg_model_tma_load_multicast(const hg_tensormap_params_t *p, const void *gmem,
                                        size_t gmem_bytes, const int32_t *coords,
                                        uint8_t *const *cta_smem, int cluster, size_t smem_bytes,
                                        uint32_t dst, uint16_t mask, uint32_t *tx_bytes) {
  if (cluster < 1 || cluster > 16)
    return hg_error(HG_ERR_INVALID, "TMA multicast: a cluster of %d CTAs is outside 1..16",
                    cluster);
  if (mask == 0) return hg_error(HG_ERR_INVALID, "TMA multicast: the CTA mask is empty");
  if (mask >> cluster)
    return hg_error(HG_ERR_INVALID,
                    "TMA multicast: mask 0x%04x names CTAs beyond the cluster of %d", mask,
                    cluster);
  for (int r = 0; r < cluster; r++) {
    if (!(mask >> r & 1)) continue;
    uint32_t tx = 0;
    HG_TRY(hg_model_tma_load(p, gmem, gmem_bytes, coords, cta_smem[r], smem_bytes, dst, &tx));
    if (tx_bytes) tx_bytes[r] += tx;
  }
  return hg_ok();
}

/* -------- element arithmetic for reductions */

static double decode_float(uint32_t bits, int ebits, int mbits) {
  const uint32_t sign = bits >> (ebits + mbits) & 1u;
  const uint32_t e = bits >> mbits & ((1u << ebits) - 1u);
  const uint32_t m = bits & ((1u << mbits) - 1u);
  const int bias = (1 << (ebits - 1)) - 1;
  double v;
  if (e == (1u << ebits) - 1u)
    v = m ? NAN : INFINITY;
  else if (e == 0)
    v = ldexp((double)m, 1 - bias - mbits);
  else
    v = ldexp((double)(m | (1u << mbits)), (int)e - bias - mbits);
  return sign ? -v : v;
}

/* Round x to nearest even in a binary format with ebits exponent and mbits fraction bits. */
static uint32_t encode_float(double x, int ebits, int mbits) {
  const int bias = (1 << (ebits - 1)) - 1;
  const uint32_t emax = (1u << ebits) - 1u;
  if (isnan(x)) return emax << mbits | 1u << (mbits - 1); /* canonical quiet NaN */
  const uint32_t sign = signbit(x) ? 1u << (ebits + mbits) : 0u;
  double a = fabs(x);
  if (isinf(a)) return sign | emax << mbits;
  int e2;
  frexp(a, &e2); /* a = f * 2^e2, f in [0.5, 1) */
  int exp = e2 - 1;
  if (a == 0) return sign;
  if (exp < 1 - bias) exp = 1 - bias;     /* subnormal: fixed quantum 2^(1-bias-mbits) */
  double q = rint(ldexp(a, mbits - exp)); /* exact scaling, round to nearest even */
  if (q >= ldexp(1.0, mbits + 1)) {       /* rounded up to the next binade */
    q = ldexp(q, -1);
    exp++;
  }
  uint32_t field;
  if (q < ldexp(1.0, mbits)) /* subnormal (or zero) */
    field = 0;
  else
    field = (uint32_t)(exp + bias);
  if (field >= emax) return sign | emax << mbits;
  const uint32_t frac = (uint32_t)q & ((1u << mbits) - 1u);
  return sign | field << mbits | frac;
}

static double elem_to_double(hg_dtype_t t, uint64_t bits) {
  switch (t) {
  case HG_F16:
    return decode_float((uint32_t)bits, 5, 10);
  case HG_BF16:
    return decode_float((uint32_t)bits, 8, 7);
  case HG_F32: {
    float f;
    uint32_t u = (uint32_t)bits;
    memcpy(&f, &u, 4);
    return f;
  }
  default:
    return 0;
  }
}

static uint64_t double_to_elem(hg_dtype_t t, double v) {
  switch (t) {
  case HG_F16:
    return encode_float(v, 5, 10);
  case HG_BF16:
    return encode_float(v, 8, 7);
  case HG_F32: {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
  }
  default:
    return 0;
  }
}

static uint64_t load_le(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static void store_le(uint8_t *p, int n, uint64_t v) {
  for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t reduce_elem(hg_tma_op_t op, hg_dtype_t t, uint64_t old, uint64_t src) {
  const int bits = hg_dtype_bits(t);
  const uint64_t mask = bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1;
  const bool fp = t == HG_F16 || t == HG_BF16 || t == HG_F32;
  const bool sgn = t == HG_S32;
  switch (op) {
  case HG_TMA_REDUCE_ADD:
    if (fp) return double_to_elem(t, elem_to_double(t, old) + elem_to_double(t, src));
    return (old + src) & mask;
  case HG_TMA_REDUCE_MIN:
  case HG_TMA_REDUCE_MAX: {
    const bool want_min = op == HG_TMA_REDUCE_MIN;
    if (fp) {
      const double a = elem_to_double(t, old), b = elem_to_double(t, src);
      if (isnan(a)) return src;
      if (isnan(b)) return old;
      return (want_min ? b < a : b > a) ? src : old;
    }
    if (sgn) {
      const int32_t a = (int32_t)(uint32_t)old, b = (int32_t)(uint32_t)src;
      return (want_min ? b < a : b > a) ? src : old;
    }
    return (want_min ? src < old : src > old) ? src : old;
  }
  case HG_TMA_REDUCE_INC: /* PTX atom.inc: old >= src ? 0 : old + 1 */
    return old >= src ? 0 : (old + 1) & mask;
  case HG_TMA_REDUCE_DEC: /* PTX atom.dec: (old == 0 || old > src) ? src : old - 1 */
    return (old == 0 || old > src) ? src : (old - 1) & mask;
  case HG_TMA_REDUCE_AND:
    return old & src;
  case HG_TMA_REDUCE_OR:
    return old | src;
  case HG_TMA_REDUCE_XOR:
    return old ^ src;
  default:
    return src;
  }
}

/* A store or reduction of one box, by TMA (tma) or element by element. */
static hg_status_t store_box(const hg_tensormap_params_t *p, hg_tma_op_t op, void *gmem,
                             size_t gmem_bytes, const int32_t *coords, const uint8_t *smem,
                             size_t smem_bytes, uint32_t src, bool tma) {
  const char *what = !tma ? "element-wise store" : op == HG_TMA_STORE ? "TMA store" : "TMA reduce";
  if (op != HG_TMA_STORE && !hg_tma_op_is_reduce(op))
    return hg_error(HG_ERR_INVALID, "%s model: operation '%s' is not a store or reduce", what,
                    hg_tma_op_name(op));
  if (op != HG_TMA_STORE) HG_TRY(hg_tma_reduce_check(op, p->dtype));
  box_geom_t g;
  HG_TRY(check_box(p, gmem_bytes, coords, smem_bytes, src, what, tma, &g));
  /* Seen on an H200 (driver 580.159.04): cp.async.bulk.tensor...global.shared::cta (a store)
   * with any negative coordinate, in the innermost dimension (even a multiple of 16 B) or in
   * an outer one, raises an illegal instruction and kills the context; boxes hanging past the
   * far edges are fine. cp.reduce.async.bulk.tensor goes through the same store path of the
   * TMA unit and is assumed to do the same (it could not be tested: the context was dead). */
  if (tma)
    for (int d = 0; d < p->rank; d++)
      if (coords[d] < 0)
        return hg_error(HG_ERR_INVALID,
                        "%s: coordinate %d (tensor-map dimension %d) is %" PRId32
                        ": the GPU raises an illegal instruction: TMA stores and reductions "
                        "take non-negative coordinates only (seen on an H200, driver "
                        "580.159.04; assumed for reductions)",
                        what, d, d, coords[d]);
  /* Seen on an H200 (driver 580.159.04): a TMA store clips the innermost dimension at a
   * 16-byte granularity. A box that runs past the end of dimension 0, whose extent is not a
   * multiple of 16 bytes, also writes the elements up to the next 16-byte boundary (f16
   * [100,100] with rows of 104: columns 100-103 were written; f32, whose 400-byte rows end
   * on a boundary, was exact). The model writes what the hardware writes; the element-wise
   * store (tma == false) is the ideal, and kernels send such boxes that way
   * (hg_tma_box_issuable). */
  hg_tensormap_params_t hw = *p;
  if (tma && g.esize < 16) {
    const uint64_t bytes = p->global_dim[0] * (uint64_t)g.esize;
    hw.global_dim[0] = (bytes + 15) / 16 * 16 / (uint64_t)g.esize;
  }
  uint8_t *dst = gmem;
  for (uint64_t i = 0; i < g.elems; i++) {
    bool inb;
    uint64_t goff;
    uint32_t saddr;
    box_element(&hw, &g, coords, src, i, &inb, &goff, &saddr);
    if (!inb) continue; /* out-of-bounds elements are not written */
    if (goff + (uint64_t)g.esize > gmem_bytes) continue; /* past the model's buffer */
    if (op == HG_TMA_STORE) {
      memcpy(dst + goff, smem + saddr, (size_t)g.esize);
    } else {
      const uint64_t old = load_le(dst + goff, g.esize);
      const uint64_t val = load_le(smem + saddr, g.esize);
      store_le(dst + goff, g.esize, reduce_elem(op, p->dtype, old, val));
    }
  }
  return hg_ok();
}

hg_status_t hg_model_tma_store(const hg_tensormap_params_t *p, hg_tma_op_t op, void *gmem,
                               size_t gmem_bytes, const int32_t *coords, const uint8_t *smem,
                               size_t smem_bytes, uint32_t src) {
  return store_box(p, op, gmem, gmem_bytes, coords, smem, smem_bytes, src, true);
}

hg_status_t hg_model_store_elementwise(const hg_tensormap_params_t *p, hg_tma_op_t op, void *gmem,
                                       size_t gmem_bytes, const int32_t *coords,
                                       const uint8_t *smem, size_t smem_bytes, uint32_t src) {
  return store_box(p, op, gmem, gmem_bytes, coords, smem, smem_bytes, src, false);
}

/* ---------------------------------------------------------------- wgmma */

/* The descriptor checks shared by the wgmma functions below. */
static hg_status_t wgmma_check(uint64_t desc, hg_dtype_t t, hg_major_t major,
                               hg_gmma_desc_fields_t *f, uint32_t *e, int *kdim, uint32_t *span) {
  *f = hg_gmma_desc_decode(desc);
  *kdim = hg_wgmma_k(t);
  if (*kdim == 0)
    return hg_error(HG_ERR_INVALID, "wgmma model: element type %s is not a wgmma operand type",
                    hg_dtype_name(t));
  *e = (uint32_t)hg_dtype_bytes(t);
  if (major == HG_MAJOR_MN && *e != 2)
    return hg_error(HG_ERR_INVALID,
                    "wgmma model: an MN-major operand must have 16-bit elements, not %s",
                    hg_dtype_name(t));
  if (major != HG_MAJOR_K && major != HG_MAJOR_MN)
    return hg_error(HG_ERR_INVALID, "wgmma model: majorness %d is neither K nor MN", (int)major);
  if (f->base_offset != 0)
    return hg_error(HG_ERR_UNSUPPORTED, "wgmma model: base offset %d is not modelled (only 0)",
                    f->base_offset);
  *span = (uint32_t)hg_swizzle_mode_bytes(hg_gmma_swizzle_mode(f->layout_type)); /* 0: none */
  /* With base offset 0 the pattern's row phase comes from address bits 7..; a start address
   * inside a pattern row group would need the base offset, which is not modelled. */
  if (*span && (f->start_address >> 7) & (*span / 16 - 1))
    return hg_error(HG_ERR_UNSUPPORTED,
                    "wgmma model: start address 0x%" PRIx32 " is not aligned to the %" PRIu32
                    " B swizzle pattern (that needs a base offset, which is not modelled)",
                    f->start_address, *span * 8);
  return hg_ok();
}

/* wgmma_check for a read of `rows` rows (1..256: M of the A operand, N of the B). */
static hg_status_t wgmma_check_rows(uint64_t desc, hg_dtype_t t, hg_major_t major, int rows,
                                    hg_gmma_desc_fields_t *f, uint32_t *e, int *kdim,
                                    uint32_t *span) {
  HG_TRY(wgmma_check(desc, t, major, f, e, kdim, span));
  if (rows < 1 || rows > 256)
    return hg_error(HG_ERR_INVALID, "wgmma model: %d rows is outside 1..256", rows);
  return hg_ok();
}

static uint32_t wgmma_addr(const hg_gmma_desc_fields_t *f, uint32_t e, uint32_t span,
                           hg_major_t major, int mn, int k) {
  uint32_t lin;
  if (major == HG_MAJOR_K) {
    /* Rows along MN, K contiguous: core matrices of 8 rows x 16 bytes. The operand's K is
     * 32 bytes: two core matrices side by side. Groups of 8 rows are SBO apart. With no
     * swizzle a core matrix is 128 contiguous bytes and the second is LBO away; with a
     * swizzle a row is the span and the K chunks sit side by side in it (LBO unused). */
    const uint32_t kb = (uint32_t)k * e, chunk = kb / 16, c = kb % 16;
    const uint32_t r = (uint32_t)mn % 8, grp = (uint32_t)mn / 8;
    if (span == 0)
      lin = f->start_address + grp * f->sbo_bytes + chunk * f->lbo_bytes + r * 16 + c;
    else
      lin = f->start_address + grp * f->sbo_bytes + r * span + chunk * 16 + c;
  } else {
    /* MN contiguous: a core matrix is 8 rows along K of 16 bytes along MN. With no swizzle,
     * core matrices adjacent in MN are SBO apart and those adjacent in K (8 k apart) LBO
     * apart; with a swizzle a row is the span (span/16 chunks of MN), swizzle atoms
     * adjacent in MN are LBO apart and groups of 8 k are SBO apart. */
    const uint32_t mb = (uint32_t)mn * e, chunk = mb / 16, c = mb % 16;
    const uint32_t r = (uint32_t)k % 8, kg = (uint32_t)k / 8;
    if (span == 0) {
      lin = f->start_address + chunk * f->sbo_bytes + kg * f->lbo_bytes + r * 16 + c;
    } else {
      const uint32_t w = span / 16;
      lin = f->start_address + (chunk / w) * f->lbo_bytes + kg * f->sbo_bytes + r * span +
            (chunk % w) * 16 + c;
    }
  }
  return hg_model_swizzle_addr(hg_gmma_swizzle_mode(f->layout_type), lin);
}

hg_status_t hg_model_wgmma_addr(uint64_t desc, hg_dtype_t t, hg_major_t major, int mn, int k,
                                uint32_t *addr) {
  hg_gmma_desc_fields_t f;
  uint32_t e = 0, span = 0;
  int kdim;
  HG_TRY(wgmma_check(desc, t, major, &f, &e, &kdim, &span));
  if (mn < 0 || mn >= 256 || k < 0 || k >= kdim)
    return hg_error(HG_ERR_INVALID,
                    "wgmma model: element (%d, %d) is outside the 256 x %d operand of a %s wgmma",
                    mn, k, kdim, hg_dtype_name(t));
  *addr = wgmma_addr(&f, e, span, major, mn, k);
  return hg_ok();
}

hg_status_t hg_sm90_wgmma_addrs(uint64_t desc, hg_dtype_t t, hg_major_t major, int rows,
                                uint32_t *addrs) {
  hg_gmma_desc_fields_t f;
  uint32_t e = 0, span = 0;
  int kdim;
  HG_TRY(wgmma_check_rows(desc, t, major, rows, &f, &e, &kdim, &span));
  for (int mn = 0; mn < rows; mn++)
    for (int k = 0; k < kdim; k++) addrs[mn * kdim + k] = wgmma_addr(&f, e, span, major, mn, k);
  return hg_ok();
}

hg_status_t hg_model_wgmma_read(uint64_t desc, hg_dtype_t t, hg_major_t major, int rows,
                                const uint8_t *smem, size_t smem_bytes, void *out) {
  hg_gmma_desc_fields_t f;
  uint32_t e = 0, span = 0;
  int kdim;
  HG_TRY(wgmma_check_rows(desc, t, major, rows, &f, &e, &kdim, &span));
  uint8_t *o = out;
  for (int mn = 0; mn < rows; mn++)
    for (int k = 0; k < kdim; k++) {
      const uint32_t a = wgmma_addr(&f, e, span, major, mn, k);
      if ((size_t)a + e > smem_bytes)
        return hg_error(HG_ERR_INVALID,
                        "wgmma model: element (%d, %d) is read from 0x%" PRIx32
                        ", past the %zu B of shared memory",
                        mn, k, a, smem_bytes);
      memcpy(o + ((size_t)mn * (size_t)kdim + (size_t)k) * e, smem + a, e);
    }
  return hg_ok();
}

hg_status_t hg_model_wgmma_acc_coord(int n, int thread, int value, int *m, int *col) {
  if (n < 8 || n > 256 || n % 8 != 0)
    return hg_error(HG_ERR_INVALID, "wgmma model: N = %d is not a multiple of 8 in 8..256", n);
  if (thread < 0 || thread >= 128 || value < 0 || value >= n / 2)
    return hg_error(HG_ERR_INVALID,
                    "wgmma model: thread %d value %d is outside 128 threads x %d values", thread,
                    value, n / 2);
  /* PTX ISA, wgmma D fragments: warp w of the warpgroup owns rows 16w..16w+15; lane l,
   * group g = l/4, q = l%4, holds in each 8-column block j the elements (g, 8j+2q),
   * (g, 8j+2q+1), (g+8, 8j+2q), (g+8, 8j+2q+1), in that register order. */
  const int w = thread / 32, lane = thread % 32, g = lane / 4, q = lane % 4;
  const int j = value / 4, r = value % 4;
  *m = 16 * w + g + 8 * (r / 2);
  *col = 8 * j + 2 * q + (r % 2);
  return hg_ok();
}

hg_status_t hg_model_wgmma_a_coord(hg_dtype_t a, int thread, int value, int *m, int *k) {
  const int kdim = hg_wgmma_k(a);
  if (kdim == 0)
    return hg_error(HG_ERR_INVALID, "wgmma model: %s is not a wgmma operand type",
                    hg_dtype_name(a));
  const int vpr = 4 / hg_dtype_bytes(a); /* elements per 32-bit register */
  if (thread < 0 || thread >= 128 || value < 0 || value >= 4 * vpr)
    return hg_error(HG_ERR_INVALID,
                    "wgmma model: thread %d value %d is outside 128 threads x %d values", thread,
                    value, 4 * vpr);
  /* PTX ISA, wgmma A fragments in registers: four 32-bit registers per thread; register 0
   * holds row g, register 1 row g+8, registers 2 and 3 the same rows in the second half of
   * K; within a register, vpr consecutive k starting at vpr*q. */
  const int w = thread / 32, lane = thread % 32, g = lane / 4, q = lane % 4;
  const int reg = value / vpr, within = value % vpr;
  *m = 16 * w + g + 8 * (reg % 2);
  *k = (reg / 2) * (kdim / 2) + vpr * q + within;
  return hg_ok();
}

/* ---------------------------------------------------------------- mma.sync, ldmatrix (sm_80) */

/* PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type" and "for mma.m16n8k32"
 * (.e4m3/.e5m2, as .s8/.u8): with e elements a 32-bit register (2 for k16, 4 for k32),
 * groupID = lane >> 2 and threadID_in_group = lane % 4, element i of the fragment (A: 4e
 * values, B: 2e, C: 4) is at
 *   A: row groupID where (i / e) is even, else groupID + 8;
 *      col threadID_in_group * e + i % e, + 4e for i >= 2e
 *   B: row threadID_in_group * e + i % e, + 4e for i >= e; col groupID
 *   C: row groupID for i < 2, else groupID + 8; col threadID_in_group * 2 + (i & 1) */
static hg_status_t mma_sync_coord(const char *what, int e, int operand, int lane, int value,
                                  int *row, int *col) {
  static const char *const names[3] = {"A", "B", "C"};
  const int values[3] = {4 * e, 2 * e, 4};
  if (operand < 0 || operand > 2)
    return hg_error(HG_ERR_INVALID, "%s model: operand %d is not 0 (A), 1 (B) or 2 (C)", what,
                    operand);
  if (lane < 0 || lane >= 32 || value < 0 || value >= values[operand])
    return hg_error(HG_ERR_INVALID,
                    "%s model: lane %d value %d is outside 32 lanes x %d values of %s", what, lane,
                    value, values[operand], names[operand]);
  const int group = lane >> 2, tig = lane % 4, i = value;
  switch (operand) {
  case 0:
    *row = (i / e) % 2 == 0 ? group : group + 8;
    *col = tig * e + i % e + (i >= 2 * e ? 4 * e : 0);
    break;
  case 1:
    *row = tig * e + i % e + (i >= e ? 4 * e : 0);
    *col = group;
    break;
  default:
    *row = i < 2 ? group : group + 8;
    *col = tig * 2 + (i & 1);
    break;
  }
  return hg_ok();
}

hg_status_t hg_model_mma_sync_coord(int operand, int lane, int value, int *row, int *col) {
  return mma_sync_coord("mma.sync", 2, operand, lane, value, row, col);
}

hg_status_t hg_model_mma_sync8_coord(int operand, int lane, int value, int *row, int *col) {
  return mma_sync_coord("mma.sync m16n8k32", 4, operand, lane, value, row, col);
}

hg_status_t hg_model_ldmatrix(int num, bool trans, const uint32_t lane_addr[32],
                              const uint8_t *smem, size_t smem_bytes, uint32_t out[32][4]) {
  if (num != 1 && num != 2 && num != 4)
    return hg_error(HG_ERR_INVALID, "ldmatrix model: %d matrices is not x1, x2 or x4", num);
  /* PTX ISA, ldmatrix: each of the 8 * num addressing lanes names one 16-byte row of 8 b16
   * elements, which must be 16-byte aligned */
  for (int l = 0; l < 8 * num; l++) {
    if (lane_addr[l] % 16)
      return hg_error(HG_ERR_INVALID,
                      "ldmatrix model: lane %d's row address 0x%" PRIx32
                      " is not 16-byte aligned (row %d of matrix %d)",
                      l, lane_addr[l], l % 8, l / 8);
    if ((size_t)lane_addr[l] + 16 > smem_bytes)
      return hg_error(HG_ERR_INVALID,
                      "ldmatrix model: lane %d's row at 0x%" PRIx32
                      " runs past the %zu B of shared memory",
                      l, lane_addr[l], smem_bytes);
  }
  /* Register i of lane t: of matrix i, row t / 4, elements 2 (t % 4) and 2 (t % 4) + 1; with
   * .trans the matrix is read transposed: column t / 4 of rows 2 (t % 4) and 2 (t % 4) + 1. */
  for (int t = 0; t < 32; t++)
    for (int i = 0; i < num; i++) {
      uint32_t v = 0;
      for (int h = 0; h < 2; h++) {
        const int row = trans ? 2 * (t % 4) + h : t / 4;
        const int col = trans ? t / 4 : 2 * (t % 4) + h;
        const uint8_t *e = smem + lane_addr[8 * i + row] + 2 * col;
        v |= (uint32_t)(e[0] | e[1] << 8) << (16 * h);
      }
      out[t][i] = v;
    }
  return hg_ok();
}
