// The transaction manager: every account's transactions with the moves Xcode's window offers, the clock, and the
// notifications each move sent with this server's answers. Sections re-render only when their data changed, so a
// control keeps its focus between refreshes.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const { api, el, fill, date, say, when, subscriptionState } = IAPKit;
  const nodes = {
    now: document.getElementById("now"),
    pending: document.getElementById("pending"),
    accounts: document.getElementById("accounts"),
    notifications: document.getElementById("notifications"),
    changes: document.getElementById("changes"),
    clockStatus: document.getElementById("clock-status"),
    actionStatus: document.getElementById("action-status"),
    pendingStatus: document.getElementById("pending-status"),
  };
  let book = { product: (id) => id, group: (id) => id };
  // The message of the last account action, shown in that account's section (null: none).
  let message = null;
  const rendered = {};      // section -> the JSON it was last drawn from
  let notifications = [];   // every notification so far, oldest first
  let nextNotification = 0;
  let now = null;
  const path = (id) => "/simulator/accounts/" + encodeURIComponent(id);

  function draw(section, data, render) {
    const key = JSON.stringify(data);
    if (rendered[section] === key) return;
    rendered[section] = key;
    render();
  }

  let clock = null;

  async function refresh() {
    const state = await api("GET", "/simulator");
    book = await IAPKit.names(state.bundleId);
    now = state.now;
    nodes.now.textContent = date(now);
    clock = await api("GET", "/simulator/clock");
    draw("clock", [clock.paused, clock.speed], renderClock);
    const accounts = await Promise.all(state.accounts.slice(0, 50).map((id) => api("GET", path(id))));
    await loadNotifications();
    draw("pending", [state.pendingPurchases, state.pendingPurchases.map((item) => IAPKit.relative(item.requestedAt, now))],
      () => renderPending(state.pendingPurchases));
    // Keyed on what is shown, not on the clock (which moves at every refresh): the section redraws, and a control
    // loses its focus, only when a transaction, a subscription or an account setting changed.
    draw("accounts", [accounts, message, accounts.map((account) => account.transactions.map((t) => transactionState(t).text)),
      accounts.map((account) => account.subscriptions.map((s) => IAPKit.relative(s.expiresDate, now)))],
      () => renderAccounts(accounts));
    draw("notifications", notifications.length + ":" + notifications.map((n) => n.serverAnswers.length).join(),
      renderNotifications);
  }

  async function loadNotifications() {
    for (;;) {
      const page = await api("GET", "/simulator/notifications?since=" + nextNotification);
      notifications.push(...page.notifications);
      if (page.next === nextNotification || page.notifications.length === 0) break;
      nextNotification = page.next;
    }
    // The latest answers of notifications already shown.
    if (notifications.length) {
      const start = Math.max(0, notifications.length - 50);
      const recent = await api("GET", "/simulator/notifications?since=" + start);
      for (const item of recent.notifications) notifications[item.index] = item;
    }
  }

  function renderClock() {
    const pause = document.getElementById("pause");
    const speed = document.getElementById("speed");
    const running = clock.paused !== undefined;
    pause.disabled = !running;
    speed.disabled = !running;
    if (!running) {
      document.getElementById("clock-mode").textContent = "(moves only when you move it)";
      return;
    }
    pause.textContent = clock.paused ? "Resume" : "Pause";
    if (![...speed.options].some((option) => Number(option.value) === clock.speed)) {
      speed.append(el("option", { value: String(clock.speed) }, `${clock.speed}× real time`));
    }
    speed.value = String(clock.speed);
    document.getElementById("clock-mode").textContent = clock.paused ? "(paused)" : clock.speed === 1 ? "(running)" : `(running ${clock.speed}× faster)`;
  }

  function renderPending(pending) {
    if (!pending.length) return fill(nodes.pending, el("p", {}, "Nothing waits: an Ask to Buy purchase or an interrupted one appears here."));
    fill(nodes.pending, el("div", { class: "table-scroll" }, el("table", { class: "stack" },
      el("caption", { class: "visually-hidden" }, "Purchases waiting"),
      el("thead", {}, el("tr", {}, ["Account", "Product", "Why", "Asked", "Decide"].map((t) => el("th", { scope: "col" }, t)))),
      el("tbody", {}, pending.map((item) => el("tr", { "data-pending": item.id },
        el("th", { scope: "row" }, item.accountId),
        el("td", { "data-label": "Product" }, book.product(item.productId)),
        el("td", { "data-label": "Why" }, item.reason === "askToBuy" ? "Ask to Buy: a parent decides" : "Interrupted: the customer must act"),
        el("td", { "data-label": "Asked" }, when(item.requestedAt, now)),
        el("td", { "data-label": "Decide" }, el("div", { class: "row" },
          el("button", { type: "button", "data-approve": item.id, onclick: () => decide(`Approved ${book.product(item.productId)} for ${item.accountId}`, `/simulator/pending/${encodeURIComponent(item.id)}/approve`) },
            item.reason === "askToBuy" ? "Approve" : "Complete"),
          el("button", { type: "button", class: "secondary", "data-decline": item.id, onclick: () => decide(`Declined ${book.product(item.productId)} for ${item.accountId}`, `/simulator/pending/${encodeURIComponent(item.id)}/decline`) },
            item.reason === "askToBuy" ? "Decline" : "Abandon"))),
      ))))));
  }

  function transactionState(transaction) {
    if (transaction.revocationDate) return { text: "Refunded " + IAPKit.relative(transaction.revocationDate, now), tone: "bad" };
    if (transaction.expiresDate && IAPKit.isPast(transaction.expiresDate, now)) return { text: "Period over", tone: "info" };
    return { text: transaction.expiresDate ? "Current period" : "Owned", tone: "good" };
  }

  function renderAccounts(accounts) {
    if (!accounts.length) return fill(nodes.accounts, el("p", { class: "panel" }, "No account yet: make one in the store."));
    fill(nodes.accounts, accounts.map((account) => {
      const id = "account-" + account.accountId.replace(/[^A-Za-z0-9_-]/g, "_");
      const subscriptions = account.subscriptions.map((subscription) => el("li", { "data-group": subscription.groupId },
        `${subscription.groupName || book.group(subscription.groupId)}: ${book.product(subscription.productId)} `,
        el("span", { class: "badge " + subscriptionState(subscription.state).tone }, subscriptionState(subscription.state).text), ", ",
        `${IAPKit.isPast(subscription.expiresDate, now) ? "ended" : subscription.willAutoRenew ? "renews" : "ends"} ${when(subscription.expiresDate, now)} `,
        el("button", {
          type: "button", class: "secondary", "data-auto-renew": account.accountId + "/" + subscription.groupId,
          onclick: () => act(account.accountId, `Auto-renew ${subscription.willAutoRenew ? "off" : "on"} for ${account.accountId}`, "POST", path(account.accountId) + "/auto-renew",
            { groupId: subscription.groupId, enabled: !subscription.willAutoRenew }),
        }, subscription.willAutoRenew ? "Auto-renew off" : "Auto-renew on"), " ",
        subscription.state === "subscribed" && subscription.willAutoRenew ? el("button", {
          type: "button", class: "secondary", "data-renew": account.accountId + "/" + subscription.groupId,
          title: "Moves the store's clock to the renewal date: everything due by then happens too",
          onclick: () => move("/simulator/clock/jump", { date: subscription.expiresDate }),
        }, "Renew now") : null, " ",
        subscription.state === "subscribed" || subscription.state === "inGracePeriod" ? el("button", {
          type: "button", class: "secondary", "data-expire": account.accountId + "/" + subscription.groupId,
          title: "Turns auto-renew off, then moves the store's clock to the end of the period",
          onclick: async () => {
            if (subscription.willAutoRenew) {
              await api("POST", path(account.accountId) + "/auto-renew", { groupId: subscription.groupId, enabled: false });
            }
            await move("/simulator/clock/jump", { date: subscription.expiresDate });
          },
        }, "Expire") : null));
      const rows = [...account.transactions].reverse().map((transaction) => {
        const state = transactionState(transaction);
        const target = "/simulator/transactions/" + encodeURIComponent(transaction.transactionId);
        return el("tr", { "data-transaction": transaction.transactionId },
          el("th", { scope: "row" }, book.product(transaction.productId)),
          el("td", { "data-label": "Transaction", class: "mono" }, transaction.transactionId),
          el("td", { "data-label": "Bought" }, when(transaction.purchaseDate, now)),
          el("td", { "data-label": "Expires" }, transaction.expiresDate ? when(transaction.expiresDate, now) : "never"),
          el("td", { "data-label": "State" }, el("span", { class: "badge " + state.tone }, state.text)),
          el("td", { "data-label": "Actions" }, el("div", { class: "row" },
            transaction.revocationDate ? null : el("button", { type: "button", "data-refund": transaction.transactionId,
              onclick: () => act(account.accountId, `Refunded ${book.product(transaction.productId)} (${transaction.transactionId})`, "POST", target + "/refund", {}) }, "Refund"),
            transaction.revocationDate ? null : el("button", { type: "button", class: "secondary", "data-refund-request": transaction.transactionId,
              onclick: () => act(account.accountId, `Refund requested for ${book.product(transaction.productId)} (${transaction.transactionId})`, "POST", target + "/refund-request", {}) }, "Request refund"),
            el("button", { type: "button", class: "secondary", "data-delete": transaction.transactionId,
              onclick: () => act(account.accountId, `Deleted ${book.product(transaction.productId)} (${transaction.transactionId})`, "DELETE", target) }, "Delete"))));
      });
      return el("section", { class: "panel", "aria-labelledby": id, "data-account": account.accountId },
        el("h2", { id }, account.accountId),
        el("div", { class: "row" },
          el("button", { type: "button", class: "secondary", "data-billing": account.accountId,
            onclick: () => act(account.accountId, `Billing issue ${account.billingFails ? "off" : "on"} for ${account.accountId}`, "POST", path(account.accountId) + "/billing-issue",
              { failing: !account.billingFails }) }, account.billingFails ? "Card works again" : "Card fails"),
          account.familyId
            ? el("button", { type: "button", class: "secondary", "data-leave-family": account.accountId,
              onclick: () => act(account.accountId, `${account.accountId} left family ${account.familyId}: shared purchases revoked`, "DELETE", path(account.accountId) + "/family") },
              `Leave family ${account.familyId} (revoke sharing)`)
            : el("button", { type: "button", class: "secondary", "data-join-family": account.accountId,
              onclick: () => act(account.accountId, `${account.accountId} joined family "family"`, "PUT", path(account.accountId) + "/family", { familyId: "family" }) },
              "Join the family"),
          el("button", { type: "button", class: "secondary", "data-clear": account.accountId,
            onclick: () => act(account.accountId, `Cleared ${account.accountId}'s transactions`, "POST", path(account.accountId) + "/clear", {}) }, "Clear transactions")),
        message && message.account === account.accountId
          ? el("p", { class: "status " + message.tone, role: "status", "data-account-status": account.accountId }, message.text) : null,
        subscriptions.length ? el("ul", { class: "subscriptions" }, subscriptions) : null,
        rows.length ? el("div", { class: "table-scroll" }, el("table", { class: "stack" },
          el("caption", { class: "visually-hidden" }, account.accountId + "'s transactions, newest first"),
          el("thead", {}, el("tr", {}, ["Product", "Transaction", "Bought", "Expires", "State", "Actions"].map((t) => el("th", { scope: "col" }, t)))),
          el("tbody", {}, rows))) : el("p", {}, "No transactions."));
    }));
  }

  function renderNotifications() {
    const latest = notifications.slice(-50).reverse();
    if (!latest.length) return fill(nodes.notifications, el("p", {}, "None yet."));
    fill(nodes.notifications, el("table", { class: "stack" },
      el("caption", { class: "visually-hidden" }, "The latest notifications, newest first"),
      el("thead", {}, el("tr", {}, ["Signed", "Type", "Account", "Transaction", "Server answered"].map((t) => el("th", { scope: "col" }, t)))),
      el("tbody", {}, latest.map((item) => {
        const answer = item.serverAnswers[item.serverAnswers.length - 1];
        return el("tr", { "data-notification": item.notificationUUID },
          el("th", { scope: "row" }, when(item.signedDate, now)),
          el("td", { "data-label": "Type", class: "mono" }, item.notificationType + (item.subtype ? " / " + item.subtype : "")),
          el("td", { "data-label": "Account" }, item.accountId || "-"),
          el("td", { "data-label": "Transaction", class: "mono" }, item.transactionId || "-"),
          el("td", { "data-label": "Server answered" }, answer ? el("span", { class: "badge " + (answer.result === "SUCCESS" ? "good" : "bad") }, answer.result === "SUCCESS" ? "200 recorded" : answer.result) : el("span", { class: "badge wait" }, "not yet")));
      }))));
  }

  /** Runs one move on an account, says what it did in that account's section (and nowhere else), then refreshes. */
  async function act(account, done, method, target, body) {
    clearMessages();
    try {
      await api(method, target, body);
      message = { account, text: done + ".", tone: "good" };
    } catch (error) {
      message = { account, text: `${error.code ? error.code + ": " : ""}${error.message}`, tone: "bad" };
    }
    await refresh();
    // Also read out: the section's line is redrawn, and a screen reader may not announce a new node.
    say(nodes.actionStatus, message.text, message.tone);
  }

  /** Approves or declines what waits, saying so beside the list. */
  async function decide(done, target) {
    clearMessages();
    try {
      await api("POST", target);
      say(nodes.pendingStatus, done + ".", "good");
    } catch (error) {
      say(nodes.pendingStatus, `${error.code ? error.code + ": " : ""}${error.message}`, "bad");
    }
    await refresh();
  }

  /** Forgets every earlier action's message: a status line speaks only for the latest action. */
  function clearMessages() {
    message = null;
    for (const node of [nodes.actionStatus, nodes.pendingStatus, nodes.clockStatus]) say(node, "");
  }

  /** Moves the clock, then lists what the move sent. */
  async function move(target, body) {
    clearMessages();
    const before = notifications.length;
    try {
      const answer = await api("POST", target, body);
      say(nodes.clockStatus, "The store's clock is now " + date(answer.now) + ".", "good");
    } catch (error) {
      say(nodes.clockStatus, `${error.code ? error.code + ": " : ""}${error.message}`, "bad");
      return;
    }
    await refresh();
    const jump = document.getElementById("jump-date");
    if (now && (!jump.value || new Date(jump.value + ":00Z") <= new Date(now))) {
      jump.value = new Date(new Date(now).getTime() + 86400000).toISOString().slice(0, 16);
    }
    const sent = notifications.slice(before);
    fill(nodes.changes, el("h3", {}, "What the move changed"),
      sent.length ? el("ul", { id: "changes-list" }, sent.map((item) =>
        el("li", {}, `${when(item.signedDate, now)}: ${item.notificationType}${item.subtype ? " / " + item.subtype : ""} for ${item.accountId || "the app"}`)))
        : el("p", { id: "changes-list" }, "Nothing came due: no renewal, expiry or retry in that time."));
  }

  document.getElementById("pause").addEventListener("click", async () => {
    try {
      clock = await api("PUT", "/simulator/clock", { paused: !clock.paused });
      say(nodes.clockStatus, clock.paused ? "The store's clock is paused." : "The store's clock runs again.", "good");
    } catch (error) { say(nodes.clockStatus, error.message, "bad"); }
    await refresh();
  });
  document.getElementById("speed").addEventListener("change", async (event) => {
    try {
      clock = await api("PUT", "/simulator/clock", { speed: Number(event.target.value) });
      say(nodes.clockStatus, `The store's clock runs at ${clock.speed}× real time.`, "good");
    } catch (error) { say(nodes.clockStatus, error.message, "bad"); }
    await refresh();
  });

  for (const button of document.querySelectorAll("[data-advance]")) {
    button.addEventListener("click", () => move("/simulator/clock/advance", { seconds: Number(button.dataset.advance) }));
  }
  document.getElementById("jump-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const value = document.getElementById("jump-date").value;
    if (value) move("/simulator/clock/jump", { date: value + ":00Z" });
  });

  refresh().then(() => {
    if (now) document.getElementById("jump-date").value = new Date(new Date(now).getTime() + 86400000).toISOString().slice(0, 16);
  }).catch((error) => say(nodes.actionStatus,
    error.status === 404 ? "The simulator is off on this server." : error.message, "bad"));
  setInterval(() => refresh().catch(() => {}), 2000);
});
