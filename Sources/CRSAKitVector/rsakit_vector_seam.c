/*
 * rsakit_vector_seam.c - the radix-2^52 exponentiation as the kernel of the constant-time
 * private path (rsakit_secret.h, "the kernel seam"): for each input and prime r_i,
 * residue = (base mod r_i)^(d_i) mod r_i.
 *
 * base mod r_i is mpn_sec_div_r, as on the GMP path (rsakit_sec_crt_powm_gmp); the
 * exponentiation is rsakit_vec_powm8 for several inputs (unused lanes run on 0) and, for
 * one or two inputs, rsakit_vec_powm2 on p and q in lockstep when the key has two primes of
 * one limb count, else rsakit_vec_powm per prime. Per-prime constants are computed once,
 * when the kernel is attached. The re-encryption check's m'^e mod n runs on the kernel too
 * (seam_check): mod n itself for moduli of up to 2048 bits, prime by prime and recombined
 * above that. For moduli of up to 2048 bits so do the blinding c' = c vf mod n and the
 * unblinding m = m' vi mod n of three blocks or more (seam_mul).
 */
#include "rsakit_vector_internal.h"
#include "rsakit_secret.h"

#include <gmp.h>
#include <stdlib.h>
#include <string.h>

/* Inputs from which one multi-buffer call per prime replaces single-buffer calls. NOTE: a
 * guess (single-buffer assumed ~3x the per-lane cost of multi-buffer); to be tuned on an
 * IFMA machine. */
#define SEAM_MULTI_FROM 3

typedef struct seam_context {
    rsakit_vec_impl impl;
    size_t primes;
    /* Two primes of one limb count: single inputs run p and q in lockstep (powm2). */
    int dual;
    /* n itself, for the re-encryption check's m'^e mod n and the blinding products (NULL
     * above 2048 bits: the check then runs prime by prime, the blinding on GMP). */
    rsakit_vec_modulus *modulus;
    /* Tests only (rsakit_vec_sec_attach_faulty_for_tests): flip a bit of the first residue. */
    int fault;
    rsakit_vec_modulus *moduli[RSAKIT_SEC_MAX_PRIMES];
} seam_context;

static void seam_destroy(void *opaque) {
    seam_context *ctx = opaque;
    if (ctx == NULL) {
        return;
    }
    for (size_t i = 0; i < ctx->primes; i++) {
        rsakit_vec_modulus_destroy(ctx->moduli[i]);
    }
    rsakit_vec_modulus_destroy(ctx->modulus);
    rk_zero(ctx, sizeof *ctx);
    free(ctx);
}

/* The kernel's scratch: a copy of one base (nn limbs), reduced bases and results (8 x 32
 * limbs each), GMP's scratch for mpn_sec_div_r. */
typedef struct seam_work {
    size_t nn;
    uint64_t *copy, *reduced, *result;
    mp_limb_t *tp;
} seam_work;

/* dst (limbs of prime i) = base mod prime i, by mpn_sec_div_r on a copy of the base. */
static void reduce_base(const rsakit_sec_key *key, size_t i, uint64_t *dst, const mp_limb_t *base, seam_work *w) {
    size_t pl = rsakit_sec_key_prime_limbs(key, i);
    memcpy(w->copy, base, w->nn * sizeof(uint64_t));
    mpn_sec_div_r((mp_limb_t *)w->copy, (mp_size_t)w->nn, rsakit_sec_key_prime(key, i), (mp_size_t)pl, w->tp);
    memcpy(dst, w->copy, pl * sizeof(uint64_t));
}

/* One or two inputs of a key with two primes of one limb count: p and q in lockstep. */
static int seam_dual(const seam_context *ctx, const rsakit_sec_key *key, size_t count,
                     const mp_limb_t *const bases[], mp_limb_t *const residues[], seam_work *w) {
    int status = 0;
    for (size_t j = 0; j < count && status == 0; j++) {
        for (size_t i = 0; i < 2; i++) {
            reduce_base(key, i, w->reduced + i * RSAKIT_VEC_MAX_LIMBS, bases[j], w);
        }
        status = rsakit_vec_powm2(
            ctx->impl, rsakit_sec_key_prime_limbs(key, 0),
            ctx->moduli[0], w->result, w->reduced, (const uint64_t *)rsakit_sec_key_prime_exponent(key, 0),
            ctx->moduli[1], w->result + RSAKIT_VEC_MAX_LIMBS, w->reduced + RSAKIT_VEC_MAX_LIMBS,
            (const uint64_t *)rsakit_sec_key_prime_exponent(key, 1));
        for (size_t i = 0; i < 2 && status == 0; i++) {
            memcpy(residues[j] + rsakit_sec_key_residue_offset(key, i), w->result + i * RSAKIT_VEC_MAX_LIMBS,
                   rsakit_sec_key_prime_limbs(key, i) * sizeof(uint64_t));
        }
    }
    return status;
}

