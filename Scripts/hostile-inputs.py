#!/usr/bin/env python3
"""Writes the hostile-input benchmark's documents: for each parser, normal documents and hand-made worst cases of
the same size (Scripts/hostile-bench.sh times them with `iapkit-fuzz --time`).

    Scripts/hostile-inputs.py OUTDIR [SHARED_TESTDATA]

OUTDIR/TARGET/normal-*.* and OUTDIR/TARGET/worst-*.* for TARGET in receipt, jws, json, catalog, scenario. Normal
documents come from ../shared/testdata and Examples/Florist; each worst case is padded to the size of the normal
document it is compared with.
"""
import base64
import json
import os
import subprocess
import sys


def tlv(tag, content):
    n = len(content)
    if n < 0x80:
        length = bytes([n])
    else:
        raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
        length = bytes([0x80 | len(raw)]) + raw
    return bytes([tag]) + length + content


def integer(value, width=None):
    if width:
        return tlv(2, value.to_bytes(width, "big", signed=True))
    return tlv(2, value.to_bytes(max(1, (value.bit_length() + 8) // 8), "big", signed=True))


def seq(*parts):
    return tlv(0x30, b"".join(parts))


def set_of(*parts):
    return tlv(0x31, b"".join(parts))


def attribute(kind, content, width=None):
    return seq(integer(kind, width), integer(1), tlv(4, content))


def utf8(text):
    return tlv(0x0C, text.encode())


def ia5(text):
    return tlv(0x16, text.encode())


OID_DATA = bytes.fromhex("06092a864886f70d010701")
OID_SIGNED_DATA = bytes.fromhex("06092a864886f70d010702")
SHA256 = seq(bytes.fromhex("0609608648016503040201"), b"\x05\x00")
RSA = seq(bytes.fromhex("06092a864886f70d010101"), b"\x05\x00")


def receipt(payload, certificates=()):
    issuer_serial = seq(seq(set_of(seq(bytes.fromhex("0603550403"), utf8("x")))), integer(1))
    signer = seq(integer(1), issuer_serial, SHA256, RSA, tlv(4, b"\x42" * 256))
    body = integer(1) + set_of(SHA256) + seq(OID_DATA, tlv(0xA0, tlv(4, payload)))
    if certificates:
        body += tlv(0xA0, b"".join(certificates))
    return seq(OID_SIGNED_DATA, tlv(0xA0, seq(body + set_of(signer))))


BASE = [attribute(0, utf8("Production")), attribute(2, utf8("com.example.app")), attribute(3, utf8("1")),
        attribute(12, ia5("2026-01-01T00:00:00Z"))]


def fit(build, size):
    """The largest document build(n) makes that is no larger than size (build grows with n)."""
    low, high = 1, 1
    while len(build(high)) < size:
        high *= 2
    while low < high:
        middle = (low + high + 1) // 2
        if len(build(middle)) <= size:
            low = middle
        else:
            high = middle - 1
    return build(low)


def certificates_of(path):
    """The DER certificates a PKCS#7 file carries (openssl)."""
    try:
        pem = subprocess.run(["openssl", "pkcs7", "-inform", "DER", "-in", path, "-print_certs"],
                             capture_output=True, check=True).stdout.decode()
    except (OSError, subprocess.CalledProcessError):
        return []
    blocks = pem.split("-----BEGIN CERTIFICATE-----")[1:]
    return [base64.b64decode(block.split("-----END CERTIFICATE-----")[0]) for block in blocks]


def receipts(out, shared):
    normal = os.path.join(shared, "receipts", "tpinapp-receipt-sandbox-legacy.der")
    data = open(normal, "rb").read()
    write(out, "normal-sandbox-legacy-187-purchases.der", data)
    size = len(data)
    write(out, "worst-padded-integer.der",
          fit(lambda n: receipt(set_of(*BASE, attribute(1, tlv(2, b"\x00" * n + b"\x12")))), size))
    write(out, "worst-padded-negative-integer.der",
          fit(lambda n: receipt(set_of(*BASE, attribute(1, tlv(2, b"\xff" * n + b"\x80")))), size))
    write(out, "worst-wide-integer.der",
          fit(lambda n: receipt(set_of(*BASE, attribute(1, tlv(2, b"\x55" * n)))), size))
    write(out, "worst-extreme-types.der", fit(lambda n: receipt(set_of(*BASE, attribute(17, set_of(
        attribute(1702, utf8("p")), attribute(1703, utf8("1")),
        *[attribute(-2**63 + i, b"", 8) for i in range(n)])))), size))
    write(out, "worst-minimal-purchases.der", fit(lambda n: receipt(set_of(*BASE, *[attribute(17, set_of(
        attribute(1702, utf8("p")), attribute(1703, utf8(str(i))),
        attribute(1704, ia5("2025-01-01T00:00:00Z")))) for i in range(n)])), size))
    chunks = lambda n: bytes([0x30, 0x80]) + OID_SIGNED_DATA + bytes([0xA0, 0x80, 0x24, 0x80]) + b"\x04\x00" * n \
        + b"\x00" * 6
    write(out, "worst-ber-empty-chunks.der", fit(chunks, size))
    certificates = certificates_of(normal)
    if certificates:
        write(out, "worst-certificate-flood.der",
              fit(lambda n: receipt(set_of(*BASE), [certificates[i % len(certificates)] for i in range(n)]), size))


def b64url(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=")


def jws_text(header, payload, signature=b"\x00" * 64):
    return b64url(json.dumps(header, separators=(",", ":")).encode()) + b"." + b64url(payload) + b"." + b64url(signature)


def signed_documents(out, shared):
    folder = os.path.join(shared, "jws")
    real = sorted((os.path.join(folder, name) for name in os.listdir(folder) if name.endswith(".jws")),
                  key=os.path.getsize)
    normal = open(real[-1], "rb").read().strip()
    write(out, "normal-" + os.path.basename(real[-1]), normal)
    header = json.loads(base64.urlsafe_b64decode(normal.split(b".")[0] + b"=="))
    payload = base64.urlsafe_b64decode(normal.split(b".")[1] + b"==")
    size = len(normal)
    for scale, suffix in [(1, ""), (100, "-100x")]:
        target = size * scale
        write(out, f"worst-member-flood{suffix}.jws", fit(lambda n: jws_text(
            header, payload[:-1] + b"".join(b',"u%d":0' % i for i in range(n)) + b"}"), target))
        write(out, f"worst-deep-arrays{suffix}.jws", fit(lambda n: jws_text(
            header, payload[:-1] + b',"deep":' + b"[" * 60 + b"0," * n + b"0" + b"]" * 60 + b"}"), target))
    write(out, "worst-many-certificates.jws", fit(lambda n: jws_text(
        dict(header, x5c=[header["x5c"][i % 3] for i in range(n)]), payload), size))
    write(out, "worst-escaped-strings.jws", fit(lambda n: jws_text(
        header, payload[:-1] + b',"s":"' + b"\\u0041" * n + b'"}'), size))


def json_documents(out, shared):
    path = os.path.join(shared, "json", "asn-v2-decoded", "applelib-signedTransaction.json")
    if not os.path.exists(path):
        candidates = []
        for root, _, files in os.walk(os.path.join(shared, "json")):
            candidates += [os.path.join(root, f) for f in files if "ransaction" in f and f.endswith(".json")]
        path = sorted(candidates)[0]
    normal = open(path, "rb").read().strip()
    write(out, "normal-" + os.path.basename(path), normal)
    size = len(normal)
    body = normal[:-1]
    write(out, "worst-member-flood.json", fit(lambda n: body + b"".join(b',"u%d":0' % i for i in range(n)) + b"}", size))
    write(out, "worst-deep-nesting.json", fit(lambda n: body + b',"d":' + b"[" * 63 + b"1," * n + b"1" + b"]" * 63
                                             + b"}", size))
    write(out, "worst-escapes.json", fit(lambda n: body + b',"s":"' + b"\\ud83d\\ude00" * n + b'"}', size))
    write(out, "worst-long-numbers.json", fit(lambda n: body + b',"n":1' + b"0" * n + b"e-" + b"9" * 5 + b"}", size))


def catalogs(out, repository):
    path = os.path.join(repository, "Examples", "Florist", "Florist.storekit")
    normal = open(path, "rb").read()
    write(out, "normal-Florist.storekit", normal)
    document = json.loads(normal)
    size = len(normal)

    def flood(n):
        copy = dict(document)
        copy.update({f"u{i}": 0 for i in range(n)})
        return json.dumps(copy).encode()

    write(out, "worst-member-flood.storekit", fit(flood, size))
    write(out, "worst-deep-nesting.storekit", fit(lambda n: normal.rstrip()[:-1] + b',"d":' + b"[" * 200 + b"0," * n
                                                  + b"0" + b"]" * 200 + b"}", size))

    def products(n):
        copy = dict(document)
        template = document.get("products", [{}])[0] if document.get("products") else {}
        copy["products"] = [dict(template, productID=f"p{i}") for i in range(n)]
        return json.dumps(copy).encode()

    write(out, "worst-many-products.storekit", fit(products, size))


def scenarios(out, repository):
    path = os.path.join(repository, "Examples", "Florist", "florist-story.yaml")
    normal = open(path, "rb").read()
    write(out, "normal-florist-story.yaml", normal)
    size = len(normal)

    def bomb(n):
        lines = ["name: bomb", "x0: &x0 [a, a]"] + [f"x{i}: &x{i} [*x{i - 1}, *x{i - 1}, *x{i - 1}]"
                                                  for i in range(1, n)]
        return ("\n".join(lines) + "\nsteps:\n  - advance: P1D\n").encode()

    write(out, "worst-alias-bomb.yaml", fit(bomb, size))
    write(out, "worst-deep-flow.yaml", fit(lambda n: b"name: x\nsteps: " + b"[" * n + b"]" * n + b"\n", size))
    write(out, "worst-many-steps.yaml", fit(lambda n: b"name: x\nsteps:\n" + b"  - advance: P1D\n" * n, size))


def write(folder, name, data):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as handle:
        handle.write(data)


def main():
    out = sys.argv[1]
    shared = sys.argv[2] if len(sys.argv) > 2 else "../shared/testdata"
    repository = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    receipts(os.path.join(out, "receipt"), shared)
    signed_documents(os.path.join(out, "jws"), shared)
    json_documents(os.path.join(out, "json"), shared)
    catalogs(os.path.join(out, "catalog"), repository)
    scenarios(os.path.join(out, "scenario"), repository)


if __name__ == "__main__":
    main()
