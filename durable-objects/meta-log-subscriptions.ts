// The subscription book of the MetaLog (docs/subscriptions.md): subscription records with their wake and
// lease state, and the deployment's Ed25519 webhook signing key, in the MetaLog's SQLite. This module owns
// the tables; the MetaLog's subscription RPC methods call it. A separate table, not log entries (like
// heartbeats): wake state changes on every followed append, callback and claim, is soft in spirit (a lost
// wake lapses and retries), and nodes never need a replayed history of it, only the current record.
//   meta_subscription          id, record (JSON SubscriptionRecord), origin (the public origin of its PUT)
//   meta_subscription_key      kid, x, d, created_at_ms: the signing key(s); the oldest row signs
//
// Every state change happens synchronously on arrival (read the record, run the pure core, write the row),
// so steps are applied one at a time in arrival order; only signing the resulting webhooks awaits.
// Time, wake ids and tokens are drawn here, in the shell, and handed to the pure core.
import { workerLog } from "../src/log/logger.ts";
import {
  ackWake,
  addExplicitStreams,
  checkAddedLinks,
  checkBookBytes,
  checkRecordGrowth,
  checkConfigStreams,
  checkRecordSize,
  checkSubscriptionCount,
  claimWake,
  decideSubscriptionPut,
  newSubscription,
  nextDeadlineMs,
  onStreamAppend,
  onWebhookReply,
  recordBytes,
  releaseWake,
  removeExplicitStream,
  settleLease,
  subscriptionView,
  webhookCallback,
  type AckReply,
  type AckRequest,
  type Checked,
  type ClaimGrant,
  type Step,
  type StreamTail,
  type SubscriptionConfig,
  type SubscriptionEffect,
  type SubscriptionError,
  type SubscriptionLimits,
  type SubscriptionRecord,
  type SubscriptionView,
  type WakeContext,
  type WakeRef,
  subscriptionNotFound,
} from "../src/core/subscriptions/index.ts";
import type { PreparedEffect, PutOutcome, SubscriptionAnswer, SubscriptionSet, WebhookJwks } from "../src/ports/meta-log-client.ts";
import {
  base64UrlEncode,
  createWebhookSigner,
  generateWebhookSigningKey,
  webhookJwks,
  type StoredSigningKey,
  type WebhookSigner,
} from "../src/subscriptions/webhook-signing.ts";

interface Entry {
  record: SubscriptionRecord;
  readonly origin: string;
  /** recordBytes of the record's row: what it counts toward MAX_SUBSCRIPTION_BOOK_BYTES. */
  bytes: number;
}

const TOKEN_BYTES = 32;
/** A PUT waits at most this long for the nodes watching the book to confirm the new version. */
const CONFIRM_WAIT_MS = 2_000;
/** A node that watched within this long (plus its watch timeout) is asked to confirm a new version. */
const WATCH_SLACK_MS = 5_000;

function freshToken(): string {
  return base64UrlEncode(crypto.getRandomValues(new Uint8Array(TOKEN_BYTES)));
}

export class MetaLogSubscriptions {
  private readonly entries = new Map<string, Entry>();
  /** The sum of the entries' bytes (MAX_SUBSCRIPTION_BOOK_BYTES). */
  private bookBytes = 0;
  /**
   * Bumped on every create and delete: lets a node's cache tell that the set changed. Starts at the clock so
   * a restarted MetaLog never answers a version a node already holds for the old set.
   */
  private setVersion = Date.now();
  private signer: Promise<WebhookSigner> | null = null;
  /** Per node: the version its latest watch call said it knows, and until when it counts as watching. */
  private readonly confirmed = new Map<string, { version: number; watchingUntilMs: number }>();
  private readonly changeWaiters = new Set<() => void>();
  private readonly confirmWaiters = new Set<() => void>();
  /** Reports received (appends nodes told about): lets tests see that quiet nodes stay quiet. */
  reports = 0;

