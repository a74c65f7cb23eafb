// One stream's record in the metadata state: its name, owner, epoch, ownership and configuration. Kept
// apart from state.ts so the stream table (stream-table.ts) and the state can both name it.
import type { JsonObject } from "./json.ts";

/** A stream re-led away from a dead incarnation: it may open only after that incarnation's takeover. */
interface OrphanOf {
  readonly node: string;
  readonly nodeEpoch: number;
}

/**
 * Ownership of a stream (not its data's `eof`):
 * - `unplaced`: created, no owner chosen yet;
 * - `placed`: owner chosen, not opened at `epoch` yet;
 * - `opened`: owner serving at `epoch`;
 * - `closed`: nobody serving; closed at `epoch` (== `closedAtEpoch`) by `owner`, the last owner.
 */
export type Ownership = "unplaced" | "placed" | "opened" | "closed";

export type StreamConfig = JsonObject;

export interface StreamRecord {
  readonly id: string;
  readonly name: string;
  /** Null only while `unplaced`. */
  readonly owner: string | null;
  /** Bumped by every open; a writer holding a lower epoch is fenced. */
  readonly epoch: number;
  readonly ownership: Ownership;
  /** Present exactly when `ownership` is `closed`; equals `epoch`. */
  readonly closedAtEpoch?: number;
  readonly config: StreamConfig;
  /** Set by ReassignStreams for a stream a dead incarnation had opened; cleared by the next open. */
  readonly orphanOf?: OrphanOf;
}
