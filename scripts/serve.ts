// The local runtime (local-runtime.ts) as a process of its own: the end-to-end tests and the benchmarks
// spawn it so the SIGKILL test has a real process tree to kill (this Node process and its workerd) and the
// Worker does not share the test's event loop. Prints `READY <url>` once serving; SIGTERM or SIGINT stops it.
//
//   node <build>/runner/serve.mjs --build <build> [--port 0] [--persist <dir>] [--var NAME=VALUE ...] [--environment] [--edge-entry]
//   (node --import tsx scripts/serve.ts ... works too, 2 to 3 s slower to start: buildWorker() compiles it)
//
// --build: a directory written by buildWorker(); --persist: Durable Object state (default: in memory);
// --var: over wrangler.toml's [vars]; --environment: this process's environment overrides [vars] names too;
// --edge-entry: through Miniflare's edge-emulating entry worker (LocalRuntimeOptions.edgeEntry).
import { parseArgs } from "node:util";
import { isAddressInUse } from "./dev-ports.ts";
import { startLocalRuntime } from "./local-runtime.ts";

const { values } = parseArgs({
  options: {
    build: { type: "string" },
    port: { type: "string", default: "0" },
    persist: { type: "string" },
    var: { type: "string", multiple: true, default: [] },
    environment: { type: "boolean", default: false },
    "edge-entry": { type: "boolean", default: false },
  },
});
if (values.build === undefined) throw new Error("--build <dir> is required");
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`--port: not a port number: ${values.port}`);
const vars: Record<string, string> = {};
for (const assignment of values.var) {
  const at = assignment.indexOf("=");
  if (at <= 0) throw new Error(`--var: expected NAME=VALUE, got ${assignment}`);
  vars[assignment.slice(0, at)] = assignment.slice(at + 1);
}

const runtime = await startLocalRuntime({
  build: values.build,
  port,
  vars,
  ...(values.persist === undefined ? {} : { persistDir: values.persist }),
  ...(values.environment ? { environment: process.env } : {}),
  edgeEntry: values["edge-entry"],
}).catch((error: unknown) => {
  if (!isAddressInUse(error)) throw error;
  // One line instead of Miniflare's stack: the port is this script's --port.
  console.error(`serve: port ${port} (--port) is already in use by another program; pick another --port, or --port 0 for any free one`);
  return process.exit(1);
});
process.stdout.write(`READY ${runtime.url}\n`);

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  runtime.stop().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
