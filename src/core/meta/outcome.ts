// What a rule returns: the next state and the typed result. Rejections and no-ops hand back the very
// state they were given, so "rejected changes nothing" is checkable by identity.
import { domainError, type DomainError, type DomainErrorCode } from "../errors.ts";
import type { Result } from "./commands.ts";
import type { MetaState } from "./state.ts";

export interface Outcome<V> {
  readonly state: MetaState;
  readonly result: Result<V>;
}

export function accepted<V>(next: MetaState, value: V): Outcome<V> {
  return { state: next, result: { ok: true, changed: true, value } };
}

export function unchanged<V>(state: MetaState, value: V): Outcome<V> {
  return { state, result: { ok: true, changed: false, value } };
}

export function rejected<V>(
  state: MetaState,
  code: DomainErrorCode,
  message: string,
  details?: DomainError["details"],
): Outcome<V> {
  return { state, result: { ok: false, error: domainError(code, message, details) } };
}

export function rejectedWith<V>(state: MetaState, error: DomainError): Outcome<V> {
  return { state, result: { ok: false, error } };
}
