// Idempotent producers (PROTOCOL "Idempotent Producers"): per stream, each producer id has an epoch and
// the highest sequence number accepted in that epoch. `checkProducer` is the spec's validation table; it
// never mutates, so a request rejected later (by Stream-Seq, say) leaves the state as it was. The owner
// commits the returned state in the same step that makes the append durable, so a retry after a crash
// can never be accepted twice. Validation and append are serialized per stream by the owning node.
import { domainError, type DomainError } from "../errors.ts";
import { fail, ok, parseCanonicalUint, type Parsed } from "./parsed.ts";

export interface ProducerRequest {
  readonly producerId: string;
  readonly epoch: number;
  readonly seq: number;
}

export interface ProducerState {
  readonly epoch: number;
  /** Highest sequence accepted in `epoch`. */
  readonly lastSeq: number;
  /** When this producer's state last changed; used only by `pruneProducers`. */
  readonly lastUpdatedMs: number;
}

/** Producer id -> state, for one stream. Never inherited by forks. */
export type ProducerTable = ReadonlyMap<string, ProducerState>;

export const EMPTY_PRODUCERS: ProducerTable = new Map();

/**
 * The bounds on a stream's producers (docs/limits.md). `maxProducers` ids per stream; a new id
 * beyond it is admitted only if producers idle for at least `idleMs` can be pruned to make room.
 * `maxEpochStep`: how far one request may raise a producer's epoch, and the highest first epoch of a new
 * id, so that no request can fence an id for good by jumping to 2^53-1 (the reference client raises the
 * epoch by one per claim).
 */
export interface ProducerLimits {
  readonly maxProducers: number;
  readonly idleMs: number;
  readonly maxEpochStep: number;
  /**
   * MAX_NODE_PRODUCER_BYTES: what the node's producer tables hold together (`held`, by producerBytes) and
   * their bound. Absent: no node-wide bound.
   */
  readonly nodeBytes?: { readonly held: number; readonly max: number };
}

/**
 * What one producer costs a node, in bytes: its id (a header value, so a ByteString: one byte a character,
 * as V8 holds it) and the table entry with its state (measured at about 130 bytes in
 * test/cluster/memory-budget.test.ts). O(1): a node sums it over every producer it keeps.
 */
export function producerBytes(producerId: string): number {
  return producerId.length + PRODUCER_ENTRY_BYTES;
}

const PRODUCER_ENTRY_BYTES = 160;

/** No bound: the protocol's rules alone. */
export const UNBOUNDED_PRODUCERS: ProducerLimits = {
  maxProducers: Number.POSITIVE_INFINITY,
  idleMs: Number.POSITIVE_INFINITY,
  maxEpochStep: Number.MAX_SAFE_INTEGER,
};

/**
 * The three producer headers, as the request carries them (null: absent; "" is present and empty).
 * All three or none; a non-empty id; epoch and seq canonical decimal integers up to 2^53-1.
 */
export function parseProducerHeaders(
  producerId: string | null,
  epoch: string | null,
  seq: string | null,
): Parsed<ProducerRequest | null> {
  if (producerId === null && epoch === null && seq === null) return ok(null);
  if (producerId === null || epoch === null || seq === null) {
    return fail("invalid", "Producer-Id, Producer-Epoch and Producer-Seq must be sent together");
  }
  if (producerId === "") return fail("invalid", "Producer-Id must not be empty");
  const epochValue = parseProducerInteger(epoch);
  if (epochValue === null) return fail("invalid", "Producer-Epoch must be a non-negative integer up to 2^53-1");
  const seqValue = parseProducerInteger(seq);
  if (seqValue === null) return fail("invalid", "Producer-Seq must be a non-negative integer up to 2^53-1");
  return ok({ producerId, epoch: epochValue, seq: seqValue });
}

/** Digits only; leading zeros are tolerated here (the spec asks only for a non-negative integer). */
function parseProducerInteger(raw: string): number | null {
  if (!/^[0-9]+$/.test(raw)) return null;
  return parseCanonicalUint(raw.replace(/^0+(?=[0-9])/, ""));
}

export type ProducerCheck =
  /** New data: append it, then commit `state` for the producer. */
  | { readonly kind: "accept"; readonly state: ProducerState }
  /** Already appended: answer success without appending; `lastSeq` is the highest accepted seq. */
  | { readonly kind: "duplicate"; readonly epoch: number; readonly lastSeq: number }
  | { readonly kind: "reject"; readonly error: DomainError };

