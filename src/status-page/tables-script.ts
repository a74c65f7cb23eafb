// The tables panel of the status page's script (docs/status-page.md): the tables from GET /admin/tables, and
// for each one opened with its Buckets button, its definition and its buckets from GET /admin/tables/<name>.
// Browser JavaScript kept as text, part of the one script page-script.ts composes (it uses that file's
// helpers and state); no backtick, no dollar-brace.
export const TABLES_SCRIPT = String.raw`
/** Each open table costs one request per refresh, and that request asks every leader of its buckets. */
const MAX_OPEN_TABLES = 5;
let tablesLoads = 0;
const BUCKET_COLUMNS = [["Bucket", "num"], ["Leader", ""], ["Epoch", "num"], ["Next offset", ""], ["Rows", "num"], ["Snapshot", ""]];

function toggleControl(name) {
  const open = state.openTables.includes(name);
  const button = el("button", "small secondary", open ? "Hide" : "Show");
  button.type = "button";
  button.dataset.table = name;
  button.setAttribute("aria-expanded", String(open));
  button.setAttribute("aria-label", (open ? "Hide" : "Show") + " the buckets of " + name);
  button.addEventListener("click", () => guarded(() => toggleTable(name)));
  return button;
}

async function toggleTable(name) {
  const open = state.openTables.includes(name);
  state.openTables = open ? state.openTables.filter((n) => n !== name) : [...state.openTables, name].slice(-MAX_OPEN_TABLES);
  await loadTables();
}

function renderTables(answer) {
  if (!answer.ok) {
    const missing = answer.status === 404;
    notice("table-message", missing ? "Tables are not available: this server has no GET /admin/tables." : "tables: " + answer.message, missing ? "" : "error");
    show("table-list", false);
    return;
  }
  const tables = answer.body.tables;
  notice("table-message", tables.length === 0 ? "No tables yet." : "", "");
  show("table-list", tables.length > 0);
  // Rebuilding the rows replaces the buttons: give the focus back to the one that had it.
  const focused = $("tables").contains(document.activeElement) ? document.activeElement.dataset.table : undefined;
  fill($("tables"), tables.map((t) => {
    const nameCell = cell(t.name, "name mono");
    nameCell.title = t.name;
    const tr = row([nameCell, cell(badge(t.kind)), cell(t.buckets, "num"), cell(toggleControl(t.name))]);
    tr.dataset.table = t.name;
    return tr;
  }));
  const again = Array.from($("tables").querySelectorAll("button"), (button) => button).find((button) => focused !== undefined && button.dataset.table === focused);
  if (again) again.focus();
}

function offsetCell(offset) {
  const text = el("span", "mono offset", offset === null || offset === undefined ? "—" : compactOffset(offset));
  if (offset) text.title = offset;
  return cell(text);
}

function bucketTable(description) {
  const table = el("table", "stack buckets");
  const head = document.createElement("tr");
  for (const [name, className] of BUCKET_COLUMNS) head.append(el("th", className, name));
  table.createTHead().append(head);
  table.createTBody();
  fill(table, description.buckets.map((b) => {
    // A partitioned table's bucket is named by its partition's value and its number.
    const bucketLabel = b.partition === undefined ? b.bucket : b.partition + " / " + b.bucket;
    const tr = row([cell(bucketLabel, "num"), cell(b.leader, "mono"), cell(b.leaderEpoch, "num mono"), offsetCell(b.nextOffset), cell(b.rows, "num"), offsetCell(b.snapshotOffset)]);
    tr.dataset.bucket = String(b.bucket);
    return tr;
  }));
  const wrap = el("div", "table-wrap");
  wrap.append(table);
  return wrap;
}

function tableDetail(name, answer) {
  const block = el("div", "table-detail");
  block.dataset.table = name;
  const title = el("h3");
  title.append(el("span", "mono", name), " buckets");
  block.append(title);
  if (!answer.ok) {
    block.append(el("p", "notice error", name + ": " + answer.message));
    return block;
  }
  block.append(el("p", "muted small definition", definitionSummary(answer.body.definition)));
  if (answer.body.tiered !== undefined) block.append(el("p", "muted small tiered", tieredSummary(answer.body.tiered)));
  block.append(bucketTable(answer.body));
  return block;
}

/** The Iceberg copy (docs/tiering.md, "Lag"): its snapshot and how far it is behind, in one line. */
function tieredSummary(tiered) {
  if (tiered === null) return "Tiered: never";
  const snapshot = tiered.snapshotId === null ? "no snapshot yet" : "snapshot " + tiered.snapshotId;
  const lag = tiered.lagRecords === null ? "lag unknown" : tiered.lagRecords === 0 ? "up to date" : tiered.lagRecords + " records behind" + (tiered.lagMs === null ? "" : " for " + Math.round(tiered.lagMs / 1000) + " s");
  return "Tiered: " + snapshot + " (version " + tiered.version + "), " + lag + " · " + tiered.metadataKey;
}

/** Loads the list and the open tables; a load that a later one (a click during a refresh) overtook draws nothing. */
async function loadTables() {
  const load = ++tablesLoads;
  const answer = await api("/admin/tables");
  if (load !== tablesLoads) return;
  renderTables(answer);
  if (!answer.ok) return;
  const names = new Set(answer.body.tables.map((t) => t.name));
  state.openTables = state.openTables.filter((name) => names.has(name));
  const details = await Promise.all(state.openTables.map(async (name) => tableDetail(name, await api("/admin/tables/" + encodeURIComponent(name)))));
  if (load === tablesLoads) $("table-buckets").replaceChildren(...details);
}
`;
