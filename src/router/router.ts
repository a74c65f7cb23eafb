// The router: the Worker's part of routing (docs/router.md; the table is src/core/routing.ts).
// It acts for one local node (LOCAL_NODE, default the first of NODE_IDS), resolves the stream name in a
// per-isolate cached view, and then serves through the local node, answers a 307 to the owner's advertised
// address, or (ROUTER_MODE=forward, for clients that cannot follow a redirect) sends the request to the
// owner itself and follows the owner's own redirects. docs/router.md has the flows.
import { workerLog } from "../log/logger.ts";
import { domainError } from "../core/errors.ts";
import type { StreamLookup } from "../core/meta/view.ts";
import type { RequestTarget } from "../core/protocol/request-target.ts";
import { checkStreamName } from "../core/protocol/stream-name.ts";
import { refusalError, routeStream, type RoutingMode } from "../core/routing.ts";
import { type Env, metaLogClient, streamNodeClient } from "../env.ts";
import { errorResponse, readBeforeRedirect, redirectResponse } from "../http/responses.ts";
import { preflightResponse } from "../http/security-headers.ts";
import { targetOf, targetOfUrl } from "../http/request-target.ts";
import { edgeLimits } from "../core/edge-limits.ts";
import { declaredLength, readAtMost } from "../subscriptions/bounded-read.ts";
import { ViewCache, type LookupSource } from "./view-cache.ts";

/** Default trust in a cached lookup: short, since a stale entry costs a hop. */
const DEFAULT_VIEW_CACHE_TTL_MS = 1_000;
/** Redirects a forwarding router follows for one request (a create placed elsewhere, a fork hand-off). */
const MAX_FORWARD_HOPS = 4;
const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;
/** A refused body is read and dropped up to this multiple of the limit (as the nodes do), then cancelled. */
const DRAIN_LIMIT_FACTOR = 4;

interface RouterSettings {
  readonly nodeIds: readonly string[];
  readonly localNodeId: string;
  readonly mode: RoutingMode;
  readonly viewCacheTtlMs: number;
  readonly negativeCacheTtlMs: number;
  readonly maxBodyBytes: number;
}

export function nodeIdsOf(env: Env): string[] {
  const ids = (env.NODE_IDS ?? "").split(",").map((id) => id.trim()).filter((id) => id !== "");
  return ids.length > 0 ? ids : ["node-0"];
}

/** Settings per env object: an isolate's vars do not change, and every request asked (its parse was 0.6% of the isolate's CPU under appends). */
const settingsByEnv = new WeakMap<Env, RouterSettings>();

export function routerSettings(env: Env): RouterSettings {
  let settings = settingsByEnv.get(env);
  if (settings === undefined) {
    settings = readRouterSettings(env);
    settingsByEnv.set(env, settings);
  }
  return settings;
}

function readRouterSettings(env: Env): RouterSettings {
  const nodeIds = nodeIdsOf(env);
  const local = (env.LOCAL_NODE ?? "").trim();
  const ttl = Number(env.VIEW_CACHE_TTL_MS ?? "");
  const maxBody = Number(env.MAX_BODY_BYTES ?? "");
  const { limits, warnings } = edgeLimits(env);
  for (const warning of warnings) warnOnce(warning);
  return {
    nodeIds,
    localNodeId: local !== "" && nodeIds.includes(local) ? local : (nodeIds[0] ?? "node-0"),
    mode: env.ROUTER_MODE === "forward" ? "forward" : "redirect",
    viewCacheTtlMs: Number.isFinite(ttl) && ttl >= 0 && env.VIEW_CACHE_TTL_MS !== "" ? ttl : DEFAULT_VIEW_CACHE_TTL_MS,
    negativeCacheTtlMs: limits.negativeCacheTtlMs,
    maxBodyBytes: Number.isSafeInteger(maxBody) && maxBody > 0 ? maxBody : DEFAULT_MAX_BODY_BYTES,
  };
}

const warned = new Set<string>();
/** A bad setting is worth one line per isolate, not one per env object. */
function warnOnce(warning: string): void {
  if (warned.has(warning)) return;
  warned.add(warning);
  workerLog.log("warning", { message: warning });
}

/** What the router needs besides its settings; tests pass their own cache. */
export interface RouterDeps {
  readonly cache: ViewCache;
  readonly lookup: LookupSource;
}

let isolateCache: ViewCache | null = null;
/** Node lists already woken by this isolate (each start registers the node, so placement can pick it). */
const woken = new Set<string>();

function defaultRouterDeps(env: Env, settings: RouterSettings): RouterDeps {
  isolateCache ??= new ViewCache({ ttlMs: settings.viewCacheTtlMs, negativeTtlMs: settings.negativeCacheTtlMs });
  const meta = metaLogClient(env.META_LOG);
  return { cache: isolateCache, lookup: (name) => meta.lookupStream({ name }) };
}

