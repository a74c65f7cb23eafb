// The node tier: stream nodes run in plain Node (NodeRuntime, the node's protocol app) over one in-memory
// object store and an in-memory metadata log with the real `apply`. A request goes to a node's app as it
// would to its address `/n/<id>`. Nodes restart at a new epoch and can crash: a crashed incarnation's
// every later store and metadata call hangs for ever (a dead process), while what it already sent may
// still land, which is exactly what fencing has to survive.
import { fromWorker } from "../../support/from-worker.ts";
import { ViewCache } from "../../../src/router/view-cache.ts";
import { streamRoutes } from "../../../src/node-http/stream-routes.ts";
import { NodeRuntime } from "../../../src/node/runtime/node-runtime.ts";
import type { NodeMetaPort } from "../../../src/node/runtime/wiring.ts";
import { nodeSettings, type NodeSettings, type SettingsVars } from "../../../src/node/settings.ts";
import { MemoryStore } from "../../../src/storage/memory-store.ts";
import type { ObjectStore } from "../../../src/storage/object-store.ts";
import { MemoryMetaLog } from "./memory-meta-log.ts";
import { MemoryTabletStorage } from "../../support/memory-tablet-storage.ts";
import { consoleSink, type LogSink } from "../../../src/log/logger.ts";

const ORIGIN = "http://127.0.0.1:8787";

export interface ClusterOptions {
  readonly now?: () => number;
  /** Monotonic ms for latencies (default performance.now). */
  readonly clockMs?: () => number;
  /** Where the nodes' structured log lines go (default the console); a test passes a capture. */
  readonly logSink?: LogSink;
  readonly random?: () => number;
  readonly settings?: SettingsVars;
  /** Settings with no var (e.g. `maxReadBytes`), over the ones read from `settings`. */
  readonly overrides?: Partial<NodeSettings>;
  /** How long a node trusts a cached lookup (default 1 s, as in the Durable Object). */
  readonly viewTtlMs?: number;
  /** The shared object store (default a new MemoryStore; pass one whose `delay` faults a test controls). */
  readonly store?: MemoryStore;
}

export interface TestNode {
  readonly nodeId: string;
  readonly runtime: NodeRuntime;
  /** A request to the node's address, e.g. `node.request("PUT", "a/b", {body, headers})`. */
  request(method: string, path: string, init?: { body?: string | Uint8Array; headers?: Record<string, string> }): Promise<Response>;
  fetch(request: Request): Promise<Response>;
  /** A bucket-addressed table request, e.g. `node.table("POST", "t/bucket/0/write", {ops})`. */
  table(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  /** Kills this incarnation: it makes no further progress (its pending calls never answer). */
  crash(): void;
  readonly crashed: boolean;
}

export class TestCluster {
  readonly store: MemoryStore;
  readonly meta: MemoryMetaLog;
  readonly now: () => number;
  private readonly random: () => number;
  private lastEpoch = 0;
  /** The running incarnation of each node: a tiering round reads other leaders' buckets through it (their RPC in workerd). */
  private readonly running = new Map<string, { runtime: NodeRuntime; gate: { crashed: boolean } }>();
  /** Each node's tablets, kept across its restarts (the Durable Object's SQLite survives them). */
  private readonly tablets = new Map<string, MemoryTabletStorage>();

  constructor(private readonly options: ClusterOptions = {}) {
    this.now = options.now ?? (() => Date.now());
    this.random = options.random ?? (() => Math.random());
    this.store = options.store ?? new MemoryStore();
    this.meta = new MemoryMetaLog(this.now);
  }

  tabletsOf(nodeId: string): MemoryTabletStorage {
    let tablets = this.tablets.get(nodeId);
    if (tablets === undefined) this.tablets.set(nodeId, (tablets = new MemoryTabletStorage()));
    return tablets;
  }

