// Giving up ownership of a stream this node holds without a transfer: the hand-off's flush and close
// (ownership/hand-off.ts) with no completion. The stream is then `closed` in the log: routing serves it where the
// request lands (R7) and that node opens it from the object store (ownership/adopt.ts). Tests use it to show a closed
// stream revived.
import { domainError, type DomainError } from "../../src/core/errors.ts";
import { handOff, HandOffError } from "../../src/node/ownership/hand-off.ts";
import { type NodeContext } from "../../src/node/context.ts";
import { ensureOpened } from "../../src/node/streams/lifecycle.ts";

export async function closeOwnership(ctx: NodeContext, name: string): Promise<DomainError | null> {
  const stream = ctx.registry.byName(name);
  if (stream === undefined) return domainError("not_found", "no such stream");
  const openError = await ensureOpened(ctx, stream);
  if (openError !== null) return openError;
  try {
    await handOff(ctx, stream.id, name, stream.epoch, false);
    return null;
  } catch (error) {
    if (error instanceof HandOffError) return error.error ?? domainError("unavailable", error.message);
    throw error;
  }
}
