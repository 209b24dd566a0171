#!/usr/bin/env bash
# scripts/test-deb.sh [--system] [DEB]: install the package built by scripts/package-deb.sh,
# use it, remove it, and check that nothing is left behind.
#   default    into a scratch root with a scratch dpkg database (dpkg --instdir/--admindir):
#              needs no root and leaves the machine alone;
#   --system   with the real `dpkg -i` / `dpkg --purge` on this machine (needs root; CI runs
#              it, on a machine that is thrown away), then `man rsakit` through man-db.
# Checks: rsakit --version prints the package's version, the man pages render (man -l), the
# completion files load in bash, git-credential-rsakit links to rsakit, the PKCS#11 module is
# registered with p11-kit and loads in pkcs11-tool (-L shows its token), and after removal
# no file of the package remains. DEB defaults to the newest .build/deb/rsakit_*.deb.
set -euo pipefail
cd "$(dirname "$0")/.."
system=0
if [ "${1:-}" = --system ]; then system=1; shift; fi
deb="${1:-$(ls -t .build/deb/rsakit_*.deb 2>/dev/null | head -n 1)}"
[ -n "$deb" ] && [ -f "$deb" ] || { echo "test-deb: no package; run scripts/package-deb.sh first" >&2; exit 1; }
deb=$(realpath "$deb")
version=$(dpkg-deb --field "$deb" Version)
fail() { echo "test-deb: FAILED: $*" >&2; exit 1; }

check_installed() {   # $1: the root the package is in ("" for /)
    local r=$1
    [ "$("$r/usr/bin/rsakit" --version | head -n 1)" = "rsakit $version" ] || fail "rsakit --version is not $version"
    [ "$(readlink "$r/usr/bin/git-credential-rsakit")" = rsakit ] || fail "git-credential-rsakit is not a link to rsakit"
    MANPAGER=cat MANWIDTH=80 man -l "$r/usr/share/man/man1/rsakit.1.gz" | grep -q "EXIT STATUS" || fail "man -l rsakit.1.gz"
    MANPAGER=cat MANWIDTH=80 man -l "$r/usr/share/man/man1/rsakit-encrypt.1.gz" | grep -q -- "--padding" || fail "man -l rsakit-encrypt.1.gz"
    bash --noprofile --norc -c "source '$r/usr/share/bash-completion/completions/rsakit' && declare -F _rsakit >/dev/null" || fail "bash completion"
    [ -f "$r/usr/share/zsh/vendor-completions/_rsakit" ] && [ -f "$r/usr/share/fish/vendor_completions.d/rsakit.fish" ] || fail "zsh/fish completion"
    [ -f "$r/usr/share/doc/rsakit/copyright" ] && [ -f "$r/usr/share/doc/rsakit/CHANGELOG.md" ] || fail "doc files"
    grep -q "^module: /usr/lib/pkcs11/librsakit-pkcs11.so" "$r/usr/share/p11-kit/modules/rsakit.module" || fail "p11-kit registration"
    if command -v pkcs11-tool >/dev/null 2>&1; then
        # The module loads in a real host and shows a scratch store, made by the packaged
        # binary, as a token holding its key.
        local store
        store="$(mktemp -d "${TMPDIR:-/tmp}/rsakit-deb-store.XXXXXX")"
        RSAKIT_STORE="$store/s" "$r/usr/bin/rsakit" genpair --tag deb.test --bits 2048 >/dev/null
        RSAKIT_STORE="$store/s" pkcs11-tool --module "$r/usr/lib/pkcs11/librsakit-pkcs11.so" -O 2>&1 | grep -q "deb.test" \
            || { rm -rf "$store"; fail "pkcs11-tool -O through the packaged module does not list the key"; }
        rm -rf "$store"
    fi
}

