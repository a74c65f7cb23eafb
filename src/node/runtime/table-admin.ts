// The table calls the router and the CLI make of a node (docs/tables.md): CreateTable and AddPartition at
// this node's coordinator epoch, snapshots taken now (`mink table snapshot`), the buckets' sizes from
// memory, and a dropped table's buckets removed here.
import type { Coordinator } from "../../core/meta/commands.ts";
import { domainError } from "../../core/errors.ts";
import type { JsonObject, JsonValue } from "../../core/meta/json.ts";
import { decodePartitionKey, parseBucketStreamName } from "../../core/tables/bucketing.ts";
import { bucketStreamConfig } from "../../core/tables/bucket-stream.ts";
import { formatOffset } from "../../core/protocol/offsets.ts";
import type { MetaLogClient } from "../../ports/meta-log-client.ts";
import type { BucketInfo, ChangelogPageAnswer, CreateTableAnswer, StreamTailInfo } from "../../ports/stream-node-client.ts";
import type { TierTableAnswer } from "../../core/tiering/tier-report.ts";
import { readBucketChangelog } from "../tables/changelog-pages.ts";
import { tierTableHere, type ChangelogPeers } from "../coordinator/tiering.ts";
import { isGone } from "../state/stream-registry.ts";
import { removeStream } from "../streams/lifecycle.ts";
import type { LoadedBucket, TableContext } from "../tables/buckets.ts";
import { leadBucket } from "../tables/leader.ts";
import { snapshotBucket } from "../tables/snapshotter.ts";
import type { CoordinatorRole } from "../coordinator/role.ts";

export class TableAdmin {
  constructor(
    private readonly ctx: TableContext,
    private readonly meta: Pick<MetaLogClient, "createTable" | "addPartition" | "lookupTable" | "propose">,
    private readonly coordinator: CoordinatorRole,
    /** The heartbeat's coordinator step: asks for the lease when this incarnation holds none. */
    private readonly coordinatorStep: () => Promise<void>,
    /** Where tiered tables go and how other leaders are read (docs/tiering.md); null: this node cannot tier. */
    private readonly tiering: { readonly storeUri: string; readonly peers: ChangelogPeers | null } | null,
  ) {}

  /** A tiering round of the table at this node's coordinator epoch: `fenced` (naming the holder) unless it holds the lease. */
  async tierTable(name: string): Promise<TierTableAnswer> {
    if (this.tiering === null) return { ok: false, error: domainError("unavailable", "this node has no tiering location") };
    const { coordinatorEpoch } = await this.asCoordinator();
    return tierTableHere(this.ctx, { meta: this.meta, coordinatorEpoch, ...this.tiering }, name);
  }

  /** A page of a bucket's changelog, read here as its leader (a tiering round at the coordinator asks). */
  async readBucketChangelog(table: string, partition: string | number | null, bucket: number, fromPosition: number, maxBytes: number): Promise<ChangelogPageAnswer> {
    const page = await readBucketChangelog(this.ctx, { table, partition, bucket }, fromPosition, maxBytes);
    return page.ok ? { ok: true, ...page.value } : page;
  }

  /** Snapshots the loaded buckets among these streams now (`mink table snapshot`): the refs committed. */
  async snapshotBuckets(streamIds: readonly string[]): Promise<{ streamId: string; coveredOffset: string | null; error: string | null }[]> {
    const results = [];
    for (const streamId of new Set(streamIds)) {
      const bucket = await this.bucketHere(streamId);
      if (typeof bucket === "string") {
        results.push({ streamId, coveredOffset: null, error: bucket });
        continue;
      }
      const ref = await snapshotBucket(this.ctx, bucket);
      results.push({ streamId, coveredOffset: ref.ok ? formatOffset(ref.value.coveredPosition) : null, error: ref.ok ? null : ref.error.code });
    }
    return results;
  }

  /** The bucket of this stream, loaded here (as a request for it would), or why not. */
  private async bucketHere(streamId: string): Promise<LoadedBucket | string> {
    const stream = this.ctx.registry.get(streamId);
    const address = stream === undefined ? null : parseBucketStreamName(stream.name);
    if (stream === undefined || address === null) return "not_loaded";
    const partitionValue = address.partition === null ? null : decodePartitionKey(address.partition);
    const led = await leadBucket(this.ctx, { ...address, partitionValue, pathAndQuery: "" });
    if ("kind" in led) return led.kind === "error" ? led.error.code : "not_leader";
    return led.bucket.kind === "primary-key" ? led.bucket : "log_table";
  }

  /** The table buckets among these tails, from memory (no open, no load): tail and tablet size. */
  tableBuckets(tails: readonly StreamTailInfo[]): BucketInfo[] {
    return tails.map(({ streamId, offset }) => {
      const stream = this.ctx.registry.get(streamId);
      const bucket = stream === undefined ? undefined : this.ctx.tables.current(stream);
      const rows = bucket === undefined ? null : bucket.kind === "log" ? bucket.state.tablet.appliedOffset : bucket.tablet.count();
      return { streamId, nextOffset: offset, rows, records: bucket === undefined ? null : bucket.state.tablet.appliedOffset };
    });
  }

  /**
   * A dropped table's buckets led here (DELETE /v1/table/<name> asks every leader before DropTable): each
   * bucket stream removed as a DELETE would (a WAL record, DeleteStream, memory) and its tablet dropped.
   */
  async dropBuckets(streamIds: readonly string[]): Promise<number> {
    let dropped = 0;
    for (const streamId of new Set(streamIds)) {
      const stream = this.ctx.registry.get(streamId);
      if (stream !== undefined && !isGone(stream)) {
        await this.ctx.locks.run(`name:${stream.name}`, () => removeStream(this.ctx, stream));
        dropped++;
      }
      this.ctx.tables.forget(streamId);
      this.ctx.tables.storage.open(streamId).drop();
    }
    return dropped;
  }

  /** CreateTable at this node's coordinator epoch (docs/tables.md): refused as `fenced` unless it holds the lease. */
  async createTable(name: string, definition: JsonValue, buckets: number): Promise<CreateTableAnswer> {
    const coordinator = await this.asCoordinator();
    const result = await this.meta.createTable(coordinator, name, definition, buckets, bucketStreamConfig() as unknown as JsonObject);
    return result.ok ? { ok: true, created: result.changed } : { ok: false, error: result.error };
  }

  /** AddPartition at this node's coordinator epoch (docs/tables.md, table AP), as createTable. */
  async addPartition(table: string, value: string | number): Promise<CreateTableAnswer> {
    const coordinator = await this.asCoordinator();
    const result = await this.meta.addPartition(coordinator, table, value, bucketStreamConfig() as unknown as JsonObject);
    return result.ok ? { ok: true, created: result.changed } : { ok: false, error: result.error };
  }

  private async asCoordinator(): Promise<Coordinator> {
    // Not the coordinator as far as this incarnation knows: ask for the lease now (a fresh deployment has
    // none until the first heartbeats), rather than refuse a create that the next heartbeat would take.
    if (this.coordinator.coordinatorEpoch === null) await this.coordinatorStep();
    return { nodeId: this.ctx.nodeId, nodeEpoch: this.ctx.nodeEpoch, coordinatorEpoch: this.coordinator.coordinatorEpoch ?? 0 };
  }
}
