// PEM text (RFC 7468 textual encoding; RFC 1421 headers as OpenSSL still writes them).
//
// Reading is as lenient as OpenSSL's PEM_read_bio: LF or CRLF line ends, a missing final
// newline, spaces and tabs around lines, any text before BEGIN, between blocks and after
// END (for example PKCS#12 "Bag Attributes"), several blocks in one file, base64 lines of
// any width (or one long line), missing '=' padding, and RFC 1421 header lines
// ("Proc-Type: ...") after BEGIN. Writing is strict RFC 7468: the exact label, 64-column
// lines, LF line ends, a final newline.

/// One `-----BEGIN label-----` ... `-----END label-----` block found in a text.
package struct PEMBlock {
    /// 1-based position of the block among all blocks in the text.
    package let index: Int
    /// The label between "BEGIN " and the closing dashes, for example "PUBLIC KEY".
    package let label: String
    /// 1-based line number of the BEGIN line.
    package let beginLine: Int
    /// Set when the block is unusable as framed (no END line, END label differs).
    let problem: (reason: String, line: Int)?
    /// The lines between BEGIN and END: 1-based line number and byte range (trimmed).
    fileprivate let bodyLines: [(line: Int, range: Range<Int>)]

    /// Whether the label names a key of any kind ("... PRIVATE KEY" or "... PUBLIC KEY").
    var isKeyLabel: Bool { label.hasSuffix("PRIVATE KEY") || label.hasSuffix("PUBLIC KEY") }
    /// Whether the label names a public key.
    var isPublicKeyLabel: Bool { label.hasSuffix("PUBLIC KEY") }
    /// Whether the label names a certificate ("CERTIFICATE", "X509 CERTIFICATE", "TRUSTED CERTIFICATE").
    package var isCertificateLabel: Bool { label.hasSuffix("CERTIFICATE") }
}

