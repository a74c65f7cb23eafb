// Hostile input, resource exhaustion (docs/limits.md): three nodes in token mode with small bounds.
// Over a bound a client gets a quick 429 (or 4xx) with Retry-After, the node keeps serving everyone else,
// and it never resets (its epoch in GET /admin/nodes stays the same). Each test names the rule it proves.
//
//   npm run test:e2e -- test/e2e/hostile-exhaustion.e2e.test.ts
//   HOSTILE_PRODUCER_IDS=100000 (default) sets how many producer ids the producer flood sends.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Response as UndiciResponse } from "undici";
import { eventually } from "../support/eventually.ts";
import {
  allLive,
  call,
  expectRefusal,
  mint,
  nodeEpochs,
  OPS,
  namesByOwner,
  readAll,
  send,
  startHostileService,
  streamPath,
  type Answer,
  type Minted,
} from "./hostile-support.ts";
import type { Service } from "./service.ts";

const MAX_LIVE_READERS = 50;
const MAX_PRODUCERS_PER_STREAM = 100;
const MAX_STREAMS = 80;
const MAX_SUBSCRIPTIONS = 5;
const MAX_SUBSCRIPTION_STREAMS = 10;
const MAX_FORK_DEPTH = 3;
const LONG_POLL_TIMEOUT_MS = 30_000; // longer than any test here: a parked long-poll stays parked
/** How long an SSE response lasts at most (the node's sseMaxDurationMs, not a setting). */
const SSE_MAX_DURATION_MS = 60_000;
const PRODUCER_IDS = Number(process.env.HOSTILE_PRODUCER_IDS ?? "100000");
const FLOOD_CONCURRENCY = 64;

let service: Service;
let root: Minted;
/** Streams on node-1 (not the router's own node-0): A is where readers park, B where the writer appends. */
let parkA: string;
let writeB: string;
/** A stream on node-2. */
let elsewhereC: string;
let epochsAtStart: Map<string, number>;

beforeAll(async () => {
  service = await startHostileService(
    {
      MAX_LIVE_READERS: String(MAX_LIVE_READERS),
      MAX_PRODUCERS_PER_STREAM: String(MAX_PRODUCERS_PER_STREAM),
      MAX_STREAMS: String(MAX_STREAMS),
      MAX_SUBSCRIPTIONS: String(MAX_SUBSCRIPTIONS),
      MAX_SUBSCRIPTION_STREAMS: String(MAX_SUBSCRIPTION_STREAMS),
      MAX_FORK_DEPTH: String(MAX_FORK_DEPTH),
    },
    { longPollTimeoutMs: LONG_POLL_TIMEOUT_MS },
  );
  root = await mint(service, [""], OPS);
  await allLive(service, root.token);
  epochsAtStart = await nodeEpochs(service);
  const byNode = await namesByOwner(service, "ex/s", root.token, (names) => (names.get("node-1")?.length ?? 0) >= 2 && (names.get("node-2")?.length ?? 0) >= 1);
  [parkA, writeB] = byNode.get("node-1")! as [string, string];
  elsewhereC = byNode.get("node-2")![0]!;
}, 180_000);

afterAll(async () => {
  if (service !== undefined && epochsAtStart !== undefined) expect(await nodeEpochs(service), "no node reset during the suite").toEqual(epochsAtStart);
  await service?.stop();
});

/** A live read at node-1's address that stays open until the server answers or `controller` aborts. */
function liveRead(name: string, mode: "long-poll" | "sse", controller: AbortController, node = "node-1"): Promise<UndiciResponse> {
  return send(service, streamPath(`${name}?offset=now&live=${mode}`, node), { token: root.token, signal: controller.signal });
}

async function liveReaders(node: string): Promise<number> {
  const text = (await call(service, "/metrics", { token: service.adminToken })).text;
  const match = new RegExp(`^mink_live_readers\\{node="${node}"\\} (\\d+)`, "m").exec(text);
  if (match === null) throw new Error(`no mink_live_readers for ${node} in /metrics`);
  return Number(match[1]);
}

/**
 * Waits until no reader holds a slot on `node`. Readers whose client went away may hold theirs until the
 * long-poll timeout, an SSE response until its 60 s end (the test "readers that go away free their slots"
 * is about that): the other tests wait that long, so each proves its own rule.
 */
async function slotsFree(node: string): Promise<void> {
  await eventually(async () => (await liveReaders(node)) === 0, { timeoutMs: SSE_MAX_DURATION_MS + 15_000, what: `${node}'s live readers to drop to 0` });
}

