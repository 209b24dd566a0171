/*
 * adx-private-op.c - the rate of rsakit's constant-time private operation in C
 * (rsakit_sec_private: blinded, checked by re-encryption, the blinding pair squared after
 * each use as the library refreshes it) on the ADX kernel (rsakit_adx_sec_attach) or on
 * GMP's mpn_sec_powm (no kernel attached), for the side-by-side runs of
 * scripts/measure-adx-efficiency.sh against intel-anchor. It is the library's private path
 * below the Swift layer (no padding check, no byte copies of the Swift API).
 *
 *   adx-private-op KEY.pem adx|gmp OPS
 *
 * Prints one line, `rsakit impl=adx bits=2048 ops=1000 cpu_s=0.51 ops_per_cpu_s=1960.1`,
 * after checking that both paths give the same m for one ciphertext. Process CPU time.
 * Exits 3 when the ADX kernel cannot run here.
 */
#include "rsakit_mont_adx.h"
#include "rsakit_mont_adx_seam.h"
#include "rsakit_secret.h"

#include <openssl/evp.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static rsakit_sec_octets component(EVP_PKEY *pkey, const char *name, uint8_t **keep) {
    BIGNUM *bn = NULL;
    if (!EVP_PKEY_get_bn_param(pkey, name, &bn)) {
        fprintf(stderr, "adx-private-op: the key has no %s\n", name);
        exit(1);
    }
    const int len = BN_num_bytes(bn);
    *keep = malloc((size_t)len + 1);
    BN_bn2bin(bn, *keep);
    BN_free(bn);
    return (rsakit_sec_octets){*keep, (size_t)len};
}

static rsakit_sec_key *load(const char *path) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        perror(path);
        exit(1);
    }
    EVP_PKEY *pkey = PEM_read_PrivateKey(f, NULL, NULL, NULL);
    fclose(f);
    if (pkey == NULL) {
        fprintf(stderr, "adx-private-op: cannot read %s\n", path);
        exit(1);
    }
    uint8_t *keep[7];
    rsakit_sec_octets n = component(pkey, OSSL_PKEY_PARAM_RSA_N, &keep[0]);
    rsakit_sec_octets e = component(pkey, OSSL_PKEY_PARAM_RSA_E, &keep[1]);
    rsakit_sec_octets primes[2] = {component(pkey, OSSL_PKEY_PARAM_RSA_FACTOR1, &keep[2]),
                                   component(pkey, OSSL_PKEY_PARAM_RSA_FACTOR2, &keep[3])};
    rsakit_sec_octets exps[2] = {component(pkey, OSSL_PKEY_PARAM_RSA_EXPONENT1, &keep[4]),
                                 component(pkey, OSSL_PKEY_PARAM_RSA_EXPONENT2, &keep[5])};
    rsakit_sec_octets coef = component(pkey, OSSL_PKEY_PARAM_RSA_COEFFICIENT1, &keep[6]);
    rsakit_sec_key *key = rsakit_sec_key_create(n, e, 2, primes, exps, &coef);
    for (int i = 0; i < 7; i++) free(keep[i]);
    EVP_PKEY_free(pkey);
    if (key == NULL) {
        fprintf(stderr, "adx-private-op: rsakit_sec_key_create refused the key\n");
        exit(1);
    }
    return key;
}

static void new_pair(const rsakit_sec_key *key, mp_limb_t *pair) {
    const size_t len = rsakit_sec_blinding_random_bytes(key);
    uint8_t *random = malloc(len);
    do {
        RAND_bytes(random, (int)len);
    } while (rsakit_sec_blinding_create(key, pair, random, len) != RSAKIT_SEC_OK);
    free(random);
}

int main(int argc, char **argv) {
    if (argc != 4 || (strcmp(argv[2], "adx") != 0 && strcmp(argv[2], "gmp") != 0)) {
        fprintf(stderr, "usage: adx-private-op KEY.pem adx|gmp OPS\n");
        return 64;
    }
    const int adx = strcmp(argv[2], "adx") == 0;
    const long ops = strtol(argv[3], NULL, 10);
    rsakit_sec_key *key = load(argv[1]), *reference = load(argv[1]);
    if (adx && (!rsakit_adx_usable() || rsakit_adx_sec_attach(key) != 0)) {
        fprintf(stderr, "adx-private-op: the ADX kernel cannot run here\n");
        return 3;
    }
    const size_t k = rsakit_sec_key_modulus_bytes(key);
    uint8_t *c = malloc(k), *m = malloc(k), *m_ref = malloc(k);
    RAND_bytes(c, (int)k);
    c[0] = 0; /* c < n */
    mp_limb_t *pair = malloc(rsakit_sec_blinding_limbs(key) * sizeof(mp_limb_t));
    mp_limb_t *pair_ref = malloc(rsakit_sec_blinding_limbs(key) * sizeof(mp_limb_t));
    new_pair(key, pair);
    new_pair(reference, pair_ref);
    if (rsakit_sec_private(key, m, k, c, k, pair) != RSAKIT_SEC_OK
        || rsakit_sec_private(reference, m_ref, k, c, k, pair_ref) != RSAKIT_SEC_OK || memcmp(m, m_ref, k) != 0) {
        fprintf(stderr, "adx-private-op: the %s path disagrees with GMP's\n", argv[2]);
        return 1;
    }
    for (int i = 0; i < 20; i++) { /* warm-up */
        rsakit_sec_private(key, m, k, c, k, pair);
        rsakit_sec_blinding_square_batch(key, 1, &pair);
    }
    const double t0 = cpu_seconds();
    for (long i = 0; i < ops; i++) {
        if (rsakit_sec_private(key, m, k, c, k, pair) != RSAKIT_SEC_OK) {
            fprintf(stderr, "adx-private-op: a private operation failed\n");
            return 1;
        }
        rsakit_sec_blinding_square_batch(key, 1, &pair);
    }
    const double t = cpu_seconds() - t0;
    printf("rsakit impl=%s bits=%zu ops=%ld cpu_s=%.4f ops_per_cpu_s=%.1f\n", argv[2], 8 * k, ops, t, (double)ops / t);
    rsakit_sec_key_destroy(key);
    rsakit_sec_key_destroy(reference);
    return 0;
}
