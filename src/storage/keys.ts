// The one module that owns every object-store key shape. Nothing else builds or parses a key.
//
//   wal/<nodeId>/<seq, 20 digits>                                   one WAL object (records or a seal)
//   streams/<streamId>/<firstOffset, 20 digits>-<endOffset, 20 digits>   one immutable stream object
//   streams/<streamId>/manifest                                     the stream's manifest
//   nodes/<nodeId>/checkpoint                                       the node's WAL checkpoint
//   tables/<streamId>/parts/<partId>                                a table snapshot part (immutable, by content)
//   tables/<streamId>/snapshots/<coveredPosition, 20 digits>        a table snapshot manifest (JSON)
//   tiered/<table>/metadata/v<N>.metadata.json                      a tiered table's Iceberg version N (created once)
//   tiered/<table>/metadata/version-hint.text                       the latest version's number, for readers
//   tiered/<table>/metadata/<name>.avro                             an Iceberg manifest or manifest list
//   tiered/<table>/data/<name>.parquet                              an Iceberg data or equality-delete file
//     (a round's files are named e<epoch>-s<snapshot id>-...: src/core/tiering/orphan-files.ts)
//
// Table snapshots live outside `streams/`: the stream GC takes every key under `streams/<id>/` for a stream
// object or manifest, and a bucket's snapshots are collected by their own rules (docs/tables.md, table S).
// Numbers are zero-padded to 20 digits (the width of u64) so lexicographic order, which S3 lists in, is
// numeric order. Ids are escaped, not rejected: every character outside [A-Za-z0-9_-] becomes %XX per
// UTF-8 byte (uppercase hex). So an id can never contain "/" (no id is a prefix of another's keys), "."
// (no "." or ".." path segment for URL normalisers to eat) or "%" unescaped, and the mapping is injective.
// Ids that are empty, not well-formed UTF-16 (lone surrogates), or longer than 200 escaped bytes are refused.

export class InvalidIdError extends Error {
  override readonly name = "InvalidIdError";
  constructor(readonly id: string, reason: string) {
    super(`invalid id ${JSON.stringify(id)}: ${reason}`);
  }
}

export class InvalidKeyError extends Error {
  override readonly name = "InvalidKeyError";
  constructor(readonly key: string, reason: string) {
    super(`not a ${reason} key: ${key}`);
  }
}

/** An escaped id fits easily in S3's 1,024-byte key limit next to the fixed parts. */
const MAX_ESCAPED_ID_BYTES = 200;
const NUMBER_DIGITS = 20;
const SAFE_CHAR = /^[A-Za-z0-9_-]$/;
const ESCAPED_ID = /^(?:[A-Za-z0-9_-]|%[0-9A-F]{2})+$/;
const encoder = new TextEncoder();
const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export function escapeId(id: string): string {
  if (id.length === 0) throw new InvalidIdError(id, "empty");
  let escaped = "";
  for (const char of id) {
    if (SAFE_CHAR.test(char)) {
      escaped += char;
      continue;
    }
    const code = char.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) throw new InvalidIdError(id, "lone surrogate (not well-formed UTF-16)");
    for (const byte of encoder.encode(char)) escaped += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  if (escaped.length > MAX_ESCAPED_ID_BYTES) throw new InvalidIdError(id, `longer than ${MAX_ESCAPED_ID_BYTES} bytes escaped`);
  return escaped;
}

