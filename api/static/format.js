// Number formatting and small DOM helpers shared by the pages.
"use strict";
const fmt = (v) => {
  if (v === null || v === undefined || !isFinite(v)) return "–";
  const a = Math.abs(v);
  if (a === 0) return "0";
  if (a >= 1e6 || a < 1e-3) return v.toExponential(2);
  return v.toLocaleString("en-US", { maximumSignificantDigits: 3 });
};
const fmtRange = (r) => r ? `${fmt(r.expected)} (${fmt(r.low)}–${fmt(r.high)}) ${r.unit}` : "–";
const fmtQty = (q) => q ? `${fmt(q.value)} ${q.unit}` : "–";
// A range as a table cell: the expected value on one line, low–high under it (keeps columns narrow).
function rangeCell(r) {
  if (!r) return "–";
  return el("span", {}, `${fmt(r.expected)} ${r.unit}`, el("br"), el("small", { class: "muted" }, `${fmt(r.low)}–${fmt(r.high)}`));
}
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}
// Each cell gets its column's heading as data-label, which the phone layout shows beside it.
function fillRows(table, rows) {
  const heads = [...table.querySelectorAll("thead th")].map((th) => th.textContent);
  const body = table.querySelector("tbody");
  body.replaceChildren(...rows.map((cells) => el("tr", {}, ...cells.map((c, i) => el("td", { "data-label": heads[i] || "" }, c)))));
}
