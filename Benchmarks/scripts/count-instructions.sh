#!/usr/bin/env bash
# Count the instructions of exactly one operation per case and size with callgrind
# (stable on noisy machines, unlike wall-clock time). Usage:
#
#   Benchmarks/scripts/count-instructions.sh [CASES] [SIZES]
#   Benchmarks/scripts/count-instructions.sh "decrypt anchor-crt" "2048 4096"
#
# Defaults: the private and public cases at 1024 2048 3072 4096 bits. Builds the release
# benchmark first. Valgrind 3.19 cannot read the DWARF 5 that Swift emits, so the script
# counts on a copy of the binary without debug sections (the symbol table stays).
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v valgrind >/dev/null || { echo "count-instructions: valgrind is not installed" >&2; exit 1; }
cases="${1:-anchor-crt private-raw decrypt anchor-public public-raw encrypt}"
sizes="${2:-1024 2048 3072 4096}"
swift build -c release --product RSAKitBenchmarks >&2
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
objcopy --strip-debug "$(swift build -c release --show-bin-path)/RSAKitBenchmarks" "$work/bench"
printf '%-16s %6s %14s\n' case bits instructions
for c in $cases; do
    for b in $sizes; do
        valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/cg.$c.$b" \
            "$work/bench" --one "$c:$b" >/dev/null 2>"$work/log"
        # The one operation is dumped to cg.CASE.BITS.1 by the client request.
        total=$(awk '/^totals:/ {s += $2} END {print s + 0}' "$work/cg.$c.$b".*)
        printf '%-16s %6s %14s\n' "$c" "$b" "$total"
    done
done
