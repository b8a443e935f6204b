// A log-log scatter chart (training time against cost; serving speed per user against total), drawn as SVG
// (no library, works offline).
"use strict";
const SVG_NS = "http://www.w3.org/2000/svg";

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

// A log10 domain around the values with a little margin, at least 0.3 decades wide.
function logDomain(values) {
  const lo = Math.log10(Math.min(...values)), hi = Math.log10(Math.max(...values));
  const pad = Math.max(0.08 * (hi - lo), 0.15);
  return [lo - pad, hi + pad];
}

// Tick values 1, 2, 5 x 10^e inside the domain; only powers of ten when the domain is wide.
function logTicks([lo, hi]) {
  const steps = hi - lo > 3 ? [1] : [1, 2, 5];
  const ticks = [];
  for (let e = Math.floor(lo); e <= Math.ceil(hi); e++) {
    for (const m of steps) {
      const v = m * 10 ** e;
      if (Math.log10(v) >= lo && Math.log10(v) <= hi) ticks.push(v);
    }
  }
  return ticks;
}

// Greedy label placement: try four spots around the point; null when all collide or leave the frame.
const LABEL_PX = 12;  // chart text size in CSS pixels; the chart is drawn at its shown width, so it stays 12 px

// The width a label takes as drawn, measured in the page's font (an estimate per character let long
// names overlap their neighbours).
const measure = document.createElement("canvas").getContext("2d");
function textWidth(text) {
  measure.font = `${LABEL_PX}px ${getComputedStyle(document.body).fontFamily}`;
  return measure.measureText(text).width + 2;
}

function placeLabel(obstacles, cx, cy, text, bounds) {
  const w = textWidth(text), h = LABEL_PX + 2;
  for (const [dx, dy] of [[8, -7], [8, 14], [-8 - w, -7], [-8 - w, 14], [-w / 2, -10], [-w / 2, 22]]) {
    const box = { x: cx + dx, y: cy + dy - h + 2, w, h };
    const inside = box.x >= bounds.l && box.x + box.w <= bounds.r && box.y >= bounds.t && box.y + box.h <= bounds.b;
    const free = obstacles.every((o) => box.x + box.w < o.x || o.x + o.w < box.x || box.y + box.h < o.y || o.y + o.h < box.y);
    if (inside && free) return { x: cx + dx, y: cy + dy, box };
  }
  return null;
}

// A shorter name for a crowded or narrow chart: no vendor word, no parenthesis ("64× NVIDIA B200 (HGX/DGX,
// per GPU)" -> "64× B200").
function shortLabel(text) {
  return text.replace(/\b(NVIDIA|AMD|Intel|Google|GeForce|Tesla|Instinct)\s+/g, "").replace(/\s*\(.*?\)/g, "").trim();
}

