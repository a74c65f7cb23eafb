// The bounds of the subscription API (docs/limits.md), as pure checks the Worker's routes
// and the MetaLog's subscription book run before they change anything. Each rejection names the setting
// and its max, so a client (and an operator reading a log line) knows which bound it met.
import { utf8Length } from "../tables/checksum.ts";
import { fail, ok, subscriptionError, type Checked, type SubscriptionError } from "./errors.ts";

export interface SubscriptionLimits {
  /** MAX_SUBSCRIPTIONS: subscriptions per deployment. */
  readonly maxSubscriptions: number;
  /** MAX_SUBSCRIPTION_STREAMS: stream links per subscription (explicit and pattern-matched). */
  readonly maxSubscriptionStreams: number;
  /** MAX_SUBSCRIPTION_BOOK_BYTES: UTF-8 bytes of every record's JSON together (the MetaLog holds them all parsed). */
  readonly maxSubscriptionBookBytes: number;
}

/**
 * A record is one SQLite row of the MetaLog, rewritten whole on every change (each followed append among
 * them), and held parsed in memory. Its paths appear up to three times (configuration, links, the wake's
 * snapshot): at the default 1,000 links of names up to 1,024 characters a record could reach 3 MB, so the
 * book refuses to write one over this (256 KiB: 1,000 links of names up to about 40 characters, or fewer
 * links of longer names), which bounds one rewrite (docs/limits.md, "Memory budgets").
 */
export const MAX_SUBSCRIPTION_RECORD_CHARS = 256 * 1024;

/** MAX_SUBSCRIPTIONS: a new subscription when `count` exist is limit_reached (a DELETE frees one). */
export function checkSubscriptionCount(count: number, max: number): SubscriptionError | null {
  if (count < max) return null;
  return subscriptionError("limit_reached", `this deployment holds ${max} subscriptions, its maximum; delete one first`, {
    limit: "MAX_SUBSCRIPTIONS",
    max,
  });
}

/** MAX_SUBSCRIPTION_STREAMS for a PUT: more explicit streams than a subscription may link is too_large. */
export function checkConfigStreams(streams: readonly string[], max: number): Checked<readonly string[]> {
  if (streams.length <= max) return ok(streams);
  return fail("too_large", `a subscription links at most ${max} streams`, { limit: "MAX_SUBSCRIPTION_STREAMS", max });
}

/**
 * MAX_SUBSCRIPTION_STREAMS for `POST .../streams`: the links a record (its `links`) would have after adding `paths`.
 * Over the bound is limit_reached (removing explicit streams frees links); nothing is added.
 */
export function checkAddedLinks(
  links: readonly { readonly path: string }[],
  paths: readonly string[],
  max: number,
): SubscriptionError | null {
  const linked = new Set(links.map((l) => l.path));
  const added = new Set(paths.filter((p) => !linked.has(p))).size;
  if (linked.size + added <= max) return null;
  return subscriptionError("limit_reached", `a subscription links at most ${max} streams; remove some first`, {
    limit: "MAX_SUBSCRIPTION_STREAMS",
    max,
  });
}

/** A record whose JSON is over MAX_SUBSCRIPTION_RECORD_CHARS is never written: the request is too_large. */
export function checkRecordSize(serializedChars: number): SubscriptionError | null {
  if (serializedChars <= MAX_SUBSCRIPTION_RECORD_CHARS) return null;
  return subscriptionError("too_large", "the subscription record would be over the metadata log's row bound", {
    limit: "subscription record",
    max: MAX_SUBSCRIPTION_RECORD_CHARS,
  });
}

/**
 * MAX_SUBSCRIPTION_BOOK_BYTES: a record that grows from `oldBytes` to `newBytes` when the book holds
 * `heldBytes` (the old record among them). A change that does not grow a record is always taken (acks,
 * removals, a smaller wake); growth past the bound is limit_reached (deleting subscriptions or removing
 * streams frees bytes).
 */
export function checkBookBytes(heldBytes: number, oldBytes: number, newBytes: number, max: number): SubscriptionError | null {
  if (newBytes <= oldBytes || heldBytes - oldBytes + newBytes <= max) return null;
  return subscriptionError("limit_reached", `the subscriptions of this deployment hold ${max} bytes, their maximum; delete some first`, {
    limit: "MAX_SUBSCRIPTION_BOOK_BYTES",
    max,
  });
}

/**
 * A changed record whose JSON grows from `oldBytes` to `newBytes` (`newChars` characters): over the row bound
 * only when it grows. A record written under an earlier, larger bound (it was 1.5 MB) still takes the acks,
 * removals and lease steps that do not grow it; its row stays under SQLite's 2 MB, as it was.
 */
export function checkRecordGrowth(oldBytes: number, newBytes: number, newChars: number): SubscriptionError | null {
  return newBytes <= oldBytes ? null : checkRecordSize(newChars);
}

/** What a record's JSON counts toward MAX_SUBSCRIPTION_BOOK_BYTES: its UTF-8 bytes (at least V8's bytes for it). */
export function recordBytes(serialized: string): number {
  return utf8Length(serialized);
}
