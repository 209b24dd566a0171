// Keys in this machine's TPM, the Linux counterpart of Apple's kSecAttrTokenIDSecureEnclave.
//
// The TPM is reached through tpm2-pkcs11 (Debian libtpm2-pkcs11-1) as a PKCS#11 token that
// rsakit sets up itself, so every private operation goes through the token code of this folder
// (TokenSession, TokenSigner, TokenContainerKey) and nothing links the TPM's libraries: the
// module is loaded with dlopen on first use, as every token module is. tpm2-pkcs11 keeps its
// objects (key blobs wrapped by the TPM, PINs sealed to it) in an SQLite database; rsakit puts
// that database in the store's folder (`<store>/tpm`) and gives each key a token of its own,
// made with C_InitToken (no Python tpm2_ptool at run time), so each key has its own PIN or none.
// docs/tpm.md says why this path was chosen over tpm2-tss's ESAPI directly, and what it costs.

import RSAKitCore
import RSAKitPKI
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
internal import CP11Kit

/// Where a TPM key's token lives and how the TPM is reached: tpm2-pkcs11's database folder,
/// the TCTI (the TPM Command Transmission Interface configuration) and the module's path.
///
/// ``RSAKeyStore/tpmConfiguration`` gives the one for a store. The TCTI is read from
/// `RSAKIT_TPM_TCTI` (as the tpm2-tools read `TPM2TOOLS_TCTI`), else `device:/dev/tpmrm0`,
/// the kernel's resource manager; the module from `RSAKIT_TPM_PKCS11_MODULE`, else the first
/// of the usual Debian and Fedora paths that exists.
public struct RSATPMConfiguration: Sendable, Equatable {
    /// tpm2-pkcs11's database folder (its `TPM2_PKCS11_STORE`), `<store>/tpm` for a store.
    public var databaseDirectory: String
    /// The TCTI string given to tpm2-pkcs11 (its `TPM2_PKCS11_TCTI`), for example
    /// `device:/dev/tpmrm0` or `swtpm:host=127.0.0.1,port=2321`.
    public var tcti: String
    /// The tpm2-pkcs11 module file, loaded with `dlopen`.
    public var modulePath: String

    /// When set, tpm2-pkcs11's own lines on stderr ("ERROR: Esys_Unseal: ...", which it
    /// prints whatever its log level) are discarded while its calls run, so that the rsakit
    /// command's one-line error is the only one. The command sets it unless
    /// TPM2_PKCS11_LOG_LEVEL is set; a library caller decides for itself (it redirects the
    /// process's file descriptor 2 for the length of each call).
    nonisolated(unsafe) package static var silencesModuleLog = false

    /// The kernel's TPM resource manager, the TCTI used when `RSAKIT_TPM_TCTI` is unset.
    public static let defaultTCTI = "device:/dev/tpmrm0"

    /// Where distributions install tpm2-pkcs11 (Debian multiarch, then Fedora, then plain).
    static let modulePathCandidates = [
        "/usr/lib/x86_64-linux-gnu/pkcs11/libtpm2_pkcs11.so",
        "/usr/lib/aarch64-linux-gnu/pkcs11/libtpm2_pkcs11.so",
        "/usr/lib64/pkcs11/libtpm2_pkcs11.so",
        "/usr/lib/pkcs11/libtpm2_pkcs11.so"
    ]

    /// A configuration for the database in `databaseDirectory`.
    /// - Parameters:
    ///   - databaseDirectory: tpm2-pkcs11's database folder (created 0700 on first key).
    ///   - tcti: the TCTI; nil reads `RSAKIT_TPM_TCTI`, else ``defaultTCTI``.
    ///   - modulePath: the module; nil reads `RSAKIT_TPM_PKCS11_MODULE`, else the first
    ///     installed of the usual paths (the Debian x86-64 one when none is).
    public init(databaseDirectory: String, tcti: String? = nil, modulePath: String? = nil) {
        self.databaseDirectory = databaseDirectory
        self.tcti = tcti ?? RSATPMConfiguration.environment("RSAKIT_TPM_TCTI") ?? RSATPMConfiguration.defaultTCTI
        self.modulePath =
            modulePath ?? RSATPMConfiguration.environment("RSAKIT_TPM_PKCS11_MODULE")
            ?? RSATPMConfiguration.modulePathCandidates.first { access($0, F_OK) == 0 }
            ?? RSATPMConfiguration.modulePathCandidates[0]
    }

