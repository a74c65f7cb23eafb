// The command line: which command, its operands, and the global options. Pure (argv and env in, a
// parsed command or a UsageError out), so it is tested without a server. Help texts live here too.
import { parseArgs } from "node:util";
import { UsageError } from "./errors.ts";

export const DEFAULT_URL = "http://127.0.0.1:8787";

export type CommandName =
  | "nodes"
  | "slots"
  | "stream"
  | "streams"
  | "tables"
  | "table"
  | "table snapshot"
  | "transfer"
  | "transfers"
  | "drain"
  | "undrain"
  | "cluster rebalance"
  | "token create"
  | "token revoke"
  | "token list";

/** The first words of the two-word commands (`mink cluster rebalance`, `mink token create`). */
const GROUPS = ["cluster", "token"] as const;
type Group = (typeof GROUPS)[number];

/** The most transfers `mink cluster rebalance` may keep pending (the admin API's bound). */
const MAX_CONCURRENT = 64;
/**
 * The server's rules for a token (src/core/auth/access.ts and claims.ts; the CLI imports nothing of the
 * Worker, test/cli/args.test.ts checks these are the same): the operations, prefixes per token, longest life.
 */
export const ACCESS_OPS = ["read", "append", "create", "delete", "subscribe"] as const;
type AccessOp = (typeof ACCESS_OPS)[number];
export const MAX_TOKEN_PREFIXES = 32;
export const MAX_TOKEN_TTL_SECONDS = 366 * 24 * 3600;
/** The most streams one page of `mink streams` may ask for (the admin API's bound), and the pages `--all` reads at most. */
export const MAX_STREAMS_LIMIT = 1000;
export const MAX_STREAMS_PAGES = 100;
/** A table name as the server takes it (src/core/tables/definition.ts, D14): 1 to 128 of [A-Za-z0-9_-], first a letter or digit. */
export const MAX_TABLE_NAME_LENGTH = 128;
const TABLE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
/** `mink table snapshot <name>`: the one subcommand of `mink table` (so `mink table snapshot` never shows a table of that name). */
const TABLE_SUBCOMMAND = "snapshot";
/** `mink token create` without --ttl: an hour. */
const DEFAULT_TOKEN_TTL_SECONDS = 3600;
const TTL_UNITS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

interface CommandSpec {
  /** Operand names, all required, in order. */
  readonly operands: readonly string[];
  /** Operand names that may follow the required ones, each optional (`[<prefix>]`). */
  readonly optionalOperands?: readonly string[];
  readonly summary: string;
  /** Extra help lines (options of this command, what it prints). */
  readonly details: readonly string[];
  readonly noWait?: boolean;
  /** Options of this command alone, for its usage line (e.g. `[--dry-run]`). */
  readonly flags?: readonly string[];
}

