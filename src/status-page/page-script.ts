// The status page's script (docs/status-page.md): login, the refresh loop and the rendering of nodes and
// progress, over the pure half (format-script.ts), with the charts (charts-script.ts), the stream list
// (streams-script.ts) and the tables (tables-script.ts), all in the one served file. Browser JavaScript kept
// as text like FORMAT_SCRIPT (no backtick, no dollar-brace). Everything from the server is put in the page as
// text (textContent), never as HTML: stream names are chosen by clients.
import { CHARTS_SCRIPT } from "./charts-script.ts";
import { FORMAT_SCRIPT } from "./format-script.ts";
import { STREAMS_SCRIPT } from "./streams-script.ts";
import { TABLES_SCRIPT } from "./tables-script.ts";

const DOM_SCRIPT = String.raw`
const TOKEN_KEY = "mink-admin-token";
const REFRESH_MS = 5000;
const FETCH_TIMEOUT_MS = 8000;
const PAGE_SIZE = 20;
const MAX_WATCHED = 10;
const SVG = "http://www.w3.org/2000/svg";

const state = { token: null, timer: null, busy: false, nodes: [], cursors: [null], page: 0, next: null, prefix: "", watched: [], openTables: [] };

class Unauthorized extends Error {}

const $ = (id) => document.getElementById(id);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function svg(tag, attributes) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  return node;
}

function badge(text, tone) {
  return el("span", "badge" + (tone ? " " + tone : ""), text);
}

function row(cells) {
  const tr = document.createElement("tr");
  for (const td of cells) tr.append(td);
  return tr;
}

/** Each cell gets its column's name, which the phone layout shows next to the value. */
function fill(table, rows) {
  const names = Array.from(table.tHead.rows[0].cells, (th) => th.textContent);
  for (const tr of rows) Array.from(tr.cells).forEach((td, index) => (td.dataset.label = names[index] || ""));
  table.tBodies[0].replaceChildren(...rows);
}

function cell(content, className) {
  const td = el("td", className);
  if (content instanceof Node) td.append(content);
  else td.textContent = content === undefined || content === null ? "—" : String(content);
  return td;
}

function show(id, visible) {
  $(id).hidden = !visible;
}

function notice(id, text, tone) {
  const node = $(id);
  node.textContent = text || "";
  node.className = "notice" + (tone ? " " + tone : "");
  node.hidden = !text;
}

/** GET or POST the admin API with the token: {ok, status, body} or {ok: false, status, message}; a 401 throws. */
async function api(path, init) {
  let response;
  try {
    response = await fetch(path, {
      ...init,
      headers: { authorization: "Bearer " + state.token, ...(init && init.headers) },
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      cache: "no-store",
    });
  } catch (error) {
    return { ok: false, status: 0, message: "no answer (" + (error && error.name === "TimeoutError" ? "timed out" : "network error") + ")" };
  }
  if (response.status === 401) throw new Unauthorized();
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (response.ok) return { ok: true, status: response.status, body };
  const message = body && body.error && body.error.message ? body.error.message : response.statusText;
  return { ok: false, status: response.status, message: "HTTP " + response.status + ": " + message };
}

function streamPath(name) {
  return name.split("/").map(encodeURIComponent).join("/");
}

function renderNodes(answer) {
  const rows = answer.nodes.map((node) => {
    // One element per cell: the phone layout spreads a cell's children apart.
    const name = el("span");
    name.append(el("span", "mono", node.id));
    if (node.coordinator) name.append(" ", badge("coordinator"));
    const nameCell = cell(name);
    const status = el("span");
    status.append(node.live ? badge("live", "ok") : badge("down", "bad"));
    if (node.draining) status.append(badge("draining", "warn"));
    if (node.declaredDead) status.append(badge("declared dead", "bad"));
    const streams = el("span", null, node.streams);
    if (node.openedStreams !== node.streams) streams.append(el("span", "muted small", " (" + node.openedStreams + " open)"));
    // Table buckets apart (table NC): the Streams column adds up to what the stream list shows.
    return row([nameCell, cell(status), cell(node.epoch, "num mono"), cell(node.slots, "num"), cell(streams, "num"), cell(node.tableBuckets, "num"), cell(formatAge(node.lastHeartbeatAgoMs), "num")]);
  });
  fill($("nodes"), rows);
  const live = answer.nodes.filter((node) => node.live).length;
  const lease = answer.coordinator;
  const who = lease && !lease.expired ? "coordinator " + lease.holder + " (epoch " + lease.coordinatorEpoch + ")" : "no coordinator";
  $("node-summary").textContent = live + " of " + answer.nodes.length + " live · " + who;
}

function progressList(title, items, empty) {
  const block = el("div");
  block.append(el("h3", null, title));
  if (items.length === 0) block.append(el("p", "empty", empty));
  else {
    const list = el("ul", "plain");
    for (const entry of items) list.append(entry);
    block.append(list);
  }
  return block;
}

function item(parts) {
  const li = el("li");
  for (const part of parts) li.append(part);
  return li;
}

function renderProgress(nodes, transfers, drains) {
  const blocks = [];
  const pending = transfers.ok
    ? transfers.body.transfers.map((t) => item([el("span", "mono", t.name), " " + t.source + " → " + t.target + " ", badge(t.ownership, "warn")]))
    : [item([el("span", "notice error", "transfers: " + transfers.message)])];
  blocks.push(progressList("Transfers", pending, "No transfer pending."));
  const draining = drains.map((d) =>
    d.answer.ok
      ? item([el("span", "mono", d.id), " " + (d.answer.body.done ? "drained" : d.answer.body.remaining + " left, " + d.answer.body.transferring + " moving, " + d.answer.body.incoming + " incoming") + " ", badge(d.answer.body.done ? "done" : "draining", d.answer.body.done ? "ok" : "warn")])
      : item([el("span", "mono", d.id), " " + d.answer.message]),
  );
  blocks.push(progressList("Drains", draining, "No node is draining."));
  const dead = nodes.filter((node) => node.declaredDead).map((node) => {
    const by = node.declaredDead.takeoverBy;
    return item([el("span", "mono", node.id), " epoch " + node.declaredDead.epoch + " declared dead; " + (by ? "taken over by " + by : "waiting for a node to take over") + " ", badge("failover", "bad")]);
  });
  blocks.push(progressList("Failovers", dead, "No failover in progress."));
  const watched = state.watched.map((w) => item([el("span", "mono", w.name), " → " + w.target + " ", badge(w.state, w.state === "done" ? "ok" : w.state === "failed" ? "bad" : "warn"), w.note ? " " + w.note : ""]));
  if (watched.length > 0) blocks.push(progressList("Started from this page", watched, ""));
  $("progress").replaceChildren(...blocks);
}
`;

