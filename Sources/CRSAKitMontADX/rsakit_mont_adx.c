/*
 * rsakit_mont_adx.c - the driver of the radix-2^64 Montgomery kernel: CPU check, modulus
 * constants, the fixed-window exponentiation, the public-exponent exponentiation, the
 * modular product and the known-answer test. The products, squarings and the table scan
 * are the assembly of rsakit_mont_adx_x86_64.S; what is left here is O(W) per product and
 * is written with masks (no branch, index or cmov on a secret), so a debug build costs
 * little and an optimised one stays constant-time (value barriers keep the masks opaque).
 */
#include "rsakit_mont_adx.h"
#include "rsakit_mont_adx_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>

/* Window width of the secret-exponent exponentiation, and its table's entries. */
#define WINDOW 5
#define ENTRIES (1u << WINDOW)
#define MAX_W RSAKIT_ADX_MAX_LIMBS

struct rsakit_adx_modulus {
    size_t limbs;           /* the caller's limb count */
    struct rk_adx_kp kp;    /* kp.n points at n below; kp.w = W */
    uint64_t n[MAX_W];      /* zero above limbs */
    uint64_t one[MAX_W];    /* R mod n, exactly (the Montgomery form of 1) */
    uint64_t rr[MAX_W];     /* R^2 mod n, as an almost-Montgomery value (< R) */
};

/* Hides a value from the optimiser, so that a mask stays a mask (not a branch or cmov). */
static inline uint64_t opaque(uint64_t x) {
    __asm__("" : "+r"(x));
    return x;
}

/* memset that the optimiser cannot drop as a dead store. */
static void wipe(void *p, size_t bytes) {
    memset(p, 0, bytes);
    __asm__ volatile("" : : "r"(p) : "memory");
}

static int detect_bmi2_adx(void) {
    if (__get_cpuid_max(0, NULL) < 7) {
        return 0;
    }
    unsigned a, b, c, d;
    __cpuid_count(7, 0, a, b, c, d);
    (void)a, (void)c, (void)d;
    const unsigned need = (1u << 8)   /* BMI2: mulx */
                        | (1u << 19); /* ADX: adcx, adox */
    return (b & need) == need;
}

/* 0 not yet known, 1 no, 2 yes; a race computes the same answer twice. */
static int cpu_state;

int rsakit_adx_cpu_supported(void) {
    int s = __atomic_load_n(&cpu_state, __ATOMIC_ACQUIRE);
    if (s == 0) {
        s = detect_bmi2_adx() ? 2 : 1;
        __atomic_store_n(&cpu_state, s, __ATOMIC_RELEASE);
    }
    return s == 2;
}

int rsakit_adx_assume_cpu_for_tests(void) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL) {
        return 0;
    }
    char line[8192];
    int found = 0;
    while (!found && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "flags", 5) == 0) {
            found = strstr(line, " bmi2") != NULL && (strstr(line, " adx ") != NULL || strstr(line, " adx\n") != NULL);
            break;
        }
    }
    fclose(f);
    if (found) {
        __atomic_store_n(&cpu_state, 2, __ATOMIC_RELEASE);
    }
    return found;
}

/* x = x - n when x >= n (W words), by a masked select of the difference. */
static void sub_n_if_not_below(uint64_t *x, const uint64_t *n, size_t w) {
    uint64_t d[MAX_W], borrow = 0;
    for (size_t i = 0; i < w; i++) {
        unsigned __int128 t = (unsigned __int128)x[i] - n[i] - borrow;
        d[i] = (uint64_t)t;
        borrow = (uint64_t)(t >> 64) & 1;
    }
    const uint64_t take = opaque(borrow - 1); /* all ones when no borrow: x >= n */
    for (size_t i = 0; i < w; i++) {
        x[i] = (d[i] & take) | (x[i] & ~take);
    }
    wipe(d, sizeof d);
}