    /// The device file a `device` TCTI names (`device` alone is tpm2-tss's /dev/tpm0 default
    /// after the resource manager), or nil for another kind of TCTI.
    var devicePath: String? {
        guard tcti == "device" || tcti.hasPrefix("device:") else { return nil }
        let path = tcti.dropFirst("device".count).drop { $0 == ":" }
        return path.isEmpty ? "/dev/tpmrm0" : String(path)
    }

    /// Check what can be checked without the module (the module file; a device TCTI's file,
    /// opened once for its permissions and whether another process holds it), then set
    /// tpm2-pkcs11's environment for the next C_Initialize.
    ///
    /// - Throws: `RSAError.tpmUnavailable` naming what to install or which group to join.
    func prepare() throws {
        guard access(modulePath, F_OK) == 0 else {
            throw RSAError.tpmUnavailable(
                reason:
                    "tpm2-pkcs11 is not installed (no \(modulePath)): install libtpm2-pkcs11-1 (apt install "
                    + "libtpm2-pkcs11-1), or set RSAKIT_TPM_PKCS11_MODULE"
            )
        }
        if let device = devicePath {
            guard access(device, F_OK) == 0 else {
                throw RSAError.tpmUnavailable(
                    reason:
                        "no TPM: \(device) does not exist (enable the TPM 2.0 in the firmware, add a vTPM to the "
                        + "virtual machine, or set RSAKIT_TPM_TCTI)"
                )
            }
            // Opened once here, as tpm2-tss will: the kernel refuses a second opener of the
            // raw /dev/tpm0 (EBUSY) while the resource manager /dev/tpmrm0 takes any number.
            let fd = open(device, O_RDWR | O_CLOEXEC)
            guard fd >= 0 else {
                switch errno {
                case EACCES, EPERM:
                    throw RSAError.tpmUnavailable(
                        reason:
                            "permission denied on \(device): join the 'tss' group (usermod -aG tss $USER, then log "
                            + "in again)"
                    )
                case EBUSY:
                    throw RSAError.tpmUnavailable(
                        reason:
                            "the TPM at \(device) is in use by another process (use the resource manager, "
                            + "device:/dev/tpmrm0, or tpm2-abrmd)"
                    )
                default:
                    throw RSAError.tpmUnavailable(reason: "cannot open \(device): \(String(cString: strerror(errno)))")
                }
            }
            Glibc.close(fd)
        }
        // NOTE: setenv is not safe against a concurrent getenv in another thread; the module
        // reads these in C_Initialize, which each token session calls, so they are set here.
        setenv("TPM2_PKCS11_STORE", databaseDirectory, 1)
        setenv("TPM2_PKCS11_TCTI", tcti, 1)
        // The esysdb backend is the one that keeps its objects in TPM2_PKCS11_STORE; the FAPI
        // backend would add slots from the system's FAPI keystore.
        setenv("TPM2_PKCS11_BACKEND", "esysdb", 1)
        // tpm2-tss logs every TPM error code on stderr (TSS2_LOG defaults to warnings); rsakit
        // reports them as one line. A user who sets TSS2_LOG keeps it.
        setenv("TSS2_LOG", "all+none", 0)
        setenv("TPM2_PKCS11_LOG_LEVEL", "0", 0)
    }

    static func environment(_ name: String) -> String? {
        guard let value = getenv(name).map({ String(cString: $0) }), !value.isEmpty else { return nil }
        return value
    }
}

extension RSATokenKey {
    /// The modulus sizes a TPM key may have: 2048, and 3072 where the TPM supports it
    /// (TPM 2.0 chips made since about 2020; swtpm does).
    public static let tpmModulusBitCounts = [2048, 3072]

    /// The mechanisms a TPM key allows (its CKA_ALLOWED_MECHANISMS): PKCS#1 v1.5 and OAEP
    /// decryption, PKCS#1 v1.5 signatures over a message (CKM_SHA*_RSA_PKCS: TPM2_Sign with
    /// RSASSA) and PSS signatures; not CKM_RSA_X_509. Without it, tpm2-pkcs11 also refuses
    /// CKM_RSA_PKCS signing over a caller's DigestInfo, which it would do as raw RSA.
    static let tpmAllowedMechanisms: [UInt] = [
        UInt(CKM_RSA_PKCS), UInt(CKM_RSA_PKCS_OAEP), UInt(CKM_RSA_PKCS_PSS),
        UInt(CKM_SHA1_RSA_PKCS), UInt(CKM_SHA256_RSA_PKCS), UInt(CKM_SHA384_RSA_PKCS), UInt(CKM_SHA512_RSA_PKCS)
    ]

