// The command line of `mink`: commands, operands, options and their environment defaults, and which
// mistakes are usage errors (exit 2) before anything is sent.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { CLI_VERSION, DEFAULT_URL, parseCommandLine, type Parsed } from "../../src/cli/args.ts";
import { COMMANDS } from "../../src/cli/command-table.ts";
import { ACCESS_OPS, MAX_TABLE_NAME_LENGTH, MAX_TOKEN_PREFIXES, MAX_TOKEN_TTL_SECONDS } from "../../src/cli/limits.ts";
import { UsageError } from "../../src/cli/errors.ts";
import { ACCESS_OPS as SERVER_ACCESS_OPS } from "../../src/core/auth/access.ts";
import { MAX_TOKEN_PREFIXES as SERVER_MAX_TOKEN_PREFIXES, MAX_TOKEN_TTL_SECONDS as SERVER_MAX_TOKEN_TTL_SECONDS } from "../../src/core/auth/claims.ts";
import { MAX_TABLE_NAME_LENGTH as SERVER_MAX_TABLE_NAME_LENGTH, parseTableName } from "../../src/core/tables/definition.ts";

function command(argv: string[], env: Record<string, string | undefined> = {}): Extract<Parsed, { kind: "command" }> {
  const parsed = parseCommandLine(argv, env);
  if (parsed.kind !== "command") throw new Error(`expected a command, got help for ${argv.join(" ")}`);
  return parsed;
}

