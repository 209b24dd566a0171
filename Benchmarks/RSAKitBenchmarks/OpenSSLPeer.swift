import Foundation

/// The OpenSSL command-line tool as a peer measured in the same run.
///
/// What each figure is (OpenSSL 3.0, whose `speed rsaN` offers sign and verify only):
/// - `openssl-sign`: `openssl speed -elapsed rsaN`, sign/s: RSA_sign with PKCS#1 v1.5 type-1
///   padding of a 36-byte digest, which is the blinded CRT private operation with OpenSSL's
///   own result check: the closest peer to a one-block PKCS#1 v1.5 decrypt.
/// - `openssl-verify`: the same command, verify/s: the public operation (e = 65537) and a
///   padding check: the closest peer to a one-block PKCS#1 v1.5 encrypt (which instead draws
///   random padding bytes).
/// - `openssl-genpkey`: wall time of `openssl genpkey -algorithm RSA` processes minus the
///   median time of `openssl genpkey -algorithm ED25519` processes (process start-up,
///   provider loading and PEM output, with next to no key-generation work).
///
/// `-elapsed` makes OpenSSL divide by wall-clock time, as RSAKit's figures do.
struct OpenSSLPeer {
    let path: String
    let version: String

    /// The peer at `explicitPath`, or the first `openssl` on PATH; nil when absent or broken.
    static func find(explicitPath: String?) -> OpenSSLPeer? {
        guard let path = explicitPath ?? findOnPath("openssl") else { return nil }
        guard let result = try? runProcess(path, ["version"]), result.status == 0 else { return nil }
        return OpenSSLPeer(path: path, version: result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// One `openssl speed -mr -elapsed -seconds S rsaBITS` run: (sign/s, verify/s).
    /// - Throws: `BenchmarkFailure` when the command fails or prints no result for `bits`.
    func speed(bits: Int, seconds: Int) throws -> (sign: Double, verify: Double) {
        let result = try runProcess(path, ["speed", "-mr", "-elapsed", "-seconds", String(seconds), "rsa\(bits)"])
        guard result.status == 0 else {
            throw BenchmarkFailure(
                description: "openssl speed rsa\(bits) failed (status \(result.status)): \(result.stderr.prefix(300))")
        }
        // Machine-readable result: "+F2:<index>:<bits>:<sign/s>:<verify/s>".
        for line in (result.stdout + "\n" + result.stderr).split(separator: "\n") where line.hasPrefix("+F2:") {
            let fields = line.split(separator: ":")
            guard fields.count >= 5, Int(fields[2]) == bits,
                let sign = Double(fields[3]), let verify = Double(fields[4])
            else { continue }
            return (sign, verify)
        }
        throw BenchmarkFailure(description: "openssl speed rsa\(bits) printed no +F2 line for \(bits) bits")
    }

    /// Seconds for one `openssl genpkey` process generating an RSA key of `bits` bits
    /// (written to /dev/null).
    func genpkeySeconds(bits: Int) throws -> Double {
        try timeProcess([
            "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:\(bits)",
            "-pkeyopt", "rsa_keygen_pubexp:65537", "-out", "/dev/null"
        ])
    }

    /// Seconds for one `openssl genpkey -algorithm ED25519` process: the start-up baseline.
    func startUpSeconds() throws -> Double {
        try timeProcess(["genpkey", "-algorithm", "ED25519", "-out", "/dev/null"])
    }

    private func timeProcess(_ arguments: [String]) throws -> Double {
        var result: ProcessResult?
        let seconds = try time { result = try runProcess(path, arguments) }
        guard let result, result.status == 0 else {
            throw BenchmarkFailure(description: "openssl \(arguments.joined(separator: " ")) failed")
        }
        return seconds
    }
}
