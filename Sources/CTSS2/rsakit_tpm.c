/* rsakit_tpm.c - the TPM operations of include/rsakit_tss2.h over tpm2-tss's ESAPI. */
#include "rsakit_tss2.h"
#include "tss2_api.h"

#include <stdlib.h>
#include <string.h>

#define API rsakit_tss2

struct rsakit_tpm {
    TSS2_TCTI_CONTEXT *tcti;
    ESYS_CONTEXT *esys;
    ESYS_TR primary;
    ESYS_TR session;
    ESYS_TR key;
};

/* The SRK template of the TCG "TPM v2.0 Provisioning Guidance" (section 7.5.1): a restricted
 * decryption key, ECC NIST P-256, AES-128-CFB for its children, noDA, empty auth and policy, and
 * an empty unique field, as `tpm2_createprimary -C o -G ecc256:aes128cfb -a ...` makes it. The
 * TPM derives it from the owner hierarchy's storage seed: the same key every time. */
static const TPM2B_PUBLIC srk_template = {
    .publicArea = {
        .type = TPM2_ALG_ECC,
        .nameAlg = TPM2_ALG_SHA256,
        .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
                            TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA | TPMA_OBJECT_RESTRICTED |
                            TPMA_OBJECT_DECRYPT,
        .parameters.eccDetail = {
            .symmetric = {.algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB},
            .scheme = {.scheme = TPM2_ALG_NULL},
            .curveID = TPM2_ECC_NIST_P256,
            .kdf = {.scheme = TPM2_ALG_NULL},
        },
    },
};

/* The session's attributes for one command: parameter encryption of the first command
 * parameter (decrypt) always, of the first response parameter (encrypt) where it is a TPM2B. */
static TSS2_RC use_session(rsakit_tpm *tpm, int response_encrypted) {
    TPMA_SESSION flags = TPMA_SESSION_CONTINUESESSION | TPMA_SESSION_DECRYPT;
    if (response_encrypted) flags |= TPMA_SESSION_ENCRYPT;
    return API.Esys_TRSess_SetAttributes(tpm->esys, tpm->session, flags, 0xFF);
}

static int owner_auth_is_set(ESYS_CONTEXT *esys) {
    TPMI_YES_NO more = 0;
    TPMS_CAPABILITY_DATA *data = NULL;
    int set = 0;
    if (API.Esys_GetCapability(esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_TPM_PROPERTIES,
                               TPM2_PT_PERMANENT, 1, &more, &data) == TSS2_RC_SUCCESS &&
        data != NULL && data->data.tpmProperties.count == 1 &&
        data->data.tpmProperties.tpmProperty[0].property == TPM2_PT_PERMANENT) {
        set = (data->data.tpmProperties.tpmProperty[0].value & TPMA_PERMANENT_OWNERAUTHSET) != 0;
    }
    API.Esys_Free(data);
    return set;
}

uint32_t rsakit_tpm_open(const char *tcti, rsakit_tpm **out, int *stage, int *owner_auth_set) {
    *out = NULL;
    *stage = RSAKIT_TPM_STAGE_TCTI;
    *owner_auth_set = 0;
    if (rsakit_tss2_load() != NULL) return TSS2_BASE_RC_NOT_IMPLEMENTED;
    rsakit_tpm *tpm = calloc(1, sizeof *tpm);
    if (tpm == NULL) return TSS2_ESYS_RC_MEMORY;
    tpm->primary = tpm->session = tpm->key = ESYS_TR_NONE;
    TSS2_RC rc = API.Tss2_TctiLdr_Initialize(tcti, &tpm->tcti);
    if (rc != TSS2_RC_SUCCESS) goto fail;
    *stage = RSAKIT_TPM_STAGE_ESYS;
    rc = API.Esys_Initialize(&tpm->esys, tpm->tcti, NULL);
    if (rc != TSS2_RC_SUCCESS) goto fail;
    *stage = RSAKIT_TPM_STAGE_PRIMARY;
    /* The owner hierarchy's auth is the empty password: a machine whose owner set one says so. */
    const TPM2B_SENSITIVE_CREATE no_auth = {0};
    const TPM2B_DATA no_outside_info = {0};
    const TPML_PCR_SELECTION no_pcrs = {0};
    rc = API.Esys_CreatePrimary(tpm->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                                &no_auth, &srk_template, &no_outside_info, &no_pcrs, &tpm->primary, NULL, NULL,
                                NULL, NULL);
    if (rc != TSS2_RC_SUCCESS) {
        *owner_auth_set = owner_auth_is_set(tpm->esys);
        goto fail;
    }
    *stage = RSAKIT_TPM_STAGE_SESSION;
    /* Salted with the SRK (ECDH) and bound to it: the session key is unknown on the bus. */
    const TPMT_SYM_DEF aes128cfb = {.algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB};
    rc = API.Esys_StartAuthSession(tpm->esys, tpm->primary, tpm->primary, ESYS_TR_NONE, ESYS_TR_NONE,
                                   ESYS_TR_NONE, NULL, TPM2_SE_HMAC, &aes128cfb, TPM2_ALG_SHA256, &tpm->session);
    if (rc != TSS2_RC_SUCCESS) goto fail;
    *stage = 0;
    *out = tpm;
    return TSS2_RC_SUCCESS;
fail:
    rsakit_tpm_close(tpm);
    return rc;
}

