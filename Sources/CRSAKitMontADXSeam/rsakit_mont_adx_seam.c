/*
 * rsakit_mont_adx_seam.c - the ADX kernel as the kernel of the constant-time private path:
 * for each input and prime r_i, residue = (base mod r_i)^(d_i) mod r_i; the re-encryption
 * check's root^e mod n; the blinding products a b mod n. See rsakit_mont_adx_seam.h.
 */
#include "rsakit_mont_adx_seam.h"

#include "rsakit_mont_adx.h"
#include "rsakit_secret.h"

#include <gmp.h>
#include <stdlib.h>
#include <string.h>

typedef struct seam_context {
    size_t primes;
    /* n itself, for the check and the blinding products (NULL above 64 limbs: the check then
     * runs prime by prime, the products on GMP). */
    rsakit_adx_modulus *modulus;
    /* Tests only (rsakit_adx_sec_attach_faulty_for_tests): flip a bit of the first residue. */
    int fault;
    rsakit_adx_modulus *moduli[RSAKIT_SEC_MAX_PRIMES];
} seam_context;

/* memset that the optimiser cannot drop as a dead store. */
static void wipe(void *p, size_t bytes) {
    memset(p, 0, bytes);
    __asm__ volatile("" : : "r"(p) : "memory");
}

static void seam_destroy(void *opaque) {
    seam_context *ctx = opaque;
    if (ctx == NULL) {
        return;
    }
    for (size_t i = 0; i < ctx->primes; i++) {
        rsakit_adx_modulus_destroy(ctx->moduli[i]);
    }
    rsakit_adx_modulus_destroy(ctx->modulus);
    wipe(ctx, sizeof *ctx);
    free(ctx);
}

/* Scratch of one call: a copy of one base (nn limbs), the reduced bases and the results of
 * every prime (residue_limbs each), GMP's scratch for mpn_sec_div_r, then `extra` limbs. */
typedef struct seam_work {
    size_t nn, words;
    uint64_t *block, *copy, *reduced, *result, *extra;
    mp_limb_t *tp;
} seam_work;

static int work_alloc(const seam_context *ctx, const rsakit_sec_key *key, size_t extra, seam_work *w) {
    const size_t nn = rsakit_sec_key_modulus_limbs(key), L = rsakit_sec_key_residue_limbs(key);
    size_t max_pl = 0;
    for (size_t i = 0; i < ctx->primes; i++) {
        const size_t pl = rsakit_sec_key_prime_limbs(key, i);
        max_pl = pl > max_pl ? pl : max_pl;
    }
    const size_t itch = (size_t)mpn_sec_div_r_itch((mp_size_t)nn, (mp_size_t)max_pl);
    w->nn = nn;
    w->words = nn + 2 * L + itch + extra;
    w->block = calloc(w->words, sizeof(uint64_t));
    if (w->block == NULL) {
        return -1;
    }
    w->copy = w->block;
    w->reduced = w->copy + nn;
    w->result = w->reduced + L;
    w->tp = (mp_limb_t *)(w->result + L);
    w->extra = w->result + L + itch;
    return 0;
}

static void work_free(seam_work *w) {
    wipe(w->block, w->words * sizeof(uint64_t));
    free(w->block);
}

/* w->reduced + offset(i) = base mod prime i (its limb count), by mpn_sec_div_r on a copy. */
static void reduce_base(const rsakit_sec_key *key, size_t i, const mp_limb_t *base, seam_work *w) {
    const size_t pl = rsakit_sec_key_prime_limbs(key, i);
    memcpy(w->copy, base, w->nn * sizeof(uint64_t));
    mpn_sec_div_r((mp_limb_t *)w->copy, (mp_size_t)w->nn, rsakit_sec_key_prime(key, i), (mp_size_t)pl, w->tp);
    memcpy(w->reduced + rsakit_sec_key_residue_offset(key, i), w->copy, pl * sizeof(uint64_t));
}

/* residues[j] + offset(i) = (bases[j] mod r_i)^x mod r_i for every prime: x = d_i (all its
 * limbs) when e is NULL, else the public e (e_limbs limbs, ebits bits: the check by primes). */
