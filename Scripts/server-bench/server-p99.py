"""The servers' own view of a load run's tail: POST /v1/transactions answered 200, from the request duration histogram
each `iapkit serve` keeps at GET /metrics (Hummingbird's metrics middleware: from the request's head to its answer).

    python3 server-p99.py BEFORE AFTER    (each a file of one or more servers' /metrics text, concatenated)

Prints the bucket bound that holds the 99th percentile of the requests answered between the two snapshots, as
`<= N ms`. Each answer counts once here; wrk corrects for coordinated omission (an answer slower than twice the mean
interval adds the samples a steady client would have seen meanwhile), so a few rare stalls can make its p99 alone.
"""
import re
import sys

PATTERN = re.compile(
    r'^http_server_request_duration_bucket\{(?=[^}]*http_route="/v1/transactions")(?=[^}]*http_request_method="POST")'
    r'(?=[^}]*http_response_status_code="200")[^}]*le="([^"]+)"\} (\d+)', re.M)


def buckets(path):
    counts = {}
    with open(path, encoding="utf-8", errors="replace") as text:
        for bound, count in PATTERN.findall(text.read()):
            limit = float("inf") if bound == "+Inf" else float(bound)
            counts[limit] = counts.get(limit, 0) + int(count)
    return counts


def main():
    before, after = buckets(sys.argv[1]), buckets(sys.argv[2])
    run = {bound: after[bound] - before.get(bound, 0) for bound in after}
    total = run.get(float("inf"), 0)
    if total == 0:
        print("n/a")
        return
    for bound in sorted(run):
        if run[bound] >= 0.99 * total:
            print("<= %g ms" % (bound * 1000) if bound != float("inf") else "> 10 s")
            return


main()
