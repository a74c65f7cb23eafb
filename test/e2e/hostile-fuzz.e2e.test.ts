// The HTTP fuzzer: fast-check draws requests (methods, raw paths with odd encodings and
// reserved segments, protocol headers with random values, tokens valid and not, bodies) and sends them in
// concurrent batches to three nodes in token mode, next to a few known streams whose contents and HEAD
// (tail offset, content type, closed) are recorded. Properties, checked for every request and after every
// batch:
//   - no response is a 5xx (nor a dropped connection);
//   - a stream no request of the batch was accepted (2xx) for has exactly the contents and HEAD it had;
//     a stream that took accepted appends only grew, by accepted bodies, and closed only if one closed it.
// Only the writer token can change a known stream (read and append on fz/); nothing the fuzzer holds can
// create or delete there, so every other change would be a rejected request that did something.
//
//   npm run test:e2e -- test/e2e/hostile-fuzz.e2e.test.ts
//   HOSTILE_FUZZ_SEED=<n> replays a run (the seed is printed); HOSTILE_FUZZ_REQUESTS (default 10,000).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { Agent } from "undici";
import { afterAll, beforeAll, expect, test } from "vitest";
import { allLive, call, mint, nodeEpochs, OPS, resign, startHostileService, streamPath, TOKEN_SECRET, type Minted } from "./hostile-support.ts";
import type { Service } from "./service.ts";
import { parseStreamClosedHeader } from "../../src/core/protocol/closure.ts";

const SEED = Number(process.env.HOSTILE_FUZZ_SEED ?? Date.now() % 2_147_483_647);
const TOTAL_REQUESTS = Number(process.env.HOSTILE_FUZZ_REQUESTS ?? "10000");
const BATCH = 200;
const CONCURRENCY = 48;
const MAX_BODY_BYTES = 64 * 1024;
const REQUEST_TIMEOUT_MS = 15_000;
const FAILURE_DIR = fileURLToPath(new URL("../../.mink/", import.meta.url));

let service: Service;
let setup: Minted;
let epochsAtStart: Map<string, number>;
const agent = new Agent({ connections: CONCURRENCY * 2, keepAliveTimeout: 10_000 });

interface Known {
  name: string;
  contentType: string;
  json: boolean;
}
const KNOWN: Known[] = [
  { name: "fz/bytes", contentType: "application/octet-stream", json: false },
  { name: "fz/text", contentType: "text/plain", json: false },
  { name: "fz/json", contentType: "application/json", json: true },
  { name: "fz/closed", contentType: "text/plain", json: false },
  { name: "fz/seq", contentType: "text/plain", json: false },
  { name: "fz/prod", contentType: "text/plain", json: false },
];

/** What a known stream looks like from outside. */
interface Snapshot {
  body: Buffer;
  next: string | null;
  contentType: string | null;
  closed: boolean;
}

/** Authorization values the fuzzer may send: labelled, so a failure says which. */
const authorizations = new Map<string, string | null>();

