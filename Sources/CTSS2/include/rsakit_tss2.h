/*
 * rsakit_tss2.h - the TPM 2.0 through tpm2-tss's ESAPI (libtss2-esys, headers from libtss2-dev),
 * for RSAKitKeychain's TPM keys (Sources/RSAKitKeychain/TPM/).
 *
 * A thin binding: plain byte buffers in and out (marshalled TPM2B_PUBLIC and TPM2B_PRIVATE, a
 * digest, a ciphertext), so that Swift never touches a TPM union; Swift does the policy, the
 * errors and the store. Every call returns a TSS2_RC (0 for success; the TPM's response codes
 * in layer 0, tpm2-tss's own in their layers).
 *
 * The libraries are loaded on first use (dlopen of libtss2-esys.so.0, libtss2-tctildr.so.0 and
 * libtss2-mu.so.0; libtss2-rc.so.0, for the codes' names, when present), not linked: the CLI's
 * other commands, the PKCS#11 module, ssh and the .deb never load tss2 unless a TPM key is used.
 *
 * The session of a context: the parent is a transient primary key under the owner hierarchy,
 * made from the TCG provisioning guidance's ECC P-256 SRK template (deterministic from the
 * TPM's storage seed, so the same parent every time), and every authorised command runs in a
 * salted HMAC session bound to it with AES-128-CFB parameter encryption, so that the key's
 * authValue (PIN) and the plaintext never cross the bus in clear. rsakit_tpm_close flushes
 * both: nothing persistent is written to the TPM.
 */
#ifndef RSAKIT_TSS2_H
#define RSAKIT_TSS2_H

#include <stddef.h>
#include <stdint.h>

/* TPM 2.0 algorithm identifiers (TCG Algorithm Registry), as the calls below take them. */
enum {
    RSAKIT_TPM_ALG_SHA1 = 0x0004,
    RSAKIT_TPM_ALG_SHA256 = 0x000B,
    RSAKIT_TPM_ALG_SHA384 = 0x000C,
    RSAKIT_TPM_ALG_SHA512 = 0x000D,
    RSAKIT_TPM_ALG_NULL = 0x0010,
    RSAKIT_TPM_ALG_RSASSA = 0x0014,
    RSAKIT_TPM_ALG_RSAES = 0x0015,
    RSAKIT_TPM_ALG_RSAPSS = 0x0016,
    RSAKIT_TPM_ALG_OAEP = 0x0017,
};

/* The one usage a key gets at creation (its objectAttributes and scheme, fixed in the TPM). */
enum {
    /* sign set, decrypt clear, scheme NULL: TPM2_Sign with RSASSA or RSAPSS; no RSA_Decrypt. */
    RSAKIT_TPM_USAGE_SIGN = 1,
    /* decrypt set, sign clear, scheme RSAES-OAEP with SHA-256. */
    RSAKIT_TPM_USAGE_DECRYPT_OAEP_SHA256 = 2,
    /* decrypt set, sign clear, scheme RSAES-PKCS1-v1_5. */
    RSAKIT_TPM_USAGE_DECRYPT_RSAES = 3,
};

/* Where rsakit_tpm_open failed (its `stage` output). */
enum {
    RSAKIT_TPM_STAGE_TCTI = 1,    /* Tss2_TctiLdr_Initialize: no TPM behind the TCTI */
    RSAKIT_TPM_STAGE_ESYS = 2,    /* Esys_Initialize (the TPM answered nothing sensible) */
    RSAKIT_TPM_STAGE_PRIMARY = 3, /* TPM2_CreatePrimary of the SRK under the owner hierarchy */
    RSAKIT_TPM_STAGE_SESSION = 4, /* TPM2_StartAuthSession */
};

/* Buffer sizes that hold any marshalled TPM2B_PUBLIC, TPM2B_PRIVATE, and an RSA-4096 block. */
enum { RSAKIT_TPM_BLOB_CAPACITY = 2048, RSAKIT_TPM_BLOCK_CAPACITY = 512 };

