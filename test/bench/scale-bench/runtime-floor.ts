// bench:scale --floor: what the local runtime itself costs a create, with no mink code at all. One workerd
// (Miniflare, a direct socket, state in a temporary directory, as `npm run dev` runs mink) serves a
// Worker of a few lines in four modes, chosen by the stream name's first segment:
//
//   worker        the Worker answers 201 itself
//   node          the Worker hands the request to one of three Durable Objects (by name hash), which answers
//   meta          ... which first makes one RPC to a single Durable Object that looks the name up in its
//                 SQLite and inserts a row (one commit per RPC): a router, a node and a metadata log, the
//                 hops DESIGN.md gives a create that lands on its owner, doing nothing else
//   meta-grouped  the same, the inserts of RPCs that arrive while one is applied grouped into one event
//                 (the adaptive window of src/metadata/group-commit.ts)
//
// No WAL write, no parsing, no rules: a create through mink does all of this and more, so these rates
// bound what any create path of this design reaches on this machine's runtime.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { printTable, type Cell, type Row } from "../service-bench/table.ts";

export const FLOOR_MODES = ["worker", "node", "meta", "meta-grouped"] as const;
export type FloorMode = (typeof FLOOR_MODES)[number];

export const FLOOR_TITLES: Record<FloorMode, string> = {
  worker: "Worker only",
  node: "Worker → DO",
  meta: "Worker → DO → DO+SQLite",
  "meta-grouped": "same, grouped commits",
};

const WORKER_SOURCE = `
import { DurableObject } from "cloudflare:workers";
export class Meta extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS streams (name TEXT PRIMARY KEY, record TEXT NOT NULL)");
    this.waiting = [];
    this.windowOpen = false;
  }
  claim(name) {
    const found = this.ctx.storage.sql.exec("SELECT record FROM streams WHERE name = ?", name).toArray();
    if (found.length > 0) return false;
    this.ctx.storage.transactionSync(() =>
      this.ctx.storage.sql.exec("INSERT INTO streams VALUES (?, ?)", name, JSON.stringify({ name, owner: "node", epoch: 1 })));
    return true;
  }
  claimGrouped(name) {
    if (!this.windowOpen) { this.openWindow(); return this.claim(name); }
    return new Promise((resolve) => this.waiting.push({ name, resolve }));
  }
  openWindow() { this.windowOpen = true; setTimeout(() => this.endWindow(), 0); }
  endWindow() {
    const group = this.waiting;
    this.waiting = [];
    this.windowOpen = false;
    if (group.length === 0) return;
    for (const { name, resolve } of group) resolve(this.claim(name));
    this.openWindow();
  }
}
export class Node extends DurableObject {
  async fetch(request) {
    const { mode, name } = JSON.parse(request.headers.get("x-floor"));
    if (mode === "node") return new Response(null, { status: 201 });
    const meta = this.env.META.get(this.env.META.idFromName("meta"));
    const created = mode === "meta" ? await meta.claim(name) : await meta.claimGrouped(name);
    return new Response(null, { status: created ? 201 : 200 });
  }
}
export default {
  async fetch(request, env) {
    const name = decodeURIComponent(new URL(request.url).pathname.replace(/^\\/v1\\/stream\\//, ""));
    const mode = name.split("~")[0];
    if (mode === "worker") return new Response(null, { status: 201 });
    let hash = 0;
    for (let i = 0; i < name.length; i++) hash = (hash * 31 + name.charCodeAt(i)) | 0;
    const node = env.NODE.get(env.NODE.idFromName("node-" + (Math.abs(hash) % 3)));
    return node.fetch(request.url, { method: "PUT", headers: { "x-floor": JSON.stringify({ mode, name }) } });
  },
};
`;

export interface RuntimeFloor {
  /** The origin to send creates to; a stream name `<mode>~...` picks the mode. */
  readonly baseUrl: string;
  stop(): Promise<void>;
}

export async function startRuntimeFloor(): Promise<RuntimeFloor> {
  const persistDir = mkdtempSync(join(tmpdir(), "mink-bench-floor-"));
  const miniflare = new Miniflare({
    modules: true,
    script: WORKER_SOURCE,
    compatibilityDate: "2024-09-23",
    host: "127.0.0.1",
    port: 0,
    unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
    durableObjects: { NODE: { className: "Node", useSQLite: true }, META: { className: "Meta", useSQLite: true } },
    durableObjectsPersist: join(persistDir, "do"),
  });
  await miniflare.ready;
  const url = await miniflare.unsafeGetDirectURL();
  return {
    baseUrl: url.origin,
    stop: async () => {
      await miniflare.dispose();
      rmSync(persistDir, { recursive: true, force: true });
    },
  };
}

/** The floor's table: a row per connection count, a column per server (`cell`: its rate and p50). */
export function printFloorTable<P>(connections: readonly number[], columns: readonly (readonly [string, ReadonlyMap<number, P[]>])[], cell: (phases: readonly P[]) => Cell): void {
  console.log("\nthe runtime's floor: creates/s, median (range), and the median p50 in ms, through a Worker of a few lines on the same runtime, no mink code (scale-bench/runtime-floor.ts)");
  const rows: Row[] = connections.map((count) => ({ label: `${count} connection${count === 1 ? "" : "s"}`, key: `c${count}` }));
  printTable(rows, columns.map(([title, phases]) => ({ title, cells: new Map(connections.map((count) => [`c${count}`, cell(phases.get(count) ?? [])])) })));
}
