// Prints, as JSON, what the local runtime (local-runtime.ts) needs from wrangler.toml: name, compatibility
// date and flags, module rules, Durable Object bindings (SQLite per the migrations) and [vars], read by
// wrangler's own config reader, so nothing of wrangler.toml is restated by hand.
//
//   node --import tsx scripts/read-worker-config.ts <wrangler.toml>
//
// A process of its own (buildWorker() runs it, compiled to <build>/runner/read-worker-config.mjs): importing
// wrangler takes 1 to 3 s and sets undici's global dispatcher, which Node's built-in fetch shares; neither
// belongs in a test or dev process.
// A binding the runtime does not set up (KV, R2, services, ...) is refused here rather than left unbound.
import { resolve } from "node:path";
import { unstable_getMiniflareWorkerOptions, unstable_readConfig } from "wrangler";
import type { Json, ModuleRule } from "miniflare";
import type { WorkerConfig } from "./local-runtime.ts";

/** The part of wrangler's Config read here (its type names a package wrangler does not install). */
interface WranglerConfig {
  name?: string;
  main?: string;
  compatibility_date?: string;
  vars: Record<string, Json>;
}
type DurableObjectTarget = string | { className: string; scriptName?: string; useSQLite?: boolean };
/** The part of unstable_getMiniflareWorkerOptions() read here (its declared types do not all resolve either). */
interface MiniflareWorkerOptions {
  workerOptions: {
    compatibilityDate?: string;
    compatibilityFlags?: string[];
    modulesRules?: ModuleRule[];
    durableObjects?: Record<string, DurableObjectTarget>;
  } & Record<string, unknown>;
  externalWorkers: unknown[];
}

/** Miniflare options the runtime sets up itself. */
const SERVED_OPTIONS = new Set(["compatibilityDate", "compatibilityFlags", "modulesRules", "bindings", "durableObjects"]);

/** A value that configures something: not undefined, not an empty array or object (recursively). */
function present(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object") return Object.values(value).some(present);
  return true;
}

const configArg = process.argv[2];
if (configArg === undefined) throw new Error("usage: read-worker-config.ts <wrangler.toml>");
const configPath = resolve(configArg);
const wranglerConfig: unknown = unstable_readConfig({ config: configPath });
const config = wranglerConfig as WranglerConfig;
const { workerOptions, externalWorkers } = unstable_getMiniflareWorkerOptions(wranglerConfig as never) as unknown as MiniflareWorkerOptions;
const unserved = Object.entries(workerOptions).filter(([key, value]) => !SERVED_OPTIONS.has(key) && present(value)).map(([key]) => key);
if (externalWorkers.length > 0) unserved.push("external workers");
if (unserved.length > 0) throw new Error(`${configPath} needs ${unserved.join(", ")}: the local runtime does not set that up (scripts/local-runtime.ts)`);
if (config.main === undefined) throw new Error(`${configPath}: no main`);

const workerConfig: WorkerConfig = {
  name: config.name ?? "worker",
  // wrangler names the bundle after the entry point: src/index.ts -> index.js.
  main: config.main.replace(/^.*[/\\]/, "").replace(/\.[cm]?[jt]sx?$/, ".js"),
  compatibilityDate: workerOptions.compatibilityDate ?? config.compatibility_date ?? "",
  compatibilityFlags: workerOptions.compatibilityFlags ?? [],
  modulesRules: workerOptions.modulesRules ?? [],
  durableObjects: Object.fromEntries(Object.entries(workerOptions.durableObjects ?? {}).map(([name, target]) => {
    if (typeof target === "string") return [name, { className: target }];
    if (target.scriptName !== undefined) throw new Error(`${configPath}: ${name} names a class of another Worker (${target.scriptName}): not served locally`);
    return [name, { className: target.className, ...(target.useSQLite === undefined ? {} : { useSQLite: target.useSQLite }) }];
  })),
  // [vars] only: wrangler's `bindings` also holds .dev.vars, which the runtime's callers replace.
  vars: config.vars,
};
process.stdout.write(`${JSON.stringify(workerConfig, null, 2)}\n`);