  constructor(
    private readonly sql: SqlStorage,
    /** Called after each change with the earliest lease deadline (or null): the MetaLog sets its alarm. */
    private readonly onDeadline: (deadlineMs: number | null) => void,
    /** MAX_SUBSCRIPTIONS and MAX_SUBSCRIPTION_STREAMS, read at each use (tests change them on a running log). */
    private readonly limits: SubscriptionLimits,
    /** The `Authorization` a wake event's append carries (token mode), or null (open mode). */
    private readonly wakeAuthorization: (stream: string) => Promise<string | null> = () => Promise.resolve(null),
  ) {
    sql.exec(`CREATE TABLE IF NOT EXISTS meta_subscription (
      id TEXT PRIMARY KEY,
      record TEXT NOT NULL,
      origin TEXT NOT NULL
    )`);
    sql.exec(`CREATE TABLE IF NOT EXISTS meta_subscription_key (
      kid TEXT PRIMARY KEY,
      x TEXT NOT NULL,
      d TEXT NOT NULL,
      created_at_ms INTEGER NOT NULL
    )`);
    for (const row of sql.exec<{ id: string; record: string; origin: string }>("SELECT id, record, origin FROM meta_subscription")) {
      const bytes = recordBytes(row.record);
      this.entries.set(row.id, { record: JSON.parse(row.record) as SubscriptionRecord, origin: row.origin, bytes });
      this.bookBytes += bytes;
    }
  }

  /** recordBytes of every record together (MAX_SUBSCRIPTION_BOOK_BYTES): for stats and tests. */
  get heldBytes(): number {
    return this.bookBytes;
  }

  /** Subscriptions that exist now (cheap: in memory). */
  get size(): number {
    return this.entries.size;
  }

  get version(): number {
    return this.setVersion;
  }

  /** SUB-1: create (201), confirm (200) or refuse (409). `config` was parsed and checked by the route. */
  async put(id: string, config: SubscriptionConfig, origin: string): Promise<SubscriptionAnswer<PutOutcome>> {
    const existing = this.entries.get(id);
    const decision = decideSubscriptionPut(existing?.record.config ?? null, config);
    if (decision.kind === "reject") return { ok: false, error: decision.error, effects: [] };
    let entry = existing;
    if (decision.kind === "create" || entry === undefined) {
      const refused = checkSubscriptionCount(this.entries.size, this.limits.maxSubscriptions);
      if (refused !== null) return { ok: false, error: refused, effects: [] };
      const streams = checkConfigStreams(config.streams, this.limits.maxSubscriptionStreams);
      if (!streams.ok) return { ok: false, error: streams.error, effects: [] };
      // Streams that exist already link on their next append (from offset zero): the MetaLog keeps no
      // tails, and asking every node for them would make a PUT as slow as the slowest node.
      const record = newSubscription(id, config, Date.now(), []);
      const text = JSON.stringify(record);
      const bytes = recordBytes(text);
      const tooLarge = checkRecordSize(text.length) ?? checkBookBytes(this.bookBytes, 0, bytes, this.limits.maxSubscriptionBookBytes);
      if (tooLarge !== null) return { ok: false, error: tooLarge, effects: [] };
      entry = { record, origin, bytes };
      this.entries.set(id, entry);
      this.bookBytes += bytes;
      this.writeText(entry, text);
      await this.bumpVersion();
    }
    const view = await this.viewOf(entry);
    return { ok: true, value: { created: decision.kind === "create", view }, effects: [] };
  }

  async get(id: string): Promise<SubscriptionAnswer<SubscriptionView>> {
    const entry = this.entries.get(id);
    if (entry === undefined) return { ok: false, error: subscriptionNotFound(id), effects: [] };
    return { ok: true, value: await this.viewOf(entry), effects: [] };
  }

  /** DELETE: 204 whether or not it existed. */
  delete(id: string): void {
    const entry = this.entries.get(id);
    if (entry === undefined) return;
    this.entries.delete(id);
    this.bookBytes -= entry.bytes;
    this.sql.exec("DELETE FROM meta_subscription WHERE id = ?", id);
    // No wait: a node that has not heard yet only reports appends nobody follows.
    this.setVersion += 1;
    this.wake(this.changeWaiters);
    this.scheduleDeadline();
  }

