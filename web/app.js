// The explorer: asks the API for a position's value and moves, draws the
// board (boards.js) and follows a clicked move to the position the server
// says it leads to. The address bar holds the state (?tb=NAME&position=TEXT,
// or &view=stats), so every position has a permalink.
"use strict";

const $ = (id) => document.getElementById(id);
let games = [];
let current = null; // the /api/games row shown
let history_ = []; // positions visited since the last typed one, for Back
let shownMoves = []; // the moves of the position drawn, as the API lists them
let picked = []; // board points clicked toward a move

// The moves whose points (the move's text split at '-' and 'x') begin with
// the points clicked: the page knows notation, never rules.
function movesFrom(points) {
  return shownMoves.filter((m) => {
    const parts = m.move.split(/[-x]/);
    return points.every((p, i) => parts[i] === p);
  });
}

function markPicked() {
  for (const e of document.querySelectorAll("#board [data-point]")) {
    e.classList.toggle("picked", picked.includes(e.dataset.point));
  }
}

function follow(m) {
  history_.push(document.body.dataset.position ?? $("position").value);
  navigate(link(current.name, { position: m.position }));
}

function boardClick(ev) {
  const target = ev.target.closest ? ev.target.closest("[data-point]") : null;
  if (!target) return;
  picked.push(target.dataset.point);
  let found = movesFrom(picked);
  if (!found.length) {
    // A fresh start from this point.
    picked = [target.dataset.point];
    found = movesFrom(picked);
    if (!found.length) picked = [];
  }
  const exact = found.filter((m) => m.move.split(/[-x]/).length === picked.length);
  if (found.length === 1 || (exact.length === 1 && found.length === exact.length)) {
    picked = [];
    follow(found[0]);
    return;
  }
  markPicked();
}

function showError(message) {
  const e = $("error");
  e.textContent = message || "";
  e.hidden = !message;
}

async function api(path) {
  const r = await fetch(path);
  let body;
  try {
    body = await r.json();
  } catch (e) {
    throw new Error(`${path}: answer is not JSON (status ${r.status})`);
  }
  if (!r.ok) throw new Error(body.error || `${path}: status ${r.status}`);
  return body;
}

function params() {
  const q = new URLSearchParams(location.search);
  return { tb: q.get("tb"), position: q.get("position"), view: q.get("view") };
}

function link(tb, extra) {
  const q = new URLSearchParams(Object.assign({ tb }, extra));
  return `/?${q.toString()}`;
}

function outcomeText(outcome, distance, kind) {
  if (kind === "puzzle") {
    if (outcome === "win") return distance === 0 ? "Goal reached" : `Solvable in ${distance}`;
    return "Unsolvable";
  }
  const word = { win: "Win", draw: "Draw", loss: "Loss" }[outcome] || outcome;
  if (distance === null || distance === undefined || outcome === "draw") return word;
  return distance === 0 ? `${word} in 0 (the game is over)` : `${word} in ${distance}`;
}

function renderNav(active, view) {
  const nav = $("tablebases");
  nav.replaceChildren();
  for (const g of games) {
    const a = document.createElement("a");
    a.href = link(g.name, view === "stats" ? { view: "stats" } : {});
    a.textContent = g.name;
    a.dataset.tb = g.name;
    if (g.name === active) a.className = "active";
    a.addEventListener("click", (ev) => {
      ev.preventDefault();
      history_ = [];
      navigate(a.href);
    });
    nav.append(a);
  }
  const ex = $("view-explore"), st = $("view-stats");
  ex.href = link(active, {});
  st.href = link(active, { view: "stats" });
  ex.className = view === "stats" ? "" : "active";
  st.className = view === "stats" ? "active" : "";
}

function navigate(url, replace) {
  if (replace) window.history.replaceState(null, "", url);
  else window.history.pushState(null, "", url);
  route();
}

// body's data-state: "loading" while the API is asked, then "ready" (with
// data-position, the position drawn) or "error": what scripts driving the
// page (scripts/browser_test.py) wait for.
function setState(state, position) {
  document.body.dataset.state = state;
  if (position === undefined) delete document.body.dataset.position;
  else document.body.dataset.position = position;
}

