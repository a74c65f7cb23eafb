// The clients: each is an actor that, when the scheduler lets it, starts one action and runs it to the
// end (its requests and retries go through the network and the scheduler like everything else). Kinds:
// - writer: appends a unique token with no producer (no retry: an unknown outcome stays unknown);
// - producer: an idempotent producer bound to one stream; retries the same (epoch, seq) until it is
//   acknowledged (new, or a duplicate), sometimes starts a new producer epoch;
// - reader: catch-up reads from the start or from an offset seen before;
// - tailer: long-polls from where it is, stream by stream.
// Any of them creates its stream first if no create of it was acknowledged yet. Every invocation and its
// outcome goes into the history.
import { formatOffset, parseOffset } from "../../src/core/protocol/offsets.ts";
import type { History, AppendRecord } from "./history.ts";
import type { HttpAnswer, Network } from "./network.ts";
import type { Prng } from "./prng.ts";
import type { Actor, Choice, Phase } from "./scheduler.ts";
import type { SimMetaLog } from "./sim-meta.ts";
import type { Trace } from "./trace.ts";
import type { VirtualClock } from "./virtual-time.ts";

const TEXT = { "content-type": "text/plain" };

/** What clients share: the stream names, which creates were acknowledged, offsets seen per stream. */
export class World {
  readonly created = new Set<string>();
  readonly offsetsSeen = new Map<string, number[]>();
  /** Streams the clients leave alone for now (the residency scenario, residency-scenario.ts). */
  readonly quiet = new Set<string>();
  private tokens = 0;

  constructor(readonly streams: readonly string[]) {}

  /** The streams clients may pick now: all of them but the quiet ones. */
  get touchable(): readonly string[] {
    return this.quiet.size === 0 ? this.streams : this.streams.filter((stream) => !this.quiet.has(stream));
  }

  token(prefix: string): string {
    return `[${prefix}.${++this.tokens}]`;
  }

  sawOffset(stream: string, offset: number): void {
    let seen = this.offsetsSeen.get(stream);
    if (seen === undefined) this.offsetsSeen.set(stream, (seen = []));
    if (seen.length < 64 && !seen.includes(offset)) seen.push(offset);
  }
}

export interface ClientDeps {
  readonly net: Network;
  readonly prng: Prng;
  readonly clock: VirtualClock;
  readonly trace: Trace;
  readonly history: History;
  readonly meta: SimMetaLog;
  readonly world: World;
  /** The nodes' long-poll timeout (the tailer's empty polls are judged against it). */
  readonly longPollTimeoutMs: number;
}

export const streamPath = (name: string, query = ""): string => `/v1/stream/${name}${query}`;

/** A client: idle until the scheduler starts its next action. */
export abstract class Client implements Actor {
  private busy = false;

  constructor(
    readonly name: string,
    protected readonly deps: ClientDeps,
  ) {}

  get idle(): boolean {
    return !this.busy;
  }

  choices(phase: Phase): readonly Choice[] {
    if (this.busy || phase !== "active" || !this.hasWork()) return [];
    return [
      {
        category: "client",
        label: `client ${this.name} acts`,
        run: () => {
          this.busy = true;
          this.act()
            .catch((error: unknown) => this.deps.trace.write(`  client ${this.name} failed: ${String(error)}`))
            .finally(() => (this.busy = false));
        },
      },
    ];
  }

  protected abstract act(): Promise<void>;

  /** Whether there is a stream to act on (not every stream quiet). */
  protected hasWork(): boolean {
    return this.deps.world.touchable.length > 0;
  }

  /** Waits `ms` of virtual time. */
  protected sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => this.deps.clock.schedule(ms, () => resolve(), null, `backoff ${this.name}`));
  }

  /** Creates `stream` unless a create of it was acknowledged already; true when it exists. */
  protected async ensureCreated(stream: string): Promise<boolean> {
    const { world, history, net, trace } = this.deps;
    if (world.created.has(stream)) return true;
    const answer = await net.request(this.name, { method: "PUT", path: streamPath(stream), headers: TEXT });
    history.creates.push({ client: this.name, stream, status: answer.status, step: trace.currentStep });
    if (answer.status === 201 || answer.status === 200) {
      world.created.add(stream);
      return true;
    }
    return false;
  }

  /** Records an acknowledgement of `append` at the offsets the answer names. */
  protected acknowledge(append: AppendRecord, answer: HttpAnswer): void {
    const end = nextOffset(answer);
    if (end === null || answer.by === null) {
      append.attempts.push(`ack without Stream-Next-Offset (${answer.status})`);
      return;
    }
    append.outcome = "acked";
    append.ack = {
      step: this.deps.trace.currentStep,
      ms: this.deps.clock.now(),
      by: answer.by,
      start: end - byteLength(append.token),
      end,
      ownership: this.deps.meta.ownershipOf(append.stream),
    };
    this.deps.world.sawOffset(append.stream, end);
  }
}