  addStreams(id: string, paths: readonly string[]): SubscriptionAnswer<null> {
    const entry = this.entries.get(id);
    const full = entry === undefined ? null : checkAddedLinks(entry.record.links, paths, this.limits.maxSubscriptionStreams);
    if (full !== null) return { ok: false, error: full, effects: [] };
    return this.change(id, (record) => addExplicitStreams(record, paths, []));
  }

  removeStream(id: string, path: string): SubscriptionAnswer<null> {
    return this.change(id, (record) => removeExplicitStream(record, path));
  }

  callback(id: string, request: AckRequest, bearer: string | null): Promise<SubscriptionAnswer<AckReply>> {
    return this.step(id, (record, ctx) => webhookCallback(record, request, bearer, ctx));
  }

  ack(id: string, request: AckRequest, bearer: string | null): Promise<SubscriptionAnswer<AckReply>> {
    return this.step(id, (record, ctx) => ackWake(record, request, bearer, ctx));
  }

  claim(id: string, worker: string): Promise<SubscriptionAnswer<ClaimGrant>> {
    return this.step(id, (record, ctx) => claimWake(record, worker, ctx));
  }

  release(id: string, ref: WakeRef, bearer: string | null): Promise<SubscriptionAnswer<null>> {
    return this.step(id, (record, ctx) => releaseWake(record, ref, bearer, ctx));
  }

  webhookReplied(id: string, ref: WakeRef, done: boolean): Promise<SubscriptionAnswer<unknown>> {
    return this.step(id, (record, ctx) => onWebhookReply(record, ref, done, ctx));
  }

  /**
   * Acknowledged appends (a batch from one node, in acknowledgement order): every subscription that follows
   * a stream records its tail and may wake. Returns at once when there are no subscriptions.
   */
  async streamsAppended(tails: readonly StreamTail[]): Promise<readonly PreparedEffect[]> {
    this.reports += tails.length;
    if (this.entries.size === 0 || tails.length === 0) return [];
    const raw: Array<{ origin: string; effects: readonly SubscriptionEffect[] }> = [];
    for (const entry of this.entries.values()) {
      let record = entry.record;
      const effects: SubscriptionEffect[] = [];
      for (const tail of tails) {
        const step = onStreamAppend(record, tail, this.context(entry.origin));
        record = step.state;
        effects.push(...step.effects);
      }
      // An append cannot be refused: a record that would pass the row bound keeps its old state (the append
      // is not followed by it) and says so in the log.
      const refused = this.commit(entry, record);
      if (refused !== null) {
        workerLog.log("meta_log.error", { during: "follow_append", subscription: entry.record.id, stream: tails[0]?.path ?? null }, refused.message);
        continue;
      }
      if (effects.length > 0) raw.push({ origin: entry.origin, effects });
    }
    this.scheduleDeadline();
    const prepared: PreparedEffect[] = [];
    for (const { origin, effects } of raw) prepared.push(...(await this.prepare(effects, origin)));
    return prepared;
  }

  /**
   * A node's long-poll on the set of subscriptions. Calling it with `since` confirms the node knows that
   * version (it updated its cache before calling again); answers at once when the version differs, else
   * when it changes or after timeoutMs.
   */
  async watch(nodeId: string, since: number, timeoutMs: number): Promise<SubscriptionSet> {
    this.confirmed.set(nodeId, { version: since, watchingUntilMs: Date.now() + timeoutMs + WATCH_SLACK_MS });
    this.wake(this.confirmWaiters);
    if (since === this.setVersion && timeoutMs > 0) await this.until(this.changeWaiters, () => since !== this.setVersion, timeoutMs);
    return { version: this.setVersion, subscriptions: this.entries.size };
  }

