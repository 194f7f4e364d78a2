// The rtsqld web console: polls the HTTP endpoint's JSON (/flows,
// /flows/<name>/progress, /flows/<name>/plan) and draws what it reads.
// Plain script, no library: the page must work with no network but rtsqld.
"use strict";

const POLL_FLOWS_MS = 2000;
const POLL_PROGRESS_MS = 1000;
const WINDOW_MS = 5 * 60 * 1000;  // what the charts keep: the last five minutes
const SVG = "http://www.w3.org/2000/svg";

const state = {
  flows: [],
  unreachable: null,  // when /flows last failed to answer (ms), null while it answers
  selected: null,   // name of the flow shown
  history: {},      // flow name -> {samples: [], prev: {...}, errors: []}
  plan: null,       // {flow, runId, json}
};

// Each chart: its element id, unit and series (label, color, value of a sample).
const CHARTS = [
  {id: "input-rate", title: "Input rate", unit: "rows/s",
   series: [{label: "rows/s", color: "#2f6fd0", get: s => s.inputRate}]},
  {id: "e2e-latency", title: "End-to-end latency", unit: "ms",
   series: [{label: "P50", color: "#2f6fd0", get: s => s.e2eP50},
            {label: "P99", color: "#c2410c", get: s => s.e2eP99}]},
  {id: "processing-latency", title: "Processing latency", unit: "ms",
   series: [{label: "P50", color: "#2f6fd0", get: s => s.procP50},
            {label: "P99", color: "#c2410c", get: s => s.procP99}]},
  {id: "watermark-lag", title: "Watermark lag (now − watermark)", unit: "s",
   series: [{label: "lag", color: "#7c3aed", get: s => s.watermarkLag}]},
  {id: "state-size", title: "State in memory", unit: "bytes",
   series: [{label: "memory", color: "#0f766e", get: s => s.stateBytes},
            {label: "last checkpoint", color: "#9a6700", get: s => s.checkpointBytes}]},
  {id: "checkpoint-duration", title: "Checkpoint duration", unit: "ms",
   series: [{label: "duration", color: "#9a6700", get: s => s.checkpointMs}]},
];

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

// A chart's legend entry in its series' color. The color is set through the
// element's style object: the endpoint's Content-Security-Policy refuses
// style attributes in the markup.
function legendEntry(series) {
  const e = el("span", {}, `— ${series.label}`);
  e.style.color = series.color;
  return e;
}

