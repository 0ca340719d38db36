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

  /** Writes a message into a status line (a live region), styled good, bad or wait. */
  function say(node, text, tone) {
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
    if (!node) return;
    const tick = async () => {
      try {
        const answer = await api("GET", "/simulator/clock");
        node.textContent = "Store clock: " + date(answer.now);
      } catch (error) {
        node.textContent = error.status === 404 ? "Simulator off" : "";
      }
    };
    await tick();
    setInterval(tick, 5000);
  }

  document.addEventListener("DOMContentLoaded", startClock);

  return { api, el, fill, date, say };
})();