async function route() {
  showError("");
  setState("loading");
  try {
    if (!games.length) games = await api("/api/games");
    if (!games.length) throw new Error("this server serves no tablebase");
    const p = params();
    current = games.find((g) => g.name === p.tb) || games[0];
    renderNav(current.name, p.view);
    if (p.view === "stats") {
      $("explore").hidden = true;
      $("stats").hidden = false;
      await renderStats();
      setState("ready");
    } else {
      $("stats").hidden = true;
      $("explore").hidden = false;
      const position = p.position !== null ? p.position : current.start;
      if (position === null || position === undefined) {
        throw new Error(`no start position is known for ${current.name}: type one (${current.notation || "see tbforge games"})`);
      }
      await renderPosition(position);
    }
  } catch (e) {
    showError(e.message);
    setState("error");
  }
}

async function renderPosition(position) {
  $("position").value = position;
  $("notation").textContent = current.notation ? `Notation: ${current.notation}` : "";
  $("game-title").textContent = current.game;
  const board = $("board");
  const r = await api(`/api/${encodeURIComponent(current.name)}?position=${encodeURIComponent(position)}`);
  const drawn = Boards.draw(current.id, current.params, r.position);
  if (drawn) board.replaceChildren(drawn);
  else {
    const pre = document.createElement("pre");
    pre.textContent = r.position;
    board.replaceChildren(pre);
  }
  const v = $("value");
  v.textContent = outcomeText(r.outcome, r.distance, current.kind);
  v.className = `value ${r.outcome}`;
  v.dataset.outcome = r.outcome;
  $("partition").textContent = `partition ${r.partition_name}, rank ${r.rank}`;
  $("permalink").href = link(current.name, { position: r.position });
  shownMoves = r.moves;
  picked = [];
  const body = $("moves").querySelector("tbody");
  body.replaceChildren();
  const best = new Set(r.best_moves);
  for (const m of r.moves) {
    const tr = document.createElement("tr");
    tr.className = `move ${m.outcome}` + (best.has(m.move) ? " best" : "");
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = m.move;
    b.dataset.position = m.position;
    b.className = "move-button";
    const td1 = document.createElement("td");
    td1.append(b);
    const td2 = document.createElement("td");
    td2.className = "outcome";
    td2.textContent = current.kind === "puzzle" ? (m.outcome === "win" ? "toward the goal" : "no way to the goal") : m.outcome;
    const td3 = document.createElement("td");
    td3.textContent = m.distance === null ? "" : String(m.distance);
    tr.append(td1, td2, td3);
    tr.addEventListener("click", () => follow(m));
    body.append(tr);
  }
  $("moves").hidden = r.moves.length === 0;
  $("no-moves").hidden = r.moves.length !== 0;
  $("no-moves").textContent = current.kind === "puzzle" ? "No move: this is the goal." : "No legal move: the game is over here.";
  document.title = `${current.name} ${r.position} — tbforge explorer`;
  setState("ready", r.position);
}

function table(headers, rows) {
  const t = document.createElement("table");
  t.className = "stats-table";
  const head = t.createTHead().insertRow();
  for (const h of headers) {
    const th = document.createElement("th");
    th.textContent = h;
    head.append(th);
  }
  const body = t.createTBody();
  for (const row of rows) {
    const tr = body.insertRow();
    for (const cell of row) {
      const td = tr.insertCell();
      if (cell instanceof Node) td.append(cell);
      else {
        td.textContent = cell === null || cell === undefined ? "" : String(cell);
        if (typeof cell === "number") td.className = "n";
      }
    }
  }
  return t;
}

function section(title, ...children) {
  const div = document.createElement("div");
  div.className = "plot";
  const h = document.createElement("h3");
  h.textContent = title;
  div.append(h, ...children);
  return div;
}

function sum(arrays) {
  const out = [];
  for (const a of arrays) (a || []).forEach((v, i) => { out[i] = (out[i] || 0) + v; });
  return out;
}