async function appendTimed(name: string, body: string, node = "node-1"): Promise<{ answer: Answer; ms: number }> {
  const started = performance.now();
  const answer = await call(service, streamPath(name, node), { method: "POST", token: root.token, headers: { "content-type": "text/plain" }, body });
  return { answer, ms: performance.now() - started };
}

/** Runs `count` tasks with at most `concurrency` in flight. */
async function pool<T>(count: number, concurrency: number, task: (index: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const index = next++;
        results[index] = await task(index);
      }
    }),
  );
  return results;
}

describe("live readers: over MAX_LIVE_READERS a live read is answered at once with 429, and the node serves on", () => {
  test(`80 long-polls on one node with the cap at ${MAX_LIVE_READERS}: 30 get 429 limit_reached with Retry-After at once, an append is acknowledged within a second, the node does not reset`, async () => {
    const epoch = (await nodeEpochs(service)).get("node-1");
    const controller = new AbortController();
    const answered: UndiciResponse[] = [];
    const polls = Array.from({ length: 80 }, () => liveRead(parkA, "long-poll", controller).then((response) => (answered.push(response), response)));
    try {
      const started = Date.now();
      await eventually(() => answered.length >= 80 - MAX_LIVE_READERS, { timeoutMs: 10_000, what: "the readers over the cap to be answered" });
      expect(Date.now() - started, "the refusals come at once, not at the long-poll timeout").toBeLessThan(LONG_POLL_TIMEOUT_MS / 3);
      for (const response of answered) {
        const answer: Answer = { status: response.status, headers: response.headers, text: await response.text(), url: response.url };
        expectRefusal(answer, 429, "limit_reached");
        expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
      }
      expect(await liveReaders("node-1")).toBe(MAX_LIVE_READERS);
      const { answer, ms } = await appendTimed(writeB, "w");
      expect(answer.status, answer.text).toBe(204);
      expect(ms, "an append on the full node is acknowledged within a second").toBeLessThan(1_000);
      expect(answered.length, "the parked readers are still parked (nothing spun them out)").toBe(80 - MAX_LIVE_READERS);
      expect((await nodeEpochs(service)).get("node-1"), "node-1 did not reset").toBe(epoch);
    } finally {
      controller.abort();
      await Promise.allSettled(polls);
    }
  });

  // A reader that hangs up is not seen to go by the node under the local runtime (request.signal does not
  // fire across the Worker-to-node hop, enable_request_signal or not): its slot is freed by the long-poll
  // timeout at the latest (docs/limits.md). This is the bound the test holds the node to.
  test("readers that go away free their slots by LONG_POLL_TIMEOUT_MS at the latest: the gauge returns to 0 and a new long-poll parks and gets the next append", async () => {
    await eventually(async () => (await liveReaders("node-1")) === 0, { timeoutMs: LONG_POLL_TIMEOUT_MS + 15_000, what: "node-1's live readers to drop to 0" });
    const controller = new AbortController();
    const poll = liveRead(parkA, "long-poll", controller);
    try {
      await eventually(async () => (await liveReaders("node-1")) === 1, { timeoutMs: 10_000, what: "the new long-poll to park" });
      expect((await appendTimed(parkA, "wake")).answer.status).toBe(204);
      const response = await poll;
      expect([response.status, await response.text()]).toEqual([200, "wake"]);
    } finally {
      controller.abort();
    }
  }, LONG_POLL_TIMEOUT_MS + 60_000);

  test("SSE readers fill the same cap: with 50 SSE connections open, a long-poll and a 51st SSE get 429", async () => {
    await slotsFree("node-1");
    const controller = new AbortController();
    const streams = await Promise.all(Array.from({ length: MAX_LIVE_READERS }, () => liveRead(parkA, "sse", controller)));
    try {
      for (const response of streams) expect(response.status).toBe(200);
      await eventually(async () => (await liveReaders("node-1")) === MAX_LIVE_READERS, { timeoutMs: 10_000, what: "50 SSE readers counted" });
      for (const mode of ["long-poll", "sse"] as const) {
        const extra = new AbortController();
        const response = await liveRead(parkA, mode, extra);
        expect(response.status, mode).toBe(429);
        expect(response.headers.get("retry-after")).not.toBeNull();
        extra.abort();
      }
      const { answer, ms } = await appendTimed(writeB, "s");
      expect(answer.status).toBe(204);
      expect(ms).toBeLessThan(1_000);
    } finally {
      controller.abort();
      for (const response of streams) await response.body?.cancel().catch(() => undefined);
    }
  }, 150_000);

  test("the cap is per node: with node-1 full, a long-poll on node-2 parks and is answered by the next append there", async () => {
    await slotsFree("node-1");
    const controller = new AbortController();
    const polls = Array.from({ length: MAX_LIVE_READERS }, () => liveRead(parkA, "long-poll", controller));
    const other = new AbortController();
    try {
      await eventually(async () => (await liveReaders("node-1")) === MAX_LIVE_READERS, { timeoutMs: 10_000, what: "node-1 full" });
      const poll = liveRead(elsewhereC, "long-poll", other, "node-2");
      await eventually(async () => (await liveReaders("node-2")) === 1, { timeoutMs: 10_000, what: "the node-2 long-poll to park" });
      expect((await appendTimed(elsewhereC, "c", "node-2")).answer.status).toBe(204);
      const response = await poll;
      expect([response.status, await response.text()]).toEqual([200, "c"]);
    } finally {
      controller.abort();
      other.abort();
      await Promise.allSettled(polls);
    }
  }, 150_000);
});

