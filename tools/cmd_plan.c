/* hopgen plan: print TMA plans and TiledMma plans, readably or as JSON. Parsing and printing
 * only; every decision is the library's (hg_tma_plan_make, hg_tiled_mma_make). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hopgen/sm90.h"

static void usage_tma(FILE *f) {
  fprintf(
      f, "usage: hopgen plan tma --dtype T --shape S0,S1,.. --stride D0,D1,.. --tile T0,T1,..\n"
         "                       [--swizzle none|32B|64B|128B|auto] [--layout L] [--cluster C]\n"
         "                       [--op load|prefetch|store|reduce-OP] [--origin O0,O1,..]\n"
         "                       [--nan] [--l2 0..3] [--align BYTES] [--json]\n\n"
         "The TMA plan (CuTe TiledCopy) that moves a tile of a global tensor to or from shared\n"
         "memory: every cuTensorMapEncodeTiled parameter, the box, the boxes that fill the tile\n"
         "with their coordinates (relative to the tile origin, tensor-map order) and smem byte\n"
         "offsets, and the multicast slices of a cluster.\n\n"
         "  --dtype T        element type (u8 s8 e4m3 e5m2 u16 f16 bf16 u32 s32 f32 tf32 u64 f64)\n"
         "  --shape, --stride  the tensor, in elements, modes in your order (1 to 5); one\n"
         "                   mode must have stride 1: it becomes tensor-map dimension 0\n"
         "  --tile           the tile's extent per tensor mode\n"
         "  --swizzle        shared-memory swizzle (default auto: the widest the tile allows)\n"
         "  --layout L       the tile's shared-memory layout instead of the default, e.g.\n"
         "                   'Sw<3,3,3> o 0 o (128,64):(64,1)' (mode i = tensor mode i)\n"
         "  --cluster C      multicast the tile to C CTAs (loads; 1..16)\n"
         "  --op             load (default), prefetch, store, reduce-add/min/max/inc/dec/\n"
         "                   and/or/xor\n"
         "  --origin         a tile origin per tensor mode: checked, and absolute box\n"
         "                   coordinates printed\n"
         "  --nan            NaN instead of zero for out-of-bounds elements (float loads)\n"
         "  --l2             L2 promotion (0 none, 1 64B, 2 128B, 3 256B; default 3)\n"
         "  --align BYTES    what the tensor's base address is known to be a multiple of\n"
         "  --json           machine-readable output\n");
}

static void usage_mma(FILE *f) {
  fprintf(f,
          "usage: hopgen plan mma --a T --b T --acc T --tile M,N,K [--warpgroups W | --wg WM,WN]\n"
          "                       [--a-major k|mn] [--b-major k|mn] [--swizzle S]\n"
          "                       [--a-swizzle S] [--b-swizzle S] [--atom-n N] [--a-regs]\n"
          "                       [--smem-a ADDR] [--smem-b ADDR] [--json]\n\n"
          "The TiledMma of a CTA tile: the wgmma instruction, instructions per warpgroup, the\n"
          "GMMA stage layouts of A (M x K) and B (N x K), every descriptor in hex with its\n"
          "decoded fields, the byte advances per k-block and M/N atom, and the accumulator (and\n"
          "register-A) thread-value layouts.\n\n"
          "  --a, --b, --acc  operand and accumulator types (f16/bf16 x f16/f32 acc, tf32 f32,\n"
          "                   e4m3/e5m2 f16/f32, s8/u8 s32)\n"
          "  --tile M,N,K     the CTA tile\n"
          "  --warpgroups W   W consumer warpgroups along M (default 1); --wg WM,WN for a grid\n"
          "  --a-major, --b-major  k (default) or mn (16-bit types only)\n"
          "  --swizzle S      both stages' swizzle (default auto: the widest the tile allows)\n"
          "  --atom-n N       the instruction's N (default tile N / warpgroups along N)\n"
          "  --a-regs         A from registers (prints its fragment layout)\n"
          "  --smem-a, --smem-b  stage buffer addresses for the printed descriptors\n"
          "                   (default 0 and the next 1024-byte boundary after A)\n"
          "  --json           machine-readable output\n");
}

static void usage(FILE *f) {
  fprintf(f, "usage: hopgen plan tma ...   (hopgen plan tma --help)\n"
             "       hopgen plan mma ...   (hopgen plan mma --help)\n");
}

/* ---------------------------------------------------------------- JSON helpers */

static void json_ints(FILE *f, const char *name, int n, const int64_t *v, const char *sep) {
  fprintf(f, "\"%s\": [", name);
  for (int i = 0; i < n; i++) fprintf(f, "%s%" PRId64, i ? ", " : "", v[i]);
  fprintf(f, "]%s", sep);
}

