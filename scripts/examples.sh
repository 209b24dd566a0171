#!/usr/bin/env bash
# Build and run Examples/: a separate Swift 6 package that does the six steps of an app and a
# server flow, built as a dependent package builds RSAKit: by version, from a tagged clone
# (below). Needs what README.md says: the Swift toolchain, the apt packages of
# scripts/install-deps.sh, and openssl. Takes about 2-4 minutes (a cold debug build of RSAKit
# as a dependency, then the runs).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/rsakit-examples.XXXXXX")
server_pids=()
trap 'for pid in "${server_pids[@]}"; do kill "$pid" 2>/dev/null; done; rm -rf "$work"' EXIT
export XDG_DATA_HOME="$work/xdg"   # the per-application store location, kept inside $work
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$work/genpkey.pem" 2>/dev/null
# RSAKit as a dependent package gets it: by version, from a file:// URL. SwiftPM caches
# repositories by URL, so the clone is at a new path on every run; it holds this tree as it
# is now (HEAD plus uncommitted changes and new files), committed and tagged with the version
# in RSAKitCommandLine.swift. SwiftPM refuses a versioned dependency with unsafe build flags,
# so this build fails if a library target takes one again.
version=$(sed -n 's/^ *static let version = "\(.*\)"$/\1/p' Sources/_RSAKitCLI/Commands/RSAKitCommandLine.swift)
clone="$work/rsakit"
git clone -q . "$clone"
git diff HEAD --binary | (cd "$clone" && git apply --allow-empty --binary)
git ls-files --others --exclude-standard -z | xargs -0 -r cp --parents -t "$clone"
git -C "$clone" add -A
git -C "$clone" -c user.name=examples -c user.email=examples@localhost commit -q --allow-empty -m "tree under test"
git -C "$clone" tag -f "$version" >/dev/null
consumer="$work/consumer"
mkdir -p "$consumer"
cp -R Examples/Package.swift Examples/Sources "$consumer/"
export RSAKIT_EXAMPLES_URL="file://$clone" RSAKIT_EXAMPLES_VERSION="$version"
swift build --package-path "$consumer" -Xswiftc -warnings-as-errors
bin=$(swift build --package-path "$consumer" --show-bin-path)
"$bin/SixSteps" "$work" "$work/genpkey.pem"

# Each layer product on its own. The engine's program links GMP and Nettle only: a package
# that needs RSAKitCore installs neither GnuTLS nor libcurl nor libsodium.
"$bin/LayerCore"
if ldd "$bin/LayerCore" | grep -E 'libgnutls|libcurl|libsodium|libp11-kit'; then
    echo "examples: LayerCore (RSAKitCore only) links a library of a higher layer" >&2
    exit 1
fi
openssl req -x509 -newkey rsa:2048 -keyout "$work/layer.key" -passout pass:layers -out "$work/layer.pem" -days 2 \
    -subj "/CN=Layer Example" 2>/dev/null
"$bin/LayerPKI" "$work/layer.pem" "$work/layer.key"
"$bin/LayerKeychain" "$work"
"$bin/LayerTLS"

# ServerFlow needs a TLS server that asks for a client certificate: a throw-away
# PKI made by openssl (a root, a server certificate for 127.0.0.1, a client identity in a
# PKCS#12 file) and `openssl s_server` on 127.0.0.1, on a port the kernel picks.
pki="$work/pki"
mkdir -p "$pki"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$pki/root.key" -out "$pki/root.pem" -days 2 \
    -subj "/CN=ServerFlow Example Root" -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign" 2>/dev/null
for role in server client; do
    openssl req -newkey rsa:2048 -nodes -keyout "$pki/$role.key" -out "$pki/$role.csr" -subj "/CN=ServerFlow $role" 2>/dev/null
done
printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n' > "$pki/server.ext"
printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n' > "$pki/client.ext"
serial=1
for role in server client; do
    openssl x509 -req -in "$pki/$role.csr" -CA "$pki/root.pem" -CAkey "$pki/root.key" -set_serial $serial -days 2 \
        -sha256 -extfile "$pki/$role.ext" -out "$pki/$role.pem" 2>/dev/null
    serial=$((serial + 1))
done
openssl pkcs12 -export -inkey "$pki/client.key" -in "$pki/client.pem" -certfile "$pki/root.pem" \
    -passout pass:example -out "$pki/client.p12"
# start_server LOG ARGS...: openssl s_server on 127.0.0.1, on a port the kernel picks, which
# it prints as "ACCEPT 127.0.0.1:PORT"; sets $port.
start_server() {
    local log=$1
    shift
    openssl s_server -accept 127.0.0.1:0 "$@" < /dev/null > "$log" 2>&1 &
    server_pids+=($!)
    port=
    for _ in $(seq 1 100); do
        port=$(sed -n 's/^ACCEPT 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$log")
        [ -n "$port" ] && return 0
        sleep 0.1
    done
    echo "examples: openssl s_server did not start:" >&2
    cat "$log" >&2
    exit 1
}
start_server "$pki/s_server.log" -cert "$pki/server.pem" -key "$pki/server.key" -CAfile "$pki/root.pem" \
    -Verify 2 -verify_return_error -www
"$bin/ServerFlow" "$work" "$port" "$pki/server.pem" "$pki/client.p12" example

# IdentityDownload: the whole client-certificate flow. One s_server -WWW serves the .pfx with
# no client certificate asked; another serves hello.txt only to a client with the identity
# that .pfx holds. Each serves a folder holding nothing else.
mkdir -p "$work/www-pfx" "$work/www-mtls"
cp "$pki/client.p12" "$work/www-pfx/client.pfx"
printf 'hello, client\n' > "$work/www-mtls/hello.txt"
# s_server -WWW serves files from its working directory.
cd "$work/www-pfx"
start_server "$pki/pfx.log" -cert "$pki/server.pem" -key "$pki/server.key" -WWW
pfx_port=$port
cd "$work/www-mtls"
start_server "$pki/mtls.log" -cert "$pki/server.pem" -key "$pki/server.key" -CAfile "$pki/root.pem" -Verify 2 -verify_return_error -WWW
mtls_port=$port
"$bin/IdentityDownload" "$work" "$pfx_port" "$mtls_port" "$pki/root.pem" example
