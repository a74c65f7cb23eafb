// Hostile input, protocol abuse (docs/limits.md, docs/protocol-rules.md): three nodes in token mode. Producer
// hijacks, huge headers, deep JSON, messages larger than a read page, bad offsets, path traversal, odd
// methods, oversized bodies, active content. The rule throughout: a hostile request gets a 4xx (never a
// 5xx, never a reset node), and leaves the streams it targets as they were. Each test names its rule.
//
//   npm run test:e2e -- test/e2e/hostile-protocol.e2e.test.ts
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  allLive,
  call,
  expectCleanError,
  expectNoInternals,
  expectRefusal,
  mint,
  nodeEpochs,
  OPS,
  ownerOf,
  rawCall,
  readAll,
  startHostileService,
  streamPath,
  type Answer,
  type Minted,
} from "./hostile-support.ts";
import type { Service } from "./service.ts";

const MAX_DS_BODY_BYTES = 64 * 1024;
const MAX_BODY_BYTES = 8 * 1024 * 1024; // the default: messages larger than a 4 MiB read page fit
const MAX_HEADER_VALUE_BYTES = 1024; // the default

let service: Service;
let full: Minted;
let reader: Minted;
let epochsAtStart: Map<string, number>;
const run = Date.now().toString(36);

beforeAll(async () => {
  // The e2e service allows loopback webhooks (for the conformance receiver): this deployment does not.
  service = await startHostileService({ MAX_DS_BODY_BYTES: String(MAX_DS_BODY_BYTES), WEBHOOK_ALLOW_LOOPBACK: "0" });
  [full, reader] = await Promise.all([mint(service, ["pr/"], OPS), mint(service, ["pr/"], ["read"])]);
  await allLive(service, full.token, "pr/");
  epochsAtStart = await nodeEpochs(service);
}, 180_000);

afterAll(async () => {
  // No test reset a node: every epoch is the one it had before the first hostile request.
  if (service !== undefined && epochsAtStart !== undefined) expect(await nodeEpochs(service)).toEqual(epochsAtStart);
  await service?.stop();
});

async function create(name: string, contentType = "text/plain", body?: string): Promise<void> {
  const answer = await call(service, streamPath(name), { method: "PUT", token: full.token, headers: { "content-type": contentType }, body: body ?? null });
  expect(answer.status, `create ${name}: ${answer.text}`).toBe(201);
}

const append = (name: string, body: string | Uint8Array, headers: Record<string, string> = {}, token = full.token): Promise<Answer> =>
  call(service, streamPath(name), { method: "POST", token, headers: { "content-type": "text/plain", ...headers }, body });

async function headOf(name: string): Promise<{ status: number; next: string | null; type: string | null; closed: string | null }> {
  const answer = await call(service, streamPath(name), { method: "HEAD", token: full.token });
  return { status: answer.status, next: answer.headers.get("stream-next-offset"), type: answer.headers.get("content-type"), closed: answer.headers.get("stream-closed") };
}

/** A 4xx with a clean error body (a HEAD has none). */
function expect4xx(answer: Answer, what: string): void {
  expect(answer.status, `${what}: ${answer.status} ${answer.text.slice(0, 300)}`).toBeGreaterThanOrEqual(400);
  expect(answer.status, `${what}: ${answer.status} ${answer.text.slice(0, 300)}`).toBeLessThan(500);
  expectNoInternals(answer);
}

async function unchanged(name: string, content: string, head: Awaited<ReturnType<typeof headOf>>): Promise<void> {
  expect((await readAll(service, name, full.token)).text, `${name} content`).toBe(content);
  expect(await headOf(name), `${name} HEAD`).toEqual(head);
}