static const char *l2_name(int l2) {
  static const char *const names[] = {"none", "64B", "128B", "256B"};
  return l2 >= 0 && l2 <= 3 ? names[l2] : "?";
}

/* ---------------------------------------------------------------- plan tma */

static hg_tma_plan_t plan;

enum {
  T_DTYPE,
  T_SHAPE,
  T_STRIDE,
  T_TILE,
  T_ORIGIN,
  T_SWIZZLE,
  T_LAYOUT,
  T_OP,
  T_CLUSTER,
  T_L2,
  T_ALIGN,
  T_NAN,
  T_JSON
};
/* --layout gives the tile and its swizzle: it conflicts with --tile and --swizzle. */
static const hg_cli_opt_t tma_opts[] = {
    {T_DTYPE, "--dtype", NULL, HG_CLI_VALUE, 0},
    {T_SHAPE, "--shape", NULL, HG_CLI_VALUE, 0},
    {T_STRIDE, "--stride", "--strides", HG_CLI_VALUE, 0},
    {T_TILE, "--tile", NULL, HG_CLI_VALUE, 0},
    {T_ORIGIN, "--origin", NULL, HG_CLI_VALUE, 0},
    {T_SWIZZLE, "--swizzle", NULL, HG_CLI_VALUE, 0},
    {T_LAYOUT, "--layout", NULL, HG_CLI_VALUE,
     HG_CLI_BIT(T_LAYOUT) | HG_CLI_BIT(T_TILE) | HG_CLI_BIT(T_SWIZZLE)},
    {T_OP, "--op", NULL, HG_CLI_VALUE, 0},
    {T_CLUSTER, "--cluster", NULL, HG_CLI_VALUE, 0},
    {T_L2, "--l2", NULL, HG_CLI_VALUE, 0},
    {T_ALIGN, "--align", NULL, HG_CLI_VALUE, 0},
    {T_NAN, "--nan", NULL, HG_CLI_FLAG, 0},
    {T_JSON, "--json", NULL, HG_CLI_JSON, 0},
};

