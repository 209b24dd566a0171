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
# from its parts (`adx-efficiency crt BITS`: two exponentiations, "bare"), rsakit's C private
# path on the kernel and on GMP (`adx-private-op KEY adx|gmp`: rsakit_sec_private, blinded and
# checked), `intel-anchor KEY ipp-noavx512` and `OPENSSL_ia32cap=':~0xdc230000' intel-anchor
# KEY ossl` (OpenSSL without its AVX-512 paths), best of each, and the ratios. Process CPU time everywhere. The anchors come from
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
# The library's C private path (CRSAKitShims' rsakit_sec_private) with the kernel in its seam;
# it reads the PEM keys with libcrypto (libssl-dev), which the package itself does not need.
SHIMS="$ROOT/Sources/CRSAKitShims"
have_private_op=0
if [ -f /usr/include/openssl/evp.h ]; then
have_private_op=1
# shellcheck disable=SC2046
"$CLANG" -O2 -w -I"$SRC/include" -I"$ROOT/Sources/CRSAKitMontADXSeam/include" -I"$SHIMS/include" -I"$SHIMS" \
    "$ROOT/scripts/adx-private-op.c" "$SRC/rsakit_mont_adx.c" "$SRC/rsakit_mont_adx_x86_64.S" \
    "$ROOT/Sources/CRSAKitMontADXSeam/rsakit_mont_adx_seam.c" "$SHIMS"/*.c \
    $(pkg-config --libs gmp 2>/dev/null || echo -lgmp) -lcrypto -o "$OUT/private-op"
else
    echo "measure-adx-efficiency: no OpenSSL headers (libssl-dev): adx-private-op.c not built, rsakit's private path not measured"
fi
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
if [ -z "$anchor" ] || [ ! -x "$anchor" ] || [ "$have_private_op" -eq 0 ]; then
    echo "measure-adx-efficiency: intel-anchor ($setup) or libssl-dev not available: no comparison with OpenSSL and ippcp"
    exit 0
fi
keys="$ROOT/Benchmarks/RSAKitBenchmarks/Keys"
field() { sed -nE "s/.* $1=([0-9.]+).*/\1/p"; }
max() { awk -v a="$1" -v b="$2" 'BEGIN { print (b > a ? b : a) }'; }
echo
echo "one core, process CPU time, best of 3 alternating rounds; private operations per CPU second"
echo "(adx-bare: two exponentiations, no blinding or check, as ippcp; rsakit-adx, rsakit-gmp: blinded and checked, as OpenSSL)"
printf '%-6s %9s %11s %11s %13s %12s %14s %15s %14s\n' bits adx-bare rsakit-adx rsakit-gmp ipp-noavx512 ossl-masked \
    "rsakit-adx/ipp" "rsakit-adx/ossl" "adx-bare/ipp"
for bits in 2048 3072 4096; do
    case $bits in 2048) n=1000 ;; 3072) n=300 ;; *) n=150 ;; esac
    bare=0 radx=0 rgmp=0 ipp=0 ossl=0
    for _ in 1 2 3; do
        line=$("${pin[@]}" "$OUT/efficiency" crt "$bits")
        bare=$(max "$bare" "$(field bare_ops_per_cpu_s <<<"$line")")
        line=$("${pin[@]}" "$OUT/private-op" "$keys/rsa$bits.pem" adx "$n")
        radx=$(max "$radx" "$(field ops_per_cpu_s <<<"$line")")
        line=$("${pin[@]}" "$anchor" "$keys/rsa$bits.pem" ipp-noavx512 "$n" | grep '^anchor')
        ipp=$(max "$ipp" "$(field ops_per_cpu_s <<<"$line")")
        line=$(OPENSSL_ia32cap=':~0xdc230000' "${pin[@]}" "$anchor" "$keys/rsa$bits.pem" ossl "$n" | grep '^anchor')
        ossl=$(max "$ossl" "$(field ops_per_cpu_s <<<"$line")")
        line=$("${pin[@]}" "$OUT/private-op" "$keys/rsa$bits.pem" gmp "$n")
        rgmp=$(max "$rgmp" "$(field ops_per_cpu_s <<<"$line")")
    done
    awk -v b="$bits" -v x="$bare" -v r="$radx" -v g="$rgmp" -v i="$ipp" -v o="$ossl" \
        'BEGIN { printf "%-6s %9.0f %11.0f %11.0f %13.0f %12.0f %13.2fx %14.2fx %13.2fx\n", b, x, r, g, i, o, r / i, r / o, x / i }'
done
