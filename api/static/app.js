// The calculator page: a task choice (pre-train, fine-tune, serve), one form each; builds the
// /v1/recommend request from the shown form and shows the answer. Serving's answer: serve.js.
"use strict";
// Presets only fill the form; every value stays visible and editable.
// Numbers as people write them ("1.3B", "26B", "60,000"), never an exponent; the service reads every one of them.
const PRESETS = {
  "mlp-small": { label: "MLP, 0.7 M, 60 k samples × 400 epochs", params: "700k", data_mode: "samples",
                 samples: "60,000", epochs: "400", batch_size: "512", precision: "fp32", optimizer: "adam" },
  "gpt2-small": { label: "GPT-2 small size, 124 M, 2.5 B tokens", params: "124M", data_mode: "tokens",
                  tokens: "2.5B", precision: "mixed", optimizer: "adam" },
  "1.3b": { label: "1.3 B transformer, 26 B tokens", params: "1.3B", data_mode: "tokens",
            tokens: "26B", precision: "mixed", optimizer: "adam" },
  "7b": { label: "7 B transformer, 20 B tokens", params: "7B", data_mode: "tokens", tokens: "20B",
          precision: "mixed", optimizer: "adam" },
  "70b": { label: "70 B transformer, 1.4 T tokens", params: "70B", data_mode: "tokens", tokens: "1.4T",
           precision: "mixed", optimizer: "adam" },
};
// A count as typed ("1.3B", "1,300,000,000", "1.3e9") as a number, to tell whether a field still holds a preset's.
const COUNT_WORDS = { k: 1e3, m: 1e6, b: 1e9, t: 1e12 };
function countOf(text) {
  const match = /^\s*([0-9][0-9,]*(?:\.[0-9]*)?(?:e[-+]?[0-9]+)?)\s*([kmbt]?)\s*$/i.exec(String(text || ""));
  return match ? Number(match[1].replace(/,/g, "")) * (COUNT_WORDS[match[2].toLowerCase()] || 1) : NaN;
}
const form = document.getElementById("recommend-form");
const finetuneForm = document.getElementById("finetune-form");
const FORMS = { pretrain: form, finetune: finetuneForm, serve: document.getElementById("serve-form") };
const HASHES = { pretrain: "", finetune: "#fine-tune", serve: "#serve" };

function dataMode() { return form.querySelector("input[name=data_mode]:checked").value; }

function showMode() {
  const mode = dataMode();
  for (const node of form.querySelectorAll(".mode-tokens")) node.hidden = mode !== "tokens";
  for (const node of form.querySelectorAll(".mode-samples")) node.hidden = mode !== "samples";
}

function applyPreset(key) {
  const preset = PRESETS[key];
  if (!preset) return;
  for (const name of [...PRESET_FIELDS, "seq_len"]) form.elements[name].value = preset[name] || "";
  if (!preset.epochs) form.elements.epochs.value = "1";
  form.elements.precision.value = preset.precision;
  form.elements.optimizer.value = preset.optimizer;
  form.querySelector(`input[name=data_mode][value=${preset.data_mode}]`).checked = true;
  form.elements.model.value = "";
  delete form.elements.params.dataset.kept;
  modelOrParams(form);
  showMode();
}

// The Preset names what the fields hold: a preset whose every value the fields still hold, else "custom".
// (A screenshot that says "1.3 B transformer" above 7e9 parameters misleads whoever reads it.)
const PRESET_FIELDS = ["params", "tokens", "samples", "epochs", "batch_size"];
function sameValue(typed, preset) {
  const a = String(typed || "").trim(), b = String(preset || "").trim();
  return a === b || (a !== "" && b !== "" && countOf(a) === countOf(b));
}
function presetOfFields() {
  if (form.elements.model.value.trim() || form.elements.seq_len.value.trim()) return "";
  const mode = dataMode();
  const fields = mode === "tokens" ? ["params", "tokens", "batch_size"] : ["params", "samples", "epochs", "batch_size"];
  const found = Object.entries(PRESETS).find(([, p]) => p.data_mode === mode && p.precision === form.elements.precision.value &&
    p.optimizer === form.elements.optimizer.value && fields.every((name) => sameValue(form.elements[name].value, p[name])));
  return found ? found[0] : "";
}
function followPreset() { presetSelect.value = presetOfFields(); }

