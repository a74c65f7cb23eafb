// Builds S3Store instances for the suites that run against real S3 APIs: the embedded endpoint (started by
// the node project's globalSetup) and an outside server named by MINK_TEST_S3_* (radosgw in CI).
import { inject } from "vitest";
import { S3Store, type S3StoreConfig } from "../../src/storage/s3-store.ts";

export type S3Target = Omit<S3StoreConfig, "retry" | "sleep" | "random" | "fetch">;

export function embeddedS3Target(): S3Target {
  const endpoint = inject("embeddedS3");
  return {
    endpoint: endpoint.url,
    bucket: endpoint.bucket,
    region: "auto",
    accessKeyId: endpoint.accessKeyId,
    secretAccessKey: endpoint.secretAccessKey,
  };
}

/** The outside S3 server from the environment, or undefined when none is configured. */
export function externalS3Target(env: NodeJS.ProcessEnv = process.env): S3Target | undefined {
  const endpoint = env.MINK_TEST_S3_ENDPOINT;
  if (endpoint === undefined || endpoint === "") return undefined;
  return {
    endpoint,
    bucket: env.MINK_TEST_S3_BUCKET ?? "mink-test",
    region: env.MINK_TEST_S3_REGION ?? "us-east-1",
    accessKeyId: env.MINK_TEST_S3_ACCESS_KEY_ID ?? "",
    secretAccessKey: env.MINK_TEST_S3_SECRET_ACCESS_KEY ?? "",
  };
}

/** Fails loudly when the s3 project runs without a server: a suite that silently skips proves nothing. */
export function requireExternalS3Target(): S3Target {
  const target = externalS3Target();
  if (target === undefined) {
    throw new Error("MINK_TEST_S3_ENDPOINT is not set: start radosgw with scripts/radosgw/start.sh and source its env file");
  }
  return target;
}

export function s3Store(target: S3Target, overrides: Partial<S3StoreConfig> = {}): S3Store {
  return new S3Store({ ...target, ...overrides });
}
