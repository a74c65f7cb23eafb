// Tokens the deployment gives itself. The MetaLog prepares each wake event of a pull-wake subscription for
// whoever performs it (a node, the Worker, its own alarm), which appends it through the public stream API;
// in token mode that append needs a token like any other. It gets one scoped to that wake stream and to
// `append`, valid for a few minutes (effects are performed at once or dropped), signed with TOKEN_SECRET
// and not in the register: it cannot be revoked, only outlived.
import { mintClaims } from "../core/auth/claims.ts";
import { MIN_TOKEN_SECRET_LENGTH } from "../core/auth/deployment.ts";
import { signToken } from "./token-codec.ts";

const WAKE_TOKEN_TTL_SECONDS = 300;

/** `Bearer <token>` for appending one wake event to `stream`, or null when no secret is configured (open mode). */
export async function wakeAppendAuthorization(secret: string | undefined, stream: string, nowMs: number): Promise<string | null> {
  if (secret === undefined || secret.length < MIN_TOKEN_SECRET_LENGTH) return null;
  const id = `internal-${crypto.randomUUID()}`;
  const claims = mintClaims({ prefixes: [stream], ops: ["append"], ttlSeconds: WAKE_TOKEN_TTL_SECONDS }, id, nowMs);
  return `Bearer ${await signToken(claims, secret)}`;
}
