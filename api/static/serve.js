// Serving: the serve form's /v1/recommend request ("task": "inference") and its answer: the
// devices that serve the model at the targets, a chart of tokens/s per user against total
// tokens/s (or cost per million tokens), the devices that cannot, and the assumptions. Under
// traffic (a rate or users, SLOs): the deployments with replicas and cost per million tokens, and
// the top one's latency percentiles against load (/v1/inference on one replica at rising rates).
// Uses app.js's textFields, post, drawInto and modelOrParams.
"use strict";
const serveForm = document.getElementById("serve-form");
const CHEAPEST = 3;  // points drawn filled: the top of the table, which is ranked by cost per million tokens
let served = null;  // the last serving answer, redrawn when the vertical axis changes
let speedTarget = null;  // the tokens/s per user that answer was asked for (a plain number the service took), drawn

const LOAD_FIELDS = ["rate", "users", "think_time", "slo_ttft", "slo_tpot", "slo_percentile", "max_utilisation",
  "runtime_version"];
const LOAD_STEPS = [0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5];  // fractions of a replica's largest rate within the SLOs
let loadCurve = null;  // [rate, /v1/inference answer] of the top deployment, redrawn when the latency changes

// A price's basis and date beside it, as the command line's " (rent 2026-09-20)", " (buy, street 2023-10)".
function priceSaid(price) {
  if (!price) return "";
  const kind = price.purchase_basis ? `, ${price.purchase_basis}` : "";
  return ` (${price.price_basis}${kind}${price.date ? " " + price.date : ""})`;
}
// A price with its basis and date on a line under it, so the column stays narrow.
function priceCell(text, price) {
  const said = priceSaid(price).trim();
  return said ? el("span", {}, text, el("br"), el("small", { class: "muted" }, said)) : text;
}
// The device with its weights and KV-cache format under its name, as the command line's "RTX 4090 (w8a8, KV fp8)".
function deviceCell(r) {
  return el("span", {}, r.name, el("br"), el("small", { class: "muted" }, `${r.weights}, KV ${r.kv_cache}`));
}

function underLoad() {
  return ["rate", "users", "burst"].some((name) => serveForm.elements[name].value.trim());
}
// a finite benchmark (prompts, burst) is asked of the device given, as `sizer inference --prompts/--burst` asks it
const BENCHMARK_FIELDS = ["prompts", "burst", "range_ratio"];

function serveBody() {
  const body = { task: "inference" };
  // an empty choice leaves the format to the search (under load) or the default (offline)
  if (serveForm.elements.weights.value) body.weights = serveForm.elements.weights.value;
  if (serveForm.elements.kv_cache.value) body.kv_cache = serveForm.elements.kv_cache.value;
  // the runtime and the price basis, as the CLI's --runtime and --pricing: one question, one answer
  for (const name of ["runtime", "pricing"]) if (serveForm.elements[name].value) body[name] = serveForm.elements[name].value;
  // a named length set brings its own prompt and output lengths (the service refuses both at once)
  const named = underLoad() && serveForm.elements.lengths.value;
  textFields(serveForm, body, named ? ["model", "params"] : ["model", "params", "prompt_len", "output_len"]);
  if (serveForm.elements.max_devices.value.trim()) body.max_devices = Number(serveForm.elements.max_devices.value);
  // data-centre devices unless asked, as the CLI's --consumer
  if (serveForm.elements.consumer.checked) body.consumer = true;
  if (underLoad()) {
    textFields(serveForm, body, [...LOAD_FIELDS, ...BENCHMARK_FIELDS]);  // a recommendation refuses a benchmark, naming it
    if (serveForm.elements.lengths.value) body.lengths = serveForm.elements.lengths.value;
    if (serveForm.elements.disaggregated.checked && serveForm.elements.rate.value.trim()) body.disaggregated = true;
    if (serveForm.elements.tuned.checked) body.tuned = true;  // as the CLI's --tuned (a ranking refuses it, naming it)
  } else {
    textFields(serveForm, body, ["batch", "tokens_per_s_per_user", "time_to_first_token", "total_tokens_per_s"]);
  }
  return body;
}

