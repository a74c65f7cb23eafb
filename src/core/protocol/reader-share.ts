// Admission of a live reader (long-poll at a tail, SSE response) on one node: the node's pool
// (MAX_LIVE_READERS) and each token's share of it (MAX_LIVE_READERS_PER_TOKEN), so one tenant cannot take
// every slot of a node (issue 21; docs/limits.md). Pure: the node passes in what it counts.
//
// | Rule | When                                                                       | Answer                                                        |
// | ---- | -------------------------------------------------------------------------- | ------------------------------------------------------------- |
// | RS-1 | the node already serves `maxLiveReaders` readers (anyone's)                 | 429 limit_reached {limit: MAX_LIVE_READERS, max}              |
// | RS-2 | the request carries a token id whose readers on this node reach `perToken` | 429 limit_reached {limit: MAX_LIVE_READERS_PER_TOKEN, max}    |
// | RS-3 | the request carries no token id (AUTH_MODE=open): only RS-1 applies         | admitted while the pool has room                              |
// | RS-4 | otherwise                                                                  | admitted (the caller counts it in the pool and the token's share) |
//
// The pool is checked first: when both are reached, the answer names the node's cap. A share larger than
// the pool is the pool. Both answers carry Retry-After (error table): slots free as readers end.
import { domainError, type DomainError } from "../errors.ts";
import { admitLiveReader } from "./bounds.ts";

export interface ReaderCounts {
  /** Live readers the node serves now. */
  readonly active: number;
  /** Live readers of the asking token on this node now (0 without a token). */
  readonly tokenActive: number;
  /** The asking token's id (`jti`), or null when the request carries none. */
  readonly tokenId: string | null;
}

export interface ReaderCaps {
  readonly maxLiveReaders: number;
  readonly maxLiveReadersPerToken: number;
}

export function admitReader(counts: ReaderCounts, caps: ReaderCaps): DomainError | null {
  const pool = admitLiveReader(counts.active, caps.maxLiveReaders);
  if (pool !== null) return pool;
  if (counts.tokenId === null) return null;
  const share = Math.min(caps.maxLiveReadersPerToken, caps.maxLiveReaders);
  if (counts.tokenActive < share) return null;
  return domainError("limit_reached", `this token holds ${share} live readers on this node already (MAX_LIVE_READERS_PER_TOKEN); retry later`, {
    limit: "MAX_LIVE_READERS_PER_TOKEN",
    max: share,
  });
}

/** The default share: a quarter of the node's pool, at least one (so four tenants can fill a node, not one). */
export function defaultReaderShare(maxLiveReaders: number): number {
  return Math.max(1, Math.floor(maxLiveReaders / 4));
}
