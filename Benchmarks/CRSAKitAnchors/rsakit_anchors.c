/* Reference code on plain GMP for RSAKitBenchmarks; see include/rsakit_anchors.h. */
#include "rsakit_anchors.h"

#include <gmp.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define RSAKIT_HAVE_CALLGRIND 1
#endif
#endif

static void import_bytes(mpz_ptr x, const uint8_t *bytes, size_t len) {
    if (len == 0 || bytes == NULL) {
        mpz_set_ui(x, 0);
    } else {
        mpz_import(x, len, 1, 1, 1, 0, bytes);
    }
}

/* Fixed-length big-endian export: 0, or -1 when x < 0 or x >= 256^out_len. */
static int export_bytes(mpz_srcptr x, uint8_t *out, size_t out_len) {
    memset(out, 0, out_len);
    if (mpz_sgn(x) < 0) {
        return -1;
    }
    if (mpz_sgn(x) == 0) {
        return 0;
    }
    size_t needed = (mpz_sizeinbase(x, 2) + 7) / 8;
    if (needed > out_len) {
        return -1;
    }
    size_t written = 0;
    mpz_export(out + (out_len - needed), &written, 1, 1, 1, 0, x);
    return written == needed ? 0 : -1;
}

/* MARK: - CRT private exponentiation */

struct rsakit_anchor_crt {
    mpz_t p, q, dp, dq, qinv, c;
    mpz_t cp, cq, m1, m2, h, m;
    int has_result;
};

rsakit_anchor_crt *rsakit_anchor_crt_create(
    const uint8_t *p, size_t p_len, const uint8_t *q, size_t q_len,
    const uint8_t *dp, size_t dp_len, const uint8_t *dq, size_t dq_len,
    const uint8_t *qinv, size_t qinv_len, const uint8_t *c, size_t c_len) {
    rsakit_anchor_crt *a = calloc(1, sizeof *a);
    if (a == NULL) {
        return NULL;
    }
    mpz_inits(a->p, a->q, a->dp, a->dq, a->qinv, a->c, a->cp, a->cq, a->m1, a->m2, a->h, a->m, NULL);
    import_bytes(a->p, p, p_len);
    import_bytes(a->q, q, q_len);
    import_bytes(a->dp, dp, dp_len);
    import_bytes(a->dq, dq, dq_len);
    import_bytes(a->qinv, qinv, qinv_len);
    import_bytes(a->c, c, c_len);
    if (mpz_even_p(a->p) || mpz_even_p(a->q) || mpz_sgn(a->dp) <= 0 || mpz_sgn(a->dq) <= 0) {
        rsakit_anchor_crt_destroy(a);
        return NULL;
    }
    /* Size every output once so that the timed loop never reallocates. */
    size_t limbs = mpz_size(a->p) + mpz_size(a->q) + 2;
    mpz_realloc2(a->m, limbs * GMP_NUMB_BITS);
    mpz_realloc2(a->h, limbs * GMP_NUMB_BITS);
    return a;
}

void rsakit_anchor_crt_run(rsakit_anchor_crt *a, size_t count) {
    for (size_t i = 0; i < count; i++) {
        mpz_mod(a->cp, a->c, a->p);
        mpz_powm_sec(a->m1, a->cp, a->dp, a->p);   /* m1 = c^dP mod p */
        mpz_mod(a->cq, a->c, a->q);
        mpz_powm_sec(a->m2, a->cq, a->dq, a->q);   /* m2 = c^dQ mod q */
        mpz_sub(a->h, a->m1, a->m2);
        mpz_mul(a->h, a->h, a->qinv);
        mpz_mod(a->h, a->h, a->p);                 /* h = qInv (m1 - m2) mod p */
        mpz_mul(a->m, a->q, a->h);
        mpz_add(a->m, a->m, a->m2);                /* m = m2 + q h */
    }
    if (count > 0) {
        a->has_result = 1;
    }
}

int rsakit_anchor_crt_result(const rsakit_anchor_crt *a, uint8_t *out, size_t out_len) {
    if (!a->has_result) {
        return -1;
    }
    return export_bytes(a->m, out, out_len);
}

void rsakit_anchor_crt_destroy(rsakit_anchor_crt *a) {
    if (a == NULL) {
        return;
    }
    mpz_clears(a->p, a->q, a->dp, a->dq, a->qinv, a->c, a->cp, a->cq, a->m1, a->m2, a->h, a->m, NULL);
    free(a);
}

/* MARK: - Public exponentiation */

struct rsakit_anchor_public {
    mpz_t n, e, m, r;
    int has_result;
};

rsakit_anchor_public *rsakit_anchor_public_create(
    const uint8_t *n, size_t n_len, const uint8_t *e, size_t e_len,
    const uint8_t *m, size_t m_len) {
    rsakit_anchor_public *a = calloc(1, sizeof *a);
    if (a == NULL) {
        return NULL;
    }
    mpz_inits(a->n, a->e, a->m, a->r, NULL);
    import_bytes(a->n, n, n_len);
    import_bytes(a->e, e, e_len);
    import_bytes(a->m, m, m_len);
    if (mpz_sgn(a->n) <= 0) {
        rsakit_anchor_public_destroy(a);
        return NULL;
    }
    mpz_realloc2(a->r, (mpz_size(a->n) + 1) * GMP_NUMB_BITS);
    return a;
}

void rsakit_anchor_public_run(rsakit_anchor_public *a, size_t count) {
    for (size_t i = 0; i < count; i++) {
        mpz_powm(a->r, a->m, a->e, a->n);
    }
    if (count > 0) {
        a->has_result = 1;
    }
}