async function renderStats() {
  $("stats-title").textContent = `${current.game}: statistics`;
  const s = await api(`/api/${encodeURIComponent(current.name)}/stats`);
  $("stats-note").textContent = s.note || "";
  const out = $("stats-body");
  out.replaceChildren();
  const parts = s.partitions;
  const tot = parts.reduce((a, p) => ({ wins: a.wins + p.wins, draws: a.draws + p.draws, losses: a.losses + p.losses, positions: a.positions + p.positions }),
    { wins: 0, draws: 0, losses: 0, positions: 0 });
  const words = s.kind === "puzzle" ? ["solvable", "unsolvable", "-"] : ["wins", "draws", "losses"];
  out.append(section(`All ${Plots.fmt(tot.positions)} positions`, Plots.wdlBar(tot.wins, tot.draws, tot.losses, 600),
    Plots.legend(["win", "draw", "loss"])));

  // Which histogram: everything, or one depth, group or partition.
  const choices = [["all", "all partitions", parts]];
  for (const d of [...new Set(parts.map((p) => p.depth).filter((d) => d !== null))]) choices.push([`depth:${d}`, `depth ${d}`, parts.filter((p) => p.depth === d)]);
  for (const g of [...new Set(parts.map((p) => p.group).filter((g) => g))]) choices.push([`group:${g}`, g, parts.filter((p) => p.group === g)]);
  if (parts.length > 1) for (const p of parts.slice(0, 500)) choices.push([`partition:${p.name}`, `partition ${p.name}`, [p]]);
  const select = document.createElement("select");
  select.id = "histogram-of";
  for (const [k, text] of choices) {
    const o = document.createElement("option");
    o.value = k;
    o.textContent = text;
    select.append(o);
  }
  const logLabel = document.createElement("label");
  const logBox = document.createElement("input");
  logBox.type = "checkbox";
  logBox.id = "histogram-log";
  logLabel.append(" ", logBox, " log scale");
  const plot = document.createElement("div");
  const draw = () => {
    const chosen = choices.find((c) => c[0] === select.value)[2];
    const have = chosen.filter((p) => p.win_distances);
    plot.replaceChildren(have.length
      ? Plots.histogram(sum(have.map((p) => p.win_distances)), sum(have.map((p) => p.loss_distances)), s.kind, logBox.checked)
      : document.createTextNode("no histogram for this choice (see the note above)"));
  };
  select.addEventListener("change", draw);
  logBox.addEventListener("change", draw);
  draw();
  out.append(section("Distance histogram", select, logLabel, plot));

  if (s.depths) {
    out.append(section("By depth (plies from the start)", table(["depth", "partitions", "reached", "positions", "W/D/L", words[0], words[1], words[2]],
      s.depths.map((d) => [d.depth, d.partitions, d.reached, d.positions, Plots.wdlBar(d.wins || 0, d.draws || 0, d.losses || 0), d.wins, d.draws, d.losses]))));
  }
  if (s.groups) {
    out.append(section("By group", table(["group", "partitions", "positions", "W/D/L", words[0], words[1], words[2]],
      s.groups.map((g) => [g.group, g.partitions, g.positions, Plots.wdlBar(g.wins, g.draws, g.losses), g.wins, g.draws, g.losses]))));
  }
  const shown = parts.slice(0, 300);
  out.append(section(parts.length > shown.length ? `Partitions (first ${shown.length} of ${parts.length})` : "Partitions",
    table(["partition", "indices", "positions", "W/D/L", words[0], words[1], words[2], "longest"],
      shown.map((p) => [p.name, p.index_size, p.positions, Plots.wdlBar(p.wins, p.draws, p.losses), p.wins, p.draws, p.losses, p.max_distance]))));

  const t = s.timeline;
  if (t && Array.isArray(t.partitions) && t.partitions.length) {
    const facts = document.createElement("p");
    facts.className = "meta";
    facts.textContent = `${t.mode || ""} build, ${Number(t.seconds || 0).toFixed(3)} s wall clock, ${t.threads || "?"} threads` +
      (t.accelerator ? `, ${t.accelerator}` : "") + `; ${t.partitions.length} partitions solved in that run`;
    const slow = [...t.partitions].sort((a, b) => (b.solve_seconds + b.write_seconds) - (a.solve_seconds + a.write_seconds)).slice(0, 10);
    out.append(section("Build timeline (build-log.json)", facts, Plots.timeline(t.partitions), Plots.legend(["solve", "count", "write"]),
      table(["slowest partitions", "positions", "solve s", "count s", "write s", "passes"],
        slow.map((p) => [p.name, p.positions, +(+p.solve_seconds).toFixed(4), +(+p.count_seconds).toFixed(4), +(+p.write_seconds).toFixed(4), p.passes]))));
  } else {
    out.append(section("Build timeline", document.createTextNode("this directory has no build-log.json (engine copies and downloads have none)")));
  }
}

$("position-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  history_ = [];
  navigate(link(current.name, { position: $("position").value.trim() }));
});
$("back").addEventListener("click", () => {
  const prev = history_.pop();
  if (prev !== undefined) navigate(link(current.name, { position: prev }));
});
$("start").addEventListener("click", () => {
  history_ = [];
  navigate(link(current.name, {}));
});
for (const id of ["view-explore", "view-stats"]) {
  $(id).addEventListener("click", (ev) => {
    ev.preventDefault();
    navigate($(id).href);
  });
}
$("board").addEventListener("click", boardClick);
window.addEventListener("popstate", route);
route();
