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

extern CK_RV rsakit_p11_Initialize(void *init_args);
extern CK_RV rsakit_p11_Finalize(void *reserved);
extern CK_RV rsakit_p11_GetInfo(CK_INFO *info);
extern CK_RV rsakit_p11_GetSlotList(CK_BBOOL token_present, CK_SLOT_ID *slot_list, CK_ULONG *count);
extern CK_RV rsakit_p11_GetSlotInfo(CK_SLOT_ID slot_id, CK_SLOT_INFO *info);
extern CK_RV rsakit_p11_GetTokenInfo(CK_SLOT_ID slot_id, CK_TOKEN_INFO *info);
extern CK_RV rsakit_p11_GetMechanismList(CK_SLOT_ID slot_id, CK_MECHANISM_TYPE *mechanism_list, CK_ULONG *count);
extern CK_RV rsakit_p11_GetMechanismInfo(CK_SLOT_ID slot_id, CK_MECHANISM_TYPE type, CK_MECHANISM_INFO *info);
static CK_RV rsakit_c_InitToken(CK_SLOT_ID slot_id, CK_UTF8CHAR *pin, CK_ULONG pin_len, CK_UTF8CHAR *label) {
    (void)slot_id;
    (void)pin;
    (void)pin_len;
    (void)label;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_InitPIN(CK_SESSION_HANDLE session, CK_UTF8CHAR *pin, CK_ULONG pin_len) {
    (void)session;
    (void)pin;
    (void)pin_len;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_SetPIN(CK_SESSION_HANDLE session, CK_UTF8CHAR *old_pin, CK_ULONG old_len, CK_UTF8CHAR *new_pin, CK_ULONG new_len) {
    (void)session;
    (void)old_pin;
    (void)old_len;
    (void)new_pin;
    (void)new_len;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
extern CK_RV rsakit_p11_OpenSession(CK_SLOT_ID slot_id, CK_FLAGS flags, CK_SESSION_HANDLE *session);
static CK_RV rsakit_c_OpenSession(CK_SLOT_ID slot_id, CK_FLAGS flags, void *application, CK_NOTIFY notify, CK_SESSION_HANDLE *session) {
    (void)application;
    (void)notify;
    return rsakit_p11_OpenSession(slot_id, flags, session);
}
extern CK_RV rsakit_p11_CloseSession(CK_SESSION_HANDLE session);
extern CK_RV rsakit_p11_CloseAllSessions(CK_SLOT_ID slot_id);
extern CK_RV rsakit_p11_GetSessionInfo(CK_SESSION_HANDLE session, CK_SESSION_INFO *info);
static CK_RV rsakit_c_GetOperationState(CK_SESSION_HANDLE session, CK_BYTE *state, CK_ULONG *state_len) {
    (void)session;
    (void)state;
    (void)state_len;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_SetOperationState(CK_SESSION_HANDLE session, CK_BYTE *state, CK_ULONG state_len, CK_OBJECT_HANDLE encryption_key, CK_OBJECT_HANDLE authentication_key) {
    (void)session;
    (void)state;
    (void)state_len;
    (void)encryption_key;
    (void)authentication_key;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
extern CK_RV rsakit_p11_Login(CK_SESSION_HANDLE session, CK_USER_TYPE user_type, CK_UTF8CHAR *pin, CK_ULONG pin_len);
extern CK_RV rsakit_p11_Logout(CK_SESSION_HANDLE session);
static CK_RV rsakit_c_CreateObject(CK_SESSION_HANDLE session, CK_ATTRIBUTE *templ, CK_ULONG attribute_count, CK_OBJECT_HANDLE *object) {
    (void)session;
    (void)templ;
    (void)attribute_count;
    (void)object;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_CopyObject(CK_SESSION_HANDLE session, CK_OBJECT_HANDLE object, CK_ATTRIBUTE *templ, CK_ULONG attribute_count, CK_OBJECT_HANDLE *new_object) {
    (void)session;
    (void)object;
    (void)templ;
    (void)attribute_count;
    (void)new_object;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_DestroyObject(CK_SESSION_HANDLE session, CK_OBJECT_HANDLE object) {
    (void)session;
    (void)object;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_GetObjectSize(CK_SESSION_HANDLE session, CK_OBJECT_HANDLE object, CK_ULONG *size) {
    (void)session;
    (void)object;
    (void)size;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
extern CK_RV rsakit_p11_GetAttributeValue(CK_SESSION_HANDLE session, CK_OBJECT_HANDLE object, CK_ATTRIBUTE *templ, CK_ULONG attribute_count);
static CK_RV rsakit_c_SetAttributeValue(CK_SESSION_HANDLE session, CK_OBJECT_HANDLE object, CK_ATTRIBUTE *templ, CK_ULONG attribute_count) {
    (void)session;
    (void)object;
    (void)templ;
    (void)attribute_count;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
extern CK_RV rsakit_p11_FindObjectsInit(CK_SESSION_HANDLE session, CK_ATTRIBUTE *templ, CK_ULONG attribute_count);
extern CK_RV rsakit_p11_FindObjects(CK_SESSION_HANDLE session, CK_OBJECT_HANDLE *object, CK_ULONG max_object_count, CK_ULONG *object_count);
extern CK_RV rsakit_p11_FindObjectsFinal(CK_SESSION_HANDLE session);
static CK_RV rsakit_c_EncryptInit(CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_OBJECT_HANDLE key) {
    (void)session;
    (void)mechanism;
    (void)key;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_Encrypt(CK_SESSION_HANDLE session, CK_BYTE *data, CK_ULONG data_len, CK_BYTE *encrypted_data, CK_ULONG *encrypted_data_len) {
    (void)session;
    (void)data;
    (void)data_len;
    (void)encrypted_data;
    (void)encrypted_data_len;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_EncryptUpdate(CK_SESSION_HANDLE session, CK_BYTE *part, CK_ULONG part_len, CK_BYTE *encrypted_part, CK_ULONG *encrypted_part_len) {
    (void)session;
    (void)part;
    (void)part_len;
    (void)encrypted_part;
    (void)encrypted_part_len;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_EncryptFinal(CK_SESSION_HANDLE session, CK_BYTE *last_encrypted_part, CK_ULONG *last_encrypted_part_len) {
    (void)session;
    (void)last_encrypted_part;
    (void)last_encrypted_part_len;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
extern CK_RV rsakit_p11_DecryptInit(CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_OBJECT_HANDLE key);
extern CK_RV rsakit_p11_Decrypt(CK_SESSION_HANDLE session, CK_BYTE *encrypted_data, CK_ULONG encrypted_data_len, CK_BYTE *data, CK_ULONG *data_len);
static CK_RV rsakit_c_DecryptUpdate(CK_SESSION_HANDLE session, CK_BYTE *encrypted_part, CK_ULONG encrypted_part_len, CK_BYTE *part, CK_ULONG *part_len) {
    (void)session;
    (void)encrypted_part;
    (void)encrypted_part_len;
    (void)part;
    (void)part_len;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_DecryptFinal(CK_SESSION_HANDLE session, CK_BYTE *last_part, CK_ULONG *last_part_len) {
    (void)session;
    (void)last_part;
    (void)last_part_len;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_DigestInit(CK_SESSION_HANDLE session, CK_MECHANISM *mechanism) {
    (void)session;
    (void)mechanism;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_Digest(CK_SESSION_HANDLE session, CK_BYTE *data, CK_ULONG data_len, CK_BYTE *digest, CK_ULONG *digest_len) {
    (void)session;
    (void)data;
    (void)data_len;
    (void)digest;
    (void)digest_len;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_DigestUpdate(CK_SESSION_HANDLE session, CK_BYTE *part, CK_ULONG part_len) {
    (void)session;
    (void)part;
    (void)part_len;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_DigestKey(CK_SESSION_HANDLE session, CK_OBJECT_HANDLE key) {
    (void)session;
    (void)key;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_DigestFinal(CK_SESSION_HANDLE session, CK_BYTE *digest, CK_ULONG *digest_len) {
    (void)session;
    (void)digest;
    (void)digest_len;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
extern CK_RV rsakit_p11_SignInit(CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_OBJECT_HANDLE key);
extern CK_RV rsakit_p11_Sign(CK_SESSION_HANDLE session, CK_BYTE *data, CK_ULONG data_len, CK_BYTE *signature, CK_ULONG *signature_len);
extern CK_RV rsakit_p11_SignUpdate(CK_SESSION_HANDLE session, CK_BYTE *part, CK_ULONG part_len);
extern CK_RV rsakit_p11_SignFinal(CK_SESSION_HANDLE session, CK_BYTE *signature, CK_ULONG *signature_len);
static CK_RV rsakit_c_SignRecoverInit(CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_OBJECT_HANDLE key) {
    (void)session;
    (void)mechanism;
    (void)key;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_SignRecover(CK_SESSION_HANDLE session, CK_BYTE *data, CK_ULONG data_len, CK_BYTE *signature, CK_ULONG *signature_len) {
    (void)session;
    (void)data;
    (void)data_len;
    (void)signature;
    (void)signature_len;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
extern CK_RV rsakit_p11_VerifyInit(CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_OBJECT_HANDLE key);
extern CK_RV rsakit_p11_Verify(CK_SESSION_HANDLE session, CK_BYTE *data, CK_ULONG data_len, CK_BYTE *signature, CK_ULONG signature_len);
extern CK_RV rsakit_p11_VerifyUpdate(CK_SESSION_HANDLE session, CK_BYTE *part, CK_ULONG part_len);
extern CK_RV rsakit_p11_VerifyFinal(CK_SESSION_HANDLE session, CK_BYTE *signature, CK_ULONG signature_len);
static CK_RV rsakit_c_VerifyRecoverInit(CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_OBJECT_HANDLE key) {
    (void)session;
    (void)mechanism;
    (void)key;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_VerifyRecover(CK_SESSION_HANDLE session, CK_BYTE *signature, CK_ULONG signature_len, CK_BYTE *data, CK_ULONG *data_len) {
    (void)session;
    (void)signature;
    (void)signature_len;
    (void)data;
    (void)data_len;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_DigestEncryptUpdate(CK_SESSION_HANDLE session, CK_BYTE *part, CK_ULONG part_len, CK_BYTE *encrypted_part, CK_ULONG *encrypted_part_len) {
    (void)session;
    (void)part;
    (void)part_len;
    (void)encrypted_part;
    (void)encrypted_part_len;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_DecryptDigestUpdate(CK_SESSION_HANDLE session, CK_BYTE *encrypted_part, CK_ULONG encrypted_part_len, CK_BYTE *part, CK_ULONG *part_len) {
    (void)session;
    (void)encrypted_part;
    (void)encrypted_part_len;
    (void)part;
    (void)part_len;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_SignEncryptUpdate(CK_SESSION_HANDLE session, CK_BYTE *part, CK_ULONG part_len, CK_BYTE *encrypted_part, CK_ULONG *encrypted_part_len) {
    (void)session;
    (void)part;
    (void)part_len;
    (void)encrypted_part;
    (void)encrypted_part_len;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_DecryptVerifyUpdate(CK_SESSION_HANDLE session, CK_BYTE *encrypted_part, CK_ULONG encrypted_part_len, CK_BYTE *part, CK_ULONG *part_len) {
    (void)session;
    (void)encrypted_part;
    (void)encrypted_part_len;
    (void)part;
    (void)part_len;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_GenerateKey(CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_ATTRIBUTE *templ, CK_ULONG attribute_count, CK_OBJECT_HANDLE *key) {
    (void)session;
    (void)mechanism;
    (void)templ;
    (void)attribute_count;
    (void)key;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_GenerateKeyPair(CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_ATTRIBUTE *public_key_template, CK_ULONG public_key_attribute_count, CK_ATTRIBUTE *private_key_template, CK_ULONG private_key_attribute_count, CK_OBJECT_HANDLE *public_key, CK_OBJECT_HANDLE *private_key) {
    (void)session;
    (void)mechanism;
    (void)public_key_template;
    (void)public_key_attribute_count;
    (void)private_key_template;
    (void)private_key_attribute_count;
    (void)public_key;
    (void)private_key;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_WrapKey(CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_OBJECT_HANDLE wrapping_key, CK_OBJECT_HANDLE key, CK_BYTE *wrapped_key, CK_ULONG *wrapped_key_len) {
    (void)session;
    (void)mechanism;
    (void)wrapping_key;
    (void)key;
    (void)wrapped_key;
    (void)wrapped_key_len;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_UnwrapKey(CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_OBJECT_HANDLE unwrapping_key, CK_BYTE *wrapped_key, CK_ULONG wrapped_key_len, CK_ATTRIBUTE *templ, CK_ULONG attribute_count, CK_OBJECT_HANDLE *key) {
    (void)session;
    (void)mechanism;
    (void)unwrapping_key;
    (void)wrapped_key;
    (void)wrapped_key_len;
    (void)templ;
    (void)attribute_count;
    (void)key;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_DeriveKey(CK_SESSION_HANDLE session, CK_MECHANISM *mechanism, CK_OBJECT_HANDLE base_key, CK_ATTRIBUTE *templ, CK_ULONG attribute_count, CK_OBJECT_HANDLE *key) {
    (void)session;
    (void)mechanism;
    (void)base_key;
    (void)templ;
    (void)attribute_count;
    (void)key;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
static CK_RV rsakit_c_SeedRandom(CK_SESSION_HANDLE session, CK_BYTE *seed, CK_ULONG seed_len) {
    (void)session;
    (void)seed;
    (void)seed_len;
    return CKR_FUNCTION_NOT_SUPPORTED;
}
extern CK_RV rsakit_p11_GenerateRandom(CK_SESSION_HANDLE session, CK_BYTE *random_data, CK_ULONG random_len);
static CK_RV rsakit_c_GetFunctionStatus(CK_SESSION_HANDLE session) {
    (void)session;
    return CKR_FUNCTION_NOT_PARALLEL;
}
static CK_RV rsakit_c_CancelFunction(CK_SESSION_HANDLE session) {
    (void)session;
    return CKR_FUNCTION_NOT_PARALLEL;
}
static CK_RV rsakit_c_WaitForSlotEvent(CK_FLAGS flags, CK_SLOT_ID *slot, void *reserved) {
    (void)flags;
    (void)slot;
    (void)reserved;
    return CKR_FUNCTION_NOT_SUPPORTED;
}

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
