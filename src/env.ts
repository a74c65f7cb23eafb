// The Worker's bindings and settings, as declared in wrangler.toml (secrets from `wrangler secret put`).
// The namespaces are untyped: callers reach the objects through the ports (src/ports/) with the two
// functions below, never through the Durable Object classes, so nothing outside durable-objects/ imports them.
import { META_LOG_NAME, type MetaLogClient } from "./ports/meta-log-client.ts";
import type { StreamNodeClient } from "./ports/stream-node-client.ts";
import type { SettingsVars } from "./node/settings.ts";

/** The node settings (SettingsVars, src/node/settings.ts) and the Worker's own bindings and settings. */
export interface Env extends SettingsVars {
  META_LOG: DurableObjectNamespace;
  STREAM_NODE: DurableObjectNamespace;
  S3_ENDPOINT: string;
  S3_BUCKET: string;
  S3_REGION: string;
  S3_ADDRESSING: "path" | "virtual";
  S3_ACCESS_KEY_ID: string;
  S3_SECRET_ACCESS_KEY: string;
  ADMIN_TOKEN?: string;
  /** "1" enables POST/GET /admin/faults (tests only; off in wrangler.toml). */
  FAULTS_ENABLED?: string;
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
  /** Streams registered at once (default 50000); a create beyond it is 429 limit_reached. */
  MAX_STREAMS?: string;
  /** UTF-8 bytes of stream names, configurations and table definitions (default 8 MiB); beyond it 429 limit_reached. */
  MAX_META_BYTES?: string;
  /** Subscriptions per deployment (default 10000); a new one beyond it is 429 LIMIT_REACHED. */
  MAX_SUBSCRIPTIONS?: string;
  /** Stream links per subscription (default 1000). */
  MAX_SUBSCRIPTION_STREAMS?: string;
  /** Characters of all subscription records together (default 8 MiB); beyond it 429 LIMIT_REACHED. */
  MAX_SUBSCRIPTION_BOOK_BYTES?: string;
  /** Acks in one callback or ack request (default 1000); more is 413 PAYLOAD_TOO_LARGE. */
  MAX_ACKS_PER_REQUEST?: string;
  /** Largest `__ds` request body in bytes (default 65536); larger is 413 PAYLOAD_TOO_LARGE before parsing. */
  MAX_DS_BODY_BYTES?: string;
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
