/* The constant-time key form: creation, destruction, shape accessors, the kernel seam's
 * registration. Creation runs once per key and is not constant-time in the key's
 * values (like key validation); every limb array it fills has a length fixed by the
 * key's public shape. See include/rsakit_secret.h. */
#include "rsakit_secret_internal.h"
#include "rsakit_shims.h"
#include "rsakit_ct.h"

#include <stdlib.h>
#include <string.h>

mp_limb_t *rsakit_sec_scratch_alloc(size_t limbs) {
    mp_limb_t *p = calloc(limbs ? limbs : 1, sizeof(mp_limb_t));
    if (p == NULL) {
        abort();
    }
    return p;
}

void rsakit_sec_scratch_free(mp_limb_t *p, size_t limbs) {
    if (p != NULL) {
        rsakit_secure_zero(p, limbs * sizeof(mp_limb_t));
        free(p);
    }
}

void rsakit_sec_load_be(mp_limb_t *dst, size_t limbs, const uint8_t *bytes, size_t len) {
    for (size_t i = 0; i < limbs; i++) {
        dst[i] = 0;
    }
    for (size_t j = 0; j < len; j++) { /* j = octet position from the least significant */
        dst[j / sizeof(mp_limb_t)] |= (mp_limb_t)bytes[len - 1 - j] << (8 * (j % sizeof(mp_limb_t)));
    }
}

/* Significant octets of a big-endian string (leading zeros skipped: key load only). */
static rsakit_sec_octets trimmed(rsakit_sec_octets x) {
    while (x.length > 0 && x.bytes[0] == 0) {
        x.bytes++;
        x.length--;
    }
    return x;
}

static size_t limbs_for(rsakit_sec_octets x) {
    return (trimmed(x).length + sizeof(mp_limb_t) - 1) / sizeof(mp_limb_t);
}

static size_t bit_count(const mp_limb_t *x, size_t limbs) {
    while (limbs > 0 && x[limbs - 1] == 0) {
        limbs--;
    }
    if (limbs == 0) {
        return 0;
    }
    return limbs * GMP_NUMB_BITS - (size_t)__builtin_clzl(x[limbs - 1]);
}

/* x < m, both `limbs` long (key load only: variable time). */
static int less_than(const mp_limb_t *x, const mp_limb_t *m, size_t limbs) {
    return mpn_cmp(x, m, (mp_size_t)limbs) < 0;
}

