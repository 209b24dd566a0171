/*
 * rsakit_secret.h - the constant-time RSA private-key operation (RFC 8017 section 5.1.2,
 * CRT form over two or more primes) on GMP's side-channel-silent mpn layer, as Nettle's
 * rsa-sec-compute-root.c does it.
 *
 * Every step that touches a secret uses only functions GMP documents as side-channel
 * silent: mpn_sec_mul, mpn_sec_sqr, mpn_sec_div_r, mpn_sec_powm, mpn_sec_invert,
 * mpn_cnd_add_n, mpn_cnd_sub_n, mpn_add_n, mpn_sub_n, mpn_copyi, mpn_zero, on limb arrays
 * whose lengths depend only on the key's public shape (the limb counts of n and of each
 * prime). No branch, memory index or loop count of ours depends on a secret. Scratch space
 * is sized by the GMP _itch functions, allocated per call and zeroed before it is freed.
 *
 * The private operation, per input block c (0 <= c < n, k big-endian octets):
 *
 *     c' = c * vf mod n                         blind    ((vf, vi) = (r^e, r^-1) mod n)
 *     m_i = (c' mod r_i)^(d_i) mod r_i           for every prime r_i   (THE KERNEL SEAM)
 *     m' = Garner(m_1, ..., m_u)                 RFC 8017 5.1.2 step 2.b (ii)-(iii)
 *     ok = (m'^e mod n == c')                   re-encryption check (fault attacks)
 *     m  = m' * vi mod n                        unblind
 *     out = ok ? I2OSP(m, k) : 0...0            masked, then ok is returned
 *
 * The kernel seam: the u exponentiations modulo the primes go through ONE function,
 * rsakit_sec_crt_powm(), for 1 to RSAKIT_SEC_BATCH inputs of one key. Its portable
 * reference is rsakit_sec_crt_powm_gmp() (mpn_sec_powm). A vector kernel (the
 * AVX-512 IFMA Montgomery code) attaches itself to a key with rsakit_sec_key_set_kernel()
 * and then receives every call; it may decline a call (return nonzero) for a public reason
 * (an unsupported prime size), and the GMP reference runs instead.
 *
 * Threads: a key is read-only after creation (and after set_kernel, which must happen
 * before the key is shared). Every other function may be called from any number of
 * threads at once on one key. Blinding pairs belong to the caller, who serialises access.
 *
 * Limb arrays are little-endian arrays of mp_limb_t (GMP's order). "nn" below is
 * rsakit_sec_key_modulus_limbs(key).
 */
#ifndef RSAKIT_SECRET_H
#define RSAKIT_SECRET_H

#include <stddef.h>
#include <stdint.h>
#include <gmp.h>

/* Most primes a key may have (OpenSSL's RSA_MAX_PRIME_NUM is 5). */
#define RSAKIT_SEC_MAX_PRIMES 16
/* Most inputs one batch call takes (the multi-buffer kernel's lane count). */
#define RSAKIT_SEC_BATCH 8

/* Status codes. */
#define RSAKIT_SEC_OK 0
#define RSAKIT_SEC_OUT_OF_RANGE 1   /* c >= n (public: c is the ciphertext) */
#define RSAKIT_SEC_CHECK_FAILED 2   /* the re-encryption check failed: a fault */
#define RSAKIT_SEC_BAD_ARGUMENT 3   /* a length or count outside what the key takes */

/* One big-endian octet string (leading zeros allowed). */
typedef struct rsakit_sec_octets {
    const uint8_t *bytes;
    size_t length;
} rsakit_sec_octets;

typedef struct rsakit_sec_key rsakit_sec_key;