// A model by name brings its own parameter count: while one is typed, the count is not asked for.
function modelOrParams(target) {
  const params = target.elements.params;
  if (!params) return;
  const named = target.elements.model.value.trim() !== "";
  if (named && params.value) { params.dataset.kept = params.value; params.value = ""; }
  if (!named && !params.value && params.dataset.kept) params.value = params.dataset.kept;
  params.disabled = named;
  params.placeholder = named ? "from the model" : params.dataset.placeholder;
}

// The task shown: its form, and its last answer if it has one.
function currentTask() { return document.querySelector("input[name=task]:checked").value; }

function showTask() {
  const task = currentTask();
  for (const [name, node] of Object.entries(FORMS)) node.hidden = name !== task;
  const result = document.getElementById("result");
  const owned = document.getElementById("owned-result");
  const ownedShown = owned.dataset.task === task;
  result.hidden = !(result.dataset.task === task) || ownedShown;
  owned.hidden = !ownedShown;
  const served = document.getElementById("serve-result");
  served.hidden = !(task === "serve" && served.dataset.task === "serve");
  history.replaceState(null, "", location.pathname + location.search + HASHES[task]);
  redrawCharts();
}

// Text fields go as they are typed ("14 d", "50000 USD", "7e9"); the service parses and checks them.
// Empty fields are left out, so that the service's defaults apply.
function textFields(target, body, names) {
  for (const name of names) {
    const text = target.elements[name].value.trim();
    if (text) body[name] = text;
  }
  return body;
}

function requestBody() {
  const body = { optimizer: form.elements.optimizer.value,
                 // undefined (left out: the service's default) until /v1/choices has filled the selects
                 purchase: form.elements.purchase.value || undefined, objective: form.elements.objective.value || undefined,
                 top: null, suggest: 3 };  // every ranked device, and the changes for 3 rejected ones (the API by default: only where none serves)
  chosen(form, body, ["precision", "framework"]);
  const fields = ["model", "params", "batch_size", "deadline", "budget", ...(dataMode() === "tokens" ? ["tokens", "seq_len"] : ["samples", "epochs"])];
  textFields(form, body, fields);
  if (form.elements.max_devices.value.trim()) body.max_devices = Number(form.elements.max_devices.value);
  if (form.elements.interruptions.value) body.interruptions = form.elements.interruptions.value === "true";
  return withHave(form, body);
}

// The training time, and beneath it the wall-clock with interruptions (failures, checkpoints, restarts) where shown.
function timeCell(r) {
  const cell = rangeCell(r.training_time);
  if (r.training_time_with_interruptions) {
    cell.append(el("br"), el("small", { class: "interrupted" }, `with interruptions ${fmtRange(r.training_time_with_interruptions)}`));
  }
  return cell;
}

// A row's cost with its basis, and under it the kind and date of the price behind it, as the CLI's "[on-demand, 2026-11-09]".
function costCell(r, purchase) {
  const cell = rangeCell(costOf(r, purchase), basisOf(r, purchase));
  if (r.price && cell instanceof Node) {
    cell.append(el("br"), el("small", { class: "muted price-date" }, `${r.price.kind}${r.price.date ? ", " + r.price.date : ""}`));
  }
  return cell;
}

// Fine-tuning: the training request with a method; LoRA rank and adapted matrices where given.
function finetuneBody() {
  const f = finetuneForm.elements;
  const body = { optimizer: f.optimizer.value, purchase: f.purchase.value || undefined, objective: f.objective.value || undefined,
                 top: null, suggest: 3 };
  chosen(finetuneForm, body, ["method", "precision", "state_precision", "loss", "framework"]);
  if (body.framework) delete body.optimizer;  // a named framework's documented recipe sets the optimizer
  for (const flag of ["optimizer_in_backward", "offload_activations"]) if (f[flag].checked) body[flag] = true;  // the recipe's switches
  textFields(finetuneForm, body, ["model", "lora_rank", "lora_targets", "tokens", "seq_len", "batch_size", "deadline", "budget"]);
  if (f.max_devices.value.trim()) body.max_devices = Number(f.max_devices.value);
  return withHave(finetuneForm, body);
}

