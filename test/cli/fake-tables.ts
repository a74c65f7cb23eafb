// The table endpoints of the fake admin server (fake-admin-server.ts), answering as src/admin/tables.ts
// does: GET /admin/tables, GET /admin/tables/<name> (400 for a name the server refuses, 404 for no such
// table) and POST /admin/tables/<name>/snapshot, over a register of tables the tests may replace.
import type { TableAnswer, TableSnapshotAnswer } from "../../src/cli/admin-answers.ts";

/** What the fake knows of one table: its description and what a snapshot of it answers. */
export interface FakeTable {
  kind: "primary-key" | "log";
  description: TableAnswer;
  snapshot: TableSnapshotAnswer["buckets"];
}

const offset = (position: number): string => `0000000000000000_${String(position).padStart(16, "0")}`;

/** A primary-key table of three buckets: one never loaded by its leader, one snapshotted before. */
const USERS: FakeTable = {
  kind: "primary-key",
  description: {
    name: "users",
    definition: {
      columns: [
        { name: "id", type: "int", nullable: false },
        { name: "name", type: "string", nullable: false },
        { name: "email", type: "string", nullable: true },
      ],
      primaryKey: ["id"],
      bucketKey: ["id"],
      buckets: 3,
    },
    buckets: [
      { bucket: 0, leader: "node-0", leaderAddr: "http://127.0.0.1:8787/n/node-0", leaderEpoch: 2, nextOffset: offset(153), rows: 3, snapshotOffset: offset(102) },
      { bucket: 1, leader: "node-1", leaderAddr: "http://127.0.0.1:8787/n/node-1", leaderEpoch: 1, nextOffset: offset(51), rows: 1, snapshotOffset: null },
      { bucket: 2, leader: "node-0", leaderAddr: "http://127.0.0.1:8787/n/node-0", leaderEpoch: 0, nextOffset: null, rows: null, snapshotOffset: null },
    ],
  },
  snapshot: [
    { bucket: 0, coveredOffset: offset(153), error: null },
    { bucket: 1, coveredOffset: offset(51), error: null },
    { bucket: 2, coveredOffset: null, error: "not_loaded" },
  ],
};

/** A log table of two buckets, no bucket key. */
const EVENTS: FakeTable = {
  kind: "log",
  description: {
    name: "events",
    definition: { columns: [{ name: "kind", type: "string", nullable: false }, { name: "at", type: "int", nullable: false }], buckets: 2 },
    buckets: [
      { bucket: 0, leader: "node-1", leaderAddr: "http://127.0.0.1:8787/n/node-1", leaderEpoch: 1, nextOffset: offset(76), rows: 2, snapshotOffset: null },
      { bucket: 1, leader: "node-0", leaderAddr: "http://127.0.0.1:8787/n/node-0", leaderEpoch: 1, nextOffset: offset(38), rows: 1, snapshotOffset: null },
    ],
  },
  snapshot: [
    { bucket: 0, coveredOffset: null, error: "not_loaded" },
    { bucket: 1, coveredOffset: null, error: "not_loaded" },
  ],
};

/** The tables the fake holds by default, by name (the server lists them sorted by name). */
export function defaultTables(): Map<string, FakeTable> {
  return new Map([
    ["events", structuredClone(EVENTS)],
    ["users", structuredClone(USERS)],
  ]);
}

/** `partitions` as the server lists it, for a partitioned table only (the defaults leave it out, as an older server does). */
function partitionsOf(table: FakeTable): { partitions?: number } {
  const values = table.description.buckets.flatMap((b) => (b.partition === undefined ? [] : [b.partition]));
  return values.length === 0 ? {} : { partitions: new Set(values).size };
}

type Reply = (status: number, body: unknown) => void;
type Refuse = (status: number, code: string, message: string, details?: unknown) => void;

/** The server's rule for a table name (D14 of docs/tables.md). */
const TABLE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** Answers a table route and returns true, or returns false for any other route. */
export function answerTableRoute(tables: ReadonlyMap<string, FakeTable>, method: string, path: string, reply: Reply, refuse: Refuse): boolean {
  if (method === "GET" && path === "/admin/tables") {
    const listed = [...tables.values()].map((t) => ({ name: t.description.name, buckets: t.description.buckets.length, ...partitionsOf(t), kind: t.kind }));
    reply(200, { tables: listed.sort((a, b) => (a.name < b.name ? -1 : 1)) });
    return true;
  }
  const match = /^\/admin\/tables\/([^/]+)(\/snapshot)?$/.exec(path);
  const snapshot = match?.[2] !== undefined;
  if (match === null || method !== (snapshot ? "POST" : "GET")) return false;
  const name = decodeURIComponent(match[1] ?? "");
  if (!TABLE_NAME.test(name)) {
    refuse(400, "invalid", "table name must be 1 to 128 of [A-Za-z0-9_-], starting with a letter or digit", { field: "name" });
    return true;
  }
  const table = tables.get(name);
  if (table === undefined) refuse(404, "not_found", "no such table", { table: name });
  else reply(200, snapshot ? { table: name, buckets: table.snapshot } : table.description);
  return true;
}
