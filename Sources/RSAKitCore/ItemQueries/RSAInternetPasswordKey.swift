#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What makes an internet password unique (Apple's `kSecClassInternetPassword` primary key):
/// server, protocol, port, path, account, authentication type and security domain, each
/// compared byte for byte (the server case-folded to ASCII lower case, as DNS names are).
public struct RSAInternetPasswordKey: Sendable, Hashable, CustomStringConvertible {
    /// The longest server, path, account, authentication type or security domain, in bytes
    /// of UTF-8 (the key store's limit for a service or account as well).
    public static let maximumAttributeByteCount = 255

    /// The host name or address (`kSecAttrServer`): 1 to 255 bytes, stored in ASCII lower case.
    public let server: String
    /// The protocol (`kSecAttrProtocol`) as a URL scheme in lower case ("https", "imap", "ssh"),
    /// or "" for none: 0 to 32 bytes of letters, digits, "+", "-", ".".
    public let `protocol`: String
    /// The port (`kSecAttrPort`), 0 for none (the protocol's default), else 1 to 65535.
    public let port: Int
    /// The path (`kSecAttrPath`), "" for none; at most 255 bytes.
    public let path: String
    /// The account (`kSecAttrAccount`), "" for none; at most 255 bytes.
    public let account: String
    /// The authentication type (`kSecAttrAuthenticationType`: "default", "httpBasic",
    /// "httpDigest", "htmlForm", "ntlm"...), "" for none; at most 255 bytes.
    public let authenticationType: String
    /// The security domain (`kSecAttrSecurityDomain`, an HTTP realm for example), "" for none.
    public let securityDomain: String

    /// A key from its attributes.
    /// - Throws: `RSAError.invalidAttribute` naming the attribute that is empty (server),
    ///   too long, or malformed (protocol, port).
    public init(
        server: String, protocol scheme: String = "", port: Int = 0, path: String = "", account: String = "",
        authenticationType: String = "", securityDomain: String = ""
    ) throws {
        self.server = server.lowercased()
        self.protocol = scheme.lowercased()
        self.port = port
        self.path = path
        self.account = account
        self.authenticationType = authenticationType
        self.securityDomain = securityDomain
        try validate()
    }

    /// A key from a URL, `scheme://[account@]host[:port][/path]` (RFC 3986 §3): the
    /// protocol from the scheme, the account from the user part (percent-decoded; a password
    /// in the URL is refused, it belongs in the item's value), the path without its leading "/".
    /// - Throws: `RSAError.invalidAttribute` for a URL without scheme or host, with a
    ///   password, or an invalid port.
    public init(url text: String, authenticationType: String = "", securityDomain: String = "") throws {
        guard let components = URLComponents(string: text), let scheme = components.scheme,
            let host = components.host, !host.isEmpty
        else {
            throw RSAError.invalidAttribute(reason: "the URL \"\(text)\" has no scheme://host")
        }
        guard components.password == nil else {
            throw RSAError.invalidAttribute(
                reason: "the URL holds a password; give the value on standard input, never in a URL")
        }
        var path = components.path
        if path.hasPrefix("/") { path.removeFirst() }
        try self.init(
            server: host, protocol: scheme, port: components.port ?? 0, path: path,
            account: components.user ?? "", authenticationType: authenticationType,
            securityDomain: securityDomain)
    }

    /// "https://alice@example.com:8443/repo" (with ";auth=..." and ";domain=..." when set).
    public var description: String {
        var text =
            (self.protocol.isEmpty ? "" : self.protocol + "://") + (account.isEmpty ? "" : account + "@") + server
        if port != 0 { text += ":\(port)" }
        if !path.isEmpty { text += "/" + path }
        if !authenticationType.isEmpty { text += ";auth=" + authenticationType }
        if !securityDomain.isEmpty { text += ";domain=" + securityDomain }
        return text
    }

    private func validate() throws {
        guard !server.utf8.isEmpty else { throw RSAError.invalidAttribute(reason: "the server is empty") }
        for (name, value) in [
            ("server", server), ("path", path), ("account", account),
            ("authentication type", authenticationType), ("security domain", securityDomain)
        ]
        where value.utf8.count > RSAInternetPasswordKey.maximumAttributeByteCount {
            throw RSAError.invalidAttribute(
                reason:
                    "the \(name) is \(value.utf8.count) bytes of UTF-8; at most "
                    + "\(RSAInternetPasswordKey.maximumAttributeByteCount) are allowed"
            )
        }
        let schemeCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789+-.".utf8)
        guard self.protocol.utf8.count <= 32, self.protocol.utf8.allSatisfy(schemeCharacters.contains) else {
            throw RSAError.invalidAttribute(
                reason: "the protocol \"\(self.protocol)\" is not a URL scheme (letters, digits, +, -, .; at most 32)")
        }
        guard (0...65535).contains(port) else {
            throw RSAError.invalidAttribute(reason: "the port \(port) is not 0 (none) or 1 to 65535")
        }
    }

    /// The fields in a fixed order, for hashing and associated data.
    package var fields: [String] {
        [server, self.protocol, String(port), path, authenticationType, securityDomain, account]
    }
}
