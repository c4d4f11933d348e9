/* Names and parsing of the small enums of the Hopper layer, and the reduction-type table. */
#include <string.h>
#include <strings.h>

#include "hopgen/sm90.h"

const char *hg_major_name(hg_major_t m) {
  return m == HG_MAJOR_MN ? "mn" : m == HG_MAJOR_K ? "k" : "?";
}

hg_status_t hg_major_parse(const char *name, hg_major_t *out) {
  if (!strcasecmp(name, "k")) {
    *out = HG_MAJOR_K;
    return hg_ok();
  }
  if (!strcasecmp(name, "mn") || !strcasecmp(name, "m") || !strcasecmp(name, "n")) {
    *out = HG_MAJOR_MN;
    return hg_ok();
  }
  return hg_error(HG_ERR_PARSE, "unknown majorness '%s' (expected k or mn)", name);
}

const char *hg_swizzle_mode_name(hg_swizzle_mode_t m) {
  switch (m) {
  case HG_SWIZZLE_NONE:
    return "none";
  case HG_SWIZZLE_32B:
    return "32B";
  case HG_SWIZZLE_64B:
    return "64B";
  case HG_SWIZZLE_128B:
    return "128B";
  }
  return "?";
}

hg_status_t hg_swizzle_mode_parse(const char *name, hg_swizzle_mode_t *out) {
  static const struct {
    const char *name;
    hg_swizzle_mode_t m;
  } names[] = {
      {"none", HG_SWIZZLE_NONE}, {"0", HG_SWIZZLE_NONE},    {"interleave", HG_SWIZZLE_NONE},
      {"32B", HG_SWIZZLE_32B},   {"32", HG_SWIZZLE_32B},    {"64B", HG_SWIZZLE_64B},
      {"64", HG_SWIZZLE_64B},    {"128B", HG_SWIZZLE_128B}, {"128", HG_SWIZZLE_128B}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcasecmp(name, names[i].name)) {
      *out = names[i].m;
      return hg_ok();
    }
  return hg_error(HG_ERR_PARSE, "unknown swizzle '%s' (expected none, 32B, 64B or 128B)", name);
}

static const char *const op_names[HG_TMA_OP_COUNT] = {
    [HG_TMA_LOAD] = "load",
    [HG_TMA_PREFETCH] = "prefetch",
    [HG_TMA_STORE] = "store",
    [HG_TMA_REDUCE_ADD] = "reduce-add",
    [HG_TMA_REDUCE_MIN] = "reduce-min",
    [HG_TMA_REDUCE_MAX] = "reduce-max",
    [HG_TMA_REDUCE_INC] = "reduce-inc",
    [HG_TMA_REDUCE_DEC] = "reduce-dec",
    [HG_TMA_REDUCE_AND] = "reduce-and",
    [HG_TMA_REDUCE_OR] = "reduce-or",
    [HG_TMA_REDUCE_XOR] = "reduce-xor",
};

const char *hg_tma_op_name(hg_tma_op_t op) {
  return (int)op >= 0 && op < HG_TMA_OP_COUNT ? op_names[op] : "?";
}

hg_status_t hg_tma_op_parse(const char *name, hg_tma_op_t *out) {
  for (int i = 0; i < HG_TMA_OP_COUNT; i++)
    if (!strcmp(name, op_names[i]) ||
        (i >= HG_TMA_REDUCE_ADD && !strcmp(name, op_names[i] + strlen("reduce-")))) {
      *out = (hg_tma_op_t)i;
      return hg_ok();
    }
  return hg_error(HG_ERR_PARSE,
                  "unknown TMA operation '%s' (expected load, prefetch, store, or reduce-add, "
                  "-min, -max, -inc, -dec, -and, -or, -xor)",
                  name);
}

bool hg_tma_op_is_reduce(hg_tma_op_t op) {
  return op >= HG_TMA_REDUCE_ADD && op <= HG_TMA_REDUCE_XOR;
}

hg_status_t hg_tma_reduce_check(hg_tma_op_t op, hg_dtype_t t) {
  /* PTX ISA, cp.reduce.async.bulk.tensor: the element type comes from the tensor map and
   * each reduction takes: .add .u32 .s32 .u64 .f32 .f16 .bf16; .min/.max .u32 .s32 .f16
   * .bf16; .inc/.dec .u32; .and/.or/.xor .b32 .b64. */
  const char *allowed;
  bool ok;
  switch (op) {
  case HG_TMA_REDUCE_ADD:
    ok = t == HG_U32 || t == HG_S32 || t == HG_U64 || t == HG_F32 || t == HG_F16 || t == HG_BF16;
    allowed = "u32, s32, u64, f32, f16 and bf16";
    break;
  case HG_TMA_REDUCE_MIN:
  case HG_TMA_REDUCE_MAX:
    ok = t == HG_U32 || t == HG_S32 || t == HG_F16 || t == HG_BF16;
    allowed = "u32, s32, f16 and bf16";
    break;
  case HG_TMA_REDUCE_INC:
  case HG_TMA_REDUCE_DEC:
    ok = t == HG_U32;
    allowed = "u32 only";
    break;
  case HG_TMA_REDUCE_AND:
  case HG_TMA_REDUCE_OR:
  case HG_TMA_REDUCE_XOR:
    ok = t == HG_U32 || t == HG_S32 || t == HG_U64;
    allowed = "32- and 64-bit integers (u32, s32, u64)";
    break;
  default:
    return hg_error(HG_ERR_INVALID, "'%s' is not a TMA reduction", hg_tma_op_name(op));
  }
  if (!ok)
    return hg_error(HG_ERR_INVALID,
                    "TMA %s does not take %s elements: cp.reduce.async.bulk.tensor .%s takes %s",
                    hg_tma_op_name(op), hg_dtype_name(t), hg_tma_op_name(op) + strlen("reduce-"),
                    allowed);
  return hg_ok();
}
