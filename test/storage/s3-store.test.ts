// The S3 adapter's own rules, beyond the shared contract: lost answers to conditional PUTs, the bounded
// retry policy, ETag forms in If-Match, addressing styles, and no S3 XML past the port. Network faults are
// injected with a wrapping fetch in front of the embedded S3 endpoint.
import { describe, expect, it } from "vitest";
import { isStoreError, type ObjectStoreError } from "../../src/storage/object-store.ts";
import { embeddedS3Target, s3Store } from "../support/s3-stores.ts";

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const text = (body: Uint8Array): string => new TextDecoder().decode(body);
const run = `s3-store-${Date.now().toString(36)}`;
let counter = 0;
const freshKey = (): string => `${run}/${++counter}`;
const noSleep = async (): Promise<void> => {};

type FetchPlan = (request: Request, send: () => Promise<Response>) => Promise<Response>;

/** A store whose requests pass through `plan`, which may send them, drop the answer, or answer itself. */
function storeWith(plan: FetchPlan, log: Request[] = []) {
  return s3Store(embeddedS3Target(), {
    sleep: noSleep,
    fetch: async (input, init) => {
      const request = input as Request;
      log.push(request.clone());
      return plan(request, () => fetch(request, init));
    },
  });
}

const isPut = (request: Request): boolean => request.method === "PUT";
const lostAnswer = (): never => {
  throw new TypeError("fetch failed: connection reset (injected)");
};

describe("S3 adapter: a conditional PUT whose answer was lost", () => {
  it("is found to have landed by reading the key back, and is not sent again", async () => {
    const key = freshKey();
    const log: Request[] = [];
    let dropped = false;
    const store = storeWith(async (request, send) => {
      const response = await send();
      if (isPut(request) && !dropped) {
        dropped = true;
        await response.body?.cancel();
        return lostAnswer();
      }
      return response;
    }, log);
    const { etag } = await store.put(key, bytes("mine"), { condition: { ifNoneMatch: "*" } });
    expect(log.filter(isPut)).toHaveLength(1);
    const stored = await s3Store(embeddedS3Target()).get(key);
    expect([text(stored.body), stored.etag]).toEqual(["mine", etag]);
  });

  it("that never reached the server is sent again, still conditional", async () => {
    const key = freshKey();
    const log: Request[] = [];
    let failures = 1;
    const store = storeWith(async (request, send) => (isPut(request) && failures-- > 0 ? lostAnswer() : send()), log);
    await store.put(key, bytes("mine"), { condition: { ifNoneMatch: "*" } });
    const puts = log.filter(isPut);
    expect(puts).toHaveLength(2);
    expect(puts.every((r) => r.headers.get("if-none-match") === "*")).toBe(true);
  });

  it("is precondition_failed when another writer's object is there instead", async () => {
    const key = freshKey();
    const other = s3Store(embeddedS3Target());
    const store = storeWith(async (request, send) => {
      if (isPut(request)) {
        await other.put(key, bytes("theirs"), { condition: { ifNoneMatch: "*" } });
        return lostAnswer();
      }
      return send();
    });
    await expect(store.put(key, bytes("mine"), { condition: { ifNoneMatch: "*" } })).rejects.toSatisfy((e) =>
      isStoreError(e, "precondition_failed"),
    );
    expect(text((await other.get(key)).body)).toBe("theirs");
  });

  it("a compare-and-swap that landed is reported with its new ETag", async () => {
    const key = freshKey();
    const direct = s3Store(embeddedS3Target());
    const v1 = await direct.put(key, bytes("v1"));
    let dropped = false;
    const store = storeWith(async (request, send) => {
      const response = await send();
      if (isPut(request) && !dropped) {
        dropped = true;
        return lostAnswer();
      }
      return response;
    });
    const v2 = await store.put(key, bytes("v2"), { condition: { ifMatch: v1.etag } });
    expect(v2.etag).not.toBe(v1.etag);
    expect((await direct.head(key))?.etag).toBe(v2.etag);
  });
});