// A choice left empty ("best on the hardware I have") is left out, so that the service chooses it on that hardware.
function chosen(target, body, names) {
  for (const name of names) if (target.elements[name].value) body[name] = target.elements[name].value;
}

// "Hardware I have": one or more "N x DEVICE", separated by ";"; the service parses each.
function withHave(target, body) {
  const have = target.elements.have.value.split(";").map((s) => s.trim()).filter(Boolean);
  if (have.length) body.have = have;
  if (have.length) textFields(target, body, ["host_memory"]);  // checks an offload suggestion on that hardware
  return body;
}

// Every item of a 422 answer under the name the form shows for its field; anything else as it came.
function clearErrors(target) {
  target.querySelector(".errors").hidden = true;
  for (const node of target.querySelectorAll("[aria-invalid]")) node.removeAttribute("aria-invalid");
}

function showErrors(target, detail) {
  const box = target.querySelector(".errors");
  for (const node of target.querySelectorAll("[aria-invalid]")) node.removeAttribute("aria-invalid");
  const items = Array.isArray(detail) ? detail : [{ loc: [], msg: String(detail) }];
  // Every item of the answer, each under the name the form shows for its field.
  box.replaceChildren(...items.map((d) => {
    const field = d.loc && d.loc[0] === "body" ? String(d.loc[1]).replace(/\[\d+\]$/, "") : undefined;
    const input = field && target.elements[field];
    if (input && input.setAttribute) input.setAttribute("aria-invalid", "true");
    const label = input && input.closest && input.closest("label") ? input.closest("label").firstChild.textContent.trim() : field;
    return el("p", {}, field ? `${label}: ${d.msg.replace(new RegExp(`^${field}: `), "")}` : d.msg);
  }));
  box.hidden = false;
}

// Assumptions as rows: the value in prose numbers; in the source only exponents (its ids and commits stay exact).
function assumptionRows(assumptions) {
  return assumptions.map((a) => [a.name, humanise(a.value), humanise(a.source, { integers: false })]);
}

function costOf(row, purchase) { return purchase === "buy" ? row.cost.buy : row.cost.rent; }
// The basis of a row's cost: "rent" (a cloud price) or "buy" (amortised purchase), from price_basis where the
// answer carries it, else from the first release's rent_basis.
function basisOf(row, purchase) {
  const cost = costOf(row, purchase);
  if (cost && cost.price_basis) return cost.price_basis;
  if (row.cost.price_basis) return row.cost.price_basis;
  return purchase === "buy" || row.cost.rent_basis === "amortised purchase" ? "buy" : "rent";
}
// The Pareto front (time against cost) among the points of one basis only: rent and amortised purchase are never compared.
function paretoOfBasis(points, basis) {
  const same = points.filter((p) => p.basis === basis && p.y && p.x);
  for (const p of points) {
    p.pareto = p.basis === basis && p.y && p.x && !same.some((q) => q !== p && q.x.expected <= p.x.expected &&
      q.y.expected <= p.y.expected && (q.x.expected < p.x.expected || q.y.expected < p.y.expected));
  }
  return points;
}

// The charts drawn, by container id, each redrawn to fit when it is shown or the window changes width.
const charts = new Map();

function drawInto(id, ...args) {
  const container = document.getElementById(id);
  charts.set(id, { args: [container, ...args], width: container.clientWidth });
  drawChart(container, ...args);
}

function redrawCharts() {
  for (const chart of charts.values()) {
    const width = chart.args[0].clientWidth;
    if (width && width !== chart.width) { chart.width = width; drawChart(...chart.args); }
  }
}

