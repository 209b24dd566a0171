#!/usr/bin/env bash
# scripts/test-install.sh: install.sh under a prefix other than /usr writes nothing outside it.
# Staged with DESTDIR into a scratch root: the binary, the PKCS#11 module and the module's p11-kit
# registration land under PREFIX, the registration names the installed module, nothing appears
# elsewhere in the root (no /usr/share/p11-kit/modules), and the script says how to make p11-kit
# read the registration. It runs after scripts/package-deb.sh in scripts/test.sh and reuses that
# release build (install.sh builds with the same flags), so it compiles nothing there.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/rsakit-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "test-install: $*" >&2; exit 1; }
prefix=/opt/rsakit-check
root="$work/root"
output=$(DESTDIR="$root" scripts/install.sh "$prefix" 2>&1) || { echo "$output" >&2; fail "install.sh $prefix failed"; }
registration="$root$prefix/share/p11-kit/modules/rsakit.module"
[ -x "$root$prefix/bin/rsakit" ] || fail "no binary under PREFIX/bin"
[ -f "$root$prefix/lib/pkcs11/librsakit-pkcs11.so" ] || fail "no module under PREFIX/lib/pkcs11"
[ -f "$registration" ] || fail "no p11-kit registration under PREFIX/share/p11-kit/modules"
grep -qx "module: $prefix/lib/pkcs11/librsakit-pkcs11.so" "$registration" || fail "the registration does not name the installed module"
outside=$(cd "$root" && find . -mindepth 1 -not -path ./opt -not -path "./${prefix#/}" -not -path "./${prefix#/}/*" | sort)
[ -z "$outside" ] || fail "installed outside PREFIX: $outside"
grep -q "p11-kit reads that folder only if told" <<<"$output" || fail "install.sh did not say how to make p11-kit read the registration"
echo "test-install: install.sh $prefix wrote only under PREFIX and registered the module there"