/* Prime by prime, residues[j] + offset(i) = (bases[j] mod r_i)^x mod r_i: one multi-buffer
 * call for SEAM_MULTI_FROM inputs or more, else one single-buffer call per input. x is the
 * prime's secret exponent d_i (fixed window over its limbs) when e is NULL, else the public
 * e (e_limbs limbs, ebits bits; square-and-multiply on its bits: the check). */
static int seam_per_prime(const seam_context *ctx, const rsakit_sec_key *key, size_t count,
                          const mp_limb_t *const bases[], mp_limb_t *const residues[], seam_work *w,
                          const uint64_t *e, size_t e_limbs, size_t ebits) {
    int status = 0;
    for (size_t i = 0; i < ctx->primes && status == 0; i++) {
        size_t pl = rsakit_sec_key_prime_limbs(key, i);
        const uint64_t *exponent = (const uint64_t *)rsakit_sec_key_prime_exponent(key, i);
        const rsakit_vec_modulus *m = ctx->moduli[i];
        size_t offset = rsakit_sec_key_residue_offset(key, i);
        memset(w->reduced, 0, 8 * RSAKIT_VEC_MAX_LIMBS * sizeof(uint64_t));
        for (size_t j = 0; j < count; j++) {
            reduce_base(key, i, w->reduced + j * pl, bases[j], w);
        }
        if (count >= SEAM_MULTI_FROM) {
            status = e == NULL ? rsakit_vec_powm8(ctx->impl, m, w->result, w->reduced, exponent, pl)
                               : rsakit_vec_powm8_public_exponent(ctx->impl, m, w->result, w->reduced, e, e_limbs, ebits);
            for (size_t j = 0; j < count && status == 0; j++) {
                memcpy(residues[j] + offset, w->result + j * pl, pl * sizeof(uint64_t));
            }
        } else {
            for (size_t j = 0; j < count && status == 0; j++) {
                const uint64_t *base = w->reduced + j * pl;
                status = e == NULL ? rsakit_vec_powm(ctx->impl, m, w->result, base, exponent, pl)
                                   : rsakit_vec_powm_public_exponent(ctx->impl, m, w->result, base, e, e_limbs, ebits);
                memcpy(residues[j] + offset, w->result, pl * sizeof(uint64_t));
            }
        }
    }
    return status;
}

/* The scratch of seam_kernel and seam_check_by_primes, zeroed: one copy of a base (nn
 * limbs), 8 reduced bases and 8 results (32 limbs each), GMP's scratch for mpn_sec_div_r,
 * then `extra` limbs for the caller (at *extra_out). Returns the block (*words limbs, to be
 * wiped and freed), or NULL when memory runs out. */
static uint64_t *seam_work_alloc(const seam_context *ctx, const rsakit_sec_key *key, size_t extra,
                                 seam_work *w, uint64_t **extra_out, size_t *words) {
    size_t nn = rsakit_sec_key_modulus_limbs(key);
    size_t max_pl = 0;
    for (size_t i = 0; i < ctx->primes; i++) {
        size_t pl = rsakit_sec_key_prime_limbs(key, i);
        max_pl = pl > max_pl ? pl : max_pl;
    }
    size_t itch = (size_t)mpn_sec_div_r_itch((mp_size_t)nn, (mp_size_t)max_pl);
    *words = nn + 2 * 8 * RSAKIT_VEC_MAX_LIMBS + itch + extra;
    uint64_t *work = calloc(*words, sizeof(uint64_t));
    if (work == NULL) {
        return NULL;
    }
    *w = (seam_work){
        .nn = nn,
        .copy = work,
        .reduced = work + nn,
        .result = work + nn + 8 * RSAKIT_VEC_MAX_LIMBS,
        .tp = (mp_limb_t *)(work + nn + 2 * 8 * RSAKIT_VEC_MAX_LIMBS),
    };
    *extra_out = work + nn + 2 * 8 * RSAKIT_VEC_MAX_LIMBS + itch;
    return work;
}

