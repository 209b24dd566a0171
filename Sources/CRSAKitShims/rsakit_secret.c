/* The constant-time private-key operation on GMP's mpn_sec_* layer; see
 * include/rsakit_secret.h. Every loop below runs over lengths fixed by the key's public
 * shape, every branch tests a public value (a length, a count, the public ciphertext's
 * range, a declassified verdict), and every table or array index is public. */
#include "rsakit_secret_internal.h"
#include "rsakit_ct.h"
#include "rsakit_shims.h"

#include <string.h>

/* MARK: - Branch-free helpers */

/* All-ones when x == 0, else 0. */
static inline mp_limb_t mask_is_zero(mp_limb_t x) {
    /* (x | -x) has its top bit set exactly when x != 0. */
    return ((x | (0 - x)) >> (GMP_NUMB_BITS - 1)) - 1;
}

/* All-ones when a == b (n limbs each), else 0. */
static mp_limb_t mask_equal(const mp_limb_t *a, const mp_limb_t *b, size_t n) {
    mp_limb_t diff = 0;
    for (size_t i = 0; i < n; i++) {
        diff |= a[i] ^ b[i];
    }
    return mask_is_zero(diff);
}

/* I2OSP of the nn-limb x into exactly k octets, each ANDed with mask (x < 256^k). */
static void store_be_masked(uint8_t *out, size_t k, const mp_limb_t *x, size_t nn, mp_limb_t mask) {
    const uint8_t byte_mask = (uint8_t)mask;
    for (size_t j = 0; j < k; j++) { /* octet j from the least significant */
        size_t limb = j / sizeof(mp_limb_t);
        mp_limb_t v = limb < nn ? x[limb] : 0;
        out[k - 1 - j] = (uint8_t)(v >> (8 * (j % sizeof(mp_limb_t)))) & byte_mask;
    }
}

/* r = (a * b) mod n for a, b < n (nn limbs): mpn_sec_mul then mpn_sec_div_r. */
static void mul_mod_n(const rsakit_sec_key *key, mp_limb_t *r, const mp_limb_t *a, const mp_limb_t *b,
                      mp_limb_t *product, mp_limb_t *tp) {
    mp_size_t nn = (mp_size_t)key->nn;
    mpn_sec_mul(product, a, nn, b, nn, tp);
    mpn_sec_div_r(product, 2 * nn, key->n, nn, tp);
    mpn_copyi(r, product, nn);
}

/* MARK: - The kernel seam */

int rsakit_sec_crt_powm_gmp(
    void *context, const rsakit_sec_key *key, size_t count,
    const mp_limb_t *const bases[], mp_limb_t *const residues[]) {
    (void)context;
    mp_limb_t *tp = rsakit_sec_scratch_alloc(key->powm_scratch);
    for (size_t j = 0; j < count; j++) {
        for (size_t i = 0; i < key->u; i++) {
            /* mpn_sec_powm reduces the nn-limb base modulo r_i itself (its redcify step
             * is an mpn_sec_div_r), so c' mod r_i is never formed separately. */
            mpn_sec_powm(residues[j] + key->poffset[i], bases[j], (mp_size_t)key->nn,
                         key->exponent[i], (mp_bitcnt_t)key->pbits[i],
                         key->prime[i], (mp_size_t)key->plimbs[i], tp);
        }
    }
    rsakit_sec_scratch_free(tp, key->powm_scratch);
    return 0;
}

void rsakit_sec_crt_powm(
    const rsakit_sec_key *key, size_t count,
    const mp_limb_t *const bases[], mp_limb_t *const residues[]) {
    if (key->kernel != NULL && key->kernel(key->kernel_context, key, count, bases, residues) == 0) {
        return;
    }
    rsakit_sec_crt_powm_gmp(NULL, key, count, bases, residues);
}

/* MARK: - One lane's buffers */

struct lane {
    mp_limb_t *c, *blinded, *root;     /* nn each */
    mp_limb_t *product, *product2;     /* 2 nn each */
    mp_limb_t *residues;               /* L */
    mp_limb_t *m, *reduced, *sum, *padded; /* L + mp each */
    mp_limb_t *h;                      /* 2 mp */
    mp_limb_t *tp;                     /* GMP scratch */
};

