#!/usr/bin/env bash
# How close the eight-lane AVX-512 IFMA kernel runs to this core's vpmadd52 peak.
#
#   scripts/measure-ifma-efficiency.sh               # build and run (about 40 s)
#   scripts/measure-ifma-efficiency.sh --build-only  # build only (scripts/test.sh, so that it
#                                                    # keeps compiling against the kernel)
#
# Compiles scripts/ifma-efficiency.c against the tree's Sources/CRSAKitVector with the
# flags SwiftPM gives the CRSAKitVectorIFMA target (-O2 -fPIC, frame pointer dropped) and
# runs it on core 0: the peak zmm and ymm vpmadd52 rates, the clock, cycles per eight-lane
# squaring / squaring with a quarter table scan / product at N = 10, 20, 30, 40, and
# rsakit_vec_powm8, each as a share of the zmm peak. Process CPU time; about 40 s. Exits 77
# (and says so) on a CPU without AVX-512 IFMA. A diagnostic, not part of the test suite.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CLANG="${CLANG:-/opt/swift/usr/bin/clang}"
SRC="$ROOT/Sources/CRSAKitVector"
OUT="${TMPDIR:-/tmp}/rsakit-ifma-efficiency-$$"
mkdir -p "$OUT"
trap 'rm -rf "$OUT"' EXIT
GMP_CFLAGS="$(pkg-config --cflags gmp 2>/dev/null || true)"
GMP_LIBS="$(pkg-config --libs gmp 2>/dev/null || echo -lgmp)"
INCLUDES=(-I"$SRC/include" -I"$SRC" -I"$ROOT/Sources/CRSAKitShims/include")
# The kernel as the package builds it (Package.swift, CRSAKitVectorIFMA).
"$CLANG" -O2 -fPIC -fno-omit-frame-pointer -Xclang -mframe-pointer=none "${INCLUDES[@]}" \
    -c "$SRC/rsakit_vector_ifma.c" -o "$OUT/ifma.o"
# shellcheck disable=SC2086
"$CLANG" -O2 "${INCLUDES[@]}" $GMP_CFLAGS "$ROOT/scripts/ifma-efficiency.c" "$OUT/ifma.o" \
    "$SRC/rsakit_vector_reference.c" "$SRC/rsakit_vector_exp.c" "$SRC/rsakit_vector_modulus.c" \
    "$SRC/rsakit_vector_emulated.c" "$SRC/rsakit_vector_dispatch.c" "$SRC/rsakit_vector_mulmod.c" \
    $GMP_LIBS -o "$OUT/efficiency"
if [[ "${1:-}" == "--build-only" ]]; then
    echo "measure-ifma-efficiency: built against the tree's kernel (not run: --build-only)"
    exit 0
fi
if command -v taskset >/dev/null; then
    taskset -c 0 "$OUT/efficiency"
else
    "$OUT/efficiency"
fi
