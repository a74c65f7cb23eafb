// The stream admin endpoints (docs/operations.md), mounted under /admin behind requireAdmin (routes.ts):
// `GET /admin/streams?prefix=&after=&limit=`, one page of the metadata log's streams by name (table LS in
// src/core/meta/stream-listing.ts) with each opened stream's tail from its owner, and `GET
// /admin/streams/<path>`, one stream's record. The tails come from one `tails` RPC per owner node of the
// page (src/ports/stream-node-client.ts), in parallel and bounded in time: a node that does not answer
// leaves its streams' `tail` null and never fails the page.
import { workerLog } from "../log/logger.ts";
import { Hono } from "hono";
import { domainError } from "../core/errors.ts";
import { parseStreamListQuery, type ListedStream } from "../core/meta/index.ts";
import { parseStreamName } from "../core/protocol/stream-name.ts";
import { type Env, streamNodeClient } from "../env.ts";
import type { StreamTailInfo } from "../ports/stream-node-client.ts";
import { nodeIdsOf } from "../router/router.ts";
import { json, metaOf, type AdminEnv } from "./common.ts";
import { errorResponse } from "../http/responses.ts";

const STREAMS_PREFIX = "/admin/streams/";
/** How long the listing waits for a node's tails before it shows that node's streams with `tail` null. */
const TAILS_TIMEOUT_MS = 2_000;
const LIST_PARAMS = ["prefix", "after", "limit"] as const;

export const adminStreamRoutes = new Hono<AdminEnv>();

/** A MetaLog that throws (unreachable, overloaded) is a 503 the operator retries, not a bare 500. */
adminStreamRoutes.onError((error) => {
  workerLog.log("worker.error", { during: "admin_streams" }, error);
  return errorResponse(domainError("unavailable", "the metadata log did not answer; retry"));
});

/** One page of the streams by name, each opened one with its tail from its owner. */
adminStreamRoutes.get("/streams", async (c) => {
  const params = new URL(c.req.url).searchParams;
  for (const name of LIST_PARAMS) {
    if (params.getAll(name).length > 1) return errorResponse(domainError("invalid", `${name} is given more than once`));
  }
  const query = parseStreamListQuery({ prefix: params.get("prefix"), after: params.get("after"), limit: params.get("limit") });
  if (!query.ok) return errorResponse(query.error);
  const listing = await metaOf(c.env).listStreams(query.value);
  const tails = await tailsOf(c.env, listing.streams);
  return json({
    version: listing.version,
    streams: listing.streams.map(({ stream, ownerAddress }) => ({
      name: stream.name,
      id: stream.id,
      owner: stream.owner,
      ownerAddress,
      epoch: stream.epoch,
      ownership: stream.ownership,
      contentType: typeof stream.config["contentType"] === "string" ? stream.config["contentType"] : null,
      pendingTransfer: stream.transfer === undefined ? null : { source: stream.transfer.source, target: stream.transfer.target },
      tail: tailBody(tails.get(stream.id)),
    })),
    next: listing.next,
  });
});

/** One stream's record in the metadata log: owner, epoch, ownership state, pending transfer. */
adminStreamRoutes.get("/streams/*", async (c) => {
  const path = new URL(c.req.url).pathname;
  const name = parseStreamName(path.startsWith(STREAMS_PREFIX) ? path.slice(STREAMS_PREFIX.length) : "");
  if (!name.ok) return errorResponse(name.error);
  const lookup = await metaOf(c.env).lookupStream({ name: name.value });
  const stream = lookup.stream;
  if (stream === null) return errorResponse(domainError("not_found", "no such stream"));
  return json({
    version: lookup.version,
    id: stream.id,
    name: stream.name,
    owner: stream.owner,
    ownerAddress: lookup.ownerNode?.addr ?? null,
    epoch: stream.epoch,
    ownership: stream.ownership,
    closedAtEpoch: stream.closedAtEpoch ?? null,
    pendingTransfer:
      stream.transfer === undefined
        ? null
        : { source: stream.transfer.source, target: stream.transfer.target, targetAddress: lookup.targetNode?.addr ?? null },
    config: stream.config,
  });
});

function tailBody(tail: StreamTailInfo | undefined): { offset: string; bytes: number; closed: boolean } | null {
  return tail === undefined ? null : { offset: tail.offset, bytes: tail.bytes, closed: tail.closed };
}

/**
 * The tails of the page's opened streams, by stream id: one call per owner node, in parallel. Only nodes of
 * NODE_IDS are asked (a call wakes the node it names, so an id the deployment does not run is never
 * started by a listing); a node that fails or takes longer than TAILS_TIMEOUT_MS is left out.
 */
async function tailsOf(env: Env, streams: readonly ListedStream[]): Promise<Map<string, StreamTailInfo>> {
  const served = new Set(nodeIdsOf(env));
  const byOwner = new Map<string, string[]>();
  for (const { stream } of streams) {
    if (stream.ownership !== "opened" || stream.owner === null || !served.has(stream.owner)) continue;
    const ids = byOwner.get(stream.owner) ?? [];
    ids.push(stream.id);
    byOwner.set(stream.owner, ids);
  }
  const answers = await Promise.all([...byOwner].map(([owner, ids]) => askTails(env, owner, ids)));
  const tails = new Map<string, StreamTailInfo>();
  for (const answer of answers) for (const tail of answer) tails.set(tail.streamId, tail);
  return tails;
}

/** One node's tails of `ids` (only those: a node never answers for a stream it was not asked about); [] when it fails or is late. */
async function askTails(env: Env, owner: string, ids: readonly string[]): Promise<StreamTailInfo[]> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), TAILS_TIMEOUT_MS);
  });
  try {
    const answer = await Promise.race([streamNodeClient(env.STREAM_NODE, owner).tails(ids), late]);
    if (answer === null) workerLog.log("worker.error", { during: "node_tails", target: owner, timeoutMs: TAILS_TIMEOUT_MS }, "no answer in time");
    const asked = new Set(ids);
    return (answer ?? []).filter((tail) => asked.has(tail.streamId));
  } catch (error) {
    workerLog.log("worker.error", { during: "node_tails", target: owner }, error);
    return [];
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