describe("producer ids: over MAX_PRODUCERS_PER_STREAM a new producer is refused with 429, the existing ones go on", () => {
  test(`${PRODUCER_IDS} producer ids on one stream: the first ${MAX_PRODUCERS_PER_STREAM} are accepted, the rest 429, the node survives and the stream reads back`, async () => {
    const name = "ex/producers";
    expect((await call(service, streamPath(name, "node-1"), { method: "PUT", token: root.token, headers: { "content-type": "text/plain" } })).status).toBe(201);
    const epoch = (await nodeEpochs(service)).get("node-1");
    const started = Date.now();
    const statuses = await pool(PRODUCER_IDS, FLOOD_CONCURRENCY, async (i) => {
      const answer = await call(service, streamPath(name, "node-1"), {
        method: "POST",
        token: root.token,
        headers: { "content-type": "text/plain", "producer-id": `p${i}`, "producer-epoch": "0", "producer-seq": "0" },
        body: `<${i}>`,
      });
      if (answer.status === 429 && answer.headers.get("retry-after") === null) return -429;
      return answer.status;
    });
    const counts = new Map<number, number>();
    for (const status of statuses) counts.set(status, (counts.get(status) ?? 0) + 1);
    console.log(`[hostile] ${PRODUCER_IDS} producer ids in ${Date.now() - started} ms: ${JSON.stringify([...counts])}`);
    expect([...counts.keys()].filter((status) => status >= 500 || status === -429), "no 5xx, every 429 with Retry-After").toEqual([]);
    expect(counts.get(200), "accepted").toBe(MAX_PRODUCERS_PER_STREAM);
    expect(counts.get(429), "refused with 429 and Retry-After").toBe(PRODUCER_IDS - MAX_PRODUCERS_PER_STREAM);
    const accepted = statuses.flatMap((status, i) => (status === 200 ? [`<${i}>`] : []));
    const content = (await readAll(service, name, root.token)).text;
    expect(content.match(/<\d+>/g)?.sort()).toEqual(accepted.sort());
    // A producer that was admitted goes on with its next seq.
    const first = statuses.indexOf(200);
    const next = await call(service, streamPath(name, "node-1"), {
      method: "POST",
      token: root.token,
      headers: { "content-type": "text/plain", "producer-id": `p${first}`, "producer-epoch": "0", "producer-seq": "1" },
      body: "again",
    });
    expect(next.status, next.text).toBe(200);
    expect((await nodeEpochs(service)).get("node-1"), "node-1 did not reset").toBe(epoch);
  }, 600_000);
});

describe("unknown names: a flood of lookups for names that do not exist is all 404, quick, and spares the metadata log", () => {
  test("2,000 GETs of 100 names that do not exist (at the router and at node addresses): all 404 within 30 s, and MetaLog lookups grow far less than the requests", async () => {
    const before = await metaLogCalls();
    const started = Date.now();
    const statuses = await pool(2_000, FLOOD_CONCURRENCY, async (i) => {
      const node = i % 4 === 3 ? undefined : `node-${i % 3}`;
      return (await call(service, streamPath(`ex/ghost-${i % 100}?offset=-1`, i % 2 === 0 ? undefined : node), { token: root.token })).status;
    });
    const elapsedMs = Date.now() - started;
    const after = await metaLogCalls();
    console.log(`[hostile] 2,000 unknown-name GETs in ${elapsedMs} ms; MetaLog call counters ${JSON.stringify(before)} -> ${JSON.stringify(after)}`);
    expect(statuses.filter((status) => status !== 404)).toEqual([]);
    expect(elapsedMs).toBeLessThan(30_000);
    // Only where /metrics counts MetaLog calls (a negative cache makes repeated unknown names cheap).
    if (before !== null && after !== null) {
      expect(after.total - before.total, `MetaLog calls for 2,000 unknown-name requests (${after.families.join(", ")})`).toBeLessThan(500);
    } else {
      console.log("[hostile] /metrics has no MetaLog call counter: the MetaLog load of the flood is not checked");
    }
    const { answer, ms } = await appendTimed(writeB, "after-flood");
    expect(answer.status).toBe(204);
    expect(ms).toBeLessThan(1_000);
  });
});