static int seam_kernel(void *opaque, const rsakit_sec_key *key, size_t count,
                       const mp_limb_t *const bases[], mp_limb_t *const residues[]) {
    const seam_context *ctx = opaque;
    if (count == 0 || count > RSAKIT_SEC_BATCH) {
        return 1;
    }
    seam_work w;
    uint64_t *unused;
    size_t words;
    uint64_t *work = seam_work_alloc(ctx, key, 0, &w, &unused, &words);
    if (work == NULL) {
        return 1; /* the GMP reference runs instead */
    }
    int status = count < SEAM_MULTI_FROM && ctx->dual ? seam_dual(ctx, key, count, bases, residues, &w)
                                                       : seam_per_prime(ctx, key, count, bases, residues, &w, NULL, 0, 0);
    rk_zero(work, words * sizeof(uint64_t));
    free(work);
    if (ctx->fault) {
        residues[0][0] ^= 1;
    }
    return status == 0 ? 0 : 1;
}

/* The check above 2048 bits, where n has no kernel context (more than 32 limbs) but every
 * prime has: for each prime r_i, y_i = (root mod r_i)^e mod r_i on the kernel (seam_per_prime
 * with the public e), then Garner's recombination of the y_i (rsakit_sec_crt_recombine)
 * gives root^e mod n, since n is the product of the primes: the same number, so the same
 * verdict, as mod n itself. At 3072 bits mpn_sec_powm took about 71 us per block. */
static int seam_check_by_primes(const seam_context *ctx, const rsakit_sec_key *key, size_t count,
                                const mp_limb_t *const roots[], mp_limb_t *const products[]) {
    size_t e_limbs = 0, ebits = 0;
    const uint64_t *e = (const uint64_t *)rsakit_sec_key_public_exponent(key, &e_limbs, &ebits);
    size_t L = rsakit_sec_key_residue_limbs(key);
    seam_work w;
    uint64_t *extra;
    size_t words;
    uint64_t *work = seam_work_alloc(ctx, key, count * L, &w, &extra, &words);
    if (work == NULL) {
        return 1;
    }
    mp_limb_t *all_residues[RSAKIT_SEC_BATCH];
    for (size_t j = 0; j < count; j++) {
        all_residues[j] = (mp_limb_t *)(extra + j * L);
    }
    int status = seam_per_prime(ctx, key, count, roots, all_residues, &w, e, e_limbs, ebits);
    if (status == 0) {
        status = rsakit_sec_crt_recombine(key, count, (const mp_limb_t *const *)all_residues, products);
    }
    rk_zero(work, words * sizeof(uint64_t));
    free(work);
    return status == 0 ? 0 : 1;
}

/* The re-encryption check, products[j] = roots[j]^e mod n, on the kernel: one eight-lane
 * call for SEAM_MULTI_FROM roots or more (unused lanes run on 0), else one call per root.
 * e = 65537 costs 16 squarings and 2 products beside the conversions (mpn_sec_powm took
 * about 32 us per 2048-bit block). When n has more than 32 limbs, prime by prime
 * (seam_check_by_primes). */
static int seam_check(void *opaque, const rsakit_sec_key *key, size_t count,
                      const mp_limb_t *const roots[], mp_limb_t *const products[]) {
    const seam_context *ctx = opaque;
    if (count == 0 || count > RSAKIT_SEC_BATCH) {
        return 1;
    }
    if (ctx->modulus == NULL) {
        return seam_check_by_primes(ctx, key, count, roots, products);
    }
    size_t nn = rsakit_sec_key_modulus_limbs(key), e_limbs = 0, ebits = 0;
    const uint64_t *e = (const uint64_t *)rsakit_sec_key_public_exponent(key, &e_limbs, &ebits);
    size_t words = 2 * 8 * RSAKIT_VEC_MAX_LIMBS;
    uint64_t *work = calloc(words, sizeof(uint64_t));
    if (work == NULL) {
        return 1;
    }
    uint64_t *in = work, *out = work + 8 * RSAKIT_VEC_MAX_LIMBS;
    int status = 0;
    if (count >= SEAM_MULTI_FROM) {
        for (size_t j = 0; j < count; j++) {
            memcpy(in + j * nn, roots[j], nn * sizeof(uint64_t));
        }
        status = rsakit_vec_powm8_public_exponent(ctx->impl, ctx->modulus, out, in, e, e_limbs, ebits);
        for (size_t j = 0; j < count && status == 0; j++) {
            memcpy(products[j], out + j * nn, nn * sizeof(uint64_t));
        }
    } else {
        for (size_t j = 0; j < count && status == 0; j++) {
            status = rsakit_vec_powm_public_exponent(ctx->impl, ctx->modulus, products[j],
                                                     (const uint64_t *)roots[j], e, e_limbs, ebits);
        }
    }
    rk_zero(work, words * sizeof(uint64_t));
    free(work);
    return status == 0 ? 0 : 1;
}

