// mink's offsets. An offset names a byte position in a stream's logical byte sequence (for JSON streams:
// the stored message framing, see json-mode.ts) as two fixed-width decimal fields, `HHHHHHHHHHHHHHHH_PPPPPPPPPPPPPPPP`:
// the high field is reserved and always zero in offsets mink issues, the low field is the position. Fixed
// width makes string order equal numeric order, which the protocol requires (clients compare offsets as
// strings). The shape matches the reference server's, which the conformance suite hard-codes
// (`0000000000000000_0000000000000000` is "the start of any stream", `9999999999999999_9999999999999999`
// "far beyond any tail"). A fork shares its source's offsets up to the fork point, so positions are
// positions in the fork's whole view, inherited bytes included.
import { fail, ok, type Parsed } from "./parsed.ts";

const FIELD_DIGITS = 16;
const HIGH_FIELD = "0".repeat(FIELD_DIGITS);
const OFFSET_PATTERN = /^([0-9]{16})_([0-9]{16})$/;

/** The largest position an offset can name: positions stay exact JavaScript integers. */
export const MAX_POSITION_BYTES = Number.MAX_SAFE_INTEGER;

/** The offset of position 0: the start of every stream, and the tail of an empty one. */
export const ZERO_OFFSET = `${HIGH_FIELD}_${HIGH_FIELD}`;

/** The sentinels a client may send instead of an offset; mink never issues either. */
export const OFFSET_START_SENTINEL = "-1";
const OFFSET_NOW_SENTINEL = "now";

function isValidPosition(positionBytes: number): boolean {
  return Number.isSafeInteger(positionBytes) && positionBytes >= 0;
}

/** The offset of a position. A bad position is a bug in the caller, not client input: it throws. */
export function formatOffset(positionBytes: number): string {
  if (!isValidPosition(positionBytes)) {
    throw new RangeError(`offset position must be a safe non-negative integer, got ${positionBytes}`);
  }
  return `${HIGH_FIELD}_${String(positionBytes).padStart(FIELD_DIGITS, "0")}`;
}

/** The position an offset names, or null when the token is not an offset mink could have issued. */
export function parseOffset(token: string): number | null {
  const match = OFFSET_PATTERN.exec(token);
  if (match === null || match[1] !== HIGH_FIELD || match[2] === undefined) return null;
  const position = Number(match[2]);
  return isValidPosition(position) ? position : null;
}

/** Offsets order as strings (the protocol's rule); for mink's offsets this is position order. */
export function compareOffsets(a: string, b: string): -1 | 0 | 1 {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Where a read starts, before the stream is known. */
export type ReadStart =
  | { readonly kind: "start" }
  | { readonly kind: "now" }
  | { readonly kind: "at"; readonly positionBytes: number };

/**
 * The `offset` query parameter (every value the query string carries for it, in order). Absent means
 * the start; `-1` is the start; `now` is the tail at the time of the read; anything else must be an
 * offset mink issues. Empty, repeated or malformed values are refused.
 */
export function parseOffsetParam(values: readonly string[]): Parsed<ReadStart> {
  if (values.length === 0) return ok({ kind: "start" });
  if (values.length > 1) return fail("invalid", "the offset parameter must appear at most once");
  const [raw = ""] = values;
  if (raw === "") return fail("invalid", "the offset parameter must not be empty");
  if (raw === OFFSET_START_SENTINEL) return ok({ kind: "start" });
  if (raw === OFFSET_NOW_SENTINEL) return ok({ kind: "now" });
  const position = parseOffset(raw);
  if (position === null) return fail("invalid", "malformed offset", { offset: raw.slice(0, 80) });
  return ok({ kind: "at", positionBytes: position });
}

/**
 * The position a read starts at, once the stream's tail is known. An offset past the tail was never
 * issued by this stream (a client holding one is reading another stream, or an earlier incarnation of
 * this name), so it is refused rather than answered with an empty page.
 */
export function resolveReadStart(start: ReadStart, tailPositionBytes: number): Parsed<number> {
  switch (start.kind) {
    case "start":
      return ok(0);
    case "now":
      return ok(tailPositionBytes);
    case "at":
      if (start.positionBytes > tailPositionBytes) {
        return fail("invalid", "offset is beyond the stream's tail", { tailOffset: formatOffset(tailPositionBytes) });
      }
      return ok(start.positionBytes);
  }
}
