// The Durable Streams conformance suite (@durable-streams/server-conformance-tests, pinned) against mink
// started for real (test/e2e/service.ts), in each setup below:
//   single    one node
//   redirect  three nodes behind the router, which answers 307s to the owner's address
//   forward   three nodes behind the router in forwarding mode
//   node      three nodes, with a node's advertised address (`<origin>/n/node-1`) as the suite's base URL:
//             every node address serves the whole protocol, the reserved `__ds` API included
//   token     three nodes with 307s in AUTH_MODE=token, every request of the suite carrying a token
//             (docs/access.md)
// each over the embedded S3 endpoint and, when MINK_TEST_S3_ENDPOINT is set, again over that server
// (radosgw in CI): ids "single-external", "redirect-external", "forward-external", "node-external".
//
//   npm run test:e2e                                            every setup
//   MINK_CONFORMANCE_SETUPS=single,redirect npm run test:e2e     some of them
//   MINK_CONFORMANCE_BASE_URL=http://127.0.0.1:4437 npm run test:e2e   an already running server instead
//     (e.g. the @durable-streams/server reference server, to check this harness; mink is not started)
//
// Each setup asserts that all 338 tests of the suite ran (see assertAllTestsRan).

import { runConformanceTests, type ConformanceTestOptions } from "@durable-streams/server-conformance-tests";
import { fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, expect, type RunnerTask, type RunnerTestSuite } from "vitest";
import { startService, type Service, type ServiceOptions } from "./service.ts";

/** The number of tests in @durable-streams/server-conformance-tests@0.3.6 with subscriptions on. */
const EXPECTED_TEST_COUNT = 338;
/**
 * The server's long-poll timeout; the suite's long-poll tests wait this long plus a second. Not lower: some
 * tests start a long-poll and then make two appends through the router (a fork's source, then the fork),
 * which must land within it; with three nodes on two cores under the suite's concurrency that took over
 * 500 ms now and then.
 */
const LONG_POLL_TIMEOUT_MS = 1_500;
/** Bound on starting (or stopping) the service, in a beforeAll/afterAll. */
const SERVICE_HOOK_TIMEOUT_MS = 120_000;

interface Setup {
  id: string;
  title: string;
  /** Undefined: use MINK_CONFORMANCE_BASE_URL, a server started outside this file. */
  service?: ServiceOptions;
  /** Appended to the service's URL for the suite's base URL (a node's address, `/n/<id>`); default none. */
  basePath?: string;
  /**
   * Replace globalThis.fetch with undici 7's for this setup. Node 20's built-in fetch (an older bundled
   * undici) fails to follow a 307 when the request body is binary; undici 7 follows it. The suite and its
   * client call the global `fetch` at request time, so swapping the global in beforeAll and restoring it in
   * afterAll covers every request of this setup and no other. (setGlobalDispatcher does not help: the bug is
   * in the built-in fetch's redirect handling, not in the dispatcher.)
   */
  undiciFetch: boolean;
  /**
   * AUTH_MODE=token: after the start an all-streams token is minted (POST /admin/tokens) and every request
   * of the suite to the service carries it, unless it carries its own Authorization (a subscription's
   * callback or claim token): the protocol unchanged, behind access control.
   */
  token?: true;
}

const ALL_OPS = ["read", "append", "create", "delete", "subscribe"];

