// What a tiering round answers (POST /admin/tables/<name>/tier, `mink table tier`): shared by the round,
// the node's RPC and the admin API, so it lives in the core.
import type { DomainError } from "../errors.ts";

export interface BucketReport {
  readonly partition: string | number | null;
  readonly bucket: number;
  readonly streamId: string;
  /** Changelog record offsets the round covered: [fromOffset, toOffset). */
  readonly fromOffset: number;
  readonly toOffset: number;
  /** Null, or why the bucket was not read this round (it is read again next round). */
  readonly error: string | null;
}

export interface TierReport {
  readonly table: string;
  /** The snapshot this round committed, or the current one when there was nothing new (null: none yet). */
  readonly snapshotId: number | null;
  readonly committed: boolean;
  readonly version: number;
  readonly metadataKey: string;
  readonly rows: number;
  readonly deletes: number;
  /** A bucket had more changelog than the round's share of it: the next round goes on (at once, on a timer). */
  readonly more: boolean;
  readonly buckets: readonly BucketReport[];
}

/** The coordinator's answer to a tier request. */
export type TierTableAnswer = { readonly ok: true; readonly report: TierReport } | { readonly ok: false; readonly error: DomainError };
