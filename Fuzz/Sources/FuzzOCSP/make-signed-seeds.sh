#!/usr/bin/env bash
# Makes FuzzOCSP's re-signed mode's fixed chain (signed-chain.pem beside this script) and its
# seeds (Fuzz/Corpus/FuzzOCSP/seed-signed-*). The CA and the delegated responder hold the
# fixed 1024-bit fuzz key (FuzzSupport's fuzzPrivateKey1024PEM, read from its source), the key
# the harness signs every mutated tbsResponseData with; the leaf's own key is thrown away.
# Each seed is one flag byte (bit 0: the harness attaches the responder's certificate in
# `certs`) followed by the DER tbsResponseData (RFC 6960 §4.2.1) of a response that
# `openssl ocsp` made. Run once from the repository root; the seeds are kept in the corpus.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
corpus=$root/Fuzz/Corpus/FuzzOCSP
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

sed -n '/^public let fuzzPrivateKey1024PEM = """$/,/^"""$/p' "$root/Fuzz/Sources/FuzzSupport/FuzzSupport.swift" \
    | sed '1d;$d' > key.pem
openssl pkey -in key.pem -noout

cat > ext.cnf <<'EOF'
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[responder]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = OCSPSigning
[leaf]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
authorityInfoAccess = OCSP;URI:http://127.0.0.1:1/ocsp
EOF
openssl req -x509 -new -key key.pem -subj "/CN=FuzzOCSP signing CA" -days 7300 -sha256 -set_serial 1 \
    -extensions ca -config <(printf '[req]\ndistinguished_name=dn\n[dn]\n'; cat ext.cnf) -out ca.pem
openssl req -new -key key.pem -subj "/CN=fuzz signing responder" -out responder.csr
openssl x509 -req -in responder.csr -CA ca.pem -CAkey key.pem -set_serial 2 -days 7300 -sha256 \
    -extfile ext.cnf -extensions responder -out responder.pem
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out leaf-key.pem 2>/dev/null
openssl req -new -key leaf-key.pem -subj "/CN=fuzz signed leaf" -out leaf.csr
openssl x509 -req -in leaf.csr -CA ca.pem -CAkey key.pem -set_serial 0x1234 -days 7300 -sha256 \
    -extfile ext.cnf -extensions leaf -out leaf.pem
cat leaf.pem ca.pem responder.pem > "$here/signed-chain.pem"

openssl ocsp -issuer ca.pem -cert leaf.pem -no_nonce -reqout request.der
openssl ocsp -issuer ca.pem -serial 0x9999 -no_nonce -reqout request-unknown.der
expiry=$(date -u -d '+20 years' +%y%m%d%H%M%SZ)
revoked=$(date -u -d '-1 hour' +%y%m%d%H%M%SZ)
printf 'V\t%s\t\t1234\tunknown\t/CN=fuzz signed leaf\n' "$expiry" > good.idx
printf 'R\t%s\t%s,keyCompromise\t1234\tunknown\t/CN=fuzz signed leaf\n' "$expiry" "$revoked" > revoked.idx
printf 'R\t%s\t%s\t1234\tunknown\t/CN=fuzz signed leaf\n' "$expiry" "$revoked" > revoked-noreason.idx
: > empty.idx
respond() {  # name index request signer-cert extra-flags...
    local name=$1 index=$2 request=$3 signer=$4
    shift 4
    openssl ocsp -index "$index" -CA ca.pem -rsigner "$signer" -rkey key.pem -reqin "$request" \
        -respout "$name.der" -ndays 30 -resp_no_certs "$@" 2>/dev/null
}
respond good-by-ca good.idx request.der ca.pem
respond good-by-ca-keyid good.idx request.der ca.pem -resp_key_id
respond revoked-by-ca revoked.idx request.der ca.pem
respond revoked-by-responder revoked-noreason.idx request.der responder.pem
respond good-by-responder good.idx request.der responder.pem
respond unknown-by-ca empty.idx request.der ca.pem
respond other-certificate-by-ca good.idx request-unknown.der ca.pem

# The tbsResponseData of each: OCSPResponse / [0] / ResponseBytes / OCTET STRING /
# BasicOCSPResponse / first element, with its tag and length.
python3 - "$corpus" <<'EOF'
import sys
def tlv(b, i):
    tag, n = b[i], b[i + 1]; i += 2
    if n & 0x80:
        k = n & 0x7f; n = int.from_bytes(b[i:i + k], 'big'); i += k
    return tag, i, i + n  # content start, end
def first_child(b, start):
    return tlv(b, start)
corpus = sys.argv[1]
for name, flag in [('good-by-ca', 0), ('good-by-ca-keyid', 0), ('revoked-by-ca', 0),
                   ('revoked-by-responder', 1), ('good-by-responder', 1), ('unknown-by-ca', 0),
                   ('other-certificate-by-ca', 0)]:
    b = open(name + '.der', 'rb').read()
    _, s, _ = tlv(b, 0)                 # OCSPResponse
    _, _, e = tlv(b, s)                 # responseStatus
    _, s, _ = tlv(b, e)                 # [0]
    _, s, _ = tlv(b, s)                 # ResponseBytes
    _, _, e = tlv(b, s)                 # responseType
    _, s, _ = tlv(b, e)                 # OCTET STRING
    _, s, _ = tlv(b, s)                 # BasicOCSPResponse
    _, _, e = tlv(b, s)                 # tbsResponseData
    open(f'{corpus}/seed-signed-{name}', 'wb').write(bytes([flag]) + b[s:e])
EOF
ls "$corpus"/seed-signed-*