/* x = 2 x mod n for x < n (W words): 2x, minus n when 2x carried out or is >= n. */
static void double_mod(uint64_t *x, const uint64_t *n, size_t w) {
    uint64_t y[MAX_W], z[MAX_W], carry = 0, borrow = 0;
    for (size_t i = 0; i < w; i++) {
        y[i] = (x[i] << 1) | carry;
        carry = x[i] >> 63;
    }
    for (size_t i = 0; i < w; i++) {
        unsigned __int128 t = (unsigned __int128)y[i] - n[i] - borrow;
        z[i] = (uint64_t)t;
        borrow = (uint64_t)(t >> 64) & 1;
    }
    const uint64_t take = opaque(0 - (carry | (borrow ^ 1)));
    for (size_t i = 0; i < w; i++) {
        x[i] = (z[i] & take) | (y[i] & ~take);
    }
    wipe(y, sizeof y);
    wipe(z, sizeof z);
}

rsakit_adx_modulus *rsakit_adx_modulus_create(const uint64_t *n, size_t limbs) {
    if (n == NULL || limbs < 1 || limbs > RSAKIT_ADX_MAX_LIMBS || !rsakit_adx_cpu_supported()) {
        return NULL;
    }
    rsakit_adx_modulus *m = aligned_alloc(64, (sizeof *m + 63) & ~(size_t)63);
    if (m == NULL) {
        return NULL;
    }
    memset(m, 0, sizeof *m);
    const size_t w = (limbs + 3) & ~(size_t)3;
    m->limbs = limbs;
    memcpy(m->n, n, limbs * sizeof(uint64_t));
    /* n0^-1 mod 2^64 by Newton: n0 is its own inverse mod 8 (3 bits); each step doubles the
     * correct bits, so 5 steps give 96 >= 64. */
    uint64_t inv = m->n[0];
    for (int i = 0; i < 5; i++) {
        inv *= 2 - m->n[0] * inv;
    }
    m->kp.n = m->n;
    m->kp.n0inv = 0 - inv;
    m->kp.w = w;
    m->kp.tab = rk_adx_table(w);
    /* R mod n = 2^(64 W) mod n (exact, < n) by doublings of 2^(64 (limbs - 1)), which is
     * below n since n's top limb is not zero: 64 (W - limbs + 1) doublings, not 64 W. */
    uint64_t x[MAX_W] = {0};
    x[limbs - 1] = 1;
    for (size_t i = 0; i < 64 * (w - limbs + 1); i++) {
        double_mod(x, m->n, w);
    }
    memcpy(m->one, x, w * sizeof(uint64_t));
    /* 2^(W/4) R, then 8 squarings: (2^j R)^2 / R = 2^(2j) R, and 2^8 W/4 = 64 W. */
    for (size_t i = 0; i < w / 4; i++) {
        double_mod(x, m->n, w);
    }
    uint64_t t[2 * MAX_W];
    for (int i = 0; i < 8; i++) {
        rk_adx_sqr(x, x, &m->kp, t);
    }
    memcpy(m->rr, x, w * sizeof(uint64_t));
    wipe(x, sizeof x);
    wipe(t, sizeof t);
    return m;
}

void rsakit_adx_modulus_destroy(rsakit_adx_modulus *m) {
    if (m != NULL) {
        wipe(m, sizeof *m);
        free(m);
    }
}

size_t rsakit_adx_modulus_limbs(const rsakit_adx_modulus *m) { return m == NULL ? 0 : m->limbs; }

/* Bits [pos, pos + k) of e (el limbs; bits above 64 el read as 0). pos and k are public. */
static uint64_t exponent_bits(const uint64_t *e, size_t el, size_t pos, unsigned k) {
    const size_t i = pos / 64, off = pos % 64;
    uint64_t v = e[i] >> off;
    if (off + k > 64 && i + 1 < el) {
        v |= e[i + 1] << (64 - off);
    }
    return v & (((uint64_t)1 << k) - 1);
}

/* a (W words, almost Montgomery) -> a / R mod n, fully reduced: the product by 1 gives a
 * value <= n (it is (a + M n) / R < (R + R n) / R), then a masked subtraction. */
static void leave_montgomery(const rsakit_adx_modulus *m, uint64_t *a, uint64_t *t) {
    uint64_t one[MAX_W] = {1};
    rk_adx_mul(a, a, one, &m->kp, t);
    sub_n_if_not_below(a, m->n, m->kp.w);
}

struct powm_scratch {
    _Alignas(64) uint64_t table[ENTRIES * MAX_W];
    uint64_t t[2 * MAX_W];
    uint64_t acc[MAX_W];
    uint64_t entry[MAX_W];
};

