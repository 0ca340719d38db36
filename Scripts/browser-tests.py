#!/usr/bin/env python3
"""The pages of a running `iapkit serve` in a real headless Chromium (selenium + Debian's chromium-driver).

Usage: browser-tests.py BASE_URL SCREENSHOT_DIR [--simulator-off ADMIN_TOKEN]

With the simulator on (the default): drives what a person does: buy in the store and see it purchased, an ask-to-buy
purchase waiting then approved, a refund, a failing card, the clock moved; the customers, the overview and the log
(notifications with what the server did, a forged one refused, events sent to webhooks); a receipt and a JWS pasted
into the inspector and verified (and a forged JWS refused). The polish is checked where a person sees it: states and
dates in words relative to the store's clock, names instead of ids, offers only while the customer is eligible, ids
on one line, actions reachable on a phone, status lines that speak only for the latest action, forms reset.

With `--simulator-off`: the server serves a configured app over the first run's database without the local App
Store: the admin token is asked for and given, the overview is the first page, no page links to or asks for the
store's routes, and the customers, a customer and the log show what the first run stored.

Every page is loaded at desktop and phone widths, scanned with axe-core (from axe-selenium-python), and its console
and network logs are checked: no console error, no failed request, nothing fetched from outside the server. Prints
one line per check and exits 1 on the first failure, 2 when the browser cannot be started.
"""
import json
from datetime import datetime, timedelta
import os
import sys
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import (ElementClickInterceptedException, NoSuchElementException,
                                        StaleElementReferenceException)
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as conditions
from selenium.webdriver.support.ui import Select, WebDriverWait

BASE = sys.argv[1].rstrip("/")
SHOTS = sys.argv[2]
TOKEN = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--simulator-off" else None
PAGES = ["/", "/overview", "/store", "/manager", "/inspector", "/customers", "/log"]
PAGES_OFF = ["/", "/overview", "/inspector", "/customers", "/log"]
WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}


def fail(message):
    print(f"FAIL {message}", flush=True)
    sys.exit(1)


def ok(message):
    print(f"ok   {message}", flush=True)


def api(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(BASE + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if TOKEN:
        request.add_header("Authorization", "Bearer " + TOKEN)
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read() or b"null")


def start_browser():
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--no-first-run", "--disable-extensions", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--disable-default-apps"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    service = Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    try:
        return webdriver.Chrome(service=service, options=options)
    except Exception as error:  # the browser itself is missing or broken: not a test failure of the pages
        print(f"SKIP the browser could not start: {error}", flush=True)
        sys.exit(2)


def check_logs(driver, where):
    """No console error; every request went to this server and none failed."""
    for entry in driver.get_log("browser"):
        if entry["level"] == "SEVERE":
            fail(f"{where}: console error: {entry['message']}")
    origin = BASE
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        method, params = message.get("method"), message.get("params", {})
        if method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            if not (url.startswith(origin) or url.startswith("data:")):
                fail(f"{where}: a request left the server: {url}")
        elif method == "Network.loadingFailed":
            fail(f"{where}: a request failed: {params.get('errorText')} ({params.get('type')})")
        elif method == "Network.responseReceived":
            status = params["response"]["status"]
            if status >= 400:
                fail(f"{where}: {params['response']['url']} answered {status}")


def axe_scan(driver, where):
    from axe_selenium_python import Axe
    axe = Axe(driver)
    axe.inject()
    results = axe.run()
    serious = [v for v in results["violations"] if v.get("impact") in ("serious", "critical")]
    if serious:
        details = "; ".join(f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes'][:3]]}"
                            for v in serious)
        fail(f"{where}: axe found {len(serious)} serious or critical violations: {details}")
    ok(f"{where}: axe-core, no serious or critical violation ({len(results['violations'])} minor)")


def wait_text(driver, selector, text, timeout=20):
    try:
        WebDriverWait(driver, timeout).until(conditions.text_to_be_present_in_element((By.CSS_SELECTOR, selector), text))
    except Exception:
        found = [e.text for e in driver.find_elements(By.CSS_SELECTOR, selector)]
        fail(f"'{text}' never appeared in {selector} (found {found})")


def click(driver, selector, timeout=20):
    """Clicks the element when it is there; pages redraw sections when their data change, so an element found a moment
    ago may have been replaced: find it again."""
    deadline = time.time() + timeout
    while True:
        try:
            driver.find_element(By.CSS_SELECTOR, selector).click()
            return
        except (StaleElementReferenceException, NoSuchElementException, ElementClickInterceptedException):
            if time.time() > deadline:
                fail(f"could not click {selector}")
            time.sleep(0.1)


def make_account(driver, name, ask_to_buy=False):
    driver.find_element(By.ID, "new-id").send_keys(name)
    if ask_to_buy:
        driver.find_element(By.ID, "new-ask").click()
    driver.find_element(By.ID, "create-account").click()
    wait_text(driver, "#new-account-status", f"Account {name} made")
    WebDriverWait(driver, 20).until(lambda d: not d.find_element(By.ID, "shop").get_attribute("hidden"))
    WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "[data-buy]"))
    if driver.find_element(By.ID, "new-id").get_attribute("value") or driver.find_element(By.ID, "new-ask").is_selected():
        fail("store: the new-account form kept its values after the account was made")


