// What every IAPKit page shares: calls to this server's JSON API, small DOM helpers, the simulated clock in the header.
// No framework and nothing from outside this server.
"use strict";

const IAPKit = (() => {
  const tokenKey = "iapkit.adminToken";

  /** Calls this server; resolves to the parsed JSON answer, rejects with an Error carrying `status` and `code`. */
  async function api(method, path, body) {
    const headers = { Accept: "application/json" };
    const token = sessionStorage.getItem(tokenKey);
    if (token) headers.Authorization = "Bearer " + token;
    // Every request that changes something carries a JSON body: the server refuses any other (no form or no-preflight
    // fetch from another site can make one).
    if (body === undefined && method !== "GET") body = {};
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let answer = null;
    try { answer = text ? JSON.parse(text) : null; } catch { answer = null; }
    if (!response.ok) {
      const error = new Error((answer && answer.message) || response.status + " " + response.statusText);
      error.status = response.status;
      error.code = answer && answer.code;
      if (response.status === 401 || response.status === 403) askForToken(error.message);
      throw error;
    }
    return answer;
  }

  /** Makes an element: `el("p", { class: "x" }, "text", child)`. Text is always text, never HTML. */
  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (name.startsWith("on") && typeof value === "function") node.addEventListener(name.slice(2), value);
      else if (value === true) node.setAttribute(name, "");
      else node.setAttribute(name, String(value));
    }
    for (const child of children.flat()) {
      if (child === undefined || child === null || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  /** Replaces a node's children. */
  function fill(node, ...children) {
    node.replaceChildren();
    for (const child of children.flat()) {
      if (child === undefined || child === null || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }

  /** "2026-11-24 09:30 UTC" from an ISO 8601 date; "-" for none. */
  function date(iso) {
    if (!iso) return "-";
    const value = new Date(iso);
    if (Number.isNaN(value.getTime())) return String(iso);
    return value.toISOString().replace("T", " ").slice(0, 16) + " UTC";
  }

  /** "in 3 days", "2 hours ago", "now": how far `iso` is from `now` (the store's clock, else this computer's). */
  function relative(iso, now) {
    const moment = new Date(iso).getTime();
    const base = now ? new Date(now).getTime() : Date.now();
    if (Number.isNaN(moment) || Number.isNaN(base)) return "";
    const seconds = Math.round((moment - base) / 1000);
    const size = Math.abs(seconds);
    if (size < 60) return "now";
    const units = [["year", 365 * 86400], ["month", 30 * 86400], ["day", 86400], ["hour", 3600], ["minute", 60]];
    const [unit, length] = units.find(([, length]) => size >= length);
    const count = Math.floor(size / length);
    const text = `${count} ${unit}${count === 1 ? "" : "s"}`;
    return seconds > 0 ? "in " + text : text + " ago";
  }

  /** A date with how far it is from `now`: "2026-12-01 09:30 UTC (24 days ago)". */
  function when(iso, now) {
    if (!iso) return "-";
    const distance = relative(iso, now);
    return date(iso) + (distance ? ` (${distance})` : "");
  }

  /** Whether `iso` is before `now` (the store's clock, else this computer's). */
  function isPast(iso, now) {
    return Boolean(iso) && new Date(iso).getTime() <= (now ? new Date(now).getTime() : Date.now());
  }

  /** A subscription state said in words, with the badge tone it gets. */
  function subscriptionState(state) {
    return {
      subscribed: { text: "Active", tone: "good" },
      inGracePeriod: { text: "Payment failed, access kept (grace period)", tone: "wait" },
      inBillingRetry: { text: "Payment failed, no access (Apple retries billing)", tone: "bad" },
      expired: { text: "Expired", tone: "info" },
      revoked: { text: "Refunded or revoked", tone: "bad" },
    }[state] || { text: String(state), tone: "info" };
  }

  /** An amount in milli-units of its currency, as Apple signs prices: "USD 9.99". */
  function money(amount, currency) {
    return `${currency} ${(amount / 1000).toFixed(2)}`;
  }

  /** The store's clock (`/simulator/clock`) when the simulator is on, else null (dates are then said against this
   * computer's clock). */
  async function storeNow() {
    if (!simulatorOn()) return null;
    try { return (await api("GET", "/simulator/clock")).now; } catch { return null; }
  }

  /** Whether this server runs the local App Store: its pages and routes exist only then, and no page asks them
   * otherwise (the layout lists what is on in the body's `data-features`). */
  function simulatorOn() {
    return (document.body.dataset.features || "").split(" ").includes("simulator");
  }

  /**
   * Fills an app chooser (`<select>` inside a `<label>`) with the apps this server serves (`/health`); the label is
   * shown only when there is more than one to choose from. Resolves once filled.
   */
  async function chooseApp(select) {
    let apps = [];
    try { apps = (await api("GET", "/health")).apps || []; } catch { apps = []; }
    fill(select, apps.map((id) => el("option", { value: id }, id)));
    const wanted = new URLSearchParams(location.search).get("bundleId");
    if (wanted && apps.includes(wanted)) select.value = wanted;
    const label = select.closest("label");
    if (label) label.hidden = apps.length < 2;
  }

  /** The names of an app's products and subscription groups (`/console/names`), fetched once per app. */
  const nameBooks = {};
  async function names(bundleId) {
    const key = bundleId || "";
    if (!nameBooks[key]) {
      nameBooks[key] = api("GET", "/console/names" + (bundleId ? "?bundleId=" + encodeURIComponent(bundleId) : ""))
        .catch(() => ({ products: {}, groups: {} }));
    }
    const book = await nameBooks[key];
    return {
      product: (id) => (id && book.products[id]) || id,
      group: (id) => (id && book.groups[id]) || id,
    };
  }

  /**
   * Writes a message into a status line (a live region), styled good, bad or wait. A status line that belongs to an
   * action (`data-action`) is the only one that speaks: the others are cleared, so no old message stays beside a new
   * one.
   */
  function say(node, text, tone) {
    if (text && node.hasAttribute("data-action")) {
      for (const other of document.querySelectorAll(".status[data-action]")) {
        if (other !== node) { other.className = "status"; other.textContent = ""; }
      }
    }
    node.className = "status" + (tone ? " " + tone : "");
    node.textContent = text;
  }

  /** The admin token form, shown when the server asks for it (a server not on loopback). */
  function askForToken(message) {
    if (document.getElementById("token-form")) return;
    const input = el("input", { id: "admin-token", type: "password", autocomplete: "off" });
    const form = el(
      "form",
      {
        id: "token-form", class: "panel row", "aria-labelledby": "token-title",
        onsubmit: (event) => {
          event.preventDefault();
          sessionStorage.setItem(tokenKey, input.value);
          location.reload();
        },
      },
      el("p", { id: "token-title" }, "This server needs its admin token (" + message + ")."),
      el("label", { for: "admin-token" }, "Admin token", input),
      el("button", { type: "submit" }, "Use it"),
    );
    document.querySelector("main").prepend(form);
  }

  /** Keeps the header's clock showing the simulated time, when the simulator is on. */
  async function startClock() {
    const node = document.getElementById("clock");
    if (!node || !simulatorOn()) return;
    const tick = async () => {
      try {
        const answer = await api("GET", "/simulator/clock");
        node.textContent = "Store clock: " + date(answer.now);
      } catch (error) {
        node.textContent = "";
      }
    };
    await tick();
    setInterval(tick, 5000);
  }

  document.addEventListener("DOMContentLoaded", startClock);

  return { api, el, fill, date, say, relative, when, isPast, subscriptionState, money, names, storeNow, simulatorOn, chooseApp };
})();
