/*
 * rsakit_vector.h - Montgomery modular exponentiation in radix 2^52: an AVX-512
 * IFMA kernel (vpmadd52luq / vpmadd52huq), its portable C reference, and the runtime
 * dispatch between them and GMP. GMP stays the engine for everything variable-time.
 *
 * Moduli: odd, 1 to 32 64-bit limbs (at most 2048 bits). Four size classes, chosen by the
 * public limb count of the modulus: <= 8 limbs (512 bits) -> 10 digits of 52 bits,
 * <= 16 (1024) -> 20, <= 24 (1536) -> 30, <= 32 (2048) -> 40 (R = 2^(52 * digits) > 4n, so
 * almost-Montgomery values stay below 2n).
 *
 * Data layouts (shared by the kernel and the reference):
 *   single buffer: one number = ceil(digits / 8) * 8 uint64 words, digit i in word i
 *                  (pad words zero);
 *   multi buffer:  eight numbers = digits * 8 words, digit i of lane l in word 8 i + l.
 * Callers see only 64-bit limbs (little-endian, GMP's order); the conversions are public
 * for tests.
 *
 * Exponentiation: fixed window of 5 bits (4 for the eight-lane layout of 20 and 30 digits,
 * whose tables then fit the level-1 cache) over exactly 64 * exp_limbs exponent bits (the
 * caller pads the exponent to a public length), a table of 2^window entries read by a
 * masked scan of every entry, real squarings. Constant-time in the base, the exponent and the modulus
 * (a secret prime): no branch, memory index or loop count depends on them; loop counts
 * depend only on the size class and exp_limbs. The outputs are fully reduced (< n).
 *
 * Secrets in scratch memory are zeroed before it is freed; a modulus context holds n,
 * -n^-1 mod 2^52 and R^2 mod n (secret when n is a prime) and is zeroed by destroy.
 * Contexts are read-only after creation and may be shared by threads.
 */
#ifndef RSAKIT_VECTOR_H
#define RSAKIT_VECTOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Lanes of the multi-buffer functions. */
#define RSAKIT_VEC_LANES 8
/* Largest modulus, in 64-bit limbs. */
#define RSAKIT_VEC_MAX_LIMBS 32

/* Which implementation a call uses. */
typedef enum rsakit_vec_impl {
    /* Portable C, scalar 52-bit products through unsigned __int128. Runs everywhere. */
    RSAKIT_VEC_IMPL_REFERENCE = 0,
    /* The AVX-512 IFMA kernel. Calls fail (return -1) unless rsakit_vec_cpu_has_ifma(). */
    RSAKIT_VEC_IMPL_IFMA = 1,
    /* The kernel's own source compiled over a scalar emulation of the eight-lane vector
     * operations (for tests on CPUs without IFMA: it checks the kernel's algorithm, not
     * the mapping of each operation to its instruction). */
    RSAKIT_VEC_IMPL_IFMA_EMULATED = 2
} rsakit_vec_impl;

/* Which private-key exponentiation path the library runs (rsakit_vec_private_path). */
typedef enum rsakit_vec_path {
    RSAKIT_VEC_PATH_GMP_NO_IFMA = 0,         /* CPU or OS lacks AVX-512 F/BW/VL/IFMA/zmm */
    RSAKIT_VEC_PATH_GMP_DISABLED = 1,        /* RSAKIT_DISABLE_IFMA=1 in the environment */
    RSAKIT_VEC_PATH_GMP_SELFTEST_FAILED = 2, /* the kernel failed its known-answer test */
    RSAKIT_VEC_PATH_IFMA = 3,                /* the AVX-512 IFMA kernel */
    RSAKIT_VEC_PATH_GMP_UNOPTIMISED = 4      /* the kernel was compiled without optimisation */
} rsakit_vec_path;

typedef struct rsakit_vec_modulus rsakit_vec_modulus;

/* Per-modulus constants for n given as `limbs` 64-bit limbs (1 <= limbs <= 32), computed
 * once in constant time (R^2 mod n by doublings and Montgomery squarings, -n^-1 mod 2^52 by
 * Newton iteration; about 20 us for 32 limbs).
 * n MUST be odd, > 1, with n[limbs - 1] != 0: n is not examined (it may be a secret
 * prime), so other values give wrong results, not an error. The size class follows the
 * public limb count: <= 8 limbs -> 10 digits, <= 16 -> 20, <= 24 -> 30, <= 32 -> 40. NULL for a limb
 * count out of range or on allocation failure. */
