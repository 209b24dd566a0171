#!/usr/bin/env bash
# scripts/install.sh [PREFIX]: build rsakit in release mode with the Swift standard library
# (and FoundationEssentials) linked statically, and install it under PREFIX (default
# /usr/local):
#   PREFIX/bin/rsakit                      the binary (needs only libc, libstdc++, GMP, Nettle)
#   PREFIX/share/doc/rsakit/rsakit-help.txt  `rsakit help` and every command's help
#   PREFIX/share/doc/rsakit/README.md
# DESTDIR is honoured (staged installs, packaging). Environment: SWIFT_BUILD_FLAGS adds flags.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="${1:-/usr/local}"
case "$prefix" in
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

install -d "$destination/bin" "$destination/share/doc/rsakit"
install -m 0755 "$binary" "$destination/bin/rsakit"
{
    "$binary" help
    for command in $("$binary" help | awk '/^SUBCOMMANDS:/ {on = 1; next} on && /^  [a-z]/ {print $1}'); do
        [ "$command" = help ] && continue
        printf '\n==== rsakit %s ====\n\n' "$command"
        "$binary" help "$command"
    done
} > "$destination/share/doc/rsakit/rsakit-help.txt"
install -m 0644 README.md "$destination/share/doc/rsakit/README.md"
echo "installed $destination/bin/rsakit ($("$binary" --version | head -n 1)); help text in $destination/share/doc/rsakit/"
echo "it loads: $(ldd "$destination/bin/rsakit" | awk '{print $1}' | tr '\n' ' ')"
