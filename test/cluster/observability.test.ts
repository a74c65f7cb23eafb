// Structured logs in the node tier (docs/observability.md): nodes over the in-memory store and metadata
// log write their lines into a capture passed as the log sink, the same interface the console sink fills
// in workerd. A takeover, a transfer step and a fencing each produce their lines with node, epoch and
// stream; the append path writes none; every line has the common fields and its event's level.
import { describe, expect, it } from "vitest";
import { LOG_EVENTS, type LogEvent } from "../../src/log/events.ts";
import { createLogger } from "../../src/log/logger.ts";
import { eventually, NotYet } from "../support/eventually.ts";
import { nodeWorld, NODE_WORLD_LEASE_TTL_MS, type NodeWorld } from "./support/node-world.ts";
import type { TestNode } from "./support/test-cluster.ts";

const TEXT = { "content-type": "text/plain" };
const LEASE_TTL_MS = NODE_WORLD_LEASE_TTL_MS;

type Line = Record<string, unknown> & { ts: string; level: string; event: LogEvent; node: string | null; nodeEpoch: number | null };

interface World extends NodeWorld {
  readonly lines: Line[];
}

async function world(): Promise<World> {
  const lines: Line[] = [];
  const logSink = (line: string, level: string): void => {
    const parsed = JSON.parse(line) as Line;
    expect(parsed.level).toBe(level);
    lines.push(parsed);
  };
  return { ...(await nodeWorld({ logSink })), lines };
}

