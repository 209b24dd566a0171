#!/usr/bin/env python3
"""Write the seed corpora of the fuzz harnesses into Fuzz/Corpus/<Target>/ (the kept corpus,
committed once minimised) and Fuzz/Corpus-local/<Target>/ (git-ignored: seeds made from the
Wycheproof vectors, which stay in shared/ and are never copied into the repository).

Sources: keys made here by openssl in every format rsakit reads (and some it refuses),
the keys of the Wycheproof vectors ($RSAKIT_VECTORS or shared/vectors beside the package),
containers (versions 1 and 2, for the fixed 512- and 1024-bit fuzz keys), armor, item files and
argv lists built for the fixed 512-bit fuzz key, certificates made by openssl (self-signed,
a three-certificate chain, SANs/EKU/key usage, EC and RSA-PSS keys; DER, PEM, bundles) and
PKCS#12 files of them with low iteration counts (PBES2 AES/3DES, -legacy RC2/3DES, no MAC,
unencrypted bags; passphrase "fuzz", the harness's), PKCS#11 sessions for FuzzPKCS11 (searches,
attribute reads, sign, verify and decrypt with each mechanism, login, every C_Initialize
variant), and every
regression input under Tests/RSAKitTests/Fixtures/fuzz/<Target>/.
Usage: make-seeds.py CORPUS_DIR [LOCAL_DIR]   (LOCAL_DIR default: CORPUS_DIR-local)
"""
import base64, glob, hashlib, json, os, re, subprocess, sys, tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "Fuzz", "Corpus")
local_corpus = sys.argv[2] if len(sys.argv) > 2 else corpus.rstrip("/") + "-local"
seeds = {t: {} for t in ["FuzzDER", "FuzzPEM", "FuzzKeyFile", "FuzzContainer", "FuzzStoreItem", "FuzzArmor", "FuzzCLIArguments",
                        "FuzzX509", "FuzzPKCS12", "FuzzAgentWire", "FuzzSSHAgent", "FuzzCRL", "FuzzOCSP", "FuzzPKCS11"]}
# FuzzCRL's seeds (CRLs of its fixed CA, whose key no longer exists) are kept in Fuzz/Corpus/FuzzCRL,
# FuzzOCSP's (responses signed by its fixed CA and responder, keys discarded) in Fuzz/Corpus/FuzzOCSP.

local_seeds = {t: {} for t in seeds}

def add(target, data, local=False):
    if isinstance(data, str):
        data = data.encode()
    (local_seeds if local else seeds)[target][hashlib.sha1(data).hexdigest()] = data

def openssl(*args, stdin=None):
    return subprocess.run(["openssl", *args], input=stdin, capture_output=True, check=True).stdout

def pem_to_der(pem):
    body = b"".join(l for l in pem.splitlines() if l and not l.startswith(b"-----") and b":" not in l)
    return base64.b64decode(body)

def swift_pems(source):
    """The private-key PEMs in Swift source text, as bytes, without the indentation a Swift
    multi-line string strips from its lines."""
    found = re.findall(r"-----BEGIN PRIVATE KEY-----.*?-----END PRIVATE KEY-----\n", source, re.S)
    return ["".join(line.strip() + "\n" for line in pem.splitlines()).encode() for pem in found]

# --- keys made by openssl, every format -------------------------------------------------
tmp = tempfile.mkdtemp()
keys_pem = []
fuzz_key = open(os.path.join(root, "Fuzz", "Sources", "FuzzSupport", "FuzzSupport.swift")).read()
fuzz_key = swift_pems(fuzz_key)[0]
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
                add("FuzzDER", der, local=True); add("FuzzKeyFile", der, local=True); wycheproof += 1
        for field in ("privateKeyPem", "publicKeyPem"):
            if isinstance(group.get(field), str):
                add("FuzzPEM", group[field], local=True); add("FuzzKeyFile", group[field], local=True); wycheproof += 1

# --- DER odds and ends -----------------------------------------------------------------------
for der in [b"\x30\x00", b"\x02\x01\x00", b"\x02\x02\x00\x80", b"\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x01\x01",
            b"\x05\x00", b"\x03\x02\x00\xff", b"\x04\x00", b"\x30\x81\x80" + b"\x05\x00" * 64, b"\x30\x06\x30\x04\x30\x02\x30\x00"]:
    add("FuzzDER", der)

