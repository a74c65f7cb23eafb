// The idempotent producer of one bucket (the Durable Streams producer headers): its batches go out one
// at a time in seq order, every retry of a batch carries the same seq so the leader writes it once, and
// the seq moves on only when the batch is settled: acknowledged (200) or known to be there already (204).
import { HEADER } from "../core/protocol/headers.ts";
import { TableClientError } from "./errors.ts";

export class BucketProducer {
  readonly id: string;
  #epoch: number;
  #seq = 0;
  /** The end of the queue: the last batch handed in, settled or not (never rejects). */
  #tail: Promise<unknown> = Promise.resolve();

  constructor(id: string, epoch: number) {
    this.id = id;
    this.#epoch = epoch;
  }

  /**
   * Runs `send` with this batch's producer headers once every earlier batch of the bucket is settled.
   * `seqTaken` says whether the answer used the seq (a write whose ops changed nothing appends nothing and
   * leaves the seq for the next batch).
   */
  enqueue<T>(send: (headers: Readonly<Record<string, string>>) => Promise<T>, seqTaken: (result: T) => boolean = () => true): Promise<T> {
    const run = this.#tail.then(() => this.#sendOne(send, seqTaken));
    this.#tail = run.catch(() => undefined);
    return run;
  }

  async #sendOne<T>(send: (headers: Readonly<Record<string, string>>) => Promise<T>, seqTaken: (result: T) => boolean): Promise<T> {
    try {
      const result = await this.#sendAdopting(send);
      if (seqTaken(result)) this.#seq += 1;
      return result;
    } catch (error) {
      // A refusal leaves the seq unused, so the next batch takes it. A batch given up on while its outcome
      // is unknown may have been written: the next batch cannot reuse its seq (it would be taken for a
      // repeat and dropped) nor skip it (a gap). A new epoch starting at seq 0 fences the old one, so the
      // lost batch is in already or never will be. A seq gap or a stale epoch is not repaired here: it
      // means another writer shares this producer id, which only its owner can sort out.
      if (error instanceof TableClientError && error.outcomeUnknown) {
        this.#epoch += 1;
        this.#seq = 0;
      }
      throw error;
    }
  }

  /**
   * Sends with the current headers. An epoch the server refuses as too far ahead (PRD-11: a client given
   * its id starts at the clock, which is) is nothing written: the producer moves to the server's current
   * epoch plus one (0 when the server has no such producer), seq 0, which fences every earlier instance
   * with this id, and sends once more.
   */
  async #sendAdopting<T>(send: (headers: Readonly<Record<string, string>>) => Promise<T>): Promise<T> {
    try {
      return await send(this.#headers());
    } catch (error) {
      const next = epochAfterRefusal(error);
      if (next === null || next >= this.#epoch) throw error;
      this.#epoch = next;
      this.#seq = 0;
      return send(this.#headers());
    }
  }

  #headers(): Readonly<Record<string, string>> {
    return { [HEADER.producerId]: this.id, [HEADER.producerEpoch]: String(this.#epoch), [HEADER.producerSeq]: String(this.#seq) };
  }
}

/** The epoch to take after a PRD-11 refusal: the server's current one plus one, 0 for a producer it does not know; else null. */
function epochAfterRefusal(error: unknown): number | null {
  if (!(error instanceof TableClientError) || error.details?.["reason"] !== "epoch_step") return null;
  const current = error.details["currentEpoch"];
  if (current === null) return 0;
  return Number.isSafeInteger(current) ? (current as number) + 1 : null;
}
