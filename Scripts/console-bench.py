"""The console at scale: an SQLite database generated with CUSTOMERS customers of the local App Store's florist app
(default 100,000) and about ten transactions each (a million: consumables, and for half of them a monthly
subscription renewed over the past year, some refunded), then `iapkit serve` (release build) on it and every console
read timed on loopback, each asked RUNS times (default 20): the median and the slowest.

    python3 Scripts/console-bench.py [CUSTOMERS] [RUNS]

The database is made by the server itself (its migrations), then filled with rows as the server writes them (the
overview's columns included) in one transaction. The server is started here and stopped by its process id."""
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from serve_process import start_serve  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
customers = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
work = os.path.join(ROOT, ".build", "console-bench")
os.makedirs(work, exist_ok=True)
database = os.path.join(work, "console.sqlite")
for suffix in ["", "-wal", "-shm"]:
    if os.path.exists(database + suffix):
        os.remove(database + suffix)
subprocess.run(["swift", "build", "-c", "release", "--product", "iapkit"], cwd=ROOT, check=True,
               stdout=subprocess.DEVNULL)
iapkit = os.path.join(ROOT, ".build", "release", "iapkit")
port = 18360
command = [iapkit, "serve", "--port", str(port), "--database", database, "--pki", os.path.join(work, "pki")]

# 1. The schema, as the server makes it.
server = start_serve(command, port)
server.terminate()
server.wait()

# 2. The rows: dates in reference seconds (since 2001) in the record, milliseconds in the columns.
APP = "com.example.florist"
REFERENCE = 978_307_200
now = time.time()
random.seed(7)
rows, owners, notes = [], [], []
next_id = 3_000_000_000_000_000


