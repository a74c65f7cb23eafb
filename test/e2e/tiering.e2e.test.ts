// Tiering end to end (docs/tiering.md): three nodes under the local runtime, tables written through the
// table API, tiered at the coordinator by POST /admin/tables/<name>/tier, and read back by an outside
// reader (icebird) over the S3 endpoint, after each of two rounds with writes in between: a log table's
// rows exactly once, a primary-key table's (and a partitioned one's) exactly the current rows.
//
//   npm run test:e2e -- test/e2e/tiering.e2e.test.ts
import { AwsClient } from "aws4fetch";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { readIcebergTable } from "../support/iceberg-reader.ts";
import { startService, type Service } from "./service.ts";
import { adminHeaders, allLive, call, expectStatus } from "./tables-clients.ts";

const NODES = 3;
let service: Service;

beforeAll(async () => {
  service = await startService({ nodes: NODES });
  await allLive(service, NODES);
}, 180_000);

afterAll(async () => {
  await service?.stop();
});

interface TierAnswer {
  readonly committed: boolean;
  readonly snapshotId: number | null;
  readonly rows: number;
  readonly buckets: readonly { fromOffset: number; toOffset: number; error: string | null }[];
}

async function tier(table: string): Promise<TierAnswer> {
  const answer = await expectStatus(service, 200, "POST", `/admin/tables/${table}/tier`, undefined, adminHeaders(service), 60_000);
  return answer.body as TierAnswer;
}

const described = async (table: string) =>
  (await expectStatus(service, 200, "GET", `/admin/tables/${table}`, undefined, adminHeaders(service))).body as {
    tiered: { snapshotId: number | null; lagRecords: number | null; lagMs: number | null; metadataKey: string } | null;
    buckets: { tieredOffset: number | null }[];
  };

const write = (table: string, ops: unknown[]) => expectStatus(service, 200, "POST", `/v1/table/${table}/write`, { ops });