/* Create the constant-time form of a validated key (validation is the caller's job: this
 * only checks shapes). primes[0] = p, primes[1] = q, primes[2..] = r_3 ... r_u (RFC 8017
 * order); exponents[i] = d_i = d mod (r_i - 1) (dP, dQ, then the otherPrimeInfos
 * exponents); coefficients[0] = qInv = q^-1 mod p, coefficients[j] for j >= 1 = t_(j+2) =
 * (r_1 ... r_(j+1))^-1 mod r_(j+2) (the otherPrimeInfos coefficients): prime_count - 1 of
 * them. Returns NULL when prime_count is outside 2...RSAKIT_SEC_MAX_PRIMES, a prime is
 * even or < 3, n is even, a component does not fit below its modulus, or memory runs
 * out. All secret limbs live in one allocation zeroed by rsakit_sec_key_destroy. */
rsakit_sec_key *rsakit_sec_key_create(
    rsakit_sec_octets n, rsakit_sec_octets e, size_t prime_count,
    const rsakit_sec_octets *primes, const rsakit_sec_octets *exponents,
    const rsakit_sec_octets *coefficients);

/* Zero every limb of the key (and destroy an attached kernel's context), then free it. */
void rsakit_sec_key_destroy(rsakit_sec_key *key);

/* Public shape of the key. */
size_t rsakit_sec_key_modulus_bytes(const rsakit_sec_key *key);   /* k */
size_t rsakit_sec_key_modulus_limbs(const rsakit_sec_key *key);   /* nn */
size_t rsakit_sec_key_prime_count(const rsakit_sec_key *key);     /* u */
const mp_limb_t *rsakit_sec_key_modulus(const rsakit_sec_key *key); /* n, nn limbs */
const mp_limb_t *rsakit_sec_key_public_exponent(const rsakit_sec_key *key, size_t *limbs, size_t *bits);

/* Prime i (0-based, RFC order): its limb count (top limb non-zero), bit count, and the
 * limbs of r_i and of d_i (d_i zero-padded to the same limb count). Secret data: a kernel
 * reads them, nobody copies them out of secret memory. */
size_t rsakit_sec_key_prime_limbs(const rsakit_sec_key *key, size_t i);
size_t rsakit_sec_key_prime_bits(const rsakit_sec_key *key, size_t i);
const mp_limb_t *rsakit_sec_key_prime(const rsakit_sec_key *key, size_t i);
const mp_limb_t *rsakit_sec_key_prime_exponent(const rsakit_sec_key *key, size_t i);

/* The residue layout of the kernel seam: residues of one input are stored one after the
 * other, prime i at offset rsakit_sec_key_residue_offset(key, i), with
 * rsakit_sec_key_prime_limbs(key, i) limbs; rsakit_sec_key_residue_limbs(key) in total. */
size_t rsakit_sec_key_residue_limbs(const rsakit_sec_key *key);
size_t rsakit_sec_key_residue_offset(const rsakit_sec_key *key, size_t i);

/* MARK: - The kernel seam */

/* for j < count, i < u:  residues[j][offset(i) ..] = (bases[j] mod r_i)^(d_i) mod r_i,
 * each fully reduced (< r_i). bases[j]: nn limbs, < n, secret (blinded). count is 1 ...
 * RSAKIT_SEC_BATCH. Must be constant-time in bases and in the key's secrets. Returns 0
 * when done, nonzero to decline (for a public reason only); residues are then ignored. */
typedef int (*rsakit_sec_powm_kernel)(
    void *context, const rsakit_sec_key *key, size_t count,
    const mp_limb_t *const bases[], mp_limb_t *const residues[]);

/* Attach a kernel to a key before the key is shared between threads (replacing any
 * earlier one, whose destroy is called). destroy(context) runs in rsakit_sec_key_destroy
 * (it should zero any secret precomputation). Pass kernel = NULL to detach. */
void rsakit_sec_key_set_kernel(
    rsakit_sec_key *key, rsakit_sec_powm_kernel kernel, void *context,
    void (*destroy)(void *context));

