// The inspector: a pasted or uploaded document decoded and verified by the server (POST /console/inspect).
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const { api, el, fill, say } = IAPKit;
  const form = document.getElementById("inspect-form");
  const textArea = document.getElementById("document");
  const fileInput = document.getElementById("file");
  const status = document.getElementById("inspect-status");
  const result = document.getElementById("result");

  // A file is read as text when it is text (a JWS, a notification body), else sent as base64 (a receipt's DER).
  fileInput.addEventListener("change", async () => {
    const file = fileInput.files[0];
    if (!file) return;
    const bytes = new Uint8Array(await file.arrayBuffer());
    let text = null;
    try { text = new TextDecoder("utf-8", { fatal: true }).decode(bytes); } catch { text = null; }
    if (text !== null && /^[\x09\x0a\x0d\x20-\x7e]*$/.test(text)) {
      textArea.value = text;
    } else {
      let binary = "";
      for (let index = 0; index < bytes.length; index += 0x8000) {
        binary += String.fromCharCode(...bytes.subarray(index, index + 0x8000));
      }
      textArea.value = btoa(binary);
    }
    say(status, `${file.name} loaded (${bytes.length} bytes): press Inspect.`);
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    say(status, "Verifying…", "wait");
    fill(result);
    try {
      const answer = await api("POST", "/console/inspect", { document: textArea.value });
      const unmade = (answer.checks || []).filter((check) => check.status === "skipped").length;
      say(status, answer.valid
        ? (unmade ? `Valid: every check made passed (${unmade} not made, see below).` : "Valid: every check passed.")
        : "Not valid: see the checks below.", answer.valid ? "good" : "bad");
      fill(result, report(answer, "Verdict"));
    } catch (error) {
      say(status, `${error.code ? error.code + ": " : ""}${error.message}`, "bad");
    }
  });

  const kinds = {
    receipt: "App Store receipt",
    transaction: "Signed transaction",
    renewalInfo: "Renewal information",
    appTransaction: "App transaction",
    notification: "App Store Server Notification",
  };

  function report(answer, title) {
    const section = el("section", { class: "panel", "aria-label": title + ": " + (kinds[answer.kind] || answer.kind) });
    section.append(
      el("h2", {}, kinds[answer.kind] || answer.kind || "Document", " ",
        el("span", { class: "badge " + (answer.valid ? "good" : "bad"), id: title === "Verdict" ? "verdict" : null },
          answer.valid ? "valid" : "not valid")),
      el("p", {}, answer.app ? `Checked with the rules of ${answer.app}.` : "Not checked: no app of this server matches."),
    );
    if (answer.advice) section.append(el("p", { class: "advice" }, answer.advice));
    if (answer.checks) section.append(el("h3", {}, "Checks"), checksTable(answer.checks));
    if (answer.chain) section.append(el("h3", {}, "Certificate chain"), chainView(answer.chain));
    if (answer.header) section.append(el("h3", {}, "JWS header"), fieldsList({ alg: answer.header.alg, kid: answer.header.kid, certificates: (answer.header.x5c || []).length }));
    if (answer.fields) section.append(el("h3", {}, "Fields"), fieldsList(answer.fields));
    for (const nested of answer.nested || []) {
      const inner = el("section", { class: "panel", "aria-label": nested.field });
      inner.append(
        el("h3", {}, nested.field, " ", el("span", { class: "badge " + (nested.valid ? "good" : "bad") }, nested.valid ? "valid" : "not valid")),
        fieldsList(nested.fields || {}),
      );
      section.append(inner);
    }
    return section;
  }

  function checksTable(checks) {
    const tones = { passed: "good", failed: "bad", skipped: "wait" };
    return el("div", { class: "table-scroll" },
      el("table", {},
        el("caption", { class: "visually-hidden" }, "Verification checks"),
        el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Check"), el("th", { scope: "col" }, "Result"), el("th", { scope: "col" }, "Detail"))),
        el("tbody", {}, checks.map((check) => el("tr", { "data-check-status": check.status },
          el("td", {}, check.name),
          el("td", {}, el("span", { class: "badge " + (tones[check.status] || "info") }, check.status)),
          el("td", {}, check.code ? el("span", { class: "mono" }, check.code + " ") : null, check.detail || ""),
        ))),
      ));
  }

  function chainView(chain) {
    return el("div", {},
      el("p", {}, "Rests on: ", chain.trust),
      el("ol", {}, (chain.certificates || []).map((certificate) =>
        el("li", {}, `${certificate.subject} (issued by ${certificate.issuer}, valid ${certificate.notValidBefore.slice(0, 10)} to ${certificate.notValidAfter.slice(0, 10)})`))));
  }

  function fieldsList(fields) {
    const list = el("dl", { class: "fields" });
    for (const [name, value] of Object.entries(fields)) {
      if (value === undefined || value === null) continue;
      list.append(el("dt", {}, name), el("dd", { class: typeof value === "object" ? "" : "mono" }, show(value)));
    }
    return list;
  }

  function show(value) {
    if (Array.isArray(value)) {
      if (value.length === 0) return "(none)";
      return el("ol", {}, value.map((item) => el("li", {}, typeof item === "object" && item !== null ? fieldsList(item) : String(item))));
    }
    if (typeof value === "object" && value !== null) return fieldsList(value);
    if (typeof value === "number" && value > 1e12 && value < 1e14) {
      return `${value} (${new Date(value).toISOString().replace("T", " ").slice(0, 19)} UTC)`;
    }
    if (typeof value === "string" && value.length > 120) return value.slice(0, 120) + "…";
    return String(value);
  }
});