export function unescapeId(escaped: string): string {
  if (!ESCAPED_ID.test(escaped)) throw new InvalidKeyError(escaped, "escaped id");
  const bytes: number[] = [];
  for (let i = 0; i < escaped.length; i++) {
    if (escaped[i] === "%") {
      bytes.push(parseInt(escaped.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(escaped.charCodeAt(i));
    }
  }
  let id: string;
  try {
    id = strictDecoder.decode(new Uint8Array(bytes));
  } catch {
    throw new InvalidKeyError(escaped, "escaped id (bad UTF-8)");
  }
  // Only the canonical escape of an id is accepted, so each id has exactly one key.
  if (escapeId(id) !== escaped) throw new InvalidKeyError(escaped, "canonically escaped id");
  return id;
}

function padNumber(value: number, what: string): string {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${what} must be a safe non-negative integer: ${value}`);
  return value.toString().padStart(NUMBER_DIGITS, "0");
}

function parseNumber(text: string | undefined, key: string, shape: string): number {
  if (text === undefined || !/^\d{20}$/.test(text)) throw new InvalidKeyError(key, shape);
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new InvalidKeyError(key, `${shape} (number beyond 2^53)`);
  return value;
}

// --- WAL ---

/** Every WAL object of `nodeId`, and nothing of any other node. */
export function walPrefix(nodeId: string): string {
  return `wal/${escapeId(nodeId)}/`;
}

export function walKey(nodeId: string, seq: number): string {
  return walPrefix(nodeId) + padNumber(seq, "WAL seq");
}

export function parseWalKey(key: string): { nodeId: string; seq: number } {
  const parts = key.split("/");
  if (parts.length !== 3 || parts[0] !== "wal") throw new InvalidKeyError(key, "WAL");
  return { nodeId: unescapeId(parts[1]!), seq: parseNumber(parts[2], key, "WAL") };
}

// --- Streams ---

/** Every object of `streamId` (stream objects and the manifest), and nothing of any other stream. */
export function streamPrefix(streamId: string): string {
  return `streams/${escapeId(streamId)}/`;
}

export function streamObjectKey(streamId: string, firstOffset: number, endOffset: number): string {
  if (endOffset < firstOffset) throw new RangeError(`stream object range [${firstOffset}, ${endOffset}) is reversed`);
  return `${streamPrefix(streamId)}${padNumber(firstOffset, "first offset")}-${padNumber(endOffset, "end offset")}`;
}

export function parseStreamObjectKey(key: string): { streamId: string; firstOffset: number; endOffset: number } {
  const parts = key.split("/");
  const range = parts[2]?.split("-");
  if (parts.length !== 3 || parts[0] !== "streams" || range?.length !== 2) throw new InvalidKeyError(key, "stream object");
  const firstOffset = parseNumber(range[0], key, "stream object");
  const endOffset = parseNumber(range[1], key, "stream object");
  if (endOffset < firstOffset) throw new InvalidKeyError(key, "stream object (reversed range)");
  return { streamId: unescapeId(parts[1]!), firstOffset, endOffset };
}

export function manifestKey(streamId: string): string {
  return `${streamPrefix(streamId)}manifest`;
}

// --- Nodes ---

export function checkpointKey(nodeId: string): string {
  return `nodes/${escapeId(nodeId)}/checkpoint`;
}

// --- Table snapshots ---

/** Every snapshot object (parts and manifests) of the bucket stream `streamId`, and nothing of another's. */
export function tableSnapshotPrefix(streamId: string): string {
  return `tables/${escapeId(streamId)}/`;
}

export function tablePartsPrefix(streamId: string): string {
  return `${tableSnapshotPrefix(streamId)}parts/`;
}

/** A part is addressed by the id the core gives its content, escaped like any id. */
export function tablePartKey(streamId: string, partId: string): string {
  return tablePartsPrefix(streamId) + escapeId(partId);
}

export function tableManifestsPrefix(streamId: string): string {
  return `${tableSnapshotPrefix(streamId)}snapshots/`;
}

export function tableManifestKey(streamId: string, coveredPosition: number): string {
  return tableManifestsPrefix(streamId) + padNumber(coveredPosition, "covered position");
}

/** Everything of a tiered table (docs/tiering.md): table names are `[A-Za-z0-9_-]`, safe in a key as they are. */
export function tieredTablePrefix(table: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(table)) throw new InvalidIdError(table, "not a table name");
  return `tiered/${table}/`;
}

export function tieredMetadataKey(table: string, version: number): string {
  if (!Number.isSafeInteger(version) || version < 1) throw new InvalidIdError(String(version), "not a metadata version");
  return `${tieredTablePrefix(table)}metadata/v${version}.metadata.json`;
}

export function tieredVersionHintKey(table: string): string {
  return `${tieredTablePrefix(table)}metadata/version-hint.text`;
}

/** A manifest or manifest list; `name` is the writer's unique name (escaped like an id). */
export function tieredAvroKey(table: string, name: string): string {
  return `${tieredTablePrefix(table)}metadata/${escapeId(name)}.avro`;
}

export function tieredDataKey(table: string, name: string): string {
  return `${tieredTablePrefix(table)}data/${escapeId(name)}.parquet`;
}
