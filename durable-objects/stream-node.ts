// StreamNode: one owning node, a thin shell over src/node/runtime (NodeRuntime) and src/node-http (its routes).
// Identity is the Durable Object's name; the epoch is the wall clock at construction, so every start is a new
// epoch. A heartbeat alarm keeps the node live and awake and triggers compaction. If the WAL writer stops
// (fenced, or the store kept failing) the node answers 503 and resets itself: the next request starts anew.
import { DurableObject } from "cloudflare:workers";
import type { Hono } from "hono";
import { metaLogClient, streamNodeClient, type Env } from "../src/env.ts";
import { streamRoutes } from "../src/node-http/stream-routes.ts";
import type { CompactionReport } from "../src/node/streams/compaction.ts";
import type { TableContext } from "../src/node/tables/buckets.ts";
import type { NodeRuntime } from "../src/node/runtime/node-runtime.ts";
import { applyFault, faultStateOf, type FaultHost } from "../src/node/runtime/fault-injection.ts";
import { startInWorkerd } from "../src/node/runtime/workerd-start.ts";
import { nodeSettings } from "../src/node/settings.ts";
import { idleNodeMetrics } from "../src/node/state/store-metrics.ts";
import type { MetaLogClient } from "../src/ports/meta-log-client.ts";
import type { TierTableAnswer } from "../src/core/tiering/tier-report.ts";
import type { BucketInfo, ChangelogPageAnswer, CreateTableAnswer, FaultRequest, FaultState, NodeMetrics, NodePing, StreamNodeClient, StreamTailInfo } from "../src/ports/stream-node-client.ts";
import type { JsonValue } from "../src/core/meta/json.ts";
import { domainError } from "../src/core/errors.ts";
import { errorResponse } from "../src/http/responses.ts";
import { ViewCache } from "../src/router/view-cache.ts";
import { SqliteTabletStorage } from "./sqlite-tablet-storage.ts";

const NODE_ID_KEY = "nodeId";
/** Set while the node is crashed by fault injection: it survives an eviction, so only `heal` ends it. */
const CRASHED_KEY = "crashed";

/**
 * How long the node trusts a cached lookup of a stream it holds but has not opened since its start. Names it
 * does not hold are always looked up afresh (paths/routing.ts).
 */
const NODE_VIEW_TTL_MS = 1_000;

/** How long a stopped node keeps answering 503 before it resets itself. */
const RESET_AFTER_STOP_MS = 200;

