// The differential test of one parse (docs/access.md, "One parse"; issue 21): three nodes in token mode, one
// tenant's token tries every route family on another tenant's data (streams, subscriptions, tables,
// partitions, the admin API, node addresses), each request spelled any way a client may: any character of
// any segment percent-encoded, in upper or lower hex, or encoded twice. Property: a spelling is refused as
// ambiguous (400) or gets exactly the answer its canonical spelling gets (each segment decoded once and
// re-encoded); and when every run is over, the other tenant's data is as it was, so no action was taken
// that was not authorized.
//
//   npm run test:e2e -- test/e2e/hostile-differential.e2e.test.ts
//   DIFFERENTIAL_SEED=<n> replays one run (the seed is printed); DIFFERENTIAL_RUNS sets how many (default 300).
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { call, mint, startHostileService, type Answer, type Minted } from "./hostile-support.ts";
import type { Service } from "./service.ts";

const RUNS = Number(process.env.DIFFERENTIAL_RUNS ?? "300");
const SEED = Number(process.env.DIFFERENTIAL_SEED ?? String(Date.now() % 2 ** 31));

let service: Service;
let root: Minted;
/** Tenant a: its own prefix, everything but its own tables' data. */
let tenant: Minted;
/** Reads table tb and partitioned table tp, and nothing else. */
let tableReader: Minted;
/** Partition 5 of tp as a URL writes it: the value (docs/tables.md, "Partitions in URLs"). */
const partitionSegment = "5";

/** One request a hostile tenant makes: its segments as meant (decoded), who sends it, and what with. */
interface Template {
  readonly label: string;
  readonly method: string;
  readonly segments: readonly string[];
  readonly query?: string;
  readonly who: () => string;
  readonly body?: string;
}

const json = (value: unknown): string => JSON.stringify(value);
const atNode = (segments: readonly string[]): string[] => ["n", "node-1", ...segments];
const stream = (name: string): string[] => ["v1", "stream", ...name.split("/")];
const subscription = (id: string, ...tail: string[]): string[] => ["v1", "stream", "__ds", "subscriptions", id, ...tail];
const tenantToken = (): string => tenant.token;
const readerToken = (): string => tableReader.token;

const TEMPLATES: readonly Template[] = [
  { label: "read another tenant's stream", method: "GET", segments: stream("b/s1"), query: "?offset=-1", who: tenantToken },
  { label: "append to another tenant's stream", method: "POST", segments: stream("b/s1"), who: tenantToken, body: "stolen" },
  { label: "delete another tenant's stream", method: "DELETE", segments: stream("b/s1"), who: tenantToken },
  { label: "create in another tenant's prefix", method: "PUT", segments: stream("b/new"), who: tenantToken },
  { label: "read its own stream", method: "GET", segments: stream("a/s"), query: "?offset=-1", who: tenantToken },
  { label: "append at a node's address", method: "POST", segments: atNode(stream("b/s1")), who: tenantToken, body: "stolen" },
  { label: "read at a node's address", method: "GET", segments: atNode(stream("b/s1")), query: "?offset=-1", who: tenantToken },
  { label: "read another tenant's subscription", method: "GET", segments: subscription("sub-b"), who: tenantToken },
  { label: "delete another tenant's subscription", method: "DELETE", segments: subscription("sub-b"), who: tenantToken },
  { label: "claim another tenant's subscription", method: "POST", segments: subscription("sub-b", "claim"), who: tenantToken, body: json({ worker: "thief" }) },
  { label: "add streams to another tenant's subscription", method: "POST", segments: subscription("sub-b", "streams"), who: tenantToken, body: json({ streams: ["a/s"] }) },
  { label: "remove a stream from another tenant's subscription", method: "DELETE", segments: subscription("sub-b", "streams", "b/s1"), who: tenantToken },
  { label: "a subscription at a node's address", method: "GET", segments: atNode(subscription("sub-b")), who: tenantToken },
  { label: "read its own subscription", method: "GET", segments: subscription("sub-a"), who: tenantToken },
  { label: "write rows with a read token", method: "POST", segments: ["v1", "table", "tb", "write"], who: readerToken, body: json({ ops: [{ upsert: { id: 99, label: "stolen" } }] }) },
  { label: "write a bucket with a read token", method: "POST", segments: ["v1", "table", "tb", "bucket", "0", "write"], who: readerToken, body: json({ ops: [{ upsert: { id: 98, label: "stolen" } }] }) },
  { label: "write a bucket at its node", method: "POST", segments: atNode(["v1", "table", "tb", "bucket", "1", "write"]), who: readerToken, body: json({ ops: [{ upsert: { id: 97, label: "stolen" } }] }) },
  { label: "add a partition with a read token", method: "POST", segments: ["v1", "table", "tp", "partitions"], who: readerToken, body: json({ value: 6 }) },
  { label: "write a partition's bucket with a read token", method: "POST", segments: ["v1", "table", "tp", "p", partitionSegment, "bucket", "0", "write"], who: readerToken, body: json({ ops: [{ upsert: { day: 5, id: "x", v: 1 } }] }) },
  { label: "drop a table with a read token", method: "DELETE", segments: ["v1", "table", "tb"], who: readerToken },
  { label: "redefine a table with a read token", method: "PUT", segments: ["v1", "table", "tb"], who: readerToken, body: json({ columns: [{ name: "id", type: "int" }], primaryKey: ["id"], buckets: 1 }) },
  { label: "look rows up with a read token", method: "POST", segments: ["v1", "table", "tb", "lookup"], who: readerToken, body: json({ keys: [{ id: 1 }] }) },
  { label: "the admin API with a tenant's token", method: "GET", segments: ["admin", "nodes"], who: tenantToken },
  { label: "mint a token with a tenant's token", method: "POST", segments: ["admin", "tokens"], who: tenantToken, body: json({ prefixes: [""], ops: ["read"], ttlSeconds: 60 }) },
  { label: "metrics with a tenant's token", method: "GET", segments: ["metrics"], who: tenantToken },
];

