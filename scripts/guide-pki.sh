# Sourced by the hidden setup of the guides that need certificates (docs/certificates.md,
# docs/mutual-tls.md): makes, in the current folder, a small private PKI with openssl ca (a
# root, an intermediate whose database makes CRLs and answers OCSP, a server certificate for
# localhost and 127.0.0.1, client certificates for alice and bob, an expired certificate),
# and defines free_port and wait_accept for the servers a page starts. Not a reader's command:
# the guides take these files for granted, as a reader would have them from their own CA.
cat > ca.cnf <<'CNF'
[ca]
default_ca = ica
[ica]
database = ica/index.txt
new_certs_dir = ica
serial = ica/serial
crlnumber = ica/crlnumber
default_md = sha256
default_crl_days = 30
policy = any
unique_subject = no
[any]
organizationName = optional
commonName = supplied
[v3_ca]
basicConstraints = critical,CA:true
keyUsage = critical,keyCertSign,cRLSign
[server]
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost,IP:127.0.0.1
[client]
keyUsage = critical,digitalSignature
extendedKeyUsage = clientAuth
[ocsp]
keyUsage = critical,digitalSignature
extendedKeyUsage = OCSPSigning
CNF
mkdir -p ica && : > ica/index.txt && echo 1000 > ica/serial && echo 01 > ica/crlnumber
# sign NAME SUBJECT EXTENSIONS NOT-BEFORE NOT-AFTER [ISSUER]: NAME.key and NAME.pem.
sign() {
    local issuer=("-selfsign" "-keyfile" "$1.key")
    [ $# -lt 6 ] || issuer=("-cert" "$6.pem" "-keyfile" "$6.key")
    openssl req -new -newkey rsa:2048 -nodes -keyout "$1.key" -subj "$2" -out "$1.csr" 2>/dev/null
    openssl ca -batch -config ca.cnf "${issuer[@]}" -extensions "$3" \
        -startdate "$4" -enddate "$5" -in "$1.csr" -out "$1.pem" 2>/dev/null
    rm "$1.csr"
}
sign root "/CN=Example Root CA" v3_ca 20190101000000Z 20390101000000Z
sign intermediate "/CN=Example Intermediate" v3_ca 20190101000000Z 20390101000000Z root
sign localhost "/CN=localhost" server 20260101000000Z 20360101000000Z intermediate
sign alice "/O=Example/CN=alice" client 20260101000000Z 20360101000000Z intermediate
sign bob "/O=Example/CN=bob" client 20260101000000Z 20360101000000Z intermediate
sign expired "/CN=expired.example.com" server 20200101000000Z 20210101000000Z intermediate
sign responder "/CN=Example OCSP Responder" ocsp 20260101000000Z 20360101000000Z intermediate
cat intermediate.pem root.pem > ca-chain.pem
cat localhost.pem intermediate.pem > localhost-chain.pem
unset -f sign

# free_port: a TCP port on 127.0.0.1 that nothing listens on now.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# wait_accept LOG: wait (up to 20 s) until the openssl server logging to LOG (s_server, ocsp)
# accepts connections; it prints ACCEPT then. (No probe connection: openssl ocsp serves one
# client at a time, and a probe that sends nothing would hold it.)
wait_accept() {
    local i
    for i in $(seq 200); do
        grep -q ACCEPT "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "no ACCEPT in $1:" >&2
    cat "$1" >&2
    return 1
}
