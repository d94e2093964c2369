// agentsim view: draws the lanes, the anomaly list and the steps from the page's data.
// It decides nothing: every anomaly and explanation is the command's (detect, the checker).
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("data").textContent);
  const NS = document.getElementById("tl").namespaceURI;
  const $ = (id) => document.getElementById(id);
  const PALETTE = 8;
  const LANE_H = 30, BAR_H = 16, LABEL_W = 130, AXIS_H = 26, TOP = 8;
  const R = D.recs.map((r) => ({
    i: r[0], a: r[1], rt: r[2], wt: r[3], reads: r[4], writes: r[5], io: r[6], co: r[7],
    ab: r[8] === 1, tool: r[9], preds: r[10], ms: r[11],
  }));
  const byIndex = new Map(R.map((r) => [r.i, r]));
  const st = {
    agents: new Set(D.agents.map((_, i) => i)),
    cells: new Set(D.cells.map((_, i) => i)),
    anom: -1, step: -1, zoom: 1, rec: -1, ms: false,
  };

  const val = (v) => (v < 0 ? "NULL" : D.vals[v]);
  const pairs = (l) => (l.length ? l.map(([c, v]) => D.cells[c] + "=" + val(v)).join(", ") : "none");
  const el = (tag, attrs, text) => {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const svg = (tag, attrs, text) => {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const colour = (a) => "var(--c" + (a % PALETTE) + ")";

  function header() {
    $("title").textContent = D.title;
    const kinds = { history: "history", trace: "ingested trace", counterexample: "checker counterexample", schedule: "simulated schedule" };
    const shown = R.length === D.total ? R.length + " records" : R.length + " of " + D.total + " records shown";
    // Anomalies (the lists: A1, A6, a checker property) and their witnesses are counted apart;
    // L1_struct is a structural condition, not an anomaly.
    const lists = [...new Set(D.anoms.map((a) => a[0]))];
    const kindsOf = lists.filter((l) => l !== "L1_struct");
    const plural = (n, one, many) => n + " " + (n === 1 ? one : many);
    const found = D.undecided ? D.undecided :
      kindsOf.length ? plural(kindsOf.length, "anomaly", "anomalies") + " (" + kindsOf.join(", ") + "), " +
        plural(D.anoms.length, "witness", "witnesses") :
      D.anoms.length ? "no anomaly, " + plural(D.anoms.length, "L1_struct violation", "L1_struct violations") :
      "no anomaly found";
    $("summary").textContent = kinds[D.kind] + ": " + shown + ", " + D.agents.length + " agents, " +
      D.cells.length + " cells; " + found;
    document.body.dataset.kind = D.kind;
    for (const n of D.notes) $("notes").appendChild(el("p", {}, n));
    $("report").textContent = D.report;
    if (D.ingest) { $("ingest").textContent = D.ingest; $("ingestbox").hidden = false; }
  }

  function filters() {
    const make = (box, names, set, sw) => names.forEach((name, i) => {
      const l = el("label");
      const c = el("input", { type: "checkbox", "data-i": String(i) });
      c.checked = true;
      c.addEventListener("change", () => { c.checked ? set.add(i) : set.delete(i); draw(); });
      l.appendChild(c);
      if (sw) { const s = el("span", { class: "swatch" }); s.style.background = colour(i); l.appendChild(s); }
      l.appendChild(document.createTextNode(name));
      box.appendChild(l);
    });
    make($("agentfilter"), D.agents, st.agents, true);
    make($("cellfilter"), D.cells, st.cells, false);
  }

  const touches = (r) => {
    if (!r.reads.length && !r.writes.length) return true;
    return r.reads.some(([c]) => st.cells.has(c)) || r.writes.some(([c]) => st.cells.has(c));
  };
  const visible = (r) => st.agents.has(r.a) && touches(r);

  // The time axis: log time, or the simulated clock when every record has one; a bar spans
  // its read to its commit (at least a sliver).
  const hasMs = R.length > 0 && R.every((r) => r.ms);
  const span = (r) => (st.ms ? r.ms : [r.rt, r.wt]);
  function scale() {
    const maxT = R.reduce((m, r) => Math.max(m, span(r)[1]), 1);
    const fit = Math.max(st.ms ? 0 : 4, Math.min(60, 900 / maxT));
    return { maxT, px: fit * st.zoom };
  }

  function draw() {
    const tl = $("tl");
    tl.textContent = "";
    const lanes = D.agents.map((_, a) => a).filter((a) => st.agents.has(a));
    const laneOf = new Map(lanes.map((a, k) => [a, k]));
    const { maxT, px } = scale();
    const x = (t) => LABEL_W + t * px;
    const W = Math.ceil(x(maxT) + 40), H = TOP + AXIS_H + lanes.length * LANE_H + 8;
    tl.setAttribute("width", W); tl.setAttribute("height", H);
    tl.setAttribute("viewBox", "0 0 " + W + " " + H);
    const defs = svg("defs");
    const mk = svg("marker", { id: "arrowhead", viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" });
    mk.appendChild(svg("path", { d: "M0,0 L10,5 L0,10 z" }));
    defs.appendChild(mk);
    tl.appendChild(defs);
    const axis = svg("g", { class: "axis" });
    const raw = 60 / px, mag = Math.pow(10, Math.floor(Math.log10(Math.max(1, raw))));
    const every = [1, 2, 5, 10].map((m) => m * mag).find((e) => e >= raw) || 10 * mag;
    for (let t = 0; t <= maxT; t += every) {
      axis.appendChild(svg("line", { x1: x(t), x2: x(t), y1: TOP + AXIS_H - 4, y2: H - 4 }));
      axis.appendChild(svg("text", { x: x(t) + 2, y: TOP + 12 }, st.ms ? t + " ms" : "t=" + t));
    }
    axis.appendChild(svg("text", { x: 4, y: TOP + 12 }, st.ms ? D.clock : "log time"));
    tl.appendChild(axis);
    const laneY = (k) => TOP + AXIS_H + k * LANE_H;
    const groups = lanes.map((a, k) => {
      const g = svg("g", { class: "lane", "data-agent": D.agents[a] });
      g.appendChild(svg("rect", { class: "lanebg", x: 0, y: laneY(k), width: W, height: LANE_H }));
      g.appendChild(svg("text", { x: 6, y: laneY(k) + LANE_H / 2 + 4 }, D.agents[a]));
      tl.appendChild(g);
      return g;
    });
    for (const r of R) {
      if (!visible(r)) continue;
      const k = laneOf.get(r.a);
      const y = laneY(k) + (LANE_H - BAR_H) / 2;
      const [t0, t1] = span(r);
      const w = Math.max(4, (t1 - t0) * px - 2);
      const b = svg("rect", { class: "op" + (r.ab ? " ab" : ""), x: x(t0), y, width: w, height: BAR_H, rx: 2, "data-i": r.i });
      b.style.fill = colour(r.a);
      groups[k].appendChild(b);
      const label = "#" + r.i;
      if (w >= 9 * label.length) groups[k].appendChild(svg("text", { class: "rl", x: x(t0) + 3, y: y + BAR_H - 4 }, label));
      if (r.ab) groups[k].appendChild(svg("line", { class: "abx", x1: x(t0), y1: y, x2: x(t0) + w, y2: y + BAR_H }));
    }
    const reg = svg("g", { class: "reg" });
    for (const [t, text] of st.ms ? [] : D.reg) {
      reg.appendChild(svg("line", { x1: x(t), x2: x(t), y1: TOP + AXIS_H - 6, y2: H - 4 }));
      const lab = svg("text", { x: x(t) + 3, y: TOP + AXIS_H - 4 }, "\u25C6 registry");
      lab.appendChild(svg("title", {}, text));
      reg.appendChild(lab);
    }
    tl.appendChild(reg);
    decorate(laneOf, x, laneY);
  }

  // Selection, arrow and step state drawn over the lanes.
  function decorate(laneOf, x, laneY) {
    const tl = $("tl");
    const a = st.anom >= 0 ? D.anoms[st.anom] : null;
    tl.classList.toggle("dim", !!a);
    const hl = new Set(a ? a[2] : []);
    const committed = st.step >= 0 ? D.steps[st.step][2] : Infinity;
    const actor = st.step >= 0 ? D.steps[st.step][1] : -1;
    for (const b of tl.querySelectorAll(".op")) {
      const i = Number(b.dataset.i);
      b.classList.toggle("hl", hl.has(i));
      b.classList.toggle("sel", i === st.rec);
      b.classList.toggle("later", D.kind !== "history" && D.kind !== "trace" && i >= committed);
    }
    for (const g of tl.querySelectorAll(".lane")) g.classList.toggle("act", actor >= 0 && g.dataset.agent === D.agents[actor]);
    if (a && a[3] >= 0 && a[4] >= 0) {
      const f = byIndex.get(a[3]), t = byIndex.get(a[4]);
      if (f && t && laneOf.has(f.a) && laneOf.has(t.a)) {
        const y1 = laneY(laneOf.get(f.a)) + LANE_H / 2, y2 = laneY(laneOf.get(t.a)) + LANE_H / 2;
        const x1 = x(span(f)[1]), x2 = x(span(t)[0]) + 2;
        const mid = (y1 + y2) / 2 - (y1 === y2 ? LANE_H : 0);
        tl.appendChild(svg("path", { id: "arrow", d: "M" + x1 + "," + y1 + " Q" + (x1 + x2) / 2 + "," + mid + " " + x2 + "," + y2, "marker-end": "url(#arrowhead)" }));
      }
    }
  }

  function anomalies() {
    const list = $("anomlist");
    if (D.undecided) list.appendChild(el("li", { class: "undecided" }, D.undecided));
    else if (!D.anoms.length) list.appendChild(el("li", { class: "none" }, "none found"));
    D.anoms.forEach((a, k) => {
      const li = el("li");
      const b = el("button", { type: "button", "data-k": String(k) });
      b.appendChild(el("span", { class: "tag" }, a[0]));
      b.appendChild(document.createTextNode(a[1]));
      b.addEventListener("click", () => choose(k));
      li.appendChild(b);
      list.appendChild(li);
    });
  }

  function choose(k) {
    st.anom = k === st.anom ? -1 : k;
    document.querySelectorAll("#anomlist li").forEach((li, j) => li.classList.toggle("sel", j === st.anom));
    const a = st.anom >= 0 ? D.anoms[st.anom] : null;
    $("explain").textContent = a ? a[0] + ": " + a[1] : "";
    $("detail").hidden = !a;
    $("detailbody").textContent = "";
    if (a) for (const i of a[2]) if (byIndex.has(i)) $("detailbody").appendChild(el("pre", {}, tipText(byIndex.get(i))));
    draw();
    if (a && a[2].length) {
      const b = document.querySelector('#tl .op[data-i="' + a[2][0] + '"]');
      if (b) b.scrollIntoView({ block: "nearest", inline: "center" });
    }
  }

  function steps() {
    if (!D.steps.length) return;
    $("steps").hidden = false;
    $("state").hidden = false;
    $("jump").max = String(D.steps.length - 1);
    const list = $("steplist");
    D.steps.forEach((s, k) => {
      const li = el("li");
      const b = el("button", { type: "button", "data-k": String(k) }, k + ". " + s[0]);
      b.addEventListener("click", () => go(k));
      li.appendChild(b);
      list.appendChild(li);
    });
    $("prev").addEventListener("click", () => go(st.step - 1));
    $("next").addEventListener("click", () => go(st.step + 1));
    $("jump").addEventListener("change", (e) => go(Number(e.target.value)));
    go(0, false);
  }

  function go(k, scroll) {
    if (!D.steps.length) return;
    st.step = Math.max(0, Math.min(D.steps.length - 1, k));
    const s = D.steps[st.step], before = st.step > 0 ? D.steps[st.step - 1][3] : null;
    const old = new Map(before || []);
    $("stepno").textContent = "step " + st.step + " of " + (D.steps.length - 1);
    $("jump").value = String(st.step);
    $("statename").textContent = st.step + ": " + s[0];
    const body = $("vars").tBodies[0];
    body.textContent = "";
    for (const [name, value] of s[3]) {
      const tr = el("tr");
      if (before && old.get(name) !== value) tr.className = "changed";
      tr.appendChild(el("td", {}, name));
      const td = el("td");
      td.appendChild(el("code", {}, value));
      tr.appendChild(td);
      body.appendChild(tr);
    }
    document.querySelectorAll("#steplist li").forEach((li, j) => li.classList.toggle("cur", j === st.step));
    const cur = document.querySelector("#steplist li.cur");
    if (cur && scroll !== false) cur.scrollIntoView({ block: "nearest" });
    draw();
  }

  function tipText(r) {
    const lines = ["record " + r.i + " (" + D.agents[r.a] + ")" + (r.ab ? ": aborted or retracted" : ""),
      "read t=" + r.rt + ", wrote t=" + r.wt + (r.ms ? " (" + r.ms[0] + " ms to " + r.ms[1] + " ms)" : ""),
      "read: " + pairs(r.reads), "wrote: " + pairs(r.writes)];
    if (r.io.length) {
      lines.push("effects issued: " + pairs(r.io));
      lines.push("effects completed: " + pairs(r.co));
    }
    if (r.tool >= 0) lines.push("planned tool: " + D.tools[r.tool]);
    if (r.preds.length) lines.push("depends on records " + r.preds.join(", "));
    return lines.join("\n");
  }

  function hover() {
    const tl = $("tl"), tip = $("tip");
    tl.addEventListener("mouseover", (e) => {
      const i = e.target.dataset && e.target.dataset.i;
      if (i === undefined) return;
      tip.textContent = tipText(byIndex.get(Number(i)));
      tip.hidden = false;
    });
    tl.addEventListener("mousemove", (e) => {
      tip.style.left = Math.min(e.clientX + 14, window.innerWidth - 470) + "px";
      tip.style.top = e.clientY + 14 + "px";
    });
    tl.addEventListener("mouseout", () => { tip.hidden = true; });
    tl.addEventListener("click", (e) => {
      const i = e.target.dataset && e.target.dataset.i;
      if (i === undefined) return;
      st.rec = Number(i);
      $("detail").hidden = false;
      $("detailbody").textContent = "";
      $("detailbody").appendChild(el("pre", {}, tipText(byIndex.get(st.rec))));
      draw();
    });
  }

  function keys() {
    document.addEventListener("keydown", (e) => {
      if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT" || e.ctrlKey || e.metaKey || e.altKey) return;
      const n = D.anoms.length;
      const moves = {
        j: () => n && choose((st.anom + 1) % n),
        k: () => n && choose((st.anom - 1 + n) % n),
        n: () => go(st.step + 1), p: () => go(st.step - 1),
        ArrowRight: () => go(st.step + 1), ArrowLeft: () => go(st.step - 1),
        Home: () => go(0), End: () => go(D.steps.length - 1),
        "+": () => { st.zoom = Math.min(16, st.zoom * 1.5); draw(); },
        "-": () => { st.zoom = Math.max(1 / 16, st.zoom / 1.5); draw(); },
        Escape: () => { if (st.anom >= 0) choose(st.anom); st.rec = -1; $("detail").hidden = true; draw(); },
      };
      const f = moves[e.key];
      if (!f) return;
      e.preventDefault();
      f();
      const sel = document.querySelector("#anomlist li.sel button");
      if ((e.key === "j" || e.key === "k") && sel) sel.focus();
    });
  }

  function axisChoice() {
    if (!hasMs) return;
    const l = el("label", {}, "time axis ");
    const sel = el("select", { id: "axis" });
    sel.appendChild(el("option", { value: "log" }, "log time"));
    sel.appendChild(el("option", { value: "ms" }, D.clock));
    sel.addEventListener("change", () => { st.ms = sel.value === "ms"; draw(); });
    l.appendChild(sel);
    $("notes").appendChild(l);
  }

  function legend() {
    $("legend").textContent = "Bars run from an operation's read to its commit on the log's time axis; " +
      "struck through, dashed and faded: aborted or retracted; \u25C6 dashed line: a registry change; " +
      "outlined: the chosen anomaly's witness records; arrow: from the conflicting write to the record it conflicts with.";
  }

  header();
  filters();
  axisChoice();
  anomalies();
  legend();
  hover();
  keys();
  draw();
  steps();
  document.body.dataset.ready = "1";
})();