beforeAll(async () => {
  service = await startHostileService({ MAX_BODY_BYTES: String(MAX_BODY_BYTES) }, { longPollTimeoutMs: 300 });
  setup = await mint(service, [""], OPS);
  await allLive(service, setup.token);
  epochsAtStart = await nodeEpochs(service);
  const [reader, writer, scratch, stranger] = await Promise.all([
    mint(service, ["fz/"], ["read"]),
    mint(service, ["fz/"], ["read", "append"]),
    mint(service, ["fz-scratch/"], OPS),
    mint(service, ["nope/"], OPS),
  ]);
  const revoked = await mint(service, ["fz/"], ["read", "append"]);
  await call(service, `/admin/tokens/${revoked.id}`, { method: "DELETE", token: service.adminToken });
  const nowS = Math.floor(Date.now() / 1000);
  for (const [label, value] of [
    ["none", null],
    ["reader", `Bearer ${reader.token}`],
    ["writer", `Bearer ${writer.token}`],
    ["writer-lowercase-scheme", `bearer ${writer.token}`],
    ["writer-no-scheme", writer.token],
    ["writer-twice", `Bearer ${writer.token}, Bearer ${writer.token}`],
    ["scratch", `Bearer ${scratch.token}`],
    ["stranger", `Bearer ${stranger.token}`],
    ["revoked-writer", `Bearer ${revoked.token}`],
    ["expired-root", `Bearer ${resign(setup.token, TOKEN_SECRET, (p) => ({ ...p, exp: nowS - 10 }))}`],
    ["forged-root", `Bearer ${resign(setup.token, "not-the-secret-but-long-enough-0123456789")}`],
    ["admin-token", `Bearer ${service.adminToken}`],
    ["garbage", "Bearer x.y.z"],
    ["empty-bearer", "Bearer "],
  ] as const) {
    authorizations.set(label, value);
  }
  for (const known of KNOWN) {
    const headers: Record<string, string> = { "content-type": known.contentType };
    if (known.name === "fz/closed") headers["stream-closed"] = "true";
    const body = known.json ? '[{"a":1},"two",3]' : `${known.name} initial`;
    const created = await call(service, streamPath(known.name), { method: "PUT", token: setup.token, headers, body });
    expect(created.status, created.text).toBe(201);
  }
  const seq = await call(service, streamPath("fz/seq"), { method: "POST", token: setup.token, headers: { "content-type": "text/plain", "stream-seq": "0005" }, body: "s5" });
  expect(seq.status).toBe(204);
  const prod = await call(service, streamPath("fz/prod"), {
    method: "POST",
    token: setup.token,
    headers: { "content-type": "text/plain", "producer-id": "p", "producer-epoch": "3", "producer-seq": "0" },
    body: "p3.0",
  });
  expect(prod.status).toBe(200);
}, 180_000);

afterAll(async () => {
  if (service !== undefined && epochsAtStart !== undefined) expect(await nodeEpochs(service), "no node reset during the fuzz run").toEqual(epochsAtStart);
  await agent.close();
  await service?.stop();
});

// ---- the arbitraries ----

const printable = fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code));
const text = (maxLength: number): fc.Arbitrary<string> => fc.string({ unit: printable, maxLength });
const segment = fc.string({ unit: fc.constantFrom(..."abcxyz019-_.~%"), minLength: 1, maxLength: 8 });

/** Percent-encodes some characters of a name (any character may be written encoded). */
const oddlyEncoded = (name: string): fc.Arbitrary<string> =>
  fc.array(fc.boolean(), { minLength: name.length, maxLength: name.length }).map((flags) =>
    [...name].map((ch, i) => (flags[i] === true ? `%${ch.charCodeAt(0).toString(16).padStart(2, "0")}` : ch)).join(""),
  );