describe("S3 adapter: retries", () => {
  it("stop after the policy's attempts and surface a retryable error", async () => {
    const log: Request[] = [];
    const store = storeWith(async () => new Response("<Error><Code>SlowDown</Code><Message>Reduce your rate</Message></Error>", { status: 503 }), log);
    const error = await store.get(freshKey()).catch((e: unknown) => e as ObjectStoreError);
    expect(isStoreError(error, "retryable")).toBe(true);
    expect(log).toHaveLength(4);
  });

  it("never retry a fatal answer, and keep S3 XML out of the error", async () => {
    const log: Request[] = [];
    const xml = `<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>Access &amp; denied</Message></Error>`;
    const store = storeWith(async () => new Response(xml, { status: 403 }), log);
    const error = await store.put(freshKey(), bytes("x")).then(
      () => expect.unreachable("a 403 must not succeed"),
      (e: unknown) => e as ObjectStoreError,
    );
    expect(isStoreError(error, "fatal")).toBe(true);
    expect(error.message).toContain("AccessDenied: Access & denied");
    expect(error.message).not.toContain("<");
    expect(log).toHaveLength(1);
  });
});

describe("S3 adapter: If-Match ETag forms", () => {
  it("learns that a server matches only the bare ETag (radosgw) and then sends only that form", async () => {
    const key = freshKey();
    const v1 = await s3Store(embeddedS3Target()).put(key, bytes("v1"));
    const log: Request[] = [];
    // Emulate radosgw: a quoted If-Match never matches.
    const store = storeWith(async (request, send) => {
      const ifMatch = request.headers.get("if-match");
      if (ifMatch?.startsWith('"')) return new Response("<Error><Code>PreconditionFailed</Code></Error>", { status: 412 });
      return send();
    }, log);
    const v2 = await store.put(key, bytes("v2"), { condition: { ifMatch: v1.etag } });
    await store.put(key, bytes("v3"), { condition: { ifMatch: v2.etag } });
    expect(log.filter(isPut).map((r) => r.headers.get("if-match"))).toEqual([`"${v1.etag}"`, v1.etag, v2.etag]);
  });

  it("a real mismatch still fails after trying both forms", async () => {
    const key = freshKey();
    const direct = s3Store(embeddedS3Target());
    await direct.put(key, bytes("v1"));
    await expect(direct.put(key, bytes("v2"), { condition: { ifMatch: "0123456789abcdef" } })).rejects.toSatisfy((e) =>
      isStoreError(e, "precondition_failed"),
    );
  });
});

describe("S3 adapter: addressing", () => {
  const capture = (addressing: "path" | "virtual", endpoint: string) => {
    const urls: string[] = [];
    const store = s3Store(
      { endpoint, bucket: "bkt", region: "auto", accessKeyId: "k", secretAccessKey: "s", addressing },
      {
        fetch: async (input) => {
          urls.push((input as Request).url);
          return new Response("", { status: 200, headers: { etag: '"e"' } });
        },
      },
    );
    return { store, urls };
  };

  it("path style puts the bucket in the path and encodes each key segment", async () => {
    const { store, urls } = capture("path", "https://acct.r2.cloudflarestorage.com");
    await store.put("streams/a b/ü+*", bytes("x"));
    expect(urls).toEqual(["https://acct.r2.cloudflarestorage.com/bkt/streams/a%20b/%C3%BC%2B%2A"]);
  });

  it("virtual-hosted style puts the bucket in the host", async () => {
    const { store, urls } = capture("virtual", "https://s3.us-east-1.amazonaws.com");
    await store.put("wal/n1/0001", bytes("x"));
    await store.list("wal/", { startAfter: "wal/n1/0000" });
    expect(urls).toEqual([
      "https://bkt.s3.us-east-1.amazonaws.com/wal/n1/0001",
      "https://bkt.s3.us-east-1.amazonaws.com/?list-type=2&prefix=wal%2F&max-keys=1000&start-after=wal%2Fn1%2F0000",
    ]);
  });
});

describe("S3 adapter: a caller's deadline (WAL_BATCH_DEADLINE_MS)", () => {
  it("an aborted signal stops a conditional PUT's retries and read-backs: one request, then the failure", async () => {
    const key = freshKey();
    const log: Request[] = [];
    const controller = new AbortController();
    const store = storeWith(async () => {
      controller.abort(); // the deadline passes while the first request is out
      return new Response("", { status: 503 });
    }, log);
    await expect(store.put(key, bytes("mine"), { condition: { ifNoneMatch: "*" }, signal: controller.signal })).rejects.toSatisfy((e) =>
      isStoreError(e, "retryable"),
    );
    expect(log).toHaveLength(1);
  });

  it("without a signal the same failures are retried (the default policy)", async () => {
    const log: Request[] = [];
    const store = storeWith(async () => new Response("", { status: 503 }), log);
    await expect(store.put(freshKey(), bytes("mine"), { condition: { ifNoneMatch: "*" } })).rejects.toSatisfy((e) => isStoreError(e, "retryable"));
    expect(log.length).toBeGreaterThan(1);
  });
});