static int cmd_tma(int argc, char **argv) {
  hg_cli_args_t a;
  hg_cli_args_init(&a, "plan tma", tma_opts, (int)(sizeof tma_opts / sizeof tma_opts[0]), argc,
                   argv);
  if (a.help) {
    usage_tma(stdout);
    return 0;
  }
  a.max_operands = 0;
  hg_tma_tensor_t g;
  memset(&g, 0, sizeof g);
  bool json = false, auto_sw = true;
  int64_t shape[8], stride[8], tile[8], origin[8], x;
  int nshape = 0, nstride = 0, ntile = 0, norigin = 0;
  hg_swizzle_mode_t sw = HG_SWIZZLE_NONE;
  hg_tma_options_t o = hg_tma_options_default(HG_TMA_LOAD);
  const char *layout_text = NULL, *v;
  for (int id; (id = hg_cli_next(&a, &v)) != HG_CLI_END;) {
    bool ok = true;
    switch (id) {
    case HG_CLI_ERROR:
      return hg_cli_usage(&a);
    case T_DTYPE:
      ok = hg_cli_check(&a, hg_dtype_parse(v, &g.dtype));
      break;
    case T_SHAPE:
      ok = (nshape = hg_cli_list(&a, v, ",", 1, INT64_MAX, shape, 8)) > 0;
      break;
    case T_STRIDE:
      ok = (nstride = hg_cli_list(&a, v, ",", INT64_MIN, INT64_MAX, stride, 8)) > 0;
      break;
    case T_TILE:
      ok = (ntile = hg_cli_list(&a, v, ",", 1, 65536, tile, 8)) > 0;
      break;
    case T_ORIGIN:
      ok = (norigin = hg_cli_list(&a, v, ",", INT32_MIN, INT32_MAX, origin, 8)) > 0;
      break;
    case T_SWIZZLE:
      auto_sw = !strcmp(v, "auto");
      if (!auto_sw) ok = hg_cli_check(&a, hg_swizzle_mode_parse(v, &sw));
      break;
    case T_LAYOUT:
      layout_text = v;
      break;
    case T_OP:
      ok = hg_cli_check(&a, hg_tma_op_parse(v, &o.op));
      break;
    case T_CLUSTER:
      ok = hg_cli_int(&a, v, 1, 1000, &x);
      o.cluster = (int)x;
      break;
    case T_L2:
      ok = hg_cli_int(&a, v, 0, 3, &x);
      o.l2_promotion = (int)x;
      break;
    case T_ALIGN:
      ok = hg_cli_int(&a, v, 1, INT64_MAX, &x);
      g.base_align_bytes = (uint64_t)x;
      break;
    case T_NAN:
      o.oob_nan = true;
      break;
    case T_JSON:
      json = true;
      break;
    }
    if (!ok) return hg_cli_usage(&a);
  }
  if (!(a.seen & HG_CLI_BIT(T_DTYPE)) || !nshape || !nstride || (!ntile && !layout_text))
    return hg_cli_usagef(&a, "plan tma needs --dtype, --shape, --stride and --tile (or --layout)");
  if (nshape != nstride || nshape > HG_TMA_MAX_RANK)
    return hg_cli_usagef(&a, "--shape has %d modes and --stride %d: give 1 to 5 of each", nshape,
                         nstride);
  if (norigin && norigin != nshape)
    return hg_cli_usagef(&a, "--origin has %d coordinates, the tensor %d modes", norigin, nshape);
  if (ntile && ntile != nshape)
    return hg_cli_usagef(&a, "--tile has %d extents, the tensor %d modes", ntile, nshape);
  g.rank = nshape;
  for (int m = 0; m < nshape; m++) g.shape[m] = shape[m], g.stride[m] = stride[m];
  const bool have_origin = norigin > 0;
  if (have_origin) {
    o.origin_known = true;
    for (int m = 0; m < nshape; m++) o.origin[m] = (int32_t)origin[m];
  }
  hg_composed_t smem;
  if (layout_text) {
    hg_status_t s = hg_composed_parse(layout_text, &smem);
    if (!hg_is_ok(&s)) return hg_cli_fail(hg_status_wrap(s, "--layout: "));
  } else {
    int t[HG_TMA_MAX_RANK];
    for (int m = 0; m < nshape; m++) t[m] = (int)tile[m];
    hg_status_t s;
    if (auto_sw) {
      /* The widest swizzle whose rows tile the contiguous extent (none for rank 1). */
      static const hg_swizzle_mode_t order[4] = {HG_SWIZZLE_128B, HG_SWIZZLE_64B, HG_SWIZZLE_32B,
                                                 HG_SWIZZLE_NONE};
      s = hg_ok();
      for (int k = nshape > 1 ? 0 : 3; k < 4; k++) {
        s = hg_tma_smem_layout(&g, t, order[k], &smem);
        if (hg_is_ok(&s) && !hg_tma_smem_padded(&g, t, order[k])) break;
      }
    } else {
      s = hg_tma_smem_layout(&g, t, sw, &smem);
    }
    if (!hg_is_ok(&s)) return hg_cli_fail(s);
  }
  hg_status_t s = hg_tma_plan_make(&g, &smem, &o, &plan);
  if (!hg_is_ok(&s)) return hg_cli_fail(s);

  const int r = g.rank;
  char lay[1024];
  hg_composed_print(&plan.smem, lay, sizeof lay);
  int32_t absc[HG_TMA_MAX_BOXES][HG_TMA_MAX_RANK];
  if (have_origin)
    for (int b = 0; b < plan.num_boxes; b++) {
      s = hg_tma_box_coords(&plan, b, o.origin, absc[b]);
      if (!hg_is_ok(&s)) return hg_cli_fail(s);
    }
  const hg_tensormap_params_t *p = &plan.map;
  if (json) {
    FILE *f = stdout;
    int64_t v[HG_TMA_MAX_RANK] = {0};
    fprintf(f, "{\n  ");
    hg_cli_json_str(f, "op", hg_tma_op_name(plan.op), ", ");
    hg_cli_json_str(f, "dtype", hg_dtype_name(g.dtype), ",\n  ");
    fprintf(f, "\"tensor\": {");
    json_ints(f, "shape", r, g.shape, ", ");
    json_ints(f, "stride", r, g.stride, "},\n  ");
    for (int m = 0; m < r; m++) v[m] = plan.tile[m];
    json_ints(f, "tile", r, v, ",\n  ");
    fprintf(f, "\"smem\": {");
    hg_cli_json_str(f, "layout", lay, ", ");
    fprintf(f, "\"bytes\": %u, \"align_bytes\": %u},\n  ", plan.smem_bytes, plan.smem_align_bytes);
    fprintf(f, "\"tensor_map\": {\"data_type\": \"%s\", \"rank\": %d, ", hg_dtype_name(p->dtype),
            p->rank);
    for (int d = 0; d < r; d++) v[d] = (int64_t)p->global_dim[d];
    json_ints(f, "global_dim", r, v, ", ");
    for (int d = 0; d + 1 < r; d++) v[d] = (int64_t)p->global_stride_bytes[d];
    json_ints(f, "global_strides_bytes", r - 1, v, ", ");
    for (int d = 0; d < r; d++) v[d] = p->box_dim[d];
    json_ints(f, "box_dim", r, v, ", ");
    for (int d = 0; d < r; d++) v[d] = p->element_strides[d];
    json_ints(f, "element_strides", r, v, ", ");
    fprintf(f, "\"interleave\": %d, \"swizzle\": %d, \"swizzle_name\": \"%s\", ", p->interleave,
            (int)p->swizzle, hg_swizzle_mode_name(p->swizzle));
    fprintf(f, "\"l2_promotion\": %d, \"oob_fill\": \"%s\"},\n  ", p->l2_promotion,
            p->oob_nan ? "nan" : "zero");
    for (int d = 0; d < r; d++) v[d] = plan.tmap_mode[d];
    json_ints(f, "tmap_dim_mode", r, v, ",\n  ");
    fprintf(f, "\"box_bytes\": %u, \"tile_bytes\": %u, \"num_boxes\": %d,\n  \"boxes\": [",
            plan.box_bytes, plan.tile_bytes, plan.num_boxes);
    for (int b = 0; b < plan.num_boxes; b++) {
      fprintf(f, "%s\n    {\"index\": %d, ", b ? "," : "", b);
      for (int d = 0; d < r; d++) v[d] = plan.box[b].coord[d];
      json_ints(f, "coords", r, v, ", ");
      if (have_origin) {
        for (int d = 0; d < r; d++) v[d] = absc[b][d];
        json_ints(f, "abs_coords", r, v, ", ");
      }
      fprintf(f, "\"smem_offset\": %u, \"cta\": %d}", plan.box[b].smem_offset,
              b / (plan.boxes_per_cta ? plan.boxes_per_cta : 1));
    }
    fprintf(f,
            "\n  ],\n  \"multicast\": {\"cluster\": %d, \"mask\": \"0x%04x\", "
            "\"boxes_per_cta\": %d, \"cta_issue_bytes\": %u, \"expect_tx_bytes\": %u, "
            "\"ctas\": [",
            plan.cluster, plan.mcast_mask, plan.boxes_per_cta, plan.cta_issue_bytes,
            plan.expect_tx_bytes);
    for (int c = 0; c < plan.cluster; c++)
      fprintf(f, "%s{\"rank\": %d, \"first_box\": %d, \"num_boxes\": %d}", c ? ", " : "", c,
              plan.cta_first_box[c], plan.boxes_per_cta);
    fprintf(f, "]}\n}\n");
    return 0;
  }
  printf("TMA %s plan: %s tensor (", hg_tma_op_name(plan.op), hg_dtype_name(g.dtype));
  for (int m = 0; m < r; m++) printf("%s%" PRId64, m ? "," : "", g.shape[m]);
  printf("):(");
  for (int m = 0; m < r; m++) printf("%s%" PRId64, m ? "," : "", g.stride[m]);
  printf("), tile (");
  for (int m = 0; m < r; m++) printf("%s%d", m ? "," : "", plan.tile[m]);
  printf(")\n");
  printf("shared memory: %s\n  %u B, the buffer's address a multiple of %u B\n", lay,
         plan.smem_bytes, plan.smem_align_bytes);
  printf("tensor map (cuTensorMapEncodeTiled): dataType %s, rank %d, interleave none, "
         "swizzle %s (%d), l2Promotion %s (%d), oobFill %s\n",
         hg_dtype_name(p->dtype), p->rank, hg_swizzle_mode_name(p->swizzle), (int)p->swizzle,
         l2_name(p->l2_promotion), p->l2_promotion, p->oob_nan ? "NaN" : "zero");
  printf("  dim  tensor mode  globalDim  globalStride (B)  boxDim  elementStride\n");
  for (int d = 0; d < r; d++) {
    char st[32] = "-";
    if (d > 0) snprintf(st, sizeof st, "%" PRIu64, p->global_stride_bytes[d - 1]);
    printf("  %-4d %-12d %-10" PRIu64 " %-17s %-7u %u\n", d, plan.tmap_mode[d], p->global_dim[d],
           st, p->box_dim[d], p->element_strides[d]);
  }
  printf("boxes: %d of %u B (%u B per tile); coordinates in tensor-map order, relative to the "
         "tile origin\n",
         plan.num_boxes, plan.box_bytes, plan.tile_bytes);
  for (int b = 0; b < plan.num_boxes; b++) {
    printf("  box %-3d (", b);
    for (int d = 0; d < r; d++) printf("%s%d", d ? "," : "", plan.box[b].coord[d]);
    printf(")  smem +%u", plan.box[b].smem_offset);
    if (have_origin) {
      printf("  at origin: (");
      for (int d = 0; d < r; d++) printf("%s%d", d ? "," : "", absc[b][d]);
      printf(")");
    }
    if (plan.cluster > 1) printf("  CTA %d", b / plan.boxes_per_cta);
    printf("\n");
  }
  if (plan.cluster > 1)
    printf("multicast: cluster of %d, mask 0x%04x; each CTA issues %d box(es) (%u B); every "
           "CTA's mbarrier expects %u B\n",
           plan.cluster, plan.mcast_mask, plan.boxes_per_cta, plan.cta_issue_bytes,
           plan.expect_tx_bytes);
  else if (plan.op == HG_TMA_LOAD)
    printf("mbarrier: expect %u B per tile\n", plan.expect_tx_bytes);
  return 0;
}

