// The tiering record of a table (docs/tiering.md, table RT): the coordinator records each round it committed,
// so that listing tables shows each one's tiered snapshot without reading the object store. The commit
// itself is the tiered table's create-only version in the store; this record follows it and is fenced by
// the coordinator epoch like every coordinator command.
import type { RecordTiering, ValueOf } from "./commands.ts";
import { checkCoordinator } from "./failover-rules.ts";
import { accepted, rejected, rejectedWith, unchanged, type Outcome } from "./outcome.ts";
import type { MetaState } from "./state.ts";

/**
 * Table RT — RecordTiering {table, tiered, coordinator} at nowMs:
 * | row | condition                                                   | result                                        |
 * | RT1 | coordinator fails table C (not the lease holder at its epoch) | as table C (`fenced`)                       |
 * | RT2 | no such table                                               | not_found {table}                             |
 * | RT3 | a record of this version or a later one is there            | no-op (a retry, or a round recorded late)     |
 * | RT4 | otherwise                                                   | accepted: the table's `tiered` is the record |
 */
export function recordTiering(state: MetaState, command: RecordTiering, nowMs: number): Outcome<ValueOf["RecordTiering"]> {
  const coordinatorError = checkCoordinator(state, command.coordinator, nowMs);
  if (coordinatorError !== null) return rejectedWith(state, coordinatorError);
  const table = state.tables.get(command.table);
  if (table === undefined) return rejected(state, "not_found", "no such table", { table: command.table });
  if (table.tiered !== undefined && table.tiered.version >= command.tiered.version) return unchanged(state, { tiered: table.tiered });
  const tables = new Map(state.tables);
  tables.set(table.name, { ...table, tiered: command.tiered });
  return accepted({ ...state, tables }, { tiered: command.tiered });
}
