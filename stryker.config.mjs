// StrykerJS over the pure core and the storage layer (docs/testing.md, "Mutation testing"): `npm run mutate`.
// Not part of `npm test` or CI: a full run takes hours on two cores. The incremental file (reports/, ignored
// by git) lets a second run on the same machine test only the mutants that changed code or tests reach.
export default {
  testRunner: "vitest",
  vitest: { configFile: "vitest.stryker.config.ts" },
  mutate: [
    "src/core/**/*.ts",
    "src/storage/**/*.ts",
    // Runs inside workerd (Miniflare, scripts/embedded-s3.ts), out of reach of Stryker's instrumentation in
    // the vitest process: its mutants could never be killed. Its XML helpers are tested through HTTP only.
    "!src/storage/s3-endpoint/**",
    // Type-only files: nothing to mutate.
    "!src/core/result.ts",
    "!src/core/meta/table-records.ts",
  ],
  coverageAnalysis: "perTest",
  // Module-level code (constant tables, regular expressions) runs at import, before any test: Stryker would
  // run every test for each of its mutants. They are reported as ignored, not hidden.
  ignoreStatic: true,
  incremental: true,
  incrementalFile: "reports/stryker-incremental.json",
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  thresholds: { high: 80, low: 60, break: null },
  concurrency: 1,
  timeoutMS: 10_000,
  tempDirName: ".stryker-tmp",
  // Build output and local state: not needed to run the tests, so not copied into the sandbox.
  ignorePatterns: ["dist", ".wrangler", ".mink", "test-results"],
  cleanTempDir: true,
};
