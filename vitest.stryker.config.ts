// The vitest config StrykerJS runs (stryker.config.mjs, `npm run mutate`): only the node project's fast suites
// that cover src/core and src/storage (core, storage, and the contract suite over the in-memory store and the
// embedded S3 endpoint), with the same global setup (one embedded S3 endpoint for the run). The cluster, CLI,
// simulation and docs suites also reach the core, but through whole nodes: too slow to run once per mutant.
// Test files run shortest first: a mutant is usually killed by a quick example test before the long
// property suites start (Stryker stops at the first failure).
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { defineConfig } from "vitest/config";

class ShortestFirst extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const duration = (spec: TestSpecification): number =>
      this.ctx.cache.getFileTestResults(`${spec.project.name}:${spec.moduleId.slice(this.ctx.config.root.length + 1)}`)?.duration ?? 0;
    return Promise.resolve([...files].sort((a, b) => duration(a) - duration(b)));
  }
}

export default defineConfig({
  test: {
    name: "node",
    environment: "node",
    include: ["test/core/**/*.test.ts", "test/storage/**/*.test.ts", "test/contract/**/*.test.ts"],
    exclude: ["test/contract/**/*.s3.test.ts", "test/storage/**/*.s3.test.ts"],
    globalSetup: ["test/setup/embedded-s3.global.ts"],
    // Each surviving mutant reruns every property suite that reaches it: a tenth of their cases here
    // (test/support/property-runs.ts, test/setup/stryker-property-runs.ts); `npm test` runs them in full.
    env: { MINK_PROPERTY_RUNS_SCALE: "0.1" },
    setupFiles: ["test/setup/stryker-property-runs.ts"],
    sequence: { sequencer: ShortestFirst },
    // Instrumented code runs slower, on shared cores: the longest property tests pass 5 s. A mutant that makes
    // a test hang is still caught, by Stryker's own timeout.
    testTimeout: 60_000,
  },
});