describe("producer hijack: nobody without the append op can fence or poison another's producer", () => {
  const name = `pr/hijack-${run}`;
  const producer = { "producer-id": "owner", "producer-epoch": "0" };

  beforeAll(async () => {
    await create(name);
    expect((await append(name, "a", { ...producer, "producer-seq": "0" })).status).toBe(200);
  });

  test("a read token sending Producer-Epoch 2^53-1 for the owner's producer is 403, and the owner appends on at epoch 0", async () => {
    expectRefusal(await append(name, "evil", { "producer-id": "owner", "producer-epoch": String(Number.MAX_SAFE_INTEGER), "producer-seq": "0" }, reader.token), 403, "forbidden");
    const next = await append(name, "b", { ...producer, "producer-seq": "1" });
    expect(next.status, next.text).toBe(200);
  });

  test("a token for another prefix sending Producer-Epoch 2^53-1 is 403, and the owner appends on", async () => {
    const stranger = await mint(service, ["pr-other/"], OPS);
    expectRefusal(await append(name, "evil", { "producer-id": "owner", "producer-epoch": String(Number.MAX_SAFE_INTEGER), "producer-seq": "0" }, stranger.token), 403, "forbidden");
    expect((await append(name, "c", { ...producer, "producer-seq": "2" })).status).toBe(200);
  });

  test.each(["9007199254740992", "1e308", "-1", "0x10", "1.5", "99999999999999999999999999"])(
    "Producer-Epoch %s (not a safe non-negative integer) is 400 and fences nobody",
    async (epoch) => {
      expectRefusal(await append(name, "evil", { "producer-id": "owner", "producer-epoch": epoch, "producer-seq": "0" }), 400, "invalid");
    },
  );

  test("after every hijack attempt the owner's producer is still at epoch 0 and the stream holds only its appends", async () => {
    const next = await append(name, "d", { ...producer, "producer-seq": "3" });
    expect(next.status, next.text).toBe(200);
    expect((await readAll(service, name, full.token)).text).toBe("abcd");
  });

  test("a read token cannot poison Stream-Seq (403); the writer's Stream-Seq order goes on", async () => {
    const seqStream = `pr/seq-${run}`;
    await create(seqStream);
    expect((await append(seqStream, "1", { "stream-seq": "0001" })).status).toBe(204);
    expectRefusal(await append(seqStream, "evil", { "stream-seq": "\u007ezzzzzzzz" }, reader.token), 403, "forbidden");
    expect((await append(seqStream, "2", { "stream-seq": "0002" })).status).toBe(204);
  });

  test(`a Stream-Seq longer than ${MAX_HEADER_VALUE_BYTES} bytes is 400 and poisons nothing`, async () => {
    const seqStream = `pr/seqlong-${run}`;
    await create(seqStream);
    expect((await append(seqStream, "1", { "stream-seq": "0001" })).status).toBe(204);
    expectRefusal(await append(seqStream, "evil", { "stream-seq": "z".repeat(MAX_HEADER_VALUE_BYTES + 1) }), 400, "invalid");
    expect((await append(seqStream, "2", { "stream-seq": "0002" })).status).toBe(204);
    expect((await readAll(service, seqStream, full.token)).text).toBe("12");
  });

  test(`a Producer-Id longer than ${MAX_HEADER_VALUE_BYTES} bytes is 400`, async () => {
    expectRefusal(await append(name, "evil", { "producer-id": "p".repeat(MAX_HEADER_VALUE_BYTES + 1), "producer-epoch": "0", "producer-seq": "0" }), 400, "invalid");
  });
});

