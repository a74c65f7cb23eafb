// The admin endpoints that move streams (docs/operations.md): a node's slots, transfers
// proposed by an operator, the pending transfers, drain (mark a node draining and begin a transfer of
// each stream it holds; progress; undrain) and rebalance (one round of planRebalance). Every change is a MetaLog proposal or RPC: this file only
// checks the request with zod and maps the MetaLog's answer to HTTP. Mounted under /admin behind
// requireAdmin (routes.ts).
import { workerLog } from "../log/logger.ts";
import { Hono } from "hono";
import { z } from "zod";
import { domainError, type DomainError } from "../core/errors.ts";
import type { NodeRecord } from "../core/meta/index.ts";
import { drainStall, isDrained, type DrainProgress, type DrainStall } from "../core/meta/duties.ts";
import { rebalanceBands, type RebalanceMove } from "../core/meta/rebalance.ts";
import { parseStreamName } from "../core/protocol/stream-name.ts";
import { checkParam, json, metaOf, readBody, type AdminEnv } from "./common.ts";
import { errorResponse } from "../http/responses.ts";

/** The most slots one node may be given (a weight, not a count of anything). */
const MAX_SLOTS = 1_000_000;

const nodeIdSchema = z.string().min(1).max(256);
const slotsBody = z.object({ slots: z.int().min(0).max(MAX_SLOTS) });
const transferBody = z.object({ stream: z.string().min(1), target: nodeIdSchema });

/** Transfers a rebalance keeps pending at most (its `maxConcurrent`): the default and the bounds. */
const DEFAULT_REBALANCE_CONCURRENT = 4;
const MAX_REBALANCE_CONCURRENT = 64;
// Strict: a misspelt `dryRun` must not turn a dry run into a real one.
const rebalanceBody = z.strictObject({
  dryRun: z.boolean().optional(),
  maxConcurrent: z.int().min(1).max(MAX_REBALANCE_CONCURRENT).optional(),
});

export const adminTransferRoutes = new Hono<AdminEnv>();

/** A MetaLog that throws (unreachable, overloaded) is a 503 the operator retries, not a bare 500. */
adminTransferRoutes.onError((error) => {
  workerLog.log("worker.error", { during: "admin_meta_log" }, error);
  return errorResponse(domainError("unavailable", "the metadata log did not answer; retry"));
});

function nodeBody(node: NodeRecord): Record<string, unknown> {
  return { id: node.id, epoch: node.epoch, address: node.addr, slots: node.slots, draining: node.draining };
}

/** PUT /admin/nodes/:id/slots {"slots": n}: SetSlots (table SS); future placements follow the new weight. */
adminTransferRoutes.put("/nodes/:id/slots", async (c) => {
  const nodeId = checkParam(c.req.param("id"), "id", nodeIdSchema);
  if (!nodeId.ok) return errorResponse(nodeId.error);
  const body = await readBody(c, slotsBody);
  if (!body.ok) return errorResponse(body.error);
  const result = await metaOf(c.env).propose({ type: "SetSlots", nodeId: nodeId.value, slots: body.value.slots });
  if (!result.ok) return errorResponse(result.error.code === "not_found" ? domainError("not_found", "no such node", { nodeId: nodeId.value }) : result.error);
  return json({ node: nodeBody(result.value.node) });
});

/**
 * A BeginTransfer rejection as the admin API answers it: another pending transfer is a 409 `conflict` (the
 * MetaLog's `transfer_pending` is a retryable 503 for stream clients, not for an operator's request).
 */
function transferRejection(error: DomainError, name: string, target: string): DomainError {
  const d = error.details ?? {};
  if (error.code === "transfer_pending") {
    return domainError("conflict", `a transfer of this stream to ${String(d["target"])} is pending`, {
      source: d["source"] ?? null,
      target: d["target"] ?? null,
    });
  }
  if (error.code === "not_found") {
    return d["target"] !== undefined
      ? domainError("not_found", "the target node is not registered", { target })
      : domainError("not_found", "no such stream", { stream: name });
  }
  if (error.code === "invalid") return domainError("invalid", `cannot transfer ${name} to ${target}: ${error.message}`, error.details);
  return error;
}

/**
 * POST /admin/transfers {"stream": "<path as in /v1/stream/<path>>", "target": "<node id>"}: BeginTransfer
 * (table BT). 202 when it began, 200 with alreadyPending when the same transfer was pending (BT3).
 */
adminTransferRoutes.post("/transfers", async (c) => {
  const body = await readBody(c, transferBody);
  if (!body.ok) return errorResponse(body.error);
  const name = parseStreamName(body.value.stream);
  if (!name.ok) return errorResponse(domainError("invalid", `invalid body: body.stream: ${name.error.message}`));
  const { target } = body.value;
  const meta = metaOf(c.env);
  const { stream } = await meta.lookupStream({ name: name.value });
  if (stream === null) return errorResponse(domainError("not_found", "no such stream", { stream: name.value }));
  const result = await meta.propose({ type: "BeginTransfer", streamId: stream.id, target });
  if (!result.ok) return errorResponse(transferRejection(result.error, name.value, target));
  const record = result.value.stream;
  return json(
    {
      stream: { id: record.id, name: record.name, owner: record.owner, epoch: record.epoch, ownership: record.ownership },
      transfer: { source: result.value.transfer.source, target: result.value.transfer.target },
      alreadyPending: !result.changed,
    },
    result.changed ? 202 : 200,
  );
});

