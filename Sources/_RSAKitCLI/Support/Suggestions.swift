/// "Did you mean": the known names nearest to a mistyped one (commands, options, tags).

/// Edit distance with adjacent transpositions (optimal string alignment), so that
/// `encrpyt` is one edit from `encrypt`.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.lowercased().unicodeScalars), b = Array(b.lowercased().unicodeScalars)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous2 = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                current[j] = min(current[j], previous2[j - 2] + 1)
            }
        }
        (previous2, previous, current) = (previous, current, previous2)
    }
    return previous[b.count]
}

/// The candidates nearest to `name` (all those at the smallest distance), when that
/// distance is small enough to be a slip: at most 2, and less than half the name's length.
/// A candidate that starts with `name` (an abbreviation) also counts. Sorted, at most 3.
func nearestNames(to name: String, in candidates: [String]) -> [String] {
    guard !name.isEmpty else { return [] }
    let limit = min(2, max(1, (name.count - 1) / 2))
    var best: [String] = []
    var bestDistance = Int.max
    for candidate in Set(candidates) {
        var distance = editDistance(name, candidate)
        if candidate.count > name.count, name.count >= 3, candidate.lowercased().hasPrefix(name.lowercased()) {
            distance = min(distance, 1)
        }
        guard distance <= limit else { continue }
        if distance < bestDistance {
            bestDistance = distance
            best = [candidate]
        } else if distance == bestDistance {
            best.append(candidate)
        }
    }
    return Array(best.sorted().prefix(3))
}

/// "; did you mean 'x'?" or "; did you mean 'x' or 'y'?", or "" when nothing is near.
/// `quote` wraps each name (tags are printed escaped by the caller's function).
func didYouMean(_ name: String, _ candidates: [String], prefix: String = "", show: (String) -> String = { $0 })
    -> String
{
    let names = nearestNames(to: name, in: candidates).map { "'\(prefix)\(show($0))'" }
    guard !names.isEmpty else { return "" }
    let list = names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " or " + names.last!
    return "; did you mean \(list)?"
}
