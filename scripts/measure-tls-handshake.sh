#!/usr/bin/env bash
# One mutual-TLS handshake, rsakit vs openssl s_client, side by side on 127.0.0.1.
#
#   scripts/measure-tls-handshake.sh [RUNS]      (default 20; RSAKIT_BIN=path to pick the binary)
#
# Makes a CA, a server certificate (localhost, 127.0.0.1) and a client identity with openssl,
# imports the client key and certificate into a temporary rsakit store, starts
#   openssl s_server -accept 127.0.0.1:PORT -Verify 5 -verify_return_error -CAfile ca.pem
#     -cert srv.pem -key srv.key -www
# and times, alternately, RUNS whole client processes of each kind, each doing TCP connect,
# the TLS 1.3 handshake with the client certificate (RSA-2048, RSA-PSS-SHA256 CertificateVerify),
# one "GET /" and the server's close:
#   rsakit tls connect 127.0.0.1:PORT --identity alice --anchor ca.pem --anchors-only --tls1.3
#       (the key in the store; the signature made by rsakit's engine through GnuTLS callbacks)
#   openssl s_client -connect 127.0.0.1:PORT -cert alice.pem -key alice.key -CAfile ca.pem
#       -no-CApath -no-CAstore -verify_return_error -tls1_3 -quiet
#       (the same key, in a file)
# and prints the median and the spread (min-max) of each in milliseconds, and the ratio.
# Process start-up is included for both (rsakit also opens its store and reads the identity).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-20}"
bin="${RSAKIT_BIN:-}"
if [ -z "$bin" ]; then
    if [ -x .build/release/rsakit ]; then bin=.build/release/rsakit; else bin=.build/debug/rsakit; fi
fi
[ -x "$bin" ] || { echo "no rsakit binary: swift build -c release --product rsakit" >&2; exit 1; }
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"

work="$(mktemp -d)"
server_pid=""
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    [ -n "$server_pid" ] && wait "$server_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

o() { openssl "$@" >/dev/null 2>&1; }
o req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -subj "/CN=Measure Root" -days 2 \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign"
o req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj "/CN=localhost"
printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n' > srv.ext
o x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -set_serial 2 -days 2 -extfile srv.ext -out srv.pem
o req -newkey rsa:2048 -nodes -keyout alice.key -out alice.csr -subj "/CN=alice"
printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n' > alice.ext
o x509 -req -in alice.csr -CA ca.pem -CAkey ca.key -set_serial 3 -days 2 -extfile alice.ext -out alice.pem

export RSAKIT_STORE="$work/store"
"$bin" import --tag alice alice.key >/dev/null
"$bin" cert add alice.pem --label alice >/dev/null

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
openssl s_server -accept "127.0.0.1:$port" -Verify 5 -verify_return_error -CAfile ca.pem \
    -cert srv.pem -key srv.key -www </dev/null >server.log 2>&1 &
server_pid=$!
for _ in $(seq 1 250); do grep -q ACCEPT server.log 2>/dev/null && break; sleep 0.02; done
grep -q ACCEPT server.log || { echo "s_server did not start" >&2; cat server.log >&2; exit 1; }

request() { printf 'GET / HTTP/1.0\r\n\r\n'; }
run_rsakit() {
    request | timeout 30 "$bin" tls connect "127.0.0.1:$port" --identity alice --anchor ca.pem --anchors-only --tls1.3 --timeout 20 >out.txt
}
run_openssl() {
    request | timeout 30 openssl s_client -connect "127.0.0.1:$port" -cert alice.pem -key alice.key -CAfile ca.pem \
        -no-CApath -no-CAstore -verify_return_error -tls1_3 -quiet >out.txt 2>/dev/null
}
check() { grep -q "Subject: CN=alice" out.txt || { echo "$1: the server did not see the client certificate" >&2; exit 1; }; }

now_ns() { date +%s%N; }
# Warm-up (page cache, store), checked.
run_rsakit; check rsakit
run_openssl; check openssl
: >rsakit.ms; : >openssl.ms
for _ in $(seq 1 "$runs"); do
    t0=$(now_ns); run_rsakit; t1=$(now_ns); check rsakit
    echo $(( (t1 - t0) / 1000 )) >>rsakit.ms
    t0=$(now_ns); run_openssl; t1=$(now_ns); check openssl
    echo $(( (t1 - t0) / 1000 )) >>openssl.ms
done
stats() {  # median min max in ms with one decimal, from microseconds
    sort -n "$1" | awk '{ v[NR] = $1 } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%.1f %.1f %.1f", m / 1000, v[1] / 1000, v[NR] / 1000 }'
}
read -r rm rmin rmax <<<"$(stats rsakit.ms)"
read -r om omin omax <<<"$(stats openssl.ms)"
echo "tls-handshake rsakit   runs=$runs median_ms=$rm min_ms=$rmin max_ms=$rmax ($bin)"
echo "tls-handshake openssl  runs=$runs median_ms=$om min_ms=$omin max_ms=$omax ($(openssl version | cut -d' ' -f1-2))"
awk -v a="$rm" -v b="$om" 'BEGIN { printf "tls-handshake ratio rsakit/openssl=%.2f\n", a / b }'
