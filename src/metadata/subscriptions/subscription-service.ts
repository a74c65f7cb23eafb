// The MetaLog's subscriptions (docs/subscriptions.md), independent of where the book is kept: records with
// their wake and lease state and the signing key, over a storage port (subscription-storage.ts). The MetaLog
// Durable Object runs it over SQLite; the simulation and tests over memory. Every decision is the pure core's
// (src/core/subscriptions); this module draws time, wake ids and tokens (parameters, so the simulation
// draws them from its seed), keeps the book and the set's version, and prepares the effects.
//
// A separate book, not log entries (like heartbeats): wake state changes on every followed append, callback
// and claim, and nodes never need a replayed history of it, only the current record. Every state change
// happens synchronously on arrival (read the record, run the pure core, write the row), so steps are applied
// one at a time in arrival order; only signing the resulting webhooks awaits.
import { workerLog, type Logger } from "../../log/logger.ts";
import {
  ackWake,
  addExplicitStreams,
  checkAddedLinks,
  checkConfigStreams,
  checkSubscriptionCount,
  claimWake,
  decideSubscriptionPut,
  newSubscription,
  nextDeadlineMs,
  onStreamAppend,
  onWebhookReply,
  releaseWake,
  removeExplicitStream,
  settleLease,
  subscriptionNotFound,
  subscriptionView,
  webhookCallback,
  type AckReply,
  type AckRequest,
  type ClaimGrant,
  type Step,
  type StreamTail,
  type SubscriptionConfig,
  type SubscriptionEffect,
  type SubscriptionLimits,
  type SubscriptionRecord,
  type SubscriptionView,
  type WakeContext,
  type WakeRef,
} from "../../core/subscriptions/index.ts";
import type { PreparedEffect, PutOutcome, SubscriptionAnswer, SubscriptionSet, WebhookJwks } from "../../ports/meta-log-client.ts";
import { base64UrlEncode } from "../../subscriptions/webhook-signing.ts";
import { prepareEffects, type WakeAuthorization } from "./prepare-effects.ts";
import { SigningKeys, WEBCRYPTO_KEYS, type WebhookKeyMaker } from "./signing-keys.ts";
import { SubscriptionBook, type BookEntry } from "./subscription-book.ts";
import type { SubscriptionStorage } from "./subscription-storage.ts";
import { SubscriptionSetWatch } from "./set-watch.ts";

const TOKEN_BYTES = 32;

export interface SubscriptionServiceOptions {
  /** MAX_SUBSCRIPTIONS, MAX_SUBSCRIPTION_STREAMS and MAX_SUBSCRIPTION_BOOK_BYTES, read at each use. */
  readonly limits: SubscriptionLimits;
  /** Called after each change with the earliest lease deadline (or null): the MetaLog sets its alarm. */
  readonly onDeadline: (deadlineMs: number | null) => void;
  readonly now?: () => number;
  readonly freshWakeId?: () => string;
  readonly freshToken?: () => string;
  readonly wakeAuthorization?: WakeAuthorization;
  readonly keyMaker?: WebhookKeyMaker;
  readonly log?: Logger;
}

type Answer<T> = SubscriptionAnswer<T>;

export class SubscriptionService {
  private readonly book: SubscriptionBook;
  private readonly set: SubscriptionSetWatch;
  private readonly keys: SigningKeys;
  private readonly now: () => number;
  private readonly freshWakeId: () => string;
  private readonly freshToken: () => string;
  private readonly wakeAuthorization: WakeAuthorization;
  private readonly log: Logger;
  /** Reports received (appends nodes told about): lets tests see that quiet nodes stay quiet. */
  reports = 0;

  constructor(
    storage: SubscriptionStorage,
    private readonly options: SubscriptionServiceOptions,
  ) {
    this.now = options.now ?? (() => Date.now());
    this.freshWakeId = options.freshWakeId ?? (() => crypto.randomUUID());
    this.freshToken = options.freshToken ?? (() => base64UrlEncode(crypto.getRandomValues(new Uint8Array(TOKEN_BYTES))));
    this.wakeAuthorization = options.wakeAuthorization ?? (() => Promise.resolve(null));
    this.log = options.log ?? workerLog;
    this.book = new SubscriptionBook(storage, () => options.limits.maxSubscriptionBookBytes);
    this.set = new SubscriptionSetWatch(this.now);
    this.keys = new SigningKeys(storage, options.keyMaker ?? WEBCRYPTO_KEYS, this.now);
  }

