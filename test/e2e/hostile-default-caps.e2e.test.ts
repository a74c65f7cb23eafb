// Hostile input at the DEFAULT caps (issue 21; docs/limits.md): three nodes in token mode with
// wrangler.toml's bounds as they ship (nothing lowered), and one node's MAX_LIVE_READERS filled with
// long-polls. The cap must be one the node can hold: once filled, an append to another stream on that node
// is acknowledged within a second, the node's epoch does not change, the next reader gets 429 at once, and
// a token at its MAX_LIVE_READERS_PER_TOKEN share is refused while another token still gets a reader.
// Before the fix each parked long-poll held its own timer, and workerd allows a Durable Object 10,000:
// at the default cap the node's own timers threw QuotaExceededError and its appends failed.
//
//   npm run test:e2e -- test/e2e/hostile-default-caps.e2e.test.ts
//
// The client holds 10,000+ sockets (and workerd as many): the process needs that many open files. Every
// parked long-poll is released by one append to its stream (all answer 200), never by dropping 10,000
// connections at once, which the local runtime's accept loop does not survive (docs/limits.md).
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Agent, fetch as undiciFetch, type Response as UndiciResponse } from "undici";
import { eventually } from "../support/eventually.ts";
import { allLive, call, expectRefusal, mint, namesByOwner, nodeEpochs, OPS, startHostileService, streamPath, type Answer, type Minted } from "./hostile-support.ts";
import type { Service } from "./service.ts";

/** wrangler.toml's defaults, asserted against the deployment's own 429 details below. */
const MAX_LIVE_READERS = 10_000;
const MAX_LIVE_READERS_PER_TOKEN = 2_500;
/** LONG_POLL_TIMEOUT_MS's default: a parked long-poll stays parked for the whole test. */
const LONG_POLL_TIMEOUT_MS = 30_000;
/** Sockets this process and workerd need: the parked readers, the refused ones, the admin calls. */
const OPEN_FILES_NEEDED = MAX_LIVE_READERS + 1_000;
/** Connections opened at once while filling. */
const WAVE = 500;

let service: Service;
let root: Minted;
/** Read tokens: four fill the node (a share each), a fifth meets the full pool. */
let readers: Minted[];
/** On node-1 (not the router's own node): readers park on `park`, the writer appends to `write`. */
let park: string;
let write: string;
let epochsAtStart: Map<string, number>;
/** Its own pool for the parked readers (the suite's shared agent keeps its 256 for the calls). */
const crowd = new Agent({ connections: MAX_LIVE_READERS + 200, pipelining: 0, keepAliveTimeout: 60_000, headersTimeout: 0, bodyTimeout: 0 });
const parked: Promise<number>[] = [];

function openFilesLimit(): number {
  const line = readFileSync("/proc/self/limits", "utf8").split("\n").find((row) => row.startsWith("Max open files"));
  return Number(line?.split(/\s+/)[3] ?? "0");
}

/** A long-poll at node-1's address, read to its end: resolves with its status (200 once woken). */
function longPoll(token: string): Promise<UndiciResponse> {
  return undiciFetch(`${service.baseUrl}${streamPath(`${park}?offset=now&live=long-poll`, "node-1")}`, {
    headers: { authorization: `Bearer ${token}` },
    dispatcher: crowd,
  });
}

async function liveReaders(node: string): Promise<number> {
  const text = (await call(service, "/metrics", { token: service.adminToken })).text;
  const match = new RegExp(`^mink_live_readers\\{node="${node}"\\} (\\d+)`, "m").exec(text);
  if (match === null) throw new Error(`no mink_live_readers for ${node} in /metrics`);
  return Number(match[1]);
}

/**
 * Parks `count` more long-polls of `token`, `WAVE` connections at a time (10,000 connects at once overflow
 * the local runtime's accept backlog and some are reset), until node-1 counts `expected` live readers.
 */
async function fill(token: string, count: number, expected: number): Promise<void> {
  for (let sent = 0; sent < count; ) {
    const wave = Math.min(WAVE, count - sent);
    for (let i = 0; i < wave; i++) parked.push(longPoll(token).then(async (response) => (await response.text(), response.status)));
    sent += wave;
    const held = expected - count + sent;
    await eventually(async () => (await liveReaders("node-1")) === held, { timeoutMs: 30_000, what: `node-1 to hold ${held} live readers` });
  }
}

