// The guards: each refusal by which mink stops a stale or superseded actor, as one table (name, how the
// simulation recognises it from the outside, which scenario makes it fire). Where two defences stand in a
// row, one can break and nothing notices unless a run reaches the second alone; so every guard is counted
// (`guard <name>` in the coverage) and a long run in which one never fired fails (floors.ts). Recognised
// from what the metadata port answers (sim-meta.ts) and what the object store refuses (sim-store.ts),
// never from inside mink. The scenarios are in guard-scenarios.ts; docs/simulation.md has this table too.
import { decodeWalObject } from "../../src/storage/wal-format.ts";

interface Guard {
  readonly name: string;
  /** How the simulation tells that it refused something. */
  readonly recognised: string;
  /** The move (scheduler category) meant to make it fire, or the existing faults that do. */
  readonly scenario: string;
}

export const GUARDS: readonly Guard[] = [
  {
    name: "stale completion",
    recognised: "a CompleteTransfer refused stale_epoch naming the stream (table CT, row CT5): its close was superseded by a later one",
    scenario: "late-proposal: a CompleteTransfer held back and delivered once a later transfer of the stream closed it again",
  },
  {
    name: "fenced coordinator",
    recognised: "a coordinator call (tick, createTable, addPartition, collectable) refused fenced (table C, rows C2/C3) while another node or incarnation holds the lease, or none",
    scenario: "paused-coordinator (other): a tick held back while the holder's lease lapses and another node acquires it",
  },
  {
    name: "stale coordinator epoch",
    recognised: "a coordinator call refused fenced while its own node holds the lease at another coordinator epoch (table C, row C2: the coordinator epoch alone)",
    scenario: "paused-coordinator (self): a tick held back while the holder's lease lapses and it acquires the lease again, at epoch + 1",
  },
  {
    name: "fenced lease renewal",
    recognised: "a RenewLease refused fenced (table RL, rows RL2/RL3)",
    scenario: "paused-coordinator (the paused holder's renewal once it resumes); coordinator crashes",
  },
  {
    name: "stale proposer",
    recognised: "a proposal refused stale_epoch naming the node (table P, row P3): a superseded incarnation",
    scenario: "zombie, freeze, hold (superseded incarnations still proposing)",
  },
  {
    name: "stale heartbeat",
    recognised: "a heartbeat refused stale_epoch: the incarnation was declared dead or restarted (it aborts)",
    scenario: "zombie, freeze",
  },
  {
    name: "stale registration",
    recognised: "a RegisterNode refused stale_epoch (table RN, row RN2): a later incarnation registered first",
    scenario: "crash, zombie (a start whose registration arrives after a later one's)",
  },
  {
    name: "superseded duties",
    recognised: "watchDuties answers superseded: a zombie's watcher takes no transfer step",
    scenario: "zombie, freeze",
  },
  {
    name: "sealed writer (takeover)",
    recognised: "a WAL data PUT refused by If-None-Match because another node's takeover seal holds its seq",
    scenario: "sealed-zombie: a zombie's WAL PUT held until its chain is sealed at epoch + 1",
  },
  {
    name: "sealed writer (restart)",
    recognised: "a WAL data PUT refused by If-None-Match because its own node's later incarnation sealed that seq",
    scenario: "late-put (the restart after the deadline seals); zombie restarts",
  },
  {
    name: "wal deadline",
    recognised: "an incarnation whose WAL PUT was held stopped with its writer failed (WAL_BATCH_DEADLINE_MS passed)",
    scenario: "late-put: a WAL PUT held past the writer's deadline, released once the next incarnation sealed",
  },
  {
    name: "stale tiered commit",
    recognised: "a tiered table version's create-only PUT refused because a version of a newer coordinator epoch holds it (docs/tiering.md, table TC: the new holder's fence, TC2, or its commit)",
    scenario: "tiering-stall (commit): a tiering round's version PUT held until the lease and the tiered table moved to a newer coordinator epoch",
  },
  {
    name: "tiering fenced by a newer version",
    recognised: "a tiering round answered fenced because the latest version was written at a newer coordinator epoch (table TC, row TC4), its heartbeat having passed",
    scenario: "tiering-stall (read): a tiering round's read of the version hint held until the lease and the tiered table moved to a newer coordinator epoch",
  },
];

