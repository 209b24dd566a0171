#!/usr/bin/env bash
# The main job, end to end on a fresh machine: install what is missing, build rsakit, generate
# a tagged key pair in a temporary store, encrypt a real multi-megabyte file, decrypt it,
# compare, and show the same data crossing to and from `openssl pkeyutl`.
#
#   ./scripts/demo.sh [FILE]     (default FILE: the rsakit binary just built, several MB)
set -euo pipefail
# Resolve FILE before changing to the repository root.
input_arg=""
if [ "$#" -gt 0 ]; then
    [ -f "$1" ] || { echo "demo: no such file: $1" >&2; exit 66; }
    input_arg="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
fi
cd "$(dirname "$0")/.."
scripts/install-deps.sh

echo "== building rsakit (release)"
swift build -c release --product rsakit 2>&1 | tail -n 1
bin="$(swift build -c release --show-bin-path)/rsakit"

work="$(mktemp -d "${TMPDIR:-/tmp}/rsakit-demo.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export RSAKIT_STORE="$work/store"
input="${input_arg:-$bin}"
fail() { echo "demo: FAILED: $*" >&2; exit 1; }
cp "$input" "$work/report.pdf"
size=$(stat -c %s "$work/report.pdf")

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

echo
echo "== rsakit genpair --tag com.example.pub      (store: $RSAKIT_STORE)"
"$bin" genpair --tag com.example.pub

echo
echo "== rsakit encrypt --tag com.example.pub --in report.pdf --out report.rsa   ($input, $size bytes)"
t0=$(now); "$bin" encrypt --tag com.example.pub --in "$work/report.pdf" --out "$work/report.rsa"; t1=$(now)
echo "   wrote $(stat -c %s "$work/report.rsa") bytes in $(elapsed "$t0" "$t1") s"

echo "== rsakit decrypt --tag com.example.pub --in report.rsa --out report.out.pdf"
t0=$(now); "$bin" decrypt --tag com.example.pub --in "$work/report.rsa" --out "$work/report.out.pdf"; t1=$(now)
echo "   wrote $(stat -c %s "$work/report.out.pdf") bytes in $(elapsed "$t0" "$t1") s"
echo "   (decrypting is the slow direction: each of the ~$(( $(stat -c %s "$work/report.rsa") / 256 )) 256-byte blocks costs one"
echo "   private-key operation, many times a public one; --format apple-aesgcm needs one per file)"
cmp -s "$work/report.pdf" "$work/report.out.pdf" || fail "decrypted file differs from the original"
echo "   identical to the original: yes"

echo
echo "== decrypt without --tag: the key is found in the store by the fingerprint in the header"
"$bin" decrypt < "$work/report.rsa" > "$work/report.auto.pdf"
cmp -s "$work/report.auto.pdf" "$work/report.pdf" || fail "decrypt without --tag gave a different file"
echo "   identical: yes"

echo
echo "== tampering: one changed byte in the last block of report.rsa"
cp "$work/report.rsa" "$work/tampered.rsa"
sealed_size=$(stat -c %s "$work/report.rsa")
offset=$((sealed_size - 100))
old=$(od -An -tu1 -j "$offset" -N1 "$work/report.rsa" | tr -d ' ')
printf "$(printf '\\%03o' $(( (old + 1) % 256 )))" | dd of="$work/tampered.rsa" bs=1 seek="$offset" conv=notrunc status=none
if "$bin" decrypt --tag com.example.pub --in "$work/tampered.rsa" --out "$work/tampered.out"; then
    echo "   UNEXPECTED: tampered file decrypted" >&2; exit 1
else
    echo "   exit status $? and nothing written: $( [ -e "$work/tampered.out" ] && echo 'file present (BUG)' || echo 'no output file')"
fi

if command -v openssl >/dev/null 2>&1 && [ "$size" -gt 0 ]; then
    echo
    echo "== interop: raw PKCS#1 v1.5 blocks with openssl pkeyutl"
    "$bin" export --tag com.example.pub --out "$work/pub.pem"
    "$bin" export --tag com.example.pub --private --out "$work/key.pem"
    head -c 245 "$work/report.pdf" > "$work/slice"
    openssl pkeyutl -encrypt -pubin -inkey "$work/pub.pem" -in "$work/slice" -out "$work/slice.openssl"
    "$bin" decrypt --raw --tag com.example.pub < "$work/slice.openssl" > "$work/slice.back"
    cmp -s "$work/slice.back" "$work/slice" || fail "openssl -> rsakit: different bytes"
    echo "   openssl pkeyutl -encrypt  ->  rsakit decrypt --raw: identical"
    "$bin" encrypt --raw --tag com.example.pub < "$work/slice" > "$work/slice.rsakit"
    openssl pkeyutl -decrypt -inkey "$work/key.pem" -in "$work/slice.rsakit" -out "$work/slice.openssl.back"
    cmp -s "$work/slice.openssl.back" "$work/slice" || fail "rsakit -> openssl: different bytes"
    echo "   rsakit encrypt --raw  ->  openssl pkeyutl -decrypt: identical"
    echo "   openssl rsa -check on the stored private item: $(openssl rsa -check -noout -in "$(ls "$RSAKIT_STORE"/private/*/*.pem | head -n 1)")"
fi

echo
echo "== rsakit list"
"$bin" list
echo
echo "demo: done (temporary store removed)"