// One device (a local question): /v1/inference, with the runtime and the depth only where given.
// Under load (a rate, users or a burst) the device's deployment under that load, as `sizer inference -d ... --rate`.
function localBody() {
  const body = { device: serveForm.elements.device.value.trim() };
  for (const name of ["weights", "kv_cache", "runtime", "pricing", "emit"]) if (serveForm.elements[name].value) body[name] = serveForm.elements[name].value;
  if (!underLoad()) return textFields(serveForm, body, ["model", "params", "prompt_len", "output_len", "batch", "depth"]);
  const named = serveForm.elements.lengths.value;
  if (named) body.lengths = named;
  textFields(serveForm, body, named ? ["model", "params"] : ["model", "params", "prompt_len", "output_len"]);
  if (serveForm.elements.tuned.checked) body.tuned = true;  // as the CLI's --tuned
  return textFields(serveForm, body, [...LOAD_FIELDS, ...BENCHMARK_FIELDS]);
}

// One device under load: its latency percentiles, throughput, replicas and, above capacity, that it is saturated
// (the CLI's table, in a sentence; the assumptions hold the rest).
function renderDeviceLoad(result) {
  const lat = result.latency, cap = result.capacity;
  const note = (name) => result.assumptions.find((a) => a.name === name);
  const pct = (p) => (p ? `${fmt(p.p50)} / ${fmt(p.p90)} / ${fmt(p.p99)} ${p.unit}` : "–");
  const saturated = note("saturated") || note("one replica");
  document.getElementById("serve-summary").textContent =
    `${result.model} with ${result.weights} weights on ${result.count > 1 ? `${result.count} × ` : ""}${result.device} ` +
    `under ${note("load") ? note("load").value : "load"}: time to first token p50 / p90 / p99 ${pct(lat && lat.ttft)}, ` +
    `time per output token ${pct(lat && lat.tpot)}, ${fmt(result.output_tokens_per_s.value)} output tokens/s on ` +
    `${cap.replicas ?? "no"} replica(s), ${fmt(100 * cap.utilisation)} % utilised.`;
  const line = document.getElementById("serve-runtime");
  line.textContent = saturated ? `Saturated: ${humanise(saturated.value)}` : "Not saturated: the load is within capacity.";
  line.hidden = false;
  document.getElementById("serve-fixes").hidden = true;
  showOneDevice(result);
}

// One device's answer (under load or local): its launch command and assumptions, no ranking tables.
function showOneDevice(result) {
  showLaunch(result.launch);
  fillRows(document.getElementById("serve-assumptions"), assumptionRows(result.assumptions));
  fillRows(document.getElementById("serve-rejected"), []);
  document.getElementById("serve-rejected-count").textContent = 0;
  document.getElementById("serve-offline").hidden = true;
  document.getElementById("serve-load").hidden = true;
  const section = document.getElementById("serve-result");
  section.dataset.task = "serve";
  section.hidden = false;
  showResult(section);
}

// Its answer: speed, depth and memory in a sentence, the runtime it assumed (and why) beneath, then the assumptions.
function renderLocal(result, depth) {
  const note = (name) => result.assumptions.find((a) => a.name === name);
  const runtime = note("runtime");
  document.getElementById("serve-summary").textContent =
    `${result.model} with ${result.weights} weights on ${result.count > 1 ? `${result.count} × ` : ""}${result.device}` +
    (result.fits ? "" : " does not fit") + `: ${fmtRange(result.decode_tokens_per_s)} per user, time to first token ` +
    `${fmtRange(result.time_to_first_token)} for ${fmt(result.prompt_len)} prompt tokens` +
    (depth ? ` after ${Number(depth).toLocaleString("en-US")} tokens already in the context` : "") +  // exact: a count
    `; ${memoryText(result.memory_per_device, result.device_memory)} per device.`;
  const line = document.getElementById("serve-runtime");
  line.textContent = runtime ? `Runtime: ${humanise(runtime.value)}` : "Runtime: none named (the data-centre serving model).";
  line.hidden = false;
  // where it does not fit, the changes that would (each evaluated again), as `sizer inference` lists them
  const fixes = document.getElementById("serve-fixes");
  const changes = (result.suggestions || []).map((s) => `${humanise(s.change)} (${memoryText(s.memory_per_device, s.device_memory)}, ` +
    `${s.decode_tokens_per_s ? fmtRange(s.decode_tokens_per_s) : "–"} per user)`);
  fixes.textContent = changes.length ? `What would make it fit: ${changes.join("; ")}.` : "";
  fixes.hidden = !changes.length;
  showOneDevice(result);
}

