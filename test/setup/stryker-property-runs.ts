// Under mutation testing only (vitest.stryker.config.ts): property tests that name no run count run 10
// cases instead of fast-check's 100, as those that name one run a tenth (test/support/property-runs.ts).
import fc from "fast-check";

fc.configureGlobal({ numRuns: 10 });