static int per_input(const seam_context *ctx, const rsakit_sec_key *key, size_t count,
                     const mp_limb_t *const bases[], mp_limb_t *const residues[], seam_work *w,
                     const uint64_t *e, size_t e_limbs, size_t ebits) {
    const size_t L = rsakit_sec_key_residue_limbs(key);
    int status = 0;
    for (size_t j = 0; j < count && status == 0; j++) {
        for (size_t i = 0; i < ctx->primes; i++) {
            reduce_base(key, i, bases[j], w);
        }
        if (e == NULL && ctx->primes == 2) {
            /* d_p and d_q are zero-padded to their primes' limb counts: scan the longer. */
            const size_t p0 = rsakit_sec_key_prime_limbs(key, 0), p1 = rsakit_sec_key_prime_limbs(key, 1);
            const size_t o0 = rsakit_sec_key_residue_offset(key, 0), o1 = rsakit_sec_key_residue_offset(key, 1);
            if (p0 == p1) {
                status = rsakit_adx_powm2(p0, ctx->moduli[0], w->result + o0, w->reduced + o0,
                                          (const uint64_t *)rsakit_sec_key_prime_exponent(key, 0),
                                          ctx->moduli[1], w->result + o1, w->reduced + o1,
                                          (const uint64_t *)rsakit_sec_key_prime_exponent(key, 1));
            } else {
                status = rsakit_adx_powm(ctx->moduli[0], w->result + o0, w->reduced + o0,
                                         (const uint64_t *)rsakit_sec_key_prime_exponent(key, 0), p0)
                       | rsakit_adx_powm(ctx->moduli[1], w->result + o1, w->reduced + o1,
                                         (const uint64_t *)rsakit_sec_key_prime_exponent(key, 1), p1);
            }
        } else {
            for (size_t i = 0; i < ctx->primes && status == 0; i++) {
                const size_t pl = rsakit_sec_key_prime_limbs(key, i), o = rsakit_sec_key_residue_offset(key, i);
                status = e == NULL
                    ? rsakit_adx_powm(ctx->moduli[i], w->result + o, w->reduced + o,
                                      (const uint64_t *)rsakit_sec_key_prime_exponent(key, i), pl)
                    : rsakit_adx_powm_public_exponent(ctx->moduli[i], w->result + o, w->reduced + o, e, e_limbs, ebits);
            }
        }
        if (status == 0) {
            memcpy(residues[j], w->result, L * sizeof(uint64_t));
        }
    }
    return status;
}

static int seam_kernel(void *opaque, const rsakit_sec_key *key, size_t count,
                       const mp_limb_t *const bases[], mp_limb_t *const residues[]) {
    const seam_context *ctx = opaque;
    if (count == 0 || count > RSAKIT_SEC_BATCH) {
        return 1;
    }
    seam_work w;
    if (work_alloc(ctx, key, 0, &w) != 0) {
        return 1; /* the GMP reference runs instead */
    }
    const int status = per_input(ctx, key, count, bases, residues, &w, NULL, 0, 0);
    work_free(&w);
    if (ctx->fault && status == 0) {
        residues[0][0] ^= 1;
    }
    return status == 0 ? 0 : 1;
}

/* products[j] = roots[j]^e mod n: mod n itself when n has a context (up to 64 limbs), else
 * (roots[j] mod r_i)^e mod r_i for each prime and Garner's recombination (the same number). */