// The launch command of the answer's setup (the CLI's --emit), with a button that copies it as the CLI prints it.
function showLaunch(launch) {
  const box = document.getElementById("serve-launch");
  box.hidden = !launch;
  if (!launch) return;
  document.getElementById("serve-launch-title").textContent = `Launch (${launch.version}):`;
  const text = [launch.command, launch.config].filter(Boolean).join("\n\n");
  document.getElementById("serve-launch-command").textContent = text;
  const notes = document.getElementById("serve-launch-notes");
  notes.replaceChildren(...launch.notes.map((n) => el("li", {}, n)));
  document.getElementById("serve-launch-copy").onclick = () => navigator.clipboard && navigator.clipboard.writeText(text);
}

function drawServeChart() {
  const cost = document.getElementById("serve-y").value === "cost";
  document.getElementById("serve-chart-title").textContent =
    `Tokens/s per user against ${cost ? "cost per million output tokens" : "total tokens/s"}`;
  document.getElementById("serve-y-caption").textContent = cost ? "down is cheaper per token" : "up is more tokens in total";
  const unit = served.ranked.length ? served.ranked[0].decode_tokens_per_s.unit : "tokens/s";
  drawInto("serve-chart", served.ranked.map((r) => ({
    label: r.count > 1 ? `${r.count}× ${r.name}` : r.name, x: r.decode_tokens_per_s,
    y: cost ? r.cost_per_million_tokens : r.total_tokens_per_s, pareto: r.rank <= CHEAPEST })),
    `speed per user [${unit}]`, cost ? "cost per million output tokens [USD]" : `total over all users [${unit}]`,
    { join: false, mark: "cheapest",
      limits: speedTarget ? [{ axis: "x", value: speedTarget, label: `target ${fmt(speedTarget)} ${unit} per user` }] : [],
      empty: cost ? "No device that serves it has a rent price to plot." : "No device serves it at these targets." });
}

function drawLoadChart() {
  const which = document.getElementById("serve-load-y").value;
  const name = { ttft: "time to first token", tpot: "time per output token", e2e: "end-to-end latency" }[which];
  const points = loadCurve.filter(([, a]) => a.latency && a.latency[which]).map(([rate, a]) => {
    const p = a.latency[which];
    return { label: `${fmt(rate)}/s`, x: { low: rate, expected: rate, high: rate, unit: "1/s" },
             y: { low: p.p50, expected: p.p99 >= p.p50 ? p.p99 : p.p50, high: p.p99, unit: p.unit },
             pareto: a.capacity.slo_met };
  });
  const unit = points.length ? points[0].y.unit : "";
  // the SLO of the latency shown, as the service read it, in the chart's unit
  const answered = loadCurve.find(([, a]) => a.capacity && a.capacity.slo && a.capacity.slo[which]);
  const slo = answered && answered[1].capacity.slo[which];
  const limits = slo && SECONDS[slo.unit] && SECONDS[unit]
    ? [{ axis: "y", value: slo.value * SECONDS[slo.unit] / SECONDS[unit], label: `SLO ${fmtQty(slo)}` }] : [];
  drawInto("serve-load-chart", points, "requests per second on one replica [1/s]", `${name}, median to p99 [${unit}]`,
           { join: true, mark: "meets", empty: "No load point answered.", limits });
}

