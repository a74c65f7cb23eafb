// The SIGKILL durability check behind kill-restart.e2e.test.ts, kept apart from the test so it can run
// against any server that can be SIGKILLed and restarted (it was checked against the reference server).
//
// Each round: N appenders POST self-describing frames to S octet-stream streams and record every
// acknowledged append (its frame and the Stream-Next-Offset it got back); once every appender has had an
// append acknowledged and then K more appends were acknowledged (K drawn from a seeded random, so a run's
// kill points can be repeated; no wall-clock delay) the service is SIGKILLed mid-flight and restarted;
// then every stream is read from the start and checked:
//   - the stream parses as a sequence of whole frames, each sent by us, none twice: an append is atomic, so
//     an append that was in flight at the kill is either whole or absent, never half-visible;
//   - every acknowledged append of every round so far is present, and the acknowledged Stream-Next-Offsets,
//     taken in stream order, strictly increase (offsets are opaque but sort lexicographically);
//   - a read from an acknowledged append's next offset returns exactly the bytes after that frame (sampled);
//   - what a round read is a prefix of what the next round reads: nothing once visible is ever lost;
//   - each appender's acknowledged frames appear in the order it sent them.
// Appends are never retried (no idempotent-producer headers), so an in-flight append that landed counts
// once, and one that did not is simply absent.
// Given a ClientHistory (mink's offsets only: it reads them as byte positions), every append and read is
// recorded with when it was invoked and answered, every stream is read once more at the end, and the report
// carries the linearizability checker's verdict on the whole history.

import { Agent, fetch as undiciFetch } from "undici";
import { seededRandom } from "../support/seeded-random.ts";
import type { ClientHistory } from "./client-history.ts";

export interface KillTarget {
  baseUrl: string;
  kill(): Promise<void>;
  restart(): Promise<void>;
}

export interface KillRoundsOptions {
  rounds: number;
  streams: number;
  appenders: number;
  /**
   * Once every appender has an acknowledgement, kill after this many more acknowledged appends, drawn
   * uniformly from the range (inclusive) with `seed`.
   */
  killAfterAcks: { min: number; max: number };
  /** Seeds the draws of `killAfterAcks` (the same seed, the same kill points). */
  seed: number;
  /** Reads from an acknowledged offset to check per stream per round (besides the last one). */
  offsetSamplesPerStream: number;
  /** Stream names start with this (unique per run). */
  namePrefix: string;
  log?: (line: string) => void;
  /** Records the clients' operations for the linearizability check (mink's offsets only). */
  history?: ClientHistory;
}

export interface KillRoundsReport {
  rounds: number;
  acknowledged: number;
  /** Appends in flight at a kill (or answered with an error) that turned out to be stored whole. */
  inFlightStored: number;
  /** Appends in flight at a kill that are absent. */
  inFlightAbsent: number;
  bytesPerStream: number[];
  /** The linearizability checker's verdict on the recorded history ("not recorded" without a history). */
  linearizability: string;
}

interface SentAppend {
  id: string;
  appender: number;
  seq: number;
  stream: number;
  frame: string;
  /** Stream-Next-Offset from the acknowledgement; undefined while unacknowledged. */
  nextOffset?: string;
  /** Why it is not known to be acknowledged: the fetch failed or the answer was not 2xx. */
  unknown?: string;
  round: number;
}

const CONTENT_TYPE = "application/octet-stream";
const REQUEST_TIMEOUT_MS = 30_000;

/** Deterministic filler for a frame: a kill that exposes part of a payload is caught by the comparison. */
function payloadFor(appender: number, seq: number): string {
  // Mostly small frames, sometimes tens of KiB so a body spans many TCP segments and WAL batches.
  const sizes = [16, 100, 700, 3_000, 40_000];
  const size = sizes[(appender * 7 + seq * 13) % sizes.length] ?? 16;
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  let out = "";
  let state = (appender * 1_000_003 + seq * 7_919) >>> 0;
  while (out.length < size) {
    state = (state * 1_103_515_245 + 12_345) >>> 0;
    out += alphabet[state % alphabet.length];
  }
  return out;
}

/** `<id:length:payload>\n`, ASCII only, so byte and character positions agree. */
function frameFor(appender: number, seq: number): { id: string; frame: string } {
  const id = `a${appender}.${seq}`;
  const payload = payloadFor(appender, seq);
  return { id, frame: `<${id}:${payload.length}:${payload}>\n` };
}

interface ParsedFrame {
  id: string;
  /** Byte position of the frame's first and one-past-last byte in the stream. */
  start: number;
  end: number;
}