/** MetaLog call counters from /metrics: the families whose name says they count MetaLog lookups or calls. */
async function metaLogCalls(): Promise<{ total: number; families: string[] } | null> {
  const text = (await call(service, "/metrics", { token: service.adminToken })).text;
  const families = new Set<string>();
  let total = 0;
  for (const line of text.split("\n")) {
    const match = /^(mink_meta_?log_[a-z_]*(?:lookup|call|request)[a-z_]*_total)(?:\{[^}]*\})? (\d+(?:\.\d+)?)$/.exec(line);
    if (match === null) continue;
    families.add(match[1]!);
    total += Number(match[2]);
  }
  if (families.size === 0) return null;
  return { total, families: [...families] };
}

describe("subscriptions and forks: bounded per deployment and per chain", () => {
  const putSubscription = (id: string, body: unknown): Promise<Answer> =>
    call(service, `/v1/stream/__ds/subscriptions/${id}`, { method: "PUT", token: root.token, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

  test(`a subscription naming more than MAX_SUBSCRIPTION_STREAMS (${MAX_SUBSCRIPTION_STREAMS}) streams is a 4xx`, async () => {
    const streams = Array.from({ length: MAX_SUBSCRIPTION_STREAMS + 1 }, (_, i) => `ex/sub/${i}`);
    const answer = await putSubscription("too-many-links", { type: "pull-wake", streams, wake_stream: "ex/sub-wake" });
    expect([400, 413, 429], answer.text).toContain(answer.status);
    expect((await putSubscription("enough-links", { type: "pull-wake", streams: streams.slice(1), wake_stream: "ex/sub-wake" })).status).toBe(201);
  });

  test(`past MAX_SUBSCRIPTIONS (${MAX_SUBSCRIPTIONS}) a new subscription is 429 limit_reached`, async () => {
    const answers: Answer[] = [];
    for (let i = 0; i < MAX_SUBSCRIPTIONS + 1; i++) answers.push(await putSubscription(`many-${i}`, { type: "pull-wake", pattern: `ex/many${i}/*`, wake_stream: `ex/many-wake-${i}` }));
    const statuses = answers.map((answer) => answer.status);
    // "enough-links" from the test before counts too.
    expect(statuses.filter((status) => status === 201).length).toBe(MAX_SUBSCRIPTIONS - 1);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(refused.length, JSON.stringify(statuses)).toBe(2);
    expect(refused[0]!.headers.get("retry-after")).not.toBeNull();
  });

  test(`a fork chain is bounded by MAX_FORK_DEPTH (${MAX_FORK_DEPTH}): the first ${MAX_FORK_DEPTH} forks are created, the next is a 4xx`, async () => {
    let source = "ex/fork-0";
    expect((await call(service, streamPath(source), { method: "PUT", token: root.token, headers: { "content-type": "text/plain" }, body: "root" })).status).toBe(201);
    for (let depth = 1; depth <= MAX_FORK_DEPTH + 1; depth++) {
      const name = `ex/fork-${depth}`;
      const answer = await call(service, streamPath(name), { method: "PUT", token: root.token, headers: { "content-type": "text/plain", "stream-forked-from": `/v1/stream/${source}` } });
      if (depth <= MAX_FORK_DEPTH) {
        expect(answer.status, `fork at depth ${depth}: ${answer.text}`).toBe(201);
      } else {
        expect(answer.status, `fork at depth ${depth}: ${answer.text}`).toBeGreaterThanOrEqual(400);
        expect(answer.status, `fork at depth ${depth}: ${answer.text}`).toBeLessThan(500);
      }
      source = name;
    }
  });
});

describe("streams per deployment (run last: it fills the deployment)", () => {
  test(`past MAX_STREAMS (${MAX_STREAMS}) a create is 429 limit_reached with Retry-After, and existing streams still take appends`, async () => {
    let refused: Answer | undefined;
    let created = 0;
    for (let i = 0; i < MAX_STREAMS + 10 && refused === undefined; i++) {
      const answer = await call(service, streamPath(`ex/fill-${i}`), { method: "PUT", token: root.token, headers: { "content-type": "text/plain" } });
      if (answer.status === 201) created++;
      else refused = answer;
    }
    expect(refused, `${created} creates and no refusal`).toBeDefined();
    expectRefusal(refused!, 429, "limit_reached");
    expect(refused!.headers.get("retry-after")).not.toBeNull();
    expect((await appendTimed(writeB, "still")).answer.status).toBe(204);
  });
});
