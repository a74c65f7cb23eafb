// Starts mink's embedded S3 endpoint (src/storage/s3-endpoint/worker.ts) under Miniflare on a real
// 127.0.0.1 port, over a local R2 bucket kept in memory or in a directory.
//
//   npx tsx scripts/embedded-s3.ts [--port 9000] [--persist .mink/s3] [--bucket mink] [--latency-ms 30] [--jitter-ms 5]
//
// Programmatic use (tests, benchmarks): `const s3 = await startEmbeddedS3({ port: 0 }); ...; await s3.stop()`.
// `latencyMs` (and `jitterMs`) make every request wait that long before it is handled, R2's round trip
// instead of loopback's (src/storage/s3-endpoint/latency.ts); `npm run dev` takes them from
// MINK_S3_LATENCY_MS and MINK_S3_LATENCY_JITTER_MS (s3LatencyFromEnv).
// The endpoint checks only that signed requests name `accessKeyId`; it does not verify signatures (see the
// worker's header comment), so `secretAccessKey` is a placeholder any SigV4 client can sign with.

import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { Miniflare } from "miniflare";

export interface EmbeddedS3Options {
  /** 0 (the default) picks any free port. */
  port?: number;
  /** Where the R2 bucket lives on disk; undefined keeps it in memory, gone on stop. */
  persistDir?: string;
  /** The bucket name clients address (default "mink"). */
  bucket?: string;
  /** Milliseconds every request waits before it is handled, one round trip to R2 (default 0: none). */
  latencyMs?: number;
  /** A uniform draw from [0, jitterMs) milliseconds added to each request's wait (default 0: none). */
  jitterMs?: number;
}

/** The delay an embedded endpoint adds to every request. */
export interface S3Latency {
  latencyMs: number;
  jitterMs: number;
}

export interface EmbeddedS3 {
  /** `http://127.0.0.1:<port>`: use path-style addressing, `<url>/<bucket>/<key>`. */
  url: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  stop(): Promise<void>;
}

/** The Worker's S3_* vars that point it at this endpoint (path-style, region "auto"). */
export function embeddedS3Vars(s3: EmbeddedS3): Record<string, string> {
  return {
    S3_ENDPOINT: s3.url,
    S3_BUCKET: s3.bucket,
    S3_REGION: "auto",
    S3_ADDRESSING: "path",
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
  };
}

export const EMBEDDED_S3_ACCESS_KEY_ID = "mink-dev";
export const EMBEDDED_S3_SECRET_ACCESS_KEY = "mink-dev-secret";
const DEFAULT_BUCKET = "mink";
const WORKER_ENTRY = fileURLToPath(new URL("../src/storage/s3-endpoint/worker.ts", import.meta.url));
/** workerd 2026-04-26 refuses compatibility dates after 2026-05-03 (the same pin as wrangler.toml's compatibility_date). */
const COMPATIBILITY_DATE = "2026-04-26";

/** The most a latency or a jitter may be: past a minute it is a typo, not a round trip. */
const MAX_LATENCY_MS = 60_000;

function latencyRule(name: string): string {
  return `${name} must be a whole number of milliseconds from 0 to ${MAX_LATENCY_MS}`;
}

function isLatencyMs(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0 && value <= MAX_LATENCY_MS;
}

/** `value` when it is a whole number of milliseconds from 0 to 60,000; else an error naming `name`. */
export function checkLatencyMs(name: string, value: number): number {
  if (!isLatencyMs(value)) throw new Error(`${latencyRule(name)} (got ${value})`);
  return value;
}

/** A latency given as text (a command-line option, an environment variable); absent or empty is 0. */
export function latencyMsFromText(name: string, text: string | undefined): number {
  if (text === undefined || text === "") return 0;
  const ms = Number(text);
  if (!/^[0-9]+$/.test(text) || !isLatencyMs(ms)) throw new Error(`${latencyRule(name)} (got '${text}')`);
  return ms;
}

/** MINK_S3_LATENCY_MS and MINK_S3_LATENCY_JITTER_MS from an environment; a bad value throws, naming its variable. */
export function s3LatencyFromEnv(env: Record<string, string | undefined>): S3Latency {
  return {
    latencyMs: latencyMsFromText("MINK_S3_LATENCY_MS", env.MINK_S3_LATENCY_MS),
    jitterMs: latencyMsFromText("MINK_S3_LATENCY_JITTER_MS", env.MINK_S3_LATENCY_JITTER_MS),
  };
}

