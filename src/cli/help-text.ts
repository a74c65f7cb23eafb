// The help texts: the general help, a group's, a command's, and the usage line each error repeats, all
// printed from the command table.
import { COMMAND_NAMES, COMMANDS, type CommandName, type Group } from "./command-table.ts";

const GLOBAL_HELP = [
  "Options:",
  "  --url <url>      mink's address, an origin without a path (env MINK_URL; default http://127.0.0.1:8787)",
  "  --token <token>  the admin bearer token (env MINK_ADMIN_TOKEN)",
  "  --json           print the server's JSON instead of a table",
  "  -h, --help       show help",
  "  --version        print mink's version",
];

/** `mink <command> <operands> [flags] [--no-wait] [options]`; `brief` (the general help's list) leaves out the flags. */
export function usageLine(command: CommandName, brief = false): string {
  const spec = COMMANDS[command];
  const words = [
    `mink ${command}`,
    ...spec.operands.map((name) => `<${name}>`),
    ...(spec.optionalOperands ?? []).map((name) => `[<${name}>]`),
    ...(brief ? [] : (spec.flags ?? [])),
  ];
  if (spec.noWait === true) words.push("[--no-wait]");
  return `${words.join(" ")} [options]`;
}

export function commandHelp(command: CommandName): string {
  const spec = COMMANDS[command];
  const lines = [`Usage: ${usageLine(command)}`, "", `${spec.summary[0]?.toUpperCase() ?? ""}${spec.summary.slice(1)}.`];
  if (spec.details.length > 0) lines.push("", ...spec.details);
  lines.push("", ...GLOBAL_HELP);
  return `${lines.join("\n")}\n`;
}

export function generalHelp(): string {
  const width = Math.max(...COMMAND_NAMES.map((name) => usageLine(name, true).length - " [options]".length));
  const lines = [
    "mink: operate a mink service through its admin API.",
    "",
    "Usage: mink <command> [operands] [options]",
    "",
    "Commands:",
    ...COMMAND_NAMES.map((name) => `  ${usageLine(name, true).replace(/ \[options\]$/, "").padEnd(width)}  ${COMMANDS[name].summary}`),
    "",
    ...GLOBAL_HELP,
    "",
    "Exit codes: 0 success, 1 the server or the network failed, 2 usage error.",
    "Run 'mink <command> --help' for a command's details.",
  ];
  return `${lines.join("\n")}\n`;
}

/** The help of a group of two-word commands (`mink cluster --help`). */
export function groupHelp(group: Group): string {
  const names = COMMAND_NAMES.filter((name) => name.startsWith(`${group} `));
  const width = Math.max(...names.map((name) => usageLine(name, true).length - " [options]".length));
  const lines = [
    `Usage: mink ${group} <subcommand> [options]`,
    "",
    "Subcommands:",
    ...names.map((name) => `  ${usageLine(name, true).replace(/ \[options\]$/, "").padEnd(width)}  ${COMMANDS[name].summary}`),
    "",
    "Run 'mink <command> --help' for a command's details.",
  ];
  return `${lines.join("\n")}\n`;
}
