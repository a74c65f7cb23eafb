// What a node's paths answer, before the HTTP layer adds the headers every response carries: a reply, a
// domain error (mapped to HTTP in one table, src/http/error-table.ts) or a redirect to another node.
import { domainError, type DomainError } from "../../core/errors.ts";
import type { NodeRecord } from "../../core/meta/state.ts";

/** A reply before the HTTP layer adds the headers every response carries. */
export type Reply =
  | {
      readonly kind: "reply";
      readonly status: number;
      readonly headers: Readonly<Record<string, string>>;
      readonly body: Uint8Array | string | ReadableStream<Uint8Array> | null;
    }
  | { readonly kind: "error"; readonly error: DomainError }
  /** Not served here: 307 to the node's advertised address (same path and query). */
  | { readonly kind: "redirect"; readonly node: NodeRecord };

export function reply(
  status: number,
  headers: Record<string, string>,
  body: Uint8Array | string | ReadableStream<Uint8Array> | null = null,
): Reply {
  return { kind: "reply", status, headers, body };
}

export function errorReply(error: DomainError): Reply {
  return { kind: "error", error };
}

export function redirectReply(node: NodeRecord): Reply {
  return { kind: "redirect", node };
}

export function unavailable(message: string, details?: DomainError["details"]): DomainError {
  return domainError("unavailable", message, details);
}

/**
 * A WAL or metadata failure as the domain error the client sees (503, retry). The message is fixed: the
 * error's own text (an object key, the store's error code and message, a WAL sequence) is for the log,
 * where the caller that stops on it writes it (stopServing), never for the answer.
 */
export function asDomainError(error: unknown): DomainError {
  if (typeof error === "object" && error !== null && "code" in error && error.code === "fenced") {
    return domainError("fenced", "this node's WAL chain was sealed; retry");
  }
  return unavailable("the node could not complete the request; retry");
}

