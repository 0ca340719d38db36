"""Collects signed transactions from a running `iapkit serve` simulator: ACCOUNTS accounts each buying the consumable
PURCHASES times. Writes one request body ({"signedTransaction": ...}) per line to OUT, for the wrk script.
With --tokens as a fifth argument every other account carries an app account token, so half the purchases are claimed
by a customer (what an app using IAPStoreClient's server mode posts) and half are not (an app posting StoreKit's
transactions as they are)."""
import http.client
import json
import sys
import uuid

port, accounts, purchases, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
tokens = sys.argv[5:] == ["--tokens"]
connection = http.client.HTTPConnection("127.0.0.1", port)


def post(path, body):
    connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    answer = json.loads(response.read())
    if response.status >= 300:
        raise SystemExit(f"{path}: {response.status} {answer}")
    return answer


with open(out, "w") as lines:
    for account in range(accounts):
        opened = {"accountId": f"bench{account}"}
        if tokens and account % 2 == 0:
            opened["appAccountToken"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"iapkit-bench-{account}"))
        post("/simulator/accounts", opened)
        for _ in range(purchases):
            bought = post(f"/simulator/accounts/bench{account}/purchases",
                          {"productId": "com.example.florist.installation"})
            lines.write(json.dumps({"signedTransaction": bought["transaction"]["signedTransaction"]}) + "\n")
