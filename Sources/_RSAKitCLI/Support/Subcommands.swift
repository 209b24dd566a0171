/// The first positional argument of a command group (`cert`, `identity`, `password`,
/// `store`...), checked against the group's subcommands, and the options given checked
/// against the subcommands each applies to (``OptionSpec/only(_:)``).
/// - Throws: `UsageError` "missing subcommand: a, b or c" when there is none, "unknown
///   subcommand 'x'" (with the nearest names) when it is not one of `spec.subcommands`, "option '--o'
///   does not apply to 'group sub'" when an option given is for other subcommands.
func parseSubcommand(_ arguments: ParsedArguments, spec: CommandSpec) throws -> String {
    let names = spec.subcommands
    guard let sub = arguments.positionals.first else {
        let list = names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " or " + names.last!
        throw UsageError(message: "missing subcommand: \(list)", command: spec.name)
    }
    guard names.contains(sub) || spec.hiddenSubcommands.contains(sub) else {
        throw UsageError(
            message: "unknown subcommand '\(terminalSafe(sub))'" + didYouMean(sub, names), command: spec.name)
    }
    let given = arguments.givenOptionNames
    for option in spec.options where given.contains(option.name) {
        guard let allowed = option.subcommands, !allowed.contains(sub) else { continue }
        let list =
            allowed.count == 1 ? allowed[0] : allowed.dropLast().joined(separator: ", ") + " and " + allowed.last!
        throw UsageError(
            message:
                "option '--\(option.name)' does not apply to '\(spec.name) \(sub)' (it is for \(spec.name) \(list))",
            command: spec.name)
    }
    return sub
}
