// The targets timed through RSAKit's public calls, each two classes of prepared inputs:
// RSAES-PKCS1-v1_5 decryption (valid against random, and the Marvin classes), RSAES-OAEP
// decryption (valid against random) and the container's frame check (a valid container
// against one whose block decrypts but whose frame names another header).

import RSAKit

/// Prepared inputs per class of each library target.
let libraryPoolSize = 256

/// A target that decrypts `pools[cls][item]` with `operation`.
func decryptionTarget(
    _ name: String, classes: (String, String), pools: ([[UInt8]], [[UInt8]]),
    expected: (Bool, Bool), resultRevealsClass: Bool? = nil, operation: @escaping ([UInt8]) -> Bool
) -> TimingTarget {
    let inputs = [pools.0, pools.1]
    return TimingTarget(
        name: name, classes: classes, poolSize: min(pools.0.count, pools.1.count),
        run: { cls, item in operation(inputs[cls][item]) }, expected: expected,
        resultRevealsClass: resultRevealsClass)
}

/// The class pairs of the RSAES-PKCS1-v1_5 targets: valid M=48 against each Marvin class,
/// two pairs of invalid classes (which check failed must not show), and a control of two
/// pools of the same class (it must show nothing, or the harness sees its own inputs).
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
    ("control-valid-vs-valid", (.valid48, .valid48)),
]

/// RSAES-PKCS1-v1_5 decryption (`RSAPrivateKey.decrypt(_:)`) over ``pkcs1Pairs``, each
/// class a pool of its own.
func pkcs1Targets(key: RSAPrivateKey) throws -> [TimingTarget] {
    let k = key.modulusByteCount
    return try pkcs1Pairs.map { name, classes in
        decryptionTarget(
            name, classes: (classes.0.rawValue, classes.1.rawValue),
            pools: (try pkcs1Ciphertexts(classes.0, count: libraryPoolSize, key: key.publicKey),
                    try pkcs1Ciphertexts(classes.1, count: libraryPoolSize, key: key.publicKey)),
            expected: (classes.0.isValid, classes.1.isValid),
            resultRevealsClass: classes.0.isValid != classes.1.isValid || classes.0.messageLength(k: k) != classes.1.messageLength(k: k)
        ) { (try? key.decrypt($0)) != nil }
    }
}

/// RSADP alone (`RSAHazmat.rsadp`) on the pools of pkcs1-first-byte: where a difference in
/// pkcs1-first-byte comes from, the private operation or what follows it.
func rsadpTarget(key: RSAPrivateKey) throws -> TimingTarget {
    decryptionTarget(
        "rsadp-valid-vs-first-byte", classes: (MarvinClass.valid48.rawValue, MarvinClass.firstByte.rawValue),
        pools: (try pkcs1Ciphertexts(.valid48, count: libraryPoolSize, key: key.publicKey),
                try pkcs1Ciphertexts(.firstByte, count: libraryPoolSize, key: key.publicKey)),
        expected: (true, true)
    ) { (try? RSAHazmat.rsadp($0, key: key)) != nil }
}

/// RSAES-OAEP with SHA-256 (`RSAPrivateKey.decrypt(_:padding:)`): valid ciphertexts of
/// 32-byte messages against random c (invalid).
func oaepTarget(key: RSAPrivateKey) throws -> TimingTarget {
    let padding = RSAEncryptionPadding.oaep(RSAOAEPParameters(hash: .sha256))
    var generator = SystemRandomNumberGenerator()
    let valid = try (0..<libraryPoolSize).map { _ in
        try key.publicKey.encrypt((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }, padding: padding)
    }
    let random = try pkcs1Ciphertexts(.random, count: libraryPoolSize, key: key.publicKey)
    return decryptionTarget(
        "oaep-valid-vs-random", classes: ("valid M=32", "random c"), pools: (valid, random),
        expected: (true, false)
    ) { (try? key.decrypt($0, padding: padding)) != nil }
}

/// The containers (version 2, PKCS#1 v1.5, one block of 16 bytes) of the container targets:
/// `count` valid ones, the same bodies behind another container's header (the block's
/// padding is valid, only the frame check fails: the header digest in the frame), and the
/// valid headers before a random block (the padding check fails).
func containerPools(key: RSAPrivateKey, count: Int) throws -> (valid: [[UInt8]], anotherHeader: [[UInt8]], randomBlock: [[UInt8]]) {
    var generator = SystemRandomNumberGenerator()
    let valid = try (0..<count).map { _ in
        try RSAMessageContainer.encrypt((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }, to: key.publicKey)
    }
    let headerByteCount = RSAMessageContainer.headerByteCount(version: 2)
    let anotherHeader = valid.indices.map { i in
        Array(valid[(i + 1) % count][..<headerByteCount]) + Array(valid[i][headerByteCount...])
    }
    let blocks = try pkcs1Ciphertexts(.random, count: count, key: key.publicKey)
    let randomBlock = valid.indices.map { i in Array(valid[i][..<headerByteCount]) + blocks[i] }
    return (valid, anotherHeader, randomBlock)
}

/// The container through `RSAMessageContainer.decrypt(header:from:to:with:random:concurrency:)`
/// with one worker (no thread hand-over in the timed region), header parsing included:
/// container-frame, valid against another header (the verdict, which the error reveals
/// anyway), and container-frame-vs-padding, another header against a random block (which
/// check failed must not show: that would be a padding oracle behind the container).
func containerTargets(key: RSAPrivateKey) throws -> [TimingTarget] {
    let pools = try containerPools(key: key, count: libraryPoolSize)
    let decrypt = { (container: [UInt8]) -> Bool in
        guard let header = try? RSAMessageContainer.Header(parsing: container) else { return false }
        var source = RSAArrayByteSource(Array(container[header.byteCount...]))
        var sink = RSAArrayByteSink()
        return (try? RSAMessageContainer.decrypt(header: header, from: &source, to: &sink, with: key, concurrency: 1)) != nil
    }
    return [
        decryptionTarget("container-frame", classes: ("valid container", "another header"),
                         pools: (pools.valid, pools.anotherHeader), expected: (true, false), operation: decrypt),
        decryptionTarget("container-frame-vs-padding", classes: ("another header", "random block"),
                         pools: (pools.anotherHeader, pools.randomBlock), expected: (false, false), operation: decrypt),
    ]
}
