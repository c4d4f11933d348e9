/* The builder: records a kernel as the structured IR of ir.h and rejects misuse early.
 *
 * Every hg_b_* call checks its arguments (types, visibility, ranges) before recording
 * anything. The first failure is kept as the builder's sticky status, with a sentence
 * that names the call, the operand and the rule; every later call is a no-op that
 * returns HG_NONE, so generator code need not check after each instruction. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit/ir.h"

/* ----------------------------------------------------------------------------- errors */

static bool live(const hg_builder_t *b) {
  return b && b->status.code == HG_OK;
}

#if defined(__GNUC__)
#define HG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define HG_PRINTF(f, a)
#endif

/* Record the first failure; always returns false so callers can `return fail(...)`. */
static bool fail(hg_builder_t *b, hg_code_t code, const char *fmt, ...) HG_PRINTF(3, 4);
static bool fail(hg_builder_t *b, hg_code_t code, const char *fmt, ...) {
  if (!b || b->status.code != HG_OK) return false;
  b->status.code = code;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(b->status.msg, sizeof b->status.msg, fmt, ap);
  va_end(ap);
  if (n < 0) b->status.msg[0] = '\0';
  if (n >= (int)sizeof b->status.msg) memcpy(b->status.msg + sizeof b->status.msg - 4, "...", 4);
  return false;
}

const char *hg_ir_type_name(hg_type_t t) {
  switch (t) {
  case HG_T_NONE:
    return "NONE";
  case HG_T_PRED:
    return "PRED";
  case HG_T_I32:
    return "I32";
  case HG_T_I64:
    return "I64";
  case HG_T_F32:
    return "F32";
  case HG_T_TMAP:
    return "TMAP";
  }
  return "?";
}

/* "value #12 'tid_x' (I32 from hg_b_sreg)", "parameter 'n' (I32)", "the constant -3 (I32)". */
static const char *describe(const hg_builder_t *b, int32_t id, char *buf, size_t size) {
  const hg_ir_value_t *v = &b->values[id];
  const char *type = hg_ir_type_name(v->type);
  if (v->kind == HG_VK_PARAM) {
    snprintf(buf, size, "parameter '%s' (%s)", b->params[v->param].name, type);
  } else if (v->kind == HG_VK_SSA && b->ops[v->def].code == HG_OP_CONST) {
    const hg_ir_op_t *op = &b->ops[v->def];
    if (v->type == HG_T_F32)
      snprintf(buf, size, "the constant %g (F32)", (double)op->u.cnst.f);
    else
      snprintf(buf, size, "the constant %lld (%s)", (long long)op->u.cnst.i, type);
  } else {
    const char *what = v->kind == HG_VK_VAR       ? "variable"
                       : v->kind == HG_VK_COUNTER ? "loop counter"
                                                  : "value";
    char name[HG_IR_MAX_HINT + 4] = "";
    if (v->hint[0]) snprintf(name, sizeof name, " '%s'", v->hint);
    const char *from =
        b->ops[v->def].code == HG_OP_FOR ? "for" : hg_ir_opcode_name(b->ops[v->def].code);
    snprintf(buf, size, "%s #%d%s (%s from hg_b_%s)", what, id, name, type, from);
  }
  return buf;
}

/* ----------------------------------------------------------------------------- storage */

static bool grow(hg_builder_t *b, void **p, int32_t *cap, int64_t need, size_t elem) {
  if (need <= *cap) return true;
  int64_t c = *cap ? *cap : 64;
  while (c < need) c *= 2;
  if (c > INT32_MAX) return fail(b, HG_ERR_CAPACITY, "the kernel is too large for the builder");
  void *q = realloc(*p, (size_t)c * elem);
  if (!q) return fail(b, HG_ERR_NOMEM, "out of memory while recording the kernel");
  *p = q;
  *cap = (int32_t)c;
  return true;
}

static int32_t current_scope(const hg_builder_t *b) {
  return b->depth ? b->stack[b->depth - 1].scope : 0;
}

static void set_hint(hg_ir_value_t *v, const char *hint) {
  size_t k = 0;
  for (const char *s = hint; s && *s && k + 1 < sizeof v->hint; s++) {
    char c = *s;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    v->hint[k++] = ok ? c : '_';
  }
  v->hint[k] = '\0';
}

/* A new value defined by op `def` (or -1) in the current region; 0 on failure. */
static int32_t new_value(hg_builder_t *b, hg_type_t type, hg_ir_value_kind_t kind, int32_t def,
                         const char *hint) {
  if (!grow(b, (void **)&b->values, &b->cap_values, (int64_t)b->nvalues + 1, sizeof *b->values))
    return 0;
  int32_t id = b->nvalues++;
  hg_ir_value_t *v = &b->values[id];
  memset(v, 0, sizeof *v);
  v->type = type;
  v->kind = kind;
  v->def = def;
  v->scope = kind == HG_VK_PARAM ? 0 : current_scope(b);
  v->param = -1;
  set_hint(v, hint);
  return id;
}

/* Append an op with its operands and room for nres results; returns its index or -1. */
static int32_t new_op(hg_builder_t *b, hg_ir_opcode_t code, const int32_t *operands, int nopd,
                      int nres) {
  if (!grow(b, (void **)&b->ops, &b->cap_ops, (int64_t)b->nops + 1, sizeof *b->ops)) return -1;
  if (!grow(b, (void **)&b->pool, &b->cap_pool, (int64_t)b->npool + nopd + nres, sizeof *b->pool))
    return -1;
  int32_t i = b->nops++;
  hg_ir_op_t *op = &b->ops[i];
  memset(op, 0, sizeof *op);
  op->code = code;
  op->depth = b->depth;
  op->open = op->mid = op->close = -1;
  op->first_operand = b->npool;
  op->num_operands = nopd;
  for (int k = 0; k < nopd; k++) b->pool[b->npool++] = operands[k];
  op->first_result = b->npool;
  op->num_results = nres;
  for (int k = 0; k < nres; k++) b->pool[b->npool++] = 0;
  return i;
}

static void set_result(hg_builder_t *b, int32_t op, int k, int32_t value) {
  b->pool[b->ops[op].first_result + k] = value;
}

/* Record an op with one fresh SSA result of `type`; returns the value (HG_NONE on failure). */
static hg_val_t emit1(hg_builder_t *b, hg_ir_opcode_t code, const int32_t *operands, int nopd,
                      hg_type_t type, const char *hint, hg_ir_op_t *attrs) {
  int32_t i = new_op(b, code, operands, nopd, 1);
  if (i < 0) return HG_NONE;
  if (attrs) b->ops[i].u = attrs->u;
  int32_t v = new_value(b, type, HG_VK_SSA, i, hint);
  if (!v) return HG_NONE;
  set_result(b, i, 0, v);
  return (hg_val_t){v};
}

static bool emit0(hg_builder_t *b, hg_ir_opcode_t code, const int32_t *operands, int nopd,
                  hg_ir_op_t *attrs) {
  int32_t i = new_op(b, code, operands, nopd, 0);
  if (i < 0) return false;
  if (attrs) b->ops[i].u = attrs->u;
  return true;
}

/* ----------------------------------------------------------------------------- checks */

static bool visible(const hg_builder_t *b, int32_t scope) {
  if (scope == 0) return true;
  for (int d = 0; d < b->depth; d++)
    if (b->stack[d].scope == scope) return true;
  return false;
}

/* Check that v is a value of this builder, visible here, and of type `want` (HG_T_NONE:
 * any type). `api` and `role` name the call and the operand in the sentence. */
static bool use(hg_builder_t *b, const char *api, const char *role, hg_val_t v, hg_type_t want) {
  if (!live(b)) return false;
  if (v.id == 0) return fail(b, HG_ERR_INVALID, "%s: %s is HG_NONE", api, role);
  if (v.id < 0 || v.id >= b->nvalues)
    return fail(b, HG_ERR_INVALID, "%s: %s is value #%d, which this builder never made", api, role,
                v.id);
  const hg_ir_value_t *val = &b->values[v.id];
  char d[160];
  if (!visible(b, val->scope)) {
    int32_t opener = b->scope_op[val->scope];
    const hg_ir_op_t *o = &b->ops[opener];
    const char *region = o->code == HG_OP_IF
                             ? (o->mid >= 0 && val->def > o->mid ? "hg_b_else" : "hg_b_if")
                         : o->code == HG_OP_LOOP ? "hg_b_loop"
                                                 : "hg_b_for";
    return fail(b, HG_ERR_INVALID,
                "%s: %s is %s, defined inside the %s body opened at op %d, and used outside it; "
                "values defined inside an if/loop body may only be used inside it (carry the "
                "value out in a variable: hg_b_var + hg_b_assign)",
                api, role, describe(b, v.id, d, sizeof d), region, opener);
  }
  if (want != HG_T_NONE && val->type != want)
    return fail(b, HG_ERR_INVALID, "%s: %s must be %s, but %s is %s", api, role,
                hg_ir_type_name(want), describe(b, v.id, d, sizeof d), hg_ir_type_name(val->type));
  return true;
}

static hg_type_t type_of(const hg_builder_t *b, hg_val_t v) {
  return b->values[v.id].type;
}

/* Both operands of one type; returns it (HG_T_NONE after a failure). */
static hg_type_t same_type(hg_builder_t *b, const char *api, const char *rx, hg_val_t x,
                           const char *ry, hg_val_t y) {
  if (!use(b, api, rx, x, HG_T_NONE) || !use(b, api, ry, y, HG_T_NONE)) return HG_T_NONE;
  hg_type_t tx = type_of(b, x), ty = type_of(b, y);
  if (tx != ty) {
    fail(b, HG_ERR_INVALID, "%s: operand types differ: %s is %s but %s is %s", api, rx,
         hg_ir_type_name(tx), ry, hg_ir_type_name(ty));
    return HG_T_NONE;
  }
  return tx;
}

/* ----------------------------------------------------------------------------- names */