describe("huge headers and deep JSON: a 4xx or an acknowledgement, never a 5xx or a reset node", () => {
  const big = "a".repeat(17 * 1024);

  test("a 17 KB Content-Type on create is a 4xx, not a 5xx, and creates nothing", async () => {
    const name = `pr/ct-${run}`;
    expect4xx(await call(service, streamPath(name), { method: "PUT", token: full.token, headers: { "content-type": `text/${big}` } }), "17 KB Content-Type on PUT");
    expect((await headOf(name)).status).toBe(404);
  });

  test("a 17 KB Content-Type on append is a 4xx and appends nothing", async () => {
    const name = `pr/ct-append-${run}`;
    await create(name);
    const head = await headOf(name);
    expect4xx(await append(name, "x", { "content-type": `text/plain; x=${big}` }), "17 KB Content-Type on POST");
    await unchanged(name, "", head);
  });

  test("a 17 KB Stream-TTL, Stream-Expires-At or Stream-Forked-From on create is a 4xx", async () => {
    for (const header of ["stream-ttl", "stream-expires-at", "stream-forked-from"]) {
      expect4xx(
        await call(service, streamPath(`pr/h-${header}-${run}`), { method: "PUT", token: full.token, headers: { "content-type": "text/plain", [header]: big } }),
        `17 KB ${header}`,
      );
    }
  });

  test("a 17 KB unknown header is not a 5xx", async () => {
    const answer = await call(service, streamPath(`pr/x-${run}?offset=-1`), { token: full.token, headers: { "x-junk": big } });
    expect(answer.status).toBeLessThan(500);
  });

  test("100,000 nested arrays appended to a JSON stream: a 4xx or accepted, never a 5xx; the stream still reads", async () => {
    const name = `pr/deep-${run}`;
    await create(name, "application/json");
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    const answer = await append(name, deep, { "content-type": "application/json" });
    expect(answer.status, answer.text.slice(0, 300)).toBeLessThan(500);
    if (answer.status >= 400) expectCleanError(answer);
    const read = await call(service, streamPath(`${name}?offset=-1`), { token: full.token });
    expect(read.status).toBe(200);
  });

  test("100,000 nested objects as a JSON stream's first data on create: a 4xx or accepted, never a 5xx", async () => {
    const name = `pr/deep-create-${run}`;
    const deep = '{"a":'.repeat(100_000) + "1" + "}".repeat(100_000);
    const answer = await call(service, streamPath(name), { method: "PUT", token: full.token, headers: { "content-type": "application/json" }, body: deep });
    expect(answer.status, answer.text.slice(0, 300)).toBeLessThan(500);
  });

  test("a JSON append of 200,000 tiny messages (one flat array) is accepted or a 4xx, never a 5xx", async () => {
    const name = `pr/wide-${run}`;
    await create(name, "application/json");
    const answer = await append(name, `[${Array.from({ length: 200_000 }, () => "0").join(",")}]`, { "content-type": "application/json" });
    expect(answer.status, answer.text.slice(0, 300)).toBeLessThan(500);
  });
});

describe("deep JSON in a table's json column: 400 naming the limit, never a retryable 503", () => {
  test("R7: a json value 1,000 or 1,000,000 levels deep is 400 invalid naming MAX_JSON_VALUE_DEPTH, and the table takes rows after it", async () => {
    const tables = await mint(service, ["__ds/table/"], OPS);
    const table = `deep${run}`;
    const definition = { columns: [{ name: "id", type: "string" }, { name: "doc", type: "json" }], primaryKey: ["id"], buckets: 1 };
    const write = (doc: string): Promise<Answer> =>
      call(service, `/v1/table/${table}/write`, { method: "POST", token: tables.token, headers: { "content-type": "application/json" }, body: `{"ops":[{"upsert":{"id":"a","doc":${doc}}}]}` });
    const created = await call(service, `/v1/table/${table}`, { method: "PUT", token: tables.token, headers: { "content-type": "application/json" }, body: JSON.stringify(definition) });
    expect(created.status, created.text).toBe(201);
    for (const depth of [1_000, 1_000_000]) {
      const deep = await write("[".repeat(depth) + "]".repeat(depth));
      expectRefusal(deep, 400, "invalid");
      expect(deep.text, `${depth} levels`).toContain("MAX_JSON_VALUE_DEPTH");
    }
    const shallow = await write('{"a":[1,2]}');
    expect(shallow.status, shallow.text).toBe(200);
  });
});

