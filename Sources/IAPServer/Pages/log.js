// The log: notifications received (GET /console/notifications, each opened through /console/inspect) and events sent
// to the app's webhooks (GET /console/deliveries), each list behind its filters.
"use strict";

document.addEventListener("DOMContentLoaded", async () => {
  const { api, el, fill, date, say, when } = IAPKit;
  const now = await IAPKit.storeNow();
  const outcomeTone = { recorded: "good", answered: "good", nothingToRecord: "info", refused: "bad" };
  const outcomeWords = {
    recorded: "Recorded", answered: "Answered", nothingToRecord: "Nothing to record", refused: "Refused",
  };
  const deliveryWords = { pending: "Pending", delivered: "Delivered", failed: "Failed, gave up" };
  const deliveryTone = { pending: "wait", delivered: "good", failed: "bad" };

  /** The query of a filter form: empty fields left out, a day's "until" made the start of the next day. */
  function query(form) {
    const parameters = new URLSearchParams();
    for (const field of form.elements) {
      if (!field.name || !field.value.trim()) continue;
      let value = field.value.trim();
      if (field.type === "date") {
        const day = new Date(value + "T00:00:00Z");
        if (field.name === "to") day.setUTCDate(day.getUTCDate() + 1);
        value = day.toISOString();
      }
      parameters.set(field.name, value);
    }
    return parameters;
  }

  /** Fills a form's fields from this page's address (`/log?customer=…`), so other pages can link to a view of it. */
  function prefill(form, prefix) {
    const wanted = new URLSearchParams(location.search);
    for (const field of form.elements) {
      if (field.name && wanted.has(prefix + field.name)) field.value = wanted.get(prefix + field.name);
    }
  }

  const customerLink = (id, bundleId) => id
    ? el("a", { href: "/customers?id=" + encodeURIComponent(id) + (bundleId ? "&bundleId=" + encodeURIComponent(bundleId) : ""), class: "mono" }, id)
    : el("span", { class: "muted" }, "none");

  // Notifications received.
  const notificationForm = document.getElementById("notification-filters");
  const notificationStatus = document.getElementById("notifications-status");
  const notificationList = document.getElementById("notifications");
  const detail = document.getElementById("notification-detail");
  const notificationRows = el("tbody", {});
  let nextNotifications = null;
  let applied = null;   // the filters of the list shown: older pages continue it, whatever the form says now
  let loading = false;  // an older page on its way: another click waits for it
  let generation = 0;   // a new list drops what an earlier one still brings

  async function loadNotifications(more) {
    if (more && loading) return;
    if (!more) {
      notificationRows.replaceChildren(); nextNotifications = null; fill(detail);
      applied = query(notificationForm);
      generation += 1;
    }
    const mine = generation;
    loading = true;
    const parameters = new URLSearchParams(applied);
    parameters.set("limit", "50");
    if (more && nextNotifications) parameters.set("before", nextNotifications);
    say(notificationStatus, "Loading…", "wait");
    try {
      const page = await api("GET", "/console/notifications?" + parameters);
      if (mine !== generation) return;
      for (const item of page.items) notificationRows.append(notificationRow(item));
      nextNotifications = page.next || null;
      const shown = notificationRows.children.length;
      fill(notificationList, shown ? el("div", { class: "table-scroll" }, el("table", { class: "stack", id: "notification-log" },
        el("caption", { class: "visually-hidden" }, "Notifications, newest first"),
        el("thead", {}, el("tr", {}, ["Received", "Type", "Customer", "What the server did", ""].map((t) => el("th", { scope: "col" }, t)))),
        notificationRows)) : el("p", {}, page.refusedOnly ? "No notification was refused lately." : "No notification matches."),
      nextNotifications ? el("button", { type: "button", class: "secondary spaced", id: "more-notifications", onclick: () => loadNotifications(true) }, "Show older") : null);
      say(notificationStatus, shown ? `${shown} notification${shown === 1 ? "" : "s"} shown${nextNotifications ? "; there are older ones" : ""}` +
        (page.refusedOnly ? " (refusals are kept in memory by this instance: the last 100)." : ".") : "");
    } catch (error) {
      say(notificationStatus, `${error.code ? error.code + ": " : ""}${error.message}`, "bad");
    } finally {
      loading = false;
    }
  }

  function notificationRow(item) {
    const outcome = item.outcome || "unknown";
    return el("tr", { "data-notification": item.notificationUUID || "refused" },
      el("td", { "data-label": "Received" }, when(item.receivedAt, now)),
      el("td", { "data-label": "Type" }, el("span", { class: "mono" }, item.notificationType || "unknown"),
        item.subtype ? [" ", el("span", { class: "mono muted" }, item.subtype)] : null),
      el("td", { "data-label": "Customer" }, customerLink(item.customerId, item.bundleId)),
      el("td", { "data-label": "What the server did" },
        el("span", { class: "badge " + (outcomeTone[outcome] || "info") }, outcomeWords[outcome] || "Not kept"), " ",
        el("span", {}, item.summary + (item.code ? ` (${item.code})` : ""))),
      el("td", {}, item.notificationUUID ? el("button", {
        type: "button", class: "secondary", "data-open": item.notificationUUID,
        "aria-label": `Open the ${item.notificationType} notification of ${date(item.receivedAt)}`,
        onclick: () => open(item),
      }, "Open") : null));
  }

  /** One notification decoded: its fields as the inspector reads them, every check, and what the server did. */
  async function open(item) {
    fill(detail, el("p", { class: "status wait" }, "Decoding…"));
    try {
      const stored = await api("GET", "/console/notifications/" + encodeURIComponent(item.notificationUUID) +
        "?bundleId=" + encodeURIComponent(item.bundleId));
      const inspection = await api("POST", "/console/inspect", { document: stored.body });
      fill(detail, el("section", { class: "detail", "aria-labelledby": "detail-title", id: "notification-opened" },
        el("h3", { id: "detail-title", tabindex: "-1" }, `${item.notificationType}${item.subtype ? " / " + item.subtype : ""}, received ${when(item.receivedAt, now)}`),
        el("dl", { class: "fields" },
          el("dt", {}, "Notification UUID"), el("dd", { class: "mono" }, item.notificationUUID),
          el("dt", {}, "What the server did"), el("dd", {}, item.summary),
          el("dt", {}, "Signed"), el("dd", {}, when(item.signedDate, now)),
          el("dt", {}, "Purchase"), el("dd", { class: "mono" }, item.originalTransactionId || "none"),
          el("dt", {}, "Checks today"), el("dd", {}, el("ul", {}, (inspection.checks || []).map((check) =>
            el("li", {}, el("span", { class: "badge " + (check.status === "passed" ? "good" : check.status === "failed" ? "bad" : "info") }, check.status), " ", check.name))))),
        el("h4", {}, "Decoded"),
        el("pre", { class: "document", tabindex: "0" }, JSON.stringify(inspection.fields, null, 2)),
        el("button", { type: "button", class: "secondary", onclick: () => fill(detail) }, "Close")));
      document.getElementById("detail-title").focus();
    } catch (error) {
      fill(detail, el("p", { class: "status bad" }, `${error.code ? error.code + ": " : ""}${error.message}`));
    }
  }

  // Events sent.
  const eventForm = document.getElementById("event-filters");
  const eventStatus = document.getElementById("events-status");
  const eventList = document.getElementById("events");

  async function loadEvents() {
    const parameters = query(eventForm);
    parameters.set("limit", "100");
    say(eventStatus, "Loading…", "wait");
    try {
      const answer = await api("GET", "/console/deliveries?" + parameters);
      const last = (delivery) => delivery.attempts[delivery.attempts.length - 1];
      fill(eventList, answer.deliveries.length ? el("div", { class: "table-scroll" }, el("table", { class: "stack", id: "event-log" },
        el("caption", { class: "visually-hidden" }, "Events sent to the app's webhooks, newest first"),
        el("thead", {}, el("tr", {}, ["Created", "Event", "Customer", "Delivery", "Attempts", "Last answer", ""].map((t) => el("th", { scope: "col" }, t)))),
        el("tbody", {}, answer.deliveries.map((delivery) => el("tr", { "data-event": delivery.eventId },
          el("td", { "data-label": "Created" }, when(delivery.createdAt, null)),
          el("td", { "data-label": "Event" }, el("span", { class: "mono" }, delivery.type)),
          el("td", { "data-label": "Customer" }, customerLink(delivery.customerId, delivery.bundleId)),
          el("td", { "data-label": "Delivery" }, el("span", { class: "badge " + deliveryTone[delivery.state] }, deliveryWords[delivery.state] || delivery.state),
            delivery.state === "pending" && delivery.nextAttemptAt ? ` next try ${when(delivery.nextAttemptAt, null)}` : ""),
          el("td", { "data-label": "Attempts" }, String(delivery.attempts.length)),
          el("td", { "data-label": "Last answer" }, last(delivery) ? (last(delivery).status ? "HTTP " + last(delivery).status : last(delivery).error || "-") : "not tried yet"),
          el("td", {}, delivery.state === "pending" ? null : el("button", {
            type: "button", class: "secondary", "aria-label": `Send ${delivery.type} again`,
            onclick: () => retry(delivery),
          }, "Send again"))))))) : el("p", {}, "No event matches (events exist only for apps with webhooks)."));
      say(eventStatus, answer.deliveries.length ? `${answer.deliveries.length} shown, newest first${answer.deliveries.length === 100 ? "; narrow the dates to see older ones" : ""}.` : "");
    } catch (error) {
      say(eventStatus, `${error.code ? error.code + ": " : ""}${error.message}`, "bad");
    }
  }

  async function retry(delivery) {
    try {
      await api("POST", "/console/deliveries/" + encodeURIComponent(delivery.eventId) + "/retry?endpoint=" + encodeURIComponent(delivery.endpoint));
      await loadEvents();
      say(eventStatus, `${delivery.type} (${delivery.eventId}) is due again.`, "good");
    } catch (error) {
      say(eventStatus, `${error.code ? error.code + ": " : ""}${error.message}`, "bad");
    }
  }

  await Promise.all([IAPKit.chooseApp(document.getElementById("n-app")), IAPKit.chooseApp(document.getElementById("e-app"))]);
  prefill(notificationForm, "");
  prefill(eventForm, "event-");
  notificationForm.addEventListener("submit", (event) => { event.preventDefault(); loadNotifications(false); });
  notificationForm.addEventListener("reset", () => setTimeout(() => loadNotifications(false)));
  eventForm.addEventListener("submit", (event) => { event.preventDefault(); loadEvents(); });
  eventForm.addEventListener("reset", () => setTimeout(loadEvents));
  loadNotifications(false);
  loadEvents();
});
