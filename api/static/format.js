// Number formatting and small DOM helpers shared by the pages.
"use strict";
// Numbers as people read them: 3 significant digits, thousands as "79,100", millions and up with the word
// a reader says ("79.1 M", "7 B", "1.4 T": the same k/M/B/T the service reads in counts such as "7B"), and
// only beyond a thousand trillion (or below a millionth) a power of ten ("3.15 × 10²³"). Never "7.91e+7".
const SCALES = [[1e12, "T"], [1e9, "B"], [1e6, "M"]];
const SUPERSCRIPT = { "-": "⁻", 0: "⁰", 1: "¹", 2: "²", 3: "³", 4: "⁴", 5: "⁵", 6: "⁶", 7: "⁷", 8: "⁸", 9: "⁹" };
const digits3 = (v) => v.toLocaleString("en-US", { maximumSignificantDigits: 3 });
function powerOfTen(v) {
  const exponent = Math.floor(Math.log10(Math.abs(v)));
  const mantissa = digits3(v / 10 ** exponent);
  return `${mantissa} × 10${String(exponent).replace(/./g, (c) => SUPERSCRIPT[c])}`;
}
const fmt = (v) => {
  if (v === null || v === undefined || !isFinite(v)) return "–";
  const a = Math.abs(v);
  if (a === 0) return "0";
  if (a >= 1e15 || a < 1e-6) return powerOfTen(v);
  for (const [size, word] of SCALES) if (a >= size * 0.9995) return `${digits3(v / size)} ${word}`;
  return digits3(v);
};
// A short tick label for a chart axis: 1, 10, 100, 1k, 10k, 1M, 1B (no space: it sits under a grid line).
function fmtTick(v) {
  const a = Math.abs(v);
  if (a >= 1e15 || (a < 1e-6 && a > 0)) return powerOfTen(v);
  for (const [size, word] of [...SCALES, [1e3, "k"]]) if (a >= size * 0.9995) return `${digits3(v / size)}${word}`;
  return digits3(v);
}
// The service's sentences (a workload, a reason, an assumption) carry numbers as the core wrote them
// ("7e+10-parameter", "3.38e+04 days", "4194304 tokens"); shown here as prose reads them ("70 billion-parameter",
// "33,800 days", "4,194,304 tokens"), as the command line's output.humanise does. Digits inside a word, a path
// or after "@" (a commit, a page id) are left as written.
const EXPONENT_NUMBER = /(?<![\w.@:/#-])[-+]?\d+(?:\.\d+)?[eE][-+]?\d+(?![\w.])/g;
const LONG_INTEGER = /(?<![\w.,@:/#-])\d{5,}(?![\w.,-])/g;
function inWords(v) {
  for (const [size, word] of [[1e12, "trillion"], [1e9, "billion"], [1e6, "million"]]) {
    if (Math.abs(v) >= size * 0.9995 && Math.abs(v) < 1000 * size) return `${digits3(v / size)} ${word}`;
  }
  return fmt(v);
}
// integers: false for a source, whose long numbers are ids (a revision, a commit), printed as written.
function humanise(text, { integers = true } = {}) {
  const words = String(text).replace(EXPONENT_NUMBER, (n) => (isFinite(Number(n)) ? inWords(Number(n)) : n));
  return integers ? words.replace(LONG_INTEGER, (n) => Number(n).toLocaleString("en-US")) : words;
}
// Money: "79.1 M USD", "1,500 USD", "0.213 USD".
const fmtMoney = (value, unit = "USD") => `${fmt(value)} ${unit}`;
// Durations in the unit a person reads them in (never "16,000 ms" or "0.178 hour"), chosen from the
// expected value; the range is shown in the same unit.
const SECONDS = { ms: 1e-3, s: 1, second: 1, min: 60, minute: 60, h: 3600, hour: 3600, d: 86400, day: 86400,
                  week: 604800, year: 31557600 };
const DURATIONS = [["year", 31557600, 2 * 31557600], ["days", 86400, 3 * 86400], ["h", 3600, 2 * 3600],
                   ["min", 60, 120], ["s", 1, 1], ["ms", 1e-3, 0]];
function humanRange(r) {
  const factor = r && SECONDS[r.unit];
  if (!factor) return r;
  const expected = r.expected * factor;
  const [unit, size] = DURATIONS.find(([, , from]) => Math.abs(expected) >= from) || DURATIONS[DURATIONS.length - 1];
  return { low: r.low * factor / size, expected: expected / size, high: r.high * factor / size, unit };
}
// A time range in a given human unit (see DURATIONS), so that every point of a chart shares one axis unit.
function inDuration(r, unit) {
  const factor = r && SECONDS[r.unit];
  const size = (DURATIONS.find(([u]) => u === unit) || [])[1];
  if (!factor || !size) return r;
  return { low: r.low * factor / size, expected: r.expected * factor / size, high: r.high * factor / size, unit };
}
const fmtRange = (r) => { r = humanRange(r); return r ? `${fmt(r.expected)} (${fmt(r.low)}–${fmt(r.high)}) ${r.unit}` : "–"; };
const fmtQty = (q) => { if (!q) return "–"; const h = humanRange({ low: q.value, expected: q.value, high: q.value, unit: q.unit });
  return `${fmt(h.expected)} ${h.unit}`; };
// A range as a table cell: the expected value on one line, low–high under it (keeps columns narrow).
function rangeCell(r, basis) {
  if (!r) return "–";
  r = humanRange(r);
  if (basis) return el("span", {}, `${fmt(r.expected)} ${r.unit} `, el("span", { class: `basis basis-${basis}`, title: basis === "buy"
    ? "no rent price: the purchase amortised over 3 years plus energy" : "an on-demand cloud price" }, basis),
    el("br"), el("small", { class: "muted" }, `${fmt(r.low)}–${fmt(r.high)}`));
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
// The pages' fixed lists of names (device kinds, prices, objectives, weight formats, KV caches, runtimes, length sets,
// launch tools) are the core's, from GET /v1/choices: a select marked data-choices="LIST" gets LIST's names after the
// options it holds (its default: "all", "none" ...), so that no list is written out a second time in the page.
// Resolves once every select is filled; the page is marked data-choices="loaded" then (the browser tests wait on it).
async function fillChoices() {
  try {
    const response = await fetch("/v1/choices");
    if (!response.ok) return;
    const lists = await response.json();
    for (const select of document.querySelectorAll("select[data-choices]")) {
      select.append(...(lists[select.dataset.choices] || []).map((c) => el("option", { value: c.value }, c.label)));
    }
    document.documentElement.dataset.choices = "loaded";
  } catch (error) { /* the selects keep the options they hold: the service's defaults */ }
}
