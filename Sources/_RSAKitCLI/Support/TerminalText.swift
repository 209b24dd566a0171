/// Text that reaches a terminal safely: tags and labels come from users (or from an imported
/// store) and must not forge table rows or drive the terminal with escape sequences.

/// `text` with control characters escaped: C0 controls and DEL as `\n`, `\t`, `\r`, `\e`
/// or `\xHH`, C1 controls and the bidirectional overrides/isolates (U+202A-U+202E,
/// U+2066-U+2069) as `\u{HHHH}`, and a backslash as `\\` (so the escaping is unambiguous).
/// Printable text, non-ASCII letters included, is unchanged.
func terminalSafe(_ text: String) -> String {
    escapingControls(text, backslash: true)
}

/// `text` with the same control characters escaped as ``terminalSafe(_:)``, but a backslash
/// left as it is: for whole diagnostic lines (errors, warnings) that may already hold parts
/// escaped by `terminalSafe`, which must not be escaped twice. A message from the library can
/// quote what an input file holds (a certificate's subject, a PKCS#12 friendly name).
func controlsEscaped(_ text: String) -> String {
    escapingControls(text, backslash: false)
}

private func escapingControls(_ text: String, backslash: Bool) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        switch scalar.value {
        case 0x5C where backslash: out += "\\\\"
        case 0x0A: out += "\\n"
        case 0x09: out += "\\t"
        case 0x0D: out += "\\r"
        case 0x1B: out += "\\e"
        case _ where !isTerminalControl(scalar):
            out.unicodeScalars.append(scalar)
        case 0x00..<0x20, 0x7F:
            out += "\\x" + hex(scalar.value, digits: 2)
        default:
            out += "\\u{" + hex(scalar.value, digits: 4) + "}"
        }
    }
    return out
}

/// Whether `scalar` is one that ``terminalSafe(_:)`` escapes: a C0 control, DEL, a C1 control,
/// a bidirectional override or isolate (U+202A-U+202E, U+2066-U+2069), a line or paragraph
/// separator (U+2028, U+2029) or U+FEFF.
func isTerminalControl(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x00..<0x20, 0x7F, 0x80..<0xA0, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029, 0xFEFF: return true
    default: return false
    }
}

private func hex(_ value: UInt32, digits: Int) -> String {
    let text = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, digits - text.count)) + text
}

/// `text` padded with spaces to `width` characters (never truncated).
func padded(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

/// `text` quoted for a POSIX shell when it needs it (for commands we suggest, like chmod).
func shellQuoted(_ text: String) -> String {
    let safe = text.unicodeScalars.allSatisfy {
        ($0 >= "a" && $0 <= "z") || ($0 >= "A" && $0 <= "Z") || ($0 >= "0" && $0 <= "9")
            || "/._-+,:@%".unicodeScalars.contains($0)
    }
    return safe && !text.isEmpty ? text : "'" + text.replacingAll("'", with: "'\\''") + "'"
}

extension String {
    /// Every occurrence of `target` replaced (no Foundation needed).
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var out = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: target) {
            out += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return out + rest
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs, CR and LF (no Foundation needed,
    /// so the CLI runs on FoundationEssentials without loading ICU).
    func trimmingWhitespace() -> String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }
        guard let first = firstIndex(where: { !blank($0) }), let last = lastIndex(where: { !blank($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
