internal import CGMP
internal import CRSAKitShims

/// Memcheck client requests (`rsakit_ct.h`) for the constant-time harness: mark memory
/// undefined (secret) or defined (revealed). No-ops outside valgrind.
///
/// The library calls ``declassify(_:)`` exactly where an algorithm legitimately reveals a
/// value computed from secrets: the re-encryption verdict (in C), the padding verdict and
/// the message length (EME-PKCS1-v1_5, EME-OAEP), the container frame verdict. Every other
/// value derived from a secret stays undefined under the harness, so any branch, conditional
/// move or memory index computed from it is reported.
internal enum ConstantTimeAudit {
    /// Mark the bytes of `value` defined: from here on the value is public.
    @inline(__always)
    static func declassify<T>(_ value: inout T) {
        withUnsafeBytes(of: &value) { rsakit_ct_declassify($0.baseAddress, $0.count) }
    }

    /// `x` unchanged, through a C function the optimiser cannot see into, so that a mask
    /// combined with it cannot be turned back into a branch (`rsakit_ct_opaque`).
    @inline(__always)
    static func opaque(_ x: UInt) -> UInt { UInt(truncatingIfNeeded: rsakit_ct_opaque(UInt64(truncatingIfNeeded: x))) }

    /// Mark `bytes` undefined (secret) for memcheck.
    static func poison(_ bytes: UnsafeRawBufferPointer) {
        rsakit_ct_poison(bytes.baseAddress, bytes.count)
    }

    /// Mark `bytes` defined for memcheck.
    static func declassify(_ bytes: UnsafeRawBufferPointer) {
        rsakit_ct_declassify(bytes.baseAddress, bytes.count)
    }

    /// True when the client requests were compiled in (valgrind/memcheck.h was present).
    static var isAvailable: Bool { rsakit_ct_available() != 0 }

    /// True when the process runs under valgrind.
    static var isRunningOnValgrind: Bool { rsakit_ct_running_on_valgrind() != 0 }

    /// A function the harness's `plant-oaep` mode attaches (through
    /// `RSAKitConstantTimeHarness.attachOAEPDecodeProbe`) to show that a secret-dependent
    /// branch inside the EME-OAEP decode is reported: called with the unmasked DB right
    /// before the checks of RFC 8017 §7.1.2 step 3.g. Nil (one public test of a constant)
    /// in every other process; set once, before any decryption, by the harness only.
    nonisolated(unsafe) static var oaepDecodeProbe: (@convention(c) (UnsafeRawPointer?, Int) -> Void)?
}

extension BigNumber {
    /// Mark the limbs of self undefined for memcheck (the harness's view of the mpz
    /// reference path). The value is unchanged.
    func poisonLimbsForHarness() {
        let size = Int(raw.pointee._mp_size.magnitude)
        if size > 0, let limbs = raw.pointee._mp_d {
            rsakit_ct_poison(limbs, size * MemoryLayout<mp_limb_t>.stride)
        }
    }
}
