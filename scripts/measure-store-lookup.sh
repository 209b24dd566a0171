#!/usr/bin/env bash
# Measure one application-tag lookup in a key store of COUNT items (default 100,000).
#
#   scripts/measure-store-lookup.sh [COUNT] [BITS] [public|pairs]
#
# Builds the StoreStressHelper in release mode, generates one BITS-bit key (default 2048),
# fills a fresh store in a temporary folder with COUNT items, the same key reused:
#   public (default): COUNT public items (tags fill-0 ...), 1,000 per atomic batch;
#   pairs:            COUNT/2 key pairs, one atomic write per pair (slower to fill; shows the
#                     cost of opening a store with many private items, each of which is
#                     checked for its permissions);
# then times, in a new process: opening the store, the first lookup of a tag in the middle
# and the median of 1,000 more lookups. File-system caches are warm (the fill just wrote the
# files). Nothing is asserted: the figures are printed.
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-100000}"
bits="${2:-2048}"
mode="${3:-public}"
swift build -c release --product StoreStressHelper >&2
helper="$(swift build -c release --show-bin-path)/StoreStressHelper"
work="$(mktemp -d "${TMPDIR:-/tmp}/rsakit-store-measure.XXXXXX")"
trap 'rm -rf "$work"' EXIT
"$helper" generate-key --bits "$bits" --out "$work/key.pem"
echo "filling $work/store with $count items ($mode, $bits-bit key)" >&2
case "$mode" in
    public) "$helper" fill-public --store "$work/store" --key "$work/key.pem" --prefix fill- --count "$count" ;;
    pairs)  "$helper" fill-pairs --store "$work/store" --key "$work/key.pem" --prefix fill- --count "$count" ;;
    *) echo "measure-store-lookup.sh: mode must be public or pairs" >&2; exit 64 ;;
esac
echo "store size: $(du -sh "$work/store" | cut -f1), files: $(find "$work/store" -type f | wc -l)"
"$helper" time-lookup --store "$work/store" --tag "fill-$((count / 4 + 1))" --repeat 1000
