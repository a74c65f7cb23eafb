// What the client knows of one table: its definition (to split rows like the server) and each bucket's
// leader, by bucket id (partition key and number). Loaded by describing the table, corrected by the facts
// of a `not_leader` answer, and loaded again when an answer names no leader or a partition is not known
// yet (concurrent reloads share one request).
import { encodePartition } from "../core/tables/bucketing.ts";
import type { TableDefinition } from "../core/tables/definition.ts";
import { bucketIdText, type BucketId } from "../core/tables/requests.ts";
import type { BucketInfo, LeaderFacts, TableDescription } from "./wire.ts";

export interface BucketLeader {
  readonly leader: string | null;
  readonly leaderAddr: string | null;
  readonly leaderEpoch: number;
}

export class LeaderCache {
  readonly #describe: () => Promise<TableDescription>;
  #definition: TableDefinition | null = null;
  #leaders = new Map<string, BucketLeader>();
  #loading: Promise<void> | null = null;

  constructor(describe: () => Promise<TableDescription>) {
    this.#describe = describe;
  }

  async definition(): Promise<TableDefinition> {
    if (this.#definition === null) await this.reload();
    return this.#definition!;
  }

  /** Whether the table has this bucket as last described (a partition added since is not known yet). */
  has(id: BucketId): boolean {
    return this.#leaders.has(bucketIdText(id));
  }

  async leaderOf(id: BucketId): Promise<BucketLeader> {
    if (this.#definition === null) await this.reload();
    const leader = this.#leaders.get(bucketIdText(id));
    if (leader === undefined) throw new RangeError(`bucket ${bucketIdText(id)} is not a bucket of this table`);
    return leader;
  }

  /** Takes a fresh description (from describe, create, or a reload). */
  remember(description: TableDescription): void {
    this.#definition = description.definition;
    this.#leaders = new Map(description.buckets.map((info) => [bucketIdText(idOfInfo(info)), leaderOfInfo(info)] as const));
  }

  forget(): void {
    this.#definition = null;
    this.#leaders = new Map();
  }

  /**
   * A `not_leader` answer's facts. True when they change where the bucket's next request goes; facts at a
   * lower leader epoch than the cached one come from a node whose view lags and are ignored.
   */
  learn(id: BucketId, facts: LeaderFacts): boolean {
    const key = bucketIdText(id);
    const current = this.#leaders.get(key);
    if (current === undefined || facts.leaderEpoch < current.leaderEpoch) return false;
    if (facts.leaderEpoch === current.leaderEpoch && facts.leaderAddr === current.leaderAddr) return false;
    this.#leaders.set(key, { leader: facts.leader, leaderAddr: facts.leaderAddr, leaderEpoch: facts.leaderEpoch });
    return true;
  }

  /** Describes the table again; true when that changed where the bucket's next request goes. */
  async reloadChanged(id: BucketId): Promise<boolean> {
    const key = bucketIdText(id);
    const before = this.#leaders.get(key);
    await this.reload();
    const after = this.#leaders.get(key);
    return before?.leaderAddr !== after?.leaderAddr || before?.leaderEpoch !== after?.leaderEpoch;
  }

  async reload(): Promise<void> {
    this.#loading ??= this.#describe()
      .then((description) => this.remember(description))
      .finally(() => {
        this.#loading = null;
      });
    await this.#loading;
  }
}

function idOfInfo(info: BucketInfo): BucketId {
  return { partition: info.partition === null ? null : encodePartition(info.partition), bucket: info.bucket };
}

function leaderOfInfo(info: BucketInfo): BucketLeader {
  return { leader: info.leader, leaderAddr: info.leaderAddr, leaderEpoch: info.leaderEpoch };
}
