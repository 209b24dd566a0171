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

/* One limb as 8 big-endian octets at out (and back), whatever the host byte order. */
static void store_limb_be(uint8_t *out, mp_limb_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && GMP_LIMB_BITS == 64
    uint64_t be = __builtin_bswap64((uint64_t)v);
    memcpy(out, &be, 8);
#else
    for (size_t j = 0; j < sizeof(mp_limb_t); j++) {
        out[sizeof(mp_limb_t) - 1 - j] = (uint8_t)(v >> (8 * j));
    }
#endif
}

static mp_limb_t load_limb_be(const uint8_t *in) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && GMP_LIMB_BITS == 64
    uint64_t be;
    memcpy(&be, in, 8);
    return (mp_limb_t)__builtin_bswap64(be);
#else
    mp_limb_t v = 0;
    for (size_t j = 0; j < sizeof(mp_limb_t); j++) {
        v = (v << 8) | in[j];
    }
    return v;
#endif
}

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
    /* Whole limbs from the end of out backwards, then the bytes of a partial top limb. */
    const size_t limb_bytes = sizeof(mp_limb_t);
    const size_t limb_count = mpz_size(x);
    const mp_limb_t *limbs = mpz_limbs_read(x);
    size_t limb = 0;
    for (; limb < limb_count && (limb + 1) * limb_bytes <= out_len; limb++) {
        store_limb_be(out + out_len - (limb + 1) * limb_bytes, limbs[limb]);
    }
    if (limb < limb_count) {
        mp_limb_t value = limbs[limb];
        for (size_t i = limb * limb_bytes; i < out_len; i++) {
            out[out_len - 1 - i] = (uint8_t)(value >> ((i - limb * limb_bytes) * 8));
        }
    }
    return 0;
}

void rsakit_i2osp_secret(uint8_t *out, size_t out_len, mpz_srcptr x) {
    /* Every byte of every limb is visited; only the limb count (public) and out_len decide
       where it goes. Bytes that fall before out[0] are dropped: the caller guarantees they
       are zero (x < 256^out_len). */
    const size_t limb_bytes = sizeof(mp_limb_t);
    const size_t limb_count = mpz_size(x);
    const mp_limb_t *limbs = mpz_limbs_read(x);
    if (out_len > 0) {
        memset(out, 0, out_len);
    }
    for (size_t limb = 0; limb < limb_count; limb++) {
        mp_limb_t value = limbs[limb];
        for (size_t byte = 0; byte < limb_bytes; byte++) {
            size_t position = limb * limb_bytes + byte; /* from the least significant end */
            if (position < out_len) {
                out[out_len - 1 - position] = (uint8_t)(value >> (byte * 8));
            }
        }
    }
}

void rsakit_os2ip(mpz_ptr x, const uint8_t *in, size_t len) {
    if (len == 0) {
        mpz_set_ui(x, 0);
        return;
    }
    /* Limb i holds in[len - 8(i + 1) .. len - 8i); the top limb may be partial. */
    const size_t limb_bytes = sizeof(mp_limb_t);
    const size_t limb_count = (len + limb_bytes - 1) / limb_bytes;
    mp_limb_t *limbs = mpz_limbs_write(x, (mp_size_t)limb_count);
    for (size_t i = 0; i < limb_count; i++) {
        size_t end = len - i * limb_bytes;
        if (end >= limb_bytes) {
            limbs[i] = load_limb_be(in + end - limb_bytes);
        } else {
            mp_limb_t v = 0;
            for (size_t j = 0; j < end; j++) {
                v = (v << 8) | in[j];
            }
            limbs[i] = v;
        }
    }
    mpz_limbs_finish(x, (mp_size_t)limb_count);
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