const knownName = fc.constantFrom(...KNOWN.map((known) => known.name));
const namePath = fc.oneof(
  { weight: 10, arbitrary: knownName },
  { weight: 3, arbitrary: knownName.chain(oddlyEncoded) },
  { weight: 2, arbitrary: segment.map((s) => `fz-scratch/${s}`) },
  { weight: 1, arbitrary: segment.map((s) => `fz/new-${s}`) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "fz/x/../bytes",
      "fz/%2e%2e/fz/text",
      "fz-scratch/../fz/bytes",
      "fz-scratch/%2e%2e/fz/json",
      "fz/bytes/",
      "fz//bytes",
      "fz/bytes%00",
      "fz/bytes%2F",
      "fz%2Fbytes",
      "%",
      "%zz",
      "__ds",
      "__ds/subscriptions/x",
      "__ds/subscriptions/x/claim",
      "__ds/jwks.json",
      "",
      ".",
      "..",
      "fz/%C3%A9t%C3%A9",
      "fz/\u00e9",
      `fz/${"n".repeat(1_100)}`,
    ),
  },
  { weight: 1, arbitrary: fc.array(segment, { minLength: 1, maxLength: 5 }).map((parts) => parts.join("/")) },
);
const base = fc.constantFrom("", "", "/n/node-0", "/n/node-1", "/n/node-2", "/n/node-9", "/n/%2e%2e", "/n/node-1/..");
const query = fc.oneof(
  fc.constantFrom(
    "",
    "?offset=-1",
    "?offset=now",
    "?offset=-1&live=long-poll",
    "?offset=now&live=long-poll",
    "?offset=now&live=sse",
    "?offset=-1&live=sse",
    "?live=sse",
    "?offset=abc",
    "?offset=-1&offset=now",
    "?offset=-1&live=bogus",
    "?offset=0000000000000000_0000000000000000",
    "?offset=9999999999999999_9999999999999999",
    "?offset=now&live=long-poll&cursor=zzz",
    "?token=x",
  ),
  text(40).map((q) => `?offset=${encodeURIComponent(q)}`),
);
const method = fc.constantFrom("GET", "GET", "HEAD", "POST", "POST", "POST", "PUT", "PUT", "DELETE", "OPTIONS", "PATCH", "PROPFIND");
const number = fc.oneof(
  fc.constantFrom("0", "1", "3", "4", "5", "-1", "9007199254740991", "9007199254740992", "1e3", "0x1", "", " 1", "01", "99999999999999999999"),
  fc.nat().map(String),
);
const contentType = fc.oneof(
  fc.constantFrom("text/plain", "application/json", "application/octet-stream", "text/html", "text/plain; charset=utf-8", "application/json; charset=utf-8", "", "garbage", "*/*"),
  text(30),
  fc.constant(`text/plain; x=${"a".repeat(2_000)}`),
);
const headerArbs: Record<string, fc.Arbitrary<string>> = {
  "content-type": contentType,
  "stream-seq": fc.oneof(fc.constantFrom("0001", "0005", "0006", "zzzz", ""), text(20), fc.constant("9".repeat(1_100))),
  "producer-id": fc.oneof(fc.constantFrom("p", "q", ""), text(12)),
  "producer-epoch": number,
  "producer-seq": number,
  "stream-closed": fc.constantFrom("true", "false", "TRUE", "1", "", "yes"),
  "stream-ttl": fc.oneof(number, text(10)),
  "stream-expires-at": fc.oneof(fc.constantFrom("2030-01-01T00:00:00Z", "2000-01-01T00:00:00Z", "not a date"), text(10)),
  "stream-forked-from": fc.oneof(knownName.map((n) => `/v1/stream/${n}`), fc.constantFrom("/v1/stream/fz-scratch/a", "http://evil/v1/stream/fz/bytes", "/v1/stream/../admin"), text(30)),
  "stream-fork-offset": fc.oneof(fc.constantFrom("-1", "now", "0000000000000000_0000000000000000"), text(10)),
  "if-none-match": fc.oneof(fc.constant("*"), text(20)),
};
const headers = fc
  .record(Object.fromEntries(Object.entries(headerArbs).map(([key, arb]) => [key, fc.option(arb, { freq: 3, nil: undefined })])))
  .map((record) => Object.fromEntries(Object.entries(record).filter((entry): entry is [string, string] => entry[1] !== undefined)));
const body = fc.oneof(
  { weight: 4, arbitrary: fc.constant<string | null>(null) },
  { weight: 1, arbitrary: fc.constant<string | null>("") },
  { weight: 5, arbitrary: text(120) },
  { weight: 3, arbitrary: fc.json({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }).map((n) => "x".repeat(n * MAX_BODY_BYTES / 2 + 7)) },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 5_000 }).map((n) => "[".repeat(n) + "]".repeat(n)) },
);

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  auth: string;
  body: string | null;
}
const request: fc.Arbitrary<FuzzRequest> = fc
  .record({ method, base, name: namePath, query, headers, auth: fc.constantFrom(...["none", "reader", "writer", "writer", "writer", "writer-lowercase-scheme", "writer-no-scheme", "writer-twice", "scratch", "stranger", "revoked-writer", "expired-root", "forged-root", "admin-token", "garbage", "empty-bearer"]), body })
  .map(({ method, base, name, query, headers, auth, body }) => ({
    method,
    path: `${base}/v1/stream/${name}${query}`,
    headers,
    auth,
    body: method === "GET" || method === "HEAD" ? null : body,
  }));

