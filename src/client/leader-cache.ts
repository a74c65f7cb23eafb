// What the client knows of one table: its definition (to split rows like the server) and each bucket's
// leader. Loaded by describing the table, corrected by the facts of a `not_leader` answer, and loaded
// again when an answer names no leader (concurrent reloads share one request).
import type { TableDefinition } from "../core/tables/definition.ts";
import type { BucketInfo, LeaderFacts, TableDescription } from "./wire.ts";

export interface BucketLeader {
  readonly leader: string | null;
  readonly leaderAddr: string | null;
  readonly leaderEpoch: number;
}

export class LeaderCache {
  readonly #describe: () => Promise<TableDescription>;
  #definition: TableDefinition | null = null;
  #leaders: BucketLeader[] = [];
  #loading: Promise<void> | null = null;

  constructor(describe: () => Promise<TableDescription>) {
    this.#describe = describe;
  }

  async definition(): Promise<TableDefinition> {
    if (this.#definition === null) await this.reload();
    return this.#definition!;
  }

  async leaderOf(bucket: number): Promise<BucketLeader> {
    if (this.#definition === null) await this.reload();
    const leader = this.#leaders[bucket];
    if (leader === undefined) throw new RangeError(`bucket ${bucket} is not a bucket of this table`);
    return leader;
  }

  /** Takes a fresh description (from describe, create, or a reload). */
  remember(description: TableDescription): void {
    this.#definition = description.definition;
    this.#leaders = description.buckets.map(leaderOfInfo);
  }

  forget(): void {
    this.#definition = null;
    this.#leaders = [];
  }

  /**
   * A `not_leader` answer's facts. True when they change where the bucket's next request goes; facts at a
   * lower leader epoch than the cached one come from a node whose view lags and are ignored.
   */
  learn(bucket: number, facts: LeaderFacts): boolean {
    const current = this.#leaders[bucket];
    if (current === undefined || facts.leaderEpoch < current.leaderEpoch) return false;
    if (facts.leaderEpoch === current.leaderEpoch && facts.leaderAddr === current.leaderAddr) return false;
    this.#leaders[bucket] = { leader: facts.leader, leaderAddr: facts.leaderAddr, leaderEpoch: facts.leaderEpoch };
    return true;
  }

  /** Describes the table again; true when that changed where `bucket`'s next request goes. */
  async reloadChanged(bucket: number): Promise<boolean> {
    const before = this.#leaders[bucket];
    await this.reload();
    const after = this.#leaders[bucket];
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

function leaderOfInfo(info: BucketInfo): BucketLeader {
  return { leader: info.leader, leaderAddr: info.leaderAddr, leaderEpoch: info.leaderEpoch };
}
