// Snapshots of a tablet (docs/tables.md, table S): the rows sorted by key and the offset they
// cover, cut into parts of bounded size, each addressed by its content. Cuts fall after keys chosen by their
// own hash, not by position, so a key range no write touched comes out as the same part in the next
// snapshot and is stored once.
import { isJsonObject } from "../meta/json.ts";
import { okResult, rejectResult, type Row, type TableResult } from "./changelog.ts";
import { crc32OfText, utf8Length } from "./checksum.ts";
import { compareKeys, type Tablet } from "./tablet.ts";

export interface SnapshotCut {
  /** A part is cut before a row that would take it over this many bytes (a part holds at least one row). */
  readonly maxPartBytes: number;
  /** A part is also cut after a key whose checksum is a multiple of this: about one key in this many. */
  readonly boundaryModulus: number;
}

/** 4 MiB parts at most; with rows of about 100 B a content cut falls about every 1.6 MiB. */
const DEFAULT_CUT: SnapshotCut = { maxPartBytes: 4 * 1024 * 1024, boundaryModulus: 16_384 };

export interface PartRef {
  /** The content address: checksum and length, so a part written once is reused by later snapshots. */
  readonly id: string;
  readonly checksum: number;
  readonly bytes: number;
}

export interface SnapshotManifest {
  /** The tablet's applied offset: replay starts at this offset. */
  readonly coveredOffset: number;
  readonly parts: readonly PartRef[];
}

export interface SnapshotPart extends PartRef {
  /** One line per row: `[key, row]` as JSON. */
  readonly text: string;
}

function partOf(text: string): SnapshotPart {
  const { crc: checksum, bytes } = crc32OfText(text);
  return { id: `${checksum.toString(16).padStart(8, "0")}-${bytes}`, checksum, bytes, text };
}

function isBoundaryKey(key: string, cut: SnapshotCut): boolean {
  return crc32OfText(key).crc % cut.boundaryModulus === 0;
}

/** A part as it is cut, with the number of rows it holds. */
export interface CutPart extends SnapshotPart {
  readonly rows: number;
}

/**
 * S1-S3, one part at a time: the parts of rows given in ascending key order. Lazy, so a leader can write a
 * snapshot of a large tablet a part at a time while it reads the rows from its store.
 */
export function* cutParts(entries: Iterable<readonly [string, Row]>, cut: SnapshotCut = DEFAULT_CUT): Generator<CutPart> {
  let lines: string[] = [];
  let bytes = 0;
  const part = (): CutPart => ({ ...partOf(lines.join("")), rows: lines.length });
  for (const [key, row] of entries) {
    const line = `${JSON.stringify([key, row])}\n`;
    const lineBytes = utf8Length(line);
    if (lines.length > 0 && bytes + lineBytes > cut.maxPartBytes) {
      yield part();
      lines = [];
      bytes = 0;
    }
    lines.push(line);
    bytes += lineBytes;
    if (isBoundaryKey(key, cut)) {
      yield part();
      lines = [];
      bytes = 0;
    }
  }
  if (lines.length > 0) yield part();
}

/** S1-S3: the manifest and the parts of a snapshot of `tablet`. */
export function takeSnapshot(tablet: Tablet, cut: SnapshotCut = DEFAULT_CUT): { manifest: SnapshotManifest; parts: SnapshotPart[] } {
  // The default sort compares by UTF-16 code unit, as compareKeys does, and is faster than a comparator.
  const keys = [...tablet.rows.keys()].sort();
  const parts = [...cutParts(keys.map((key) => [key, tablet.rows.get(key)!] as const), cut)].map(({ rows: _rows, ...part }) => part);
  const manifest = { coveredOffset: tablet.appliedOffset, parts: parts.map(({ id, checksum, bytes: size }) => ({ id, checksum, bytes: size })) };
  return { manifest, parts };
}

/** S4: a part is sound when its text has the length and checksum its reference records. */
export function partIsSound(ref: PartRef, text: string): boolean {
  const { crc, bytes } = crc32OfText(text);
  return bytes === ref.bytes && crc === ref.checksum;
}

function corrupt<T>(partId: string, message: string): TableResult<T> {
  return rejectResult("conflict", message, { reason: "snapshot_corrupt", partId });
}

function parseLine(line: string): [string, Row] | null {
  try {
    const parsed: unknown = JSON.parse(line);
    if (!Array.isArray(parsed) || parsed.length !== 2 || typeof parsed[0] !== "string" || !isJsonObject(parsed[1])) return null;
    return [parsed[0], parsed[1]];
  } catch {
    return null;
  }
}

/**
 * S4 for one part: its rows, checked against its reference and in ascending key order after `after` (the
 * last key of the part before it). A leader restores a large snapshot a part at a time with this.
 */
export function partRows(ref: PartRef, text: string | undefined, after: string | null): TableResult<[string, Row][]> {
  if (text === undefined || !partIsSound(ref, text)) return corrupt(ref.id, "a snapshot part is missing or fails its checksum");
  const rows: [string, Row][] = [];
  let lastKey = after;
  for (const line of text.split("\n").slice(0, -1)) {
    const entry = parseLine(line);
    if (entry === null || (lastKey !== null && compareKeys(entry[0], lastKey) <= 0)) {
      return corrupt(ref.id, "a snapshot part holds a malformed or out-of-order row");
    }
    rows.push(entry);
    lastKey = entry[0];
  }
  return okResult(rows);
}

/** S4-S5: the tablet a snapshot holds, at its covered offset; a missing or corrupt part refuses the whole. */
export function restoreSnapshot(manifest: SnapshotManifest, texts: ReadonlyMap<string, string>): TableResult<Tablet> {
  const rows = new Map<string, Row>();
  let lastKey: string | null = null;
  for (const ref of manifest.parts) {
    const part = partRows(ref, texts.get(ref.id), lastKey);
    if (!part.ok) return corrupt(ref.id, part.error.message);
    for (const [key, row] of part.value) rows.set(key, row);
    lastKey = part.value.at(-1)?.[0] ?? lastKey;
  }
  return okResult({ rows, appliedOffset: manifest.coveredOffset });
}
