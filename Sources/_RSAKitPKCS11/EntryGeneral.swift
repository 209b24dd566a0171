// General-purpose, slot, token and session entry points (PKCS#11 v2.40 §5.4-5.6), each a
// C function the table in Sources/CRSAKitPKCS11 points at. Every body runs under the module
// lock and returns a CKR_ code; no Swift error or trap leaves these functions.
internal import CP11Kit
import RSAKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@_cdecl("rsakit_p11_Initialize")
func rsakit_p11_Initialize(_ initArgs: UnsafeMutableRawPointer?) -> CK_RV {
    if let initArgs {
        let args = UnsafeRawPointer(initArgs).loadUnaligned(as: CK_C_INITIALIZE_ARGS.self)
        guard args.pReserved == nil else { return CK_RV(CKR_ARGUMENTS_BAD) }
        let supplied = [
            args.CreateMutex != nil, args.DestroyMutex != nil, args.LockMutex != nil, args.UnlockMutex != nil
        ]
        // §5.4: all four mutex functions or none.
        guard supplied.allSatisfy({ $0 }) || supplied.allSatisfy({ !$0 }) else { return CK_RV(CKR_ARGUMENTS_BAD) }
        // The module locks with pthread mutexes; it cannot use the host's functions instead.
        if supplied[0], args.flags & CK_FLAGS(CKF_OS_LOCKING_OK) == 0 { return CK_RV(CKR_CANT_LOCK) }
    }
    return p11Module.withLock { state in
        // A forked child inherits the parent's state: it starts afresh (the parent's sessions
        // and login are not the child's).
        guard !state.isInitialized || state.initializedProcess != getpid() else {
            return CK_RV(CKR_CRYPTOKI_ALREADY_INITIALIZED)
        }
        state = P11ModuleState()
        state.isInitialized = true
        state.initializedProcess = getpid()
        // RSAKIT_STORE, else $XDG_DATA_HOME/rsakit or ~/.local/share/rsakit, as the CLI does;
        // "" (no token) when none of them gives a folder.
        // Only the three variables it reads, with getenv: copying the whole environment into
        // a dictionary (ProcessInfo) was a tenth of the module's own work in a signing process.
        var environment: [String: String] = [:]
        for name in ["RSAKIT_STORE", "XDG_DATA_HOME", "HOME"] {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        state.storePath = (try? RSAKeyStore.defaultLocation(environment: environment)) ?? ""
        state.accessGroups = P11ModuleState.accessGroups(
            fromEnvironment: getenv("RSAKIT_PKCS11_ACCESS_GROUPS").map { String(cString: $0) })
        // RSAKIT_PKCS11_SYSTEM=1: the system keychain, through its agent (P11System.swift).
        if getenv("RSAKIT_PKCS11_SYSTEM").map({ String(cString: $0) }) == "1" {
            var socketEnvironment: [String: String] = [:]
            if let value = getenv("RSAKIT_SYSTEM_SOCKET") {
                socketEnvironment["RSAKIT_SYSTEM_SOCKET"] = String(cString: value)
            }
            state.systemSocketPath = RSASystemKeychain.defaultSocketPath(environment: socketEnvironment)
        }
        return CK_RV(CKR_OK)
    }
}

@_cdecl("rsakit_p11_Finalize")
func rsakit_p11_Finalize(_ reserved: UnsafeMutableRawPointer?) -> CK_RV {
    guard reserved == nil else { return CK_RV(CKR_ARGUMENTS_BAD) }
    return p11Entry { state in
        state.store?.lock()
        // Sessions, operations (and the private keys they hold) and object handles go.
        state = P11ModuleState()
        return CK_RV(CKR_OK)
    }
}

@_cdecl("rsakit_p11_GetInfo")
func rsakit_p11_GetInfo(_ info: UnsafeMutablePointer<CK_INFO>?) -> CK_RV {
    p11Entry { _ in
        guard let info else { return CK_RV(CKR_ARGUMENTS_BAD) }
        var value = CK_INFO()
        value.cryptokiVersion = CK_VERSION(major: 2, minor: 40)
        P11Buffers.fill(&value.manufacturerID, with: "rsakit")
        value.flags = 0
        P11Buffers.fill(&value.libraryDescription, with: "rsakit keychain PKCS#11 module")
        value.libraryVersion = CK_VERSION(major: 0, minor: 1)
        info.pointee = value
        return CK_RV(CKR_OK)
    }
}

@_cdecl("rsakit_p11_GetSlotList")
func rsakit_p11_GetSlotList(
    _ tokenPresent: CK_BBOOL, _ slotList: UnsafeMutablePointer<CK_SLOT_ID>?, _ count: UnsafeMutablePointer<CK_ULONG>?
) -> CK_RV {
    p11Entry { state in
        guard let count else { return CK_RV(CKR_ARGUMENTS_BAD) }
        let present = (try? state.openToken()) != nil
        let slots = tokenPresent != CK_BBOOL(CK_FALSE) && !present ? [] : [P11ModuleState.slotID]
        return P11Buffers.deliverList(slots, to: slotList, count: count)
    }
}

@_cdecl("rsakit_p11_GetSlotInfo")
func rsakit_p11_GetSlotInfo(_ slotID: CK_SLOT_ID, _ info: UnsafeMutablePointer<CK_SLOT_INFO>?) -> CK_RV {
    p11Entry { state in
        guard slotID == P11ModuleState.slotID else { return CK_RV(CKR_SLOT_ID_INVALID) }
        guard let info else { return CK_RV(CKR_ARGUMENTS_BAD) }
        var value = CK_SLOT_INFO()
        P11Buffers.fill(
            &value.slotDescription,
            with: state.systemSocketPath.map { "rsakit system keychain " + $0 }
                ?? "rsakit key store " + state.storePath)
        P11Buffers.fill(&value.manufacturerID, with: "rsakit")
        value.flags = (try? state.openToken()) != nil ? CK_FLAGS(CKF_TOKEN_PRESENT) : 0
        info.pointee = value
        return CK_RV(CKR_OK)
    }
}

@_cdecl("rsakit_p11_GetTokenInfo")
func rsakit_p11_GetTokenInfo(_ slotID: CK_SLOT_ID, _ info: UnsafeMutablePointer<CK_TOKEN_INFO>?) -> CK_RV {
    p11Entry { state in
        guard slotID == P11ModuleState.slotID else { return CK_RV(CKR_SLOT_ID_INVALID) }
        guard let info else { return CK_RV(CKR_ARGUMENTS_BAD) }
        try state.openToken()
        var value = CK_TOKEN_INFO()
        P11Buffers.fill(
            &value.label, with: state.isSystemToken ? "rsakit system" : P11TokenNames.label(storePath: state.storePath))
        P11Buffers.fill(&value.manufacturerID, with: "rsakit")
        P11Buffers.fill(&value.model, with: "keychain")
        P11Buffers.fill(
            &value.serialNumber, with: P11TokenNames.serialNumber(storePath: state.systemSocketPath ?? state.storePath))
        var flags = CK_FLAGS(CKF_TOKEN_INITIALIZED) | CK_FLAGS(CKF_RNG)
        if state.isSystemToken {
            // No PIN: the agent authenticates this process by its uid (P11System.swift).
            flags |= CK_FLAGS(CKF_PROTECTED_AUTHENTICATION_PATH)
        } else if state.isProtected {
            flags |= CK_FLAGS(CKF_LOGIN_REQUIRED) | CK_FLAGS(CKF_USER_PIN_INITIALIZED)
            // While an agent holds this store's key, the PIN is typed nowhere: the token has a
            // protected authentication path, and hosts call C_Login with no PIN (P11Login.swift).
            if state.agentHoldsStoreKey { flags |= CK_FLAGS(CKF_PROTECTED_AUTHENTICATION_PATH) }
        }
        value.flags = flags
        value.ulMaxSessionCount = CK_ULONG(CK_EFFECTIVELY_INFINITE)
        value.ulSessionCount = p11UnavailableInformation
        value.ulMaxRwSessionCount = CK_ULONG(CK_EFFECTIVELY_INFINITE)
        value.ulRwSessionCount = p11UnavailableInformation
        value.ulMaxPinLen = CK_ULONG(RSAKeyStore.maximumLabelByteCount)
        value.ulMinPinLen = 0
        value.ulTotalPublicMemory = p11UnavailableInformation
        value.ulFreePublicMemory = p11UnavailableInformation
        value.ulTotalPrivateMemory = p11UnavailableInformation
        value.ulFreePrivateMemory = p11UnavailableInformation
        value.hardwareVersion = CK_VERSION(major: 0, minor: 0)
        value.firmwareVersion = CK_VERSION(major: 0, minor: 0)
        P11Buffers.fill(&value.utcTime, with: "")
        info.pointee = value
        return CK_RV(CKR_OK)
    }
}

@_cdecl("rsakit_p11_GetMechanismList")
func rsakit_p11_GetMechanismList(
    _ slotID: CK_SLOT_ID, _ list: UnsafeMutablePointer<CK_MECHANISM_TYPE>?, _ count: UnsafeMutablePointer<CK_ULONG>?
) -> CK_RV {
    p11Entry { _ in
        guard slotID == P11ModuleState.slotID else { return CK_RV(CKR_SLOT_ID_INVALID) }
        guard let count else { return CK_RV(CKR_ARGUMENTS_BAD) }
        return P11Buffers.deliverList(P11Mechanisms.all.map(\.0), to: list, count: count)
    }
}

@_cdecl("rsakit_p11_GetMechanismInfo")
func rsakit_p11_GetMechanismInfo(
    _ slotID: CK_SLOT_ID, _ type: CK_MECHANISM_TYPE, _ info: UnsafeMutablePointer<CK_MECHANISM_INFO>?
) -> CK_RV {
    p11Entry { _ in
        guard slotID == P11ModuleState.slotID else { return CK_RV(CKR_SLOT_ID_INVALID) }
        guard let info else { return CK_RV(CKR_ARGUMENTS_BAD) }
        guard let (_, flags) = P11Mechanisms.all.first(where: { $0.0 == type }) else {
            return CK_RV(CKR_MECHANISM_INVALID)
        }
        info.pointee = CK_MECHANISM_INFO(
            ulMinKeySize: P11Mechanisms.minimumKeyBitCount, ulMaxKeySize: P11Mechanisms.maximumKeyBitCount, flags: flags
        )
        return CK_RV(CKR_OK)
    }
}

@_cdecl("rsakit_p11_OpenSession")
func rsakit_p11_OpenSession(
    _ slotID: CK_SLOT_ID, _ flags: CK_FLAGS, _ session: UnsafeMutablePointer<CK_SESSION_HANDLE>?
) -> CK_RV {
    p11Entry { state in
        guard slotID == P11ModuleState.slotID else { return CK_RV(CKR_SLOT_ID_INVALID) }
        guard flags & CK_FLAGS(CKF_SERIAL_SESSION) != 0 else { return CK_RV(CKR_SESSION_PARALLEL_NOT_SUPPORTED) }
        guard let session else { return CK_RV(CKR_ARGUMENTS_BAD) }
        try state.openToken()
        let handle = state.nextSession
        state.nextSession &+= 1
        state.sessions[handle] = P11Session(flags: flags)
        session.pointee = handle
        return CK_RV(CKR_OK)
    }
}

@_cdecl("rsakit_p11_CloseSession")
func rsakit_p11_CloseSession(_ session: CK_SESSION_HANDLE) -> CK_RV {
    p11Entry { state in
        guard state.sessions.removeValue(forKey: session) != nil else { return CK_RV(CKR_SESSION_HANDLE_INVALID) }
        state.logOutIfNoSession()
        return CK_RV(CKR_OK)
    }
}

@_cdecl("rsakit_p11_CloseAllSessions")
func rsakit_p11_CloseAllSessions(_ slotID: CK_SLOT_ID) -> CK_RV {
    p11Entry { state in
        guard slotID == P11ModuleState.slotID else { return CK_RV(CKR_SLOT_ID_INVALID) }
        state.sessions.removeAll()
        state.logOutIfNoSession()
        return CK_RV(CKR_OK)
    }
}

@_cdecl("rsakit_p11_GetSessionInfo")
func rsakit_p11_GetSessionInfo(_ session: CK_SESSION_HANDLE, _ info: UnsafeMutablePointer<CK_SESSION_INFO>?) -> CK_RV {
    p11Entry { state in
        let current = try state.session(session)
        guard let info else { return CK_RV(CKR_ARGUMENTS_BAD) }
        let readWrite = current.flags & CK_FLAGS(CKF_RW_SESSION) != 0
        let sessionState: CK_STATE =
            switch (readWrite, state.isLoggedIn) {
            case (true, true): CK_STATE(CKS_RW_USER_FUNCTIONS)
            case (true, false): CK_STATE(CKS_RW_PUBLIC_SESSION)
            case (false, true): CK_STATE(CKS_RO_USER_FUNCTIONS)
            case (false, false): CK_STATE(CKS_RO_PUBLIC_SESSION)
            }
        info.pointee = CK_SESSION_INFO(
            slotID: P11ModuleState.slotID, state: sessionState, flags: current.flags, ulDeviceError: 0)
        return CK_RV(CKR_OK)
    }
}

@_cdecl("rsakit_p11_Login")
func rsakit_p11_Login(
    _ session: CK_SESSION_HANDLE, _ userType: CK_USER_TYPE, _ pin: UnsafeMutablePointer<UInt8>?, _ pinLength: CK_ULONG
) -> CK_RV {
    p11Entry { state in
        _ = try state.session(session)
        try state.login(userType: userType, pin: UnsafePointer(pin), pinLength: pinLength)
        return CK_RV(CKR_OK)
    }
}

@_cdecl("rsakit_p11_Logout")
func rsakit_p11_Logout(_ session: CK_SESSION_HANDLE) -> CK_RV {
    p11Entry { state in
        _ = try state.session(session)
        try state.logout()
        return CK_RV(CKR_OK)
    }
}

@_cdecl("rsakit_p11_GenerateRandom")
func rsakit_p11_GenerateRandom(_ session: CK_SESSION_HANDLE, _ out: UnsafeMutablePointer<UInt8>?, _ length: CK_ULONG)
    -> CK_RV
{
    p11Entry { state in
        _ = try state.session(session)
        let n = try P11Buffers.count(length)
        guard n > 0 else { return CK_RV(CKR_OK) }
        guard let out else { return CK_RV(CKR_ARGUMENTS_BAD) }
        SystemRandomSource().fill(UnsafeMutableRawBufferPointer(start: out, count: n))
        return CK_RV(CKR_OK)
    }
}

extension P11ModuleState {
    /// §5.6: closing an application's last session logs the user out.
    mutating func logOutIfNoSession() {
        guard sessions.isEmpty, isLoggedIn else { return }
        store?.lock()
        isLoggedIn = false
    }
}

/// The token's label and serial number, derived from the store path.
enum P11TokenNames {
    /// "rsakit" and the store folder's name when it is not the default "rsakit" (32 bytes at
    /// most; the token= attribute of pkcs11: URIs).
    static func label(storePath: String) -> String {
        let folder = storePath.split(separator: "/").last.map(String.init) ?? ""
        return folder.isEmpty || folder == "rsakit" ? "rsakit" : "rsakit " + folder
    }

    /// The first 16 hex digits of the SHA-256 of the store path: stable for a store, different
    /// between stores.
    static func serialNumber(storePath: String) -> String {
        RSAHashAlgorithm.sha256.hash(Array(storePath.utf8)).prefix(8).map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]])
        }.joined()
    }
}
