/*
 * msan-ifma-driver.c - the CRSAKitVector kernels under clang's MemorySanitizer
 * (scripts/msan-ifma.sh builds and runs it): the exponentiations and the eight-lane
 * modular product. Every secret - the modulus (a secret prime), the exponent, the bases and
 * the product's factors - is poisoned before the modulus constants are computed, so
 * MSan reports any branch or memory address that depends on them. Only the results are
 * unpoisoned, to compare the implementation with the portable reference.
 *
 *   msan-ifma-driver reference|emulated|ifma|plant
 *
 * "plant" branches once on a poisoned exponent bit: MSan must stop it (the script checks
 * that, so the check cannot pass vacuously).
 *
 * GMP is not instrumented, so nothing here calls it: the oracle is the reference (itself
 * checked against GMP by the test suite).
 */
#include "rsakit_vector.h"

#include <sanitizer/msan_interface.h>
#include <stdio.h>
#include <string.h>

static uint64_t state = 0x0123456789ABCDEFull;
static uint64_t next(void) {
    state ^= state << 13; state ^= state >> 7; state ^= state << 17;
    return state;
}

static int run(rsakit_vec_impl impl, size_t limbs, size_t exp_limbs) {
    uint64_t n[32], e[32], base[8 * 32], got[8 * 32], want[8 * 32], got1[32], want1[32], got2[2 * 32], want2[32], got3[32], want3[32], got4[8 * 32], want4[8 * 32], factor[8 * 32];
    for (size_t i = 0; i < limbs; i++) n[i] = next();
    n[0] |= 1;
    n[limbs - 1] |= (uint64_t)1 << 63;
    for (size_t i = 0; i < exp_limbs; i++) e[i] = next();
    for (size_t i = 0; i < 8 * limbs; i++) base[i] = next();
    for (size_t l = 0; l < 8; l++) base[l * limbs + limbs - 1] >>= 1;
    memset(base, 0, limbs * 8);                                     /* lane 0: 0 */
    memcpy(base + limbs, n, limbs * 8); base[limbs] -= 1;            /* lane 1: n - 1 */

    /* The reference on unpoisoned copies gives the expected values. */
    rsakit_vec_modulus *mr = rsakit_vec_modulus_create(n, limbs);
    rsakit_vec_powm8(RSAKIT_VEC_IMPL_REFERENCE, mr, want, base, e, exp_limbs);
    rsakit_vec_powm(RSAKIT_VEC_IMPL_REFERENCE, mr, want1, base + 2 * limbs, e, exp_limbs);
    rsakit_vec_powm(RSAKIT_VEC_IMPL_REFERENCE, mr, want2, base + 3 * limbs, e, exp_limbs);
    /* The eight-lane blinding product: lane l times lane 7 - l. */
    for (size_t l = 0; l < 8; l++) memcpy(factor + l * limbs, base + (7 - l) * limbs, limbs * 8);
    rsakit_vec_mulmod8(RSAKIT_VEC_IMPL_REFERENCE, mr, want4, base, factor);
    rsakit_vec_modulus_destroy(mr);

    __msan_poison(n, limbs * 8);
    __msan_poison(e, exp_limbs * 8);
    __msan_poison(base, 8 * limbs * 8);
    __msan_poison(factor, 8 * limbs * 8);
    rsakit_vec_modulus *m = rsakit_vec_modulus_create(n, limbs);
    int s8 = rsakit_vec_powm8(impl, m, got, base, e, exp_limbs);
    int s1 = rsakit_vec_powm(impl, m, got1, base + 2 * limbs, e, exp_limbs);
    /* The dual (p and q in lockstep), one modulus twice: the second result is lane 3's. */
    int s2 = rsakit_vec_powm2(impl, exp_limbs, m, got2, base + 2 * limbs, e, m, got2 + limbs, base + 3 * limbs, e);
    /* The re-encryption check's form: e public (e_public is not poisoned), the base secret.
     * It is compared with the fixed-window result for e = 65537. */
    const uint64_t e_public[1] = {65537};
    int s3 = rsakit_vec_powm_public_exponent(impl, m, got3, base + 4 * limbs, e_public, 1, 17);
    int s4 = rsakit_vec_powm(impl, m, want3, base + 4 * limbs, e_public, 1);
    int s5 = rsakit_vec_mulmod8(impl, m, got4, base, factor);
    rsakit_vec_modulus_destroy(m);
    __msan_unpoison(got4, 8 * limbs * 8);
    __msan_unpoison(got3, limbs * 8);
    __msan_unpoison(want3, limbs * 8);
    __msan_unpoison(got, 8 * limbs * 8);
    __msan_unpoison(got1, limbs * 8);
    __msan_unpoison(got2, 2 * limbs * 8);
    int bad = (s8 != 0) + (s1 != 0) + (s2 != 0);
    bad += memcmp(got, want, 8 * limbs * 8) != 0;
    bad += memcmp(got1, want1, limbs * 8) != 0;
    bad += memcmp(got2, want1, limbs * 8) != 0;
    bad += memcmp(got2 + limbs, want2, limbs * 8) != 0;
    bad += (s3 != 0) + (s4 != 0) + (memcmp(got3, want3, limbs * 8) != 0);
    bad += (s5 != 0) + (memcmp(got4, want4, 8 * limbs * 8) != 0);
    if (bad) {
        fprintf(stderr, "mismatch at %zu limbs\n", limbs);
    }
    return bad;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: msan-ifma-driver reference|emulated|ifma|plant\n");
        return 64;
    }
    if (strcmp(argv[1], "plant") == 0) {
        volatile uint64_t secret = next();
        __msan_poison((void *)&secret, sizeof secret);
        if (secret & 1) { /* deliberate secret-dependent branch */
            printf("planted branch taken\n");
        }
        printf("planted branch NOT reported\n");
        return 0;
    }
    rsakit_vec_impl impl = strcmp(argv[1], "ifma") == 0 ? RSAKIT_VEC_IMPL_IFMA
                         : strcmp(argv[1], "emulated") == 0 ? RSAKIT_VEC_IMPL_IFMA_EMULATED
                         : RSAKIT_VEC_IMPL_REFERENCE;
    if (impl == RSAKIT_VEC_IMPL_IFMA && !rsakit_vec_cpu_has_ifma()) {
        fprintf(stderr, "this CPU has no AVX-512 IFMA\n");
        return 77;
    }
    int bad = run(impl, 16, 16) + run(impl, 24, 4) + run(impl, 32, 4) + run(impl, 9, 2);
    printf("%s %s: %d mismatches\n", argv[1], bad == 0 ? "ok" : "FAILED", bad);
    return bad == 0 ? 0 : 1;
}
