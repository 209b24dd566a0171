import RSAKit

/// Manual pages in man(7) roff, rendered from the same ``CommandSpec``s as `rsakit help`, so
/// the two cannot drift: `rsakit help --man-pages DIR` writes rsakit.1 and one
/// rsakit-COMMAND.1 per command (scripts/install.sh and scripts/package-deb.sh run it).
enum ManPages {
    /// The page date: the release this binary is (pages carry the version, not a build time,
    /// so that the package is reproducible).
    static var footer: String { "rsakit \(RSAKitCommandLine.version)" }

    /// File name and roff text of every page: rsakit.1 first, then one per command.
    static func all() -> [(name: String, text: String)] {
        [("rsakit.1", overviewPage())]
            + RSAKitCommandLine.commands.map { ("rsakit-\($0.spec.name).1", page(for: $0.spec)) }
    }

    /// rsakit-COMMAND(1).
    static func page(for spec: CommandSpec) -> String {
        var roff = header(name: "rsakit-\(spec.name)")
        roff += ".SH NAME\nrsakit\\-\(escaped(spec.name)) \\- \(escaped(sentenceWithoutPeriod(spec.overview)))\n"
        roff += ".SH SYNOPSIS\n.nf\n\(escaped(spec.usage))\n.fi\n"
        roff += ".SH DESCRIPTION\n\(paragraphs(spec.overview))"
        if !spec.discussion.isEmpty { roff += ".PP\n" + paragraphs(spec.discussion) }
        if !spec.subcommands.isEmpty {
            roff += ".SH SUBCOMMANDS\n" + spec.subcommands.map { ".B \(escaped($0))\n" }.joined(separator: ".br\n")
        }
        roff += ".SH OPTIONS\n"
        for option in spec.visibleOptions {
            let short = shortOptions.first(where: { $0.value == option.name }).map { "\\fB\\-\($0.key)\\fR, " } ?? ""
            let value = option.valueName.map { " \\fI\(escaped($0))\\fR" } ?? ""
            roff += ".TP\n\(short)\\fB\\-\\-\(escaped(option.name))\\fR\(value)\n\(escaped(option.help))\n"
        }
        roff += ".SH EXIT STATUS\nSee\n.BR rsakit (1).\n"
        roff += ".SH SEE ALSO\n.BR rsakit (1)\n"
        return roff
    }

    /// rsakit(1): the overview, every command, environment, files, exit status, security.
    static func overviewPage() -> String {
        var roff = header(name: "rsakit")
        roff += ".SH NAME\nrsakit \\- RSA encryption, signatures and a keychain on the command line\n"
        roff +=
            ".SH SYNOPSIS\n.B rsakit\n.I command\n.RI [ options ]\n.br\n.B rsakit help\n.RI [ command ]\n.br\n.B "
            + "rsakit \\-\\-version\n"
        roff +=
            ".SH DESCRIPTION\n"
            + paragraphs(
                """
                rsakit encrypts and decrypts with RSA (RSAES-PKCS1-v1_5 and RSAES-OAEP, RFC 8017), signs and \
                verifies (PKCS#1 v1.5 and PSS), and keeps keys, certificates, identities and passwords in a \
                key store, as Apple's Certificate, Key and Trust Services do on iOS. Its output interoperates \
                with iOS apps (SecKeyEncrypt, SecKeyCreateEncryptedData), Java's javax.crypto and OpenSSL. \
                Each command has its own page, and rsakit help COMMAND prints the same text.
                """)
        roff += ".SH COMMANDS\n"
        for command in RSAKitCommandLine.commands {
            roff += ".TP\n.BR rsakit\\-\(escaped(command.spec.name)) (1)\n\(escaped(command.spec.overview))\n"
        }
        roff += ".SH ENVIRONMENT\n"
        for (name, text) in environment {
            roff += ".TP\n.B \(name)\n\(escaped(text))\n"
        }
        roff += ".SH FILES\n"
        for (path, text) in files {
            roff += ".TP\n.I \(escaped(path))\n\(escaped(text))\n"
        }
        roff += ".SH EXIT STATUS\n"
        for (status, text) in exitStatuses {
            roff += ".TP\n.B \(status)\n\(escaped(text))\n"
        }
        roff += ".SH SECURITY NOTES\n" + paragraphs(securityNotes)
        roff += ".SH EXAMPLES\n"
        for (text, command) in examples {
            roff += ".PP\n\(escaped(text))\n.PP\n.RS\n.nf\n\(escaped(command))\n.fi\n.RE\n"
        }
        roff +=
            ".SH SEE ALSO\n"
            + RSAKitCommandLine.commands.map { ".BR rsakit\\-\(escaped($0.spec.name)) (1)" }.joined(separator: ",\n")
            + ",\n.BR openssl (1),\n.BR age (1)\n"
        return roff
    }