    /// Generate a key pair inside this machine's TPM (TPM2_Create under a primary key the
    /// TPM derives from its storage seed, through tpm2-pkcs11): the private key never leaves
    /// the TPM unwrapped. It is non-exportable (CKA_SENSITIVE true, CKA_EXTRACTABLE false),
    /// e = 65537, and its token allows no raw RSA (CKA_ALLOWED_MECHANISMS without
    /// CKM_RSA_X_509).
    ///
    /// Each key gets a token of its own in `configuration`'s database (C_InitToken with a
    /// random security-officer PIN that is zeroed at once, then C_InitPIN), so each key has
    /// its own PIN: a forgotten PIN cannot be reset, and the key is then lost. When the
    /// database folder did not exist before and generation fails, the folder is removed
    /// again (and its parent, if this call made it), so a failed attempt leaves nothing.
    ///
    /// - Parameters:
    ///   - configuration: the database, TCTI and module (``RSAKeyStore/tpmConfiguration``).
    ///   - bits: 2048 or 3072 (``tpmModulusBitCounts``).
    ///   - label: CKA_LABEL of both objects.
    ///   - pin: the key's PIN (its TPM authValue, checked by the TPM with dictionary-attack
    ///     protection), or nil for none: the empty PIN then logs in.
    /// - Returns: the key, ``RSATokenKey/tpm`` set to `configuration`.
    /// - Throws: `RSAError.keySizeUnsupported` for another size, or one the TPM refuses;
    ///   `RSAError.tpmUnavailable`, `RSAError.tpmLockedOut`; `RSAError.tokenOperationFailed`.
    public static func generateInTPM(
        _ configuration: RSATPMConfiguration, bits: Int, label: String, pin: RSASecretBytes?
    ) throws -> RSATokenKey {
        guard tpmModulusBitCounts.contains(bits) else {
            throw RSAError.keySizeUnsupported(bits: bits, reason: "a TPM key is 2048 or 3072 bits")
        }
        try configuration.prepare()
        let created = try makeDirectories(configuration.databaseDirectory)
        do {
            let userPIN = pin ?? RSASecretBytes(zeroedCount: 0)
            let tokenLabel =
                "rsakit " + randomID().prefix(8).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
            try initialiseToken(configuration, label: tokenLabel, userPIN: userPIN)
            let uri = RSATokenURI(modulePath: configuration.modulePath, tokenLabel: tokenLabel)
            let session = try TokenSession(uri: uri, pin: userPIN, tpm: configuration)
            defer { session.close() }  // (closed below on success; close runs once)
            let id = randomID()
            let publicKey: RSAPublicKey
            do {
                publicKey = try session.generateKeyPair(
                    bits: bits, id: id, label: label, allowedMechanisms: tpmAllowedMechanisms)
            } catch RSAError.tokenOperationFailed(_, let code)
                where code == UInt(CKR_KEY_SIZE_RANGE) || code == UInt(CKR_ATTRIBUTE_VALUE_INVALID)
            {
                throw RSAError.keySizeUnsupported(bits: bits, reason: "this TPM does not make keys of this size")
            }
            // tpm2-pkcs11 creates its database with the process umask; the folder is 0700,
            // and the file (wrapped key blobs, sealed PIN objects) is made private too.
            chmod(configuration.databaseDirectory + "/tpm2_pkcs11.sqlite3", 0o600)
            let reference = RSATokenReference(
                modulePath: configuration.modulePath, tokenLabel: session.tokenLabel,
                tokenSerial: session.tokenSerial, objectID: id, isTPM: true, requiresPIN: pin != nil)
            session.close()
            let key = RSATokenKey(reference: reference, publicKey: publicKey, tpm: configuration)
            try key.settlePSSSaltLength(pin: userPIN)
            return key
        } catch {
            for path in created.reversed() { removeTree(path) }
            throw error
        }
    }