static void lane_init(const rsakit_sec_key *key, struct lane *lane, mp_limb_t *memory) {
    size_t nn = key->nn, L = key->residue_limbs, mp = key->max_plimbs;
    lane->c = memory; memory += nn;
    lane->blinded = memory; memory += nn;
    lane->root = memory; memory += nn;
    lane->product = memory; memory += 2 * nn;
    lane->product2 = memory; memory += 2 * nn;
    lane->residues = memory; memory += L;
    lane->m = memory; memory += L + mp;
    lane->reduced = memory; memory += L + mp;
    lane->sum = memory; memory += L + mp;
    lane->padded = memory; memory += L + mp;
    lane->h = memory; memory += 2 * mp;
    lane->tp = memory;
}

/* Garner's recombination (RFC 8017 5.1.2 step 2.b ii-iii) of the lane's residues into
 * root = m' (nn limbs), with
 *     m = m_2;  for i = 1, 3, 4, ..., u (RFC numbering):
 *         h = (m_i - (m mod r_i)) * coefficient_i mod r_i;   m = m + R_i * h
 * where R_i is the product of the primes already combined. m < R_i r_i at every step. */
static void garner(const rsakit_sec_key *key, struct lane *lane) {
    size_t length = key->plimbs[1];
    mpn_copyi(lane->m, lane->residues + key->poffset[1], (mp_size_t)length);
    for (size_t step = 0; step + 1 < key->u; step++) {
        size_t i = step == 0 ? 0 : step + 1;
        mp_size_t pn = (mp_size_t)key->plimbs[i];
        const mp_limb_t *r = key->prime[i];
        /* reduced = m mod r_i (when m has fewer limbs than r_i, m < r_i already). */
        mpn_zero(lane->reduced, pn);
        mpn_copyi(lane->reduced, lane->m, (mp_size_t)length);
        if ((mp_size_t)length >= pn) {
            mpn_sec_div_r(lane->reduced, (mp_size_t)length, r, pn, lane->tp);
        }
        /* h = m_i - reduced, plus r_i when that borrowed: in [0, r_i). */
        mp_limb_t borrow = mpn_sub_n(lane->h, lane->residues + key->poffset[i], lane->reduced, pn);
        mpn_cnd_add_n(borrow, lane->h, lane->h, r, pn);
        /* h = h * coefficient_i mod r_i. */
        mpn_sec_mul(lane->sum, lane->h, pn, key->coefficient[i], pn, lane->tp);
        mpn_sec_div_r(lane->sum, 2 * pn, r, pn, lane->tp);
        mpn_copyi(lane->h, lane->sum, pn);
        /* m = m + R_i * h, over length + pn limbs (no carry out: the sum is < R_i r_i). */
        size_t rn = key->multiplier_limbs[i];
        if ((mp_size_t)rn >= pn) {
            mpn_sec_mul(lane->sum, key->multiplier[i], (mp_size_t)rn, lane->h, pn, lane->tp);
        } else {
            mpn_sec_mul(lane->sum, lane->h, pn, key->multiplier[i], (mp_size_t)rn, lane->tp);
        }
        size_t next = rn + (size_t)pn;
        mpn_zero(lane->padded, (mp_size_t)next);
        mpn_copyi(lane->padded, lane->m, (mp_size_t)length);
        mpn_add_n(lane->m, lane->sum, lane->padded, (mp_size_t)next);
        length = next;
    }
    /* m < n: its limbs from nn on are zero. */
    mpn_copyi(lane->root, lane->m, (mp_size_t)key->nn);
}

int rsakit_sec_crt_recombine(
    const rsakit_sec_key *key, size_t count,
    const mp_limb_t *const residues[], mp_limb_t *const out[]) {
    if (count < 1 || count > RSAKIT_SEC_BATCH) {
        return RSAKIT_SEC_BAD_ARGUMENT;
    }
    mp_limb_t *memory = rsakit_sec_scratch_alloc(key->lane_scratch);
    struct lane lane;
    lane_init(key, &lane, memory);
    for (size_t j = 0; j < count; j++) {
        mpn_copyi(lane.residues, residues[j], (mp_size_t)key->residue_limbs);
        garner(key, &lane);
        mpn_copyi(out[j], lane.root, (mp_size_t)key->nn);
    }
    rsakit_sec_scratch_free(memory, key->lane_scratch);
    return RSAKIT_SEC_OK;
}