/** Splits a stream's bytes into whole frames; throws at the first byte that is not a whole, genuine frame. */
function parseFrames(text: string): ParsedFrame[] {
  const frames: ParsedFrame[] = [];
  let at = 0;
  while (at < text.length) {
    const fail = (why: string): never => {
      throw new Error(`stream bytes are not whole frames at byte ${at} (${why}): ${JSON.stringify(text.slice(at, at + 80))}`);
    };
    if (text[at] !== "<") fail("no frame start");
    const idEnd = text.indexOf(":", at);
    const lengthEnd = idEnd < 0 ? -1 : text.indexOf(":", idEnd + 1);
    if (idEnd < 0 || lengthEnd < 0) fail("truncated header");
    const id = text.slice(at + 1, idEnd);
    const match = /^a(\d+)\.(\d+)$/.exec(id);
    const length = Number(text.slice(idEnd + 1, lengthEnd));
    if (match === null || !Number.isInteger(length)) fail("bad header");
    const end = lengthEnd + 1 + length + 2;
    if (end > text.length) fail("truncated payload");
    if (text.slice(end - 2, end) !== ">\n") fail("no frame end");
    const expected = frameFor(Number(match?.[1]), Number(match?.[2]));
    if (expected.id !== id || text.slice(at, end) !== expected.frame) fail("payload differs from what was sent");
    frames.push({ id, start: at, end });
    at = end;
  }
  return frames;
}

class StreamClient {
  readonly #agent = new Agent({ connect: { timeout: 5_000 } });
  constructor(
    private readonly baseUrl: string,
    private readonly history: ClientHistory | null = null,
  ) {}

  url(name: string): string {
    return `${this.baseUrl}/v1/stream/${encodeURIComponent(name)}`;
  }

  async create(name: string): Promise<void> {
    const response = await this.#fetch(this.url(name), { method: "PUT", headers: { "content-type": CONTENT_TYPE } });
    const body = await response.text();
    if (response.status !== 201 && response.status !== 200) throw new Error(`PUT ${name}: ${response.status} ${body}`);
  }

