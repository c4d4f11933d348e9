/* Element types: sizes, names, parsing. */
#include <string.h>

#include "hopgen/sm90.h"

static const struct {
  const char *name;
  int bits;
  bool is_float;
} dtypes[HG_DTYPE_COUNT] = {
    [HG_U8] = {"u8", 8, false},     [HG_S8] = {"s8", 8, false},     [HG_E4M3] = {"e4m3", 8, true},
    [HG_E5M2] = {"e5m2", 8, true},  [HG_U16] = {"u16", 16, false},  [HG_F16] = {"f16", 16, true},
    [HG_BF16] = {"bf16", 16, true}, [HG_U32] = {"u32", 32, false},  [HG_S32] = {"s32", 32, false},
    [HG_F32] = {"f32", 32, true},   [HG_TF32] = {"tf32", 32, true}, [HG_U64] = {"u64", 64, false},
    [HG_F64] = {"f64", 64, true},
};

static bool valid(hg_dtype_t t) {
  return (int)t >= 0 && t < HG_DTYPE_COUNT;
}

int hg_dtype_bits(hg_dtype_t t) {
  return valid(t) ? dtypes[t].bits : 0;
}
int hg_dtype_bytes(hg_dtype_t t) {
  return hg_dtype_bits(t) / 8;
}
bool hg_dtype_is_float(hg_dtype_t t) {
  return valid(t) && dtypes[t].is_float;
}
const char *hg_dtype_name(hg_dtype_t t) {
  return valid(t) ? dtypes[t].name : "?";
}

hg_status_t hg_dtype_parse(const char *name, hg_dtype_t *out) {
  static const struct {
    const char *alias;
    hg_dtype_t t;
  } aliases[] = {{"fp8", HG_E4M3},   {"float8_e4m3", HG_E4M3}, {"float8_e5m2", HG_E5M2},
                 {"half", HG_F16},   {"fp16", HG_F16},         {"bfloat16", HG_BF16},
                 {"float", HG_F32},  {"fp32", HG_F32},         {"int8", HG_S8},
                 {"uint8", HG_U8},   {"int32", HG_S32},        {"uint16", HG_U16},
                 {"uint32", HG_U32}, {"double", HG_F64},       {"b8", HG_U8},
                 {"b16", HG_U16},    {"b32", HG_U32},          {"b64", HG_U64}};
  for (int i = 0; i < HG_DTYPE_COUNT; i++)
    if (!strcmp(name, dtypes[i].name)) {
      *out = (hg_dtype_t)i;
      return hg_ok();
    }
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (!strcmp(name, aliases[i].alias)) {
      *out = aliases[i].t;
      return hg_ok();
    }
  return hg_error(HG_ERR_PARSE,
                  "unknown element type '%s' (expected one of u8 s8 e4m3 e5m2 u16 f16 bf16 u32 "
                  "s32 f32 tf32 u64 f64)",
                  name);
}

int hg_swizzle_mode_bytes(hg_swizzle_mode_t m) {
  switch (m) {
  case HG_SWIZZLE_32B:
    return 32;
  case HG_SWIZZLE_64B:
    return 64;
  case HG_SWIZZLE_128B:
    return 128;
  default:
    return 0;
  }
}
