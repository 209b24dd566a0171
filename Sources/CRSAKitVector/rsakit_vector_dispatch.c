/*
 * rsakit_vector_dispatch.c - which exponentiation path runs: cpuid + xgetbv (once), the
 * RSAKIT_DISABLE_IFMA switch, and a start-up self-test of the kernel against GMP's
 * mpz_powm that keeps the kernel off if it ever disagrees.
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
    const size_t sizes[3] = {16, 24, 32};
    for (int i = 0; i < 3; i++) {
        if (check_size(impl, sizes[i]) != 0) {
            return -1;
        }
    }
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
    } else if (rsakit_vec_selftest(RSAKIT_VEC_IMPL_IFMA) != 0) {
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
        return "gmp (GMP constant-time exponentiation; AVX-512 IFMA kernel failed its self-test against GMP)";
    case RSAKIT_VEC_PATH_GMP_NO_IFMA:
        break;
    }
    return "gmp (GMP constant-time exponentiation; this CPU or OS has no AVX-512 IFMA)";
}
