/*
 * VectorCTHarness - runs the portable reference of the radix-2^52 exponentiation and of
 * the eight-lane modular product (CRSAKitVector, RSAKIT_VEC_IMPL_REFERENCE: rsakit_vec_powm,
 * powm2, powm8, the public-exponent forms and mulmod8) with every secret marked undefined for
 * valgrind's memcheck: the modulus (a secret prime), the exponent and the bases, before
 * the modulus constants are computed. Any branch, conditional move or address computed
 * from them is then reported ("Conditional jump or move depends on uninitialised
 * value(s)", "Use of uninitialised value"). Only the results are marked defined again, to
 * compare them with GMP's mpz_powm (computed beforehand on unmarked copies).
 *
 *   valgrind --tool=memcheck --error-exitcode=99 VectorCTHarness [--plant-leak] [--path]
 *
 * --plant-leak adds one deliberate branch on a secret bit, to show the check is not
 * vacuous (memcheck must then report it). --path prints rsakit_vec_private_path_description
 * (used by the tests of RSAKIT_DISABLE_IFMA in a fresh process) and exits.
 * Exit 0 when every result matches GMP; 1 on a mismatch.
 * (Tests/RSAKitTests/VectorKernelTests.swift runs it.)
 */
#include "rsakit_vector.h"

#include <gmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define HAVE_MEMCHECK 1
#endif
#endif

#ifdef HAVE_MEMCHECK
#define SECRET(p, len) VALGRIND_MAKE_MEM_UNDEFINED((p), (len))
#define PUBLIC(p, len) VALGRIND_MAKE_MEM_DEFINED((p), (len))
#else
#define SECRET(p, len) ((void)(p), (void)(len))
#define PUBLIC(p, len) ((void)(p), (void)(len))
#endif

static uint64_t state = 0x243F6A8885A308D3ull;
static uint64_t next(void) {
    state ^= state << 13; state ^= state >> 7; state ^= state << 17;
    return state;
}

static void to_mpz(mpz_t z, const uint64_t *limbs, size_t count) {
    mpz_import(z, count, -1, sizeof(uint64_t), 0, 0, limbs);
}

static volatile int planted_sink;

