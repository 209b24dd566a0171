// The CK_FUNCTION_LIST of the rsakit PKCS#11 module (PKCS#11 v2.40 §5.2, the functions in
// the standard's order). Every implemented entry is a Swift `@_cdecl` function of
// Sources/RSAKitPKCS11 (rsakit_p11_<Function>, Entry*.swift); the rest answer
// CKR_FUNCTION_NOT_SUPPORTED (CKR_FUNCTION_NOT_PARALLEL for the two legacy parallel
// functions), which a client reads as "this token cannot do that". C_OpenSession is the one
// C wrapper: it drops the notification callback (the module never calls back) so that Swift
// need not import a function-pointer type. The stubs and the table were written once from
// the standard's function list (a script, not kept); only C_GetFunctionList is exported from
// C (the stubs are static, so no other module's C_* symbols can interpose on them).
#include "rsakit_pkcs11.h"

#include <stddef.h>

#define RSAKIT_P11_EXPORT __attribute__((visibility("default")))

/// A function the module does not offer: its parameters are ignored.
#define RSAKIT_NOT_SUPPORTED(name, ...) \
    static CK_RV rsakit_c_##name(__VA_ARGS__) { return CKR_FUNCTION_NOT_SUPPORTED; }
/// The two legacy parallel-session functions (§5.16).
#define RSAKIT_NOT_PARALLEL(name, ...) \
    static CK_RV rsakit_c_##name(__VA_ARGS__) { return CKR_FUNCTION_NOT_PARALLEL; }

