// Three test projects, each with its own job:
// - node:    the pure core, storage formats and the contract suite against the in-memory store and the
//            embedded S3 endpoint, the node tier (test/cluster: nodes in plain Node over the in-memory store
//            and MetaLog), the mink CLI against a small HTTP server, and `npm run dev`'s refusals before it
//            starts anything (milliseconds to seconds, no outside service);
// - workers: Durable Objects and the Worker inside workerd (vitest pool: eviction, alarms, restarts);
// - s3:      the same contract and storage suites against a real S3 server (radosgw in CI), selected by
//            MINK_TEST_S3_ENDPOINT; `npm run test:s3`.
// - e2e:     mink started for real (the local runtime + an S3 endpoint) under the Durable Streams conformance
//            suite and the SIGKILL test; `npm run test:e2e` (docs/testing-e2e.md). Not part of `npm test` yet.
// No `retry` anywhere: a flaky test is a bug to find.
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "node",
          environment: "node",
          include: [
            "test/core/**/*.test.ts",
            "test/storage/**/*.test.ts",
            "test/tiering/**/*.test.ts",
            "test/contract/**/*.test.ts",
            "test/cli/**/*.test.ts",
            "test/cluster/**/*.test.ts",
            "test/sim/**/*.test.ts",
            "test/docs/**/*.test.ts",
            "test/status-page/**/*.test.ts",
            "test/client/**/*.test.ts",
            "test/scripts/**/*.test.ts",
          ],
          exclude: ["test/contract/**/*.s3.test.ts", "test/storage/**/*.s3.test.ts"],
          globalSetup: ["test/setup/embedded-s3.global.ts"],
        },
      },
      {
        test: {
          name: "s3",
          environment: "node",
          include: ["test/contract/**/*.s3.test.ts", "test/storage/**/*.s3.test.ts"],
        },
      },
      {
        test: {
          name: "e2e",
          environment: "node",
          include: ["test/e2e/**/*.e2e.test.ts"],
          // Each file starts its own services (the local runtime + workerd): one file at a time on 2 shared cores.
          maxWorkers: 1,
          // Generous: long-poll and TTL tests wait for real, and the first start bundles the Worker.
          testTimeout: 60_000,
          hookTimeout: 180_000,
        },
      },
      {
        // Stream nodes write to an in-memory object store shared by the isolate (src/node/runtime/store-factory.ts),
        // so tests can inject store faults and restart nodes without an S3 endpoint.
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            // A small body limit so the 413 tests need no 8 MiB bodies; an admin token for /admin and /metrics.
            miniflare: { bindings: { S3_ENDPOINT: "memory://workers", MAX_BODY_BYTES: "65536", ADMIN_TOKEN: "mink-test-admin", AUTH_MODE: "open", TOKEN_SECRET: "mink-test-token-secret-0123456789abcdef" } },
          }),
        ],
        test: {
          name: "workers",
          include: ["test/workers/**/*.test.ts"],
        },
      },
    ],
  },
});
