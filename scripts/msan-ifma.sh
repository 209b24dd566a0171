#!/usr/bin/env bash
# MemorySanitizer check of the radix-2^52 kernels, secrets poisoned.
#
#   scripts/msan-ifma.sh
#
# Builds Sources/CRSAKitVector with clang's MemorySanitizer
# (-fsanitize=memory -fno-sanitize-memory-param-retval) into a small driver
# (scripts/msan-ifma-driver.c) that poisons the modulus, the exponent and the bases with
# __msan_poison, then runs the portable reference and the kernel's emulated form on every
# CPU, and the AVX-512 IFMA kernel itself where the CPU has it (MSan models the
# vpmadd52luq/huq intrinsics). Elsewhere it says plainly that the IFMA kernel was built but
# not run, and exits 0 (77 with --require-ifma). Any MSan report fails the script.
# About 30 s on 2 cores.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CLANG="${CLANG:-/opt/swift/usr/bin/clang}"
OUT="${TMPDIR:-/tmp}/rsakit-msan-ifma-$$"
REQUIRE_IFMA=0
[[ "${1:-}" == "--require-ifma" ]] && REQUIRE_IFMA=1
mkdir -p "$OUT"
trap 'rm -rf "$OUT"' EXIT

SRC="$ROOT/Sources/CRSAKitVector"
GMP_CFLAGS="$(pkg-config --cflags gmp 2>/dev/null || true)"
GMP_LIBS="$(pkg-config --libs gmp 2>/dev/null || echo -lgmp)"
# shellcheck disable=SC2086
"$CLANG" -O1 -g -fsanitize=memory -fno-sanitize-memory-param-retval -fno-omit-frame-pointer \
    -I"$SRC/include" -I"$SRC" -I"$ROOT/Sources/CRSAKitShims/include" $GMP_CFLAGS \
    "$ROOT/scripts/msan-ifma-driver.c" \
    "$SRC/rsakit_vector_reference.c" "$SRC/rsakit_vector_exp.c" "$SRC/rsakit_vector_modulus.c" "$SRC/rsakit_vector_emulated.c" \
    "$SRC/rsakit_vector_ifma.c" "$SRC/rsakit_vector_dispatch.c" "$SRC/rsakit_vector_mulmod.c" \
    $GMP_LIBS -o "$OUT/driver"
echo "msan-ifma: built the kernels with -fsanitize=memory"

export MSAN_OPTIONS="halt_on_error=1:exitcode=86"
# Not vacuous: one planted branch on a poisoned value must be reported (exit 86).
if "$OUT/driver" plant >/dev/null 2>&1; then
    echo "msan-ifma: FAILED: MemorySanitizer did not report the planted secret branch" >&2
    exit 1
fi
echo "msan-ifma: the planted secret branch is reported (the check is live)"
for impl in reference emulated; do
    "$OUT/driver" "$impl"
done

if grep -q avx512ifma /proc/cpuinfo 2>/dev/null; then
    "$OUT/driver" ifma
    echo "msan-ifma: the AVX-512 IFMA kernel ran under MemorySanitizer with secrets poisoned: no report"
else
    echo "msan-ifma: SKIPPED the AVX-512 IFMA kernel: this CPU has no avx512ifma in /proc/cpuinfo;"
    echo "msan-ifma: the kernel was compiled with MSan but NOT RUN (reference and emulated kernel passed)"
    [[ $REQUIRE_IFMA == 1 ]] && exit 77
fi
exit 0
