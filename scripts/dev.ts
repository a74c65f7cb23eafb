// `npm run dev`: mink on one machine with no outside service. Starts the embedded S3 endpoint (a local R2
// bucket kept in .mink/s3) and the Worker (the router and three nodes) through Miniflare's API
// (local-runtime.ts: the bundle `wrangler deploy` ships, one workerd, no proxy) on http://127.0.0.1:$PORT
// (default 8787), with Durable Object state in .mink/wrangler. Both keep their data across restarts.
// A change under src/ or durable-objects/ rebuilds the bundle and restarts the Worker on the same state
// (a failed build keeps the running one). Ctrl-C stops everything. MINK_STATE_DIR puts that state (and the
// build) somewhere else than .mink/ in the current directory, for instance a throwaway folder for a test
// (test/e2e/dev-process.ts); it must be below the repository, whose node_modules the build resolves from.
//
// A port another program holds (PORT, MINK_S3_PORT) is said in one line with the variable to change
// (dev-ports.ts), and nothing starts.
//
// MINK_S3_LATENCY_MS (and MINK_S3_LATENCY_JITTER_MS) delay every request to the embedded S3 endpoint by that
// many milliseconds (plus a uniform draw below the jitter), to see mink at R2's latency instead of
// loopback's. They delay the embedded endpoint only: with S3_ENDPOINT pointing the Worker at another store,
// npm run dev refuses them rather than start without the latency asked for.
//
//   PORT=8787 MINK_S3_PORT=9000 MINK_NODES=node-0,node-1,node-2 ADMIN_TOKEN=... npm run dev
//   MINK_STATE_DIR=/tmp/mink-state npm run dev
//   MINK_S3_LATENCY_MS=30 MINK_S3_LATENCY_JITTER_MS=5 npm run dev
//   LONG_POLL_TIMEOUT_MS=1500 npm run dev      # any wrangler.toml [vars] name set in the environment wins
import { watch, type FSWatcher } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describeS3Latency, embeddedS3Vars, s3LatencyFromEnv, startEmbeddedS3, type S3Latency } from "./embedded-s3.ts";
import { badPortMessage, isAddressInUse, portFromEnv, portTakenMessage, takenPorts, type DevPort } from "./dev-ports.ts";
import { buildWorker, readWorkerConfig, startLocalRuntime } from "./local-runtime.ts";

const port = portFromEnv(process.env.PORT, 8787) ?? fail(badPortMessage("PORT", process.env.PORT ?? ""));
const s3Port = portFromEnv(process.env.MINK_S3_PORT, 9000) ?? fail(badPortMessage("MINK_S3_PORT", process.env.MINK_S3_PORT ?? ""));
const DEV_PORTS: readonly DevPort[] = [
  { variable: "PORT", port, what: "the Worker's port (default 8787)" },
  { variable: "MINK_S3_PORT", port: s3Port, what: "the embedded S3 endpoint's port (default 9000)" },
];
/** The admin bearer token for local development (production sets ADMIN_TOKEN as a secret). */
const devAdminToken = process.env.ADMIN_TOKEN ?? "mink-dev-admin";
/** The access-token signing key for local development (production sets TOKEN_SECRET as a secret). */
const devTokenSecret = process.env.TOKEN_SECRET ?? "mink-dev-token-secret-not-for-production";
/** Three owning nodes by default (MINK_NODES overrides: a comma-separated list of node ids). */
const nodeIds = process.env.MINK_NODES ?? "node-0,node-1,node-2";
/** Where the bucket, the Durable Object state and the build live (MINK_STATE_DIR overrides). */
const stateDir = process.env.MINK_STATE_DIR ?? ".mink";
/** The delay of every request to the embedded S3 endpoint (MINK_S3_LATENCY_MS, MINK_S3_LATENCY_JITTER_MS). */
const s3Latency = checkedS3Latency();
/** Changes closer together than this make one rebuild (an editor's save is several file events). */
const REBUILD_DEBOUNCE_MS = 200;
const WATCHED = ["../src/", "../durable-objects/"].map((dir) => fileURLToPath(new URL(dir, import.meta.url)));

const log = (text: string): void => console.log(`[mink dev ${new Date().toISOString().slice(11, 19)}] ${text}`);

/** One line on stderr and exit 1: what a newcomer can act on, no stack. */
function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

