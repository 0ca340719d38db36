// The storefront: the catalog for one account, bought through /simulator as an app's StoreClient buys.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const { api, el, fill, date, say, when, subscriptionState } = IAPKit;
  const accountSelect = document.getElementById("account");
  const accountStatus = document.getElementById("account-status");
  const newAccountStatus = document.getElementById("new-account-status");
  const shop = document.getElementById("shop");
  const productsNode = document.getElementById("products");
  const subscriptionsNode = document.getElementById("subscriptions");
  const purchasesNode = document.getElementById("purchases");

  let account = null;       // the account's id
  let products = [];        // the catalog as this account's storefront prices it
  let view = null;          // GET /simulator/accounts/{account}
  let pending = [];         // this account's purchases waiting for approval or for the customer
  let storeNow = null;      // the store's clock at the last refresh
  const states = {};        // product id -> { text, tone } of the latest purchase attempt
  const path = (id) => "/simulator/accounts/" + encodeURIComponent(id);

  async function loadAccounts(select) {
    const state = await api("GET", "/simulator");
    fill(accountSelect, el("option", { value: "" }, state.accounts.length ? "Choose an account" : "No account yet"),
      state.accounts.map((id) => el("option", { value: id }, id)));
    const wanted = select || sessionStorage.getItem("iapkit.account");
    if (wanted && state.accounts.includes(wanted)) {
      accountSelect.value = wanted;
      await choose(wanted);
    }
  }

  async function choose(id) {
    account = id || null;
    shop.hidden = !account;
    if (!account) return;
    sessionStorage.setItem("iapkit.account", account);
    products = (await api("GET", path(account) + "/products")).products;
    await refresh();
  }

  const deviceSelect = document.getElementById("device");

  function renderDevices() {
    const chosen = deviceSelect.value;
    const key = view.deviceIds.join();
    if (deviceSelect.dataset.devices !== key) {
      deviceSelect.dataset.devices = key;
      fill(deviceSelect, view.deviceIds.map((id, index) => el("option", { value: id }, `Device ${index + 1} (${id.slice(0, 8)})`)));
    }
    if (view.deviceIds.includes(chosen)) deviceSelect.value = chosen;
  }

  async function refresh() {
    if (!account) return;
    // The pending list first, then the account: an approval records the purchase before it clears the request, so
    // an account read after a pending list without the request has the purchase.
    const state = await api("GET", "/simulator");
    storeNow = state.now;
    view = await api("GET", path(account));
    // The products again: whether an introductory offer is still open depends on what the account bought since.
    products = (await api("GET", path(account) + "/products")).products;
    pending = state.pendingPurchases.filter((item) => item.accountId === account);
    for (const product of products) {
      const waiting = pending.find((item) => item.productId === product.id);
      const current = states[product.id];
      if (current && current.text === "Purchased" && product.kind !== "consumable" && !owned(product)) {
        states[product.id] = { text: "No access: refunded, revoked or expired", tone: "bad" };
        continue;
      }
      if (waiting) {
        states[product.id] = {
          text: waiting.reason === "askToBuy" ? "Waiting for approval" : "Waiting for you to finish outside the app",
          tone: "wait", since: waiting.requestedAt,
        };
      }
      else if (current && current.tone === "wait") {
        const bought = view.transactions.some((transaction) => transaction.productId === product.id &&
          new Date(transaction.purchaseDate) >= new Date(current.since));
        states[product.id] = bought ? { text: "Purchased", tone: "good" } : { text: "Declined", tone: "bad" };
      }
    }
    render();
  }

  let drawn = null;

  /** Redraws when what is shown changed (not at every refresh: a redraw loses the keyboard focus). */
  function render() {
    const key = JSON.stringify([view, pending.map((item) => item.id), states, products,
      view.transactions.map((t) => IAPKit.relative(t.expiresDate || t.purchaseDate, storeNow)),
      view.subscriptions.map((s) => IAPKit.relative(s.expiresDate, storeNow))]);
    if (key === drawn) return;
    drawn = key;
    renderDevices();
    renderSubscriptions();
    renderProducts();
    renderPurchases();
  }

  function owned(product) {
    return view.entitledProductIds.includes(product.id);
  }

  function productCard(product) {
    const state = states[product.id];
    const count = view.consumablesPurchased[product.id];
    const isOwned = owned(product);
    const waiting = pending.some((item) => item.productId === product.id);
    const meta = [];
    if (product.kind === "consumable") meta.push(`You have bought ${count || 0}`);
    if (product.subscriptionPeriod) meta.push(`Every ${period(product.subscriptionPeriod)}`);
    if (product.isEligibleForIntroductoryOffer && product.introductoryOffer) meta.push(offerWords(product.introductoryOffer));
    if (product.isFamilyShareable) meta.push("Family Sharing");
    const label = product.kind === "consumable" ? "Buy" : isOwned ? "Owned" : "Buy";
    return el("article", { class: "card", "data-product": product.id, "aria-labelledby": "name-" + cssId(product.id) },
      el("div", { class: "name", id: "name-" + cssId(product.id) }, product.displayName),
      el("div", { class: "description" }, product.description),
      el("div", { class: "meta" }, meta.join(" · ")),
      el("div", { class: "actions" },
        el("span", { class: "price" }, product.displayPrice),
        el("button", {
          type: "button", "data-buy": product.id, disabled: (isOwned && product.kind !== "consumable") || waiting,
          "aria-label": `${label} ${product.displayName} for ${product.displayPrice}`,
          onclick: () => buy(product),
        }, label),
      ),
      el("p", { class: "status" + (state ? " " + state.tone : ""), role: "status", "aria-live": "polite", "data-state": product.id },
        state ? state.text : isOwned && product.kind !== "consumable" ? "Purchased" : ""),
    );
  }

  function renderProducts() {
    const sections = [];
    const add = (title, list) => {
      if (!list.length) return;
      const id = "section-" + sections.length;
      sections.push(el("section", { class: "panel", "aria-labelledby": id },
        el("h2", { id }, title), el("div", { class: "grid" }, list.map(productCard))));
    };
    add("Flowers and other consumables", products.filter((p) => p.kind === "consumable"));
    add("Yours to keep", products.filter((p) => p.kind === "nonConsumable"));
    const groups = new Map();
    for (const product of products.filter((p) => p.kind === "autoRenewable")) {
      const key = product.subscriptionGroupId;
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(product);
    }
    for (const list of groups.values()) {
      list.sort((a, b) => (a.subscriptionGroupLevel || 99) - (b.subscriptionGroupLevel || 99));
      add(`Subscriptions: ${list[0].subscriptionGroupName || list[0].subscriptionGroupId} (best first)`, list);
    }
    add("Passes (non-renewing)", products.filter((p) => p.kind === "nonRenewable"));
    fill(productsNode, sections);
  }

  function renderSubscriptions() {
    if (!view.subscriptions.length) {
      fill(subscriptionsNode, el("p", {}, "None yet."));
      return;
    }
    const name = (id) => (products.find((p) => p.id === id) || { displayName: id }).displayName;
    fill(subscriptionsNode, view.subscriptions.map((subscription) => {
      const facts = [];
      const change = subscription.renewsToProductId && subscription.renewsToProductId !== subscription.productId;
      const state = subscriptionState(subscription.state);
      const over = IAPKit.isPast(subscription.expiresDate, storeNow);
      facts.push(el("dt", {}, "Plan"), el("dd", {}, name(subscription.productId), " ",
        el("span", { class: "badge " + state.tone, "data-subscription-state": subscription.groupId }, state.text)));
      facts.push(el("dt", {}, over ? "Period ended" : subscription.willAutoRenew ? "Renews" : "Ends"),
        el("dd", { "data-renews": subscription.groupId }, when(subscription.expiresDate, storeNow)));
      if (change) facts.push(el("dt", {}, "Next period"), el("dd", {}, name(subscription.renewsToProductId), " (pending change)"));
      if (subscription.gracePeriodExpiresDate) {
        facts.push(el("dt", {}, IAPKit.isPast(subscription.gracePeriodExpiresDate, storeNow) ? "Grace period ended" : "Grace period until"),
          el("dd", {}, when(subscription.gracePeriodExpiresDate, storeNow)));
      }
      if (subscription.isFamilyShared) facts.push(el("dt", {}, "Shared"), el("dd", {}, "through Family Sharing"));
      const note = messages[subscription.groupId];
      const toggle = el("button", {
        type: "button", class: "secondary", "data-auto-renew": subscription.groupId,
        onclick: async () => {
          clearMessages();
          try {
            view = await api("POST", path(account) + "/auto-renew", { groupId: subscription.groupId, enabled: !subscription.willAutoRenew });
            messages[subscription.groupId] = { text: subscription.willAutoRenew ? "Auto-renew is off: the plan ends with this period." : "Auto-renew is on again.", tone: "good" };
          } catch (error) {
            messages[subscription.groupId] = { text: error.message, tone: "bad" };
          }
          drawn = null;
          render();
        },
      }, subscription.willAutoRenew ? "Turn off auto-renew" : "Turn on auto-renew");
      return el("div", { class: "card", "data-group": subscription.groupId },
        el("div", { class: "name" }, subscription.groupName || subscription.groupId),
        el("dl", { class: "fields" }, facts),
        subscription.state === "subscribed" || subscription.state === "inGracePeriod" ? el("div", { class: "actions" }, toggle) : null,
        note ? el("p", { class: "status " + note.tone, role: "status", "data-group-status": subscription.groupId }, note.text) : null);
    }));
  }

  function renderPurchases() {
    if (!view.transactions.length) {
      fill(purchasesNode, el("p", {}, "Nothing bought yet."));
      return;
    }
    const name = (id) => (products.find((p) => p.id === id) || { displayName: id }).displayName;
    const rows = [...view.transactions].reverse().map((transaction) => el("tr", { "data-transaction": transaction.transactionId },
      el("th", { scope: "row" }, name(transaction.productId)),
      el("td", { "data-label": "Bought" }, when(transaction.purchaseDate, storeNow)),
      el("td", { "data-label": "Expires" }, transaction.expiresDate ? when(transaction.expiresDate, storeNow) : "never"),
      el("td", { "data-label": "State" }, transaction.revocationDate ? el("span", { class: "badge bad" }, "Refunded " + IAPKit.relative(transaction.revocationDate, storeNow))
        : transaction.expiresDate && IAPKit.isPast(transaction.expiresDate, storeNow) ? el("span", { class: "badge info" }, "Period over")
        : el("span", { class: "badge good" }, transaction.expiresDate ? "Current period" : "Owned")),
      el("td", { "data-label": "Transaction", class: "mono" }, transaction.transactionId)));
    fill(purchasesNode, el("table", { class: "stack" },
      el("caption", { class: "visually-hidden" }, "Purchases, newest first"),
      el("thead", {}, el("tr", {}, ["Product", "Bought", "Expires", "State", "Transaction"].map((title) => el("th", { scope: "col" }, title)))),
      el("tbody", {}, rows)));
  }

  async function buy(product) {
    clearMessages();
    states[product.id] = { text: "Purchase in progress…", tone: "wait", since: new Date(0).toISOString() };
    render();
    try {
      const deviceId = deviceSelect.value || view.deviceIds[0];
      const clock = await api("GET", "/simulator/clock");
      const result = await api("POST", path(account) + "/purchases", {
        productId: product.id, deviceId, interrupted: document.getElementById("interrupted").checked,
      });
      if (result.outcome === "purchased") {
        // Deliver, then finish, as an app must.
        await api("POST", "/simulator/transactions/" + encodeURIComponent(result.transaction.transactionId) + "/finish");
        states[product.id] = { text: "Purchased", tone: "good" };
      } else if (result.outcome === "pending") {
        states[product.id] = {
          text: result.pending.reason === "askToBuy" ? "Waiting for approval" : "Waiting for you to finish outside the app",
          tone: "wait", since: clock.now,
        };
      } else {
        states[product.id] = { text: "Cancelled", tone: "bad" };
      }
    } catch (error) {
      states[product.id] = { text: "Failed: " + error.message, tone: "bad" };
    }
    await refresh();
  }

  function period(iso) {
    const match = /^P(\d+)([DWMY])$/.exec(iso || "");
    if (!match) return iso;
    const units = { D: "day", W: "week", M: "month", Y: "year" };
    const count = Number(match[1]);
    return count === 1 ? units[match[2]] : `${count} ${units[match[2]]}s`;
  }

  /** An introductory offer in words: "Introductory offer: 1 week free". */
  function offerWords(offer) {
    const periods = offer.numberOfPeriods || 1;
    const length = offer.period ? (periods === 1 ? period(offer.period) : `${periods} × ${period(offer.period)}`) : "";
    if (offer.paymentMode === "freeTrial") return `Introductory offer: ${length ? length + " " : ""}free`;
    const each = offer.paymentMode === "payAsYouGo" ? " a period" : "";
    return `Introductory offer${offer.price !== undefined ? ": " + offer.price + each : ""}${length ? " for " + length : ""}`;
  }

  // Messages of the last action taken on a subscription, by group (shown in its card).
  const messages = {};

  /** Forgets every earlier action's message: a status line speaks only for the latest action. */
  function clearMessages() {
    if (Object.keys(messages).length) {
      for (const key of Object.keys(messages)) delete messages[key];
      drawn = null;  // the cards that showed one are drawn again without it
      if (view) render();
    }
    for (const node of [accountStatus, newAccountStatus]) say(node, "");
  }

  function cssId(text) { return text.replace(/[^A-Za-z0-9_-]/g, "_"); }

  accountSelect.addEventListener("change", () => {
    clearMessages();
    choose(accountSelect.value).catch((error) => say(accountStatus, error.message, "bad"));
  });
  document.getElementById("add-device").addEventListener("click", async () => {
    clearMessages();
    if (!account) return say(accountStatus, "Choose an account first.", "bad");
    try {
      const added = await api("POST", path(account) + "/devices");
      await refresh();
      deviceSelect.value = added.deviceId;
      say(accountStatus, `Signed in on a new device (${added.deviceId.slice(0, 8)}): its receipt is its own.`, "good");
    } catch (error) { say(accountStatus, error.message, "bad"); }
  });
  document.getElementById("restore").addEventListener("click", async () => {
    clearMessages();
    if (!account) return say(accountStatus, "Choose an account first.", "bad");
    try {
      const restored = await api("POST", path(account) + "/sync");
      say(accountStatus, `Restored: ${restored.transactions.length} transactions.`, "good");
      await refresh();
    } catch (error) { say(accountStatus, error.message, "bad"); }
  });
  document.getElementById("new-account").addEventListener("submit", async (event) => {
    event.preventDefault();
    clearMessages();
    const form = event.target;
    const id = document.getElementById("new-id").value.trim();
    try {
      await api("POST", "/simulator/accounts", {
        accountId: id,
        // As an app does for its signed-in user: every purchase carries it, and the server knows the customer by it.
        appAccountToken: crypto.randomUUID(),
        storefront: document.getElementById("new-storefront").value,
        askToBuy: document.getElementById("new-ask").checked,
      });
      form.reset();
      say(newAccountStatus, `Account ${id} made, with one device: it is buying now.`, "good");
      await loadAccounts(id);
    } catch (error) { say(newAccountStatus, error.message, "bad"); }
  });

  loadAccounts().catch((error) => say(accountStatus,
    error.status === 404 ? "The simulator is off on this server: start iapkit serve with it on to sell." : error.message, "bad"));
  setInterval(() => refresh().catch(() => {}), 3000);
});
