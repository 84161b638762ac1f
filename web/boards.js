// Boards drawn as SVG, one drawer per game id: the one part of the explorer
// that knows the games' board shapes. Each drawer reads a position in the
// game's notation (as `tbforge games` describes it) only to draw it; the
// rules (legal moves, results) always come from the server.
//
// Every drawer returns an <svg class="board"> whose squares or points carry
// class "cell" and whose pieces carry class "piece", or null when the text
// does not read as a position of that game (the page then shows the text).
// Where moves are written as board points joined by '-' or 'x' (`b2`,
// `a1-a4xg7`, `15x24`), each point's element carries data-point with the
// point's name, so that the page can play a move by clicks on the board
// (it matches the clicked points against the moves the server lists).
"use strict";

const Boards = (() => {
  const NS = "http://www.w3.org/2000/svg";

  function el(name, attrs, parent) {
    const e = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (parent) parent.appendChild(e);
    return e;
  }

  function svg(w, h, label) {
    const s = el("svg", { viewBox: `0 0 ${w} ${h}`, class: "board", role: "img", "aria-label": label });
    el("rect", { x: 0, y: 0, width: w, height: h, fill: "#fff" }, s);
    return s;
  }

  function text(parent, x, y, str, attrs) {
    const t = el("text", Object.assign({ x, y, "text-anchor": "middle", "dominant-baseline": "central",
      "font-family": "system-ui, sans-serif", "font-size": 14 }, attrs || {}), parent);
    t.textContent = str;
    return t;
  }

  // Tic-tac-toe: 3x3 cells, row by row from the top left; x, o or '.'.
  function tictactoe(pos) {
    if (!/^[xo.]{9}$/i.test(pos)) return null;
    const c = 80, s = svg(3 * c, 3 * c, "tic-tac-toe board");
    for (let i = 0; i < 9; i++) {
      const x = (i % 3) * c, y = Math.floor(i / 3) * c;
      // Columns a-c from the left, rows 1-3 from the top.
      const point = "abc"[i % 3] + (1 + Math.floor(i / 3));
      el("rect", { x: x + 2, y: y + 2, width: c - 4, height: c - 4, fill: "#f3f1ea", class: "cell", "data-point": point }, s);
      const m = pos[i].toLowerCase();
      if (m === "x") {
        const g = el("g", { class: "piece", stroke: "#1f4e9c", "stroke-width": 8, "stroke-linecap": "round" }, s);
        el("line", { x1: x + 18, y1: y + 18, x2: x + c - 18, y2: y + c - 18 }, g);
        el("line", { x1: x + c - 18, y1: y + 18, x2: x + 18, y2: y + c - 18 }, g);
      } else if (m === "o") {
        el("circle", { cx: x + c / 2, cy: y + c / 2, r: c / 2 - 16, fill: "none", stroke: "#b03a2e",
          "stroke-width": 8, class: "piece" }, s);
      }
    }
    return s;
  }

  // Connect Four: `width` columns of `height` rows; the position lists the
  // columns played (1-based, one digit each), so each disc drops onto the
  // column's stack; the first player's discs are red.
  function connect4(pos, params) {
    const w = +params.width || 7, h = +params.height || 6, c = 56;
    if (!/^[1-9]*$/.test(pos)) return null;
    const s = svg(w * c, h * c, "Connect Four board");
    el("rect", { x: 0, y: 0, width: w * c, height: h * c, fill: "#1e5bb8", rx: 10 }, s);
    const grid = Array.from({ length: w }, () => []);
    for (let i = 0; i < pos.length; i++) {
      const col = +pos[i] - 1;
      if (col >= w || grid[col].length >= h) return null;
      grid[col].push(i % 2);
    }
    for (let col = 0; col < w; col++) {
      for (let row = 0; row < h; row++) {
        const cx = col * c + c / 2, cy = (h - 1 - row) * c + c / 2;
        el("circle", { cx, cy, r: c / 2 - 6, fill: "#fff", class: "cell", "data-point": String(col + 1) }, s);
        const who = grid[col][row];
        if (who !== undefined) {
          el("circle", { cx, cy, r: c / 2 - 6, fill: who === 0 ? "#d93b30" : "#f2c314", class: "piece" }, s);
        }
      }
    }
    for (let col = 0; col < w; col++) text(s, col * c + c / 2, h * c - 6, String(col + 1), { "font-size": 10, fill: "#cfe" });
    return s;
  }

  // Nine Men's Morris: 24 points on three nested squares, files a-g left to
  // right and ranks 1-7 bottom to top; `W:points;B:points;w|b[;h=W,B]`.
  const MORRIS_POINTS = "a1 a4 a7 b2 b4 b6 c3 c4 c5 d1 d2 d3 d5 d6 d7 e3 e4 e5 f2 f4 f6 g1 g4 g7".split(" ");
  const MORRIS_LINES = [["a1", "a7"], ["a7", "g7"], ["g7", "g1"], ["g1", "a1"], ["b2", "b6"], ["b6", "f6"],
    ["f6", "f2"], ["f2", "b2"], ["c3", "c5"], ["c5", "e5"], ["e5", "e3"], ["e3", "c3"], ["a4", "c4"],
    ["e4", "g4"], ["d1", "d3"], ["d5", "d7"]];
  function morris(pos) {
    const parts = pos.split(";");
    if (parts.length < 3 || !parts[0].startsWith("W:") || !parts[1].startsWith("B:")) return null;
    const list = (p) => p.slice(2).split(",").filter((x) => x);
    const white = list(parts[0]), black = list(parts[1]);
    const u = 50, m = 30, s = svg(6 * u + 2 * m, 6 * u + 2 * m + 30, "Nine Men's Morris board");
    const at = (p) => [m + (p.charCodeAt(0) - 97) * u, m + (7 - +p[1]) * u];
    for (const [a, b] of MORRIS_LINES) {
      const [x1, y1] = at(a), [x2, y2] = at(b);
      el("line", { x1, y1, x2, y2, stroke: "#6b4f2a", "stroke-width": 3 }, s);
    }
    for (const p of MORRIS_POINTS) {
      const [cx, cy] = at(p);
      el("circle", { cx, cy, r: 6, fill: "#6b4f2a", class: "cell" }, s);
      el("circle", { cx, cy, r: 20, fill: "transparent", class: "hit", "data-point": p }, s);
    }
    for (const [pts, fill] of [[white, "#f5f5f0"], [black, "#222"]]) {
      for (const p of pts) {
        if (!MORRIS_POINTS.includes(p)) return null;
        const [cx, cy] = at(p);
        el("circle", { cx, cy, r: 16, fill, stroke: "#444", "stroke-width": 2, class: "piece" }, s);
      }
    }
    const toMove = parts[2] === "w" ? "white" : "black";
    const hand = parts.find((x) => x.startsWith("h="));
    text(s, 3 * u + m, 6 * u + 2 * m + 12, `${toMove} to move` + (hand ? ` · in hand ${hand.slice(2)}` : ""));
    return s;
  }

  // Checkers (English draughts): the 32 dark squares in the standard
  // numbering, 1-4 on the top row; on rows 0, 2, 4, 6 (from the top) the
  // squares stand in columns 1, 3, 5, 7, on the other rows in 0, 2, 4, 6.
  // Black's men start on 1-12 (top), white's on 21-32. `W:W18,K25:B1,2,K12`.
  function checkers(pos) {
    const parts = pos.split(":");
    if (parts.length !== 3 || !/^[WB]$/i.test(parts[0])) return null;
    const c = 52, s = svg(8 * c, 8 * c + 28, "checkers board");
    for (let r = 0; r < 8; r++) {
      for (let col = 0; col < 8; col++) {
        const dark = (r + col) % 2 === 1;
        const attrs = { x: col * c, y: r * c, width: c, height: c, fill: dark ? "#8b5a2b" : "#f0d9b5",
          class: dark ? "cell" : "light" };
        if (dark) attrs["data-point"] = String(r * 4 + Math.floor(col / 2) + 1);
        el("rect", attrs, s);
      }
    }
    const at = (n) => {
      const i = n - 1, r = Math.floor(i / 4), col = r % 2 === 0 ? 2 * (i % 4) + 1 : 2 * (i % 4);
      return [col * c + c / 2, r * c + c / 2];
    };
    for (let n = 1; n <= 32; n++) {
      const [x, y] = at(n);
      text(s, x - c / 2 + 8, y - c / 2 + 8, String(n), { "font-size": 9, fill: "#e8d0b0" });
    }
    for (const side of parts.slice(1)) {
      const color = side[0].toUpperCase();
      if (color !== "W" && color !== "B") return null;
      for (let sq of side.slice(1).split(",").filter((x) => x)) {
        const king = sq[0].toUpperCase() === "K";
        if (king) sq = sq.slice(1);
        const n = +sq;
        if (!(n >= 1 && n <= 32)) return null;
        const [cx, cy] = at(n);
        el("circle", { cx, cy, r: c / 2 - 7, fill: color === "W" ? "#f7f4ea" : "#b3261e", stroke: "#333",
          "stroke-width": 2, class: "piece" }, s);
        if (king) text(s, cx, cy, "K", { "font-weight": 700, fill: color === "W" ? "#333" : "#fff" });
      }
    }
    text(s, 4 * c, 8 * c + 14, `${parts[0].toUpperCase() === "W" ? "white" : "black"} to move`);
    return s;
  }

  // Nim: one row of counters per heap, heap 1 on top; `1,3,5,7`.
  function nim(pos) {
    if (!/^\d+(,\d+)*$/.test(pos)) return null;
    const heaps = pos.split(",").map(Number);
    const most = Math.max(7, ...heaps.map((h) => Math.min(h, 40)));
    const c = 26, s = svg(60 + most * c, heaps.length * (c + 8) + 10, "Nim heaps");
    heaps.forEach((h, i) => {
      const y = 10 + i * (c + 8) + c / 2;
      text(s, 24, y, `h${i + 1}`);
      el("rect", { x: 48, y: y - c / 2, width: most * c + 4, height: c, fill: "#f3f1ea", class: "cell" }, s);
      for (let k = 0; k < Math.min(h, 40); k++) {
        el("circle", { cx: 52 + k * c + c / 2 - 2, cy: y, r: c / 2 - 3, fill: "#b8860b", class: "piece" }, s);
      }
    });
    return s;
  }

  // Holes in rows, for the puzzles written as rows separated by '/':
  // `offsets[r]` is the column of row r's first hole; points are named by
  // column letter (a from the left) and row number (1 at the top).
  function holes(rows, offsets, width, colors, label) {
    const c = 46, s = svg(width * c, rows.length * c, label);
    rows.forEach((row, r) => {
      [...row].forEach((ch, k) => {
        const cx = (offsets[r] + k) * c + c / 2, cy = r * c + c / 2;
        const point = "abcdefg"[offsets[r] + k] + (r + 1);
        el("circle", { cx, cy, r: c / 2 - 4, fill: "#e9e4d8", stroke: "#bbb", class: "cell", "data-point": point }, s);
        if (colors[ch]) el("circle", { cx, cy, r: c / 2 - 9, fill: colors[ch], stroke: "#444", "stroke-width": 2, class: "piece" }, s);
      });
    });
    return s;
  }

  // Peg solitaire, English 33-hole cross: rows of 3 holes (columns c-e) and
  // of 7 (columns a-g); o peg, . hole.
  function pegsolitaire(pos) {
    const rows = pos.split("/");
    if (rows.length !== 7 || !rows.every((r) => /^[o.]+$/.test(r) && (r.length === 3 || r.length === 7))) return null;
    return holes(rows, rows.map((r) => (r.length === 3 ? 2 : 0)), 7, { o: "#1f4e9c" }, "peg solitaire board");
  }

  // Fore and Aft: two 3x3 squares overlapping in one cell; rows 1-2 span
  // columns a-c, row 3 columns a-e, rows 4-5 columns c-e; b black, w white.
  function foreandaft(pos) {
    const rows = pos.split("/");
    const lens = [3, 3, 5, 3, 3];
    if (rows.length !== 5 || !rows.every((r, i) => r.length === lens[i] && /^[bw.]+$/.test(r))) return null;
    return holes(rows, [0, 0, 0, 2, 2], 5, { b: "#222", w: "#f5f5f0" }, "Fore and Aft board");
  }

  // Pancakes: the stack top first, sizes 1..n; -k is burnt side up.
  function pancake(pos) {
    const items = pos.trim().split(/\s+/).map(Number);
    if (!items.length || items.some((x) => !Number.isInteger(x) || x === 0)) return null;
    const n = items.length, h = 26, unit = 260 / n, s = svg(340, n * (h + 4) + 20, "pancake stack");
    items.forEach((v, i) => {
      const size = Math.abs(v), w = 30 + size * unit, y = 10 + i * (h + 4);
      el("rect", { x: 170 - w / 2, y, width: w, height: h, rx: 12, fill: "#e0a84a", stroke: "#a06a1a", class: "piece" }, s);
      if (v < 0) el("rect", { x: 170 - w / 2 + 6, y, width: w - 12, height: 6, fill: "#5a3510" }, s);
      text(s, 170, y + h / 2, String(size));
    });
    el("rect", { x: 20, y: n * (h + 4) + 12, width: 300, height: 6, fill: "#888", class: "cell" }, s);
    return s;
  }

  // Top-Spin: tokens around a ring, read clockwise from the top; the
  // turnstile reverses `k` neighbours (marked on the first k places).
  function topspin(pos, params) {
    const items = pos.trim().split(/\s+/).map(Number);
    if (!items.length || items.some((x) => !Number.isInteger(x))) return null;
    const n = items.length, k = +params.k || 4, R = 130, s = svg(340, 340, "Top-Spin ring");
    el("circle", { cx: 170, cy: 170, r: R, fill: "none", stroke: "#ccc", "stroke-width": 18 }, s);
    items.forEach((v, i) => {
      const a = (2 * Math.PI * i) / n - Math.PI / 2, cx = 170 + R * Math.cos(a), cy = 170 + R * Math.sin(a);
      el("circle", { cx, cy, r: 20, fill: i < k ? "#ffe9a8" : "#fff", stroke: "#555", class: "cell" }, s);
      el("circle", { cx, cy, r: 15, fill: `hsl(${(v * 360) / n},60%,60%)`, class: "piece" }, s);
      text(s, cx, cy, String(v));
    });
    return s;
  }

  // Sliding tiles: rows top first separated by '/', tiles by spaces, 0 or
  // '.' the blank.
  function slidingtile(pos) {
    const rows = pos.split("/").map((r) => r.trim().split(/\s+/));
    const cols = rows[0].length;
    if (!rows.every((r) => r.length === cols)) return null;
    const c = 70, s = svg(cols * c, rows.length * c, "sliding-tile board");
    rows.forEach((row, r) => row.forEach((t, k) => {
      el("rect", { x: k * c + 2, y: r * c + 2, width: c - 4, height: c - 4, fill: "#eee", class: "cell" }, s);
      if (t !== "0" && t !== ".") {
        el("rect", { x: k * c + 5, y: r * c + 5, width: c - 10, height: c - 10, rx: 8, fill: "#3d6fb6", class: "piece" }, s);
        text(s, k * c + c / 2, r * c + c / 2, t, { fill: "#fff", "font-size": 22 });
      }
    }));
    return s;
  }

  const drawers = { tictactoe, connect4, morris, checkers, nim, pegsolitaire, foreandaft, pancake, topspin, slidingtile };

  return {
    // An SVG of `position` for game `id` with `params`, or null.
    draw(id, params, position) {
      const f = drawers[id];
      if (!f) return null;
      try {
        return f(position, params || {});
      } catch (e) {
        return null;
      }
    },
  };
})();