rsakit_sec_key *rsakit_sec_key_create(
    rsakit_sec_octets n, rsakit_sec_octets e, size_t u,
    const rsakit_sec_octets *primes, const rsakit_sec_octets *exponents,
    const rsakit_sec_octets *coefficients) {
    if (u < 2 || u > RSAKIT_SEC_MAX_PRIMES || primes == NULL || exponents == NULL || coefficients == NULL) {
        return NULL;
    }
    rsakit_sec_key *key = calloc(1, sizeof *key);
    if (key == NULL) {
        return NULL;
    }
    n = trimmed(n);
    e = trimmed(e);
    key->k = n.length;
    key->nn = limbs_for(n);
    key->en = limbs_for(e);
    key->u = u;
    if (key->nn == 0 || key->en == 0) {
        free(key);
        return NULL;
    }
    size_t total = key->nn + key->en;
    size_t offset = 0;
    for (size_t i = 0; i < u; i++) {
        key->plimbs[i] = limbs_for(primes[i]);
        if (key->plimbs[i] == 0 || key->plimbs[i] > key->nn) {
            free(key);
            return NULL;
        }
        key->poffset[i] = offset;
        offset += key->plimbs[i];
        key->max_plimbs = key->plimbs[i] > key->max_plimbs ? key->plimbs[i] : key->max_plimbs;
    }
    key->residue_limbs = offset;
    /* multiplier limbs: q for step 0, q + p + r_3 ... r_i for step i >= 2. */
    key->multiplier_limbs[0] = key->plimbs[1];
    size_t running = key->plimbs[1] + key->plimbs[0];
    for (size_t i = 2; i < u; i++) {
        key->multiplier_limbs[i] = running;
        running += key->plimbs[i];
    }
    for (size_t i = 0; i < u; i++) {
        total += 3 * key->plimbs[i] + (i == 1 ? 0 : key->multiplier_limbs[i]);
    }
    key->memory_limbs = total;
    key->memory = rsakit_sec_scratch_alloc(total);
    mp_limb_t *cursor = key->memory;
    key->n = cursor; cursor += key->nn;
    key->e = cursor; cursor += key->en;
    rsakit_sec_load_be(key->n, key->nn, n.bytes, n.length);
    rsakit_sec_load_be(key->e, key->en, e.bytes, e.length);
    key->ebits = bit_count(key->e, key->en);
    int ok = (key->n[0] & 1) == 1 && key->ebits >= 2;
    for (size_t i = 0; i < u; i++) {
        size_t pn = key->plimbs[i];
        key->prime[i] = cursor; cursor += pn;
        key->exponent[i] = cursor; cursor += pn;
        key->coefficient[i] = cursor; cursor += pn;
        if (i != 1) {
            key->multiplier[i] = cursor; cursor += key->multiplier_limbs[i];
        }
        rsakit_sec_octets p = trimmed(primes[i]), d = trimmed(exponents[i]);
        rsakit_sec_load_be(key->prime[i], pn, p.bytes, p.length);
        key->pbits[i] = bit_count(key->prime[i], pn);
        ok = ok && (key->prime[i][0] & 1) == 1 && key->pbits[i] >= 2;
        ok = ok && d.length <= pn * sizeof(mp_limb_t);
        if (ok) {
            rsakit_sec_load_be(key->exponent[i], pn, d.bytes, d.length);
            ok = less_than(key->exponent[i], key->prime[i], pn);
        }
        if (ok && i != 1) {
            rsakit_sec_octets c = trimmed(coefficients[i == 0 ? 0 : i - 1]);
            ok = c.length <= pn * sizeof(mp_limb_t);
            if (ok) {
                rsakit_sec_load_be(key->coefficient[i], pn, c.bytes, c.length);
                ok = less_than(key->coefficient[i], key->prime[i], pn);
            }
        }
    }
    /* Multipliers: products of the primes in Garner order (q, p, r_3, ...). */
    if (ok) {
        mp_limb_t *product = rsakit_sec_scratch_alloc(key->residue_limbs);
        mp_limb_t *next = rsakit_sec_scratch_alloc(key->residue_limbs);
        size_t scratch_limbs = mpn_sec_mul_itch((mp_size_t)key->residue_limbs, (mp_size_t)key->max_plimbs);
        mp_limb_t *tp = rsakit_sec_scratch_alloc(scratch_limbs);
        mpn_copyi(product, key->prime[1], (mp_size_t)key->plimbs[1]);
        size_t length = key->plimbs[1];
        for (size_t step = 0; step < u; step++) {
            size_t i = step == 0 ? 0 : step + 1; /* 0, 2, 3, ..., u-1 */
            if (i >= u) {
                break;
            }
            mpn_copyi(key->multiplier[i], product, (mp_size_t)length);
            size_t pn = key->plimbs[i];
            if (length >= pn) {
                mpn_sec_mul(next, product, (mp_size_t)length, key->prime[i], (mp_size_t)pn, tp);
            } else {
                mpn_sec_mul(next, key->prime[i], (mp_size_t)pn, product, (mp_size_t)length, tp);
            }
            length += pn;
            mpn_copyi(product, next, (mp_size_t)length);
        }
        /* The product of all primes must be n (the caller validated; a shape check here). */
        for (size_t i = key->nn; i < length; i++) {
            ok = ok && product[i] == 0;
        }
        ok = ok && length >= key->nn && mpn_cmp(product, key->n, (mp_size_t)key->nn) == 0;
        rsakit_sec_scratch_free(product, key->residue_limbs);
        rsakit_sec_scratch_free(next, key->residue_limbs);
        rsakit_sec_scratch_free(tp, scratch_limbs);
    }
    if (!ok) {
        rsakit_sec_key_destroy(key);
        return NULL;
    }
    /* Scratch sizes (see rsakit_secret.c for the layout that uses them). */
    size_t nn = key->nn, mp = key->max_plimbs, L = key->residue_limbs;
    size_t itch = (size_t)mpn_sec_mul_itch((mp_size_t)nn, (mp_size_t)nn);
#define RSAKIT_MAX_ITCH(x) do { size_t v_ = (size_t)(x); itch = v_ > itch ? v_ : itch; } while (0)
    RSAKIT_MAX_ITCH(mpn_sec_sqr_itch((mp_size_t)nn));
    RSAKIT_MAX_ITCH(mpn_sec_div_r_itch((mp_size_t)(2 * nn), (mp_size_t)nn));
    RSAKIT_MAX_ITCH(mpn_sec_div_r_itch((mp_size_t)L, (mp_size_t)nn));
    RSAKIT_MAX_ITCH(mpn_sec_powm_itch((mp_size_t)nn, (mp_bitcnt_t)key->ebits, (mp_size_t)nn));
    RSAKIT_MAX_ITCH(mpn_sec_invert_itch((mp_size_t)nn));
    RSAKIT_MAX_ITCH(mpn_sec_div_r_itch((mp_size_t)(nn + 2), (mp_size_t)nn));
    size_t powm = 0;
    for (size_t i = 0; i < u; i++) {
        size_t pn = key->plimbs[i];
        RSAKIT_MAX_ITCH(mpn_sec_div_r_itch((mp_size_t)L, (mp_size_t)pn));
        RSAKIT_MAX_ITCH(mpn_sec_div_r_itch((mp_size_t)(2 * pn), (mp_size_t)pn));
        RSAKIT_MAX_ITCH(mpn_sec_mul_itch((mp_size_t)pn, (mp_size_t)pn));
        RSAKIT_MAX_ITCH(mpn_sec_mul_itch((mp_size_t)L, (mp_size_t)pn));
        RSAKIT_MAX_ITCH(mpn_sec_mul_itch((mp_size_t)pn, (mp_size_t)pn));
        size_t v = (size_t)mpn_sec_powm_itch((mp_size_t)nn, (mp_bitcnt_t)key->pbits[i], (mp_size_t)pn);
        powm = v > powm ? v : powm;
    }
#undef RSAKIT_MAX_ITCH
    key->powm_scratch = powm;
    /* Per lane (see struct lane in rsakit_secret.c): c, c', m' (nn each), two products
     * (2 nn each), the residues (L), four Garner buffers (L + mp each), h (2 mp), then
     * GMP's scratch. */
    key->lane_scratch = 7 * nn + L + 4 * (L + mp) + 2 * mp + itch;
    return key;
}