void rsakit_tpm_close(rsakit_tpm *tpm) {
    if (tpm == NULL) return;
    if (tpm->esys != NULL) {
        if (tpm->key != ESYS_TR_NONE) API.Esys_FlushContext(tpm->esys, tpm->key);
        if (tpm->session != ESYS_TR_NONE) API.Esys_FlushContext(tpm->esys, tpm->session);
        if (tpm->primary != ESYS_TR_NONE) API.Esys_FlushContext(tpm->esys, tpm->primary);
        API.Esys_Finalize(&tpm->esys);
    }
    if (tpm->tcti != NULL) API.Tss2_TctiLdr_Finalize(&tpm->tcti);
    free(tpm);
}

static TSS2_RC set_auth(TPM2B_AUTH *value, const uint8_t *auth, size_t length) {
    memset(value, 0, sizeof *value);
    if (length > sizeof value->buffer) return TSS2_ESYS_RC_BAD_VALUE;
    value->size = (UINT16)length;
    if (length > 0) memcpy(value->buffer, auth, length);
    return TSS2_RC_SUCCESS;
}

uint32_t rsakit_tpm_create(rsakit_tpm *tpm, int usage, uint32_t bits, const uint8_t *auth, size_t auth_length,
                           uint8_t *public_blob, size_t *public_length, uint8_t *private_blob,
                           size_t *private_length) {
    TPM2B_SENSITIVE_CREATE sensitive = {0};
    TSS2_RC rc = set_auth(&sensitive.sensitive.userAuth, auth, auth_length);
    if (rc != TSS2_RC_SUCCESS) return rc;
    /* No noDA: wrong authValues count towards the TPM's dictionary-attack lockout. */
    TPM2B_PUBLIC template = {
        .publicArea = {
            .type = TPM2_ALG_RSA,
            .nameAlg = TPM2_ALG_SHA256,
            .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
                                TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH,
            .parameters.rsaDetail = {
                .symmetric = {.algorithm = TPM2_ALG_NULL},
                .scheme = {.scheme = TPM2_ALG_NULL},
                .keyBits = (TPMI_RSA_KEY_BITS)bits,
                .exponent = 0,
            },
        },
    };
    /* One usage. TPM 2.0 part 1 allows sign and decrypt together only with a NULL scheme, which
     * is raw RSA for decryption: a key made here can never do both. */
    switch (usage) {
    case RSAKIT_TPM_USAGE_SIGN:
        template.publicArea.objectAttributes |= TPMA_OBJECT_SIGN_ENCRYPT;
        break;
    case RSAKIT_TPM_USAGE_DECRYPT_OAEP_SHA256:
        template.publicArea.objectAttributes |= TPMA_OBJECT_DECRYPT;
        template.publicArea.parameters.rsaDetail.scheme.scheme = TPM2_ALG_OAEP;
        template.publicArea.parameters.rsaDetail.scheme.details.oaep.hashAlg = TPM2_ALG_SHA256;
        break;
    case RSAKIT_TPM_USAGE_DECRYPT_RSAES:
        template.publicArea.objectAttributes |= TPMA_OBJECT_DECRYPT;
        template.publicArea.parameters.rsaDetail.scheme.scheme = TPM2_ALG_RSAES;
        break;
    default:
        explicit_bzero(&sensitive, sizeof sensitive);
        return TSS2_ESYS_RC_BAD_VALUE;
    }
    const TPM2B_DATA no_outside_info = {0};
    const TPML_PCR_SELECTION no_pcrs = {0};
    TPM2B_PRIVATE *out_private = NULL;
    TPM2B_PUBLIC *out_public = NULL;
    rc = use_session(tpm, 1);
    if (rc == TSS2_RC_SUCCESS) {
        rc = API.Esys_Create(tpm->esys, tpm->primary, tpm->session, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive,
                             &template, &no_outside_info, &no_pcrs, &out_private, &out_public, NULL, NULL, NULL);
    }
    explicit_bzero(&sensitive, sizeof sensitive);
    if (rc == TSS2_RC_SUCCESS) {
        *public_length = 0;
        *private_length = 0;
        rc = API.Tss2_MU_TPM2B_PUBLIC_Marshal(out_public, public_blob, RSAKIT_TPM_BLOB_CAPACITY, public_length);
        if (rc == TSS2_RC_SUCCESS) {
            rc = API.Tss2_MU_TPM2B_PRIVATE_Marshal(out_private, private_blob, RSAKIT_TPM_BLOB_CAPACITY,
                                                   private_length);
        }
    }
    API.Esys_Free(out_private);
    API.Esys_Free(out_public);
    return rc;
}

