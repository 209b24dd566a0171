/*
 * rsakit_anchors.h - reference code on plain GMP for RSAKitBenchmarks. NOT part of RSAKit.
 *
 * The benchmark reports RSAKit's speed as ratios to these anchors, measured in the same
 * process on the same system GMP, so that the overhead of RSAKit's protections (blinding,
 * the re-encryption check, padding) and of Swift shows up as one number that a noisy
 * machine does not move much.
 *
 * - rsakit_anchor_crt: the bare CRT private exponentiation, m = c^d mod n through
 *   m1 = c^dP mod p, m2 = c^dQ mod q with mpz_powm_sec (GMP's constant-time
 *   exponentiation), h = qInv (m1 - m2) mod p, m = m2 + q h. No blinding, no check, no
 *   padding, all integers preallocated and reused.
 * - rsakit_anchor_public: m^e mod n with mpz_powm (variable time; e is public).
 * - rsakit_anchor_keygen: a plain key generator: random odd candidates with the top two
 *   bits set from GMP's Mersenne Twister (gmp_randstate: NOT a cryptographic generator,
 *   acceptable only because this is a speed reference whose keys are thrown away),
 *   gcd(p - 1, e) = 1, mpz_probab_prime_p; then n, d = e^-1 mod lcm(p - 1, q - 1), dP, dQ,
 *   qInv. None of the FIPS 186-5 checks (no sqrt(2) bound, no |p - q| bound, no d bound).
 *
 * Byte strings are big-endian, any length (leading zeros ignored). All functions are
 * prefixed rsakit_anchor_ or rsakit_bench_. Nothing here is thread-safe: one object per thread.
 */
#ifndef RSAKIT_ANCHORS_H
#define RSAKIT_ANCHORS_H

#include <stddef.h>
#include <stdint.h>

typedef struct rsakit_anchor_crt rsakit_anchor_crt;
typedef struct rsakit_anchor_public rsakit_anchor_public;
typedef struct rsakit_anchor_keygen rsakit_anchor_keygen;

/* A CRT exponentiation fixture: key components p, q, dP, dQ, qInv and the input c.
 * Returns NULL when p or q is even or zero (mpz_powm_sec needs an odd modulus). */
rsakit_anchor_crt *rsakit_anchor_crt_create(
    const uint8_t *p, size_t p_len, const uint8_t *q, size_t q_len,
    const uint8_t *dp, size_t dp_len, const uint8_t *dq, size_t dq_len,
    const uint8_t *qinv, size_t qinv_len, const uint8_t *c, size_t c_len);

/* Perform `count` CRT exponentiations of the fixture's input (each one complete). */
void rsakit_anchor_crt_run(rsakit_anchor_crt *a, size_t count);

/* The last result m as exactly out_len big-endian bytes. Returns 0, or -1 when it does not
 * fit (or no operation has run yet). */
int rsakit_anchor_crt_result(const rsakit_anchor_crt *a, uint8_t *out, size_t out_len);

void rsakit_anchor_crt_destroy(rsakit_anchor_crt *a);

/* A public exponentiation fixture: r = m^e mod n with mpz_powm. NULL when n is 0. */
rsakit_anchor_public *rsakit_anchor_public_create(
    const uint8_t *n, size_t n_len, const uint8_t *e, size_t e_len,
    const uint8_t *m, size_t m_len);

/* Perform `count` exponentiations. */
void rsakit_anchor_public_run(rsakit_anchor_public *a, size_t count);

/* The last result as exactly out_len big-endian bytes: 0, or -1 (does not fit / none yet). */
int rsakit_anchor_public_result(const rsakit_anchor_public *a, uint8_t *out, size_t out_len);

void rsakit_anchor_public_destroy(rsakit_anchor_public *a);

/* A plain GMP key generator seeded with `seed` (reference only, see above). */
rsakit_anchor_keygen *rsakit_anchor_keygen_create(uint64_t seed);

/* Generate one key with an n of exactly `bits` bits (even, >= 64) and public exponent e
 * (odd, >= 3), calling mpz_probab_prime_p(candidate, reps) on candidates.
 * Returns 0, or -1 for bad arguments. The key stays inside the generator (see below). */
int rsakit_anchor_keygen_run(rsakit_anchor_keygen *g, unsigned bits, unsigned long e, int reps);

/* Candidates drawn for the last key (both primes together). */
uint64_t rsakit_anchor_keygen_last_candidates(const rsakit_anchor_keygen *g);

/* Bit length of the last n (0 before the first key). */
size_t rsakit_anchor_keygen_last_modulus_bits(const rsakit_anchor_keygen *g);

/* 1 when the last key satisfies e d = 1 mod lcm(p - 1, q - 1), dP = d mod (p - 1),
 * dQ = d mod (q - 1), q qInv = 1 mod p and p q = n; else 0. A sanity check, not timed. */
int rsakit_anchor_keygen_last_key_consistent(const rsakit_anchor_keygen *g);

void rsakit_anchor_keygen_destroy(rsakit_anchor_keygen *g);

/* The GMP version string the process runs on (gmp_version). */
const char *rsakit_bench_gmp_version(void);

/* Callgrind client requests (no-ops outside valgrind, and when valgrind's headers were
 * absent at build time): zero the counters and start instrumenting; stop and dump. */
void rsakit_bench_callgrind_start(void);
void rsakit_bench_callgrind_stop(void);

/* 1 when the callgrind client requests were compiled in, else 0. */
int rsakit_bench_callgrind_available(void);

#endif