extern CK_RV rsakit_p11_Initialize(void *init_args);
extern CK_RV rsakit_p11_Finalize(void *reserved);
extern CK_RV rsakit_p11_GetInfo(CK_INFO *info);
extern CK_RV rsakit_p11_GetSlotList(CK_BBOOL token_present, CK_SLOT_ID *slot_list, CK_ULONG *count);
extern CK_RV rsakit_p11_GetSlotInfo(CK_SLOT_ID slot_id, CK_SLOT_INFO *info);
extern CK_RV rsakit_p11_GetTokenInfo(CK_SLOT_ID slot_id, CK_TOKEN_INFO *info);
extern CK_RV rsakit_p11_GetMechanismList(CK_SLOT_ID slot_id, CK_MECHANISM_TYPE *mechanism_list, CK_ULONG *count);
extern CK_RV rsakit_p11_GetMechanismInfo(CK_SLOT_ID slot_id, CK_MECHANISM_TYPE type, CK_MECHANISM_INFO *info);
RSAKIT_NOT_SUPPORTED(InitToken, CK_SLOT_ID slot_id, CK_UTF8CHAR *pin, CK_ULONG pin_len, CK_UTF8CHAR *label)
RSAKIT_NOT_SUPPORTED(InitPIN, CK_SESSION_HANDLE session, CK_UTF8CHAR *pin, CK_ULONG pin_len)
RSAKIT_NOT_SUPPORTED(SetPIN, CK_SESSION_HANDLE session, CK_UTF8CHAR *old_pin, CK_ULONG old_len, CK_UTF8CHAR *new_pin, CK_ULONG new_len)
extern CK_RV rsakit_p11_OpenSession(CK_SLOT_ID slot_id, CK_FLAGS flags, CK_SESSION_HANDLE *session);
static CK_RV rsakit_c_OpenSession(CK_SLOT_ID slot_id, CK_FLAGS flags, void *application, CK_NOTIFY notify, CK_SESSION_HANDLE *session) {
    (void)application;
    (void)notify;
    return rsakit_p11_OpenSession(slot_id, flags, session);
}
extern CK_RV rsakit_p11_CloseSession(CK_SESSION_HANDLE session);
extern CK_RV rsakit_p11_CloseAllSessions(CK_SLOT_ID slot_id);
extern CK_RV rsakit_p11_GetSessionInfo(CK_SESSION_HANDLE session, CK_SESSION_INFO *info);
RSAKIT_NOT_SUPPORTED(GetOperationState, CK_SESSION_HANDLE session, CK_BYTE *state, CK_ULONG *state_len)
RSAKIT_NOT_SUPPORTED(SetOperationState, CK_SESSION_HANDLE session, CK_BYTE *state, CK_ULONG state_len, CK_OBJECT_HANDLE encryption_key, CK_OBJECT_HANDLE authentication_key)
extern CK_RV rsakit_p11_Login(CK_SESSION_HANDLE session, CK_USER_TYPE user_type, CK_UTF8CHAR *pin, CK_ULONG pin_len);
extern CK_RV rsakit_p11_Logout(CK_SESSION_HANDLE session);
RSAKIT_NOT_SUPPORTED(CreateObject, CK_SESSION_HANDLE session, CK_ATTRIBUTE *templ, CK_ULONG attribute_count, CK_OBJECT_HANDLE *object)
RSAKIT_NOT_SUPPORTED(CopyObject, CK_SESSION_HANDLE session, CK_OBJECT_HANDLE object, CK_ATTRIBUTE *templ, CK_ULONG attribute_count, CK_OBJECT_HANDLE *new_object)
RSAKIT_NOT_SUPPORTED(DestroyObject, CK_SESSION_HANDLE session, CK_OBJECT_HANDLE object)
RSAKIT_NOT_SUPPORTED(GetObjectSize, CK_SESSION_HANDLE session, CK_OBJECT_HANDLE object, CK_ULONG *size)
extern CK_RV rsakit_p11_GetAttributeValue(CK_SESSION_HANDLE session, CK_OBJECT_HANDLE object, CK_ATTRIBUTE *templ, CK_ULONG attribute_count);
RSAKIT_NOT_SUPPORTED(SetAttributeValue, CK_SESSION_HANDLE session, CK_OBJECT_HANDLE object, CK_ATTRIBUTE *templ, CK_ULONG attribute_count)
extern CK_RV rsakit_p11_FindObjectsInit(CK_SESSION_HANDLE session, CK_ATTRIBUTE *templ, CK_ULONG attribute_count);
extern CK_RV rsakit_p11_FindObjects(CK_SESSION_HANDLE session, CK_OBJECT_HANDLE *object, CK_ULONG max_object_count, CK_ULONG *object_count);
extern CK_RV rsakit_p11_FindObjectsFinal(CK_SESSION_HANDLE session);
RSAKIT_NOT_SUPPORTED(EncryptInit, CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_OBJECT_HANDLE key)
RSAKIT_NOT_SUPPORTED(Encrypt, CK_SESSION_HANDLE session, CK_BYTE *data, CK_ULONG data_len, CK_BYTE *encrypted_data, CK_ULONG *encrypted_data_len)
RSAKIT_NOT_SUPPORTED(EncryptUpdate, CK_SESSION_HANDLE session, CK_BYTE *part, CK_ULONG part_len, CK_BYTE *encrypted_part, CK_ULONG *encrypted_part_len)
RSAKIT_NOT_SUPPORTED(EncryptFinal, CK_SESSION_HANDLE session, CK_BYTE *last_encrypted_part, CK_ULONG *last_encrypted_part_len)
extern CK_RV rsakit_p11_DecryptInit(CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_OBJECT_HANDLE key);
extern CK_RV rsakit_p11_Decrypt(CK_SESSION_HANDLE session, CK_BYTE *encrypted_data, CK_ULONG encrypted_data_len, CK_BYTE *data, CK_ULONG *data_len);
RSAKIT_NOT_SUPPORTED(DecryptUpdate, CK_SESSION_HANDLE session, CK_BYTE *encrypted_part, CK_ULONG encrypted_part_len, CK_BYTE *part, CK_ULONG *part_len)
RSAKIT_NOT_SUPPORTED(DecryptFinal, CK_SESSION_HANDLE session, CK_BYTE *last_part, CK_ULONG *last_part_len)
RSAKIT_NOT_SUPPORTED(DigestInit, CK_SESSION_HANDLE session, CK_MECHANISM *mechanism)
RSAKIT_NOT_SUPPORTED(Digest, CK_SESSION_HANDLE session, CK_BYTE *data, CK_ULONG data_len, CK_BYTE *digest, CK_ULONG *digest_len)
RSAKIT_NOT_SUPPORTED(DigestUpdate, CK_SESSION_HANDLE session, CK_BYTE *part, CK_ULONG part_len)
RSAKIT_NOT_SUPPORTED(DigestKey, CK_SESSION_HANDLE session, CK_OBJECT_HANDLE key)
RSAKIT_NOT_SUPPORTED(DigestFinal, CK_SESSION_HANDLE session, CK_BYTE *digest, CK_ULONG *digest_len)
extern CK_RV rsakit_p11_SignInit(CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_OBJECT_HANDLE key);
extern CK_RV rsakit_p11_Sign(CK_SESSION_HANDLE session, CK_BYTE *data, CK_ULONG data_len, CK_BYTE *signature, CK_ULONG *signature_len);
extern CK_RV rsakit_p11_SignUpdate(CK_SESSION_HANDLE session, CK_BYTE *part, CK_ULONG part_len);
extern CK_RV rsakit_p11_SignFinal(CK_SESSION_HANDLE session, CK_BYTE *signature, CK_ULONG *signature_len);
RSAKIT_NOT_SUPPORTED(SignRecoverInit, CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_OBJECT_HANDLE key)
RSAKIT_NOT_SUPPORTED(SignRecover, CK_SESSION_HANDLE session, CK_BYTE *data, CK_ULONG data_len, CK_BYTE *signature, CK_ULONG *signature_len)
extern CK_RV rsakit_p11_VerifyInit(CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_OBJECT_HANDLE key);
extern CK_RV rsakit_p11_Verify(CK_SESSION_HANDLE session, CK_BYTE *data, CK_ULONG data_len, CK_BYTE *signature, CK_ULONG signature_len);
extern CK_RV rsakit_p11_VerifyUpdate(CK_SESSION_HANDLE session, CK_BYTE *part, CK_ULONG part_len);
extern CK_RV rsakit_p11_VerifyFinal(CK_SESSION_HANDLE session, CK_BYTE *signature, CK_ULONG signature_len);
RSAKIT_NOT_SUPPORTED(VerifyRecoverInit, CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_OBJECT_HANDLE key)
RSAKIT_NOT_SUPPORTED(VerifyRecover, CK_SESSION_HANDLE session, CK_BYTE *signature, CK_ULONG signature_len, CK_BYTE *data, CK_ULONG *data_len)
RSAKIT_NOT_SUPPORTED(DigestEncryptUpdate, CK_SESSION_HANDLE session, CK_BYTE *part, CK_ULONG part_len, CK_BYTE *encrypted_part, CK_ULONG *encrypted_part_len)
RSAKIT_NOT_SUPPORTED(DecryptDigestUpdate, CK_SESSION_HANDLE session, CK_BYTE *encrypted_part, CK_ULONG encrypted_part_len, CK_BYTE *part, CK_ULONG *part_len)
RSAKIT_NOT_SUPPORTED(SignEncryptUpdate, CK_SESSION_HANDLE session, CK_BYTE *part, CK_ULONG part_len, CK_BYTE *encrypted_part, CK_ULONG *encrypted_part_len)
RSAKIT_NOT_SUPPORTED(DecryptVerifyUpdate, CK_SESSION_HANDLE session, CK_BYTE *encrypted_part, CK_ULONG encrypted_part_len, CK_BYTE *part, CK_ULONG *part_len)
RSAKIT_NOT_SUPPORTED(GenerateKey, CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_ATTRIBUTE *templ, CK_ULONG attribute_count, CK_OBJECT_HANDLE *key)
RSAKIT_NOT_SUPPORTED(GenerateKeyPair, CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_ATTRIBUTE *public_key_template, CK_ULONG public_key_attribute_count, CK_ATTRIBUTE *private_key_template, CK_ULONG private_key_attribute_count, CK_OBJECT_HANDLE *public_key, CK_OBJECT_HANDLE *private_key)
RSAKIT_NOT_SUPPORTED(WrapKey, CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_OBJECT_HANDLE wrapping_key, CK_OBJECT_HANDLE key, CK_BYTE *wrapped_key, CK_ULONG *wrapped_key_len)
RSAKIT_NOT_SUPPORTED(UnwrapKey, CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_OBJECT_HANDLE unwrapping_key, CK_BYTE *wrapped_key, CK_ULONG wrapped_key_len, CK_ATTRIBUTE *templ, CK_ULONG attribute_count, CK_OBJECT_HANDLE *key)
RSAKIT_NOT_SUPPORTED(DeriveKey, CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_OBJECT_HANDLE base_key, CK_ATTRIBUTE *templ, CK_ULONG attribute_count, CK_OBJECT_HANDLE *key)
RSAKIT_NOT_SUPPORTED(SeedRandom, CK_SESSION_HANDLE session, CK_BYTE *seed, CK_ULONG seed_len)
extern CK_RV rsakit_p11_GenerateRandom(CK_SESSION_HANDLE session, CK_BYTE *random_data, CK_ULONG random_len);
RSAKIT_NOT_PARALLEL(GetFunctionStatus, CK_SESSION_HANDLE session)
RSAKIT_NOT_PARALLEL(CancelFunction, CK_SESSION_HANDLE session)
RSAKIT_NOT_SUPPORTED(WaitForSlotEvent, CK_FLAGS flags, CK_SLOT_ID *slot, void *reserved)

