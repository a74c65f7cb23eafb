// The memory budgets of docs/limits.md ("Memory budgets"), measured: each cap of the MetaLog and of a node
// filled at its default with records of the largest size it allows, and the heap growth (after a full
// collection) compared with the figure the arithmetic in docs/limits.md gives for it. Each figure there is
// the measured cost rounded up, so these checks have the margin the arithmetic has, not a tight one; the
// sum of the figures is the budget, 64 MB of the 128 MB a Durable Object has.
//
// Measured on the code before the bounds (MAX_STREAMS 100,000, no MAX_META_BYTES): 100,000 streams of
// 1,024-character names and content types held 235 MB, over the whole object, let alone the budget.
import v8 from "node:v8";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { DEFAULT_EDGE_LIMITS } from "../../src/core/edge-limits.ts";
import { decodeSnapshot, emptyState, encodeSnapshot, type MetaState } from "../../src/core/meta/index.ts";
import { checkBookBytes, MAX_SUBSCRIPTION_RECORD_CHARS, recordBytes, type SubscriptionRecord } from "../../src/core/subscriptions/index.ts";
import { MetaLogService } from "../../src/metadata/meta-log-service.ts";
import { MemoryStore } from "../../src/storage/memory-store.ts";
import { eventually } from "../support/eventually.ts";
import { formatOffset as off } from "../../src/core/protocol/offsets.ts";
import { TestCluster } from "./support/test-cluster.ts";

const MB = 1_000_000;
/** The budget figures of docs/limits.md, "Memory budgets" (MB). */
const BUDGET = {
  metaStreams: 28,
  metaSnapshotText: 13,
  subscriptionBook: 16,
  nodeBodies: 54,
  nodeProducers: 5,
} as const;
const TOTAL_BUDGET_MB = 64;

v8.setFlagsFromString("--expose-gc");
const collect = vm.runInNewContext("gc") as () => void;

/** The heap in use after a full collection. */
function heapUsed(): number {
  collect();
  collect();
  return process.memoryUsage().heapUsed;
}

/** A journal that keeps nothing in memory (the MetaLog's is SQLite). */
const NO_JOURNAL = { append: (_entry: unknown, _touched: unknown, next: MetaState): MetaState => next, touchedBetween: (): null => null };

function paddedName(prefix: string, length: number): string {
  return `${prefix}/`.padEnd(length, "n");
}

/**
 * Fills a MetaLog at the default caps the worst way: as many streams of 1,024-character names and
 * 1,024-character content types as MAX_META_BYTES allows while leaving every remaining MAX_STREAMS slot a
 * stream of the shortest name, then those short streams.
 */
function fillMetaLog(): { service: MetaLogService; long: number; short: number } {
  const limits = DEFAULT_EDGE_LIMITS;
  const service = new MetaLogService(emptyState(), NO_JOURNAL, { now: () => 1, admission: { maxStreams: limits.maxStreams, maxMetaBytes: limits.maxMetaBytes } });
  service.propose({ type: "RegisterNode", nodeId: "n1", nodeEpoch: 1, addr: "http://mink.test/n/n1" });
  const shortBytes = 40; // a name of 8 characters and {"contentType":"text/plain"}
  let long = 0;
  let short = 0;
  for (let i = 0; ; i++) {
    const left = limits.maxStreams - long - short - 1;
    const room = limits.maxMetaBytes - service.metaBytesHeld - left * shortBytes;
    if (room < 2_100) break;
    const created = service.propose({ type: "CreateStream", name: paddedName(`l${i}`, 1_024), config: { contentType: `text/plain;v=${i}`.padEnd(1_024, "c") } });
    if (!created.ok) throw new Error(`a long stream was refused: ${created.error.message}`);
    long++;
  }
  for (let i = 0; ; i++) {
    const created = service.propose({ type: "CreateStream", name: `s${String(i).padStart(7, "0")}`, config: { contentType: "text/plain" } });
    if (!created.ok) {
      expect(created.error.code).toBe("limit_reached");
      break;
    }
    short++;
  }
  return { service, long, short };
}

/**
 * A subscription record as the book holds it at its largest for `links` streams: every stream named in the
 * configuration, linked, and in the current wake's snapshot (the three places a path appears), with
 * distinct offsets. Built as data (typed as the core's record) so a thousand-link record costs no O(n^2) growth.
 */
