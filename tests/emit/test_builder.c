/* The builder: misuse gets an exact sentence and sticks; the recorded IR has the shape
 * the backends rely on (region links, depths, scopes, operand slots); shared-memory
 * accounting; parameters. No ptxas needed. */
#include "emit/ir.h"
#include "hg_test.h"

static hg_builder_t *fresh(void) {
  hg_builder_t *b = NULL;
  hg_status_t s = hg_builder_create("k", &b);
  if (s.code != HG_OK) {
    fprintf(stderr, "hg_builder_create failed: %s\n", s.msg);
    exit(1);
  }
  return b;
}

/* Run `body` on a fresh builder and expect its sticky status to contain `fragment`. */
#define EXPECT_MISUSE(fragment, ...)                                                               \
  do {                                                                                             \
    hg_builder_t *b = fresh();                                                                     \
    __VA_ARGS__;                                                                                   \
    CHECK_ERR(hg_builder_status(b), HG_ERR_INVALID, fragment);                                     \
    hg_builder_destroy(b);                                                                         \
  } while (0)

static void test_create(void) {
  hg_builder_t *b = NULL;
  CHECK_ERR(hg_builder_create("1abc", &b), HG_ERR_INVALID,
            "kernel name '1abc' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)");
  CHECK(b == NULL);
  CHECK_ERR(hg_builder_create("a-b", &b), HG_ERR_INVALID, "'a-b' is not an identifier");
  CHECK_ERR(hg_builder_create(NULL, &b), HG_ERR_INVALID, "'(null)' is not an identifier");
  char longname[300];
  memset(longname, 'a', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  CHECK_ERR(hg_builder_create(longname, &b), HG_ERR_CAPACITY, "is longer than 127 characters");
  CHECK_OK(hg_builder_create("_ok9", &b));
  CHECK_OK(hg_builder_status(b));
  hg_builder_destroy(b);
  hg_builder_destroy(NULL);
  CHECK_ERR(hg_builder_status(NULL), HG_ERR_INVALID, "the builder is NULL");
}

static void test_type_mismatch_names_both_types_and_the_op(void) {
  EXPECT_MISUSE("hg_b_bin(HG_ADD): operand types differ: x is I32 but y is F32",
                hg_b_bin(b, HG_ADD, hg_b_i32(b, 1), hg_b_f32(b, 1.0f)));
  EXPECT_MISUSE("hg_b_bin(HG_FADD) needs F32 operands, but x and y are I32",
                hg_b_bin(b, HG_FADD, hg_b_i32(b, 1), hg_b_i32(b, 2)));
  EXPECT_MISUSE("hg_b_bin(HG_MUL) needs I32 or I64 operands, but x and y are F32",
                hg_b_bin(b, HG_MUL, hg_b_f32(b, 1), hg_b_f32(b, 2)));
  EXPECT_MISUSE("hg_b_bin(HG_ADD) needs I32 or I64 operands, but x and y are PRED",
                hg_b_bin(b, HG_ADD, hg_b_pred(b, true), hg_b_pred(b, false)));
  EXPECT_MISUSE("hg_b_cmp(HG_LT_S): operand types differ: x is I32 but y is I64",
                hg_b_cmp(b, HG_LT_S, hg_b_i32(b, 1), hg_b_i64(b, 2)));
  EXPECT_MISUSE("hg_b_cmp(HG_LT_S) needs I32 or I64 (floats compare with HG_FLT..HG_FEQ) "
                "operands, but x and y are F32",
                hg_b_cmp(b, HG_LT_S, hg_b_f32(b, 1), hg_b_f32(b, 2)));
  EXPECT_MISUSE("hg_b_cmp(HG_FLT) needs F32 operands, but x and y are I32",
                hg_b_cmp(b, HG_FLT, hg_b_i32(b, 1), hg_b_i32(b, 2)));
  EXPECT_MISUSE("hg_b_mad: operand types differ: x and y are I32 but z is I64",
                hg_b_mad(b, hg_b_i32(b, 1), hg_b_i32(b, 2), hg_b_i64(b, 3)));
  EXPECT_MISUSE("hg_b_ffma needs F32 operands, but they are I32",
                hg_b_ffma(b, hg_b_i32(b, 1), hg_b_i32(b, 2), hg_b_i32(b, 3)));
  EXPECT_MISUSE("hg_b_funary(HG_FTANH): x must be F32, but",
                hg_b_funary(b, HG_FTANH, hg_b_i32(b, 1)));
  EXPECT_MISUSE("hg_b_funary: 9 is not an hg_funary_t",
                hg_b_funary(b, (hg_funary_t)9, hg_b_f32(b, 1)));
  EXPECT_MISUSE("hg_b_atomic_add_u32: the addend must be I32",
                hg_b_atomic_add_u32(b, hg_b_i64(b, 0), hg_b_f32(b, 1)));
  EXPECT_MISUSE("hg_b_not needs an I32, I64 or PRED operand, but x is F32",
                hg_b_not(b, hg_b_f32(b, 1)));
  EXPECT_MISUSE("hg_b_select: the predicate must be PRED, but the constant 1 (I32) is I32",
                hg_b_select(b, hg_b_i32(b, 1), hg_b_i32(b, 1), hg_b_i32(b, 2)));
  EXPECT_MISUSE("hg_b_sext: the operand must be I32, but the constant 1 (I64) is I64",
                hg_b_sext(b, hg_b_i64(b, 1)));
  EXPECT_MISUSE("hg_b_trunc: the operand must be I64, but the constant 1 (I32) is I32",
                hg_b_trunc(b, hg_b_i32(b, 1)));
  EXPECT_MISUSE("hg_b_bitcast: I64 to F32 is not a bitcast (only I32 <-> F32)",
                hg_b_bitcast(b, HG_T_F32, hg_b_i64(b, 1)));
  EXPECT_MISUSE("hg_b_pack_f32x2: packs to bf16, f16, e4m3 or e5m2, not f32",
                hg_b_pack_f32x2(b, HG_F32, hg_b_f32(b, 1), hg_b_f32(b, 2)));
  EXPECT_MISUSE("hg_b_redux_sync: redux.sync reduces with add, min, max, and, or or xor, not op 3",
                hg_b_redux_sync(b, HG_RED_INC, hg_b_i32(b, 1)));
  EXPECT_MISUSE("hg_b_redux_sync: the lane's value must be I32, but",
                hg_b_redux_sync(b, HG_RED_MAX, hg_b_f32(b, 1)));
  EXPECT_MISUSE("hg_b_unpack_f32: unpacks bf16, f16, e4m3 or e5m2, not f32",
                hg_b_unpack_f32(b, HG_F32, hg_b_i32(b, 0)));
  EXPECT_MISUSE("hg_b_tma_load: coordinate 1 must be I32, but value #", {
    hg_val_t m = hg_b_param_tmap(b, "m");
    hg_val_t c[2] = {hg_b_i32(b, 0), hg_b_sext(b, hg_b_i32(b, -1))};
    hg_b_tma_load(b, m, hg_b_i32(b, 0), hg_b_i32(b, 0), 2, c, HG_NONE, HG_NONE);
  });
  EXPECT_MISUSE("(I64 from hg_b_sext) is I64", {
    hg_val_t m = hg_b_param_tmap(b, "m");
    hg_val_t c[2] = {hg_b_i32(b, 0), hg_b_sext(b, hg_b_i32(b, -1))};
    hg_b_tma_store(b, m, hg_b_i32(b, 0), 2, c);
  });
  EXPECT_MISUSE("hg_b_tma_load: the tensor map must be TMAP, but parameter 'p' (I64) is I64", {
    hg_val_t p = hg_b_param(b, HG_T_I64, "p");
    hg_val_t c = hg_b_i32(b, 0);
    hg_b_tma_load(b, p, c, c, 1, &c, HG_NONE, HG_NONE);
  });
  EXPECT_MISUSE("hg_b_tma_load: the multicast mask must be I32", {
    hg_val_t m = hg_b_param_tmap(b, "m");
    hg_val_t c = hg_b_i32(b, 0);
    hg_b_tma_load(b, m, c, c, 1, &c, hg_b_i64(b, 3), HG_NONE);
  });
  EXPECT_MISUSE("hg_b_tma_load: the cache hint must be I64", {
    hg_val_t m = hg_b_param_tmap(b, "m");
    hg_val_t c = hg_b_i32(b, 0);
    hg_b_tma_load(b, m, c, c, 1, &c, HG_NONE, c);
  });
  EXPECT_MISUSE("hg_b_tma_store_hint: the cache hint must be I64", {
    hg_val_t m = hg_b_param_tmap(b, "m");
    hg_val_t c = hg_b_i32(b, 0);
    hg_b_tma_store_hint(b, m, c, 1, &c, c);
  });
  EXPECT_MISUSE("hg_b_load: the HG_GLOBAL address must be I64", {
    hg_val_t out[1];
    hg_b_load(b, HG_GLOBAL, HG_T_I32, 0, 1, hg_b_i32(b, 0), out);
  });
  EXPECT_MISUSE("hg_b_load: the HG_SHARED address must be I32", {
    hg_val_t out[1];
    hg_b_load(b, HG_SHARED, HG_T_I32, 0, 1, hg_b_i64(b, 0), out);
  });
  EXPECT_MISUSE("hg_b_store: value 1 must be I32, but the constant 1 (F32) is F32", {
    hg_val_t v[2] = {hg_b_i32(b, 1), hg_b_f32(b, 1)};
    hg_b_store(b, HG_SHARED, 0, 2, hg_b_i32(b, 0), v);
  });
  /* the streaming store is global only: its address is a generic pointer */
  EXPECT_MISUSE("hg_b_store_cs: the HG_GLOBAL address must be I64", {
    hg_val_t v[4] = {hg_b_i32(b, 1), hg_b_i32(b, 2), hg_b_i32(b, 3), hg_b_i32(b, 4)};
    hg_b_store_cs(b, 0, 4, hg_b_i32(b, 0), v);
  });
  EXPECT_MISUSE("hg_b_mbar_init: the mbarrier address must be I32",
                hg_b_mbar_init(b, hg_b_i64(b, 0), hg_b_i32(b, 1)));
  EXPECT_MISUSE("hg_b_if: the condition must be PRED, but the constant 1 (I32) is I32",
                hg_b_if(b, hg_b_i32(b, 1)));
  EXPECT_MISUSE("hg_b_for: end must be I32",
                hg_b_for(b, hg_b_i32(b, 0), hg_b_i64(b, 4), hg_b_i32(b, 1)));
}

static void test_operand_validity(void) {
  EXPECT_MISUSE("hg_b_bin(HG_ADD): y is HG_NONE", hg_b_bin(b, HG_ADD, hg_b_i32(b, 1), HG_NONE));
  EXPECT_MISUSE("hg_b_not: x is value #999, which this builder never made",
                hg_b_not(b, (hg_val_t){999}));
  EXPECT_MISUSE("hg_b_bin: 99 is not an hg_binop_t",
                hg_b_bin(b, (hg_binop_t)99, hg_b_i32(b, 1), hg_b_i32(b, 1)));
  EXPECT_MISUSE("hg_b_sreg: 77 is not an hg_sreg_t", hg_b_sreg(b, (hg_sreg_t)77));
  EXPECT_MISUSE("hg_b_param: parameter 'x' has type TMAP; scalar parameters are I32, I64 or F32 "
                "(tensor maps use hg_b_param_tmap)",
                hg_b_param(b, HG_T_TMAP, "x"));
  EXPECT_MISUSE("hg_b_param: parameter name '2x' is not an identifier",
                hg_b_param(b, HG_T_I32, "2x"));
  EXPECT_MISUSE("hg_b_param_tmap: a parameter named 'x' already exists (parameter 0)", {
    hg_b_param(b, HG_T_I32, "x");
    hg_b_param_tmap(b, "x");
  });
  EXPECT_MISUSE("hg_b_select cannot choose between tensor maps (TMAP)", {
    hg_val_t m = hg_b_param_tmap(b, "m");
    hg_b_select(b, hg_b_pred(b, true), m, m);
  });
  EXPECT_MISUSE("hg_b_var: a variable has type PRED, I32, I64 or F32, not TMAP",
                hg_b_var(b, HG_T_TMAP, HG_NONE));
  EXPECT_MISUSE("hg_b_var: the initial value must be F32, but the constant 0 (I32) is I32",
                hg_b_var(b, HG_T_F32, hg_b_i32(b, 0)));
}

static void test_assign_rules(void) {
  EXPECT_MISUSE("hg_b_assign: the destination, the constant 5 (I32), is not a variable (only "
                "values made by hg_b_var can be assigned)",
                hg_b_assign(b, hg_b_i32(b, 5), hg_b_i32(b, 6)));
  EXPECT_MISUSE("hg_b_assign: the destination, parameter 'n' (I32), is not a variable", {
    hg_val_t n = hg_b_param(b, HG_T_I32, "n");
    hg_b_assign(b, n, hg_b_i32(b, 6));
  });
  EXPECT_MISUSE("hg_b_assign: the destination, value #", {
    hg_val_t t = hg_b_sreg(b, HG_TID_X);
    hg_b_assign(b, t, hg_b_i32(b, 6));
  });
  EXPECT_MISUSE("'tid_x' (I32 from hg_b_sreg), is not a variable", {
    hg_val_t t = hg_b_sreg(b, HG_TID_X);
    hg_b_assign(b, t, hg_b_i32(b, 6));
  });
  EXPECT_MISUSE("hg_b_assign: cannot assign the constant 1 (F32) to variable #", {
    hg_val_t v = hg_b_var(b, HG_T_I32, HG_NONE);
    hg_b_assign(b, v, hg_b_f32(b, 1));
  });
  EXPECT_MISUSE("is the counter of an hg_b_for, which is read-only", {
    hg_val_t i = hg_b_for(b, hg_b_i32(b, 0), hg_b_i32(b, 4), hg_b_i32(b, 1));
    hg_b_assign(b, i, hg_b_i32(b, 2));
  });
  /* assigning inside nested regions to an outer variable is the point of variables */
  hg_builder_t *b = fresh();
  hg_val_t v = hg_b_var(b, HG_T_I32, hg_b_i32(b, 0));
  hg_b_loop(b);
  hg_b_if(b, hg_b_cmp(b, HG_EQ, v, hg_b_i32(b, 3)));
  hg_b_assign(b, v, hg_b_bin(b, HG_ADD, v, hg_b_i32(b, 1)));
  hg_b_endif(b);
  hg_b_break_if(b, hg_b_cmp(b, HG_GE_S, v, hg_b_i32(b, 10)));
  hg_b_endloop(b);
  hg_b_store(b, HG_SHARED, 0, 1, hg_b_i32(b, 0), &v);
  CHECK_OK(hg_builder_status(b));
  hg_builder_destroy(b);
}

static void test_regions_balance(void) {
  EXPECT_MISUSE("hg_b_endif without an open hg_b_if: regions are unbalanced", hg_b_endif(b));
  EXPECT_MISUSE("hg_b_else without an open hg_b_if: regions are unbalanced", hg_b_else(b));
  EXPECT_MISUSE("hg_b_endloop without an open hg_b_loop: regions are unbalanced", hg_b_endloop(b));
  EXPECT_MISUSE("hg_b_endfor without an open hg_b_for", hg_b_endfor(b));
  EXPECT_MISUSE("hg_b_endloop, but the innermost open region is the hg_b_if at op 2 (close it "
                "with hg_b_endif first): regions are unbalanced",
                {
                  hg_b_loop(b);
                  hg_b_if(b, hg_b_pred(b, true));
                  hg_b_endloop(b);
                });
  EXPECT_MISUSE("hg_b_endif, but the innermost open region is the hg_b_for at op", {
    hg_b_if(b, hg_b_pred(b, true));
    hg_b_for(b, hg_b_i32(b, 0), hg_b_i32(b, 4), hg_b_i32(b, 1));
    hg_b_endif(b);
  });
  EXPECT_MISUSE("hg_b_else: the hg_b_if at op 1 already has an hg_b_else", {
    hg_b_if(b, hg_b_pred(b, true));
    hg_b_else(b);
    hg_b_else(b);
  });
  EXPECT_MISUSE("hg_b_break_if outside any hg_b_loop", hg_b_break_if(b, hg_b_pred(b, true)));
  EXPECT_MISUSE("hg_b_break_if inside the hg_b_for at op 3: for loops have no break (use "
                "hg_b_loop with a counter variable)",
                {
                  hg_b_for(b, hg_b_i32(b, 0), hg_b_i32(b, 4), hg_b_i32(b, 1));
                  hg_b_break_if(b, hg_b_pred(b, true));
                });
  /* an unclosed region is caught when the kernel is emitted */
  hg_builder_t *b = fresh();
  hg_b_loop(b);
  hg_b_if(b, hg_b_pred(b, true));
  hg_b_endif(b);
  CHECK_OK(hg_builder_status(b));
  hg_text_t t = {0};
  CHECK_ERR(hg_emit_ptx(b, &t), HG_ERR_INVALID,
            "kernel 'k' is incomplete: the hg_b_loop at op 0 is never closed by hg_b_endloop "
            "(regions are unbalanced)");
  CHECK(t.data == NULL);
  hg_builder_destroy(b);
  /* nesting depth has a limit, reported as capacity */
  b = fresh();
  for (int k = 0; k < HG_IR_MAX_DEPTH + 1; k++) hg_b_loop(b);
  CHECK_ERR(hg_builder_status(b), HG_ERR_CAPACITY, "hg_b_loop: regions nest deeper than 64");
  hg_builder_destroy(b);
}

static void test_values_do_not_escape_their_region(void) {
  EXPECT_MISUSE("hg_b_store: value 0 is value #4 (I32 from hg_b_bin), defined inside the "
                "hg_b_if body opened at op 1, and used outside it; values defined inside an "
                "if/loop body may only be used inside it (carry the value out in a variable: "
                "hg_b_var + hg_b_assign)",
                {
                  hg_b_if(b, hg_b_pred(b, true));
                  hg_val_t x = hg_b_bin(b, HG_ADD, hg_b_i32(b, 1), hg_b_i32(b, 1));
                  hg_b_endif(b);
                  hg_b_store(b, HG_SHARED, 0, 1, hg_b_i32(b, 0), &x);
                });
  /* then-values are invisible in the else body */
  EXPECT_MISUSE("defined inside the hg_b_if body opened at op 1, and used outside it", {
    hg_b_if(b, hg_b_pred(b, true));
    hg_val_t x = hg_b_i32(b, 7);
    hg_b_else(b);
    hg_b_not(b, x);
  });
  EXPECT_MISUSE("defined inside the hg_b_else body opened at op 1", {
    hg_b_if(b, hg_b_pred(b, true));
    hg_b_else(b);
    hg_val_t x = hg_b_i32(b, 7);
    hg_b_endif(b);
    hg_b_not(b, x);
  });
  EXPECT_MISUSE("hg_b_not: x is the constant 7 (I32), defined inside the hg_b_loop body opened "
                "at op 0",
                {
                  hg_b_loop(b);
                  hg_val_t x = hg_b_i32(b, 7);
                  hg_b_break_if(b, hg_b_pred(b, true));
                  hg_b_endloop(b);
                  hg_b_not(b, x);
                });
  EXPECT_MISUSE("hg_b_not: x is loop counter #4 'i' (I32 from hg_b_for), defined inside the "
                "hg_b_for body opened at op 3",
                {
                  hg_val_t i = hg_b_for(b, hg_b_i32(b, 0), hg_b_i32(b, 4), hg_b_i32(b, 1));
                  hg_b_endfor(b);
                  hg_b_not(b, i);
                });
  EXPECT_MISUSE("variable #", {
    hg_b_if(b, hg_b_pred(b, true));
    hg_val_t v = hg_b_var(b, HG_T_I32, HG_NONE);
    hg_b_endif(b);
    hg_b_assign(b, v, hg_b_i32(b, 1));
  });
  /* outer values are visible at any depth; params everywhere */
  hg_builder_t *b = fresh();
  hg_val_t outer = hg_b_i32(b, 1);
  hg_b_if(b, hg_b_pred(b, true));
  hg_b_loop(b);
  hg_val_t n = hg_b_param(b, HG_T_I32, "n"); /* declared inside, visible after */
  hg_b_break_if(b, hg_b_cmp(b, HG_EQ, outer, n));
  hg_b_endloop(b);
  hg_b_endif(b);
  hg_b_not(b, n);
  CHECK_OK(hg_builder_status(b));
  hg_builder_destroy(b);
}

static void test_widths_and_ranks(void) {
  hg_val_t out[4];
  EXPECT_MISUSE("hg_b_load: vector width 3 is not 1, 2 or 4",
                hg_b_load(b, HG_SHARED, HG_T_I32, 0, 3, hg_b_i32(b, 0), out));
  EXPECT_MISUSE("hg_b_store: vector width 8 is not 1, 2 or 4",
                hg_b_store(b, HG_SHARED, 0, 8, hg_b_i32(b, 0), out));
  EXPECT_MISUSE("hg_b_store_cs: vector width 3 is not 1, 2 or 4",
                hg_b_store_cs(b, 0, 3, hg_b_i64(b, 0), out));
  EXPECT_MISUSE("hg_b_load: a vector of 4 I64 is 256 bits; sm_90 moves at most 128 bits per "
                "access",
                hg_b_load(b, HG_SHARED, HG_T_I64, 0, 4, hg_b_i32(b, 0), out));
  EXPECT_MISUSE("hg_b_load: 8-bit accesses are scalar (n = 1), not vectors of 2",
                hg_b_load(b, HG_SHARED, HG_T_I32, 8, 2, hg_b_i32(b, 0), out));
  EXPECT_MISUSE("hg_b_load: 16-bit accesses move an I32, not F32",
                hg_b_load(b, HG_SHARED, HG_T_F32, 16, 1, hg_b_i32(b, 0), out));
  EXPECT_MISUSE("hg_b_load: bits = 12 does not fit I32 (8 or 16 for a narrow access, 0 or 32 "
                "otherwise)",
                hg_b_load(b, HG_SHARED, HG_T_I32, 12, 1, hg_b_i32(b, 0), out));
  EXPECT_MISUSE("hg_b_load: element type PRED is not I32, I64 or F32",
                hg_b_load(b, HG_SHARED, HG_T_PRED, 0, 1, hg_b_i32(b, 0), out));
  EXPECT_MISUSE("hg_b_tma_load: rank 6 is outside 1..5", {
    hg_val_t m = hg_b_param_tmap(b, "m");
    hg_val_t c[6] = {0};
    hg_b_tma_load(b, m, hg_b_i32(b, 0), hg_b_i32(b, 0), 6, c, HG_NONE, HG_NONE);
  });
  EXPECT_MISUSE("hg_b_tma_prefetch: rank 0 is outside 1..5", {
    hg_val_t m = hg_b_param_tmap(b, "m");
    hg_val_t c[1] = {0};
    hg_b_tma_prefetch(b, m, 0, c);
  });
  EXPECT_MISUSE("hg_b_tma_reduce: rank -1 is outside 1..5", {
    hg_val_t m = hg_b_param_tmap(b, "m");
    hg_val_t c[1] = {0};
    hg_b_tma_reduce(b, HG_RED_ADD, m, hg_b_i32(b, 0), -1, c);
  });
  EXPECT_MISUSE("hg_b_tma_reduce: 9 is not an hg_reduce_op_t", {
    hg_val_t m = hg_b_param_tmap(b, "m");
    hg_val_t c[1] = {hg_b_i32(b, 0)};
    hg_b_tma_reduce(b, (hg_reduce_op_t)9, m, hg_b_i32(b, 0), 1, c);
  });
  EXPECT_MISUSE("hg_b_stmatrix: 3 matrices is not x1, x2 or x4",
                hg_b_stmatrix(b, 3, false, hg_b_i32(b, 0), out));
  EXPECT_MISUSE("hg_b_bar_sync: barrier id 16 is outside 0..15", hg_b_bar_sync(b, 16, 0));
  EXPECT_MISUSE("hg_b_bar_sync: thread count 100 is not a multiple of 32 in 0..1024",
                hg_b_bar_sync(b, 1, 100));
  EXPECT_MISUSE("hg_b_bar_arrive: threads must be a positive multiple of 32 (bar.arrive has no "
                "whole-CTA form)",
                hg_b_bar_arrive(b, 1, 0));
  EXPECT_MISUSE("hg_b_setmaxnreg: 100 registers is not a multiple of 8 in 24..256",
                hg_b_setmaxnreg(b, true, 100));
  EXPECT_MISUSE("hg_b_setmaxnreg: 16 registers", hg_b_setmaxnreg(b, false, 16));
  EXPECT_MISUSE("hg_b_bulk_wait: -1 pending groups is outside 0..63", hg_b_bulk_wait(b, -1, true));
  EXPECT_MISUSE("hg_b_wgmma_wait: 9 pending groups is outside 0..7", hg_b_wgmma_wait(b, 9));
  EXPECT_MISUSE("hg_b_set_threads: 2000 threads is outside 1..1024", hg_b_set_threads(b, 2000));
  EXPECT_MISUSE("hg_b_set_min_ctas: 33 CTAs per SM is outside 0..32", hg_b_set_min_ctas(b, 33));
  EXPECT_MISUSE("hg_b_set_cluster: cluster 4x4x2 is not a valid cluster shape",
                hg_b_set_cluster(b, 4, 4, 2));
  EXPECT_MISUSE("hg_b_set_cluster: cluster 0x2x1", hg_b_set_cluster(b, 0, 2, 1));
  EXPECT_MISUSE("hg_b_cache_policy: 5 is not an hg_cache_policy_t",
                hg_b_cache_policy(b, (hg_cache_policy_t)5));
}

/* ---------------------------------------------------------------- wgmma */

/* Record one wgmma with freshly made operands; returns the builder's status. */
static hg_status_t try_wgmma(hg_wgmma_op_t op) {
  hg_builder_t *b = fresh();
  hg_val_t acc[128], a[4];
  int nacc = op.acc == HG_F16 ? op.n / 4 : op.n / 2;
  if (nacc < 1) nacc = 1;
  if (nacc > 128) nacc = 128;
  for (int k = 0; k < nacc; k++)
    acc[k] = hg_b_var(b, op.acc == HG_F32 ? HG_T_F32 : HG_T_I32, HG_NONE);
  for (int k = 0; k < 4; k++) a[k] = op.a_regs ? hg_b_i32(b, 0) : hg_b_i64(b, 0);
  hg_b_wgmma(b, &op, acc, a, hg_b_i64(b, 0), hg_b_pred(b, false));
  hg_status_t s = hg_builder_status(b);
  hg_builder_destroy(b);
  return s;
}

static hg_wgmma_op_t W(int n, hg_dtype_t a, hg_dtype_t bt, hg_dtype_t acc) {
  return (hg_wgmma_op_t){.n = n, .a = a, .b = bt, .acc = acc};
}

/* hg_b_red: exactly the pairs of cp.reduce.async.bulk.tensor (the sm90 layer's rule),
 * the operand's type from the element type, an I64 address; each misuse a sentence. */
static void test_reductions(void) {
  for (int op = HG_RED_ADD; op <= HG_RED_XOR; op++)
    for (int t = 0; t < HG_DTYPE_COUNT; t++) {
      hg_builder_t *b = fresh();
      hg_val_t v = t == HG_U64 ? hg_b_i64(b, 1) : t == HG_F32 ? hg_b_f32(b, 1.0f) : hg_b_i32(b, 1);
      hg_b_red(b, (hg_reduce_op_t)op, (hg_dtype_t)t, hg_b_i64(b, 256), v);
      hg_status_t want = hg_tma_reduce_check((hg_tma_op_t)(HG_TMA_REDUCE_ADD + op), (hg_dtype_t)t);
      hg_status_t got = hg_builder_status(b);
      hg_test_checks++;
      if (hg_is_ok(&want) != hg_is_ok(&got))
        HG_FAIL("hg_b_red(%d, %s): the builder says '%s', the TMA rule '%s'", op,
                hg_dtype_name((hg_dtype_t)t), got.msg, want.msg);
      hg_builder_destroy(b);
    }
  EXPECT_MISUSE("hg_b_red: the inc reduction takes u32 only, not s32 (the element types "
                "cp.reduce.async.bulk.tensor takes for it)",
                hg_b_red(b, HG_RED_INC, HG_S32, hg_b_i64(b, 0), hg_b_i32(b, 1)));
  EXPECT_MISUSE("hg_b_red: the min reduction takes u32, s32, f16 and bf16, not u64",
                hg_b_red(b, HG_RED_MIN, HG_U64, hg_b_i64(b, 0), hg_b_i64(b, 1)));
  EXPECT_MISUSE("hg_b_red: the add reduction takes u32, s32, u64, f32, f16 and bf16, not u8",
                hg_b_red(b, HG_RED_ADD, HG_U8, hg_b_i64(b, 0), hg_b_i32(b, 1)));
  EXPECT_MISUSE("hg_b_red: the f32 operand must be F32, but the constant 1 (I32) is I32",
                hg_b_red(b, HG_RED_ADD, HG_F32, hg_b_i64(b, 0), hg_b_i32(b, 1)));
  EXPECT_MISUSE("hg_b_red: the u64 operand must be I64",
                hg_b_red(b, HG_RED_XOR, HG_U64, hg_b_i64(b, 0), hg_b_i32(b, 1)));
  EXPECT_MISUSE("hg_b_red: the bf16 operand must be I32",
                hg_b_red(b, HG_RED_MAX, HG_BF16, hg_b_i64(b, 0), hg_b_f32(b, 1.0f)));
  EXPECT_MISUSE("hg_b_red: the global address must be I64",
                hg_b_red(b, HG_RED_ADD, HG_U32, hg_b_i32(b, 0), hg_b_i32(b, 1)));
  EXPECT_MISUSE("hg_b_red: 9 is not an hg_reduce_op_t",
                hg_b_red(b, (hg_reduce_op_t)9, HG_U32, hg_b_i64(b, 0), hg_b_i32(b, 1)));
  EXPECT_MISUSE("hg_b_red: 99 is not an hg_dtype_t",
                hg_b_red(b, HG_RED_ADD, (hg_dtype_t)99, hg_b_i64(b, 0), hg_b_i32(b, 1)));
  /* the CAS text exists for 16-bit float min/max only */
  CHECK(hg_ir_red_cas_ptx(HG_RED_MIN, HG_F16) != NULL);
  CHECK(hg_ir_red_cas_ptx(HG_RED_MAX, HG_BF16) != NULL);
  CHECK(hg_ir_red_cas_ptx(HG_RED_ADD, HG_F16) == NULL);
  CHECK(hg_ir_red_cas_ptx(HG_RED_MIN, HG_S32) == NULL);
}

static void test_wgmma_shapes_and_types(void) {
  /* every N the ISA lists, per family, is accepted; neighbours are not */
  static const hg_dtype_t fams[][3] = {
      {HG_F16, HG_F16, HG_F32},   {HG_F16, HG_F16, HG_F16},   {HG_BF16, HG_BF16, HG_F32},
      {HG_TF32, HG_TF32, HG_F32}, {HG_E4M3, HG_E5M2, HG_F16}, {HG_E5M2, HG_E4M3, HG_F32},
      {HG_S8, HG_U8, HG_S32},     {HG_U8, HG_U8, HG_S32},
  };
  for (size_t f = 0; f < sizeof fams / sizeof fams[0]; f++) {
    bool integer = fams[f][2] == HG_S32;
    for (int n = 1; n <= 264; n++) {
      bool valid = integer ? (n == 8 || n == 16 || n == 24 || (n >= 32 && n <= 256 && n % 16 == 0))
                           : (n % 8 == 0 && n >= 8 && n <= 256);
      hg_wgmma_op_t op = W(n, fams[f][0], fams[f][1], fams[f][2]);
      hg_status_t s = hg_ir_wgmma_validate(&op);
      if ((s.code == HG_OK) != valid) HG_FAIL("family %zu n=%d: %s", f, n, s.msg);
      hg_test_checks++;
    }
  }
  CHECK_ERR(try_wgmma(W(40, HG_S8, HG_U8, HG_S32)), HG_ERR_INVALID,
            "hg_b_wgmma: n = 40 is not an N that wgmma offers for s8 x u8 (8, 16, 24, then "
            "multiples of 16 up to 256)");
  CHECK_ERR(try_wgmma(W(12, HG_BF16, HG_BF16, HG_F32)), HG_ERR_INVALID,
            "hg_b_wgmma: n = 12 is not an N that wgmma offers for bf16 x bf16 (multiples of 8 "
            "from 8 to 256)");
  CHECK_ERR(try_wgmma(W(264, HG_F16, HG_F16, HG_F32)), HG_ERR_INVALID, "n = 264 is not an N");
  CHECK_ERR(try_wgmma(W(64, HG_F16, HG_BF16, HG_F32)), HG_ERR_INVALID,
            "hg_b_wgmma: f16 x bf16 is not a wgmma type combination (A and B are both f16, both "
            "bf16, both tf32, both 8-bit floats e4m3/e5m2, or both 8-bit integers s8/u8)");
  CHECK_ERR(try_wgmma(W(64, HG_E4M3, HG_S8, HG_F32)), HG_ERR_INVALID,
            "e4m3 x s8 is not a wgmma type combination");
  CHECK_ERR(try_wgmma(W(64, HG_F32, HG_F32, HG_F32)), HG_ERR_INVALID,
            "f32 x f32 is not a wgmma type combination");
  CHECK_ERR(try_wgmma(W(64, HG_BF16, HG_BF16, HG_F16)), HG_ERR_INVALID,
            "hg_b_wgmma: accumulator f16 is not allowed for bf16 x bf16 (it must be f32)");
  CHECK_ERR(try_wgmma(W(64, HG_S8, HG_S8, HG_F32)), HG_ERR_INVALID,
            "accumulator f32 is not allowed for s8 x s8 (it must be s32)");
  CHECK_ERR(try_wgmma(W(64, HG_TF32, HG_TF32, HG_F16)), HG_ERR_INVALID,
            "accumulator f16 is not allowed for tf32 x tf32 (it must be f32)");
  CHECK_ERR(try_wgmma(W(64, HG_E4M3, HG_E4M3, HG_S32)), HG_ERR_INVALID,
            "accumulator s32 is not allowed for e4m3 x e4m3 (it must be f16 or f32)");

  hg_wgmma_op_t t = W(64, HG_E4M3, HG_E4M3, HG_F32);
  t.trans_b = true;
  CHECK_ERR(try_wgmma(t), HG_ERR_INVALID,
            "hg_b_wgmma: trans_b needs 16-bit operands (f16 or bf16); e4m3 operands must be "
            "K-major, so the transpose flag does not exist for them");
  t = W(64, HG_S8, HG_S8, HG_S32);
  t.trans_a = true;
  CHECK_ERR(try_wgmma(t), HG_ERR_INVALID, "trans_a needs 16-bit operands (f16 or bf16); s8");
  t = W(64, HG_TF32, HG_TF32, HG_F32);
  t.trans_a = true;
  CHECK_ERR(try_wgmma(t), HG_ERR_INVALID, "trans_a needs 16-bit operands (f16 or bf16); tf32");
  t = W(64, HG_BF16, HG_BF16, HG_F32);
  t.trans_a = true;
  t.a_regs = true;
  CHECK_ERR(try_wgmma(t), HG_ERR_INVALID, "hg_b_wgmma: trans_a with A from registers");
  t.trans_a = false;
  t.trans_b = true;
  CHECK_OK(try_wgmma(t));
  CHECK_OK(try_wgmma(W(256, HG_F16, HG_F16, HG_F16)));
  CHECK_OK(try_wgmma(W(256, HG_E5M2, HG_E5M2, HG_F32)));
}

static void test_wgmma_operands(void) {
  hg_wgmma_op_t op = W(16, HG_BF16, HG_BF16, HG_F32); /* 8 f32 accumulators */
  EXPECT_MISUSE("hg_b_wgmma: accumulator 3 is the constant 0 (F32), not a variable (wgmma "
                "overwrites its accumulators, so they must come from hg_b_var)",
                {
                  hg_val_t acc[8];
                  for (int k = 0; k < 8; k++)
                    acc[k] = k == 3 ? hg_b_f32(b, 0) : hg_b_var(b, HG_T_F32, HG_NONE);
                  hg_val_t a = hg_b_i64(b, 0);
                  hg_b_wgmma(b, &op, acc, &a, a, hg_b_pred(b, true));
                });
  EXPECT_MISUSE("hg_b_wgmma: accumulator 5 must be F32, but variable #", {
    hg_val_t acc[8];
    for (int k = 0; k < 8; k++) acc[k] = hg_b_var(b, k == 5 ? HG_T_I32 : HG_T_F32, HG_NONE);
    hg_val_t a = hg_b_i64(b, 0);
    hg_b_wgmma(b, &op, acc, &a, a, hg_b_pred(b, true));
  });
  EXPECT_MISUSE("hg_b_wgmma: accumulators 0 and 7 are the same variable", {
    hg_val_t acc[8];
    for (int k = 0; k < 7; k++) acc[k] = hg_b_var(b, HG_T_F32, HG_NONE);
    acc[7] = acc[0];
    hg_val_t a = hg_b_i64(b, 0);
    hg_b_wgmma(b, &op, acc, &a, a, hg_b_pred(b, true));
  });
  EXPECT_MISUSE("hg_b_wgmma: the A descriptor must be I64, but the constant 0 (I32) is I32", {
    hg_val_t acc[8];
    for (int k = 0; k < 8; k++) acc[k] = hg_b_var(b, HG_T_F32, HG_NONE);
    hg_val_t a = hg_b_i32(b, 0);
    hg_b_wgmma(b, &op, acc, &a, hg_b_i64(b, 0), hg_b_pred(b, true));
  });
  EXPECT_MISUSE("hg_b_wgmma: scale_d must be PRED, but the constant 1 (I32) is I32", {
    hg_val_t acc[8];
    for (int k = 0; k < 8; k++) acc[k] = hg_b_var(b, HG_T_F32, HG_NONE);
    hg_val_t a = hg_b_i64(b, 0);
    hg_b_wgmma(b, &op, acc, &a, a, hg_b_i32(b, 1));
  });
  EXPECT_MISUSE("hg_b_wgmma: A fragment register 2 must be I32", {
    hg_wgmma_op_t r = op;
    r.a_regs = true;
    hg_val_t acc[8], a[4];
    for (int k = 0; k < 8; k++) acc[k] = hg_b_var(b, HG_T_F32, HG_NONE);
    for (int k = 0; k < 4; k++) a[k] = k == 2 ? hg_b_i64(b, 0) : hg_b_i32(b, 0);
    hg_b_wgmma(b, &r, acc, a, hg_b_i64(b, 0), hg_b_pred(b, true));
  });
}

/* ---------------------------------------------------------------- sm_80 ops */

static void test_cp_async_misuse(void) {
  EXPECT_MISUSE("hg_b_cp_async: 12 bytes is not a cp.async size (4, 8 or 16)",
                hg_b_cp_async(b, 12, hg_b_i32(b, 0), hg_b_i64(b, 0), HG_NONE));
  EXPECT_MISUSE("hg_b_cp_async: 0 bytes is not a cp.async size",
                hg_b_cp_async(b, 0, hg_b_i32(b, 0), hg_b_i64(b, 0), HG_NONE));
  EXPECT_MISUSE("hg_b_cp_async: the shared-memory destination must be I32, but the constant 0 "
                "(I64) is I64",
                hg_b_cp_async(b, 16, hg_b_i64(b, 0), hg_b_i64(b, 0), HG_NONE));
  EXPECT_MISUSE("hg_b_cp_async: the global source must be I64, but the constant 0 (I32) is I32",
                hg_b_cp_async(b, 16, hg_b_i32(b, 0), hg_b_i32(b, 0), HG_NONE));
  EXPECT_MISUSE("hg_b_cp_async: the shared-memory destination is HG_NONE",
                hg_b_cp_async(b, 16, HG_NONE, hg_b_i64(b, 0), HG_NONE));
  EXPECT_MISUSE("hg_b_cp_async: the source byte count must be I32, but the constant 16 (I64) is "
                "I64",
                hg_b_cp_async(b, 16, hg_b_i32(b, 0), hg_b_i64(b, 0), hg_b_i64(b, 16)));
  EXPECT_MISUSE("hg_b_cp_async: the source byte count 17 is outside 0..16 (it reads that many of "
                "the 16 bytes and zero-fills the rest; more is undefined behaviour)",
                hg_b_cp_async(b, 16, hg_b_i32(b, 0), hg_b_i64(b, 0), hg_b_i32(b, 17)));
  EXPECT_MISUSE("hg_b_cp_async: the source byte count -1 is outside 0..4",
                hg_b_cp_async(b, 4, hg_b_i32(b, 0), hg_b_i64(b, 0), hg_b_i32(b, -1)));
  EXPECT_MISUSE("hg_b_cp_async_wait: 64 pending groups is outside 0..63",
                hg_b_cp_async_wait(b, 64));
  EXPECT_MISUSE("hg_b_cp_async_wait: -1 pending groups is outside 0..63",
                hg_b_cp_async_wait(b, -1));
  EXPECT_MISUSE("hg_b_cp_async_mbar_arrive: the mbarrier address must be I32, but the constant "
                "0 (I64) is I64",
                hg_b_cp_async_mbar_arrive(b, hg_b_i64(b, 0)));

  /* the edges that are fine: every size, source sizes 0 and `bytes`, a run-time size */
  hg_builder_t *b = fresh();
  hg_val_t dst = hg_b_i32(b, 0), src = hg_b_i64(b, 0);
  for (int bytes = 4; bytes <= 16; bytes *= 2) {
    hg_b_cp_async(b, bytes, dst, src, hg_b_i32(b, 0));
    hg_b_cp_async(b, bytes, dst, src, hg_b_i32(b, bytes));
    hg_b_cp_async(b, bytes, dst, src, hg_b_sreg(b, HG_TID_X));
  }
  hg_b_cp_async_wait(b, 0);
  hg_b_cp_async_wait(b, 63);
  CHECK_OK(hg_builder_status(b));
  hg_builder_destroy(b);
}

static void test_ldmatrix_misuse(void) {
  hg_val_t out[4];
  EXPECT_MISUSE("hg_b_ldmatrix: 3 matrices is not x1, x2 or x4",
                hg_b_ldmatrix(b, 3, false, hg_b_i32(b, 0), out));
  EXPECT_MISUSE("hg_b_ldmatrix: 8 matrices is not x1, x2 or x4",
                hg_b_ldmatrix(b, 8, true, hg_b_i32(b, 0), out));
  EXPECT_MISUSE("hg_b_ldmatrix: out is NULL", hg_b_ldmatrix(b, 4, false, hg_b_i32(b, 0), NULL));
  EXPECT_MISUSE("hg_b_ldmatrix: the shared::cta address must be I32, but the constant 0 (I64) is "
                "I64",
                hg_b_ldmatrix(b, 2, false, hg_b_i64(b, 0), out));
  EXPECT_MISUSE("hg_b_stmatrix: regs is NULL", hg_b_stmatrix(b, 2, false, hg_b_i32(b, 0), NULL));
  EXPECT_MISUSE("hg_b_stmatrix: register 1 must be I32, but the constant 0 (F32) is F32", {
    hg_val_t r[2] = {hg_b_i32(b, 0), hg_b_f32(b, 0)};
    hg_b_stmatrix(b, 2, false, hg_b_i32(b, 0), r);
  });
  /* a failed ldmatrix leaves HG_NONE in out, never a stale value */
  hg_builder_t *b = fresh();
  out[0] = out[1] = hg_b_i32(b, 7);
  hg_b_ldmatrix(b, 2, false, hg_b_i64(b, 0), out);
  CHECK(hg_val_is_none(out[0]) && hg_val_is_none(out[1]));
  hg_builder_destroy(b);
}

static hg_mma_sync_op_t MS(int m, int n, int k, hg_dtype_t a, hg_dtype_t bt, hg_dtype_t acc) {
  return (hg_mma_sync_op_t){.m = m, .n = n, .k = k, .a = a, .b = bt, .acc = acc};
}

/* Valid mma.sync operands: 4 F32 variables, 4 + 2 I32 fragment registers. */
static void mma_sync_operands(hg_builder_t *b, hg_val_t acc[4], hg_val_t a[4], hg_val_t bf[2]) {
  for (int k = 0; k < 4; k++) acc[k] = hg_b_var(b, HG_T_F32, HG_NONE);
  for (int k = 0; k < 4; k++) a[k] = hg_b_i32(b, k);
  for (int k = 0; k < 2; k++) bf[k] = hg_b_i32(b, k);
}

/* Record one mma.sync with fresh variables and registers; returns the builder's status. */
static hg_status_t try_mma_sync(hg_mma_sync_op_t op) {
  hg_builder_t *b = fresh();
  hg_val_t acc[4], a[4], bf[2];
  mma_sync_operands(b, acc, a, bf);
  hg_b_mma_sync(b, &op, acc, a, bf);
  hg_status_t s = hg_builder_status(b);
  hg_builder_destroy(b);
  return s;
}

static void test_mma_sync_rules(void) {
  CHECK_OK(try_mma_sync(MS(16, 8, 16, HG_BF16, HG_BF16, HG_F32)));
  CHECK_OK(try_mma_sync(MS(16, 8, 16, HG_F16, HG_F16, HG_F32)));
  CHECK_ERR(try_mma_sync(MS(16, 8, 8, HG_BF16, HG_BF16, HG_F32)), HG_ERR_INVALID,
            "hg_b_mma_sync: shape m16n8k8 is not m16n8k16, the one mma.sync shape hopgen emits");
  CHECK_ERR(try_mma_sync(MS(8, 8, 4, HG_F16, HG_F16, HG_F32)), HG_ERR_INVALID,
            "shape m8n8k4 is not m16n8k16");
  CHECK_ERR(try_mma_sync(MS(16, 16, 16, HG_F16, HG_F16, HG_F32)), HG_ERR_INVALID,
            "shape m16n16k16 is not m16n8k16");
  CHECK_ERR(try_mma_sync(MS(16, 8, 16, HG_BF16, HG_F16, HG_F32)), HG_ERR_INVALID,
            "hg_b_mma_sync: bf16 x f16 is not an mma.sync m16n8k16 type pair hopgen emits (A and "
            "B both bf16 or both f16)");
  /* fp8: m16n8k32 only, e4m3/e5m2 in any mix, into f32 */
  CHECK_OK(try_mma_sync(MS(16, 8, 32, HG_E4M3, HG_E4M3, HG_F32)));
  CHECK_OK(try_mma_sync(MS(16, 8, 32, HG_E5M2, HG_E4M3, HG_F32)));
  CHECK_ERR(try_mma_sync(MS(16, 8, 16, HG_E4M3, HG_E4M3, HG_F32)), HG_ERR_INVALID,
            "shape m16n8k16 with fp8 operands: hopgen emits fp8 mma.sync as m16n8k32");
  CHECK_ERR(try_mma_sync(MS(16, 8, 32, HG_E4M3, HG_BF16, HG_F32)), HG_ERR_INVALID,
            "e4m3 x bf16 is not an fp8 mma.sync type pair (A and B each e4m3 or e5m2)");
  CHECK_ERR(try_mma_sync(MS(16, 8, 32, HG_E5M2, HG_E5M2, HG_F16)), HG_ERR_INVALID,
            "accumulator f16 is not allowed: fp8 mma.sync accumulates in f32");
  CHECK_ERR(try_mma_sync(MS(16, 8, 32, HG_BF16, HG_BF16, HG_F32)), HG_ERR_INVALID,
            "shape m16n8k32 is not m16n8k16");
  CHECK_ERR(try_mma_sync(MS(16, 8, 16, HG_TF32, HG_TF32, HG_F32)), HG_ERR_INVALID,
            "tf32 x tf32 is not an mma.sync m16n8k16 type pair");
  CHECK_ERR(try_mma_sync(MS(16, 8, 16, HG_F16, HG_F16, HG_F16)), HG_ERR_INVALID,
            "hg_b_mma_sync: accumulator f16 is not allowed: hopgen's mma.sync accumulates f16 x "
            "f16 in f32");
  CHECK_ERR(try_mma_sync(MS(16, 8, 16, HG_BF16, HG_BF16, HG_S32)), HG_ERR_INVALID,
            "accumulator s32 is not allowed");

  hg_mma_sync_op_t op = MS(16, 8, 16, HG_BF16, HG_BF16, HG_F32);
  EXPECT_MISUSE("hg_b_mma_sync: op, acc, a and bf must not be NULL", {
    hg_val_t v[4] = {HG_NONE, HG_NONE, HG_NONE, HG_NONE};
    hg_b_mma_sync(b, &op, v, v, NULL);
  });
  /* each misuse: the valid operands with one spoiled */
#define MMA_SYNC_WITH(spoil)                                                                       \
  {                                                                                                \
    hg_val_t acc[4], a[4], bf[2];                                                                  \
    mma_sync_operands(b, acc, a, bf);                                                              \
    spoil;                                                                                         \
    hg_b_mma_sync(b, &op, acc, a, bf);                                                             \
  }
  EXPECT_MISUSE("hg_b_mma_sync: accumulator 2 is the constant 0 (F32), not a variable (mma.sync "
                "overwrites its accumulators, so they must come from hg_b_var)",
                MMA_SYNC_WITH(acc[2] = hg_b_f32(b, 0)));
  EXPECT_MISUSE("hg_b_mma_sync: accumulator 1 must be F32, but variable #",
                MMA_SYNC_WITH(acc[1] = hg_b_var(b, HG_T_I32, HG_NONE)));
  EXPECT_MISUSE("hg_b_mma_sync: accumulators 0 and 3 are the same variable",
                MMA_SYNC_WITH(acc[3] = acc[0]));
  EXPECT_MISUSE("hg_b_mma_sync: A fragment register 3 must be I32, but the constant 0 (F32) is "
                "F32",
                MMA_SYNC_WITH(a[3] = hg_b_f32(b, 0)));
  EXPECT_MISUSE("hg_b_mma_sync: B fragment register 1 must be I32, but the constant 0 (I64) is "
                "I64",
                MMA_SYNC_WITH(bf[1] = hg_b_i64(b, 0)));
#undef MMA_SYNC_WITH
}

static void test_kernel_level_rules(void) {
  hg_builder_t *b = fresh();
  hg_b_set_threads(b, 384);
  hg_b_setmaxnreg(b, true, 240);
  hg_text_t t = {0};
  CHECK_ERR(hg_emit_ptx(b, &t), HG_ERR_INVALID,
            "kernel 'k' uses setmaxnreg but has no register cap at entry: set the thread count "
            "(hg_b_set_threads) and the minimum CTAs per SM (hg_b_set_min_ctas, usually 1), or "
            "ptxas ignores setmaxnreg");
  hg_b_set_min_ctas(b, 1);
  hg_b_set_threads(b, 96);
  CHECK_ERR(hg_emit_ptx(b, &t), HG_ERR_INVALID,
            "kernel 'k' has 96 threads, not a multiple of 128: wgmma and setmaxnreg work on "
            "whole warpgroups (4 warps)");
  hg_b_set_threads(b, 384);
  CHECK_OK(hg_emit_ptx(b, &t));
  hg_text_free(&t);
  hg_builder_destroy(b);
}

/* ---------------------------------------------------------------- sticky errors */

static void test_errors_stick(void) {
  hg_builder_t *b = fresh();
  hg_val_t x = hg_b_i32(b, 1);
  hg_b_bin(b, HG_ADD, x, hg_b_f32(b, 2)); /* the first misuse */
  int32_t ops = b->nops;
  hg_b_endif(b); /* a second misuse: ignored */
  hg_val_t y = hg_b_i32(b, 3);
  CHECK(hg_val_is_none(y));
  CHECK_EQ(b->nops, ops);
  CHECK_ERR(hg_builder_status(b), HG_ERR_INVALID, "operand types differ");
  hg_text_t t = {0};
  CHECK_ERR(hg_emit_ptx(b, &t), HG_ERR_INVALID, "hg_b_bin(HG_ADD): operand types differ");
  CHECK(t.data == NULL);
  CHECK_EQ(hg_val_type(b, x), HG_T_I32);
  CHECK_EQ(hg_val_type(b, HG_NONE), HG_T_NONE);
  CHECK_EQ(hg_val_type(b, (hg_val_t){12345}), HG_T_NONE);
  hg_builder_destroy(b);
}

/* ---------------------------------------------------------------- IR shape */

static void test_ir_structure(void) {
  hg_builder_t *b = fresh();
  hg_val_t p = hg_b_param(b, HG_T_I32, "n");            /* no op */
  hg_val_t c = hg_b_cmp(b, HG_LT_S, p, hg_b_i32(b, 4)); /* ops 0, 1 */
  hg_b_if(b, c);                                        /* 2 */
  hg_b_loop(b);                                         /* 3 */
  hg_b_break_if(b, c);                                  /* 4 */
  hg_b_if(b, c);                                        /* 5 */
  hg_b_break_if(b, c);                                  /* 6 */
  hg_b_endif(b);                                        /* 7 */
  hg_b_endloop(b);                                      /* 8 */
  hg_b_else(b);                                         /* 9 */
  hg_val_t i = hg_b_for(b, p, p, p);                    /* 10 */
  hg_b_comment(b, "body");                              /* 11 */
  hg_b_endfor(b);                                       /* 12 */
  hg_b_endif(b);                                        /* 13 */
  CHECK_OK(hg_builder_status(b));
  CHECK_EQ(b->nops, 14);
  const hg_ir_op_t *o = b->ops;
  CHECK_EQ(o[2].code, HG_OP_IF);
  CHECK_EQ(o[2].mid, 9);
  CHECK_EQ(o[2].close, 13);
  CHECK_EQ(o[2].depth, 0);
  CHECK_EQ(o[3].depth, 1);
  CHECK_EQ(o[3].close, 8);
  CHECK_EQ(o[4].open, 3);
  CHECK_EQ(o[4].depth, 2);
  CHECK_EQ(o[6].open, 3); /* break_if inside an if still names its loop */
  CHECK_EQ(o[6].depth, 3);
  CHECK_EQ(o[5].mid, -1);
  CHECK_EQ(o[5].close, 7);
  CHECK_EQ(o[7].open, 5);
  CHECK_EQ(o[8].open, 3);
  CHECK_EQ(o[9].code, HG_OP_ELSE);
  CHECK_EQ(o[9].open, 2);
  CHECK_EQ(o[9].close, 13);
  CHECK_EQ(o[9].depth, 0);
  CHECK_EQ(o[10].close, 12);
  CHECK_EQ(o[11].depth, 2);
  CHECK_STR(hg_ir_comment_text(b, &o[11]), "body");
  CHECK_EQ(o[12].open, 10);
  CHECK_EQ(o[13].open, 2);
  CHECK_EQ(o[13].mid, 9);
  CHECK_EQ(o[13].depth, 0);
  /* values: kinds, scopes, defs, hints */
  const hg_ir_value_t *vp = hg_ir_value(b, p.id), *vi = hg_ir_value(b, i.id);
  CHECK_EQ(vp->kind, HG_VK_PARAM);
  CHECK_EQ(vp->def, -1);
  CHECK_EQ(vp->param, 0);
  CHECK_STR(vp->hint, "n");
  CHECK_EQ(vi->kind, HG_VK_COUNTER);
  CHECK_EQ(vi->def, 10);
  CHECK(vi->scope != 0);
  CHECK_EQ(hg_ir_results(b, &o[10])[0], i.id);
  CHECK_EQ(hg_ir_operands(b, &o[10])[1], p.id);
  CHECK_STR(hg_ir_opcode_name(HG_OP_TMA_LOAD), "tma_load");
  CHECK_STR(hg_ir_type_name(HG_T_TMAP), "TMAP");
  hg_builder_destroy(b);

  /* TMA operand slots and wgmma in-place results */
  b = fresh();
  hg_val_t m = hg_b_param_tmap(b, "m");
  hg_val_t z = hg_b_i32(b, 0);
  hg_val_t cs[3] = {z, z, z};
  hg_b_tma_load(b, m, z, z, 3, cs, HG_NONE, hg_b_cache_policy(b, HG_EVICT_LAST));
  const hg_ir_op_t *t = &b->ops[b->nops - 1];
  CHECK_EQ(t->code, HG_OP_TMA_LOAD);
  CHECK_EQ(t->num_operands, HG_IR_TMA_LOAD_COORDS + 3);
  CHECK_EQ(hg_ir_operands(b, t)[HG_IR_TMA_LOAD_MCAST], 0);
  CHECK(hg_ir_operands(b, t)[HG_IR_TMA_LOAD_HINT] != 0);
  CHECK_EQ(t->u.tma.rank, 3);
  hg_wgmma_op_t op = W(8, HG_F16, HG_F16, HG_F16); /* 2 accumulators */
  hg_val_t acc[2] = {hg_b_var(b, HG_T_I32, HG_NONE), hg_b_var(b, HG_T_I32, HG_NONE)};
  hg_val_t d = hg_b_i64(b, 0);
  hg_b_wgmma(b, &op, acc, &d, d, hg_b_pred(b, true));
  CHECK_OK(hg_builder_status(b));
  const hg_ir_op_t *w = &b->ops[b->nops - 1];
  CHECK_EQ(w->code, HG_OP_WGMMA);
  CHECK_EQ(w->num_results, 2);
  CHECK_EQ(w->num_operands, 2 + 1 + 2);
  CHECK_EQ(hg_ir_results(b, w)[1], acc[1].id);
  CHECK_EQ(hg_ir_operands(b, w)[1], acc[1].id);
  CHECK_EQ(hg_ir_wgmma_k(&w->u.wgmma), 16);
  CHECK_EQ(hg_builder_param_count(b), 1);
  CHECK_EQ(hg_builder_param_type(b, 0), HG_T_TMAP);
  CHECK_EQ(hg_builder_param_type(b, 1), HG_T_NONE);
  /* mma.sync: accumulators in place, then A and B; ldmatrix: fresh I32 results */
  hg_val_t macc[4], frag[4];
  for (int k = 0; k < 4; k++) macc[k] = hg_b_var(b, HG_T_F32, HG_NONE);
  hg_b_ldmatrix(b, 4, true, z, frag);
  const hg_ir_op_t *ldm = &b->ops[b->nops - 1];
  CHECK_EQ(ldm->code, HG_OP_LDMATRIX);
  CHECK_EQ(ldm->num_results, 4);
  CHECK_EQ(ldm->u.matrix.num, 4);
  CHECK_EQ(ldm->u.matrix.trans, 1);
  CHECK_EQ(hg_ir_results(b, ldm)[2], frag[2].id);
  CHECK_EQ(hg_ir_value(b, frag[2].id)->kind, HG_VK_SSA);
  CHECK_EQ(hg_val_type(b, frag[3]), HG_T_I32);
  hg_mma_sync_op_t mop = {.m = 16, .n = 8, .k = 16, .a = HG_F16, .b = HG_F16, .acc = HG_F32};
  hg_b_mma_sync(b, &mop, macc, frag, frag + 2);
  CHECK_OK(hg_builder_status(b));
  const hg_ir_op_t *ms = &b->ops[b->nops - 1];
  CHECK_EQ(ms->code, HG_OP_MMA_SYNC);
  CHECK_EQ(ms->num_results, 4);
  CHECK_EQ(ms->num_operands, 4 + 4 + 2);
  CHECK_EQ(hg_ir_results(b, ms)[3], macc[3].id);
  CHECK_EQ(hg_ir_operands(b, ms)[0], macc[0].id);
  CHECK_EQ(hg_ir_operands(b, ms)[4 + 1], frag[1].id);
  CHECK_EQ(hg_ir_operands(b, ms)[8 + 1], frag[3].id);
  CHECK_EQ(ms->u.mma_sync.a, HG_F16);
  hg_b_cp_async(b, 8, z, d, HG_NONE);
  const hg_ir_op_t *cp = &b->ops[b->nops - 1];
  CHECK_EQ(cp->code, HG_OP_CP_ASYNC);
  CHECK_EQ(cp->num_operands, 3);
  CHECK_EQ(hg_ir_operands(b, cp)[2], 0);
  CHECK_EQ(cp->u.cp_async.bytes, 8);
  CHECK_STR(hg_ir_opcode_name(HG_OP_CP_ASYNC_MBAR_ARRIVE), "cp_async_mbar_arrive");
  CHECK_STR(hg_ir_opcode_name(HG_OP_MMA_SYNC), "mma_sync");
  for (int c = 0; c < HG_OP_COUNT; c++) /* every opcode has a name for the sentences */
    if (!strcmp(hg_ir_opcode_name((hg_ir_opcode_t)c), "?")) HG_FAIL("opcode %d has no name", c);
  hg_b_name(b, z, "zero/coord");
  CHECK_STR(hg_ir_value(b, z.id)->hint, "zero_coord");
  hg_builder_destroy(b);
}

/* ---------------------------------------------------------------- shared memory */

static void test_smem_accounting(void) {
  hg_builder_t *b = fresh();
  CHECK_EQ(hg_builder_smem_bytes(b), 0);
  CHECK_EQ(hg_b_smem_reserve(b, 8, 8), 0);
  CHECK_EQ(hg_builder_smem_bytes(b), 8); /* 16-byte base alignment suffices: no slack */
  CHECK_EQ(hg_b_smem_reserve(b, 100, 4), 8);
  CHECK_EQ(hg_b_smem_reserve(b, 4096, 1024), 1024);
  /* 5120 reserved + 1008 slack for rounding a 16-aligned base up to 1024 */
  CHECK_EQ(hg_builder_smem_bytes(b), 5120 + 1008);
  CHECK_EQ(hg_b_smem_reserve(b, 1, 1), 5120);
  CHECK_EQ(hg_builder_smem_bytes(b), 5121 + 1008);
  hg_val_t a = hg_b_smem_addr(b, 1024);
  CHECK_EQ(hg_val_type(b, a), HG_T_I32);
  CHECK_OK(hg_builder_status(b));
  hg_b_smem_addr(b, 5121);
  CHECK_ERR(hg_builder_status(b), HG_ERR_INVALID,
            "hg_b_smem_addr: offset 5121 is past the 5121 bytes of shared memory reserved so far "
            "(reserve with hg_b_smem_reserve first)");
  hg_builder_destroy(b);

  EXPECT_MISUSE("hg_b_smem_reserve: alignment 48 is not a power of two in 1..1024",
                hg_b_smem_reserve(b, 8, 48));
  EXPECT_MISUSE("hg_b_smem_reserve: alignment 2048 is not a power of two",
                hg_b_smem_reserve(b, 8, 2048));
  EXPECT_MISUSE("hg_b_smem_reserve: a reservation of 0 bytes reserves nothing",
                hg_b_smem_reserve(b, 0, 8));
  EXPECT_MISUSE("hg_b_smem_reserve: 233456 bytes of shared memory (232448 reserved + 1008 of "
                "alignment slack) exceed the 232448 bytes (227 KB) a CTA may use on sm_90",
                hg_b_smem_reserve(b, 232448, 1024));
  EXPECT_MISUSE("hg_b_smem_reserve: 232464 bytes of shared memory (232464 reserved + 0 of "
                "alignment slack) exceed",
                {
                  hg_b_smem_reserve(b, 232448, 16);
                  hg_b_smem_reserve(b, 16, 16);
                });
  hg_builder_t *ok = fresh();
  CHECK_EQ(hg_b_smem_reserve(ok, 232448 - 1008, 1024), 0);
  CHECK_EQ(hg_builder_smem_bytes(ok), 232448);
  CHECK_OK(hg_builder_status(ok));
  hg_builder_destroy(ok);
}

/* ---------------------------------------------------------------- wgmma's registers in flight */

/* A k-loop of register-A wgmmas over `katoms` K atoms into 32 accumulators (m64n64 f32):
 * each K atom's fragment from ldmatrix, then its wgmma; `per_atom` commits a group per K atom
 * and waits down to `atom_wait` pending groups before each ldmatrix; the body ends with
 * wait_group `body_wait` (in the branch of an if on `cond` when `branch_wait`); after the loop
 * wait_group 0 unless `read_early`, then the accumulators are stored. */
typedef struct {
  int katoms;
  bool per_atom;
  int atom_wait, body_wait;
  bool branch_wait, read_early;
} hz_t;

static hg_status_t hazard_kernel(const hz_t *z) {
  hg_builder_t *b = fresh();
  hg_b_set_threads(b, 128);
  hg_val_t desc = hg_b_param(b, HG_T_I64, "desc");
  hg_val_t kt_end = hg_b_param(b, HG_T_I32, "k_tiles");
  hg_val_t out = hg_b_param(b, HG_T_I64, "out");
  hg_val_t acc[32];
  for (int i = 0; i < 32; i++) acc[i] = hg_b_var(b, HG_T_F32, hg_b_f32(b, 0.0f));
  const hg_wgmma_op_t op = {.n = 64, .a = HG_BF16, .b = HG_BF16, .acc = HG_F32, .a_regs = true};
  hg_val_t kt = hg_b_for(b, hg_b_i32(b, 0), kt_end, hg_b_i32(b, 1));
  hg_val_t a[8][4];
  if (!z->per_atom) {
    for (int k = 0; k < z->katoms; k++)
      hg_b_ldmatrix(b, 4, false, hg_b_bin(b, HG_SHL, kt, hg_b_i32(b, 4 + k)), a[k]);
    hg_b_wgmma_fence(b);
  }
  for (int k = 0; k < z->katoms; k++) {
    if (z->per_atom) {
      hg_b_wgmma_wait(b, z->atom_wait);
      hg_b_ldmatrix(b, 4, false, hg_b_bin(b, HG_SHL, kt, hg_b_i32(b, 4 + k)), a[k]);
      hg_b_wgmma_fence(b);
    }
    hg_b_wgmma(b, &op, acc, a[k], hg_b_bin(b, HG_ADD, desc, hg_b_i64(b, k)), hg_b_pred(b, true));
    if (z->per_atom) hg_b_wgmma_commit(b);
  }
  if (!z->per_atom) hg_b_wgmma_commit(b);
  if (z->branch_wait) {
    hg_b_if(b, hg_b_cmp(b, HG_EQ, kt, hg_b_i32(b, 3)));
    hg_b_wgmma_wait(b, z->body_wait);
    hg_b_endif(b);
  } else {
    hg_b_wgmma_wait(b, z->body_wait);
  }
  hg_b_endfor(b);
  if (!z->read_early) hg_b_wgmma_wait(b, 0);
  for (int i = 0; i < 32; i += 4)
    hg_b_store(b, HG_GLOBAL, 0, 4, hg_b_bin(b, HG_ADD, out, hg_b_i64(b, 4 * i)), acc + i);
  hg_status_t s = hg_ir_check_complete(b);
  hg_builder_destroy(b);
  return s;
}

/* PTX ISA "wgmma.mma_async": an instruction that writes a pending wgmma's A fragment, or
 * touches its accumulators, before a wait_group covers it is undefined. The RS main loop
 * that gave wrong products on the GPU (cooperative 128x192 tiles) had the shape of the first
 * case: the next k-block's ldmatrix into the registers the last k-block's wgmmas still read
 * (wait_group 1 leaves that k-block in flight). */
static void test_wgmma_register_hazards(void) {
  /* one group per k-block, wait_group 1: the next ldmatrix overwrites a pending fragment */
  CHECK_ERR(hazard_kernel(&(hz_t){.katoms = 4, .body_wait = 1}), HG_ERR_INVALID,
            "(ldmatrix) writes value 73 (ldm), which a wgmma still in flight reads as its A "
            "fragment");
  /* the same with wait_group 0: nothing in flight across the back edge */
  CHECK_OK(hazard_kernel(&(hz_t){.katoms = 4, .body_wait = 0}));
  /* a group per K atom, each ldmatrix after the previous k-block's group of the same atom
   * (3 = atoms - 1 pending), the body ending with one k-block (4 groups) in flight: the fix */
  CHECK_OK(hazard_kernel(&(hz_t){.katoms = 4, .per_atom = true, .atom_wait = 3, .body_wait = 4}));
  /* one group too many left pending before the ldmatrix */
  CHECK_ERR(hazard_kernel(&(hz_t){.katoms = 4, .per_atom = true, .atom_wait = 4, .body_wait = 4}),
            HG_ERR_INVALID, "which a wgmma still in flight reads as its A fragment");
  /* the wait on one path only: the other still has the fragment in flight */
  CHECK_ERR(hazard_kernel(&(hz_t){.katoms = 2, .body_wait = 0, .branch_wait = true}),
            HG_ERR_INVALID, "(ldmatrix) writes value");
  /* accumulators stored while the last k-block's groups are still in flight */
  CHECK_ERR(hazard_kernel(&(hz_t){
                .katoms = 4, .per_atom = true, .atom_wait = 3, .body_wait = 4, .read_early = true}),
            HG_ERR_INVALID, "(store) reads accumulator");
}

int main(void) {
  HG_RUN(test_create);
  HG_RUN(test_type_mismatch_names_both_types_and_the_op);
  HG_RUN(test_operand_validity);
  HG_RUN(test_assign_rules);
  HG_RUN(test_regions_balance);
  HG_RUN(test_values_do_not_escape_their_region);
  HG_RUN(test_widths_and_ranks);
  HG_RUN(test_reductions);
  HG_RUN(test_wgmma_shapes_and_types);
  HG_RUN(test_wgmma_operands);
  HG_RUN(test_cp_async_misuse);
  HG_RUN(test_ldmatrix_misuse);
  HG_RUN(test_mma_sync_rules);
  HG_RUN(test_kernel_level_rules);
  HG_RUN(test_errors_stick);
  HG_RUN(test_ir_structure);
  HG_RUN(test_smem_accounting);
  HG_RUN(test_wgmma_register_hazards);
  return hg_test_finish();
}
