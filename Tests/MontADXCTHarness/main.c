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
 * Then (not in the two control modes) the whole private operation on the kernel: a fixed
 * 2048-bit two-prime key (1024-bit primes, 16 limbs each), its constant-time form
 * (rsakit_sec_key_create) with every secret limb marked undefined (rsakit_sec_key_poison,
 * keeping the limbs GMP's mpn_sec_div_r looks up in tables defined, as the library's own
 * harness does), the ADX kernel attached to it after the marking (so its per-prime constants
 * are computed from undefined primes), a blinding pair, and rsakit_sec_private (blinded,
 * checked by re-encryption) on a public ciphertext; the result, marked defined, is compared
 * with mpz_powm.
 * Exit 0 when every result matches GMP; 1 on a mismatch; 77 without BMI2/ADX.
 */
#include "rsakit_mont_adx.h"
#include "rsakit_mont_adx_seam.h"
#include "rsakit_secret.h"

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

static void export_octets(mpz_t z, uint8_t **bytes, rsakit_sec_octets *o) {
    size_t count = 0;
    *bytes = mpz_export(NULL, &count, 1, 1, 1, 0, z);
    *o = (rsakit_sec_octets){*bytes, count};
}

/* The primes of a fixed 2048-bit test key, from `openssl genpkey -algorithm RSA -pkeyopt
 * rsa_keygen_bits:2048` (prime1 and prime2 of `openssl pkey -noout -text`): generating them
 * here would cost seconds under valgrind. Public test data. */
static const char prime_p[] =
    "e99ffc27ec55b92c22d08cfb588ca780f927940a99f252330492a7a8ee62d648"
    "65f40363a1a7d1d6d107c7896df3f7fa19727ecd878d16b629e0fb2781c5fbb5"
    "48e26737841b0f65502048a337eec3f40bc04c645286ec71e55d934ac9407aca"
    "35b2cf1b90263fbea8114e86e3e03fbf7263ca6266574da0cbe609024724a849";
static const char prime_q[] =
    "e7a2bc2ec2494130688b7fcebb6fa17034f51ad01111cb03b09daf2e20a1bb49"
    "8113718270d2a45bda65d582975744d211b8f7d00d5b9e11b93c3afdcbcab865"
    "349b5fedc62d13fde83c063f491d3224accb6d2f79cc44ac337e385965960b71"
    "37d9589be67925c5ff6d20601aad897003ce1f0ceed1ce2ea001ac16bb41b4fd";

/* The private operation on the kernel with the key's secrets marked undefined. */
static int run_private(void) {
    mpz_t p, q, n, e, d, dp, dq, qinv, t, c, want, got;
    mpz_inits(p, q, n, e, d, dp, dq, qinv, t, c, want, got, NULL);
    mpz_set_ui(e, 65537);
    mpz_set_str(p, prime_p, 16);
    mpz_set_str(q, prime_q, 16);
    mpz_mul(n, p, q);
    mpz_sub_ui(t, p, 1);
    mpz_sub_ui(d, q, 1);
    mpz_lcm(t, t, d);
    mpz_invert(d, e, t);
    mpz_sub_ui(t, p, 1);
    mpz_mod(dp, d, t);
    mpz_sub_ui(t, q, 1);
    mpz_mod(dq, d, t);
    mpz_invert(qinv, q, p);
    uint8_t *keep[7];
    rsakit_sec_octets on, oe, primes[2], exps[2], coef;
    export_octets(n, &keep[0], &on);
    export_octets(e, &keep[1], &oe);
    export_octets(p, &keep[2], &primes[0]);
    export_octets(q, &keep[3], &primes[1]);
    export_octets(dp, &keep[4], &exps[0]);
    export_octets(dq, &keep[5], &exps[1]);
    export_octets(qinv, &keep[6], &coef);
    rsakit_sec_key *key = rsakit_sec_key_create(on, oe, 2, primes, exps, &coef);
    int bad = key == NULL;
    if (key != NULL) {
        rsakit_sec_key_poison(key, 1);
        bad += rsakit_adx_sec_attach(key) != 0;
        const size_t k = rsakit_sec_key_modulus_bytes(key), rlen = rsakit_sec_blinding_random_bytes(key);
        uint8_t *in = calloc(k, 1), *out = calloc(k, 1), *random = calloc(rlen, 1);
        mp_limb_t *pair = calloc(rsakit_sec_blinding_limbs(key), sizeof(mp_limb_t));
        for (size_t i = 1; i < k; i++) in[i] = (uint8_t)next();
        for (size_t i = 0; i < rlen; i++) random[i] = (uint8_t)next();
        SECRET(random, rlen);
        bad += rsakit_sec_blinding_create(key, pair, random, rlen) != RSAKIT_SEC_OK;
        bad += rsakit_sec_private(key, out, k, in, k, pair) != RSAKIT_SEC_OK;
        PUBLIC(out, k);
        mpz_import(c, k, 1, 1, 1, 0, in);
        mpz_powm(want, c, d, n);
        mpz_import(got, k, 1, 1, 1, 0, out);
        if (mpz_cmp(want, got) != 0) {
            fprintf(stderr, "mismatch: the private operation on the ADX seam\n");
            bad++;
        }
        rsakit_sec_key_destroy(key);
        free(in), free(out), free(random), free(pair);
    }
    for (int i = 0; i < 7; i++) free(keep[i]);
    mpz_clears(p, q, n, e, d, dp, dq, qinv, t, c, want, got, NULL);
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
    if (plant != 0) { /* the controls need no second part */
        printf("MontADXCTHarness: %s, %d mismatches\n", plant == 1 ? "plant-leak" : "plant-derived", bad);
        return bad == 0 ? 0 : 1;
    }
    const int private_bad = run_private();
    printf("MontADXCTHarness: private operation on the ADX seam (2048-bit key, secrets marked): %s\n",
           private_bad == 0 ? "matches GMP" : "FAILED");
    bad += private_bad;
    printf("MontADXCTHarness: ct, %d mismatches\n", bad);
    return bad == 0 ? 0 : 1;
}
