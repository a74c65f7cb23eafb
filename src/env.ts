// The Worker's bindings and settings, as declared in wrangler.toml (secrets from `wrangler secret put`).
import type { MetaLog } from "../durable-objects/meta-log.ts";
import type { StreamNode } from "../durable-objects/stream-node.ts";

export interface Env {
  META_LOG: DurableObjectNamespace<MetaLog>;
  STREAM_NODE: DurableObjectNamespace<StreamNode>;
  S3_ENDPOINT: string;
  S3_BUCKET: string;
  S3_REGION: string;
  S3_ADDRESSING: "path" | "virtual";
  S3_ACCESS_KEY_ID: string;
  S3_SECRET_ACCESS_KEY: string;
  ADMIN_TOKEN?: string;
  /** How long a long-poll waits at the tail (ms; default 30000). */
  LONG_POLL_TIMEOUT_MS?: string;
  /** Largest request body in bytes (default 8 MiB); larger gets 413. */
  MAX_BODY_BYTES?: string;
  /** A node compacts its WAL after this many WAL objects (default 256)... */
  COMPACT_AFTER_WAL_OBJECTS?: string;
  /** ... or this many WAL bytes (default 32 MiB). */
  COMPACT_AFTER_WAL_BYTES?: string;
  /** The node ids of the deployment, comma-separated. */
  NODE_IDS?: string;
  /** The node this Worker acts for (R1 and R7 serve there); default the first of NODE_IDS. */
  LOCAL_NODE?: string;
  /** "redirect" (307 to the owner's address, the default) or "forward" (the Worker forwards to the owner). */
  ROUTER_MODE?: string;
  /** How long the router trusts a cached lookup (ms; default 1000). */
  VIEW_CACHE_TTL_MS?: string;
  /** The public origin nodes advertise as `<origin>/n/<node-id>` (default http://127.0.0.1:8787). */
  PUBLIC_ORIGIN?: string;
}
