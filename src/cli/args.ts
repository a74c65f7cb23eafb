// The command line: which command, its operands, and the global options. Pure (argv and env in, a
// parsed command or a UsageError out), so it is tested without a server. The commands are in
// command-table.ts, their help in help-text.ts, the checks of option values in option-values.ts.
import { parseArgs } from "node:util";
import { COMMAND_NAMES, COMMANDS, type CommandName, type Group, isCommand, isGroup } from "./command-table.ts";
import { UsageError } from "./errors.ts";
import { commandHelp, generalHelp, groupHelp, usageLine } from "./help-text.ts";
import {
  checkTableName,
  checkUrl,
  nonEmpty,
  parseMaxConcurrent,
  parseMint,
  parseSlots,
  parseStreamsListing,
  type StreamsListing,
  type TokenMint,
} from "./option-values.ts";

export const DEFAULT_URL = "http://127.0.0.1:8787";

interface GlobalOptions {
  url: string;
  token: string | undefined;
  json: boolean;
}

export type Parsed =
  | { kind: "help"; text: string }
  | {
      kind: "command";
      command: CommandName;
      operands: string[];
      options: GlobalOptions;
      noWait: boolean;
      /** `mink cluster rebalance --dry-run`. */
      dryRun: boolean;
      /** `mink cluster rebalance --max-concurrent <n>` (undefined: the server's default). */
      maxConcurrent: number | undefined;
      /** `mink token create --prefix ... --ops ... --ttl ...` (undefined for any other command). */
      mint: TokenMint | undefined;
      /** `mink token create --quiet`: print only the token. */
      quiet: boolean;
      /** `mink streams [prefix] --after ... --limit ... --all` (undefined for any other command). */
      list: StreamsListing | undefined;
    };

type Resolved = { kind: "command"; command: CommandName; rest: string[] } | { kind: "group"; group: Group };

/**
 * The command named by the first positionals: one word, or a group and its subcommand (`cluster
 * rebalance`). A group alone is the group (help, or a usage error); anything else is a usage error.
 */
function resolveCommand(words: readonly string[]): Resolved {
  const [first = "", second, ...rest] = words;
  // `mink table <name>`, `mink table snapshot <name>` and `mink table tier <name>`: a command with subcommands, not a group.
  if (first === "table" && second === "snapshot") return { kind: "command", command: "table snapshot", rest };
  if (first === "table" && second === "tier") return { kind: "command", command: "table tier", rest };
  if (isGroup(first)) {
    if (second === undefined) return { kind: "group", group: first };
    const name = `${first} ${second}`;
    if (!isCommand(name)) throw new UsageError(`unknown command '${name}' (commands: ${COMMAND_NAMES.join(", ")})`);
    return { kind: "command", command: name, rest };
  }
  // One word: a literal "cluster rebalance" (one argument with a space) is not a command.
  if (first.includes(" ") || !isCommand(first)) throw new UsageError(`unknown command '${first}' (commands: ${COMMAND_NAMES.join(", ")})`);
  return { kind: "command", command: first, rest: second === undefined ? rest : [second, ...rest] };
}

/** The command argv names, if it names one, for the hint of an option error (nothing else is checked). */
function commandNamedBy(argv: readonly string[]): CommandName | undefined {
  const words = argv.filter((arg) => !arg.startsWith("-"));
  try {
    const resolved = resolveCommand(words);
    return resolved.kind === "command" ? resolved.command : undefined;
  } catch {
    return undefined;
  }
}

/** The CLI's version, printed by `mink --version` (a test holds it equal to package.json's). */
export const CLI_VERSION = "0.1.0";

/** The options parseArgs reads (node:util), every command's: which apply to the command is checked later. */
interface OptionValues {
  url?: string;
  token?: string;
  json?: boolean;
  help?: boolean;
  "no-wait"?: boolean;
  "dry-run"?: boolean;
  "max-concurrent"?: string;
  prefix?: string[];
  ops?: string[];
  ttl?: string[];
  after?: string[];
  limit?: string[];
  all?: boolean;
  version?: boolean;
  quiet?: boolean;
}