/** One more long-poll of `token`, expected to be refused at once (5 s is "at once" here): its answer. */
async function refusedReader(token: string): Promise<Answer> {
  const response = await undiciFetch(`${service.baseUrl}${streamPath(`${park}?offset=now&live=long-poll`, "node-1")}`, {
    headers: { authorization: `Bearer ${token}` },
    dispatcher: crowd,
    signal: AbortSignal.timeout(5_000),
  });
  return { status: response.status, headers: response.headers as unknown as Headers, text: await response.text(), url: response.url };
}

/** One append wakes every parked long-poll (each answers 200 with it): no mass disconnect. */
async function wakeAll(): Promise<void> {
  await call(service, streamPath(park, "node-1"), { method: "POST", token: root.token, headers: { "content-type": "text/plain" }, body: "wake" });
  const statuses = await Promise.all(parked.splice(0).map((status) => status.catch(() => 0)));
  expect(statuses.filter((status) => status !== 200), "every parked long-poll answered 200 when woken").toEqual([]);
  await eventually(async () => (await liveReaders("node-1")) === 0, { timeoutMs: 30_000, what: "node-1's live readers to drop to 0" });
}

const detailsOf = (answer: Answer): unknown => (JSON.parse(answer.text) as { error: { details?: unknown } }).error.details;

beforeAll(async () => {
  expect(openFilesLimit(), `this test needs ulimit -n >= ${OPEN_FILES_NEEDED} (raise it in the shell that runs vitest)`).toBeGreaterThanOrEqual(OPEN_FILES_NEEDED);
  service = await startHostileService({}, { longPollTimeoutMs: LONG_POLL_TIMEOUT_MS });
  root = await mint(service, [""], OPS);
  readers = await Promise.all(Array.from({ length: 5 }, () => mint(service, [""], ["read"])));
  await allLive(service, root.token);
  epochsAtStart = await nodeEpochs(service);
  const byNode = await namesByOwner(service, "caps/s", root.token, (names) => (names.get("node-1")?.length ?? 0) >= 2);
  [park, write] = byNode.get("node-1")! as [string, string];
}, 180_000);

afterAll(async () => {
  try {
    if (service !== undefined && park !== undefined) await wakeAll();
  } finally {
    await crowd.close().catch(() => crowd.destroy());
    await service?.stop();
  }
}, 120_000);

describe(`the default caps hold: MAX_LIVE_READERS ${MAX_LIVE_READERS} and MAX_LIVE_READERS_PER_TOKEN ${MAX_LIVE_READERS_PER_TOKEN}, filled on one node`, () => {
  test("the node's cap filled by four tokens (a share each): an append to another stream on the node is acknowledged within 1 s, the next reader gets 429 (MAX_LIVE_READERS) at once, and no node restarts", async () => {
    for (const [index, reader] of readers.slice(0, 4).entries()) {
      await fill(reader.token, MAX_LIVE_READERS_PER_TOKEN, (index + 1) * MAX_LIVE_READERS_PER_TOKEN);
    }
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      const answer = await call(service, streamPath(write, "node-1"), { method: "POST", token: root.token, headers: { "content-type": "text/plain" }, body: `w${i}` });
      const ms = performance.now() - started;
      expect(answer.status, answer.text).toBe(204);
      expect(ms, `append ${i} on the full node is acknowledged within a second`).toBeLessThan(1_000);
    }
    const refused = await refusedReader(readers[4]!.token);
    expectRefusal(refused, 429, "limit_reached");
    expect(detailsOf(refused)).toMatchObject({ limit: "MAX_LIVE_READERS", max: MAX_LIVE_READERS });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await nodeEpochs(service), "no node restarted (same epochs)").toEqual(epochsAtStart);
    expect(await liveReaders("node-1"), "the parked readers are still parked").toBe(MAX_LIVE_READERS);
  }, 90_000);

  test("one token at its share: its next reader gets 429 limit_reached (MAX_LIVE_READERS_PER_TOKEN) with Retry-After at once, while another token still parks a reader", async () => {
    await wakeAll();
    await fill(readers[0]!.token, MAX_LIVE_READERS_PER_TOKEN, MAX_LIVE_READERS_PER_TOKEN);
    const refused = await refusedReader(readers[0]!.token);
    expectRefusal(refused, 429, "limit_reached");
    expect(detailsOf(refused)).toMatchObject({ limit: "MAX_LIVE_READERS_PER_TOKEN", max: MAX_LIVE_READERS_PER_TOKEN });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    await fill(readers[1]!.token, 1, MAX_LIVE_READERS_PER_TOKEN + 1);
    expect(await nodeEpochs(service), "no node restarted (same epochs)").toEqual(epochsAtStart);
  }, 90_000);
});
