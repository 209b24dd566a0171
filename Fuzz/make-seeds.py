#!/usr/bin/env python3
"""Write the seed corpora of the fuzz harnesses into Fuzz/Corpus/<Target>/ (not committed).

Sources: keys made here by openssl in every format rsakit reads (and some it refuses),
the keys of the Wycheproof vectors ($RSAKIT_VECTORS or shared/vectors beside the package),
containers, armor, item files and argv lists built for the fixed 512-bit fuzz key, and every
regression input under Tests/RSAKitTests/Fixtures/fuzz/<Target>/.
Usage: make-seeds.py CORPUS_DIR
"""
import base64, glob, hashlib, json, os, re, subprocess, sys, tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "Fuzz", "Corpus")
seeds = {t: {} for t in ["FuzzDER", "FuzzPEM", "FuzzKeyFile", "FuzzContainer", "FuzzStoreItem", "FuzzArmor", "FuzzCLIArguments"]}

def add(target, data):
    if isinstance(data, str):
        data = data.encode()
    seeds[target][hashlib.sha1(data).hexdigest()] = data

def openssl(*args, stdin=None):
    return subprocess.run(["openssl", *args], input=stdin, capture_output=True, check=True).stdout

def pem_to_der(pem):
    body = b"".join(l for l in pem.splitlines() if l and not l.startswith(b"-----") and b":" not in l)
    return base64.b64decode(body)

