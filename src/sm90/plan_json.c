/* Plans as JSON into a caller's buffer (bindings.h): the same objects `hopgen plan tma
 * --json` and `hopgen plan mma --json` print, for bindings that parse them (Python's
 * json) instead of walking the structs. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hopgen/bindings.h"

/* snprintf-like accumulation: writes what fits, counts everything. */
typedef struct jbuf {
  char *buf;
  size_t size, len;
} jbuf_t;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
jb_printf(jbuf_t *j, const char *fmt, ...) {
  char tmp[512];
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n <= 0) return;
  const size_t len = (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1;
  if (j->size > 0 && j->len + 1 < j->size) {
    const size_t room = j->size - 1 - j->len;
    memcpy(j->buf + j->len, tmp, len < room ? len : room);
  }
  j->len += len;
  if (j->size > 0) j->buf[j->len < j->size ? j->len : j->size - 1] = '\0';
}

/* "name": "escaped value" then sep. */
static void jb_str(jbuf_t *j, const char *name, const char *v, const char *sep) {
  jb_printf(j, "\"%s\": \"", name);
  for (const unsigned char *p = (const unsigned char *)(v ? v : ""); *p; p++) {
    if (*p == '"' || *p == '\\')
      jb_printf(j, "\\%c", *p);
    else if (*p < 0x20)
      jb_printf(j, "\\u%04x", *p);
    else
      jb_printf(j, "%c", *p);
  }
  jb_printf(j, "\"%s", sep);
}

static void jb_ints(jbuf_t *j, const char *name, int n, const int64_t *v, const char *sep) {
  jb_printf(j, "\"%s\": [", name);
  for (int i = 0; i < n; i++) jb_printf(j, "%s%" PRId64, i ? ", " : "", v[i]);
  jb_printf(j, "]%s", sep);
}

static int jb_done(jbuf_t *j) {
  if (j->size > 0 && j->len == 0) j->buf[0] = '\0';
  return j->len > (size_t)INT32_MAX ? INT32_MAX : (int)j->len;
}

