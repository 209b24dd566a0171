#!/usr/bin/env bash
# scripts/install.sh [PREFIX]: build rsakit in release mode with the Swift standard library
# (and FoundationEssentials) linked statically, and install it under PREFIX (default
# /usr/local):
#   PREFIX/bin/rsakit                      the binary (system libc, libstdc++, GMP, Nettle, GnuTLS, libsodium; no ICU)
#   PREFIX/bin/git-credential-rsakit       a link to it: git's credential helper (credential.helper rsakit)
#   PREFIX/share/doc/rsakit/rsakit-help.txt  `rsakit help` and every command's help
#   PREFIX/share/doc/rsakit/README.md
#   PREFIX/lib/pkcs11/librsakit-pkcs11.so    the PKCS#11 module (issue 25), Swift runtime linked in
#   P11KIT_MODULE_CONFIGS/rsakit.module     its p11-kit registration (default: p11-kit's own folder,
#                                          `pkg-config --variable=p11_module_configs p11-kit-1`,
#                                          /usr/share/p11-kit/modules on Debian)
# DESTDIR is honoured (staged installs, packaging, tests). Environment: SWIFT_BUILD_FLAGS adds
# flags; RSAKIT_INSTALL_MODULE=0 leaves the PKCS#11 module out.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="${1:-/usr/local}"
case "$prefix" in
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
destination="${DESTDIR:-}$prefix"

scripts/install-deps.sh
# shellcheck disable=SC2086
swift build -c release --product rsakit --static-swift-stdlib ${SWIFT_BUILD_FLAGS:-}
bin_dir=$(swift build -c release --static-swift-stdlib --show-bin-path)
binary="$bin_dir/rsakit"

# The installed binary must not depend on the toolchain folder (libswiftCore, Foundation, ICU).
if ldd "$binary" | grep -E 'libswift|libFoundation|libicu|libdispatch|/swift/' >&2; then
    echo "rsakit: install: the binary still loads the libraries above from the toolchain" >&2
    exit 1
fi

# Nor may it carry Foundation's ICU (FoundationInternationalization, _FoundationICU and its
# ~30 MB data table): rsakit imports only FoundationEssentials, and a stray `import Foundation`
# would bring ICU back and slow every start. Symbols first; the data table's name if stripped.
icu=$( { nm "$binary" 2>/dev/null || true; } | grep -E -m 5 'icudt[0-9]+_dat|swift_u(col|brk|loc|cal|dat)_|FoundationInternationalization|_FoundationICU' || true)
if [ -z "$icu" ] && grep -a -q -E 'icudt[0-9]+l' "$binary"; then icu="ICU data table (icudt..l)"; fi
if [ -n "$icu" ]; then
    printf '%s\n' "$icu" >&2
    echo "rsakit: install: the binary links Foundation's ICU (symbols above); some file imports Foundation instead of FoundationEssentials: grep -rln '^import Foundation\$' Sources" >&2
    exit 1
fi

install -d "$destination/bin" "$destination/share/doc/rsakit"
install -m 0755 "$binary" "$destination/bin/rsakit"
ln -sf rsakit "$destination/bin/git-credential-rsakit"
{
    "$binary" help
    for command in $("$binary" help | awk '/^SUBCOMMANDS:/ {on = 1; next} on && /^  [a-z]/ {print $1}'); do
        [ "$command" = help ] && continue
        printf '\n==== rsakit %s ====\n\n' "$command"
        "$binary" help "$command"
    done
} > "$destination/share/doc/rsakit/rsakit-help.txt"
install -m 0644 README.md "$destination/share/doc/rsakit/README.md"
# The PKCS#11 module: the Swift runtime inside the shared object too, so that a host (ssh,
# p11tool, Firefox) loads it without the toolchain's lib folder. SwiftPM's --static-swift-stdlib
# covers executables only (with it, this link fails: "cannot find -l_FoundationCShims"); the
# module's target passes swiftc -static-stdlib itself in release builds (Package.swift).
if [ "${RSAKIT_INSTALL_MODULE:-1}" != 0 ]; then
    # shellcheck disable=SC2086
    swift build -c release --product rsakit-pkcs11 ${SWIFT_BUILD_FLAGS:-}
    module="$bin_dir/librsakit-pkcs11.so"
    if ldd "$module" | grep -E 'libswift|libFoundation|libicu|libdispatch|/swift/' >&2; then
        echo "rsakit: install: the PKCS#11 module still loads the libraries above from the toolchain" >&2
        exit 1
    fi
    # Hosts load modules with dlopen(RTLD_NOW) (p11-kit does): every symbol must resolve.
    if ldd -r "$module" 2>&1 | grep -m 5 'undefined symbol' >&2; then
        echo "rsakit: install: the PKCS#11 module has undefined symbols (above)" >&2
        exit 1
    fi
    module_configs="${P11KIT_MODULE_CONFIGS:-$(pkg-config --variable=p11_module_configs p11-kit-1 2>/dev/null || true)}"
    module_configs="${module_configs:-/usr/share/p11-kit/modules}"
    install -d "$destination/lib/pkcs11" "${DESTDIR:-}$module_configs"
    install -m 0755 "$module" "$destination/lib/pkcs11/librsakit-pkcs11.so"
    {
        echo "# rsakit's key store (RSAKIT_STORE, else the default store) as a PKCS#11 token; written by scripts/install.sh."
        echo "# Add 'enable-in: ssh, gnutls-cli' (program names) to offer it to those programs only."
        echo "module: $prefix/lib/pkcs11/librsakit-pkcs11.so"
        echo "critical: no"
    } > "${DESTDIR:-}$module_configs/rsakit.module"
    chmod 0644 "${DESTDIR:-}$module_configs/rsakit.module"
    echo "installed $destination/lib/pkcs11/librsakit-pkcs11.so, registered in ${DESTDIR:-}$module_configs/rsakit.module"
fi
echo "installed $destination/bin/rsakit ($("$binary" --version | head -n 1)); help text in $destination/share/doc/rsakit/"
echo "it loads: $(ldd "$destination/bin/rsakit" | awk '{print $1}' | tr '\n' ' ')"
