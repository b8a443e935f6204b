// The calculator page: builds a /v1/recommend request from the form and shows the answer.
"use strict";
// Presets only fill the form; every value stays visible and editable.
const PRESETS = {
  "mlp-small": { label: "Small MLP: 0.7 M parameters, 60 k samples × 400 epochs", params: "7e5", data_mode: "samples",
                 samples: "60000", epochs: "400", batch_size: "512", precision: "fp32", optimizer: "adam" },
  "gpt2-small": { label: "GPT-2 small size: 124 M parameters, 2.5e9 tokens", params: "1.24e8", data_mode: "tokens",
                  tokens: "2.5e9", precision: "bf16", optimizer: "adamw" },
  "1.3b": { label: "1.3 B transformer, 2.6e10 tokens (20 tokens per parameter)", params: "1.3e9", data_mode: "tokens",
            tokens: "2.6e10", precision: "bf16", optimizer: "adamw" },
  "7b": { label: "7 B transformer, 2e10 tokens", params: "7e9", data_mode: "tokens", tokens: "2e10",
          precision: "bf16", optimizer: "adamw" },
  "70b": { label: "70 B transformer, 1.4e12 tokens", params: "7e10", data_mode: "tokens", tokens: "1.4e12",
           precision: "bf16", optimizer: "adamw" },
};
const form = document.getElementById("recommend-form");

function dataMode() { return form.querySelector("input[name=data_mode]:checked").value; }

function showMode() {
  const mode = dataMode();
  for (const node of form.querySelectorAll(".mode-tokens")) node.hidden = mode !== "tokens";
  for (const node of form.querySelectorAll(".mode-samples")) node.hidden = mode !== "samples";
}

function applyPreset(key) {
  const preset = PRESETS[key];
  if (!preset) return;
  for (const name of ["params", "tokens", "samples", "epochs", "batch_size"]) form.elements[name].value = preset[name] || "";
  if (!preset.epochs) form.elements.epochs.value = "1";
  form.elements.precision.value = preset.precision;
  form.elements.optimizer.value = preset.optimizer;
  form.querySelector(`input[name=data_mode][value=${preset.data_mode}]`).checked = true;
  showMode();
}

// Text fields go as they are typed ("14 d", "50000 USD", "7e9"); the service parses and checks them.
function requestBody() {
  const body = { precision: form.elements.precision.value, optimizer: form.elements.optimizer.value,
                 purchase: form.elements.purchase.value, objective: form.elements.objective.value };
  const text = (name) => form.elements[name].value.trim();
  const fields = ["params", "batch_size", "deadline", "budget", ...(dataMode() === "tokens" ? ["tokens"] : ["samples", "epochs"])];
  for (const name of fields) if (text(name)) body[name] = text(name);
  if (text("max_devices")) body.max_devices = Number(text("max_devices"));
  return body;
}

function showErrors(detail) {
  const box = document.getElementById("errors");
  for (const node of form.querySelectorAll("[aria-invalid]")) node.removeAttribute("aria-invalid");
  const items = Array.isArray(detail) ? detail : [{ loc: [], msg: String(detail) }];
  // Every item of the answer, each under the name the form shows for its field.
  box.replaceChildren(...items.map((d) => {
    const field = d.loc && d.loc[0] === "body" ? d.loc[1] : undefined;
    const input = field && form.elements[field];
    if (input && input.setAttribute) input.setAttribute("aria-invalid", "true");
    const label = input && input.closest && input.closest("label") ? input.closest("label").firstChild.textContent.trim() : field;
    return el("p", {}, field ? `${label}: ${d.msg.replace(new RegExp(`^${field}: `), "")}` : d.msg);
  }));
  box.hidden = false;
}

function costOf(row, purchase) { return purchase === "buy" ? row.cost.buy : row.cost.rent; }

let chartArgs = null;  // the last chart drawn, redrawn to fit when the window changes width

function render(result) {
  document.getElementById("errors").hidden = true;
  for (const node of form.querySelectorAll("[aria-invalid]")) node.removeAttribute("aria-invalid");
  const purchase = result.purchase;
  document.getElementById("cost-head").textContent = purchase === "buy" ? "buy cost (amortised + energy)" : "rent cost";
  document.getElementById("summary").textContent =
    `${result.ranked.length} device(s) can do it, ${result.rejected.length} cannot; ranked by ${result.objective}. ` +
    `Workload${result.workload.startsWith("default: ") ? " (the default)" : ""}: ${result.workload.replace(/^(default|given): /, "")}. ` +
    "Ranges are expected (low–high).";
  fillRows(document.getElementById("ranked"), result.ranked.map((r) => [
    r.rank, r.name, r.count, rangeCell(r.training_time), rangeCell(costOf(r, purchase)),
    `${fmt(r.memory_per_device.value)} / ${fmt(r.device_memory.value)} ${r.device_memory.unit}`, r.bound, r.pareto ? "★" : ""]));
  fillRows(document.getElementById("rejected"), result.rejected.map((r) => [r.name, r.reason]));
  fillRows(document.getElementById("assumptions"), result.assumptions.map((a) => [a.name, a.value, a.source]));
  const timeUnit = result.ranked.length ? result.ranked[0].training_time.unit : "";
  document.getElementById("result").hidden = false;  // before drawing: the chart takes the width it is shown at
  chartArgs = [document.getElementById("chart"), result.ranked.map((r) => ({
    label: r.count > 1 ? `${r.count}× ${r.name}` : r.name, x: r.training_time, y: costOf(r, purchase), pareto: r.pareto })),
    `training time [${timeUnit}]`, `${purchase === "buy" ? "buy" : "rent"} cost [USD]`];
  drawChart(...chartArgs);
}

let resizeTimer = 0, chartWidth = 0;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    const width = document.getElementById("chart").clientWidth;
    if (chartArgs && width !== chartWidth) { chartWidth = width; drawChart(...chartArgs); }
  }, 150);
});

async function submit(event) {
  event.preventDefault();
  const button = document.getElementById("submit");
  button.disabled = true;
  button.textContent = "Working…";
  try {
    const response = await fetch("/v1/recommend", { method: "POST", headers: { "Content-Type": "application/json" },
                                                    body: JSON.stringify(requestBody()) });
    const answer = await response.json().catch(() => ({ detail: `HTTP ${response.status}` }));
    if (response.ok) render(answer); else showErrors(answer.detail);
  } catch (error) {
    showErrors(`The service did not answer: ${error.message}`);
  } finally {
    button.disabled = false;
    button.textContent = "Recommend";
  }
}

const presetSelect = document.getElementById("preset");
for (const [key, preset] of Object.entries(PRESETS)) presetSelect.append(el("option", { value: key }, preset.label));
presetSelect.addEventListener("change", () => applyPreset(presetSelect.value));
for (const radio of form.querySelectorAll("input[name=data_mode]")) radio.addEventListener("change", showMode);
form.addEventListener("submit", submit);
presetSelect.value = "1.3b";
applyPreset("1.3b");
