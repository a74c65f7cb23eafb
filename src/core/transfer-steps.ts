// Transfers (docs/transfers.md): what one node does next about one stream, from the metadata view
// and what the node holds. The watcher loop on every node runs this for each stream its duties name, once
// on every change and again every second until the step is `none` or `wait`; every step is idempotent and
// reads only state that survives a crash (the log, and the node's WAL through what it holds after replay).
//
// | #  | View of the stream                                   | Here                   | Step                          |
// | -- | ---------------------------------------------------- | ---------------------- | ----------------------------- |
// | T1 | transfer pending, source here, `placed` or `opened`  | holds it               | hand off: stop appends, flush, close at E, complete(E) |
// | T2 | transfer pending, source here, `placed` or `opened`  | does not hold it       | close at E (nothing here to flush), complete(E) |
// | T3 | transfer pending, source here, `closed` at E         | any                    | complete(E)                   |
// | T4 | transfer pending, target here                        | any                    | wait: the source moves first; requests park (R2) |
// | T5 | no transfer, `placed` here at epoch > 0 (handed over), or `opened` here | does not hold it | open at E+1 now (pre-warm; or again, after a crash between the open and its WAL record) |
// | T6 | anything else                                        | any                    | none                          |
//
// "Does not hold it" in T2 means this node never opened it (a placement, or a stream handed to it and not
// opened yet) or released it after flushing (a crash between the release and CloseStream): either way its
// data is already in stream objects, so closing without a flush loses nothing.
import type { StreamView } from "./meta/view.ts";

export type TransferStep =
  | { readonly kind: "hand_off"; readonly rule: "T1"; readonly epoch: number }
  | { readonly kind: "close_and_complete"; readonly rule: "T2"; readonly epoch: number }
  | { readonly kind: "complete"; readonly rule: "T3"; readonly closedEpoch: number }
  | { readonly kind: "wait"; readonly rule: "T4" }
  | { readonly kind: "open"; readonly rule: "T5" }
  | { readonly kind: "none"; readonly rule: "T6" };

export interface TransferStepInput {
  readonly nodeId: string;
  readonly stream: StreamView;
  /** Whether this node holds the stream in memory (opened by it, or replayed and not released). */
  readonly holds: boolean;
}

export function transferStep({ nodeId, stream, holds }: TransferStepInput): TransferStep {
  const transfer = stream.transfer;
  if (transfer !== undefined && transfer.source === nodeId && stream.owner === nodeId) {
    if (stream.ownership === "closed") return { kind: "complete", rule: "T3", closedEpoch: stream.epoch };
    if (stream.ownership === "placed" || stream.ownership === "opened") {
      return holds
        ? { kind: "hand_off", rule: "T1", epoch: stream.epoch }
        : { kind: "close_and_complete", rule: "T2", epoch: stream.epoch };
    }
  }
  if (transfer !== undefined && transfer.target === nodeId) return { kind: "wait", rule: "T4" };
  if (transfer === undefined && !holds && stream.owner === nodeId && opensFromStore(stream, nodeId)) {
    return { kind: "open", rule: "T5" };
  }
  return { kind: "none", rule: "T6" };
}

/**
 * Whether a node that does not hold the stream opens it from the object store before serving it: a
 * `closed` stream (R7: the open re-places it here), one handed to this node and not opened yet (T5), or one
 * this node opened without recording it (a crash between the open and its WAL record, or a create still in
 * flight: the open waits for the create's name lock, then finds the stream held). A fresh placement
 * (epoch 0) is opened by its create instead.
 */
export function opensFromStore(stream: StreamView, nodeId: string): boolean {
  if (stream.transfer !== undefined) return false;
  if (stream.ownership === "closed") return true;
  if (stream.owner !== nodeId) return false;
  return (stream.ownership === "placed" && stream.epoch > 0) || stream.ownership === "opened";
}