  /** Starts an incarnation of `nodeId` at a new epoch (strictly above every earlier one). */
  async start(nodeId: string): Promise<TestNode> {
    const nodeEpoch = Math.max(this.now(), this.lastEpoch + 1);
    this.lastEpoch = nodeEpoch;
    const gate = { crashed: false };
    const store = gatedStore(this.store, gate);
    const meta = gatedMeta(this.meta.port(), gate);
    const viewCache = new ViewCache({ ttlMs: this.options.viewTtlMs ?? 1_000, now: this.now });
    const runtime = await NodeRuntime.start({
      nodeId,
      nodeEpoch,
      addr: `${ORIGIN}/n/${nodeId}`,
      settings: { ...nodeSettings(this.options.settings ?? {}), ...this.options.overrides },
      store,
      tablets: this.tabletsOf(nodeId),
      meta,
      view: {
        lookup: (name, fresh) => viewCache.lookup((n) => meta.lookupStream({ name: n }), name, fresh),
        invalidate: (name) => viewCache.invalidate(name),
      },
      now: this.now,
      clockMs: this.options.clockMs ?? (() => performance.now()),
      logSink: this.options.logSink ?? consoleSink,
      random: this.random,
      background: (work) => {
        work.catch((error: unknown) => console.error(`node ${nodeId}: background work failed`, error));
      },
      onStopped: () => {
        gate.crashed = true;
      },
      tiering: {
        storeUri: "s3://mink",
        peers: (peerId) => ({
          readBucketChangelog: (table, partition, bucket, fromPosition, maxBytes) => {
            const peer = this.running.get(peerId);
            if (peer === undefined || peer.gate.crashed || gate.crashed) return never();
            return peer.runtime.readBucketChangelog(table, partition, bucket, fromPosition, maxBytes);
          },
        }),
      },
    });
    this.running.set(nodeId, { runtime, gate });
    const app = streamRoutes(() => runtime.ctx);
    const fetch = async (request: Request): Promise<Response> => (gate.crashed ? never<Response>() : app.fetch(fromWorker(request)));
    return {
      nodeId,
      runtime,
      fetch,
      request: (method, path, init = {}) =>
        fetch(new Request(`${ORIGIN}/n/${nodeId}/v1/stream/${path}`, { method, headers: init.headers, body: init.body ?? null })),
      table: (method, path, body, headers = {}) =>
        fetch(
          new Request(`${ORIGIN}/n/${nodeId}/v1/table/${path}`, {
            method,
            headers: { "content-type": "application/json", ...headers },
            body: body === undefined ? null : JSON.stringify(body),
          }),
        ),
      crash: () => {
        gate.crashed = true;
        runtime.watcher.stop();
      },
      get crashed() {
        return gate.crashed;
      },
    };
  }
}

const never = <T>(): Promise<T> => new Promise<T>(() => {});

/** The store as one incarnation sees it: once crashed, nothing it calls answers. */
function gatedStore(store: ObjectStore, gate: { crashed: boolean }): ObjectStore {
  const through =
    <A extends unknown[], R>(op: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      gate.crashed ? never<R>() : op(...args).then((value) => (gate.crashed ? never<R>() : value));
  return {
    put: through((key, body, options) => store.put(key, body, options)),
    get: through((key, range) => store.get(key, range)),
    head: through((key) => store.head(key)),
    list: through((prefix, options) => store.list(prefix, options)),
    delete: through((key) => store.delete(key)),
  };
}

function gatedMeta(meta: NodeMetaPort, gate: { crashed: boolean }): NodeMetaPort {
  const through = <R>(call: () => Promise<R>): Promise<R> =>
    gate.crashed ? never<R>() : call().then((value) => (gate.crashed ? never<R>() : value));
  return {
    propose: (command) => through(() => meta.propose(command)),
    lookupStream: (query) => through(() => meta.lookupStream(query)),
    lookupTable: (name) => through(() => meta.lookupTable(name)),
    listTables: () => through(() => meta.listTables()),
    createTable: (coordinator, name, definition, buckets, config) => through(() => meta.createTable(coordinator, name, definition, buckets, config)),
    addPartition: (coordinator, table, value, config) => through(() => meta.addPartition(coordinator, table, value, config)),
    watchDuties: (nodeId, since, timeoutMs, nodeEpoch) => through(() => meta.watchDuties(nodeId, since, timeoutMs, nodeEpoch)),
    heartbeat: (nodeId, nodeEpoch) => through(() => meta.heartbeat(nodeId, nodeEpoch)),
    coordinatorTick: (coordinator, maxMoves) => through(() => meta.coordinatorTick(coordinator, maxMoves)),
    collectable: (coordinator, ids) => through(() => meta.collectable(coordinator, ids)),
    onStreamAppended: (tails) => through(() => meta.onStreamAppended(tails)),
    onWebhookReply: (id, ref, done) => through(() => meta.onWebhookReply(id, ref, done)),
    watchSubscriptions: (nodeId, since, timeoutMs) => through(() => meta.watchSubscriptions(nodeId, since, timeoutMs)),
  };
}
