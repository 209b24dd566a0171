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