  /** One append; the caller decides what a failure means. */
  async append(name: string, frame: string): Promise<{ status: number; nextOffset: string | null; body: string }> {
    const invokedAt = this.history?.now() ?? 0;
    try {
      const response = await this.#fetch(this.url(name), {
        method: "POST",
        headers: { "content-type": CONTENT_TYPE },
        body: new TextEncoder().encode(frame),
      });
      const answer = { status: response.status, nextOffset: response.headers.get("stream-next-offset"), body: await response.text() };
      if ((answer.status === 200 || answer.status === 204) && answer.nextOffset !== null) this.history?.acked(name, frame, null, invokedAt, answer.nextOffset);
      else this.history?.unknown(name, frame, null, invokedAt);
      return answer;
    } catch (error) {
      this.history?.unknown(name, frame, null, invokedAt);
      throw error;
    }
  }

  /** One catch-up read from `offset` ("-1" = the start). */
  async readAt(name: string, offset: string, final = false): Promise<{ text: string; nextOffset: string; upToDate: boolean }> {
    const invokedAt = this.history?.now() ?? 0;
    const response = await this.#fetch(`${this.url(name)}?offset=${encodeURIComponent(offset)}`, { method: "GET" });
    const text = Buffer.from(await response.arrayBuffer()).toString("latin1");
    if (response.status !== 200 && response.status !== 204) throw new Error(`GET ${name}?offset=${offset}: ${response.status} ${text.slice(0, 300)}`);
    const nextOffset = response.headers.get("stream-next-offset");
    if (nextOffset === null) throw new Error(`GET ${name}?offset=${offset}: no Stream-Next-Offset`);
    const upToDate = response.headers.has("stream-up-to-date");
    this.history?.read(name, offset, invokedAt, { bytes: text, nextOffset, upToDate }, final);
    return { text, nextOffset, upToDate };
  }

  /** The whole stream from the start, following Stream-Next-Offset until Stream-Up-To-Date. */
  async readAll(name: string, final = false): Promise<string> {
    let offset = "-1";
    let text = "";
    for (let reads = 0; reads < 100_000; reads++) {
      const chunk = await this.readAt(name, offset, final);
      text += chunk.text;
      if (chunk.upToDate) return text;
      if (chunk.nextOffset === offset && chunk.text === "") throw new Error(`GET ${name}: no progress at offset ${offset} and not up to date`);
      offset = chunk.nextOffset;
    }
    throw new Error(`GET ${name}: not up to date after 100000 reads`);
  }

  async close(): Promise<void> {
    await this.#agent.destroy();
  }

  // undici 7's fetch: it follows a 307 with a binary body (Node 20's built-in fetch does not), and a fresh
  // agent per round keeps a connection from before a kill from being reused after it.
  #fetch(url: string, init: { method: string; headers?: Record<string, string>; body?: Uint8Array }): ReturnType<typeof undiciFetch> {
    return undiciFetch(url, { ...init, dispatcher: this.#agent, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  }
}

export async function runKillRounds(target: KillTarget, options: KillRoundsOptions): Promise<KillRoundsReport> {
  const log = options.log ?? (() => undefined);
  const names = Array.from({ length: options.streams }, (_, i) => `${options.namePrefix}-${i}`);
  const sent = new Map<string, SentAppend>();
  const nextSeq = Array.from({ length: options.appenders }, () => 0);
  const lastRead = names.map(() => "");
  const random = seededRandom(options.seed);
  const { min, max } = options.killAfterAcks;
  if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max < min) throw new Error(`killAfterAcks: not a range of counts: ${min}..${max}`);

  const setup = new StreamClient(target.baseUrl);
  try {
    for (const name of names) await setup.create(name);
  } finally {
    await setup.close();
  }

  for (let round = 1; round <= options.rounds; round++) {
    const client = new StreamClient(target.baseUrl, options.history ?? null);
    let killed = false;
    const errorsBeforeKill: string[] = [];
    let firstAcks = 0;
    // Acknowledged appends this round, and how many of them came after every appender had one.
    let roundAcks = 0;
    let acksAtStart: number | null = null;
    const killAfter = min + Math.floor(random() * (max - min + 1));
    let killDue: () => void = () => undefined;
    const killPoint = new Promise<void>((resolve) => (killDue = resolve));
    const acknowledged = (first: boolean): void => {
      roundAcks++;
      if (first && ++firstAcks === options.appenders) acksAtStart = roundAcks;
      if (acksAtStart !== null && roundAcks - acksAtStart >= killAfter) killDue();
    };

    const appender = async (index: number): Promise<void> => {
      let acked = false;
      for (;;) {
        const seq = nextSeq[index] ?? 0;
        nextSeq[index] = seq + 1;
        const stream = index % names.length;
        const { id, frame } = frameFor(index, seq);
        const append: SentAppend = { id, appender: index, seq, stream, frame, round };
        sent.set(id, append);
        try {
          const answer = await client.append(names[stream] ?? "", frame);
          if ((answer.status === 200 || answer.status === 204) && answer.nextOffset !== null) {
            append.nextOffset = answer.nextOffset;
            acknowledged(!acked);
            acked = true;
            continue;
          }
          append.unknown = `${answer.status} ${answer.body.slice(0, 200)}`;
        } catch (error) {
          append.unknown = error instanceof Error ? `${error.message}${error.cause instanceof Error ? `: ${error.cause.message}` : ""}` : String(error);
        }
        if (!killed) {
          errorsBeforeKill.push(`${id}: ${append.unknown}`);
          killDue(); // no point waiting for more load: the round fails below
        }
        return; // no retries: the outcome of this append is decided by what the stream holds
      }
    };

    const roundStarted = performance.now();
    const running = Array.from({ length: options.appenders }, (_, i) => appender(i));
    // Kill only once the round is really under way (every appender has had an append acknowledged), so no
    // round is wasted on a kill before any load; then after a random number of further acknowledgements,
    // while the appenders keep appending. An append that fails before the kill brings the kill forward
    // (the failure is reported below), so a round never waits for acknowledgements that cannot come.
    await Promise.race([killPoint, Promise.all(running)]);
    killed = true;
    const acksAtKill = roundAcks;
    const killedAtMs = performance.now() - roundStarted;
    await target.kill();
    await Promise.all(running);
    await client.close();
    if (errorsBeforeKill.length > 0) {
      throw new Error(`round ${round}: appends failed before the kill:\n${errorsBeforeKill.slice(0, 10).join("\n")}`);
    }
    log(
      `round ${round}: killed ${Math.round(killedAtMs)} ms in, ${acksAtKill - (acksAtStart ?? 0)} acknowledgements after every appender had ` +
        `one (drawn: ${killAfter}), ${roundAcks} appends acknowledged this round; restarting`,
    );

    const started = performance.now();
    await target.restart();
    log(`round ${round}: restarted in ${Math.round(performance.now() - started)} ms; verifying`);
    const reader = new StreamClient(target.baseUrl, options.history ?? null);
    try {
      for (let stream = 0; stream < names.length; stream++) {
        const text = await reader.readAll(names[stream] ?? "");
        await verifyStream(reader, names[stream] ?? "", stream, text, lastRead[stream] ?? "", sent, options.offsetSamplesPerStream, round);
        lastRead[stream] = text;
      }
    } finally {
      await reader.close();
    }
  }

  // Every in-flight append has been decided by now: present or absent in the last read.
  const linearizability = options.history === undefined ? "not recorded" : await finalVerdict(target, names, options.history);
  const present = new Set<string>();
  for (const text of lastRead) for (const frame of parseFrames(text)) present.add(frame.id);
  const appends = [...sent.values()];
  return {
    rounds: options.rounds,
    acknowledged: appends.filter((a) => a.nextOffset !== undefined).length,
    inFlightStored: appends.filter((a) => a.nextOffset === undefined && present.has(a.id)).length,
    inFlightAbsent: appends.filter((a) => a.nextOffset === undefined && !present.has(a.id)).length,
    bytesPerStream: lastRead.map((text) => text.length),
    linearizability,
  };
}

