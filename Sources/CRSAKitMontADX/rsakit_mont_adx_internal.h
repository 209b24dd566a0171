/*
 * rsakit_mont_adx_internal.h - what the C driver and the assembly share: the modulus
 * parameters the assembly reads (by fixed offsets) and the assembly entry points.
 */
#ifndef RSAKIT_MONT_ADX_INTERNAL_H
#define RSAKIT_MONT_ADX_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Read by the assembly at offsets 0, 8, 16, 24 (KP_N, KP_N0INV, KP_W, KP_TAB): keep the order. */
struct rk_adx_kp {
    const uint64_t *n;  /* W words, zero above the caller's limbs */
    uint64_t n0inv;     /* -n^-1 mod 2^64 */
    uint64_t w;         /* padded limb count: a multiple of 4, 4 ... 64 */
    const void *tab;    /* rk_adx_table(w): the unrolled routines of size W */
};

#if defined(__x86_64__)
/* r = a b / R (almost Montgomery, < R); t: 2W words of scratch. r may alias a or b. */
void rk_adx_mul(uint64_t *r, const uint64_t *a, const uint64_t *b, const struct rk_adx_kp *kp, uint64_t *t);
/* r = a^2 / R (almost Montgomery, < R); t: 2W words of scratch. r may alias a. */
void rk_adx_sqr(uint64_t *r, const uint64_t *a, const struct rk_adx_kp *kp, uint64_t *t);
/* out = entry idx of 32 entries of W words (16-byte aligned), every entry read under a mask. */
void rk_adx_select(uint64_t *out, const uint64_t *table, const struct rk_adx_kp *kp, uint64_t idx);
/* Per padded size W = 4 (k + 1): the offset of W's table of entry points from this array. */
extern const int32_t rk_adx_tables[16];
/* The table of entry points of the unrolled routines of size w (4, 8, ..., 64). */
static inline const void *rk_adx_table(uint64_t w) {
    return (const char *)rk_adx_tables + rk_adx_tables[w / 4 - 1];
}
#endif

#endif