    static let environment: [(String, String)] = [
        (
            "RSAKIT_STORE",
            "The key store folder (default: $XDG_DATA_HOME/rsakit, else ~/.local/share/rsakit); --store overrides it."
        ),
        ("XDG_DATA_HOME", "Where the default store lives, as the XDG Base Directory specification says."),
        (
            "RSAKIT_PASSIN",
            "Default for --passin: pass:TEXT, env:VAR, file:PATH, fd:N or stdin. Passphrases are never read from the "
                + "command line otherwise."
        ),
        ("RSAKIT_STORE_PASSIN", "Default for --store-passin: the passphrase of a protected store, same forms."),
        ("RSAKIT_PASSOUT", "Default for --passout: the passphrase for a file or store being protected, same forms."),
        ("RSAKIT_NEW_PASSIN", "The new passphrase of store change-passphrase, same forms."),
        (
            "RSAKIT_PINENTRY",
            "A pinentry program (pinentry-tty, pinentry-gnome3, ...) that asks for every passphrase not given by an "
                + "option or variable, terminal or not; it is spoken to over its standard input and output (Assuan), "
                + "and asked once more after a wrong store passphrase. With no terminal and neither this nor an "
                + "askpass program, pinentry on PATH is asked."
        ),
        (
            "RSAKIT_ASKPASS",
            "An askpass program, run with the prompt as its one argument; the first line of its standard output is "
                + "the passphrase, a non-zero exit a cancel. Asked before the terminal, after RSAKIT_PINENTRY."
        ),
        (
            "SSH_ASKPASS",
            "Used as ssh uses it: with SSH_ASKPASS_REQUIRE=force (or prefer, with DISPLAY or WAYLAND_DISPLAY set) "
                + "before the terminal; with no terminal, when DISPLAY or WAYLAND_DISPLAY is set, unless "
                + "SSH_ASKPASS_REQUIRE=never."
        ),
        (
            "GPG_TTY",
            "The terminal a text-mode pinentry draws on (else the terminal of standard input, output or error)."
        ),
        (
            "RSAKIT_AGENT_SOCK",
            "The socket of a running rsakit agent (default: in $XDG_RUNTIME_DIR, else the store folder)."
        ),
        (
            "RSAKIT_ENGINE",
            "ifma, adx or gmp: run private-key operations on that path (for tests and measurement; a path this CPU "
                + "cannot run is an error). Unset: the fastest this CPU runs, as rsakit --version says."
        ),
        (
            "RSAKIT_DISABLE_IFMA",
            "Set to 1 to skip the AVX-512 IFMA kernel: the ADX kernel runs where the CPU has BMI2 and ADX, else "
                + "GMP's constant-time path."
        ),
        (
            "RSAKIT_PKCS11_ACCESS_GROUPS",
            "Read by the PKCS#11 module librsakit-pkcs11.so, not by rsakit: g1,g2 shows only those access groups' "
                + "keys and certificates in its slot (unset: every group; a name that is not a valid group: no token)."
        )
    ]

    static let files: [(String, String)] = [
        (
            "~/.local/share/rsakit/",
            "The default key store: items (0600) in folders (0700), a VERSION file and a lock file."
        ),
        (
            "/usr/share/doc/rsakit/docs/",
            "The guides: interoperability, keys, the keychain, certificates, mutual TLS, tokens, scripting, the "
                + "container format, security."
        )
    ]

