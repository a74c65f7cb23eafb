// The two measurements of the transfer benchmark, each moving one stream back and forth between two nodes:
// a quiet stream (one append right after each transfer begins) and a busy one (appenders never stop). Times
// are performance.now() in this process; t0 is taken just before POST /admin/transfers.
import { Client } from "./client.ts";

const CONTENT_TYPE = "text/plain";
/** Admin polls for "opened by the target": often enough to resolve a few ms. */
const OPENED_POLL_MS = 5;
const OPENED_TIMEOUT_MS = 30_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function streamUrlPath(name: string): string {
  return `/v1/stream/${name}`;
}

async function createStream(client: Client, name: string): Promise<void> {
  const answer = await client.stream("PUT", streamUrlPath(name), { "content-type": CONTENT_TYPE });
  if (answer.status !== 201 && answer.status !== 200) throw new Error(`PUT ${name}: ${answer.status} ${answer.body.slice(0, 200)}`);
}

function producerHeaders(id: string, seq: number): Record<string, string> {
  return { "content-type": CONTENT_TYPE, "producer-id": id, "producer-epoch": "0", "producer-seq": String(seq) };
}

/** One append with an idempotent producer; resolves at its acknowledgement, throws on anything but 200/204. */
async function appendOnce(client: Client, name: string, producer: string, seq: number, body: string): Promise<number> {
  const answer = await client.stream("POST", streamUrlPath(name), producerHeaders(producer, seq), body);
  if (answer.status !== 200 && answer.status !== 204) throw new Error(`append ${producer}/${seq}: ${answer.status} ${answer.body.slice(0, 300)}`);
  return performance.now();
}

/** The node that owns `name` now, and the other one of the pair it moves between. */
async function pairOf(client: Client, name: string): Promise<[string, string]> {
  const owner = (await client.streamRecord(name)).owner;
  if (owner === null) throw new Error(`${name} has no owner after its creation`);
  const other = (await client.nodeIds()).find((id) => id !== owner);
  if (other === undefined) throw new Error("only one node registered: nothing to transfer to");
  return [owner, other];
}

export interface QuietResult {
  /** t0 to the acknowledgement of the append sent right after the transfer began, per transfer. */
  windowsMs: number[];
  /** t0 to the admin API showing the stream opened by the target. */
  openedMs: number[];
  contentHeld: string;
}

export async function quietStream(client: Client, name: string, transfers: number, progress: (text: string) => void): Promise<QuietResult> {
  await createStream(client, name);
  const pair = await pairOf(client, name);
  const result: QuietResult = { windowsMs: [], openedMs: [], contentHeld: "" };
  let expected = "";
  for (let i = 0; i < transfers; i++) {
    const target = pair[(i + 1) % 2]!;
    const t0 = performance.now();
    await client.beginTransfer(name, target);
    const body = `q${i}\n`;
    const [ackAt, openedAt] = await Promise.all([
      appendOnce(client, name, "quiet", i, body),
      client.waitOpenedBy(name, target, OPENED_POLL_MS, OPENED_TIMEOUT_MS),
    ]);
    expected += body;
    result.windowsMs.push(ackAt - t0);
    result.openedMs.push(openedAt - t0);
    if ((i + 1) % 20 === 0) progress(`quiet: ${i + 1} of ${transfers} transfers`);
    await sleep(20);
  }
  const content = await client.readAll(streamUrlPath(name));
  result.contentHeld = content === expected ? `yes (${content.length} B, ${transfers} appends)` : `NO: read ${content.length} B, expected ${expected.length} B`;
  return result;
}

export interface BusyResult {
  writers: number;
  baseline: { gapsMs: number[]; acks: number; durationMs: number };
  /** Longest gap between acknowledgements from t0 until 1 s after the target opened, per transfer. */
  windowsMs: number[];
  openedMs: number[];
  acknowledged: number;
  acknowledgedBytes: number;
  contentHeld: string;
  writerErrors: string[];
}

/** A body of exactly `size` bytes: `w<i>:<seq>` padded with dots, ending in a newline. */
function busyBody(writer: number, seq: number, size: number): string {
  const head = `w${writer}:${seq}`;
  return head + ".".repeat(Math.max(0, size - head.length - 1)) + "\n";
}

/** The longest gap between consecutive points of t0, the acknowledgements in (t0, end], and end: its start and length. */
function longestGap(acks: readonly number[], from: number, t0: number, end: number): { startMs: number; lengthMs: number } {
  let previous = t0;
  let longest = { startMs: t0, lengthMs: 0 };
  for (let i = from; i < acks.length && acks[i]! <= end; i++) {
    if (acks[i]! <= t0) continue;
    if (acks[i]! - previous > longest.lengthMs) longest = { startMs: previous, lengthMs: acks[i]! - previous };
    previous = acks[i]!;
  }
  return end - previous > longest.lengthMs ? { startMs: previous, lengthMs: end - previous } : longest;
}