function subscriptionOf(id: string, links: number, pathLength: number): SubscriptionRecord {
  const paths = Array.from({ length: links }, (_, i) => paddedName(`t/${id}-${i}`, pathLength)).sort();
  return {
    id,
    config: { type: "webhook", pattern: null, streams: paths, webhookUrl: "http://127.0.0.1:9999/webhook", wakeStream: null, leaseTtlMs: 1_000, description: null },
    createdAtMs: 1,
    links: paths.map((path, i) => ({ path, glob: false, explicit: true, ackedOffset: off(i), tailOffset: off(i + 1) })),
    generation: 1,
    wake: { wakeId: `w-${id}`, generation: 1, snapshot: paths.map((path, i) => ({ path, tailOffset: off(i + 1) })), token: `t-${id}`, holder: null, leaseExpiresAtMs: 2_000 },
  };
}

/** Records like `make(i)` held parsed, as the book holds its rows, until MAX_SUBSCRIPTION_BOOK_BYTES refuses one (or `count` are held). */
function fillBook(make: (i: number) => SubscriptionRecord, count: number): { held: SubscriptionRecord[]; bytes: number } {
  const held: SubscriptionRecord[] = [];
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const text = JSON.stringify(make(i));
    expect(text.length).toBeLessThanOrEqual(MAX_SUBSCRIPTION_RECORD_CHARS);
    const size = recordBytes(text);
    if (checkBookBytes(bytes, 0, size, DEFAULT_EDGE_LIMITS.maxSubscriptionBookBytes) !== null) break;
    held.push(JSON.parse(text) as SubscriptionRecord);
    bytes += size;
  }
  return { held, bytes };
}

