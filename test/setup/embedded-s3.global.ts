// vitest globalSetup for the node project: one embedded S3 endpoint (Miniflare R2, in memory, any free
// port) for the whole run. Test files reach it with `inject("embeddedS3")` and write under their own random
// prefixes, so they can share the bucket.
import type { TestProject } from "vitest/node";
import { startEmbeddedS3 } from "../../scripts/embedded-s3.ts";

export interface EmbeddedS3Endpoint {
  /** `http://127.0.0.1:<port>`, path-style: `<url>/<bucket>/<key>`. */
  url: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    embeddedS3: EmbeddedS3Endpoint;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const s3 = await startEmbeddedS3({ port: 0 });
  project.provide("embeddedS3", {
    url: s3.url,
    bucket: s3.bucket,
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
  });
  return async () => {
    await s3.stop();
  };
}