export class StreamNode extends DurableObject<Env> {
  readonly nodeId: string;
  readonly nodeEpoch: number = Date.now();
  /** Null until start-up finished. */
  private runtime: NodeRuntime | null = null;
  private readonly meta: MetaLogClient;
  private readonly viewCache = new ViewCache({ ttlMs: NODE_VIEW_TTL_MS });
  private readonly tablets: SqliteTabletStorage;
  private readonly app: Hono;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // The name comes with requests made through getByName; an alarm wakes the object without it, so the
    // first named start records it.
    const name = ctx.id.name ?? ctx.storage.kv.get<string>(NODE_ID_KEY) ?? null;
    if (name !== null && ctx.id.name !== undefined && ctx.storage.kv.get<string>(NODE_ID_KEY) !== name) {
      ctx.storage.kv.put(NODE_ID_KEY, name);
    }
    this.nodeId = name ?? "";
    this.meta = metaLogClient(env.META_LOG);
    this.tablets = new SqliteTabletStorage(ctx.storage);
    this.app = streamRoutes(() => {
      if (this.node === null) throw new Error("node not started");
      return this.node;
    });
    this.crashed = ctx.storage.kv.get<boolean>(CRASHED_KEY) === true;
    if (name !== null && !this.crashed) void ctx.blockConcurrencyWhile(() => this.start());
  }

  /**
   * Crashed by fault injection: no heartbeat, no memory, no answer but 503 until healed. Kept in storage
   * (it outlives a restart) and read from there once per incarnation: every request asks.
   */
  private crashed: boolean;

  /** The running incarnation's context (tests reach into it through runInDurableObject). */
  get node(): TableContext | null {
    return this.runtime?.ctx ?? null;
  }

  /** The running incarnation (tests reach its WAL writer, watcher and recovery through runInDurableObject). */
  get incarnation(): NodeRuntime | null {
    return this.runtime;
  }

  override async fetch(request: Request): Promise<Response> {
    if (this.nodeId === "") return new Response("a StreamNode is addressed by name (getByName)", { status: 500 });
    if (this.crashed) return errorResponse(domainError("unavailable", `node ${this.nodeId} is crashed (fault injection); retry`));
    return this.app.fetch(request);
  }

  /** Starts the node (constructor start-up) and says who it is: the router wakes every node with it. */
  ping(): NodePing {
    return { nodeId: this.nodeId, nodeEpoch: this.nodeEpoch, started: this.runtime !== null };
  }

  /** This incarnation's counters and gauges (the Worker's GET /metrics asks every node). */
  metrics(): NodeMetrics {
    return this.runtime?.metrics() ?? idleNodeMetrics(this.nodeId, this.nodeEpoch);
  }

  /**
   * The running incarnation for an RPC about these streams, or null while start-up has not finished or the
   * node is crashed by fault injection (the caller then answers "nothing here"). RPC arguments are checked,
   * since they cross an isolate boundary untyped.
   */
  private serving(streamIds?: readonly string[]): NodeRuntime | null {
    if (streamIds !== undefined && !Array.isArray(streamIds)) throw new TypeError("streamIds must be an array");
    return this.crashed ? null : this.runtime;
  }

  /** The tails of these streams from memory (GET /admin/streams asks the owners of a page's streams). */
  tails(streamIds: readonly string[]): StreamTailInfo[] {
    return this.serving(streamIds)?.tails(streamIds) ?? [];
  }

  /** The table buckets among these streams, from memory (GET /v1/table/<name>). */
  tableBuckets(streamIds: readonly string[]): BucketInfo[] {
    return this.serving(streamIds)?.tableBuckets(streamIds) ?? [];
  }

  /** Snapshots these table buckets now, where loaded here (`mink table snapshot`). */
  async snapshotBuckets(streamIds: readonly string[]): Promise<{ streamId: string; coveredOffset: string | null; error: string | null }[]> {
    return (await this.serving(streamIds)?.snapshotBuckets(streamIds.map(String))) ?? [];
  }

  /** Removes a dropped table's bucket streams and tablets here (DELETE /v1/table/<name>). */
  async dropBuckets(streamIds: readonly string[]): Promise<number> {
    return (await this.serving(streamIds)?.dropBuckets(streamIds.map(String))) ?? 0;
  }

  /** CreateTable as the coordinator (PUT /v1/table/<name> asks the lease holder). */
  async createTable(name: string, definition: JsonValue, buckets: number): Promise<CreateTableAnswer> {
    return (await this.serving()?.createTable(String(name), definition, Number(buckets))) ?? this.notServing();
  }

  /** AddPartition as the coordinator (a write through the router to a partition value not seen before). */
  async addPartition(table: string, value: string | number): Promise<CreateTableAnswer> {
    return (await this.serving()?.addPartition(String(table), value)) ?? this.notServing();
  }

  /** A tiering round of the table as the coordinator (POST /admin/tables/<name>/tier asks the lease holder). */
  async tierTable(name: string): Promise<TierTableAnswer> {
    return (await this.serving()?.tierTable(String(name))) ?? this.notServing();
  }

  /** A page of a bucket's changelog read here as its leader (a tiering round at the coordinator asks). */
  async readBucketChangelog(table: string, partition: string | number | null, bucket: number, fromPosition: number, maxBytes: number): Promise<ChangelogPageAnswer> {
    if (partition !== null && typeof partition !== "string" && typeof partition !== "number") throw new TypeError("partition must be a string, a number or null");
    return (await this.serving()?.readBucketChangelog(String(table), partition, Number(bucket), Number(fromPosition), Number(maxBytes))) ?? this.notServing();
  }

  private notServing(): { ok: false; error: ReturnType<typeof domainError> } {
    return { ok: false, error: domainError("unavailable", `node ${this.nodeId} is not serving; retry`) };
  }

  /** The fault this node is under (GET /admin/faults). */
  fault(): FaultState {
    return faultStateOf(this.faultHost, this.runtime);
  }

  /** Fault injection for tests (src/node/runtime/fault-injection.ts). */
  async setFault(request: FaultRequest): Promise<FaultState> {
    this.runtime = await applyFault(this.faultHost, this.runtime, request, Date.now());
    return this.fault();
  }

  /** What fault injection needs of this shell: the crash flag in its storage, and a restart. */
  private get faultHost(): FaultHost {
    return {
      nodeId: this.nodeId,
      nodeEpoch: this.nodeEpoch,
      crashed: () => this.crashed,
      setCrashed: (crashed) => {
        this.crashed = crashed;
        if (crashed) this.ctx.storage.kv.put(CRASHED_KEY, true);
        else this.ctx.storage.kv.delete(CRASHED_KEY);
      },
      restartSoon: async () => {
        // A new incarnation at a new epoch: the alarm starts it even if no request comes.
        await this.ctx.storage.setAlarm(Date.now() + 2 * RESET_AFTER_STOP_MS);
        setTimeout(() => this.ctx.abort("healed after a crash"), RESET_AFTER_STOP_MS);
      },
    };
  }

  override async alarm(): Promise<void> {
    if (this.nodeId === "") {
      await this.ctx.storage.deleteAlarm();
      return;
    }
    if (this.crashed) return; // a crashed node heartbeats no more (heal wakes it)
    const beat = this.runtime === null ? "suppressed" : await this.runtime.beat();
    if (beat === "replaced") {
      // Declared dead, or a newer incarnation registered: this one must not serve again.
      this.ctx.abort("the metadata log refuses this node epoch");
      return;
    }
    await this.ctx.storage.setAlarm(Date.now() + (this.node?.settings.heartbeatMs ?? 5_000));
    if (this.runtime?.compactionDue() === true) {
      // In the background: an alarm runs only after the previous one returned, so a long compaction
      // awaited here would hold back the next heartbeats, and a busy node would be declared dead.
      this.ctx.waitUntil(
        // Logged by the runtime (compaction.failed); the next heartbeat tries again.
        this.compact().catch(() => undefined),
      );
    }
  }

  /** Compacts now (see NodeRuntime.compact). Runs from the heartbeat alarm; tests call it directly. */
  async compact(): Promise<CompactionReport | null> {
    return this.runtime === null ? null : this.runtime.compact();
  }

  private async start(): Promise<void> {
    const settings = nodeSettings(this.env);
    this.runtime = await startInWorkerd({
      nodeId: this.nodeId,
      nodeEpoch: this.nodeEpoch,
      settings,
      origin: this.env.PUBLIC_ORIGIN ?? "http://127.0.0.1:8787",
      storeSettings: this.env,
      // The tablets of the buckets it leads live in this Durable Object's SQLite: they survive its restarts.
      tablets: this.tablets,
      meta: this.meta,
      view: {
        lookup: (name, fresh) => this.viewCache.lookup((n) => this.meta.lookupStream({ name: n }), name, fresh),
        invalidate: (name) => this.viewCache.invalidate(name),
      },
      waitUntil: (work) => this.ctx.waitUntil(work),
      endSoon: (reason) => setTimeout(() => this.ctx.abort(reason), RESET_AFTER_STOP_MS),
      peers: (nodeId) => streamNodeClient(this.env.STREAM_NODE, nodeId),
    });
    await this.ctx.storage.setAlarm(Date.now() + settings.heartbeatMs);
  }
}

/** Every client method exists on StreamNode with the same parameters (checked by the compiler). */
type SameMethods = { [K in keyof StreamNodeClient]: (...args: Parameters<StreamNodeClient[K]>) => unknown };
const _streamNodeHasClientMethods = (node: StreamNode): SameMethods => node;
void _streamNodeHasClientMethods;
