// topicrawl console: hand-drawn SVG line charts, live polling, the topic editor.
// No library and nothing fetched from elsewhere: the console works offline.
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";

function el(tag, attrs, text) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// series: [{name, color, points: [[x, y], ...]}]; draws axes with min/max labels.
function lineChart(box, series, opts) {
  opts = opts || {};
  const W = 480, H = 180, L = 44, R = 8, T = 10, B = 22;
  const svg = el("svg", {viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none"});
  const pts = series.flatMap(s => s.points.filter(p => p[1] !== null && p[1] !== undefined));
  if (!pts.length) {
    svg.appendChild(el("text", {x: W / 2 - 30, y: H / 2}, "no data yet"));
    box.replaceChildren(svg);
    return;
  }
  const xs = pts.map(p => p[0]), ys = pts.map(p => p[1]);
  const x0 = Math.min(...xs), x1 = Math.max(...xs);
  const y0 = opts.yMin !== undefined ? opts.yMin : Math.min(0, ...ys);
  let y1 = opts.yMax !== undefined ? opts.yMax : Math.max(...ys);
  if (y1 <= y0) y1 = y0 + 1;
  const sx = x => L + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * (W - L - R);
  const sy = y => H - B - (y - y0) / (y1 - y0) * (H - T - B);
  svg.appendChild(el("line", {x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis"}));
  svg.appendChild(el("line", {x1: L, y1: T, x2: L, y2: H - B, class: "axis"}));
  const fmt = opts.fmt || (v => (Math.round(v * 100) / 100).toString());
  svg.appendChild(el("text", {x: 2, y: T + 8}, fmt(y1)));
  svg.appendChild(el("text", {x: 2, y: H - B}, fmt(y0)));
  svg.appendChild(el("text", {x: L, y: H - 6}, opts.xLabel ? opts.xLabel(x0) : x0));
  svg.appendChild(el("text", {x: W - R - 60, y: H - 6}, opts.xLabel ? opts.xLabel(x1) : x1));
  series.forEach((s, i) => {
    const p = s.points.filter(q => q[1] !== null && q[1] !== undefined);
    if (!p.length) return;
    const d = p.map((q, j) => `${j ? "L" : "M"}${sx(q[0]).toFixed(1)},${sy(q[1]).toFixed(1)}`).join(" ");
    svg.appendChild(el("path", {d, fill: "none", stroke: s.color, "stroke-width": 2, class: "series"}));
    svg.appendChild(el("text", {x: L + 8 + i * 120, y: T + 8, fill: s.color, style: `fill:${s.color}`}, s.name));
  });
  box.replaceChildren(svg);
}

const secs = iso => Date.parse(iso) / 1000;
const clock = t => new Date(t * 1000).toLocaleTimeString();

function pct(x) { return x === null || x === undefined ? "–" : (100 * x).toFixed(1) + "%"; }

function fillTable(id, obj) {
  const body = document.querySelector(`#${id} tbody`);
  if (!body) return;
  const rows = Object.entries(obj || {});
  body.replaceChildren(...(rows.length ? rows : [["none", ""]]).map(([k, v]) => {
    const tr = document.createElement("tr");
    tr.innerHTML = "<td></td><td></td>";
    tr.children[0].textContent = k;
    tr.children[1].textContent = v;
    return tr;
  }));
}

function drawFigures(fig) {
  const set = (k, v) => { const e = document.getElementById("fig-" + k); if (e) e.textContent = v; };
  set("pages", fig.pages); set("accepted", fig.accepted); set("documents", fig.documents);
  set("harvest", pct(fig.harvest)); set("harvest_window", pct(fig.harvest_window));
  set("duplicates_total", fig.duplicates_total);
  set("pages_per_min", fig.pages_per_min ?? "–"); set("frontier", fig.frontier ?? "–");
  const tl = fig.timeline || [];
  lineChart(document.getElementById("chart-harvest"), [
    {name: "window", color: "#e07a00", points: tl.map(b => [b.pages, b.harvest_window])},
    {name: "overall", color: "#1d3557", points: tl.map(b => [b.pages, b.harvest])},
  ], {yMin: 0, yMax: 1, fmt: v => pct(v)});
  const snaps = fig.snapshots || [];
  const speed = snaps.length
    ? snaps.map(s => [secs(s.at), s.pages_per_min])
    : tl.filter(b => b.at).map(b => [secs(b.at), b.pages_per_min]);
  lineChart(document.getElementById("chart-speed"), [{name: "pages/min", color: "#2a9d8f", points: speed}],
            {xLabel: clock});
  lineChart(document.getElementById("chart-frontier"),
            [{name: "frontier", color: "#8250df", points: snaps.map(s => [secs(s.at), s.frontier])}],
            {xLabel: clock});
  lineChart(document.getElementById("chart-links"), [
    {name: "followed", color: "#1a7f37", points: snaps.map(s => [secs(s.at), s.links_followed])},
    {name: "dropped", color: "#cf222e", points: snaps.map(s => [secs(s.at), s.links_dropped])},
  ], {xLabel: clock});
  fillTable("tab-duplicates", fig.duplicates);
  fillTable("tab-links", fig.links);
  fillTable("tab-errors", fig.errors);
  const hosts = document.querySelector("#tab-hosts tbody");
  if (hosts && fig.hosts) {
    hosts.replaceChildren(...fig.hosts.rows.map(h => {
      const tr = document.createElement("tr");
      tr.innerHTML = "<td><a></a></td><td></td><td></td><td></td><td></td>";
      const a = tr.querySelector("a");
      a.textContent = h.host;
      a.href = `/runs/${fig.run}/pages?host=${encodeURIComponent(h.host)}`;
      [h.fetched, h.accepted, pct(h.harvest), h.errors].forEach((v, i) => { tr.children[i + 1].textContent = v; });
      return tr;
    }));
    document.getElementById("hosts-total").textContent = `(${fig.hosts.total})`;
  }
  const src = document.getElementById("stats-source");
  if (src) src.textContent = fig.stats_source;
  const at = document.getElementById("stats-at");
  if (at) at.textContent = fig.stats_at || "";
  set("window", fig.window);
  if (fig.state) {
    const st = document.getElementById("state");
    if (st) { st.textContent = fig.state; st.className = "state " + fig.state; }
    const stop = document.getElementById("stop-form");
    if (stop && !["running", "stopping"].includes(fig.state)) stop.remove();
  }
  if (fig.finished_at) {
    document.getElementById("finished-at").textContent = fig.finished_at.replace("T", " ").slice(0, 19);
    document.getElementById("finish-reason").textContent = fig.finish_reason ? `(${fig.finish_reason})` : "";
  }
}

function liveRun() {
  const live = document.getElementById("live");
  if (!live) return;
  const data = document.getElementById("fig-data");
  if (data) drawFigures(JSON.parse(data.textContent));
  let state = live.dataset.state;
  const every = 1000 * parseFloat(live.dataset.refresh || "2");
  async function poll() {
    if (!["running", "stopping", "unfinished"].includes(state)) return;
    try {
      const r = await fetch(`/api/runs/${live.dataset.run}/figures`, {credentials: "same-origin"});
      if (r.ok) {
        const fig = await r.json();
        drawFigures(fig);
        state = fig.state;
      }
    } finally {
      setTimeout(poll, every);
    }
  }
  setTimeout(poll, every);
}

async function explainPage() {
  const box = document.getElementById("explain");
  if (!box) return;
  const r = await fetch(box.dataset.url, {credentials: "same-origin"});
  const res = await r.json();
  if (res.error || !r.ok) {
    box.innerHTML = "<p class='error'></p>";
    box.firstChild.textContent = res.error || JSON.stringify(res.detail);
    return;
  }
  const t = document.createElement("table");
  t.className = "grid";
  t.id = "explain-table";
  t.innerHTML = "<thead><tr><th>part</th><th>chars</th><th>formula 3</th><th>classifier P</th><th>relevance</th></tr></thead><tbody></tbody>";
  for (const row of res.parts) {
    const tr = document.createElement("tr");
    [row.part, row.chars, row.formula3, row.classifier ?? "–", row.relevance].forEach(v => {
      const td = document.createElement("td");
      td.textContent = v;
      tr.appendChild(td);
    });
    t.tBodies[0].appendChild(tr);
  }
  const p = document.createElement("p");
  p.textContent = `recomputed page relevance ${res.page} = ${res.description_weight}·Rel(f_info) + ` +
    `${(1 - res.description_weight).toFixed(2)}·Rel(text)` +
    (res.classifier ? `, each Rel mixing formula 3 with the classifier (weight ${res.classifier_weight})` : ", no classifier") +
    "; without the URL-structure factor, which depended on the crawl's sample at the time.";
  box.replaceChildren(t, p);
}

// -- topic editor -------------------------------------------------------------------------
function topicEditor() {
  const form = document.getElementById("topic-form");
  if (!form) return;
  const name = form.dataset.name;
  let sha = form.dataset.sha;

  function collect() {
    const fields = {};
    form.querySelectorAll("input[data-field]").forEach(i => { fields[i.dataset.field] = i.value; });
    const tables = {};
    for (const t of ["words", "overrides"]) {
      tables[t] = {};
      document.querySelectorAll(`#words-${t} tbody tr`).forEach(tr => {
        const w = tr.querySelector(".word").value.trim();
        if (w) tables[t][w] = tr.querySelector(".weight").value;
      });
    }
    return {fields, words: tables.words, overrides: tables.overrides, base_sha: sha};
  }

  function showErrors(errors) {
    form.querySelectorAll(".field-error").forEach(e => { e.textContent = ""; });
    form.querySelectorAll("input.invalid").forEach(e => e.classList.remove("invalid"));
    document.getElementById("err-file").textContent = "";
    for (const e of errors) {
      let box = document.getElementById("err-" + e.field) ||
                form.querySelector(`[data-err="${CSS.escape(e.field)}"]`);
      const input = document.getElementById("f-" + e.field);
      if (input) input.classList.add("invalid");
      if (!box) box = document.getElementById("err-file");
      box.textContent = e.message + (e.line ? ` (line ${e.line})` : "");
      const row = box.closest("tr");
      if (row) row.querySelectorAll("input").forEach(i => i.classList.add("invalid"));
    }
    document.getElementById("valid-state").textContent = errors.length ? `${errors.length} problem(s)` : "valid";
  }

  async function send(method, url) {
    const r = await fetch(url, {method, credentials: "same-origin",
      headers: {"Content-Type": "application/json"}, body: JSON.stringify(collect())});
    const res = await r.json();
    showErrors(res.errors || []);
    return res;
  }

  let timer = null;
  form.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => send("POST", `/api/topics/${encodeURIComponent(name)}/validate`), 300);
  });
  document.getElementById("show-diff").addEventListener("click", async () => {
    const res = await send("POST", `/api/topics/${encodeURIComponent(name)}/validate`);
    document.getElementById("diff").textContent = res.diff || "(no change)";
  });
  document.getElementById("save").addEventListener("click", async () => {
    const res = await send("PUT", `/api/topics/${encodeURIComponent(name)}`);
    const out = document.getElementById("saved");
    if (res.ok) {
      sha = res.sha;
      out.textContent = "saved";
      document.getElementById("diff").textContent = res.diff || "(no change)";
      const r = await fetch(`/api/topics/${encodeURIComponent(name)}`, {credentials: "same-origin"});
      document.getElementById("file-text").textContent = (await r.json()).text;
    } else {
      out.textContent = "not saved: fix the problems above";
    }
  });

  function addRow(table, word, weight) {
    const tr = document.createElement("tr");
    tr.dataset.table = table;
    tr.innerHTML = "<td><input class='word'></td><td><input class='weight' size='6'><div class='error field-error'></div></td><td><button type='button' class='rm'>×</button></td>";
    tr.querySelector(".word").value = word || "";
    tr.querySelector(".weight").value = weight ?? "1.0";
    tr.querySelector(".field-error").dataset.err = `${table}.${word || ""}`;
    document.querySelector(`#words-${table} tbody`).appendChild(tr);
    form.dispatchEvent(new Event("input"));
    return tr;
  }
  form.addEventListener("click", e => {
    if (e.target.classList.contains("rm")) {
      e.target.closest("tr").remove();
      form.dispatchEvent(new Event("input"));
    }
  });
  document.getElementById("add-word").addEventListener("click", () => addRow("words"));
  document.getElementById("add-override").addEventListener("click", () => addRow("overrides"));
  document.getElementById("suggest").addEventListener("click", async () => {
    const ul = document.getElementById("suggestions");
    ul.textContent = "loading the similarity sources…";
    const r = await fetch(`/api/topics/${encodeURIComponent(name)}/suggest`, {credentials: "same-origin"});
    const res = await r.json();
    ul.replaceChildren(...(r.ok ? res : []).map(s => {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = "add";
      b.addEventListener("click", () => { addRow("words", s.word, s.score); li.remove(); });
      li.append(`${s.word} ${s.score} `, b);
      return li;
    }));
    if (!r.ok) ul.textContent = JSON.stringify(res.detail);
    else if (!res.length) ul.textContent = "no suggestions";
  });
}

document.addEventListener("DOMContentLoaded", () => {
  liveRun();
  explainPage();
  topicEditor();
});