    /// Find out whether this TPM's RSA-PSS (TPM2_Sign with RSASSA-PSS) uses a salt as long as
    /// the hash, as TLS 1.3 requires (a FIPS TPM does; older TPMs use the maximum), and tell
    /// tpm2-pkcs11, so that it signs PSS in the TPM instead of refusing.
    ///
    /// tpm2-pkcs11 1.9 keeps that answer in the token's configuration ("pss-sigs-good") and
    /// otherwise treats PSS as something to build from raw RSA, which a TPM key does not
    /// allow; its own probe never runs (it compares the object's CKA_CLASS with CKK_RSA). So
    /// rsakit sets "pss-sigs-good: true" in the token's row of the database, makes one PSS
    /// signature over a fixed digest and verifies it with the public key and salt = hLen; if
    /// that fails, it sets "false", and PSS signatures are then refused with a clear error.
    /// A database rsakit cannot update (another tpm2-pkcs11 schema) leaves PSS refused.
    func settlePSSSaltLength(pin: RSASecretBytes) throws {
        guard let tpm else { return }
        guard
            (try? RSATokenKey.setTokenConfiguration(tpm, tokenLabel: reference.tokenLabel, pssSignaturesGood: true))
                != nil
        else { return }
        let digest = RSAHashAlgorithm.sha256.hash(Array("rsakit: does this TPM sign RSA-PSS with salt = hLen?".utf8))
        var good = false
        do {
            let signature = try self.signature(
                forDigest: digest, hash: .sha256, padding: .pss(saltLength: .digestLength), pin: pin)
            good = publicKey.isValidSignature(
                signature, forDigest: digest, hash: .sha256, padding: .pss(saltLength: .digestLength))
        } catch RSAError.keyRestricted {
            good = false
        }
        if !good {
            try? RSATokenKey.setTokenConfiguration(tpm, tokenLabel: reference.tokenLabel, pssSignaturesGood: false)
        }
    }

