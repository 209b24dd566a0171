/* tss2_api.h - the tpm2-tss functions rsakit calls, as pointers resolved by rsakit_tss2_load
 * (private to CTSS2: Swift sees only include/rsakit_tss2.h). */
#ifndef RSAKIT_TSS2_API_H
#define RSAKIT_TSS2_API_H

#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

/* __typeof__ of a declared function does not reference the symbol, so nothing links tss2. */
#define RSAKIT_TSS2_POINTER(name) __typeof__(&name) name

struct rsakit_tss2_api {
    RSAKIT_TSS2_POINTER(Tss2_TctiLdr_Initialize);
    RSAKIT_TSS2_POINTER(Tss2_TctiLdr_Finalize);
    RSAKIT_TSS2_POINTER(Esys_Initialize);
    RSAKIT_TSS2_POINTER(Esys_Finalize);
    RSAKIT_TSS2_POINTER(Esys_Free);
    RSAKIT_TSS2_POINTER(Esys_CreatePrimary);
    RSAKIT_TSS2_POINTER(Esys_StartAuthSession);
    RSAKIT_TSS2_POINTER(Esys_TRSess_SetAttributes);
    RSAKIT_TSS2_POINTER(Esys_TR_SetAuth);
    RSAKIT_TSS2_POINTER(Esys_FlushContext);
    RSAKIT_TSS2_POINTER(Esys_GetCapability);
    RSAKIT_TSS2_POINTER(Esys_Create);
    RSAKIT_TSS2_POINTER(Esys_Load);
    RSAKIT_TSS2_POINTER(Esys_Sign);
    RSAKIT_TSS2_POINTER(Esys_RSA_Decrypt);
    RSAKIT_TSS2_POINTER(Tss2_MU_TPM2B_PUBLIC_Marshal);
    RSAKIT_TSS2_POINTER(Tss2_MU_TPM2B_PUBLIC_Unmarshal);
    RSAKIT_TSS2_POINTER(Tss2_MU_TPM2B_PRIVATE_Marshal);
    RSAKIT_TSS2_POINTER(Tss2_MU_TPM2B_PRIVATE_Unmarshal);
    RSAKIT_TSS2_POINTER(Tss2_RC_Decode);
};

/* Resolved by rsakit_tss2_load; valid once it returned NULL. */
extern struct rsakit_tss2_api rsakit_tss2;

#endif