  /**
   * A new subscription: bump the version and wait (bounded) until every node watching has confirmed it,
   * so a node that skipped reports while none existed reports every append acknowledged after the PUT's
   * answer. A node that stopped watching (gone, restarted) is waited for at most CONFIRM_WAIT_MS; a new
   * incarnation starts by reporting everything until its first watch answers.
   */
  private async bumpVersion(): Promise<void> {
    this.setVersion += 1;
    const version = this.setVersion;
    this.wake(this.changeWaiters);
    const nowMs = Date.now();
    const pending = [...this.confirmed].filter(([, c]) => c.version < version && c.watchingUntilMs > nowMs).map(([id]) => id);
    if (pending.length === 0) return;
    const confirmedAll = (): boolean => pending.every((id) => (this.confirmed.get(id)?.version ?? version) >= version);
    await this.until(this.confirmWaiters, confirmedAll, CONFIRM_WAIT_MS);
  }

  private until(waiters: Set<() => void>, ready: () => boolean, timeoutMs: number): Promise<void> {
    if (ready()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = (): void => {
        if (!ready()) return;
        finish();
      };
      const finish = (): void => {
        clearTimeout(timer);
        waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(finish, timeoutMs);
      waiters.add(check);
    });
  }

  private wake(waiters: Set<() => void>): void {
    for (const check of [...waiters]) check();
  }

  /** The alarm: settle every lease that lapsed by nowMs; returns the effects (next generations). */
  async settleDue(nowMs: number): Promise<readonly PreparedEffect[]> {
    const prepared: PreparedEffect[] = [];
    const due: Array<{ origin: string; effects: readonly SubscriptionEffect[] }> = [];
    for (const entry of this.entries.values()) {
      const deadline = nextDeadlineMs(entry.record);
      if (deadline === null || deadline > nowMs) continue;
      const step = settleLease(entry.record, { ...this.context(entry.origin), nowMs });
      const refused = this.commit(entry, step.state);
      if (refused !== null) {
        workerLog.log("meta_log.error", { during: "settle_lease", subscription: entry.record.id }, refused.message);
        continue;
      }
      due.push({ origin: entry.origin, effects: step.effects });
    }
    this.scheduleDeadline();
    for (const { origin, effects } of due) prepared.push(...(await this.prepare(effects, origin)));
    return prepared;
  }

  async jwks(): Promise<WebhookJwks> {
    await this.signingKey();
    return webhookJwks(this.keys());
  }

  /** The earliest lease deadline over all subscriptions, or null. */
  earliestDeadlineMs(): number | null {
    let earliest: number | null = null;
    for (const entry of this.entries.values()) {
      const deadline = nextDeadlineMs(entry.record);
      if (deadline !== null && (earliest === null || deadline < earliest)) earliest = deadline;
    }
    return earliest;
  }

  private context(origin: string): WakeContext {
    return {
      nowMs: Date.now(),
      freshWakeId: crypto.randomUUID(),
      freshToken: freshToken(),
      publicOrigin: origin,
      maxLinks: this.limits.maxSubscriptionStreams,
    };
  }

  private change(id: string, update: (record: SubscriptionRecord) => SubscriptionRecord): SubscriptionAnswer<null> {
    const entry = this.entries.get(id);
    if (entry === undefined) return { ok: false, error: subscriptionNotFound(id), effects: [] };
    const refused = this.commit(entry, update(entry.record));
    if (refused !== null) return { ok: false, error: refused, effects: [] };
    return { ok: true, value: null, effects: [] };
  }

  /** One state-machine step, applied and written before the first await. */
  private async step<V>(
    id: string,
    run: (record: SubscriptionRecord, ctx: WakeContext) => Step<V>,
  ): Promise<SubscriptionAnswer<V>> {
    const entry = this.entries.get(id);
    if (entry === undefined) return { ok: false, error: subscriptionNotFound(id), effects: [] };
    const step = run(entry.record, this.context(entry.origin));
    const changed = step.state !== entry.record;
    const refused = this.commit(entry, step.state);
    if (refused !== null) return { ok: false, error: refused, effects: [] };
    if (changed) this.scheduleDeadline();
    const effects = await this.prepare(step.effects, entry.origin);
    const result: Checked<V> = step.result;
    return result.ok ? { ok: true, value: result.value, effects } : { ok: false, error: result.error, effects };
  }

