#!/usr/bin/env bash
# How close the radix-2^64 ADX kernel (Sources/CRSAKitMontADX) runs to this core's mulx peak,
# and the private-operation rate it gives beside OpenSSL's and ippcp's paths for CPUs without
# AVX-512 (the intel-anchor tool), on one core.
#
#   scripts/measure-adx-efficiency.sh               # build and run (about 60 s)
#   scripts/measure-adx-efficiency.sh --build-only  # build only (scripts/test.sh, so that it
#                                                   # keeps compiling against the kernel)
#
# Compiles scripts/adx-efficiency.c with the tree's kernel at -O2 (the kernel's loops are
# assembly, so the level only matters for the C driver) and runs on core 0: the mulx peak,
# cycles per product, squaring and exponentiation at 16, 24 and 32 limbs against the floor,
# then three alternating rounds per key size (2048, 3072, 4096) of: this kernel's CRT rate
# (`adx-efficiency crt BITS`: two exponentiations, "bare", and with blinding and the
# re-encryption check, "protected"), `intel-anchor KEY ipp-noavx512` and
# `OPENSSL_ia32cap=':~0xdc230000' intel-anchor KEY ossl` (OpenSSL without its AVX-512 paths),
# best of each, and the ratios. Process CPU time everywhere. The anchors come from
# ../shared/tools/intel-anchor/setup.sh (or $INTEL_ANCHOR_SETUP); without them only the
# kernel's own figures are printed. Exits 77 (and says so) on a CPU without BMI2/ADX.
# A diagnostic, not part of the test suite.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CLANG="${CLANG:-/opt/swift/usr/bin/clang}"
command -v "$CLANG" >/dev/null 2>&1 || CLANG=clang
SRC="$ROOT/Sources/CRSAKitMontADX"
OUT="${TMPDIR:-/tmp}/rsakit-adx-efficiency-$$"
mkdir -p "$OUT"
trap 'rm -rf "$OUT"' EXIT
"$CLANG" -O2 -I"$SRC/include" -I"$SRC" "$ROOT/scripts/adx-efficiency.c" "$SRC/rsakit_mont_adx.c" \
    "$SRC/rsakit_mont_adx_x86_64.S" -o "$OUT/efficiency"
if [[ "${1:-}" == "--build-only" ]]; then
    echo "measure-adx-efficiency: built against the tree's kernel (not run: --build-only)"
    exit 0
fi
pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)
grep -m1 'model name' /proc/cpuinfo || true
status=0
"${pin[@]}" "$OUT/efficiency" || status=$?
[ "$status" -eq 0 ] || exit "$status"

setup="${INTEL_ANCHOR_SETUP:-$ROOT/../shared/tools/intel-anchor/setup.sh}"
anchor=""
if [ -f "$setup" ]; then
    anchor="$(bash "$setup" 2>/dev/null || true)"
fi
if [ -z "$anchor" ] || [ ! -x "$anchor" ]; then
    echo "measure-adx-efficiency: intel-anchor not available ($setup): no comparison with OpenSSL and ippcp"
    exit 0
fi
keys="$ROOT/Benchmarks/RSAKitBenchmarks/Keys"
field() { sed -nE "s/.* $1=([0-9.]+).*/\1/p"; }
max() { awk -v a="$1" -v b="$2" 'BEGIN { print (b > a ? b : a) }'; }
echo
echo "one core, process CPU time, best of 3 alternating rounds; ops per CPU second"
printf '%-6s %12s %12s %12s %12s %16s %16s\n' bits adx-bare adx-protected ipp-noavx512 ossl-masked "protected/ipp" "protected/ossl"
for bits in 2048 3072 4096; do
    case $bits in 2048) n=1000 ;; 3072) n=300 ;; *) n=150 ;; esac
    bare=0 prot=0 ipp=0 ossl=0
    for _ in 1 2 3; do
        line=$("${pin[@]}" "$OUT/efficiency" crt "$bits")
        bare=$(max "$bare" "$(field bare_ops_per_cpu_s <<<"$line")")
        prot=$(max "$prot" "$(field protected_ops_per_cpu_s <<<"$line")")
        line=$("${pin[@]}" "$anchor" "$keys/rsa$bits.pem" ipp-noavx512 "$n" | grep '^anchor')
        ipp=$(max "$ipp" "$(field ops_per_cpu_s <<<"$line")")
        line=$(OPENSSL_ia32cap=':~0xdc230000' "${pin[@]}" "$anchor" "$keys/rsa$bits.pem" ossl "$n" | grep '^anchor')
        ossl=$(max "$ossl" "$(field ops_per_cpu_s <<<"$line")")
    done
    awk -v b="$bits" -v x="$bare" -v p="$prot" -v i="$ipp" -v o="$ossl" \
        'BEGIN { printf "%-6s %12.0f %12.0f %12.0f %12.0f %10.2fx (bare %.2fx) %10.2fx\n", b, x, p, i, o, p / i, x / i, p / o }'
done
