// A table definition for tests: parsed by the core's own parser, thrown on a refusal (a test's definitions are
// meant to be valid).
import { parseTableDefinition, type TableDefinition } from "../../src/core/tables/definition.ts";

export function definitionOf(raw: unknown): TableDefinition {
  const parsed = parseTableDefinition(raw);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.value;
}