/* Blinding and unblinding, products[j] = a[j] b[j] mod n, on the kernel: one eight-lane
 * call (unused lanes run on 0) for SEAM_MULTI_FROM numbers or more; fewer decline, and GMP's
 * mpn_sec_mul and mpn_sec_div_r (about 2.8 us each at 2048 bits) form them. Declines too
 * when n has more than 32 limbs. */
static int seam_mul(void *opaque, const rsakit_sec_key *key, size_t count,
                    const mp_limb_t *const a[], const mp_limb_t *const b[], mp_limb_t *const products[]) {
    const seam_context *ctx = opaque;
    if (ctx->modulus == NULL || count < SEAM_MULTI_FROM || count > RSAKIT_SEC_BATCH) {
        return 1;
    }
    size_t nn = rsakit_sec_key_modulus_limbs(key);
    size_t words = 3 * 8 * RSAKIT_VEC_MAX_LIMBS;
    uint64_t *work = calloc(words, sizeof(uint64_t));
    if (work == NULL) {
        return 1;
    }
    uint64_t *x = work, *y = work + 8 * RSAKIT_VEC_MAX_LIMBS, *out = y + 8 * RSAKIT_VEC_MAX_LIMBS;
    for (size_t j = 0; j < count; j++) {
        memcpy(x + j * nn, a[j], nn * sizeof(uint64_t));
        memcpy(y + j * nn, b[j], nn * sizeof(uint64_t));
    }
    int status = rsakit_vec_mulmod8(ctx->impl, ctx->modulus, out, x, y);
    for (size_t j = 0; j < count && status == 0; j++) {
        memcpy(products[j], out + j * nn, nn * sizeof(uint64_t));
    }
    rk_zero(work, words * sizeof(uint64_t));
    free(work);
    return status == 0 ? 0 : 1;
}

static int attach(rsakit_sec_key *key, rsakit_vec_impl impl, int fault);

int rsakit_vec_sec_attach(rsakit_sec_key *key, rsakit_vec_impl impl) {
    return attach(key, impl, 0);
}

int rsakit_vec_sec_attach_faulty_for_tests(rsakit_sec_key *key, rsakit_vec_impl impl) {
    return attach(key, impl, 1);
}

static int attach(rsakit_sec_key *key, rsakit_vec_impl impl, int fault) {
    if (key == NULL) {
        return -1;
    }
    if (impl == RSAKIT_VEC_IMPL_IFMA && !rsakit_vec_cpu_has_ifma()) {
        return -1;
    }
    size_t u = rsakit_sec_key_prime_count(key);
    if (u == 0 || u > RSAKIT_SEC_MAX_PRIMES) {
        return -1;
    }
    for (size_t i = 0; i < u; i++) {
        size_t pl = rsakit_sec_key_prime_limbs(key, i);
        if (pl == 0 || pl > RSAKIT_VEC_MAX_LIMBS) {
            return -1; /* a prime above 2048 bits: the key stays on GMP */
        }
    }
    seam_context *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) {
        return -1;
    }
    ctx->impl = impl;
    ctx->fault = fault;
    for (size_t i = 0; i < u; i++) {
        ctx->moduli[i] = rsakit_vec_modulus_create(
            (const uint64_t *)rsakit_sec_key_prime(key, i), rsakit_sec_key_prime_limbs(key, i));
        if (ctx->moduli[i] == NULL) {
            seam_destroy(ctx);
            return -1;
        }
        ctx->primes = i + 1;
    }
    ctx->dual = u == 2 && rsakit_sec_key_prime_limbs(key, 0) == rsakit_sec_key_prime_limbs(key, 1);
    size_t nn = rsakit_sec_key_modulus_limbs(key);
    if (nn <= RSAKIT_VEC_MAX_LIMBS) {
        ctx->modulus = rsakit_vec_modulus_create((const uint64_t *)rsakit_sec_key_modulus(key), nn);
    }
    rsakit_sec_key_set_kernel(key, seam_kernel, ctx, seam_destroy);
    rsakit_sec_key_set_check_kernel(key, seam_check);
    if (ctx->modulus != NULL) {
        rsakit_sec_key_set_mul_kernel(key, seam_mul);
    }
    return 0;
}
