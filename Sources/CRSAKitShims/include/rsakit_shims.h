/*
 * rsakit_shims.h - the small C layer between RSAKit and GMP.
 *
 * GMP exposes some operations only as macros (mpz_sgn, mpz_odd_p), which Swift
 * cannot call; this header turns them into functions. It also provides the
 * fixed-length integer/octet-string conversions of RFC 8017 section 4 (GMP's own
 * mpz_export drops leading zero bytes), secure zeroing, and a GMP allocator that
 * wipes every block before it is freed or moved.
 *
 * Nothing here allocates secrets outside GMP or keeps state beyond the allocator
 * switch. All functions are prefixed rsakit_.
 */
#ifndef RSAKIT_SHIMS_H
#define RSAKIT_SHIMS_H

#include <stddef.h>
#include <stdint.h>
#include <gmp.h>

/* Install (once, thread-safely) GMP memory functions that zero each block on
 * free and on realloc before releasing it. Idempotent. */
void rsakit_gmp_install_zeroing_allocator(void);

/* Sign of x: -1, 0 or 1 (the mpz_sgn macro). */
int rsakit_mpz_sgn(mpz_srcptr x);

/* 1 when x is odd, else 0 (the mpz_odd_p macro). */
int rsakit_mpz_odd_p(mpz_srcptr x);

/* I2OSP (RFC 8017 section 4.1): write x as exactly out_len big-endian octets,
 * leading zeros included. Returns 0 on success, -1 when x is negative or
 * x >= 256^out_len ("integer too large"); on failure out is zero-filled.
 * Copies whole limbs (byte-swapped), then the bytes of a partial top limb; branches only
 * on the limb count and out_len. */
int rsakit_i2osp(uint8_t *out, size_t out_len, mpz_srcptr x);

/* I2OSP of a secret x >= 0 into exactly out_len big-endian bytes, with no branch or index
   that depends on x's value (only on its limb count, mpz_size, taken as public); unlike
   rsakit_i2osp it does not check that x fits: the caller must know x < 256^out_len. */
void rsakit_i2osp_secret(uint8_t *out, size_t out_len, mpz_srcptr x);

/* OS2IP (RFC 8017 section 4.2): x = the big-endian integer of in[0..len). */
void rsakit_os2ip(mpz_ptr x, const uint8_t *in, size_t len);

/* Zero x's whole limb allocation, then mpz_clear it. */
void rsakit_mpz_clear_secure(mpz_ptr x);

/* Zero len bytes at p in a way the compiler may not remove (explicit_bzero). */
void rsakit_secure_zero(void *p, size_t len);

/* Constant-time exponentiation as GMP documents it (mpz_powm_sec): r = b^e mod m,
 * e > 0, m odd. Wrapped here so the Swift side names one function. */
void rsakit_mpz_powm_sec(mpz_ptr r, mpz_srcptr b, mpz_srcptr e, mpz_srcptr m);

/* getrandom(2) (not exported by Swift's Glibc module): fill up to len bytes from the
 * kernel's CSPRNG, blocking until it is seeded. Returns the byte count or -1 (errno set). */
long rsakit_getrandom(void *buffer, size_t len);

#endif