// ---- sending and checking ----

interface Outcome {
  request: FuzzRequest;
  status: number;
  error: string | null;
  /** The known stream the server sees this request as aimed at (after URL normalization), if any. */
  target: string | null;
}

/** The stream name the server will see: the path normalized as a URL parser does, the node prefix dropped, decoded. */
function targetOf(path: string): string | null {
  let pathname: string;
  try {
    pathname = new URL(path, "http://x").pathname;
  } catch {
    return null;
  }
  const rest = pathname.replace(/^\/n\/[^/]+(?=\/)/, "");
  if (!rest.startsWith("/v1/stream/")) return null;
  try {
    const name = decodeURIComponent(rest.slice("/v1/stream/".length));
    return KNOWN.some((known) => known.name === name) ? name : null;
  } catch {
    return null;
  }
}

async function send(fuzz: FuzzRequest): Promise<Outcome> {
  const auth = authorizations.get(fuzz.auth) ?? null;
  const headers: Record<string, string> = { ...fuzz.headers, ...(auth === null ? {} : { authorization: auth }) };
  const target = targetOf(fuzz.path);
  try {
    const response = await agent.request({
      origin: service.baseUrl,
      path: fuzz.path,
      method: fuzz.method,
      headers,
      body: fuzz.body,
      // One connection per request: a reset then belongs to this request, not to an earlier one whose
      // unread body made the server close the connection this one was queued on.
      reset: true,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const isSse = (response.headers["content-type"] ?? "").toString().includes("text/event-stream");
    if (isSse) {
      response.body.on("error", () => undefined); // destroying an open SSE body aborts it: expected
      response.body.destroy();
    }
    else await response.body.dump({ limit: 8 * 1024 * 1024 });
    return { request: fuzz, status: response.statusCode, error: null, target };
  } catch (error) {
    return { request: fuzz, status: 0, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error), target };
  }
}

async function snapshot(known: Known): Promise<Snapshot> {
  const head = await call(service, streamPath(known.name), { method: "HEAD", token: setup.token });
  expect(head.status, `HEAD ${known.name}`).toBe(200);
  const chunks: Buffer[] = [];
  let offset = "-1";
  for (let page = 0; ; page++) {
    const response = await agent.request({ origin: service.baseUrl, path: streamPath(`${known.name}?offset=${offset}`, undefined), method: "GET", headers: { authorization: `Bearer ${setup.token}` } });
    if (response.statusCode === 307) {
      const location = new URL(String(response.headers["location"]));
      await response.body.dump();
      const followed = await agent.request({ origin: service.baseUrl, path: `${location.pathname}${location.search}`, method: "GET", headers: { authorization: `Bearer ${setup.token}` } });
      chunks.push(Buffer.from(await followed.body.arrayBuffer()));
      expect(followed.statusCode).toBe(200);
      offset = String(followed.headers["stream-next-offset"]);
      if (followed.headers["stream-up-to-date"] === "true") break;
    } else {
      expect(response.statusCode).toBe(200);
      chunks.push(Buffer.from(await response.body.arrayBuffer()));
      offset = String(response.headers["stream-next-offset"]);
      if (response.headers["stream-up-to-date"] === "true") break;
    }
    expect(page).toBeLessThan(1_000);
  }
  // A JSON stream reads as one array per page: keep the messages, not the framing.
  const body = known.json ? Buffer.from(JSON.stringify(chunks.flatMap((chunk) => JSON.parse(chunk.toString("utf8")) as unknown[]))) : Buffer.concat(chunks);
  return { body, next: head.headers.get("stream-next-offset"), contentType: head.headers.get("content-type"), closed: head.headers.get("stream-closed") === "true" };
}

const describeRequest = (outcome: Outcome): string =>
  `${outcome.request.method} ${outcome.request.path.slice(0, 200)} auth=${outcome.request.auth} headers=${JSON.stringify(outcome.request.headers).slice(0, 300)} body=${JSON.stringify(outcome.request.body?.slice(0, 80) ?? null)}(${outcome.request.body?.length ?? 0} chars) -> ${outcome.status} ${outcome.error ?? ""}`;

/** Whether `tail` is a concatenation of some of `bodies` (each used at most once), in any order. */
function composedOf(tail: Buffer, bodies: Buffer[]): boolean {
  if (tail.byteLength === 0) return true;
  return bodies.some((candidate, i) => candidate.byteLength > 0 && tail.subarray(0, candidate.byteLength).equals(candidate) && composedOf(tail.subarray(candidate.byteLength), bodies.filter((_, j) => j !== i)));
}

/** The batch's changes to `known` are explained by its accepted requests; a message when they are not. */
function unexplained(known: Known, before: Snapshot, after: Snapshot, outcomes: readonly Outcome[]): string | null {
  const accepted = outcomes.filter((o) => o.target === known.name && o.status >= 200 && o.status < 300 && o.request.method !== "GET" && o.request.method !== "HEAD" && o.request.method !== "OPTIONS");
  if (accepted.length === 0) {
    const same = before.body.equals(after.body) && before.next === after.next && before.contentType === after.contentType && before.closed === after.closed;
    return same ? null : `${known.name} changed though no request for it was accepted: ${JSON.stringify({ before: { ...before, body: before.body.byteLength }, after: { ...after, body: after.body.byteLength } })}`;
  }
  const what = accepted.map(describeRequest).join("\n  ");
  if (after.contentType !== before.contentType) return `${known.name} content type changed (${before.contentType} -> ${after.contentType}) by:\n  ${what}`;
  // A close is what the protocol reads as one (`Stream-Closed: TRUE` too), not only the lowercase spelling.
  if (after.closed !== before.closed && !accepted.some((o) => parseStreamClosedHeader(o.request.headers["stream-closed"] ?? null))) return `${known.name} closed by no close:\n  ${what}`;
  if (before.closed && after.body.byteLength !== before.body.byteLength) return `${known.name} grew after it was closed:\n  ${what}`;
  if (known.json) {
    const old = JSON.parse(before.body.toString("utf8")) as unknown[];
    const now = JSON.parse(after.body.toString("utf8")) as unknown[];
    return JSON.stringify(now.slice(0, old.length)) === JSON.stringify(old) ? null : `${known.name} lost or changed messages:\n  ${what}`;
  }
  if (!after.body.subarray(0, before.body.byteLength).equals(before.body)) return `${known.name} was rewritten, not appended to:\n  ${what}`;
  const bodies = accepted.filter((o) => o.request.method === "POST").map((o) => Buffer.from(o.request.body ?? ""));
  return composedOf(after.body.subarray(before.body.byteLength), bodies) ? null : `${known.name} grew by bytes no accepted append sent:\n  ${what}`;
}

/** The failing requests in full, for a replay (the error message cuts them short). */
function keepFailure(outcomes: readonly Outcome[]): void {
  mkdirSync(FAILURE_DIR, { recursive: true });
  const file = join(FAILURE_DIR, `fuzz-failure-${SEED}.json`);
  writeFileSync(file, JSON.stringify(outcomes, null, 1));
  console.log(`[fuzz] failing requests written to ${file}`);
}

async function runBatch(batch: readonly FuzzRequest[], before: Map<string, Snapshot>, tally: Map<number, number>): Promise<Map<string, Snapshot>> {
  const outcomes = new Array<Outcome>(batch.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < batch.length) {
        const index = next++;
        outcomes[index] = await send(batch[index]!);
      }
    }),
  );
  for (const outcome of outcomes) tally.set(outcome.status, (tally.get(outcome.status) ?? 0) + 1);
  const failures = outcomes.filter((outcome) => outcome.status >= 500 || outcome.status === 0);
  if (failures.length > 0) {
    keepFailure(failures);
    throw new Error(`${failures.length} requests got a 5xx or no answer:\n${failures.slice(0, 10).map(describeRequest).join("\n")}`);
  }
  const after = new Map<string, Snapshot>();
  const problems: string[] = [];
  for (const known of KNOWN) {
    const now = await snapshot(known);
    after.set(known.name, now);
    const problem = unexplained(known, before.get(known.name)!, now, outcomes);
    if (problem !== null) problems.push(problem);
  }
  if (problems.length > 0) {
    keepFailure(outcomes.filter((o) => o.target !== null));
    throw new Error(problems.join("\n"));
  }
  return after;
}

