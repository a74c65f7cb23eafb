// The table commands (mink tables, mink table, mink table snapshot) against the fake admin server's table
// endpoints (fake-tables.ts): main() runs in-process with injected stdout, stderr and env; each test asserts
// what a person or a script sees, the requests sent, and the exit code.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.ts";
import { FAKE_TOKEN, startFakeAdminServer, type FakeAdminServer } from "./fake-admin-server.ts";

let server: FakeAdminServer;

beforeAll(async () => {
  server = await startFakeAdminServer();
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  server.reset();
});

async function mink(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: { MINK_URL: server.url, MINK_ADMIN_TOKEN: FAKE_TOKEN },
  });
  return { code, stdout, stderr };
}

describe("mink tables, table and table snapshot", () => {
  it("tables prints name, kind and bucket count per table, sorted by name", async () => {
    const run = await mink(["tables"]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(server.requests[0]).toMatchObject({ method: "GET", url: "/admin/tables" });
    expect(run.stdout).toBe(["NAME    KIND         BUCKETS", "events  log                2", "users   primary-key        3", ""].join("\n"));
  });

  it("tables says so when there are none, and prints the server's JSON with --json", async () => {
    const json = await mink(["tables", "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ tables: [{ name: "events", buckets: 2, kind: "log" }, { name: "users", buckets: 3, kind: "primary-key" }] });
    server.tables.clear();
    expect(await mink(["tables"])).toMatchObject({ code: 0, stdout: "no tables\n" });
  });

  it("table prints the definition, then a row per bucket, '-' where the leader has no figure", async () => {
    const run = await mink(["table", "users"]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(server.requests[0]).toMatchObject({ method: "GET", url: "/admin/tables/users" });
    expect(run.stdout).toBe(
      [
        "name:         users",
        "kind:         primary-key",
        "columns:      id int, name string, email string nullable",
        "primary key:  id",
        "bucket key:   id",
        "buckets:      3",
        "",
        "BUCKET  LEADER  EPOCH  NEXT OFFSET                        ROWS  SNAPSHOT",
        "     0  node-0      2  0000000000000000_0000000000000153     3  0000000000000000_0000000000000102",
        "     1  node-1      1  0000000000000000_0000000000000051     1  -",
        "     2  node-0      0  -                                     -  -",
        "",
      ].join("\n"),
    );
  });

  it("a partitioned table: tables adds a PARTITIONS column, table leads each bucket's row with its partition", async () => {
    const bucket = (partition: number, index: number) => ({ partition, bucket: index, leader: `node-${index}`, leaderAddr: null, leaderEpoch: 1, nextOffset: null, rows: null, snapshotOffset: null });
    server.tables.set("daily", {
      kind: "primary-key",
      description: {
        name: "daily",
        definition: { columns: [{ name: "day", type: "int", nullable: false }, { name: "id", type: "string", nullable: false }], primaryKey: ["day", "id"], bucketKey: ["id"], buckets: 2, partitionBy: "day" },
        buckets: [bucket(1, 0), bucket(1, 1), bucket(2, 0), bucket(2, 1)],
      },
      snapshot: [],
    });
    const listed = await mink(["tables"]);
    expect(listed.stdout.split("\n").slice(0, 2)).toEqual(["NAME    KIND         BUCKETS  PARTITIONS", "daily   primary-key        4           2"]);
    const shown = await mink(["table", "daily"]);
    expect(shown.stdout).toContain("partition by:  day");
    expect(shown.stdout.split("\n").slice(-6, -1).map((line) => line.split(/\s+/).slice(0, 3).join(" "))).toEqual(["PARTITION BUCKET LEADER", "1 0 node-0", "1 1 node-1", "2 0 node-0", "2 1 node-1"]);
  });

  it("table shows a log table as one without keys, and a definition of unknown shape as its JSON", async () => {
    const log = await mink(["table", "events"]);
    expect(log.code, log.stderr).toBe(0);
    expect(log.stdout.split("\n").slice(0, 5)).toEqual([
      "name:         events",
      "kind:         log",
      "columns:      kind string, at int",
      "primary key:  none (rows are appended)",
      "bucket key:   none (a row's bucket is the hash of the whole row)",
    ]);
    const users = server.tables.get("users");
    if (users === undefined) throw new Error("the fake lost its users table");
    users.description.definition = { columns: "id int", buckets: 3 };
    const odd = await mink(["table", "users"]);
    expect(odd.stdout.split("\n").slice(0, 3)).toEqual(["name:        users", 'definition:  {"columns":"id int","buckets":3}', ""]);
  });

  it("table --json prints the server's answer", async () => {
    const run = await mink(["table", "users", "--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(server.tables.get("users")?.description);
  });

  it("table and table snapshot exit 1 with not_found for no such table", async () => {
    for (const argv of [["table", "nope"], ["table", "snapshot", "nope"]]) {
      const run = await mink(argv);
      expect(run, argv.join(" ")).toMatchObject({ code: 1, stdout: "", stderr: 'mink: not_found (HTTP 404): no such table\n  details: {"table":"nope"}\n' });
    }
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual(["GET /admin/tables/nope", "POST /admin/tables/nope/snapshot"]);
  });

  it("table snapshot posts the snapshot and prints each bucket's covered offset or its error; not_loaded is not a failure", async () => {
    const run = await mink(["table", "snapshot", "users"]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(server.requests[0]).toMatchObject({ method: "POST", url: "/admin/tables/users/snapshot" });
    expect(run.stdout).toBe(
      [
        "snapshot of users: 2 of 3 buckets snapshotted",
        "BUCKET  COVERED OFFSET                     ERROR",
        "     0  0000000000000000_0000000000000153  -",
        "     1  0000000000000000_0000000000000051  -",
        "     2  -                                  not_loaded",
        "",
      ].join("\n"),
    );
    const json = await mink(["table", "snapshot", "users", "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ table: "users", buckets: server.tables.get("users")?.snapshot });
  });

  it("table snapshot exits 1 after printing when a bucket's snapshot failed, naming the bucket and the error", async () => {
    const users = server.tables.get("users");
    if (users === undefined) throw new Error("the fake lost its users table");
    users.snapshot[1] = { bucket: 1, coveredOffset: null, error: "fenced" };
    for (const flags of [[], ["--json"]]) {
      const run = await mink(["table", "snapshot", "users", ...flags]);
      expect(run.code).toBe(1);
      expect(run.stdout).toContain("fenced");
      expect(run.stderr).toBe("mink: 1 bucket of users not snapshotted (bucket 1: fenced)\n");
    }
  });

  it("exits 2 without a request for a missing or malformed table name, or an extra operand", async () => {
    const runs = await Promise.all([["table"], ["table", "snapshot"], ["table", "a/b"], ["table", "snapshot", "-x", "--", "-x"], ["tables", "users"], ["table", "users", "extra"]].map((argv) => mink(argv)));
    expect(runs.map((run) => run.code)).toEqual([2, 2, 2, 2, 2, 2]);
    expect(runs.map((run) => run.stderr.split("\n")[0])).toEqual([
      "mink: missing <name>; usage: mink table <name> [options]",
      "mink: missing <name>; usage: mink table snapshot <name> [options]",
      "mink: <name> must be 1 to 128 of [A-Za-z0-9_-], starting with a letter or digit (got 'a/b')",
      expect.stringMatching(/^mink: Unknown option '-x'/) as unknown,
      "mink: unexpected 'users'; usage: mink tables [options]",
      "mink: unexpected 'extra'; usage: mink table <name> [options]",
    ]);
    expect(server.requests).toHaveLength(0);
  });
});
