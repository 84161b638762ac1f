// Plots for the statistics view, drawn as inline SVG (no library).
"use strict";

const Plots = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const COLORS = { win: "#2e8b3d", draw: "#9a9a9a", loss: "#c0392b", solve: "#3d6fb6", count: "#e0a84a", write: "#8e44ad" };

  function el(name, attrs, parent) {
    const e = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (parent) parent.appendChild(e);
    return e;
  }
  function title(e, str) {
    el("title", {}, e).textContent = str;
    return e;
  }
  function label(parent, x, y, str, anchor, size) {
    const t = el("text", { x, y, "text-anchor": anchor || "middle", "font-size": size || 11,
      "font-family": "system-ui, sans-serif", fill: "#444" }, parent);
    t.textContent = str;
    return t;
  }
  const fmt = (n) => Number(n).toLocaleString("en");

  // A stacked horizontal bar of win/draw/loss counts.
  function wdlBar(wins, draws, losses, width) {
    const w = width || 160, total = wins + draws + losses, s = el("svg", { viewBox: `0 0 ${w} 14`, width: w, height: 14, class: "wdl" });
    let x = 0;
    for (const [k, v] of [["win", wins], ["draw", draws], ["loss", losses]]) {
      if (!total || !v) continue;
      const bw = (v / total) * w;
      title(el("rect", { x, y: 0, width: bw, height: 14, fill: COLORS[k] }, s), `${k}: ${fmt(v)} (${((100 * v) / total).toFixed(1)}%)`);
      x += bw;
    }
    return s;
  }

  // Positions by distance: wins above the axis, losses below (puzzles:
  // distances to the goal above); `log`: bar heights on a log scale, so
  // that the long tail of rare distances shows.
  function histogram(win, loss, kind, log) {
    win = win || []; loss = loss || [];
    const n = Math.max(win.length, loss.length, 1), W = 760, H = 260, L = 60, B = 30, T = 10;
    const f = log ? (v) => Math.log10(1 + v) : (v) => v;
    const top = Math.max(1, ...win), bottom = Math.max(0, ...loss), span = f(top) + f(bottom);
    const s = el("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "histogram" });
    const plotH = H - T - B, y0 = T + (plotH * f(top)) / span, bw = (W - L - 10) / n;
    const y = (v) => (plotH * f(v)) / span;
    for (let d = 0; d < n; d++) {
      const x = L + d * bw;
      if (win[d]) title(el("rect", { x, y: y0 - y(win[d]), width: Math.max(1, bw - 1), height: y(win[d]), fill: COLORS.win, class: "bar" }, s),
        `${kind === "puzzle" ? "solvable" : "win"} in ${d}: ${fmt(win[d])}`);
      if (loss[d]) title(el("rect", { x, y: y0, width: Math.max(1, bw - 1), height: y(loss[d]), fill: COLORS.loss, class: "bar" }, s),
        `loss in ${d}: ${fmt(loss[d])}`);
    }
    el("line", { x1: L, y1: y0, x2: W - 10, y2: y0, stroke: "#333" }, s);
    const step = Math.max(1, Math.ceil(n / 20));
    for (let d = 0; d < n; d += step) label(s, L + d * bw + bw / 2, H - 12, String(d));
    label(s, L - 6, T + 10, fmt(top), "end");
    if (bottom) label(s, L - 6, H - B, fmt(bottom), "end");
    label(s, W / 2, H - 1, kind === "puzzle" ? "moves to the goal" : "distance (plies)", "middle", 10);
    return s;
  }

  // The build's timeline: each partition's solve, count and write seconds
  // laid end to end in solving order (counting and writing overlap the next
  // solve in the real run, so this is the work, not the wall clock), with
  // the positions solved so far as a line.
  function timeline(parts) {
    const W = 760, H = 240, L = 60, B = 30, T = 10, R = 60;
    const s = el("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "timeline" });
    let t = 0, solved = 0;
    const rows = parts.map((p) => {
      const r = { p, start: t, solve: +p.solve_seconds || 0, count: +p.count_seconds || 0, write: +p.write_seconds || 0 };
      t += r.solve + r.count + r.write;
      solved += +p.positions || 0;
      r.end = t; r.solved = solved;
      return r;
    });
    const total = Math.max(t, 1e-9), most = Math.max(solved, 1);
    const x = (v) => L + ((W - L - R) * v) / total;
    const barH = 26, y0 = H - B - barH;
    for (const r of rows) {
      let at = r.start;
      for (const k of ["solve", "count", "write"]) {
        if (r[k] > 0) {
          title(el("rect", { x: x(at), y: y0, width: Math.max(0.5, x(at + r[k]) - x(at)), height: barH, fill: COLORS[k], class: "bar" }, s),
            `${r.p.name}: ${k} ${r[k].toFixed(4)} s`);
        }
        at += r[k];
      }
    }
    let d = `M ${x(0)} ${y0 - 4}`;
    for (const r of rows) d += ` L ${x(r.end)} ${y0 - 4 - ((y0 - T - 8) * r.solved) / most}`;
    el("path", { d, fill: "none", stroke: "#222", "stroke-width": 1.5 }, s);
    label(s, x(0), H - 10, "0 s");
    label(s, x(total), H - 10, `${total.toFixed(3)} s`);
    label(s, W - R + 4, T + 10, `${fmt(most)} positions`, "start", 10);
    return s;
  }

  function legend(keys) {
    const p = document.createElement("p");
    p.className = "legend";
    for (const k of keys) {
      const span = document.createElement("span");
      const sw = document.createElement("i");
      sw.className = "swatch";
      sw.style.background = COLORS[k];
      span.append(sw, k);
      p.append(span);
    }
    return p;
  }

  return { wdlBar, histogram, timeline, legend, fmt };
})();
