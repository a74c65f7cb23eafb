// The local runtime: mink's Worker served by Miniflare's API on 127.0.0.1, on a direct socket of one
// workerd process (see edgeEntry). `wrangler dev` puts its own Node process and a proxy workerd in front,
// which took about 60% of a 2-core machine's CPU under load (docs/benchmarks.md). Used by `npm run dev`
// (scripts/dev.ts), the end-to-end tests and the benchmarks (through scripts/serve.ts, a child process).
//
//   const build = await buildWorker(".mink/build");       // the bundle `wrangler deploy` ships + worker.json
//   const mink = await startLocalRuntime({ build, port: 8787, persistDir: ".mink/wrangler", vars, environment: process.env });
//   ...; await mink.restart(); ...; await mink.stop();
//
// The Worker's bindings come from wrangler.toml, read by wrangler itself at build time (read-worker-config.ts):
// Durable Objects (SQLite per the migrations), compatibility date and flags, [vars]. The vars a Worker sees,
// later ones winning: wrangler.toml's [vars]; `vars` (the caller's own: NODE_IDS, PUBLIC_ORIGIN, S3_*,
// ADMIN_TOKEN, ...); then, when `environment` is given, every [vars] name set there
// (`LONG_POLL_TIMEOUT_MS=1500 npm run dev`). State persists under `persistDir` in the layout of
// `wrangler dev --persist-to <persistDir>` (`<persistDir>/v3/do/...`), so both can serve the same state.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build as esbuild } from "esbuild";
import { Miniflare, type Json, type MiniflareOptions, type ModuleRule } from "miniflare";

/** What read-worker-config.ts prints, kept as `<build>/worker.json`. */
export interface WorkerConfig {
  name: string;
  /** The bundle's entry module, relative to the build directory. */
  main: string;
  compatibilityDate: string;
  compatibilityFlags: string[];
  modulesRules: ModuleRule[];
  /** Binding name -> class (useSQLite per wrangler.toml's migrations). */
  durableObjects: Record<string, { className: string; useSQLite?: boolean }>;
  vars: Record<string, Json>;
}

export interface LocalRuntimeOptions {
  /** A directory written by buildWorker(). */
  build: string;
  /** Port on 127.0.0.1; 0 (the default) picks a free one, kept across restart(). */
  port?: number;
  /** Durable Object (and any other) state; undefined keeps it in memory, gone on stop or restart. */
  persistDir?: string;
  /** Vars over wrangler.toml's [vars]. */
  vars?: Record<string, string>;
  /** An environment whose [vars] names win over everything (e.g. process.env); undefined: none. */
  environment?: Record<string, string | undefined>;
  /**
   * Serve through Miniflare's entry worker, which emulates Cloudflare's edge (compresses text responses for
   * clients that accept gzip, adds `request.cf`, error pages), as `wrangler dev` does. Default: a direct
   * workerd socket to the Worker. The entry worker is a second Worker in the request path: with it, 64
   * connections appending got 1,000 to 1,300 appends/s here against 1,400 to 2,100 direct, for 1.1 to 2.2x
   * the workerd CPU per append (docs/benchmarks.md). mink uses neither `request.cf` nor the compression.
   */
  edgeEntry?: boolean;
}

export interface LocalRuntime {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** The vars the Worker sees. */
  readonly vars: Readonly<Record<string, Json>>;
  /** Start the Worker again from the build directory (re-read: call it after a rebuild); same port and state. */
  restart(): Promise<void>;
  stop(): Promise<void>;
  /** The Durable Object `name` of `binding`, called from Node through Miniflare (benchmarks' bulk paths). */
  durableObject(binding: string, name: string): Promise<unknown>;
}

/** The repository: scripts/.. (called only by buildWorker: serve.mjs, compiled elsewhere, never needs it). */
function repoRoot(): string {
  return fileURLToPath(new URL("../", import.meta.url));
}

/** Runs `node <args>` from the repository root; resolves with its stdout, rejects with its output on failure. */
function run(args: string[], what: string): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, {
      cwd: repoRoot(),
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1", NO_COLOR: "1", FORCE_COLOR: "0" },
    });
    let stdout = "";
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      output += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => void (output += chunk.toString("utf8")));
    child.once("error", fail);
    child.once("exit", (code, signal) => (code === 0 ? done(stdout) : fail(new Error(`${what} failed (${code ?? signal}):\n${output.trim()}`))));
  });
}

/**
 * scripts/serve.ts and read-worker-config.ts as plain JavaScript (`<build>/runner/*.mjs`, npm packages left
 * as imports), run by `node` without tsx: tsx's loader made importing Miniflare 3 to 4 times slower (1.3 s
 * against 4.8 s on a busy machine), a cost every start of serve.ts paid again.
 */
export function serveEntry(build: string): string {
  return join(build, "runner", "serve.mjs");
}

export interface BuildOptions {
  /** Default: the repository's wrangler.toml. */
  configPath?: string;
  /** Only bundle the Worker again, keep worker.json and runner/ (a source change; wrangler.toml unchanged). */
  bundleOnly?: boolean;
}

