// CLI argument parser harness, over the CLI's own code (the `_RSAKitCLI` product): the real
// command list and specs, ParsedArguments, and each command's validating initialiser (never run).
// The input is argv: arguments separated by NUL bytes; the first names the command (or, when
// it names none, its first byte picks one).
// Properties:
// 1. Parsing fails only with a UsageError (exit 64 through CLIFailure.from).
// 2. What parses is consistent with the spec: values only for value options, flags only for
//    flags, no more positionals than the command takes (unless --help).
// 3. Rendering the parse canonically (--flag, --name=value, --, positionals) parses to the same result.
// 4. A command's initialiser accepts or refuses with a UsageError / CLIFailure, never otherwise.
import RSAKit
@_spi(Fuzzing) import _RSAKitCLI
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCLIArguments(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = fuzzInput(start, count)
    var argv = input.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    let commands = RSAKitCommandLine.commands
    let command: RSAKitCommand.Type
    if let named = commands.first(where: { $0.spec.name == argv.first }) {
        command = named
        argv.removeFirst()
    } else {
        command = commands[Int(input.first ?? 0) % commands.count]
    }
    let spec = command.spec
    let parsed: ParsedArguments
    do {
        parsed = try ParsedArguments(argv, spec: spec)
    } catch let usage as UsageError {
        require(CLIFailure.from(usage).status == .usage, "a usage error does not exit 64")
        return 0
    } catch {
        unreachable("the parser threw \(error)")
    }
    let options = Dictionary(spec.options.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    for option in spec.options {
        if let value = parsed.value(option.name) {
            require(option.valueName != nil, "--\(option.name) is a flag but got value \(value)")
        }
        if parsed.flag(option.name) {
            require(
                option.valueName == nil || option.name == "help",
                "--\(option.name) takes a value but was parsed as a flag")
        }
    }
    // Every value and flag names a declared option (checked through the canonical rendering).
    var canonical: [String] = []
    for option in spec.options {
        if parsed.flag(option.name) { canonical.append("--\(option.name)") }
        if let value = parsed.value(option.name) { canonical.append("--\(option.name)=\(value)") }
    }
    canonical.append("--")
    canonical += parsed.positionals
    if !parsed.flag("help") {
        require(parsed.positionals.count <= spec.positionals.count, "more positionals than \(spec.name) takes")
    }
    let again: ParsedArguments
    do { again = try ParsedArguments(canonical, spec: spec) } catch {
        unreachable("the canonical rendering \(canonical) does not parse: \(error)")
    }
    for name in options.keys {
        require(
            again.value(name) == parsed.value(name) && again.flag(name) == parsed.flag(name),
            "--\(name) changed in the canonical rendering")
    }
    require(again.positionals == parsed.positionals, "positionals changed in the canonical rendering")
    if parsed.flag("help") {
        require(!spec.helpText.isEmpty, "empty help")
        return 0
    }
    do {
        _ = try command.init(parsed)
    } catch let usage as UsageError {
        require(CLIFailure.from(usage).status == .usage, "a usage error does not exit 64")
    } catch is CLIFailure {
    } catch {
        unreachable("\(spec.name) validation threw \(error)")
    }
    return 0
}
