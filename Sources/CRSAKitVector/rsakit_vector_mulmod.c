/*
 * rsakit_vector_mulmod.c - eight modular products a_l b_l mod n in one pass of the
 * multi-buffer kernel (the blinding and unblinding of the eight-lane private
 * path, c' = c vf mod n and m = m' vi mod n, on the vector unit).
 *
 * Two almost-Montgomery products per lane: t = a R^2 / R = a R, then t b / R = a b (both
 * below 2n because R > 4n), and one masked subtraction of n. Constant-time in a, b and n:
 * the work depends on the size class only.
 */
#include "rsakit_vector_internal.h"

#include <stdlib.h>
#include <string.h>

int rsakit_vec_mulmod8(rsakit_vec_impl impl, const rsakit_vec_modulus *m, uint64_t *r,
                       const uint64_t *a, const uint64_t *b) {
    const rk_ops *ops = rk_ops_for(impl);
    size_t W = m->digits * 8;
    size_t bytes = 3 * W * sizeof(uint64_t);
    uint64_t *x = ops == NULL ? NULL : aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (x == NULL) {
        memset(r, 0, 8 * m->limbs * sizeof(uint64_t));
        return -1;
    }
    uint64_t *y = x + W, *t = y + W;
    for (size_t l = 0; l < 8; l++) {
        rsakit_vec_to_lane(m, x, l, a + l * m->limbs);
        rsakit_vec_to_lane(m, y, l, b + l * m->limbs);
    }
    ops->mul8(t, x, m->rr8, m); /* a R */
    ops->mul8(t, t, y, m);      /* a b, below 2n */
    for (size_t l = 0; l < 8; l++) {
        rk_final_subtract(t + l, m->n8 + l, m->digits, 8);
        rsakit_vec_from_lane(m, r + l * m->limbs, t, l);
    }
    rk_zero(x, bytes);
    free(x);
    return 0;
}
