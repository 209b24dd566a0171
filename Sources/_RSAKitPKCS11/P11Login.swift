// C_Login and C_Logout (PKCS#11 v2.40 §5.6) over the store's passphrase or the keychain agent.
//
// The token's one user is CKU_USER; its PIN is the store passphrase. While `rsakit agent`
// runs (RSAKIT_AGENT_SOCK or the default socket) and holds this store unlocked, the token
// reports CKF_PROTECTED_AUTHENTICATION_PATH (C_GetTokenInfo), PKCS#11's way of saying the PIN
// is entered elsewhere: p11tool, pkcs11-tool, libp11 (curl and openssl's engine) and ssh then
// call C_Login with a NULL PIN, and the login succeeds through the agent, the store key staying
// in it (RSAKeyStore.unlock(agentSocketPath:)). A PIN of length zero does the same for hosts
// that prompt anyway. Without such an agent the flag is off, hosts ask for the passphrase, and
// a PIN of length zero is refused. An unprotected store does not set CKF_LOGIN_REQUIRED, and
// C_Login on it succeeds with any PIN. Nor does the system keychain's token (P11System.swift:
// the agent authenticates the host by its uid), which reports a protected authentication path.
internal import CP11Kit
import RSAKit

extension P11ModuleState {
    /// Whether a running agent holds this store's key (asked at each C_GetTokenInfo; a stopped
    /// agent costs at most its one-second answer timeout).
    var agentHoldsStoreKey: Bool {
        RSAKeychainAgent.status(at: RSAKeychainAgent.defaultSocketPath(), storePath: storePath)?.unlocked == true
    }

    /// C_Login for CKU_USER.
    /// - Throws: CKR_USER_TYPE_INVALID (CKU_SO, CKU_CONTEXT_SPECIFIC: there is no SO PIN and
    ///   no CKA_ALWAYS_AUTHENTICATE key); CKR_USER_ALREADY_LOGGED_IN; CKR_PIN_INCORRECT for a
    ///   wrong passphrase or an empty or NULL PIN with no agent holding the store (the store
    ///   is not changed either way); CKR_ARGUMENTS_BAD for a NULL PIN with a length.
    mutating func login(userType: CK_USER_TYPE, pin: UnsafePointer<UInt8>?, pinLength: CK_ULONG) throws {
        guard userType == CK_USER_TYPE(CKU_USER) else { throw P11Error(CK_RV(CKR_USER_TYPE_INVALID)) }
        guard !isLoggedIn else { throw P11Error(CK_RV(CKR_USER_ALREADY_LOGGED_IN)) }
        try openToken()
        let view = try P11Buffers.view(pin, pinLength)
        // An unprotected store, or the system keychain (the kernel's peer credentials are its
        // authentication, P11System.swift): nothing to check.
        guard isProtected, !isSystemToken else {
            isLoggedIn = true
            return
        }
        let store = try openStore()
        if view.isEmpty {
            guard (try? store.unlock(agentSocketPath: RSAKeychainAgent.defaultSocketPath())) == true else {
                throw P11Error(CK_RV(CKR_PIN_INCORRECT))
            }
        } else {
            // The PIN goes straight from the host's buffer into zeroed-on-release storage.
            let passphrase = RSASecretBytes(copying: view)
            do {
                try store.unlock(passphrase: passphrase)
            } catch RSAError.wrongPassphrase {
                throw P11Error(CK_RV(CKR_PIN_INCORRECT))
            }
        }
        isLoggedIn = true
    }

    /// C_Logout: forget the store key, end the operations holding a private key.
    /// - Throws: CKR_USER_NOT_LOGGED_IN.
    mutating func logout() throws {
        guard isLoggedIn else { throw P11Error(CK_RV(CKR_USER_NOT_LOGGED_IN)) }
        store?.lock()
        isLoggedIn = false
        endPrivateOperations()
    }
}
