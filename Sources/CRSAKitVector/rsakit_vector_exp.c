/*
 * rsakit_vector_exp.c - the fixed-window exponentiation driver shared by the reference, the
 * kernel and its emulation, and the public entry points: one number (single buffer), two
 * numbers with two moduli in lockstep (p and q of one CRT operation, through the kernel's
 * dual product), eight numbers with one modulus (multi buffer).
 *
 * The driver calls the implementation's product, squaring and table scan through an ops
 * table; everything it does itself runs on public positions (window offsets, digit
 * indices) and masks, never on a branch or index derived from the exponent, the base or
 * the modulus.
 */
#include "rsakit_vector_internal.h"

#include <stdlib.h>
#include <string.h>

/* Bits [pos, pos + width) of the exponent (pos public, width <= RK_WINDOW). */
static uint64_t exp_window(const uint64_t *exp, size_t exp_limbs, size_t pos, unsigned width) {
    size_t w = pos / 64;
    unsigned s = (unsigned)(pos % 64);
    uint64_t v = exp[w] >> s;
    if (s + width > 64 && w + 1 < exp_limbs) {
        v |= exp[w + 1] << (64 - s);
    }
    return v & (((uint64_t)1 << width) - 1);
}

/* One exponentiation of a lockstep group: its modulus, input, output and exponent, and its
 * part of the driver's scratch. */
typedef struct rk_job {
    const rsakit_vec_modulus *m;
    uint64_t *out;
    const uint64_t *base;
    const uint64_t *exp;
    uint64_t *table; /* 2^window entries of W words */
    uint64_t *acc;
    uint64_t *t;
} rk_job;

/* The buffers a product names, per job. */
enum { B_TABLE, B_ACC, B_T, B_RR, B_ONE, B_OUT, B_BASE };

static uint64_t *job_buffer(const rk_job *j, int lanes8, int which, size_t entry, size_t W) {
    switch (which) {
    case B_TABLE: return j->table + entry * W;
    case B_ACC: return j->acc;
    case B_T: return j->t;
    case B_RR: return (uint64_t *)(lanes8 ? j->m->rr8 : j->m->rr1);
    case B_ONE: return (uint64_t *)(lanes8 ? j->m->one8 : j->m->one1);
    case B_OUT: return j->out;
    default: return (uint64_t *)j->base;
    }
}

typedef struct rk_operand {
    int which;
    size_t entry;
} rk_operand;

#define OP(w) ((rk_operand){(w), 0})
#define ENTRY(i) ((rk_operand){B_TABLE, (i)})

/* r = a b / R for every job of the group: two jobs through the dual product, one through
 * the product or, when a and b are one buffer, the squaring. Which buffers are used is
 * public; only their contents are secret. */
static void group_product(const rk_ops *ops, int lanes8, const rk_job *jobs, size_t count, size_t W,
                          rk_operand r, rk_operand a, rk_operand b) {
    uint64_t *rp[2], *ap[2], *bp[2];
    for (size_t j = 0; j < count; j++) {
        rp[j] = job_buffer(&jobs[j], lanes8, r.which, r.entry, W);
        ap[j] = job_buffer(&jobs[j], lanes8, a.which, a.entry, W);
        bp[j] = job_buffer(&jobs[j], lanes8, b.which, b.entry, W);
    }
    if (count == 2) {
        ops->mul1x2(rp[0], ap[0], bp[0], jobs[0].m, rp[1], ap[1], bp[1], jobs[1].m);
    } else if (ap[0] == bp[0]) {
        (lanes8 ? ops->sqr8 : ops->sqr1)(rp[0], ap[0], jobs[0].m);
    } else {
        (lanes8 ? ops->mul8 : ops->mul1)(rp[0], ap[0], bp[0], jobs[0].m);
    }
}

/* base_j^exp_j mod n_j for one job (either layout) or two single-buffer jobs of one size
 * class in lockstep, every exponent exp_limbs limbs. Returns 0 or -1 (allocation). */
