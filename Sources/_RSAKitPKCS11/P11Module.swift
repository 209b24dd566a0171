// The module's state between C_Initialize and C_Finalize, behind one lock (CKF_OS_LOCKING_OK:
// a host may call any function from any thread; PKCS#11 v2.40 §5.1.6). One slot, 0, whose
// token is the key store: RSAKIT_STORE, else the default store, as the `rsakit` CLI resolves it,
// seen through the access groups of RSAKIT_PKCS11_ACCESS_GROUPS ("g1,g2") when it is set, so
// that a program run for one service (curl, a web server) sees that service's identity only.
// The RSA operations of C_Sign, C_SignFinal and C_Decrypt run outside the lock
// (P11Output.swift); loading a key from the store (C_SignInit, C_DecryptInit) runs inside it.
// With RSAKIT_PKCS11_SYSTEM=1 the slot's token is the system keychain instead (P11System.swift).
internal import CP11Kit
import RSAKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A signature or verification in progress: what C_SignUpdate and C_VerifyUpdate feed.
protocol P11SignatureOperation {
    /// The message (or its running hash) so far.
    var input: P11SignatureInput { get set }
}

/// A signature in progress in a session.
struct P11SignOperation: P11SignatureOperation {
    let key: P11PrivateKey
    var input: P11SignatureInput
}

/// A verification in progress.
struct P11VerifyOperation: P11SignatureOperation {
    let key: RSAPublicKey
    var input: P11SignatureInput
}

/// A decryption in progress (single-part only).
struct P11DecryptOperation {
    let key: P11PrivateKey
    let padding: RSAEncryptionPadding
}

/// One session (§5.6): its flags, and at most one search, signature, verification and
/// decryption in progress.
struct P11Session {
    let flags: CK_FLAGS
    var search: [CK_OBJECT_HANDLE]?
    var sign: P11SignOperation?
    var verify: P11VerifyOperation?
    var decrypt: P11DecryptOperation?
}

/// Everything the module holds between C_Initialize and C_Finalize.
struct P11ModuleState {
    /// The one slot's ID.
    static let slotID: CK_SLOT_ID = 0

    var isInitialized = false
    /// The process that called C_Initialize: a forked child must call C_Initialize again
    /// (§5.4 "fork"), and until then the parent's state is not its own.
    var initializedProcess: pid_t = 0
    /// The store path resolved at C_Initialize.
    var storePath = ""
    /// The access groups the token shows (RSAKIT_PKCS11_ACCESS_GROUPS, read at C_Initialize),
    /// in order; nil: every group. A list with a name that is not a valid group leaves the
    /// token absent rather than showing every group.
    var accessGroups: [String]?

    /// The groups of RSAKIT_PKCS11_ACCESS_GROUPS: comma-separated names, spaces around each
    /// ignored; nil when the variable is unset or holds no name.
    static func accessGroups(fromEnvironment value: String?) -> [String]? {
        guard let value else { return nil }
        let names = value.split(separator: ",").map { String($0.trimmingPrefix(" ")).trimmingSuffixSpaces() }
            .filter { !$0.isEmpty }
        return names.isEmpty ? nil : names
    }
    /// The system agent's socket when RSAKIT_PKCS11_SYSTEM is 1 at C_Initialize (then
    /// RSAKIT_SYSTEM_SOCKET, else /run/rsakit/system.sock): the slot is the system keychain
    /// (P11System.swift), not a store. nil: the store.
    var systemSocketPath: String?
    /// The system agent's last listing for this user (nil: not asked yet, or refused).
    var systemObjects: [RSASystemKeychainObject]?
    /// The store, once it opens (nil: CKF_TOKEN_PRESENT is not set).
    var store: RSAKeyStore?
    /// Whether the store is passphrase-protected (CKF_LOGIN_REQUIRED), read when it opens.
    var isProtected = false
    /// Whether CKU_USER is logged in (all sessions share it, §5.6).
    var isLoggedIn = false
    var sessions: [CK_SESSION_HANDLE: P11Session] = [:]
    var nextSession: CK_SESSION_HANDLE = 1
    var objects = P11ObjectTable()

    /// The store, opened on first need (a store created after C_Initialize appears then).
    /// - Throws: CKR_TOKEN_NOT_PRESENT when it does not open.
    mutating func openStore() throws -> RSAKeyStore {
        if let store { return store }
        do {
            let opened =
                try accessGroups.map { try RSAKeyStore(path: storePath, accessGroups: $0, createIfMissing: false) }
                ?? RSAKeyStore(path: storePath, createIfMissing: false)
            isProtected = try opened.isProtected
            store = opened
            return opened
        } catch {
            throw P11Error(CK_RV(CKR_TOKEN_NOT_PRESENT))
        }
    }

    /// Whether private objects are visible and usable: logged in, or nothing to log in to.
    var canUsePrivateObjects: Bool { isLoggedIn || !isProtected }

    /// The session `handle`.
    /// - Throws: CKR_SESSION_HANDLE_INVALID.
    func session(_ handle: CK_SESSION_HANDLE) throws -> P11Session {
        guard let session = sessions[handle] else { throw P11Error(CK_RV(CKR_SESSION_HANDLE_INVALID)) }
        return session
    }

    /// Change session `handle` in place.
    mutating func withSession<R>(_ handle: CK_SESSION_HANDLE, _ body: (inout P11Session) throws -> R) throws -> R {
        guard var session = sessions[handle] else { throw P11Error(CK_RV(CKR_SESSION_HANDLE_INVALID)) }
        defer { sessions[handle] = session }
        return try body(&session)
    }

    /// Drop every session's operations that hold a private key (C_Logout, §5.6).
    mutating func endPrivateOperations() {
        for handle in sessions.keys {
            sessions[handle]?.sign = nil
            sessions[handle]?.decrypt = nil
        }
    }
}

/// The module's one state, for all threads of the host.
let p11Module = RSAPThreadMutex(P11ModuleState())

/// Run an entry point's body under the lock, after the CKR_CRYPTOKI_NOT_INITIALIZED check,
/// turning every thrown error into its CKR_ code.
func p11Entry(_ body: (inout P11ModuleState) throws -> CK_RV) -> CK_RV {
    p11Module.withLock { state in
        guard state.isInitialized, state.initializedProcess == getpid() else {
            return CK_RV(CKR_CRYPTOKI_NOT_INITIALIZED)
        }
        do {
            return try body(&state)
        } catch {
            return P11Error.returnValue(for: error)
        }
    }
}

extension String {
    /// The string without its trailing spaces.
    fileprivate func trimmingSuffixSpaces() -> String {
        var text = Substring(self)
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
