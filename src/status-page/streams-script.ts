// The stream list of the status page's script (docs/status-page.md): search by prefix, pages, a Move control
// per row, and following the transfers started from it. Browser JavaScript kept as text, part of the one
// script page-script.ts composes (it uses that file's helpers and state); no backtick, no dollar-brace.
export const STREAMS_SCRIPT = String.raw`
function moveControl(stream) {
  const box = el("span", "move");
  const choose = el("select", "small");
  choose.setAttribute("aria-label", "Target node for " + stream.name);
  for (const node of state.nodes) {
    if (node.id === stream.owner || !node.live || node.draining) continue;
    const option = el("option", null, node.id);
    option.value = node.id;
    choose.append(option);
  }
  if (choose.options.length === 0) return el("span", "muted small", "no other node");
  const go = el("button", "small", "Move");
  go.type = "button";
  go.disabled = stream.pendingTransfer !== null;
  go.addEventListener("click", () => guarded(() => startTransfer(stream.name, choose.value)));
  box.append(choose, go);
  return box;
}

function renderStreams(answer) {
  const table = $("streams");
  if (!answer.ok) {
    const missing = answer.status === 404;
    notice("stream-message", missing ? "The stream list is not available: this server has no GET /admin/streams listing." : "streams: " + answer.message, missing ? "" : "error");
    show("stream-list", false);
    return;
  }
  show("stream-list", true);
  const streams = answer.body.streams;
  state.next = answer.body.next;
  notice("stream-message", streams.length === 0 ? (state.prefix ? "No stream starts with " + state.prefix + "." : "No streams yet.") : "", "");
  fill(table, streams.map((s) => {
    const owner = el("span", "mono", s.owner || "none");
    if (s.ownership !== "opened") owner.append(" ", badge(s.ownership, "warn"));
    if (s.pendingTransfer) owner.append(" ", badge("→ " + s.pendingTransfer.target, "warn"));
    const tail = el("span", "mono offset", s.tail ? compactOffset(s.tail.offset) : "—");
    if (s.tail) tail.title = s.tail.offset;
    if (s.tail && s.tail.closed) tail.append(" ", badge("closed"));
    const nameCell = cell(s.name, "name mono");
    nameCell.title = s.name;
    const tr = row([nameCell, cell(owner), cell(formatBytes(s.tail ? s.tail.bytes : null), "num"), cell(tail), cell(moveControl(s))]);
    tr.dataset.stream = s.name;
    return tr;
  }));
  $("page-label").textContent = "Page " + (state.page + 1);
  $("prev-page").disabled = state.page === 0;
  $("first-page").disabled = state.page === 0;
  $("next-page").disabled = state.next === null;
}

async function loadStreams() {
  const query = new URLSearchParams({ prefix: state.prefix, limit: String(PAGE_SIZE) });
  const after = state.cursors[state.page];
  if (after !== null) query.set("after", after);
  renderStreams(await api("/admin/streams?" + query.toString()));
}

async function startTransfer(name, target) {
  if (!target) return;
  const answer = await api("/admin/transfers", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ stream: name, target }) });
  if (answer.ok) {
    state.watched = [{ name, target, state: "moving", note: "" }, ...state.watched.filter((w) => w.name !== name)].slice(0, MAX_WATCHED);
    notice("stream-message", "Transfer of " + name + " to " + target + (answer.status === 202 ? " began." : " was already pending."), "ok");
  } else {
    notice("stream-message", "Transfer of " + name + " to " + target + " refused: " + answer.message, "error");
  }
  await refresh();
}

/** A transfer started here is done once the metadata log shows the target owning the stream, opened. */
async function checkWatched() {
  let finished = false;
  for (const w of state.watched) {
    if (w.state !== "moving") continue;
    const answer = await api("/admin/streams/" + streamPath(w.name));
    if (!answer.ok) {
      w.note = answer.message;
      continue;
    }
    const s = answer.body;
    if (s.pendingTransfer === null && s.owner === w.target && s.ownership === "opened") {
      w.state = "done";
      w.note = "";
      finished = true;
    } else if (s.pendingTransfer === null && s.owner !== w.target) {
      w.state = "failed";
      w.note = "owner is " + s.owner;
    }
  }
  return finished;
}
`;