def text_of(driver, selector):
    return " ".join(e.text for e in driver.find_elements(By.CSS_SELECTOR, selector))


def check_ids_on_one_line(driver, where):
    """Every id shown in a monospaced cell sits on one line: a number never breaks in the middle."""
    broken = driver.execute_script("""
        return [...document.querySelectorAll('td.mono')].filter((cell) => {
          const text = [...cell.childNodes].find((node) => node.nodeType === Node.TEXT_NODE && node.textContent.trim());
          if (!text) return false;
          const range = document.createRange();
          range.selectNodeContents(text);
          const tops = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
          return tops.size > 1;
        }).map((cell) => cell.textContent);""")
    if broken:
        fail(f"{where}: ids broken over lines: {broken[:3]}")


def check_badges_apart(driver, where):
    """A badge keeps its distance from the text beside it."""
    tight = driver.execute_script("""
        return [...document.querySelectorAll('.badge')].filter((badge) =>
          parseFloat(getComputedStyle(badge).marginLeft) < 2 || parseFloat(getComputedStyle(badge).marginRight) < 2
        ).length;""")
    if tight:
        fail(f"{where}: {tight} badges touch the text beside them")


def check_reachable(driver, selector, where):
    """At the window's width, every control matched lies within it (no sideways scrolling to reach an action)."""
    outside = driver.execute_script("""
        return [...document.querySelectorAll(arguments[0])].filter((node) => {
          const box = node.getBoundingClientRect();
          return box.width > 0 && (box.right > window.innerWidth + 1 || box.left < -1);
        }).map((node) => node.outerHTML.slice(0, 80));""", selector)
    if outside:
        fail(f"{where}: controls off-screen: {outside[:3]}")
    if not driver.find_elements(By.CSS_SELECTOR, selector):
        fail(f"{where}: no {selector} to check")


def forged_notification():
    """A notification body whose signature does not verify (the header and claims of a real one, any signature)."""
    import base64
    def part(value):
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")
    payload = part({"notificationType": "DID_RENEW", "notificationUUID": "forged-uuid-1",
                    "data": {"bundleId": "com.example.florist"}, "signedDate": int(time.time() * 1000)})
    header = part({"alg": "ES256", "x5c": ["AAAA", "AAAA", "AAAA"]})
    return {"signedPayload": f"{header}.{payload}.AAAA"}