describe("large messages, then a read from the start: one bounded page per response", () => {
  test("four JSON messages of 6 MiB (each larger than a 4 MiB read page): every response holds one message, the node does not reset", async () => {
    const name = `pr/large-${run}`;
    await create(name, "application/json");
    const owner = await ownerOf(service, name);
    const epoch = (await nodeEpochs(service)).get(owner);
    const size = 6 * 1024 * 1024;
    for (let i = 0; i < 4; i++) {
      const answer = await append(name, JSON.stringify(String(i).repeat(size)), { "content-type": "application/json" });
      expect(answer.status, answer.text).toBe(204);
    }
    let offset = "-1";
    const pages: number[] = [];
    for (;;) {
      const answer = await call(service, streamPath(`${name}?offset=${offset}`), { token: full.token });
      expect(answer.status).toBe(200);
      expect(Buffer.byteLength(answer.text), "one response is at most one message plus framing").toBeLessThanOrEqual(size + 1024);
      const messages = JSON.parse(answer.text) as string[];
      pages.push(messages.length);
      offset = answer.headers.get("stream-next-offset")!;
      if (answer.headers.get("stream-up-to-date") === "true") break;
      expect(pages.length).toBeLessThan(10);
    }
    expect(pages).toEqual([1, 1, 1, 1]);
    expect((await nodeEpochs(service)).get(owner), `${owner} did not reset`).toBe(epoch);
  });

  test(`a body over MAX_BODY_BYTES is 413 and appends nothing (declared length and chunked)`, async () => {
    const name = `pr/over-${run}`;
    await create(name);
    const head = await headOf(name);
    const tooBig = new Uint8Array(MAX_BODY_BYTES + 1);
    expectRefusal(await append(name, tooBig, { "content-type": "text/plain" }), 413, "too_large");
    // No Content-Length: the body arrives as a stream and is refused once it passes the limit.
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 9; i++) controller.enqueue(new Uint8Array(1024 * 1024));
        controller.close();
      },
    });
    const answer = await fetch(`${service.baseUrl}${streamPath(`${name}`, await ownerOf(service, name))}`, {
      method: "POST",
      headers: { authorization: `Bearer ${full.token}`, "content-type": "text/plain" },
      body: chunked,
      duplex: "half",
    });
    expect(answer.status).toBe(413);
    await answer.arrayBuffer();
    await unchanged(name, "", head);
  });
});

