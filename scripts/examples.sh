#!/usr/bin/env bash
# Build and run Examples/ (issue 16's proof): a separate Swift 6 package that depends on
# RSAKit by path and does the six steps of an app. Needs what README.md says: the Swift
# toolchain, the apt packages of scripts/install-deps.sh, and openssl (for step 6's key).
# Takes about 1-2 minutes (a debug build of RSAKit inside Examples/.build, then the run).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/rsakit-examples.XXXXXX")
server_pid=
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"' EXIT
export XDG_DATA_HOME="$work/xdg"   # the per-application store location, kept inside $work
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$work/genpkey.pem" 2>/dev/null
# Clang's module cache does not notice headers added to an umbrella folder (a C shim header
# new since the last build): start it afresh, a few seconds.
rm -rf Examples/.build/*/debug/ModuleCache
swift build --package-path Examples -Xswiftc -warnings-as-errors
"$(swift build --package-path Examples --show-bin-path)/SixSteps" "$work" "$work/genpkey.pem"

# ServerFlow (issue 28) needs a TLS server that asks for a client certificate: a throw-away
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
openssl s_server -accept 127.0.0.1:0 -cert "$pki/server.pem" -key "$pki/server.key" -CAfile "$pki/root.pem" \
    -Verify 2 -verify_return_error -www < /dev/null > "$pki/s_server.log" 2>&1 &
server_pid=$!
port=
for _ in $(seq 1 100); do
    port=$(sed -n 's/^ACCEPT 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$pki/s_server.log")
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { echo "examples: openssl s_server did not start:" >&2; cat "$pki/s_server.log" >&2; exit 1; }
"$(swift build --package-path Examples --show-bin-path)/ServerFlow" "$work" "$port" "$pki/server.pem" "$pki/client.p12" example