static int seam_check(void *opaque, const rsakit_sec_key *key, size_t count,
                      const mp_limb_t *const roots[], mp_limb_t *const products[]) {
    const seam_context *ctx = opaque;
    if (count == 0 || count > RSAKIT_SEC_BATCH) {
        return 1;
    }
    size_t e_limbs = 0, ebits = 0;
    const uint64_t *e = (const uint64_t *)rsakit_sec_key_public_exponent(key, &e_limbs, &ebits);
    int status = 0;
    if (ctx->modulus != NULL) {
        for (size_t j = 0; j < count && status == 0; j++) {
            status = rsakit_adx_powm_public_exponent(ctx->modulus, products[j], (const uint64_t *)roots[j],
                                                     e, e_limbs, ebits);
        }
        return status == 0 ? 0 : 1;
    }
    const size_t L = rsakit_sec_key_residue_limbs(key);
    seam_work w;
    if (work_alloc(ctx, key, count * L, &w) != 0) {
        return 1;
    }
    mp_limb_t *all[RSAKIT_SEC_BATCH];
    for (size_t j = 0; j < count; j++) {
        all[j] = (mp_limb_t *)(w.extra + j * L);
    }
    status = per_input(ctx, key, count, roots, all, &w, e, e_limbs, ebits);
    if (status == 0) {
        status = rsakit_sec_crt_recombine(key, count, (const mp_limb_t *const *)all, products);
    }
    work_free(&w);
    return status == 0 ? 0 : 1;
}

/* products[j] = a[j] b[j] mod n; every input read before any product is written (products may
 * alias inputs). */
static int seam_mul(void *opaque, const rsakit_sec_key *key, size_t count,
                    const mp_limb_t *const a[], const mp_limb_t *const b[], mp_limb_t *const products[]) {
    const seam_context *ctx = opaque;
    if (ctx->modulus == NULL || count == 0 || count > RSAKIT_SEC_BATCH) {
        return 1;
    }
    const size_t nn = rsakit_sec_key_modulus_limbs(key);
    uint64_t *out = calloc(count * nn, sizeof(uint64_t));
    if (out == NULL) {
        return 1;
    }
    int status = 0;
    for (size_t j = 0; j < count && status == 0; j++) {
        status = rsakit_adx_mulmod(ctx->modulus, out + j * nn, (const uint64_t *)a[j], (const uint64_t *)b[j]);
    }
    for (size_t j = 0; j < count && status == 0; j++) {
        memcpy(products[j], out + j * nn, nn * sizeof(uint64_t));
    }
    wipe(out, count * nn * sizeof(uint64_t));
    free(out);
    return status == 0 ? 0 : 1;
}

static int attach(struct rsakit_sec_key *key, int fault) {
    if (key == NULL || !rsakit_adx_cpu_supported()) {
        return -1;
    }
    const size_t u = rsakit_sec_key_prime_count(key);
    if (u == 0 || u > RSAKIT_SEC_MAX_PRIMES) {
        return -1;
    }
    for (size_t i = 0; i < u; i++) {
        const size_t pl = rsakit_sec_key_prime_limbs(key, i);
        if (pl == 0 || pl > RSAKIT_ADX_MAX_LIMBS) {
            return -1; /* a prime above 4096 bits: the key stays on GMP */
        }
    }
    seam_context *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) {
        return -1;
    }
    ctx->fault = fault;
    for (size_t i = 0; i < u; i++) {
        ctx->moduli[i] = rsakit_adx_modulus_create((const uint64_t *)rsakit_sec_key_prime(key, i),
                                                   rsakit_sec_key_prime_limbs(key, i));
        if (ctx->moduli[i] == NULL) {
            seam_destroy(ctx);
            return -1;
        }
        ctx->primes = i + 1;
    }
    const size_t nn = rsakit_sec_key_modulus_limbs(key);
    if (nn <= RSAKIT_ADX_MAX_LIMBS) {
        ctx->modulus = rsakit_adx_modulus_create((const uint64_t *)rsakit_sec_key_modulus(key), nn);
        if (ctx->modulus == NULL) {
            seam_destroy(ctx);
            return -1;
        }
    }
    rsakit_sec_key_set_kernel(key, seam_kernel, ctx, seam_destroy);
    rsakit_sec_key_set_check_kernel(key, seam_check);
    if (ctx->modulus != NULL) {
        rsakit_sec_key_set_mul_kernel(key, seam_mul);
    } else {
        rsakit_sec_key_set_mul_kernel(key, NULL);
    }
    return 0;
}

int rsakit_adx_sec_attach(struct rsakit_sec_key *key) { return attach(key, 0); }

int rsakit_adx_sec_attach_faulty_for_tests(struct rsakit_sec_key *key) { return attach(key, 1); }
