// What the transfer tests share: three nodes (tr-0..2) in workerd over the in-memory object store, requests
// straight to node addresses, the metadata log, and ways to hold a transfer at a step (pause a node's
// watcher) or crash one node (reset its Durable Object).
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type { StreamNode } from "../../durable-objects/stream-node.ts";
import type { Env } from "../../src/env.ts";
import { diagnosticMetaLog } from "./diagnostic-meta-log.ts";
import { toNodeAddress } from "./router-as-worker.ts";
import { eventually } from "../support/eventually.ts";

const baseEnv = env as unknown as Env;
export const NODES = ["tr-0", "tr-1", "tr-2"];
export const ORIGIN = "http://127.0.0.1:8787";
export const e: Env = { ...baseEnv, NODE_IDS: NODES.join(","), PUBLIC_ORIGIN: ORIGIN };
export const meta = diagnosticMetaLog(baseEnv.META_LOG);
export const TEXT = { "content-type": "text/plain" };

export const stub = (id: string): DurableObjectStub<StreamNode> => baseEnv.STREAM_NODE.getByName(id) as DurableObjectStub<StreamNode>;

/** A request straight to a node's address (no redirect followed). */
export function call(nodeId: string, method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}): Promise<Response> {
  const request = new Request(`${ORIGIN}/n/${nodeId}/v1/stream/${path}`, { method, headers: init.headers, body: init.body ?? null });
  return toNodeAddress(e, nodeId, request);
}

export async function record(name: string) {
  const { stream } = await meta.lookupStream({ name });
  if (stream === null) throw new Error(`${name} is not registered`);
  return stream;
}

/** How long the transfer tests wait for a state of the log or a node (a transfer, a restart). */
const SETTLE_TIMEOUT_MS = 15_000;

/**
 * Waits (eventually, with SETTLE_TIMEOUT_MS) for `probe` to give a value; a probe that throws fails the test
 * at once (a stream not registered, a node that does not answer).
 */
export function waitFor<T>(what: string, probe: () => Promise<T>) {
  return eventually(probe, { what, timeoutMs: SETTLE_TIMEOUT_MS, errors: "fail" });
}

/** Waits until `name` is opened by `owner` with no transfer pending (the target's pre-warm). */
export function openedBy(name: string, owner: string) {
  return waitFor(`${name} opened by ${owner}`, async () => {
    const stream = await record(name);
    return stream.owner === owner && stream.ownership === "opened" && stream.transfer === undefined ? stream : null;
  });
}

/** Starts every node (registers it); the first node gets all placements unless slots say otherwise. */
async function startNodes(slots: Record<string, number>): Promise<void> {
  for (const id of NODES) await stub(id).ping();
  await waitFor("nodes registered", async () => (await meta.view()).nodes.filter((n) => NODES.includes(n.id)).length === NODES.length);
  for (const [nodeId, count] of Object.entries(slots)) {
    const result = await meta.propose({ type: "SetSlots", nodeId, slots: count });
    if (!result.ok) throw new Error(result.error.message);
  }
}

/** Creates `name` placed on `nodeId` (the others take no placements meanwhile); every node has slots after. */
export async function createOn(nodeId: string, name: string, body: string): Promise<void> {
  await startNodes(Object.fromEntries(NODES.map((id) => [id, id === nodeId ? 1 : 0])));
  const created = await call(nodeId, "PUT", name, { headers: TEXT, body });
  expect(created.status).toBe(201);
  await startNodes(Object.fromEntries(NODES.map((id) => [id, 1])));
}

export async function begin(name: string, target: string): Promise<void> {
  const stream = await record(name);
  const result = await meta.propose({ type: "BeginTransfer", streamId: stream.id, target });
  if (!result.ok) throw new Error(`BeginTransfer: ${result.error.message}`);
}

/** Pauses (or resumes) a node's watcher loop, so a transfer stays where a test wants it. */
export async function pauseWatcher(nodeId: string, paused = true): Promise<void> {
  await runInDurableObject(stub(nodeId), (node) => {
    if (node.incarnation !== null) node.incarnation.watcher.paused = paused;
  });
}

/** Crashes one node (its Durable Object is reset) and waits until a new incarnation has started. */
export async function crash(nodeId: string): Promise<void> {
  const before = (await stub(nodeId).ping()).nodeEpoch;
  await runInDurableObject(stub(nodeId), (_node, state) => state.abort("crash test")).catch(() => undefined);
  await waitFor(`${nodeId} restarted`, async () => {
    const ping = await stub(nodeId).ping();
    return ping.nodeEpoch !== before && ping.started;
  });
}

export async function text(response: Response): Promise<string> {
  return response.text();
}


/** Like `call`, following 307s to other nodes' addresses as a client does. */
export async function follow(nodeId: string, method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}): Promise<Response> {
  let response = await call(nodeId, method, path, init);
  for (let hop = 0; response.status === 307 && hop < 5; hop++) {
    const location = new URL(response.headers.get("location") ?? "");
    await response.body?.cancel();
    const match = /^\/n\/([^/]+)\/v1\/stream\/(.*)$/.exec(location.pathname);
    if (match === null) throw new Error(`unexpected redirect to ${location.href}`);
    response = await call(match[1]!, method, `${match[2]!}${location.search}`, init);
  }
  return response;
}