static const char *const opcode_names[HG_OP_COUNT] = {
    [HG_OP_COMMENT] = "comment",
    [HG_OP_CONST] = "const",
    [HG_OP_VAR] = "var",
    [HG_OP_ASSIGN] = "assign",
    [HG_OP_BIN] = "bin",
    [HG_OP_MAD] = "mad",
    [HG_OP_FFMA] = "ffma",
    [HG_OP_FUNARY] = "funary",
    [HG_OP_NOT] = "not",
    [HG_OP_CMP] = "cmp",
    [HG_OP_SELECT] = "select",
    [HG_OP_SEXT] = "sext",
    [HG_OP_ZEXT] = "zext",
    [HG_OP_TRUNC] = "trunc",
    [HG_OP_I2F] = "i2f",
    [HG_OP_F2I] = "f2i",
    [HG_OP_BITCAST] = "bitcast",
    [HG_OP_PACK_F32X2] = "pack_f32x2",
    [HG_OP_UNPACK_F32] = "unpack_f32",
    [HG_OP_SREG] = "sreg",
    [HG_OP_CLOCK64] = "clock64",
    [HG_OP_SMEM_ADDR] = "smem_addr",
    [HG_OP_IF] = "if",
    [HG_OP_ELSE] = "else",
    [HG_OP_ENDIF] = "endif",
    [HG_OP_LOOP] = "loop",
    [HG_OP_BREAK_IF] = "break_if",
    [HG_OP_ENDLOOP] = "endloop",
    [HG_OP_FOR] = "for",
    [HG_OP_ENDFOR] = "endfor",
    [HG_OP_RETURN] = "return",
    [HG_OP_LOAD] = "load",
    [HG_OP_STORE] = "store",
    [HG_OP_ATOMIC_ADD_F32] = "atomic_add_f32",
    [HG_OP_ATOMIC_ADD_U32] = "atomic_add_u32",
    [HG_OP_RED] = "red",
    [HG_OP_REDUX] = "redux",
    [HG_OP_MAPA] = "mapa",
    [HG_OP_BAR_SYNC] = "bar_sync",
    [HG_OP_BAR_ARRIVE] = "bar_arrive",
    [HG_OP_FENCE_PROXY_ASYNC] = "fence_proxy_async",
    [HG_OP_FENCE_MBAR_INIT] = "fence_mbarrier_init",
    [HG_OP_FENCE_GPU] = "fence_gpu",
    [HG_OP_GRIDDEP_WAIT] = "griddep_wait",
    [HG_OP_GRIDDEP_LAUNCH] = "griddep_launch_dependents",
    [HG_OP_CLUSTER_ARRIVE] = "cluster_arrive",
    [HG_OP_CLUSTER_WAIT] = "cluster_wait",
    [HG_OP_ELECT_SYNC] = "elect_sync",
    [HG_OP_MBAR_INIT] = "mbar_init",
    [HG_OP_MBAR_ARRIVE] = "mbar_arrive",
    [HG_OP_MBAR_ARRIVE_CLUSTER] = "mbar_arrive_cluster",
    [HG_OP_MBAR_ARRIVE_EXPECT_TX] = "mbar_arrive_expect_tx",
    [HG_OP_MBAR_EXPECT_TX] = "mbar_expect_tx",
    [HG_OP_MBAR_TRY_WAIT] = "mbar_try_wait",
    [HG_OP_MBAR_WAIT] = "mbar_wait",
    [HG_OP_CACHE_POLICY] = "cache_policy",
    [HG_OP_TMA_LOAD] = "tma_load",
    [HG_OP_TMA_PREFETCH] = "tma_prefetch",
    [HG_OP_TMA_STORE] = "tma_store",
    [HG_OP_TMA_REDUCE] = "tma_reduce",
    [HG_OP_BULK_COMMIT] = "bulk_commit",
    [HG_OP_BULK_WAIT] = "bulk_wait",
    [HG_OP_TMAP_PREFETCH] = "tmap_prefetch",
    [HG_OP_WGMMA_FENCE] = "wgmma_fence",
    [HG_OP_WGMMA_COMMIT] = "wgmma_commit",
    [HG_OP_WGMMA_WAIT] = "wgmma_wait",
    [HG_OP_WGMMA] = "wgmma",
    [HG_OP_SETMAXNREG] = "setmaxnreg",
    [HG_OP_STMATRIX] = "stmatrix",
    [HG_OP_CP_ASYNC] = "cp_async",
    [HG_OP_CP_ASYNC_COMMIT] = "cp_async_commit",
    [HG_OP_CP_ASYNC_WAIT] = "cp_async_wait",
    [HG_OP_CP_ASYNC_MBAR_ARRIVE] = "cp_async_mbar_arrive",
    [HG_OP_LDMATRIX] = "ldmatrix",
    [HG_OP_MMA_SYNC] = "mma_sync",
};

const char *hg_ir_opcode_name(hg_ir_opcode_t code) {
  return (int)code >= 0 && code < HG_OP_COUNT && opcode_names[code] ? opcode_names[code] : "?";
}

/* ----------------------------------------------------------------------------- builder */

static bool is_ident(const char *s) {
  if (!s || !*s) return false;
  for (const char *p = s; *p; p++) {
    char c = *p;
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(p > s && c >= '0' && c <= '9')) return false;
  }
  return true;
}

hg_status_t hg_builder_create(const char *kernel_name, hg_builder_t **out) {
  if (!out) return hg_error(HG_ERR_INVALID, "hg_builder_create: out is NULL");
  *out = NULL;
  if (!is_ident(kernel_name))
    return hg_error(HG_ERR_INVALID,
                    "kernel name '%s' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)",
                    kernel_name ? kernel_name : "(null)");
  if (strlen(kernel_name) >= HG_IR_MAX_NAME)
    return hg_error(HG_ERR_CAPACITY, "kernel name '%.40s...' is longer than %d characters",
                    kernel_name, HG_IR_MAX_NAME - 1);
  hg_builder_t *b = calloc(1, sizeof *b);
  if (!b) return hg_error(HG_ERR_NOMEM, "out of memory creating a builder");
  b->status = hg_ok();
  strcpy(b->name, kernel_name);
  /* value 0 is "none"; scope 0 is the kernel body */
  b->values = calloc(64, sizeof *b->values);
  b->scope_op = malloc(64 * sizeof *b->scope_op);
  if (!b->values || !b->scope_op) {
    hg_builder_destroy(b);
    return hg_error(HG_ERR_NOMEM, "out of memory creating a builder");
  }
  b->cap_values = 64;
  b->nvalues = 1;
  b->cap_scopes = 64;
  b->nscopes = 1;
  b->scope_op[0] = -1;
  *out = b;
  return hg_ok();
}

void hg_builder_destroy(hg_builder_t *b) {
  if (!b) return;
  free(b->values);
  free(b->ops);
  free(b->pool);
  free(b->strings);
  free(b->scope_op);
  free(b);
}

hg_status_t hg_builder_status(const hg_builder_t *b) {
  if (!b) return hg_error(HG_ERR_INVALID, "the builder is NULL");
  return b->status;
}

void hg_builder_fail(hg_builder_t *b, hg_status_t s) {
  if (b && b->status.code == HG_OK && s.code != HG_OK) b->status = s;
}

hg_type_t hg_val_type(const hg_builder_t *b, hg_val_t v) {
  if (!b || v.id <= 0 || v.id >= b->nvalues) return HG_T_NONE;
  return b->values[v.id].type;
}

void hg_b_name(hg_builder_t *b, hg_val_t v, const char *name) {
  if (!use(b, "hg_b_name", "the value", v, HG_T_NONE)) return;
  set_hint(&b->values[v.id], name);
}

int hg_builder_param_count(const hg_builder_t *b) {
  return b ? b->nparams : 0;
}

hg_type_t hg_builder_param_type(const hg_builder_t *b, int i) {
  return b && i >= 0 && i < b->nparams ? b->params[i].type : HG_T_NONE;
}

/* ----------------------------------------------------------------------------- attributes */

void hg_b_set_threads(hg_builder_t *b, int threads) {
  if (!live(b)) return;
  if (threads < 1 || threads > 1024) {
    fail(b, HG_ERR_INVALID,
         "hg_b_set_threads: %d threads is outside 1..1024 (a CTA has at most "
         "1024 threads)",
         threads);
    return;
  }
  b->threads = threads;
}

void hg_b_set_min_ctas(hg_builder_t *b, int min_ctas) {
  if (!live(b)) return;
  /* sm_90 keeps at most 32 resident CTAs per SM (CUDA C Programming Guide, compute
   * capability 9.0 technical specifications). */
  if (min_ctas < 0 || min_ctas > 32) {
    fail(b, HG_ERR_INVALID,
         "hg_b_set_min_ctas: %d CTAs per SM is outside 0..32 (0 = unset; an sm_90 SM holds at "
         "most 32 CTAs)",
         min_ctas);
    return;
  }
  b->min_ctas = min_ctas;
}

void hg_b_set_cluster(hg_builder_t *b, int x, int y, int z) {
  if (!live(b)) return;
  if (x == 0 && y == 0 && z == 0) {
    b->cluster[0] = b->cluster[1] = b->cluster[2] = 0;
    return;
  }
  /* 8 CTAs is the portable cluster size; 16 needs the non-portable launch attribute but
   * is still a valid .reqnctapercluster on sm_90 (CUDA C Programming Guide, clusters). */
  if (x < 1 || y < 1 || z < 1 || x > 16 || y > 16 || z > 16 || x * y * z > 16) {
    fail(b, HG_ERR_INVALID,
         "hg_b_set_cluster: cluster %dx%dx%d is not a valid cluster shape (each dimension >= 1, "
         "at most 16 CTAs in all; 0x0x0 = no cluster)",
         x, y, z);
    return;
  }
  b->cluster[0] = x;
  b->cluster[1] = y;
  b->cluster[2] = z;
}

/* ----------------------------------------------------------------------------- params */

static hg_val_t add_param(hg_builder_t *b, hg_type_t type, const char *name, const char *api) {
  if (!live(b)) return HG_NONE;
  if (!is_ident(name)) {
    fail(b, HG_ERR_INVALID, "%s: parameter name '%s' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)",
         api, name ? name : "(null)");
    return HG_NONE;
  }
  if (strlen(name) >= HG_IR_MAX_PARAM_NAME) {
    fail(b, HG_ERR_CAPACITY, "%s: parameter name '%.32s...' is longer than %d characters", api,
         name, HG_IR_MAX_PARAM_NAME - 1);
    return HG_NONE;
  }
  for (int i = 0; i < b->nparams; i++)
    if (!strcmp(b->params[i].name, name)) {
      fail(b, HG_ERR_INVALID, "%s: a parameter named '%s' already exists (parameter %d)", api, name,
           i);
      return HG_NONE;
    }
  if (b->nparams >= HG_IR_MAX_PARAMS) {
    fail(b, HG_ERR_CAPACITY, "%s: a kernel may have at most %d parameters", api, HG_IR_MAX_PARAMS);
    return HG_NONE;
  }
  int32_t v = new_value(b, type, HG_VK_PARAM, -1, name);
  if (!v) return HG_NONE;
  hg_ir_param_t *p = &b->params[b->nparams];
  p->type = type;
  strcpy(p->name, name);
  p->value = v;
  b->values[v].param = b->nparams++;
  return (hg_val_t){v};
}

hg_val_t hg_b_param(hg_builder_t *b, hg_type_t type, const char *name) {
  if (!live(b)) return HG_NONE;
  if (type != HG_T_I32 && type != HG_T_I64 && type != HG_T_F32) {
    fail(b, HG_ERR_INVALID,
         "hg_b_param: parameter '%s' has type %s; scalar parameters are I32, I64 or F32 (tensor "
         "maps use hg_b_param_tmap)",
         name ? name : "(null)", hg_ir_type_name(type));
    return HG_NONE;
  }
  return add_param(b, type, name, "hg_b_param");
}

hg_val_t hg_b_param_tmap(hg_builder_t *b, const char *name) {
  return add_param(b, HG_T_TMAP, name, "hg_b_param_tmap");
}

/* ----------------------------------------------------------------------------- shared memory */

uint32_t hg_ir_smem_total(const hg_builder_t *b) {
  if (!b || b->smem_used == 0) return 0;
  uint32_t slack =
      b->smem_max_align > HG_IR_SMEM_BASE_ALIGN ? b->smem_max_align - HG_IR_SMEM_BASE_ALIGN : 0;
  return b->smem_used + slack;
}

uint32_t hg_builder_smem_bytes(const hg_builder_t *b) {
  return hg_ir_smem_total(b);
}

uint32_t hg_b_smem_reserve(hg_builder_t *b, uint32_t bytes, uint32_t align) {
  if (!live(b)) return 0;
  if (align == 0 || align > 1024 || (align & (align - 1))) {
    fail(b, HG_ERR_INVALID, "hg_b_smem_reserve: alignment %u is not a power of two in 1..1024",
         align);
    return 0;
  }
  if (bytes == 0) {
    fail(b, HG_ERR_INVALID, "hg_b_smem_reserve: a reservation of 0 bytes reserves nothing");
    return 0;
  }
  uint64_t offset = ((uint64_t)b->smem_used + align - 1) & ~(uint64_t)(align - 1);
  uint64_t used = offset + bytes;
  uint32_t max_align = b->smem_max_align > align ? b->smem_max_align : align;
  if (max_align < HG_IR_SMEM_BASE_ALIGN) max_align = HG_IR_SMEM_BASE_ALIGN;
  uint64_t slack = max_align - HG_IR_SMEM_BASE_ALIGN;
  if (used + slack > HG_IR_MAX_SMEM_BYTES) {
    fail(b, HG_ERR_INVALID,
         "hg_b_smem_reserve: %llu bytes of shared memory (%llu reserved + %llu of alignment "
         "slack) exceed the %u bytes (227 KB) a CTA may use on sm_90",
         (unsigned long long)(used + slack), (unsigned long long)used, (unsigned long long)slack,
         HG_IR_MAX_SMEM_BYTES);
    return 0;
  }
  b->smem_used = (uint32_t)used;
  b->smem_max_align = max_align;
  return (uint32_t)offset;
}