/// A text split into PEM blocks. Scanning never fails; framing problems are recorded on
/// the block and raised only if that block is the one used.
package struct PEMDocument {
    /// The whole input text as bytes.
    let bytes: [UInt8]
    /// Every block, in order.
    package let blocks: [PEMBlock]

    /// Whether `bytes` contains a line starting (after blanks) with "-----BEGIN ".
    package static func containsBeginLine(_ bytes: [UInt8]) -> Bool {
        let marker = Array("-----BEGIN ".utf8)
        guard bytes.count >= marker.count else { return false }
        var lineStart = 0
        while lineStart + marker.count <= bytes.count {
            // Blanks may precede the marker on its line: the same blanks the scanner trims
            // (space, tab, CR), so both agree on which texts hold a BEGIN line.
            var index = lineStart
            while index < bytes.count && isBlank(bytes[index]) { index += 1 }
            if index + marker.count <= bytes.count && bytes[index..<(index + marker.count)].elementsEqual(marker) {
                return true
            }
            guard let newline = bytes[index...].firstIndex(of: 0x0A) else { return false }
            lineStart = newline + 1
        }
        return false
    }

    package init(scanning bytes: [UInt8]) {
        self.bytes = bytes
        var blocks: [PEMBlock] = []
        // State of the block being read.
        var openLabel: String?
        var openLine = 0
        var body: [(line: Int, range: Range<Int>)] = []

        func close(problem: (reason: String, line: Int)?) {
            if let label = openLabel {
                blocks.append(
                    PEMBlock(
                        index: blocks.count + 1, label: label, beginLine: openLine,
                        problem: problem, bodyLines: body))
            }
            openLabel = nil
            body = []
        }

        var lineNumber = 0
        var lineStart = 0
        while lineStart <= bytes.count {
            lineNumber += 1
            var lineEnd = lineStart
            while lineEnd < bytes.count && bytes[lineEnd] != 0x0A { lineEnd += 1 }
            // Trim CR, spaces and tabs at both ends.
            var start = lineStart
            var end = lineEnd
            while start < end && PEMDocument.isBlank(bytes[start]) { start += 1 }
            while end > start && PEMDocument.isBlank(bytes[end - 1]) { end -= 1 }
            let line = bytes[start..<end]

            if let label = PEMDocument.boundaryLabel(line, kind: "BEGIN") {
                if let open = openLabel {
                    close(
                        problem: (
                            "PEM block \"\(open)\" begun at line \(openLine) has no END line before the next BEGIN",
                            lineNumber
                        ))
                }
                openLabel = label
                openLine = lineNumber
            } else if let label = PEMDocument.boundaryLabel(line, kind: "END") {
                if let open = openLabel {
                    if label == open {
                        close(problem: nil)
                    } else {
                        close(
                            problem: (
                                "PEM block begun as \"\(open)\" at line \(openLine) ends with \"END \(label)\"",
                                lineNumber
                            ))
                    }
                }
                // An END outside any block is text, like any other stray line.
            } else if openLabel != nil {
                body.append((lineNumber, start..<end))
            }
            lineStart = lineEnd + 1
        }
        if let open = openLabel {
            close(problem: ("PEM block \"\(open)\" begun at line \(openLine) has no END line", lineNumber))
        }
        self.blocks = blocks
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D
    }

    /// The label of a "-----BEGIN label-----" / "-----END label-----" line, else nil.
    private static func boundaryLabel(_ line: ArraySlice<UInt8>, kind: String) -> String? {
        let prefix = Array("-----\(kind) ".utf8)
        let suffix = Array("-----".utf8)
        guard line.count >= prefix.count + suffix.count,
            line.prefix(prefix.count).elementsEqual(prefix),
            line.suffix(suffix.count).elementsEqual(suffix)
        else { return nil }
        let labelBytes = line.dropFirst(prefix.count).dropLast(suffix.count)
        guard labelBytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "-") }) else { return nil }
        return String(decoding: labelBytes, as: UTF8.self)
    }

    /// The RFC 1421 headers and the base64-decoded content of `block`.
    ///
    /// Header lines (containing ':') may precede the base64 text, optionally followed by a
    /// blank line; blank lines and spaces inside the base64 are ignored.
    /// - Throws: `RSAError.malformedPEM` for a framing problem, no content, or bad base64
    ///   (naming the line).
    package func decode(_ block: PEMBlock) throws -> (headers: [(name: String, value: String)], der: [UInt8]) {
        if let problem = block.problem {
            throw RSAError.malformedPEM(reason: problem.reason, line: problem.line)
        }
        var headers: [(name: String, value: String)] = []
        var characters: [UInt8] = []
        var lineStarts: [(characterIndex: Int, line: Int)] = []
        var inHeaders = true
        for (line, range) in block.bodyLines {
            let text = bytes[range]
            if inHeaders, let colon = text.firstIndex(of: UInt8(ascii: ":")) {
                let name = String(decoding: bytes[range.lowerBound..<colon], as: UTF8.self)
                let value = String(decoding: bytes[(colon + 1)..<range.upperBound], as: UTF8.self)
                headers.append((name, value.trimmingBlanks()))
                continue
            }
            if text.isEmpty { continue }
            inHeaders = false
            lineStarts.append((characters.count, line))
            for byte in text where !PEMDocument.isBlank(byte) { characters.append(byte) }
        }
        defer { wipe(&characters) }
        guard !characters.isEmpty else {
            throw RSAError.malformedPEM(
                reason: "PEM block \"\(block.label)\" has no base64 content", line: block.beginLine)
        }
        do {
            return (headers, try Base64.decode(characters, strict: false))
        } catch let error as Base64.DecodingError {
            let line = lineStarts.last(where: { $0.characterIndex <= error.index })?.line ?? block.beginLine
            throw RSAError.malformedPEM(reason: "\(error.reason) in PEM block \"\(block.label)\"", line: line)
        }
    }

    /// Write `der` as one PEM block: "-----BEGIN label-----", base64 in 64-column lines,
    /// "-----END label-----", each line ending in LF (RFC 7468 §2).
    package static func encode(_ der: [UInt8], label: String) -> String {
        let base64 = Array(Base64.encode(der).utf8)
        var out = "-----BEGIN \(label)-----\n"
        out.reserveCapacity(base64.count + base64.count / 64 + 2 * label.count + 40)
        var index = 0
        while index < base64.count {
            let end = min(index + 64, base64.count)
            out += String(decoding: base64[index..<end], as: UTF8.self)
            out += "\n"
            index = end
        }
        out += "-----END \(label)-----\n"
        return out
    }

    /// Write one PEM block with RFC 1421 header lines ("Proc-Type: 4,ENCRYPTED"), a blank
    /// line after them, then the base64 body, as OpenSSL writes legacy encrypted keys.
    static func encode(_ der: [UInt8], label: String, headers: [(name: String, value: String)]) -> String {
        guard !headers.isEmpty else { return encode(der, label: label) }
        let plain = encode(der, label: label)
        let begin = "-----BEGIN \(label)-----\n"
        let headerText = headers.map { "\($0.name): \($0.value)\n" }.joined() + "\n"
        return begin + headerText + plain.dropFirst(begin.count)
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs, CR and LF.
    fileprivate func trimmingBlanks() -> String {
        let blanks: Set<Character> = [" ", "\t", "\r", "\n"]
        var slice = Substring(self)
        while let first = slice.first, blanks.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, blanks.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}
