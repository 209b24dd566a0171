/* Private layout of rsakit_sec_key, shared by rsakit_secret_key.c and rsakit_secret.c. */
#ifndef RSAKIT_SECRET_INTERNAL_H
#define RSAKIT_SECRET_INTERNAL_H

#include "rsakit_secret.h"

struct rsakit_sec_key {
    size_t k;             /* modulus octets */
    size_t nn;            /* modulus limbs */
    size_t u;             /* prime count */
    size_t en, ebits;     /* public exponent limbs and bits */
    mp_limb_t *n;         /* nn limbs (public) */
    mp_limb_t *e;         /* en limbs (public) */
    size_t plimbs[RSAKIT_SEC_MAX_PRIMES];
    size_t pbits[RSAKIT_SEC_MAX_PRIMES];
    size_t poffset[RSAKIT_SEC_MAX_PRIMES]; /* residue offsets */
    mp_limb_t *prime[RSAKIT_SEC_MAX_PRIMES];    /* plimbs[i] limbs */
    mp_limb_t *exponent[RSAKIT_SEC_MAX_PRIMES]; /* plimbs[i] limbs, d_i zero-padded */
    /* Garner step for prime i (i = 0, then 2 ... u-1): coefficient[i] (plimbs[i] limbs:
     * qInv for i = 0, t_(i+1) for i >= 2) and multiplier[i], the product of the primes
     * already combined (q for i = 0; q p r_3 ... r_i for i >= 2), multiplier_limbs[i]
     * limbs (the sum of their limb counts; the top limb may be zero). Index 1 unused. */
    mp_limb_t *coefficient[RSAKIT_SEC_MAX_PRIMES];
    mp_limb_t *multiplier[RSAKIT_SEC_MAX_PRIMES];
    size_t multiplier_limbs[RSAKIT_SEC_MAX_PRIMES];
    size_t residue_limbs; /* sum of plimbs */
    size_t max_plimbs;
    size_t lane_scratch;  /* limbs of scratch per lane for the private operation */
    size_t powm_scratch;  /* limbs of scratch for one mpn_sec_powm modulo a prime */
    mp_limb_t *memory;    /* the one allocation holding every limb array above */
    size_t memory_limbs;
    rsakit_sec_powm_kernel kernel;
    rsakit_sec_check_kernel check_kernel; /* NULL: mpn_sec_powm */
    rsakit_sec_mul_kernel mul_kernel;     /* NULL: mpn_sec_mul + mpn_sec_div_r */
    void *kernel_context;
    void (*kernel_destroy)(void *);
};

/* Scratch: calloc'd limbs, zeroed and freed by rsakit_sec_scratch_free. Aborts on OOM. */
mp_limb_t *rsakit_sec_scratch_alloc(size_t limbs);
void rsakit_sec_scratch_free(mp_limb_t *p, size_t limbs);

/* Big-endian octets into limbs (len <= limbs * 8, high limbs zeroed): no branch on values. */
void rsakit_sec_load_be(mp_limb_t *dst, size_t limbs, const uint8_t *bytes, size_t len);

#endif
