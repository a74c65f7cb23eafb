// Create (PUT) requests and the configuration a stream is created with. A PUT on an existing stream is
// idempotent: 200 when the request asks for the configuration the stream has (content type, lifetime,
// closure status, fork source and point), 409 otherwise. The configuration is plain JSON so the metadata
// log can carry it unchanged.
import { domainError, type DomainError } from "../errors.ts";
import { DEFAULT_CONTENT_TYPE, isJsonContentType, parseContentTypeHeader, sameMediaType } from "./content-type.ts";
import { parseStreamClosedHeader } from "./closure.ts";
import { parseForkHeaders, type ForkRequest, type ForkSourceView, type Lifecycle } from "./fork.ts";
import { splitJsonBody } from "./json-mode.ts";
import { fail, ok, type Parsed } from "./parsed.ts";
import { parseExpiryHeaders, resolveForkExpiry, type Expiry } from "./ttl.ts";

interface ForkConfig {
  readonly sourceName: string;
  /** The source's stream id at fork time: the fork reads this incarnation, even if the name is reused. */
  readonly sourceStreamId: string;
  /** `Stream-Fork-Offset`, or the source's tail when the request had none. */
  readonly anchorPositionBytes: number;
  /** `Stream-Fork-Sub-Offset` as requested (0 when absent). */
  readonly subOffset: number;
  /** Where the fork diverges: bytes before it are the source's, bytes from it on are the fork's own. */
  readonly forkPositionBytes: number;
}

export interface StreamConfig {
  readonly contentType: string;
  readonly ttlSeconds: number | null;
  readonly expiresAtMs: number | null;
  readonly fork: ForkConfig | null;
}

/** The PUT headers the protocol reads (null: absent). */
export interface CreateHeaders {
  readonly contentType: string | null;
  readonly ttl: string | null;
  readonly expiresAt: string | null;
  readonly closed: string | null;
  readonly forkedFrom: string | null;
  readonly forkOffset: string | null;
  readonly forkSubOffset: string | null;
}

export interface CreateRequest {
  /** Null when the header is absent: the default type, or for a fork the source's type. */
  readonly contentType: string | null;
  readonly expiry: Expiry;
  readonly closed: boolean;
  readonly fork: ForkRequest | null;
}

/** Everything about a PUT that can be checked without the stream (all failures are 400). */
export function parseCreateRequest(headers: CreateHeaders): Parsed<CreateRequest> {
  const contentType = parseContentTypeHeader(headers.contentType);
  if (!contentType.ok) return contentType;
  const expiry = parseExpiryHeaders(headers.ttl, headers.expiresAt);
  if (!expiry.ok) return expiry;
  const fork = parseForkHeaders(headers.forkedFrom, headers.forkOffset, headers.forkSubOffset);
  if (!fork.ok) return fork;
  return ok({
    contentType: contentType.value,
    expiry: expiry.value,
    closed: parseStreamClosedHeader(headers.closed),
    fork: fork.value,
  });
}

/** An existing stream at the PUT's name, as the create rules see it (after expiry: see checkAccess). */
export interface ExistingStream {
  readonly lifecycle: Lifecycle;
  readonly config: StreamConfig;
  readonly eof: boolean;
}

/**
 * Why a PUT does not match the existing stream, or null when it does. A fork request that omits
 * Content-Type, lifetime or offset matches whatever the fork resolved them to at creation.
 */
export function configDifference(existing: StreamConfig, eof: boolean, request: CreateRequest): string | null {
  const isForkRequest = request.fork !== null;
  const requestedType = request.contentType ?? (isForkRequest ? null : DEFAULT_CONTENT_TYPE);
  if (requestedType !== null && !sameMediaType(requestedType, existing.contentType)) return "content_type";
  const asksLifetime = request.expiry.ttlSeconds !== null || request.expiry.expiresAtMs !== null;
  if (asksLifetime || !isForkRequest) {
    if (request.expiry.ttlSeconds !== existing.ttlSeconds) return "ttl";
    if (request.expiry.expiresAtMs !== existing.expiresAtMs) return "expires_at";
  }
  if (request.closed !== eof) return "closed";
  if ((request.fork === null) !== (existing.fork === null)) return "fork";
  if (request.fork !== null && existing.fork !== null) {
    if (request.fork.sourceName !== existing.fork.sourceName) return "fork_source";
    const anchor = request.fork.anchorPositionBytes;
    if (anchor !== null && anchor !== existing.fork.anchorPositionBytes) return "fork_offset";
    if (request.fork.subOffset !== existing.fork.subOffset) return "fork_sub_offset";
  }
  return null;
}

