// Tables end to end (docs/tables.md): three nodes under the local runtime with short leases
// (LEASE_TTL_MS=3000, HEARTBEAT_MS=500, COORDINATOR_TICK_MS=500) and the fault switch on. The HTTP API at
// the router and at node addresses, a bucket's changelog tailed live by @durable-streams/client, the
// TypeScript client (src/client), and a leader crashed while the client writes. Tests name the rule they prove.
//
//   npm run test:e2e -- test/e2e/tables.e2e.test.ts
import { stream } from "@durable-streams/client";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { TableClient } from "../../src/client/index.ts";
import { bucketOf } from "../../src/core/tables/bucketing.ts";
import { parseTableDefinition, type TableDefinition } from "../../src/core/tables/definition.ts";
import type { ChangeRecord } from "../../src/core/tables/changelog.ts";
import { eventually } from "../support/eventually.ts";
import { startService, type Service } from "./service.ts";
import { allLive, call, changelogTail, describeTable, expectStatus, readChangelog, type TableView } from "./tables-clients.ts";
import { crashWhileWriting } from "./tables-failover.ts";

const NODES = 3;
let service: Service;

/** Tenants and their people: the bucket key (tenant) is a prefix of the primary key (tenant, id), D16. */
const PEOPLE = {
  columns: [
    { name: "tenant", type: "string" },
    { name: "id", type: "int" },
    { name: "name", type: "string", nullable: true },
  ],
  primaryKey: ["tenant", "id"],
  bucketKey: ["tenant"],
  buckets: 4,
};