export async function busyStream(
  client: Client,
  name: string,
  options: { transfers: number; writers: number; bodyBytes: number; baselineMs: number; afterOpenedMs: number; verbose?: boolean },
  progress: (text: string) => void,
): Promise<BusyResult> {
  await createStream(client, name);
  const pair = await pairOf(client, name);
  const acks: number[] = [];
  const ackedSeqs = Array.from({ length: options.writers }, () => 0);
  const writerErrors: string[] = [];
  let stop = false;
  let acknowledgedBytes = 0;
  const writing = Array.from({ length: options.writers }, async (_, writer) => {
    for (let seq = 0; !stop; seq++) {
      const body = busyBody(writer, seq, options.bodyBytes);
      try {
        acks.push(await appendOnce(client, name, `busy-${writer}`, seq, body));
      } catch (error) {
        writerErrors.push(`writer ${writer}: ${error instanceof Error ? error.message : String(error)}`);
        return;
      }
      ackedSeqs[writer] = seq + 1;
      acknowledgedBytes += body.length;
    }
  });

  const result: BusyResult = {
    writers: options.writers,
    baseline: { gapsMs: [], acks: 0, durationMs: options.baselineMs },
    windowsMs: [],
    openedMs: [],
    acknowledged: 0,
    acknowledgedBytes: 0,
    contentHeld: "",
    writerErrors,
  };
  try {
    await sleep(1_000); // warm up: connections open, the stream's node busy
    const first = acks.length;
    await sleep(options.baselineMs);
    const baselineAcks = acks.slice(first);
    result.baseline.acks = baselineAcks.length;
    for (let i = 1; i < baselineAcks.length; i++) result.baseline.gapsMs.push(baselineAcks[i]! - baselineAcks[i - 1]!);

    for (let i = 0; i < options.transfers && writerErrors.length < options.writers; i++) {
      const target = pair[(i + 1) % 2]!;
      const storeBefore = options.verbose === true ? await client.storeRequests() : undefined;
      const from = acks.length;
      const t0 = performance.now();
      await client.beginTransfer(name, target);
      const openedAt = await client.waitOpenedBy(name, target, OPENED_POLL_MS, OPENED_TIMEOUT_MS);
      const storeAfter = storeBefore === undefined ? undefined : await client.storeRequests();
      const end = openedAt + options.afterOpenedMs;
      await sleep(Math.max(0, end - performance.now()));
      const gap = longestGap(acks, Math.max(0, from - 1), t0, end);
      result.windowsMs.push(gap.lengthMs);
      result.openedMs.push(openedAt - t0);
      if (options.verbose === true) {
        // The source's object-store requests from just before t0 to just after opened (compaction shows as GETs).
        const source = pair[i % 2]!;
        const delta = (kind: string): number => (storeAfter?.get(`${source} ${kind}`) ?? 0) - (storeBefore?.get(`${source} ${kind}`) ?? 0);
        progress(`busy transfer ${i + 1} to ${target}: opened at t0+${(openedAt - t0).toFixed(0)} ms; longest gap ${gap.lengthMs.toFixed(0)} ms ` +
          `from t0+${(gap.startMs - t0).toFixed(0)} ms; source ${source} store requests meanwhile: ` +
          `put ${delta("put")} get ${delta("get")} delete ${delta("delete")} list ${delta("list")}`);
      }
      if ((i + 1) % 10 === 0) progress(`busy: ${i + 1} of ${options.transfers} transfers, ${acks.length} appends acknowledged`);
    }
  } finally {
    stop = true;
    await Promise.all(writing);
  }
  result.acknowledged = acks.length;
  result.acknowledgedBytes = acknowledgedBytes;
  result.contentHeld = checkBusyContent(await client.readAll(streamUrlPath(name)), ackedSeqs, acknowledgedBytes, writerErrors.length > 0);
  return result;
}

/**
 * Whether the stream holds exactly the acknowledged appends: the byte count, and for each writer its
 * sequence numbers 0..n-1 once each, in order. A writer that failed may have left one unacknowledged append.
 */
function checkBusyContent(content: string, ackedSeqs: readonly number[], ackedBytes: number, someWriterFailed: boolean): string {
  const seen = ackedSeqs.map(() => 0);
  const problems: string[] = [];
  for (const line of content.split("\n")) {
    if (line === "") continue;
    const match = /^w(\d+):(\d+)\.*$/.exec(line);
    const writer = Number(match?.[1]);
    const seq = Number(match?.[2]);
    if (match === null || seen[writer] === undefined) {
      problems.push(`unexpected line ${JSON.stringify(line.slice(0, 40))}`);
    } else if (seq !== seen[writer]) {
      problems.push(`writer ${writer}: seq ${seq} where ${seen[writer]} was next`);
      seen[writer] = seq + 1;
    } else {
      seen[writer] = seq + 1;
    }
    if (problems.length >= 5) break;
  }
  ackedSeqs.forEach((acked, writer) => {
    if (seen[writer]! < acked) problems.push(`writer ${writer}: ${acked} acknowledged, ${seen[writer]} in the stream`);
    else if (seen[writer]! > acked && !someWriterFailed) problems.push(`writer ${writer}: ${acked} acknowledged, ${seen[writer]} in the stream`);
  });
  const bytes = `${content.length} B read back, ${ackedBytes} B acknowledged`;
  return problems.length === 0 && (content.length === ackedBytes || someWriterFailed)
    ? `yes (${bytes}; every writer's appends once each, in order)`
    : `NO (${bytes}): ${problems.slice(0, 5).join("; ")}`;
}
