// The Worker's bindings and settings, as declared in wrangler.toml (secrets from `wrangler secret put`).
// The namespaces are untyped: callers reach the objects through the ports (src/ports/) with the two
// functions below, never through the Durable Object classes, so nothing outside durable-objects/ imports them.
import { META_LOG_NAME, type MetaLogClient } from "./ports/meta-log-client.ts";
import type { StreamNodeClient } from "./ports/stream-node-client.ts";

export interface Env {
  META_LOG: DurableObjectNamespace;
  STREAM_NODE: DurableObjectNamespace;
  S3_ENDPOINT: string;
  S3_BUCKET: string;
  S3_REGION: string;
  S3_ADDRESSING: "path" | "virtual";
  S3_ACCESS_KEY_ID: string;
  S3_SECRET_ACCESS_KEY: string;
  ADMIN_TOKEN?: string;
  /** How long a long-poll waits at the tail (ms; default 30000). */
  LONG_POLL_TIMEOUT_MS?: string;
  /** A node silent this long is dead; the coordinator lease lasts this long (default 30000). */
  LEASE_TTL_MS?: string;
  /** How often a node heartbeats (default 5000). */
  HEARTBEAT_MS?: string;
  /** How often the lease holder runs the coordinator's tick (default 5000). */
  COORDINATOR_TICK_MS?: string;
  /** "1" enables POST/GET /admin/faults (tests only; off in wrangler.toml). */
  FAULTS_ENABLED?: string;
  /** Largest request body in bytes (default 8 MiB); larger gets 413. */
  MAX_BODY_BYTES?: string;
  /** A node compacts its WAL after this many WAL objects (default 256)... */
  COMPACT_AFTER_WAL_OBJECTS?: string;
  /** ... or this many WAL bytes (default 32 MiB). */
  COMPACT_AFTER_WAL_BYTES?: string;
  // Bounds (docs/limits.md): node
  /** Long-poll and SSE readers per node (default 10000); over it a live read gets 429 with Retry-After. */
  MAX_LIVE_READERS?: string;
  /** Producer ids per stream (default 1000); a new one over it gets 429 unless idle ones can be pruned. */
  MAX_PRODUCERS_PER_STREAM?: string;
  /** A producer idle this long (ms; default 86400000, one day) may be pruned for a new one. */
  PRODUCER_IDLE_MS?: string;
  /** Longest protocol header value (bytes; default 1024); longer gets 400. */
  MAX_HEADER_VALUE_BYTES?: string;
  /** Largest Producer-Epoch raise per request (default 1000000; also the largest first epoch); more gets 400. */
  MAX_PRODUCER_EPOCH_STEP?: string;
  /** Longest fork chain (default 16); a fork of a stream that deep gets 400. */
  MAX_FORK_DEPTH?: string;
  /** Append bytes waiting for the WAL per node (default 64 MiB); more gets 503 with Retry-After. */
  MAX_WAL_QUEUE_BYTES?: string;
  /** How long one WAL object may take to land, retries included (ms; default 10000); then 503. */
  WAL_BATCH_DEADLINE_MS?: string;
  /** The node ids of the deployment, comma-separated. */
  NODE_IDS?: string;
  /** The node this Worker acts for (R1 and R7 serve there); default the first of NODE_IDS. */
  LOCAL_NODE?: string;
  /** "redirect" (307 to the owner's address, the default) or "forward" (the Worker forwards to the owner). */
  ROUTER_MODE?: string;
  /** How long the router trusts a cached lookup (ms; default 1000). */
  VIEW_CACHE_TTL_MS?: string;
  // Access (docs/access.md).
  /** "token" (every stream request needs a signed bearer token; what wrangler.toml deploys) or "open". */
  AUTH_MODE?: string;
  /** The HS256 key access tokens are signed with (a secret, at least 32 characters). */
  TOKEN_SECRET?: string;
  /** Live access tokens the MetaLog's register holds at most (default 100000). */
  MAX_TOKENS?: string;
  /** How long an entry trusts its copy of the revoked token ids (ms; default 1000). */
  REVOCATION_CACHE_MS?: string;
  /** The public origin nodes advertise as `<origin>/n/<node-id>` (default http://127.0.0.1:8787). */
  PUBLIC_ORIGIN?: string;
  // Bounds: Worker and MetaLog. Read by src/core/edge-limits.ts; docs/limits.md.
  /** How long the router trusts a "no such stream" lookup (ms; default 1000; 0 = not cached). */
  NEGATIVE_CACHE_TTL_MS?: string;
  /** Streams registered at once (default 100000); a create beyond it is 429 limit_reached. */
  MAX_STREAMS?: string;
  /** Subscriptions per deployment (default 10000); a new one beyond it is 429 LIMIT_REACHED. */
  MAX_SUBSCRIPTIONS?: string;
  /** Stream links per subscription (default 1000). */
  MAX_SUBSCRIPTION_STREAMS?: string;
  /** Acks in one callback or ack request (default 1000); more is 413 PAYLOAD_TOO_LARGE. */
  MAX_ACKS_PER_REQUEST?: string;
  /** Largest `__ds` request body in bytes (default 65536); larger is 413 PAYLOAD_TOO_LARGE before parsing. */
  MAX_DS_BODY_BYTES?: string;
  /** How much of a webhook reply is read (bytes; default 65536); the rest is dropped. */
  WEBHOOK_MAX_REPLY_BYTES?: string;
  /** "1" allows plain-http webhooks to loopback hosts (development and conformance only; off in wrangler.toml). */
  WEBHOOK_ALLOW_LOOPBACK?: string;
}

/**
 * The MetaLog of a deployment through its namespace. RPC stub types cannot carry method generics, and
 * mapping the recursive JSON config type through them is too deep for the compiler, so the stub is seen
 * through the client interface (the Durable Object is checked to have every method).
 */
export function metaLogClient(namespace: DurableObjectNamespace, name = META_LOG_NAME): MetaLogClient {
  return namespace.getByName(name) as unknown as MetaLogClient;
}

/** The node named `nodeId` through its namespace. */
export function streamNodeClient(namespace: DurableObjectNamespace, nodeId: string): StreamNodeClient {
  return namespace.getByName(nodeId) as unknown as StreamNodeClient;
}
