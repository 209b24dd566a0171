/*
 * rsakit_vector_modulus.c - what the exponentiations share: layout conversions between
 * 64-bit limbs and radix-2^52 digits, the per-modulus constants (-n^-1 mod 2^52, R^2 mod n,
 * the eight-lane copies), the final conditional subtraction and the wipe.
 *
 * Constant-time in the modulus (a secret prime): loop counts depend on the public limb
 * count and size class only, selections are masks.
 */
#include "rsakit_vector_internal.h"

#include <stdlib.h>
#include <string.h>

/* memset at full width, then an empty asm that claims to read the memory, so the compiler
 * cannot drop the stores as dead (the byte-wise volatile loop this replaces cost 42 % of
 * the eight-lane kernel's time when it ran on every product). */
void rk_zero(void *p, size_t len) {
    memset(p, 0, len);
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

/* Digit i (52 bits from bit 52 i) of a little-endian limb array. */
static uint64_t limbs_digit(const uint64_t *limbs, size_t count, size_t i) {
    size_t bit = 52 * i;
    size_t w = bit / 64;
    unsigned s = (unsigned)(bit % 64);
    if (w >= count) {
        return 0;
    }
    uint64_t d = limbs[w] >> s;
    if (s > 12 && w + 1 < count) {
        d |= limbs[w + 1] << (64 - s);
    }
    return d & RK_MASK52;
}

/* limbs = the digits d[i * stride], i < N (bits past 64 * count are dropped). */
static void digits_to_limbs(uint64_t *limbs, size_t count, const uint64_t *d, size_t N, size_t stride) {
    memset(limbs, 0, count * sizeof(uint64_t));
    for (size_t i = 0; i < N; i++) {
        uint64_t v = d[i * stride];
        size_t bit = 52 * i;
        size_t w = bit / 64;
        unsigned s = (unsigned)(bit % 64);
        if (w < count) {
            limbs[w] |= v << s;
        }
        if (s > 12 && w + 1 < count) {
            limbs[w + 1] |= v >> (64 - s);
        }
    }
}

void rsakit_vec_to_digits(const rsakit_vec_modulus *m, uint64_t *digits, const uint64_t *limbs) {
    for (size_t i = 0; i < m->words; i++) {
        digits[i] = i < m->digits ? limbs_digit(limbs, m->limbs, i) : 0;
    }
}

void rsakit_vec_from_digits(const rsakit_vec_modulus *m, uint64_t *limbs, const uint64_t *digits) {
    digits_to_limbs(limbs, m->limbs, digits, m->digits, 1);
}

void rsakit_vec_to_lane(const rsakit_vec_modulus *m, uint64_t *digits8, size_t lane, const uint64_t *limbs) {
    for (size_t i = 0; i < m->digits; i++) {
        digits8[8 * i + lane] = limbs_digit(limbs, m->limbs, i);
    }
}

void rsakit_vec_from_lane(const rsakit_vec_modulus *m, uint64_t *limbs, const uint64_t *digits8, size_t lane) {
    digits_to_limbs(limbs, m->limbs, digits8 + lane, m->digits, 8);
}

/* x = x - n when x >= n (x <= n on entry... any x < 2n), per lane, by masks. */
void rk_final_subtract(uint64_t *x, const uint64_t *n, size_t N, size_t stride) {
    uint64_t d[RK_MAX_DIGITS];
    uint64_t borrow = 0;
    for (size_t i = 0; i < N; i++) {
        uint64_t t = x[i * stride] - n[i * stride] - borrow;
        borrow = t >> 63;
        d[i] = t & RK_MASK52;
    }
    uint64_t keep_x = 0 - borrow; /* borrow: x < n, keep x */
    for (size_t i = 0; i < N; i++) {
        x[i * stride] = (x[i * stride] & keep_x) | (d[i] & ~keep_x);
    }
    rk_zero(d, sizeof d);
}

/* x = 2x mod n for x < n (N normalized digits): double, then subtract n under a borrow
 * mask. Constant-time: no branch or index on x or n. */
static void double_mod(uint64_t *x, uint64_t *d, const uint64_t *n, size_t N) {
    uint64_t carry = 0;
    for (size_t i = 0; i < N; i++) {
        uint64_t t = (x[i] << 1) | carry;
        carry = t >> 52;
        x[i] = t & RK_MASK52;
    }
    uint64_t borrow = 0;
    for (size_t i = 0; i < N; i++) {
        uint64_t t = x[i] - n[i] - borrow;
        borrow = t >> 63;
        d[i] = t & RK_MASK52;
    }
    uint64_t keep_x = 0 - borrow; /* x < n: keep x */
    for (size_t i = 0; i < N; i++) {
        x[i] = (x[i] & keep_x) | (d[i] & ~keep_x);
    }
}

/* m->rr1 = R^2 mod n = 2^(104 N) mod n, fully reduced, from m->n1 and m->k0 (set before),
 * n having `limbs` limbs with a non-zero top limb (so 2^(64 (limbs - 1)) < n).
 *
 * With 52 N = 2^k s (s odd: k = 3, 4, 3, 5 for N = 10, 20, 30, 40): start from
 * 2^(64 (limbs - 1)) mod n (itself), double up to 2^(52 N + s) mod n (a few hundred
 * constant-time doublings), then k Montgomery squarings, each taking 2^t to 2^(2t - 52N):
 * 52 N + s -> 52 N + 2 s -> ... -> 52 N + 2^k s = 104 N. The squarings are the portable
 * reference's (constant-time, the valgrind-checked code). All counts depend on N and the
 * limb count only. The doubling from 1 that this replaces took 104 N doublings: 0.2 ms
 * per 2048-bit modulus, paid by every process that loads a key. */
static void compute_rr(rsakit_vec_modulus *m) {
    const size_t N = m->digits;
    size_t k = 0, s = 52 * N;
    while (s % 2 == 0) {
        s /= 2;
        k++;
    }
    _Alignas(64) uint64_t x[RK_MAX_WORDS];
    uint64_t d[RK_MAX_DIGITS];
    memset(x, 0, sizeof x);
    size_t start = 64 * (m->limbs - 1);
    x[start / 52] = (uint64_t)1 << (start % 52);
    for (size_t t = start; t < 52 * N + s; t++) {
        double_mod(x, d, m->n1, N);
    }
    for (size_t i = 0; i < k; i++) {
        rk_reference_ops.sqr1(x, x, m); /* < 2n */
    }
    rk_final_subtract(x, m->n1, N, 1);
    memcpy(m->rr1, x, sizeof x);
    rk_zero(x, sizeof x);
    rk_zero(d, sizeof d);
}

rsakit_vec_modulus *rsakit_vec_modulus_create(const uint64_t *n, size_t limbs) {
    /* Only the public limb count is examined: n itself (a secret prime) is never branched
     * on, which is why oddness and a non-zero top limb are the caller's promise. */
    if (n == NULL || limbs == 0 || limbs > RSAKIT_VEC_MAX_LIMBS) {
        return NULL;
    }
    size_t N = limbs <= 8 ? 10 : limbs <= 16 ? 20 : limbs <= 24 ? 30 : 40;

    rsakit_vec_modulus *m = aligned_alloc(64, (sizeof *m + 63) / 64 * 64);
    if (m == NULL) {
        return NULL;
    }
    memset(m, 0, sizeof *m);
    m->limbs = limbs;
    m->digits = N;
    m->vectors = (N + 7) / 8;
    m->words = m->vectors * 8;

    /* -n^-1 mod 2^52: Newton, 3 -> 6 -> 12 -> 24 -> 48 -> 96 correct bits. */
    uint64_t inv = n[0];
    for (int i = 0; i < 5; i++) {
        inv *= 2 - n[0] * inv;
    }
    m->k0 = (0 - inv) & RK_MASK52;

    /* R^2 mod n = 2^(104 N) mod n, computed below from the digits of n. */
    uint64_t rr[RSAKIT_VEC_MAX_LIMBS];
    uint64_t one[RSAKIT_VEC_MAX_LIMBS];
    memset(one, 0, sizeof one);
    one[0] = 1;
    rsakit_vec_to_digits(m, m->n1, n);
    compute_rr(m);
    rsakit_vec_from_digits(m, rr, m->rr1);
    rsakit_vec_to_digits(m, m->one1, one);
    for (size_t l = 0; l < 8; l++) {
        rsakit_vec_to_lane(m, m->n8, l, n);
        rsakit_vec_to_lane(m, m->rr8, l, rr);
        rsakit_vec_to_lane(m, m->one8, l, one);
        m->k08[l] = m->k0;
    }
    rk_zero(rr, sizeof rr);
    return m;
}

void rsakit_vec_modulus_destroy(rsakit_vec_modulus *m) {
    if (m != NULL) {
        rk_zero(m, sizeof *m);
        free(m);
    }
}

size_t rsakit_vec_modulus_limbs(const rsakit_vec_modulus *m) { return m->limbs; }
size_t rsakit_vec_modulus_digits(const rsakit_vec_modulus *m) { return m->digits; }
size_t rsakit_vec_modulus_words(const rsakit_vec_modulus *m) { return m->words; }