hg_val_t hg_b_smem_addr(hg_builder_t *b, uint32_t offset_bytes) {
  if (!live(b)) return HG_NONE;
  if (offset_bytes >= b->smem_used) {
    fail(b, HG_ERR_INVALID,
         "hg_b_smem_addr: offset %u is past the %u bytes of shared memory reserved so far "
         "(reserve with hg_b_smem_reserve first)",
         offset_bytes, b->smem_used);
    return HG_NONE;
  }
  hg_ir_op_t a = {0};
  a.u.smem_offset = offset_bytes;
  char hint[24];
  snprintf(hint, sizeof hint, "smem%u", offset_bytes);
  return emit1(b, HG_OP_SMEM_ADDR, NULL, 0, HG_T_I32, hint, &a);
}

/* ----------------------------------------------------------------------------- constants */

static hg_val_t constant(hg_builder_t *b, hg_type_t type, int64_t i, float f) {
  if (!live(b)) return HG_NONE;
  hg_ir_op_t a = {0};
  a.u.cnst.i = i;
  a.u.cnst.f = f;
  return emit1(b, HG_OP_CONST, NULL, 0, type, NULL, &a);
}

hg_val_t hg_b_i32(hg_builder_t *b, int32_t v) {
  return constant(b, HG_T_I32, v, 0.0f);
}
hg_val_t hg_b_i64(hg_builder_t *b, int64_t v) {
  return constant(b, HG_T_I64, v, 0.0f);
}
hg_val_t hg_b_f32(hg_builder_t *b, float v) {
  return constant(b, HG_T_F32, 0, v);
}
hg_val_t hg_b_pred(hg_builder_t *b, bool v) {
  return constant(b, HG_T_PRED, v ? 1 : 0, 0.0f);
}

hg_val_t hg_b_var(hg_builder_t *b, hg_type_t type, hg_val_t init) {
  if (!live(b)) return HG_NONE;
  if (type != HG_T_PRED && type != HG_T_I32 && type != HG_T_I64 && type != HG_T_F32) {
    fail(b, HG_ERR_INVALID, "hg_b_var: a variable has type PRED, I32, I64 or F32, not %s",
         hg_ir_type_name(type));
    return HG_NONE;
  }
  if (init.id != 0 && !use(b, "hg_b_var", "the initial value", init, type)) return HG_NONE;
  int32_t opd = init.id;
  int32_t i = new_op(b, HG_OP_VAR, &opd, 1, 1);
  if (i < 0) return HG_NONE;
  int32_t v = new_value(b, type, HG_VK_VAR, i, "v");
  if (!v) return HG_NONE;
  set_result(b, i, 0, v);
  return (hg_val_t){v};
}

void hg_b_assign(hg_builder_t *b, hg_val_t var, hg_val_t value) {
  if (!use(b, "hg_b_assign", "the destination", var, HG_T_NONE)) return;
  char d[160];
  const hg_ir_value_t *v = &b->values[var.id];
  if (v->kind == HG_VK_COUNTER) {
    fail(b, HG_ERR_INVALID, "hg_b_assign: %s is the counter of an hg_b_for, which is read-only",
         describe(b, var.id, d, sizeof d));
    return;
  }
  if (v->kind != HG_VK_VAR) {
    fail(b, HG_ERR_INVALID,
         "hg_b_assign: the destination, %s, is not a variable (only values made by hg_b_var "
         "can be assigned)",
         describe(b, var.id, d, sizeof d));
    return;
  }
  if (!use(b, "hg_b_assign", "the assigned value", value, HG_T_NONE)) return;
  if (type_of(b, value) != v->type) {
    char d2[160];
    fail(b, HG_ERR_INVALID, "hg_b_assign: cannot assign %s to %s: the types differ",
         describe(b, value.id, d, sizeof d), describe(b, var.id, d2, sizeof d2));
    return;
  }
  int32_t i = new_op(b, HG_OP_ASSIGN, &value.id, 1, 1);
  if (i >= 0) set_result(b, i, 0, var.id);
}

/* ----------------------------------------------------------------------------- arithmetic */

static const char *binop_name(hg_binop_t op) {
  static const char *const n[] = {"HG_ADD",   "HG_SUB",   "HG_MUL",   "HG_DIV_S", "HG_DIV_U",
                                  "HG_REM_S", "HG_REM_U", "HG_MIN_S", "HG_MAX_S", "HG_MIN_U",
                                  "HG_MAX_U", "HG_AND",   "HG_OR",    "HG_XOR",   "HG_SHL",
                                  "HG_SHR_S", "HG_SHR_U", "HG_FADD",  "HG_FSUB",  "HG_FMUL",
                                  "HG_FMIN",  "HG_FMAX"};
  return (int)op >= 0 && (size_t)op < sizeof n / sizeof n[0] ? n[op] : "?";
}

static const char *cmp_name(hg_cmp_t op) {
  static const char *const n[] = {"HG_EQ",   "HG_NE",   "HG_LT_S", "HG_LE_S", "HG_GT_S",
                                  "HG_GE_S", "HG_LT_U", "HG_LE_U", "HG_GT_U", "HG_GE_U",
                                  "HG_FLT",  "HG_FLE",  "HG_FGT",  "HG_FGE",  "HG_FEQ"};
  return (int)op >= 0 && (size_t)op < sizeof n / sizeof n[0] ? n[op] : "?";
}

hg_val_t hg_b_bin(hg_builder_t *b, hg_binop_t op, hg_val_t x, hg_val_t y) {
  if (!live(b)) return HG_NONE;
  char api[40];
  if ((int)op < 0 || op > HG_FMAX) {
    fail(b, HG_ERR_INVALID, "hg_b_bin: %d is not an hg_binop_t", (int)op);
    return HG_NONE;
  }
  snprintf(api, sizeof api, "hg_b_bin(%s)", binop_name(op));
  hg_type_t t = same_type(b, api, "x", x, "y", y);
  if (t == HG_T_NONE) return HG_NONE;
  bool is_float_op = op >= HG_FADD;
  bool is_logic = op == HG_AND || op == HG_OR || op == HG_XOR;
  bool ok = is_float_op ? t == HG_T_F32
                        : (t == HG_T_I32 || t == HG_T_I64 || (t == HG_T_PRED && is_logic));
  if (!ok) {
    fail(b, HG_ERR_INVALID, "%s needs %s operands, but x and y are %s", api,
         is_float_op ? "F32"
         : is_logic  ? "I32, I64 or PRED"
                     : "I32 or I64",
         hg_ir_type_name(t));
    return HG_NONE;
  }
  hg_ir_op_t a = {0};
  a.u.bin = op;
  int32_t opd[2] = {x.id, y.id};
  return emit1(b, HG_OP_BIN, opd, 2, t, NULL, &a);
}

static hg_val_t ternary(hg_builder_t *b, hg_ir_opcode_t code, const char *api, hg_val_t x,
                        hg_val_t y, hg_val_t z, bool want_float) {
  if (!live(b)) return HG_NONE;
  hg_type_t t = same_type(b, api, "x", x, "y", y);
  if (t == HG_T_NONE) return HG_NONE;
  if (!use(b, api, "z", z, HG_T_NONE)) return HG_NONE;
  if (type_of(b, z) != t) {
    fail(b, HG_ERR_INVALID, "%s: operand types differ: x and y are %s but z is %s", api,
         hg_ir_type_name(t), hg_ir_type_name(type_of(b, z)));
    return HG_NONE;
  }
  bool ok = want_float ? t == HG_T_F32 : (t == HG_T_I32 || t == HG_T_I64);
  if (!ok) {
    fail(b, HG_ERR_INVALID, "%s needs %s operands, but they are %s", api,
         want_float ? "F32" : "I32 or I64", hg_ir_type_name(t));
    return HG_NONE;
  }
  int32_t opd[3] = {x.id, y.id, z.id};
  return emit1(b, code, opd, 3, t, NULL, NULL);
}

hg_val_t hg_b_mad(hg_builder_t *b, hg_val_t x, hg_val_t y, hg_val_t z) {
  return ternary(b, HG_OP_MAD, "hg_b_mad", x, y, z, false);
}

hg_val_t hg_b_ffma(hg_builder_t *b, hg_val_t x, hg_val_t y, hg_val_t z) {
  return ternary(b, HG_OP_FFMA, "hg_b_ffma", x, y, z, true);
}

hg_val_t hg_b_funary(hg_builder_t *b, hg_funary_t op, hg_val_t x) {
  static const char *const names[] = {"HG_FABS", "HG_FNEG", "HG_FEX2", "HG_FRCP", "HG_FTANH"};
  if (!live(b)) return HG_NONE;
  if ((int)op < 0 || op > HG_FTANH) {
    fail(b, HG_ERR_INVALID, "hg_b_funary: %d is not an hg_funary_t", (int)op);
    return HG_NONE;
  }
  char api[40];
  snprintf(api, sizeof api, "hg_b_funary(%s)", names[op]);
  if (!use(b, api, "x", x, HG_T_F32)) return HG_NONE;
  hg_ir_op_t a = {0};
  a.u.funary = op;
  return emit1(b, HG_OP_FUNARY, &x.id, 1, HG_T_F32, NULL, &a);
}

hg_val_t hg_b_not(hg_builder_t *b, hg_val_t x) {
  if (!use(b, "hg_b_not", "x", x, HG_T_NONE)) return HG_NONE;
  hg_type_t t = type_of(b, x);
  if (t != HG_T_I32 && t != HG_T_I64 && t != HG_T_PRED) {
    fail(b, HG_ERR_INVALID, "hg_b_not needs an I32, I64 or PRED operand, but x is %s",
         hg_ir_type_name(t));
    return HG_NONE;
  }
  return emit1(b, HG_OP_NOT, &x.id, 1, t, NULL, NULL);
}

hg_val_t hg_b_cmp(hg_builder_t *b, hg_cmp_t op, hg_val_t x, hg_val_t y) {
  if (!live(b)) return HG_NONE;
  if ((int)op < 0 || op > HG_FEQ) {
    fail(b, HG_ERR_INVALID, "hg_b_cmp: %d is not an hg_cmp_t", (int)op);
    return HG_NONE;
  }
  char api[40];
  snprintf(api, sizeof api, "hg_b_cmp(%s)", cmp_name(op));
  hg_type_t t = same_type(b, api, "x", x, "y", y);
  if (t == HG_T_NONE) return HG_NONE;
  bool is_float_op = op >= HG_FLT;
  bool ok = is_float_op ? t == HG_T_F32 : (t == HG_T_I32 || t == HG_T_I64);
  if (!ok) {
    fail(b, HG_ERR_INVALID, "%s needs %s operands, but x and y are %s", api,
         is_float_op ? "F32" : "I32 or I64 (floats compare with HG_FLT..HG_FEQ)",
         hg_ir_type_name(t));
    return HG_NONE;
  }
  hg_ir_op_t a = {0};
  a.u.cmp = op;
  int32_t opd[2] = {x.id, y.id};
  return emit1(b, HG_OP_CMP, opd, 2, HG_T_PRED, NULL, &a);
}

hg_val_t hg_b_select(hg_builder_t *b, hg_val_t pred, hg_val_t x, hg_val_t y) {
  if (!use(b, "hg_b_select", "the predicate", pred, HG_T_PRED)) return HG_NONE;
  hg_type_t t = same_type(b, "hg_b_select", "x", x, "y", y);
  if (t == HG_T_NONE) return HG_NONE;
  if (t == HG_T_TMAP) {
    fail(b, HG_ERR_INVALID, "hg_b_select cannot choose between tensor maps (TMAP)");
    return HG_NONE;
  }
  int32_t opd[3] = {pred.id, x.id, y.id};
  return emit1(b, HG_OP_SELECT, opd, 3, t, NULL, NULL);
}