/** The S3 latency asked for, refused (one line, exit 1) when a value is bad or the Worker uses another store. */
function checkedS3Latency(): S3Latency {
  let latency: S3Latency;
  try {
    latency = s3LatencyFromEnv(process.env);
  } catch (error) {
    return fail(`npm run dev: ${error instanceof Error ? error.message : String(error)}`);
  }
  const endpoint = process.env.S3_ENDPOINT;
  if (describeS3Latency(latency) !== undefined && endpoint !== undefined && endpoint !== "" && endpoint !== `http://127.0.0.1:${s3Port}`) {
    fail(
      `npm run dev: MINK_S3_LATENCY_MS and MINK_S3_LATENCY_JITTER_MS delay the embedded S3 endpoint only, ` +
        `but S3_ENDPOINT=${endpoint} points the Worker at another store; unset one or the other`,
    );
  }
  return latency;
}

/** A start that failed because a port was taken after the check: the same line as the check's. */
async function orPortTaken<T>(start: Promise<T>, taken: DevPort, cleanUp: () => Promise<unknown> = async () => undefined): Promise<T> {
  try {
    return await start;
  } catch (error) {
    if (!isAddressInUse(error)) throw error;
    await cleanUp();
    return fail(portTakenMessage(taken));
  }
}

const busy = await takenPorts(DEV_PORTS);
if (busy.length > 0) fail(busy.map(portTakenMessage).join("\n"));

const s3 = await orPortTaken(startEmbeddedS3({ port: s3Port, persistDir: join(stateDir, "s3"), ...s3Latency }), DEV_PORTS[1]!);
log(`embedded S3 endpoint on ${s3.url} (bucket ${s3.bucket}, data in ${join(stateDir, "s3")})`);
const delayed = describeS3Latency(s3Latency);
if (delayed !== undefined) log(delayed);

let started = performance.now();
const build = await buildWorker(join(stateDir, "build"));
log(`built the Worker in ${((performance.now() - started) / 1000).toFixed(1)} s (${join(stateDir, "build")})`);
const runtime = await orPortTaken(startLocalRuntime({
  build,
  port,
  persistDir: join(stateDir, "wrangler"),
  vars: {
    NODE_IDS: nodeIds,
    // Nodes advertise `<PUBLIC_ORIGIN>/n/<id>`: the 307s of the router point there.
    PUBLIC_ORIGIN: `http://127.0.0.1:${port}`,
    ...embeddedS3Vars(s3),
    ADMIN_TOKEN: devAdminToken,
    // Open on loopback; `AUTH_MODE=token npm run dev` runs the real thing (docs/access.md).
    AUTH_MODE: "open",
    TOKEN_SECRET: devTokenSecret,
    // Webhook receivers in development listen on 127.0.0.1 (off in wrangler.toml).
    WEBHOOK_ALLOW_LOOPBACK: "1",
  },
  environment: process.env,
}), DEV_PORTS[0]!, () => s3.stop());
const fromEnvironment = Object.keys(readWorkerConfig(build).vars).filter((name) => process.env[name] !== undefined);
if (fromEnvironment.length > 0) log(`from the environment: ${fromEnvironment.map((name) => `${name}=${JSON.stringify(runtime.vars[name])}`).join(" ")}`);
log(`mink on ${runtime.url}: nodes ${nodeIds} (admin token: ${devAdminToken}, AUTH_MODE=${JSON.stringify(runtime.vars["AUTH_MODE"] ?? "open")}, state in ${join(stateDir, "wrangler")})`);

// Rebuilds run one at a time; changes during one make one more afterwards.
let timer: NodeJS.Timeout | undefined;
let rebuilding: Promise<void> | undefined;
let changedAgain = false;
async function rebuild(): Promise<void> {
  do {
    changedAgain = false;
    started = performance.now();
    try {
      await buildWorker(build, { bundleOnly: true });
      await runtime.restart();
      log(`rebuilt and restarted in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    } catch (error) {
      log(`rebuild failed, the previous Worker keeps running:\n${error instanceof Error ? error.message : String(error)}`);
    }
  } while (changedAgain);
  rebuilding = undefined;
}
const watchers: FSWatcher[] = WATCHED.map((dir) =>
  watch(dir, { recursive: true }, (_event, file) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      log(`changed: ${file ?? dir}`);
      if (rebuilding === undefined) rebuilding = rebuild();
      else changedAgain = true;
    }, REBUILD_DEBOUNCE_MS);
  }),
);

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  clearTimeout(timer);
  for (const watcher of watchers) watcher.close();
  await rebuilding;
  await Promise.allSettled([runtime.stop(), s3.stop()]);
  process.exit(0);
}
process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());
