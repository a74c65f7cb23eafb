// Routing (docs/router.md, docs/architecture.md): where a stream request goes, decided from a possibly stale view.
// Routing is only a performance decision: fencing in the metadata log and the object store keeps a stale
// view from ever producing a second writer, so the worst a stale view costs is one more hop or a 409.
//
// The router (the Worker) acts for one local node; a node answers requests that reach it the same way, from
// its own view. One table, rows in order, the first that matches wins:
//
// | #  | View of the stream                    | At                  | Decision                                  |
// | -- | ------------------------------------- | ------------------- | ----------------------------------------- |
// | R1a| not registered, the view names nodes placement would choose among | router | serve at the one the name hashes to among them |
// | R1 | not registered                        | router or node      | serve here (creates land where they come) |
// | R2 | transfer pending, here is the target  | router or node      | park until the transfer settles, then serve |
// | R3 | transfer pending, at the router       | router              | go to the target                          |
// | R3 | transfer pending, here is the source  | node                | 307 to the target (it parks the request)  |
// | R4 | transfer pending, here is not target  | node                | 409 transfer_pending, naming the target   |
// | R5 | opened or placed, owned here          | router or node      | serve here                                |
// | R6a| opened or placed, owned elsewhere by a node declared dead, or waiting for a takeover | router or node | unavailable: 503, retry (never a 307 to an owner that cannot serve yet) |
// | R6 | opened or placed, owned elsewhere     | router or node      | go to the owner                           |
// | R7 | closed, or created and never placed   | router or node      | serve here (the open re-places it here)   |
//
// R1a: the router acts for one node, but a new name does best at a node placement would pick, since the
// claim there opens it where it arrived (PS5 gives ties to the proposer) instead of placing it elsewhere
// and answering a 307. Hashing the name spreads concurrent creates over a tie instead of sending them all to
// one node, which only the first of them would still be least loaded for. A stale choice costs what R1
// always could: the node's claim places the stream elsewhere and redirects.
//
// "Go to" is a 307 to the node's advertised address, or, in forwarding mode (for clients that cannot
// follow a redirect), the router forwarding the request itself. A node never forwards: it redirects.

import { domainError, type DomainError } from "./errors.ts";
import { isDeclaredDead } from "./meta/failover-rules.ts";
import type { NodeRecord } from "./meta/state.ts";
import type { StreamLookup } from "./meta/view.ts";

export type RoutingMode = "redirect" | "forward";

export interface RoutingInput {
  /** What the view says about the requested name. */
  lookup: Pick<StreamLookup, "stream" | "ownerNode" | "targetNode" | "takeoverPending" | "placeAmong">;
  /** The stream's name (R1a hashes it). */
  name: string;
  /** The node this router acts for, or the node that received the request. */
  hereNodeId: string;
  /** Whether the request is at the router (the Worker's public entry) or already at a node. */
  at: "router" | "node";
  mode: RoutingMode;
}

export type RoutingDecision =
  | { kind: "serve"; nodeId: string; rule: "R1" | "R1a" | "R5" | "R7" }
  | { kind: "park"; nodeId: string; rule: "R2" }
  | { kind: "redirect"; node: NodeRecord; rule: "R3" | "R6" }
  | { kind: "forward"; node: NodeRecord; rule: "R3" | "R6" }
  | { kind: "transfer_pending"; target: string; targetAddr: string | null; rule: "R4" }
  /** The view names an owner or target it has no node record for: retry after the view catches up. */
  | { kind: "unavailable"; reason: string };

export function routeStream(input: RoutingInput): RoutingDecision {
  const { lookup, hereNodeId, at, mode } = input;
  const stream = lookup.stream;
  if (stream === null) {
    const among = lookup.placeAmong ?? [];
    if (at === "router" && among.length > 0) return { kind: "serve", nodeId: among[nameHash(input.name) % among.length]!, rule: "R1a" };
    return { kind: "serve", nodeId: hereNodeId, rule: "R1" };
  }

  const transfer = stream.transfer;
  if (transfer !== undefined) {
    if (transfer.target === hereNodeId) return { kind: "park", nodeId: hereNodeId, rule: "R2" };
    // The source handed the stream off (or is about to): requests go to the target, which parks them.
    if (at === "node" && transfer.source !== hereNodeId) {
      return { kind: "transfer_pending", target: transfer.target, targetAddr: lookup.targetNode?.addr ?? null, rule: "R4" };
    }
    return goTo(lookup.targetNode, transfer.target, at === "node" ? "redirect" : mode, "R3");
  }

  if ((stream.ownership === "opened" || stream.ownership === "placed") && stream.owner !== null) {
    if (stream.owner === hereNodeId) return { kind: "serve", nodeId: hereNodeId, rule: "R5" };
    if (lookup.takeoverPending === true || (lookup.ownerNode !== null && isDeclaredDead(lookup.ownerNode))) {
      return { kind: "unavailable", reason: `the owner of this stream (${stream.owner}) is being replaced after a failure` };
    }
    // A node never forwards: a request that reached the wrong node goes back to the client as a redirect.
    return goTo(lookup.ownerNode, stream.owner, at === "node" ? "redirect" : mode, "R6");
  }

  return { kind: "serve", nodeId: hereNodeId, rule: "R7" };
}

/** The decisions that serve nowhere. */
export type Refusal = Extract<RoutingDecision, { kind: "transfer_pending" | "unavailable" }>;

/**
 * The answer to a refusal, the same from the router and from every node: R4 is a 409 naming the target
 * (and its address, when the view has it) so the client can go there; a view that names a node it has no
 * record for is a 503 to retry once the view caught up.
 */
export function refusalError(decision: Refusal): DomainError {
  if (decision.kind === "unavailable") return domainError("unavailable", `${decision.reason}; retry`);
  return domainError("conflict", `the stream is being transferred to node ${decision.target}; retry there`, {
    target: decision.target,
    ...(decision.targetAddr === null ? {} : { targetAddr: decision.targetAddr }),
  });
}

function goTo(node: NodeRecord | null, nodeId: string, mode: RoutingMode, rule: "R3" | "R6"): RoutingDecision {
  if (node === null || node.id !== nodeId) return { kind: "unavailable", reason: `no address known for node ${nodeId}` };
  return mode === "forward" ? { kind: "forward", node, rule } : { kind: "redirect", node, rule };
}

/** FNV-1a over the name's UTF-16 code units: the same node for the same name in every isolate. */
function nameHash(name: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}