// A training answer (pre-training or fine-tuning): the ranked table, the chart, the rejected, the assumptions.
function render(result, task) {
  const purchase = result.purchase;
  document.getElementById("cost-head").textContent = purchase === "buy" ? "buy cost (amortised + energy)" : "rent cost";
  document.getElementById("summary").textContent =
    `${result.ranked.length} device(s) can do it, ${result.rejected.length} cannot; ranked by ${result.objective}. ` +
    `Workload${result.workload.startsWith("default: ") ? " (the default)" : ""}: ${humanise(result.workload.replace(/^(default|given): /, ""))}. ` +
    "Ranges are expected (low–high)." +
    (result.limited_by ? ` Nothing ranked: ${humanise(result.limited_by)}.` : "");  // the limit that hid an answer, as the CLI says it
  const basis = purchase === "buy" ? "buy" : "rent";
  const points = paretoOfBasis(result.ranked.map((r) => ({
    label: r.count > 1 ? `${r.count}× ${r.name}` : r.name, x: r.training_time, y: costOf(r, purchase),
    basis: basisOf(r, purchase) })), basis);
  fillRows(document.getElementById("ranked"), result.ranked.map((r, i) => [
    r.rank, r.name, r.count, timeCell(r), costCell(r, purchase),
    `${fmt(r.memory_per_device.value)} / ${fmt(r.device_memory.value)} ${r.device_memory.unit}`, r.bound, points[i].pareto ? "★" : ""]));
  // the few nearest to working carry the changes that would make them work, each evaluated again
  const changeText = (s) => `${humanise(s.change)}: ${s.training_time ? fmtRange(s.training_time) : "fits"}`;
  fillRows(document.getElementById("rejected"), result.rejected.map((r) => [r.name, humanise(r.reason),
    (r.suggestions || []).map(changeText).join("; ") || "–"]));
  document.getElementById("rejected-count").textContent = result.rejected.length;
  fillRows(document.getElementById("assumptions"), assumptionRows(result.assumptions));
  // one human unit for the chart's time axis, chosen from the median device's expected time
  const middle = result.ranked.length ? result.ranked[Math.floor(result.ranked.length / 2)].training_time : null;
  const timeUnit = middle ? humanRange(middle).unit : "";
  const section = document.getElementById("result");
  document.getElementById("owned-result").dataset.task = "";
  section.dataset.task = task;
  section.hidden = false;  // before drawing: the chart takes the width it is shown at
  const shown = points.filter((p) => p.basis === basis).map((p) => ({ ...p, x: inDuration(p.x, timeUnit) }));
  document.getElementById("chart-basis").textContent = basis === "buy"
    ? "purchase amortised over 3 years plus energy" : "rent (on-demand cloud prices); devices without one are left out";
  // the deadline and budget asked, as the service read them, drawn across the chart
  const limits = [];
  if (result.deadline && timeUnit) {
    const deadline = inDuration({ low: result.deadline.value, expected: result.deadline.value, high: result.deadline.value,
                                  unit: result.deadline.unit }, timeUnit);
    limits.push({ axis: "x", value: deadline.expected, label: `deadline ${fmtQty(result.deadline)}` });
  }
  if (result.budget) limits.push({ axis: "y", value: result.budget.value, label: `budget ${fmtQty(result.budget)}` });
  drawInto("chart", shown, `training time [${timeUnit}]`, `${basis} cost [USD]`, { limits });
  showResult(section);
}

// The answer scrolls into view: on a phone it starts two screens below the button.
function showResult(section) {
  section.scrollIntoView({ block: "start" });
}

// The answer for the user's own hardware ("have"): a row per hardware set, then what would make each that fails work.
function layoutText(layout) {
  const parts = ["tp", "pp", "dp"].filter((k) => layout[k] > 1).map((k) => `${k} ${layout[k]}`);
  if (layout.zero) parts.push(`ZeRO ${layout.zero}`);
  if (layout.recompute && layout.recompute !== "none") parts.push(`recompute ${layout.recompute}`);
  parts.push(`micro-batch ${fmt(layout.micro_batch)} × ${layout.accumulation}`);
  return parts.join(", ");
}

function memoryText(need, has) { return has ? `${fmt(need.value)} / ${fmt(has.value)} ${has.unit}` : fmtQty(need); }

