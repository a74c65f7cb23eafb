// The bounds of the subscription API (docs/limits.md), as pure checks the Worker's routes
// and the MetaLog's subscription book run before they change anything. Each rejection names the setting
// and its max, so a client (and an operator reading a log line) knows which bound it met.
import { fail, ok, subscriptionError, type Checked, type SubscriptionError } from "./errors.ts";

export interface SubscriptionLimits {
  /** MAX_SUBSCRIPTIONS: subscriptions per deployment. */
  readonly maxSubscriptions: number;
  /** MAX_SUBSCRIPTION_STREAMS: stream links per subscription (explicit and pattern-matched). */
  readonly maxSubscriptionStreams: number;
}

/**
 * A record is one SQLite row of the MetaLog, and Durable Object SQLite refuses values over 2 MB. Its
 * paths appear up to three times (configuration, links, the wake's snapshot): at the default 1,000 links
 * of names up to 1,024 characters a record can pass that, so the book refuses to write one over this.
 */
export const MAX_SUBSCRIPTION_RECORD_CHARS = 1_500_000;

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