static hg_val_t convert(hg_builder_t *b, hg_ir_opcode_t code, const char *api, hg_val_t x,
                        hg_type_t from, hg_type_t to) {
  if (!use(b, api, "the operand", x, from)) return HG_NONE;
  hg_ir_op_t a = {0};
  a.u.to = to;
  return emit1(b, code, &x.id, 1, to, NULL, &a);
}

hg_val_t hg_b_sext(hg_builder_t *b, hg_val_t i32) {
  return convert(b, HG_OP_SEXT, "hg_b_sext", i32, HG_T_I32, HG_T_I64);
}
hg_val_t hg_b_zext(hg_builder_t *b, hg_val_t i32) {
  return convert(b, HG_OP_ZEXT, "hg_b_zext", i32, HG_T_I32, HG_T_I64);
}
hg_val_t hg_b_trunc(hg_builder_t *b, hg_val_t i64) {
  return convert(b, HG_OP_TRUNC, "hg_b_trunc", i64, HG_T_I64, HG_T_I32);
}
hg_val_t hg_b_i2f(hg_builder_t *b, hg_val_t i32) {
  return convert(b, HG_OP_I2F, "hg_b_i2f", i32, HG_T_I32, HG_T_F32);
}
hg_val_t hg_b_f2i(hg_builder_t *b, hg_val_t f32) {
  return convert(b, HG_OP_F2I, "hg_b_f2i", f32, HG_T_F32, HG_T_I32);
}

hg_val_t hg_b_bitcast(hg_builder_t *b, hg_type_t to, hg_val_t x) {
  if (!use(b, "hg_b_bitcast", "the operand", x, HG_T_NONE)) return HG_NONE;
  hg_type_t from = type_of(b, x);
  bool ok = (from == HG_T_I32 && to == HG_T_F32) || (from == HG_T_F32 && to == HG_T_I32);
  if (!ok) {
    fail(b, HG_ERR_INVALID, "hg_b_bitcast: %s to %s is not a bitcast (only I32 <-> F32)",
         hg_ir_type_name(from), hg_ir_type_name(to));
    return HG_NONE;
  }
  return convert(b, HG_OP_BITCAST, "hg_b_bitcast", x, from, to);
}

hg_val_t hg_b_pack_f32x2(hg_builder_t *b, hg_dtype_t dtype, hg_val_t lo, hg_val_t hi) {
  if (!live(b)) return HG_NONE;
  if (dtype != HG_BF16 && dtype != HG_F16 && dtype != HG_E4M3 && dtype != HG_E5M2) {
    fail(b, HG_ERR_INVALID, "hg_b_pack_f32x2: packs to bf16, f16, e4m3 or e5m2, not %s",
         hg_dtype_name(dtype));
    return HG_NONE;
  }
  if (!use(b, "hg_b_pack_f32x2", "lo", lo, HG_T_F32) ||
      !use(b, "hg_b_pack_f32x2", "hi", hi, HG_T_F32))
    return HG_NONE;
  hg_ir_op_t a = {0};
  a.u.dtype = dtype;
  int32_t opd[2] = {lo.id, hi.id};
  return emit1(b, HG_OP_PACK_F32X2, opd, 2, HG_T_I32, NULL, &a);
}

hg_val_t hg_b_unpack_f32(hg_builder_t *b, hg_dtype_t dtype, hg_val_t bits) {
  if (!live(b)) return HG_NONE;
  if (dtype != HG_BF16 && dtype != HG_F16 && dtype != HG_E4M3 && dtype != HG_E5M2) {
    fail(b, HG_ERR_INVALID, "hg_b_unpack_f32: unpacks bf16, f16, e4m3 or e5m2, not %s",
         hg_dtype_name(dtype));
    return HG_NONE;
  }
  if (!use(b, "hg_b_unpack_f32", "the packed bits", bits, HG_T_I32)) return HG_NONE;
  hg_ir_op_t a = {0};
  a.u.dtype = dtype;
  return emit1(b, HG_OP_UNPACK_F32, &bits.id, 1, HG_T_F32, NULL, &a);
}

/* ----------------------------------------------------------------------------- sregs */

static const char *const sreg_hints[] = {
    [HG_TID_X] = "tid_x",
    [HG_TID_Y] = "tid_y",
    [HG_TID_Z] = "tid_z",
    [HG_NTID_X] = "ntid_x",
    [HG_CTAID_X] = "ctaid_x",
    [HG_CTAID_Y] = "ctaid_y",
    [HG_CTAID_Z] = "ctaid_z",
    [HG_NCTAID_X] = "nctaid_x",
    [HG_NCTAID_Y] = "nctaid_y",
    [HG_NCTAID_Z] = "nctaid_z",
    [HG_LANEID] = "laneid",
    [HG_CLUSTER_CTARANK] = "cta_rank",
    [HG_CLUSTER_NCTARANK] = "cluster_size",
    [HG_CLUSTER_CTAID_X] = "cluster_ctaid_x",
    [HG_CLUSTER_CTAID_Y] = "cluster_ctaid_y",
    [HG_CLUSTER_CTAID_Z] = "cluster_ctaid_z",
    [HG_CLUSTERID_X] = "clusterid_x",
    [HG_CLUSTERID_Y] = "clusterid_y",
    [HG_CLUSTERID_Z] = "clusterid_z",
    [HG_NCLUSTERID_X] = "nclusterid_x",
    [HG_NCLUSTERID_Y] = "nclusterid_y",
    [HG_NCLUSTERID_Z] = "nclusterid_z",
    [HG_SMID] = "smid",
};

hg_val_t hg_b_sreg(hg_builder_t *b, hg_sreg_t r) {
  if (!live(b)) return HG_NONE;
  if ((int)r < 0 || r > HG_SMID) {
    fail(b, HG_ERR_INVALID, "hg_b_sreg: %d is not an hg_sreg_t", (int)r);
    return HG_NONE;
  }
  hg_ir_op_t a = {0};
  a.u.sreg = r;
  return emit1(b, HG_OP_SREG, NULL, 0, HG_T_I32, sreg_hints[r], &a);
}

hg_val_t hg_b_clock64(hg_builder_t *b) {
  if (!live(b)) return HG_NONE;
  return emit1(b, HG_OP_CLOCK64, NULL, 0, HG_T_I64, "clock", NULL);
}

/* ----------------------------------------------------------------------------- control flow */

static bool push(hg_builder_t *b, hg_ir_opcode_t code, int32_t op, const char *api) {
  if (b->depth >= HG_IR_MAX_DEPTH)
    return fail(b, HG_ERR_CAPACITY, "%s: regions nest deeper than %d", api, HG_IR_MAX_DEPTH);
  if (!grow(b, (void **)&b->scope_op, &b->cap_scopes, (int64_t)b->nscopes + 1, sizeof *b->scope_op))
    return false;
  int32_t scope = b->nscopes++;
  b->scope_op[scope] = op;
  b->stack[b->depth++] = (hg_ir_frame_t){.code = code, .op = op, .scope = scope, .has_else = false};
  b->ops[op].depth = b->depth - 1;
  return true;
}

static const char *opener_api(hg_ir_opcode_t code) {
  return code == HG_OP_IF ? "hg_b_if" : code == HG_OP_LOOP ? "hg_b_loop" : "hg_b_for";
}
static const char *closer_api(hg_ir_opcode_t code) {
  return code == HG_OP_IF ? "hg_b_endif" : code == HG_OP_LOOP ? "hg_b_endloop" : "hg_b_endfor";
}

/* The innermost open region must be `code`; otherwise a sentence about the imbalance. */
static bool expect_open(hg_builder_t *b, hg_ir_opcode_t code, const char *api) {
  if (!live(b)) return false;
  if (b->depth == 0)
    return fail(b, HG_ERR_INVALID, "%s without an open %s: regions are unbalanced", api,
                opener_api(code));
  const hg_ir_frame_t *f = &b->stack[b->depth - 1];
  if (f->code != code)
    return fail(b, HG_ERR_INVALID,
                "%s, but the innermost open region is the %s at op %d (close it with %s first): "
                "regions are unbalanced",
                api, opener_api(f->code), f->op, closer_api(f->code));
  return true;
}

void hg_b_if(hg_builder_t *b, hg_val_t pred) {
  if (!use(b, "hg_b_if", "the condition", pred, HG_T_PRED)) return;
  int32_t i = new_op(b, HG_OP_IF, &pred.id, 1, 0);
  if (i >= 0) push(b, HG_OP_IF, i, "hg_b_if");
}

void hg_b_else(hg_builder_t *b) {
  if (!expect_open(b, HG_OP_IF, "hg_b_else")) return;
  hg_ir_frame_t *f = &b->stack[b->depth - 1];
  if (f->has_else) {
    fail(b, HG_ERR_INVALID, "hg_b_else: the hg_b_if at op %d already has an hg_b_else", f->op);
    return;
  }
  int32_t i = new_op(b, HG_OP_ELSE, NULL, 0, 0);
  if (i < 0) return;
  if (!grow(b, (void **)&b->scope_op, &b->cap_scopes, (int64_t)b->nscopes + 1, sizeof *b->scope_op))
    return;
  /* the else body is a region instance of its own: then-values are invisible in it */
  f->scope = b->nscopes++;
  b->scope_op[f->scope] = f->op;
  f->has_else = true;
  b->ops[i].depth = b->depth - 1;
  b->ops[i].open = f->op;
  b->ops[f->op].mid = i;
}

static int32_t close_region(hg_builder_t *b, hg_ir_opcode_t open_code, hg_ir_opcode_t code,
                            const char *api) {
  if (!expect_open(b, open_code, api)) return -1;
  int32_t i = new_op(b, code, NULL, 0, 0);
  if (i < 0) return -1;
  hg_ir_frame_t *f = &b->stack[--b->depth];
  b->ops[i].depth = b->depth;
  b->ops[i].open = f->op;
  b->ops[i].mid = b->ops[f->op].mid;
  b->ops[f->op].close = i;
  if (b->ops[f->op].mid >= 0) b->ops[b->ops[f->op].mid].close = i;
  return i;
}

void hg_b_endif(hg_builder_t *b) {
  close_region(b, HG_OP_IF, HG_OP_ENDIF, "hg_b_endif");
}

void hg_b_loop(hg_builder_t *b) {
  if (!live(b)) return;
  int32_t i = new_op(b, HG_OP_LOOP, NULL, 0, 0);
  if (i >= 0) push(b, HG_OP_LOOP, i, "hg_b_loop");
}

void hg_b_break_if(hg_builder_t *b, hg_val_t pred) {
  if (!use(b, "hg_b_break_if", "the condition", pred, HG_T_PRED)) return;
  int d = b->depth - 1;
  while (d >= 0 && b->stack[d].code == HG_OP_IF) d--;
  if (d < 0) {
    fail(b, HG_ERR_INVALID, "hg_b_break_if outside any hg_b_loop");
    return;
  }
  if (b->stack[d].code != HG_OP_LOOP) {
    fail(b, HG_ERR_INVALID,
         "hg_b_break_if inside the hg_b_for at op %d: for loops have no break (use hg_b_loop "
         "with a counter variable)",
         b->stack[d].op);
    return;
  }
  int32_t i = new_op(b, HG_OP_BREAK_IF, &pred.id, 1, 0);
  if (i >= 0) b->ops[i].open = b->stack[d].op;
}

void hg_b_endloop(hg_builder_t *b) {
  close_region(b, HG_OP_LOOP, HG_OP_ENDLOOP, "hg_b_endloop");
}