describe("bad offsets, names, paths and methods: 4xx, and no way out of the token's prefix", () => {
  const name = `pr/paths-${run}`;
  beforeAll(async () => {
    await create(name, "text/plain", "data");
  });

  test.each(["abc", "-2", "1_", "9".repeat(400), "now_now", "%00", "-1%00", "0000000000000000_0000000000000000x"])(
    "a malformed offset (%s) is 400",
    async (offset) => {
      expectRefusal(await call(service, streamPath(`${name}?offset=${offset}`), { token: full.token }), 400, "invalid");
    },
  );

  test("two offset parameters are 400", async () => {
    expectRefusal(await call(service, streamPath(`${name}?offset=-1&offset=now`), { token: full.token }), 400, "invalid");
  });

  test.each([
    ["a raw .. segment", "/v1/stream/pr/../victim-a", "victim-a"],
    ["an encoded %2e%2e segment", "/v1/stream/pr/%2e%2e/victim-b", "victim-b"],
    ["an encoded slash around ..", "/v1/stream/pr%2f..%2fvictim-c", "victim-c"],
    ["a mixed-case %2E%2e%2F", "/v1/stream/pr/%2E%2e%2Fvictim-d", "victim-d"],
    ["a node address with %2e%2e", "/n/node-1/v1/stream/pr/%2e%2e/victim-e", "victim-e"],
    ["a node address escaped with ..", "/n/node-1/../../v1/stream/victim-f", "victim-f"],
    ["a NUL byte", "/v1/stream/pr/vic%00tim", "pr/vic\u0000tim"],
    ["a NUL byte segment and .. out of the prefix", "/v1/stream/pr/%00/../../victim-g", "victim-g"],
  ])("path traversal (%s) is refused and creates nothing outside pr/", async (_what, path, victim) => {
    const headers = { authorization: `Bearer ${full.token}`, "content-type": "text/plain" };
    let answer = await rawCall(service, "PUT", path, headers);
    // A router may redirect before the owner refuses: follow its 307 with the same token.
    if (answer.status === 307) {
      const location = new URL(answer.headers.get("location")!);
      answer = await rawCall(service, "PUT", `${location.pathname}${location.search}`, headers);
    }
    expect4xx(answer, path);
    const root = await mint(service, [""], ["read"]);
    for (const name of [victim, `pr/${victim}`]) {
      expect([400, 404], name).toContain((await call(service, streamPath(encodeURIComponent(name).replaceAll("%2F", "/")), { method: "HEAD", token: root.token })).status);
    }
  });

  test("a name of 1,025 characters is 400; a 64 KB path is a 4xx", async () => {
    expectRefusal(await call(service, streamPath(`pr/${"n".repeat(1_022)}`), { method: "PUT", token: full.token, headers: { "content-type": "text/plain" } }), 400, "invalid");
    const huge = await rawCall(service, "GET", streamPath(`pr/${"n/".repeat(32 * 1024)}x`), { authorization: `Bearer ${full.token}` });
    expect4xx(huge, "64 KB path");
  });

  test("the reserved __ds segment is never a stream: PUT /v1/stream/__ds/x is a 4xx and nothing is created", async () => {
    const answer = await call(service, "/v1/stream/__ds/x", { method: "PUT", token: (await mint(service, [""], OPS)).token, headers: { "content-type": "text/plain" } });
    expect4xx(answer, "PUT __ds/x");
  });

  // (An unknown method token such as FOO never reaches the Worker: the runtime answers 501 itself.)
  test.each(["PATCH", "PROPFIND", "MKCOL"])("method %s is 405 with Allow, and changes nothing", async (method) => {
    const answer = await call(service, streamPath(name), { method, token: full.token, headers: { "content-type": "text/plain" }, body: "x" });
    expect(answer.status, answer.text).toBe(405);
    expect(answer.headers.get("allow") ?? "").toMatch(/GET/);
    expect((await readAll(service, name, full.token)).text).toBe("data");
  });

  // (CONNECT never reaches the Worker either: workerd answers 500 "Incoming CONNECT on a worker not supported".)
  test.each(["TRACE"])("method %s (raw HTTP) is a 4xx, never a 5xx or an echo", async (method) => {
    // At the owner's address: the router would answer a stream placed elsewhere with its 307 first (raw
    // HTTP follows none), so which node a table or stream created earlier in the suite landed on must not matter.
    const path = streamPath(name, await ownerOf(service, name));
    const answer = await rawCall(service, method, path, { authorization: `Bearer ${full.token}` });
    expect(answer.status, answer.text).toBeGreaterThanOrEqual(400);
    expect(answer.status, answer.text).toBeLessThan(500);
    expect(answer.text).not.toContain(full.token);
  });

  test(`a __ds body over MAX_DS_BODY_BYTES (${MAX_DS_BODY_BYTES}) is 413: subscription create and ack`, async () => {
    const subscriber = await mint(service, ["pr/"], ["subscribe"]);
    const padding = "x".repeat(MAX_DS_BODY_BYTES + 1);
    const put = await call(service, "/v1/stream/__ds/subscriptions/too-big", {
      method: "PUT",
      token: subscriber.token,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ type: "pull-wake", pattern: "pr/*", wake_stream: "pr/wake", pad: padding }),
    });
    expect(put.status, put.text.slice(0, 300)).toBe(413);
    const ack = await call(service, "/v1/stream/__ds/subscriptions/too-big/ack", {
      method: "POST",
      token: subscriber.token,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ wake_id: "w", generation: 1, acks: [], pad: padding }),
    });
    expect(ack.status, ack.text.slice(0, 300)).toBe(413);
  });
});