/** Reads every stream once more, after everything else answered (the final read), and checks the history. */
async function finalVerdict(target: KillTarget, names: readonly string[], history: ClientHistory): Promise<string> {
  const reader = new StreamClient(target.baseUrl, history);
  try {
    for (const name of names) await reader.readAll(name, true);
  } finally {
    await reader.close();
  }
  return history.verdict();
}

async function verifyStream(
  reader: StreamClient,
  name: string,
  stream: number,
  text: string,
  previous: string,
  sent: ReadonlyMap<string, SentAppend>,
  samples: number,
  round: number,
): Promise<void> {
  const where = `round ${round}, stream ${name}`;
  if (!text.startsWith(previous)) {
    throw new Error(`${where}: the stream is not an extension of what the previous round read (${previous.length} bytes then, ${text.length} now)`);
  }
  const frames = parseFrames(text); // throws on a half-visible append
  const seen = new Set<string>();
  const lastSeqByAppender = new Map<number, number>();
  const acked: Array<{ append: SentAppend; frame: ParsedFrame }> = [];
  for (const frame of frames) {
    if (seen.has(frame.id)) throw new Error(`${where}: append ${frame.id} appears twice`);
    seen.add(frame.id);
    const append = sent.get(frame.id);
    if (append === undefined) throw new Error(`${where}: append ${frame.id} was never sent`);
    if (append.stream !== stream) throw new Error(`${where}: append ${frame.id} was sent to stream ${append.stream}`);
    const previousSeq = lastSeqByAppender.get(append.appender);
    if (previousSeq !== undefined && append.seq <= previousSeq) {
      throw new Error(`${where}: appender ${append.appender}'s appends out of order (${append.seq} after ${previousSeq})`);
    }
    lastSeqByAppender.set(append.appender, append.seq);
    if (append.nextOffset !== undefined) acked.push({ append, frame });
  }
  const missing = [...sent.values()].filter((a) => a.stream === stream && a.nextOffset !== undefined && !seen.has(a.id));
  if (missing.length > 0) {
    throw new Error(`${where}: ${missing.length} acknowledged appends are missing, e.g. ${missing.slice(0, 5).map((a) => `${a.id} (round ${a.round}, next offset ${a.nextOffset})`).join(", ")}`);
  }
  for (let i = 1; i < acked.length; i++) {
    const before = acked[i - 1];
    const after = acked[i];
    if (before === undefined || after === undefined) continue;
    if (!((before.append.nextOffset ?? "") < (after.append.nextOffset ?? ""))) {
      throw new Error(`${where}: acknowledged offsets out of stream order: ${before.append.id} -> ${before.append.nextOffset}, then ${after.append.id} -> ${after.append.nextOffset}`);
    }
  }
  // "At its offset": a read from an append's acknowledged next offset starts right after its frame. Check
  // the last acknowledged append and an even sample of the rest.
  const picks = new Set<number>();
  if (acked.length > 0) picks.add(acked.length - 1);
  for (let k = 0; k < samples && acked.length > 0; k++) picks.add(Math.floor((k * acked.length) / samples));
  for (const index of picks) {
    const pick = acked[index];
    if (pick?.append.nextOffset === undefined) continue;
    const chunk = await reader.readAt(name, pick.append.nextOffset);
    const expected = text.slice(pick.frame.end, pick.frame.end + chunk.text.length);
    if (chunk.text !== expected) {
      throw new Error(`${where}: reading from ${pick.append.id}'s acknowledged offset ${pick.append.nextOffset} returned ${JSON.stringify(chunk.text.slice(0, 60))}, expected ${JSON.stringify(expected.slice(0, 60))}`);
    }
    if (chunk.text === "" && pick.frame.end !== text.length) {
      throw new Error(`${where}: reading from ${pick.append.id}'s acknowledged offset ${pick.append.nextOffset} returned nothing, but ${text.length - pick.frame.end} bytes follow it`);
    }
  }
}