function svgEl(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

async function getJson(path) {
  // Same origin: the browser adds the Basic credentials it was given for the page.
  const r = await fetch(path, {cache: "no-store"});
  const body = await r.json().catch(() => null);
  if (!r.ok) throw new Error((body && body.error) || `${path}: HTTP ${r.status}`);
  return body;
}

function fmt(v, unit) {
  if (v === null || v === undefined || Number.isNaN(v)) return "–";
  if (unit === "bytes") {
    const units = ["B", "KB", "MB", "GB", "TB"];
    let i = 0;
    while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return `${v.toFixed(i ? 1 : 0)} ${units[i]}`;
  }
  const a = Math.abs(v);
  const s = a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : v.toFixed(2);
  return `${s} ${unit}`;
}

function flowPath(name, what) {
  return `/flows/${encodeURIComponent(name)}/${what}`;
}

// ---- flows list ----------------------------------------------------------

async function pollFlows() {
  try {
    state.flows = await getJson("/flows");
    state.unreachable = null;
    document.getElementById("server-status").textContent =
        `${state.flows.length} flow${state.flows.length === 1 ? "" : "s"} · updated ${new Date().toLocaleTimeString()}`;
  } catch (e) {
    // The flows' last known states are no longer known: they are shown grey
    // as "unknown" until the server answers again.
    state.unreachable = Date.now();
    document.getElementById("server-status").textContent = `cannot read /flows: ${e.message}`;
  }
  renderFlows();
}

function renderFlows() {
  const body = document.querySelector("#flows tbody");
  body.replaceChildren();
  document.getElementById("no-flows").hidden = state.flows.length > 0;
  for (const f of state.flows) {
    const row = el("tr", {class: "flow" + (f.name === state.selected ? " selected" : ""),
                          "data-flow": f.name},
                   el("td", {}, f.name,
                      ...(f.materializedView ? [" ", el("span", {class: "view-tag",
                          title: "a materialized view: SELECT from it by its name"}, "view")] : [])),
                   state.unreachable === null
                       ? el("td", {class: `state state-${f.state}`}, f.state)
                       : el("td", {class: "state state-unknown",
                                   title: `no answer from the server since ` +
                                          `${new Date(state.unreachable).toLocaleTimeString()}; ` +
                                          `last known: ${f.state}`}, "unknown"),
                   el("td", {}, f.slots === null ? "–" : String(f.slots)));
    row.addEventListener("click", () => select(f.name));
    body.append(row);
    if (f.error) {
      const reason = el("tr", {class: "flow reason", "data-flow-reason": f.name},
                        el("td", {class: "reason", colspan: "3"}, f.error));
      reason.addEventListener("click", () => select(f.name));
      body.append(reason);
    }
  }
  if (!state.selected && state.flows.length) select(state.flows[0].name);
}

function select(name) {
  if (state.selected === name) return;
  state.selected = name;
  state.plan = null;
  document.getElementById("pick-flow").hidden = true;
  document.getElementById("flow-detail").hidden = false;
  document.getElementById("flow-title").textContent = name;
  document.getElementById("plan").replaceChildren();
  buildCharts();
  renderFlows();
  pollProgress();
}

// ---- progress samples ----------------------------------------------------

function parseTime(s) {
  const t = s ? Date.parse(s) : NaN;
  return Number.isNaN(t) ? null : t;
}

// One chart point per poll, from the progress JSON and the poll before.
function sample(p, h, now) {
  const s = {t: now};
  const batch = p.batchId, rows = p.numInputRows;
  if (h.prev && typeof rows === "number") {
    let delta;
    if (batch === h.prev.batchId) {
      delta = rows - h.prev.rows;
    } else {
      // A new epoch counts from zero: add what the last one read after our poll.
      const last = p.lastEpoch;
      const tail = last && last.batchId === h.prev.batchId ? last.numInputRows - h.prev.rows : 0;
      delta = rows + Math.max(0, tail);
    }
    const dt = (now - h.prev.t) / 1000;
    s.inputRate = dt > 0 ? Math.max(0, delta) / dt : null;
  }
  if (typeof rows === "number") h.prev = {t: now, batchId: batch, rows};
  const r = p.recentMetrics;
  // An interval in which no row reached the sink has no latency to plot.
  if (r && r.numOutputRows > 0) {
    s.e2eP50 = r.e2eLatencyMs.P50; s.e2eP99 = r.e2eLatencyMs.P99;
    s.procP50 = r.processingLatencyMs.P50; s.procP99 = r.processingLatencyMs.P99;
  }
  const wm = parseTime(p.eventTime && p.eventTime.watermark);
  if (wm !== null) s.watermarkLag = (now - wm) / 1000;
  if (Array.isArray(p.stateOperators) && p.stateOperators.length) {
    s.stateBytes = p.stateOperators.reduce((a, o) => a + (o.memoryUsedBytes || 0), 0);
  }
  if (p.checkpoint) {
    s.checkpointBytes = p.checkpoint.stateBytes;
    // One point per checkpoint, not one per poll.
    if (!h.lastCheckpoint || h.lastCheckpoint !== p.checkpoint.epoch) {
      h.lastCheckpoint = p.checkpoint.epoch;
      s.checkpointMs = p.checkpoint.durationMs;
    }
  }
  return s;
}

// Errors worth listing: the failure, decode errors and dead letters as their
// counts grow, checkpoints passed over at recovery.
function noteErrors(p, h, now) {
  const add = (key, text) => {
    if (h.errorKeys.has(key)) return;
    h.errorKeys.add(key);
    h.errors.unshift({t: now, text});
    h.errors.length = Math.min(h.errors.length, 50);
  };
  const st = p.status || {};
  if (st.state === "failed" && st.reason) add(`failed:${st.reason}`, `failed: ${st.reason}`);
  if (st.state === "recovering" && st.reason) add(`recovering:${st.reason}`, `recovering: ${st.reason}`);
  let decode = typeof p.numDecodeErrors === "number" ? p.numDecodeErrors : 0;
  let dead = 0;
  for (const src of p.sources || []) {
    decode += src.numDecodeErrors || 0;
    dead += src.numDeadLetters || 0;
  }
  const key = `${p.batchId}`;
  if (decode > (h.decode[key] || 0)) {
    add(`decode:${key}:${decode}`,
        `${decode - (h.decode[key] || 0)} record(s) could not be decoded (epoch ${p.batchId})`);
    h.decode[key] = decode;
  }
  if (dead > h.deadLetters) {
    add(`dead:${dead}`, `${dead - h.deadLetters} record(s) sent to the dead-letter topic`);
    h.deadLetters = dead;
  }
  for (const sk of (p.recovery && p.recovery.skipped) || []) {
    add(`skipped:${sk.epoch}`, `checkpoint of epoch ${sk.epoch} passed over: ${sk.reason}`);
  }
}

function historyOf(name) {
  if (!state.history[name]) {
    state.history[name] = {samples: [], prev: null, errors: [], errorKeys: new Set(), decode: {},
                           deadLetters: 0};
  }
  return state.history[name];
}

async function pollProgress() {
  const name = state.selected;
  if (!name) return;
  let p;
  try {
    p = await getJson(flowPath(name, "progress"));
  } catch (e) {
    showError(`cannot read progress: ${e.message}`);
    // A poll without an answer is a gap in the charts, not a line across it.
    if (name === state.selected) {
      const h = historyOf(name);
      if (h.samples.length && !h.samples[h.samples.length - 1].gap) {
        h.samples.push({t: Date.now(), gap: true});
      }
      for (const c of CHARTS) drawChart(c, h.samples);
    }
    return;
  }
  if (name !== state.selected) return;
  const now = Date.now();
  const h = historyOf(name);
  h.samples.push(sample(p, h, now));
  while (h.samples.length && h.samples[0].t < now - WINDOW_MS) h.samples.shift();
  noteErrors(p, h, now);
  renderDetail(p, h);
  if (!state.plan || state.plan.runId !== p.runId) loadPlan(name, p.runId);
}

function showError(text) {
  const e = document.getElementById("flow-error");
  e.hidden = !text;
  e.textContent = text || "";
}

function renderDetail(p, h) {
  const st = p.status || {};
  showError(st.state === "failed" ? `Failed: ${st.reason || "no reason given"}` :
            st.state === "recovering" ? `Recovering: ${st.reason || ""}` : "");
  const summary = document.getElementById("flow-summary");
  const items = [
    ["state", st.state || "?"],
    ["epoch", p.batchId === undefined ? "–" : String(p.batchId)],
    ["rows in epoch", p.numInputRows === undefined ? "–" : String(p.numInputRows)],
    ["rows out", p.sink ? String(p.sink.numOutputRows) : "–"],
    ["watermark", (p.eventTime && p.eventTime.watermark) || "–"],
    ["last checkpoint", p.checkpoint ? `epoch ${p.checkpoint.epoch}, ${p.checkpoint.timestamp}` : "none yet"],
  ];
  summary.replaceChildren(...items.map(([k, v]) => el("span", {}, `${k}: `, el("b", {}, v))));
  for (const c of CHARTS) drawChart(c, h.samples);
  const list = document.getElementById("errors");
  list.replaceChildren(...(h.errors.length
      ? h.errors.map(e => el("li", {}, `${new Date(e.t).toLocaleTimeString()}  ${e.text}`))
      : [el("li", {class: "muted"}, "none")]));
}

// ---- charts --------------------------------------------------------------

function buildCharts() {
  const box = document.getElementById("charts");
  box.replaceChildren();
  for (const c of CHARTS) {
    const legend = el("div", {class: "legend"},
                      ...c.series.map(s => legendEntry(s)));
    const svg = svgEl("svg", {viewBox: "0 0 300 110", preserveAspectRatio: "none"});
    // The time axis is HTML under the chart: text in the stretched SVG would be distorted.
    const axis = el("div", {class: "axis"}, el("span", {class: "axis-start"}, ""),
                    el("span", {class: "axis-mid"}, ""), el("span", {class: "axis-end"}, "now"));
    box.append(el("div", {class: "chart", id: `chart-${c.id}`, "data-chart": c.id, "data-points": "0",
                          "data-segments": "0"},
                  el("div", {class: "title"}, el("span", {}, c.title), el("span", {class: "last"}, "–")),
                  svg, axis, legend));
  }
}

function drawChart(c, samples) {
  const box = document.getElementById(`chart-${c.id}`);
  if (!box) return;
  const svg = box.querySelector("svg");
  svg.replaceChildren();
  // The x axis spans what was sampled, at least a minute, at most the window.
  const now = Date.now();
  const first = samples.length ? samples[0].t : now;
  const span = Math.min(WINDOW_MS, Math.max(60 * 1000, now - first));
  const t0 = now - span;
  const W = 300, H = 110, top = 12, bottom = H - 4;
  let max = 0, points = 0, last = null, drawn = 0;
  // Each series as runs of points: a poll the server did not answer (a gap
  // sample) ends a run, so an outage shows as a gap rather than a ramp.
  const series = c.series.map(s => {
    const runs = [[]];
    for (const x of samples) {
      if (x.gap) {
        if (runs[runs.length - 1].length) runs.push([]);
      } else if (typeof s.get(x) === "number" && !Number.isNaN(s.get(x))) {
        runs[runs.length - 1].push([x.t, s.get(x)]);
      }
    }
    return runs.filter(r => r.length);
  });
  for (const runs of series) for (const run of runs) for (const [, v] of run) max = Math.max(max, v);
  if (max <= 0) max = 1;
  series.forEach((runs, i) => {
    const color = c.series[i].color;
    for (const pts of runs) {
      points += pts.length;
      drawn += 1;
      if (i === 0) last = pts[pts.length - 1][1];
      const xy = pts.map(([t, v]) =>
          `${((t - t0) / span * W).toFixed(1)},${(bottom - v / max * (bottom - top)).toFixed(1)}`);
      if (pts.length === 1) {
        const [x, y] = xy[0].split(",");
        svg.append(svgEl("circle", {cx: x, cy: y, r: 2.5, fill: color}));
      } else {
        svg.append(svgEl("polyline", {points: xy.join(" "), fill: "none", stroke: color,
                                      "stroke-width": 1.5, "vector-effect": "non-scaling-stroke"}));
      }
    }
  });
  const clock = t => new Date(t).toLocaleTimeString();
  box.querySelector(".axis-start").textContent = clock(t0);
  box.querySelector(".axis-mid").textContent = clock(t0 + span / 2);
  const scale = svgEl("text", {x: 2, y: 10, "font-size": 9, fill: "#6b7686"});
  scale.textContent = fmt(max, c.unit);
  svg.append(scale);
  box.setAttribute("data-points", String(points));
  box.setAttribute("data-segments", String(drawn));
  box.setAttribute("data-last", last === null ? "" : String(last));
  box.querySelector(".last").textContent = fmt(last, c.unit);
}

// ---- plan graph ----------------------------------------------------------

async function loadPlan(name, runId) {
  state.plan = {flow: name, runId, json: null};
  const box = document.getElementById("plan");
  try {
    const plan = await getJson(flowPath(name, "plan"));
    if (name !== state.selected) return;
    state.plan.json = plan;
    drawPlan(box, plan);
  } catch (e) {
    box.replaceChildren(el("p", {class: "muted"}, `No plan: ${e.message}`));
  }
}

// An edge's label, cut to fit between two boxes (its whole text is its title).
function clip(text, n) {
  return text.length > n ? text.slice(0, n - 1) + "…" : text;
}

// TEXT as lines of at most N characters, broken at spaces, commas and
// parentheses where there is one (a longer word is broken where it must be):
// a plan box shows an operator's whole text, however long.
function wrap(text, n) {
  const out = [];
  let rest = text;
  while (rest.length > n) {
    let cut = -1;
    for (let i = n; i > n / 2; i--) {
      if (" ,(".includes(rest[i - 1])) { cut = i; break; }
    }
    if (cut < 0) cut = n;
    out.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest.length || !out.length) out.push(rest);
  return out;
}

// Stages as boxes in columns (a stage right of every stage that shuffles into
// it), operators as lines inside, arrows for shuffles labelled by their keys.
function drawPlan(box, plan) {
  const BOX_W = 320, LINE = 17, GAP_X = 140, PAD = 10;
  const stages = plan.stages;
  const byId = new Map(stages.map(s => [s.id, s]));
  const col = new Map(stages.map(s => [s.id, 0]));
  for (let pass = 0; pass < stages.length; pass++) {
    for (const s of stages) {
      if (s.output.targetStage !== undefined && byId.has(s.output.targetStage)) {
        col.set(s.output.targetStage, Math.max(col.get(s.output.targetStage), col.get(s.id) + 1));
      }
    }
  }
  const lines = s => {
    const out = [{text: `Stage ${s.id} · ${s.tasks} task${s.tasks === 1 ? "" : "s"}`, cls: "head"}];
    // Each line that does not fit the box continues on the next ones.
    const push = line => {
      for (const part of wrap(line.text, line.cls === "small" ? 50 : 44)) {
        out.push({...line, text: part});
      }
    };
    if (s.scan) {
      const sc = s.scan;
      push({text: `Scan ${sc.name} (${sc.connector}${sc.format ? " " + sc.format : ""}` +
                  `${sc.topic ? ", " + sc.topic : ""})`, cls: "op"});
      if (sc.watermark) push({text: `watermark ${sc.watermark}`, cls: "small"});
    }
    for (const op of s.operators) {
      push({text: op.text, cls: "op", title: `${op.text}\n[${op.changelogText}]` +
                                           (op.state ? `\nstate: ${op.state}` : "")});
      push({text: `[${op.changelogText}]${op.state ? " · state: " + op.state : ""}`, cls: "small"});
    }
    if (s.output.kind === "sink") {
      push({text: `Sink ${plan.sink.name} (${plan.sink.connector} ${plan.sink.format}` +
                  `${plan.sink.topic ? ", " + plan.sink.topic : ""})`, cls: "op"});
    }
    return out;
  };
  const colY = new Map();
  const layout = new Map();
  for (const s of stages) {
    const c = col.get(s.id);
    const ls = lines(s);
    const h = PAD * 2 + ls.length * LINE;
    const y = colY.get(c) || 10;
    layout.set(s.id, {x: 10 + c * (BOX_W + GAP_X), y, h, ls});
    colY.set(c, y + h + 16);
  }
  const width = 20 + (Math.max(...col.values()) + 1) * (BOX_W + GAP_X) - GAP_X;
  const height = Math.max(...colY.values()) - 6;
  const svg = svgEl("svg", {width, height, viewBox: `0 0 ${width} ${height}`, id: "plan-graph"});
  const defs = svgEl("defs");
  const marker = svgEl("marker", {id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5,
                                  markerWidth: 7, markerHeight: 7, orient: "auto"});
  marker.append(svgEl("path", {d: "M0,0 L10,5 L0,10 z", fill: "#2f6fd0"}));
  defs.append(marker);
  svg.append(defs);
  for (const s of stages) {
    const L = layout.get(s.id);
    const g = svgEl("g", {class: "stage-box", "data-stage": s.id});
    g.append(svgEl("rect", {class: "stage", x: L.x, y: L.y, width: BOX_W, height: L.h, rx: 6}));
    L.ls.forEach((line, i) => {
      const t = svgEl("text", {x: L.x + PAD, y: L.y + PAD + (i + 0.8) * LINE,
                               class: line.cls === "small" ? "small" : line.cls === "op" ? "op-text" : "",
                               "font-weight": line.cls === "head" ? "600" : "normal"});
      t.textContent = line.text;
      if (line.title) {
        const title = svgEl("title");
        title.textContent = line.title;
        t.append(title);
      }
      g.append(t);
    });
    svg.append(g);
  }
  for (const s of stages) {
    // A shuffle, or a sharded flow's front handing its copy's own rows on.
    if (s.output.targetStage === undefined || !layout.has(s.output.targetStage)) continue;
    const a = layout.get(s.id), b = layout.get(s.output.targetStage);
    const x1 = a.x + BOX_W, y1 = a.y + a.h / 2, x2 = b.x, y2 = b.y + Math.min(b.h / 2, 30);
    const mid = (x1 + x2) / 2;
    svg.append(svgEl("path", {class: "edge shuffle", d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`,
                              "marker-end": "url(#arrow)"}));
    const label = svgEl("text", {x: x1 + 4, y: y1 - 6, class: "label"});
    const keys = s.output.keys.length ? s.output.keys.join(", ") : "all rows";
    const what = (s.output.kind === "exchange" ? "own rows, " : "") + `shuffle by ${keys}`;
    label.textContent = clip(what, 22);
    const title = svgEl("title");
    title.textContent = what + (s.output.targetInput ? " (right input)" : "");
    label.append(title);
    svg.append(label);
  }
  const foot = el("p", {class: "muted"},
                  `${plan.slots} task slot${plan.slots === 1 ? "" : "s"} · output ${plan.changelog.text}` +
                  ` · checkpoint every ${plan.checkpointIntervalMs / 1000} s`);
  box.replaceChildren(svg, foot);
}

// ---- SQL box -------------------------------------------------------------

// A live SELECT may wait for its rows: the server stops it after the time
// chosen next to the box or SQL_MAX_ROWS, and Cancel (which closes the
// request's connection) stops it at once, freeing its task slots.
const SQL_MAX_ROWS = 1000;
const STOPPED_TEXT = {
  timeout: timeoutMs => `stopped after ${timeoutMs / 1000} s with the rows it had`,
  max_rows: () => `stopped at ${SQL_MAX_ROWS} rows`,
  cancelled: () => "cancelled",
};
let sqlRunning = null;  // the AbortController of the statement running

async function runSql(event) {
  event.preventDefault();
  if (sqlRunning) return;
  const out = document.getElementById("sql-result");
  const sql = document.getElementById("sql-text").value;
  const run = document.getElementById("sql-run");
  const cancel = document.getElementById("sql-cancel");
  const timeoutMs = Number(document.getElementById("sql-timeout").value);
  out.replaceChildren(el("p", {class: "muted", id: "sql-running"}, "running…"));
  sqlRunning = new AbortController();
  run.disabled = true;
  cancel.disabled = false;
  let r, body;
  try {
    r = await fetch("/sql", {method: "POST", headers: {"Content-Type": "application/json"},
                             body: JSON.stringify({sql, timeout_ms: timeoutMs, max_rows: SQL_MAX_ROWS}),
                             signal: sqlRunning.signal});
    body = await r.json();
  } catch (e) {
    const text = e.name === "AbortError" ? "cancelled" : `request failed: ${e.message}`;
    out.replaceChildren(el("p", {class: e.name === "AbortError" ? "muted" : "sql-error", id: "sql-stopped"}, text));
    return;
  } finally {
    sqlRunning = null;
    run.disabled = false;
    cancel.disabled = true;
  }
  if (!r.ok) {
    const where = body.position === null || body.position === undefined ? "" : ` at character ${body.position + 1}`;
    out.replaceChildren(el("p", {class: "sql-error", "data-sqlstate": body.sqlstate || ""},
                           `ERROR ${body.sqlstate || r.status}${where}: ${body.error}` +
                           (body.hint ? `\nHINT: ${body.hint}` : "")));
    return;
  }
  const head = el("tr", {}, ...body.columns.map(c => el("th", {}, c.name)));
  const rows = body.rows.map(row => el("tr", {}, ...row.map(v => el("td", {}, v === null ? "NULL" : v))));
  const count = `${body.rows.length} row${body.rows.length === 1 ? "" : "s"}`;
  const stopped = !body.stopped ? "" :
      ` · ${STOPPED_TEXT[body.stopped] ? STOPPED_TEXT[body.stopped](timeoutMs) : body.stopped}`;
  out.replaceChildren(el("table", {id: "sql-table"}, el("thead", {}, head), el("tbody", {}, ...rows)),
                      el("p", {class: "muted", id: "sql-summary", "data-stopped": body.stopped || ""},
                         `${body.command} · ${count}${stopped}`));
}

function cancelSql() {
  if (sqlRunning) sqlRunning.abort();
}

// ---- start ---------------------------------------------------------------

document.getElementById("sql-form").addEventListener("submit", runSql);
document.getElementById("sql-cancel").addEventListener("click", cancelSql);

pollFlows();
setInterval(pollFlows, POLL_FLOWS_MS);
setInterval(pollProgress, POLL_PROGRESS_MS);
