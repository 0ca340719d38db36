"""Collects signed transactions from a running `iapkit serve` simulator: ACCOUNTS accounts each buying the consumable
PURCHASES times. Writes one request body ({"signedTransaction": ...}) per line to OUT, for the wrk script."""
import http.client
import json
import sys

port, accounts, purchases, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
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
        post("/simulator/accounts", {"accountId": f"bench{account}"})
        for _ in range(purchases):
            bought = post(f"/simulator/accounts/bench{account}/purchases",
                          {"productId": "com.example.florist.installation"})
            lines.write(json.dumps({"signedTransaction": bought["transaction"]["signedTransaction"]}) + "\n")
