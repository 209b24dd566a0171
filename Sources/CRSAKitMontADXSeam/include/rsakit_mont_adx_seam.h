/*
 * rsakit_mont_adx_seam.h - the radix-2^64 ADX kernel (rsakit_mont_adx.h) plugged into the
 * constant-time private path (rsakit_secret.h, "the kernel seam"), as rsakit_vec_sec_attach
 * plugs in the IFMA kernel. A target of its own so that the kernel itself depends on nothing.
 */
#ifndef RSAKIT_MONT_ADX_SEAM_H
#define RSAKIT_MONT_ADX_SEAM_H

#ifdef __cplusplus
extern "C" {
#endif

struct rsakit_sec_key;

/* Attach the ADX kernel as the key's exponentiation kernel (rsakit_sec_key_set_kernel), before
 * the key is shared between threads. Per call of the seam, for each input: base mod r_i by
 * mpn_sec_div_r (as on the GMP path), then one rsakit_adx_powm2 for a two-prime key (p and q,
 * any limb counts) or one rsakit_adx_powm per prime; each d_i is scanned over all its limbs
 * (the prime's limb count: public). Also attaches the re-encryption check's m'^e mod n
 * (rsakit_sec_key_set_check_kernel): rsakit_adx_powm_public_exponent mod n for n of up to
 * 4096 bits, above that prime by prime and recombined by rsakit_sec_crt_recombine (the same
 * number); and the blinding and unblinding products (rsakit_sec_key_set_mul_kernel) for n of
 * up to 4096 bits, by rsakit_adx_mulmod for any count (about 1 us per 2048-bit product,
 * below GMP's mpn_sec_mul + mpn_sec_div_r). Constant-time as the kernel.
 * Returns 0, or -1 (nothing attached: the key stays on whatever it had, GMP by default) when
 * key is NULL, the CPU lacks BMI2/ADX (rsakit_adx_cpu_supported), a prime has more than 64
 * limbs (above 4096 bits), or memory runs out. The per-prime constants are zeroed when the key
 * is destroyed. The engine should call it only when rsakit_adx_usable() (the known-answer test
 * passed). */
int rsakit_adx_sec_attach(struct rsakit_sec_key *key);

/* Tests only: rsakit_adx_sec_attach with a simulated fault, one bit of the first residue of
 * every call flipped after the exponentiation, so that tests can see the re-encryption check
 * refuse the result. */
int rsakit_adx_sec_attach_faulty_for_tests(struct rsakit_sec_key *key);

#ifdef __cplusplus
}
#endif

#endif
