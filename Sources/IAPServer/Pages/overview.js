// The overview page: an app's figures over a span (GET /console/overview), with charts drawn here as SVG, the numbers
// behind each chart in a table, and the same numbers as JSON and CSV.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const { api, el, fill, say } = IAPKit;
  const svg = (tag, attributes, ...children) => {
    const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, String(value));
    for (const child of children.flat()) if (child) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    return node;
  };
  const range = document.getElementById("range");
  const status = document.getElementById("overview-status");
  const result = document.getElementById("overview");

  /** 9990 milli-units of USD as "USD 9.99". */
  function money(amount, currency) {
    return `${currency} ${(amount / 1000).toFixed(2)}`;
  }
  function amounts(byCurrency) {
    const entries = Object.entries(byCurrency || {}).sort(([a], [b]) => a.localeCompare(b));
    return entries.length ? entries.map(([currency, amount]) => money(amount, currency)).join(", ") : "none";
  }
  function day(iso) {
    return String(iso).slice(0, 10);
  }

  /**
   * A bar chart of one or two series per day, drawn as SVG: each bar carries its value in a title, the second series
   * is hatched so the two read apart without colour, and a legend names them in words.
   */
  function chart(id, title, days, series) {
    const width = 640, height = 180, left = 40, bottom = 24;
    const max = Math.max(1, ...days.flatMap((d) => series.map((s) => s.value(d))));
    const slot = (width - left) / Math.max(1, days.length);
    const bar = Math.max(2, (slot - 4) / series.length);
    const bars = days.flatMap((d, index) => series.map((s, which) => {
      const value = s.value(d);
      const h = Math.round((value / max) * (height - bottom - 10));
      return svg("rect", {
        class: "bar " + s.style, x: left + index * slot + 2 + which * bar, y: height - bottom - h,
        width: bar, height: Math.max(h, value > 0 ? 1 : 0),
      }, svg("title", {}, `${day(d.day)}: ${s.label} ${s.text(d)}`));
    }));
    const labels = days.length <= 7 ? days.map((d, index) =>
      svg("text", { class: "axis", x: left + index * slot + slot / 2, y: height - 6, "text-anchor": "middle" }, day(d.day).slice(5)))
      : [svg("text", { class: "axis", x: left, y: height - 6 }, day(days[0].day)),
        svg("text", { class: "axis", x: width, y: height - 6, "text-anchor": "end" }, day(days[days.length - 1].day))];
    const picture = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-labelledby": id + "-title", class: "chart" },
      svg("title", { id: id + "-title" }, title),
      svg("defs", {}, svg("pattern", { id: id + "-hatch", width: 6, height: 6, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" },
        svg("rect", { width: 6, height: 6, class: "hatch-ground" }), svg("line", { x1: 0, y1: 0, x2: 0, y2: 6, class: "hatch-line" }))),
      svg("line", { x1: left, y1: height - bottom, x2: width, y2: height - bottom, class: "baseline" }),
      svg("text", { class: "axis", x: left - 6, y: 14, "text-anchor": "end" }, series[0].scale ? series[0].scale(max) : max),
      bars, labels);
    // The hatched series fills with this chart's own pattern.
    for (const node of picture.querySelectorAll(".bar.hatched")) node.setAttribute("fill", `url(#${id}-hatch)`);
    const legend = el("ul", { class: "legend" }, series.map((s) => el("li", {}, el("span", { class: "swatch " + s.style, "aria-hidden": "true" }), s.label)));
    const table = el("details", {}, el("summary", {}, "The numbers behind this chart"),
      el("div", { class: "table-scroll" }, el("table", { class: "stack" },
        el("caption", { class: "visually-hidden" }, title + ", by day"),
        el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Day"), series.map((s) => el("th", { scope: "col" }, s.label)))),
        el("tbody", {}, days.map((d) => el("tr", {},
          el("th", { scope: "row" }, day(d.day)), series.map((s) => el("td", { "data-label": s.label }, s.text(d)))))))));
    return el("section", { class: "panel", "aria-labelledby": id + "-heading" },
      el("h2", { id: id + "-heading" }, title), picture, legend, table);
  }

  function breakdown(id, title, label, slices, name = (key) => key) {
    const names = Object.keys(slices).sort((a, b) => name(a).localeCompare(name(b)));
    return el("section", { class: "panel", "aria-labelledby": id },
      el("h2", { id }, title),
      names.length ? el("div", { class: "table-scroll" }, el("table", { class: "stack" },
        el("caption", { class: "visually-hidden" }, title),
        el("thead", {}, el("tr", {}, [label, "Bought", "New subscriptions", "Active now", "Churned", "Revenue", "Refunded"].map((t) => el("th", { scope: "col" }, t)))),
        el("tbody", {}, names.map((key) => {
          const f = slices[key];
          return el("tr", {},
            el("th", { scope: "row" }, name(key) === key ? key : [name(key), " ", el("span", { class: "mono muted" }, key)]),
            el("td", { "data-label": "Bought" }, f.purchases),
            el("td", { "data-label": "New subscriptions" }, f.newSubscriptions),
            el("td", { "data-label": "Active now" }, f.activeSubscriptions ?? 0),
            el("td", { "data-label": "Churned" }, f.churned),
            el("td", { "data-label": "Revenue" }, amounts(f.revenue)),
            el("td", { "data-label": "Refunded" }, amounts(f.refunded)));
        }))))
        : el("p", {}, "Nothing in this span."));
  }

  function render(overview, query, book) {
    const t = overview.totals;
    const currencies = [...new Set(overview.days.flatMap((d) => Object.keys(d.figures.revenue)))].sort();
    const facts = [
      ["Active subscriptions", t.activeSubscriptions ?? 0],
      ["In a free trial", t.activeTrials ?? 0],
      ["Paying customers", overview.payingCustomers],
      ["Revenue", amounts(t.revenue)],
      ["Refunds", t.refunds ? `${t.refunds} (${amounts(t.refunded)})` : 0],
      ["New subscriptions", t.newSubscriptions],
      ["Churned", t.churned],
      ["Purchases", t.purchases],
    ];
    return [
      el("section", { class: "panel", "aria-labelledby": "totals-title" },
        el("h2", { id: "totals-title" }, `${overview.bundleId}, ${day(overview.from)} to ${day(new Date(new Date(overview.to) - 1).toISOString())}`),
        el("ul", { class: "figures", id: "totals" }, facts.map(([name, value]) =>
          el("li", {}, el("span", { class: "name" }, name), el("span", { class: "value" }, value)))),
        el("p", {}, "Active and in a free trial: at ", overview.at.replace("T", " ").slice(0, 16), " UTC. The same numbers: ",
          el("a", { href: "/console/overview?" + query, id: "as-json" }, "JSON"), ", ",
          el("a", { href: "/console/overview?" + query + "&format=csv", id: "as-csv" }, "CSV, by day"), ".")),
      ...currencies.map((currency) => chart("revenue-" + currency.toLowerCase(), `Revenue in ${currency}, by day`, overview.days, [
        { label: `Revenue (${currency})`, style: "solid", value: (d) => d.figures.revenue[currency] || 0,
          text: (d) => money(d.figures.revenue[currency] || 0, currency), scale: (max) => (max / 1000).toFixed(0) },
      ])),
      chart("subscriptions", "New and churned subscriptions, by day", overview.days, [
        { label: "New", style: "solid", value: (d) => d.figures.newSubscriptions, text: (d) => d.figures.newSubscriptions },
        { label: "Churned", style: "hatched", value: (d) => d.figures.churned, text: (d) => d.figures.churned },
      ]),
      breakdown("products-title", "By product", "Product", overview.products, book.product),
      breakdown("storefronts-title", "By storefront", "Storefront", overview.storefronts),
    ];
  }

  async function show() {
    const app = document.getElementById("app").value;
    const query = "range=" + encodeURIComponent(range.value) + (app ? "&bundleId=" + encodeURIComponent(app) : "");
    say(status, "Loading…", "wait");
    try {
      const overview = await api("GET", "/console/overview?" + query);
      fill(result, render(overview, query, await IAPKit.names(overview.bundleId)));
      say(status, "");
    } catch (error) {
      fill(result);
      say(status, `${error.code ? error.code + ": " : ""}${error.message}`, "bad");
    }
  }

  document.getElementById("overview-form").addEventListener("submit", (event) => {
    event.preventDefault();
    show();
  });
  IAPKit.chooseApp(document.getElementById("app")).then(show);
});