  /**
   * Makes `record` the entry's state and writes its row, unless it is the same state, or its JSON grows past
   * the row bound (too_large) or would grow the book past MAX_SUBSCRIPTION_BOOK_BYTES (limit_reached): then
   * nothing changes and the caller answers the error.
   */
  private commit(entry: Entry, record: SubscriptionRecord): SubscriptionError | null {
    if (record === entry.record) return null;
    const text = JSON.stringify(record);
    const bytes = recordBytes(text);
    const tooLarge = checkRecordGrowth(entry.bytes, bytes, text.length);
    if (tooLarge !== null) return tooLarge;
    const full = checkBookBytes(this.bookBytes, entry.bytes, bytes, this.limits.maxSubscriptionBookBytes);
    if (full !== null) return full;
    this.bookBytes += bytes - entry.bytes;
    entry.bytes = bytes;
    entry.record = record;
    this.writeText(entry, text);
    return null;
  }

  private writeText(entry: Entry, text: string): void {
    this.sql.exec("INSERT OR REPLACE INTO meta_subscription (id, record, origin) VALUES (?, ?, ?)", entry.record.id, text, entry.origin);
  }

  private scheduleDeadline(): void {
    this.onDeadline(this.earliestDeadlineMs());
  }

  /** Serialize once and sign (webhooks), so the performer sends exactly the signed bytes. */
  private async prepare(effects: readonly SubscriptionEffect[], origin: string): Promise<PreparedEffect[]> {
    const out: PreparedEffect[] = [];
    for (const effect of effects) {
      if (effect.kind === "append_wake_event") {
        const authorization = await this.wakeAuthorization(effect.stream);
        out.push({ kind: "append_wake_event", stream: effect.stream, origin, rawBody: JSON.stringify(effect.event), ...(authorization === null ? {} : { authorization }) });
        continue;
      }
      const rawBody = JSON.stringify(effect.body);
      const signer = await this.signingKey();
      out.push({
        kind: "send_webhook",
        subscriptionId: effect.body.subscription_id,
        wakeId: effect.body.wake_id,
        generation: effect.body.generation,
        url: effect.url,
        rawBody,
        signature: await signer.sign(rawBody, Date.now()),
      });
    }
    return out;
  }

  private async viewOf(entry: Entry): Promise<SubscriptionView> {
    const signer = await this.signingKey();
    return subscriptionView(entry.record, { kid: signer.kid, publicOrigin: entry.origin });
  }

  private keys(): StoredSigningKey[] {
    return [...this.sql.exec<{ kid: string; x: string; d: string }>("SELECT kid, x, d FROM meta_subscription_key ORDER BY created_at_ms, kid")].map(
      (row) => ({ kid: row.kid, x: row.x, d: row.d }),
    );
  }

  /** The deployment's signing key: generated on first use, then the stored one forever (until rotated). */
  private signingKey(): Promise<WebhookSigner> {
    this.signer ??= this.loadOrGenerateKey().catch((error: unknown) => {
      this.signer = null;
      throw error;
    });
    return this.signer;
  }

  private async loadOrGenerateKey(): Promise<WebhookSigner> {
    let stored = this.keys()[0];
    if (stored === undefined) {
      const generated = await generateWebhookSigningKey();
      // Re-read after the await: the oldest stored key wins, so every caller signs with the same kid.
      this.sql.exec(
        "INSERT OR IGNORE INTO meta_subscription_key (kid, x, d, created_at_ms) VALUES (?, ?, ?, ?)",
        generated.kid,
        generated.x,
        generated.d,
        Date.now(),
      );
      stored = this.keys()[0] ?? generated;
    }
    return createWebhookSigner(stored);
  }
}
