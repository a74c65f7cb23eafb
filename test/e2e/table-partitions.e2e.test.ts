// Partitioned tables end to end (docs/tables.md, "HTTP API"): three nodes under the local runtime with
// short leases, as tables.e2e.test.ts. A table with `partitionBy` has no bucket until a partition value
// arrives; a write through the router has the coordinator add each new partition (AddPartition, table AP,
// at most 16 per write), then splits by (partition, bucket). Each partition has its own bucket streams,
// read and written at `/v1/table/<t>/p/<partition value>/bucket/<i>/` (the value as users write it,
// percent-encoded: docs/tables.md "Partitions in URLs"). Tests name the rule they prove.
//
//   npx vitest run --project e2e test/e2e/table-partitions.e2e.test.ts
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { TableClient } from "../../src/client/index.ts";
import { bucketOf, encodePartition } from "../../src/core/tables/bucketing.ts";
import { parseTableDefinition, type TableDefinition } from "../../src/core/tables/definition.ts";
import { eventually, NotYet } from "../support/eventually.ts";
import { startService, type Service } from "./service.ts";
import { allLive, call, expectStatus, readChangelogAt } from "./tables-clients.ts";

const NODES = 3;
let service: Service;

/** Events by day: the partition column `day` is in the primary key (D13); the bucket key is the id. */
const EVENTS = {
  columns: [
    { name: "day", type: "int" },
    { name: "id", type: "string" },
    { name: "v", type: "int", nullable: true },
  ],
  primaryKey: ["day", "id"],
  bucketKey: ["id"],
  buckets: 2,
  partitionBy: "day",
};

/** Visits of a tenant by day: the bucket key (tenant) is a prefix of the primary key (D16), so prefix scans work. */
const VISITS = {
  columns: [
    { name: "tenant", type: "string" },
    { name: "day", type: "int" },
    { name: "id", type: "int" },
    { name: "v", type: "int", nullable: true },
  ],
  primaryKey: ["tenant", "day", "id"],
  bucketKey: ["tenant"],
  buckets: 2,
  partitionBy: "day",
};

/** One bucket of GET /v1/table/<name> of a partitioned table. */
interface PartitionBucket {
  readonly partition: string | number;
  readonly bucket: number;
  readonly leader: string | null;
  readonly leaderAddr: string | null;
  readonly leaderEpoch: number | null;
}

interface PartitionedView {
  readonly name: string;
  readonly buckets: readonly PartitionBucket[];
}

/** One bucket's part of a write's answer: `partition` is the partition's value. */
interface WrittenPart {
  readonly partition: string | number;
  readonly bucket: number;
  readonly leaderEpoch: number;
  readonly nextOffset: string;
  readonly count: number;
}

type Event = { day: number; id: string; v: number | null };

