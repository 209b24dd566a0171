/*
 * rsakit_montgomery.h - public-exponent modular exponentiation with per-modulus
 * Montgomery constants computed once.
 *
 * GMP's mpz_powm recomputes everything per call (the inverse limb, the conversion of the
 * base by a full division) and uses a sliding window that costs extra multiplications for
 * a sparse exponent such as 65537. For the RSA public operation and the re-encryption check
 * the modulus n and the exponent e are fixed per key, so RSAKit keeps, per modulus:
 *
 *   ninv = -n^-1 mod 2^64, and R^2 mod n with R = 2^(64 * limbs(n)),
 *
 * and runs plain left-to-right binary exponentiation with Montgomery products built on
 * GMP's public mpn layer (mpn_mul_n, mpn_sqr, mpn_addmul_1): for e = 65537 that is
 * 16 squarings and 2 multiplications, each followed by one Montgomery reduction.
 *
 * Variable time in the exponent only (it is public). The reduction ends with a branch-free
 * conditional subtraction, but mpn_mul_n / mpn_sqr carry no side-channel promise from GMP,
 * so callers treat the whole routine as variable time ("VarTime").
 */
#ifndef RSAKIT_MONTGOMERY_H
#define RSAKIT_MONTGOMERY_H

#include <stddef.h>
#include <gmp.h>

typedef struct rsakit_mont rsakit_mont;

/* The constants for an odd modulus n > 1, or NULL when n is even or <= 1 (or on allocation
 * failure). The object holds public data only and is read-only after creation: it may be
 * shared by any number of threads. */
rsakit_mont *rsakit_mont_create(mpz_srcptr n);

void rsakit_mont_destroy(rsakit_mont *m);

/* r = b^e mod n for 0 <= b < n and e >= 1 with at most 64 bits (RSA public exponents).
 * Returns 0, or -1 (r untouched) when b or e is out of range: the caller then uses mpz_powm.
 * r may alias b. Scratch space is wiped before it is freed (b may be a secret message). */
int rsakit_mont_powm_vartime(mpz_ptr r, mpz_srcptr b, mpz_srcptr e, const rsakit_mont *m);

#endif