async function mintAllStreamsToken(service: Service): Promise<string> {
  const response = await fetch(`${service.baseUrl}/admin/tokens`, {
    method: "POST",
    headers: { authorization: `Bearer ${service.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ prefixes: [""], ops: ALL_OPS, ttlSeconds: 24 * 3600 }),
  });
  if (response.status !== 201) throw new Error(`minting a token: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { token: string }).token;
}

/** `inner`, adding `Authorization: Bearer <token>` to requests for `origin` that carry none. */
function fetchWithToken(inner: typeof globalThis.fetch, origin: string, token: string): typeof globalThis.fetch {
  return (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (!url.startsWith(origin)) return inner(input, init);
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    if (!headers.has("authorization")) headers.set("authorization", `Bearer ${token}`);
    return inner(input, { ...init, headers: Object.fromEntries(headers) });
  };
}

function selectedSetups(): Setup[] {
  const override = process.env.MINK_CONFORMANCE_BASE_URL;
  if (override !== undefined && override !== "") {
    return [{ id: "base-url", title: `server at ${override}`, undiciFetch: process.env.MINK_CONFORMANCE_UNDICI_FETCH === "1" }];
  }
  // Compaction rarely runs during the suite: on two cores, a compaction of hundreds of tiny streams (a burst
  // of object-store requests) starved the suite's own process for seconds, and its TTL tests (a 2 s TTL
  // renewed after a 1.5 s sleep) then failed on the client's clock, not the server's (the node logged the
  // real gap). Compaction is tested by the workers suites, the SIGKILL test and the transfer tests.
  const common = {
    longPollTimeoutMs: LONG_POLL_TIMEOUT_MS,
    vars: { COMPACT_AFTER_WAL_OBJECTS: "100000", COMPACT_AFTER_WAL_BYTES: String(256 * 1024 * 1024) },
  } satisfies ServiceOptions;
  const stores: Array<{ suffix: string; title: string; s3: "embedded" | "external" }> = [{ suffix: "", title: "embedded S3", s3: "embedded" }];
  if ((process.env.MINK_TEST_S3_ENDPOINT ?? "") !== "") stores.push({ suffix: "-external", title: "external S3", s3: "external" });
  const all: Setup[] = stores.flatMap(({ suffix, title, s3 }) => [
    { id: `single${suffix}`, title: `one node, ${title}`, service: { ...common, s3, nodes: 1 }, undiciFetch: false },
    { id: `redirect${suffix}`, title: `three nodes, 307 redirects, ${title}`, service: { ...common, s3, nodes: 3, forwarding: false }, undiciFetch: true },
    { id: `forward${suffix}`, title: `three nodes, forwarding, ${title}`, service: { ...common, s3, nodes: 3, forwarding: true }, undiciFetch: false },
    // A node other than the router's local one: its own streams are served there, the rest are 307s from it.
    {
      id: `node${suffix}`,
      title: `three nodes, a node address as base URL, ${title}`,
      service: { ...common, s3, nodes: 3, forwarding: false },
      basePath: "/n/node-1",
      undiciFetch: true,
    },
  ]);
  all.push({
    id: "token",
    title: "three nodes, 307 redirects, AUTH_MODE=token, embedded S3",
    service: { ...common, nodes: 3, forwarding: false, vars: { ...common.vars, AUTH_MODE: "token" } },
    undiciFetch: true,
    token: true,
  });
  const filter = process.env.MINK_CONFORMANCE_SETUPS;
  if (filter === undefined || filter === "") return all;
  const wanted = new Set(filter.split(",").map((id) => id.trim()));
  const unknown = [...wanted].filter((id) => !all.some((setup) => setup.id === id));
  if (unknown.length > 0) throw new Error(`MINK_CONFORMANCE_SETUPS: unknown or unavailable setup(s) ${unknown.join(", ")}; have ${all.map((s) => s.id).join(", ")}`);
  return all.filter((setup) => wanted.has(setup.id));
}

/**
 * The count check, run in each setup's afterAll over vitest's task tree for that describe block (the runner
 * passes the block to the hook; by then every test in it has its final result). "Collected" counts the test
 * tasks the suite registered; "ran" counts those whose result is pass or fail, so a test skipped by the
 * suite (runIf/skipIf, e.g. subscriptions off), by a `-t` filter or by a failed beforeAll does not count.
 * Both must equal 338: a changed suite, a skipped group or a setup that never started fails the run loudly
 * instead of passing with fewer tests. Test failures are reported by vitest as usual; this check is about
 * coverage. MINK_CONFORMANCE_PARTIAL=1 turns it off for deliberately filtered runs.
 */
function assertAllTestsRan(suite: Readonly<RunnerTestSuite>, title: string): void {
  const tests = collectTests(suite);
  const ran = tests.filter((test) => test.result?.state === "pass" || test.result?.state === "fail");
  const passed = tests.filter((test) => test.result?.state === "pass");
  console.log(`[conformance] ${title}: ${passed.length} passed, ${ran.length - passed.length} failed, ${ran.length} ran of ${tests.length} collected (expected ${EXPECTED_TEST_COUNT})`);
  if (process.env.MINK_CONFORMANCE_PARTIAL === "1") return;
  expect(tests.length, "tests collected from the conformance suite").toBe(EXPECTED_TEST_COUNT);
  expect(ran.length, "conformance tests that ran (passed or failed)").toBe(EXPECTED_TEST_COUNT);
}

function collectTests(task: Readonly<RunnerTask>): RunnerTask[] {
  if (task.type === "test") return [task];
  return task.tasks.flatMap((child) => collectTests(child));
}

for (const setup of selectedSetups()) {
  describe(setup.title, () => {
    // runConformanceTests reads baseUrl at request time, so it can be filled in once the service is up.
    const options: ConformanceTestOptions = {
      baseUrl: process.env.MINK_CONFORMANCE_BASE_URL ?? "http://127.0.0.1:1",
      longPollTimeoutMs: LONG_POLL_TIMEOUT_MS,
      subscriptions: true,
    };
    let service: Service | undefined;
    const builtinFetch = globalThis.fetch;

    beforeAll(async () => {
      if (setup.service !== undefined) {
        service = await startService(setup.service);
        options.baseUrl = `${service.baseUrl}${setup.basePath ?? ""}`;
      }
      // Only the suite's requests go through undici 7: swapped after the start, because aws4fetch (which
      // creates the external bucket) builds Node's own Request objects, which undici's fetch refuses.
      if (setup.undiciFetch) globalThis.fetch = undiciFetch as unknown as typeof globalThis.fetch;
      if (setup.token === true && service !== undefined) {
        globalThis.fetch = fetchWithToken(globalThis.fetch, service.baseUrl, await mintAllStreamsToken(service));
      }
    }, SERVICE_HOOK_TIMEOUT_MS);

    // The hook gets (fixtures, suite); vitest insists the first parameter is a destructuring pattern.
    afterAll(async ({}, suite) => {
      globalThis.fetch = builtinFetch;
      try {
        await service?.stop();
      } finally {
        assertAllTestsRan(suite, setup.title);
      }
    }, SERVICE_HOOK_TIMEOUT_MS);

    runConformanceTests(options);
  });
}