def main():
    os.makedirs(SHOTS, exist_ok=True)
    driver = start_browser()
    try:
        driver.set_window_size(*WIDTHS["desktop"])
        # 1. Buy a consumable and a subscription in the store, and see them purchased; the subscription's group
        #    offers its introductory offer only until the account has used it.
        driver.get(BASE + "/store")
        make_account(driver, "ana")
        catalog = api("GET", "/simulator/accounts/ana/products")["products"]
        consumable = next(p for p in catalog if p["kind"] == "consumable")
        subscription = next(p for p in catalog if p["kind"] == "autoRenewable")
        group = [p for p in catalog if p.get("subscriptionGroupId") == subscription["subscriptionGroupId"]]
        offered = [p for p in group if p["isEligibleForIntroductoryOffer"] and p.get("introductoryOffer")]
        if not offered:
            fail("the catalog's subscription group has no introductory offer to check")
        for product in offered:
            wait_text(driver, f"[data-product='{product['id']}'] .meta", "Introductory offer")
        for product in (consumable, subscription):
            click(driver, f"[data-buy='{product['id']}']")
            wait_text(driver, f"[data-state='{product['id']}']", "Purchased")
        wait_text(driver, f"[data-product='{consumable['id']}'] .meta", "You have bought 1")
        wait_text(driver, "#subscriptions", subscription["displayName"])
        view = api("GET", "/simulator/accounts/ana")
        if subscription["id"] not in view["entitledProductIds"]:
            fail("the store said purchased but the simulator does not entitle the subscription")
        try:
            WebDriverWait(driver, 20).until(lambda d: "Introductory offer" not in text_of(d, "#products"))
        except Exception:
            fail(f"store: an introductory offer is still shown after it was used: {text_of(driver, '#products')}")
        if any(p["isEligibleForIntroductoryOffer"] for p in api("GET", "/simulator/accounts/ana/products")["products"]
               if p.get("subscriptionGroupId") == subscription["subscriptionGroupId"]):
            fail("the simulator still says ana is eligible for the introductory offer")
        wait_text(driver, f"[data-subscription-state='{subscription['subscriptionGroupId']}']", "Active")
        wait_text(driver, f"[data-renews='{subscription['subscriptionGroupId']}']", "(in ")
        ok("store: a consumable and a subscription bought and shown purchased, the used introductory offer gone, "
           "the plan 'Active' and renewing 'in' days")
        driver.execute_script("window.scrollTo(0, document.getElementById('shop').offsetTop - 10)")
        driver.save_screenshot(os.path.join(SHOTS, "store.png"))

        # 2. Ask to buy: the purchase waits, is approved in the transaction manager (another tab), and the store
        #    shows it purchased. The manager names products by their names.
        driver.get(BASE + "/store")
        make_account(driver, "kid", ask_to_buy=True)
        store_tab = driver.current_window_handle
        product = next(p for p in catalog if p["kind"] == "nonConsumable")
        click(driver, f"[data-buy='{product['id']}']")
        wait_text(driver, f"[data-state='{product['id']}']", "Waiting for approval")
        driver.switch_to.new_window("tab")
        manager_tab = driver.current_window_handle
        driver.get(BASE + "/manager")
        click(driver, "[data-approve]")
        wait_text(driver, "#pending-status", f"Approved {product['displayName']} for kid")
        driver.switch_to.window(store_tab)
        wait_text(driver, f"[data-state='{product['id']}']", "Purchased")
        ok("manager: an ask-to-buy purchase waited in the store, was approved in the manager, and the store showed it")

        # 3. A refund in the manager takes access away in the store; its message is in kid's section, and the
        #    approval's message is gone.
        kid = api("GET", "/simulator/accounts/kid")
        bought = next(t for t in kid["transactions"] if t["productId"] == product["id"])
        driver.switch_to.window(manager_tab)
        click(driver, f"[data-refund='{bought['transactionId']}']")
        wait_text(driver, "[data-account-status='kid']", f"Refunded {product['displayName']}")
        if driver.find_element(By.ID, "pending-status").text:
            fail("manager: the approval's status line still speaks after the refund")
        driver.switch_to.window(store_tab)
        wait_text(driver, f"[data-state='{product['id']}']", "No access")
        try:
            WebDriverWait(driver, 20).until(
                conditions.element_to_be_clickable((By.CSS_SELECTOR, f"[data-buy='{product['id']}']")))
        except Exception:
            fail("store: the refunded product cannot be bought again")
        if product["id"] in api("GET", "/simulator/accounts/kid")["entitledProductIds"]:
            fail("the simulator still entitles the refunded product")
        ok("manager: a refund took access away, and the store showed it; only the refund's status line speaks")

        # 3a. On a phone, every action of the manager is on screen: rows become cards, nothing scrolls sideways.
        driver.switch_to.window(manager_tab)
        driver.set_window_size(*WIDTHS["phone"])
        time.sleep(0.5)
        check_reachable(driver, "[data-refund], [data-delete], [data-refund-request]", "manager at phone width")
        check_ids_on_one_line(driver, "manager at phone width")
        driver.execute_script("document.querySelector('[data-refund]').closest('tr').scrollIntoView()")
        driver.save_screenshot(os.path.join(SHOTS, "manager-actions-phone.png"))
        driver.set_window_size(*WIDTHS["desktop"])
        ok("manager: at phone width every Refund, Request refund and Delete is on screen, ids on one line")

        # 4. A clock move in the manager renews ana's subscription: the move lists DID_RENEW, the store the new date.
        before = api("GET", "/simulator/accounts/ana")["subscriptions"][0]["expiresDate"]
        click(driver, "[data-advance='2678400']")
        wait_text(driver, "#changes", "DID_RENEW")
        after = api("GET", "/simulator/accounts/ana")["subscriptions"][0]
        if after["expiresDate"] <= before or after["state"] != "subscribed":
            fail(f"the subscription did not renew: {before} -> {after}")
        wait_text(driver, "#notifications", "200 recorded")
        driver.save_screenshot(os.path.join(SHOTS, "manager.png"))
        driver.switch_to.window(store_tab)
        Select(driver.find_element(By.ID, "account")).select_by_value("ana")
        shown = after["expiresDate"].replace("T", " ")[:16] + " UTC"
        wait_text(driver, "#subscriptions", shown)
        wait_text(driver, "#purchases", " ago)")
        check_ids_on_one_line(driver, "store")
        check_badges_apart(driver, "store")
        ok(f"manager: +31 days renewed the subscription (DID_RENEW listed, answered 200), the store shows {shown}, "
           "the first purchase 'ago'")

        # 4a. A failing card: at the renewal the plan goes into billing retry, and the store says so in words, the
        #     period as ended (not "Renews" a date in the past).
        api("POST", "/simulator/accounts", {"accountId": "bea", "appAccountToken": "00000000-0000-4000-8000-0000000000be"})
        silver = next(p for p in group if p["id"] != subscription["id"])
        result = api("POST", "/simulator/accounts/bea/purchases", {"productId": silver["id"]})
        api("POST", "/simulator/transactions/" + result["transaction"]["transactionId"] + "/finish", {})
        driver.switch_to.window(manager_tab)
        click(driver, "[data-billing='bea']")
        wait_text(driver, "[data-account-status='bea']", "Billing issue on for bea")
        due = api("GET", "/simulator/accounts/bea")["subscriptions"][0]["expiresDate"]
        jump = (datetime.fromisoformat(due.replace("Z", "+00:00")) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        api("POST", "/simulator/clock/jump", {"date": jump})
        state = api("GET", "/simulator/accounts/bea")["subscriptions"][0]["state"]
        if state not in ("inBillingRetry", "inGracePeriod"):
            fail(f"bea's card fails, yet after the renewal date her plan is {state}")
        driver.switch_to.window(store_tab)
        driver.get(BASE + "/store")  # bea was made through the API: the account list is read when the page loads
        WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#account option[value='bea']"))
        Select(driver.find_element(By.ID, "account")).select_by_value("bea")
        wait_text(driver, f"[data-subscription-state='{silver['subscriptionGroupId']}']", "Payment failed")
        wait_text(driver, "#subscriptions", "Period ended")
        wait_text(driver, f"[data-renews='{silver['subscriptionGroupId']}']", " ago)")
        if "inBillingRetry" in text_of(driver, "main") or "inGracePeriod" in text_of(driver, "main"):
            fail("store: a raw state name is shown")
        ok(f"store: a failing card put bea's plan in '{state}', said in words, its period 'ended … ago'")
        driver.switch_to.window(manager_tab)
        driver.close()
        driver.switch_to.window(store_tab)

        # 5. The customers page: ana as the server stores her (the store gave her account an app account token),
        #    found by a transaction id, with product names, lifetime spend and the notifications about her purchases.
        token = api("GET", "/simulator/accounts/ana")["appAccountToken"]
        renewal = api("GET", "/simulator/accounts/ana")["transactions"][-1]["transactionId"]
        driver.get(BASE + "/customers")
        field = driver.find_element(By.ID, "customer-id")
        field.send_keys(renewal)
        click(driver, "#lookup")
        wait_text(driver, "#customer-title", token)
        wait_text(driver, "#owned", subscription["displayName"])
        wait_text(driver, "#timeline", "gained")
        wait_text(driver, "#customer-notifications", "SUBSCRIBED")
        wait_text(driver, "#customer-notifications", "DID_RENEW")
        spend = driver.find_element(By.ID, "lifetime-spend").text
        if not any(c.isdigit() for c in spend):
            fail(f"customers: no lifetime spend shown: {spend}")
        if subscription["id"] in text_of(driver, "#owned"):
            fail("customers: a product id is shown where its name belongs")
        served = api("GET", "/console/customers/" + token)
        if sorted(served["entitledProductIds"]) != sorted(api("GET", "/simulator/accounts/ana")["entitledProductIds"]):
            fail(f"the server's entitlements differ from the store's: {served['entitledProductIds']}")
        listed = api("GET", "/console/customers")["customers"]
        if token not in [c["customerId"] for c in listed]:
            fail(f"customers: ana ({token}) is not in the server's list: {listed}")
        WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, f"[data-open='{token}']"))
        check_ids_on_one_line(driver, "customers")
        driver.execute_script("window.scrollTo(0, document.getElementById('customer').offsetTop - 10)")
        driver.save_screenshot(os.path.join(SHOTS, "customer.png"))
        ok(f"customers: ana found by a renewal's transaction id, names, lifetime spend ({spend}), her notifications, "
           "and entitlements equal to the store's view")

        # 5a. The overview: the month's figures as the server stores them, charts with their numbers, CSV beside.
        driver.get(BASE + "/overview")
        Select(driver.find_element(By.ID, "range")).select_by_value("month")
        click(driver, "#show")
        served = api("GET", "/console/overview?range=month")
        if served["totals"]["purchases"] < 1:
            fail(f"overview: the server counts no purchase in the month: {served['totals']}")
        wait_text(driver, "#totals", "Purchases")
        WebDriverWait(driver, 20).until(
            lambda d: f"Purchases\n{served['totals']['purchases']}" in d.find_element(By.ID, "totals").text)
        if not driver.find_elements(By.CSS_SELECTOR, "svg.chart rect.bar"):
            fail("overview: no chart drawn")
        csv = driver.find_element(By.ID, "as-csv").get_attribute("href")
        if "format=csv" not in csv:
            fail(f"overview: the CSV link is {csv}")
        wait_text(driver, "#products-title + div", subscription["displayName"])
        driver.save_screenshot(os.path.join(SHOTS, "overview.png"))
        ok(f"overview: {served['totals']['purchases']} purchases this month, as the server counts them, with charts, "
           "CSV and product names")

        # 5b. The log: notifications with what the server did, filtered by type, one opened and decoded; a forged
        #     one refused and listed; the events sent to the webhook with their attempts.
        try:
            api("POST", "/v1/notifications", forged_notification())
            fail("a forged notification was accepted")
        except urllib.error.HTTPError as error:
            if error.code not in (400, 422):
                fail(f"a forged notification was answered {error.code}")
        driver.get(BASE + "/log")
        wait_text(driver, "#notification-log", "SUBSCRIBED")
        wait_text(driver, "#notification-log", "Recorded")
        Select(driver.find_element(By.ID, "n-type")).select_by_value("DID_RENEW")
        click(driver, "#n-apply")
        WebDriverWait(driver, 20).until(lambda d: "SUBSCRIBED" not in text_of(d, "#notifications"))
        wait_text(driver, "#notification-log", "DID_RENEW")
        click(driver, "#notification-log [data-open]")
        wait_text(driver, "#notification-opened", '"notificationType": "DID_RENEW"')
        wait_text(driver, "#notification-opened", "passed")
        driver.execute_script("window.scrollTo(0, document.getElementById('notifications').offsetTop - 60)")
        driver.save_screenshot(os.path.join(SHOTS, "log.png"))
        Select(driver.find_element(By.ID, "n-type")).select_by_value("")
        Select(driver.find_element(By.ID, "n-outcome")).select_by_value("refused")
        click(driver, "#n-apply")
        wait_text(driver, "#notification-log", "Refused")
        wait_text(driver, "#notification-log", "DID_RENEW")
        wait_text(driver, "#event-log", "initialPurchase")
        Select(driver.find_element(By.ID, "e-type")).select_by_value("renewal")
        click(driver, "#e-apply")
        WebDriverWait(driver, 20).until(lambda d: "initialPurchase" not in text_of(d, "#events"))
        wait_text(driver, "#event-log", "renewal")
        ok("log: notifications with what the server did, filtered, one decoded with its checks; a forged one refused "
           "and listed; events to the webhook filtered by type")

        # 5c. The clock pauses and resumes from the manager; an interrupted purchase waits and is completed there.
        driver.switch_to.new_window("tab")
        driver.get(BASE + "/manager")
        WebDriverWait(driver, 20).until(lambda d: d.find_element(By.ID, "pause").text == "Pause")
        click(driver, "#pause")
        wait_text(driver, "#clock-mode", "paused")
        if api("GET", "/simulator/clock").get("paused") is not True:
            fail("the manager said paused, the simulator's clock is not")
        click(driver, "#pause")
        wait_text(driver, "#clock-mode", "running")
        manager_tab = driver.current_window_handle
        driver.switch_to.window(store_tab)
        driver.get(BASE + "/store")
        Select(driver.find_element(By.ID, "account")).select_by_value("ana")
        WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "[data-buy]"))
        click(driver, "#interrupted")
        click(driver, f"[data-buy='{consumable['id']}']")
        wait_text(driver, f"[data-state='{consumable['id']}']", "Waiting for you")
        driver.switch_to.window(manager_tab)
        click(driver, "[data-approve]")
        driver.switch_to.window(store_tab)
        wait_text(driver, f"[data-state='{consumable['id']}']", "Purchased")
        wait_text(driver, f"[data-product='{consumable['id']}'] .meta", "You have bought 2")
        driver.switch_to.window(manager_tab)
        driver.close()
        driver.switch_to.window(store_tab)
        ok("manager: the clock paused and resumed; an interrupted purchase waited and was completed in the manager")

        # 6. The inspector: a receipt and a JWS verified, a forged JWS refused.
        receipt = api("GET", "/simulator/accounts/ana/receipt")["receiptData"]
        signed = view["transactions"][0]["signedTransaction"]
        header, payload, signature = signed.split(".")
        forged = ".".join([header, payload, ("A" if signature[0] != "A" else "B") + signature[1:]])
        driver.get(BASE + "/inspector")
        for name, document, valid in [("receipt", receipt, True), ("JWS", signed, True), ("forged JWS", forged, False)]:
            area = driver.find_element(By.ID, "document")
            area.clear()
            driver.execute_script("arguments[0].value = arguments[1];", area, document)
            driver.find_element(By.ID, "inspect").click()
            wait_text(driver, "#verdict", "valid" if valid else "not valid")
            verdict = driver.find_element(By.ID, "verdict").text
            if (verdict == "valid") != valid:
                fail(f"inspector: the {name} came out {verdict}")
            failed = driver.find_elements(By.CSS_SELECTOR, "[data-check-status='failed']")
            if valid and failed:
                fail(f"inspector: the valid {name} shows failed checks")
            if not valid and not failed:
                fail(f"inspector: the {name} shows no failed check")
            if name == "JWS":
                driver.execute_script("window.scrollTo(0, document.getElementById('result').offsetTop - 10)")
                driver.save_screenshot(os.path.join(SHOTS, "inspector.png"))
        ok("inspector: a receipt and a JWS verified field by field, a forged JWS refused with its failed check")
        check_logs(driver, "the flows above")

        # 7. Every page at both widths: loads, accessible, nothing failed, nothing from outside.
        every_page(driver, PAGES, "")
    finally:
        driver.quit()


