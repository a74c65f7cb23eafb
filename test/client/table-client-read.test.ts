// Reads and table management through the client: lookups grouped by bucket and answered in request
// order, each bucket's minOffset passed on for read-your-writes, prefix scans at the one leader a prefix
// names, and create / describe / list / drop on the table routes.
import { describe, expect, it } from "vitest";
import { TableClientError } from "../../src/client/index.ts";
import { ORIGIN, nodeAddr } from "./fake-table-service.ts";
import { EVENTS, ITEMS, USERS, harness } from "./harness.ts";

const bodiesOf = (seen: readonly { url: string; body: unknown }[], suffix: string): { url: string; body: Record<string, unknown> }[] =>
  seen.filter((request) => request.url.endsWith(suffix)).map(({ url, body }) => ({ url, body: body as Record<string, unknown> }));

describe("lookup", () => {
  it("answers each key in request order across buckets, null for a key with no row", async () => {
    const { service, client } = harness();
    const table = client.table("items");
    await table.create(ITEMS);
    const rows = Array.from({ length: 30 }, (_, index) => ({ id: `item-${index}`, v: index * 7 }));
    await table.write(rows.map((row) => ({ upsert: row })));
    // A shuffled order (every 7th of 31 positions), with missing keys in between.
    const asked = Array.from({ length: 31 }, (_, index) => (index * 7) % 31).map((index) => ({ id: `item-${index}` }));

    const answers = await table.lookup(asked);
    expect(answers).toEqual(asked.map(({ id }) => rows.find((row) => row.id === id) ?? null));
    expect(answers.filter((answer) => answer === null).length).toBe(1);
    const lookups = bodiesOf(service.seen, "/lookup");
    expect(lookups.length).toBe(new Set(lookups.map((lookup) => lookup.url)).size);
    expect(lookups.length).toBeGreaterThan(1);
  });

  it("sends each bucket the minOffset the write returned for it, and no other", async () => {
    const { service, client } = harness();
    const table = client.table("items");
    await table.create(ITEMS);
    const written = await table.write([{ upsert: { id: "a", v: 1 } }, { upsert: { id: "b", v: 2 } }, { upsert: { id: "c", v: 3 } }]);
    await table.lookup([{ id: "a" }, { id: "b" }, { id: "c" }, { id: "zzz" }], { minOffsets: written.minOffsets });
    for (const { url, body } of bodiesOf(service.seen, "/lookup")) {
      const bucket = /\/bucket\/(\d+)\/lookup$/.exec(url)![1]!;
      expect(body["minOffset"]).toBe(written.minOffsets[bucket]);
    }
  });

  it("refuses a key that is not exactly the primary key, before sending", async () => {
    const { service, client } = harness();
    const table = client.table("users");
    await table.create(USERS);
    const sentBefore = service.seen.length;
    await expect(table.lookup([{ org: "acme", id: 1 }, { org: "acme" }])).rejects.toMatchObject({ code: "invalid", details: { index: 1, field: "id" } });
    await expect(table.lookup([{ org: "acme", id: 1, name: "x" }])).rejects.toMatchObject({ code: "invalid", details: { field: "name" } });
    expect(service.seen.length).toBe(sentBefore);
  });
});

describe("prefix", () => {
  it("asks the leader of the one bucket the prefix names, and pages by cursor in key order", async () => {
    const { service, client } = harness();
    const table = client.table("users");
    await table.create(USERS);
    const acme = Array.from({ length: 5 }, (_, index) => ({ org: "acme", id: index, name: `user-${index}` }));
    await table.write([...acme, { org: "other", id: 1, name: "x" }].map((row) => ({ upsert: row })));

    const first = await table.prefix({ org: "acme" }, { limit: 3 });
    const second = await table.prefix({ org: "acme" }, { limit: 3, after: first.cursor! });
    expect([...first.rows, ...second.rows]).toEqual(acme);
    expect(second.cursor).toBeNull();
    const scans = bodiesOf(service.seen, "/prefix");
    const bucket = Number(/\/bucket\/(\d+)\/prefix$/.exec(scans[0]!.url)![1]);
    const leader = service.bucketOfTable("users", bucket).leader;
    expect(scans.map((scan) => scan.url)).toEqual([0, 1].map(() => `${nodeAddr(leader)}/v1/table/users/bucket/${bucket}/prefix`));
  });

  it("refuses a prefix that is not the first columns of the primary key", async () => {
    const { client } = harness();
    const table = client.table("users");
    await table.create(USERS);
    await expect(table.prefix({ id: 1 })).rejects.toMatchObject({ code: "invalid", details: { field: "prefix" } });
    await expect(table.prefix({ org: "acme" }, { limit: 0 })).rejects.toMatchObject({ code: "invalid", details: { field: "limit" } });
  });
});

describe("tables", () => {
  it("create is 201 then 200 for the same definition, and conflict for another", async () => {
    const { client } = harness();
    const table = client.table("items");
    expect(await table.create(ITEMS)).toMatchObject({ created: true, table: { name: "items" } });
    expect(await table.create(ITEMS)).toMatchObject({ created: false });
    const other = await table.create({ ...ITEMS, buckets: 4 }).catch((caught: unknown) => caught);
    expect(other).toBeInstanceOf(TableClientError);
    expect(other).toMatchObject({ code: "conflict", status: 409, retryable: false });
  });

  it("describe gives the canonical definition and each bucket's leader; list names every table with its kind", async () => {
    const { client } = harness();
    await client.table("items").create(ITEMS);
    await client.table("events").create(EVENTS);
    const described = await client.table("events").describe();
    expect(described.definition).toMatchObject({ primaryKey: null, bucketKey: null, buckets: EVENTS.buckets, partitionBy: null });
    expect(described.buckets.map((bucket) => bucket.bucket)).toEqual([0, 1, 2, 3]);
    expect(described.buckets.every((bucket) => bucket.leaderAddr !== null && bucket.leaderAddr.startsWith(`${ORIGIN}/n/`))).toBe(true);
    expect(await client.list()).toEqual([
      { name: "items", buckets: ITEMS.buckets, partitions: null, kind: "primary-key" },
      { name: "events", buckets: EVENTS.buckets, partitions: null, kind: "log" },
    ]);
  });

  it("drop removes the table: describing it then is not_found", async () => {
    const { client } = harness();
    const table = client.table("items");
    await table.create(ITEMS);
    await table.drop();
    await expect(table.describe()).rejects.toMatchObject({ code: "not_found", status: 404 });
  });

  it("refuses a definition the core refuses without sending it, and sends the token as a bearer", async () => {
    const { service, client } = harness({ token: "secret-token" });
    await expect(client.table("items").create({ ...ITEMS, buckets: 0 })).rejects.toMatchObject({ code: "invalid", details: { field: "buckets" } });
    expect(service.seen).toEqual([]);
    await client.list();
    expect(service.seen[0]!.headers["authorization"]).toBe("Bearer secret-token");
  });

  it("names a bucket's changelog under the table's routes", () => {
    const { client } = harness();
    expect(client.table("items").changelogUrl(3)).toBe(`${ORIGIN}/v1/table/items/bucket/3/changelog`);
    expect(() => client.table("items").changelogUrl(-1)).toThrow(TableClientError);
    expect(() => client.table("no/slash")).toThrow(TableClientError);
  });
});