# --- the fixed keys' numbers, for containers ---------------------------------------------------
# FuzzSupport.swift holds two keys: 512 bits (version 1 only; k - 68 < 1 payload byte for
# version 2) and 1024 bits (versions 1 and 2, PKCS#1 v1.5 and OAEP). Mode byte bit 3 picks the
# 1024-bit key, bit 4 a described version 2 message, bits 5-6 its padding (FuzzContainer.swift).
support = open(os.path.join(root, "Fuzz", "Sources", "FuzzSupport", "FuzzSupport.swift")).read()
fuzz_keys = swift_pems(support)
magic = bytes([0x89]) + b"RSAKIT\n"
# (scheme byte, OAEP hash, MGF1 hash, hashlib name, MGF1 hashlib name); index = mode bits 5-6
paddings = [(1, 0, 0, None, None), (2, 1, 1, "sha1", "sha1"), (2, 3, 3, "sha256", "sha256"), (2, 2, 1, "sha224", "sha1")]

def key_numbers(pem):
    text = openssl("rsa", "-noout", "-text", stdin=pem).decode()
    def field(name):
        m = re.search(name + r":\s*\n((?:\s+[0-9a-f:]+\n)+)", text)
        return int(m.group(1).replace(":", "").replace(" ", "").replace("\n", ""), 16)
    n = field("modulus")
    return n, (n.bit_length() + 7) // 8, hashlib.sha256(pem_to_der(openssl("pkey", "-pubout", stdin=pem))).digest()