rsakit_vec_modulus *rsakit_vec_modulus_create(const uint64_t *n, size_t limbs);

/* Zero and free (NULL is ignored). */
void rsakit_vec_modulus_destroy(rsakit_vec_modulus *m);

/* The limb count given at creation (the size of every base and result). */
size_t rsakit_vec_modulus_limbs(const rsakit_vec_modulus *m);

/* Radix-2^52 digits of the size class: 10, 20, 30 or 40. */
size_t rsakit_vec_modulus_digits(const rsakit_vec_modulus *m);

/* Words of one single-buffer number: ceil(digits / 8) * 8. */
size_t rsakit_vec_modulus_words(const rsakit_vec_modulus *m);

/* r = base^exp mod n (single buffer). base and r: limbs(m) limbs, base < n (any value
 * below 2^(64 limbs) gives base^exp mod n as long as base < 2^(52 digits)); exp:
 * exp_limbs limbs (1 ... 64), all 64 * exp_limbs bits scanned. r may alias base.
 * Returns 0, or -1 for a bad argument or an implementation this CPU cannot run (r is
 * then zeroed). */
int rsakit_vec_powm(rsakit_vec_impl impl, const rsakit_vec_modulus *m, uint64_t *r,
                    const uint64_t *base, const uint64_t *exp, size_t exp_limbs);

/* Two exponentiations in lockstep, r0 = base0^exp0 mod m0 and r1 = base1^exp1 mod m1 (p and
 * q of one CRT operation), through the kernel's dual single-buffer product: each one's
 * latency is covered by the other's work. m0 and m1 must be of one size class (equal
 * digits); both exponents exp_limbs limbs. Shapes and the rest of the contract as
 * rsakit_vec_powm (bases and results of limbs(m0) and limbs(m1) limbs). Returns 0, or -1
 * (both results zeroed) for a bad argument, size classes that differ, or an implementation
 * this CPU cannot run. */
int rsakit_vec_powm2(rsakit_vec_impl impl, size_t exp_limbs,
                     const rsakit_vec_modulus *m0, uint64_t *r0, const uint64_t *base0, const uint64_t *exp0,
                     const rsakit_vec_modulus *m1, uint64_t *r1, const uint64_t *base1, const uint64_t *exp1);

/* Eight independent exponentiations with one modulus and one exponent, lane l's base at
 * base + l * limbs(m), its result at r + l * limbs(m). Same contract as rsakit_vec_powm. */
int rsakit_vec_powm8(rsakit_vec_impl impl, const rsakit_vec_modulus *m, uint64_t *r,
                     const uint64_t *base, const uint64_t *exp, size_t exp_limbs);

/* r = base^e mod n for a PUBLIC exponent e (RSA's e, for the re-encryption check of the
 * private operation): e_limbs limbs, its top set bit at ebits - 1 (1 <= ebits <= 64 e_limbs).
 * Left-to-right square-and-multiply that branches on e's bits (so its time depends on e,
 * which must be public), constant-time in the base and the modulus: ebits - 1 squarings and
 * one product per set bit below the top (16 and 1 for e = 65537) instead of the fixed
 * window's table and 64-bit scan. base < n; results fully reduced. The 8 version takes and
 * gives eight numbers as rsakit_vec_powm8. Returns 0, or -1 (results zeroed) for a bad
 * argument or an implementation this CPU cannot run. */
int rsakit_vec_powm_public_exponent(rsakit_vec_impl impl, const rsakit_vec_modulus *m, uint64_t *r,
                                    const uint64_t *base, const uint64_t *e, size_t e_limbs, size_t ebits);
int rsakit_vec_powm8_public_exponent(rsakit_vec_impl impl, const rsakit_vec_modulus *m, uint64_t *r,
                                     const uint64_t *base, const uint64_t *e, size_t e_limbs, size_t ebits);

/* Eight modular products with one modulus (blinding and unblinding of the
 * eight-lane private path): r_l = a_l b_l mod n, lane l's numbers at + l * limbs(m) as in
 * rsakit_vec_powm8, a_l and b_l < n, results fully reduced; r may alias a or b. Two
 * almost-Montgomery products (a R^2 / R = a R, then a R b / R) and a masked subtraction:
 * constant-time in a, b and n. Returns 0, or -1 (r zeroed) for an implementation this
 * CPU cannot run or an allocation failure. */
int rsakit_vec_mulmod8(rsakit_vec_impl impl, const rsakit_vec_modulus *m, uint64_t *r,
                       const uint64_t *a, const uint64_t *b);