/* One exponentiation per lane, lanes (1 or 2) in lockstep: each operation of the schedule is
 * issued for every lane before the next one, so that the out-of-order core overlaps the
 * serial tail of one lane's product (its final carry and subtraction chains) with the start
 * of the other's. The schedule depends only on exp_limbs, shared by the lanes. */
static void powm_lanes(size_t lanes, const rsakit_adx_modulus *const *m, uint64_t *const *r,
                       const uint64_t *const *base, const uint64_t *const *exp, size_t exp_limbs) {
    struct powm_scratch s[2];
    for (size_t l = 0; l < lanes; l++) {
        const size_t w = m[l]->kp.w;
        uint64_t *table = s[l].table;
        /* table[k] = base^k R mod n (almost Montgomery) for k = 0 ... 31. */
        memcpy(table, m[l]->one, w * sizeof(uint64_t));
        memset(s[l].acc, 0, w * sizeof(uint64_t));
        memcpy(s[l].acc, base[l], m[l]->limbs * sizeof(uint64_t));
        rk_adx_mul(table + w, s[l].acc, m[l]->rr, &m[l]->kp, s[l].t);
    }
    for (size_t k = 2; k < ENTRIES; k++) {
        for (size_t l = 0; l < lanes; l++) {
            const size_t w = m[l]->kp.w;
            uint64_t *table = s[l].table;
            if (k % 2 == 0) {
                rk_adx_sqr(table + k * w, table + (k / 2) * w, &m[l]->kp, s[l].t);
            } else {
                rk_adx_mul(table + k * w, table + (k - 1) * w, table + w, &m[l]->kp, s[l].t);
            }
        }
    }
    /* Left to right over all 64 exp_limbs bits: a first window of the leftover bits, then
     * (5 squarings, a scanned entry, a product) per window. Counts depend on exp_limbs. */
    const size_t bits = 64 * exp_limbs;
    const unsigned first = bits % WINDOW == 0 ? WINDOW : (unsigned)(bits % WINDOW);
    size_t pos = bits - first;
    for (size_t l = 0; l < lanes; l++) {
        rk_adx_select(s[l].acc, s[l].table, &m[l]->kp, exponent_bits(exp[l], exp_limbs, pos, first));
    }
    while (pos > 0) {
        pos -= WINDOW;
        for (int i = 0; i < WINDOW; i++) {
            for (size_t l = 0; l < lanes; l++) {
                rk_adx_sqr(s[l].acc, s[l].acc, &m[l]->kp, s[l].t);
            }
        }
        for (size_t l = 0; l < lanes; l++) {
            rk_adx_select(s[l].entry, s[l].table, &m[l]->kp, exponent_bits(exp[l], exp_limbs, pos, WINDOW));
            rk_adx_mul(s[l].acc, s[l].acc, s[l].entry, &m[l]->kp, s[l].t);
        }
    }
    for (size_t l = 0; l < lanes; l++) {
        leave_montgomery(m[l], s[l].acc, s[l].t);
        memcpy(r[l], s[l].acc, m[l]->limbs * sizeof(uint64_t));
        wipe(s[l].table, ENTRIES * m[l]->kp.w * sizeof(uint64_t));
        wipe(s[l].t, sizeof s[l].t);
        wipe(s[l].acc, sizeof s[l].acc);
        wipe(s[l].entry, sizeof s[l].entry);
    }
}

int rsakit_adx_powm(const rsakit_adx_modulus *m, uint64_t *r, const uint64_t *base,
                    const uint64_t *exp, size_t exp_limbs) {
    if (m == NULL || r == NULL) {
        return -1;
    }
    if (base == NULL || exp == NULL || exp_limbs < 1 || exp_limbs > RSAKIT_ADX_MAX_EXP_LIMBS
        || !rsakit_adx_cpu_supported()) {
        memset(r, 0, m->limbs * sizeof(uint64_t));
        return -1;
    }
    powm_lanes(1, &m, &r, &base, &exp, exp_limbs);
    return 0;
}