hg_val_t hg_b_for(hg_builder_t *b, hg_val_t start, hg_val_t end, hg_val_t step) {
  if (!use(b, "hg_b_for", "start", start, HG_T_I32) || !use(b, "hg_b_for", "end", end, HG_T_I32) ||
      !use(b, "hg_b_for", "step", step, HG_T_I32))
    return HG_NONE;
  int32_t opd[3] = {start.id, end.id, step.id};
  int32_t i = new_op(b, HG_OP_FOR, opd, 3, 1);
  if (i < 0 || !push(b, HG_OP_FOR, i, "hg_b_for")) return HG_NONE;
  int32_t v = new_value(b, HG_T_I32, HG_VK_COUNTER, i, "i"); /* scope: the body */
  if (!v) return HG_NONE;
  set_result(b, i, 0, v);
  return (hg_val_t){v};
}

void hg_b_endfor(hg_builder_t *b) {
  close_region(b, HG_OP_FOR, HG_OP_ENDFOR, "hg_b_endfor");
}

void hg_b_return(hg_builder_t *b) {
  if (live(b)) emit0(b, HG_OP_RETURN, NULL, 0, NULL);
}

void hg_b_comment(hg_builder_t *b, const char *text) {
  if (!live(b) || !text) return;
  size_t len = strlen(text);
  if (len > 4096) len = 4096; /* a comment, not a payload */
  if (!grow(b, (void **)&b->strings, &b->cap_strings, (int64_t)b->nstrings + (int64_t)len + 1, 1))
    return;
  int32_t at = b->nstrings;
  memcpy(b->strings + at, text, len);
  b->strings[at + len] = '\0';
  b->nstrings += (int32_t)len + 1;
  hg_ir_op_t a = {0};
  a.u.comment = at;
  emit0(b, HG_OP_COMMENT, NULL, 0, &a);
}

/* ----------------------------------------------------------------------------- memory */

static const char *space_name(hg_space_t s) {
  return s == HG_GLOBAL ? "HG_GLOBAL" : s == HG_SHARED ? "HG_SHARED" : "HG_SHARED_CLUSTER";
}

static bool check_addr(hg_builder_t *b, const char *api, hg_space_t space, hg_val_t addr) {
  if (!live(b)) return false;
  if ((int)space < 0 || space > HG_SHARED_CLUSTER)
    return fail(b, HG_ERR_INVALID, "%s: %d is not an hg_space_t", api, (int)space);
  char role[64];
  snprintf(role, sizeof role, "the %s address", space_name(space));
  return use(b, api, role, addr, space == HG_GLOBAL ? HG_T_I64 : HG_T_I32);
}

/* Width rules shared by loads and stores: n in {1,2,4}, bits 8/16 only scalar into an I32,
 * at most 128 bits per access (PTX ISA, ld/st: vectors of up to 128 bits on sm_90). */
static bool check_width(hg_builder_t *b, const char *api, hg_type_t type, int bits, int n) {
  if (n != 1 && n != 2 && n != 4)
    return fail(b, HG_ERR_INVALID, "%s: vector width %d is not 1, 2 or 4", api, n);
  if (type != HG_T_I32 && type != HG_T_I64 && type != HG_T_F32)
    return fail(b, HG_ERR_INVALID, "%s: element type %s is not I32, I64 or F32", api,
                hg_ir_type_name(type));
  int tbits = type == HG_T_I64 ? 64 : 32;
  if (bits == 8 || bits == 16) {
    if (type != HG_T_I32)
      return fail(b, HG_ERR_INVALID, "%s: %d-bit accesses move an I32, not %s", api, bits,
                  hg_ir_type_name(type));
    if (n != 1)
      return fail(b, HG_ERR_INVALID, "%s: %d-bit accesses are scalar (n = 1), not vectors of %d",
                  api, bits, n);
  } else if (bits != 0 && bits != tbits) {
    return fail(b, HG_ERR_INVALID,
                "%s: bits = %d does not fit %s (8 or 16 for a narrow access, 0 or %d otherwise)",
                api, bits, hg_ir_type_name(type), tbits);
  }
  if (tbits * n > 128)
    return fail(b, HG_ERR_INVALID,
                "%s: a vector of %d %s is %d bits; sm_90 moves at most 128 bits per access", api, n,
                hg_ir_type_name(type), tbits * n);
  return true;
}

void hg_b_load(hg_builder_t *b, hg_space_t space, hg_type_t type, int bits, int n, hg_val_t addr,
               hg_val_t *out) {
  if (out && n >= 1 && n <= 4)
    for (int k = 0; k < n; k++) out[k] = HG_NONE;
  if (!check_addr(b, "hg_b_load", space, addr)) return;
  if (!check_width(b, "hg_b_load", type, bits, n)) return;
  if (!out) {
    fail(b, HG_ERR_INVALID, "hg_b_load: out is NULL");
    return;
  }
  int32_t i = new_op(b, HG_OP_LOAD, &addr.id, 1, n);
  if (i < 0) return;
  hg_ir_op_t *op = &b->ops[i];
  op->u.mem.space = space;
  op->u.mem.type = type;
  op->u.mem.bits = bits ? bits : (type == HG_T_I64 ? 64 : 32);
  op->u.mem.n = n;
  for (int k = 0; k < n; k++) {
    int32_t v = new_value(b, type, HG_VK_SSA, i, "ld");
    if (!v) return;
    set_result(b, i, k, v);
    out[k] = (hg_val_t){v};
  }
}

static void store(hg_builder_t *b, const char *api, hg_space_t space, int bits, int n,
                  hg_val_t addr, const hg_val_t *vals, bool cs) {
  if (!check_addr(b, api, space, addr)) return;
  if (n != 1 && n != 2 && n != 4) {
    fail(b, HG_ERR_INVALID, "%s: vector width %d is not 1, 2 or 4", api, n);
    return;
  }
  if (!vals) {
    fail(b, HG_ERR_INVALID, "%s: vals is NULL", api);
    return;
  }
  if (!use(b, api, "value 0", vals[0], HG_T_NONE)) return;
  hg_type_t type = type_of(b, vals[0]);
  if (!check_width(b, api, type, bits, n)) return;
  int32_t opd[5] = {addr.id, vals[0].id};
  for (int k = 1; k < n; k++) {
    char role[24];
    snprintf(role, sizeof role, "value %d", k);
    if (!use(b, api, role, vals[k], type)) return;
    opd[1 + k] = vals[k].id;
  }
  hg_ir_op_t a = {0};
  a.u.mem.space = space;
  a.u.mem.type = type;
  a.u.mem.bits = bits ? bits : (type == HG_T_I64 ? 64 : 32);
  a.u.mem.n = n;
  a.u.mem.cs = cs;
  emit0(b, HG_OP_STORE, opd, 1 + n, &a);
}

void hg_b_store(hg_builder_t *b, hg_space_t space, int bits, int n, hg_val_t addr,
                const hg_val_t *vals) {
  store(b, "hg_b_store", space, bits, n, addr, vals, false);
}

void hg_b_store_cs(hg_builder_t *b, int bits, int n, hg_val_t addr, const hg_val_t *vals) {
  store(b, "hg_b_store_cs", HG_GLOBAL, bits, n, addr, vals, true);
}

void hg_b_atomic_add_f32(hg_builder_t *b, hg_val_t addr, hg_val_t v) {
  hg_b_atomic_add_f32v(b, addr, 1, &v);
}

void hg_b_atomic_add_f32v(hg_builder_t *b, hg_val_t addr, int n, const hg_val_t *v) {
  if (n != 1 && n != 2 && n != 4) {
    fail(b, HG_ERR_INVALID, "hg_b_atomic_add_f32v: vector width %d is not 1, 2 or 4", n);
    return;
  }
  if (!v) {
    fail(b, HG_ERR_INVALID, "hg_b_atomic_add_f32v: the addends are NULL");
    return;
  }
  if (!use(b, "hg_b_atomic_add_f32v", "the global address", addr, HG_T_I64)) return;
  int32_t opd[5] = {addr.id};
  for (int k = 0; k < n; k++) {
    char role[24];
    snprintf(role, sizeof role, "addend %d", k);
    if (!use(b, "hg_b_atomic_add_f32v", role, v[k], HG_T_F32)) return;
    opd[1 + k] = v[k].id;
  }
  hg_ir_op_t a = {0};
  a.u.mem.n = n;
  emit0(b, HG_OP_ATOMIC_ADD_F32, opd, 1 + n, &a);
}

hg_val_t hg_b_atomic_add_u32(hg_builder_t *b, hg_val_t addr, hg_val_t v) {
  if (!use(b, "hg_b_atomic_add_u32", "the global address", addr, HG_T_I64) ||
      !use(b, "hg_b_atomic_add_u32", "the addend", v, HG_T_I32))
    return HG_NONE;
  int32_t opd[2] = {addr.id, v.id};
  return emit1(b, HG_OP_ATOMIC_ADD_U32, opd, 2, HG_T_I32, "old", NULL);
}

/* The element types hg_b_red takes for op: those of cp.reduce.async.bulk.tensor (PTX ISA;
 * the sm90 layer's hg_tma_reduce_check), each of which the PTX ISA's red (or, for 16-bit
 * float min/max, atom.cas) can reduce one element of. */
static bool red_pair_ok(hg_reduce_op_t op, hg_dtype_t t, const char **allowed) {
  switch (op) {
  case HG_RED_ADD:
    *allowed = "u32, s32, u64, f32, f16 and bf16";
    return t == HG_U32 || t == HG_S32 || t == HG_U64 || t == HG_F32 || t == HG_F16 || t == HG_BF16;
  case HG_RED_MIN:
  case HG_RED_MAX:
    *allowed = "u32, s32, f16 and bf16";
    return t == HG_U32 || t == HG_S32 || t == HG_F16 || t == HG_BF16;
  case HG_RED_INC:
  case HG_RED_DEC:
    *allowed = "u32 only";
    return t == HG_U32;
  default: /* and, or, xor */
    *allowed = "u32, s32 and u64";
    return t == HG_U32 || t == HG_S32 || t == HG_U64;
  }
}

/* min/max.f16 and .bf16 without .NaN return the other operand when one is NaN, the
 * semantics of the TMA reduction (PTX ISA "min", "max"; sm90.h's model); the plain
 * ld.global only seeds the loop, which the CAS corrects. */
#define HG_RED_CAS(minmax, type)                                                                   \
  "{\n"                                                                                            \
  ".reg .b64 %hg_a;\n"                                                                             \
  ".reg .b16 %hg_v, %hg_old, %hg_new, %hg_seen;\n"                                                 \
  ".reg .pred %hg_retry;\n"                                                                        \
  "cvta.to.global.u64 %hg_a, $0;\n"                                                                \
  "cvt.u16.u32 %hg_v, $1;\n"                                                                       \
  "ld.global.b16 %hg_old, [%hg_a];\n"                                                              \
  "hg_red_cas:\n" minmax "." type " %hg_new, %hg_old, %hg_v;\n"                                    \
  "atom.global.cas.b16 %hg_seen, [%hg_a], %hg_old, %hg_new;\n"                                     \
  "setp.ne.b16 %hg_retry, %hg_seen, %hg_old;\n"                                                    \
  "mov.b16 %hg_old, %hg_seen;\n"                                                                   \
  "@%hg_retry bra hg_red_cas;\n"                                                                   \
  "}\n"

const char *hg_ir_red_cas_ptx(hg_reduce_op_t op, hg_dtype_t t) {
  if ((op != HG_RED_MIN && op != HG_RED_MAX) || (t != HG_F16 && t != HG_BF16)) return NULL;
  if (op == HG_RED_MIN) return t == HG_F16 ? HG_RED_CAS("min", "f16") : HG_RED_CAS("min", "bf16");
  return t == HG_F16 ? HG_RED_CAS("max", "f16") : HG_RED_CAS("max", "bf16");
}