/** A request that follows the node's 307 to the owner. */
async function send(w: World, method: string, path: string, body?: string): Promise<Response> {
  let node = w.nodes.get("a")!;
  for (let hops = 0; hops < 3; hops++) {
    const response = await node.request(method, path, { headers: TEXT, ...(body === undefined ? {} : { body }) });
    if (response.status !== 307) return response;
    node = w.nodes.get(/\/n\/([^/]+)\//.exec(response.headers.get("location") ?? "")?.[1] ?? "")!;
  }
  throw new Error(`${method} ${path}: too many redirects`);
}

function record(w: World, name: string) {
  return w.cluster.meta.service.lookupStream({ name }).stream!;
}

/** Streams with an acknowledged append each, until one is owned by `victim`; the names it owns. */
async function streamsOn(w: World, victim: string): Promise<string[]> {
  const names = Array.from({ length: 6 }, (_, i) => `obs/${i}`);
  for (const name of names) {
    expect((await send(w, "PUT", name)).status).toBe(201);
    expect((await send(w, "POST", name, "x")).status).toBe(204);
  }
  const owned = names.filter((name) => record(w, name).owner === victim);
  expect(owned.length).toBeGreaterThan(0);
  return owned;
}

/** Past b's lease in two steps, the others beating in each: only the silent node is declared dead. */
async function pastLease(w: World, beating: readonly TestNode[]): Promise<void> {
  await w.advance(LEASE_TTL_MS / 2 + 100, beating);
  await w.advance(LEASE_TTL_MS / 2 + 100, beating);
}

function linesOf(w: World, event: LogEvent): Line[] {
  return w.lines.filter((line) => line.event === event);
}

async function lineOf(w: World, event: LogEvent, match: (line: Line) => boolean = () => true): Promise<Line> {
  return eventually(
    () => {
      const line = linesOf(w, event).find(match);
      if (line === undefined) throw new NotYet(`no ${event} line yet`);
      return line;
    },
    { what: `a ${event} line` },
  );
}

describe("node logs", () => {
  it("every line has ts, level (the event's own), event, node and nodeEpoch; a start says what it replayed", async () => {
    const w = await world();
    const starts = linesOf(w, "node.start");
    expect(starts.map((line) => line.node).sort()).toEqual(["a", "b", "c"]);
    for (const node of w.nodes.values()) {
      const start = starts.find((line) => line.node === node.nodeId)!;
      expect(start.nodeEpoch).toBe(node.runtime.ctx.nodeEpoch);
      expect(start).toMatchObject({ walObjects: 0, streams: 0 });
      expect(typeof start["recoverMs"]).toBe("number");
    }
    for (const line of w.lines) {
      expect(new Date(line.ts).toISOString()).toBe(line.ts);
      expect(line.level).toBe(LOG_EVENTS[line.event]);
    }
  });

  it("the append path writes no line: appends and reads leave the capture as it was", async () => {
    const w = await world();
    expect((await send(w, "PUT", "quiet/s")).status).toBe(201);
    const before = w.lines.length;
    for (let i = 0; i < 20; i++) expect((await send(w, "POST", "quiet/s", `${i};`)).status).toBe(204);
    expect((await send(w, "GET", "quiet/s?offset=-1")).status).toBe(200);
    expect(w.lines.slice(before)).toEqual([]);
  });

  it("a takeover: the coordinator declares the node dead, the taker logs begin and end with what it replayed", async () => {
    const w = await world();
    const owned = await streamsOn(w, "b");
    const dead = w.nodes.get("b")!;
    dead.crash();
    await pastLease(w, [w.nodes.get("a")!, w.nodes.get("c")!]);
    const declared = await lineOf(w, "coordinator.declared_dead");
    expect(declared.node).toBe(w.cluster.meta.service.state.lease?.holder);
    expect(declared["declared"]).toEqual(["b"]);
    // The nodes b's streams were re-led to open them, and the first to need it takes b over.
    const begin = await lineOf(w, "takeover.begin", (line) => line["deadNode"] === "b");
    const end = await lineOf(w, "takeover.end", (line) => line["deadNode"] === "b");
    expect(begin).toMatchObject({ deadNode: "b", deadEpoch: dead.runtime.ctx.nodeEpoch });
    expect(end).toMatchObject({ node: begin.node, nodeEpoch: begin.nodeEpoch, deadNode: "b", deadEpoch: dead.runtime.ctx.nodeEpoch });
    expect(end["walObjects"]).toBeGreaterThanOrEqual(owned.length);
    expect(end["streamsClosed"]).toBe(owned.length);
    expect(typeof end["durationMs"]).toBe("number");
    expect(w.lines.indexOf(begin)).toBeLessThan(w.lines.indexOf(end));
  });

  it("a transfer: the source logs its hand-off with the stream and epoch, the target its open", async () => {
    const w = await world();
    const [name] = await streamsOn(w, "b");
    const stream = record(w, name!);
    const answer = w.cluster.meta.service.propose({ type: "BeginTransfer", streamId: stream.id, target: "c" });
    expect(answer.ok).toBe(true);
    const handOff = await lineOf(w, "transfer.hand_off", (line) => line["stream"] === name);
    expect(handOff).toMatchObject({ node: "b", nodeEpoch: w.nodes.get("b")!.runtime.ctx.nodeEpoch, streamId: stream.id, epoch: stream.epoch, rule: "T1" });
    const opened = await lineOf(w, "transfer.open", (line) => line["stream"] === name);
    expect(opened).toMatchObject({ node: "c", nodeEpoch: w.nodes.get("c")!.runtime.ctx.nodeEpoch, streamId: stream.id });
  });

  it("fencing: a zombie whose chain was sealed logs node.fenced at its next append, and node.superseded at its next heartbeat", async () => {
    const w = await world();
    const owned = await streamsOn(w, "b");
    const zombie = w.nodes.get("b")!;
    zombie.runtime.fault = { mode: "zombie" };
    await pastLease(w, [w.nodes.get("a")!, w.nodes.get("c")!, zombie]);
    await lineOf(w, "takeover.end", (line) => line["deadNode"] === "b");
    expect(linesOf(w, "node.fenced")).toEqual([]);
    // Its heartbeat is refused at its stale epoch: it learns it was superseded.
    zombie.runtime.fault = null;
    expect(await zombie.runtime.beat()).toBe("replaced");
    expect(await lineOf(w, "node.superseded", (line) => line["during"] === "heartbeat")).toMatchObject({ node: "b", nodeEpoch: zombie.runtime.ctx.nodeEpoch });
    // Its next WAL object collides with the seal (a conditional write refused). The node then stops, and
    // the test cluster's stopped node never answers, so the request is not awaited: its line is.
    // A zombie that still believes it is live (a paused process whose clock did not move) gets as far as
    // its WAL; a zombie that knows it is out of touch answers 503 before that.
    zombie.runtime.ctx.liveUntilMs = Number.POSITIVE_INFINITY;
    void zombie.request("POST", owned[0]!, { headers: TEXT, body: "late" });
    const fenced = await lineOf(w, "node.fenced");
    expect(fenced).toMatchObject({ level: "warn", node: "b", nodeEpoch: zombie.runtime.ctx.nodeEpoch, code: "fenced" });
  });
});

describe("the logger", () => {
  it("cuts long strings and extra fields, keeps the common fields from being overwritten, and writes an error's message", () => {
    const lines: string[] = [];
    const log = createLogger((line) => lines.push(line), { node: "n", nodeEpoch: 7 }, () => 0);
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}`, i]));
    log.log("node.error", { ...many, node: "forged", level: "info", during: "x".repeat(10_000) }, new TypeError("boom"));
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ ts: "1970-01-01T00:00:00.000Z", level: "error", event: "node.error", node: "n", nodeEpoch: 7, error: "boom", errorName: "TypeError" });
    expect(Object.keys(line).filter((key) => key.startsWith("f")).length).toBeLessThanOrEqual(24);
    expect(lines[0]!.length).toBeLessThan(2_000);
  });

  it("never throws on what was thrown: a cyclic object is described by its type", () => {
    const lines: string[] = [];
    const log = createLogger((line) => lines.push(line), { node: null, nodeEpoch: null }, () => 0);
    const cyclic: Record<string, unknown> = {};
    cyclic["self"] = cyclic;
    log.log("worker.error", { during: "request" }, cyclic);
    expect(JSON.parse(lines[0]!)).toMatchObject({ node: null, nodeEpoch: null, error: "object" });
  });
});