/** The tiered table's rows as an outside reader sees them, over the S3 endpoint (signed, as any S3 client). */
async function readTiered(table: string): Promise<Record<string, unknown>[]> {
  const vars = service.vars;
  const aws = new AwsClient({ accessKeyId: vars["S3_ACCESS_KEY_ID"]!, secretAccessKey: vars["S3_SECRET_ACCESS_KEY"]!, service: "s3", region: vars["S3_REGION"] ?? "auto" });
  const endpoint = vars["S3_ENDPOINT"]!;
  return readIcebergTable(`s3://${vars["S3_BUCKET"]!}/tiered/${table}`, async (bucket, key) => {
    const response = await fetch(await aws.sign(`${endpoint}/${bucket}/${key.split("/").map(encodeURIComponent).join("/")}`));
    if (response.status === 404) return null;
    if (!response.ok) throw new Error(`GET ${key}: ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  });
}

const plain = (rows: readonly Record<string, unknown>[], columns: readonly string[]): string[] =>
  rows.map((row) => columns.map((column) => String(row[column])).join("|")).sort();

describe("tiering through the table API, read back by icebird", () => {
  test("a log table tiered twice with writes between holds every row exactly once", async () => {
    await expectStatus(service, 201, "PUT", "/v1/table/events", { columns: [{ name: "id", type: "int" }, { name: "body", type: "json", nullable: true }], buckets: 3 });
    await write("events", [1, 2, 3, 4, 5].map((id) => ({ append: { id, body: { n: id } } })));
    const first = await tier("events");
    expect([first.committed, first.rows]).toEqual([true, 5]);
    expect(plain(await readTiered("events"), ["id", "body"])).toEqual(["1|{\"n\":1}", "2|{\"n\":2}", "3|{\"n\":3}", "4|{\"n\":4}", "5|{\"n\":5}"]);

    await write("events", [6, 7].map((id) => ({ append: { id, body: null } })));
    await write("events", [{ append: { id: 1, body: { n: 1 } } }]); // an equal row again: a log table keeps both
    const second = await tier("events");
    expect([second.committed, second.rows]).toEqual([true, 3]);
    const rows = await readTiered("events");
    expect(plain(rows, ["id", "body"])).toEqual(["1|{\"n\":1}", "1|{\"n\":1}", "2|{\"n\":2}", "3|{\"n\":3}", "4|{\"n\":4}", "5|{\"n\":5}", "6|null", "7|null"]);
    // Each row once: (bucket, offset) names its changelog record.
    expect(new Set(rows.map((row) => `${String(row["_bucket"])}/${String(row["_offset"])}`)).size).toBe(rows.length);

    const third = await tier("events");
    expect([third.committed, third.snapshotId]).toEqual([false, second.snapshotId]);

    // The lag (docs/tiering.md, "Lag"): none now; two records behind after two more appends.
    expect((await described("events")).tiered).toMatchObject({ snapshotId: second.snapshotId, lagRecords: 0, lagMs: 0, metadataKey: "tiered/events/metadata/v3.metadata.json" });
    await write("events", [{ append: { id: 8, body: null } }, { append: { id: 9, body: null } }]);
    const behind = await described("events");
    expect(behind.tiered?.lagRecords).toBe(2);
    expect(behind.buckets.reduce((sum, bucket) => sum + (bucket.tieredOffset ?? 0), 0)).toBe(8);

    // The list (mink tables) shows the round the coordinator recorded in the metadata log (table RT).
    const listed = (await expectStatus(service, 200, "GET", "/admin/tables", undefined, adminHeaders(service))).body as { tables: { name: string; tiered: { version: number; snapshotId: number; records: number } | null }[] };
    expect(listed.tables.find((table) => table.name === "events")?.tiered).toMatchObject({ version: 3, snapshotId: second.snapshotId, records: 8 });
  });

  test("a primary-key table shows exactly the current rows after each round: upserts, updates, deletes", async () => {
    await expectStatus(service, 201, "PUT", "/v1/table/people", {
      columns: [{ name: "id", type: "int" }, { name: "name", type: "string" }, { name: "score", type: "float", nullable: true }, { name: "active", type: "bool" }],
      primaryKey: ["id"],
      buckets: 2,
    });
    await write("people", [1, 2, 3, 4].map((id) => ({ upsert: { id, name: `p${id}`, score: id / 2, active: true } })));
    expect((await described("people")).tiered).toBeNull();
    await tier("people");
    expect(plain(await readTiered("people"), ["id", "name", "score", "active"])).toEqual(["1|p1|0.5|true", "2|p2|1|true", "3|p3|1.5|true", "4|p4|2|true"]);

    await write("people", [
      { upsert: { id: 1, name: "p1", score: null, active: false } },
      { delete: { id: 2 } },
      { upsert: { id: 5, name: "p5", score: 9.25, active: true } },
      { upsert: { id: 3, name: "p3", score: 1.5, active: true } }, // unchanged: no record
      { delete: { id: 5 } },
      { upsert: { id: 5, name: "p5 again", score: 1, active: true } },
    ]);
    const second = await tier("people");
    expect(second.committed).toBe(true);
    expect(plain(await readTiered("people"), ["id", "name", "score", "active"])).toEqual(["1|p1|null|false", "3|p3|1.5|true", "4|p4|2|true", "5|p5 again|1|true"]);
  });

  test("a partitioned primary-key table: new partitions and deletes across rounds", async () => {
    await expectStatus(service, 201, "PUT", "/v1/table/visits", {
      columns: [{ name: "day", type: "string" }, { name: "user", type: "int" }, { name: "pages", type: "int" }],
      primaryKey: ["day", "user"],
      buckets: 2,
      partitionBy: "day",
    });
    await write("visits", [
      { upsert: { day: "2026-12-06", user: 1, pages: 3 } },
      { upsert: { day: "2026-12-06", user: 2, pages: 1 } },
      { upsert: { day: "2026-12-07", user: 1, pages: 7 } },
    ]);
    await tier("visits");
    expect(plain(await readTiered("visits"), ["day", "user", "pages"])).toEqual(["2026-12-06|1|3", "2026-12-06|2|1", "2026-12-07|1|7"]);

    await write("visits", [
      { upsert: { day: "2026-12-06", user: 1, pages: 4 } },
      { delete: { day: "2026-12-06", user: 2 } },
      { upsert: { day: "2026-12-08", user: 9, pages: 2 } },
    ]);
    const second = await tier("visits");
    expect(second.buckets.every((bucket) => bucket.error === null)).toBe(true);
    expect(plain(await readTiered("visits"), ["day", "user", "pages"])).toEqual(["2026-12-06|1|4", "2026-12-07|1|7", "2026-12-08|9|2"]);
  });

  test("tiering a table that does not exist is 404; without the admin token 401", async () => {
    expect((await call(service, "POST", "/admin/tables/nothing-here/tier", undefined, adminHeaders(service))).status).toBe(404);
    expect((await call(service, "POST", "/admin/tables/events/tier")).status).toBe(401);
    // Spelled as an attacker would: an encoded slash or dot segments never name another table.
    for (const spelled of ["ev%2Fents", "%2E%2E", "events%2F..%2Fpeople", "EVENTS"]) {
      const answer = await call(service, "POST", `/admin/tables/${spelled}/tier`, undefined, adminHeaders(service));
      expect([400, 404], `${spelled}: ${answer.status}`).toContain(answer.status);
    }
  });
});