/**
 * Writes into `outDir` (below the repository, so the runner's imports resolve from its node_modules):
 *   index.js      the bundle `wrangler deploy` ships (`wrangler deploy --dry-run --outdir`)
 *   worker.json   what wrangler.toml says (read-worker-config.ts)
 *   runner/       serve.ts and read-worker-config.ts compiled (serveEntry())
 * and returns the directory. About 3 s on an idle 2-core machine, 5 to 10 s on a busy one.
 */
export async function buildWorker(outDir: string, options: BuildOptions = {}): Promise<string> {
  const dir = resolve(outDir);
  const root = repoRoot();
  if (relative(root, dir).startsWith("..")) throw new Error(`buildWorker: ${dir} is not below ${root}: the runner could not import miniflare`);
  const configPath = resolve(options.configPath ?? join(root, "wrangler.toml"));
  const wranglerBin = join(root, "node_modules", "wrangler", "bin", "wrangler.js");
  const bundling = run([wranglerBin, "deploy", "--dry-run", "--config", configPath, "--outdir", dir], "wrangler deploy --dry-run");
  bundling.catch(() => undefined); // awaited below; meanwhile a failure must not count as unhandled
  let config: string | undefined;
  try {
    if (options.bundleOnly !== true) {
      await esbuild({
        entryPoints: ["serve.ts", "read-worker-config.ts"].map((file) => join(root, "scripts", file)),
        outdir: join(dir, "runner"),
        outExtension: { ".js": ".mjs" },
        bundle: true,
        packages: "external",
        platform: "node",
        format: "esm",
        target: "node20",
        logLevel: "silent",
      });
      config = await run([join(dir, "runner", "read-worker-config.mjs"), configPath], "reading wrangler.toml");
    }
  } finally {
    await bundling;
  }
  if (config !== undefined) writeFileSync(join(dir, "worker.json"), config);
  const main = readWorkerConfig(dir).main;
  if (!existsSync(join(dir, main))) throw new Error(`wrangler deploy --dry-run wrote no ${main} in ${dir}`);
  return dir;
}

export function readWorkerConfig(build: string): WorkerConfig {
  return JSON.parse(readFileSync(join(build, "worker.json"), "utf8")) as WorkerConfig;
}

/** wrangler.toml's [vars] < `vars` < the [vars] names set in `environment`. */
export function composeVars(config: WorkerConfig, vars: Record<string, string> = {}, environment?: Record<string, string | undefined>): Record<string, Json> {
  const composed: Record<string, Json> = { ...config.vars, ...vars };
  for (const name of Object.keys(config.vars)) {
    const value = environment?.[name];
    if (value !== undefined) composed[name] = value;
  }
  return composed;
}

function miniflareOptions(options: LocalRuntimeOptions, config: WorkerConfig, vars: Record<string, Json>, port: number): MiniflareOptions {
  return {
    name: config.name, // Durable Object ids derive from "<name>-<class>", as under wrangler dev
    modules: true,
    scriptPath: join(options.build, config.main),
    // Module names are paths below this root; workerd refuses one with "..".
    modulesRoot: options.build,
    modulesRules: config.modulesRules,
    compatibilityDate: config.compatibilityDate,
    compatibilityFlags: config.compatibilityFlags,
    durableObjects: config.durableObjects,
    bindings: vars,
    ...(options.persistDir === undefined ? {} : { defaultPersistRoot: join(resolve(options.persistDir), "v3") }),
    // The fallback `request.cf` object: without this Miniflare tries to download one at startup.
    cf: false,
    // MINK_INSPECTOR_PORT: workerd's DevTools inspector (CPU profiles of the Worker and its Durable Objects).
    ...(process.env.MINK_INSPECTOR_PORT === undefined ? {} : { inspectorPort: Number(process.env.MINK_INSPECTOR_PORT) }),
    ...(options.edgeEntry === true
      ? { host: "127.0.0.1", port }
      : // Miniflare's entry socket has to listen somewhere: any free port, unused.
        { host: "127.0.0.1", port: 0, unsafeDirectSockets: [{ host: "127.0.0.1", port }] }),
  };
}

export async function startLocalRuntime(options: LocalRuntimeOptions): Promise<LocalRuntime> {
  let config = readWorkerConfig(options.build);
  let vars = composeVars(config, options.vars, options.environment);
  const mf = new Miniflare(miniflareOptions(options, config, vars, options.port ?? 0));
  let url: URL;
  try {
    const entry = await mf.ready;
    url = options.edgeEntry === true ? entry : await mf.unsafeGetDirectURL();
  } catch (error) {
    await mf.dispose().catch(() => undefined);
    throw error;
  }
  const port = Number(url.port);
  return {
    url: url.origin,
    port,
    get vars() {
      return vars;
    },
    async restart() {
      config = readWorkerConfig(options.build);
      vars = composeVars(config, options.vars, options.environment);
      await mf.setOptions(miniflareOptions(options, config, vars, port));
    },
    stop: () => mf.dispose(),
    async durableObject(binding, name) {
      const namespace = await mf.getDurableObjectNamespace(binding);
      return namespace.get(namespace.idFromName(name));
    },
  };
}