export class Writer extends Client {
  protected async act(): Promise<void> {
    const { prng, world, history, net } = this.deps;
    const stream = prng.pick(world.touchable);
    if (!(await this.ensureCreated(stream))) return;
    const append = history.newAppend({ client: this.name, stream, token: world.token(this.name), producer: null, sentStep: this.deps.trace.currentStep, sentMs: this.deps.clock.now() });
    const answer = await net.request(this.name, { method: "POST", path: streamPath(stream), headers: TEXT, body: append.token });
    append.attempts.push(describe(answer));
    if (answer.status === 204 || answer.status === 200) this.acknowledge(append, answer);
    else if (answer.status === 404) append.outcome = "rejected";
  }
}

export class Producer extends Client {
  private epoch = 0;
  private seq = 0;
  private pending: AppendRecord | null = null;
  private readonly stream: string;

  constructor(name: string, deps: ClientDeps) {
    super(name, deps);
    this.stream = deps.prng.pick(deps.world.streams);
  }

  /** Bound to its stream: idle while it is quiet. */
  protected override hasWork(): boolean {
    return !this.deps.world.quiet.has(this.stream);
  }

  protected async act(): Promise<void> {
    const { prng, history, net, trace } = this.deps;
    if (!(await this.ensureCreated(this.stream))) return;
    if (this.pending === null) {
      // Now and then a producer restarts with a new epoch (its seq starts again at 0).
      if (this.seq > 0 && prng.chance(0.05)) {
        this.epoch++;
        this.seq = 0;
      }
      const token = `[${this.name}.e${this.epoch}.s${this.seq}]`;
      this.pending = history.newAppend({
        client: this.name,
        stream: this.stream,
        token,
        producer: { id: this.name, epoch: this.epoch, seq: this.seq },
        sentStep: trace.currentStep,
        sentMs: this.deps.clock.now(),
      });
    }
    const append = this.pending;
    for (let attempt = 0; attempt < 4; attempt++) {
      if (attempt > 0) await this.sleep(prng.between(20, 400));
      const answer = await net.request(this.name, {
        method: "POST",
        path: streamPath(this.stream),
        headers: { ...TEXT, "producer-id": this.name, "producer-epoch": String(this.epoch), "producer-seq": String(this.seq) },
        body: append.token,
      });
      append.attempts.push(describe(answer));
      if (answer.status === 200) {
        this.acknowledge(append, answer);
      } else if (answer.status === 204) {
        // A duplicate: an earlier attempt of this (epoch, seq) landed.
        append.outcome = "duplicate";
        append.duplicateStep = trace.currentStep;
      } else if (answer.status === 400 || answer.status === 403 || (answer.status === 409 && answer.headers.has("producer-expected-seq"))) {
        // Only a lost or reordered append explains these: the producer never skips a seq or an epoch.
        history.producerAnomalies.push({
          client: this.name,
          stream: this.stream,
          step: trace.currentStep,
          by: answer.by,
          detail: `${append.token} answered ${answer.status} ${answer.text.slice(0, 160)}`,
        });
        // Try the same (epoch, seq) again later: skipping it would make every later seq a gap.
        return;
      } else {
        continue;
      }
      this.pending = null;
      this.seq++;
      return;
    }
  }
}

export class Reader extends Client {
  protected async act(): Promise<void> {
    const { prng, world, history, net, trace, clock } = this.deps;
    const stream = prng.pick(world.touchable);
    if (!(await this.ensureCreated(stream))) return;
    const seen = world.offsetsSeen.get(stream) ?? [];
    let offset: number | null = seen.length > 0 && prng.chance(0.5) ? prng.pick(seen) : null;
    for (let page = 0; page < 3; page++) {
      const query = `?offset=${offset === null ? "-1" : formatOffset(offset)}`;
      const sent = { sentStep: trace.currentStep, sentMs: clock.now() };
      const answer = await net.request(this.name, { method: "GET", path: streamPath(stream, query) });
      const next = nextOffset(answer);
      if (answer.status !== 200 || next === null || answer.by === null) return;
      const start = offset ?? 0;
      const answered = { step: trace.currentStep, answeredMs: clock.now() };
      const upToDate = answer.headers.get("stream-up-to-date") === "true";
      history.reads.push({ client: this.name, stream, mode: "catch-up", start, next, bytes: answer.text, upToDate, ...sent, arrivedStep: answer.arrivedStep, ...answered, by: answer.by });
      world.sawOffset(stream, next);
      if (upToDate) return;
      offset = next;
    }
  }
}

