/*
 * MontADXCTHarness - runs the radix-2^64 ADX kernel (CRSAKitMontADX: modulus creation,
 * rsakit_adx_powm, powm2, the public-exponent powm and mulmod) with every secret marked
 * undefined for valgrind's memcheck: the modulus (a secret prime, marked before its
 * constants are computed), the exponent and the bases. Any branch, conditional move or
 * address computed from them is then reported ("Conditional jump or move depends on
 * uninitialised value(s)", "Use of uninitialised value"). Only the results are marked
 * defined again, to compare them with GMP's mpz_powm (computed beforehand on unmarked copies).
 *
 *   valgrind --tool=memcheck --error-exitcode=99 MontADXCTHarness [--plant-leak | --plant-derived]
 *
 * The kernel is called directly, not through rsakit_adx_usable(): valgrind 3.19's CPUID
 * hides ADX (adcx/adox still execute), so the harness takes the CPU as supported when
 * /proc/cpuinfo lists bmi2 and adx, and exits 77 (skip) when it does not.
 * --plant-leak adds one deliberate branch on a secret exponent bit, to show the check is
 * not vacuous (memcheck must then report it). --plant-derived instead branches on a bit of
 * a result before it is marked defined, to show that memcheck's definedness tracking flows
 * through mulx/adcx/adox (were it lost there, the 0 errors of the real run would mean nothing).
 * Exit 0 when every result matches GMP; 1 on a mismatch; 77 without BMI2/ADX.
 */
#include "rsakit_mont_adx.h"

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

static int check(const char *what, size_t limbs, const mpz_t want, const uint64_t *got) {
    mpz_t g;
    mpz_init(g);
    to_mpz(g, got, limbs);
    const int bad = mpz_cmp(want, g) != 0;
    if (bad) fprintf(stderr, "mismatch: %zu limbs, %s\n", limbs, what);
    mpz_clear(g);
    return bad;
}

/* One modulus size: bases 0, 1, n - 1 and random ones, an exp_limbs-limb exponent.
 * Returns the number of mismatches and failed calls. */
static int run(size_t limbs, size_t exp_limbs, int plant) {
    enum { BASES = 4 };
    uint64_t n[64], ncopy[64], e[64], ecopy[64], base[BASES][64], bcopy[BASES][64];
    uint64_t out[BASES][64], dual[2][64], pub[64], prod[64];
    for (size_t i = 0; i < limbs; i++) n[i] = next();
    n[0] |= 1;
    n[limbs - 1] |= (uint64_t)1 << 63;
    for (size_t i = 0; i < exp_limbs; i++) e[i] = next();
    for (size_t b = 0; b < BASES; b++)
        for (size_t i = 0; i < limbs; i++) base[b][i] = next();
    memset(base[0], 0, sizeof base[0]);
    memset(base[1], 0, sizeof base[1]);
    base[1][0] = 1;
    memcpy(base[2], n, sizeof n);
    base[2][0] -= 1; /* n - 1 (n is odd) */
    memcpy(ncopy, n, sizeof n);
    memcpy(ecopy, e, sizeof e);
    memcpy(bcopy, base, sizeof base);

    SECRET(n, limbs * 8);
    SECRET(e, exp_limbs * 8);
    SECRET(base, sizeof base);

    if (plant == 1 && (e[0] & 1)) { /* deliberate secret-dependent branch */
        planted_sink++;
    }
    rsakit_adx_modulus *m = rsakit_adx_modulus_create(n, limbs);
    if (m == NULL) {
        fprintf(stderr, "modulus_create failed at %zu limbs\n", limbs);
        return 1;
    }
    int bad = 0;
    for (size_t b = 0; b < BASES; b++) bad += rsakit_adx_powm(m, out[b], base[b], e, exp_limbs) != 0;
    bad += rsakit_adx_powm2(exp_limbs, m, dual[0], base[3], e, m, dual[1], base[2], e) != 0;
    const uint64_t e_public[1] = {65537}; /* public: not marked */
    bad += rsakit_adx_powm_public_exponent(m, pub, base[3], e_public, 1, 17) != 0;
    bad += rsakit_adx_mulmod(m, prod, base[3], base[2]) != 0;
    rsakit_adx_modulus_destroy(m);
    if (plant == 2 && (out[3][0] & 1)) { /* deliberate branch on a secret-derived result */
        planted_sink++;
    }
    PUBLIC(out, sizeof out);
    PUBLIC(dual, sizeof dual);
    PUBLIC(pub, sizeof pub);
    PUBLIC(prod, sizeof prod);

    mpz_t zn, ze, zb, zr, zc;
    mpz_inits(zn, ze, zb, zr, zc, NULL);
    to_mpz(zn, ncopy, limbs);
    to_mpz(ze, ecopy, exp_limbs);
    for (size_t b = 0; b < BASES; b++) {
        to_mpz(zb, bcopy[b], limbs);
        mpz_powm(zr, zb, ze, zn);
        bad += check("powm", limbs, zr, out[b]);
        if (b >= 2) bad += check("powm2", limbs, zr, dual[3 - b]);
    }
    to_mpz(zb, bcopy[3], limbs);
    mpz_set_ui(ze, 65537);
    mpz_powm(zr, zb, ze, zn);
    bad += check("public exponent", limbs, zr, pub);
    to_mpz(zc, bcopy[2], limbs);
    mpz_mul(zr, zb, zc);
    mpz_mod(zr, zr, zn);
    bad += check("mulmod", limbs, zr, prod);
    mpz_clears(zn, ze, zb, zr, zc, NULL);
    return bad;
}

int main(int argc, char **argv) {
    int plant = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--plant-leak") == 0) {
            plant = 1;
        } else if (strcmp(argv[i], "--plant-derived") == 0) {
            plant = 2;
        } else {
            fprintf(stderr, "usage: MontADXCTHarness [--plant-leak | --plant-derived]\n");
            return 64;
        }
    }
    if (!rsakit_adx_assume_cpu_for_tests()) {
        printf("MontADXCTHarness: SKIPPED: this CPU has no BMI2/ADX (or this is not x86-64 Linux)\n");
        return 77;
    }
    /* Padded (6, 9, 63), the three specialised prime sizes, and the largest; short exponents
     * keep memcheck's run short (the schedule does not depend on their values). */
    static const size_t sizes[][2] = {{6, 2}, {9, 2}, {16, 16}, {24, 3}, {32, 2}, {63, 1}, {64, 1}};
    int bad = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) bad += run(sizes[k][0], sizes[k][1], plant);
    printf("MontADXCTHarness: %s, %d mismatches\n", plant == 1 ? "plant-leak" : plant == 2 ? "plant-derived" : "ct", bad);
    return bad == 0 ? 0 : 1;
}