/** A request to `/v1/stream/<path>` at the router. */
export async function routeRequest(env: Env, request: Request, deps?: RouterDeps): Promise<Response> {
  if (request.method === "OPTIONS") return preflightResponse();
  const settings = routerSettings(env);
  const { cache, lookup: source } = deps ?? defaultRouterDeps(env, settings);
  await wakeNodes(env, settings.nodeIds);
  const url = new URL(request.url);
  const target = targetOf(request);
  const name = checkStreamName(target.kind === "stream" ? target.name : "");
  // A bad name is the local node's to refuse (400), with the same checks as everywhere.
  if (!name.ok) return toNode(env, settings.localNodeId, request);

  let lookup: StreamLookup;
  try {
    lookup = await cache.lookup(source, name.value);
  } catch (error) {
    workerLog.log("worker.error", { during: "lookup" }, error);
    return errorResponse(domainError("unavailable", "the metadata log is unavailable; retry"));
  }
  const response = await routeByLookup(env, settings, { name: name.value, lookup }, request, url);
  // A name cached as absent that was answered with anything but a 404 exists now (a create, a redirect
  // from the local node): drop the entry so this isolate's next request looks it up (view-cache.ts).
  if (lookup.stream === null && response.status !== 404) cache.invalidate(name.value);
  return response;
}

async function routeByLookup(env: Env, settings: RouterSettings, { name, lookup }: { name: string; lookup: StreamLookup }, request: Request, url: URL): Promise<Response> {
  const decision = routeStream({ lookup, name, hereNodeId: settings.localNodeId, at: "router", mode: settings.mode });
  switch (decision.kind) {
    case "serve":
    case "park":
      // R2: the local node is the transfer target and parks the request itself. R1a: a new name goes to a
      // node placement would pick, which opens it there.
      return settings.mode === "forward" ? forward(env, settings, decision.nodeId, request) : toNode(env, decision.nodeId, request);
    case "redirect":
      return (await readBeforeRedirect(request, settings.maxBodyBytes)) ?? redirectResponse(decision.node.addr, url);
    case "forward":
      return forward(env, settings, decision.node.id, request);
    case "transfer_pending":
    case "unavailable":
      return errorResponse(refusalError(decision));
  }
}

/** `/n/<node-id>/v1/stream/<path>`: straight to that node, which answers from its own view. */
export async function toNodeAddress(env: Env, nodeId: string, request: Request): Promise<Response> {
  if (!nodeIdsOf(env).includes(nodeId)) return errorResponse(domainError("not_found", "no such node"));
  if (request.method === "OPTIONS") return preflightResponse();
  return toNode(env, nodeId, request);
}

/**
 * Forwarding mode: the router sends the request to the node and follows the node's 307s to other nodes'
 * addresses (a create placed elsewhere, a stale view at the node), so the client sees one answer. The body
 * is read once and resent on each hop. A body whose declared length is over MAX_BODY_BYTES goes once, to be
 * refused by the node with 413; one without a length is read to the limit and no further (413 here).
 */
async function forward(env: Env, settings: RouterSettings, firstNodeId: string, request: Request): Promise<Response> {
  const declared = declaredLength(request.headers);
  if (declared !== null && declared > settings.maxBodyBytes) return toNode(env, firstNodeId, request);
  // Without a length the body is read to the bound, never further: over it, 413 here.
  const read = await readAtMost(request.body, settings.maxBodyBytes, { drainBytes: settings.maxBodyBytes * DRAIN_LIMIT_FACTOR });
  if (!read.ok) {
    return errorResponse(domainError("too_large", "the request body is over the size limit", { maxBytes: settings.maxBodyBytes }));
  }
  const body = request.body === null ? null : read.bytes;
  let nodeId = firstNodeId;
  for (let hop = 0; ; hop++) {
    const attempt = new Request(request.url, { method: request.method, headers: request.headers, body, signal: request.signal });
    const response = await toNode(env, nodeId, attempt);
    if (response.status !== 307 || hop >= MAX_FORWARD_HOPS) return response;
    const next = nodeOfLocation(response.headers.get("location"), settings.nodeIds);
    if (next === null) return response;
    nodeId = next;
  }
}

/** The node a `<origin>/n/<node-id>/...` Location names, when it is one of ours. */
function nodeOfLocation(location: string | null, nodeIds: readonly string[]): string | null {
  if (location === null) return null;
  let target: RequestTarget;
  try {
    target = targetOfUrl(new URL(location));
  } catch {
    return null;
  }
  const id = "node" in target ? target.node : null;
  return id !== null && nodeIds.includes(id) ? id : null;
}

/** A node that cannot start (object store or metadata log unreachable) answers 503, never a bare 500. */
export async function toNode(env: Env, nodeId: string, request: Request): Promise<Response> {
  try {
    // "manual": a node's 307 is an answer for the client (or for forward()), never followed by the stub.
    return await streamNodeClient(env.STREAM_NODE, nodeId).fetch(new Request(request, { redirect: "manual" }));
  } catch (error) {
    workerLog.log("worker.error", { during: "node_request", target: nodeId }, error);
    return errorResponse(domainError("unavailable", `node ${nodeId} is unavailable; retry`));
  }
}

/**
 * Starts every node of the deployment once per isolate: a node registers when it starts, and placement only
 * chooses registered nodes. Only the fact that it was done is shared between requests (a request must not
 * await another request's I/O): concurrent first requests each wake the nodes, which is harmless. A node
 * that fails to start is started again by the next request that reaches it.
 */
export async function wakeNodes(env: Env, nodeIds: readonly string[] = nodeIdsOf(env)): Promise<void> {
  const key = nodeIds.join(",");
  if (woken.has(key)) return;
  const results = await Promise.allSettled(nodeIds.map((id) => streamNodeClient(env.STREAM_NODE, id).ping()));
  results.forEach((result, i) => {
    if (result.status === "rejected") workerLog.log("worker.error", { during: "node_wake", target: nodeIds[i] ?? null }, result.reason);
  });
  woken.add(key);
}