uint32_t rsakit_tpm_public_describe(const uint8_t *public_blob, size_t public_length, uint8_t *modulus,
                                    size_t *modulus_length, uint32_t *exponent, uint32_t *attributes,
                                    uint16_t *scheme, uint16_t *scheme_hash) {
    const char *loaded = rsakit_tss2_load();
    if (loaded != NULL) return TSS2_BASE_RC_NOT_IMPLEMENTED;
    TPM2B_PUBLIC area = {0};
    size_t offset = 0;
    TSS2_RC rc = API.Tss2_MU_TPM2B_PUBLIC_Unmarshal(public_blob, public_length, &offset, &area);
    if (rc != TSS2_RC_SUCCESS) return rc;
    if (offset != public_length || area.publicArea.type != TPM2_ALG_RSA) return TSS2_MU_RC_BAD_VALUE;
    const TPMS_RSA_PARMS *rsa = &area.publicArea.parameters.rsaDetail;
    const TPM2B_PUBLIC_KEY_RSA *n = &area.publicArea.unique.rsa;
    if (n->size > RSAKIT_TPM_BLOCK_CAPACITY) return TSS2_MU_RC_BAD_SIZE;
    memcpy(modulus, n->buffer, n->size);
    *modulus_length = n->size;
    *exponent = rsa->exponent;
    *attributes = area.publicArea.objectAttributes;
    *scheme = rsa->scheme.scheme;
    /* Every RSA scheme's details start with its hash (TPMS_SCHEME_HASH); RSAES has none. */
    *scheme_hash = (rsa->scheme.scheme == TPM2_ALG_NULL || rsa->scheme.scheme == TPM2_ALG_RSAES)
                       ? TPM2_ALG_NULL
                       : rsa->scheme.details.anySig.hashAlg;
    return TSS2_RC_SUCCESS;
}

uint32_t rsakit_tpm_load(rsakit_tpm *tpm, const uint8_t *public_blob, size_t public_length,
                         const uint8_t *private_blob, size_t private_length, const uint8_t *auth,
                         size_t auth_length) {
    TPM2B_PUBLIC in_public = {0};
    TPM2B_PRIVATE in_private = {0};
    size_t offset = 0;
    TSS2_RC rc = API.Tss2_MU_TPM2B_PUBLIC_Unmarshal(public_blob, public_length, &offset, &in_public);
    if (rc != TSS2_RC_SUCCESS) return rc;
    offset = 0;
    rc = API.Tss2_MU_TPM2B_PRIVATE_Unmarshal(private_blob, private_length, &offset, &in_private);
    if (rc != TSS2_RC_SUCCESS) return rc;
    if (tpm->key != ESYS_TR_NONE) {
        API.Esys_FlushContext(tpm->esys, tpm->key);
        tpm->key = ESYS_TR_NONE;
    }
    rc = use_session(tpm, 1);
    if (rc != TSS2_RC_SUCCESS) return rc;
    rc = API.Esys_Load(tpm->esys, tpm->primary, tpm->session, ESYS_TR_NONE, ESYS_TR_NONE, &in_private,
                       &in_public, &tpm->key);
    if (rc != TSS2_RC_SUCCESS) {
        tpm->key = ESYS_TR_NONE;
        return rc;
    }
    TPM2B_AUTH value;
    rc = set_auth(&value, auth, auth_length);
    if (rc == TSS2_RC_SUCCESS) rc = API.Esys_TR_SetAuth(tpm->esys, tpm->key, &value);
    explicit_bzero(&value, sizeof value);
    return rc;
}