    static let exitStatuses: [(String, String)] = [
        ("0", "Success."),
        ("1", "General failure: I/O error, unwritable output, unprotected key store, internal error."),
        ("64", "Usage error: unknown or missing option, bad value, passphrase required but none given."),
        (
            "65",
            "Data error: wrong passphrase, decryption failed, corrupted or truncated input, wrong key, invalid "
                + "signature."
        ),
        ("66", "Not found: no such item, key, input file or key store."),
        ("73", "The item already exists (use --replace, or --update for passwords)."),
        (
            "77",
            "Not permitted: the access group named, or the item's group, is not one the command was given with "
                + "--access-group; or the user may not use the store: a store shared with a Unix group the user is "
                + "not in, or a system keychain whose rules do not allow the user or do not let it change them."
        )
    ]

    static let securityNotes = """
        Private-key operations are constant-time, blinded and checked before anything is returned; \
        padding checks do not branch on secret data and fail with one opaque error ("decryption \
        failed"). PKCS#1 v1.5 encryption is a legacy scheme exposed to padding oracles wherever a \
        peer learns whether decryption succeeded; prefer --padding oaep, and for programs that answer \
        peers use decrypt --implicit-rejection. Raw blocks (--raw) have no integrity across blocks; \
        the default container binds blocks to their message and position. Private files are written \
        0600 in 0700 folders, and passphrases are read from the terminal, a file, a descriptor or the \
        environment, never from the command line (pass:TEXT is for tests).
        """

    static let examples: [(String, String)] = [
        ("Generate a key pair stored under an application tag:", "rsakit genpair \\-\\-tag com.example.pub"),
        (
            "Encrypt a file for it and decrypt it back:",
            "rsakit encrypt \\-\\-tag com.example.pub < report.pdf > report.rsa\nrsakit decrypt \\-\\-tag "
                + "com.example.pub \\-\\-in report.rsa \\-\\-out report.pdf"
        ),
        (
            "Raw PKCS#1 v1.5 blocks, as openssl pkeyutl and iOS apps read them:",
            "rsakit encrypt \\-\\-raw \\-\\-tag com.example.pub < secret.txt > secret.bin"
        ),
        ("Enable completion in bash:", "source <(rsakit completion bash)")
    ]

    // MARK: - roff

    private static func header(name: String) -> String {
        ".TH \(name.uppercased().replacing("-", with: "\\-")) 1 \"\" \"\(footer)\" \"rsakit manual\"\n"
    }

    /// Text for a roff body: backslashes as \e, hyphens as \- in option-like words, and a
    /// line that would start with "." or "'" guarded by \&.
    static func escaped(_ text: String) -> String {
        var out = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var escapedLine = String(line).replacing("\\", with: "\\e")
                .replacing("-", with: "\\-")
            if escapedLine.hasPrefix(".") || escapedLine.hasPrefix("'") { escapedLine = "\\&" + escapedLine }
            out += (out.isEmpty ? "" : "\n") + escapedLine
        }
        return out
    }

    /// Help text (wrapped for 100 columns) as roff paragraphs: blank lines separate them, the
    /// lines of one paragraph are joined so that man reflows them; indented lines (examples)
    /// are kept as they are.
    static func paragraphs(_ text: String) -> String {
        var roff = ""
        var current: [String] = []
        var literal: [String] = []
        func flush() {
            if !current.isEmpty { roff += escaped(current.joined(separator: " ")) + "\n"; current = [] }
            if !literal.isEmpty {
                roff += ".PP\n.RS\n.nf\n" + escaped(literal.joined(separator: "\n")) + "\n.fi\n.RE\n"; literal = []
            }
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if trimmed(line).isEmpty {
                flush()
                roff += ".PP\n"
            } else if line.hasPrefix("  ") {
                if !current.isEmpty { flush() }
                literal.append(trimmed(line))
            } else {
                if !literal.isEmpty { flush() }
                current.append(trimmed(line))
            }
        }
        flush()
        while roff.hasSuffix(".PP\n") { roff.removeLast(4) }
        return roff
    }

    private static func trimmed(_ line: String) -> String {
        String(line.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }

    private static func sentenceWithoutPeriod(_ text: String) -> String {
        let first = text.split(separator: ";", maxSplits: 1).first.map(String.init) ?? text
        return first.hasSuffix(".") ? String(first.dropLast()) : first
    }
}
