// The memory budgets of docs/limits.md ("Memory budgets"), measured: each cap of the MetaLog and of a node
// filled at its default with records of the largest size it allows, and the heap growth (after a full
// collection) compared with the figure the arithmetic in docs/limits.md gives for it. Each figure there is
// the measured cost rounded up, so these checks have the margin the arithmetic has, not a tight one; the
// sum of the figures is the budget, 64 MB of the 128 MB a Durable Object has.
//
// Measured on the code before the bounds (MAX_STREAMS 100,000, no MAX_META_BYTES): 100,000 streams of
// 1,024-character names and content types held 235 MB, over the whole object, let alone the budget. Stream
// records have since left the MetaLog's memory for its SQLite rows (src/metadata/stored-state.ts): what
// grows there now is the tables, bounded by MAX_TABLES, MAX_TOTAL_BUCKETS and MAX_TABLE_DEFINITION_BYTES.
import v8 from "node:v8";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { DEFAULT_EDGE_LIMITS } from "../../src/core/edge-limits.ts";
import { decodeSnapshot, emptyState, encodeSnapshot, MAX_TABLE_DEFINITION_BYTES, MemoryStreamTable, type MetaState } from "../../src/core/meta/index.ts";
import { MAX_TABLES, MAX_TOTAL_BUCKETS } from "../../src/core/meta/table-rules.ts";
import { checkBookBytes, MAX_SUBSCRIPTION_RECORD_CHARS, recordBytes, type SubscriptionRecord } from "../../src/core/subscriptions/index.ts";
import { MetaLogService } from "../../src/metadata/meta-log-service.ts";
import { MemoryStore } from "../../src/storage/memory-store.ts";
import { eventually } from "../support/eventually.ts";
import { formatOffset as off } from "../../src/core/protocol/offsets.ts";
import { TestCluster } from "./support/test-cluster.ts";

const MB = 1_000_000;
/** The budget figures of docs/limits.md, "Memory budgets" (MB). */
const BUDGET = {
  metaTables: 16,
  metaSnapshotText: 6,
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
 * Fills a MetaLog's tables the worst way: MAX_TABLES tables whose definitions share MAX_TABLE_DEFINITION_BYTES
 * (AD6), with as many buckets as MAX_TOTAL_BUCKETS leaves each. Stream records are rows in SQLite in the
 * Durable Object (nothing per stream in memory), so the tables are what the MetaLog holds that grows.
 */
function fillTables(): { service: MetaLogService; tables: number; buckets: number } {
  const service = new MetaLogService(emptyState(), NO_JOURNAL, { now: () => 1, admission: DEFAULT_EDGE_LIMITS });
  service.propose({ type: "RegisterNode", nodeId: "n1", nodeEpoch: 1, addr: "http://mink.test/n/n1" });
  service.propose({ type: "AcquireLease", nodeId: "n1", nodeEpoch: 1, ttlMs: 60_000 });
  const coordinator = { nodeId: "n1", nodeEpoch: 1, coordinatorEpoch: 1 };
  const bucketsEach = Math.floor(MAX_TOTAL_BUCKETS / MAX_TABLES);
  const padding = Math.floor(MAX_TABLE_DEFINITION_BYTES / MAX_TABLES) - 200;
  let tables = 0;
  for (let i = 0; i < MAX_TABLES; i++) {
    const created = service.propose({
      type: "CreateTable",
      name: `table-${String(i).padStart(4, "0")}`,
      definition: { columns: ["id"], buckets: bucketsEach, comment: "d".repeat(padding) },
      leaders: Array.from({ length: bucketsEach }, () => "n1"),
      streamConfig: { contentType: "application/json" },
      coordinator,
    });
    if (!created.ok) throw new Error(`table ${i} was refused: ${created.error.message}`);
    tables++;
  }
  return { service, tables, buckets: tables * bucketsEach };
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
    const metaLog = BUDGET.metaTables + BUDGET.metaSnapshotText + BUDGET.subscriptionBook;
    expect(metaLog).toBeLessThanOrEqual(TOTAL_BUDGET_MB);
    expect(node).toBeLessThanOrEqual(TOTAL_BUDGET_MB);
  });

  it("MetaLog: MAX_TABLES tables of definitions up to MAX_TABLE_DEFINITION_BYTES, with MAX_TOTAL_BUCKETS buckets, stay within the tables' figure, and the snapshot beside the stream rows within its own", () => {
    const before = heapUsed();
    let filled: ReturnType<typeof fillTables> | null = fillTables();
    const { tables, buckets } = filled;
    // What the Durable Object holds: the tables (its stream records, bucket streams among them, are rows).
    const { tables: heldTables, nodes, transfers, lease, version } = filled.service.state;
    filled = null;
    const tablesHeap = heapUsed() - before;
    // The snapshot of the state beside the rows is written whenever a table, node, transfer or the lease changes.
    const text = encodeSnapshot({ ...emptyState(), version, nodes, transfers, lease, tables: heldTables, streams: MemoryStreamTable.empty() });
    const withText = heapUsed() - before;
    expect(decodeSnapshot(text).tables.size).toBe(heldTables.size);
    console.log(`MetaLog: ${tables} tables, ${buckets} buckets: tables ${(tablesHeap / MB).toFixed(1)} MB, snapshot text ${((withText - tablesHeap) / MB).toFixed(1)} MB`);
    expect(tables).toBe(MAX_TABLES);
    expect(tablesHeap).toBeLessThan(BUDGET.metaTables * MB);
    expect(withText - tablesHeap).toBeLessThan(BUDGET.metaSnapshotText * MB);
  }, 60_000);

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
