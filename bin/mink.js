#!/usr/bin/env node
// The `mink` command. Runs the bundle (dist/cli/mink.js, from `npm run build:cli`) when there is one, and
// otherwise the TypeScript source through tsx (a devDependency), so a fresh clone works after `npm ci`
// without a build step. MINK_CLI_FROM_SOURCE=1 skips a bundle that may be stale.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const bundle = new URL("../dist/cli/mink.js", import.meta.url);
let cli;
if (process.env.MINK_CLI_FROM_SOURCE !== "1" && existsSync(fileURLToPath(bundle))) {
  cli = await import(bundle.href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  cli = await import("../src/cli/main.ts");
}
process.exitCode = await cli.main(process.argv.slice(2), cli.processIo());