# --- keys made by openssl, every format -------------------------------------------------
tmp = tempfile.mkdtemp()
keys_pem = []
fuzz_key = open(os.path.join(root, "Fuzz", "Sources", "FuzzSupport", "FuzzSupport.swift")).read()
fuzz_key = re.search(r"-----BEGIN PRIVATE KEY-----.*?-----END PRIVATE KEY-----\n", fuzz_key, re.S).group(0).encode()
keys_pem.append(fuzz_key)
for bits in (512, 1024):
    keys_pem.append(openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", f"rsa_keygen_bits:{bits}"))
for pem in keys_pem:
    variants = {
        "pkcs8": pem,
        "pkcs1": openssl("rsa", "-traditional", stdin=pem),
        "spki": openssl("pkey", "-pubout", stdin=pem),
        "pkcs1pub": openssl("rsa", "-RSAPublicKey_out", stdin=pem),
        "enc-pkcs8": openssl("pkcs8", "-topk8", "-v2", "aes-128-cbc", "-passout", "pass:fuzz", stdin=pem),
        "enc-pkcs1": openssl("rsa", "-traditional", "-aes128", "-passout", "pass:fuzz", stdin=pem),
    }
    for name, text in variants.items():
        add("FuzzPEM", text)
        add("FuzzKeyFile", text)
        add("FuzzKeyFile", text.replace(b"\n", b"\r\n"))
        if not name.startswith("enc-pkcs1"):
            der = pem_to_der(text)
            add("FuzzDER", der)
            add("FuzzKeyFile", der)
    add("FuzzKeyFile", variants["spki"] + variants["pkcs8"])  # two blocks
cert = subprocess.run(["openssl", "req", "-x509", "-key", "/dev/stdin", "-subj", "/CN=fuzz", "-days", "1"],
                      input=keys_pem[0], capture_output=True).stdout
if cert:
    add("FuzzPEM", cert); add("FuzzKeyFile", cert); add("FuzzDER", pem_to_der(cert)); add("FuzzKeyFile", pem_to_der(cert))
ec = openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256")
add("FuzzKeyFile", ec); add("FuzzDER", pem_to_der(ec))

# --- Wycheproof keys -------------------------------------------------------------------------
vectors = os.environ.get("RSAKIT_VECTORS") or os.path.join(os.path.dirname(root), "shared", "vectors", "wycheproof")
folder = vectors if glob.glob(os.path.join(vectors, "*.json")) else os.path.join(vectors, "testvectors_v1")
wycheproof = 0
for path in sorted(glob.glob(os.path.join(folder, "rsa_*.json"))):
    try:
        groups = json.load(open(path)).get("testGroups", [])
    except Exception:
        continue
    for group in groups[:2]:
        for field in ("privateKeyPkcs8", "publicKeyDer", "publicKeyAsn"):
            if isinstance(group.get(field), str):
                der = bytes.fromhex(group[field])
                add("FuzzDER", der); add("FuzzKeyFile", der); wycheproof += 1
        for field in ("privateKeyPem", "publicKeyPem"):
            if isinstance(group.get(field), str):
                add("FuzzPEM", group[field]); add("FuzzKeyFile", group[field]); wycheproof += 1

# --- DER odds and ends -----------------------------------------------------------------------
for der in [b"\x30\x00", b"\x02\x01\x00", b"\x02\x02\x00\x80", b"\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x01\x01",
            b"\x05\x00", b"\x03\x02\x00\xff", b"\x04\x00", b"\x30\x81\x80" + b"\x05\x00" * 64, b"\x30\x06\x30\x04\x30\x02\x30\x00"]:
    add("FuzzDER", der)

# --- the fixed key's numbers, for containers ---------------------------------------------------
text = openssl("rsa", "-noout", "-text", stdin=fuzz_key).decode()
def field(name):
    m = re.search(name + r":\s*\n((?:\s+[0-9a-f:]+\n)+)", text)
    return int(m.group(1).replace(":", "").replace(" ", "").replace("\n", ""), 16)
n = field("modulus"); e = 65537
k = (n.bit_length() + 7) // 8
spki = pem_to_der(openssl("pkey", "-pubout", stdin=fuzz_key))
fingerprint = hashlib.sha256(spki).digest()
magic = bytes([0x89]) + b"RSAKIT\n"
payload = k - 11 - 17

def rsaep(em):
    return pow(int.from_bytes(em, "big"), e, n).to_bytes(k, "big")

def pkcs1(frame, seed):
    ps = bytes((seed * 31 + i * 7) % 255 + 1 for i in range(k - 3 - len(frame)))
    return rsaep(b"\x00\x02" + ps + b"\x00" + frame)

def container(message, mid):
    out = magic + bytes([1, 1, k >> 8, k & 0xFF]) + fingerprint + mid
    chunks = [message[i:i + payload] for i in range(0, len(message), payload)] or [b""]
    for i, chunk in enumerate(chunks):
        frame = mid[:8] + i.to_bytes(8, "big") + bytes([1 if i == len(chunks) - 1 else 0]) + chunk
        out += pkcs1(frame, i)
    return out

for size in (0, 1, payload, payload + 1, 3 * payload):
    mid = hashlib.sha256(b"id%d" % size).digest()[:16]
    message = bytes(range(size % 256))[:size] if size < 256 else b"x" * size
    raw = container(message, mid)
    add("FuzzContainer", b"\x00" + raw)
    add("FuzzArmor", b"-----BEGIN RSAKIT MESSAGE-----\n" +
        b"".join(base64.b64encode(raw[i:i + 48]) + b"\n" for i in range(0, len(raw), 48)) + b"-----END RSAKIT MESSAGE-----\n")
    # Described messages (see FuzzContainer.swift): mode 1, id, block count, per block kind 0x0F
    # (right id, index and flags, full payload) or 0x07 with a payload length and bytes.
    blocks = max(1, -(-size // payload))
    desc = b"\x01" + mid + bytes([blocks])
    for i in range(blocks):
        rest = size - i * payload
        if rest >= payload and i < blocks - 1:
            desc += b"\x0f" + b"p" * payload
        else:
            desc += b"\x07" + bytes([rest]) + b"q" * rest
    add("FuzzContainer", desc)
add("FuzzContainer", b"\x01" + b"\x00" * 16 + b"\x01\x80" + b"\x00\x02" + b"\x01" * (k - 3) + b"\x00")
add("FuzzArmor", b"")
add("FuzzArmor", b"Subject: hello\n\n-----BEGIN RSAKIT MESSAGE-----\r\nAAEC\r\n\r\n-----END RSAKIT MESSAGE-----\r\n")

# --- store item files ------------------------------------------------------------------------------
for klass, pem in (("private", keys_pem[0]), ("public", openssl("pkey", "-pubout", stdin=keys_pem[0]))):
    meta = {"applicationTag": "com.example.fuzz", "creationDate": "2025-01-31T12:00:00.000Z", "fingerprint": fingerprint.hex(),
            "format": 1, "itemID": "0123456789abcdef0123456789abcdef", "keyClass": klass, "keySizeInBits": 512}
    add("FuzzStoreItem", b"rsakit key item 1\n" + json.dumps(meta, sort_keys=True, separators=(",", ":")).encode() + b"\n" + pem)
    meta["label"] = "caf\u00e9 \"quoted\" / \\ \n"
    add("FuzzStoreItem", b"rsakit key item 1\n" + json.dumps(meta, sort_keys=True).encode() + b"\n" + pem)
add("FuzzStoreItem", "2025-01-31T12:00:00.000Z")
add("FuzzStoreItem", "1969-12-31T23:59:59.999Z")

# --- argv lists ------------------------------------------------------------------------------------
for argv in (["genpair", "--tag", "t", "--bits", "2048", "--exponent", "0x10001"],
             ["encrypt", "--key", "k.pem", "--in", "-", "--out=o", "--armor"],
             ["encrypt", "--tag", "t", "--raw"],
             ["decrypt", "--key=k.pem", "--", "-x"], ["decrypt", "-h"],
             ["import", "--tag", "t", "--label", "l", "--replace", "file.pem"],
             ["export", "--tag", "t", "--private", "--format", "pkcs8"],
             ["list", "--json", "--store", "/tmp/s", "--allow-insecure-store"], ["show", "--tag", "t", "--json"],
             ["delete", "--tag", "t"]):
    add("FuzzCLIArguments", "\0".join(argv))

# --- regression inputs -------------------------------------------------------------------------------
for target in seeds:
    for path in glob.glob(os.path.join(root, "Tests", "RSAKitTests", "Fixtures", "fuzz", target, "*")):
        if os.path.isfile(path) and not path.endswith(".md"):
            add(target, open(path, "rb").read())

for target, items in seeds.items():
    folder = os.path.join(corpus, target)
    os.makedirs(folder, exist_ok=True)
    for name, data in items.items():
        with open(os.path.join(folder, "seed-" + name), "wb") as f:
            f.write(data)
print("seeds: " + ", ".join(f"{t} {len(v)}" for t, v in seeds.items()) + f" (Wycheproof keys: {wycheproof})")
