#!/usr/bin/env bash
# Measure one application-tag lookup in a key store of COUNT items (default 100,000).
#
#   scripts/measure-store-lookup.sh [COUNT] [BITS]
#
# Builds the StoreStressHelper in release mode, generates one BITS-bit key (default 2048),
# fills a fresh store in a temporary folder with COUNT public items (tags fill-0 ... , the
# same key reused, 1,000 items per atomic batch), then times, in a new process: opening the
# store, the first lookup of a tag in the middle, and the median of 1,000 more lookups.
# File-system caches are warm (the fill just wrote the files). Nothing is asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-100000}"
bits="${2:-2048}"
swift build -c release --product StoreStressHelper >&2
helper="$(swift build -c release --show-bin-path)/StoreStressHelper"
work="$(mktemp -d "${TMPDIR:-/tmp}/rsakit-store-measure.XXXXXX")"
trap 'rm -rf "$work"' EXIT
"$helper" generate-key --bits "$bits" --out "$work/key.pem"
echo "filling $work/store with $count public items ($bits-bit key)" >&2
"$helper" fill-public --store "$work/store" --key "$work/key.pem" --prefix fill- --count "$count"
echo "store size: $(du -sh "$work/store" | cut -f1), files: $(find "$work/store" -type f | wc -l)"
"$helper" time-lookup --store "$work/store" --tag "fill-$((count / 2 + 1))" --repeat 1000
