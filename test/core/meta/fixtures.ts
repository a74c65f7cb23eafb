// Helpers for the metadata rule tests: build a state from commands, and check an outcome is the accepted
// change, the no-op or the rejection a row of a table says (a rejection or a no-op must hand back the very
// same state object).
import { expect } from "vitest";
import type { DomainError, DomainErrorCode } from "../../../src/core/errors.ts";
import {
  apply,
  emptyState,
  type Applied,
  type ApplyContext,
  type Command,
  type CommandOf,
  type CommandType,
  type MetaState,
  type ValueOf,
} from "../../../src/core/meta/index.ts";

export const NOW_MS = 1_700_000_000_000;
export const CTX: ApplyContext = { nowMs: NOW_MS };

export function register(nodeId: string, nodeEpoch = 1, slots?: number): CommandOf<"RegisterNode"> {
  return slots === undefined
    ? { type: "RegisterNode", nodeId, nodeEpoch, addr: `https://mink.test/n/${nodeId}` }
    : { type: "RegisterNode", nodeId, nodeEpoch, addr: `https://mink.test/n/${nodeId}`, slots };
}

export function create(name: string, config: Record<string, string | number> = {}): CommandOf<"CreateStream"> {
  return { type: "CreateStream", name, config };
}

/** Applies commands in order; every one must be accepted. */
export function build(commands: readonly Command[], state: MetaState = emptyState(), ctx: ApplyContext = CTX): MetaState {
  let current = state;
  for (const command of commands) {
    const { state: next, result } = apply(current, command, ctx);
    if (!result.ok) throw new Error(`setup command ${command.type} rejected: ${result.error.code} ${result.error.message}`);
    current = next;
  }
  return current;
}

/** The accepted change: a new state one version later. */
export function expectChange<T extends CommandType>(before: MetaState, applied: Applied<T>): ValueOf[T] {
  const { result, state } = applied;
  if (!result.ok) throw new Error(`expected acceptance, got ${result.error.code}: ${result.error.message}`);
  expect(result.changed).toBe(true);
  expect(state).not.toBe(before);
  expect(state.version).toBe(before.version + 1);
  return result.value;
}

/** The accepted no-op: the same state object. */
export function expectNoop<T extends CommandType>(before: MetaState, applied: Applied<T>): ValueOf[T] {
  const { result, state } = applied;
  if (!result.ok) throw new Error(`expected a no-op, got ${result.error.code}: ${result.error.message}`);
  expect(result.changed).toBe(false);
  expect(state).toBe(before);
  return result.value;
}

/** The rejection: the code, the details the caller needs, and the same state object. */
export function expectRejected(
  before: MetaState,
  applied: Applied,
  code: DomainErrorCode,
  details: Record<string, unknown> = {},
): DomainError {
  const { result, state } = applied;
  if (result.ok) throw new Error(`expected ${code}, got an acceptance`);
  expect(result.error.code).toBe(code);
  expect(result.error.details ?? {}).toMatchObject(details);
  expect(state).toBe(before);
  return result.error;
}
