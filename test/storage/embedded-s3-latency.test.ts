// The embedded S3 endpoint's injected latency (src/storage/s3-endpoint/latency.ts): started with a latency,
// every request is answered no sooner than that (a lower bound, which real time cannot break); started
// without one, it answers as before. Each test starts its own endpoint: the shared one has no latency.
import { afterEach, describe, expect, it } from "vitest";
import { startEmbeddedS3, type EmbeddedS3 } from "../../scripts/embedded-s3.ts";
import { injectedDelay, requestDelayMs } from "../../src/storage/s3-endpoint/latency.ts";

const started: EmbeddedS3[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s3) => s3.stop()));
});

async function endpoint(options: { latencyMs?: number; jitterMs?: number }): Promise<EmbeddedS3> {
  const s3 = await startEmbeddedS3({ port: 0, ...options });
  started.push(s3);
  return s3;
}

/** The response to `init` at `url`, and how long it took to arrive (body read), in milliseconds. */
async function timed(url: string, init: RequestInit = {}): Promise<{ response: Response; body: string; ms: number }> {
  const start = performance.now();
  const response = await fetch(url, init);
  const body = await response.text();
  return { response, body, ms: performance.now() - start };
}

describe("embedded S3 endpoint with injected latency", () => {
  it("latencyMs 200: a PUT, a GET, a HEAD, a list and an error each take at least 200 ms", async () => {
    const s3 = await endpoint({ latencyMs: 200 });
    const object = `${s3.url}/${s3.bucket}/latency/one`;
    const put = await timed(object, { method: "PUT", body: "hello" });
    expect(put.response.status).toBe(200);
    const get = await timed(object);
    expect([get.response.status, get.body]).toEqual([200, "hello"]);
    const head = await timed(object, { method: "HEAD" });
    expect(head.response.status).toBe(200);
    const list = await timed(`${s3.url}/${s3.bucket}?list-type=2&prefix=latency/`);
    expect(list.response.status).toBe(200);
    const missing = await timed(`${s3.url}/${s3.bucket}/latency/missing`);
    expect(missing.response.status).toBe(404);
    for (const { ms } of [put, get, head, list, missing]) expect(ms).toBeGreaterThanOrEqual(200);
  });

  it("latencyMs 100 with jitterMs 50: each of 5 concurrent GETs takes at least 100 ms", async () => {
    const s3 = await endpoint({ latencyMs: 100, jitterMs: 50 });
    const results = await Promise.all(Array.from({ length: 5 }, () => timed(`${s3.url}/${s3.bucket}/latency/absent`)));
    for (const { response, ms } of results) {
      expect(response.status).toBe(404);
      expect(ms).toBeGreaterThanOrEqual(100);
    }
  });

  it("latencyMs 0 (the default): a PUT and a GET are answered", async () => {
    const s3 = await endpoint({ latencyMs: 0 });
    const object = `${s3.url}/${s3.bucket}/latency/zero`;
    expect((await timed(object, { method: "PUT", body: "now" })).response.status).toBe(200);
    const get = await timed(object);
    expect([get.response.status, get.body]).toEqual([200, "now"]);
  });

  it("refuses a latency or a jitter that is not a whole number of ms from 0 to 60,000, naming the option", async () => {
    await expect(startEmbeddedS3({ latencyMs: -1 })).rejects.toThrow("latencyMs must be a whole number of milliseconds from 0 to 60000 (got -1)");
    await expect(startEmbeddedS3({ latencyMs: 2.5 })).rejects.toThrow("latencyMs must be");
    await expect(startEmbeddedS3({ jitterMs: 60_001 })).rejects.toThrow("jitterMs must be a whole number of milliseconds from 0 to 60000 (got 60001)");
    await expect(startEmbeddedS3({ jitterMs: Number.NaN })).rejects.toThrow("jitterMs must be");
  });
});

describe("the Worker's delay per request (latency.ts)", () => {
  it("no bindings, or both 0: a delay of 0, for which there is nothing to await (no timer)", () => {
    expect(requestDelayMs({})).toBe(0);
    expect(requestDelayMs({ LATENCY_MS: 0, JITTER_MS: 0 })).toBe(0);
    expect(requestDelayMs({ LATENCY_MS: "", JITTER_MS: "" })).toBe(0);
    expect(injectedDelay(0)).toBeUndefined();
  });

  it("LATENCY_MS alone is the delay, drawing nothing; JITTER_MS adds a draw from [0, JITTER_MS)", () => {
    const noDraw = (): number => {
      throw new Error("drew a random number with no jitter");
    };
    expect(requestDelayMs({ LATENCY_MS: 30 }, noDraw)).toBe(30);
    expect(requestDelayMs({ LATENCY_MS: "30" }, noDraw)).toBe(30);
    expect(requestDelayMs({ LATENCY_MS: 30, JITTER_MS: 5 }, () => 0)).toBe(30);
    expect(requestDelayMs({ LATENCY_MS: 30, JITTER_MS: 5 }, () => 0.5)).toBe(32.5);
    const highest = requestDelayMs({ LATENCY_MS: 30, JITTER_MS: 5 }, () => 1 - 2 ** -32);
    expect(highest).toBeGreaterThanOrEqual(34.99);
    expect(highest).toBeLessThan(35);
    expect(requestDelayMs({ JITTER_MS: "8" }, () => 0.25)).toBe(2);
  });

  it("a binding that is not a non-negative number is an error naming it", () => {
    expect(() => requestDelayMs({ LATENCY_MS: "soon" })).toThrow('LATENCY_MS must be a non-negative number of milliseconds (got "soon")');
    expect(() => requestDelayMs({ JITTER_MS: -1 })).toThrow("JITTER_MS must be a non-negative number of milliseconds (got -1)");
  });

  it("a positive delay is a promise that resolves (the endpoint tests above bound how long it takes)", async () => {
    const delay = injectedDelay(1);
    expect(delay).toBeInstanceOf(Promise);
    await expect(delay).resolves.toBeUndefined();
  });
});