static CK_RV rsakit_c_GetFunctionList(CK_FUNCTION_LIST **function_list);

static CK_FUNCTION_LIST rsakit_function_list = {
    { CRYPTOKI_VERSION_MAJOR, CRYPTOKI_VERSION_MINOR },
    rsakit_p11_Initialize,
    rsakit_p11_Finalize,
    rsakit_p11_GetInfo,
    rsakit_c_GetFunctionList,
    rsakit_p11_GetSlotList,
    rsakit_p11_GetSlotInfo,
    rsakit_p11_GetTokenInfo,
    rsakit_p11_GetMechanismList,
    rsakit_p11_GetMechanismInfo,
    rsakit_c_InitToken,
    rsakit_c_InitPIN,
    rsakit_c_SetPIN,
    rsakit_c_OpenSession,
    rsakit_p11_CloseSession,
    rsakit_p11_CloseAllSessions,
    rsakit_p11_GetSessionInfo,
    rsakit_c_GetOperationState,
    rsakit_c_SetOperationState,
    rsakit_p11_Login,
    rsakit_p11_Logout,
    rsakit_c_CreateObject,
    rsakit_c_CopyObject,
    rsakit_c_DestroyObject,
    rsakit_c_GetObjectSize,
    rsakit_p11_GetAttributeValue,
    rsakit_c_SetAttributeValue,
    rsakit_p11_FindObjectsInit,
    rsakit_p11_FindObjects,
    rsakit_p11_FindObjectsFinal,
    rsakit_c_EncryptInit,
    rsakit_c_Encrypt,
    rsakit_c_EncryptUpdate,
    rsakit_c_EncryptFinal,
    rsakit_p11_DecryptInit,
    rsakit_p11_Decrypt,
    rsakit_c_DecryptUpdate,
    rsakit_c_DecryptFinal,
    rsakit_c_DigestInit,
    rsakit_c_Digest,
    rsakit_c_DigestUpdate,
    rsakit_c_DigestKey,
    rsakit_c_DigestFinal,
    rsakit_p11_SignInit,
    rsakit_p11_Sign,
    rsakit_p11_SignUpdate,
    rsakit_p11_SignFinal,
    rsakit_c_SignRecoverInit,
    rsakit_c_SignRecover,
    rsakit_p11_VerifyInit,
    rsakit_p11_Verify,
    rsakit_p11_VerifyUpdate,
    rsakit_p11_VerifyFinal,
    rsakit_c_VerifyRecoverInit,
    rsakit_c_VerifyRecover,
    rsakit_c_DigestEncryptUpdate,
    rsakit_c_DecryptDigestUpdate,
    rsakit_c_SignEncryptUpdate,
    rsakit_c_DecryptVerifyUpdate,
    rsakit_c_GenerateKey,
    rsakit_c_GenerateKeyPair,
    rsakit_c_WrapKey,
    rsakit_c_UnwrapKey,
    rsakit_c_DeriveKey,
    rsakit_c_SeedRandom,
    rsakit_p11_GenerateRandom,
    rsakit_c_GetFunctionStatus,
    rsakit_c_CancelFunction,
    rsakit_c_WaitForSlotEvent
};

static CK_RV rsakit_c_GetFunctionList(CK_FUNCTION_LIST **function_list) {
    if (function_list == NULL) {
        return CKR_ARGUMENTS_BAD;
    }
    *function_list = &rsakit_function_list;
    return CKR_OK;
}

/// PKCS#11 v2.40 §5.2: the module's one exported entry point. Callable before
/// C_Initialize; NULL gives CKR_ARGUMENTS_BAD.
RSAKIT_P11_EXPORT CK_RV C_GetFunctionList(CK_FUNCTION_LIST **function_list) {
    return rsakit_c_GetFunctionList(function_list);
}

CK_FUNCTION_LIST *rsakit_pkcs11_function_list(void) {
    return &rsakit_function_list;
}