int rsakit_adx_powm2(size_t exp_limbs,
                     const rsakit_adx_modulus *m0, uint64_t *r0, const uint64_t *base0, const uint64_t *exp0,
                     const rsakit_adx_modulus *m1, uint64_t *r1, const uint64_t *base1, const uint64_t *exp1) {
    const int ok = m0 != NULL && r0 != NULL && base0 != NULL && exp0 != NULL
                && m1 != NULL && r1 != NULL && base1 != NULL && exp1 != NULL
                && exp_limbs >= 1 && exp_limbs <= RSAKIT_ADX_MAX_EXP_LIMBS && rsakit_adx_cpu_supported();
    if (!ok) {
        if (m0 != NULL && r0 != NULL) memset(r0, 0, m0->limbs * sizeof(uint64_t));
        if (m1 != NULL && r1 != NULL) memset(r1, 0, m1->limbs * sizeof(uint64_t));
        return -1;
    }
    /* NOTE: one after the other. The lockstep form (powm_lanes with 2 lanes: each product
     * and squaring issued for p, then for q) measured 0.93x of this at 16 limbs and 0.99x at
     * 24 and 32 (scripts/adx-efficiency.c's machine, one core): the products are bound by
     * the adcx/adox ports, not by their latency, so there is nothing for the other lane to
     * fill, and two tables crowd the level-1 cache. */
    powm_lanes(1, &m0, &r0, &base0, &exp0, exp_limbs);
    powm_lanes(1, &m1, &r1, &base1, &exp1, exp_limbs);
    return 0;
}

int rsakit_adx_powm_public_exponent(const rsakit_adx_modulus *m, uint64_t *r, const uint64_t *base,
                                    const uint64_t *e, size_t e_limbs, size_t ebits) {
    if (m == NULL || r == NULL) {
        return -1;
    }
    if (base == NULL || e == NULL || e_limbs < 1 || e_limbs > RSAKIT_ADX_MAX_EXP_LIMBS || ebits < 1
        || ebits > 64 * e_limbs || !rsakit_adx_cpu_supported()) {
        memset(r, 0, m->limbs * sizeof(uint64_t));
        return -1;
    }
    const size_t w = m->kp.w;
    uint64_t b[MAX_W] = {0}, acc[MAX_W], t[2 * MAX_W];
    memcpy(b, base, m->limbs * sizeof(uint64_t));
    rk_adx_mul(b, b, m->rr, &m->kp, t); /* base R */
    memcpy(acc, b, w * sizeof(uint64_t));
    for (size_t i = ebits - 1; i-- > 0;) {
        rk_adx_sqr(acc, acc, &m->kp, t);
        if ((e[i / 64] >> (i % 64)) & 1) { /* e is public */
            rk_adx_mul(acc, acc, b, &m->kp, t);
        }
    }
    leave_montgomery(m, acc, t);
    memcpy(r, acc, m->limbs * sizeof(uint64_t));
    wipe(b, sizeof b);
    wipe(acc, sizeof acc);
    wipe(t, sizeof t);
    return 0;
}

int rsakit_adx_mulmod(const rsakit_adx_modulus *m, uint64_t *r, const uint64_t *a, const uint64_t *b) {
    if (m == NULL || r == NULL) {
        return -1;
    }
    if (a == NULL || b == NULL || !rsakit_adx_cpu_supported()) {
        memset(r, 0, m->limbs * sizeof(uint64_t));
        return -1;
    }
    uint64_t x[MAX_W] = {0}, y[MAX_W] = {0}, t[2 * MAX_W];
    memcpy(x, a, m->limbs * sizeof(uint64_t));
    memcpy(y, b, m->limbs * sizeof(uint64_t));
    rk_adx_mul(x, x, m->rr, &m->kp, t); /* a R */
    rk_adx_mul(y, y, m->rr, &m->kp, t); /* b R */
    rk_adx_mul(x, x, y, &m->kp, t);     /* a b R */
    leave_montgomery(m, x, t);
    memcpy(r, x, m->limbs * sizeof(uint64_t));
    wipe(x, sizeof x);
    wipe(y, sizeof y);
    wipe(t, sizeof t);
    return 0;
}

/* MARK: - Known-answer test */

static uint64_t kat_next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static uint64_t kat_fold(uint64_t d, const uint64_t *v, size_t count) {
    for (size_t i = 0; i < count; i++) {
        d = (d ^ v[i]) * 0x100000001B3ull;
    }
    return d;
}

/* The digest of the known-answer inputs' results, from Python (pow and the same xorshift
 * stream and folding: scripts/adx-kat-digest.py). */
#define KAT_DIGEST 0xCDECFC480E46227Eull