/* Load c (k octets) and test 0 <= c < n. c is public (the ciphertext). */
static int load_input(const rsakit_sec_key *key, struct lane *lane, const uint8_t *in, size_t length) {
    if (length != key->k) {
        return RSAKIT_SEC_BAD_ARGUMENT;
    }
    rsakit_sec_load_be(lane->c, key->nn, in, length);
    return mpn_cmp(lane->c, key->n, (mp_size_t)key->nn) < 0 ? RSAKIT_SEC_OK : RSAKIT_SEC_OUT_OF_RANGE;
}

/* The re-encryption check's exponentiations, product = root^e mod n for every active lane:
 * the attached check kernel for all of them at once, else (or when it declines)
 * mpn_sec_powm per lane. */
static void check_powm(const rsakit_sec_key *key, struct lane *lanes, const size_t *active, size_t count) {
    const mp_limb_t *roots[RSAKIT_SEC_BATCH];
    mp_limb_t *products[RSAKIT_SEC_BATCH];
    for (size_t a = 0; a < count; a++) {
        roots[a] = lanes[active[a]].root;
        products[a] = lanes[active[a]].product;
    }
    if (key->check_kernel != NULL && key->check_kernel(key->kernel_context, key, count, roots, products) == 0) {
        return;
    }
    mp_size_t nn = (mp_size_t)key->nn;
    for (size_t a = 0; a < count; a++) {
        struct lane *lane = &lanes[active[a]];
        mpn_sec_powm(lane->product, lane->root, nn, key->e, (mp_bitcnt_t)key->ebits, key->n, nn, lane->tp);
    }
}

/* For every active lane, out(lane) = in(lane) * factor(lane) mod n: the attached product
 * kernel for all of them at once, else (or when it declines) mpn_sec_mul and mpn_sec_div_r
 * per lane. Blinding: c' = c vf; unblinding: m = m' vi. */
enum { LANE_C, LANE_BLINDED, LANE_ROOT };

static mp_limb_t *lane_number(struct lane *lane, int which) {
    return which == LANE_C ? lane->c : which == LANE_BLINDED ? lane->blinded : lane->root;
}

static void mul_lanes(const rsakit_sec_key *key, struct lane *lanes, const size_t *active, size_t count,
                      int out, int in, const mp_limb_t *const pairs[], size_t pair_offset) {
    const mp_limb_t *a[RSAKIT_SEC_BATCH], *b[RSAKIT_SEC_BATCH];
    mp_limb_t *products[RSAKIT_SEC_BATCH];
    for (size_t x = 0; x < count; x++) {
        struct lane *lane = &lanes[active[x]];
        a[x] = lane_number(lane, in);
        b[x] = pairs[active[x]] + pair_offset;
        products[x] = lane_number(lane, out);
    }
    if (key->mul_kernel != NULL && key->mul_kernel(key->kernel_context, key, count, a, b, products) == 0) {
        return;
    }
    for (size_t x = 0; x < count; x++) {
        struct lane *lane = &lanes[active[x]];
        mul_mod_n(key, products[x], a[x], b[x], lane->product2, lane->tp);
    }
}

/* After the exponentiations, Garner's recombination, the check's m'^e and the unblinding:
 * compare, write out masked by the check's verdict, and return the verdict (declassified:
 * a fault is not a function of the input). */
static int finish_lane(const rsakit_sec_key *key, struct lane *lane, uint8_t *out) {
    /* Re-encryption check (Boneh-DeMillo-Lipton): m'^e mod n == c'. */
    mp_limb_t ok = mask_equal(lane->product, lane->blinded, key->nn);
    store_be_masked(out, key->k, lane->root, key->nn, ok);
    int status = (int)(~ok & RSAKIT_SEC_CHECK_FAILED);
    rsakit_ct_declassify(&status, sizeof status);
    return status;
}

/* MARK: - The private operation */

int rsakit_sec_private(
    const rsakit_sec_key *key, uint8_t *out, size_t out_length,
    const uint8_t *in, size_t in_length, const mp_limb_t *pair) {
    int status = RSAKIT_SEC_BAD_ARGUMENT;
    if (out_length == key->k) {
        status = rsakit_sec_private_batch(key, 1, &out, &in, in_length, &pair, &status);
    }
    return status;
}