/* ---------------------------------------------------------------- plan mma */

static hg_tiled_mma_t tm;

static void print_desc_fields(FILE *f, uint64_t d, bool json) {
  const hg_gmma_desc_fields_t x = hg_gmma_desc_decode(d);
  const char *sw = hg_swizzle_mode_name(hg_gmma_swizzle_mode(x.layout_type));
  if (json)
    fprintf(f,
            "{\"hex\": \"0x%016" PRIx64 "\", \"start_address\": %u, \"lbo_bytes\": %u, "
            "\"sbo_bytes\": %u, \"base_offset\": %d, \"layout_type\": %d, \"swizzle\": \"%s\"}",
            d, x.start_address, x.lbo_bytes, x.sbo_bytes, x.base_offset, x.layout_type, sw);
  else
    fprintf(f, "0x%016" PRIx64 " (start 0x%x, LBO %u B, SBO %u B, base offset %d, layout %d = %s)",
            d, x.start_address, x.lbo_bytes, x.sbo_bytes, x.base_offset, x.layout_type, sw);
}

static void print_operand(FILE *f, const char *name, const hg_gmma_operand_t *op, uint32_t base,
                          bool json) {
  char lay[1024];
  hg_composed_print(&op->layout, lay, sizeof lay);
  uint64_t d0 = 0;
  hg_gmma_operand_desc(op, base, 0, 0, &d0);
  if (json) {
    fprintf(f, "  \"%s\": {\"dtype\": \"%s\", \"major\": \"%s\", \"swizzle\": \"%s\", ", name,
            hg_dtype_name(op->dtype), hg_major_name(op->major), hg_swizzle_mode_name(op->swizzle));
    fprintf(f, "\"rows\": %d, \"k\": %d, \"atom_rows\": %d, \"atom_k\": %d, ", op->mn, op->k,
            op->atom_mn, op->atom_k);
    hg_cli_json_str(f, "layout", lay, ", ");
    fprintf(f, "\"stage_bytes\": %u, \"align_bytes\": %u, \"smem_base\": %u,\n    \"desc\": ",
            op->stage_bytes, op->align_bytes, base);
    print_desc_fields(f, d0, true);
    int64_t v[HG_GMMA_MAX_BLOCKS];
    fprintf(f, ",\n    ");
    for (int i = 0; i < op->kblocks; i++) v[i] = op->kblock_offset_bytes[i];
    json_ints(f, "kblock_advance_bytes", op->kblocks, v, ", ");
    for (int i = 0; i < op->mn_atoms; i++) v[i] = op->mn_atom_offset_bytes[i];
    json_ints(f, "mn_atom_advance_bytes", op->mn_atoms, v, "");
    fprintf(f, "},\n");
    return;
  }
  fprintf(f, "%s stage: %s %s-major, %s swizzle, %dx%d: %s\n", name, hg_dtype_name(op->dtype),
          hg_major_name(op->major), hg_swizzle_mode_name(op->swizzle), op->mn, op->k, lay);
  fprintf(f, "  %u B at a multiple of %u B (here 0x%x); instruction (0,0): ", op->stage_bytes,
          op->align_bytes, base);
  print_desc_fields(f, d0, false);
  fprintf(f, "\n  start-address advance per k-block (B):");
  for (int i = 0; i < op->kblocks; i++) fprintf(f, " %u", op->kblock_offset_bytes[i]);
  fprintf(f, "\n  per %d-row atom (B):", op->atom_mn);
  for (int i = 0; i < op->mn_atoms; i++) fprintf(f, " %u", op->mn_atom_offset_bytes[i]);
  fprintf(f, "\n");
}