/* For limbs in {6, 9, 16, 24, 32}: n (odd, top bit set), base, a 2-limb exponent and a
 * factor from the stream seeded 0x9E3779B97F4A7C15; fold base^exp, base^65537 and
 * base * factor mod n. */
uint64_t rk_adx_kat_digest(void);
uint64_t rk_adx_kat_digest(void) {
    static const size_t sizes[] = {6, 9, 16, 24, 32};
    uint64_t s = 0x9E3779B97F4A7C15ull, d = 0xCBF29CE484222325ull;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const size_t limbs = sizes[k];
        uint64_t n[32], base[32], factor[32], e[2], r[32];
        for (size_t i = 0; i < limbs; i++) n[i] = kat_next(&s);
        n[0] |= 1;
        n[limbs - 1] |= (uint64_t)1 << 63;
        for (size_t i = 0; i < limbs; i++) base[i] = kat_next(&s);
        for (size_t i = 0; i < limbs; i++) factor[i] = kat_next(&s);
        e[0] = kat_next(&s);
        e[1] = kat_next(&s);
        rsakit_adx_modulus *m = rsakit_adx_modulus_create(n, limbs);
        if (m == NULL) {
            return 0;
        }
        const uint64_t e65537 = 65537;
        int bad = rsakit_adx_powm(m, r, base, e, 2);
        d = kat_fold(d, r, limbs);
        bad |= rsakit_adx_powm_public_exponent(m, r, base, &e65537, 1, 17);
        d = kat_fold(d, r, limbs);
        bad |= rsakit_adx_mulmod(m, r, base, factor);
        d = kat_fold(d, r, limbs);
        rsakit_adx_modulus_destroy(m);
        if (bad != 0) {
            return 0;
        }
    }
    return d;
}

int rsakit_adx_known_answer_test(void) {
    if (!rsakit_adx_cpu_supported()) {
        return -1;
    }
    return rk_adx_kat_digest() == KAT_DIGEST ? 0 : -1;
}

int rsakit_adx_usable(void) {
    static int state; /* 0 not yet known, 1 no, 2 yes */
    int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (s == 0) {
        s = rsakit_adx_cpu_supported() && rsakit_adx_known_answer_test() == 0 ? 2 : 1;
        __atomic_store_n(&state, s, __ATOMIC_RELEASE);
    }
    return s == 2;
}

#else /* not x86-64: the kernel does not exist here; every entry point says so. */

int rsakit_adx_cpu_supported(void) { return 0; }

rsakit_adx_modulus *rsakit_adx_modulus_create(const uint64_t *n, size_t limbs) {
    (void)n, (void)limbs;
    return NULL;
}

void rsakit_adx_modulus_destroy(rsakit_adx_modulus *m) { (void)m; }

size_t rsakit_adx_modulus_limbs(const rsakit_adx_modulus *m) {
    (void)m;
    return 0;
}

int rsakit_adx_powm(const rsakit_adx_modulus *m, uint64_t *r, const uint64_t *base,
                    const uint64_t *exp, size_t exp_limbs) {
    (void)m, (void)r, (void)base, (void)exp, (void)exp_limbs;
    return -1;
}

int rsakit_adx_powm2(size_t exp_limbs,
                     const rsakit_adx_modulus *m0, uint64_t *r0, const uint64_t *base0, const uint64_t *exp0,
                     const rsakit_adx_modulus *m1, uint64_t *r1, const uint64_t *base1, const uint64_t *exp1) {
    (void)exp_limbs, (void)m0, (void)r0, (void)base0, (void)exp0, (void)m1, (void)r1, (void)base1, (void)exp1;
    return -1;
}

int rsakit_adx_powm_public_exponent(const rsakit_adx_modulus *m, uint64_t *r, const uint64_t *base,
                                    const uint64_t *e, size_t e_limbs, size_t ebits) {
    (void)m, (void)r, (void)base, (void)e, (void)e_limbs, (void)ebits;
    return -1;
}

int rsakit_adx_mulmod(const rsakit_adx_modulus *m, uint64_t *r, const uint64_t *a, const uint64_t *b) {
    (void)m, (void)r, (void)a, (void)b;
    return -1;
}

int rsakit_adx_known_answer_test(void) { return -1; }

int rsakit_adx_usable(void) { return 0; }

int rsakit_adx_assume_cpu_for_tests(void) { return 0; }

#endif