test(`fuzzer: ${TOTAL_REQUESTS} random requests (seed printed) get no 5xx, and no rejected request changes a known stream's contents or HEAD`, async () => {
  console.log(`[fuzz] seed ${SEED} (replay: HOSTILE_FUZZ_SEED=${SEED}), ${TOTAL_REQUESTS} requests in batches of ${BATCH}, ${CONCURRENCY} at a time`);
  let state = new Map<string, Snapshot>();
  for (const known of KNOWN) state.set(known.name, await snapshot(known));
  // The checker can fail: a change no accepted request explains is caught, an accepted append is not.
  const bytes = state.get("fz/bytes")!;
  const grown = { ...bytes, body: Buffer.concat([bytes.body, Buffer.from("zz")]) };
  expect(unexplained(KNOWN[0]!, bytes, grown, [])).not.toBeNull();
  const append: Outcome = { request: { method: "POST", path: "/v1/stream/fz/bytes", headers: {}, auth: "writer", body: "zz" }, status: 204, error: null, target: "fz/bytes" };
  expect(unexplained(KNOWN[0]!, bytes, grown, [append])).toBeNull();
  expect(unexplained(KNOWN[0]!, bytes, grown, [{ ...append, status: 409 }])).not.toBeNull();
  const tally = new Map<number, number>();
  const started = Date.now();
  let sent = 0;
  // fc.check, not fc.assert: a failing batch is 200 requests, too long for a report; the property's own
  // error says what failed (and the requests are kept in .mink/), the seed replays it.
  const details = await fc.check(
    fc.asyncProperty(fc.array(request, { minLength: BATCH, maxLength: BATCH }), async (batch) => {
      state = await runBatch(batch, state, tally);
      sent += batch.length;
    }),
    { seed: SEED, numRuns: Math.ceil(TOTAL_REQUESTS / BATCH), endOnFailure: true },
  );
  if (details.failed) {
    const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    throw new Error(`fuzzer failed after ${sent} requests (seed ${SEED}, replay with HOSTILE_FUZZ_SEED=${SEED}):\n${cause.slice(0, 4_000)}`);
  }
  const elapsedMs = Date.now() - started;
  console.log(`[fuzz] ${sent} requests in ${elapsedMs} ms (${Math.round((sent * 1000) / elapsedMs)}/s); statuses ${JSON.stringify([...tally].sort((a, b) => a[0] - b[0]))}`);
  expect(sent).toBeGreaterThanOrEqual(TOTAL_REQUESTS);
  // The run reached the streams: some requests were accepted and many refused (a fuzzer that only ever
  // got 401s would prove little).
  const count = (predicate: (status: number) => boolean): number => [...tally].filter(([status]) => predicate(status)).reduce((sum, [, n]) => sum + n, 0);
  expect(count((s) => s >= 200 && s < 300)).toBeGreaterThan(TOTAL_REQUESTS / 50);
  expect(count((s) => s === 400)).toBeGreaterThan(TOTAL_REQUESTS / 50);
  expect(count((s) => s === 401)).toBeGreaterThan(TOTAL_REQUESTS / 50);
  expect(count((s) => s === 403)).toBeGreaterThan(TOTAL_REQUESTS / 100);
}, 600_000);