int hg_tma_plan_json(const hg_tma_tensor_t *g, const hg_tma_plan_t *plan, const int32_t *origin,
                     char *buf, size_t size) {
  jbuf_t j = {buf, size, 0};
  const hg_tensormap_params_t *p = &plan->map;
  const int r = p->rank;
  int64_t v[HG_TMA_MAX_RANK] = {0};
  char lay[4096];
  hg_composed_print(&plan->smem, lay, sizeof lay);
  jb_printf(&j, "{\n  ");
  jb_str(&j, "op", hg_tma_op_name(plan->op), ", ");
  jb_str(&j, "dtype", hg_dtype_name(p->dtype), ",\n  ");
  if (g) {
    jb_printf(&j, "\"tensor\": {");
    jb_ints(&j, "shape", g->rank, g->shape, ", ");
    jb_ints(&j, "stride", g->rank, g->stride, "},\n  ");
  }
  for (int m = 0; m < r; m++) v[m] = plan->tile[m];
  jb_ints(&j, "tile", r, v, ",\n  ");
  jb_printf(&j, "\"smem\": {");
  jb_str(&j, "layout", lay, ", ");
  jb_printf(&j, "\"bytes\": %u, \"align_bytes\": %u},\n  ", plan->smem_bytes,
            plan->smem_align_bytes);
  jb_printf(&j, "\"tensor_map\": {\"data_type\": \"%s\", \"rank\": %d, ", hg_dtype_name(p->dtype),
            r);
  for (int d = 0; d < r; d++) v[d] = (int64_t)p->global_dim[d];
  jb_ints(&j, "global_dim", r, v, ", ");
  for (int d = 0; d + 1 < r; d++) v[d] = (int64_t)p->global_stride_bytes[d];
  jb_ints(&j, "global_strides_bytes", r - 1, v, ", ");
  for (int d = 0; d < r; d++) v[d] = p->box_dim[d];
  jb_ints(&j, "box_dim", r, v, ", ");
  for (int d = 0; d < r; d++) v[d] = p->element_strides[d];
  jb_ints(&j, "element_strides", r, v, ", ");
  jb_printf(&j, "\"interleave\": %d, \"swizzle\": %d, \"swizzle_name\": \"%s\", ", p->interleave,
            (int)p->swizzle, hg_swizzle_mode_name(p->swizzle));
  jb_printf(&j, "\"l2_promotion\": %d, \"oob_fill\": \"%s\"},\n  ", p->l2_promotion,
            p->oob_nan ? "nan" : "zero");
  for (int d = 0; d < r; d++) v[d] = plan->tmap_mode[d];
  jb_ints(&j, "tmap_dim_mode", r, v, ",\n  ");
  jb_printf(&j, "\"box_bytes\": %u, \"tile_bytes\": %u, \"num_boxes\": %d,\n  \"boxes\": [",
            plan->box_bytes, plan->tile_bytes, plan->num_boxes);
  for (int b = 0; b < plan->num_boxes; b++) {
    jb_printf(&j, "%s\n    {\"index\": %d, ", b ? "," : "", b);
    for (int d = 0; d < r; d++) v[d] = plan->box[b].coord[d];
    jb_ints(&j, "coords", r, v, ", ");
    if (origin) {
      int32_t c[HG_TMA_MAX_RANK];
      hg_status_t s = hg_tma_box_coords(plan, b, origin, c);
      if (hg_is_ok(&s)) {
        for (int d = 0; d < r; d++) v[d] = c[d];
        jb_ints(&j, "abs_coords", r, v, ", ");
      } else {
        jb_printf(&j, "\"abs_coords\": null, ");
      }
    }
    jb_printf(&j, "\"smem_offset\": %u, \"cta\": %d}", plan->box[b].smem_offset,
              b / (plan->boxes_per_cta ? plan->boxes_per_cta : 1));
  }
  jb_printf(&j,
            "\n  ],\n  \"multicast\": {\"cluster\": %d, \"mask\": \"0x%04x\", "
            "\"boxes_per_cta\": %d, \"cta_issue_bytes\": %u, \"expect_tx_bytes\": %u, "
            "\"ctas\": [",
            plan->cluster, plan->mcast_mask, plan->boxes_per_cta, plan->cta_issue_bytes,
            plan->expect_tx_bytes);
  for (int c = 0; c < plan->cluster; c++)
    jb_printf(&j, "%s{\"rank\": %d, \"first_box\": %d, \"num_boxes\": %d}", c ? ", " : "", c,
              plan->cta_first_box[c], plan->boxes_per_cta);
  jb_printf(&j, "]}\n}\n");
  return jb_done(&j);
}

static void jb_desc(jbuf_t *j, uint64_t d) {
  const hg_gmma_desc_fields_t x = hg_gmma_desc_decode(d);
  jb_printf(j,
            "{\"hex\": \"0x%016" PRIx64 "\", \"start_address\": %u, \"lbo_bytes\": %u, "
            "\"sbo_bytes\": %u, \"base_offset\": %d, \"layout_type\": %d, \"swizzle\": \"%s\"}",
            d, x.start_address, x.lbo_bytes, x.sbo_bytes, x.base_offset, x.layout_type,
            hg_swizzle_mode_name(hg_gmma_swizzle_mode(x.layout_type)));
}

static void jb_operand(jbuf_t *j, const char *name, const hg_gmma_operand_t *op, uint32_t base) {
  char lay[4096];
  hg_composed_print(&op->layout, lay, sizeof lay);
  uint64_t d0 = 0;
  hg_gmma_operand_desc(op, base, 0, 0, &d0);
  jb_printf(j, "  \"%s\": {\"dtype\": \"%s\", \"major\": \"%s\", \"swizzle\": \"%s\", ", name,
            hg_dtype_name(op->dtype), hg_major_name(op->major), hg_swizzle_mode_name(op->swizzle));
  jb_printf(j, "\"rows\": %d, \"k\": %d, \"atom_rows\": %d, \"atom_k\": %d, ", op->mn, op->k,
            op->atom_mn, op->atom_k);
  jb_str(j, "layout", lay, ", ");
  jb_printf(j, "\"stage_bytes\": %u, \"align_bytes\": %u, \"smem_base\": %u,\n    \"desc\": ",
            op->stage_bytes, op->align_bytes, base);
  jb_desc(j, d0);
  int64_t v[HG_GMMA_MAX_BLOCKS];
  jb_printf(j, ",\n    ");
  for (int i = 0; i < op->kblocks; i++) v[i] = op->kblock_offset_bytes[i];
  jb_ints(j, "kblock_advance_bytes", op->kblocks, v, ", ");
  for (int i = 0; i < op->mn_atoms; i++) v[i] = op->mn_atom_offset_bytes[i];
  jb_ints(j, "mn_atom_advance_bytes", op->mn_atoms, v, "");
  jb_printf(j, "},\n");
}