void hg_b_red(hg_builder_t *b, hg_reduce_op_t op, hg_dtype_t t, hg_val_t addr, hg_val_t v) {
  static const char *const names[] = {"add", "min", "max", "inc", "dec", "and", "or", "xor"};
  if (!live(b)) return;
  if ((int)op < 0 || op > HG_RED_XOR) {
    fail(b, HG_ERR_INVALID, "hg_b_red: %d is not an hg_reduce_op_t", (int)op);
    return;
  }
  if ((int)t < 0 || t >= HG_DTYPE_COUNT) {
    fail(b, HG_ERR_INVALID, "hg_b_red: %d is not an hg_dtype_t", (int)t);
    return;
  }
  const char *allowed = "";
  if (!red_pair_ok(op, t, &allowed)) {
    fail(b, HG_ERR_INVALID,
         "hg_b_red: the %s reduction takes %s, not %s (the element types "
         "cp.reduce.async.bulk.tensor takes for it)",
         names[op], allowed, hg_dtype_name(t));
    return;
  }
  const hg_type_t vt = t == HG_U64 ? HG_T_I64 : t == HG_F32 ? HG_T_F32 : HG_T_I32;
  char role[64];
  snprintf(role, sizeof role, "the %s operand", hg_dtype_name(t));
  if (!use(b, "hg_b_red", "the global address", addr, HG_T_I64) || !use(b, "hg_b_red", role, v, vt))
    return;
  int32_t opd[2] = {addr.id, v.id};
  hg_ir_op_t a = {0};
  a.u.red.op = op;
  a.u.red.dtype = t;
  emit0(b, HG_OP_RED, opd, 2, &a);
}

hg_val_t hg_b_redux_sync(hg_builder_t *b, hg_reduce_op_t op, hg_val_t v) {
  if (!live(b)) return HG_NONE;
  if (op != HG_RED_ADD && op != HG_RED_MIN && op != HG_RED_MAX && op != HG_RED_AND &&
      op != HG_RED_OR && op != HG_RED_XOR) {
    fail(b, HG_ERR_INVALID,
         "hg_b_redux_sync: redux.sync reduces with add, min, max, and, or or xor, not op %d",
         (int)op);
    return HG_NONE;
  }
  if (!use(b, "hg_b_redux_sync", "the lane's value", v, HG_T_I32)) return HG_NONE;
  hg_ir_op_t a = {0};
  a.u.red.op = op;
  a.u.red.dtype = HG_U32;
  return emit1(b, HG_OP_REDUX, &v.id, 1, HG_T_I32, "redux", &a);
}

hg_val_t hg_b_mapa(hg_builder_t *b, hg_val_t smem_addr, hg_val_t cta_rank) {
  if (!use(b, "hg_b_mapa", "the shared::cta address", smem_addr, HG_T_I32) ||
      !use(b, "hg_b_mapa", "the CTA rank", cta_rank, HG_T_I32))
    return HG_NONE;
  int32_t opd[2] = {smem_addr.id, cta_rank.id};
  return emit1(b, HG_OP_MAPA, opd, 2, HG_T_I32, "remote", NULL);
}

/* ----------------------------------------------------------------------------- sync */

static void barrier(hg_builder_t *b, hg_ir_opcode_t code, const char *api, int id, int threads,
                    bool allow_all) {
  if (!live(b)) return;
  /* 16 named barriers per CTA; counts are whole warps (PTX ISA, bar/barrier). */
  if (id < 0 || id > 15) {
    fail(b, HG_ERR_INVALID, "%s: barrier id %d is outside 0..15", api, id);
    return;
  }
  if (threads == 0 && !allow_all) {
    fail(b, HG_ERR_INVALID,
         "%s: threads must be a positive multiple of 32 (bar.arrive has no whole-CTA form)", api);
    return;
  }
  if (threads < 0 || threads > 1024 || threads % 32) {
    fail(b, HG_ERR_INVALID, "%s: thread count %d is not a multiple of 32 in %d..1024", api, threads,
         allow_all ? 0 : 32);
    return;
  }
  hg_ir_op_t a = {0};
  a.u.bar.id = id;
  a.u.bar.threads = threads;
  emit0(b, code, NULL, 0, &a);
}

void hg_b_bar_sync(hg_builder_t *b, int id, int threads) {
  barrier(b, HG_OP_BAR_SYNC, "hg_b_bar_sync", id, threads, true);
}
void hg_b_bar_arrive(hg_builder_t *b, int id, int threads) {
  barrier(b, HG_OP_BAR_ARRIVE, "hg_b_bar_arrive", id, threads, false);
}

void hg_b_fence_proxy_async(hg_builder_t *b) {
  if (live(b)) emit0(b, HG_OP_FENCE_PROXY_ASYNC, NULL, 0, NULL);
}

void hg_b_fence_gpu(hg_builder_t *b) {
  if (live(b)) emit0(b, HG_OP_FENCE_GPU, NULL, 0, NULL);
}
void hg_b_griddep_wait(hg_builder_t *b) {
  if (live(b)) emit0(b, HG_OP_GRIDDEP_WAIT, NULL, 0, NULL);
}
void hg_b_griddep_launch_dependents(hg_builder_t *b) {
  if (live(b)) emit0(b, HG_OP_GRIDDEP_LAUNCH, NULL, 0, NULL);
}
void hg_b_fence_mbarrier_init(hg_builder_t *b) {
  if (live(b)) emit0(b, HG_OP_FENCE_MBAR_INIT, NULL, 0, NULL);
}
void hg_b_cluster_arrive(hg_builder_t *b, bool relaxed) {
  if (!live(b)) return;
  hg_ir_op_t a = {0};
  a.u.relaxed = relaxed;
  emit0(b, HG_OP_CLUSTER_ARRIVE, NULL, 0, &a);
}
void hg_b_cluster_wait(hg_builder_t *b) {
  if (live(b)) emit0(b, HG_OP_CLUSTER_WAIT, NULL, 0, NULL);
}
hg_val_t hg_b_elect_sync(hg_builder_t *b) {
  if (!live(b)) return HG_NONE;
  return emit1(b, HG_OP_ELECT_SYNC, NULL, 0, HG_T_PRED, "elected", NULL);
}

static void mbar2(hg_builder_t *b, hg_ir_opcode_t code, const char *api, hg_val_t addr,
                  const char *role, hg_val_t x) {
  if (!use(b, api, "the mbarrier address", addr, HG_T_I32)) return;
  if (role && !use(b, api, role, x, HG_T_I32)) return;
  int32_t opd[2] = {addr.id, x.id};
  emit0(b, code, opd, role ? 2 : 1, NULL);
}

void hg_b_mbar_init(hg_builder_t *b, hg_val_t addr, hg_val_t count) {
  mbar2(b, HG_OP_MBAR_INIT, "hg_b_mbar_init", addr, "the arrival count", count);
}
void hg_b_mbar_arrive(hg_builder_t *b, hg_val_t addr) {
  mbar2(b, HG_OP_MBAR_ARRIVE, "hg_b_mbar_arrive", addr, NULL, HG_NONE);
}
void hg_b_mbar_arrive_cluster(hg_builder_t *b, hg_val_t addr, hg_val_t cta_rank) {
  mbar2(b, HG_OP_MBAR_ARRIVE_CLUSTER, "hg_b_mbar_arrive_cluster", addr, "the CTA rank", cta_rank);
}
void hg_b_mbar_arrive_expect_tx(hg_builder_t *b, hg_val_t addr, hg_val_t bytes) {
  mbar2(b, HG_OP_MBAR_ARRIVE_EXPECT_TX, "hg_b_mbar_arrive_expect_tx", addr,
        "the transaction byte count", bytes);
}
void hg_b_mbar_expect_tx(hg_builder_t *b, hg_val_t addr, hg_val_t bytes) {
  mbar2(b, HG_OP_MBAR_EXPECT_TX, "hg_b_mbar_expect_tx", addr, "the transaction byte count", bytes);
}
hg_val_t hg_b_mbar_try_wait(hg_builder_t *b, hg_val_t addr, hg_val_t parity) {
  if (!use(b, "hg_b_mbar_try_wait", "the mbarrier address", addr, HG_T_I32) ||
      !use(b, "hg_b_mbar_try_wait", "the phase parity", parity, HG_T_I32))
    return HG_NONE;
  int32_t opd[2] = {addr.id, parity.id};
  return emit1(b, HG_OP_MBAR_TRY_WAIT, opd, 2, HG_T_PRED, "phase_done", NULL);
}
void hg_b_mbar_wait(hg_builder_t *b, hg_val_t addr, hg_val_t parity) {
  mbar2(b, HG_OP_MBAR_WAIT, "hg_b_mbar_wait", addr, "the phase parity", parity);
}

/* ----------------------------------------------------------------------------- TMA */

hg_val_t hg_b_cache_policy(hg_builder_t *b, hg_cache_policy_t p) {
  if (!live(b)) return HG_NONE;
  if ((int)p < 0 || p > HG_EVICT_LAST) {
    fail(b, HG_ERR_INVALID, "hg_b_cache_policy: %d is not an hg_cache_policy_t", (int)p);
    return HG_NONE;
  }
  hg_ir_op_t a = {0};
  a.u.policy = p;
  static const char *const hints[] = {"evict_normal", "evict_first", "evict_last"};
  return emit1(b, HG_OP_CACHE_POLICY, NULL, 0, HG_T_I64, hints[p], &a);
}

/* Tensor map, rank and coordinates: shared by all TMA ops. Writes the coordinate ids. */
static bool check_tma(hg_builder_t *b, const char *api, hg_val_t tmap, int rank,
                      const hg_val_t *coords, int32_t *out) {
  if (!use(b, api, "the tensor map", tmap, HG_T_TMAP)) return false;
  if (rank < 1 || rank > HG_TMA_MAX_RANK)
    return fail(b, HG_ERR_INVALID, "%s: rank %d is outside 1..5", api, rank);
  if (!coords) return fail(b, HG_ERR_INVALID, "%s: coords is NULL", api);
  for (int k = 0; k < rank; k++) {
    char role[24];
    snprintf(role, sizeof role, "coordinate %d", k);
    if (!use(b, api, role, coords[k], HG_T_I32)) return false;
    out[k] = coords[k].id;
  }
  return true;
}

void hg_b_tma_load(hg_builder_t *b, hg_val_t tmap, hg_val_t smem_dst, hg_val_t bar, int rank,
                   const hg_val_t *coords, hg_val_t mcast_mask, hg_val_t cache_hint) {
  const char *api = "hg_b_tma_load";
  int32_t opd[HG_IR_TMA_LOAD_COORDS + HG_TMA_MAX_RANK];
  if (!check_tma(b, api, tmap, rank, coords, opd + HG_IR_TMA_LOAD_COORDS)) return;
  if (!use(b, api, "the shared-memory destination", smem_dst, HG_T_I32) ||
      !use(b, api, "the mbarrier address", bar, HG_T_I32))
    return;
  if (mcast_mask.id && !use(b, api, "the multicast mask", mcast_mask, HG_T_I32)) return;
  if (cache_hint.id && !use(b, api, "the cache hint", cache_hint, HG_T_I64)) return;
  opd[HG_IR_TMA_LOAD_TMAP] = tmap.id;
  opd[HG_IR_TMA_LOAD_DST] = smem_dst.id;
  opd[HG_IR_TMA_LOAD_BAR] = bar.id;
  opd[HG_IR_TMA_LOAD_MCAST] = mcast_mask.id;
  opd[HG_IR_TMA_LOAD_HINT] = cache_hint.id;
  hg_ir_op_t a = {0};
  a.u.tma.rank = rank;
  emit0(b, HG_OP_TMA_LOAD, opd, HG_IR_TMA_LOAD_COORDS + rank, &a);
}

