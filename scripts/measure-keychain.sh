#!/usr/bin/env bash
# Measure the keychain: lookup time per item class in a store of COUNT items of each class
# (default 10,000 keys, 10,000 generic passwords, 10,000 certificates), then the unlock time
# with the default Argon2id parameters (libsodium MODERATE: 3 passes, 256 MiB) and a sealed
# password read.
#
#   scripts/measure-keychain.sh [COUNT] [REPEAT]
#
# Builds StoreStressHelper in release mode; makes one 2048-bit key and one certificate with
# openssl (the certificates are copies of it with distinct serials: the serial's last 4 bytes
# rewritten, which storing does not check); fills a fresh store, 1,000 items per atomic batch
# per class; times REPEAT (default 200) lookups of each kind on an item in the middle; then
# protects the store with MODERATE and times the unlock (5 runs) and a sealed password read.
# The unlock time does not depend on COUNT; a COUNT of 1000 measures it in well under a minute
# (filling 10,000 per class takes about 4.5 minutes here, protecting them 2). Caches are warm. Nothing is
# asserted: the figures are printed, one grep-able line each.
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-10000}"
repeat="${2:-200}"
swift build -c release --product StoreStressHelper >&2
helper="$(swift build -c release --show-bin-path)/StoreStressHelper"
work="$(mktemp -d "${TMPDIR:-/tmp}/rsakit-keychain-measure.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048; openssl req -x509 (random 20-byte serial)
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$work/key.pem" 2>/dev/null
openssl req -x509 -key "$work/key.pem" -subj "/CN=measure.rsakit.test" -days 30 -outform DER -out "$work/cert.der"
echo "filling $work/store with $count items of each class" >&2
"$helper" fill-keychain --store "$work/store" --key "$work/key.pem" --cert "$work/cert.der" --prefix m- --count "$count"
echo "store size: $(du -sh "$work/store" | cut -f1), files: $(find "$work/store" -type f | wc -l)"
"$helper" time-keychain --store "$work/store" --prefix m- --count "$count" --repeat "$repeat"
printf 'measure passphrase' > "$work/pass"
start=$(date +%s.%N)
"$helper" protect --store "$work/store" --passphrase "$work/pass" --kdf moderate | grep -v ready
echo "protect (moderate, $count passwords resealed): $(echo "$(date +%s.%N) - $start" | bc) s"
"$helper" time-keychain --store "$work/store" --prefix m- --count "$count" --repeat 200 --passphrase "$work/pass" | grep -E "^unlock|password-value"
