#include "rsakit_shims.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

void rsakit_secure_zero(void *p, size_t len) {
    if (p != NULL && len > 0) {
        explicit_bzero(p, len);
    }
}

static void *rsakit_alloc(size_t size) {
    void *p = malloc(size);
    if (p == NULL) {
        abort(); /* GMP itself aborts on allocation failure. */
    }
    return p;
}

static void *rsakit_realloc(void *old, size_t old_size, size_t new_size) {
    /* Never let realloc move a block and leave the old bytes behind. */
    void *p = rsakit_alloc(new_size);
    if (old != NULL) {
        memcpy(p, old, old_size < new_size ? old_size : new_size);
        rsakit_secure_zero(old, old_size);
        free(old);
    }
    return p;
}

static void rsakit_free(void *p, size_t size) {
    if (p != NULL) {
        rsakit_secure_zero(p, size);
        free(p);
    }
}

static pthread_once_t rsakit_allocator_once = PTHREAD_ONCE_INIT;

static void rsakit_install(void) {
    mp_set_memory_functions(rsakit_alloc, rsakit_realloc, rsakit_free);
}

void rsakit_gmp_install_zeroing_allocator(void) {
    pthread_once(&rsakit_allocator_once, rsakit_install);
}

int rsakit_mpz_sgn(mpz_srcptr x) { return mpz_sgn(x); }

int rsakit_mpz_odd_p(mpz_srcptr x) { return mpz_odd_p(x) ? 1 : 0; }

int rsakit_i2osp(uint8_t *out, size_t out_len, mpz_srcptr x) {
    if (out_len > 0) {
        memset(out, 0, out_len);
    }
    if (mpz_sgn(x) < 0) {
        return -1;
    }
    if (mpz_sgn(x) != 0 && (mpz_sizeinbase(x, 2) + 7) / 8 > out_len) {
        return -1;
    }
    const size_t limb_bytes = sizeof(mp_limb_t);
    const size_t limb_count = mpz_size(x);
    const mp_limb_t *limbs = mpz_limbs_read(x);
    for (size_t i = 0; i < out_len; i++) {
        size_t limb = i / limb_bytes;
        size_t shift = (i % limb_bytes) * 8;
        mp_limb_t value = limb < limb_count ? limbs[limb] : 0;
        out[out_len - 1 - i] = (uint8_t)(value >> shift);
    }
    return 0;
}

void rsakit_os2ip(mpz_ptr x, const uint8_t *in, size_t len) {
    if (len == 0) {
        mpz_set_ui(x, 0);
        return;
    }
    mpz_import(x, len, 1, 1, 1, 0, in);
}

void rsakit_mpz_clear_secure(mpz_ptr x) {
    if (x->_mp_d != NULL && x->_mp_alloc > 0) {
        rsakit_secure_zero(x->_mp_d, (size_t)x->_mp_alloc * sizeof(mp_limb_t));
    }
    mpz_clear(x);
}

void rsakit_mpz_powm_sec(mpz_ptr r, mpz_srcptr b, mpz_srcptr e, mpz_srcptr m) {
    mpz_powm_sec(r, b, e, m);
}

long rsakit_getrandom(void *buffer, size_t len) {
    return (long)getrandom(buffer, len, 0);
}