/* A list of exactly n counts in 1..hi ("M,N,K"); out is zeroed first. */
static bool exactly(hg_cli_args_t *a, const char *v, int64_t hi, int64_t *out, int n,
                    const char *form) {
  memset(out, 0, (size_t)n * sizeof *out);
  int64_t l[8];
  const int got = hg_cli_list(a, v, ",", 1, hi, l, 8);
  if (got < 0) return false;
  if (got != n) return hg_cli_bad(a, "%s '%s' is not %s", a->current, v, form);
  memcpy(out, l, (size_t)n * sizeof *out);
  return true;
}

enum {
  M_A,
  M_B,
  M_ACC,
  M_TILE,
  M_WARPGROUPS,
  M_WG,
  M_A_MAJOR,
  M_B_MAJOR,
  M_SWIZZLE,
  M_A_SWIZZLE,
  M_B_SWIZZLE,
  M_ATOM_N,
  M_SMEM_A,
  M_SMEM_B,
  M_A_REGS,
  M_JSON
};
/* --swizzle sets both stages' swizzle; --warpgroups and --wg both give the warpgroup grid. */
static const hg_cli_opt_t mma_opts[] = {
    {M_A, "--a", NULL, HG_CLI_VALUE, 0},
    {M_B, "--b", NULL, HG_CLI_VALUE, 0},
    {M_ACC, "--acc", NULL, HG_CLI_VALUE, 0},
    {M_TILE, "--tile", NULL, HG_CLI_VALUE, 0},
    {M_WARPGROUPS, "--warpgroups", NULL, HG_CLI_VALUE, HG_CLI_BIT(M_WG)},
    {M_WG, "--wg", NULL, HG_CLI_VALUE, HG_CLI_BIT(M_WG)},
    {M_A_MAJOR, "--a-major", NULL, HG_CLI_VALUE, 0},
    {M_B_MAJOR, "--b-major", NULL, HG_CLI_VALUE, 0},
    {M_SWIZZLE, "--swizzle", NULL, HG_CLI_VALUE, HG_CLI_BIT(M_A_SWIZZLE) | HG_CLI_BIT(M_B_SWIZZLE)},
    {M_A_SWIZZLE, "--a-swizzle", NULL, HG_CLI_VALUE, 0},
    {M_B_SWIZZLE, "--b-swizzle", NULL, HG_CLI_VALUE, 0},
    {M_ATOM_N, "--atom-n", NULL, HG_CLI_VALUE, 0},
    {M_SMEM_A, "--smem-a", NULL, HG_CLI_VALUE, 0},
    {M_SMEM_B, "--smem-b", NULL, HG_CLI_VALUE, 0},
    {M_A_REGS, "--a-regs", NULL, HG_CLI_FLAG, 0},
    {M_JSON, "--json", NULL, HG_CLI_JSON, 0},
};