# docs/install.md's package facts (the lines between "<!-- package facts -->" and its end) must say
# what this package says: the Depends and Recommends package names, and the stripped sizes of
# the binary and the module within 10 %. On a mismatch, the lines to paste are printed.
readme_facts() {
    local readme facts extracted depends recommends binary_mb module_mb want
    readme="$(dirname "$0")/../docs/install.md"
    facts=$(sed -n '/^<!-- package facts -->$/,/^<!-- end of package facts -->$/p' "$readme")
    [ -n "$facts" ] || fail "docs/install.md has no package facts block"
    extracted=$(mktemp -d "${TMPDIR:-/tmp}/rsakit-deb-facts.XXXXXX")
    dpkg-deb -x "$deb" "$extracted"
    depends=$(dpkg-deb -f "$deb" Depends | sed -E 's/ \([^)]*\)//g')
    recommends=$(dpkg-deb -f "$deb" Recommends | sed -E 's/ \([^)]*\)//g')
    binary_mb=$(stat -c %s "$extracted/usr/bin/rsakit" | awk '{ printf "%.1f", $1 / 1e6 }')
    module_mb=$(stat -c %s "$extracted/usr/lib/pkcs11/librsakit-pkcs11.so" | awk '{ printf "%.1f", $1 / 1e6 }')
    rm -rf "$extracted"
    want="- Depends: $depends
- Recommends: $recommends
- Sizes, stripped: \`rsakit\` $binary_mb MB, \`librsakit-pkcs11.so\` $module_mb MB"
    local ok=1
    grep -qxF -- "- Depends: $depends" <<<"$facts" || ok=0
    grep -qxF -- "- Recommends: $recommends" <<<"$facts" || ok=0
    local stated_binary stated_module
    stated_binary=$(sed -n 's/^- Sizes, stripped: `rsakit` \([0-9.]*\) MB.*/\1/p' <<<"$facts")
    stated_module=$(sed -n 's/.*`librsakit-pkcs11.so` \([0-9.]*\) MB$/\1/p' <<<"$facts")
    awk -v a="$stated_binary" -v b="$binary_mb" -v c="$stated_module" -v d="$module_mb" \
        'BEGIN { exit !(a > 0 && c > 0 && a / b < 1.1 && b / a < 1.1 && c / d < 1.1 && d / c < 1.1) }' || ok=0
    if [ "$ok" -eq 0 ]; then
        echo "test-deb: docs/install.md's package facts differ from the package; they should read:" >&2
        echo "$want" >&2
        fail "docs/install.md's package facts"
    fi
    echo "test-deb: docs/install.md's package facts match the package (rsakit $binary_mb MB, module $module_mb MB)"
}
readme_facts

files=$(dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -n 's|^\./|/|p' | grep -v '/$')
count=$(wc -l <<<"$files")

if [ "$system" -eq 0 ]; then
    scratch=$(mktemp -d "${TMPDIR:-/tmp}/rsakit-deb-root.XXXXXX")
    trap 'rm -rf "$scratch"' EXIT
    admin="$scratch/admin"
    mkdir -p "$scratch/root" "$admin/info" "$admin/updates" "$admin/triggers"
    : > "$admin/status"
    dpkg=(dpkg --admindir="$admin" --instdir="$scratch/root" --force-not-root --force-depends --force-script-chrootless --log=/dev/null)
    # (dpkg warns that the scratch database lacks the dependencies: shown only on failure.)
    "${dpkg[@]}" -i "$deb" >/dev/null 2>"$scratch/dpkg.log" || { cat "$scratch/dpkg.log" >&2; fail "dpkg -i"; }
    [ "$("${dpkg[@]}" -L rsakit | grep -c -v '/$' || true)" -ge "$count" ] || fail "dpkg -L lists fewer files than the package has"
    check_installed "$scratch/root"
    "${dpkg[@]}" --purge rsakit >/dev/null
    left=$(cd "$scratch/root" && find . -mindepth 1 \( -type f -o -type l \) | head -n 5)
    [ -z "$left" ] || fail "files left after dpkg --purge: $left"
    echo "test-deb: $(basename "$deb"): installed into a scratch root ($count files), used, purged: nothing left"
else
    [ "$(id -u)" -eq 0 ] || fail "--system needs root"
    if dpkg -s rsakit >/dev/null 2>&1; then fail "rsakit is already installed on this machine; refusing to replace it"; fi
    dpkg -i "$deb" >/dev/null
    check_installed ""
    MANPAGER=cat MANWIDTH=80 man rsakit 2>/dev/null | grep -q "RSA encryption" || fail "man rsakit"
    dpkg --purge rsakit >/dev/null
    while read -r f; do
        [ ! -e "$f" ] && [ ! -L "$f" ] || fail "$f is still there after dpkg --purge"
    done <<<"$files"
    ! dpkg -s rsakit >/dev/null 2>&1 || fail "dpkg still knows rsakit"
    echo "test-deb: $(basename "$deb"): dpkg -i, rsakit --version, man rsakit, dpkg --purge on this machine: nothing left ($count files)"
fi
