// The bounds that the Worker, the router and the MetaLog enforce (docs/limits.md), read
// from the Worker's vars. Pure: the shells pass the vars in and log the warnings; a bad value falls back
// to its default rather than stopping anything.

/** The vars this module reads (a subset of the Worker's Env; every value a string, as wrangler passes them). */
export interface EdgeLimitVars {
  readonly NEGATIVE_CACHE_TTL_MS?: string;
  readonly MAX_STREAMS?: string;
  readonly MAX_META_BYTES?: string;
  readonly MAX_SUBSCRIPTIONS?: string;
  readonly MAX_SUBSCRIPTION_STREAMS?: string;
  readonly MAX_SUBSCRIPTION_BOOK_BYTES?: string;
  readonly MAX_ACKS_PER_REQUEST?: string;
  readonly MAX_DS_BODY_BYTES?: string;
  readonly WEBHOOK_MAX_REPLY_BYTES?: string;
  readonly WEBHOOK_ALLOW_LOOPBACK?: string;
}

export interface EdgeLimits {
  /** How long the router trusts a "no such stream" lookup (0: not cached). */
  readonly negativeCacheTtlMs: number;
  /** Streams registered in the metadata log at once (creates beyond it: limit_reached). */
  readonly maxStreams: number;
  /** UTF-8 bytes of stream names, configurations and table definitions in the metadata log (creates beyond it: limit_reached). */
  readonly maxMetaBytes: number;
  /** Subscriptions per deployment. */
  readonly maxSubscriptions: number;
  /** Stream links per subscription (explicit and pattern-matched). */
  readonly maxSubscriptionStreams: number;
  /** Characters (JSON) of all subscription records together. */
  readonly maxSubscriptionBookBytes: number;
  /** Acks in one callback or ack request. */
  readonly maxAcksPerRequest: number;
  /** A `__ds` request body, in bytes. */
  readonly maxDsBodyBytes: number;
  /** How much of a webhook receiver's reply is read, in bytes. */
  readonly webhookMaxReplyBytes: number;
  /** Plain-http webhooks to loopback hosts (development and the conformance suite only). */
  readonly webhookAllowLoopback: boolean;
}

export const DEFAULT_EDGE_LIMITS: EdgeLimits = {
  negativeCacheTtlMs: 1_000,
  // The MetaLog keeps stream records in its SQLite storage (10 GB per Durable Object), none in memory:
  // 10,000,000 records of about 300 B with their indexes, and the clients' strings (stored about four
  // times: the record, the name column and its index, UTF-16 for the listing's order) within 1 GiB.
  maxStreams: 10_000_000,
  maxMetaBytes: 1024 * 1024 * 1024,
  maxSubscriptions: 10_000,
  maxSubscriptionStreams: 1_000,
  maxSubscriptionBookBytes: 8 * 1024 * 1024,
  maxAcksPerRequest: 1_000,
  maxDsBodyBytes: 64 * 1024,
  webhookMaxReplyBytes: 64 * 1024,
  webhookAllowLoopback: false,
};

/** The limits, and one warning per var that was set to something unusable (its default is used). */
export function edgeLimits(vars: EdgeLimitVars): { readonly limits: EdgeLimits; readonly warnings: readonly string[] } {
  const warnings: string[] = [];
  const int = (raw: string | undefined, name: string, fallback: number, min: number): number => {
    if (raw === undefined || raw.trim() === "") return fallback;
    const value = Number(raw);
    if (Number.isSafeInteger(value) && value >= min) return value;
    warnings.push(`${name}=${raw} is not an integer of at least ${min}; using ${fallback}`);
    return fallback;
  };
  const d = DEFAULT_EDGE_LIMITS;
  return {
    limits: {
      negativeCacheTtlMs: int(vars.NEGATIVE_CACHE_TTL_MS, "NEGATIVE_CACHE_TTL_MS", d.negativeCacheTtlMs, 0),
      maxStreams: int(vars.MAX_STREAMS, "MAX_STREAMS", d.maxStreams, 1),
      maxMetaBytes: int(vars.MAX_META_BYTES, "MAX_META_BYTES", d.maxMetaBytes, 1),
      maxSubscriptions: int(vars.MAX_SUBSCRIPTIONS, "MAX_SUBSCRIPTIONS", d.maxSubscriptions, 1),
      maxSubscriptionStreams: int(vars.MAX_SUBSCRIPTION_STREAMS, "MAX_SUBSCRIPTION_STREAMS", d.maxSubscriptionStreams, 1),
      maxSubscriptionBookBytes: int(vars.MAX_SUBSCRIPTION_BOOK_BYTES, "MAX_SUBSCRIPTION_BOOK_BYTES", d.maxSubscriptionBookBytes, 1),
      maxAcksPerRequest: int(vars.MAX_ACKS_PER_REQUEST, "MAX_ACKS_PER_REQUEST", d.maxAcksPerRequest, 1),
      maxDsBodyBytes: int(vars.MAX_DS_BODY_BYTES, "MAX_DS_BODY_BYTES", d.maxDsBodyBytes, 1),
      webhookMaxReplyBytes: int(vars.WEBHOOK_MAX_REPLY_BYTES, "WEBHOOK_MAX_REPLY_BYTES", d.webhookMaxReplyBytes, 1),
      webhookAllowLoopback: vars.WEBHOOK_ALLOW_LOOPBACK === "1" || vars.WEBHOOK_ALLOW_LOOPBACK === "true",
    },
    warnings,
  };
}
