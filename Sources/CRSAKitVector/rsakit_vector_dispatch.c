/*
 * rsakit_vector_dispatch.c - which exponentiation path runs: cpuid + xgetbv (once), the
 * RSAKIT_DISABLE_IFMA switch, and a known-answer test of the kernel's products at first
 * use that keeps the kernel off if it ever disagrees (rsakit_vec_selftest, the slower
 * differential test against GMP's mpz_powm, stays for tests).
 */
#include "rsakit_vector_internal.h"

#include <gmp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

static int detect_ifma(void) {
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) {
        return 0;
    }
    if (!(c & (1u << 27))) { /* OSXSAVE: xgetbv usable */
        return 0;
    }
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    /* XCR0: SSE (1), AVX (2), opmask (5), ZMM_Hi256 (6), Hi16_ZMM (7) saved by the OS. */
    if ((lo & 0xE6u) != 0xE6u) {
        return 0;
    }
    if (__get_cpuid_max(0, NULL) < 7) {
        return 0;
    }
    __cpuid_count(7, 0, a, b, c, d);
    const unsigned need = (1u << 16)   /* AVX512F */
                        | (1u << 17)   /* AVX512DQ */
                        | (1u << 21)   /* AVX512_IFMA */
                        | (1u << 30)   /* AVX512BW */
                        | (1u << 31);  /* AVX512VL */
    return (b & need) == need;
#else
    return 0;
#endif
}

static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;
static int cpu_has_ifma;

static void cpu_init(void) { cpu_has_ifma = detect_ifma() && rk_ifma_compiled; }

int rsakit_vec_cpu_has_ifma(void) {
    pthread_once(&cpu_once, cpu_init);
    return cpu_has_ifma;
}

/* A fixed public test modulus of `bits` bits (odd, top bit set), from a xorshift stream. */
static void test_value(uint64_t *out, size_t limbs, uint64_t seed) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < limbs; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        out[i] = s;
    }
}

/* One limb count per size class (10, 20, 30 and 40 digits), for both checks below. */
static const size_t test_sizes[4] = {8, 16, 24, 32};

static void to_mpz(mpz_t z, const uint64_t *limbs, size_t count) {
    mpz_import(z, count, -1, sizeof(uint64_t), 0, 0, limbs);
}

static int check_size(rsakit_vec_impl impl, size_t limbs) {
    uint64_t n[RSAKIT_VEC_MAX_LIMBS], e[3];
    uint64_t base[8 * RSAKIT_VEC_MAX_LIMBS], got[8 * RSAKIT_VEC_MAX_LIMBS];
    test_value(n, limbs, limbs);
    n[0] |= 1;
    n[limbs - 1] |= (uint64_t)1 << 63;
    test_value(e, 3, 1000 + limbs);
    for (size_t l = 0; l < 8; l++) {
        test_value(base + l * limbs, limbs, 2000 + 31 * limbs + l);
        base[l * limbs + limbs - 1] >>= 2; /* below n */
    }
    /* Edge lanes: 0, 1 and n - 1. */
    memset(base, 0, limbs * sizeof(uint64_t));
    memset(base + limbs, 0, limbs * sizeof(uint64_t));
    base[limbs] = 1;
    memcpy(base + 2 * limbs, n, limbs * sizeof(uint64_t));
    base[2 * limbs] -= 1;

    rsakit_vec_modulus *m = rsakit_vec_modulus_create(n, limbs);
    if (m == NULL) {
        return -1;
    }
    int ok = rsakit_vec_powm8(impl, m, got, base, e, 3) == 0;
    mpz_t zn, ze, zb, zr, zg;
    mpz_inits(zn, ze, zb, zr, zg, NULL);
    to_mpz(zn, n, limbs);
    to_mpz(ze, e, 3);
    for (size_t l = 0; ok && l < 8; l++) {
        to_mpz(zb, base + l * limbs, limbs);
        mpz_powm(zr, zb, ze, zn);
        to_mpz(zg, got + l * limbs, limbs);
        ok = mpz_cmp(zr, zg) == 0;
    }
    for (size_t l = 0; ok && l < 3; l++) {
        ok = rsakit_vec_powm(impl, m, got, base + (l + 3) * limbs, e, 3) == 0;
        to_mpz(zb, base + (l + 3) * limbs, limbs);
        mpz_powm(zr, zb, ze, zn);
        to_mpz(zg, got, limbs);
        ok = ok && mpz_cmp(zr, zg) == 0;
    }
    mpz_clears(zn, ze, zb, zr, zg, NULL);
    rsakit_vec_modulus_destroy(m);
    return ok ? 0 : -1;
}

