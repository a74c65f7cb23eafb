// Settings that make a deployment unsafe to serve (table DP). The Worker refuses every request but
// `/health` while one holds, with a message that says what to set, instead of serving an open or
// misdirecting deployment.
//
// | #   | settings                                           | why it is refused                          |
// |-----|----------------------------------------------------|--------------------------------------------|
// | DP1 | AUTH_MODE neither `token` nor `open`               | a typo must not mean "open"                |
// | DP2 | AUTH_MODE=token without TOKEN_SECRET (>= 32 chars) | no token could be verified (or a guessable key) |
// | DP3 | more than one node and no PUBLIC_ORIGIN            | the 307s would send clients to 127.0.0.1   |
// | DP4 | a var still holds a `<...>` placeholder of a template (`https://mink.<your-subdomain>.workers.dev`) | it would send clients, or data, to an address that is not one; every check before the deploy passes it |

/** The shortest TOKEN_SECRET accepted: 256 bits of text for HS256. */
export const MIN_TOKEN_SECRET_LENGTH = 32;

type AuthMode = "token" | "open";

export interface DeploymentSettings {
  /** AUTH_MODE as configured (undefined: not set, which means `token`). */
  readonly authMode: string | undefined;
  readonly tokenSecret: string | undefined;
  readonly nodeCount: number;
  readonly publicOrigin: string | undefined;
  /** Every binding by name (the Worker's env): the strings among them are checked for placeholders (DP4). */
  readonly vars: Readonly<Record<string, unknown>>;
}

/**
 * A template's placeholder, as examples/deploy/wrangler.toml and docs/deploy.md write them: `<account-id>`,
 * `<bucket>`, `<your-subdomain>`. Words only, so a value that merely holds `<` (a secret, an HTML type) is not one.
 */
const PLACEHOLDER = /<[A-Za-z][A-Za-z0-9_-]*>/;

/** DP4: each var whose value still holds a placeholder, named with the placeholder (never the rest of the value). */
function placeholderProblems(vars: Readonly<Record<string, unknown>>): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(vars)) {
    const placeholder = typeof value === "string" ? PLACEHOLDER.exec(value)?.[0] : undefined;
    if (placeholder !== undefined) {
      problems.push(`${name} still holds the placeholder ${placeholder}: replace every <...> in wrangler.toml's [vars] (or the secret) with the real value and deploy again`);
    }
  }
  return problems;
}

export type DeploymentCheck = { readonly ok: true; readonly authMode: AuthMode } | { readonly ok: false; readonly problems: readonly string[] };

export function checkDeployment(settings: DeploymentSettings): DeploymentCheck {
  const problems: string[] = [];
  const mode = (settings.authMode ?? "token").trim();
  if (mode !== "token" && mode !== "open") problems.push(`AUTH_MODE must be "token" or "open" (it is "${mode}")`); // DP1
  if (mode === "token" && (settings.tokenSecret ?? "").length < MIN_TOKEN_SECRET_LENGTH) {
    problems.push(`AUTH_MODE=token needs TOKEN_SECRET, at least ${MIN_TOKEN_SECRET_LENGTH} characters (wrangler secret put TOKEN_SECRET)`); // DP2
  }
  if (settings.nodeCount > 1 && (settings.publicOrigin ?? "").trim() === "") {
    problems.push("several nodes need PUBLIC_ORIGIN, the https origin clients reach this Worker at: the 307s to nodes are built on it"); // DP3
  }
  problems.push(...placeholderProblems(settings.vars)); // DP4
  return problems.length > 0 ? { ok: false, problems } : { ok: true, authMode: mode as AuthMode };
}