/** How each character of a segment is spelled: as itself where it may be, %XX, %xx, or encoded twice. */
type Spelling = 0 | 1 | 2 | 3;
const MAY_STAND_ALONE = /[A-Za-z0-9_.~!*'()-]/;

function spell(text: string, choices: readonly Spelling[], start: number): string {
  let out = "";
  let i = start;
  for (const char of text) {
    const choice = choices[i++ % choices.length] ?? 0;
    const bytes = [...new TextEncoder().encode(char)].map((byte) => byte.toString(16).toUpperCase().padStart(2, "0"));
    if (choice === 0 && MAY_STAND_ALONE.test(char)) out += char;
    else if (choice === 2) out += bytes.map((hex) => `%${hex.toLowerCase()}`).join("");
    else if (choice === 3) out += bytes.map((hex) => `%25${hex}`).join("");
    else out += bytes.map((hex) => `%${hex}`).join("");
  }
  return out;
}

/** The canonical spelling of a path as sent: each segment decoded once, re-encoded. */
function canonical(raw: readonly string[]): string {
  return `/${raw.map((segment) => encodeURIComponent(decodeURIComponent(segment))).join("/")}`;
}

async function send(template: Template, path: string): Promise<Answer> {
  return call(service, `${path}${template.query ?? ""}`, {
    method: template.method,
    token: template.who(),
    headers: template.body === undefined ? {} : { "content-type": template.method === "POST" && template.segments.includes("stream") && !template.segments.includes("__ds") ? "text/plain" : "application/json" },
    body: template.body ?? null,
    redirect: "manual",
  });
}

async function expectOk(answer: Promise<Answer>, label: string): Promise<Answer> {
  const result = await answer;
  expect(result.status, `${label}: ${result.text}`).toBeLessThan(300);
  return result;
}

async function otherTenantState(): Promise<unknown> {
  const asRoot = { token: root.token };
  const read = await call(service, "/v1/stream/b/s1?offset=-1", asRoot);
  const created = await call(service, "/v1/stream/b/new", { ...asRoot, method: "HEAD" });
  const sub = await call(service, "/v1/stream/__ds/subscriptions/sub-b", asRoot);
  const rows = await call(service, "/v1/table/tb/lookup", { ...asRoot, method: "POST", headers: { "content-type": "application/json" }, body: json({ keys: [{ id: 1 }, { id: 97 }, { id: 98 }, { id: 99 }] }) });
  const tp = await call(service, "/v1/table/tp", asRoot);
  const tokens = await call(service, "/admin/tokens", { token: service.adminToken });
  const view = JSON.parse(sub.text) as { streams?: unknown; claim?: unknown };
  return {
    stream: [read.status, read.text],
    created: created.status,
    subscription: [sub.status, view.streams],
    rows: [rows.status, rows.text],
    partitions: (JSON.parse(tp.text) as { buckets: { partition?: unknown }[] }).buckets.map((bucket) => bucket.partition),
    tokens: (JSON.parse(tokens.text) as { tokens: unknown[] }).tokens.length,
  };
}

beforeAll(async () => {
  service = await startHostileService();
  root = await mint(service, [""], ["read", "append", "create", "delete", "subscribe"]);
  tenant = await mint(service, ["a/"], ["read", "append", "create", "delete", "subscribe"]);
  tableReader = await mint(service, ["__ds/table/tb/", "__ds/table/tp/"], ["read"]);
  const asRoot = (method: string, path: string, body: string, contentType = "application/json"): Promise<Answer> =>
    expectOk(call(service, path, { method, token: root.token, headers: { "content-type": contentType }, body }), `${method} ${path}`);
  await asRoot("PUT", "/v1/stream/b/s1", "b-data", "text/plain");
  await asRoot("PUT", "/v1/stream/a/s", "a-data", "text/plain");
  await asRoot("PUT", "/v1/stream/__ds/subscriptions/sub-b", json({ type: "pull-wake", streams: ["b/s1"], wake_stream: "b/wake" }));
  await asRoot("PUT", "/v1/stream/__ds/subscriptions/sub-a", json({ type: "pull-wake", streams: ["a/s"], wake_stream: "a/wake" }));
  await asRoot("PUT", "/v1/table/tb", json({ columns: [{ name: "id", type: "int" }, { name: "label", type: "string" }], primaryKey: ["id"], buckets: 2 }));
  await asRoot("POST", "/v1/table/tb/write", json({ ops: [{ upsert: { id: 1, label: "b's row" } }] }));
  const daily = { columns: [{ name: "day", type: "int" }, { name: "id", type: "string" }, { name: "v", type: "int" }], primaryKey: ["day", "id"], bucketKey: ["id"], buckets: 1, partitionBy: "day" };
  await asRoot("PUT", "/v1/table/tp", json(daily));
  await asRoot("POST", "/v1/table/tp/partitions", json({ value: 5 }));
}, 180_000);

afterAll(async () => {
  await service?.stop();
});

describe("one parse: any spelling of a request is refused or decided and served as its canonical spelling", () => {
  test("over every route family, a tenant's token acts on nothing its canonical requests may not touch", { timeout: 600_000 }, async () => {
    const before = await otherTenantState();
    console.log(`[differential] seed ${SEED}, ${RUNS} runs (replay: DIFFERENTIAL_SEED=${SEED})`);
    const choices = fc.array(fc.constantFrom<Spelling>(0, 0, 1, 2, 3), { minLength: 1, maxLength: 16 });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...TEMPLATES), choices, fc.nat(), async (template, spelling, start) => {
        const raw = template.segments.map((segment, i) => spell(segment, spelling, start + i * 7));
        const spelled = `/${raw.join("/")}`;
        const plain = canonical(raw);
        const [answer, expected] = [await send(template, spelled), await send(template, plain)];
        const refusedAsAmbiguous = answer.status === 400 && spelled !== plain;
        expect(refusedAsAmbiguous || answer.status === expected.status, `${template.label}: ${template.method} ${spelled} answered ${answer.status} ${answer.text}; ${plain} answered ${expected.status}`).toBe(true);
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    expect(await otherTenantState()).toEqual(before);
  });
});

describe("the spellings that crossed tenants before one parse (issue 21), each refused and changing nothing", () => {
  const asTenant = (method: string, path: string, body?: unknown): Promise<Answer> =>
    call(service, path, { method, token: tenant.token, headers: { "content-type": "application/json" }, body: body === undefined ? null : json(body) });
  const asReader = (path: string, body: unknown): Promise<Answer> =>
    call(service, path, { method: "POST", token: tableReader.token, headers: { "content-type": "application/json" }, body: json(body) });

  test("another tenant's subscription through an encoded `__ds`, `subscriptions` or action word: 400; through an encoded id: answered as an unknown id", async () => {
    const before = await otherTenantState();
    for (const [method, path, body] of [
      ["GET", "/v1/stream/%5F%5Fds/subscriptions/sub-b"],
      ["GET", "/v1/stream/__ds/subscription%73/sub-b"],
      ["DELETE", "/v1/stream/%5f%5fds/subscriptions/sub-b"],
      ["POST", "/v1/stream/__ds/subscriptions/sub-b/cl%61im", { worker: "thief" }],
      ["POST", "/n/node-2/v1/stream/__ds/subscription%73/sub-b/streams", { streams: ["a/s"] }],
    ] as const) {
      const answer = await asTenant(method, path, body);
      expect([answer.status, answer.text], `${method} ${path}`).toEqual([400, expect.stringContaining("ambiguous_path")]);
    }
    const encodedId = await asTenant("GET", "/v1/stream/__ds/subscriptions/sub-%62");
    const unknownId = await asTenant("GET", "/v1/stream/__ds/subscriptions/sub-z");
    expect([encodedId.status, encodedId.text]).toEqual([unknownId.status, unknownId.text.replace("sub-z", "sub-b")]);
    expect(encodedId.text).not.toContain("b/s1");
    expect(await otherTenantState()).toEqual(before);
  });

  test("a read-only table token writing through `writ%65`, a bucket's `writ%65` or `partition%73`: 400, no row and no partition added", async () => {
    const before = await otherTenantState();
    const attempts = [
      await asReader("/v1/table/tb/writ%65", { ops: [{ upsert: { id: 99, label: "stolen" } }] }),
      await asReader("/v1/table/tb/bucket/0/writ%65", { ops: [{ upsert: { id: 98, label: "stolen" } }] }),
      await asReader("/v1/table/tp/partition%73", { value: 6 }),
      await asReader(`/v1/table/tp/p/${partitionSegment}/bucket/0/%77rite`, { ops: [{ upsert: { day: 5, id: "x", v: 1 } }] }),
    ];
    for (const answer of attempts) expect([answer.status, answer.text], answer.url).toEqual([400, expect.stringContaining("ambiguous_path")]);
    expect(await otherTenantState()).toEqual(before);
  });
});