function parsed(definition: unknown): TableDefinition {
  const result = parseTableDefinition(definition);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

const event = (day: number, id: string, v: number | null = day): Event => ({ day, id, v });
const visit = (tenant: string, day: number, id: number) => ({ tenant, day, id, v: id * 10 });

async function view(table: string): Promise<PartitionedView> {
  return (await expectStatus(service, 200, "GET", `/v1/table/${table}`)).body as PartitionedView;
}

async function listed(table: string): Promise<{ name: string; buckets: number; partitions: number | null }> {
  const { tables } = (await expectStatus(service, 200, "GET", "/v1/table")).body as { tables: { name: string; buckets: number; partitions: number | null }[] };
  const found = tables.find((t) => t.name === table);
  if (found === undefined) throw new Error(`${table} is not in GET /v1/table: ${JSON.stringify(tables)}`);
  return found;
}

async function write(table: string, ops: unknown[]): Promise<WrittenPart[]> {
  return ((await expectStatus(service, 200, "POST", `/v1/table/${table}/write`, { ops })).body as { buckets: WrittenPart[] }).buckets;
}

async function lookup(table: string, keys: unknown[], minOffsets?: Record<string, string>): Promise<unknown[]> {
  const body = { keys, ...(minOffsets === undefined ? {} : { minOffsets }) };
  return ((await expectStatus(service, 200, "POST", `/v1/table/${table}/lookup`, body)).body as { rows: unknown[] }).rows;
}

/** The changelog URL of a bucket of a partition at its leader, the partition written as its value. */
function changelogUrl(table: string, bucket: PartitionBucket): string {
  if (bucket.leaderAddr === null) throw new Error(`bucket ${JSON.stringify(bucket)} has no leader`);
  return `${bucket.leaderAddr}/v1/table/${table}/p/${encodeURIComponent(String(bucket.partition))}/bucket/${bucket.bucket}/changelog`;
}

const byPartitionAndBucket = (a: PartitionBucket, b: PartitionBucket): number =>
  a.partition === b.partition ? a.bucket - b.bucket : String(a.partition) < String(b.partition) ? -1 : 1;

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

/** Rows of events in days 1 and 2: the same ids in both days, enough ids to reach both buckets of each. */
const IDS = ["a", "b", "c", "d", "e", "f", "g", "h"];
const EVENT_ROWS = [1, 2].flatMap((day) => IDS.map((id) => event(day, id, day * 100 + IDS.indexOf(id))));

describe("partitioned tables over three nodes", () => {
  test("D12, AP: a PUT of a partitioned table answers 201 with no buckets; a write to days 1 and 2 adds both partitions (2 buckets each, led); one id in two days is two rows; a day never written looks up null; GET /v1/table counts the partitions", async () => {
    const created = await call(service, "PUT", "/v1/table/events", EVENTS);
    expect(created.status).toBe(201);
    expect((created.body as PartitionedView).buckets).toEqual([]);
    expect((await view("events")).buckets).toEqual([]);
    expect(await listed("events")).toMatchObject({ partitions: 0 });

    const parts = await write("events", EVENT_ROWS.map((row) => ({ upsert: row })));
    // Each part names its partition by its value (the day), as GET /v1/table/<t> does.
    expect(new Set(parts.map((part) => part.partition))).toEqual(new Set([1, 2]));
    expect(parts.reduce((sum, part) => sum + part.count, 0)).toBe(EVENT_ROWS.length); // one +I per new row
    const definition = parsed(EVENTS);
    for (const part of parts) {
      const expected = EVENT_ROWS.filter((row) => row.day === part.partition && bucketOf(definition, row) === part.bucket).length;
      expect(part.count).toBe(expected);
    }

    const buckets = [...(await view("events")).buckets].sort(byPartitionAndBucket);
    expect(buckets.map((b) => [b.partition, b.bucket])).toEqual([[1, 0], [1, 1], [2, 0], [2, 1]]);
    for (const bucket of buckets) {
      expect(typeof bucket.leader).toBe("string");
      expect(typeof bucket.leaderAddr).toBe("string");
    }

    // minOffsets keyed "<partition value>/<bucket>", from the write's answer.
    const minOffsets = Object.fromEntries(parts.map((part) => [`${part.partition}/${part.bucket}`, part.nextOffset]));
    const keys = [{ day: 1, id: "a" }, { day: 2, id: "a" }, { day: 3, id: "a" }, { day: 2, id: "h" }, { day: 1, id: "zz" }];
    expect(await lookup("events", keys, minOffsets)).toEqual([event(1, "a", 100), event(2, "a", 200), null, event(2, "h", 207), null]);
    expect(await listed("events")).toMatchObject({ buckets: 4, partitions: 2 });
    expect((await view("events")).buckets.length).toBe(4); // the lookup of day 3 added no partition
  });

  test("B5, C1: each partition's bucket changelog, read at its leader by the partition bucket path, holds only that partition's rows of that bucket, as +I", async () => {
    const definition = parsed(EVENTS);
    const buckets = (await view("events")).buckets;
    expect(buckets.length).toBe(4);
    const seen: Event[] = [];
    for (const bucket of buckets) {
      const records = await readChangelogAt(service, changelogUrl("events", bucket));
      const expected = EVENT_ROWS.filter((row) => row.day === bucket.partition && bucketOf(definition, row) === bucket.bucket);
      expect(records).toEqual(expected.map((row) => ({ op: "+I", row })));
      seen.push(...(records.map((record) => record.row) as unknown as Event[]));
    }
    expect(seen.length).toBe(EVENT_ROWS.length);
  });

  test("Q8: a prefix scan holding the partition column answers that partition's rows in key order; without the partition column 400; of a day the table lacks, no rows and a null cursor", async () => {
    expect((await call(service, "PUT", "/v1/table/visits", VISITS)).status).toBe(201);
    const rows = [
      ...[3, 1, 2].map((id) => visit("acme", 1, id)),
      ...[2, 1].map((id) => visit("acme", 2, id)),
      visit("other", 1, 1),
    ];
    await write("visits", rows.map((row) => ({ upsert: row })));

    const day1 = (await expectStatus(service, 200, "POST", "/v1/table/visits/prefix", { prefix: { tenant: "acme", day: 1 } })).body;
    expect(day1).toEqual({ rows: [1, 2, 3].map((id) => visit("acme", 1, id)), cursor: null });
    const paged = (await expectStatus(service, 200, "POST", "/v1/table/visits/prefix", { prefix: { tenant: "acme", day: 2 }, limit: 1 })).body as { rows: unknown[]; cursor: string | null };
    expect(paged.rows).toEqual([visit("acme", 2, 1)]);
    expect(paged.cursor).not.toBeNull();
    const rest = (await expectStatus(service, 200, "POST", "/v1/table/visits/prefix", { prefix: { tenant: "acme", day: 2 }, limit: 1, after: paged.cursor })).body as { rows: unknown[]; cursor: string | null };
    expect(rest.rows).toEqual([visit("acme", 2, 2)]);

    const withoutDay = await call(service, "POST", "/v1/table/visits/prefix", { prefix: { tenant: "acme" } });
    expect(withoutDay.status).toBe(400);
    expect(withoutDay.body).toMatchObject({ error: { code: "invalid", details: { field: "prefix" } } });

    const missing = (await expectStatus(service, 200, "POST", "/v1/table/visits/prefix", { prefix: { tenant: "acme", day: 99 } })).body;
    expect(missing).toEqual({ rows: [], cursor: null });
    expect(await listed("visits")).toMatchObject({ partitions: 2 }); // the scan of day 99 added no partition
  });

  test("AP5, AP11: POST /partitions {value: 3} answers 201 and the table with day 3's buckets, again 200 and the same buckets; a value of the wrong type 400", async () => {
    const added = await call(service, "POST", "/v1/table/events/partitions", { value: 3 });
    expect(added.status).toBe(201);
    const day3 = (added.body as PartitionedView).buckets.filter((b) => b.partition === 3);
    expect(day3.map((b) => b.bucket).sort()).toEqual([0, 1]);
    expect((added.body as PartitionedView).buckets.length).toBe(6);

    const again = await call(service, "POST", "/v1/table/events/partitions", { value: 3 });
    expect(again.status).toBe(200);
    expect((again.body as PartitionedView).buckets.filter((b) => b.partition === 3).map((b) => [b.bucket, b.leader]).sort()).toEqual(day3.map((b) => [b.bucket, b.leader]).sort());
    expect(await listed("events")).toMatchObject({ buckets: 6, partitions: 3 });

    for (const body of [{ value: "3" }, { value: 1.5 }, { value: null }, {}, { value: 4, extra: 1 }]) {
      const refused = await call(service, "POST", "/v1/table/events/partitions", body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body).toMatchObject({ error: { code: "invalid", details: { field: "value" } } });
    }
    expect(await listed("events")).toMatchObject({ partitions: 3 });
  });

  test("deletes in a partition the table does not have change nothing: the write answers 200 with no bucket and adds no partition", async () => {
    const answer = await expectStatus(service, 200, "POST", "/v1/table/events/write", { ops: [{ delete: { day: 77, id: "a" } }, { delete: { day: 78, id: "b" } }] });
    expect(answer.body).toEqual({ buckets: [] });
    expect(await listed("events")).toMatchObject({ partitions: 3 });
  });

  test("MAX_NEW_PARTITIONS_PER_WRITE: a write adding 17 new partitions answers 413 too_large and writes nothing (no partition added); 16 answers 200", async () => {
    const definition = { ...EVENTS, buckets: 1 };
    expect((await call(service, "PUT", "/v1/table/wide", definition)).status).toBe(201);
    const days = (count: number, from: number) => Array.from({ length: count }, (_, i) => event(from + i, "x"));

    const tooMany = await call(service, "POST", "/v1/table/wide/write", { ops: days(17, 1).map((row) => ({ upsert: row })) });
    expect(tooMany.status).toBe(413);
    expect(tooMany.body).toMatchObject({ error: { code: "too_large", details: { max: 16 } } });
    expect((await view("wide")).buckets).toEqual([]);
    expect(await listed("wide")).toMatchObject({ partitions: 0 });
    expect(await lookup("wide", [{ day: 1, id: "x" }, { day: 17, id: "x" }])).toEqual([null, null]);

    const sixteen = days(16, 1);
    const parts = await write("wide", sixteen.map((row) => ({ upsert: row })));
    expect(parts.length).toBe(16);
    expect(parts.every((part) => part.count === 1)).toBe(true);
    expect(await listed("wide")).toMatchObject({ buckets: 16, partitions: 16 });
    expect(await lookup("wide", sixteen.map(({ day, id }) => ({ day, id })))).toEqual(sixteen);
  });

  test("TD3: DELETE of a partitioned table answers 204; every partition's bucket stream is gone at its leader (404); a table of the same name created again is empty", async () => {
    const before = (await view("events")).buckets;
    expect(before.length).toBe(6);
    expect((await call(service, "DELETE", "/v1/table/events")).status).toBe(204);
    expect((await call(service, "GET", "/v1/table/events")).status).toBe(404);
    for (const bucket of before) {
      const url = `${changelogUrl("events", bucket)}?offset=-1`;
      await eventually(
        async () => {
          const answer = await call(service, "GET", url);
          if (answer.status !== 404) throw new NotYet(`${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);
          return true;
        },
        { timeoutMs: 15_000, what: `the dropped bucket ${String(bucket.partition)}/${bucket.bucket} at its leader to answer 404` },
      );
    }

    const created = await call(service, "PUT", "/v1/table/events", EVENTS);
    expect(created.status).toBe(201);
    expect((created.body as PartitionedView).buckets).toEqual([]);
    expect(await lookup("events", [{ day: 1, id: "a" }, { day: 2, id: "a" }])).toEqual([null, null]);
    await write("events", [{ upsert: event(1, "new") }]);
    expect(await lookup("events", [{ day: 1, id: "a" }, { day: 1, id: "new" }])).toEqual([null, event(1, "new")]);
    const records = [];
    for (const bucket of (await view("events")).buckets) records.push(...(await readChangelogAt(service, changelogUrl("events", bucket))));
    expect(records).toEqual([{ op: "+I", row: event(1, "new") }]);
    expect(await listed("events")).toMatchObject({ buckets: 2, partitions: 1 });
  });

  test("BR1: a bucket-addressed write to a partition's bucket at a node that does not lead it answers 307 not_leader, Location the same request at the leader, the leader and the partition's value in the details, and writes nothing", async () => {
    const definition = parsed(VISITS);
    const target = (await view("visits")).buckets.find((b) => b.partition === 1 && b.bucket === 1)!;
    const { leader, leaderAddr } = target;
    expect(leader).not.toBeNull();
    const other = Array.from({ length: NODES }, (_, i) => `node-${i}`).find((id) => id !== leader)!;
    let tenant = "";
    for (let i = 0; tenant === ""; i++) if (bucketOf(definition, visit(`stray-${i}`, 1, 1)) === 1) tenant = `stray-${i}`;
    const partition = 1;
    const path = "/v1/table/visits/p/1/bucket/1/write";

    const answer = await call(service, "POST", `/n/${other}${path}`, { ops: [{ upsert: visit(tenant, 1, 1) }] });
    expect(answer.status).toBe(307);
    expect(answer.headers.get("location")).toBe(`${leaderAddr}${path}`);
    const { error } = answer.body as { error: { code: string; details: Record<string, unknown> } };
    expect(error.code).toBe("not_leader");
    expect(error.details).toMatchObject({ table: "visits", partition, bucket: 1, leader, leaderAddr });
    expect(typeof error.details["leaderEpoch"]).toBe("number");
    expect(await lookup("visits", [{ tenant, day: 1, id: 1 }])).toEqual([null]);
  });

  test("PS, PO through the router: a date and a string with a space and a '/' address their buckets by value (write, lookup, prefix, changelog); the old internal spelling is 404 naming the segment; the client uses the values", async () => {
    const DAYS = {
      columns: [{ name: "day", type: "string" }, { name: "id", type: "string" }, { name: "v", type: "int", nullable: true }],
      primaryKey: ["day", "id"],
      buckets: 2,
      partitionBy: "day",
    };
    expect((await call(service, "PUT", "/v1/table/days", DAYS)).status).toBe(201);
    const definition = parsed(DAYS);
    for (const [day, segment] of [["2026-12-06", "2026-12-06"], ["eu/west side", "eu%2Fwest%20side"]] as const) {
      expect((await call(service, "POST", "/v1/table/days/partitions", { value: day })).status).toBe(201);
      const row = { day, id: "k", v: 1 };
      const base = `/v1/table/days/p/${segment}/bucket/${bucketOf(definition, row)}`;
      const written = await expectStatus(service, 200, "POST", `${base}/write`, { ops: [{ upsert: row }] });
      expect(written.body).toMatchObject({ partition: day, count: 1 });
      expect((await expectStatus(service, 200, "POST", `${base}/lookup`, { keys: [{ day, id: "k" }] })).body).toEqual({ rows: [row] });
      expect((await expectStatus(service, 200, "POST", `${base}/prefix`, { prefix: { day, id: "k" } })).body).toMatchObject({ rows: [row] });
      expect(await readChangelogAt(service, `${service.baseUrl}${base}/changelog`)).toEqual([{ op: "+I", row }]);
    }

    const bucket = bucketOf(definition, { day: "2026-12-06", id: "k", v: 1 });
    const old = await call(service, "GET", `/v1/table/days/p/${encodeURIComponent(encodePartition("2026-12-06"))}/bucket/${bucket}/changelog?offset=-1`);
    expect(old.status).toBe(404);
    expect(old.body).toMatchObject({ error: { code: "not_found", details: { reason: "internal_partition_key", partitionSegment: "2026-12-06" } } });
    expect((old.body as { error: { message: string } }).error.message).toContain("/p/2026-12-06/");

    const days = new TableClient({ baseUrl: service.baseUrl }).table("days");
    const result = await days.write([{ upsert: { day: "eu/west side", id: "c", v: 2 } }]);
    const cBucket = bucketOf(definition, { day: "eu/west side", id: "c", v: 2 });
    expect(result.buckets).toMatchObject([{ partition: "eu/west side", bucket: cBucket, count: 1 }]);
    expect(Object.keys(result.minOffsets)).toEqual([`eu/west side/${cBucket}`]);
    expect(await days.lookup([{ day: "eu/west side", id: "c" }], { minOffsets: result.minOffsets })).toEqual([{ day: "eu/west side", id: "c", v: 2 }]);
    const url = days.changelogUrl(cBucket, "eu/west side");
    expect(url).toBe(`${service.baseUrl}/v1/table/days/p/eu%2Fwest%20side/bucket/${cBucket}/changelog`);
    expect((await readChangelogAt(service, url)).map((record) => record.row)).toContainEqual({ day: "eu/west side", id: "c", v: 2 });
  });
});