/** The line that says every request is delayed; undefined when none is. */
export function describeS3Latency({ latencyMs, jitterMs }: S3Latency): string | undefined {
  if (latencyMs === 0 && jitterMs === 0) return undefined;
  return `embedded S3: every request delayed ${latencyMs} ms${jitterMs === 0 ? "" : ` (+0-${jitterMs} ms jitter)`}`;
}

let workerScript: Promise<string> | undefined;

/** Bundles the worker once per process; tests start many endpoints and the source does not change. */
function bundledWorker(): Promise<string> {
  workerScript ??= build({
    entryPoints: [WORKER_ENTRY],
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    logLevel: "silent",
  }).then((result) => {
    const output = result.outputFiles[0];
    if (output === undefined) throw new Error(`esbuild produced no output for ${WORKER_ENTRY}`);
    return output.text;
  });
  return workerScript;
}

export async function startEmbeddedS3(options: EmbeddedS3Options = {}): Promise<EmbeddedS3> {
  const bucket = options.bucket ?? DEFAULT_BUCKET;
  const latencyMs = checkLatencyMs("latencyMs", options.latencyMs ?? 0);
  const jitterMs = checkLatencyMs("jitterMs", options.jitterMs ?? 0);
  const mf = new Miniflare({
    modules: true,
    script: await bundledWorker(),
    compatibilityDate: COMPATIBILITY_DATE,
    bindings: {
      BUCKET_NAME: bucket,
      ACCESS_KEY_ID: EMBEDDED_S3_ACCESS_KEY_ID,
      // Left out at 0: the Worker then waits for nothing at all.
      ...(latencyMs === 0 ? {} : { LATENCY_MS: latencyMs }),
      ...(jitterMs === 0 ? {} : { JITTER_MS: jitterMs }),
    },
    r2Buckets: { BUCKET: bucket },
    r2Persist: options.persistDir ?? false,
    // The fallback `request.cf` object: without this Miniflare tries to download one at startup.
    cf: false,
    // Clients talk to the Worker through a direct workerd socket, not Miniflare's entry socket: the entry
    // emulates Cloudflare's edge and gzips compressible responses when the client accepts it, dropping
    // Content-Length and rewriting the stored bytes, which no S3 server does. (It is also ~3x faster.)
    // The entry socket still has to listen somewhere: any free port, unused.
    host: "127.0.0.1",
    port: 0,
    unsafeDirectSockets: [{ host: "127.0.0.1", port: options.port ?? 0 }],
  });
  let direct: URL;
  try {
    await mf.ready;
    direct = await mf.unsafeGetDirectURL();
  } catch (error) {
    await mf.dispose().catch(() => undefined);
    throw error;
  }
  return {
    url: direct.origin,
    bucket,
    accessKeyId: EMBEDDED_S3_ACCESS_KEY_ID,
    secretAccessKey: EMBEDDED_S3_SECRET_ACCESS_KEY,
    stop: () => mf.dispose(),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "9000" },
      persist: { type: "string" },
      bucket: { type: "string", default: DEFAULT_BUCKET },
      "latency-ms": { type: "string" },
      "jitter-ms": { type: "string" },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`--port: not a port number: ${values.port}`);
  const latency = cliLatency(values);
  const s3 = await startEmbeddedS3({ port, bucket: values.bucket, ...latency, ...(values.persist === undefined ? {} : { persistDir: values.persist }) });
  console.log(`embedded S3 endpoint: ${s3.url}/${s3.bucket} (path-style)`);
  console.log(`  access key id: ${s3.accessKeyId}  secret: ${s3.secretAccessKey} (signatures are not verified)`);
  console.log(`  storage: ${values.persist === undefined ? "in memory" : values.persist}`);
  const delayed = describeS3Latency(latency);
  if (delayed !== undefined) console.log(`  ${delayed}`);
  let stopping = false;
  const shutdown = (): void => {
    if (stopping) return;
    stopping = true;
    s3.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
}

/** --latency-ms and --jitter-ms, checked; a bad value throws, naming its option. */
export function cliLatency(values: { "latency-ms"?: string; "jitter-ms"?: string }): S3Latency {
  return {
    latencyMs: latencyMsFromText("--latency-ms", values["latency-ms"]),
    jitterMs: latencyMsFromText("--jitter-ms", values["jitter-ms"]),
  };
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