function renderOwned(result, task) {
  document.getElementById("owned-summary").textContent = `${humanise(result.workload)}: answered for your hardware only. ` +
    "Costs say their basis: rent (a cloud price) or buy (the purchase amortised over 3 years plus energy).";
  fillRows(document.getElementById("owned"), result.options.map((o) => [o.hardware, humanise(o.verdict),
    o.fits ? rangeCell(o.training_time) : "–", o.fits && o.cost ? rangeCell(o.cost, o.cost.price_basis) : "–",
    memoryText(o.memory_per_device, o.device_memory), `${o.method}, ${o.precision}; ${layoutText(o.layout)}`]));
  const blocks = result.options.filter((o) => o.suggestions.length).map((o) => {
    const table = el("table", { class: "cards suggestions" }, el("thead", {}, el("tr", {},
      ...["change", "memory need / has", "training time", "cost"].map((h) => el("th", {}, h)))), el("tbody"));
    fillRows(table, o.suggestions.map((s) => [humanise(s.change), memoryText(s.memory_per_device, s.device_memory),
      rangeCell(s.training_time), s.cost ? rangeCell(s.cost, s.cost.price_basis) : "–"]));
    return el("div", {}, el("h3", {}, `What would make it work on ${o.hardware} (each evaluated again; cheapest first)`),
              el("div", { class: "scroll" }, table));
  });
  document.getElementById("owned-suggestions").replaceChildren(...blocks);
  fillRows(document.getElementById("owned-assumptions"), assumptionRows(result.assumptions));
  document.getElementById("result").hidden = true;
  const section = document.getElementById("owned-result");
  section.dataset.task = task;
  section.hidden = false;
  showResult(section);
}

// A training answer: ranked devices, or (with "have") the answer on the user's hardware.
function show(answer, task) {
  if (answer.options) return renderOwned(answer, task);
  document.getElementById("owned-result").hidden = true;
  return render(answer, task);
}

let resizeTimer = 0;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(redrawCharts, 150);
});

// Posts a form's body to /v1/recommend (or path); the answer goes to show, a refusal under the form's fields.
async function post(target, body, show, path = "/v1/recommend") {
  const button = target.querySelector("button[type=submit]");
  const label = button.textContent;
  button.disabled = true;
  button.textContent = "Working…";
  try {
    const response = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" },
                                         body: JSON.stringify(body) });
    const answer = await response.json().catch(() => ({ detail: `HTTP ${response.status}` }));
    if (response.ok) { clearErrors(target); show(answer); } else showErrors(target, answer.detail);
  } catch (error) {
    showErrors(target, `The service did not answer: ${error.message}`);
  } finally {
    button.disabled = false;
    button.textContent = label;
  }
}

// The model picker: built-in names with their parameter counts, from /v1/models. Without it the
// fields still take any name; the service says which names it knows.
async function loadModelNames() {
  try {
    const response = await fetch("/v1/models");
    if (!response.ok) return;
    const billions = (n) => `${fmt(n / 1e9)} B`;
    document.getElementById("model-names").replaceChildren(...(await response.json()).models.map((m) =>
      el("option", { value: m.name }, m.params_active < m.params_total
        ? `${billions(m.params_total)} parameters, ${billions(m.params_active)} active` : `${billions(m.params_total)} parameters`)));
  } catch (error) { /* the picker stays empty */ }
}

const presetSelect = document.getElementById("preset");
for (const [key, preset] of Object.entries(PRESETS)) presetSelect.append(el("option", { value: key }, preset.label));
presetSelect.addEventListener("change", () => applyPreset(presetSelect.value));
for (const name of [...PRESET_FIELDS, "model", "seq_len", "precision", "optimizer", "data_mode"]) {
  for (const node of form.querySelectorAll(`[name=${name}]`)) for (const kind of ["input", "change"]) node.addEventListener(kind, followPreset);
}
for (const radio of form.querySelectorAll("input[name=data_mode]")) radio.addEventListener("change", showMode);
form.elements.params.dataset.placeholder = form.elements.params.placeholder;
form.elements.model.addEventListener("input", () => modelOrParams(form));
form.addEventListener("submit", (event) => { event.preventDefault(); post(form, requestBody(), (a) => show(a, "pretrain")); });
finetuneForm.addEventListener("submit", (event) => {
  event.preventDefault();
  post(finetuneForm, finetuneBody(), (a) => show(a, "finetune"));
});
for (const radio of document.querySelectorAll("input[name=task]")) radio.addEventListener("change", showTask);
presetSelect.value = "1.3b";
applyPreset("1.3b");
const linked = Object.keys(HASHES).find((task) => HASHES[task] && HASHES[task] === location.hash);
if (linked) document.getElementById(`task-${linked}`).checked = true;
showTask();
fillChoices();
loadModelNames();