void rsakit_sec_key_destroy(rsakit_sec_key *key) {
    if (key == NULL) {
        return;
    }
    if (key->kernel_destroy != NULL) {
        key->kernel_destroy(key->kernel_context);
    }
    rsakit_sec_scratch_free(key->memory, key->memory_limbs);
    rsakit_secure_zero(key, sizeof *key);
    free(key);
}

size_t rsakit_sec_key_modulus_bytes(const rsakit_sec_key *key) { return key->k; }
size_t rsakit_sec_key_modulus_limbs(const rsakit_sec_key *key) { return key->nn; }
size_t rsakit_sec_key_prime_count(const rsakit_sec_key *key) { return key->u; }
const mp_limb_t *rsakit_sec_key_modulus(const rsakit_sec_key *key) { return key->n; }

const mp_limb_t *rsakit_sec_key_public_exponent(const rsakit_sec_key *key, size_t *limbs, size_t *bits) {
    if (limbs != NULL) { *limbs = key->en; }
    if (bits != NULL) { *bits = key->ebits; }
    return key->e;
}

size_t rsakit_sec_key_prime_limbs(const rsakit_sec_key *key, size_t i) { return i < key->u ? key->plimbs[i] : 0; }
size_t rsakit_sec_key_prime_bits(const rsakit_sec_key *key, size_t i) { return i < key->u ? key->pbits[i] : 0; }
const mp_limb_t *rsakit_sec_key_prime(const rsakit_sec_key *key, size_t i) { return i < key->u ? key->prime[i] : NULL; }
const mp_limb_t *rsakit_sec_key_prime_exponent(const rsakit_sec_key *key, size_t i) { return i < key->u ? key->exponent[i] : NULL; }
size_t rsakit_sec_key_residue_limbs(const rsakit_sec_key *key) { return key->residue_limbs; }
size_t rsakit_sec_key_residue_offset(const rsakit_sec_key *key, size_t i) { return i < key->u ? key->poffset[i] : 0; }

void rsakit_sec_key_set_kernel(
    rsakit_sec_key *key, rsakit_sec_powm_kernel kernel, void *context, void (*destroy)(void *)) {
    if (key->kernel_destroy != NULL) {
        key->kernel_destroy(key->kernel_context);
    }
    key->kernel = kernel;
    key->check_kernel = NULL;
    key->mul_kernel = NULL;
    key->kernel_context = kernel != NULL ? context : NULL;
    key->kernel_destroy = kernel != NULL ? destroy : NULL;
}

void rsakit_sec_key_set_check_kernel(rsakit_sec_key *key, rsakit_sec_check_kernel kernel) {
    key->check_kernel = kernel;
}

void rsakit_sec_key_set_mul_kernel(rsakit_sec_key *key, rsakit_sec_mul_kernel kernel) {
    key->mul_kernel = kernel;
}

size_t rsakit_sec_blinding_limbs(const rsakit_sec_key *key) { return 2 * key->nn; }
size_t rsakit_sec_blinding_random_bytes(const rsakit_sec_key *key) { return 2 * (key->k + 8); }

void rsakit_sec_key_poison(const rsakit_sec_key *key, int keep_table_limbs) {
    for (size_t i = 0; i < key->u; i++) {
        size_t pn = key->plimbs[i], bytes = pn * sizeof(mp_limb_t);
        if (keep_table_limbs && pn > 3) {
            rsakit_ct_poison(key->prime[i] + 1, (pn - 3) * sizeof(mp_limb_t));
        } else {
            rsakit_ct_poison(key->prime[i], bytes);
        }
        rsakit_ct_poison(key->exponent[i], bytes);
        if (i != 1) {
            rsakit_ct_poison(key->coefficient[i], bytes);
            rsakit_ct_poison(key->multiplier[i], key->multiplier_limbs[i] * sizeof(mp_limb_t));
        }
    }
}
