/*
 * rsakit_mont_adx.h - constant-time Montgomery modular exponentiation in radix 2^64 on the
 * x86-64 BMI2/ADX instructions (mulx, adcx, adox), for the private-key operation on CPUs
 * without AVX-512 IFMA. The hot loops (product, squaring, reduction, table scan) are
 * assembly (rsakit_mont_adx_x86_64.S), so their speed does not depend on the build's
 * optimisation level; on other architectures every entry point is a stub that reports the
 * kernel unsupported (-1 / NULL / 0).
 *
 * Moduli: odd, > 1, 1 to 64 64-bit limbs (up to 4096-bit primes, that is every prime of a
 * 1024- to 8192-bit two-prime key). Internally a modulus of L limbs is held in
 * W = L rounded up to a multiple of 4 limbs (zero limbs on top), R = 2^(64 W); the limb
 * counts of the common primes (16, 24, 32) need no padding.
 *
 * Numbers are little-endian arrays of 64-bit limbs (GMP's order), limbs(m) long unless
 * stated. Every function that takes a secret (base, exponent, modulus) is constant-time in
 * it: no branch, memory index or loop count depends on it; loop counts depend only on the
 * public limb counts. The one exception, named as such, is the public-exponent powm, which
 * branches on the (public) exponent's bits.
 *
 * Arithmetic: almost-Montgomery products (inputs and outputs below R, not necessarily below
 * n), each ending with a subtraction of n masked by its carry; results leave through a
 * product by 1 (which gives a value <= n) and a masked subtraction, so every output is
 * fully reduced (< n).
 *
 * Secrets in scratch memory (tables, products) live on the stack of the call and are
 * zeroed before it returns; a modulus context holds n, -n^-1 mod 2^64, R mod n and
 * R^2 mod n (secret when n is a prime) and is zeroed by destroy. Contexts are read-only
 * after creation and may be shared by threads.
 */
#ifndef RSAKIT_MONT_ADX_H
#define RSAKIT_MONT_ADX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest modulus, in 64-bit limbs (a 4096-bit prime). */
#define RSAKIT_ADX_MAX_LIMBS 64
/* Largest exponent, in 64-bit limbs. */
#define RSAKIT_ADX_MAX_EXP_LIMBS 128

typedef struct rsakit_adx_modulus rsakit_adx_modulus;

/* 1 when this CPU runs the kernel: CPUID leaf 7 (subleaf 0) reports BMI2 (EBX bit 8) and
 * ADX (EBX bit 19). mulx/adcx/adox need no OS-saved state, so no XGETBV check. Always 0
 * off x86-64. Detected once per process; thread-safe. */
int rsakit_adx_cpu_supported(void);

/* Per-modulus constants for n given as `limbs` 64-bit limbs (1 <= limbs <= 64), computed in
 * constant time: -n^-1 mod 2^64 by a fixed number of Newton steps, R mod n by
 * 64 (W - limbs + 1) masked doublings of 2^(64 (limbs - 1)), R^2 mod n from it by W / 4 more
 * doublings and 8 Montgomery squarings (about 5 us for 16 limbs, 36 us for 64, optimised).
 * n MUST be odd and > 1 with n[limbs - 1] != 0 (it is not examined, since it may be a secret
 * prime: other values give wrong results, not an error). Returns NULL for a limb count out
 * of range, on a CPU without BMI2/ADX, off x86-64, or on allocation failure. */
rsakit_adx_modulus *rsakit_adx_modulus_create(const uint64_t *n, size_t limbs);

/* Zero and free (NULL is ignored). */
void rsakit_adx_modulus_destroy(rsakit_adx_modulus *m);

/* The limb count given at creation: the size of every base, factor and result. 0 for NULL. */
size_t rsakit_adx_modulus_limbs(const rsakit_adx_modulus *m);

