// `mink token create | revoke | list`: access tokens for the stream API through POST, DELETE and GET
// /admin/tokens. The list follows the server's pages (`next`) to the end, bounded.
import type { TokenRow, TokensPage } from "./admin-answers.ts";
import type { TokenMint } from "./option-values.ts";
import type { CommandContext } from "./commands.ts";
import { CommandFailed } from "./errors.ts";
import { cell, formatKeyValues, formatTable } from "./format.ts";

/** Tokens asked for per page of GET /admin/tokens. */
const PAGE_SIZE = 100;
/** `mink token list` reads at most this many pages (10,000 tokens), then fails saying there are more. */
const MAX_PAGES = 100;

/**
 * A prefix as one cell without spaces: "" (every stream) as `""`; spaces, commas, quotes and % percent-encoded,
 * so a list of them joined by commas reads back unambiguously.
 */
function prefixCell(prefix: string): string {
  return prefix === "" ? '""' : prefix.replace(/[\s,"%]/gu, (char) => encodeURIComponent(char));
}

function prefixesCell(prefixes: readonly string[]): string {
  return prefixes.map(prefixCell).join(",");
}

export async function tokenCreateCommand(context: CommandContext, mint: TokenMint, quiet: boolean): Promise<void> {
  const answer = await context.client.createToken(mint);
  if (context.json) return void context.out(`${JSON.stringify(answer, null, 2)}\n`);
  if (quiet) return void context.out(`${answer.token}\n`);
  context.out(
    formatKeyValues([
      ["id", answer.id],
      ["token", answer.token],
      ["expires", answer.expiresAt],
      ["prefixes", prefixesCell(answer.prefixes)],
      ["ops", answer.ops.join(",")],
    ]),
  );
}

/**
 * The id `mink token revoke` was given: an id as printed, or a token (three base64url parts), whose `jti`
 * claim is its id. Read without checking the signature: the server decides whether a live token has it.
 */
function tokenIdOf(idOrToken: string): string {
  const parts = idOrToken.split(".");
  if (parts.length !== 3 || !parts.every((part) => /^[A-Za-z0-9_-]+$/.test(part))) return idOrToken;
  try {
    const claims: unknown = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8"));
    const jti = typeof claims === "object" && claims !== null ? (claims as Record<string, unknown>)["jti"] : undefined;
    return typeof jti === "string" && jti !== "" ? jti : idOrToken;
  } catch {
    return idOrToken;
  }
}

export async function tokenRevokeCommand(context: CommandContext, idOrToken: string): Promise<void> {
  const id = tokenIdOf(idOrToken);
  await context.client.revokeToken(id);
  if (context.json) return void context.out(`${JSON.stringify({ id, revoked: true }, null, 2)}\n`);
  context.out(`revoked ${id}\n`);
}

export async function tokenListCommand(context: CommandContext): Promise<void> {
  const tokens: TokenRow[] = [];
  let next: string | null = null;
  for (let pages = 0; pages === 0 || (next !== null && pages < MAX_PAGES); pages += 1) {
    const page: TokensPage = await context.client.tokens({ after: next, limit: PAGE_SIZE });
    tokens.push(...page.tokens);
    next = page.next;
  }
  if (context.json) context.out(`${JSON.stringify({ tokens, next }, null, 2)}\n`);
  else if (tokens.length === 0) context.out("no tokens\n");
  else {
    context.out(
      formatTable(
        [{ header: "ID" }, { header: "PREFIXES" }, { header: "OPS" }, { header: "EXPIRES" }, { header: "REVOKED" }],
        tokens.map((token) => [token.id, prefixesCell(token.prefixes), token.ops.join(","), token.expiresAt, cell(token.revoked)]),
      ),
    );
  }
  if (next !== null) {
    throw new CommandFailed(`more tokens than ${MAX_PAGES} pages of ${PAGE_SIZE}: listed the first ${tokens.length}, the rest not`);
  }
}
