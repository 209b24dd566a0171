import RSAKit

/// Finding the stored items a command names: by application tag, by label, or by item id
/// (the persistent reference), with the messages every command gives alike.

/// The application tag of `--tag TAG | --id ID` (show, delete), or "" when `--id` names the item.
/// - Throws: `UsageError(conflict)` when `--id` comes with `--tag` or one of `excludedFlags`;
///   the usual missing-option error when neither `--tag` nor `--id` is given.
func tagUnlessItemID(_ arguments: ParsedArguments, command: String, excludedFlags: [String] = [], conflict: String)
    throws -> String
{
    guard arguments.value("id") != nil else { return try arguments.required("tag", command) }
    guard arguments.value("tag") == nil, !excludedFlags.contains(where: { arguments.flag($0) }) else {
        throw UsageError(message: conflict, command: command)
    }
    return ""
}

/// The items a list lookup found (the library returns `[]` for none), never empty: for a
/// command that must find at least one.
/// - Throws: `CLIFailure` (66) "no <description> found" when `items` is empty, e.g.
///   `internet password matching the options`.
func requireFound<Item>(_ items: [Item], _ description: @autoclosure () -> String) throws -> [Item] {
    guard !items.isEmpty else { throw CLIFailure("no \(description()) found", .notFound) }
    return items
}

/// `items` (found by `label`), or, when there are none, `CLIFailure` (66) "no <what> with
/// label "x" found", with the nearest of the `known` labels when one is a likely slip.
func requireLabelFound<Item>(_ items: [Item], what: String, label: String, known: () -> [String]) throws -> [Item] {
    guard items.isEmpty else { return items }
    let suggestion = didYouMean(label, Array(Set(known())).sorted(), show: terminalSafe)
    throw CLIFailure("no \(what) with label \"\(terminalSafe(label))\" found" + suggestion, .notFound)
}

/// The one item with `label` among `items` (what `store.identities(label:)` and the like return).
/// - Throws: `CLIFailure` (66) when there is none, naming the nearest of the `known` labels;
///   `CLIFailure` (usage) when several share the label.
func uniqueItem<Item>(_ items: [Item], what: String, plural: String, label: String, known: () -> [String]) throws
    -> Item
{
    let found = try requireLabelFound(items, what: what, label: label, known: known)
    guard found.count == 1 else {
        throw CLIFailure("\(found.count) \(plural) have the label \"\(label)\"; give a unique label", .usage)
    }
    return found[0]
}
