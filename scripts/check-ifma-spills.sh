#!/usr/bin/env bash
# Register-spill check of the AVX-512 IFMA kernels: compiles
# Sources/CRSAKitVector/rsakit_vector_ifma.c as a build does (-O2 and -O3, with the
# target's flags) and
# counts, per kernel function, the zmm spills and reloads the register allocator inserted
# (its "64-byte Spill" / "64-byte Reload" / "Folded" annotations), plus, from the
# llvm-objdump disassembly, every zmm load/store addressed off %rsp/%rbp.
# The eight-lane products keep one accumulator per digit (N + 1 of them): at N = 20
# and N = 10 (1024- and 512-bit primes) they fit the 32 zmm registers and must not spill; at
# N = 30 and 40 they cannot all fit, and their spills are reported, not failed (the loads
# of the operands cost more). Runs anywhere (no IFMA needed). Exit 1 if a kernel that must
# not spill does.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CLANG="${CLANG:-/opt/swift/usr/bin/clang}"
OBJDUMP="${OBJDUMP:-/opt/swift/usr/bin/llvm-objdump}"
SRC="$ROOT/Sources/CRSAKitVector"
OUT="${TMPDIR:-/tmp}/rsakit-spills-$$"
mkdir -p "$OUT"
trap 'rm -rf "$OUT"' EXIT
status=0
must_not_spill="ifma_mul1 ifma_sqr1 ifma_mul1x2 ifma_mul8_10 ifma_sqr8_10 ifma_sqr8_scan_10 ifma_mul8_20 ifma_sqr8_20 ifma_sqr8_scan_20 ifma_select"
reported="ifma_mul8_30 ifma_sqr8_30 ifma_sqr8_scan_30 ifma_mul8_40 ifma_sqr8_40 ifma_sqr8_scan_40"
# The flags SwiftPM gives the CRSAKitVectorIFMA target (Package.swift): position-independent,
# a frame pointer asked for, then the target's cc1 option that drops it again.
BUILD_FLAGS=(-fPIC -fno-omit-frame-pointer -Xclang -mframe-pointer=none)
for opt in -O2 -O3; do
    "$CLANG" "$opt" "${BUILD_FLAGS[@]}" -S -I"$SRC/include" -I"$SRC" "$SRC/rsakit_vector_ifma.c" -o "$OUT/k.s"
    "$CLANG" "$opt" "${BUILD_FLAGS[@]}" -c -I"$SRC/include" -I"$SRC" "$SRC/rsakit_vector_ifma.c" -o "$OUT/k.o"
    "$OBJDUMP" -d --no-show-raw-insn "$OUT/k.o" > "$OUT/k.dis"
    echo "== $opt   kernel        zmm-spills zmm-reloads gpr-spill/reload  zmm-stack-accesses(objdump)  ifma-instructions"
    for f in $must_not_spill $reported; do
        body() { awk -v f="$f:" '$1 == f {on=1; next} /^ifma_[a-z0-9_]+:/ {on=0} on' "$OUT/k.s"; }
        zs=$(body | grep -c '64-byte Spill' || true)
        zr=$(body | grep -c '64-byte Reload' || true)
        gs=$(body | grep -cE '8-byte (Folded )?(Spill|Reload)' || true)
        dis() { awk -v f="<$f>:" '$2 == f {on=1; next} /^[0-9a-f]+ </ {on=0} on' "$OUT/k.dis"; }
        za=$(dis | grep zmm | grep -cE '\((%rsp|%rbp)' || true)
        im=$(dis | grep -cE 'vpmadd52(l|h)uq' || true)
        if [[ -z "$(body | head -n 1)" ]]; then
            echo "check-ifma-spills: kernel $f not found in the assembly" >&2
            status=1
        fi
        note=""
        [[ " $reported " == *" $f "* ]] && note="(reported only)"
        printf '   %-13s %10s %11s %17s %28s %18s %s\n' "$f" "$zs" "$zr" "$gs" "$za" "$im" "$note"
        if [[ -z "$note" && ( "$zs" != 0 || "$zr" != 0 ) ]]; then status=1; fi
    done
done
[[ $status == 0 ]] && echo "check-ifma-spills: no zmm register spilled in the kernels that must not spill" || echo "check-ifma-spills: zmm SPILLS found" >&2
exit $status