def every_page(driver, pages, suffix):
    """Every page at both widths: loads, accessible, nothing failed, nothing from outside, ids on one line."""
    for width_name, size in WIDTHS.items():
        driver.set_window_size(*size)
        for page in pages:
            where = f"{page} at {width_name} width" + (" (simulator off)" if suffix else "")
            driver.get(BASE + page)
            WebDriverWait(driver, 20).until(lambda d: d.execute_script("return document.readyState") == "complete")
            time.sleep(0.5)  # the page's first API calls
            driver.execute_script("window.scrollTo(0, 0)")
            if not driver.find_elements(By.TAG_NAME, "h1"):
                fail(f"{where}: no heading")
            axe_scan(driver, where)
            check_logs(driver, where)
            check_ids_on_one_line(driver, where)
            if TOKEN:
                links = driver.find_elements(By.CSS_SELECTOR, "a[href^='/store'], a[href^='/manager']")
                if links:
                    fail(f"{where}: links to the store's pages with the simulator off: {[a.text for a in links]}")
            name = "home" if page == "/" else page.strip("/")
            driver.save_screenshot(os.path.join(SHOTS, f"{name}-{width_name}{suffix}.png"))
    ok("every page loaded at desktop and phone widths" + (" (simulator off)" if suffix else "")
       + ", no console error, no failed or outside request")