uint32_t rsakit_tpm_sign(rsakit_tpm *tpm, uint16_t scheme, uint16_t hash, const uint8_t *digest,
                         size_t digest_length, uint8_t *signature, size_t *signature_length) {
    if (tpm->key == ESYS_TR_NONE) return TSS2_ESYS_RC_BAD_REFERENCE;
    TPM2B_DIGEST in = {0};
    if (digest_length > sizeof in.buffer) return TSS2_ESYS_RC_BAD_VALUE;
    in.size = (UINT16)digest_length;
    memcpy(in.buffer, digest, digest_length);
    /* RSASSA's and RSAPSS's details are the same TPMS_SCHEME_HASH. */
    TPMT_SIG_SCHEME in_scheme = {.scheme = scheme, .details.rsassa.hashAlg = hash};
    /* An unrestricted key needs no proof that the TPM made the digest: the NULL ticket. */
    const TPMT_TK_HASHCHECK no_ticket = {.tag = TPM2_ST_HASHCHECK, .hierarchy = TPM2_RH_NULL};
    TPMT_SIGNATURE *out = NULL;
    TSS2_RC rc = use_session(tpm, 0);
    if (rc == TSS2_RC_SUCCESS) {
        rc = API.Esys_Sign(tpm->esys, tpm->key, tpm->session, ESYS_TR_NONE, ESYS_TR_NONE, &in, &in_scheme,
                           &no_ticket, &out);
    }
    if (rc == TSS2_RC_SUCCESS) {
        const TPM2B_PUBLIC_KEY_RSA *s = &out->signature.rsassa.sig;
        if (s->size > RSAKIT_TPM_BLOCK_CAPACITY) {
            rc = TSS2_ESYS_RC_MALFORMED_RESPONSE;
        } else {
            memcpy(signature, s->buffer, s->size);
            *signature_length = s->size;
        }
    }
    API.Esys_Free(out);
    return rc;
}

uint32_t rsakit_tpm_decrypt(rsakit_tpm *tpm, uint16_t scheme, uint16_t hash, const uint8_t *ciphertext,
                            size_t ciphertext_length, uint8_t *message, size_t *message_length) {
    if (tpm->key == ESYS_TR_NONE) return TSS2_ESYS_RC_BAD_REFERENCE;
    TPM2B_PUBLIC_KEY_RSA in = {0};
    if (ciphertext_length > sizeof in.buffer) return TSS2_ESYS_RC_BAD_VALUE;
    in.size = (UINT16)ciphertext_length;
    memcpy(in.buffer, ciphertext, ciphertext_length);
    TPMT_RSA_DECRYPT in_scheme = {.scheme = scheme};
    if (scheme == TPM2_ALG_OAEP) in_scheme.details.oaep.hashAlg = hash;
    const TPM2B_DATA no_label = {0};
    TPM2B_PUBLIC_KEY_RSA *out = NULL;
    TSS2_RC rc = use_session(tpm, 1);
    if (rc == TSS2_RC_SUCCESS) {
        rc = API.Esys_RSA_Decrypt(tpm->esys, tpm->key, tpm->session, ESYS_TR_NONE, ESYS_TR_NONE, &in, &in_scheme,
                                  &no_label, &out);
    }
    if (rc == TSS2_RC_SUCCESS) {
        if (out->size > RSAKIT_TPM_BLOCK_CAPACITY) {
            rc = TSS2_ESYS_RC_MALFORMED_RESPONSE;
        } else {
            memcpy(message, out->buffer, out->size);
            *message_length = out->size;
        }
    }
    if (out != NULL) explicit_bzero(out, sizeof *out);
    API.Esys_Free(out);
    return rc;
}
