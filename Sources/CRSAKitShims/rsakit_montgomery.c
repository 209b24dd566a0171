#include "rsakit_montgomery.h"
#include "rsakit_shims.h"

#include <stdlib.h>
#include <string.h>

#if GMP_NAIL_BITS != 0
#error "rsakit_montgomery.c assumes GMP without nail bits"
#endif

struct rsakit_mont {
    mp_size_t nl;     /* limbs of n */
    mp_limb_t ninv;   /* -n^-1 mod 2^GMP_NUMB_BITS */
    mp_limb_t *n;     /* nl limbs */
    mp_limb_t *r2;    /* R^2 mod n, nl limbs, R = 2^(GMP_NUMB_BITS * nl) */
};

rsakit_mont *rsakit_mont_create(mpz_srcptr n) {
    if (mpz_sgn(n) <= 0 || mpz_even_p(n) || mpz_cmp_ui(n, 1) == 0) {
        return NULL;
    }
    mp_size_t nl = (mp_size_t)mpz_size(n);
    rsakit_mont *m = malloc(sizeof *m);
    mp_limb_t *limbs = malloc(2 * (size_t)nl * sizeof(mp_limb_t));
    if (m == NULL || limbs == NULL) {
        free(m);
        free(limbs);
        return NULL;
    }
    m->nl = nl;
    m->n = limbs;
    m->r2 = limbs + nl;
    memcpy(m->n, mpz_limbs_read(n), (size_t)nl * sizeof(mp_limb_t));

    /* Newton iteration for n0^-1 mod 2^64: n0 * n0 = 1 mod 8 for odd n0, so inv = n0 is
     * right to 3 bits, and each step doubles the correct bits: 3, 6, 12, 24, 48, 96. */
    mp_limb_t n0 = m->n[0];
    mp_limb_t inv = n0;
    for (int i = 0; i < 5; i++) {
        inv *= 2 - n0 * inv;
    }
    m->ninv = (mp_limb_t)0 - inv;

    mpz_t r2;
    mpz_init(r2);
    mpz_setbit(r2, (mp_bitcnt_t)2 * GMP_NUMB_BITS * (mp_bitcnt_t)nl);
    mpz_mod(r2, r2, n);
    size_t used = mpz_size(r2);
    memset(m->r2, 0, (size_t)nl * sizeof(mp_limb_t));
    memcpy(m->r2, mpz_limbs_read(r2), used * sizeof(mp_limb_t));
    mpz_clear(r2);
    return m;
}

void rsakit_mont_destroy(rsakit_mont *m) {
    if (m == NULL) {
        return;
    }
    free(m->n);
    free(m);
}

/* Montgomery reduction (REDC): r = t * R^-1 mod n for t < n * R, t of 2 nl limbs (t is
 * destroyed). Row i adds q * n to t[i ..] with q chosen so that t[i] becomes 0; the carry
 * out of the row belongs at t[i + nl] and is parked in the freed t[i] (no later row reads
 * it), then all parked carries are added to the high half at once. The result
 * (< 2n) gets one branch-free conditional subtraction. s is nl limbs of scratch. */
static void mont_redc(mp_limb_t *r, mp_limb_t *t, const rsakit_mont *m, mp_limb_t *s) {
    const mp_size_t nl = m->nl;
    for (mp_size_t i = 0; i < nl; i++) {
        mp_limb_t q = t[i] * m->ninv;
        t[i] = mpn_addmul_1(t + i, m->n, nl, q);
    }
    mp_limb_t carry = mpn_add_n(r, t + nl, t, nl);
    /* value = carry * R + r. Subtract n when carry = 1 (value >= R > n; r - n mod R is then
     * the true difference) or when r >= n (no borrow). */
    mp_limb_t borrow = mpn_sub_n(s, r, m->n, nl);
    /* All-ones when the difference is to be kept; a masked copy, no branch on the data. */
    mp_limb_t mask = (mp_limb_t)0 - (carry | (borrow ^ 1));
    for (mp_size_t i = 0; i < nl; i++) {
        r[i] = (s[i] & mask) | (r[i] & ~mask);
    }
}

int rsakit_mont_powm_vartime(mpz_ptr r, mpz_srcptr b, mpz_srcptr e, const rsakit_mont *m) {
    const mp_size_t nl = m->nl;
    if (mpz_sgn(e) <= 0 || mpz_sizeinbase(e, 2) > 64 || mpz_sgn(b) < 0) {
        return -1;
    }
    mpz_t n_view;
    if (mpz_cmp(b, mpz_roinit_n(n_view, m->n, nl)) >= 0) {
        return -1;
    }
    /* e as one machine word (at most 64 bits, checked above). */
    unsigned long long ev = 0;
    size_t ebits = mpz_sizeinbase(e, 2);
    for (size_t i = 0; i < ebits; i++) {
        if (mpz_tstbit(e, (mp_bitcnt_t)i)) {
            ev |= 1ULL << i;
        }
    }

    /* Scratch: t (2 nl), x (nl), bm (nl), bp (nl), s (nl). */
    size_t bytes = 6 * (size_t)nl * sizeof(mp_limb_t);
    mp_limb_t *scratch = malloc(bytes);
    if (scratch == NULL) {
        return -1;
    }
    mp_limb_t *t = scratch, *x = t + 2 * nl, *bm = x + nl, *bp = bm + nl, *s = bp + nl;

    /* bp = b, zero-extended to nl limbs (b < n, so it fits). */
    size_t bl = mpz_size(b);
    memset(bp, 0, (size_t)nl * sizeof(mp_limb_t));
    if (bl > 0) {
        memcpy(bp, mpz_limbs_read(b), bl * sizeof(mp_limb_t));
    }

    if (ev == 1) {
        memcpy(x, bp, (size_t)nl * sizeof(mp_limb_t));
    } else {
        /* bm = b R mod n = REDC(b * R^2). */
        mpn_mul_n(t, bp, m->r2, nl);
        mont_redc(bm, t, m, s);
        memcpy(x, bm, (size_t)nl * sizeof(mp_limb_t));
        /* Left to right over the bits below the top one; the last bit is done apart. */
        for (size_t i = ebits - 1; i-- > 1;) {
            mpn_sqr(t, x, nl);
            mont_redc(x, t, m, s);
            if ((ev >> i) & 1) {
                mpn_mul_n(t, x, bm, nl);
                mont_redc(x, t, m, s);
            }
        }
        mpn_sqr(t, x, nl);
        mont_redc(x, t, m, s);
        if (ev & 1) {
            /* x = b^(e-1) R; REDC(x * b) = b^e, already out of Montgomery form. */
            mpn_mul_n(t, x, bp, nl);
            mont_redc(x, t, m, s);
        } else {
            /* x = b^e R; REDC(x) = b^e. */
            memcpy(t, x, (size_t)nl * sizeof(mp_limb_t));
            memset(t + nl, 0, (size_t)nl * sizeof(mp_limb_t));
            mont_redc(x, t, m, s);
        }
    }

    mp_limb_t *out = mpz_limbs_write(r, nl);
    memcpy(out, x, (size_t)nl * sizeof(mp_limb_t));
    mpz_limbs_finish(r, nl);
    rsakit_secure_zero(scratch, bytes);
    free(scratch);
    return 0;
}
