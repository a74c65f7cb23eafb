// Starts mink for real, for the end-to-end suites and the benchmarks: an object store (the embedded S3
// endpoint, or an outside S3 server named by MINK_TEST_S3_*) plus the Worker under the local runtime
// (scripts/local-runtime.ts: Miniflare's API, the bundle `wrangler deploy` ships, one workerd, no proxy), the
// same runner as `npm run dev`, in a child process (scripts/serve.ts).
//
// Why a child process: the kill test SIGKILLs the running service, which must be a real process tree (node
// serve.ts -> workerd), and the Worker should not share the test's event loop. The child is spawned
// detached, so it leads its own process group and kill()/stop() signal the whole group (-pid): killing only
// the Node process would leave workerd serving. restart() reuses the same port and persist dir, so Durable
// Object storage survives, exactly as after a crash. The bundle is built once per test process (about 3 s)
// and shared by every service and restart. The object store runs in this process and keeps running across
// kill()/restart(): it stands for R2, which does not crash with the Worker.
//
// Everything started here is stopped by PID: stop() by the test (afterAll), and a synchronous SIGKILL of
// every live group on process exit or SIGINT/SIGTERM (test/support/process-groups.ts), so a crashed test
// run leaks nothing.

import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, rmSync, type WriteStream } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { AwsClient } from "aws4fetch";
import { checkLatencyMs, embeddedS3Vars, startEmbeddedS3, type EmbeddedS3, type S3Latency } from "../../scripts/embedded-s3.ts";
import { buildWorker, serveEntry } from "../../scripts/local-runtime.ts";
import { freePort } from "../support/free-port.ts";
import { releaseDir, stopGroup, trackDir, trackGroup } from "../support/process-groups.ts";
import { eventually } from "../support/eventually.ts";

export interface ServiceOptions {
  /** Number of stream nodes: NODE_IDS = "node-0,...,node-<n-1>" (default 1). */
  nodes?: number;
  /** ROUTER_MODE: true = "forward" (the Worker forwards to the owner), false = "redirect" (307, the default). */
  forwarding?: boolean;
  /** LONG_POLL_TIMEOUT_MS; the conformance suite runs with 1,500. */
  longPollTimeoutMs?: number;
  /** "embedded" (default): the embedded S3 endpoint in this process; "external": MINK_TEST_S3_* (radosgw). */
  s3?: "embedded" | "external";
  /**
   * Milliseconds every request to the embedded S3 endpoint waits before it is handled: R2's round trip
   * (30 is typical) instead of loopback's (default 0: none). Embedded store only: with s3 "external" a
   * latency is refused, since nothing could add it.
   */
  s3LatencyMs?: number;
  /** A uniform draw from [0, s3JitterMs) milliseconds added to each request's wait (default 0: none). */
  s3JitterMs?: number;
  /**
   * Where Durable Object state (`<dir>/wrangler`, the layout of `wrangler dev --persist-to`), the embedded
   * bucket (`<dir>/s3`) and the Worker's log (`<dir>/mink.log`) live. Default: a fresh temporary directory, removed by stop(). A directory passed
   * here is kept. Without persistDir the embedded bucket lives in memory (it survives kill()/restart()
   * anyway, because the endpoint keeps running).
   */
  persistDir?: string;
  /** Port for the Worker on 127.0.0.1 (default: a free one). */
  port?: number;
  /** ADMIN_TOKEN (default "mink-e2e-admin"). */
  adminToken?: string;
  /** Extra Worker vars, applied last (settings this harness does not know about yet). */
  vars?: Record<string, string>;
  /** Bound on the wait for GET /health to answer 200 (default 60 s: 2 busy cores; the bundle is built before). */
  readyTimeoutMs?: number;
  /** Copy the Worker's output to this process's stderr as well as to the log file (default: env MINK_E2E_VERBOSE=1). */
  verbose?: boolean;
}

export interface Service {
  /** `http://127.0.0.1:<port>`: the router. Streams live under `<baseUrl>/v1/stream/...`. */
  baseUrl: string;
  port: number;
  adminToken: string;
  /** The Worker's current process (node serve.ts, the group leader; workerd is its child): changes on restart(). */
  readonly pid: number | undefined;
  /** Where the Worker's output goes (appended across restarts). */
  logFile: string;
  /** The vars passed to the Worker (secrets included: test credentials only). */
  vars: Readonly<Record<string, string>>;
  /** SIGTERM the Worker's process group (SIGKILL after 5 s), stop the object store, remove a temporary dir. */
  stop(): Promise<void>;
  /** SIGKILL the Worker's whole process group and wait until every process in it is gone. */
  kill(): Promise<void>;
  /** Start the Worker again on the same port with the same persist dir and vars; resolves when healthy. */
  restart(): Promise<void>;
  /** The last lines of the Worker's output, for error messages. */
  logTail(lines?: number): string;
}

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DEFAULT_ADMIN_TOKEN = "mink-e2e-admin";
/** The access-token signing key of every test service (a test in token mode signs its own bad tokens with others). */
export const E2E_TOKEN_SECRET = "mink-e2e-token-secret-0123456789abcdef";
const STOP_GRACE_MS = 5_000;
const GROUP_EXIT_TIMEOUT_MS = 10_000;

