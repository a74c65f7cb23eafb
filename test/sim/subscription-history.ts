// What the subscription checks read (subscription-checker.ts): every row the MetaLog's subscription book
// wrote (its links' acked and tail offsets, its generation and wake), every offer a consumer received (a
// webhook body or a claim grant), and every ack a consumer sent with its answer. Offsets are byte positions.
import { parseOffset } from "../../src/core/protocol/offsets.ts";
export interface LinkState {
  readonly path: string;
  readonly acked: number;
  readonly tail: number;
}

export interface SubscriptionRowRecord {
  readonly step: number;
  readonly id: string;
  readonly generation: number;
  /** The current wake's generation, or null when idle. */
  readonly wakeGeneration: number | null;
  readonly links: readonly LinkState[];
}

export interface OfferRecord {
  readonly step: number;
  readonly subscription: string;
  readonly via: "webhook" | "claim";
  readonly generation: number;
  readonly streams: readonly LinkState[];
}

export interface ConsumerAckRecord {
  readonly step: number;
  readonly subscription: string;
  readonly generation: number;
  readonly acks: readonly { readonly path: string; readonly offset: number }[];
  readonly answer: string;
}

/** What a subscription follows: every stream matching `pattern`, and `streams`. */
export interface FollowedSet {
  readonly id: string;
  readonly pattern: RegExp | null;
  readonly streams: readonly string[];
}

export class SubscriptionHistory {
  readonly followed: FollowedSet[] = [];
  readonly rows: SubscriptionRowRecord[] = [];
  readonly offers: OfferRecord[] = [];
  readonly acks: ConsumerAckRecord[] = [];
  /** Whether the consumers caught up after the final read (false: the check reports liveness). */
  caughtUp: boolean | null = null;
}

/** An offset's byte position (NaN for text that is no offset: the checks then fail loudly). */
export const offsetBytes = (offset: string): number => parseOffset(offset) ?? Number.NaN;
