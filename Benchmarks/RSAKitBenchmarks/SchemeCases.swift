import Foundation
import RSAKit

/// Signatures and OAEP, each RSAKit figure taken right beside `openssl speed rsaN`.
///
/// What the peer figures measure, and why they are the honest peers:
/// - `openssl speed rsaN` sign/s is RSA_sign: PKCS#1 v1.5 type-1 padding of a 36-byte digest
///   and OpenSSL's blinded CRT private operation with its check. `sign-pkcs1` (PKCS#1 v1.5,
///   SHA-256 digest given) is the same work; `sign-pss` adds a salt and MGF1; `oaep-decrypt`
///   is the same private operation plus an OAEP decode (two MGF1 passes over k bytes).
///   OpenSSL 3.0's `speed` has no OAEP or PSS case, so those two ratios say how RSAKit's
///   whole scheme compares with OpenSSL's private operation: the private operation dominates
///   either way (the hashing is a few microseconds), but the ratio is not OAEP against OAEP.
/// - verify/s is RSA_verify: the public operation (e = 65537) and a padding check: the peer of
///   `verify-pkcs1`, `verify-pss` and `oaep-encrypt` in the same sense.
extension BenchmarkSuite {
    func runSchemes(_ key: BenchmarkKey) throws {
        let bits = key.bits
        let privateKey = key.privateKey, publicKey = key.publicKey
        let digest = RSAHashAlgorithm.sha256.hash(key.message)
        let pss = RSASignaturePadding.pss(saltLength: .digestLength)
        let oaep = RSAEncryptionPadding.oaep(RSAOAEPParameters(hash: .sha256))
        let pkcs1Signature = try privateKey.signature(forDigest: digest, hash: .sha256, padding: .pkcs1v15)
        let pssSignature = try privateKey.signature(forDigest: digest, hash: .sha256, padding: pss)
        let oaepCiphertext = try publicKey.encrypt(key.message, padding: oaep)
        // Every case computes the right thing before anything is timed.
        guard publicKey.isValidSignature(pkcs1Signature, forDigest: digest, hash: .sha256, padding: .pkcs1v15),
            publicKey.isValidSignature(pssSignature, forDigest: digest, hash: .sha256, padding: pss),
            try privateKey.decrypt(oaepCiphertext, padding: oaep) == key.message
        else {
            throw BenchmarkFailure(description: "signature or OAEP cases at \(bits) bits give a wrong result")
        }
        func check(_ ok: Bool, _ name: String) throws {
            if !ok { throw BenchmarkFailure(description: "\(name) at \(bits) bits failed while timed") }
        }
        // Private-key cases first (they go right before openssl's sign phase), then public ones.
        let operations = [
            TimedOperation(name: "sign-pkcs1") { count in
                for _ in 0..<count {
                    BlackHole.consume(try privateKey.signature(forDigest: digest, hash: .sha256, padding: .pkcs1v15))
                }
            },
            TimedOperation(name: "sign-pss") { count in
                for _ in 0..<count {
                    BlackHole.consume(try privateKey.signature(forDigest: digest, hash: .sha256, padding: pss))
                }
            },
            TimedOperation(name: "oaep-decrypt") { count in
                for _ in 0..<count { BlackHole.consume(try privateKey.decrypt(oaepCiphertext, padding: oaep)) }
            },
            TimedOperation(name: "verify-pkcs1") { count in
                for _ in 0..<count {
                    try check(
                        publicKey.isValidSignature(
                            pkcs1Signature, forDigest: digest, hash: .sha256, padding: .pkcs1v15), "verify-pkcs1")
                }
            },
            TimedOperation(name: "verify-pss") { count in
                for _ in 0..<count {
                    try check(
                        publicKey.isValidSignature(pssSignature, forDigest: digest, hash: .sha256, padding: pss),
                        "verify-pss")
                }
            },
            TimedOperation(name: "oaep-encrypt") { count in
                for _ in 0..<count { BlackHole.consume(try publicKey.encrypt(key.message, padding: oaep)) }
            }
        ]
        let privateCount = 3
        let what = [
            "sign-pkcs1": "RSAKit RSASSA-PKCS1-v1_5 signature(forDigest:) of a SHA-256 digest: blinding, CRT, check",
            "sign-pss": "RSAKit RSASSA-PSS SHA-256, MGF1-SHA-256, salt 32 from getrandom, over a digest",
            "oaep-decrypt":
                "RSAKit RSAES-OAEP SHA-256 decrypt of one block (32-byte message): private op + constant-time decode",
            "verify-pkcs1": "RSAKit RSASSA-PKCS1-v1_5 verify over a SHA-256 digest (e = 65537, re-encode and compare)",
            "verify-pss": "RSAKit RSASSA-PSS SHA-256 verify, salt length 32, over a digest",
            "oaep-encrypt": "RSAKit RSAES-OAEP SHA-256 encrypt of 32 bytes, seed from getrandom"
        ]
        let group = "schemes-\(bits)"
        var ours = Array(repeating: [Double](), count: operations.count)
        var sign: [Double] = [], verify: [Double] = []
        let runs = peer == nil ? options.runs : options.opensslRuns
        let seconds = peer == nil ? options.runTime : options.besideOpenSSLSeconds
        let counts = try operations.map { try calibrate($0, seconds: seconds, warmUpTime: options.warmUpTime) }
        func timeOurs(_ i: Int) throws {
            let elapsed = try time { try operations[i].body(counts[i]) }
            ours[i].append(Double(counts[i]) / elapsed)
        }
        for _ in 0..<runs {
            for i in 0..<privateCount { try timeOurs(i) }
            if let peer {
                let figures = try peer.speed(bits: bits, seconds: options.opensslSeconds)
                sign.append(figures.sign)
                verify.append(figures.verify)
            }
            for i in privateCount..<operations.count { try timeOurs(i) }
        }
        for (i, operation) in operations.enumerated() {
            reporter.record(
                CaseResult(
                    name: operation.name, bits: bits, unit: "ops/s", samples: ours[i],
                    perRun: counts[i], pairedGroup: group, what: what[operation.name] ?? ""))
        }
        guard peer != nil else { return }
        reporter.record(
            CaseResult(
                name: "openssl-sign-beside-schemes", bits: bits, unit: "ops/s", samples: sign, pairedGroup: group,
                what:
                    "openssl speed -elapsed -seconds \(options.opensslSeconds) rsa\(bits), sign/s (RSA_sign PKCS#1 "
                    + "v1.5: the private operation)"
            ))
        reporter.record(
            CaseResult(
                name: "openssl-verify-beside-schemes", bits: bits, unit: "ops/s", samples: verify, pairedGroup: group,
                what:
                    "openssl speed -elapsed -seconds \(options.opensslSeconds) rsa\(bits), verify/s (RSA_verify "
                    + "PKCS#1 v1.5: the public operation)"
            ))
        for name in ["sign-pkcs1", "sign-pss", "oaep-decrypt"] {
            reporter.ratio(name, versus: "openssl-sign-beside-schemes", bits: bits)
        }
        for name in ["verify-pkcs1", "verify-pss", "oaep-encrypt"] {
            reporter.ratio(name, versus: "openssl-verify-beside-schemes", bits: bits)
        }
    }
}
