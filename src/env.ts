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
}
