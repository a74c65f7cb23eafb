// Stream-Seq (PROTOCOL "Append to Stream"): an opaque writer sequence, compared byte-wise; each append
// that carries one must be strictly greater than the last one accepted. mink scopes it per stream (one
// value per stream, whoever the writer), which the spec asks implementations to document. It is
// separate from producer sequencing and is not inherited by forks.
import { fail, ok, type Parsed } from "./parsed.ts";

/** Absent header: null. Present: any non-empty value (the HTTP layer hands header values over as is). */
export function parseStreamSeqHeader(raw: string | null): Parsed<string | null> {
  if (raw === null) return ok(null);
  if (raw === "") return fail("invalid", "Stream-Seq must not be empty");
  return ok(raw);
}

/**
 * Byte-wise order of the values' UTF-8 encodings, which is code point order. Header values arrive as
 * byte strings (one code unit per byte), where this is plain code unit order; comparing code points
 * keeps the rule exact for any string (UTF-16 code unit order differs above U+FFFF).
 */
export function compareStreamSeq(a: string, b: string): -1 | 0 | 1 {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; ) {
    const ca = a.codePointAt(i) ?? 0;
    const cb = b.codePointAt(i) ?? 0;
    if (ca !== cb) return ca < cb ? -1 : 1;
    i += ca > 0xffff ? 2 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/**
 * The Stream-Seq rule. Returns the stream's next "last Stream-Seq" (to record only if the append is
 * accepted), or a conflict carrying the value to beat.
 */
export function checkStreamSeq(lastStreamSeq: string | null, streamSeq: string | null): Parsed<string | null> {
  if (streamSeq === null) return ok(lastStreamSeq);
  if (lastStreamSeq !== null && compareStreamSeq(streamSeq, lastStreamSeq) <= 0) {
    return fail("conflict", "Stream-Seq must be greater than the last accepted Stream-Seq", {
      reason: "stream_seq",
      lastStreamSeq,
    });
  }
  return ok(streamSeq);
}
