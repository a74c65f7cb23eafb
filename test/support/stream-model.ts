// The sequential model of one durable stream that the linearizability checker (linearizability.ts) runs
// client operations against: its content (appends at the tail, reads of ranges), its idempotent producers
// (per id: the epoch and the last seq accepted in it) and whether it is closed. The rules mirror mink's
// append table (src/core/protocol/append.ts, checkProducer in src/core/protocol/producer.ts). A step
// answers every state the operation may leave the stream in given the answer its client heard: none (it
// cannot be placed here), one, or two (an outcome the client never learnt: with and without effect).

interface ProducerTag {
  readonly id: string;
  readonly epoch: number;
  readonly seq: number;
}

type AppendOutcome =
  /** Acknowledged as new data at [start, end). */
  | { readonly kind: "ok"; readonly start: number; readonly end: number }
  /** A producer's duplicate (204): its (epoch, seq) was accepted before; no effect. */
  | { readonly kind: "duplicate" }
  /** No definite answer: it may or may not have taken effect. */
  | { readonly kind: "unknown" }
  /** Refused without effect: because the stream is closed, by the producer rules, or for a reason the model does not judge. */
  | { readonly kind: "rejected"; readonly reason: "closed" | "producer" | "other" };

export type StreamOperation =
  | { readonly kind: "append"; readonly body: string; readonly producer: ProducerTag | null; readonly outcome: AppendOutcome }
  /**
   * A read of [start, next) that answered `bytes`; `upToDate`: `next` was the tail. `final`: one page of
   * the read of the whole stream after everything else answered (the checker may then rely on its content).
   */
  | { readonly kind: "read"; readonly start: number; readonly next: number; readonly bytes: string; readonly upToDate: boolean; readonly final?: boolean }
  /** Closing the stream (later appends are refused); "unknown": no definite answer. */
  | { readonly kind: "close"; readonly outcome: "ok" | "unknown" };

interface ProducerState {
  readonly epoch: number;
  readonly last: number;
}

export interface ModelState {
  readonly content: string;
  readonly producers: ReadonlyMap<string, ProducerState>;
  readonly closed: boolean;
  /**
   * Identifies the state for the search's cache: a digest of the operations that changed it, in order
   * (the content, the producers and the closed flag are functions of that sequence).
   */
  readonly digest: string;
  readonly h1: number;
  readonly h2: number;
  /** When the history proves the content the stream ends with, no effect may disagree with it. */
  readonly finalContent: string | null;
}

export function initialState(finalContent: string | null): ModelState {
  return { content: "", producers: new Map(), closed: false, digest: "0", h1: 0x811c9dc5, h2: 0x9747b28c, finalContent };
}

/** The states `op` (the search's operation number `index`) may leave `state` in, given what its client heard. */
export function modelStep(state: ModelState, op: StreamOperation, index: number): readonly ModelState[] {
  switch (op.kind) {
    case "read":
      return readMatches(state, op.start, op.next, op.bytes, op.upToDate) ? [state] : [];
    case "close":
      if (state.closed) return [state];
      return op.outcome === "ok" ? [changed(state, index, { closed: true })] : [changed(state, index, { closed: true }), state];
    case "append":
      return appendStep(state, op.body, op.producer, op.outcome, index);
  }
}

function readMatches(state: ModelState, start: number, next: number, bytes: string, upToDate: boolean): boolean {
  const { content } = state;
  if (start > next || next - start !== bytes.length || next > content.length) return false;
  if (upToDate && next !== content.length) return false;
  return content.startsWith(bytes, start);
}

type ProducerAnswer = "appended" | "duplicate" | "stale" | "gap";

/** checkProducer's table: a new id starts at seq 0; a higher epoch restarts at 0; a lower one is stale. */
function producerAnswer(state: ModelState, producer: ProducerTag): ProducerAnswer {
  const known = state.producers.get(producer.id);
  if (known === undefined) return producer.seq === 0 ? "appended" : "gap";
  if (producer.epoch < known.epoch) return "stale";
  if (producer.epoch > known.epoch) return producer.seq === 0 ? "appended" : "gap";
  if (producer.seq <= known.last) return "duplicate";
  return producer.seq === known.last + 1 ? "appended" : "gap";
}

type Answer = { readonly kind: "appended" } | { readonly kind: "duplicate" } | { readonly kind: "refused"; readonly reason: "closed" | "producer" };

/** decideAppend: a closed stream still answers a producer's duplicate and its stale epoch, and refuses the rest. */
function answer(state: ModelState, producer: ProducerTag | null): Answer {
  const verdict = producer === null ? "appended" : producerAnswer(state, producer);
  if (verdict === "duplicate") return { kind: "duplicate" };
  if (verdict === "stale") return { kind: "refused", reason: "producer" };
  if (state.closed) return { kind: "refused", reason: "closed" };
  return verdict === "gap" ? { kind: "refused", reason: "producer" } : { kind: "appended" };
}

function appendStep(state: ModelState, body: string, producer: ProducerTag | null, outcome: AppendOutcome, index: number): readonly ModelState[] {
  const heard = answer(state, producer);
  const start = state.content.length;
  const possible = heard.kind === "appended" && (state.finalContent === null || state.finalContent.startsWith(body, start));
  const effect = (): ModelState => appended(state, body, producer, index);
  switch (outcome.kind) {
    case "ok":
      return possible && outcome.start === start && outcome.end === start + body.length ? [effect()] : [];
    case "duplicate":
      return heard.kind === "duplicate" ? [state] : [];
    case "unknown":
      return possible ? [effect(), state] : [state];
    case "rejected":
      return outcome.reason === "other" || (heard.kind === "refused" && heard.reason === outcome.reason) ? [state] : [];
  }
}

function appended(state: ModelState, body: string, producer: ProducerTag | null, index: number): ModelState {
  let producers = state.producers;
  if (producer !== null) {
    const next = new Map(producers);
    next.set(producer.id, { epoch: producer.epoch, last: producer.seq });
    producers = next;
  }
  return changed(state, index, { content: state.content + body, producers });
}

/** `state` with `patch` applied by operation `index`: its digest takes the operation in. */
function changed(state: ModelState, index: number, patch: Partial<Pick<ModelState, "content" | "producers" | "closed">>): ModelState {
  const h1 = Math.imul(state.h1 ^ (index + 1), 0x01000193) >>> 0;
  let h2 = Math.imul((state.h2 + index + 0x9e3779b9) | 0, 0x5bd1e995);
  h2 = (h2 ^ (h2 >>> 15)) >>> 0;
  const content = patch.content ?? state.content;
  return { ...state, ...patch, h1, h2, digest: `${content.length}.${h1}.${h2}` };
}
