#!/usr/bin/env bash
# The long runs that CI's time budget leaves out (docs/testing.md), for a machine with time:
#
#   scripts/long-run.sh [vector] [sanitizers] [fuzz]      default: all three, in that order
#
# - vector: VectorKernelTests with every random input (RSAKIT_FULL_SAMPLES=1); CI checks
#   every crafted and edge input but fewer random ones. With it, CLIPSSKeyTests sends every
#   Wycheproof PSS-parameters and SHAKE test through `rsakit verify`; CI sends one test of each
#   verdict per key.
# - sanitizers: scripts/sanitizers.sh --full, the whole matrix (ASan with UBSan on the C code,
#   UBSan alone, TSan, each over every test it ever ran), one row per sanitizer appended to
#   Tests/sanitizer-log.tsv.
# - fuzz: every harness for RSAKIT_FUZZ_SECONDS (default 30) with FUZZ_LOG=1, one row per
#   harness appended to Fuzz/fuzz-log.tsv; CI's smoke run mutates again only the harnesses
#   whose sources changed since their last row.
# Commit the two logs afterwards: they are the record of what ran, and CI reads the fuzz log.
set -euo pipefail
cd "$(dirname "$0")/.."
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(vector sanitizers fuzz)
status=0
for part in "${parts[@]}"; do
    start=$(date +%s)
    rc=0
    case "$part" in
        vector)
            swift build --build-tests || rc=$?
            [ "$rc" -ne 0 ] || RSAKIT_FULL_SAMPLES=1 RSAKIT_LONG_TESTS=1 swift test --skip-build --disable-swift-testing \
                --filter 'RSAKitTests\.VectorKernelTests|RSAKitCLITests\.CLIPSSKeyTests' || rc=$?
            ;;
        sanitizers) scripts/sanitizers.sh --full || rc=$? ;;
        fuzz) FUZZ_LOG=1 scripts/fuzz.sh all "${RSAKIT_FUZZ_SECONDS:-30}" || rc=$? ;;
        *) echo "long-run.sh: unknown part '$part' (vector, sanitizers or fuzz)" >&2; exit 64 ;;
    esac
    echo "long run: $part $([ "$rc" -eq 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - start )) s"
    [ "$rc" -eq 0 ] || status=1
done
exit "$status"
