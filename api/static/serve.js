// Serving: the serve form's /v1/recommend request ("task": "inference") and its answer: the
// devices that serve the model at the targets, a chart of tokens/s per user against total
// tokens/s (or cost per million tokens), the devices that cannot, and the assumptions.
// Uses app.js's textFields, post, drawInto and modelOrParams.
"use strict";
const serveForm = document.getElementById("serve-form");
const CHEAPEST = 3;  // points drawn filled: the top of the table, which is ranked by rent per hour
let served = null;  // the last serving answer, redrawn when the vertical axis changes

function serveBody() {
  const body = { task: "inference", weights: serveForm.elements.weights.value, kv_cache: serveForm.elements.kv_cache.value };
  textFields(serveForm, body, ["model", "params", "prompt_len", "output_len", "batch", "tokens_per_s_per_user",
                               "time_to_first_token", "total_tokens_per_s"]);
  if (serveForm.elements.max_devices.value.trim()) body.max_devices = Number(serveForm.elements.max_devices.value);
  return body;
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
      empty: cost ? "No device that serves it has a rent price to plot." : "No device serves it at these targets." });
}

function renderServe(result) {
  served = result;
  document.getElementById("serve-summary").textContent =
    `${result.ranked.length} device(s) serve ${result.model} with ${result.weights} weights ` +
    `(${result.prompt_len} prompt + ${result.output_len} output tokens per user), ${result.rejected.length} cannot; ` +
    "ranked by rent per hour, then cost per million output tokens. Ranges are expected (low–high).";
  fillRows(document.getElementById("served"), result.ranked.map((r) => [
    r.rank, r.name, r.count, r.batch, rangeCell(r.decode_tokens_per_s), rangeCell(r.total_tokens_per_s),
    rangeCell(r.time_to_first_token), `${fmt(r.memory_per_device.value)} / ${fmt(r.device_memory.value)} ${r.device_memory.unit}`,
    fmtQty(r.rent_per_hour), rangeCell(r.cost_per_million_tokens)]));
  fillRows(document.getElementById("serve-rejected"), result.rejected.map((r) => [r.name, r.reason]));
  fillRows(document.getElementById("serve-assumptions"), result.assumptions.map((a) => [a.name, a.value, a.source]));
  const section = document.getElementById("serve-result");
  section.dataset.task = "serve";
  section.hidden = false;  // before drawing: the chart takes the width it is shown at
  drawServeChart();
}

serveForm.elements.params.dataset.placeholder = serveForm.elements.params.placeholder;
serveForm.elements.model.addEventListener("input", () => modelOrParams(serveForm));
modelOrParams(serveForm);
serveForm.addEventListener("submit", (event) => { event.preventDefault(); post(serveForm, serveBody(), renderServe); });
document.getElementById("serve-y").addEventListener("change", () => { if (served) drawServeChart(); });
