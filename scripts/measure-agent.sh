#!/usr/bin/env bash
# What the agent saves, side by side in one run on 127.0.0.1:
#
#   scripts/measure-agent.sh [RUNS]      (default 20; RSAKIT_BIN=path to pick the binary)
#
# Three stores hold the same client identity and one generic password: unprotected, protected
# (Argon2id moderate) unlocked by a running `rsakit agent`, and protected with the passphrase
# given to every command (RSAKIT_STORE_PASSIN). For each, RUNS whole processes of
#   rsakit tls connect 127.0.0.1:PORT --identity alice --anchor ca.pem --anchors-only --tls1.3
#       (against openssl s_server -Verify 5, one "GET /")
#   rsakit password find --service svc --account a --value
# are timed alternately; the script prints median and min-max in milliseconds, and the ratios
# agent/unprotected. Goals: tls connect through the agent <= 1.2x unprotected; password find
# --value through the agent <= 20 ms.
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
    RSAKIT_AGENT_SOCK="$work/run/agent.sock" "$bin" agent stop >/dev/null 2>&1 || true
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

export RSAKIT_AGENT_SOCK="$work/run/agent.sock" PASS=measure-passphrase
unset RSAKIT_STORE_PASSIN RSAKIT_PASSIN
for store in plain agent passphrase; do
    RSAKIT_STORE="$work/$store" "$bin" import --tag alice alice.key >/dev/null
    RSAKIT_STORE="$work/$store" "$bin" cert add alice.pem --label alice >/dev/null
    printf 'pw-value' | RSAKIT_STORE="$work/$store" "$bin" password add --service svc --account a >/dev/null
done
for store in agent passphrase; do
    RSAKIT_STORE="$work/$store" "$bin" store protect --store-passin env:PASS >/dev/null
done
RSAKIT_STORE="$work/agent" "$bin" agent start --store-passin env:PASS >/dev/null

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
openssl s_server -accept "127.0.0.1:$port" -Verify 5 -verify_return_error -CAfile ca.pem \
    -cert srv.pem -key srv.key -www </dev/null >server.log 2>&1 &
server_pid=$!
for _ in $(seq 1 250); do grep -q ACCEPT server.log 2>/dev/null && break; sleep 0.02; done
grep -q ACCEPT server.log || { echo "s_server did not start" >&2; cat server.log >&2; exit 1; }

env_for() { case "$1" in passphrase) echo "RSAKIT_STORE_PASSIN=env:PASS";; *) echo "RSAKIT_STORE_PASSIN=";; esac; }
tls() {
    printf 'GET / HTTP/1.0\r\n\r\n' | env "$(env_for "$1")" RSAKIT_STORE="$work/$1" timeout 30 "$bin" tls connect "127.0.0.1:$port" \
        --identity alice --anchor ca.pem --anchors-only --tls1.3 --timeout 20 >out.txt 2>/dev/null
    grep -q "Subject: CN=alice" out.txt || { echo "tls connect ($1): the server did not see the client certificate" >&2; exit 1; }
}
find_value() {
    [ "$(env "$(env_for "$1")" RSAKIT_STORE="$work/$1" "$bin" password find --service svc --account a --value </dev/null)" = pw-value ] \
        || { echo "password find ($1) failed" >&2; exit 1; }
}
now_ns() { date +%s%N; }
for store in plain agent passphrase; do tls "$store"; find_value "$store"; : >"tls-$store.us"; : >"find-$store.us"; done
for _ in $(seq 1 "$runs"); do
    for store in plain agent passphrase; do
        t0=$(now_ns); tls "$store"; t1=$(now_ns); echo $(( (t1 - t0) / 1000 )) >>"tls-$store.us"
        t0=$(now_ns); find_value "$store"; t1=$(now_ns); echo $(( (t1 - t0) / 1000 )) >>"find-$store.us"
    done
done
stats() {
    sort -n "$1" | awk '{ v[NR] = $1 } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%.1f %.1f %.1f", m / 1000, v[1] / 1000, v[NR] / 1000 }'
}
for what in tls find; do
    for store in plain agent passphrase; do
        read -r m lo hi <<<"$(stats "$what-$store.us")"
        printf '%-5s %-11s runs=%s median_ms=%s min_ms=%s max_ms=%s\n' "$what" "$store" "$runs" "$m" "$lo" "$hi"
        eval "${what}_${store}=$m"
    done
done
awk -v a="$tls_agent" -v b="$tls_plain" -v c="$find_agent" 'BEGIN {
    printf "tls connect agent/unprotected=%.2f (goal <= 1.2); password find --value through the agent %.1f ms (goal <= 20)\n", a / b, c }'
echo "binary: $bin"
