#!/usr/bin/env bash
# The chunked CLI decrypt against Intel's crypto_mb (>= 0.9x), one core:
#
#   scripts/measure-chunked-decrypt.sh [ROUNDS]   (default 5; RSAKIT_BIN=path to pick the binary,
#                                                  ANCHOR=path to the anchor helper)
#
# For 2048, 3072 and 4096 bits (the benchmark keys), it encrypts random data into 8,000 /
# 3,000 / 1,600 raw PKCS#1 v1.5 blocks once, then alternates ROUNDS times
#   taskset -c 0 anchor KEY mb8 ITERS                    (crypto_mb, eight blocks per call)
#   taskset -c 0 rsakit decrypt --raw --key KEY ...      (whole process, output to /dev/null)
# and prints, per round, the process CPU time (user + system, from bash's `times` of a
# subshell), rsakit's blocks per CPU second, crypto_mb's, and the ratio. crypto_mb needs
# AVX-512 IFMA; the anchor comes from ../shared/tools/intel-anchor/setup.sh (its README).
#
# With ENGINE=adx (or gmp) the comparison is the one for CPUs without AVX-512: rsakit runs
# with RSAKIT_ENGINE=ENGINE, and the anchors are ippcp with AVX-512 switched off
# (`ipp-noavx512`) and OpenSSL with its AVX-512 paths masked (OPENSSL_ia32cap=':~0xdc230000'),
# one block per call; each line gives both ratios. Possible on any CPU with BMI2 and ADX.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-5}"
bin="${RSAKIT_BIN:-.build/release/rsakit}"
[ -x "$bin" ] || { echo "no rsakit binary: swift build -c release --product rsakit" >&2; exit 1; }
anchor="${ANCHOR:-}"
if [ -z "$anchor" ]; then
    anchor="$(../shared/tools/intel-anchor/setup.sh 2>/dev/null | tail -n 1)" || true
fi
[ -x "$anchor" ] || { echo "no anchor helper: run ../shared/tools/intel-anchor/setup.sh or set ANCHOR" >&2; exit 1; }
keys=Benchmarks/RSAKitBenchmarks/Keys
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cpu_seconds() { # CPU time of the command (children's user + system), in seconds
    local t
    t="$( (taskset -c 0 "$@" >/dev/null 2>&1; times) | tail -n 1)"
    awk -v t="$t" 'BEGIN { split(t, f, /[ ms]+/); print f[1] * 60 + f[2] + f[3] * 60 + f[4] }'
}

for spec in "2048 8000 400" "3072 3000 60" "4096 1600 40"; do
    set -- $spec
    bits=$1 blocks=$2 iters=$3 k=$(($1 / 8))
    head -c $((blocks * (k - 11))) /dev/urandom > "$work/plain"
    "$bin" encrypt --raw --key "$keys/rsa$bits.pem" --in "$work/plain" --out "$work/blocks"
    if [ -n "${ENGINE:-}" ]; then
        for _ in $(seq "$rounds"); do
            ipp=$(taskset -c 0 "$anchor" "$keys/rsa$bits.pem" ipp-noavx512 "$((iters * 4))" | sed -n 's/.*ops_per_cpu_s=\([0-9.]*\).*/\1/p')
            ossl=$(OPENSSL_ia32cap=':~0xdc230000' taskset -c 0 "$anchor" "$keys/rsa$bits.pem" ossl "$((iters * 4))" | sed -n 's/.*ops_per_cpu_s=\([0-9.]*\).*/\1/p')
            cpu=$(RSAKIT_ENGINE="$ENGINE" cpu_seconds "$bin" decrypt --raw --key "$keys/rsa$bits.pem" --in "$work/blocks" --out /dev/null)
            awk -v b="$bits" -v n="$blocks" -v c="$cpu" -v i="$ipp" -v o="$ossl" -v e="$ENGINE" 'BEGIN {
                printf "bits=%s blocks=%s engine=%s cpu_s=%.3f rsakit=%.0f/s ipp_noavx512=%.0f/s openssl_masked=%.0f/s vs_ipp=%.3f vs_openssl=%.3f\n",
                    b, n, e, c, n / c, i, o, n / c / i, n / c / o }'
        done
        continue
    fi
    for _ in $(seq "$rounds"); do
        mb=$(taskset -c 0 "$anchor" "$keys/rsa$bits.pem" mb8 "$iters" | sed -n 's/.*ops_per_cpu_s=\([0-9.]*\).*/\1/p')
        cpu=$(cpu_seconds "$bin" decrypt --raw --key "$keys/rsa$bits.pem" --in "$work/blocks" --out /dev/null)
        awk -v b="$bits" -v n="$blocks" -v c="$cpu" -v m="$mb" 'BEGIN {
            printf "bits=%s blocks=%s cpu_s=%.3f rsakit=%.0f/s crypto_mb=%.0f/s ratio=%.3f\n", b, n, c, n / c, m, n / c / m }'
    done
done