function parsed(definition: unknown): TableDefinition {
  const result = parseTableDefinition(definition);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

const person = (tenant: string, id: number, name: string | null = `${tenant}-${id}`) => ({ tenant, id, name });
const bucketOfTenant = (tenant: string): number => bucketOf(parsed(PEOPLE), person(tenant, 0));
const write = (table: string, ops: unknown[]) => expectStatus(service, 200, "POST", `/v1/table/${table}/write`, { ops });
const lookup = async (table: string, keys: unknown[]) => ((await expectStatus(service, 200, "POST", `/v1/table/${table}/lookup`, { keys })).body as { rows: unknown[] }).rows;

/** A tenant whose rows land in `bucket` (found by the core's bucketOf, as the server splits). */
function tenantIn(bucket: number, tag: string): string {
  for (let i = 0; i < 10_000; i++) if (bucketOfTenant(`${tag}${i}`) === bucket) return `${tag}${i}`;
  throw new Error(`no tenant for bucket ${bucket}`);
}

beforeAll(async () => {
  service = await startService({
    nodes: NODES,
    longPollTimeoutMs: 1_000,
    vars: { LEASE_TTL_MS: "3000", HEARTBEAT_MS: "500", COORDINATOR_TICK_MS: "500", FAULTS_ENABLED: "1" },
  });
  await allLive(service, NODES);
}, 180_000);

afterAll(async () => {
  await service?.stop();
});

describe("the table API over three nodes", () => {
  test("D15: a PUT of a new table answers 201, the same definition again (defaults spelled out) 200, another one 409 conflict; A1: its buckets are led by every node", async () => {
    const created = await call(service, "PUT", "/v1/table/people", PEOPLE);
    expect(created.status).toBe(201);
    const leaders = new Set((created.body as TableView).buckets.map((bucket) => bucket.leader));
    expect(leaders.size).toBe(NODES);

    const spelledOut = { ...PEOPLE, columns: PEOPLE.columns.map((column) => ({ nullable: false, ...column })), bucketKey: ["tenant"] };
    expect((await call(service, "PUT", "/v1/table/people", spelledOut)).status).toBe(200);

    const other = await call(service, "PUT", "/v1/table/people", { ...PEOPLE, buckets: 5 });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ error: { code: "conflict" } });
  });

  test("B2: a table-addressed write is split by bucket key, each bucket's part acknowledged by its leader; R1: a lookup through the router answers in request order, null for a missing key", async () => {
    const rows = ["ada", "bob", "cy", "dee", "eve", "fay", "gus", "hal"].flatMap((tenant) => [1, 2, 3].map((id) => person(tenant, id)));
    const answer = await write("people", rows.map((row) => ({ upsert: row })));
    const parts = (answer.body as { buckets: { bucket: number; count: number }[] }).buckets;
    const expected = new Map<number, number>();
    for (const row of rows) expected.set(bucketOfTenant(row.tenant), (expected.get(bucketOfTenant(row.tenant)) ?? 0) + 1);
    expect(expected.size).toBeGreaterThan(1);
    expect(new Map(parts.map((part) => [part.bucket, part.count]))).toEqual(expected); // one +I per new row (W1)

    const keys = [{ tenant: "hal", id: 3 }, { tenant: "nobody", id: 1 }, { tenant: "ada", id: 1 }, { tenant: "ada", id: 4 }, { tenant: "eve", id: 2 }];
    expect(await lookup("people", keys)).toEqual([person("hal", 3), null, person("ada", 1), null, person("eve", 2)]);
  });

  test("D16, R3-R5: a prefix scan of the bucket key gives the tenant's rows in key order, a page at a time; the cursor of the last page is null", async () => {
    const ids = Array.from({ length: 25 }, (_, i) => i + 1);
    const shuffled = [...ids].sort((a, b) => ((a * 7919) % 25) - ((b * 7919) % 25));
    await write("people", [...shuffled.map((id) => ({ upsert: person("acme", id) })), { upsert: person("acmex", 1) }]);
    const seen: number[] = [];
    const pageSizes: number[] = [];
    let after: string | null = null;
    do {
      const body: Record<string, unknown> = { prefix: { tenant: "acme" }, limit: 10, ...(after === null ? {} : { after }) };
      const page = (await expectStatus(service, 200, "POST", "/v1/table/people/prefix", body)).body as { rows: { tenant: string; id: number }[]; cursor: string | null };
      pageSizes.push(page.rows.length);
      for (const row of page.rows) {
        expect(row.tenant).toBe("acme");
        seen.push(row.id);
      }
      after = page.cursor;
    } while (after !== null);
    expect(seen).toEqual(ids);
    expect(pageSizes).toEqual([10, 10, 5]);
  });

  test("W1-W4, C1: the changelog holds +I, then -U/+U with the old and new rows, nothing for an equal row, -D of the deleted row, nothing for a missing one; the deleted key looks up null", async () => {
    const tenant = "images";
    const bucket = bucketOfTenant(tenant);
    const counts: number[] = [];
    for (const ops of [
      [{ upsert: person(tenant, 1, "first") }],
      [{ upsert: person(tenant, 1, "second") }],
      [{ upsert: person(tenant, 1, "second") }],
      [{ delete: { tenant, id: 1 } }],
      [{ delete: { tenant, id: 1 } }],
    ]) {
      const parts = ((await write("people", ops)).body as { buckets: { count: number }[] }).buckets;
      counts.push(parts.reduce((sum, part) => sum + part.count, 0));
    }
    expect(counts).toEqual([1, 2, 0, 1, 0]);
    expect(await lookup("people", [{ tenant, id: 1 }])).toEqual([null]);
    const records = (await readChangelog(service, "people", bucket)).filter((record) => record.row["tenant"] === tenant);
    expect(records).toEqual([
      { op: "+I", row: person(tenant, 1, "first") },
      { op: "-U", row: person(tenant, 1, "first") },
      { op: "+U", row: person(tenant, 1, "second") },
      { op: "-D", row: person(tenant, 1, "second") },
    ]);
  });

  test.each(["sse", "long-poll"] as const)("changelog as a Durable Stream: @durable-streams/client tails a bucket live (%s) and gets the writes made after its start offset as {op, row} messages", async (live) => {
    const bucket = 1;
    const tenant = tenantIn(bucket, `tail-${live}-`);
    const { leaderAddr } = (await describeTable(service, "people")).buckets[bucket]!;
    const from = await changelogTail(service, "people", bucket);
    const received: ChangeRecord[] = [];
    const session = await stream<ChangeRecord>({ url: `${leaderAddr}/v1/table/people/bucket/${bucket}/changelog`, offset: from, live, signal: AbortSignal.timeout(30_000) });
    session.subscribeJson<ChangeRecord>((batch) => {
      received.push(...batch.items);
    });
    await write("people", [{ upsert: person(tenant, 1, "a") }]);
    await write("people", [{ upsert: person(tenant, 1, "b") }, { upsert: person(tenant, 2, "c") }]);
    await eventually(() => received.length >= 4, { timeoutMs: 15_000, what: "four changelog messages at the tail" });
    session.cancel();
    await session.closed.catch(() => undefined);
    expect(received).toEqual([
      { op: "+I", row: person(tenant, 1, "a") },
      { op: "-U", row: person(tenant, 1, "a") },
      { op: "+U", row: person(tenant, 1, "b") },
      { op: "+I", row: person(tenant, 2, "c") },
    ]);
  });

  test("not_leader: a bucket-addressed write at a node that does not lead the bucket answers 307, Location the same request at the leader, the leader in the body, and writes nothing", async () => {
    const bucket = 2;
    const { leader, leaderAddr } = (await describeTable(service, "people")).buckets[bucket]!;
    const other = Array.from({ length: NODES }, (_, i) => `node-${i}`).find((id) => id !== leader)!;
    const tenant = tenantIn(bucket, "stray-");
    const answer = await call(service, "POST", `/n/${other}/v1/table/people/bucket/${bucket}/write`, { ops: [{ upsert: person(tenant, 1) }] });
    expect(answer.status).toBe(307);
    expect(answer.headers.get("location")).toBe(`${leaderAddr}/v1/table/people/bucket/${bucket}/write`);
    const { error } = answer.body as { error: { code: string; details: Record<string, unknown> } };
    expect(error.code).toBe("not_leader");
    expect(error.details).toMatchObject({ table: "people", bucket, leader, leaderAddr });
    expect(typeof error.details["leaderEpoch"]).toBe("number");
    expect(await lookup("people", [{ tenant, id: 1 }])).toEqual([null]);
  });

  test("R7 with the TypeScript client: 2,000 rows over every bucket, each bucket's part sent to its leader, all read back with the writes' minOffsets", async () => {
    const client = new TableClient({ baseUrl: service.baseUrl });
    const items = client.table("items");
    const definition = { columns: [{ name: "id", type: "int" }, { name: "label", type: "string" }], primaryKey: ["id"], buckets: 8 };
    expect((await items.create(definition)).created).toBe(true);
    const rows = Array.from({ length: 2_000 }, (_, id) => ({ id, label: `item ${id}` }));
    const minOffsets: Record<string, string> = {};
    const bucketsWritten = new Set<number>();
    for (let start = 0; start < rows.length; start += 500) {
      const result = await items.write(rows.slice(start, start + 500).map((row) => ({ upsert: row })));
      for (const part of result.buckets) bucketsWritten.add(part.bucket);
      Object.assign(minOffsets, result.minOffsets); // a later write's offset is the later one
    }
    expect(bucketsWritten.size).toBe(8);
    const found = await items.lookup(rows.map(({ id }) => ({ id })), { minOffsets });
    expect(found).toEqual(rows);
    const view = await describeTable(service, "items");
    expect(view.buckets.reduce((sum, bucket) => sum + (bucket.rows ?? 0), 0)).toBe(rows.length);
  });

  test("partitions with the TypeScript client: each new day gets its own buckets on first write (AddPartition), rows read back with the writes' minOffsets; a lookup of a day never written is null; a second client with the same clientId (a restarted instance) writes too: its clock epoch is refused (PRD-11) and it moves to the server's epoch plus one", async () => {
    const definition = {
      columns: [{ name: "day", type: "int" }, { name: "id", type: "string" }, { name: "v", type: "int" }],
      primaryKey: ["day", "id"],
      bucketKey: ["id"],
      buckets: 2,
      partitionBy: "day",
    };
    const first = new TableClient({ baseUrl: service.baseUrl, clientId: "daily.writer" });
    const daily = first.table("daily");
    expect((await daily.create(definition)).table.buckets).toEqual([]);
    const rows = [1, 2].flatMap((day) => Array.from({ length: 20 }, (_, i) => ({ day, id: `k${i}`, v: day * 100 + i })));
    const written = await daily.write(rows.map((row) => ({ upsert: row })));
    expect(new Set(written.buckets.map((part) => part.partition)).size).toBe(2);
    expect(await daily.lookup(rows.map(({ day, id }) => ({ day, id })), { minOffsets: written.minOffsets })).toEqual(rows);
    expect(await daily.lookup([{ day: 3, id: "k0" }])).toEqual([null]);
    const view = await describeTable(service, "daily");
    expect(view.buckets.map((bucket) => [(bucket as { partition?: unknown }).partition, bucket.bucket])).toEqual([[1, 0], [1, 1], [2, 0], [2, 1]]);

    const restarted = new TableClient({ baseUrl: service.baseUrl, clientId: "daily.writer" }).table("daily");
    const again = [{ day: 1, id: "k0", v: -1 }, { day: 2, id: "k1", v: -2 }, { day: 4, id: "new", v: 4 }];
    const second = await restarted.write(again.map((row) => ({ upsert: row })));
    // Two updates (-U and +U each) and one insert: written, not taken for repeats of the first instance's seqs.
    expect(second.buckets.map((part) => [part.duplicate, part.count]).sort()).toEqual([[false, 1], [false, 2], [false, 2]]);
    expect(await restarted.lookup(again.map(({ day, id }) => ({ day, id })), { minOffsets: second.minOffsets })).toEqual(again);
  });

  test("a crashed leader (OS5, DeclareDead, ReassignStreams, S5): its bucket is re-led at a higher epoch, the new leader restores the snapshot and replays, and serves; every acknowledged write is in the changelog exactly once though answers were lost", async () => {
    const outcome = await crashWhileWriting(service, { table: "ledger", buckets: NODES, loseEvery: 5 });
    const { reLed, restore } = outcome;
    console.log(
      `[tables] bucket ${reLed.bucket}: ${reLed.victim} crashed at leader epoch ${reLed.epochBefore}, ${reLed.leaderAfter} leads at ${reLed.epochAfter}; ` +
        `crash to first ack ${outcome.crashToFirstAckMs} ms; ${outcome.lostAnswers} answers lost, ${outcome.duplicatesAnswered} retries answered as duplicates; ` +
        `load at the new leader: ${JSON.stringify(restore)}`,
    );
    expect(outcome.problems).toEqual([]);
    expect(restore?.restoredFrom).toBeGreaterThan(0); // S5: from the snapshot ...
    expect(restore?.replayedBytes).toBeGreaterThan(0); // ... then the stream after it
    expect(outcome.reLed.epochAfter).toBeGreaterThan(outcome.reLed.epochBefore);
    expect(outcome.reLed.leaderAfter).not.toBe(outcome.reLed.victim);
    expect(outcome.ackedByNewLeader).toBeGreaterThan(0);
    expect(outcome.lostAnswers).toBeGreaterThan(0);
    expect(outcome.duplicatesAnswered).toBeGreaterThan(0);
  }, 240_000);
});