/* One size: single-buffer and 8 lanes, exp_limbs exponent limbs. Returns mismatches. */
static int run(size_t limbs, size_t exp_limbs, int plant) {
    uint64_t n[32], ncopy[32], e[32], ecopy[32];
    uint64_t base[8 * 32], bcopy[8 * 32], out[8 * 32], out1[32], out2[2 * 32], out3[32], out4[8 * 32], out5[8 * 32];
    for (size_t i = 0; i < limbs; i++) n[i] = next();
    n[0] |= 1;
    n[limbs - 1] |= (uint64_t)1 << 63;
    for (size_t i = 0; i < exp_limbs; i++) e[i] = next();
    for (size_t i = 0; i < 8 * limbs; i++) base[i] = next();
    for (size_t l = 0; l < 8; l++) base[l * limbs + limbs - 1] >>= 1;
    /* Edge lanes: 0, 1, n - 1, all-ones limbs below the top one. */
    memset(base, 0, limbs * 8);
    memset(base + limbs, 0, limbs * 8);
    base[limbs] = 1;
    memcpy(base + 2 * limbs, n, limbs * 8);
    base[2 * limbs] -= 1;
    for (size_t i = 0; i + 1 < limbs; i++) base[3 * limbs + i] = ~(uint64_t)0;
    memcpy(ncopy, n, sizeof n);
    memcpy(ecopy, e, sizeof e);
    memcpy(bcopy, base, sizeof base);

    SECRET(n, limbs * 8);
    SECRET(e, exp_limbs * 8);
    SECRET(base, 8 * limbs * 8);

    if (plant && (e[0] & 1)) { /* deliberate secret-dependent branch */
        planted_sink++;
    }
    rsakit_vec_modulus *m = rsakit_vec_modulus_create(n, limbs);
    if (m == NULL) {
        fprintf(stderr, "modulus_create failed\n");
        return 1;
    }
    int s8 = rsakit_vec_powm8(RSAKIT_VEC_IMPL_REFERENCE, m, out, base, e, exp_limbs);
    int s1 = rsakit_vec_powm(RSAKIT_VEC_IMPL_REFERENCE, m, out1, base + 4 * limbs, e, exp_limbs);
    /* The lockstep driver (p and q of one CRT operation): lanes 5 and 6, one modulus twice. */
    int s2 = rsakit_vec_powm2(RSAKIT_VEC_IMPL_REFERENCE, exp_limbs, m, out2, base + 5 * limbs, e,
                              m, out2 + limbs, base + 6 * limbs, e);
    /* The re-encryption check's form: a public exponent (not marked), a secret base. */
    const uint64_t e_public[1] = {65537};
    int s3 = rsakit_vec_powm_public_exponent(RSAKIT_VEC_IMPL_REFERENCE, m, out3, base + 7 * limbs, e_public, 1, 17);
    /* Its eight-lane form, with the modulus secret too: the check of keys above 2048 bits
     * runs it on each prime (seam_check_by_primes). */
    int s5 = rsakit_vec_powm8_public_exponent(RSAKIT_VEC_IMPL_REFERENCE, m, out5, base, e_public, 1, 17);
    /* The eight-lane path's blinding products: lane l times lane 7 - l, all secret. */
    uint64_t factor[8 * 32];
    for (size_t l = 0; l < 8; l++) memcpy(factor + l * limbs, base + (7 - l) * limbs, limbs * 8);
    int s4 = rsakit_vec_mulmod8(RSAKIT_VEC_IMPL_REFERENCE, m, out4, base, factor);
    rsakit_vec_modulus_destroy(m);
    PUBLIC(out4, 8 * limbs * 8);
    PUBLIC(out5, 8 * limbs * 8);
    PUBLIC(out3, limbs * 8);
    PUBLIC(out, 8 * limbs * 8);
    PUBLIC(out1, limbs * 8);
    PUBLIC(out2, 2 * limbs * 8);

    int bad = (s8 != 0) + (s1 != 0) + (s2 != 0) + (s3 != 0) + (s4 != 0) + (s5 != 0);
    mpz_t zn, ze, zb, zr, zg;
    mpz_inits(zn, ze, zb, zr, zg, NULL);
    to_mpz(zn, ncopy, limbs);
    to_mpz(ze, ecopy, exp_limbs);
    for (size_t l = 0; l < 11; l++) {
        size_t lane = l < 8 ? l : l == 8 ? 4 : l - 4; /* 9, 10: the dual's lanes 5 and 6 */
        to_mpz(zb, bcopy + lane * limbs, limbs);
        mpz_powm(zr, zb, ze, zn);
        to_mpz(zg, l < 8 ? out + l * limbs : l == 8 ? out1 : out2 + (l - 9) * limbs, limbs);
        if (mpz_cmp(zr, zg) != 0) {
            fprintf(stderr, "mismatch: %zu limbs, %s lane %zu\n", limbs, l < 8 ? "multi" : l == 8 ? "single" : "dual", lane);
            bad++;
        }
    }
    mpz_set_ui(ze, 65537);
    to_mpz(zb, bcopy + 7 * limbs, limbs);
    mpz_powm(zr, zb, ze, zn);
    to_mpz(zg, out3, limbs);
    if (mpz_cmp(zr, zg) != 0) {
        fprintf(stderr, "mismatch: %zu limbs, public exponent\n", limbs);
        bad++;
    }
    for (size_t l = 0; l < 8; l++) {
        to_mpz(zb, bcopy + l * limbs, limbs);
        mpz_powm(zr, zb, ze, zn);
        to_mpz(zg, out5 + l * limbs, limbs);
        if (mpz_cmp(zr, zg) != 0) {
            fprintf(stderr, "mismatch: %zu limbs, public exponent, eight lanes, lane %zu\n", limbs, l);
            bad++;
        }
    }
    for (size_t l = 0; l < 8; l++) {
        to_mpz(zb, bcopy + l * limbs, limbs);
        to_mpz(ze, bcopy + (7 - l) * limbs, limbs);
        mpz_mul(zr, zb, ze);
        mpz_mod(zr, zr, zn);
        to_mpz(zg, out4 + l * limbs, limbs);
        if (mpz_cmp(zr, zg) != 0) {
            fprintf(stderr, "mismatch: %zu limbs, modular product lane %zu\n", limbs, l);
            bad++;
        }
    }
    mpz_clears(zn, ze, zb, zr, zg, NULL);
    return bad;
}

int main(int argc, char **argv) {
    int plant = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--plant-leak") == 0) {
            plant = 1;
        } else if (strcmp(argv[i], "--path") == 0) {
            printf("%d %s\n", (int)rsakit_vec_private_path(), rsakit_vec_private_path_description());
            return 0;
        } else {
            fprintf(stderr, "usage: VectorCTHarness [--plant-leak] [--path]\n");
            return 64;
        }
    }
#ifndef HAVE_MEMCHECK
    fprintf(stderr, "note: built without valgrind/memcheck.h: secrets are not marked\n");
#endif
    int bad = 0;
    if (plant) { /* one small run: the planted branch must be reported */
        bad += run(7, 1, 1);
        printf("%s: %d mismatches (planted leak)\n", bad == 0 ? "ok" : "FAILED", bad);
        return bad == 0 ? 0 : 1;
    }
    bad += run(16, 16, 0); /* 1024-bit modulus, full-length exponent */
    bad += run(24, 2, 0);      /* 1536 */
    bad += run(32, 2, 0);      /* 2048 */
    bad += run(7, 3, 0);       /* a size below a class (448 bits, class 512) */
    bad += run(11, 2, 0);      /* 704 bits, class 1024 */
    printf("%s: %d mismatches\n", bad == 0 ? "ok" : "FAILED", bad);
    return bad == 0 ? 0 : 1;
}