void hg_b_tma_prefetch(hg_builder_t *b, hg_val_t tmap, int rank, const hg_val_t *coords) {
  int32_t opd[1 + HG_TMA_MAX_RANK];
  if (!check_tma(b, "hg_b_tma_prefetch", tmap, rank, coords, opd + HG_IR_TMA_PREFETCH_COORDS))
    return;
  opd[0] = tmap.id;
  hg_ir_op_t a = {0};
  a.u.tma.rank = rank;
  emit0(b, HG_OP_TMA_PREFETCH, opd, 1 + rank, &a);
}

static void tma_out(hg_builder_t *b, hg_ir_opcode_t code, const char *api, hg_reduce_op_t red,
                    hg_val_t tmap, hg_val_t src, int rank, const hg_val_t *coords,
                    hg_val_t cache_hint) {
  int32_t opd[HG_IR_TMA_STORE_COORDS + HG_TMA_MAX_RANK];
  if (!check_tma(b, api, tmap, rank, coords, opd + HG_IR_TMA_STORE_COORDS)) return;
  if (!use(b, api, "the shared-memory source", src, HG_T_I32)) return;
  if (cache_hint.id && !use(b, api, "the cache hint", cache_hint, HG_T_I64)) return;
  opd[0] = tmap.id;
  opd[HG_IR_TMA_STORE_SRC] = src.id;
  opd[HG_IR_TMA_STORE_HINT] = cache_hint.id;
  hg_ir_op_t a = {0};
  a.u.tma.rank = rank;
  a.u.tma.red = red;
  emit0(b, code, opd, HG_IR_TMA_STORE_COORDS + rank, &a);
}

void hg_b_tma_store(hg_builder_t *b, hg_val_t tmap, hg_val_t smem_src, int rank,
                    const hg_val_t *coords) {
  tma_out(b, HG_OP_TMA_STORE, "hg_b_tma_store", HG_RED_ADD, tmap, smem_src, rank, coords, HG_NONE);
}

void hg_b_tma_store_hint(hg_builder_t *b, hg_val_t tmap, hg_val_t smem_src, int rank,
                         const hg_val_t *coords, hg_val_t cache_hint) {
  tma_out(b, HG_OP_TMA_STORE, "hg_b_tma_store_hint", HG_RED_ADD, tmap, smem_src, rank, coords,
          cache_hint);
}

void hg_b_tma_reduce(hg_builder_t *b, hg_reduce_op_t op, hg_val_t tmap, hg_val_t smem_src, int rank,
                     const hg_val_t *coords) {
  if (!live(b)) return;
  if ((int)op < 0 || op > HG_RED_XOR) {
    fail(b, HG_ERR_INVALID, "hg_b_tma_reduce: %d is not an hg_reduce_op_t", (int)op);
    return;
  }
  tma_out(b, HG_OP_TMA_REDUCE, "hg_b_tma_reduce", op, tmap, smem_src, rank, coords, HG_NONE);
}

void hg_b_bulk_commit(hg_builder_t *b) {
  if (live(b)) emit0(b, HG_OP_BULK_COMMIT, NULL, 0, NULL);
}

/* The pending-group count of a wait_group, an immediate: hopgen's pipelines are far shallower
 * than 64 stages. */
static bool check_pending(hg_builder_t *b, const char *api, int n) {
  if (!live(b)) return false;
  if (n < 0 || n > 63)
    return fail(b, HG_ERR_INVALID, "%s: %d pending groups is outside 0..63", api, n);
  return true;
}

void hg_b_bulk_wait(hg_builder_t *b, int n, bool read) {
  if (!check_pending(b, "hg_b_bulk_wait", n)) return;
  hg_ir_op_t a = {0};
  a.u.bulk_wait.n = n;
  a.u.bulk_wait.read = read;
  emit0(b, HG_OP_BULK_WAIT, NULL, 0, &a);
}

void hg_b_tmap_prefetch(hg_builder_t *b, hg_val_t tmap) {
  if (!use(b, "hg_b_tmap_prefetch", "the tensor map", tmap, HG_T_TMAP)) return;
  emit0(b, HG_OP_TMAP_PREFETCH, &tmap.id, 1, NULL);
}

/* ----------------------------------------------------------------------------- cp.async */

/* The value of an integer constant (hg_b_i32/i64), for checks that can be made early. */
static bool const_int(const hg_builder_t *b, hg_val_t v, int64_t *value) {
  const hg_ir_value_t *val = &b->values[v.id];
  if (val->kind != HG_VK_SSA || b->ops[val->def].code != HG_OP_CONST) return false;
  *value = b->ops[val->def].u.cnst.i;
  return true;
}

void hg_b_cp_async(hg_builder_t *b, int bytes, hg_val_t smem_dst, hg_val_t gmem_src,
                   hg_val_t src_bytes) {
  const char *api = "hg_b_cp_async";
  if (!live(b)) return;
  /* PTX ISA, cp.async: cp-size is 4, 8 or 16 (and .cg takes 16 only) */
  if (bytes != 4 && bytes != 8 && bytes != 16) {
    fail(b, HG_ERR_INVALID, "%s: %d bytes is not a cp.async size (4, 8 or 16)", api, bytes);
    return;
  }
  if (!use(b, api, "the shared-memory destination", smem_dst, HG_T_I32) ||
      !use(b, api, "the global source", gmem_src, HG_T_I64))
    return;
  if (src_bytes.id) {
    if (!use(b, api, "the source byte count", src_bytes, HG_T_I32)) return;
    int64_t c;
    if (const_int(b, src_bytes, &c) && (c < 0 || c > bytes)) {
      fail(b, HG_ERR_INVALID,
           "%s: the source byte count %lld is outside 0..%d (it reads that many of the %d "
           "bytes and zero-fills the rest; more is undefined behaviour)",
           api, (long long)c, bytes, bytes);
      return;
    }
  }
  int32_t opd[3] = {smem_dst.id, gmem_src.id, src_bytes.id};
  hg_ir_op_t a = {0};
  a.u.cp_async.bytes = bytes;
  emit0(b, HG_OP_CP_ASYNC, opd, 3, &a);
}

void hg_b_cp_async_commit(hg_builder_t *b) {
  if (live(b)) emit0(b, HG_OP_CP_ASYNC_COMMIT, NULL, 0, NULL);
}

void hg_b_cp_async_wait(hg_builder_t *b, int n) {
  if (!check_pending(b, "hg_b_cp_async_wait", n)) return;
  hg_ir_op_t a = {0};
  a.u.wait_n = n;
  emit0(b, HG_OP_CP_ASYNC_WAIT, NULL, 0, &a);
}

void hg_b_cp_async_mbar_arrive(hg_builder_t *b, hg_val_t addr) {
  mbar2(b, HG_OP_CP_ASYNC_MBAR_ARRIVE, "hg_b_cp_async_mbar_arrive", addr, NULL, HG_NONE);
}

/* ----------------------------------------------------------------------------- wgmma */

typedef enum { FAM_NONE, FAM_F16, FAM_BF16, FAM_TF32, FAM_F8, FAM_I8 } family_t;

static family_t family(hg_dtype_t t) {
  switch (t) {
  case HG_F16:
    return FAM_F16;
  case HG_BF16:
    return FAM_BF16;
  case HG_TF32:
    return FAM_TF32;
  case HG_E4M3:
  case HG_E5M2:
    return FAM_F8;
  case HG_S8:
  case HG_U8:
    return FAM_I8;
  default:
    return FAM_NONE;
  }
}

int hg_ir_wgmma_k(const hg_wgmma_op_t *op) {
  switch (family(op->a)) {
  case FAM_F16:
  case FAM_BF16:
    return 16;
  case FAM_TF32:
    return 8;
  case FAM_F8:
  case FAM_I8:
    return 32;
  default:
    return 0;
  }
}

int hg_ir_wgmma_num_acc(const hg_wgmma_op_t *op) {
  return op->acc == HG_F16 ? op->n / 4 : op->n / 2;
}

int hg_ir_wgmma_num_a(const hg_wgmma_op_t *op) {
  return op->a_regs ? 4 : 1;
}

hg_status_t hg_ir_wgmma_validate(const hg_wgmma_op_t *op) {
  family_t fa = family(op->a), fb = family(op->b);
  const char *an = hg_dtype_name(op->a), *bn = hg_dtype_name(op->b), *cn = hg_dtype_name(op->acc);
  if (fa == FAM_NONE || fb == FAM_NONE || fa != fb)
    return hg_error(HG_ERR_INVALID,
                    "%s x %s is not a wgmma type combination (A and B are both f16, both bf16, "
                    "both tf32, both 8-bit floats e4m3/e5m2, or both 8-bit integers s8/u8)",
                    an, bn);
  bool acc_ok;
  const char *acc_rule;
  switch (fa) {
  case FAM_F16:
  case FAM_F8:
    acc_ok = op->acc == HG_F16 || op->acc == HG_F32;
    acc_rule = "f16 or f32";
    break;
  case FAM_I8:
    acc_ok = op->acc == HG_S32;
    acc_rule = "s32";
    break;
  default:
    acc_ok = op->acc == HG_F32;
    acc_rule = "f32";
    break;
  }
  if (!acc_ok)
    return hg_error(HG_ERR_INVALID, "accumulator %s is not allowed for %s x %s (it must be %s)", cn,
                    an, bn, acc_rule);
  /* N: multiples of 8 up to 256; integer types have 8, 16, 24 and then multiples of 16
   * (PTX ISA, wgmma.mma_async, "Matrix shape"). */
  bool n_ok;
  if (fa == FAM_I8)
    n_ok = op->n == 8 || op->n == 16 || op->n == 24 ||
           (op->n >= 32 && op->n <= 256 && op->n % 16 == 0);
  else
    n_ok = op->n >= 8 && op->n <= 256 && op->n % 8 == 0;
  if (!n_ok)
    return hg_error(HG_ERR_INVALID, "n = %d is not an N that wgmma offers for %s x %s (%s)", op->n,
                    an, bn,
                    fa == FAM_I8 ? "8, 16, 24, then multiples of 16 up to 256"
                                 : "multiples of 8 from 8 to 256");
  bool sixteen = fa == FAM_F16 || fa == FAM_BF16;
  if ((op->trans_a || op->trans_b) && !sixteen) {
    const char *which = op->trans_a ? "trans_a" : "trans_b";
    hg_dtype_t t = op->trans_a ? op->a : op->b;
    return hg_error(HG_ERR_INVALID,
                    "%s needs 16-bit operands (f16 or bf16); %s operands must be K-major, so the "
                    "transpose flag does not exist for them",
                    which, hg_dtype_name(t));
  }
  if (op->trans_a && op->a_regs)
    return hg_error(HG_ERR_INVALID,
                    "trans_a with A from registers: a register fragment has a fixed layout, "
                    "only an A read from shared memory (descriptor) can be MN-major");
  return hg_ok();
}

void hg_b_wgmma_fence(hg_builder_t *b) {
  if (!live(b)) return;
  b->uses_wgmma = true;
  emit0(b, HG_OP_WGMMA_FENCE, NULL, 0, NULL);
}

void hg_b_wgmma_commit(hg_builder_t *b) {
  if (!live(b)) return;
  b->uses_wgmma = true;
  emit0(b, HG_OP_WGMMA_COMMIT, NULL, 0, NULL);
}

void hg_b_wgmma_wait(hg_builder_t *b, int n) {
  if (!live(b)) return;
  /* wgmma.wait_group N: N is an immediate; hopgen pipelines are far shallower than 8 */
  if (n < 0 || n > 7) {
    fail(b, HG_ERR_INVALID, "hg_b_wgmma_wait: %d pending groups is outside 0..7", n);
    return;
  }
  b->uses_wgmma = true;
  hg_ir_op_t a = {0};
  a.u.wait_n = n;
  emit0(b, HG_OP_WGMMA_WAIT, NULL, 0, &a);
}

/* The accumulators of an MMA instruction (`what`, which overwrites them): n distinct variables
 * of type t, visible here; their ids go to opd. */