let workerBuild: Promise<string> | undefined;

/**
 * The Worker's bundle, worker.json and the compiled runner, built once per process into a temporary dir
 * below the repository (the runner imports miniflare from its node_modules), removed on exit.
 */
function sharedBuild(): Promise<string> {
  if (workerBuild === undefined) {
    mkdirSync(join(REPO_ROOT, ".mink"), { recursive: true });
    const dir = mkdtempSync(join(REPO_ROOT, ".mink", "e2e-build-"));
    trackDir(dir);
    workerBuild = buildWorker(dir);
    workerBuild.catch(() => (workerBuild = undefined)); // a failed build is tried again by the next service
  }
  return workerBuild;
}

interface ObjectStore {
  vars: Record<string, string>;
  stop(): Promise<void>;
}

async function startObjectStore(kind: "embedded" | "external", persistDir: string, keepInMemory: boolean, latency: S3Latency): Promise<ObjectStore> {
  if (kind === "embedded") {
    const s3: EmbeddedS3 = await startEmbeddedS3({ port: 0, ...latency, ...(keepInMemory ? {} : { persistDir: join(persistDir, "s3") }) });
    return {
      vars: embeddedS3Vars(s3),
      stop: () => s3.stop(),
    };
  }
  const endpoint = process.env.MINK_TEST_S3_ENDPOINT;
  if (endpoint === undefined || endpoint === "") {
    throw new Error("s3: \"external\" needs MINK_TEST_S3_ENDPOINT: start radosgw with scripts/radosgw/start.sh and source its env file");
  }
  const region = process.env.MINK_TEST_S3_REGION ?? "us-east-1";
  const accessKeyId = process.env.MINK_TEST_S3_ACCESS_KEY_ID ?? "";
  const secretAccessKey = process.env.MINK_TEST_S3_SECRET_ACCESS_KEY ?? "";
  // A fresh bucket per service: runs share the server, and a node must not find another run's WAL chain,
  // registrations or log. (The throwaway radosgw keeps data in RAM; nothing is deleted here.)
  const bucket = `mink-e2e-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const client = new AwsClient({ accessKeyId, secretAccessKey, region, service: "s3", retries: 0 });
  const response = await client.fetch(`${endpoint.replace(/\/$/, "")}/${bucket}`, { method: "PUT" });
  if (!response.ok) throw new Error(`creating bucket ${bucket} on ${endpoint}: ${response.status} ${await response.text()}`);
  return {
    vars: {
      S3_ENDPOINT: endpoint,
      S3_BUCKET: bucket,
      S3_REGION: region,
      S3_ADDRESSING: "path",
      S3_ACCESS_KEY_ID: accessKeyId,
      S3_SECRET_ACCESS_KEY: secretAccessKey,
    },
    stop: async () => undefined,
  };
}

/** Keeps the last `maxBytes` of a process's output in memory for error messages. */
class OutputTail {
  #text = "";
  constructor(private readonly maxBytes = 64 * 1024) {}
  push(chunk: string): void {
    this.#text += chunk;
    if (this.#text.length > this.maxBytes) this.#text = this.#text.slice(-this.maxBytes);
  }
  lines(count: number): string {
    return this.#text.split("\n").slice(-count).join("\n");
  }
}

export async function startService(options: ServiceOptions = {}): Promise<Service> {
  const nodes = options.nodes ?? 1;
  if (!Number.isInteger(nodes) || nodes < 1) throw new Error(`nodes: not a positive integer: ${nodes}`);
  // Checked before anything starts (a temporary directory, the build).
  const s3Latency: S3Latency = {
    latencyMs: checkLatencyMs("s3LatencyMs", options.s3LatencyMs ?? 0),
    jitterMs: checkLatencyMs("s3JitterMs", options.s3JitterMs ?? 0),
  };
  if (options.s3 === "external" && (s3Latency.latencyMs !== 0 || s3Latency.jitterMs !== 0)) {
    throw new Error('s3LatencyMs and s3JitterMs delay the embedded S3 endpoint only; an external S3 server (s3: "external") has its own latency');
  }
  const ownsDir = options.persistDir === undefined;
  const persistDir = options.persistDir ?? mkdtempSync(join(tmpdir(), "mink-e2e-"));
  if (ownsDir) trackDir(persistDir);
  mkdirSync(persistDir, { recursive: true });
  const port = options.port ?? (await freePort());
  const baseUrl = `http://127.0.0.1:${port}`;
  const adminToken = options.adminToken ?? DEFAULT_ADMIN_TOKEN;
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  const verbose = options.verbose ?? process.env.MINK_E2E_VERBOSE === "1";
  const logFile = join(persistDir, "mink.log");
  const tail = new OutputTail();

  const build = await sharedBuild();
  const store = await startObjectStore(options.s3 ?? "embedded", persistDir, ownsDir, s3Latency);
  const vars: Record<string, string> = {
    ...store.vars,
    ADMIN_TOKEN: adminToken,
    // Nodes advertise `<PUBLIC_ORIGIN>/n/<node-id>`: it must be this service's own origin for 307s to land.
    PUBLIC_ORIGIN: baseUrl,
    NODE_IDS: Array.from({ length: nodes }, (_, i) => `node-${i}`).join(","),
    ROUTER_MODE: options.forwarding === true ? "forward" : "redirect",
    // wrangler.toml deploys AUTH_MODE=token; the tests run open unless they ask (vars), with a key at hand.
    AUTH_MODE: "open",
    TOKEN_SECRET: E2E_TOKEN_SECRET,
    // The conformance suite's webhook receiver listens on 127.0.0.1 (off in wrangler.toml).
    WEBHOOK_ALLOW_LOOPBACK: "1",
    ...(options.longPollTimeoutMs === undefined ? {} : { LONG_POLL_TIMEOUT_MS: String(options.longPollTimeoutMs) }),
    ...options.vars,
  };

  let child: ChildProcess | undefined;
  let log: WriteStream | undefined;
  let stopped = false;

  async function launch(): Promise<void> {
    const args = [serveEntry(build), "--build", build, "--port", String(port), "--persist", join(persistDir, "wrangler")];
    for (const [name, value] of Object.entries(vars)) args.push("--var", `${name}=${value}`);
    log ??= createWriteStream(logFile, { flags: "a" });
    log.write(`\n=== ${new Date().toISOString()} mink (scripts/serve.ts) on ${baseUrl}\n`);
    const spawned = spawn(process.execPath, args, {
      cwd: REPO_ROOT,
      detached: true, // its own process group: kill(-pid) reaches workerd too
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
    });
    const pid = spawned.pid;
    if (pid === undefined) throw new Error("spawning scripts/serve.ts failed (no pid)");
    trackGroup(pid);
    child = spawned;
    const sink = (chunk: Buffer): void => {
      const text = chunk.toString("utf8");
      tail.push(text);
      log?.write(text);
      if (verbose) process.stderr.write(text);
    };
    spawned.stdout?.on("data", sink);
    spawned.stderr?.on("data", sink);
    await waitForHealth(spawned);
  }

  async function waitForHealth(spawned: ChildProcess): Promise<void> {
    const outcome = await eventually(async () => {
      if (spawned.exitCode !== null || spawned.signalCode !== null) return "exited";
      const response = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(2_000) });
      const body = await response.text();
      if (response.status !== 200) throw new Error(`${response.status} ${body.slice(0, 300)}`);
      return "healthy";
    }, { timeoutMs: readyTimeoutMs, what: `${baseUrl}/health to answer 200` }).catch((error: unknown) => {
      throw new Error(`${error instanceof Error ? error.message : String(error)}\n${tail.lines(40)}`, { cause: error });
    });
    if (outcome === "exited") {
      throw new Error(`scripts/serve.ts exited (${spawned.exitCode ?? spawned.signalCode}) before ${baseUrl}/health answered 200\n${tail.lines(40)}`);
    }
  }

  async function terminate(signal: "SIGTERM" | "SIGKILL"): Promise<void> {
    const current = child;
    child = undefined;
    const pgid = current?.pid;
    if (current === undefined || pgid === undefined) return;
    const gone = await stopGroup(pgid, { signal, graceMs: STOP_GRACE_MS, killMs: GROUP_EXIT_TIMEOUT_MS });
    if (!gone) throw new Error(`process group ${pgid} (scripts/serve.ts) still alive after SIGKILL`);
  }

  const service: Service = {
    baseUrl,
    port,
    adminToken,
    get pid() {
      return child?.pid;
    },
    logFile,
    vars,
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        await terminate("SIGTERM");
      } finally {
        await store.stop();
        await new Promise<void>((resolve) => (log === undefined ? resolve() : log.end(resolve)));
        if (ownsDir && existsSync(persistDir)) rmSync(persistDir, { recursive: true, force: true });
        releaseDir(persistDir);
      }
    },
    async kill() {
      await terminate("SIGKILL");
    },
    async restart() {
      if (stopped) throw new Error("restart() after stop()");
      await terminate("SIGTERM"); // no-op after kill()
      await launch();
    },
    logTail: (lines = 40) => tail.lines(lines),
  };

  try {
    await launch();
  } catch (error) {
    await service.stop().catch(() => undefined);
    throw error;
  }
  return service;
}
