#!/usr/bin/env python3
"""The pages of a running `iapkit serve` in a real headless Chromium (selenium + Debian's chromium-driver).

Usage: browser-tests.py BASE_URL SCREENSHOT_DIR

Drives what a person does: buy in the store and see it purchased, an ask-to-buy purchase waiting then approved, a
receipt and a JWS pasted into the inspector and verified (and a forged JWS refused). Every page is loaded at desktop
and phone widths, scanned with axe-core (from axe-selenium-python), and its console and network logs are checked: no
console error, no failed request, nothing fetched from outside the server. Prints one line per check and exits 1 on
the first failure, 2 when the browser cannot be started.
"""
import json
import os
import sys
import time
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
PAGES = ["/", "/overview", "/store", "/manager", "/inspector", "/customers"]
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
    wait_text(driver, "#account-status", f"Account {name} made")
    WebDriverWait(driver, 20).until(lambda d: not d.find_element(By.ID, "shop").get_attribute("hidden"))
    WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "[data-buy]"))


def main():
    os.makedirs(SHOTS, exist_ok=True)
    driver = start_browser()
    try:
        driver.set_window_size(*WIDTHS["desktop"])
        # 1. Buy a consumable and a subscription in the store, and see them purchased.
        driver.get(BASE + "/store")
        make_account(driver, "ana")
        catalog = api("GET", "/simulator/accounts/ana/products")["products"]
        consumable = next(p for p in catalog if p["kind"] == "consumable")
        subscription = next(p for p in catalog if p["kind"] == "autoRenewable")
        for product in (consumable, subscription):
            click(driver, f"[data-buy='{product['id']}']")
            wait_text(driver, f"[data-state='{product['id']}']", "Purchased")
        wait_text(driver, f"[data-product='{consumable['id']}'] .meta", "You have bought 1")
        wait_text(driver, "#subscriptions", subscription["displayName"])
        view = api("GET", "/simulator/accounts/ana")
        if subscription["id"] not in view["entitledProductIds"]:
            fail("the store said purchased but the simulator does not entitle the subscription")
        ok("store: a consumable and a subscription bought and shown purchased, count and subscription shown")
        driver.execute_script("window.scrollTo(0, document.getElementById('shop').offsetTop - 10)")
        driver.save_screenshot(os.path.join(SHOTS, "store.png"))

        # 2. Ask to buy: the purchase waits, is approved in the transaction manager (another tab), and the store
        #    shows it purchased.
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
        wait_text(driver, "#action-status", f"Approved {product['id']} for kid")
        driver.switch_to.window(store_tab)
        wait_text(driver, f"[data-state='{product['id']}']", "Purchased")
        ok("manager: an ask-to-buy purchase waited in the store, was approved in the manager, and the store showed it")

        # 3. A refund in the manager takes access away in the store.
        kid = api("GET", "/simulator/accounts/kid")
        bought = next(t for t in kid["transactions"] if t["productId"] == product["id"])
        driver.switch_to.window(manager_tab)
        click(driver, f"[data-refund='{bought['transactionId']}']")
        wait_text(driver, "#action-status", f"Refunded {product['id']}")
        driver.switch_to.window(store_tab)
        wait_text(driver, f"[data-state='{product['id']}']", "No access")
        try:
            WebDriverWait(driver, 20).until(
                conditions.element_to_be_clickable((By.CSS_SELECTOR, f"[data-buy='{product['id']}']")))
        except Exception:
            fail("store: the refunded product cannot be bought again")
        if product["id"] in api("GET", "/simulator/accounts/kid")["entitledProductIds"]:
            fail("the simulator still entitles the refunded product")
        ok("manager: a refund took access away, and the store showed it")

        # 4. A clock move in the manager renews ana's subscription: the move lists DID_RENEW, the store the new date.
        before = api("GET", "/simulator/accounts/ana")["subscriptions"][0]["expiresDate"]
        driver.switch_to.window(manager_tab)
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
        ok(f"manager: +31 days renewed the subscription (DID_RENEW listed, answered 200), the store shows {shown}")
        driver.switch_to.window(manager_tab)
        driver.close()
        driver.switch_to.window(store_tab)

        # 5. The customers page: ana as the server stores her (the store gave her account an app account token).
        driver.get(BASE + "/customers")
        click(driver, "[data-customer='ana']")
        wait_text(driver, "#owned", subscription["id"])
        wait_text(driver, "#timeline", "gained")
        served = api("GET", "/console/customers/" + api("GET", "/simulator/accounts/ana")["appAccountToken"])
        if sorted(served["entitledProductIds"]) != sorted(api("GET", "/simulator/accounts/ana")["entitledProductIds"]):
            fail(f"the server's entitlements differ from the store's: {served['entitledProductIds']}")
        listed = api("GET", "/console/customers")["customers"]
        token = api("GET", "/simulator/accounts/ana")["appAccountToken"]
        if token not in [c["customerId"] for c in listed]:
            fail(f"customers: ana ({token}) is not in the server's list: {listed}")
        WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, f"[data-open='{token}']"))
        driver.save_screenshot(os.path.join(SHOTS, "customers.png"))
        ok("customers: ana's entitlements, timeline and history as the server stores them, equal to the store's view")

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
        driver.save_screenshot(os.path.join(SHOTS, "overview.png"))
        ok(f"overview: {served['totals']['purchases']} purchases this month, as the server counts them, with charts and CSV")

        # 5b. The clock pauses and resumes from the manager; an interrupted purchase waits and is completed there.
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
        for width_name, size in WIDTHS.items():
            driver.set_window_size(*size)
            for page in PAGES:
                where = f"{page} at {width_name} width"
                driver.get(BASE + page)
                WebDriverWait(driver, 20).until(lambda d: d.execute_script("return document.readyState") == "complete")
                time.sleep(0.5)  # the page's first API calls
                driver.execute_script("window.scrollTo(0, 0)")
                if not driver.find_elements(By.TAG_NAME, "h1"):
                    fail(f"{where}: no heading")
                axe_scan(driver, where)
                check_logs(driver, where)
                name = "home" if page == "/" else page.strip("/")
                driver.save_screenshot(os.path.join(SHOTS, f"{name}-{width_name}.png"))
        ok("every page loaded at desktop and phone widths, no console error, no failed or outside request")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
