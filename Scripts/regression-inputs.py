#!/usr/bin/env python3
"""Writes the hand-made hostile catalogs and scenarios kept in Tests/Regressions (replayed by FuzzRegressionTests and
used as the fuzzers' seeds, so coverage-guided fuzzing starts from binary property lists with every marker type, sets
and shared references, and from YAML with anchors, aliases, merge keys and complex keys).

    Scripts/regression-inputs.py [REPOSITORY]
"""
import os
import struct
import sys


def counted(marker, n):
    return bytes([marker | n]) if n < 15 else bytes([marker | 0xF, 0x13]) + n.to_bytes(8, "big")


def ascii_(text):
    return counted(0x50, len(text)) + text.encode()


def utf16(text):
    data = text.encode("utf-16-be")
    return counted(0x60, len(data) // 2) + data


def refs(marker, references):
    return counted(marker, len(references)) + b"".join(r.to_bytes(2, "big") for r in references)


def dictionary(keys, values):
    return counted(0xD0, len(keys)) + b"".join(r.to_bytes(2, "big") for r in keys + values)


def bplist(objects, top=0):
    out = bytearray(b"bplist00")
    offsets = []
    for item in objects:
        offsets.append(len(out))
        out += item
    table = len(out)
    for offset in offsets:
        out += offset.to_bytes(4, "big")
    out += bytes(6) + bytes([4, 2]) + struct.pack(">QQQ", len(objects), top, table)
    return bytes(out)


def catalogs():
    files = {}
    # A set at the top level and one nested where product ids belong (Foundation on Linux crashes on both).
    files["bplist-set-top.plist"] = bplist([refs(0xC0, [1]), ascii_("com.example.a")])
    files["bplist-set-nested.plist"] = bplist([
        dictionary([1], [2]), ascii_("Subscriptions"), refs(0xA0, [3]), dictionary([4, 5], [6, 7]),
        ascii_("Group"), ascii_("Products"), ascii_("VIP"), refs(0xC0, [8]), ascii_("com.example.gold")])
    files["bplist-ordered-set.plist"] = bplist([refs(0xB0, [1]), ascii_("a")])
    files["bplist-uid.plist"] = bplist([refs(0xA0, [1]), bytes([0x80, 0x01])])
    # One array referred to twice at each of 40 levels: 2^40 values from 250 bytes.
    files["bplist-doubling.plist"] = bplist([refs(0xA0, [i + 1, i + 1]) for i in range(40)] + [ascii_("x")])
    # 300 groups sharing one list of 300 ids: quadratic once expanded.
    n = 300
    objects = [None, ascii_("Subscriptions"), ascii_("Group"), ascii_("Products"), None]
    ids = []
    for i in range(n):
        ids.append(len(objects))
        objects.append(ascii_(f"id{i}"))
    objects[4] = refs(0xA0, ids)
    groups = []
    for i in range(n):
        objects.append(ascii_(f"g{i}"))
        groups.append(len(objects))
        objects.append(dictionary([2, 3], [len(objects) - 1, 4]))
    objects.append(refs(0xA0, groups))
    objects[0] = dictionary([1], [len(objects) - 1])
    files["bplist-shared-groups.plist"] = bplist(objects)
    # Every marker type bplist00 defines, beside a real list of products.
    values = [b"\x00", b"\x08", b"\x09", b"\x10\x7f", b"\x11\x01\x00", b"\x12" + (70000).to_bytes(4, "big"),
              b"\x13" + (-5).to_bytes(8, "big", signed=True), b"\x14" + bytes(8) + (42).to_bytes(8, "big"),
              b"\x22" + struct.pack(">f", 1.5), b"\x23" + struct.pack(">d", 2.5), b"\x33" + struct.pack(">d", 0.0),
              counted(0x40, 3) + b"\x01\x02\x03", utf16("fleurs \u273f")]
    objects = [None]
    keys, references = [], []
    for i, value in enumerate(values):
        keys.append(len(objects))
        objects.append(ascii_(f"k{i}"))
        references.append(len(objects))
        objects.append(value)
    keys.append(len(objects))
    objects.append(ascii_("Products"))
    objects.append(utf16("com.example.\u00e9t\u00e9"))
    references.append(len(objects))
    objects.append(refs(0xA0, [len(objects) - 1]))
    objects[0] = dictionary(keys, references)
    files["bplist-every-marker.plist"] = bplist(objects)
    files["bplist-cycle.plist"] = bplist([refs(0xA0, [1]), refs(0xA0, [0])])
    files["xml-uid.plist"] = (b'<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>Products</key>'
                              b'<array><dict><key>CF$UID</key><integer>1</integer></dict></array></dict></plist>\n')
    return files


def scenarios():
    files = {}
    laughs = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
    for i in range(1, 9):
        laughs += f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n"
    files["alias-laughs.yaml"] = laughs + "name: laughs\nsteps: *a8\n"
    complex_keys = "k0: &k0 [x, x]\n"
    for i in range(1, 30):
        complex_keys += f"k{i}: &k{i} [*k{i - 1}, *k{i - 1}]\n"
    files["alias-complex-key.yaml"] = complex_keys + "? *k29\n: value\nname: keys\nsteps: []\n"
    files["complex-key.yaml"] = "name: x\n? [a, b]\n: c\nsteps: []\n"
    files["merge-keys.yaml"] = ("base: &ana {account: ana}\nname: merge\nsteps:\n  - createAccount: ana\n"
                                "  - <<: *ana\n    buy: flowers\n  - {<<: [*ana], expect: ana, entitled: [flowers]}\n")
    files["duplicate-key.yaml"] = "name: x\nname: y\nsteps: []\n"
    files["many-keys.yaml"] = "name: keys\nsteps: []\n" + "".join(f"unknown{i}: {i}\n" for i in range(3000))
    return files


def main():
    repository = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    for folder, files in [("catalog", catalogs()), ("scenario", scenarios())]:
        for name, content in files.items():
            path = os.path.join(repository, "Tests", "Regressions", folder, name)
            with open(path, "wb") as handle:
                handle.write(content if isinstance(content, bytes) else content.encode())
            print(path, len(content))


if __name__ == "__main__":
    main()