def main_simulator_off():
    """The same database served for a configured app without the local App Store, behind the admin token."""
    os.makedirs(SHOTS, exist_ok=True)
    for page in ("/store", "/manager", "/simulator"):
        try:
            api("GET", page)
            fail(f"{page} answers with the simulator off")
        except urllib.error.HTTPError as error:
            if error.code != 404:
                fail(f"{page} answered {error.code} with the simulator off, not 404")
    driver = start_browser()
    try:
        driver.set_window_size(*WIDTHS["desktop"])
        driver.get(BASE + "/")
        WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.ID, "admin-token"))
        driver.find_element(By.ID, "admin-token").send_keys(TOKEN)
        driver.find_element(By.CSS_SELECTOR, "#token-form button").click()
        wait_text(driver, "h1", "Overview")
        wait_text(driver, "#totals", "Purchases")
        driver.get_log("browser")  # the 401s that asked for the token
        driver.get_log("performance")
        navigation = text_of(driver, "header.site nav")
        if "Store" in navigation or "Manager" in navigation or "Home" in navigation:
            fail(f"the navigation lists pages that are off: {navigation}")
        if driver.find_element(By.ID, "clock").text:
            fail(f"the header shows a store clock with the simulator off: {driver.find_element(By.ID, 'clock').text}")
        ok("simulator off: the admin token asked for and given, the overview is the first page, no store in the "
           "navigation")
        # Two apps served: the overview offers a choice, and the other app's overview is its own (empty).
        chooser = driver.find_element(By.ID, "app")
        if not chooser.is_displayed() or len(Select(chooser).options) != 2:
            fail("simulator off: two apps are served, but the overview offers no choice of app")
        florist = driver.find_element(By.ID, "totals").text
        Select(chooser).select_by_value("com.example.shop")
        click(driver, "#show")
        # The overview is drawn anew: an element read a moment ago may be gone.
        WebDriverWait(driver, 20, ignored_exceptions=(StaleElementReferenceException, NoSuchElementException)).until(
            lambda d: "com.example.shop" in d.find_element(By.ID, "totals-title").text
            and "Purchases\n0" in d.find_element(By.ID, "totals").text)
        if "Purchases\n0" in florist:
            fail(f"simulator off: the second app's overview is not its own: {florist!r}")
        ok("simulator off: two apps, the overview of each chosen by name")

        customers = api("GET", "/console/customers?bundleId=com.example.florist")["customers"]
        if not customers:
            fail("simulator off: the first run's customers are not listed")
        driver.get(BASE + "/customers")
        if driver.find_element(By.ID, "known-panel").is_displayed():
            fail("simulator off: the store's accounts panel is shown")
        WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "[data-open]"))
        buyer = next(c for c in customers if c["purchases"] > 1)
        click(driver, f"[data-open='{buyer['customerId']}']")
        wait_text(driver, "#customer-title", buyer["customerId"])
        wait_text(driver, "#customer-notifications", "SUBSCRIBED")
        if any(p.startswith("com.example.") for p in text_of(driver, "#owned").split()):
            fail(f"simulator off: product ids shown: {text_of(driver, '#owned')}")
        driver.save_screenshot(os.path.join(SHOTS, "customer-off.png"))
        driver.get(BASE + "/log")
        wait_text(driver, "#notification-log", "Recorded")
        ok("simulator off: the stored customers listed, one opened with names and notifications, the log shown")
        check_logs(driver, "the flows above (simulator off)")
        every_page(driver, PAGES_OFF, "-off")
    finally:
        driver.quit()


if __name__ == "__main__":
    main_simulator_off() if TOKEN else main()