async function fetchLoadCurve(result) {
  const top = result.ranked[0];
  const title = document.getElementById("serve-load-title");
  if (!top) { document.getElementById("serve-load").hidden = true; return; }
  title.textContent = `Latency against load: one replica of ${top.count} × ${top.name}`;
  const base = { device: top.device, count: top.count, weights: top.weights, kv_cache: top.kv_cache, replicas: 1 };
  if (!serveForm.elements.lengths.value) Object.assign(base, { prompt_len: result.prompt_len, output_len: result.output_len });
  textFields(serveForm, base, ["model", "params", "slo_ttft", "slo_tpot", "slo_percentile"]);
  for (const name of ["lengths", "runtime", "pricing"]) if (serveForm.elements[name].value) base[name] = serveForm.elements[name].value;
  const cap = top.max_request_rate.value;
  loadCurve = [];
  for (const f of LOAD_STEPS) {
    const rate = cap * f;
    const response = await fetch("/v1/inference", { method: "POST", headers: { "Content-Type": "application/json" },
                                                    body: JSON.stringify({ ...base, rate }) });
    if (response.ok) loadCurve.push([rate, await response.json()]);
  }
  const cost = top.cost_per_million_tokens;
  document.getElementById("serve-load-cost").textContent = cost ?
    `At the asked load: ${fmtRange(cost)} per million output tokens (${cost.price_basis === "buy" ? "amortised purchase, no rent price" : "rent"}).` :
    "No price for this device: no cost per token.";
  drawLoadChart();
}

// Which device segments the ranking searched, and how many it left out (data-centre only unless asked).
function searchedSaid(result) {
  const s = result.devices_searched;
  if (!s || !s.left_out.length) return "";
  return `; ${s.searched.join(", ")} devices only (${s.left_out.map((x) => `${x.devices} ${x.segment}`).join(", ")} left out)`;
}

function renderServeLoad(result) {
  const asked = result.load.request_rate ? `${fmt(result.load.request_rate.value)} requests/s` : `${result.load.users} users`;
  document.getElementById("serve-summary").textContent =
    `${result.ranked.length} deployment(s) serve ${result.model} (${result.weights}) at ${asked}, ` +
    `${fmt(result.load.prompt_len.mean)} prompt + ${fmt(result.load.output_len.mean)} output tokens on average ` +
    `(${result.load.prompt_len.distribution}); ${result.rejected.length} cannot; ranked by ${result.objective === "cost" ?
    "cost per million output tokens" : result.objective}` + searchedSaid(result) + ".";
  fillRows(document.getElementById("served-load"), result.ranked.map((r) => [
    r.rank, deviceCell(r), (r.deployment === "disaggregated" ? `${r.prefill_replicas} prefill + ${r.decode_replicas} decode`
      : `${r.replicas}`) + ` × ${r.count}${r.split === "layer" ? " (layers)" : ""}`,
    // a capacity not bisected is the share of the load it was shown to meet: a lower bound, marked as the CLI's "(b)"
    (r.capacity_searched ? "" : "≥ ") + fmt(r.max_request_rate.value),
    fmtQty({ value: r.latency.ttft.p99, unit: r.latency.ttft.unit }),
    r.latency.tpot ? fmtQty({ value: r.latency.tpot.p99, unit: r.latency.tpot.unit }) : "–",
    r.cost_per_million_tokens ? priceCell(fmtQty(r.cost_per_million_tokens), r.price) : "–",
    // each replica's load over its capacity and the share left (the headroom; with ≥ at most, and at least)
    `${Math.round(100 * r.utilisation)} % (${Math.round(100 * r.headroom)} %)`]));
  document.getElementById("serve-offline").hidden = true;
  document.getElementById("serve-load").hidden = false;
  fetchLoadCurve(result);
}