    /// Write the token configuration tpm2-pkcs11 1.9 reads (YAML, in the `config` column of
    /// its `tokens` table) for the token labelled `tokenLabel`: initialised, and whether the
    /// TPM's PSS signatures have salt = hLen. libsqlite3 (which tpm2-pkcs11 itself uses) is
    /// loaded with dlopen. Call only while no session of the module is open.
    /// - Throws: `RSAError.tpmUnavailable` when the database cannot be opened or updated.
    static func setTokenConfiguration(_ tpm: RSATPMConfiguration, tokenLabel: String, pssSignaturesGood: Bool) throws {
        typealias Open =
            @convention(c) (UnsafePointer<CChar>, UnsafeMutablePointer<OpaquePointer?>, Int32, UnsafePointer<CChar>?) ->
            Int32
        typealias Exec =
            @convention(c) (
                OpaquePointer?, UnsafePointer<CChar>, OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?
            ) -> Int32
        typealias Changes = @convention(c) (OpaquePointer?) -> Int32
        typealias Close = @convention(c) (OpaquePointer?) -> Int32
        guard let library = dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_LOCAL),
            let openSymbol = dlsym(library, "sqlite3_open_v2"), let execSymbol = dlsym(library, "sqlite3_exec"),
            let changesSymbol = dlsym(library, "sqlite3_changes"), let closeSymbol = dlsym(library, "sqlite3_close")
        else {
            throw RSAError.tpmUnavailable(reason: "libsqlite3 (which tpm2-pkcs11 uses) cannot be loaded")
        }
        // The label is rsakit's own ("rsakit " and hex digits), so it needs no escaping; check.
        guard tokenLabel.utf8.allSatisfy({ $0 == 0x20 || ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) })
        else {
            throw RSAError.tpmUnavailable(reason: "unexpected TPM token label '\(tokenLabel)'")
        }
        var db: OpaquePointer?
        let readWrite: Int32 = 0x2  // SQLITE_OPEN_READWRITE
        let path = tpm.databaseDirectory + "/tpm2_pkcs11.sqlite3"
        defer { _ = unsafeBitCast(closeSymbol, to: Close.self)(db) }
        guard unsafeBitCast(openSymbol, to: Open.self)(path, &db, readWrite, nil) == 0 else {
            throw RSAError.tpmUnavailable(reason: "cannot open the TPM database \(path)")
        }
        // The emitter's own form of the configuration map (tpm2-pkcs11 src/lib/emitter.c).
        let yaml =
            "---\n!!map {\n  ? !!str \"token-init\"\n  : !!bool \"true\",\n  ? !!str \"pss-sigs-good\"\n  : !!bool "
            + "\"\(pssSignaturesGood)\",\n}\n...\n"
        let sql = "UPDATE tokens SET config = '\(yaml)' WHERE label = '\(tokenLabel)';"
        guard unsafeBitCast(execSymbol, to: Exec.self)(db, sql, nil, nil, nil) == 0,
            unsafeBitCast(changesSymbol, to: Changes.self)(db) == 1
        else {
            throw RSAError.tpmUnavailable(reason: "cannot update the token configuration in \(path)")
        }
    }

    /// C_InitToken on the module's empty slot (tpm2-pkcs11 always offers one), then
    /// C_InitPIN as the security officer. The SO PIN is random and zeroed when done.
    private static func initialiseToken(_ configuration: RSATPMConfiguration, label: String, userPIN: RSASecretBytes)
        throws
    {
        try TokenSession.quietly(true) { try initialiseTokenLoud(configuration, label: label, userPIN: userPIN) }
    }

    private static func initialiseTokenLoud(
        _ configuration: RSATPMConfiguration, label: String, userPIN: RSASecretBytes
    ) throws {
        let list = try TokenSession.load(modulePath: configuration.modulePath, tpm: configuration)
        defer { _ = list.pointee.C_Finalize(nil) }
        var count: CK_ULONG = 0
        try TokenSession.check(list.pointee.C_GetSlotList(CK_BBOOL(CK_FALSE), nil, &count), "C_GetSlotList")
        var slots = [CK_SLOT_ID](repeating: 0, count: Int(count))
        try TokenSession.check(list.pointee.C_GetSlotList(CK_BBOOL(CK_FALSE), &slots, &count), "C_GetSlotList")
        var empty: CK_SLOT_ID?
        for slot in slots.prefix(Int(count)) {
            var info = CK_TOKEN_INFO()
            guard list.pointee.C_GetTokenInfo(slot, &info) == CK_RV(CKR_OK) else { continue }
            if info.flags & CK_FLAGS(CKF_TOKEN_INITIALIZED) == 0 { empty = slot; break }
        }
        guard let slot = empty else {
            throw RSAError.tpmUnavailable(reason: "tpm2-pkcs11 offers no empty slot for a new key's token")
        }
        // 32 random bytes as hex: printable, as tpm2-pkcs11 hashes the PIN as text.
        var soBytes = SystemRandomSource().bytes(32)
        var soHex = soBytes.flatMap { b in Array(String(b >> 4, radix: 16).utf8) + Array(String(b & 15, radix: 16).utf8)
        }
        wipe(&soBytes)
        let soPIN = RSASecretBytes(consuming: &soHex)
        var labelField = [UInt8](repeating: 0x20, count: 32)
        for (i, b) in label.utf8.prefix(32).enumerated() { labelField[i] = b }
        try soPIN.withUnsafeBytes { so in
            let soPointer = UnsafeMutablePointer(mutating: so.baseAddress!.assumingMemoryBound(to: CK_UTF8CHAR.self))
            try TokenSession.check(
                list.pointee.C_InitToken(slot, soPointer, CK_ULONG(so.count), &labelField), "C_InitToken")
            var session: CK_SESSION_HANDLE = 0
            try TokenSession.check(
                list.pointee.C_OpenSession(slot, CK_FLAGS(CKF_SERIAL_SESSION | CKF_RW_SESSION), nil, nil, &session),
                "C_OpenSession")
            defer { _ = list.pointee.C_CloseSession(session) }
            try TokenSession.check(
                list.pointee.C_Login(session, CK_USER_TYPE(CKU_SO), soPointer, CK_ULONG(so.count)), "C_Login")
            defer { _ = list.pointee.C_Logout(session) }
            try userPIN.withUnsafeBytes { user in
                try TokenSession.check(
                    list.pointee.C_InitPIN(
                        session,
                        UnsafeMutablePointer(mutating: user.baseAddress!.assumingMemoryBound(to: CK_UTF8CHAR.self)),
                        CK_ULONG(user.count)), "C_InitPIN")
            }
        }
    }

    /// mkdir (0700) each missing folder of `path`, from the first missing one down.
    /// - Returns: the folders made, outermost first.
    private static func makeDirectories(_ path: String) throws -> [String] {
        var missing: [String] = []
        var current = path
        while !current.isEmpty, current != "/", access(current, F_OK) != 0 {
            missing.append(current)
            current = String(current[..<(current.lastIndex(of: "/") ?? current.startIndex)])
        }
        var made: [String] = []
        for folder in missing.reversed() {
            guard mkdir(folder, 0o700) == 0 || errno == EEXIST else {
                let reason = String(cString: strerror(errno))
                for path in made.reversed() { removeTree(path) }
                throw RSAError.storeIOError(path: folder, reason: "mkdir: " + reason)
            }
            made.append(folder)
        }
        return made
    }

    /// Remove `path` and what it holds (one level of files: tpm2-pkcs11's database and its
    /// journal), for undoing a failed first key.
    private static func removeTree(_ path: String) {
        if let dir = opendir(path) {
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) {
                    String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name != "." && name != ".." { unlink(path + "/" + name) }
            }
            closedir(dir)
        }
        rmdir(path)
    }
}