int rsakit_vec_selftest(rsakit_vec_impl impl) {
    if (impl == RSAKIT_VEC_IMPL_IFMA && !rsakit_vec_cpu_has_ifma()) {
        return -1;
    }
    for (int i = 0; i < 4; i++) {
        if (check_size(impl, test_sizes[i]) != 0) {
            return -1;
        }
    }
    return 0;
}

/* The known-answer check: one product and one squaring of each kind (eight lanes, single
 * buffer, the dual single-buffer product and the eight-lane squaring with a table scan) in
 * each size class on fixed inputs, folded into a 64-bit digest. Microseconds on
 * the kernel, where the differential test against mpz_powm above costs about 12 ms, which
 * every process that loaded a private key used to pay at start-up. The expected digest is
 * what the portable reference computes (VectorKernelTests checks the reference, the
 * emulated kernel and, where the CPU has it, the IFMA kernel against it). */
#define RK_KNOWN_ANSWER_DIGEST UINT64_C(0x38D61F63A8D5A12A)

static uint64_t fold(uint64_t h, const uint64_t *words, size_t count) {
    for (size_t i = 0; i < count; i++) {
        h = (h ^ words[i]) * UINT64_C(0x100000001B3);
        h ^= h >> 29;
    }
    return h;
}

uint64_t rk_known_answer_digest(const rk_ops *ops) {
    _Alignas(64) uint64_t a8[RK_MAX_DIGITS * 8], b8[RK_MAX_DIGITS * 8], r8[RK_MAX_DIGITS * 8];
    _Alignas(64) uint64_t a1[RK_MAX_WORDS], b1[RK_MAX_WORDS], r1[RK_MAX_WORDS];
    uint64_t n[RSAKIT_VEC_MAX_LIMBS], x[RSAKIT_VEC_MAX_LIMBS];
    uint64_t h = UINT64_C(0xCBF29CE484222325);
    uint64_t *table = aligned_alloc(64, RK_TABLE * RK_MAX_DIGITS * 8 * sizeof(uint64_t));
    if (table == NULL) {
        return 0;
    }
    memset(r1, 0, sizeof r1);
    for (int s = 0; s < 4; s++) {
        size_t limbs = test_sizes[s];
        test_value(n, limbs, 7 * limbs);
        n[0] |= 1;
        n[limbs - 1] |= (uint64_t)1 << 63;
        rsakit_vec_modulus *m = rsakit_vec_modulus_create(n, limbs);
        if (m == NULL) {
            free(table);
            return 0;
        }
        for (size_t l = 0; l < 8; l++) {
            test_value(x, limbs, 3000 + 17 * limbs + l);
            rsakit_vec_to_lane(m, a8, l, x);
            test_value(x, limbs, 4000 + 19 * limbs + l);
            x[limbs - 1] >>= 1; /* below n */
            rsakit_vec_to_lane(m, b8, l, x);
        }
        rsakit_vec_from_lane(m, x, a8, 3);
        rsakit_vec_to_digits(m, a1, x);
        rsakit_vec_from_lane(m, x, b8, 5);
        rsakit_vec_to_digits(m, b1, x);
        /* a8 is up to 2^(64 limbs) > 2n: the products are defined for any a below R. */
        ops->mul8(r8, a8, b8, m);
        ops->sqr8(r8, r8, m);
        ops->mul8(r8, r8, m->rr8, m);
        h = fold(h, r8, m->digits * 8);
        ops->mul1(r1, a1, b1, m);
        ops->sqr1(r1, r1, m);
        ops->mul1(r1, r1, m->rr1, m);
        h = fold(h, r1, m->digits); /* the reference leaves the pad words as they were */
        ops->mul1x2(r1, r1, a1, m, b1, b1, a1, m); /* the dual product (p and q of one block) */
        h = fold(fold(h, r1, m->digits), b1, m->digits);
        /* The squarings with the table scan: a table of 32 entries (entry e is r8 + e, word
         * by word), four slices, entry 11 selected. */
        size_t W = m->digits * 8;
        for (size_t e = 0; e < RK_TABLE; e++) {
            for (size_t w = 0; w < W; w++) {
                table[e * W + w] = r8[w] + e;
            }
        }
        for (unsigned slice = 0; slice < 4; slice++) {
            ops->sqr8_scan(r8, r8, m, a8, table, 11, slice);
        }
        h = fold(fold(h, r8, W), a8, W);
        rsakit_vec_modulus_destroy(m);
    }
    free(table);
    return h;
}

