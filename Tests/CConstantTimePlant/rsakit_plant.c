/* A planted secret-dependent branch; see include/rsakit_plant.h. */
#include "rsakit_plant.h"
#include "rsakit_secret.h"

static volatile unsigned long taken;

static int branching_kernel(void *context, const rsakit_sec_key *key, size_t count,
                            const mp_limb_t *const bases[], mp_limb_t *const residues[]) {
    int status = rsakit_sec_crt_powm_gmp(context, key, count, bases, residues);
    /* PLANTED LEAK: a branch on a secret limb (m_1 mod 2). */
    if (residues[0][0] & 1) {
        taken++;
    }
    return status;
}

void rsakit_plant_attach_branching_kernel(void *key) {
    rsakit_sec_key_set_kernel((rsakit_sec_key *)key, branching_kernel, NULL, NULL);
}

unsigned long rsakit_plant_taken(void) { return taken; }

static volatile unsigned long oaep_taken;

void rsakit_plant_oaep_probe(const void *db, size_t count) {
    /* PLANTED LEAK: a branch on a secret octet of the unmasked DB (the first of lHash'). */
    if (count > 0 && (((const unsigned char *)db)[0] & 1)) {
        oaep_taken++;
    }
}

unsigned long rsakit_plant_oaep_taken(void) { return oaep_taken; }
