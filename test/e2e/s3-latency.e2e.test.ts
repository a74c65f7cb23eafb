// mink at R2's latency: startService({ s3LatencyMs }) starts the embedded S3 endpoint with that delay on every
// request, so an append, acknowledged only once its WAL object is durable in the store, is acknowledged no
// sooner than one delayed round trip. A lower bound, which real time cannot break. And the settings are
// checked before anything starts: a bad number, or a latency with an external store that nothing could add.
//
//   npm run test:e2e -- test/e2e/s3-latency.e2e.test.ts
import { afterAll, describe, expect, it } from "vitest";
import { startService, type Service } from "./service.ts";

const LATENCY_MS = 200;

describe("startService with an S3 latency", () => {
  let service: Service | undefined;
  afterAll(async () => {
    await service?.stop();
  });

  it(`s3LatencyMs ${LATENCY_MS}: an append is acknowledged no sooner than ${LATENCY_MS} ms after it is sent`, async () => {
    service = await startService({ nodes: 1, s3LatencyMs: LATENCY_MS });
    const stream = `${service.baseUrl}/v1/stream/latency/one`;
    const created = await fetch(stream, { method: "PUT", headers: { "content-type": "text/plain" } });
    expect(created.status).toBe(201);
    for (const text of ["first", "second"]) {
      const start = performance.now();
      const appended = await fetch(stream, { method: "POST", headers: { "content-type": "text/plain" }, body: text });
      const elapsed = performance.now() - start;
      expect(appended.status).toBe(204);
      expect(elapsed).toBeGreaterThanOrEqual(LATENCY_MS);
    }
    const read = await fetch(`${stream}?offset=-1`);
    expect(await read.text()).toBe("firstsecond");
  });

  it("refuses a latency that is not whole milliseconds up to 60,000, and any latency with an external store", async () => {
    await expect(startService({ s3LatencyMs: -1 })).rejects.toThrow("s3LatencyMs must be a whole number of milliseconds from 0 to 60000 (got -1)");
    await expect(startService({ s3JitterMs: 0.5 })).rejects.toThrow("s3JitterMs must be a whole number of milliseconds from 0 to 60000 (got 0.5)");
    await expect(startService({ s3: "external", s3LatencyMs: 30 })).rejects.toThrow("s3LatencyMs and s3JitterMs delay the embedded S3 endpoint only");
  });
});