static int cmd_mma(int argc, char **argv) {
  hg_cli_args_t a;
  hg_cli_args_init(&a, "plan mma", mma_opts, (int)(sizeof mma_opts / sizeof mma_opts[0]), argc,
                   argv);
  if (a.help) {
    usage_mma(stdout);
    return 0;
  }
  a.max_operands = 0;
  hg_tiled_mma_spec_t sp;
  memset(&sp, 0, sizeof sp);
  sp.a = sp.b = HG_BF16;
  sp.acc = HG_F32;
  sp.auto_swizzle = true;
  sp.wg_m = sp.wg_n = 1;
  bool json = false, a_sw_set = false, b_sw_set = false;
  int64_t smem_a = 0, smem_b = -1, x, l[4];
  const char *v;
  for (int id; (id = hg_cli_next(&a, &v)) != HG_CLI_END;) {
    bool ok = true;
    switch (id) {
    case HG_CLI_ERROR:
      return hg_cli_usage(&a);
    case M_A:
      ok = hg_cli_check(&a, hg_dtype_parse(v, &sp.a));
      break;
    case M_B:
      ok = hg_cli_check(&a, hg_dtype_parse(v, &sp.b));
      break;
    case M_ACC:
      ok = hg_cli_check(&a, hg_dtype_parse(v, &sp.acc));
      break;
    case M_TILE:
      ok = exactly(&a, v, 4096, l, 3, "M,N,K");
      sp.tile_m = (int)l[0], sp.tile_n = (int)l[1], sp.tile_k = (int)l[2];
      break;
    case M_WARPGROUPS:
      ok = hg_cli_int(&a, v, 1, 8, &x);
      sp.wg_m = (int)x, sp.wg_n = 1;
      break;
    case M_WG:
      ok = exactly(&a, v, 8, l, 2, "WM,WN");
      sp.wg_m = (int)l[0], sp.wg_n = (int)l[1];
      break;
    case M_A_MAJOR:
      ok = hg_cli_check(&a, hg_major_parse(v, &sp.a_major));
      break;
    case M_B_MAJOR:
      ok = hg_cli_check(&a, hg_major_parse(v, &sp.b_major));
      break;
    case M_SWIZZLE:
      if (strcmp(v, "auto") != 0) {
        ok = hg_cli_check(&a, hg_swizzle_mode_parse(v, &sp.a_swizzle));
        sp.b_swizzle = sp.a_swizzle;
        a_sw_set = b_sw_set = true;
      }
      break;
    case M_A_SWIZZLE:
      ok = hg_cli_check(&a, hg_swizzle_mode_parse(v, &sp.a_swizzle));
      a_sw_set = true;
      break;
    case M_B_SWIZZLE:
      ok = hg_cli_check(&a, hg_swizzle_mode_parse(v, &sp.b_swizzle));
      b_sw_set = true;
      break;
    case M_ATOM_N:
      ok = hg_cli_int(&a, v, 1, 4096, &x);
      sp.atom_n = (int)x;
      break;
    case M_SMEM_A:
    case M_SMEM_B:
      /* a shared-memory byte address: 18 bits (the descriptor's start-address field) */
      ok = hg_cli_int(&a, v, 0, (1 << 18) - 1, id == M_SMEM_A ? &smem_a : &smem_b);
      break;
    case M_A_REGS:
      sp.a_regs = true;
      break;
    case M_JSON:
      json = true;
      break;
    }
    if (!ok) return hg_cli_usage(&a);
  }
  /* Operand B and the accumulator follow A unless given. */
  if (!(a.seen & HG_CLI_BIT(M_B))) sp.b = sp.a;
  if (!(a.seen & HG_CLI_BIT(M_ACC))) sp.acc = (sp.a == HG_S8 || sp.a == HG_U8) ? HG_S32 : HG_F32;
  if (!(a.seen & HG_CLI_BIT(M_TILE))) return hg_cli_usagef(&a, "plan mma needs --tile M,N,K");
  if (a_sw_set != b_sw_set) {
    /* One side given: the other keeps the automatic choice, made by a first pass. */
    hg_tiled_mma_spec_t probe = sp;
    probe.auto_swizzle = true;
    hg_status_t s = hg_tiled_mma_make(&probe, &tm);
    if (!hg_is_ok(&s)) return hg_cli_fail(s);
    if (!a_sw_set) sp.a_swizzle = tm.a_op.swizzle;
    if (!b_sw_set) sp.b_swizzle = tm.b_op.swizzle;
  }
  if (a_sw_set || b_sw_set) sp.auto_swizzle = false;
  hg_status_t s = hg_tiled_mma_make(&sp, &tm);
  if (!hg_is_ok(&s)) return hg_cli_fail(s);
  if (smem_b < 0) smem_b = smem_a + (tm.a_op.stage_bytes + 1023) / 1024 * 1024;
  const uint32_t ba = (uint32_t)smem_a, bb = (uint32_t)smem_b;
  uint64_t d;
  s = hg_gmma_operand_desc(&tm.a_op, ba, 0, 0, &d);
  if (hg_is_ok(&s)) s = hg_gmma_operand_desc(&tm.b_op, bb, 0, 0, &d);
  if (!hg_is_ok(&s)) return hg_cli_fail(s);
  const hg_wgmma_atom_t *at = &tm.atom;
  char acc[1024], afr[1024];
  hg_layout_print(&tm.acc_tv, acc, sizeof acc);
  hg_layout_print(&tm.a_tv, afr, sizeof afr);
  FILE *f = stdout;
  if (json) {
    fprintf(f, "{\n  \"tile\": [%d, %d, %d], \"warpgroups\": [%d, %d], \"threads\": %d,\n",
            tm.tile_m, tm.tile_n, tm.tile_k, tm.wg_m, tm.wg_n, tm.threads);
    fprintf(f, "  \"wgmma\": {");
    hg_cli_json_str(f, "ptx", at->ptx, ", ");
    fprintf(f, "\"m\": %d, \"n\": %d, \"k\": %d, \"a\": \"%s\", \"b\": \"%s\", \"acc\": \"%s\", ",
            at->m, at->n, at->k, hg_dtype_name(at->a), hg_dtype_name(at->b),
            hg_dtype_name(at->acc));
    fprintf(f, "\"a_regs\": %s, \"trans_a\": %d, \"trans_b\": %d, \"acc_regs\": %d},\n",
            at->a_regs ? "true" : "false", at->trans_a, at->trans_b, at->acc_regs);
    fprintf(f, "  \"atoms\": {\"m\": %d, \"n\": %d, \"k\": %d}, \"acc_values_per_thread\": %d,\n",
            tm.atoms_m, tm.atoms_n, tm.atoms_k, tm.acc_values);
    print_operand(f, "a", &tm.a_op, ba, true);
    print_operand(f, "b", &tm.b_op, bb, true);
    fprintf(f, "  \"instructions\": [");
    int first = 1;
    for (int w = 0; w < tm.warpgroups; w++)
      for (int kb = 0; kb < tm.atoms_k; kb++)
        for (int im = 0; im < tm.atoms_m; im++)
          for (int in = 0; in < tm.atoms_n; in++) {
            uint64_t da, db;
            hg_tiled_mma_desc(&tm, 0, ba, w, im, kb, &da);
            hg_tiled_mma_desc(&tm, 1, bb, w, in, kb, &db);
            fprintf(f,
                    "%s\n    {\"warpgroup\": %d, \"kblock\": %d, \"m_atom\": %d, \"n_atom\": %d, "
                    "\"acc_first_reg\": %d, ",
                    first ? "" : ",", w, kb, im, in, (im + tm.atoms_m * in) * at->acc_regs);
            first = 0;
            if (!at->a_regs) {
              fprintf(f, "\"desc_a\": \"0x%016" PRIx64 "\", ", da);
            }
            fprintf(f, "\"desc_b\": \"0x%016" PRIx64 "\"}", db);
          }
    fprintf(f, "\n  ],\n  ");
    hg_cli_json_str(f, "acc_tv_layout", acc, ",\n  ");
    if (at->a_regs) hg_cli_json_str(f, "a_tv_layout", afr, ",\n  ");
    fprintf(f, "\"acc_tv_index\": \"m + %d * n\"\n}\n", tm.tile_m);
    return 0;
  }
  fprintf(f,
          "TiledMma: %s x %s -> %s, tile %dx%dx%d, %d warpgroup(s) (%d along M x %d along N), "
          "%d threads\n",
          hg_dtype_name(at->a), hg_dtype_name(at->b), hg_dtype_name(at->acc), tm.tile_m, tm.tile_n,
          tm.tile_k, tm.warpgroups, tm.wg_m, tm.wg_n, tm.threads);
  fprintf(f,
          "instruction: %s\n  A from %s (%s-major, trans-a %d), B from shared memory "
          "(%s-major, trans-b %d)\n",
          at->ptx, at->a_regs ? "registers" : "shared memory", hg_major_name(at->a_major),
          at->trans_a, hg_major_name(at->b_major), at->trans_b);
  fprintf(f,
          "per warpgroup: %d x %d instruction(s) per k-block, %d k-block(s); %d accumulator "
          "values per thread\n",
          tm.atoms_m, tm.atoms_n, tm.atoms_k, tm.acc_values);
  print_operand(f, "A", &tm.a_op, ba, false);
  print_operand(f, "B", &tm.b_op, bb, false);
  fprintf(f, "descriptors (warpgroup, k-block, M atom, N atom):\n");
  for (int w = 0; w < tm.warpgroups; w++)
    for (int kb = 0; kb < tm.atoms_k; kb++)
      for (int im = 0; im < tm.atoms_m; im++)
        for (int in = 0; in < tm.atoms_n; in++) {
          uint64_t da, db;
          hg_tiled_mma_desc(&tm, 0, ba, w, im, kb, &da);
          hg_tiled_mma_desc(&tm, 1, bb, w, in, kb, &db);
          fprintf(f, "  wg %d kb %d m %d n %d:", w, kb, im, in);
          if (!at->a_regs) fprintf(f, " A 0x%016" PRIx64, da);
          fprintf(f, " B 0x%016" PRIx64 "  acc regs from %d\n", db,
                  (im + tm.atoms_m * in) * at->acc_regs);
        }
  fprintf(f, "accumulator TV layout (thread, value) -> m + %d n:\n  %s\n", tm.tile_m, acc);
  if (at->a_regs)
    fprintf(f, "register-A TV layout (thread, value) -> m + %d k:\n  %s\n", tm.tile_m, afr);
  return 0;
}

int hg_cmd_plan(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "tma")) return cmd_tma(argc - 1, argv + 1);
  if (!strcmp(argv[1], "mma")) return cmd_mma(argc - 1, argv + 1);
  fprintf(stderr, "hopgen: plan: unknown plan '%s' (expected tma or mma; hopgen plan --help)\n",
          argv[1]);
  return 2;
}
