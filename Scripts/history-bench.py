#!/usr/bin/env python3
"""What a post costs for a customer with a long history, against one with a short one (release `iapkit serve`).

Usage: Scripts/history-bench.py [LONG] [IAPKIT_BINARY]   (LONG defaults to 10,000; the binary to
       .build/release/iapkit, built with swift build -c release --product iapkit)

A local App Store (one server, in memory) signs LONG + 200 consumable purchases for one customer and 10 + 200 for
another, each account carrying an app account token, so every purchase belongs to the customer the token names. A
second server on a fresh SQLite file receives the first LONG (or 10) of each, then the next 200, one at a time, on
one connection: each of those posts verifies, records and answers the customer's entitlements. Prints the wall time
and the server's CPU time per post (from /proc) for both customers, and their ratio. Servers run on 127.0.0.1 and are
stopped by their process ids.
"""
import http.client
import json
import os
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_process import start_serve  # noqa: E402

LONG = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
BINARY = sys.argv[2] if len(sys.argv) > 2 else ".build/release/iapkit"
MEASURED = 200
TICKS = os.sysconf("SC_CLK_TCK")


def start(port, *arguments):
    return start_serve([BINARY, "serve", "--port", str(port), *arguments], port)


class Client:
    def __init__(self, port, headers=None):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {"Content-Type": "application/json", **(headers or {})}

    def post(self, path, body):
        self.connection.request("POST", path, json.dumps(body), self.headers)
        response = self.connection.getresponse()
        answer = response.read()
        if response.status >= 300:
            raise SystemExit(f"{path}: {response.status} {answer[:300]}")
        return json.loads(answer)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def main():
    folder = tempfile.mkdtemp(prefix="iapkit-history-bench-")
    signer = start(18800, "--database", ":memory:", "--pki", folder)
    documents = {}
    try:
        store = Client(18800)
        for name, count, token in [("long", LONG, "00000000-0000-4000-8000-000000000001"),
                                   ("short", 10, "00000000-0000-4000-8000-000000000002")]:
            store.post("/simulator/accounts", {"accountId": name, "appAccountToken": token})
            documents[name] = (token, [
                store.post(f"/simulator/accounts/{name}/purchases",
                           {"productId": "com.example.florist.installation"})["transaction"]["signedTransaction"]
                for _ in range(count + MEASURED)])
    finally:
        signer.kill()
        signer.wait()
    print(f"signed {LONG} + {MEASURED} and 10 + {MEASURED} purchases")

    key = "history-bench-key-0123456789"
    server = start(18801, "--database", os.path.join(folder, "history.sqlite"), "--pki", folder, "--api-key", key)
    try:
        client = Client(18801, {"Authorization": f"Bearer {key}"})
        results = {}
        for name in ["short", "long"]:
            token, signed = documents[name]
            history = signed[:-MEASURED]
            started = time.perf_counter()
            for document in history:
                client.post("/v1/transactions", {"signedTransaction": document, "appAccountToken": token})
            print(f"{name}: {len(history)} purchases recorded in {time.perf_counter() - started:.1f} s")
            cpu = cpu_seconds(server.pid)
            started = time.perf_counter()
            for document in signed[-MEASURED:]:
                answer = client.post("/v1/transactions", {"signedTransaction": document, "appAccountToken": token})
            wall = (time.perf_counter() - started) / MEASURED * 1000
            used = (cpu_seconds(server.pid) - cpu) / MEASURED * 1000
            balance = [c.get("balance") for c in answer.get("entitlements", {}).get("consumables", [])]
            results[name] = (wall, used)
            print(f"{name} history ({len(history)} purchases): {wall:.2f} ms a post, {used:.2f} ms of server CPU "
                  f"a post (balance now {balance})")
        print(f"long / short: {results['long'][0] / results['short'][0]:.2f}x wall, "
              f"{results['long'][1] / max(results['short'][1], 0.001):.2f}x CPU")
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