int rsakit_vec_known_answer_test(rsakit_vec_impl impl) {
    const rk_ops *ops = rk_ops_for(impl);
    if (ops == NULL) {
        return -1;
    }
    return rk_known_answer_digest(ops) == RK_KNOWN_ANSWER_DIGEST ? 0 : -1;
}

int rsakit_vec_normalize_for_tests(rsakit_vec_impl impl, int half, uint64_t *words, size_t nv) {
    const rk_ops *ops = rk_ops_for(impl);
    if (ops == NULL || ops->normalize == NULL || words == NULL || nv < 1 || nv > 5) {
        return -1;
    }
    ops->normalize(words, nv, half != 0);
    return 0;
}

static pthread_once_t path_once = PTHREAD_ONCE_INIT;
static rsakit_vec_path path_value;

static int disabled_by_environment(void) {
    const char *v = getenv("RSAKIT_DISABLE_IFMA");
    return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

static void path_init(void) {
    if (disabled_by_environment()) {
        path_value = RSAKIT_VEC_PATH_GMP_DISABLED;
    } else if (!rsakit_vec_cpu_has_ifma()) {
        path_value = RSAKIT_VEC_PATH_GMP_NO_IFMA;
    } else if (!rk_ifma_optimised) {
        path_value = RSAKIT_VEC_PATH_GMP_UNOPTIMISED;
    } else if (rsakit_vec_known_answer_test(RSAKIT_VEC_IMPL_IFMA) != 0) {
        path_value = RSAKIT_VEC_PATH_GMP_SELFTEST_FAILED;
    } else {
        path_value = RSAKIT_VEC_PATH_IFMA;
    }
}

rsakit_vec_path rsakit_vec_private_path(void) {
    pthread_once(&path_once, path_init);
    return path_value;
}

const char *rsakit_vec_private_path_description(void) {
    switch (rsakit_vec_private_path()) {
    case RSAKIT_VEC_PATH_IFMA:
        return "ifma (AVX-512 IFMA radix-2^52 Montgomery kernel: 8-lane multi-buffer, single-buffer for one block)";
    case RSAKIT_VEC_PATH_GMP_DISABLED:
        return "gmp (GMP constant-time exponentiation; AVX-512 IFMA kernel disabled by RSAKIT_DISABLE_IFMA)";
    case RSAKIT_VEC_PATH_GMP_SELFTEST_FAILED:
        return "gmp (GMP constant-time exponentiation; AVX-512 IFMA kernel failed its known-answer test)";
    case RSAKIT_VEC_PATH_GMP_UNOPTIMISED:
        return "gmp (GMP constant-time exponentiation; the AVX-512 IFMA kernel was built without optimisation, as a dependency's debug build is)";
    case RSAKIT_VEC_PATH_GMP_NO_IFMA:
        break;
    }
    return "gmp (GMP constant-time exponentiation; this CPU or OS has no AVX-512 IFMA)";
}
