#!/usr/bin/env python3
"""The deployment figures of docs/benchmarks.md, measured on a release `iapkit serve` on loopback.

Usage: Scripts/deploy-bench.py [IAPKIT_BINARY]   (default .build/release/iapkit; build it with
       swift build -c release --product iapkit)

1. /health latency (a new connection per request, 200 requests) alone, then while 1,100 half-sent requests hold
   connections open, the server's file limit lowered to 256 (prlimit), as an attacker's slow-connection flood would.
2. Resident memory with 300 update streams (/simulator/accounts/{a}/updates) open and never read: 30 customers with
   20 unfinished purchases each, 10 streams per customer; then after they close.
The server is started here on 127.0.0.1 and stopped by its process id; every wait is bounded.
"""
import json
import os
import socket
import statistics
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_process import start_serve  # noqa: E402

BINARY = sys.argv[1] if len(sys.argv) > 1 else ".build/release/iapkit"


def start(port, folder):
    return start_serve(["prlimit", "--nofile=256:256", BINARY, "serve", "--port", str(port), "--database", ":memory:",
                        "--pki", folder], port)


def post(port, path, body):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(), method="POST")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status


def health_latencies(port, count=200):
    """Milliseconds for each GET /health on a new connection (a request that fails counts as 10 s)."""
    times = []
    for _ in range(count):
        start = time.perf_counter()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
                connection.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                answer = b""
                while chunk := connection.recv(65536):
                    answer += chunk
                ok = answer.startswith(b"HTTP/1.1 200")
        except OSError:
            ok = False
        times.append((time.perf_counter() - start) * 1000 if ok else 10_000)
    return times


def summary(times):
    ordered = sorted(times)
    return (f"p50 {statistics.median(ordered):.2f} ms, p99 {ordered[int(len(ordered) * 0.99) - 1]:.2f} ms, "
            f"max {ordered[-1]:.2f} ms, failed {sum(1 for t in ordered if t >= 10_000)}")


def resident_mib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main():
    folder = tempfile.mkdtemp(prefix="iapkit-deploy-bench-")
    port = 18700
    server = start(port, folder)
    pid = server.pid
    try:
        alone = health_latencies(port)
        print(f"/health alone: {summary(alone)}")
        flood = []
        for _ in range(1100):
            try:
                connection = socket.create_connection(("127.0.0.1", port), timeout=5)
                connection.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                flood.append(connection)
            except OSError:
                pass
        during = health_latencies(port)
        print(f"/health during a flood of 1,100 half-sent requests (file limit 256): {summary(during)}")
        for connection in flood:
            connection.close()

        for index in range(30):
            account = f"reader{index}"
            post(port, "/simulator/accounts", {"accountId": account})
            for _ in range(20):
                post(port, f"/simulator/accounts/{account}/purchases", {"productId": "com.example.florist.installation"})
        time.sleep(1)
        before = resident_mib(pid)
        streams = []
        for index in range(30):
            for _ in range(10):
                connection = socket.create_connection(("127.0.0.1", port), timeout=5)
                connection.sendall(
                    f"GET /simulator/accounts/reader{index}/updates HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
                streams.append(connection)
        time.sleep(3)
        with_streams = resident_mib(pid)
        for connection in streams:
            connection.close()
        time.sleep(2)
        after = resident_mib(pid)
        print(f"RSS: {before:.0f} MiB before, {with_streams:.0f} MiB with 300 unread update streams, "
              f"{after:.0f} MiB after they closed")
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
