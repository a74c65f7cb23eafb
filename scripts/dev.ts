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
//   PORT=8787 MINK_S3_PORT=9000 MINK_NODES=node-0,node-1,node-2 ADMIN_TOKEN=... npm run dev
//   MINK_STATE_DIR=/tmp/mink-state npm run dev
//   LONG_POLL_TIMEOUT_MS=1500 npm run dev      # any wrangler.toml [vars] name set in the environment wins
import { watch, type FSWatcher } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { embeddedS3Vars, startEmbeddedS3 } from "./embedded-s3.ts";
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
/** Changes closer together than this make one rebuild (an editor's save is several file events). */
const REBUILD_DEBOUNCE_MS = 200;
const WATCHED = ["../src/", "../durable-objects/"].map((dir) => fileURLToPath(new URL(dir, import.meta.url)));

const log = (text: string): void => console.log(`[mink dev ${new Date().toISOString().slice(11, 19)}] ${text}`);

/** One line on stderr and exit 1: what a newcomer can act on, no stack. */
function fail(message: string): never {
  console.error(message);
  process.exit(1);
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

const s3 = await orPortTaken(startEmbeddedS3({ port: s3Port, persistDir: join(stateDir, "s3") }), DEV_PORTS[1]!);
log(`embedded S3 endpoint on ${s3.url} (bucket ${s3.bucket}, data in ${join(stateDir, "s3")})`);

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
