#!/usr/bin/env bash
# The valgrind constant-time check in release mode (the optimiser can turn masks into
# branches, so the debug-build check in ConstantTimeHarnessTests is not enough on its own).
# Builds Tests/ConstantTimeHarness with -c release, runs it under memcheck on a 2-prime and a
# 3-prime key in mode `ct` (must give 0 errors; it covers RSAES-PKCS1-v1_5 and RSAES-OAEP with
# SHA-1 and SHA-256, with and without a label, valid and broken, the padding decodes and the
# container frame check) and in modes `plant` (a branch in the RSADP kernel) and `plant-oaep`
# (a branch inside the EME-OAEP decode), which must each give some, and prints the error
# counts. Skips (exit 0, with a message) when valgrind or openssl is absent.
# About 1 minute with the release build up to date, about 5 from a cold release build.
# Usage: scripts/constant-time.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null 2>&1 || { echo "constant-time: valgrind not found, SKIPPED" >&2; exit 0; }
command -v openssl >/dev/null 2>&1 || { echo "constant-time: openssl not found, SKIPPED" >&2; exit 0; }
# --static-swift-stdlib like every release build of the test run: one release build then
# serves this check, the benchmarks, the timing harness and the Debian package (the flag is
# part of every module's compile command, so flipping it rebuilds RSAKit: 80 s on a 2-core Xeon).
swift build -c release --static-swift-stdlib --product ConstantTimeHarness
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# valgrind 3.19 cannot read the DWARF 5 debug info Swift's clang writes: run a stripped copy.
strip --strip-debug -o "$work/harness" .build/release/ConstantTimeHarness
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$work/two.pem" 2>/dev/null
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -pkeyopt rsa_keygen_primes:3 -out "$work/three.pem" 2>/dev/null
status=0
errors() { sed -nE 's/.*ERROR SUMMARY: ([0-9]+) errors.*/\1/p' "$1"; }
for key in two three; do
    valgrind --tool=memcheck --error-limit=no "$work/harness" ct "$work/$key.pem" 6 >"$work/ct.log" 2>&1 || status=1
    n=$(errors "$work/ct.log")
    echo "constant-time: release ct $key-prime: $n memcheck errors (want 0) | $(grep '^harness' "$work/ct.log")"
    if [ "$n" != "0" ] || ! grep -q 'failed=0' "$work/ct.log"; then status=1; grep -A12 -E "Conditional jump|uninitialised value" "$work/ct.log" | head -60; fi
done
for plant in plant:branching_kernel plant-oaep:rsakit_plant_oaep_probe; do
    mode=${plant%%:*}
    valgrind --tool=memcheck --error-limit=no "$work/harness" "$mode" "$work/two.pem" 2 >"$work/plant.log" 2>&1 || status=1
    n=$(errors "$work/plant.log")
    echo "constant-time: release $mode: $n memcheck errors (want > 0, naming ${plant#*:})"
    [ "${n:-0}" -gt 0 ] && grep -q "${plant#*:}" "$work/plant.log" || status=1
done
exit "$status"
