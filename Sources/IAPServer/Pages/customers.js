// The customers page: one customer as the server stores them (GET /console/customers/{id}).
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const { api, el, fill, date, say } = IAPKit;
  const input = document.getElementById("customer-id");
  const status = document.getElementById("lookup-status");
  const result = document.getElementById("customer");

  async function lookUp(id) {
    input.value = id;
    say(status, "Looking up…", "wait");
    try {
      const customer = await api("GET", "/console/customers/" + encodeURIComponent(id) + appQuery("?"));
      const book = await IAPKit.names(customer.bundleId);
      say(status, `Customer ${customer.customerId} of ${customer.bundleId}.`, "good");
      fill(result, render(customer, book));
      document.getElementById("customer-title").focus();
    } catch (error) {
      fill(result);
      say(status, `${error.code ? error.code + ": " : ""}${error.message}`, "bad");
    }
  }

  function render(customer, book) {
    const { when, subscriptionState, money } = IAPKit;
    const now = customer.now;
    const product = (id) => book.product(id);
    const owned = customer.entitledProductIds;
    const summary = customer.summary;
    const groups = (customer.entitlements.subscriptionGroups || []).map((group) => {
      const state = subscriptionState(group.state);
      const ends = group.expiresDate ? (IAPKit.isPast(group.expiresDate, now) ? "ended " : group.willAutoRenew === false ? "ends " : "renews ") + when(group.expiresDate, now) : null;
      return el("li", {}, `${book.group(group.groupID) || group.key}: ${product(group.currentProductID) || "nothing"} `,
        el("span", { class: "badge " + state.tone }, state.text),
        ends ? ", " + ends : "", group.willAutoRenew === false && !IAPKit.isPast(group.expiresDate, now) ? " (auto-renew off)" : "");
    });
    const consumables = (customer.entitlements.consumables || []).map((item) =>
      el("li", {}, `${product(item.productID)}: ${item.balance} left (${item.purchased} bought, ${item.consumed} used, ${item.refunded} refunded)`));
    const spent = summary && Object.keys(summary.spent).length
      ? Object.entries(summary.spent).sort(([a], [b]) => a.localeCompare(b)).map(([currency, amount]) => money(amount, currency)).join(", ")
      : "nothing";
    return [
      el("section", { class: "panel", "aria-labelledby": "customer-title" },
        el("h2", { id: "customer-title", tabindex: "-1" }, "Customer ", el("span", { class: "mono" }, customer.customerId)),
        el("dl", { class: "fields", id: "customer-facts" },
          el("dt", {}, "App"), el("dd", {}, customer.bundleId),
          el("dt", {}, "Storefront"), el("dd", {}, (summary && summary.storefront) || "unknown"),
          el("dt", {}, "Lifetime spend"), el("dd", { id: "lifetime-spend" }, spent + " (refunds left out, never converted)"),
          el("dt", {}, "Purchases"), el("dd", {}, String(summary ? summary.purchases : 0)),
          el("dt", {}, "Last purchase"), el("dd", {}, summary && summary.lastPurchase ? when(summary.lastPurchase, now) : "none"),
          el("dt", {}, "As of"), el("dd", {}, IAPKit.date(now) + (IAPKit.simulatorOn() ? " (the store's clock)" : "")))),
      el("section", { class: "panel", "aria-labelledby": "owns-title" },
        el("h2", { id: "owns-title" }, "Owns now"),
        el("p", { id: "owned" }, owned.length ? owned.map((id) => el("span", { class: "badge good" }, product(id))).flatMap((badge) => [badge, " "]) : "Nothing."),
        groups.length ? [el("h3", {}, "Subscriptions"), el("ul", {}, groups)] : null,
        consumables.length ? [el("h3", {}, "Consumables"), el("ul", {}, consumables)] : null),
      el("section", { class: "panel", "aria-labelledby": "timeline-title" },
        el("h2", { id: "timeline-title" }, "What they owned when"),
        customer.timeline.truncated ? el("p", {}, "Only the recent moments are shown.") : null,
        customer.timeline.stretches.length ? el("ol", { id: "timeline" }, customer.timeline.stretches.map((stretch) =>
          el("li", {},
            el("strong", {}, when(stretch.from, now)), ": ",
            stretch.entitledProductIds.length ? "owns " + stretch.entitledProductIds.map(product).join(", ") : "owns nothing",
            stretch.gained.length ? [" ", el("span", { class: "badge good" }, "gained " + stretch.gained.map(product).join(", "))] : null,
            stretch.lost.length ? [" ", el("span", { class: "badge bad" }, "lost " + stretch.lost.map(product).join(", "))] : null)))
          : el("p", {}, customer.transactions.length
            ? "Nothing they bought grants access over time (consumables only)." : "No purchase yet.")),
      el("section", { class: "panel", "aria-labelledby": "history-title" },
        el("h2", { id: "history-title" }, "Stored transactions"),
        customer.moreTransactions ? el("p", {}, "The newest " + customer.transactions.length +
          " are shown; the API lists every one (GET /v1/customers/{id}/transactions).") : null,
        el("div", { class: "table-scroll" }, el("table", { class: "stack", id: "transactions" },
          el("caption", { class: "visually-hidden" }, "Stored transactions, newest first"),
          el("thead", {}, el("tr", {}, ["Product", "Transaction", "Bought", "Expires", "Refunded", "From"].map((t) => el("th", { scope: "col" }, t)))),
          el("tbody", {}, customer.transactions.map((transaction) => el("tr", {},
            el("th", { scope: "row" }, product(transaction.productId)),
            el("td", { "data-label": "Transaction", class: "mono" }, transaction.transactionId),
            el("td", { "data-label": "Bought" }, when(transaction.purchaseDate, now)),
            el("td", { "data-label": "Expires" }, transaction.expiresDate ? (IAPKit.isPast(transaction.expiresDate, now) ? "ended " : "") + when(transaction.expiresDate, now) : "never"),
            el("td", { "data-label": "Refunded" }, transaction.revocationDate ? when(transaction.revocationDate, now) + (transaction.revocationReason ? ` (${transaction.revocationReason})` : "") : "no"),
            el("td", { "data-label": "From" }, sourceWords(transaction.source) + (transaction.ownership === "familyShared" ? ", shared by family" : "")))))))),
      el("section", { class: "panel", "aria-labelledby": "customer-notifications-title" },
        el("h2", { id: "customer-notifications-title" }, "Notifications about their purchases"),
        customer.notifications.length ? el("ul", { id: "customer-notifications" }, customer.notifications.map((item) => el("li", {},
          when(item.receivedAt, now), ": ", el("span", { class: "mono" }, item.notificationType + (item.subtype ? " / " + item.subtype : "")), ". ", item.summary)))
          : el("p", {}, "None recorded."),
        el("p", {}, el("a", { href: "/log?customer=" + encodeURIComponent(customer.customerId) + "&bundleId=" + encodeURIComponent(customer.bundleId) }, "Every notification of this customer in the log"))),
      customer.deliveries.length ? deliveries(customer) : null,
    ];
  }

  /** Where a stored transaction came from, in words. */
  function sourceWords(source) {
    return {
      signedTransaction: "a signed transaction", receipt: "a receipt", simulator: "the local App Store",
      manual: "entered by hand",
    }[source] || source;
  }

  // The customer's events as their app's backend received them (or has yet to): each with its attempts, and a retry.
  function deliveries(customer) {
    const note = el("p", { class: "status", role: "status", "aria-live": "polite" });
    async function retry(delivery) {
      say(note, `Sending ${delivery.type} again…`, "wait");
      try {
        await api("POST", "/console/deliveries/" + encodeURIComponent(delivery.eventId) + "/retry?endpoint=" +
          encodeURIComponent(delivery.endpoint));
        say(note, `${delivery.type} (${delivery.eventId}) is due again.`, "good");
      } catch (error) {
        say(note, `${error.code ? error.code + ": " : ""}${error.message}`, "bad");
      }
    }
    const last = (delivery) => delivery.attempts[delivery.attempts.length - 1];
    return el("section", { class: "panel", "aria-labelledby": "deliveries-title" },
      el("h2", { id: "deliveries-title" }, "Webhook deliveries"),
      el("div", { class: "table-scroll" }, el("table", { class: "stack", id: "deliveries" },
        el("caption", { class: "visually-hidden" }, "Events sent to the app's webhooks, newest first"),
        el("thead", {}, el("tr", {}, ["Event", "Delivery", "Attempts", "Last answer", "Created", ""].map((t) => el("th", { scope: "col" }, t)))),
        el("tbody", {}, customer.deliveries.map((delivery) => el("tr", {},
          el("th", { scope: "row", class: "mono" }, delivery.type),
          el("td", { "data-label": "Delivery" }, el("span", { class: "badge " + (delivery.state === "delivered" ? "good" : delivery.state === "failed" ? "bad" : "wait") },
            { pending: "Pending", delivered: "Delivered", failed: "Failed, gave up" }[delivery.state] || delivery.state)),
          el("td", { "data-label": "Attempts" }, String(delivery.attempts.length)),
          el("td", { "data-label": "Last answer" }, last(delivery) ? (last(delivery).status ? "HTTP " + last(delivery).status : last(delivery).error || "-") : "not tried yet"),
          el("td", { "data-label": "Created" }, IAPKit.when(delivery.createdAt, null)),
          el("td", {}, el("button", { type: "button", class: "secondary", "aria-label": `Send ${delivery.type} again`, onclick: () => retry(delivery) }, "Retry"))))))),
      note);
  }

  // Every customer the server stores, a page at a time: each opens their page.
  const list = document.getElementById("list");
  const listStatus = document.getElementById("list-status");
  const rows = el("tbody", {});
  let next = null;
  let now = null;
  function spent(byCurrency) {
    const entries = Object.entries(byCurrency || {}).sort(([a], [b]) => a.localeCompare(b));
    return entries.length ? entries.map(([currency, amount]) => IAPKit.money(amount, currency)).join(", ") : "nothing";
  }
  async function more() {
    if (now === null) now = await IAPKit.storeNow();
    say(listStatus, "Loading…", "wait");
    try {
      const page = await api("GET", "/console/customers?limit=50" + (next ? "&after=" + encodeURIComponent(next) : "") + appQuery("&"));
      for (const customer of page.customers) {
        rows.append(el("tr", {},
          el("th", { scope: "row" }, el("button", { type: "button", class: "link mono", "data-open": customer.customerId, onclick: () => lookUp(customer.customerId) }, customer.customerId)),
          el("td", { "data-label": "Bought" }, customer.purchases),
          el("td", { "data-label": "Spent" }, spent(customer.spent)),
          el("td", { "data-label": "Storefront" }, customer.storefront || "-"),
          el("td", { "data-label": "Last purchase" }, IAPKit.when(customer.lastPurchase, now))));
      }
      next = page.next || null;
      const shown = rows.children.length;
      fill(list, shown ? el("div", { class: "table-scroll" }, el("table", { class: "stack", id: "customers" },
        el("caption", { class: "visually-hidden" }, "Customers, by id"),
        el("thead", {}, el("tr", {}, ["Customer", "Bought", "Spent", "Storefront", "Last purchase"].map((t) => el("th", { scope: "col" }, t)))),
        rows)) : el("p", {}, "No customer yet: nothing was bought."),
      next ? el("button", { type: "button", class: "secondary spaced", id: "more", onclick: more }, "Show more") : null);
      say(listStatus, shown ? `${shown} customer${shown === 1 ? "" : "s"} shown${next ? "; there are more" : ""}.` : "");
    } catch (error) {
      say(listStatus, `${error.code ? error.code + ": " : ""}${error.message}`, "bad");
    }
  }
  // The app whose customers are shown (a chooser when the server serves several).
  const appSelect = document.getElementById("app");
  function appQuery(separator) {
    return appSelect.value ? separator + "bundleId=" + encodeURIComponent(appSelect.value) : "";
  }
  appSelect.addEventListener("change", () => { rows.replaceChildren(); next = null; fill(result); more(); });
  IAPKit.chooseApp(appSelect).then(() => {
    more();
    const wanted = new URLSearchParams(location.search).get("id");
    if (wanted) lookUp(wanted);
  });

  document.getElementById("lookup-form").addEventListener("submit", (event) => {
    event.preventDefault();
    lookUp(input.value.trim());
  });

  // The simulator's accounts, each with the id the server knows them by: their app account token, else the original
  // transaction id of their first purchase.
  (async () => {
    const known = document.getElementById("known");
    if (!IAPKit.simulatorOn()) return;
    try {
      const state = await api("GET", "/simulator");
      const accounts = await Promise.all(state.accounts.slice(0, 50).map((id) =>
        api("GET", "/simulator/accounts/" + encodeURIComponent(id))));
      const items = accounts.filter((account) => account.transactions.length).map((account) => {
        const id = account.appAccountToken || account.transactions[0].originalTransactionId;
        return el("li", {}, el("button", { type: "button", class: "secondary", "data-customer": account.accountId, onclick: () => lookUp(id) },
          `${account.accountId} (${id})`));
      });
      fill(known, items.length ? el("ul", { class: "row" }, items) : el("p", {}, "No account has bought anything yet: buy in the store first."));
      document.getElementById("known-panel").hidden = false;
    } catch (error) {
      fill(known, el("p", {}, error.message));
      document.getElementById("known-panel").hidden = false;
    }
  })();
});
