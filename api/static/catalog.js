// The catalog page: lists /v1/catalog, filters it in the page, shows /v1/catalog/{id} on selection.
"use strict";
let devices = [];
const $ = (id) => document.getElementById(id);
// The filters apply as they change; pressing Enter must not reload the page (no inline handler: the CSP forbids it).
$("filter").addEventListener("submit", (event) => event.preventDefault());

function matches(d) {
  const q = $("q").value.trim().toLowerCase();
  const text = `${d.id} ${d.name} ${d.vendor} ${d.architecture}`.toLowerCase();
  const minMemory = Number($("min-memory").value || 0);
  return (!q || q.split(/\s+/).every((word) => text.includes(word)))
    && (!$("kind").value || d.kind === $("kind").value)
    && (!$("precision").value || d.precisions.includes($("precision").value))
    && d.memory.value >= minMemory;
}

// Each cell carries its column's heading, which the phone's card layout shows beside the value.
const HEADS = [...document.querySelectorAll("#devices thead th")].map((th) => th.textContent);

function show() {
  const shown = devices.filter(matches);
  $("count").textContent = `${shown.length} of ${devices.length} devices`;
  const rows = shown.map((d) => {
    const row = el("tr", { tabindex: "0", "data-id": d.id }, ...[d.name, d.kind, d.vendor, d.architecture, d.launch_year,
      fmtQty(d.memory), fmtQty(d.memory_bandwidth), fmtQty(d.fp32_peak), d.precisions.join(", ")]
      .map((c, i) => el("td", { "data-label": HEADS[i] || "" }, c)));
    row.addEventListener("click", () => showDevice(d.id));
    row.addEventListener("keydown", (e) => { if (e.key === "Enter") showDevice(d.id); });
    return row;
  });
  $("devices").querySelector("tbody").replaceChildren(...rows);
}

// A figure recalled or from a low-confidence row says so next to its value.
const checked = (q) => (q.verified === false ? " (unverified)" : "");

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
  if (d.purchase_price) rows.push(["purchase price", `${fmt(d.purchase_price.value)} USD (${d.purchase_price.date})`, d.purchase_price.source]);
  for (const p of d.cloud_prices) rows.push([`rent: ${p.provider || ""} ${p.instance || ""}`, `${fmt(p.value)} ${p.unit} (${p.date})`, p.source]);
  $("detail-title").textContent = `${d.name} (${d.id})`;
  fillRows($("detail-table"), rows);
  $("detail").hidden = false;
  $("detail").scrollIntoView({ behavior: "smooth" });
}

async function load() {
  try {
    const response = await fetch("/v1/catalog");
    devices = (await response.json()).devices;
    show();
  } catch (error) {
    $("errors").textContent = `The service did not answer: ${error.message}`;
    $("errors").hidden = false;
  }
}

for (const id of ["q", "kind", "precision", "min-memory"]) for (const event of ["input", "change"]) $(id).addEventListener(event, show);
load();
