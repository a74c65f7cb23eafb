// Three test projects, each with its own job:
// - node:    the pure core, storage formats and the contract suite against the in-memory store and the
//            embedded S3 endpoint (milliseconds to seconds, no outside service);
// - workers: Durable Objects and the Worker inside workerd (vitest pool: eviction, alarms, restarts);
// - s3:      the same contract and storage suites against a real S3 server (radosgw in CI), selected by
//            MINK_TEST_S3_ENDPOINT; `npm run test:s3`.
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
          include: ["test/core/**/*.test.ts", "test/storage/**/*.test.ts", "test/contract/**/*.test.ts"],
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
        plugins: [cloudflareTest({ wrangler: { configPath: "./wrangler.toml" } })],
        test: {
          name: "workers",
          include: ["test/workers/**/*.test.ts"],
        },
      },
    ],
  },
});
