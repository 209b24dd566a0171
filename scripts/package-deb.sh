#!/usr/bin/env bash
# scripts/package-deb.sh [OUTDIR]: build the Debian package rsakit_VERSION_ARCH.deb (default
# OUTDIR: .build/deb) from what scripts/install.sh installs under /usr: the static binary and
# git-credential-rsakit, the PKCS#11 module (/usr/lib/pkcs11/librsakit-pkcs11.so) and its p11-kit
# registration (/usr/share/p11-kit/modules/rsakit.module), the man pages, the bash/zsh/fish
# completions, README.md, CHANGELOG.md and the help text under /usr/share/doc/rsakit, the
# system keychain agent's systemd unit (/usr/lib/systemd/system/rsakit-system-agent.service,
# installed, not enabled), plus Debian's copyright and changelog files.
# VERSION is the binary's own (`rsakit --version`, defined once in RSAKitCommandLine.version).
# Depends: is computed by dpkg-shlibdeps from the libraries the binary really loads. The
# package Recommends: libcurl3-gnutls, which rsakit loads (dlopen) only for OCSP and CRL
# fetching, and Suggests: tpm2-tss's libraries (libtss2-esys-3.0.2-0, libtss2-tctildr0,
# libtss2-mu0, libtss2-rc0), which it loads (dlopen) only for keys in the TPM (genpair --tpm). The package is checked with lintian (no errors allowed; warnings are printed).
# Prints the path.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out="${1:-$root/.build/deb}"
for tool in dpkg-deb dpkg-shlibdeps lintian; do
    command -v "$tool" >/dev/null 2>&1 || { echo "package-deb: $tool is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/rsakit-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
stage="$work/stage"

DESTDIR="$stage" P11KIT_MODULE_CONFIGS=/usr/share/p11-kit/modules scripts/install.sh /usr >&2
binary="$stage/usr/bin/rsakit"
module="$stage/usr/lib/pkcs11/librsakit-pkcs11.so"
[ -f "$module" ] || { echo "package-deb: install.sh installed no PKCS#11 module" >&2; exit 1; }
version=$("$binary" --version | sed -n '1s/^rsakit //p')
arch=$(dpkg --print-architecture)
[ -n "$version" ] || { echo "package-deb: cannot read the version from rsakit --version" >&2; exit 1; }
grep -q "^## \[$version\]" CHANGELOG.md || { echo "package-deb: CHANGELOG.md has no section for $version" >&2; exit 1; }

install -D -m 0644 packaging/rsakit-system-agent.service "$stage/usr/lib/systemd/system/rsakit-system-agent.service"

# Debian's policy: stripped binaries, a copyright file, a compressed changelog, 0755 folders.
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$binary" "$module"
chmod 0644 "$module"   # a shared object is not executed
doc="$stage/usr/share/doc/rsakit"
cat > "$doc/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: rsakit
Comment: No licence has been granted for rsakit yet; until one is chosen, all rights are
 reserved by its authors. The libraries it links (GMP, Nettle, GnuTLS, libsodium) keep
 their own licences, in their packages' copyright files.

Files: *
Copyright: 2026 the rsakit authors
License: none
 No licence has been chosen yet.
COPYRIGHT
{
    printf 'rsakit (%s) unstable; urgency=medium\n\n' "$version"
    printf '  * Packaged from the source tree; what changed is in\n'
    printf '    /usr/share/doc/rsakit/CHANGELOG.md (Keep a Changelog form).\n\n'
    printf ' -- rsakit developers <rsakit@example.org>  %s\n' "$(date -R -d "$(sed -n "s/^## \[$version\] - \([0-9-]*\).*/\1/p" CHANGELOG.md) 12:00 UTC")"
} | gzip -9n > "$doc/changelog.gz"
chmod 0644 "$doc/copyright" "$doc/changelog.gz"
find "$stage" -type d -exec chmod 0755 {} +

# Depends from the binary's real libraries (dpkg-shlibdeps needs a debian/control to read).
mkdir -p "$work/src/debian"
printf 'Source: rsakit\n\nPackage: rsakit\nArchitecture: any\n' > "$work/src/debian/control"
depends=$(cd "$work/src" && dpkg-shlibdeps -O -e"$binary" -e"$module" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "package-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

mkdir -p "$stage/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat > "$stage/DEBIAN/control" <<CONTROL
Package: rsakit
Version: $version
Architecture: $arch
Maintainer: rsakit developers <rsakit@example.org>
Installed-Size: $size
Depends: $depends
Recommends: libcurl3-gnutls
Suggests: libtss2-esys-3.0.2-0, libtss2-tctildr0, libtss2-mu0, libtss2-rc0
Section: utils
Priority: optional
Homepage: https://example.org/rsakit
Description: RSA encryption utility with a keychain
 rsakit encrypts and decrypts with RSA (PKCS#1 v1.5 and OAEP), signs and
 verifies, and keeps keys, certificates, identities and passwords in a key
 store, as Apple's Certificate, Key and Trust Services do on iOS. Its output
 interoperates with iOS apps, Java's javax.crypto and OpenSSL. The package
 holds the rsakit command, its git credential helper, a PKCS#11 module that
 offers the key store to ssh, curl, GnuTLS, NSS and other PKCS#11 clients
 (registered with p11-kit), manual pages and bash, zsh and fish completion.
CONTROL
( cd "$stage" && find usr -type f -exec md5sum {} + | sort -k2 ) > "$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/control" "$stage/DEBIAN/md5sums"

mkdir -p "$out"
deb="$out/rsakit_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >&2
echo "package-deb: Depends: $depends" >&2

# lintian: errors fail the build; warnings and notes are shown.
lintian_log="$work/lintian.log"
lintian --tag-display-limit 0 "$deb" > "$lintian_log" 2>&1 || true
if grep -q '^E:' "$lintian_log"; then
    cat "$lintian_log" >&2
    echo "package-deb: lintian reports errors" >&2
    exit 1
fi
sed 's/^/package-deb: lintian: /' "$lintian_log" >&2
echo "$deb"
