// Reading a body to a bound, incrementally: the Worker never holds more than `maxBytes` of a body it did
// not ask for (a `__ds` request, a forwarded stream request without a length, a webhook receiver's reply).
// It lives here, the lowest layer the three readers share (the router, the HTTP layer and the effects).

export type BoundedRead =
  | { readonly ok: true; readonly bytes: Uint8Array }
  /** Over the bound, or `take` refused a chunk: what was read is dropped. */
  | { readonly ok: false; readonly readBytes: number; readonly refused?: true };

/**
 * The body's bytes while they fit in `maxBytes`; past it, reads and drops up to `drainBytes` more (a
 * client still sending when the answer comes sees a reset connection instead of the 413; 0 for a reply
 * nobody waits on), then cancels the rest. A body with a declared length over the bound is not read.
 * `take`, when given, is asked before each chunk is kept (a pool of bytes the reader holds); a chunk it
 * refuses ends the read the same way, marked `refused`.
 */
export async function readAtMost(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  options: { readonly declaredBytes?: number | null; readonly drainBytes?: number; readonly take?: (bytes: number) => boolean } = {},
): Promise<BoundedRead> {
  if (body === null) return { ok: true, bytes: new Uint8Array(0) };
  const drainBytes = options.drainBytes ?? 0;
  const declared = options.declaredBytes;
  if (declared !== undefined && declared !== null && declared <= maxBytes) return readDeclared(body, declared, maxBytes, drainBytes, options.take);
  const reader = body.getReader();
  if (declared !== undefined && declared !== null && declared > maxBytes) {
    await drain(reader, drainBytes);
    return { ok: false, readBytes: 0 };
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await drain(reader, drainBytes);
      return { ok: false, readBytes: total };
    }
    if (options.take !== undefined && !options.take(value.byteLength)) {
      await drain(reader, drainBytes);
      return { ok: false, readBytes: total, refused: true };
    }
    chunks.push(value);
  }
  if (chunks.length === 1 && chunks[0] !== undefined) return { ok: true, bytes: chunks[0] };
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return { ok: true, bytes };
}

/**
 * A body whose declared length is within the bound: `take` is asked for all of it at once, and the body is
 * read in one call (the runtime's own, not a JavaScript read per chunk: an append's body is read on every
 * request, and the read loop was 3% of a node's CPU). The runtime holds a body to its declared length; the
 * check after the read is for a runtime that does not.
 */
async function readDeclared(
  body: ReadableStream<Uint8Array>,
  declared: number,
  maxBytes: number,
  drainBytes: number,
  take: ((bytes: number) => boolean) | undefined,
): Promise<BoundedRead> {
  if (take !== undefined && !take(declared)) {
    await drain(body.getReader(), drainBytes);
    return { ok: false, readBytes: 0, refused: true };
  }
  const bytes = new Uint8Array(await new Response(body).arrayBuffer());
  return bytes.byteLength <= maxBytes ? { ok: true, bytes } : { ok: false, readBytes: bytes.byteLength };
}

/** A body of a declared length up to this is read whole to be dropped: held a moment, never more than this. */
const DISCARD_IN_ONE_READ_BYTES = 64 * 1024;

/**
 * Reads a body to its end and keeps none of it (a request answered without it: a refusal, a redirect):
 * each chunk is dropped as soon as it is counted (a small body of a declared length is read whole in one
 * call). Ok while the body fits in `maxBytes`; past it (or a declared length past it), reads and drops up to
 * `drainBytes` more, then cancels the rest.
 */
export async function discardAtMost(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  options: { readonly declaredBytes?: number | null; readonly drainBytes?: number } = {},
): Promise<{ readonly ok: boolean; readonly readBytes: number }> {
  if (body === null) return { ok: true, readBytes: 0 };
  const declared = options.declaredBytes;
  if (declared !== undefined && declared !== null && declared <= Math.min(maxBytes, DISCARD_IN_ONE_READ_BYTES)) {
    // A small body of a declared length (an append redirected to its owner): one runtime call, not a
    // JavaScript read per chunk (which was 2.8% of the isolate's CPU under redirected appends).
    const read = (await new Response(body).arrayBuffer()).byteLength;
    return { ok: read <= maxBytes, readBytes: read };
  }
  const reader = body.getReader();
  if (declared !== undefined && declared !== null && declared > maxBytes) {
    await drain(reader, options.drainBytes ?? 0);
    return { ok: false, readBytes: 0 };
  }
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { ok: true, readBytes: total };
    total += value.byteLength;
    if (total > maxBytes) {
      await drain(reader, options.drainBytes ?? 0);
      return { ok: false, readBytes: total };
    }
  }
}

/** A Content-Length header as a number of bytes, or null when absent or not a length. */
export function declaredLength(headers: Headers): number | null {
  const raw = headers.get("content-length");
  if (raw === null || !/^\d+$/.test(raw.trim())) return null;
  return Number(raw.trim());
}

/** Reads and drops up to `limitBytes` more of a body; cancels it past that. Never throws. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, limitBytes: number): Promise<void> {
  let left = limitBytes;
  try {
    while (left > 0) {
      const { done, value } = await reader.read();
      if (done) return;
      left -= value.byteLength;
    }
    await reader.cancel();
  } catch {
    // The sender went away: nothing left to drain.
  }
}
