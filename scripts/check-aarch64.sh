#!/usr/bin/env bash
# The package's C targets must build on aarch64: no x86 flag, intrinsic or instruction
# outside an __x86_64__ guard. Compiles every C and assembly file of CRSAKitShims,
# CRSAKitVector, CRSAKitVectorIFMA, CRSAKitMontADX and CRSAKitMontADXSeam with
# `clang --target=aarch64-linux-gnu` against Debian's arm64 headers (libc6-dev-arm64-cross
# for libc, libgmp-dev:arm64 for gmp.h), -Werror, then checks that the objects are AArch64
# and that the ADX kernel's names are all there (its stubs). No link: the point is the
# compile. About 10 s.
#
# When the headers are missing it installs them as root (dpkg --add-architecture arm64;
# apt-get update; apt-get install libgmp-dev:arm64 libc6-dev-arm64-cross; scripts/install-deps.sh
# does the same), and FAILS (exit 1) when it cannot: CI must not pass without the check.
# Usage: scripts/check-aarch64.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CLANG="${CLANG:-/opt/swift/usr/bin/clang}"
command -v "$CLANG" >/dev/null 2>&1 || CLANG=clang
LIBC_INC=/usr/aarch64-linux-gnu/include
GMP_INC=/usr/include/aarch64-linux-gnu
if [ ! -f "$LIBC_INC/stdio.h" ] || [ ! -f "$GMP_INC/gmp.h" ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    if [ -n "$SUDO" ] && ! command -v sudo >/dev/null 2>&1; then
        echo "check-aarch64: FAILED: the arm64 headers are missing (libc6-dev-arm64-cross, libgmp-dev:arm64) and this user cannot install them" >&2
        exit 1
    fi
    echo "check-aarch64: installing libgmp-dev:arm64 and libc6-dev-arm64-cross" >&2
    export DEBIAN_FRONTEND=noninteractive
    $SUDO dpkg --add-architecture arm64
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq libgmp-dev:arm64 libc6-dev-arm64-cross
fi
if [ ! -f "$LIBC_INC/stdio.h" ] || [ ! -f "$GMP_INC/gmp.h" ]; then
    echo "check-aarch64: FAILED: the arm64 headers are still missing after the install" >&2
    exit 1
fi
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
# -nostdinc keeps the host's x86-64 headers out: only the arm64 libc, gmp.h and clang's own
# (architecture-neutral) headers are seen.
RESOURCE_INC="$("$CLANG" -print-resource-dir)/include"
FLAGS=(--target=aarch64-linux-gnu -nostdinc -isystem "$RESOURCE_INC" -isystem "$GMP_INC" -isystem "$LIBC_INC"
       -O2 -fPIC -Wall -Werror -Wno-unused-function)
count=0
for target in CRSAKitShims CRSAKitVector CRSAKitVectorIFMA CRSAKitMontADX CRSAKitMontADXSeam; do
    dir="$ROOT/Sources/$target"
    includes=(-I"$dir/include" -I"$dir" -I"$ROOT/Sources/CRSAKitMontADX/include" -I"$ROOT/Sources/CRSAKitShims/include" -I"$ROOT/Sources/CRSAKitVector/include" -I"$ROOT/Sources/CRSAKitVector")
    while IFS= read -r -d '' src; do
        obj="$OUT/$target-$(basename "$src").o"
        "$CLANG" "${FLAGS[@]}" "${includes[@]}" -c "$src" -o "$obj"
        file "$obj" | grep -q "ARM aarch64" || { echo "check-aarch64: FAILED: $obj is not an AArch64 object" >&2; exit 1; }
        count=$((count + 1))
    done < <(find "$dir" -maxdepth 1 \( -name '*.c' -o -name '*.S' \) -print0 | sort -z)
done
# The ADX target must compile to its stubs there, with every public name defined.
adx_syms=$(nm --defined-only "$OUT"/CRSAKitMontADX-rsakit_mont_adx.c.o | awk '{print $3}')
for name in rsakit_adx_cpu_supported rsakit_adx_modulus_create rsakit_adx_modulus_destroy rsakit_adx_modulus_limbs \
            rsakit_adx_powm rsakit_adx_powm2 rsakit_adx_powm_public_exponent rsakit_adx_mulmod \
            rsakit_adx_known_answer_test rsakit_adx_usable rsakit_adx_assume_cpu_for_tests; do
    grep -qx "$name" <<<"$adx_syms" || { echo "check-aarch64: FAILED: $name is missing from the aarch64 build" >&2; exit 1; }
done
if nm "$OUT"/CRSAKitMontADX-rsakit_mont_adx_x86_64.S.o 2>/dev/null | grep -q .; then
    echo "check-aarch64: FAILED: the x86-64 assembly is not empty on aarch64" >&2
    exit 1
fi
echo "check-aarch64: $count C and assembly files of CRSAKitShims, CRSAKitVector, CRSAKitVectorIFMA, CRSAKitMontADX, CRSAKitMontADXSeam compile for aarch64-linux-gnu (-Werror); the ADX kernel builds to its stubs"