int hg_tiled_mma_json(const hg_tiled_mma_t *tm, uint32_t smem_a, uint32_t smem_b, char *buf,
                      size_t size) {
  jbuf_t j = {buf, size, 0};
  const hg_wgmma_atom_t *at = &tm->atom;
  char acc[4096], afr[4096];
  hg_layout_print(&tm->acc_tv, acc, sizeof acc);
  hg_layout_print(&tm->a_tv, afr, sizeof afr);
  jb_printf(&j, "{\n  \"tile\": [%d, %d, %d], \"warpgroups\": [%d, %d], \"threads\": %d,\n",
            tm->tile_m, tm->tile_n, tm->tile_k, tm->wg_m, tm->wg_n, tm->threads);
  jb_printf(&j, "  \"wgmma\": {");
  jb_str(&j, "ptx", at->ptx, ", ");
  jb_printf(&j, "\"m\": %d, \"n\": %d, \"k\": %d, \"a\": \"%s\", \"b\": \"%s\", \"acc\": \"%s\", ",
            at->m, at->n, at->k, hg_dtype_name(at->a), hg_dtype_name(at->b),
            hg_dtype_name(at->acc));
  jb_printf(&j, "\"a_regs\": %s, \"trans_a\": %d, \"trans_b\": %d, \"acc_regs\": %d},\n",
            at->a_regs ? "true" : "false", at->trans_a, at->trans_b, at->acc_regs);
  jb_printf(&j, "  \"atoms\": {\"m\": %d, \"n\": %d, \"k\": %d}, \"acc_values_per_thread\": %d,\n",
            tm->atoms_m, tm->atoms_n, tm->atoms_k, tm->acc_values);
  jb_operand(&j, "a", &tm->a_op, smem_a);
  jb_operand(&j, "b", &tm->b_op, smem_b);
  jb_printf(&j, "  \"instructions\": [");
  int first = 1;
  for (int w = 0; w < tm->warpgroups; w++)
    for (int kb = 0; kb < tm->atoms_k; kb++)
      for (int im = 0; im < tm->atoms_m; im++)
        for (int in = 0; in < tm->atoms_n; in++) {
          uint64_t da = 0, db = 0;
          hg_tiled_mma_desc(tm, 0, smem_a, w, im, kb, &da);
          hg_tiled_mma_desc(tm, 1, smem_b, w, in, kb, &db);
          jb_printf(&j,
                    "%s\n    {\"warpgroup\": %d, \"kblock\": %d, \"m_atom\": %d, \"n_atom\": %d, "
                    "\"acc_first_reg\": %d, ",
                    first ? "" : ",", w, kb, im, in, (im + tm->atoms_m * in) * at->acc_regs);
          first = 0;
          if (!at->a_regs) jb_printf(&j, "\"desc_a\": \"0x%016" PRIx64 "\", ", da);
          jb_printf(&j, "\"desc_b\": \"0x%016" PRIx64 "\"}", db);
        }
  jb_printf(&j, "\n  ],\n  ");
  jb_str(&j, "acc_tv_layout", acc, ",\n  ");
  if (at->a_regs) jb_str(&j, "a_tv_layout", afr, ",\n  ");
  jb_printf(&j, "\"acc_tv_index\": \"m + %d * n\"\n}\n", tm->tile_m);
  return jb_done(&j);
}
