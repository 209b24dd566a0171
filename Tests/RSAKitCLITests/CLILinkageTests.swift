import Foundation
import XCTest

/// rsakit imports only FoundationEssentials, so the built binary does not load
/// Foundation, FoundationInternationalization or Foundation's ICU (`lib_FoundationICU.so`,
/// ~30 MB of ICU code and data read at every start). Observed with the real `ldd` on the
/// binary the other CLI tests run; a control (`ldd` of libFoundation.so itself, which does
/// load ICU) shows the check can see ICU at all. scripts/install.sh checks the static
/// binary's symbols for the same thing.
final class CLILinkageTests: CLITestCase {
    /// tpm2-tss's libraries (and the one libtss2-esys brings).
    static let tss2Libraries = [
        "libtss2-esys.so.0", "libtss2-tctildr.so.0", "libtss2-mu.so.0", "libtss2-rc.so.0", "libtss2-sys.so.1"
    ]

    func testBinary_DoesNotLoadFoundationOrICU() throws {
        let ldd = ["/usr/bin/ldd", "/bin/ldd"].first(where: FileManager.default.isExecutableFile)
        guard let ldd else { throw XCTSkip("ldd(1) is missing: cannot list the binary's libraries") }
        let listing = try runProcess(ldd, [CLITestCase.binary.path])
        XCTAssertEqual(listing.status, 0, listing.stderr)
        let libraries = listing.stdoutText.split(separator: "\n").compactMap { line in
            line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init)
        }
        XCTAssertTrue(libraries.contains("libgmp.so.10"), listing.stdoutText)
        // libcurl and its ~20 libraries (Kerberos, LDAP, SSH...) are loaded only when OCSP or
        // CRL fetching needs HTTP (dlopen in CCurl), not by every process; tpm2-tss only when
        // a TPM key is used (dlopen in CTSS2).
        for forbidden in [
            "libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so",
            "libcurl-gnutls.so.4", "libcurl.so.4"
        ] + Self.tss2Libraries {
            XCTAssertFalse(libraries.contains(forbidden), "rsakit loads \(forbidden):\n\(listing.stdoutText)")
        }
        // Nor does the PKCS#11 module, which every PKCS#11 client (ssh, curl, NSS) loads.
        let module = Self.productsDirectory.appendingPathComponent("librsakit-pkcs11.so").path
        if FileManager.default.fileExists(atPath: module) {
            let moduleListing = try runProcess(ldd, [module])
            XCTAssertEqual(moduleListing.status, 0, moduleListing.stderr)
            XCTAssertTrue(moduleListing.stdoutText.contains("libgmp.so.10"), moduleListing.stdoutText)
            for forbidden in Self.tss2Libraries {
                XCTAssertFalse(moduleListing.stdoutText.contains(forbidden), moduleListing.stdoutText)
            }
        }

        // Control: the toolchain's libFoundation.so is found beside libFoundationEssentials.so
        // (when the binary is dynamically linked) and does load ICU.
        guard
            let essentials = listing.stdoutText.split(separator: "\n").first(where: {
                $0.contains("libFoundationEssentials.so =>")
            }),
            let path = essentials.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst(2).first
        else { return }
        let foundation = URL(fileURLWithPath: String(path)).deletingLastPathComponent().appendingPathComponent(
            "libFoundation.so"
        ).path
        guard FileManager.default.fileExists(atPath: foundation) else { return }
        let control = try runProcess(ldd, [foundation])
        XCTAssertTrue(control.stdoutText.contains("lib_FoundationICU.so"), control.stdoutText)
    }
}