/* r = base^exp mod n. base and r: limbs(m) limbs; base may be any value below
 * 2^(64 limbs(m)) (it need not be below n). exp: exp_limbs limbs (1 ... 128), all
 * 64 exp_limbs bits scanned by fixed 5-bit windows (the caller pads a secret exponent to a
 * public length). Table of 32 entries read by a masked scan of every entry. r may alias
 * base. Constant-time in base, exp and n. Cost for L = W limbs and exp_limbs = L:
 * 64 L squarings and about 13 L products. Returns 0, or -1 (r zeroed when not NULL) for a
 * NULL argument, exp_limbs out of range or a CPU without BMI2/ADX (r zeroed only when m and
 * r are not NULL: its length is limbs(m)). */
int rsakit_adx_powm(const rsakit_adx_modulus *m, uint64_t *r, const uint64_t *base,
                    const uint64_t *exp, size_t exp_limbs);

/* The two exponentiations of one CRT operation: r0 = base0^exp0 mod m0 and
 * r1 = base1^exp1 mod m1, each with the contract of rsakit_adx_powm (both exponents
 * exp_limbs limbs; the two moduli may differ in size). It runs them one after the other:
 * issuing them in lockstep measured slower (the products are throughput-bound), so the
 * function is the engine's one call per CRT operation, free to change inside. Returns 0,
 * or -1 (both results zeroed where m and r are not NULL) as rsakit_adx_powm. */
int rsakit_adx_powm2(size_t exp_limbs,
                     const rsakit_adx_modulus *m0, uint64_t *r0, const uint64_t *base0, const uint64_t *exp0,
                     const rsakit_adx_modulus *m1, uint64_t *r1, const uint64_t *base1, const uint64_t *exp1);

/* r = base^e mod n for a PUBLIC exponent e (the re-encryption check of the private
 * operation): e has e_limbs limbs (1 ... 128) and its top set bit at ebits - 1
 * (1 <= ebits <= 64 e_limbs; bits above are ignored). Left-to-right square-and-multiply that
 * branches on e's bits, so its time depends on e; constant-time in base and n. 16 squarings
 * and 1 product for e = 65537. base any value below 2^(64 limbs(m)); r fully reduced; r may
 * alias base. Returns 0, or -1 (r zeroed when not NULL) for a bad argument or a CPU without
 * BMI2/ADX. */
int rsakit_adx_powm_public_exponent(const rsakit_adx_modulus *m, uint64_t *r, const uint64_t *base,
                                    const uint64_t *e, size_t e_limbs, size_t ebits);

/* r = a b mod n (blinding and unblinding): a, b, r limbs(m) limbs, a and b any values
 * below 2^(64 limbs(m)); r fully reduced and may alias a or b. Four almost-Montgomery
 * products and a masked subtraction: constant-time in a, b and n. Returns 0, or -1
 * (r zeroed when not NULL) for a NULL argument or a CPU without BMI2/ADX. */
int rsakit_adx_mulmod(const rsakit_adx_modulus *m, uint64_t *r, const uint64_t *a, const uint64_t *b);

/* The kernel's known-answer test now (not cached): exponentiations, products and the
 * public-exponent powm at 6, 9, 16, 24 and 32 limbs on fixed inputs (from a xorshift
 * stream), their results folded into one 64-bit digest compared with a value computed
 * independently (Python's pow). About 0.4 ms. Returns 0 when it matches, -1 when it does
 * not, or on a CPU without BMI2/ADX, or off x86-64. */
int rsakit_adx_known_answer_test(void);

/* 1 when the engine may use this kernel: rsakit_adx_cpu_supported() and
 * rsakit_adx_known_answer_test() passed. Decided once per process at first call;
 * thread-safe. */
int rsakit_adx_usable(void);

/* Tests only: take the kernel as supported when the kernel's /proc/cpuinfo lists bmi2 and
 * adx, whatever CPUID says. valgrind 3.19 hides ADX from CPUID but executes adcx/adox, so
 * its constant-time harness needs this to run the kernel at all. Returns 1 when the kernel
 * is now taken as supported, 0 otherwise (nothing changed). Not for production callers. */
int rsakit_adx_assume_cpu_for_tests(void);

#ifdef __cplusplus
}
#endif

#endif
