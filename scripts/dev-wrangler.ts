// `npm run dev:wrangler`: what `npm run dev` was before scripts/dev.ts served the Worker through Miniflare's
// API directly. Starts the embedded S3 endpoint (a local R2 bucket kept in .mink/s3) and the Worker (the
// router and three nodes) under `wrangler dev` on http://127.0.0.1:$PORT (default 8787), with Durable Object
// state in .mink/wrangler (the same state as `npm run dev`). Both keep their data across restarts; Ctrl-C
// stops both. `wrangler dev` puts its own Node process and a proxy workerd in the request path (about 60%
// of the CPU of a 2-core machine under load, docs/benchmarks.md) and ignores [vars] set in the environment.
// MINK_S3_LATENCY_MS and MINK_S3_LATENCY_JITTER_MS delay every request to the embedded S3 endpoint, as for
// `npm run dev` (the Worker here always uses the embedded endpoint).
import { spawn } from "node:child_process";
import { describeS3Latency, embeddedS3Vars, s3LatencyFromEnv, startEmbeddedS3, type S3Latency } from "./embedded-s3.ts";

const port = Number(process.env.PORT ?? 8787);
const s3Port = Number(process.env.MINK_S3_PORT ?? 9000);
/** The admin bearer token for local development (production sets ADMIN_TOKEN as a secret). */
const devAdminToken = process.env.ADMIN_TOKEN ?? "mink-dev-admin";

let s3Latency: S3Latency;
try {
  s3Latency = s3LatencyFromEnv(process.env);
} catch (error) {
  console.error(`npm run dev:wrangler: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

const s3 = await startEmbeddedS3({ port: s3Port, persistDir: ".mink/s3", ...s3Latency });
console.log(`embedded S3 endpoint on ${s3.url} (bucket ${s3.bucket}, data in .mink/s3)`);
const delayed = describeS3Latency(s3Latency);
if (delayed !== undefined) console.log(delayed);

/** Three owning nodes by default (MINK_NODES overrides: a comma-separated list of node ids). */
const nodeIds = process.env.MINK_NODES ?? "node-0,node-1,node-2";

const vars = {
  NODE_IDS: nodeIds,
  // Nodes advertise `<PUBLIC_ORIGIN>/n/<id>`: the 307s of the router point there.
  PUBLIC_ORIGIN: `http://127.0.0.1:${port}`,
  ...embeddedS3Vars(s3),
  ADMIN_TOKEN: devAdminToken,
  // Open on loopback, like `npm run dev`; AUTH_MODE=token runs the real thing (docs/access.md).
  AUTH_MODE: process.env.AUTH_MODE ?? "open",
  TOKEN_SECRET: process.env.TOKEN_SECRET ?? "mink-dev-token-secret-not-for-production",
};
const args = ["wrangler", "dev", "--local", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", ".mink/wrangler"];
for (const [name, value] of Object.entries(vars)) args.push("--var", `${name}:${value}`);

const wrangler = spawn("npx", args, { stdio: "inherit", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } });
console.log(`mink on http://127.0.0.1:${port}: nodes ${nodeIds} (admin token: ${devAdminToken})`);

let stopping = false;
async function stop(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  if (wrangler.exitCode === null) wrangler.kill("SIGTERM");
  await s3.stop();
  process.exit(code);
}
wrangler.on("exit", (code) => void stop(code ?? 0));
process.on("SIGINT", () => void stop(0));
process.on("SIGTERM", () => void stop(0));