/* Every layout uses 5-bit windows (RK_WINDOW): 32 table entries. For the eight-lane layout
 * the table holds 40 KiB at N = 20 (60 at N = 30), more than a 32 KiB level-1 data cache, and
 * a separate scan of every entry per window, from L2, used to make 4-bit windows 6-8 %
 * faster there. The scan now rides in each window's first four squarings (sqr8_scan),
 * beside their multiply-adds, and 5 bits' fewer products win at every size: an eight-lane
 * exponentiation with 512/1024/1536/2048-bit moduli and exponents on an AVX-512 IFMA Zen 4
 * took 72/489/1,612-1,641/3,842 us against 78/526/1,762-1,797/4,097-4,112 us before (4-bit
 * windows at N = 20 and 30, the scan apart; minimum of 8-15 runs of 10). */
static int powm_group(const rk_ops *ops, int lanes8, rk_job *jobs, size_t count, size_t exp_limbs) {
    const rsakit_vec_modulus *m = jobs[0].m;
    const unsigned window = RK_WINDOW;
    const size_t entries = (size_t)1 << window;
    size_t W = lanes8 ? m->digits * 8 : m->words;
    size_t per_job = (entries + 2) * W;
    size_t bytes = count * per_job * sizeof(uint64_t);
    uint64_t *scratch = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (scratch == NULL) {
        return -1;
    }
    memset(scratch, 0, bytes);
    for (size_t j = 0; j < count; j++) {
        jobs[j].table = scratch + j * per_job;
        jobs[j].acc = jobs[j].table + entries * W;
        jobs[j].t = jobs[j].acc + W;
    }

    /* table[i] = base^i R mod n (almost reduced). */
    group_product(ops, lanes8, jobs, count, W, ENTRY(0), OP(B_RR), OP(B_ONE));
    group_product(ops, lanes8, jobs, count, W, ENTRY(1), OP(B_BASE), OP(B_RR));
    for (size_t i = 2; i < entries; i++) {
        if (i % 2 == 0) {
            group_product(ops, lanes8, jobs, count, W, ENTRY(i), ENTRY(i / 2), ENTRY(i / 2));
        } else {
            group_product(ops, lanes8, jobs, count, W, ENTRY(i), ENTRY(i - 1), ENTRY(1));
        }
    }

    size_t bits = 64 * exp_limbs;
    size_t windows = (bits + window - 1) / window;
    size_t top_pos = window * (windows - 1);
    for (size_t j = 0; j < count; j++) {
        ops->select(jobs[j].acc, jobs[j].table, entries, W,
                    exp_window(jobs[j].exp, exp_limbs, top_pos, (unsigned)(bits - top_pos)));
    }
    /* An eight-lane window: the scan of its 32 entries rides in its first four squarings
     * (sqr8_scan, a quarter each); single-buffer windows (tables of 4-10 KiB): the squarings,
     * then the scan. */
    const int fused = lanes8 && count == 1;
    for (size_t win = windows - 1; win-- > 0;) {
        if (fused) {
            uint64_t index = exp_window(jobs[0].exp, exp_limbs, window * win, window);
            for (unsigned s = 0; s < window; s++) {
                if (s < 4) {
                    ops->sqr8_scan(jobs[0].acc, jobs[0].acc, m, jobs[0].t, jobs[0].table, index, s);
                } else {
                    ops->sqr8(jobs[0].acc, jobs[0].acc, m);
                }
            }
        } else {
            for (unsigned s = 0; s < window; s++) {
                group_product(ops, lanes8, jobs, count, W, OP(B_ACC), OP(B_ACC), OP(B_ACC));
            }
            for (size_t j = 0; j < count; j++) {
                ops->select(jobs[j].t, jobs[j].table, entries, W, exp_window(jobs[j].exp, exp_limbs, window * win, window));
            }
        }
        group_product(ops, lanes8, jobs, count, W, OP(B_ACC), OP(B_ACC), OP(B_T));
    }
    /* Leave the Montgomery domain: acc / R mod n lies in [0, n]; subtract n once if needed. */
    group_product(ops, lanes8, jobs, count, W, OP(B_OUT), OP(B_ACC), OP(B_ONE));
    for (size_t j = 0; j < count; j++) {
        if (lanes8) {
            for (size_t l = 0; l < 8; l++) {
                rk_final_subtract(jobs[j].out + l, jobs[j].m->n8 + l, m->digits, 8);
            }
        } else {
            rk_final_subtract(jobs[j].out, jobs[j].m->n1, m->digits, 1);
        }
    }
    rk_zero(scratch, bytes);
    free(scratch);
    return 0;
}