int rsakit_sec_private_batch(
    const rsakit_sec_key *key, size_t count, uint8_t *const out[],
    const uint8_t *const in[], size_t length, const mp_limb_t *const pairs[], int status[]) {
    if (count < 1 || count > RSAKIT_SEC_BATCH) {
        return RSAKIT_SEC_BAD_ARGUMENT;
    }
    size_t scratch_limbs = count * key->lane_scratch;
    mp_limb_t *memory = rsakit_sec_scratch_alloc(scratch_limbs);
    struct lane lanes[RSAKIT_SEC_BATCH];
    const mp_limb_t *bases[RSAKIT_SEC_BATCH];
    mp_limb_t *residues[RSAKIT_SEC_BATCH];
    size_t active[RSAKIT_SEC_BATCH];
    size_t active_count = 0;
    for (size_t j = 0; j < count; j++) {
        lane_init(key, &lanes[j], memory + j * key->lane_scratch);
        status[j] = load_input(key, &lanes[j], in[j], length);
        if (status[j] != RSAKIT_SEC_OK) {
            if (status[j] == RSAKIT_SEC_OUT_OF_RANGE) {
                memset(out[j], 0, key->k);
            }
            continue;
        }
        bases[active_count] = lanes[j].blinded;
        residues[active_count] = lanes[j].residues;
        active[active_count++] = j;
    }
    if (active_count > 0) {
        /* Blind: c' = c * vf mod n. */
        mul_lanes(key, lanes, active, active_count, LANE_BLINDED, LANE_C, pairs, 0);
        rsakit_sec_crt_powm(key, active_count, bases, residues);
    }
    for (size_t a = 0; a < active_count; a++) {
        garner(key, &lanes[active[a]]);
    }
    if (active_count > 0) {
        check_powm(key, lanes, active, active_count);
        /* Unblind: m = m' * vi mod n (the check compares m'^e with c', both kept). */
        mul_lanes(key, lanes, active, active_count, LANE_ROOT, LANE_ROOT, pairs, key->nn);
    }
    for (size_t a = 0; a < active_count; a++) {
        size_t j = active[a];
        status[j] = finish_lane(key, &lanes[j], out[j]);
    }
    rsakit_sec_scratch_free(memory, scratch_limbs);
    int first = RSAKIT_SEC_OK;
    for (size_t j = 0; j < count; j++) {
        if (first == RSAKIT_SEC_OK) {
            first = status[j];
        }
    }
    return first;
}

int rsakit_sec_crt_unprotected(
    const rsakit_sec_key *key, uint8_t *out, size_t out_length,
    const uint8_t *in, size_t in_length) {
    if (out_length != key->k) {
        return RSAKIT_SEC_BAD_ARGUMENT;
    }
    mp_limb_t *memory = rsakit_sec_scratch_alloc(key->lane_scratch);
    struct lane lane;
    lane_init(key, &lane, memory);
    int status = load_input(key, &lane, in, in_length);
    if (status == RSAKIT_SEC_OK) {
        const mp_limb_t *base = lane.c;
        mp_limb_t *residue = lane.residues;
        rsakit_sec_crt_powm(key, 1, &base, &residue);
        garner(key, &lane);
        store_be_masked(out, key->k, lane.root, key->nn, ~(mp_limb_t)0);
    } else {
        memset(out, 0, out_length);
    }
    rsakit_sec_scratch_free(memory, key->lane_scratch);
    return status;
}

/* MARK: - Blinding pairs */

