// Admission: bounds a proposal must pass before `apply` sees it (docs/limits.md). Separate
// from `apply` on purpose: apply is what replay runs, and every entry already in the log must replay
// whatever the limits are now (an operator who lowers MAX_STREAMS below the streams that exist must not
// make the log unreadable). So a limit refuses new entries at the door and never judges old ones.
import { domainError, type DomainError } from "../errors.ts";
import type { Command } from "./commands.ts";
import { tableDefinitionBytes } from "./meta-bytes.ts";
import type { MetaState } from "./state.ts";

/**
 * The UTF-8 bytes all tables' definitions may hold together (AD6, fixed). The tables live in the MetaLog's
 * memory and in the snapshot of its state beside the stream rows, so they have a bound of their own now
 * that MAX_META_BYTES bounds what SQLite stores: 1,000 tables of 4 KiB definitions, or 256 of the largest.
 */
export const MAX_TABLE_DEFINITION_BYTES = 4 * 1024 * 1024;

export interface AdmissionLimits {
  /** Streams registered at once (a deleted stream frees its slot). */
  readonly maxStreams: number;
  /** MAX_META_BYTES: UTF-8 bytes of stream names and configurations and table definitions (meta-bytes.ts). */
  readonly maxMetaBytes: number;
}

/** The commands that add client-sized strings to the log: refused (AD4) when the budget would be passed. */
const GROWING: ReadonlySet<Command["type"]> = new Set(["CreateStream", "ClaimStream", "CreateTable", "AddPartition"]);

/**
 * Table AD — admission of a command:
 * | row | condition                                                   | result                                      |
 * | AD1 | CreateStream or ClaimStream of a name not registered, `maxStreams` streams | limit_reached {limit: "MAX_STREAMS", max} |
 * | AD2 | CreateStream or ClaimStream of a registered name (a repeat or a conflict) | admitted: apply answers it (CS3, CS4, CM) |
 * | AD3 | any other command                                           | admitted                                    |
 *
 * Table AD, after `apply` and before the journal (admitGrowth), for a command apply accepted:
 * | AD4 | CreateStream, ClaimStream, CreateTable or AddPartition that grows the metadata bytes past `maxMetaBytes` | limit_reached {limit: "MAX_META_BYTES", max} |
 * | AD5 | any other change (it may grow the bytes a little: a config it rewrites)                      | admitted                                     |
 * | AD6 | CreateTable that brings all tables' definitions past MAX_TABLE_DEFINITION_BYTES (admitTables) | limit_reached {limit: "MAX_TABLE_DEFINITION_BYTES", max} |
 *
 * limit_reached (429, Retry-After), not too_large: the deployment is full, not the request, and deletes
 * and TTL expiry free slots, so the same create may succeed later.
 */
export function admitCommand(state: MetaState, command: Command, limits: AdmissionLimits): DomainError | null {
  // A malformed command is apply's to refuse (invalid).
  if ((command.type !== "CreateStream" && command.type !== "ClaimStream") || typeof command.name !== "string") return null;
  if (state.streams.idByName(command.name) !== undefined) return null;
  if (state.streams.size < limits.maxStreams) return null;
  return domainError("limit_reached", "this deployment holds as many streams as it may; delete some or retry later", {
    limit: "MAX_STREAMS",
    max: limits.maxStreams,
  });
}

/**
 * AD4, AD5: `bytesAfter` is the log's metadata bytes with the change applied, `delta` what it added. Decided
 * on apply's result (which is pure and writes nothing), so the bytes are exact; a refused change is dropped.
 */
export function admitGrowth(command: Command, bytesAfter: number, delta: number, limits: AdmissionLimits): DomainError | null {
  if (!GROWING.has(command.type) || delta <= 0 || bytesAfter <= limits.maxMetaBytes) return null;
  return domainError("limit_reached", "this deployment holds as many metadata bytes (stream names, configurations, table definitions) as it may; delete some or retry later", {
    limit: "MAX_META_BYTES",
    max: limits.maxMetaBytes,
  });
}

/** AD6, decided on apply's result like AD4: `after` holds the new table. */
export function admitTables(command: Command, before: MetaState, after: MetaState): DomainError | null {
  if (command.type !== "CreateTable" || after.tables === before.tables) return null;
  if (tableDefinitionBytes(after) <= MAX_TABLE_DEFINITION_BYTES) return null;
  return domainError("limit_reached", "the tables' definitions hold as many bytes as they may; drop a table or define smaller ones", {
    limit: "MAX_TABLE_DEFINITION_BYTES",
    max: MAX_TABLE_DEFINITION_BYTES,
  });
}
