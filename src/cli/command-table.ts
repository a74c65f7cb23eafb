// The command table: every mink command, its operands, flags and help text, and the groups of two-word
// commands. Data only; args.ts parses against it and help-text.ts prints it.
import { ACCESS_OPS, MAX_STREAMS_LIMIT, MAX_STREAMS_PAGES, MAX_TOKEN_PREFIXES, TABLE_SUBCOMMANDS } from "./limits.ts";

export type CommandName =
  | "nodes"
  | "slots"
  | "stream"
  | "streams"
  | "tables"
  | "table"
  | "table snapshot"
  | "table tier"
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
export type Group = (typeof GROUPS)[number];

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
    summary: "list the tables: name, kind (primary-key or log), buckets, the last tiering round",
    details: [
      "TIERED (once some table was tiered, docs/tiering.md): the Iceberg version of the last round the coordinator",
      "recorded and how long ago; 'mink table <name>' shows how far behind it is.",
      "With --json: the server's answer, {tables: [{name, buckets, partitions, kind, tiered}]}.",
    ],
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
      "Once the table was tiered (docs/tiering.md): 'tiered' names the Iceberg snapshot and how many changelog",
      "records (and for how long) it is behind, 'metadata' the file to point a reader at, and TIERED per bucket",
      "the changelog records in the tiered copy.",
      `${TABLE_SUBCOMMANDS.map((sub) => `'mink table ${sub} <name>'`).join(" and ")} are subcommands: a table named ${TABLE_SUBCOMMANDS.map((sub) => `'${sub}'`).join(" or ")} is listed by 'mink tables'.`,
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
  "table tier": {
    operands: ["name"],
    summary: "tier a table into its Apache Iceberg copy now, at the coordinator: the snapshot and offsets",
    details: [
      "Runs a tiering round (docs/tiering.md): each bucket's changelog since the last snapshot becomes Parquet",
      "files and a new snapshot of the Iceberg table at s3://<bucket>/tiered/<name>/. Prints the snapshot, the",
      "metadata file to point a reader at, and per bucket the changelog offsets the round covered (FROM, TO) or",
      "why it was not read (it is read next round). Fails (exit 1) after printing when a bucket was not read.",
      "With --json: the server's answer, {table, snapshotId, committed, version, metadataKey, rows, deletes, buckets}.",
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
      "Ids never start with '-'; one minted before 2026-12-06 may: put it last, after '--' (mink token revoke [options] -- <id>).",
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

export const COMMAND_NAMES = Object.keys(COMMANDS) as CommandName[];

export function isCommand(name: string): name is CommandName {
  return (COMMAND_NAMES as string[]).includes(name);
}

export function isGroup(word: string): word is Group {
  return (GROUPS as readonly string[]).includes(word);
}