def transaction(original, product, bought, expires=None, price=0, refunded=None, trial=False):
    global next_id
    next_id += 1
    tid = str(next_id)
    original = original or tid
    record = {"transactionID": tid, "originalTransactionID": original, "productID": product, "quantity": 1,
              "purchaseDate": bought - REFERENCE, "ownership": "purchased", "isUpgraded": False,
              "environment": "Sandbox", "source": "signedTransaction", "signedDate": bought - REFERENCE,
              "price": price, "currency": "USD" if price else None, "storefront": "USA"}
    if expires:
        record["expiresDate"] = expires - REFERENCE
        record["kind"] = "autoRenewable"
    else:
        record["kind"] = "consumable"
    if refunded:
        record["revocation"] = {"date": refunded - REFERENCE, "kind": "refund"}
    if trial:
        record["offer"] = {"kind": "introductory", "isFreeTrial": True}
    record = {key: value for key, value in record.items() if value is not None}
    ms = lambda seconds: int(seconds * 1000) if seconds else None  # noqa: E731
    first = 1 if expires and tid == original else 0
    rows.append((tid, original, APP, product, ms(bought), "doc-" + tid, None, json.dumps(record), ms(bought),
                 ms(expires), ms(refunded), price, "USD" if price else None, "USA", 1 if trial else 0,
                 ms(bought) // 86_400_000, first, owner))
    return tid


for index in range(customers):
    customer = f"{index:08d}-0000-4000-8000-000000000000"
    owner = customer
    for _ in range(random.randint(0, 14)):
        bought = now - random.uniform(0, 365 * 86_400)
        refunded = bought + 86_400 if random.random() < 0.02 else None
        tid = transaction(None, "com.example.florist.installation", bought, price=19_990,
                          refunded=refunded if refunded and refunded < now else None)
        owners.append((APP, tid, customer, 1))
    if random.random() < 0.5:
        start = now - random.uniform(0, 365 * 86_400)
        original = transaction(None, "com.example.florist.vip.silver", start, expires=start + 7 * 86_400, trial=True)
        owners.append((APP, original, customer, 1))
        period = start + 7 * 86_400
        notes.append((original, "SUBSCRIBED", "INITIAL_BUY", start))
        while period < now and random.random() < 0.93:
            transaction(original, "com.example.florist.vip.silver", period, expires=period + 30 * 86_400,
                        price=4_990)
            notes.append((original, "DID_RENEW", None, period))
            period += 30 * 86_400
        if period < now:
            notes.append((original, "EXPIRED", "VOLUNTARY", period))

connection = sqlite3.connect(database)
connection.execute("PRAGMA journal_mode = WAL")
began = time.time()
with connection:
    connection.executemany(
        """INSERT INTO iap_transactions (transaction_id, original_transaction_id, bundle_id, product_id, signed_date,
            document, app_account_token, record, purchase_ms, expires_ms, revoked_ms, price, currency, storefront,
            trial, purchase_day, first_period, customer_id)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""", rows)
    connection.executemany(
        "INSERT INTO iap_owners (bundle_id, original_transaction_id, customer_id, claimed) VALUES (?, ?, ?, ?)",
        owners)
    # A notification for each subscription's start, renewal and end, as Apple sends them.
    connection.executemany(
        """INSERT INTO iap_notifications (bundle_id, notification_uuid, notification_type, subtype, signed_date,
            received_at, body, original_transaction_id, effect) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'recorded')""",
        [(APP, f"{index:08x}-0000-4000-8000-{index:012x}", kind, subtype, int(at * 1000), int(at * 1000) + 500,
          '{"signedPayload":"generated"}', original) for index, (original, kind, subtype, at) in enumerate(notes)])
connection.execute("ANALYZE")
connection.close()
print(f"{customers} customers, {len(rows)} transactions, {len(owners)} purchases owned, {len(notes)} notifications "
      f"(inserted in {time.time() - began:.0f} s; {os.path.getsize(database) >> 20} MB)")

# 3. The console's reads, timed.
server = start_serve(command, port)
heavy = max(set(o[2] for o in owners[:5000]), key=lambda c: sum(1 for o in owners[:5000] if o[2] == c))
middle = f"{customers // 2:08d}-0000-4000-8000-000000000000"
reads = [
    ("overview, last day", "/console/overview?range=day"),
    ("overview, last 7 days", "/console/overview?range=week"),
    ("overview, last 30 days", "/console/overview?range=month"),
    ("overview, last 30 days as CSV", "/console/overview?range=month&format=csv"),
    ("customers, first page (50)", "/console/customers"),
    ("customers, a page in the middle", f"/console/customers?after={middle}"),
    ("customers, search by transaction id", f"/console/customers?search={rows[len(rows) // 2][0]}"),
    ("customers, search by app account token", f"/console/customers?search={middle}"),
    ("a customer's page", f"/console/customers/{heavy}"),
    ("log, newest notifications (50)", "/console/notifications"),
    ("log, an older page", f"/console/notifications?before={int((now - 200 * 86_400) * 1000)}.f"),
    ("log, one type (EXPIRED)", "/console/notifications?type=EXPIRED"),
    ("log, a type and a subtype", "/console/notifications?type=SUBSCRIBED&subtype=INITIAL_BUY"),
    ("log, a week's range", "/console/notifications?from="
     + time.strftime("%Y-%m-%dT00:00:00Z", time.gmtime(now - 100 * 86_400))
     + "&to=" + time.strftime("%Y-%m-%dT00:00:00Z", time.gmtime(now - 93 * 86_400))),
    ("log of one customer", f"/console/notifications?customer={heavy}"),
    ("the log page (HTML)", "/log"),
    ("the overview page (HTML)", "/overview"),
]
print(f"\n| console read, {customers:,} customers, {len(rows):,} transactions, {runs} runs | median | slowest |")
print("|---|---|---|")
slowest_all = 0.0
try:
    for name, path in reads:
        times = []
        for _ in range(runs):
            began = time.perf_counter()
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as answer:
                answer.read()
                if answer.status != 200:
                    sys.exit(f"{path}: {answer.status}")
            times.append((time.perf_counter() - began) * 1000)
        slowest_all = max(slowest_all, max(times))
        print(f"| {name} | {statistics.median(times):.1f} ms | {max(times):.1f} ms |")
finally:
    server.terminate()
    server.wait()
print(f"\nslowest read: {slowest_all:.1f} ms ({'within' if slowest_all <= 200 else 'over'} 200 ms)")
