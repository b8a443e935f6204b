// The catalog page: lists /v1/catalog, filters and sorts it in the page, shows /v1/catalog/{id} on selection.
// The columns come from the answer: a peak column per precision any device has, a price column per price
// field (an object with a value and a date), so that a figure the catalog gains shows without a change here.
"use strict";
let devices = [];
let columns = [];
let sortBy = { key: "name", descending: false };
let shownKey = null;  // the filters and order the table was last drawn for
const $ = (id) => document.getElementById(id);
// The filters apply as they change; pressing Enter must not reload the page (no inline handler: the CSP forbids it).
$("filter").addEventListener("submit", (event) => event.preventDefault());

const PRECISION_ORDER = ["fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4"];
const PRICE_NAMES = { cloud_price: "rent", purchase_price: "purchase" };
const isPrice = (v) => v && typeof v === "object" && "value" in v && "date" in v;

// A column: its heading, the number or text it sorts by, and the cell it shows.
function buildColumns() {
  const precisions = [...new Set(devices.flatMap((d) => Object.keys(d.peaks || {})))]
    .sort((a, b) => (PRECISION_ORDER.indexOf(a) + 1 || 99) - (PRECISION_ORDER.indexOf(b) + 1 || 99));
  const prices = [...new Set(devices.flatMap((d) => Object.keys(d).filter((k) => isPrice(d[k]))))];
  const unitOf = (get) => { const q = devices.map(get).find(Boolean); return q ? q.unit : ""; };
  const figure = (q) => (q ? fmt(q.value) + (q.verified === false ? "*" : "") : "–");
  const named = (d) => el("span", {}, d.name, el("br"), el("small", { class: "muted" }, `${d.vendor} · ${d.architecture}`));
  return [
    { key: "name", head: "name", text: true, value: (d) => d.name.toLowerCase(), cell: named },
    { key: "kind", head: "kind", text: true, value: (d) => d.kind, cell: (d) => d.kind },
    { key: "year", head: "year", value: (d) => d.launch_year, cell: (d) => d.launch_year },
    { key: "memory", head: `memory [${unitOf((d) => d.memory)}]`, value: (d) => d.memory.value, cell: (d) => figure(d.memory) },
    { key: "bandwidth", head: `bandwidth [${unitOf((d) => d.memory_bandwidth)}]`, value: (d) => d.memory_bandwidth.value,
      cell: (d) => figure(d.memory_bandwidth) },
    ...precisions.map((p) => ({ key: `peak-${p}`, head: `${p} peak [${unitOf((d) => (d.peaks || {})[p])}]`, peak: p,
      value: (d) => ((d.peaks || {})[p] ? d.peaks[p].value : null), cell: (d) => figure((d.peaks || {})[p]) })),
    ...prices.map((k) => ({ key: k, head: `${PRICE_NAMES[k] || k.replaceAll("_", " ")} [${unitOf((d) => d[k]).replace("hour", "h")}]`,
      value: (d) => (d[k] ? d[k].value : null),
      cell: (d) => (d[k] ? el("span", {}, fmt(d[k].value), el("br"), el("small", { class: "muted" }, priceBrief(d[k]))) : "–") })),
  ];
}

function drawHeads() {
  const row = $("devices").querySelector("thead tr");
  row.replaceChildren(...columns.map((c) => {
    const button = el("button", { type: "button", class: "sort", "data-key": c.key }, c.head);
    button.addEventListener("click", () => sortOn(c));
    const th = el("th", { "data-key": c.key }, button);
    if (c.key === sortBy.key) th.setAttribute("aria-sort", sortBy.descending ? "descending" : "ascending");
    return th;
  }));
}

// The first click on a heading sorts numbers largest first and names A to Z; a second click reverses.
// The Sort by list does the same where the headings are not shown (a phone's cards).
function sortOn(column, descending = sortBy.key === column.key ? !sortBy.descending : !column.text) {
  sortBy = { key: column.key, descending };
  $("sort").value = column.key;
  drawHeads();
  show();
}

function fillSortChoice() {
  $("sort").replaceChildren(...columns.map((c) => el("option", { value: c.key }, c.head)));
  $("sort").value = sortBy.key;
  $("sort").addEventListener("change", () => {
    const column = columns.find((c) => c.key === $("sort").value);
    if (column) sortOn(column, !column.text);
  });
}

function compare(column, descending) {
  return (a, b) => {
    const x = column.value(a), y = column.value(b);
    if (x === null || x === undefined) return y === null || y === undefined ? 0 : 1;  // devices without the figure last
    if (y === null || y === undefined) return -1;
    const order = x < y ? -1 : x > y ? 1 : 0;
    return descending ? -order : order;
  };
}

