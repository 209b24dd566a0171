#!/usr/bin/env python3
"""Write the regression inputs under Tests/RSAKitTests/Fixtures/fuzz/ that are made rather than
copied from a fuzzer artifact (see the README there). Deterministic: the same bytes every run.
Usage: python3 Fuzz/make-fixtures.py"""
import hashlib, os, re, subprocess

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
out = os.path.join(root, "Tests", "RSAKitTests", "Fixtures", "fuzz")
key = open(os.path.join(out, "fuzz-key.pem"), "rb").read()
text = subprocess.run(["openssl", "rsa", "-noout", "-text"], input=key, capture_output=True, check=True).stdout.decode()
def field(name):
    m = re.search(name + r":\s*\n((?:\s+[0-9a-f:]+\n)+)", text)
    return int(m.group(1).replace(":", "").replace(" ", "").replace("\n", ""), 16)
n, e = field("modulus"), 65537
k = (n.bit_length() + 7) // 8
spki = subprocess.run(["openssl", "pkey", "-pubout", "-outform", "DER"], input=key, capture_output=True, check=True).stdout
mid = bytes(range(16))
def block(frame, index):
    ps = bytes((index * 31 + i * 7) % 255 + 1 for i in range(k - 3 - len(frame)))
    return pow(int.from_bytes(b"\x00\x02" + ps + b"\x00" + frame, "big"), e, n).to_bytes(k, "big")
payload = k - 28
header = bytes([0x89]) + b"RSAKIT\n" + bytes([1, 1, k >> 8, k & 0xFF]) + hashlib.sha256(spki).digest() + mid
# Block 0: a full payload, not final. Block 1: final, with an empty payload (encrypt never writes this).
body = block(mid[:8] + (0).to_bytes(8, "big") + b"\x00" + b"p" * payload, 0)
body += block(mid[:8] + (1).to_bytes(8, "big") + b"\x01", 1)
# FuzzContainer input: mode byte 0x00 (raw container), then the container.
open(os.path.join(out, "FuzzContainer", "empty-final-block-after-full"), "wb").write(b"\x00" + header + body)

# FuzzPKCS12: a PKCS#12 file (no MAC, nothing encrypted) holding the fixed key and a self-signed
# certificate whose keyUsage `critical` BOOLEAN is 0x01, not DER's 0xFF (X.690 §11.1), signed
# over those bytes. Readers accept it; the re-export rewrote it as 0xFF, breaking the signature.
def tlv(tag, body):
    n = len(body)
    length = bytes([n]) if n < 0x80 else bytes([0x80 | ((n.bit_length() + 7) // 8)]) + n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag]) + length + body
def oid(dotted):
    parts = [int(p) for p in dotted.split(".")]
    body = bytes([40 * parts[0] + parts[1]])
    for p in parts[2:]:
        chunk = [p & 0x7F]
        while p > 0x7F:
            p >>= 7
            chunk.insert(0, 0x80 | (p & 0x7F))
        body += bytes(chunk)
    return tlv(0x06, body)
algorithm = tlv(0x30, oid("1.2.840.113549.1.1.11") + b"\x05\x00")
name = tlv(0x30, tlv(0x31, tlv(0x30, oid("2.5.4.3") + tlv(0x0C, b"fuzz boolean 01"))))
validity = tlv(0x30, tlv(0x17, b"260101000000Z") + tlv(0x18, b"20991231235959Z"))
key_usage = tlv(0x30, oid("2.5.29.15") + b"\x01\x01\x01" + tlv(0x04, b"\x03\x02\x05\xa0"))
tbs = tlv(0x30, tlv(0xA0, b"\x02\x01\x02") + b"\x02\x01\x01" + algorithm + name + validity + name + spki
          + tlv(0xA3, tlv(0x30, key_usage)))
keyfile = os.path.join(out, "fuzz-key.pem")
signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", keyfile], input=tbs, capture_output=True, check=True).stdout
certificate = tlv(0x30, tbs + algorithm + tlv(0x03, b"\x00" + signature))
pem = subprocess.run(["openssl", "x509", "-inform", "DER"], input=certificate, capture_output=True, check=True).stdout
p12 = subprocess.run(["openssl", "pkcs12", "-export", "-inkey", keyfile, "-in", "/dev/stdin", "-passout", "pass:fuzz",
                      "-nomac", "-certpbe", "NONE", "-keypbe", "NONE"], input=pem, capture_output=True, check=True).stdout
assert certificate in p12, "openssl pkcs12 kept the certificate's bytes"
os.makedirs(os.path.join(out, "FuzzPKCS12"), exist_ok=True)
open(os.path.join(out, "FuzzPKCS12", "boolean-true-01"), "wb").write(p12)