static bool check_accumulators(hg_builder_t *b, const char *api, const char *what,
                               const hg_val_t *acc, int n, hg_type_t t, int32_t *opd) {
  char role[40], d[160];
  for (int k = 0; k < n; k++) {
    snprintf(role, sizeof role, "accumulator %d", k);
    if (!use(b, api, role, acc[k], t)) return false;
    if (b->values[acc[k].id].kind != HG_VK_VAR)
      return fail(b, HG_ERR_INVALID,
                  "%s: accumulator %d is %s, not a variable (%s overwrites its accumulators, so "
                  "they must come from hg_b_var)",
                  api, k, describe(b, acc[k].id, d, sizeof d), what);
    for (int j = 0; j < k; j++)
      if (acc[j].id == acc[k].id)
        return fail(b, HG_ERR_INVALID, "%s: accumulators %d and %d are the same variable #%d", api,
                    j, k, acc[k].id);
    opd[k] = acc[k].id;
  }
  return true;
}

/* Fragment registers: n I32 values named "<what> <k>"; their ids go to opd. */
static bool check_regs(hg_builder_t *b, const char *api, const char *what, const hg_val_t *r, int n,
                       int32_t *opd) {
  char role[40];
  for (int k = 0; k < n; k++) {
    snprintf(role, sizeof role, "%s %d", what, k);
    if (!use(b, api, role, r[k], HG_T_I32)) return false;
    opd[k] = r[k].id;
  }
  return true;
}

void hg_b_wgmma(hg_builder_t *b, const hg_wgmma_op_t *op, const hg_val_t *acc, const hg_val_t *a,
                hg_val_t desc_b, hg_val_t scale_d) {
  const char *api = "hg_b_wgmma";
  if (!live(b)) return;
  if (!op || !acc || !a) {
    fail(b, HG_ERR_INVALID, "%s: op, acc and a must not be NULL", api);
    return;
  }
  hg_status_t s = hg_ir_wgmma_validate(op);
  if (s.code != HG_OK) {
    fail(b, s.code, "%s: %s", api, s.msg);
    return;
  }
  int nacc = hg_ir_wgmma_num_acc(op), na = hg_ir_wgmma_num_a(op);
  hg_type_t acc_type = op->acc == HG_F32 ? HG_T_F32 : HG_T_I32;
  int32_t *opd = malloc(sizeof *opd * (size_t)(nacc + na + 2));
  if (!opd) {
    fail(b, HG_ERR_NOMEM, "%s: out of memory", api);
    return;
  }
  if (!check_accumulators(b, api, "wgmma", acc, nacc, acc_type, opd)) goto out;
  if (op->a_regs) {
    if (!check_regs(b, api, "A fragment register", a, na, opd + nacc)) goto out;
  } else {
    if (!use(b, api, "the A descriptor", a[0], HG_T_I64)) goto out;
    opd[nacc] = a[0].id;
  }
  if (!use(b, api, "the B descriptor", desc_b, HG_T_I64) ||
      !use(b, api, "scale_d", scale_d, HG_T_PRED))
    goto out;
  opd[nacc + na] = desc_b.id;
  opd[nacc + na + 1] = scale_d.id;
  int32_t i = new_op(b, HG_OP_WGMMA, opd, nacc + na + 2, nacc);
  if (i >= 0) {
    b->ops[i].u.wgmma = *op;
    for (int k = 0; k < nacc; k++) set_result(b, i, k, acc[k].id);
    b->uses_wgmma = true;
  }
out:
  free(opd);
}

void hg_b_setmaxnreg(hg_builder_t *b, bool increase, int regs) {
  if (!live(b)) return;
  /* PTX ISA, setmaxnreg: the count is in 24..256 and a multiple of 8 */
  if (regs < 24 || regs > 256 || regs % 8) {
    fail(b, HG_ERR_INVALID, "hg_b_setmaxnreg: %d registers is not a multiple of 8 in 24..256",
         regs);
    return;
  }
  b->uses_setmaxnreg = true;
  hg_ir_op_t a = {0};
  a.u.maxnreg.increase = increase;
  a.u.maxnreg.regs = regs;
  emit0(b, HG_OP_SETMAXNREG, NULL, 0, &a);
}

/* What stmatrix and ldmatrix share: x1, x2 or x4 8x8 matrices of 16-bit elements, an I32
 * shared::cta address, and a register array (`regs` names it). */
static bool check_matrix(hg_builder_t *b, const char *api, int num, hg_val_t smem_addr,
                         const void *regs, const char *regs_name) {
  if (!live(b)) return false;
  if (num != 1 && num != 2 && num != 4)
    return fail(b, HG_ERR_INVALID, "%s: %d matrices is not x1, x2 or x4", api, num);
  if (!regs) return fail(b, HG_ERR_INVALID, "%s: %s is NULL", api, regs_name);
  return use(b, api, "the shared::cta address", smem_addr, HG_T_I32);
}

void hg_b_stmatrix(hg_builder_t *b, int num, bool trans, hg_val_t smem_addr, const hg_val_t *regs) {
  const char *api = "hg_b_stmatrix";
  if (!check_matrix(b, api, num, smem_addr, regs, "regs")) return;
  int32_t opd[5] = {smem_addr.id};
  if (!check_regs(b, api, "register", regs, num, opd + 1)) return;
  hg_ir_op_t a = {0};
  a.u.matrix.num = num;
  a.u.matrix.trans = trans;
  emit0(b, HG_OP_STMATRIX, opd, 1 + num, &a);
}

void hg_b_ldmatrix(hg_builder_t *b, int num, bool trans, hg_val_t smem_addr, hg_val_t *out) {
  if (out && num >= 1 && num <= 4)
    for (int k = 0; k < num; k++) out[k] = HG_NONE;
  if (!check_matrix(b, "hg_b_ldmatrix", num, smem_addr, out, "out")) return;
  int32_t i = new_op(b, HG_OP_LDMATRIX, &smem_addr.id, 1, num);
  if (i < 0) return;
  b->ops[i].u.matrix.num = num;
  b->ops[i].u.matrix.trans = trans;
  for (int k = 0; k < num; k++) {
    int32_t v = new_value(b, HG_T_I32, HG_VK_SSA, i, "ldm");
    if (!v) return;
    set_result(b, i, k, v);
    out[k] = (hg_val_t){v};
  }
}

/* ----------------------------------------------------------------------------- mma.sync */

static bool is_fp8(hg_dtype_t t) {
  return t == HG_E4M3 || t == HG_E5M2;
}

hg_status_t hg_ir_mma_sync_validate(const hg_mma_sync_op_t *op) {
  /* PTX ISA, mma.sync: for fp8 (sm_89+, PTX ISA 8.4) the shape m16n8k32, e4m3 and e5m2 in any
   * mix, into f32; the same four A and two B registers as m16n8k16's (four 8-bit elements each) */
  if (is_fp8(op->a) || is_fp8(op->b)) {
    if (op->m != 16 || op->n != 8 || op->k != 32)
      return hg_error(HG_ERR_INVALID,
                      "shape m%dn%dk%d with fp8 operands: hopgen emits fp8 mma.sync as m16n8k32",
                      op->m, op->n, op->k);
    if (!is_fp8(op->a) || !is_fp8(op->b))
      return hg_error(HG_ERR_INVALID,
                      "%s x %s is not an fp8 mma.sync type pair (A and B each e4m3 or e5m2)",
                      hg_dtype_name(op->a), hg_dtype_name(op->b));
    if (op->acc != HG_F32)
      return hg_error(HG_ERR_INVALID,
                      "accumulator %s is not allowed: fp8 mma.sync accumulates in f32",
                      hg_dtype_name(op->acc));
    return hg_ok();
  }
  /* Of the shapes it has for 16-bit floats (m8n8k4, m16n8k8, m16n8k16), hopgen emits
   * m16n8k16, whose fragments ldmatrix x4 (A) and x2 (B) load directly */
  if (op->m != 16 || op->n != 8 || op->k != 16)
    return hg_error(HG_ERR_INVALID,
                    "shape m%dn%dk%d is not m16n8k16, the one mma.sync shape hopgen emits", op->m,
                    op->n, op->k);
  if (op->a != op->b || (op->a != HG_BF16 && op->a != HG_F16))
    return hg_error(HG_ERR_INVALID,
                    "%s x %s is not an mma.sync m16n8k16 type pair hopgen emits (A and B both "
                    "bf16 or both f16)",
                    hg_dtype_name(op->a), hg_dtype_name(op->b));
  if (op->acc != HG_F32)
    return hg_error(HG_ERR_INVALID,
                    "accumulator %s is not allowed: hopgen's mma.sync accumulates %s x %s in f32",
                    hg_dtype_name(op->acc), hg_dtype_name(op->a), hg_dtype_name(op->b));
  return hg_ok();
}

void hg_b_mma_sync(hg_builder_t *b, const hg_mma_sync_op_t *op, const hg_val_t *acc,
                   const hg_val_t *a, const hg_val_t *bf) {
  const char *api = "hg_b_mma_sync";
  if (!live(b)) return;
  if (!op || !acc || !a || !bf) {
    fail(b, HG_ERR_INVALID, "%s: op, acc, a and bf must not be NULL", api);
    return;
  }
  hg_status_t s = hg_ir_mma_sync_validate(op);
  if (s.code != HG_OK) {
    fail(b, s.code, "%s: %s", api, s.msg);
    return;
  }
  enum { NACC = HG_IR_MMA_SYNC_ACC, NA = HG_IR_MMA_SYNC_A, NB = HG_IR_MMA_SYNC_B };
  int32_t opd[NACC + NA + NB];
  if (!check_accumulators(b, api, "mma.sync", acc, NACC, HG_T_F32, opd) ||
      !check_regs(b, api, "A fragment register", a, NA, opd + NACC) ||
      !check_regs(b, api, "B fragment register", bf, NB, opd + NACC + NA))
    return;
  int32_t i = new_op(b, HG_OP_MMA_SYNC, opd, NACC + NA + NB, NACC);
  if (i < 0) return;
  b->ops[i].u.mma_sync = *op;
  for (int k = 0; k < NACC; k++) set_result(b, i, k, acc[k].id);
}

/* ----------------------------------------------------------------------------- completeness */

hg_status_t hg_ir_check_complete(const hg_builder_t *b) {
  if (!b) return hg_error(HG_ERR_INVALID, "the builder is NULL");
  if (b->status.code != HG_OK) return b->status;
  if (b->depth > 0) {
    const hg_ir_frame_t *f = &b->stack[b->depth - 1];
    return hg_error(HG_ERR_INVALID,
                    "kernel '%s' is incomplete: the %s at op %d is never closed by %s (regions "
                    "are unbalanced)",
                    b->name, opener_api(f->code), f->op, closer_api(f->code));
  }
  /* setmaxnreg only takes effect when ptxas knows the register count at entry, which
   * needs the thread count and a CTAs-per-SM floor; otherwise it silently ignores it
   * (ptxas C7508 "'setmaxnreg' ignored; unable to determine register count at entry"). */
  if (b->uses_setmaxnreg && (b->threads == 0 || b->min_ctas == 0))
    return hg_error(HG_ERR_INVALID,
                    "kernel '%s' uses setmaxnreg but has no register cap at entry: set the "
                    "thread count (hg_b_set_threads) and the minimum CTAs per SM "
                    "(hg_b_set_min_ctas, usually 1), or ptxas ignores setmaxnreg",
                    b->name);
  if ((b->uses_setmaxnreg || b->uses_wgmma) && b->threads % 128)
    return hg_error(HG_ERR_INVALID,
                    "kernel '%s' has %d threads, not a multiple of 128: wgmma and setmaxnreg "
                    "work on whole warpgroups (4 warps)",
                    b->name, b->threads);
  return hg_ir_check_wgmma_registers(b);
}