/* The re-encryption check's exponentiation: for j < count, products[j] (nn
 * limbs) = roots[j]^e mod n, fully reduced; roots[j] < n, secret; e and n public. Must be
 * constant-time in roots. Returns 0 when done, nonzero to decline (mpn_sec_powm then runs
 * for every root). */
typedef int (*rsakit_sec_check_kernel)(
    void *context, const rsakit_sec_key *key, size_t count,
    const mp_limb_t *const roots[], mp_limb_t *const products[]);

/* Attach the check's kernel, with the context of the kernel attached by
 * rsakit_sec_key_set_kernel (so call this after it: set_kernel detaches any check kernel).
 * NULL detaches. Same thread rule as set_kernel. */
void rsakit_sec_key_set_check_kernel(rsakit_sec_key *key, rsakit_sec_check_kernel kernel);

/* Blinding, unblinding and the pairs' squarings: for j < count, products[j]
 * (nn limbs) = a[j] b[j] mod n, fully reduced; a[j], b[j] < n, secret. products[j] may
 * alias a[j] or b[j], and a[j] may be b[j] (a squaring): every input is read before any
 * product is written. Must be constant-time in a and b. Returns 0 when done, nonzero to
 * decline (for a public reason only, such as a count too small to pay for the kernel's
 * conversions): each product is then formed by mpn_sec_mul (or mpn_sec_sqr) and
 * mpn_sec_div_r. */
typedef int (*rsakit_sec_mul_kernel)(
    void *context, const rsakit_sec_key *key, size_t count,
    const mp_limb_t *const a[], const mp_limb_t *const b[], mp_limb_t *const products[]);

/* Attach the blinding products' kernel, with the context of the kernel attached by
 * rsakit_sec_key_set_kernel (call it after that, which detaches it). NULL detaches. Same
 * thread rule as set_kernel. */
void rsakit_sec_key_set_mul_kernel(rsakit_sec_key *key, rsakit_sec_mul_kernel kernel);

/* Garner's recombination (RFC 8017 5.1.2 step 2.b ii-iii), for kernels that work prime by
 * prime: for j < count, out[j] (nn limbs) = the x < n with x = residues[j][offset(i) ..] mod
 * r_i for every prime i. residues[j]: rsakit_sec_key_residue_limbs(key) limbs in the
 * residue layout, each residue fully reduced (< r_i); secret. Constant-time in the residues
 * and the key (mpn_sec_mul and mpn_sec_div_r: the private operation's own recombination).
 * Returns RSAKIT_SEC_OK, or RSAKIT_SEC_BAD_ARGUMENT for
 * a count outside 1 ... RSAKIT_SEC_BATCH (nothing written). */
int rsakit_sec_crt_recombine(
    const rsakit_sec_key *key, size_t count,
    const mp_limb_t *const residues[], mp_limb_t *const out[]);

/* The seam itself: the attached kernel, else (or when it declines) the GMP reference. */
void rsakit_sec_crt_powm(
    const rsakit_sec_key *key, size_t count,
    const mp_limb_t *const bases[], mp_limb_t *const residues[]);

/* The portable reference: mpn_sec_powm per prime and input. Always succeeds (returns 0);
 * has the kernel signature (context ignored) so that kernels and tests can call it. */
int rsakit_sec_crt_powm_gmp(
    void *context, const rsakit_sec_key *key, size_t count,
    const mp_limb_t *const bases[], mp_limb_t *const residues[]);

/* MARK: - Blinding pairs */

/* A pair (vf, vi) = (r^e mod n, r^-1 mod n) occupies 2 * nn limbs: vf, then vi. */
size_t rsakit_sec_blinding_limbs(const rsakit_sec_key *key);
/* Random octets rsakit_sec_blinding_create needs: 2 (k + 8), two halves of k + 8 (r and the
 * inversion's blind s, each OS2IP(half) mod n, bias below 2^-64). */
size_t rsakit_sec_blinding_random_bytes(const rsakit_sec_key *key);

