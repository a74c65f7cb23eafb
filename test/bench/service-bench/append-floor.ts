// bench:service --floor: what this machine's runtime itself costs an append, with no mink code at all (issue
// 26's targets against the reference server, as scale-bench/runtime-floor.ts did for creates). One workerd
// (Miniflare, a direct socket, as `npm run dev` runs mink) serves a Worker of a few dozen lines over its own
// embedded S3 endpoint (scripts/embedded-s3.ts, the one mink writes to), doing only the hops and the write
// DESIGN.md gives an append:
//
//   the router   a Worker at the service's origin: the owner is one of three Durable Objects by the name's
//                hash; node-0's streams are served through it, the others are answered 307 to
//                `/n/<node>/v1/stream/<name>` (ROUTER_MODE=redirect, as `npm run dev`); a node's address
//                goes straight to its Durable Object
//   the node     a Durable Object that answers a create 201 and, for an append, reads the body, queues it and
//                answers 204 once an object holding it landed
//   the WAL      the node's queue goes to the store in objects of everything waiting when a slot frees, at most
//                `inFlight` at once, each one PUT signed with aws4fetch (SigV4) and sent `If-None-Match: *`
//
// No framing, no sequence rules, no offsets, no metadata log, no reads: a mink append does all of this and
// more, so these figures bound what any append path of this design reaches on this runtime.
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { fileURLToPath } from "node:url";
import { startEmbeddedS3 } from "../../../scripts/embedded-s3.ts";
import { descendantsNamed, type ProcessPicker } from "./process-cpu.ts";
import { S3_LABEL, type PhaseName, type Started } from "./sides.ts";

const REPOSITORY = fileURLToPath(new URL("../../../", import.meta.url));
/** The same pin as the embedded endpoint and wrangler.toml. */
const COMPATIBILITY_DATE = "2026-04-26";

const WORKER_SOURCE = `
import { DurableObject } from "cloudflare:workers";
import { AwsClient } from "aws4fetch";

const NODES = 3;

export class Node extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.s3 = new AwsClient({ accessKeyId: env.S3_ACCESS_KEY_ID, secretAccessKey: env.S3_SECRET_ACCESS_KEY, service: "s3", region: "auto" });
    this.waiting = [];
    this.inFlight = 0;
    // An object's key: this incarnation's (a Durable Object idle between phases is evicted and starts again) and a seq.
    this.incarnation = crypto.randomUUID();
    this.seq = 0;
  }
  async fetch(request) {
    if (request.method === "PUT") return new Response(null, { status: 201 });
    const bytes = new Uint8Array(await request.arrayBuffer());
    await new Promise((resolve, reject) => {
      this.waiting.push({ bytes, resolve, reject });
      this.pump();
    });
    return new Response(null, { status: 204 });
  }
  pump() {
    while (this.inFlight < Number(this.env.IN_FLIGHT) && this.waiting.length > 0) {
      const batch = this.waiting;
      this.waiting = [];
      const body = new Uint8Array(batch.reduce((sum, append) => sum + append.bytes.length, 0));
      let at = 0;
      for (const append of batch) { body.set(append.bytes, at); at += append.bytes.length; }
      const key = this.env.S3_ENDPOINT + "/" + this.env.S3_BUCKET + "/floor/" + this.incarnation + "/" + String(this.seq++).padStart(12, "0");
      this.inFlight++;
      this.s3.fetch(key, { method: "PUT", body, headers: { "if-none-match": "*" } }).then(async (response) => {
        await response.arrayBuffer();
        if (!response.ok) throw new Error("PUT " + key + ": " + response.status);
        for (const append of batch) append.resolve();
      }).catch((error) => {
        for (const append of batch) append.reject(error);
      }).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }
}

function ownerOf(name) {
  let hash = 0;
  for (let i = 0; i < name.length; i++) hash = (hash * 31 + name.charCodeAt(i)) | 0;
  return "node-" + (Math.abs(hash) % NODES);
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const atNode = /^\\/n\\/(node-[0-9]+)\\/v1\\/stream\\/(.+)$/.exec(url.pathname);
    const atRouter = /^\\/v1\\/stream\\/(.+)$/.exec(url.pathname);
    const name = atNode ? atNode[2] : atRouter ? atRouter[1] : null;
    if (name === null) return new Response(null, { status: 404 });
    const owner = ownerOf(decodeURIComponent(name));
    if (atRouter && owner !== "node-0") {
      await request.arrayBuffer();
      return new Response(null, { status: 307, headers: { location: url.origin + "/n/" + owner + "/v1/stream/" + name } });
    }
    return env.NODE.get(env.NODE.idFromName(owner)).fetch(request);
  },
};
`;

/** The Worker with aws4fetch bundled in (resolved from this repository's node_modules). */
async function bundledWorker(): Promise<string> {
  const result = await build({
    stdin: { contents: WORKER_SOURCE, resolveDir: REPOSITORY, sourcefile: "append-floor-worker.js", loader: "js" },
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    external: ["cloudflare:workers"],
    logLevel: "silent",
  });
  const output = result.outputFiles[0];
  if (output === undefined) throw new Error("esbuild produced no output for the append floor");
  return output.text;
}

export interface AppendFloorOptions {
  /** Milliseconds every request to its S3 endpoint waits (0: none). */
  readonly latencyMs: number;
  /** PUTs each node keeps in flight at most. */
  readonly inFlight: number;
  readonly phases: readonly PhaseName[];
}

/** Starts the floor: its embedded S3 endpoint, then its Worker; both workerds count as the floor's processes. */
export async function startAppendFloor(name: string, options: AppendFloorOptions): Promise<Started> {
  const before = descendantsNamed(process.pid, "workerd");
  const s3 = await startEmbeddedS3({ latencyMs: options.latencyMs });
  const s3Pids = [...descendantsNamed(process.pid, "workerd")].filter((pid) => !before.has(pid));
  const miniflare = new Miniflare({
    modules: true,
    script: await bundledWorker(),
    compatibilityDate: COMPATIBILITY_DATE,
    bindings: {
      S3_ENDPOINT: s3.url,
      S3_BUCKET: s3.bucket,
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      IN_FLIGHT: String(options.inFlight),
    },
    durableObjects: { NODE: { className: "Node", useSQLite: true } },
    cf: false,
    host: "127.0.0.1",
    port: 0,
    unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
  });
  let url: URL;
  try {
    await miniflare.ready;
    url = await miniflare.unsafeGetDirectURL();
  } catch (error) {
    await miniflare.dispose().catch(() => undefined);
    await s3.stop();
    throw error;
  }
  const workerPids = [...descendantsNamed(process.pid, "workerd")].filter((pid) => !before.has(pid) && !s3Pids.includes(pid));
  const processes: ProcessPicker = (table) => new Map([
    ...workerPids.filter((pid) => table.has(pid)).map((pid): [number, string] => [pid, "floor workerd"]),
    ...s3Pids.filter((pid) => table.has(pid)).map((pid): [number, string] => [pid, S3_LABEL]),
  ]);
  return {
    side: { name, baseUrl: url.origin, processes, phases: options.phases },
    stop: async () => {
      await miniflare.dispose();
      await s3.stop();
    },
  };
}