export type CreateDecision =
  /** No stream at the name (or an expired one without forks): create it (201). */
  | { readonly kind: "create" }
  /** Same configuration: answer 200 with the stream's headers; the request body is ignored. */
  | { readonly kind: "exists" }
  | { readonly kind: "reject"; readonly error: DomainError };

/** `existing` is null when the name is free (never used, deleted, or expired with no forks). */
export function decideCreate(existing: ExistingStream | null, request: CreateRequest): CreateDecision {
  if (existing === null) return { kind: "create" };
  if (existing.lifecycle === "soft-deleted") {
    return reject("conflict", "the stream was deleted but forks still read it: the name is not free", {
      reason: "soft_deleted",
    });
  }
  const difference = configDifference(existing.config, existing.eof, request);
  if (difference !== null) {
    return reject("conflict", "the stream exists with a different configuration", { reason: difference });
  }
  return { kind: "exists" };
}

function reject(code: DomainError["code"], message: string, details: DomainError["details"]): CreateDecision {
  return { kind: "reject", error: domainError(code, message, details) };
}

/** The resolved fork of a create: its source and where it diverges (see fork.ts). */
export interface ResolvedFork {
  readonly source: ForkSourceView;
  readonly anchorPositionBytes: number;
  readonly forkPositionBytes: number;
}

/** The configuration of a new stream. A fork inherits content type and lifetime it does not ask for. */
export function newStreamConfig(request: CreateRequest, fork: ResolvedFork | null): StreamConfig {
  if (request.fork === null || fork === null) {
    if (request.fork !== null || fork !== null) {
      throw new Error("newStreamConfig: fork request and resolution disagree");
    }
    return {
      contentType: request.contentType ?? DEFAULT_CONTENT_TYPE,
      ttlSeconds: request.expiry.ttlSeconds,
      expiresAtMs: request.expiry.expiresAtMs,
      fork: null,
    };
  }
  const expiry = resolveForkExpiry(request.expiry, fork.source.expiry);
  return {
    contentType: request.contentType ?? fork.source.contentType,
    ttlSeconds: expiry.ttlSeconds,
    expiresAtMs: expiry.expiresAtMs,
    fork: {
      sourceName: request.fork.sourceName,
      sourceStreamId: fork.source.streamId,
      anchorPositionBytes: fork.anchorPositionBytes,
      subOffset: request.fork.subOffset,
      forkPositionBytes: fork.forkPositionBytes,
    },
  };
}

/** A create's initial body: raw bytes, or for a JSON stream the messages (an empty array is allowed). */
export type InitialBody = { readonly kind: "bytes" } | { readonly kind: "json"; readonly messages: string[] };

/**
 * Checks a PUT body against the new stream's content type. `text` is the body decoded as UTF-8 (the
 * caller refuses undecodable bodies); it is read only for JSON streams with a non-empty body.
 */
export function checkInitialBody(
  contentType: string,
  bodyLengthBytes: number,
  text: string | null,
  maxMessages = Number.POSITIVE_INFINITY,
): Parsed<InitialBody> {
  if (!isJsonContentType(contentType)) return ok({ kind: "bytes" });
  if (bodyLengthBytes === 0) return ok({ kind: "json", messages: [] });
  if (text === null) return fail("invalid", "a JSON body must be UTF-8 text");
  const messages = splitJsonBody(text, "create", maxMessages);
  return messages.ok ? ok({ kind: "json", messages: messages.value }) : messages;
}
