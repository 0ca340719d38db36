#!/usr/bin/env python3
"""Another site's page, in a real headless Chromium, tries to use a running `iapkit serve` (development mode).

Usage: browser-cross-origin.py BASE_URL

Serves a page from another loopback origin (its own port on 127.0.0.1, started and stopped here) whose script tries
what a hostile page can do without the user noticing: POSTs that need no CORS preflight (a Blob body with no type, a
text/plain body, an HTML form), a JSON POST (which needs a preflight), and reads of the operator pages' data. Then it
asks the server directly whether anything changed. Prints one line per check and the status the server answered each
attempt (from Chromium's network log); exits 1 on the first failure, 2 when the browser cannot be started.
"""
import http.server
import json
import threading
import time
import urllib.request
import importlib.util
import os
import sys

BASE = sys.argv[1].rstrip("/")
here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("browser_tests", os.path.join(here, "browser-tests.py"))
sys.argv = [sys.argv[0], BASE, os.devnull]  # browser-tests.py reads its arguments when loaded
browser_tests = importlib.util.module_from_spec(spec)
spec.loader.exec_module(browser_tests)
fail, ok, api, start_browser = browser_tests.fail, browser_tests.ok, browser_tests.api, browser_tests.start_browser

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>a page of another site</title></head>
<body><pre id="out">running</pre>
<iframe name="sink" title="sink"></iframe>
<form id="form" method="post" enctype="text/plain" target="sink" action="%(base)s/simulator/clock/advance">
<input name='{"seconds":86400,"x":"' value='"}'></form>
<script>
const base = %(base_json)s;
const results = {};
async function attempt(name, run) {
  try { results[name] = await run(); } catch (error) { results[name] = "blocked: " + error.name; }
}
(async () => {
  await attempt("blob", () => fetch(base + "/simulator/accounts", {method: "POST", mode: "no-cors",
      body: new Blob(['{"accountId":"evil-blob"}'])}).then(r => "sent, opaque=" + (r.type === "opaque")));
  await attempt("text", () => fetch(base + "/simulator/accounts", {method: "POST", mode: "no-cors",
      headers: {"Content-Type": "text/plain"}, body: '{"accountId":"evil-text"}'}).then(r => "sent " + r.type));
  await attempt("json", () => fetch(base + "/simulator/accounts", {method: "POST",
      headers: {"Content-Type": "application/json"}, body: '{"accountId":"evil-json"}'}).then(r => "read " + r.status));
  await attempt("read-simulator", () => fetch(base + "/simulator").then(r => r.text()).then(t => "read " + t.length));
  await attempt("read-console", () => fetch(base + "/console/customers").then(r => r.text()).then(t => "read " + t.length));
  document.getElementById("form").submit();
  await new Promise(resolve => setTimeout(resolve, 1500));
  document.getElementById("out").textContent = JSON.stringify(results);
  document.title = "done";
})();
</script></body></html>"""


class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = (PAGE % {"base": BASE, "base_json": json.dumps(BASE)}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main():
    before = api("GET", "/simulator")
    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    other = f"http://127.0.0.1:{site.server_address[1]}"
    ok(f"the other site's page is served at {other} (the server is {BASE})")
    driver = start_browser()
    try:
        driver.set_page_load_timeout(30)
        driver.get(other + "/")
        deadline = time.time() + 30
        while driver.title != "done":
            if time.time() > deadline:
                fail("the page's script did not finish in 30 s")
            time.sleep(0.1)
        results = json.loads(driver.find_element("id", "out").text)
        answered = {}
        for entry in driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") == "Network.responseReceived":
                response = message["params"]["response"]
                if response["url"].startswith(BASE):
                    answered.setdefault(response["url"][len(BASE):], []).append(response["status"])
    finally:
        driver.quit()
        site.shutdown()
    for name, outcome in results.items():
        ok(f"{name}: the page saw {outcome}")
    for path, statuses in sorted(answered.items()):
        ok(f"the server answered {path}: {statuses}")
    for name in ["json", "read-simulator", "read-console"]:
        if not str(results.get(name, "")).startswith("blocked"):
            fail(f"{name}: the other site's page read an answer: {results.get(name)} (CORS headers?)")
    ok("the other site's page could read none of the server's answers")
    for path, statuses in answered.items():
        if any(200 <= status < 300 for status in statuses):
            fail(f"the server accepted the other site's request to {path}: {statuses}")
    after = api("GET", "/simulator")
    created = [account for account in after["accounts"] if account.startswith("evil")]
    if created:
        fail(f"the other site's page created accounts: {created}")
    if after["accounts"] != before["accounts"]:
        fail(f"the accounts changed: {before['accounts']} -> {after['accounts']}")
    ok("no account was created")
    if isinstance(after["now"], (int, float)) and after["now"] - before["now"] > 3600:
        fail(f"the clock was moved: {before['now']} -> {after['now']}")
    if isinstance(after["now"], str) and after["now"][:10] != before["now"][:10]:
        fail(f"the clock was moved: {before['now']} -> {after['now']}")
    ok(f"the clock was not moved ({before['now']} -> {after['now']})")


if __name__ == "__main__":
    main()
