/*
 * rsakit_vector_internal.h - what the reference, the kernel and the dispatch share.
 * Private to the CRSAKitVector target.
 */
#ifndef RSAKIT_VECTOR_INTERNAL_H
#define RSAKIT_VECTOR_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "rsakit_vector.h"

#define RK_MASK52 ((uint64_t)0xFFFFFFFFFFFFF)
/* The fixed-window width: 5 bits, a table of 32 entries (rsakit_vector_exp.c says why). */
#define RK_WINDOW 5
#define RK_TABLE (1u << RK_WINDOW)
#define RK_MAX_DIGITS 40
#define RK_MAX_WORDS 40 /* single-buffer words of the largest class */

struct rsakit_vec_modulus {
    /* Multi-buffer layout (digit i of every lane in words 8i...8i+7), 64-byte aligned. */
    _Alignas(64) uint64_t n8[RK_MAX_DIGITS * 8];
    _Alignas(64) uint64_t rr8[RK_MAX_DIGITS * 8];
    _Alignas(64) uint64_t one8[RK_MAX_DIGITS * 8];
    _Alignas(64) uint64_t k08[8];
    /* Single-buffer layout. */
    _Alignas(64) uint64_t n1[RK_MAX_WORDS];
    _Alignas(64) uint64_t rr1[RK_MAX_WORDS];
    _Alignas(64) uint64_t one1[RK_MAX_WORDS];
    uint64_t k0;      /* -n^-1 mod 2^52 */
    size_t limbs;     /* 64-bit limbs of n (inputs and outputs) */
    size_t digits;    /* N: 10, 20, 30 or 40 */
    size_t vectors;   /* ceil(N / 8) */
    size_t words;     /* vectors * 8 */
};

/* Almost-Montgomery products r = a b / R mod n, with a, b < 2n -> r < 2n, normalized
 * digits. r may alias a or b. "1" = single buffer, "8" = eight lanes. */
typedef void (*rk_mul_fn)(uint64_t *r, const uint64_t *a, const uint64_t *b, const rsakit_vec_modulus *m);
typedef void (*rk_sqr_fn)(uint64_t *r, const uint64_t *a, const rsakit_vec_modulus *m);
/* r = table[index] for a table of `entries` (16 or 32) entries of `words` words, scanning
 * every entry. */
typedef void (*rk_select_fn)(uint64_t *r, const uint64_t *table, size_t entries, size_t words, uint64_t index);

/* Two single-buffer products with two moduli of one size class at once (p and q). */
typedef void (*rk_mul2_fn)(uint64_t *r0, const uint64_t *a0, const uint64_t *b0, const rsakit_vec_modulus *m0,
                           uint64_t *r1, const uint64_t *a1, const uint64_t *b1, const rsakit_vec_modulus *m1);

/* r = a^2 / R (as rk_sqr_fn, eight lanes) and slice `slice` (0-3) of a scan of a 32-entry
 * table of 8 N-word entries: of the 32 N (vector k, entry e) pairs, p = 32 k + e, pairs
 * 8 N slice .. 8 N slice + 8 N - 1 do t's vector k |= entry e's vector k when e == index
 * (every pair read). Slice 0 first zeroes t, so four calls, slices 0-3, leave t =
 * table[index], as rk_select_fn would: the first four squarings of an eight-lane window do
 * its scan beside their multiply-adds. */
typedef void (*rk_sqr_scan_fn)(uint64_t *r, const uint64_t *a, const rsakit_vec_modulus *m, uint64_t *t,
                               const uint64_t *table, uint64_t index, unsigned slice);

/* Tests only (rsakit_vec_normalize_for_tests): the single-buffer products' closing
 * normalization, in place, over nv (1-5) vectors of 64-bit digits: normalize1 over zmm
 * (8 nv words) when half is 0, normalize4 over ymm (4 nv words) when half is 1. */
typedef void (*rk_normalize_fn)(uint64_t *words, size_t nv, int half);

typedef struct rk_ops {
    rk_mul_fn mul1;
    rk_sqr_fn sqr1;
    rk_mul_fn mul8;
    rk_sqr_fn sqr8;
    rk_select_fn select;
    rk_mul2_fn mul1x2;
    rk_sqr_scan_fn sqr8_scan;
    rk_normalize_fn normalize; /* NULL in the reference, which has no vectors */
} rk_ops;

extern const rk_ops rk_reference_ops;
extern const rk_ops rk_emulated_ops;
/* Defined only when the compiler can target AVX-512 IFMA (x86-64 clang or gcc). */
extern const rk_ops rk_ifma_ops;
extern const int rk_ifma_compiled;
/* Whether the kernel was compiled with optimisation (see rsakit_vector_ifma.c). */
extern const int rk_ifma_optimised;

/* x = x - n when x >= n (any x < 2n), N digits at a stride of `stride` words, by masks. */
void rk_final_subtract(uint64_t *x, const uint64_t *n, size_t N, size_t stride);

/* The ops of impl, or NULL when this CPU cannot run it. */
const rk_ops *rk_ops_for(rsakit_vec_impl impl);

/* The known-answer digest of ops' products (rsakit_vector_dispatch.c). */
uint64_t rk_known_answer_digest(const rk_ops *ops);

/* All ones when e == index, else zero, without a comparison branch: the mask by which a
 * table scan keeps the wanted entry (index secret, e public). */
static inline uint64_t rk_entry_mask(uint64_t e, uint64_t index) {
    uint64_t d = e ^ index;
    return ((d | (0 - d)) >> 63) - 1;
}

/* The scalar masked table scan (used by the reference and the emulation). */
void rk_select_scalar(uint64_t *r, const uint64_t *table, size_t entries, size_t words, uint64_t index);

/* Zero memory in a way the compiler keeps. */
void rk_zero(void *p, size_t len);

#endif
