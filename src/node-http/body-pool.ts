// The node's pool of request bodies (MAX_BODY_BYTES_IN_FLIGHT, docs/limits.md "Memory budgets"): a
// create, append or table write holds its body's bytes from before they are read until it is answered, so
// the bytes in every form (read, decoded, split, encoded, waiting for the WAL) are counted until they can be
// collected. A body that declares its length reserves it before any byte is read; one that does not is
// counted chunk by chunk as it is read. Over the pool: 503 with Retry-After, the body read and dropped so
// a client still sending sees the answer. A lone body is always taken (admitBodyBytes, B-8).
import { admitBodyBytes } from "../core/protocol/bounds.ts";
import type { DomainError } from "../core/errors.ts";
import type { NodeContext } from "../node/context.ts";
import { declaredLength } from "../subscriptions/bounded-read.ts";
import { dropBody, errorResponse, type BodyHold } from "../http/responses.ts";

/** A hold that takes every chunk: the body's bytes were reserved from its declared length. */
const RESERVED: BodyHold = { take: () => null };

/** Runs `write` holding the request's body bytes in the node's pool, or answers 503 when it is full. */
export async function holdingBody(ctx: NodeContext, request: Request, write: (hold: BodyHold) => Promise<Response>): Promise<Response> {
  let held = 0;
  const hold: BodyHold = {
    take: (bytes: number): DomainError | null => {
      const refused = admitBodyBytes(ctx.bodies.heldBytes - held, held + bytes, ctx.settings.maxBodyBytesInFlight);
      if (refused !== null) return refused;
      held += bytes;
      ctx.bodies.heldBytes += bytes;
      return null;
    },
  };
  try {
    const declared = request.body === null ? 0 : declaredLength(request.headers);
    if (declared === null) return await write(hold);
    const refused = hold.take(Math.min(declared, ctx.settings.maxBodyBytes));
    if (refused === null) return await write(RESERVED);
    await dropBody(request, ctx.settings.maxBodyBytes);
    return errorResponse(refused);
  } finally {
    ctx.bodies.heldBytes -= held;
  }
}
