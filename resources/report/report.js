// profdiff report: renders the JSON blob in #profdiff-data. Plain JS, no libraries, no network.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("profdiff-data").textContent);
  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs, text) => {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const pct = (x) => (x * 100).toFixed(x && Math.abs(x) < 0.001 ? 4 : 2) + " %";

  function header() {
    D.runs.forEach((r, i) => {
      const role = i === D.baseline ? "baseline" : i === D.current ? "new" : "run " + i;
      const name = r.label && r.label !== r.path ? r.label + " — " + r.path : r.path;
      $("runs").appendChild(el("div", {}, role + ": " + name + " (" + r.format + ")" +
        (r.incomplete ? " — INCOMPLETE" : "")));
    });
    const w = D.warnings.concat(D.notes);
    if (!w.length) $("warnings-section").hidden = true;
    w.forEach((t) => $("warnings").appendChild(el("li", {}, t)));
    if (D.fail_if) $("gate").textContent = D.fail_if.text;
    else $("gate-section").hidden = true;
    $("footer").textContent = "profdiff " + D.profdiff + " — " + D.mode + " comparison";
  }

  function totals() {
    const t = $("totals");
    const h = el("tr");
    ["total"].concat(D.runs.map((r, i) => i === D.baseline ? "baseline" : i === D.current ? "new" : "run " + i), ["Δ", "Δ %"])
      .forEach((x, i) => h.appendChild(el("th", { class: i ? "" : "name" }, x)));
    t.appendChild(h);
    D.totals.forEach((r) => {
      const tr = el("tr");
      tr.appendChild(el("td", { class: "name" }, r.label));
      r.text.forEach((x) => tr.appendChild(el("td", {}, x)));
      tr.appendChild(el("td", {}, r.delta_text));
      tr.appendChild(el("td", {}, r.rel_text));
      t.appendChild(tr);
    });
  }

  // ----- ranked changes: sortable, filterable -----
  const C = D.changes;
  const cols = [
    { k: "rank", t: "#", v: (r) => r.rank },
    { k: "verdict", t: "verdict", v: (r) => r.verdict, s: true },
    { k: "name", t: "name", v: (r) => r.name, s: true, cls: "name" },
    { k: "module", t: "module", v: (r) => r.module, s: true, cls: "name" },
    { k: "score", t: "score (of base total)", v: (r) => r.score, f: (r) => pct(r.score) },
  ];
  C.metrics.forEach((m) => {
    const lab = C.labels[m];
    [["base", 0], ["new", 1], ["Δ", 2], ["Δ %", 3]].forEach(([t, j]) => cols.push({
      k: m + j, t: lab + " " + t, f: (r) => r.values[m].text[j],
      v: (r) => j === 3 ? (r.values[m].base ? r.values[m].delta / Math.abs(r.values[m].base) : -Infinity)
        : r.values[m][["base", "new", "delta"][j]],
    }));
  });
  let sortCol = 0, sortDesc = false;
  function changesTable() {
    const sel = $("verdict-filter");
    Object.keys(C.verdict_counts).forEach((v) => sel.appendChild(el("option", { value: v },
      v + " (" + C.verdict_counts[v] + " rows)")));
    const head = el("tr");
    cols.forEach((c, i) => {
      const th = el("th", { class: c.cls || "", "data-col": c.k }, c.t);
      th.addEventListener("click", () => {
        sortDesc = sortCol === i ? !sortDesc : !c.s;
        sortCol = i;
        drawChanges();
      });
      head.appendChild(th);
    });
    $("changes").appendChild(el("thead")).appendChild(head);
    $("changes").appendChild(el("tbody"));
    $("change-filter").addEventListener("input", drawChanges);
    sel.addEventListener("change", drawChanges);
    drawChanges();
  }
  function drawChanges() {
    const q = $("change-filter").value.toLowerCase(), verdict = $("verdict-filter").value;
    const c = cols[sortCol];
    const rows = C.rows.filter((r) => (!verdict || r.verdict === verdict) &&
      (!q || (r.module + "." + r.name).toLowerCase().includes(q)));
    rows.sort((a, b) => {
      const x = c.v(a), y = c.v(b);
      const o = c.s ? String(x).localeCompare(String(y)) : (x ?? -Infinity) - (y ?? -Infinity);
      return (sortDesc ? -o : o) || a.rank - b.rank;
    });
    document.querySelectorAll("#changes th").forEach((th, i) => {
      th.className = (cols[i].cls || "") + (i === sortCol ? (sortDesc ? " sorted-desc" : " sorted-asc") : "");
    });
    const tb = document.querySelector("#changes tbody");
    tb.textContent = "";
    rows.forEach((r) => {
      const tr = el("tr");
      cols.forEach((col) => {
        const td = el("td", { class: col.cls || "" }, col.f ? col.f(r) : String(col.v(r)));
        if (col.k === "verdict") td.className = "v-" + r.verdict.split(" ").pop() +
          (r.score < 0 ? " better" : "");
        tr.appendChild(td);
      });
      tb.appendChild(tr);
    });
    if (!C.rows.length) {
      $("change-count").textContent = "no per-row costs in these runs (run totals only)";
      return;
    }
    $("change-count").textContent = rows.length + " of " + C.rows.length + " listed rows" +
      (C.total_rows > C.rows.length ? " (" + C.total_rows + " rows in the comparison; the top " +
        C.rows.length + " are listed)" : "");
  }

  // ----- differential flame graph -----
  const F = D.flame;
  const ROW = 18;
  let view = { x0: 0, x1: 1, d0: 0 };
  let matches = null;
  function flame() {
    if (!F) { $("flame-section").hidden = true; $("tree-section").hidden = true; return; }
    $("flame-note").textContent = "Width: " + F.label + " of the new run (removed calls drawn at " +
      "their baseline width). Colour: change of own cost against the baseline's total " +
      "(red worse, green better, grey unchanged within precision). Click a frame to zoom, " +
      "hover for values." + (F.pruned ? " Pruned: " + F.pruned + " of " + F.total_rows +
        " frames narrower than " + pct(F.threshold) + " of the total are left out (" +
        pct(F.dropped_share) + " of the width)." : "");
    $("flame").addEventListener("click", (e) => {
      const i = e.target.dataset.i;
      if (i !== undefined) zoom(+i);
    });
    $("flame").addEventListener("mousemove", hover);
    $("flame").addEventListener("mouseleave", () => { $("tooltip").hidden = true; });
    $("flame-reset").addEventListener("click", () => { view = { x0: 0, x1: 1, d0: 0 }; drawFlame(); });
    $("flame-search").addEventListener("input", search);
    window.addEventListener("resize", drawFlame);
    drawFlame();
  }
  function zoom(i) {
    view = { x0: F.x0[i], x1: F.x0[i] + F.w[i], d0: F.depth[i], row: i };
    drawFlame();
  }
  function label(i) { return F.module[i] ? F.module[i] + "." + F.name[i] : F.name[i]; }
  function drawFlame() {
    const box = $("flame"), W = box.clientWidth || 800, span = view.x1 - view.x0 || 1;
    box.textContent = "";
    let maxd = 0;
    const frag = document.createDocumentFragment();
    for (let i = 0; i < F.n; i++) {
      const a = F.x0[i], b = a + F.w[i];
      if (b <= view.x0 || a >= view.x1) continue;
      const l = Math.max(a, view.x0), r = Math.min(b, view.x1);
      const px = (r - l) / span * W;
      if (px < 1) continue;  // sub-pixel frames: drawn on zoom
      const d = F.depth[i];
      const div = document.createElement("div");
      div.className = "fr" + (matches ? (matches[i] ? " match" : " dim") : "");
      div.dataset.i = i;
      div.style.left = ((l - view.x0) / span * W) + "px";
      div.style.width = px + "px";
      div.style.top = (d * ROW) + "px";
      div.style.background = F.colour[i];
      if (px > 30) div.textContent = label(i);
      frag.appendChild(div);
      if (d > maxd) maxd = d;
    }
    box.appendChild(frag);
    box.style.height = ((maxd + 1) * ROW + 2) + "px";
    box.dataset.zoomed = view.row === undefined ? "" : String(view.row);
    $("flame-info").textContent = view.row === undefined ? "" : " zoomed: " + label(view.row);
  }
  function hover(e) {
    const i = e.target.dataset.i, tip = $("tooltip");
    if (i === undefined) { tip.hidden = true; return; }
    tip.textContent = "";
    tip.appendChild(el("b", {}, label(i)));
    [["base", F.base[i]], ["new", F.new[i]], ["Δ", F.delta[i]], ["own Δ", F.self_delta[i]],
      ["status", F.status[i]]]
      .forEach(([k, v]) => tip.appendChild(el("div", {}, k + ": " + v)));
    tip.hidden = false;
    tip.style.left = (e.clientX + 12) + "px";
    tip.style.top = (e.clientY + 12) + "px";
  }
  function search() {
    const q = $("flame-search").value.toLowerCase();
    if (!q) { matches = null; drawFlame(); return; }
    matches = new Uint8Array(F.n);
    let n = 0;
    for (let i = 0; i < F.n; i++) if (label(i).toLowerCase().includes(q)) { matches[i] = 1; n++; }
    drawFlame();
    $("flame-info").textContent = " " + n + " matching frames";
  }

  // ----- collapsible diff tree -----
  function tree() {
    if (!F) return;
    const kids = Array.from({ length: F.n }, () => []), roots = [];
    for (let i = 0; i < F.n; i++) (F.parent[i] < 0 ? roots : kids[F.parent[i]]).push(i);
    const byWidth = (a, b) => F.w[b] - F.w[a];
    roots.sort(byWidth);
    kids.forEach((k) => k.sort(byWidth));
    const PAGE = 100;  // children listed per click: a node may have thousands
    const list = (ids, depth, from = 0) => {
      const ul = el("ul");
      ids.slice(from, from + PAGE).forEach((i) => {
        const li = el("li", { "data-i": i });
        const tw = el("span", { class: "tw" }, kids[i].length ? "▸" : "");
        li.appendChild(tw);
        li.appendChild(el("span", { class: "sw", style: "background:" + F.colour[i] }));
        li.appendChild(el("span", { class: "tn" }, label(i)));
        [F.base[i], F.new[i], F.delta[i]].forEach((v) => li.appendChild(el("span", { class: "tv" }, v)));
        const open = () => { tw.textContent = "▾"; li.appendChild(list(kids[i], depth + 1)); };
        tw.addEventListener("click", () => {
          const sub = li.querySelector("ul");
          if (sub) { sub.remove(); tw.textContent = "▸"; } else open();
        });
        if (kids[i].length && kids[i].length <= PAGE && depth < 2) open();
        ul.appendChild(li);
      });
      if (ids.length > from + PAGE) {
        const more = el("li", { class: "more" }, "▸ " + (ids.length - from - PAGE) + " more");
        more.addEventListener("click", () => more.replaceWith(...list(ids, depth, from + PAGE).childNodes));
        ul.appendChild(more);
      }
      return ul;
    };
    const head = el("div", {}, "frame — base / new / Δ of " + F.label);
    $("tree").appendChild(head);
    $("tree").appendChild(list(roots, 0));
  }

  header(); totals(); changesTable(); flame(); tree();
  document.body.dataset.readyMs = performance.now().toFixed(0);
  document.body.dataset.ready = "1";
})();