/* Load the libraries, once per process (thread-safe). Returns NULL when they are usable, else a
 * sentence saying what is missing (static storage). */
const char *rsakit_tss2_load(void);

/* tpm2-tss's own description of a response code (Tss2_RC_Decode; static storage), or "TPM
 * response code" without libtss2-rc. */
const char *rsakit_tpm_rc_text(uint32_t rc);

typedef struct rsakit_tpm rsakit_tpm;

/* Open the TPM behind `tcti` (a tctildr string such as "device:/dev/tpmrm0" or
 * "swtpm:host=127.0.0.1,port=2321"), create the SRK as parent and start the session. On failure
 * `*stage` says where (RSAKIT_TPM_STAGE_*) and `*owner_auth_set` whether the owner hierarchy has
 * an auth value (known only when the TPM answered). */
uint32_t rsakit_tpm_open(const char *tcti, rsakit_tpm **tpm, int *stage, int *owner_auth_set);

/* Flush the loaded key, the session and the primary, and close the TCTI. NULL is allowed. */
void rsakit_tpm_close(rsakit_tpm *tpm);

/* TPM2_Create of an RSA key of `bits` bits (2048 or 3072), e = 65537, with `usage`
 * (RSAKIT_TPM_USAGE_*), authValue `auth` (auth_length bytes, 0 for none; dictionary-attack
 * protected), fixedTPM and fixedParent (never exportable). Writes the marshalled TPM2B_PUBLIC and
 * TPM2B_PRIVATE (each buffer RSAKIT_TPM_BLOB_CAPACITY bytes). */
uint32_t rsakit_tpm_create(rsakit_tpm *tpm, int usage, uint32_t bits, const uint8_t *auth, size_t auth_length,
                           uint8_t *public_blob, size_t *public_length, uint8_t *private_blob,
                           size_t *private_length);

/* What a marshalled TPM2B_PUBLIC says: the modulus (big-endian, up to RSAKIT_TPM_BLOCK_CAPACITY
 * bytes), the exponent (0 means 65537), its objectAttributes, and its RSA scheme and that
 * scheme's hash (RSAKIT_TPM_ALG_NULL when none). Returns 0, or a TSS2_MU error for a bad blob. */
uint32_t rsakit_tpm_public_describe(const uint8_t *public_blob, size_t public_length, uint8_t *modulus,
                                    size_t *modulus_length, uint32_t *exponent, uint32_t *attributes,
                                    uint16_t *scheme, uint16_t *scheme_hash);

/* TPM2_Load of a key's blobs under the primary, and its authValue for later calls. A key already
 * loaded in this context is flushed first. */
uint32_t rsakit_tpm_load(rsakit_tpm *tpm, const uint8_t *public_blob, size_t public_length,
                         const uint8_t *private_blob, size_t private_length, const uint8_t *auth,
                         size_t auth_length);

/* TPM2_Sign of `digest` (digest_length bytes of `hash`) with the loaded key, scheme RSASSA or
 * RSAPSS. The signature (k bytes) goes to `signature` (RSAKIT_TPM_BLOCK_CAPACITY bytes). */
uint32_t rsakit_tpm_sign(rsakit_tpm *tpm, uint16_t scheme, uint16_t hash, const uint8_t *digest,
                         size_t digest_length, uint8_t *signature, size_t *signature_length);

/* TPM2_RSA_Decrypt of one k-byte block with the loaded key, scheme OAEP (with `hash`) or RSAES,
 * empty label. The message goes to `message` (RSAKIT_TPM_BLOCK_CAPACITY bytes); the TPM's
 * response buffer is zeroed before it is freed. */
uint32_t rsakit_tpm_decrypt(rsakit_tpm *tpm, uint16_t scheme, uint16_t hash, const uint8_t *ciphertext,
                            size_t ciphertext_length, uint8_t *message, size_t *message_length);

#endif
