// PKCS#11 API checks of librsakit-pkcs11.so from C, as a host calls it (CLIPKCS11Tests runs
// this): the return codes PKCS#11 v2.40 prescribes for initialisation, NULL arguments,
// C_GetAttributeValue's length queries and sensitive attributes, the output-length convention
// of C_Sign, multi-part against single-part signing, verification, login, threads, and
// C_Initialize/C_Finalize repeated in one process.
//
//   PKCS11APIHarness MODULE LABEL [login-empty-pin-ok|login-empty-pin-refused]
//
// The store comes from RSAKIT_STORE. Prints one "ok: ..." line per check, "FAIL: ..." for a
// failed one, and exits 1 if any failed.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <p11-kit/pkcs11.h>

static int failures = 0;
static CK_FUNCTION_LIST *p11;

#define CHECK(condition, ...) do { \
    if (condition) { printf("ok: " __VA_ARGS__); printf("\n"); } \
    else { printf("FAIL (line %d): ", __LINE__); printf(__VA_ARGS__); printf("\n"); failures++; } \
} while (0)

#define EXPECT_RV(call, expected) do { \
    CK_RV rv_ = (call); \
    CHECK(rv_ == (CK_RV)(expected), "%s = 0x%lx (expected %s)", #call, (unsigned long)rv_, #expected); \
} while (0)

static CK_OBJECT_HANDLE find(CK_SESSION_HANDLE session, CK_OBJECT_CLASS objectClass, const char *label) {
    CK_ATTRIBUTE template[] = {
        { CKA_CLASS, &objectClass, sizeof objectClass },
        { CKA_LABEL, (void *)label, strlen(label) },
    };
    CK_OBJECT_HANDLE handle = CK_INVALID_HANDLE;
    CK_ULONG count = 0;
    if (p11->C_FindObjectsInit(session, template, 2) != CKR_OK) return CK_INVALID_HANDLE;
    p11->C_FindObjects(session, &handle, 1, &count);
    p11->C_FindObjectsFinal(session);
    return count == 1 ? handle : CK_INVALID_HANDLE;
}

/// The number of objects a search with an empty template finds (at most 256).
static long count_objects(CK_SESSION_HANDLE session) {
    CK_OBJECT_HANDLE handles[256];
    CK_ULONG count = 0;
    if (p11->C_FindObjectsInit(session, NULL, 0) != CKR_OK) return -1;
    if (p11->C_FindObjects(session, handles, 256, &count) != CKR_OK) count = (CK_ULONG)-1;
    p11->C_FindObjectsFinal(session);
    return (long)count;
}

/// Run `command` (a shell command line from the environment); 1 when it exited 0.
static int run_command(const char *command) {
    int status = system(command);
    return status == 0;
}

struct thread_job { CK_OBJECT_CLASS unused; const char *label; int failures; };

