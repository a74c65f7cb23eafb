// GET with live=sse: a text/event-stream of `data` events, each followed by a `control` event, from the
// requested offset through the tail, then live: every acknowledged append is sent as it lands. A keep-alive
// control is sent after LONG_POLL_TIMEOUT_MS without data; the response ends at EOF, on deletion, when the
// client goes away, or after sseMaxDurationMs (clients reconnect from the last offset). Rules: SSE-1..10.
import { readEndFlags } from "../../core/protocol/closure.ts";
import { sseDataEncoding } from "../../core/protocol/content-type.ts";
import { HEADER } from "../../core/protocol/headers.ts";
import { decodeJsonMessages, frameJsonArray } from "../../core/protocol/json-mode.ts";
import { formatOffset } from "../../core/protocol/offsets.ts";
import { responseCursor } from "../../core/protocol/read.ts";
import { encodeBase64, SSE_CONTENT_TYPE, sseControlEvent, sseDataEvent } from "../../core/protocol/sse.ts";
import { type NodeContext } from "../context.ts";
import { lostTouch } from "./routing.ts";
import { errorReply, reply, type Reply } from "../state/replies.ts";
import { openRead, readPage, releaseLiveSlot, takeLiveSlot, type ReadInput } from "./read.ts";
import { recordAccess } from "../streams/lifecycle.ts";
import { isGone, type StreamState } from "../state/stream-registry.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export async function sseStream(ctx: NodeContext, input: ReadInput): Promise<Reply> {
  const opened = await openRead(ctx, input);
  if ("kind" in opened) return opened;
  const { stream, startOffset } = opened;
  // An SSE response holds a live-reader slot for its whole life (docs/limits.md): over the cap, 429 at once.
  const tokenId = input.tokenId ?? null;
  const refused = takeLiveSlot(ctx, tokenId);
  if (refused !== null) return errorReply(refused);

  const encoding = sseDataEncoding(stream.config.contentType);
  const { readable: body, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const gone = new AbortController();
  writer.closed.catch(() => gone.abort());
  input.signal?.addEventListener("abort", () => gone.abort());
  ctx.background(
    pump(ctx, stream, startOffset, input.cursor, encoding, writer, gone.signal).finally(() => {
      releaseLiveSlot(ctx, tokenId);
      return writer.close().catch(() => undefined);
    }),
  );
  const headers: Record<string, string> = {
    [HEADER.contentType]: SSE_CONTENT_TYPE,
    [HEADER.cacheControl]: "no-cache",
  };
  if (encoding === "base64") headers[HEADER.streamSseDataEncoding] = "base64";
  return reply(200, headers, body);
}

async function pump(
  ctx: NodeContext,
  stream: StreamState,
  from: number,
  clientCursor: number | null,
  encoding: "text" | "base64",
  writer: WritableStreamDefaultWriter<Uint8Array>,
  gone: AbortSignal,
): Promise<void> {
  const endAt = ctx.now() + ctx.settings.sseMaxDurationMs;
  let position = from;
  let announced = false;
  const send = (text: string): Promise<void> => writer.write(encoder.encode(text));
  const cursor = (): string => responseCursor(clientCursor, ctx.now(), 1 + Math.floor(ctx.random() * 3600));
  try {
    while (!gone.aborted && !isGone(stream) && stream.lifecycle === "live") {
      if (position < stream.tail) {
        const page = await readPage(ctx, stream, position);
        const payload = page.json
          ? frameJsonArray(decodeJsonMessages(decoder.decode(page.bytes)))
          : encoding === "base64"
            ? encodeBase64(page.bytes)
            : decoder.decode(page.bytes);
        position = page.end;
        const flags = readEndFlags(position, stream.tail, stream.eof);
        await send(sseDataEvent(payload) + sseControlEvent({ nextOffset: formatOffset(position), cursor: cursor(), flags }));
        recordAccess(ctx, stream, "live-read");
        announced = flags.upToDate;
        if (flags.closed) return;
        continue;
      }
      if (stream.eof) {
        await send(sseControlEvent({ nextOffset: formatOffset(position), cursor: "", flags: { upToDate: true, closed: true } }));
        return;
      }
      if (!announced) {
        await send(sseControlEvent({ nextOffset: formatOffset(position), cursor: cursor(), flags: { upToDate: true, closed: false } }));
        announced = true;
      }
      // Ended when this node loses touch with the metadata log: the client reconnects to the new owner.
      if (lostTouch(ctx) !== null) return;
      const remaining = Math.min(ctx.settings.longPollTimeoutMs, endAt - ctx.now(), ctx.liveUntilMs - ctx.now());
      if (remaining <= 0) return;
      const reason = await ctx.readers.wait(stream.id, remaining, gone);
      if (reason === "shutdown") return;
      if (reason === "timeout" && !gone.aborted && position >= stream.tail && !stream.eof) {
        recordAccess(ctx, stream, "live-read");
        await send(sseControlEvent({ nextOffset: formatOffset(position), cursor: cursor(), flags: { upToDate: true, closed: false } }));
      }
    }
  } catch {
    // The client went away (the write failed): nothing to tell anyone.
  }
}