export const COMMANDS: { readonly [C in CommandName]: CommandSpec } = {
  nodes: {
    operands: [],
    summary: "list the registered nodes: liveness, slots, draining, streams and table buckets owned",
    details: [
      "STREAMS counts the streams of the stream API a node owns (what 'mink streams --all' lists), OPENED",
      "those it serves now, BUCKETS the table buckets it leads (streams named __ds/table/..., which no",
      "stream listing shows; 'mink tables' lists the tables). STREAMS plus BUCKETS is all a node owns.",
    ],
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
  streams: {
    operands: [],
    optionalOperands: ["prefix"],
    summary: "list the streams by name, one page at a time: owner, epoch, ownership, bytes, tail offset",
    details: [
      `  --after <name>  start after this name (exclusive): the 'next' a previous page printed`,
      `  --limit <n>     streams per page, 1 to ${MAX_STREAMS_LIMIT} (default 100; ${MAX_STREAMS_LIMIT} with --all)`,
      `  --all           follow the pages to the end, at most ${MAX_STREAMS_PAGES} of them (exit 1 when there are more)`,
      "",
      "<prefix> keeps the names that start with it (none: every stream), as the name is written in",
      "/v1/stream/<name>, without the leading '/'. Names sort by UTF-16 code unit (upper case before lower",
      "case). Prints NAME, OWNER, EPOCH, STATE (the ownership in the metadata log: unplaced, placed, opened,",
      "closed; '-> <node>' while a transfer is pending), BYTES and TAIL (the Stream-Next-Offset; '(closed)'",
      "when the writer closed the stream), asked of each owner node: '-' when the stream is not opened or its",
      "node did not answer. When more streams follow, the last line is the command for the next page. With",
      "--json: the server's page {version, streams, next} (with --all, every page's streams in one).",
    ],
    flags: ["[--after <name>]", "[--limit <n>]", "[--all]"],
  },
  tables: {
    operands: [],
    summary: "list the tables: name, kind (primary-key or log), buckets",
    details: ["With --json: the server's answer, {tables: [{name, buckets, kind}]}."],
  },
  table: {
    operands: ["name"],
    summary: "show a table's definition and its buckets: leader, epoch, next offset, rows, snapshot offset",
    details: [
      "Prints the definition (columns with their types, primary key, bucket key, bucket count), then a row per",
      "bucket: BUCKET, LEADER (the node that leads it), EPOCH (the leader epoch, the bucket stream's epoch),",
      "NEXT OFFSET (the bucket stream's tail), ROWS (a primary-key bucket's rows, a log bucket's records) and",
      "SNAPSHOT (the offset the newest committed snapshot covers). NEXT OFFSET and ROWS come from the leader's",
      "memory: '-' when it has not loaded the bucket (no request since it took it) or did not answer within 2 s.",
      `'mink table ${TABLE_SUBCOMMAND} <name>' is a subcommand: a table named '${TABLE_SUBCOMMAND}' is listed by 'mink tables'.`,
      "With --json: the server's answer, {name, definition, buckets}.",
    ],
  },
  "table snapshot": {
    operands: ["name"],
    summary: "snapshot a table's primary-key buckets now, at their leaders: the offset each snapshot covers",
    details: [
      "Prints per bucket the offset the new snapshot covers, or why there is none. 'not_loaded': the leader",
      "has no tablet loaded for the bucket (no request since it took it; a log table keeps none), so there is",
      "nothing to snapshot there. Fails (exit 1) after printing when a bucket's snapshot failed for any other",
      "reason. With --json: the server's answer, {table, buckets: [{bucket, coveredOffset, error}]}.",
    ],
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
      "Each round reads the progress and, when streams on the node are not moving (one that arrived on a",
      "transfer pending when the drain began), asks for the drain again, which moves them too. Not done",
      "while a transfer to the node is pending. Fails (exit 1) when streams have no other node to go to",
      "(add a node or raise a node's slots). Shows a progress bar on a terminal and one line per change",
      "otherwise. Interrupting the wait does not stop the drain ('mink undrain <node>' does). With --json:",
      "the last answer (done), or with --no-wait the server's answer to starting the drain.",
    ],
    noWait: true,
  },
  undrain: {
    operands: ["node"],
    summary: "stop draining a node: it takes new streams again (streams already moved stay where they are)",
    details: [],
  },
  "cluster rebalance": {
    operands: [],
    summary: "even out streams per slot over the live nodes, a few transfers at a time; waits until done",
    details: [
      "  --dry-run             print the plan and move nothing: orphans, moves, the mean load and the bands",
      "  --max-concurrent <n>  keep at most n transfers pending at once, 1 to 64 (default 4; transfers",
      "                        begun by anything else count too)",
      "  --no-wait             begin the first moves and return (run it again to begin the next ones)",
      "",
      "Load is a node's streams per slot, over the live nodes that have slots and are not draining. Orphans",
      "(streams of a node that is not live) come first: the coordinator re-leads them, this command waits for",
      "it. Then streams move, one transfer each, from nodes above 110% of the mean load to nodes below 90%.",
      "Each round asks the server to begin the next moves as earlier ones finish. Shows a progress bar on a",
      "terminal and one line per change otherwise. Fails (exit 1) when a stream has no live node to go to, or",
      "when nothing has changed for 5 minutes. Interrupting the wait begins nothing more; transfers already",
      "begun finish. With --json: the server's last answer (with --dry-run, the plan).",
    ],
    noWait: true,
    flags: ["[--dry-run]", "[--max-concurrent <n>]"],
  },
  "token create": {
    operands: [],
    summary: "mint an access token for the stream API: which stream-name prefixes, which operations, how long",
    details: [
      `  --prefix <prefix>  a stream-name prefix the token covers (required; repeat it for more, at most ${MAX_TOKEN_PREFIXES});`,
      "                     a prefix covers every name that starts with it, --prefix \"\" every stream",
      "                     (and every table); a table's requests need --prefix __ds/table/<name>/, or",
      "                     --prefix __ds/table/ for every table (no stream prefix covers a table)",
      "  --ops <ops>        the operations it grants (required), comma-separated, from:",
      `                     ${ACCESS_OPS.join(", ")}`,
      "                     creating a stream or a table needs create (a PUT), writing needs append,",
      "                     reading read: a producer that creates its stream needs --ops create,append,read",
      "  --ttl <ttl>        how long it is valid: a whole number and a unit, s, m, h or d (90s, 30m, 1h, 7d),",
      "                     at most 366d (default 1h)",
      "  --quiet, -q        print only the token, for TOKEN=$(mink token create ... --quiet)",
      "",
      "Prints the token's id, the token, when it expires, its prefixes and operations. The token is shown only",
      "here: the server keeps its id, never the token ('mink token revoke <id or token>' revokes it). With",
      "--json: the server's answer.",
    ],
    flags: ["--prefix <prefix>...", "--ops <ops>", "[--ttl <ttl>]", "[--quiet]"],
  },
  "token revoke": {
    operands: ["id or token"],
    summary: "revoke an access token by its id, or by the token itself (every node refuses it shortly after)",
    details: [
      "<id> is the id 'mink token create' and 'mink token list' print, or the token itself: its id is read",
      "from it (the server still checks that a live token has that id).",
      "Fails (exit 1) when no live token has this id (unknown, or expired already); revoking twice is fine.",
      'With --json: {"id": <id>, "revoked": true} (the server answers 204, without a body).',
    ],
  },
  "token list": {
    operands: [],
    summary: "list the access tokens that have not expired: id, prefixes, operations, expiry, revoked",
    details: [
      "Never the tokens themselves, only their ids. Reads every page of the list (at most 100 pages of 100);",
      "fails (exit 1) after printing them when there are more. A prefix \"\" (every stream) prints as \"\", and",
      "spaces, commas, quotes and % in a prefix as %20, %2C, %22, %25. With --json: the tokens of every page",
      "in the server's shape, {tokens, next}.",
    ],
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

/** What `mink streams` asks for: GET /admin/streams's query, and whether to follow `next`. */
export interface StreamsListing {
  prefix: string;
  after: string | null;
  /** undefined: the server's default (100), or MAX_STREAMS_LIMIT with --all. */
  limit: number | undefined;
  all: boolean;
}

/** What `mink token create` asks for: the body of POST /admin/tokens. */
export interface TokenMint {
  prefixes: string[];
  ops: AccessOp[];
  ttlSeconds: number;
}

const GLOBAL_HELP = [
  "Options:",
  "  --url <url>      mink's address, an origin without a path (env MINK_URL; default http://127.0.0.1:8787)",
  "  --token <token>  the admin bearer token (env MINK_ADMIN_TOKEN)",
  "  --json           print the server's JSON instead of a table",
  "  -h, --help       show help",
  "  --version        print mink's version",
];

/** `mink <command> <operands> [flags] [--no-wait] [options]`; `brief` (the general help's list) leaves out the flags. */
function usageLine(command: CommandName, brief = false): string {
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

function commandHelp(command: CommandName): string {
  const spec = COMMANDS[command];
  const lines = [`Usage: ${usageLine(command)}`, "", `${spec.summary[0]?.toUpperCase() ?? ""}${spec.summary.slice(1)}.`];
  if (spec.details.length > 0) lines.push("", ...spec.details);
  lines.push("", ...GLOBAL_HELP);
  return `${lines.join("\n")}\n`;
}

function generalHelp(): string {
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
function groupHelp(group: Group): string {
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

function isGroup(word: string): word is Group {
  return (GROUPS as readonly string[]).includes(word);
}

type Resolved = { kind: "command"; command: CommandName; rest: string[] } | { kind: "group"; group: Group };

/**
 * The command named by the first positionals: one word, or a group and its subcommand (`cluster
 * rebalance`). A group alone is the group (help, or a usage error); anything else is a usage error.
 */
function resolveCommand(words: readonly string[]): Resolved {
  const [first = "", second, ...rest] = words;
  // `mink table <name>` and `mink table snapshot <name>`: a command with a subcommand, not a group.
  if (first === "table" && second === TABLE_SUBCOMMAND) return { kind: "command", command: "table snapshot", rest };
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

/** Parses argv (without `node` and the script) with env for the defaults of --url and --token. */
export function parseCommandLine(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Parsed {
  let values: {
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
  };
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
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error), commandNamedBy(argv));
  }

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
  if (values["no-wait"] === true && spec.noWait !== true) throw new UsageError(`--no-wait applies only to 'mink drain' and 'mink cluster rebalance'`, command);
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
  if (command === "slots") parseSlots(operands[1] ?? "");
  if (command === "stream" || command === "transfer") {
    if ((operands[0] ?? "").replace(/^\/+/, "") === "") throw new UsageError("<path> is empty", command);
  }
  if (command === "table" || command === "table snapshot") checkTableName(operands[0] ?? "", command);
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

/** `mink streams [prefix]`'s options: --after and --limit at most once each, --limit 1 to MAX_STREAMS_LIMIT. */
function parseStreamsListing(prefix: string | undefined, after: string[] | undefined, limit: string[] | undefined, all: boolean): StreamsListing {
  const command = "streams";
  if (after !== undefined && after.length > 1) throw new UsageError("--after is given once", command);
  if (limit !== undefined && limit.length > 1) throw new UsageError("--limit is given once", command);
  const limitText = limit?.[0];
  if (limitText !== undefined && (!/^\d+$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > MAX_STREAMS_LIMIT)) {
    throw new UsageError(`--limit must be a whole number from 1 to ${MAX_STREAMS_LIMIT} (got '${limitText}')`, command);
  }
  for (const [what, value] of [["<prefix>", prefix], ["--after", after?.[0]]] as const) {
    if (value !== undefined && /[\u0000-\u001f\u007f]/.test(value)) throw new UsageError(`${what} must not contain control characters`, command);
  }
  const afterName = after?.[0];
  return {
    // Names never start with '/': `mink streams /demo/` means demo/, as `mink stream /demo/x` means demo/x.
    prefix: (prefix ?? "").replace(/^\/+/, ""),
    after: afterName === undefined || afterName === "" ? null : afterName,
    limit: limitText === undefined ? undefined : Number(limitText),
    all,
  };
}

/** `mink token create`'s options: --prefix (one or more), --ops (once), --ttl (at most once; default 1h). */
function parseMint(prefixes: string[] | undefined, ops: string[] | undefined, ttl: string[] | undefined): TokenMint {
  const command = "token create";
  if (prefixes === undefined) throw new UsageError(`--prefix is required: a stream-name prefix the token covers (--prefix "" for every stream)`, command);
  if (prefixes.length > MAX_TOKEN_PREFIXES) throw new UsageError(`at most ${MAX_TOKEN_PREFIXES} --prefix (got ${prefixes.length})`, command);
  for (const prefix of prefixes) {
    if (prefix.startsWith("/")) throw new UsageError(`--prefix is the start of a stream name, without a leading '/' (got '${prefix}')`, command);
  }
  if (ops === undefined) throw new UsageError(`--ops is required: the operations the token grants, comma-separated, from ${ACCESS_OPS.join(", ")}`, command);
  if (ops.length > 1) throw new UsageError("--ops is given once, the operations comma-separated (e.g. --ops read,append)", command);
  if (ttl !== undefined && ttl.length > 1) throw new UsageError("--ttl is given once", command);
  return { prefixes, ops: parseOps(ops[0] ?? ""), ttlSeconds: ttl?.[0] === undefined ? DEFAULT_TOKEN_TTL_SECONDS : parseTtl(ttl[0]) };
}

/** --ops: comma-separated names from ACCESS_OPS, each at most once. */
function parseOps(text: string): AccessOp[] {
  const known: readonly string[] = ACCESS_OPS;
  const ops: AccessOp[] = [];
  for (const op of text.split(",")) {
    if (!known.includes(op)) {
      const what = op === "" ? "an empty operation" : `unknown operation '${op}'`;
      throw new UsageError(`--ops: ${what} (got '${text}'; operations: ${ACCESS_OPS.join(", ")}, comma-separated)`, "token create");
    }
    if ((ops as string[]).includes(op)) throw new UsageError(`--ops: '${op}' is given twice (got '${text}')`, "token create");
    ops.push(op as AccessOp);
  }
  return ops;
}

/** --ttl: `<n>s`, `<n>m`, `<n>h` or `<n>d`, a whole number n of 1 or more, at most 366 days in all. */
function parseTtl(text: string): number {
  const match = /^(\d+)([smhd])$/.exec(text);
  const seconds = match === null ? NaN : Number(match[1]) * TTL_UNITS[match[2] as keyof typeof TTL_UNITS];
  if (!Number.isSafeInteger(seconds) || seconds < 1 || seconds > MAX_TOKEN_TTL_SECONDS) {
    throw new UsageError(`--ttl must be a whole number and a unit, s, m, h or d (90s, 30m, 1h, 7d), from 1s to 366d (got '${text}')`, "token create");
  }
  return seconds;
}

/** A table name the server would refuse is a usage error: nothing is sent. */
function checkTableName(name: string, command: CommandName): void {
  if (name.length > MAX_TABLE_NAME_LENGTH || !TABLE_NAME.test(name)) {
    throw new UsageError(`<name> must be 1 to ${MAX_TABLE_NAME_LENGTH} of [A-Za-z0-9_-], starting with a letter or digit (got '${name}')`, command);
  }
}

/** --max-concurrent: a whole number from 1 to 64. */
function parseMaxConcurrent(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > MAX_CONCURRENT) {
    throw new UsageError(`--max-concurrent must be a whole number from 1 to ${MAX_CONCURRENT} (got '${text}')`, "cluster rebalance");
  }
  return Number(text);
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
  // The admin API hangs off the origin: a stream or node path here would be sent `/admin/...` below it.
  if (parsed.pathname !== "/" || parsed.search !== "" || parsed.hash !== "") {
    throw new UsageError(`--url: mink's address is an origin without a path (got '${url}'); use --url ${parsed.origin}`, command);
  }
}