int rsakit_anchor_public_result(const rsakit_anchor_public *a, uint8_t *out, size_t out_len) {
    if (!a->has_result) {
        return -1;
    }
    return export_bytes(a->r, out, out_len);
}

void rsakit_anchor_public_destroy(rsakit_anchor_public *a) {
    if (a == NULL) {
        return;
    }
    mpz_clears(a->n, a->e, a->m, a->r, NULL);
    free(a);
}

/* MARK: - Plain key generation */

struct rsakit_anchor_keygen {
    gmp_randstate_t state; /* Mersenne Twister: a speed reference only, never for real keys. */
    mpz_t p, q, n, e, d, dp, dq, qinv, pm1, qm1, lambda, t;
    uint64_t candidates;
    size_t modulus_bits;
};

rsakit_anchor_keygen *rsakit_anchor_keygen_create(uint64_t seed) {
    rsakit_anchor_keygen *g = calloc(1, sizeof *g);
    if (g == NULL) {
        return NULL;
    }
    gmp_randinit_default(g->state);
    gmp_randseed_ui(g->state, (unsigned long)seed);
    mpz_inits(g->p, g->q, g->n, g->e, g->d, g->dp, g->dq, g->qinv, g->pm1, g->qm1, g->lambda, g->t, NULL);
    return g;
}

/* A random odd `bits`-bit candidate with its top two bits set (so that the product of two
 * such numbers has exactly 2 * bits bits), gcd(x - 1, e) = 1 and mpz_probab_prime_p > 0. */
static void anchor_prime(rsakit_anchor_keygen *g, mpz_ptr x, unsigned bits, unsigned long e, int reps) {
    for (;;) {
        mpz_urandomb(x, g->state, bits);
        mpz_setbit(x, bits - 1);
        mpz_setbit(x, bits - 2);
        mpz_setbit(x, 0);
        g->candidates++;
        mpz_sub_ui(g->t, x, 1);
        if (mpz_gcd_ui(NULL, g->t, e) != 1) {
            continue;
        }
        if (mpz_probab_prime_p(x, reps) > 0) {
            return;
        }
    }
}

int rsakit_anchor_keygen_run(rsakit_anchor_keygen *g, unsigned bits, unsigned long e, int reps) {
    if (bits < 64 || bits % 2 != 0 || e < 3 || e % 2 == 0 || reps < 1) {
        return -1;
    }
    g->candidates = 0;
    do {
        anchor_prime(g, g->p, bits / 2, e, reps);
        anchor_prime(g, g->q, bits / 2, e, reps);
    } while (mpz_cmp(g->p, g->q) == 0);
    if (mpz_cmp(g->p, g->q) < 0) {
        mpz_swap(g->p, g->q);
    }
    mpz_mul(g->n, g->p, g->q);
    mpz_sub_ui(g->pm1, g->p, 1);
    mpz_sub_ui(g->qm1, g->q, 1);
    mpz_lcm(g->lambda, g->pm1, g->qm1);
    mpz_set_ui(g->e, e);
    /* Cannot fail: gcd(e, p - 1) = gcd(e, q - 1) = 1. */
    mpz_invert(g->d, g->e, g->lambda);
    mpz_mod(g->dp, g->d, g->pm1);
    mpz_mod(g->dq, g->d, g->qm1);
    mpz_invert(g->qinv, g->q, g->p);
    g->modulus_bits = mpz_sizeinbase(g->n, 2);
    return 0;
}

uint64_t rsakit_anchor_keygen_last_candidates(const rsakit_anchor_keygen *g) { return g->candidates; }

size_t rsakit_anchor_keygen_last_modulus_bits(const rsakit_anchor_keygen *g) { return g->modulus_bits; }

int rsakit_anchor_keygen_last_key_consistent(const rsakit_anchor_keygen *g) {
    if (g->modulus_bits == 0) {
        return 0;
    }
    mpz_t t;
    mpz_init(t);
    int ok = 1;
    mpz_mul(t, g->p, g->q);
    ok &= mpz_cmp(t, g->n) == 0;
    mpz_mul(t, g->e, g->d);
    mpz_mod(t, t, g->lambda);
    ok &= mpz_cmp_ui(t, 1) == 0;
    mpz_mod(t, g->d, g->pm1);
    ok &= mpz_cmp(t, g->dp) == 0;
    mpz_mod(t, g->d, g->qm1);
    ok &= mpz_cmp(t, g->dq) == 0;
    mpz_mul(t, g->q, g->qinv);
    mpz_mod(t, t, g->p);
    ok &= mpz_cmp_ui(t, 1) == 0;
    mpz_clear(t);
    return ok;
}

void rsakit_anchor_keygen_destroy(rsakit_anchor_keygen *g) {
    if (g == NULL) {
        return;
    }
    mpz_clears(g->p, g->q, g->n, g->e, g->d, g->dp, g->dq, g->qinv, g->pm1, g->qm1, g->lambda, g->t, NULL);
    gmp_randclear(g->state);
    free(g);
}

/* MARK: - Miscellaneous */

const char *rsakit_bench_gmp_version(void) { return gmp_version; }

void rsakit_bench_callgrind_start(void) {
#ifdef RSAKIT_HAVE_CALLGRIND
    CALLGRIND_ZERO_STATS;
    CALLGRIND_START_INSTRUMENTATION;
#endif
}

void rsakit_bench_callgrind_stop(void) {
#ifdef RSAKIT_HAVE_CALLGRIND
    CALLGRIND_STOP_INSTRUMENTATION;
    CALLGRIND_DUMP_STATS_AT("rsakit-benchmark-one");
#endif
}

int rsakit_bench_callgrind_available(void) {
#ifdef RSAKIT_HAVE_CALLGRIND
    return 1;
#else
    return 0;
#endif
}