describe("memory budgets (docs/limits.md): each cap filled at its default with the largest records it allows", () => {
  it("the budget figures add up to at most 64 MB", () => {
    const node = BUDGET.nodeBodies + BUDGET.nodeProducers;
    const metaLog = BUDGET.metaStreams + BUDGET.metaSnapshotText + BUDGET.subscriptionBook;
    expect(metaLog).toBeLessThanOrEqual(TOTAL_BUDGET_MB);
    expect(node).toBeLessThanOrEqual(TOTAL_BUDGET_MB);
  });

  it("MetaLog: MAX_STREAMS streams within MAX_META_BYTES of names and configurations stay within the stream figure, and a snapshot or load within the snapshot figure", () => {
    const before = heapUsed();
    const { service, long, short } = fillMetaLog();
    const filled = heapUsed() - before;
    expect(long + short).toBe(DEFAULT_EDGE_LIMITS.maxStreams);
    expect(service.metaBytesHeld).toBeLessThanOrEqual(DEFAULT_EDGE_LIMITS.maxMetaBytes);
    expect(long).toBeGreaterThan(2_000); // the bytes went to maximum-size records
    // A snapshot is a second copy while it is encoded (and while it is decoded, at a load).
    const text = encodeSnapshot(service.state);
    const withText = heapUsed() - before;
    const loaded = decodeSnapshot(text);
    expect(loaded.streams.size).toBe(long + short + 0);
    console.log(`MetaLog: ${long} long + ${short} short streams, ${(service.metaBytesHeld / MB).toFixed(1)} MB of names and configurations: state ${(filled / MB).toFixed(1)} MB, snapshot text ${((withText - filled) / MB).toFixed(1)} MB`);
    expect(filled).toBeLessThan(BUDGET.metaStreams * MB);
    expect(withText - filled).toBeLessThan(BUDGET.metaSnapshotText * MB);
  }, 30_000);

  it("MetaLog: subscription records up to MAX_SUBSCRIPTION_BOOK_BYTES, the largest and the most of them, stay within the book's figure", () => {
    const before = heapUsed();
    // The largest records: 1,000 links (MAX_SUBSCRIPTION_STREAMS) of paths as long as the record bound allows.
    const large = fillBook((i) => subscriptionOf(`b${i}`, DEFAULT_EDGE_LIMITS.maxSubscriptionStreams, 18), 1_000);
    const largeHeap = heapUsed() - before;
    const largeCount = large.held.length;
    expect(largeCount).toBeGreaterThan(20);
    large.held.length = 0;
    const middle = heapUsed();
    // The most records: MAX_SUBSCRIPTIONS of them, each with links enough to share the book's bytes.
    const many = fillBook((i) => subscriptionOf(`s${i}`, 2, 30), DEFAULT_EDGE_LIMITS.maxSubscriptions);
    const manyHeap = heapUsed() - middle;
    console.log(
      `book: ${largeCount} large records ${(large.bytes / MB).toFixed(1)} MB of JSON -> ${(largeHeap / MB).toFixed(1)} MB heap; ` +
        `${many.held.length} small records ${(many.bytes / MB).toFixed(1)} MB -> ${(manyHeap / MB).toFixed(1)} MB heap`,
    );
    expect(many.held.length).toBeGreaterThan(DEFAULT_EDGE_LIMITS.maxSubscriptions * 0.9);
    expect(largeHeap).toBeLessThan(BUDGET.subscriptionBook * MB);
    expect(manyHeap).toBeLessThan(BUDGET.subscriptionBook * MB);
  }, 30_000);

  // ASCII text decodes to a one-byte string; one character past Latin-1 makes the whole text two bytes a character.
  it.each([
    ["ASCII", "m"],
    ["non-Latin-1", "\u20ac"],
  ])("node: an 8 MiB JSON append of MAX_JSON_MESSAGES %s messages waiting for its WAL object stays within the bodies' figure, and a second body gets 503", async (kind, first) => {
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const cluster = new TestCluster({ store: new MemoryStore({ sleep: () => gate }), settings: { WAL_BATCH_DEADLINE_MS: "60000" } });
    const node = await cluster.start("node-a");
    const headers = { "content-type": "application/json" };
    expect((await node.request("PUT", "mem/json", { headers })).status).toBe(201);
    const message = JSON.stringify(first.padEnd(81 - new TextEncoder().encode(first).byteLength, "m")); // 82 bytes, and a comma: 100,000 of them fill 8 MiB
    const body = new TextEncoder().encode(`[${new Array<string>(100_000).fill(message).join(",")}]`);
    expect(body.byteLength).toBeLessThanOrEqual(8 * 1024 * 1024);
    cluster.store.inject({ op: "put", keyPrefix: "wal/node-a/", kind: "delay", delayMs: 1 });
    const before = heapUsed();
    const held = node.request("POST", "mem/json", { headers: { ...headers, "content-length": String(body.byteLength) }, body });
    await eventually(() => node.runtime.wal.queuedBytes > 0, { what: "the append waiting for its WAL object" });
    const holding = heapUsed() - before;
    // The pool holds the first body (8.3 MB of 8 MiB): a second body that does not fit beside it is refused.
    const secondBody = JSON.stringify("s".repeat(100_000));
    const second = await node.request("POST", "mem/json", { headers: { ...headers, "content-length": String(secondBody.length) }, body: secondBody });
    expect(second.status).toBe(503);
    console.log(`node: one 8 MiB JSON append of 100,000 ${kind} messages in flight holds ${(holding / MB).toFixed(1)} MB`);
    expect(holding).toBeLessThan(BUDGET.nodeBodies * MB);
    openGate();
    expect((await held).status).toBe(204);
  }, 30_000);

  it("node: producers of 1,024-byte ids up to MAX_NODE_PRODUCER_BYTES, across streams, stay within the producers' figure; the next new id gets 429", async () => {
    const cluster = new TestCluster();
    const node = await cluster.start("node-a");
    const text = { "content-type": "text/plain" };
    let admitted = 0;
    let refused: Response | null = null;
    for (let s = 0; refused === null && s < 10; s++) {
      expect((await node.request("PUT", `mem/producers-${s}`, { headers: text })).status).toBe(201);
      for (let i = 0; i < 1_000; i++) {
        const id = `p${s}-${i}-`.padEnd(1_024, "i");
        const answer = await node.request("POST", `mem/producers-${s}`, { headers: { ...text, "producer-id": id, "producer-epoch": "0", "producer-seq": "0" }, body: "x" });
        if (answer.status === 429) {
          refused = answer;
          break;
        }
        expect(answer.status).toBe(200);
        admitted++;
      }
    }
    expect(refused?.headers.get("retry-after")).toBe("1");
    expect(await refused?.json()).toMatchObject({ error: { code: "limit_reached", details: { limit: "MAX_NODE_PRODUCER_BYTES" } } });
    // What the producer tables hold: the heap with them, less the heap without them (the store's WAL
    // objects and the tail cache, which compaction bounds, are not the tables').
    const tables = [...node.runtime.ctx.registry.all()].map((stream) => stream.decided.producers);
    const withTables = heapUsed();
    for (const table of tables) table.clear();
    const grown = withTables - heapUsed();
    console.log(`node: ${admitted} producers of 1 KiB ids hold ${(grown / MB).toFixed(2)} MB (MAX_NODE_PRODUCER_BYTES 4 MiB)`);
    expect(admitted).toBeGreaterThan(3_000);
    expect(grown).toBeLessThan(BUDGET.nodeProducers * MB);
  }, 30_000);
});
