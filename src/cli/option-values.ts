// The values of the command-specific options and operands, checked as the server would check them so a
// request it would refuse is a usage error and nothing is sent: --limit, --ttl, --ops, a table name, a URL.
import { UsageError } from "./errors.ts";
import type { CommandName } from "./command-table.ts";
import {
  ACCESS_OPS,
  type AccessOp,
  DEFAULT_TOKEN_TTL_SECONDS,
  MAX_CONCURRENT,
  MAX_STREAMS_LIMIT,
  MAX_TABLE_NAME_LENGTH,
  MAX_TOKEN_PREFIXES,
  MAX_TOKEN_TTL_SECONDS,
  TABLE_NAME,
  TTL_UNITS,
} from "./limits.ts";

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

/** `mink streams [prefix]`'s options: --after and --limit at most once each, --limit 1 to MAX_STREAMS_LIMIT. */
export function parseStreamsListing(prefix: string | undefined, after: string[] | undefined, limit: string[] | undefined, all: boolean): StreamsListing {
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
export function parseMint(prefixes: string[] | undefined, ops: string[] | undefined, ttl: string[] | undefined): TokenMint {
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
export function checkTableName(name: string, command: CommandName): void {
  if (name.length > MAX_TABLE_NAME_LENGTH || !TABLE_NAME.test(name)) {
    throw new UsageError(`<name> must be 1 to ${MAX_TABLE_NAME_LENGTH} of [A-Za-z0-9_-], starting with a letter or digit (got '${name}')`, command);
  }
}

/** --max-concurrent: a whole number from 1 to 64. */
export function parseMaxConcurrent(text: string): number {
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

export function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

export function checkUrl(url: string, command: CommandName): void {
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