static void *sign_in_thread(void *argument) {
    struct thread_job *job = argument;
    CK_SESSION_HANDLE session;
    if (p11->C_OpenSession(0, CKF_SERIAL_SESSION, NULL, NULL, &session) != CKR_OK) { job->failures++; return NULL; }
    CK_OBJECT_HANDLE key = find(session, CKO_PRIVATE_KEY, job->label);
    CK_MECHANISM mechanism = { CKM_SHA256_RSA_PKCS, NULL, 0 };
    for (int i = 0; i < 10; i++) {
        unsigned char data[32] = { (unsigned char)i }, signature[2048];
        CK_ULONG length = sizeof signature;
        if (p11->C_SignInit(session, &mechanism, key) != CKR_OK ||
            p11->C_Sign(session, data, sizeof data, signature, &length) != CKR_OK) job->failures++;
    }
    p11->C_CloseSession(session);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s MODULE LABEL [login-empty-pin-ok|login-empty-pin-refused]\n", argv[0]); return 2; }
    const char *label = argv[2];
    const char *loginMode = argc > 3 ? argv[3] : "";
    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!library) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 2; }
    CK_C_GetFunctionList getFunctionList = (CK_C_GetFunctionList)dlsym(library, "C_GetFunctionList");
    if (!getFunctionList) { fprintf(stderr, "no C_GetFunctionList\n"); return 2; }

    EXPECT_RV(getFunctionList(NULL), CKR_ARGUMENTS_BAD);
    EXPECT_RV(getFunctionList(&p11), CKR_OK);
    CHECK(p11->version.major == 2 && p11->version.minor == 40, "function list version %d.%d", p11->version.major, p11->version.minor);

    CK_INFO info;
    EXPECT_RV(p11->C_GetInfo(&info), CKR_CRYPTOKI_NOT_INITIALIZED);
    CK_C_INITIALIZE_ARGS badArgs = { NULL, NULL, NULL, NULL, CKF_OS_LOCKING_OK, (void *)1 };
    EXPECT_RV(p11->C_Initialize(&badArgs), CKR_ARGUMENTS_BAD);
    CK_C_INITIALIZE_ARGS args = { NULL, NULL, NULL, NULL, CKF_OS_LOCKING_OK, NULL };
    EXPECT_RV(p11->C_Initialize(&args), CKR_OK);
    EXPECT_RV(p11->C_Initialize(NULL), CKR_CRYPTOKI_ALREADY_INITIALIZED);
    EXPECT_RV(p11->C_GetInfo(NULL), CKR_ARGUMENTS_BAD);
    EXPECT_RV(p11->C_GetInfo(&info), CKR_OK);

    CK_ULONG slotCount = 0;
    EXPECT_RV(p11->C_GetSlotList(CK_TRUE, NULL, NULL), CKR_ARGUMENTS_BAD);
    EXPECT_RV(p11->C_GetSlotList(CK_TRUE, NULL, &slotCount), CKR_OK);
    CHECK(slotCount == 1, "one slot with a token (%lu)", (unsigned long)slotCount);
    CK_TOKEN_INFO token;
    EXPECT_RV(p11->C_GetTokenInfo(7, &token), CKR_SLOT_ID_INVALID);
    EXPECT_RV(p11->C_GetTokenInfo(0, &token), CKR_OK);
    CK_MECHANISM_INFO mechanismInfo;
    EXPECT_RV(p11->C_GetMechanismInfo(0, CKM_RSA_X_509, &mechanismInfo), CKR_MECHANISM_INVALID);
    EXPECT_RV(p11->C_GetMechanismInfo(0, CKM_RSA_PKCS_OAEP, &mechanismInfo), CKR_OK);
    CHECK((mechanismInfo.flags & CKF_DECRYPT) && !(mechanismInfo.flags & CKF_SIGN), "OAEP: decrypt only");

    CK_SESSION_HANDLE session;
    EXPECT_RV(p11->C_OpenSession(0, 0, NULL, NULL, &session), CKR_SESSION_PARALLEL_NOT_SUPPORTED);
    EXPECT_RV(p11->C_OpenSession(0, CKF_SERIAL_SESSION, NULL, NULL, NULL), CKR_ARGUMENTS_BAD);
    EXPECT_RV(p11->C_OpenSession(0, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &session), CKR_OK);

    if (strcmp(loginMode, "login-empty-pin-ok") == 0) {
        CHECK(token.flags & CKF_LOGIN_REQUIRED, "protected store: CKF_LOGIN_REQUIRED");
        CHECK(find(session, CKO_PRIVATE_KEY, label) == CK_INVALID_HANDLE, "no private key before login");
        EXPECT_RV(p11->C_Login(session, CKU_SO, NULL, 0), CKR_USER_TYPE_INVALID);
        EXPECT_RV(p11->C_Login(session, CKU_USER, NULL, 0), CKR_OK);
        EXPECT_RV(p11->C_Login(session, CKU_USER, NULL, 0), CKR_USER_ALREADY_LOGGED_IN);
    } else if (strcmp(loginMode, "login-empty-pin-refused") == 0) {
        EXPECT_RV(p11->C_Login(session, CKU_USER, NULL, 0), CKR_PIN_INCORRECT);
        EXPECT_RV(p11->C_Login(session, CKU_USER, NULL, 5), CKR_ARGUMENTS_BAD);
        p11->C_Finalize(NULL);
        return failures ? 1 : 0;
    } else {
        CHECK(!(token.flags & CKF_LOGIN_REQUIRED), "unprotected store: no CKF_LOGIN_REQUIRED");
    }

    CK_OBJECT_HANDLE privateKey = find(session, CKO_PRIVATE_KEY, label);
    CK_OBJECT_HANDLE publicKey = find(session, CKO_PUBLIC_KEY, label);
    CHECK(privateKey != CK_INVALID_HANDLE && publicKey != CK_INVALID_HANDLE, "found the key pair labelled %s", label);

    // C_GetAttributeValue (§5.7): a length query, a short buffer, sensitive and invalid types.
    CK_ATTRIBUTE modulus = { CKA_MODULUS, NULL, 0 };
    EXPECT_RV(p11->C_GetAttributeValue(session, privateKey, &modulus, 1), CKR_OK);
    CK_ULONG k = modulus.ulValueLen;
    CHECK(k == 256, "CKA_MODULUS length query: %lu bytes", (unsigned long)k);
    unsigned char small[8];
    CK_ATTRIBUTE shortBuffer = { CKA_MODULUS, small, sizeof small };
    EXPECT_RV(p11->C_GetAttributeValue(session, privateKey, &shortBuffer, 1), CKR_BUFFER_TOO_SMALL);
    CHECK(shortBuffer.ulValueLen == CK_UNAVAILABLE_INFORMATION, "short buffer: CK_UNAVAILABLE_INFORMATION");
    CK_OBJECT_CLASS objectClass = 0;
    CK_BBOOL sensitive = CK_FALSE, extractable = CK_TRUE;
    unsigned char prime[512];
    CK_ATTRIBUTE mixed[] = {
        { CKA_CLASS, &objectClass, sizeof objectClass },
        { CKA_PRIME_1, prime, sizeof prime },
        { CKA_SENSITIVE, &sensitive, sizeof sensitive },
        { CKA_EXTRACTABLE, &extractable, sizeof extractable },
        { CKA_VALUE, prime, sizeof prime },
    };
    EXPECT_RV(p11->C_GetAttributeValue(session, privateKey, mixed, 5), CKR_ATTRIBUTE_TYPE_INVALID);
    CHECK(objectClass == CKO_PRIVATE_KEY && mixed[0].ulValueLen == sizeof objectClass, "CKA_CLASS filled beside failing attributes");
    CHECK(mixed[1].ulValueLen == CK_UNAVAILABLE_INFORMATION, "CKA_PRIME_1 unavailable");
    CHECK(sensitive == CK_TRUE && extractable == CK_FALSE, "CKA_SENSITIVE true, CKA_EXTRACTABLE false");
    CHECK(mixed[4].ulValueLen == CK_UNAVAILABLE_INFORMATION, "CKA_VALUE of a private key: unavailable");
    CK_ATTRIBUTE exponent = { CKA_PRIVATE_EXPONENT, NULL, 0 };
    EXPECT_RV(p11->C_GetAttributeValue(session, privateKey, &exponent, 1), CKR_ATTRIBUTE_SENSITIVE);
    EXPECT_RV(p11->C_GetAttributeValue(session, privateKey, NULL, 1), CKR_ARGUMENTS_BAD);
    EXPECT_RV(p11->C_GetAttributeValue(session, 999999, &modulus, 1), CKR_OBJECT_HANDLE_INVALID);
    unsigned char privateID[64], publicID[64];
    CK_ATTRIBUTE privateIDAttribute = { CKA_ID, privateID, sizeof privateID }, publicIDAttribute = { CKA_ID, publicID, sizeof publicID };
    p11->C_GetAttributeValue(session, privateKey, &privateIDAttribute, 1);
    p11->C_GetAttributeValue(session, publicKey, &publicIDAttribute, 1);
    CHECK(privateIDAttribute.ulValueLen == 32 && publicIDAttribute.ulValueLen == 32 && memcmp(privateID, publicID, 32) == 0,
          "CKA_ID: the same 32 bytes on both halves");

    // C_Sign's output convention, and refused mechanisms.
    CK_MECHANISM raw = { CKM_RSA_X_509, NULL, 0 }, pkcs = { CKM_SHA256_RSA_PKCS, NULL, 0 };
    EXPECT_RV(p11->C_SignInit(session, &raw, privateKey), CKR_MECHANISM_INVALID);
    EXPECT_RV(p11->C_DecryptInit(session, &raw, privateKey), CKR_MECHANISM_INVALID);
    EXPECT_RV(p11->C_SignInit(session, NULL, privateKey), CKR_ARGUMENTS_BAD);
    EXPECT_RV(p11->C_SignInit(session, &pkcs, publicKey), CKR_KEY_TYPE_INCONSISTENT);
    CK_RSA_PKCS_PSS_PARAMS wrongHash = { CKM_SHA384, CKG_MGF1_SHA384, 48 };
    CK_MECHANISM pssWrong = { CKM_SHA256_RSA_PKCS_PSS, &wrongHash, sizeof wrongHash };
    EXPECT_RV(p11->C_SignInit(session, &pssWrong, privateKey), CKR_MECHANISM_PARAM_INVALID);
    unsigned char message[100];
    for (int i = 0; i < (int)sizeof message; i++) message[i] = (unsigned char)(i * 7);
    unsigned char single[2048], multi[2048], tiny[16];
    CK_ULONG singleLength = 0, multiLength = sizeof multi, tinyLength = sizeof tiny;
    EXPECT_RV(p11->C_SignInit(session, &pkcs, privateKey), CKR_OK);
    EXPECT_RV(p11->C_SignInit(session, &pkcs, privateKey), CKR_OPERATION_ACTIVE);
    EXPECT_RV(p11->C_Sign(session, message, sizeof message, NULL, &singleLength), CKR_OK);
    CHECK(singleLength == k, "C_Sign length query: k = %lu", (unsigned long)singleLength);
    EXPECT_RV(p11->C_Sign(session, message, sizeof message, tiny, &tinyLength), CKR_BUFFER_TOO_SMALL);
    CHECK(tinyLength == k, "short buffer: needed length k");
    singleLength = sizeof single;
    EXPECT_RV(p11->C_Sign(session, message, sizeof message, single, &singleLength), CKR_OK);
    EXPECT_RV(p11->C_Sign(session, message, sizeof message, single, &singleLength), CKR_OPERATION_NOT_INITIALIZED);
    EXPECT_RV(p11->C_SignInit(session, &pkcs, privateKey), CKR_OK);
    EXPECT_RV(p11->C_SignUpdate(session, message, 40), CKR_OK);
    EXPECT_RV(p11->C_SignUpdate(session, message + 40, sizeof message - 40), CKR_OK);
    EXPECT_RV(p11->C_SignFinal(session, multi, &multiLength), CKR_OK);
    CHECK(multiLength == k && memcmp(single, multi, k) == 0, "multi-part SHA256-RSA-PKCS = single-part (deterministic padding)");
    EXPECT_RV(p11->C_VerifyInit(session, &pkcs, publicKey), CKR_OK);
    EXPECT_RV(p11->C_Verify(session, message, sizeof message, single, singleLength), CKR_OK);
    single[3] ^= 1;
    EXPECT_RV(p11->C_VerifyInit(session, &pkcs, publicKey), CKR_OK);
    EXPECT_RV(p11->C_Verify(session, message, sizeof message, single, singleLength), CKR_SIGNATURE_INVALID);

    // C_Decrypt: the length query gives k; a block that decrypts to no valid padding (c = 0)
    // and one not below n (all 0xFF) give the same opaque CKR_ENCRYPTED_DATA_INVALID.
    CK_MECHANISM decryptPKCS = { CKM_RSA_PKCS, NULL, 0 };
    CK_RSA_PKCS_OAEP_PARAMS oaepParameters = { CKM_SHA256, CKG_MGF1_SHA256, CKZ_DATA_SPECIFIED, NULL, 0 };
    CK_MECHANISM decryptOAEP = { CKM_RSA_PKCS_OAEP, &oaepParameters, sizeof oaepParameters };
    unsigned char block[2048], plain[2048];
    CK_ULONG plainLength = 0;
    memset(block, 0, k);
    EXPECT_RV(p11->C_DecryptInit(session, &decryptPKCS, privateKey), CKR_OK);
    EXPECT_RV(p11->C_Decrypt(session, block, k, NULL, &plainLength), CKR_OK);
    CHECK(plainLength == k, "C_Decrypt length query: k");
    plainLength = sizeof plain;
    EXPECT_RV(p11->C_Decrypt(session, block, k, plain, &plainLength), CKR_ENCRYPTED_DATA_INVALID);
    memset(block, 0xFF, k);
    EXPECT_RV(p11->C_DecryptInit(session, &decryptOAEP, privateKey), CKR_OK);
    plainLength = sizeof plain;
    EXPECT_RV(p11->C_Decrypt(session, block, k, plain, &plainLength), CKR_ENCRYPTED_DATA_INVALID);
    EXPECT_RV(p11->C_Decrypt(session, block, k, plain, &plainLength), CKR_OPERATION_NOT_INITIALIZED);
    // A real ciphertext (PKCS11_HARNESS_CIPHERTEXT, PKCS#1 v1.5 of PKCS11_HARNESS_PLAINTEXT,
    // made by openssl): a short buffer gives CKR_BUFFER_TOO_SMALL and the exact length, the
    // operation stays, and the next call with room decrypts.
    const char *ciphertextPath = getenv("PKCS11_HARNESS_CIPHERTEXT"), *plaintextPath = getenv("PKCS11_HARNESS_PLAINTEXT");
    if (ciphertextPath && plaintextPath) {
        unsigned char expected[2048];
        FILE *file = fopen(ciphertextPath, "rb");
        size_t blockLength = file ? fread(block, 1, sizeof block, file) : 0;
        if (file) fclose(file);
        file = fopen(plaintextPath, "rb");
        size_t expectedLength = file ? fread(expected, 1, sizeof expected, file) : 0;
        if (file) fclose(file);
        CHECK(blockLength == k && expectedLength > 0, "read the ciphertext (%zu bytes) and plaintext (%zu bytes)", blockLength, expectedLength);
        unsigned char one[1];
        CK_ULONG oneLength = sizeof one;
        EXPECT_RV(p11->C_DecryptInit(session, &decryptPKCS, privateKey), CKR_OK);
        EXPECT_RV(p11->C_Decrypt(session, block, k, one, &oneLength), CKR_BUFFER_TOO_SMALL);
        CHECK(oneLength == expectedLength, "short buffer: the plaintext's length %lu", (unsigned long)oneLength);
        plainLength = sizeof plain;
        EXPECT_RV(p11->C_Decrypt(session, block, k, plain, &plainLength), CKR_OK);
        CHECK(plainLength == expectedLength && memcmp(plain, expected, expectedLength) == 0, "then the plaintext");
    }
    oaepParameters.mgf = 0x77;
    EXPECT_RV(p11->C_DecryptInit(session, &decryptOAEP, privateKey), CKR_MECHANISM_PARAM_INVALID);

    // Threads: four sessions signing at once.
    pthread_t threads[4];
    struct thread_job jobs[4];
    for (int i = 0; i < 4; i++) { jobs[i] = (struct thread_job){ 0, label, 0 }; pthread_create(&threads[i], NULL, sign_in_thread, &jobs[i]); }
    int threadFailures = 0;
    for (int i = 0; i < 4; i++) { pthread_join(threads[i], NULL); threadFailures += jobs[i].failures; }
    CHECK(threadFailures == 0, "4 threads x 10 signatures: %d failures", threadFailures);

    EXPECT_RV(p11->C_CloseSession(session), CKR_OK);
    EXPECT_RV(p11->C_CloseSession(session), CKR_SESSION_HANDLE_INVALID);
    EXPECT_RV(p11->C_Finalize((void *)1), CKR_ARGUMENTS_BAD);
    EXPECT_RV(p11->C_Finalize(NULL), CKR_OK);
    EXPECT_RV(p11->C_Finalize(NULL), CKR_CRYPTOKI_NOT_INITIALIZED);
    EXPECT_RV(p11->C_OpenSession(0, CKF_SERIAL_SESSION, NULL, NULL, &session), CKR_CRYPTOKI_NOT_INITIALIZED);
    // Again, in the same process.
    EXPECT_RV(p11->C_Initialize(NULL), CKR_OK);
    EXPECT_RV(p11->C_OpenSession(0, CKF_SERIAL_SESSION, NULL, NULL, &session), CKR_OK);
    // Changes made by `rsakit` while the host runs (PKCS11_HARNESS_ADD_COMMAND adds a key pair
    // labelled PKCS11_HARNESS_ADDED_LABEL, PKCS11_HARNESS_DELETE_COMMAND deletes it) appear at
    // the next search: after a quiet spell (the module's reading is kept while the store's
    // stamp is settled and unchanged), right after another change (a stamp not yet settled),
    // and across C_Finalize and C_Initialize (the reading outlives them).
    const char *addCommand = getenv("PKCS11_HARNESS_ADD_COMMAND"), *deleteCommand = getenv("PKCS11_HARNESS_DELETE_COMMAND");
    const char *addedLabel = getenv("PKCS11_HARNESS_ADDED_LABEL");
    if (addCommand && deleteCommand && addedLabel) {
        long before = count_objects(session);
        sleep(3);
        CHECK(count_objects(session) == before && count_objects(session) == before, "after a quiet spell, %ld objects, twice", before);
        CHECK(run_command(addCommand), "add command: %s", addCommand);
        CHECK(count_objects(session) == before + 2, "a key pair added: %ld objects, expected %ld", count_objects(session), before + 2);
        CHECK(find(session, CKO_PRIVATE_KEY, addedLabel) != CK_INVALID_HANDLE, "the added private key is found by its label");
        CHECK(run_command(deleteCommand), "delete command, at once: %s", deleteCommand);
        CHECK(count_objects(session) == before, "deleted at once: %ld objects, expected %ld", count_objects(session), before);
        CHECK(find(session, CKO_PRIVATE_KEY, addedLabel) == CK_INVALID_HANDLE, "the deleted private key is not found");
        sleep(3);
        CHECK(count_objects(session) == before, "a quiet spell again: %ld objects", before);
        EXPECT_RV(p11->C_Finalize(NULL), CKR_OK);
        CHECK(run_command(addCommand), "add command, between C_Finalize and C_Initialize");
        EXPECT_RV(p11->C_Initialize(NULL), CKR_OK);
        EXPECT_RV(p11->C_OpenSession(0, CKF_SERIAL_SESSION, NULL, NULL, &session), CKR_OK);
        CHECK(count_objects(session) == before + 2, "after C_Initialize again: %ld objects, expected %ld", count_objects(session), before + 2);
    }
    EXPECT_RV(p11->C_Finalize(NULL), CKR_OK);
    printf("%s: %d failures\n", failures ? "FAILED" : "PASSED", failures);
    return failures ? 1 : 0;
}