// The devices that cannot serve it, behind their count (80 of them made a phone's page 12,000 px tall).
function fillServeRejected(result) {
  fillRows(document.getElementById("serve-rejected"), result.rejected.map((r) => [r.name, humanise(r.reason)]));
  document.getElementById("serve-rejected-count").textContent = result.rejected.length;
}

function renderServe(result) {
  document.getElementById("serve-runtime").hidden = true;
  document.getElementById("serve-launch").hidden = true;
  document.getElementById("serve-fixes").hidden = true;
  fillServeRejected(result);
  fillRows(document.getElementById("serve-assumptions"), assumptionRows(result.assumptions));
  if (result.scenario === "load") {
    const section = document.getElementById("serve-result");
    section.dataset.task = "serve";
    section.hidden = false;
    renderServeLoad(result);
    return showResult(section);
  }
  document.getElementById("serve-offline").hidden = false;
  document.getElementById("serve-load").hidden = true;
  served = result;
  document.getElementById("serve-summary").textContent =
    `${result.ranked.length} device(s) serve ${result.model} with ${result.weights} weights ` +
    `(${result.prompt_len} prompt + ${result.output_len} output tokens per user), ${result.rejected.length} cannot; ` +
    `ranked by ${result.objective === "cost" ? "cost per million output tokens" : result.objective}` + searchedSaid(result) +
    ". Ranges are expected (low–high).";
  // the price column holds rents, or amortised purchases where the answer was priced to buy
  document.getElementById("serve-price-head").textContent =
    result.ranked.some((r) => r.price_basis === "buy") ? "price per hour (basis, date)" : "rent per hour (basis, date)";
  fillRows(document.getElementById("served"), result.ranked.map((r) => [
    r.rank, deviceCell(r), r.count, r.batch, rangeCell(r.decode_tokens_per_s), rangeCell(r.total_tokens_per_s),
    rangeCell(r.time_to_first_token), `${fmt(r.memory_per_device.value)} / ${fmt(r.device_memory.value)} ${r.device_memory.unit}`,
    r.rent_per_hour ? priceCell(fmtQty(r.rent_per_hour), r.price) : "–",
    rangeCell(r.cost_per_million_tokens)]));
  topOnPhones(document.getElementById("served"), document.getElementById("served-more"));
  fillRows(document.getElementById("serve-assumptions"), assumptionRows(result.assumptions));
  const section = document.getElementById("serve-result");
  section.dataset.task = "serve";
  section.hidden = false;  // before drawing: the chart takes the width it is shown at
  drawServeChart();
  showResult(section);
}

// On a phone, the first PHONE_TOP ranked devices and a button for the rest (the desktop table shows them all).
const PHONE_TOP = 10;
function topOnPhones(table, button) {
  const rows = [...table.querySelectorAll("tbody tr")];
  rows.forEach((tr, i) => tr.classList.toggle("beyond-top", i >= PHONE_TOP));
  table.classList.toggle("top-only", rows.length > PHONE_TOP);
  button.hidden = rows.length <= PHONE_TOP;
  button.textContent = `Show all ${rows.length} devices that serve it`;
  button.onclick = () => { table.classList.remove("top-only"); button.hidden = true; };
}

serveForm.elements.params.dataset.placeholder = serveForm.elements.params.placeholder;
serveForm.elements.model.addEventListener("input", () => modelOrParams(serveForm));
modelOrParams(serveForm);
serveForm.addEventListener("submit", (event) => {
  event.preventDefault();
  if (serveForm.elements.device.value.trim()) {
    const local = localBody();
    return post(serveForm, local, (answer) => (answer.scenario === "load" ? renderDeviceLoad(answer) : renderLocal(answer, local.depth)),
                "/v1/inference");
  }
  const body = serveBody();
  post(serveForm, body, (answer) => {
    speedTarget = Number(body.tokens_per_s_per_user) || null;
    renderServe(answer);
  });
});
document.getElementById("serve-y").addEventListener("change", () => { if (served) drawServeChart(); });
document.getElementById("serve-load-y").addEventListener("change", () => { if (loadCurve) drawLoadChart(); });
