/* rsakit_tss2_load.c - tpm2-tss loaded on first use; see include/rsakit_tss2.h. */
#include "rsakit_tss2.h"
#include "tss2_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

struct rsakit_tss2_api rsakit_tss2;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const char *load_error = "tpm2-tss was not loaded";
static char load_message[512];

/* The constants of the public header are the TCG's; checked against tpm2-tss's own. */
_Static_assert(RSAKIT_TPM_ALG_SHA256 == TPM2_ALG_SHA256 && RSAKIT_TPM_ALG_OAEP == TPM2_ALG_OAEP &&
                   RSAKIT_TPM_ALG_RSAPSS == TPM2_ALG_RSAPSS && RSAKIT_TPM_ALG_RSASSA == TPM2_ALG_RSASSA &&
                   RSAKIT_TPM_ALG_RSAES == TPM2_ALG_RSAES && RSAKIT_TPM_ALG_NULL == TPM2_ALG_NULL,
               "TPM algorithm identifiers");
_Static_assert(sizeof(TPM2B_PUBLIC) + 16 <= RSAKIT_TPM_BLOB_CAPACITY &&
                   sizeof(TPM2B_PRIVATE) + 16 <= RSAKIT_TPM_BLOB_CAPACITY,
               "blob capacity");
_Static_assert(TPM2_MAX_RSA_KEY_BYTES <= RSAKIT_TPM_BLOCK_CAPACITY, "block capacity");

static void *open_library(const char *soname, const char *package) {
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(load_message, sizeof load_message, "tpm2-tss is not installed (%s: install %s): %s", soname,
                 package, dlerror());
        load_error = load_message;
    }
    return library;
}

static void load(void) {
    void *esys = open_library("libtss2-esys.so.0", "libtss2-esys-3.0.2-0");
    if (esys == NULL) return;
    void *tctildr = open_library("libtss2-tctildr.so.0", "libtss2-tctildr0");
    if (tctildr == NULL) return;
    void *mu = open_library("libtss2-mu.so.0", "libtss2-mu0");
    if (mu == NULL) return;
    /* libtss2-rc only names response codes: without it, errors show the code in hex. */
    void *rc = dlopen("libtss2-rc.so.0", RTLD_NOW | RTLD_LOCAL);
#define RESOLVE(library, name)                                                                \
    do {                                                                                      \
        *(void **)&rsakit_tss2.name = dlsym(library, #name);                                  \
        if (rsakit_tss2.name == NULL) {                                                       \
            snprintf(load_message, sizeof load_message, "tpm2-tss has no %s", #name);         \
            load_error = load_message;                                                        \
            return;                                                                           \
        }                                                                                     \
    } while (0)
    RESOLVE(tctildr, Tss2_TctiLdr_Initialize);
    RESOLVE(tctildr, Tss2_TctiLdr_Finalize);
    RESOLVE(esys, Esys_Initialize);
    RESOLVE(esys, Esys_Finalize);
    RESOLVE(esys, Esys_Free);
    RESOLVE(esys, Esys_CreatePrimary);
    RESOLVE(esys, Esys_StartAuthSession);
    RESOLVE(esys, Esys_TRSess_SetAttributes);
    RESOLVE(esys, Esys_TR_SetAuth);
    RESOLVE(esys, Esys_FlushContext);
    RESOLVE(esys, Esys_GetCapability);
    RESOLVE(esys, Esys_Create);
    RESOLVE(esys, Esys_Load);
    RESOLVE(esys, Esys_Sign);
    RESOLVE(esys, Esys_RSA_Decrypt);
    RESOLVE(mu, Tss2_MU_TPM2B_PUBLIC_Marshal);
    RESOLVE(mu, Tss2_MU_TPM2B_PUBLIC_Unmarshal);
    RESOLVE(mu, Tss2_MU_TPM2B_PRIVATE_Marshal);
    RESOLVE(mu, Tss2_MU_TPM2B_PRIVATE_Unmarshal);
#undef RESOLVE
    if (rc != NULL) *(void **)&rsakit_tss2.Tss2_RC_Decode = dlsym(rc, "Tss2_RC_Decode");
    load_error = NULL;
}

const char *rsakit_tss2_load(void) {
    pthread_once(&load_once, load);
    return load_error;
}

const char *rsakit_tpm_rc_text(uint32_t rc) {
    if (rsakit_tss2_load() != NULL || rsakit_tss2.Tss2_RC_Decode == NULL) return "TPM response code";
    return rsakit_tss2.Tss2_RC_Decode(rc);
}