export const guardCounter = (name: string): string => `guard ${name}`;

/** A tiered table's version (docs/tiering.md), and the coordinator epoch that wrote it (`mink.coordinator-epoch`). */
export const TIERED_VERSION = /^tiered\/[^/]+\/metadata\/v\d+\.metadata\.json$/;
const decoder = new TextDecoder();
export const tieredEpochOf = (bytes: Uint8Array): number =>
  Number((JSON.parse(decoder.decode(bytes)) as { properties?: Record<string, string> }).properties?.["mink.coordinator-epoch"] ?? 0);

type Answer = { readonly ok: false; readonly error: { readonly code: string; readonly details?: Readonly<Record<string, unknown>> } };

function refusal(value: unknown): Answer["error"] | null {
  if (typeof value !== "object" || value === null) return null;
  const answer = value as Partial<Answer> & { readonly superseded?: unknown };
  return answer.ok === false && answer.error !== undefined ? answer.error : null;
}

const COORDINATOR_CALLS = /^(coordinatorTick|createTable|addPartition|collectable)\b/;

/** The guard a metadata answer shows firing, from the call's trace label and its answer; null: none. */
export function metaGuard(label: string, value: unknown, subject?: object): string | null {
  if (label.startsWith("watchDuties") && typeof value === "object" && value !== null && (value as { superseded?: unknown }).superseded === true) return "superseded duties";
  const error = refusal(value);
  if (error === null) return null;
  const details = error.details ?? {};
  if (label === "heartbeat") return error.code === "stale_epoch" ? "stale heartbeat" : null;
  if (COORDINATOR_CALLS.test(label)) return error.code === "fenced" ? coordinatorGuard(details, subject) : null;
  if (!label.startsWith("propose ")) return null;
  if (label.startsWith("propose RegisterNode")) return error.code === "stale_epoch" ? "stale registration" : null;
  if (label.startsWith("propose RenewLease") && error.code === "fenced") return "fenced lease renewal";
  if (error.code !== "stale_epoch") return null;
  if (label.startsWith("propose CompleteTransfer") && "streamId" in details) return "stale completion";
  return "nodeId" in details && "currentEpoch" in details ? "stale proposer" : null;
}

/** A fenced coordinator call: by its coordinator epoch alone when its own node holds the lease. */
function coordinatorGuard(details: Readonly<Record<string, unknown>>, subject: object | undefined): string {
  const caller = subject as { readonly nodeId?: unknown; readonly coordinatorEpoch?: unknown } | undefined;
  const ownLease = caller !== undefined && details["holder"] === caller.nodeId && details["coordinatorEpoch"] !== caller.coordinatorEpoch;
  return ownLease ? "stale coordinator epoch" : "fenced coordinator";
}

/**
 * The guard a refused conditional PUT shows firing: a WAL data object whose seq a seal already holds, or a
 * tiered version a newer coordinator epoch wrote first (`existing`: the bytes at the key, as the history
 * recorded them landing). Null: none.
 */
export function storeGuard(key: string, body: Uint8Array, existing: Uint8Array | null): string | null {
  if (existing === null) return null;
  if (TIERED_VERSION.test(key)) return tieredEpochOf(existing) > tieredEpochOf(body) ? "stale tiered commit" : null;
  if (!key.startsWith("wal/")) return null;
  const mine = decodeWalObject(body, key);
  const there = decodeWalObject(existing, key);
  if (mine.kind !== "records" || there.kind !== "seal") return null;
  return there.sealedBy === mine.nodeId ? "sealed writer (restart)" : "sealed writer (takeover)";
}