def mgf1(seed, count, name):
    out = b""
    for counter in range(-(-count // hashlib.new(name).digest_size)):
        out += hashlib.new(name, seed + counter.to_bytes(4, "big")).digest()
    return out[:count]

def encrypt_block(frame, seed, n, k, padding):
    scheme, _, _, h, g = padding
    if scheme == 1:
        ps = bytes((seed * 31 + i * 7) % 255 + 1 for i in range(k - 3 - len(frame)))
        em = b"\x00\x02" + ps + b"\x00" + frame
    else:
        hlen = hashlib.new(h).digest_size
        db = hashlib.new(h).digest() + b"\x00" * (k - len(frame) - 2 * hlen - 2) + b"\x01" + frame
        rseed = hashlib.sha256(b"seed%d" % seed).digest()[:hlen]
        masked_db = bytes(x ^ y for x, y in zip(db, mgf1(rseed, len(db), g)))
        masked_seed = bytes(x ^ y for x, y in zip(rseed, mgf1(masked_db, hlen, g)))
        em = b"\x00" + masked_seed + masked_db
    return pow(int.from_bytes(em, "big"), 65537, n).to_bytes(k, "big")

def payload_max(k, version, padding):
    hlen = hashlib.new(padding[3]).digest_size if padding[3] else 0
    m = k - 11 if padding[0] == 1 else k - 2 * hlen - 2
    return m - (17 if version == 1 else 57)

def container(message, mid, secret, version, padding, n, k, fingerprint):
    size = bytes([k >> 8, k & 0xFF])
    header = (magic + bytes([1, 1]) + size if version == 1 else
              magic + bytes([2, padding[0], padding[1], padding[2], 0, 0]) + size) + fingerprint + mid
    binding = mid[:8] if version == 1 else secret + hashlib.sha256(header).digest()
    payload = payload_max(k, version, padding)
    chunks = [message[i:i + payload] for i in range(0, len(message), payload)] or [b""]
    out = header
    for i, chunk in enumerate(chunks):
        frame = binding + i.to_bytes(8, "big") + bytes([1 if i == len(chunks) - 1 else 0]) + chunk
        out += encrypt_block(frame, i, n, k, padding)
    return out

shapes = []  # (mode bits, version, padding index, key)
for key_index, pem in enumerate(fuzz_keys[:2]):
    numbers = key_numbers(pem)
    shapes.append((8 * key_index, 1, 0, numbers))
    if key_index == 1:
        for p in range(4):
            shapes.append((8 | 0x10 | p << 5, 2, p, numbers))
for mode, version, p, (n, k, fingerprint) in shapes:
    payload = payload_max(k, version, paddings[p])
    for size in (0, 1, payload, payload + 1, 3 * payload):
        mid = hashlib.sha256(b"id%d" % size).digest()[:16]
        secret = hashlib.sha256(b"secret%d" % size).digest()[:16]
        message = bytes(range(size % 256))[:size] if size < 256 else b"x" * size
        raw = container(message, mid, secret, version, paddings[p], n, k, fingerprint)
        add("FuzzContainer", bytes([mode & 0x0F]) + raw)  # raw mode: bit 3 picks the key
        if mode == 0:
            add("FuzzArmor", b"-----BEGIN RSAKIT MESSAGE-----\n" +
                b"".join(base64.b64encode(raw[i:i + 48]) + b"\n" for i in range(0, len(raw), 48)) + b"-----END RSAKIT MESSAGE-----\n")
        # Described messages (see FuzzContainer.swift): mode, id, (v2) secret, block count, per
        # block kind 0x0F (right fields, full payload) or 0x07 with a payload length and bytes.
        blocks = max(1, -(-size // payload))
        desc = bytes([mode | 1]) + mid + (secret if version == 2 else b"") + bytes([blocks])
        for i in range(blocks):
            rest = size - i * payload
            if rest >= payload and i < blocks - 1:
                desc += b"\x0f" + b"p" * payload
            else:
                desc += b"\x07" + bytes([rest]) + b"q" * rest
        add("FuzzContainer", desc)
        if blocks > 1:
            # The last block one bit off in its id/secret (kind 0x06) or header digest (0x17),
            # and the message id changed after the blocks were made (mode bit 7): the model
            # predicts failure (version 1: the changed id byte is not checked, so success).
            last = desc.rindex(b"\x07")
            add("FuzzContainer", desc[:last] + b"\x06" + desc[last + 1:])
            add("FuzzContainer", desc[:last] + b"\x17" + desc[last + 1:])
            add("FuzzContainer", bytes([desc[0] | 0x80]) + desc[1:])
    add("FuzzContainer", bytes([mode | 1]) + b"\x00" * (16 if version == 1 else 32) + b"\x01\x80" + b"\x00\x02" + b"\x01" * (k - 3) + b"\x00")
add("FuzzArmor", b"")
add("FuzzArmor", b"Subject: hello\n\n-----BEGIN RSAKIT MESSAGE-----\r\nAAEC\r\n\r\n-----END RSAKIT MESSAGE-----\r\n")

# --- store item files ------------------------------------------------------------------------------
fingerprint = key_numbers(keys_pem[0])[2]  # the 512-bit fixed key's
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

# --- certificates and PKCS#12 files (FuzzX509, FuzzPKCS12) --------------------------------------
def run(*args):
    return subprocess.run(args, capture_output=True, check=True, cwd=tmp).stdout

def path(name):
    return os.path.join(tmp, name)

def write(name, data):
    with open(path(name), "wb") as f:
        f.write(data)

def x509_pem_of(pem):
    return openssl("x509", stdin=pem)

write("k-root.pem", keys_pem[2])        # 1024 bits (fresh)
write("k-leaf.pem", keys_pem[1])        # 512 bits (fresh)
write("k-fixed.pem", keys_pem[0])       # the fixed 512-bit fuzz key
run("openssl", "req", "-x509", "-key", "k-root.pem", "-subj", "/C=US/O=Fuzz CA/CN=Fuzz Root", "-days", "3650",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-out", "root.pem")
run("openssl", "req", "-new", "-key", "k-fixed.pem", "-subj", "/O=Fuzz CA/OU=Intermediate/CN=Fuzz Intermediate", "-out", "int.csr")
write("int.ext", b"basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign\n"
      b"nameConstraints=permitted;DNS:example.com\ncertificatePolicies=2.5.29.32.0\n")
run("openssl", "x509", "-req", "-in", "int.csr", "-CA", "root.pem", "-CAkey", "k-root.pem", "-set_serial", "0x0102030405060708090a",
    "-days", "365", "-extfile", "int.ext", "-out", "int.pem")
run("openssl", "req", "-new", "-key", "k-leaf.pem", "-subj", "/CN=www.example.com/emailAddress=fuzz@example.com/O=Fuzz \\, Inc./C=DE", "-out", "leaf.csr")
write("leaf.ext", b"subjectAltName=DNS:www.example.com,DNS:*.example.com,IP:127.0.0.1,IP:::1,email:a@example.com,"
      b"URI:https://example.com/,RID:1.2.3.4,dirName:dir_sect\nextendedKeyUsage=serverAuth,clientAuth,codeSigning,1.2.3.4.5\n"
      b"keyUsage=critical,digitalSignature,keyEncipherment\nbasicConstraints=CA:FALSE\n"
      b"authorityInfoAccess=OCSP;URI:http://ocsp.example.com/\ncrlDistributionPoints=URI:http://crl.example.com/c.crl\n"
      b"[dir_sect]\nCN=Directory\nO=Fuzz\n")
run("openssl", "x509", "-req", "-in", "leaf.csr", "-CA", "int.pem", "-CAkey", "k-fixed.pem", "-set_serial", "1",
    "-days", "30", "-extfile", "leaf.ext", "-out", "leaf.pem")
run("openssl", "x509", "-req", "-in", "leaf.csr", "-key", "k-leaf.pem", "-set_serial", "0", "-days", "1", "-out", "v1.pem")  # no extensions
ec_key = openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"); write("k-ec.pem", ec_key)
run("openssl", "req", "-x509", "-key", "k-ec.pem", "-subj", "/CN=ec", "-days", "1", "-out", "ec.pem")
pss_key = openssl("genpkey", "-algorithm", "RSA-PSS", "-pkeyopt", "rsa_keygen_bits:1024"); write("k-pss.pem", pss_key)
run("openssl", "req", "-x509", "-key", "k-pss.pem", "-subj", "/CN=pss", "-days", "1", "-out", "pss.pem")
run("openssl", "req", "-x509", "-key", "k-leaf.pem", "-subj", "/CN=utf8 caf\xc3\xa9", "-utf8", "-days", "36500", "-sha1", "-out", "old.pem")
certs = {name: open(path(name + ".pem"), "rb").read() for name in ("root", "int", "leaf", "v1", "ec", "pss", "old")}
certs["self"] = cert or certs["v1"]
for name, pem in certs.items():
    add("FuzzX509", pem); add("FuzzX509", pem_to_der(pem))
add("FuzzX509", certs["leaf"] + certs["int"] + certs["root"])                          # PEM bundle
add("FuzzX509", b"subject=leaf\n" + certs["leaf"] + b"\nBag Attributes\n    friendlyName: x\n" + certs["root"])
add("FuzzX509", b"\xef\xbb\xbf" + certs["leaf"].replace(b"\n", b"\r\n"))                  # BOM, CRLF
add("FuzzX509", pem_to_der(certs["leaf"]) + pem_to_der(certs["int"]) + pem_to_der(certs["root"]))  # DER concatenated
add("FuzzX509", openssl("x509", "-trustout", "-addtrust", "serverAuth", "-setalias", "fuzz", stdin=certs["root"]))
add("FuzzX509", certs["root"].replace(b"BEGIN CERTIFICATE", b"BEGIN X509 CERTIFICATE").replace(b"END CERTIFICATE", b"END X509 CERTIFICATE"))
add("FuzzX509", keys_pem[0] + certs["self"])                                              # a key block first

write("chain.pem", certs["int"] + certs["root"])
p12_variants = [
    ["-iter", "1", "-nomaciter"],
    ["-iter", "2", "-maciter", "-name", "fuzz identity", "-certfile", "chain.pem"],
    ["-iter", "1", "-nomaciter", "-macalg", "sha1", "-keypbe", "AES-128-CBC", "-certpbe", "AES-128-CBC"],
    ["-iter", "1", "-nomaciter", "-keypbe", "DES-EDE3-CBC", "-certpbe", "DES-EDE3-CBC", "-macalg", "sha512"],
    ["-legacy", "-iter", "1", "-nomaciter", "-certfile", "chain.pem"],                    # RC2-40 certs, 3DES key, SHA-1 MAC
    ["-legacy", "-iter", "1", "-nomaciter", "-keypbe", "PBE-SHA1-RC2-128", "-certpbe", "PBE-SHA1-3DES", "-name", "caf\u00e9"],
    ["-legacy", "-iter", "1", "-nomaciter", "-keypbe", "PBE-SHA1-RC4-128", "-certpbe", "PBE-SHA1-2DES"],
    ["-iter", "1", "-nomac"],
    ["-iter", "1", "-nomac", "-certpbe", "NONE", "-certfile", "chain.pem"],
    ["-iter", "1", "-nomaciter", "-keypbe", "NONE", "-certpbe", "NONE"],                  # plain key bag
    ["-iter", "1", "-nomaciter", "-nokeys"],                                              # certificates only
    ["-iter", "1", "-nomaciter", "-nocerts"],                                             # key only
]
pkcs12_made = 0
for index, variant in enumerate(p12_variants):
    for key, leaf in (("k-leaf.pem", "leaf.pem"), ("k-fixed.pem", "int.pem")):
        out = "p12-%d-%s.p12" % (index, key)
        args = ["openssl", "pkcs12", "-export", "-inkey", key, "-in", leaf, "-passout", "pass:fuzz", "-out", out] + variant
        if "-nokeys" in variant:
            args.remove("-inkey"); args.remove(key)
        if subprocess.run(args, capture_output=True, cwd=tmp).returncode == 0:
            add("FuzzPKCS12", open(path(out), "rb").read()); pkcs12_made += 1
        if "-nokeys" in variant or "-nocerts" in variant:
            break
add("FuzzPKCS12", b"\x30\x03\x02\x01\x03")

# --- agent frames (AgentWire: length || version 1 || operation || (length || field)*) -------------------
AGENT_STORE = b"/tmp/rsakit-fuzz-agent/store"   # FuzzAgentWire's store path
def agent_frame(operation, *fields):
    payload = bytes([1, operation]) + b"".join(len(f).to_bytes(4, "big") + f for f in fields)
    return len(payload).to_bytes(4, "big") + payload
add("FuzzAgentWire", agent_frame(1, AGENT_STORE))                                    # status
add("FuzzAgentWire", agent_frame(3, AGENT_STORE, b"secret value", b"item-id"))       # seal
add("FuzzAgentWire", agent_frame(2, AGENT_STORE, bytes(40), b"item-id"))             # open (does not open)
add("FuzzAgentWire", agent_frame(4) + agent_frame(1, AGENT_STORE))                   # lock, then status
add("FuzzAgentWire", agent_frame(1, AGENT_STORE) + agent_frame(5) + agent_frame(1, AGENT_STORE))  # stop ends it
add("FuzzAgentWire", agent_frame(1, b"/another/store"))                              # another store
add("FuzzAgentWire", agent_frame(0x80))                                              # a response as a request
add("FuzzAgentWire", (2**20).to_bytes(4, "big") + bytes([1, 1]))                     # over the limit
add("FuzzAgentWire", agent_frame(3, AGENT_STORE, b"x", b"y")[:-3])                  # truncated

# --- ssh-agent frames (FuzzSSHAgent: uint32 length || message number || contents) ---------------------
# BEGIN ssh-agent seeds
def ssh_string(b):
    return len(b).to_bytes(4, "big") + b
def ssh_mpint(value):
    b = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return ssh_string(b"\0" + b if b and b[0] & 0x80 else b)
def ssh_frame(payload):
    return len(payload).to_bytes(4, "big") + payload
ssh_key = swift_pems(open(os.path.join(root, "Fuzz", "Sources", "FuzzSupport", "FuzzSupport.swift")).read())[1]
ssh_text = subprocess.run(["openssl", "rsa", "-noout", "-text"], input=ssh_key, capture_output=True, check=True).stdout.decode()
ssh_n = int(re.search(r"modulus:\s*\n((?:\s+[0-9a-f:]+\n)+)", ssh_text).group(1).replace(":", "").replace(" ", "").replace("\n", ""), 16)
ssh_e = int(re.search(r"publicExponent: (\d+)", ssh_text).group(1))
ssh_blob = ssh_string(b"ssh-rsa") + ssh_mpint(ssh_e) + ssh_mpint(ssh_n)   # the harness's key, tag "ssh-fuzz"
ssh_sign = lambda data, flags: ssh_frame(bytes([13]) + ssh_string(ssh_blob) + ssh_string(data) + flags.to_bytes(4, "big"))
add("FuzzSSHAgent", ssh_frame(bytes([11])))                                          # list
add("FuzzSSHAgent", ssh_sign(b"session id and userauth request", 2))                 # sign, rsa-sha2-256
add("FuzzSSHAgent", ssh_frame(bytes([11])) + ssh_sign(b"userauth", 4))               # list, then sign rsa-sha2-512
add("FuzzSSHAgent", ssh_sign(b"sha-1 is refused", 0))                                # ssh-rsa (SHA-1): failure
add("FuzzSSHAgent", ssh_sign(b"x", 2)[:-2])                                          # malformed: truncated flags
add("FuzzSSHAgent", bytes(4) + ssh_frame(bytes([11])))                               # malformed: an empty frame
add("FuzzSSHAgent", ssh_frame(bytes([17]) + ssh_string(b"ssh-rsa")) + ssh_frame(bytes([11])))  # add (refused), list
# END ssh-agent seeds

# --- PKCS#11 sessions (FuzzPKCS11's operation bytes; see the comments of PKCS11Run in its source) ------
# Byte 0: bit 7 the protected store, bit 6 a read-write session; byte 1: the C_Initialize variant.
# Handle bytes index the handles found so far (sorted): 0 the public key, 1 the private key,
# 2 the certificate (the plain store; the protected one lists the private key after C_Login).
P11_FIND = bytes([0, 0, 0]) + bytes([1, 8])           # C_FindObjectsInit(empty template), C_FindObjects(8 at most)
def p11_data(data):
    return bytes([len(data)]) + data
def p11_template(*attributes):                          # (type index, mode, value bytes or length)
    out = bytes([len(attributes)])
    for index, mode, value in attributes:
        out += bytes([index, mode]) + (bytes([value]) if mode == 1 else p11_data(value) if mode == 2 else b"")
    return out
P11_RSA_PKCS, P11_SHA256_RSA_PKCS = bytes([0, 0]), bytes([3, 0])
P11_PSS_SHA256 = bytes([1, 2, 2, 32, 0])               # CKM_RSA_PKCS_PSS: SHA-256, MGF1-SHA-256, sLen 32
P11_OAEP_SHA1 = bytes([2, 0, 0, 0, 0, 0])              # CKM_RSA_PKCS_OAEP: SHA-1, MGF1-SHA-1, no label
DIGEST_INFO_SHA256 = bytes.fromhex("3031300d060960864801650304020105000420") + hashlib.sha256(b"fuzz").digest()
LOGIN_PIN = bytes([14, 1, 0])                           # C_Login(CKU_USER, "fuzz")
p11_sessions = [
    # every object's class, label, value, modulus and private exponent: sizes, then buffers
    P11_FIND + b"".join(bytes([3, h]) + p11_template((0, 1, 0), (3, 1, 0), (5, 1, 0), (32, 1, 0), (35, 1, 0)) for h in range(3)),
    P11_FIND + b"".join(bytes([3, h]) + p11_template((0, 2, bytes(8)), (5, 2, bytes(40)), (32, 2, bytes(128)), (19, 2, bytes(31))) for h in range(3)),
    # a search by class (CKO_PRIVATE_KEY), and one with a NULL value and a length
    bytes([0]) + p11_template((0, 2, (3).to_bytes(8, "little"))) + bytes([0, 1, 4, 2]),
    bytes([0]) + p11_template((3, 1, 20)) + bytes([0, 1, 4]),
    # C_Sign with CKM_RSA_PKCS over a DigestInfo on each handle: length query, short buffer, k bytes
    *[P11_FIND + bytes([4]) + P11_RSA_PKCS + bytes([h, 5]) + p11_data(DIGEST_INFO_SHA256) + bytes([0])
      + bytes([5]) + p11_data(DIGEST_INFO_SHA256) + bytes([3, 10]) + bytes([5]) + p11_data(DIGEST_INFO_SHA256) + bytes([4]) for h in range(3)],
    # CKM_SHA256_RSA_PKCS in parts, C_SignFinal
    P11_FIND + bytes([4]) + P11_SHA256_RSA_PKCS + bytes([1, 6]) + p11_data(b"hello ") + bytes([6]) + p11_data(b"world") + bytes([7, 0, 7, 4]),
    P11_FIND + bytes([4]) + P11_SHA256_RSA_PKCS + bytes([1, 5]) + p11_data(b"message") + bytes([4]),
    # PSS over a SHA-256 digest, and the same with a wrong ulParameterLen
    P11_FIND + bytes([4]) + P11_PSS_SHA256 + bytes([1, 5]) + p11_data(bytes(32)) + bytes([4]),
    P11_FIND + bytes([4, 1, 2, 2, 32, 1, 23, 1, 5]) + p11_data(bytes(32)) + bytes([4]),
    # C_Verify of an RSAKit signature, CKM_RSA_PKCS; and a bad one
    P11_FIND + bytes([8]) + P11_RSA_PKCS + bytes([0, 9]) + p11_data(DIGEST_INFO_SHA256) + bytes([1]),
    P11_FIND + bytes([8]) + P11_RSA_PKCS + bytes([2, 9]) + p11_data(b"x") + bytes([0]) + p11_data(bytes(128)),
    P11_FIND + bytes([8]) + P11_SHA256_RSA_PKCS + bytes([1, 10]) + p11_data(b"abc") + bytes([11]) + p11_data(bytes(128)),
    # C_Decrypt of an RSAKit PKCS#1 v1.5 ciphertext; OAEP of garbage
    *[P11_FIND + bytes([12]) + P11_RSA_PKCS + bytes([h, 13]) + p11_data(b"secret") + bytes([1, 0])
      + bytes([13]) + p11_data(b"secret") + bytes([1, 4]) for h in range(3)],
    P11_FIND + bytes([12]) + P11_OAEP_SHA1 + bytes([1, 13, 0xFD]) + bytes(128) + bytes([0, 4]),
    # C_Decrypt of RSAKit's OAEP ciphertexts: SHA-1, and SHA-256 with MGF1-SHA-1 and a label
    P11_FIND + bytes([12]) + P11_OAEP_SHA1 + bytes([1, 13]) + p11_data(b"secret") + bytes([1, 0, 13]) + p11_data(b"secret") + bytes([1, 4]),
    P11_FIND + bytes([12, 2, 2, 0, 0, 2]) + p11_data(b"label") + bytes([0, 1, 13]) + p11_data(b"secret") + bytes([1, 4]),
    # the protected store: sign before and after C_Login, a wrong PIN, C_Logout
    bytes([0x80, 0]) + P11_FIND + bytes([4]) + P11_RSA_PKCS + bytes([0]) + LOGIN_PIN + bytes([2]) + P11_FIND
      + b"".join(bytes([4]) + P11_RSA_PKCS + bytes([h]) for h in range(4)) + bytes([5]) + p11_data(DIGEST_INFO_SHA256) + bytes([4, 15]),
    bytes([0xC0, 1, 14, 1, 2]) + p11_data(b"wrong") + bytes([14, 0, 0, 14, 1, 1, 15]),
    # the information calls, C_GenerateRandom, sessions closed and reopened
    bytes([16, 0, 1, 0, 3, 0, 17, 16, 17, 0x81, 18, 6, 19, 0, 2]),
]
for variant in range(7):                              # every C_Initialize variant, once
    add("FuzzPKCS11", bytes([0x40, variant]) + P11_FIND)
for session in p11_sessions:
    add("FuzzPKCS11", bytes([0, 0]) + session if session[:1] not in (b"\x80", b"\xc0") else session)

# --- regression inputs -------------------------------------------------------------------------------
for target in seeds:
    for path in glob.glob(os.path.join(root, "Tests", "RSAKitTests", "Fixtures", "fuzz", target, "*")):
        if os.path.isfile(path) and not path.endswith(".md"):
            add(target, open(path, "rb").read())

for base, table in ((corpus, seeds), (local_corpus, local_seeds)):
    for target, items in table.items():
        folder = os.path.join(base, target)
        os.makedirs(folder, exist_ok=True)
        for name, data in items.items():
            with open(os.path.join(folder, "seed-" + name), "wb") as f:
                f.write(data)
print("seeds: " + ", ".join(f"{t} {len(v)}" for t, v in seeds.items()) + f" (Wycheproof keys: {wycheproof}, PKCS#12 files: {pkcs12_made})")
