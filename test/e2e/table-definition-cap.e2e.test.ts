// AD6 at its default (issue 25; docs/limits.md, `MAX_TABLE_DEFINITION_BYTES`): tables stay in the metadata
// log's memory and in the snapshot beside its stream rows, so all definitions together have a bound of their
// own. Filled here through the HTTP API as a client would, at the bound as it ships (nothing lowered): tables
// with the largest definition the parser takes (64 columns of 64-character names) until the deployment
// refuses one. The refusal must be 429 `limit_reached` naming the bound, come exactly when the next
// definition would pass it, and leave the deployment serving: tables read, streams created.
//
//   npx vitest run --project e2e test/e2e/table-definition-cap.e2e.test.ts
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { MAX_COLUMNS } from "../../src/core/tables/definition.ts";
import { startService, type Service } from "./service.ts";
import { allLive, call, describeTable, expectStatus } from "./tables-clients.ts";

/** The bound as it ships (src/core/meta/admission.ts), asserted against the refusal's own details below. */
const MAX_TABLE_DEFINITION_BYTES = 4 * 1024 * 1024;
/** Table creates in flight at once while filling. */
const CONCURRENCY = 8;

/** The largest definition D2 allows: 64 columns, each name 64 characters; every table gets the same one. */
const WIDEST = {
  columns: Array.from({ length: MAX_COLUMNS }, (_, i) => ({ name: `c${i}_`.padEnd(64, "x"), type: "string", nullable: true })),
  buckets: 1,
};

let service: Service;

beforeAll(async () => {
  service = await startService({ nodes: 1 });
  await allLive(service, 1);
}, 180_000);

afterAll(async () => {
  await service?.stop();
});

describe("AD6 at its default: all tables' definitions together", () => {
  test("tables are created until the next definition would pass MAX_TABLE_DEFINITION_BYTES, then 429 limit_reached names the bound, and the deployment still serves", async () => {
    const statuses = new Map<number, number>();
    let refusal: { status: number; body: unknown; retryAfter: string | null } | null = null;
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (refusal === null && next < 2_000) {
          const index = next++;
          const answer = await call(service, "PUT", `/v1/table/wide-${index}`, WIDEST);
          statuses.set(index, answer.status);
          if (answer.status !== 201) refusal ??= { status: answer.status, body: answer.body, retryAfter: answer.headers.get("retry-after") };
        }
      }),
    );
    expect(refusal).not.toBeNull();
    expect(refusal!.status).toBe(429);
    expect(refusal!.body).toMatchObject({ error: { code: "limit_reached", details: { limit: "MAX_TABLE_DEFINITION_BYTES", max: MAX_TABLE_DEFINITION_BYTES } } });

    // Exactly as many as fit: the bound counts each definition as the log keeps it (canonical JSON, UTF-8).
    const created = [...statuses].filter(([, status]) => status === 201).map(([index]) => index);
    const stored = (await describeTable(service, `wide-${created[0]}`)).definition;
    const bytesEach = new TextEncoder().encode(JSON.stringify(stored)).length;
    expect(created.length).toBe(Math.floor(MAX_TABLE_DEFINITION_BYTES / bytesEach));
    expect([...statuses.values()].every((status) => status === 201 || status === 429)).toBe(true);

    // Still serving: an existing table reads, a new one is refused again, a stream is created.
    await describeTable(service, `wide-${created.at(-1)}`);
    expect((await call(service, "PUT", "/v1/table/wide-again", WIDEST)).status).toBe(429);
    await expectStatus(service, 201, "PUT", "/v1/stream/after-the-tables-cap", undefined, { "content-type": "text/plain" });
  }, 300_000);
});
