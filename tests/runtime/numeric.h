/* Host conversions for the GEMM checks (and the mock cuBLASLt): bf16, f16, fp8 e4m3/e5m2,
 * and a small deterministic random generator. Header-only, static functions. */
#ifndef HG_TEST_RUNTIME_NUMERIC_H
#define HG_TEST_RUNTIME_NUMERIC_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float hgt_bits_to_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static inline uint32_t hgt_f32_to_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* bf16 = the top half of an f32; round to nearest even. */
static inline uint16_t hgt_f32_to_bf16(float f) {
  uint32_t u = hgt_f32_to_bits(f);
  if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu)) return 0x7FC0; /* NaN */
  u += 0x7FFFu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

static inline float hgt_bf16_to_f32(uint16_t h) {
  return hgt_bits_to_f32((uint32_t)h << 16);
}

/* IEEE binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits. */
static inline float hgt_f16_to_f32(uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 0x1F, m = h & 0x3FF;
  float v;
  if (e == 0)
    v = ldexpf((float)m, -24);
  else if (e == 31)
    v = m ? NAN : INFINITY;
  else
    v = ldexpf((float)(m | 0x400), e - 25);
  return s ? -v : v;
}

static inline uint16_t hgt_f32_to_f16(float f) {
  /* Exact search over the finite encodings' neighbourhood: scale to the f16 grid and
   * round to nearest even with rintf (the default rounding mode). */
  const uint16_t sign = signbit(f) ? 0x8000 : 0;
  float a = fabsf(f);
  if (isnan(f)) return 0x7E00;
  if (a >= 65520.0f) return sign | 0x7C00; /* rounds to infinity */
  if (a < ldexpf(1.0f, -14)) {             /* subnormal: multiples of 2^-24 */
    return sign | (uint16_t)rintf(ldexpf(a, 24));
  }
  int e;
  frexpf(a, &e);                           /* a = fr * 2^e, fr in [0.5, 1) */
  const int exp = e - 1;                   /* a in [2^exp, 2^(exp+1)) */
  float mant = rintf(ldexpf(a, 10 - exp)); /* 1024..2048 */
  int ex = exp;
  if (mant >= 2048.0f) {
    mant /= 2.0f;
    ex++;
  }
  if (ex > 15) return sign | 0x7C00;
  return sign | (uint16_t)((ex + 15) << 10) | (uint16_t)((int)mant - 1024);
}

/* OCP fp8 E4M3 (the "fn" variant Hopper uses): bias 7, no infinities, S.1111.111 is NaN,
 * largest finite 448. */
static inline float hgt_e4m3_to_f32(uint8_t b) {
  const int s = b >> 7, e = (b >> 3) & 0xF, m = b & 7;
  float v;
  if (e == 15 && m == 7)
    v = NAN;
  else if (e == 0)
    v = ldexpf((float)m, -9);
  else
    v = ldexpf((float)(8 | m), e - 10);
  return s ? -v : v;
}

/* OCP fp8 E5M2: bias 15, IEEE-style infinities and NaNs. */
static inline float hgt_e5m2_to_f32(uint8_t b) {
  const int s = b >> 7, e = (b >> 2) & 0x1F, m = b & 3;
  float v;
  if (e == 31)
    v = m ? NAN : INFINITY;
  else if (e == 0)
    v = ldexpf((float)m, -16);
  else
    v = ldexpf((float)(4 | m), e - 17);
  return s ? -v : v;
}

/* Nearest encoding (ties to the even code), saturating; the tests only ever encode
 * values that are exactly representable. */
static inline uint8_t hgt_f32_to_fp8(float f, int e5m2) {
  int best = 0;
  float best_err = INFINITY;
  for (int c = 0; c < 256; c++) {
    const float v = e5m2 ? hgt_e5m2_to_f32((uint8_t)c) : hgt_e4m3_to_f32((uint8_t)c);
    if (isnan(v) || isinf(v)) continue;
    const float err = fabsf(v - f);
    if (err < best_err || (err == best_err && (c & 1) == 0 && (best & 1))) {
      best_err = err;
      best = c;
    }
  }
  return (uint8_t)best;
}

/* xorshift64*: deterministic inputs that are never all zeros. */
static inline uint64_t hgt_rand(uint64_t *state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * UINT64_C(0x2545F4914F6CDD1D);
}

/* A multiple of 1/4 in [-2, 2]: exact in bf16, f16, e4m3 and e5m2, so the only error of
 * a GEMM is the accumulation order and the output rounding. */
static inline float hgt_rand_quarter(uint64_t *state) {
  return (float)((int)(hgt_rand(state) % 17) - 8) / 4.0f;
}

#endif
