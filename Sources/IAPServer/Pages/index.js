// The home page: what this server serves, from /health and /simulator.
"use strict";

document.addEventListener("DOMContentLoaded", async () => {
  const { api, el, fill, date } = IAPKit;
  const facts = document.getElementById("server-facts");
  const rows = [];
  const row = (term, ...value) => rows.push(el("dt", {}, term), el("dd", {}, ...value));
  try {
    const health = await api("GET", "/health");
    row("Status", el("span", { class: "badge good" }, health.status));
    row("Apps", health.apps.join(", "));
    row("Stored", `${health.storage.transactions} transactions, ${health.storage.notifications} notifications`);
  } catch (error) {
    row("Status", el("span", { class: "badge bad" }, error.message));
  }
  try {
    const simulator = await api("GET", "/simulator");
    row("Local App Store", `${simulator.bundleId}, ${simulator.environment}, ${simulator.productIds.length} products`);
    row("Store clock", date(simulator.now));
    row("Accounts", simulator.accounts.length ? simulator.accounts.join(", ") : "none yet: make one in the store");
  } catch (error) {
    row("Local App Store", error.status === 404 ? "off (start with the simulator on to sell and sign)" : error.message);
  }
  fill(facts, rows);
});
