/*
 * rsakit_plant.h - a deliberately leaky kernel for the constant-time harness, so that the
 * harness is shown to catch a secret-dependent branch (it must not pass vacuously).
 * Test-only: never linked into RSAKit.
 */
#ifndef RSAKIT_PLANT_H
#define RSAKIT_PLANT_H

#include <stddef.h>

/* Attach to `key` (an rsakit_sec_key *) a kernel that runs the GMP reference
 * (rsakit_sec_crt_powm_gmp) and then branches once on the low bit of the first residue,
 * a secret. */
void rsakit_plant_attach_branching_kernel(void *key);

/* How many times the planted branch was taken (keeps the branch from being optimised out). */
unsigned long rsakit_plant_taken(void);

/* For RSAKitConstantTimeHarness.attachOAEPDecodeProbe: branches once on the first octet of
 * the unmasked DB of an EME-OAEP decode, a secret (the harness's `plant-oaep` mode). */
void rsakit_plant_oaep_probe(const void *db, size_t count);

/* How many times the planted OAEP branch was taken. */
unsigned long rsakit_plant_oaep_taken(void);

#endif