int rsakit_sec_blinding_create(
    const rsakit_sec_key *key, mp_limb_t *pair, const uint8_t *random, size_t random_length) {
    size_t need = rsakit_sec_blinding_random_bytes(key), half = need / 2;
    if (random_length < need) {
        return RSAKIT_SEC_BAD_ARGUMENT;
    }
    mp_size_t nn = (mp_size_t)key->nn;
    size_t rl = (half + sizeof(mp_limb_t) - 1) / sizeof(mp_limb_t); /* <= nn + 2 */
    size_t itch = (size_t)mpn_sec_div_r_itch((mp_size_t)rl, nn);
    size_t v = (size_t)mpn_sec_div_r_itch(2 * nn, nn);
    itch = v > itch ? v : itch;
    v = (size_t)mpn_sec_mul_itch(nn, nn);
    itch = v > itch ? v : itch;
    v = (size_t)mpn_sec_powm_itch(nn, (mp_bitcnt_t)key->ebits, nn);
    itch = v > itch ? v : itch;
    size_t limbs = 2 * rl + 2 * key->nn + itch;
    mp_limb_t *memory = rsakit_sec_scratch_alloc(limbs);
    mp_limb_t *r = memory, *s = memory + rl, *product = memory + 2 * rl, *tp = product + 2 * key->nn;
    /* r = OS2IP(first half) mod n, s = OS2IP(second half) mod n. */
    rsakit_sec_load_be(r, rl, random, half);
    mpn_sec_div_r(r, (mp_size_t)rl, key->n, nn, tp);
    rsakit_sec_load_be(s, rl, random + half, half);
    mpn_sec_div_r(s, (mp_size_t)rl, key->n, nn, tp);
    /* vf = r^e mod n (mpn_sec_powm: r is secret, e public). */
    mpn_sec_powm(pair, r, nn, key->e, (mp_bitcnt_t)key->ebits, key->n, nn, tp);
    /* vi = r^-1 mod n by a blinded inversion (as BoringSSL's bn_mod_inverse_blinded):
     * t = r s mod n is uniform and independent of r while s stays secret and is used once,
     * so t may be declassified and inverted by GMP's fast variable-time mpz_invert (about
     * 9 us at 2048 bits, where mpn_sec_invert takes about 750 us); then vi = t^-1 s mod n.
     * t and t^-1 reveal nothing of r without s, so GMP's heap copies of them need no wipe. */
    mul_mod_n(key, product, r, s, product, tp);
    rsakit_ct_declassify(product, key->nn * sizeof(mp_limb_t));
    mpz_t t, modulus, inverse;
    mpz_init(inverse);
    int invertible = mpz_invert(inverse, mpz_roinit_n(t, product, nn), mpz_roinit_n(modulus, key->n, nn));
    if (invertible) {
        size_t size = mpz_size(inverse);
        mpn_zero(r, nn); /* r is no longer needed: it takes t^-1 */
        mpn_copyi(r, mpz_limbs_read(inverse), (mp_size_t)size);
        mul_mod_n(key, pair + key->nn, r, s, product, tp);
    }
    mpz_clear(inverse);
    rsakit_sec_scratch_free(memory, limbs);
    return invertible ? RSAKIT_SEC_OK : RSAKIT_SEC_CHECK_FAILED;
}

/* x[j] = x[j]^2 mod n (nn limbs each) for j < count, by mpn_sec_sqr and mpn_sec_div_r. */
static void square_mod_n(const rsakit_sec_key *key, mp_limb_t *const x[], size_t count) {
    mp_size_t nn = (mp_size_t)key->nn;
    size_t itch = (size_t)mpn_sec_sqr_itch(nn);
    size_t v = (size_t)mpn_sec_div_r_itch(2 * nn, nn);
    itch = v > itch ? v : itch;
    size_t limbs = 2 * key->nn + itch;
    mp_limb_t *memory = rsakit_sec_scratch_alloc(limbs);
    mp_limb_t *square = memory, *tp = memory + 2 * key->nn;
    for (size_t j = 0; j < count; j++) {
        mpn_sec_sqr(square, x[j], nn, tp);
        mpn_sec_div_r(square, 2 * nn, key->n, nn, tp);
        mpn_copyi(x[j], square, nn);
    }
    rsakit_sec_scratch_free(memory, limbs);
}

void rsakit_sec_blinding_square_batch(const rsakit_sec_key *key, size_t count, mp_limb_t *const pairs[]) {
    if (count < 1 || count > RSAKIT_SEC_BATCH) {
        return;
    }
    for (size_t half = 0; half < 2; half++) {
        const mp_limb_t *x[RSAKIT_SEC_BATCH];
        mp_limb_t *squares[RSAKIT_SEC_BATCH];
        for (size_t j = 0; j < count; j++) {
            x[j] = pairs[j] + half * key->nn;
            squares[j] = pairs[j] + half * key->nn;
        }
        /* The product kernel reads every input before it writes any output. */
        if (key->mul_kernel != NULL && key->mul_kernel(key->kernel_context, key, count, x, x, squares) == 0) {
            continue;
        }
        square_mod_n(key, squares, count);
    }
}
