// The result of parsing or checking one piece of client input: the value, or the domain error that says
// why it was refused (and what the client needs to recover). Protocol rules never throw on client input.
import { domainError, type DomainError, type DomainErrorCode } from "../errors.ts";
import type { Result } from "../result.ts";

/** Parsing or checking client input (src/core/result.ts). */
export type Parsed<T> = Result<T>;

export function ok<T>(value: T): Parsed<T> {
  return { ok: true, value };
}

export function fail<T = never>(
  code: DomainErrorCode,
  message: string,
  details?: DomainError["details"],
): Parsed<T> {
  return { ok: false, error: domainError(code, message, details) };
}

/** `^(0|[1-9][0-9]*)$` within 2^53-1: no sign, no leading zeros, no decimals, no exponent. */
export function parseCanonicalUint(raw: string): number | null {
  if (!/^(0|[1-9][0-9]*)$/.test(raw)) return null;
  const value = Number(raw);
  return Number.isSafeInteger(value) ? value : null;
}
