// The command line: which command, its operands, and the global options. Pure (argv and env in, a
// parsed command or a UsageError out), so it is tested without a server. Help texts live here too.
import { parseArgs } from "node:util";
import { UsageError } from "./errors.ts";

export const DEFAULT_URL = "http://127.0.0.1:8787";

export type CommandName = "nodes" | "slots" | "stream" | "transfer" | "transfers" | "drain" | "undrain";

interface CommandSpec {
  /** Operand names, all required, in order. */
  readonly operands: readonly string[];
  readonly summary: string;
  /** Extra help lines (options of this command, what it prints). */
  readonly details: readonly string[];
  readonly noWait?: boolean;
}

export const COMMANDS: { readonly [C in CommandName]: CommandSpec } = {
  nodes: {
    operands: [],
    summary: "list the registered nodes: liveness, slots, draining, streams owned",
    details: [],
  },
  slots: {
    operands: ["node", "n"],
    summary: "set how many placement slots a node has (0: it takes no new streams)",
    details: ["<n> is a whole number, 0 or more."],
  },
  stream: {
    operands: ["path"],
    summary: "show one stream's record: owner, epoch, ownership, pending transfer, config",
    details: ["<path> is the stream name as in /v1/stream/<path>, slashes included."],
  },
  transfer: {
    operands: ["path", "node"],
    summary: "ask for a stream to move to another node (returns once the transfer is pending)",
    details: ["Exit 0 also when the same transfer was already pending."],
  },
  transfers: {
    operands: [],
    summary: "list the pending transfers",
    details: [],
  },
  drain: {
    operands: ["node"],
    summary: "drain a node: it takes no new streams and its streams move away; waits until done",
    details: [
      "  --no-wait        return once the drain has begun",
      "",
      "Shows a progress bar on a terminal and one line per change otherwise. Interrupting the wait does",
      "not stop the drain ('mink undrain <node>' does). With --json: the final status (or, with --no-wait,",
      "the server's answer to starting the drain).",
    ],
    noWait: true,
  },
  undrain: {
    operands: ["node"],
    summary: "stop draining a node: it takes new streams again (streams already moved stay where they are)",
    details: [],
  },
};

const COMMAND_NAMES = Object.keys(COMMANDS) as CommandName[];

function isCommand(name: string): name is CommandName {
  return (COMMAND_NAMES as string[]).includes(name);
}

interface GlobalOptions {
  url: string;
  token: string | undefined;
  json: boolean;
}

export type Parsed =
  | { kind: "help"; text: string }
  | { kind: "command"; command: CommandName; operands: string[]; options: GlobalOptions; noWait: boolean };

const GLOBAL_HELP = [
  "Options:",
  "  --url <url>      mink's address (env MINK_URL; default http://127.0.0.1:8787)",
  "  --token <token>  the admin bearer token (env MINK_ADMIN_TOKEN)",
  "  --json           print the server's JSON instead of a table",
  "  -h, --help       show help",
];

function usageLine(command: CommandName): string {
  const spec = COMMANDS[command];
  const operands = spec.operands.map((name) => `<${name}>`).join(" ");
  return `mink ${command}${operands === "" ? "" : ` ${operands}`}${spec.noWait === true ? " [--no-wait]" : ""} [options]`;
}

function commandHelp(command: CommandName): string {
  const spec = COMMANDS[command];
  const lines = [`Usage: ${usageLine(command)}`, "", `${spec.summary[0]?.toUpperCase() ?? ""}${spec.summary.slice(1)}.`];
  if (spec.details.length > 0) lines.push("", ...spec.details);
  lines.push("", ...GLOBAL_HELP);
  return `${lines.join("\n")}\n`;
}

function generalHelp(): string {
  const width = Math.max(...COMMAND_NAMES.map((name) => usageLine(name).length - " [options]".length));
  const lines = [
    "mink: operate a mink service through its admin API.",
    "",
    "Usage: mink <command> [operands] [options]",
    "",
    "Commands:",
    ...COMMAND_NAMES.map((name) => `  ${usageLine(name).replace(/ \[options\]$/, "").padEnd(width)}  ${COMMANDS[name].summary}`),
    "",
    ...GLOBAL_HELP,
    "",
    "Exit codes: 0 success, 1 the server or the network failed, 2 usage error.",
    "Run 'mink <command> --help' for a command's details.",
  ];
  return `${lines.join("\n")}\n`;
}

/** Parses argv (without `node` and the script) with env for the defaults of --url and --token. */
export function parseCommandLine(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Parsed {
  let values: { url?: string; token?: string; json?: boolean; help?: boolean; "no-wait"?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      options: {
        url: { type: "string" },
        token: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
        "no-wait": { type: "boolean" },
      },
      allowPositionals: true,
      strict: true,
    }));
  } catch (error) {
    const first = argv.find((arg) => !arg.startsWith("-"));
    throw new UsageError(error instanceof Error ? error.message : String(error), first !== undefined && isCommand(first) ? first : undefined);
  }

  const [name, ...operands] = positionals;
  if (name === "help") {
    // `mink help [command]`
    const topic = operands[0];
    if (topic === undefined) return { kind: "help", text: generalHelp() };
    if (!isCommand(topic)) throw new UsageError(`unknown command '${topic}'`);
    return { kind: "help", text: commandHelp(topic) };
  }
  if (name === undefined) {
    if (values.help === true) return { kind: "help", text: generalHelp() };
    throw new UsageError("no command given");
  }
  if (!isCommand(name)) throw new UsageError(`unknown command '${name}' (commands: ${COMMAND_NAMES.join(", ")})`);
  const command = name;
  if (values.help === true) return { kind: "help", text: commandHelp(command) };

  const spec = COMMANDS[command];
  if (operands.length !== spec.operands.length) {
    const got = operands.length < spec.operands.length ? `missing <${spec.operands[operands.length] ?? ""}>` : `unexpected '${operands[spec.operands.length] ?? ""}'`;
    throw new UsageError(`${got}; usage: ${usageLine(command)}`, command);
  }
  for (const [index, operand] of operands.entries()) {
    if (operand.trim() === "") throw new UsageError(`<${spec.operands[index] ?? ""}> is empty`, command);
  }
  if (values["no-wait"] === true && spec.noWait !== true) throw new UsageError(`--no-wait applies only to 'mink drain'`, command);
  if (command === "slots") parseSlots(operands[1] ?? "");
  if (command === "stream" || command === "transfer") {
    if ((operands[0] ?? "").replace(/^\/+/, "") === "") throw new UsageError("<path> is empty", command);
  }

  const url = values.url ?? nonEmpty(env["MINK_URL"]) ?? DEFAULT_URL;
  checkUrl(url, command);
  const token = values.token ?? nonEmpty(env["MINK_ADMIN_TOKEN"]);
  return { kind: "command", command, operands, options: { url, token, json: values.json === true }, noWait: values["no-wait"] === true };
}

/** The slot count operand: a whole number, 0 or more. */
export function parseSlots(text: string): number {
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`<n> must be a whole number, 0 or more (got '${text}')`, "slots");
  }
  return Number(text);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

function checkUrl(url: string, command: CommandName): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url: not a URL: '${url}'`, command);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new UsageError(`--url: must be http:// or https:// (got '${url}')`, command);
  }
}