function usageError(argv: string[], env: Record<string, string | undefined> = {}): UsageError {
  try {
    parseCommandLine(argv, env);
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error(`no usage error for: ${argv.join(" ")}`);
}

describe("mink command line", () => {
  it("mink --version prints the package's version (issue 22: it was a usage error)", () => {
    const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    expect(CLI_VERSION).toBe(version);
    expect(parseCommandLine(["--version"], {})).toEqual({ kind: "help", text: `mink ${version}\n` });
  });

  it("a --url with a path says what is wrong with it, not what the server answers below it (issue 22)", () => {
    for (const url of ["http://127.0.0.1:8787/v1/stream", "http://127.0.0.1:8787/admin/", "http://127.0.0.1:8787/?x=1"]) {
      expect(usageError(["nodes", "--url", url]).message).toBe(`--url: mink's address is an origin without a path (got '${url}'); use --url http://127.0.0.1:8787`);
      expect(usageError(["nodes"], { MINK_URL: url }).message).toContain("an origin without a path");
    }
    expect(command(["nodes", "--url", "http://127.0.0.1:8787/"]).options.url).toBe("http://127.0.0.1:8787/");
  });

  it("parses each command with its operands", () => {
    expect(command(["nodes"])).toMatchObject({ command: "nodes", operands: [] });
    expect(command(["slots", "node-1", "2"])).toMatchObject({ command: "slots", operands: ["node-1", "2"] });
    expect(command(["stream", "demo/a/b"])).toMatchObject({ command: "stream", operands: ["demo/a/b"] });
    expect(command(["transfer", "demo/x", "node-2"])).toMatchObject({ command: "transfer", operands: ["demo/x", "node-2"] });
    expect(command(["transfers"])).toMatchObject({ command: "transfers", operands: [] });
    expect(command(["drain", "node-0"])).toMatchObject({ command: "drain", operands: ["node-0"], noWait: false });
    expect(command(["undrain", "node-0"])).toMatchObject({ command: "undrain", operands: ["node-0"] });
    expect(command(["cluster", "rebalance"])).toMatchObject({ command: "cluster rebalance", operands: [], noWait: false, dryRun: false, maxConcurrent: undefined });
  });

  it("parses mink streams with an optional prefix, --after, --limit and --all", () => {
    expect(command(["streams"])).toMatchObject({ command: "streams", operands: [], list: { prefix: "", after: null, limit: undefined, all: false } });
    expect(command(["streams", "demo/", "--after", "demo/b", "--limit", "20", "--all"])).toMatchObject({
      operands: ["demo/"],
      list: { prefix: "demo/", after: "demo/b", limit: 20, all: true },
    });
    expect(command(["streams", "//demo/", "--after="]).list).toEqual({ prefix: "demo/", after: null, limit: undefined, all: false });
    expect(command(["nodes"]).list).toBeUndefined();
    for (const bad of ["0", "1001", "1.5", "", "-1"]) expect(usageError(["streams", `--limit=${bad}`]).message).toBe(`--limit must be a whole number from 1 to 1000 (got '${bad}')`);
    expect(usageError(["streams", "a", "b"]).message).toMatch(/^unexpected 'b'; usage: mink streams \[<prefix>\] \[--after <name>\] \[--limit <n>\] \[--all\]/);
    expect(usageError(["streams", "--limit", "1", "--limit", "2"]).message).toBe("--limit is given once");
    expect(usageError(["streams", "a\u0001"]).message).toBe("<prefix> must not contain control characters");
    for (const flag of ["--all", "--after=x", "--limit=1"]) expect(usageError(["transfers", flag]).message).toMatch(/applies only to 'mink streams'$/);
  });

  it("parses mink cluster rebalance with --dry-run, --max-concurrent and --no-wait, before or after the words", () => {
    expect(command(["cluster", "rebalance", "--dry-run"])).toMatchObject({ command: "cluster rebalance", dryRun: true, maxConcurrent: undefined });
    expect(command(["--max-concurrent", "8", "cluster", "rebalance", "--no-wait", "--json"])).toMatchObject({
      command: "cluster rebalance",
      dryRun: false,
      maxConcurrent: 8,
      noWait: true,
      options: { json: true },
    });
    expect(command(["cluster", "--max-concurrent=1", "rebalance"]).maxConcurrent).toBe(1);
    expect(command(["cluster", "rebalance", "--max-concurrent", "64"]).maxConcurrent).toBe(64);
  });

  it("rejects a bad --max-concurrent, the rebalance flags elsewhere, and a cluster subcommand that does not exist", () => {
    for (const bad of ["0", "65", "1.5", "four", "", "-1"]) {
      const error = usageError(["cluster", "rebalance", `--max-concurrent=${bad}`]);
      expect(error.message).toBe(`--max-concurrent must be a whole number from 1 to 64 (got '${bad}')`);
      expect(error.command).toBe("cluster rebalance");
    }
    expect(usageError(["cluster", "rebalance", "--max-concurrent"]).message).toMatch(/--max-concurrent/);
    expect(usageError(["drain", "node-1", "--dry-run"]).message).toBe("--dry-run applies only to 'mink cluster rebalance'");
    expect(usageError(["nodes", "--max-concurrent", "2"]).message).toBe("--max-concurrent applies only to 'mink cluster rebalance'");
    expect(usageError(["cluster"]).message).toMatch(/^missing subcommand; usage: mink cluster rebalance /);
    expect(usageError(["cluster", "rebalanse"]).message).toMatch(/unknown command 'cluster rebalanse'/);
    expect(usageError(["cluster", "rebalance", "now"]).message).toMatch(/unexpected 'now'/);
    expect(usageError(["cluster rebalance"]).message).toMatch(/unknown command 'cluster rebalance'/); // one argument is not two words
    const unknownOption = usageError(["cluster", "rebalance", "--force"]);
    expect(unknownOption.command).toBe("cluster rebalance");
  });

  it("defaults the url to the local dev server and takes no token when none is given", () => {
    expect(command(["nodes"]).options).toEqual({ url: DEFAULT_URL, token: undefined, json: false });
    expect(DEFAULT_URL).toBe("http://127.0.0.1:8787");
  });

  it("takes --url and --token from the environment, and the flags over the environment", () => {
    const env = { MINK_URL: "http://mink.example:1234", MINK_ADMIN_TOKEN: "from-env" };
    expect(command(["nodes"], env).options).toEqual({ url: "http://mink.example:1234", token: "from-env", json: false });
    expect(command(["nodes", "--url", "https://other.example", "--token=flag"], env).options).toEqual({
      url: "https://other.example",
      token: "flag",
      json: false,
    });
  });

  it("treats empty environment variables as unset", () => {
    expect(command(["nodes"], { MINK_URL: "", MINK_ADMIN_TOKEN: "" }).options).toEqual({ url: DEFAULT_URL, token: undefined, json: false });
  });

  it("accepts options before or after the command, and --no-wait for drain", () => {
    expect(command(["--json", "drain", "node-1", "--no-wait"])).toMatchObject({ options: { json: true }, noWait: true });
  });

  it("answers --help, -h and `help <command>` with help text instead of running anything", () => {
    for (const argv of [["--help"], ["-h"], ["help"]]) {
      const parsed = parseCommandLine(argv, {});
      expect(parsed.kind).toBe("help");
      if (parsed.kind === "help") for (const name of Object.keys(COMMANDS)) expect(parsed.text).toContain(`mink ${name}`);
    }
    for (const name of Object.keys(COMMANDS)) {
      const words = name.split(" ");
      for (const argv of [[...words, "--help"], ["help", ...words]]) {
        const parsed = parseCommandLine(argv, {});
        expect(parsed.kind).toBe("help");
        if (parsed.kind === "help") expect(parsed.text).toContain(`Usage: mink ${name}`);
      }
    }
  });

  it("gives a group's help for `mink cluster --help` and `mink help cluster`, and the rebalance's options in its own", () => {
    for (const argv of [["cluster", "--help"], ["help", "cluster"]]) {
      const parsed = parseCommandLine(argv, {});
      expect(parsed).toMatchObject({ kind: "help", text: expect.stringMatching(/^Usage: mink cluster <subcommand>[^]*mink cluster rebalance/) as unknown });
    }
    const parsed = parseCommandLine(["cluster", "rebalance", "-h"], {});
    expect(parsed.kind === "help" && parsed.text).toMatch(/^Usage: mink cluster rebalance \[--dry-run\] \[--max-concurrent <n>\] \[--no-wait\] \[options\]\n/);
    expect(parsed.kind === "help" && parsed.text).toMatch(/110% of the mean load/);
  });

  it("gives help even when the operands are missing", () => {
    expect(parseCommandLine(["slots", "--help"], {}).kind).toBe("help");
  });

  it("rejects a missing command, an unknown command and an unknown option", () => {
    expect(usageError([]).message).toMatch(/no command/);
    expect(usageError(["nodez"]).message).toMatch(/unknown command 'nodez'/);
    expect(usageError(["help", "nodez"]).message).toMatch(/unknown command 'nodez'/);
    const unknownOption = usageError(["nodes", "--verbose"]);
    expect(unknownOption.message).toMatch(/--verbose/);
    expect(unknownOption.command).toBe("nodes");
  });

  it("rejects missing and extra operands, naming what is wrong", () => {
    expect(usageError(["slots", "node-1"]).message).toMatch(/missing <n>/);
    expect(usageError(["stream"]).message).toMatch(/missing <path>/);
    expect(usageError(["transfer", "a/b"]).message).toMatch(/missing <node>/);
    expect(usageError(["nodes", "extra"]).message).toMatch(/unexpected 'extra'/);
    expect(usageError(["drain"]).command).toBe("drain");
  });

  it("rejects a slot count that is not a whole number of 0 or more", () => {
    for (const bad of ["1.5", "two", "1e3", "99999999999999999999"]) {
      expect(usageError(["slots", "node-1", bad]).message).toBe(`<n> must be a whole number, 0 or more (got '${bad}')`);
    }
    expect(usageError(["slots", "node-1", ""]).message).toBe("<n> is empty");
    expect(usageError(["slots", "node-1", "-1"]).message).toMatch(/Unknown option '-1'/);
    expect(usageError(["slots", "node-1", "--", "-1"]).message).toBe("<n> must be a whole number, 0 or more (got '-1')");
    expect(command(["slots", "node-1", "0"]).operands).toEqual(["node-1", "0"]);
  });

  it("rejects an empty stream path and --no-wait outside drain", () => {
    expect(usageError(["stream", "/"]).message).toMatch(/<path> is empty/);
    expect(usageError(["nodes", "--no-wait"]).message).toMatch(/--no-wait applies only/);
  });

  it("rejects a --url that is not an http(s) URL", () => {
    expect(usageError(["nodes", "--url", "localhost:8787"]).message).toMatch(/--url/);
    expect(usageError(["nodes", "--url", "not a url"]).message).toMatch(/not a URL/);
    expect(usageError(["nodes"], { MINK_URL: "ftp://x" }).message).toMatch(/http/);
  });

  it("needs a value for --url and --token", () => {
    expect(usageError(["nodes", "--token"]).message).toMatch(/--token/);
  });
});

describe("mink token", () => {
  const create = ["token", "create", "--prefix", "demo/", "--ops", "read"];

  it("parses mink token create, revoke and list", () => {
    expect(command(["token", "create", "--prefix", "demo/", "--ops", "read,append", "--ttl", "2h"])).toMatchObject({
      command: "token create",
      operands: [],
      mint: { prefixes: ["demo/"], ops: ["read", "append"], ttlSeconds: 7200 },
    });
    expect(command(["token", "revoke", "tok_1-A"])).toMatchObject({ command: "token revoke", operands: ["tok_1-A"], mint: undefined });
    expect(command(["token", "list", "--json"])).toMatchObject({ command: "token list", operands: [], options: { json: true }, mint: undefined });
  });

  it("takes --prefix more than once, in order, and --prefix \"\" (or --prefix=) for every stream", () => {
    expect(command(["--prefix", "b/", "token", "create", "--prefix=a b/", "--ops", "read"]).mint?.prefixes).toEqual(["b/", "a b/"]);
    expect(command(["token", "create", "--prefix", "", "--ops", "read"]).mint?.prefixes).toEqual([""]);
    expect(command(["token", "create", "--prefix=", "--ops", "read"]).mint?.prefixes).toEqual([""]);
  });

  it("takes --ops as comma-separated operations, every one of them, in the order given", () => {
    expect(command(["token", "create", "--prefix", "x/", "--ops", "subscribe,read"]).mint?.ops).toEqual(["subscribe", "read"]);
    expect(command(["token", "create", "--prefix", "x/", "--ops", ACCESS_OPS.join(",")]).mint?.ops).toEqual([...ACCESS_OPS]);
  });

  it("defaults --ttl to an hour, and reads seconds, minutes, hours and days up to 366 days", () => {
    expect(command(create).mint?.ttlSeconds).toBe(3600);
    for (const [ttl, seconds] of [["90s", 90], ["1s", 1], ["30m", 1800], ["1h", 3600], ["7d", 604_800], ["366d", 31_622_400], ["8784h", 31_622_400]] as const) {
      expect(command([...create, "--ttl", ttl]).mint?.ttlSeconds, ttl).toBe(seconds);
    }
  });

  it("has the server's operations, prefix bound and longest lifetime (the CLI copies them, importing nothing of the Worker)", () => {
    expect(ACCESS_OPS).toEqual(SERVER_ACCESS_OPS);
    expect(MAX_TOKEN_PREFIXES).toBe(SERVER_MAX_TOKEN_PREFIXES);
    expect(MAX_TOKEN_TTL_SECONDS).toBe(SERVER_MAX_TOKEN_TTL_SECONDS);
  });

  it("rejects a --ttl that is not a whole number and a unit from 1s to 366d", () => {
    for (const bad of ["1", "h", "0s", "0d", "367d", "31622401s", "1.5h", "-1h", "1H", "1w", "1h30m", " 1h", "", "99999999999999999999d"]) {
      const error = usageError([...create, `--ttl=${bad}`]);
      expect(error.message, bad).toBe(`--ttl must be a whole number and a unit, s, m, h or d (90s, 30m, 1h, 7d), from 1s to 366d (got '${bad}')`);
      expect(error.command).toBe("token create");
    }
    expect(usageError([...create, "--ttl", "1h", "--ttl", "2h"]).message).toBe("--ttl is given once");
    expect(usageError([...create, "--ttl"]).message).toMatch(/--ttl/);
  });

  it("rejects --ops with an unknown, an empty or a repeated operation, and --ops given twice", () => {
    const ops = (value: string): string => usageError(["token", "create", "--prefix", "x/", "--ops", value]).message;
    expect(ops("read,write")).toBe("--ops: unknown operation 'write' (got 'read,write'; operations: read, append, create, delete, subscribe, comma-separated)");
    expect(ops("read, append")).toBe("--ops: unknown operation ' append' (got 'read, append'; operations: read, append, create, delete, subscribe, comma-separated)");
    expect(ops("READ")).toMatch(/^--ops: unknown operation 'READ'/);
    expect(ops("")).toBe("--ops: an empty operation (got ''; operations: read, append, create, delete, subscribe, comma-separated)");
    expect(ops("read,,append")).toMatch(/^--ops: an empty operation \(got 'read,,append'/);
    expect(ops("read,")).toMatch(/^--ops: an empty operation/);
    expect(ops("read,append,read")).toBe("--ops: 'read' is given twice (got 'read,append,read')");
    expect(usageError([...create, "--ops", "append"]).message).toBe("--ops is given once, the operations comma-separated (e.g. --ops read,append)");
  });

  it("requires --prefix and --ops, and rejects a prefix with a leading '/' and more than 32 prefixes", () => {
    const noPrefix = usageError(["token", "create", "--ops", "read"]);
    expect(noPrefix.message).toBe('--prefix is required: a stream-name prefix the token covers (--prefix "" for every stream)');
    expect(noPrefix.command).toBe("token create");
    expect(usageError(["token", "create", "--prefix", "x/"]).message).toBe(
      "--ops is required: the operations the token grants, comma-separated, from read, append, create, delete, subscribe",
    );
    expect(usageError(["token", "create"]).message).toMatch(/^--prefix is required/);
    expect(usageError(["token", "create", "--prefix", "/demo/", "--ops", "read"]).message).toBe("--prefix is the start of a stream name, without a leading '/' (got '/demo/')");
    const many = Array.from({ length: 33 }, (_, i) => `--prefix=p${i}/`);
    expect(usageError(["token", "create", ...many, "--ops", "read"]).message).toBe("at most 32 --prefix (got 33)");
    expect(command(["token", "create", ...many.slice(1), "--ops", "read"]).mint?.prefixes).toHaveLength(32);
  });

  it("rejects the create options on other commands, a missing or extra id, and a token subcommand that does not exist", () => {
    expect(usageError(["token", "list", "--prefix", "x/"]).message).toBe("--prefix applies only to 'mink token create'");
    expect(usageError(["token", "revoke", "id1", "--ops", "read"]).message).toBe("--ops applies only to 'mink token create'");
    expect(usageError(["nodes", "--ttl", "1h"]).message).toBe("--ttl applies only to 'mink token create'");
    expect(usageError(["token", "revoke"]).message).toBe("missing <id or token>; usage: mink token revoke <id or token> [options]");
    expect(usageError(["token", "revoke", "a", "b"]).message).toMatch(/^unexpected 'b'/);
    expect(usageError(["token", "revoke", " "]).message).toBe("<id or token> is empty");
    expect(usageError(["token", "create", "x"]).message).toMatch(/^unexpected 'x'/);
    expect(usageError(["token", "list", "--no-wait"]).message).toMatch(/--no-wait applies only/);
    expect(usageError(["token"]).message).toMatch(/^missing subcommand; usage: mink token create --prefix <prefix>\.\.\. --ops <ops> \[--ttl <ttl>\] \[--quiet\] \[options\] \| mink token revoke <id or token> /);
    expect(usageError(["token", "mint"]).message).toMatch(/unknown command 'token mint'/);
  });

  it("gives the token group's help, and create's options and default in its own", () => {
    for (const argv of [["token", "--help"], ["help", "token"]]) {
      const parsed = parseCommandLine(argv, {});
      expect(parsed.kind === "help" && parsed.text).toMatch(/^Usage: mink token <subcommand>[^]*mink token create[^]*mink token revoke <id or token>[^]*mink token list/);
    }
    const parsed = parseCommandLine(["token", "create", "-h"], {});
    const text = parsed.kind === "help" ? parsed.text : "";
    expect(text).toMatch(/^Usage: mink token create --prefix <prefix>\.\.\. --ops <ops> \[--ttl <ttl>\] \[--quiet\] \[options\]\n/);
    expect(text).toContain('--prefix "" every stream');
    expect(text).toContain("read, append, create, delete, subscribe");
    expect(text).toContain("at most 366d (default 1h)");
  });

  it("token create's help says a table needs the prefix __ds/table/<name>/ and creating a stream needs create", () => {
    const parsed = parseCommandLine(["token", "create", "--help"], {});
    const text = parsed.kind === "help" ? parsed.text : "";
    expect(text).toContain("a table's requests need --prefix __ds/table/<name>/, or");
    expect(text).toContain("--prefix __ds/table/ for every table");
    expect(text).toContain("creating a stream or a table needs create");
    expect(text).toContain("--ops create,append,read");
  });
});

describe("mink tables and table", () => {
  it("parses mink tables, mink table <name> and mink table snapshot <name>", () => {
    expect(command(["tables", "--json"])).toMatchObject({ command: "tables", operands: [], options: { json: true } });
    expect(command(["table", "users"])).toMatchObject({ command: "table", operands: ["users"] });
    expect(command(["table", "snapshot", "users"])).toMatchObject({ command: "table snapshot", operands: ["users"] });
    expect(command(["table", "snapshot", "snapshot"])).toMatchObject({ command: "table snapshot", operands: ["snapshot"] });
    expect(command(["--json", "table", "users"]).options.json).toBe(true);
  });

  it("takes 'snapshot' after 'table' as the subcommand, so a missing name is a usage error rather than a table of that name", () => {
    const error = usageError(["table", "snapshot"]);
    expect(error.message).toBe("missing <name>; usage: mink table snapshot <name> [options]");
    expect(error.command).toBe("table snapshot");
    expect(usageError(["table"]).message).toBe("missing <name>; usage: mink table <name> [options]");
    expect(usageError(["table", "users", "snapshot"]).message).toMatch(/^unexpected 'snapshot'/);
  });

  it("accepts exactly the table names the server accepts (the CLI copies the rule, importing nothing of the Worker)", () => {
    expect(MAX_TABLE_NAME_LENGTH).toBe(SERVER_MAX_TABLE_NAME_LENGTH);
    const names = ["users", "a", "0x", "A_b-c", "x".repeat(128), "x".repeat(129), "_a", "-a", "a/b", "a b", "a.b", "ü", "a%2Fb"];
    for (const name of names) {
      const accepted = (() => {
        try {
          command(["table", name]);
          return true;
        } catch (error) {
          if (error instanceof UsageError) return false;
          throw error;
        }
      })();
      expect(accepted, name).toBe(parseTableName(name).ok);
    }
    expect(usageError(["table", "snapshot", "a b"]).message).toBe("<name> must be 1 to 128 of [A-Za-z0-9_-], starting with a letter or digit (got 'a b')");
  });

  it("gives each table command its help, and the table help names the snapshot subcommand", () => {
    const table = parseCommandLine(["table", "--help"], {});
    expect(table.kind === "help" && table.text).toMatch(/^Usage: mink table <name> \[options\]\n[^]*mink table snapshot <name>/);
    const snapshot = parseCommandLine(["help", "table", "snapshot"], {});
    expect(snapshot.kind === "help" && snapshot.text).toMatch(/^Usage: mink table snapshot <name> \[options\]\n[^]*not_loaded/);
    expect(table.kind === "help" && table.text).toMatch(/mink table tier <name>/);
    const tier = parseCommandLine(["help", "table", "tier"], {});
    expect(tier.kind === "help" && tier.text).toMatch(/^Usage: mink table tier <name> \[options\]\n[^]*Iceberg/);
  });

  it("parses mink table tier <name>: 'tier' after 'table' is the subcommand, as 'snapshot' is", () => {
    expect(command(["table", "tier", "users"])).toMatchObject({ command: "table tier", operands: ["users"] });
    expect(command(["table", "tier", "tier"])).toMatchObject({ command: "table tier", operands: ["tier"] });
    expect(usageError(["table", "tier"]).message).toBe("missing <name>; usage: mink table tier <name> [options]");
    expect(usageError(["table", "tier", "a b"]).message).toMatch(/^<name> must be 1 to 128/);
  });
});
