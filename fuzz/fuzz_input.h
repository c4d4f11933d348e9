/* Reading a fuzzer's bytes as typed values: each read takes what it needs from the front
 * and gives zeros once the input runs out, so that every input is a valid program of
 * calls. Shared by the fuzz_*.c targets that build structures rather than text. */
#ifndef HOPGEN_FUZZ_INPUT_H
#define HOPGEN_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Nothing outside the process: no cache directory, CUDA driver, cuBLASLt or MLIR tool. */
static inline void fz_offline(void) {
  setenv("HOPGEN_CACHE_DIR", "off", 1);
  setenv("HOPGEN_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  setenv("HOPGEN_LIBCUBLASLT", "/nonexistent/libcublasLt.so", 1);
  setenv("HOPGEN_MLIR_OPT", "/nonexistent/mlir-opt-22", 1);
}

typedef struct fz {
  const uint8_t *p;
  size_t n;
} fz_t;

static inline uint64_t fz_bits(fz_t *f, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) {
    v |= (uint64_t)(f->n ? *f->p : 0) << (8 * i);
    if (f->n) f->p++, f->n--;
  }
  return v;
}
static inline uint8_t fz_u8(fz_t *f) {
  return (uint8_t)fz_bits(f, 1);
}
static inline uint32_t fz_u32(fz_t *f) {
  return (uint32_t)fz_bits(f, 4);
}
static inline int64_t fz_i64(fz_t *f) {
  return (int64_t)fz_bits(f, 8);
}
static inline int fz_bool(fz_t *f) {
  return fz_u8(f) & 1;
}
/* 0..n-1 mostly, and now and then a value just past the end (an enum out of range). */
static inline int fz_pick(fz_t *f, int n) {
  const uint8_t b = fz_u8(f);
  return b >= 250 ? n + (b - 250) : b % n;
}
/* A small signed integer (most sizes and counts), or with one bit set a wild one. */
static inline int64_t fz_int(fz_t *f, int64_t small) {
  const uint8_t sel = fz_u8(f);
  if (sel & 0x80) return fz_i64(f);
  return (int64_t)(fz_u32(f) % (uint64_t)(small + 1)) - ((sel & 0x40) ? small / 4 : 0);
}

#endif
