// The server's bounds and formats that the CLI checks before it sends anything (the CLI imports nothing of
// the Worker: test/cli/args.test.ts holds these equal to the server's), shared by the command table's help
// text and the option parsers.
/** The most transfers `mink cluster rebalance` may keep pending (the admin API's bound). */
export const MAX_CONCURRENT = 64;
/**
 * The server's rules for a token (src/core/auth/access.ts and claims.ts; the CLI imports nothing of the
 * Worker, test/cli/args.test.ts checks these are the same): the operations, prefixes per token, longest life.
 */
export const ACCESS_OPS = ["read", "append", "create", "delete", "subscribe"] as const;
export type AccessOp = (typeof ACCESS_OPS)[number];
export const MAX_TOKEN_PREFIXES = 32;
export const MAX_TOKEN_TTL_SECONDS = 366 * 24 * 3600;
/** The most streams one page of `mink streams` may ask for (the admin API's bound), and the pages `--all` reads at most. */
export const MAX_STREAMS_LIMIT = 1000;
export const MAX_STREAMS_PAGES = 100;
/** A table name as the server takes it (src/core/tables/definition.ts, D14): 1 to 128 of [A-Za-z0-9_-], first a letter or digit. */
export const MAX_TABLE_NAME_LENGTH = 128;
export const TABLE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
/** `mink table snapshot <name>` and `mink table tier <name>`: the subcommands of `mink table` (so `mink table snapshot` never shows a table of that name). */
export const TABLE_SUBCOMMANDS = ["snapshot", "tier"] as const;
/** `mink token create` without --ttl: an hour. */
export const DEFAULT_TOKEN_TTL_SECONDS = 3600;
export const TTL_UNITS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