/* base^e mod n for a public exponent e (ebits bits, ebits >= 1) and one job: left-to-right
 * square-and-multiply on e's bits, which it branches on (e is public: RSA's re-encryption
 * check); constant-time in the base and the modulus. ebits - 1 squarings and one product
 * per set bit below the top, plus the conversions in and out of the Montgomery domain. */
static int powm_public(const rk_ops *ops, int lanes8, rk_job *job, size_t ebits) {
    const rsakit_vec_modulus *m = job->m;
    size_t W = lanes8 ? m->digits * 8 : m->words;
    size_t bytes = 4 * W * sizeof(uint64_t);
    uint64_t *scratch = aligned_alloc(64, bytes);
    if (scratch == NULL) {
        return -1;
    }
    memset(scratch, 0, bytes);
    job->table = scratch; /* entry 1: base R mod n */
    job->acc = scratch + 2 * W;
    job->t = scratch + 3 * W;
    group_product(ops, lanes8, job, 1, W, ENTRY(1), OP(B_BASE), OP(B_RR));
    memcpy(job->acc, job->table + W, W * sizeof(uint64_t));
    for (size_t bit = ebits - 1; bit-- > 0;) {
        group_product(ops, lanes8, job, 1, W, OP(B_ACC), OP(B_ACC), OP(B_ACC));
        if ((job->exp[bit / 64] >> (bit % 64)) & 1) { /* public: e's bits */
            group_product(ops, lanes8, job, 1, W, OP(B_ACC), OP(B_ACC), ENTRY(1));
        }
    }
    group_product(ops, lanes8, job, 1, W, OP(B_OUT), OP(B_ACC), OP(B_ONE));
    if (lanes8) {
        for (size_t l = 0; l < 8; l++) {
            rk_final_subtract(job->out + l, m->n8 + l, m->digits, 8);
        }
    } else {
        rk_final_subtract(job->out, m->n1, m->digits, 1);
    }
    rk_zero(scratch, bytes);
    free(scratch);
    return 0;
}

const rk_ops *rk_ops_for(rsakit_vec_impl impl) {
    switch (impl) {
    case RSAKIT_VEC_IMPL_REFERENCE:
        return &rk_reference_ops;
    case RSAKIT_VEC_IMPL_IFMA_EMULATED:
        return &rk_emulated_ops;
    case RSAKIT_VEC_IMPL_IFMA:
        return (rk_ifma_compiled && rsakit_vec_cpu_has_ifma()) ? &rk_ifma_ops : NULL;
    }
    return NULL;
}

/* One exponentiation of base (one number, or eight in lanes8) from limbs to limbs:
 * convert to digits, run the fixed-window driver over an exp_limbs exponent or, when
 * public_ebits is nonzero, square-and-multiply over a public exponent of that many bits, and
 * convert back; r is zeroed when anything fails. The entry points below only check their
 * arguments. */
static int powm_limbs(rsakit_vec_impl impl, const rsakit_vec_modulus *m, int lanes8, uint64_t *r,
                      const uint64_t *base, const uint64_t *exp, size_t exp_limbs, size_t public_ebits) {
    size_t count = lanes8 ? 8 : 1;
    const rk_ops *ops = rk_ops_for(impl);
    size_t bytes = 2 * RK_MAX_DIGITS * 8 * sizeof(uint64_t);
    uint64_t *x = ops == NULL ? NULL : aligned_alloc(64, bytes);
    if (x == NULL) {
        memset(r, 0, count * m->limbs * sizeof(uint64_t));
        return -1;
    }
    memset(x, 0, bytes);
    uint64_t *y = x + RK_MAX_DIGITS * 8;
    if (lanes8) {
        for (size_t l = 0; l < 8; l++) {
            rsakit_vec_to_lane(m, x, l, base + l * m->limbs);
        }
    } else {
        rsakit_vec_to_digits(m, x, base);
    }
    rk_job job = {.m = m, .out = y, .base = x, .exp = exp};
    int status = public_ebits != 0 ? powm_public(ops, lanes8, &job, public_ebits)
                                   : powm_group(ops, lanes8, &job, 1, exp_limbs);
    for (size_t l = 0; l < count; l++) {
        if (status != 0) {
            memset(r + l * m->limbs, 0, m->limbs * sizeof(uint64_t));
        } else if (lanes8) {
            rsakit_vec_from_lane(m, r + l * m->limbs, y, l);
        } else {
            rsakit_vec_from_digits(m, r, y);
        }
    }
    rk_zero(x, bytes);
    free(x);
    return status;
}