function matches(d) {
  const q = $("q").value.trim().toLowerCase();
  const text = `${d.id} ${d.name} ${d.vendor} ${d.architecture}`.toLowerCase();
  const minMemory = Number($("min-memory").value || 0);
  return (!q || q.split(/\s+/).every((word) => text.includes(word)))
    && (!$("kind").value || d.kind === $("kind").value)
    && (!$("precision").value || d.precisions.includes($("precision").value))
    && d.memory.value >= minMemory;
}

// Redrawn only when the filters or the order change: the search box's change event (on leaving it, that is
// on the click of a row) used to redraw the rows under the pointer, so that the click found no row.
function show() {
  const key = JSON.stringify([$("q").value, $("kind").value, $("precision").value, $("min-memory").value, sortBy]);
  if (key === shownKey) return;
  shownKey = key;
  const column = columns.find((c) => c.key === sortBy.key) || columns[0];
  const shown = devices.filter(matches).sort(compare(column, sortBy.descending));
  $("count").textContent = `${shown.length} of ${devices.length} devices`;
  const rows = shown.map((d) => el("tr", { tabindex: "0", "data-id": d.id },
    ...columns.map((c) => el("td", { "data-label": c.head, "data-key": c.key, "data-value": c.value(d) ?? "" }, c.cell(d)))));
  $("devices").querySelector("tbody").replaceChildren(...rows);
}

// One listener on the table body: rows come and go, the listener stays.
const rowOf = (event) => event.target.closest("tbody tr[data-id]");
$("devices").querySelector("tbody").addEventListener("click", (event) => { const row = rowOf(event); if (row) showDevice(row.dataset.id); });
$("devices").querySelector("tbody").addEventListener("keydown", (event) => {
  const row = rowOf(event);
  if (row && event.key === "Enter") showDevice(row.dataset.id);
});

// A figure recalled or from a low-confidence row says so next to its value.
const checked = (q) => (q.verified === false ? " (unverified)" : "");
// A price's basis and date: a purchase says list, street, price-history median, analyst estimate or second-hand
// (and the system it is a share of, or the machine it is the price of); an offer is a rent with its term.
function priceSaid(p) {
  const system = p.devices_in_system > 1 ? `, 1/${p.devices_in_system} of ${p.system || "a system"}` : p.system ? `, ${p.system}` : "";
  return p.basis ? `${p.basis}${system}, ${p.date}` : `rent${p.term ? ", " + p.term : ""}, ${p.date}`;
}

// The same in a table cell: basis and date only (the machine a Mac price is of is long: the detail view names it).
function priceBrief(p) {
  return p.basis ? `${p.basis}${p.devices_in_system > 1 ? ", system share" : ""}, ${p.date}` : p.date;  // the column says rent
}

async function showDevice(id) {
  const response = await fetch(`/v1/catalog/${encodeURIComponent(id)}`);
  const d = await response.json();
  if (!response.ok) return;
  const rows = [];
  for (const name of ["fp32_cores", "cores", "threads", "base_clock", "boost_clock", "derived_fp32_peak", "memory",
                      "memory_bandwidth", "tdp", "interconnect_bandwidth"]) {
    if (d[name]) rows.push([name.replaceAll("_", " "), fmtQty(d[name]) + checked(d[name]), d[name].source]);
  }
  for (const [precision, q] of Object.entries(d.peaks)) rows.push([`${precision} peak (dense)`, fmtQty(q) + checked(q), q.source]);
  if (d.purchase_price) rows.push(["purchase price (costs use it)", `${fmtQty(d.purchase_price)} (${priceSaid(d.purchase_price)})`
    + checked(d.purchase_price), d.purchase_price.source]);
  for (const p of d.purchase_prices || []) rows.push(["purchase price", `${fmtQty(p)} (${priceSaid(p)})` + checked(p), p.source]);
  for (const p of d.cloud_prices) rows.push([`rent: ${p.provider || ""} ${p.instance || ""}`, `${fmtQty(p)} (${priceSaid(p)})`, p.source]);
  $("detail-title").textContent = `${d.name} (${d.id})`;
  fillRows($("detail-table"), rows);
  $("detail").hidden = false;
  $("detail").scrollIntoView({ behavior: "smooth" });
}

async function load() {
  try {
    await fillChoices();
    const response = await fetch("/v1/catalog");
    devices = (await response.json()).devices;
    columns = buildColumns();
    fillSortChoice();
    drawHeads();
    show();
  } catch (error) {
    $("errors").textContent = `The service did not answer: ${error.message}`;
    $("errors").hidden = false;
  }
}

for (const id of ["q", "kind", "precision", "min-memory"]) for (const event of ["input", "change"]) $(id).addEventListener(event, show);
load();