/* Layout conversions (public for tests): limbs -> single-buffer digits (words(m) words)
 * and back (the value must be < 2^(64 limbs); excess bits are dropped). Lane versions
 * write / read lane `lane` of a multi-buffer array (digits(m) * 8 words). */
void rsakit_vec_to_digits(const rsakit_vec_modulus *m, uint64_t *digits, const uint64_t *limbs);
void rsakit_vec_from_digits(const rsakit_vec_modulus *m, uint64_t *limbs, const uint64_t *digits);
void rsakit_vec_to_lane(const rsakit_vec_modulus *m, uint64_t *digits8, size_t lane, const uint64_t *limbs);
void rsakit_vec_from_lane(const rsakit_vec_modulus *m, uint64_t *limbs, const uint64_t *digits8, size_t lane);

/* 1 when this CPU and OS run the kernel: cpuid reports AVX-512 F, BW, VL, DQ and IFMA and
 * xgetbv shows the OS saving the opmask and zmm state. Detected once. */
int rsakit_vec_cpu_has_ifma(void);

/* The path private-key exponentiations take, decided once per process at first use:
 * RSAKIT_DISABLE_IFMA=1 (any value but "" and "0") first, then the CPU check, then
 * rsakit_vec_known_answer_test of the kernel (a few microseconds). */
rsakit_vec_path rsakit_vec_private_path(void);

/* A one-line human-readable form of rsakit_vec_private_path(). */
const char *rsakit_vec_private_path_description(void);

/* Run the self-test of impl against GMP now (not cached): exponentiations single and
 * multi buffer in each size class compared with mpz_powm (about 12 ms on the IFMA kernel).
 * Returns 0 when it agrees, -1 when it disagrees or cannot run here. */
int rsakit_vec_selftest(rsakit_vec_impl impl);

/* The known-answer test of impl now (not cached): a product and a squaring of each kind
 * (eight lanes, single buffer, dual single buffer) in each size class on fixed inputs, their results folded
 * into a digest compared with the portable reference's. Returns 0 when it matches, -1
 * when it does not or impl cannot run here. */
int rsakit_vec_known_answer_test(rsakit_vec_impl impl);

/* Tests only: the closing normalization of impl's single-buffer products, in place on
 * 64-bit digits (little-endian, digit i in words[i]): over nv zmm vectors, 8 nv digits, when
 * half is 0 (the full-width products), over nv ymm vectors, 4 nv digits, when half is 1 (the
 * dual product at N = 10 and 20); 1 <= nv <= 5. The digits become the radix-2^52 form of
 * their value sum(words[i] 2^(52 i)) mod 2^(52 digits): every digit below 2^52, a carry out
 * of the top digit dropped. Constant-time as the products (no branch on the digits).
 * Returns 0, or -1 (words untouched) for nv out of range, the reference (which has no
 * vectors), or an implementation this CPU cannot run. */
int rsakit_vec_normalize_for_tests(rsakit_vec_impl impl, int half, uint64_t *words, size_t nv);

/* MARK: - The kernel seam of the constant-time private path (rsakit_secret.h) */

struct rsakit_sec_key;

/* Attach impl as the key's exponentiation kernel (rsakit_sec_key_set_kernel, before the
 * key is shared): one call per private operation or batch of up to 8 blocks; 1-2 inputs
 * run single-buffer (p and q in lockstep for two primes of one limb count), 3-8 one
 * multi-buffer call per prime. Also the re-encryption check's m'^e mod n
 * (rsakit_sec_key_set_check_kernel): mod n for n of up to 2048 bits; above that prime by
 * prime, (m' mod r_i)^e mod r_i recombined by rsakit_sec_crt_recombine (the same number).
 * For n of up to 2048 bits, the blinding products of three blocks or more
 * (rsakit_sec_key_set_mul_kernel). Returns 0, or -1 (nothing
 * attached, the GMP path stays) when a prime has more than 2048 bits, impl cannot run on
 * this CPU, or memory runs out. The per-prime constants are zeroed when the key is destroyed. */
int rsakit_vec_sec_attach(struct rsakit_sec_key *key, rsakit_vec_impl impl);

/* Tests only: rsakit_vec_sec_attach with a simulated fault, one bit of the first residue of
 * every call flipped after the exponentiation, so that tests can see the re-encryption check
 * (on the kernel: mod n up to 2048 bits, prime by prime above) refuse the result. */
int rsakit_vec_sec_attach_faulty_for_tests(struct rsakit_sec_key *key, rsakit_vec_impl impl);

#ifdef __cplusplus
}
#endif

#endif