/* A fresh pair from random octets (from the OS generator): r = first half mod n,
 * vf = r^e mod n (mpn_sec_powm), vi = r^-1 mod n by a blinded inversion: t = r s mod n
 * (s = second half mod n, secret, used once) is declassified and inverted by mpz_invert,
 * then vi = t^-1 s mod n (mpn_sec_mul, mpn_sec_div_r). Returns RSAKIT_SEC_OK,
 * RSAKIT_SEC_BAD_ARGUMENT when random_length is short, or RSAKIT_SEC_CHECK_FAILED when r s
 * has no inverse (r or s is 0 or shares a factor with n; probability about 2^-1000: draw
 * again). Only that verdict and the blinded t are revealed. */
int rsakit_sec_blinding_create(
    const rsakit_sec_key *key, mp_limb_t *pair, const uint8_t *random, size_t random_length);

/* pairs[j] = (vf_j^2, vi_j^2) mod n, again a valid pair (for r_j^2), for count (1 ...
 * RSAKIT_SEC_BATCH; others: no-op) independent pairs: all vf at once and all vi at once on
 * the attached product kernel (the eight-lane kernel takes three or more), else
 * mpn_sec_sqr and mpn_sec_div_r per number. Constant-time. */
void rsakit_sec_blinding_square_batch(const rsakit_sec_key *key, size_t count, mp_limb_t *const pairs[]);

/* MARK: - The private operation */

/* One block: out = I2OSP(c^d mod n, k) for in = c (exactly k octets), blinded with pair
 * (which the caller then replaces, e.g. by rsakit_sec_blinding_square_batch), checked by
 * re-encryption. Returns RSAKIT_SEC_OK; RSAKIT_SEC_OUT_OF_RANGE when c >= n (out zeroed);
 * RSAKIT_SEC_CHECK_FAILED on a fault (out zeroed); RSAKIT_SEC_BAD_ARGUMENT for lengths
 * other than k. out may equal in. The returned verdict is the only value derived from
 * secrets that leaves unmasked (declassified for the valgrind harness, rsakit_ct.h). */
int rsakit_sec_private(
    const rsakit_sec_key *key, uint8_t *out, size_t out_length,
    const uint8_t *in, size_t in_length, const mp_limb_t *pair);

/* count (1 ... RSAKIT_SEC_BATCH) blocks of one key in one call, each with its own pair;
 * the exponentiations of all blocks go to the kernel seam together (one call).
 * status[j] as rsakit_sec_private returns it; returns RSAKIT_SEC_OK when every block
 * succeeded, else the first non-OK status (RSAKIT_SEC_BAD_ARGUMENT for a bad count). */
int rsakit_sec_private_batch(
    const rsakit_sec_key *key, size_t count, uint8_t *const out[],
    const uint8_t *const in[], size_t length, const mp_limb_t *const pairs[], int status[]);

/* The bare CRT exponentiation c^d mod n: no blinding, no check (benchmarks and
 * differential tests only). Returns RSAKIT_SEC_OK, _OUT_OF_RANGE or _BAD_ARGUMENT. */
int rsakit_sec_crt_unprotected(
    const rsakit_sec_key *key, uint8_t *out, size_t out_length,
    const uint8_t *in, size_t in_length);

/* MARK: - The constant-time harness */

/* Mark every secret limb of the key undefined for valgrind's memcheck (rsakit_ct.h): the
 * primes, the exponents d_i, the coefficients and the products of primes. With
 * keep_table_limbs != 0 the lowest limb and the top two limbs of each prime stay defined,
 * as in Nettle's testsuite/rsa-sec-decrypt-test.c: GMP's binvert_limb (mpn_sec_powm) and
 * invert_limb (mpn_sec_div_r) look those limbs up in small tables. No-op outside valgrind. */
void rsakit_sec_key_poison(const rsakit_sec_key *key, int keep_table_limbs);

#endif