export class Tailer extends Client {
  private stream: string | null = null;
  private position: number | null = null;

  protected async act(): Promise<void> {
    const { prng, world, history, net, clock, trace } = this.deps;
    if (this.stream === null || prng.chance(0.2) || world.quiet.has(this.stream)) {
      this.stream = prng.pick(world.touchable);
      this.position = null;
    }
    const stream = this.stream;
    if (!(await this.ensureCreated(stream))) return;
    for (let poll = 0; poll < 2; poll++) {
      const query = this.position === null ? "?offset=-1" : `?offset=${formatOffset(this.position)}&live=long-poll`;
      const sentStep = trace.currentStep;
      const sentMs = clock.now();
      const answer = await net.request(this.name, { method: "GET", path: streamPath(stream, query) });
      const next = nextOffset(answer);
      if (next === null || answer.by === null) return;
      const start = this.position ?? 0;
      if (answer.status === 200) {
        const mode = this.position === null ? "catch-up" : "long-poll";
        const upToDate = answer.headers.get("stream-up-to-date") === "true";
        history.reads.push({ client: this.name, stream, mode, start, next, bytes: answer.text, upToDate, sentStep, sentMs, arrivedStep: answer.arrivedStep, step: trace.currentStep, answeredMs: clock.now(), by: answer.by });
      } else if (answer.status === 204) {
        history.emptyPolls.push({
          client: this.name,
          stream,
          offset: start,
          next,
          sentStep,
          sentMs,
          answeredStep: trace.currentStep,
          answeredMs: clock.now(),
          by: answer.by,
        });
      } else {
        return;
      }
      world.sawOffset(stream, next);
      this.position = next;
    }
  }
}

/**
 * The last reader: after the run settled, reads every stream from its start to its end through the same
 * network (redirects, adoption of closed streams and all), retrying until it gets a definite answer.
 */
export class FinalReader implements Actor {
  readonly name = "final";
  private started = false;
  done = false;

  constructor(private readonly deps: ClientDeps) {}

  choices(phase: Phase): readonly Choice[] {
    if (phase !== "final" || this.started) return [];
    return [
      {
        category: "final",
        label: "final read of every stream",
        run: () => {
          this.started = true;
          this.readAll()
            .catch((error: unknown) => this.deps.trace.write(`  final read failed: ${String(error)}`))
            .finally(() => (this.done = true));
        },
      },
    ];
  }

  private async readAll(): Promise<void> {
    for (const stream of this.deps.world.streams) await this.readOne(stream);
  }

  private async readOne(stream: string): Promise<void> {
    const { net, history, trace, clock } = this.deps;
    let content = "";
    let offset: number | null = null;
    let lastError = "";
    for (let attempt = 0; attempt < 40; ) {
      const query = `?offset=${offset === null ? "-1" : formatOffset(offset)}`;
      const sent = { sentStep: trace.currentStep, sentMs: clock.now() };
      const answer = await net.request("final", { method: "GET", path: streamPath(stream, query) });
      const next = nextOffset(answer);
      if (answer.status === 404 && offset === null) {
        history.finalContent.set(stream, null);
        return;
      }
      if (answer.status === 200 && next !== null && answer.by !== null) {
        const start = offset ?? 0;
        if (start !== content.length) throw new Error(`final read of ${stream}: page at ${start}, have ${content.length}`);
        content += answer.text;
        const upToDate = answer.headers.get("stream-up-to-date") === "true";
        history.reads.push({ client: "final", stream, mode: "final", start, next, bytes: answer.text, upToDate, ...sent, arrivedStep: answer.arrivedStep, step: trace.currentStep, answeredMs: clock.now(), by: answer.by });
        if (upToDate) {
          history.finalContent.set(stream, content);
          return;
        }
        offset = next;
        continue;
      }
      attempt++;
      lastError = describe(answer);
      await new Promise<void>((resolve) => clock.schedule(200 * attempt, () => resolve(), null, "backoff final"));
    }
    history.unreadable.set(stream, lastError);
  }
}

function nextOffset(answer: HttpAnswer): number | null {
  const header = answer.headers.get("stream-next-offset");
  return header === null ? null : parseOffset(header);
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

function describe(answer: HttpAnswer): string {
  return answer.error ?? `${answer.status} ${answer.text.slice(0, 120)}`;
}
