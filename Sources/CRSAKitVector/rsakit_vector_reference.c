/*
 * rsakit_vector_reference.c - the portable reference of the radix-2^52 Montgomery product
 * and squaring: scalar 52-bit products through unsigned __int128, product scanning
 * (column by column), the same digit layouts as the kernel. The multi-buffer form runs
 * the same column code once per lane with a stride of 8 words.
 *
 * Column k (0 <= k < 2N) of t = a b + m n collects the low 52 bits of every digit product
 * whose indices sum to k and the high 52 bits of every product whose indices sum to k - 1,
 * plus the carry from column k - 1. For k < N the Montgomery digit m_k = t k0 mod 2^52 is
 * chosen there (so the column's low 52 bits vanish); for k >= N the column's low 52 bits
 * are digit k - N of the result. Bounds: at most 4N terms below 2^52 and a carry below
 * 2^9, so t < 2^60 for N = 40. The squaring sums each cross product a_i a_j (i < j) once
 * and doubles it: about half the digit products of a multiplication.
 *
 * Constant time: every loop bound depends on N only, no branch or index depends on data.
 */
#include "rsakit_vector_internal.h"

#include <string.h>

typedef unsigned __int128 rk_u128;

static inline uint64_t lo52(uint64_t a, uint64_t b) {
    return (uint64_t)((rk_u128)a * b) & RK_MASK52;
}

static inline uint64_t hi52(uint64_t a, uint64_t b) {
    return (uint64_t)(((rk_u128)a * b) >> 52);
}

static inline size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }

/* a, b, n, r: digit i at index i * stride. */
static void ref_amm(uint64_t *r, const uint64_t *a, const uint64_t *b, const uint64_t *n,
                    uint64_t k0, size_t N, size_t stride, int square) {
    uint64_t m[RK_MAX_DIGITS];
    uint64_t out[RK_MAX_DIGITS];
    uint64_t carry = 0;
    for (size_t k = 0; k < 2 * N; k++) {
        uint64_t t = carry;
        /* Pairs (i, k - i) with both indices in [0, N): i in [lo_i, hi_i]. */
        size_t lo_i = k >= N ? k - N + 1 : 0;
        size_t hi_i = min_sz(k, N - 1);
        /* Pairs summing to k - 1 (for the high halves). */
        size_t lo_h = k >= N + 1 ? k - N : 0;
        size_t hi_h = k >= 1 ? min_sz(k - 1, N - 1) : 0;
        int has_h = k >= 1;
        if (!square) {
            for (size_t i = lo_i; i <= hi_i; i++) {
                t += lo52(a[i * stride], b[(k - i) * stride]);
            }
            if (has_h) {
                for (size_t i = lo_h; i <= hi_h; i++) {
                    t += hi52(a[i * stride], b[(k - 1 - i) * stride]);
                }
            }
        } else {
            uint64_t off = 0;
            for (size_t i = lo_i; 2 * i < k; i++) {
                off += lo52(a[i * stride], a[(k - i) * stride]);
            }
            if (has_h) {
                for (size_t i = lo_h; 2 * i < k - 1; i++) {
                    off += hi52(a[i * stride], a[(k - 1 - i) * stride]);
                }
            }
            t += 2 * off;
            if (k % 2 == 0 && k / 2 < N) {
                t += lo52(a[(k / 2) * stride], a[(k / 2) * stride]);
            }
            if (has_h && (k - 1) % 2 == 0 && (k - 1) / 2 < N) {
                t += hi52(a[((k - 1) / 2) * stride], a[((k - 1) / 2) * stride]);
            }
        }
        /* m n: low halves of pairs summing to k (m_k itself is not known yet). */
        size_t hi_m = k < N ? k : hi_i + 1; /* exclusive */
        for (size_t i = lo_i; i < hi_m && i <= hi_i; i++) {
            t += lo52(m[i], n[(k - i) * stride]);
        }
        if (has_h) {
            for (size_t i = lo_h; i <= hi_h; i++) {
                t += hi52(m[i], n[(k - 1 - i) * stride]);
            }
        }
        if (k < N) {
            m[k] = (t * k0) & RK_MASK52;
            t += lo52(m[k], n[0]);
        } else {
            out[k - N] = t & RK_MASK52;
        }
        carry = t >> 52;
    }
    for (size_t i = 0; i < N; i++) {
        r[i * stride] = out[i];
    }
    rk_zero(m, sizeof m);
    rk_zero(out, sizeof out);
}

static void ref_mul1(uint64_t *r, const uint64_t *a, const uint64_t *b, const rsakit_vec_modulus *m) {
    ref_amm(r, a, b, m->n1, m->k0, m->digits, 1, 0);
}

static void ref_sqr1(uint64_t *r, const uint64_t *a, const rsakit_vec_modulus *m) {
    ref_amm(r, a, a, m->n1, m->k0, m->digits, 1, 1);
}

static void ref_mul8(uint64_t *r, const uint64_t *a, const uint64_t *b, const rsakit_vec_modulus *m) {
    for (size_t l = 0; l < 8; l++) {
        ref_amm(r + l, a + l, b + l, m->n8 + l, m->k0, m->digits, 8, 0);
    }
}

static void ref_sqr8(uint64_t *r, const uint64_t *a, const rsakit_vec_modulus *m) {
    for (size_t l = 0; l < 8; l++) {
        ref_amm(r + l, a + l, a + l, m->n8 + l, m->k0, m->digits, 8, 1);
    }
}

void rk_select_scalar(uint64_t *r, const uint64_t *table, size_t entries, size_t words, uint64_t index) {
    for (size_t w = 0; w < words; w++) {
        r[w] = 0;
    }
    for (uint64_t e = 0; e < entries; e++) {
        uint64_t mask = rk_entry_mask(e, index);
        const uint64_t *entry = table + e * words;
        for (size_t w = 0; w < words; w++) {
            r[w] |= entry[w] & mask;
        }
    }
}

/* rk_sqr_scan_fn: the squaring, then slice s of the 32-entry scan, pair by pair. The oracle
 * of the kernel's fused form, which spreads the same pairs over the squaring's rows. */
static void ref_sqr8_scan(uint64_t *r, const uint64_t *a, const rsakit_vec_modulus *m, uint64_t *t,
                          const uint64_t *table, uint64_t index, unsigned slice) {
    size_t N = m->digits, words = 8 * N;
    ref_sqr8(r, a, m);
    if (slice == 0) {
        memset(t, 0, words * sizeof(uint64_t));
    }
    for (size_t p = 8 * N * slice; p < 8 * N * (slice + 1); p++) {
        size_t k = p / RK_TABLE, e = p % RK_TABLE;
        uint64_t mask = rk_entry_mask(e, index);
        for (size_t w = 0; w < 8; w++) {
            t[8 * k + w] |= table[e * words + 8 * k + w] & mask;
        }
    }
}

static void ref_mul1x2(uint64_t *r0, const uint64_t *a0, const uint64_t *b0, const rsakit_vec_modulus *m0,
                       uint64_t *r1, const uint64_t *a1, const uint64_t *b1, const rsakit_vec_modulus *m1) {
    ref_mul1(r0, a0, b0, m0);
    ref_mul1(r1, a1, b1, m1);
}

const rk_ops rk_reference_ops = {
    .mul1 = ref_mul1,
    .sqr1 = ref_sqr1,
    .mul8 = ref_mul8,
    .sqr8 = ref_sqr8,
    .select = rk_select_scalar,
    .mul1x2 = ref_mul1x2,
    .sqr8_scan = ref_sqr8_scan,
};