  /** recordBytes of every record together (MAX_SUBSCRIPTION_BOOK_BYTES): for stats and tests. */
  get heldBytes(): number {
    return this.book.heldBytes;
  }

  /** Subscriptions that exist now (cheap: in memory). */
  get size(): number {
    return this.book.size;
  }

  get version(): number {
    return this.set.version;
  }

  /** The current record of `id` (tests and the simulation's checker read it; never mutate it). */
  record(id: string): SubscriptionRecord | null {
    return this.book.get(id)?.record ?? null;
  }

  /** SUB-1: create (201), confirm (200) or refuse (409). `config` was parsed and checked by the route. */
  async put(id: string, config: SubscriptionConfig, origin: string): Promise<Answer<PutOutcome>> {
    const existing = this.book.get(id);
    const decision = decideSubscriptionPut(existing?.record.config ?? null, config);
    if (decision.kind === "reject") return { ok: false, error: decision.error, effects: [] };
    let entry = existing;
    if (decision.kind === "create" || entry === undefined) {
      const { maxSubscriptions, maxSubscriptionStreams } = this.options.limits;
      const refused = checkSubscriptionCount(this.book.size, maxSubscriptions);
      if (refused !== null) return { ok: false, error: refused, effects: [] };
      const streams = checkConfigStreams(config.streams, maxSubscriptionStreams);
      if (!streams.ok) return { ok: false, error: streams.error, effects: [] };
      // Streams that exist already link on their next append (from offset zero): the MetaLog keeps no
      // tails, and asking every node for them would make a PUT as slow as the slowest node.
      const added = this.book.add(newSubscription(id, config, this.now(), []), origin);
      if (!("record" in added)) return { ok: false, error: added, effects: [] };
      entry = added;
      await this.set.created();
    }
    const view = await this.viewOf(entry);
    return { ok: true, value: { created: decision.kind === "create", view }, effects: [] };
  }

  async get(id: string): Promise<Answer<SubscriptionView>> {
    const entry = this.book.get(id);
    if (entry === undefined) return { ok: false, error: subscriptionNotFound(id), effects: [] };
    return { ok: true, value: await this.viewOf(entry), effects: [] };
  }

  /** DELETE: 204 whether or not it existed. */
  delete(id: string): void {
    if (!this.book.remove(id)) return;
    this.set.removed();
    this.scheduleDeadline();
  }

  addStreams(id: string, paths: readonly string[]): Answer<null> {
    const entry = this.book.get(id);
    const full = entry === undefined ? null : checkAddedLinks(entry.record.links, paths, this.options.limits.maxSubscriptionStreams);
    if (full !== null) return { ok: false, error: full, effects: [] };
    return this.change(id, (record) => addExplicitStreams(record, paths, []));
  }

  removeStream(id: string, path: string): Answer<null> {
    return this.change(id, (record) => removeExplicitStream(record, path));
  }

  callback(id: string, request: AckRequest, bearer: string | null): Promise<Answer<AckReply>> {
    return this.step(id, (record, ctx) => webhookCallback(record, request, bearer, ctx));
  }

  ack(id: string, request: AckRequest, bearer: string | null): Promise<Answer<AckReply>> {
    return this.step(id, (record, ctx) => ackWake(record, request, bearer, ctx));
  }

  claim(id: string, worker: string): Promise<Answer<ClaimGrant>> {
    return this.step(id, (record, ctx) => claimWake(record, worker, ctx));
  }

  release(id: string, ref: WakeRef, bearer: string | null): Promise<Answer<null>> {
    return this.step(id, (record, ctx) => releaseWake(record, ref, bearer, ctx));
  }

  webhookReplied(id: string, ref: WakeRef, done: boolean): Promise<Answer<unknown>> {
    return this.step(id, (record, ctx) => onWebhookReply(record, ref, done, ctx));
  }

  jwks(): Promise<WebhookJwks> {
    return this.keys.jwks();
  }