int rsakit_vec_powm(rsakit_vec_impl impl, const rsakit_vec_modulus *m, uint64_t *r,
                    const uint64_t *base, const uint64_t *exp, size_t exp_limbs) {
    if (exp_limbs == 0 || exp_limbs > 64) {
        memset(r, 0, m->limbs * sizeof(uint64_t));
        return -1;
    }
    return powm_limbs(impl, m, 0, r, base, exp, exp_limbs, 0);
}

int rsakit_vec_powm2(rsakit_vec_impl impl, size_t exp_limbs,
                     const rsakit_vec_modulus *m0, uint64_t *r0, const uint64_t *base0, const uint64_t *exp0,
                     const rsakit_vec_modulus *m1, uint64_t *r1, const uint64_t *base1, const uint64_t *exp1) {
    const rk_ops *ops = rk_ops_for(impl);
    if (ops == NULL || exp_limbs == 0 || exp_limbs > 64 || m0->digits != m1->digits) {
        memset(r0, 0, m0->limbs * sizeof(uint64_t));
        memset(r1, 0, m1->limbs * sizeof(uint64_t));
        return -1;
    }
    _Alignas(64) uint64_t x[2][RK_MAX_WORDS];
    _Alignas(64) uint64_t y[2][RK_MAX_WORDS];
    rsakit_vec_to_digits(m0, x[0], base0);
    rsakit_vec_to_digits(m1, x[1], base1);
    rk_job jobs[2] = {
        {.m = m0, .out = y[0], .base = x[0], .exp = exp0},
        {.m = m1, .out = y[1], .base = x[1], .exp = exp1},
    };
    int status = powm_group(ops, 0, jobs, 2, exp_limbs);
    if (status == 0) {
        rsakit_vec_from_digits(m0, r0, y[0]);
        rsakit_vec_from_digits(m1, r1, y[1]);
    } else {
        memset(r0, 0, m0->limbs * sizeof(uint64_t));
        memset(r1, 0, m1->limbs * sizeof(uint64_t));
    }
    rk_zero(x, sizeof x);
    rk_zero(y, sizeof y);
    return status;
}

int rsakit_vec_powm8(rsakit_vec_impl impl, const rsakit_vec_modulus *m, uint64_t *r,
                     const uint64_t *base, const uint64_t *exp, size_t exp_limbs) {
    if (exp_limbs == 0 || exp_limbs > 64) {
        memset(r, 0, 8 * m->limbs * sizeof(uint64_t));
        return -1;
    }
    return powm_limbs(impl, m, 1, r, base, exp, exp_limbs, 0);
}

int rsakit_vec_powm_public_exponent(rsakit_vec_impl impl, const rsakit_vec_modulus *m, uint64_t *r,
                                    const uint64_t *base, const uint64_t *e, size_t e_limbs, size_t ebits) {
    if (e_limbs == 0 || ebits == 0 || ebits > 64 * e_limbs) {
        memset(r, 0, m->limbs * sizeof(uint64_t));
        return -1;
    }
    return powm_limbs(impl, m, 0, r, base, e, e_limbs, ebits);
}

int rsakit_vec_powm8_public_exponent(rsakit_vec_impl impl, const rsakit_vec_modulus *m, uint64_t *r,
                                     const uint64_t *base, const uint64_t *e, size_t e_limbs, size_t ebits) {
    if (e_limbs == 0 || ebits == 0 || ebits > 64 * e_limbs) {
        memset(r, 0, 8 * m->limbs * sizeof(uint64_t));
        return -1;
    }
    return powm_limbs(impl, m, 1, r, base, e, e_limbs, ebits);
}