const LOOP_SCRIPT = String.raw`
function logout(message) {
  state.token = null;
  sessionStorage.removeItem(TOKEN_KEY);
  clearTimeout(state.timer);
  show("dashboard", false);
  show("logout", false);
  show("login", true);
  notice("login-error", message, "error");
  $("updated").textContent = "";
  $("token").focus();
}

async function refresh() {
  if (state.busy || state.token === null) return;
  state.busy = true;
  clearTimeout(state.timer);
  try {
    const [nodes, transfers, series] = await Promise.all([api("/admin/nodes"), api("/admin/transfers"), api("/admin/series")]);
    const failed = [];
    if (nodes.ok) {
      state.nodes = nodes.body.nodes;
      renderNodes(nodes.body);
    } else failed.push("nodes: " + nodes.message);
    const drains = await Promise.all(state.nodes.filter((n) => n.draining).map(async (n) => ({ id: n.id, answer: await api("/admin/nodes/" + encodeURIComponent(n.id) + "/drain") })));
    const finished = await checkWatched();
    renderProgress(state.nodes, transfers, drains);
    renderCharts(series);
    // Rebuilding the list under someone choosing a target would reset the choice.
    if (finished || !$("streams").contains(document.activeElement)) await loadStreams();
    await loadTables();
    notice("banner", failed.length === 0 ? "" : "Could not load " + failed.join("; ") + ". Showing the last figures; retrying.", "error");
    $("updated").textContent = (failed.length === 0 ? "Updated " : "Last attempt ") + new Date().toLocaleTimeString();
  } catch (error) {
    if (error instanceof Unauthorized) return logout("The admin token was refused (HTTP 401). Check it and sign in again.");
    notice("banner", "The page failed to update: " + (error && error.message ? error.message : String(error)), "error");
  } finally {
    state.busy = false;
    if (state.token !== null) state.timer = setTimeout(() => void refresh(), REFRESH_MS);
  }
}

function signIn(token) {
  state.token = token;
  sessionStorage.setItem(TOKEN_KEY, token);
  show("login", false);
  notice("login-error", "", "");
  show("dashboard", true);
  show("logout", true);
  void refresh();
}

/** Runs a user's action: a 401 signs out, anything else is shown in the banner. */
function guarded(task) {
  task().catch((error) => {
    if (error instanceof Unauthorized) logout("The admin token was refused (HTTP 401). Check it and sign in again.");
    else notice("banner", "The action failed: " + (error && error.message ? error.message : String(error)), "error");
  });
}

function page(index) {
  state.page = index;
  state.cursors.length = index + 1;
  guarded(loadStreams);
}

function boot() {
  $("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const token = $("token").value.trim();
    $("token").value = "";
    if (token) signIn(token);
  });
  $("logout").addEventListener("click", () => logout(""));
  $("search").addEventListener("submit", (event) => {
    event.preventDefault();
    state.prefix = $("prefix").value;
    state.cursors = [null];
    page(0);
  });
  $("first-page").addEventListener("click", () => page(0));
  $("prev-page").addEventListener("click", () => page(Math.max(0, state.page - 1)));
  $("next-page").addEventListener("click", () => {
    if (state.next === null) return;
    state.cursors[state.page + 1] = state.next;
    page(state.page + 1);
  });
  const saved = sessionStorage.getItem(TOKEN_KEY);
  if (saved) signIn(saved);
  else logout("");
}

if (typeof document !== "undefined") boot();
`;

/** The one script the page loads (an ES module): the pure half first, then the DOM code that uses it. */
export const STATUS_PAGE_SCRIPT = FORMAT_SCRIPT + DOM_SCRIPT + CHARTS_SCRIPT + STREAMS_SCRIPT + TABLES_SCRIPT + LOOP_SCRIPT;