/** GET /admin/transfers: every pending transfer, as the MetaLog holds it now. */
adminTransferRoutes.get("/transfers", async (c) => {
  const { version, streams } = await metaOf(c.env).pendingTransfers();
  return json({
    version,
    transfers: streams.flatMap((stream) =>
      stream.transfer === undefined
        ? []
        : [{ streamId: stream.id, name: stream.name, source: stream.transfer.source, target: stream.transfer.target, epoch: stream.epoch, ownership: stream.ownership }],
    ),
  });
});

function progressBody(progress: DrainProgress): { nodeId: string; draining: boolean; remaining: number; transferring: number; incoming: number } {
  return {
    nodeId: progress.nodeId,
    draining: progress.draining,
    remaining: progress.remaining,
    transferring: progress.transferring,
    incoming: progress.incoming,
  };
}

/** Why a drain cannot go on by itself, in words an operator acts on. */
function stallBody(stall: DrainStall | null): { reason: string; streams: number; message: string } | null {
  if (stall === null) return null;
  const streams = stall.streams === 1 ? "1 stream" : `${stall.streams} streams`;
  const message =
    stall.reason === "unplaceable"
      ? `${streams} cannot move: no other node has slots and is not draining (add a node, or raise a node's slots, then drain again)`
      : `${streams} cannot move for now: the metadata log refused their transfers (a dead node's takeover may be pending); drain again shortly`;
  return { reason: stall.reason, streams: stall.streams, message };
}

const noSuchNode = (nodeId: string): Response => errorResponse(domainError("not_found", "no such node", { nodeId }));

/**
 * POST /admin/nodes/:id/drain: mark draining, begin a transfer of each stream it holds (planned by placement).
 * Idempotent, so a client follows a drain by calling it again: each call also plans what landed on the node
 * since (a transfer to it that was pending when the drain began), and says when the drain is stuck.
 */
adminTransferRoutes.post("/nodes/:id/drain", async (c) => {
  const nodeId = checkParam(c.req.param("id"), "id", nodeIdSchema);
  if (!nodeId.ok) return errorResponse(nodeId.error);
  const answer = await metaOf(c.env).drain(nodeId.value);
  if (!answer.ok) return answer.error.code === "not_found" ? noSuchNode(nodeId.value) : errorResponse(answer.error);
  if (answer.progress === null) return noSuchNode(nodeId.value);
  const { remaining, transferring, incoming } = answer.progress;
  return json(
    {
      nodeId: nodeId.value,
      draining: true,
      begun: answer.begun,
      unplaceable: answer.unplaceable,
      remaining,
      transferring,
      incoming,
      done: isDrained(answer.progress),
      stalled: stallBody(drainStall(answer.progress, answer)),
    },
    202,
  );
});

/** GET /admin/nodes/:id/drain: how far a drain got; done once nothing is placed on or opened by the node, or on its way to it. */
adminTransferRoutes.get("/nodes/:id/drain", async (c) => {
  const nodeId = checkParam(c.req.param("id"), "id", nodeIdSchema);
  if (!nodeId.ok) return errorResponse(nodeId.error);
  const progress = await metaOf(c.env).drainProgress(nodeId.value);
  if (progress === null) return noSuchNode(nodeId.value);
  return json({ ...progressBody(progress), done: isDrained(progress) });
});

/** DELETE /admin/nodes/:id/drain: the node takes placements again; pending transfers carry on. */
adminTransferRoutes.delete("/nodes/:id/drain", async (c) => {
  const nodeId = checkParam(c.req.param("id"), "id", nodeIdSchema);
  if (!nodeId.ok) return errorResponse(nodeId.error);
  const answer = await metaOf(c.env).undrain(nodeId.value);
  if (!answer.ok) return answer.error.code === "not_found" ? noSuchNode(nodeId.value) : errorResponse(answer.error);
  if (answer.progress === null) return noSuchNode(nodeId.value);
  return json({ ...progressBody(answer.progress), draining: false });
});

function moveBody(move: RebalanceMove): { streamId: string; name: string; from: string; to: string; kind: string } {
  return { streamId: move.streamId, name: move.name, from: move.from, to: move.to, kind: move.kind };
}

/**
 * POST /admin/rebalance {"dryRun"?: boolean, "maxConcurrent"?: 1..64 (default 4)}: one round of a rebalance
 * (MetaLog.rebalance: planRebalance, table RB, and the first transfers of its plan, in one step). 200 with
 * the plan for a dry run; 202 for a real round, with the transfers it began. Orphans are reported, not
 * moved (the coordinator re-leads them). A client repeats the call until `done`.
 */
adminTransferRoutes.post("/rebalance", async (c) => {
  const body = await readBody(c, rebalanceBody);
  if (!body.ok) return errorResponse(body.error);
  const dryRun = body.value.dryRun ?? false;
  const maxConcurrent = body.value.maxConcurrent ?? DEFAULT_REBALANCE_CONCURRENT;
  const answer = await metaOf(c.env).rebalance({ dryRun, maxConcurrent });
  const { plan } = answer;
  return json(
    {
      dryRun,
      maxConcurrent,
      plan: {
        orphans: plan.orphans.map(moveBody),
        moves: plan.moves.map(moveBody),
        meanLoad: plan.meanLoad,
        bands: rebalanceBands(plan.meanLoad),
        unplaceable: plan.unplaceable,
      },
      begun: answer.begun.map(moveBody),
      pending: answer.pending,
      done: answer.done,
      version: answer.version,
    },
    dryRun ? 200 : 202,
  );
});