// points: [{label, x: {low, expected, high, unit}, y: {low, expected, high, unit}, pareto}]. A point with
// pareto set is drawn filled and labelled first. options.join (default true): join those points by a dashed
// line, as the Pareto front; options.mark: the class they get (default "pareto"); options.empty: the
// sentence shown when no point has both values; options.limits: lines drawn across the frame, each
// {axis: "x" | "y", value, label} in the axis's unit (the deadline on the time axis, the budget on the cost axis).
function drawChart(container, points, xLabel, yLabel, options = {}) {
  const { join = true, mark = "pareto", empty = "No device has both a time and a price to plot.", limits = [] } = options;
  container.replaceChildren();
  const usable = points.filter((p) => p.x && p.y && p.x.expected > 0 && p.y.expected > 0);
  if (!usable.length) {
    container.append(el("p", { class: "muted" }, empty));
    return;
  }
  // One SVG unit is one CSS pixel: the frame takes the container's width (a phone's 350 px or a
  // desktop's 1100 px) instead of scaling a fixed 640 px drawing, which shrank text to 6 px.
  const style = getComputedStyle(container);
  const inner = container.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const W = Math.max(280, Math.round(inner)), H = Math.round(Math.min(440, Math.max(280, 0.62 * W)));
  // The vertical axis's title sits above the frame, not rotated beside it, so it never covers tick labels.
  const m = { l: W < 480 ? 46 : 58, r: 16, t: 30, b: 48 };
  // A limit within half a decade of the points widens the axis to show its line; one farther off (an 80 M USD
  // budget over 1 M USD runs) would squash the points, so it is named at the frame's edge instead.
  const xs = usable.flatMap((p) => [p.x.low, p.x.high]), ys = usable.flatMap((p) => [p.y.low, p.y.high]);
  const NEAR = 0.5;  // decades
  const near = (values, v) => Math.log10(v) <= Math.log10(Math.max(...values)) + NEAR &&
    Math.log10(v) >= Math.log10(Math.min(...values)) - NEAR;
  const drawn = limits.filter((l) => l && l.value > 0 && isFinite(l.value))
    .map((l) => ({ ...l, near: near(l.axis === "x" ? xs : ys, l.value) }));
  const on = (axis) => drawn.filter((l) => l.axis === axis && l.near).map((l) => l.value);
  const [x0, x1] = logDomain([...xs, ...on("x")]);
  const [y0, y1] = logDomain([...ys, ...on("y")]);
  const sx = (v) => m.l + (Math.log10(v) - x0) / (x1 - x0) * (W - m.l - m.r);
  const sy = (v) => H - m.b - (Math.log10(v) - y0) / (y1 - y0) * (H - m.t - m.b);
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img", "aria-label": `${yLabel} against ${xLabel}`, class: "chart-svg" });

  for (const v of logTicks([x0, x1])) {
    root.append(svg("line", { x1: sx(v), x2: sx(v), y1: m.t, y2: H - m.b, class: "grid" }));
    root.append(svg("text", { x: sx(v), y: H - m.b + 16, "text-anchor": "middle", class: "tick" }, fmtTick(v)));
  }
  for (const v of logTicks([y0, y1])) {
    root.append(svg("line", { x1: m.l, x2: W - m.r, y1: sy(v), y2: sy(v), class: "grid" }));
    root.append(svg("text", { x: m.l - 6, y: sy(v) + 4, "text-anchor": "end", class: "tick" }, fmtTick(v)));
  }
  root.append(svg("rect", { x: m.l, y: m.t, width: W - m.l - m.r, height: H - m.t - m.b, class: "frame" }));
  root.append(svg("text", { x: (m.l + W - m.r) / 2, y: H - 10, "text-anchor": "middle", class: "axis" }, xLabel));
  root.append(svg("text", { x: 4, y: 18, "text-anchor": "start", class: "axis" }, yLabel));

  const front = usable.filter((p) => p.pareto).sort((a, b) => a.x.expected - b.x.expected);
  if (join && front.length > 1) {
    root.append(svg("polyline", { points: front.map((p) => `${sx(p.x.expected)},${sy(p.y.expected)}`).join(" "), class: "front" }));
  }
  // Labels: Pareto points first, then the rest, each where it covers no label and no point; a
  // Pareto point may cover other points when nothing else fits. A point without a label keeps its tooltip.
  const labels = [], dots = usable.map((p) => ({ x: sx(p.x.expected) - 5, y: sy(p.y.expected) - 5, w: 10, h: 10 }));
  const bounds = { l: m.l, r: W - m.r, t: m.t, b: H - m.b };
  // The limits first, so that the points' names keep clear of theirs: a deadline's name at the top of its
  // line, a budget's at the right end of its line (inside the frame, on whichever side has room).
  for (const limit of drawn) {
    const beyond = limit.near ? "" : (limit.axis === "x" ? (limit.value > 10 ** x1 ? " →" : " ←") : (limit.value > 10 ** y1 ? " ↑" : " ↓"));
    const text = limit.label + beyond, w = textWidth(text), h = LABEL_PX + 2;
    let spots;
    if (limit.axis === "x") {
      const lx = limit.near ? sx(limit.value) : (limit.value > 10 ** x1 ? W - m.r : m.l);
      if (limit.near) root.append(svg("line", { x1: lx, x2: lx, y1: m.t, y2: H - m.b, class: "limit" }));
      spots = [m.t + LABEL_PX + 2, H - m.b - 4].flatMap((y) => [[lx + 4, y], [lx - 4 - w, y]]);
    } else {
      const ly = limit.near ? sy(limit.value) : (limit.value > 10 ** y1 ? m.t : H - m.b);
      if (limit.near) root.append(svg("line", { x1: m.l, x2: W - m.r, y1: ly, y2: ly, class: "limit" }));
      spots = [W - m.r - 4 - w, m.l + 4].flatMap((x) => [[x, ly - 4], [x, ly + LABEL_PX + 4]]);
    }
    const fits = (obstacles) => ([x, y]) => x >= m.l && x + w <= W - m.r && y - h + 2 >= m.t && y <= H - m.b &&
      obstacles.every((o) => x + w < o.x || o.x + o.w < x || y + 2 < o.y || o.y + o.h < y - h + 2);
    const [x, y] = spots.find(fits(labels.concat(dots))) || spots.find(fits(labels)) || spots[0];
    labels.push({ x, y: y - h + 2, w, h });
    root.append(svg("text", { x, y, class: "limit-label" }, text));
  }
  const narrow = W < 600;
  for (const p of [...usable].sort((a, b) => Number(b.pareto) - Number(a.pareto))) {
    const cx = sx(p.x.expected), cy = sy(p.y.expected);
    const g = svg("g", { class: p.pareto ? `point ${mark}` : "point" });
    g.append(svg("line", { x1: sx(p.x.low), x2: sx(p.x.high), y1: cy, y2: cy, class: "whisker" }));
    g.append(svg("line", { x1: cx, x2: cx, y1: sy(p.y.low), y2: sy(p.y.high), class: "whisker" }));
    g.append(svg("circle", { cx, cy, r: p.pareto ? 6 : 4.5 }));
    // On a narrow chart only the Pareto points are named, so that their names find room; a name that does
    // not fit whole is tried short.
    let spot = null, text = p.label;
    // tried in order: the whole name clear of points and labels, the short name so, then (Pareto points
    // only) each clear of the other labels alone
    const tries = [[p.label, true], [shortLabel(p.label), true], ...(p.pareto ? [[p.label, false], [shortLabel(p.label), false]] : [])];
    if (p.pareto || !narrow) {
      for (const [candidate, clearOfDots] of tries) {
        text = candidate;
        spot = placeLabel(clearOfDots ? labels.concat(dots) : labels, cx, cy, text, bounds);
        if (spot) break;
      }
    }
    if (spot) {
      labels.push(spot.box);
      g.append(svg("text", { x: spot.x, y: spot.y, class: "label" }, text));
    }
    g.append(svg("title", {}, `${p.label}: ${fmt(p.x.expected)} ${p.x.unit}, ${fmt(p.y.expected)} ${p.y.unit}`));
    root.append(g);
  }
  container.append(root);
}