  /**
   * Acknowledged appends (a batch from one node, in acknowledgement order): every subscription that follows
   * a stream records its tail and may wake. Returns at once when there are no subscriptions.
   */
  async streamsAppended(tails: readonly StreamTail[]): Promise<readonly PreparedEffect[]> {
    this.reports += tails.length;
    if (this.book.size === 0 || tails.length === 0) return [];
    const raw: Array<{ origin: string; effects: readonly SubscriptionEffect[] }> = [];
    for (const entry of this.book.all()) {
      let record = entry.record;
      const effects: SubscriptionEffect[] = [];
      for (const tail of tails) {
        const step = onStreamAppend(record, tail, this.context(entry.origin));
        record = step.state;
        effects.push(...step.effects);
      }
      // An append cannot be refused: a record that would pass the row bound keeps its old state (the append
      // is not followed by it) and says so in the log.
      const refused = this.book.commit(entry, record);
      if (refused !== null) {
        this.log.log("meta_log.error", { during: "follow_append", subscription: entry.record.id, stream: tails[0]?.path ?? null }, refused.message);
        continue;
      }
      if (effects.length > 0) raw.push({ origin: entry.origin, effects });
    }
    this.scheduleDeadline();
    return this.prepareAll(raw);
  }

  /** A node's long-poll on the set of subscriptions (see set-watch.ts). */
  watch(nodeId: string, since: number, timeoutMs: number): Promise<SubscriptionSet> {
    return this.set.watch(nodeId, since, timeoutMs, () => this.book.size);
  }

  /** The alarm: settle every lease that lapsed by nowMs; returns the effects (next generations). */
  async settleDue(nowMs: number): Promise<readonly PreparedEffect[]> {
    const due: Array<{ origin: string; effects: readonly SubscriptionEffect[] }> = [];
    for (const entry of this.book.all()) {
      const deadline = nextDeadlineMs(entry.record);
      if (deadline === null || deadline > nowMs) continue;
      const step = settleLease(entry.record, { ...this.context(entry.origin), nowMs });
      const refused = this.book.commit(entry, step.state);
      if (refused !== null) {
        this.log.log("meta_log.error", { during: "settle_lease", subscription: entry.record.id }, refused.message);
        continue;
      }
      due.push({ origin: entry.origin, effects: step.effects });
    }
    this.scheduleDeadline();
    return this.prepareAll(due);
  }

  /** The earliest lease deadline over all subscriptions, or null. */
  earliestDeadlineMs(): number | null {
    let earliest: number | null = null;
    for (const entry of this.book.all()) {
      const deadline = nextDeadlineMs(entry.record);
      if (deadline !== null && (earliest === null || deadline < earliest)) earliest = deadline;
    }
    return earliest;
  }

  private context(origin: string): WakeContext {
    return {
      nowMs: this.now(),
      freshWakeId: this.freshWakeId(),
      freshToken: this.freshToken(),
      publicOrigin: origin,
      maxLinks: this.options.limits.maxSubscriptionStreams,
    };
  }

  private change(id: string, update: (record: SubscriptionRecord) => SubscriptionRecord): Answer<null> {
    const entry = this.book.get(id);
    if (entry === undefined) return { ok: false, error: subscriptionNotFound(id), effects: [] };
    const refused = this.book.commit(entry, update(entry.record));
    if (refused !== null) return { ok: false, error: refused, effects: [] };
    return { ok: true, value: null, effects: [] };
  }

  /** One state-machine step, applied and written before the first await. */
  private async step<V>(id: string, run: (record: SubscriptionRecord, ctx: WakeContext) => Step<V>): Promise<Answer<V>> {
    const entry = this.book.get(id);
    if (entry === undefined) return { ok: false, error: subscriptionNotFound(id), effects: [] };
    const step = run(entry.record, this.context(entry.origin));
    const changed = step.state !== entry.record;
    const refused = this.book.commit(entry, step.state);
    if (refused !== null) return { ok: false, error: refused, effects: [] };
    if (changed) this.scheduleDeadline();
    const effects = await this.prepare(step.effects, entry.origin);
    const result = step.result;
    return result.ok ? { ok: true, value: result.value, effects } : { ok: false, error: result.error, effects };
  }

  private scheduleDeadline(): void {
    this.options.onDeadline(this.earliestDeadlineMs());
  }

  private async prepareAll(batches: ReadonlyArray<{ origin: string; effects: readonly SubscriptionEffect[] }>): Promise<PreparedEffect[]> {
    const prepared: PreparedEffect[] = [];
    for (const { origin, effects } of batches) prepared.push(...(await this.prepare(effects, origin)));
    return prepared;
  }

  private prepare(effects: readonly SubscriptionEffect[], origin: string): Promise<PreparedEffect[]> {
    return prepareEffects(effects, origin, { keys: this.keys, wakeAuthorization: this.wakeAuthorization, now: this.now });
  }

  private async viewOf(entry: BookEntry): Promise<SubscriptionView> {
    const signer = await this.keys.current();
    return subscriptionView(entry.record, { kid: signer.kid, publicOrigin: entry.origin });
  }
}
