// Builds the object store a Worker or Durable Object uses from its settings (wrangler.toml vars + secrets).
import { S3Store } from "./s3-store.ts";

export interface ObjectStoreSettings {
  S3_ENDPOINT: string;
  S3_BUCKET: string;
  S3_REGION: string;
  S3_ADDRESSING?: string;
  S3_ACCESS_KEY_ID?: string;
  S3_SECRET_ACCESS_KEY?: string;
}

export function objectStoreFromSettings(settings: ObjectStoreSettings): S3Store {
  const missing = (["S3_ENDPOINT", "S3_BUCKET", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY"] as const).filter(
    (name) => (settings[name] ?? "") === "",
  );
  if (missing.length > 0) throw new Error(`object store not configured: set ${missing.join(", ")}`);
  return new S3Store({
    endpoint: settings.S3_ENDPOINT,
    bucket: settings.S3_BUCKET,
    region: settings.S3_REGION || "auto",
    accessKeyId: settings.S3_ACCESS_KEY_ID ?? "",
    secretAccessKey: settings.S3_SECRET_ACCESS_KEY ?? "",
    addressing: settings.S3_ADDRESSING === "virtual" ? "virtual" : "path",
  });
}
