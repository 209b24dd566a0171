// StoreStressHelper: drives an RSAKeyStore from a separate process, for the store tests
// (concurrent writers, kill -9 during writes) and for measuring a lookup in a large store.
// Not installed; the tests run it from the build products folder.
//
// USAGE
//   StoreStressHelper add-pairs   --store DIR --key PEM --prefix P --count N [--replace] [--passphrase FILE]
//       Add pairs P0 ... P(N-1) with the private key in PEM. Prints "added TAG" or
//       "exists TAG" per tag. Exit 0 when every pair was added, 3 when some existed.
//   StoreStressHelper churn       --store DIR --key PEM --key PEM --prefix P --count N
//       Forever: replace the pairs P0 ... P(N-1), alternating the keys (until killed).
//   StoreStressHelper fill-public --store DIR --key PEM --prefix P --count N [--batch B]
//       Add N public items P0 ... with one public key, B per atomic batch (default 1000).
//   StoreStressHelper fill-pairs  --store DIR --key PEM --prefix P --count N
//       Add N/2 key pairs (N items) P0 ... with one key, one atomic write per pair.
//   StoreStressHelper generate-key --bits N --out PEM
//       Generate a key with RSAPrivateKey.generate and write it as PKCS#8 PEM (mode 0600).
//   StoreStressHelper time-lookup --store DIR --tag T [--repeat R]
//       Time opening the store, the first lookup of T and the median of R more lookups.
//   StoreStressHelper protect     --store DIR --passphrase FILE [--kdf interactive|moderate]
//       Protect the store with the passphrase in FILE (printing "ready" first; kill -9 tests).
//   StoreStressHelper change-passphrase --store DIR --passphrase OLD --new-passphrase NEW [--kdf K]
//       Change the passphrase (printing "ready" first).
//   StoreStressHelper fill-keychain --store DIR --key PEM --cert DER --prefix P --count N [--batch B]
//       Add N public keys, N generic passwords and N certificates (distinct serials made from
//       the template certificate DER by rewriting the serial's last 4 bytes; signatures are
//       not checked when storing), B per atomic batch (default 1000).
//   StoreStressHelper time-keychain --store DIR --prefix P --count N [--repeat R] [--passphrase FILE]
//       Time the lookups of each class in a store filled by fill-keychain, and with
//       --passphrase the unlock (Argon2id with the recorded parameters).
//
// Exit status: 0 success, 1 failure, 3 some tag already existed, 64 usage error.
// Data on stdout, diagnostics on stderr.

import Foundation
import RSAKit

struct Usage: Error { let message: String }

struct Arguments {
    var command = ""
    var store = ""
    var keys: [String] = []
    var prefix = ""
    var count = 0
    var batch = 1000
    var tag = ""
    var repeatCount = 100
    var replace = false
    var bits = 2048
    var out = ""
    var passphrase = ""
    var newPassphrase = ""
    var kdf = "interactive"
    var cert = ""

    init(_ argv: [String]) throws {
        guard let first = argv.first else { throw Usage(message: "missing command") }
        command = first
        var rest = argv.dropFirst()
        func value(_ option: String) throws -> String {
            guard let v = rest.popFirst() else { throw Usage(message: "\(option) needs a value") }
            return v
        }
        func number(_ option: String) throws -> Int {
            let text = try value(option)
            guard let n = Int(text), n >= 0 else { throw Usage(message: "\(option): not a count: \(text)") }
            return n
        }
        while let option = rest.popFirst() {
            switch option {
            case "--store": store = try value(option)
            case "--key": keys.append(try value(option))
            case "--prefix": prefix = try value(option)
            case "--count": count = try number(option)
            case "--batch": batch = max(1, try number(option))
            case "--tag": tag = try value(option)
            case "--repeat": repeatCount = max(1, try number(option))
            case "--replace": replace = true
            case "--bits": bits = try number(option)
            case "--out": out = try value(option)
            case "--passphrase": passphrase = try value(option)
            case "--new-passphrase": newPassphrase = try value(option)
            case "--kdf": kdf = try value(option)
            case "--cert": cert = try value(option)
            default: throw Usage(message: "unknown option \(option)")
            }
        }
        guard !store.isEmpty || command == "generate-key" else { throw Usage(message: "--store is required") }
    }
}

func readPrivateKey(_ path: String) throws -> RSAPrivateKey {
    guard let data = FileManager.default.contents(atPath: path) else {
        throw RSAError.storeIOError(path: path, reason: "cannot read the key file")
    }
    return try RSAPrivateKey(pemRepresentation: String(decoding: data, as: UTF8.self))
}

func readSecret(_ path: String) throws -> RSASecretBytes {
    guard let data = FileManager.default.contents(atPath: path) else {
        throw RSAError.storeIOError(path: path, reason: "cannot read the passphrase file")
    }
    var bytes = [UInt8](data)
    return RSASecretBytes(consuming: &bytes)
}