/** The spec's validation table, row by row (see docs/protocol-rules.md, PRD rows), and PRD-11's epoch step. */
export function checkProducer(
  table: ProducerTable,
  request: ProducerRequest,
  nowMs: number,
  limits: ProducerLimits = UNBOUNDED_PRODUCERS,
): ProducerCheck {
  const state = table.get(request.producerId);
  const accepted = (): ProducerCheck => ({
    kind: "accept",
    state: { epoch: request.epoch, lastSeq: request.seq, lastUpdatedMs: nowMs },
  });

  if (state === undefined) {
    // An unknown producer must start its sequence at 0, in whatever epoch it declares (up to the step).
    if (request.epoch > limits.maxEpochStep) return epochStepTooLarge(null, limits.maxEpochStep);
    if (request.seq === 0) return accepted();
    return reject("producer_seq_gap", "an unknown producer must start at Producer-Seq 0", {
      expectedSeq: 0,
      receivedSeq: request.seq,
    });
  }
  if (request.epoch < state.epoch) {
    return reject("producer_stale_epoch", "stale Producer-Epoch: a newer epoch of this producer exists", {
      currentEpoch: state.epoch,
    });
  }
  if (request.epoch > state.epoch) {
    if (request.epoch - state.epoch > limits.maxEpochStep) return epochStepTooLarge(state.epoch, state.epoch + limits.maxEpochStep);
    if (request.seq === 0) return accepted();
    return reject("invalid", "a new Producer-Epoch must start at Producer-Seq 0", {
      reason: "new_epoch_seq_not_zero",
      currentEpoch: state.epoch,
      receivedSeq: request.seq,
    });
  }
  if (request.seq <= state.lastSeq) return { kind: "duplicate", epoch: state.epoch, lastSeq: state.lastSeq };
  if (request.seq === state.lastSeq + 1) return accepted();
  return reject("producer_seq_gap", "Producer-Seq skips ahead of the next expected sequence", {
    expectedSeq: state.lastSeq + 1,
    receivedSeq: request.seq,
  });
}

/** PRD-11: a Producer-Epoch beyond the current one plus MAX_PRODUCER_EPOCH_STEP (or a first epoch beyond the step). */
function epochStepTooLarge(currentEpoch: number | null, maxEpoch: number): ProducerCheck {
  const message =
    currentEpoch === null
      ? `a new producer's first Producer-Epoch may be at most ${maxEpoch} (MAX_PRODUCER_EPOCH_STEP)`
      : `Producer-Epoch may rise by at most MAX_PRODUCER_EPOCH_STEP per request: at most ${maxEpoch} after ${currentEpoch}`;
  return reject("invalid", message, { reason: "epoch_step", currentEpoch, maxEpoch, limit: "MAX_PRODUCER_EPOCH_STEP" });
}

function reject(code: DomainError["code"], message: string, details: DomainError["details"]): ProducerCheck {
  return { kind: "reject", error: domainError(code, message, details) };
}

/** The table with one producer's accepted state recorded; the input table is unchanged. */
export function commitProducer(table: ProducerTable, producerId: string, state: ProducerState): ProducerTable {
  const next = new Map(table);
  next.set(producerId, state);
  return next;
}

export type ProducerAdmission =
  /** Record the producer; first drop `prune` (idle producers, oldest first) from the table. */
  | { readonly kind: "admit"; readonly prune: readonly string[] }
  | { readonly kind: "reject"; readonly error: DomainError };

/**
 * Whether an accepted producer fits the stream's table (PRD-12). A known id always does. A new id is
 * refused (limit_reached) when the node's producer tables would pass `nodeBytes.max`; it fits
 * while the table holds fewer than `maxProducers`; otherwise the fewest producers idle for at least
 * `idleMs` (the longest idle first, ties by id) are pruned to make room, or, when not enough are idle, the
 * request gets `limit_reached` and nothing is pruned. Pure and deterministic in (table, id, now, limits):
 * the owner records the pruned ids with the append, so a replay drops the same ones.
 */
export function admitProducer(table: ProducerTable, producerId: string, nowMs: number, limits: ProducerLimits): ProducerAdmission {
  if (table.has(producerId)) return { kind: "admit", prune: [] };
  const node = limits.nodeBytes;
  if (node !== undefined && node.held + producerBytes(producerId) > node.max) {
    return {
      kind: "reject",
      error: domainError(
        "limit_reached",
        `the node's producer tables hold ${node.held} bytes, at most ${node.max} (MAX_NODE_PRODUCER_BYTES); retry later, or reuse a producer id`,
        { limit: "MAX_NODE_PRODUCER_BYTES", max: node.max },
      ),
    };
  }
  if (table.size < limits.maxProducers) return { kind: "admit", prune: [] };
  const needed = table.size - limits.maxProducers + 1;
  const idle: [string, number][] = [];
  for (const [id, state] of table) if (nowMs - state.lastUpdatedMs >= limits.idleMs) idle.push([id, state.lastUpdatedMs]);
  if (idle.length < needed) {
    return {
      kind: "reject",
      error: domainError(
        "limit_reached",
        `the stream keeps ${table.size} producer ids, at most ${limits.maxProducers} (MAX_PRODUCERS_PER_STREAM), and fewer than ${needed} have been idle for ${limits.idleMs} ms (PRODUCER_IDLE_MS)`,
        { limit: "MAX_PRODUCERS_PER_STREAM", max: limits.maxProducers, idleMs: limits.idleMs },
      ),
    };
  }
  idle.sort(([a, at], [b, bt]) => at - bt || (a < b ? -1 : a > b ? 1 : 0));
  return { kind: "admit", prune: idle.slice(0, needed).map(([id]) => id) };
}

/**
 * Drops producers idle for longer than `maxIdleMs`. mink keeps producer state as long as the stream by
 * default (a durable store should, per the spec); this exists for an operator-chosen bound. A pruned
 * producer is new again: its next request must start at seq 0.
 */
export function pruneProducers(table: ProducerTable, nowMs: number, maxIdleMs: number): ProducerTable {
  let next: Map<string, ProducerState> | null = null;
  for (const [id, state] of table) {
    if (nowMs - state.lastUpdatedMs > maxIdleMs) {
      next ??= new Map(table);
      next.delete(id);
    }
  }
  return next ?? table;
}
