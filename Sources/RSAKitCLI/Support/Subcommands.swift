/// The first positional argument of a command group (`cert`, `identity`, `password`,
/// `store`...), checked against the group's subcommands.
/// - Throws: `UsageError` "missing subcommand: a, b or c" when there is none, "unknown
///   subcommand 'x'" when it is not one of `names`.
func parseSubcommand(_ arguments: ParsedArguments, of names: [String], command: String) throws -> String {
    guard let sub = arguments.positionals.first else {
        let list = names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " or " + names.last!
        throw UsageError(message: "missing subcommand: \(list)", command: command)
    }
    guard names.contains(sub) else {
        throw UsageError(message: "unknown subcommand '\(sub)'", command: command)
    }
    return sub
}
