// What a node writes into each WAL record's opaque `meta` bytes, so that a restart can rebuild every
// stream from its WAL alone: the record's kind, and for a create the name and configuration, for an
// append the producer state and Stream-Seq it commits (atomically with its data: docs/storage-format.md).
// JSON, versioned by the `v` field; unknown kinds are corruption, never skipped.
import type { StreamConfig } from "../../core/protocol/stream-config.ts";

export type RecordMeta =
  /** A stream created (its initial body is the record's data; `eof` if created closed). */
  | { readonly k: "create"; readonly name: string; readonly config: StreamConfig; readonly at: number }
  /**
   * Data and/or a close; `p`: the producer [id, epoch, seq] committed with it; `q`: the new Stream-Seq;
   * `x`: idle producers pruned to make room for `p` (dropped before `p` is recorded; docs/limits.md).
   */
  | {
      readonly k: "append";
      readonly at: number;
      readonly p?: readonly [string, number, number];
      readonly q?: string;
      readonly x?: readonly string[];
    }
  /** Deleted while forks still read it: every direct operation is refused from now on. */
  | { readonly k: "soft-delete" }
  /** Removed (deleted, expired, or a soft-deleted source whose last fork went): the name is free. */
  | { readonly k: "delete" }
  /** Handed to another node (a transfer): flushed to stream objects first; this node holds it no more. */
  | { readonly k: "release" }
  /**
   * A stream's whole state at a compaction (its data is in stream objects up to `tail`): replay can
   * start here instead of at the stream's create record. Producers are [id, epoch, lastSeq, lastUpdatedMs].
   */
  | {
      readonly k: "snapshot";
      readonly name: string;
      readonly config: StreamConfig;
      readonly at: number;
      readonly tail: number;
      readonly eof: boolean;
      readonly softDeleted: boolean;
      readonly producers: readonly (readonly [string, number, number, number])[];
      readonly q: string | null;
      /**
       * The stream's last access (TTL idle clock) when the record was written. A node that adopts a
       * handed-over stream continues from it; replay after a restart does not (accesses after the record
       * are not in the WAL, and an idle clock that is too old would expire a stream early).
       */
      readonly la?: number;
    }
  /** Marks a compaction point (a node with no streams still needs an object to checkpoint at). */
  | { readonly k: "mark" };

export const RECORD_META_VERSION = 1;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export function encodeRecordMeta(meta: RecordMeta): Uint8Array {
  return encoder.encode(JSON.stringify({ v: RECORD_META_VERSION, ...meta }));
}

export class RecordMetaError extends Error {
  override readonly name = "RecordMetaError";
}

export function decodeRecordMeta(bytes: Uint8Array): RecordMeta {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch {
    throw new RecordMetaError("record meta is not UTF-8 JSON");
  }
  if (typeof value !== "object" || value === null) throw new RecordMetaError("record meta is not an object");
  const v = value as Record<string, unknown>;
  if (v["v"] !== RECORD_META_VERSION) throw new RecordMetaError(`unknown record meta version ${String(v["v"])}`);
  const meta = decodeKind(v);
  if (meta !== null) return meta;
  throw new RecordMetaError(`malformed record meta: ${JSON.stringify(value).slice(0, 200)}`);
}

/** The record meta `v` says, by its kind; null when its fields do not fit the kind. */
function decodeKind(v: Record<string, unknown>): RecordMeta | null {
  switch (v["k"]) {
    case "create":
      if (typeof v["name"] !== "string" || typeof v["config"] !== "object" || typeof v["at"] !== "number") return null;
      return { k: "create", name: v["name"], config: v["config"] as StreamConfig, at: v["at"] };
    case "append":
      return decodeAppend(v);
    case "soft-delete":
      return { k: "soft-delete" };
    case "delete":
      return { k: "delete" };
    case "release":
      return { k: "release" };
    case "mark":
      return { k: "mark" };
    case "snapshot":
      return decodeSnapshot(v);
  }
  return null;
}

function decodeAppend(v: Record<string, unknown>): RecordMeta | null {
  if (typeof v["at"] !== "number") return null;
  const p = v["p"];
  const q = v["q"];
  const producer =
    Array.isArray(p) && p.length === 3 && typeof p[0] === "string" && typeof p[1] === "number" && typeof p[2] === "number"
      ? ([p[0], p[1], p[2]] as const)
      : undefined;
  if (p !== undefined && producer === undefined) return null;
  if (q !== undefined && typeof q !== "string") return null;
  const x = v["x"];
  if (x !== undefined && !(Array.isArray(x) && x.every((id) => typeof id === "string"))) return null;
  return {
    k: "append",
    at: v["at"],
    ...(producer === undefined ? {} : { p: producer }),
    ...(typeof q === "string" ? { q } : {}),
    ...(x === undefined ? {} : { x }),
  };
}

function decodeSnapshot(v: Record<string, unknown>): RecordMeta | null {
  const producers = v["producers"];
  const q = v["q"];
  const okProducers =
    Array.isArray(producers) &&
    producers.every(
      (p) =>
        Array.isArray(p) &&
        p.length === 4 &&
        typeof p[0] === "string" &&
        typeof p[1] === "number" &&
        typeof p[2] === "number" &&
        typeof p[3] === "number",
    );
  if (
    typeof v["name"] !== "string" ||
    typeof v["config"] !== "object" ||
    typeof v["at"] !== "number" ||
    typeof v["tail"] !== "number" ||
    typeof v["eof"] !== "boolean" ||
    typeof v["softDeleted"] !== "boolean" ||
    !okProducers ||
    (q !== null && typeof q !== "string") ||
    (v["la"] !== undefined && typeof v["la"] !== "number")
  ) {
    return null;
  }
  return {
    k: "snapshot",
    name: v["name"],
    config: v["config"] as StreamConfig,
    at: v["at"],
    tail: v["tail"],
    eof: v["eof"],
    softDeleted: v["softDeleted"],
    producers: producers as [string, number, number, number][],
    q,
    ...(typeof v["la"] === "number" ? { la: v["la"] } : {}),
  };
}
