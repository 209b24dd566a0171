// How the machine's TPM is reached: a tpm2-tss TCTI string, read from RSAKIT_TPM_TCTI as the
// tpm2-tools read TPM2TOOLS_TCTI. The TPM itself is spoken to through tpm2-tss's ESAPI
// (Sources/CTSS2, loaded with dlopen on first use); docs/tpm.md says why.

import RSAKitCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How the TPM is reached: the TCTI (the TPM Command Transmission Interface configuration
/// tpm2-tss's `Tss2_TctiLdr_Initialize` takes).
///
/// ``RSAKeyStore/tpmConfiguration`` gives the one a store's keys use. The TCTI is read from
/// `RSAKIT_TPM_TCTI` (as the tpm2-tools read `TPM2TOOLS_TCTI`), else `device:/dev/tpmrm0`,
/// the kernel's resource manager.
public struct RSATPMConfiguration: Sendable, Equatable {
    /// The TCTI string, for example `device:/dev/tpmrm0` or `swtpm:host=127.0.0.1,port=2321`.
    public var tcti: String

    /// The kernel's TPM resource manager, the TCTI used when `RSAKIT_TPM_TCTI` is unset.
    public static let defaultTCTI = "device:/dev/tpmrm0"

    /// A configuration for `tcti`.
    /// - Parameter tcti: the TCTI; nil reads `RSAKIT_TPM_TCTI`, else ``defaultTCTI``.
    public init(tcti: String? = nil) {
        self.tcti = tcti ?? RSATPMConfiguration.environment("RSAKIT_TPM_TCTI") ?? RSATPMConfiguration.defaultTCTI
    }

    /// The device file a `device` TCTI names (`device` alone is tpm2-tss's /dev/tpmrm0 default
    /// after the resource manager), or nil for another kind of TCTI.
    var devicePath: String? {
        guard tcti == "device" || tcti.hasPrefix("device:") else { return nil }
        let path = tcti.dropFirst("device".count).drop { $0 == ":" }
        return path.isEmpty ? "/dev/tpmrm0" : String(path)
    }

    /// Check what can be checked before tpm2-tss is loaded: a device TCTI's file, opened once
    /// for its permissions and whether another process holds it, so that each failure gets
    /// its own sentence instead of tpm2-tss's generic I/O error.
    ///
    /// - Throws: `RSAError.tpmUnavailable` naming what to install or which group to join.
    func prepare() throws {
        // tpm2-tss logs every TPM error code on stderr (TSS2_LOG defaults to warnings); rsakit
        // reports each failure as one line. A user who sets TSS2_LOG keeps it.
        // NOTE: setenv is not safe against a concurrent getenv in another thread; tpm2-tss
        // reads TSS2_LOG once, when its first function runs, which comes after this.
        setenv("TSS2_LOG", "all+none", 0)
        guard let device = devicePath else { return }
        guard access(device, F_OK) == 0 else {
            throw RSAError.tpmUnavailable(
                reason:
                    "no TPM: \(device) does not exist (enable the TPM 2.0 in the firmware, add a vTPM to the "
                    + "virtual machine, or set RSAKIT_TPM_TCTI)"
            )
        }
        // Opened once here, as tpm2-tss will: the kernel refuses a second opener of the raw
        // /dev/tpm0 (EBUSY) while the resource manager /dev/tpmrm0 takes any number.
        let fd = open(device, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else {
            switch errno {
            case EACCES, EPERM:
                throw RSAError.tpmUnavailable(
                    reason:
                        "permission denied on \(device): join the 'tss' group (usermod -aG tss $USER, then log in "
                        + "again)"
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
        close(fd)
    }

    static func environment(_ name: String) -> String? {
        guard let value = getenv(name).map({ String(cString: $0) }), !value.isEmpty else { return nil }
        return value
    }
}
