// Access tokens (docs/access.md), behind the admin token: `POST /admin/tokens` mints one
// (`{"prefixes": ["demo/"], "ops": ["read", "append"], "ttlSeconds": 3600}` → 201 `{id, token, expiresAt,
// prefixes, ops}`), `DELETE /admin/tokens/<id>` revokes it (204; honoured everywhere within
// REVOCATION_CACHE_MS), `GET /admin/tokens?after=&limit=` lists the live ones (never the tokens themselves).
// The MetaLog records a token before it is signed, so every token that exists can be revoked.
import { Hono } from "hono";
import { z } from "zod";
import { mintClaims, parseMintRequest } from "../core/auth/claims.ts";
import { MIN_TOKEN_SECRET_LENGTH } from "../core/auth/deployment.ts";
import { domainError } from "../core/errors.ts";
import { signToken } from "../auth/token-codec.ts";
import { checkParam, json, metaOf, readBody, type AdminEnv } from "./common.ts";
import { errorResponse } from "../http/responses.ts";

const tokenId = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/);
const DEFAULT_LIST_LIMIT = 100;

/**
 * A token id: 128 random bits, base64url, never starting with `-`: `mink token revoke <id>` reads an argument
 * that starts with `-` as an option (one id in 64 did, and could be revoked only after `--`).
 */
export function newTokenId(bytes: Uint8Array = crypto.getRandomValues(new Uint8Array(16))): string {
  const id = btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  return id.startsWith("-") ? `_${id.slice(1)}` : id;
}

export const adminTokenRoutes = new Hono<AdminEnv>();

adminTokenRoutes.post("/tokens", async (c) => {
  const secret = c.env.TOKEN_SECRET ?? "";
  if (secret.length < MIN_TOKEN_SECRET_LENGTH) {
    return errorResponse(domainError("unavailable", `tokens cannot be minted: TOKEN_SECRET is not set (at least ${MIN_TOKEN_SECRET_LENGTH} characters)`));
  }
  const body = await readBody(c, z.unknown());
  if (!body.ok) return errorResponse(body.error);
  const request = parseMintRequest(body.value);
  if (!request.ok) return errorResponse(request.error);
  const id = newTokenId();
  const nowMs = Date.now();
  const claims = mintClaims(request.value, id, nowMs);
  const issuedAtMs = Number(claims["iat"]) * 1000;
  const expiresAtMs = Number(claims["exp"]) * 1000;
  const recorded = await metaOf(c.env).mintToken({ id, prefixes: request.value.prefixes, ops: request.value.ops, issuedAtMs, expiresAtMs });
  if (!recorded.ok) return errorResponse(recorded.error);
  const token = await signToken(claims, secret);
  return json({ id, token, expiresAt: new Date(expiresAtMs).toISOString(), prefixes: request.value.prefixes, ops: request.value.ops }, 201);
});

adminTokenRoutes.delete("/tokens/:id", async (c) => {
  const id = checkParam(c.req.param("id"), "id", tokenId);
  if (!id.ok) return errorResponse(id.error);
  const revoked = await metaOf(c.env).revokeToken(id.value);
  if (!revoked.ok) return errorResponse(revoked.error);
  return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
});

adminTokenRoutes.get("/tokens", async (c) => {
  const after = c.req.query("after") ?? null;
  const limit = Number(c.req.query("limit") ?? DEFAULT_LIST_LIMIT);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) return errorResponse(domainError("invalid", "limit must be an integer from 1 to 1000"));
  const tokens = await metaOf(c.env).listTokens(after, limit);
  return json({
    tokens: tokens.map((t) => ({
      id: t.id,
      prefixes: t.prefixes,
      ops: t.ops,
      issuedAt: new Date(t.issuedAtMs).toISOString(),
      expiresAt: new Date(t.expiresAtMs).toISOString(),
      revoked: t.revoked,
    })),
    next: tokens.length === limit ? (tokens.at(-1)?.id ?? null) : null,
  });
});