func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
    guard needle.count <= haystack.count else { return nil }
    for i in 0...(haystack.count - needle.count) where haystack[i..<(i + needle.count)].elementsEqual(needle) {
        return i
    }
    return nil
}

func milliseconds(since start: UInt64) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000
}

func run(_ args: Arguments) throws -> Int32 {
    switch args.command {
    case "add-pairs":
        guard let keyPath = args.keys.first else { throw Usage(message: "--key is required") }
        let key = try readPrivateKey(keyPath)
        let store = try RSAKeyStore(path: args.store)
        if !args.passphrase.isEmpty { try store.unlock(passphrase: try readSecret(args.passphrase)) }
        var status: Int32 = 0
        for i in 0..<args.count {
            let tag = args.prefix + String(i)
            do {
                try store.addKeyPair(key, tag: tag, label: "pair \(i)", replace: args.replace)
                print("added \(tag)")
            } catch RSAError.duplicateItem {
                print("exists \(tag)")
                status = 3
            }
        }
        return status
    case "churn":
        guard args.keys.count >= 2 else { throw Usage(message: "churn needs two --key options") }
        let keys = try args.keys.map(readPrivateKey)
        let store = try RSAKeyStore(path: args.store)
        var round = 0
        while true {
            for i in 0..<max(1, args.count) {
                try store.addKeyPair(keys[(round + i) % keys.count], tag: args.prefix + String(i), replace: true)
            }
            round += 1
            if round == 1 { print("ready"); fflush(nil) }
        }
    case "fill-public":
        guard let keyPath = args.keys.first else { throw Usage(message: "--key is required") }
        let key = try readPrivateKey(keyPath).publicKey
        let store = try RSAKeyStore(path: args.store)
        var next = 0
        let start = DispatchTime.now().uptimeNanoseconds
        while next < args.count {
            let end = min(args.count, next + args.batch)
            let batch = (next..<end).map { (key: key, tag: args.prefix + String($0), label: String?.none) }
            try store.addPublicKeys(batch, replace: args.replace)
            next = end
        }
        print("filled \(args.count) public items in \(String(format: "%.1f", milliseconds(since: start) / 1000)) s")
        return 0
    case "fill-pairs":
        guard let keyPath = args.keys.first else { throw Usage(message: "--key is required") }
        let key = try readPrivateKey(keyPath)
        let store = try RSAKeyStore(path: args.store)
        let start = DispatchTime.now().uptimeNanoseconds
        for i in 0..<(args.count / 2) {
            try store.addKeyPair(key, tag: args.prefix + String(i), replace: args.replace)
        }
        print(
            "filled \(args.count / 2) pairs (\(args.count / 2 * 2) items) in "
                + "\(String(format: "%.1f", milliseconds(since: start) / 1000)) s"
        )
        return 0
    case "generate-key":
        guard !args.out.isEmpty else { throw Usage(message: "--out is required") }
        let key = try RSAPrivateKey.generate(bitCount: args.bits)
        let fd = open(args.out, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw RSAError.storeIOError(path: args.out, reason: "cannot create the key file") }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        handle.write(Data(key.pkcs8PEMRepresentation.utf8))
        return 0
    case "time-lookup":
        guard !args.tag.isEmpty else { throw Usage(message: "--tag is required") }
        var start = DispatchTime.now().uptimeNanoseconds
        let store = try RSAKeyStore(path: args.store)
        let openMs = milliseconds(since: start)
        start = DispatchTime.now().uptimeNanoseconds
        let first = try store.publicKey(tag: args.tag)
        let firstMs = milliseconds(since: start)
        var samples: [Double] = []
        for _ in 0..<args.repeatCount {
            start = DispatchTime.now().uptimeNanoseconds
            let again = try store.publicKey(tag: args.tag)
            samples.append(milliseconds(since: start))
            precondition(again == first)
        }
        samples.sort()
        let attributes = try store.keyItem(tag: args.tag, keyClass: .public)
        print(
            "store=\(store.path) tag=\(args.tag) bits=\(attributes.keySizeInBits) "
                + String(
                    format: "open_ms=%.3f first_lookup_ms=%.3f median_lookup_ms=%.3f min_ms=%.3f max_ms=%.3f runs=%d",
                    openMs, firstMs, samples[samples.count / 2], samples[0], samples[samples.count - 1], samples.count))
        return 0
    case "protect":
        let store = try RSAKeyStore(path: args.store)
        let passphrase = try readSecret(args.passphrase)
        print("ready"); fflush(nil)
        try store.protect(passphrase: passphrase, parameters: args.kdf == "moderate" ? .moderate : .interactive)
        print("protected")
        return 0
    case "change-passphrase":
        let store = try RSAKeyStore(path: args.store)
        let old = try readSecret(args.passphrase), new = try readSecret(args.newPassphrase)
        print("ready"); fflush(nil)
        try store.changePassphrase(from: old, to: new, parameters: args.kdf == "moderate" ? .moderate : .interactive)
        print("changed")
        return 0
    case "fill-keychain":
        guard let keyPath = args.keys.first, !args.cert.isEmpty else {
            throw Usage(message: "--key and --cert are required")
        }
        let key = try readPrivateKey(keyPath).publicKey
        let template = [UInt8](FileManager.default.contents(atPath: args.cert) ?? Data())
        let parsed = try X509Certificate(derRepresentation: template)
        let serial = parsed.serialNumber
        guard serial.count >= 8, let at = firstIndex(of: serial, in: template) else {
            throw Usage(message: "the template certificate needs a serial of at least 8 bytes")
        }
        let store = try RSAKeyStore(path: args.store)
        let start = DispatchTime.now().uptimeNanoseconds
        var next = 0
        while next < args.count {
            let end = min(args.count, next + args.batch)
            try store.addPublicKeys((next..<end).map { (key: key, tag: args.prefix + String($0), label: String?.none) })
            try store.addGenericPasswords(
                (next..<end).map {
                    (
                        value: RSASecretBytes(utf8: "value-\($0)"), service: args.prefix + "service-\($0 % 100)",
                        account: "account-\($0)", label: String?.none, comment: String?.none
                    )
                })
            let certificates = try (next..<end).map {
                i -> (
                    certificate: X509Certificate, label: String?, trust: RSACertificateTrust, chain: [X509Certificate]
                ) in
                var der = template
                let n = UInt32(i)
                let last = at + serial.count - 4
                der[last] = UInt8(n >> 24); der[last + 1] = UInt8((n >> 16) & 0xFF)
                der[last + 2] = UInt8((n >> 8) & 0xFF); der[last + 3] = UInt8(n & 0xFF)
                return (try X509Certificate(derRepresentation: der), args.prefix + "cert-\(i)", .unspecified, [])
            }
            try store.addCertificates(certificates)
            next = end
        }
        print(
            "filled \(args.count) keys, passwords and certificates in "
                + "\(String(format: "%.1f", milliseconds(since: start) / 1000)) s"
        )
        return 0
    case "time-keychain":
        let store = try RSAKeyStore(path: args.store)
        let probe = args.count / 2 + 1
        func time(_ name: String, _ body: () throws -> Void) rethrows {
            var samples: [Double] = []
            for _ in 0..<args.repeatCount {
                let start = DispatchTime.now().uptimeNanoseconds
                try body()
                samples.append(milliseconds(since: start))
            }
            samples.sort()
            print(
                "lookup=\(name) items_per_class=\(args.count) "
                    + String(
                        format: "median_ms=%.3f min_ms=%.3f max_ms=%.3f runs=%d",
                        samples[samples.count / 2], samples[0], samples[samples.count - 1], samples.count))
        }
        let tag = args.prefix + String(probe)
        let service = args.prefix + "service-\(probe % 100)", account = "account-\(probe)"
        let label = args.prefix + "cert-\(probe)"
        let certificate = try store.certificates(label: label)[0]
        if !args.passphrase.isEmpty {
            let passphrase = try readSecret(args.passphrase)
            var samples: [Double] = []
            for _ in 0..<min(args.repeatCount, 5) {
                store.lock()
                let start = DispatchTime.now().uptimeNanoseconds
                try store.unlock(passphrase: passphrase)
                samples.append(milliseconds(since: start))
            }
            samples.sort()
            let info = try store.protectionInfo()
            print(
                "unlock \(info.parameters?.description ?? "unprotected") "
                    + String(
                        format: "median_ms=%.1f min_ms=%.1f max_ms=%.1f runs=%d",
                        samples[samples.count / 2], samples[0], samples[samples.count - 1], samples.count))
        }
        try time("key-by-tag") { _ = try store.publicKey(tag: tag) }
        try time("key-item-by-id") { _ = try store.keyItem(id: try store.keyItem(tag: tag, keyClass: .public).itemID) }
        try time("password-by-service-account") { _ = try store.genericPassword(service: service, account: account) }
        try time("password-value") { _ = try store.genericPasswordValue(service: service, account: account) }
        try time("passwords-by-service") { _ = try store.genericPasswords(service: service) }
        try time("certificate-by-label") { _ = try store.certificates(label: label) }
        try time("certificate-by-fingerprint") { _ = try store.certificate(fingerprint: certificate.fingerprint) }
        try time("certificate-by-id") { _ = try store.certificateValue(id: certificate.itemID) }
        return 0
    default:
        throw Usage(message: "unknown command \(args.command)")
    }
}

do {
    exit(try run(Arguments(Array(CommandLine.arguments.dropFirst()))))
} catch let usage as Usage {
    FileHandle.standardError.write(Data("StoreStressHelper: usage error: \(usage.message)\n".utf8))
    exit(64)
} catch {
    FileHandle.standardError.write(Data("StoreStressHelper: error: \(error)\n".utf8))
    exit(1)
}
