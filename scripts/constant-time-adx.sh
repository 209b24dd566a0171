#!/usr/bin/env bash
# The valgrind constant-time check of the radix-2^64 ADX kernel (Sources/CRSAKitMontADX) in
# release mode (the optimiser can turn the driver's masks into branches, so the debug-build
# run in MontADXKernelTests is not enough on its own). Builds Tests/MontADXCTHarness with
# -c release and runs it under memcheck with the modulus, exponents and bases marked
# undefined, then rsakit's whole private operation (rsakit_sec_private) on the kernel with the
# key's secrets marked undefined: mode ct must give 0 errors; the two controls, --plant-leak (a branch on a
# secret exponent bit) and --plant-derived (a branch on a kernel result before it is marked
# defined, which shows that definedness flows through mulx/adcx/adox), must each give some.
# Prints the error counts. The harness calls the kernel directly (valgrind 3.19's CPUID
# hides ADX); it skips (exit 0, with a message) on a CPU without BMI2/ADX, or when valgrind
# is absent. About 12 s with the release build up to date (10 s of it valgrind).
# Usage: scripts/constant-time-adx.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null 2>&1 || { echo "constant-time-adx: valgrind not found, SKIPPED" >&2; exit 0; }
if ! grep -qw adx /proc/cpuinfo 2>/dev/null || ! grep -qw bmi2 /proc/cpuinfo 2>/dev/null; then
    echo "constant-time-adx: this CPU has no BMI2/ADX: the ADX kernel cannot run here, SKIPPED" >&2
    exit 0
fi
# The same flags as scripts/constant-time.sh, so that both share one release build.
swift build -c release --static-swift-stdlib --product MontADXCTHarness
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# valgrind 3.19 cannot read the DWARF 5 debug info Swift's clang writes: run a stripped copy.
strip --strip-debug -o "$work/harness" .build/release/MontADXCTHarness
status=0
errors() { sed -nE 's/.*ERROR SUMMARY: ([0-9]+) errors.*/\1/p' "$1"; }
valgrind --tool=memcheck --error-limit=no "$work/harness" >"$work/ct.log" 2>&1 || status=1
n=$(errors "$work/ct.log")
echo "constant-time-adx: release ct: $n memcheck errors (want 0) | $(grep '^MontADXCTHarness' "$work/ct.log" | tr '\n' ' ')"
if [ "$n" != "0" ] || ! grep -q ', 0 mismatches' "$work/ct.log"; then
    status=1
    grep -A12 -E "Conditional jump|uninitialised value|mismatch" "$work/ct.log" | head -60
fi
for mode in plant-leak plant-derived; do
    valgrind --tool=memcheck --error-limit=no "$work/harness" "--$mode" >"$work/plant.log" 2>&1 || true
    n=$(errors "$work/plant.log")
    echo "constant-time-adx: release $mode: $n memcheck errors (want > 0)"
    [ "${n:-0}" -gt 0 ] || status=1
done
exit "$status"
