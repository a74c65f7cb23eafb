// The `mink` CLI: parse, run one command against the admin API, print, and return the exit code. main()
// never exits the process and touches only the injected io, so tests run it in-process; bin/mink.js (or
// the bundle, dist/cli/mink.js, run directly) passes the real process.
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { AdminClient } from "./admin-client.ts";
import { parseCommandLine, type Parsed } from "./args.ts";
import { nodesCommand, slotsCommand, streamCommand, transferCommand, transfersCommand, undrainCommand, type CommandContext } from "./commands.ts";
import { drainCommand } from "./drain.ts";
import { rebalanceCommand } from "./rebalance.ts";
import { streamsCommand } from "./streams.ts";
import { tableCommand, tableSnapshotCommand, tableTierCommand, tablesCommand } from "./tables.ts";
import { tokenCreateCommand, tokenListCommand, tokenRevokeCommand } from "./tokens.ts";
import { describeFailure, EXIT_OK } from "./errors.ts";
import { processIo, sleep, type CliIo } from "./io.ts";

export { processIo, type CliIo } from "./io.ts";

const DEFAULT_POLL_INTERVAL_MS = 1_000;
/** `mink cluster rebalance` gives up after this long without a change (5 minutes). */
const DEFAULT_STALL_TIMEOUT_MS = 300_000;

/** Runs `mink <argv...>`; resolves to the exit code (0 ok, 1 server or network failure, 2 usage error). */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    const parsed = parseCommandLine(argv, io.env);
    if (parsed.kind === "help") {
      io.stdout.write(parsed.text);
      return EXIT_OK;
    }
    const client = new AdminClient({ baseUrl: parsed.options.url, token: parsed.options.token, ...(io.fetch === undefined ? {} : { fetch: io.fetch }) });
    const context: CommandContext = { client, json: parsed.options.json, out: (text) => void io.stdout.write(text) };
    await run(parsed, context, io);
    return EXIT_OK;
  } catch (error) {
    const failure = describeFailure(error);
    io.stderr.write(failure.message);
    return failure.exitCode;
  }
}

async function run(parsed: Extract<Parsed, { kind: "command" }>, context: CommandContext, io: CliIo): Promise<void> {
  const { command, operands, noWait } = parsed;
  const [first = "", second = ""] = operands;
  const tty = io.stdout.isTTY === true;
  const intervalMs = io.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const warn = (text: string): void => void io.stderr.write(text);
  switch (command) {
    case "nodes":
      return nodesCommand(context);
    case "slots":
      return slotsCommand(context, first, second);
    case "stream":
      return streamCommand(context, first);
    case "streams":
      if (parsed.list === undefined) throw new Error("streams parsed without its options");
      return streamsCommand(context, parsed.list);
    case "tables":
      return tablesCommand(context);
    case "table":
      return tableCommand(context, first);
    case "table snapshot":
      return tableSnapshotCommand(context, first);
    case "table tier":
      return tableTierCommand(context, first);
    case "transfer":
      return transferCommand(context, first, second);
    case "transfers":
      return transfersCommand(context);
    case "drain":
      return drainCommand(context, first, { noWait, tty, intervalMs, sleep: io.sleep ?? sleep, warn });
    case "undrain":
      return undrainCommand(context, first);
    case "cluster rebalance":
      return rebalanceCommand(context, {
        dryRun: parsed.dryRun,
        maxConcurrent: parsed.maxConcurrent,
        noWait,
        tty,
        intervalMs,
        sleep: io.sleep ?? sleep,
        now: io.now ?? Date.now,
        stallTimeoutMs: io.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS,
        warn,
      });
    case "token create":
      if (parsed.mint === undefined) throw new Error("token create parsed without its options");
      return tokenCreateCommand(context, parsed.mint, parsed.quiet);
    case "token revoke":
      return tokenRevokeCommand(context, first);
    case "token list":
      return tokenListCommand(context);
  }
}

/** True when this module is the program itself (the bundle run as `node dist/cli/mink.js`), not an import. */
function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) process.exitCode = await main(process.argv.slice(2), processIo());