describe("webhook targets refused at subscription create (no dev flag here)", () => {
  const subscribe = async (url: string): Promise<Answer> => {
    const subscriber = await mint(service, ["pr/"], ["subscribe"]);
    return call(service, `/v1/stream/__ds/subscriptions/wh-${Math.random().toString(36).slice(2)}`, {
      method: "PUT",
      token: subscriber.token,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ type: "webhook", pattern: "pr/*", webhook: { url } }),
    });
  };

  test("plain-http loopback without WEBHOOK_ALLOW_LOOPBACK=1 is refused (400)", async () => {
    for (const url of ["http://127.0.0.1:9/hook", "http://localhost:9/hook", "http://[::1]:9/hook"]) {
      const answer = await subscribe(url);
      expect(answer.status, `${url}: ${answer.text}`).toBe(400);
    }
  });

  test.each([
    "https://10.0.0.1/hook",
    "https://169.254.169.254/latest/meta-data",
    "https://[::1]/hook",
    "https://0x7f.1/hook",
    "https://192.168.1.1/hook",
    "https://[fd00::1]/hook",
    "https://[::ffff:10.0.0.1]/hook",
    "https://metadata.google.internal/computeMetadata/v1",
    "http://10.0.0.1/hook",
    // IPv6 transition forms (WU-H rows of webhook-url.ts): each embeds or reaches an IPv4 address.
    "https://[2002:7f00:1::1]/hook",
    "https://[2002:a9fe:a9fe::]/latest/meta-data",
    "https://[2002:808:808::1]/hook",
    "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook",
    "https://[64:ff9b::a00:1]/hook",
    "https://[64:ff9b::808:808]/hook",
    "https://[64:ff9b:1::a00:1]/hook",
    "https://[::ffff:0:a00:1]/hook",
    "https://[::a00:1]/hook",
    "https://[::ffff:8.8.8.8]/hook",
  ])("a private or local webhook target (%s) is refused (400)", async (url) => {
    const answer = await subscribe(url);
    expect(answer.status, answer.text).toBe(400);
  });

  test("the service's own origin is refused as a webhook target (400)", async () => {
    for (const url of [`${service.baseUrl}/v1/stream/pr/own`, `${service.baseUrl}/n/node-1/v1/stream/pr/own`]) {
      const answer = await subscribe(url);
      expect(answer.status, `${url}: ${answer.text}`).toBe(400);
    }
  });
});

describe("active content is served sandboxed, as an attachment", () => {
  test.each(["text/html", "text/html; charset=utf-8", "TEXT/HTML", "image/svg+xml", "application/xhtml+xml", "text/xml", "application/xml", "application/javascript", "text/javascript"])(
    "a %s stream is served with Content-Security-Policy: sandbox and Content-Disposition: attachment",
    async (contentType) => {
      const name = `pr/active-${contentType.replace(/[^a-z]/gi, "-")}-${run}`;
      await create(name, contentType, "<script>alert(document.cookie)</script>");
      const answer = await call(service, streamPath(`${name}?offset=-1`), { token: full.token });
      expect(answer.status).toBe(200);
      expect(answer.headers.get("content-security-policy") ?? "").toMatch(/\bsandbox\b/);
      expect(answer.headers.get("content-disposition") ?? "").toMatch(/^attachment\b/);
      expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
    },
  );

  test.each(["text/plain;a=b,text/html", "text/plain, text/html", "text/plain;a=b;,image/svg+xml"])(
    "CT5: a Content-Type smuggling a second (active) type in its parameters, %s, is refused at create (400) and creates nothing",
    async (contentType) => {
      const name = `pr/smuggled-${contentType.replace(/[^a-z]/gi, "-")}-${run}`;
      const answer = await call(service, streamPath(name), { method: "PUT", token: full.token, headers: { "content-type": contentType }, body: "<script>x</script>" });
      expectRefusal(answer, 400, "invalid");
      expect((await headOf(name)).status).toBe(404);
    },
  );

  test("a text/plain stream is not served as an attachment (the rule is about active types)", async () => {
    const name = `pr/passive-${run}`;
    await create(name, "text/plain", "<script>x</script>");
    const answer = await call(service, streamPath(`${name}?offset=-1`), { token: full.token });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-disposition")).toBeNull();
  });
});
