// The stream a bucket is (docs/tables.md, "Why a bucket is a stream"): a JSON stream with no expiry,
// one changelog record per message. The coordinator records this configuration with CreateTable and the
// leader creates the stream with the same request at its first use, so the two always agree.
import type { CreateRequest, StreamConfig } from "../protocol/stream-config.ts";
import { newStreamConfig } from "../protocol/stream-config.ts";

/** The create request a leader opens a new bucket stream with. */
export function bucketStreamRequest(): CreateRequest {
  return { contentType: "application/json", expiry: { ttlSeconds: null, expiresAtMs: null }, closed: false, fork: null };
}

/** The configuration CreateTable records for every bucket stream. */
export function bucketStreamConfig(): StreamConfig {
  return newStreamConfig(bucketStreamRequest(), null);
}