/** Parses argv (without `node` and the script) with env for the defaults of --url and --token. */
export function parseCommandLine(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Parsed {
  const { values, positionals } = readArgv(argv);
  const named = helpOrCommand(values, positionals);
  if (named.kind === "help") return named;
  const { command, operands } = named;
  checkOperands(command, operands);
  checkFlagsApply(command, values);
  checkOperandValues(command, operands);
  const maxConcurrent = values["max-concurrent"] === undefined ? undefined : parseMaxConcurrent(values["max-concurrent"]);
  const mint = command === "token create" ? parseMint(values.prefix, values.ops, values.ttl) : undefined;
  const list = command === "streams" ? parseStreamsListing(operands[0], values.after, values.limit, values.all === true) : undefined;

  const url = values.url ?? nonEmpty(env["MINK_URL"]) ?? DEFAULT_URL;
  checkUrl(url, command);
  const token = values.token ?? nonEmpty(env["MINK_ADMIN_TOKEN"]);
  return {
    kind: "command",
    command,
    operands,
    options: { url, token, json: values.json === true },
    noWait: values["no-wait"] === true,
    dryRun: values["dry-run"] === true,
    maxConcurrent,
    mint,
    quiet: values.quiet === true,
    list,
  };
}

/** argv split into options and positionals; an unknown option or a missing value is a usage error. */
function readArgv(argv: readonly string[]): { values: OptionValues; positionals: string[] } {
  try {
    return parseArgs({
      args: [...argv],
      options: {
        url: { type: "string" },
        token: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
        "no-wait": { type: "boolean" },
        "dry-run": { type: "boolean" },
        "max-concurrent": { type: "string" },
        prefix: { type: "string", multiple: true },
        ops: { type: "string", multiple: true },
        ttl: { type: "string", multiple: true },
        after: { type: "string", multiple: true },
        limit: { type: "string", multiple: true },
        all: { type: "boolean" },
        version: { type: "boolean" },
        quiet: { type: "boolean", short: "q" },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error), commandNamedBy(argv));
  }
}

type Named = { kind: "help"; text: string } | { kind: "command"; command: CommandName; operands: string[] };

/** --version, `mink help [command]`, --help, or the command the positionals name with its operands. */
function helpOrCommand(values: OptionValues, positionals: readonly string[]): Named {
  if (values.version === true) return { kind: "help", text: `mink ${CLI_VERSION}\n` };
  if (positionals[0] === "help") {
    // `mink help [command]`
    const topic = positionals.slice(1);
    if (topic.length === 0) return { kind: "help", text: generalHelp() };
    const resolved = resolveCommand(topic);
    if (resolved.kind === "group") return { kind: "help", text: groupHelp(resolved.group) };
    if (resolved.rest.length > 0) throw new UsageError(`unknown command '${[resolved.command, ...resolved.rest].join(" ")}'`);
    return { kind: "help", text: commandHelp(resolved.command) };
  }
  if (positionals.length === 0) {
    if (values.help === true) return { kind: "help", text: generalHelp() };
    throw new UsageError("no command given");
  }
  const resolved = resolveCommand(positionals);
  if (resolved.kind === "group") {
    if (values.help === true) return { kind: "help", text: groupHelp(resolved.group) };
    const usages = COMMAND_NAMES.filter((name) => name.startsWith(`${resolved.group} `)).map((name) => usageLine(name));
    throw new UsageError(`missing subcommand; usage: ${usages.join(" | ")}`, resolved.group);
  }
  const { command, rest: operands } = resolved;
  if (values.help === true) return { kind: "help", text: commandHelp(command) };
  return { kind: "command", command, operands };
}

/** As many operands as the command takes, the required ones not empty. */
function checkOperands(command: CommandName, operands: readonly string[]): void {
  const spec = COMMANDS[command];
  const most = spec.operands.length + (spec.optionalOperands?.length ?? 0);
  if (operands.length < spec.operands.length || operands.length > most) {
    const got = operands.length < spec.operands.length ? `missing <${spec.operands[operands.length] ?? ""}>` : `unexpected '${operands[most] ?? ""}'`;
    throw new UsageError(`${got}; usage: ${usageLine(command)}`, command);
  }
  // Required operands must not be empty; an optional one may (`mink streams ""` lists every stream).
  for (const [index, operand] of operands.slice(0, spec.operands.length).entries()) {
    if (operand.trim() === "") throw new UsageError(`<${spec.operands[index] ?? ""}> is empty`, command);
  }
}

/** A command's own flags given to another command are usage errors. */
function checkFlagsApply(command: CommandName, values: OptionValues): void {
  if (values["no-wait"] === true && COMMANDS[command].noWait !== true) throw new UsageError(`--no-wait applies only to 'mink drain' and 'mink cluster rebalance'`, command);
  for (const flag of ["dry-run", "max-concurrent"] as const) {
    if (values[flag] !== undefined && command !== "cluster rebalance") throw new UsageError(`--${flag} applies only to 'mink cluster rebalance'`, command);
  }
  for (const flag of ["prefix", "ops", "ttl", "quiet"] as const) {
    if (values[flag] !== undefined && command !== "token create") {
      const hint = flag === "prefix" && command === "streams" ? " (the prefix of 'mink streams' is its operand: mink streams <prefix>)" : "";
      throw new UsageError(`--${flag} applies only to 'mink token create'${hint}`, command);
    }
  }
  for (const flag of ["after", "limit", "all"] as const) {
    if (values[flag] !== undefined && command !== "streams") throw new UsageError(`--${flag} applies only to 'mink streams'`, command);
  }
}

/** The operands the server would refuse: a slot count, a path of slashes only, a table name. */
function checkOperandValues(command: CommandName, operands: readonly string[]): void {
  if (command === "slots") parseSlots(operands[1] ?? "");
  if (command === "stream" || command === "transfer") {
    if ((operands[0] ?? "").replace(/^\/+/, "") === "") throw new UsageError("<path> is empty", command);
  }
  if (command === "table" || command === "table snapshot" || command === "table tier") checkTableName(operands[0] ?? "", command);
}
