// The targets timed through RSAKit's public calls, each two classes of prepared inputs:
// RSAES-PKCS1-v1_5 decryption (valid against random, and the Marvin classes), RSAES-OAEP
// decryption (valid against random) and the container's frame check (a valid container
// against one whose block decrypts but whose frame names another header).

import RSAKit

/// The inputs of one batch, made by `prepare` and read by `run` (one per slot).
final class BatchInputs {
    var inputs: [[UInt8]] = []
}

/// A target that decrypts, with `operation`, a fresh input of each measurement's class made
/// by `make` (class 0 or 1 to the input).
func decryptionTarget(
    _ name: String, classes: (String, String), make: @escaping (Int) -> [UInt8],
    expected: (Bool, Bool), resultRevealsClass: Bool? = nil, operation: @escaping ([UInt8]) -> Bool
) -> TimingTarget {
    let batch = BatchInputs()
    return TimingTarget(
        name: name, classes: classes, prepare: { classes in batch.inputs = classes.map(make) },
        run: { _, item in operation(batch.inputs[item]) }, expected: expected,
        resultRevealsClass: resultRevealsClass)
}

/// The class pairs of the RSAES-PKCS1-v1_5 targets: valid M=48 against each Marvin class,
/// two pairs of invalid classes (which check failed must not show), and a control of two
/// draws of the same class (it must show nothing, or the harness sees its own inputs).
let pkcs1Pairs: [(name: String, classes: (MarvinClass, MarvinClass))] = [
    ("pkcs1-valid-vs-random", (.valid48, .random)),
    ("pkcs1-first-byte", (.valid48, .firstByte)),
    ("pkcs1-second-byte", (.valid48, .secondByte)),
    ("pkcs1-no-separator", (.valid48, .noSeparator)),
    ("pkcs1-short-ps", (.valid48, .shortPS)),
    ("pkcs1-separator-last", (.valid48, .separatorLast)),
    ("pkcs1-max-length", (.valid48, .maximumLength)),
    ("pkcs1-invalid-first-byte-vs-no-separator", (.firstByte, .noSeparator)),
    ("pkcs1-invalid-second-byte-vs-short-ps", (.secondByte, .shortPS)),
    ("control-valid-vs-valid", (.valid48, .valid48))
]

/// RSAES-PKCS1-v1_5 decryption (`RSAPrivateKey.decrypt(_:)`) over ``pkcs1Pairs``, each
/// class a pool of its own.
func pkcs1Targets(key: RSAPrivateKey) -> [TimingTarget] {
    let k = key.modulusByteCount
    return pkcs1Pairs.map { name, classes in
        decryptionTarget(
            name, classes: (classes.0.rawValue, classes.1.rawValue),
            make: { pkcs1Ciphertext($0 == 0 ? classes.0 : classes.1, key: key.publicKey) },
            expected: (classes.0.isValid, classes.1.isValid),
            resultRevealsClass: classes.0.isValid != classes.1.isValid
                || classes.0.messageLength(k: k) != classes.1.messageLength(k: k)
        ) { (try? key.decrypt($0)) != nil }
    }
}

/// RSADP alone (`RSAHazmat.rsadp`) on the classes of pkcs1-first-byte: where a difference in
/// pkcs1-first-byte comes from, the private operation or what follows it.
func rsadpTarget(key: RSAPrivateKey) -> TimingTarget {
    decryptionTarget(
        "rsadp-valid-vs-first-byte", classes: (MarvinClass.valid48.rawValue, MarvinClass.firstByte.rawValue),
        make: { pkcs1Ciphertext($0 == 0 ? .valid48 : .firstByte, key: key.publicKey) },
        expected: (true, true)
    ) { (try? RSAHazmat.rsadp($0, key: key)) != nil }
}

/// RSAES-OAEP with SHA-256 (`RSAPrivateKey.decrypt(_:padding:)`): valid ciphertexts of
/// 32-byte messages against random c (invalid).
func oaepTarget(key: RSAPrivateKey) -> TimingTarget {
    let padding = RSAEncryptionPadding.oaep(RSAOAEPParameters(hash: .sha256))
    return decryptionTarget(
        "oaep-valid-vs-random", classes: ("valid M=32", "random c"),
        make: { cls in
            guard cls == 0 else { return pkcs1Ciphertext(.random, key: key.publicKey) }
            return try! key.publicKey.encrypt(randomBytes(32), padding: padding)
        },
        expected: (true, false)
    ) { (try? key.decrypt($0, padding: padding)) != nil }
}

/// A container (version 2, PKCS#1 v1.5, one block of 16 random bytes) of `kind`: 0 valid,
/// 1 its body behind another container's header (the block's padding is valid, only the
/// frame check fails: the header digest in the frame), 2 its header before a random block
/// (the padding check fails).
func container(_ kind: Int, key: RSAPublicKey) -> [UInt8] {
    let valid = try! RSAMessageContainer.encrypt(randomBytes(16), to: key)
    let headerByteCount = RSAMessageContainer.headerByteCount(version: 2)
    switch kind {
    case 1:
        let other = try! RSAMessageContainer.encrypt(randomBytes(16), to: key)
        return Array(other[..<headerByteCount]) + Array(valid[headerByteCount...])
    case 2:
        return Array(valid[..<headerByteCount]) + pkcs1Ciphertext(.random, key: key)
    default:
        return valid
    }
}

/// The container through `RSAMessageContainer.decrypt(header:from:to:with:random:concurrency:)`
/// with one worker (no thread hand-over in the timed region), header parsing included:
/// container-frame, valid against another header (the verdict, which the error reveals
/// anyway), and container-frame-vs-padding, another header against a random block (which
/// check failed must not show: that would be a padding oracle behind the container).
func containerTargets(key: RSAPrivateKey) -> [TimingTarget] {
    let decrypt = { (container: [UInt8]) -> Bool in
        guard let header = try? RSAMessageContainer.Header(parsing: container) else { return false }
        var source = RSAArrayByteSource(Array(container[header.byteCount...]))
        var sink = RSAArrayByteSink()
        return (try? RSAMessageContainer.decrypt(header: header, from: &source, to: &sink, with: key, concurrency: 1))
            != nil
    }
    return [
        decryptionTarget(
            "container-frame", classes: ("valid container", "another header"),
            make: { container($0, key: key.publicKey) }, expected: (true, false), operation: decrypt),
        decryptionTarget(
            "container-frame-vs-padding", classes: ("another header", "random block"),
            make: { container($0 + 1, key: key.publicKey) }, expected: (false, false), operation: decrypt)
    ]
}
