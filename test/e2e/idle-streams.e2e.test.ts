// Idle streams out of memory and back, against the running service (docs/node.md, "Idle streams"): the
// node's Durable Object evicts idle streams from its heartbeat, a read or an append reloads each from its
// manifest with its data and producer state, and a SIGKILL after appends to reloaded streams loses nothing.
// Eviction is made quick (STREAM_IDLE_EVICT_MS 1 s, compaction after 4 WAL objects), the rest is as deployed.
//
//   npm run test:e2e -- test/e2e/idle-streams.e2e.test.ts
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { eventually, NotYet } from "../support/eventually.ts";
import { startService, type Service } from "./service.ts";

const STREAMS = 12;
const TEXT = { "content-type": "text/plain" };

let service: Service;

beforeAll(async () => {
  service = await startService({ nodes: 1, vars: { STREAM_IDLE_EVICT_MS: "1000", COMPACT_AFTER_WAL_OBJECTS: "4", HEARTBEAT_MS: "1000" } });
});

afterAll(async () => {
  await service?.stop();
});

const url = (name: string, query = ""): string => `${service.baseUrl}/v1/stream/${name}${query}`;
const producer = (seq: number): Record<string, string> => ({ "producer-id": "p", "producer-epoch": "0", "producer-seq": String(seq) });

async function post(name: string, body: string, headers: Record<string, string>): Promise<Response> {
  return fetch(url(name), { method: "POST", headers: { ...TEXT, ...headers }, body });
}

/** A counter of the node's /metrics, summed over its samples. */
async function metric(name: string): Promise<number> {
  const response = await fetch(`${service.baseUrl}/metrics`, { headers: { authorization: `Bearer ${service.adminToken}` } });
  const text = await response.text();
  expect(response.status).toBe(200);
  let sum = 0;
  for (const match of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)$`, "gm"))) sum += Number(match[1]);
  return sum;
}

async function untilEvicted(atLeast: number): Promise<void> {
  await eventually(
    async () => {
      const evicted = await metric("mink_streams_evicted_total");
      if (evicted < atLeast) throw new NotYet(`${evicted} evicted, ${await metric("mink_open_streams")} in memory`);
      return true;
    },
    { timeoutMs: 60_000, what: `${atLeast} streams evicted` },
  );
}

/** Waits for the node's log to show a compaction begun after `sinceMs` (epoch ms). */
async function compactedSince(sinceMs: number): Promise<void> {
  await eventually(
    () => {
      const begun = readFileSync(service.logFile, "utf8")
        .split("\n")
        .filter((line) => line.includes('"compaction.done"'))
        .map((line) => Date.parse(/"ts":"([^"]+)"/.exec(line)?.[1] ?? "") - Number(/"durationMs":([\d.]+)/.exec(line)?.[1] ?? Infinity));
      if (!begun.some((at) => at >= sinceMs)) throw new NotYet(`compactions begun at ${begun.join(", ")}`);
      return true;
    },
    { timeoutMs: 60_000, what: "a compaction after the evictions" },
  );
}

async function readAll(name: string): Promise<string> {
  const response = await fetch(url(name, "?offset=-1"));
  expect(response.status).toBe(200);
  return response.text();
}

describe("idle streams (tables EV and RL), end to end", () => {
  test("evicted streams come back on a read and an append with their data and producers, and a SIGKILL after appends to reloaded streams loses nothing", async () => {
    const names = Array.from({ length: STREAMS }, (_, i) => `idle-${Date.now().toString(36)}/s-${i}`);
    for (const name of names) {
      expect((await fetch(url(name), { method: "PUT", headers: TEXT })).status).toBe(201);
      expect((await post(name, `${name}:a;`, producer(0))).status).toBe(200);
    }
    await untilEvicted(STREAMS);
    for (const name of names) expect(await readAll(name)).toBe(`${name}:a;`);
    expect(await metric("mink_streams_reloaded_total")).toBeGreaterThanOrEqual(STREAMS);

    // Evicted again, then a few reloaded by an append: a duplicate first (its producer state came back), then
    // new data. Fewer appends than COMPACT_AFTER_WAL_OBJECTS, killed at once: no compaction lands in between,
    // so the restart finds them only through the snapshot record each reloaded stream's append carried.
    await untilEvicted(2 * STREAMS);
    // A compaction after the evictions: its snapshot, where the restart's replay begins, no longer lists them.
    const evictedAt = Date.now();
    const filler = `${names[0]}-filler`;
    expect((await fetch(url(filler), { method: "PUT", headers: TEXT })).status).toBe(201);
    for (let i = 0; i < 5; i++) expect((await post(filler, `${i};`, {})).status).toBe(204);
    await compactedSince(evictedAt);
    const appended = names.slice(0, 3);
    for (const name of appended) {
      const duplicate = await post(name, `${name}:a;`, producer(0));
      expect(duplicate.status).toBe(204);
      expect((await post(name, `${name}:b;`, producer(1))).status).toBe(200);
    }
    await service.kill();
    await service.restart();
    await eventually(
      async () => {
        for (const name of names) {
          const response = await fetch(url(name, "?offset=-1"));
          if (response.status === 503) throw new NotYet(`${name}: 503`);
          expect(response.status).toBe(200);
          expect(await response.text()).toBe(appended.includes(name) ? `${name}:a;${name}:b;` : `${name}:a;`);
        }
        return true;
      },
      { timeoutMs: 60_000, what: "every stream read back after the restart" },
    );
  }, 240_000);
});
